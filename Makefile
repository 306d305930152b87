# Two commands: `make run` and `make test`. Both build the virtual environment first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test bench clean venv

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

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/bench_spine.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
