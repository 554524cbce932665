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
// result.  A duplicate of a charge still in flight waits for it.  A charge
// whose request failed or timed out is `unknown`: it is never sent again
// (the answer says so, with isError), and an operator reconciles it from
// the target's records.
//
// Environment: IDEM_DB (default idem-mcp.db), TARGET_URL, IDEM_WHO (the
// principal, default "mcp-user"), TARGET_TIMEOUT_MS (default 5000),
// ORDER_DELAY_MS (test only: hold the write lock this long in place_order).
const Database = require('better-sqlite3');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');
const idem = require('sqlite-idem');

const WHO = process.env.IDEM_WHO || 'mcp-user';
const TARGET_URL = process.env.TARGET_URL || 'http://127.0.0.1:8080/charges';
const TARGET_TIMEOUT_MS = Number(process.env.TARGET_TIMEOUT_MS || 5000);
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
  const response = await fetch(TARGET_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [idem.HEADER]: idempotencyKey },
    body: JSON.stringify({ cents }),
    signal: AbortSignal.timeout(TARGET_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`the target answered ${response.status}`);
  return response.json();
});

// Run a tool; the MCP answer is the JSON of {status, result} or, for a call
// that did not end in done, of idem's reply (isError).
async function answer(tool, conversation, args) {
  let outcome;
  try {
    outcome = { status: 'done', result: await tool(WHO, conversation, args) };
  } catch (e) {
    let err = e;
    if (err instanceof idem.InProgress) {
      // Another arrival of this very call is running: wait for its outcome.
      try {
        outcome = { status: 'done', result: await calls.wait(err.key, 20000) };
      } catch (e2) {
        err = e2;
      }
    }
    if (!outcome) {
      if (!(err instanceof idem.CallError)) throw err;
      return {
        isError: true,
        content: [{ type: 'text', text: JSON.stringify({ status: err.status, key: err.key, reply: err.reply }) }],
      };
    }
  }
  return { content: [{ type: 'text', text: JSON.stringify(outcome) }] };
}

const server = new McpServer({ name: 'idem-orders', version: '1.0.0' });

server.registerTool('place_order', {
  description: 'Place an order (written once, however often the call arrives).',
  inputSchema: { conversation: z.string(), sku: z.string(), qty: z.number().int().positive() },
}, ({ conversation, sku, qty }) => answer(placeOrder, conversation, { sku, qty }));

server.registerTool('charge_card', {
  description: 'Charge a card through the payment target (sent at most once).',
  inputSchema: { conversation: z.string(), cents: z.number().int().positive() },
}, ({ conversation, cents }) => answer(chargeCard, conversation, { cents }));

server.connect(new StdioServerTransport()).catch((e) => {
  console.error(e);
  process.exit(1);
});
