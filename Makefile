# Credence: every target creates .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-fast bench openapi lint clean screenshots

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
	$(BIN)/ruff check server tests benchmarks examples
	$(BIN)/python tests/browser/ensure_chromium.py
	test -f tests/browser/axe/node_modules/axe-core/axe.min.js || npm ci --prefix tests/browser/axe
	$(BIN)/pytest -q

# Rewrite the README's (and the manifest's) screenshots; a normal test run only compares them.
screenshots: $(STAMP)
	CREDENCE_SCREENSHOTS=write $(BIN)/pytest -q tests/browser/test_screenshots.py

test-fast: $(STAMP)
	$(BIN)/pytest -q -m "not browser and not slow"

bench: $(STAMP)
	$(BIN)/python -m benchmarks

openapi: $(STAMP)
	$(BIN)/credence openapi --output openapi.yaml

lint: $(STAMP)
	$(BIN)/ruff check server tests benchmarks examples
	$(BIN)/ruff format --check server tests benchmarks examples

clean:
	rm -rf $(VENV) build *.egg-info
