#!/bin/sh
# SPDX-License-Identifier: MIT
# replay_layout.sh BUILD: instructions (callgrind) of a replay, a record
# and a claim, one at a time, in plain SQL on four layouts of the claim
# table (test/bench/replay_layout.c says which), WAL and DELETE mode at
# synchronous=FULL.  Per operation: (the cost of 300 - of 100) / 200, as
# replay_txn.sh counts.  Not part of make bench: the measure behind a
# choice of doc/performance.md ("Replay and record").
set -e
B=${1:-build}
mkdir -p "$B"
cc -O2 -g -Wall -Wextra -o "$B/replay_layout" test/bench/replay_layout.c -lsqlite3
ir() {    # ir LAYOUT MODE OP N
  out="$B/replay_layout.$$.cg"
  valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect=runOps \
    "$B/replay_layout" "$1" "$2" "$3" "$4" >/dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
  rm -f "$out"
}
echo "| layout | mode | replay | record | claim |"
echo "|---|---|---:|---:|---:|"
for m in wal delete; do
  for l in f4 cov wr split; do
    row=""
    for op in 0 1 2; do
      row="$row | $(( ($(ir $l $m $op 300) - $(ir $l $m $op 100)) / 200 ))"
    done
    echo "| $l | $m$row |"
  done
done
