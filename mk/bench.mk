# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: bench bench-instructions bench-long bench-claim-txn

# ---- benchmarks -------------------------------------------------------------
# make bench: first the headline rows (make bench-claim-txn: a claim, a
# replay and a record one a transaction against a rowid table, WAL and
# DELETE, in instructions and time); then test/bench/, idem against
# json(), a hand-made claim table
# (WITHOUT ROWID, and a rowid table with a UNIQUE key) and the stdlib
# Python recipe, each ratio the median of 5 interleaved runs; the rowid
# table's own cost at 1M claims against 10K; the functions and the claims
# on three more corpora (shapes.py --write-corpora: GitHub-like events,
# numeric, twitter-like); then json() against idem by corpus, by document
# shape and by size (shapes.py), drawn as doc/img/performance-time.svg
# (gnuplot) -- ~10 minutes; ~2 GB under /tmp, removed.  make bench-long:
# the cost of a claim at 10M claims against 10K (~16 GB under /tmp, a
# quarter of an hour or more).  test/bench/callgrind.sh counts
# instructions instead.
BENCH_PKGS := gnuplot-nox valgrind
$(BUILD)/.deps-bench: | $(BUILD)/.deps
	$(call need_pkgs,$(BENCH_PKGS))

$(BUILD)/bench: test/bench/bench.c test/bench/docgen.c | $(BUILD)/.deps
	$(CC) -O2 -g $(WARN) -o $@ test/bench/bench.c -lsqlite3

bench: $(LIB) $(BUILD)/bench $(BUILD)/.deps-bench  ## the performance tables of doc/performance.md, and its time chart (minutes)
	test/bench/claim_txn.sh $(BUILD)
	test/bench/replay_txn.sh $(BUILD)
	$(BUILD)/bench --lib $(BUILD)/idem --tables idem,hand,rowid
	$(BUILD)/bench --lib $(BUILD)/idem --only scale --scale-table rowid
	$(PYTHON3) test/bench/shapes.py --write-corpora $(BUILD)/corpora --docs 20000 >/dev/null
	for c in github numeric twitter; do \
	  $(BUILD)/bench --lib $(BUILD)/idem --docs-file $(BUILD)/corpora/$$c.db \
	    --only key,canonical,calls --claims 20000 --tables idem,hand,rowid || exit 1; \
	done
	$(BUILD)/bench --write-docs $(BUILD)/bench-docs.db
	$(PYTHON3) test/bench/bench_py.py --docs $(BUILD)/bench-docs.db --lib $(BUILD)/idem
	$(PYTHON3) test/bench/shapes.py --lib $(BUILD)/idem \
	  --corpus $(BUILD)/bench-docs.db --data $(BUILD)/bench-time
	gnuplot -e "data='$(BUILD)/bench-time'; out='doc/img/performance-time.svg'; what='time'" \
	  test/bench/chart.gp
	@rm -f $(BUILD)/bench-docs.db

# make bench-instructions: the same in instructions (valgrind's callgrind,
# steady on a busy machine; a few minutes): test/bench/callgrind.sh's
# figures, then shapes.py --instructions, drawn as
# doc/img/performance-instructions.svg.  Where simdjson is installed
# (Debian's libsimdjson-dev; optional, never a dependency) the canonicalizer
# called from C is also set against simdjson's parse (test/bench/anchor.cpp).
$(BUILD)/anchor: test/bench/anchor.cpp test/bench/anchor_idem.c $(SOURCES) | $(BUILD)/.deps
	$(CC) $(CFLAGS) $(WARN) -Iinclude -Iext -c -o $(BUILD)/anchor_idem.o test/bench/anchor_idem.c
	$(CXX) -O2 -g $(WARN) -o $@ test/bench/anchor.cpp $(BUILD)/anchor_idem.o \
	  -lsimdjson -lsqlite3 -lm

bench-instructions: $(LIB) $(BUILD)/bench $(BUILD)/.deps-bench  ## make bench's figures in instructions (callgrind), per figure, corpus, shape and size
	@if [ -f /usr/include/simdjson.h ]; then $(MAKE) --no-print-directory $(BUILD)/anchor; \
	else echo "(no simdjson: apt-get install libsimdjson-dev to add it as an anchor)"; fi
	$(PYTHON3) test/bench/shapes.py --write-corpora $(BUILD)/corpora >/dev/null
	test/bench/callgrind.sh $(BUILD)/bench $(BUILD)/idem $(BUILD)/callgrind \
	  "GitHub-like events=$(BUILD)/corpora/github.db" \
	  "numeric=$(BUILD)/corpora/numeric.db" \
	  "twitter-like=$(BUILD)/corpora/twitter.db"
	$(BUILD)/bench --write-docs $(BUILD)/bench-docs.db
	$(PYTHON3) test/bench/shapes.py --instructions --lib $(BUILD)/idem \
	  --corpus $(BUILD)/bench-docs.db --data $(BUILD)/bench-instructions
	gnuplot -e "data='$(BUILD)/bench-instructions'; out='doc/img/performance-instructions.svg'; what='instructions'" \
	  test/bench/chart.gp
	@rm -f $(BUILD)/bench-docs.db

# make bench-claim-txn: one claim a transaction (BEGIN; INSERT; COMMIT,
# prepared), idem against the rowid table, WAL and DELETE, in instructions
# (test/bench/claim_txn.sh; a minute): doc/performance.md's headline row;
# then a replay by key in autocommit and a record a transaction
# (test/bench/replay_txn.sh; half a minute).
bench-claim-txn: $(LIB) $(BUILD)/.deps-bench  ## one claim, replay, record a transaction against a rowid table, WAL and DELETE (callgrind)
	test/bench/claim_txn.sh $(BUILD)
	test/bench/replay_txn.sh $(BUILD)

bench-long: $(LIB) $(BUILD)/bench  ## a claim at 10M claims against 10K (~16 GB, long)
	$(BUILD)/bench --lib $(BUILD)/idem --only scale --scale 10000000
