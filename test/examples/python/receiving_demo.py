# SPDX-License-Identifier: MIT
"""receiving_demo.py -- receiving_server.py over real HTTP on 127.0.0.1.

    /usr/bin/python3 receiving_demo.py DB EXT

Starts the server as its own process (--work 0.5: each order takes half a
second), sends it requests as clients would, and prints one line per case
(test/receiving.test checks them):

    no key: 400
    bad body: 400
    concurrent: 201 409            two requests with one key at once
    replay: 201 <body> replayed    the same key again: the stored response
    same body respelled: 201 replayed
    other body: 422                the same key with another body
    other client: 201              the same key from another client is
                                   another call
    orders: 2                      orders placed: one per call
"""
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def post(url, body, key=None, client="shop-1"):
    headers = {"Content-Type": "application/json", "X-Client": client}
    if key is not None:
        headers["Idempotency-Key"] = '"%s"' % key
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url + "/orders", data=data, headers=headers,
                                 method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode(), r.headers.get("Idempotent-Replayed")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), e.headers.get("Idempotent-Replayed")


def main():
    db, ext = sys.argv[1], sys.argv[2]
    server = subprocess.Popen(
        [sys.executable, "-B", os.path.join(HERE, "receiving_server.py"),
         "--db", db, "--ext", ext, "--work", "2"],
        stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline().strip()
        url = line.rsplit(" ", 1)[-1]
        order = {"sku": "A0001", "qty": 2}

        print("no key: %d" % post(url, order)[0])
        print("bad body: %d" % post(url, b"{not json", key="k-bad")[0])

        # Two requests with one key at once: one places the order, the other
        # finds it in flight.  The second is sent once the first's claim is
        # committed (seen in the shadow table), so that the case does not
        # hang on how fast threads start on a busy machine; the work takes
        # 2 s, ample time for the second to arrive while the first runs.
        results = []
        def send():
            results.append(post(url, order, key="k-1"))
        threads = [threading.Thread(target=send) for _ in range(2)]
        threads[0].start()
        watch = sqlite3.connect(db, timeout=10)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                n = watch.execute("SELECT count(*) FROM requests_claim"
                                  " WHERE conv = 'k-1' AND status = 'pending'"
                                  ).fetchone()[0]
            except sqlite3.OperationalError:
                n = 0                             # not created yet
            if n:
                break
            time.sleep(0.01)
        watch.close()
        threads[1].start()
        for t in threads:
            t.join()
        codes = sorted(r[0] for r in results)
        print("concurrent: %s" % " ".join(map(str, codes)))
        first = [r for r in results if r[0] == 201][0]

        again = post(url, order, key="k-1")
        print("replay: %d %s %s" % (again[0], again[1],
                                    "replayed" if again[2] == "true" else "fresh"))
        print("replay body is the first: %s" % (again[1] == first[1]))
        respelled = post(url, b'{ "qty": 2.0, "sku": "A0001" }', key="k-1")
        print("same body respelled: %d %s" % (respelled[0],
              "replayed" if respelled[2] == "true" else "fresh"))
        other = post(url, {"sku": "B0002", "qty": 9}, key="k-1")
        print("other body: %d %s" % (other[0], json.loads(other[1])["error"]))
        print("other client: %d" % post(url, order, key="k-1", client="shop-2")[0])
    finally:
        server.terminate()
        server.wait()
    con = sqlite3.connect(db)
    print("orders: %d" % con.execute("SELECT count(*) FROM orders").fetchone()[0])
    con.close()


if __name__ == "__main__":
    main()
