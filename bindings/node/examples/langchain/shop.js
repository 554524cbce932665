// SPDX-License-Identifier: MIT
'use strict';
// idem inside LangChain.js (@langchain/core tools, a LangGraph agent): two
// tools whose calls take effect once, however often the model makes them.
//
//   place_order  local: an order row in SQLite, written in the claim's
//                transaction (the row, the claim and the result commit
//                together)
//   charge_card  external: a POST to the target, with the call's key as
//                the Idempotency-Key header
//
// Each tool's func is agentTool(): the user and the conversation come from
// the run's config (configurable.user_id and configurable.thread_id, the
// thread LangGraph keeps a conversation by), the arguments from the tool
// call.  The tool-call id is not part of the key: a model that repeats a
// call gives it a new id.  A repeat gets the first result marked
// "idempotent": true; a call whose request may have arrived but whose
// answer did not (a timeout) gets the "unknown" note, and is not sent again.
//
//   npm install && npm start      a conversation with the test model
//   npm test                      the tests (../harness/suite.js)
const Database = require('better-sqlite3');
const idem = require('sqlite-idem');
const { agentTool } = require('sqlite-idem/frameworks');
const { tool } = require('@langchain/core/tools');
const { END, MessagesAnnotation, START, StateGraph } = require('@langchain/langgraph');
const { ToolNode, toolsCondition } = require('@langchain/langgraph/prebuilt');
const { z } = require('zod');

/**
 * The shop on a database file: its tools, and chat(model, { user,
 * conversation, prompt }), one run of a LangGraph agent (the model, then
 * the tools it calls, until it answers in text).
 * options: targetUrl, timeoutMs (the charge's; default 5000), waitMs.
 */
function open(file, { targetUrl, timeoutMs = 5000, waitMs = 0 } = {}) {
  const db = new Database(file, { timeout: 10000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');          // a claim is on disk before its request leaves
  db.exec('CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, sku TEXT, qty INTEGER)');
  const calls = idem.calls(db, 'calls');

  const placeOrder = agentTool(calls, { name: 'place_order', kind: 'local', context: 'langchain', waitMs },
    (db, { sku, qty }) => {
      const id = Number(db.prepare('INSERT INTO orders(sku, qty) VALUES (?, ?)').run(sku, qty).lastInsertRowid);
      return new idem.Result({ order: id, sku, qty }, id);
    });
  const chargeCard = agentTool(calls, { name: 'charge_card', kind: 'external', context: 'langchain', waitMs },
    async ({ cents }, { idempotencyKey }) => {
      let response;
      try {
        response = await fetch(targetUrl, {
          method: 'POST', body: JSON.stringify({ cents }), signal: AbortSignal.timeout(timeoutMs),
          headers: { 'content-type': 'application/json', [idem.HEADER]: idempotencyKey },
        });
      } catch (e) {
        // Refused before a connection: nothing left; a retry may run.
        if (e.cause && e.cause.code === 'ECONNREFUSED') throw new idem.NotSent('the target is down', { cause: e });
        throw e;                              // a timeout: the request may have arrived
      }
      if (!response.ok) throw new Error(`the target answered ${response.status}`);
      return response.json();
    });

  const tools = [
    tool(placeOrder, {
      name: 'place_order',
      description: 'Place an order for qty items of sku.',
      schema: z.object({ sku: z.string(), qty: z.number().int().positive() }),
    }),
    tool(chargeCard, {
      name: 'charge_card',
      description: "Charge the user's card, in cents.",
      schema: z.object({ cents: z.number().int().positive() }),
    }),
  ];
  const chat = (model, { user, conversation, prompt }) => {
    const llm = model.bindTools(tools);
    const agent = new StateGraph(MessagesAnnotation)
      .addNode('agent', async ({ messages }) => ({ messages: [await llm.invoke(messages)] }))
      .addNode('tools', new ToolNode(tools))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
      .addEdge('tools', 'agent')
      .compile();
    return agent.invoke({ messages: [{ role: 'user', content: prompt }] },
      { configurable: { user_id: user, thread_id: conversation }, recursionLimit: 20 });
  };
  return { db, calls, tools, chat, close: () => db.close() };
}

module.exports = { open };
