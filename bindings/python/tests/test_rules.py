# SPDX-License-Identifier: MIT
"""The rules the Python and the Node package keep alike, in the same words
(doc/choices.md, "The packages"); bindings/node/test/rules.test.js holds
the same tests for Node, with the same messages.

Run with the package installed:  python -m unittest discover -s bindings/python/tests -v
"""
import json
import re
import sqlite3
import sys
import threading
import time
import unittest
import uuid

import idem
from test_idem import Base


def deep(levels, inner=None):
    """A value of `levels` nested lists around inner."""
    v = [] if inner is None else inner
    for _ in range(levels - (1 if inner is None else 0)):
        v = [v]
    return v


def same(a, b):
    """a == b, and of the same types, at any depth (== recurses)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif isinstance(x, dict):
            if sorted(x) != sorted(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif x != y:
            return False
    return True


class RecordRefusedTest(Base):
    """No call is left pending: a record the table refuses (not busy) makes
    the call unknown, with why; only a database that refuses every write
    for record_timeout leaves it pending, and says so (NotRecorded)."""

    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn)
        self.calls.record_timeout = 0.3

    def test_done_refused_is_unknown(self):
        conn = self.conn

        @self.calls.tool(kind="external")
        def send(idempotency_key, n):
            # The database is full: the result does not fit, the note does.
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute("PRAGMA max_page_count = %d" % pages)
            return "x" * n
        with self.assertRaises(idem.Unknown) as cm:
            send("a", "c", n=100000)
        conn.execute("PRAGMA max_page_count = 1000000")
        e = cm.exception
        self.assertEqual((e.status, e.replayed), ("unknown", False))
        self.assertIsInstance(e.__cause__, sqlite3.Error)
        status, note = conn.execute("SELECT status, note FROM calls").fetchone()
        self.assertEqual(status, "unknown")
        self.assertRegex(note, r"\(reported: the tool returned, so its request was made,"
                         r" but the result of send could not be recorded: \w+Error: .*"
                         r"database or disk is full; reconcile it with reconcile ="
                         r" 'arrived' and the target's result\)$")
        with self.assertRaises(idem.Unknown) as again:
            send("a", "c", n=100000)
        self.assertTrue(again.exception.replayed)

    def test_every_write_refused_is_not_recorded(self):
        conn = self.conn

        @self.calls.tool(kind="external")
        def send(idempotency_key):
            conn.execute("PRAGMA query_only = 1")      # no write succeeds
            return {"ok": 1}
        t0 = time.monotonic()
        with self.assertRaises(idem.NotRecorded) as cm:
            send("a", "c")
        self.assertGreaterEqual(time.monotonic() - t0, 0.3)
        conn.execute("PRAGMA query_only = 0")
        e = cm.exception
        key = send.key("a", "c")
        # The done record was refused, so was the unknown one it fell back to.
        self.assertEqual((e.key, e.status, e.result, e.id), (key, "unknown", {"ok": 1}, None))
        self.assertIsInstance(e.__cause__, sqlite3.Error)
        self.assertRegex(str(e), r"^idem: call %s stays pending: its outcome, unknown \(the"
                         r" request may have left\), could not be recorded \(.*readonly"
                         r" database; tried for 0.3 s\); reconcile it: calls.reconcile\('%s',"
                         r" 'arrived' or 'not_arrived' after checking the target\)" % (key, key))
        self.assertEqual(self.calls.reply(key)["status"], "pending")
        self.calls.reconcile(key, "arrived", result=e.result)
        self.assertEqual(send.run("a", "c"), idem.Outcome({"ok": 1}, None, key, True))

    def test_refusal_lifted_within_the_timeout(self):
        conn = self.conn
        self.calls.record_timeout = 10

        @self.calls.tool(kind="external")
        def send(idempotency_key):
            conn.execute("PRAGMA query_only = 1")
            threading.Timer(0.2, lambda: conn.execute("PRAGMA query_only = 0")).start()
            return {"ok": 1}
        with self.assertRaises(idem.Unknown) as cm:     # recorded, once it could be
            send("a", "c")
        self.assertIn("readonly database", cm.exception.reply["message"])
        self.assertEqual(self.count("SELECT status FROM calls"), "unknown")


class ReplayedTest(Base):
    """CallError.replayed: False only on the Unknown raised to the arrival
    that ran the tool; True when told to a duplicate."""

    def test_replayed(self):
        calls = idem.Calls(self.conn, local_failure="keep")

        @calls.tool(kind="external")
        def send(idempotency_key):
            raise TimeoutError("no answer")
        with self.assertRaises(idem.Unknown) as first:
            send("a", "c")
        with self.assertRaises(idem.Unknown) as second:
            send("a", "c")
        self.assertEqual((first.exception.replayed, second.exception.replayed), (False, True))
        self.assertIsInstance(first.exception.__cause__, TimeoutError)

        @calls.tool
        def order(db):
            raise ValueError("no stock")
        with self.assertRaises(ValueError):
            order("a", "c")
        with self.assertRaises(idem.Failed) as failed:
            order("a", "c")
        self.assertTrue(failed.exception.replayed)
        self.conn.execute("INSERT INTO calls(who, conv, tool, args, kind) VALUES"
                          " ('a', 'c', 'held', '{}', 'external')")
        key = calls.key("a", "c", "held", {})
        with self.assertRaises(idem.InProgress) as pending:
            calls.wait_outcome(key, timeout=0)
        self.assertTrue(pending.exception.replayed)
        calls.reconcile(key, "arrived", id=3, result=[1])
        self.assertEqual(calls.wait_outcome(key), idem.Outcome([1], 3, key, True))
        self.assertEqual(calls.wait(key), [1])


class ReconcileKeepsTest(Base):
    def test_arrived_keeps_what_is_not_given(self):
        calls = idem.Calls(self.conn)
        self.conn.execute("INSERT INTO calls(who, conv, tool, args, kind) VALUES"
                          " ('a', 'c', 'send', '{}', 'external')")
        key = calls.key("a", "c", "send", {})
        # What the target reported, written before the verdict.
        self.conn.execute("UPDATE calls SET id = 7, result = '{\"charge\":\"ch_7\"}'"
                          " WHERE key = ? AND member = 0", (key,))
        calls.reconcile(key, "arrived")
        self.assertEqual(self.conn.execute("SELECT status, id, result FROM calls").fetchone(),
                         ("done", 7, '{"charge":"ch_7"}'))
        # A column given is set, None included.
        self.conn.execute("INSERT INTO calls(who, conv, tool, args, kind) VALUES"
                          " ('a', 'c', 'send', '[]', 'external')")
        key = calls.key("a", "c", "send", [])
        self.conn.execute("UPDATE calls SET id = 8, result = '1' WHERE key = ? AND member = 0",
                          (key,))
        calls.reconcile(key, "arrived", id=None, result=None, note="checked")
        self.assertEqual(self.conn.execute("SELECT id, result, note FROM calls WHERE key = ?",
                                           (key,)).fetchone(), (None, "null", "checked"))


class NestingTest(Base):
    """idem's limit, 1000 levels, in both packages (doc/contract.md §3),
    whatever this Python's recursion limit: deeper is refused by path."""

    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn)

    def test_args_at_the_limit(self):
        calls = self.calls

        @calls.tool
        def put(db, a):
            return a
        value = deep(999)                   # and the args object: 1000 levels
        text = "[" * 999 + "]" * 999
        want = self.count("SELECT idem_key('u', 'c', 'put', '{\"a\":%s}')" % text)
        self.assertEqual(put.key("u", "c", a=value), want)
        self.assertEqual(calls.key("u", "c", "put", {"a": value}), want)
        first = put.run("u", "c", a=value)
        self.assertTrue(same(first.result, value))
        again = put.run("u", "c", a=value)
        self.assertTrue(same(again.result, value))
        self.assertEqual((first.replayed, again.replayed), (False, True))
        with self.assertRaises(ValueError) as cm:
            put("u", "c", a=deep(1000))
        self.assertEqual(str(cm.exception), "idem: the arguments of put are not JSON:"
                         " args.a is nested deeper than 1000 levels, idem's limit")
        with self.assertRaisesRegex(ValueError, "^idem: the arguments of put are not JSON:"
                                    " args\\[0\\] is nested deeper than 1000 levels"):
            calls.key("u", "c", "put", deep(1001))

    def test_deeper_with_a_high_recursion_limit(self):
        # json.dumps then writes 1001 levels itself: still refused, by path.
        @self.calls.tool
        def put(db, a):
            return a
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(20000)
        try:
            with self.assertRaises(ValueError) as cm:
                put("u", "c", a=[deep(999), "x" * 3000])
        finally:
            sys.setrecursionlimit(old)
        self.assertEqual(str(cm.exception), "idem: the arguments of put are not JSON:"
                         " args.a is nested deeper than 1000 levels, idem's limit")

    def test_results_at_the_limit(self):
        # Every kind of JSON value, at the bottom of 999 lists.
        inner = {"s": "a \"b\" \\ \u00e9 \U0001f600", "n": [0, -1, 2.5, -3e-07, 1e+300, 2**64],
                 "t": True, "f": False, "z": None, "o": {}, "l": []}
        value = deep(998, inner)

        @self.calls.tool(kind="external")
        def fetch(idempotency_key):
            return value
        first = fetch.run("u", "c")
        again = fetch.run("u", "c")
        self.assertEqual((first.replayed, again.replayed), (False, True))
        for got in (first.result, again.result, self.calls.reply(first.key)["result"]):
            self.assertTrue(same(got, value))
        self.assertFalse(same(first.result, deep(998, dict(inner, t=1))))

        @self.calls.tool(kind="external")
        def too_deep(idempotency_key):
            return {"r": [deep(1000)]}
        with self.assertRaises(idem.Unknown) as cm:
            too_deep("u", "c")
        self.assertIn("but the result of too_deep is not JSON: result.r is nested deeper"
                      " than 1000 levels, idem's limit;", cm.exception.reply["message"])

    def test_a_deep_result_written_elsewhere_replays(self):
        # Recorded by Node or by SQL: 1000 levels, the most idem takes.
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("INSERT INTO calls(who, conv, tool, args) VALUES"
                          " ('u', 'c', 'fetch', '{}')")
        key = self.calls.key("u", "c", "fetch", {})
        text = "[" * 998 + '{"a":[1,"x"]}' + "]" * 998
        self.conn.execute("UPDATE calls SET status = 'done', result = ? WHERE key = ?"
                          " AND member = 0", (text, key))
        self.conn.execute("COMMIT")

        @self.calls.tool
        def fetch(db):
            raise AssertionError("not run: a replay")
        self.assertTrue(same(fetch("u", "c"), deep(998, {"a": [1, "x"]})))

    def test_malformed_deep_text(self):
        from idem import _loads_deep
        for text in ("[" * 1500 + "]" * 1499, "[1,]", '{"a" 1}', "[1 2]", "[1] x", "{,}"):
            with self.subTest(text[:20]), self.assertRaises(ValueError):
                _loads_deep(text)
        self.assertEqual(_loads_deep(' { "a" : [ 1 , { } , [ ] ] , "b" : "c" } '),
                         {"a": [1, {}, []], "b": "c"})


# idem_key('u', 'c', 't', '{"m":{"7":"a"}}'): the key of a call whose
# argument m has the integer key 7, the same in Node (rules.test.js) and Go
# (notjson_test.go).
KEY_OF_INT_KEY = "e324e8b56f777c14f32f9eaba74dbcb4"

# The words of what is not JSON: the same in Node (rules.test.js), for the
# values both languages have.
NOT_JSON = [
    ({"a": [1, float("inf")]}, "args.a[1] is Infinity, which JSON has no form for"),
    ({"a": {"b c": float("-inf")}}, 'args.a["b c"] is -Infinity, which JSON has no form for'),
    ({"x": float("nan")}, "args.x is NaN, which JSON has no form for"),
    ({"s": ["ok", "\ud800"]}, "args.s[1] holds a lone surrogate, which is not text"),
    ({"o": {"\udfff": 1}}, "args.o has a key that holds a lone surrogate, which is not text"),
]


class NotJsonTest(Base):
    def test_args_keyargs_results_alike(self):
        calls = idem.Calls(self.conn)
        cyc = {"n": 1}
        cyc["self"] = [cyc]
        cases = NOT_JSON + [({"c": cyc}, "args.c.self[0] is a circular reference (it"
                             " contains itself)")]
        for args, why in cases:
            with self.subTest(why):
                @calls.tool(name="t")
                def t(db, **a):
                    return a

                @calls.tool(name="k", keyargs=lambda a: a)
                def k(db, **a):
                    return 1

                @calls.tool(name="r")
                def r(db):
                    return args
                want = "idem: the arguments of t are not JSON: " + why
                for attempt in (lambda: t("u", "c", **args), lambda: t.key("u", "c", **args),
                                lambda: calls.key("u", "c", "t", args)):
                    with self.assertRaises((TypeError, ValueError)) as cm:
                        attempt()
                    self.assertEqual(str(cm.exception), want)
                with self.assertRaises((TypeError, ValueError)) as cm:
                    k("u", "c", **args)
                self.assertIn(str(cm.exception), (
                    want.replace("arguments of t", "arguments of k"),     # args first
                    "idem: the keyargs of k are not JSON: " + why.replace("args", "keyargs", 1)))
                with self.assertRaises(idem.Unstorable) as cm:
                    r("u", "c")
                self.assertEqual(str(cm.exception), "idem: the result of r is not JSON: %s;"
                                 " its writes were rolled back and the call released: a"
                                 " retry runs again" % why.replace("args", "result", 1))
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 0)

    def test_keys_are_text_or_integers(self):
        # A dict key is text or an integer, as in Node (whose keys are all
        # text: {1: x} is {"1": x}) and Go (encoding/json's map keys):
        # json.dumps would write 1.0 as "1.0" where Node writes "1" and Go
        # refuses it, True as "true", None as "null" (doc/contract.md §3).
        calls = idem.Calls(self.conn)
        refused = [
            ({"m": {1.0: "a"}}, "args.m has a key that is a float (1.0)"),
            ({"m": {"ok": 1, 2.5: 1}}, "args.m has a key that is a float (2.5)"),
            ({"m": [{1e16: 1}]}, "args.m[0] has a key that is a float (1e+16)"),
            ({"m": {float("inf"): 1}}, "args.m has a key that is a float (inf)"),
            ({"m": {True: "a"}}, "args.m has a key that is a bool (True)"),
            ({"m": {None: "a"}}, "args.m has a key that is None"),
            ({"m": {(1, 2): "a"}}, "args.m has a key that is a tuple ((1, 2))"),
        ]
        for args, why in refused:
            why += ", which JSON has no form for; a key is text or an integer"
            with self.subTest(why):
                @calls.tool(name="t")
                def t(db, **a):
                    return a

                @calls.tool(name="r")
                def r(db):
                    return args
                for attempt in (lambda: t("u", "c", **args), lambda: t.key("u", "c", **args),
                                lambda: calls.key("u", "c", "t", args)):
                    with self.assertRaises(TypeError) as cm:
                        attempt()
                    self.assertEqual(str(cm.exception),
                                     "idem: the arguments of t are not JSON: " + why)
                with self.assertRaises(idem.Unstorable) as cm:
                    r("u", "c")
                self.assertIn("the result of r is not JSON: " + why.replace("args", "result", 1),
                              str(cm.exception))
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 0)
        # An integer key is its digits: the key Node gives {m: {7: 'a'}} and
        # Go map[int]string{7: "a"} (their tests hold the same hex).
        self.assertEqual(calls.key("u", "c", "t", {"m": {7: "a", -2: "b"}}),
                         calls.key("u", "c", "t", {"m": {"7": "a", "-2": "b"}}))
        self.assertEqual(calls.key("u", "c", "t", {"m": {7: "a"}}), KEY_OF_INT_KEY)
        # A key made of digits in text is text, whatever it looks like.
        self.assertEqual(calls.key("u", "c", "t", {"m": {"1.0": "a", "true": 1, "null": 2}}),
                         calls.key("u", "c", "t", {"m": {"null": 2, "true": 1, "1.0": "a"}}))

    def test_keyargs_function(self):
        calls = idem.Calls(self.conn)

        @calls.tool(keyargs=lambda a: {"x": a["x"] / 0.0 if False else float("nan")})
        def t(db, x):
            return x
        with self.assertRaises(ValueError) as cm:
            t("u", "c", x=1)
        self.assertEqual(str(cm.exception), "idem: the keyargs of t are not JSON: keyargs.x"
                         " is NaN, which JSON has no form for")


class IdTest(Base):
    """An id is one SQL value: what is stored is what a replay reads."""

    def test_ids(self):
        calls = idem.Calls(self.conn)
        for n, id_ in enumerate((None, 7, -2**63, 2**63 - 1, 2.5, "ch_1", b"\x00\xff")):
            with self.subTest(repr(id_)):
                @calls.tool(name="t%d" % n)
                def t(db):
                    return idem.Result({"n": n}, id=id_)
                first = t.run("u", "c")
                self.assertEqual(first.id, id_)
                self.assertEqual(type(first.id), type(id_))
                self.assertEqual(t.run("u", "c"), first._replace(replayed=True))
        refused = [
            (True, TypeError, "id is a bool; an id is one SQL value: None, an int, a float,"
             " a str or bytes"),
            ({"a": 1}, TypeError, "id is a dict; an id is one SQL value: None, an int, a"
             " float, a str or bytes"),
            ([1], TypeError, "id is a list; an id is one SQL value: None, an int, a"
             " float, a str or bytes"),
            # The article as the name is read (Node's and Go's rule too).
            (uuid.UUID(int=1), TypeError, "id is a uuid.UUID; an id is one SQL value: None,"
             " an int, a float, a str or bytes"),
            (object(), TypeError, "id is an object; an id is one SQL value: None, an int,"
             " a float, a str or bytes"),
            (2**63, OverflowError, "id is 9223372036854775808, beyond SQLite's 64-bit"
             " integers"),
            (float("nan"), ValueError, "id is NaN, which JSON has no form for"),
            (float("inf"), ValueError, "id is Infinity, which JSON has no form for"),
            ("a\ud800", ValueError, "id holds a lone surrogate, which is not text"),
        ]
        for n, (id_, cls, why) in enumerate(refused):
            with self.subTest(repr(id_)):
                @calls.tool(name="bad%d" % n)
                def bad(db):
                    return idem.Result(1, id=id_)
                with self.assertRaises(idem.Unstorable) as cm:
                    bad("u", "c")
                self.assertIsInstance(cm.exception.__cause__, cls)
                self.assertEqual(str(cm.exception.__cause__),
                                 "idem: the id of bad%d cannot be stored: %s" % (n, why))


class PartsTest(Base):
    """who and conv: text, an integer or bytes (one key with the same text)."""

    def test_who_and_conv(self):
        calls = idem.Calls(self.conn)

        @calls.tool
        def t(db):
            return 1
        self.assertEqual(t.key(42, b"c"), t.key("42", "c"))
        self.assertEqual(calls.key(42, "c", "t", {}), t.key("42", "c"))
        for who, cls, why in ((None, TypeError, "who must be a str, an int or bytes (the user"
                               " or principal), not NoneType"),
                              (True, TypeError, "not bool"), (4.0, TypeError, "not float"),
                              (2**64, OverflowError, "who is 18446744073709551616, beyond"
                               " SQLite's 64-bit integers"),
                              ("\udc00", ValueError, "who holds a lone surrogate, which is"
                               " not text")):
            with self.subTest(repr(who)), self.assertRaisesRegex(cls, "^idem: .*" + re.escape(why)):
                t(who, "c")
        with self.assertRaisesRegex(TypeError, "conv must be a str, an int or bytes \\(the"
                                    " conversation or session\\), not list"):
            calls.key("u", [], "t", {})
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 0)


class OptionsTest(Base):
    def test_a_table_created_meanwhile_is_compared_too(self):
        other = self.connect()
        idem.load(other)
        created = []

        def between(sql):           # between the look-up and the CREATE
            if not created and sql.startswith("CREATE VIRTUAL TABLE"):
                created.append(sql)
                other.execute("CREATE VIRTUAL TABLE jobs USING idem(local_failure=keep)")
        self.conn.set_trace_callback(between)
        with self.assertRaisesRegex(ValueError, '^idem: the table "jobs" exists with'
                                    " local_failure=keep, not local_failure=release"):
            idem.Calls(self.conn, "jobs", local_failure="release")
        self.assertEqual(len(created), 1)


class TimesTest(Base):
    def test_times_are_checked(self):
        calls = idem.Calls(self.conn)
        self.assertEqual(calls.record_timeout, 30.0)
        for bad, cls in (("1", TypeError), (-1, ValueError), (float("inf"), ValueError),
                         (float("nan"), ValueError), (None, TypeError)):
            with self.subTest(repr(bad)):
                with self.assertRaisesRegex(cls, "^idem: calls.record_timeout must be a number"
                                            " of seconds \\(0 or more\\), not "):
                    calls.record_timeout = bad
                with self.assertRaisesRegex(cls, "timeout must be a number of seconds"):
                    calls.wait("0" * 32, timeout=bad)
        calls.record_timeout = 0
        self.assertEqual(calls.record_timeout, 0.0)
        self.assertEqual(idem.Calls(self.conn).record_timeout, 30.0)
        with self.assertRaisesRegex(KeyError, "no call 0{32} is claimed"):
            calls.wait("0" * 32, timeout=0)


class WaitTest(Base):
    def test_wait_in_a_transaction_is_refused(self):
        calls = idem.Calls(self.conn)
        self.conn.execute("BEGIN")
        with self.assertRaisesRegex(RuntimeError, "^idem: calls.wait\\(\\) needs a connection"
                                    " outside a transaction"):
            calls.wait("0" * 32)
        self.conn.execute("ROLLBACK")


if __name__ == "__main__":
    unittest.main()
