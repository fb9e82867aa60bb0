"""Uses of the core that talk to a language model: the OpenAI-compatible client
(:mod:`pbsolve.llm.client`), the responders that answer instances
(:mod:`pbsolve.llm.responders`) and the fidelity-guarded prompt rewriter
(:mod:`pbsolve.llm.rewriter`). Nothing in the grading path imports this package."""
