#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""shapes.py -- idem_canonical and idem_key against json() by corpus and by
document shape (make bench, part 3).

    /usr/bin/python3 test/bench/shapes.py [--lib build/idem] [--docs 4000]
        [--runs 9] [--corpus DOCS.db] [--data PATH] [--sizes 4]
        [--only 'ROW|ROW']

Three tables.  Corpora: the documents idem is given in practice, each from
a seed: tool-call arguments (the bench's own, docgen.c, from the file
`bench --write-docs` writes: --corpus), GitHub-like events, numeric sensor
readings, twitter-like statuses with ids beyond 2^53.  Shapes: one shape of
document at a time, where the canonicalizer is fast and where it is not.
Sized shapes: the shapes that once cost more than linear time, each at four
sizes (up to 8 MB or 400 000 members), to show that the ratio does not grow
with the size.  For each row the documents go into an in-memory table, and
`SELECT count(f(a)) FROM d` runs for f = json, idem_canonical, idem_key (one
step: the time is SQLite's and the function's, not Python's), --runs times
each, the order of the three rotated from run to run; a ratio is the median
of the runs' ratios to json().  A sized row's document is repeated to make
~8 MB, so that each scan takes long enough to time, and each of its
samples repeats the scan for about --sample seconds of json() (0.1), after
one untimed scan of each function.  The shapes come in tables: SHAPES
(issue 35's own), NUMBER_SHAPES, HOSTILE, STRANGER (what a stranger tries
first) and ADVERSARY (what an adversary tries next, each also sized, and
the refusals among them: documents idem must refuse, each sized row a
scan of one document that fails, json() refusing it as well or not) and
ACCEPTANCE (what an acceptance run might try that those do not hold:
escaped names, hierarchical names, sorted input, text as tools send it,
halfway decimals, each also sized).  No targets: the tables
say what costs what (doc/performance.md says why).  --data PATH writes the
ratios to PATH.bars and PATH.sizes for test/bench/chart.gp.

    /usr/bin/python3 test/bench/shapes.py --instructions [--docs 400] ...

counts instructions instead (valgrind's callgrind, which a busy machine
does not disturb): for each row, the sqlite3 shell runs each query once
under callgrind on a file of the row's documents (a sized row: its one
document), and the same scan with no function (`count(coalesce(a, 0))`) is
subtracted from each, so that what is compared is the functions' own cost
per document, SQLite's per-row and per-call cost left out.
"""
import argparse
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
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
    if name == "\"%.17g\" doubles":
        return '{"v":[%s]}' % ",".join("%.17g" % (rnd() * r.choice([1, 100, 1e4]))
                                       for _ in range(200))
    if name == "\"%.17g\" doubles with exponents":
        return '{"v":[%s]}' % ",".join("%.17g" % (rnd() * 10.0 ** r.randint(-300, 300))
                                       for _ in range(200))
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
    if name == "subnormal \"%.17g\" doubles":
        return subnormals(200, r)
    if name == "40-digit decimals":
        return decimals_40(100, r)
    if name == "names, each a prefix of the next":
        return prefix_chain(60, r)
    if name in NUMBER_SHAPES:
        return NUMBER_SHAPES[name](200, r)
    if name == "names with a 200-byte prefix holding an escape":
        return escaped_prefix(1000, r, 200)
    if name == "names that sort otherwise in UTF-16":
        return utf16_names(400, r)
    if name == "names that sort otherwise in UTF-16, as \\u escapes":
        return utf16_escaped(400, r)
    if name in HOSTILE:
        return HOSTILE[name][0](HOSTILE[name][1], r)
    if name in STRANGER:
        return STRANGER[name][0](STRANGER[name][1], r)
    if name in ADVERSARY:
        return ADVERSARY[name][0](ADVERSARY[name][1], r)
    if name in ACCEPTANCE:
        return ACCEPTANCE[name][0](ACCEPTANCE[name][1], r)
    raise ValueError(name)


# The shapes of issue 35, each also sized below.
def subnormals(n, r):
    """Doubles below 2^-1022 (subnormal), as C's "%.17g" prints them."""
    return '{"v":[%s]}' % ",".join("%.17g" % (r.random() * 2.2250738585072014e-308)
                                   for _ in range(n))


def decimals_40(n, r):
    """Decimals of 40 significant digits, the '.' anywhere among them."""
    out = []
    for _ in range(n):
        d = str(r.randint(1, 9)) + "".join(r.choice("0123456789")
                                           for _ in range(38)) + str(r.randint(1, 9))
        k = r.randint(1, 39)
        out.append(("-" if r.random() < 0.3 else "") + d[:k] + "." + d[k:])
    return '{"v":[%s]}' % ",".join(out)


# Number shapes a hostile corpus might use (issue 35): each a document of
# n numbers.
def near_2_53(n, r):
    """Integers within 10^6 of +-2^53 (16 digits: beyond 15, not copied)."""
    return "[%s]" % ",".join(str(r.choice([1, -1]) * (2 ** 53 + r.randint(-10 ** 6, 10 ** 6)))
                             for _ in range(n))


def range_edges(n, r):
    """The ends of the range: the largest doubles, the least normal and
    subnormal ones and their neighbours, as repr() prints them."""
    import struct
    bits = [0x7fefffffffffffff, 0x0010000000000000, 0x000fffffffffffff,
            0x0000000000000001, 0x7fe0000000000000, 0x0000000000000002]
    out = []
    for _ in range(n):
        b = r.choice(bits) + r.choice([-1, 0, 1]) * r.randint(0, 1000)
        b = min(max(b, 1), 0x7fefffffffffffff)
        out.append(repr(struct.unpack("<d", struct.pack("<Q", b))[0]))
    out += ["1e308", "5e-324", "1.7976931348623157e308", "2.2250738585072014e-308"]
    return "[%s]" % ",".join(out[:n])


def long_exponents(n, r):
    """Exponents written with leading zeros and signs: 1.5e+0000000010,
    2E-00007, 3e0000."""
    return "[%s]" % ",".join("%d.%de%s%s%d" % (r.randint(1, 9), r.randint(0, 999),
                                               r.choice(["", "+", "-"]),
                                               "0" * r.randint(1, 12), r.randint(0, 300))
                             for _ in range(n))


def zeros(n, r):
    """Zeros: 0, -0, 0.0, -0.0, 0e5, -0.000e-3, 0.00000."""
    return "[%s]" % ",".join(r.choice(["0", "-0", "0.0", "-0.0", "0e5", "-0.000e-3",
                                       "0.00000", "0E0"]) for _ in range(n))


def trailing_zeros(n, r):
    """Numbers with many trailing zeros: 1.5000000000, 2500000000000000000000,
    12.000, 3.00000e+10, 7000000000000000000000000.0."""
    out = []
    for _ in range(n):
        d = str(r.randint(1, 999))
        k = r.randint(1, 30)
        out.append(r.choice([d + "." + str(r.randint(1, 9)) + "0" * k,
                             d + "0" * k, d + ".000" + "0" * k,
                             d + "." + str(r.randint(1, 9)) + "0" * k + "e+" + str(r.randint(1, 99)),
                             d + "0" * k + ".0"]))
    return "[%s]" % ",".join(out)


def digits_17(n, r):
    """Decimals of 17 random significant digits (not printed from a
    double), the '.' anywhere among them or before them."""
    out = []
    for _ in range(n):
        d = str(r.randint(1, 9)) + "".join(r.choice("0123456789") for _ in range(15)) + str(r.randint(1, 9))
        k = r.randint(0, 17)
        out.append("0." + "0" * r.randint(0, 5) + d if k == 0 else d[:k] + "." + d[k:] if k < 17 else d + ".5")
    return "[%s]" % ",".join(out)


def random_doubles(n, r):
    """Random doubles of every exponent (random bits), as repr() prints
    them."""
    import struct
    out = []
    while len(out) < n:
        v = struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0]
        if v == v and abs(v) != float("inf"):
            out.append(repr(v))
    return "[%s]" % ",".join(out)


NUMBER_SHAPES = {"integers near 2^53": near_2_53,
                 "the ends of the range (1e308, 5e-324)": range_edges,
                 "exponents with leading zeros": long_exponents,
                 "zeros (-0, 0.0, 0e5)": zeros,
                 "many trailing zeros": trailing_zeros,
                 "17 random digits": digits_17,
                 "random doubles (random bits)": random_doubles}


def prefix_chain(n, r):
    """n names, each a prefix of the next ("a", "aa", "aaa", ...), in
    random order."""
    ks = ["a" * i for i in range(1, n + 1)]
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)})


def escaped_prefix(n, r, nPre=1000):
    """n names sharing an nPre-byte prefix that holds one escape (a newline,
    written \\n, in its middle), then 6 digits."""
    p = "/srv/" + "p" * (nPre // 2 - 6) + "\n" + "q" * (nPre - nPre // 2 - 1)
    ks = set()
    while len(ks) < n:
        ks.add("%s%06d" % (p, r.randint(0, 999999)))
    ks = list(ks)
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)}, ensure_ascii=False)


UTF16_CHARS = ([chr(c) for c in range(0xff21, 0xff3b)]         # fullwidth A-Z
               + [chr(c) for c in range(0xe000, 0xe010)]       # private use
               + [chr(c) for c in range(0x1f600, 0x1f620)]     # emoji
               + [chr(c) for c in range(0x20000, 0x20010)]     # CJK ext. B
               + [chr(c) for c in range(0x4e00, 0x4e10)])      # CJK


def utf16_names(n, r, ascii=False):
    """n names of characters from U+E000..U+FFFF and the astral planes
    (and some CJK), whose UTF-16 order is not their code point order, in
    random order: half of 6-24 characters, half of 2-5 after a shared
    12-byte prefix; with ascii, as json.dumps() writes them by
    default (\\u escapes, surrogate pairs for the astral ones)."""
    ks = set()
    while len(ks) < n // 2:
        ks.add("".join(r.choice(UTF16_CHARS) for _ in range(r.randint(6, 24))))
    ks = list(ks)
    # and as many that share a 12-byte prefix, then 2-5 such characters
    # (their order is decided beyond the first 8 bytes)
    ks2 = set()
    while len(ks2) < n - n // 2:
        ks2.add("ユーザー" + "".join(r.choice(UTF16_CHARS)
                                  for _ in range(r.randint(2, 5))))
    ks += list(ks2)
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)}, ensure_ascii=ascii)


def utf16_escaped(n, r):
    return utf16_names(n, r, True)


# Shapes a hostile corpus might use (issue 35): each a generator of a
# document of n units, the n of its row of 400 a document, and what n
# counts; each is also swept by --sweep.
def deep_arrays(n, r):
    """Arrays nested 1000 deep (the limit), n/1000 times in an array."""
    return "[" + ",".join("[" * 999 + str(i) + "]" * 999
                          for i in range(max(1, n // 1000))) + "]"


def deep_objects(n, r):
    """Objects nested 1000 deep, each level's two members out of order,
    n/1000 times in an array."""
    one = ""
    for i in range(999):
        one = '{"z":%d,"a":%s}' % (i, one or "0")
    return "[" + ",".join([one] * max(1, n // 1000)) + "]"


def tiny_objects(n, r):
    """n objects of two members, out of order, in an array."""
    return "[" + ",".join('{"b":%d,"a":%d}' % (i, i % 7) for i in range(n)) + "]"


def empty_objects(n, r):
    return "[" + ",".join(["{}"] * n) + "]"


def escapes_everywhere(n, r):
    """A string of n characters, each written as an escape: the short
    ones, \\u00XX control characters, and \\u escapes of ASCII and of
    BMP text (which canonical JSON writes raw)."""
    out = []
    for _ in range(n):
        c = r.randint(0, 5)
        if c == 0:
            out.append(r.choice(['\\n', '\\t', '\\"', '\\\\', '\\/', '\\b', '\\f', '\\r']))
        elif c == 1:
            out.append("\\u%04x" % r.randint(0, 0x1f))
        elif c == 2:
            out.append("\\u%04X" % r.randint(0x20, 0x7e))
        else:
            out.append("\\u%04x" % r.randint(0x100, 0xd7ff))
    return '{"s":"%s"}' % "".join(out)


def control_chars(n, r):
    """A string of n control characters, \\u0000..\\u001f and \\u007f."""
    return '{"s":"%s"}' % "".join("\\u%04x" % r.choice(list(range(32)) + [127])
                                  for _ in range(n))


def surrogate_pairs(n, r):
    """A string of n astral characters as \\u surrogate pairs."""
    return json.dumps({"s": "".join(chr(r.randint(0x10000, 0x10ffff))
                                    for _ in range(n))})


def astral_raw(n, r):
    return json.dumps({"s": "".join(chr(r.randint(0x10000, 0x10ffff))
                                    for _ in range(n))}, ensure_ascii=False)


def long_equal_prefix(n, r):
    """n names equal up to their last byte but one: a 64-byte prefix,
    then 4 characters, in random order."""
    ks = ["/" + "q" * 63 + "%04d" % i for i in range(n)]
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)})


def duplicate_looking(n, r):
    """n names in pairs that look alike: one with a \\u escape, the other
    a distinct name of the same look (a combining accent, a trailing
    space, another case), in random order."""
    ks = []
    for i in range(n // 2):
        ks.append("caf\\u00e9%d" % i)
        ks.append(r.choice(["cafe\u0301%d", "Caf\u00e9%d", "caf\u00e9%d "]) % i)
    r.shuffle(ks)
    return "{" + ",".join('"%s":%d' % (k, i) for i, k in enumerate(ks)) + "}"


def whitespace_heavy(n, r):
    """n members, pretty-printed with runs of spaces, tabs and newlines."""
    ws = lambda: "".join(r.choice(" \t\n\r") for _ in range(r.randint(1, 12)))
    return "{" + ",".join("%s\"m%d\"%s:%s[%s1%s,%s2%s]%s" % (ws(), i, ws(), ws(), ws(), ws(), ws(), ws(), ws())
                          for i in range(n)) + "}"


def solidus(n, r):
    """n URLs written as PHP writes them (http:\\/\\/...)."""
    return json.dumps({"u": ["https://example.com/a/%d/b?x=%d" % (i, r.randint(0, 9999))
                             for i in range(n)]}).replace("/", "\\/")


HOSTILE = {
    "arrays 1000 deep": (deep_arrays, 1000, "levels"),
    "objects 1000 deep, out of order": (deep_objects, 1000, "levels"),
    "many tiny objects, out of order": (tiny_objects, 200, "objects"),
    "a wide array of empty objects": (empty_objects, 1000, "objects"),
    "all escapes": (escapes_everywhere, 600, "characters"),
    "control characters": (control_chars, 600, "characters"),
    "astral as surrogate pairs": (surrogate_pairs, 300, "characters"),
    "astral, raw": (astral_raw, 300, "characters"),
    "names equal to their last 4 bytes": (long_equal_prefix, 200, "names"),
    "duplicate-looking names": (duplicate_looking, 200, "names"),
    "whitespace-heavy": (whitespace_heavy, 100, "members"),
    "escaped solidus (\\/)": (solidus, 60, "URLs"),
}


# Shapes a stranger would try (round four, probe): what an adversarial
# benchmarker of an RFC 8785 canonicalizer writes first, each a generator
# of a document of n units as in HOSTILE.
def pretty_printed(n, r):
    """n GitHub-like events, pretty-printed as json.dumps(indent=4) does
    (4-space indentation, newlines, ": " and ", ")."""
    return json.dumps([json.loads(github_event(r, i)) for i in range(n)],
                      indent=4, ensure_ascii=False)


def pretty_tabs_crlf(n, r):
    """n members of small objects and arrays, indented with tabs and
    ended with CRLF, two levels deep."""
    return json.dumps({"item%d" % i: {"id": i, "tags": ["a", "b"], "on": True}
                       for i in range(n)}, indent="\t").replace("\n", "\r\n")


def small_objects(n, r):
    """n objects of 1-3 members (names of 1-6 letters, sorted or not), in
    an array."""
    out = []
    for i in range(n):
        k = r.randint(1, 3)
        names = r.sample(["id", "v", "name", "x", "y", "ok", "type", "ts"], k)
        out.append("{" + ",".join('"%s":%s' % (m, r.choice([str(i), '"s%d"' % i, "true", "null", "1.5"]))
                                  for m in names) + "}")
    return "[" + ",".join(out) + "]"


def literals(n, r):
    """n of true, false and null, at random, in an array."""
    return "[" + ",".join(r.choice(["true", "false", "null"]) for _ in range(n)) + "]"


def pairs(n, r):
    """n arrays of two numbers ([[x,y],...], coordinates)."""
    return "[" + ",".join("[%d,%d]" % (r.randint(-999, 999), r.randint(0, 99999))
                          for _ in range(n)) + "]"


def small_arrays_deep(n, r):
    """n arrays 4 deep ([[[[1]]]]), each holding an integer, in an array."""
    return "[" + ",".join("[[[[%d]]]]" % i for i in range(n)) + "]"


def int_lengths(n, r):
    """n integers of every length 1-20 digits, a third negative, some -0."""
    out = []
    for i in range(n):
        d = r.randint(1, 20)
        v = str(r.randint(1, 9)) + "".join(r.choice("0123456789") for _ in range(d - 1))
        out.append(r.choice(["", "", "-"]) + v if i % 17 else "-0")
    return "[" + ",".join(out) + "]"


def format_edges(n, r):
    """n numbers at the edges of ECMAScript's format: 1E+2, 1e21, 1e20,
    1e-7, 1e-6, 0.1, 123456789012345680000, 0.000001, 1.5e-7, 9.999e20."""
    pool = ["1E+2", "1e21", "1e20", "1e-7", "1e-6", "0.1", "0.2", "0.3",
            "123456789012345680000", "123456789012345678901", "0.000001",
            "0.0000001", "1.5e-7", "9.999999999999999e20", "1E21", "1e+21",
            "100000000000000000000", "1000000000000000000000", "5e-7",
            "4.35", "0.5", "-1e-7", "1e0", "2.5E-3", "1e-5"]
    return "[" + ",".join(r.choice(pool) for _ in range(n)) + "]"


def short_decimals(n, r):
    """n decimals of 1-3 digits after the point (0.1, 2.75, 13.5)."""
    return "[" + ",".join("%d.%d" % (r.randint(0, 99), r.randint(1, 999)) for _ in range(n)) + "]"


def text_2byte(n, r):
    """A string of n characters, all 2-byte UTF-8 (Latin-1 letters and
    Cyrillic), raw."""
    cs = [chr(c) for c in list(range(0xc0, 0x100)) + list(range(0x410, 0x450))]
    return json.dumps({"s": "".join(r.choice(cs) for _ in range(n))}, ensure_ascii=False)


def text_2byte_words(n, r):
    """n Cyrillic words of 3-10 letters, separated by spaces, raw."""
    return json.dumps({"s": " ".join("".join(chr(r.randint(0x430, 0x44f))
                                             for _ in range(r.randint(3, 10)))
                                     for _ in range(n))}, ensure_ascii=False)


def emoji_only(n, r):
    """A string of n emoji (4-byte UTF-8), raw, as a top-level string."""
    return json.dumps("".join(chr(r.randint(0x1f300, 0x1faff)) for _ in range(n)),
                      ensure_ascii=False)


def escape_at_end(n, r):
    """A string of n ASCII bytes with one escape (\\n) at its end."""
    return '{"s":"%s\\n"}' % "".join(r.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(n))


def escape_at_start(n, r):
    """A string of n ASCII bytes with one escape (\\t) at its start."""
    return '{"s":"\\t%s"}' % "".join(r.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(n))


def short_strings(n, r):
    """n strings of 0-8 ASCII letters, in an array."""
    return json.dumps(["".join(r.choice("abcdefgh") for _ in range(r.randint(0, 8)))
                       for _ in range(n)])


def empties(n, r):
    """n empty strings, objects and arrays, mixed, in an array, and an
    object of n/4 members each empty."""
    return '{"a":[%s],"o":{%s}}' % (",".join(r.choice(['""', "{}", "[]"]) for _ in range(n)),
                                    ",".join('"e%d":%s' % (i, r.choice(['""', "{}", "[]"]))
                                             for i in range(n // 4)))


def same_length_names(n, r):
    """n names of exactly 8 random lower-case letters, in random order."""
    ks = set()
    while len(ks) < n:
        ks.add("".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8)))
    return json.dumps({k: i for i, k in enumerate(ks)})


def numeric_names(n, r):
    """n names that look like numbers ("0", "1", ... "n-1", as a JSON
    object with integer-like keys), in random order."""
    ks = [str(i) for i in range(n)]
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)})


def one_long_string(n, r):
    """One string of n ASCII bytes (no escape), as a top-level string."""
    return '"%s"' % ("lorem ipsum dolor sit amet " * (n // 27 + 1))[:n]


def top_scalars(n, r):
    """A top-level scalar (one of 42, -1.5, true, null, "hello")."""
    return r.choice(["42", "-1.5", "true", "null", '"hello"', "0", '""'])


def sorted_input(n, r):
    """n members already in canonical order (what a canonicalizer's
    output looks like when it is fed back)."""
    return json.dumps({"k%05d" % i: "v%d" % i for i in range(n)}, separators=(",", ":"))


def big_integers(n, r):
    """n integers of 21-40 digits (beyond 2^64), a third negative."""
    return "[" + ",".join(r.choice(["", "", "-"]) + str(r.randint(1, 9))
                          + "".join(r.choice("0123456789") for _ in range(r.randint(20, 39)))
                          for _ in range(n)) + "]"


def huge_integer(n, r):
    """One integer of n digits (1 then random digits), in an array of 4."""
    return "[%s]" % ",".join(str(r.randint(1, 9)) + "".join(r.choice("0123456789") for _ in range(n - 1))
                             for _ in range(4))


def long_space_runs(n, r):
    """n members with a run of 200 spaces around every token."""
    w = " " * 200
    return "{" + ",".join('%s"m%d"%s:%s%d%s' % (w, i, w, w, i, w) for i in range(n)) + "}"


def deep_indent(n, r):
    """n leaves 12 levels deep, json.dumps(indent=8): lines of up to 100
    spaces of indentation."""
    d = ["leaf%d" % i for i in range(n)]
    for lvl in range(12):
        d = {"level%d" % lvl: d, "n": lvl}
    return json.dumps(d, indent=8)


def long_names(n, r):
    """n names of 256 random letters (they differ in their first bytes)."""
    return json.dumps({"".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(256)): i
                       for i in range(n)})


def mixed_deep(n, r):
    """{"a":[{"a":[...]}]} n levels deep (objects in arrays in objects)."""
    return '{"a":[' * n + "0" + "]}" * n


def json_in_string(n, r):
    """n GitHub-like events, each a JSON document inside a string (\"
    every few bytes), in an array."""
    return json.dumps([github_event(r, i) for i in range(n)])


def go_html(n, r):
    """n HTML fragments as Go's encoding/json writes them (<, > and &
    as \\u003c, \\u003e, \\u0026), in an array."""
    return json.dumps(['<a href="/p/%d?x=1&y=%d">item %d</a> & <b>more</b>' % (i, r.randint(0, 99), i)
                       for i in range(n)]).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def latin_escaped(n, r):
    """n words of Latin-1 and Cyrillic letters as Python's json.dumps
    writes them by default (\\u00e9, \\u0434: 2-byte characters as \\u
    escapes)."""
    cs = [chr(c) for c in list(range(0xe0, 0x100)) + list(range(0x430, 0x450))] + list("abcdefg")
    return json.dumps({"s": " ".join("".join(r.choice(cs) for _ in range(r.randint(3, 10)))
                                     for _ in range(n))})


def records(n, r):
    """n records of 12 members in the order a producer writes them (a
    table's columns: not sorted), in an array (a database dump)."""
    out = []
    for i in range(n):
        out.append({"id": i, "username": "user%d" % r.randint(0, 99999),
                    "email": "u%d@example.com" % i, "first_name": r.choice(WORDS),
                    "last_name": r.choice(WORDS_EN), "age": r.randint(18, 90),
                    "is_active": r.random() < 0.8, "balance": round(r.uniform(0, 1e4), 2),
                    "created_at": "2024-01-%02dT10:00:00Z" % r.randint(1, 28),
                    "address": None, "score": r.random(), "tags": ["a", "b"]})
    return json.dumps(out, ensure_ascii=False)


RFC8785 = r"""{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"""
RFC8785_WEIRD = r"""{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}"""


def rfc8785(n, r):
    """RFC 8785's own examples (section 3.2.2's input and section
    3.2.3's sorting example), as the RFC prints them."""
    return r.choice([RFC8785, RFC8785_WEIRD])


def powers_written_out(n, r):
    """n powers of ten written out in full: 1 then up to 300 zeros, or
    0. then up to 300 zeros then 1 (and negative)."""
    out = []
    for _ in range(n):
        k = r.randint(1, 300)
        out.append(r.choice(["", "-"]) + r.choice(["1" + "0" * k, "0." + "0" * (k - 1) + "1"]))
    return "[" + ",".join(out) + "]"


STRANGER = {
    "pretty-printed (indent=4) events": (pretty_printed, 4, "events"),
    "tabs and CRLF, indented": (pretty_tabs_crlf, 60, "members"),
    "small objects of 1-3 members": (small_objects, 200, "objects"),
    "true, false, null": (literals, 1000, "literals"),
    "pairs [x,y]": (pairs, 300, "pairs"),
    "arrays 4 deep ([[[[1]]]])": (small_arrays_deep, 300, "arrays"),
    "integers of 1-20 digits, -0": (int_lengths, 200, "numbers"),
    "numbers at the format's edges (1e21, 1e-7)": (format_edges, 200, "numbers"),
    "short decimals (0.1, 2.75)": (short_decimals, 300, "numbers"),
    "2-byte text (Latin-1, Cyrillic)": (text_2byte, 1000, "characters"),
    "Cyrillic words": (text_2byte_words, 200, "words"),
    "emoji only, top-level string": (emoji_only, 500, "characters"),
    "long string, one escape at the end": (escape_at_end, 4000, "bytes"),
    "long string, one escape at the start": (escape_at_start, 4000, "bytes"),
    "short strings": (short_strings, 300, "strings"),
    "empty strings, objects, arrays": (empties, 300, "values"),
    "names all 8 bytes long": (same_length_names, 200, "names"),
    "numeric-looking names": (numeric_names, 200, "names"),
    "one long string, top level": (one_long_string, 4000, "bytes"),
    "a top-level scalar": (top_scalars, 1, "values"),
    "{} and []": (lambda n, r: r.choice(["{}", "[]"]), 1, "values"),
    "one member ({\"a\":1})": (lambda n, r: '{"%s":%d}' % (r.choice("abcxyz"), r.randint(0, 99)), 1, "members"),
    "members already in order": (sorted_input, 200, "members"),
    "integers of 21-40 digits": (big_integers, 100, "numbers"),
    "integers of 300 digits": (huge_integer, 300, "digits"),
    "runs of 200 spaces between tokens": (long_space_runs, 10, "members"),
    "indent=8, 12 deep": (deep_indent, 100, "leaves"),
    "names of 256 random letters": (long_names, 20, "names"),
    "{\"a\":[{\"a\":[...]}]} 490 deep": (mixed_deep, 490, "levels"),
    "JSON inside a string": (json_in_string, 4, "events"),
    "Go's \\u003c, \\u003e, \\u0026": (go_html, 40, "fragments"),
    "2-byte text as \\u escapes (ensure_ascii)": (latin_escaped, 200, "words"),
    "records of 12 members, a table's column order": (records, 20, "records"),
    "RFC 8785's examples": (rfc8785, 1, "documents"),
    "powers of ten written out (1000...0, 0.000...1)": (powers_written_out, 20, "numbers"),
}


# Shapes an adversary would try next (round four, tenth session): what a
# stranger benchmarking an RFC 8785 canonicalizer tries once the shapes
# above are in, each a generator of a document of n units as in HOSTILE,
# with the n of its row of 400 a document and the four n of its sized
# rows (up to 100 000 names or ~8 MB).  The refusals ("refused" below)
# are documents idem must refuse (a duplicate name, invalid JSON, a lone
# surrogate at the end of a large document): how fast is the refusal?
# Their rows are sized only, each a scan of one document (a failing scan
# stops at its first row); json() refuses the invalid ones as well and
# accepts the duplicates and the lone surrogate.
ASTRAL = (0x10000, 0x10ffff)


def _astral(r):
    return chr(r.randint(*ASTRAL))


def names_4byte(n, r, ascii=False):
    """n names of 1-6 characters from the astral planes (4-byte UTF-8,
    surrogate pairs in UTF-16), in random order; with ascii, as
    \\ud83d\\ude00 pairs."""
    ks = set()
    while len(ks) < n:
        ks.add("".join(_astral(r) for _ in range(r.randint(1, 6))))
    ks = list(ks)
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)}, ensure_ascii=ascii)


def names_4byte_escaped(n, r):
    return names_4byte(n, r, True)


def last_char_names(n, r):
    """n names equal up to their last character: a 60-byte prefix, then
    one astral character (its last 2-3 bytes differ), in random order."""
    p = "/srv/data/" + "x" * 50
    ks = [p + chr(0x10000 + i * 7) for i in range(n)]
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)}, ensure_ascii=False)


def cjk_prefix_names(n, r):
    """n names sharing a 1 KB prefix of CJK characters (3-byte UTF-8),
    then 6 digits, in random order."""
    p = "".join(chr(0x4e00 + (i * 37) % 20000) for i in range(342))
    ks = set()
    while len(ks) < n:
        ks.add("%s%06d" % (p, r.randint(0, 999999)))
    ks = list(ks)
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)}, ensure_ascii=False)


def iso_names(n, r):
    """n ISO-8601 timestamps as names (2024-01-DDTHH:MM:SS.mmmZ: the
    first 8 bytes the same), in random order."""
    ks = set()
    while len(ks) < n:
        ks.add("2024-01-%02dT%02d:%02d:%02d.%03dZ" % (r.randint(1, 31), r.randint(0, 23),
                                                       r.randint(0, 59), r.randint(0, 59),
                                                       r.randint(0, 999)))
    ks = list(ks)
    r.shuffle(ks)
    return json.dumps({k: r.randint(0, 999) for k in ks})


def uuid_names(n, r):
    """n random UUIDs (36 bytes, lower-case hex) as names."""
    ks = ["%08x-%04x-4%03x-%04x-%012x" % (r.getrandbits(32), r.getrandbits(16), r.getrandbits(12),
                                          0x8000 | r.getrandbits(14), r.getrandbits(48))
          for _ in range(n)]
    return json.dumps({k: i for i, k in enumerate(ks)})


def number_names(n, r):
    """n names that are numbers of every look ("-17", "0.25", "3.5e+20",
    "1024", ids of 19 digits), in random order."""
    ks = set()
    while len(ks) < n:
        c = r.randint(0, 3)
        ks.add(str(r.randint(-10 ** 6, 10 ** 6)) if c == 0 else
               repr(round(r.uniform(-1000, 1000), r.randint(1, 6))) if c == 1 else
               repr(r.random() * 10.0 ** r.randint(-30, 30)) if c == 2 else
               str(r.randint(10 ** 18, 9 * 10 ** 18)))
    ks = list(ks)
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)})


NAMES_MID = ["id", "name", "email", "phone", "address", "city", "zip", "country",
             "created_at", "updated_at", "status", "type", "owner", "tags", "score",
             "lat", "lon", "price", "currency", "quantity", "sku", "title", "body",
             "url", "active", "deleted", "version", "parent", "children", "notes",
             "color", "size", "weight", "height", "width", "depth", "rank", "group",
             "region", "locale", "timezone", "source", "target", "label", "value",
             "min", "max", "mean", "count", "flags"]


def mid_objects(n, r):
    """n objects of 20-50 members each (a record's fields, short values),
    each in an order of its own, in an array."""
    out = []
    for i in range(n):
        names = r.sample(NAMES_MID, r.randint(20, 50))
        out.append("{" + ",".join('"%s":%s' % (k, r.choice([str(r.randint(0, 99999)), '"v%d"' % i,
                                                                 "true", "null", "%.2f" % r.uniform(0, 999)]))
                                  for k in names) + "}")
    return "[" + ",".join(out) + "]"


def real_floats(n, r):
    """n floats as real data holds them: sums as repr() prints them
    (0.1+0.2 = 0.30000000000000004), latitudes and longitudes of 5-7
    decimals, prices (19.99), percentages, measures times 1.1."""
    out = []
    for _ in range(n):
        c = r.randint(0, 4)
        out.append(repr(r.randint(1, 99) / 10 + r.randint(1, 99) / 100) if c == 0 else
                   repr(round(r.uniform(-90, 90), r.randint(5, 7))) if c == 1 else
                   repr(round(r.uniform(-180, 180), r.randint(5, 7))) if c == 2 else
                   "%d.%02d" % (r.randint(0, 999), r.choice([99, 95, 49, 0, r.randint(0, 99)])) if c == 3 else
                   repr(r.randint(1, 1000) * 1.1))
    return "[" + ",".join(out) + "]"


def text_3byte(n, r):
    """A string of n characters, CJK, kana and Hangul (3-byte UTF-8),
    with a space or an ideographic full stop every few, raw."""
    out = []
    for i in range(n):
        c = r.randint(0, 9)
        out.append(chr(r.randint(0x4e00, 0x9fff)) if c < 5 else chr(r.randint(0x3041, 0x30ff)) if c < 7 else
                   chr(r.randint(0xac00, 0xd7a3)) if c < 9 else r.choice([" ", "\u3002", "\u3001"]))
    return json.dumps({"t": "".join(out)}, ensure_ascii=False)


def bmp_escapes_mixed(n, r):
    """n words of ASCII letters, raw BMP letters and \\u escapes of BMP
    letters (Greek, Cyrillic, CJK, Hangul; upper- and lower-case hex),
    mixed in each word."""
    lets = [c for a, b in ((0x391, 0x3c9), (0x410, 0x44f), (0x4e00, 0x4fff), (0xac00, 0xac80))
            for c in range(a, b)]
    words = []
    for _ in range(n):
        w = []
        for _ in range(r.randint(3, 9)):
            c = r.randint(0, 2)
            if c == 0:
                w.append(r.choice("abcdefghijklmnopqrstuvwxyz"))
            elif c == 1:
                w.append(chr(r.choice(lets)))
            else:
                w.append(r.choice(["\\u%04x", "\\u%04X"]) % r.choice(lets))
        words.append("".join(w))
    return '{"s":"%s"}' % " ".join(words)


def nested_mixed(n, r):
    """n copies, in an array, of objects and arrays mixed 998 deep: each
    object's three members out of order, each array holding a number, the
    next level and a string."""
    one = "0"
    for i in range(499):
        one = '{"z":%d,"m":[%d,%s,"s%d"],"a":"%s"}' % (i, i, one, i, "x" * (i % 7))
    return "[" + ",".join([one] * max(1, n)) + "]"


def wide_big_values(n, r):
    """One object of n members in random order, each value an object of
    ~800 bytes (members in order): the sort moves names whose values are
    far apart."""
    ks = ["member%06d" % i for i in range(n)]
    r.shuffle(ks)
    v = json.dumps({"body": "lorem ipsum " * 40, "id": 1, "tags": ["a", "b", "c"],
                    "url": "https://example.com/" + "p" * 200}, sort_keys=True,
                   separators=(",", ":"))
    return "{" + ",".join('"%s":%s' % (k, v) for k in ks) + "}"


def path_names(n, r, php=True):
    """n file paths as names (/srv/data/NNN/fileNNNNN.txt), in random
    order; with php, as PHP's json_encode() writes them (every '/' as
    \\/, four escapes a name)."""
    ks = ["/srv/data/%d/file%d.txt" % (r.randint(0, 999), i) for i in range(n)]
    r.shuffle(ks)
    d = json.dumps({k: i for i, k in enumerate(ks)})
    return d.replace("/", "\\/") if php else d


def path_names_raw(n, r):
    return path_names(n, r, False)


def exact_expansions(n, r):
    """n doubles of 1e-20 to 1e20 written as their exact decimal
    expansions, as Python's Decimal(x) and Java's new BigDecimal(x) print
    them (0.1000000000000000055511151231257827021181583404541015625): up
    to ~90 digits."""
    from decimal import Decimal
    return "[" + ",".join(str(Decimal(r.random() * 10.0 ** r.randint(-20, 20)))
                          for _ in range(n)) + "]"


def zero_run(n, r):
    """One number with n zeros after its point, then a 1 (0.000...1:
    below the least double, canonical 0), in an array."""
    return "[0." + "0" * n + "1]"


def _digits(r, k):
    """k random digits, the first and the last not 0."""
    if k == 1:
        return str(r.randint(1, 9))
    return (str(r.randint(1, 9)) + "".join(r.choice("0123456789") for _ in range(k - 2))
            + str(r.randint(1, 9)))


def zeros_then_exponent(n, r):
    """n decimals 0.000ddd with an exponent that takes them beyond
    1e-307: 1 to 40 zeros after the point, 1 to 17 digits, the value
    1e-345 to 1e-308 (a subnormal, or 0)."""
    out = []
    for _ in range(n):
        k = r.randint(1, 40)
        x = r.randint(308, 345) - k - 1
        out.append("0.%s%se-%d" % ("0" * k, _digits(r, r.randint(1, 17)), x))
    return "[" + ",".join(out) + "]"


def long_beyond_range(n, r):
    """n decimals of 19 to 90 digits with an exponent beyond 1e-307
    (d.ddd...e-3NN, a subnormal or 0; one in ten 1.0-1.6ddd...e+308)."""
    out = []
    for _ in range(n):
        d = _digits(r, r.randint(19, 90))
        if r.random() < 0.1:
            out.append("1.%d%se+308" % (r.randint(0, 6), d[2:]))
        else:
            out.append("%s.%se-%d" % (d[0], d[1:], r.randint(308, 345)))
    return "[" + ",".join(out) + "]"


def integers_exponent(n, r):
    """n integers of 18 to 25 digits with an exponent
    (12345678901234567890e5, 2.5 in 10 negative, e and E, a sign)."""
    return "[" + ",".join("%s%s%s%d" % (_digits(r, r.randint(18, 25)), r.choice("eE"),
                                        r.choice(["", "+", "-"]), r.randint(0, 30))
                          for _ in range(n)) + "]"


def subnormals_deep(n, r):
    """Subnormal doubles below 1e-309 (1e-323 to 1e-310), as C's "%.17g"
    prints them."""
    return "[" + ",".join("%.17g" % (r.random() * 10.0 ** -r.randint(309, 322))
                          for _ in range(n)) + "]"


# The refusals.
def duplicate_at_end(n, r):
    """One object of n names in random order whose last name repeats one
    near the start (refused: a duplicate name)."""
    ks = ["k%07d" % i for i in range(n - 1)]
    r.shuffle(ks)
    ks.append(ks[1])
    return "{" + ",".join('"%s":%d' % (k, i) for i, k in enumerate(ks)) + "}"


def duplicate_escaped(n, r):
    """As above, the repeated name written with a \\u escape (a
    duplicate only once unescaped)."""
    ks = ["k%07d" % i for i in range(n - 1)]
    r.shuffle(ks)
    ks.append("\\u006b" + ks[1][1:])
    return "{" + ",".join('"%s":%d' % (k, i) for i, k in enumerate(ks)) + "}"


def _filler(n, r):
    """~n bytes of an array of short events (numbers, strings, objects)."""
    one = '{"id":%d,"v":[1.5,true,null,"text"],"s":"hello world"}'
    out, size = [], 0
    i = 0
    while size < n:
        s = one % i
        out.append(s)
        size += len(s) + 1
        i += 1
    return ",".join(out)


def invalid_at_end(n, r):
    """~n bytes of a valid array, its closing bracket missing and a
    stray comma at the end (refused by both)."""
    return "[" + _filler(n, r) + ","


def bad_number_at_end(n, r):
    """~n bytes of a valid array, then a number with a leading zero (01)
    as its last element (refused by both)."""
    return "[" + _filler(n, r) + ",01]"


def lone_surrogate_at_end(n, r):
    """~n bytes of a valid array, then a string holding a lone surrogate
    (\\ud83d) as its last element (refused by idem; json() accepts it)."""
    return "[" + _filler(n, r) + ',"\\ud83d"]'


def control_at_end(n, r):
    """A string of ~n ASCII bytes with a raw tab (unescaped) at its end
    (refused by both)."""
    return '{"s":"%s\t"}' % ("lorem ipsum dolor sit amet " * (n // 27 + 1))[:n]


_K, _M = 1000, 1 << 20
# name: (generator, n of its row, what n counts, the four n of its sized
# rows, refused)
ADVERSARY = {
    "names of 4-byte characters": (names_4byte, 200, "names", [12500, 25000, 50000, 100000], False),
    "names of 4-byte characters as \\u surrogate pairs": (names_4byte_escaped, 200, "names",
                                                          [12500, 25000, 50000, 100000], False),
    "names equal but for their last character (4-byte)": (last_char_names, 200, "names",
                                                          [12500, 25000, 50000, 100000], False),
    "names sharing a 1 KB prefix of CJK": (cjk_prefix_names, 20, "names", [1000, 2000, 4000, 8000], False),
    "ISO-8601 timestamps as names": (iso_names, 200, "names", [12500, 25000, 50000, 100000], False),
    "UUIDs as names": (uuid_names, 200, "names", [12500, 25000, 50000, 100000], False),
    "numbers of every look as names": (number_names, 200, "names", [12500, 25000, 50000, 100000], False),
    "short strings, 8 MB": (short_strings, 300, "strings", [125000, 250000, 500000, 1000000], False),
    "mid-sized objects (20-50 members), each out of order": (mid_objects, 4, "objects",
                                                             [2000, 4000, 8000, 16000], False),
    "floats from real data (0.1+0.2, lat/long, prices)": (real_floats, 200, "numbers",
                                                          [100000, 200000, 400000, 800000], False),
    "numbers at the format's edges, sized": (format_edges, 200, "numbers",
                                             [125000, 250000, 500000, 1000000], False),
    "3-byte text (CJK, kana, Hangul)": (text_3byte, 1000, "characters",
                                        [330000, 660000, 1330000, 2660000], False),
    "\\u escapes of BMP letters, mixed with raw letters": (bmp_escapes_mixed, 100, "words",
                                                          [50000, 100000, 200000, 400000], False),
    "objects and arrays mixed 998 deep": (nested_mixed, 1, "copies", [56, 112, 224, 448], False),
    "wide object, values of ~800 bytes, random order": (wide_big_values, 10, "members",
                                                        [1250, 2500, 5000, 10000], False),
    "paths as names, PHP's \\/": (path_names, 200, "names", [12500, 25000, 50000, 100000], False),
    "paths as names": (path_names_raw, 200, "names", [12500, 25000, 50000, 100000], False),
    "exact decimal expansions of doubles (Decimal(x))": (exact_expansions, 100, "numbers",
                                                         [17500, 35000, 70000, 140000], False),
    "a run of zeros after the point (0.000...1)": (zero_run, 1000, "zeros",
                                                   [1 * _M, 2 * _M, 4 * _M, 8 * _M], False),
    "zeros then an exponent beyond 1e-307 (0.000ddde-3NN)": (zeros_then_exponent, 200, "numbers",
                                                            [30000, 60000, 120000, 240000], False),
    "long digits beyond 1e-307 (d.ddd...e-3NN, 19-90 digits)": (long_beyond_range, 100, "numbers",
                                                               [17500, 35000, 70000, 140000], False),
    "integers with an exponent (12345678901234567890e5)": (integers_exponent, 200, "numbers",
                                                         [40000, 80000, 160000, 320000], False),
    "subnormal \"%.17g\" doubles below 1e-309": (subnormals_deep, 200, "numbers",
                                                  [45000, 90000, 180000, 360000], False),
    "refused: a duplicate name at the end": (duplicate_at_end, 200, "names",
                                             [12500, 25000, 50000, 100000], True),
    "refused: a duplicate name at the end, as a \\u escape": (duplicate_escaped, 200, "names",
                                                             [12500, 25000, 50000, 100000], True),
    "refused: invalid JSON at the end (a stray comma)": (invalid_at_end, 4 * _K, "bytes",
                                                        [1 * _M, 2 * _M, 4 * _M, 8 * _M], True),
    "refused: a leading zero at the end (01)": (bad_number_at_end, 4 * _K, "bytes",
                                               [1 * _M, 2 * _M, 4 * _M, 8 * _M], True),
    "refused: a lone surrogate at the end": (lone_surrogate_at_end, 4 * _K, "bytes",
                                            [1 * _M, 2 * _M, 4 * _M, 8 * _M], True),
    "refused: a raw tab at the end of a long string": (control_at_end, 4 * _K, "bytes",
                                                      [1 * _M, 2 * _M, 4 * _M, 8 * _M], True),
}


# Shapes the acceptance run might try (round four, fourteenth session,
# issue 35): what an independent acceptance run could bring that the
# tables above do not hold, each a generator of a document of n units as
# in ADVERSARY (the n of its row of 400 a document, the four n of its
# sized rows, up to 100 000 names or ~8 MB).
def windows_path_names(n, r):
    """n Windows paths as names (C:\\\\Users\\\\uN\\\\...: every '\\'
    written \\\\, an escape that the canonical text keeps), in random
    order."""
    ks = ["C:\\Users\\u%d\\Documents\\file%d.txt" % (r.randint(0, 999), i) for i in range(n)]
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)})


def quoted_names(n, r):
    """n SQL-quoted column names ("\\"t\\".\\"colN\\"": four \\" a name,
    kept by the canonical text), in random order."""
    ks = ['"%s"."col%d"' % (r.choice(["users", "orders", "items"]), i) for i in range(n)]
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)})


DOTTED = [["spec", "metadata", "status"], ["template", "selector", "labels"],
          ["spec", "annotations"], ["containers", "volumes", "initContainers"], None,
          ["env", "ports", "volumeMounts", "resources"], None,
          ["name", "value", "valueFrom", "containerPort"]]


def dotted_names(n, r):
    """n flattened configuration keys as names
    (spec.template.spec.containers.3.env.17.name: prefixes shared at
    every depth), in random order."""
    ks = set()
    while len(ks) < n:
        ks.add(".".join(str(r.randint(0, 49)) if c is None else r.choice(c) for c in DOTTED))
    ks = list(ks)
    r.shuffle(ks)
    return json.dumps({k: r.randint(0, 9) for k in ks})


def sorted_wide(n, r):
    """One object of n members already in order (k0000000 ...)."""
    return json.dumps({"k%07d" % i: i for i in range(n)}, separators=(",", ":"))


def nearly_sorted(n, r):
    """One object of n members in order but 1 in 100, moved anywhere."""
    ks = ["k%07d" % i for i in range(n)]
    for _ in range(n // 100):
        i, j = r.randrange(n), r.randrange(n)
        ks[i], ks[j] = ks[j], ks[i]
    return json.dumps({k: i for i, k in enumerate(ks)}, separators=(",", ":"))


def organ_pipe(n, r):
    """One object of n members, the even ones in order, then the odd
    ones in reverse order (two runs, one each way)."""
    ks = ["k%07d" % i for i in range(0, n, 2)] + ["k%07d" % i for i in reversed(range(1, n, 2))]
    return json.dumps({k: i for i, k in enumerate(ks)}, separators=(",", ":"))


def prefix_100(n, r):
    """n names sharing a 100-byte prefix, then 6 random digits, in random
    order."""
    p = "https://example.com/api/v2/organizations/acme/projects/" + "x" * 45
    ks = set()
    while len(ks) < n:
        ks.add("%s%06d" % (p, r.randint(0, 999999)))
    ks = list(ks)
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)})


ID_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"


def short_names(n, r):
    """n names of 1-3 bytes (letters, digits, '_'), in random order."""
    ks = set()
    while len(ks) < n:
        ks.add("".join(r.choice(ID_CHARS) for _ in range(r.randint(1 if n < 60 else 2, 3))))
    ks = list(ks)
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)})


def ascii_escape_names(n, r):
    """n names each holding a \\u escape of an ASCII character
    (data\\u002ditemN, \\u0024refN: canonical text writes it raw), in
    random order."""
    ks = [r.choice(["data\\u002ditem%d", "\\u0024ref%d", "x\\u005fy%d", "\\u0041BC%d"]) % i
          for i in range(n)]
    r.shuffle(ks)
    return "{" + ",".join('"%s":%d' % (k, i) for i, k in enumerate(ks)) + "}"


def crlf_text(n, r):
    """A string of ~n bytes of lines of 10-80 letters ended with \\r\\n
    (Windows text: a run of two escapes every ~47 bytes)."""
    out, size = [], 0
    while size < n:
        s = "".join(r.choice("abcdefghij klmnopqrstuvwxyz") for _ in range(r.randint(10, 80)))
        out.append(s)
        size += len(s) + 4
    return json.dumps({"text": "\r\n".join(out) + "\r\n"})


MD = ["## Summary", "Here is the **fix** for `parse()`:", "- first item", "- second *item*",
      "1. step one", "> a quote", "| a | b |", "|---|---|", "See [docs](https://example.com/docs).",
      "Ça marche — très bien 👍", "```python", "```", "日本語のテキストです。"]


def _markdown(r, k):
    lines = []
    for _ in range(k):
        c = r.random()
        lines.append(r.choice(CODE) if c < 0.3 else r.choice(MD) if c < 0.8 else _text(r, r.randint(5, 20), 0.2))
    return "\n".join(lines)


def chat_request(n, r):
    """An AI chat request with n messages as a client sends it: a system
    prompt, user turns in markdown (code fences, quotes, emoji), assistant
    tool calls whose arguments are JSON in a string, tool results, and a
    tools schema."""
    msgs = [{"role": "system", "content": "You are a helpful assistant.\n" + _markdown(r, 6)}]
    for i in range(n - 1):
        c = i % 3
        if c == 0:
            msgs.append({"role": "user", "content": _markdown(r, r.randint(2, 8))})
        elif c == 1:
            args = {"query": _text(r, r.randint(2, 6)), "limit": r.randint(1, 50),
                    "filters": {"lang": r.choice(["en", "fr", "ja"]), "after": "2024-01-01"}}
            msgs.append({"role": "assistant", "content": None,
                         "tool_calls": [{"id": "call_%024x" % r.getrandbits(96), "type": "function",
                                         "function": {"name": "search",
                                                      "arguments": json.dumps(args)}}]})
        else:
            msgs.append({"role": "tool", "tool_call_id": "call_%024x" % r.getrandbits(96),
                         "content": json.dumps([{"title": _text(r, 4), "url": "https://example.com/%d" % j,
                                                 "score": r.random()} for j in range(3)])})
    tools = [{"type": "function", "function": {"name": "search", "description": "Search the web.",
                                               "parameters": {"type": "object", "properties": {
                                                   "query": {"type": "string"}, "limit": {"type": "integer"}},
                                                   "required": ["query"]}}}]
    return json.dumps({"model": "gpt-4o", "messages": msgs, "tools": tools, "temperature": 0.2,
                       "stream": False}, ensure_ascii=r.random() < 0.5)


def _b64(r, n):
    import base64
    return base64.b64encode(bytes(r.getrandbits(8) for _ in range(n * 3 // 4))).decode()


def base64_blob(n, r):
    """An attachment as a tool sends it: ~n bytes of base64 (a '/' and a
    '+' one byte in 32) in a string."""
    return json.dumps({"name": "image.png", "mime": "image/png", "data": _b64(r, n)})


def base64_mime_php(n, r):
    """The same as PHP's json_encode() writes MIME base64: a \\r\\n every
    76 bytes and every '/' as \\/."""
    b = _b64(r, n)
    b = "\r\n".join(b[i:i + 76] for i in range(0, len(b), 76))
    return json.dumps({"name": "image.png", "data": b}).replace("/", "\\/")


def double_encoded(n, r):
    """n GitHub-like events, each JSON inside a string inside a string
    (encoded twice: \\\\\\" runs of three escapes), in an array."""
    return json.dumps([json.dumps(github_event(r, i)) for i in range(n)])


def csv_in_string(n, r):
    """A CSV file of n lines in a string, every field quoted ("a","b",1:
    a \\" every few bytes, \\"\\n at each line's end)."""
    lines = ['"%s","%s",%d,"%s"' % (r.choice(WORDS_EN), r.choice(LOGINS), r.randint(0, 9999),
                                    _text(r, r.randint(1, 4))) for _ in range(n)]
    return json.dumps({"csv": "\n".join(lines) + "\n"})


def mixed_widths(n, r):
    """A string of n characters of 1, 2, 3 and 4 bytes in UTF-8 at random
    (a, é, 中, 😀: the width changes at every character), raw."""
    pools = [(0x61, 0x7a), (0xe0, 0x24f), (0x4e00, 0x9fff), (0x1f300, 0x1faff)]
    return json.dumps({"s": "".join(chr(r.randint(*r.choice(pools))) for _ in range(n))},
                      ensure_ascii=False)


ZWJ = ["\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466", "\U0001F469\U0001F3FD\u200d\U0001F4BB",
       "\U0001F1EB\U0001F1F7", "\u2764\ufe0f", "1\ufe0f\u20e3", "\U0001F3F3\ufe0f\u200d\U0001F308",
       "\U0001F44D\U0001F3FB", "\u263a\ufe0f", "\U0001F600"]


def zwj_emoji(n, r, ascii=False):
    """n emoji sequences (families joined by U+200D, skin tones, flags,
    U+FE0F, keycaps) between words, raw; with ascii, as json.dumps()
    writes them (surrogate pairs, \\u200d, \\ufe0f)."""
    return json.dumps({"s": " ".join(r.choice(ZWJ) + r.choice(WORDS_EN) for _ in range(n))},
                      ensure_ascii=ascii)


def zwj_emoji_escaped(n, r):
    return zwj_emoji(n, r, True)


def halfway_doubles(n, r):
    """n decimals exactly halfway between two neighbouring doubles, written
    out in full (Decimal: 50-800 digits; a tie, rounded to even), 1e-20 to
    1e20."""
    from decimal import Decimal, getcontext
    import math
    getcontext().prec = 2000
    out = []
    for _ in range(n):
        x = r.random() * 10.0 ** r.randint(-20, 20)
        out.append(str(Decimal(x) + Decimal(math.nextafter(x, math.inf) - x) / 2))
    return "[" + ",".join(out) + "]"


def near_halfway(n, r):
    """n decimals a hair above or below halfway between two doubles:
    the tie's first 17-20 digits, then 20 zeros or nines, then a digit
    (the answer decided only at the end)."""
    from decimal import Decimal, getcontext
    import math
    getcontext().prec = 2000
    out = []
    for _ in range(n):
        x = r.random() * 10.0 ** r.randint(-20, 20)
        t = Decimal(x) + Decimal(math.nextafter(x, math.inf) - x) / 2
        s, d, e = t.as_tuple()
        k = r.randint(17, 20)
        digs = "".join(map(str, d[:k]))
        tail = r.choice(["0" * 20 + "1", "9" * 20 + "9"])
        if tail[0] == "9":
            digs = str(int(digs) - 1).zfill(k)
        out.append("%s.%se%d" % (digs[0], digs[1:] + tail, len(d) + e - 1))
    return "[" + ",".join(out) + "]"


def doubles_20g(n, r):
    """n doubles as C's "%.20g" prints them (20 significant digits: more
    than a double holds)."""
    return "[" + ",".join("%.20g" % (r.random() * 10.0 ** r.randint(-10, 10)) for _ in range(n)) + "]"


def pretty_records_crlf(n, r):
    """n records of 12 members, json.dumps(indent=2), lines ended with
    CRLF (an editor on Windows)."""
    return json.dumps(json.loads(records(n, r)), indent=2, ensure_ascii=False).replace("\n", "\r\n")


def single_deep(n, r):
    """n copies, in an array, of {"a":{"a":...}} 999 deep (one member a
    level)."""
    return "[" + ",".join(['{"a":' * 999 + "0" + "}" * 999] * max(1, n)) + "]"


def two_escape_names(n, r):
    """n names with two \\u escapes each, as Go's encoding/json writes
    HTML-looking names (\\u003cdivN\\u003e) and an ASCII-only encoder
    accented words (caf\\u00e9 cr\\u00e8meN), in random order."""
    ks = [r.choice(["\\u003cdiv%d\\u003e", "caf\\u00e9 cr\\u00e8me%d", "a\\u0026b\\u0026c%d"]) % i
          for i in range(n)]
    r.shuffle(ks)
    return "{" + ",".join('"%s":%d' % (k, i) for i, k in enumerate(ks)) + "}"


def late_escape_names(n, r):
    """n names with one \\u escape after their first 12 bytes
    (descriptionN\\u00e9, user_profile\\u002dN), in random order."""
    ks = [r.choice(["description%d\\u00e9", "user_profile\\u002d%d", "Gr\\u00f6\\u00dfe_%d"]) % i
          for i in range(n)]
    r.shuffle(ks)
    return "{" + ",".join('"%s":%d' % (k, i) for i, k in enumerate(ks)) + "}"


def multiline_names(n, r):
    """n names holding a \\n or a \\t (a label of two lines, a
    tab-separated pair: escapes the canonical text keeps), in random
    order."""
    ks = [r.choice(["line one\\nline %d", "key\\t%d", "%d\\r\\n"]) % i for i in range(n)]
    r.shuffle(ks)
    return "{" + ",".join('"%s":%d' % (k, i) for i, k in enumerate(ks)) + "}"


def doubles_16g(n, r):
    """n doubles as C's "%.16g" prints them (16 significant digits: not
    always the shortest that reads back)."""
    return "[" + ",".join("%.16g" % (r.random() * 10.0 ** r.randint(-10, 10)) for _ in range(n)) + "]"


def doubles_18g(n, r):
    """n doubles as C's "%.18g" prints them (18 significant digits)."""
    return "[" + ",".join("%.18g" % (r.random() * 10.0 ** r.randint(-10, 10)) for _ in range(n)) + "]"


ACCEPTANCE = {
    "Windows paths as names (\\\\)": (windows_path_names, 200, "names", [12500, 25000, 50000, 100000], False),
    "SQL-quoted names (\\\")": (quoted_names, 200, "names", [12500, 25000, 50000, 100000], False),
    "flattened dotted keys as names": (dotted_names, 200, "names", [12500, 25000, 50000, 100000], False),
    "one object, members already in order": (sorted_wide, 200, "members", [12500, 25000, 50000, 100000], False),
    "one object, in order but 1 in 100 moved": (nearly_sorted, 200, "members",
                                                [12500, 25000, 50000, 100000], False),
    "one object, organ pipe (up, then down)": (organ_pipe, 200, "members",
                                               [12500, 25000, 50000, 100000], False),
    "names sharing a 100-byte prefix": (prefix_100, 100, "names", [8750, 17500, 35000, 70000], False),
    "names of 1-3 bytes": (short_names, 200, "names", [12500, 25000, 50000, 100000], False),
    "names holding an ASCII \\u escape (\\u002d)": (ascii_escape_names, 200, "names",
                                                   [12500, 25000, 50000, 100000], False),
    "names holding two \\u escapes (\\u003cdiv\\u003e)": (two_escape_names, 200, "names",
                                                          [12500, 25000, 50000, 100000], False),
    "names holding a \\u escape after 12 bytes": (late_escape_names, 200, "names",
                                                  [12500, 25000, 50000, 100000], False),
    "names holding \\n or \\t": (multiline_names, 200, "names", [12500, 25000, 50000, 100000], False),
    "Windows text (\\r\\n line ends)": (crlf_text, 4 * _K, "bytes", [1 * _M, 2 * _M, 4 * _M, 8 * _M], False),
    "AI chat request (messages, markdown, tool calls)": (chat_request, 6, "messages",
                                                        [2500, 5000, 10000, 20000], False),
    "base64 attachment": (base64_blob, 4 * _K, "bytes", [1 * _M, 2 * _M, 4 * _M, 8 * _M], False),
    "base64, MIME lines, PHP's \\/": (base64_mime_php, 4 * _K, "bytes", [1 * _M, 2 * _M, 4 * _M, 7 * _M], False),
    "JSON encoded twice (\\\\\\\" runs)": (double_encoded, 4, "events", [700, 1400, 2800, 5600], False),
    "CSV in a string, every field quoted": (csv_in_string, 60, "lines", [20000, 40000, 80000, 160000], False),
    "1-, 2-, 3- and 4-byte characters mixed": (mixed_widths, 1000, "characters",
                                              [400000, 800000, 1600000, 3200000], False),
    "emoji sequences (ZWJ, skin tones, flags)": (zwj_emoji, 100, "sequences",
                                                 [60000, 120000, 240000, 480000], False),
    "emoji sequences as \\u escapes": (zwj_emoji_escaped, 100, "sequences",
                                       [25000, 50000, 100000, 200000], False),
    "halfway between two doubles, written out": (halfway_doubles, 100, "numbers",
                                                 [12500, 25000, 50000, 100000], False),
    "a hair off halfway (20 zeros or nines, then a digit)": (near_halfway, 200, "numbers",
                                                             [20000, 40000, 80000, 160000], False),
    "\"%.16g\" doubles": (doubles_16g, 200, "numbers", [40000, 80000, 160000, 320000], False),
    "\"%.18g\" doubles": (doubles_18g, 200, "numbers", [40000, 80000, 160000, 320000], False),
    "\"%.20g\" doubles": (doubles_20g, 200, "numbers", [40000, 80000, 160000, 320000], False),
    "records, indent=2, CRLF": (pretty_records_crlf, 20, "records", [2000, 4000, 8000, 16000], False),
    "{\"a\":{\"a\":...}} 999 deep": (single_deep, 1, "copies", [150, 300, 600, 1200], False),
}


# ---------------------------------------------------------------- corpora
# Documents of four kinds, each from a seed of its own: what idem is given
# in practice.  "tool calls" are the bench's own documents (docgen.c, read
# from the file `bench --write-docs` writes); the other three are made
# here.  Members come in the order their producers write them (not
# sorted), compact as those APIs send them.
LOGINS = ["octocat", "torvalds", "mojombo", "defunkt", "pjhyett", "wycats",
          "ezmobius", "ivey", "evanphx", "vanpelt", "wayneeseguin", "brynary"]
WORDS_EN = ["fix", "add", "remove", "update", "parser", "tests", "docs",
            "build", "cache", "query", "index", "release", "bump", "typo",
            "refactor", "the", "for", "when", "crash", "memory", "leak"]


def _sha(r):
    return "%040x" % r.getrandbits(160)


def _text(r, n, intl=0.0):
    out = []
    for _ in range(n):
        if r.random() < intl:
            out.append(r.choice(WORDS))
        else:
            out.append(r.choice(WORDS_EN))
    return " ".join(out)


def github_event(r, i):
    login = r.choice(LOGINS) + str(r.randint(0, 999))
    uid = r.randint(1, 20000000)
    repo = "%s/%s-%s" % (login, r.choice(WORDS_EN), r.choice(WORDS_EN))
    actor = {"id": uid, "login": login, "display_login": login,
             "gravatar_id": "", "url": "https://api.github.com/users/" + login,
             "avatar_url": "https://avatars.githubusercontent.com/u/%d?" % uid}
    kind = r.choice(["PushEvent", "PushEvent", "IssuesEvent",
                     "IssueCommentEvent", "WatchEvent", "CreateEvent"])
    if kind == "PushEvent":
        commits = [{"sha": _sha(r),
                    "author": {"email": login + "@example.com",
                               "name": login.title()},
                    "message": _text(r, r.randint(3, 12), 0.1)
                    + ("\n\n" + _text(r, 20) if r.random() < 0.3 else ""),
                    "distinct": True,
                    "url": "https://api.github.com/repos/%s/commits/%s"
                    % (repo, _sha(r))} for _ in range(r.randint(1, 4))]
        payload = {"push_id": 536863970 + i, "size": len(commits),
                   "distinct_size": len(commits), "ref": "refs/heads/main",
                   "head": _sha(r), "before": _sha(r), "commits": commits}
    elif kind in ("IssuesEvent", "IssueCommentEvent"):
        payload = {"action": r.choice(["opened", "closed", "created"]),
                   "issue": {"url": "https://api.github.com/repos/%s/issues/%d"
                             % (repo, i), "id": 53000000 + i,
                             "number": r.randint(1, 5000),
                             "title": _text(r, r.randint(3, 9), 0.1),
                             "user": {"login": login, "id": uid,
                                      "type": "User", "site_admin": False},
                             "labels": [{"name": r.choice(["bug", "docs",
                                                           "good first issue"]),
                                         "color": "%06x" % r.getrandbits(24),
                                         "default": r.random() < 0.5}],
                             "state": "open", "locked": False,
                             "comments": r.randint(0, 40),
                             "created_at": "2015-01-01T%02d:%02d:%02dZ"
                             % (r.randint(0, 23), r.randint(0, 59),
                                r.randint(0, 59)),
                             "body": _text(r, r.randint(10, 60), 0.1)
                             + "\n\n```\n$ make test\n```"}}
    else:
        payload = {"action": "started", "ref_type": "repository",
                   "master_branch": "main", "description": _text(r, 6),
                   "pusher_type": "user"}
    ev = {"id": str(2489651045 + i), "type": kind, "actor": actor,
          "repo": {"id": r.randint(1, 30000000), "name": repo,
                   "url": "https://api.github.com/repos/" + repo},
          "payload": payload, "public": True,
          "created_at": "2015-01-01T15:%02d:%02dZ" % (r.randint(0, 59),
                                                     r.randint(0, 59))}
    return json.dumps(ev, separators=(",", ":"), ensure_ascii=False)


def numeric(r, i):
    n = r.randint(20, 120)
    base = r.uniform(-20, 40)
    doc = {"sensor": "s-%04d" % r.randint(0, 9999),
           "ts": 1700000000000 + i * 1000 + r.randint(0, 999),
           "lat": round(r.uniform(-90, 90), 7),
           "lon": round(r.uniform(-180, 180), 7),
           "readings": [base + r.gauss(0, 3) for _ in range(n)],
           "counts": [r.randint(0, 100000) for _ in range(r.randint(5, 30))],
           "stats": {"min": base - 9.5, "max": base + 9.25,
                     "mean": base + r.random(), "p99": r.random() * 1e3,
                     "var": r.random() ** 3},
           "scale": r.choice([1e-3, 0.1, 2.5, 1e6, 6.02214076e23]),
           "ok": r.random() < 0.9}
    return json.dumps(doc, separators=(",", ":"))


def twitter_like(r, i):
    tid = 505874924095815681 + i * 1000003 + r.randint(0, 999)
    uid = r.randint(10 ** 9, 3 * 10 ** 9)
    name = r.choice(["さくら", "東京太郎", "Ana", "데이터", "Zoë", "bot"])
    text = _text(r, r.randint(4, 20), 0.4)
    if r.random() < 0.3:
        text = "RT @%s: %s" % (r.choice(LOGINS), text)
    user = {"id": uid, "id_str": str(uid), "name": name,
            "screen_name": r.choice(LOGINS) + str(r.randint(0, 99)),
            "location": r.choice(["", "東京", "São Paulo", "Berlin"]),
            "description": _text(r, r.randint(0, 15), 0.4),
            "url": None, "entities": {"description": {"urls": []}},
            "protected": False, "followers_count": r.randint(0, 100000),
            "friends_count": r.randint(0, 5000),
            "listed_count": r.randint(0, 100),
            "created_at": "Sun Aug 31 00:%02d:%02d +0000 2014"
            % (r.randint(0, 59), r.randint(0, 59)),
            "favourites_count": r.randint(0, 9999), "utc_offset": None,
            "time_zone": None, "geo_enabled": False, "verified": False,
            "statuses_count": r.randint(0, 99999), "lang": "ja",
            "profile_background_color": "C0DEED",
            "profile_image_url": "http://pbs.twimg.com/profile_images/%d/x.jpeg"
            % r.randint(10 ** 17, 10 ** 18),
            "default_profile": True}
    doc = {"metadata": {"result_type": "recent", "iso_language_code": "ja"},
           "created_at": user["created_at"], "id": tid, "id_str": str(tid),
           "text": text,
           "source": "<a href=\"http://twitter.com/download/iphone\" "
                     "rel=\"nofollow\">Twitter for iPhone</a>",
           "truncated": False,
           "in_reply_to_status_id": tid - 7 if r.random() < 0.3 else None,
           "in_reply_to_user_id": uid - 11 if r.random() < 0.3 else None,
           "user": user, "geo": None, "coordinates": None, "place": None,
           "retweet_count": r.randint(0, 500), "favorite_count": r.randint(0, 500),
           "entities": {"hashtags": [], "symbols": [], "urls": [],
                        "user_mentions": [{"screen_name": r.choice(LOGINS),
                                           "name": name, "id": uid + 5,
                                           "id_str": str(uid + 5),
                                           "indices": [3, 12]}]},
           "favorited": False, "retweeted": False, "lang": "ja"}
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=r.random() < 0.5)


CORPORA = {"GitHub-like events": (github_event, 11),
           "numeric (sensor readings)": (numeric, 12),
           "twitter-like (ids beyond 2^53)": (twitter_like, 13)}
CORPUS = "tool calls (the bench corpus)"


# ------------------------------------------------------- sized shapes
# The shapes that once cost more than linear time, each at four sizes:
# (generator of one document of size n, the four n, what n counts).
def prefix_names(n, r):
    p = "/srv/" + "p" * 995
    ks = set()
    while len(ks) < n:
        ks.add("%s%06d" % (p, r.randint(0, 999999)))
    ks = list(ks) + ["a"]
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)})


def wide_reverse(n, r):
    return json.dumps({"k%07d" % i: i for i in reversed(range(n))})


def wide_random(n, r):
    ks = ["k%07d" % i for i in range(n)]
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)})


def numbered_names(n, r):
    """n names "field0" ... "field<n-1>", in random order."""
    ks = ["field%d" % i for i in range(n)]
    r.shuffle(ks)
    return json.dumps({k: i for i, k in enumerate(ks)})


def doubles_17g(n, r):
    return '{"v":[%s]}' % ",".join("%.17g" % (r.random() * r.choice([1, 100, 1e4]))
                                   for _ in range(n))


def doubles_17g_exp(n, r):
    return '{"v":[%s]}' % ",".join("%.17g" % (r.random() * 10.0 ** r.randint(-300, 300))
                                   for _ in range(n))


SIZED = [("names sharing a 1000-byte prefix, plus one short name", prefix_names,
          [1000, 2000, 4000, 8000], "names"),
         ("one object, members in reverse order", wide_reverse,
          [50000, 100000, 200000, 400000], "members"),
         ("one object, members in random order", wide_random,
          [50000, 100000, 200000, 400000], "members"),
         ("\"%.17g\" doubles (not the shortest)", doubles_17g,
          [50000, 100000, 200000, 400000], "numbers"),
         ("\"%.17g\" doubles with exponents (d.ddde+NN)", doubles_17g_exp,
          [50000, 100000, 200000, 400000], "numbers"),
         ("subnormal \"%.17g\" doubles", subnormals,
          [50000, 100000, 200000, 400000], "numbers"),
         ("40-digit decimals", decimals_40,
          [25000, 50000, 100000, 200000], "numbers"),
         ("names, each a prefix of the next", prefix_chain,
          [500, 1000, 2000, 4000], "names"),
         ("random doubles (random bits)", random_doubles,
          [12500, 25000, 50000, 100000], "numbers"),
         ("names sharing a 1000-byte prefix holding an escape", escaped_prefix,
          [1000, 2000, 4000, 8000], "names"),
         ("names that sort otherwise in UTF-16", utf16_names,
          [12500, 25000, 50000, 100000], "names"),
         ("names that sort otherwise in UTF-16, as \\u escapes", utf16_escaped,
          [12500, 25000, 50000, 100000], "names"),
         # shapes a stranger would try, to 8 MB or 100 000 names
         ("one long string, top level", one_long_string,
          [1 << 20, 2 << 20, 4 << 20, 8 << 20], "bytes"),
         ("long string, one escape at the end", escape_at_end,
          [1 << 20, 2 << 20, 4 << 20, 8 << 20], "bytes"),
         ("pretty-printed (indent=4) events", pretty_printed,
          [600, 1200, 2400, 4800], "events"),
         ("true, false, null", literals,
          [200000, 400000, 800000, 1600000], "literals"),
         ("small objects of 1-3 members", small_objects,
          [40000, 80000, 160000, 320000], "objects"),
         ("2-byte text (Latin-1, Cyrillic)", text_2byte,
          [500000, 1000000, 2000000, 4000000], "characters"),
         ("emoji only, top-level string", emoji_only,
          [250000, 500000, 1000000, 2000000], "characters"),
         ("numeric-looking names", numeric_names,
          [12500, 25000, 50000, 100000], "names"),
         ("names all 8 bytes long", same_length_names,
          [12500, 25000, 50000, 100000], "names"),
         ("JSON inside a string", json_in_string,
          [800, 1600, 3200, 6400], "events"),
         ("Go's \\u003c, \\u003e, \\u0026", go_html,
          [9000, 18000, 36000, 72000], "fragments"),
         ("records of 12 members, a table's column order", records,
          [3000, 6000, 12000, 24000], "records"),
         ("2-byte text as \\u escapes (ensure_ascii)", latin_escaped,
          [25000, 50000, 100000, 200000], "words")]
# and the shapes an adversary would try next, refusals among them
SIZED += [(k, g, sizes, unit) for k, (g, n, unit, sizes, refused) in ADVERSARY.items()]
# and those the acceptance run might try
SIZED += [(k, g, sizes, unit) for k, (g, n, unit, sizes, refused) in ACCEPTANCE.items()]
REFUSED = set(k for k, v in ADVERSARY.items() if v[4])
SIZED_BYTES = 8 << 20       # a sized row's documents: about this many bytes

# --sweep: the shapes whose cost could grow with size, each at 1 000,
# 10 000 and 100 000 units (names, members, characters ...), a size left
# out where one document would pass ~8 MB; each document repeated to
# ~8 MB as in SIZED.
SWEEP_SIZES = [1000, 10000, 100000]
SWEEP = [("one object, members in random order", wide_random, "members",
          SWEEP_SIZES),
         ("one object, members in reverse order", wide_reverse, "members",
          SWEEP_SIZES),
         ("names that sort otherwise in UTF-16", utf16_names, "names",
          SWEEP_SIZES),
         ("names that sort otherwise in UTF-16, as \\u escapes", utf16_escaped,
          "names", SWEEP_SIZES),
         ("numbered names (field%d)", numbered_names, "names", SWEEP_SIZES),
         ("names sharing a 1000-byte prefix, plus one short name", prefix_names,
          "names", [1000, 8000]),
         ("names sharing a 1000-byte prefix holding an escape", escaped_prefix,
          "names", [1000, 8000])] + [(k, g, unit, SWEEP_SIZES)
                                     for k, (g, n, unit) in HOSTILE.items()]


SHAPES = ["long ASCII string", "array of objects", "integers",
          "2-digit decimals", "source code", "CJK as \\u escapes", "CJK text",
          "emoji", "words, mixed scripts", "nested 60 deep", "tiny",
          "mostly \\\" \\\\ \\n", "200 members, random order",
          "17-digit doubles", "doubles with exponents", "\"%.17g\" doubles",
          "\"%.17g\" doubles with exponents",
          "900 deep, out of order", "names with a 200-byte prefix",
          "subnormal \"%.17g\" doubles", "40-digit decimals",
          "names, each a prefix of the next",
          "names with a 200-byte prefix holding an escape",
          "names that sort otherwise in UTF-16",
          "names that sort otherwise in UTF-16, as \\u escapes"] + list(NUMBER_SHAPES) + list(HOSTILE) + list(STRANGER) \
    + [k for k in ADVERSARY if k not in REFUSED] + list(ACCEPTANCE)

# Shapes of large documents: --docs divided by this, for a like total size.
DIVIDE = {"900 deep, out of order": 20, "names with a 200-byte prefix": 200,
          "names with a 200-byte prefix holding an escape": 200,
          "names that sort otherwise in UTF-16": 4,
          "names that sort otherwise in UTF-16, as \\u escapes": 4}


# The functions compared, each in the same scan.
QUERIES = [("json", "SELECT count(json(a)) FROM d"),
           ("canonical", "SELECT count(idem_canonical(a)) FROM d"),
           ("key", "SELECT count(idem_key('w','c','t',a)) FROM d")]


def rows(a):
    """The rows of the tables: (section, name, size n or None, a function
    that returns the documents).  --docs documents of a shape or corpus;
    a sized row gets as many copies of its document as make SIZED_BYTES
    (one under --instructions, or when smaller than that already)."""
    out = []
    if a.sweep:
        for name, gen, unit, sizes in SWEEP:
            if not picked(a, name):
                continue
            for n in sizes[:a.sizes]:
                d = gen(n, random.Random(7))
                if len(d) > SIZED_BYTES * 9 // 8:
                    continue
                copies = 1 if a.instructions else max(1, SIZED_BYTES // len(d))
                out.append(("sized", name, (n, unit),
                            lambda d=d, copies=copies: [d] * copies))
        return out
    if a.corpus:
        out.append(("corpus", CORPUS, None, lambda: corpus_docs(a.corpus, a.docs)))
    for name, (gen, seed) in CORPORA.items():
        out.append(("corpus", name, None,
                    lambda gen=gen, seed=seed: corpus_made(gen, seed, a.docs)))
    for name in SHAPES:
        out.append(("shape", name, None,
                    lambda name=name: shape_docs(name, a.docs)))
    for name, gen, sizes, unit in SIZED:
        if not picked(a, name):
            continue
        for n in sizes[:a.sizes]:
            def docs(gen=gen, n=n, name=name):
                d = gen(n, random.Random(7))
                copies = 1 if a.instructions else max(1, SIZED_BYTES // len(d))
                # One copy for bench.test's quick look (--docs 20: the test
                # gave 20 from the start, so "< 20" never gave it one, and
                # its sized rows were copied to ~8 MB each: 3.5 of its 9 s
                # of CPU), and for a refusal (the scan stops at its first row).
                if a.docs <= 20 or name in REFUSED:
                    copies = 1
                return [d] * copies
            out.append(("sized", name, (n, unit), docs))
    if a.only:
        out = [x for x in out if x[0] == "sized" or picked(a, x[1])]
    return out


def picked(a, name):
    """Whether --only picks the row called name: one of its names
    separated by '|', or a match of it as a regular expression
    (--only 'random digits|17g')."""
    if not a.only:
        return True
    if name in a.only:
        return True
    try:
        return re.search(a.only_re, name) is not None
    except re.error:                # a name with "\\u" in it, say
        return False


def corpus_made(gen, seed, n):
    r = random.Random(seed)
    return [gen(r, i) for i in range(n)]


def corpus_docs(path, n):
    src = sqlite3.connect(path)
    docs = [x for (x,) in src.execute(
        "SELECT args FROM docs ORDER BY i LIMIT ?", (n,))]
    src.close()
    return docs


def shape_docs(name, docs):
    r = random.Random(7)
    return [shape(name, r) for _ in range(max(1, docs // DIVIDE.get(name, 1)))]


def fill(db, docs):
    """Table d of db holds the documents docs.  Returns their mean size."""
    db.execute("DROP TABLE IF EXISTS d")
    db.execute("CREATE TABLE d(a TEXT)")
    db.executemany("INSERT INTO d VALUES(?)", [(d,) for d in docs])
    db.commit()
    return db.execute("SELECT avg(length(CAST(a AS BLOB))) FROM d").fetchone()[0]


def label(name, size):
    if size is None:
        return name
    n, unit = size
    return "%s: %s %s" % (name, "{:,}".format(n).replace(",", " "), unit)


def callgrind(db, lib, query, tmp, refused=False):
    """Instructions of one run of the sqlite3 shell on db under callgrind
    (refused: the query may fail, a refusal's row)."""
    out = os.path.join(tmp, "cg.out")
    subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                    "sqlite3", "-init", "/dev/null", "-batch", db,
                    ".load " + lib, query],
                   check=not refused, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        for line in f:
            m = re.match(r"(summary|totals): (\d+)", line)
            if m:
                return int(m.group(2))
    raise SystemExit("shapes.py: no totals in " + out)


def table_head(what, load=False, against=None):
    print("| %s | bytes/doc | `json()` per doc | `idem_canonical` | `idem_key` |%s%s"
          % (what, " old `idem_key` |" if against else "",
             " load |" if load else ""))
    print("|---|---:|---:|---:|---:|%s%s" % ("---:|" if against else "",
                                           "---:|" if load else ""))


def instructions(a, data):
    queries = [("base", "SELECT count(coalesce(a, 0)) FROM d")] + QUERIES
    lib = os.path.abspath(a.lib)
    print("In instructions (callgrind): %d documents of each corpus and shape"
          " (one of each size); the scan with no function subtracted;"
          " ratio to json()" % a.docs)
    section = None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "shape.db")
        for sec, name, size, docs in rows(a):
            if sec != section:
                print()
                table_head({"corpus": "corpus", "shape": "shape",
                            "sized": "shape, size"}[sec])
                section = sec
            d = docs()
            db = sqlite3.connect(path)
            nbytes = fill(db, d)
            db.close()
            ir = {k: callgrind(path, lib, q, tmp, name in REFUSED) for k, q in queries}
            j = (ir["json"] - ir["base"]) / len(d)
            c = (ir["canonical"] - ir["base"]) / len(d)
            k = (ir["key"] - ir["base"]) / len(d)
            print("| %s | %.0f | %.0f | %.2fx | %.2fx |"
                  % (label(name, size), nbytes, j, c / j, k / j))
            sys.stdout.flush()
            data.append((sec, name, size, nbytes, c / j, k / j))


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def refusal(c, q):
    """The scan of a refusal's row: its error (or json()'s result, where
    json() accepts what idem refuses) is the answer."""
    try:
        c.execute(q).fetchall()
    except sqlite3.Error:
        pass


def timed(a, data):
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(a.lib)
    print("In time: %d documents of each corpus and shape (a sized row: its"
          " document, as many times as make ~8 MB, each sample of it the scan"
          " repeated for ~%gs of json()); %d runs, the order of the"
          " three functions rotated from run to run; the median of the runs'"
          " ratios to json(); load: the 1-minute load average after the row"
          " (%d CPUs); malloc: %s" % (a.docs, a.sample, a.runs, os.cpu_count(),
                                     os.environ.get("GLIBC_TUNABLES", "as it comes")))
    queries = [(k, db, q) for k, q in QUERIES]
    # --cpu: this thread's CPU time (a loaded machine's waits left out)
    clock = time.thread_time if a.cpu else time.perf_counter
    if a.against:
        # The other build in a connection of its own (its functions have
        # the same names), its idem_key in the same rotation.
        old = sqlite3.connect(":memory:")
        old.enable_load_extension(True)
        old.load_extension(a.against)
        queries.append(("old key", old, QUERIES[2][1]))
        print("(\"old key\": idem_key of %s, the last column)" % a.against)
    section = None
    for sec, name, size, docs in rows(a):
        if sec != section:
            print()
            table_head({"corpus": "corpus", "shape": "shape",
                        "sized": "shape, size"}[sec], True, a.against)
            section = sec
        d = docs()
        nbytes = fill(db, d)
        if a.against:
            fill(old, d)
        # A sized row: each query once untimed (the heap grown, the
        # pages touched), then each sample made of as many scans as take
        # json() --sample seconds (one scan of ~8 MB is 10-20 ms, and a
        # sample of one scan moved the row by up to 0.4x from one run of
        # shapes.py to the next).
        reps = 1
        scan = refusal if name in REFUSED else lambda c, q: c.execute(q).fetchall()
        if sec == "sized" and a.sample > 0:
            for k, c, q in queries:
                scan(c, q)
            t0 = clock()
            scan(db, QUERIES[0][1])
            reps = max(1, int(round(a.sample / max(clock() - t0, 1e-6))))
        t = {k: [] for k, _, _ in queries}
        for r in range(a.runs):
            m = r % len(queries)
            for k, c, q in queries[m:] + queries[:m]:
                t0 = clock()
                for _ in range(reps):
                    scan(c, q)
                t[k].append((clock() - t0) / reps)
        j = median(t["json"])
        c = median([x / y for x, y in zip(t["canonical"], t["json"])])
        k = median([x / y for x, y in zip(t["key"], t["json"])])
        o = ""
        if a.against:
            o = " %.2fx |" % median([x / y for x, y in zip(t["old key"], t["json"])])
        print("| %s | %.0f | %.1f us | %.2fx | %.2fx |%s %.1f |"
              % (label(name, size), nbytes, j * 1e6 / len(d), c, k, o,
                 os.getloadavg()[0]))
        sys.stdout.flush()
        data.append((sec, name, size, nbytes, c, k))


def write_data(path, data):
    """The ratios, for test/bench/chart.gp: one file of bars (corpora and
    shapes) and one of size sweeps (a block per sized shape)."""
    with open(path + ".bars", "w") as f:
        for sec, name, size, nbytes, c, k in data:
            if sec != "sized":
                f.write('"%s"\t%.3f\t%.3f\n' % (name.replace('"', "'"), c, k))
    with open(path + ".sizes", "w") as f:
        last = None
        for sec, name, size, nbytes, c, k in data:
            if sec != "sized":
                continue
            if last is not None and name != last:
                f.write("\n\n")
            if name != last:
                f.write('"%s"\tcanonical\tkey\tn\n' % name.replace('"', "'"))
            last = name
            f.write("%.3f\t%.3f\t%.3f\t%d\n" % (nbytes / 1048576, c, k, size[0]))


def write_corpora(a):
    """Each corpus made here as a file for bench --docs-file: table docs
    (i, who, conv, tool, args), a.docs documents."""
    os.makedirs(a.write_corpora, exist_ok=True)
    for name, (gen, seed) in CORPORA.items():
        slug = name.split()[0].split("-")[0].lower()
        path = os.path.join(a.write_corpora, slug + ".db")
        if os.path.exists(path):
            os.unlink(path)
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE docs(i INTEGER PRIMARY KEY, who TEXT,"
                   " conv TEXT, tool TEXT, args TEXT)")
        db.executemany("INSERT INTO docs VALUES(?,?,?,?,?)",
                       [(i, "user-%05d" % (i % 50000), "conv-%d" % i, slug, d)
                        for i, d in enumerate(corpus_made(gen, seed, a.docs))])
        db.commit()
        db.close()
        print(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build/idem")
    ap.add_argument("--docs", type=int, default=None)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--sizes", type=int, default=4,
                    help="the first N sizes of each sized shape")
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions with callgrind instead of timing")
    ap.add_argument("--against", metavar="LIB",
                    help="in time, also the idem_key of another build"
                    " (another LIB), in the same rotation")
    ap.add_argument("--sample", type=float, default=0.1,
                    help="in time, a sized row's sample: its scan repeated"
                    " for about this many seconds of json() (0: one scan)")
    ap.add_argument("--malloc", choices=["steady", "default"],
                    default="steady",
                    help="in time, glibc's malloc with a fixed mmap"
                    " threshold (32 MB) and no trimming (steady, the"
                    " default), or as it comes (default)")
    ap.add_argument("--cpu", action="store_true",
                    help="in time, the thread's CPU time, not the wall clock"
                    " (for a busy machine)")
    ap.add_argument("--only", help="these rows only (names separated by '|')")
    ap.add_argument("--sweep", action="store_true",
                    help="only the shapes of SWEEP, at 1 000, 10 000 and"
                    " 100 000 units each")
    ap.add_argument("--corpus", help="first the tool-call documents of this"
                    " file (written by bench --write-docs)")
    ap.add_argument("--data", help="write the ratios to DATA.bars and"
                    " DATA.sizes (for test/bench/chart.gp)")
    ap.add_argument("--write-corpora", metavar="DIR",
                    help="write the corpora made here as DIR/*.db"
                    " (for bench --docs-file) and stop")
    a = ap.parse_args()
    a.only_re = a.only
    a.only = a.only.split("|") if a.only else None
    if a.write_corpora:
        a.docs = a.docs or 2000
        write_corpora(a)
        return
    if not a.instructions and a.malloc == "steady" \
       and "glibc.malloc.mmap_threshold" not in os.environ.get("GLIBC_TUNABLES", ""):
        # Run again with glibc's malloc held steady (read at the start of
        # the process): by default each scan of a large document by json()
        # gets its result's memory from a fresh mmap() and faults it in,
        # page by page (3 869 faults a scan at 400 000 numbers; idem_key
        # none: its buffers come from the heap), and what a fault costs
        # on this VM moved a sized row by up to 0.4x from one run to the
        # next.  A threshold of 32 MB and no trimming keep every scan in
        # the heap once it has grown.
        env = dict(os.environ)
        t = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295"
        env["GLIBC_TUNABLES"] = (env["GLIBC_TUNABLES"] + ":" + t
                                 if env.get("GLIBC_TUNABLES") else t)
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    data = []
    if a.instructions:
        a.docs = a.docs or 400
        instructions(a, data)
    else:
        a.docs = a.docs or 4000
        timed(a, data)
    if a.data:
        write_data(a.data, data)


if __name__ == "__main__":
    main()
