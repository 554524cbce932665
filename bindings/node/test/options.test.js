// SPDX-License-Identifier: MIT
'use strict';
// Table options as the extension reads them (issue 31, items 7 and 8):
// idem.calls() compares the options it is given with those idem parsed
// (idem_options()), never with the CREATE text, where a comment hides what
// SQLite hands idem; and it warns (a process 'warning', code
// IDEM_RELAXED_TABLE) about a table made with an option that weakens what
// a claim promises by default when it was not given that option.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');
const idem = require('sqlite-idem');

function open(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-node-'));
  const db = new Database(path.join(dir, 'app.db'));
  idem.load(db);
  t.after(() => { db.close(); fs.rmSync(dir, { recursive: true, force: true }); });
  return db;
}
const HIDDEN = "CREATE VIRTUAL TABLE calls USING idem(retain='1 seconds'/*,*/--,retain='30 days'\n)";

// The warnings (code IDEM_RELAXED_TABLE) emitted while fn runs; emitWarning
// delivers them on the next tick.
async function warnedBy(fn) {
  const seen = [];
  const listener = (w) => { if (w.code === 'IDEM_RELAXED_TABLE') seen.push(w); };
  const saved = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', listener);
  try {
    fn();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.removeListener('warning', listener);
    for (const l of saved) process.on('warning', l);
  }
  for (const w of seen) assert.equal(w.name, 'RelaxedTableWarning');
  return seen.map((w) => w.message);
}

test('a comment in the CREATE text hides nothing: the options idem parsed are compared', async (t) => {
  const db = open(t);
  db.exec(HIDDEN);
  assert.throws(() => idem.calls(db, 'calls', { retain: '30 days' }),
    /^TypeError: idem: the table "calls" exists with retain='1 second', not retain='30 days': a table's options are set when it is created/);
  assert.deepEqual(await warnedBy(() => idem.calls(db, 'calls', { retain: '1 second' })), []);
  assert.deepEqual(await warnedBy(() => idem.calls(db, 'calls', { retain: '1 seconds' })), []);
});

test('what the table does agrees: a call decided 1.3 s ago runs again', async (t) => {
  const db = open(t);
  db.exec(HIDDEN);
  const calls = idem.calls(db, 'calls', { retain: '1 second' });
  const runs = [];
  const order = calls.tool({ name: 'order' }, (d, { n }) => { runs.push(n); return n; });
  await order('a', 'c', { n: 1 });
  await order('a', 'c', { n: 1 });
  assert.deepEqual(runs, [1]);
  await new Promise((resolve) => setTimeout(resolve, 1300));
  await order('a', 'c', { n: 1 });
  assert.deepEqual(runs, [1, 1]);
});

test('other options hidden behind comments', async (t) => {
  const db = open(t);
  const cases = [
    ['durability=relaxed /* , durability=full */', { durability: 'relaxed' }, { durability: 'full' }, /durability=relaxed, not durability=full/],
    ["-- local_failure=keep\n retain='2 days'", { retain: '48 hours' }, { local_failure: 'keep' }, /local_failure=release \(the default\), not local_failure=keep/],
    ['args_mismatch=replay/*)*/', { args_mismatch: 'replay' }, { args_mismatch: 'error' }, /args_mismatch=replay, not args_mismatch=error/],
  ];
  for (const [i, [sql, good, bad, why]] of cases.entries()) {
    db.exec(`CREATE VIRTUAL TABLE t${i} USING idem(${sql})`);
    assert.deepEqual(await warnedBy(() => idem.calls(db, `t${i}`, good)), [], sql);
    assert.throws(() => idem.calls(db, `t${i}`, bad), why, sql);
  }
  db.exec('CREATE TABLE orders(x)');
  assert.throws(() => idem.calls(db, 'orders'),
    /^TypeError: idem: the table "orders" exists and is not an idem table \(CREATE TABLE orders\(x\)\); name another table$/);
});

test('a table that relaxes what a claim promises, not given: a warning for each option, naming it', async (t) => {
  const db = open(t);
  db.exec("CREATE VIRTUAL TABLE calls USING idem(durability=relaxed, retain='1 seconds', " +
    "args_mismatch=replay, local_failure=keep, stale_after='1 hour')");
  assert.deepEqual(await warnedBy(() => idem.calls(db)), [
    'idem: the table "calls" was made with args_mismatch=replay: a duplicate with other arguments ' +
      "replays the first call instead of failing; give { args_mismatch: 'replay' } to idem.calls() to accept it, or use another table",
    'idem: the table "calls" was made with durability=relaxed: a power loss may take back a claim, ' +
      "and its call may then run again; give { durability: 'relaxed' } to idem.calls() to accept it, or use another table",
    "idem: the table \"calls\" was made with retain='1 second': a decided call is forgotten 1 second after it " +
      "was decided, and an arrival after that runs it again; give { retain: '1 second' } to idem.calls() to accept it, or use another table",
  ]);
  assert.equal((await warnedBy(() => idem.calls(db, 'calls', { durability: 'relaxed' }))).length, 2);
  assert.deepEqual(await warnedBy(() => idem.calls(db, 'calls',
    { durability: 'relaxed', retain: '1 second', args_mismatch: 'replay' })), []);
});

test('a table made by default, or by idem.calls(), is quiet', async (t) => {
  const db = open(t);
  db.exec("CREATE VIRTUAL TABLE calls USING idem(local_failure=keep, stale_after='10 minutes')");
  assert.deepEqual(await warnedBy(() => idem.calls(db)), []);
  assert.deepEqual(await warnedBy(() => idem.calls(db, 'made', { retain: '1 day' })), []);
  assert.equal((await warnedBy(() => idem.calls(db, 'made'))).length, 1);
  db.exec(HIDDEN.replace('calls', 'hidden'));
  const [w] = await warnedBy(() => idem.calls(db, 'hidden'));
  assert.match(w, /retain='1 second'/);
});
