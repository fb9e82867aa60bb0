"""The ``pbsolve`` command line. The typer app is :data:`pbsolve.cli.main.app` (the console
script); :mod:`pbsolve.cli.common` holds what the command modules share (consoles, error
exits, progress bars, write guards, the LLM endpoint options). Command modules import
``common`` and never each other's private helpers, so the package has no import cycle."""
