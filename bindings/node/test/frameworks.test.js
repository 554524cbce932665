// SPDX-License-Identifier: MIT
'use strict';
// Tests of sqlite-idem/frameworks (agentTool), with node:test, without any
// framework: each test calls the execute function as a framework does, with
// the tool call's input and the framework's context arguments after it.
// The frameworks themselves drive it in bindings/node/examples/<framework>
// (make test-frameworks).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const Database = require('better-sqlite3');
const idem = require('sqlite-idem');
const { agentTool, CONTEXTS } = require('sqlite-idem/frameworks');

function setup(t, options = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-fw-'));
  const db = new Database(path.join(dir, 'app.db'), { timeout: 10000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE orders(id INTEGER PRIMARY KEY, sku, qty)');
  t.after(() => { db.close(); fs.rmSync(dir, { recursive: true, force: true }); });
  return { db, calls: idem.calls(db, 'calls', options) };
}

const one = (db, sql, ...args) => Object.values(db.prepare(sql).get(...args))[0];

// The Vercel AI SDK's second argument to execute, for one tool call.
const aiOptions = (toolCallId, user = 'alice', conversation = 'conv-1') =>
  ({ toolCallId, messages: [], experimental_context: { user, conversation } });

function orderTool(calls, runs, options = {}) {
  return agentTool(calls, { name: 'place_order', kind: 'local', context: 'ai-sdk', ...options },
    (db, { sku, qty }) => {
      runs.push(sku);
      if (sku === 'BAD') throw new Error('no such sku');
      const id = Number(db.prepare('INSERT INTO orders(sku, qty) VALUES (?, ?)').run(sku, qty).lastInsertRowid);
      return new idem.Result({ order: id, sku, qty }, id);
    });
}

// An HTTP target on 127.0.0.1 that waits delayMs, then answers; with
// timeOut set, the request in flight times out as soon as it has arrived.
async function target(t) {
  const tg = { arrivals: 0, delayMs: 0, timeOut: false, abort: null };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      tg.arrivals += 1;
      const n = tg.arrivals;
      if (tg.timeOut) tg.abort(new DOMException('the target did not answer in time', 'TimeoutError'));
      setTimeout(() => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ charge: `ch_${n}` }));
      }, tg.delayMs).unref();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  tg.url = `http://127.0.0.1:${server.address().port}/`;
  t.after(() => { server.closeAllConnections(); server.close(); });
  return tg;
}

function chargeTool(calls, tg, options = {}) {
  return agentTool(calls, { name: 'charge', kind: 'external', context: 'ai-sdk', ...options },
    async ({ cents }, { idempotencyKey }) => {
      if (cents < 0) throw new idem.NotSent('a negative amount is not sent');
      const timeout = new AbortController();
      tg.abort = (why) => timeout.abort(why);
      const r = await fetch(tg.url, { method: 'POST', headers: { [idem.HEADER]: idempotencyKey },
        body: JSON.stringify({ cents }), signal: timeout.signal });
      return r.json();
    });
}

test('agentTool: the first arrival and a repeat with a new tool-call id get one shape, the result beside the mark idempotent', async (t) => {
  const { db, calls } = setup(t);
  const runs = [];
  const execute = orderTool(calls, runs);
  const first = await execute({ sku: 'A1', qty: 2 }, aiOptions('call_1'));
  const again = await execute({ qty: 2, sku: 'A1' }, aiOptions('call_2'));
  const key = calls.key('alice', 'conv-1', 'place_order', { sku: 'A1', qty: 2 });
  assert.deepEqual(first, { status: 'done', idempotent: false, key, id: 1, result: { order: 1, sku: 'A1', qty: 2 } });
  assert.deepEqual(again, { ...first, idempotent: true });
  assert.deepEqual(runs, ['A1']);
  assert.equal(one(db, 'SELECT count(*) FROM orders'), 1);
  assert.equal(execute.key({ sku: 'A1', qty: 2 }, aiOptions('call_3')), key);
  assert.equal(execute.name, 'place_order');
  assert.equal(execute.tool.kind, 'local');
});

test('agentTool: who and conv are part of the key (another conversation, another user: runs again)', async (t) => {
  const { db, calls } = setup(t);
  const runs = [];
  const execute = orderTool(calls, runs);
  await execute({ sku: 'A1', qty: 2 }, aiOptions('c1', 'alice', 'conv-1'));
  const other = await execute({ sku: 'A1', qty: 2 }, aiOptions('c2', 'alice', 'conv-2'));
  const bob = await execute({ sku: 'A1', qty: 2 }, aiOptions('c3', 'bob', 'conv-1'));
  assert.deepEqual([other.result.order, bob.result.order, runs.length], [2, 3, 3]);
  assert.equal(one(db, 'SELECT count(DISTINCT who || conv) FROM calls'), 3);
});

test('agentTool: each context preset reads the user and the conversation where its framework keeps them', async (t) => {
  const { db, calls } = setup(t);
  const ctx = {
    'ai-sdk': [{ toolCallId: 'x', experimental_context: { user: 'u1', conversation: 'k1' } }],
    langchain: [{ configurable: { user_id: 'u2', thread_id: 'k2' }, toolCall: { id: 'x' } }],
    'openai-agents': [{ context: { user: 'u3', conversation: 'k3' } }, { toolCall: { callId: 'x' } }],
  };
  assert.deepEqual(Object.keys(CONTEXTS).sort(), Object.keys(ctx).sort());
  for (const [context, args] of Object.entries(ctx)) {
    const execute = agentTool(calls, { name: `order_${context}`, context }, (db, { sku }) => sku);
    assert.equal((await execute({ sku: context }, ...args)).result, context);
  }
  assert.deepEqual(db.prepare('SELECT who, conv FROM calls ORDER BY who').raw().all(),
    [['u1', 'k1'], ['u2', 'k2'], ['u3', 'k3']]);
});

test('agentTool: who and conv given as strings or functions override the preset', async (t) => {
  const { db, calls } = setup(t);
  const execute = agentTool(calls, { name: 'order', context: 'ai-sdk', who: 'service',
    conv: (options, extra) => `${options.experimental_context.conversation}/${extra}` }, (db, { sku }) => sku);
  await execute({ sku: 'S' }, aiOptions('c1'), 'x');
  assert.deepEqual(db.prepare('SELECT who, conv FROM calls').raw().get(), ['service', 'conv-1/x']);
});

test('agentTool: a run without a user or a conversation is an error that says where to give it; nothing is claimed', async (t) => {
  const { db, calls } = setup(t);
  const runs = [];
  const execute = orderTool(calls, runs);
  await assert.rejects(execute({ sku: 'A1', qty: 2 }, { toolCallId: 'c1' }),
    /tool place_order: who of this call is undefined, not a non-empty string; nothing was claimed; give it as generateText\(\{ \.\.\., experimental_context: \{ user, conversation \} \}\)/);
  await assert.rejects(execute({ sku: 'A1', qty: 2 }, aiOptions('c1', 'alice', '')), /conv of this call is ""/);
  const lc = agentTool(calls, { name: 'lc', context: 'langchain' }, (db, { sku }) => sku);
  await assert.rejects(lc({ sku: 'A' }, { configurable: { user_id: 'u' } }),
    /conv of this call is undefined.*configurable: \{ user_id, thread_id \}/);
  assert.deepEqual([runs, one(db, 'SELECT count(*) FROM calls')], [[], 0]);
});

test('agentTool: its options are checked when the tool is defined', (t) => {
  const { db, calls } = setup(t);
  const f = (db, { sku }) => sku;
  assert.throws(() => agentTool(db, { name: 'x', context: 'ai-sdk' }, f), /calls must be idem\.calls\(db, \.\.\.\)/);
  assert.throws(() => agentTool(calls, null, f), /options must be an object/);
  assert.throws(() => agentTool(calls, { name: 'x', context: 'vercel' }, f),
    /tool x: context must be one of 'ai-sdk', 'langchain', 'openai-agents', not "vercel"/);
  assert.throws(() => agentTool(calls, { name: 'x' }, f), /tool x: who must be a string or a function/);
  assert.throws(() => agentTool(calls, { name: 'x', who: 'u', conv: 7 }, f), /conv must be a string or a function/);
  assert.throws(() => agentTool(calls, { name: 'x', context: 'ai-sdk', waitMs: -1 }, f), /waitMs must be a number/);
  // calls.tool's own checks: a misspelt keyargs, an unknown option.
  assert.throws(() => agentTool(calls, { name: 'x', context: 'ai-sdk', keyargs: ['skew'] }, f), /keyargs names skew/);
  assert.throws(() => agentTool(calls, { name: 'x', context: 'ai-sdk', wait: 5 }, f), /no option "wait"/);
});

test('agentTool: a local tool that throws: the error goes to the framework, the call is released, a retry runs', async (t) => {
  const { db, calls } = setup(t);
  const runs = [];
  const execute = orderTool(calls, runs);
  await assert.rejects(execute({ sku: 'BAD', qty: 1 }, aiOptions('c1')), /no such sku/);
  await assert.rejects(execute({ sku: 'BAD', qty: 1 }, aiOptions('c2')), /no such sku/);
  assert.deepEqual([runs, one(db, 'SELECT count(*) FROM calls')], [['BAD', 'BAD'], 0]);
});

test('agentTool: a local result that JSON cannot hold: idem.Unstorable goes to the framework, the call is released', async (t) => {
  const { db, calls } = setup(t);
  const execute = agentTool(calls, { name: 'count', context: 'ai-sdk' }, (db, { n }) => BigInt(n));
  await assert.rejects(execute({ n: 1 }, aiOptions('c1')), idem.Unstorable);
  assert.equal(one(db, 'SELECT count(*) FROM calls'), 0);
});

test('agentTool: a kept local failure is answered as failed to a repeat', async (t) => {
  const { calls } = setup(t, { local_failure: 'keep' });
  const runs = [];
  const execute = orderTool(calls, runs);
  await assert.rejects(execute({ sku: 'BAD', qty: 1 }, aiOptions('c1')), /no such sku/);
  const again = await execute({ sku: 'BAD', qty: 1 }, aiOptions('c2'));
  assert.deepEqual([again.status, again.idempotent, again.key, runs],
    ['failed', true, execute.key({ sku: 'BAD', qty: 1 }, aiOptions('c3')), ['BAD']]);
});

test('agentTool: an external call that times out is answered unknown with the note, and never sent again', async (t) => {
  const { db, calls } = setup(t);
  const tg = await target(t);
  tg.timeOut = true;
  const execute = chargeTool(calls, tg);
  const first = await execute({ cents: 500 }, aiOptions('c1'));
  const again = await execute({ cents: 500 }, aiOptions('c2'));
  const note = /the request may already have reached the target system; the target's records decide the outcome; it is not retried/;
  assert.deepEqual([first.status, first.idempotent, again.status, again.idempotent, again.key],
    ['unknown', false, 'unknown', true, first.key]);
  assert.match(first.message, note);
  assert.match(again.message, note);
  assert.equal(tg.arrivals, 1);
  assert.equal(one(db, 'SELECT status FROM calls WHERE key = ?', first.key), 'unknown');
});

test('agentTool: a repeat of a call in progress is answered pending, or waits for its result with waitMs', async (t) => {
  const { calls } = setup(t);
  const tg = await target(t);
  tg.delayMs = 200;
  const execute = chargeTool(calls, tg);
  const [a, b] = await Promise.all([execute({ cents: 1 }, aiOptions('c1')), execute({ cents: 1 }, aiOptions('c2'))]);
  assert.deepEqual([a.result, a.idempotent], [{ charge: 'ch_1' }, false]);
  assert.deepEqual([b.status, b.idempotent, b.key], ['pending', true, execute.key({ cents: 1 }, aiOptions('c'))]);
  assert.match(b.message, /the call is in progress, or its process was interrupted; it is not executed again/);
  const waiting = chargeTool(calls, tg, { waitMs: 5000 });
  const [c, d] = await Promise.all([waiting({ cents: 2 }, aiOptions('c3')), waiting({ cents: 2 }, aiOptions('c4'))]);
  assert.deepEqual(c, { status: 'done', idempotent: false, key: waiting.key({ cents: 2 }, aiOptions('c')), id: null, result: { charge: 'ch_2' } });
  assert.deepEqual(d, { ...c, idempotent: true });
  assert.equal(tg.arrivals, 2);
});

test('agentTool: NotSent goes to the framework and releases the call: a retry runs', async (t) => {
  const { db, calls } = setup(t);
  const tg = await target(t);
  const execute = chargeTool(calls, tg);
  await assert.rejects(execute({ cents: -1 }, aiOptions('c1')), idem.NotSent);
  assert.equal(one(db, 'SELECT count(*) FROM calls'), 0);
  await assert.rejects(execute({ cents: -1 }, aiOptions('c2')), /a negative amount is not sent/);
  assert.equal(tg.arrivals, 0);
});

test('agentTool: import from ESM', () => {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `
    import { agentTool, CONTEXTS } from 'sqlite-idem/frameworks';
    import fw from 'sqlite-idem/frameworks';
    console.log(typeof agentTool, Object.keys(CONTEXTS).length, fw.agentTool === agentTool);`],
  { encoding: 'utf8', cwd: path.dirname(require.resolve('sqlite-idem/package.json')) });
  assert.equal(r.stderr, '');
  assert.equal(r.stdout, 'function 3 true\n');
});

test('agentTool: the TypeScript declarations type-check a framework tool', (t) => {
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-fw-ts-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const src = path.join(dir, 'tools.ts');
  fs.writeFileSync(src, `
import Database = require('better-sqlite3');
import * as idem from 'sqlite-idem';
import { agentTool, Answer } from 'sqlite-idem/frameworks';
const calls = idem.calls(new Database(':memory:'));
const order = agentTool(calls, { name: 'order', kind: 'local', context: 'ai-sdk', keyargs: ['sku'] },
  (db, args: { sku: string }) => ({ order: 1 }));
const charge = agentTool(calls, { name: 'charge', kind: 'external', who: 'u', conv: (rc: { id: string }) => rc.id, waitMs: 10 },
  async (args: { cents: number }, { idempotencyKey }) => ({ key: idempotencyKey }));
async function main(): Promise<string> {
  const r: Answer<{ order: number }> = await order({ sku: 'A' }, { toolCallId: 'x' });
  const k: string = charge.key({ cents: 1 }, { id: 'c' });
  const replayed: boolean = r.idempotent;
  return (r.status === 'done' ? String(r.result.order) + r.id : r.message) + k + charge.tool.kind + replayed;
}
// @ts-expect-error: no such context
agentTool(calls, { name: 'x', context: 'vercel' }, (db, args: { a: number }) => 1);
main();
`);
  const paths = (process.env.NODE_PATH || '').split(path.delimiter).filter(Boolean);
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--esModuleInterop',
    '--module', 'commonjs', '--target', 'es2022', '--types', 'node',
    '--typeRoots', paths.map((p) => path.join(p, '@types')).join(','),
    '--baseUrl', paths[0] || '.', src], { encoding: 'utf8' });
  assert.equal(r.stdout + r.stderr, '');
  assert.equal(r.status, 0);
});

test('agentTool: the framework\'s abortSignal, toolCallId and messages reach the tool, beside its arguments; not the key', async (t) => {
  const { calls } = setup(t);
  const seen = [];
  const signal = new AbortController().signal;
  const local = agentTool(calls, { name: 'note', kind: 'local', context: 'ai-sdk' },
    (db, { text }, extra) => { seen.push(extra); return text; });
  const messages = [{ role: 'user', content: 'hi' }];
  const first = await local({ text: 'a' }, { ...aiOptions('call_1'), abortSignal: signal, messages });
  await local({ text: 'a' }, aiOptions('call_2'));              // a replay: the tool does not run
  assert.equal(seen.length, 1);
  assert.equal(seen[0].abortSignal, signal);
  assert.equal(seen[0].messages, messages);
  assert.deepEqual([seen[0].toolCallId, seen[0].key], ['call_1', first.key]);
  // External: beside idempotencyKey and key; each preset where its framework keeps them.
  const got = {};
  const ctx = {
    'ai-sdk': [{ toolCallId: 't1', abortSignal: signal, messages, experimental_context: { user: 'u', conversation: 'k' } }],
    langchain: [{ configurable: { user_id: 'u', thread_id: 'k' }, toolCall: { id: 't2' }, signal }],
    'openai-agents': [{ context: { user: 'u', conversation: 'k' } }, { toolCall: { callId: 't3' }, signal }],
  };
  for (const [context, args] of Object.entries(ctx)) {
    const send = agentTool(calls, { name: `send_${context}`, kind: 'external', context },
      async ({ to }, extra) => { got[context] = extra; return to; });
    await send({ to: 'bob' }, ...args);
    const { idempotencyKey, key, ...rest } = got[context];
    assert.equal(idempotencyKey, `"${key}"`);
    assert.equal(rest.abortSignal, signal, context);
  }
  assert.deepEqual(Object.values(got).map((e) => e.toolCallId), ['t1', 't2', 't3']);
  assert.equal(got['ai-sdk'].messages, messages);
  assert.equal('messages' in got.langchain, false);
  // A tool-call id of the framework's cannot stand for the key.
  const spoof = agentTool(calls, { name: 'spoof', kind: 'external', context: 'ai-sdk',
    extra: () => ({ key: 'x', idempotencyKey: 'y', toolCallId: 'z' }) }, async (args, extra) => extra);
  const out = await spoof({}, aiOptions('c'));
  assert.equal(out.result.key, out.key);
  assert.equal(out.result.toolCallId, 'z');
  assert.throws(() => agentTool(calls, { name: 'x', context: 'ai-sdk', extra: 1 }, (db, a) => a),
    /tool x: extra must be a function of the framework's context, not/);
  const bad = agentTool(calls, { name: 'y', context: 'ai-sdk', extra: () => 'no' }, (db, a) => a);
  await assert.rejects(bad({}, aiOptions('c')), /tool y: extra must return an object, not "no"; nothing was claimed/);
});

test('agentTool: a call with an argument the tool does not take, or without one it needs, is refused; nothing is claimed', async (t) => {
  const { db, calls } = setup(t);
  const runs = [];
  const execute = orderTool(calls, runs);
  await assert.rejects(execute({ txt: 'a' }, aiOptions('c1')),
    /^TypeError: idem: place_order\(who, conv, args\): args.txt is not an argument of place_order \(it takes sku, qty\); nothing was claimed$/);
  await assert.rejects(execute({ sku: 'A' }, aiOptions('c2')),
    /^TypeError: idem: place_order\(who, conv, args\): args.qty is missing \(place_order requires sku, qty\); nothing was claimed$/);
  assert.deepEqual([runs, one(db, 'SELECT count(*) FROM calls')], [[], 0]);
});

