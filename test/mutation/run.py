#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test/mutation/run.py -- every rule's test can fail (doc/contract.md).

Applies each mutant of test/mutation/mutants.txt, one at a time, to a copy
of the tracked tree (MUTATION_JOBS copies, default the number of cores,
each testing one mutant at a time), builds it (a mutant of one part from
that part alone: PART below), and runs the test files the
mutant names, one at a time, the quickest first (by their times on the
tree as it is; but first the file that killed it last time on this
machine, below), each up to its first failed test (IDEM_STOP_AT_FAIL):
the first failure kills the mutant, and the files after it are not run
(a file that hangs, past ten times its time and at least a minute, is
stopped with its children and kills it too);
a mutant that every one of them passes is a SURVIVOR, and the run fails.
A mutant marked `equivalent:` (with the reason why no test can tell it
from the original) is listed but not run.  A mutant whose `find` text is
not in its file exactly once fails the run too: the list has fallen
behind the code.

    test/mutation/run.py                 every mutant
    test/mutation/run.py --sample 12     a fixed sample of 12 (CI)
    test/mutation/run.py ID ...          the mutants named

The list's format, one block per mutant, blank lines between:

    id:      claim-reconcile-stale
    file:    ext/idem_outcome.c
    find:    if( eOld==IDEM_STATUS_PENDING && !bStale ){
    replace: if( 0 ){
    rule:    contract §5: a pending call is released on 'not_arrived' only when stale
    tests:   test/failure.test test/stale.test

`find` and `replace` are one line each (leading and trailing white space is
not part of them; `\\n` in either stands for a line break).  Instead of
`tests:`, `equivalent: <reason>`.  An optional `match: <glob>` runs only
the tests of those files whose names match it (tcl/tester.tcl's MATCH),
for a mutant whose killing tests sit behind a long file: the files must
pass with it on the tree as it is, as without it.  An optional `first:
<glob>` only orders: the tests of its files that match it run first, alone
(MATCH), and if none of them fails, the mutant's files run as without it
(with its `match:`, if it has one): for a mutant that a quick test deep in
a long file kills (numbers-4.15 after 6 s of numbers.test).  Checked the
same way: on the tree as it is, the tests it matches pass, and each file
it runs first in has one.
"""
import concurrent.futures
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
LIST = os.path.join(ROOT, "test", "mutation", "mutants.txt")
FIELDS = ("id", "file", "find", "replace", "rule", "tests", "match", "first", "equivalent")


def parse(path):
    mutants, cur = [], {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if cur:
                    mutants.append(cur)
                    cur = {}
                continue
            name, sep, value = line.partition(":")
            name = name.strip()
            if not sep or name not in FIELDS:
                sys.exit("%s:%d: expected one of %s, then ':'" % (path, n, ", ".join(FIELDS)))
            if name in cur:
                sys.exit("%s:%d: %s given twice in one mutant" % (path, n, name))
            cur[name] = value.strip().replace("\\n", "\n")
            cur.setdefault("line", n)
    if cur:
        mutants.append(cur)
    seen = set()
    for m in mutants:
        where = "%s:%d" % (path, m["line"])
        for k in ("id", "file", "find", "replace", "rule"):
            if k not in m:
                sys.exit("%s: mutant without %s" % (where, k))
        if ("tests" in m) == ("equivalent" in m):
            sys.exit("%s: mutant %s needs tests: or equivalent: (one of them)" % (where, m["id"]))
        for k in ("match", "first"):
            if k in m and "tests" not in m:
                sys.exit("%s: mutant %s: %s: needs tests:" % (where, m["id"], k))
        if m["id"] in seen:
            sys.exit("%s: mutant id %s used twice" % (where, m["id"]))
        seen.add(m["id"])
    return mutants


# Unoptimized and without debugging information: a mutant's build is most
# of its time, no rule depends on the optimizer, and no one debugs these
# copies.  In the environment, so that the makes the test files start
# themselves (durable.test: build/powerloss, inner.test and utf8.test:
# build/idem_canonical_test and build/idem_utf8_test, UNIT_CFLAGS;
# canonical.test: build/variant/take.so, TAKE_CFLAGS) build the same way.
# And nothing forced inline: -Dalways_inline=unused turns the attribute of
# the hot path's helpers (IDEMNUM_INLINE, IDEM_JSON_INLINE, xxHash's
# XXH_FORCE_INLINE) into a plain "unused", which even -O0 inlines
# otherwise: copies of them at every call were most of ext/idem_number.c's
# compile (0.63 -> 0.11 s of CPU with clang; the one translation unit
# 1.20 -> 0.61 s), which 146 mutants compile.  The same C, only not
# inlined; 24 mutants of idem_number.c and idem_canonical.c (their tests
# 23 -> 13 s of CPU) were killed by the same tests either way.
CFLAGS = "-O0 -Dalways_inline=unused"
BUILD_ENV = {"CFLAGS": CFLAGS, "POWERLOSS_CFLAGS": CFLAGS, "UNIT_CFLAGS": CFLAGS,
             "TAKE_CFLAGS": CFLAGS}
# And with clang where there is one (make fuzz's compiler): it builds the
# one translation unit at -O0 in about half gcc's time (0.55 s against
# 1.0 s here, for each of some 240 mutants).  The tree as it is is built,
# and its named tests run, with the same compiler before any mutant.  CC
# set in the environment wins.
if "CC" not in os.environ and shutil.which("clang"):
    BUILD_ENV["CC"] = "clang"

# What is built from the sources (make's own rules): removed before each
# mutant is applied, so that no test can run a program built from another
# mutant (or none), whatever the files' times say.
PRODUCTS = ("build/idem.so", "build/idem.dylib", "build/idem_static.o",
            "build/libidem.a", "build/powerloss", "build/idem_canonical_test",
            "build/idem_utf8_test", "build/idem_number_test",
            "build/variant/nopext.so", "build/variant/take.so")


def targets(m):
    """The make command that builds what the mutant's tests load and do
    not build themselves: the loadable always, the static library for the
    C API programs (test/durable.test and test/canonical.test make their
    programs when they reach them, so a mutant killed before that does
    not wait for them)."""
    want = ["build/idem.so"]
    if "test/capi.test" in m["tests"].split():
        want.append("build/libidem.a")
    return ["make", "-s"] + want


# A mutant of one part (ext/idem_X.c) is built from that part alone: each
# copy compiles every part once (-DIDEM_PARTS for ext/idem.c, the entry
# point: test/parts.test links the same objects), and a mutant's build
# compiles its part again and links the loadable (and, for the C API
# programs, the static library) from it and the other parts' objects:
# ~0.3 s instead of ~0.9 s for the one translation unit.  The parts differ
# from the single build only in their symbols' linkage (hidden, not
# static), which no rule depends on; a mutant of ext/idem.c or of a header,
# and the tree as it is, are built by make.
PART = re.compile(r"^ext/idem_[a-z0-9]+\.c$")
PART_FLAGS = {"pic": ["-fPIC", "-fvisibility=hidden"], "core": ["-DSQLITE_CORE"]}


# With clang, the headers every part includes first (ext/idemInt.h:
# sqlite3ext.h, sqlite3.h, the SSE2 and AVX2 intrinsics) are compiled once
# per copy and variant into a precompiled header: they were most of a
# small part's compile (0.13 s of CPU of ext/idem_vtab.c's 0.16 s; 0.05 s
# with it).  No part has a preprocessor line before its #include
# "idemInt.h", so -include-pch is that #include (its guard makes the
# part's own one empty): the same object, instruction for instruction.
# The header is made again when a header of the copy has changed (a
# mutant of a header, put back, leaves another mtime, which clang refuses),
# and a part that does not compile with it is compiled again without it
# before its mutant is said not to compile.
PCH_HEADER = "ext/idemInt.h"


def header_stamp(w):
    """The size and mtime of every header a part may include from the
    copy w: the precompiled header is good while they stay."""
    out = []
    for d in ("ext", "include"):
        for n in sorted(os.listdir(os.path.join(w, d))):
            if n.endswith(".h"):
                st = os.stat(os.path.join(w, d, n))
                out.append((d, n, st.st_size, st.st_mtime_ns))
    return out


def is_clang(env):
    try:
        return "clang" in subprocess.run([env.get("CC", "cc"), "--version"], capture_output=True,
                                         text=True, env=env).stdout
    except OSError:
        return False


PCH = {}    # (copy, variant) -> (its path, header_stamp() when made)


def pch_for(w, env, variant):
    """The precompiled header of copy w for variant, made (again) if the
    headers changed since; None without clang or if it does not build."""
    if env.get("IDEM_MUTATION_PCH") == "0" or not PCH.get("clang"):
        return None
    stamp = header_stamp(w)
    have = PCH.get((w, variant))
    if have and have[1] == stamp:
        return have[0]
    out = os.path.join(w, "build", "mparts", variant + ".pch")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    r = sh([env.get("CC", "cc")] + CFLAGS.split() + ["-w", "-x", "c-header"] + PART_FLAGS[variant] +
           ["-Iinclude", "-Iext", "-o", out, PCH_HEADER], w, env)
    PCH[(w, variant)] = (out if r.returncode == 0 else None, stamp)
    return PCH[(w, variant)][0]


def part_compile(w, env, src, variant, out):
    cc = env.get("CC", "cc")
    name = os.path.basename(src)
    entry = ["-DIDEM_PARTS"] if name == "idem.c" else []
    cmd = [cc] + CFLAGS.split() + ["-w", "-c"] + PART_FLAGS[variant] + entry + \
          ["-Iinclude", "-Iext", "-o", out, src]
    pch = None if entry else pch_for(w, env, variant)
    if pch:
        r = sh(cmd[:-1] + ["-include-pch", pch, src], w, env)
        if r.returncode == 0:
            return r
    return sh(cmd, w, env)


def part_objects(w, env, variants):
    """Compile every part of copy w once, for each variant; False if one
    does not compile (the runner then builds every mutant with make)."""
    PCH["clang"] = is_clang(env)
    for v in variants:
        d = os.path.join(w, "build", "mparts", v)
        os.makedirs(d, exist_ok=True)
        for src in sorted(os.listdir(os.path.join(w, "ext"))):
            if src.endswith(".c"):
                out = os.path.join(d, src[:-2] + ".o")
                if part_compile(w, env, os.path.join("ext", src), v, out).returncode:
                    return False
    return True


def part_build(m, w, env, variants):
    """Build what a mutant of one part needs from its part alone: the
    loadable, and the static library if its tests run the C API programs.
    The CompletedProcess of the step that failed, or of the last."""
    name = os.path.basename(m["file"])[:-2]
    want = ["pic"] + (["core"] if "test/capi.test" in m["tests"].split() else [])
    r = None
    for v in want:
        if v not in variants:
            return sh(targets(m), w, env)
        d = os.path.join(w, "build", "mparts", v)
        mut = os.path.join(w, "build", "mparts", name + "." + v + ".o")
        r = part_compile(w, env, m["file"], v, mut)
        if r.returncode:
            return r
        objs = [mut if o == name + ".o" else os.path.join(d, o)
                for o in sorted(os.listdir(d)) if o.endswith(".o")]
        if v == "pic":
            r = sh([env.get("CC", "cc"), "-shared", "-o", "build/idem.so"] + objs, w, env)
        else:
            lib = os.path.join(w, "build", "libidem.a")
            try:
                os.remove(lib)
            except FileNotFoundError:
                pass
            r = sh(["ar", "rcs", lib] + objs, w, env)
        if r.returncode:
            return r
    return r


# Which of a mutant's files killed it last time, kept in the machine's
# cache ($IDEM_CACHE, else $XDG_CACHE_HOME/idem, else ~/.cache/idem, as
# mk/cached.sh; IDEM_CACHE=none: none), for the mutants that name more than
# one file: that file runs first.  Only the order: every file still runs
# until one fails, and the verdict is the same in any order (one failure
# kills); a mutant killed late in a long file costs that file only
# (durable-wal-held-watch: capi.test passed it in 11 s, then durable.test
# killed it in 0.2 s).
def killers_path():
    c = os.environ.get("IDEM_CACHE")
    if c == "none":
        return None
    if not c:
        if os.environ.get("XDG_CACHE_HOME"):
            c = os.path.join(os.environ["XDG_CACHE_HOME"], "idem")
        elif os.environ.get("HOME") and os.access(os.environ["HOME"], os.W_OK):
            c = os.path.join(os.environ["HOME"], ".cache", "idem")
        else:
            return None
    return os.path.join(c, "mutation-killers.txt")


def killers_read():
    out = {}
    p = killers_path()
    try:
        with open(p, encoding="utf-8") as f:
            for l in f:
                parts = l.split()
                if len(parts) == 2:
                    out[parts[0]] = parts[1]
    except (OSError, TypeError):
        pass
    return out


def killers_write(known):
    p = killers_path()
    if not p or not known:
        return
    try:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        tmp = "%s.tmp%d" % (p, os.getpid())
        with open(tmp, "w", encoding="utf-8") as f:
            for k in sorted(known):
                f.write("%s %s\n" % (k, known[k]))
        os.replace(tmp, p)
    except OSError:
        pass


def sh(cmd, cwd, env=None, timeout=900):
    """Run cmd in its own process group; past timeout seconds the whole
    group is killed (a test file's children too) and TimeoutExpired
    raised.  Its output is read as UTF-8 with any other byte replaced:
    a mutant may print what no test would (a lone surrogate in UTF-8),
    and that must fail the test, not the runner."""
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, encoding="utf-8",
                         errors="replace", start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, 9)
        except ProcessLookupError:
            pass
        p.communicate()
        raise
    return subprocess.CompletedProcess(cmd, p.returncode, out)


def phase(what, since):
    """Print what took since since (wall, and CPU of this process and its
    children): the runner's own steps, before and beside the mutants."""
    t = os.times()
    cpu = t.user + t.system + t.children_user + t.children_system
    print("-- %s: %.0f s (%.0f s of CPU)" % (what, time.time() - since[0], cpu - since[1]), flush=True)
    since[:] = [time.time(), cpu]


def main(argv):
    t = os.times()
    since = [time.time(), t.user + t.system + t.children_user + t.children_system]
    mutants = parse(LIST)
    sample = None
    names = []
    i = 0
    while i < len(argv):
        if argv[i] == "--sample":
            sample = int(argv[i + 1])
            i += 2
        else:
            names.append(argv[i])
            i += 1
    if names:
        unknown = set(names) - {m["id"] for m in mutants}
        if unknown:
            sys.exit("no such mutant: " + " ".join(sorted(unknown)))
        mutants = [m for m in mutants if m["id"] in names]
    runnable = [m for m in mutants if "tests" in m]
    if sample is not None and sample < len(runnable):
        # A fixed sample (the same every run), spread over the files.
        runnable = sorted(random.Random(8785).sample(runnable, sample), key=mutants.index)

    # Every mutant must still apply to today's code, sampled or not.
    stale = []
    for m in mutants:
        with open(os.path.join(ROOT, m["file"]), encoding="utf-8") as f:
            n = f.read().count(m["find"])
        if n != 1:
            stale.append("%s: its find text is in %s %d times, not once" % (m["id"], m["file"], n))
    if stale:
        print("the mutant list has fallen behind the code:\n  " + "\n  ".join(stale))
        return 1

    # MUTATION_JOBS copies of the tree (default: the cores), each building
    # and testing one mutant at a time: a mutant's build is one compiler
    # process and its tests a few files, so one copy leaves a core idle.
    jobs = int(os.environ.get("MUTATION_JOBS") or os.cpu_count() or 1)
    jobs = max(1, min(jobs, len(runnable)))
    works = [tempfile.mkdtemp(prefix="idem-mutation-") for _ in range(jobs)]
    work = works[0]
    try:
        files = sh(["git", "ls-files", "-z"], ROOT).stdout.split("\0")
        for w in works:
            for rel in filter(None, files):
                src = os.path.join(ROOT, rel)
                if not os.path.isfile(src):
                    continue
                dst = os.path.join(w, rel)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(src, dst)
        phase("%d copies of the tree" % jobs, since)
        env = dict(os.environ, **BUILD_ENV)
        for v in ("IDEM_LIB", "MAKEFLAGS", "MAKELEVEL", "MFLAGS"):
            env.pop(v, None)
        # The tree as it is builds (in one copy: each mutant builds its
        # own copy's programs anew, PRODUCTS).
        build = sh(["make", "-s", "all"], work, env)
        if build.returncode:
            print(build.stdout)
            print("the unmutated tree does not build")
            return 1
        phase("the tree as it is built", since)
        # Each copy's parts, once (above PART); the static ones only if a
        # mutant of a part runs the C API programs.
        variants = ["pic"]
        if any(PART.match(m["file"]) and "test/capi.test" in m["tests"].split()
               for m in runnable):
            variants.append("core")
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            if not all(pool.map(lambda w: part_objects(w, env, variants), works)):
                variants = []
        phase("each copy's parts compiled", since)
        # The named tests must pass on the tree as it is, or a failure
        # would prove nothing about a mutant.  Their times there order
        # each mutant's files, the quickest first.
        named = sorted({t for m in runnable for t in m["tests"].split()})
        secs = {}
        msecs = {}      # (match, file): a file's time with that MATCH
        mtests = {}     # (match, file): how many of its tests that MATCH runs

        def timed(out, into, tag):
            for l in out.splitlines():
                if l.startswith("-- ") and l.endswith(" s") and ": " in l:
                    name, _, t = l[3:-2].rpartition(": ")
                    try:
                        into[tag("test/" + name)] = float(t)
                    except ValueError:
                        pass
        if named:
            base = sh(["tclsh", "tcl/run.tcl"] + named, work, dict(env, IDEM_JOBS=""))
            if base.returncode:
                print(base.stdout[-3000:])
                print("the named tests fail without any mutant: fix them first")
                return 1
            timed(base.stdout, secs, lambda t: t)
            phase("the %d named files on the tree as it is" % len(named), since)
        # And each match: and first: with its files, on the tree as it is:
        # a test that fails there without the tests MATCH skips (a state
        # they set up) would kill every mutant.
        def globs(m):
            return {m[k] for k in ("match", "first") if k in m}
        for glob in sorted(set().union(*(globs(m) for m in runnable))):
            files = sorted({t for m in runnable if glob in globs(m)
                            for t in m["tests"].split()})
            base = sh(["tclsh", "tcl/run.tcl"] + files, work,
                      dict(env, IDEM_JOBS="", MATCH=glob))
            if base.returncode or re.search(r"^0 passed", base.stdout, re.M):
                print(base.stdout[-3000:])
                print("the named tests matching %s fail (or none runs) without any"
                      " mutant: fix them first" % glob)
                return 1
            timed(base.stdout, msecs, lambda t, g=glob: (g, t))
            for f, n in re.findall(r"^== (\S+): (\d+) ok, 0 failed$", base.stdout, re.M):
                mtests[(glob, "test/" + f)] = int(n)
        for m in runnable:
            if "first" in m and not any(mtests.get((m["first"], t))
                                        for t in m["tests"].split()):
                print("mutant %s: first: %s matches no test of %s" % (
                    m["id"], m["first"], m["tests"]))
                return 1
        if any(globs(m) for m in runnable):
            phase("each match: and first: on the tree as it is", since)
        for m in mutants:
            if "equivalent" in m:
                print("%-34s equivalent: %s" % (m["id"], m["equivalent"]))
        # Each file alone (the copies run at once), up to its first failure.
        env["IDEM_JOBS"] = "1"
        env["IDEM_STOP_AT_FAIL"] = "1"
        killers = killers_read()
        killed_by = {}

        def one(m, w):
            """Apply M to the copy W, build, run its tests (the quickest
            first, up to the first that fails), put it back."""
            # Scratch files inside the copy: what a file that died leaves
            # there goes with the copy.
            wenv = dict(env, IDEM_TMP=os.path.join(w, "tmp"), TMPDIR=os.path.join(w, "tmp"))
            os.makedirs(wenv["TMPDIR"], exist_ok=True)
            for p in PRODUCTS:
                try:
                    os.remove(os.path.join(w, p))
                except FileNotFoundError:
                    pass
            path = os.path.join(w, m["file"])
            with open(path, encoding="utf-8") as f:
                orig = f.read()
            t0 = time.time()
            try:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(orig.replace(m["find"], m["replace"], 1))
                if PART.match(m["file"]) and variants:
                    b = part_build(m, w, wenv, variants)
                else:
                    b = sh(targets(m), w, wenv)
                if b.returncode:
                    return True, "killed (does not compile)", time.time() - t0
                tests = m["tests"].split()
                # The runs, in order: with first:, its tests alone in each
                # file that has some; then the files as without it.
                runs = [(t, m["first"]) for t in tests
                        if "first" in m and mtests.get((m["first"], t))]
                first = killers.get(m["id"])
                runs += [(t, m.get("match")) for t in sorted(
                    tests, key=lambda t: (t != first, secs.get(t, 0.0), tests.index(t)))]
                for t, glob in runs:
                    # A file that hangs under the mutant has caught it (CI
                    # would fail on it): killed at ten times its time on
                    # the tree as it is (with the MATCH it runs with, if
                    # any: the whole file's time let one hang of
                    # canonical-13.27* run 535 s), and at least a minute;
                    # a first: run (a few quick tests, ~1 s) at least 15 s:
                    # a mutant that loops in them (number-big-mul-top in
                    # numbers-4.30.4) costs 15 s, not 60.
                    how = " (first: %s)" % glob if glob is not None and glob != m.get("match") else ""
                    limit = max(15.0 if how else 60.0,
                                10 * msecs.get((glob, t), secs.get(t, 60.0)))
                    try:
                        r = sh(["tclsh", "tcl/run.tcl", t], w,
                               dict(wenv, MATCH=glob) if glob else wenv, timeout=limit)
                    except subprocess.TimeoutExpired:
                        killed_by[m["id"]] = t
                        return True, "killed by %s, which hung (stopped after %d s)%s" % (
                            os.path.basename(t), limit, how), time.time() - t0
                    if r.returncode:
                        killed_by[m["id"]] = t
                        failed = [l.split()[2] for l in r.stdout.splitlines()
                                  if l.startswith("! ") and l.rstrip().endswith(" failed")]
                        return True, "killed by " + (" ".join(failed[:3]) or
                                                     os.path.basename(t) + ", which died") + how, \
                            time.time() - t0
                return False, "SURVIVED " + " ".join(tests), time.time() - t0
            finally:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(orig)

        free = queue.Queue()
        for w in works:
            free.put(w)

        def task(m):
            w = free.get()
            try:
                return one(m, w)
            finally:
                free.put(w)

        # The longest first (by its files' times, at most), so that the
        # copies end together rather than one waiting for the other's
        # last long mutant.
        def cost(m):
            return -sum(secs.get(t, 0.0) for t in m["tests"].split())
        print("%d mutants in %d copies, the longest first; each printed when it and"
              " those listed before it are done" % (len(runnable), jobs), flush=True)
        killed, survived = 0, []
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {m["id"]: pool.submit(task, m)
                       for m in sorted(runnable, key=cost)}
            # Printed in the list's order, each as soon as it and those
            # before it are done.
            for m in runnable:
                dead, verdict, took = futures[m["id"]].result()
                if dead:
                    killed += 1
                else:
                    survived.append(m)
                print("%-34s %s (%.0f s)" % (m["id"], verdict, took), flush=True)
        # Kept for the next run: the killers of those with several files
        # (the others' order is their one file).
        several = {m["id"] for m in runnable if len(m["tests"].split()) > 1}
        kept = dict(killers)
        kept.update({k: v for k, v in killed_by.items() if k in several})
        if kept != killers:
            killers_write({k: v for k, v in kept.items()
                           if k in several or k not in {m["id"] for m in mutants}})
        phase("the mutants", since)
        n_eq = sum(1 for m in mutants if "equivalent" in m)
        print("%d mutants run: %d killed, %d survived; %d equivalent, not run"
              % (len(runnable), killed, len(survived), n_eq))
        for m in survived:
            print("survivor %s (%s): %s -- rule: %s" % (m["id"], m["file"], m["find"], m["rule"]))
        return 1 if survived else 0
    finally:
        for w in works:
            shutil.rmtree(w, ignore_errors=True)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
