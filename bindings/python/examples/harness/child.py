# SPDX-License-Identifier: MIT
"""One run of a framework example in a process of its own.

    python ../harness/child.py .        (in an example: the demo)

The demo starts the HTTP target (test/examples/python/target_server.py),
plays a conversation in which the model repeats each of its two tool calls,
and prints what the model was handed.

The tests (harness/suite.py) start it with a run in the environment, to
kill it mid-run or to run two at once: IDEM_DB, TARGET_URL, TARGET_TIMEOUT
(s), WAIT (s), IDEM_USER, IDEM_CONV, SCRIPT (the turns, as JSON), HOLD_AT
(the turn at which the model stops answering) and WAIT_FOR_GO (print
{"event": "ready"}, then start at a line on stdin).  It prints one JSON
line per event: {"event": "turn", "turn": i} as the model's turn i starts,
{"event": "held", "turn": i}, and at the end {"event": "end", "turns": [...]}.
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "test", "examples", "python"))

from harness.script import converse, load      # noqa: E402


def emit(o):
    sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()


def child(env, shop, model):
    if env.get("WAIT_FOR_GO"):
        emit({"event": "ready"})
        sys.stdin.readline()
    hold_at = int(env["HOLD_AT"]) if env.get("HOLD_AT") else None
    turns = converse(
        shop, model, env["IDEM_DB"], json.loads(env["SCRIPT"]),
        user=env.get("IDEM_USER", "alice"), conversation=env["IDEM_CONV"],
        target_url=env["TARGET_URL"], timeout=float(env.get("TARGET_TIMEOUT", 5)),
        wait=float(env.get("WAIT", 0)), hold_at=hold_at,
        on_turn=lambda i: emit({"event": "held" if i == hold_at else "turn", "turn": i}))
    emit({"event": "end", "turns": [t.as_json() for t in turns]})


def demo(example, shop, model):
    from target_server import Target
    show = json.dumps
    with Target() as target, tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "shop.db")
        turns = converse(shop, model, db, [
            [{"name": "place_order", "args": {"sku": "A0001", "qty": 2}}],
            [{"name": "place_order", "args": {"qty": 2, "sku": "A0001"}}],
            [{"name": "charge_card", "args": {"cents": 1990}}],
            [{"name": "charge_card", "args": {"cents": 1990}}],
            "Your order is placed and paid.",
        ], user="alice", conversation="conv-1", target_url=target.url + "/charges")
        print("%s: alice, conv-1, with the framework's test model" % example)
        for i, turn in enumerate(turns):
            for r in turn.seen:
                print("  model got     %s: %s" % (r["name"], show(r["output"])))
            for c in turn.calls:
                print("  model calls   %s %s  (tool-call id %s)" % (c["name"], show(c["args"]), c["id"]))
            if turn.text is not None:
                print("  model says    %s" % show(turn.text))
            if i < len(turns) - 1:
                print("  --")
        s = shop.open(db)
        orders = s.db.execute("SELECT count(*) FROM orders").fetchone()[0]
        s.close()
        print("orders in SQLite: %d; charges that reached the target: %d"
              % (orders, sum(target.arrivals.values())))


if __name__ == "__main__":
    example = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    shop, model = load(example)
    if os.environ.get("SCRIPT"):
        child(os.environ, shop, model)
    else:
        demo(os.path.basename(example), shop, model)
