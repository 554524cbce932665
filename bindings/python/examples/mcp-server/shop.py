# SPDX-License-Identifier: MIT
"""idem inside an MCP server (the Python SDK, mcp: MCPServer, which was
FastMCP before mcp 2): two tools whose calls take effect once, however
often a client sends them.

    place_order {conversation, sku, qty}   local: an order row in SQLite,
        written in the claim's transaction
    charge_card {conversation, cents}      external: a POST to the target,
        with the call's key as the Idempotency-Key header

Each tool is @server.tool() over idem.frameworks.agent_tool(context="mcp"):
MCP has no user, so the server names its principal (who=); the
conversation is the tool's argument `conversation` (an MCP client names
its conversation or session there), added by agent_tool; the other
arguments make the key with them.  Every answer is a CallToolResult whose
structured content and text are the same JSON, the answer of every
framework (doc/frameworks.md), one shape on every arrival:

    a first run    {"status": "done", "idempotent": false, "key", "id", "result"}
    a replay       {"status": "done", "idempotent": true, "key", "id", "result"}:
                   the first run's result; the tool did not run again
    in progress    (after waiting up to `wait` for it) isError and
                   {"status": "pending", "idempotent": true, "key", "message"}
    unknown        isError and {"status": "unknown", "idempotent": false,
                   "key", "message"}: the charge's request failed or timed
                   out after it may have left; never sent again (a repeat:
                   "idempotent": true)
    not sent       isError and {"status": "not_sent", "idempotent": false,
                   "key", "message"}: nothing left; sending it again runs it

    python server.py                    the server, on stdio
    python ../harness/child.py .        a conversation: the script plays the
                                        model, through the SDK's in-memory Client
    python -m pytest                    the tests (../harness/suite.py)
"""
import json
import urllib.error
import urllib.request

import idem
from idem.frameworks import agent_tool
from mcp.server.mcpserver import MCPServer


class Shop:
    """The shop on a database file: its MCP server, and chat(model, user,
    conversation, prompt), one conversation in which the model (a script,
    model.py) calls the server's tools through an MCP client."""

    def __init__(self, file, target_url=None, timeout=5.0, wait=0.0, who=None):
        # idem.connect(): idem loaded, autocommit; the sqlite3 module's connection,
        # or APSW's where this Python's sqlite3 cannot load extensions.
        self.db = idem.connect(file, timeout=10, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")   # a claim is on disk before its request leaves
        self.db.execute("CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, sku TEXT, qty INTEGER)")
        self.calls = calls = idem.Calls(self.db)
        self.user = who or "mcp-user"
        self.server = server = MCPServer("shop")
        principal = lambda ctx: self.user           # noqa: E731

        @server.tool()
        @agent_tool(calls, kind="local", context="mcp", who=principal, wait=wait)
        def place_order(db, sku: str, qty: int) -> dict:
            """Place an order for qty items of sku."""
            cur = db.execute("INSERT INTO orders(sku, qty) VALUES(?, ?)", (sku, qty))
            return idem.Result({"order": cur.lastrowid, "sku": sku, "qty": qty}, id=cur.lastrowid)

        @server.tool()
        @agent_tool(calls, kind="external", context="mcp", who=principal, wait=wait)
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
        self.user = user                    # this server's principal
        return model.converse(self.server, conversation)

    def close(self):
        self.db.close()


def open(file, **options):
    return Shop(file, **options)
