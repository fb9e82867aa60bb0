# Entry points: `make demo` (the main job), `make test` (the test suite) and `make lint`
# (ruff and mypy); CI (.ci/run) runs lint, then test.
# Both create the virtual environment on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench schema mutation clean

# What `make lint` checks: the installed package's four folders.
LINT_PATHS := pbsolve models renderers checkers

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,milp,ray]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/pbsolve demo --out demo

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --durations=15 --durations-min=5

# Lint, format check and type check; configured in pyproject ([tool.ruff], [tool.mypy]).
# mypy runs through scripts/typecheck.py, which checks models/, renderers/ and checkers/
# under their installed names (pbsolve.models etc.).
lint: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(BIN)/python scripts/typecheck.py

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'  # reasoning-gym, timed side by side
	$(BIN)/python benchmarks/generate.py
	$(BIN)/python benchmarks/grade.py

# Mutation testing of the grading code (tens of minutes; outside CI, like bench).
# Prints the kill rate per file and every surviving mutant; MUTATION_ARGS e.g.
# "--only checkers/allocation/material.py" or "--keep" (re-run only what changed).
MUTATION_CHILDREN ?= 2
mutation: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,milp,ray,mutation]'
	$(BIN)/python scripts/mutation.py --max-children $(MUTATION_CHILDREN) $(MUTATION_ARGS)

schema: $(STAMP)
	$(BIN)/pbsolve schema --out docs/instance.schema.json

clean:
	rm -rf $(VENV) demo *.egg-info
