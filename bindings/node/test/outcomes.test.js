// SPDX-License-Identifier: MIT
'use strict';
// Every call the wrapper claims ends recorded (issue 24 items 1 to 3, 5):
// whatever the tool returns or throws, the call is done, failed, unknown or
// released, with a note, and the caller gets an error that says which; a
// record the database refuses for too long names the call that stays
// pending; NotSent releases; an owner whose call was released meanwhile
// finds out (Lost); tool.run() tells a replay from a first run.
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

const rows = (db, table = 'calls') =>
  db.prepare(`SELECT status, note, owner, result FROM ${table} WHERE member = 0`).all();
const caught = (p) => p.then((v) => assert.fail(`resolved to ${JSON.stringify(v)}`), (e) => e);

class Order { constructor() { this.id = 1; } }
// Each kind of value that JSON cannot hold as it is, and the words that
// say where and why (after "the result of TOOL is not JSON: ").
const UNSTORABLE = [
  ['a BigInt', { total: 12n }, 'result.total is a BigInt (12n), which JSON has no form for; convert it: Number(x) below 2^53, else String(x)'],
  ['a function', { then2: () => 1 }, 'result.then2 is a function, which JSON has no form for; JSON.stringify would leave it out'],
  ['a Symbol', [Symbol('x')], 'result[0] is a Symbol, which JSON has no form for; JSON.stringify would leave it out'],
  ['NaN inside', { a: { b: NaN } }, 'result.a.b is NaN, which JSON has no form for'],
  ['Infinity inside', [1, [2, -Infinity]], 'result[1][1] is -Infinity, which JSON has no form for'],
  ['undefined in an array', [undefined], 'result[0] is undefined, which JSON has no form for; JSON.stringify would write null in an array'],
  ['a cycle', (() => { const o = { n: 1 }; o.self = o; return o; })(), 'result.self is a circular reference (it contains itself)'],
  ['a Map', { 'm n': new Map([[1, 2]]) }, 'result["m n"] is a Map, which JSON has no form for; JSON.stringify would write its own enumerable properties only, if any; convert it, or give its class a toJSON()'],
  ['a class instance', new Order(), 'result is an Order, which JSON has no form for'],
  ['a BigInt at the top', 5n, 'result is a BigInt (5n), which JSON has no form for'],
  ['a lone surrogate', { s: 'a\ud800b' }, 'result.s holds a lone surrogate, which is not text'],
  ['a lone surrogate in a key', { '\udc00': 1 }, 'result has a key that holds a lone surrogate, which is not text'],
  ['too deep', { a: deep(1000) }, 'result.a is nested deeper than 1000 levels, idem\'s limit'],
  ['an id that is a Symbol', new idem.Result({ ok: true }, Symbol('id')), 'cannot be stored: id is a Symbol; an id is one SQL value: null, a number, a BigInt, a string or a Buffer'],
  ['an id that is an object', new idem.Result({ ok: true }, { a: 1 }), 'cannot be stored: id is an object; an id is one SQL value'],
  ['an id beyond 64 bits', new idem.Result(1, 2n ** 64n), 'cannot be stored: id is 18446744073709551616, beyond SQLite\'s 64-bit integers'],
  ['an id that is NaN', new idem.Result(1, NaN), 'cannot be stored: id is NaN, which JSON has no form for'],
];
function deep(levels) {
  let v = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
}
const whyOf = (tool, why) => (why.startsWith('cannot be stored')
  ? `the id of ${tool} ${why}` : `the result of ${tool} is not JSON: ${why}`);

test('external: an unstorable result is recorded unknown with a note, never left pending', async (t) => {
  const { db, calls } = setup(t);
  for (const [what, value, why] of UNSTORABLE) {
    let runs = 0;
    const send = calls.tool({ kind: 'external', name: `send ${what}` }, async () => { runs += 1; return value; });
    const e = await caught(send('a', 'c', { n: 1 }));
    assert.ok(e instanceof idem.Unknown, `${what}: ${e}`);
    assert.ok(e.cause instanceof TypeError, what);
    assert.ok(e.cause.message.startsWith(`idem: ${whyOf(send.name, why)}`), `${what}: ${e.cause.message}`);
    const key = send.key('a', 'c', { n: 1 });
    const [row] = db.prepare('SELECT status, note FROM calls WHERE key = ?').all(key);
    assert.equal(row.status, 'unknown', what);
    assert.ok(row.note.includes(`(reported: the tool returned, so its request was made, but ${whyOf(send.name, why)}`), `${what}: ${row.note}`);
    assert.ok(row.note.endsWith('; reconcile it with reconcile = \'arrived\' and the target\'s result)'), row.note);
    assert.equal(e.key, key);
    assert.equal(e.reply.status, 'unknown');
    assert.equal(e.reply.message, row.note);
    assert.equal(e.replayed, false);
    // A retry is told the same, and does not run the tool again.
    const again = await caught(send('a', 'c', { n: 1 }));
    assert.ok(again instanceof idem.Unknown, what);
    assert.deepEqual([again.replayed, again.cause], [true, undefined]);
    assert.equal(runs, 1, what);
  }
  assert.equal(db.inTransaction, false);
});

test('external: after an unstorable result, reconcile(arrived) makes the call done', async (t) => {
  const { calls } = setup(t);
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => ({ id: 10n ** 20n }));
  const e = await caught(send('a', 'c', {}));
  assert.ok(e instanceof idem.Unknown);
  calls.reconcile(e.key, 'arrived', { id: 'tx_1', result: { id: '100000000000000000000' }, note: 'from the target' });
  const o = await send.run('a', 'c', {});
  assert.deepEqual({ ...o }, { result: { id: '100000000000000000000' }, id: 'tx_1', key: e.key, replayed: true });
});

test('external: nothing returned (undefined) is recorded as null', async (t) => {
  const { db, calls } = setup(t);
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => {});
  assert.equal(await send('a', 'c', {}), null);
  assert.deepEqual(db.prepare('SELECT status, result FROM calls').get(), { status: 'done', result: 'null' });
});

test('external: whatever it throws, the call is unknown with a note, the cause kept', async (t) => {
  const { db, calls } = setup(t);
  const throws = [
    ['an Error', new RangeError('boom'), /RangeError: boom/],
    ['a string', 'plain text', /thrown: plain text/],
    ['undefined', undefined, /thrown: undefined/],
    ['an object', { code: 7 }, /thrown: an object/],
  ];
  for (const [what, thrown, note] of throws) {
    const send = calls.tool({ kind: 'external', name: `send ${what}` }, () => { throw thrown; });
    const e = await caught(send('a', 'c', {}));
    assert.ok(e instanceof idem.Unknown, what);
    assert.equal(e.cause, thrown, what);
    const row = db.prepare('SELECT status, note FROM calls WHERE key = ?').get(e.key);
    assert.equal(row.status, 'unknown', what);
    assert.match(row.note, note, what);
  }
});

test('local: an unstorable result rolls back its writes and is recorded failed', async (t) => {
  const { db, calls } = setup(t);
  const kept = idem.calls(db, 'kept', { local_failure: 'keep' });
  for (const [what, value, why] of UNSTORABLE) {
    for (const c of [calls, kept]) {
      const place = c.tool({ name: `place ${what}` }, (db) => {
        db.prepare('INSERT INTO orders(sku) VALUES (?)').run(what);
        return value;
      });
      const e = await caught(place('a', 'c', {}));
      assert.ok(e instanceof idem.Unstorable && e instanceof TypeError, `${what}: ${e}`);
      assert.ok(e.message.startsWith(`idem: ${whyOf(place.name, why)}`), `${what}: ${e.message}`);
      assert.deepEqual([e.key, e.status], [place.key('a', 'c', {}), c === kept ? 'failed' : 'released']);
      assert.ok(e.message.endsWith(c === kept ? '; its writes were rolled back and the call kept as failed (local_failure=keep)'
        : '; its writes were rolled back and the call released: a retry runs again'), e.message);
      assert.ok(e.cause instanceof TypeError && e.cause.message.startsWith(`idem: ${whyOf(place.name, why)}`));
      assert.equal(db.inTransaction, false);
    }
    assert.equal(db.prepare('SELECT count(*) AS n FROM orders').get().n, 0, what);
    assert.equal(db.prepare('SELECT count(*) AS n FROM calls').get().n, 0, what);     // released
    const [row] = rows(db, 'kept').filter((r) => r.note.includes(whyOf(`place ${what}`, why)));
    assert.equal(row && row.status, 'failed', what);                                  // kept
  }
  assert.equal(rows(db, 'kept').length, UNSTORABLE.length);
});

test('external: a busy database is retried, then NotRecorded names the pending call', async (t) => {
  const { file, db, calls } = setup(t);
  db.pragma('busy_timeout = 20');
  calls.recordTimeoutMs = 300;
  const other = new Database(file);
  t.after(() => other.close());
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => {
    other.exec('BEGIN IMMEDIATE');               // another connection takes the lock
    return { sent: 1 };
  });
  const started = Date.now();
  const e = await caught(send('a', 'c', {}));
  assert.ok(e instanceof idem.NotRecorded, String(e));
  assert.ok(Date.now() - started >= 300);
  assert.equal(e.key, send.key('a', 'c', {}));
  assert.deepEqual([e.status, e.result], ['done', { sent: 1 }]);
  assert.match(e.cause.code, /SQLITE_BUSY/);
  assert.match(e.message, new RegExp(`call ${e.key} stays pending.*calls.reconcile\\('${e.key}', 'arrived'`));
  other.exec('ROLLBACK');
  assert.equal(rows(db)[0].status, 'pending');
  assert.ok(await caught(send('a', 'c', {})) instanceof idem.InProgress);
  calls.reconcile(e.key, 'arrived', { result: e.result });
  assert.deepEqual(await send.run('a', 'c', {}), new idem.Outcome({ sent: 1 }, null, e.key, true));
});

test('local: a COMMIT busy past the busy timeout rolls all of it back (released) and throws, recordTimeoutMs aside', async (t) => {
  // A reader of a rollback journal keeps the COMMIT busy: the connection's
  // busy timeout is all the wait, as in Python and Go (doc/contract.md §5).
  const { file, db, calls } = setup(t);
  db.pragma('busy_timeout = 20');
  calls.recordTimeoutMs = 30000;
  const reader = new Database(file);
  t.after(() => reader.close());
  const runs = [];
  const place = calls.tool({ name: 'place' }, (conn, args) => {
    runs.push(args.sku);
    conn.prepare('INSERT INTO orders(sku) VALUES(?)').run(args.sku);
    return { sku: args.sku };
  });
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM orders').get();      // SHARED, held
  const started = Date.now();
  const e = await caught(place('a', 'c', { sku: 'x' }));
  assert.equal(e.code, 'SQLITE_BUSY', String(e));
  assert.ok(Date.now() - started < 10000);
  assert.equal(db.inTransaction, false);
  reader.exec('ROLLBACK');
  assert.deepEqual(db.prepare('SELECT (SELECT count(*) FROM orders) n, (SELECT count(*) FROM calls) c').get(), { n: 0, c: 0 });
  assert.deepEqual(await place.run('a', 'c', { sku: 'x' }),
    new idem.Outcome({ sku: 'x' }, null, place.key('a', 'c', { sku: 'x' }), false));
  assert.deepEqual(runs, ['x', 'x']);
});

test('external: the connection closed while the request was out: NotRecorded at once, the call pending', async (t) => {
  // The tool (or the application, at shutdown) closed the connection:
  // nothing can record the call.  It was recorded unknown... after
  // recordTimeoutMs of retries on a closed connection, as if busy.
  const { file, db, calls } = setup(t);
  calls.recordTimeoutMs = 5000;
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => {
    db.close();
    return { sent: 3 };
  });
  const key = send.key('a', 'c', {});
  const started = Date.now();
  const e = await caught(send('a', 'c', {}));
  assert.ok(e instanceof idem.NotRecorded, String(e));
  assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms`);
  assert.deepEqual([e.key, e.status, e.result], [key, 'done', { sent: 3 }]);
  assert.match(e.message, new RegExp(`^idem: call ${key} stays pending: its outcome, done \\(the tool returned\\), could not be recorded \\(.*not open.*\\); reconcile it`));
  const other = new Database(file);
  t.after(() => other.close());
  assert.equal(other.prepare('SELECT status FROM calls_claim').get().status, 'pending');
});

test('external: a lock released within recordTimeoutMs: the result is recorded', async (t) => {
  const { file, db, calls } = setup(t);
  db.pragma('busy_timeout = 20');
  const other = new Database(file);
  t.after(() => other.close());
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => {
    other.exec('BEGIN IMMEDIATE');
    setTimeout(() => other.exec('COMMIT'), 150);
    return { sent: 2 };
  });
  assert.deepEqual(await send('a', 'c', {}), { sent: 2 });
  assert.equal(rows(db)[0].status, 'done');
});

test('external: a transaction the caller opened meanwhile is waited for, not joined', async (t) => {
  const { db, calls } = setup(t);
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => {
    db.exec("BEGIN; INSERT INTO orders(sku) VALUES ('mine')");
    setTimeout(() => db.exec('ROLLBACK'), 100);
    return { sent: 3 };
  });
  assert.deepEqual(await send('a', 'c', {}), { sent: 3 });
  assert.equal(rows(db)[0].status, 'done');                   // not rolled back with it
  assert.equal(db.prepare('SELECT count(*) AS n FROM orders').get().n, 0);
});

test('NotSent: the call is released, NotSent goes on with its key, a retry runs', async (t) => {
  const { db, calls } = setup(t);
  let runs = 0;
  const send = calls.tool({ kind: 'external', name: 'send' }, async ({ to }) => {
    runs += 1;
    if (runs === 1) throw new idem.NotSent('no connection', { cause: new Error('ECONNREFUSED') });
    return { to };
  });
  const e = await caught(send('a', 'c', { to: 'bob' }));
  assert.ok(e instanceof idem.NotSent && e instanceof Error);
  assert.equal(e.name, 'NotSent');
  assert.equal(e.message, 'no connection');
  assert.equal(e.cause.message, 'ECONNREFUSED');
  assert.equal(e.key, send.key('a', 'c', { to: 'bob' }));
  assert.equal(db.prepare('SELECT count(*) AS n FROM calls').get().n, 0);
  assert.deepEqual(await send.run('a', 'c', { to: 'bob' }),
    new idem.Outcome({ to: 'bob' }, null, e.key, false));
  assert.equal(runs, 2);
  assert.equal(new idem.NotSent().message, 'the request was not sent');
});

test('NotSent from a local tool: all of it rolled back, released even with local_failure=keep', async (t) => {
  const { db, calls } = setup(t, { local_failure: 'keep' });
  let runs = 0;
  const place = calls.tool({ name: 'place' }, (db) => {
    db.exec("INSERT INTO orders(sku) VALUES ('x')");
    runs += 1;
    if (runs === 1) throw new idem.NotSent();
    return runs;
  });
  const e = await caught(place('a', 'c', {}));
  assert.ok(e instanceof idem.NotSent);
  assert.equal(e.key, place.key('a', 'c', {}));
  assert.deepEqual(rows(db), []);
  assert.equal(db.prepare('SELECT count(*) AS n FROM orders').get().n, 0);
  assert.equal(await place('a', 'c', {}), 2);
  // Inside a transaction of the caller's: its savepoint alone.
  db.exec("BEGIN; INSERT INTO orders(sku) VALUES ('mine')");
  runs = 0;
  assert.ok(await caught(place('a', 'c2', {})) instanceof idem.NotSent);
  db.exec('COMMIT');
  assert.deepEqual(db.prepare('SELECT sku FROM orders ORDER BY id').all().map((r) => r.sku), ['x', 'mine']);
});

test('owner: every claim has a token of its own, the records are guarded by it', async (t) => {
  const { db, calls } = setup(t);
  const place = calls.tool({ name: 'place' }, (db, { n }) => n);
  const send = calls.tool({ kind: 'external', name: 'send' }, async ({ n }) => n);
  await place('a', 'c', { n: 1 });
  await place('a', 'c', { n: 2 });
  await send('a', 'c', { n: 1 });
  const owners = rows(db).map((r) => r.owner);
  assert.equal(new Set(owners).size, 3);
  for (const o of owners) assert.match(o, new RegExp(`^${os.hostname()}:${process.pid}:[0-9a-f]{16}$`));
});

test('Lost: a call released while its tool ran is not reported as done', async (t) => {
  const { db, calls } = setup(t);
  let release;
  const send = calls.tool({ kind: 'external', name: 'send' }, async ({ n }, { key }) => {
    calls.reconcile(key, 'not_sent');                // an operator, meanwhile
    if (release === 'reclaim') await other('a', 'c', { n });
    return { n, by: 'first' };
  });
  const other = calls.tool({ kind: 'external', name: 'send' }, async ({ n }) => ({ n, by: 'second' }));
  const e = await caught(send('a', 'c', { n: 1 }));
  assert.ok(e instanceof idem.Lost, String(e));
  assert.deepEqual([e.key, e.status, e.result], [send.key('a', 'c', { n: 1 }), 'done', { n: 1, by: 'first' }]);
  assert.match(e.message, /no longer this arrival's.*look for a second effect/);
  assert.equal(db.prepare('SELECT count(*) AS n FROM calls').get().n, 0);
  // Released and claimed again by another arrival, which recorded its own.
  release = 'reclaim';
  const e2 = await caught(send('a', 'c', { n: 2 }));
  assert.ok(e2 instanceof idem.Lost);
  assert.deepEqual(await other('a', 'c', { n: 2 }), { n: 2, by: 'second' });
});

test('Lost: also when the tool threw, or said NotSent, after the release', async (t) => {
  const { calls } = setup(t);
  const cases = [[new Error('timeout'), 'unknown'], [new idem.NotSent('down'), 'not_sent']];
  for (const [thrown, outcome] of cases) {
    const send = calls.tool({ kind: 'external', name: `send ${outcome}` }, async (args, { key }) => {
      calls.reconcile(key, 'not_sent');
      throw thrown;
    });
    const e = await caught(send('a', 'c', {}));
    assert.ok(e instanceof idem.Lost, String(e));
    assert.equal(e.status, outcome);
    assert.equal(e.cause, thrown);
  }
});

test('run(): an Outcome marks the replay; the plain call resolves to the result', async (t) => {
  const { calls } = setup(t);
  const place = calls.tool({ name: 'place' }, (db, { sku }) => {
    const id = Number(db.prepare('INSERT INTO orders(sku) VALUES (?)').run(sku).lastInsertRowid);
    return new idem.Result({ order: id }, id);
  });
  const send = calls.tool({ kind: 'external', name: 'send' }, async ({ cents }) =>
    new idem.Result({ charge: 'ch_1', cents }, 'ch_1'));
  const key = place.key('a', 'c', { sku: 'S' });
  const first = await place.run('a', 'c', { sku: 'S' });
  assert.ok(first instanceof idem.Outcome);
  assert.deepEqual({ ...first }, { result: { order: 1 }, id: 1, key, replayed: false });
  assert.ok(Object.isFrozen(first));
  assert.deepEqual({ ...await place.run('a', 'c', { sku: 'S' }) }, { ...first, replayed: true });
  assert.deepEqual(await place('a', 'c', { sku: 'S' }), { order: 1 });
  const s1 = await send.run('a', 'c', { cents: 5 });
  const s2 = await send.run('a', 'c', { cents: 5 });
  assert.deepEqual([s1.replayed, s2.replayed, s1.id, s2.id], [false, true, 'ch_1', 'ch_1']);
  assert.deepEqual(s2.result, s1.result);
  assert.deepEqual(await calls.waitOutcome(s1.key, 10), s2);
  assert.deepEqual([place.kind, send.kind, place.name], ['local', 'external', 'place']);
});

test('run(): ids as a replay reads them: integers, big integers, text, bytes', async (t) => {
  const { calls } = setup(t);
  const ids = [[7, 7], [2.5, 2.5], [2n ** 60n, 2n ** 60n], [12n, 12], [-(2n ** 63n), -(2n ** 63n)],
    ['ch_1', 'ch_1'], [Buffer.from([0, 255]), Buffer.from([0, 255])], [new Uint8Array([1, 2]), Buffer.from([1, 2])],
    [null, null], [undefined, null]];
  for (const [id, read] of ids) {
    const place = calls.tool({ name: `place ${String(id)}` }, () => new idem.Result(1, id));
    const first = await place.run('a', 'c', {});
    const again = await place.run('a', 'c', {});
    assert.deepEqual([first.id, again.id], [read, read], String(id));
  }
});

test('reconcile(): arrived, not_arrived, not_sent, and what the table refuses', async (t) => {
  const { db, calls } = setup(t);
  let runs = 0;
  const send = calls.tool({ kind: 'external', name: 'send' }, async ({ n }) => {
    runs += 1;
    if (n < 0) throw new Error('timed out');
    return { n };
  });
  const e = await caught(send('a', 'c', { n: -1 }));
  assert.throws(() => calls.reconcile(e.key, 'not_sent'), /unknown outcome/);
  calls.reconcile(e.key, 'not_arrived');
  const e2 = await caught(send('a', 'c', { n: -1 }));
  assert.equal(runs, 2);
  calls.reconcile(e2.key, 'arrived', { id: 5, result: { n: -1 } });
  assert.deepEqual(db.prepare('SELECT status, id, result, note FROM calls').get(),
    { status: 'done', id: 5, result: '{"n":-1}', note: 'reconciled: the target\'s records show that the request arrived' });
  assert.throws(() => calls.reconcile(e2.key, 'arrived'), /already decided/);
  // A pending call: not_arrived is refused unless stale; not_sent releases.
  db.exec('BEGIN IMMEDIATE');
  db.prepare("INSERT INTO calls(who, conv, tool, args, kind) VALUES ('b', 'c', 'send', '{}', 'external')").run();
  db.exec('COMMIT');
  const k = calls.key('b', 'c', 'send', {});
  assert.throws(() => calls.reconcile(k, 'not_arrived'), /pending and not stale.*reconcile = 'not_sent'/);
  calls.reconcile(k, 'not_sent');
  assert.equal(calls.reply(k), null);
  // Mistakes.
  // A word that is no verdict is the table's refusal, in its words;
  // 'resend' is a sender's, and not a string is the package's.
  db.prepare("INSERT INTO calls(who, conv, tool, args, kind) VALUES ('b', 'c', 'send', '{}', 'external')").run();
  for (const word of ['done', '', 'ARRIVED']) {
    assert.throws(() => calls.reconcile(k, word), (e) => e instanceof Database.SqliteError &&
      e.message === "idem: calls: reconcile must be 'arrived' (the target's records show the request: " +
        "the call becomes done), 'not_arrived' (they show it never came: the claim is released), " +
        "'not_sent' (a pending call whose request never left: the claim is released) or 'resend' " +
        '(a call whose target honours the key: sent again, with the same key, by a new owner)', word);
  }
  assert.throws(() => calls.reconcile(k, 'resend'), /^TypeError: idem: calls.reconcile\(\): 'resend' is not an operator's verdict: a tool declared honoursKey: true sends its call again itself; give 'arrived', 'not_arrived' or 'not_sent'$/);
  assert.throws(() => calls.reconcile(k, null), /^TypeError: idem: calls.reconcile\(\): verdict must be a string \('arrived', 'not_arrived' or 'not_sent'\), not null$/);
  calls.reconcile(k, 'not_sent');
  assert.throws(() => calls.reconcile(k, 'arrived', { reslt: 1 }), /no option "reslt"/);
  assert.throws(() => calls.reconcile(k, 'arrived', { result: { a: NaN } }),
    /^TypeError: idem: the result given to calls.reconcile is not JSON: result.a is NaN, which JSON has no form for$/);
  assert.throws(() => calls.reconcile(k, 'arrived', { id: [1] }),
    /^TypeError: idem: the id given to calls.reconcile cannot be stored: id is an array; an id is one SQL value/);
  assert.throws(() => calls.reconcile(k, 'arrived', { note: 1 }), /note must be a string, not 1/);
  assert.throws(() => calls.reconcile(k, 'arrived'), new RegExp(`^Error: idem: no call ${k} is claimed in "calls" \\(never claimed, released, or purged\\)$`));
  assert.throws(() => calls.reconcile(null, 'arrived'), /key must be a string/);
});

for (const hold of ['writer', 'reader']) {
  test(`reconcile(): a database kept busy (a ${hold}) past the busy timeout: its error, nothing written`, async (t) => {
    // One attempt: SQLite's busy handler (the connection's timeout) is the
    // only wait, never recordTimeoutMs (an owner's wait for its records),
    // as in Python and Go (doc/contract.md §5).  A reader of the rollback
    // journal makes the COMMIT busy.
    const { file, db, calls } = setup(t);
    const send = calls.tool({ kind: 'external', name: 'send' }, async () => { throw new Error('timed out'); });
    const key = (await caught(send('a', 'c', { n: 1 }))).key;
    calls.recordTimeoutMs = 30000;
    db.pragma('busy_timeout = 50');
    const other = new Database(file, { timeout: 5000 });
    t.after(() => other.close());
    other.exec(hold === 'writer' ? 'BEGIN IMMEDIATE' : 'BEGIN');
    other.prepare('SELECT count(*) FROM orders').get();            // SHARED, held
    const t0 = Date.now();
    assert.throws(() => calls.reconcile(key, 'arrived', { result: { ok: 1 } }),
      (e) => e instanceof Database.SqliteError && e.code.startsWith('SQLITE_BUSY'));
    assert.ok(Date.now() - t0 < 10000);
    assert.equal(db.inTransaction, false);
    other.exec('ROLLBACK');
    assert.equal(calls.reply(key).status, 'unknown');
    calls.reconcile(key, 'arrived', { result: { ok: 1 } });
    assert.equal(calls.reply(key).status, 'done');
  });
}

test('reconcile(): a release with an id, result or note is the table\'s refusal', async (t) => {
  // The rule and its words are the extension's (doc/contract.md §5): the
  // error of its other refusals; the call stays as it was.
  const { db, calls } = setup(t, { stale_after: '1 hour' });
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => { throw new Error('timed out'); });
  const unknown = (await caught(send('a', 'c', { n: 1 }))).key;
  db.prepare("INSERT INTO calls(who, conv, tool, args, kind) VALUES ('a', 'c', 'send', '{\"n\":2}', 'external')").run();
  const pending = calls.key('a', 'c', 'send', { n: 2 });
  db.prepare("UPDATE calls SET id = 'ch_8' WHERE key = ? AND member = 0").run(pending);
  for (const [key, verdict] of [[unknown, 'not_arrived'], [pending, 'not_sent'], [pending, 'not_arrived']]) {
    const message = `idem: calls: call '${key}': reconcile = 'not_arrived' and 'not_sent' release the ` +
      'call (its rows go) and keep nothing, so an id, result or note given with them would be ' +
      "lost; they go with reconcile = 'arrived' only";
    for (const given of [{ id: 'ch_9' }, { result: { a: 1 } }, { note: 'gone' }, { result: null }]) {
      assert.throws(() => calls.reconcile(key, verdict, given),
        (e) => e instanceof Database.SqliteError && e.code === 'SQLITE_ERROR' && e.message === message,
        `${verdict} ${JSON.stringify(given)}`);
      assert.equal(db.inTransaction, false);
    }
  }
  assert.equal(calls.reply(unknown).status, 'unknown');
  assert.deepEqual(db.prepare('SELECT status, id FROM calls WHERE key = ? AND member = 0').get(pending),
    { status: 'pending', id: 'ch_8' });
  // A null id is no value: the release goes on.
  calls.reconcile(pending, 'not_sent', { id: null });
  assert.equal(calls.reply(pending), null);
});
