# SPDX-License-Identifier: MIT
"""The tests of the LangChain / LangGraph example (../harness/suite.py), driven
by a chat model (model.py) through a LangGraph graph with a ToolNode.

    python -m pytest        (or python -m unittest, in this folder)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness.suite import stories     # noqa: E402

Test = stories(__file__)
