#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""shapes.py -- idem_canonical and idem_key against json() by document shape
(make bench, part 3).

    /usr/bin/python3 test/bench/shapes.py [--lib build/idem] [--docs 4000]
        [--runs 9]

The benchmark's documents are a mix; this shows where the canonicalizer is
fast and where it is not, one shape at a time: for each, --docs documents
from a fixed seed in an in-memory table, and `SELECT count(f(a)) FROM d`
for f = json, idem_canonical, idem_key (one step: the time is SQLite's and
the function's, not Python's).  The three queries alternate, each time is
the best of --runs, and the ratios are against json().  No targets: the
table says which shapes cost more than json() and (in doc/performance.md) why.
The shapes of large documents (900 levels deep with every level out of
order; 1 000 member names sharing a 200-byte prefix) get fewer documents
(DIVIDE), for a like total size.

    /usr/bin/python3 test/bench/shapes.py --instructions [--docs 400]
        [--corpus DOCS.db]

counts instructions instead (valgrind's callgrind, which a busy machine
does not disturb): for each shape, the sqlite3 shell runs each query once
under callgrind on a file of the shape's documents, and the same scan with
no function (`count(coalesce(a, 0))`) is subtracted from each, so that what
is compared is the functions' own cost per document, SQLite's per-row and
per-call cost left out.  --corpus adds a first row: the bench's own
documents (tool-call arguments), from a file `bench --write-docs` wrote.
"""
import argparse
import json
import os
import random
import re
import sqlite3
import subprocess
import tempfile
import time

WORDS = ["alpha", "beta", "Zürich", "naïve", "東京", "данные", "emoji😀",
         "café", "straße", "北京市", "report", "order", "invoice"]
CODE = ['def handle(request):', '    """Return the order."""',
        '    if not request.get("id"):', '        raise ValueError("no id")',
        '    total = sum(x["price"] * x["qty"] for x in request["items"])',
        '    return {"id": request["id"], "total": round(total, 2)}',
        '\tprint("done\\n")', '# a comment with a \\ backslash']


def shape(name, r):
    """One document of the shape called name, from the generator r."""
    rnd = r.random
    if name == "17-digit doubles":
        return json.dumps({"v": [rnd() * r.choice([1, 100, 1e4])
                                 for _ in range(200)]})
    if name == "doubles with exponents":
        return json.dumps({"v": [rnd() * 10 ** r.randint(-30, 30)
                                 for _ in range(200)]})
    if name == "2-digit decimals":
        return json.dumps({"v": [round(rnd() * 100, 2) for _ in range(200)]})
    if name == "integers":
        return json.dumps({"v": [r.randint(0, 10 ** 12) for _ in range(200)]})
    if name == "nested 60 deep":
        d = "x"
        for i in range(60):
            d = {"k%d" % i: d, "a": i}
        return json.dumps(d)
    if name == "200 members, random order":
        return json.dumps({"key%05d" % r.randint(0, 99999): i
                           for i in range(200)})
    if name == "CJK text":
        return json.dumps({"t": "".join(chr(r.randint(0x4e00, 0x9fff))
                                        for _ in range(400))},
                          ensure_ascii=False)
    if name == "CJK as \\u escapes":
        return json.dumps({"t": "".join(chr(r.randint(0x4e00, 0x9fff))
                                        for _ in range(300))})
    if name == "emoji":
        return json.dumps({"t": "".join(chr(r.randint(0x1F600, 0x1F64F))
                                        for _ in range(200))},
                          ensure_ascii=False)
    if name == "mostly \\\" \\\\ \\n":
        return json.dumps({"t": "".join(r.choice('ab"\\\n\t')
                                        for _ in range(800))})
    if name == "source code":
        return json.dumps({"path": "src/m%d.py" % r.randint(0, 999),
                           "content": "\n".join(r.choice(CODE)
                                                for _ in range(30))})
    if name == "words, mixed scripts":
        return json.dumps({w + str(i): " ".join(r.choice(WORDS)
                                                for _ in range(6))
                           for i, w in enumerate(r.sample(WORDS, 8))},
                          ensure_ascii=False)
    if name == "array of objects":
        return json.dumps([{"id": i, "name": "n%d" % i, "ok": True, "x": None}
                           for i in range(60)])
    if name == "long ASCII string":
        return json.dumps({"s": "lorem ipsum dolor " * 100})
    if name == "900 deep, out of order":
        # Every level's members out of order: each level is sorted once,
        # not once per level above it.
        d = "0"
        for i in range(900):
            d = '{"b":"%s","a":%s}' % ("x" * r.randint(0, 20), d)
        return d
    if name == "names with a 200-byte prefix":
        p = "/srv/" + "p" * 195
        ks = ["%s%06d" % (p, r.randint(0, 999999)) for _ in range(1000)]
        return json.dumps({k: i for i, k in enumerate(ks)})
    if name == "tiny":
        return json.dumps({"q": "weather", "city": "Paris"})
    raise ValueError(name)


SHAPES = ["long ASCII string", "array of objects", "integers",
          "2-digit decimals", "source code", "CJK as \\u escapes", "CJK text",
          "emoji", "words, mixed scripts", "nested 60 deep", "tiny",
          "mostly \\\" \\\\ \\n", "200 members, random order",
          "17-digit doubles", "doubles with exponents",
          "900 deep, out of order", "names with a 200-byte prefix"]

# Shapes of large documents: --docs divided by this, for a like total size.
DIVIDE = {"900 deep, out of order": 20, "names with a 200-byte prefix": 200}


# The functions compared, each in the same scan.
QUERIES = [("json", "SELECT count(json(a)) FROM d"),
           ("canonical", "SELECT count(idem_canonical(a)) FROM d"),
           ("key", "SELECT count(idem_key('w','c','t',a)) FROM d")]
CORPUS = "the bench corpus (tool calls)"


def fill(db, name, docs, corpus=None):
    """Table d of db: docs documents of the shape called name (fewer for
    the large shapes), or the first of the corpus file's.  Returns their
    number and mean size in bytes."""
    r = random.Random(7)
    n = max(1, docs // DIVIDE.get(name, 1))
    if name == CORPUS:
        src = sqlite3.connect(corpus)
        rows = [x for (x,) in src.execute(
            "SELECT args FROM docs ORDER BY i LIMIT ?", (n,))]
        src.close()
    else:
        rows = [shape(name, r) for _ in range(n)]
    db.execute("DROP TABLE IF EXISTS d")
    db.execute("CREATE TABLE d(a TEXT)")
    db.executemany("INSERT INTO d VALUES(?)", [(d,) for d in rows])
    db.commit()
    size = db.execute("SELECT avg(length(CAST(a AS BLOB))) FROM d")
    return len(rows), size.fetchone()[0]


def callgrind(db, lib, query, tmp):
    """Instructions of one run of the sqlite3 shell on db under callgrind."""
    out = os.path.join(tmp, "cg.out")
    subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                    "sqlite3", "-init", "/dev/null", "-batch", db,
                    ".load " + lib, query],
                   check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        for line in f:
            m = re.match(r"(summary|totals): (\d+)", line)
            if m:
                return int(m.group(2))
    raise SystemExit("shapes.py: no totals in " + out)


def instructions(a):
    queries = [("base", "SELECT count(coalesce(a, 0)) FROM d")] + QUERIES
    lib = os.path.abspath(a.lib)
    print("By shape, in instructions (callgrind): %d documents each; the scan"
          " with no function subtracted; ratio to json()" % a.docs)
    print()
    print("| shape | bytes/doc | `json()` per doc | `idem_canonical` | `idem_key` |")
    print("|---|---:|---:|---:|---:|")
    names = ([CORPUS] if a.corpus else []) + SHAPES
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "shape.db")
        for name in names:
            db = sqlite3.connect(path)
            n, size = fill(db, name, a.docs, a.corpus)
            db.close()
            ir = {k: callgrind(path, lib, q, tmp) for k, q in queries}
            j = (ir["json"] - ir["base"]) / n
            c = (ir["canonical"] - ir["base"]) / n
            k = (ir["key"] - ir["base"]) / n
            print("| %s | %.0f | %.0f | %.2fx | %.2fx |"
                  % (name, size, j, c / j, k / j))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build/idem")
    ap.add_argument("--docs", type=int, default=None)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions with callgrind instead of timing")
    ap.add_argument("--only", help="these shapes (comma-separated) only")
    ap.add_argument("--corpus", help="with --instructions: first the documents"
                    " of this file (written by bench --write-docs)")
    a = ap.parse_args()
    if a.only:
        SHAPES[:] = [s for s in SHAPES if s in a.only.split(",")]
    if a.instructions:
        a.docs = a.docs or 400
        instructions(a)
        return
    a.docs = a.docs or 4000
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(a.lib)
    print("By shape: %d documents each, best of %d; ratio to json()"
          % (a.docs, a.runs))
    print()
    print("| shape | bytes/doc | `json()` | `idem_canonical` | `idem_key` |")
    print("|---|---:|---:|---:|---:|")
    for name in SHAPES:
        n, size = fill(db, name, a.docs)
        best = {k: float("inf") for k, _ in QUERIES}
        for _ in range(a.runs):
            for k, q in QUERIES:
                t = time.perf_counter()
                db.execute(q).fetchall()
                best[k] = min(best[k], time.perf_counter() - t)
        j = best["json"]
        print("| %s | %.0f | %.1f ms | %.2fx | %.2fx |"
              % (name, size, j * 1e3, best["canonical"] / j, best["key"] / j))


if __name__ == "__main__":
    main()
