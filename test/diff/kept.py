#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test/diff/kept.py -- names whose escapes canonical text keeps, build by build.

    python3 test/diff/kept.py [--seed N] [--count N] LIB [LIB ...]

Generates objects whose names are read by idemJsonKeptName() (their first
escape, in their first 16 bytes, one that canonical text keeps: \\" \\\\
\\b \\f \\n \\r \\t): the first escape at every place 0..15, after plain
bytes that are ASCII or non-ASCII (2-byte, and 3-byte with lead 0xee and
0xef, which the sort key moves), names of 1 to 100 bytes with the most
at 28..40 (one block of 32 or two), more escapes anywhere (an escape
across bytes 31/32 of a block among them), only \\" or only \\\\ or one
letter other than '\\\\' in the first block alone, now and then a \\u,
\\/ or bad escape, a raw control character, a duplicate written with
\\u0022 for \\", an input that is not UTF-8 or that ends within a few
bytes of a name.  Each object's names share their first bytes (the key
decides nothing) or not, in random order.  Runs idem_canonical() of
each build in a process of its own (builds.py's way) and compares the
text or error byte for byte with the first.
A Python with a sqlite3 that can load extensions (Debian's /usr/bin/python3).
"""
import os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import builds  # noqa: E402

KEPT = ['\\"', '\\\\', '\\b', '\\f', '\\n', '\\r', '\\t']
PLAIN = ['a', 'Z', '0', '.', ' ', '~', '\u00e9', '\ue000', '\uffff', '\u4e2d']
ODD = ['\\u0022', '\\u00e9', '\\/', '\\x', '\\u12', '\x01', '\\u005c']


def spell(r, n, odd):
    """A name's text: about n bytes of plain characters and kept escapes
    (the escapes' weight from 0 to 0.6), now and then an odd one."""
    w = r.choice([0.0, 0.1, 0.3, 0.6])
    kind = r.random()
    out = []
    size = 0
    while size < n:
        if r.random() < w:
            if kind < 0.2:
                e = '\\"'
            elif kind < 0.4:
                e = '\\\\'
            else:
                e = r.choice(KEPT)
            out.append(e)
            size += 2
        elif odd and r.random() < 0.005:
            e = r.choice(ODD)
            out.append(e)
            size += len(e)
        else:
            c = r.choice(PLAIN)
            out.append(c)
            size += len(c.encode())
    return ''.join(out)


def name(r, odd):
    k = r.randrange(16)
    pre = []
    size = 0
    while size < k:
        c = r.choice(PLAIN) if r.random() < 0.5 else 'a'
        pre.append(c)
        size += len(c.encode())
    pre = ''.join(pre)
    total = r.choice([r.randint(1, 100), r.randint(28, 40), r.randint(14, 36)])
    rest = spell(r, max(0, total - size - 2), odd)
    if r.random() < 0.3:
        # one letter other than '\\' in the first block alone, then \\ only
        rest = ''.join(r.choice(PLAIN) for _ in range(r.randint(0, 8))) + \
            r.choice(KEPT[2:]) + 'x' * r.randint(0, 20) + '\\\\' * r.randint(0, 8)
    return pre + r.choice(KEPT) + rest


def doc(r):
    odd = r.random() < 0.1
    n = r.choice([1, 2, 3, 5, 8, 9, 16, 17, 40, r.randint(1, 300)])
    common = spell(r, r.randint(0, 20), False) if r.random() < 0.3 else ''
    names = set()
    while len(names) < n:
        names.add(common + name(r, odd) if common and r.random() < 0.5
                  else name(r, odd))
    names = list(names)
    r.shuffle(names)
    if r.random() < 0.05 and any('\\"' in x for x in names):
        x = next(x for x in names if '\\"' in x)
        names.append(x.replace('\\"', '\\u0022', 1))
    sep = r.choice([',', ', ', ',\n  '])
    text = '{' + sep.join('"%s":%d' % (x, i) for i, x in enumerate(names)) + '}'
    b = text.encode()
    k = r.random()
    if k < 0.05:
        b = b[:r.randint(0, len(b))]
    elif k < 0.1:
        b = b.replace(b'~', b'\xff', 1)
    return b


def main(argv):
    o = builds.options(argv, 30000, 2, __doc__)
    if o is None:
        return 2
    seed, count, libs = o
    r = random.Random(seed)
    docs = [doc(r) for _ in range(count)]
    outs = builds.run_all(libs, docs)
    nOk = sum(1 for x in outs[0] if x.startswith('ok'))
    print('%d documents (seed %d): %d canonical, %d errors' %
          (len(docs), seed, nOk, len(docs) - nOk))
    return 1 if builds.compare(libs, docs, outs) else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
