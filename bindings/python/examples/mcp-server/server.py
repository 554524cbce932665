# SPDX-License-Identifier: MIT
"""The shop's MCP server on stdio (shop.py):

    IDEM_DB=shop.db TARGET_URL=http://127.0.0.1:8000/charges IDEM_WHO=alice python server.py

Environment: IDEM_DB (default idem-mcp.db), TARGET_URL, IDEM_WHO (the
principal, default "mcp-user"), TARGET_TIMEOUT (s, default 5), WAIT (s: how
long a repeat of a call in progress waits for it, default 20)."""
import os

import shop

if __name__ == "__main__":
    s = shop.open(os.environ.get("IDEM_DB", "idem-mcp.db"),
                  target_url=os.environ.get("TARGET_URL", "http://127.0.0.1:8000/charges"),
                  timeout=float(os.environ.get("TARGET_TIMEOUT", 5)),
                  wait=float(os.environ.get("WAIT", 20)), who=os.environ.get("IDEM_WHO"))
    s.server.run("stdio")
