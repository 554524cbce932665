# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: test-bindings node-env dist-bindings

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
#   make dist-bindings   build/dist: the Python wheel and the npm tarball
# The Debian packages that a venv with --no-build-isolation needs, and mypy
# (the Python package's typing check) and Pydantic 1 (a result that is a
# Pydantic model, tests/test_expect.py), are installed like the others.
BINDINGS_PKGS := python3-venv python3-pip python3-setuptools python3-wheel python3-mypy \
                 python3-pydantic

$(BUILD)/.deps-bindings: mk/bindings.mk | $(BUILD)/.deps
	$(call need_pkgs,$(BINDINGS_PKGS))

test: $(BUILD)/.deps-bindings
TEST_BUILD += node-env

node-env: | $(BUILD)/.deps  ## build/node-env: better-sqlite3@12, the MCP SDK, bindings/node (npm)
	@tclsh test/bindings.tcl node-env

test-bindings: all $(BUILD)/.deps-bindings node-env  ## the Python and Node packages' tests (test/bindings.test)
	tclsh tcl/run.tcl test/bindings.test

dist-bindings: $(BUILD)/.deps-bindings  ## build/dist: the Python wheel and the npm tarball
	@mkdir -p $(BUILD)/dist
	@echo "building the wheel of bindings/python (pip wheel, no network) ..."
	PIP_DISABLE_PIP_VERSION_CHECK=1 $(PYTHON3) -m pip wheel --no-build-isolation \
	  --no-index --no-deps -w $(BUILD)/dist ./bindings/python
	@echo "packing bindings/node (npm pack; its prepack copies ext/ into bindings/node/src) ..."
	cd bindings/node && npm pack --silent --pack-destination $(abspath $(BUILD)/dist)
