# SPDX-License-Identifier: MIT
"""The model's side of a conversation, for the frameworks' test models: a
script of turns, and what the model was handed at each turn (as
bindings/node/examples/harness/script.js).

    script = Script([
        [{"name": "place_order", "args": {"sku": "A0001", "qty": 2}}],  # turn 0: tool calls
        [{"name": "place_order", "args": {"qty": 2, "sku": "A0001"}}],  # turn 1: the same again
        "Ordered.",                                                      # turn 2: the final text
    ])

Each example's model.py wraps a Script in its framework's own test model
(an OpenAI Agents SDK Model, a LangChain chat model, a Pydantic AI
FunctionModel, an MCP client).  At each turn the framework asks the model
for its next message; the model hands the script the tool results that it
was given since its last turn (`seen`: [{"id", "name", "output"}]), and the
script answers with the turn's tool calls, each with a new call id (as a
model gives a repeated call a new id), or with its text.  script.turns
records it all.  A turn past the end of the script is the text "done".
"""
import importlib.util
import inspect
import asyncio
import json
import os
import secrets
import threading


class Turn:
    def __init__(self, seen):
        self.seen = seen
        self.calls = []
        self.text = None

    def as_json(self):
        return {"seen": self.seen, "calls": self.calls, "text": self.text}


class Script:
    def __init__(self, turns, on_turn=None, hold_at=None):
        self.script = turns
        self.turns = []
        self.on_turn = on_turn or (lambda i: None)
        self.hold_at = hold_at

    def next(self, seen):
        """The model's next turn, given what it was handed since its last."""
        i = len(self.turns)
        step = self.script[i] if i < len(self.script) else "done"
        turn = Turn(seen)
        if isinstance(step, str):
            turn.text = step
        else:
            turn.calls = [{"id": "call_" + secrets.token_hex(6), "name": c["name"],
                           "args": c["args"]} for c in step]
        self.turns.append(turn)
        self.on_turn(i)
        if i == self.hold_at:
            threading.Event().wait()        # never answers: a run held here is killed
        return turn


def parsed(output):
    """A tool result as the model reads it: the JSON value, or the text."""
    if not isinstance(output, str):
        return output
    try:
        return json.loads(output)
    except ValueError:
        return output


def load(example_dir):
    """An example's (shop, model) modules, by path."""
    name = os.path.basename(os.path.abspath(example_dir)).replace("-", "_")
    mods = []
    for part in ("shop", "model"):
        spec = importlib.util.spec_from_file_location(
            "%s_%s" % (name, part), os.path.join(example_dir, part + ".py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mods.append(mod)
    return mods


def converse(shop, model, file, turns, user="alice", conversation="conv-1",
             target_url=None, timeout=5.0, wait=0.0, hold_at=None, on_turn=None,
             prompt="Order and pay, please."):
    """One run of a conversation: the example's shop on the database file,
    its framework's test model on a Script of turns, and the framework's
    own loop (shop.chat).  Returns the Script's turns."""
    script = Script(turns, on_turn=on_turn, hold_at=hold_at)
    s = shop.open(file, target_url=target_url, timeout=timeout, wait=wait)
    try:
        ran = s.chat(model.scripted(script), user=user, conversation=conversation,
                     prompt=prompt)
        if inspect.isawaitable(ran):
            asyncio.run(ran)
    finally:
        s.close()
    return script.turns
