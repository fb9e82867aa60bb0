"""pbsolve: planning problems whose answers are proven by a solver and graded by code."""

__version__ = "0.1.0"
