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
#   CROSS_JOBS=N   variants run at once after the first (default: the cores)
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
pass=0; fail=0; summary=""

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

# one VARIANT EMU FIRST: run VARIANT's programs; its output goes to
# DIR/log-VARIANT.txt, "PASSED FAILED SECONDS" to DIR/tally-VARIANT.
one() {
  local variant=$1 emu=$2 first=$3 run=() mode out rc t0 t1 args xdb rref label
  [ "$emu" != native ] && run=("$emu")
  if [ "$first" = 1 ]; then
    mode=(-w "$ref"); rm -f "$ref"; xdb=$dir/exchange.db
  else
    # Each its own copy of the reference database: the variants run at
    # once, and each opens a write transaction on it (rolled back).
    mode=(-w "$dir/results-$variant.txt" -r "$ref")
    xdb=$dir/exchange-$variant.db; cp "$dir/exchange.db" "$xdb"
  fi
  p=0; f=0
  t0=$(date +%s.%N)
  {
    out=$("${run[@]}" "$dir/cross-$variant" -d "$data" -n "$docs" -l "$variant" \
          -x "$xdb" "${mode[@]}" 2>&1)
    rc=$?
    echo "$out"
    tally "$out" $rc
    # The number printer's own unit test (test/idem_number_test.c), where it
    # was built for this variant: every line of numbers.txt through
    # idemNumberCanonical() and idemNumberFormat(), then random doubles
    # against a brute-force search.
    if [ -x "$dir/number-$variant" ]; then
      # The random doubles' reference digits from the native run
      # (DIR/random-ref.txt, made by make; computed here where it is not).
      rref=""
      [ -f "$dir/random-ref.txt" ] && rref=" --ref $dir/random-ref.txt"
      for args in "$data/numbers.txt" "--random $random$rref"; do
        # shellcheck disable=SC2086
        out=$("${run[@]}" "$dir/number-$variant" $args 2>&1)
        rc=$?
        label=${args%% --ref *}
        echo "number printer, ${label##*/}: $(printf '%s\n' "$out" | tail -n 1)"
        tally "$out" $rc
      done
    fi
  } > "$dir/log-$variant.txt"
  t1=$(date +%s.%N)
  echo "$p $f $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')" > "$dir/tally-$variant"
}

# The reference first, alone; then the others, CROSS_JOBS at once (default
# the number of cores: each program is one process), printed in order.
jobs=${CROSS_JOBS:-$(nproc 2>/dev/null || echo 1)}
first=1
running=0
for spec in "$@"; do
  rm -f "$dir/tally-${spec%%:*}"
  if [ $first = 1 ]; then
    one "${spec%%:*}" "${spec#*:}" 1
    first=0
    continue
  fi
  one "${spec%%:*}" "${spec#*:}" 0 &
  running=$((running+1))
  if [ $running -ge "$jobs" ]; then wait -n; running=$((running-1)); fi
done
wait
for spec in "$@"; do
  variant=${spec%%:*}; emu=${spec#*:}
  cat "$dir/log-$variant.txt"
  if read -r p f secs < "$dir/tally-$variant"; then :; else
    p=0; f=1; secs=0; echo "$variant: no result (the run died)"
  fi
  pass=$((pass+p)); fail=$((fail+f))
  summary+=$(printf '\n  %-16s %-15s %7d passed, %d failed  %6ss' \
                    "$variant" "($emu)" "$p" "$f" "$secs")
done
echo
echo "== test-cross: $docs generated documents per variant, $random random doubles per architecture$summary"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
