# SPDX-License-Identifier: MIT
"""The tests of a framework example (unittest; pytest runs them too):

    Test = suite.stories(__file__)        (an example's test_shop.py)

Each test drives the example (shop.py) with its framework's test model
(model.py) playing a Script of turns, through the framework's own loop, and
counts the effects in SQLite (order rows) and at the HTTP target (requests
that arrived, per Idempotency-Key: test/examples/python/target_server.py).
The runs that are killed, or that run two at once, are processes of their
own (harness/child.py).  The same seven stories as the Node examples'
(bindings/node/examples/harness/suite.js).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "test", "examples", "python"))

from harness.script import converse, load, parsed       # noqa: E402
from target_server import Target                # noqa: E402

CHILD = os.path.join(HERE, "child.py")
# idem's own words (doc/contract.md section 5), the seeds' sentences.
PENDING = r"^the call is in progress, or its process was interrupted; it is not executed again$"
UNKNOWN = (r"^the request may already have reached the target system; the target's"
           r" records decide the outcome; it is not retried\.")


def call(name, **args):
    return {"name": name, "args": args}


class Run:
    """A run in a process of its own: its JSON events, until(pred), exit."""

    def __init__(self, env):
        self.proc = subprocess.Popen(
            [sys.executable, CHILD, env.pop("EXAMPLE")], env={**os.environ, **env},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        self.events = []
        self.cond = threading.Condition()
        self.closed = False
        self.err = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.err.append(self.proc.stderr.read()),
                         daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.events.append(json.loads(line))
                self.cond.notify_all()
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def until(self, pred, timeout=60):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for e in self.events:
                    if pred(e):
                        return e
                if self.closed or time.monotonic() > deadline:
                    self.proc.wait(5)
                    raise AssertionError("the run ended without the event awaited"
                                         " (exit %s); stderr: %s" % (
                                             self.proc.returncode, "".join(self.err)))
                self.cond.wait(0.5)

    def go(self):
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        return self.proc.wait(10)


class Stories(unittest.TestCase):
    example = None                      # the example's directory

    # What the model was handed: one shape on every arrival, in every
    # framework (as the Node package's agentTool): a done call
    # {"status": "done", "idempotent", "key", "id", "result"}, idempotent
    # False for the arrival that ran the tool and True for a repeat; the
    # others {"status", "idempotent", "key", "message"}.
    DONE = ["status", "idempotent", "key", "id", "result"]
    OTHER = ["status", "idempotent", "key", "message"]

    def ran(self, out, key=None, id_=None):
        """The result of the arrival that ran the tool."""
        self.assertEqual(list(out), self.DONE, out)
        self.assertEqual((out["status"], out["idempotent"]), ("done", False), out)
        if key is not None:
            self.assertEqual((out["key"], out["id"]), (key, id_), out)
        return out["result"]

    def replayed(self, out, key, id_=None):
        """The result handed to a repeat: the first arrival's."""
        self.assertEqual(list(out), self.DONE, out)
        self.assertEqual((out["status"], out["idempotent"], out["key"], out["id"]),
                         ("done", True, key, id_), out)
        return out["result"]

    def answer(self, out):
        """(status, marked as a replay, key, message) of a call not done."""
        self.assertEqual(list(out), self.OTHER, out)
        return out["status"], out["idempotent"], out["key"], out["message"]

    def same_message(self, first, again):
        """The tool message of a repeat is the first arrival's, but for its
        mark: the same members in the same order (the same text, where the
        framework hands the model text), idempotent false, then true."""
        a, b = parsed(first), parsed(again)
        self.assertEqual(list(a), list(b), (first, again))
        self.assertEqual((a["idempotent"], b["idempotent"]), (False, True), (first, again))
        self.assertEqual({**b, "idempotent": False}, a)
        if isinstance(first, str):
            self.assertEqual(again, first.replace('"idempotent": false', '"idempotent": true', 1))
        else:
            self.assertIsInstance(first, dict)

    @classmethod
    def setUpClass(cls):
        cls.shop, cls.model = load(cls.example)
        cls.target = Target().start()
        cls.url = cls.target.url + "/charges"
        cls.tmp = tempfile.mkdtemp(prefix="idem-%s-" % os.path.basename(cls.example))
        cls.runs = []

    @classmethod
    def tearDownClass(cls):
        for r in cls.runs:
            r.kill()
        cls.target.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    # ---- helpers ------------------------------------------------------------

    def fresh(self, name):
        """A database of its own for each test, created before any run."""
        file = os.path.join(self.tmp, name + ".db")
        self.shop.open(file).close()
        return file

    def run_(self, file, turns, **opts):
        opts.setdefault("user", "alice")
        return converse(self.shop, self.model, file, turns, target_url=self.url, **opts)

    def query(self, file, fn):
        s = self.shop.open(file)
        try:
            return fn(s)
        finally:
            s.close()

    def orders(self, file):
        return self.query(file, lambda s: s.db.execute("SELECT count(*) FROM orders").fetchone()[0])

    def key(self, file, user, conv, tool, args):
        return self.query(file, lambda s: s.calls.key(user, conv, tool, args))

    def status(self, file, key):
        return self.query(file, lambda s: s.db.execute(
            "SELECT status FROM calls WHERE key = ? AND member = 0", (key,)).fetchone()[0])

    def arrived(self, key):
        return self.target.arrivals['"%s"' % key]

    def total(self):
        return sum(self.target.arrivals.values())

    def handed(self, turns, i, name, raw=False):
        """What the model was handed at turn i for the tool: its JSON value,
        or (raw) the tool message as the framework carried it."""
        seen = turns[i].seen if hasattr(turns[i], "seen") else turns[i]["seen"]
        for r in seen:
            if r["name"] == name:
                return r["raw"] if raw else r["output"]
        self.fail("turn %d: the model was handed no result of %s: %r" % (i, name, seen))

    def start(self, **env):
        r = Run({"EXAMPLE": self.example, "TARGET_URL": self.url, "IDEM_USER": "alice", **env})
        self.runs.append(r)
        return r

    # ---- the stories ----------------------------------------------------------

    def test_opened_with_idem_connect(self):
        """the example opens its database with idem.connect(), so it runs
        from any python3: over APSW where this Python's sqlite3 cannot load
        extensions, the idem of the installed package"""
        import sqlite3
        import idem
        s = self.shop.open(self.fresh("connect"))
        try:
            can_load = hasattr(sqlite3.Connection, "enable_load_extension")
            self.assertIs(type(s.db), sqlite3.Connection if can_load else idem.ApswConnection)
            self.assertEqual(s.db.execute("SELECT idem_version()").fetchone()[0],
                             idem.connect(":memory:").execute("SELECT idem_version()").fetchone()[0])
        finally:
            s.close()

    def test_repeat_in_a_later_step(self):
        """a call repeated in a later step takes effect once; the repeat is
        handed the first result, in the same shape, marked idempotent"""
        file = self.fresh("repeat")
        before = self.total()
        turns = self.run_(file, [
            [call("place_order", sku="A0001", qty=2)],
            [call("place_order", qty=2, sku="A0001")],
            [call("charge_card", cents=1990)],
            [call("charge_card", cents=1990)],
            "Ordered and paid.",
        ], conversation="conv-repeat")
        okey = self.key(file, "alice", "conv-repeat", "place_order", {"sku": "A0001", "qty": 2})
        ckey = self.key(file, "alice", "conv-repeat", "charge_card", {"cents": 1990})
        order = self.ran(self.handed(turns, 1, "place_order"), okey, 1)
        charge = self.ran(self.handed(turns, 3, "charge_card"), ckey)
        self.assertEqual(order, {"order": 1, "sku": "A0001", "qty": 2})
        self.assertEqual(self.replayed(self.handed(turns, 2, "place_order"), okey, 1), order)
        self.assertEqual((sorted(charge), charge["cents"]), (["cents", "charge"], 1990))
        self.assertEqual(self.replayed(self.handed(turns, 4, "charge_card"), ckey), charge)
        # One shape: the tool message of each repeat is the first one's, but
        # for the mark, as the framework handed it to the model.
        for first, again, name in ((1, 2, "place_order"), (3, 4, "charge_card")):
            self.same_message(self.handed(turns, first, name, raw=True),
                              self.handed(turns, again, name, raw=True))
        # The model gave the repeat a new tool-call id: the key does not hold it.
        self.assertNotEqual(turns[0].calls[0]["id"], turns[1].calls[0]["id"])
        self.assertNotEqual(turns[2].calls[0]["id"], turns[3].calls[0]["id"])
        self.assertEqual(len(turns), 5)
        self.assertEqual(self.orders(file), 1)
        self.assertEqual((self.total() - before, self.arrived(ckey)), (1, 1))

    def test_other_conversation_or_user(self):
        """the key is the user, the conversation, the tool and the arguments:
        another conversation or user orders again"""
        file = self.fresh("parties")
        script = [[call("place_order", sku="B0001", qty=1)], "Ordered."]
        got = [self.handed(self.run_(file, script, user=u, conversation=c), 1, "place_order")
               for u, c in (("alice", "conv-1"), ("alice", "conv-2"), ("bob", "conv-1"),
                            ("alice", "conv-1"))]
        self.assertEqual([self.ran(g)["order"] for g in got[:3]], [1, 2, 3])
        key = self.key(file, "alice", "conv-1", "place_order", {"sku": "B0001", "qty": 1})
        self.assertEqual(self.replayed(got[3], key, 1), self.ran(got[0]))
        self.assertEqual(self.orders(file), 3)

    def test_killed_after_the_effects(self):
        """a run killed after its tools' effects, before the model's next
        turn, and run again: one effect each; the replays are handed to the
        model"""
        file = self.fresh("killed")
        script = [[call("place_order", sku="K0001", qty=3), call("charge_card", cents=700)], "Done."]
        ckey = self.key(file, "alice", "conv-killed", "charge_card", {"cents": 700})
        okey = self.key(file, "alice", "conv-killed", "place_order", {"sku": "K0001", "qty": 3})
        r = self.start(IDEM_DB=file, IDEM_CONV="conv-killed", SCRIPT=json.dumps(script), HOLD_AT="1")
        r.until(lambda e: e["event"] == "held")
        # Both effects happened and were recorded; the model has not seen them.
        self.assertEqual((self.orders(file), self.arrived(ckey)), (1, 1))
        self.assertEqual((self.status(file, okey), self.status(file, ckey)), ("done", "done"))
        self.assertEqual(r.kill(), -signal.SIGKILL)
        turns = self.run_(file, script, conversation="conv-killed")
        want = dict(self.query(file, lambda s: [(k, json.loads(v)) for k, v in s.db.execute(
            "SELECT key, result FROM calls WHERE member = 0")]))
        self.assertEqual(self.replayed(self.handed(turns, 1, "place_order"), okey, 1), want[okey])
        self.assertEqual(self.replayed(self.handed(turns, 1, "charge_card"), ckey), want[ckey])
        self.assertEqual(want[okey], {"order": 1, "sku": "K0001", "qty": 3})
        self.assertEqual((self.orders(file), self.arrived(ckey)), (1, 1))

    def test_killed_as_the_request_arrives(self):
        """a run killed after its request arrived, before its record: the run
        again is told that the call is pending and sends nothing;
        reconciled, it is replayed"""
        file = self.fresh("arrived")
        script = [[call("charge_card", cents=800)], "Done."]
        ckey = self.key(file, "alice", "conv-arrived", "charge_card", {"cents": 800})
        # The target holds its answer; the run is killed as soon as its
        # request has arrived (and made its charge).
        self.target.delay = 5
        try:
            r = self.start(IDEM_DB=file, IDEM_CONV="conv-arrived", SCRIPT=json.dumps(script))
            deadline = time.monotonic() + 60
            while self.arrived(ckey) == 0 and r.proc.poll() is None \
                    and time.monotonic() < deadline:
                time.sleep(0.005)
            self.assertEqual(r.kill(), -signal.SIGKILL)
        finally:
            self.target.delay = 0
        self.assertEqual((self.arrived(ckey), self.status(file, ckey)), (1, "pending"))
        turns = self.run_(file, script, conversation="conv-arrived")
        status, marked, key, message = self.answer(self.handed(turns, 1, "charge_card"))
        self.assertEqual((status, marked, key), ("pending", True, ckey))
        self.assertRegex(message, PENDING)
        self.assertEqual(self.arrived(ckey), 1)
        # An operator reads the target's records and settles the call.
        charge = {"charge": "ch_from_the_target", "cents": 800}
        self.query(file, lambda s: s.calls.reconcile(ckey, "arrived", result=charge))
        again = self.run_(file, script, conversation="conv-arrived")
        self.assertEqual(self.replayed(self.handed(again, 1, "charge_card"), ckey), charge)
        self.assertEqual(self.arrived(ckey), 1)

    def twice(self, name, **env):
        """Two processes run one conversation at once, started together."""
        file = self.fresh(name)
        script = [[call("place_order", sku="T0001", qty=1), call("charge_card", cents=900)], "Done."]
        ckey = self.key(file, "alice", "conv-" + name, "charge_card", {"cents": 900})
        runs = [self.start(IDEM_DB=file, IDEM_CONV="conv-" + name, SCRIPT=json.dumps(script),
                           WAIT_FOR_GO="1", **env) for _ in range(2)]
        for r in runs:
            r.until(lambda e: e["event"] == "ready")
        self.target.delay = 0.4
        try:
            for r in runs:
                r.go()
            ends = [r.until(lambda e: e["event"] == "end") for r in runs]
        finally:
            self.target.delay = 0
        self.assertEqual((self.orders(file), self.arrived(ckey)), (1, 1))
        # For each tool: one run got the tool's result, the other an answer
        # marked idempotent.
        out = []
        for tool in ("place_order", "charge_card"):
            answers = [self.handed(e["turns"], 1, tool) for e in ends]
            marked = [a for a in answers if self.is_marked(a)]
            self.assertEqual(len(marked), 1, "%s: %r" % (tool, answers))
            first = [a for a in answers if not self.is_marked(a)][0]
            out.append((self.ran(first), marked[0]))
        return out

    def is_marked(self, out):
        return isinstance(out, dict) and out.get("idempotent") is True

    def test_two_runs_at_once(self):
        """two runs of one conversation at once: one effect each; the other
        run gets the result, or is told that the call is in progress"""
        (order, o2), (charge, c2) = self.twice("twice")
        self.assertEqual(o2["status"], "done")     # a local call is never seen pending
        self.assertEqual(o2["result"], order)
        if c2["status"] == "pending":
            self.assertRegex(self.answer(c2)[3], PENDING)
        else:
            self.assertEqual((c2["status"], c2["result"]), ("done", charge))

    def test_two_runs_at_once_waiting(self):
        """two runs of one conversation at once, the tools waiting up to 5 s
        for a call in progress: the other run gets the result"""
        (order, o2), (charge, c2) = self.twice("twice-wait", WAIT="5")
        self.assertEqual((o2["status"], o2["result"]), ("done", order))
        self.assertEqual((c2["status"], c2["result"]), ("done", charge))

    def test_target_times_out(self):
        """an external call whose target times out is unknown: the model is
        handed idem's note, and it is never sent again"""
        file = self.fresh("timeout")
        ckey = self.key(file, "alice", "conv-timeout", "charge_card", {"cents": 990})
        self.target.delay = 30              # it answers long after the charge gave up
        try:
            turns = self.run_(file, [
                [call("charge_card", cents=990)],
                [call("charge_card", cents=990)],
                "I could not confirm the payment.",
            ], conversation="conv-timeout", timeout=1.0)
        finally:
            self.target.delay = 0
        first = self.answer(self.handed(turns, 1, "charge_card"))
        again = self.answer(self.handed(turns, 2, "charge_card"))
        self.assertEqual(first[:3], ("unknown", False, ckey))
        self.assertEqual(again[:3], ("unknown", True, ckey))
        self.assertRegex(first[3], UNKNOWN)
        self.assertEqual(again[3], first[3])
        self.assertEqual((self.arrived(ckey), self.status(file, ckey)), (1, "unknown"))


def stories(test_file):
    """The stories for the example beside test_file, as a TestCase."""
    return type("Test", (Stories,), {"example": os.path.dirname(os.path.abspath(test_file))})
