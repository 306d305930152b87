# Two commands: `make run` and `make test`. Both build the virtual environment first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test check bench clean venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# One simulated free-decay capture through the whole service, to a published result.
run: $(STAMP)
	$(BIN)/hilrig run --sim --captures 1 --unpaced

# Static checks first (lint, types; the import contracts run inside the suite), then the
# tests. PYTEST_ARGS passes options on, e.g. PYTEST_ARGS="--hypothesis-profile deep".
test: check
	$(BIN)/python -m pytest $(PYTEST_ARGS)

check: $(STAMP)
	$(BIN)/ruff check daq drivers identify firmware_protocol hilrig tests bench
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/bench_spine.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
