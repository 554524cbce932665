# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: bench bench-instructions bench-long

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
