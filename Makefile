# Two entry points: `make demo` (the main job) and `make test` (the test suite).
# Both create the virtual environment on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench schema clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,milp]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/pbsolve demo --out demo

test: $(STAMP)
	$(BIN)/python -m pytest -n 2

bench: $(STAMP)
	$(BIN)/python benchmarks/generate.py
	$(BIN)/python benchmarks/grade.py

schema: $(STAMP)
	$(BIN)/pbsolve schema --out docs/instance.schema.json

clean:
	rm -rf $(VENV) demo *.egg-info
