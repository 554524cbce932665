#!/bin/sh
# SPDX-License-Identifier: MIT
# retain_cost.sh -- what lazy retention (doc/contract.md §10) costs a claim,
# in instructions (valgrind's callgrind), with the sqlite3 shell.
#
#   test/bench/retain_cost.sh LIB [CLAIMS]
#
# LIB is the extension (build/idem).  Three tables, each holding 2*CLAIMS
# decided calls written straight into its shadow tables:
#
#   plain      no retain
#   retained   retain='30 days', none of them expired: the first claim's
#              sweep finds nothing and notes the earliest expiry; the
#              claims before it skip the sweep
#   expired    retain='30 days', all of them expired: each claim deletes
#              2 expired calls (the most a claim deletes)
#
# Each table then takes CLAIMS new claims in one transaction.  A figure is
# (instructions of the run with the claims - the run without them) / CLAIMS,
# so the setup cancels out; the ratio is against plain.
set -e
LIB=${1:?usage: retain_cost.sh LIB [CLAIMS]}
C=${2:-2000}
OUT=$(mktemp -d /tmp/idem-retain.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

setup() {     # setup OPTION EXPIRES: the table and its 2*C decided calls
  cat <<SQL
.load $LIB
CREATE VIRTUAL TABLE calls USING idem$1;
BEGIN;
INSERT INTO calls_claim(key, member, who, conv, tool, args, kind, status,
                        created, updated, expires)
  SELECT randomblob(16), 0, 'w', 'c', 't', value, 'local', 'done',
         '2020-01-01 00:00:00.000', '2020-01-01 00:00:00.000', $2
    FROM generate_series(1, $((2*C)));
INSERT INTO calls_expiry(expires, key)
  SELECT expires, key FROM calls_claim WHERE expires IS NOT NULL;
COMMIT;
SQL
}
claims() {
  cat <<SQL
BEGIN;
INSERT INTO calls(who, conv, tool, args, kind)
  SELECT 'w', 'c', 'new', value, 'external' FROM generate_series(1, $C);
COMMIT;
SQL
}
total() {     # total NAME: instructions of the run of $OUT/NAME.sql
  rm -f "$OUT/db"
  valgrind --tool=callgrind --callgrind-out-file="$OUT/$1.out" \
    sqlite3 "$OUT/db" < "$OUT/$1.sql" >/dev/null 2>&1
  callgrind_annotate "$OUT/$1.out" 2>/dev/null \
    | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }'
}
per_claim() { # per_claim NAME OPTION EXPIRES
  setup "$2" "$3" > "$OUT/$1-0.sql"
  { setup "$2" "$3"; claims; } > "$OUT/$1-1.sql"
  a=$(total "$1-0"); b=$(total "$1-1")
  echo $(( (b - a) / C ))
}
plain=$(per_claim plain "" NULL)
kept=$(per_claim retained "(retain='30 days')" "'9999-01-01 00:00:00.000'")
gone=$(per_claim expired "(retain='30 days')" "'2000-01-01 00:00:00.000'")
echo "instructions per claim (callgrind), $C claims in one transaction"
echo
echo "| table | per claim | ratio |"
echo "|---|---:|---:|"
awk -v p="$plain" -v k="$kept" -v g="$gone" 'BEGIN {
  printf "| no retain | %d | 1.00x |\n", p
  printf "| retain, nothing expired yet | %d | %.2fx |\n", k, k/p
  printf "| retain, 2 expired calls deleted per claim | %d | %.2fx |\n", g, g/p }'
