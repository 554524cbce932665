#!/bin/sh
# SPDX-License-Identifier: MIT
# claim_txn.sh BUILD: instructions (callgrind) of one claim a transaction
# (test/bench/claim_txn.c), idem against a rowid table with a UNIQUE key,
# in WAL and DELETE mode at synchronous=FULL: the headline claim row of
# doc/performance.md.  Per claim: (the cost of 300 claims - of 100) / 200,
# so that the first transactions (the file's growth, the caches) cancel.
# The directory sync of a DELETE-mode COMMIT is system calls: callgrind
# does not count it.  So the second table is time: the median wall time
# of a claim, 300 a table, one at a time on each of three files in turn
# (claim_txn.c "time"), with idem durability=relaxed (no setting read, no
# directory sync) beside: idem less relaxed is mostly that sync in DELETE.
set -e
B=${1:-build}
cc -O2 -g -Wall -Wextra -o "$B/claim_txn" test/bench/claim_txn.c -lsqlite3
ir() {    # ir MODE TABLE N
  out="$B/claim_txn.$$.cg"
  valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect=runClaims \
    "$B/claim_txn" "$B/idem" "$1" "$2" "$3" >/dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
  rm -f "$out"
}
echo "| mode | idem, per claim | rowid table, per claim | ratio |"
echo "|---|---|---|---|"
for m in wal delete; do
  i=$(( ($(ir $m idem 300) - $(ir $m idem 100)) / 200 ))
  r=$(( ($(ir $m rowid 300) - $(ir $m rowid 100)) / 200 ))
  awk -v m=$m -v i=$i -v r=$r 'BEGIN { printf "| %s, synchronous=FULL | %d | %d | %.2fx |\n", toupper(m), i, r, i/r }'
done

echo
echo "| mode | idem, us a claim | idem durability=relaxed | rowid table | idem / rowid | idem - relaxed |"
echo "|---|---|---|---|---|---|"
for m in wal delete; do
  TMPDIR=${TMPDIR:-$B} "$B/claim_txn" "$B/idem" $m time 300 | awk -v m=$m '
    { t[$1] = $2 }
    END { printf "| %s, synchronous=FULL | %.1f | %.1f | %.1f | %.2fx | %.1f us |\n", toupper(m),
          t["idem"]/1000, t["idem-relaxed"]/1000, t["rowid"]/1000, t["idem"]/t["rowid"],
          (t["idem"]-t["idem-relaxed"])/1000 }'
done
echo "($(uptime | sed 's/.*load/load/'))"
