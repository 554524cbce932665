// SPDX-License-Identifier: MIT
'use strict';
// sqlite-idem/frameworks -- an agent framework's tool through idem.
//
//   const { agentTool } = require('sqlite-idem/frameworks');
//   const execute = agentTool(calls, { name: 'place_order', kind: 'local', context: 'ai-sdk' },
//     (db, { sku, qty }) => ({ order: Number(db.prepare('INSERT ...').run(sku, qty).lastInsertRowid) }));
//   tool({ description, inputSchema, execute })            // ai: the Vercel AI SDK
//
// agentTool() returns the execute function that a framework calls with
// the tool call's input and its run context: the Vercel AI SDK's
// execute(input, options), LangChain's func(input, config), the OpenAI
// Agents SDK's execute(input, runContext, details).  `who` and `conv` come
// from the run context (the user, the conversation or thread), `args` from
// the input; the framework's own tool-call id (toolCallId, call_id) is not
// part of the key: a model that repeats a call gives it a new id, and the
// repeat must meet the first call (the key is who / conv / tool / sorted
// arguments).  The protocol is calls.tool()'s (index.js), for every
// framework alike; what is per framework is only where its run context
// keeps the user and the conversation (CONTEXTS below).
//
// What the model gets back:
//   - the first arrival: the tool's result, as the tool returned it;
//   - a repeat of a done call: { status: 'done', idempotent: true, key, id,
//     result }, result being the first arrival's (the tool did not run);
//   - a call in progress (or whose process died): { status: 'pending',
//     idempotent: true, key, message } (after waiting up to waitMs for it);
//   - an external call whose outcome is unknown (its request may have
//     arrived; the target's records decide; it is not retried): { status:
//     'unknown', idempotent: false for the arrival that sent it, true for a
//     repeat, key, message }; a kept local failure: status 'failed'.
// These are answers, not errors, so that each framework hands them to the
// model as they are (a framework's error path may add "please try again").
// Everything else is thrown, for the framework's own error path: the local
// tool's error or idem.Unstorable (rolled back; released, so a retry runs
// again), idem.NotSent (released), idem.Lost and idem.NotRecorded (an
// operator's matter), and a missing user or conversation (nothing was
// claimed).
const idem = require('./index.js');

// Where each framework's run context keeps the user and the conversation,
// as its tools receive it after their input.  `hint` completes the error
// for a run that gave none.
const CONTEXTS = Object.freeze({
  'ai-sdk': Object.freeze({
    who: (options) => options && options.experimental_context && options.experimental_context.user,
    conv: (options) => options && options.experimental_context && options.experimental_context.conversation,
    hint: 'generateText({ ..., experimental_context: { user, conversation } })',
  }),
  langchain: Object.freeze({
    who: (config) => config && config.configurable && config.configurable.user_id,
    conv: (config) => config && config.configurable && config.configurable.thread_id,
    hint: 'invoke(input, { configurable: { user_id, thread_id } })',
  }),
  'openai-agents': Object.freeze({
    who: (runContext) => runContext && runContext.context && runContext.context.user,
    conv: (runContext) => runContext && runContext.context && runContext.context.conversation,
    hint: 'run(agent, input, { context: { user, conversation } })',
  }),
});

const OWN_OPTIONS = ['context', 'who', 'conv', 'waitMs'];

function describe(v) {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return String(v);
  return `${typeof v === 'object' ? 'an object' : typeof v} (${String(v).slice(0, 40)})`;
}

// The value of who or conv for one call: a fixed string, or the getter's
// answer on the framework's context arguments.
function from(spec, what, name, hint, ctx) {
  const v = typeof spec === 'function' ? spec(...ctx) : spec;
  if (typeof v !== 'string' || v === '') {
    throw new TypeError(`idem: tool ${name}: ${what} of this call is ${describe(v)}, ` +
      `not a non-empty string; nothing was claimed${hint ? `; give it as ${hint}` : ''}`);
  }
  return v;
}

// What the model gets for a call that did not end in done: a duplicate's
// (replayed), or the Unknown of the arrival that sent the request.
function answerFor(e) {
  const reply = e.reply || {};
  return { status: e.status, idempotent: e.replayed, key: e.key, message: reply.message };
}

/**
 * A framework tool's execute function over calls.tool(): see the top of
 * this file.  options: those of calls.tool (kind, name, keyargs, params, honoursKey),
 * and context ('ai-sdk', 'langchain' or 'openai-agents': where the run
 * context keeps the user and the conversation), or who and conv (a string,
 * or a function of the context arguments that the framework passes after
 * the input; they override context's), and waitMs (how long a repeat of a
 * call in progress waits for its result before answering 'pending';
 * default 0).
 */
function agentTool(calls, options, fn) {
  if (!(calls instanceof idem.Calls)) {
    throw new TypeError('idem: agentTool(calls, options, fn): calls must be idem.calls(db, ...), ' +
      `not ${describe(calls)}`);
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`idem: agentTool(calls, options, fn): options must be an object, not ${describe(options)}`);
  }
  const toolOptions = {};
  for (const [k, v] of Object.entries(options)) if (!OWN_OPTIONS.includes(k)) toolOptions[k] = v;
  const tool = calls.tool(toolOptions, fn);
  const { context, waitMs = 0 } = options;
  if (context !== undefined && !Object.prototype.hasOwnProperty.call(CONTEXTS, context)) {
    throw new TypeError(`idem: tool ${tool.name}: context must be one of ` +
      `${Object.keys(CONTEXTS).map((c) => `'${c}'`).join(', ')}, not ${describe(context)}; ` +
      'or give who and conv');
  }
  const preset = context === undefined ? {} : CONTEXTS[context];
  const who = options.who === undefined ? preset.who : options.who;
  const conv = options.conv === undefined ? preset.conv : options.conv;
  for (const [what, spec] of [['who', who], ['conv', conv]]) {
    if (typeof spec !== 'function' && (typeof spec !== 'string' || spec === '')) {
      throw new TypeError(`idem: tool ${tool.name}: ${what} must be a string or a function ` +
        `of the framework's context, not ${describe(spec)} (or give context: ` +
        `${Object.keys(CONTEXTS).map((c) => `'${c}'`).join(' | ')})`);
    }
  }
  if (typeof waitMs !== 'number' || !(waitMs >= 0)) {
    throw new TypeError(`idem: tool ${tool.name}: waitMs must be a number of milliseconds, not ${describe(waitMs)}`);
  }
  const parties = (ctx) => [from(who, 'who', tool.name, preset.hint, ctx),
    from(conv, 'conv', tool.name, preset.hint, ctx)];

  const execute = async (input, ...ctx) => {
    const [w, c] = parties(ctx);
    let outcome;
    try {
      outcome = await tool.run(w, c, input);
    } catch (e) {
      if (!(e instanceof idem.CallError)) throw e;
      if (!(e instanceof idem.InProgress) || waitMs === 0) return answerFor(e);
      try {
        outcome = await calls.waitOutcome(e.key, waitMs);
      } catch (e2) {
        if (!(e2 instanceof idem.CallError)) throw e2;
        return answerFor(e2);
      }
    }
    if (!outcome.replayed) return outcome.result;
    const id = typeof outcome.id === 'bigint' ? String(outcome.id) : outcome.id;   // JSON has no BigInt
    return { status: 'done', idempotent: true, key: outcome.key, id, result: outcome.result };
  };
  execute.tool = tool;
  execute.key = (input, ...ctx) => tool.key(...parties(ctx), input);
  Object.defineProperty(execute, 'name', { value: tool.name });
  return execute;
}

module.exports = { agentTool, CONTEXTS };
