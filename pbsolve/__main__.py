"""`python -m pbsolve` runs the CLI."""

from pbsolve.cli import app

app()
