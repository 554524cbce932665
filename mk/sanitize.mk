# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: test-oom test-asan test-asan-suite test-asan-oom test-valgrind fuzz fuzz-long fuzz-corpus

# ---- allocation faults, sanitizers, valgrind, fuzzing ----------------------
#   make test-oom       every operation with its Nth allocation failing, for
#                       N = 1, 2, ... (then every allocation from the Nth on):
#                       SQLITE_NOMEM or a clean error, nothing half-written,
#                       no leak (test/oom/oom.c); about 2 minutes
#   make test-asan      the Tcl suite with idem built with ASan and UBSan, then
#                       the allocation-fault driver under them too (on the
#                       file database; ASAN_OOM_FLAGS= adds :memory:); make
#                       test-asan-suite and test-asan-oom run each half.
#                       .ci/run runs the driver once over: the file database
#                       under ASan (test-asan-oom), :memory: without
#                       (make test-oom OOM_FLAGS=-m)
#   make test-valgrind  the Tcl suite, each file's tclsh under memcheck, then
#                       the allocation-fault driver (every OOM_STRIDE-th fault)
#   make fuzz           each libFuzzer target for FUZZ_RUNS runs or
#                       FUZZ_SECONDS seconds (CI); make fuzz-long for
#                       FUZZ_LONG_RUNS / FUZZ_LONG_SECONDS.  Targets run one
#                       after the other, one process each (a shared machine).
$(BUILD)/.deps-asan: | $(BUILD)/.deps
	$(call need_pkgs,tcl-dev)
$(BUILD)/.deps-valgrind: | $(BUILD)/.deps
	$(call need_pkgs,valgrind)
$(BUILD)/.deps-fuzz: | $(BUILD)/.deps
	$(call need_pkgs,clang libclang-rt-14-dev)

# It links build/libidem.a (make's static library, CFLAGS) rather than
# compiling idem into itself a second time (5 s of CPU at -O1; 0.2 s for
# the driver alone): the same allocations, so the same fault points (the
# ASan driver below does the same with the ASan build's).
$(BUILD)/oom: test/oom/oom.c $(BUILD)/libidem.a | $(BUILD)/.deps
	$(CC) -g -O1 $(WARN) -DSQLITE_CORE -DIDEM_OOM_LINKED -o $@ test/oom/oom.c $(BUILD)/libidem.a -lsqlite3

# OOM_FLAGS=-q: the file database only; -m: :memory: only.
OOM_FLAGS ?=
test-oom: $(BUILD)/oom  ## every allocation failing in turn (about 2 minutes)
	$(BUILD)/oom $(OOM_FLAGS)

# ASan and UBSan; a UBSan finding stops the program (-fno-sanitize-recover).
# tclsh is not instrumented, so build/asan/tclsh (test/oom/tclsh.c) links the
# runtime in: the test processes get leak detection.  The programs the tests
# start that load idem (sqlite3, python, node, the C examples) get the
# runtime by LD_PRELOAD, without leak detection (their own leaks are not
# ours; see test/oom/tclsh.c).
# -g1: line tables only (function, file and line: what the sanitizers'
# reports print), not -g's types and variables, which only a debugger
# reads: the same instructions (the disassembly of build/asan/idem.so and
# of idem_static.o compared, gcc 12), and each compile of idem under the
# sanitizers 28.7 -> 16.9 s of CPU (two in set-up, and capi.test's and
# canonical-13.27.1's programs under make test-asan-suite).
ASAN       := $(BUILD)/asan
ASAN_FLAGS := -g1 -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer -DIDEM_DEBUG
ASAN_RT     = $(shell $(CC) -print-file-name=libasan.so)
ASAN_OOM_FLAGS ?= -q

$(ASAN)/idem.$(SO): $(SOURCES) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(call loadable,$(ASAN_FLAGS))

# The C API programs of capi.test link libidem.a: under test-asan-suite they
# link this one, and are built with the sanitizers themselves.
$(ASAN)/libidem.a: $(SOURCES) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(ASAN_FLAGS) $(WARN) -DSQLITE_CORE -c -o $(ASAN)/idem_static.o ext/idem.c
	rm -f $@ && ar rcs $@ $(ASAN)/idem_static.o

$(ASAN)/tclsh: test/oom/tclsh.c | $(BUILD)/.deps-asan
	@mkdir -p $(@D)
	$(CC) $(ASAN_FLAGS) -I/usr/include/tcl8.6 -o $@ $< -ltcl8.6

# The driver links that libidem.a (built with the same flags) rather than
# compiling idem into itself a third time under ASan (17 s of CPU).
$(ASAN)/oom: test/oom/oom.c $(ASAN)/libidem.a | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(ASAN_FLAGS) $(WARN) -DSQLITE_CORE -DIDEM_OOM_LINKED -o $@ test/oom/oom.c $(ASAN)/libidem.a -lsqlite3

test-asan: test-asan-suite test-asan-oom  ## the suite and the fault driver under ASan + UBSan

# The two halves alone (.ci/run runs the driver beside other targets).
test-asan-suite: all $(ASAN)/idem.$(SO) $(ASAN)/libidem.a $(ASAN)/tclsh  ## the suite's files that load idem, under ASan + UBSan
	IDEM_LIB=$(ASAN)/idem.$(SO) LD_PRELOAD=$(ASAN_RT) IDEM_LIB_ONLY=1 \
	  IDEM_CAPI_LIB=$(abspath $(ASAN))/libidem.a IDEM_CAPI_CFLAGS="$(ASAN_FLAGS)" \
	  IDEM_WRAP="env ASAN_OPTIONS=detect_leaks=1" \
	  UBSAN_OPTIONS=print_stacktrace=1 $(ASAN)/tclsh tcl/run.tcl

test-asan-oom: $(ASAN)/oom  ## the fault driver under ASan + UBSan (ASAN_OOM_FLAGS= adds :memory:)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(ASAN)/oom $(ASAN_OOM_FLAGS)

# Memcheck on each test file's tclsh (tcl/run.tcl runs each file through
# IDEM_WRAP); a memory error or a definite leak fails the file.  Tcl's own
# allocations at exit are "possibly lost" or "still reachable", not counted.
VALGRIND := valgrind -q --error-exitcode=1 --leak-check=full \
            --show-leak-kinds=definite,indirect \
            --errors-for-leak-kinds=definite,indirect

OOM_STRIDE ?= 7

test-valgrind: all $(BUILD)/oom | $(BUILD)/.deps-valgrind  ## the suite under valgrind memcheck (long)
	IDEM_WRAP="$(VALGRIND)" IDEM_LIB_ONLY=1 tclsh tcl/run.tcl
	$(VALGRIND) $(BUILD)/oom -q -s $(OOM_STRIDE)

# libFuzzer (clang).  The seed corpus is made from the tests' data
# (test/fuzz/corpus.tcl); new inputs go to build/fuzz-corpus/live-*, a
# finding to build/fuzz/crash-* (add it to test/fuzz/seeds/).
FUZZ_CC           ?= clang
FUZZ_FLAGS        := -g -O2 -fsanitize=fuzzer,address,undefined \
                     -fno-sanitize-recover=all -DIDEM_DEBUG
FUZZ_TARGETS      := canonical key
FUZZ_SECONDS      ?= 60
FUZZ_RUNS         ?= 200000
FUZZ_LONG_SECONDS ?= 7200
FUZZ_LONG_RUNS    ?= 10000000
FUZZ              := $(BUILD)/fuzz
CORPUS            := $(BUILD)/fuzz-corpus

# The targets are one program (test/fuzz/fuzz_both.c), linked under each
# target's name, which picks the target: each one compiles idem into
# itself, and under these flags that compile was most of make fuzz (some
# 30 s of CPU a target, the same idem.c with the same flags twice); each
# target's file is unchanged and still builds alone.
$(FUZZ)/fuzz_both: test/fuzz/fuzz_both.c $(FUZZ_TARGETS:%=test/fuzz/fuzz_%.c) $(SOURCES) | $(BUILD)/.deps-fuzz
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -DSQLITE_CORE -o $@ $< -lsqlite3
$(FUZZ)/fuzz_%: $(FUZZ)/fuzz_both
	ln -f $< $@

fuzz-corpus: $(NUMBERS) | $(BUILD)/.deps  ## the fuzz targets' seed corpus, from the tests' data
	tclsh test/fuzz/corpus.tcl $(CORPUS)

# $(call run_fuzz,RUNS,SECONDS)
define run_fuzz
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(CORPUS)/live-$$t; \
	  $(FUZZ)/fuzz_$$t -max_len=4096 -runs=$(1) -max_total_time=$(2) \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ)/ \
	    $(CORPUS)/live-$$t $(CORPUS)/$$t > $(FUZZ)/fuzz_$$t.log 2>&1 \
	  || { tail -n 40 $(FUZZ)/fuzz_$$t.log; echo "fuzz_$$t: FAILED"; exit 1; }; \
	  echo "fuzz_$$t: $$(grep -E '^#[0-9]+[[:space:]]+DONE' $(FUZZ)/fuzz_$$t.log)"; \
	done
endef

fuzz: $(FUZZ_TARGETS:%=$(FUZZ)/fuzz_%) fuzz-corpus  ## libFuzzer, short runs (CI)
	$(call run_fuzz,$(FUZZ_RUNS),$(FUZZ_SECONDS))

fuzz-long: $(FUZZ_TARGETS:%=$(FUZZ)/fuzz_%) fuzz-corpus  ## libFuzzer, long runs (hours)
	$(call run_fuzz,$(FUZZ_LONG_RUNS),$(FUZZ_LONG_SECONDS))
