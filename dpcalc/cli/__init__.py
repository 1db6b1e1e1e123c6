"""The command-line layer: one module per subcommand, joined in app.py, rendered by output.py."""
