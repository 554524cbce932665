# SPDX-License-Identifier: MIT
# idem -- the idempotency protocol as a SQLite extension.
#
#   make            build/idem.so (loadable; .dylib on macOS) and build/libidem.a
#   make demo       the sqlite3 shell runs test/demo.sql: the protocol at work
#   make test       the whole Tcl suite; ends with "N passed, N failed"
#   make help       every target, one line each
#
# Plain make needs only a C compiler and the SQLite and xxHash headers.  The
# targets that need more (demo, test and the long targets in mk/) install
# the missing Debian packages first when we are root with apt; otherwise
# they print the exact apt-get line and stop.  The long targets live in
# mk/*.mk, one file each; make help lists them all.

CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra
BUILD    := build
SOURCES  := $(wildcard ext/*.c ext/*.h) include/idem.h
DEB_PKGS := libsqlite3-dev libxxhash-dev tcl libsqlite3-tcl sqlite3 pkg-config \
            zlib1g-dev nodejs
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
# The loadables built only for a suite to run on them (SQLite 3.53's and
# 3.40.0's headers, the portable and no-AVX2 scans; test-cross's objects
# too): CFLAGS without -g.  The same code (-g changes no instruction: the
# same disassembly, checked), a fifth less of each compile (6.3 s of CPU
# instead of 8); no one debugs them (the ASan builds keep theirs).
NOG_CFLAGS = $(filter-out -g,$(CFLAGS))

.PHONY: all help deps demo test test-number install uninstall clean

all: $(LIB) $(BUILD)/libidem.a  ## build/idem.so (loadable) and build/libidem.a (static)

help:  ## this list
	@echo "make TARGET [VAR=value ...], where TARGET is one of:"
	@awk -F':.*## ' '/^[a-z][a-z-]*:.*## / { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
	@echo "variables: PREFIX DESTDIR CC CFLAGS POWERLOSS_CFLAGS UNIT_CFLAGS TAKE_CFLAGS PYTHON3 N FUZZ_SECONDS FUZZ_RUNS OOM_STRIDE OOM_FLAGS ASAN_OOM_FLAGS IDEM_JOBS"

# ---- dependencies ---------------------------------------------------------
# $(call need_pkgs,PKGS): install the Debian packages PKGS that are missing
# (as root, with apt), or print the apt-get line and fail.
define need_pkgs
	@if ! command -v dpkg-query >/dev/null; then \
	  echo "(no dpkg here: not checking for the Debian packages $(strip $(1)))"; \
	  mkdir -p $(@D); touch $@; exit 0; fi; \
	missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' \
	    || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing:$$missing"; \
	    flock -w 1800 $(APT_LOCK) sh -c "apt-get update -qq && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null" \
	      || exit 1; \
	  else \
	    echo "this target needs these Debian packages; install them with:"; \
	    echo "  sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi
	@touch $@
endef
# Targets that run at once (make -j, several clones) take turns at apt.
APT_LOCK ?= /tmp/idem-apt.lock
deps: $(BUILD)/.deps  ## install the Debian packages the build and tests need
$(BUILD)/.deps:
	@mkdir -p $(BUILD)
	$(call need_pkgs,$(DEB_PKGS))

# ---- the extension --------------------------------------------------------
# One translation unit (ext/idem.c includes the parts), so every symbol but
# sqlite3_idem_init is static, in the loadable and in the .a alike.
$(LIB): $(SOURCES)
	@mkdir -p $(@D)
	$(call loadable,$(CFLAGS))

$(BUILD)/idem_static.o: $(SOURCES)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -DSQLITE_CORE -c -o $@ ext/idem.c

$(BUILD)/libidem.a: $(BUILD)/idem_static.o
	rm -f $@ && ar rcs $@ $^

# ---- the main job and the tests ------------------------------------------
# The transcript also goes to build/demo.out (test/demo.test reads it).  The
# script makes one error on purpose (a plain duplicate INSERT), so the
# shell's own exit status is not the verdict: the test is.
demo: $(BUILD)/.deps $(LIB)  ## the sqlite3 shell runs test/demo.sql: the protocol at work
	@rm -f $(BUILD)/demo.db
	@sqlite3 $(BUILD)/demo.db < test/demo.sql 2>&1 | tee $(BUILD)/demo.out

# What the suite needs is built as many at a time as there are cores (the
# Debian packages first): the extension, the test programs, the number
# vectors and build/node-env (npm compiles better-sqlite3 meanwhile).
NPROC      := $(shell nproc 2>/dev/null || echo 1)
TEST_BUILD  = all $(BUILD)/powerloss $(BUILD)/idem_utf8_test $(BUILD)/idem_canonical_test $(BUILD)/guard $(BUILD)/bench $(NUMBERS) \
              $(VARIANT)/nopext.so $(VARIANT)/take.so
test: $(BUILD)/.deps  ## the whole Tcl suite (test/*.test): "N passed, N failed"
	@$(MAKE) --no-print-directory -j$(NPROC) $(TEST_BUILD)
	tclsh tcl/run.tcl

# The number vectors: 100 926 literals with what Node prints for each
# (String(Number(x))), made by test/data/gen_numbers.js from a fixed seed,
# the same bytes every time (half a second; Node is the reference printer,
# so the file is made here rather than stored).
NUMBERS := $(BUILD)/numbers.txt
$(NUMBERS): test/data/gen_numbers.js | $(BUILD)/.deps
	node test/data/gen_numbers.js $@ >/dev/null

# The number printer's own unit test (test/idem_number_test.c): every line
# of build/numbers.txt, then random doubles against a brute-force search.
$(BUILD)/idem_number_test: test/idem_number_test.c $(SOURCES) | $(BUILD)/.deps
	$(CC) $(CFLAGS) $(WARN) -DIDEM_DEBUG -Iinclude -Iext -o $@ test/idem_number_test.c -lm

# The canonicalizer's inner steps, called directly (test/idem_canonical_test.c;
# run by test/inner.test): what they do when another step is wrong.
# UNIT_CFLAGS: the two unit-test programs that compile all of idem into
# themselves (this one and build/idem_utf8_test) are built -O1 without -g:
# half the compile of -O2 -g (about 4 s of CPU each instead of 8-10), and
# they run no slower (idem_utf8_test 3.8 s against 4.2 s); what they check
# is the steps' logic, not the optimizer's (the loadable, -O2, runs the
# suite).  test/mutation/run.py builds them -O0, as its mutants.
UNIT_CFLAGS ?= -O1
$(BUILD)/idem_canonical_test: test/idem_canonical_test.c $(SOURCES) | $(BUILD)/.deps
	$(CC) $(UNIT_CFLAGS) $(WARN) -DIDEM_DEBUG -Iinclude -Iext -o $@ test/idem_canonical_test.c -lsqlite3 -lm

# The canonicalizer built otherwise, loaded by test/canonical.test beside
# the library under test: without PEXT (canonical-13.23.1, 13.26.1) and
# with IDEM_JSON_TAKE_MIN=2048 (13.27.1).  Made here once rather than by
# each run of the file (the suite runs it five times in .ci/run: 7 s of
# CPU each), with the flags the file gave them: take.so -O1 (TAKE_CFLAGS),
# the one optimized build where the taken keys' pass runs (13.27.1; -O0
# under make test-asan-suite, where the file builds its own).
# test/mutation/run.py builds it -O0, as its mutants: its copies make it
# again for each mutant that reaches 13.27.1 (1.4 s of CPU with its clang
# instead of 6).
TAKE_CFLAGS ?= -O1
VARIANT := $(BUILD)/variant
$(VARIANT)/nopext.so: $(SOURCES) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(call loadable,-O0 -DIDEM_NO_PEXT -Iinclude)
$(VARIANT)/take.so: $(SOURCES) | $(BUILD)/.deps
	@mkdir -p $(@D)
	$(call loadable,$(TAKE_CFLAGS) -DIDEM_JSON_TAKE_MIN=2048 -Iinclude)

# The whole-input UTF-8 check's unit test (test/idem_utf8_test.c; run by
# test/utf8.test): every short byte sequence against a plain decoder.
$(BUILD)/idem_utf8_test: test/idem_utf8_test.c $(SOURCES) | $(BUILD)/.deps
	$(CC) $(UNIT_CFLAGS) $(WARN) -DIDEM_DEBUG -Iinclude -Iext -o $@ test/idem_utf8_test.c -lsqlite3 -lm

# Reads past the end of an input (test/guard/guard.c; run by test/guard.test):
# inputs at the end of a page that a PROT_NONE page follows.  -O0: it builds
# in a second, and a read past the end is the source's, not the optimizer's.
$(BUILD)/guard: test/guard/guard.c $(SOURCES) | $(BUILD)/.deps
	$(CC) -O0 -g $(WARN) -DIDEM_DEBUG -Iinclude -Iext -o $@ test/guard/guard.c -lsqlite3 -lm

test-number: $(BUILD)/idem_number_test $(NUMBERS)  ## the number printer's unit test (C)
	$(BUILD)/idem_number_test $(NUMBERS)
	$(BUILD)/idem_number_test --random 50000

# The file system that loses unsynced writes at a simulated power loss
# (doc/contract.md §12); test/durable.test runs it.  Its own flags, not
# CFLAGS (-O1 for make test-powerloss's minutes); test/mutation/run.py
# builds it once a mutant and runs it briefly, so there -O0 (half the
# compile, the same test time).
POWERLOSS_CFLAGS ?= -O1 -g
$(BUILD)/powerloss: test/powerloss/powerloss.c $(SOURCES) include/idem.h | $(BUILD)/.deps
	$(CC) $(POWERLOSS_CFLAGS) $(WARN) -DSQLITE_CORE -o $@ test/powerloss/powerloss.c -lsqlite3
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

clean:  ## remove build/
	rm -rf $(BUILD)

# ---- the long targets, one file each (mk/); sqlite.mk first: cross.mk
# builds on its amalgamation ------------------------------------------------
include mk/sqlite.mk mk/bindings.mk mk/checks.mk mk/sanitize.mk mk/cross.mk \
        mk/bench.mk mk/cluster.mk mk/frameworks.mk mk/ops.mk
