// SPDX-License-Identifier: MIT
'use strict';
// The Vercel AI SDK's test model, MockLanguageModelV2 (ai/test), playing a
// Script (../harness/script.js): at each step generateText calls its
// doGenerate with the prompt so far; the tool results at its end are what
// the model was handed since its last turn.
const { MockLanguageModelV2 } = require('ai/test');
const { parsed } = require('../harness/script.js');

const usage = { inputTokens: 10, outputTokens: 10, totalTokens: 20 };

// A tool-result part's output (ai@5: { type: 'json' | 'text' | 'error-text'
// | 'error-json', value }) as the model reads it.
function output({ type, value }) {
  if (type === 'error-text' || type === 'error-json') return { error: parsed(value) };
  return parsed(value);
}

function scripted(script) {
  return new MockLanguageModelV2({
    doGenerate: async ({ prompt }) => {
      const seen = [];
      for (let i = prompt.length - 1; i >= 0 && prompt[i].role === 'tool'; i--) {
        seen.unshift(...prompt[i].content.map((p) => ({ id: p.toolCallId, name: p.toolName, output: output(p.output) })));
      }
      const turn = await script.next(seen);
      if (turn.text !== undefined) {
        return { content: [{ type: 'text', text: turn.text }], finishReason: 'stop', usage, warnings: [] };
      }
      return {
        content: turn.calls.map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.args) })),
        finishReason: 'tool-calls', usage, warnings: [],
      };
    },
  });
}

module.exports = { scripted };
