# SPDX-License-Identifier: MIT
"""idem.frameworks.agent_tool itself, with the frameworks installed (make
test-frameworks): what each framework sees of the tool, and the mistakes it
refuses."""
import asyncio
import inspect
import os
import sqlite3
import tempfile
import unittest

import idem
from idem.frameworks import agent_tool


class AgentToolTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="idem-agent-tool-")
        self.addCleanup(tmp.cleanup)
        self.db = sqlite3.connect(os.path.join(tmp.name, "t.db"), isolation_level=None,
                                  check_same_thread=False)
        self.addCleanup(self.db.close)
        self.db.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY, sku TEXT)")
        self.calls = idem.Calls(self.db)

    def claimed(self):
        return self.db.execute("SELECT count(*) FROM calls").fetchone()[0]

    def order(self, **kw):
        def place_order(db, sku: str, qty: int = 1) -> dict:
            """Place an order."""
            cur = db.execute("INSERT INTO orders(sku) VALUES(?)", (sku,))
            return {"order": cur.lastrowid}
        return agent_tool(self.calls, **kw)(place_order)

    def test_signatures(self):
        from agents import RunContextWrapper
        from langchain_core.runnables import RunnableConfig
        from mcp.server.mcpserver import Context
        from pydantic_ai import RunContext
        sig = lambda f: [(p.name, p.annotation) for p in inspect.signature(f).parameters.values()]  # noqa: E731
        self.assertEqual(sig(self.order(context="openai-agents"))[1:], [("sku", str), ("qty", int)])
        self.assertIs(sig(self.order(context="openai-agents"))[0][1].__origin__, RunContextWrapper)
        self.assertIs(sig(self.order(context="pydantic-ai"))[0][1].__origin__, RunContext)
        self.assertEqual(sig(self.order(context="langchain")),
                         [("sku", str), ("qty", int), ("config", RunnableConfig)])
        self.assertEqual(sig(self.order(context="mcp", who="u")),
                         [("conversation", str), ("sku", str), ("qty", int), ("ctx", Context)])
        self.assertEqual(sig(self.order(context="mcp", who="u", conv=lambda ctx: "c")),
                         [("sku", str), ("qty", int), ("ctx", Context)])
        t = self.order(context="langchain")
        self.assertEqual((t.__name__, t.__doc__), ("place_order", "Place an order."))

    def test_run_without_a_user_claims_nothing(self):
        from agents import RunContextWrapper
        t = self.order(context="openai-agents")
        for context in (None, {}, {"user": "alice"}, {"user": "", "conversation": "c"}):
            with self.assertRaisesRegex(TypeError, r"idem: tool place_order: (who|conv) of this"
                                        r" call is .*nothing was claimed; give it as"
                                        r" Runner\.run\(agent, input, context="):
                t(RunContextWrapper(context=context), sku="A")
        with self.assertRaisesRegex(TypeError, r"give it as invoke\(input, \{'configurable'"):
            self.order(context="langchain")(sku="A", config={"configurable": {"thread_id": "c"}})
        self.assertEqual(self.claimed(), 0)

    def test_context_as_object_or_mapping(self):
        from agents import RunContextWrapper

        class Ctx:
            user, conversation = "alice", "conv-1"
        t = self.order(context="openai-agents")
        first = t(RunContextWrapper(context=Ctx()), sku="A")
        again = t(RunContextWrapper(context={"user": "alice", "conversation": "conv-1"}), sku="A")
        self.assertEqual(first, '{"order": 1}')                 # the SDK hands str(): JSON text
        self.assertIn('"idempotent": true', again)
        # who= and conv= override the context's.
        t2 = self.order(context="langchain", who=lambda c: "bob", conv="fixed")
        self.assertEqual(t2(sku="A", config={}), {"order": 2})
        self.assertEqual(t2(sku="A", config={})["status"], "done")

    def test_mistakes(self):
        with self.assertRaisesRegex(ValueError, "context must be one of"):
            self.order(context="crewai")
        with self.assertRaisesRegex(TypeError, "MCP has no user: give who="):
            self.order(context="mcp")
        with self.assertRaisesRegex(TypeError, "who must be a non-empty str"):
            self.order(context="langchain", who="")
        with self.assertRaisesRegex(TypeError, "calls must be an idem.Calls"):
            agent_tool(self.db, context="langchain")
        with self.assertRaisesRegex(TypeError, "takes the connection as its first"):
            agent_tool(self.calls, context="langchain")(lambda sku: 1)

    def test_kept_failure_and_not_sent(self):
        calls = idem.Calls(self.db, "kept", local_failure="keep")

        @agent_tool(calls, kind="local", context="langchain", name="boom")
        def boom(db, n: int):
            raise ValueError("no stock")
        cfg = {"configurable": {"user_id": "u", "thread_id": "c"}}
        with self.assertRaisesRegex(ValueError, "no stock"):      # the framework's error path
            boom(n=1, config=cfg)
        again = boom(n=1, config=cfg)
        self.assertEqual((again["status"], again["idempotent"]), ("failed", True))

        @agent_tool(self.calls, kind="external", context="langchain")
        def send(idempotency_key, to: str):
            raise idem.NotSent("refused")
        with self.assertRaises(idem.NotSent):
            send(to="x", config=cfg)
        self.assertEqual(self.claimed(), 0)                       # released: a retry runs

        @agent_tool(self.calls, kind="external", context="mcp", who="u")
        def send2(idempotency_key, to: str):
            raise idem.NotSent("refused")
        r = send2("conv", to="x", ctx=None)
        self.assertTrue(r.is_error)
        self.assertEqual(r.structured_content["status"], "not_sent")

    def test_async_external_waits(self):
        gate = asyncio.Event()

        @agent_tool(self.calls, kind="external", context="pydantic-ai", wait=5)
        async def charge(idempotency_key, cents: int):
            await gate.wait()
            return {"cents": cents}

        class Run:
            deps = {"user": "u", "conversation": "c"}

        async def both():
            first = asyncio.ensure_future(charge(Run(), cents=5))
            await asyncio.sleep(0.05)
            other = asyncio.ensure_future(charge(Run(), cents=5))
            await asyncio.sleep(0.1)
            gate.set()
            return await first, await other
        first, other = asyncio.run(both())
        self.assertEqual(first, {"cents": 5})
        self.assertEqual((other["status"], other["idempotent"], other["result"]),
                         ("done", True, {"cents": 5}))


if __name__ == "__main__":
    unittest.main()
