# SPDX-License-Identifier: MIT
"""idem inside Pydantic AI (pydantic-ai): two tools whose calls take effect
once, however often the model makes them.

    place_order  local: an order row in SQLite, written in the claim's
                 transaction (the row, the claim and the result commit
                 together)
    charge_card  external: a POST to the target, with the call's key as the
                 Idempotency-Key header

Each tool is @agent.tool over idem.frameworks.agent_tool(): the user and
the conversation come from the run's deps (agent.run(prompt,
deps=Deps(user=..., conversation=...))), the arguments from the tool call.
The tool-call id is not part of the key: a model that repeats a call gives
it a new id.  Every arrival of a done call gets one shape: {"status":
"done", "idempotent", "key", "id", "result"}, "idempotent" false for the
arrival that ran the tool, true for a repeat (handed the first result); a
call whose request may have arrived but whose answer did not (a timeout)
gets the "unknown" note, and is not sent again.

    python ../harness/child.py .        a conversation with the test model
    python -m pytest                    the tests (../harness/suite.py)
"""
import dataclasses
import json
import urllib.error
import urllib.request

import idem
from idem.frameworks import agent_tool
from pydantic_ai import Agent


@dataclasses.dataclass
class Deps:
    user: str
    conversation: str


class Shop:
    """The shop on a database file: its agent and tools, and chat(model,
    user, conversation, prompt), one run of the agent (the model, then the
    tools it calls, until it answers in text)."""

    def __init__(self, file, target_url=None, timeout=5.0, wait=0.0):
        # Pydantic AI runs a plain def tool in a worker thread: one
        # connection, shared by threads (idem serializes its steps on it).
        # idem.connect(): idem loaded, autocommit; the sqlite3 module's connection,
        # or APSW's where this Python's sqlite3 cannot load extensions.
        self.db = idem.connect(file, timeout=10, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")   # a claim is on disk before its request leaves
        self.db.execute("CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, sku TEXT, qty INTEGER)")
        self.calls = calls = idem.Calls(self.db)
        self.agent = agent = Agent(deps_type=Deps, instructions="You take orders and payments.")

        @agent.tool
        @agent_tool(calls, kind="local", context="pydantic-ai", wait=wait)
        def place_order(db, sku: str, qty: int) -> dict:
            """Place an order for qty items of sku."""
            cur = db.execute("INSERT INTO orders(sku, qty) VALUES(?, ?)", (sku, qty))
            return idem.Result({"order": cur.lastrowid, "sku": sku, "qty": qty}, id=cur.lastrowid)

        @agent.tool
        @agent_tool(calls, kind="external", context="pydantic-ai", wait=wait)
        def charge_card(idempotency_key, cents: int) -> dict:
            """Charge the user's card, in cents."""
            req = urllib.request.Request(
                target_url, method="POST", data=json.dumps({"cents": cents}).encode(),
                headers={"Content-Type": "application/json", idem.HEADER: idempotency_key})
            try:
                resp = urllib.request.urlopen(req, timeout=timeout)
            except urllib.error.URLError as e:
                if isinstance(e.reason, ConnectionRefusedError):
                    raise idem.NotSent("the target is down") from e
                raise                       # it may have arrived: the call is unknown
            with resp:
                return json.load(resp)

    def chat(self, model, user, conversation, prompt):
        return self.agent.run(prompt, model=model, deps=Deps(user, conversation))

    def close(self):
        self.db.close()


def open(file, **options):
    return Shop(file, **options)
