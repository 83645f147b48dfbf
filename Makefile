# The two commands a newcomer needs: `make run` and `make test`.
# Both bootstrap their own virtualenv from the pinned lock file first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PKGS   := libs/common libs/client services/authz services/resource-api services/discovery platform

# pytest-xdist workers, one database and one Redis database each (tests/support/infra.py):
# one per core and one more, for the time a worker waits on a server or the browser. The
# suite is bound by CPU (the servers, subprocesses and Chromium it starts all work), so more
# workers only contend: on two cores, four took 9 min 54 s where three took 8 min 27 s, and
# two were slower still. Tests that must share a worker are marked xdist_group.
# TEST_WORKERS=0 runs it in this one process.
TEST_WORKERS ?= $(shell echo $$(( $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2) + 1 )))
XDIST := -n $(TEST_WORKERS) --dist loadgroup
# A run starts hundreds of Python processes (the workers, the platforms, the services, the
# admin CLI): each reads the product's and the tests' compiled bytecode (and pytest its
# rewritten test modules) from __pycache__ instead of compiling them again, even where the
# environment says PYTHONDONTWRITEBYTECODE (about 2 s of CPU per pytest process alone).
TEST_ENV := PYTHONDONTWRITEBYTECODE=

.PHONY: run test test-fast unit check bench install clean

# uv installs the lock (pip where uv cannot run): tools/install.py says each step and how
# long the whole took. uv itself is pinned in the lock and kept in .tools/ (see the script).
$(STAMP): requirements.lock $(addsuffix /pyproject.toml,$(PKGS)) tools/install.py
	@$(PYTHON) tools/install.py
	@touch $@

install: $(STAMP)

# When `make run` began (before the install it may do): the banner counts time to ready from it.
run: export RUN_STARTED_AT := $(shell $(PYTHON) -c 'import time; print(time.time())')
run: $(STAMP)
	@$(BIN)/python -m courseschool.platform run

test: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest $(XDIST) $(PYTEST_ARGS)

# The inner loop: unit and integration tests (the apps in-process over real PostgreSQL
# and Redis); none of the browser, end-to-end, fault or deployment tests.
test-fast: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest $(XDIST) tests/unit tests/integration $(PYTEST_ARGS)

# Lint, format and types: ruff over every Python file, mypy over the product code, and
# squawk over the SQL migrations (.squawk.toml: a release's migrations must not break
# the release before it, which serves beside it during a rolling upgrade).
CHECKED := libs/common/src libs/client/src services/authz/src services/resource-api/src services/discovery/src platform/src
MIGRATION_FILES := $(wildcard services/*/src/courseschool/*/migrations/*.sql)
check: $(STAMP)
	$(BIN)/ruff check libs services platform tests bench tools
	$(BIN)/ruff format --check libs services platform tests bench tools
	$(BIN)/mypy $(CHECKED)
	@echo "squawk: every migration (.squawk.toml)"
	@$(BIN)/squawk --config .squawk.toml $(MIGRATION_FILES)

unit: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest tests/unit $(PYTEST_ARGS)

# Not part of `make test`: load on loopback with wrk, results in bench/RESULTS.md. Runs
# the peer server (oidc-provider, pinned in bench/package-lock.json; `npm ci` in bench/ on
# first use) side by side, in memory and on Redis, on a redis-server of the bench's own
# unless BENCH_REDIS_URL names one. BENCH_ARGS=--growth adds the million-row tables (slow).
bench: $(STAMP)
	$(BIN)/python -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .data .pytest_cache
