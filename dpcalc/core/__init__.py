"""Pure numerics: no printing, no Typer, no Rich. Modules are imported by the command that needs them."""
