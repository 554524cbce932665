# SPDX-License-Identifier: MIT
"""datasette-idem: an idem table as an operator needs it, in Datasette.

    /-/idem                          the idem tables of every database
    /-/idem/DB/TABLE                 counts by status and age (a chart), the
                                     calls with the unknown and stale first
    /-/idem/DB/TABLE/KEY             one call: its row, reply, note, members,
                                     and the reconcile verdicts as buttons

A verdict is a POST (with Datasette's CSRF token) that goes through the
table's reconcile UPDATE (idem.ops.Desk.reconcile, i.e. Calls.reconcile),
and needs the permission "idem-reconcile", denied unless the plugin's
configuration allows the actor:

    plugins:
      datasette-idem:
        allow:
          id: [alice]

Refusals are shown in the table's own words.  The extension is loaded into
every connection of Datasette (prepare_connection) from the sqlite-idem
package, so Datasette must run on a Python whose sqlite3 module can load
extensions (Debian's /usr/bin/python3 can).
"""
from __future__ import annotations

import json
import sqlite3
import sys
from typing import Any, Dict, List, Optional, Tuple

import idem
from idem.ops import (AGES, Desk, OpsError, age_text, cell_text, idem_tables,
                      note_tail, statuses, typed_id)
from datasette import Forbidden, NotFound, Response, hookimpl
from datasette.utils.asgi import BadRequest
from datasette.utils import actor_matches_allow, tilde_decode, tilde_encode

PERMISSION = "idem-reconcile"
# What ?status= shows: the calls of one of the extension's statuses
# (idem.ops.statuses(), read at the first page, never at import: a Datasette
# whose Python cannot load idem still starts and says why), or the stale
# ones (pending, their process gone).
STALE = "stale"
VERDICTS = ("arrived", "not_arrived", "not_sent")
COLOURS = {"unknown": "#c0392b", "pending": "#e6a700", "failed": "#7f8c8d",
           "done": "#2e8b57"}
OTHER = "#999999"               # a status a newer extension may add
_load_error: Optional[str] = None


# ---- the extension in every connection ------------------------------------------

@hookimpl
def prepare_connection(conn: sqlite3.Connection, database: str, datasette: Any) -> None:
    global _load_error
    try:
        conn.execute("SELECT idem_version()")
        return
    except sqlite3.OperationalError:
        pass
    try:
        idem.load(conn)
    except (RuntimeError, sqlite3.Error) as e:
        if _load_error is None:
            print("datasette-idem: %s" % e, file=sys.stderr)
        _load_error = str(e)


# ---- permission -------------------------------------------------------------------

@hookimpl
def permission_allowed(datasette: Any, actor: Any, action: str, resource: Any) -> Any:
    """idem-reconcile on (database, table): the plugin's "allow" block (per
    table, database or instance, as Datasette's plugin configuration
    nests); None (denied: the default) when there is none."""
    if action != PERMISSION:
        return None
    database, table = resource if isinstance(resource, (tuple, list)) else (None, None)
    config = datasette.plugin_config("datasette-idem", database=database,
                                     table=table) or {}
    allow = config.get("allow")
    if allow is None:
        return None
    return actor_matches_allow(actor, allow)


# ---- links ------------------------------------------------------------------------

@hookimpl
def menu_links(datasette: Any, actor: Any, request: Any) -> Any:
    return [{"href": datasette.urls.path("/-/idem"), "label": "idem: calls to reconcile"}]


@hookimpl
def table_actions(datasette: Any, actor: Any, database: str, table: str,
                  request: Any) -> Any:
    async def inner() -> List[Dict[str, str]]:
        db = datasette.get_database(database)
        names = await db.execute_fn(_tables)
        if table not in names:
            return []
        return [{"href": _url(datasette, db, table), "label": "idem: the operator's view"}]
    return inner


def _tables(conn: sqlite3.Connection) -> List[str]:
    try:
        return idem_tables(conn)
    except sqlite3.Error:
        return []


def _url(datasette: Any, db: Any, table: str, key: Optional[str] = None) -> str:
    path = "/-/idem/%s/%s" % (tilde_encode(db.route), tilde_encode(table))
    if key is not None:
        path += "/" + tilde_encode(key)
    return str(datasette.urls.path(path))


# ---- pages ----------------------------------------------------------------------------

@hookimpl
def register_routes(datasette: Any) -> Any:
    return [
        (r"^/-/idem$", index),
        (r"^/-/idem/(?P<database>[^/]+)/(?P<table>[^/]+)$", table_page),
        (r"^/-/idem/(?P<database>[^/]+)/(?P<table>[^/]+)/(?P<key>[^/]+)$", call_page),
    ]


async def index(datasette: Any, request: Any) -> Response:
    await datasette.ensure_permissions(request.actor, ["view-instance"])
    found = []
    for name, db in datasette.databases.items():
        if name == "_internal":
            continue
        visible, _ = await datasette.check_visibility(
            request.actor, permissions=[("view-database", name), "view-instance"])
        if not visible:
            continue
        for table in await db.execute_fn(_tables):
            visible, _ = await datasette.check_visibility(
                request.actor, permissions=[("view-table", (name, table)),
                                            ("view-database", name), "view-instance"])
            if not visible:
                continue
            try:
                stats = await db.execute_fn(lambda conn, t=table: Desk(conn, t).stats())
            except (RuntimeError, sqlite3.Error, OpsError):
                if _load_error is None:
                    raise
                continue                # shown once, as the load error
            found.append({"database": name, "table": table, "stats": stats,
                          "url": _url(datasette, db, table)})
    return Response.html(await datasette.render_template(
        "idem_index.html", {"tables": found, "load_error": _load_error,
                            "statuses": () if _load_error else statuses(),
                            "colours": COLOURS},
        request=request))


async def _resolve(datasette: Any, request: Any) -> Tuple[Any, str]:
    """The database and the idem table of the URL, after the checks that
    the actor may view them."""
    route = tilde_decode(request.url_vars["database"])
    table = tilde_decode(request.url_vars["table"])
    try:
        db = datasette.get_database(route=route)
    except KeyError:
        raise NotFound("no database %s" % route)
    await datasette.ensure_permissions(request.actor, [
        ("view-table", (db.name, table)), ("view-database", db.name), "view-instance"])
    if table not in await db.execute_fn(_tables):
        raise NotFound("%s is not an idem table of %s" % (table, db.name))
    if _load_error is not None:
        raise Unloaded(_load_error)
    return db, table


class Unloaded(Exception):
    """The extension did not load into Datasette's connections."""


async def _unloaded(datasette: Any, request: Any, why: str) -> Response:
    return Response.html(await datasette.render_template(
        "idem_index.html", {"tables": [], "load_error": why, "statuses": (),
                            "colours": COLOURS}, request=request), status=500)


async def table_page(datasette: Any, request: Any) -> Response:
    try:
        db, table = await _resolve(datasette, request)
    except Unloaded as e:
        return await _unloaded(datasette, request, str(e))
    status = request.args.get("status") or None
    shown = statuses() + (STALE,)
    if status is not None and status not in shown:
        raise BadRequest("no status %r to show calls of: ?status= is one of %s"
                         % (status, ", ".join(shown)))
    tool = request.args.get("tool") or None

    def read(conn: sqlite3.Connection) -> Tuple[Dict[str, Any], List[Dict[str, Any]], int]:
        desk = Desk(conn, table)
        rows, total = desk.calls(status=None if status == STALE else status,
                                 stale=status == STALE, tool=tool, limit=200)
        return desk.stats(), rows, total
    stats, rows, total = await db.execute_fn(read)
    for r in rows:
        r["age_text"] = age_text(r["age"])
        r["url"] = _url(datasette, db, table, r["key"])
        r["who"], r["conv"] = cell_text(r["who"]), cell_text(r["conv"])
        r["note_tail"] = note_tail(r["note"], 90)
    return Response.html(await datasette.render_template(
        "idem_table.html", {
            "database": db.name, "table": table, "stats": stats, "calls": rows,
            "total": total, "status": status, "tool": tool, "statuses": shown[:-1],
            "chart": chart(stats), "colours": COLOURS,
            "table_url": _url(datasette, db, table),
            "sql_url": datasette.urls.table(db.name, table),
        }, request=request))


async def call_page(datasette: Any, request: Any) -> Response:
    try:
        db, table = await _resolve(datasette, request)
    except Unloaded as e:
        return await _unloaded(datasette, request, str(e))
    key = tilde_decode(request.url_vars["key"])
    allowed = await datasette.permission_allowed(
        request.actor, PERMISSION, resource=(db.name, table), default=False)
    here = _url(datasette, db, table, key)
    if request.method == "POST":
        if not allowed:
            raise Forbidden("reconciling a call needs the permission %s" % PERMISSION)
        form = await request.post_vars()
        message, kind = await _reconcile(db, table, key, form)
        datasette.add_message(request, message, kind)
        call = await db.execute_fn(lambda conn: Desk(conn, table).call(key))
        return Response.redirect(here if call is not None else
                                 _url(datasette, db, table))
    call = await db.execute_fn(lambda conn: Desk(conn, table).call(key))
    if call is None:
        raise NotFound("no call %s in %s (never claimed, released, or purged)"
                       % (key, table))
    optional = await db.execute_fn(lambda conn: Desk(conn, table).optional)
    fields = [
        ("status", call["status"] + (" (stale)" if call["stale"] else "")),
        ("tool", "%s (%s)" % (cell_text(call["tool"]), call["kind"])),
        ("who", cell_text(call["who"])), ("conv", cell_text(call["conv"])),
        ("args", cell_text(call["args"])),
        ("owner", cell_text(call["owner"])),
        ("created", "%s UTC (%s ago)" % (call["created"], age_text(call["age"]))),
        ("updated", "%s UTC (%s ago)" % (call["updated"], age_text(call["idle"]))),
        ("id", cell_text(call["id"])),
    ]
    if call["keyargs"] is not None:
        fields.insert(5, ("keyargs", cell_text(call["keyargs"])))
    if call["expires"] is not None:
        fields.append(("expires", call["expires"] + " UTC"))
    fields += [(c, cell_text(call[c])) for c in optional]
    return Response.html(await datasette.render_template(
        "idem_call.html", {
            "database": db.name, "table": table, "call": call, "fields": fields,
            "result": _pretty(call["result"]), "reply": _pretty(call["reply"]),
            "allowed": allowed, "verdicts": VERDICTS, "permission": PERMISSION,
            "table_url": _url(datasette, db, table), "here": here,
            "colours": COLOURS,
        }, request=request))


async def _reconcile(db: Any, table: str, key: str, form: Any) -> Tuple[str, int]:
    """The verdict of the form, through the table; (message, Datasette's
    message type): a refusal is the table's message, as it is."""
    verdict = form.get("verdict", "")
    result = (form.get("result") or "").strip()
    id_ = (form.get("id") or "").strip()
    note = (form.get("note") or "").strip()

    def write(conn: sqlite3.Connection) -> Dict[str, Any]:
        # The result and the id read as the CLI reads --result and --id
        # (idem.ops: one rule), the message naming the form's field.
        desk = Desk(conn, table)
        given: Dict[str, Any] = {}
        if result:
            given["result"] = desk.typed_result(result, "the result field")
        if id_:
            given["id"] = typed_id(id_)
        if note:
            given["note"] = note
        return desk.reconcile(key, verdict, **given)
    try:
        done = await db.execute_write_fn(write)
    except OpsError as e:
        return str(e), 3
    call = done["call"]
    if call is None:
        return ("%s: released (%s); the next arrival claims it anew and runs"
                % (key, verdict)), 1
    return "%s: %s (%s)" % (key, call["status"], verdict), 1


def _pretty(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, indent=2)
    return str(value)


# ---- the chart: inline SVG, one stacked bar per age ------------------------------------

def chart(stats: Dict[str, Any]) -> str:
    """Calls by age (of created) and status: one horizontal bar per age,
    stacked by status, with the counts written in; no script, no CDN."""
    width, bar, gap, label_w = 560, 22, 10, 120
    most = max([sum(stats["age"][label].values()) for label, _ in AGES] + [1])
    scale = (width - label_w - 40) / most
    h = len(AGES) * (bar + gap) + 30
    out = ['<svg xmlns="http://www.w3.org/2000/svg" class="idem-chart" role="img"'
           ' width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif"'
           ' font-size="12"><title>calls by age and status</title>' % (width, h, width, h)]
    for i, (label, _) in enumerate(AGES):
        y = i * (bar + gap)
        out.append('<text x="0" y="%d" dominant-baseline="middle">%s</text>'
                   % (y + bar // 2, _esc(label)))
        x = float(label_w)
        counts = stats["age"][label]
        for status in stats["status"]:
            n = counts.get(status, 0)
            if not n:
                continue
            w = n * scale
            out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s">'
                       '<title>%s: %d %s</title></rect>'
                       % (x, y, w, bar, COLOURS.get(status, OTHER), _esc(label), n, status))
            if w >= 18:
                out.append('<text x="%.1f" y="%d" fill="white" text-anchor="middle"'
                           ' dominant-baseline="middle">%d</text>' % (x + w / 2, y + bar // 2, n))
            x += w
        total = sum(counts.values())
        out.append('<text x="%.1f" y="%d" dominant-baseline="middle" fill="#444">%d</text>'
                   % (x + 6, y + bar // 2, total))
    y = len(AGES) * (bar + gap) + 8
    x = label_w
    for status in stats["status"]:
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>'
                   '<text x="%d" y="%d" dominant-baseline="middle">%s</text>'
                   % (x, y, COLOURS.get(status, OTHER), x + 16, y + 6, status))
        x += 90
    out.append("</svg>")
    return "".join(out)


def _esc(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))
