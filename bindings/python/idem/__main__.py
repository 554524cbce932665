# SPDX-License-Identifier: MIT
"""python -m idem DB COMMAND ...: the operator's desk for an idem table.

    python -m idem app.db list                      the calls, unknown and stale first
    python -m idem app.db list --status unknown     by status (--stale, --tool, --older-than)
    python -m idem app.db show KEY                  one call: its row, members, note, reply
    python -m idem app.db reconcile KEY arrived --result '{"charge":"ch_81"}' [--id ID]
    python -m idem app.db reconcile KEY not_arrived (or not_sent)
    python -m idem app.db purge --older-than '30 days' [--dry-run]
    python -m idem app.db stats                     counts by status, tool and age

--table NAME (default calls) names the idem table; --json prints JSON for
scripts.  A refusal prints the table's own message and exits with status
1; a usage error exits with 2.  See doc/operations.md of the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sqlite3
import sys
import urllib.parse
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, cast

import idem
from idem.ops import (AGES, Desk, OpsError, age_text, cell_text, note_tail, statuses,
                      typed_id)


class _Statuses:
    """--status's choices: the extension's statuses (idem.ops.statuses()),
    read when argparse first asks, not when the module is imported.  Where
    the extension cannot be loaded they cannot be read: any value passes
    here and the connection's refusal says why."""

    def _read(self) -> Tuple[str, ...]:
        try:
            return statuses()
        except (RuntimeError, sqlite3.Error, ImportError, OSError):
            return ()

    def __contains__(self, value: object) -> bool:
        known = self._read()
        return not known or value in known

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())


class Refused(Exception):
    """What the desk refused: printed as it is, exit status 1."""


def connect(path: str) -> sqlite3.Connection:
    """The database file, which must exist (never created here), with idem
    loaded, in autocommit mode: through idem.connect() where the package
    has it (any python3: sqlite3, else APSW), else sqlite3 and idem.load()
    (a Python whose sqlite3 loads extensions, such as Debian's)."""
    if not os.path.exists(path):
        raise Refused("idem: no database file %s" % path)
    uri = "file:%s?mode=rw" % urllib.parse.quote(os.fsencode(os.path.abspath(path)))
    opener = getattr(idem, "connect", None)
    try:
        if opener is not None:
            conn = opener(uri, uri=True, isolation_level=None, timeout=5.0)
        else:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=5.0)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as e:
        raise Refused("idem: cannot open %s: %s" % (path, e))
    except RuntimeError as e:
        raise Refused(str(e))
    if opener is None:
        try:
            idem.load(conn)
        except (RuntimeError, sqlite3.Error) as e:
            conn.close()
            raise Refused(str(e))
    if isinstance(conn, sqlite3.Connection):
        # Text that SQL stored without being UTF-8 (CAST(x'ff' AS TEXT)) is
        # shown with its bytes as escapes, not a traceback.
        conn.text_factory = lambda b: b.decode("utf-8", "backslashreplace")
    return cast(sqlite3.Connection, conn)


def _blob(value: Any) -> str:
    """A blob (a `who`, `conv` or `id` may be one) in JSON: x'<hex>'."""
    if isinstance(value, bytes):
        return "x'%s'" % value.hex()
    raise TypeError("%s is not JSON" % type(value).__name__)


# What a terminal would act on rather than show: C0 and C1 controls, DEL,
# and the line and bidirectional controls that move or reorder what the
# operator reads.  Stored values (who, conv, tool, an id, a note that
# quotes a target's answer) come from callers and targets.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _visible(text: str) -> str:
    """text as the terminal shows it: every control as its escape (\\x1b,
    \\u202e), so that a stored value cannot clear the screen, retitle
    the window, overwrite a line or pass for another field."""
    return _CONTROLS.sub(lambda m: "\\x%02x" % ord(m.group()) if ord(m.group()) < 0x100
                         else "\\u%04x" % ord(m.group()), text)


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _table(rows: List[List[str]], out: Any) -> None:
    """Columns padded to their widest cell, the last one left as it is."""
    rows = [[_visible(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r[:-1], widths)] + [r[-1]]
        print("  ".join(cells).rstrip(), file=out)


def _status(c: Dict[str, Any]) -> str:
    return str(c["status"]) + (" (stale)" if c.get("stale") else "")


# ---- the commands ----------------------------------------------------------------

def cmd_list(desk: Desk, a: argparse.Namespace, out: Any) -> int:
    rows, total = desk.calls(status=a.status, tool=a.tool, stale=a.stale,
                             older_than=a.older_than, limit=a.limit)
    if a.json:
        for r in rows:
            r["age"] = round(r["age"], 3)
            r["idle"] = round(r["idle"], 3)
        json.dump({"table": desk.table, "total": total, "calls": rows}, out,
                  ensure_ascii=False, indent=1,
                  default=_blob)
        print(file=out)
        return 0
    if not rows:
        print("no calls%s in %s" % (" that match" if total == 0 and _filtered(a)
                                    else "", _visible(desk.table)), file=out)
        return 0
    table = [["STATUS", "AGE", "TOOL", "WHO", "CONV", "KEY", "NOTE"]]
    for r in rows:
        table.append([_status(r), age_text(r["age"]), cell_text(r["tool"]),
                      _cut(cell_text(r["who"]), 20), _cut(cell_text(r["conv"]), 20),
                      r["key"], note_tail(r["note"], 60)])
    _table(table, out)
    if total > len(rows):
        print("... and %d more (--limit)" % (total - len(rows)), file=out)
    return 0


def _filtered(a: argparse.Namespace) -> bool:
    return bool(a.status or a.tool or a.stale or a.older_than)


def cmd_show(desk: Desk, a: argparse.Namespace, out: Any) -> int:
    c = desk.call(a.key)
    if c is None:
        raise Refused("idem: no call %s in %s (never claimed, released, or purged)"
                      % (a.key, desk.table))
    if a.json:
        json.dump(c, out, ensure_ascii=False, indent=1,
                  default=_blob)
        print(file=out)
        return 0
    _show(desk, c, out, _prog(a, desk))
    return 0


def _prog(a: argparse.Namespace, desk: Desk) -> str:
    """The command line that names this table, to show in a hint."""
    return "python -m idem %s%s" % (shlex.quote(a.db), "" if desk.table == "calls"
                                   else " --table " + shlex.quote(desk.table))


def _show(desk: Desk, c: Dict[str, Any], out: Any, prog: str) -> None:
    lines = [
        ("key", c["key"]),
        ("status", _status(c)),
        ("tool", "%s (%s)" % (cell_text(c["tool"]), c["kind"])),
        ("who", cell_text(c["who"])),
        ("conv", cell_text(c["conv"])),
        ("args", cell_text(c["args"])),
    ]
    if c["keyargs"] is not None:
        lines.append(("keyargs", cell_text(c["keyargs"])))
    lines += [
        ("owner", cell_text(c["owner"])),
        ("created", "%s UTC (%s ago)" % (c["created"], age_text(c["age"]))),
        ("updated", "%s UTC (%s ago)" % (c["updated"], age_text(c["idle"]))),
    ]
    if c["expires"] is not None:
        lines.append(("expires", c["expires"] + " UTC"))
    for col in desk.optional:
        lines.append((col, cell_text(c[col])))
    lines += [("id", cell_text(c["id"])), ("result", cell_text(c["result"])),
              ("note", cell_text(c["note"])), ("reply", cell_text(c["reply"])),
              ("header", c["header"])]
    for name, value in lines:
        print("%-12s%s" % (name, _visible(value)), file=out)
    if c["members"]:
        print("members", file=out)
        for m in c["members"]:
            print("  %d  id %s  result %s" % (m["member"], _visible(cell_text(m["id"])),
                                              _visible(cell_text(m["result"]))), file=out)
    if c["status"] == "unknown" or c["stale"]:
        print("\nAsk the target about the request sent with this header, then"
              " record what it says:\n  %s reconcile %s arrived --result JSON"
              " [--id ID]\n  %s reconcile %s not_arrived"
              % (_visible(prog), c["key"], _visible(prog), c["key"]), file=out)


def cmd_reconcile(desk: Desk, a: argparse.Namespace, out: Any) -> int:
    given: Dict[str, Any] = {}
    try:
        if a.result is not None:
            given["result"] = desk.typed_result(a.result, "--result")
        if a.id is not None:
            given["id"] = typed_id(a.id)
        if a.note is not None:
            given["note"] = a.note
        done = desk.reconcile(a.key, a.verdict, **given)
    except OpsError as e:
        raise Refused(str(e))
    c = done["call"]
    if a.json:
        json.dump(done, out, ensure_ascii=False, indent=1,
                  default=_blob)
        print(file=out)
        return 0
    if c is None:
        print("%s: released (%s); the next arrival claims it anew and runs"
              % (a.key, a.verdict), file=out)
    else:
        print("%s: %s%s" % (_visible(a.key), c["status"], "" if c["result"] is None else
                            ", result " + _visible(cell_text(c["result"]))), file=out)
    return 0


def _limit(text: str) -> int:
    """--limit: a whole number of calls, 1 or more (0 listed none and said
    there were none; a negative one is SQLite's no limit)."""
    try:
        n = int(text, 10)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(
            "%r is not a whole number of calls, 1 or more" % text)
    return n


def cmd_purge(desk: Desk, a: argparse.Namespace, out: Any) -> int:
    try:
        r = desk.purge(a.older_than, dry_run=a.dry_run)
    except OpsError as e:
        raise Refused(str(e))
    if a.json:
        r["dry_run"] = a.dry_run
        json.dump(r, out, indent=1, default=_blob)
        print(file=out)
        return 0
    print("%s %d decided call%s created before %s UTC; %d pending or unknown stay"
          % ("would purge" if a.dry_run else "purged", r["purged"],
             "" if r["purged"] == 1 else "s", r["before"], r["kept"]), file=out)
    return 0


def cmd_stats(desk: Desk, a: argparse.Namespace, out: Any) -> int:
    s = desk.stats()
    if a.json:
        json.dump(s, out, ensure_ascii=False, indent=1,
                  default=_blob)
        print(file=out)
        return 0
    statuses = [k for k in s["status"]]
    print("%s: %d call%s; %s" % (
        _visible(desk.table), s["total"], "" if s["total"] == 1 else "s",
        ", ".join("%s %d" % (k, s["status"][k]) for k in statuses)), file=out)
    if s["stale_after"]:
        print("stale (pending past stale_after): %d" % s["stale"], file=out)
    if not s["total"]:
        return 0
    print(file=out)
    rows = [["TOOL"] + statuses]
    for tool, counts in s["tool"].items():
        rows.append([cell_text(tool)] + [str(counts.get(k, 0)) for k in statuses])
    _table(rows, out)
    print(file=out)
    rows = [["AGE"] + statuses]
    for label, _ in AGES:
        counts = s["age"][label]
        rows.append([label] + [str(counts.get(k, 0)) for k in statuses])
    _table(rows, out)
    return 0


# ---- the command line ------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--table", default=argparse.SUPPRESS,
                        help="the idem table (default: calls)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print JSON, for scripts")
    p = argparse.ArgumentParser(
        prog="python -m idem",
        description="The operator's desk for an idem table: list, show, reconcile,"
                    " purge and count its calls.",
        epilog="A refusal prints the table's own message and exits with status 1.")
    p.add_argument("db", metavar="DB", help="the database file (never created)")
    p.add_argument("--table", default="calls", help="the idem table (default: calls)")
    p.add_argument("--json", action="store_true", help="print JSON, for scripts")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    s = sub.add_parser("list", parents=[common],
                       help="the calls, unknown and stale first")
    s.add_argument("--status", choices=_Statuses(), metavar="STATUS",
                   help="only calls of this status: %(choices)s")
    s.add_argument("--stale", action="store_true",
                   help="only pending calls past the table's stale_after")
    s.add_argument("--tool", help="only calls of this tool")
    s.add_argument("--older-than", metavar="DURATION",
                   help="only calls created longer ago than this ('2 hours')")
    s.add_argument("--limit", type=_limit, default=100, metavar="N",
                   help="at most N calls (default 100)")
    s.set_defaults(run=cmd_list)

    s = sub.add_parser("show", parents=[common],
                       help="one call: its row, members, note and reply")
    s.add_argument("key", metavar="KEY")
    s.set_defaults(run=cmd_show)

    s = sub.add_parser("reconcile", parents=[common],
                       help="record what the target's records say about a call")
    s.add_argument("key", metavar="KEY")
    s.add_argument("verdict", metavar="VERDICT",
                   help="arrived, not_arrived or not_sent (the table judges)")
    s.add_argument("--result", metavar="JSON", help="the result the target reports")
    s.add_argument("--id", metavar="ID", help="the id the target reports")
    s.add_argument("--note", metavar="TEXT", help="a note (with arrived)")
    s.set_defaults(run=cmd_reconcile)

    s = sub.add_parser("purge", parents=[common],
                       help="delete decided calls older than a duration")
    s.add_argument("--older-than", metavar="DURATION", required=True,
                   help="e.g. '30 days': pending and unknown calls always stay")
    s.add_argument("--dry-run", action="store_true",
                   help="count what would go, delete nothing")
    s.set_defaults(run=cmd_purge)

    s = sub.add_parser("stats", parents=[common],
                       help="counts by status, tool and age")
    s.set_defaults(run=cmd_stats)
    return p


def main(argv: Optional[Sequence[str]] = None, out: Any = None,
         err: Any = None) -> int:
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    p = parser()
    a = p.parse_args(argv)
    for dest, value in sorted(vars(a).items()):
        # A command line's bytes that are not UTF-8 are lone surrogates in
        # Python's argv: no text to match or store.  The file name is the
        # file system's, any bytes.
        if dest != "db" and isinstance(value, str) and not idem._is_text(value):
            p.error("argument %s: %r holds bytes that are not UTF-8, which is not text"
                    % (_POSITIONALS.get(dest, "--" + dest.replace("_", "-")), value))
    try:
        return _main(a, out, err)
    except BrokenPipeError:             # python -m idem DB list | head
        sys.stderr = open(os.devnull, "w")
        return 1


_POSITIONALS = {"key": "KEY", "verdict": "VERDICT"}


def _main(a: argparse.Namespace, out: Any, err: Any) -> int:
    try:
        conn = connect(a.db)
        try:
            desk = Desk(conn, a.table)
            return int(a.run(desk, a, out))
        finally:
            conn.close()
    except (Refused, OpsError) as e:
        if a.json:
            json.dump({"error": str(e)}, out, ensure_ascii=False)
            print(file=out)
        print(_visible(str(e)), file=err)
        return 1


if __name__ == "__main__":
    sys.exit(main())
