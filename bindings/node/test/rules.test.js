// SPDX-License-Identifier: MIT
'use strict';
// The rules the Node and the Python package keep alike, in the same words
// (doc/choices.md, "The packages"); bindings/python/tests/test_rules.py
// holds the same tests for Python, with the same messages.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');
const idem = require('sqlite-idem');

function setup(t, options = {}, table = 'calls') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-node-'));
  const file = path.join(dir, 'app.db');
  const db = new Database(file, { timeout: 5000 });
  db.exec('CREATE TABLE orders(id INTEGER PRIMARY KEY, sku)');
  t.after(() => { db.close(); fs.rmSync(dir, { recursive: true, force: true }); });
  return { file, db, calls: idem.calls(db, table, options) };
}
const caught = (p) => p.then((v) => assert.fail(`resolved to ${JSON.stringify(v)}`), (e) => e);
const one = (db, sql, ...args) => Object.values(db.prepare(sql).get(...args))[0];

// A value of `levels` nested arrays around inner.
function deep(levels, inner) {
  let v = inner === undefined ? [] : inner;
  for (let i = inner === undefined ? 1 : 0; i < levels; i++) v = [v];
  return v;
}

test('rules: a done record the table refuses makes the call unknown, with why', async (t) => {
  const { db, calls } = setup(t);
  calls.recordTimeoutMs = 300;
  const send = calls.tool({ kind: 'external', name: 'send' }, async ({ n }) => {
    // The database is full: the result does not fit, the note does.
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`);
    return 'x'.repeat(n);
  });
  const e = await caught(send('a', 'c', { n: 100000 }));
  db.pragma('max_page_count = 1000000');
  assert.ok(e instanceof idem.Unknown, String(e));
  assert.deepEqual([e.status, e.replayed], ['unknown', false]);
  assert.match(e.cause.code, /^SQLITE_FULL/);
  const row = db.prepare('SELECT status, note FROM calls').get();
  assert.equal(row.status, 'unknown');
  assert.match(row.note, /\(reported: the tool returned, so its request was made, but the result of send could not be recorded: \w+: .*database or disk is full; reconcile it with reconcile = 'arrived' and the target's result\)$/);
  const again = await caught(send('a', 'c', { n: 100000 }));
  assert.deepEqual([again instanceof idem.Unknown, again.replayed], [true, true]);
});

test('rules: a database that refuses every write for recordTimeoutMs: NotRecorded, the call pending', async (t) => {
  const { db, calls } = setup(t);
  calls.recordTimeoutMs = 300;
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => {
    db.pragma('query_only = 1');                 // no write succeeds
    return { ok: 1 };
  });
  const started = Date.now();
  const e = await caught(send('a', 'c', {}));
  assert.ok(Date.now() - started >= 300);
  db.pragma('query_only = 0');
  assert.ok(e instanceof idem.NotRecorded, String(e));
  const key = send.key('a', 'c', {});
  // The done record was refused, so was the unknown one it fell back to.
  assert.deepEqual([e.key, e.status, e.result, e.id], [key, 'unknown', { ok: 1 }, null]);
  assert.match(e.cause.code, /^SQLITE_READONLY/);
  assert.match(e.message, new RegExp(`^idem: call ${key} stays pending: its outcome, unknown \\(the request may have left\\), could not be recorded \\(.*readonly database; tried for 0.3 s\\); reconcile it: calls.reconcile\\('${key}', 'arrived' or 'not_arrived' after checking the target\\)`));
  assert.equal(calls.reply(key).status, 'pending');
  calls.reconcile(key, 'arrived', { result: e.result });
  assert.deepEqual(await send.run('a', 'c', {}), new idem.Outcome({ ok: 1 }, null, key, true));
});

test('rules: a refusal lifted within recordTimeoutMs: the call is recorded', async (t) => {
  const { db, calls } = setup(t);
  calls.recordTimeoutMs = 10000;
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => {
    db.pragma('query_only = 1');
    setTimeout(() => db.pragma('query_only = 0'), 200);
    return { ok: 1 };
  });
  const e = await caught(send('a', 'c', {}));          // recorded, once it could be
  assert.ok(e instanceof idem.Unknown, String(e));
  assert.match(e.reply.message, /readonly database/);
  assert.equal(one(db, 'SELECT status FROM calls'), 'unknown');
});

test('rules: NotRecorded (busy) says which call stays pending and the reconcile to run', async (t) => {
  const { file, db, calls } = setup(t);
  db.pragma('busy_timeout = 20');
  calls.recordTimeoutMs = 300;
  const other = new Database(file);
  t.after(() => other.close());
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => {
    other.exec('BEGIN IMMEDIATE');
    return new idem.Result({ ok: 1 }, 7);
  });
  const e = await caught(send('a', 'c', {}));
  other.exec('ROLLBACK');
  assert.ok(e instanceof idem.NotRecorded, String(e));
  assert.deepEqual([e.status, e.result, e.id], ['done', { ok: 1 }, 7]);
  assert.equal(e.message, `idem: call ${e.key} stays pending: its outcome, done (the tool returned), ` +
    `could not be recorded (database is locked; tried for 0.3 s); reconcile it: calls.reconcile('${e.key}', ` +
    `'arrived', { id, result }) (SQL: UPDATE "calls" SET reconcile = ... WHERE key = '${e.key}' AND member = 0)`);
});

test('rules: CallError.replayed is false only on the Unknown thrown to the arrival that ran the tool', async (t) => {
  const { db, calls } = setup(t, { local_failure: 'keep' });
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => { throw new RangeError('no answer'); });
  const first = await caught(send('a', 'c', {}));
  const second = await caught(send('a', 'c', {}));
  assert.deepEqual([first.replayed, second.replayed], [false, true]);
  assert.ok(first.cause instanceof RangeError);
  const order = calls.tool({ name: 'order' }, () => { throw new Error('no stock'); });
  await caught(order('a', 'c', {}));
  const failed = await caught(order('a', 'c', {}));
  assert.deepEqual([failed instanceof idem.Failed, failed.replayed], [true, true]);
  db.exec("INSERT INTO calls(who, conv, tool, args, kind) VALUES ('a', 'c', 'held', '{}', 'external')");
  const key = calls.key('a', 'c', 'held', {});
  const pending = await caught(calls.waitOutcome(key, 0));
  assert.deepEqual([pending instanceof idem.InProgress, pending.replayed], [true, true]);
  calls.reconcile(key, 'arrived', { id: 3, result: [1] });
  assert.deepEqual(await calls.waitOutcome(key), new idem.Outcome([1], 3, key, true));
  assert.deepEqual(await calls.wait(key), [1]);
});

test('rules: reconcile(arrived) keeps the columns not given', (t) => {
  const { db, calls } = setup(t);
  db.exec("INSERT INTO calls(who, conv, tool, args, kind) VALUES ('a', 'c', 'send', '{}', 'external')");
  const key = calls.key('a', 'c', 'send', {});
  // What the target reported, written before the verdict.
  db.prepare('UPDATE calls SET id = 7, result = \'{"charge":"ch_7"}\' WHERE key = ? AND member = 0').run(key);
  calls.reconcile(key, 'arrived');
  assert.deepEqual(db.prepare('SELECT status, id, result FROM calls').get(),
    { status: 'done', id: 7, result: '{"charge":"ch_7"}' });
  // A column given is set, null included.
  db.exec("INSERT INTO calls(who, conv, tool, args, kind) VALUES ('a', 'c', 'send', '[]', 'external')");
  const k2 = calls.key('a', 'c', 'send', []);
  db.prepare("UPDATE calls SET id = 8, result = '1' WHERE key = ? AND member = 0").run(k2);
  calls.reconcile(k2, 'arrived', { id: null, result: null, note: 'checked' });
  assert.deepEqual(db.prepare('SELECT id, result, note FROM calls WHERE key = ?').get(k2),
    { id: null, result: 'null', note: 'checked' });
});

test('rules: nesting: 1000 levels, idem\'s limit; deeper is refused by path', async (t) => {
  const { db, calls } = setup(t);
  const put = calls.tool({ name: 'put' }, (db, { a }) => a);
  const value = deep(999);                     // and the args object: 1000 levels
  const text = '['.repeat(999) + ']'.repeat(999);
  const want = one(db, `SELECT idem_key('u', 'c', 'put', '{"a":${text}}')`);
  assert.equal(put.key('u', 'c', { a: value }), want);
  assert.equal(calls.key('u', 'c', 'put', { a: value }), want);
  const first = await put.run('u', 'c', { a: value });
  const again = await put.run('u', 'c', { a: value });
  assert.deepEqual([first.result, again.result, first.replayed, again.replayed], [value, value, false, true]);
  await assert.rejects(put('u', 'c', { a: deep(1000) }), {
    name: 'TypeError', message: 'idem: the arguments of put are not JSON: args.a is nested deeper than 1000 levels, idem\'s limit' });
  assert.throws(() => calls.key('u', 'c', 'put', deep(1001)),
    /^TypeError: idem: the arguments of put are not JSON: args\[0\] is nested deeper than 1000 levels/);
  // Results: every kind of JSON value at the bottom of 998 arrays.
  const inner = { s: 'a "b" \\ é 😀', n: [0, -1, 2.5, -3e-7, 1e300], t: true, f: false, z: null, o: {}, l: [] };
  const fetch = calls.tool({ kind: 'external', name: 'fetch' }, async () => deep(998, inner));
  const r1 = await fetch.run('u', 'c', {});
  const r2 = await fetch.run('u', 'c', {});
  assert.deepEqual([r1.result, r2.result, calls.reply(r1.key).result], [deep(998, inner), deep(998, inner), deep(998, inner)]);
  const tooDeep = calls.tool({ kind: 'external', name: 'too_deep' }, async () => ({ r: [deep(1000)] }));
  const e = await caught(tooDeep('u', 'c', {}));
  assert.ok(e.reply.message.includes('but the result of too_deep is not JSON: result.r is nested deeper than 1000 levels, idem\'s limit;'), e.reply.message);
});

// The words of what is not JSON: the same in Python (test_rules.py), for
// the values both languages have.
const NOT_JSON = [
  [{ a: [1, Infinity] }, 'args.a[1] is Infinity, which JSON has no form for'],
  [{ a: { 'b c': -Infinity } }, 'args.a["b c"] is -Infinity, which JSON has no form for'],
  [{ x: NaN }, 'args.x is NaN, which JSON has no form for'],
  [{ s: ['ok', '\ud800'] }, 'args.s[1] holds a lone surrogate, which is not text'],
  [{ o: { '\udfff': 1 } }, 'args.o has a key that holds a lone surrogate, which is not text'],
  // A Symbol key, which JSON.stringify leaves out: refused as Python refuses
  // a float key (test_rules.py) and Go a bool one, in the same words.
  [{ o: { a: 1, [Symbol('tag')]: 2 } }, 'args.o has a key that is a Symbol (Symbol(tag)), which JSON has no form for; a key is text or an integer'],
  [{ [Symbol.iterator]: 1 }, 'args has a key that is a Symbol (Symbol(Symbol.iterator)), which JSON has no form for; a key is text or an integer'],
  [{ l: [{ [Symbol('x'.repeat(50))]: 0 }] }, `args.l[0] has a key that is a Symbol (Symbol(${'x'.repeat(33)}...), which JSON has no form for; a key is text or an integer`],
  // Bytes and a date are refused, as Python refuses bytes and a datetime
  // (doc/contract.md §3): toJSON() would store {"type":"Buffer","data":[...]}
  // and an ISO text.
  [{ b: [Buffer.from('hi')] }, 'args.b[0] is a Buffer, which JSON has no form for; encode it as text (base64 or hex)'],
  [{ u: new Uint8Array([1]) }, 'args.u is a Uint8Array, which JSON has no form for; encode it as text (base64 or hex)'],
  [{ d: new Date(0) }, 'args.d is a Date, which JSON has no form for; give its text (toISOString()) or its time (getTime())'],
  // A class without toJSON(), its article as its name is read (Python's and
  // Go's rule too).
  [{ c: new (class Undo {})() }, 'args.c is an Undo, which JSON has no form for; JSON.stringify would write its own enumerable properties only, if any; convert it, or give its class a toJSON()'],
  [{ c: new (class Unit {})() }, 'args.c is a Unit, which JSON has no form for; JSON.stringify would write its own enumerable properties only, if any; convert it, or give its class a toJSON()'],
  // A toJSON() or a Proxy's trap that throws: the same TypeError, by path.
  [{ t: { v: { toJSON() { throw new RangeError('no form'); } } } }, 'args.t.v.toJSON() threw RangeError: no form'],
  [{ p: new Proxy({}, { ownKeys() { throw new Error('trap'); } }) }, 'reading args.p threw Error: trap'],
];

test('rules: what is not JSON, in the same words for args, keyargs and results', async (t) => {
  const { db, calls } = setup(t);
  const cyc = { n: 1 };
  cyc.self = [cyc];
  const cases = [...NOT_JSON, [{ c: cyc }, 'args.c.self[0] is a circular reference (it contains itself)']];
  for (const [args, why] of cases) {
    const tool = calls.tool({ name: 't', params: [] }, (db, a) => a);
    const ka = calls.tool({ name: 'k', keyargs: (a) => a }, (db, a) => 1);
    const r = calls.tool({ name: 'r' }, () => args);
    const want = `idem: the arguments of t are not JSON: ${why}`;
    await assert.rejects(tool('u', 'c', args), { name: 'TypeError', message: want });
    assert.throws(() => tool.key('u', 'c', args), { name: 'TypeError', message: want });
    assert.throws(() => calls.key('u', 'c', 't', args), { name: 'TypeError', message: want });
    await assert.rejects(ka('u', 'c', args), { message: want.replace('arguments of t', 'arguments of k') });
    const e = await caught(r('u', 'c', {}));
    assert.ok(e instanceof idem.Unstorable, String(e));
    assert.equal(e.message, `idem: the result of r is not JSON: ${why.replace('args', 'result')}; ` +
      'its writes were rolled back and the call released: a retry runs again');
  }
  const kf = calls.tool({ name: 't', keyargs: () => ({ x: NaN }) }, (db, { x }) => x);
  await assert.rejects(kf('u', 'c', { x: 1 }), {
    name: 'TypeError', message: 'idem: the keyargs of t are not JSON: keyargs.x is NaN, which JSON has no form for' });
  assert.equal(one(db, 'SELECT count(*) FROM calls'), 0);
});

// A key is text or an integer in all three packages (doc/contract.md §3):
// Node's keys are all text ({7: 'a'} is {"7": 'a'}, {1.0: 'a'} is {"1":
// 'a'}), where Python refuses a float, a bool or None as a key and Go
// refuses what encoding/json does; an integer key is its digits, the key
// that Python's {7: "a"} and Go's map[int]string{7: "a"} give
// (test_rules.py, notjson_test.go).  A Map, whose keys may be anything,
// is refused.
const KEY_OF_INT_KEY = 'e324e8b56f777c14f32f9eaba74dbcb4';

test('rules: a key is text or an integer, the same key in Python and Go', async (t) => {
  const { db, calls } = setup(t);
  assert.equal(calls.key('u', 'c', 't', { m: { 7: 'a' } }), KEY_OF_INT_KEY);
  assert.equal(calls.key('u', 'c', 't', { m: { '7': 'a' } }), KEY_OF_INT_KEY);
  assert.equal(calls.key('u', 'c', 't', '{"m":{"7":"a"}}'), KEY_OF_INT_KEY);
  assert.equal(calls.key('u', 'c', 't', { m: { 1.0: 'a' } }), calls.key('u', 'c', 't', { m: { '1': 'a' } }));
  const tool = calls.tool({ name: 't', params: [] }, (db, a) => a);
  const map = 'args.m is a Map, which JSON has no form for; JSON.stringify would write its own ' +
    'enumerable properties only, if any; convert it, or give its class a toJSON()';
  for (const args of [{ m: new Map([[1.5, 'a']]) }, { m: new Map([[true, 'a']]) }]) {
    await assert.rejects(tool('u', 'c', args), { name: 'TypeError', message: `idem: the arguments of t are not JSON: ${map}` });
  }
  assert.equal(one(db, 'SELECT count(*) FROM calls'), 0);
});

test('rules: an id is one SQL value; what is stored is what a replay reads', async (t) => {
  const { calls } = setup(t);
  const refused = [
    [true, 'id is a boolean; an id is one SQL value: null, a number, a BigInt, a string or a Buffer'],
    [{ a: 1 }, 'id is an object; an id is one SQL value: null, a number, a BigInt, a string or a Buffer'],
    [[1], 'id is an array; an id is one SQL value'],
    [2n ** 63n, 'id is 9223372036854775808, beyond SQLite\'s 64-bit integers'],
    [NaN, 'id is NaN, which JSON has no form for'],
    [Infinity, 'id is Infinity, which JSON has no form for'],
    ['a\ud800', 'id holds a lone surrogate, which is not text'],
  ];
  for (const [i, [id, why]] of refused.entries()) {
    const bad = calls.tool({ name: `bad${i}` }, () => new idem.Result(1, id));
    const e = await caught(bad('u', 'c', {}));
    assert.ok(e instanceof idem.Unstorable, String(e));
    assert.ok(e.cause.message.startsWith(`idem: the id of bad${i} cannot be stored: ${why}`), e.cause.message);
  }
});

test('rules: who and conv are text, an integer or bytes; one key with the same text', async (t) => {
  const { db, calls } = setup(t);
  const tool = calls.tool({ name: 't' }, () => 1);
  assert.equal(tool.key(42, Buffer.from('c')), tool.key('42', 'c'));
  assert.equal(tool.key(42n, 'c'), tool.key('42', 'c'));
  assert.equal(calls.key(42, 'c', 't', {}), tool.key('42', 'c'));
  await tool(42, 'c');
  assert.equal(one(db, 'SELECT who FROM calls'), '42');
  const refused = [
    [null, 'who must be a string, an integer or bytes (the user or principal), not null'],
    [true, 'not true'], [4.5, 'not 4.5'],
    [2n ** 64n, 'who is 18446744073709551616, beyond SQLite\'s 64-bit integers'],
    [2 ** 60, 'who is 1152921504606847000, beyond the integers a number holds exactly'],
    ['\udc00', 'who holds a lone surrogate, which is not text'],
  ];
  for (const [who, why] of refused) {
    await assert.rejects(tool(who, 'c'), (e) => e instanceof TypeError && e.message.startsWith('idem: ') && e.message.includes(why));
  }
  assert.throws(() => calls.key('u', [], 't', {}), /conv must be a string, an integer or bytes \(the conversation or session\), not an array/);
  assert.equal(one(db, 'SELECT count(*) FROM calls'), 1);
});

test('rules: wait() in a transaction is refused (it could never see the outcome)', async (t) => {
  const { db, calls } = setup(t);
  db.exec('BEGIN');
  await assert.rejects(calls.wait('0'.repeat(32)), /^Error: idem: calls.wait\(\) needs a connection outside a transaction/);
  db.exec('ROLLBACK');
  await assert.rejects(calls.wait('0'.repeat(32), 0), /no call 0{32} is claimed/);
});

test('rules: notes are at most 2000 characters', async (t) => {
  const { db, calls } = setup(t);
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => { throw new Error('x'.repeat(5000)); });
  await caught(send('a', 'c', {}));
  const reported = /\(reported: (.*)\)$/.exec(one(db, 'SELECT note FROM calls'))[1];
  assert.equal(reported.length, 2000);
  assert.ok(reported.startsWith('Error: xxx') && reported.endsWith('x...'));
});

test('rules: options: a table another connection created meanwhile is compared too', (t) => {
  const { file } = setup(t);
  const other = new Database(file);
  idem.load(other);
  let created = false;
  const db = new Database(file, {
    verbose: (sql) => {                // between the look-up and the CREATE
      if (!created && sql.startsWith('CREATE VIRTUAL TABLE')) {
        created = true;
        other.exec('CREATE VIRTUAL TABLE jobs USING idem(local_failure=keep)');
      }
    },
  });
  t.after(() => { db.close(); other.close(); });
  assert.throws(() => idem.calls(db, 'jobs', { local_failure: 'release' }),
    /^TypeError: idem: the table "jobs" exists with local_failure=keep, not local_failure=release/);
  assert.equal(created, true);
});
