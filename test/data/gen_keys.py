#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Golden key vectors for idem_key() (doc/contract.md §2), computed independently of
the C code: the frame is built here in Python, and hashed by the xxhsum
command-line tool (Debian package "xxhash"), whose -H2 prints XXH3-128 in
xxHash's canonical big-endian form.

    /usr/bin/python3 test/data/gen_keys.py > test/data/keys.txt

Each output line is five or six tab-separated fields:
    who conv tool args_input args_canonical key
A part is written TYPE:HEX, TYPE being t (text), i (integer), r (real) or
b (blob); HEX is the bytes SQLite's text of the value has (or the blob's).
args_canonical is what idem_canonical(args_input) must return.
"""
import os, struct, subprocess, tempfile

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

def part(kind, value):
    if kind == "b":
        return value
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
]

def enc(kind, value):
    b = part(kind, value)
    return kind + ":" + b.hex()

for who, conv, tool, args_in, args_c in V:
    parts = [part(*who), part(*conv), part(*tool), args_c.encode("utf-8")]
    key = xxh128(frame(parts))
    print("\t".join([enc(*who), enc(*conv), enc(*tool),
                     args_in.encode("utf-8").hex(),
                     args_c.encode("utf-8").hex(), key]))
