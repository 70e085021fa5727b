# Credence: every target creates .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-fast bench openapi lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/credence demo

test: $(STAMP)
	$(BIN)/python tests/ensure_postgres.py
	$(BIN)/ruff check server tests benchmarks examples
	$(BIN)/python tests/browser/ensure_chromium.py
	$(BIN)/pytest -q

test-fast: $(STAMP)
	$(BIN)/pytest -q -m "not browser and not slow"

bench: $(STAMP)
	$(BIN)/python tests/ensure_postgres.py
	$(BIN)/python -m benchmarks

openapi: $(STAMP)
	$(BIN)/credence openapi --output openapi.yaml

lint: $(STAMP)
	$(BIN)/ruff check server tests benchmarks examples
	$(BIN)/ruff format --check server tests benchmarks examples

clean:
	rm -rf $(VENV) build *.egg-info
