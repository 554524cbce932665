# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: test-cross

# ---- other architectures: the same keys on arm64, big-endian s390x, 32-bit
# i386 (x87 floating point; and again with SSE2), under qemu-user, and the
# plain-C scan (-DIDEM_JSON_PORTABLE) on x86-64, arm64 and i386
# (test/cross/cross.c says what it checks; s390x always runs it).  Each
# program is SQLite 3.53's amalgamation and ext/idem.c (-DSQLITE_CORE, and
# -DSQLITE_THREADSAFE=0 as SQLite's: no mutex functions to link)
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
# idem as it is built (CFLAGS), but without -g: the same code, and a quarter
# less of each compile (idem-*.o: 5.7 s of CPU each, 4.3 s without, eight
# of them); no one debugs these programs under qemu.
XCFLAGS = $(NOG_CFLAGS)

$(CROSS)/.deps: | $(BUILD)/.deps
	@mkdir -p $(CROSS)
	$(call need_pkgs,$(CROSS_PKGS))

# xxhash.h is all of xxHash (XXH_INLINE_ALL); a cross compiler does not
# look in /usr/include, so it gets a directory with that one header.
$(CROSS)/include/xxhash.h: | $(CROSS)/.deps
	@mkdir -p $(@D)
	cp /usr/include/xxhash.h $@

# SQLite once per instruction set (-O0: it is not what is being tested, and
# unoptimized it compiles in a third of the time; the programs spend their
# time in idem's code), and once per machine (mk/cached.sh).
$(CROSS)/sqlite3-%.o: $(NEW)/sqlite3.c | $(CROSS)/.deps
	$(CACHED) $@ $(XCC_$*) -O0 -w $(CROSS_SQLITE_OPTS) -c -o $@ $<

$(CROSS)/idem-%.o: $(SOURCES) $(NEW)/sqlite3.c $(CROSS)/include/xxhash.h
	$(XCC_$*) $(XCFLAGS) $(WARN) $(XFLAGS_$*) -I$(NEW) -I$(CROSS)/include \
	  -DSQLITE_CORE -DSQLITE_THREADSAFE=0 -c -o $@ ext/idem.c

# The objects are kept between runs (they are not intermediate files).
.SECONDARY: $(CROSS_VARIANTS:%=$(CROSS)/idem-%.o) \
            $(CROSS_VARIANTS:%=$(CROSS)/sqlite3-%.o)
.SECONDEXPANSION:
$(CROSS)/cross-%: test/cross/cross.c $(CROSS)/idem-%.o \
                  $(CROSS)/sqlite3-$$(or $$(XSQL_$$*),$$*).o
	$(XCC_$*) $(XCFLAGS) $(WARN) $(XFLAGS_$*) -I$(NEW) -static -o $@ \
	  test/cross/cross.c $(CROSS)/idem-$*.o \
	  $(CROSS)/sqlite3-$(or $(XSQL_$*),$*).o -lm

# The number printer's unit test (test/idem_number_test.c, as make
# test-number runs it) once per other instruction set: x87 and big-endian
# arithmetic against its brute-force search.  Not x86-64's: make
# test-number runs the same program there on the same inputs (every line
# of numbers.txt, and 50 000 random doubles, of which these 20 000 are the
# first), with the same compiler and flags (and assertions on).
CROSS_ARCHES := aarch64 s390x i386
CROSS_RANDOM ?= 20000
$(CROSS)/number-%: test/idem_number_test.c $(SOURCES) $(NEW)/sqlite3.c | $(CROSS)/.deps
	$(XCC_$*) $(XCFLAGS) $(WARN) $(XFLAGS_$*) -Iinclude -Iext -I$(NEW) -static \
	  -o $@ test/idem_number_test.c -lm

# The random doubles' brute-force digits (glibc's exact printing and
# reading, the same on every machine; half of each number-ARCH's run under
# qemu: 28 -> 17 s of CPU for the three) written once by the native
# program, read by the others (test/idem_number_test.c, refDigits()).
$(CROSS)/random-ref.txt: $(BUILD)/idem_number_test | $(CROSS)/.deps
	$(BUILD)/idem_number_test --random $(CROSS_RANDOM) --write-ref $@.tmp > /dev/null
	mv -f $@.tmp $@

test-cross: $(CROSS_VARIANTS:%=$(CROSS)/cross-%) $(CROSS_ARCHES:%=$(CROSS)/number-%) $(NUMBERS) $(CROSS)/random-ref.txt  ## the same keys on arm64, s390x, i386 (qemu)
	CROSS_DOCS=$(CROSS_DOCS) CROSS_RANDOM=$(CROSS_RANDOM) bash test/cross/run.sh $(CROSS) \
	  $(foreach v,$(CROSS_VARIANTS),$(v):$(or $(QEMU_$(v)),native))
