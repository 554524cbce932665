# SPDX-License-Identifier: MIT
"""python -m idem: the operator's desk (idem/__main__.py over idem/ops.py).

Every refusal is compared with what the table itself says to the same
UPDATE in SQL: the desk re-words nothing.

Run with the package installed:  python -m unittest discover -s bindings/python/tests -v
"""
import contextlib
import functools
import importlib.util
import io
import json
import os
import re
import sqlite3
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

import idem
import test_idem
from idem.__main__ import main
from test_idem import Base


class Desk(Base):
    """A table with one call of each kind an operator meets: done, pending
    and unknown, with stale_after = 1 second.  aged(): the same table made
    over 1.1 s ago (copied from one made once), where the pending call is
    stale and every call is older than '1 second'."""

    _aged = None                    # the file made once, and its directory

    def setUp(self):
        super().setUp()
        self.fill()

    def aged(self):
        if Desk._aged is None:
            tmp = tempfile.TemporaryDirectory(prefix="idem-cli-")
            # The driver under test where the tests have one (sqlite3 here).
            opener = getattr(test_idem, "plain_connect", sqlite3.connect)
            conn = opener(os.path.join(tmp.name, "app.db"), isolation_level=None)
            self.fill(conn)
            conn.close()
            time.sleep(1.1)
            Desk._aged = tmp
        self.conn.close()
        shutil.copyfile(os.path.join(Desk._aged.name, "app.db"), self.path)
        self.conn = self.connect()
        self.fill(self.conn, claim=False)

    def fill(self, conn=None, claim=True):
        self.conn = conn or self.conn
        self.calls = idem.Calls(self.conn, stale_after="1 second")

        @self.calls.tool(kind="local")
        def checkout(db, sku):
            return idem.Result({"order": 1}, id=1)
        self.checkout = checkout
        self.done = checkout.key("alice", "conv-7", sku="A0001")
        self.pending = self.calls.key("bob", "conv-2", "send_mail", {"to": "carol"})
        self.unknown = self.calls.key("carol", "conv-3", "charge_card", {"cents": 4200})
        if not claim:
            return
        checkout("alice", "conv-7", sku="A0001")
        self.claim("bob", "conv-2", "send_mail", '{"to":"carol"}')
        self.claim("carol", "conv-3", "charge_card", '{"cents":4200}')
        self.conn.execute("UPDATE calls SET status = 'failed', note = 'timeout after 30 s'"
                          " WHERE key = ? AND member = 0", (self.unknown,))

    def claim(self, who, conv, tool, args, kind="external"):
        self.conn.execute("INSERT INTO calls(who, conv, tool, args, kind)"
                          " VALUES(?, ?, ?, ?, ?)", (who, conv, tool, args, kind))
        return self.calls.key(who, conv, tool, args)

    def run_cli(self, *argv):
        """main() in this process: (exit status, stdout, stderr)."""
        out, err = io.StringIO(), io.StringIO()
        rc = main([self.path] + list(argv), out, err)
        return rc, out.getvalue(), err.getvalue()

    def json_cli(self, *argv):
        rc, out, err = self.run_cli("--json", *argv)
        self.assertEqual((rc, err), (0, ""), out)
        return json.loads(out)

    def refusal(self, sql, binds=()):
        """The table's own message for an UPDATE it refuses."""
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.conn.execute(sql, binds)
        return str(cm.exception)

    def status(self, key):
        row = self.conn.execute("SELECT status FROM calls WHERE key = ? AND member = 0",
                                (key,)).fetchone()
        return row and row[0]


class ListTest(Desk):
    def test_unknown_first_then_pending_then_done(self):
        rc, out, err = self.run_cli("list")
        self.assertEqual((rc, err), (0, ""))
        lines = out.splitlines()
        self.assertEqual(lines[0].split(), ["STATUS", "AGE", "TOOL", "WHO", "CONV",
                                            "KEY", "NOTE"])
        self.assertEqual([l.split()[0] for l in lines[1:]],
                         ["unknown", "pending", "done"])
        self.assertIn(self.unknown, lines[1])
        self.assertIn("< 1 min", lines[1])
        self.assertIn("charge_card", lines[1])
        # A long note shows its end: what the tool reported.
        self.assertRegex(lines[1], r"  \.\.\.[^.]*\(reported: timeout after 30 s\)$")

    def test_stale_before_pending(self):
        self.aged()
        fresh = self.claim("dave", "conv-4", "deploy", '{"app":"web"}')
        calls = self.json_cli("list")["calls"]
        self.assertEqual([(c["key"], c["status"], c["stale"]) for c in calls], [
            (self.unknown, "unknown", False), (self.pending, "pending", True),
            (fresh, "pending", False), (self.done, "done", False)])
        rc, out, _ = self.run_cli("list", "--stale")
        self.assertEqual([l.split()[:2] for l in out.splitlines()[1:]],
                         [["pending", "(stale)"]])
        self.assertEqual([c["key"] for c in self.json_cli("list", "--stale")["calls"]],
                         [self.pending])

    def test_filters(self):
        one = self.json_cli("list", "--status", "unknown")
        self.assertEqual([c["key"] for c in one["calls"]], [self.unknown])
        self.assertEqual(one["calls"][0]["note"][-30:], "(reported: timeout after 30 s)")
        self.assertEqual([c["key"] for c in self.json_cli("list", "--tool", "checkout")
                          ["calls"]], [self.done])
        self.assertEqual(self.json_cli("list", "--older-than", "1 hour")["calls"], [])
        self.assertEqual(self.json_cli("list", "--older-than", "1 second")["calls"], [])
        self.aged()
        self.assertEqual(len(self.json_cli("list", "--older-than", "1 second")["calls"]), 3)
        rc, out, _ = self.run_cli("list", "--tool", "nothing")
        self.assertEqual(out, "no calls that match in calls\n")

    def test_members_are_not_calls(self):
        # A compound call: its members are rows, not calls.
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("INSERT INTO calls(who, conv, tool, args) VALUES('erin', 'c', 'split', '{}')")
        key = self.calls.key("erin", "c", "split", {})
        for m in (1, 2):
            self.conn.execute("INSERT INTO calls(key, member, id, result) VALUES(?, ?, ?, '{}')",
                              (key, m, m))
        self.conn.execute("UPDATE calls SET status = 'done' WHERE key = ? AND member = 0", (key,))
        self.conn.execute("COMMIT")
        listed = self.json_cli("list")
        self.assertEqual((listed["total"], len(listed["calls"])), (4, 4))
        self.assertEqual(self.json_cli("stats")["status"]["done"], 2)
        shown = self.json_cli("show", key)
        self.assertEqual([m["member"] for m in shown["members"]], [1, 2])
        rc, out, _ = self.run_cli("show", key)
        self.assertIn("members\n  1  id 1  result {}\n  2  id 2  result {}\n", out)

    def test_blobs(self):
        # who, conv and id may be blobs: shown as x'<hex>', in JSON too.
        self.conn.execute("INSERT INTO calls(who, conv, tool, args, kind)"
                          " VALUES(x'00ff', x'01', 'blob', '{}', 'external')")
        c = [c for c in self.json_cli("list")["calls"] if c["tool"] == "blob"][0]
        self.assertEqual((c["who"], c["conv"]), ("x'00ff'", "x'01'"))
        self.assertEqual(self.json_cli("show", c["key"])["who"], "x'00ff'")
        rc, out, _ = self.run_cli("list", "--tool", "blob")
        self.assertRegex(out.splitlines()[1], r"  blob  x'00ff'  x'01' ")

    def test_controls_shown_not_acted_on(self):
        # who, conv, tool and a note (which quotes a target's answer) come
        # from callers and targets: a control in them reached the
        # operator's terminal raw (clear the screen, retitle the window,
        # overwrite the line with another status).  Escaped in text; JSON
        # keeps the value.
        who, tool = "\x1b[2Jmallory\r", "t\u202eool"
        note = "timeout \x1b]0;pwned\x07\rdone  \x9b31m"
        self.conn.execute("INSERT INTO calls(who, conv, tool, args, kind)"
                          " VALUES(?, 'c\x08', ?, '{}', 'external')", (who, tool))
        key = self.calls.key(who, "c\x08", tool, {})
        self.conn.execute("UPDATE calls SET status = 'failed', note = ? WHERE key = ?"
                          " AND member = 0", (note, key))
        shown = []
        for argv in (("list",), ("show", key), ("stats",),
                     ("reconcile", key, "arrived", "--result", '"\\u001b[2J"')):
            rc, out, err = self.run_cli(*argv)
            self.assertEqual((rc, err), (0, ""), argv)
            self.assertIsNone(re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]", out),
                              (argv, out))
            shown.append(out)
        self.assertIn("  \\x1b[2Jmallory  ", shown[0])    # its \\r white space there
        self.assertIn("\nwho         \\x1b[2Jmallory\\x0d\n", shown[1])
        self.assertIn("(reported: timeout \\x1b]0;pwned\\x07\\x0ddone  \\x9b31m)\n", shown[1])
        self.assertIn("t\\u202eool", shown[2])
        self.assertTrue(shown[3].endswith(": done, result \\x1b[2J\n"), shown[3])
        self.assertEqual(self.json_cli("show", key)["who"], who)

    def test_limit(self):
        rc, out, _ = self.run_cli("list", "--limit", "1")
        self.assertEqual(len(out.splitlines()), 3)
        self.assertEqual(out.splitlines()[-1], "... and 2 more (--limit)")
        self.assertEqual(self.json_cli("list", "--limit", "2")["total"], 3)
        # --limit 0 said "no calls in calls" with three there; a negative
        # one listed them all: a usage error, as a bad --status is.
        for n in ("0", "-1", "x"):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as cm:
                self.run_cli("list", "--limit", n)
            self.assertEqual(cm.exception.code, 2)
            self.assertIn("argument --limit: %r is not a whole number of calls, 1 or more"
                          % n, err.getvalue())
        # Beyond SQLite's 64-bit integers: every call (it was a traceback,
        # "datatype mismatch").
        self.assertEqual(len(self.json_cli("list", "--limit", "9" * 25)["calls"]), 3)


class NotTextTest(Desk):
    """An argument whose bytes are not UTF-8 (Python's argv holds them as
    lone surrogates) is a usage error that names it: it was a traceback
    (UnicodeEncodeError) or a message that named nothing.  The database's
    file name may be any bytes the file system allows."""

    def test_arguments(self):
        bad = "a\udcffb"
        for argv, name in ((["list", "--tool", bad], "--tool"),
                           (["list", "--older-than", bad], "--older-than"),
                           (["show", bad], "KEY"),
                           (["reconcile", self.unknown, "arrived", "--note", bad], "--note"),
                           (["reconcile", self.unknown, "arrived", "--result", '"%s"' % bad], "--result"),
                           (["reconcile", self.unknown, bad], "VERDICT"),
                           (["--table", bad, "stats"], "--table")):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as cm:
                self.run_cli(*argv)
            self.assertEqual(cm.exception.code, 2, argv)
            value = next(v for v in argv if not idem._is_text(v))
            self.assertIn("argument %s: %r holds bytes that are not UTF-8, which is not"
                          " text" % (name, value), err.getvalue())
        self.assertEqual(self.count("SELECT status FROM calls WHERE key = '%s'" % self.unknown),
                         "unknown")

    def test_stored_text_that_is_not_utf8(self):
        # SQL may store such text (CAST(x'..' AS TEXT)): the desk shows its
        # bytes as escapes, on either driver: it was a traceback ("Could not
        # decode to UTF-8"; on APSW, which has no text_factory, a
        # UnicodeDecodeError).  Each driver this Python has (the tests run
        # in a venv of each: Debian's python3 with sqlite3, a pyenv one
        # with APSW).
        self.conn.execute("INSERT INTO calls(who, conv, tool, args, kind) VALUES("
                          "CAST(x'61ff62' AS TEXT), 'c\x01', CAST(x'73656e64fe' AS TEXT),"
                          " '{}', 'external')")
        key = self.count("SELECT key FROM calls WHERE who = CAST(x'61ff62' AS TEXT)")
        self.conn.execute("UPDATE calls SET note = CAST(x'6e6f7465ff' AS TEXT)"
                          " WHERE key = ? AND member = 0", (key,))
        drivers = [d for d, have in (("sqlite3", hasattr(sqlite3.Connection, "enable_load_extension")),
                                     ("apsw", importlib.util.find_spec("apsw") is not None)) if have]
        self.assertTrue(drivers)
        opener = idem.connect
        for driver in drivers:
            with self.subTest(driver), mock.patch.object(
                    idem, "connect", functools.partial(opener, driver=driver)):
                rc, out, err = self.run_cli("list")
                self.assertEqual((rc, err), (0, ""))
                self.assertIn("a\\xffb", out)
                self.assertIn("send\\xfe", out)
                self.assertIn("note\\xff", out)
                listed = {c["key"]: c for c in self.json_cli("list")["calls"]}
                self.assertEqual((listed[key]["who"], listed[key]["conv"], listed[key]["tool"]),
                                 ("a\\xffb", "c\x01", "send\\xfe"))
                rc, out, err = self.run_cli("show", key)
                self.assertEqual((rc, err), (0, ""))
                self.assertIn("a\\xffb", out)
                self.assertIn("note\\xff", out)
                self.assertIn("c\\x01", out)
                self.assertIn("send\\xfe", self.json_cli("stats")["tool"])

    def test_a_file_name_of_any_bytes(self):
        if sys.platform == "win32" or sys.getfilesystemencoding() != "utf-8":
            self.skipTest("a file name of bytes that are not UTF-8")
        self.conn.commit() if self.conn.in_transaction else None
        other = os.path.join(os.path.dirname(self.path), "\udcff.db")
        shutil.copyfile(self.path, other)
        out, err = io.StringIO(), io.StringIO()
        self.assertEqual(main([other, "--json", "stats"], out, err), 0, err.getvalue())
        self.assertEqual(json.loads(out.getvalue())["total"], 3)


class ShowTest(Desk):
    def test_unknown_call(self):
        rc, out, err = self.run_cli("show", self.unknown)
        self.assertEqual((rc, err), (0, ""))
        fields = dict(l.split(None, 1) for l in out.split("\n\n")[0].splitlines()
                      if len(l.split(None, 1)) == 2)
        self.assertEqual(fields["status"], "unknown")
        self.assertEqual(fields["tool"], "charge_card (external)")
        self.assertEqual(fields["args"], '{"cents":4200}')
        note = self.conn.execute("SELECT note FROM calls WHERE key = ?",
                                 (self.unknown,)).fetchone()[0]
        self.assertEqual(fields["note"], note)        # the table's note, whole
        self.assertEqual(json.loads(fields["reply"]), self.calls.reply(self.unknown))
        self.assertEqual(fields["header"], 'Idempotency-Key: "%s"' % self.unknown)
        self.assertIn("reconcile %s arrived --result JSON" % self.unknown, out)
        self.assertEqual((fields["sends"], fields["honours_key"]), ("1", "0"))
        self.assertNotIn("resend_at", fields)        # never resent: empty

    def test_done_call_json(self):
        c = self.json_cli("show", self.done)
        self.assertEqual((c["status"], c["id"], c["result"], c["kind"]),
                         ("done", 1, {"order": 1}, "local"))
        self.assertEqual((c["reply"]["id"], c["reply"]["idempotent"]), (1, True))
        self.assertEqual(c["members"], [])

    def test_no_such_call(self):
        rc, out, err = self.run_cli("show", "0" * 32)
        self.assertEqual((rc, out), (1, ""))
        self.assertEqual(err, "idem: no call %s in calls (never claimed, released,"
                              " or purged)\n" % ("0" * 32))
        rc, out, err = self.run_cli("--json", "show", "0" * 32)
        self.assertEqual(json.loads(out), {"error": err.strip()})


class ReconcileTest(Desk):
    def test_arrived_then_a_duplicate_replays(self):
        rc, out, err = self.run_cli("reconcile", self.unknown, "arrived",
                                    "--result", '{"charge": "ch_81"}', "--id", "ch_81")
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(out, '%s: done, result {"charge":"ch_81"}\n' % self.unknown)

        @self.calls.tool(kind="external")
        def charge_card(idempotency_key, cents):
            raise AssertionError("a reconciled call must not run again")
        again = charge_card.run("carol", "conv-3", cents=4200)
        self.assertEqual(again, idem.Outcome({"charge": "ch_81"}, "ch_81", self.unknown, True))

    def test_integer_id_and_note(self):
        c = self.json_cli("reconcile", self.unknown, "arrived", "--id", "81",
                          "--note", "seen in the target's dashboard")["call"]
        self.assertEqual((c["status"], c["id"], c["note"]),
                         ("done", 81, "seen in the target's dashboard"))

    def test_not_arrived_releases(self):
        rc, out, err = self.run_cli("reconcile", self.unknown, "not_arrived")
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("released (not_arrived)", out)
        self.assertIsNone(self.status(self.unknown))

    def test_refusals_are_the_tables_words(self):
        cases = [
            (self.unknown, "not_sent"),        # its request may have left
            (self.pending, "not_arrived"),     # pending, not stale
            (self.done, "arrived"),            # decided is final
        ]
        for key, verdict in cases:
            with self.subTest(verdict=verdict):
                said = self.refusal("UPDATE calls SET reconcile = ? WHERE key = ?"
                                    " AND member = 0", (verdict, key))
                before = self.conn.execute("SELECT * FROM calls WHERE key = ?",
                                           (key,)).fetchall()
                rc, out, err = self.run_cli("reconcile", key, verdict)
                self.assertEqual((rc, out, err), (1, "", said + "\n"))
                self.assertEqual(self.conn.execute("SELECT * FROM calls WHERE key = ?",
                                                   (key,)).fetchall(), before)
                rc, out, err = self.run_cli("--json", "reconcile", key, verdict)
                self.assertEqual((rc, json.loads(out)), (1, {"error": said}))

    def test_not_sent_releases_a_pending_call(self):
        rc, out, err = self.run_cli("reconcile", self.pending, "not_sent")
        self.assertEqual((rc, err), (0, ""))
        self.assertIsNone(self.status(self.pending))

    def test_stale_pending_not_arrived(self):
        self.aged()
        rc, out, err = self.run_cli("reconcile", self.pending, "not_arrived")
        self.assertEqual((rc, err), (0, ""))
        self.assertIsNone(self.status(self.pending))

    def test_bad_input(self):
        rc, out, err = self.run_cli("reconcile", self.unknown, "maybe")
        self.assertEqual((rc, err), (1, "idem: calls: reconcile must be 'arrived' (the"
                         " target's records show the request: the call becomes done),"
                         " 'not_arrived' (they show it never came: the claim is released),"
                         " 'not_sent' (a pending call whose request never left: the claim"
                         " is released) or 'resend' (a call whose target honours the key:"
                         " sent again, with the same key, by a new owner)\n"))   # the table's
        rc, out, err = self.run_cli("reconcile", self.unknown, "arrived", "--result", "{x")
        self.assertEqual(rc, 1)
        self.assertTrue(err.startswith("idem: --result is not JSON: "), err)
        # NaN and Infinity are not JSON (Python's json reads them; 1e999
        # is Infinity there): the flag is named, not calls.reconcile.  JSON
        # is what idem_canonical() takes (ops.Desk.typed_result, which the
        # Datasette page shares): a duplicate member name, which json.loads
        # would keep the last of, is refused too.
        for text, why in (("NaN", "expected a value at byte 1"),
                          ("[-Infinity]", "invalid number at byte 2"),
                          ('{"a": 1e999}', "number overflows a double at byte 7"),
                          ('{"a": 1, "a": 2}', 'duplicate member name "a" at byte 10'),
                          ('"\\ud800"', "lone surrogate \\ud800 at byte 2")):
            rc, out, err = self.run_cli("reconcile", self.unknown, "arrived", "--result", text)
            self.assertEqual((rc, err), (1, "idem: --result is not JSON: %s (in %r)\n"
                                         % (why, text)))
        self.assertEqual(self.status(self.unknown), "unknown")
        rc, out, err = self.run_cli("reconcile", "0" * 32, "arrived")
        self.assertEqual((rc, err), (1, "idem: no call %s is claimed in \"calls\""
                         " (never claimed, released, or purged)\n" % ("0" * 32)))
        rc, out, err = self.run_cli("reconcile", self.unknown, "not_arrived",
                                    "--result", "{}")
        self.assertEqual(rc, 1)
        self.assertIn("reconcile = 'not_arrived' and 'not_sent' release the call (its rows"
                      " go) and keep nothing", err)    # the table's words
        self.assertEqual(self.status(self.unknown), "unknown")


class PurgeStatsTest(Desk):
    def test_purge_keeps_open_calls(self):
        self.aged()
        dry = self.json_cli("purge", "--older-than", "1 second", "--dry-run")
        self.assertEqual((dry["purged"], dry["kept"], dry["dry_run"]), (1, 2, True))
        self.assertEqual(self.status(self.done), "done")
        rc, out, err = self.run_cli("purge", "--older-than", "1 second")
        self.assertEqual((rc, err), (0, ""))
        self.assertRegex(out, r"^purged 1 decided call created before \d{4}-\d\d-\d\d"
                              r" \d\d:\d\d:\d\d\.\d{3} UTC; 2 pending or unknown stay\n$")
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 2)
        self.assertIsNone(self.status(self.done))
        rc, out, err = self.run_cli("purge", "--older-than", "30 days")
        self.assertIn("purged 0 decided calls", out)

    def test_purge_needs_a_duration(self):
        for bad in ("30d", "-1 day", "+1 day", "", "soon"):
            with self.subTest(bad=bad):
                rc, out, err = self.run_cli("purge", "--older-than", bad)
                self.assertEqual(rc, 1)
                self.assertEqual(err, "idem: --older-than %r is not a duration: give a"
                                 " number and a unit, e.g. '30 days', '12 hours',"
                                 " '90 minutes'\n" % bad)
        self.assertEqual(self.count("SELECT count(*) FROM calls"), 3)

    def test_stale_after_as_idem_parsed_it(self):
        # A comment in the CREATE text hides nothing (issue 31 item 7).
        from idem import ops
        for sql, has in (("retain='1 day' /* , stale_after='1 hour' */", False),
                         ("stale_after = '1 hour'", True)):
            self.conn.execute("DROP TABLE IF EXISTS odd")
            self.conn.execute("CREATE VIRTUAL TABLE odd USING idem(%s)" % sql)
            self.assertEqual(ops.Desk(self.conn, "odd").stale_after, has, sql)

    def test_stats(self):
        s = self.json_cli("stats")
        self.assertEqual(s["total"], 3)
        self.assertEqual(s["status"], {"unknown": 1, "pending": 1, "failed": 0, "done": 1})
        self.assertEqual(s["tool"], {"charge_card": {"unknown": 1},
                                     "checkout": {"done": 1}, "send_mail": {"pending": 1}})
        self.assertEqual(s["age"]["< 1 hour"], {"unknown": 1, "pending": 1, "done": 1})
        self.assertEqual(s["age"]["> 7 days"], {})
        self.assertEqual((s["stale"], s["stale_after"]), (0, True))
        self.aged()
        self.assertEqual(self.json_cli("stats")["stale"], 1)
        rc, out, _ = self.run_cli("stats")
        self.assertEqual(out.splitlines()[0],
                         "calls: 3 calls; unknown 1, pending 1, failed 0, done 1")
        self.assertIn("stale (pending past stale_after): 1", out)
        self.assertIn("\ncharge_card  1        0        0       0\n", out)


class CommandLineTest(Desk):
    def cli(self, *argv):
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([sys.executable, "-m", "idem"] + list(argv),
                              capture_output=True, text=True, env=env, timeout=60)

    def test_python_dash_m(self):
        p = self.cli(self.path, "list", "--status", "unknown", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([c["key"] for c in json.loads(p.stdout)["calls"]], [self.unknown])
        p = self.cli(self.path, "reconcile", self.unknown, "not_sent")
        self.assertEqual((p.returncode, p.stdout), (1, ""))
        self.assertIn("reconcile = 'not_sent' cannot release it", p.stderr)

    def test_usage(self):
        p = self.cli()
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage: python -m idem", p.stderr)
        p = self.cli(self.path, "list", "--status", "lost")
        self.assertEqual(p.returncode, 2)
        self.assertIn("invalid choice: 'lost'", p.stderr)

    def test_a_python_that_cannot_load_idem(self):
        # Importing the CLI (and idem.ops) loads nothing: where the
        # extension cannot be loaded, --help still works, a --status is
        # not judged without the statuses, and the command says why it
        # cannot run (exit status 1), never a traceback at import.
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        code = ("import sys, idem; idem.loadable_path = lambda: %r; "
                "import idem.ops, idem.__main__; "
                "sys.exit(idem.__main__.main(sys.argv[1:]))"
                % os.path.join(os.path.dirname(self.path), "no-such-idem.so"))

        def run(*argv):
            return subprocess.run([sys.executable, "-c", code] + list(argv),
                                  capture_output=True, text=True, env=env, timeout=60)
        p = run(self.path, "list", "--help")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertIn("--status STATUS", p.stdout)
        for status in ("unknown", "lost"):
            p = run(self.path, "list", "--status", status)
            self.assertEqual((p.returncode, p.stdout), (1, ""), p.stderr)
            self.assertIn("no-such-idem.so", p.stderr)
            self.assertNotIn("Traceback", p.stderr)
        # With the extension, --help lists its statuses.
        p = self.cli(self.path, "list", "--help")
        self.assertIn("only calls of this status: " + ", ".join(idem.ops.statuses()),
                      " ".join(p.stdout.split()))

    def test_no_database_is_created(self):
        missing = os.path.join(os.path.dirname(self.path), "nope.db")
        rc, out, err = main([missing, "list"], io.StringIO(), io.StringIO()), None, None
        self.assertEqual(rc, 1)
        self.assertFalse(os.path.exists(missing))

    def test_table(self):
        rc, out, err = self.run_cli("--table", "jobs", "list")
        self.assertEqual((rc, err), (1, 'idem: there is no idem table "jobs" in this'
                                        " database (its idem tables: calls)\n"))
        self.conn.execute("CREATE TABLE plain(x)")
        rc, out, err = self.run_cli("--table", "plain", "list")
        self.assertEqual(rc, 1)
        idem.Calls(self.conn, "jobs")
        self.conn.execute("INSERT INTO jobs(who, conv, tool, args, kind)"
                          " VALUES('x', 'y', 'z', '{}', 'external')")
        rc, out, err = self.run_cli("list", "--table", "jobs")       # after the command too
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual([l.split()[0] for l in out.splitlines()[1:]], ["pending"])
        self.assertEqual(self.count("SELECT count(*) FROM sqlite_master WHERE name = 'nope'"), 0)


def tearDownModule():
    if Desk._aged is not None:
        Desk._aged.cleanup()


if __name__ == "__main__":
    unittest.main()
