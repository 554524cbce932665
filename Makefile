# SPDX-License-Identifier: MIT
# idem -- the idempotency protocol as a SQLite extension.
#
#   make            build/idem.so (loadable; .dylib on macOS) and build/libidem.a
#   make demo       the sqlite3 shell runs test/demo.sql: the protocol at work
#   make test       the whole Tcl suite; ends with "N passed, N failed"
#   make help       every target, one line each
#
# Missing Debian packages are installed first when we are root with apt;
# otherwise the exact apt-get line is printed and make stops.

CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra
BUILD    := build
SOURCES  := $(wildcard ext/*.c ext/*.h) include/idem.h
DEB_PKGS := libsqlite3-dev libxxhash-dev tcl libsqlite3-tcl sqlite3 pkg-config \
            zlib1g-dev
# Debian's python3, whose sqlite3 module can load extensions (the tests
# that start Python take it from the environment too).
PYTHON3  ?= /usr/bin/python3
export PYTHON3

# The loadable extension's suffix, the one sqlite3_load_extension() adds.
SO  := $(if $(filter Darwin,$(shell uname -s)),dylib,so)
LIB := $(BUILD)/idem.$(SO)

# $(call loadable,FLAGS): build $@, a loadable extension, from the one
# translation unit (ext/idem.c includes the parts), so that every symbol but
# sqlite3_idem_init is static.  Every loadable variant is built by it.
loadable = $(CC) $(1) $(WARN) -fPIC -shared -fvisibility=hidden -o $@ ext/idem.c

.PHONY: all help deps demo test test-new test-old test-cross test-number \
        test-diff test-portable test-race test-crash test-oom test-asan \
        test-valgrind fuzz fuzz-long fuzz-corpus bench bench-instructions bench-long cluster \
        test-cluster install uninstall clean test-bindings node-env \
        dist-bindings

all: $(LIB) $(BUILD)/libidem.a  ## build/idem.so (loadable) and build/libidem.a (static)

help:  ## this list
	@echo "make TARGET [VAR=value ...], where TARGET is one of:"
	@awk -F':.*## ' '/^[a-z][a-z-]*:.*## / { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
	@echo "variables: PREFIX DESTDIR CC CFLAGS PYTHON3 N FUZZ_SECONDS FUZZ_RUNS OOM_STRIDE"

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
deps: $(BUILD)/.deps  ## install the Debian packages the build and tests need
$(BUILD)/.deps:
	@mkdir -p $(BUILD)
	$(call need_pkgs,$(DEB_PKGS))

# ---- the extension --------------------------------------------------------
# One translation unit (ext/idem.c includes the parts), so every symbol but
# sqlite3_idem_init is static, in the loadable and in the .a alike.
$(LIB): $(SOURCES) | $(BUILD)/.deps
	$(call loadable,$(CFLAGS))

$(BUILD)/idem_static.o: $(SOURCES) | $(BUILD)/.deps
	$(CC) $(CFLAGS) $(WARN) -DSQLITE_CORE -c -o $@ ext/idem.c

$(BUILD)/libidem.a: $(BUILD)/idem_static.o
	rm -f $@ && ar rcs $@ $^

# ---- the main job and the tests ------------------------------------------
# The transcript also goes to build/demo.out (test/demo.test reads it).  The
# script makes one error on purpose (a plain duplicate INSERT), so the
# shell's own exit status is not the verdict: the test is.
demo: $(LIB)  ## the sqlite3 shell runs test/demo.sql: the protocol at work
	@rm -f $(BUILD)/demo.db
	@sqlite3 $(BUILD)/demo.db < test/demo.sql 2>&1 | tee $(BUILD)/demo.out

test: all $(BUILD)/powerloss $(BUILD)/idem_utf8_test $(BUILD)/bench  ## the whole Tcl suite (test/*.test): "N passed, N failed"
	tclsh tcl/run.tcl

# The number printer's own unit test (test/idem_number_test.c): every line
# of test/data/numbers.txt, then random doubles against a brute-force search.
$(BUILD)/idem_number_test: test/idem_number_test.c $(SOURCES) | $(BUILD)/.deps
	$(CC) $(CFLAGS) $(WARN) -DIDEM_DEBUG -Iinclude -Iext -o $@ test/idem_number_test.c -lm

# The whole-input UTF-8 check's unit test (test/idem_utf8_test.c; run by
# test/utf8.test): every short byte sequence against a plain decoder.
$(BUILD)/idem_utf8_test: test/idem_utf8_test.c $(SOURCES) | $(BUILD)/.deps
	$(CC) $(CFLAGS) $(WARN) -DIDEM_DEBUG -Iinclude -Iext -o $@ test/idem_utf8_test.c -lsqlite3 -lm

test-number: $(BUILD)/idem_number_test  ## the number printer's unit test (C)
	$(BUILD)/idem_number_test test/data/numbers.txt
	$(BUILD)/idem_number_test --random 50000

# The file system that loses unsynced writes at a simulated power loss
# (doc/contract.md §12); test/durable.test runs it.
$(BUILD)/powerloss: test/powerloss/powerloss.c $(SOURCES) include/idem.h | $(BUILD)/.deps
	$(CC) -O1 -g $(WARN) -DSQLITE_CORE -o $@ test/powerloss/powerloss.c -lsqlite3

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

$(BUILD)/.deps-bindings: | $(BUILD)/.deps
	$(call need_pkgs,$(BINDINGS_PKGS))

test: $(BUILD)/.deps-bindings node-env

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

# ---- install ---------------------------------------------------------------
#   make install [PREFIX=/usr/local] [DESTDIR=/staging]    make uninstall
# $(PREFIX)/lib/idem.so is the loadable extension: load_extension('/usr/local/lib/idem'),
# or .load /usr/local/lib/idem in the shell.  libidem.a, idem.h and idem.pc
# link it statically: cc app.c $$(pkg-config --cflags --static --libs idem)
# (idem.pc requires sqlite3 privately: --static adds SQLite's libraries).
# Uninstall removes the files, then each directory that is left empty.
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PCDIR      ?= $(LIBDIR)/pkgconfig
VERSION    := $(shell sed -n 's/.*IDEM_VERSION "\(.*\)".*/\1/p' include/idem.h)

install: $(LIB) $(BUILD)/libidem.a  ## install into PREFIX (/usr/local), staged under DESTDIR
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PCDIR)
	install -m 755 $(LIB) $(DESTDIR)$(LIBDIR)/idem.$(SO)
	install -m 644 $(BUILD)/libidem.a $(DESTDIR)$(LIBDIR)/libidem.a
	install -m 644 include/idem.h $(DESTDIR)$(INCLUDEDIR)/idem.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    idem.pc.in > $(DESTDIR)$(PCDIR)/idem.pc
	chmod 644 $(DESTDIR)$(PCDIR)/idem.pc

uninstall:  ## remove what install wrote, and the directories left empty
	rm -f $(DESTDIR)$(LIBDIR)/idem.$(SO) $(DESTDIR)$(LIBDIR)/libidem.a \
	      $(DESTDIR)$(INCLUDEDIR)/idem.h $(DESTDIR)$(PCDIR)/idem.pc
	@for d in $(PCDIR) $(LIBDIR) $(INCLUDEDIR) $(PREFIX); do \
	  if [ -d "$(DESTDIR)$$d" ] && [ -z "$$(ls -A "$(DESTDIR)$$d")" ]; then \
	    rmdir "$(DESTDIR)$$d" && echo "rmdir $(DESTDIR)$$d"; \
	  fi; \
	done

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
	@echo "fetching SQLite's amalgamation from npm's better-sqlite3@12 ..."
	cd $(NEW) && rm -f better-sqlite3-*.tgz && npm pack --silent better-sqlite3@12 >/dev/null \
	  && tar xzf better-sqlite3-*.tgz --strip-components=3 \
	       package/deps/sqlite3/sqlite3.c package/deps/sqlite3/sqlite3.h \
	       package/deps/sqlite3/sqlite3ext.h \
	  && rm -f better-sqlite3-*.tgz

$(NEW)/libsqlite3.so.0: $(NEW)/sqlite3.c
	@echo "building the newest SQLite from its amalgamation (about a minute) ..."
	$(CC) -O2 -fPIC -shared -Wl,-soname,libsqlite3.so.0 $(NEW_OPTS) \
	  -o $@ $< -lm -lpthread

$(NEW)/idem.$(SO): $(SOURCES) $(NEW)/sqlite3.c
	$(call loadable,$(CFLAGS) -I$(NEW))

test-new: all $(NEW)/libsqlite3.so.0 $(NEW)/idem.$(SO)  ## the suite on the newest SQLite (3.53, from npm)
	LD_LIBRARY_PATH=$(abspath $(NEW)) IDEM_LIB=$(abspath $(NEW))/idem.$(SO) tclsh tcl/run.tcl

# ---- other architectures: the same keys on arm64, big-endian s390x, 32-bit
# i386 (x87 floating point; and again with SSE2), under qemu-user, and the
# plain-C scan (-DIDEM_JSON_PORTABLE) on x86-64, arm64 and i386
# (test/cross/cross.c says what it checks; s390x always runs it).  Each
# program is SQLite 3.53's amalgamation and ext/idem.c (-DSQLITE_CORE)
# linked statically.  The native x86-64 run writes the reference results of
# the generated documents, every other one compares with it byte for byte.
#   make test-cross                     10000 documents per architecture
#   make test-cross CROSS_DOCS=100000   (a longer run)
CROSS        := $(BUILD)/cross
CROSS_DOCS   ?= 10000
CROSS_PKGS   := gcc-aarch64-linux-gnu gcc-s390x-linux-gnu gcc-i686-linux-gnu \
                libc6-dev-arm64-cross libc6-dev-s390x-cross libc6-dev-i386-cross \
                qemu-user
# A variant: its compiler, its extra flags, the SQLite object it links
# (one per instruction set) and the emulator that runs it.
CROSS_VARIANTS := x86_64 x86_64-portable aarch64 aarch64-portable s390x \
                  i386 i386-sse2 i386-portable
XCC_x86_64           := $(CC)
XCC_x86_64-portable  := $(CC)
XCC_aarch64          := aarch64-linux-gnu-gcc
XCC_aarch64-portable := aarch64-linux-gnu-gcc
XCC_s390x            := s390x-linux-gnu-gcc
XCC_i386             := i686-linux-gnu-gcc
XCC_i386-sse2        := i686-linux-gnu-gcc
XCC_i386-portable    := i686-linux-gnu-gcc
# Off x86 (no SSE2 intrinsics), a cast to a more aligned type is an error:
# every word load goes through memcpy() (strict-alignment machines trap).
XALIGN               := -Werror=cast-align -Wcast-align=strict
XFLAGS_x86_64-portable := -DIDEM_JSON_PORTABLE $(XALIGN)
XFLAGS_aarch64       := $(XALIGN)
XFLAGS_aarch64-portable := -DIDEM_JSON_PORTABLE $(XALIGN)
XFLAGS_s390x         := $(XALIGN)
XFLAGS_i386          := $(XALIGN)
XFLAGS_i386-sse2     := -msse2
XFLAGS_i386-portable := -DIDEM_JSON_PORTABLE $(XALIGN)
XSQL_x86_64-portable := x86_64
XSQL_aarch64-portable := aarch64
XSQL_i386-sse2       := i386
XSQL_i386-portable   := i386
QEMU_aarch64         := qemu-aarch64
QEMU_aarch64-portable := qemu-aarch64
QEMU_s390x           := qemu-s390x
QEMU_i386            := qemu-i386
QEMU_i386-sse2       := qemu-i386
QEMU_i386-portable   := qemu-i386
CROSS_SQLITE_OPTS := -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION

$(CROSS)/.deps: | $(BUILD)/.deps
	@mkdir -p $(CROSS)
	$(call need_pkgs,$(CROSS_PKGS))

# xxhash.h is all of xxHash (XXH_INLINE_ALL); a cross compiler does not
# look in /usr/include, so it gets a directory with that one header.
$(CROSS)/include/xxhash.h: | $(CROSS)/.deps
	@mkdir -p $(@D)
	cp /usr/include/xxhash.h $@

# SQLite once per instruction set (-O1: it is not what is being tested).
$(CROSS)/sqlite3-%.o: $(NEW)/sqlite3.c | $(CROSS)/.deps
	$(XCC_$*) -O1 -w $(CROSS_SQLITE_OPTS) -c -o $@ $<

$(CROSS)/idem-%.o: $(SOURCES) $(NEW)/sqlite3.c $(CROSS)/include/xxhash.h
	$(XCC_$*) $(CFLAGS) $(WARN) $(XFLAGS_$*) -I$(NEW) -I$(CROSS)/include \
	  -DSQLITE_CORE -c -o $@ ext/idem.c

# The objects are kept between runs (they are not intermediate files).
.SECONDARY: $(CROSS_VARIANTS:%=$(CROSS)/idem-%.o) \
            $(CROSS_VARIANTS:%=$(CROSS)/sqlite3-%.o)
.SECONDEXPANSION:
$(CROSS)/cross-%: test/cross/cross.c $(CROSS)/idem-%.o \
                  $(CROSS)/sqlite3-$$(or $$(XSQL_$$*),$$*).o
	$(XCC_$*) $(CFLAGS) $(WARN) $(XFLAGS_$*) -I$(NEW) -static -o $@ \
	  test/cross/cross.c $(CROSS)/idem-$*.o \
	  $(CROSS)/sqlite3-$(or $(XSQL_$*),$*).o -lm

# The number printer's unit test (test/idem_number_test.c, as make
# test-number runs it) once per instruction set: x87 and big-endian
# arithmetic against its brute-force search.
CROSS_ARCHES := x86_64 aarch64 s390x i386
CROSS_RANDOM ?= 20000
$(CROSS)/number-%: test/idem_number_test.c $(SOURCES) $(NEW)/sqlite3.c | $(CROSS)/.deps
	$(XCC_$*) $(CFLAGS) $(WARN) $(XFLAGS_$*) -Iinclude -Iext -I$(NEW) -static \
	  -o $@ test/idem_number_test.c -lm

test-cross: $(CROSS_VARIANTS:%=$(CROSS)/cross-%) $(CROSS_ARCHES:%=$(CROSS)/number-%)  ## the same keys on arm64, s390x, i386 (qemu)
	CROSS_DOCS=$(CROSS_DOCS) CROSS_RANDOM=$(CROSS_RANDOM) bash test/cross/run.sh $(CROSS) \
	  $(foreach v,$(CROSS_VARIANTS),$(v):$(or $(QEMU_$(v)),native))

# ---- the oldest SQLite ------------------------------------------------------
# idem needs SQLite 3.40.0 or later: 3.40.0 is the first that keeps a
# SQLITE_VTAB_DIRECTONLY table out of a trigger's INSERT/UPDATE/DELETE (before
# it only reads were kept out: a trigger in a hostile file could write
# claims; test/schema.test schema-6.1, test/hostile.test hostile-14.1);
# idem_versioned() reads pragma_table_list (3.37.0); sqlite_schema (3.33.0),
# xShadowName (3.26.0), sqlite3_str (3.25.0), sqlite3_vtab_nochange
# (3.22.0).  ext/idem.c stops a build against older headers with an #error,
# and sqlite3_idem_init() refuses to load into an older library.
#   make test-old    the whole suite on 3.40.0 (npm's better-sqlite3@8.0.0),
#                    as test-new runs it on 3.53; then the refusals, with
#                    3.39.1 (better-sqlite3@7.6.2): the #error at compile
#                    time, and load_extension()'s error at run time
OLD       := $(BUILD)/sqlite-old
OLDER     := $(BUILD)/sqlite-older
OLD_NPM   := better-sqlite3@8.0.0
OLDER_NPM := better-sqlite3@7.6.2

# $(call npm_sqlite,DIR,PACKAGE): the amalgamation of an npm release.
define npm_sqlite
	@mkdir -p $(1)
	cd $(1) && rm -f better-sqlite3-*.tgz && npm pack --silent $(2) >/dev/null \
	  && tar xzf better-sqlite3-*.tgz --strip-components=3 \
	       package/deps/sqlite3/sqlite3.c package/deps/sqlite3/sqlite3.h \
	       package/deps/sqlite3/sqlite3ext.h \
	  && rm -f better-sqlite3-*.tgz
endef
$(OLD)/sqlite3.c:
	$(call npm_sqlite,$(OLD),$(OLD_NPM))
$(OLDER)/sqlite3.c:
	$(call npm_sqlite,$(OLDER),$(OLDER_NPM))

$(OLD)/libsqlite3.so.0 $(OLDER)/libsqlite3.so.0: %/libsqlite3.so.0: %/sqlite3.c
	$(CC) -O1 -w -fPIC -shared -Wl,-soname,libsqlite3.so.0 $(NEW_OPTS) \
	  -o $@ $< -lm -lpthread

$(OLD)/idem.$(SO): $(SOURCES) $(OLD)/sqlite3.c
	$(call loadable,$(CFLAGS) -I$(OLD))

test-old: all $(OLD)/libsqlite3.so.0 $(OLD)/idem.$(SO) $(OLDER)/libsqlite3.so.0  ## the suite on the oldest SQLite (3.40.0)
	@echo "older headers (3.39.1): the build must stop with idem's #error"
	@if $(CC) -I$(OLDER) -fsyntax-only ext/idem.c > $(OLDER)/build.log 2>&1; then \
	  echo "FAILED: ext/idem.c compiled against SQLite 3.39.1"; exit 1; fi
	@grep -q 'error: #error "idem needs SQLite 3.40.0 or later' $(OLDER)/build.log \
	  || { cat $(OLDER)/build.log; echo "FAILED: not idem's #error"; exit 1; }
	@grep -m1 '#error' $(OLDER)/build.log
	@echo "older library (3.39.1): load_extension() must refuse"
	LD_LIBRARY_PATH=$(abspath $(OLDER)) tclsh test/old/refuse.tcl $(abspath $(LIB))
	LD_LIBRARY_PATH=$(abspath $(OLD)) IDEM_LIB=$(abspath $(OLD))/idem.$(SO) tclsh tcl/run.tcl

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
	$(call loadable,$(CFLAGS) -DIDEM_JSON_PORTABLE)
$(NOAVX2)/idem.$(SO): $(SOURCES) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(call loadable,$(CFLAGS) -DIDEM_NO_AVX2)

test-portable: $(PORTABLE)/idem.$(SO) $(NOAVX2)/idem.$(SO) $(BUILD)/idem_utf8_test  ## the canonicalizer without its word, SSE2 and AVX2 scans
	IDEM_LIB=$(abspath $(PORTABLE))/idem.$(SO) tclsh tcl/run.tcl \
	  test/canonical.test test/key.test test/numbers.test test/hostile.test
	npm install --silent --prefix test/diff --no-package-lock --no-audit --no-fund
	node test/diff/gen.js 20000 - | IDEM_LIB=$(abspath $(PORTABLE))/idem.$(SO) \
	  tclsh test/diff/check.tcl -
	IDEM_LIB=$(abspath $(NOAVX2))/idem.$(SO) tclsh tcl/run.tcl \
	  test/canonical.test test/key.test test/hostile.test test/utf8.test

# ---- reliability: processes killed at random moments, and at fixed crash
# points (test/reliability/), with $(PYTHON3).
test-race: $(LIB)  ## 8 processes SIGKILLed at random moments
	$(PYTHON3) test/reliability/race.py

test-crash: $(LIB)  ## processes killed at every step of both recipes
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
$(BUILD)/.deps-asan: | $(BUILD)/.deps
	$(call need_pkgs,tcl-dev)
$(BUILD)/.deps-valgrind: | $(BUILD)/.deps
	$(call need_pkgs,valgrind)
$(BUILD)/.deps-fuzz: | $(BUILD)/.deps
	$(call need_pkgs,clang libclang-rt-14-dev)

$(BUILD)/oom: test/oom/oom.c $(SOURCES) | $(BUILD)/.deps
	$(CC) -g -O1 $(WARN) -DSQLITE_CORE -o $@ test/oom/oom.c -lsqlite3

test-oom: $(BUILD)/oom  ## every allocation failing in turn (about 2 minutes)
	$(BUILD)/oom

# ASan and UBSan; a UBSan finding stops the program (-fno-sanitize-recover).
# tclsh is not instrumented, so build/asan/tclsh (test/oom/tclsh.c) links the
# runtime in: the test processes get leak detection.  The programs the tests
# start that load idem (sqlite3, python, node, the C examples) get the
# runtime by LD_PRELOAD, without leak detection (their own leaks are not
# ours; see test/oom/tclsh.c).
ASAN       := $(BUILD)/asan
ASAN_FLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer -DIDEM_DEBUG
ASAN_RT     = $(shell $(CC) -print-file-name=libasan.so)

$(ASAN)/idem.$(SO): $(SOURCES) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(call loadable,$(ASAN_FLAGS))

$(ASAN)/tclsh: test/oom/tclsh.c | $(BUILD)/.deps-asan
	@mkdir -p $(@D)
	$(CC) $(ASAN_FLAGS) -I/usr/include/tcl8.6 -o $@ $< -ltcl8.6

$(ASAN)/oom: test/oom/oom.c $(SOURCES) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(CC) $(ASAN_FLAGS) $(WARN) -DSQLITE_CORE -o $@ test/oom/oom.c -lsqlite3

test-asan: all $(ASAN)/idem.$(SO) $(ASAN)/tclsh $(ASAN)/oom  ## the suite and the fault driver under ASan + UBSan
	IDEM_LIB=$(ASAN)/idem.$(SO) LD_PRELOAD=$(ASAN_RT) \
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

test-valgrind: all $(BUILD)/oom | $(BUILD)/.deps-valgrind  ## the suite under valgrind memcheck (long)
	IDEM_WRAP="$(VALGRIND)" tclsh tcl/run.tcl
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

$(FUZZ)/fuzz_%: test/fuzz/fuzz_%.c $(SOURCES) | $(BUILD)/.deps-fuzz
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -DSQLITE_CORE -o $@ $< -lsqlite3

fuzz-corpus: | $(BUILD)/.deps  ## the fuzz targets' seed corpus, from the tests' data
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

# ---- benchmarks -------------------------------------------------------------
# make bench: test/bench/, idem against json(), a hand-made claim table and
# the stdlib Python recipe, each ratio the median of 5 interleaved runs,
# then json() against idem one document shape at a time (a few minutes;
# ~2 GB under /tmp, removed).  make bench-long: the cost of a
# claim at 10M claims against 10K (~16 GB under /tmp, a quarter of an hour
# or more).  test/bench/callgrind.sh counts instructions instead.
$(BUILD)/bench: test/bench/bench.c test/bench/docgen.c | $(BUILD)/.deps
	$(CC) -O2 -g $(WARN) -o $@ test/bench/bench.c -lsqlite3

bench: $(LIB) $(BUILD)/bench  ## the performance tables of doc/performance.md (minutes)
	$(BUILD)/bench --lib $(BUILD)/idem
	$(BUILD)/bench --write-docs $(BUILD)/bench-docs.db
	$(PYTHON3) test/bench/bench_py.py --docs $(BUILD)/bench-docs.db --lib $(BUILD)/idem
	@rm -f $(BUILD)/bench-docs.db
	$(PYTHON3) test/bench/shapes.py --lib $(BUILD)/idem

# make bench-instructions: the same in instructions (valgrind's callgrind,
# steady on a busy machine; a few minutes): test/bench/callgrind.sh's
# figures, then shapes.py --instructions.  Where simdjson is installed
# (Debian's libsimdjson-dev; optional, never a dependency) the canonicalizer
# called from C is also set against simdjson's parse (test/bench/anchor.cpp).
$(BUILD)/anchor: test/bench/anchor.cpp test/bench/anchor_idem.c $(SOURCES) | $(BUILD)/.deps
	$(CC) $(CFLAGS) $(WARN) -Iinclude -Iext -c -o $(BUILD)/anchor_idem.o test/bench/anchor_idem.c
	$(CXX) -O2 -g $(WARN) -o $@ test/bench/anchor.cpp $(BUILD)/anchor_idem.o \
	  -lsimdjson -lsqlite3 -lm

bench-instructions: $(LIB) $(BUILD)/bench $(BUILD)/.deps-valgrind  ## make bench's figures in instructions (callgrind), per figure and per shape
	@if [ -f /usr/include/simdjson.h ]; then $(MAKE) --no-print-directory $(BUILD)/anchor; \
	else echo "(no simdjson: apt-get install libsimdjson-dev to add it as an anchor)"; fi
	test/bench/callgrind.sh $(BUILD)/bench $(BUILD)/idem
	$(BUILD)/bench --write-docs $(BUILD)/bench-docs.db
	$(PYTHON3) test/bench/shapes.py --instructions --lib $(BUILD)/idem \
	  --corpus $(BUILD)/bench-docs.db
	@rm -f $(BUILD)/bench-docs.db

bench-long: $(LIB) $(BUILD)/bench  ## a claim at 10M claims against 10K (~16 GB, long)
	$(BUILD)/bench --lib $(BUILD)/idem --only scale --scale 10000000

# ---- the cluster (doc/cluster.md) -----------------------------------------
# idem unchanged on 3 dqlite nodes (Debian's dqlite 1.11).  go-dqlite ships
# the dqlite shell and the dqlite-demo node; golang-go and go-dqlite's Debian
# sources build the test client offline (GOPATH mode, /usr/share/gocode).
CLUSTER      := $(BUILD)/cluster
CLUSTER_PKGS := go-dqlite libdqlite-dev libraft-dev golang-go \
                golang-github-canonical-go-dqlite-dev
GO_OFFLINE   := GO111MODULE=off GOFLAGS= GOPATH=/usr/share/gocode \
                GOCACHE=$(abspath $(CLUSTER))/go-cache

cluster: $(CLUSTER)/idem_preload.so $(CLUSTER)/idemcl  ## idem for dqlite nodes, and the test client

$(CLUSTER)/.deps: | $(BUILD)/.deps
	@mkdir -p $(CLUSTER)
	$(call need_pkgs,$(CLUSTER_PKGS))

# idem for the nodes: the same sources, built in (-DSQLITE_CORE) and
# registered by a constructor before the node starts; -DIDEM_REPLICATED
# makes idem_versioned() refuse to run in autocommit.
$(CLUSTER)/idem_preload.so: test/cluster/preload.c $(SOURCES) | $(CLUSTER)/.deps
	$(CC) $(CFLAGS) $(WARN) -fPIC -shared -DSQLITE_CORE -DIDEM_REPLICATED \
	  -o $@ test/cluster/preload.c ext/idem.c -lsqlite3

$(CLUSTER)/idemcl: test/cluster/idemcl.go | $(CLUSTER)/.deps
	$(GO_OFFLINE) go build -o $@ test/cluster/idemcl.go

# Three nodes on 127.0.0.1, killed by PID at the end; about 70 s.
test-cluster: cluster  ## three dqlite nodes: replication, races, leader kills
	timeout 600 bash test/cluster/run.sh

clean:  ## remove build/
	rm -rf $(BUILD)
