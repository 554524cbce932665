# SPDX-License-Identifier: MIT
"""The model's side of an MCP conversation, for tests: a Script
(../harness/script.py) whose tool calls go to the server through the MCP
SDK's own Client, in process (its in-memory transport).  What the model is
handed at each turn is the structured content of each tool's answer."""
from mcp import Client


class ScriptedClient:
    def __init__(self, script):
        self.script = script

    async def converse(self, server, conversation):
        async with Client(server) as client:
            seen = []
            while True:
                turn = self.script.next(seen)
                if turn.text is not None:
                    return
                seen = []
                for c in turn.calls:
                    result = await client.call_tool(
                        c["name"], {"conversation": conversation, **c["args"]})
                    seen.append({"id": c["id"], "name": c["name"],
                                 "output": result.structured_content})


def scripted(script):
    return ScriptedClient(script)
