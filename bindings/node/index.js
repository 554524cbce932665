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
//   await placeOrder('alice', 'conv-7', { sku: 'A0001', qty: 2 });       // runs: { order: 1 }
//   await placeOrder.run('alice', 'conv-7', { qty: 2, sku: 'A0001' });   // Outcome: replayed
//
// The protocol is the extension's (doc/contract.md of the idem repository);
// this module only calls it in the right order, and makes sure that no call
// it claimed is left pending by it: whatever the tool returns or throws, the
// call ends recorded (done, failed, unknown or released), or the caller is
// told by name that it is still pending and must be reconciled.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
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
  checkDatabase(db, 'idem.load(db)');
  db.loadExtension(loadablePath());
}

// ---- values -----------------------------------------------------------------

/** What a tool may return to set the call's `id` column too. */
class Result {
  constructor(result, id) {
    this.result = result;
    this.id = id === undefined ? null : id;
  }
}

/**
 * What tool.run() resolves to: the call's result and id as recorded, its
 * key, and whether this arrival replayed an earlier one (replayed: true)
 * or ran the tool itself (false).
 */
class Outcome {
  constructor(result, id, key, replayed) {
    this.result = result;
    this.id = id === undefined ? null : id;
    this.key = key;
    this.replayed = Boolean(replayed);
    Object.freeze(this);
  }
}

// ---- errors -----------------------------------------------------------------

/**
 * A call that did not end in `done`: told to a duplicate arrival (replayed:
 * true), or, as Unknown, to the arrival whose external tool ran and failed
 * (replayed: false, the reason as cause).
 */
class CallError extends Error {
  constructor(key, reply, options) {
    reply = reply || {};
    super(`idem: call ${key} is ${reply.status}: ${reply.message || ''}`, options);
    this.name = new.target.name;
    this.key = key;
    this.reply = reply;
    this.status = reply.status;
    this.replayed = !(options && options.replayed === false);
  }
}
/** Pending: its first arrival is still running, or its process died. */
class InProgress extends CallError {}
/** External, outcome unknown: never retried; the target's records decide. */
class Unknown extends CallError {}
/** Local, failed and kept (local_failure=keep). */
class Failed extends CallError {}
const ERRORS = { pending: InProgress, unknown: Unknown, failed: Failed };

/**
 * Thrown by an external tool when its request did not leave (it failed
 * before sending): the wrapper releases the call (reconcile = 'not_sent')
 * and rethrows it, with .key set, so that a retry runs.
 */
class NotSent extends Error {
  constructor(message = 'the request was not sent', options) {
    super(message, options);
    this.name = 'NotSent';
    this.key = undefined;
  }
}

/**
 * A local tool returned what JSON cannot hold: its writes were rolled back
 * and the call recorded as failed: .status 'released' (a retry runs again)
 * or 'failed' (kept, local_failure=keep).  The TypeError that names the
 * value's path is the cause.  (An external tool's unstorable result is
 * Unknown instead: its request was made.)
 */
class Unstorable extends TypeError {
  constructor(key, status, message, options) {
    super(message, options);
    this.name = 'Unstorable';
    this.key = key;
    this.status = status;
  }
}

// What this arrival tried to record, as the errors below name it.
const RECORDING = {
  done: 'done (the tool returned)',
  unknown: 'unknown (the request may have left)',
  failed: 'failed (the tool threw)',
  not_sent: 'released (the request was not sent)',
};

/**
 * The call was released while this arrival ran it (an operator's or a
 * sweeper's reconcile), and perhaps claimed again by another arrival: this
 * arrival's outcome was not recorded.  .status is what it meant to record
 * ('done', 'unknown' or 'not_sent'), .result the tool's result when it
 * returned one.
 */
class Lost extends Error {
  constructor(key, outcome, result, options) {
    super(`idem: call ${key} is no longer this arrival's: it was released while the tool ` +
      'ran (reconcile = \'not_sent\' or \'not_arrived\'), and another arrival may have ' +
      `claimed and run it again; this arrival's outcome, ${RECORDING[outcome]}, was not ` +
      'recorded' + (outcome === 'not_sent' ? '' : '; if its request left, look for a ' +
      'second effect at the target'), options);
    this.name = 'Lost';
    this.key = key;
    this.status = outcome;
    this.result = result;
  }
}

/**
 * The database refused this arrival's record for longer than
 * calls.recordTimeoutMs (locked by another connection, or a transaction of
 * the caller's left open): the call stays pending, and must be reconciled
 * (calls.reconcile) with what .status (what it meant to record: 'done',
 * 'unknown' or 'not_sent') and .result say.
 */
class NotRecorded extends Error {
  constructor(key, outcome, result, table, options) {
    const verdict = outcome === 'not_sent' ? "'not_sent'"
      : outcome === 'done' ? "'arrived', { result }"
        : "'arrived' or 'not_arrived' after checking the target";
    super(`idem: call ${key} stays pending: its outcome, ${RECORDING[outcome]}, could not ` +
      `be recorded (${options && options.cause && options.cause.message}); reconcile it: ` +
      `calls.reconcile('${key}', ${verdict}) (SQL: UPDATE "${table}" SET reconcile = ... ` +
      `WHERE key = '${key}' AND member = 0)`, options);
    this.name = 'NotRecorded';
    this.key = key;
    this.status = outcome;
    this.result = result;
  }
}

// ---- checks -----------------------------------------------------------------

function describe(v) {
  if (v === null || v === undefined || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return `an object (${(v.constructor && v.constructor.name) || 'Object'})`;
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '...' : v)}`;
  if (typeof v === 'bigint') return `a BigInt (${v}n)`;
  if (typeof v === 'symbol') return 'a Symbol';
  if (typeof v === 'function') return 'a function';
  return `${typeof v} ${String(v)}`;
}

function isPlainObject(v) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function checkDatabase(db, where) {
  if (db === null || typeof db !== 'object' || typeof db.prepare !== 'function' ||
      typeof db.exec !== 'function' || typeof db.loadExtension !== 'function') {
    throw new TypeError(`sqlite-idem: ${where}: db must be a better-sqlite3 Database, not ${describe(db)}`);
  }
}

function checkString(v, what, where) {
  if (typeof v !== 'string') {
    throw new TypeError(`sqlite-idem: ${where}: ${what} must be a string, not ${describe(v)}`);
  }
}

function checkMs(ms, what) {
  if (typeof ms !== 'number' || !(ms >= 0) || ms === Infinity) {
    throw new TypeError(`sqlite-idem: ${what} must be a number of milliseconds (0 or more), not ${describe(ms)}`);
  }
  return ms;
}

// A path inside a value, as JavaScript spells it: result.items[2]["a b"].
function pathTo(base, name) {
  if (typeof name === 'number') return `${base}[${name}]`;
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `${base}.${name}` : `${base}[${JSON.stringify(name)}]`;
}

const MAX_DEPTH = 1000;     // idem's own nesting limit (doc/contract.md §3)

/**
 * The JSON text of value, exactly as JSON.stringify writes it, or a
 * TypeError that names the path of the first part JSON cannot hold as it
 * is: JSON.stringify would turn NaN and Infinity into null, drop a function
 * or a Symbol, turn undefined in an array into null, write a Map or a class
 * instance as a bare object, and throw on a BigInt or a cycle.  An object
 * member whose value is undefined is left out (as JSON.stringify does: an
 * argument not given); toJSON() is honoured (a Date is its ISO text).
 */
function toJson(value, what) {
  const open = new Set();
  const bad = (where, v, why) => {
    throw new TypeError(`sqlite-idem: ${where} is ${describe(v)}: ${why}`);
  };
  function walk(v, where, name, depth) {
    if (v !== null && (typeof v === 'object' || typeof v === 'bigint') &&
        typeof v.toJSON === 'function') {
      v = v.toJSON(String(name));
    }
    switch (typeof v) {
      case 'string': return JSON.stringify(v);
      case 'boolean': return v ? 'true' : 'false';
      case 'number':
        if (!Number.isFinite(v)) bad(where, v, 'JSON has no NaN or Infinity (JSON.stringify would write null)');
        return String(v);
      case 'bigint':
        return bad(where, v, 'JSON has no BigInt; convert it (Number(x) if it is below 2^53, else String(x))');
      case 'undefined':
        return bad(where, v, 'JSON has no undefined' + (depth ? ' (JSON.stringify would write null in an array)' : ''));
      case 'function': case 'symbol':
        return bad(where, v, 'JSON cannot hold it (JSON.stringify would leave it out)');
      default: break;
    }
    if (v === null) return 'null';
    if (depth >= MAX_DEPTH) bad(where, v, `nested deeper than ${MAX_DEPTH} levels`);
    if (open.has(v)) bad(where, v, 'a circular reference (it contains itself)');
    if (v instanceof Number || v instanceof String || v instanceof Boolean) {
      return walk(v.valueOf(), where, name, depth);
    }
    open.add(v);
    let text;
    if (Array.isArray(v)) {
      const parts = [];
      for (let i = 0; i < v.length; i++) parts.push(walk(v[i], pathTo(where, i), i, depth + 1));
      text = `[${parts.join(',')}]`;
    } else if (isPlainObject(v)) {
      const parts = [];
      for (const k of Object.keys(v)) {
        const m = v[k];
        if (m === undefined) continue;              // not given: left out
        parts.push(`${JSON.stringify(k)}:${walk(m, pathTo(where, k), k, depth + 1)}`);
      }
      text = `{${parts.join(',')}}`;
    } else {
      bad(where, v, 'not a plain object or array (JSON.stringify would write its own ' +
        'enumerable properties only, if any); convert it, or give its class a toJSON()');
    }
    open.delete(v);
    return text;
  }
  return walk(value, what, '', 0);
}

// The text of a call's args: a plain object (none given: {}).
function argsText(args, where) {
  if (args === undefined) return '{}';
  if (!isPlainObject(args)) {
    throw new TypeError(`sqlite-idem: ${where}: args must be a plain object of named arguments, not ${describe(args)}`);
  }
  return toJson(args, 'args');
}

// The value an id is bound as, and the value a replay reads back.
// better-sqlite3 binds every number as a double: an integral id goes in as
// an integer (a BigInt), as Python's would.
function idValue(id, where) {
  if (id === null || id === undefined) return [null, null];
  if (typeof id === 'string') return [id, id];
  if (typeof id === 'number') {
    if (!Number.isFinite(id)) throw new TypeError(`sqlite-idem: ${where} is ${describe(id)}: not a storable id`);
    return Number.isSafeInteger(id) ? [BigInt(id), id] : [id, id];
  }
  if (typeof id === 'bigint') {
    if (id < -(2n ** 63n) || id >= 2n ** 63n) {
      throw new TypeError(`sqlite-idem: ${where} is ${describe(id)}: beyond SQLite's 64-bit integers`);
    }
    return [id, fromSql(id)];
  }
  if (typeof id === 'object') {
    const text = toJson(id, where);
    return [text, text];
  }
  throw new TypeError(`sqlite-idem: ${where} is ${describe(id)}: an id is a string, a number, a BigInt or JSON`);
}

// An integer read with safeIntegers: a number when it fits one exactly.
function fromSql(v) {
  if (typeof v === 'bigint' && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return Number(v);
  }
  return v;
}

// What a tool returned: [result text, id bound, id read back], or a TypeError.
function storable(value) {
  let id = null;
  if (value instanceof Result) [value, id] = [value.result, value.id];
  const text = value === undefined ? 'null' : toJson(value, 'result');
  return [text, ...idValue(id, 'the id (Result.id)')];
}

function noteOf(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return `thrown: ${typeof e === 'string' ? e : describe(e)}`;
}

function isBusy(e) {
  const code = e && typeof e.code === 'string' ? e.code : '';
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

// ---- table options ----------------------------------------------------------

// idem's options (doc/contract.md §5, §9 to §12): the defaults of the ones
// that have one, and how a value is compared.
const OPTION_DEFAULTS = { local_failure: 'release', args_mismatch: 'error', durability: 'full' };
const DURATION_OPTIONS = new Set(['retain', 'stale_after']);
const DURATION_UNITS = { second: 1e3, minute: 6e4, hour: 3.6e6, day: 8.64e7 };

function optionText(name, value) {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string' || /['"\n,()]/.test(value) || value.trim() === '') {
    throw new TypeError(`sqlite-idem: idem.calls(): option ${name} must be a word or a ` +
      `duration ('24 hours'), not ${describe(value)}`);
  }
  return /^[A-Za-z0-9_.]+$/.test(value) ? value : `'${value}'`;
}

// The comparable form of an option's value: a duration in milliseconds, a
// word in lower case.
function optionValue(name, text) {
  let v = text.trim();
  if (v.length >= 2 && (v[0] === "'" || v[0] === '"') && v[v.length - 1] === v[0]) v = v.slice(1, -1);
  if (DURATION_OPTIONS.has(name)) {
    const m = /^(\d+(?:\.\d*)?|\.\d+)[ \t]*([a-z]+?)s?$/i.exec(v);
    if (m && DURATION_UNITS[m[2].toLowerCase()]) return String(Number(m[1]) * DURATION_UNITS[m[2].toLowerCase()]);
  }
  return v.toLowerCase();
}

// The options of an existing idem table, from its CREATE VIRTUAL TABLE text.
function tableOptions(sql) {
  const m = /\busing\s+idem\s*(?:\(([\s\S]*)\))?\s*$/i.exec(sql);
  if (!m) return null;
  const out = {};
  let depth = 0, quote = '', part = '';
  const parts = [];
  for (const c of m[1] || '') {
    if (quote) { if (c === quote) quote = ''; part += c; continue; }
    if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth += 1;
    else if (c === ')') depth -= 1;
    else if (c === ',' && depth === 0) { parts.push(part); part = ''; continue; }
    part += c;
  }
  if (part.trim()) parts.push(part);
  for (const p of parts) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const name = p.slice(0, eq).trim().toLowerCase();
    out[name] = { text: p.slice(eq + 1).trim(), value: optionValue(name, p.slice(eq + 1)) };
  }
  return out;
}

// ---- keyargs ----------------------------------------------------------------

// The items of a list in src from index i (just after its opening bracket)
// to its closing bracket, split at their top-level commas; null when the
// text ends first.  Strings and comments are skipped whole.
function splitList(src, i) {
  const items = [];
  let depth = 0, item = '';
  for (; i < src.length; i++) {
    const c = src[i];
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < src.length && src[j] !== c) j += src[j] === '\\' ? 2 : 1;
      item += src.slice(i, j + 1);
      i = j;
      continue;
    }
    if (c === '/' && src[i + 1] === '/') { i = src.indexOf('\n', i); if (i < 0) return null; continue; }
    if (c === '/' && src[i + 1] === '*') { i = src.indexOf('*/', i) + 1; if (i <= 0) return null; continue; }
    if (c === '(' || c === '[' || c === '{') depth += 1;
    if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) { items.push(item.trim()); return items; }
      depth -= 1;
    }
    if (c === ',' && depth === 0) { items.push(item.trim()); item = ''; continue; }
    item += c;
  }
  return null;
}

// The parameters of fn, as source text, or null.
function parameterList(fn) {
  let src;
  try {
    src = Function.prototype.toString.call(fn);
  } catch (e) {
    return null;
  }
  const head = /^\s*(?:async\b\s*)?(?:function\b\s*\*?\s*[\w$]*\s*)?([\w$]*)\s*\(/.exec(src);
  return head ? splitList(src, head[0].length) : null;
}

// The names an object pattern '{ a, b: x, c = 1 }' takes, or null when it
// takes names it does not spell out (a rest element, a computed name).
function patternNames(text) {
  if (!text || text[0] !== '{') return null;
  let depth = 0, end = -1, quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) { if (c === '\\') i += 1; else if (c === quote) quote = ''; continue; }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '{' || c === '[' || c === '(') depth += 1;
    else if (c === '}' || c === ']' || c === ')') { depth -= 1; if (depth === 0) { end = i; break; } }
  }
  if (end < 0) return null;
  const names = [];
  for (const entry of splitList(`${text.slice(1, end)})`, 0) || []) {
    if (entry === '') continue;
    if (entry.startsWith('...') || entry.startsWith('[')) return null;
    const q = /^(["'])((?:\\.|(?!\1).)*)\1/.exec(entry);
    if (q) { names.push(q[2].replace(/\\(.)/g, '$1')); continue; }
    const id = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*/u.exec(entry);
    if (!id) return null;
    names.push(id[0]);
  }
  return names;
}

// The names fn's args parameter (number index) destructures, or null.
function destructuredNames(fn, index) {
  const params = parameterList(fn);
  return params && params.length > index ? patternNames(params[index]) : null;
}

function checkKeyargs(name, kind, keyargs, params, fn) {
  if (keyargs == null || typeof keyargs === 'function') return;
  if (!Array.isArray(keyargs) || keyargs.some((n) => typeof n !== 'string')) {
    throw new TypeError(`sqlite-idem: tool ${name}: keyargs must be an array of argument ` +
      `names or a function of args, not ${describe(keyargs)}`);
  }
  let known = params;
  let from = 'params';
  if (known == null) {
    known = destructuredNames(fn, kind === 'local' ? 1 : 0);
    from = 'its destructured args parameter';
    if (known == null) {
      throw new TypeError(`sqlite-idem: tool ${name}: keyargs ${JSON.stringify(keyargs)} cannot ` +
        'be checked against the tool\'s parameters: its args parameter is not an object pattern ' +
        'that names them ({ sku, qty }); give them as params: [\'sku\', \'qty\', ...]');
    }
  }
  const unknown = keyargs.filter((n) => !known.includes(n));
  if (unknown.length) {
    throw new TypeError(`sqlite-idem: tool ${name}: keyargs names ${unknown.join(', ')}, which ` +
      `${unknown.length > 1 ? 'are not parameters' : 'is not a parameter'} of the tool (${from}: ` +
      `${known.join(', ') || 'none'}); a misspelt name would give every call of the tool one key`);
  }
}

function keyArgs(spec, args) {
  if (spec == null) return null;
  if (typeof spec === 'function') return toJson(spec(args), 'keyargs(args)');
  const subset = {};
  for (const n of spec) if (Object.prototype.hasOwnProperty.call(args, n)) subset[n] = args[n];
  return toJson(subset, 'args');
}

// ---- the table --------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const quote = (name) => '"' + String(name).replace(/"/g, '""') + '"';

const HOST = `${os.hostname()}:${process.pid}`;

class Calls {
  /**
   * An idem claim table on one better-sqlite3 connection.  Loads idem into
   * db when it lacks it, and creates the table when it is missing with the
   * options given: calls(db, 'calls', { local_failure: 'keep' }) is
   * CREATE VIRTUAL TABLE IF NOT EXISTS "calls" USING idem(local_failure=keep).
   * Options given for a table that exists must be its options.
   */
  constructor(db, table = 'calls', options = {}) {
    const where = 'idem.calls(db, table, options)';
    checkDatabase(db, where);
    if (typeof table !== 'string' || table === '') {
      throw new TypeError(`sqlite-idem: ${where}: table must be the table's name (a string), ` +
        `not ${describe(table)}` + (isPlainObject(table) ? `; options come third: idem.calls(db, 'calls', ${JSON.stringify(table)})` : ''));
    }
    if (options == null) options = {};
    if (!isPlainObject(options)) {
      throw new TypeError(`sqlite-idem: ${where}: options must be a plain object, not ${describe(options)}`);
    }
    this.db = db;
    this.table = table;
    this._recordTimeoutMs = 30000;
    const t = quote(table);
    try {
      db.prepare('SELECT idem_version()').get();
    } catch (e) {
      load(db);
    }
    const given = Object.entries(options).filter(([, v]) => v !== undefined);
    const opts = given.map(([k, v]) => {
      if (!/^[A-Za-z_]+$/.test(k)) throw new TypeError(`sqlite-idem: ${where}: no option is named ${JSON.stringify(k)}`);
      return `${k}=${optionText(k, v)}`;
    }).join(', ');
    const existing = db.prepare("SELECT sql FROM sqlite_schema WHERE name = ? COLLATE NOCASE AND type = 'table'").get(table);
    if (existing) {
      const have = tableOptions(existing.sql || '');
      if (have === null) {
        throw new Error(`sqlite-idem: ${where}: table ${t} exists and is not an idem table (${existing.sql})`);
      }
      for (const [k, v] of given) {
        const name = k.toLowerCase();
        const want = optionValue(name, String(v));
        const has = have[name] ? have[name].value : OPTION_DEFAULTS[name];
        if (want !== has) {
          throw new Error(`sqlite-idem: ${where}: table ${t} exists with ` +
            `${have[name] ? `${name}=${have[name].text}` : `no ${name} option`}, not ${name}=${v}: ` +
            'options apply when the table is created; leave them out to use the table as it ' +
            `is, or create another table (its statement: ${existing.sql})`);
        }
      }
    } else {
      db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${t} USING idem${opts ? `(${opts})` : ''}`);
    }
    this._key = db.prepare('SELECT idem_key(?, ?, ?, ?) AS k');
    this._header = db.prepare('SELECT idem_header(?) AS h');
    this._row = db.prepare(
      `SELECT status, reply, id, result FROM ${t} WHERE key = ? AND member = 0`).safeIntegers(true);
    this._claim = db.prepare(`INSERT OR IGNORE INTO ${t}` +
      '(who, conv, tool, args, kind, keyargs, owner) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this._record = db.prepare(`UPDATE ${t} SET status = ?, id = ?, result = ?, note = ? ` +
      'WHERE key = ? AND member = 0 AND owner = ?');
    this._release = db.prepare(`UPDATE ${t} SET reconcile = 'not_sent' ` +
      'WHERE key = ? AND member = 0 AND owner = ?');
    this._t = t;
  }

  /** How long recording an external call's outcome retries a busy database
   *  before NotRecorded, in ms (default 30000). */
  get recordTimeoutMs() {
    return this._recordTimeoutMs;
  }

  set recordTimeoutMs(ms) {
    this._recordTimeoutMs = checkMs(ms, 'calls.recordTimeoutMs');
  }

  /** The key of a call: idem_key(who, conv, tool, args); args JSON text or a value. */
  key(who, conv, tool, args) {
    const where = 'calls.key(who, conv, tool, args)';
    checkString(who, 'who', where);
    checkString(conv, 'conv', where);
    checkString(tool, 'tool', where);
    const text = typeof args === 'string' ? args : toJson(args, 'args');
    return this._key.get(who, conv, tool, text).k;
  }

  /** The reply that idem hands a duplicate of this call, or null. */
  reply(key) {
    checkString(key, 'key', 'calls.reply(key)');
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
    return (await this.waitOutcome(key, timeoutMs, intervalMs)).result;
  }

  /** wait(), resolving to the call's Outcome (replayed: true). */
  async waitOutcome(key, timeoutMs = 30000, intervalMs = 50) {
    checkString(key, 'key', 'calls.wait(key, timeoutMs, intervalMs)');
    checkMs(timeoutMs, 'calls.wait(key, timeoutMs, intervalMs): timeoutMs');
    checkMs(intervalMs, 'calls.wait(key, timeoutMs, intervalMs): intervalMs');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const row = this._row.get(key);
      if (!row) throw new Error(`sqlite-idem: no call ${key} is claimed in ${this._t}`);
      if (row.status !== 'pending' || Date.now() >= deadline) return this._replay(key, row);
      await sleep(intervalMs);
    }
  }

  /**
   * An operator's verdict on an open call (pending or unknown), over the
   * table's reconcile column: 'arrived' (the target's records show the
   * request: the call becomes done, with options.id, .result and .note),
   * 'not_arrived' (they show it never came: released; a pending call only
   * once it is stale), 'not_sent' (a pending call whose request never
   * left: released).  Throws when the table refuses, or no call has key.
   */
  reconcile(key, verdict, options = {}) {
    const where = 'calls.reconcile(key, verdict, options)';
    checkString(key, 'key', where);
    if (!['arrived', 'not_arrived', 'not_sent'].includes(verdict)) {
      throw new TypeError(`sqlite-idem: ${where}: verdict must be 'arrived', 'not_arrived' ` +
        `or 'not_sent', not ${describe(verdict)}`);
    }
    if (options == null) options = {};
    if (!isPlainObject(options)) {
      throw new TypeError(`sqlite-idem: ${where}: options must be a plain object, not ${describe(options)}`);
    }
    const sets = ['reconcile = ?'];
    const values = [verdict];
    for (const [name, v] of Object.entries(options)) {
      if (v === undefined) continue;
      if (!['id', 'result', 'note'].includes(name)) {
        throw new TypeError(`sqlite-idem: ${where}: no option ${JSON.stringify(name)} (id, result, note)`);
      }
      if (verdict !== 'arrived') {
        throw new TypeError(`sqlite-idem: ${where}: '${verdict}' releases the call and keeps ` +
          `nothing; ${name} goes with 'arrived' only`);
      }
      if (name === 'note') checkString(v, 'options.note', where);
      sets.push(`${name} = ?`);
      values.push(name === 'id' ? idValue(v, 'options.id')[0] : name === 'result' ? toJson(v, 'options.result') : v);
    }
    const r = this.db.prepare(`UPDATE ${this._t} SET ${sets.join(', ')} WHERE key = ? AND member = 0`)
      .run(...values, key);
    if (r.changes !== 1) throw new Error(`sqlite-idem: ${where}: no call ${key} is claimed in ${this._t}`);
  }

  /**
   * An idempotent tool: returns async (who, conv, args) => result, with
   * .run(who, conv, args) => Outcome and .key(who, conv, args).
   *
   * kind 'local' (a write into this database): fn(db, args) runs
   * synchronously inside the claim's BEGIN IMMEDIATE transaction, and the
   * claim, its writes and the result commit together.  If it throws, its
   * writes are rolled back, the call is recorded as failed (released, so a
   * retry runs again; kept with local_failure=keep) and the error goes on;
   * if it returns what JSON cannot hold, the same, and Unstorable is
   * thrown; if it throws NotSent, all of it is rolled back (released).
   * Inside a transaction of the caller's, the call is a SAVEPOINT of it.
   *
   * kind 'external' (a write to another system): the claim commits first,
   * then fn(args, { idempotencyKey, key }) runs (it may be async); send the
   * value as the Idempotency-Key header.  Its result is recorded as done.
   * If it throws NotSent, the call is released and NotSent goes on.  If it
   * throws anything else, or returns what JSON cannot hold, the request
   * may have arrived: the call is recorded as unknown and Unknown is thrown
   * (the error is its cause).
   *
   * A duplicate never runs fn: it resolves to the first arrival's result,
   * or rejects with InProgress, Unknown or Failed.
   * options: { kind, name (default fn.name), keyargs (array of argument
   * names, or a function of args), params (the argument names fn takes,
   * to check keyargs against when fn's args are not destructured) }.
   */
  tool(options, fn) {
    if (typeof options === 'function') [options, fn] = [{}, options];
    if (options == null) options = {};
    if (!isPlainObject(options)) {
      throw new TypeError(`sqlite-idem: calls.tool(options, fn): options must be a plain object, not ${describe(options)}`);
    }
    if (typeof fn !== 'function') {
      throw new TypeError(`sqlite-idem: calls.tool(options, fn): fn must be a function, not ${describe(fn)}`);
    }
    for (const k of Object.keys(options)) {
      if (!['kind', 'name', 'keyargs', 'params'].includes(k)) {
        throw new TypeError(`sqlite-idem: calls.tool(options, fn): no option ${JSON.stringify(k)} ` +
          '(kind, name, keyargs, params)');
      }
    }
    const { kind = 'local', keyargs = null, params = null } = options;
    const name = options.name === undefined ? fn.name : options.name;
    if (kind !== 'local' && kind !== 'external') {
      throw new TypeError(`sqlite-idem: kind must be 'local' or 'external', not ${JSON.stringify(kind)}`);
    }
    if (typeof name !== 'string' || !name) {
      throw new TypeError('sqlite-idem: a tool needs a name (options.name, a string; default: the function\'s name)');
    }
    if (params != null && (!Array.isArray(params) || params.some((n) => typeof n !== 'string'))) {
      throw new TypeError(`sqlite-idem: tool ${name}: params must be an array of argument names, not ${describe(params)}`);
    }
    checkKeyargs(name, kind, keyargs, params, fn);
    const where = `${name}(who, conv, args)`;
    const prepare = (who, conv, args) => {
      checkString(who, 'who', where);
      checkString(conv, 'conv', where);
      const text = argsText(args, where);
      const ka = keyArgs(keyargs, args === undefined ? {} : args);
      return [this._key.get(who, conv, name, ka === null ? text : ka).k,
        [who, conv, name, text, kind, ka]];
    };
    const run = async (who, conv, args) => {
      const [key, row] = prepare(who, conv, args);
      const a = args === undefined ? {} : args;
      return kind === 'local' ? this._local(fn, key, row, a) : this._external(fn, key, row, a);
    };
    const call = async (who, conv, args) => (await run(who, conv, args)).result;
    call.run = run;
    call.key = (who, conv, args) => prepare(who, conv, args)[0];
    Object.defineProperty(call, 'name', { value: name });
    Object.defineProperty(call, 'kind', { value: kind, enumerable: true });
    return call;
  }

  // ---- inside -----------------------------------------------------------

  _replay(key, row) {
    if (!row) throw new Error(`sqlite-idem: the claim of ${key} was ignored, yet the call is not there`);
    if (row.status === 'done') {
      return new Outcome(row.result == null ? null : JSON.parse(row.result), fromSql(row.id), key, true);
    }
    const E = ERRORS[row.status] || CallError;
    throw new E(key, row.reply ? JSON.parse(row.reply) : null);
  }

  // Claim the call for a new owner; the owner's token, or null if it is
  // someone else's.
  _claimOwned([who, conv, tool, args, kind, ka]) {
    const owner = `${HOST}:${crypto.randomBytes(8).toString('hex')}`;
    return this._claim.run(who, conv, tool, args, kind, ka, owner).changes === 1 ? owner : null;
  }

  // Record this owner's outcome of its call; Lost when the call is no
  // longer its own.
  _recordOwned(key, owner, outcome, values, result) {
    const r = outcome === 'not_sent'
      ? this._release.run(key, owner)
      : this._record.run(outcome === 'done' ? 'done' : 'failed', ...values, key, owner);
    if (r.changes !== 1) throw new Lost(key, outcome, result);
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
      const owner = this._claimOwned(row);
      if (!owner) {
        const replay = this._row.get(key);
        end(false);
        return this._replay(key, replay);
      }
      db.exec('SAVEPOINT idem_tool');
      let value, stored, failure = null, unstorable = false;
      try {
        value = fn(db, args);
        if (value && typeof value.then === 'function') {
          value.then(null, () => {});        // never an unhandled rejection
          throw new TypeError('sqlite-idem: a local tool must be synchronous ' +
            '(its writes belong in the claim\'s transaction); it returned a Promise');
        }
        unstorable = true;
        stored = storable(value);
      } catch (e) {
        failure = e;
      }
      if (failure instanceof NotSent) {
        failure.key = key;
        throw failure;           // the finally below rolls all of it back: released
      }
      if (failure !== null) {
        let kept = null;
        try {
          db.exec('ROLLBACK TO idem_tool');
          db.exec('RELEASE idem_tool');
          this._recordOwned(key, owner, 'failed', [null, null,
            (unstorable ? 'the result cannot be stored: ' : '') + noteOf(failure)]);
          kept = this._row.get(key) !== undefined;
          end(true);
        } catch (e2) { /* the finally below rolls all of it back */ }
        if (!unstorable || kept === null) throw failure;
        throw new Unstorable(key, kept ? 'failed' : 'released', `sqlite-idem: the result of ` +
          `${row[2]} cannot be stored (${failure.message.replace(/^sqlite-idem: /, '')}): its ` +
          `writes were rolled back and the call ${kept ? 'kept as failed (local_failure=keep)'
            : 'released: a retry runs again'}`, { cause: failure });
      }
      db.exec('RELEASE idem_tool');
      const [text, id, readId] = stored;
      this._recordOwned(key, owner, 'done', [id, text, null], text);
      end(true);
      return new Outcome(JSON.parse(text), readId, key, false);
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

  // Record an external call's outcome in a transaction of its own,
  // retrying while the database is busy or the connection is inside a
  // transaction of the caller's, for at most recordTimeoutMs; then
  // NotRecorded.  Lost when the call is no longer this owner's.
  async _settle(key, owner, outcome, values, result) {
    const db = this.db;
    const deadline = Date.now() + this.recordTimeoutMs;
    for (let delay = 5; ; delay = Math.min(delay * 2, 250)) {
      let why;
      if (db.inTransaction) {
        why = new Error('the connection is inside a transaction that was opened while the ' +
          'tool ran; idem records an external call in a transaction of its own');
      } else {
        try {
          db.exec('BEGIN IMMEDIATE');
          try {
            this._recordOwned(key, owner, outcome, values, result);
            db.exec('COMMIT');
            return;
          } finally {
            if (db.inTransaction) db.exec('ROLLBACK');
          }
        } catch (e) {
          if (!isBusy(e)) throw e;
          why = e;
        }
      }
      if (Date.now() >= deadline) throw new NotRecorded(key, outcome, result, this.table, { cause: why });
      await sleep(delay);
    }
  }

  async _external(fn, key, row, args) {
    const db = this.db;
    if (db.inTransaction) {
      throw new Error('sqlite-idem: an external tool cannot run inside an open ' +
        'transaction: its claim must commit before the request leaves; commit first');
    }
    let header, owner;
    db.exec('BEGIN IMMEDIATE');
    try {
      owner = this._claimOwned(row);
      if (!owner) {
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
      if (e instanceof NotSent) {
        // The tool's word that nothing left: release, so a retry runs.
        await this._finish(key, owner, 'not_sent', [], undefined, e);
        e.key = key;
        throw e;
      }
      // The request may have reached the target: 'failed' on an external
      // call is recorded as 'unknown', and never retried.
      return this._unknown(key, owner, noteOf(e), undefined, e);
    }
    let stored;
    try {
      stored = storable(value);
    } catch (e) {
      const result = value instanceof Result ? value.result : value;
      return this._unknown(key, owner, 'the tool returned, so its request was sent, but its ' +
        `result cannot be stored: ${e.message.replace(/^sqlite-idem: /, '')}; the target's ` +
        'records have it: reconcile = \'arrived\' with the result', result, e);
    }
    const [text, id, readId] = stored;
    await this._finish(key, owner, 'done', [id, text, null], JSON.parse(text));
    return new Outcome(JSON.parse(text), readId, key, false);
  }

  // Record an outcome; if the table refuses it (not Lost, not busy), keep
  // the call from staying pending: record it as unknown, with why.
  async _finish(key, owner, outcome, values, result, cause) {
    try {
      await this._settle(key, owner, outcome, values, result);
    } catch (e) {
      if (e instanceof Lost || e instanceof NotRecorded) {
        if (cause !== undefined && e.cause === undefined) e.cause = cause;
        throw e;
      }
      await this._unknown(key, owner, `the outcome ${RECORDING[outcome]} could not be ` +
        `recorded: ${noteOf(e)}`, result, e);
    }
  }

  // Record the call as unknown (status 'failed' on an external call), and
  // throw Unknown with cause.
  async _unknown(key, owner, note, result, cause) {
    try {
      await this._settle(key, owner, 'unknown', [null, null, note], result);
    } catch (e) {
      if ((e instanceof Lost || e instanceof NotRecorded) && e.cause === undefined) e.cause = cause;
      throw e;
    }
    let reply = null;
    try { reply = this.reply(key); } catch (e) { /* the Unknown goes on */ }
    throw new Unknown(key, reply || { status: 'unknown', message: note }, { cause, replayed: false });
  }
}

/** An idem claim table on db: see Calls. */
function calls(db, table = 'calls', options = {}) {
  return new Calls(db, table, options);
}

module.exports = {
  load, loadablePath, calls, Calls, Result, Outcome,
  CallError, InProgress, Unknown, Failed, NotSent, Lost, NotRecorded, Unstorable, HEADER,
  // Exposed for tests of the argument checks; not part of the API.
  _toJson: toJson, _destructuredNames: destructuredNames,
};
