# SPDX-License-Identifier: MIT
"""Pydantic AI's FunctionModel for tests, playing a Script
(../harness/script.py): the ToolReturnParts of the last request are what
the model was handed since its last turn; it answers the script's next turn
as ToolCallParts or a TextPart."""
from pydantic_ai.messages import (ModelRequest, ModelResponse, RetryPromptPart, TextPart,
                                  ToolCallPart, ToolReturnPart)
from pydantic_ai.models.function import FunctionModel

from harness.script import parsed


def scripted(script):
    def respond(messages, info):
        seen = []
        last = messages[-1] if messages else None
        if isinstance(last, ModelRequest):
            for part in last.parts:
                if isinstance(part, ToolReturnPart):
                    seen.append({"id": part.tool_call_id, "name": part.tool_name,
                                 "output": parsed(part.content)})
                elif isinstance(part, RetryPromptPart) and part.tool_name:
                    seen.append({"id": part.tool_call_id, "name": part.tool_name,
                                 "output": {"error": part.model_response()}})
        turn = script.next(seen)
        if turn.text is not None:
            return ModelResponse(parts=[TextPart(turn.text)])
        return ModelResponse(parts=[ToolCallPart(c["name"], c["args"], tool_call_id=c["id"])
                                    for c in turn.calls])
    return FunctionModel(respond)
