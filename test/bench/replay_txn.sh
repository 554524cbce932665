#!/bin/sh
# SPDX-License-Identifier: MIT
# replay_txn.sh BUILD: instructions (callgrind) of one replay by key in
# autocommit and of one record a transaction (BEGIN; UPDATE ... SET
# status='done' ... AND owner=?; COMMIT), as a tool runner makes them
# (test/bench/replay_txn.c), idem against a rowid table with a UNIQUE key,
# in WAL and DELETE mode at synchronous=FULL: claim_txn.sh's sibling, run
# with it by make bench-claim-txn.  Per operation: (the cost of 300 - of
# 100) / 200, so that the first ones (the caches) cancel.
set -e
B=${1:-build}
cc -O2 -g -Wall -Wextra -o "$B/replay_txn" test/bench/replay_txn.c -lsqlite3
ir() {    # ir MODE TABLE WHAT N
  out="$B/replay_txn.$$.cg"
  case $3 in replay) fn=runReplays ;; *) fn=runRecords ;; esac
  valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect=$fn \
    "$B/replay_txn" "$B/idem" "$1" "$2" "$3" "$4" >/dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
  rm -f "$out"
}
echo "| operation | mode | idem, per operation | rowid table, per operation | ratio | target |"
echo "|---|---|---|---|---|---|"
for w in replay record; do
  for m in wal delete; do
    i=$(( ($(ir $m idem $w 300) - $(ir $m idem $w 100)) / 200 ))
    r=$(( ($(ir $m rowid $w 300) - $(ir $m rowid $w 100)) / 200 ))
    case $w in
      replay) d="replay by key, autocommit"; t=1.3 ;;
      *)      d="record done, one a transaction"; t=1.5 ;;
    esac
    awk -v d="$d" -v m=$m -v i=$i -v r=$r -v t=$t 'BEGIN {
      printf "| %s | %s, synchronous=FULL | %d | %d | %.2fx | <= %.1fx: %s |\n",
        d, toupper(m), i, r, i/r, t, (i/r <= t ? "PASS" : "MISS") }'
  done
done
