"""Auditing judges against the checkers: near-miss answers with known truth
(:mod:`pbsolve.audit.perturb`), an LLM judge under the rubric protocol
(:mod:`pbsolve.audit.judge`) and the audit figures and report (:mod:`pbsolve.audit.report`)."""
