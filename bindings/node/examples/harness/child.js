// SPDX-License-Identifier: MIT
'use strict';
// One run of a framework example in a process of its own.
//
//   node ../harness/child.js .        (npm start in an example: the demo)
//
// The demo starts the HTTP target, plays a conversation in which the model
// repeats each of its two tool calls, and prints what the model was handed.
//
// The tests (harness/suite.js) start it with a run in the environment, to
// kill it mid-run or to run two at once: IDEM_DB, TARGET_URL,
// TARGET_TIMEOUT_MS, WAIT_MS, IDEM_USER, IDEM_CONV, SCRIPT (the turns, as
// JSON), HOLD_AT (the turn at which the model stops answering) and
// WAIT_FOR_GO (print {"event":"ready"}, then start at a line on stdin).
// It prints one JSON line per event: {"event":"turn","turn":i} as the
// model's turn i starts, {"event":"held","turn":i}, and at the end
// {"event":"end","turns":[...]}.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { converse } = require('./script.js');
const { startTarget } = require('./target.js');

const dir = path.resolve(process.argv[2] || '.');
const shop = require(path.join(dir, 'shop.js'));
const model = require(path.join(dir, 'model.js'));
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

async function child(env) {
  if (env.WAIT_FOR_GO) {
    const lines = readline.createInterface({ input: process.stdin });
    emit({ event: 'ready' });
    await new Promise((resolve) => lines.once('line', resolve));
    lines.close();
  }
  const holdAt = env.HOLD_AT === undefined ? undefined : Number(env.HOLD_AT);
  const turns = await converse(shop, model, {
    file: env.IDEM_DB, targetUrl: env.TARGET_URL,
    timeoutMs: Number(env.TARGET_TIMEOUT_MS || 5000), waitMs: Number(env.WAIT_MS || 0),
    user: env.IDEM_USER, conversation: env.IDEM_CONV, turns: JSON.parse(env.SCRIPT), holdAt,
    onTurn: (turn) => emit({ event: turn === holdAt ? 'held' : 'turn', turn }),
  });
  emit({ event: 'end', turns });
}

async function demo() {
  const target = await startTarget();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-demo-'));
  const show = (v) => JSON.stringify(v);
  try {
    const turns = await converse(shop, model, {
      file: path.join(tmp, 'shop.db'), targetUrl: target.url, timeoutMs: 5000,
      user: 'alice', conversation: 'conv-1',
      turns: [
        [{ name: 'place_order', args: { sku: 'A0001', qty: 2 } }],
        [{ name: 'place_order', args: { qty: 2, sku: 'A0001' } }],
        [{ name: 'charge_card', args: { cents: 1990 } }],
        [{ name: 'charge_card', args: { cents: 1990 } }],
        'Your order is placed and paid.',
      ],
    });
    console.log(`${path.basename(dir)}: alice, conv-1, with the framework's test model`);
    turns.forEach((turn, i) => {
      for (const r of turn.seen) console.log(`  model got     ${r.name}: ${show(r.output)}`);
      for (const c of turn.calls) console.log(`  model calls   ${c.name} ${show(c.args)}  (tool-call id ${c.id})`);
      if (turn.text !== undefined) console.log(`  model says    ${show(turn.text)}`);
      if (i < turns.length - 1) console.log('  --');
    });
    const s = shop.open(path.join(tmp, 'shop.db'), { targetUrl: target.url });
    const orders = s.db.prepare('SELECT count(*) AS n FROM orders').get().n;
    s.close();
    console.log(`orders in SQLite: ${orders}; charges that reached the target: ${target.arrivals}`);
  } finally {
    await target.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

(process.env.SCRIPT ? child(process.env) : demo()).then(() => process.exit(0), (e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
