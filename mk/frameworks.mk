# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: test-frameworks

# ---- the agent frameworks: bindings/node/examples/<framework> ----------------
# idem inside the Vercel AI SDK (ai@5), LangChain.js (@langchain/core and
# LangGraph) and the OpenAI Agents SDK, each example driven by its
# framework's test model (bindings/node/examples/harness/suite.js):
# repeated calls, runs killed mid-way and run again, two runs at once, a
# target that times out.  test/frameworks.tcl installs the three into
# build/frameworks (npm workspaces; better-sqlite3 is build/node-env's, so
# nothing is compiled; npm runs again only when a package.json changes) and
# runs their node:test tests.  The Python ones, bindings/python/examples/
# <framework> (the OpenAI Agents SDK, LangChain/LangGraph, Pydantic AI, an
# MCP server; their harness tells the same stories), run beside them with
# pytest, from the python3 first on PATH as users get them: the clone's
# wheel (make wheel) installed as sqlite-idem[apsw] from build/dist and
# build/py-wheels (make py-wheels) into build/py-frameworks/venv on each
# run, offline and with no compiler, the frameworks behind it in a venv of
# that python installed from the pinned
# bindings/python/examples/requirements.txt once per machine and hash of
# that file (~/.cache/idem/py-frameworks-<hash>: a fresh clone reuses it).
# make test does not run them.
test-frameworks: all node-env wheel py-wheels $(BUILD)/.deps-bindings  ## the agent-framework examples, Node (AI SDK, LangChain.js, OpenAI Agents) and Python (OpenAI Agents, LangGraph, Pydantic AI, MCP), with their test models
	tclsh test/frameworks.tcl
