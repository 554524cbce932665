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
// call ends recorded (done, failed, unknown or released); only a database
// that refuses every write for recordTimeoutMs leaves it pending, and the
// caller is told so by name (NotRecorded), with the reconcile to run.  The
// Python package (bindings/python) keeps the same rules in the same words.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const util = require('node:util');

const HEADER = 'Idempotency-Key';

/** The path of the SQLite extension that `npm install` built. */
function loadablePath() {
  const candidates = [
    path.join(__dirname, 'build', 'idem.so'),                   // installed copy
    path.join(__dirname, '..', '..', 'build', 'node', 'idem.so'), // in a clone
  ];
  for (const p of candidates) if (fs.existsSync(p)) return p;
  throw new Error('idem: the extension is not built (no ' +
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
 * or ran the tool itself (false).  .sends: how many times an external
 * call's request was taken for sending (the reply's "sends"; more than 1
 * when a target that honours the key was sent it again), null for a local
 * call; not enumerable, so not part of a comparison of outcomes.
 */
class Outcome {
  constructor(result, id, key, replayed, sends) {
    this.result = result;
    this.id = id === undefined ? null : id;
    this.key = key;
    this.replayed = Boolean(replayed);
    Object.defineProperty(this, 'sends', { value: sends == null ? null : Number(sends) });
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
 * A local tool returned what cannot be stored (not JSON, an id that is not
 * one SQL value, text beyond SQLite's limit): its writes were rolled back
 * and the call recorded as failed: .status 'released' (a retry runs again)
 * or 'failed' (kept, local_failure=keep).  The error that says where and
 * why is the cause.  (An external tool's unstorable result is Unknown
 * instead: its request was made.)
 */
class Unstorable extends TypeError {
  constructor(key, status, message, options) {
    super(message, options);
    this.name = 'Unstorable';
    this.key = key;
    this.status = status;
  }
}

/**
 * A call whose key (who, conv, tool and keyargs) was already used with other
 * arguments, refused under args_mismatch=error (the default): nothing ran,
 * nothing was claimed.  .key is the key, .tool the tool's name, .code the
 * database error's code (as it was), the message idem's and the database's
 * error the cause.  Told by the extension's verdict, idem_refusal(message)
 * = 'args_mismatch' (doc/contract.md section 9), never by the text.
 */
class ArgsMismatch extends Error {
  constructor(key, tool, cause) {
    super(cause.message, { cause });
    this.name = 'ArgsMismatch';
    this.key = key;
    this.tool = tool;
    this.code = cause.code;
  }
}

// What an arrival meant to record, as Lost and NotRecorded name it (.status):
// the words of the table ('not_sent' is the reconcile that releases).
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
 * ('done', 'unknown' or 'not_sent'; 'failed' for a local call), .result and
 * .id the tool's result and id when it returned them.
 */
class Lost extends Error {
  constructor(key, outcome, result, options, id) {
    super(`idem: call ${key} is no longer this arrival's: it was released while the tool ` +
      'ran (reconcile = \'not_sent\' or \'not_arrived\'), and another arrival may have ' +
      `claimed and run it again; this arrival's outcome, ${RECORDING[outcome]}, was not ` +
      'recorded' + (outcome === 'not_sent' ? '' : '; if its request left, look for a ' +
      'second effect at the target'), options);
    this.name = 'Lost';
    this.key = key;
    this.status = outcome;
    this.result = result === undefined ? null : result;
    this.id = id === undefined ? null : id;
  }
}

/**
 * The database refused every attempt to record this arrival's outcome for
 * calls.recordTimeoutMs (locked by another connection, a transaction of the
 * caller's left open, a disk that stays full): the call stays pending, and
 * must be reconciled (calls.reconcile) with what .status (what it meant to
 * record: 'done', 'unknown' or 'not_sent'), .result and .id say.
 */
class NotRecorded extends Error {
  constructor(key, outcome, result, table, options, why, id) {
    const verdict = outcome === 'not_sent' ? "'not_sent'"
      : outcome === 'done' ? "'arrived', { id, result }"
        : "'arrived' or 'not_arrived' after checking the target";
    super(`idem: call ${key} stays pending: its outcome, ${RECORDING[outcome]}, could not ` +
      `be recorded (${why}); reconcile it: calls.reconcile('${key}', ${verdict}) (SQL: ` +
      `UPDATE ${quote(table)} SET reconcile = ... WHERE key = '${key}' AND member = 0)`, options);
    this.name = 'NotRecorded';
    this.key = key;
    this.status = outcome;
    this.result = result === undefined ? null : result;
    this.id = id === undefined ? null : id;
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

// What a value that JSON has no form for is, as the errors name it: "a
// Map", "an Order", "a BigInt (12n)".
function kindOf(v) {
  if (typeof v === 'bigint') return `a BigInt (${v}n)`;
  if (typeof v === 'symbol') return 'a Symbol';
  if (typeof v === 'function') return 'a function';
  if (v === undefined) return 'undefined';
  if (typeof v === 'boolean') return 'a boolean';
  if (Array.isArray(v)) return 'an array';
  const name = v && v.constructor && typeof v.constructor.name === 'string' && v.constructor.name;
  if (!name || name === 'Object') return 'an object';
  // As it is read, the rule of Python's and Go's messages too: a, e, i, o,
  // or "un" but not "uni", take "an" (an Order, an Undo; a Uint8Array, a URL).
  return (/^([aeio]|un(?!i))/i.test(name) ? 'an ' : 'a ') + name;
}

function isPlainObject(v) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function checkDatabase(db, where) {
  if (db === null || typeof db !== 'object' || typeof db.prepare !== 'function' ||
      typeof db.exec !== 'function' || typeof db.loadExtension !== 'function') {
    throw new TypeError(`idem: ${where}: db must be a better-sqlite3 Database, not ${describe(db)}`);
  }
}

function checkString(v, what, where) {
  if (typeof v !== 'string') {
    throw new TypeError(`idem: ${where}: ${what} must be a string, not ${describe(v)}`);
  }
}

function checkMs(ms, what) {
  if (typeof ms !== 'number' || !(ms >= 0) || ms === Infinity) {
    throw new TypeError(`idem: ${what} must be a number of milliseconds (0 or more), not ${describe(ms)}`);
  }
  return ms;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

// who or conv, as bound: text, an integer or bytes (doc/contract.md §2: the
// integer 42 and the text '42' are one part; a number bound as the double
// 42.0 is printed 42).
function partValue(v, what, where) {
  const role = what === 'who' ? 'the user or principal' : 'the conversation or session';
  if (typeof v === 'string') {
    if (!v.isWellFormed()) throw new TypeError(`idem: ${where}: ${what} holds a lone surrogate, which is not text`);
    return v;
  }
  if (typeof v === 'number' && Number.isInteger(v)) {
    if (!Number.isSafeInteger(v)) {
      throw new TypeError(`idem: ${where}: ${what} is ${v}, beyond the integers a number holds exactly; give a BigInt or a string`);
    }
    return v;
  }
  if (typeof v === 'bigint') {
    if (v < INT64_MIN || v > INT64_MAX) throw new TypeError(`idem: ${where}: ${what} is ${v}, beyond SQLite's 64-bit integers`);
    return v;
  }
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  throw new TypeError(`idem: ${where}: ${what} must be a string, an integer or bytes (${role}), not ${describe(v)}`);
}

// A path inside a value, as both packages spell it: result.items[2]["a b"].
function pathTo(base, name) {
  if (typeof name === 'number') return `${base}[${name}]`;
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `${base}.${name}` : `${base}[${JSON.stringify(name)}]`;
}

const MAX_DEPTH = 1000;     // idem's own nesting limit (doc/contract.md §3)

/**
 * The JSON text of value, exactly as JSON.stringify writes it, or a
 * TypeError that names the path of the first part JSON cannot hold as it
 * is, in the words of both packages: "idem: the arguments of place_order
 * are not JSON: args.a[1] is Infinity, which JSON has no form for".
 * JSON.stringify would turn NaN and Infinity into null, drop a function or
 * a Symbol (a value or a key), turn undefined in an array into null,
 * write a Map or a class instance as a bare object, write a lone surrogate as an escape that idem
 * refuses, and throw on a BigInt or a cycle.  An object member whose value
 * is undefined is left out (as JSON.stringify does: an argument not given);
 * toJSON() is honoured, but a Date, a Buffer, a typed array or an
 * ArrayBuffer is refused first, as Python refuses a datetime and bytes
 * (doc/contract.md §3); what a toJSON() or a Proxy's trap throws is the
 * refusal, by path.  what ends with its verb
 * ("the result of send is"); root names the value ("result").
 */
function toJson(value, what, root) {
  const open = new Set();
  let mine = null;                // the TypeError of this walk, thrown once
  const bad = (why) => {
    mine = new TypeError(`idem: ${what} not JSON: ${why}`);
    throw mine;
  };
  const none = (where, v, hint) =>
    bad(`${where} is ${kindOf(v)}, which JSON has no form for${hint ? `; ${hint}` : ''}`);
  // Whatever a toJSON() or a Proxy's trap throws is the same TypeError, by
  // path (an unstorable result: Unstorable or Unknown, with the key).
  function walk(v, where, top, name, depth) {
    let reading = `reading ${where} threw`;
    try {
      return step(v, where, top, name, depth, (r) => { reading = r; });
    } catch (e) {
      if (e === mine) throw e;
      return bad(`${reading} ${noteOf(e)}`);
    }
  }
  function step(v, where, top, name, depth, phase) {
    if (v !== null && typeof v === 'object') {
      // Bytes and a date, as Python refuses bytes and a datetime
      // (doc/contract.md §3), before their toJSON() (a Buffer's
      // {"type":"Buffer","data":[...]}, a Date's ISO text).
      if (util.types.isArrayBufferView(v) || util.types.isAnyArrayBuffer(v)) {
        none(where, v, 'encode it as text (base64 or hex)');
      }
      if (util.types.isDate(v)) none(where, v, 'give its text (toISOString()) or its time (getTime())');
    }
    if (v !== null && (typeof v === 'object' || typeof v === 'bigint') &&
        typeof v.toJSON === 'function') {
      phase(`${where}.toJSON() threw`);
      v = v.toJSON(String(name));
      phase(`reading ${where} threw`);
    }
    switch (typeof v) {
      case 'string':
        if (!v.isWellFormed()) bad(`${where} holds a lone surrogate, which is not text`);
        return JSON.stringify(v);
      case 'boolean': return v ? 'true' : 'false';
      case 'number':
        if (!Number.isFinite(v)) bad(`${where} is ${v}, which JSON has no form for`);
        return String(v);
      case 'bigint':
        return none(where, v, 'convert it: Number(x) below 2^53, else String(x)');
      case 'undefined':
        return none(where, v, depth ? 'JSON.stringify would write null in an array' : '');
      case 'function': case 'symbol':
        return none(where, v, 'JSON.stringify would leave it out');
      default: break;
    }
    if (v === null) return 'null';
    if (v instanceof Number || v instanceof String || v instanceof Boolean) {
      return walk(v.valueOf(), where, top, name, depth);
    }
    if (!Array.isArray(v) && !isPlainObject(v)) {
      none(where, v, 'JSON.stringify would write its own enumerable properties only, if ' +
        'any; convert it, or give its class a toJSON()');
    }
    if (depth >= MAX_DEPTH) bad(`${top} is nested deeper than ${MAX_DEPTH} levels, idem's limit`);
    if (open.has(v)) bad(`${where} is a circular reference (it contains itself)`);
    open.add(v);
    let text;
    if (Array.isArray(v)) {
      const parts = [];
      for (let i = 0; i < v.length; i++) {
        const sub = pathTo(where, i);
        parts.push(walk(v[i], sub, depth ? top : sub, i, depth + 1));
      }
      text = `[${parts.join(',')}]`;
    } else {
      const parts = [];
      for (const k of Object.keys(v)) {
        const m = v[k];
        if (m === undefined) continue;              // not given: left out
        if (!k.isWellFormed()) bad(`${where} has a key that holds a lone surrogate, which is not text`);
        const sub = pathTo(where, k);
        parts.push(`${JSON.stringify(k)}:${walk(m, sub, depth ? top : sub, k, depth + 1)}`);
      }
      // A Symbol key, which JSON.stringify would leave out silently, is
      // refused as Python refuses a float key and Go a bool one (§3).
      const symbols = Object.getOwnPropertySymbols(v);
      for (let i = 0; i < symbols.length; i++) {
        const s = symbols[i];
        if (!Object.prototype.propertyIsEnumerable.call(v, s) || v[s] === undefined) continue;
        const shown = textOf(s);
        bad(`${where} has a key that is a Symbol (${shown.length <= 40 ? shown : shown.slice(0, 40) + '...'})` +
          ', which JSON has no form for; a key is text or an integer');
      }
      text = `{${parts.join(',')}}`;
    }
    open.delete(v);
    return text;
  }
  return walk(value, root, root, '', 0);
}

// The text of a call's args: a plain object (none given: {}).
function argsText(args, tool, where) {
  if (args === undefined) return '{}';
  if (!isPlainObject(args)) {
    throw new TypeError(`idem: ${where}: args must be a plain object of named arguments, not ${describe(args)}`);
  }
  return toJson(args, `the arguments of ${tool} are`, 'args');
}

// An id is one SQL value (doc/choices.md, "The packages"): [the value bound,
// the value a replay reads].  better-sqlite3 binds every number as a double:
// an integral id goes in as an integer (a BigInt), as Python's would.
const ID_KINDS = 'null, a number, a BigInt, a string or a Buffer';
function idValue(id, what) {
  const bad = (why) => { throw new TypeError(`idem: ${what} cannot be stored: ${why}`); };
  if (id === null || id === undefined) return [null, null];
  if (typeof id === 'string') {
    if (!id.isWellFormed()) bad('id holds a lone surrogate, which is not text');
    return [id, id];
  }
  if (typeof id === 'number') {
    if (!Number.isFinite(id)) bad(`id is ${id}, which JSON has no form for`);
    return Number.isSafeInteger(id) ? [BigInt(id), id] : [id, id];
  }
  if (typeof id === 'bigint') {
    if (id < INT64_MIN || id > INT64_MAX) bad(`id is ${id}, beyond SQLite's 64-bit integers`);
    return [id, fromSql(id)];
  }
  if (id instanceof Uint8Array) {
    const bytes = Buffer.from(id.buffer, id.byteOffset, id.byteLength);
    return [bytes, Buffer.from(bytes)];
  }
  return bad(`id is ${kindOf(id)}; an id is one SQL value: ${ID_KINDS}`);
}

// An integer read with safeIntegers: a number when it fits one exactly.
function fromSql(v) {
  if (typeof v === 'bigint' && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return Number(v);
  }
  return v;
}

// What a tool returned: [result text, id bound, id read back], or a TypeError.
function storable(value, tool) {
  let id = null;
  if (value instanceof Result) [value, id] = [value.result, value.id];
  const text = value === undefined ? 'null' : toJson(value, `the result of ${tool} is`, 'result');
  return [text, ...idValue(id, `the id of ${tool}`)];
}

// Any value as text that can always be stored: never an exception (a
// Symbol, an object whose toString throws or returns no text, a Proxy
// whose traps throw are described instead), never a lone surrogate (each
// becomes U+FFFD, as toWellFormed() writes it).
function textOf(v) {
  let text;
  try {
    if (typeof v === 'string') text = v;
    else if (typeof v === 'symbol') text = v.toString();
    else text = String(v);
    if (typeof text !== 'string') throw new TypeError('not a string');
  } catch (e) {
    let kind;
    try { kind = kindOf(v); } catch (e2) { kind = typeof v; }
    text = `<${kind} that cannot be shown as text>`;
  }
  return text.isWellFormed() ? text : text.toWellFormed();
}

// A property of a thrown value, or undefined where reading it throws (a
// getter, a Proxy).
function peek(v, name) {
  try {
    return v == null ? undefined : v[name];
  } catch (e) {
    return undefined;
  }
}

// v instanceof C, false where asking throws (a Proxy's getPrototypeOf).
function isA(v, C) {
  try {
    return v instanceof C;
  } catch (e) {
    return false;
  }
}
const isError = (v) => isA(v, Error);

// An error as a note says it: "TimeoutError: the target did not answer".
// It can always be built and stored, whatever was thrown.
function noteOf(e) {
  if (isError(e)) return `${textOf(peek(e, 'name'))}: ${textOf(peek(e, 'message'))}`;
  if (typeof e === 'string') return `thrown: ${textOf(e)}`;
  let shown;
  try { shown = describe(e); } catch (e2) { shown = textOf(e); }
  return `thrown: ${textOf(shown)}`;
}

// Why a tool's result cannot be stored: idem's own words ("the result of
// send is not JSON: ..."), or the database's error.
function unstorableWhy(e, tool) {
  const message = isA(e, TypeError) ? peek(e, 'message') : undefined;
  if (typeof message === 'string' && message.startsWith('idem: ')) {
    return textOf(message.slice('idem: '.length));
  }
  return `the result of ${tool} could not be recorded: ${noteOf(e)}`;
}

function isBusy(e) {
  const code = e && typeof e.code === 'string' ? e.code : '';
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

// ---- table options ----------------------------------------------------------
//
// One rule in every package: the options given are checked by the
// extension, idem_parse_options() (the words of CREATE VIRTUAL TABLE's
// error); given for a table that exists, each must be the table's effective
// value (the default of an option its statement does not name included),
// as the same parse reads both, or it is an error that names both values.
// The package keeps no copy of the words, durations, ranges or limits
// (idem_limits(): the longest note, the refused resends that end a wait);
// it only builds the statement's text.

// name=value as the CREATE statement writes it (a word bare, any other
// value quoted), or a TypeError for a value that is not text or cannot be
// written there (what it means is the extension's to say).
function optionText(name, value) {
  if (typeof value !== 'string') {
    throw new TypeError(`idem: the table option ${name} must be a string (such as '30 days' or ` +
      `'keep'), not ${describe(value)}`);
  }
  if (/[,()'";=\n\r]/.test(name) || /[,()'";\n\r]/.test(value) || value.trim() === '') {
    throw new TypeError(`idem: the table option ${name}=${JSON.stringify(value)} is blank or holds a ` +
      'character that an option value cannot hold (, ( ) \' " ; or a line break)');
  }
  return `${name}=${/^[A-Za-z0-9_.]+$/.test(value) ? value : `'${value}'`}`;
}

// The options texts as CREATE VIRTUAL TABLE table USING idem(texts) parses
// them (idem_parse_options(): options, shown, relaxed), or a TypeError with
// CREATE's own message.
function parseOptions(db, table, texts) {
  let row;
  try {
    row = db.prepare(`SELECT idem_parse_options(${['?', ...texts.map(() => '?')].join(', ')}) AS o`)
      .get(table, ...texts);
  } catch (e) {
    throw new TypeError(String(e && e.message));
  }
  return JSON.parse(row.o);
}

// The options of an existing idem table as the extension parsed them
// (idem_options(): its options, shown and relaxed), never read from the
// CREATE text, where a comment can hide what SQLite hands idem; null when
// it is not an idem table.
function tableOptions(db, table) {
  try {
    return JSON.parse(db.prepare("SELECT idem_options(?, 'main') AS o").get(table).o);
  } catch (e) {
    if (/is not an idem table/.test(String(e && e.message))) return null;
    throw e;
  }
}

// The table's options (idem_options()) against those given ([name, text]
// each), as idem_parse_options() parsed them (parsed).
function checkOptions(db, table, sql, given, parsed) {
  const have = tableOptions(db, table);
  if (have === null) {
    throw new TypeError(`idem: the table ${quote(table)} exists and is not an idem table (${sql}); name another table`);
  }
  for (const [n, text] of given) {
    if (have.options[n] !== parsed.options[n]) {
      throw new TypeError(`idem: the table ${quote(table)} exists with ${have.shown[n]}, not ${text}: a ` +
        'table\'s options are set when it is created; leave the option out to use the table as it ' +
        'is, or use another table');
    }
  }
  // A file can arrive with its table made so: what weakens a claim, and was
  // not given, is said (process 'warning' event, code IDEM_RELAXED_TABLE).
  const names = new Set(given.map(([n]) => n));
  for (const [n, why] of Object.entries(have.relaxed)) {
    if (names.has(n)) continue;
    const value = have.shown[n].slice(have.shown[n].indexOf('=') + 1).replace(/^'|'$/g, '');
    process.emitWarning(`idem: the table ${quote(table)} was made with ${why}; give ` +
      `{ ${n}: '${value}' } to idem.calls() to accept it, or use another table`,
    { type: 'RelaxedTableWarning', code: 'IDEM_RELAXED_TABLE' });
  }
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

// Whether a pattern entry ('c = 1', 'b: x = {}', "'a b': y") has a default:
// an '=' outside strings and brackets that is not an arrow's.
function hasDefault(entry) {
  let depth = 0, quote = '';
  for (let i = 0; i < entry.length; i++) {
    const c = entry[i];
    if (quote) { if (c === '\\') i += 1; else if (c === quote) quote = ''; continue; }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '{' || c === '[' || c === '(') depth += 1;
    else if (c === '}' || c === ']' || c === ')') depth -= 1;
    else if (c === '=' && depth === 0 && entry[i + 1] !== '>') return true;
  }
  return false;
}

// The arguments a tool takes, as Python reads them from its signature:
// { names, required, any } from fn's args parameter when it is an object
// pattern ('{ to, text = "" }': to required, text optional; a rest element
// '...more' takes any other name too), else from params (a name ending in
// '?' is optional), else null (any names: the tool's own business, as
// **kwargs in Python).
function argsSpec(fn, kind, params) {
  const list = parameterList(fn);
  const index = kind === 'local' ? 1 : 0;
  const text = list && list.length > index ? list[index] : null;
  const names = text === null ? null : patternNames(text);
  if (names !== null) {
    const entries = (splitList(`${text.slice(1, text.lastIndexOf('}'))})`, 0) || []).filter((e) => e !== '');
    const required = names.filter((n, i) => !hasDefault(entries[i]));
    return { names, required, any: false };
  }
  if (text !== null && text[0] === '{') {
    // A rest element, or a name it does not spell out: the names it does.
    const entries = (splitList(`${text.slice(1, text.lastIndexOf('}'))})`, 0) || []).filter((e) => e !== '');
    const required = [];
    for (const e of entries) {
      const id = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*/u.exec(e);
      if (id && !e.startsWith('...') && !hasDefault(e)) required.push(id[0]);
    }
    return { names: [], required, any: true };
  }
  if (params == null) return null;
  return {
    names: params.map((n) => n.replace(/\?$/, '')),
    required: params.filter((n) => !n.endsWith('?')),
    any: false,
  };
}

// Refuse, before anything is claimed, an argument the tool does not take
// or one it needs that is missing (as Python's signature check does).
function checkArgs(spec, args, tool, where) {
  if (spec === null) return;
  const a = args === undefined ? {} : args;
  if (!spec.any) {
    for (const k of Object.keys(a)) {
      if (a[k] !== undefined && !spec.names.includes(k)) {
        throw new TypeError(`idem: ${where}: ${pathTo('args', k)} is not an argument of ${tool} ` +
          `(it takes ${spec.names.length ? spec.names.join(', ') : 'none'}); nothing was claimed`);
      }
    }
  }
  for (const n of spec.required) {
    if (!Object.prototype.hasOwnProperty.call(a, n) || a[n] === undefined) {
      throw new TypeError(`idem: ${where}: ${pathTo('args', n)} is missing (${tool} requires ` +
        `${spec.required.join(', ')}); nothing was claimed`);
    }
  }
}

function checkKeyargs(name, kind, keyargs, params, fn) {
  if (keyargs == null || typeof keyargs === 'function') return;
  if (!Array.isArray(keyargs) || keyargs.some((n) => typeof n !== 'string')) {
    throw new TypeError(`idem: tool ${name}: keyargs must be an array of argument ` +
      `names or a function of args, not ${describe(keyargs)}`);
  }
  let known = params && params.map((n) => n.replace(/\?$/, ''));
  let from = 'params';
  if (known == null) {
    known = destructuredNames(fn, kind === 'local' ? 1 : 0);
    from = 'its parameters';
    if (known == null) {
      throw new TypeError(`idem: tool ${name}: keyargs ${JSON.stringify(keyargs)} cannot ` +
        'be checked against the tool\'s parameters: its args parameter is not an object pattern ' +
        'that names them ({ sku, qty }); give them as params: [\'sku\', \'qty\', ...]');
    }
  }
  const unknown = keyargs.filter((n) => !known.includes(n));
  if (unknown.length) {
    throw new TypeError(`idem: tool ${name}: keyargs names ${unknown.join(', ')}, which ` +
      `${unknown.length > 1 ? 'are not parameters' : 'is not a parameter'} of the tool (${from}: ` +
      `${known.join(', ') || 'none'}); a misspelt name would give every call of the tool one key`);
  }
}

function keyArgs(spec, args, tool) {
  if (spec == null) return null;
  if (typeof spec === 'function') return toJson(spec(args), `the keyargs of ${tool} are`, 'keyargs');
  const subset = {};
  for (const n of spec) if (Object.prototype.hasOwnProperty.call(args, n)) subset[n] = args[n];
  return toJson(subset, `the arguments of ${tool} are`, 'args');
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
   * Each option given for a table that exists must be its value there (the
   * default, for an option its statement does not name).
   */
  constructor(db, table = 'calls', options = {}) {
    const where = 'idem.calls(db, table, options)';
    checkDatabase(db, where);
    if (typeof table !== 'string' || table === '') {
      throw new TypeError(`idem: ${where}: table must be the table's name (a string), ` +
        `not ${describe(table)}` + (isPlainObject(table) ? `; options come third: idem.calls(db, 'calls', ${JSON.stringify(table)})` : ''));
    }
    if (options == null) options = {};
    if (!isPlainObject(options)) {
      throw new TypeError(`idem: ${where}: options must be a plain object, not ${describe(options)}`);
    }
    const given = Object.entries(options).filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k.toLowerCase(), optionText(k.toLowerCase(), v)]);
    this.db = db;
    this.table = table;
    this._recordTimeoutMs = 30000;
    this._resendWaitMs = 30000;
    // Every statement names the table of the main database, where the
    // package makes it: a temp table of the same name, which SQLite would
    // read first, is not it (doc/contract.md §5).
    const t = `"main".${quote(table)}`;
    try {
      db.prepare('SELECT idem_version()').get();
    } catch (e) {
      load(db);
    }
    const parsed = parseOptions(db, table, given.map(([, text]) => text));
    this._limits = JSON.parse(db.prepare('SELECT idem_limits() AS l').get().l);
    this._refusal = db.prepare('SELECT idem_refusal(?) AS r');
    const find = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND lower(name) = lower(?)");
    let existing = find.get(table);
    if (!existing) {
      const opts = given.map(([, text]) => text).join(', ');
      db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${t} USING idem${opts ? `(${opts})` : ''}`);
      existing = find.get(table);       // another connection may have created it first
    }
    if (existing) checkOptions(db, table, existing.sql, given, parsed);
    // How often a pending external call is touched while its request is
    // out (its lease): the extension's, null without stale_after (§11).
    this._beatMs = (tableOptions(db, table) || {}).heartbeat ?? null;
    this._key = db.prepare('SELECT idem_key(?, ?, ?, ?) AS k');
    this._header = db.prepare('SELECT idem_header(?) AS h');
    this._row = db.prepare(
      'SELECT status, reply, id, result, sends, resend_at, ' +
      "(julianday(resend_at) - julianday('now')) * 86400000.0 AS wait " +
      `FROM ${t} WHERE key = ? AND member = 0`).safeIntegers(true);
    this._claim = db.prepare(`INSERT OR IGNORE INTO ${t}` +
      '(who, conv, tool, args, kind, keyargs, owner, honours_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    this._resend = db.prepare(`UPDATE ${t} SET reconcile = 'resend', owner = ? ` +
      'WHERE key = ? AND member = 0');
    this._record = db.prepare(`UPDATE ${t} SET status = ?, id = ?, result = ?, note = ? ` +
      'WHERE key = ? AND member = 0 AND owner = ?');
    this._release = db.prepare(`UPDATE ${t} SET reconcile = 'not_sent' ` +
      'WHERE key = ? AND member = 0 AND owner = ?');
    this._touch = db.prepare(`UPDATE ${t} SET note = note ` +
      "WHERE key = ? AND member = 0 AND owner = ? AND status = 'pending'");
    this._t = t;
  }

  /** How long recording an external call's outcome retries while the
   *  database refuses it before NotRecorded, in ms (default 30000). */
  get recordTimeoutMs() {
    return this._recordTimeoutMs;
  }

  set recordTimeoutMs(ms) {
    this._recordTimeoutMs = checkMs(ms, 'calls.recordTimeoutMs');
  }

  /** How long one call of a tool that honours the key may wait for its
   *  resends (resend_at), in ms (default 30000); a resend beyond it is left
   *  to a later retry, and the call rejects as it stands. */
  get resendWaitMs() {
    return this._resendWaitMs;
  }

  set resendWaitMs(ms) {
    this._resendWaitMs = checkMs(ms, 'calls.resendWaitMs');
  }

  /** The key of a call: idem_key(who, conv, tool, args); args JSON text or a value. */
  key(who, conv, tool, args) {
    const where = 'calls.key(who, conv, tool, args)';
    who = partValue(who, 'who', where);
    conv = partValue(conv, 'conv', where);
    if (typeof tool !== 'string' || tool === '') {
      throw new TypeError(`idem: ${where}: tool must be a non-empty string, not ${describe(tool)}`);
    }
    const text = typeof args === 'string' ? args : toJson(args, `the arguments of ${tool} are`, 'args');
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
    if (this.db.inTransaction) {
      throw new Error('idem: calls.wait() needs a connection outside a transaction (it must ' +
        'see other connections\' commits)');
    }
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const row = this._row.get(key);
      if (!row) throw new Error(this._noCall(key));
      if (row.status !== 'pending' || Date.now() >= deadline) return this._replay(key, row);
      await sleep(intervalMs);
    }
  }

  _noCall(key) {
    return `idem: no call ${key} is claimed in ${quote(this.table)} (never claimed, released, or purged)`;
  }

  /**
   * An operator's verdict on an open call (pending or unknown), over the
   * table's reconcile column: 'arrived' (the target's records show the
   * request: the call becomes done, with options.id, .result and .note;
   * a column not given keeps what it holds), 'not_arrived' (they show it
   * never came: released; a pending call only once it is stale),
   * 'not_sent' (a pending call whose request never left: released).
   * Throws when the table refuses (a word that is none of these; the call
   * is not in a state the verdict applies to; an id, result or note, not
   * null, given with a release, which keeps nothing), or no call has key.  Inside a
   * transaction of the caller's it joins it.
   */
  reconcile(key, verdict, options = {}) {
    const where = 'calls.reconcile(key, verdict, options)';
    checkString(key, 'key', where);
    // The verdicts and what each may do are the extension's: a word that
    // is none of them is its refusal.  'resend' is a sender's (a tool
    // declared honoursKey: true), never an operator's here.
    if (typeof verdict !== 'string') {
      throw new TypeError("idem: calls.reconcile(): verdict must be a string ('arrived', " +
        `'not_arrived' or 'not_sent'), not ${describe(verdict)}`);
    }
    if (verdict === 'resend') {
      throw new TypeError("idem: calls.reconcile(): 'resend' is not an operator's verdict: a " +
        "tool declared honoursKey: true sends its call again itself; give 'arrived', " +
        "'not_arrived' or 'not_sent'");
    }
    if (options == null) options = {};
    if (!isPlainObject(options)) {
      throw new TypeError(`idem: ${where}: options must be a plain object, not ${describe(options)}`);
    }
    const sets = ['reconcile = ?'];
    const values = [verdict];
    for (const [name, v] of Object.entries(options)) {
      if (v === undefined) continue;
      if (!['id', 'result', 'note'].includes(name)) {
        throw new TypeError(`idem: ${where}: no option ${JSON.stringify(name)} (id, result, note)`);
      }
      // With a release, the extension refuses a value that is not NULL
      // (doc/contract.md §5): its rule, its message.
      if (name === 'note' && typeof v !== 'string') {
        throw new TypeError(`idem: calls.reconcile(): note must be a string, not ${describe(v)}`);
      }
      sets.push(`${name} = ?`);
      values.push(name === 'id' ? idValue(v, 'the id given to calls.reconcile')[0]
        : name === 'result' ? toJson(v, 'the result given to calls.reconcile is', 'result') : v);
    }
    const r = this.db.prepare(`UPDATE ${this._t} SET ${sets.join(', ')} WHERE key = ? AND member = 0`)
      .run(...values, key);
    if (r.changes !== 1) throw new Error(this._noCall(key));
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
   * if it returns what cannot be stored, the same, and Unstorable is
   * thrown; if it throws NotSent, or returns a Promise, all of it is rolled
   * back (released).  An async function is refused when the tool is
   * defined.  Inside a transaction of the caller's, the call is a
   * SAVEPOINT of it.
   *
   * kind 'external' (a write to another system): the claim commits first,
   * then fn(args, { idempotencyKey, key }) runs (it may be async); send the
   * value as the Idempotency-Key header.  Its result is recorded as done.
   * If it throws NotSent, the call is released and NotSent goes on.  If it
   * throws anything else, or returns what cannot be stored, the request
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
      throw new TypeError(`idem: calls.tool(options, fn): options must be a plain object, not ${describe(options)}`);
    }
    if (typeof fn !== 'function') {
      throw new TypeError(`idem: calls.tool(options, fn): fn must be a function, not ${describe(fn)}`);
    }
    for (const k of Object.keys(options)) {
      if (!['kind', 'name', 'keyargs', 'params', 'honoursKey'].includes(k)) {
        throw new TypeError(`idem: calls.tool(options, fn): no option ${JSON.stringify(k)} ` +
          '(kind, name, keyargs, params, honoursKey)');
      }
    }
    const { kind = 'local', keyargs = null, params = null, honoursKey = false } = options;
    if (typeof honoursKey !== 'boolean') {
      throw new TypeError(`idem: honoursKey is true or false, not ${describe(honoursKey)}`);
    }
    if (honoursKey && kind !== 'external') {
      throw new TypeError('idem: honoursKey: true is for external tools: a local tool sends no ' +
        "request (make it kind: 'external', or leave honoursKey out)");
    }
    const name = options.name === undefined ? fn.name : options.name;
    if (kind !== 'local' && kind !== 'external') {
      throw new TypeError(`idem: kind must be 'local' or 'external', not ${JSON.stringify(kind)}`);
    }
    if (typeof name !== 'string' || !name) {
      throw new TypeError('idem: a tool needs a name (options.name, a string; default: the function\'s name)');
    }
    if (kind === 'local' && Object.prototype.toString.call(fn) === '[object AsyncFunction]') {
      throw new TypeError(`idem: the local tool ${name} is an async function: a local tool's ` +
        'writes run inside the claim\'s transaction, which must not stay open across an await; ' +
        'make it a plain function (better-sqlite3 is synchronous anyway), or make it an external tool');
    }
    if (params != null && (!Array.isArray(params) || params.some((n) => typeof n !== 'string'))) {
      throw new TypeError(`idem: tool ${name}: params must be an array of argument names, not ${describe(params)}`);
    }
    checkKeyargs(name, kind, keyargs, params, fn);
    const where = `${name}(who, conv, args)`;
    const takes = argsSpec(fn, kind, params);
    const prepare = (who, conv, args) => {
      who = partValue(who, 'who', where);
      conv = partValue(conv, 'conv', where);
      const text = argsText(args, name, where);
      checkArgs(takes, args, name, where);
      const ka = keyArgs(keyargs, args === undefined ? {} : args, name);
      return [this._key.get(who, conv, name, ka === null ? text : ka).k,
        [who, conv, name, text, kind, ka, honoursKey ? 1 : null]];
    };
    const run = async (who, conv, args, extra) => {
      const [key, row] = prepare(who, conv, args);
      if (extra != null && (typeof extra !== 'object' || Array.isArray(extra))) {
        throw new TypeError(`idem: ${name}.run(who, conv, args, extra): extra must be an object ` +
          `(handed to the tool, beside the key), not ${describe(extra)}`);
      }
      const a = args === undefined ? {} : args;
      return kind === 'local' ? this._local(fn, key, row, a, extra)
        : this._external(fn, key, row, a, extra);
    };
    const call = async (who, conv, args, extra) => (await run(who, conv, args, extra)).result;
    call.run = run;
    call.key = (who, conv, args) => prepare(who, conv, args)[0];
    Object.defineProperty(call, 'name', { value: name });
    Object.defineProperty(call, 'kind', { value: kind, enumerable: true });
    return call;
  }

  // ---- inside -----------------------------------------------------------

  _replay(key, row) {
    if (!row) throw new Error(`idem: the claim of ${key} was ignored, yet the call is not there`);
    if (row.status === 'done') {
      return new Outcome(row.result == null ? null : JSON.parse(row.result), fromSql(row.id), key,
        true, row.sends);
    }
    const E = ERRORS[row.status] || CallError;
    throw new E(key, row.reply ? JSON.parse(row.reply) : null);
  }

  // Claim the call for a new owner; the owner's token, or null if it is
  // someone else's.
  // ArgsMismatch when the extension refuses the claim as one (its verdict).
  _claimOwned([who, conv, tool, args, kind, ka, hk], key) {
    const owner = `${HOST}:${crypto.randomBytes(8).toString('hex')}`;
    try {
      return this._claim.run(who, conv, tool, args, kind, ka, owner, hk).changes === 1 ? owner : null;
    } catch (e) {
      if (e && typeof e.message === 'string' && e.code !== undefined &&
          this._refusal.get(e.message).r === 'args_mismatch') throw new ArgsMismatch(key, tool, e);
      throw e;
    }
  }

  // Record this owner's outcome of its call ('done', 'unknown', 'failed' or
  // 'not_sent'); values are [id, result text, note].  Lost when the call is
  // no longer its own.
  _recordOwned(key, owner, outcome, values) {
    const r = outcome === 'not_sent'
      ? this._release.run(key, owner)
      : this._record.run(outcome === 'done' ? 'done' : 'failed', ...values, key, owner);
    if (r.changes !== 1) {
      const [id, text] = values || [];
      throw new Lost(key, outcome, text == null ? null : JSON.parse(text), undefined, fromSql(id));
    }
  }

  _local(fn, key, row, args, extra) {
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
    const ended = () => new Error(`idem: the local tool ${row[2]} ended the claim's transaction ` +
      '(a COMMIT or ROLLBACK inside it): its writes and the claim are rolled back; a local tool ' +
      'must leave the transaction to idem');
    try {
      const owner = this._claimOwned(row, key);
      if (!owner) {
        const replay = this._row.get(key);
        end(false);
        return this._replay(key, replay);
      }
      db.exec('SAVEPOINT idem_tool');
      let value;
      try {
        value = fn(db, args, { ...extra, key });
      } catch (e) {
        if (isA(e, NotSent)) {
          e.key = key;
          throw e;               // the finally below rolls all of it back: released
        }
        if (!db.inTransaction) throw Object.assign(ended(), { cause: e });
        db.exec('ROLLBACK TO idem_tool');
        db.exec('RELEASE idem_tool');
        this._recordOwned(key, owner, 'failed', [null, null, this._note(noteOf(e))]);
        end(true);
        throw e;
      }
      if (!db.inTransaction) throw ended();
      if (value && typeof value.then === 'function') {
        value.then(null, () => {});        // never an unhandled rejection
        throw new TypeError(`idem: the local tool ${row[2]} returned a Promise: a local tool is ` +
          'synchronous; its writes were rolled back and the call released');
      }
      let stored;
      try {
        stored = storable(value, row[2]);
        this._recordOwned(key, owner, 'done', [stored[1], stored[0], null]);
      } catch (e) {
        if (isA(e, Lost) || !(isA(e, TypeError) || peek(e, 'code') === 'SQLITE_TOOBIG')) {
          throw e;               // the finally below rolls all of it back
        }
        const why = unstorableWhy(e, row[2]);
        db.exec('ROLLBACK TO idem_tool');
        db.exec('RELEASE idem_tool');
        this._recordOwned(key, owner, 'failed', [null, null, this._note(why)]);
        const kept = this._row.get(key) !== undefined;
        end(true);
        throw new Unstorable(key, kept ? 'failed' : 'released', `idem: ${why}; its writes were ` +
          `rolled back and the call ${kept ? 'kept as failed (local_failure=keep)'
            : 'released: a retry runs again'}`, { cause: e });
      }
      db.exec('RELEASE idem_tool');
      end(true);
      const [text, , readId] = stored;
      return new Outcome(JSON.parse(text), readId, key, false);
    } finally {
      if (open) {
        // An error of the database itself, NotSent: all of it goes, the claim too.
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
  // retrying while the database is busy (or, anyError, refuses it at all)
  // or the connection is inside a transaction of the caller's, for at most
  // recordTimeoutMs; then NotRecorded.  Lost when the call is no longer
  // this owner's.  The tool's error, if any, is the cause of either.
  async _settle(key, owner, outcome, values, result, { cause, anyError = false } = {}) {
    const db = this.db;
    const deadline = Date.now() + this.recordTimeoutMs;
    for (let delay = 5; ; delay = Math.min(delay * 2, 250)) {
      let why;
      if (!db.open) {
        // Closed while the tool ran (by the tool, or at shutdown): no
        // retry can record it; say at once which call stays open.
        throw new NotRecorded(key, outcome, result, this.table, cause === undefined ? undefined
          : { cause }, 'the database connection is not open', values && fromSql(values[0]));
      }
      if (db.inTransaction) {
        why = new Error('the connection is inside a transaction that was opened while the ' +
          'tool ran; idem records an external call in a transaction of its own');
      } else {
        try {
          db.exec('BEGIN IMMEDIATE');
          try {
            this._recordOwned(key, owner, outcome, values);
            db.exec('COMMIT');
            return;
          } finally {
            if (db.inTransaction) db.exec('ROLLBACK');
          }
        } catch (e) {
          if (e instanceof Lost) {
            if (cause !== undefined) e.cause = cause;
            throw e;
          }
          if (!anyError && !isBusy(e)) throw e;
          why = e;
        }
      }
      if (Date.now() >= deadline) {
        throw new NotRecorded(key, outcome, result, this.table,
          { cause: cause === undefined ? why : cause },
          `${why.message}; tried for ${this.recordTimeoutMs / 1000} s`, values && fromSql(values[0]));
      }
      await sleep(delay);
    }
  }

  // Take the call for sending, in a transaction of its own committed
  // before the request leaves: claim it (held is null), or take it again
  // with a new owner (reconcile = 'resend', doc/contract.md §14).  The
  // owner and the header; { held: row } when the claim found it held;
  // { refused: error } when the extension refused the resend.
  _take(key, row, resend) {
    const db = this.db;
    if (db.inTransaction) {
      throw new Error('idem: an external tool cannot run inside an open ' +
        'transaction: its claim must commit before the request leaves; commit first');
    }
    db.exec('BEGIN IMMEDIATE');
    try {
      let owner;
      if (resend) {
        owner = `${HOST}:${crypto.randomBytes(8).toString('hex')}`;
        try {
          if (this._resend.run(owner, key).changes !== 1) owner = null;
        } catch (e) {
          if (!e || e.code === undefined || isBusy(e)) throw e;
          db.exec('ROLLBACK');
          return { refused: e };
        }
      } else {
        owner = this._claimOwned(row, key);
      }
      if (!owner) {
        const held = this._row.get(key);
        db.exec('ROLLBACK');
        return { held };
      }
      const header = this._header.get(key).h;
      db.exec('COMMIT');               // the claim is durable before
      return { owner, header };        // anything leaves this process
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw e;
    }
  }

  // A note as the wrapper writes it: at most idem_limits()'s note_max
  // characters (UTF-16 code units), text that can always be stored.
  _note(text) {
    text = textOf(text);
    const most = this._limits.note_max;
    return text.length <= most ? text : `${text.slice(0, most - 3)}...`.toWellFormed();
  }

  // May the call in row (as this._row reads it) be sent again, before
  // deadline (Date.now())?  The extension says when: resend_at.
  static _mayResend(row, deadline) {
    return Boolean(row) && row.resend_at != null &&
      Date.now() + Math.max(0, Number(row.wait)) <= deadline;
  }

  // The call taken for sending ({ owner, header }), or its replay (an
  // Outcome, or InProgress/Unknown/Failed thrown): claimed, or, held and
  // allowed, taken again once its resend_at comes.
  async _takeOrReplay(key, row, deadline, held) {
    let refused = 0;
    for (;;) {
      if (held === undefined) {
        const t = this._take(key, row, false);
        if (t.owner) return t;
        held = t.held;
      }
      if (!Calls._mayResend(held, deadline)) return this._replay(key, held);
      const wait = Math.max(0, Number(held.wait));
      if (wait > 0) await sleep(wait + 2);
      const t = this._take(key, row, true);
      if (t.owner) return t;
      const now = this._row.get(key);
      if (t.refused && now && now.status === held.status && now.sends === held.sends) {
        refused += 1;                // refused, and nothing moved
        if (refused >= this._limits.resend_refusals) {
          try {
            return this._replay(key, now);
          } catch (e) {
            e.cause = t.refused;
            throw e;
          }
        }
        await sleep(10);
      }
      held = now === undefined ? undefined : now;
    }
  }

  // Touch owner's pending call every heartbeat until the returned stop
  // is called (doc/contract.md §11): one UPDATE fenced by the owner, in a
  // transaction of its own; skipped while the connection is closed or in
  // a transaction, and when the database is busy (the next beat tries).
  _heartbeat(key, owner) {
    if (this._beatMs == null) return () => {};
    const timer = setInterval(() => {
      const db = this.db;
      if (!db.open || db.inTransaction) return;
      try {
        this._touch.run(key, owner);
      } catch (e) { /* busy: the next beat */ }
    }, this._beatMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  async _external(fn, key, row, args, extra) {
    const tool = row[2];
    const deadline = Date.now() + this._resendWaitMs;
    let taken = await this._takeOrReplay(key, row, deadline);
    let value, owner;
    for (;;) {
      if (taken instanceof Outcome) return taken;
      owner = taken.owner;
      const header = taken.header;
      const idempotencyKey = header.slice(header.indexOf(': ') + 2);   // '"<key>"'
      const stop = this._heartbeat(key, owner);  // until fn settles, however
      try {
        try {
          value = await fn(args, { ...extra, idempotencyKey, key });
        } finally {
          stop();
        }
        break;
      } catch (e) {
        if (isA(e, NotSent)) {
          // The tool's word that nothing left: release, so a retry runs.
          e.key = key;
          await this._releaseOwned(key, owner, e);
          throw e;
        }
        // The request may have reached the target: 'failed' on an external
        // call is recorded as 'unknown', never retried, unless the target
        // honours the key and the extension allows a resend.
        try {
          await this._unknown(key, owner, this._note(noteOf(e)), null, e);
        } catch (u) {
          const now = isA(u, Unknown) ? this._row.get(key) : undefined;
          if (!Calls._mayResend(now, deadline)) throw u;
          taken = await this._takeOrReplay(key, row, deadline, now);
        }
      }
    }
    // The tool returned: its request was made.  What cannot be stored (not
    // JSON, or refused by the table) leaves the call unknown, with why.
    const unknown = (e, result) => this._unknown(key, owner, this._note('the tool returned, so its ' +
      `request was made, but ${unstorableWhy(e, tool)}; reconcile it with reconcile = ` +
      '\'arrived\' and the target\'s result'), result, e);
    let stored;
    try {
      stored = storable(value, tool);
    } catch (e) {
      return unknown(e, isA(value, Result) ? value.result : value);
    }
    const [text, id, readId] = stored;
    try {
      await this._settle(key, owner, 'done', [id, text, null], JSON.parse(text));
    } catch (e) {
      if (e instanceof Lost || e instanceof NotRecorded) throw e;
      return unknown(e, JSON.parse(text));        // the table refused it, not busy
    }
    const done = this._row.get(key);
    return new Outcome(JSON.parse(text), readId, key, false, done ? done.sends : null);
  }

  // reconcile = 'not_sent' on this owner's call; if the table refuses it
  // (not busy), the call is recorded unknown, with why.
  async _releaseOwned(key, owner, cause) {
    try {
      await this._settle(key, owner, 'not_sent', null, null, { cause });
    } catch (e) {
      if (e instanceof Lost || e instanceof NotRecorded) throw e;
      await this._unknown(key, owner, this._note('the tool said that its request was not sent, but ' +
        `the call could not be released: ${noteOf(e)}; reconcile it with reconcile = ` +
        '\'not_arrived\''), null, e);
    }
  }

  // Record the call as unknown (status 'failed' on an external call),
  // retried while the database refuses it, whatever its error; then throw
  // Unknown (replayed: false) with cause.
  async _unknown(key, owner, text, result, cause) {
    await this._settle(key, owner, 'unknown', [null, null, text], result, { cause, anyError: true });
    let reply = null;
    try { reply = this.reply(key); } catch (e) { /* the Unknown goes on */ }
    throw new Unknown(key, reply || { status: 'unknown', message: text }, { cause, replayed: false });
  }
}

/** An idem claim table on db: see Calls. */
function calls(db, table = 'calls', options = {}) {
  return new Calls(db, table, options);
}

module.exports = {
  load, loadablePath, calls, Calls, Result, Outcome,
  CallError, InProgress, Unknown, Failed, NotSent, Lost, NotRecorded, Unstorable, ArgsMismatch, HEADER,
  // Exposed for tests of the argument checks; not part of the API.
  _toJson: toJson, _destructuredNames: destructuredNames,
};
