# Credence: every target creates .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The demo needs only the server's own dependencies, not the test and lint toolchain.
RUNTIME_STAMP := $(VENV)/.runtime

.PHONY: install demo test test-fast bench openapi openapi-lint lint js-lint typecheck clean screenshots

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUNTIME_STAMP)

$(RUNTIME_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e .
	touch $(RUNTIME_STAMP)

install: $(STAMP)

# The pinned npm linters and TypeScript generator the contract tests run.
NODE_TOOLS := tests/contract/node_modules/.installed
$(NODE_TOOLS): tests/contract/package-lock.json
	npm ci --prefix tests/contract --no-audit --no-fund
	touch $(NODE_TOOLS)

# The pinned Biome that lints and format-checks pwa/ (biome.json).
BIOME_TOOLS := tools/biome/node_modules/.installed
$(BIOME_TOOLS): tools/biome/package-lock.json
	npm ci --prefix tools/biome --no-audit --no-fund
	touch $(BIOME_TOOLS)

demo: $(RUNTIME_STAMP)
	$(BIN)/credence demo

test: $(STAMP)
	$(BIN)/python tests/ensure_postgres.py
	$(BIN)/ruff check server tests benchmarks harness examples
	$(BIN)/python tests/browser/ensure_chromium.py
	test -f tests/browser/axe/node_modules/axe-core/axe.min.js || npm ci --prefix tests/browser/axe
	$(MAKE) openapi-lint
	$(BIN)/ruff format --check server tests benchmarks harness examples
	$(MAKE) typecheck
	$(MAKE) js-lint
	$(BIN)/pytest -q -n 3 --dist loadfile

# Rewrite the README's (and the manifest's) screenshots; a normal test run only compares them.
screenshots: $(STAMP)
	CREDENCE_SCREENSHOTS=write $(BIN)/pytest -q tests/browser/test_screenshots.py

test-fast: $(STAMP)
	$(BIN)/pytest -q -m "not browser and not slow"

bench: $(STAMP)
	$(BIN)/python tests/ensure_postgres.py
	$(BIN)/python -m benchmarks

openapi: $(STAMP)
	$(BIN)/credence openapi --output openapi.yaml

# openapi.yaml under the three validators (tests/contract also asserts zero problems).
openapi-lint: $(STAMP) $(NODE_TOOLS)
	$(BIN)/openapi-spec-validator openapi.yaml
	cd tests/contract && node_modules/.bin/redocly lint ../../openapi.yaml
	cd tests/contract && node_modules/.bin/spectral lint ../../openapi.yaml --ruleset .spectral.yaml

lint: $(STAMP)
	$(BIN)/ruff check server tests benchmarks harness examples
	$(BIN)/ruff format --check server tests benchmarks harness examples
	$(MAKE) typecheck
	$(MAKE) js-lint

# mypy on server/ (its settings are in pyproject.toml).
typecheck: $(STAMP)
	$(BIN)/mypy

# Biome over pwa/, lint and format (`tools/biome/node_modules/.bin/biome format --write pwa` fixes).
js-lint: $(BIOME_TOOLS)
	tools/biome/node_modules/.bin/biome ci pwa

clean:
	rm -rf $(VENV) build *.egg-info
