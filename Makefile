# Two commands on a fresh machine with only python3 and make: `make demo` and `make test`.
# Every target bootstraps .venv itself; it is rebuilt when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test ui serve bench lint clean

# The packages go in with uv, in under half of pip's time (docs/development.md, "The suite's time"), the
# machine's certificate store trusted as pip trusts it; with pip where uv cannot be had or fails.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check 'uv>=0.13,<0.14' && \
	  $(VENV)/bin/uv pip install --quiet --system-certs --compile-bytecode --python $(PY) -e '.[dev,devtools]' || \
	  { echo "uv could not install the packages: pip installs them"; \
	    $(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip && \
	    $(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,devtools]'; }
	touch $(STAMP)

# The package's bytecode, written before the many processes of a demo or a test run import it: where
# PYTHONDONTWRITEBYTECODE is set, each of them would compile it again (0.13 s of CPU each, docs/development.md).
BYTECODE := $(PY) -m compileall -q sevenmaps_pipeline

demo: $(STAMP)  ## the loopback fleet, 30 days through the prober and Dagster, signed, verified, summarised
	@$(BYTECODE)
	$(VENV)/bin/sevenmaps demo

# $(call apt_install,PACKAGE,PATH,WHAT NEEDS IT): Debian's PACKAGE installed when PATH is missing (apt-get
# update only when the first try fails), or a message naming what needs it where there is no apt-get.
define apt_install
	@command -v apt-get >/dev/null || { echo "$(1) ($(2)) is needed for $(3): install your distribution's $(1) package"; exit 1; }
	@SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); echo "installing Debian's $(1) for $(3)"; \
	DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $(1) >/dev/null 2>&1 || \
	{ $$SUDO apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $(1) >/dev/null; }
endef

# The page tests render the site in a real browser: Chromium from the distribution's packages (Debian's
# chromium), installed here when missing, as the two commands install what they need themselves.
CHROMIUM ?= /usr/bin/chromium
$(CHROMIUM):
	$(call apt_install,chromium,$(CHROMIUM),the page tests)

# The benches' verify floor (devtools/bench.py, run at a toy size by tests/test_bench_smoke.py) is
# `openssl dgst -sha256`: Debian's openssl package, installed here when missing, as Chromium is.
OPENSSL ?= /usr/bin/openssl
$(OPENSSL): | $(CHROMIUM)  # after Chromium's install, never beside it: the two would contend for dpkg's lock
	$(call apt_install,openssl,$(OPENSSL),the bench smoke test)

# A snapshot's completeness with standard tools (docs/verifying.md section 6, run as written by
# tests/test_export.py) reads the roots with `jq`: Debian's jq package, installed here when missing, as openssl is.
JQ ?= /usr/bin/jq
$(JQ): | $(OPENSSL)  # after openssl's install, never beside it: dpkg's lock
	$(call apt_install,jq,$(JQ),the snapshot tests)

# The map's server is also held to the official TypeScript SDK client (tests/test_ts_sdk_client.py), and the
# prober to a server on that SDK's server classes (tests/test_prober_ts_sdk_server.py): its npm
# packages, pinned in tests/ts_client/package-lock.json, installed here (npm ci) when node_modules is missing
# or older than the lock; never at test time, when nothing but 127.0.0.1 is reached.
TS_CLIENT := tests/ts_client
TS_MODULES := $(TS_CLIENT)/node_modules/.package-lock.json
$(TS_MODULES): $(TS_CLIENT)/package-lock.json
	@command -v node >/dev/null && command -v npm >/dev/null || { echo "the TypeScript SDK client test needs Node.js 18+ and npm: install your distribution's nodejs and npm packages"; exit 1; }
	@echo "installing the TypeScript SDK client's packages ($(TS_CLIENT)) for its test"
	@npm ci --prefix $(TS_CLIENT) --no-audit --no-fund --loglevel=error >/dev/null
	@touch $@

# `make test` alone (what CI runs) installs what a run needs side by side (the packages, Debian's Chromium,
# openssl and jq, the npm packages: each from its own rule above), in the time of the longest of them rather than
# their sum; beside other goals (`make lint test`) make takes them one after another, each install once.
# pytest gets no MAKEFLAGS: the make a test runs (`make ui`) is not this one's job.
ifeq ($(MAKECMDGOALS),test)
MAKEFLAGS += -j4
endif
test: $(STAMP) $(CHROMIUM) $(OPENSSL) $(JQ) $(TS_MODULES)  ## the test suite (pytest, on three workers for two cores: the longest tests start first, see tests/conftest.py)
	@$(BYTECODE)
	MAKEFLAGS= $(PY) -m pytest -q -n 3

PORT ?= 3000
# `make serve PORT=N` (or PORT in the environment) serves on N, as `make ui PORT=N` does; else on 8765.
SERVE_PORT := $(if $(filter command line environment,$(origin PORT)),$(PORT),8765)
serve: $(STAMP)  ## the map's MCP server (/mcp) and the site (/) on http://127.0.0.1:8765 (or PORT) over the lake
	$(VENV)/bin/sevenmaps serve --port $(SERVE_PORT)

ui: $(STAMP)  ## the Dagster UI on http://127.0.0.1:$(PORT) over the lake's own Dagster home ($SEVENMAPS_LAKE, else data_lake)
	$(VENV)/bin/sevenmaps ui --port $(PORT)

bench: $(STAMP)  ## 100,000 endpoints: a day and a 30-day backfill through Dagster, the tool tables, the prober, the registry, the server under a flood
	$(VENV)/bin/sevenmaps bench

lint: $(STAMP)  ## ruff and mypy over the package and the tests
	$(VENV)/bin/ruff check sevenmaps_pipeline tests
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .dagster_home .bench
