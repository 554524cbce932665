# SPDX-License-Identifier: MIT
"""A Model of the OpenAI Agents SDK (its interface: get_response,
stream_response) for tests, playing a Script (../harness/script.py): the
function_call_output items at the end of the request's input are what the
model was handed since its last turn; it answers the script's next turn as
function_call items or an assistant message."""
from agents import Model, ModelResponse, Usage
from agents.testing.model import assistant_message, function_call

from harness.script import parsed


class ScriptedModel(Model):
    def __init__(self, script):
        self.script = script
        self.names = {}                     # call id -> tool name

    async def get_response(self, system_instructions, input, model_settings, tools,
                           output_schema, handoffs, tracing, **kwargs):
        items = input if isinstance(input, list) else []
        seen = []
        for item in reversed(items):
            if not isinstance(item, dict) or item.get("type") != "function_call_output":
                break
            cid = item.get("call_id")
            seen.insert(0, {"id": cid, "name": self.names.get(cid),
                            "output": parsed(item.get("output"))})
        turn = self.script.next(seen)
        if turn.text is not None:
            out = [assistant_message(turn.text)]
        else:
            out = []
            for c in turn.calls:
                self.names[c["id"]] = c["name"]
                out.append(function_call(c["name"], c["args"], call_id=c["id"]))
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("this test model does not stream: use Runner.run()")


def scripted(script):
    return ScriptedModel(script)
