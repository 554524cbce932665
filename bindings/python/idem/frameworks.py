# SPDX-License-Identifier: MIT
"""idem.frameworks -- an agent framework's tool through idem.

    from agents import function_tool
    from idem.frameworks import agent_tool

    @function_tool                                      # the framework's decorator
    @agent_tool(calls, kind="local", context="openai-agents")
    def place_order(db, sku: str, qty: int) -> dict:
        cur = db.execute("INSERT INTO orders(sku, qty) VALUES(?, ?)", (sku, qty))
        return {"order": cur.lastrowid}

agent_tool() makes the function the framework calls: the body's own
parameters (less the connection of a local tool, or the idempotency_key of
an external one) with the framework's run context put where the framework
looks for it.  Each call goes through ``calls.tool(...)``'s ``run(who, conv,
**args)``: `who` and `conv` come from the run context (the user, the
conversation or thread), `args` from the tool call.  The framework's own
tool-call id is not part of the key: a model that repeats a call gives it
a new id, and the repeat must meet the first call.

    context            the parameter added        who / conv
    "openai-agents"    ctx: RunContextWrapper     ctx.context.user / .conversation
    "langchain"        config: RunnableConfig     config["configurable"]["user_id"] / ["thread_id"]
    "pydantic-ai"      ctx: RunContext            ctx.deps.user / .conversation
    "mcp"              conversation: str (unless  who= (given) / the argument conversation
                       conv= is given), ctx: Context

(`ctx.context` and `ctx.deps` may be a mapping or an object with the
attributes.)  who= and conv= override them: a str, or a function of the
context object.

What the model is handed, the same shape on every arrival (as the Node
package's agentTool: bindings/node/frameworks.js):
  - a done call: {"status": "done", "idempotent", "key", "id", "result"}:
    result as the first arrival's tool returned it, as recorded (its JSON
    form: a dataclass or model through the tool's serializer), and beside
    it "idempotent": False for the arrival that ran the tool, True for a
    repeat (the tool did not run), so that a typed output is one type for
    both;
  - a call in progress or whose process died (after waiting up to `wait`
    seconds for it): {"status": "pending", "idempotent": True, "key",
    "message"};
  - an external call whose outcome is unknown (its request may have
    arrived; the target's records decide; it is not retried):
    {"status": "unknown", "idempotent": False for the arrival that sent
    it, True for a repeat, "key", "message"}, idem's own message ("the
    request may already have reached the target system; ..."); a kept
    local failure: "status": "failed".
These are answers, not errors, so that each framework hands them to the
model as they are (a framework's error path may say "please try again").
Everything else is raised for the framework's error path: the local tool's
own error or idem.Unstorable (rolled back, released: a retry runs again),
idem.NotSent (released), idem.Lost, idem.NotRecorded, and a run without a
user or conversation (nothing was claimed).

Each framework's own carrier holds that answer: the value itself
(LangChain, Pydantic AI); its JSON text for the OpenAI Agents SDK, which
hands the model str() of what a tool returns; for context="mcp", a
CallToolResult whose structured content is the answer and whose text is
its JSON, isError for every answer but "done".  MCP's error path has no
structure, so there idem.NotSent is an answer too: isError and
{"status": "not_sent", "idempotent": False, "key", "message"}
(doc/choices.md).
"""
from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import time
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

import idem
from idem._serializers import plain as _plain, serializer_for as _serializer_for

__all__ = ["agent_tool", "CONTEXTS"]

_P = inspect.Parameter


def _get(obj: Any, name: str) -> Any:
    """obj[name] for a mapping, obj.name otherwise; None when absent."""
    if obj is None:
        return None
    if isinstance(obj, dict) or hasattr(obj, "keys") and hasattr(obj, "get"):
        return obj.get(name)
    return getattr(obj, name, None)


# The frameworks are optional: imported by name when a tool is made for one,
# so that the package's types do not depend on which are installed.
def _openai_agents() -> Tuple[Any, str]:
    return importlib.import_module("agents").RunContextWrapper[Any], "first"


def _langchain() -> Tuple[Any, str]:
    return importlib.import_module("langchain_core.runnables").RunnableConfig, "last"


def _pydantic_ai() -> Tuple[Any, str]:
    return importlib.import_module("pydantic_ai").RunContext[Any], "first"


def _mcp() -> Tuple[Any, str]:
    return importlib.import_module("mcp.server.mcpserver").Context, "last"


class _Context(typing.NamedTuple):
    param: str                          # the parameter's name
    kind: Callable[[], Tuple[Any, str]]  # its annotation (imported late), where
    who: Optional[Callable[[Any], Any]]
    conv: Optional[Callable[[Any], Any]]
    hint: str


CONTEXTS: Dict[str, _Context] = {
    "openai-agents": _Context(
        "ctx", _openai_agents,
        lambda c: _get(getattr(c, "context", None), "user"),
        lambda c: _get(getattr(c, "context", None), "conversation"),
        "Runner.run(agent, input, context={'user': ..., 'conversation': ...})"),
    "langchain": _Context(
        "config", _langchain,
        lambda c: _get(_get(c, "configurable"), "user_id"),
        lambda c: _get(_get(c, "configurable"), "thread_id"),
        "invoke(input, {'configurable': {'user_id': ..., 'thread_id': ...}})"),
    "pydantic-ai": _Context(
        "ctx", _pydantic_ai,
        lambda c: _get(getattr(c, "deps", None), "user"),
        lambda c: _get(getattr(c, "deps", None), "conversation"),
        "agent.run(prompt, deps=Deps(user=..., conversation=...))"),
    "mcp": _Context(
        "ctx", _mcp, None, None,
        "who='...' to agent_tool, and the tool's argument conversation"),
}
"""Where each framework's run context keeps the user and the conversation."""


def _describe(v: Any) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    return "None" if v is None else "%s (%s)" % (type(v).__name__, str(v)[:40])


def _party(spec: Any, what: str, tname: str, hint: str, ctx: Any) -> Any:
    v = spec(ctx) if callable(spec) else spec
    if isinstance(v, bool) or not isinstance(v, (str, int)) or v == "":
        raise TypeError("idem: tool %s: %s of this call is %s, not a non-empty str;"
                        " nothing was claimed; give it as %s"
                        % (tname, what, _describe(v), hint))
    return v


def _answer(e: idem.CallError) -> Dict[str, Any]:
    """What the model gets for a call that did not end in done."""
    return {"status": e.status, "idempotent": e.replayed, "key": e.key,
            "message": e.reply.get("message")}


def _not_sent(e: BaseException) -> Dict[str, Any]:
    """MCP's answer for idem.NotSent (released: sending it again runs it)."""
    return {"status": "not_sent", "idempotent": False, "key": getattr(e, "key", None),
            "message": "%s: nothing was sent; the call was released, and"
                       " sending it again runs it" % e}


def _done(outcome: idem.Outcome, ser: Optional[idem.Serializer]) -> Dict[str, Any]:
    """What the model gets for a done call, first arrival and repeat alike."""
    id_ = outcome.id
    if isinstance(id_, (bytes, bytearray, memoryview)):
        id_ = bytes(id_).hex()              # JSON has no bytes
    result = outcome.result if ser is None else ser.to_json(outcome.result)
    return {"status": "done", "idempotent": outcome.replayed, "key": outcome.key,
            "id": id_, "result": result}


def _mcp_result(body: Dict[str, Any]) -> Any:
    types = importlib.import_module("mcp.types")
    CallToolResult, TextContent = types.CallToolResult, types.TextContent
    text = json.dumps(body, ensure_ascii=False, default=_plain)
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=json.loads(text),
                          is_error=body["status"] != "done")


def agent_tool(calls: idem.Calls, fn: Optional[Callable[..., Any]] = None, *,
               kind: str = "local", name: Optional[str] = None,
               keyargs: idem.KeyArgs = None, serializer: Any = None,
               context: Optional[str] = None, who: Any = None, conv: Any = None,
               wait: float = 0.0) -> Any:
    """A framework's tool function over ``calls.tool(...)``: see the top
    of this module.  kind, name, keyargs, serializer: as for calls.tool.
    context: "openai-agents", "langchain", "pydantic-ai" or "mcp".  who,
    conv: a str, or a function of the framework's context object (they
    override context's).  wait: how long (seconds) a repeat of a call in
    progress waits for its result before it answers "pending" (0)."""
    if not isinstance(calls, idem.Calls):
        raise TypeError("idem: agent_tool(calls, ...): calls must be an idem.Calls,"
                        " not %s" % type(calls).__name__)
    if context not in CONTEXTS:
        raise ValueError("idem: agent_tool(): context must be one of %s, not %r"
                         % (", ".join(repr(c) for c in CONTEXTS), context))
    wait = float(idem._seconds(wait, "agent_tool(): wait"))
    ctxdef = CONTEXTS[context]
    for what, spec in (("who", who), ("conv", conv)):
        if spec is not None and not callable(spec) and \
                (not isinstance(spec, str) or not spec):
            raise TypeError("idem: agent_tool(): %s must be a non-empty str or a"
                            " function of the framework's context, not %s"
                            % (what, _describe(spec)))
    if context == "mcp" and who is None:
        raise TypeError("idem: agent_tool(context='mcp'): MCP has no user: give"
                        " who='...' (a str, or a function of the Context)")

    def wrap(body: Callable[..., Any]) -> Any:
        tool = calls.tool(kind=kind, name=name, keyargs=keyargs,
                          serializer=serializer)(body)
        ser = _serializer_for(serializer, body, tool.name)
        return _make(calls, tool, body, str(context), ctxdef, who, conv, wait, ser)

    return wrap(fn) if fn is not None else wrap


def _make(calls: idem.Calls, tool: Any, body: Callable[..., Any], context: str,
          ctxdef: _Context, who: Any, conv: Any, wait: float,
          ser: Optional[idem.Serializer]) -> Any:
    annotation, where = ctxdef.kind()
    tname = tool.name
    # The body's own parameters, less the connection (local) or the key
    # (external), with their annotations resolved in the body's module.
    try:
        hints = typing.get_type_hints(body)
    except Exception:
        hints = {}
    params = list(inspect.signature(body).parameters.values())
    if tool.kind == "local":
        params = params[1:]
    else:
        params = [p for p in params if p.name != "idempotency_key"]
    params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in params]
    taken = {p.name for p in params}
    cname = ctxdef.param
    while cname in taken:
        cname = "_" + cname
    cparam = _P(cname, _P.POSITIONAL_OR_KEYWORD, annotation=annotation)
    extra: List[inspect.Parameter] = []
    if context == "mcp" and conv is None:
        if "conversation" in taken:
            raise TypeError("idem: tool %s: context='mcp' adds the argument"
                            " conversation (the conv of the key); the tool has"
                            " one already: rename it" % tname)
        extra = [_P("conversation", _P.POSITIONAL_OR_KEYWORD, annotation=str)]
    if where == "first":
        plist = [cparam] + params
    else:
        # Keyword-only after *args / **kwargs; the context before **kwargs.
        plist = extra + [p for p in params if p.kind != _P.VAR_KEYWORD]
        kw = [p for p in params if p.kind == _P.VAR_KEYWORD]
        ckind = _P.KEYWORD_ONLY if any(p.kind in (_P.KEYWORD_ONLY, _P.VAR_POSITIONAL)
                                       for p in plist) else _P.POSITIONAL_OR_KEYWORD
        if ckind == _P.POSITIONAL_OR_KEYWORD and any(p.default is not _P.empty
                                                     for p in plist):
            ckind = _P.KEYWORD_ONLY
        plist = plist + [cparam.replace(kind=ckind)] + kw
    if context == "mcp":
        ret: Any = importlib.import_module("mcp.types").CallToolResult
    else:
        ret = str if context == "openai-agents" else Any
    sig = inspect.Signature(plist, return_annotation=ret)

    def split(a: Tuple[Any, ...], kw: Dict[str, Any]) -> Tuple[Any, Any, Any, Dict[str, Any]]:
        bound = sig.bind(*a, **kw)
        got = dict(bound.arguments)
        ctx = got.pop(cname, None)
        conversation = got.pop("conversation", None) if extra else None
        args: Dict[str, Any] = {}
        for p in params:
            if p.name not in got:
                continue
            if p.kind == _P.VAR_KEYWORD:
                args.update(got[p.name])
            else:
                args[p.name] = got[p.name]
        w = _party(who if who is not None else ctxdef.who, "who", tname,
                   ctxdef.hint, ctx)
        cv = conv if conv is not None else \
            ((lambda _c: conversation) if extra else ctxdef.conv)
        c = _party(cv, "conv", tname, ctxdef.hint, ctx)
        return ctx, w, c, args

    # The answer in the framework's carrier.  The Agents SDK hands the model
    # str() of what a tool returns: a dict would reach it as Python's repr,
    # so it gets the JSON text; MCP, a CallToolResult.
    def carry(body: Dict[str, Any]) -> Any:
        if context == "mcp":
            return _mcp_result(body)
        if context == "openai-agents":
            return json.dumps(body, ensure_ascii=False, default=_plain)
        return body

    def done(outcome: idem.Outcome) -> Any:
        return carry(_done(outcome, ser))

    # wait_outcome() gives the recorded JSON: the tool's run() gives it
    # through the serializer's from_json (which _done undoes).
    def waited(outcome: idem.Outcome) -> idem.Outcome:
        if ser is None:
            return outcome
        return outcome._replace(result=ser.from_json(outcome.result))

    def failed(e: BaseException) -> Any:
        if isinstance(e, idem.CallError):
            return carry(_answer(e))
        return carry(_not_sent(e))          # MCP only: NotSent

    if inspect.iscoroutinefunction(tool):
        async def call(*a: Any, **kw: Any) -> Any:
            _, w, c, args = split(a, kw)
            try:
                outcome = await tool.run(w, c, **args)
            except idem.CallError as e:
                if not isinstance(e, idem.InProgress) or wait == 0:
                    return failed(e)
                try:
                    outcome = waited(await _wait_async(calls, e.key, wait))
                except idem.CallError as e2:
                    return failed(e2)
            except idem.NotSent as e:
                if context != "mcp":
                    raise
                return failed(e)
            return done(outcome)
        wrapper: Any = call
    else:
        def call_sync(*a: Any, **kw: Any) -> Any:
            _, w, c, args = split(a, kw)
            try:
                outcome = tool.run(w, c, **args)
            except idem.CallError as e:
                if not isinstance(e, idem.InProgress) or wait == 0:
                    return failed(e)
                try:
                    outcome = waited(calls.wait_outcome(e.key, wait))
                except idem.CallError as e2:
                    return failed(e2)
            except idem.NotSent as e:
                if context != "mcp":
                    raise
                return failed(e)
            return done(outcome)
        wrapper = call_sync
    wrapper.__name__ = tname
    wrapper.__qualname__ = tname
    wrapper.__doc__ = body.__doc__
    wrapper.__module__ = getattr(body, "__module__", None)
    wrapper.__signature__ = sig
    wrapper.__annotations__ = {p.name: p.annotation for p in plist
                               if p.annotation is not _P.empty}
    wrapper.__annotations__["return"] = ret
    wrapper.tool = tool
    return wrapper


async def _wait_async(calls: idem.Calls, key: str, timeout: float) -> idem.Outcome:
    """calls.wait_outcome() that awaits between its polls."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return calls.wait_outcome(key, 0)
        except idem.InProgress:
            if time.monotonic() >= deadline:
                raise
        await asyncio.sleep(0.05)
