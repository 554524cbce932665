# SPDX-License-Identifier: MIT
"""A LangChain chat model for tests, playing a Script (../harness/script.py).
langchain-core's GenericFakeChatModel answers from a fixed iterator of
messages; this one is a GenericFakeChatModel whose _generate reads the tool
results at the end of the messages (what the model was handed since its
last turn) and answers the script's next turn as an AIMessage."""
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from harness.script import parsed


class ScriptedChatModel(GenericFakeChatModel):
    script: Any = None

    def bind_tools(self, tools, **kwargs):
        return self                         # the script knows its tools

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        seen = []
        for m in reversed(messages):
            if not isinstance(m, ToolMessage):
                break
            out = parsed(m.content)
            seen.insert(0, {"id": m.tool_call_id, "name": m.name,
                            "output": {"error": out} if m.status == "error" else out})
        turn = self.script.next(seen)
        if turn.text is not None:
            message = AIMessage(content=turn.text)
        else:
            message = AIMessage(content="", tool_calls=[
                {"id": c["id"], "name": c["name"], "args": c["args"], "type": "tool_call"}
                for c in turn.calls])
        return ChatResult(generations=[ChatGeneration(message=message)])


def scripted(script):
    return ScriptedChatModel(messages=iter(()), script=script)
