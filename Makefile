# The two commands a user needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test install bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

$(VENV)/.installed-bench: $(VENV)/.installed
	$(BIN)/pip install --quiet -e ".[dev,bench]"
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/python -m gpuforest.demo

test: install
	$(BIN)/python -m pytest -q tests

bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/bench_tree.py

clean:
	rm -rf $(VENV) build *.egg-info
