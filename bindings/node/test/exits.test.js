// SPDX-License-Identifier: MIT
'use strict';
// Every exit of a wrapper ends in a recorded state (issue 31, item 6):
// whatever a tool throws (an Error whose name is a Symbol, whose message
// has no usable toString, a Proxy whose traps throw, a string with a lone
// surrogate, an object whose toJSON throws one of these), the call ends
// unknown (external), released or failed (local), with a note that could
// be built and stored, and the caller gets the package's own error
// (Unknown), or, from a local tool, its own.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');
const idem = require('sqlite-idem');

function setup(t, options = {}, table = 'calls') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-node-'));
  const db = new Database(path.join(dir, 'app.db'), { timeout: 5000 });
  db.exec('CREATE TABLE orders(id INTEGER PRIMARY KEY, sku)');
  t.after(() => { db.close(); fs.rmSync(dir, { recursive: true, force: true }); });
  return { db, calls: idem.calls(db, table, options) };
}
// The rejection, boxed: a Proxy that throws on `then` cannot be a promise's value.
const caughtBox = (p) => p.then((v) => assert.fail(`resolved to ${JSON.stringify(v)}`), (e) => [e]);
const caught = async (p) => (await caughtBox(p))[0];

// What a tool may throw that a naive note builder cannot turn into text,
// and what the note then says.
function oddThrows() {
  const symbolName = new Error('boom');
  symbolName.name = Symbol('odd');
  const badMessage = new Error('x');
  Object.defineProperty(badMessage, 'message', { value: { toString() { throw new Error('no text'); } } });
  const nullProtoMessage = new Error('x');
  Object.defineProperty(nullProtoMessage, 'message', { value: Object.create(null) });
  const getterThrows = new Error('x');
  Object.defineProperty(getterThrows, 'name', { get() { throw new Error('no name'); } });
  const trap = new Proxy({}, { getPrototypeOf() { throw new Error('trap'); }, get() { throw new Error('trap'); } });
  const surrogate = new Error('cannot open caf\udce9.txt');
  const toStringNotText = { toString() { return {}; } };
  return [
    ['an Error whose name is a Symbol', symbolName, 'Symbol(odd): boom'],
    ['a message whose toString throws', badMessage, 'Error: <an object that cannot be shown as text>'],
    ['a message without toString', nullProtoMessage, 'Error: <an object that cannot be shown as text>'],
    ['a name getter that throws', getterThrows, 'undefined: x'],
    ['a Proxy whose traps throw', trap, 'thrown: <'],
    ['a lone surrogate in the message', surrogate, 'Error: cannot open caf\ufffd.txt'],
    ['a Symbol', Symbol('thrown'), 'thrown: a Symbol'],
    ['an object whose toString is not text', toStringNotText, 'thrown: an object'],
    ['a string with a lone surrogate', 'bad \ud800', 'thrown: bad \ufffd'],
  ];
}

test('external: whatever is thrown, the call is unknown with a note, and Unknown is thrown', async (t) => {
  const { db, calls } = setup(t);
  for (const [label, thrown, shown] of oddThrows()) {
    const name = `send_${label.replace(/\W+/g, '_')}`;
    const send = calls.tool({ kind: 'external', name }, async () => { throw thrown; });
    const e = await caught(send('a', 'c', {}));
    assert.ok(e instanceof idem.Unknown, `${label}: ${e && e.stack}`);
    assert.equal(e.cause, thrown, label);
    assert.equal(db.inTransaction, false);
    const row = db.prepare('SELECT status, note FROM calls WHERE key = ?').get(send.key('a', 'c', {}));
    assert.equal(row.status, 'unknown', label);
    assert.ok(row.note.includes(shown), `${label}: ${row.note}`);
    assert.equal(e.reply.message, row.note);
    assert.ok((await caught(send('a', 'c', {}))) instanceof idem.Unknown, label);   // never run again
  }
});

test('external: a plain (not async) tool that throws them synchronously, the same', async (t) => {
  const { calls } = setup(t);
  for (const [label, thrown] of oddThrows()) {
    const send = calls.tool({ kind: 'external', name: `sync_${label.replace(/\W+/g, '_')}` }, () => { throw thrown; });
    assert.ok((await caught(send('a', 'c', {}))) instanceof idem.Unknown, label);
    assert.equal(calls.reply(send.key('a', 'c', {})).status, 'unknown', label);
  }
});

test('external: a result whose toJSON throws them: unknown', async (t) => {
  const { calls } = setup(t);
  for (const [label, thrown] of oddThrows()) {
    const send = calls.tool({ kind: 'external', name: `json_${label.replace(/\W+/g, '_')}` },
      async () => ({ v: { toJSON() { throw thrown; } } }));
    assert.ok((await caught(send('a', 'c', {}))) instanceof idem.Unknown, label);
    assert.equal(calls.reply(send.key('a', 'c', {})).status, 'unknown', label);
  }
});

test('local: a result whose toJSON throws them, or a Proxy whose traps throw: Unstorable with the key', async (t) => {
  // It was the raw error, no key, the claim gone with no note.
  const { db, calls } = setup(t);
  const kept = idem.calls(db, 'kept', { local_failure: 'keep' });
  const results = oddThrows().map(([label, thrown]) => [label, { v: { toJSON() { throw thrown; } } }, 'result.v.toJSON() threw ']);
  results.push(['a Proxy result', new Proxy({}, { ownKeys() { throw new Error('trap'); } }), 'reading result threw Error: trap']);
  for (const [label, value, why] of results) {
    for (const c of [calls, kept]) {
      const name = `r_${label.replace(/\W+/g, '_')}`;
      const order = c.tool({ name }, (d) => { d.prepare("INSERT INTO orders(sku) VALUES('x')").run(); return value; });
      const e = (await caughtBox(order('a', 'c', {})))[0];
      assert.ok(e instanceof idem.Unstorable, `${label}: ${e && e.stack}`);
      assert.deepEqual([e.key, e.status], [order.key('a', 'c', {}), c === kept ? 'failed' : 'released'], label);
      assert.ok(e.message.startsWith(`idem: the result of ${name} is not JSON: ${why}`), `${label}: ${e.message}`);
      assert.ok(e.cause instanceof TypeError, label);
      assert.equal(db.inTransaction, false);
    }
  }
  assert.equal(db.prepare('SELECT count(*) AS n FROM orders').get().n, 0);
  assert.equal(db.prepare("SELECT count(*) AS n FROM kept WHERE status = 'failed'").get().n, results.length);
});

test('local: whatever is thrown goes on as it is; the call is released, or kept failed with a note', async (t) => {
  const { db, calls } = setup(t);
  const kept = idem.calls(db, 'kept', { local_failure: 'keep' });
  for (const [label, thrown, shown] of oddThrows()) {
    const name = `order_${label.replace(/\W+/g, '_')}`;
    const order = calls.tool({ name }, (d) => { d.prepare("INSERT INTO orders(sku) VALUES('x')").run(); throw thrown; });
    assert.equal((await caughtBox(order('a', 'c', {})))[0], thrown, label);
    assert.equal(calls.reply(order.key('a', 'c', {})), null, label);         // released
    const korder = kept.tool({ name }, () => { throw thrown; });
    assert.equal((await caughtBox(korder('a', 'c', {})))[0], thrown, label);
    const row = db.prepare('SELECT status, note FROM kept WHERE key = ?').get(korder.key('a', 'c', {}));
    assert.equal(row.status, 'failed', label);
    assert.ok(row.note.includes(shown), `${label}: ${row.note}`);
  }
  assert.equal(db.prepare('SELECT count(*) AS n FROM orders').get().n, 0);
  assert.equal(db.inTransaction, false);
});

test('NotSent with an odd cause still releases', async (t) => {
  const { calls } = setup(t);
  const send = calls.tool({ kind: 'external', name: 'send' }, async () => {
    throw new idem.NotSent('no route to caf\udce9', { cause: Symbol('why') });
  });
  assert.ok((await caught(send('a', 'c', {}))) instanceof idem.NotSent);
  assert.equal(calls.reply(send.key('a', 'c', {})), null);
});
