// SPDX-License-Identifier: MIT
'use strict';
// A Model of the OpenAI Agents SDK (its interface: getResponse,
// getStreamedResponse) for tests, playing a Script (../harness/script.js):
// the function_call_result items at the end of the request's input are
// what the model was handed since its last turn; it answers the script's
// next turn as function_call items or an assistant message.
const { Usage } = require('@openai/agents');
const { parsed } = require('../harness/script.js');

// A function_call_result's output (text, or { type: 'text', text }).
function output(o) {
  if (typeof o === 'string') return parsed(o);
  return o && o.type === 'text' ? parsed(o.text) : o;
}

function scripted(script) {
  return {
    async getResponse(request) {
      const input = Array.isArray(request.input) ? request.input : [];
      const seen = [];
      for (let i = input.length - 1; i >= 0 && input[i].type === 'function_call_result'; i--) {
        seen.unshift({ id: input[i].callId, name: input[i].name, output: output(input[i].output) });
      }
      const turn = await script.next(seen);
      const out = turn.text !== undefined
        ? [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text }] }]
        : turn.calls.map((c) => ({ type: 'function_call', callId: c.id, name: c.name, arguments: JSON.stringify(c.args), status: 'completed' }));
      return { usage: new Usage(), output: out, responseId: `resp_${script.turns.length}` };
    },
    async *getStreamedResponse() {
      throw new Error('this test model does not stream: use run() without stream');
    },
  };
}

module.exports = { scripted };
