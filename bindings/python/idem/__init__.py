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
or released, and the caller is told which; only a database that refuses
every write for record_timeout leaves it pending, and says so
(NotRecorded).  The protocol itself is in the extension: see
doc/contract.md of the idem repository; the package's own rules are in its
README.md, and the Node package (bindings/node) keeps the same ones in the
same words.
"""
from __future__ import annotations

import asyncio
import functools
import inspect
import itertools
import json
import json.decoder
import json.encoder
import math
import os
import re
import secrets
import socket
import sqlite3
import threading
import time
import warnings
import weakref
from typing import (TYPE_CHECKING, Any, Awaitable, Callable, Dict, Generator,
                    List, NamedTuple, Optional, Sequence, Set, Tuple, Type, TypeVar,
                    Union, cast, overload)

from . import _connect
from ._connect import ApswConnection, connect
from ._serializers import Serializer, plain as _plain, serializer_for as _serializer_for

if TYPE_CHECKING:                               # pragma: no cover
    from typing import Protocol
else:
    try:
        from typing import Protocol
    except ImportError:                         # Python 3.7
        Protocol = object

__all__ = ["load", "loadable_path", "Calls", "Result", "Outcome", "Tool",
           "connect", "ApswConnection", "AsyncTool", "CallError", "InProgress",
           "Unknown", "Failed", "NotSent", "Lost", "NotRecorded", "Unstorable",
           "ArgsMismatch", "Serializer", "RelaxedTableWarning", "HEADER",
           "__version__"]

__version__ = "2.0.0"

HEADER = "Idempotency-Key"
"""The name of the header that an external tool sends its key in."""

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
KeyArgs = Union[Callable[[Dict[str, Any]], Any], Sequence[str], None]

# The table options, their words, durations and ranges, and the limits
# the package keeps (the longest note, the refused resends that end a wait)
# are the extension's: idem_parse_options() and idem_limits() (doc/contract.md
# section 5).  The package keeps no copy of them.
_Connection = Union[sqlite3.Connection, ApswConnection]


def loadable_path() -> str:
    """The path of the SQLite extension built into this package (idem.so)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "idem.so")


def load(conn: "_Connection") -> None:
    """Load the idem extension into conn (a sqlite3.Connection, or the
    ApswConnection that idem.connect() opens where sqlite3 cannot load).

    Extension loading is switched on only while loading.  Raises
    RuntimeError when this Python's sqlite3 module cannot load extensions
    (Debian's /usr/bin/python3 can; many pyenv and python.org builds
    cannot): idem.connect() opens a connection that can."""
    if not isinstance(conn, (sqlite3.Connection, ApswConnection)):
        raise TypeError("idem.load() needs a sqlite3.Connection, not %s"
                        % _typename(conn))
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError(_connect.CANNOT_LOAD)
    conn.enable_load_extension(True)
    try:
        conn.load_extension(loadable_path())
    finally:
        conn.enable_load_extension(False)


# ---- what a tool returns, and what a caller gets ----------------------------

class Result(NamedTuple):
    """What a tool may return to set the call's `id` column as well as its
    result: ``return idem.Result({"order": 7}, id=7)``.  The id is one SQL
    value: None, an int (64-bit), a finite float, a str or bytes; a replay
    reads it as stored.  The wrapped tool returns the result part only."""
    result: Any
    id: Any = None


class _Outcome(NamedTuple):
    result: Any
    id: Any
    key: str
    replayed: bool


class Outcome(_Outcome):
    """What ``tool.run(who, conv, **args)`` returns: the recorded result
    (decoded from its JSON), the call's id column, its key, and replayed:
    False for the arrival that ran the tool, True for a duplicate that got
    the first arrival's result without running it (the reply's
    "idempotent": true).  .sends: how many times an external call's
    request was taken for sending (the reply's "sends": 1, or more when a
    target that honours the key was sent it again); None for a local call.
    It is not part of the tuple (nor of its equality)."""
    sends: Optional[int] = None     # what _make() (tuple's own copies) gives

    def __new__(cls, result: Any, id: Any, key: str, replayed: bool,
                sends: Optional[int] = None) -> "Outcome":
        self = super().__new__(cls, result, id, key, replayed)
        self.sends = sends
        return self

    def _replace(self, **kw: Any) -> "Outcome":
        """A copy with the fields given replaced; .sends kept unless given."""
        sends = kw.pop("sends", self.sends)
        return Outcome(*super()._replace(**kw), sends=sends)

    def __repr__(self) -> str:
        return "Outcome(result=%r, id=%r, key=%r, replayed=%r, sends=%r)" % (
            self.result, self.id, self.key, self.replayed, self.sends)


# ---- errors -----------------------------------------------------------------

class CallError(Exception):
    """A call that did not end in `done`: told to a duplicate arrival
    (.replayed True: the status an earlier arrival left), or, as Unknown,
    to the arrival whose external tool ran and failed (.replayed False,
    the reason as __cause__).

    .key is the call's key (32 hex digits), .reply the JSON object that idem
    hands back for it (a dict: status, message, id, idempotent), .status
    its status."""

    def __init__(self, key: str, reply: Optional[Dict[str, Any]],
                 replayed: bool = True):
        self.key = key
        self.reply: Dict[str, Any] = reply or {}
        self.status: Optional[str] = self.reply.get("status")
        self.replayed = bool(replayed)
        super().__init__("idem: call %s is %s: %s" % (
            key, self.status, self.reply.get("message", "")))


class InProgress(CallError):
    """The call is pending: its first arrival is still running (an external
    request in flight), or its process died.  It is not run again;
    Calls.wait() polls it."""


class Unknown(CallError):
    """An external call whose request may have reached the target, but
    whose outcome we do not know (an error or a timeout after the claim,
    or a result that could not be stored).  It is never retried, unless
    its tool declares honours_key=True (then it is resent with the same key
    while idem allows it: .reply["sends"] says how many times it was
    sent): the target's records decide, and an operator reconciles it
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


# What an arrival meant to record, as Lost and NotRecorded name it (.status):
# the words of the table ('not_sent' is the reconcile that releases).
_RECORDING = {
    "done": "done (the tool returned)",
    "unknown": "unknown (the request may have left)",
    "failed": "failed (the tool raised)",
    "not_sent": "released (the request was not sent)",
}


class Lost(Exception):
    """The call was no longer this arrival's when it came to record the
    outcome: it was released meanwhile (reconciled as not_sent or
    not_arrived) and maybe claimed again by another arrival.  Nothing was
    recorded; .key is the key, .status what this arrival meant to record
    ('done', 'unknown' or 'not_sent'; 'failed' for a local call), .result
    and .id the tool's result and id (None if it had none)."""

    def __init__(self, key: str, status: str, result: Any = None,
                 id: Any = None):
        self.key, self.status, self.result, self.id = key, status, result, id
        super().__init__(
            "idem: call %s is no longer this arrival's: it was released while"
            " the tool ran (reconcile = 'not_sent' or 'not_arrived'), and another"
            " arrival may have claimed and run it again; this arrival's outcome,"
            " %s, was not recorded%s" % (
                key, _RECORDING.get(status, status),
                "" if status == "not_sent" else
                "; if its request left, look for a second effect at the target"))


class NotRecorded(Exception):
    """The database refused every attempt to record an external call's
    outcome for Calls.record_timeout seconds (locked by another
    connection, a transaction of the caller's left open on this one, a
    disk that stays full): the call stays pending, its duplicates raise
    InProgress until it is reconciled (Calls.reconcile).  .key, .status
    (what was to be recorded: 'done', 'unknown' or 'not_sent'), .result
    and .id (the tool's, to reconcile with)."""

    def __init__(self, key: str, status: str, result: Any, why: str,
                 table: str = "calls", id: Any = None):
        self.key, self.status, self.result, self.id = key, status, result, id
        verdict = ("'not_sent'" if status == "not_sent" else
                   "'arrived', id=..., result=..." if status == "done" else
                   "'arrived' or 'not_arrived' after checking the target")
        super().__init__(
            "idem: call %s stays pending: its outcome, %s, could not be recorded"
            " (%s); reconcile it: calls.reconcile('%s', %s) (SQL: UPDATE %s SET"
            " reconcile = ... WHERE key = '%s' AND member = 0)"
            % (key, _RECORDING.get(status, status), why, key, verdict,
               _quote(table), key))


class Unstorable(TypeError):
    """A local tool returned a result that cannot be stored (not JSON: a
    datetime, a Decimal, a set, bytes, NaN, a circular structure...; or
    an id that is not one SQL value; or text beyond SQLite's limit).  Its
    writes were rolled back and the call recorded as failed: released
    (.status 'released': a retry runs again) or kept (.status 'failed',
    local_failure=keep).  The original error is the __cause__.  (An
    external tool's unstorable result raises Unknown instead: its request
    was made.)"""

    def __init__(self, key: str, status: str, message: str):
        self.key, self.status = key, status
        super().__init__(message)


class ArgsMismatch(sqlite3.OperationalError):
    """A call whose key (who, conv, tool and keyargs) was already used with
    other arguments, refused under args_mismatch=error (the default):
    nothing ran, nothing was claimed.  .key is the key, .tool the tool's
    name; the message is idem's.  (A sqlite3.OperationalError, as it was.)"""

    def __init__(self, key: str, tool: str, message: str):
        self.key, self.tool = key, tool
        super().__init__(message)


def _mismatch_raises(claim: Callable[..., bool]) -> Callable[..., bool]:
    """A claim refused under args_mismatch=error raises ArgsMismatch: the
    extension names the kind of its refusal, idem_refusal(message) =
    'args_mismatch' (doc/contract.md section 9); the package matches no
    text."""
    @functools.wraps(claim)
    def checked(self: Any, call: Any, owner: str) -> bool:
        try:
            return claim(self, call, owner)
        except sqlite3.OperationalError as e:
            if self._refusal(e) == "args_mismatch":
                raise ArgsMismatch(call.key, call.row[2], str(e)) from e
            raise
    return checked


_ERRORS = {"pending": InProgress, "unknown": Unknown, "failed": Failed}


# ---- JSON -------------------------------------------------------------------
#
# One rule in both packages (doc/choices.md, "The packages"): a value is
# stored as JSON exactly as it is, or refused before anything happens with
# an error that names where it stops being JSON, as a path spelt the same
# way in Python and in Node: "idem: the arguments of place_order are not
# JSON: args.items[2].price is NaN, which JSON has no form for".

_MAX_DEPTH = 1000               # idem's own nesting limit (doc/contract.md §3)
_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")


def _typename(value: Any) -> str:
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else \
        "%s.%s" % (t.__module__, t.__qualname__)


def _a(value: Any) -> str:
    """The type of value with its article, as it is read: "a
    datetime.date", "an int", "an object", "a uuid.UUID" (the rule of Node's
    and Go's messages too: a, e, i, o, or "un" but not "uni", take "an")."""
    name = _typename(value)
    if name == "bytes":
        return name
    low = name.lower()
    vowel = low[:1] in ("a", "e", "i", "o") or (low.startswith("un") and not low.startswith("uni"))
    return ("an " if vowel else "a ") + name


def _member(path: str, name: str) -> str:
    """The path of a member: result.order, args["a b"]."""
    if _NAME.match(name):
        return "%s.%s" % (path, name)
    return "%s[%s]" % (path, json.dumps(name, ensure_ascii=False))


def _key_text(k: Any) -> Optional[str]:
    """A dict key as JSON writes it, or None if idem takes no form for it:
    a key is text or an integer (its digits), the keys that Node (whose
    keys are all text: {1: x} is {"1": x}) and Go (encoding/json's map
    keys) write alike; json.dumps would write the float 1.0 as "1.0",
    where Node writes "1" and Go refuses it, and True, None as "true",
    "null", keys Go refuses (doc/contract.md §3)."""
    if isinstance(k, str):
        return k
    if isinstance(k, int) and not isinstance(k, bool):
        return int.__repr__(k)
    return None


def _key_named(k: Any) -> str:
    """A refused dict key, named: "a float (1.0)", "None"."""
    if k is None:
        return "None"
    try:
        shown = repr(k)
    except Exception:
        return _a(k)
    return "%s (%s)" % (_a(k), shown if len(shown) <= 40 else shown[:40] + "...")


# How a key that json.dumps writes for a float, a bool or None ends: a
# float's repr ("1.0", "1e+16", "1.5e-07"), true, false, null (a string
# key ending so, too): where the text has none of them, every key of the
# value was text or an integer, and nothing is walked.  Each pattern
# starts with a literal, which the re module scans for quickly (one
# pattern of them all took 4x as long over a 1.4 MB text).
_KEY_ENDS = tuple(re.compile(p).search for p in (
    r'\.[0-9]+":', r'e-[0-9]+":', r'e\+[0-9]+":', r'true":', r'false":', r'null":'))


def _keys_may_not_be_text(text: str) -> bool:
    for search in _KEY_ENDS:
        if search(text):
            return True
    return False


def _is_text(s: str) -> bool:
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _why_not_json(value: Any, root: str) -> Optional[Tuple[type, str]]:
    """Where value stops being JSON that idem takes (at most 1000 levels
    deep), as (the error's class, "args.qty is NaN, which JSON has no form
    for"), or None.  Iterative: any depth is walked without recursion."""
    # The first problem in the order of the text: a depth-first walk, the
    # members in order; an "exit" entry closes a container (cycles).
    stack: List[Tuple[Any, ...]] = [("value", value, root, 0, root)]
    inside: Set[int] = set()
    while stack:
        entry = stack.pop()
        if entry[0] == "exit":
            inside.discard(entry[1])
            continue
        _, v, path, depth, top = entry
        if v is None or isinstance(v, (bool, int)):
            continue
        if isinstance(v, float):
            if math.isnan(v):
                return ValueError, "%s is NaN, which JSON has no form for" % path
            if math.isinf(v):
                return ValueError, "%s is %sInfinity, which JSON has no form for" % (
                    path, "-" if v < 0 else "")
            continue
        if isinstance(v, str):
            if not _is_text(v):
                return ValueError, "%s holds a lone surrogate, which is not text" % path
            continue
        if not isinstance(v, (dict, list, tuple)):
            try:
                plain = _plain(v)
            except Exception:
                return TypeError, "%s is %s, which JSON has no form for" % (path, _a(v))
            stack.append(("value", plain, path, depth, top))
            continue
        if depth >= _MAX_DEPTH:
            return ValueError, "%s is nested deeper than %d levels, idem's limit" % (
                top, _MAX_DEPTH)
        if id(v) in inside:
            return ValueError, "%s is a circular reference (it contains itself)" % path
        inside.add(id(v))
        stack.append(("exit", id(v)))
        children = []
        if isinstance(v, dict):
            for k, m in v.items():
                name = _key_text(k)
                if name is None:
                    return TypeError, "%s has a key that is %s, which JSON has no" \
                        " form for; a key is text or an integer" % (path, _key_named(k))
                if not _is_text(name):
                    return ValueError, "%s has a key that holds a lone surrogate," \
                        " which is not text" % path
                sub = _member(path, name)
                children.append(("value", m, sub, depth + 1, sub if depth == 0 else top))
        else:
            for i, m in enumerate(v):
                sub = "%s[%d]" % (path, i)
                children.append(("value", m, sub, depth + 1, sub if depth == 0 else top))
        stack.extend(reversed(children))
    return None


def _dumps(value: Any) -> str:
    # idem canonicalizes the text (RFC 8785): key order and spacing do not
    # matter.  NaN and Infinity are not JSON and are refused here.
    return json.dumps(value, allow_nan=False, ensure_ascii=False,
                      separators=(",", ":"), default=_plain)


def _dumps_deep(value: Any) -> str:
    """json.dumps without recursion, for a value that json.dumps found too
    deep for this Python's stack (idem takes 1000 levels; the json module
    recurses once per level).  value has passed _why_not_json."""
    out: List[str] = []
    stack: List[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, _Raw):
            out.append(v.text)
        elif v is None:
            out.append("null")
        elif v is True:
            out.append("true")
        elif v is False:
            out.append("false")
        elif isinstance(v, int):
            out.append(int.__repr__(v))
        elif isinstance(v, float):
            out.append(float.__repr__(v))
        elif isinstance(v, str):
            out.append(_encode_str(v))
        elif not isinstance(v, (dict, list, tuple)):
            stack.append(_plain(v))     # a dataclass, a model: its JSON form
        elif isinstance(v, dict):
            items: List[Any] = [_Raw("{")]
            for i, (k, m) in enumerate(v.items()):
                name = _key_text(k)
                items.append(_Raw("%s%s:" % ("," if i else "",
                                             _encode_str(name or ""))))
                items.append(m)
            items.append(_Raw("}"))
            stack.extend(reversed(items))
        else:
            items = [_Raw("[")]
            for i, m in enumerate(v):
                if i:
                    items.append(_Raw(","))
                items.append(m)
            items.append(_Raw("]"))
            stack.extend(reversed(items))
    return "".join(out)


class _Raw(NamedTuple):
    text: str


# The json module's own string writer and reader (C), for the text of a value
# nested deeper than its recursive encoder and decoder go.
_encode_str: Callable[[str], str] = getattr(json.encoder, "encode_basestring")
_scanstring: Callable[[str, int], Tuple[str, int]] = getattr(json.decoder, "scanstring")
_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}


def _depth(text: str) -> int:
    """How deeply the JSON text nests (0 for a scalar)."""
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    return max(itertools.accumulate(map(_DELTA.__getitem__, brackets)), default=0)


def _json(value: Any, what: str, root: str) -> str:
    """value as JSON text, or a TypeError/ValueError that says where it is
    not JSON: "idem: the arguments of place_order are not JSON: args.qty is
    NaN, which JSON has no form for".  what ends with its verb."""
    try:
        text = _dumps(value)
        if not _is_text(text):
            raise ValueError("a lone surrogate")
        if _keys_may_not_be_text(text) and _why_not_json(value, root) is not None:
            raise ValueError("a key that is neither text nor an integer")
        # A text shorter than 2002 characters cannot nest 1001 levels.
        if len(text) <= 2 * _MAX_DEPTH + 1 or _depth(text) <= _MAX_DEPTH:
            return text
        raise ValueError("nested too deeply")
    except (TypeError, ValueError, RecursionError) as e:
        found = _why_not_json(value, root)
        if found is None:
            if isinstance(e, RecursionError):
                return _dumps_deep(value)
            found = (type(e) if isinstance(e, TypeError) else ValueError, _text(e))
        raise found[0]("idem: %s not JSON: %s" % (what, found[1])) from e


def _loads(text: str) -> Any:
    """json.loads, and without recursion where this Python's stack is too
    shallow for json.loads (a result 1000 levels deep, stored by Node or
    by SQL, replays here too)."""
    try:
        return json.loads(text)
    except RecursionError:
        return _loads_deep(text)


_WS = re.compile(r"[ \t\n\r]*")


def _loads_deep(text: str) -> Any:
    """A JSON text as json.loads reads it, with a stack of its own."""
    stack: List[Any] = []           # open containers; a dict's pending key
    keys: List[Optional[str]] = []
    i = _WS.match(text, 0).end()    # type: ignore[union-attr]
    n = len(text)
    result: Any = None
    done = False

    def fail(at: int) -> ValueError:
        return ValueError("idem: stored JSON is malformed at character %d" % at)

    def member(at: int) -> int:
        """Read the name of a member at `at` and the ':' after it into
        keys[-1]; the position of its value."""
        if at >= n or text[at] != '"':
            raise fail(at)
        keys[-1], at = _scanstring(text, at + 1)
        at = _WS.match(text, at).end()          # type: ignore[union-attr]
        if at >= n or text[at] != ":":
            raise fail(at)
        return _WS.match(text, at + 1).end()    # type: ignore[union-attr]

    while i < n:
        c = text[i]
        value: Any
        if c in "[{":
            stack.append([] if c == "[" else {})
            keys.append(None)
            i = _WS.match(text, i + 1).end()        # type: ignore[union-attr]
            if i < n and text[i] == ("]" if c == "[" else "}"):
                i += 1
                value = stack.pop()
                keys.pop()
            elif c == "{":
                i = member(i)
                continue
            else:
                continue
        elif c == '"':
            value, i = _scanstring(text, i + 1)
        elif text.startswith("true", i):
            value, i = True, i + 4
        elif text.startswith("false", i):
            value, i = False, i + 5
        elif text.startswith("null", i):
            value, i = None, i + 4
        else:
            m = _NUMBER.match(text, i)
            if m is None:
                raise fail(i)
            whole, frac, exp = m.groups()
            value = float(whole + (frac or "") + (exp or "")) if frac or exp \
                else int(whole)
            i = m.end()
        # value is complete: put it in its container, and close those that end.
        while True:
            i = _WS.match(text, i).end()            # type: ignore[union-attr]
            if not stack:
                result, done = value, True
                break
            top = stack[-1]
            if isinstance(top, list):
                top.append(value)
            else:
                top[keys[-1]] = value
            if i < n and text[i] == ",":
                i = _WS.match(text, i + 1).end()    # type: ignore[union-attr]
                if isinstance(top, dict):
                    i = member(i)
                break
            if i < n and text[i] == ("]" if isinstance(top, list) else "}"):
                i += 1
                value = stack.pop()
                keys.pop()
                continue
            raise fail(i)
        if done:
            break
    if not done or i != n:
        raise fail(i)
    return result


# An id is one SQL value: the `id` column of the call (doc/choices.md).
_ID_KINDS = "None, an int, a float, a str or bytes"


def _id(id_: Any, what: str) -> Any:
    """id_ as the id column stores it, or an error: "idem: the id of
    place_order cannot be stored: id is a dict; an id is one SQL value:
    None, an int, a float, a str or bytes"."""
    def bad(cls: Type[Exception], why: str) -> Exception:
        return cls("idem: %s cannot be stored: %s" % (what, why))
    if id_ is None or isinstance(id_, (bytes, bytearray, memoryview)):
        return id_
    if isinstance(id_, bool):
        raise bad(TypeError, "id is a bool; an id is one SQL value: %s" % _ID_KINDS)
    if isinstance(id_, int):
        if not -2**63 <= id_ < 2**63:
            raise bad(OverflowError, "id is %d, beyond SQLite's 64-bit integers" % id_)
        return id_
    if isinstance(id_, float):
        if math.isnan(id_):
            raise bad(ValueError, "id is NaN, which JSON has no form for")
        if math.isinf(id_):
            raise bad(ValueError, "id is %sInfinity, which JSON has no form for"
                      % ("-" if id_ < 0 else ""))
        return id_
    if isinstance(id_, str):
        if not _is_text(id_):
            raise bad(ValueError, "id holds a lone surrogate, which is not text")
        return id_
    raise bad(TypeError, "id is %s; an id is one SQL value: %s" % (_a(id_), _ID_KINDS))


def _encode(value: Any, tname: str,
            ser: Optional[Serializer] = None) -> Tuple[str, Any]:
    """A tool's return value as (result JSON text, id), or an error."""
    if isinstance(value, Result):
        value, id_ = value.result, value.id
    else:
        id_ = None
    if ser is not None:
        value = ser.to_json(value)
    text = _json(value, "the result of %s is" % tname, "result")
    return text, _id(id_, "the id of %s" % tname)


def _decode(text: Optional[str]) -> Any:
    return None if text is None else _loads(text)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _unstorable_why(error: BaseException, tname: str) -> str:
    """Why a tool's result cannot be stored, for a note or a message:
    idem's own words ("the result of send is not JSON: ..."), or the
    database's error with its class."""
    text = _text(error)
    if text.startswith("idem: ") and isinstance(error, (TypeError, ValueError,
                                                        OverflowError)):
        return text[len("idem: "):]
    return "the result of %s could not be recorded: %s" % (tname, _raised_note(error))


def _text(value: Any) -> str:
    """str(value) as text that can always be stored: never an exception
    (a __str__ that raises, or returns something else, is described
    instead), and never a lone surrogate (a file name decoded with
    surrogateescape): those are written as \\udcxx escapes."""
    try:
        text = str(value)
        if not isinstance(text, str):
            raise TypeError("__str__ returned %s" % type(text).__name__)
        text = str.__str__(text)        # a str subclass: its plain text
    except BaseException as e:          # noqa: B902 -- whatever __str__ does
        try:
            why = type(e).__name__
        except BaseException:           # pragma: no cover
            why = "an error"
        text = "<%s: str() raised %s>" % (_safe_name(value), why)
    if not _is_text(text):
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _safe_name(value: Any) -> str:
    """The name of value's class, as text that can always be stored."""
    try:
        name = type(value).__name__
        if not isinstance(name, str):
            name = "?"
    except BaseException:               # pragma: no cover
        name = "?"
    return str.__str__(name).encode("utf-8", "backslashreplace").decode("utf-8")


def _raised_note(error: BaseException) -> str:
    """An error as a note says it: "TimeoutError: the target did not
    answer".  It can always be built and stored, whatever the error (see
    _text)."""
    return "%s: %s" % (_safe_name(error), _text(error))


class _Unset:
    def __repr__(self) -> str:
        return "<not given>"


_UNSET: Any = _Unset()          # an argument not given (None is a value)


def _seconds(value: Any, what: str) -> float:
    """A duration in seconds given to the package: a number, 0 or more."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not 0 <= value < math.inf:
        raise (ValueError if isinstance(value, (int, float)) and
               not isinstance(value, bool) else TypeError)(
            "idem: %s must be a number of seconds (0 or more), not %r" % (what, value))
    return float(value)


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


def _conn_lock(user: object, conn: _Connection) -> Any:
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
#
# One rule in every package: the options given are checked by the
# extension, idem_parse_options() (the words of CREATE VIRTUAL TABLE's
# error); given for a table that exists, each must be the table's effective
# value (the default of an option its statement does not name included),
# as the same parse reads both, or it is an error that names both values.
# The package only builds the statement's text.

_BAD_OPTION_CHARS = re.compile(r"[,()'\";\n\r]")


def _option_text(name: str, value: Any) -> str:
    """name=value as the CREATE statement writes it: a word bare, any other
    value quoted; a TypeError or ValueError for a value that is not text
    or cannot be written there (what it means is the extension's to say)."""
    if not isinstance(value, str):
        raise TypeError("idem: the table option %s must be a str (such as '30 days'"
                        " or 'keep'), not %s" % (name, _typename(value)))
    if _BAD_OPTION_CHARS.search(value) or not value.strip():
        raise ValueError("idem: the table option %s=%r is blank or holds a character"
                         " that an option value cannot hold (, ( ) ' \" ; or a line"
                         " break)" % (name, value))
    return "%s=%s" % (name, value if re.fullmatch(r"[A-Za-z0-9_.]+", value)
                      else "'%s'" % value)


def _parse_options(conn: _Connection, table: str,
                   texts: Sequence[str]) -> Dict[str, Any]:
    """The options texts as CREATE VIRTUAL TABLE table USING idem(texts)
    parses them (idem_parse_options(): "options", "shown", "relaxed"), or a
    ValueError with CREATE's own message."""
    try:
        row = conn.execute("SELECT idem_parse_options(%s)"
                           % ", ".join("?" * (1 + len(texts))),
                           (table,) + tuple(texts)).fetchone()
    except sqlite3.OperationalError as e:
        raise ValueError(str(e)) from None
    return cast(Dict[str, Any], json.loads(row[0]))


def _table_options(conn: _Connection, table: str,
                   sql: Optional[str]) -> Dict[str, Any]:
    """The options of an existing idem table as the extension parsed them
    (idem_options(): its "options", "shown" and "relaxed"), never read
    from the CREATE text, where a comment can hide what SQLite hands
    idem.  ValueError for a table that is not an idem table."""
    try:
        text = conn.execute("SELECT idem_options(?, 'main')", (table,)).fetchone()[0]
    except sqlite3.OperationalError as e:
        if "is not an idem table" in str(e):
            raise ValueError("idem: the table %s exists and is not an idem table"
                             " (%s); name another table" % (_quote(table), sql)) from None
        raise
    return cast(Dict[str, Any], json.loads(text))


class RelaxedTableWarning(UserWarning):
    """Warned by Calls() for a table made with an option that weakens what
    a claim promises by default (durability=relaxed, a retain,
    args_mismatch=replay) when that option was not given to Calls(): a
    file can arrive with its table made so.  Give the option to accept it
    (no warning), or turn the warning into an error:
    ``warnings.simplefilter("error", idem.RelaxedTableWarning)``."""


def _check_options(conn: _Connection, table: str, sql: Optional[str],
                   given: Dict[str, str], parsed: Dict[str, Any]) -> None:
    """The table's options (idem_options()) against those given (their
    texts by name, as idem_parse_options() parsed them: parsed)."""
    have = _table_options(conn, table, sql)
    for n, text in given.items():
        if have["options"][n] != parsed["options"][n]:
            raise ValueError(
                "idem: the table %s exists with %s, not %s: a table's options are"
                " set when it is created; leave the option out to use the table as"
                " it is, or use another table" % (_quote(table), have["shown"][n], text))
    for n, why in have["relaxed"].items():
        if n not in given:
            value = have["shown"][n].split("=", 1)[1].strip("'")
            warnings.warn(RelaxedTableWarning(
                "idem: the table %s was made with %s; give %s=%r to idem.Calls() to"
                " accept it, or use another table" % (_quote(table), why, n, value)),
                stacklevel=3)


def _beat_connect(uri: str, apsw: bool, timeout: float) -> _Connection:
    """The sync heartbeat's connection of its own: uri (idem_database_uri())
    opened as a URI, by the driver of the Calls' connection, idem loaded."""
    return connect(uri, timeout=timeout, uri=True,
                   driver="apsw" if apsw else "sqlite3")


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
    honours_key: Optional[int] = None   # 1: declared; None: the table's


_P = inspect.Parameter


class _Spec:
    """A tool as defined: its name, kind, body, and what its body takes."""

    serializer: Optional[Serializer] = None     # set by Calls.tool

    def __init__(self, fn: Callable[..., Any], kind: str, name: Optional[str],
                 keyargs: KeyArgs, honours_key: bool = False):
        if not callable(fn):
            raise TypeError("idem: a tool is a function, not %s" % _typename(fn))
        tname = name if name is not None else getattr(fn, "__name__", None)
        if not isinstance(tname, str) or not tname:
            raise TypeError("idem: give the tool a name: @calls.tool(name=...)")
        self.fn, self.kind, self.name, self.keyargs = fn, kind, tname, keyargs
        self.honours_key = honours_key
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
            if isinstance(keyargs, (str, bytes)) or \
                    not isinstance(keyargs, (list, tuple)) or \
                    not all(isinstance(n, str) for n in keyargs):
                raise TypeError("idem: tool %s: keyargs must be a list of argument"
                                " names or a function of args, not %r"
                                % (tname, keyargs))
            if self.names is not None:
                unknown = [n for n in keyargs if n not in self.names]
                if unknown:
                    raise ValueError(
                        "idem: tool %s: keyargs names %s, which %s of the tool (its"
                        " parameters: %s); a misspelt name would give every call"
                        " of the tool one key" % (
                            tname, ", ".join(unknown),
                            "are not parameters" if len(unknown) > 1 else
                            "is not a parameter",
                            ", ".join(p.name for p in self.params) or "none"))

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
            if params[0].kind != _P.VAR_POSITIONAL and not _is_conn_param(params[0]):
                raise TypeError(
                    "idem: the local tool %s takes the connection as its first"
                    " parameter: def %s(db, ...); its first parameter, %s, is not"
                    " named %s, nor annotated sqlite3.Connection (a tool argument"
                    " there would be given the connection)" % (
                        self.name, self.name, params[0].name,
                        ", ".join(sorted(_CONN_NAMES))))
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

    def load(self, outcome: Outcome) -> Outcome:
        """The outcome as the caller gets it: the result through the
        serializer's from_json, on the first arrival and on a replay."""
        if self.serializer is None:
            return outcome
        return outcome._replace(result=self.serializer.from_json(outcome.result))

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


# What a local tool's first parameter, the connection, may be called
# (or it is annotated as a connection: sqlite3.Connection or another
# class whose name ends in Connection).
_CONN_NAMES = frozenset(("db", "conn", "con", "cx", "connection", "database"))


def _is_conn_param(p: inspect.Parameter) -> bool:
    a = p.annotation
    if a is _P.empty:
        return p.name in _CONN_NAMES
    if a is Any:
        return True
    if isinstance(a, str):
        return a.rsplit(".", 1)[-1].strip("'\"").endswith("Connection")
    return isinstance(a, type) and (issubclass(a, sqlite3.Connection) or
                                    a.__name__.endswith("Connection"))


def _check_part(name: str, value: Any) -> None:
    """who or conv: text, an integer or bytes (doc/contract.md §2: the
    integer 42 and the text '42' are one part)."""
    what = "the user or principal" if name == "who" else "the conversation or session"
    if isinstance(value, bool) or not isinstance(value, (str, int, bytes)):
        raise TypeError("idem: %s must be a str, an int or bytes (%s), not %s"
                        % (name, what, _typename(value)))
    if isinstance(value, int) and not -2**63 <= value < 2**63:
        raise OverflowError("idem: %s is %d, beyond SQLite's 64-bit integers"
                            % (name, value))
    if isinstance(value, str) and not _is_text(value):
        raise ValueError("idem: %s holds a lone surrogate, which is not text" % name)


# ---- the table ------------------------------------------------------------------

class Calls:
    """An idem claim table on one connection, and the tools that use it.

    ``Calls(conn, "calls", local_failure="keep", retain="30 days")`` loads
    the extension into conn when it lacks it, and creates the virtual table
    when it is missing: ``CREATE VIRTUAL TABLE IF NOT EXISTS "calls" USING
    idem(local_failure=keep, retain='30 days')``.  When the table exists,
    each option given must be its value there (the default, for an option
    its statement does not name): ValueError otherwise; options not given
    are the table's.

    One Calls (or several) may be shared by threads on a connection opened
    with check_same_thread=False: idem's work on a connection is serialized
    by one lock per connection (Calls.lock), held for each database step;
    an external tool's request runs outside it.  The connection works in
    autocommit mode (``isolation_level=None``, recommended) and in the
    sqlite3 module's default mode; idem writes BEGIN IMMEDIATE and COMMIT
    itself, and leaves no transaction open behind it.
    """

    _record_timeout = 30.0

    @property
    def record_timeout(self) -> float:
        """How long (seconds) recording an external call's outcome retries
        while the database refuses it before it raises NotRecorded (the call
        stays pending); 30 by default."""
        return self._record_timeout

    @record_timeout.setter
    def record_timeout(self, seconds: float) -> None:
        self._record_timeout = _seconds(seconds, "calls.record_timeout")

    def __init__(self, conn: _Connection, table: str = "calls",
                 **options: str):
        if not isinstance(conn, (sqlite3.Connection, ApswConnection)):
            raise TypeError("idem.Calls needs a sqlite3.Connection, not %s"
                            % _typename(conn))
        if not isinstance(table, str) or not table:
            raise TypeError("idem.Calls: the table name must be a non-empty"
                            " str, not %r" % (table,))
        texts = [_option_text(k.lower(), v) for k, v in options.items()]
        given = dict(zip((k.lower() for k in options), texts))
        self.conn = conn
        self.table = table
        # Every statement names the table of the main database, where the
        # package makes it: a temp table of the same name, which SQLite
        # would read first, is not it (doc/contract.md section 5).
        self._t = '"main".' + _quote(table)
        self.lock = _conn_lock(self, conn)
        with self.lock:
            try:
                conn.execute("SELECT idem_version()").fetchone()
            except sqlite3.OperationalError:
                load(conn)
            parsed = _parse_options(conn, table, texts)
            self._limits = json.loads(conn.execute("SELECT idem_limits()").fetchone()[0])
            find = ("SELECT sql FROM sqlite_master WHERE type = 'table'"
                    " AND lower(name) = lower(?)")
            row = conn.execute(find, (table,)).fetchone()
            if row is None:
                opts = ", ".join(texts)
                conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS %s USING idem%s"
                             % (self._t, "(%s)" % opts if opts else ""))
                # Another connection may have created it first, otherwise.
                row = conn.execute(find, (table,)).fetchone()
            if row is not None:
                _check_options(conn, table, row[0], given, parsed)
            # How often a pending external call is touched while its
            # request is out (its lease): the extension's, None without
            # stale_after (doc/contract.md section 11).
            beat = json.loads(conn.execute("SELECT idem_options(?, 'main')",
                                           (table,)).fetchone()[0])["heartbeat"]
            self._beat: Optional[float] = None if beat is None else beat / 1000.0
            # How the sync heartbeat opens its connection (a URI), read at
            # the first lease; "" for none.
            self._beat_uri: Optional[str] = None

    def _note(self, text: str) -> str:
        """A note as the wrapper writes it: at most idem_limits()'s
        note_max characters, text that can always be stored."""
        text, most = _text(text), int(self._limits["note_max"])
        return text if len(text) <= most else text[:most - 3] + "..."

    def _refusal(self, e: BaseException) -> Optional[str]:
        """The kind of the extension's refusal e (idem_refusal(): e.g.
        'args_mismatch'), or None."""
        with self.lock:
            row = self.conn.execute("SELECT idem_refusal(?)", (str(e),)).fetchone()
        return None if row is None else row[0]

    # ---- the parts of the protocol ------------------------------------

    def key(self, who: str, conv: str, tool: str, args: Any) -> str:
        """The key of a call: idem_key(who, conv, tool, args) (args as a
        JSON-able value, or a JSON text given as str)."""
        _check_part("who", who)
        _check_part("conv", conv)
        if not isinstance(tool, str) or not tool:
            raise TypeError("idem: tool must be a non-empty str, not %r" % (tool,))
        text = args if isinstance(args, str) else \
            _json(args, "the arguments of %s are" % tool, "args")
        with self.lock:
            return str(self.conn.execute("SELECT idem_key(?, ?, ?, ?)",
                                         (who, conv, tool, text)).fetchone()[0])

    def reply(self, key: str) -> Optional[Dict[str, Any]]:
        """The reply idem hands a duplicate of this call, or None if no
        such call is claimed."""
        if not isinstance(key, str):
            raise TypeError("idem: a key is a str of 32 hex digits, not %s"
                            % _typename(key))
        row = self._row(key)
        return None if row is None else cast(Dict[str, Any], _loads(row[1]))

    def wait(self, key: str, timeout: float = 30.0,
             interval: float = 0.05) -> Any:
        """Wait for a pending call to be decided, polling every interval
        seconds; return its recorded result once it is done.  Raises
        Unknown or Failed when it ends so, InProgress when it is still
        pending after timeout seconds, and KeyError when no such call is
        claimed (never claimed, rolled back, released, or purged)."""
        return self.wait_outcome(key, timeout, interval).result

    def wait_outcome(self, key: str, timeout: float = 30.0,
                     interval: float = 0.05) -> Outcome:
        """wait(), returning the call's Outcome (replayed: True)."""
        if not isinstance(key, str):
            raise TypeError("idem: a key is a str of 32 hex digits, not %s"
                            % _typename(key))
        timeout = _seconds(timeout, "calls.wait(): timeout")
        interval = _seconds(interval, "calls.wait(): interval")
        if self.conn.in_transaction:
            raise RuntimeError("idem: calls.wait() needs a connection outside a"
                               " transaction (it must see other connections'"
                               " commits)")
        deadline = time.monotonic() + timeout
        while True:
            row = self._row(key)
            if row is None:
                raise KeyError(self._no_call(key))
            if row[0] != "pending" or time.monotonic() >= deadline:
                return self._replay(key, row)
            time.sleep(interval)

    def _no_call(self, key: str) -> str:
        return ("idem: no call %s is claimed in %s (never claimed, released, or"
                " purged)" % (key, _quote(self.table)))

    def reconcile(self, key: str, verdict: str, *, id: Any = _UNSET,
                  result: Any = _UNSET, note: Any = _UNSET) -> None:
        """An operator's verdict on an open call, from the target's records
        (the table's reconcile column, doc/operations.md):

        'arrived'      the target got it: the call becomes done, with the
                       id, result (a JSON-able value) and note given (each
                       column not given keeps what it holds; the note
                       defaults to idem's "reconciled" note);
        'not_arrived'  the target never got it: an unknown call, or a
                       pending one that is stale, is released (a retry runs);
        'not_sent'     the request of a pending call never left: released.

        Raises KeyError when no such call is claimed, and
        sqlite3.OperationalError with idem's message when the table refuses
        the verdict: a word that is none of these, a call not in a state it
        applies to, or an id, result or note (not None) given with a
        release, which keeps nothing.  A database busy past the connection's timeout
        raises its error, nothing written (it is not retried for
        record_timeout).  Inside an open transaction it joins it."""
        if not isinstance(key, str):
            raise TypeError("idem: a key is a str of 32 hex digits, not %s"
                            % _typename(key))
        # The verdicts and what each may do are the extension's: a word
        # that is none of them is its refusal.  'resend' is a sender's
        # (a tool declared honours_key=True), never an operator's here.
        if not isinstance(verdict, str):
            raise TypeError("idem: calls.reconcile(): verdict must be a str ('arrived',"
                            " 'not_arrived' or 'not_sent'), not %s" % _typename(verdict))
        if verdict == "resend":
            raise ValueError("idem: calls.reconcile(): 'resend' is not an operator's"
                             " verdict: a tool declared honours_key=True sends its call"
                             " again itself; give 'arrived', 'not_arrived' or 'not_sent'")
        sets, binds = ["reconcile = ?"], [verdict]   # type: List[str], List[Any]
        for column, value in (("id", id), ("result", result), ("note", note)):
            if value is _UNSET:
                continue
            # With a release, the extension refuses a value that is not
            # NULL (doc/contract.md section 5): its rule, its message.
            if column == "id":
                value = _id(value, "the id given to calls.reconcile")
            elif column == "result":
                value = _json(value, "the result given to calls.reconcile is",
                              "result")
            elif not isinstance(value, str):
                raise TypeError("idem: calls.reconcile(): note must be a str, not %s"
                                % _typename(value))
            sets.append("%s = ?" % column)
            binds.append(value)
        sql = "UPDATE %s SET %s WHERE key = ? AND member = 0" % (
            self._t, ", ".join(sets))

        def work() -> int:
            return self.conn.execute(sql, binds + [key]).rowcount
        with self.lock:
            if self.conn.in_transaction:
                n = work()          # the caller's transaction decides
            else:
                # One attempt: a busy database is waited for by SQLite's
                # busy handler (the connection's timeout), never retried
                # for record_timeout, an owner's wait for its records
                # (doc/contract.md section 5); then nothing was written.
                ok, out = self._attempt(work, False)
                if not ok:
                    raise out
                n = out
        if n != 1:
            raise KeyError(self._no_call(key))


    # ---- the decorator ----------------------------------------------------

    @overload
    def tool(self, fn: Callable[..., Awaitable[R]]) -> AsyncTool[R]: ...  # type: ignore[misc]

    @overload
    def tool(self, fn: Callable[..., R]) -> Tool[R]: ...

    @overload
    def tool(self, *, kind: str = "local", name: Optional[str] = None,
             keyargs: KeyArgs = None, serializer: Any = None,
             honours_key: bool = False) -> _Decorator: ...

    def tool(self, fn: Optional[Callable[..., Any]] = None, *,
             kind: str = "local", name: Optional[str] = None,
             keyargs: KeyArgs = None, serializer: Any = None,
             honours_key: bool = False) -> Any:
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
        stored (not JSON, or refused by the table), the request may have
        arrived: the call is recorded as unknown with a note, and Unknown is
        raised (the original error is its __cause__; KeyboardInterrupt,
        SystemExit and CancelledError are raised on as they are); it is
        never run again.  Only a database that refuses every write for
        record_timeout leaves the call pending: NotRecorded says so, with
        the reconcile to run.  fn may be an ``async def``: the wrapper is
        then async too.

        A duplicate arrival never runs fn: it returns the first arrival's
        result, or raises InProgress, Unknown or Failed.  fn returns any
        JSON-able value (at most 1000 levels deep, idem's limit), or
        Result(value, id=...) to set the id column.

        name: the tool's name in the key (default: fn.__name__).
        keyargs: the arguments that name the call, when some of them may
        change on a retry without changing the write: a list of argument
        names (each one a parameter of fn, unless fn takes **kwargs), or a
        function of the args dict returning a JSON-able value.  The key is
        then idem_key(who, conv, tool, keyargs); all the args are stored.
        serializer: how a result that is not JSON is stored and handed
        back (idem.Serializer): a dataclass or Pydantic model class (the
        default: fn's return annotation when it is one), or an object with
        to_json(value) and from_json(data).  Without one, dataclasses and
        models are stored as their JSON form and handed back as it.

        honours_key=True (external tools only): the target honours the
        Idempotency-Key (it answers a repeated key with its first answer and
        acts once), so a call whose outcome is unknown (the tool raised: a
        timeout, a lost answer; or its process died while the request was
        out, once the call is stale) is sent again, with the same key and
        the same arguments, by a new owner, while the extension allows it:
        at most max_sends sends, each after the backoff it decides
        (resend_at), within Calls.resend_wait seconds of this call.  A
        duplicate arrival does the same.  Outcome.sends says how many sends
        were made.  Without it nothing changes: unknown holds.
        """
        if kind not in ("local", "external"):
            raise ValueError("idem: kind must be 'local' or 'external', not %r"
                             % (kind,))
        if not isinstance(honours_key, bool):
            raise TypeError("idem: honours_key is True or False, not %r"
                            % (honours_key,))
        if honours_key and kind != "external":
            raise ValueError("idem: honours_key=True is for external tools: a"
                             " local tool sends no request (make it"
                             " kind='external', or leave honours_key out)")
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError("idem: a tool's name is a non-empty str, not %r"
                            % (name,))

        def wrap(fn: Callable[..., Any]) -> Any:
            spec = _Spec(fn, kind, name, keyargs, honours_key)
            spec.serializer = _serializer_for(serializer, fn, spec.name)
            return self._wrapper(spec)

        return wrap(fn) if fn is not None else wrap

    def _wrapper(self, spec: _Spec) -> Any:
        fn = spec.fn

        def key_of(who: str, conv: str, **args: Any) -> str:
            return self._prepare(spec, who, conv, args).key

        if spec.is_async:
            async def arun(who: str, conv: str, **args: Any) -> Outcome:
                call = self._prepare(spec, who, conv, args)
                return spec.load(await self._external_async(spec, call, args))

            @functools.wraps(fn)
            async def acall(who: str, conv: str, **args: Any) -> Any:
                return (await arun(who, conv, **args)).result
            wrapper: Any = acall
            wrapper.run = arun
        else:
            def run(who: str, conv: str, **args: Any) -> Outcome:
                call = self._prepare(spec, who, conv, args)
                if spec.kind == "local":
                    return spec.load(self._local(spec, call, args))
                return spec.load(self._external(spec, call, args))

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
        args_json = _json(args, "the arguments of %s are" % spec.name, "args")
        ka: Optional[str] = None
        if callable(spec.keyargs):
            ka = _json(spec.keyargs(dict(args)), "the keyargs of %s are" % spec.name,
                       "keyargs")
        elif spec.keyargs is not None:
            ka = _dumps({n: args[n] for n in spec.keyargs if n in args})
        key = self.key(who, conv, spec.name, args_json if ka is None else ka)
        return _Call(key, (who, conv, spec.name, args_json, spec.kind, ka),
                     1 if spec.honours_key else None)

    def _row(self, key: str) -> Optional[Tuple[Any, ...]]:
        """The call's (status, reply, id, result, sends, resend_at, wait):
        wait is the seconds until resend_at by the database's clock, or
        None."""
        with self.lock:
            row = self.conn.execute(
                "SELECT status, reply, id, result, sends, resend_at,"
                " (julianday(resend_at) - julianday('now')) * 86400.0"
                " FROM %s WHERE key = ? AND member = 0" % self._t, (key,)).fetchone()
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
        status, reply, id_, result, sends = row[:5]
        if status == "done":
            return Outcome(_decode(result), id_, key, True, sends)
        raise _ERRORS.get(status, CallError)(
            key, _loads(reply) if reply else None)

    @_mismatch_raises
    def _claim(self, call: _Call, owner: str) -> bool:
        """INSERT OR IGNORE the claim; True when this arrival owns it."""
        who, conv, tool, args, kind, ka = call.row
        if call.honours_key is None:
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO %s(who, conv, tool, args, kind, keyargs,"
                " owner) VALUES(?, ?, ?, ?, ?, ?, ?)" % self._t,
                (who, conv, tool, args, kind, ka, owner))
        else:
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO %s(who, conv, tool, args, kind, keyargs,"
                " owner, honours_key) VALUES(?, ?, ?, ?, ?, ?, ?, ?)" % self._t,
                (who, conv, tool, args, kind, ka, owner, call.honours_key))
        # rowcount is sqlite3_changes() of the INSERT: 1 = ours, 0 = held.
        return cur.rowcount == 1

    def _set(self, key: str, owner: str, outcome: str, id_: Any = None,
             text: Optional[str] = None, note: Optional[str] = None) -> None:
        """Record the outcome ('done', 'unknown' or 'failed') of the call
        this arrival owns; Lost if the UPDATE found it no longer ours."""
        cur = self.conn.execute(
            "UPDATE %s SET status = ?, id = ?, result = ?, note = ?"
            " WHERE key = ? AND member = 0 AND owner = ?" % self._t,
            ("done" if outcome == "done" else "failed", id_, text, note, key, owner))
        if cur.rowcount != 1:
            raise Lost(key, outcome, _decode(text), id_)

    def _release(self, key: str, owner: str) -> None:
        """reconcile = 'not_sent' on the call this arrival owns."""
        cur = self.conn.execute(
            "UPDATE %s SET reconcile = 'not_sent' WHERE key = ? AND member = 0"
            " AND owner = ?" % self._t, (key, owner))
        if cur.rowcount != 1:
            raise Lost(key, "not_sent")

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
                    self._commit(key, owner)
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
                    self._set(key, owner, "failed", note=self._note(_raised_note(e)))
                    end(True)
                    raise
                self._check_txn(spec, None)
                if inspect.isawaitable(value):
                    _close(value)
                    raise TypeError("idem: the local tool %s returned an awaitable:"
                                    " a local tool is synchronous; its writes were"
                                    " rolled back and the call released" % spec.name)
                try:
                    text, id_ = _encode(value, spec.name, spec.serializer)
                    self._set(key, owner, "done", id_, text)
                except Lost:
                    raise
                except Exception as e:
                    if isinstance(e, sqlite3.Error) and not _is_unstorable(e):
                        raise           # all of it rolls back below
                    why = _unstorable_why(e, spec.name)
                    undo_tool()
                    self._set(key, owner, "failed", note=self._note(why))
                    kept = self._row(key) is not None
                    end(True)
                    raise Unstorable(key, "failed" if kept else "released",
                        "idem: %s; its writes were rolled back and the call %s" % (
                            why, "kept as failed (local_failure=keep)" if kept else
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

    def _stood(self, key: str, owner: str, statuses: Tuple[Optional[str], ...]) -> bool:
        """After a COMMIT that reported an error: True when it committed
        all the same, its transaction over and the call's main row by owner
        in one of statuses (None: the row gone or another arrival's).
        SQLite reports SQLITE_INTERRUPT for a COMMIT whose work stands when
        a progress handler asks to stop after its last instruction
        (doc/trust.md); an owner token is this arrival's alone, so the row
        tells."""
        conn = self.conn
        if conn.in_transaction:
            return False
        try:
            row = conn.execute(
                "SELECT status, owner FROM %s WHERE key = ? AND member = 0"
                % self._t, (key,)).fetchone()
        except sqlite3.Error:
            return False
        if row is None or row[1] != owner:
            return None in statuses
        return row[0] in statuses

    def _check_txn(self, spec: _Spec, error: Optional[BaseException]) -> None:
        if not self.conn.in_transaction:
            raise RuntimeError(
                "idem: the local tool %s ended the claim's transaction (a COMMIT"
                " or ROLLBACK inside it): its writes and the claim are rolled"
                " back; a local tool must leave the transaction to idem"
                % spec.name) from error

    def _commit(self, key: str, owner: str) -> None:
        """COMMIT of a local call's transaction.  A database busy past the
        connection's busy timeout (SQLite's busy handler: a reader of a
        rollback journal) is the COMMIT's error: the caller rolls all of it
        back (released), as Node and Go do; no wait of the package's holds
        the write lock longer (doc/contract.md section 5).  A COMMIT that
        reports an error once the transaction is over and the call stands
        under owner committed all the same: returns (_stood)."""
        try:
            self.conn.execute("COMMIT")
        except sqlite3.Error:
            if not self._stood(key, owner, ("done", "failed")):
                raise

    # ---- external ----------------------------------------------------------
    #
    # The claim commits; the tool runs outside any transaction; its outcome
    # is recorded in a transaction of its own.  The recording steps are
    # generators that yield the pauses between attempts, driven by
    # time.sleep (_drive) or asyncio.sleep (_drive_async): one rule for
    # plain and async tools.

    def _refuse_open_transaction(self) -> None:
        """The transaction that takes a call for sending (a claim, a
        resend) must commit before the request leaves: it cannot be part
        of the caller's open transaction."""
        if self.conn.in_transaction:
            raise RuntimeError(
                "idem: an external tool cannot run inside an open transaction:"
                " its claim must commit before the request leaves; commit first")

    def _external_claim(self, call: _Call,
                        owner: str) -> Union["_Held", Tuple[str, str]]:
        """Claim for owner and commit; (owner, header value), or the
        call's row as the claim found it held (_Held)."""
        conn = self.conn
        with self.lock:
            self._refuse_open_transaction()
            conn.execute("BEGIN IMMEDIATE")
            try:
                if not self._claim(call, owner):
                    row = self._row(call.key)
                    conn.execute("ROLLBACK")
                    return _Held(row)
                header = conn.execute("SELECT idem_header(?)",
                                      (call.key,)).fetchone()[0]
                conn.execute("COMMIT")       # the claim is durable before
            except BaseException:            # anything leaves this process
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return owner, header.split(": ", 1)[1]          # '"<key>"'

    # ---- a target that honours the key: resends (doc/contract.md §14) ----
    #
    # The extension decides whether and when a call may be sent again
    # (resend_at, max_sends, the refusals of reconcile = 'resend'); the
    # package waits for resend_at within resend_wait, takes the call with
    # a new owner, and sends the same request with the same key.

    _resend_wait = 30.0

    @property
    def resend_wait(self) -> float:
        """How long (seconds) one call of a tool that honours the key may
        spend waiting for its resends (resend_at); 30 by default.  A resend
        that would wait beyond it is left to a later retry: the call raises
        Unknown (or InProgress) as it stands."""
        return self._resend_wait

    @resend_wait.setter
    def resend_wait(self, seconds: float) -> None:
        self._resend_wait = _seconds(seconds, "calls.resend_wait")

    @staticmethod
    def _may_resend(row: Optional[Tuple[Any, ...]], deadline: float) -> bool:
        """The extension allows a resend of the call in row (resend_at:
        NULL for every call that may not be resent, a decided one among
        them), and it comes before deadline (time.monotonic())."""
        return row is not None and row[5] is not None \
            and time.monotonic() + max(0.0, row[6] or 0.0) <= deadline

    def _resend(self, key: str, owner: str) -> Tuple[Optional[str], Any]:
        """reconcile = 'resend' for owner, a new one, committed before the
        request leaves again: (owner, header value), (None, the extension's
        refusal), or (None, None) if the call is gone."""
        conn = self.conn
        with self.lock:
            self._refuse_open_transaction()
            try:
                conn.execute("BEGIN IMMEDIATE")
                n = conn.execute(
                    "UPDATE %s SET reconcile = 'resend', owner = ? WHERE key = ?"
                    " AND member = 0" % self._t, (owner, key)).rowcount
                if n != 1:
                    conn.execute("ROLLBACK")
                    return None, None
                header = conn.execute("SELECT idem_header(?)", (key,)).fetchone()[0]
                conn.execute("COMMIT")
            except sqlite3.Error as e:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                elif self._stood(key, owner, ("pending",)):
                    raise       # taken all the same: _unclaim puts it back
                return None, e
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return owner, header.split(": ", 1)[1]

    def _take_steps(self, call: _Call, deadline: float, owner: str,
                    row: Optional[Tuple[Any, ...]] = None
                    ) -> Generator[float, None, Union[Outcome, Tuple[str, str]]]:
        """Take the call for sending, for owner: claim it, or, held, wait
        for its resend_at and take it again (owner is new to it).  (owner,
        header), or the replay (an Outcome, or InProgress/Unknown/Failed
        raised)."""
        refused = 0
        while True:
            if row is None:
                claimed = self._external_claim(call, owner)
                if not isinstance(claimed, _Held):
                    return claimed
                row = claimed.row
            if row is None or not self._may_resend(row, deadline):
                return self._replay(call.key, row)
            wait = max(0.0, row[6] or 0.0)
            if wait > 0:
                yield wait + 0.002
            mine, header = self._resend(call.key, owner)
            if mine is not None:
                return mine, header
            new = self._row(call.key)
            if new is not None and (new[0], new[4]) == (row[0], row[4]):
                refused += 1            # refused, and nothing moved
                if refused >= int(self._limits["resend_refusals"]):
                    try:
                        return self._replay(call.key, new)
                    except CallError as e:
                        raise e from header
                yield 0.01
            row = new

    def _unclaim(self, key: str, owner: str, e: BaseException) -> None:
        """An interrupt between the claim's COMMIT and the tool's start (a
        KeyboardInterrupt, a cancellation): if the claim committed, release
        it, since the request never left (a call pending with no owner
        otherwise); if it was a resend (sends > 1), the earlier requests may
        have arrived: record it unknown again.  e goes on."""
        try:
            with self.lock:
                if self.conn.in_transaction:
                    return
                mine = self.conn.execute(
                    "SELECT coalesce(sends, 1) FROM %s WHERE key = ? AND member = 0"
                    " AND owner = ?" % self._t, (key, owner)).fetchone()
            if mine is not None and mine[0] > 1:
                def work() -> Tuple[Any, ...]:
                    self._set(key, owner, "unknown", note=self._note(
                        "interrupted before the resend left: %s" % _raised_note(e)))
                    return self._recorded(key)
                _drive(self._record(key, "unknown", work, None, None, cause=e,
                                    any_error=True, owner=owner))
            elif mine is not None:
                _drive(self._release_steps(key, owner, e))
        except BaseException as r:      # e is what the caller must see
            _add_note(e, "idem: call %s could not be released: %s" % (key, _text(r)))

    # ---- the owner's lease: a heartbeat while the request is out (section 11)

    def _touch(self, conn: _Connection, key: str, owner: str) -> None:
        """One heartbeat: touch owner's pending call, in a transaction of
        its own on conn; skipped while conn is in a transaction, and when
        the database is busy or conn closed (the next beat tries)."""
        try:
            if conn.in_transaction:
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("UPDATE %s SET note = note WHERE key = ? AND member = 0"
                             " AND owner = ? AND status = 'pending'" % self._t,
                             (key, owner))
                conn.execute("COMMIT")
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def _beat_open(self) -> str:
        """The URI the sync heartbeat opens its connection with: the
        extension's idem_database_uri('main'), the main file as the Calls'
        connection opened it (its URI parameters and its VFS), read once
        (a connection's main file never changes); "" for none: a database
        in memory, which no other connection can open, or one this
        connection holds in locking_mode=EXCLUSIVE, which no other can
        write (said once, as a RuntimeWarning)."""
        if self._beat_uri is None:
            with self.lock:
                uri = self.conn.execute("SELECT idem_database_uri('main')").fetchone()[0]
                mode = self.conn.execute("PRAGMA main.locking_mode").fetchone()[0]
            if uri and str(mode).lower() == "exclusive":
                warnings.warn(RuntimeWarning(
                    "idem: the sync external tools of %s send no heartbeat: their"
                    " connection holds the database in locking_mode=EXCLUSIVE, which"
                    " no other connection can write, so a call whose request outlasts"
                    " stale_after goes stale while it waits (an async tool beats"
                    " through the connection itself)" % _quote(self.table)), stacklevel=4)
                uri = None
            self._beat_uri = uri or ""
        return self._beat_uri

    def _lease(self, key: str, owner: str) -> Callable[[], None]:
        """Heartbeat owner's call from a thread until the returned stop is
        called, for a sync tool: the calling thread is in the tool, and a
        sqlite3 connection refuses other threads by default, so the thread
        beats through a connection of its own to the same database, opened
        as the Calls' connection opened it (_beat_open(): at its first
        beat, closed when it stops).  None where _beat_open() gives none."""
        if self._beat is None:
            return lambda: None
        every = self._beat
        path = self._beat_open()
        if not path:
            return lambda: None
        apsw = isinstance(self.conn, ApswConnection)
        stop = threading.Event()

        def beat() -> None:
            conn: Optional[_Connection] = None
            try:
                while not stop.wait(every):
                    if conn is None:
                        conn = _beat_connect(path, apsw, every)
                    self._touch(conn, key, owner)
            except Exception:
                pass            # no connection, no lease: the call may go stale
            finally:
                if conn is not None:
                    conn.close()
        thread = threading.Thread(target=beat, name="idem heartbeat", daemon=True)
        thread.start()

        def end() -> None:
            stop.set()
            thread.join()       # a beat under way ends before the record
        return end

    def _lease_async(self, key: str, owner: str) -> Callable[[], None]:
        """Heartbeat owner's call from a task on the running loop, through
        the Calls' own connection (free while an async tool awaits), until
        the returned stop is called."""
        if self._beat is None:
            return lambda: None
        every = self._beat

        async def beat() -> None:
            while True:
                await asyncio.sleep(every)
                with self.lock:
                    self._touch(self.conn, key, owner)
        task = asyncio.ensure_future(beat())

        def end() -> None:
            task.cancel()       # between beats: a beat never awaits
        return end

    def _external(self, spec: _Spec, call: _Call, args: Dict[str, Any]) -> Outcome:
        deadline = time.monotonic() + self.resend_wait
        row: Optional[Tuple[Any, ...]] = None       # None: claim it first
        while True:
            owner, started = _token(), False
            try:
                claimed = _drive(self._take_steps(call, deadline, owner, row))
                if isinstance(claimed, Outcome):
                    return claimed
                header = claimed[1]
                started = True          # from here on the request may leave
                stop = self._lease(call.key, owner)
                try:
                    value = spec.fn(**{spec.first: header}, **args)
                finally:
                    stop()
            except BaseException as e:
                if not started:
                    self._unclaim(call.key, owner, e)
                    raise
                try:
                    _drive(self._raised(call.key, owner, e))
                except Unknown:
                    row = self._row(call.key)
                    if not isinstance(e, Exception) or \
                            not self._may_resend(row, deadline):
                        raise
                    continue        # sent again, with the same key (§14)
                raise                   # not reached: _raised raises
            break
        if inspect.isawaitable(value):
            _close(value)
            _drive(self._release_steps(call.key, owner, None))
            raise TypeError("idem: the external tool %s returned an awaitable"
                            " without being an async def, so it never ran: the"
                            " call was released; define it with async def"
                            % spec.name)
        return cast(Outcome, _drive(self._returned(spec, call.key, owner, value)))

    async def _external_async(self, spec: _Spec, call: _Call,
                              args: Dict[str, Any]) -> Outcome:
        deadline = time.monotonic() + self.resend_wait
        row: Optional[Tuple[Any, ...]] = None       # None: claim it first
        while True:
            owner, started = _token(), False
            try:
                claimed = await _drive_async(
                    self._take_steps(call, deadline, owner, row))
                if isinstance(claimed, Outcome):
                    return claimed
                header = claimed[1]
                started = True          # from here on the request may leave
                stop = self._lease_async(call.key, owner)
                try:
                    value = await spec.fn(**{spec.first: header}, **args)
                finally:
                    stop()
            except BaseException as e:
                if not started:
                    self._unclaim(call.key, owner, e)
                    raise
                try:
                    await _drive_async(self._raised(call.key, owner, e))
                except Unknown:
                    row = self._row(call.key)
                    if not isinstance(e, Exception) or \
                            not self._may_resend(row, deadline):
                        raise
                    continue        # sent again, with the same key (§14)
                raise
            break
        return cast(Outcome, await _drive_async(
            self._returned(spec, call.key, owner, value)))

    def _returned(self, spec: _Spec, key: str, owner: str,
                  value: Any) -> Generator[float, None, Outcome]:
        """The tool returned value: record it done.  What cannot be stored
        (not JSON, or refused by the table) leaves the call unknown, with
        why: the request was made."""
        def unknown(e: BaseException, result: Any) -> Any:
            return self._unknown(key, owner, self._note(
                "the tool returned, so its request was made, but %s; reconcile it"
                " with reconcile = 'arrived' and the target's result"
                % _unstorable_why(e, spec.name)), result, e)
        try:
            text, id_ = _encode(value, spec.name, spec.serializer)
        except Exception as e:
            yield from unknown(e, value.result if isinstance(value, Result) else value)
            raise                           # not reached: _unknown raises

        def work() -> Tuple[Any, ...]:
            self._set(key, owner, "done", id_, text)
            return self._recorded(key)
        try:
            row = yield from self._record(key, "done", work, text, id_, owner=owner)
        except sqlite3.Error as e:          # the table refused it, not busy
            yield from unknown(e, _decode(text))
            raise
        return Outcome(_decode(row[3]), row[2], key, False, row[4])

    def _raised(self, key: str, owner: str,
                e: BaseException) -> Generator[float, None, None]:
        """The external tool raised e: release the call (NotSent) or record
        it unknown, then raise what the caller must see."""
        if isinstance(e, NotSent):
            e.key = key
            yield from self._release_steps(key, owner, e)
            raise e
        if isinstance(e, Exception):
            yield from self._unknown(key, owner, self._note(_raised_note(e)), None, e)
        # KeyboardInterrupt, SystemExit, CancelledError, GeneratorExit: raised
        # on as they are, once the call is recorded unknown.
        try:
            yield from self._unknown(key, owner, self._note(
                "interrupted while the request was out: %s" % _raised_note(e)),
                None, e)
        except Unknown:
            _add_note(e, "idem: call %s was recorded as unknown (the request may"
                         " have left)" % key)
        except (Lost, NotRecorded) as r:
            _add_note(e, _text(r))
        raise e

    def _release_steps(self, key: str, owner: str,
                       cause: Optional[BaseException]) -> Generator[float, None, None]:
        """reconcile = 'not_sent' on this arrival's call; if the table
        refuses it (not busy), the call is recorded unknown, with why."""
        try:
            yield from self._record(key, "not_sent", lambda: self._release(key, owner),
                                    None, None, cause=cause, owner=owner)
        except sqlite3.Error as e:
            yield from self._unknown(key, owner, self._note(
                "the tool said that its request was not sent, but the call could"
                " not be released: %s; reconcile it with reconcile = 'not_arrived'"
                % _raised_note(e)), None, e)

    def _unknown(self, key: str, owner: str, note: str, result: Any,
                 cause: BaseException) -> Generator[float, None, None]:
        """Record the call unknown (status 'failed' on an external call),
        retried while the database refuses it, whatever its error; then
        raise Unknown (replayed False) from cause."""
        def work() -> Tuple[Any, ...]:
            self._set(key, owner, "unknown", note=note)
            return self._recorded(key)
        row = yield from self._record(key, "unknown", work, None, None,
                                      cause=cause, any_error=True, result=result,
                                      owner=owner)
        raise Unknown(key, _loads(row[1]), replayed=False) from cause

    def _record(self, key: str, outcome: str, work: Callable[[], Any],
                text: Optional[str], id_: Any, cause: Optional[BaseException] = None,
                any_error: bool = False, result: Any = None, owner: str = ""
                ) -> Generator[float, None, Any]:
        """One record of this arrival's outcome, retried while the database
        is busy (or refuses it at all, any_error) for record_timeout; then
        NotRecorded.  Lost when the call is no longer this arrival's; the
        tool's error, if any, is the cause of either."""
        if text is not None:
            result = _decode(text)
        stood = (key, owner, (outcome,) if outcome in ("done", "unknown")
                 else (None,)) if owner else None
        try:
            return (yield from self._retry_steps(work, any_error, stood))
        except sqlite3.ProgrammingError as e:
            # The connection closed (by the tool, or another thread) or
            # not usable from here: no retry can record it; say which call
            # stays open, and how to settle it.
            raise NotRecorded(key, outcome, result, _text(e), self.table, id_) \
                from (cause or e)
        except _GaveUp as g:
            raise NotRecorded(key, outcome, result, "%s; tried for %g s" % (
                _text(g.error), self.record_timeout), self.table, id_) \
                from (cause or g.error)
        except Lost as lost:
            lost.result, lost.id = result, id_
            if cause is not None:
                raise lost from cause
            raise

    # ---- one write transaction, retried while the database is busy -----------

    def _attempt(self, work: Callable[[], Any], any_error: bool,
                 stood: Optional[Tuple[str, str, Tuple[Optional[str], ...]]] = None
                 ) -> Tuple[bool, Any]:
        """One BEGIN IMMEDIATE; work(); COMMIT.  (True, its value), or
        (False, the error) to be tried again: a busy database, a transaction
        of the caller's open on the connection, or (any_error) any error of
        the database."""
        conn = self.conn
        with self.lock:
            if conn.in_transaction:
                return False, _NotNow(
                    "the connection is inside a transaction that was opened while"
                    " the tool ran; idem records an external call in a"
                    " transaction of its own")
            try:
                conn.execute("BEGIN IMMEDIATE")
                out = work()
                conn.execute("COMMIT")
                return True, out
            except sqlite3.Error as e:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                elif stood is not None and self._stood(*stood):
                    return True, out    # the COMMIT stood (see _stood)
                if any_error or _is_busy(e):
                    return False, e
                raise
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _retry_steps(self, work: Callable[[], Any], any_error: bool = False,
                     stood: Optional[Tuple[str, str, Tuple[Optional[str], ...]]] = None
                     ) -> Generator[float, None, Any]:
        deadline = time.monotonic() + self.record_timeout
        delay = 0.005
        while True:
            ok, out = self._attempt(work, any_error, stood)
            if ok:
                return out
            if time.monotonic() >= deadline:
                raise _GaveUp(out)
            yield delay
            delay = min(delay * 2, 0.25)


class _Held(NamedTuple):
    """The claim found the call held: its row as _row() reads it."""
    row: Optional[Tuple[Any, ...]]


class _GaveUp(Exception):
    """The database refused a record until record_timeout: .error, its
    last error."""

    def __init__(self, error: BaseException):
        super().__init__(_text(error))
        self.error = error


# Every exit of a wrapper ends in a recorded state: an interrupt that comes
# while an outcome is being recorded (KeyboardInterrupt or SystemExit in a
# pause between attempts, an asyncio task cancelled by wait_for, a coroutine
# closed) is held until the record is made (record_timeout at most), then
# raised on, with a note that says what was recorded.

def _deferred(interrupt: BaseException, error: Optional[BaseException] = None,
              done: bool = False) -> None:
    """Raise the interrupt held while the steps ran, with their outcome as
    a note: what was recorded, or the error that said why not."""
    if done:
        _add_note(interrupt, "idem: the call's outcome was recorded before this"
                  " interrupt was raised on")
    elif error is not None:
        _add_note(interrupt, _text(error))
    raise interrupt.with_traceback(interrupt.__traceback__)


def _step(steps: Generator[float, None, R],
          held: Optional[BaseException]) -> Tuple[bool, Any]:
    """One step of _drive or _drive_async: (False, the delay before the
    next attempt) or (True, the steps' value); the interrupt held, if
    any, is raised on once the steps end (see _deferred)."""
    try:
        return False, next(steps)
    except StopIteration as done:
        if held is not None:
            _deferred(held, done=True)
        return True, done.value
    except BaseException as e:
        if held is not None and e is not held:
            _deferred(held, error=e)
        raise


def _drive(steps: Generator[float, None, R]) -> R:
    """Run recording steps, sleeping between attempts."""
    held: Optional[BaseException] = None
    while True:
        finished, delay = _step(steps, held)
        if finished:
            return cast(R, delay)
        try:
            time.sleep(delay)
        except BaseException as e:      # KeyboardInterrupt, SystemExit...
            if held is None:
                held = e


async def _drive_async(steps: Generator[float, None, R]) -> R:
    """Run recording steps, awaiting between attempts.  A cancellation
    (asyncio.wait_for, task.cancel()) waits for the record, then goes on;
    a coroutine closed meanwhile finishes the record with time.sleep."""
    held: Optional[BaseException] = None
    while True:
        finished, delay = _step(steps, held)
        if finished:
            return cast(R, delay)
        try:
            await asyncio.sleep(delay)
        except GeneratorExit:
            # Closed: it can await no more; the record ends here, blocking,
            # and whatever it raises has nobody to go to.
            try:
                _drive(steps)
            except BaseException:
                pass
            raise
        except BaseException as e:      # CancelledError, KeyboardInterrupt...
            if held is None:
                held = e


def _close(value: Any) -> None:
    close = getattr(value, "close", None)
    if callable(close):
        close()


def _add_note(e: BaseException, note: str) -> None:
    if hasattr(e, "add_note"):          # Python 3.11
        e.add_note(note)
