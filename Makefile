# Two commands from a fresh clone: `make lab` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
# nbgrader calls `alembic` and `jupyter` from PATH: use the venv's.
export PATH := $(BIN):$(PATH)

ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
# The notebooks of the course: every source/<id>/ (a translation, <id>_ko, is built from <id>).
IDS := $(filter-out %_ko,$(notdir $(patsubst %/,%,$(wildcard source/*/))))

# `make ids` lists them (tests/test_architecture.py checks it against source/).
ids:
	@echo $(IDS)

.PHONY: setup lab test test-fast system-deps doctor notebooks lint bench clean ids \
	release collect autograde feedback grades report learner-build demo grade-ui hub hub-stop

# The teacher's cycle (helpers.classroom). EXCHANGE defaults to $PE_COURSE_EXCHANGE;
# IDS_ARG narrows to some assignments (make release IDS_ARG=01_order); JOBS to the cores;
# DB is the gradebook's URL (default: gradebook.db); SCHEDULER a Dask scheduler or local:N;
# UNRELEASED=1 lets autograde grade an assignment never released (refused by default).
EXCHANGE ?= $(PE_COURSE_EXCHANGE)
IDS_ARG ?=
JOBS ?=
DB ?=
SCHEDULER ?=
UNRELEASED ?=
EXCHANGE_FLAG = $(if $(EXCHANGE),--exchange $(EXCHANGE),)
DB_FLAG = $(if $(DB),--db $(DB),)

# An editable install leaves out the package's data files: the kernels' configuration
# (etc/ipython/, helpers.fresh_kernel) is copied into the environment as the wheel installs it.
# `make lab` installs what a learner needs (`pip install -e .`, LEARNER_STAMP); `make setup`
# (and every teacher's or developer's target: test, hub, autograde, ...) adds the extras:
# dev (the suite's tools), cluster (Dask, PostgreSQL) and hub (JupyterHub).
LEARNER_STAMP := $(VENV)/.installed-learner
INSTALL_DEPS := pyproject.toml etc/ipython/ipython_kernel_config.py
define newline


endef
define install
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '$(1)'
	install -D -m 644 etc/ipython/ipython_kernel_config.py $(VENV)/etc/ipython/ipython_kernel_config.py
endef

# (in a variable: a comma written in call's arguments would split them)
FULL := .[dev,cluster,hub]
$(STAMP): $(INSTALL_DEPS)
	$(call install,$(FULL))
	touch $(LEARNER_STAMP) $(STAMP)

# A full install (make setup) newer than its inputs has the learner's too: nothing to install.
$(LEARNER_STAMP): $(INSTALL_DEPS)
	test -f $(STAMP) && test $(STAMP) -nt pyproject.toml \
		&& test $(STAMP) -nt etc/ipython/ipython_kernel_config.py \
		|| { $(strip $(subst $(newline), && ,$(call install,.))); }
	touch $(LEARNER_STAMP)

setup: $(STAMP)

# Browser, sandbox and PostgreSQL packages for the classroom tests, and the hub's proxy from npm
# (Debian; root, else skipped).
system-deps:
	@$(BIN)/python -m helpers system-deps || true

# `make lab LANG=ko` opens the Korean notebooks (so does a Korean locale, LANG=ko_KR.UTF-8);
# LANG is also the locale variable: any other value opens the English ones.
COURSE_LANG := $(if $(filter ko ko_%,$(LANG)),ko,en)
FIRST := $(firstword $(IDS))$(if $(filter ko,$(COURSE_LANG)),_ko,)

# `make lab PORT=8890`: on that port (without PORT: 8888 or the next free one). The URL it
# prints opens notebook 01 (default_url), with or without a browser.
PORT_FLAGS = $(if $(filter command line environment,$(origin PORT)),--ServerApp.port=$(PORT) --ServerApp.port_retries=0,)

lab: $(LEARNER_STAMP)
	$(if $(filter ko,$(LANG)),LANG=C.UTF-8 ,)$(BIN)/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG) \
		--LabApp.default_url=/lab/tree/$(FIRST)/$(FIRST).ipynb $(PORT_FLAGS) \
		notebooks/$(FIRST)/$(FIRST).ipynb

# The suite on every core (pytest-xdist, one worker per core); tests that share an expensive
# build or must not run at once run in one worker (XDIST_GROUPS, tests/conftest.py).
# PARALLEL= runs it in one process.
PARALLEL ?= -n auto

test: setup system-deps
	$(BIN)/python -m pytest $(PARALLEL)

# The fast layer: everything but notebooks, nbgrader and the browser (marker `slow`).
test-fast: setup
	$(BIN)/python -m pytest $(PARALLEL) -m "not slow"

doctor: setup
	$(BIN)/python -m helpers doctor

# Regenerate the learner notebooks from source/ (never edit notebooks/ by hand).
# The Formgrader (manual grading, extra credit, comments, feedback): JupyterLab on the course
# folder, so that its links to source/ and autograded/ work (make lab's root is notebooks/).
# `make grade-ui PORT=8890`: on that port (without PORT: 8888 or the next free one);
# EXCHANGE=DIR: the exchange its Release, Collect and feedback buttons use.
grade-ui: setup
	$(if $(EXCHANGE),PE_COURSE_EXCHANGE=$(abspath $(EXCHANGE)) ,)$(BIN)/python -m helpers grade-ui \
		$(if $(filter command line environment,$(origin PORT)),--port $(PORT))

notebooks: setup
	$(BIN)/python -m helpers generate

lint: setup
	$(BIN)/ruff check helpers tests bench
	$(BIN)/ruff format --check helpers tests bench

bench: setup
	for m in widget_update grading_overhead class_autograde; do $(BIN)/python -m bench.$$m || exit 1; done

release: setup
	$(BIN)/python -m helpers release $(IDS_ARG) $(EXCHANGE_FLAG) $(DB_FLAG)

collect: setup
	$(BIN)/python -m helpers collect $(IDS_ARG) $(EXCHANGE_FLAG) $(DB_FLAG)

autograde: setup
	$(BIN)/python -m helpers autograde $(IDS_ARG) $(if $(JOBS),--jobs $(JOBS),) $(DB_FLAG) \
		$(if $(SCHEDULER),--scheduler $(SCHEDULER),) $(if $(UNRELEASED),--unreleased,)

feedback: setup
	$(BIN)/python -m helpers feedback $(IDS_ARG) $(EXCHANGE_FLAG) $(DB_FLAG)

# make grades FORMAT=canvas ROSTER=roster.csv: the LMS's import (canvas, moodle or csv);
# without FORMAT, grades.csv.
FORMAT ?=
ROSTER ?=
grades: setup
	$(BIN)/python -m helpers grades $(IDS_ARG) $(if $(FORMAT),--format $(FORMAT),--out grades.csv) \
		$(if $(ROSTER),--roster $(ROSTER),) $(DB_FLAG)

# What the class got wrong: reports/index.html and a page per assignment.
report: setup
	$(BIN)/python -m helpers report $(IDS_ARG) $(DB_FLAG)

# A sample class (correct, blank, each known mistake, cheating) through the whole cycle in
# demo/course: autograded/, feedback/, grades.csv, the Canvas and Moodle files and
# reports/index.html are left there to open.
demo: setup
	$(BIN)/python -m tests.demo --out demo

learner-build: setup
	$(BIN)/python -m helpers learner-build --out dist

# The class of a roster on a JupyterHub of this machine (root): make hub ROSTER=roster.csv
# (ROSTER defaults to roster.csv here). HUB_STATE is the hub's folder (default
# /srv/positional-encodings), PORT its port, PUBLIC_URL its address for browsers (default
# http://localhost:PORT; each user's server at <user>.<its host>).
HUB_STATE ?=
PORT ?= 8000
PUBLIC_URL ?=
HUB_STATE_FLAG = $(if $(HUB_STATE),--state $(HUB_STATE),)

hub: setup system-deps
	$(BIN)/python -m helpers hub --roster $(or $(ROSTER),roster.csv) --port $(PORT) $(HUB_STATE_FLAG) \
		$(if $(PUBLIC_URL),--public-url $(PUBLIC_URL),)

hub-stop: setup
	$(BIN)/python -m helpers hub-stop $(HUB_STATE_FLAG)

# What `make demo` and the build made, and nothing of a class: the course folder's gradebook,
# submitted/, autograded/, feedback/, grades and reports are a real class's data and stay
# (the demo's own class, gradebook.db-wal and -shm included, lives in demo/).
clean:
	rm -rf demo artifacts dist build .pytest_cache .hypothesis .ruff_cache .generate-* .proxy
