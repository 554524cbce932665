# idem -- the idempotency protocol as a SQLite extension.
#
#   make            build/idem.so (loadable) and build/libidem.a (static)
#   make demo       the sqlite3 shell runs test/demo.sql: the protocol at work
#   make test       the whole Tcl suite; ends with "N passed, N failed"
#
# Missing Debian packages are installed first when we are root with apt;
# otherwise the exact apt-get line is printed and make stops.

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra
BUILD   := build
SOURCES := $(wildcard ext/*.c ext/*.h)
DEB_PKGS := libsqlite3-dev libxxhash-dev tcl libsqlite3-tcl sqlite3 pkg-config

.PHONY: all deps demo test test-new clean

all: $(BUILD)/idem.so $(BUILD)/libidem.a

# ---- dependencies ---------------------------------------------------------
# $(call need_pkgs,PKGS): install the Debian packages PKGS that are missing
# (as root, with apt), or print the apt-get line and fail.
define need_pkgs
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' \
	    || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	      apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "this target needs these Debian packages; install them with:"; \
	    echo "  sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi
	@touch $@
endef
deps: $(BUILD)/.deps
$(BUILD)/.deps:
	@mkdir -p $(BUILD)
	$(call need_pkgs,$(DEB_PKGS))

# ---- the extension --------------------------------------------------------
# One translation unit (ext/idem.c includes the parts), so every symbol but
# sqlite3_idem_init is static, in the .so and in the .a alike.
$(BUILD)/idem.so: $(SOURCES) include/idem.h | $(BUILD)/.deps
	$(CC) $(CFLAGS) $(WARN) -fPIC -shared -fvisibility=hidden -o $@ ext/idem.c

$(BUILD)/idem_static.o: $(SOURCES) include/idem.h | $(BUILD)/.deps
	$(CC) $(CFLAGS) $(WARN) -DSQLITE_CORE -c -o $@ ext/idem.c

$(BUILD)/libidem.a: $(BUILD)/idem_static.o
	rm -f $@ && ar rcs $@ $^

# ---- the main job and the tests ------------------------------------------
# The transcript also goes to build/demo.out (test/demo.test reads it).  The
# script makes one error on purpose (a plain duplicate INSERT), so the
# shell's own exit status is not the verdict: the test is.
demo: $(BUILD)/idem.so
	@rm -f $(BUILD)/demo.db
	@sqlite3 $(BUILD)/demo.db < test/demo.sql 2>&1 | tee $(BUILD)/demo.out

test: all
	tclsh tcl/run.tcl

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
# The Debian packages that a venv with --no-build-isolation needs are
# installed like the others.
BINDINGS_PKGS := python3-venv python3-pip python3-setuptools python3-wheel

.PHONY: test-bindings node-env dist-bindings
$(BUILD)/.deps-bindings: | $(BUILD)/.deps
	$(call need_pkgs,$(BINDINGS_PKGS))

test: $(BUILD)/.deps-bindings node-env

node-env: | $(BUILD)/.deps
	@tclsh test/bindings.tcl node-env

test-bindings: all $(BUILD)/.deps-bindings node-env
	tclsh tcl/run.tcl test/bindings.test

dist-bindings: $(BUILD)/.deps-bindings
	@mkdir -p $(BUILD)/dist
	@echo "building the wheel of bindings/python (pip wheel, no network) ..."
	PIP_DISABLE_PIP_VERSION_CHECK=1 $(PYTHON3) -m pip wheel --no-build-isolation \
	  --no-index --no-deps -w $(BUILD)/dist ./bindings/python
	@echo "packing bindings/node (npm pack; its prepack copies ext/ into bindings/node/src) ..."
	cd bindings/node && npm pack --silent --pack-destination $(abspath $(BUILD)/dist)

# ---- install ---------------------------------------------------------------
#   make install [PREFIX=/usr/local] [DESTDIR=/staging]    make uninstall
# $(PREFIX)/lib/idem.so is the loadable extension: load_extension('/usr/local/lib/idem'),
# or .load /usr/local/lib/idem in the shell.  libidem.a, idem.h and idem.pc
# link it statically: cc app.c $$(pkg-config --cflags --libs idem)
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PCDIR      ?= $(LIBDIR)/pkgconfig
VERSION    := $(shell sed -n 's/.*IDEM_VERSION "\(.*\)".*/\1/p' include/idem.h)

.PHONY: install uninstall
install: $(BUILD)/idem.so $(BUILD)/libidem.a
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PCDIR)
	install -m 755 $(BUILD)/idem.so $(DESTDIR)$(LIBDIR)/idem.so
	install -m 644 $(BUILD)/libidem.a $(DESTDIR)$(LIBDIR)/libidem.a
	install -m 644 include/idem.h $(DESTDIR)$(INCLUDEDIR)/idem.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    idem.pc.in > $(DESTDIR)$(PCDIR)/idem.pc
	chmod 644 $(DESTDIR)$(PCDIR)/idem.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/idem.so $(DESTDIR)$(LIBDIR)/libidem.a \
	      $(DESTDIR)$(INCLUDEDIR)/idem.h $(DESTDIR)$(PCDIR)/idem.pc

# ---- the newest SQLite ------------------------------------------------------
# The npm package better-sqlite3@12 carries the amalgamation (3.53): fetch
# the tarball only (no install scripts), build it as a shared
# libsqlite3.so.0, build idem against its headers (so xIntegrity is in),
# and run the whole suite on it through LD_LIBRARY_PATH.  Nothing of it is
# committed.
NEW      := $(BUILD)/sqlite-new
NEW_OPTS := -DSQLITE_ENABLE_PREUPDATE_HOOK -DSQLITE_ENABLE_SESSION \
            -DSQLITE_ENABLE_COLUMN_METADATA -DSQLITE_ENABLE_FTS5 \
            -DSQLITE_ENABLE_RTREE -DSQLITE_ENABLE_UNLOCK_NOTIFY \
            -DSQLITE_ENABLE_DBSTAT_VTAB -DSQLITE_ENABLE_MATH_FUNCTIONS

$(NEW)/sqlite3.c:
	@mkdir -p $(NEW)
	cd $(NEW) && rm -f better-sqlite3-*.tgz && npm pack --silent better-sqlite3@12 >/dev/null \
	  && tar xzf better-sqlite3-*.tgz --strip-components=3 \
	       package/deps/sqlite3/sqlite3.c package/deps/sqlite3/sqlite3.h \
	       package/deps/sqlite3/sqlite3ext.h \
	  && rm -f better-sqlite3-*.tgz

$(NEW)/libsqlite3.so.0: $(NEW)/sqlite3.c
	$(CC) -O2 -fPIC -shared -Wl,-soname,libsqlite3.so.0 $(NEW_OPTS) \
	  -o $@ $< -lm -lpthread

$(NEW)/idem.so: $(SOURCES) include/idem.h $(NEW)/sqlite3.c
	$(CC) $(CFLAGS) $(WARN) -I$(NEW) -fPIC -shared -fvisibility=hidden -o $@ ext/idem.c

test-new: all $(NEW)/libsqlite3.so.0 $(NEW)/idem.so
	LD_LIBRARY_PATH=$(abspath $(NEW)) IDEM_LIB=$(abspath $(NEW))/idem.so tclsh tcl/run.tcl

# ---- differential: idem_canonical against the npm package canonicalize ------
# (an RFC 8785 implementation) on N random documents; test/diff/gen.js skips
# integer literals beyond 2^53, where SPEC deliberately differs.
N ?= 100000
.PHONY: test-diff
test-diff: $(BUILD)/idem.so
	npm install --silent --prefix test/diff --no-package-lock --no-audit --no-fund
	node test/diff/gen.js $(N) - | tclsh test/diff/check.tcl -

# ---- portable: the canonicalizer without its word-at-a-time and SSE2 scans
# (what a big-endian or non-GNU build runs), on the JSON tests and 20 000
# differential documents.
PORTABLE := $(BUILD)/portable
.PHONY: test-portable
$(PORTABLE)/idem.so: $(SOURCES) include/idem.h | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -DIDEM_JSON_PORTABLE -fPIC -shared \
	  -fvisibility=hidden -o $@ ext/idem.c

test-portable: $(PORTABLE)/idem.so
	IDEM_LIB=$(abspath $(PORTABLE))/idem.so tclsh tcl/run.tcl \
	  test/canonical.test test/key.test test/numbers.test test/hostile.test
	npm install --silent --prefix test/diff --no-package-lock --no-audit --no-fund
	node test/diff/gen.js 20000 - | IDEM_LIB=$(abspath $(PORTABLE))/idem.so \
	  tclsh test/diff/check.tcl -

# ---- reliability: processes killed at random moments, and at fixed crash
# points (test/reliability/).  Debian's python3, which can load extensions.
PYTHON3 := /usr/bin/python3
.PHONY: test-race test-crash

test-race: $(BUILD)/idem.so
	$(PYTHON3) test/reliability/race.py

test-crash: $(BUILD)/idem.so
	CC="$(CC)" $(PYTHON3) test/reliability/crash.py

# ---- allocation faults, sanitizers, valgrind, fuzzing ----------------------
#   make test-oom       every operation with its Nth allocation failing, for
#                       N = 1, 2, ... (then every allocation from the Nth on):
#                       SQLITE_NOMEM or a clean error, nothing half-written,
#                       no leak (test/oom/oom.c); about 2 minutes
#   make test-asan      the Tcl suite with idem built with ASan and UBSan, then
#                       the allocation-fault driver under them too
#   make test-valgrind  the Tcl suite, each file's tclsh under memcheck, then
#                       the allocation-fault driver (every OOM_STRIDE-th fault)
#   make fuzz           each libFuzzer target for FUZZ_RUNS runs or
#                       FUZZ_SECONDS seconds (CI); make fuzz-long for
#                       FUZZ_LONG_RUNS / FUZZ_LONG_SECONDS.  Targets run one
#                       after the other, one process each (a shared machine).
.PHONY: test-oom test-asan test-valgrind fuzz fuzz-long fuzz-corpus

$(BUILD)/.deps-asan: | $(BUILD)/.deps
	$(call need_pkgs,tcl-dev)
$(BUILD)/.deps-valgrind: | $(BUILD)/.deps
	$(call need_pkgs,valgrind)
$(BUILD)/.deps-fuzz: | $(BUILD)/.deps
	$(call need_pkgs,clang libclang-rt-14-dev)

$(BUILD)/oom: test/oom/oom.c $(SOURCES) include/idem.h | $(BUILD)/.deps
	$(CC) -g -O1 $(WARN) -DSQLITE_CORE -o $@ test/oom/oom.c -lsqlite3

test-oom: $(BUILD)/oom
	$(BUILD)/oom

# ASan and UBSan; a UBSan finding stops the program (-fno-sanitize-recover).
# tclsh is not instrumented, so build/asan/tclsh (test/oom/tclsh.c) links the
# runtime in: the test processes get leak detection.  The programs the tests
# start that load idem (sqlite3, python, node, the C examples) get the
# runtime by LD_PRELOAD, without leak detection (their own leaks are not
# ours; see test/oom/tclsh.c).
ASAN       := $(BUILD)/asan
ASAN_FLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer
ASAN_RT     = $(shell $(CC) -print-file-name=libasan.so)

$(ASAN)/idem.so: $(SOURCES) include/idem.h | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(ASAN_FLAGS) $(WARN) -fPIC -shared -fvisibility=hidden -o $@ ext/idem.c

$(ASAN)/tclsh: test/oom/tclsh.c | $(BUILD)/.deps-asan
	@mkdir -p $(@D)
	$(CC) $(ASAN_FLAGS) -I/usr/include/tcl8.6 -o $@ $< -ltcl8.6

$(ASAN)/oom: test/oom/oom.c $(SOURCES) include/idem.h | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(ASAN_FLAGS) $(WARN) -DSQLITE_CORE -o $@ test/oom/oom.c -lsqlite3

test-asan: all $(ASAN)/idem.so $(ASAN)/tclsh $(ASAN)/oom
	IDEM_LIB=$(ASAN)/idem.so LD_PRELOAD=$(ASAN_RT) \
	  IDEM_WRAP="env ASAN_OPTIONS=detect_leaks=1" \
	  UBSAN_OPTIONS=print_stacktrace=1 $(ASAN)/tclsh tcl/run.tcl
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(ASAN)/oom -q

# Memcheck on each test file's tclsh (tcl/run.tcl runs each file through
# IDEM_WRAP); a memory error or a definite leak fails the file.  Tcl's own
# allocations at exit are "possibly lost" or "still reachable", not counted.
VALGRIND := valgrind -q --error-exitcode=1 --leak-check=full \
            --show-leak-kinds=definite,indirect \
            --errors-for-leak-kinds=definite,indirect

OOM_STRIDE ?= 7

test-valgrind: all $(BUILD)/oom | $(BUILD)/.deps-valgrind
	IDEM_WRAP="$(VALGRIND)" tclsh tcl/run.tcl
	$(VALGRIND) $(BUILD)/oom -q -s $(OOM_STRIDE)

# libFuzzer (clang).  The seed corpus is made from the tests' data
# (test/fuzz/corpus.tcl); new inputs go to build/fuzz-corpus/live-*, a
# finding to build/fuzz/crash-* (add it to test/fuzz/seeds/).
FUZZ_CC           ?= clang
FUZZ_FLAGS        := -g -O2 -fsanitize=fuzzer,address,undefined \
                     -fno-sanitize-recover=all
FUZZ_TARGETS      := canonical key
FUZZ_SECONDS      ?= 60
FUZZ_RUNS         ?= 200000
FUZZ_LONG_SECONDS ?= 7200
FUZZ_LONG_RUNS    ?= 10000000
FUZZ              := $(BUILD)/fuzz
CORPUS            := $(BUILD)/fuzz-corpus

$(FUZZ)/fuzz_%: test/fuzz/fuzz_%.c $(SOURCES) include/idem.h | $(BUILD)/.deps-fuzz
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -DSQLITE_CORE -o $@ $< -lsqlite3

fuzz-corpus: | $(BUILD)/.deps
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

fuzz: $(FUZZ_TARGETS:%=$(FUZZ)/fuzz_%) fuzz-corpus
	$(call run_fuzz,$(FUZZ_RUNS),$(FUZZ_SECONDS))

fuzz-long: $(FUZZ_TARGETS:%=$(FUZZ)/fuzz_%) fuzz-corpus
	$(call run_fuzz,$(FUZZ_LONG_RUNS),$(FUZZ_LONG_SECONDS))

# ---- benchmarks -------------------------------------------------------------
# make bench: test/bench/, idem against json(), a hand-made claim table and
# the stdlib Python recipe, each ratio the median of 5 interleaved runs,
# then json() against idem one document shape at a time (a few minutes;
# ~2 GB under /tmp, removed).  make bench-long: the cost of a
# claim at 10M claims against 10K (~16 GB under /tmp, a quarter of an hour
# or more).  test/bench/callgrind.sh counts instructions instead.
.PHONY: bench bench-long
$(BUILD)/bench: test/bench/bench.c test/bench/docgen.c | $(BUILD)/.deps
	$(CC) -O2 -g $(WARN) -o $@ test/bench/bench.c -lsqlite3

bench: $(BUILD)/idem.so $(BUILD)/bench
	$(BUILD)/bench --lib $(BUILD)/idem
	$(BUILD)/bench --write-docs $(BUILD)/bench-docs.db
	/usr/bin/python3 test/bench/bench_py.py --docs $(BUILD)/bench-docs.db --lib $(BUILD)/idem
	@rm -f $(BUILD)/bench-docs.db
	/usr/bin/python3 test/bench/shapes.py --lib $(BUILD)/idem

bench-long: $(BUILD)/idem.so $(BUILD)/bench
	$(BUILD)/bench --lib $(BUILD)/idem --only scale --scale 10000000

# ---- the cluster (README: "Running on a cluster") --------------------------
# idem unchanged on 3 dqlite nodes (Debian's dqlite 1.11).  go-dqlite ships
# the dqlite shell and the dqlite-demo node; golang-go and go-dqlite's Debian
# sources build the test client offline (GOPATH mode, /usr/share/gocode).
CLUSTER      := $(BUILD)/cluster
CLUSTER_PKGS := go-dqlite libdqlite-dev libraft-dev golang-go \
                golang-github-canonical-go-dqlite-dev
GO_OFFLINE   := GO111MODULE=off GOFLAGS= GOPATH=/usr/share/gocode \
                GOCACHE=$(abspath $(CLUSTER))/go-cache

.PHONY: cluster test-cluster

cluster: $(CLUSTER)/idem_preload.so $(CLUSTER)/idemcl

$(CLUSTER)/.deps: | $(BUILD)/.deps
	@mkdir -p $(CLUSTER)
	$(call need_pkgs,$(CLUSTER_PKGS))

# idem for the nodes: the same sources, built in (-DSQLITE_CORE) and
# registered by a constructor before the node starts; -DIDEM_REPLICATED
# makes idem_versioned() refuse to run in autocommit.
$(CLUSTER)/idem_preload.so: test/cluster/preload.c $(SOURCES) include/idem.h | $(CLUSTER)/.deps
	$(CC) $(CFLAGS) $(WARN) -fPIC -shared -DSQLITE_CORE -DIDEM_REPLICATED \
	  -o $@ test/cluster/preload.c ext/idem.c -lsqlite3

$(CLUSTER)/idemcl: test/cluster/idemcl.go | $(CLUSTER)/.deps
	$(GO_OFFLINE) go build -o $@ test/cluster/idemcl.go

# Three nodes on 127.0.0.1, killed by PID at the end; about 70 s.
test-cluster: cluster
	timeout 600 bash test/cluster/run.sh

clean:
	rm -rf $(BUILD)
