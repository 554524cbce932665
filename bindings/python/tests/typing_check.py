# SPDX-License-Identifier: MIT
"""Checked by mypy --strict (test/bindings.test), never run: the types a
user's code sees through @calls.tool are the wrapper's, not the body's.
Each "type: ignore[code]" marks a mistake that mypy must find (strict mode
reports an ignore that nothing needed)."""
import sqlite3
from typing import Any, Dict, Optional

import idem

try:
    from typing import assert_type
except ImportError:                     # Python < 3.11
    from typing_extensions import assert_type

calls = idem.Calls(sqlite3.connect("app.db", isolation_level=None))
conn = idem.connect("app.db")            # sqlite3's, or APSW's behind ApswConnection
idem.Calls(conn, "other")
assert_type(conn.execute("SELECT 1").fetchone(), Any)
idem.load(idem.ApswConnection("app.db", isolation_level=None))
idem.connect("app.db", isolation_level="IMMEDIATE", driver="apsw")


@calls.tool
def place_order(db: sqlite3.Connection, sku: str, qty: int) -> Dict[str, int]:
    return {"order": 1}


@calls.tool(kind="external", keyargs=["cents"])
def charge(idempotency_key: str, cents: int) -> Dict[str, str]:
    return {"charge": "ch_1"}


@calls.tool(kind="external")
async def send(idempotency_key: str, to: str) -> int:
    return 1


@calls.tool(kind="external", honours_key=True)
def resent(idempotency_key: str, cents: int) -> int:
    return cents


assert_type(resent.run("alice", "conv-7", cents=5).sends, Optional[int])
calls.resend_wait = 5.0


assert_type(place_order, idem.Tool[Dict[str, int]])
assert_type(charge, idem.Tool[Dict[str, str]])
assert_type(send, idem.AsyncTool[int])
assert_type(place_order("alice", "conv-7", sku="A0001", qty=2), Dict[str, int])
assert_type(place_order.run("alice", "conv-7", sku="A0001", qty=2), idem.Outcome)
assert_type(charge.key("alice", "conv-7", cents=500), str)
n: int = place_order("alice", "conv-7", sku="A0001", qty=2)  # type: ignore[assignment]
place_order(sku="A0001", qty=2)                              # type: ignore[call-arg]
place_order(1.5, "conv-7", sku="A0001")                      # type: ignore[arg-type]


async def main() -> None:
    assert_type(await send("alice", "conv-7", to="bob"), int)
    assert_type(await send.run("alice", "conv-7", to="bob"), idem.Outcome)
    s: str = await send("alice", "conv-7", to="bob")         # type: ignore[assignment]
