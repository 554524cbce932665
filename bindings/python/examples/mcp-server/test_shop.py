# SPDX-License-Identifier: MIT
"""The tests of the MCP server example (../harness/suite.py), its tools
called through the MCP SDK's Client (model.py), and the server on stdio.

    python -m pytest        (or python -m unittest, in this folder)
"""
import asyncio
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness.suite import stories     # noqa: E402


class Test(stories(__file__)):
    # An MCP answer: {"status": "done", "result": ...} for a first run, with
    # "idempotent": true beside it for a replay; {"status", "key",
    # "message"} (and "idempotent": true on a repeat) for the others.
    def ran(self, out):
        self.assertEqual(out["status"], "done", out)
        self.assertNotIn("idempotent", out)
        return out["result"]

    def replayed(self, out, key, id_=None):
        self.assertEqual((out["status"], out.get("idempotent")), ("done", True), out)
        return out["result"]

    def answer(self, out):
        return out["status"], out.get("idempotent", False), out["key"], out["message"]


class StdioTest(unittest.TestCase):
    """server.py as an MCP client starts it: a process on stdio.  A call
    sent twice, each time through a server process of its own, takes effect
    once, and the second answer is marked as a replay."""

    def test_two_server_processes(self):
        from mcp import Client, StdioServerParameters
        from target_server import Target
        here = os.path.dirname(os.path.abspath(__file__))

        async def one(env, name, args):
            params = StdioServerParameters(command=sys.executable,
                                           args=[os.path.join(here, "server.py")], env=env)
            async with Client(params) as client:
                tools = sorted(t.name for t in (await client.list_tools()).tools)
                self.assertEqual(tools, ["charge_card", "place_order"])
                return (await client.call_tool(name, args)).structured_content

        with Target() as target, tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "IDEM_DB": os.path.join(tmp, "shop.db"), "IDEM_WHO": "alice",
                   "TARGET_URL": target.url + "/charges",
                   "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
            args = {"conversation": "conv-1", "cents": 500}
            first = asyncio.run(one(env, "charge_card", args))
            again = asyncio.run(one(env, "charge_card", args))
            order = asyncio.run(one(env, "place_order", {"conversation": "conv-1", "sku": "A", "qty": 1}))
            self.assertEqual(first, {"status": "done", "result": {"charge": "ch_1", "cents": 500}})
            self.assertEqual(again, {**first, "idempotent": True})
            self.assertEqual(order, {"status": "done", "result": {"order": 1, "sku": "A", "qty": 1}})
            self.assertEqual(sum(target.arrivals.values()), 1)
