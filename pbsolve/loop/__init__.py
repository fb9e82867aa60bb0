"""The closed difficulty loop (:mod:`pbsolve.loop.difficulty`): certify, answer, grade,
and make the next instance harder. A use of the core and of :mod:`pbsolve.llm`."""
