# SPDX-License-Identifier: MIT
"""datasette-idem in a real browser: Debian's chromium, headless, driven by
Playwright, against `datasette serve` started as doc/operations.md shows
it (its command line and its metadata, read from the document).

It clicks through what an operator does: the list of calls, the unknown
one first; its page; "arrived" with the target's result; the call done,
and a duplicate of it replaying that result.  Screenshots go to
build/ops-screenshots/."""
import errno
import os
import random
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request

import idem
import pytest
import yaml
from datasette.app import Datasette
from playwright.sync_api import expect, sync_playwright

from conftest import SECRET, messages

ROOT = os.environ.get("IDEM_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def doc_blocks():
    """The fenced blocks of doc/operations.md: [(language, text)]."""
    with open(os.path.join(ROOT, "doc", "operations.md")) as f:
        text = f.read()
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def doc_command():
    """The `datasette serve` line of doc/operations.md, as argv."""
    for lang, text in doc_blocks():
        for line in text.splitlines():
            if "datasette serve" in line:
                return shlex.split(line.split("#")[0])
    raise AssertionError("doc/operations.md shows no `datasette serve` command")


def doc_metadata():
    """The metadata (YAML) of doc/operations.md for datasette-idem."""
    for lang, text in doc_blocks():
        if lang == "yaml" and "datasette-idem" in text:
            return text
    raise AssertionError("doc/operations.md shows no datasette-idem metadata")


def free_port():
    """A port of this task's range (22000-22999) that nothing listens on."""
    for port in random.sample(range(22000, 23000), 1000):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError as e:
                if e.errno != errno.EADDRINUSE:
                    raise
    raise AssertionError("no free port in 22000-22999")


@pytest.fixture
def server(app, tmp_path):
    """datasette serve, as the document says it, on app's database."""
    argv = doc_command()
    assert argv[:2] == [".venv/bin/datasette", "serve"], argv
    meta = tmp_path / "ops.yaml"
    meta.write_text(doc_metadata())
    port = free_port()
    args = []
    for a in argv[2:]:
        args.append({"ops.db": app.path, "ops.yaml": str(meta)}.get(a, a))
    args[args.index("--port") + 1] = str(port)
    assert args[args.index("--host") + 1] == "127.0.0.1"
    log = open(tmp_path / "datasette.log", "w+")
    p = subprocess.Popen([sys.executable, "-m", "datasette", "serve"] + args,
                         stdout=log, stderr=subprocess.STDOUT, cwd=str(tmp_path),
                         env=dict(os.environ, DATASETTE_SECRET=SECRET))
    base = "http://127.0.0.1:%d" % port
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(base + "/-/versions.json", timeout=2).read()
                break
            except OSError:
                if p.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise AssertionError("datasette did not start:\n" + log.read())
                time.sleep(0.2)
        yield base
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        log.close()


def test_doc_metadata_allows_whom_it_says():
    meta = yaml.safe_load(doc_metadata())
    assert meta["plugins"]["datasette-idem"]["allow"] == {"id": "alice"}


def test_reconcile_in_the_browser(app, server, tmp_path):
    shots = os.path.join(ROOT, "build", "ops-screenshots")
    os.makedirs(shots, exist_ok=True)
    cookie = Datasette([], secret=SECRET).sign({"a": {"id": "alice"}}, "actor")
    with sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True,
            args=ARGS, viewport={"width": 1100, "height": 900})
        try:
            browser.add_cookies([{"name": "ds_actor", "value": cookie, "url": server}])
            page = browser.new_page()
            page.goto(server + "/-/idem")
            page.get_by_role("link", name="calls", exact=True).click()
            expect(page.locator("h1")).to_contain_text("calls")
            # The unknown call is listed first.
            first = page.locator("table.calls").first.locator("tr").nth(1)
            expect(first.locator(".status")).to_have_text("unknown")
            expect(first.locator("td.key")).to_have_text(app.unknown)
            expect(page.locator("svg.idem-chart rect").first).to_be_visible()
            page.screenshot(path=os.path.join(shots, "table.png"), full_page=True)

            # A refusal, in the table's words: the pending call is not stale.
            said = app.refusal("not_arrived", app.pending)
            page.goto(server + "/-/idem/app/calls/" + app.pending)
            page.get_by_role("button", name="not_arrived").click()
            expect(page.locator("p.message-error")).to_have_text(said)
            assert app.row(app.pending)[0] == "pending"

            # Reconcile the unknown call as arrived, with the target's result.
            page.goto(server + "/-/idem/app/calls")
            first = page.locator("table.calls").first.locator("tr").nth(1)
            first.locator("td.key a").click()
            expect(page.locator("h1 .status")).to_have_text("unknown")
            page.fill('input[name="result"]', '{"charge": "ch_4200"}')
            page.fill('input[name="id"]', "ch_4200")
            page.fill('input[name="note"]', "the ledger shows it")
            page.get_by_role("button", name="arrived", exact=True).click()
            expect(page.locator("p.message-info")).to_have_text(
                "%s: done (arrived)" % app.unknown)
            expect(page.locator("h1 .status")).to_have_text("done")
            expect(page.locator("pre.result")).to_contain_text('"charge": "ch_4200"')
            expect(page.locator("pre.reply")).to_contain_text('"idempotent": true')
            expect(page.locator("pre.note")).to_have_text("the ledger shows it")
            page.screenshot(path=os.path.join(shots, "call.png"), full_page=True)
            assert messages(page.content()) == [("info", "%s: done (arrived)" % app.unknown)]
        finally:
            browser.close()

    # It replays: a duplicate of the call gets the target's result, not run.
    @app.calls.tool(kind="external")
    def charge_card(idempotency_key, cents):
        raise AssertionError("a reconciled call must not run again")
    assert charge_card.run("carol", "conv-3", cents=4200) == \
        idem.Outcome({"charge": "ch_4200"}, "ch_4200", app.unknown, True)
