"""`python -m pbsolve` runs the CLI."""

from pbsolve.cli.main import app

app()
