// SPDX-License-Identifier: MIT
'use strict';
// A target that honours the key (doc/contract.md §14): a tool declared
// honoursKey: true is sent again, with the same key, when its outcome is
// unknown, and the call ends done with one effect at the target.  The
// target is the harness's (examples/harness/target.js), which honours
// Idempotency-Key and counts what arrives; these tests count its effects
// under lost answers, a sender SIGKILLed after its request arrived, and
// concurrent retries (connections, processes).  Without the declaration
// nothing changes: unknown holds.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');
const idem = require('sqlite-idem');
const { startTarget } = require('../examples/harness/target.js');

function setup(t, options = { resend_after: '0.05 seconds' }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-node-'));
  const file = path.join(dir, 'app.db');
  const open = () => {
    const db = new Database(file, { timeout: 5000 });
    db.pragma('synchronous = FULL');
    t.after(() => db.close());
    return db;
  };
  const db = open();
  db.pragma('journal_mode = WAL');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { file, db, open, calls: idem.calls(db, 'calls', options) };
}

async function target(t) {
  const tg = await startTarget();
  t.after(() => tg.close());
  return tg;
}

// A charge tool, as a user writes it: the key goes in the header.
const chargeTool = (calls, tg, honoursKey = true, timeoutMs = 2000) =>
  calls.tool({ kind: 'external', name: 'charge', honoursKey }, async ({ cents }, { idempotencyKey }) => {
    const r = await fetch(tg.url, {
      method: 'POST', body: JSON.stringify({ cents }), signal: AbortSignal.timeout(timeoutMs),
      headers: { 'content-type': 'application/json', [idem.HEADER]: idempotencyKey },
    });
    return r.json();
  });

const status = (db, key) => db.prepare(
  'SELECT status, sends, honours_key FROM calls WHERE key = ? AND member = 0').get(key);
const caught = (p) => p.then((v) => assert.fail(`resolved to ${JSON.stringify(v)}`), (e) => e);

test('lost answers are resent with the same key: one charge, done', async (t) => {
  const { db, calls } = setup(t);
  const tg = await target(t);
  tg.lose = 2;
  const charge = chargeTool(calls, tg);
  const out = await charge.run('ann', 'c1', { cents: 500 });
  assert.deepEqual([out.result.cents, out.replayed, out.sends], [500, false, 3]);
  assert.equal(tg.effects, 1);
  assert.equal(tg.byKey[`"${out.key}"`], 3);
  assert.deepEqual({ ...status(db, out.key) }, { status: 'done', sends: 3, honours_key: 1 });
  const again = await charge.run('ann', 'c1', { cents: 500 });
  assert.deepEqual([again.replayed, again.sends], [true, 3]);
  assert.equal(calls.reply(out.key).sends, 3);
  assert.equal(tg.effects, 1);
});

test('without honoursKey, unknown holds: never sent again', async (t) => {
  const { db, calls } = setup(t);
  const tg = await target(t);
  tg.lose = 1;
  const charge = chargeTool(calls, tg, false);
  const e = await caught(charge.run('ann', 'c2', { cents: 1 }));
  assert.ok(e instanceof idem.Unknown, String(e));
  assert.equal(e.reply.sends, 1);
  const e2 = await caught(charge.run('ann', 'c2', { cents: 1 }));
  assert.ok(e2 instanceof idem.Unknown && e2.replayed);
  assert.equal(tg.byKey[`"${e.key}"`], 1);
  assert.deepEqual({ ...status(db, e.key) }, { status: 'unknown', sends: 1, honours_key: 0 });
});

test('bounded: max_sends sends, then unknown holds', async (t) => {
  const { calls } = setup(t, { max_sends: '3', resend_after: '0.05 seconds' });
  const tg = await target(t);
  tg.lose = 10;
  const charge = chargeTool(calls, tg);
  const e = await caught(charge.run('ann', 'c3', { cents: 2 }));
  assert.ok(e instanceof idem.Unknown && !e.replayed, String(e));
  assert.equal(e.reply.sends, 3);
  assert.equal(tg.byKey[`"${e.key}"`], 3);
  assert.equal(tg.effects, 1);
  await caught(charge.run('ann', 'c3', { cents: 2 }));
  assert.equal(tg.byKey[`"${e.key}"`], 3);
});

test('resendWaitMs: a resend beyond it is left to a later retry', async (t) => {
  const { calls } = setup(t);
  const tg = await target(t);
  tg.lose = 1;
  const charge = chargeTool(calls, tg);
  calls.resendWaitMs = 0;
  const e = await caught(charge.run('ann', 'c4', { cents: 3 }));
  assert.equal(e.reply.sends, 1);
  calls.resendWaitMs = 5000;
  const out = await charge.run('ann', 'c4', { cents: 3 });
  assert.deepEqual([out.replayed, out.sends], [false, 2]);
  assert.equal(tg.effects, 1);
});

test('honoursKey: true is for external tools, and a boolean', (t) => {
  const { calls } = setup(t);
  assert.throws(() => calls.tool({ kind: 'local', name: 'p', honoursKey: true }, () => 1),
    /honoursKey: true is for external tools/);
  assert.throws(() => calls.tool({ kind: 'external', name: 'p', honoursKey: 'yes' }, () => 1),
    /honoursKey is true or false/);
  assert.throws(() => idem.calls(calls.db, 't2', { max_sends: '0' }),
    /^TypeError: idem: t2: bad value '0' for max_sends; use a whole number from 1 to 100/);
});

// A sender in a process of its own: it claims and sends; the test kills it.
const SENDER = `
const Database = require('better-sqlite3');
const idem = require('sqlite-idem');
const [file, url, conv, cents, stale] = process.argv.slice(1);
const db = new Database(file, { timeout: 10000 });
db.pragma('synchronous = FULL');
const calls = idem.calls(db, 'calls', stale ? { stale_after: stale, resend_after: '0.05 seconds' }
  : { resend_after: '0.05 seconds' });
const charge = calls.tool({ kind: 'external', name: 'charge', honoursKey: true },
  async ({ cents }, { idempotencyKey }) => (await fetch(url, { method: 'POST',
    body: JSON.stringify({ cents }), headers: { [idem.HEADER]: idempotencyKey } })).json());
charge.run('ann', conv, { cents: Number(cents) }).then(
  (o) => console.log(JSON.stringify({ replayed: o.replayed, sends: o.sends })),
  (e) => console.log(JSON.stringify({ error: e.constructor.name })));
`;
const sender = (file, url, conv, cents, stale = '') =>
  spawn(process.execPath, ['-e', SENDER, file, url, conv, String(cents), stale],
    { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });

test('a sender killed after its request arrived: the retry resends once stale', async (t) => {
  const { db, file, calls } = setup(t, { stale_after: '0.5 seconds', resend_after: '0.05 seconds' });
  const tg = await target(t);
  const child = sender(file, tg.url, 'c-kill', 42, '0.5 seconds');
  const died = new Promise((resolve) => child.on('exit', (code, sig) => resolve(sig)));
  tg.onArrival = () => { tg.onArrival = null; child.kill('SIGKILL'); };
  assert.equal(await died, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 50));      // the request was acted on
  assert.equal(tg.effects, 1);
  const charge = chargeTool(calls, tg);
  const key = charge.key('ann', 'c-kill', { cents: 42 });
  assert.deepEqual({ ...status(db, key) }, { status: 'pending', sends: 1, honours_key: 1 });
  const out = await charge.run('ann', 'c-kill', { cents: 42 });
  assert.deepEqual([out.replayed, out.sends, out.result.charge], [false, 2, 'ch_1']);
  assert.equal(tg.effects, 1);
  assert.equal(tg.byKey[`"${key}"`], 2);
});

test('concurrent retries, connections and processes: one resend, one charge', async (t) => {
  const { db, file, open, calls } = setup(t);
  const tg = await target(t);
  tg.lose = 1;
  calls.resendWaitMs = 0;
  const e = await caught(chargeTool(calls, tg).run('ann', 'c5', { cents: 8 }));
  await new Promise((r) => setTimeout(r, 100));    // resend_at passed
  const procs = [0, 1, 2].map(() => sender(file, tg.url, 'c5', 8));
  const outs = procs.map((p) => new Promise((resolve) => {
    let s = '';
    p.stdout.on('data', (d) => { s += d; });
    p.on('exit', () => resolve(JSON.parse(s)));
  }));
  const local = [0, 1, 2].map(() => chargeTool(idem.calls(open(), 'calls'), tg)
    .run('ann', 'c5', { cents: 8 }).then((o) => ({ replayed: o.replayed, sends: o.sends }),
      (err) => ({ error: err.constructor.name })));
  const all = await Promise.all([...outs, ...local]);
  assert.equal(all.filter((r) => r.replayed === false).length, 1, JSON.stringify(all));
  for (const r of all) assert.ok(r.replayed !== undefined || r.error === 'InProgress', JSON.stringify(r));
  assert.equal(tg.effects, 1);
  assert.equal(tg.byKey[`"${e.key}"`], 2);
  assert.deepEqual({ ...status(db, e.key) }, { status: 'done', sends: 2, honours_key: 1 });
});

// The owner's lease (doc/contract.md §11): while an external request is
// out, its call is touched at the table's heartbeat (the extension's, a
// third of stale_after), so a request that outlasts stale_after keeps its
// call not stale and no other sender takes it over; once the request has
// settled (returned or thrown) the heartbeat stops: a row made pending
// again under the same owner is touched no more.  Margins: a beat every
// 0.67 s against 2 s.
for (const how of ['returns', 'throws']) {
  test(`the heartbeat keeps a slow request's call while it is out, and stops once it ${how}`, async (t) => {
    const { db, open, calls } = setup(t, { stale_after: '2 seconds', honours_key: 'yes' });
    calls.resendWaitMs = 0;                        // unknown stays unknown here
    const other = open();
    idem.load(other);
    let release;
    const gate = new Promise((resolve) => { release = resolve; });
    const slow = calls.tool({ kind: 'external', name: 'slow' }, async () => {
      await gate;
      if (how === 'throws') throw new Error('no answer');
      return { ok: true };
    });
    const out = slow('w', 'c', {}).then((v) => v, (e) => e);
    const key = calls.key('w', 'c', 'slow', {});
    for (let i = 1; i <= 3; i++) {                 // out for 3 s
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(db.prepare('SELECT stale FROM calls WHERE key = ? AND member = 0').get(key).stale, 0,
        `stale after ${i} s out`);
      assert.throws(() => other.prepare("UPDATE calls SET reconcile = 'resend', owner = 'thief' " +
        'WHERE key = ? AND member = 0').run(key), /is pending and not stale/);
    }
    release();
    const v = await out;
    if (how === 'throws') assert.ok(v instanceof idem.Unknown, String(v));
    else assert.deepEqual(v, { ok: true });
    const old = '2000-01-01 00:00:00.000';
    other.unsafeMode(true);                        // a shadow table, for the test
    other.prepare("UPDATE calls_claim SET status = 'pending', updated = ? WHERE member = 0").run(old);
    await new Promise((r) => setTimeout(r, 2500));  // nearly four beats
    assert.equal(db.prepare('SELECT updated FROM calls WHERE key = ? AND member = 0').get(key).updated, old);
  });
}
