# SPDX-License-Identifier: MIT
"""Table options as the extension reads them (issue 31, items 7 and 8):
Calls() compares the options it is given with those idem parsed
(idem_options()), never with the CREATE text, where a comment hides what
SQLite hands idem; and it warns (idem.RelaxedTableWarning) about a table
made with an option that weakens what a claim promises by default when
it was not told that option.

Run with the package installed:  python -m unittest discover -s bindings/python/tests -v
"""
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
import unittest
import warnings

import idem
import idem.ops
from test_idem import Base, plain_connect

# The repository's ext/ (the tests run from a clone): the sources of the
# variant build below.
EXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "ext")

# SQLite hands idem retain='1 seconds'; the text also holds '30 days'.
HIDDEN = ("CREATE VIRTUAL TABLE %s USING idem(retain='1 seconds'/*,*/--,retain='30 days'\n)")


class ParsedOptionsTest(Base):
    def setUp(self):
        super().setUp()
        idem.load(self.conn)

    def test_a_comment_hides_nothing(self):
        self.conn.execute(HIDDEN % "calls")
        with self.assertRaisesRegex(ValueError, r"^idem: the table \"calls\" exists with"
                                    r" retain='1 second', not retain='30 days': a table's"
                                    r" options are set when it is created"):
            idem.Calls(self.conn, "calls", retain="30 days")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            idem.Calls(self.conn, "calls", retain="1 second")          # what idem keeps
            idem.Calls(self.conn, "calls", retain="1 seconds")

    def test_what_the_table_does_agrees(self):
        self.conn.execute(HIDDEN % "calls")
        calls = idem.Calls(self.conn, "calls", retain="1 second")
        runs = []

        @calls.tool
        def order(db, n):
            runs.append(n)
            return n
        order("a", "c", n=1)
        order("a", "c", n=1)
        self.assertEqual(runs, [1])
        time.sleep(1.3)
        order("a", "c", n=1)                    # expired after 1 s: it runs again
        self.assertEqual(runs, [1, 1])

    def test_other_hidden_options(self):
        for n, (sql, given, bad) in enumerate((
                ("durability=relaxed /* , durability=full */", {"durability": "relaxed"},
                 ({"durability": "full"}, "durability=relaxed, not durability=full")),
                ("-- local_failure=keep\n retain='2 days'", {"retain": "48 hours"},
                 ({"local_failure": "keep"}, "local_failure=release \\(the default\\),"
                  " not local_failure=keep")),
                ("args_mismatch=replay/*)*/", {"args_mismatch": "replay"},
                 ({"args_mismatch": "error"}, "args_mismatch=replay, not args_mismatch=error")))):
            with self.subTest(sql):
                table = "t%d" % n
                self.conn.execute("CREATE VIRTUAL TABLE %s USING idem(%s)" % (table, sql))
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    idem.Calls(self.conn, table, **given)
                with self.assertRaisesRegex(ValueError, bad[1]):
                    idem.Calls(self.conn, table, **bad[0])

    def test_a_temp_table_of_the_name_is_not_the_table(self):
        # SQLite reads temp.calls first for an unqualified name; the
        # package's table is main's (doc/contract.md section 5): its
        # options, its claims and the desk's reading are main's.
        self.conn.execute("CREATE VIRTUAL TABLE calls USING idem(local_failure=keep)")
        self.conn.execute("CREATE TEMP TABLE calls(x)")
        calls = idem.Calls(self.conn, "calls", local_failure="keep")
        with self.assertRaisesRegex(ValueError, r'^idem: the table "calls" exists with'
                                    r" local_failure=keep, not local_failure=release"):
            idem.Calls(self.conn, "calls", local_failure="release")

        @calls.tool
        def order(db, n):
            return n
        self.assertEqual(order("a", "c", n=1), 1)
        self.assertEqual(order("a", "c", n=1), 1)
        self.assertEqual(self.count("SELECT count(*) FROM main.calls WHERE member = 0"), 1)
        self.assertEqual(self.count("SELECT count(*) FROM temp.calls"), 0)
        desk = idem.ops.Desk(self.conn, "calls")
        self.assertEqual(desk.stats()["total"], 1)
        self.assertIn("sends", desk.optional)

    def test_not_an_idem_table(self):
        with self.assertRaisesRegex(ValueError, r'^idem: the table "orders" exists and is'
                                    r" not an idem table \(CREATE TABLE orders"):
            idem.Calls(self.conn, "orders")


class OptionsFromCTest(Base):
    """The options are checked by the extension alone (idem_parse_options():
    doc/contract.md section 5): a bad one is refused with CREATE VIRTUAL
    TABLE's own words, before anything is made; the package keeps no copy
    of the words, durations, ranges or limits."""

    def create_error(self, table, texts):
        """What CREATE VIRTUAL TABLE says of these options, on a database
        of its own."""
        conn = plain_connect(":memory:")
        self.addCleanup(conn.close)
        idem.load(conn)
        try:
            conn.execute("CREATE VIRTUAL TABLE %s USING idem(%s)" % (table, ", ".join(texts)))
        except sqlite3.OperationalError as e:
            return str(e)
        self.fail("CREATE took %r" % (texts,))

    def test_a_bad_option_is_refused_with_creates_words(self):
        for given, texts in (
                ({"local_failure": "kept"}, ["local_failure=kept"]),
                ({"retain": "forever"}, ["retain=forever"]),
                ({"retain": "36526 days"}, ["retain='36526 days'"]),
                ({"stale_after": "1.5 fortnights"}, ["stale_after='1.5 fortnights'"]),
                ({"max_sends": "0"}, ["max_sends=0"]),
                ({"max_sends": "101"}, ["max_sends=101"]),
                ({"honours_key": "maybe"}, ["honours_key=maybe"]),
                ({"locl_failure": "keep"}, ["locl_failure=keep"]),
                ({"retain": "1 day", "Retain": "2 days"}, ["retain='1 day'", "retain='2 days'"]),
                # under three heartbeats (doc/contract.md section 11)
                ({"stale_after": "0.2 seconds"}, ["stale_after='0.2 seconds'"])):
            with self.subTest(given):
                with self.assertRaises(ValueError) as cm:
                    idem.Calls(self.conn, "t1", **given)
                self.assertEqual(str(cm.exception), self.create_error("t1", texts))
                self.assertTrue(str(cm.exception).startswith("idem: t1: "))
        self.assertEqual(self.count("SELECT count(*) FROM sqlite_master WHERE name = 't1'"), 0)

    def test_the_statuses_are_the_extensions(self):
        # idem_statuses() (doc/contract.md section 5): ops.STATUSES, the
        # CLI's --status and the Datasette plugin's ?status= read them.
        conn = plain_connect(":memory:")
        self.addCleanup(conn.close)
        idem.load(conn)
        read = tuple(json.loads(conn.execute("SELECT idem_statuses()").fetchone()[0]))
        self.assertEqual(idem.ops.STATUSES, read)
        self.assertEqual(idem.ops.statuses(conn), read)
        self.assertIs(idem.ops.statuses(), idem.ops.statuses())     # read once
        with self.assertRaises(AttributeError):
            idem.ops.STATUS
        with open(idem.ops.__file__, encoding="utf-8") as f:
            self.assertNotIn('"pending", "failed"', f.read())

    def test_the_rules_are_not_in_the_package(self):
        for name in ("_SWITCHES", "_DURATIONS", "_COUNTS", "_UNITS", "_NOTE_MAX",
                     "_OPTIONS_HELP", "_SWITCH_HELP", "_DURATION", "_DURATION_MAX",
                     "_duration_ms", "_option_value"):
            self.assertFalse(hasattr(idem, name), name)

    # A build of the extension whose limits differ (-D: the note limit, the
    # range of max_sends, the refused resends), loaded into a connection:
    # the package follows it, with nothing changed in the package.
    def test_a_change_in_c_alone_is_seen(self):
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None or not os.path.isfile(os.path.join(EXT, "idem.c")):
            self.skipTest("no C compiler or no ext/ here (an installed copy)")
        if not hasattr(sqlite3.Connection, "enable_load_extension"):
            self.skipTest("this Python's sqlite3 cannot load extensions")
        tmp = tempfile.mkdtemp(prefix="idem-variant-")
        self.addCleanup(shutil.rmtree, tmp)
        so = os.path.join(tmp, "idem.so")
        subprocess.run([cc, "-O0", "-w", "-fPIC", "-shared", "-DIDEM_NOTE_MAX=40",
                        "-DIDEM_MAX_SENDS_LIMIT=7", "-DIDEM_RESEND_REFUSALS=2", "-o", so, os.path.join(EXT, "idem.c")],
                       check=True)
        conn = sqlite3.connect(os.path.join(tmp, "v.db"), isolation_level=None)
        self.addCleanup(conn.close)
        conn.enable_load_extension(True)
        conn.load_extension(so)
        conn.enable_load_extension(False)
        with self.assertRaisesRegex(ValueError, r"^idem: v: bad value '8' for max_sends;"
                                    r" use a whole number from 1 to 7:"):
            idem.Calls(conn, "v", max_sends="8")
        calls = idem.Calls(conn, "v", max_sends="7", local_failure="keep")

        @calls.tool(kind="local")
        def fail(db, n):
            raise RuntimeError("x" * 5000)
        with self.assertRaises(RuntimeError):
            fail("a", "c", n=1)
        note = conn.execute("SELECT note FROM v WHERE member = 0").fetchone()[0]
        self.assertEqual((len(note), note[-3:]), (40, "..."))
        self.assertEqual(self.refused_resends(conn), 2)
        # The same on the package's own build: its limits are C's defaults.
        calls = idem.Calls(self.conn, "w", max_sends="8", local_failure="keep")

        @calls.tool(kind="local")
        def fail2(db, n):
            raise RuntimeError("x" * 5000)
        with self.assertRaises(RuntimeError):
            fail2("a", "c", n=1)
        self.assertEqual(len(self.count("SELECT note FROM w WHERE member = 0")), 2000)
        self.assertEqual(self.refused_resends(self.conn), 3)

    def refused_resends(self, conn):
        """How many refused resends in a row (nothing moved) end a call's
        wait for its resend: then it replays the call as it stands."""
        calls = idem.Calls(conn, "r", honours_key="yes", resend_after="0.01 seconds")
        calls.resend_wait = 0

        @calls.tool(kind="external", honours_key=True)
        def send(idempotency_key, n):
            raise TimeoutError("no answer")
        with self.assertRaises(idem.Unknown):
            send("a", "c", n=1)
        tries = []

        def refuse(key, owner):
            tries.append(key)
            return None, sqlite3.OperationalError("idem: r: refused")
        calls._resend = refuse
        calls.resend_wait = 10
        with self.assertRaises(idem.Unknown):
            send("a", "c", n=1)
        return len(tries)


class RelaxedTableTest(Base):
    """A file can arrive with its table made durability=relaxed or with a
    short retain: Calls() not told so warns, once per option, naming it,
    why, and what to give to accept it."""

    def setUp(self):
        super().setUp()
        idem.load(self.conn)

    def made(self, options):
        self.conn.execute("CREATE VIRTUAL TABLE calls USING idem(%s)" % options)

    def warned(self, **given):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            idem.Calls(self.conn, "calls", **given)
        for x in w:
            self.assertIs(x.category, idem.RelaxedTableWarning)
            self.assertEqual(x.filename, __file__)          # the caller's line
        return [str(x.message) for x in w]

    def test_each_relaxed_option(self):
        self.made("durability=relaxed, retain='1 seconds', args_mismatch=replay,"
                  " local_failure=keep, stale_after='1 hour'")
        self.assertEqual(self.warned(), [
            "idem: the table \"calls\" was made with args_mismatch=replay: a duplicate"
            " with other arguments replays the first call instead of failing; give"
            " args_mismatch='replay' to idem.Calls() to accept it, or use another table",
            "idem: the table \"calls\" was made with durability=relaxed: a power loss"
            " may take back a claim, and its call may then run again; give"
            " durability='relaxed' to idem.Calls() to accept it, or use another table",
            "idem: the table \"calls\" was made with retain='1 second': a decided call is"
            " forgotten 1 second after it was decided, and an arrival after that runs it"
            " again; give retain='1 second' to idem.Calls() to accept it, or use another"
            " table"])
        # Told: no warning for what it was told.
        self.assertEqual(len(self.warned(durability="relaxed")), 2)
        self.assertEqual(self.warned(durability="relaxed", retain="1 second",
                                     args_mismatch="replay"), [])

    def test_a_table_as_made_by_default_is_quiet(self):
        self.made("local_failure=keep, stale_after='10 minutes'")
        self.assertEqual(self.warned(), [])
        self.conn.execute("DROP TABLE calls")
        self.assertEqual(self.warned(), [])                 # made by Calls()
        self.assertEqual(self.warned(), [])

    def test_as_an_error(self):
        self.made("durability=relaxed")
        with warnings.catch_warnings():
            warnings.simplefilter("error", idem.RelaxedTableWarning)
            with self.assertRaisesRegex(idem.RelaxedTableWarning, "durability=relaxed"):
                idem.Calls(self.conn)

    def test_hidden_by_a_comment_still_warned(self):
        self.conn.execute(HIDDEN % "calls")
        self.assertEqual(len(self.warned()), 1)
        self.assertIn("retain='1 second'", self.warned()[0])


if __name__ == "__main__":
    unittest.main()
