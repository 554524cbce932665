# SPDX-License-Identifier: MIT
"""datasette-idem through Datasette's own test client (datasette.client)."""
import html
import os
import re
import subprocess
import sys
import time

import idem
import idem.ops
import pytest

from conftest import ALLOW_ALICE, actor, datasette, messages

pytestmark = pytest.mark.asyncio


async def csrf(ds, path, cookies):
    """GET the page; the CSRF token of its forms and the cookies to post with."""
    r = await ds.client.get(path, cookies=cookies)
    assert r.status_code == 200, r.text
    if 'name="csrftoken"' not in r.text:
        # A page without a form (no permission): take a token where there is one.
        r = await ds.client.get("/-/messages", cookies=cookies)
    token = re.search(r'name="csrftoken" value="([^"]+)"', r.text).group(1)
    return token, dict(cookies, ds_csrftoken=r.cookies["ds_csrftoken"])


async def post(ds, path, cookies, **form):
    token, cookies = await csrf(ds, path, cookies)
    return await ds.client.post(path, data=dict(form, csrftoken=token), cookies=cookies)


async def follow(ds, r, cookies):
    """The page a POST redirected to, with its messages."""
    assert r.status_code == 302, r.text
    cookies = dict(cookies, ds_messages=r.cookies.get("ds_messages", ""))
    page = await ds.client.get(r.headers["location"], cookies=cookies)
    assert page.status_code == 200
    return page


async def test_index_and_links(app):
    ds = datasette(app)
    r = await ds.client.get("/-/idem")
    assert r.status_code == 200
    assert '<a href="/-/idem/app/calls">calls</a>' in r.text
    r = await ds.client.get("/app/calls")               # Datasette's own table page
    assert r.status_code == 200
    assert "/-/idem/app/calls" in r.text                 # table_actions
    r = await ds.client.get("/")
    assert 'href="/-/idem"' in r.text                    # menu_links


async def test_table_page_unknown_first(app):
    ds = datasette(app)
    r = await ds.client.get("/-/idem/app/calls")
    assert r.status_code == 200
    rows = re.findall(r'<td class="key"><a href="[^"]+">([0-9a-f]{32})</a>', r.text)
    assert rows == [app.unknown, app.pending, app.done]
    assert ">unknown 1</a>" in r.text and ">pending 1</a>" in r.text
    # The chart: inline SVG, a bar per age, nothing fetched from elsewhere.
    svg = re.search(r'<svg [^>]*class="idem-chart".*?</svg>', r.text, re.DOTALL).group(0)
    for title in ("&lt; 1 hour: 1 unknown", "&lt; 1 hour: 1 pending", "&lt; 1 hour: 1 done"):
        assert "<title>%s</title>" % title in svg
    assert not re.search(r'<script[^>]+src="https?:', r.text)
    r = await ds.client.get("/-/idem/app/calls?status=unknown")
    assert re.findall(r'class="key"><a href="[^"]+">([0-9a-f]{32})', r.text) == [app.unknown]
    r = await ds.client.get("/-/idem/app/calls?tool=checkout")
    assert re.findall(r'class="key"><a href="[^"]+">([0-9a-f]{32})', r.text) == [app.done]


async def test_an_unknown_status_is_refused(app):
    # ?status= is one of the package's statuses (idem.ops.STATUSES) or
    # stale; any other is a 400 that names it and them, not every call
    # shown as though no filter had been asked for.
    ds = datasette(app)
    for bad in ("bogus", "Unknown", "released", "<b>x</b>"):
        r = await ds.client.get("/-/idem/app/calls", params={"status": bad})
        assert r.status_code == 400, bad
        want = ("no status %r to show calls of: ?status= is one of %s"
                % (bad, ", ".join(idem.ops.STATUSES + ("stale",))))
        assert want in html.unescape(r.text), r.text
        assert 'class="key"' not in r.text and "<b>x</b>" not in r.text
    for good in idem.ops.STATUSES + ("stale", ""):
        r = await ds.client.get("/-/idem/app/calls", params={"status": good})
        assert r.status_code == 200, good


async def test_call_page(app):
    ds = datasette(app)
    r = await ds.client.get("/-/idem/app/calls/" + app.unknown)
    assert r.status_code == 200
    note = app.row(app.unknown)[3]
    assert note.endswith("(reported: timeout after 30 s)")
    assert '<pre class="note">%s</pre>' % note.replace("'", "&#39;") in r.text
    assert "Idempotency-Key: &#34;%s&#34;" % app.unknown in r.text
    assert "&#34;status&#34;: &#34;unknown&#34;" in r.text.replace('"', "&#34;")
    # No permission: no buttons, and says which permission it needs.
    assert 'name="verdict"' not in r.text
    assert "<code>idem-reconcile</code>" in r.text
    r = await ds.client.get("/-/idem/app/calls/" + "0" * 32)
    assert r.status_code == 404


async def test_reconcile_needs_the_permission(app):
    for metadata, who in ((None, "alice"), (ALLOW_ALICE, "bob"), (ALLOW_ALICE, None)):
        ds = datasette(app, metadata)
        cookies = actor(ds, who) if who else {}
        token, cookies = await csrf(ds, "/-/idem/app/calls/" + app.unknown, cookies)
        r = await ds.client.post("/-/idem/app/calls/" + app.unknown, cookies=cookies,
                                 data={"csrftoken": token, "verdict": "arrived"})
        assert r.status_code == 403, (metadata, who)
        assert app.row(app.unknown)[0] == "unknown"
    ds = datasette(app, ALLOW_ALICE)
    assert await ds.permission_allowed({"id": "alice"}, "idem-reconcile",
                                       ("app", "calls")) is True
    assert await ds.permission_allowed({"id": "bob"}, "idem-reconcile",
                                       ("app", "calls")) is False
    assert await ds.permission_allowed(None, "idem-reconcile", ("app", "calls")) is False


async def test_reconcile_arrived_then_replays(app):
    ds = datasette(app, ALLOW_ALICE)
    alice = actor(ds, "alice")
    page = "/-/idem/app/calls/" + app.unknown
    r = await ds.client.get(page, cookies=alice)
    assert [v for v in re.findall(r'name="verdict" value="(\w+)"', r.text)] == \
        ["arrived", "not_arrived", "not_sent"]
    # The note field the page reads is in the form it renders: the arrived
    # one (a release keeps no row to hold a note), as the CLI's --note.
    forms = re.findall(r'<form class="verdict".*?</form>', r.text, re.S)
    assert [re.findall(r'<input type="text" name="(\w+)"', f) for f in forms] == \
        [["result", "id", "note"], [], []]
    r = await post(ds, page, alice, verdict="arrived", result='{"charge": "ch_81"}',
                   id="ch_81", note="seen in the ledger, ticket 4471")
    shown = await follow(ds, r, alice)
    assert messages(shown.text) == [("info", "%s: done (arrived)" % app.unknown)]
    assert app.row(app.unknown) == ("done", "ch_81", '{"charge":"ch_81"}',
                                    "seen in the ledger, ticket 4471")
    assert '<pre class="note">seen in the ledger, ticket 4471</pre>' in shown.text
    assert 'style="background: #2e8b57">done</span>' in shown.text
    assert '<pre class="result">{\n  &#34;charge&#34;: &#34;ch_81&#34;\n}</pre>' in shown.text

    @app.calls.tool(kind="external")
    def charge_card(idempotency_key, cents):
        raise AssertionError("a reconciled call must not run again")
    assert charge_card.run("carol", "conv-3", cents=4200) == \
        idem.Outcome({"charge": "ch_81"}, "ch_81", app.unknown, True)


async def test_refusals_are_the_tables_words(app):
    ds = datasette(app, ALLOW_ALICE)
    alice = actor(ds, "alice")
    for key, verdict in ((app.unknown, "not_sent"), (app.pending, "not_arrived"),
                         (app.done, "arrived")):
        said = app.refusal(verdict, key)
        before = app.row(key)
        r = await post(ds, "/-/idem/app/calls/" + key, alice, verdict=verdict)
        shown = await follow(ds, r, alice)
        assert messages(shown.text) == [("error", said)]
        assert app.row(key) == before
    r = await post(ds, "/-/idem/app/calls/" + app.unknown, alice, verdict="arrived",
                   result="{not json")
    shown = await follow(ds, r, alice)
    assert messages(shown.text) == [("error", "idem: the result field is not JSON:"
                                     " expected a member name or '}' at byte 2"
                                     " (in '{not json')")]
    assert app.row(app.unknown)[0] == "unknown"


async def test_result_and_id_read_as_the_cli_reads_them(app):
    """One rule for the page and the CLI (idem.ops: Desk.typed_result,
    typed_id): NaN, Infinity and 1e999 are not JSON, and the message names
    the form's field, not calls.reconcile; a numeric id is an integer."""
    ds = datasette(app, ALLOW_ALICE)
    alice = actor(ds, "alice")
    page = "/-/idem/app/calls/" + app.unknown
    for text, why in (("NaN", "expected a value at byte 1"),
                      ("[-Infinity]", "invalid number at byte 2"),
                      ('{"a": 1e999}', "number overflows a double at byte 7"),
                      ('{"a": 1, "a": 2}', 'duplicate member name "a" at byte 10')):
        r = await post(ds, page, alice, verdict="arrived", result=text, id="81")
        shown = await follow(ds, r, alice)
        assert messages(shown.text) == [("error", "idem: the result field is not JSON:"
                                         " %s (in %r)" % (why, text))], text
        assert app.row(app.unknown)[0] == "unknown"
    r = await post(ds, page, alice, verdict="arrived", result='{"charge": 81}', id="81")
    assert messages((await follow(ds, r, alice)).text) == \
        [("info", "%s: done (arrived)" % app.unknown)]
    assert app.conn.execute("SELECT typeof(id), id FROM calls WHERE key = ? AND member = 0",
                            (app.unknown,)).fetchone() == ("integer", 81)


async def test_release_goes_back_to_the_table(app):
    ds = datasette(app, ALLOW_ALICE)
    alice = actor(ds, "alice")
    r = await post(ds, "/-/idem/app/calls/" + app.unknown, alice, verdict="not_arrived")
    assert r.headers["location"] == "/-/idem/app/calls"
    shown = await follow(ds, r, alice)
    assert messages(shown.text) == [("info", "%s: released (not_arrived); the next"
                                     " arrival claims it anew and runs" % app.unknown)]
    assert app.row(app.unknown) is None


async def test_csrf(app):
    ds = datasette(app, ALLOW_ALICE)
    r = await ds.client.post("/-/idem/app/calls/" + app.unknown,
                             cookies=actor(ds, "alice"), data={"verdict": "arrived"})
    assert r.status_code == 403
    assert app.row(app.unknown)[0] == "unknown"


async def test_view_permissions_and_other_tables(app):
    app.conn.execute("CREATE TABLE plain(x)")
    ds = datasette(app, {"databases": {"app": {"tables": {"calls": {"allow": {"id": "root"}}}}}})
    assert (await ds.client.get("/-/idem/app/calls")).status_code == 403
    assert (await ds.client.get("/-/idem/app/calls/" + app.unknown)).status_code == 403
    assert "/-/idem/app/calls" not in (await ds.client.get("/-/idem")).text
    r = await ds.client.get("/-/idem/app/calls", cookies=actor(ds, "root"))
    assert r.status_code == 200
    ds = datasette(app)
    assert (await ds.client.get("/-/idem/app/plain")).status_code == 404
    assert (await ds.client.get("/-/idem/nope/calls")).status_code == 404


async def test_a_python_that_cannot_load_extensions(app, monkeypatch):
    import datasette_idem
    why = ("idem: this Python's sqlite3 module cannot load extensions (sqlite3.Connection"
           " has no enable_load_extension); use a Python built with"
           " --enable-loadable-sqlite-extensions, such as Debian's /usr/bin/python3")

    def load(conn):
        raise RuntimeError(why)
    monkeypatch.setattr(datasette_idem.idem, "load", load)
    monkeypatch.setattr(datasette_idem, "_load_error", None)
    ds = datasette(app)
    for path in ("/-/idem", "/-/idem/app/calls", "/-/idem/app/calls/" + app.unknown):
        r = await ds.client.get(path)
        assert r.status_code == (200 if path == "/-/idem" else 500), path
        assert messages(r.text) == [("error", "The idem extension did not load into"
                                     " Datasette's connections: " + why)]


async def test_a_python_that_cannot_load_idem_at_all(app, tmp_path):
    # The plugin's import reads nothing from the extension: where it cannot
    # be loaded at all, Datasette still starts, the index says why, a
    # table's page is a 500 that says why.
    missing = str(tmp_path / "no-such-idem.so")
    code = """if True:
        import asyncio, sys, idem
        idem.loadable_path = lambda: sys.argv[2]
        from datasette.app import Datasette
        async def main():
            ds = Datasette([sys.argv[1]])
            for path in ("/-/idem", "/-/idem/app/calls"):
                r = await ds.client.get(path)
                print(path, r.status_code, sys.argv[2] in r.text)
        asyncio.run(main())
    """
    p = subprocess.run([sys.executable, "-c", code, app.path, missing], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    assert (p.returncode, p.stdout.split("\n")) == (
        0, ["/-/idem 200 True", "/-/idem/app/calls 500 True", ""]), p.stderr


async def test_stale_calls_and_table_configuration(app):
    jobs = idem.Calls(app.conn, "jobs", stale_after="1 second")
    for who in ("frank", "gina"):
        app.conn.execute("INSERT INTO jobs(who, conv, tool, args, kind, owner)"
                         " VALUES(?, 'c', 'export', '{}', 'external', 'worker-2')", (who,))
    frank, gina = (jobs.key(w, "c", "export", {}) for w in ("frank", "gina"))
    time.sleep(1.1)
    app.conn.execute("UPDATE jobs SET note = 'page 3' WHERE key = ? AND member = 0", (gina,))
    # The allow block of this one table: alice may reconcile jobs, not calls.
    ds = datasette(app, {"databases": {"app": {"tables": {"jobs": {"plugins": {
        "datasette-idem": {"allow": {"id": "alice"}}}}}}}})
    r = await ds.client.get("/-/idem/app/jobs")
    assert re.findall(r'class="key"><a href="[^"]+">([0-9a-f]{32})', r.text) == [frank, gina]
    assert ">stale 1</a>" in r.text
    r = await ds.client.get("/-/idem/app/jobs?status=stale")
    assert re.findall(r'class="key"><a href="[^"]+">([0-9a-f]{32})', r.text) == [frank]
    alice = actor(ds, "alice")
    r = await post(ds, "/-/idem/app/jobs/" + frank, alice, verdict="not_arrived")
    shown = await follow(ds, r, alice)
    assert messages(shown.text) == [("info", "%s: released (not_arrived); the next"
                                     " arrival claims it anew and runs" % frank)]
    assert await ds.permission_allowed({"id": "alice"}, "idem-reconcile",
                                       ("app", "calls")) is False
    r = await ds.client.get("/-/idem/app/calls/" + app.unknown, cookies=alice)
    assert 'name="verdict"' not in r.text
