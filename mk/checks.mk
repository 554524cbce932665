# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: test-diff test-portable test-race test-crash test-mutation test-powerloss

# ---- differential: idem_canonical against the npm package canonicalize ------
# (an RFC 8785 implementation) on N random documents; test/diff/gen.js skips
# integer literals beyond 2^53, where doc/contract.md §3 deliberately differs.
N ?= 100000
test-diff: $(LIB)  ## idem_canonical against npm's canonicalize, N random documents
	npm install --silent --prefix test/diff --no-package-lock --no-audit --no-fund
	node test/diff/gen.js $(N) - | tclsh test/diff/check.tcl -

# ---- portable: the canonicalizer without its word-at-a-time and SSE2 scans
# (what a big-endian or non-GNU build runs), on the JSON tests and 20 000
# differential documents; then the SSE2 build without the AVX2 UTF-8 check
# (an x86-64 without AVX2), on the JSON tests.
PORTABLE := $(BUILD)/portable
NOAVX2   := $(BUILD)/noavx2
$(PORTABLE)/idem.$(SO): $(SOURCES) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(call loadable,$(NOG_CFLAGS) -DIDEM_JSON_PORTABLE)
$(NOAVX2)/idem.$(SO): $(SOURCES) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(call loadable,$(NOG_CFLAGS) -DIDEM_NO_AVX2)

# IDEM_LIB_TESTS_ONLY: utf8-1.1 runs build/idem_utf8_test (4.5 s of CPU),
# not the library under test: here it would run as make test runs it, the
# same program: left to it.  (canonical.test's tests of build/variant/ are
# such too, but ~1 s of CPU a run in all: kept.)
test-portable: $(PORTABLE)/idem.$(SO) $(NOAVX2)/idem.$(SO) $(BUILD)/idem_utf8_test  ## the canonicalizer without its word, SSE2 and AVX2 scans
	IDEM_LIB=$(abspath $(PORTABLE))/idem.$(SO) tclsh tcl/run.tcl \
	  test/canonical.test test/key.test test/numbers.test test/hostile.test
	npm install --silent --prefix test/diff --no-package-lock --no-audit --no-fund
	node test/diff/gen.js 20000 - | IDEM_LIB=$(abspath $(PORTABLE))/idem.$(SO) \
	  tclsh test/diff/check.tcl -
	IDEM_LIB=$(abspath $(NOAVX2))/idem.$(SO) IDEM_LIB_TESTS_ONLY=1 tclsh tcl/run.tcl \
	  test/canonical.test test/key.test test/hostile.test test/utf8.test

# ---- reliability: processes killed at random moments, and at fixed crash
# points (test/reliability/), with $(PYTHON3).
test-race: $(LIB)  ## 8 processes SIGKILLed at random moments
	$(PYTHON3) test/reliability/race.py

test-crash: $(LIB)  ## processes killed at every step of both recipes
	CC="$(CC)" $(PYTHON3) test/reliability/crash.py

# ---- power loss: every cut of both recipes in every mode -------------------
# build/powerloss (test/powerloss/powerloss.c) cuts the power before each
# file operation in turn, losing, tearing and reordering what was not
# synced (files and directories), for each journal mode, synchronous level
# and locking mode, and a SQLite without directory syncs (nodirsync); -x
# fails the run if a mode idem accepts loses an external claim, splits a
# local one from its action or damages the file, or a mode it refuses
# commits a claim.  The relaxed modes show the loss is real.  A mode with
# an attached file (aux.JOURNAL.SYNC) puts a local call's action there.
# test/durable.test runs a short slice.  PL_CLAIMS=N claims a run.
PL_CLAIMS ?= 6
PL_BASE   := $(foreach r,ext local,$(foreach j,delete persist truncate wal,\
               $(foreach s,off normal full extra,$(r):$(j)-$(s))))
# A local call whose action is in an attached file (aux) at each setting,
# created before or in the claim's transaction (fresh): one COMMIT writes
# both files, so idem accepts it only where SQLite commits both through
# the super-journal (doc/contract.md §4).
PL_AUX    := $(foreach a,$(foreach j,delete persist truncate memory off wal,\
               $(foreach s,off normal full,aux.$(j).$(s))),\
               local:delete-full-$(a) local:delete-full-$(a)-fresh) \
             local:wal-full-aux.delete.full local:delete-off-relaxed-aux.delete.full \
             local:delete-normal-relaxed-aux.delete.normal
PL_MODES  := $(PL_BASE) $(addsuffix -exclusive,$(PL_BASE)) \
             $(foreach m,wal-full delete-extra persist-full truncate-full,\
               ext:$(m)-nodirsync ext:$(m)-nodirsync-relaxed) \
             $(foreach m,delete-full delete-normal persist-normal truncate-normal \
               wal-normal delete-off,ext:$(m)-relaxed) \
             $(foreach m,delete-normal truncate-normal delete-off wal-off,local:$(m)-relaxed) \
             $(PL_AUX)
test-powerloss: $(BUILD)/powerloss  ## every power cut of both recipes in every journal mode (a few minutes)
	cd $(BUILD) && ./powerloss -x -c $(PL_CLAIMS) -f powerloss.db $(PL_MODES)

# ---- mutation: every rule's test can fail ------------------------------------
# test/mutation/run.py applies each mutant of test/mutation/mutants.txt (one
# small change to a rule) to a copy of the tree, builds it unoptimized and
# runs the tests the mutant names: a survivor fails the run, as does a
# mutant that no longer applies to the code.  MUTANTS_SAMPLE=N runs a fixed
# sample of N (CI).
MUTANTS_SAMPLE ?=
test-mutation: | $(BUILD)/.deps  ## every listed mutant of the rules must fail a test (MUTANTS_SAMPLE=N: a sample)
	$(PYTHON3) test/mutation/run.py $(if $(MUTANTS_SAMPLE),--sample $(MUTANTS_SAMPLE))
