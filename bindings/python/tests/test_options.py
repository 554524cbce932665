# SPDX-License-Identifier: MIT
"""Table options as the extension reads them (issue 31, items 7 and 8):
Calls() compares the options it is given with those idem parsed
(idem_options()), never with the CREATE text, where a comment hides what
SQLite hands idem; and it warns (idem.RelaxedTableWarning) about a table
made with an option that weakens what a claim promises by default when
it was not told that option.

Run with the package installed:  python -m unittest discover -s bindings/python/tests -v
"""
import time
import unittest
import warnings

import idem
from test_idem import Base

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

    def test_not_an_idem_table(self):
        with self.assertRaisesRegex(ValueError, r'^idem: the table "orders" exists and is'
                                    r" not an idem table \(CREATE TABLE orders"):
            idem.Calls(self.conn, "orders")


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
