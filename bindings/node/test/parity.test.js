// SPDX-License-Identifier: MIT
'use strict';
// Node at Python's level (issue 34, item 4): a call with an argument name
// the tool does not take, or without one it needs, is refused before
// anything is claimed, as Python's signature check refuses it; what the
// tool takes is read from its args pattern ({ to, text = '' }), or from
// params (a name ending in '?' is optional); a tool that takes its args
// whole (args, or { ...rest }) takes any name.  tool.run()'s extra reaches
// the tool beside its arguments, and never the key.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');
const idem = require('sqlite-idem');

function setup(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-node-'));
  const db = new Database(path.join(dir, 'app.db'));
  t.after(() => { db.close(); fs.rmSync(dir, { recursive: true, force: true }); });
  return { db, calls: idem.calls(db) };
}
const count = (db) => db.prepare('SELECT count(*) AS n FROM calls').get().n;

test('an argument the tool does not take, or a missing one, is refused; nothing is claimed, nothing runs', async (t) => {
  const { db, calls } = setup(t);
  const runs = [];
  const send = calls.tool({ kind: 'external', name: 'send' }, async ({ to, text = '' }) => { runs.push(to); return text; });
  const order = calls.tool({ name: 'order' }, (d, { sku, qty = 1, 'gift wrap': wrap = false }) => { runs.push(sku); return qty; });
  await assert.rejects(send('a', 'c', { txt: 'a' }), {
    name: 'TypeError',
    message: 'idem: send(who, conv, args): args.txt is not an argument of send (it takes to, text); nothing was claimed',
  });
  await assert.rejects(send('a', 'c', { to: 'bob', txt: 'a' }), /args.txt is not an argument of send/);
  await assert.rejects(send('a', 'c', { text: 'hi' }), {
    name: 'TypeError',
    message: 'idem: send(who, conv, args): args.to is missing (send requires to); nothing was claimed',
  });
  await assert.rejects(send('a', 'c', { to: undefined }), /args.to is missing/);
  await assert.rejects(send('a', 'c'), /args.to is missing/);
  await assert.rejects(order('a', 'c', { sku: 'A', 'gift-wrap': true }),
    /args\["gift-wrap"\] is not an argument of order \(it takes sku, qty, gift wrap\)/);
  assert.throws(() => send.key('a', 'c', { txt: 'a' }), /args.txt is not an argument of send/);
  assert.deepEqual([runs, count(db)], [[], 0]);
  // What it takes, with or without the optional ones, runs.
  assert.equal(await send('a', 'c', { to: 'bob' }), '');
  assert.equal(await send('a', 'c', { to: 'bob', text: 'hi' }), 'hi');
  assert.equal(await order('a', 'c', { sku: 'A', 'gift wrap': true }), 1);
  assert.equal(await order('a', 'c', { sku: 'A', qty: undefined, 'gift wrap': true }), 1);  // undefined: not given
  assert.deepEqual(runs, ['bob', 'bob', 'A']);
});

test('what a tool takes: its pattern, a rest element, params, or anything', async (t) => {
  const { calls } = setup(t);
  const rest = calls.tool({ name: 'rest' }, (d, { sku, ...more }) => more);
  assert.deepEqual(await rest('a', 'c', { sku: 'A', any: 1 }), { any: 1 });
  await assert.rejects(rest('a', 'c', { any: 1 }), /args.sku is missing \(rest requires sku\)/);
  const whole = calls.tool({ name: 'whole' }, (d, args) => Object.keys(args).length);
  assert.equal(await whole('a', 'c', { x: 1, y: 2 }), 2);
  const none = calls.tool({ name: 'none' }, (d) => 0);
  assert.equal(await none('a', 'c', { x: 1 }), 0);
  const listed = calls.tool({ kind: 'external', name: 'listed', params: ['to', 'text?'] },
    async (args) => args.text || args.to);
  assert.equal(await listed('a', 'c', { to: 'bob' }), 'bob');
  await assert.rejects(listed('a', 'c', { text: 'x' }), /args.to is missing \(listed requires to\)/);
  await assert.rejects(listed('a', 'c', { to: 'b', cc: 'x' }), /args.cc is not an argument of listed \(it takes to, text\)/);
  const empty = calls.tool({ name: 'empty', params: [] }, (d, args) => 1);
  await assert.rejects(empty('a', 'c', { x: 1 }), /args.x is not an argument of empty \(it takes none\)/);
  // keyargs are checked against params without their '?'.
  calls.tool({ name: 'k', keyargs: ['text'], params: ['to', 'text?'] }, (d, args) => 1);
  // A default that holds an arrow function or an '=' in a string is a default.
  const tricky = calls.tool({ name: 'tricky' }, (db, { a = (x) => x, b = 'p=q', c: { d } = {}, e }) => e);
  assert.equal(await tricky('a', 'c', { e: 5 }), 5);
  await assert.rejects(tricky('a', 'c', {}), /args.e is missing \(tricky requires e\)/);
});

test('tool.run(who, conv, args, extra): extra reaches the tool beside its arguments, never the key', async (t) => {
  const { calls } = setup(t);
  const seen = [];
  const send = calls.tool({ kind: 'external', name: 'send' }, async ({ to }, ctx) => { seen.push(ctx); return to; });
  const order = calls.tool({ name: 'order' }, (d, { sku }, ctx) => { seen.push(ctx); return sku; });
  const signal = new AbortController().signal;
  const a = await send.run('a', 'c', { to: 'b' }, { abortSignal: signal, toolCallId: 'x', key: 'spoof' });
  assert.deepEqual(Object.keys(seen[0]).sort(), ['abortSignal', 'idempotencyKey', 'key', 'toolCallId']);
  assert.deepEqual([seen[0].abortSignal, seen[0].toolCallId, seen[0].key], [signal, 'x', a.key]);
  const again = await send.run('a', 'c', { to: 'b' }, { toolCallId: 'y' });   // another id: one call
  assert.equal(again.replayed, true);
  const o = await order.run('a', 'c', { sku: 'S' }, { toolCallId: 'z' });
  assert.deepEqual(seen[1], { toolCallId: 'z', key: o.key });
  await assert.rejects(order.run('a', 'c', { sku: 'T' }, 'x'), /order.run\(who, conv, args, extra\): extra must be an object/);
  assert.equal(seen.length, 2);
});
