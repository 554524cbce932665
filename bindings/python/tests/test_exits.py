# SPDX-License-Identifier: MIT
"""Every exit of a wrapper ends in a recorded state (issue 31, item 6):
whatever an external tool raises (an error whose text holds a lone
surrogate, whose __str__ raises or returns no text), however its caller
is interrupted while the outcome is being recorded (asyncio.wait_for,
task.cancel(), asyncio.run's shutdown, KeyboardInterrupt, a coroutine
closed), the call ends done, unknown or released, with a note that could
be built and stored, and the caller gets the package's own error (or its
own interrupt, once the outcome is recorded).

Run with the package installed:  python -m unittest discover -s bindings/python/tests -v
"""
import asyncio
import os
import sqlite3
import sys
import threading
import time
import unittest
from unittest import mock

import idem
from test_idem import DRIVER, Base

# A file name that is not UTF-8, as os.listdir() gives it (surrogateescape).
ODD_NAME = os.fsdecode(b"caf\xe9.txt")


class StrRaises(Exception):
    def __str__(self):
        raise RuntimeError("no text for you")


class StrNotText(Exception):
    def __str__(self):
        return 42               # type: ignore[return-value]


class OddText(str):
    def __str__(self):
        raise ValueError("odd")


class StrSubclass(Exception):
    def __str__(self):
        return OddText("a str subclass")


class StrInterrupts(Exception):
    def __str__(self):
        raise KeyboardInterrupt




def odd_errors():
    """Exceptions whose text no naive note builder can store."""
    return [
        ("surrogate in the message", FileNotFoundError(2, "No such file", ODD_NAME),
         "caf\\udce9.txt"),
        ("surrogate in the args", OSError("cannot open " + ODD_NAME), "cannot open caf\\udce9"),
        ("__str__ raises", StrRaises(), "<StrRaises: str() raised RuntimeError>"),
        ("__str__ is not text", StrNotText(), "<StrNotText: str() raised TypeError>"),
        ("__str__ a str subclass", StrSubclass(), "StrSubclass: a str subclass"),
        ("__str__ interrupts", StrInterrupts(), "<StrInterrupts: str() raised KeyboardInterrupt>"),
        ("a lone high surrogate", ValueError("\ud800"), "ValueError: \\ud800"),
    ]


class OddErrorsTest(Base):
    """The tool's error, whatever its text, is recorded: unknown (an
    external call), released (a local one), and raised as idem's error
    (Unknown) or as itself (a local tool's)."""

    def test_external(self):
        calls = idem.Calls(self.conn)
        for label, error, shown in odd_errors():
            with self.subTest(label):
                @calls.tool(kind="external", name="send_" + label.replace(" ", "_"))
                def send(idempotency_key):
                    raise error
                with self.assertRaises(idem.Unknown) as cm:
                    send("a", "c")
                self.assertIs(cm.exception.__cause__, error)
                self.assertFalse(self.conn.in_transaction)
                status, note = self.conn.execute(
                    "SELECT status, note FROM calls WHERE key = ?",
                    (send.key("a", "c"),)).fetchone()
                self.assertEqual(status, "unknown")
                self.assertIn(shown, note)
                self.assertEqual(cm.exception.reply["message"], note)
                str(cm.exception)               # the package's error has text
                with self.assertRaises(idem.Unknown):
                    send("a", "c")              # never pending, never run again

    def test_external_async(self):
        calls = idem.Calls(self.conn)
        for label, error, shown in odd_errors():
            with self.subTest(label):
                @calls.tool(kind="external", name="asend_" + label.replace(" ", "_"))
                async def send(idempotency_key):
                    raise error
                with self.assertRaises(idem.Unknown):
                    asyncio.run(send("a", "c"))
                self.assertEqual(self.calls_status(calls, send), "unknown")

    def test_local(self):
        calls = idem.Calls(self.conn)
        kept = idem.Calls(self.conn, "kept", local_failure="keep")
        for label, error, shown in odd_errors():
            with self.subTest(label):
                @calls.tool(name="order_" + label.replace(" ", "_"))
                def order(db):
                    db.execute("INSERT INTO orders(sku) VALUES('x')")
                    raise error
                with self.assertRaises(type(error)) as cm:
                    order("a", "c")
                self.assertIs(cm.exception, error)
                self.assertIsNone(calls.reply(order.key("a", "c")))     # released

                @kept.tool(name="korder_" + label.replace(" ", "_"))
                def korder(db):
                    raise error
                with self.assertRaises(type(error)):
                    korder("a", "c")
                status, note = self.conn.execute(
                    "SELECT status, note FROM kept WHERE key = ?",
                    (korder.key("a", "c"),)).fetchone()
                self.assertEqual(status, "failed")
                self.assertIn(shown, note)
                self.assertEqual(self.count("SELECT count(*) FROM orders"), 0)

    def test_unstorable_result_whose_serializer_raises(self):
        class Boom(list):
            def __iter__(self):
                raise StrRaises()

        class Loud(dict):
            def items(self):
                raise OSError("cannot read " + ODD_NAME)
        calls = idem.Calls(self.conn)
        for label, value in (("iter", Boom([1])), ("items", Loud(a=1))):
            with self.subTest(label):
                @calls.tool(kind="external", name="ext_" + label)
                def send(idempotency_key):
                    return {"v": value}
                with self.assertRaises(idem.Unknown):
                    send("a", "c")
                self.assertEqual(self.calls_status(calls, send), "unknown")

                @calls.tool(name="loc_" + label)
                def order(db):
                    return {"v": value}
                with self.assertRaises(idem.Unstorable) as cm:
                    order("a", "c")
                self.assertEqual(cm.exception.status, "released")
                str(cm.exception)

    def test_not_sent_with_odd_text(self):
        calls = idem.Calls(self.conn)

        @calls.tool(kind="external")
        def send(idempotency_key):
            raise idem.NotSent("no route to " + ODD_NAME) from StrRaises()
        with self.assertRaises(idem.NotSent):
            send("a", "c")
        self.assertIsNone(calls.reply(send.key("a", "c")))              # released

    def calls_status(self, calls, tool):
        return calls.reply(tool.key("a", "c"))["status"]


class BusyBase(Base):
    """A connection whose records meet a busy database: another
    connection holds the write lock for `hold` seconds from the moment the
    tool returns."""

    def setUp(self):
        super().setUp()
        self.conn.close()
        self.conn = self.connect(timeout=0)
        self.calls = idem.Calls(self.conn)
        self.calls.record_timeout = 20
        self.blocker = self.connect()
        self.runs = []

    def block(self, hold):
        self.blocker.execute("BEGIN IMMEDIATE")
        t = threading.Timer(hold, lambda: self.blocker.execute("ROLLBACK"))
        t.start()
        self.addCleanup(t.join)

    def row(self, tool, **args):
        return self.conn.execute("SELECT status, result FROM calls WHERE key = ?",
                                 (tool.key("a", "c", **args),)).fetchone()


class CancelledWhileRecordingTest(BusyBase):
    """An async tool returned; its `done` record waits out a busy spell;
    the caller is cancelled meanwhile: the record is made first, then the
    cancellation goes on (wait_for raises its TimeoutError)."""

    def setUp(self):
        super().setUp()

        @self.calls.tool(kind="external")
        async def charge(idempotency_key, cents):
            self.runs.append(cents)
            self.block(0.6)
            return {"charge": "ch_1", "cents": cents}
        self.charge = charge

    def test_wait_for(self):
        async def main():
            t0 = time.monotonic()
            with self.assertRaises(asyncio.TimeoutError):
                await asyncio.wait_for(self.charge("a", "c", cents=5), 0.2)
            return time.monotonic() - t0
        took = asyncio.run(main())
        self.assertGreaterEqual(took, 0.5)          # it waited for the record
        self.assertEqual(self.row(self.charge, cents=5), ("done", '{"charge":"ch_1","cents":5}'))
        out = asyncio.run(self.charge.run("a", "c", cents=5))   # not lost
        self.assertEqual((out.result, out.replayed), ({"charge": "ch_1", "cents": 5}, True))
        self.assertEqual(self.runs, [5])

    def test_cancel_twice(self):
        async def main():
            task = asyncio.ensure_future(self.charge("a", "c", cents=6))
            await asyncio.sleep(0.1)
            task.cancel()
            await asyncio.sleep(0.1)
            task.cancel()
            with self.assertRaises(asyncio.CancelledError) as cm:
                await task
            return cm.exception
        e = asyncio.run(main())
        self.assertEqual(self.row(self.charge, cents=6)[0], "done")
        if sys.version_info >= (3, 11):
            self.assertIn("outcome was recorded", " ".join(e.__notes__))

    def test_left_to_asyncio_run(self):
        async def main():
            asyncio.ensure_future(self.charge("a", "c", cents=7))
            await asyncio.sleep(0.1)        # then asyncio.run cancels it
        asyncio.run(main())
        self.assertEqual(self.row(self.charge, cents=7)[0], "done")

    def test_coroutine_closed(self):
        # A loop closed with the task pending: the task is destroyed, its
        # coroutine closed (GeneratorExit) while the record waits.
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(lambda loop, context: None)
        task = loop.create_task(self.charge("a", "c", cents=8))
        loop.run_until_complete(asyncio.sleep(0.1))
        self.assertEqual(self.calls.reply(self.charge.key("a", "c", cents=8))["status"],
                         "pending")
        loop.close()
        task.get_coro().close()             # as the task's destruction does
        self.assertEqual(self.row(self.charge, cents=8)[0], "done")

    def test_cancelled_while_recording_unknown(self):
        @self.calls.tool(kind="external")
        async def send(idempotency_key):
            self.block(0.5)
            raise ConnectionResetError("peer went away")

        async def main():
            with self.assertRaises(asyncio.TimeoutError):
                await asyncio.wait_for(send("a", "c"), 0.1)
        asyncio.run(main())
        self.assertEqual(self.row(send)[0], "unknown")


class InterruptedWhileRecordingTest(BusyBase):
    """A plain tool returned; its record waits out a busy spell; a
    KeyboardInterrupt (or SystemExit) comes in a pause between attempts:
    the record is made, then the interrupt goes on."""

    def test_keyboard_interrupt_and_system_exit(self):
        for exc in (KeyboardInterrupt, SystemExit):
            with self.subTest(exc.__name__):
                @self.calls.tool(kind="external", name="send_" + exc.__name__)
                def send(idempotency_key):
                    self.block(0.4)
                    return {"sent": 1}
                real_sleep = time.sleep
                hits = []

                def sleep(seconds):
                    if not hits:
                        hits.append(seconds)
                        raise exc()
                    real_sleep(seconds)
                with mock.patch("time.sleep", sleep):
                    with self.assertRaises(exc):
                        send("a", "c")
                self.assertEqual(hits[:1], [0.005])
                self.assertEqual(self.row(send), ("done", '{"sent":1}'))

    def test_interrupt_then_not_recorded(self):
        self.calls.record_timeout = 0.2

        @self.calls.tool(kind="external")
        def send(idempotency_key):
            self.block(1.0)
            return 1
        hits = []
        real_sleep = time.sleep

        def sleep(seconds):
            if not hits:
                hits.append(seconds)
                raise KeyboardInterrupt()
            real_sleep(seconds)
        with mock.patch("time.sleep", sleep):
            with self.assertRaises(KeyboardInterrupt) as cm:
                send("a", "c")
        if sys.version_info >= (3, 11):
            self.assertIn("stays pending", " ".join(cm.exception.__notes__))
        self.assertIsInstance(cm.exception.__context__, idem.NotRecorded)


class Arming:
    """A connection on which an interrupt comes right after a COMMIT
    returns (as a signal does, at the next bytecode): armed, once."""
    armed = None

    def execute(self, sql, *args):
        cur = super().execute(sql, *args)
        if self.armed is not None and sql == "COMMIT":
            exc, self.armed = self.armed, None
            raise exc
        return cur


class Interrupting(Arming, sqlite3.Connection):
    pass


class ApswInterrupting(Arming, idem.ApswConnection):
    pass


class InterruptedAfterTheClaimTest(Base):
    """An interrupt between the claim's COMMIT and the tool's start: the
    request never left, so the call is released (not left pending with no
    owner), and the interrupt goes on; a retry runs."""

    def setUp(self):
        super().setUp()
        if DRIVER == "sqlite3":
            self.conn = sqlite3.connect(self.path, isolation_level=None,
                                        factory=Interrupting, check_same_thread=False)
        else:
            self.conn = ApswInterrupting(self.path, isolation_level=None,
                                         check_same_thread=False)
        self.addCleanup(self.conn.close)
        self.calls = idem.Calls(self.conn)
        self.runs = []

    def test_plain(self):
        @self.calls.tool(kind="external")
        def send(idempotency_key, to):
            self.runs.append(to)
            return to
        for exc in (KeyboardInterrupt(), SystemExit(2)):
            self.conn.armed = exc
            with self.assertRaises(type(exc)):
                send("a", "c", to="bob")
            self.assertEqual(self.runs, [])
            self.assertIsNone(self.calls.reply(send.key("a", "c", to="bob")))
        self.assertEqual(send("a", "c", to="bob"), "bob")           # a retry runs
        self.assertEqual(self.runs, ["bob"])

    def test_async(self):
        @self.calls.tool(kind="external")
        async def send(idempotency_key, to):
            self.runs.append(to)
            return to
        self.conn.armed = asyncio.CancelledError()
        with self.assertRaises(asyncio.CancelledError):
            asyncio.run(send("a", "c", to="bob"))
        self.assertEqual((self.runs, self.calls.reply(send.key("a", "c", to="bob"))), ([], None))
        self.assertEqual(asyncio.run(send("a", "c", to="bob")), "bob")


if __name__ == "__main__":
    unittest.main()
