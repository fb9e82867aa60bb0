"""Serving instances for training: reward adapters (:mod:`pbsolve.serve.rewards`, public as
``pbsolve.rewards``), the instance store (:mod:`pbsolve.serve.store`), the HTTP reward server
(:mod:`pbsolve.serve.server`) and the training-set export (:mod:`pbsolve.serve.export`).
The grading modules here never load OR-Tools or a family's solver model."""
