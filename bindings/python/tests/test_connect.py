# SPDX-License-Identifier: MIT
"""idem.connect(), and the ApswConnection it opens where this Python's
sqlite3 module cannot load extensions: the same programs give the same
results, errors and transactions on it as on the sqlite3 module (each test
of SameAsSqlite3Test runs one program on both and compares what it saw)."""
import datetime
import os
import sqlite3
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

import idem

try:
    import apsw                                 # noqa: F401
    HAVE_APSW = True
except ImportError:
    HAVE_APSW = False

CAN_LOAD = hasattr(sqlite3.Connection, "enable_load_extension")


class NoLoading(sqlite3.Connection):
    """A sqlite3 connection as a Python built without extension loading
    has it."""

    def __getattribute__(self, name):
        if name in ("enable_load_extension", "load_extension"):
            raise AttributeError(name)
        return super().__getattribute__(name)


class Tmp(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="idem-py-")
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.path = os.path.join(tmp.name, "app.db")


class ConnectTest(Tmp):
    def test_connect_loads_idem(self):
        conn = idem.connect(self.path)
        self.addCleanup(conn.close)
        self.assertIsInstance(conn, sqlite3.Connection if CAN_LOAD else idem.ApswConnection)
        self.assertEqual(conn.execute("SELECT idem_version()").fetchone()[0], idem.__version__)
        self.assertIsNone(conn.isolation_level)         # autocommit unless told
        conn.execute("CREATE TABLE t(x)")
        conn.execute("INSERT INTO t VALUES(1)")
        self.assertFalse(conn.in_transaction)
        # Loading is switched off again afterwards.
        with self.assertRaisesRegex(sqlite3.OperationalError, "not authorized"):
            conn.execute("SELECT load_extension(?)", (idem.loadable_path(),))
        # A tool on it, and a second connection that sees its call.
        calls = idem.Calls(conn)

        @calls.tool
        def add(db, x):
            return db.execute("INSERT INTO t VALUES(?)", (x,)).lastrowid
        self.assertEqual(add.run("a", "c", x=5), idem.Outcome(2, None, add.key("a", "c", x=5), False))
        other = idem.connect(self.path, timeout=2, isolation_level="")
        self.addCleanup(other.close)
        self.assertEqual(other.isolation_level, "")
        self.assertEqual(idem.Calls(other).reply(add.key("a", "c", x=5))["result"], 2)

    @unittest.skipUnless(HAVE_APSW, "needs apsw (pip install 'sqlite-idem[apsw]')")
    def test_driver_apsw(self):
        conn = idem.connect(self.path, driver="apsw", isolation_level="IMMEDIATE")
        self.addCleanup(conn.close)
        self.assertIsInstance(conn, idem.ApswConnection)
        self.assertEqual(conn.isolation_level, "IMMEDIATE")
        self.assertEqual(conn.execute("SELECT idem_version()").fetchone()[0], idem.__version__)
        self.assertEqual(conn.apsw.filename, os.path.realpath(self.path))

    def test_driver_refused(self):
        with self.assertRaisesRegex(ValueError, r"^idem.connect\(\): driver must be 'sqlite3',"
                                    r" 'apsw' or None \(the one that can load extensions here\),"
                                    r" not 'pg'$"):
            idem.connect(self.path, driver="pg")
        self.assertFalse(os.path.exists(self.path))

    @unittest.skipIf(CAN_LOAD, "this Python's sqlite3 can load extensions")
    def test_driver_sqlite3_where_it_cannot_load(self):
        with self.assertRaisesRegex(RuntimeError, r"^idem.connect\(driver='sqlite3'\): this"
                                    r" Python's sqlite3 module cannot load extensions"):
            idem.connect(self.path, driver="sqlite3")

    def test_load_where_sqlite3_cannot_load(self):
        conn = sqlite3.connect(":memory:", factory=NoLoading)
        self.addCleanup(conn.close)
        why = (r"^idem: this Python's sqlite3 module cannot load extensions, so idem"
               r" cannot be loaded into this connection \(sqlite3.Connection has no"
               r" enable_load_extension: .*\); open the database with"
               r" idem.connect\(path\) instead of sqlite3.connect\(path\): it uses"
               r" APSW here \(pip install 'sqlite-idem\[apsw\]'\)$")
        with self.assertRaisesRegex(RuntimeError, why):
            idem.load(conn)
        with self.assertRaisesRegex(RuntimeError, why):
            idem.Calls(conn)
        if not CAN_LOAD:                # and this Python's own connections
            with self.assertRaisesRegex(RuntimeError, why):
                idem.load(sqlite3.connect(":memory:"))

    def test_apsw_missing(self):
        with mock.patch.dict(sys.modules, {"apsw": None}):
            with self.assertRaisesRegex(RuntimeError, r"^idem.connect\(\): this Python's"
                                        r" sqlite3 module cannot load extensions .* and APSW,"
                                        r" which can, is not installed: pip install"
                                        r" 'sqlite-idem\[apsw\]' \(or pip install apsw\)$"):
                idem.connect(self.path, driver="apsw")
        self.assertFalse(os.path.exists(self.path))

    def test_not_a_connection(self):
        with self.assertRaisesRegex(TypeError, "^idem.load\\(\\) needs a sqlite3.Connection, not str"):
            idem.load("app.db")


def error(e):
    return ("raised", type(e).__name__, str(e), getattr(e, "sqlite_errorcode", None),
            getattr(e, "sqlite_errorname", None))


@unittest.skipUnless(HAVE_APSW, "needs apsw (pip install 'sqlite-idem[apsw]')")
class SameAsSqlite3Test(Tmp):
    """Each test is a program given open(path, **kw); it returns what it
    saw, which must be the same on sqlite3.connect and ApswConnection."""

    def both(self, program, **kw):
        seen = []
        for name, opener in (("sqlite3", sqlite3.connect), ("apsw", idem.ApswConnection)):
            d = tempfile.mkdtemp(prefix=name + "-", dir=self.dir)
            opened = []

            def open_(path="app.db", **more):
                args = dict(kw, **more)
                conn = opener(path if path == ":memory:" else os.path.join(d, path), **args)
                opened.append(conn)
                return conn
            log = []

            def do(f, *a):
                try:
                    out = f(*a)
                except Exception as e:
                    out = error(e)
                if hasattr(out, "rowcount"):        # a cursor
                    out = ("cursor", out.rowcount)
                log.append(out)
                return out
            try:
                program(open_, do)
            finally:
                for c in opened:
                    try:
                        c.close()
                    except sqlite3.ProgrammingError:
                        pass
            seen.append(log)
        self.maxDiff = None
        self.assertEqual(seen[1], seen[0])
        self.assertTrue(seen[0])
        return seen[0]

    def test_statements(self):
        def program(open_, do):
            c = open_(isolation_level=None)
            do(lambda: c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x UNIQUE, y)").rowcount)
            cur = c.execute("INSERT INTO t(x, y) VALUES(?, ?)", ("a", 1))
            do(lambda: (cur.rowcount, cur.lastrowid, cur.description, cur.fetchall()))
            cur = c.executemany("INSERT INTO t(x, y) VALUES(:x, :y)",
                                [{"x": "b", "y": 2.5}, {"x": "c", "y": None}])
            do(lambda: (cur.rowcount, cur.description))
            do(lambda: c.execute("UPDATE t SET y = 0 WHERE id > 1").rowcount)
            do(lambda: c.execute("  -- a comment\n DELETE FROM t WHERE x = 'c'").rowcount)
            cur = c.execute("SELECT id, x AS name, y FROM t ORDER BY id")
            do(lambda: (cur.rowcount, cur.description, cur.fetchone(), cur.fetchmany(5),
                        cur.fetchone(), cur.fetchall()))
            do(lambda: c.execute("SELECT * FROM t WHERE 0").description)
            do(lambda: list(c.execute("SELECT x FROM t ORDER BY x")))
            cur = c.execute("INSERT INTO t(x) VALUES('r') RETURNING id, x")
            do(lambda: (cur.fetchall(), cur.rowcount))
            do(lambda: c.execute("SELECT ?, ?, ?, ?, ?", (True, b"\x00b", bytearray(b"z"),
                                                          datetime.date(2026, 1, 2),
                                                          2 ** 63 - 1)).fetchall())
            do(lambda: c.execute("SELECT ?", (2 ** 63,)))
            do(lambda: c.execute("SELECT ?", (object(),)))
            do(lambda: c.execute("SELECT ?, ?", (1,)))
            do(lambda: c.execute("SELECT 1; SELECT 2"))
            do(lambda: c.execute("SELECT 1; -- only a comment\n"
                                 ).fetchall())
            do(lambda: c.execute(""))
            do(lambda: c.executescript("INSERT INTO t(x) VALUES('s1'); INSERT INTO t(x) VALUES('s2');"
                                       " SELECT 1;").fetchall())
            do(lambda: c.total_changes)
            do(lambda: c.executemany("SELECT ?", [(1,)]))
            c.row_factory = sqlite3.Row
            row = c.execute("SELECT x AS Name, y FROM t WHERE id = 1").fetchone()
            do(lambda: (row.keys(), row["name"], row["NAME"], row[1], tuple(row), len(row)))
        self.both(program)

    def test_errors(self):
        def program(open_, do):
            c = open_(isolation_level=None)
            c.execute("CREATE TABLE t(x UNIQUE NOT NULL)")
            c.execute("INSERT INTO t VALUES(1)")
            do(c.execute, "INSERT INTO t VALUES(1)")
            do(c.execute, "INSERT INTO t VALUES(NULL)")
            do(c.execute, "SELECT * FROM nowhere")
            do(c.execute, "SELEC 1")
            do(c.execute, "COMMIT")
            do(c.execute, 42)
            c.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 100)
            do(lambda: c.getlimit(sqlite3.SQLITE_LIMIT_LENGTH))
            do(c.execute, "SELECT ?", ("x" * 200,))
            cur = c.cursor()
            cur.close()
            do(cur.execute, "SELECT 1")
            c.close()
            do(c.close)
            do(c.execute, "SELECT 1")
            do(c.commit)
        self.both(program)

    def test_transactions(self):
        for level in ("", "DEFERRED", "IMMEDIATE", "EXCLUSIVE", None):
            def program(open_, do):
                c = open_(isolation_level=level, timeout=0)
                o = open_(isolation_level=None, timeout=0)
                look = lambda: o.execute("SELECT count(*) FROM t").fetchone()[0]  # noqa: E731
                c.execute("PRAGMA synchronous = OFF")          # faster, not other
                c.execute("CREATE TABLE t(x)")
                do(lambda: c.in_transaction)
                c.execute("INSERT INTO t VALUES(1)")
                do(lambda: (c.in_transaction, look()))
                c.commit()
                do(lambda: (c.in_transaction, look()))
                c.execute("UPDATE t SET x = 2")
                c.rollback()
                do(lambda: (c.in_transaction, c.execute("SELECT x FROM t").fetchall()))
                c.execute("SELECT * FROM t")
                do(lambda: c.in_transaction)
                with c:
                    c.execute("INSERT INTO t VALUES(3)")
                do(lambda: (c.in_transaction, look()))
                try:
                    with c:
                        c.execute("INSERT INTO t VALUES(4)")
                        raise KeyError("out")
                except KeyError:
                    pass
                do(lambda: (c.in_transaction, look()))
                c.execute("INSERT INTO t VALUES(5)")
                c.executescript("INSERT INTO t VALUES(6)")       # commits first
                do(lambda: (c.in_transaction, look()))
                c.execute("BEGIN")
                c.execute("INSERT INTO t VALUES(7)")
                do(lambda: (c.in_transaction, look()))
                c.isolation_level = None                        # commits
                do(lambda: (c.in_transaction, look(), c.isolation_level))
                c.isolation_level = level
                c.execute("CREATE TABLE u(x UNIQUE)")
                for sql, params in (("INSERT INTO nowhere VALUES(1)", ()),
                                    ("INSERT INTO u VALUES(?)", (object(),)),
                                    ("INSERT INTO u VALUES(?)", (2 ** 64,)),
                                    ("INSERT INTO u VALUES(?, ?)", (1,)),
                                    ("INSERT INTO u VALUES(1)", ()),
                                    ("INSERT INTO u VALUES(1)", ())):
                    do(c.execute, sql, params)
                    do(lambda: c.in_transaction)
                    c.rollback()
                do(setattr, c, "isolation_level", "NOW")
                do(setattr, c, "isolation_level", 1)
            with self.subTest(isolation_level=level):
                self.both(program)

    def test_busy(self):
        def program(open_, do):
            a = open_(isolation_level=None, timeout=0.2)
            b = open_(isolation_level=None, timeout=0.2)
            a.execute("CREATE TABLE t(x)")
            a.execute("BEGIN IMMEDIATE")
            t0 = time.monotonic()
            do(b.execute, "BEGIN IMMEDIATE")
            do(lambda: (time.monotonic() - t0 >= 0.15, b.in_transaction))
            do(lambda: b.execute("INSERT INTO t VALUES(1)").rowcount)
            a.execute("COMMIT")
            do(lambda: b.execute("INSERT INTO t VALUES(1)").rowcount)
            do(lambda: b.execute("SELECT count(*) FROM t").fetchone())
        self.both(program, check_same_thread=False)

    def test_threads(self):
        def program(open_, do):
            c = open_(isolation_level=None)
            c.execute("CREATE TABLE t(x)")
            got = []

            def other_thread():
                try:
                    c.execute("SELECT 1")
                except Exception as e:
                    got.append((type(e).__name__, str(e).split(" The object")[0]))
            t = threading.Thread(target=other_thread)
            t.start()
            t.join()
            do(lambda: got)
            shared = open_(isolation_level=None, check_same_thread=False, timeout=10)
            shared.execute("PRAGMA synchronous = OFF")

            def work(i):                    # statements that take a while
                for j in range(25):
                    shared.execute("INSERT INTO t SELECT ? FROM (WITH RECURSIVE"
                                   " n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n"
                                   " WHERE k < 20000) SELECT count(*) FROM n)",
                                   (i * 100 + j,))
            ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            do(lambda: c.execute("SELECT count(*), count(DISTINCT x) FROM t").fetchone())
        self.both(program)


if __name__ == "__main__":
    unittest.main()
