# SPDX-License-Identifier: MIT
"""target_server.py -- the other system that an external tool writes to.

A real HTTP service on 127.0.0.1 (a random free port), a toy card processor:

    POST /charges   {"cents": 500}   with  Idempotency-Key: "<key>"
        201 {"charge": "ch_1", "cents": 500}     a new charge is made
    GET  /charges?key=<header value>
        200 the charge made for that key, or 404 {"charge": null}
        (the target's records, which decide an 'unknown' call)

    Target(honour_key=True)   a repeated key gets the first response again,
                              and nothing is charged twice
    Target(honour_key=False)  every arrival charges (a target that ignores
                              the header)
    Target(slow=True)         charges, then holds its answer until
                              target.answer.set() (or stop(), or 10 s):
                              the client times out, yet the charge was made
    Target(lose=N)            the first N requests arrive and are acted on
                              (charged, or replayed for a known key), and
                              their answers are lost: the connection closes
                              without one (target.lost counts them)
    target.on_arrival         None, or a function(key) called as a request
                              arrives, before it is acted on (a test kills
                              the sender there)

It counts arrivals per key (target.arrivals: every request that arrived,
repeats and lost answers included) and keeps every charge made
(target.charges: its effects).  Use it as a context manager, which starts and stops it:

    with Target() as target:
        urllib.request.urlopen(target.url + "/charges", ...)

Or run it by itself to try it with curl (or the README's examples, whose
default PAY_URL is port 8000):
    python3 target_server.py [--port 8000] [--ignore-key] [--lose N]
"""
import collections
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Target:
    def __init__(self, honour_key=True, slow=False, lose=0):
        self.honour_key = honour_key
        self.slow = slow
        self.lose = lose                         # answers still to lose
        self.lost = 0                            # answers lost
        self.on_arrival = None
        self.answer = threading.Event()         # a slow target answers now
        self.arrivals = collections.Counter()   # key -> requests received
        self.charges = []                        # every charge made
        self.first = {}                          # key -> (status, body)
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)
        self.inflight = 0
        self.server = None

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def charge(self, key, body):
        """One POST /charges: returns (status, response body)."""
        with self.lock:
            self.arrivals[key] += 1
            if self.honour_key and key in self.first:
                return self.first[key]             # replayed, not charged
            charge = {"charge": "ch_%d" % (len(self.charges) + 1),
                      "cents": body.get("cents"), "key": key}
            self.charges.append(charge)
            reply = (201, {"charge": charge["charge"], "cents": charge["cents"]})
            if key:
                self.first[key] = reply
            return reply

    def record(self, key):
        with self.lock:
            return [c for c in self.charges if c["key"] == key]

    def start(self, port=0):
        target = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 5                            # per connection, bounded

            def log_message(self, *args):          # quiet
                pass

            def send_json(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(n) or b"{}")
                key = self.headers.get("Idempotency-Key")
                if target.on_arrival is not None:
                    target.on_arrival(key)
                status, reply = target.charge(key, body)
                with target.lock:
                    lose = target.lose > 0
                    if lose:
                        target.lose -= 1
                        target.lost += 1
                if lose:                          # acted on; the answer is lost
                    self.close_connection = True
                    return
                if target.slow:
                    target.answer.wait(10)        # later than the client waits
                try:
                    self.send_json(status, reply)
                except OSError:
                    pass                      # the client gave up meanwhile

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                key = urllib.parse.parse_qs(url.query).get("key", [None])[0]
                found = target.record(key)
                self.send_json(200 if found else 404,
                               found[0] if found else {"charge": None})

            def handle_one_request(self):
                with target.lock:
                    target.inflight += 1
                try:
                    super().handle_one_request()
                finally:
                    with target.lock:
                        target.inflight -= 1
                        target.idle.notify_all()

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever,
                         kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self, wait=5.0):
        """Stop serving; wait (bounded) for requests still being answered."""
        self.answer.set()
        self.server.shutdown()
        with self.lock:
            self.idle.wait_for(lambda: self.inflight == 0, timeout=wait)
        self.server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="a toy card processor on 127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="default: a free one")
    ap.add_argument("--ignore-key", action="store_true",
                    help="charge every arrival (ignore Idempotency-Key)")
    ap.add_argument("--lose", type=int, default=0, metavar="N",
                    help="lose the answers of the first N requests")
    opts = ap.parse_args()
    t = Target(honour_key=not opts.ignore_key, lose=opts.lose).start(opts.port)
    print("listening on", t.url, "(Ctrl-C stops)")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        t.stop()
