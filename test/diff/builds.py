#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test/diff/builds.py -- two or more builds of idem, byte for byte.

    python3 test/diff/builds.py [--seed N] [--big] LIB LIB [LIB ...]

Generates documents aimed at the canonicalizer's vector and sort paths
and runs idem_canonical() of each build on every one, in a process per
build (two libraries named idem.so do not load side by side), comparing
text and error message (with its position) byte for byte; prints the
counts and the first differences, and exits non-zero on one.  No
reference is needed: use it against an older build, as the old tree's
`make build/idem.so` in a `git worktree add --detach`, or the portable
(-DIDEM_JSON_PORTABLE) and no-AVX2 builds of mk/checks.mk.  The
documents (about 101 000, 44 MB, a few seconds a build):

  - runs of 1 to 40 \\u escapes (CJK, surrogate pairs, E000-FFFF, 0800-0FFF,
    uppercase hex) with one odd escape at every place (U+0000-U+07FF, a
    lone or reversed surrogate, bad hex at any digit, a short escape,
    raw UTF-8), after 0-63 spaces, as values and names; mixtures cut
    anywhere;
  - \\/ (PHP's json_encode()) at every place of a 16-byte block, next to
    every other escape and to bad ones, 0-41 bytes before the input's end;
    objects of such names and values, some cut anywhere;
  - numbers: subnormals of 1 to 17 digits, every exponent sign and case,
    '%.17g' and repr() doubles, -0, integers of 11-17 digits, bad ones;
  - objects of 2 047, 2 048, 2 049, 16 383, 16 384 and 16 385 members
    (names numbered, with one long shared prefix, random, of escapes, of
    'a'/'b', with \\u0000 inside and at the end, shared prefixes of 4-32
    bytes), in random, sorted and reverse order, a duplicate at each of
    the places that split them, nested ones; --big adds 32 768 to 70 000;
  - objects of 2 to 20 000 members whose names hold escapes that canonical
    text keeps (\\", \\\\, \\n, \\t, \\u0001 ...) among raw and non-ASCII
    characters, each character spelt one of its ways (\\u0022 for \\", \\/),
    and now and then one name twice in two spellings (a duplicate);
  - objects of names of kept escapes as they are written (\\" \\\\ \\n ...):
    runs of 1-9 backslashes at every place of a 32-byte block, names of
    0-100 bytes, now and then a \\u, \\/ or bad escape, a control
    character or non-ASCII byte, an input not UTF-8 or cut near a name;
  - names of 16-130 bytes with 0-3 \\u escapes (raw and kept ones, bad
    hex, lone surrogates) anywhere in them, objects cut near their end;
  - objects of 17-16 385 members whose names come in 1-6 families (their
    first 8 bytes, or the highest bytes of their sort keys, taking a few
    values), with names that end inside a family's bytes and duplicates.

A Python with a sqlite3 that can load extensions (Debian's /usr/bin/python3).
"""
import os, random, sqlite3, struct, subprocess, sys, tempfile


def run_lib(lib, docs, out):
    db = sqlite3.connect(':memory:')
    db.enable_load_extension(True)
    db.load_extension(lib)
    with open(docs, 'rb') as f, open(out, 'w') as o:
        while True:
            h = f.read(4)
            if not h:
                break
            n, = struct.unpack('<I', h)
            b = f.read(n)
            try:
                r = db.execute("SELECT hex(CAST(idem_canonical(CAST(? AS TEXT)) AS BLOB))",
                               (b,)).fetchone()[0]
                o.write('ok ' + r + '\n')
            except sqlite3.Error as e:
                o.write('err ' + str(e).replace('\n', '\\n') + '\n')


def generate(seed, big):
    r = random.Random(seed)
    docs = []

    def add(s):
        docs.append(s.encode('utf-8', 'surrogatepass'))

    def hx(u):
        return ''.join(c.upper() if r.random() < .3 else c for c in '%04x' % u)

    def esc(k):
        if k == 0: return '\\u' + hx(r.randrange(0x1000, 0xd800))
        if k == 1: return ('\\u' + hx(r.randrange(0xd800, 0xdc00))
                           + '\\u' + hx(r.randrange(0xdc00, 0xe000)))
        if k == 2: return '\\u' + hx(r.randrange(0x800, 0x1000))
        if k == 3: return '\\u' + hx(r.randrange(0x80, 0x800))
        if k == 4: return '\\u' + hx(r.randrange(0x0, 0x100))
        if k == 5: return '\\u' + hx(r.randrange(0xd800, 0xdc00))    # lone high
        if k == 6: return '\\u' + hx(r.randrange(0xdc00, 0xe000))    # lone low
        if k == 7: return '\\u' + hx(r.randrange(0xe000, 0x10000))
        if k == 8: return r.choice(['\\n', '\\"', '\\\\', '\\/', '\\t', '\\b'])
        if k == 9: return r.choice(['a', '\u00e9', '\u4e2d', '\U0001f600', ' '])
        if k == 10:                                                   # bad hex
            e = list(esc(r.choice([0, 1, 7])))
            i = r.randrange(2, 6) if len(e) == 6 else r.choice([2, 3, 4, 5, 8, 9, 10, 11])
            e[i] = r.choice('gGxz/:@`"\\ \x00\x7f\u00e9')
            return ''.join(e)
        if k == 11: return ('\\u' + hx(r.randrange(0xdc00, 0xe000))   # reversed
                            + '\\u' + hx(r.randrange(0xd800, 0xdc00)))
        return '\\u' + hx(r.randrange(0, 0x10000))

    main = [0, 0, 0, 1, 1, 7, 2]

    def run(n, odd=0.0):
        return ''.join(esc(r.randrange(0, 13) if r.random() < odd else r.choice(main))
                       for _ in range(n))

    # runs of 1..40 escapes, one odd escape at every place, padded
    for n in range(1, 41):
        for at in range(n):
            for k in range(13):
                s = run(at) + esc(k) + run(n - at - 1)
                pad = ' ' * r.randrange(0, 64)
                add('[' + pad + '"' + s + '"]')
                if r.random() < .3:
                    add('{' + pad + '"' + s + '":"' + run(r.randrange(1, 41)) + '"}')
    # mixtures, names too, some cut anywhere
    for i in range(20000):
        s = run(r.randrange(1, 41), odd=r.choice([0.02, 0.1, 0.5]))
        d = ('{' + ' ' * r.randrange(0, 70) + '"' + s + '":['
             + ','.join('"%s"' % run(r.randrange(1, 20), .05) for _ in range(r.randrange(1, 4)))
             + ']}')
        if r.random() < .2:
            d = d[:r.randrange(1, len(d))]
        add(d)

    # \/ (PHP's json_encode() writes every '/' so) at every place of a
    # 16-byte block and across its end, next to every other escape, to
    # bad ones (whose message and offset must not move) and to the end of
    # the input 0-40 bytes on, in values and names, valid UTF-8 or not
    atoms = ['\\/', '\\/', '\\/', '\\\\/', '\\\\', '\\"', '\\n', '\\t', '\\b',
             '\\f', '\\r', '\\u00e9', '\\u002F', '\\ud83d\\ude00', '\\u4e2d', '/',
             'a', 'src', '\u00e9', '\u4e2d', '\U0001f600']
    bad = ['\\x', '\\', '\\u12', '\\u12g4', '\\ud800', '\\udc00x', '\x01', '\x1f',
           '\udc00', '\\/\\', '\\/\\u']
    for lead in range(0, 20):
        for a in atoms + bad:
            for tail in range(0, 42, 3):
                s = 'p' * lead + '\\/' + a + '\\/x'
                add('["' + s + '"' + ' ' * tail + ']')
                add('{"' + s + '":1' + ' ' * tail + '}')
                add('["' + s + ' ' * tail)                       # unterminated
    for i in range(20000):
        def php(n, odd):
            return ''.join(r.choice(bad) if r.random() < odd else r.choice(atoms)
                           for _ in range(n))
        odd = r.choice([0, 0, 0.01, 0.05])
        d = ('{' + ' ' * r.randrange(0, 20) + ','.join(
            '"%s":"%s"' % (php(r.randrange(0, 12), odd), php(r.randrange(0, 30), odd))
            for _ in range(r.randrange(1, 6))) + '}' + ' ' * r.randrange(0, 40))
        if r.random() < .1:
            d = d[:r.randrange(1, len(d))]
        add(d)

    def num():
        c = r.random()
        if c < .4:
            nd = r.randrange(1, 18)
            m = str(r.randrange(1, 10))
            if nd > 1:
                m += ('.' + ''.join(str(r.randrange(10)) for _ in range(nd - 2))
                      + str(r.randrange(0, 10)))
            sg = r.choice(['-', '-', '-', '', '+'])
            x = (r.choice([r.randrange(300, 330), r.randrange(0, 330)]) if sg == '-'
                 else r.randrange(0, 300))
            return r.choice(['', '-']) + m + r.choice(['e', 'E']) + sg + str(x)
        if c < .6:
            return '%.17g' % (r.uniform(-1, 1) * 10 ** r.randrange(-330, 309))
        if c < .7:
            return repr(r.uniform(-1, 1) * 10 ** r.randrange(-330, 309))
        if c < .8:
            return r.choice(['-0', '-0.0', '-0e0', '-0E-0', '0e+0', '-0.000e-400',
                             '1e-0308', '1E+0308', '5e-324', '-5e-324',
                             '2.4703282292062327e-324', '2.4703282292062328e-324'])
        if c < .9:
            return (str(r.randrange(10 ** 10, 10 ** 17))
                    + r.choice(['', 'e-320', 'e-330', 'e5', '.5e-310', 'e+3']))
        return r.choice(['1.', '1e', '1e+', '-', '01', '1.e5', '.5', '1e-3x',
                         '1.2345678901e-31', '1.2345678901e-3', '1.23456789012e-3099'])
    for i in range(20000):
        pad = ' ' * r.randrange(0, 70)
        if r.random() < .3:
            add(pad + num())
        else:
            add('[' + pad + ','.join(num() for _ in range(r.randrange(1, 9))) + ']')

    def b3(i):
        d = []
        while True:
            d.append(['\\u0000', 'a', 'b'][i % 3])
            i //= 3
            if i == 0:
                break
        return ''.join(d) + r.choice(['', '\\u0000'])

    def name(i, style):
        if style == 0: return 'k%d' % i
        if style == 1: return 'prefix_common_to_all_of_them_%08d' % i
        if style == 2: return '%x' % r.getrandbits(40)
        if style == 3: return run(r.randrange(1, 4))
        if style == 4: return 'n' + ''.join(r.choice('ab') for _ in range(r.randrange(1, 16)))
        if style == 5: return '%d' % (i * 7919 % 100003)
        if style == 6: return ''.join(r.choice(['\\u0000', '\\u0001', 'a', '\\uffff',
                                                '\\ud800\\udc00', '\\u00ff', '\\ue000',
                                                '\\u007f']) for _ in range(r.randrange(0, 9)))
        if style == 7: return r.choice(['', 'abcd', 'abcdefgh', 'abcdefghijklmnop',
                                        'abcdefghijklmnopqrstuvwxyz012345']) + b3(i)
        return ''.join(r.choice('ab') for _ in range(r.randrange(0, 15)))

    def bigobj(n, style, dup=None, nested=False):
        names = [name(i, style) for i in range(n)]
        if style in (2, 3, 4, 6, 7, 8):
            names = list(dict.fromkeys(names))
        if r.random() < .7:
            r.shuffle(names)
        else:
            names.sort(reverse=r.random() < .5)
        if dup is not None:
            a, b = (min(x, len(names) - 1) for x in dup)
            if a != b:
                names[b] = names[a]
        vals = []
        for i in range(len(names)):
            if nested and i % 997 == 0:
                vals.append(bigobj(r.choice([2047, 2048, 2049]), r.randrange(0, 9)))
            else:
                vals.append(r.choice(['0', '1', '"v"', 'null', '[1,2]', '{"b":1,"a":2}', str(i)]))
        return '{' + ','.join('"%s":%s' % kv for kv in zip(names, vals)) + '}'

    for n in (2047, 2048, 2049, 16383, 16384, 16385):
        for style in range(9):
            add(bigobj(n, style))
        for a, b in ((0, 1), (0, n - 1), (n - 2, n - 1), (1000, 2047), (2046, 2047),
                     (2047, 2048), (16383, 16384), (5, 9000), (n - 1, 0), (9000, 5)):
            if a < n and b < n:
                add(bigobj(n, r.randrange(0, 9), dup=(a, b)))
    add(bigobj(20000, 0, nested=True))
    add(bigobj(3000, 1, nested=True))
    add(bigobj(17000, 5, dup=(16999, 3), nested=True))

    # names holding escapes that canonical text keeps (\" \\ \b \f \n \r
    # \t \u00xx), each character spelt one of its ways (\u0022 for \",
    # \u000A, \/ and \u002f for '/', \u escapes of non-ASCII), so that
    # the same name comes twice in different spellings (a duplicate)
    alpha = ['"', '\\', '\b', '\f', '\n', '\r', '\t', '\x00', '\x01', '\x1f',
             '\x7f', ' ', '!', '#', '/', '0', '9', 'A', '[', ']', '^', 'a', 'z', '~',
             '\u00e9', '\u4e2d', '\ue000', '\uffff', '\U0001f600']
    short = {'"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f',
             '\n': '\\n', '\r': '\\r', '\t': '\\t', '/': '\\/'}

    def spell(name):
        out = []
        for ch in name:
            ways = []
            if ch >= ' ' and ch not in '"\\':
                ways += [ch, ch]
            if ch in short:
                ways += [short[ch], short[ch]]
            u = ord(ch)
            if u < 0x10000:
                ways.append('\\u' + hx(u))
            else:
                u -= 0x10000
                ways.append('\\u' + hx(0xd800 + (u >> 10)) + '\\u' + hx(0xdc00 + (u & 0x3ff)))
            out.append(r.choice(ways))
        return ''.join(out)

    def kept(n, pre):
        names = set()
        while len(names) < n:
            m = r.choice([1, 2, 3, 5, 8, 9, 15, 16, 17, 24])
            names.add(pre + ''.join(r.choice(alpha) for _ in range(r.randrange(0, m + 1))))
        names = list(names)
        r.shuffle(names)
        if r.random() < .3:
            names.sort(key=lambda k: k.encode('utf-16-be', 'surrogatepass'))
        sp = [spell(k) for k in names]
        if r.random() < .25 and n > 1:
            a, b = r.randrange(n), r.randrange(n)
            if a != b:
                sp[b] = spell(names[a])
        return '{' + ','.join('"%s":%d' % (k, i) for i, k in enumerate(sp)) + '}'

    for n in list(range(2, 40)) + [100, 255, 256, 257, 1000, 2047, 2048, 2049]:
        for _ in range(40 if n < 40 else 8):
            pre = r.choice(['', '', 'k', 'prefix_common', 'a\\"b', 'x' * 20])
            add(kept(n, pre))
    for n in (16383, 16384, 16385, 20000):
        for pre in ('', 'k', 'prefix_common_to_them_all'):
            add(kept(n, pre))
    add('[' + ','.join(kept(r.randrange(2, 300), '') for _ in range(50)) + ']')

    # names of kept escapes only, as they are written (\\" \\\\ \\n ...:
    # idemJsonKeptName(), 32 bytes at a time): runs of 1-9 backslashes of
    # either parity at every place of a 32-byte block and across its end,
    # names of 0-100 bytes, now and then a piece that sends the name to
    # the general scan (a \\u or \\/ escape, a bad one, a raw control
    # character, non-ASCII, a byte that is no UTF-8 anywhere in the input),
    # escapes in the value right after the name, inputs cut near a name
    pieces = ['a', 'b', 'Z', '0', '.', ' ', 'ab', 'col', 'users', '/', '~',
              '\\"', '\\\\', '\\n', '\\t', '\\r', '\\b', '\\f',
              '\\\\\\\\', '\\\\\\"', '\\\\\\\\\\\\', '\\"\\"']
    odd = ['\\u0041', '\\u00e9', '\\u0022', '\\/', '\\x', '\\', '\x01',
           '\x7f', '\u00e9', '\u4e2d', '\\u005c']

    def kname(nb):
        out, n = [], 0
        while n < nb:
            p = r.choice(pieces)
            if p == '\\\\' and r.random() < .3:
                p = '\\' * (2 * r.randrange(1, 5))
            out.append(p)
            n += len(p)
        if r.random() < .08:
            out.insert(r.randrange(len(out) + 1), r.choice(odd))
        return ''.join(out)

    for _ in range(6000):
        n = r.choice([1, 2, 3, 5, 9, 17, 40, 300])
        nb = r.choice([0, 1, 8, 15, 16, 20, 30, 31, 32, 33, 34, 40, 63, 64, 65, 100])
        names = []
        for i in range(n):
            k = kname(max(0, nb + r.randrange(-3, 4)))
            names.append(k)
        if r.random() < .2 and n > 1:
            names[r.randrange(n)] = names[r.randrange(n)]
        vals = [r.choice(['1', '"x\\ny"', '"\\"\\\\"', '{}', '[1]'])
                for _ in names]
        doc = '{' + ','.join('"%s":%s' % kv for kv in zip(names, vals)) + '}'
        if r.random() < .1:
            doc = doc[:len(doc) - r.randrange(1, 40)]
        b = doc.encode('utf-8', 'surrogatepass')
        if r.random() < .05:
            b = b + b' "\xff"'         # no UTF-8: isUtf8 0
        docs.append(b)

    # names past the escaped names' fast path's first 16 bytes (names16):
    # plain names of 16-130 bytes, ASCII or not (U+E000-U+FFFF: the sort
    # keys' fix-up), with 0-3 \u escapes (raw or kept, bad hex, lone
    # surrogates) at any offset, some objects cut short near the end
    lchars = ['a', 'b', 'z', 'A', '0', '9', '-', '.', '_', ' ', '~', '\u00e9',
              '\u4e2d', '\ue000', '\uffee', '\U0001f600']
    lesc = ['\\u00e9', '\\u002d', '\\u0041', '\\u4e2d', '\\uE000', '\\uffff',
            '\\u0022', '\\u005c', '\\u000a', '\\u001f', '\\u0020', '\\u007f',
            '\\ud83d\\ude00', '\\n', '\\\\', '\\"', '\\/', '\\u0080',
            '\\u07ff', '\\u0800']
    lbad = ['\\ud800', '\\udc00', '\\u12G4', '\\u00e', '\\x']

    def lname(pre, pbad):
        n = r.choice([0, 8, 12, 15, 16, 17, 20, 31, 32, 33, 40, 47, 48, 60, 100, 130])
        t = [pre] + [r.choice(lchars[:11] if r.random() < .8 else lchars)
                     for _ in range(n)]
        for _ in range(r.choice([0, 0, 1, 1, 2, 3])):
            t.insert(r.randrange(len(t) + 1),
                     r.choice(lbad if r.random() < pbad else lesc))
        return ''.join(t)

    for n in list(range(2, 20)) + [40, 200, 300, 2100]:
        for _ in range(60 if n < 20 else 6):
            pre = r.choice(['', '', 'description', 'spec.template.spec.',
                            'x' * 16, 'y' * 40])
            names = list(dict.fromkeys(lname(pre, .3 / n) for _ in range(n)))
            if r.random() < .2 and len(names) > 1:
                names[-1] = names[0]
            d = '{' + ','.join('"%s":%d' % (k, i) for i, k in enumerate(names)) + '}'
            add(d)
            add(d[:-r.randrange(1, 80)])

    # objects whose names' first 8 bytes take a few values (families of
    # names: the counting sort of 17-255 members), and large ones whose
    # sort keys' highest differing byte does (split before the radix
    # sort: 4 096 ranks or more), names that end inside a family's bytes,
    # equal names across families
    fams = ['descript', 'user_pro', 'Gr\u00f6\u00dfe_', 'spec.tem', 'metadata',
            'status.t', 'a', 'ab', 'abcdefgh', 'abcdefghi', '\uffee\uffef',
            '\ue000x', 'data\u002d', 'zzzzzzzzzzzzzzzzzzzz']
    for n in (17, 18, 24, 63, 64, 65, 100, 200, 255, 256, 4095, 4096, 4097,
              8000, 12500, 16384, 16385):
        for _ in range(12 if n < 256 else 2):
            fs = r.sample(fams, r.choice([1, 2, 3, 4, 4, 5, 6]))
            names = set()
            while len(names) < n:
                f = r.choice(fs)
                tail = r.choice(['', '%d' % r.randrange(n * 4),
                                 '.%s.%d' % (r.choice(['env', 'ports', 'volumes']),
                                             r.randrange(50)),
                                 'ion%d\u00e9' % r.randrange(n * 4)])
                names.add(f + tail)
            names = list(names)
            r.shuffle(names)
            if r.random() < .25:
                names[r.randrange(n)] = names[r.randrange(n)]
            add('{' + ','.join('"%s":%d' % (k, i) for i, k in enumerate(names)) + '}')
    if big:
        for n in (32768, 32769, 40000, 70000):
            for style in (0, 1, 5, 6, 7, 8):
                add(bigobj(n, style))
                add(bigobj(n, style, dup=(r.randrange(n), r.randrange(n))))
                add(bigobj(n, style, dup=(0, n - 1)))
                add(bigobj(n, style, dup=(16384, 16385)))
    return docs


def run_all(libs, docs):
    """Each build's lines for docs (a list of bytes), each build in a
    process of its own: 'ok HEX' or 'err MESSAGE' a document."""
    with tempfile.TemporaryDirectory(prefix='idem-builds-') as tmp:
        path = os.path.join(tmp, 'docs')
        with open(path, 'wb') as f:
            for d in docs:
                f.write(struct.pack('<I', len(d)))
                f.write(d)
        outs = []
        for i, lib in enumerate(libs):
            out = os.path.join(tmp, 'out%d' % i)
            subprocess.run([sys.executable, os.path.abspath(__file__), '--run',
                            os.path.abspath(lib), path, out], check=True)
            with open(out) as f:
                outs.append(f.read().split('\n')[:-1])
    return outs


def compare(libs, docs, outs):
    """Print, for each build after the first, whether its lines are the
    first's, with the first three differences; return how many differ."""
    nDiff = 0
    for i, lib in enumerate(libs[1:], 1):
        bad = [j for j in range(len(docs)) if outs[i][j] != outs[0][j]]
        print('%s: %s' % (lib, 'the same as %s' % libs[0] if not bad else
                          '%d differ from %s' % (len(bad), libs[0])))
        for j in bad[:3]:
            print('  input:  %r' % docs[j][:300])
            print('  %s: %s' % (libs[0], outs[0][j][:300]))
            print('  %s: %s' % (lib, outs[i][j][:300]))
        nDiff += len(bad)
    return nDiff


def options(argv, count, least, usage):
    """The command line of builds.py's siblings (halfway.py, kept.py):
    --seed N, --count N, then at least `least` libraries.  Returns (seed,
    count, libs), or None after printing usage (the tool's __doc__)."""
    seed, libs = 1, []
    args = iter(argv)
    for a in args:
        if a == '--seed':
            seed = int(next(args))
        elif a == '--count':
            count = int(next(args))
        else:
            libs.append(a)
    if len(libs) < least:
        print(usage.split('\n\n')[1], file=sys.stderr)
        return None
    return seed, count, libs


def main(argv):
    seed, big, libs = 1, False, []
    args = iter(argv)
    for a in args:
        if a == '--seed':
            seed = int(next(args))
        elif a == '--big':
            big = True
        elif a == '--run':              # the child: --run LIB DOCS OUT
            run_lib(next(args), next(args), next(args))
            return 0
        else:
            libs.append(a)
    if len(libs) < 2:
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        return 2
    docs = generate(seed, big)
    outs = run_all(libs, docs)
    nOk = sum(1 for x in outs[0] if x.startswith('ok'))
    print('%d documents (seed %d): %d canonical, %d errors' %
          (len(docs), seed, nOk, len(docs) - nOk))
    return 1 if compare(libs, docs, outs) else 0

if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
