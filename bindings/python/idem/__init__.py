# SPDX-License-Identifier: MIT
"""idem: idempotent tool calls on SQLite -- claim, then act; a duplicate replays.

    import sqlite3, idem

    conn = sqlite3.connect("app.db", isolation_level=None)   # recommended
    conn.execute("CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, sku, qty)")
    calls = idem.Calls(conn)            # loads the extension, creates "calls"

    @calls.tool(kind="local")           # a write into this same database
    def place_order(db, sku, qty):
        cur = db.execute("INSERT INTO orders(sku, qty) VALUES(?, ?)", (sku, qty))
        return {"order": cur.lastrowid}

    @calls.tool(kind="external")        # a write to another system
    def charge(idempotency_key, cents):
        ...  # send with the header  Idempotency-Key: <idempotency_key>
        return {"charge": "ch_1"}

    place_order("alice", "conv-7", sku="A0001", qty=2)        # runs
    place_order("alice", "conv-7", qty=2, sku="A0001")        # replays
    place_order.run("alice", "conv-7", sku="A0001", qty=2)    # Outcome(..., replayed=True)

A call is (who, conv, tool name, arguments).  Its first arrival claims it
(an INSERT into the idem virtual table), runs the body and records what it
returned; every later arrival of the same call gets that recorded result
back without running the body.  A duplicate of a call that is still
running raises InProgress, of an external call whose outcome is not known
raises Unknown.  No call is left pending by the wrapper: whatever the body
returns or raises, the call ends done, failed (released or kept), unknown
or released, and the caller is told which.  The protocol itself is in the
extension: see doc/contract.md of the idem repository; the package's own
rules are in its README.md.
"""
from __future__ import annotations

import asyncio
import functools
import inspect
import json
import math
import os
import re
import secrets
import socket
import sqlite3
import threading
import time
import weakref
from typing import (TYPE_CHECKING, Any, Awaitable, Callable, Dict, List,
                    NamedTuple, Optional, Sequence, Set, Tuple, TypeVar,
                    Union, cast, overload)

if TYPE_CHECKING:                               # pragma: no cover
    from typing import Protocol
else:
    try:
        from typing import Protocol
    except ImportError:                         # Python 3.7
        Protocol = object

__all__ = ["load", "loadable_path", "Calls", "Result", "Outcome", "Tool",
           "AsyncTool", "CallError", "InProgress", "Unknown", "Failed",
           "NotSent", "Lost", "NotRecorded", "Unstorable", "HEADER",
           "__version__"]

__version__ = "2.0.0"

HEADER = "Idempotency-Key"
"""The name of the header that an external tool sends its key in."""

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
KeyArgs = Union[Callable[[Dict[str, Any]], Any], Sequence[str], None]

# The table options of the extension (doc/contract.md section 5, 9-12):
# the two-word switches (the default first) and the durations.
_SWITCHES = {"local_failure": ("release", "keep"),
             "args_mismatch": ("error", "replay"),
             "durability": ("full", "relaxed")}
_DURATIONS = ("retain", "stale_after")
_UNITS = {"second": 1000, "minute": 60000, "hour": 3600000, "day": 86400000}
_NOTE_MAX = 2000                # the longest note the wrapper writes


def loadable_path() -> str:
    """The path of the SQLite extension built into this package (idem.so)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "idem.so")


def load(conn: sqlite3.Connection) -> None:
    """Load the idem extension into conn (a sqlite3.Connection).

    Extension loading is switched on only while loading.  Raises
    RuntimeError when this Python's sqlite3 module cannot load extensions
    (Debian's /usr/bin/python3 can; many pyenv and python.org builds
    cannot)."""
    if not isinstance(conn, sqlite3.Connection):
        raise TypeError("idem.load() needs a sqlite3.Connection, not %s"
                        % _typename(conn))
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


# ---- what a tool returns, and what a caller gets ----------------------------

class Result(NamedTuple):
    """What a tool may return to set the call's `id` column as well as its
    result: ``return idem.Result({"order": 7}, id=7)``.  The wrapped tool
    returns the result part only."""
    result: Any
    id: Any = None


class Outcome(NamedTuple):
    """What ``tool.run(who, conv, **args)`` returns: the recorded result
    (decoded from its JSON), the call's id column, its key, and replayed:
    False for the arrival that ran the tool, True for a duplicate that got
    the first arrival's result without running it (the reply's
    "idempotent": true)."""
    result: Any
    id: Any
    key: str
    replayed: bool


# ---- errors -----------------------------------------------------------------

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
    whose outcome we do not know (an error or a timeout after the claim,
    or a result that could not be stored).  It is never retried: the
    target's records decide, and an operator reconciles it
    (Calls.reconcile)."""


class Failed(CallError):
    """A local call that failed and was kept as failed (the table option
    local_failure=keep)."""


class NotSent(Exception):
    """Raised by an external tool to say that its request did not leave
    (a bad argument found before sending, a refused connection): the
    wrapper releases the call (reconcile = 'not_sent'), so that a retry
    runs, and raises this NotSent on to the caller with .key set.

        raise idem.NotSent("the card number is malformed")
        raise idem.NotSent("no route to the provider") from err
        raise idem.NotSent(cause=err)

    Raise it only when you know nothing left: a request that may have
    arrived must stay unknown."""

    key: Optional[str] = None

    def __init__(self, message: str = "the request was not sent",
                 cause: Optional[BaseException] = None):
        super().__init__(message)
        if cause is not None:
            self.__cause__ = cause


class Lost(Exception):
    """The call was no longer this arrival's when it came to record the
    outcome: it was released meanwhile (reconciled as not_sent or
    not_arrived, or purged) and maybe claimed again by another arrival.
    Nothing was recorded; .key is the key, .status what this arrival
    meant to record, .result the tool's result (None if it had none)."""

    def __init__(self, key: str, status: str, result: Any = None):
        self.key, self.status, self.result = key, status, result
        super().__init__(
            "idem: call %s was released while this arrival held it (reconciled"
            " or purged, and maybe claimed again by another arrival): its"
            " outcome (%s) was not recorded; the target's records decide"
            % (key, status))


class NotRecorded(Exception):
    """The outcome of an external call could not be recorded: the database
    stayed busy past Calls.record_timeout, or failed.  The call stays
    pending: its duplicates raise InProgress until it is reconciled
    (Calls.reconcile(key, 'arrived', result=...) with .result, or
    'not_sent').  .key, .status (what was to be recorded) and .result."""

    def __init__(self, key: str, status: str, result: Any, why: str):
        self.key, self.status, self.result = key, status, result
        super().__init__(
            "idem: the outcome of call %s (%s) could not be recorded: %s; the"
            " call stays pending: reconcile it, e.g."
            " calls.reconcile(%r, 'arrived', result=...)"
            % (key, status, why, key))


class Unstorable(TypeError):
    """A local tool returned a result that cannot be stored (not JSON: a
    datetime, a Decimal, a set, bytes, NaN, a circular structure...).  Its
    writes were rolled back and the call recorded as failed: released
    (.status 'released': a retry runs again) or kept (.status 'failed',
    local_failure=keep).  The original error is the __cause__.  (An
    external tool's unstorable result raises Unknown instead: its request
    was made.)"""

    def __init__(self, key: str, status: str, message: str):
        self.key, self.status = key, status
        super().__init__(message)


_ERRORS = {"pending": InProgress, "unknown": Unknown, "failed": Failed}


# ---- JSON -------------------------------------------------------------------

def _typename(value: Any) -> str:
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else \
        "%s.%s" % (t.__module__, t.__qualname__)


def _why_not_json(value: Any, path: str, depth: int = 0,
                  seen: Optional[Set[int]] = None) -> Optional[str]:
    """Where value stops being JSON, in words ("qty is NaN"), or None."""
    if seen is None:
        seen = set()
    if depth > 900:
        return "%s is nested too deeply (more than 900 levels)" % (
            re.split(r"[\[(]", path)[0] or "a value")
    if value is None or isinstance(value, (bool, int)):
        return None
    if isinstance(value, float):
        if math.isnan(value):
            return "%s is NaN, which JSON has no form for" % path
        if math.isinf(value):
            return "%s is %sInfinity, which JSON has no form for" % (
                path, "-" if value < 0 else "")
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "%s holds a lone surrogate, which is not text" % path
        return None
    if isinstance(value, (dict, list, tuple)):
        if id(value) in seen:
            return "%s contains itself (a circular structure)" % path
        seen.add(id(value))
        try:
            if isinstance(value, dict):
                for k, v in value.items():
                    if not isinstance(k, (str, int, float, bool)) and k is not None:
                        return "%s has a key of type %s" % (path, _typename(k))
                    sub = str(k) if path == "" else "%s[%r]" % (path, k)
                    why = _why_not_json(v, sub, depth + 1, seen)
                    if why:
                        return why
            else:
                for i, v in enumerate(value):
                    why = _why_not_json(v, "%s[%d]" % (path, i), depth + 1, seen)
                    if why:
                        return why
        finally:
            seen.discard(id(value))
        return None
    return "%s is a %s" % (path, _typename(value))


def _dumps(value: Any) -> str:
    # idem canonicalizes the text (RFC 8785): key order and spacing do not
    # matter.  NaN and Infinity are not JSON and are refused here.
    return json.dumps(value, allow_nan=False, ensure_ascii=False,
                      separators=(",", ":"))


def _json(value: Any, what: str, path: str) -> str:
    """value as JSON text, or a TypeError/ValueError that says where it is
    not JSON: "idem: the arguments of place_order are not JSON: qty is NaN".
    what ends with its verb; path "" names the members of a dict alone."""
    try:
        text = _dumps(value)
        text.encode("utf-8")
        return text
    except (TypeError, ValueError, RecursionError) as e:
        why = _why_not_json(value, path) or str(e)
        cls = ValueError if isinstance(e, (ValueError, RecursionError)) else TypeError
        raise cls("idem: %s not JSON: %s" % (what, why)) from e


def _encode(value: Any, tname: str) -> Tuple[str, Any]:
    """A tool's return value as (result JSON text, id), or an error."""
    if isinstance(value, Result):
        value, id_ = value.result, value.id
    else:
        id_ = None
    text = _json(value, "the result of %s is" % tname, "result")
    if isinstance(id_, bool):
        id_ = int(id_)
    if isinstance(id_, int):
        if not -2**63 <= id_ < 2**63:
            raise OverflowError("idem: the id of %s does not fit SQLite's"
                                " 64-bit integer: %d" % (tname, id_))
    elif isinstance(id_, float):
        if math.isnan(id_):
            raise ValueError("idem: the id of %s is NaN" % tname)
    elif isinstance(id_, str):
        _json(id_, "the id of %s is" % tname, "id")
    elif not (id_ is None or isinstance(id_, (bytes, bytearray, memoryview))):
        raise TypeError("idem: the id of %s must be None, an int, a float, a"
                        " str or bytes, not %s" % (tname, _typename(id_)))
    return text, id_


def _decode(text: Optional[str]) -> Any:
    return None if text is None else json.loads(text)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _note(prefix: str, error: BaseException) -> str:
    text = "%s%s: %s" % (prefix, type(error).__name__, error)
    return text if len(text) <= _NOTE_MAX else text[:_NOTE_MAX - 3] + "..."


# ---- errors of the database ---------------------------------------------------

def _is_busy(e: BaseException) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED: try again later."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xff) in (5, 6)
    text = str(e)
    return "database is locked" in text or "is busy" in text or \
        "table is locked" in text


def _is_unstorable(e: BaseException) -> bool:
    """A database error that says the value cannot be stored (too big, or
    a type it cannot bind), not that the database is unwell."""
    if isinstance(e, (sqlite3.InterfaceError, sqlite3.ProgrammingError,
                      sqlite3.DataError, OverflowError, UnicodeError)):
        return True
    code = getattr(e, "sqlite_errorcode", None)
    return code is not None and (code & 0xff) == 18        # SQLITE_TOOBIG


class _NotNow(Exception):
    """The connection is inside a transaction not ours: try again later."""


# ---- one lock per connection ------------------------------------------------

_registry = threading.Lock()
_conn_locks: Dict[int, List[Any]] = {}        # id(conn) -> [RLock, users]


def _conn_lock(user: object, conn: sqlite3.Connection) -> Any:
    """The lock of conn, shared by every Calls on it (a Calls holds its
    connection, so the id stays conn's while any user is alive)."""
    key = id(conn)
    with _registry:
        entry = _conn_locks.get(key)
        if entry is None:
            entry = _conn_locks[key] = [threading.RLock(), 0]
        entry[1] += 1
    weakref.finalize(user, _conn_unlock, key)
    return entry[0]


def _conn_unlock(key: int) -> None:
    with _registry:
        entry = _conn_locks.get(key)
        if entry is not None:
            entry[1] -= 1
            if entry[1] <= 0:
                del _conn_locks[key]


_HOST = socket.gethostname()


def _token() -> str:
    """An owner token unique to one claim: host, process, 64 random bits."""
    return "%s:%d:%s" % (_HOST, os.getpid(), secrets.token_hex(8))


# ---- table options -----------------------------------------------------------

def _duration_ms(text: str) -> Optional[int]:
    """A duration as the extension reads it ("24 hours"), in ms, or None."""
    m = re.fullmatch(r"(\d+(?:\.\d*)?)[ \t]*([A-Za-z]+?)[sS]?", text)
    if not m:
        return None
    unit = _UNITS.get(m.group(2).lower())
    if unit is None:
        return None
    ms = int(float(m.group(1)) * unit + 0.5)
    return ms if ms >= 1 else None


def _option(name: str, value: Any) -> Tuple[str, Any]:
    """A table option given to Calls(), checked: (name, normalized value)."""
    if not isinstance(value, str):
        raise TypeError("idem: the table option %s must be a str (%s), not %s"
                        % (name, "e.g. '30 days'" if name in _DURATIONS else
                           " or ".join(repr(w) for w in _SWITCHES.get(name, ())),
                           _typename(value)))
    if re.search(r"[,()'\"\n\r;]", value):
        raise ValueError("idem: the table option %s=%r holds a character that"
                         " an option value cannot hold" % (name, value))
    return name, _normalize(name, value)


def _normalize(name: str, value: str) -> Any:
    v = value.strip()
    if len(v) >= 2 and v[0] in "'\"" and v[-1] == v[0]:
        v = v[1:-1]
    if name in _SWITCHES:
        w = v.lower()
        if w not in _SWITCHES[name]:
            raise ValueError("idem: the table option %s must be %s, not %r"
                             % (name, " or ".join(repr(x) for x in _SWITCHES[name]),
                                value))
        return w
    ms = _duration_ms(v)
    if ms is None:
        raise ValueError("idem: the table option %s must be a duration: a number"
                         " and a unit of seconds, minutes, hours or days, such"
                         " as '30 days', not %r" % (name, value))
    return ms


def _existing_options(sql: str, table: str) -> Dict[str, Any]:
    """The options of an existing idem table, from its CREATE VIRTUAL TABLE
    text; every option not written there has its default."""
    m = re.search(r"\busing\s+(\w+)\s*(?:\((.*)\))?\s*;?\s*$", sql or "",
                  re.IGNORECASE | re.DOTALL)
    if not m or m.group(1).lower() != "idem":
        raise ValueError("idem: the table %r exists and is not an idem table"
                         " (%s); name another table" % (table, sql))
    opts: Dict[str, Any] = {n: w[0] for n, w in _SWITCHES.items()}
    opts.update({n: None for n in _DURATIONS})
    for arg in (m.group(2) or "").split(","):
        if "=" not in arg:
            continue
        n, v = arg.split("=", 1)
        n = n.strip().lower()
        try:
            opts[n] = _normalize(n, v) if n in _SWITCHES or n in _DURATIONS \
                else v.strip()
        except ValueError:
            opts[n] = v.strip()
    return opts


def _show(name: str, value: Any) -> str:
    if value is None:
        return "no %s" % name
    if isinstance(value, int) and name in _DURATIONS:
        for unit, ms in sorted(_UNITS.items(), key=lambda u: -u[1]):
            if value % ms == 0:
                n = value // ms
                return "%s='%d %s%s'" % (name, n, unit, "" if n == 1 else "s")
    return "%s=%s" % (name, value)


# ---- typing of the wrappers ----------------------------------------------------

class Tool(Protocol[R_co]):
    """What @calls.tool makes of a plain function: called as
    ``tool(who, conv, **args)``, it returns the recorded result."""
    name: str
    kind: str

    def __call__(self, who: str, conv: str, **args: Any) -> R_co: ...
    def run(self, who: str, conv: str, **args: Any) -> Outcome: ...
    def key(self, who: str, conv: str, **args: Any) -> str: ...


class AsyncTool(Protocol[R_co]):
    """What @calls.tool makes of an ``async def`` external tool: the same
    as a Tool, awaited."""
    name: str
    kind: str

    def __call__(self, who: str, conv: str, **args: Any) -> Awaitable[R_co]: ...
    def run(self, who: str, conv: str, **args: Any) -> Awaitable[Outcome]: ...
    def key(self, who: str, conv: str, **args: Any) -> str: ...


class _Decorator(Protocol):
    @overload
    def __call__(self, fn: Callable[..., Awaitable[R]]) -> AsyncTool[R]: ...  # type: ignore[misc]
    @overload
    def __call__(self, fn: Callable[..., R]) -> Tool[R]: ...


# ---- the call's parts, prepared before the claim ---------------------------

class _Call(NamedTuple):
    key: str
    row: Tuple[Any, ...]       # who, conv, tool, args, kind, keyargs


_P = inspect.Parameter


class _Spec:
    """A tool as defined: its name, kind, body, and what its body takes."""

    def __init__(self, fn: Callable[..., Any], kind: str, name: Optional[str],
                 keyargs: KeyArgs):
        if not callable(fn):
            raise TypeError("idem: a tool is a function, not %s" % _typename(fn))
        tname = name if name is not None else getattr(fn, "__name__", None)
        if not isinstance(tname, str) or not tname:
            raise TypeError("idem: give the tool a name: @calls.tool(name=...)")
        self.fn, self.kind, self.name, self.keyargs = fn, kind, tname, keyargs
        self.first = "idempotency_key"          # the external tool's key
        self.is_async = inspect.iscoroutinefunction(fn)
        if self.is_async and kind == "local":
            raise TypeError(
                "idem: the local tool %s is an async function: a local tool's"
                " writes run inside the claim's transaction, which must not stay"
                " open across an await; make it a plain def (sqlite3 is"
                " synchronous anyway), or make it an external tool" % tname)
        self.sig: Optional[inspect.Signature] = None
        self.names: Optional[Set[str]] = None   # None: **kwargs, any name
        self.params: List[inspect.Parameter] = []
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):          # a builtin: not checked
            sig = None
        if sig is not None:
            self._check(sig)
        if keyargs is not None and not callable(keyargs):
            if isinstance(keyargs, (str, bytes)) or not isinstance(keyargs, (list, tuple)):
                raise TypeError("idem: keyargs is a list of argument names or a"
                                " function of the args dict, not %s"
                                % _typename(keyargs))
            for n in keyargs:
                if not isinstance(n, str):
                    raise TypeError("idem: keyargs names are str, not %s"
                                    % _typename(n))
                if self.names is not None and n not in self.names:
                    raise ValueError(
                        "idem: keyargs names %r, which is not an argument of the"
                        " tool %s (its arguments: %s): a name that no call"
                        " passes would leave it out of every key, and calls that"
                        " differ in it would share one"
                        % (n, tname, ", ".join(sorted(self.names)) or "none"))

    def _check(self, sig: inspect.Signature) -> None:
        params = list(sig.parameters.values())
        first = "idempotency_key"
        if self.kind == "local":
            if not params or params[0].kind not in (_P.POSITIONAL_ONLY,
                                                    _P.POSITIONAL_OR_KEYWORD,
                                                    _P.VAR_POSITIONAL):
                raise TypeError("idem: the local tool %s takes the connection as"
                                " its first parameter: def %s(db, ...)"
                                % (self.name, self.name))
            first = params[0].name
            rest = params[1:] if params[0].kind != _P.VAR_POSITIONAL else params
        else:
            if first not in sig.parameters and \
                    not any(p.kind == _P.VAR_KEYWORD for p in params):
                raise TypeError("idem: the external tool %s takes its key as the"
                                " parameter idempotency_key (to send as the %s"
                                " header): def %s(idempotency_key, ...)"
                                % (self.name, HEADER, self.name))
            rest = [p for p in params if p.name != first]
        names = set()
        for p in rest:
            if p.kind == _P.POSITIONAL_ONLY:
                raise TypeError("idem: the parameter %s of the tool %s is"
                                " positional-only: a tool's arguments are passed"
                                " by name" % (p.name, self.name))
            if p.kind in (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY):
                if p.name in ("who", "conv"):
                    raise TypeError(
                        "idem: the tool %s has a parameter named %s, which the"
                        " wrapper takes itself (tool(who, conv, **args)): rename"
                        " it" % (self.name, p.name))
                names.add(p.name)
        self.sig = sig
        self.first = first
        self.params = [p for p in rest if p.kind in (_P.POSITIONAL_OR_KEYWORD,
                                                      _P.KEYWORD_ONLY)]
        self.names = None if any(p.kind == _P.VAR_KEYWORD for p in params) else names

    def signature(self) -> inspect.Signature:
        """The wrapper's signature: (who, conv, *, <the tool's arguments>)."""
        ps = [_P("who", _P.POSITIONAL_OR_KEYWORD, annotation=str),
              _P("conv", _P.POSITIONAL_OR_KEYWORD, annotation=str)]
        ps += [p.replace(kind=_P.KEYWORD_ONLY) for p in self.params]
        if self.names is None:
            ps.append(_P("args", _P.VAR_KEYWORD, annotation=Any))
        ret = self.sig.return_annotation if self.sig is not None else _P.empty
        return inspect.Signature(ps, return_annotation=ret)

    def bind(self, args: Dict[str, Any]) -> None:
        """Check the arguments against the body's parameters, before the
        claim: a call the body would refuse must not take a key."""
        if self.sig is None:
            return
        try:
            if self.kind == "local":
                self.sig.bind(None, **args)
            else:
                self.sig.bind(**{self.first: ""}, **args)
        except TypeError as e:
            raise TypeError("idem: %s: %s" % (self.name, e)) from None


def _check_part(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (str, int, bytes)):
        raise TypeError("idem: %s must be a str (%s), not %s" % (
            name, "the user or principal" if name == "who" else
            "the conversation or session", _typename(value)))


# ---- the table ------------------------------------------------------------------

class Calls:
    """An idem claim table on one connection, and the tools that use it.

    ``Calls(conn, "calls", local_failure="keep", retain="30 days")`` loads
    the extension into conn when it lacks it, and creates the virtual table
    when it is missing: ``CREATE VIRTUAL TABLE IF NOT EXISTS calls USING
    idem(local_failure=keep, retain=30 days)``.  When the table exists, the
    options given must be the ones it has (ValueError otherwise); options
    not given are the table's.

    One Calls (or several) may be shared by threads on a connection opened
    with check_same_thread=False: idem's work on a connection is serialized
    by one lock per connection (Calls.lock), held for each database step;
    an external tool's request runs outside it.  The connection works in
    autocommit mode (``isolation_level=None``, recommended) and in the
    sqlite3 module's default mode; idem writes BEGIN IMMEDIATE and COMMIT
    itself, and leaves no transaction open behind it.
    """

    record_timeout = 30.0
    """How long (seconds) recording an external call's outcome retries a
    busy database before it raises NotRecorded (the call stays pending)."""

    def __init__(self, conn: sqlite3.Connection, table: str = "calls",
                 **options: str):
        if not isinstance(conn, sqlite3.Connection):
            raise TypeError("idem.Calls needs a sqlite3.Connection, not %s"
                            % _typename(conn))
        if not isinstance(table, str) or not table:
            raise TypeError("idem.Calls: the table name must be a non-empty"
                            " str, not %r" % (table,))
        given: Dict[str, Any] = {}
        for k, v in options.items():
            if k not in _SWITCHES and k not in _DURATIONS:
                raise ValueError(
                    "idem.Calls: unknown table option %r; the options are"
                    " local_failure='release'|'keep', durability='full'|'relaxed',"
                    " args_mismatch='error'|'replay', retain='<duration>' and"
                    " stale_after='<duration>'" % k)
            given[k] = _option(k, v)[1]
        self.conn = conn
        self.table = table
        self._t = _quote(table)
        self.lock = _conn_lock(self, conn)
        with self.lock:
            try:
                conn.execute("SELECT idem_version()").fetchone()
            except sqlite3.OperationalError:
                load(conn)
            find = ("SELECT sql FROM sqlite_master WHERE type = 'table'"
                    " AND lower(name) = lower(?)")
            row = conn.execute(find, (table,)).fetchone()
            if row is None:
                opts = ", ".join("%s=%s" % (k, v) for k, v in options.items())
                conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS %s USING idem%s"
                             % (self._t, "(%s)" % opts if opts else ""))
                # Another connection may have created it first, otherwise.
                row = conn.execute(find, (table,)).fetchone()
            if row is not None:
                have = _existing_options(row[0], table)
                for k, v in given.items():
                    if have.get(k) != v:
                        raise ValueError(
                            "idem.Calls: the table %r exists with %s, and this"
                            " Calls asks for %s: a table's options are set when"
                            " it is created; leave the option out to use the"
                            " table as it is, or use another table"
                            % (table, _show(k, have.get(k)), _show(k, v)))

    # ---- the parts of the protocol ------------------------------------

    def key(self, who: str, conv: str, tool: str, args: Any) -> str:
        """The key of a call: idem_key(who, conv, tool, args) (args as a
        JSON-able value, or a JSON text given as str)."""
        text = args if isinstance(args, str) else \
            _json(args, "the arguments of %s are" % tool, "")
        with self.lock:
            return str(self.conn.execute("SELECT idem_key(?, ?, ?, ?)",
                                         (who, conv, tool, text)).fetchone()[0])

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
                return self._replay(key, row).result
            time.sleep(interval)

    def reconcile(self, key: str, verdict: str, *, id: Any = None,
                  result: Any = None, note: Optional[str] = None) -> None:
        """An operator's verdict on an open call, from the target's records
        (the table's reconcile column, doc/operations.md):

        'arrived'      the target got it: the call becomes done, with id and
                       result (a JSON-able value) as the target reports
                       them, and note (default: idem's "reconciled" note);
        'not_arrived'  the target never got it: an unknown call, or a
                       pending one that is stale, is released (a retry runs);
        'not_sent'     the request of a pending call never left: released.

        Raises KeyError when no such call is claimed, ValueError for
        another verdict, and sqlite3.OperationalError with idem's message
        when the call is not in a state the verdict applies to."""
        if verdict not in ("arrived", "not_arrived", "not_sent"):
            raise ValueError("idem: reconcile's verdict is 'arrived',"
                             " 'not_arrived' or 'not_sent', not %r" % (verdict,))
        if not isinstance(key, str):
            raise TypeError("idem: a key is a str of 32 hex digits, not %s"
                            % _typename(key))
        sets, binds = ["reconcile = ?"], [verdict]   # type: List[str], List[Any]
        if verdict == "arrived":
            text, id_ = _encode(Result(result, id), "reconcile")
            sets += ["id = ?", "result = ?"]
            binds += [id_, None if result is None else text]
            if note is not None:
                if not isinstance(note, str):
                    raise TypeError("idem: a note is a str, not %s" % _typename(note))
                sets.append("note = ?")
                binds.append(note)
        elif id is not None or result is not None or note is not None:
            raise ValueError("idem: reconcile %r releases the call: it takes no"
                             " id, result or note" % verdict)
        sql = "UPDATE %s SET %s WHERE key = ? AND member = 0" % (
            self._t, ", ".join(sets))

        def work() -> int:
            return self.conn.execute(sql, binds + [key]).rowcount
        with self.lock:
            if self.conn.in_transaction:
                n = work()          # the caller's transaction decides
            else:
                n = self._retry(work)
        if n != 1:
            raise KeyError("idem: reconcile: no call %s in %s (never claimed,"
                           " released, or purged)" % (key, self.table))

    # ---- the decorator ----------------------------------------------------

    @overload
    def tool(self, fn: Callable[..., Awaitable[R]]) -> AsyncTool[R]: ...  # type: ignore[misc]

    @overload
    def tool(self, fn: Callable[..., R]) -> Tool[R]: ...

    @overload
    def tool(self, *, kind: str = "local", name: Optional[str] = None,
             keyargs: KeyArgs = None) -> _Decorator: ...

    def tool(self, fn: Optional[Callable[..., Any]] = None, *,
             kind: str = "local", name: Optional[str] = None,
             keyargs: KeyArgs = None) -> Any:
        """Make fn an idempotent tool, called as ``tool(who, conv, **args)``
        (who and conv by position or by name) and returning the recorded
        result; ``tool.run(who, conv, **args)`` returns an Outcome (result,
        id, key, replayed).

        kind="local" (a write into this database): fn(conn, **args) runs
        inside the claim's transaction, and the claim, fn's writes and the
        recorded result commit together.  fn must not COMMIT or ROLLBACK.
        If fn raises, its writes are rolled back, the call is recorded as
        failed (which releases the claim, so a retry runs again; or keeps
        it with local_failure=keep) and the exception propagates; if its
        result cannot be stored, the same, and Unstorable is raised.  If
        conn is already inside a transaction, the call runs in a SAVEPOINT
        of it and commits with it.  An async def local tool is refused.

        kind="external" (a write to another system): the claim commits
        first, then fn(idempotency_key=<header value>, **args) runs; send
        the value as the Idempotency-Key header (``headers={idem.HEADER:
        idempotency_key}``).  Its result is recorded as done.  If fn raises
        NotSent, the call is released and NotSent raised on (a retry
        runs).  If fn raises anything else, or its result cannot be
        stored, the request may have arrived: the call is recorded as
        unknown with a note, and Unknown is raised (the original error is
        its __cause__; KeyboardInterrupt, SystemExit and CancelledError are
        raised on as they are); it is never run again.  fn may be an
        ``async def``: the wrapper is then async too.

        A duplicate arrival never runs fn: it returns the first arrival's
        result, or raises InProgress, Unknown or Failed.  fn returns any
        JSON-able value, or Result(value, id=...) to set the id column.

        name: the tool's name in the key (default: fn.__name__).
        keyargs: the arguments that name the call, when some of them may
        change on a retry without changing the write: a list of argument
        names (each one a parameter of fn, unless fn takes **kwargs), or a
        function of the args dict returning a JSON-able value.  The key is
        then idem_key(who, conv, tool, keyargs); all the args are stored.
        """
        if kind not in ("local", "external"):
            raise ValueError("idem: kind must be 'local' or 'external', not %r"
                             % (kind,))
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError("idem: a tool's name is a non-empty str, not %r"
                            % (name,))

        def wrap(fn: Callable[..., Any]) -> Any:
            spec = _Spec(fn, kind, name, keyargs)
            return self._wrapper(spec)

        return wrap(fn) if fn is not None else wrap

    def _wrapper(self, spec: _Spec) -> Any:
        fn = spec.fn

        def key_of(who: str, conv: str, **args: Any) -> str:
            return self._prepare(spec, who, conv, args).key

        if spec.is_async:
            async def arun(who: str, conv: str, **args: Any) -> Outcome:
                call = self._prepare(spec, who, conv, args)
                return await self._external_async(spec, call, args)

            @functools.wraps(fn)
            async def acall(who: str, conv: str, **args: Any) -> Any:
                return (await arun(who, conv, **args)).result
            wrapper: Any = acall
            wrapper.run = arun
        else:
            def run(who: str, conv: str, **args: Any) -> Outcome:
                call = self._prepare(spec, who, conv, args)
                if spec.kind == "local":
                    return self._local(spec, call, args)
                return self._external(spec, call, args)

            @functools.wraps(fn)
            def call(who: str, conv: str, **args: Any) -> Any:
                return run(who, conv, **args).result
            wrapper = call
            wrapper.run = run
        wrapper.__signature__ = spec.signature()
        wrapper.key = key_of
        wrapper.name = spec.name
        wrapper.kind = spec.kind
        wrapper.calls = self
        return wrapper

    # ---- inside -------------------------------------------------------------

    def _prepare(self, spec: _Spec, who: Any, conv: Any,
                 args: Dict[str, Any]) -> _Call:
        """Check the call and compute its key, before anything is claimed."""
        _check_part("who", who)
        _check_part("conv", conv)
        spec.bind(args)
        args_json = _json(args, "the arguments of %s are" % spec.name, "")
        ka: Optional[str] = None
        if callable(spec.keyargs):
            ka = _json(spec.keyargs(dict(args)), "the keyargs of %s are" % spec.name,
                       "keyargs")
        elif spec.keyargs is not None:
            ka = _dumps({n: args[n] for n in spec.keyargs if n in args})
        key = self.key(who, conv, spec.name, args_json if ka is None else ka)
        return _Call(key, (who, conv, spec.name, args_json, spec.kind, ka))

    def _row(self, key: str) -> Optional[Tuple[Any, ...]]:
        """The call's (status, reply, id, result), or None."""
        with self.lock:
            row = self.conn.execute(
                "SELECT status, reply, id, result FROM %s WHERE key = ?"
                " AND member = 0" % self._t, (key,)).fetchone()
        return cast(Optional[Tuple[Any, ...]], row)

    def _recorded(self, key: str) -> Tuple[Any, ...]:
        """The row of a call just recorded by this arrival."""
        row = self._row(key)
        if row is None:
            raise RuntimeError("idem: call %s was recorded, yet is not there" % key)
        return row

    def _replay(self, key: str, row: Optional[Tuple[Any, ...]]) -> Outcome:
        if row is None:
            # Only a claim that someone holds is ignored; there is a row.
            raise RuntimeError("idem: the claim of %s was ignored, yet the "
                               "call is not there" % key)
        status, reply, id_, result = row
        if status == "done":
            return Outcome(_decode(result), id_, key, True)
        raise _ERRORS.get(status, CallError)(
            key, json.loads(reply) if reply else None)

    def _claim(self, call: _Call, owner: str) -> bool:
        """INSERT OR IGNORE the claim; True when this arrival owns it."""
        who, conv, tool, args, kind, ka = call.row
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO %s(who, conv, tool, args, kind, keyargs, owner)"
            " VALUES(?, ?, ?, ?, ?, ?, ?)" % self._t,
            (who, conv, tool, args, kind, ka, owner))
        # rowcount is sqlite3_changes() of the INSERT: 1 = ours, 0 = held.
        return cur.rowcount == 1

    def _set(self, key: str, owner: str, status: str, id_: Any = None,
             text: Optional[str] = None, note: Optional[str] = None,
             result: Any = None) -> None:
        """Record the outcome of the call this arrival owns; Lost if the
        UPDATE found it no longer ours."""
        cur = self.conn.execute(
            "UPDATE %s SET status = ?, id = ?, result = ?, note = ?"
            " WHERE key = ? AND member = 0 AND owner = ?" % self._t,
            (status, id_, text, note, key, owner))
        if cur.rowcount != 1:
            raise Lost(key, "unknown" if status == "failed" else status, result)

    def _release(self, key: str, owner: str) -> None:
        """reconcile = 'not_sent' on the call this arrival owns."""
        cur = self.conn.execute(
            "UPDATE %s SET reconcile = 'not_sent' WHERE key = ? AND member = 0"
            " AND owner = ?" % self._t, (key, owner))
        if cur.rowcount != 1:
            raise Lost(key, "released")

    # ---- local ---------------------------------------------------------------

    def _local(self, spec: _Spec, call: _Call, args: Dict[str, Any]) -> Outcome:
        conn, key = self.conn, call.key
        with self.lock:
            nested = conn.in_transaction
            conn.execute("SAVEPOINT idem_call" if nested else "BEGIN IMMEDIATE")
            open_ = True

            def end(commit: bool) -> None:
                nonlocal open_
                if nested:
                    if not commit:
                        conn.execute("ROLLBACK TO idem_call")
                    conn.execute("RELEASE idem_call")
                elif commit:
                    self._commit(key)
                else:
                    conn.execute("ROLLBACK")
                open_ = False

            def undo_tool() -> None:
                conn.execute("ROLLBACK TO idem_tool")
                conn.execute("RELEASE idem_tool")

            try:
                owner = _token()
                if not self._claim(call, owner):
                    row = self._row(key)
                    end(False)
                    return self._replay(key, row)
                conn.execute("SAVEPOINT idem_tool")
                try:
                    value = spec.fn(conn, **args)
                except NotSent as e:
                    e.key = key
                    raise               # all of it rolls back below: released
                except Exception as e:
                    self._check_txn(spec, e)
                    undo_tool()
                    self._set(key, owner, "failed", note=_note("", e))
                    end(True)
                    raise
                self._check_txn(spec, None)
                if inspect.isawaitable(value):
                    _close(value)
                    raise TypeError("idem: the local tool %s returned an awaitable:"
                                    " a local tool is a plain def; its writes were"
                                    " rolled back and the call released" % spec.name)
                try:
                    text, id_ = _encode(value, spec.name)
                    self._set(key, owner, "done", id_, text, result=value)
                except Lost:
                    raise
                except Exception as e:
                    if isinstance(e, sqlite3.Error) and not _is_unstorable(e):
                        raise           # all of it rolls back below
                    undo_tool()
                    self._set(key, owner, "failed", note=_note(
                        "the tool's result could not be stored: ", e))
                    kept = self._row(key) is not None
                    end(True)
                    raise Unstorable(key, "failed" if kept else "released",
                        "idem: the result of %s cannot be stored (%s: %s): its"
                        " writes were rolled back and the call %s" % (
                            spec.name, type(e).__name__, e,
                            "kept as failed (local_failure=keep)" if kept else
                            "released: a retry runs again")) from e
                row = self._recorded(key)
                conn.execute("RELEASE idem_tool")
                end(True)
                return Outcome(_decode(row[3]), row[2], key, False)
            finally:
                if open_:
                    # An error of the database, an interrupt, NotSent: all of
                    # it goes, the claim too (a retry runs again).
                    try:
                        if nested:
                            conn.execute("ROLLBACK TO idem_call")
                            conn.execute("RELEASE idem_call")
                        elif conn.in_transaction:
                            conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass

    def _check_txn(self, spec: _Spec, error: Optional[BaseException]) -> None:
        if not self.conn.in_transaction:
            raise RuntimeError(
                "idem: the local tool %s ended the claim's transaction (a COMMIT"
                " or ROLLBACK inside it): its writes and the claim are rolled"
                " back; a local tool must leave the transaction to idem"
                % spec.name) from error

    def _commit(self, key: str) -> None:
        """COMMIT, retrying a busy database (a rollback journal waits for
        readers) until record_timeout."""
        deadline = time.monotonic() + self.record_timeout
        delay = 0.005
        while True:
            try:
                self.conn.execute("COMMIT")
                return
            except sqlite3.OperationalError as e:
                if not _is_busy(e) or time.monotonic() >= deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    # ---- external ----------------------------------------------------------

    def _external_claim(self, call: _Call) -> Union[Outcome, Tuple[str, str]]:
        """Claim and commit; (owner, header value), or the replay."""
        conn = self.conn
        with self.lock:
            if conn.in_transaction:
                raise RuntimeError(
                    "idem: an external tool cannot run inside an open transaction:"
                    " its claim must commit before the request leaves; commit first")
            conn.execute("BEGIN IMMEDIATE")
            try:
                owner = _token()
                if not self._claim(call, owner):
                    row = self._row(call.key)
                    conn.execute("ROLLBACK")
                    return self._replay(call.key, row)
                header = conn.execute("SELECT idem_header(?)",
                                      (call.key,)).fetchone()[0]
                conn.execute("COMMIT")       # the claim is durable before
            except BaseException:            # anything leaves this process
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return owner, header.split(": ", 1)[1]          # '"<key>"'

    def _external(self, spec: _Spec, call: _Call, args: Dict[str, Any]) -> Outcome:
        claimed = self._external_claim(call)
        if isinstance(claimed, Outcome):
            return claimed
        owner, value_ = claimed
        try:
            value = spec.fn(**{spec.first: value_}, **args)
        except BaseException as e:
            self._raised(spec, call.key, owner, e)
            raise                   # not reached: _raised raises
        if inspect.isawaitable(value):
            _close(value)
            self._not_sent(call.key, owner)
            raise TypeError("idem: the external tool %s returned an awaitable"
                            " without being an async def, so it never ran: the"
                            " call was released; define it with async def"
                            % spec.name)
        try:
            text, id_ = _encode(value, spec.name)
        except Exception as e:
            self._unstorable(spec, call.key, owner, value, e)
        return self._done(call.key, owner, value, text, id_, self._retry, spec)

    async def _external_async(self, spec: _Spec, call: _Call,
                              args: Dict[str, Any]) -> Outcome:
        claimed = self._external_claim(call)
        if isinstance(claimed, Outcome):
            return claimed
        owner, value_ = claimed
        try:
            value = await spec.fn(**{spec.first: value_}, **args)
        except BaseException as e:
            self._raised(spec, call.key, owner, e)
            raise
        try:
            text, id_ = _encode(value, spec.name)
        except Exception as e:
            self._unstorable(spec, call.key, owner, value, e)
        return await self._done_async(call.key, owner, value, text, id_, spec)

    def _done(self, key: str, owner: str, value: Any, text: str, id_: Any,
              retry: Callable[..., Any], spec: _Spec) -> Outcome:
        def work() -> Tuple[Any, ...]:
            self._set(key, owner, "done", id_, text, result=value)
            return self._recorded(key)
        try:
            row = retry(work)
        except (Lost, NotRecorded):
            raise
        except sqlite3.Error as e:
            if _is_unstorable(e):
                self._unstorable(spec, key, owner, value, e)
            raise NotRecorded(key, "done", value, "%s: %s" % (type(e).__name__, e)) from e
        return Outcome(_decode(row[3]), row[2], key, False)

    async def _done_async(self, key: str, owner: str, value: Any, text: str,
                          id_: Any, spec: _Spec) -> Outcome:
        def work() -> Tuple[Any, ...]:
            self._set(key, owner, "done", id_, text, result=value)
            return self._recorded(key)
        try:
            row = await self._retry_async(work)
        except (Lost, NotRecorded):
            raise
        except sqlite3.Error as e:
            if _is_unstorable(e):
                self._unstorable(spec, key, owner, value, e)
            raise NotRecorded(key, "done", value, "%s: %s" % (type(e).__name__, e)) from e
        return Outcome(_decode(row[3]), row[2], key, False)

    def _raised(self, spec: _Spec, key: str, owner: str, e: BaseException) -> None:
        """The external tool raised e: release the call (NotSent) or record
        it unknown, then raise what the caller must see."""
        if isinstance(e, NotSent):
            e.key = key
            try:
                self._not_sent(key, owner)
            except (Lost, NotRecorded) as r:
                raise r from e
            raise e
        if isinstance(e, Exception):
            try:
                reply = self._unknown(key, owner, _note("", e), None)
            except (Lost, NotRecorded) as r:
                raise r from e
            raise Unknown(key, reply) from e
        # KeyboardInterrupt, SystemExit, CancelledError, GeneratorExit: raised
        # on as they are, once the call is recorded unknown.
        try:
            self._unknown(key, owner, _note(
                "interrupted while the request was out: ", e), None)
            _add_note(e, "idem: call %s was recorded as unknown (the request may"
                         " have left)" % key)
        except (Lost, NotRecorded) as r:
            _add_note(e, str(r))
        raise e

    def _unstorable(self, spec: _Spec, key: str, owner: str, value: Any,
                    e: BaseException) -> None:
        try:
            reply = self._unknown(key, owner, _note(
                "the tool returned, so its request was made, but its result"
                " could not be stored: ", e) + "; reconcile it with"
                " reconcile='arrived' and the target's result", value)
        except (Lost, NotRecorded) as r:
            raise r from e
        raise Unknown(key, reply) from e

    def _unknown(self, key: str, owner: str, note: str, value: Any) -> Any:
        """Record status 'failed' (an external call keeps it as unknown);
        returns the reply.  Retried while the database is busy."""
        def work() -> Any:
            self._set(key, owner, "failed", note=note, result=value)
            return self._recorded(key)
        try:
            row = self._retry(work)
        except (Lost, NotRecorded):
            raise
        except sqlite3.Error as e:
            raise NotRecorded(key, "unknown", value, "%s: %s" % (type(e).__name__, e)) from e
        return json.loads(row[1])

    def _not_sent(self, key: str, owner: str) -> None:
        try:
            self._retry(lambda: self._release(key, owner))
        except (Lost, NotRecorded):
            raise
        except sqlite3.Error as e:
            raise NotRecorded(key, "not_sent", None, "%s: %s" % (type(e).__name__, e)) from e

    # ---- one write transaction, retried while the database is busy -----------

    def _attempt(self, work: Callable[[], Any]) -> Tuple[bool, Any]:
        """One BEGIN IMMEDIATE; work(); COMMIT.  (True, its value), or
        (False, the busy error) to be tried again."""
        conn = self.conn
        with self.lock:
            if conn.in_transaction:
                return False, _NotNow("the connection is inside a transaction"
                                      " that is not idem's")
            try:
                conn.execute("BEGIN IMMEDIATE")
                out = work()
                conn.execute("COMMIT")
                return True, out
            except sqlite3.OperationalError as e:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if _is_busy(e):
                    return False, e
                raise
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _retry(self, work: Callable[[], Any]) -> Any:
        deadline = time.monotonic() + self.record_timeout
        delay = 0.005
        while True:
            ok, out = self._attempt(work)
            if ok:
                return out
            if time.monotonic() >= deadline:
                raise _give_up(out, self.record_timeout)
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    async def _retry_async(self, work: Callable[[], Any]) -> Any:
        deadline = time.monotonic() + self.record_timeout
        delay = 0.005
        while True:
            ok, out = self._attempt(work)
            if ok:
                return out
            if time.monotonic() >= deadline:
                raise _give_up(out, self.record_timeout)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.25)


def _give_up(e: BaseException, timeout: float) -> sqlite3.OperationalError:
    err = sqlite3.OperationalError("%s (tried for %g s)" % (e, timeout))
    err.__cause__ = e
    return err


def _close(value: Any) -> None:
    close = getattr(value, "close", None)
    if callable(close):
        close()


def _add_note(e: BaseException, note: str) -> None:
    if hasattr(e, "add_note"):          # Python 3.11
        e.add_note(note)
