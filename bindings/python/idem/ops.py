# SPDX-License-Identifier: MIT
"""idem.ops: the operator's desk over an idem table -- what `python -m idem`
and the Datasette plugin datasette-idem show and do.

    desk = idem.ops.Desk(conn, "calls")   # an existing idem table; reads only
    desk.calls(status="unknown")          # the open calls first
    desk.call(key)                        # one call, its members, its reply
    desk.stats()                          # counts by status, tool and age
    desk.purge("30 days")                 # DELETE ... WHERE created < ...
    desk.reconcile(key, "arrived", result={"charge": "ch_81"})

Every decision is the extension's: a reconcile goes through
idem.Calls.reconcile (the table's reconcile UPDATE), and its refusals are
the table's own messages; a purge is the table's DELETE by age, which
skips pending and unknown calls itself; `stale` and `reply` are the
table's hidden columns.  This module only asks and arranges.  The
columns that a newer table has (`sends`, `honours_key`, `resend_at`) are
shown when the table has them.
"""
from __future__ import annotations

import json
import re
import sqlite3
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import idem

__all__ = ["Desk", "OpsError", "idem_tables", "AGES", "STATUSES", "statuses",
           "age_text", "note_tail", "cell_text", "typed_id"]


_STATUSES: Optional[Tuple[str, ...]] = None


def statuses(conn: Optional[Any] = None) -> Tuple[str, ...]:
    """The statuses a call can have, in the order an operator reads them
    (what needs a person first): the extension's idem_statuses()
    (doc/contract.md section 5), read from conn, or without one from a
    connection of its own, once, at the first call: importing this module
    never loads the extension, so a Python that cannot load it still
    imports the CLI and the Datasette plugin, which then say why."""
    global _STATUSES
    if conn is not None:
        return tuple(json.loads(conn.execute("SELECT idem_statuses()").fetchone()[0]))
    if _STATUSES is None:
        own = idem.connect(":memory:")
        try:
            _STATUSES = statuses(own)
        finally:
            own.close()
    return _STATUSES


if TYPE_CHECKING:
    STATUSES: Tuple[str, ...]
else:
    def __getattr__(name: str) -> Any:
        """idem.ops.STATUSES: statuses(), read at the first use (PEP 562)."""
        if name == "STATUSES":
            return statuses()
        raise AttributeError("module %r has no attribute %r" % (__name__, name))


# The age buckets of stats() and the page's chart: (label, upper bound in s).
AGES = (("< 1 hour", 3600), ("1 hour - 1 day", 86400),
        ("1 - 7 days", 7 * 86400), ("> 7 days", None))

# Columns a table may have beyond those of every idem table (a newer
# extension's): shown when present.
OPTIONAL = ("sends", "honours_key", "resend_at")

_USING = re.compile(r"\busing\s+idem\b", re.IGNORECASE)


class OpsError(Exception):
    """A request the desk cannot carry out: no such table or call, a bad
    duration, or a refusal of the table (its message, verbatim)."""


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def idem_tables(conn: sqlite3.Connection) -> List[str]:
    """The names of the idem tables of conn's main database."""
    rows = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
        " AND sql LIKE 'create virtual table%' ORDER BY name").fetchall()
    return [name for name, sql in rows if _USING.search(sql or "")]


def age_text(seconds: Optional[float]) -> str:
    """An age as a person reads it: '< 1 min', '12 min', '3 h', '2 d'."""
    if seconds is None:
        return ""
    s = max(0.0, seconds)
    if s < 60:
        return "< 1 min"
    if s < 3600:
        return "%d min" % (s // 60)
    if s < 86400:
        return "%d h" % (s // 3600)
    return "%d d" % (s // 86400)


def note_tail(note: Any, width: int) -> str:
    """A note in a list: its end, where what differs between calls is (the
    table's note for an unknown call ends with what the tool reported)."""
    text = " ".join(str(note).split()) if note is not None else ""
    return text if len(text) <= width else "..." + text[len(text) - width + 3:]


def cell_text(value: Any) -> str:
    """A column as a person reads it: JSON for structures, x'<hex>' for a
    blob, '' for NULL (the CLI and the Datasette page show it alike)."""
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, bytes):
        return "x'%s'" % value.hex()
    return str(value)


def typed_id(text: str) -> Any:
    """An id an operator typed (the CLI's --id, the page's id field), as
    the column holds it: an integer when it is one (its decimal digits,
    within 64 bits), else the text."""
    try:
        n = int(text, 10)
        if str(n) == text and -2**63 <= n < 2**63:
            return n
    except ValueError:
        pass
    return text


def _decode(text: Any) -> Any:
    """A JSON column as its value; a text that is not JSON as it is."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _not_decoded(e: BaseException) -> bool:
    """Whether e is a driver's refusal of stored text that is not UTF-8:
    APSW's UnicodeDecodeError, or sqlite3's "Could not decode to UTF-8"
    on a connection without a text_factory that decodes it."""
    return isinstance(e, UnicodeDecodeError) or (
        isinstance(e, sqlite3.OperationalError) and
        str(e).startswith("Could not decode to UTF-8"))


class Desk:
    """An existing idem table, as an operator sees it.  Construction only
    reads: a missing table, or one that is not an idem table, is an
    OpsError that names the idem tables there are."""

    def __init__(self, conn: sqlite3.Connection, table: str = "calls"):
        self.conn = conn
        self.table = table
        try:
            conn.execute("SELECT idem_version()").fetchone()
        except sqlite3.OperationalError:
            idem.load(conn)
        tables = idem_tables(conn)
        found = [t for t in tables if t.lower() == table.lower()]
        if not found:
            raise OpsError("idem: there is no idem table %s in this database (%s)"
                           % (_quote(table), "its idem tables: " + ", ".join(tables)
                              if tables else "it has no idem table"))
        self.table = found[0]
        # The table of the main database, as idem_tables() lists it, never
        # a temp table of the same name (which SQLite would read first).
        self._t = '"main".' + _quote(self.table)
        self.columns = [r[1] for r in conn.execute(
            "SELECT * FROM pragma_table_xinfo(?, 'main')", (self.table,))]
        self.optional = [c for c in OPTIONAL if c in self.columns]
        self.statuses = statuses(conn)
        # The options as idem parsed them, never the CREATE text (where a
        # comment can hide what SQLite hands idem).
        opts = json.loads(conn.execute("SELECT idem_options(?, 'main')",
                                       (self.table,)).fetchone()[0])
        self.stale_after = opts["options"]["stale_after"] is not None

    # ---- reading ---------------------------------------------------------------

    def _read(self, cols: Sequence[str], rest: str,
              binds: Sequence[Any] = ()) -> List[Tuple[Any, ...]]:
        """The rows of SELECT cols rest.  Text that SQL stored without its
        being UTF-8 (CAST(x'ff' AS TEXT)) comes with its bytes as escapes
        (a\\xffb), as the CLI's sqlite3 connection decodes it (its
        text_factory): a driver that cannot decode it (APSW, which has no
        text_factory, raises UnicodeDecodeError) is asked again for each
        column's text as a blob, decoded here."""
        try:
            return list(self.conn.execute("SELECT %s %s" % (", ".join(cols), rest),
                                          binds).fetchall())
        except (UnicodeDecodeError, sqlite3.OperationalError) as e:
            if not _not_decoded(e):
                raise
        pairs = ", ".join(
            "CASE WHEN typeof(%s) = 'text' THEN CAST(%s AS BLOB) END,"
            " CASE WHEN typeof(%s) = 'text' THEN NULL ELSE %s END" % (c, c, c, c)
            for c in cols)
        return [tuple(v if t is None else bytes(t).decode("utf-8", "backslashreplace")
                      for t, v in zip(r[0::2], r[1::2]))
                for r in self.conn.execute("SELECT %s %s" % (pairs, rest), binds)]

    _COLS = ("key", "status", "stale", "kind", "tool", "who", "conv", "owner", "id",
             "note", "created", "updated",
             "(julianday('now') - julianday(created)) * 86400",
             "(julianday('now') - julianday(updated)) * 86400")
    _NAMES = ("key", "status", "stale", "kind", "tool", "who", "conv", "owner",
              "id", "note", "created", "updated", "age", "idle")

    def _cutoff(self, duration: str, what: str) -> str:
        """The time `duration` ago, as the table writes `created`; the
        duration is one of SQLite's date modifiers ('30 days', '12 hours')."""
        if not isinstance(duration, str) or not duration.strip() or \
                duration.strip()[0] in "+-":
            cut = None
        else:
            cut = self.conn.execute(
                "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || ?)",
                (duration.strip(),)).fetchone()[0]
        if cut is None:
            raise OpsError("idem: %s %r is not a duration: give a number and a"
                           " unit, e.g. '30 days', '12 hours', '90 minutes'"
                           % (what, duration))
        return str(cut)

    def calls(self, status: Optional[str] = None, tool: Optional[str] = None,
              stale: bool = False, older_than: Optional[str] = None,
              limit: Optional[int] = None) -> Tuple[List[Dict[str, Any]], int]:
        """The calls (main rows) that match, the unknown and stale ones
        first (oldest first), then pending, failed and done (newest
        first); and how many matched in all (limit cuts the list only)."""
        where, binds = ["member = 0"], []   # type: List[str], List[Any]
        if status is not None:
            where.append("status = ?")
            binds.append(status)
        if tool is not None:
            where.append("tool = ?")
            binds.append(tool)
        if stale:
            where.append("stale")
        if older_than is not None:
            where.append("created < ?")
            binds.append(self._cutoff(older_than, "--older-than"))
        w = " AND ".join(where)
        total = self.conn.execute("SELECT count(*) FROM %s WHERE %s" % (self._t, w),
                                  binds).fetchone()[0]
        rank = ("CASE WHEN status = 'unknown' THEN 0 WHEN stale THEN 1"
                " WHEN status = 'pending' THEN 2 WHEN status = 'failed' THEN 3"
                " ELSE 4 END")
        rest = ("FROM %s WHERE %s ORDER BY %s,"
                " CASE WHEN status IN ('unknown', 'pending') THEN created END,"
                " created DESC, CASE WHEN status IN ('unknown', 'pending')"
                " THEN rowid END, rowid DESC" % (self._t, w, rank))
        if limit is not None:
            # Beyond SQLite's 64-bit integers (a LIMIT it cannot bind): all.
            rest += " LIMIT %d" % min(int(limit), 2**63 - 1)
        rows = [dict(zip(self._NAMES, r)) for r in self._read(self._COLS, rest, binds)]
        for r in rows:
            r["stale"] = bool(r["stale"])
        return rows, int(total)

    def call(self, key: str) -> Optional[Dict[str, Any]]:
        """One call: its main row's columns (args, result and reply decoded
        from JSON), its members, and the header it was sent with; None if
        no call has this key."""
        rows = self._read(
            self._COLS + ("args", "keyargs", "result", "reply", "expires", "idem_header(key)")
            + tuple(self.optional),
            "FROM %s WHERE key = ? AND member = 0" % self._t, (key,))
        if not rows:
            return None
        row = rows[0]
        names = self._NAMES + ("args", "keyargs", "result", "reply", "expires",
                               "header") + tuple(self.optional)
        c = dict(zip(names, row))
        c["stale"] = bool(c["stale"])
        for k in ("args", "keyargs", "result", "reply"):
            c[k] = _decode(c[k])
        c["members"] = [
            {"member": m, "id": i, "result": _decode(r)} for m, i, r in
            self._read(("member", "id", "result"), "FROM %s WHERE key = ?"
                       " AND member > 0 ORDER BY member" % self._t, (key,))]
        return c

    def stats(self) -> Dict[str, Any]:
        """Counts of calls: in all, by status, by tool and status, by age
        (of created) and status, and the stale ones."""
        t = self._t
        by_status = dict(self.conn.execute(
            "SELECT status, count(*) FROM %s WHERE member = 0 GROUP BY 1" % t))
        by_tool: Dict[str, Dict[str, int]] = {}
        for tool, status, n in self._read(
                ("tool", "status", "count(*)"),
                "FROM %s WHERE member = 0 GROUP BY tool, status ORDER BY tool" % t):
            by_tool.setdefault(tool, {})[status] = n
        cases = ["ELSE %d" % i if upper is None else "WHEN a < %d THEN %d" % (upper, i)
                 for i, (_, upper) in enumerate(AGES)]
        by_age: Dict[str, Dict[str, int]] = {label: {} for label, _ in AGES}
        for bucket, status, n in self.conn.execute(
                "SELECT CASE %s END, status, count(*) FROM (SELECT status,"
                " (julianday('now') - julianday(created)) * 86400 AS a FROM %s"
                " WHERE member = 0) GROUP BY 1, 2" % (" ".join(cases), t)):
            by_age[AGES[bucket][0]][status] = n
        stale = self.conn.execute(
            "SELECT count(*) FROM %s WHERE member = 0 AND stale" % t).fetchone()[0]
        return {"table": self.table, "total": sum(by_status.values()),
                "status": {s: by_status.get(s, 0) for s in
                           self.statuses + tuple(sorted(set(by_status) - set(self.statuses)))},
                "stale": stale, "stale_after": self.stale_after,
                "tool": by_tool, "age": by_age}

    # ---- writing -----------------------------------------------------------------

    def purge(self, older_than: str, dry_run: bool = False) -> Dict[str, Any]:
        """The table's purge by age: DELETE FROM t WHERE created < (now -
        older_than), in one transaction.  The table skips pending and
        unknown calls itself; what went and what stayed is counted from
        the table before and after (changes() counts the skipped rows too)."""
        conn = self.conn
        if conn.in_transaction:
            raise OpsError("idem: purge needs a connection outside a transaction")
        cut = self._cutoff(older_than, "--older-than")
        count = "SELECT count(*) FROM %s WHERE member = 0 AND created < ?" % self._t
        conn.execute("BEGIN IMMEDIATE")
        try:
            before = conn.execute(count, (cut,)).fetchone()[0]
            conn.execute("DELETE FROM %s WHERE created < ?" % self._t, (cut,))
            after = conn.execute(count, (cut,)).fetchone()[0]
            conn.execute("ROLLBACK" if dry_run else "COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return {"purged": before - after, "kept": after, "before": cut}

    def typed_result(self, text: str, field: str) -> Any:
        """A result an operator typed (the CLI's --result, the page's
        result field) as its value, or an OpsError that names field: "idem:
        --result is not JSON: invalid number at byte 2 (in '-Infinity')".
        JSON is what the extension's idem_canonical() takes (doc/contract.md
        §3: strict RFC 8259; no NaN or Infinity, no number that overflows a
        double, no duplicate member name, no lone surrogate, at most 1000
        levels), so that the rule is the table's own and written once."""
        try:
            self.conn.execute("SELECT idem_canonical(?)", (text,)).fetchone()
        except sqlite3.Error as e:
            why = str(e)
            for head in ("idem: idem_canonical(): ", "idem: "):
                if why.startswith(head):
                    why = why[len(head):]
                    break
            raise OpsError("idem: %s is not JSON: %s (in %r)" % (field, why, text)) from None
        return idem._loads(text)

    def reconcile(self, key: str, verdict: str, **given: Any) -> Dict[str, Any]:
        """idem.Calls.reconcile(key, verdict, id=, result=, note=) on this
        table (the table's reconcile UPDATE); the call as it is after
        (None: released).  Every refusal is an OpsError with the message
        of the table (or of the package, for what it checks first)."""
        calls = idem.Calls(self.conn, self.table)
        try:
            calls.reconcile(key, verdict, **given)
        except KeyError as e:
            raise OpsError(e.args[0] if e.args else str(e)) from e
        except (ValueError, TypeError, OverflowError, sqlite3.Error) as e:
            raise OpsError(str(e)) from e
        return {"key": key, "verdict": verdict, "call": self.call(key)}
