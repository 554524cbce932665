# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: test-ops ops-venv

# ---- the operator's page: bindings/python/datasette-idem ----------------------
# A Datasette plugin, tested with Datasette's own test client (pytest) and in
# a real browser: Debian's chromium, headless, driven by Playwright for
# Python (never `playwright install`: the browser is the Debian package).
#   make ops-venv    build/ops-venv-<hash>: a venv of Debian's python3
#                    (--system-site-packages, so that sqlite3 loads
#                    extensions) with requirements-test.txt (PyPI), then
#                    sqlite-idem and datasette-idem from this tree (no
#                    network); made again only when the requirements change
#   make test-ops    the plugin's tests (build/ops-venv-<hash>/bin/pytest)
OPS_DIR   := bindings/python/datasette-idem
OPS_REQS  := $(OPS_DIR)/requirements-test.txt
OPS_HASH   = $(shell sha256sum $(OPS_REQS) | cut -c1-12)
OPS_VENV   = $(BUILD)/ops-venv-$(OPS_HASH)
OPS_PKGS  := chromium python3-venv python3-pip python3-setuptools python3-wheel

$(BUILD)/.deps-ops: mk/ops.mk | $(BUILD)/.deps
	$(call need_pkgs,$(OPS_PKGS))

ops-venv: $(BUILD)/.deps-ops  ## build/ops-venv-<hash>: Datasette, pytest, Playwright, the two packages
	@if [ ! -x $(OPS_VENV)/.ready ]; then \
	  echo "making $(OPS_VENV) (pip: $(OPS_REQS)) ..."; \
	  rm -rf $(OPS_VENV) && \
	  $(PYTHON3) -m venv --system-site-packages --without-pip $(OPS_VENV) && \
	  PIP_DISABLE_PIP_VERSION_CHECK=1 $(OPS_VENV)/bin/python -m pip install -q \
	    -r $(OPS_REQS) && \
	  printf '#!/bin/sh\n' > $(OPS_VENV)/.ready && chmod +x $(OPS_VENV)/.ready \
	  || exit 1; \
	fi
	@PIP_DISABLE_PIP_VERSION_CHECK=1 $(OPS_VENV)/bin/python -m pip install -q \
	  --no-build-isolation --no-index ./bindings/python
	@PIP_DISABLE_PIP_VERSION_CHECK=1 $(OPS_VENV)/bin/python -m pip install -q \
	  --no-build-isolation --no-index --no-deps ./$(OPS_DIR)
	@rm -rf $(OPS_DIR)/build $(OPS_DIR)/*.egg-info

test-ops: ops-venv  ## the Datasette plugin: datasette.client, then headless chromium (Playwright)
	cd $(OPS_DIR) && PYTHONDONTWRITEBYTECODE=1 IDEM_ROOT=$(CURDIR) \
	  $(abspath $(OPS_VENV))/bin/pytest -p no:cacheprovider -q \
	  --basetemp=$(abspath $(BUILD))/ops-scratch tests
