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
const { execFileSync } = require('node:child_process');
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

test("a temp table of the name is not the table: its options, claims and heartbeat are main's", async (t) => {
  // SQLite reads temp.calls first for an unqualified name; the package's
  // table is main's (doc/contract.md §5).
  const db = open(t);
  db.exec("CREATE VIRTUAL TABLE calls USING idem(stale_after='3 seconds')");
  db.exec('CREATE TEMP TABLE calls(x)');
  const calls = idem.calls(db, 'calls', { stale_after: '3 seconds' });
  assert.throws(() => idem.calls(db, 'calls', { stale_after: '1 minute' }),
    /^TypeError: idem: the table "calls" exists with stale_after='3 seconds', not stale_after='1 minute'/);
  assert.equal(calls._beatMs, 1000);
  const order = calls.tool({ name: 'order' }, (d, { n }) => n);
  assert.equal(await order('a', 'c', { n: 1 }), 1);
  assert.equal(await order('a', 'c', { n: 1 }), 1);
  assert.equal(db.prepare('SELECT count(*) AS n FROM main.calls WHERE member = 0').get().n, 1);
  assert.equal(db.prepare('SELECT count(*) AS n FROM temp.calls').get().n, 0);
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

// ---- the rules are the extension's (idem_parse_options(), idem_limits()) ---

// What CREATE VIRTUAL TABLE says of these options, on a database of its own.
function createError(table, texts) {
  const db = new Database(':memory:');
  idem.load(db);
  try {
    db.exec(`CREATE VIRTUAL TABLE ${table} USING idem(${texts.join(', ')})`);
  } catch (e) {
    return e.message;
  } finally {
    db.close();
  }
  throw new Error(`CREATE took ${texts}`);
}

test('a bad option is refused with the words of CREATE VIRTUAL TABLE, before anything is made', (t) => {
  const db = open(t);
  for (const [given, texts] of [
    [{ local_failure: 'kept' }, ['local_failure=kept']],
    [{ retain: 'forever' }, ['retain=forever']],
    [{ retain: '36526 days' }, ["retain='36526 days'"]],
    [{ stale_after: '1.5 fortnights' }, ["stale_after='1.5 fortnights'"]],
    [{ max_sends: '0' }, ['max_sends=0']],
    [{ max_sends: '101' }, ['max_sends=101']],
    [{ honours_key: 'maybe' }, ['honours_key=maybe']],
    [{ locl_failure: 'keep' }, ['locl_failure=keep']],
    [{ retain: '1 day', Retain: '2 days' }, ["retain='1 day'", "retain='2 days'"]],
    [{ stale_after: '0.2 seconds' }, ["stale_after='0.2 seconds'"]],   // under three heartbeats (§11)
  ]) {
    let message;
    assert.throws(() => idem.calls(db, 't1', given), (e) => {
      message = e.message;
      return e instanceof TypeError;
    });
    assert.equal(message, createError('t1', texts));
    assert.match(message, /^idem: t1: /);
  }
  assert.equal(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 't1'").get().n, 0);
});

test('the package carries no copy of the rules', () => {
  const src = fs.readFileSync(require.resolve('sqlite-idem'), 'utf8');
  for (const copy of ['36525', 'NOTE_MAX', 'DURATION', 'SWITCHES', 'release|keep', '2000']) {
    assert.equal(src.includes(copy), false, copy);
  }
});

// How many refused resends in a row (nothing moved) end a call's wait for
// its resend: then it replays the call as it stands.
async function refusedResends(db) {
  const calls = idem.calls(db, 'r', { honours_key: 'yes', resend_after: '0.01 seconds' });
  calls.resendWaitMs = 0;
  const send = calls.tool({ kind: 'external', name: 'send', honoursKey: true }, async () => {
    throw new Error('no answer');
  });
  await assert.rejects(send('a', 'c', { n: 1 }), idem.Unknown);
  let tries = 0;
  const take = calls._take.bind(calls);
  calls._take = (key, row, resend) => {
    if (!resend) return take(key, row, resend);
    tries += 1;
    return { refused: new Error('idem: r: refused') };
  };
  calls.resendWaitMs = 10000;
  await assert.rejects(send('a', 'c', { n: 1 }), idem.Unknown);
  return tries;
}

test('a change in C alone is seen: a build with other limits, and the package follows it', async (t) => {
  const ext = path.join(__dirname, '..', '..', '..', 'ext', 'idem.c');
  let cc = null;
  for (const c of ['cc', 'gcc']) {
    try { execFileSync(c, ['--version'], { stdio: 'ignore' }); cc = c; break; } catch (e) { /* next */ }
  }
  if (cc === null || !fs.existsSync(ext)) {
    t.skip('no C compiler or no ext/ here (an installed copy)');
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-variant-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const so = path.join(dir, 'idem.so');
  execFileSync(cc, ['-O0', '-w', '-fPIC', '-shared', '-DIDEM_NOTE_MAX=40', '-DIDEM_MAX_SENDS_LIMIT=7',
    '-DIDEM_RESEND_REFUSALS=2', '-o', so, ext]);
  const db = new Database(path.join(dir, 'v.db'));
  t.after(() => db.close());
  db.loadExtension(so);
  assert.throws(() => idem.calls(db, 'v', { max_sends: '8' }),
    /^TypeError: idem: v: bad value '8' for max_sends; use a whole number from 1 to 7:/);
  const calls = idem.calls(db, 'v', { max_sends: '7', local_failure: 'keep' });
  const fail = calls.tool({ kind: 'local', name: 'fail' }, () => { throw new Error('x'.repeat(5000)); });
  await assert.rejects(fail('a', 'c', { n: 1 }), /xxxx/);
  const note = db.prepare('SELECT note FROM v WHERE member = 0').get().note;
  assert.deepEqual([note.length, note.slice(-3)], [40, '...']);
  assert.equal(await refusedResends(db), 2);
  // The same on the package's own build: its limits are C's defaults.
  const own = open(t);
  const calls2 = idem.calls(own, 'w', { max_sends: '8', local_failure: 'keep' });
  const fail2 = calls2.tool({ kind: 'local', name: 'fail' }, () => { throw new Error('x'.repeat(5000)); });
  await assert.rejects(fail2('a', 'c', { n: 1 }), /xxxx/);
  assert.equal(own.prepare('SELECT note FROM w WHERE member = 0').get().note.length, 2000);
  assert.equal(await refusedResends(own), 3);
});
