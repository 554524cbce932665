# SPDX-License-Identifier: MIT
"""idem.frameworks.agent_tool itself, with the frameworks installed (make
test-frameworks): what each framework sees of the tool, and the mistakes it
refuses."""
import asyncio
import dataclasses
import inspect
import json
import os
import tempfile
import unittest

import idem
from idem.frameworks import agent_tool

# What the model is handed, in every framework (the Node package's
# agentTool's shape): a done call, and the others.
DONE = ["status", "idempotent", "key", "id", "result"]
OTHER = ["status", "idempotent", "key", "message"]
UNKNOWN = (r"^the request may already have reached the target system; the target's"
           r" records decide the outcome; it is not retried\.")
PENDING = r"^the call is in progress, or its process was interrupted; it is not executed again$"


def contexts():
    """Each context's way to call a tool for (user, conversation), and to
    read what the model is handed from its carrier: (answer, is_error)."""
    from agents import RunContextWrapper

    class Run:                          # Pydantic AI's RunContext: ctx.deps
        def __init__(self, deps):
            self.deps = deps

    def mcp(r):
        text = json.loads(r.content[0].text)
        assert text == r.structured_content, (text, r.structured_content)
        return r.structured_content, r.is_error

    return {
        "openai-agents": (dict(),
                          lambda t, u, c, **a: t(RunContextWrapper(context={"user": u, "conversation": c}), **a),
                          lambda r: (json.loads(r), None)),
        "langchain": (dict(),
                      lambda t, u, c, **a: t(config={"configurable": {"user_id": u, "thread_id": c}}, **a),
                      lambda r: (r, None)),
        "pydantic-ai": (dict(),
                        lambda t, u, c, **a: t(Run({"user": u, "conversation": c}), **a),
                        lambda r: (r, None)),
        "mcp": (dict(who="u"),
                lambda t, u, c, **a: t(c, ctx=None, **a),
                mcp),
    }


class AgentToolTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="idem-agent-tool-")
        self.addCleanup(tmp.cleanup)
        self.db = idem.connect(os.path.join(tmp.name, "t.db"), check_same_thread=False)
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
        key = t.tool.key("alice", "conv-1", sku="A")
        # The SDK hands the model str(): JSON text.
        self.assertEqual(first, '{"status": "done", "idempotent": false, "key": "%s",'
                                ' "id": null, "result": {"order": 1}}' % key)
        self.assertEqual(again, first.replace("false", "true"))
        # who= and conv= override the context's.
        t2 = self.order(context="langchain", who=lambda c: "bob", conv="fixed")
        self.assertEqual(t2(sku="A", config={})["result"], {"order": 2})
        self.assertEqual(t2(sku="A", config={})["key"], t2.tool.key("bob", "fixed", sku="A"))

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
        self.assertEqual(list(again), OTHER)
        self.assertEqual((again["status"], again["idempotent"], again["key"]),
                         ("failed", True, boom.tool.key("u", "c", n=1)))
        self.assertRegex(again["message"], "no stock")

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
        self.assertEqual(r.structured_content, {
            "status": "not_sent", "idempotent": False, "key": send2.tool.key("u", "conv", to="x"),
            "message": "refused: nothing was sent; the call was released, and sending it"
                       " again runs it"})
        self.assertEqual(json.loads(r.content[0].text), r.structured_content)
        self.assertEqual(self.claimed(), 0)

    def test_one_shape_on_every_arrival(self):
        """In each framework's carrier, the first arrival and a repeat are
        handed one shape: the same members, the result, idempotent false
        then true (the first arrival got the bare result: issue 34)."""
        for context, (opts, call, read) in contexts().items():
            with self.subTest(context=context):
                t = self.order(context=context, name="order_" + context.replace("-", "_"), **opts)
                who = opts.get("who", "alice")
                raw = [call(t, who, "conv-1", sku="A", qty=2), call(t, who, "conv-1", qty=2, sku="A")]
                (first, e1), (again, e2) = map(read, raw)
                key = t.tool.key(who, "conv-1", sku="A", qty=2)
                self.assertEqual(list(first), DONE)
                self.assertEqual(list(again), DONE)
                self.assertEqual(first, {"status": "done", "idempotent": False, "key": key,
                                         "id": None, "result": {"order": first["result"]["order"]}})
                self.assertEqual(again, {**first, "idempotent": True})
                error = False if context == "mcp" else None
                self.assertEqual((e1, e2), (error, error))
                if isinstance(raw[0], str):
                    self.assertEqual(raw[1], raw[0].replace('"idempotent": false', '"idempotent": true'))
        self.assertEqual(self.db.execute("SELECT count(*) FROM orders").fetchone()[0], 4)

    def test_unknown_and_pending(self):
        """An external call whose request may have arrived is unknown: idem's
        sentence, idempotent false for the arrival that sent it, true for a
        repeat; a repeat of a call in progress is pending; in each
        framework's carrier (MCP: isError)."""
        import threading
        for context, (opts, call, read) in contexts().items():
            with self.subTest(context=context):
                sent = []

                @agent_tool(self.calls, kind="external", context=context,
                            name="charge_" + context.replace("-", "_"), **opts)
                def charge(idempotency_key, cents: int):
                    sent.append(cents)
                    raise TimeoutError("the target did not answer")
                who = opts.get("who", "alice")
                key = charge.tool.key(who, "conv-1", cents=1)
                (first, e1), (again, e2) = (read(call(charge, who, "conv-1", cents=1)) for _ in "12")
                self.assertEqual(list(first), OTHER)
                self.assertEqual((first["status"], first["idempotent"], first["key"]),
                                 ("unknown", False, key))
                self.assertRegex(first["message"], UNKNOWN)
                self.assertEqual(again, {**first, "idempotent": True})
                self.assertEqual(sent, [1])
                error = True if context == "mcp" else None      # MCP: isError
                self.assertEqual((e1, e2), (error, error))

                gate, started = threading.Event(), threading.Event()

                @agent_tool(self.calls, kind="external", context=context,
                            name="slow_" + context.replace("-", "_"), **opts)
                def slow(idempotency_key, cents: int):
                    started.set()
                    gate.wait(10)
                    return {"cents": cents}
                out = []
                th = threading.Thread(target=lambda: out.append(call(slow, who, "conv-1", cents=2)))
                th.start()
                started.wait(10)
                pending, e3 = read(call(slow, who, "conv-1", cents=2))
                gate.set()
                th.join(10)
                self.assertEqual(list(pending), OTHER)
                self.assertEqual((pending["status"], pending["idempotent"], pending["key"]),
                                 ("pending", True, slow.tool.key(who, "conv-1", cents=2)))
                self.assertRegex(pending["message"], PENDING)
                self.assertEqual(e3, error)
                done, _ = read(out[0])
                self.assertEqual((done["status"], done["idempotent"], done["result"]),
                                 ("done", False, {"cents": 2}))

    def test_typed_results_are_handed_as_json(self):
        """A tool whose result is a dataclass (stored through its serializer)
        hands the model the result's JSON form, first arrival and repeat
        alike, in each carrier (the JSON text of the Agents SDK and MCP
        could not hold the dataclass)."""
        @dataclasses.dataclass
        class Order:
            order: int
            sku: str

        for context, (opts, call, read) in contexts().items():
            with self.subTest(context=context):
                @agent_tool(self.calls, kind="local", context=context,
                            name="typed_" + context.replace("-", "_"), **opts)
                def typed(db, sku: str) -> Order:
                    cur = db.execute("INSERT INTO orders(sku) VALUES(?)", (sku,))
                    return Order(cur.lastrowid, sku)
                who = opts.get("who", "alice")
                (first, _), (again, _) = (read(call(typed, who, "conv-1", sku="T")) for _ in "12")
                self.assertEqual(first["result"], {"order": first["result"]["order"], "sku": "T"})
                self.assertEqual(again, {**first, "idempotent": True})

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
        self.assertEqual(first, {"status": "done", "idempotent": False,
                                 "key": charge.tool.key("u", "c", cents=5), "id": None,
                                 "result": {"cents": 5}})
        self.assertEqual(other, {**first, "idempotent": True})


if __name__ == "__main__":
    unittest.main()
