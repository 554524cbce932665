// SPDX-License-Identifier: MIT
'use strict';
// The tests of a framework example, with node:test:
//
//   require('../harness/suite.js')(__dirname);     (an example's shop.test.js)
//
// Each test drives the example (dir/shop.js) with its framework's test
// model (dir/model.js) playing a Script of turns, through the framework's
// own loop, and counts the effects in SQLite (order rows) and at the HTTP
// target (requests that arrived, per Idempotency-Key).  The runs that are
// killed, or that run two at once, are processes of their own
// (harness/child.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { converse } = require('./script.js');
const { startTarget } = require('./target.js');

const CHILD = path.join(__dirname, 'child.js');
const PENDING = /^the call is in progress, or its process was interrupted; it is not executed again$/;
const UNKNOWN = /^the request may already have reached the target system; the target's records decide the outcome; it is not retried\./;

const call = (name, args) => ({ name, args });

module.exports = function suite(dir) {
  const framework = path.basename(dir);
  const shop = require(path.join(dir, 'shop.js'));
  const model = require(path.join(dir, 'model.js'));
  let target, tmp;
  const children = [];

  test.before(async () => {
    target = await startTarget();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), `idem-${framework}-`));
  });
  test.after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await target.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  // A database of its own for each test, created before any run.
  const fresh = (name) => {
    const file = path.join(tmp, `${name}.db`);
    shop.open(file, {}).close();
    return file;
  };
  const run = (file, turns, options) => converse(shop, model, {
    file, targetUrl: target.url, timeoutMs: 5000, user: 'alice', turns, ...options,
  });
  // A query on the database, on a connection of its own.
  const query = (file, fn) => {
    const s = shop.open(file, {});
    try { return fn(s); } finally { s.close(); }
  };
  const orders = (file) => query(file, (s) => s.db.prepare('SELECT count(*) AS n FROM orders').get().n);
  const keyOf = (file, user, conv, tool, args) => query(file, (s) => s.calls.key(user, conv, tool, args));
  const status = (file, key) => query(file, (s) => s.db.prepare(
    'SELECT status FROM calls WHERE key = ? AND member = 0').get(key).status);
  // What the model was handed for a tool at a turn.
  const handed = (turns, i, name) => {
    const r = turns[i].seen.find((s) => s.name === name);
    assert.ok(r, `turn ${i}: the model was handed no result of ${name}: ${JSON.stringify(turns[i].seen)}`);
    return r.output;
  };

  // A run in a process of its own (harness/child.js): its JSON events,
  // until(predicate) resolving to the first event that matches, and exit.
  function start(env) {
    const child = spawn(process.execPath, [CHILD, dir], {
      env: { ...process.env, TARGET_URL: target.url, IDEM_USER: 'alice', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(child);                  // killed at the end if a test left it
    const events = [];
    let waiters = [];
    let stderr = '';
    child.stderr.on('data', (c) => { stderr += c; });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      events.push(JSON.parse(line));
      waiters = waiters.filter((w) => !w());
    });
    // 'close', not 'exit': its output has been read to the end by then.
    let closed = false;
    const exit = new Promise((resolve) => child.on('close', (code, signal) => {
      closed = true;
      waiters.forEach((w) => w(true));
      resolve({ code, signal });
    }));
    const until = (pred) => new Promise((resolve, reject) => {
      const w = (exited) => {
        const e = events.find(pred);
        if (e) resolve(e);
        else if (exited) reject(new Error(`the run ended without the event awaited; stderr: ${stderr}`));
        return Boolean(e) || exited;
      };
      if (!w(closed)) waiters.push(w);
    });
    return { child, events, until, exit, stderr: () => stderr };
  }

  test(`${framework}: a call repeated in a later step takes effect once; the repeat is handed the first result, in the same shape, marked idempotent`, { timeout: 60000 }, async () => {
    const file = fresh('repeat');
    const before = target.arrivals;
    const turns = await run(file, [
      [call('place_order', { sku: 'A0001', qty: 2 })],
      [call('place_order', { qty: 2, sku: 'A0001' })],
      [call('charge_card', { cents: 1990 })],
      [call('charge_card', { cents: 1990 })],
      'Ordered and paid.',
    ], { conversation: 'conv-repeat' });
    const orderKey = keyOf(file, 'alice', 'conv-repeat', 'place_order', { sku: 'A0001', qty: 2 });
    const chargeKey = keyOf(file, 'alice', 'conv-repeat', 'charge_card', { cents: 1990 });
    const order = handed(turns, 1, 'place_order');
    const charge = handed(turns, 3, 'charge_card');
    assert.deepEqual(order, { status: 'done', idempotent: false, key: orderKey, id: 1, result: { order: 1, sku: 'A0001', qty: 2 } });
    assert.deepEqual(handed(turns, 2, 'place_order'), { ...order, idempotent: true });
    assert.deepEqual([charge.status, charge.idempotent, charge.key, charge.id], ['done', false, chargeKey, null]);
    assert.deepEqual([Object.keys(charge.result).sort(), charge.result.cents], [['cents', 'charge'], 1990]);
    assert.deepEqual(handed(turns, 4, 'charge_card'), { ...charge, idempotent: true });
    // The model gave the repeat a new tool-call id: the key does not hold it.
    assert.notEqual(turns[0].calls[0].id, turns[1].calls[0].id);
    assert.notEqual(turns[2].calls[0].id, turns[3].calls[0].id);
    assert.equal(turns.length, 5);
    assert.equal(orders(file), 1);
    assert.deepEqual([target.arrivals - before, target.byKey[`"${chargeKey}"`]], [1, 1]);
  });

  test(`${framework}: the key is the user, the conversation, the tool and the arguments: another conversation or user orders again`, { timeout: 60000 }, async () => {
    const file = fresh('parties');
    const turns = [[call('place_order', { sku: 'B0001', qty: 1 })], 'Ordered.'];
    const got = [];
    for (const [user, conversation] of [['alice', 'conv-1'], ['alice', 'conv-2'], ['bob', 'conv-1'], ['alice', 'conv-1']]) {
      got.push(handed(await run(file, turns, { user, conversation }), 1, 'place_order'));
    }
    assert.deepEqual(got.slice(0, 3).map((r) => [r.result.order, r.idempotent]), [[1, false], [2, false], [3, false]]);
    assert.deepEqual([got[3].idempotent, got[3].result], [true, got[0].result]);
    assert.equal(orders(file), 3);
  });

  test(`${framework}: a run killed after its tools' effects, before the model's next turn, and run again: one effect each; the replays are handed to the model`, { timeout: 60000 }, async () => {
    const file = fresh('killed');
    const script = [[call('place_order', { sku: 'K0001', qty: 3 }), call('charge_card', { cents: 700 })], 'Done.'];
    const chargeKey = keyOf(file, 'alice', 'conv-killed', 'charge_card', { cents: 700 });
    const orderKey = keyOf(file, 'alice', 'conv-killed', 'place_order', { sku: 'K0001', qty: 3 });
    const r = start({ IDEM_DB: file, IDEM_CONV: 'conv-killed', SCRIPT: JSON.stringify(script), HOLD_AT: '1' });
    await r.until((e) => e.event === 'held');
    // Both effects happened and were recorded; the model has not seen them.
    assert.deepEqual([orders(file), target.byKey[`"${chargeKey}"`]], [1, 1]);
    assert.deepEqual([status(file, orderKey), status(file, chargeKey)], ['done', 'done']);
    r.child.kill('SIGKILL');
    assert.equal((await r.exit).signal, 'SIGKILL');
    const turns = await run(file, script, { conversation: 'conv-killed' });
    const recorded = query(file, (s) => s.db.prepare(
      'SELECT key, result FROM calls WHERE member = 0').all().map((c) => [c.key, JSON.parse(c.result)]));
    const want = Object.fromEntries(recorded);
    assert.deepEqual(handed(turns, 1, 'place_order'), { status: 'done', idempotent: true, key: orderKey, id: 1, result: want[orderKey] });
    assert.deepEqual(handed(turns, 1, 'charge_card'), { status: 'done', idempotent: true, key: chargeKey, id: null, result: want[chargeKey] });
    assert.deepEqual(want[orderKey], { order: 1, sku: 'K0001', qty: 3 });
    assert.deepEqual([orders(file), target.byKey[`"${chargeKey}"`]], [1, 1]);
  });

  test(`${framework}: a run killed after its request arrived, before its record: the run again is told that the call is pending and sends nothing; reconciled, it is replayed`, { timeout: 60000 }, async () => {
    const file = fresh('arrived');
    const script = [[call('charge_card', { cents: 800 })], 'Done.'];
    const chargeKey = keyOf(file, 'alice', 'conv-arrived', 'charge_card', { cents: 800 });
    const r = start({ IDEM_DB: file, IDEM_CONV: 'conv-arrived', SCRIPT: JSON.stringify(script) });
    target.delayMs = 200;
    target.onArrival = () => { target.onArrival = null; r.child.kill('SIGKILL'); };
    try {
      assert.equal((await r.exit).signal, 'SIGKILL');
    } finally {
      target.delayMs = 0;
      target.onArrival = null;
    }
    assert.deepEqual([target.byKey[`"${chargeKey}"`], status(file, chargeKey)], [1, 'pending']);
    const turns = await run(file, script, { conversation: 'conv-arrived' });
    const pending = handed(turns, 1, 'charge_card');
    assert.deepEqual([pending.status, pending.idempotent, pending.key], ['pending', true, chargeKey]);
    assert.match(pending.message, PENDING);
    assert.equal(target.byKey[`"${chargeKey}"`], 1);
    // An operator reads the target's records and settles the call.
    const charge = { charge: 'ch_from_the_target', cents: 800 };
    query(file, (s) => s.calls.reconcile(chargeKey, 'arrived', { result: charge }));
    const again = await run(file, script, { conversation: 'conv-arrived' });
    assert.deepEqual(handed(again, 1, 'charge_card'), { status: 'done', idempotent: true, key: chargeKey, id: null, result: charge });
    assert.equal(target.byKey[`"${chargeKey}"`], 1);
  });

  // Two processes run one conversation at once, started together.
  async function twice(name, env) {
    const file = fresh(name);
    const script = [[call('place_order', { sku: 'T0001', qty: 1 }), call('charge_card', { cents: 900 })], 'Done.'];
    const chargeKey = keyOf(file, 'alice', `conv-${name}`, 'charge_card', { cents: 900 });
    const runs = [0, 1].map(() => start({ IDEM_DB: file, IDEM_CONV: `conv-${name}`, SCRIPT: JSON.stringify(script), WAIT_FOR_GO: '1', ...env }));
    await Promise.all(runs.map((r) => r.until((e) => e.event === 'ready')));
    target.delayMs = 400;
    let ends;
    try {
      runs.forEach((r) => r.child.stdin.write('go\n'));
      ends = await Promise.all(runs.map((r) => r.until((e) => e.event === 'end')));
    } finally {
      target.delayMs = 0;
    }
    assert.deepEqual([orders(file), target.byKey[`"${chargeKey}"`]], [1, 1]);
    // For each tool: one run got the tool's result (idempotent: false), the
    // other an answer marked idempotent.
    return ['place_order', 'charge_card'].map((tool) => {
      const answers = ends.map((e) => handed(e.turns, 1, tool));
      const marked = answers.filter((a) => a.idempotent === true);
      assert.equal(marked.length, 1, `${tool}: ${JSON.stringify(answers)}`);
      const first = answers.find((a) => a.idempotent !== true);
      assert.deepEqual([first.status, first.idempotent], ['done', false]);
      return { first: first.result, other: marked[0] };
    });
  }

  test(`${framework}: two runs of one conversation at once: one effect each; the other run gets the result, or is told that the call is in progress`, { timeout: 60000 }, async (t) => {
    const [order, charge] = await twice('twice', {});
    t.diagnostic(`charge_card: the other run was handed ${charge.other.status}`);
    assert.deepEqual([order.other.status, order.other.result], ['done', order.first]);   // a local call is never seen pending
    if (charge.other.status === 'pending') assert.match(charge.other.message, PENDING);
    else assert.deepEqual([charge.other.status, charge.other.result], ['done', charge.first]);
  });

  test(`${framework}: two runs of one conversation at once, the tools waiting up to 20 s (the examples' default) for a call in progress: the other run gets the result`, { timeout: 60000 }, async () => {
    const [order, charge] = await twice('twice-wait', { WAIT_MS: '20000' });
    assert.deepEqual([order.other.status, order.other.result], ['done', order.first]);
    assert.deepEqual([charge.other.status, charge.other.result], ['done', charge.first]);
  });

  test(`${framework}: an external call whose target times out is unknown: the model is handed the note, and it is never sent again`, { timeout: 60000 }, async () => {
    const file = fresh('timeout');
    const chargeKey = keyOf(file, 'alice', 'conv-timeout', 'charge_card', { cents: 990 });
    target.delayMs = 30000;                 // it answers long after the charge gave up
    let turns;
    try {
      turns = await run(file, [
        [call('charge_card', { cents: 990 })],
        [call('charge_card', { cents: 990 })],
        'I could not confirm the payment.',
      ], { conversation: 'conv-timeout', timeoutMs: 2000 });
    } finally {
      target.delayMs = 0;
    }
    const first = handed(turns, 1, 'charge_card');
    const again = handed(turns, 2, 'charge_card');
    assert.deepEqual([first.status, first.idempotent, first.key], ['unknown', false, chargeKey]);
    assert.deepEqual([again.status, again.idempotent, again.key], ['unknown', true, chargeKey]);
    assert.match(first.message, UNKNOWN);
    assert.equal(again.message, first.message);
    assert.deepEqual([target.byKey[`"${chargeKey}"`], status(file, chargeKey)], [1, 'unknown']);
  });
};
