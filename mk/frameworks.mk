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
# runs their node:test tests.  make test does not run them.
test-frameworks: all node-env  ## the agent-framework examples (AI SDK, LangChain.js, OpenAI Agents) with their test models
	tclsh test/frameworks.tcl
