// SPDX-License-Identifier: MIT
'use strict';
// The MCP server example, driven by the SDK's own client over stdio.
//
//   node --test mcp-server.test.js      (after npm install in this folder)
//
// The target is a real HTTP server on 127.0.0.1 that honours
// Idempotency-Key and counts what arrives.  The database is in a temporary
// directory; each client starts its own server process on that file.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');
const idem = require('sqlite-idem');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const SERVER = path.join(__dirname, 'mcp-server.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-mcp-'));
const DB = path.join(dir, 'orders.db');
// The target answers after delayMs, and not before target.hold (a
// Promise, when a test holds its answers) has resolved.
const target = { arrivals: {}, delayMs: 0, hold: null };
let server;
const clients = [];

test.before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const key = req.headers['idempotency-key'];
      target.arrivals[key] = (target.arrivals[key] || 0) + 1;
      const n = Object.keys(target.arrivals).length;
      Promise.resolve(target.hold).then(() => setTimeout(() => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ charge: `ch_${n}`, cents: JSON.parse(body).cents }));
      }, target.delayMs));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
});

test.after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  server.closeAllConnections();
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function client(env = {}) {
  const c = new Client({ name: 'idem-test', version: '1.0.0' });
  await c.connect(new StdioClientTransport({
    command: process.execPath,
    args: [SERVER],
    env: {
      PATH: process.env.PATH,
      NODE_PATH: process.env.NODE_PATH || '',
      IDEM_DB: DB,
      TARGET_URL: `http://127.0.0.1:${server.address().port}/charges`,
      ...env,
    },
    stderr: 'inherit',
  }));
  clients.push(c);
  return c;
}

// An answer: isError and the JSON of its text, which its structuredContent
// repeats.
// One server process with the default environment, shared by the tests
// that need nothing else (each process costs a second or more to start).
let plain;
const plainClient = async () => plain || (plain = await client());

// Every answer has the shape of agentTool's (sqlite-idem/frameworks), as
// the tools of every framework in every language: a done call
// {status, idempotent, key, id, result}, any other {status, idempotent,
// key, message}, in that order.
const DONE = ['status', 'idempotent', 'key', 'id', 'result'];
const OTHER = ['status', 'idempotent', 'key', 'message'];

async function call(c, name, args) {
  const r = await c.callTool({ name, arguments: args });
  const body = JSON.parse(r.content[0].text);
  assert.deepEqual(r.structuredContent, body);
  assert.deepEqual(Object.keys(body), body.status === 'done' ? DONE : OTHER, r.content[0].text);
  assert.equal(typeof body.idempotent, 'boolean', r.content[0].text);
  return { isError: Boolean(r.isError), body };
}

function count(sql) {
  const db = new Database(DB, { readonly: true });
  idem.load(db);
  try {
    return Object.values(db.prepare(sql).get())[0];
  } finally {
    db.close();
  }
}

const arrivals = () => Object.values(target.arrivals).reduce((a, b) => a + b, 0);

test('the server lists its two tools', async () => {
  const c = await plainClient();
  const { tools } = await c.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['charge_card', 'place_order']);
});

test('the same place_order twice: one order, the same result', async () => {
  const c = await plainClient();
  const args = { conversation: 'conv-1', sku: 'A0001', qty: 2 };
  const first = await call(c, 'place_order', args);
  const again = await call(c, 'place_order', { qty: 2, sku: 'A0001', conversation: 'conv-1' });
  const key = count("SELECT key FROM calls WHERE tool = 'place_order' AND args = '{\"qty\":2,\"sku\":\"A0001\"}'");
  assert.deepEqual(first, { isError: false, body: { status: 'done', idempotent: false, key, id: 1,
    result: { order: 1, sku: 'A0001', qty: 2 } } });
  assert.deepEqual(again, { isError: false, body: { ...first.body, idempotent: true } });
  assert.equal(count("SELECT count(*) FROM orders WHERE sku = 'A0001'"), 1);
});

test('place_order from two clients at once: one order, both the same result', async () => {
  const [a, b] = await Promise.all([client({ ORDER_DELAY_MS: '300' }), client({ ORDER_DELAY_MS: '300' })]);
  const args = { conversation: 'conv-2', sku: 'B0002', qty: 1 };
  const [ra, rb] = await Promise.all([call(a, 'place_order', args), call(b, 'place_order', args)]);
  assert.deepEqual([ra.isError, rb.isError], [false, false]);
  assert.deepEqual(rb.body.result, ra.body.result);
  assert.deepEqual([ra.body.idempotent, rb.body.idempotent].sort(), [false, true]);   // one replay
  assert.deepEqual([rb.body.key, rb.body.id], [ra.body.key, ra.body.id]);
  assert.equal(ra.body.result.sku, 'B0002');
  assert.equal(count("SELECT count(*) FROM orders WHERE sku = 'B0002'"), 1);
});

test('the same charge_card twice: sent once, the same result', async () => {
  const c = await plainClient();
  const before = arrivals();
  const first = await call(c, 'charge_card', { conversation: 'conv-3', cents: 500 });
  const again = await call(c, 'charge_card', { conversation: 'conv-3', cents: 500 });
  assert.equal(first.isError, false);
  assert.deepEqual(first.body.result.cents, 500);
  assert.deepEqual([first.body.idempotent, first.body.id], [false, null]);
  assert.deepEqual(again, { isError: false, body: { ...first.body, idempotent: true } });
  assert.equal(arrivals() - before, 1);
  // The header was "<key>", the call's key.
  const key = count("SELECT key FROM calls WHERE tool = 'charge_card' AND args = '{\"cents\":500}'");
  assert.equal(target.arrivals[`"${key}"`], 1);
  assert.equal(first.body.key, key);
});

test('charge_card from two clients at once: sent once, both the same result', async () => {
  const [a, b] = await Promise.all([client(), client()]);
  target.delayMs = 500;
  const before = arrivals();
  const args = { conversation: 'conv-4', cents: 1200 };
  const [ra, rb] = await Promise.all([call(a, 'charge_card', args), call(b, 'charge_card', args)]);
  target.delayMs = 0;
  assert.equal(ra.isError, false, JSON.stringify(ra));
  assert.equal(rb.isError, false, JSON.stringify(rb));
  assert.deepEqual(rb.body.result, ra.body.result);
  assert.deepEqual([ra.body.idempotent, rb.body.idempotent].sort(), [false, true]);   // one waited
  assert.equal(ra.body.result.cents, 1200);
  assert.equal(arrivals() - before, 1);
});

test('a charge whose target times out is unknown, and is not retried', async () => {
  // The target never answers; the timeout only has to outlast the request's
  // way there, which on a loaded machine (the suite runs files at once) can
  // take longer than a few hundred milliseconds.
  const c = await client({ TARGET_TIMEOUT_MS: '2000' });
  let answer;
  target.hold = new Promise((resolve) => { answer = resolve; });   // no answer in time
  const before = arrivals();
  const first = await call(c, 'charge_card', { conversation: 'conv-5', cents: 990 });
  answer();
  target.hold = null;
  assert.equal(first.isError, true);
  assert.deepEqual([first.body.status, first.body.idempotent], ['unknown', false]);   // not a replay
  assert.match(first.body.message, /may already have reached the target.*\(reported: TimeoutError/);
  const again = await call(c, 'charge_card', { conversation: 'conv-5', cents: 990 });
  assert.deepEqual(again, { isError: true, body: { ...first.body, idempotent: true } });
  const other = await plainClient();                // another client: the same
  assert.deepEqual((await call(other, 'charge_card', { conversation: 'conv-5', cents: 990 })).body, again.body);
  assert.equal(arrivals() - before, 1);
  assert.equal(count(`SELECT status FROM calls WHERE key = '${first.body.key}'`), 'unknown');
});

test('a charge the target refused is not_sent: released, and sent again it runs', async () => {
  const closed = http.createServer();
  await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = closed.address().port;
  await new Promise((resolve) => closed.close(resolve));
  const down = await client({ TARGET_URL: `http://127.0.0.1:${port}/charges` });
  const before = arrivals();
  const args = { conversation: 'conv-6', cents: 300 };
  const first = await call(down, 'charge_card', args);
  assert.equal(first.isError, true);
  assert.deepEqual([first.body.status, first.body.idempotent], ['not_sent', false]);
  assert.match(first.body.message, /refused the connection: nothing was sent; the call was released/);
  assert.equal(count(`SELECT count(*) FROM calls WHERE key = '${first.body.key}'`), 0);
  const up = await plainClient();
  const second = await call(up, 'charge_card', args);
  assert.deepEqual([second.isError, second.body.status, second.body.idempotent], [false, 'done', false]);
  assert.equal(arrivals() - before, 1);
});

test('a duplicate that waited longer than WAIT_MS is told pending, then replays', async () => {
  // The first charge's answer is held until the duplicate has been told.
  const [a, b] = await Promise.all([client({ TARGET_TIMEOUT_MS: '120000' }), client({ WAIT_MS: '100' })]);
  let answer;
  target.hold = new Promise((resolve) => { answer = resolve; });
  const args = { conversation: 'conv-7', cents: 700 };
  const first = call(a, 'charge_card', args);
  while (count("SELECT count(*) FROM calls WHERE tool = 'charge_card' AND args = '{\"cents\":700}'") === 0) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const waited = await call(b, 'charge_card', args);
  answer();
  target.hold = null;
  assert.equal(waited.isError, true);
  assert.deepEqual([waited.body.status, waited.body.idempotent], ['pending', true]);
  assert.match(waited.body.message, /in progress/);
  const done = await first;
  assert.deepEqual([done.isError, done.body.idempotent], [false, false]);
  assert.deepEqual((await call(b, 'charge_card', args)).body, { ...done.body, idempotent: true });
});

test('a call with no conversation is an error in the same shape, and nothing is claimed', async () => {
  const c = await plainClient();
  const before = count('SELECT count(*) FROM calls');
  const r = await call(c, 'place_order', { conversation: '', sku: 'E0001', qty: 1 });
  assert.deepEqual([r.isError, r.body.status, r.body.idempotent, r.body.key], [true, 'error', false, null]);
  assert.match(r.body.message, /conv of this call is "", not a non-empty string; nothing was claimed/);
  assert.equal(count('SELECT count(*) FROM calls'), before);
});
