# The README's two commands are `make demo` and `make test`; both set up the environment first,
# and both are safe to run again (setup re-installs only when the lock file or setup.py change).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Tests never touch the network: every model they use is written locally.
OFFLINE := HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false

.PHONY: setup test lint demo lock clean

setup: $(STAMP)

$(STAMP): requirements.lock.txt setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -r requirements.lock.txt
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	# allennlp-models (loaded by every allennlp command) tries to download nltk's punkt unless
	# nltk finds it; we never use the module that needs it, so an empty marker stops the
	# download attempt and its error block. Delete it if you use allennlp-models' NarrativeQA.
	mkdir -p $(VENV)/nltk_data/tokenizers/punkt
	touch $(STAMP)

test: setup
	$(OFFLINE) $(BIN)/python -m pytest $(PYTEST_ARGS)

# Formatting, lint rules and types (pyproject.toml): `ruff format .` fixes the formatting; mypy
# checks the package's types.
lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

demo: setup
	PATH=$(abspath $(BIN)):$$PATH bash scripts/demo.sh

# Rebuild requirements.lock.txt from the pins in requirements.txt (needs the registries).
lock:
	bash scripts/lock.sh $(PYTHON)

clean:
	rm -rf $(VENV) runs
