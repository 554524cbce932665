// SPDX-License-Identifier: MIT
'use strict';
// CommonJS and ES modules both load the package (issue 24 item 6), as a
// user's project finds it: in a node_modules beside the script, without
// NODE_PATH (which import ignores), and TypeScript types both ways.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

// The node_modules that holds better-sqlite3 and sqlite-idem.
const modules = path.dirname(path.dirname(require.resolve('better-sqlite3/package.json')));

function project(t, files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-mod-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

function node(dir, args) {
  const env = { ...process.env };
  delete env.NODE_PATH;
  const r = spawnSync(process.execPath, args, { cwd: dir, env, encoding: 'utf8' });
  return [r.status, (r.stdout + r.stderr).trim()];
}

const BODY = `
const db = new Database(':memory:');
db.exec('CREATE TABLE orders(id INTEGER PRIMARY KEY, sku)');
const c = calls(db, 'calls');
const place = c.tool({ name: 'place' }, (db, { sku }) =>
  ({ order: Number(db.prepare('INSERT INTO orders(sku) VALUES (?)').run(sku).lastInsertRowid) }));
const a = await place.run('alice', 'conv-1', { sku: 'S' });
const b = await place.run('alice', 'conv-1', { sku: 'S' });
console.log(JSON.stringify([a.replayed, b.replayed, b.result, b instanceof Outcome]));
`;

test('ESM: import idem from and import { calls } from sqlite-idem', (t) => {
  const dir = project(t, {
    'app.mjs': `import Database from 'better-sqlite3';
import idem, { calls, Outcome, NotSent, Lost, NotRecorded, Unstorable, HEADER } from 'sqlite-idem';
import { createRequire } from 'node:module';
const cjs = createRequire(import.meta.url)('sqlite-idem');
console.log(JSON.stringify([idem === cjs, calls === cjs.calls, Outcome === idem.Outcome,
  new NotSent() instanceof cjs.NotSent, typeof Lost, typeof NotRecorded, Unstorable === cjs.Unstorable, HEADER]));
${BODY}`,
  });
  assert.deepEqual(node(dir, ['app.mjs']), [0,
    '[true,true,true,true,"function","function",true,"Idempotency-Key"]\n[false,true,{"order":1},true]']);
});

test('CommonJS: require(sqlite-idem), and its package.json', (t) => {
  const dir = project(t, {
    'app.js': `const Database = require('better-sqlite3');
const { calls, Outcome } = require('sqlite-idem');
console.log(require('sqlite-idem/package.json').name);
(async () => {${BODY}})();`,
  });
  assert.deepEqual(node(dir, ['app.js']), [0, 'sqlite-idem\n[false,true,{"order":1},true]']);
});

// One tsc run (a few seconds of CPU) checks both: under module node16 a .ts
// file of a package without "type" is CommonJS, a .mts file an ES module.
test('TypeScript: the types under require (a tool runner) and under import', (t) => {
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
  const dir = project(t, {
    'runner.ts': `
import Database = require('better-sqlite3');
import * as idem from 'sqlite-idem';
const db = new Database(':memory:');
const calls = idem.calls(db, 'calls', { local_failure: 'keep' });
const placeOrder = calls.tool({ kind: 'local', name: 'place_order', keyargs: ['sku'] },
  (db, args: { sku: string; qty: number }) => new idem.Result({ order: 1 }, 1));
const charge = calls.tool({ kind: 'external', name: 'charge' },
  async (args: { cents: number }, { idempotencyKey }) => ({ key: idempotencyKey, cents: args.cents }));
async function main(): Promise<number> {
  const r: { order: number } = await placeOrder('alice', 'c', { sku: 'A', qty: 2 });
  const c: { key: string; cents: number } = await charge('alice', 'c', { cents: 5 });
  try { await charge('a', 'c', { cents: 1 }); } catch (e) {
    if (e instanceof idem.Unknown) return e.reply.status === 'unknown' ? 1 : 0;
  }
  const k: string = placeOrder.key('alice', 'c', { sku: 'A', qty: 2 });
  const o: idem.Outcome<{ order: number }> = await placeOrder.run('alice', 'c', { sku: 'A', qty: 2 });
  const replayed: boolean = o.replayed;
  const id: string | number | bigint | Uint8Array | null = o.id;   // bytes: a blob id
  const w: idem.Outcome = await calls.waitOutcome(o.key, 10);
  calls.reconcile(k, 'arrived', { id: 'x', result: { any: 1 }, note: 'checked' });
  // @ts-expect-error: an id is one SQL value, not an object
  calls.reconcile(k, 'arrived', { id: { a: 1 } });
  const who: string = await calls.tool({ name: 'w' }, () => 'ok')(42, Buffer.from('c'));
  calls.reconcile(k, 'not_sent');
  calls.recordTimeoutMs = 1000;
  calls.resendWaitMs = 1000;
  const sent: number | null = (await calls.tool({ kind: 'external', name: 'r', honoursKey: true },
    () => 1).run('a', 'c')).sends;
  try { await charge('a', 'c', { cents: 1 }); } catch (e) {
    if (e instanceof idem.Lost || e instanceof idem.NotRecorded) return e.status === 'done' ? e.key.length : 0;
    if (e instanceof idem.NotSent) return e.key ? 1 : 0;
  }
  const t: 'local' | 'external' = charge.kind;
  return r.order + c.cents + k.length + idem.loadablePath().length + Number(replayed) + String(id).length + w.key.length + t.length;
}
const send = calls.tool({ kind: 'external', name: 'send', keyargs: ['to'], params: ['to', 'text'] },
  async (args: { to: string; text: string }) => { throw new idem.NotSent('down', { cause: args }); });
// @ts-expect-error: keyargs names an argument the tool does not take
calls.tool({ name: 'y', keyargs: ['skuu'] }, (db, args: { sku: string }) => 1);
// @ts-expect-error: a release keeps no result
calls.reconcile('k', 'not_sent', { result: 1 });
// @ts-expect-error: no such verdict
calls.reconcile('k', 'done');
// @ts-expect-error: a local tool's body gets (db, args)
calls.tool({ name: 'x' }, (args: { a: number }, ctx: { idempotencyKey: string }) => 1);
main();
send('a', 'c', { to: 'b', text: 't' });
`,
    'app.mts': `import Database from 'better-sqlite3';
import idem, { calls, Outcome, NotSent } from 'sqlite-idem';
const db = new Database(':memory:');
const c = calls(db, 'calls', { local_failure: 'keep' });
const place = c.tool({ name: 'place', keyargs: ['sku'] }, (db, { sku }: { sku: string; qty: number }) =>
  ({ order: Number(db.prepare('SELECT 1').get() ? 1 : 0), sku }));
const o: Outcome<{ order: number; sku: string }> = await place.run('a', 'c', { sku: 'S', qty: 1 });
const replayed: boolean = o.replayed;
const e: Error = new NotSent('down', { cause: new Error('x') });
const h: 'Idempotency-Key' = idem.HEADER;
console.log(replayed, e, h, o.id, o.key);
// @ts-expect-error: not a table option
calls(db, 'x', { local_failur: 'keep' });
`,
  });
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'node16',
    '--moduleResolution', 'node16', '--target', 'es2022', '--types', 'node',
    '--typeRoots', path.join(modules, '@types'), path.join(dir, 'runner.ts'), path.join(dir, 'app.mts')], { encoding: 'utf8' });
  assert.equal(r.stdout + r.stderr, '');
  assert.equal(r.status, 0);
});
