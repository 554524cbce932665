#!/bin/sh
# SPDX-License-Identifier: MIT
# numloop.sh OLD [RUNS [SHAPE...]]: the number code alone, this tree's
# ext/idem_number.c (B) against the one in the tree OLD (A, e.g. a
# `git worktree add --detach /tmp/old main`), in one process
# (test/bench/numloop.c): the literals of the documents of shapes.py's
# number rows, one file a shape in build/numloop/, each timed in the
# thread's CPU time, the builds in turn, RUNS runs (41), the median of the
# ratios B/A.  Runs under load: the CPU time of a pass is what it
# measures.  With RUNS 1, one pass of build B, for cachegrind.
set -e
OLD=${1:?usage: numloop.sh OLD [RUNS [SHAPE...]]}
RUNS=${2:-41}
[ $# -ge 2 ] && shift 2 || shift $#
D=build/numloop
mkdir -p "$D"
CC=${CC:-cc}
F="-O2 -g -Wall -Wextra -Iinclude"
# (each side's functions static: idemInt.h then declares some unused)
$CC $F -Wno-unused-function -I"$OLD/ext" -DNUMLOOP_SIDE=a -c -o "$D/a.o" \
  test/bench/numloop.c
$CC $F -Wno-unused-function -Iext -DNUMLOOP_SIDE=b -c -o "$D/b.o" \
  test/bench/numloop.c
$CC $F -DNUMLOOP_MAIN -o "$D/numloop" test/bench/numloop.c "$D/a.o" "$D/b.o"
/usr/bin/python3 - "$D" <<'PY'
import random, re, sys
sys.path.insert(0, "test/bench")
import shapes
d = sys.argv[1]
r = random.Random(7)
lits = lambda doc: re.findall(r"-?\d[\d.eE+-]*", doc)
out = {
    "g17": [x for _ in range(400) for x in lits(shapes.shape('"%.17g" doubles', r))],
    "g17e": [x for _ in range(400) for x in lits(shapes.shape('"%.17g" doubles with exponents', r))],
    "sub": lits(shapes.subnormals(80000, r)),
    "d40": lits(shapes.decimals_40(40000, r)),
    "r17": lits(shapes.digits_17(80000, r)),
    "d17": [x for _ in range(400) for x in lits(shapes.shape("17-digit doubles", r))],
    "edge": lits(shapes.range_edges(80000, r)),
    "lexp": lits(shapes.long_exponents(80000, r)),
    "half": lits(shapes.halfway_doubles(20000, r)),
    "nhalf": lits(shapes.near_halfway(40000, r)),
}
for k, v in out.items():
    open("%s/%s.txt" % (d, k), "w").write("\n".join(v) + "\n")
PY
for s in ${*:-g17 g17e sub d40 r17 d17 edge lexp half nhalf}; do
  "$D/numloop" "$D/$s.txt" "$RUNS"
done
