# SPDX-License-Identifier: MIT
"""Tests of the Python package sqlite-idem (import idem), with unittest.

Run against the installed package, from outside the source tree:

    python -m unittest discover -s bindings/python/tests -v

Every database lives in a temporary directory.  The tests marked
"needs keyargs" use the claim column keyargs (doc/contract.md section 9).

The connections are the sqlite3 module's where it can load extensions,
else the idem.ApswConnection that idem.connect() opens (the package's
extra [apsw]); IDEM_TEST_DRIVER=apsw chooses the latter anyway.
"""
import http.server
import json
import os
import sqlite3
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

import idem

DRIVER = os.environ.get("IDEM_TEST_DRIVER") or \
    ("sqlite3" if hasattr(sqlite3.Connection, "enable_load_extension") else "apsw")


def plain_connect(database, **kw):
    """A connection of the driver under test, without idem loaded."""
    if DRIVER == "sqlite3":
        return sqlite3.connect(database, **kw)
    return idem.ApswConnection(database, **kw)


class Base(unittest.TestCase):
    isolation_level = None          # the recommended mode

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="idem-py-")
        self.addCleanup(tmp.cleanup)
        self.path = os.path.join(tmp.name, "app.db")
        self.conn = self.connect()
        self.conn.execute("CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, sku, qty)")
        if self.conn.in_transaction:
            self.conn.commit()

    def connect(self, **kw):
        kw.setdefault("timeout", 10)
        if self.isolation_level is not None:
            kw.setdefault("isolation_level", self.isolation_level)
        else:
            kw["isolation_level"] = None
        conn = plain_connect(self.path, check_same_thread=False, **kw)
        self.addCleanup(conn.close)
        return conn

    def count(self, sql, conn=None):
        return (conn or self.conn).execute(sql).fetchone()[0]


class LoadTest(Base):
    def test_loadable_path(self):
        path = idem.loadable_path()
        self.assertTrue(path.endswith(os.path.join("idem", "idem.so")), path)
        self.assertTrue(os.path.isfile(path))

    def test_load(self):
        conn = plain_connect(":memory:")
        self.addCleanup(conn.close)
        idem.load(conn)
        self.assertRegex(conn.execute("SELECT idem_version()").fetchone()[0],
                         r"^\d+\.\d+\.\d+$")
        # Loading is switched off again afterwards.
        with self.assertRaises(sqlite3.OperationalError):
            conn.execute("SELECT load_extension(?)", (idem.loadable_path(),))

    def test_calls_loads_and_creates(self):
        conn = plain_connect(":memory:")
        self.addCleanup(conn.close)
        idem.Calls(conn, "tool_calls")
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'tool_calls'").fetchone()[0]
        self.assertEqual(sql, "CREATE VIRTUAL TABLE \"tool_calls\" USING idem")
        idem.Calls(conn, "tool_calls")       # the second time: already there

    def test_options_pass_through(self):
        idem.Calls(self.conn, "kept", local_failure="keep")
        sql = self.count("SELECT sql FROM sqlite_master WHERE name = 'kept'")
        self.assertEqual(sql, 'CREATE VIRTUAL TABLE "kept" USING idem(local_failure=keep)')
        with self.assertRaisesRegex(ValueError, r"^idem: bad: unknown option 'no_such_option=1';"
                                    r" the options are local_failure=release\|keep,"):
            idem.Calls(self.conn, "bad", no_such_option="1")
        self.assertIsNone(self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'bad'").fetchone())

    def test_rowcount_is_changes(self):
        # The claim's verdict is cursor.rowcount: check that it is changes().
        idem.Calls(self.conn)
        sql = "INSERT OR IGNORE INTO calls(who, conv, tool, args) VALUES('a', 'c', 't', '{}')"
        got = []
        for _ in range(2):
            self.conn.execute("BEGIN")
            cur = self.conn.execute(sql)
            got.append((cur.rowcount, self.count("SELECT changes()")))
            if cur.rowcount == 1:
                self.conn.execute("UPDATE calls SET status = 'done'"
                                  " WHERE key = idem_key('a','c','t','{}') AND member = 0")
            self.conn.execute("COMMIT")
        self.assertEqual(got, [(1, 1), (0, 0)])

    def test_key(self):
        calls = idem.Calls(self.conn)
        want = self.count("SELECT idem_key('a', 'c', 'place_order', '{\"qty\":2,\"sku\":\"X\"}')")
        self.assertEqual(calls.key("a", "c", "place_order", {"sku": "X", "qty": 2}), want)

        @calls.tool
        def place_order(db, sku, qty):
            return None
        self.assertEqual(place_order.key("a", "c", qty=2.0, sku="X"), want)


class LocalTest(Base):
    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn)
        self.runs = 0

        @self.calls.tool(kind="local")
        def place_order(db, sku, qty):
            self.runs += 1
            cur = db.execute("INSERT INTO orders(sku, qty) VALUES(?, ?)", (sku, qty))
            return idem.Result({"order": cur.lastrowid}, id=cur.lastrowid)
        self.place_order = place_order

    def test_once(self):
        first = self.place_order("alice", "conv-7", sku="A0001", qty=2)
        again = self.place_order(who="alice", conv="conv-7", qty=2.0, sku="A0001")
        self.assertEqual((first, again), ({"order": 1}, {"order": 1}))
        self.assertEqual((self.runs, self.count("SELECT count(*) FROM orders")), (1, 1))
        self.assertFalse(self.conn.in_transaction)
        row = self.conn.execute("SELECT status, id, result, kind FROM calls").fetchall()
        self.assertEqual(row, [("done", 1, '{"order":1}', "local")])

    def test_other_call(self):
        self.place_order("alice", "conv-7", sku="A0001", qty=2)
        self.place_order("bob", "conv-7", sku="A0001", qty=2)
        self.place_order("alice", "conv-8", sku="A0001", qty=2)
        self.place_order("alice", "conv-7", sku="A0001", qty=3)
        self.assertEqual(self.count("SELECT count(*) FROM orders"), 4)

    def test_exception_rolls_back(self):
        attempts = []

        @self.calls.tool
        def invoice(db, order):
            db.execute("INSERT INTO orders(sku, qty) VALUES('invoice', ?)", (order,))
            attempts.append(order)
            if len(attempts) == 1:
                raise RuntimeError("template missing")
            return {"invoiced": order}

        with self.assertRaisesRegex(RuntimeError, "template missing"):
            invoice("alice", "c", order=1)
        self.assertFalse(self.conn.in_transaction)
        self.assertEqual(self.count("SELECT count(*) FROM orders"), 0)
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 0)
        self.assertEqual(invoice("alice", "c", order=1), {"invoiced": 1})   # runs again
        self.assertEqual(invoice("alice", "c", order=1), {"invoiced": 1})   # replays
        self.assertEqual((len(attempts), self.count("SELECT count(*) FROM orders")), (2, 1))

    def test_failure_kept(self):
        calls = idem.Calls(self.conn, "kept", local_failure="keep")
        runs = []

        @calls.tool
        def invoice(db, order):
            runs.append(order)
            db.execute("INSERT INTO orders(sku) VALUES('x')")
            raise ValueError("no such order")

        with self.assertRaises(ValueError):
            invoice("alice", "c", order=9)
        with self.assertRaises(idem.Failed) as cm:
            invoice("alice", "c", order=9)
        self.assertEqual(runs, [9])
        self.assertEqual(cm.exception.key, invoice.key("alice", "c", order=9))
        self.assertEqual(cm.exception.reply["status"], "failed")
        self.assertIn("no such order", cm.exception.reply["message"])
        self.assertEqual(self.count("SELECT count(*) FROM orders"), 0)

    def test_inside_callers_transaction(self):
        self.conn.execute("BEGIN")
        self.conn.execute("INSERT INTO orders(sku) VALUES('before')")
        self.assertEqual(self.place_order("a", "c", sku="S", qty=1), {"order": 2})
        self.assertTrue(self.conn.in_transaction)       # still the caller's
        self.conn.execute("ROLLBACK")                   # the claim goes too
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 0)
        self.assertEqual(self.place_order("a", "c", sku="S", qty=1), {"order": 1})
        self.assertEqual(self.runs, 2)

    def test_bad_input_leaves_no_transaction(self):
        with self.assertRaisesRegex(TypeError, "who must be a str"):
            self.place_order(None, "c", sku="S", qty=1)
        self.assertFalse(self.conn.in_transaction)
        with self.assertRaisesRegex(ValueError, r"^idem: the arguments of place_order are"
                                    r" not JSON: args.qty is NaN, which JSON has no"
                                    r" form for$"):
            self.place_order("a", "c", sku="S", qty=float("nan"))
        with self.assertRaisesRegex(ValueError, r"args.qty is -Infinity, which JSON"):
            self.place_order("a", "c", sku="S", qty=float("-inf"))
        self.assertEqual((self.runs, self.count("SELECT count(*) FROM calls")), (0, 0))

    def test_interrupt_rolls_back(self):
        @self.calls.tool
        def stop(db):
            db.execute("INSERT INTO orders(sku) VALUES('x')")
            raise KeyboardInterrupt
        with self.assertRaises(KeyboardInterrupt):
            stop("a", "c")
        self.assertFalse(self.conn.in_transaction)
        self.assertEqual(self.count("SELECT count(*) FROM orders")
                         + self.count("SELECT count(*) FROM calls"), 0)

    def test_two_connections_at_once(self):
        barrier = threading.Barrier(2)
        results, runs = [], []

        def worker():
            conn = self.connect()
            calls = idem.Calls(conn)

            @calls.tool
            def place_order(db, sku, qty):
                runs.append(1)
                time.sleep(0.3)          # hold the write lock a while
                cur = db.execute("INSERT INTO orders(sku, qty) VALUES(?, ?)", (sku, qty))
                return {"order": cur.lastrowid}
            barrier.wait()
            results.append(place_order("alice", "c", sku="S", qty=1))

        threads = [threading.Thread(target=worker) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(results, [{"order": 1}, {"order": 1}])
        self.assertEqual((len(runs), self.count("SELECT count(*) FROM orders")), (1, 1))


class LocalDefaultModeTest(LocalTest):
    """The same with the sqlite3 module's default isolation_level ('')."""
    isolation_level = ""


class Target:
    """An HTTP target on 127.0.0.1 that honours Idempotency-Key; delay
    seconds before it answers."""

    def __init__(self, delay=0.0):
        self.delay, self.arrivals, self.keys = delay, 0, []
        target = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                target.arrivals += 1
                target.keys.append(self.headers.get(idem.HEADER))
                time.sleep(target.delay)
                data = json.dumps({"charge": "ch_%d" % target.arrivals,
                                   "cents": json.loads(body)["cents"]}).encode()
                try:
                    self.send_response(201)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/charges" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class ExternalTest(Base):
    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn)
        self.sent = []

    def charge_tool(self, calls, target, timeout=5.0):
        @calls.tool(kind="external")
        def charge(idempotency_key, cents):
            self.sent.append(idempotency_key)
            req = urllib.request.Request(
                target.url, data=json.dumps({"cents": cents}).encode(),
                headers={idem.HEADER: idempotency_key}, method="POST")
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return json.load(resp)
        return charge

    def target(self, delay=0.0):
        t = Target(delay)
        self.addCleanup(t.close)
        return t

    def test_once_with_header(self):
        target = self.target()
        charge = self.charge_tool(self.calls, target)
        first = charge("alice", "c", cents=500)
        again = charge("alice", "c", cents=500)
        self.assertEqual(first, {"charge": "ch_1", "cents": 500})
        self.assertEqual(again, first)
        key = charge.key("alice", "c", cents=500)
        self.assertEqual(target.keys, ['"%s"' % key])
        self.assertEqual(self.count("SELECT idem_header('%s')" % key),
                         '%s: "%s"' % (idem.HEADER, key))
        self.assertEqual(self.conn.execute("SELECT status, kind FROM calls").fetchall(),
                         [("done", "external")])
        self.assertFalse(self.conn.in_transaction)

    def test_claim_commits_before_the_request(self):
        seen = []

        @self.calls.tool(kind="external")
        def look(idempotency_key):
            other = self.connect()
            idem.load(other)
            seen.append(other.execute("SELECT status FROM calls").fetchall())
            return 1
        look("a", "c")
        self.assertEqual(seen, [[("pending",)]])

    def test_timeout_is_unknown_and_not_retried(self):
        target = self.target(delay=1.5)
        charge = self.charge_tool(self.calls, target, timeout=0.3)
        with self.assertRaises(idem.Unknown) as cm:
            charge("bob", "c", cents=990)
        self.assertIsInstance(cm.exception.__cause__, (TimeoutError, urllib.error.URLError))
        self.assertEqual(cm.exception.reply["status"], "unknown")
        with self.assertRaises(idem.Unknown) as cm2:
            charge("bob", "c", cents=990)
        self.assertEqual(cm2.exception.key, charge.key("bob", "c", cents=990))
        self.assertIn("may already have reached the target", cm2.exception.reply["message"])
        self.assertEqual((len(self.sent), target.arrivals), (1, 1))
        self.assertEqual(self.count("SELECT status FROM calls"), "unknown")

    def test_pending_duplicate_and_wait(self):
        target = self.target(delay=1.5)
        charge = self.charge_tool(self.calls, target)
        done = []
        t = threading.Thread(target=lambda: done.append(charge("carol", "c", cents=7)))
        t.start()
        other = idem.Calls(self.connect())
        other_charge = self.charge_tool(other, target)
        key = charge.key("carol", "c", cents=7)
        deadline = time.monotonic() + 5
        while other.reply(key) is None and time.monotonic() < deadline:
            time.sleep(0.01)            # until the claim has committed
        with self.assertRaises(idem.InProgress) as cm:
            other_charge("carol", "c", cents=7)
        self.assertEqual((cm.exception.key, cm.exception.reply["status"]), (key, "pending"))
        with self.assertRaises(idem.InProgress):
            other.wait(key, timeout=0.05)
        self.assertEqual(other.wait(key, timeout=10), {"charge": "ch_1", "cents": 7})
        t.join()
        self.assertEqual(done, [{"charge": "ch_1", "cents": 7}])
        self.assertEqual(target.arrivals, 1)

    def test_wait_missing(self):
        with self.assertRaises(KeyError):
            self.calls.wait("0" * 32, timeout=0.1)

    def test_inside_transaction_refused(self):
        @self.calls.tool(kind="external")
        def send(idempotency_key):
            return 1
        self.conn.execute("BEGIN")
        with self.assertRaisesRegex(RuntimeError, "commit first"):
            send("a", "c")
        self.conn.execute("ROLLBACK")
        self.assertEqual(self.sent, [])

    def test_local_and_external_kinds_are_refused_otherwise(self):
        with self.assertRaises(ValueError):
            self.calls.tool(kind="remote")


class ExternalDefaultModeTest(ExternalTest):
    isolation_level = ""


class KeyargsTest(Base):
    """needs keyargs (doc/contract.md section 9): the key from some of the
    arguments; a duplicate with other arguments replays under
    args_mismatch=replay, and is an error by default."""

    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn, "calls", args_mismatch="replay")
        self.runs = []

    def test_mismatch_is_an_error_by_default(self):
        calls = idem.Calls(self.conn, "strict")

        @calls.tool(keyargs=["sku"])
        def place_order(db, sku, note):
            self.runs.append(note)
            return 1
        self.assertEqual(place_order("a", "c", sku="S", note="first"), 1)
        self.assertEqual(place_order("a", "c", sku="S", note="first"), 1)
        with self.assertRaisesRegex(sqlite3.Error, "argument"):
            place_order("a", "c", sku="S", note="other")
        self.assertFalse(self.conn.in_transaction)
        self.assertEqual(self.runs, ["first"])

    def test_names(self):
        @self.calls.tool(keyargs=["sku", "qty"])
        def place_order(db, sku, qty, trace):
            self.runs.append(trace)
            return {"trace": trace}
        a = place_order("a", "c", sku="S", qty=1, trace="t1")
        b = place_order("a", "c", sku="S", qty=1, trace="t2")
        self.assertEqual((a, b, self.runs), ({"trace": "t1"}, {"trace": "t1"}, ["t1"]))
        key = self.count("""SELECT idem_key('a', 'c', 'place_order', '{"qty":1,"sku":"S"}')""")
        self.assertEqual(place_order.key("a", "c", sku="S", qty=1, trace="t9"), key)
        self.assertEqual(self.conn.execute("SELECT key, args FROM calls").fetchall(),
                         [(key, '{"qty":1,"sku":"S","trace":"t1"}')])

    def test_function(self):
        @self.calls.tool(kind="external", keyargs=lambda args: {"to": args["to"].lower()})
        def send(idempotency_key, to, text):
            self.runs.append(text)
            return len(self.runs)
        self.assertEqual(send("a", "c", to="Bob", text="hi"), 1)
        self.assertEqual(send("a", "c", to="BOB", text="hi there"), 1)
        self.assertEqual(self.runs, ["hi"])


if __name__ == "__main__":
    unittest.main()
