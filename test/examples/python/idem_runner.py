# SPDX-License-Identifier: MIT
"""idem_runner.py -- an idempotent tool runner for an AI assistant, on idem.

Copy this file into your application.  Standard library only; it needs a
Python whose sqlite3 module can load extensions (Debian's /usr/bin/python3
can; conn.enable_load_extension must exist).

    runner = ToolRunner("app.db", extension="build/idem")

    @runner.local                      # a write into this same database
    def place_order(db, sku, qty):
        cur = db.execute("INSERT INTO orders(sku, qty) VALUES(?, ?)", (sku, qty))
        return cur.lastrowid, {"order": cur.lastrowid}       # (id, result)

    @runner.external                   # a write to another system
    def charge_card(idempotency_key, cents):
        ...send the request with the header  Idempotency-Key: <idempotency_key>
        return charge_id, {"charge": charge_id}               # (id, result)

    reply = place_order("alice", "conv-7", sku="A0001", qty=2)

Every call is (who, conv, tool name, keyword arguments).  The first arrival
runs the tool and gets {"id", "idempotent": false, "result", "status"};
any later arrival of the same call (the model's retry, however its
arguments are spelled) does not run it and gets the reply that idem
recorded: {"id": ..., "idempotent": true, ...}.  A tool's effect must
depend on its arguments only (put the date, the nonce, the version you read
into them), or the key is not honest.
"""
import functools
import json
import sqlite3


class ToolRunner:
    def __init__(self, path, extension="build/idem", busy_timeout=5.0,
                 table="calls"):
        # isolation_level=None: the sqlite3 module never opens or commits a
        # transaction behind our back; we write BEGIN IMMEDIATE and COMMIT.
        # timeout: how long a statement waits for another connection's
        # write lock (SQLITE_BUSY) before it raises "database is locked".
        self.db = sqlite3.connect(path, isolation_level=None,
                                  timeout=busy_timeout)
        self.db.enable_load_extension(True)
        self.db.load_extension(extension)
        self.db.enable_load_extension(False)
        self.table = table
        self.db.execute(f'CREATE VIRTUAL TABLE IF NOT EXISTS "{table}" USING idem')

    def close(self):
        self.db.close()

    def key(self, who, conv, tool, args):
        """The call's key: 32 hex digits, computed by idem_key() in SQL."""
        return self.db.execute("SELECT idem_key(?, ?, ?, ?)",
                               (who, conv, tool, _json(args))).fetchone()[0]

    def replay(self, key):
        """What a duplicate arrival hands back: the reply idem recorded."""
        row = self.db.execute(f'SELECT reply FROM "{self.table}"'
                              " WHERE key = ? AND member = 0", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def _claim(self, who, conv, tool, args, kind):
        """BEGIN IMMEDIATE and claim the call.  Returns (key, None) when this
        arrival owns it (the transaction is left open), or (key, reply) for
        a duplicate (the transaction is closed; do not act)."""
        key = self.key(who, conv, tool, args)
        # IMMEDIATE takes the write lock now, so two arrivals of one call
        # queue here (busy timeout) instead of racing.
        self.db.execute("BEGIN IMMEDIATE")
        try:
            cur = self.db.execute(
                f'INSERT OR IGNORE INTO "{self.table}"(who, conv, tool, args, kind)'
                " VALUES(?, ?, ?, ?, ?)", (who, conv, tool, _json(args), kind))
            if cur.rowcount == 1:            # changes() = 1: ours
                return key, None
            reply = self.replay(key)         # changes() = 0: a duplicate
            self.db.execute("ROLLBACK")
            return key, reply
        except BaseException:
            self._rollback()
            raise

    def _record(self, key, status, id_=None, result=None, note=None):
        self.db.execute(
            f'UPDATE "{self.table}" SET status = ?, id = ?, result = ?, note = ?'
            " WHERE key = ? AND member = 0",
            (status, id_, None if result is None else _json(result), note, key))

    def _rollback(self):
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def local(self, fn):
        """A tool that writes into this database.  fn(db, **args) runs inside
        the claim's transaction (it must not COMMIT or ROLLBACK itself) and
        returns (id, result).  Claim, writes and outcome commit together."""
        @functools.wraps(fn)
        def run(who, conv, **args):
            key, reply = self._claim(who, conv, fn.__name__, args, "local")
            if reply is not None:
                return reply
            try:
                self.db.execute("SAVEPOINT tool")
                try:
                    id_, result = fn(self.db, **args)
                except Exception as e:
                    # Undo the tool's own writes, then record the failure:
                    # idem releases the claim, so a retry really runs again
                    # (or keeps it as 'failed' with local_failure=keep).
                    self.db.execute("ROLLBACK TO tool")
                    self._record(key, "failed", note=f"{type(e).__name__}: {e}")
                    self.db.execute("COMMIT")
                    raise
                self.db.execute("RELEASE tool")
                self._record(key, "done", id_, result)
                self.db.execute("COMMIT")
            except BaseException:
                self._rollback()     # a crash or an interrupt: all of it goes
                raise
            return {"id": id_, "idempotent": False, "result": result,
                    "status": "done"}
        return run

    def external(self, fn):
        """A tool that writes to another system.  fn(idempotency_key, **args)
        sends the request with the header  Idempotency-Key: <idempotency_key>
        and returns (id, result).  If it raises (an error, a timeout), the
        request may have arrived anyway: the call is recorded as 'unknown',
        never retried, and the exception goes on to the caller."""
        @functools.wraps(fn)
        def run(who, conv, **args):
            key, reply = self._claim(who, conv, fn.__name__, args, "external")
            if reply is not None:
                return reply
            try:
                header, = self.db.execute("SELECT idem_header(?)", (key,)).fetchone()
                self.db.execute("COMMIT")    # the claim is durable before
            except BaseException:            # anything leaves this process
                self._rollback()
                raise
            name, value = header.split(": ", 1)  # 'Idempotency-Key', '"<key>"'
            try:
                id_, result = fn(value, **args)
            except BaseException as e:
                # 'failed' on an external call becomes 'unknown', with the
                # note that the target's records decide the outcome.
                self._record(key, "failed", note=f"{type(e).__name__}: {e}")
                raise
            # If this write fails (say the database stays locked), the call
            # stays 'pending': duplicates are told it is in progress.
            self._record(key, "done", id_, result)
            return {"id": id_, "idempotent": False, "result": result,
                    "status": "done"}
        return run


def _json(args):
    # idem canonicalizes the text (RFC 8785), so key order and spacing do
    # not matter; NaN and Infinity are not JSON and are refused here.
    return json.dumps(args, allow_nan=False)
