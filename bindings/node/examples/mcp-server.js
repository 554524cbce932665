#!/usr/bin/env node
// SPDX-License-Identifier: MIT
'use strict';
// mcp-server.js -- an MCP server (stdio) whose tools go through sqlite-idem.
//
//   IDEM_DB=app.db TARGET_URL=http://127.0.0.1:8080/charges node mcp-server.js
//
// Two tools, each taking a `conversation` (the conv of the key; an MCP
// client names its conversation or session there) and its arguments:
//
//   place_order {conversation, sku, qty}   local: writes an order into the
//        SQLite file; claim, order and result commit in one transaction
//   charge_card {conversation, cents}      external: POSTs to TARGET_URL with
//        the header Idempotency-Key: "<key>", after the claim has committed
//
// The same call sent again (by this client or another one, through another
// server process on the same file) takes effect once and gets the same
// result, marked as a replay.  Each tool is agentTool() (sqlite-idem/
// frameworks), so its answers have the shape of every framework's tool, in
// every language (doc/frameworks.md): the user is the server's principal
// (IDEM_WHO), the conversation the tool's argument `conversation`.  Every
// answer carries structuredContent (its outputSchema is below) and the
// same JSON as text:
//
//   a first run    {"status":"done","idempotent":false,"key":...,"id":...,"result":{...}}
//   a replay       {"status":"done","idempotent":true,"key":...,"id":...,"result":{...}}
//                  (the first run's result; the tool did not run again)
//   in progress    a duplicate of a call still running waits for it (up to
//                  WAIT_MS) and gets its result as a replay; after that,
//                  isError and {"status":"pending","idempotent":true,
//                  "key":...,"message":...}
//   unknown        isError and {"status":"unknown","idempotent":false,
//                  "key":...,"message":...}: the charge's request failed or
//                  timed out after it may have left; it is never sent again
//                  (a duplicate gets the same with "idempotent":true), an
//                  operator reconciles it
//   not sent       isError and {"status":"not_sent","idempotent":false,
//                  "key":...,"message":...}: the target refused the
//                  connection, nothing left, the call is released: sending
//                  it again runs it
//   other errors   isError and {"status":"error","idempotent":false,
//                  "key":...|null,"message":...}
//
// Environment: IDEM_DB (default idem-mcp.db), TARGET_URL, IDEM_WHO (the
// principal, default "mcp-user"), TARGET_TIMEOUT_MS (default 5000),
// WAIT_MS (default 20000), ORDER_DELAY_MS (test only: hold the write lock
// this long in place_order).
const Database = require('better-sqlite3');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');
const idem = require('sqlite-idem');
const { agentTool } = require('sqlite-idem/frameworks');

const WHO = process.env.IDEM_WHO || 'mcp-user';
const TARGET_URL = process.env.TARGET_URL || 'http://127.0.0.1:8080/charges';
const TARGET_TIMEOUT_MS = Number(process.env.TARGET_TIMEOUT_MS || 5000);
const WAIT_MS = Number(process.env.WAIT_MS || 20000);
const ORDER_DELAY_MS = Number(process.env.ORDER_DELAY_MS || 0);

const db = new Database(process.env.IDEM_DB || 'idem-mcp.db', { timeout: 15000 });
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');     // an external claim is on disk before the request leaves
db.exec('CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, sku TEXT, qty INTEGER)');
const calls = idem.calls(db, 'calls');

// Who and the conversation of each call: the server's principal, and the
// tool's argument `conversation` (answer() hands it as the context).
const MCP = { who: WHO, conv: (ctx) => ctx.conversation, waitMs: WAIT_MS };

const placeOrder = agentTool(calls, { kind: 'local', name: 'place_order', ...MCP }, (db, { sku, qty }) => {
  if (ORDER_DELAY_MS) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ORDER_DELAY_MS);
  const id = Number(db.prepare('INSERT INTO orders(sku, qty) VALUES (?, ?)').run(sku, qty).lastInsertRowid);
  return new idem.Result({ order: id, sku, qty }, id);
});

const chargeCard = agentTool(calls, { kind: 'external', name: 'charge_card', ...MCP }, async ({ cents }, { idempotencyKey }) => {
  let response;
  try {
    response = await fetch(TARGET_URL, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [idem.HEADER]: idempotencyKey },
      body: JSON.stringify({ cents }),
      signal: AbortSignal.timeout(TARGET_TIMEOUT_MS),
    });
  } catch (e) {
    // Refused before anything was sent: say so, and the call is released.
    if (e.cause && e.cause.code === 'ECONNREFUSED') {
      throw new idem.NotSent(`the target (${TARGET_URL}) refused the connection`, { cause: e });
    }
    throw e;                  // anything else: the request may have left
  }
  if (!response.ok) throw new Error(`the target answered ${response.status}`);
  return response.json();
});

// The answer to a tool call: see the top of this file.  agentTool answers
// done, pending, unknown and failed; what it throws (NotSent, NotRecorded,
// a local tool's error) is answered here in the same shape, since MCP's
// error path carries no structure.
async function answer(execute, conversation, args) {
  let body;
  try {
    body = await execute(args, { conversation });
  } catch (e) {
    body = failure(e);
  }
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body,
    ...(body.status === 'done' ? {} : { isError: true }),
  };
}

function failure(e) {
  const key = (e && typeof e.key === 'string') ? e.key : null;
  if (e instanceof idem.NotSent) {
    return { status: 'not_sent', idempotent: false, key,
      message: `${e.message}: nothing was sent; the call was released, and sending it again runs it` };
  }
  if (e instanceof idem.NotRecorded) return { status: 'pending', idempotent: false, key, message: e.message };
  return { status: 'error', idempotent: false, key, message: String(e && e.message) };
}

// What every answer's structuredContent holds.
const outputSchema = {
  status: z.enum(['done', 'pending', 'unknown', 'failed', 'not_sent', 'error']),
  idempotent: z.boolean(),
  key: z.string().nullable(),
  id: z.any().optional(),
  result: z.any().optional(),
  message: z.string().optional(),
};

const server = new McpServer({ name: 'idem-orders', version: '1.0.0' });

server.registerTool('place_order', {
  description: 'Place an order (written once, however often the call arrives).',
  inputSchema: { conversation: z.string(), sku: z.string(), qty: z.number().int().positive() },
  outputSchema,
}, ({ conversation, sku, qty }) => answer(placeOrder, conversation, { sku, qty }));

server.registerTool('charge_card', {
  description: 'Charge a card through the payment target (sent at most once).',
  inputSchema: { conversation: z.string(), cents: z.number().int().positive() },
  outputSchema,
}, ({ conversation, cents }) => answer(chargeCard, conversation, { cents }));

server.connect(new StdioServerTransport()).catch((e) => {
  console.error(e);
  process.exit(1);
});
