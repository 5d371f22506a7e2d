# The README's two commands are `make demo` and `make test`; both set up the environment first,
# and both are safe to run again (setup re-installs only when the lock file or setup.py change).
# PYTHON picks the interpreter (3.11 or 3.12), and with it the venv and the lock file:
# `make test PYTHON=python3.12` uses .venv312 and requirements-py312.lock.txt.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
PY_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d%d" % sys.version_info[:2])')
ifeq ($(PY_VERSION),)
$(error PYTHON=$(PYTHON) does not run; name a working interpreter, e.g. PYTHON=/path/to/python3.12)
endif
VENV := $(if $(filter 311,$(PY_VERSION)),.venv,.venv$(PY_VERSION))
LOCK := $(if $(filter 311,$(PY_VERSION)),requirements.lock.txt,requirements-py$(PY_VERSION).lock.txt)
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Tests never touch the network: every model they use is written locally.
OFFLINE := HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false

.PHONY: setup browser test lint demo wheels lock clean

setup: $(STAMP)

# The lock goes in with uv (the lock's own `uv==` pin), about twice as fast as pip: parallel
# downloads and bytecode compiled on every core (benchmarks/RESULTS.md, "Setting up"). uv reads no
# pip.conf: where it cannot reach the package index, setup says so and installs with pip instead;
# `make setup INSTALLER=pip` skips uv.
INSTALLER ?= uv
PIP := $(BIN)/pip install --quiet --disable-pip-version-check --no-deps
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps --compile-bytecode

$(STAMP): $(LOCK) setup.py harness/setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
ifeq ($(INSTALLER),uv)
	($(PIP) $$(grep '^uv==' $(LOCK)) && $(UV) -r $(LOCK)) || { \
	  echo "make setup: uv could not install $(LOCK) (above); installing it with pip"; \
	  $(PIP) -r $(LOCK); }
else
	$(PIP) -r $(LOCK)
endif
	$(PIP) --no-build-isolation -e .
	# The experiment harness, a package of its own (harness/README.md).
	$(PIP) --no-build-isolation -e harness
	# An editable install leaves out the wheel's start-up hook, which loads the plugin quietly
	# into every `allennlp` command of the venv, from any folder: write it.
	$(BIN)/python -m tft_allennlp_autoload
	# allennlp-models (loaded by every allennlp command) tries to download nltk's punkt unless
	# nltk finds it; we never use the module that needs it, so an empty marker stops the
	# download attempt and its error block. Delete it if you use allennlp-models' NarrativeQA.
	mkdir -p $(VENV)/nltk_data/tokenizers/punkt
	touch $(STAMP)

# The suite runs in one pytest-xdist worker per core (at most 4), each test file in one worker, so
# that a file's fixtures are built once and its distributed tests never share a port; each
# worker's torch on one thread. PYTEST_WORKERS=0 runs it in this process.
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n < 4 ? n : 4 )))
XDIST := $(if $(filter 0,$(PYTEST_WORKERS)),-p no:xdist,-n $(PYTEST_WORKERS) --dist loadfile)
XDIST_ENV := $(if $(filter 0,$(PYTEST_WORKERS)),,OMP_NUM_THREADS=1)

# tft-show's browser test (tests/commands/show_test.py) renders its page in headless Chromium,
# Debian's package: installed here where it is missing (as root; otherwise say how).
browser:
	@command -v chromium > /dev/null || command -v chromium-browser > /dev/null || \
	  { [ "$$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null; } || \
	  { echo "make test needs Chromium for tft-show's browser test: sudo apt-get install chromium"; exit 1; }

test: setup browser
	$(OFFLINE) $(XDIST_ENV) $(BIN)/python -m pytest $(XDIST) $(PYTEST_ARGS)

# Formatting, lint rules and types (pyproject.toml): `ruff format .` fixes the formatting; mypy
# checks the package's types.
lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

demo: setup
	PATH=$(abspath $(BIN)):$$PATH bash scripts/demo.sh

# The two wheels, into dist/: the plugin (tft_allennlp) and the experiment harness (tft_experiments).
wheels: setup
	$(BIN)/pip wheel --quiet --no-deps --no-build-isolation --wheel-dir dist . ./harness
	rm -rf build harness/build
	@ls dist/*.whl

# Rebuild this Python's lock from the pins in requirements.txt (needs the registries).
lock:
	bash scripts/lock.sh $(PYTHON)

clean:
	rm -rf $(VENV) runs
