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
const target = { arrivals: {}, delayMs: 0 };
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
      setTimeout(() => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ charge: `ch_${n}`, cents: JSON.parse(body).cents }));
      }, target.delayMs);
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

async function call(c, name, args) {
  const r = await c.callTool({ name, arguments: args });
  return { isError: Boolean(r.isError), body: JSON.parse(r.content[0].text) };
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
  const c = await client();
  const { tools } = await c.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['charge_card', 'place_order']);
});

test('the same place_order twice: one order, the same result', async () => {
  const c = await client();
  const args = { conversation: 'conv-1', sku: 'A0001', qty: 2 };
  const first = await call(c, 'place_order', args);
  const again = await call(c, 'place_order', { qty: 2, sku: 'A0001', conversation: 'conv-1' });
  assert.deepEqual(first, { isError: false, body: { status: 'done', result: { order: 1, sku: 'A0001', qty: 2 } } });
  assert.deepEqual(again, first);
  assert.equal(count("SELECT count(*) FROM orders WHERE sku = 'A0001'"), 1);
});

test('place_order from two clients at once: one order, both the same result', async () => {
  const [a, b] = await Promise.all([client({ ORDER_DELAY_MS: '300' }), client({ ORDER_DELAY_MS: '300' })]);
  const args = { conversation: 'conv-2', sku: 'B0002', qty: 1 };
  const [ra, rb] = await Promise.all([call(a, 'place_order', args), call(b, 'place_order', args)]);
  assert.equal(ra.isError, false);
  assert.deepEqual(rb, ra);
  assert.equal(ra.body.result.sku, 'B0002');
  assert.equal(count("SELECT count(*) FROM orders WHERE sku = 'B0002'"), 1);
});

test('the same charge_card twice: sent once, the same result', async () => {
  const c = await client();
  const before = arrivals();
  const first = await call(c, 'charge_card', { conversation: 'conv-3', cents: 500 });
  const again = await call(c, 'charge_card', { conversation: 'conv-3', cents: 500 });
  assert.equal(first.isError, false);
  assert.deepEqual(first.body.result.cents, 500);
  assert.deepEqual(again, first);
  assert.equal(arrivals() - before, 1);
  // The header was "<key>", the call's key.
  const key = count("SELECT key FROM calls WHERE tool = 'charge_card' AND args = '{\"cents\":500}'");
  assert.equal(target.arrivals[`"${key}"`], 1);
});

test('charge_card from two clients at once: sent once, both the same result', async () => {
  const [a, b] = await Promise.all([client(), client()]);
  target.delayMs = 500;
  const before = arrivals();
  const args = { conversation: 'conv-4', cents: 1200 };
  const [ra, rb] = await Promise.all([call(a, 'charge_card', args), call(b, 'charge_card', args)]);
  target.delayMs = 0;
  assert.equal(ra.isError, false, JSON.stringify(ra));
  assert.deepEqual(rb, ra);
  assert.equal(ra.body.result.cents, 1200);
  assert.equal(arrivals() - before, 1);
});

test('a charge whose target times out is unknown, and is not retried', async () => {
  const c = await client({ TARGET_TIMEOUT_MS: '300' });
  target.delayMs = 1500;
  const before = arrivals();
  const first = await call(c, 'charge_card', { conversation: 'conv-5', cents: 990 });
  target.delayMs = 0;
  assert.equal(first.isError, true);
  assert.equal(first.body.status, 'unknown');
  assert.match(first.body.reply.message, /may already have reached the target/);
  const again = await call(c, 'charge_card', { conversation: 'conv-5', cents: 990 });
  assert.deepEqual([again.isError, again.body.status, again.body.key], [true, 'unknown', first.body.key]);
  const other = await client();                     // another client: the same
  assert.equal((await call(other, 'charge_card', { conversation: 'conv-5', cents: 990 })).body.status, 'unknown');
  assert.equal(arrivals() - before, 1);
  assert.equal(count(`SELECT status FROM calls WHERE key = '${first.body.key}'`), 'unknown');
});
