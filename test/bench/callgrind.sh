#!/bin/sh
# SPDX-License-Identifier: MIT
# callgrind.sh -- the benchmark's figures in instructions (valgrind's
# callgrind), a measure that a busy machine does not disturb.
#
#   test/bench/callgrind.sh BENCH LIB [OUTDIR]
#
# BENCH is the bench binary (build/bench), LIB the extension (build/idem).
# For each figure it runs BENCH once under callgrind, small, and prints the
# instructions per document, claim or lookup of idem and of its baseline,
# and their ratio.  The profiles stay in OUTDIR (default a fresh /tmp dir)
# for callgrind_annotate, e.g.
#
#   callgrind_annotate --inclusive=yes OUTDIR/calls-idem.out | head -60
#
# Where BENCH's directory also holds the simdjson anchor (build/anchor, made
# by `make bench-instructions` where simdjson is installed), the
# canonicalizer called straight from C is set against simdjson's DOM parse
# of the same documents.
#
# Time is not instructions: a mispredicted branch or a cache miss costs
# many, and system calls (file locks, reads, writes) are not counted at
# all, so the I/O-bound figures (claims, replay) say more in the table of
# `make bench` than here.
set -e
BENCH=${1:?usage: callgrind.sh BENCH LIB [OUTDIR]}
LIB=${2:?usage: callgrind.sh BENCH LIB [OUTDIR]}
OUT=${3:-$(mktemp -d /tmp/idem-callgrind.XXXXXX)}
mkdir -p "$OUT"
N=2000        # documents
C=2000        # claims and lookups

# Inclusive instructions of function $2 in profile $1.
ir() {
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null \
    | awk -v f="$2" '$0 ~ ("[:]" f "( |\\.|\\(|$)") { gsub(",", "", $1); print $1; exit }'
}

run() {       # run NAME ARGS...: one profile
  name=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$OUT/$name.out" \
    "$BENCH" --lib "$LIB" --runs 1 --dir "$OUT" "$@" >/dev/null 2>&1
}

row() {       # row FIGURE UNIT SUBJECT BASELINE COUNT
  awk -v f="$1" -v u="$2" -v s="$3" -v b="$4" -v n="$5" 'BEGIN {
    printf "| %s | %.0f | %.0f | %.2fx |\n", f " (per " u ")", s/n, b/n, s/b }'
}

echo "instructions (callgrind), $N documents, $C claims; profiles in $OUT"
echo
echo "| figure | idem | baseline | ratio |"
echo "|---|---:|---:|---:|"
for f in key canonical; do
  run "$f" --only "$f" --docs $N
  row "\`idem_$f\` scan / \`json()\` scan" doc \
    "$(ir "$OUT/$f.out" measureSubject)" "$(ir "$OUT/$f.out" measureBaseline)" $N
done
run calls-idem --only calls --tables idem --docs $N --claims $C --info 200
run calls-hand --only calls --tables hand --docs $N --claims $C --info 200
row "claims in one transaction / hand-made table" claim \
  "$(ir "$OUT/calls-idem.out" timeClaims)" "$(ir "$OUT/calls-hand.out" timeClaims)" $C
row "replay lookups, one prepared statement / hand-made table" lookup \
  "$(ir "$OUT/calls-idem.out" timeReplay)" "$(ir "$OUT/calls-hand.out" timeReplay)" $C
ANCHOR=$(dirname "$BENCH")/anchor
if [ -x "$ANCHOR" ]; then
  "$BENCH" --write-docs "$OUT/docs.db" >/dev/null 2>&1
  for w in idem simdjson; do
    valgrind --tool=callgrind --callgrind-out-file="$OUT/anchor-$w.out" \
      "$ANCHOR" "$OUT/docs.db" $w $N >/dev/null 2>&1
  done
  row "canonical text called from C / simdjson DOM parse (the anchor)" doc \
    "$(ir "$OUT/anchor-idem.out" measureIdem)" \
    "$(ir "$OUT/anchor-simdjson.out" measureSimdjson)" $N
  rm -f "$OUT/docs.db"
fi
