# Every target bootstraps .venv itself: a fresh machine needs only Python and make.
# `run` installs what serving needs, the package alone (`editjournal mcp` says how to add
# its extra when asked); the other targets the development set (`dev`: tests, hypothesis,
# ruff, mypy), a superset.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
UV := $(BIN)/uv
# uv installs the same packages as pip from the same registry, in 6-9 s where pip took 60-70 s
# (most of it compiling every module's bytecode up front): the suite's processes compile what
# they import, once, into __pycache__. uv itself comes from PyPI: the venv is made without
# pip (ensurepip was 7 of the venv's 15 s) and the interpreter's own pip installs uv into it
# (`pip --python`); an interpreter without a pip that can gives the venv its own first.
INSTALL := $(UV) pip install --quiet --python $(BIN)/python
UV_PIP_ARGS := --quiet --disable-pip-version-check 'uv>=0.5,<1'
WORKSPACE ?=

.PHONY: run test stress bench lint format clean

$(UV):
	@test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(BIN)/python install $(UV_PIP_ARGS) 2>/dev/null \
		|| { $(BIN)/python -m ensurepip --default-pip >/dev/null \
			&& $(BIN)/python -m pip install $(UV_PIP_ARGS); }

$(RUN_STAMP): pyproject.toml setup.py | $(UV)
	$(INSTALL) -e .
	@touch $(RUN_STAMP)

# claude-agent-sdk from its source: the tests need its types, not the 180 MB wheel's bundled
# Claude Code binary (an application installs the wheel, which runs that binary).
$(STAMP): pyproject.toml setup.py | $(UV)
	UV_NO_BINARY_PACKAGE=claude-agent-sdk $(INSTALL) -e '.[dev]' pip  # pip: test_install builds with it
	@touch $(STAMP) $(RUN_STAMP)

# Ctrl-C reaches make, the shell and the daemon alike: the daemon stops cleanly and
# the shell's trap ends the recipe with success, so make reports no error for it
# (an exit of 130, an interrupt the shell did not see, is no error either). Without
# WORKSPACE the daemon finds its workspace from here, as the commands it prints do, and
# says so: "(given by --workspace)" only when one was given.
run: $(RUN_STAMP) ## serve WORKSPACE (default: found from this directory) in the foreground; Ctrl-C stops it
	@trap 'exit 0' INT; $(BIN)/editjournal $(if $(WORKSPACE),--workspace "$(WORKSPACE)") serve \
		|| { code=$$?; test $$code -eq 130 || exit $$code; }

# The suite runs on TEST_JOBS workers (pytest-xdist): every test has its own workspace,
# daemon and temp dirs. Daemons and CLI calls are forked from a zygote per worker that
# has their modules imported (tests/zygote.py; EDITJOURNAL_TEST_EXEC=1 execs each one
# instead). Four workers on two cores keep both busy while tests wait on daemons, pipes
# and subprocesses: on a fresh clone with the temp dirs on tmpfs, 4 took 225.7 s of pytest
# time where 3 took 236.5-245.8 s (the CPU alike, 431-441 s for the whole .ci/run).
TEST_JOBS ?= 4

# Bytecode is cached (__pycache__, ignored by git) even where PYTHONDONTWRITEBYTECODE is
# set: without it every worker recompiled and re-rewrote the asserts of every test
# module (17 s of CPU each) and every process started compiled the modules it imported.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

# Before the workers start, two collection passes (one per core) compile the modules and
# rewrite the tests' asserts into __pycache__: on a fresh clone every worker did it at
# once otherwise (17 s of CPU each; 6 s from the cache). Their errors show in the run.
#
# The tests' temp dirs (pytest's tmp_path, tempfile's) are made in a directory of their own
# on tmpfs (/dev/shm) where there is one, removed after the run: every test makes its own
# workspace, journal and sockets, and on ext4 their inodes, directories and fsyncs cost
# 10% of the suite's CPU and more of its time (docs/performance.md). The code paths are
# the same (an fsync still runs, and returns at once). TEST_TMP=disk keeps them on disk,
# as `make stress` does. The directory is 755, as /tmp lets them: tests that act as another
# user (nobody) reach their shared directories through it.
TEST_TMP ?= tmpfs

test: $(STAMP) ## the whole suite (stress suites excluded), TEST_JOBS in parallel; the 20 slowest listed
	@tmp=$$(test "$(TEST_TMP)" = tmpfs && mktemp -d /dev/shm/editjournal-test.XXXXXX 2>/dev/null \
		|| mktemp -d); trap 'rm -rf "$$tmp"' EXIT; chmod 755 "$$tmp"; export TMPDIR="$$tmp"; \
	{ $(PYTEST) -q --collect-only -p no:xdist tests/unit >/dev/null 2>&1 & \
		$(PYTEST) -q --collect-only -p no:xdist tests/e2e >/dev/null 2>&1; wait; }; \
	echo "$(PYTEST) -q -m \"not stress\" -n $(TEST_JOBS) --dist worksteal --durations=20  (temp dirs in $$tmp)"; \
	$(PYTEST) -q -m "not stress" -n $(TEST_JOBS) --dist worksteal --durations=20

stress: $(STAMP) ## the heavy suites
	$(PYTEST) -q -m stress

bench: $(STAMP) ## every performance row vs its same-run baseline: a table on stdout and bench/results/latest.json (BENCH_ARGS=--quick: tiny sizes)
	$(BIN)/python -m bench $(BENCH_ARGS)

TYPECHECK := $(VENV)/typecheck/editjournal

lint: $(STAMP) ## ruff and mypy (mypy sees the parts under their import name, editjournal.*)
	@mkdir -p $(TYPECHECK)
	@for part in daemon client schemas; do ln -sfn ../../../$$part $(TYPECHECK)/$$part; done
	@for f in __init__.py py.typed; do ln -sf ../../../editjournal/$$f $(TYPECHECK)/$$f; done
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
