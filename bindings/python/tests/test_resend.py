# SPDX-License-Identifier: MIT
"""A target that honours the key (doc/contract.md section 14): a tool
declared honours_key=True is sent again, with the same key, when its
outcome is unknown, and the call ends done with one effect at the target.
The target is test/examples/python/target_server.py, which honours
Idempotency-Key and counts every request that arrives; these tests count
its effects (charges) under lost answers, timeouts, a sender killed after
its request arrived, and concurrent retries.  Without the declaration
nothing changes: unknown holds.

Run with the package installed:  python -m unittest discover -s bindings/python/tests -v
"""
import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import unittest
import urllib.request
import warnings
from unittest import mock

import idem
from test_idem import Base, plain_connect

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "test", "examples", "python"))
from target_server import Target  # noqa: E402


def post(url, key, cents, timeout=2.0):
    """One charge, sent with the key, as a user's tool sends it."""
    req = urllib.request.Request(
        url + "/charges", data=json.dumps({"cents": cents}).encode(),
        headers={idem.HEADER: key, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


class ResendBase(Base):
    options = {"resend_after": "0.05 seconds"}

    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn, **self.options)

    def target(self, **kw):
        t = Target(**kw).start()
        self.addCleanup(t.stop)
        return t

    def charge_tool(self, calls, target, honours_key=True, timeout=2.0):
        @calls.tool(kind="external", name="charge", honours_key=honours_key)
        def charge(idempotency_key, cents):
            return post(target.url, idempotency_key, cents, timeout)
        return charge

    def row(self, key, conn=None):
        return (conn or self.conn).execute(
            "SELECT status, sends, honours_key FROM calls WHERE key = ? AND member = 0",
            (key,)).fetchone()


class LostAnswers(ResendBase):
    def test_lost_answers_are_resent_once_done(self):
        t = self.target(lose=2)
        charge = self.charge_tool(self.calls, t)
        out = charge.run("ann", "c1", cents=500)
        self.assertEqual((out.result["cents"], out.replayed, out.sends), (500, False, 3))
        self.assertEqual(len(t.charges), 1)                 # one effect
        self.assertEqual(t.arrivals[out.key.join('""')], 3)  # three arrivals
        self.assertEqual(self.row(out.key), ("done", 3, 1))
        # A duplicate replays, with the sends made.
        again = charge.run("ann", "c1", cents=500)
        self.assertEqual((again.result, again.replayed, again.sends),
                         (out.result, True, 3))
        self.assertEqual(self.calls.reply(out.key)["sends"], 3)
        self.assertEqual(len(t.charges), 1)

    def test_timeout_then_resend_one_effect(self):
        # The first request is slow to act (still on the wire when the
        # client gives up); the resend arrives first.  One charge.
        t = self.target()
        first = []

        def slow_first(key):
            if not first:
                first.append(key)
                time.sleep(0.5)
        t.on_arrival = slow_first
        charge = self.charge_tool(self.calls, t, timeout=0.2)
        out = charge.run("ann", "c2", cents=7)
        self.assertEqual(out.sends, 2)
        t.answer.wait(0.5)
        time.sleep(0.6)                                    # the slow one lands
        self.assertEqual(len(t.charges), 1)
        self.assertEqual(t.arrivals[out.key.join('""')], 2)
        self.assertEqual(self.row(out.key)[0], "done")

    def test_undeclared_unknown_holds(self):
        t = self.target(lose=1)
        charge = self.charge_tool(self.calls, t, honours_key=False)
        with self.assertRaises(idem.Unknown) as cm:
            charge.run("ann", "c3", cents=1)
        key = cm.exception.key
        self.assertEqual(cm.exception.reply["sends"], 1)
        with self.assertRaises(idem.Unknown) as again:
            charge.run("ann", "c3", cents=1)
        self.assertTrue(again.exception.replayed)
        self.assertEqual(t.arrivals[key.join('""')], 1)      # never resent
        self.assertEqual(self.row(key), ("unknown", 1, 0))
        self.assertIsNone(self.conn.execute(
            "SELECT resend_at FROM calls WHERE key = ?", (key,)).fetchone()[0])

    def test_attempts_are_bounded(self):
        conn = self.connect()
        calls = idem.Calls(conn, "few", max_sends="3", resend_after="0.05 seconds")
        t = self.target(lose=10)
        charge = self.charge_tool(calls, t)
        with self.assertRaises(idem.Unknown) as cm:
            charge.run("ann", "c4", cents=2)
        key = cm.exception.key
        self.assertFalse(cm.exception.replayed)
        self.assertEqual(cm.exception.reply["sends"], 3)
        self.assertEqual(t.arrivals[key.join('""')], 3)
        self.assertEqual(len(t.charges), 1)
        # Exhausted: a retry is not sent again; the target's records decide.
        with self.assertRaises(idem.Unknown):
            charge.run("ann", "c4", cents=2)
        self.assertEqual(t.arrivals[key.join('""')], 3)
        calls.reconcile(key, "arrived", id="ch_1")
        self.assertEqual(charge.run("ann", "c4", cents=2).sends, 3)

    def test_resend_wait_leaves_it_to_a_later_retry(self):
        t = self.target(lose=1)
        charge = self.charge_tool(self.calls, t)
        self.calls.resend_wait = 0
        with self.assertRaises(idem.Unknown) as cm:
            charge.run("ann", "c5", cents=3)
        self.assertEqual(cm.exception.reply["sends"], 1)
        self.calls.resend_wait = 5
        out = charge.run("ann", "c5", cents=3)
        self.assertEqual((out.replayed, out.sends), (False, 2))
        self.assertEqual(len(t.charges), 1)

    def test_interrupt_after_a_resend_commit_keeps_it_unknown(self):
        # Interrupted between the resend's COMMIT and its send: earlier
        # sends may have arrived, so the call is not released: it is
        # unknown again, and a later retry resends it.
        t = self.target(lose=1)
        charge = self.charge_tool(self.calls, t)
        self.calls.resend_wait = 0
        with self.assertRaises(idem.Unknown) as cm:
            charge.run("ann", "c9", cents=4)
        key = cm.exception.key
        time.sleep(0.1)
        self.calls.resend_wait = 5
        resend = self.calls._resend

        def interrupted(k, owner):
            resend(k, owner)
            raise KeyboardInterrupt
        self.calls._resend = interrupted
        with self.assertRaises(KeyboardInterrupt):
            charge.run("ann", "c9", cents=4)
        self.assertEqual(self.row(key), ("unknown", 2, 1))
        self.assertIn("interrupted before the resend left", self.conn.execute(
            "SELECT note FROM calls WHERE key = ?", (key,)).fetchone()[0])
        del self.calls._resend
        time.sleep(0.2)
        out = charge.run("ann", "c9", cents=4)
        self.assertEqual((out.replayed, out.sends), (False, 3))
        self.assertEqual(len(t.charges), 1)

    def test_resend_commit_reported_interrupted_keeps_it_unknown(self):
        # The resend's COMMIT stands but reports an error (a progress
        # handler's interrupt after its last instruction, doc/trust.md):
        # the call is this arrival's, taken for sending: it is put back
        # (unknown again), not left pending with nobody to send it.
        t = self.target(lose=1)
        charge = self.charge_tool(self.calls, t)
        self.calls.resend_wait = 0
        with self.assertRaises(idem.Unknown) as cm:
            charge.run("ann", "c10", cents=4)
        key = cm.exception.key
        time.sleep(0.1)
        self.calls.resend_wait = 5
        conn = self.calls.conn

        class Proxy:
            said = False

            def __getattr__(self, name):
                return getattr(conn, name)

            def execute(self, sql, *a):
                cur = conn.execute(sql, *a)
                if sql == "COMMIT" and not Proxy.said:
                    Proxy.said = True
                    raise sqlite3.OperationalError("interrupted")
                return cur
        self.calls.conn = Proxy()
        with self.assertRaisesRegex(sqlite3.OperationalError, "interrupted"):
            charge.run("ann", "c10", cents=4)
        self.calls.conn = conn
        self.assertEqual(self.row(key), ("unknown", 2, 1))
        time.sleep(0.2)
        out = charge.run("ann", "c10", cents=4)
        self.assertEqual((out.replayed, out.sends), (False, 3))
        self.assertEqual(len(t.charges), 1)

    def test_not_sent_still_releases(self):
        t = self.target()

        @self.calls.tool(kind="external", honours_key=True)
        def refuse(idempotency_key, n):
            raise idem.NotSent("bad card")
        with self.assertRaises(idem.NotSent):
            refuse("ann", "c6", n=1)
        self.assertIsNone(self.row(refuse.key("ann", "c6", n=1)))
        self.assertEqual(len(t.charges), 0)


class Declaring(ResendBase):
    def test_local_tool_cannot_honour(self):
        with self.assertRaisesRegex(ValueError, "honours_key=True is for external tools"):
            @self.calls.tool(kind="local", honours_key=True)
            def place(db, n):
                return n
        with self.assertRaisesRegex(TypeError, "honours_key is True or False"):
            @self.calls.tool(kind="external", honours_key="yes")
            def send(idempotency_key, n):
                return n

    def test_sends_of_local_and_external(self):
        @self.calls.tool(kind="local")
        def place(db, n):
            return n

        @self.calls.tool(kind="external")
        def send(idempotency_key, n):
            return n
        self.assertIsNone(place.run("a", "c", n=1).sends)
        self.assertEqual(send.run("a", "c", n=1).sends, 1)
        self.assertEqual(send.run("a", "c", n=1), idem.Outcome(1, None, send.key("a", "c", n=1), True))
        # A copy made by the tuple's own methods keeps .sends (it was lost,
        # and its repr raised AttributeError).
        out = send.run("a", "c", n=1)
        self.assertEqual(out._replace(result=2).sends, 1)
        self.assertEqual(out._replace(sends=4).sends, 4)
        self.assertIn("sends=1", repr(out._replace(result=2)))
        self.assertIsNone(idem.Outcome._make((1, None, "k", False)).sends)

    def test_table_options(self):
        idem.Calls(self.conn, "t1", honours_key="yes", max_sends="3",
                   resend_after="2 seconds")
        sql = self.conn.execute("SELECT sql FROM sqlite_master WHERE name = 't1'").fetchone()[0]
        self.assertEqual(sql, "CREATE VIRTUAL TABLE \"t1\" USING idem(honours_key=yes,"
                              " max_sends=3, resend_after='2 seconds')")
        with self.assertWarnsRegex(idem.RelaxedTableWarning, "honours_key=yes: an"
                                   " external call whose outcome is unknown is sent"
                                   " again with the same key"):
            idem.Calls(self.conn, "t1", max_sends="3")
        idem.Calls(self.conn, "t1", max_sends="3", honours_key="yes")
        with self.assertRaisesRegex(ValueError, r"exists with max_sends=3, not max_sends=5"):
            idem.Calls(self.conn, "t1", max_sends="5", honours_key="yes")
        with self.assertRaisesRegex(ValueError, r"^idem: t2: bad value '0' for max_sends; use a"
                                    r" whole number from 1 to 100"):
            idem.Calls(self.conn, "t2", max_sends="0")
        with self.assertRaisesRegex(ValueError, r"^idem: t2: unknown value 'maybe' for honours_key"):
            idem.Calls(self.conn, "t2", honours_key="maybe")
        # A table that honours the key: its external tools resend undeclared.
        conn = self.connect()
        calls = idem.Calls(conn, "t3", honours_key="yes", resend_after="0.05 seconds")
        t = self.target(lose=1)
        charge = self.charge_tool(calls, t, honours_key=False)
        self.assertEqual(charge.run("a", "c", cents=9).sends, 2)
        self.assertEqual(len(t.charges), 1)


KILLED_CHILD = r"""
import json, sys, time, urllib.request
import idem
db, url = sys.argv[1], sys.argv[2]
calls = idem.Calls(idem.connect(db, timeout=10),
                   stale_after="0.5 seconds", resend_after="0.05 seconds")
@calls.tool(kind="external", name="charge", honours_key=True)
def charge(idempotency_key, cents):
    req = urllib.request.Request(url + "/charges", data=json.dumps({"cents": cents}).encode(),
                                 headers={idem.HEADER: idempotency_key})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())
print("claimed", flush=True)
charge("ann", "c-kill", cents=42)
print("NOT KILLED", flush=True)
"""


class Killed(ResendBase):
    options = {"stale_after": "0.5 seconds", "resend_after": "0.05 seconds"}

    def test_sender_killed_after_the_request_arrived(self):
        t = self.target()
        child = subprocess.Popen([sys.executable, "-c", KILLED_CHILD, self.path, t.url],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: child.poll() is None and child.kill())
        killed = threading.Event()

        def kill(key):                      # the request arrived: kill its sender
            if not killed.is_set():
                os.kill(child.pid, signal.SIGKILL)
                child.wait(10)
                killed.set()
        t.on_arrival = kill
        child.wait(20)
        self.assertEqual(child.returncode, -signal.SIGKILL)
        # The server's thread sets killed after the kill: the child may be
        # reaped here first.
        self.assertTrue(killed.wait(10))
        t.on_arrival = None
        self.assertEqual(len(t.charges), 1)                 # it acted
        charge = self.charge_tool(self.calls, t)
        key = charge.key("ann", "c-kill", cents=42)
        self.assertEqual(self.row(key), ("pending", 1, 1))   # its sender is dead
        out = charge.run("ann", "c-kill", cents=42)          # waits until stale
        self.assertEqual((out.replayed, out.sends, out.result["charge"]), (False, 2, "ch_1"))
        self.assertEqual(len(t.charges), 1)                 # one effect
        self.assertEqual(t.arrivals[key.join('""')], 2)
        self.assertEqual(self.row(key), ("done", 2, 1))

    def test_old_owner_record_lands_nowhere(self):
        # The first sender is not dead but its lease lapsed (a process
        # frozen past stale_after: its heartbeat stopped, turned off here):
        # the call goes stale, a retry takes it over and finishes it; the
        # first sender's late record is refused (Lost), and the target
        # acted once.
        t = self.target()
        gate = threading.Event()

        def hold(key):
            if not gate.is_set():
                gate.set()
                time.sleep(1.2)
        t.on_arrival = hold
        conn = self.connect()
        calls = idem.Calls(conn)
        calls._beat = None                  # its lease lapses (section 11)
        slow = self.charge_tool(calls, t, timeout=5)
        errors = []

        def first():
            try:
                slow.run("ann", "c-slow", cents=5)
            except Exception as e:      # noqa: BLE001
                errors.append(e)
        th = threading.Thread(target=first)
        th.start()
        gate.wait(5)
        charge = self.charge_tool(self.calls, t)
        out = charge.run("ann", "c-slow", cents=5)
        th.join(10)
        self.assertEqual((out.replayed, out.sends), (False, 2))
        self.assertEqual(len(errors), 1)
        self.assertIsInstance(errors[0], idem.Lost)
        self.assertEqual(len(t.charges), 1)
        self.assertEqual(self.row(out.key), ("done", 2, 1))


class Concurrent(ResendBase):
    def test_concurrent_retries_one_resend(self):
        t = self.target(lose=1)
        charge = self.charge_tool(self.calls, t)
        self.calls.resend_wait = 0
        with self.assertRaises(idem.Unknown) as cm:
            charge.run("ann", "c7", cents=8)
        key = cm.exception.key
        time.sleep(0.1)                                    # resend_at passed
        results, start = [], threading.Barrier(6)

        def retry():
            conn = self.connect()
            calls = idem.Calls(conn)
            tool = self.charge_tool(calls, t)
            start.wait()
            try:
                results.append(tool.run("ann", "c7", cents=8))
            except idem.CallError as e:
                results.append(e)
        threads = [threading.Thread(target=retry) for _ in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(20)
        ran = [r for r in results if isinstance(r, idem.Outcome) and not r.replayed]
        self.assertEqual(len(results), 6)
        self.assertEqual(len(ran), 1, results)              # one sender
        for r in results:                                  # the others replay
            self.assertTrue(isinstance(r, (idem.Outcome, idem.InProgress)), r)
        self.assertEqual(len(t.charges), 1)
        self.assertEqual(t.arrivals[key.join('""')], 2)
        self.assertEqual(self.row(key), ("done", 2, 1))

    def test_concurrent_processes(self):
        # Four processes retry one unknown call at once: one resends.
        t = self.target(lose=1)
        charge = self.charge_tool(self.calls, t)
        self.calls.resend_wait = 0
        with self.assertRaises(idem.Unknown) as cm:
            charge.run("ann", "c8", cents=9)
        key = cm.exception.key
        time.sleep(0.1)
        script = KILLED_CHILD.replace('"c-kill", cents=42', '"c8", cents=9') \
                             .replace('stale_after="0.5 seconds", ', '')
        procs = [subprocess.Popen([sys.executable, "-c", script, self.path, t.url],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in range(4)]
        outs = [p.communicate(timeout=30) for p in procs]
        self.assertEqual(sum(b"NOT KILLED" in o[0] for o in outs)
                         + sum(b"InProgress" in o[1] for o in outs), 4, outs)
        self.assertEqual(len(t.charges), 1)
        self.assertEqual(t.arrivals[key.join('""')], 2)
        self.assertEqual(self.row(key), ("done", 2, 1))


@unittest.skipUnless(hasattr(sqlite3.Connection, "enable_load_extension"),
                     "the receiving example loads idem with the sqlite3 module,"
                     " which cannot load extensions in this Python")
class ReceivingSide(ResendBase):
    """Both sides idem: the client resends with the key, and the receiving
    example (test/examples/python/receiving_server.py, contract section 13)
    honours it: 409 while the first request is at work, its stored
    response after.  Its effects are its orders."""
    options = {"resend_after": "0.05 seconds", "max_sends": "8"}

    def server(self, **kw):
        from receiving_server import Server
        srv = Server(os.path.join(os.path.dirname(self.path), "orders.db"),
                     idem.loadable_path(), **kw)
        threading.Thread(target=srv.serve, daemon=True).start()
        self.addCleanup(srv.httpd.server_close)
        self.addCleanup(srv.httpd.shutdown)
        return srv

    def order_tool(self, srv, timeout):
        @self.calls.tool(kind="external", name="order", honours_key=True)
        def order(idempotency_key, sku, qty):
            req = urllib.request.Request(
                srv.url + "/orders", data=json.dumps({"sku": sku, "qty": qty}).encode(),
                headers={idem.HEADER: idempotency_key, "X-Client": "shop"})
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read())
        return order

    def orders(self, srv):
        conn = sqlite3.connect(srv.db_path)
        self.addCleanup(conn.close)
        return conn.execute("SELECT count(*) FROM orders").fetchone()[0]

    def test_slow_receiver_timeouts_then_409_then_the_stored_response(self):
        srv = self.server(work=0.6)
        out = self.order_tool(srv, timeout=0.2).run("ann", "r1", sku="A1", qty=2)
        self.assertEqual((out.result, out.replayed), ({"order": 1, "sku": "A1", "qty": 2}, False))
        self.assertGreaterEqual(out.sends, 3)          # a timeout, a 409, ..., 201
        self.assertEqual(sum(srv.arrivals.values()), out.sends)
        self.assertEqual(self.orders(srv), 1)          # one effect

    def test_lost_answer_from_the_receiver(self):
        srv = self.server(lose=1)
        out = self.order_tool(srv, timeout=2).run("ann", "r2", sku="B2", qty=1)
        self.assertEqual((out.result["order"], out.sends), (1, 2))
        self.assertEqual(sum(srv.arrivals.values()), 2)
        self.assertEqual(self.orders(srv), 1)



class HeartbeatTest(Base):
    """The owner's lease (doc/contract.md section 11): while an external
    request is out its call is touched at the table's heartbeat (the
    extension's, a third of stale_after), so a request that outlasts
    stale_after keeps its call not stale and no other sender takes it
    over; once the request has returned or raised the heartbeat stops: a
    row made pending again under the same owner is touched no more.  The
    sync tool's connection refuses other threads (sqlite3's default): the
    heartbeat has its own.  Margins: a beat every 0.67 s against 2 s."""

    OLD = "2000-01-01 00:00:00.000"

    def setUp(self):
        super().setUp()
        idem.load(self.conn)
        # The tool's connection, as sqlite3 opens one by default.
        self.mine = plain_connect(self.path, timeout=10, isolation_level=None)
        self.addCleanup(self.mine.close)
        self.calls = idem.Calls(self.mine, stale_after="2 seconds", honours_key="yes")
        self.calls.resend_wait = 0          # unknown stays unknown here
        self.key = self.calls.key("w", "c", "slow", {})

    def watch(self):
        """Out for 3 s: each second the call is not stale, and a resend
        by another sender is refused."""
        for i in range(3):
            time.sleep(1.0)
            stale = self.count("SELECT stale FROM calls WHERE member = 0")
            self.assertEqual(stale, 0, "stale after %d s out" % (i + 1))
            with self.assertRaisesRegex(sqlite3.OperationalError, "is pending and not stale"):
                self.conn.execute("UPDATE calls SET reconcile = 'resend', owner = 'thief'"
                                  " WHERE key = ? AND member = 0", (self.key,))

    def revive(self):
        """Make the settled call pending again, touched long ago."""
        self.conn.execute("UPDATE calls_claim SET status = 'pending', updated = ?"
                          " WHERE member = 0", (self.OLD,))

    def untouched(self):
        self.assertEqual(self.count("SELECT updated FROM calls WHERE member = 0"), self.OLD)

    def settled(self):
        """Made pending again, the call is touched no more."""
        self.revive()
        time.sleep(2.5)                     # nearly four beats
        self.untouched()

    def test_sync(self):
        for how in ("returns", "raises"):
            with self.subTest(how=how):
                if how == "raises":
                    self.conn.execute("DELETE FROM calls_claim")
                failed = []

                @self.calls.tool(kind="external", name="slow")
                def slow(idempotency_key):
                    try:
                        self.watch()
                    except BaseException as e:      # seen by the test below
                        failed.append(e)
                    if how == "raises":
                        raise TimeoutError("no answer")
                    return {"ok": True}
                if how == "raises":
                    with self.assertRaises(idem.Unknown):
                        slow("w", "c")
                else:
                    self.assertEqual(slow("w", "c"), {"ok": True})
                if failed:
                    raise failed[0]
                self.settled()

    def test_async(self):
        for how in ("returns", "raises"):
            with self.subTest(how=how):
                if how == "raises":
                    self.conn.execute("DELETE FROM calls_claim")
                gate = None

                @self.calls.tool(kind="external", name="slow")
                async def slow(idempotency_key):
                    await gate.wait()
                    if how == "raises":
                        raise TimeoutError("no answer")
                    return {"ok": True}

                async def main():
                    nonlocal gate
                    gate = asyncio.Event()
                    out = asyncio.ensure_future(slow("w", "c"))
                    for i in range(3):
                        await asyncio.sleep(1.0)
                        self.assertEqual(self.count("SELECT stale FROM calls WHERE member = 0"), 0,
                                         "stale after %d s out" % (i + 1))
                        with self.assertRaisesRegex(sqlite3.OperationalError,
                                                    "is pending and not stale"):
                            self.conn.execute("UPDATE calls SET reconcile = 'resend', owner ="
                                              " 'thief' WHERE key = ? AND member = 0", (self.key,))
                    gate.set()
                    if how == "raises":
                        with self.assertRaises(idem.Unknown):
                            await out
                    else:
                        self.assertEqual(await out, {"ok": True})
                    self.revive()           # within the loop, where a beat would run
                    await asyncio.sleep(2.5)
                    self.untouched()
                asyncio.run(main())


class HeartbeatOpensAsTheAppTest(Base):
    """The sync heartbeat's own connection opens the database as the
    tool's connection opened it (idem_database_uri(): its URI parameters
    and its VFS), not by the file's path alone, which takes the default
    VFS (doc/contract.md section 11)."""

    def beats(self, uri, **options):
        """A sync external call out for 2 s (twice stale_after) on a
        connection opened with uri: whether it stayed not stale, seen
        from another connection, and the URIs the heartbeat opened."""
        mine = plain_connect(uri, uri=True, timeout=10, isolation_level=None)
        self.addCleanup(mine.close)
        watcher = plain_connect(uri, uri=True, timeout=10, isolation_level=None)
        self.addCleanup(watcher.close)
        idem.load(watcher)
        calls = idem.Calls(mine, stale_after="1 second", **options)
        stale = []

        @calls.tool(kind="external", name="slow")
        def slow(idempotency_key):
            for _ in range(4):
                time.sleep(0.5)
                stale.append(self.count("SELECT stale FROM calls WHERE member = 0", watcher))
            return {"ok": True}
        with mock.patch.object(idem, "_beat_connect", wraps=idem._beat_connect) as opened:
            self.assertEqual(slow("w", "c"), {"ok": True})
        return (stale == [0, 0, 0, 0], [c.args[0] for c in opened.call_args_list],
                mine.execute("SELECT idem_database_uri('main')").fetchone()[0])

    def test_its_uri_parameters(self):
        kept, opened, uri = self.beats("file:%s?mode=rw&cache=private" % self.path)
        self.assertEqual(uri, "file://%s?mode=rw&cache=private&vfs=unix" % self.path)
        self.assertEqual((kept, opened), (True, [uri]))

    def test_its_vfs(self):
        # A database of the memdb VFS, shared by name within the process:
        # its path alone would open (make) a file on disk instead.  Newer
        # SQLite gives it no file name (in memory: no heartbeat, rightly).
        name = os.path.join(os.path.dirname(self.path), "shared.memdb")
        kept, opened, uri = self.beats("file:%s?vfs=memdb" % name, durability="relaxed")
        if uri is not None:
            self.assertEqual(uri, "file://%s?vfs=memdb" % name)
            self.assertEqual((kept, opened), (True, [uri]))
        else:
            self.assertEqual(opened, [])
        self.assertFalse(os.path.exists(name), "a heartbeat opened the path on disk")

    def test_exclusive_locking_mode_is_said(self):
        # No other connection can write a database this one holds in
        # locking_mode=EXCLUSIVE: no heartbeat, said once.
        mine = self.connect()
        mine.execute("PRAGMA locking_mode = EXCLUSIVE")
        calls = idem.Calls(mine, stale_after="1 second")

        @calls.tool(kind="external", name="quick")
        def quick(idempotency_key, n):
            return n
        with self.assertWarnsRegex(RuntimeWarning, r'^idem: the sync external tools of "calls"'
                                   r" send no heartbeat: their connection holds the database"
                                   r" in locking_mode=EXCLUSIVE"):
            self.assertEqual(quick("w", "c", n=1), 1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            self.assertEqual(quick("w", "c", n=2), 2)


if __name__ == "__main__":
    unittest.main()
