# SPDX-License-Identifier: MIT
"""The tests of the MCP server example (../harness/suite.py), its tools
called through the MCP SDK's Client (model.py), and the server on stdio.

    python -m pytest        (or python -m unittest, in this folder)
"""
import os
import sys

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
