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
// result, marked as a replay.  Every answer carries structuredContent (its
// outputSchema is below) and the same JSON as text:
//
//   a first run    {"status":"done","result":{...}}
//   a replay       {"status":"done","result":{...},"idempotent":true}
//                  (the first run's result; the tool did not run again)
//   in progress    a duplicate of a call still running waits for it (up to
//                  WAIT_MS) and gets its result as a replay; after that,
//                  isError and {"status":"pending","key":...,"message":...,
//                  "idempotent":true}
//   unknown        isError and {"status":"unknown","key":...,"message":...}:
//                  the charge's request failed or timed out after it may
//                  have left; it is never sent again (a duplicate gets the
//                  same with "idempotent":true), an operator reconciles it
//   not sent       isError and {"status":"not_sent","key":...,"message":...}:
//                  the target refused the connection, nothing left, the
//                  call is released: sending it again runs it
//   other errors   isError and {"status":"error","message":...}
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

const placeOrder = calls.tool({ kind: 'local', name: 'place_order' }, (db, { sku, qty }) => {
  if (ORDER_DELAY_MS) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ORDER_DELAY_MS);
  const id = Number(db.prepare('INSERT INTO orders(sku, qty) VALUES (?, ?)').run(sku, qty).lastInsertRowid);
  return new idem.Result({ order: id, sku, qty }, id);
});

const chargeCard = calls.tool({ kind: 'external', name: 'charge_card' }, async ({ cents }, { idempotencyKey }) => {
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

// The answer to a tool call: see the top of this file.
async function answer(tool, conversation, args) {
  let body;
  let error;
  try {
    body = done(await tool.run(WHO, conversation, args));
  } catch (e) {
    error = e;
    if (e instanceof idem.InProgress) {
      // Another arrival of this very call is running: wait for its outcome.
      try {
        body = done(await calls.waitOutcome(e.key, WAIT_MS));
      } catch (e2) {
        error = e2;
      }
    }
  }
  if (body === undefined) body = failure(error);
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body,
    ...(body.status === 'done' ? {} : { isError: true }),
  };
}

const done = (outcome) => (outcome.replayed
  ? { status: 'done', result: outcome.result, idempotent: true }
  : { status: 'done', result: outcome.result });

function failure(e) {
  if (e instanceof idem.CallError) {
    return { status: e.status, key: e.key, message: e.reply.message || e.message,
      ...(e.replayed ? { idempotent: true } : {}) };
  }
  if (e instanceof idem.NotSent) {
    return { status: 'not_sent', key: e.key, message: `${e.message}: nothing was sent; the call was released, and sending it again runs it` };
  }
  if (e instanceof idem.NotRecorded) return { status: 'pending', key: e.key, message: e.message };
  return { status: 'error', message: String(e && e.message) };
}

// What every answer's structuredContent holds.
const outputSchema = {
  status: z.enum(['done', 'pending', 'unknown', 'failed', 'not_sent', 'error']),
  result: z.any().optional(),
  idempotent: z.literal(true).optional(),
  key: z.string().optional(),
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
