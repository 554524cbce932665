#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh -- make test-cross: run build/cross/cross-VARIANT for each variant,
# the first one natively (it writes the reference results of the generated
# documents to DIR/reference.txt, and DIR/exchange.db), the others
# natively or under their qemu-user emulator (each compares with that
# reference and reads that database, and writes its own results to
# DIR/results-VARIANT.txt in the same format).  Prints each program's
# report, a summary line per variant with its time, and "N passed, N failed"
# for all of them; exits non-zero if any check failed or any program died.
#
#   bash test/cross/run.sh DIR VARIANT:EMULATOR ...     (EMULATOR "native")
#   CROSS_DOCS=N   documents per variant (default 10000)
#   CROSS_RANDOM=N random doubles for DIR/number-VARIANT (default 20000)
set -u
dir=$1; shift
docs=${CROSS_DOCS:-10000}
random=${CROSS_RANDOM:-20000}
ref=$dir/reference.txt
# The programs read their vectors from one directory: test/data's files,
# and build/numbers.txt (made by make, from test/data/gen_numbers.js).
src=$(cd "$(dirname "$0")/../data" && pwd)
data=$dir/data
mkdir -p "$data"
for f in "$src"/*; do ln -sfn "$f" "$data/$(basename "$f")"; done
ln -sfn "$src/../../build/numbers.txt" "$data/numbers.txt"
pass=0; fail=0; first=1; summary=""

# tally OUTPUT RC: add the "N passed, N failed" that ends OUTPUT to p and
# f (a program that died, or failed without saying so, counts one failure).
tally() {
  local last
  last=$(printf '%s\n' "$1" | tail -n 1)
  if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    p=$((p+BASH_REMATCH[1])); f=$((f+BASH_REMATCH[2]))
    if [ "$2" != 0 ] && [ "${BASH_REMATCH[2]}" = 0 ]; then f=$((f+1)); fi
  else
    f=$((f+1)); echo "$variant: the program died (exit status $2)"
  fi
}

for spec in "$@"; do
  variant=${spec%%:*}; emu=${spec#*:}
  run=()
  [ "$emu" != native ] && run=("$emu")
  if [ $first = 1 ]; then
    mode=(-w "$ref"); rm -f "$ref"
  else
    mode=(-w "$dir/results-$variant.txt" -r "$ref")
  fi
  first=0
  p=0; f=0
  t0=$(date +%s.%N)
  out=$("${run[@]}" "$dir/cross-$variant" -d "$data" -n "$docs" -l "$variant" \
        -x "$dir/exchange.db" "${mode[@]}" 2>&1)
  rc=$?
  echo "$out"
  tally "$out" $rc
  # The number printer's own unit test (test/idem_number_test.c), where it
  # was built for this variant: every line of numbers.txt through
  # idemNumberCanonical() and idemNumberFormat(), then random doubles
  # against a brute-force search.
  if [ -x "$dir/number-$variant" ]; then
    for args in "$data/numbers.txt" "--random $random"; do
      # shellcheck disable=SC2086
      out=$("${run[@]}" "$dir/number-$variant" $args 2>&1)
      rc=$?
      echo "number printer, ${args##*/}: $(printf '%s\n' "$out" | tail -n 1)"
      tally "$out" $rc
    done
  fi
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  pass=$((pass+p)); fail=$((fail+f))
  summary+=$(printf '\n  %-16s %-15s %7d passed, %d failed  %6ss' \
                    "$variant" "($emu)" "$p" "$f" "$secs")
done
echo
echo "== test-cross: $docs generated documents per variant, $random random doubles per architecture$summary"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
