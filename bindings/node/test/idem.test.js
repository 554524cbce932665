// SPDX-License-Identifier: MIT
'use strict';
// Tests of the Node package sqlite-idem, with node:test.
//
//   node --test bindings/node/test/       (sqlite-idem and better-sqlite3@12
//                                          installed where require finds them,
//                                          e.g. NODE_PATH=<prefix>/node_modules)
//
// Every database lives in a temporary directory.  The tests named
// "keyargs ..." need the claim column keyargs and the table option
// args_mismatch (doc/contract.md section 9).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');
const idem = require('sqlite-idem');

function tempdb(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-node-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'app.db');
}

function open(file) {
  const db = new Database(file, { timeout: 10000 });
  db.exec('CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, sku, qty)');
  return db;
}

function setup(t, table = 'calls', options = {}) {
  const file = tempdb(t);
  const db = open(file);
  t.after(() => db.close());
  return { file, db, calls: idem.calls(db, table, options) };
}

const one = (db, sql) => Object.values(db.prepare(sql).get())[0];

// An HTTP target on 127.0.0.1 that honours Idempotency-Key; waits delayMs
// before it answers, and while tg.hold (a Promise) has not resolved.
async function target(t, delayMs = 0) {
  const tg = { arrivals: 0, keys: [], delayMs, hold: null };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      tg.arrivals += 1;
      tg.keys.push(req.headers['idempotency-key']);
      const n = tg.arrivals;
      Promise.resolve(tg.hold).then(() => setTimeout(() => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ charge: `ch_${n}`, cents: JSON.parse(body).cents }));
      }, tg.delayMs));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  tg.url = `http://127.0.0.1:${server.address().port}/charges`;
  t.after(() => { server.closeAllConnections(); server.close(); });
  return tg;
}

function chargeTool(calls, tg, sent, timeoutMs = 5000) {
  return calls.tool({ kind: 'external', name: 'charge' }, async ({ cents }, { idempotencyKey }) => {
    sent.push(idempotencyKey);
    const r = await fetch(tg.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [idem.HEADER]: idempotencyKey },
      body: JSON.stringify({ cents }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return r.json();
  });
}

test('loadablePath and load', () => {
  assert.match(idem.loadablePath(), /idem\.so$/);
  assert.ok(fs.existsSync(idem.loadablePath()));
  const db = new Database(':memory:');
  idem.load(db);
  assert.match(one(db, 'SELECT idem_version()'), /^\d+\.\d+\.\d+$/);
  db.close();
});

test('calls() loads idem and creates the table, options verbatim', (t) => {
  const { db } = setup(t, 'tool_calls');
  assert.equal(one(db, "SELECT sql FROM sqlite_master WHERE name = 'tool_calls'"),
    'CREATE VIRTUAL TABLE "tool_calls" USING idem');
  idem.calls(db, 'tool_calls');             // already there
  idem.calls(db, 'kept', { local_failure: 'keep' });
  assert.equal(one(db, "SELECT sql FROM sqlite_master WHERE name = 'kept'"),
    'CREATE VIRTUAL TABLE "kept" USING idem(local_failure=keep)');
  assert.throws(() => idem.calls(db, 'bad', { no_such_option: '1' }),
    /^TypeError: idem: bad: unknown option 'no_such_option=1'; the options are local_failure=release\|keep,/);
});

test('key() is idem_key; numbers as doubles give the Python key', (t) => {
  const { db, calls } = setup(t);
  const want = one(db, `SELECT idem_key('a', 'c', 'place_order', '{"qty":2,"sku":"X"}')`);
  assert.equal(calls.key('a', 'c', 'place_order', { sku: 'X', qty: 2 }), want);
  const tool = calls.tool({ name: 'place_order' }, () => null);
  assert.equal(tool.key('a', 'c', { qty: 2.0, sku: 'X' }), want);
});

function orderTool(calls, runs) {
  return calls.tool({ kind: 'local', name: 'place_order' }, (db, { sku, qty }) => {
    runs.push(sku);
    const id = Number(db.prepare('INSERT INTO orders(sku, qty) VALUES (?, ?)').run(sku, qty).lastInsertRowid);
    return new idem.Result({ order: id }, id);
  });
}

test('local: runs once, a duplicate replays the recorded result', async (t) => {
  const { db, calls } = setup(t);
  const runs = [];
  const placeOrder = orderTool(calls, runs);
  const first = await placeOrder('alice', 'conv-7', { sku: 'A0001', qty: 2 });
  const again = await placeOrder('alice', 'conv-7', { qty: 2, sku: 'A0001' });
  assert.deepEqual([first, again], [{ order: 1 }, { order: 1 }]);
  assert.deepEqual(runs, ['A0001']);
  assert.equal(one(db, 'SELECT count(*) FROM orders'), 1);
  assert.equal(db.inTransaction, false);
  assert.deepEqual(db.prepare('SELECT status, id, typeof(id) AS t, result, kind FROM calls').get(),
    { status: 'done', id: 1, t: 'integer', result: '{"order":1}', kind: 'local' });
  await placeOrder('bob', 'conv-7', { sku: 'A0001', qty: 2 });      // another call
  assert.equal(one(db, 'SELECT count(*) FROM orders'), 2);
});

test('local: a throw rolls back its writes and releases the claim', async (t) => {
  const { db, calls } = setup(t);
  let attempts = 0;
  const invoice = calls.tool({ name: 'invoice' }, (db, { order }) => {
    db.prepare("INSERT INTO orders(sku, qty) VALUES ('invoice', ?)").run(order);
    attempts += 1;
    if (attempts === 1) throw new Error('template missing');
    return { invoiced: order };
  });
  await assert.rejects(invoice('alice', 'c', { order: 1 }), /template missing/);
  assert.equal(db.inTransaction, false);
  assert.equal(one(db, 'SELECT count(*) FROM orders') + one(db, 'SELECT count(*) FROM calls'), 0);
  assert.deepEqual(await invoice('alice', 'c', { order: 1 }), { invoiced: 1 });
  assert.deepEqual(await invoice('alice', 'c', { order: 1 }), { invoiced: 1 });
  assert.equal(attempts, 2);
  assert.equal(one(db, 'SELECT count(*) FROM orders'), 1);
});

test('local: local_failure=keep makes a duplicate reject with Failed', async (t) => {
  const { db, calls } = setup(t, 'kept', { local_failure: 'keep' });
  let runs = 0;
  const invoice = calls.tool({ name: 'invoice' }, (db) => {
    runs += 1;
    db.exec("INSERT INTO orders(sku) VALUES ('x')");
    throw new RangeError('no such order');
  });
  await assert.rejects(invoice('a', 'c', { order: 9 }), RangeError);
  const e = await invoice('a', 'c', { order: 9 }).catch((x) => x);
  assert.ok(e instanceof idem.Failed && e instanceof idem.CallError);
  assert.equal(e.key, invoice.key('a', 'c', { order: 9 }));
  assert.equal(e.reply.status, 'failed');
  assert.match(e.reply.message, /no such order/);
  assert.equal(runs, 1);
  assert.equal(one(db, 'SELECT count(*) FROM orders'), 0);
});

test('local: an async body is refused when the tool is defined; a Promise returned rolls all back', async (t) => {
  const { db, calls } = setup(t, 'kept', { local_failure: 'keep' });
  assert.throws(() => calls.tool({ name: 'bad' }, async (db) => {
    db.exec("INSERT INTO orders(sku) VALUES ('x')");
  }), /^TypeError: idem: the local tool bad is an async function: a local tool's writes run inside the claim's transaction, which must not stay open across an await/);
  const later = calls.tool({ name: 'later' }, (db) => {
    db.exec("INSERT INTO orders(sku) VALUES ('x')");
    return Promise.resolve(1);
  });
  await assert.rejects(later('a', 'c', {}), /^TypeError: idem: the local tool later returned a Promise: a local tool is synchronous; its writes were rolled back and the call released$/);
  assert.equal(one(db, 'SELECT count(*) FROM orders') + one(db, 'SELECT count(*) FROM kept'), 0);
  assert.equal(db.inTransaction, false);
});

test('local: a tool that ends the claim\'s transaction is an error, and nothing stays', async (t) => {
  const { db, calls } = setup(t);
  for (const throws of [false, true]) {
    const place = calls.tool({ name: 'place' }, (db) => {
      db.exec("INSERT INTO orders(sku) VALUES ('x')");
      db.exec('ROLLBACK');
      if (throws) throw new Error('after the rollback');
      return 1;
    });
    await assert.rejects(place('a', 'c', {}), /^Error: idem: the local tool place ended the claim's transaction \(a COMMIT or ROLLBACK inside it\): its writes and the claim are rolled back; a local tool must leave the transaction to idem$/);
    assert.equal(db.inTransaction, false);
    assert.equal(one(db, 'SELECT count(*) FROM orders') + one(db, 'SELECT count(*) FROM calls'), 0);
  }
});

test('local: inside the caller\'s transaction it is a savepoint of it', async (t) => {
  const { db, calls } = setup(t);
  const runs = [];
  const placeOrder = orderTool(calls, runs);
  db.exec('BEGIN');
  assert.deepEqual(await placeOrder('a', 'c', { sku: 'S', qty: 1 }), { order: 1 });
  assert.equal(db.inTransaction, true);
  db.exec('ROLLBACK');
  assert.equal(one(db, 'SELECT count(*) FROM calls'), 0);
  await placeOrder('a', 'c', { sku: 'S', qty: 1 });
  assert.equal(runs.length, 2);
});

test('bad input: a clear error and no transaction left', async (t) => {
  const { db, calls } = setup(t);
  const placeOrder = orderTool(calls, []);
  await assert.rejects(placeOrder(null, 'c', { sku: 'S' }), /who must be a string, an integer or bytes \(the user or principal\), not null/);
  assert.equal(db.inTransaction, false);
  await assert.rejects(placeOrder('a', 'c', { n: 1n }), TypeError);      // not JSON
  assert.throws(() => calls.tool({ kind: 'remote', name: 'x' }, () => 1), /kind/);
  assert.equal(one(db, 'SELECT count(*) FROM calls'), 0);
});

test('local: two processes at once take effect once', async (t) => {
  const { file, db } = setup(t);
  idem.calls(db);
  const script = `
    const Database = require('better-sqlite3'); const idem = require('sqlite-idem');
    const db = new Database(${JSON.stringify(file)}, { timeout: 10000 });
    const calls = idem.calls(db);
    const placeOrder = calls.tool({ name: 'place_order' }, (db, { sku }) => {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);   // hold the lock
      return { order: Number(db.prepare('INSERT INTO orders(sku) VALUES (?)').run(sku).lastInsertRowid) };
    });
    placeOrder('alice', 'c', { sku: 'S' }).then((r) => console.log(JSON.stringify(r)));`;
  const { spawn } = require('node:child_process');
  const run = () => new Promise((resolve) => {
    const p = spawn(process.execPath, ['-e', script], { env: process.env });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { out += d; });
    p.on('close', (code) => resolve([code, out.trim()]));
  });
  const both = await Promise.all([run(), run()]);
  assert.deepEqual(both, [[0, '{"order":1}'], [0, '{"order":1}']]);
  assert.equal(one(db, 'SELECT count(*) FROM orders'), 1);
});

test('external: claim commits first, header sent, a duplicate replays', async (t) => {
  const { file, db, calls } = setup(t);
  const tg = await target(t);
  const sent = [];
  const seen = [];
  const charge = calls.tool({ kind: 'external', name: 'charge' }, async ({ cents }, ctx) => {
    const other = new Database(file);
    idem.load(other);
    seen.push(one(other, 'SELECT status FROM calls'));
    other.close();
    sent.push(ctx.idempotencyKey);
    const r = await fetch(tg.url, {
      method: 'POST', headers: { [idem.HEADER]: ctx.idempotencyKey }, body: JSON.stringify({ cents }),
    });
    return r.json();
  });
  const first = await charge('alice', 'c', { cents: 500 });
  const again = await charge('alice', 'c', { cents: 500 });
  assert.deepEqual([first, again], [{ charge: 'ch_1', cents: 500 }, { charge: 'ch_1', cents: 500 }]);
  assert.deepEqual(seen, ['pending']);
  const key = charge.key('alice', 'c', { cents: 500 });
  assert.deepEqual(tg.keys, [`"${key}"`]);
  assert.equal(one(db, `SELECT idem_header('${key}')`), `${idem.HEADER}: "${key}"`);
  assert.deepEqual(db.prepare('SELECT status, kind FROM calls').get(), { status: 'done', kind: 'external' });
});

test('external: a timeout is Unknown and never retried', async (t) => {
  const { db, calls } = setup(t);
  const tg = await target(t);
  let answer;
  tg.hold = new Promise((resolve) => { answer = resolve; });    // no answer in time
  const sent = [];
  const charge = chargeTool(calls, tg, sent, 300);
  const e1 = await charge('bob', 'c', { cents: 990 }).catch((x) => x);
  answer();
  assert.ok(e1 instanceof idem.Unknown, String(e1));
  assert.match(String(e1.cause && e1.cause.name), /TimeoutError|AbortError/);
  const e2 = await charge('bob', 'c', { cents: 990 }).catch((x) => x);
  assert.ok(e2 instanceof idem.Unknown);
  assert.equal(e2.key, charge.key('bob', 'c', { cents: 990 }));
  assert.equal(e2.reply.status, 'unknown');
  assert.match(e2.reply.message, /may already have reached the target/);
  assert.equal(sent.length, 1);
  assert.equal(tg.arrivals, 1);
  assert.equal(one(db, 'SELECT status FROM calls'), 'unknown');
});

test('external: a pending duplicate is InProgress; wait() gets the result', async (t) => {
  const { calls } = setup(t);
  const tg = await target(t);
  let answer;
  tg.hold = new Promise((resolve) => { answer = resolve; });    // until the duplicate is told
  const sent = [];
  const charge = chargeTool(calls, tg, sent, 60000);
  const first = charge('carol', 'c', { cents: 7 });
  const key = charge.key('carol', 'c', { cents: 7 });
  const e = await charge('carol', 'c', { cents: 7 }).catch((x) => x);
  assert.ok(e instanceof idem.InProgress, String(e));
  assert.deepEqual([e.key, e.reply.status, e.replayed], [key, 'pending', true]);
  await assert.rejects(calls.wait(key, 20), idem.InProgress);
  setTimeout(answer, 100);
  assert.deepEqual(await calls.wait(key, 10000), { charge: 'ch_1', cents: 7 });
  assert.deepEqual(await first, { charge: 'ch_1', cents: 7 });
  assert.equal(tg.arrivals, 1);
  await assert.rejects(calls.wait('0'.repeat(32), 10), /no call/);
});

test('external: refused inside an open transaction', async (t) => {
  const { db, calls } = setup(t);
  let ran = false;
  const send = calls.tool({ kind: 'external', name: 'send' }, () => { ran = true; });
  db.exec('BEGIN');
  await assert.rejects(send('a', 'c', {}), /commit first/);
  db.exec('ROLLBACK');
  assert.equal(ran, false);
});

test('keyargs (array): other arguments, one call (args_mismatch=replay)', async (t) => {
  const { db, calls } = setup(t, 'calls', { args_mismatch: 'replay' });
  const runs = [];
  const placeOrder = calls.tool({ name: 'place_order', keyargs: ['sku', 'qty'] }, (db, { sku, qty, trace }) => {
    runs.push(trace);
    return { trace };
  });
  const a = await placeOrder('a', 'c', { sku: 'S', qty: 1, trace: 't1' });
  const b = await placeOrder('a', 'c', { sku: 'S', qty: 1, trace: 't2' });
  assert.deepEqual([a, b, runs], [{ trace: 't1' }, { trace: 't1' }, ['t1']]);
  const key = one(db, `SELECT idem_key('a', 'c', 'place_order', '{"qty":1,"sku":"S"}')`);
  assert.equal(placeOrder.key('a', 'c', { sku: 'S', qty: 1, trace: 't9' }), key);
  assert.deepEqual(db.prepare('SELECT key, args FROM calls').get(),
    { key, args: '{"qty":1,"sku":"S","trace":"t1"}' });
});

test('keyargs (function): external (args_mismatch=replay)', async (t) => {
  const { calls } = setup(t, 'calls', { args_mismatch: 'replay' });
  const runs = [];
  const send = calls.tool({ kind: 'external', name: 'send', keyargs: (a) => ({ to: a.to.toLowerCase() }) },
    async ({ to, text }) => { runs.push(text); return runs.length; });
  assert.equal(await send('a', 'c', { to: 'Bob', text: 'hi' }), 1);
  assert.equal(await send('a', 'c', { to: 'BOB', text: 'hi there' }), 1);
  assert.deepEqual(runs, ['hi']);
});

test('keyargs: a duplicate with other arguments is an error by default', async (t) => {
  const { db, calls } = setup(t, 'strict');
  const runs = [];
  const placeOrder = calls.tool({ name: 'place_order', keyargs: ['sku'] }, (db, { sku, note }) => {
    runs.push(note);
    return 1;
  });
  assert.equal(await placeOrder('a', 'c', { sku: 'S', note: 'first' }), 1);
  assert.equal(await placeOrder('a', 'c', { sku: 'S', note: 'first' }), 1);
  await assert.rejects(placeOrder('a', 'c', { sku: 'S', note: 'other' }), (e) => {
    assert.ok(e instanceof idem.ArgsMismatch, e);
    assert.equal(e.name, 'ArgsMismatch');
    assert.equal(e.key, placeOrder.key('a', 'c', { sku: 'S', note: 'x' }));
    assert.equal(e.tool, 'place_order');
    assert.equal(e.code, 'SQLITE_ERROR');                   // the database's, as it was
    assert.ok(e.cause instanceof Database.SqliteError);
    assert.match(e.message, /already used with other arguments/);
    return true;
  });
  assert.equal(db.inTransaction, false);
  assert.deepEqual(runs, ['first']);
  // External tools too.
  const send = calls.tool({ name: 'send', kind: 'external', keyargs: ['to'] }, async ({ to, text }) => text);
  await send('a', 'c', { to: 'x', text: 'one' });
  await assert.rejects(send('a', 'c', { to: 'x', text: 'two' }), idem.ArgsMismatch);
  assert.equal(db.inTransaction, false);
});

// ArgsMismatch is thrown on the extension's verdict, idem_refusal(message),
// never on the message's text: a stand-in idem_refusal that says NULL leaves
// the database's error as it is, whatever it says; one that says
// 'args_mismatch' makes it ArgsMismatch.
test('keyargs: ArgsMismatch is the extension\'s verdict, not the text', async (t) => {
  const { db, calls } = setup(t, 'strict');
  const placeOrder = calls.tool({ name: 'place_order', keyargs: ['sku'] }, (db, { sku, note }) => 1);
  await placeOrder('a', 'c', { sku: 'S', note: 'first' });
  assert.equal(one(db, `SELECT idem_refusal('idem: strict: key ''${placeOrder.key('a', 'c', { sku: 'S', note: 'x' })}'' ` +
    "was already used with other arguments')"), 'args_mismatch');
  const verdict = { r: null };
  db.function('idem_refusal', (message) => verdict.r);
  const calls2 = idem.calls(db, 'strict');
  const placeOrder2 = calls2.tool({ name: 'place_order', keyargs: ['sku'] }, (db, { sku, note }) => 1);
  await assert.rejects(placeOrder2('a', 'c', { sku: 'S', note: 'other' }), (e) => {
    assert.ok(!(e instanceof idem.ArgsMismatch), e);
    assert.match(e.message, /already used with other arguments/);
    return true;
  });
  verdict.r = 'args_mismatch';
  await assert.rejects(placeOrder2('a', 'c', { sku: 'S', note: 'other' }), idem.ArgsMismatch);
});
