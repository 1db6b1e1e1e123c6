"""The textbook mechanisms' privacy, noise and accuracy, one mechanism a module (pure numerics)."""
