// SPDX-License-Identifier: MIT
'use strict';
// The model's side of a conversation, for the frameworks' test models: a
// script of turns, and what the model was handed at each turn.
//
//   const script = new Script([
//     [{ name: 'place_order', args: { sku: 'A0001', qty: 2 } }],   // turn 0: tool calls
//     [{ name: 'place_order', args: { qty: 2, sku: 'A0001' } }],   // turn 1: the same call again
//     'Ordered.',                                                  // turn 2: the final text
//   ]);
//
// Each example's model.js wraps a Script in its framework's own test model
// (the Vercel AI SDK's MockLanguageModelV2, a LangChain chat model, an
// OpenAI Agents SDK Model).  At each turn the framework asks the model for
// its next message; the model hands the script the tool results the
// framework gave it since its last turn (`seen`), and the script answers
// with the turn's tool calls, each with a new call id (as a model gives a
// repeated call a new id), or with its text.  script.turns records it all.
// A turn past the end of the script is the text 'done'.
const crypto = require('node:crypto');

class Script {
  /**
   * turns: the script.  options.onTurn(i) is called as turn i starts;
   * options.holdAt: the turn at which the model stops answering for good
   * (a run held there, between its tools' effects and the model's next
   * turn, waits to be killed).
   */
  constructor(turns, options = {}) {
    this.script = turns;
    this.turns = [];
    this.onTurn = options.onTurn || (() => {});
    this.holdAt = options.holdAt;
  }

  /** The model's next turn: { calls: [{ id, name, args }] } or { text }. */
  async next(seen) {
    const i = this.turns.length;
    const step = i < this.script.length ? this.script[i] : 'done';
    const turn = { seen, calls: [], text: undefined };
    if (typeof step === 'string') {
      turn.text = step;
    } else {
      turn.calls = step.map(({ name, args }) =>
        ({ id: `call_${crypto.randomBytes(6).toString('hex')}`, name, args }));
    }
    this.turns.push(turn);
    this.onTurn(i);
    if (i === this.holdAt) await new Promise(() => {});     // never answers
    return turn;
  }
}

/** A tool result as the model reads it: the JSON value, or the text. */
function parsed(text) {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch (e) {
    return text;
  }
}

/**
 * One run of a conversation: the example's shop (shop.js) on the database
 * file, its framework's test model (model.js) on a Script of turns, and
 * the framework's own loop (shop.chat).  Resolves to the Script's turns.
 * options: file, targetUrl, timeoutMs, waitMs, user, conversation, prompt,
 * turns, holdAt, onTurn.
 */
async function converse(shop, model, options) {
  const script = new Script(options.turns, options);
  const s = shop.open(options.file, options);
  try {
    await s.chat(model.scripted(script), {
      user: options.user, conversation: options.conversation, prompt: options.prompt || 'Order and pay, please.',
    });
  } finally {
    s.close();
  }
  return script.turns;
}

module.exports = { Script, parsed, converse };
