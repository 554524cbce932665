# SPDX-License-Identifier: MIT
"""receiving_server.py -- the receiving side (doc/contract.md §13): an HTTP
server that honours the Idempotency-Key header, as the IETF draft's server
role, with an idem table.  Python's standard library only.

    POST /orders   {"sku": "A0001", "qty": 2}
         Idempotency-Key: "<the client's key>"     (required)
         X-Client: <the client>                    (stands in for the
                                                    authenticated client)

    201 {"order": 1, "sku": "A0001", "qty": 2}      the order is placed
    201 the same body, Idempotent-Replayed: true    a retry of a done request
    409 {"error": ...}                              the first request with
                                                    this key is in flight
    422 {"error": ...}                              the key was used with
                                                    another body
    400 {"error": ...}                              no key, or a body that is
                                                    not JSON

The call of a request is: who = the client, conv = the key the client sent,
tool = method and path, keyargs = '{}' (the client's key alone names the
call), args = the request body.  The table has args_mismatch=error, so a
key reused with another body is an SQL error: 422.

The work (placing the order) takes --work seconds, outside any
transaction, as a call to another system would: the claim is committed
first (kind 'external'), so a second request with the same key sees it
pending and gets 409 instead of waiting.  Then the order and the response
are recorded in one transaction.  A request whose work fails leaves its
call 'unknown' (the work may have happened): later requests with that key
get 409 until an operator reconciles it (doc/operations.md).

It counts the requests that arrive, by key (server.arrivals), and
--lose N (Server(lose=N)) loses the answers of the first N requests: each
is acted on and recorded, then its connection closes without an answer,
as a network that drops the answer would; a client that honours the
answer's loss by resending with the same key (doc/contract.md §14) gets
the stored response.

Run it:   /usr/bin/python3 receiving_server.py --db orders.db --ext build/idem
It prints "listening on http://127.0.0.1:PORT" and serves until killed.
"""
import argparse
import collections
import json
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS requests USING idem(args_mismatch=error);
CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, sku TEXT, qty INTEGER);
"""


def connect(path, ext):
    db = sqlite3.connect(path, timeout=10, isolation_level=None,
                         check_same_thread=False)
    db.enable_load_extension(True)
    db.load_extension(ext)
    db.enable_load_extension(False)
    return db


def parse_key(value):
    """The key from an Idempotency-Key header: a structured-field string
    ("...") as the draft has it; a bare token is accepted too."""
    if value is None:
        return None
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return value or None


class Server:
    def __init__(self, db_path, ext, work=0.0, port=0, lose=0):
        self.db_path, self.ext, self.work = db_path, ext, work
        self.lose = lose                        # answers still to lose
        self.arrivals = collections.Counter()   # key -> requests that arrived
        self.lock = threading.Lock()
        self.local = threading.local()
        setup = connect(db_path, ext)
        setup.executescript(SCHEMA)
        setup.close()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                server.handle(self)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]

    def db(self):
        if not hasattr(self.local, "db"):
            self.local.db = connect(self.db_path, self.ext)
        return self.local.db

    def reply(self, req, status, body, replayed=False):
        if getattr(self.local, "lose", False):   # acted on; the answer is lost
            req.close_connection = True
            return
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            req.send_response(status)
            req.send_header("Content-Type", "application/json")
            req.send_header("Content-Length", str(len(data)))
            if replayed:
                req.send_header("Idempotent-Replayed", "true")
            req.end_headers()
            req.wfile.write(data)
        except OSError:             # the client gave up meanwhile (a timeout)
            req.close_connection = True

    def handle(self, req):
        self.local.lose = False
        if req.path != "/orders":
            return self.reply(req, 404, {"error": "no such route"})
        body = req.rfile.read(int(req.headers.get("Content-Length") or 0))
        key = parse_key(req.headers.get("Idempotency-Key"))
        with self.lock:
            self.arrivals[key] += 1
            self.local.lose = self.lose > 0
            self.lose -= self.local.lose
        if key is None:           # this route requires a key
            return self.reply(req, 400, {"error": "Idempotency-Key header is required"})
        who = req.headers.get("X-Client", "anonymous")
        tool = "POST /orders"
        db = self.db()
        try:
            # The claim, committed on its own: the work happens outside
            # the transaction, and a duplicate must see it in flight.
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT OR IGNORE INTO requests(who, conv, tool, args,"
                       " keyargs, kind, owner) VALUES(?, ?, ?, ?, '{}',"
                       " 'external', ?)",
                       (who, key, tool, body.decode("utf-8", "replace"),
                        "receiving_server thread %d" % threading.get_ident()))
            won = db.execute("SELECT changes()").fetchone()[0] == 1
            db.execute("COMMIT")
        except sqlite3.Error as e:
            db.execute("ROLLBACK") if db.in_transaction else None
            if "already used with other arguments" in str(e):
                return self.reply(req, 422, {"error": "Idempotency-Key reused"
                                             " with a different request body"})
            if "args" in str(e):
                return self.reply(req, 400, {"error": "the body must be JSON"})
            raise
        ikey = db.execute("SELECT idem_key(?, ?, ?, '{}')", (who, key, tool)).fetchone()[0]
        if not won:
            return self.replay(req, db, ikey)
        try:
            order = json.loads(body)
            time.sleep(self.work)                     # the work, e.g. a payment
            db.execute("BEGIN IMMEDIATE")
            oid = db.execute("INSERT INTO orders(sku, qty) VALUES(?, ?)",
                             (order.get("sku"), order.get("qty"))).lastrowid
            response = {"order": oid, "sku": order.get("sku"), "qty": order.get("qty")}
            db.execute("UPDATE requests SET status = 'done', id = ?, result = ?"
                       " WHERE key = ? AND member = 0",
                       (oid, json.dumps({"status": 201, "body": response}), ikey))
            db.execute("COMMIT")
        except Exception as e:
            if db.in_transaction:
                db.execute("ROLLBACK")
            db.execute("UPDATE requests SET status = 'failed', note = ?"
                       " WHERE key = ? AND member = 0", (repr(e), ikey))
            return self.reply(req, 500, {"error": "the order failed: %r" % e})
        return self.reply(req, 201, response)

    def replay(self, req, db, ikey):
        row = db.execute("SELECT status, result FROM requests"
                         " WHERE key = ? AND member = 0", (ikey,)).fetchone()
        if row is None:            # released meanwhile: ask for a retry
            return self.reply(req, 409, {"error": "retry the request"})
        status, result = row
        if status == "done":
            stored = json.loads(result)
            return self.reply(req, stored["status"], stored["body"], replayed=True)
        if status == "pending":
            return self.reply(req, 409, {"error": "a request with this"
                                         " Idempotency-Key is in progress"})
        return self.reply(req, 409, {"error": "the outcome of the first request"
                                     " with this Idempotency-Key is unknown;"
                                     " it is not retried"})

    def serve(self):
        self.httpd.serve_forever()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--ext", required=True, help="the idem extension (build/idem)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--work", type=float, default=0.0,
                    help="seconds the work of a request takes")
    ap.add_argument("--lose", type=int, default=0, metavar="N",
                    help="lose the answers of the first N requests")
    a = ap.parse_args()
    server = Server(a.db, a.ext, a.work, a.port, a.lose)
    print("listening on " + server.url, flush=True)
    server.serve()


if __name__ == "__main__":
    main()
