# SPDX-License-Identifier: MIT
"""demo.py -- idem in an assistant's tool runner, end to end.

The tools are written with the package sqlite-idem (bindings/python):
@calls.tool keeps the protocol.  Install it, then run the demo from anywhere:

    /usr/bin/python3 -m venv --system-site-packages --without-pip .venv
    .venv/bin/python -m pip install --no-build-isolation --no-index ./bindings/python
    .venv/bin/python test/examples/python/demo.py

It starts its own HTTP targets (target_server.py) on 127.0.0.1, keeps its
databases in a temporary directory, and removes both when it ends.  Every
count it prints is checked; the exit status is 1 if any is off.

    1. The model retries: a local tool and an external tool each run once;
       the retry gets the recorded reply, and nothing is sent twice.
    2. A timeout: the call is recorded as 'unknown' and never retried; the
       target's records decide what happened.
    3. The boundary (doc/contract.md §6): two tool runners with two databases
       do not share claims, so both send.  Only a target that honours the
       Idempotency-Key header turns that into one charge.
"""
import json
import os
import sqlite3
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

import idem                               # pip install ./bindings/python

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True            # no __pycache__ in the work tree
from target_server import Target          # noqa: E402

TIMEOUT = 5.0            # seconds a client waits for the target's answer
SLOW_TIMEOUT = 0.5       # ... and in story 2, where the target is slow

wrong = 0


def check(what, got, want):
    global wrong
    if got == want:
        print(f"   ok     {what}: {got}")
    else:
        wrong += 1
        print(f"   WRONG  {what}: {got} (expected {want})")


def show(label, reply):
    print(f"   {label:<14} {json.dumps(reply, sort_keys=True)}")


def post_charge(url, idempotency_key, cents, timeout):
    """The external write: POST /charges with the Idempotency-Key header."""
    request = urllib.request.Request(
        url + "/charges", method="POST",
        data=json.dumps({"cents": cents}).encode(),
        headers={"Content-Type": "application/json",
                 idem.HEADER: idempotency_key})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = json.load(response)
    return idem.Result(body, id=body["charge"])       # the result, and its id


def card_tool(calls, target, timeout=TIMEOUT):
    """The tool charge_card(cents), on calls, writing to target."""
    @calls.tool(kind="external")
    def charge_card(idempotency_key, cents):
        return post_charge(target.url, idempotency_key, cents, timeout)
    return charge_card


def target_record(target, key):
    """What an operator asks the target: was a charge made with this key?"""
    url = target.url + "/charges?key=" + urllib.parse.quote(f'"{key}"')
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            return json.load(response)
    except urllib.error.HTTPError as e:
        return json.load(e)


def open_calls(path):
    # isolation_level=None: the sqlite3 module opens and commits no
    # transaction of its own; idem writes BEGIN IMMEDIATE and COMMIT.
    conn = sqlite3.connect(path, isolation_level=None, timeout=5.0)
    return idem.Calls(conn)          # loads the extension, creates "calls"


def part1(calls):
    db = calls.conn
    print("\n== 1. The model retries a tool call: replayed, never run twice ==")
    db.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY, sku, qty)")
    db.execute("CREATE TABLE invoices(id INTEGER PRIMARY KEY, order_id)")

    ran = []

    @calls.tool(kind="local")
    def place_order(db, sku, qty):
        ran.append(sku)
        cur = db.execute("INSERT INTO orders(sku, qty) VALUES(?, ?)", (sku, qty))
        return idem.Result({"order": cur.lastrowid}, id=cur.lastrowid)

    print("-- a local tool: claim, write and outcome in one transaction")
    show("first:", place_order("alice", "conv-7", sku="A0001", qty=2))
    # The retry spells the same arguments differently: one key all the same.
    retry = place_order("alice", "conv-7", qty=2.0, sku="A0001")
    show("retry:", retry)
    show("its reply:", calls.reply(place_order.key("alice", "conv-7", sku="A0001", qty=2)))
    check("times the tool ran", len(ran), 1)
    check("orders written", db.execute("SELECT count(*) FROM orders").fetchone()[0], 1)

    print("-- a local tool that fails once: its writes are undone, the claim")
    print("   is released, and the retry really runs")
    attempts = []

    @calls.tool(kind="local")
    def send_invoice(db, order):
        db.execute("INSERT INTO invoices(order_id) VALUES(?)", (order,))
        attempts.append(order)
        if len(attempts) == 1:
            raise RuntimeError("invoice template missing")
        return {"invoiced": order}

    try:
        send_invoice("alice", "conv-7", order=1)
    except RuntimeError as e:
        print(f"   first:         raised {type(e).__name__}: {e}")
    show("retry:", send_invoice("alice", "conv-7", order=1))
    check("attempts", len(attempts), 2)
    check("invoices written", db.execute("SELECT count(*) FROM invoices").fetchone()[0], 1)

    print("-- an external tool: the claim commits, then the request leaves")
    print("   with the header Idempotency-Key: \"<key>\"")
    with Target() as target:
        charge_card = card_tool(calls, target)
        show("first:", charge_card("alice", "conv-7", cents=4200))
        retry = charge_card("alice", "conv-7", cents=4200)
        show("retry:", retry)
        show("its reply:", calls.reply(charge_card.key("alice", "conv-7", cents=4200)))
        check("requests that reached the target", sum(target.arrivals.values()), 1)
        check("charges made", len(target.charges), 1)


def part2(calls):
    print("\n== 2. A timeout: 'unknown', never retried; the target's records decide ==")
    # This target charges at once, but answers only after the client has
    # given up waiting.
    with Target(slow=True) as target:
        charge_card = card_tool(calls, target, timeout=SLOW_TIMEOUT)
        try:
            charge_card("bob", "conv-2", cents=990)
            print("   first:         answered in time (WRONG)")
        except idem.Unknown as e:
            print(f"   first:         no answer within {SLOW_TIMEOUT} s "
                  f"({type(e.__cause__).__name__}): idem.Unknown")
        target.answer.set()            # the held answer goes to nobody now
        key = charge_card.key("bob", "conv-2", cents=990)
        try:
            charge_card("bob", "conv-2", cents=990)   # the model retries
            print("   retry:         ran again (WRONG)")
        except idem.Unknown as e:
            show("retry:", e.reply)
            check("status of the call", e.status, "unknown")
        check("requests that reached the target", sum(target.arrivals.values()), 1)
        # The request did arrive: the slow target charged before answering.
        # We cannot know that from here; the target's records can.
        record = target_record(target, key)
        show("target record:", record)
        check("charges made", len(target.charges), 1)
        print("-- the operator reconciles from the target's records:")
        print("   UPDATE calls SET reconcile = 'arrived', id = ?, result = ? ...")
        calls.conn.execute(
            "UPDATE calls SET reconcile = 'arrived', id = ?, result = ?"
            " WHERE key = ? AND member = 0",
            (record["charge"], json.dumps(record), key))
        retry = charge_card("bob", "conv-2", cents=990)
        show("next retry:", retry)
        check("status of the call", calls.reply(key)["status"], "done")
        check("requests that reached the target", sum(target.arrivals.values()), 1)


def part3(tmp):
    print("\n== 3. The boundary: two tool runners, two databases, one key ==")
    print("   Each runner claims in its own database, so both send the same")
    print("   call, with the same key.  Only the target can refuse the second.")
    for honour in (True, False):
        print("-- a target that %s the Idempotency-Key header"
              % ("honours" if honour else "does NOT honour"))
        with Target(honour_key=honour) as target:
            runners = [open_calls(os.path.join(tmp, f"runner-{n}-{honour}.db"))
                       for n in "ab"]
            try:
                tools = [card_tool(calls, target) for calls in runners]
                for n, tool in zip("ab", tools):
                    show(f"runner {n}:", tool("carol", "conv-9", cents=1500))
                keys = {tool.key("carol", "conv-9", cents=1500) for tool in tools}
                check("distinct keys sent", len(keys), 1)
                check("requests that reached the target", sum(target.arrivals.values()), 2)
                check("charges made", len(target.charges), 1 if honour else 2)
            finally:
                for calls in runners:
                    calls.conn.close()


def main():
    with tempfile.TemporaryDirectory(prefix="idem-demo-") as tmp:
        calls = open_calls(os.path.join(tmp, "assistant.db"))
        try:
            version = calls.conn.execute("SELECT idem_version()").fetchone()[0]
            print(f"idem {version}, the Python package sqlite-idem {idem.__version__}")
            part1(calls)
            part2(calls)
        finally:
            calls.conn.close()
        part3(tmp)
    print()
    if wrong:
        print(f"{wrong} count(s) WRONG")
        return 1
    print("every count as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
