// SPDX-License-Identifier: MIT
'use strict';
// sqlite-idem -- idempotent tool calls on SQLite, for better-sqlite3.
//
//   const Database = require('better-sqlite3');
//   const idem = require('sqlite-idem');
//   const db = new Database('app.db');
//   const calls = idem.calls(db, 'calls');     // loads idem, creates the table
//
//   const placeOrder = calls.tool({ kind: 'local', name: 'place_order' }, (db, { sku, qty }) => {
//     const { lastInsertRowid } = db.prepare('INSERT INTO orders(sku, qty) VALUES (?, ?)').run(sku, qty);
//     return { order: Number(lastInsertRowid) };
//   });
//   const charge = calls.tool({ kind: 'external', name: 'charge' }, async ({ cents }, { idempotencyKey }) => {
//     const r = await fetch(url, { method: 'POST', headers: { 'Idempotency-Key': idempotencyKey }, ... });
//     return r.json();
//   });
//
//   await placeOrder('alice', 'conv-7', { sku: 'A0001', qty: 2 });   // runs
//   await placeOrder('alice', 'conv-7', { qty: 2, sku: 'A0001' });   // replays
//
// The protocol is the extension's (doc/contract.md of the idem repository);
// this module only calls it in the right order.
const fs = require('node:fs');
const path = require('node:path');

const HEADER = 'Idempotency-Key';

/** The path of the SQLite extension that `npm install` built. */
function loadablePath() {
  const candidates = [
    path.join(__dirname, 'build', 'idem.so'),                   // installed copy
    path.join(__dirname, '..', '..', 'build', 'node', 'idem.so'), // in a clone
  ];
  for (const p of candidates) if (fs.existsSync(p)) return p;
  throw new Error('sqlite-idem: the extension is not built (no ' +
    candidates.join(' or ') + '); run `npm rebuild sqlite-idem`');
}

/** Load idem into a better-sqlite3 Database. */
function load(db) {
  db.loadExtension(loadablePath());
}

/** What a tool may return to set the call's `id` column too. */
class Result {
  constructor(result, id) {
    this.result = result;
    this.id = id === undefined ? null : id;
  }
}

/** A duplicate arrival of a call that did not end in `done`. */
class CallError extends Error {
  constructor(key, reply, options) {
    reply = reply || {};
    super(`idem: call ${key} is ${reply.status}: ${reply.message || ''}`, options);
    this.name = new.target.name;
    this.key = key;
    this.reply = reply;
    this.status = reply.status;
  }
}
/** Pending: its first arrival is still running, or its process died. */
class InProgress extends CallError {}
/** External, outcome unknown: never retried; the target's records decide. */
class Unknown extends CallError {}
/** Local, failed and kept (local_failure=keep). */
class Failed extends CallError {}
const ERRORS = { pending: InProgress, unknown: Unknown, failed: Failed };

function quote(name) {
  return '"' + String(name).replace(/"/g, '""') + '"';
}

function json(value, what) {
  const text = JSON.stringify(value === undefined ? null : value);
  if (text === undefined) throw new TypeError(`sqlite-idem: ${what} is not JSON`);
  return text;
}

// better-sqlite3 binds every number as a double: an integral id goes in as
// an integer (a BigInt), as Python's would.
function sqlValue(v) {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (v !== null && typeof v === 'object') return json(v, 'the id');
  return v === undefined ? null : v;
}

function keyArgs(spec, args) {
  if (spec == null) return null;
  if (typeof spec === 'function') return json(spec(args), 'keyargs');
  if (!Array.isArray(spec)) {
    throw new TypeError('sqlite-idem: keyargs is an array of argument names or a function');
  }
  const subset = {};
  for (const n of spec) if (Object.prototype.hasOwnProperty.call(args, n)) subset[n] = args[n];
  return json(subset, 'keyargs');
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class Calls {
  /**
   * An idem claim table on one better-sqlite3 connection.  Loads idem into
   * db when it lacks it, and creates the table when it is missing with the
   * options given verbatim: calls(db, 'calls', { local_failure: 'keep' })
   * is CREATE VIRTUAL TABLE IF NOT EXISTS "calls" USING idem(local_failure=keep).
   */
  constructor(db, table = 'calls', options = {}) {
    this.db = db;
    this.table = table;
    const t = quote(table);
    try {
      db.prepare('SELECT idem_version()').get();
    } catch (e) {
      load(db);
    }
    const opts = Object.entries(options).map(([k, v]) => `${k}=${v}`).join(', ');
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${t} USING idem${opts ? `(${opts})` : ''}`);
    this._key = db.prepare('SELECT idem_key(?, ?, ?, ?) AS k');
    this._header = db.prepare('SELECT idem_header(?) AS h');
    this._row = db.prepare(
      `SELECT status, reply, id, result FROM ${t} WHERE key = ? AND member = 0`);
    this._record = db.prepare(
      `UPDATE ${t} SET status = ?, id = ?, result = ?, note = ? WHERE key = ? AND member = 0`);
    this._claim = db.prepare(
      `INSERT OR IGNORE INTO ${t}(who, conv, tool, args, kind) VALUES (?, ?, ?, ?, ?)`);
    this._claimKeyargs = null;   // prepared when first used (needs keyargs)
    this._t = t;
  }

  /** The key of a call: idem_key(who, conv, tool, args). */
  key(who, conv, tool, args) {
    const text = typeof args === 'string' ? args : json(args, 'args');
    return this._key.get(who, conv, tool, text).k;
  }

  /** The reply that idem hands a duplicate of this call, or null. */
  reply(key) {
    const row = this._row.get(key);
    return row ? JSON.parse(row.reply) : null;
  }

  /**
   * Wait for a pending call to be decided: resolves to its recorded result
   * once done; rejects with Unknown or Failed when it ends so, InProgress
   * when it is still pending after timeoutMs, and an Error when no such
   * call is claimed.
   */
  async wait(key, timeoutMs = 30000, intervalMs = 50) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const row = this._row.get(key);
      if (!row) throw new Error(`sqlite-idem: no call ${key} is claimed`);
      if (row.status !== 'pending' || Date.now() >= deadline) return this._replay(key, row);
      await sleep(intervalMs);
    }
  }

  /**
   * An idempotent tool: returns async (who, conv, args) => result.
   *
   * kind 'local' (a write into this database): fn(db, args) runs
   * synchronously inside the claim's BEGIN IMMEDIATE transaction, and the
   * claim, its writes and the result commit together.  If it throws, its
   * writes are rolled back, the call is recorded as failed (released, so a
   * retry runs again; kept with local_failure=keep) and the error goes on.
   * Inside a transaction of the caller's, the call is a SAVEPOINT of it.
   *
   * kind 'external' (a write to another system): the claim commits first,
   * then fn(args, { idempotencyKey }) runs (it may be async); send the
   * value as the Idempotency-Key header.  Its result is recorded as done.
   * If it throws, the request may have arrived anyway: the call is
   * recorded as unknown and Unknown is thrown (the error is its cause).
   *
   * A duplicate never runs fn: it resolves to the first arrival's result,
   * or rejects with InProgress, Unknown or Failed.
   * options: { kind, name (default fn.name), keyargs (array of argument
   * names, or a function of args) }.
   */
  tool(options, fn) {
    if (typeof options === 'function') [options, fn] = [{}, options];
    const { kind = 'local', keyargs = null } = options || {};
    const name = (options && options.name) || fn.name;
    if (kind !== 'local' && kind !== 'external') {
      throw new TypeError(`sqlite-idem: kind must be 'local' or 'external', not ${JSON.stringify(kind)}`);
    }
    if (!name) throw new TypeError('sqlite-idem: a tool needs a name (options.name)');
    const keyOf = (who, conv, args = {}) => {
      const ka = keyArgs(keyargs, args);
      return this.key(who, conv, name, ka === null ? json(args, 'args') : ka);
    };
    const call = async (who, conv, args = {}) => {
      const argsText = json(args, 'args');
      const ka = keyArgs(keyargs, args);
      const key = this.key(who, conv, name, ka === null ? argsText : ka);
      const row = [who, conv, name, argsText, kind, ka];
      return kind === 'local'
        ? this._local(fn, key, row, args)
        : this._external(fn, key, row, args);
    };
    call.key = keyOf;
    Object.defineProperty(call, 'name', { value: name });
    return call;
  }

  // ---- inside -----------------------------------------------------------

  _replay(key, row) {
    if (!row) throw new Error(`sqlite-idem: the claim of ${key} was ignored, yet the call is not there`);
    if (row.status === 'done') return row.result == null ? null : JSON.parse(row.result);
    const E = ERRORS[row.status] || CallError;
    throw new E(key, row.reply ? JSON.parse(row.reply) : null);
  }

  _claimOwned([who, conv, tool, args, kind, ka]) {
    if (ka === null) return this._claim.run(who, conv, tool, args, kind).changes === 1;
    if (!this._claimKeyargs) {
      this._claimKeyargs = this.db.prepare(`INSERT OR IGNORE INTO ${this._t}` +
        '(who, conv, tool, args, kind, keyargs) VALUES (?, ?, ?, ?, ?, ?)');
    }
    return this._claimKeyargs.run(who, conv, tool, args, kind, ka).changes === 1;
  }

  _recordAs(key, status, value, note) {
    let id = null;
    if (value instanceof Result) [value, id] = [value.result, value.id];
    const text = status === 'done' ? json(value, 'the result') : null;
    this._record.run(status, sqlValue(id), text, note === undefined ? null : note, key);
    return text === null ? null : JSON.parse(text);
  }

  _local(fn, key, row, args) {
    const db = this.db;
    const nested = db.inTransaction;
    db.exec(nested ? 'SAVEPOINT idem_call' : 'BEGIN IMMEDIATE');
    let open = true;
    const end = (commit) => {
      if (nested) {
        if (!commit) db.exec('ROLLBACK TO idem_call');
        db.exec('RELEASE idem_call');
      } else {
        db.exec(commit ? 'COMMIT' : 'ROLLBACK');
      }
      open = false;
    };
    try {
      if (!this._claimOwned(row)) {
        const replay = this._row.get(key);
        end(false);
        return this._replay(key, replay);
      }
      db.exec('SAVEPOINT idem_tool');
      let value;
      try {
        value = fn(db, args);
        if (value && typeof value.then === 'function') {
          value.then(null, () => {});        // never an unhandled rejection
          throw new TypeError('sqlite-idem: a local tool must be synchronous ' +
            '(its writes belong in the claim\'s transaction); it returned a Promise');
        }
      } catch (e) {
        try {
          db.exec('ROLLBACK TO idem_tool');
          db.exec('RELEASE idem_tool');
          this._recordAs(key, 'failed', null, `${e && e.name}: ${e && e.message}`);
          end(true);
        } catch (e2) { /* the finally below rolls all of it back */ }
        throw e;
      }
      db.exec('RELEASE idem_tool');
      const result = this._recordAs(key, 'done', value);
      end(true);
      return result;
    } finally {
      if (open) {
        // An error of the database itself: all of it goes, the claim too.
        try {
          if (nested) {
            db.exec('ROLLBACK TO idem_call');
            db.exec('RELEASE idem_call');
          } else if (db.inTransaction) {
            db.exec('ROLLBACK');
          }
        } catch (e) { /* the original error goes on */ }
      }
    }
  }

  _inTransaction(work) {
    const db = this.db;
    db.exec('BEGIN IMMEDIATE');
    try {
      const out = work();
      db.exec('COMMIT');
      return out;
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw e;
    }
  }

  async _external(fn, key, row, args) {
    const db = this.db;
    if (db.inTransaction) {
      throw new Error('sqlite-idem: an external tool cannot run inside an open ' +
        'transaction: its claim must commit before the request leaves; commit first');
    }
    let header;
    db.exec('BEGIN IMMEDIATE');
    try {
      if (!this._claimOwned(row)) {
        const replay = this._row.get(key);
        db.exec('ROLLBACK');
        return this._replay(key, replay);
      }
      header = this._header.get(key).h;
      db.exec('COMMIT');               // the claim is durable before
    } catch (e) {                      // anything leaves this process
      if (db.inTransaction) db.exec('ROLLBACK');
      throw e;
    }
    const idempotencyKey = header.slice(header.indexOf(': ') + 2);   // '"<key>"'
    let value;
    try {
      value = await fn(args, { idempotencyKey, key });
    } catch (e) {
      // The request may have reached the target: 'failed' on an external
      // call is recorded as 'unknown', and never retried.
      this._inTransaction(() => this._recordAs(key, 'failed', null,
        `${e && e.name}: ${e && e.message}`));
      throw new Unknown(key, this.reply(key), { cause: e });
    }
    // If this fails (the database stays locked), the call stays pending:
    // duplicates are told that it is in progress.
    return this._inTransaction(() => this._recordAs(key, 'done', value));
  }
}

/** An idem claim table on db: see Calls. */
function calls(db, table = 'calls', options = {}) {
  return new Calls(db, table, options);
}

module.exports = {
  load, loadablePath, calls, Calls, Result,
  CallError, InProgress, Unknown, Failed, HEADER,
};
