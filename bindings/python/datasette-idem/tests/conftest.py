# SPDX-License-Identifier: MIT
"""Fixtures of the datasette-idem tests: a database with one call of each
kind an operator meets (done, pending, unknown), and a Datasette on it."""
import html
import re
import sqlite3

import idem
import pytest
from datasette.app import Datasette

SECRET = "idem-test-secret"


class App:
    """The database of a test: its path, keys, and a connection."""

    def __init__(self, path):
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.calls = idem.Calls(self.conn)

        @self.calls.tool(kind="local")
        def checkout(db, sku):
            return idem.Result({"order": 1}, id=1)
        checkout("alice", "conv-7", sku="A0001")
        self.done = checkout.key("alice", "conv-7", sku="A0001")
        self.pending = self.claim("bob", "conv-2", "send_mail", '{"to":"carol"}')
        self.unknown = self.claim("carol", "conv-3", "charge_card", '{"cents":4200}')
        self.conn.execute("UPDATE calls SET status = 'failed', note = 'timeout after 30 s'"
                          " WHERE key = ? AND member = 0", (self.unknown,))

    def claim(self, who, conv, tool, args):
        self.conn.execute("INSERT INTO calls(who, conv, tool, args, kind)"
                          " VALUES(?, ?, ?, ?, 'external')", (who, conv, tool, args))
        return self.calls.key(who, conv, tool, args)

    def row(self, key):
        return self.conn.execute("SELECT status, id, result, note FROM calls"
                                 " WHERE key = ? AND member = 0", (key,)).fetchone()

    def refusal(self, verdict, key):
        """What the table says to this reconcile in SQL."""
        with pytest.raises(sqlite3.OperationalError) as e:
            self.conn.execute("UPDATE calls SET reconcile = ? WHERE key = ? AND member = 0",
                              (verdict, key))
        return str(e.value)


@pytest.fixture
def app(tmp_path):
    a = App(str(tmp_path / "app.db"))
    yield a
    a.conn.close()


def datasette(app, metadata=None):
    return Datasette([app.path], metadata=metadata or {}, secret=SECRET)


def actor(ds, id_):
    return {"ds_actor": ds.sign({"a": {"id": id_}}, "actor")}


def messages(text):
    """The messages a page shows: [(kind, text)], unescaped."""
    return [(k, html.unescape(m)) for k, m in
            re.findall(r'<p class="message-(\w+)">(.*?)</p>', text, re.DOTALL)]


ALLOW_ALICE = {"plugins": {"datasette-idem": {"allow": {"id": "alice"}}}}
