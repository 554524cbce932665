#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Golden key vectors for idem_key() (doc/contract.md §2), computed independently of
the C code: the frame is built here in Python, and hashed by the xxhsum
command-line tool (Debian package "xxhash"), whose -H2 prints XXH3-128 in
xxHash's canonical big-endian form.

    /usr/bin/python3 test/data/gen_keys.py > test/data/keys.txt

Each output line is six tab-separated fields:
    who conv tool args_input args_canonical key
A part is written TYPE:HEX, TYPE being t (text), b (blob), i (integer) or
r (real).  For t and b, HEX is the part's bytes.  For i and r, HEX is the
decimal literal of the value the test binds as an SQL integer or real (a
double); the frame carries an integer's decimal digits and a real's
ECMAScript form (ecma() below, written here from Python's shortest repr,
not from the C printer): 42.0 gives "42", 0.30000000000000004 keeps its
digits (doc/contract.md §2).  args_input is the hex of JSON text, or i:HEX
or r:HEX for args given as an SQL number; args_canonical is the canonical
text the frame carries (what idem_canonical(args_input) returns for text).
"""
import decimal, os, struct, subprocess, tempfile

MAGIC = b"idem:v1\0"

def frame(parts):
    out = bytearray(MAGIC)
    for p in parts:
        out += struct.pack("<I", len(p)) + p
    return bytes(out)

def xxh128(data):
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(data)
        name = f.name
    try:
        out = subprocess.run(["xxhsum", "-H2", name], check=True,
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(name)
    return out.split()[0]

def ecma(x):
    """ECMAScript Number::toString(x) of a finite double (ECMA-262
    Number::toString, radix 10), from Python's shortest round-trip repr."""
    if x == 0:
        return "0"
    if x < 0:
        return "-" + ecma(-x)
    t = decimal.Decimal(repr(x)).normalize().as_tuple()
    s = "".join(str(d) for d in t.digits)
    k = len(s)
    n = t.exponent + k                   # x = 0.s * 10^n
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + s
    e = n - 1
    m = s if k == 1 else s[0] + "." + s[1:]
    return m + "e" + ("+" if e >= 0 else "-") + str(abs(e))

def part(kind, value):
    if kind == "b":
        return value
    if kind == "i":
        return str(int(value)).encode("ascii")
    if kind == "r":
        return ecma(float(value)).encode("ascii")
    return value.encode("utf-8")

# (who, conv, tool, args as given, args canonical)
V = [
    (("t", "alice"), ("t", "conv-1"), ("t", "send_email"),
     '{"to":"bob@example.com","subject":"hi"}',
     '{"subject":"hi","to":"bob@example.com"}'),
    (("t", "alice"), ("t", "conv-1"), ("t", "send_email"),
     '{ "subject" : "hi" , "to" : "bob@example.com" }',
     '{"subject":"hi","to":"bob@example.com"}'),
    (("t", "bob"), ("t", "conv-1"), ("t", "send_email"),
     '{"to":"bob@example.com","subject":"hi"}',
     '{"subject":"hi","to":"bob@example.com"}'),
    (("t", "alice"), ("t", "conv-2"), ("t", "send_email"),
     '{"to":"bob@example.com","subject":"hi"}',
     '{"subject":"hi","to":"bob@example.com"}'),
    (("t", ""), ("t", ""), ("t", ""), '{}', '{}'),
    (("t", ""), ("t", ""), ("t", ""), '[]', '[]'),
    (("t", ""), ("t", ""), ("t", ""), '""', '""'),
    (("t", "a:b"), ("t", "c"), ("t", "t"), 'null', 'null'),
    (("t", "a"), ("t", "b:c"), ("t", "t"), 'null', 'null'),
    (("i", "42"), ("i", "7"), ("t", "charge"), '{"amount":1000}', '{"amount":1000}'),
    (("r", "1.5"), ("i", "-3"), ("t", "t"), '1.0', '1'),
    (("t", "\u738b\u5c0f\u660e"), ("t", "\u5bf9\u8bdd-\u4e00"), ("t", "\u7ed3\u8d26"),
     '{"\u5546\u54c1":"iPhone 13","\u6570\u91cf":2}',
     '{"\u5546\u54c1":"iPhone 13","\u6570\u91cf":2}'),
    (("t", "z\u00fcrich"), ("t", "\U0001F600"), ("t", "caf\u00e9"),
     '{"\\u00e9":1,"e":2}', '{"e":2,"\u00e9":1}'),
    (("t", "u"), ("t", "c"), ("t", "create_order"),
     '{"id":9007199254740993}', '{"id":9007199254740993}'),
    (("t", "u"), ("t", "c"), ("t", "create_order"),
     '{"id":9007199254740992}', '{"id":9007199254740992}'),
    (("t", "u"), ("t", "c"), ("t", "create_order"),
     '{"id":-123456789012345678901234567890}',
     '{"id":-123456789012345678901234567890}'),
    (("t", "u"), ("t", "c"), ("t", "t"),
     '{"n":[1E30,0.000001,1e-7,-0,1.50,100]}',
     '{"n":[1e+30,0.000001,1e-7,0,1.5,100]}'),
    (("b", b"\x00\x01\xff"), ("t", "c"), ("t", "t"), '1', '1'),
    (("t", "\x00\x01\xff".encode("latin-1").decode("latin-1")), ("t", "c"), ("t", "t"), '1', '1'),
    (("t", "u"), ("t", "c"), ("t", "t"),
     '{"b":{"y":[3,2,1],"x":"\\n\\u0001"},"a":true}',
     '{"a":true,"b":{"x":"\\n\\u0001","y":[3,2,1]}}'),
    (("t", "u"), ("t", "c"), ("t", "t"),
     '{"\\ud83d\\ude00":1,"\\uffff":2}', '{"\U0001F600":1,"\uffff":2}'),
    # a frame above 2 KiB (the streamed path)
    (("t", "u" * 700), ("t", "c" * 700), ("t", "t" * 700),
     '{"text":"' + "x" * 1000 + '"}', '{"text":"' + "x" * 1000 + '"}'),
    (("t", "u"), ("t", "c"), ("t", "bulk"),
     '[' + ",".join(str(i) for i in range(1000)) + ']',
     '[' + ",".join(str(i) for i in range(1000)) + ']'),
    # integer and real parts (doc/contract.md §2): an integer as its
    # decimal digits, a real as ECMAScript prints that double, never
    # SQLite's 15-digit text of it
    (("r", "42.0"), ("i", "42"), ("t", "t"), '1', '1'),
    (("r", "0.30000000000000004"), ("r", "0.1"), ("t", "t"), '1', '1'),
    (("r", "1e21"), ("r", "1e-7"), ("r", "123456789012345680000"), '1', '1'),
    (("r", "5e-324"), ("r", "1.7976931348623157e308"), ("r", "-0.0"), '1', '1'),
    (("r", "-1.5e-10"), ("r", "0.000001"), ("r", "2.5e+22"), '1', '1'),
    (("i", "-9223372036854775808"), ("i", "9223372036854775807"), ("i", "0"),
     '1', '1'),
    # args given as an SQL number: that JSON number, printed the same way
    (("t", "u"), ("t", "c"), ("t", "t"), ("r", "0.30000000000000004"),
     '0.30000000000000004'),
    (("t", "u"), ("t", "c"), ("t", "t"), ("r", "42.0"), '42'),
    (("t", "u"), ("t", "c"), ("t", "t"), ("r", "1e21"), '1e+21'),
    (("t", "u"), ("t", "c"), ("t", "t"), ("i", "9007199254740993"),
     '9007199254740993'),
    (("t", "u"), ("t", "c"), ("t", "t"), ("i", "-7"), '-7'),
]

def enc(kind, value):
    b = value if kind == "b" else value.encode("utf-8")
    return kind + ":" + b.hex()

def enc_args(args_in):
    if isinstance(args_in, tuple):       # an SQL number
        return args_in[0] + ":" + args_in[1].encode("ascii").hex()
    return args_in.encode("utf-8").hex()

for who, conv, tool, args_in, args_c in V:
    if isinstance(args_in, tuple):
        assert part(*args_in).decode("ascii") == args_c
    parts = [part(*who), part(*conv), part(*tool), args_c.encode("utf-8")]
    key = xxh128(frame(parts))
    print("\t".join([enc(*who), enc(*conv), enc(*tool), enc_args(args_in),
                     args_c.encode("utf-8").hex(), key]))
