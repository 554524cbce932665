#!/bin/sh
# SPDX-License-Identifier: MIT
# replay_layout.sh BUILD: instructions (callgrind) of a replay, a record
# and a claim, one at a time, in plain SQL on eight layouts of the claim
# table (test/bench/replay_layout.c says which; LAYOUTS="f4 rk" runs some),
# WAL and DELETE mode at synchronous=FULL; on the layouts whose rid is
# made of the key (rk*), also a replay through the overflow and one that
# does not check the stored key.  Per operation: (the cost of 300 - of 100) / 200, as
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
echo "| layout | mode | replay | record | claim | replay, the home held by another key | replay, the key not checked |"
echo "|---|---|---:|---:|---:|---:|---:|"
for m in wal delete; do
  for l in ${LAYOUTS:-f4 cov wr split rk rkf rkc rkfc}; do
    row=""
    case $l in rk*) ops="0 1 2 3 4" ;; *) ops="0 1 2" ;; esac
    for op in $ops; do
      row="$row | $(( ($(ir $l $m $op 300) - $(ir $l $m $op 100)) / 200 ))"
    done
    case $l in rk*) ;; *) row="$row | - | -" ;; esac
    echo "| $l | $m$row |"
  done
done
