#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test/diff/halfway.py -- long decimals near halfway points, build by build.

    python3 test/diff/halfway.py [--seed N] [--count N] LIB [LIB ...]

Generates decimals at and near the points halfway between two doubles,
the literals that step 4 decides (ext/idem_number.c): for random doubles
of every exponent (subnormals, powers of two, the least subnormal's and
the largest double's points among them), the exact halfway point, that
+-1 in its last digit, cut to 1-40 digits then 1-900 zeros or nines and
a digit, cut at 790-810 digits (around the 800 digits step 4 keeps), the
double itself written out (Decimal(x)); each written plain or with an
exponent (e or E, a sign, leading zeros, the mantissa shifted so that
the '.' falls anywhere, or none), negative or not.  Each is a document
alone, then in an array before 70 digits, in an object before an 80-byte
string, and 500 to an array.  Runs idem_canonical() of each build in a
process of its own (builds.py's way) and compares the text or error
byte for byte with the first; and for the first build, each literal
alone read back by Python's float() must equal float() of the literal.
A Python with a sqlite3 that can load extensions (Debian's /usr/bin/python3).
"""
import math, os, random, struct, sys
from decimal import Decimal, getcontext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import builds  # noqa: E402

getcontext().prec = 3000


def digits_exp(d):
    """The digits of the positive Decimal d (no zeros at either end) and
    L, so that d = 0.DIGITS * 10^(L+1)."""
    t = d.normalize().as_tuple()
    s = ''.join(map(str, t.digits))
    return s, len(s) + t.exponent - 1


def write(r, s, L, neg):
    """The decimal 0.s * 10^(L+1) (s: digits, the first not 0) in one of
    its JSON spellings."""
    k = r.random()
    sign = '-' if neg else ''
    if k < 0.45 and -30 <= L <= 40:
        # plain
        if L >= 0:
            ip = s[:L + 1].ljust(L + 1, '0')
            fp = s[L + 1:]
            if not fp:
                return sign + ip + ('.0' if r.random() < 0.3 else '')
            return sign + ip + '.' + fp
        return sign + '0.' + '0' * (-L - 1) + s
    # mantissa with the '.' after digit p (p >= 1), or none
    p = r.choice([1, 1, 1, 2, 3, 17, 19, 20, 25, len(s)])
    p = max(1, min(p, len(s)))
    x = L - p + 1
    m = s[:p] + ('.' + s[p:] if p < len(s) else
                 ('' if r.random() < 0.5 else '.0'))
    if r.random() < 0.1 and '.' in m and L < 0:
        # 0.000ddd with an exponent
        z = r.randint(1, 12)
        m = '0.' + '0' * (z - 1) + s
        x = L + z
    e = r.choice('eE')
    es = ('-' if x < 0 else r.choice(['', '+']))
    ex = str(abs(x))
    if r.random() < 0.1:
        ex = '0' * r.randint(1, 3) + ex
    return sign + m + e + es + ex


def random_double(r):
    k = r.random()
    if k < 0.05:
        return math.ldexp(1.0, r.randint(-1074, 1023))
    if k < 0.08:
        return r.choice([5e-324, 1e-323, 2.2250738585072014e-308,
                         2.225073858507201e-308, 1.7976931348623157e308,
                         1.7976931348623155e308, 9007199254740992.0,
                         9007199254740993.0 - 1])
    if k < 0.15:
        return struct.unpack('<d', struct.pack('<Q', r.randrange(1, 1 << 52)))[0]
    if k < 0.5:
        return r.random() * 10.0 ** r.randint(-25, 25)
    while True:
        b = r.randrange(1, 0x7ff0000000000000)
        return struct.unpack('<d', struct.pack('<Q', b))[0]


def literals(r, count):
    out = []
    while len(out) < count:
        x = random_double(r)
        up = math.nextafter(x, math.inf)
        if math.isinf(up):
            # the halfway point above the largest double: rounds to infinity
            h = Decimal(x) + (Decimal(x) - Decimal(math.nextafter(x, 0))) / 2
        else:
            h = Decimal(x) + (Decimal(up) - Decimal(x)) / 2
        s, L = digits_exp(h)
        neg = r.random() < 0.3
        cands = [(s, L)]
        # +-1 in the last digit
        v = int(s)
        for dv in (1, -1):
            t = str(v + dv)
            if len(t) == len(s):
                cands.append((t.rstrip('0') or '0', L))
        # cut to 1-40 digits, then a run of zeros or nines and a digit
        for _ in range(2):
            k = min(len(s), r.randint(1, 40))
            c = s[:k]
            if r.random() < 0.5:
                c = c + '0' * r.randint(1, 900) + str(r.randint(1, 9))
            else:
                c0 = str(int(c) - 1).zfill(k) if int(c) > 1 else c
                c = c0 + '9' * r.randint(1, 900) + str(r.randint(0, 9))
            c = c.rstrip('0')
            if c and c[0] != '0':
                cands.append((c, L))
        # the tie's first 17-20 digits, 20 zeros or nines, a digit (the
        # benchmark's row)
        k = r.randint(17, 20)
        if len(s) >= k:
            c = s[:k]
            if r.random() < 0.5:
                cands.append((c + '0' * 20 + '1', L))
            else:
                c0 = str(int(c) - 1).zfill(k)
                if c0[0] != '0':
                    cands.append((c0 + '9' * 20 + '9', L))
        # cut at 790-810 digits, with a digit after
        if len(s) > 40:
            c = (s + '7' * 900)[:r.randint(790, 810)]
            cands.append((c.rstrip('0'), L))
        # the double written out
        if x > 0:
            cands.append(digits_exp(Decimal(x)))
        for c, l in cands:
            if c and c[0] != '0' and -400 < l < 400:
                out.append(write(r, c, l, neg))
    return out


def main(argv):
    o = builds.options(argv, 100000, 1, __doc__)
    if o is None:
        return 2
    seed, count, libs = o
    r = random.Random(seed)
    lits = literals(r, count)
    docs = [x.encode() for x in lits]
    for x in lits[:count // 4]:
        docs.append(('[' + x + ',' + '1' * 70 + ']').encode())
        docs.append(('{"a":' + x + ',"b":"' + 'x' * 80 + '"}').encode())
    for i in range(0, len(lits), 500):
        docs.append(('[' + ','.join(lits[i:i + 500]) + ']').encode())
    outs = builds.run_all(libs, docs)
    nOk = sum(1 for x in outs[0] if x.startswith('ok'))
    print('%d literals, %d documents (seed %d): %d canonical, %d errors' %
          (len(lits), len(docs), seed, nOk, len(docs) - nOk))
    nBad = 0
    for j, x in enumerate(lits):
        o = outs[0][j]
        f = float(x)
        if math.isinf(f):
            if o.startswith('ok'):
                print('  %s: %r is past the doubles, got %s' % (libs[0], x, o))
                nBad += 1
            continue
        if not o.startswith('ok') or float(bytes.fromhex(o[3:]).decode()) != f:
            if nBad < 5:
                print('  %s: %r -> %s, float() %r' % (libs[0], x, o[:80], f))
            nBad += 1
    print('%s: %s' % (libs[0], 'every literal reads back as float() of it'
                      if not nBad else '%d do not read back' % nBad))
    nBad += builds.compare(libs, docs, outs)
    return 1 if nBad else 0

if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
