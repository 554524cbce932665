# SPDX-License-Identifier: MIT
"""The wrappers at their edges (issue 24): no call left pending whatever a
tool returns or raises; NotSent; owners and Lost; reconcile; mistakes as
errors; replays marked; threads and asyncio.

Run with the package installed:  python -m unittest discover -s bindings/python/tests -v
"""
import asyncio
import datetime
import decimal
import inspect
import json
import os
import random
import re
import sqlite3
import sys
import threading
import time
import unittest
import warnings

import idem
from test_idem import Base


class Thing:
    """A custom object: not JSON."""


def circular_dict():
    d = {"a": 1}
    d["self"] = d
    return d


def circular_list():
    a = [1]
    a.append([a])
    return a


def deep(n):
    v = []
    for _ in range(n):
        v = [v]
    return v


# Every kind of value a tool may return that cannot be stored, with a
# word of the message that says why.
UNSTORABLE = [
    ("datetime", lambda: {"at": datetime.datetime(2026, 1, 2, 3, 4, 5)},
     "the result of {} is not JSON: result.at is a datetime.datetime, which JSON"
     " has no form for"),
    ("date", lambda: datetime.date(2026, 1, 2),
     "the result of {} is not JSON: result is a datetime.date, which JSON has no"
     " form for"),
    ("decimal", lambda: {"amount": decimal.Decimal("9.99")},
     "result.amount is a decimal.Decimal, which JSON has no form for"),
    ("set", lambda: {"tags": {"a", "b"}}, "result.tags is a set, which JSON has no form for"),
    ("bytes", lambda: b"\x00\x01", "result is bytes, which JSON has no form for"),
    ("nan", lambda: {"x": float("nan")}, "result.x is NaN, which JSON has no form for"),
    ("infinity", lambda: [1.0, float("inf")], "result[1] is Infinity, which JSON has no form for"),
    ("object", lambda: {"o b": Thing()},
     'result["o b"] is a test_safety.Thing, which JSON has no form for'),
    ("circular dict", circular_dict, "result.self is a circular reference (it contains itself)"),
    ("circular list", circular_list, "result[1][0] is a circular reference (it contains itself)"),
    ("surrogate", lambda: {"s": "a\ud800b"}, "result.s holds a lone surrogate, which is not text"),
    ("key surrogate", lambda: {"a\udc00": 1},
     "result has a key that holds a lone surrogate, which is not text"),
    ("key", lambda: {(1, 2): "tuple key"},
     "result has a key that is a tuple ((1, 2)), which JSON has no form for; a key is"
     " text or an integer"),
    ("deep", lambda: {"a": deep(5000)}, "result.a is nested deeper than 1000 levels, idem's limit"),
    ("deep by one", lambda: deep(1000),
     "result[0] is nested deeper than 1000 levels, idem's limit"),
    ("id object", lambda: idem.Result({"ok": 1}, id={"a": 1}),
     "the id of {} cannot be stored: id is a dict; an id is one SQL value: None, an"
     " int, a float, a str or bytes"),
    ("id bool", lambda: idem.Result({"ok": 1}, id=True),
     "id is a bool; an id is one SQL value"),
    ("id too big", lambda: idem.Result(1, id=2**64),
     "id is 18446744073709551616, beyond SQLite's 64-bit integers"),
    ("id nan", lambda: idem.Result(1, id=float("nan")), "id is NaN, which JSON has no form for"),
    ("id infinity", lambda: idem.Result(1, id=float("-inf")),
     "id is -Infinity, which JSON has no form for"),
]


class UnstorableExternalTest(Base):
    """An external tool that returned (so its request was made) but whose
    result cannot be stored: unknown with a note, never pending; Unknown
    raised; reconciled with the target's result."""

    def test_each_kind(self):
        calls = idem.Calls(self.conn)
        for label, make, why in UNSTORABLE:
            with self.subTest(label):
                runs = []

                @calls.tool(kind="external", name="send_" + label.replace(" ", "_"))
                def send(idempotency_key, n):
                    runs.append(n)
                    return make()
                with self.assertRaises(idem.Unknown) as cm:
                    send("a", "c", n=1)
                e = cm.exception
                self.assertIsInstance(e.__cause__, (TypeError, ValueError, OverflowError))
                self.assertEqual((e.status, e.replayed), ("unknown", False))
                self.assertFalse(self.conn.in_transaction)
                row = self.conn.execute("SELECT status, note FROM calls WHERE key = ?",
                                        (e.key,)).fetchone()
                self.assertEqual(row[0], "unknown")
                self.assertRegex(row[1], r"\(reported: the tool returned, so its request was"
                                 " made, but .*%s.*; reconcile it with reconcile ="
                                 r" 'arrived' and the target's result\)$"
                                 % re.escape(why.format(send.name)))
                self.assertEqual(row[1], e.reply["message"])
                # Never pending, never run again: a retry is told unknown.
                with self.assertRaises(idem.Unknown) as again:
                    send("a", "c", n=1)
                self.assertEqual((again.exception.replayed, again.exception.__cause__),
                                 (True, None))
                self.assertEqual(runs, [1])
                # The operator reconciles with the target's result.
                calls.reconcile(e.key, "arrived", id=7, result={"charge": "ch_1"})
                out = send.run("a", "c", n=1)
                self.assertEqual(out, idem.Outcome({"charge": "ch_1"}, 7, e.key, True))
                self.assertEqual(runs, [1])

    def test_too_big_for_the_database(self):
        calls = idem.Calls(self.conn)
        self.conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 5000)

        @calls.tool(kind="external")
        def fetch(idempotency_key):
            return "x" * 10000
        with self.assertRaises(idem.Unknown) as cm:
            fetch("a", "c")
        self.assertIn("too big", cm.exception.reply["message"])
        self.assertEqual(self.count("SELECT status FROM calls"), "unknown")

    def test_async_too(self):
        calls = idem.Calls(self.conn)

        @calls.tool(kind="external")
        async def send(idempotency_key):
            return {"at": datetime.datetime(2026, 1, 1)}
        with self.assertRaises(idem.Unknown) as cm:
            asyncio.run(send("a", "c"))
        self.assertIn("datetime", cm.exception.reply["message"])
        self.assertEqual(self.count("SELECT status FROM calls"), "unknown")


class UnstorableLocalTest(Base):
    """A local tool whose result cannot be stored: its writes rolled back,
    the call released (or kept failed), Unstorable raised."""

    def test_each_kind_released(self):
        calls = idem.Calls(self.conn)
        for label, make, why in UNSTORABLE:
            with self.subTest(label):
                runs = []

                @calls.tool(name="order_" + label.replace(" ", "_"))
                def order(db, n):
                    runs.append(n)
                    db.execute("INSERT INTO orders(sku) VALUES('x')")
                    return make() if len(runs) == 1 else {"order": n}
                with self.assertRaises(idem.Unstorable) as cm:
                    order("a", "c", n=1)
                self.assertRegex(str(cm.exception), "^idem: .*%s.*; its writes were rolled"
                                 " back and the call released: a retry runs again$"
                                 % re.escape(why.format(order.name)))
                self.assertEqual(cm.exception.status, "released")
                self.assertFalse(self.conn.in_transaction)
                self.assertEqual(self.count("SELECT count(*) FROM orders")
                                 + self.count("SELECT count(*) FROM calls"), 0)
                self.assertEqual(order("a", "c", n=1), {"order": 1})   # runs again
                self.assertEqual(runs, [1, 1])
                self.conn.execute("DELETE FROM orders")
                self.conn.execute("DELETE FROM calls")
                if self.conn.in_transaction:
                    self.conn.commit()

    def test_kept(self):
        calls = idem.Calls(self.conn, "kept", local_failure="keep")

        @calls.tool
        def order(db):
            db.execute("INSERT INTO orders(sku) VALUES('x')")
            return decimal.Decimal("1.5")
        with self.assertRaises(idem.Unstorable) as cm:
            order("a", "c")
        self.assertEqual(cm.exception.status, "failed")
        self.assertIsInstance(cm.exception.__cause__, TypeError)
        with self.assertRaisesRegex(idem.Failed, "is failed: the result of order is not"
                                    " JSON: result is a decimal.Decimal, which JSON"
                                    " has no form for$"):
            order("a", "c")
        self.assertEqual(self.count("SELECT count(*) FROM orders"), 0)

    def test_inside_callers_transaction(self):
        calls = idem.Calls(self.conn)

        @calls.tool
        def order(db):
            db.execute("INSERT INTO orders(sku) VALUES('in')")
            return {1, 2}
        self.conn.execute("BEGIN")
        self.conn.execute("INSERT INTO orders(sku) VALUES('mine')")
        with self.assertRaises(idem.Unstorable):
            order("a", "c")
        self.assertTrue(self.conn.in_transaction)
        self.conn.execute("COMMIT")
        self.assertEqual(self.conn.execute("SELECT sku FROM orders").fetchall(), [("mine",)])
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 0)


class RaisesTest(Base):
    """Whatever an external tool raises, the call ends recorded."""

    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn)

    def status(self):
        return self.conn.execute("SELECT status, note FROM calls").fetchall()

    def test_base_exceptions_raised_as_they_are(self):
        for exc in (KeyboardInterrupt(), SystemExit(3), asyncio.CancelledError(),
                    GeneratorExit()):
            with self.subTest(type(exc).__name__):
                self.conn.execute("DELETE FROM calls WHERE status = 'done'")

                @self.calls.tool(kind="external", name="t_" + type(exc).__name__)
                def send(idempotency_key):
                    raise exc
                with self.assertRaises(type(exc)) as cm:
                    send("a", "c")
                key = send.key("a", "c")
                self.assertEqual(self.calls.reply(key)["status"], "unknown")
                self.assertIn("interrupted while the request was out: %s"
                              % type(exc).__name__, self.calls.reply(key)["message"])
                if sys.version_info >= (3, 11):
                    self.assertIn("recorded as unknown", cm.exception.__notes__[0])
                with self.assertRaises(idem.Unknown):
                    send("a", "c")

    def test_exception_is_unknown(self):
        @self.calls.tool(kind="external")
        def send(idempotency_key):
            raise ConnectionResetError("peer went away")
        with self.assertRaises(idem.Unknown) as cm:
            send("a", "c")
        self.assertIsInstance(cm.exception.__cause__, ConnectionResetError)
        self.assertIn("ConnectionResetError: peer went away", cm.exception.reply["message"])

    def test_not_sent_releases(self):
        runs = []

        @self.calls.tool(kind="external")
        def send(idempotency_key, to):
            runs.append(to)
            if len(runs) == 1:
                try:
                    undefined_url        # noqa: F821 -- a typo before the request
                except NameError as e:
                    raise idem.NotSent("the request was never made") from e
            return {"sent": to}
        with self.assertRaises(idem.NotSent) as cm:
            send("a", "c", to="bob")
        self.assertEqual(cm.exception.key, send.key("a", "c", to="bob"))
        self.assertIsInstance(cm.exception.__cause__, NameError)
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 0)
        self.assertFalse(self.conn.in_transaction)
        self.assertEqual(send("a", "c", to="bob"), {"sent": "bob"})     # a retry runs
        self.assertEqual(send.run("a", "c", to="bob").replayed, True)
        self.assertEqual(runs, ["bob", "bob"])

    def test_not_sent_cause_argument(self):
        err = OSError("no route")
        self.assertIs(idem.NotSent("x", cause=err).__cause__, err)
        self.assertEqual(str(idem.NotSent()), "the request was not sent")

    def test_not_sent_in_a_local_tool_releases(self):
        calls = idem.Calls(self.conn, "kept", local_failure="keep")

        @calls.tool
        def order(db):
            db.execute("INSERT INTO orders(sku) VALUES('x')")
            raise idem.NotSent("nothing done")
        with self.assertRaises(idem.NotSent):
            order("a", "c")
        self.assertEqual(self.count("SELECT count(*) FROM kept")
                         + self.count("SELECT count(*) FROM orders"), 0)

    def test_async_not_sent(self):
        @self.calls.tool(kind="external")
        async def send(idempotency_key):
            raise idem.NotSent()
        with self.assertRaises(idem.NotSent):
            asyncio.run(send("a", "c"))
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 0)

    def test_sync_tool_returning_a_coroutine(self):
        async def later():
            return 1

        @self.calls.tool(kind="external")
        def send(idempotency_key):
            return later()
        with self.assertRaisesRegex(TypeError, "returned an awaitable"):
            send("a", "c")
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 0)

    def test_local_tool_that_commits(self):
        @self.calls.tool
        def order(db):
            db.execute("INSERT INTO orders(sku) VALUES('x')")
            db.execute("ROLLBACK")
            return 1
        with self.assertRaisesRegex(RuntimeError, "ended the claim's transaction"):
            order("a", "c")
        self.assertFalse(self.conn.in_transaction)
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 0)


class OwnerTest(Base):
    """Every claim has its own owner token; a record that finds the call
    no longer its own raises Lost."""

    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn)
        self.other = idem.Calls(self.connect())

    def test_tokens(self):
        @self.calls.tool(kind="external")
        def send(idempotency_key, n):
            return n
        send("a", "c", n=1)
        send("a", "c", n=2)
        owners = [r[0] for r in self.conn.execute("SELECT owner FROM calls")]
        self.assertEqual(len(set(owners)), 2)
        for o in owners:
            self.assertRegex(o, r"^.+:%d:[0-9a-f]{16}$" % os.getpid())

    def test_released_and_claimed_again_while_out(self):
        second = []

        @self.other.tool(kind="external", name="send")
        def send2(idempotency_key):
            second.append(1)
            return "second"

        @self.calls.tool(kind="external")
        def send(idempotency_key):
            # Meanwhile an operator says it never left, and a retry runs.
            self.other.reconcile(send.key("a", "c"), "not_sent")
            self.assertEqual(send2("a", "c"), "second")
            return "first"
        with self.assertRaises(idem.Lost) as cm:
            send("a", "c")
        e = cm.exception
        self.assertEqual((e.key, e.status, e.result), (send.key("a", "c"), "done", "first"))
        self.assertIn("was not recorded", str(e))
        self.assertEqual(self.conn.execute("SELECT status, result FROM calls").fetchall(),
                         [("done", '"second"')])
        self.assertEqual(send.run("a", "c"), idem.Outcome("second", None, e.key, True))

    def test_lost_while_failing(self):
        @self.calls.tool(kind="external")
        def send(idempotency_key):
            self.other.reconcile(send.key("a", "c"), "not_sent")
            raise TimeoutError("slow")
        with self.assertRaises(idem.Lost) as cm:
            send("a", "c")
        self.assertIsInstance(cm.exception.__cause__, TimeoutError)
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 0)

    def test_lost_when_releasing(self):
        @self.calls.tool(kind="external")
        def send(idempotency_key):
            self.other.reconcile(send.key("a", "c"), "not_sent")
            raise idem.NotSent()
        with self.assertRaises(idem.Lost) as cm:
            send("a", "c")
        self.assertEqual(cm.exception.status, "not_sent")
        self.assertIn("this arrival's outcome, released (the request was not sent), was"
                      " not recorded", str(cm.exception))


class NotRecordedTest(Base):
    """The database stays busy while the outcome is to be recorded."""

    def setUp(self):
        super().setUp()
        self.conn.close()
        self.conn = self.connect(timeout=0.05)
        self.calls = idem.Calls(self.conn)
        self.blocker = self.connect()

    def test_busy_past_the_timeout(self):
        self.calls.record_timeout = 0.3

        @self.calls.tool(kind="external")
        def send(idempotency_key):
            self.blocker.execute("BEGIN IMMEDIATE")     # another writer
            return {"ok": 1}
        t0 = time.monotonic()
        with self.assertRaises(idem.NotRecorded) as cm:
            send("a", "c")
        self.assertLess(time.monotonic() - t0, 5)
        e = cm.exception
        self.assertEqual((e.key, e.status, e.result), (send.key("a", "c"), "done", {"ok": 1}))
        self.assertEqual(str(e), "idem: call %s stays pending: its outcome, done (the tool"
                         " returned), could not be recorded (database is locked; tried"
                         " for 0.3 s); reconcile it: calls.reconcile('%s', 'arrived',"
                         " id=..., result=...) (SQL: UPDATE \"calls\" SET reconcile = ..."
                         " WHERE key = '%s' AND member = 0)" % ((e.key,) * 3))
        self.blocker.execute("ROLLBACK")
        self.assertFalse(self.conn.in_transaction)
        with self.assertRaises(idem.InProgress):
            send("a", "c")
        self.calls.reconcile(e.key, "not_sent")           # or 'arrived':
        self.assertIsNone(self.calls.reply(e.key))

    def test_reconcile_with_the_result_kept(self):
        self.calls.record_timeout = 0.2

        @self.calls.tool(kind="external")
        def send(idempotency_key):
            self.blocker.execute("BEGIN IMMEDIATE")
            raise OSError("reset")
        with self.assertRaises(idem.NotRecorded) as cm:
            send("a", "c")
        self.assertEqual(cm.exception.status, "unknown")
        self.assertIsInstance(cm.exception.__cause__, OSError)
        self.blocker.execute("ROLLBACK")
        self.calls.reconcile(cm.exception.key, "arrived", result={"ok": 2})
        self.assertEqual(send("a", "c"), {"ok": 2})

    def test_connection_closed_while_out(self):
        # The connection closed while the request was out (the tool, or
        # another thread at shutdown): nothing can record the call, which
        # stays pending.  NotRecorded says which call and how to settle
        # it, at once; it was a ProgrammingError that named no call.
        self.calls.record_timeout = 5

        @self.calls.tool(kind="external")
        def send(idempotency_key):
            self.conn.close()
            return {"ok": 1}
        key = send.key("a", "c")
        t0 = time.monotonic()
        with self.assertRaises(idem.NotRecorded) as cm:
            send("a", "c")
        self.assertLess(time.monotonic() - t0, 2)
        e = cm.exception
        self.assertEqual((e.key, e.status, e.result), (key, "done", {"ok": 1}))
        self.assertRegex(str(e), r"^idem: call %s stays pending: its outcome, done \(the"
                         r" tool returned\), could not be recorded \(.*closed.*\);"
                         r" reconcile it: " % e.key)
        self.assertEqual(self.count("SELECT status FROM calls_claim", self.blocker), "pending")

    def test_busy_for_a_while_is_waited_for(self):
        self.calls.record_timeout = 10

        @self.calls.tool(kind="external")
        def send(idempotency_key):
            self.blocker.execute("BEGIN IMMEDIATE")
            threading.Timer(0.3, lambda: self.blocker.execute("ROLLBACK")).start()
            return 5
        self.assertEqual(send.run("a", "c"), idem.Outcome(5, None, send.key("a", "c"), False))
        self.assertEqual(self.count("SELECT status FROM calls"), "done")


class LocalCommitBusyTest(Base):
    """A local call's COMMIT that the database keeps busy (a reader of a
    rollback journal) past the connection's busy timeout: all of it is
    rolled back, the call released, and the database's error raised then,
    not after record_timeout of retries with the write lock held
    (doc/contract.md section 5), as in Node and Go."""

    def test_released_at_the_busy_timeout(self):
        self.conn.close()
        self.conn = self.connect(timeout=0.05)
        calls = idem.Calls(self.conn)
        calls.record_timeout = 30
        reader = self.connect()
        runs = []

        @calls.tool
        def place(conn, sku):
            runs.append(sku)
            conn.execute("INSERT INTO orders(sku, qty) VALUES(?, 1)", (sku,))
            return {"sku": sku}
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM orders").fetchone()   # SHARED, held
        t0 = time.monotonic()
        with self.assertRaises(sqlite3.OperationalError) as cm:
            place("a", "c", sku="x")
        self.assertLess(time.monotonic() - t0, 10)
        self.assertTrue(idem._is_busy(cm.exception), cm.exception)
        self.assertFalse(self.conn.in_transaction)
        reader.execute("ROLLBACK")
        self.assertEqual((self.count("SELECT count(*) FROM orders"),
                          self.count("SELECT count(*) FROM calls")), (0, 0))
        self.assertEqual(place.run("a", "c", sku="x"),
                         idem.Outcome({"sku": "x"}, None, place.key("a", "c", sku="x"), False))
        self.assertEqual(runs, ["x", "x"])


class ReconcileBusyTest(Base):
    """calls.reconcile on a database kept busy past the connection's busy
    timeout, by a writer or by a reader of the rollback journal (its
    COMMIT busy): one attempt, SQLite's busy handler the only wait,
    nothing written, the busy error raised, as in Node and Go
    (doc/contract.md section 5); it was retried for record_timeout."""

    def setUp(self):
        super().setUp()
        self.conn.close()
        self.conn = self.connect(timeout=0.05)
        self.calls = idem.Calls(self.conn)
        self.calls.record_timeout = 30

        @self.calls.tool(kind="external")
        def send(idempotency_key, n):
            raise TimeoutError("no answer")
        with self.assertRaises(idem.Unknown):
            send("a", "c", n=1)
        self.key = send.key("a", "c", n=1)
        self.other = self.connect()

    def busy(self, hold):
        self.other.execute("BEGIN IMMEDIATE" if hold == "writer" else "BEGIN")
        self.other.execute("SELECT count(*) FROM orders").fetchone()   # SHARED, held
        t0 = time.monotonic()
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.calls.reconcile(self.key, "arrived", result={"ok": 1})
        self.assertLess(time.monotonic() - t0, 10)      # not record_timeout's 30 s
        self.assertTrue(idem._is_busy(cm.exception), cm.exception)
        self.assertFalse(self.conn.in_transaction)
        self.other.execute("ROLLBACK")
        self.assertEqual(self.calls.reply(self.key)["status"], "unknown")
        self.calls.reconcile(self.key, "arrived", result={"ok": 1})
        self.assertEqual(self.calls.reply(self.key)["status"], "done")

    def test_busy_writer(self):
        self.busy("writer")

    def test_busy_commit(self):
        self.busy("reader")


class CommitInterruptedTest(Base):
    """A COMMIT reported interrupted after its last instruction, its work
    committed (doc/trust.md, "A progress handler's word after the work is
    done"): the package reads the call back, and neither reports a
    committed call as failed nor leaves it pending."""

    def setUp(self):
        super().setUp()
        if not isinstance(self.conn, sqlite3.Connection):
            self.skipTest("not a sqlite3.Connection: its trace callback and progress"
                          " handler drive these tests")
        self.calls = idem.Calls(self.conn)
        self.calls.record_timeout = 1
        self.st = {"sql": None, "n": 0, "counts": [], "at": None, "skip": 0}

        def trace(sql):
            if sql.startswith("--"):
                return                  # the extension's own statements
            if self.st["sql"] == "COMMIT":
                self.st["counts"].append(self.st["n"])
            self.st.update(sql=sql, n=0)

        def progress():
            st = self.st
            if st["sql"] == "COMMIT":
                st["n"] += 1
                if st["at"] == st["n"]:
                    st["skip"] -= 1
                    if st["skip"] < 0:
                        st["at"] = None     # once: the last instruction's call
                        return 1
            return 0
        self.conn.set_trace_callback(trace)
        self.conn.set_progress_handler(progress, 1)
        self.addCleanup(self.conn.set_progress_handler, None, 1)

    def arm(self, skip=0):
        """Interrupt the (skip+1)th COMMIT from now after its last
        instruction, as counted in the calls made so far."""
        self.conn.execute("SELECT 1")           # closes the last count
        self.st.update(at=self.st["counts"][-1], skip=skip)

    def fired(self):
        return self.st["at"] is None

    def test_local_done(self):
        @self.calls.tool
        def place(db, sku):
            db.execute("INSERT INTO orders(sku) VALUES(?)", (sku,))
            return {"ok": sku}
        place("u", "c", sku="a")
        place("u", "c", sku="b")
        place("u", "c", sku="c")
        self.arm()
        self.assertEqual(place.run("u", "c", sku="x"),
                         idem.Outcome({"ok": "x"}, None, place.key("u", "c", sku="x"), False))
        self.assertTrue(self.fired())
        self.assertEqual(self.count("SELECT count(*) FROM orders WHERE sku = 'x'"), 1)
        self.assertTrue(place.run("u", "c", sku="x").replayed)

    def test_external_done(self):
        @self.calls.tool(kind="external")
        def charge(idempotency_key, cents):
            return {"charged": cents}
        for cents in (-1, -2, -3):
            charge("u", "c", cents=cents)
        self.arm(skip=1)                        # the record's, not the claim's
        self.assertEqual(charge.run("u", "c", cents=3),
                         idem.Outcome({"charged": 3}, None, charge.key("u", "c", cents=3),
                                      False, 1))
        self.assertTrue(self.fired())
        self.assertEqual(self.count("SELECT status FROM calls"), "done")

    def test_external_unknown(self):
        @self.calls.tool(kind="external")
        def charge(idempotency_key, cents):
            if cents == 3:
                raise OSError("reset")
            return {"charged": cents}
        for cents in (-1, -2, -3):
            charge("u", "c", cents=cents)
        self.arm(skip=1)
        with self.assertRaises(idem.Unknown) as cm:
            charge("u", "c", cents=3)
        self.assertTrue(self.fired())
        self.assertIsInstance(cm.exception.__cause__, OSError)

    def test_external_claim_released(self):
        @self.calls.tool(kind="external")
        def charge(idempotency_key, cents):
            return {"charged": cents}
        for cents in (-1, -2, -3):
            charge("u", "c", cents=cents)
        self.arm()                              # the claim's COMMIT
        with self.assertRaisesRegex(sqlite3.OperationalError, "interrupted"):
            charge("u", "c", cents=3)
        self.assertTrue(self.fired())
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 3)   # released
        self.assertEqual(charge("u", "c", cents=3), {"charged": 3})


class ReconcileTest(Base):
    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn, stale_after="1 hour")

        @self.calls.tool(kind="external")
        def send(idempotency_key, n):
            raise TimeoutError("no answer")
        self.send = send
        with self.assertRaises(idem.Unknown):
            send("a", "c", n=1)
        self.key = send.key("a", "c", n=1)

    def pending(self, n):
        self.conn.execute("INSERT INTO calls(who, conv, tool, args, kind) VALUES"
                          " ('a', 'c', 'send', ?, 'external')", (json.dumps({"n": n}),))
        return self.send.key("a", "c", n=n)

    def test_reply_key_checked(self):
        # reply(None) said "no such call" (None); wait() and reconcile()
        # refused it, as Node's reply() does.
        for bad in (None, 5, b"k" * 32):
            with self.assertRaisesRegex(TypeError, r"^idem: a key is a str of 32 hex"
                                        r" digits, not (NoneType|int|bytes)$"):
                self.calls.reply(bad)

    def test_arrived(self):
        self.calls.reconcile(self.key, "arrived", id="ch_9", result={"charge": "ch_9"},
                             note="checked the provider's dashboard")
        self.assertEqual(self.send.run("a", "c", n=1),
                         idem.Outcome({"charge": "ch_9"}, "ch_9", self.key, True))
        self.assertEqual(self.count("SELECT note FROM calls"), "checked the provider's dashboard")

    def test_not_arrived(self):
        self.calls.reconcile(self.key, "not_arrived")
        self.assertIsNone(self.calls.reply(self.key))

    def test_not_sent_refused_on_unknown(self):
        with self.assertRaisesRegex(sqlite3.OperationalError, "may have left"):
            self.calls.reconcile(self.key, "not_sent")
        self.assertFalse(self.conn.in_transaction)

    def test_pending(self):
        key = self.pending(2)
        with self.assertRaisesRegex(sqlite3.OperationalError, "not stale"):
            self.calls.reconcile(key, "not_arrived")
        self.calls.reconcile(key, "not_sent")
        self.assertIsNone(self.calls.reply(key))
        key = self.pending(3)
        self.calls.reconcile(key, "arrived")
        self.assertEqual(self.calls.reply(key)["status"], "done")

    def test_mistakes(self):
        # A word that is no verdict is the table's refusal, in its words;
        # 'resend' is a sender's, and not a str is the package's.
        for word in ("maybe", "", "ARRIVED"):
            with self.assertRaises(sqlite3.OperationalError) as cm:
                self.calls.reconcile(self.key, word)
            self.assertEqual(str(cm.exception), "idem: calls: reconcile must be 'arrived'"
                             " (the target's records show the request: the call becomes"
                             " done), 'not_arrived' (they show it never came: the claim is"
                             " released), 'not_sent' (a pending call whose request never"
                             " left: the claim is released) or 'resend' (a call whose"
                             " target honours the key: sent again, with the same key, by a"
                             " new owner)")
        with self.assertRaisesRegex(ValueError, "^idem: calls.reconcile\\(\\): 'resend' is not"
                                    " an operator's verdict: a tool declared honours_key=True"
                                    " sends its call again itself; give 'arrived',"
                                    " 'not_arrived' or 'not_sent'$"):
            self.calls.reconcile(self.key, "resend")
        for word in (None, b"arrived", 1):
            with self.assertRaisesRegex(TypeError, "^idem: calls.reconcile\\(\\): verdict must"
                                        " be a str \\('arrived', 'not_arrived' or 'not_sent'\\),"
                                        " not (NoneType|bytes|int)$"):
                self.calls.reconcile(self.key, word)
        with self.assertRaisesRegex(KeyError, 'no call 0{32} is claimed in "calls" \\(never'
                                    ' claimed, released, or purged\\)'):
            self.calls.reconcile("0" * 32, "arrived")
        with self.assertRaisesRegex(ValueError, "^idem: the result given to calls.reconcile"
                                    " is not JSON: result.a is NaN, which JSON has no form"
                                    " for$"):
            self.calls.reconcile(self.key, "arrived", result={"a": float("nan")})
        with self.assertRaisesRegex(TypeError, "^idem: the id given to calls.reconcile cannot"
                                    " be stored: id is a list; an id is one SQL value"):
            self.calls.reconcile(self.key, "arrived", id=[1])
        with self.assertRaisesRegex(TypeError, "note must be a str, not int"):
            self.calls.reconcile(self.key, "arrived", note=1)
        with self.assertRaisesRegex(TypeError, "a key is a str"):
            self.calls.reconcile(None, "arrived")
        self.assertEqual(self.calls.reply(self.key)["status"], "unknown")

    def test_release_keeps_nothing(self):
        # A release with an id, result or note (not None) is the
        # extension's refusal, in its words (doc/contract.md section 5),
        # the error of its other refusals; the package has no copy of the
        # rule.  The call stays as it was.
        pending = self.pending(2)
        self.conn.execute("UPDATE calls SET id = 'ch_8' WHERE key = ? AND member = 0",
                          (pending,))
        for key, verdict in ((self.key, "not_arrived"), (pending, "not_sent"),
                             (pending, "not_arrived")):
            message = ("idem: calls: call '%s': reconcile = 'not_arrived' and 'not_sent'"
                       " release the call (its rows go) and keep nothing, so an id, result"
                       " or note given with them would be lost; they go with reconcile ="
                       " 'arrived' only" % key)
            for given in ({"id": "ch_9"}, {"result": {"a": 1}}, {"note": "gone"},
                          {"result": None}):
                with self.subTest(verdict=verdict, given=given):
                    with self.assertRaises(sqlite3.OperationalError) as cm:
                        self.calls.reconcile(key, verdict, **given)
                    self.assertEqual(str(cm.exception), message)
                    self.assertFalse(self.conn.in_transaction)
        self.assertEqual(self.calls.reply(self.key)["status"], "unknown")
        self.assertEqual(self.count("SELECT status || ' ' || id FROM calls WHERE key = '%s'"
                                    " AND member = 0" % pending), "pending ch_8")
        # A None id is no value: the release goes on.
        self.calls.reconcile(pending, "not_sent", id=None)
        self.assertIsNone(self.calls.reply(pending))

    def test_inside_callers_transaction(self):
        self.conn.execute("BEGIN")
        self.calls.reconcile(self.key, "arrived", result=1)
        self.conn.execute("ROLLBACK")
        self.assertEqual(self.calls.reply(self.key)["status"], "unknown")


class MistakesTest(Base):
    """Mistakes are errors, when the tool is defined or before the claim."""

    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn)

    def test_keyargs_names_checked(self):
        with self.assertRaisesRegex(ValueError, r"^idem: tool place_order: keyargs names skus,"
                                    r" which is not a parameter of the tool \(its"
                                    r" parameters: sku, qty\); a misspelt name would give"
                                    r" every call of the tool one key$"):
            @self.calls.tool(keyargs=["skus"])
            def place_order(db, sku, qty):
                pass
        with self.assertRaisesRegex(ValueError, "keyargs names idempotency_key, skew, which are"
                                    " not parameters of the tool \\(its parameters: to\\)"):
            @self.calls.tool(kind="external", keyargs=["idempotency_key", "to", "skew"])
            def send(idempotency_key, to):
                pass
        with self.assertRaisesRegex(TypeError, "^idem: tool order1: keyargs must be a list of"
                                    " argument names or a function of args, not 'sku'$"):
            @self.calls.tool(keyargs="sku")
            def order1(db, sku):
                pass
        with self.assertRaisesRegex(TypeError, "keyargs must be a list of argument names"):
            @self.calls.tool(keyargs=[1])
            def order2(db, sku):
                pass

        @self.calls.tool(keyargs=["anything"])       # **kwargs takes any name
        def loose(db, **kw):
            return kw
        self.assertEqual(loose("a", "c", anything=1, other=2), {"anything": 1, "other": 2})

    def test_definition_mistakes(self):
        with self.assertRaisesRegex(ValueError, "kind must be 'local' or 'external', not 'extrenal'"):
            self.calls.tool(kind="extrenal")
        with self.assertRaisesRegex(TypeError, "name is a non-empty str"):
            self.calls.tool(name=3)
        with self.assertRaisesRegex(TypeError, "a tool is a function"):
            self.calls.tool("place_order")
        with self.assertRaisesRegex(TypeError, "parameter idempotency_key"):
            @self.calls.tool(kind="external")
            def send(key, to):
                pass
        with self.assertRaisesRegex(TypeError, "the connection as its first parameter"):
            @self.calls.tool
            def nothing():
                pass
        with self.assertRaisesRegex(TypeError, "named who"):
            @self.calls.tool
            def greet(db, who):
                pass
        with self.assertRaisesRegex(TypeError, "async function"):
            @self.calls.tool
            async def order(db):
                pass

    def test_call_mistakes_before_the_claim(self):
        runs = []

        @self.calls.tool(kind="external")
        def send(idempotency_key, to, text=""):
            runs.append(to)
        for args, why in (({"to": "bob", "txt": "hi"}, "unexpected keyword argument 'txt'"),
                          ({"text": "hi"}, "missing a required argument: 'to'")):
            with self.assertRaisesRegex(TypeError, "send: .*" + why):
                send("a", "c", **args)
        with self.assertRaisesRegex(TypeError, "conv must be a str"):
            send("a", None, to="bob")
        with self.assertRaisesRegex(TypeError, r"^idem: the arguments of send are not JSON:"
                                    r" args.to is a datetime.date, which JSON has no"
                                    r" form for$"):
            send("a", "c", to=datetime.date(2026, 1, 1))
        self.assertEqual((runs, self.count("SELECT count(*) FROM calls")), ([], 0))

    def test_calls_arguments(self):
        with self.assertRaisesRegex(TypeError, "needs a sqlite3.Connection, not str"):
            idem.Calls("app.db")
        with self.assertRaisesRegex(TypeError, "table name must be a non-empty str"):
            idem.Calls(self.conn, {"local_failure": "keep"})
        with self.assertRaisesRegex(TypeError, "local_failure must be a str"):
            idem.Calls(self.conn, "t1", local_failure=True)
        # A schema-qualified name: refused by the extension's one rule
        # (idem_parse_options(), doc/contract.md §5), as Node and Go refuse
        # it; it made a table of main literally named "temp.calls".
        for name in ("temp.calls", "main.calls", "a.b.c"):
            with self.assertRaises(ValueError) as cm:
                idem.Calls(self.conn, name)
            self.assertEqual(str(cm.exception), "idem: the table name '%s' %s" % (name, "holds a '.': a package makes and uses its table in the main database by the name it is given, where SQL would read a schema before the '.' (temp.calls: the table calls of the schema temp); give the table's name alone"))
        self.assertEqual(self.count("SELECT count(*) FROM sqlite_master WHERE name LIKE '%.%'"), 0)
        self.assertEqual(self.count("SELECT count(*) FROM sqlite_temp_master"), 0)
        # The extension's own words (doc/reference.md), before anything is made
        # (test_options.py: word for word those of CREATE).
        with self.assertRaisesRegex(ValueError, r"^idem: t1: unknown value 'kept' for local_failure;"
                                    r" use local_failure=release \(the default\) or"
                                    r" local_failure=keep$"):
            idem.Calls(self.conn, "t1", local_failure="kept")
        with self.assertRaisesRegex(ValueError, r"^idem: t1: bad duration 'forever' for retain; use"
                                    r" a positive number and a unit of seconds, minutes,"
                                    r" hours or days \(at most 36525 days\), e.g."
                                    r" retain='24 hours'$"):
            idem.Calls(self.conn, "t1", retain="forever")
        with self.assertRaisesRegex(ValueError, "bad duration '36526 days'"):
            idem.Calls(self.conn, "t1", retain="36526 days")
        with self.assertRaisesRegex(ValueError, r"retain='1 day\), x\(y=1' is blank or holds a"
                                    r" character that an option value cannot hold"):
            idem.Calls(self.conn, "t1", retain="1 day), x(y=1")
        with self.assertRaisesRegex(ValueError, "is blank"):
            idem.Calls(self.conn, "t1", retain=" ")
        with self.assertRaisesRegex(ValueError, r"^idem: t1: unknown option 'locl_failure=keep'; the"
                                    r" options are local_failure=release\|keep,"
                                    r" durability=full\|relaxed, args_mismatch=error\|replay,"
                                    r" retain=<duration>, stale_after=<duration>,"
                                    r" honours_key=no\|yes, max_sends=<1 to 100> and"
                                    r" resend_after=<duration>$"):
            idem.Calls(self.conn, "t1", locl_failure="keep")
        self.assertEqual(self.count("SELECT count(*) FROM sqlite_master WHERE name = 't1'"), 0)

    def test_options_of_an_existing_table(self):
        # A table with a retain, used without it: warned (test_options.py).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", idem.RelaxedTableWarning)
            self.options_of_an_existing_table()

    def options_of_an_existing_table(self):
        idem.Calls(self.conn, "t", local_failure="keep", retain="24 hours")
        self.assertEqual(self.count("SELECT sql FROM sqlite_master WHERE name = 't'"),
                         'CREATE VIRTUAL TABLE "t" USING idem(local_failure=keep,'
                         " retain='24 hours')")
        idem.Calls(self.conn, "t")                                   # as it is
        idem.Calls(self.conn, "T", local_failure="KEEP", retain="1 day")   # the same
        idem.Calls(self.conn, "t", args_mismatch="error")            # the default
        with self.assertRaisesRegex(ValueError, r'^idem: the table "t" exists with'
                                    r" local_failure=keep, not local_failure=release: a"
                                    r" table's options are set when it is created; leave"
                                    r" the option out to use the table as it is, or use"
                                    r" another table$"):
            idem.Calls(self.conn, "t", local_failure="release")
        # The value as idem parsed it (idem_options()), in its largest unit.
        with self.assertRaisesRegex(ValueError, r"exists with retain='1 day', not"
                                    r" retain='2 days'"):
            idem.Calls(self.conn, "t", retain="2 days")
        with self.assertRaisesRegex(ValueError, r"exists with no stale_after, not"
                                    r" stale_after='5 minutes'"):
            idem.Calls(self.conn, "t", stale_after="5 minutes")
        with self.assertRaisesRegex(ValueError, r"exists with args_mismatch=error \(the"
                                    r" default\), not args_mismatch=replay"):
            idem.Calls(self.conn, "t", args_mismatch="replay")
        with self.assertRaisesRegex(ValueError, "\"orders\" exists and is not an idem table"):
            idem.Calls(self.conn, "orders")
        # Made in SQL, as doc/operations.md shows: quoted, with blanks.
        self.conn.execute("CREATE VIRTUAL TABLE jobs USING idem(stale_after = '10 minutes',"
                          " durability = RELAXED)")
        idem.Calls(self.conn, "jobs", stale_after="600 seconds", durability="relaxed")
        with self.assertRaisesRegex(ValueError, "exists with stale_after='10 minutes', not"
                                    " stale_after='5 minutes'"):
            idem.Calls(self.conn, "jobs", stale_after="5 minutes")
        with self.assertRaisesRegex(ValueError, "exists with durability=relaxed, not"
                                    " durability=full"):
            idem.Calls(self.conn, "jobs", durability="full")


class OutcomeTest(Base):
    def test_run_marks_replays(self):
        calls = idem.Calls(self.conn)

        @calls.tool
        def place_order(db, sku):
            cur = db.execute("INSERT INTO orders(sku) VALUES(?)", (sku,))
            return idem.Result({"order": cur.lastrowid, "t": (1, 2)}, id=cur.lastrowid)
        first = place_order.run("a", "c", sku="S")
        key = place_order.key("a", "c", sku="S")
        self.assertEqual(first, idem.Outcome({"order": 1, "t": [1, 2]}, 1, key, False))
        self.assertEqual(place_order.run("a", "c", sku="S"),
                         idem.Outcome({"order": 1, "t": [1, 2]}, 1, key, True))
        self.assertEqual(place_order("a", "c", sku="S"), {"order": 1, "t": [1, 2]})
        self.assertEqual(first.result, calls.reply(key)["result"])

    def test_signatures(self):
        calls = idem.Calls(self.conn)

        @calls.tool
        def place_order(db, sku: str, qty: int = 1) -> dict:
            return {}

        @calls.tool(kind="external")
        async def send(idempotency_key, to, **more):
            return 1
        self.assertEqual(str(inspect.signature(place_order)),
                         "(who: str, conv: str, *, sku: str, qty: int = 1) -> dict")
        self.assertEqual(str(inspect.signature(send)),
                         "(who: str, conv: str, *, to, **args: Any)")
        self.assertTrue(inspect.iscoroutinefunction(send))
        self.assertTrue(inspect.iscoroutinefunction(send.run))
        self.assertEqual((place_order.name, place_order.kind, send.kind),
                         ("place_order", "local", "external"))
        self.assertEqual(place_order.__name__, "place_order")


class ThreadsTest(Base):
    """One connection shared by threads (check_same_thread=False): claims
    and records are serialized per connection; nothing lost, nothing
    twice."""

    def test_one_lock_per_connection(self):
        a, b = idem.Calls(self.conn), idem.Calls(self.conn, "other")
        self.assertIs(a.lock, b.lock)
        self.assertIsNot(a.lock, idem.Calls(self.connect()).lock)

    def test_stress(self):
        threads_n, calls_n = 8, 30
        a = idem.Calls(self.conn)
        b = idem.Calls(self.conn)            # a second Calls on the connection
        ran_local, ran_external, lock = [], [], threading.Lock()

        def make(calls):
            @calls.tool
            def place_order(db, n):
                with lock:
                    ran_local.append(n)
                db.execute("INSERT INTO orders(sku, qty) VALUES('s', ?)", (n,))
                return {"order": n}

            @calls.tool(kind="external")
            def charge(idempotency_key, n):
                with lock:
                    ran_external.append(n)
                time.sleep(0.001)            # the request, outside the lock
                return {"charge": n}
            return place_order, charge
        tools = [make(a), make(b)]
        errors, results = [], []
        barrier = threading.Barrier(threads_n)

        def worker(i):
            rnd = random.Random(i)
            place_order, charge = tools[i % 2]
            order = list(range(calls_n))
            rnd.shuffle(order)
            barrier.wait()
            for n in order:
                try:
                    results.append(("l", n, place_order("u", "c", n=n)))
                    try:
                        out = charge("u", "c", n=n)
                    except idem.InProgress as e:     # another thread's request is out
                        out = a.wait(e.key, timeout=10)
                    results.append(("e", n, out))
                except Exception as e:           # pragma: no cover
                    errors.append(repr(e))
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(threads_n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(sorted(ran_local), list(range(calls_n)))       # once each
        self.assertEqual(sorted(ran_external), list(range(calls_n)))
        self.assertEqual(self.count("SELECT count(*) FROM orders"), calls_n)
        self.assertEqual(self.conn.execute(
            "SELECT status, count(*) FROM calls GROUP BY status").fetchall(),
            [("done", 2 * calls_n)])
        self.assertEqual(len(results), 2 * threads_n * calls_n)
        for kind, n, out in results:
            self.assertEqual(out, {"order": n} if kind == "l" else {"charge": n})
        self.assertFalse(self.conn.in_transaction)


class AsyncTest(Base):
    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn)
        self.runs = []

        @self.calls.tool(kind="external")
        async def charge(idempotency_key, cents):
            self.runs.append(cents)
            await asyncio.sleep(0.05)
            return {"charge": "ch_%d" % len(self.runs), "cents": cents}
        self.charge = charge

    def test_gather_of_duplicates(self):
        async def main():
            first = await asyncio.gather(*[self.charge.run("a", "c", cents=5) for _ in range(5)],
                                         return_exceptions=True)
            again = await self.charge.run("a", "c", cents=5)
            return first, again
        first, again = asyncio.run(main())
        done = [o for o in first if isinstance(o, idem.Outcome)]
        busy = [o for o in first if isinstance(o, idem.InProgress)]
        self.assertEqual((len(done), len(busy)), (1, 4))
        self.assertEqual(done[0].replayed, False)
        self.assertEqual(again, done[0]._replace(replayed=True))
        self.assertEqual(self.runs, [5])

    def test_gather_of_many(self):
        async def main():
            return await asyncio.gather(*[self.charge("a", "c", cents=n) for n in range(20)])
        out = asyncio.run(main())
        self.assertEqual([o["cents"] for o in out], list(range(20)))
        self.assertEqual(self.count("SELECT count(*) FROM calls WHERE status = 'done'"), 20)

    def test_cancelled_is_unknown(self):
        @self.calls.tool(kind="external")
        async def slow(idempotency_key):
            await asyncio.sleep(10)

        async def main():
            task = asyncio.ensure_future(slow("a", "c"))
            await asyncio.sleep(0.05)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                return "cancelled"
        self.assertEqual(asyncio.run(main()), "cancelled")
        reply = self.calls.reply(slow.key("a", "c"))
        self.assertEqual(reply["status"], "unknown")
        self.assertIn("CancelledError", reply["message"])

    def test_error_is_unknown(self):
        @self.calls.tool(kind="external")
        async def fail(idempotency_key):
            raise TimeoutError("late")
        with self.assertRaises(idem.Unknown) as cm:
            asyncio.run(fail("a", "c"))
        self.assertIsInstance(cm.exception.__cause__, TimeoutError)


if __name__ == "__main__":
    unittest.main()
