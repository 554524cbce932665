# SPDX-License-Identifier: MIT
"""idem: idempotent tool calls on SQLite -- claim, then act; a duplicate replays.

    import sqlite3, idem

    conn = sqlite3.connect("app.db", isolation_level=None)   # recommended
    calls = idem.Calls(conn)            # loads the extension, creates "calls"

    @calls.tool(kind="local")           # a write into this same database
    def place_order(db, sku, qty):
        cur = db.execute("INSERT INTO orders(sku, qty) VALUES(?, ?)", (sku, qty))
        return {"order": cur.lastrowid}

    @calls.tool(kind="external")        # a write to another system
    def charge(idempotency_key, cents):
        ...  # send with the header  Idempotency-Key: <idempotency_key>
        return {"charge": "ch_1"}

    place_order(who="alice", conv="conv-7", sku="A0001", qty=2)   # runs
    place_order(who="alice", conv="conv-7", qty=2, sku="A0001")   # replays

A call is (who, conv, tool name, arguments).  Its first arrival claims it
(an INSERT into the idem virtual table), runs the body and records what it
returned; every later arrival of the same call gets that recorded result
back without running the body.  A duplicate of a call that is still
running raises InProgress, of an external call whose outcome is not known
raises Unknown.  The protocol itself is in the extension: see
doc/contract.md of the idem repository.
"""
from __future__ import annotations

import functools
import json
import os
import sqlite3
import time
from typing import (Any, Callable, Dict, Mapping, NamedTuple, Optional,
                    Sequence, TypeVar, Union, cast, overload)

__all__ = ["load", "loadable_path", "Calls", "Result", "CallError",
           "InProgress", "Unknown", "Failed", "HEADER", "__version__"]

__version__ = "2.0.0"

HEADER = "Idempotency-Key"
"""The name of the header that an external tool sends its key in."""

F = TypeVar("F", bound=Callable[..., Any])
KeyArgs = Union[Callable[[Dict[str, Any]], Any], Sequence[str], None]


def loadable_path() -> str:
    """The path of the SQLite extension built into this package (idem.so)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "idem.so")


def load(conn: sqlite3.Connection) -> None:
    """Load the idem extension into conn (a sqlite3.Connection).

    Extension loading is switched on only while loading.  Raises
    RuntimeError when this Python's sqlite3 module cannot load extensions
    (Debian's /usr/bin/python3 can; many pyenv and python.org builds
    cannot)."""
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError(
            "idem: this Python's sqlite3 module cannot load extensions "
            "(sqlite3.Connection has no enable_load_extension); use a Python "
            "built with --enable-loadable-sqlite-extensions, such as Debian's "
            "/usr/bin/python3")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(loadable_path())
    finally:
        conn.enable_load_extension(False)


class Result(NamedTuple):
    """What a tool may return to set the call's `id` column as well as its
    result: ``return idem.Result({"order": 7}, id=7)``.  The wrapped tool
    returns the result part only."""
    result: Any
    id: Any = None


class CallError(Exception):
    """A duplicate arrival of a call that did not end in `done`.

    .key is the call's key (32 hex digits), .reply the JSON object that idem
    hands back for it (a dict: status, message, id, idempotent), .status
    its status."""

    def __init__(self, key: str, reply: Optional[Dict[str, Any]]):
        self.key = key
        self.reply: Dict[str, Any] = reply or {}
        self.status: Optional[str] = self.reply.get("status")
        super().__init__("idem: call %s is %s: %s" % (
            key, self.status, self.reply.get("message", "")))


class InProgress(CallError):
    """The call is pending: its first arrival is still running (an external
    request in flight), or its process died.  It is not run again;
    Calls.wait() polls it."""


class Unknown(CallError):
    """An external call whose request may have reached the target, but
    whose outcome we do not know (an error or a timeout after the claim).
    It is never retried: the target's records decide, and an operator
    reconciles it (UPDATE calls SET reconcile = ...)."""


class Failed(CallError):
    """A local call that failed and was kept as failed (the table option
    local_failure=keep)."""


_ERRORS = {"pending": InProgress, "unknown": Unknown, "failed": Failed}


def _dumps(value: Any) -> str:
    # idem canonicalizes the text (RFC 8785): key order and spacing do not
    # matter.  NaN and Infinity are not JSON and are refused here.
    return json.dumps(value, allow_nan=False, ensure_ascii=False,
                      separators=(",", ":"))


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Calls:
    """An idem claim table on one connection, and the tools that use it.

    ``Calls(conn, "calls", local_failure="keep", retain="30 days")`` loads
    the extension into conn when it lacks it, and creates the virtual table
    when it is missing: ``CREATE VIRTUAL TABLE IF NOT EXISTS calls USING
    idem(local_failure=keep, retain=30 days)``.  The options go to the
    extension verbatim (and are ignored when the table already exists).

    Use a Calls object from the thread that owns conn.  The connection
    works in autocommit mode (``isolation_level=None``, recommended) and in
    the sqlite3 module's default mode; idem writes BEGIN IMMEDIATE and
    COMMIT itself, and leaves no transaction open behind it.
    """

    def __init__(self, conn: sqlite3.Connection, table: str = "calls",
                 **options: Any):
        self.conn = conn
        self.table = table
        self._t = _quote(table)
        try:
            conn.execute("SELECT idem_version()").fetchone()
        except sqlite3.OperationalError:
            load(conn)
        opts = ", ".join("%s=%s" % (k, v) for k, v in options.items())
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS %s USING idem%s"
                     % (self._t, "(%s)" % opts if opts else ""))

    # ---- the parts of the protocol ------------------------------------

    def key(self, who: str, conv: str, tool: str, args: Any) -> str:
        """The key of a call: idem_key(who, conv, tool, args) (args as a
        JSON-able value, or a JSON text given as str)."""
        text = args if isinstance(args, str) else _dumps(args)
        return self.conn.execute("SELECT idem_key(?, ?, ?, ?)",
                                 (who, conv, tool, text)).fetchone()[0]

    def reply(self, key: str) -> Optional[Dict[str, Any]]:
        """The reply idem hands a duplicate of this call, or None if no
        such call is claimed."""
        row = self._row(key)
        return None if row is None else json.loads(row[1])

    def wait(self, key: str, timeout: float = 30.0,
             interval: float = 0.05) -> Any:
        """Wait for a pending call to be decided, polling every interval
        seconds; return its recorded result once it is done.  Raises
        Unknown or Failed when it ends so, InProgress when it is still
        pending after timeout seconds, and KeyError when no such call is
        claimed (never claimed, rolled back, released, or purged)."""
        if self.conn.in_transaction:
            raise RuntimeError("idem: wait() needs a connection outside a "
                               "transaction (it must see other commits)")
        deadline = time.monotonic() + timeout
        while True:
            row = self._row(key)
            if row is None:
                raise KeyError(key)
            if row[0] != "pending" or time.monotonic() >= deadline:
                return self._replay(key, row)
            time.sleep(interval)

    # ---- the decorator ----------------------------------------------------

    @overload
    def tool(self, fn: F) -> F: ...

    @overload
    def tool(self, *, kind: str = "local", name: Optional[str] = None,
             keyargs: KeyArgs = None) -> Callable[[F], F]: ...

    def tool(self, fn: Optional[F] = None, *, kind: str = "local",
             name: Optional[str] = None, keyargs: KeyArgs = None) -> Any:
        """Make fn an idempotent tool, called as ``tool(who, conv, **args)``
        (who and conv by position or by name) and returning the recorded
        result.

        kind="local" (a write into this database): fn(conn, **args) runs
        inside the claim's transaction, and the claim, fn's writes and the
        recorded result commit together.  fn must not COMMIT or ROLLBACK.
        If fn raises, its writes are rolled back, the call is recorded as
        failed (which releases the claim, so a retry runs again; or keeps
        it with local_failure=keep) and the exception propagates.  If conn
        is already inside a transaction, the call runs in a SAVEPOINT of it
        and commits with it.

        kind="external" (a write to another system): the claim commits
        first, then fn(idempotency_key=<header value>, **args) runs; send
        the value as the Idempotency-Key header (``headers={idem.HEADER:
        idempotency_key}``).  Its result is recorded as done.  If fn raises,
        the request may have arrived anyway: the call is recorded as unknown
        and Unknown is raised (the original exception is its __cause__);
        it is never run again.

        A duplicate arrival never runs fn: it returns the first arrival's
        result, or raises InProgress, Unknown or Failed.  fn returns any
        JSON-able value, or Result(value, id=...) to set the id column.

        name: the tool's name in the key (default: fn.__name__).
        keyargs: the arguments that name the call, when some of them may
        change on a retry without changing the write: a list of argument
        names, or a function of the args dict returning a JSON-able value.
        The key is then idem_key(who, conv, tool, keyargs); all the args are
        stored.
        """
        if kind not in ("local", "external"):
            raise ValueError("idem: kind must be 'local' or 'external', not %r"
                             % (kind,))

        def wrap(fn: F) -> F:
            tname = name or fn.__name__

            @functools.wraps(fn)
            def call(who: str, conv: str, **args: Any) -> Any:
                args_json = _dumps(args)
                ka = _keyargs(keyargs, args)
                key = self.key(who, conv, tname,
                               args_json if ka is None else ka)
                row = (who, conv, tname, args_json, kind, ka)
                if kind == "local":
                    return self._local(fn, key, row, args)
                return self._external(fn, key, row, args)

            def key_of(who: str, conv: str, **args: Any) -> str:
                ka = _keyargs(keyargs, args)
                return self.key(who, conv, tname,
                                _dumps(args) if ka is None else ka)

            call.key = key_of  # type: ignore[attr-defined]
            return cast(F, call)

        return wrap(fn) if fn is not None else wrap

    # ---- inside -------------------------------------------------------------

    def _row(self, key: str) -> Optional[tuple]:
        return self.conn.execute(
            "SELECT status, reply, id, result FROM %s WHERE key = ? AND member = 0"
            % self._t, (key,)).fetchone()

    def _replay(self, key: str, row: Optional[tuple]) -> Any:
        if row is None:
            # Only a claim that someone holds is ignored; there is a row.
            raise RuntimeError("idem: the claim of %s was ignored, yet the "
                               "call is not there" % key)
        status, reply, _id, result = row
        if status == "done":
            return None if result is None else json.loads(result)
        raise _ERRORS.get(status, CallError)(
            key, json.loads(reply) if reply else None)

    def _claim(self, row: tuple) -> bool:
        """INSERT OR IGNORE the claim; True when this arrival owns it."""
        who, conv, tool, args, kind, ka = row
        if ka is None:
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO %s(who, conv, tool, args, kind)"
                " VALUES(?, ?, ?, ?, ?)" % self._t, (who, conv, tool, args, kind))
        else:
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO %s(who, conv, tool, args, kind, keyargs)"
                " VALUES(?, ?, ?, ?, ?, ?)" % self._t,
                (who, conv, tool, args, kind, ka))
        # rowcount is sqlite3_changes() of the INSERT: 1 = ours, 0 = held.
        return cur.rowcount == 1

    def _record(self, key: str, status: str, value: Any = None,
                note: Optional[str] = None) -> Any:
        """UPDATE the main row; returns the result as recorded (decoded)."""
        if isinstance(value, Result):
            value, id_ = value.result, value.id
        else:
            id_ = None
        text = None if status != "done" else _dumps(value)
        self.conn.execute(
            "UPDATE %s SET status = ?, id = ?, result = ?, note = ?"
            " WHERE key = ? AND member = 0" % self._t,
            (status, id_, text, note, key))
        return None if text is None else json.loads(text)

    def _local(self, fn: Callable[..., Any], key: str, row: tuple,
               args: Dict[str, Any]) -> Any:
        conn = self.conn
        nested = conn.in_transaction
        conn.execute("SAVEPOINT idem_call" if nested else "BEGIN IMMEDIATE")
        open_ = True

        def end(commit: bool) -> None:
            nonlocal open_
            if nested:
                if not commit:
                    conn.execute("ROLLBACK TO idem_call")
                conn.execute("RELEASE idem_call")
            else:
                conn.execute("COMMIT" if commit else "ROLLBACK")
            open_ = False

        try:
            if not self._claim(row):
                replay = self._row(key)
                end(False)
                return self._replay(key, replay)
            conn.execute("SAVEPOINT idem_tool")
            try:
                value = fn(conn, **args)
            except Exception as e:
                try:
                    self._fail_local(key, e)
                    end(True)
                except sqlite3.Error:
                    pass        # the finally below rolls all of it back
                raise
            conn.execute("RELEASE idem_tool")
            result = self._record(key, "done", value)
            end(True)
            return result
        finally:
            if open_:
                # An error of the database, or an interrupt: all of it goes,
                # the claim too (a retry runs again).
                try:
                    if nested:
                        conn.execute("ROLLBACK TO idem_call")
                        conn.execute("RELEASE idem_call")
                    elif conn.in_transaction:
                        conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass

    def _fail_local(self, key: str, error: BaseException) -> None:
        """Undo the tool's writes and record the call as failed (released,
        or kept with local_failure=keep)."""
        self.conn.execute("ROLLBACK TO idem_tool")
        self.conn.execute("RELEASE idem_tool")
        self._record(key, "failed", note="%s: %s" % (type(error).__name__, error))

    def _external(self, fn: Callable[..., Any], key: str, row: tuple,
                  args: Dict[str, Any]) -> Any:
        conn = self.conn
        if conn.in_transaction:
            raise RuntimeError(
                "idem: an external tool cannot run inside an open transaction: "
                "its claim must commit before the request leaves; commit first")
        conn.execute("BEGIN IMMEDIATE")
        try:
            if not self._claim(row):
                replay = self._row(key)
                conn.execute("ROLLBACK")
                return self._replay(key, replay)
            header = conn.execute("SELECT idem_header(?)", (key,)).fetchone()[0]
            conn.execute("COMMIT")       # the claim is durable before
        except BaseException:            # anything leaves this process
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        value_ = header.split(": ", 1)[1]          # '"<key>"'
        try:
            value = fn(idempotency_key=value_, **args)
        except BaseException as e:
            # The request may have reached the target: 'failed' on an
            # external call is recorded as 'unknown', never retried.
            self._in_txn(lambda: self._record(
                key, "failed", note="%s: %s" % (type(e).__name__, e)))
            if not isinstance(e, Exception):
                raise                    # KeyboardInterrupt, SystemExit
            raise Unknown(key, self.reply(key)) from e
        # If this fails (the database stays locked), the call stays pending:
        # duplicates are told it is in progress.
        return self._in_txn(lambda: self._record(key, "done", value))

    def _in_txn(self, work: Callable[[], Any]) -> Any:
        """Run work in its own BEGIN IMMEDIATE ... COMMIT."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            out = work()
            conn.execute("COMMIT")
            return out
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def _keyargs(spec: KeyArgs, args: Mapping[str, Any]) -> Optional[str]:
    """The JSON text of the arguments that name the call, or None."""
    if spec is None:
        return None
    if callable(spec):
        return _dumps(spec(dict(args)))
    if isinstance(spec, str):
        raise TypeError("idem: keyargs is a list of argument names or a "
                        "function, not a string")
    return _dumps({n: args[n] for n in spec if n in args})
