# vaultmem — every target works as the first command on a fresh clone.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
LAUNCHER := $(VENV)/.launcher-stamp
CC     ?= cc
CORPORA ?= ../shared/corpora
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install demo test test-fast check static lint format format-check typecheck bench eval clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# constraints.txt pins torch to the CPU build on these machines (no CUDA downloads)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[embeddings,dev]' --config-settings editable_mode=compat
	@touch $(STAMP)

# launcher/vaultmem.c: the installed `vaultmem` forwards to a running watcher without starting
# Python (~4 ms instead of ~20 ms before the request leaves). What it forwards comes from
# build/forward.h, generated from the Python lists (vaultmem/daemon/forwarding.py). Without a
# C compiler the Python script pip installed stays in place: the same behaviour, a slower start.
FORWARD_SOURCES := $(wildcard vaultmem/daemon/forwarding.py vaultmem/daemon/client.py vaultmem/daemon/paths.py vaultmem/paths.py)
$(LAUNCHER): launcher/vaultmem.c $(FORWARD_SOURCES) $(STAMP)
	@if command -v $(CC) >/dev/null 2>&1; then \
		mkdir -p build && $(BIN)/python -m vaultmem.daemon.forwarding --header > build/forward.h.new && \
		mv -f build/forward.h.new build/forward.h && \
		$(CC) -O2 -Wall -Wextra -std=c11 -Ibuild -DVM_PYTHON='"$(abspath $(BIN))/python"' \
			-o $(BIN)/vaultmem.new launcher/vaultmem.c && mv -f $(BIN)/vaultmem.new $(BIN)/vaultmem; \
	else \
		echo "no C compiler ($(CC)): vaultmem stays the Python script (slower start)"; \
	fi
	@touch $@

install: $(STAMP) $(LAUNCHER)
	@# bytecode now, as pip does for a regular install: an editable install leaves it to
	@# the first import, which never writes it under PYTHONDONTWRITEBYTECODE (~5 ms a command)
	@$(BIN)/python -m compileall -q vaultmem

demo: install
	$(BIN)/python -m tools.demo

# The suite in one worker process per core (at most 4; pytest-xdist), a test file per worker
# so a module's shared vault is built once: 2 cores, 634 s in one process -> 345-367 s.
# TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= auto
PYTEST_PARALLEL = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --maxprocesses 4 --dist loadfile)

test: install
	$(BIN)/pytest -q $(PYTEST_PARALLEL)

test-fast: install
	$(BIN)/pytest -q $(PYTEST_PARALLEL) -m "not slow"

lint: install
	$(BIN)/ruff check vaultmem tests tools

format: install
	$(BIN)/ruff format vaultmem tests tools

format-check: install
	$(BIN)/ruff format --check vaultmem tests tools

typecheck: install
	$(BIN)/mypy vaultmem tools

# lint, format check and type check: what `check` runs before the tests
static: lint format-check typecheck

check: static test

bench: install
	$(BIN)/python -m tools.bench --corpora $(CORPORA) --out docs/BENCHMARKS.md

eval: install
	$(BIN)/python -m tools.evalkit --corpora $(CORPORA) --out docs/BENCHMARKS.md
	$(BIN)/python -m tools.evalkit.linkcheck $(CORPORA)/obsidian-help-en --out docs/BENCHMARKS.md
	$(BIN)/python -m tools.evalkit.multilingual --corpora $(CORPORA) --out docs/BENCHMARKS.md

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
