// SPDX-License-Identifier: MIT
'use strict';
// A LangChain chat model for tests, playing a Script (../harness/script.js).
// @langchain/core's own fakes (FakeListChatModel, FakeStreamingChatModel)
// answer text or one fixed message, not tool calls that change from turn
// to turn; this one is a BaseChatModel whose _generate reads the tool
// results at the end of the messages (what the model was handed since its
// last turn) and answers the script's next turn as an AIMessage.
const { BaseChatModel } = require('@langchain/core/language_models/chat_models');
const { AIMessage } = require('@langchain/core/messages');
const { parsed } = require('../harness/script.js');

class ScriptedChatModel extends BaseChatModel {
  constructor(script) {
    super({});
    this.script = script;
  }

  _llmType() {
    return 'scripted';
  }

  bindTools() {
    return this;                   // the script knows its tools
  }

  async _generate(messages) {
    const seen = [];
    for (let i = messages.length - 1; i >= 0 && messages[i].getType() === 'tool'; i--) {
      const m = messages[i];
      const output = parsed(m.content);
      seen.unshift({ id: m.tool_call_id, name: m.name, output: m.status === 'error' ? { error: output } : output });
    }
    const turn = await this.script.next(seen);
    const message = turn.text !== undefined
      ? new AIMessage(turn.text)
      : new AIMessage({ content: '', tool_calls: turn.calls.map((c) => ({ id: c.id, name: c.name, args: c.args, type: 'tool_call' })) });
    return { generations: [{ message, text: turn.text || '' }] };
  }
}

const scripted = (script) => new ScriptedChatModel(script);

module.exports = { scripted, ScriptedChatModel };
