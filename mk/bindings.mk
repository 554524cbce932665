# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: test-bindings node-env dist-bindings wheel py-wheels

# ---- the packages: bindings/python and bindings/node -----------------------
# `pip install ./bindings/python` (import idem) and `npm install
# ./bindings/node` each build the extension from ext/ when installed
# (bindings/python/setup.py, bindings/node/build.js); their intermediate
# files go to build/python and build/node.  test/bindings.test (part of make
# test) installs both as a user does and runs their unittest and node:test
# tests and the MCP server example's test:
#   make test-bindings   that file alone
#   make node-env        build/node-env: better-sqlite3@12, the MCP SDK,
#                        TypeScript and bindings/node (npm; once, a few
#                        minutes; again when its package list changes)
#   make wheel           build/dist/sqlite_idem-VERSION-py3-none-PLATFORM.whl:
#                        the Python wheel, the extension compiled in (pip
#                        wheel with Debian's python3, no network)
#   make py-wheels       build/py-wheels/HASH: the wheels of the package's
#                        extra [apsw] for the python3 first on PATH (pip
#                        download; once, a few seconds; again when the
#                        requirement or that Python changes)
#   make dist-bindings   build/dist: the Python wheel and the npm tarball
# test/bindings.test also installs the wheel, with no compiler on PATH, into
# a fresh venv of the python3 first on PATH (a pyenv build, whose sqlite3
# cannot load extensions) with its extra [apsw] from build/py-wheels, and
# runs the package's tests there on idem.connect()'s APSW connections.
# The Debian packages that a venv with --no-build-isolation needs, and mypy
# (the Python package's typing check) and Pydantic 1 (a result that is a
# Pydantic model, tests/test_expect.py), are installed like the others.
BINDINGS_PKGS := python3-venv python3-pip python3-setuptools python3-wheel python3-mypy \
                 python3-pydantic

$(BUILD)/.deps-bindings: mk/bindings.mk | $(BUILD)/.deps
	$(call need_pkgs,$(BINDINGS_PKGS))

# .ci/run only: ccache, which compiles the Python package's extension once
# for the run's eleven pip installs of it (.ci/run says how).
$(BUILD)/.deps-ccache: | $(BUILD)/.deps
	$(call need_pkgs,ccache)

test: $(BUILD)/.deps-bindings
TEST_BUILD += node-env wheel py-wheels $(BUILD)/node/idem.$(SO)

# The Node package run from a clone loads build/node/idem.so, which its
# install (bindings/node/build.js) compiles with the same flags: made again
# here whenever ext/ changes, so that no test file loads a stale copy while
# another one reinstalls the package.
$(BUILD)/node/idem.$(SO): $(SOURCES)
	@mkdir -p $(@D)
	$(call loadable,-O2)

node-env: | $(BUILD)/.deps  ## build/node-env: better-sqlite3@12, the MCP SDK, bindings/node (npm)
	@tclsh test/bindings.tcl node-env

test-bindings: all $(BUILD)/.deps-bindings node-env  ## the Python and Node packages' tests (test/bindings.test)
	tclsh tcl/run.tcl test/bindings.test

# The wheel is py3-none-PLATFORM (bindings/python/setup.py): any Python 3
# installs it; the one that builds it does not matter.
PY_PACKAGE := $(SOURCES) $(wildcard bindings/python/*.py bindings/python/*.toml \
              bindings/python/README.md bindings/python/idem/*)
wheel: $(BUILD)/dist/.wheel  ## build/dist: the Python wheel (py3-none-PLATFORM, the extension in it)
$(BUILD)/dist/.wheel: $(PY_PACKAGE) | $(BUILD)/.deps-bindings
	@mkdir -p $(BUILD)/dist
	@rm -f $(BUILD)/dist/sqlite_idem-*.whl
	@echo "building the wheel of bindings/python (pip wheel, no network) ..."
	PIP_DISABLE_PIP_VERSION_CHECK=1 $(PYTHON3) -m pip wheel -q --no-build-isolation \
	  --no-index --no-deps -w $(BUILD)/dist ./bindings/python
	@touch $@

py-wheels: | $(BUILD)/.deps  ## build/py-wheels: the extra [apsw]'s wheels for the python3 on PATH (pip download)
	@tclsh test/bindings.tcl py-wheels

dist-bindings: $(BUILD)/dist/.wheel  ## build/dist: the Python wheel and the npm tarball
	@echo "packing bindings/node (npm pack; its prepack copies ext/ into bindings/node/src) ..."
	cd bindings/node && npm pack --silent --pack-destination $(abspath $(BUILD)/dist)
