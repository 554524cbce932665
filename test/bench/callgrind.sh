#!/bin/sh
# SPDX-License-Identifier: MIT
# callgrind.sh -- the benchmark's figures in instructions (valgrind's
# callgrind), a measure that a busy machine does not disturb.
#
#   test/bench/callgrind.sh BENCH LIB [OUTDIR [NAME=DOCS.db ...]]
#
# BENCH is the bench binary (build/bench), LIB the extension (build/idem).
# For each corpus (the bench's own tool-call documents, then each NAME=FILE
# given: a file of documents, as `shapes.py --write-corpora` writes them)
# it runs BENCH under callgrind, small, and prints the instructions per
# document, claim or lookup of idem and of its baselines, and their ratio:
# the scans against json(); the claims, the replay lookups and the records
# against the hand-made WITHOUT ROWID table (`hand`) and against a rowid
# table with a UNIQUE key (`rowid`); and, counted without callgrind, the bytes per claim
# of each (20 000 claims).  The profiles stay in OUTDIR (default a fresh
# /tmp dir) for callgrind_annotate, e.g.
#
#   callgrind_annotate --inclusive=yes OUTDIR/calls-idem.out | head -60
#
# Where BENCH's directory also holds the simdjson anchor (build/anchor, made
# by `make bench-instructions` where simdjson is installed), the
# canonicalizer called straight from C is set against simdjson's DOM parse
# of the bench's documents.
#
# Time is not instructions: a mispredicted branch or a cache miss costs
# many, and system calls (file locks, reads, writes) are not counted at
# all, so the I/O-bound figures (claims, replay) say more in the table of
# `make bench` than here.
set -e
BENCH=${1:?usage: callgrind.sh BENCH LIB [OUTDIR [NAME=DOCS.db ...]]}
LIB=${2:?usage: callgrind.sh BENCH LIB [OUTDIR [NAME=DOCS.db ...]]}
OUT=${3:-$(mktemp -d /tmp/idem-callgrind.XXXXXX)}
[ $# -ge 3 ] && shift 3 || shift $#
mkdir -p "$OUT"
N=2000        # documents
C=2000        # claims and lookups
R=200         # records (bench --info)

# Inclusive instructions of function $2 in profile $1.
ir() {
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null \
    | awk -v f="$2" '$0 ~ ("[:]" f "( |\\.|\\(|$)") { gsub(",", "", $1); print $1; exit }'
}

run() {       # run NAME ARGS...: one profile
  name=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$OUT/$name.out" \
    "$BENCH" --lib "$LIB" --runs 1 --dir "$OUT" $DOCS "$@" >/dev/null 2>&1
}

row() {       # row CORPUS FIGURE UNIT SUBJECT BASELINE COUNT
  awk -v c="$1" -v f="$2" -v u="$3" -v s="$4" -v b="$5" -v n="$6" 'BEGIN {
    printf "| %s | %s | %.0f | %.0f | %.2fx |\n", c, f " (per " u ")", s/n, b/n, s/b }'
}

# The bytes per claim of idem and of table $1, from bench's own table.
bytes() {
  "$BENCH" --lib "$LIB" --runs 1 --dir "$OUT" $DOCS --only calls \
    --tables "idem,$1" --claims 20000 --info 200 2>/dev/null \
    | awk -F'|' '/bytes per claim/ { gsub(/[ B]/, "", $3); gsub(/[ B]/, "", $4);
                                     print $3, $4; exit }'
}

corpus() {    # corpus NAME: every figure on the documents of $DOCS
  c=$1
  for f in key canonical; do
    run "$f" --only "$f" --docs $N
    row "$c" "\`idem_$f\` scan / \`json()\` scan" doc \
      "$(ir "$OUT/$f.out" measureSubject)" "$(ir "$OUT/$f.out" measureBaseline)" $N
  done
  for t in idem hand rowid; do
    run "calls-$t" --only calls --tables $t --docs $N --claims $C --info $R
  done
  for t in hand rowid; do
    [ $t = hand ] && d="the hand-made table (WITHOUT ROWID)" || d="a rowid table with a UNIQUE key"
    row "$c" "claims in one transaction / $d" claim \
      "$(ir "$OUT/calls-idem.out" timeClaims)" "$(ir "$OUT/calls-$t.out" timeClaims)" $C
    row "$c" "replay lookups, one prepared statement / $d" lookup \
      "$(ir "$OUT/calls-idem.out" timeReplay)" "$(ir "$OUT/calls-$t.out" timeReplay)" $C
    row "$c" "records (UPDATE ... SET status='done'), one transaction / $d" record \
      "$(ir "$OUT/calls-idem.out" timeRecord)" "$(ir "$OUT/calls-$t.out" timeRecord)" $R
  done
  for t in hand rowid; do
    set -- $(bytes $t)
    [ $t = hand ] && d="the hand-made table" || d="a rowid table"
    awk -v c="$c" -v d="$d" -v s="$1" -v b="$2" 'BEGIN {
      printf "| %s | bytes per claim / %s | %.0f | %.0f | %.2fx |\n", c, d, s, b, s/b }'
  done
}

echo "instructions (callgrind), $N documents, $C claims; profiles in $OUT"
echo
echo "| corpus | figure | idem | baseline | ratio |"
echo "|---|---|---:|---:|---:|"
DOCS=""
corpus "tool calls"
for arg in "$@"; do
  DOCS="--docs-file ${arg#*=}"
  corpus "${arg%%=*}"
done
DOCS=""
ANCHOR=$(dirname "$BENCH")/anchor
if [ -x "$ANCHOR" ]; then
  "$BENCH" --write-docs "$OUT/docs.db" >/dev/null 2>&1
  for w in idem simdjson; do
    valgrind --tool=callgrind --callgrind-out-file="$OUT/anchor-$w.out" \
      "$ANCHOR" "$OUT/docs.db" $w $N >/dev/null 2>&1
  done
  row "tool calls" "canonical text called from C / simdjson DOM parse (the anchor)" doc \
    "$(ir "$OUT/anchor-idem.out" measureIdem)" \
    "$(ir "$OUT/anchor-simdjson.out" measureSimdjson)" $N
  rm -f "$OUT/docs.db"
fi
