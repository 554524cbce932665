// SPDX-License-Identifier: MIT
'use strict';
// Mistakes are errors, not silence (issue 24 item 4): keyargs that are not
// parameters of the tool, arguments of the wrong type, options that differ
// from the existing table's, values JSON cannot hold in a key.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');
const idem = require('sqlite-idem');

function setup(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idem-node-'));
  const db = new Database(path.join(dir, 'app.db'));
  t.after(() => { db.close(); fs.rmSync(dir, { recursive: true, force: true }); });
  return { db, calls: idem.calls(db) };
}
const tables = (db) => db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%' ORDER BY name").all().map((r) => r.name);

test('keyargs: a name that is not a parameter of the tool is refused at definition', (t) => {
  const { calls } = setup(t);
  assert.throws(() => calls.tool({ name: 'place', keyargs: ['skuu'] }, (db, { sku, qty }) => 1),
    /^TypeError: idem: tool place: keyargs names skuu, which is not a parameter of the tool \(its parameters: sku, qty\); a misspelt name would give every call of the tool one key$/);
  assert.throws(() => calls.tool({ kind: 'external', name: 'charge', keyargs: ['cents', 'currency'] },
    async ({ cents }, { idempotencyKey }) => 1), /keyargs names currency, which is not/);
  // The local body's args are its second parameter, the external's its first.
  assert.throws(() => calls.tool({ name: 'p', keyargs: ['sku'] }, ({ sku }, db) => 1), /not an object pattern/);
  // Every form of an object pattern.
  const place = calls.tool({ name: 'place', keyargs: ['sku', 'qty', 'a b', 'note'] },
    function place(db, { sku, qty = 1, 'a b': ab, note: { text } = {} } = {}) { return [sku, qty, ab, text]; });
  assert.equal(typeof place, 'function');
  calls.tool({ name: 'm', keyargs: ['to'] }, { m(db, { to, /* cc, */ body = ')' }) {} }.m);
});

test('keyargs: args that cannot be checked need params', (t) => {
  const { calls } = setup(t);
  const bodies = [(db, args) => args.sku, (db, { sku, ...rest }) => sku, (db) => 1,
    function (db, { sku }) {}.bind(null)];
  for (const fn of bodies) {
    assert.throws(() => calls.tool({ name: 'place', keyargs: ['sku'] }, fn),
      /keyargs \["sku"\] cannot be checked against the tool's parameters: its args parameter is not an object pattern that names them \(\{ sku, qty \}\); give them as params/);
    assert.equal(typeof calls.tool({ name: 'place', keyargs: ['sku'], params: ['sku', 'qty'] }, fn), 'function');
    assert.throws(() => calls.tool({ name: 'place', keyargs: ['skuu'], params: ['sku', 'qty'] }, fn),
      /keyargs names skuu, which is not a parameter of the tool \(params: sku, qty\)/);
  }
  // A function of args is code of its own: not checked.
  calls.tool({ name: 'place', keyargs: (a) => ({ sku: a.sku }) }, (db, args) => 1);
  assert.throws(() => calls.tool({ name: 'p', keyargs: 'sku' }, (db, { sku }) => 1), /keyargs must be an array of argument names or a function/);
  assert.throws(() => calls.tool({ name: 'p', keyargs: [1] }, (db, { sku }) => 1), /keyargs must be/);
  assert.throws(() => calls.tool({ name: 'p', params: 'sku' }, (db, { sku }) => 1), /params must be an array/);
});

test('tool(): options and fn are checked', (t) => {
  const { calls } = setup(t);
  assert.throws(() => calls.tool({ name: 'p', keyarg: ['sku'] }, (db, { sku }) => 1), /no option "keyarg" \(kind, name, keyargs, params, honoursKey\)/);
  assert.throws(() => calls.tool({ name: 'p' }), /fn must be a function, not undefined/);
  assert.throws(() => calls.tool('place', () => 1), /options must be a plain object, not the string "place"/);
  assert.throws(() => calls.tool({ name: 7 }, () => 1), /needs a name/);
  assert.throws(() => calls.tool({}, () => 1), /needs a name/);
  assert.throws(() => calls.tool({ kind: 'remote', name: 'x' }, () => 1), /kind must be 'local' or 'external'/);
});

test('calls(): a table name that is not a string is an error, not a table "[object Object]"', (t) => {
  const { db } = setup(t);
  assert.throws(() => idem.calls(db, { local_failure: 'keep' }),
    /table must be the table's name \(a string\), not an object \(Object\); options come third: idem.calls\(db, 'calls', \{"local_failure":"keep"\}\)/);
  assert.throws(() => idem.calls(db, 7), /table must be the table's name/);
  assert.throws(() => idem.calls(db, ''), /table must be the table's name/);
  assert.throws(() => idem.calls(db, 'x', 'keep'), /options must be a plain object, not the string "keep"/);
  // A schema-qualified name: refused by the extension's one rule
  // (idem_parse_options(), doc/contract.md §5), as Python and Go refuse it;
  // it made a table of main literally named "temp.calls".
  for (const name of ['temp.calls', 'main.calls', 'a.b.c']) {
    assert.throws(() => idem.calls(db, name), { name: 'TypeError', message: `idem: the table name '${name}' holds a '.': a package makes and uses its table in the main database by the name it is given, where SQL would read a schema before the '.' (temp.calls: the table calls of the schema temp); give the table's name alone` });
  }
  assert.equal(db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name LIKE '%.%'").get().n, 0);
  assert.equal(db.prepare('SELECT count(*) AS n FROM sqlite_temp_schema').get().n, 0);
  assert.throws(() => idem.calls(db, 'x', { local_failure: 'keep, retain=1 day' }),
    /^TypeError: idem: the table option local_failure="keep, retain=1 day" is blank or holds a character that an option value cannot hold/);
  assert.throws(() => idem.calls(db, 'x', { retain: ' ' }), /is blank/);
  // The extension's own words (doc/reference.md), before anything is made
  // (options.test.js: word for word those of CREATE).
  assert.throws(() => idem.calls(db, 'x', { local_failure: 'kept' }),
    /^TypeError: idem: x: unknown value 'kept' for local_failure; use local_failure=release \(the default\) or local_failure=keep$/);
  assert.throws(() => idem.calls(db, 'x', { retain: 'forever' }),
    /^TypeError: idem: x: bad duration 'forever' for retain; use a positive number and a unit of seconds, minutes, hours or days \(at most 36525 days\), e.g. retain='24 hours'$/);
  assert.throws(() => idem.calls(db, 'x', { retain: '36526 days' }), /bad duration '36526 days'/);
  assert.throws(() => idem.calls(db, 'x', { retain: 86400 }),
    /^TypeError: idem: the table option retain must be a string \(such as '30 days' or 'keep'\), not 86400$/);
  assert.throws(() => idem.calls(db, 'x', { locl_failure: 'keep' }),
    /^TypeError: idem: x: unknown option 'locl_failure=keep'; the options are local_failure=release\|keep, durability=full\|relaxed, args_mismatch=error\|replay, retain=<duration>, stale_after=<duration>, honours_key=no\|yes, max_sends=<1 to 100> and resend_after=<duration>$/);
  assert.throws(() => idem.calls(db, 'x', { 'local failure': 'keep' }), /unknown option 'local failure=keep'/);
  assert.throws(() => idem.calls('app.db'), /db must be a better-sqlite3 Database, not the string "app.db"/);
  assert.throws(() => idem.calls(), /db must be a better-sqlite3 Database, not undefined/);
  assert.throws(() => idem.load({}), /db must be a better-sqlite3 Database/);
  assert.deepEqual(tables(db), ['calls']);
  // A duration is quoted as the table needs it.
  idem.calls(db, 'kept', { retain: '24 hours', local_failure: 'keep' });
  assert.equal(db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'kept'").get().sql,
    'CREATE VIRTUAL TABLE "kept" USING idem(retain=\'24 hours\', local_failure=keep)');
});

test('calls(): options that differ from the existing table\'s are an error', (t) => {
  const { db } = setup(t);
  db.exec("CREATE VIRTUAL TABLE k USING idem(local_failure = keep, retain = '1 day')");
  idem.calls(db, 'k');                                            // as it is
  idem.calls(db, 'k', { local_failure: 'KEEP' });                 // the same
  idem.calls(db, 'K', { retain: '24 hours', args_mismatch: 'error' });   // the same duration; a default
  assert.throws(() => idem.calls(db, 'k', { local_failure: 'release' }),
    /^TypeError: idem: the table "k" exists with local_failure=keep, not local_failure=release: a table's options are set when it is created; leave the option out to use the table as it is, or use another table$/);
  assert.throws(() => idem.calls(db, 'k', { retain: '2 days' }), /exists with retain='1 day', not retain='2 days'/);
  assert.throws(() => idem.calls(db, 'k', { stale_after: '5 minutes' }), /exists with no stale_after, not stale_after='5 minutes'/);
  assert.throws(() => idem.calls(db, 'calls', { local_failure: 'keep' }),
    /exists with local_failure=release \(the default\), not local_failure=keep/);
  idem.calls(db, 'calls', { local_failure: 'release', durability: 'full' });   // the defaults
  idem.calls(db, 'made', { LOCAL_FAILURE: 'keep', retain: '24 hours' });
  assert.equal(db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'made'").get().sql,
    'CREATE VIRTUAL TABLE "made" USING idem(local_failure=keep, retain=\'24 hours\')');
  db.exec('CREATE TABLE plain(a)');
  assert.throws(() => idem.calls(db, 'plain'), /^TypeError: idem: the table "plain" exists and is not an idem table \(CREATE TABLE plain\(a\)\); name another table$/);
});

test('key(): NaN, Infinity, BigInt, undefined in an array are TypeErrors that name the path', async (t) => {
  const { db, calls } = setup(t);
  const place = calls.tool({ name: 'place' }, (db, { x }) => x);
  const cases = [
    [{ x: NaN }, 'args.x is NaN, which JSON has no form for'],
    [{ a: [1, Infinity] }, 'args.a[1] is Infinity, which JSON has no form for'],
    [{ a: { 'b c': -Infinity } }, 'args.a["b c"] is -Infinity, which JSON has no form for'],
    [{ n: 1n }, 'args.n is a BigInt (1n), which JSON has no form for; convert it: Number(x) below 2^53, else String(x)'],
    [{ a: [undefined] }, 'args.a[0] is undefined, which JSON has no form for; JSON.stringify would write null in an array'],
    [{ f: () => 1 }, 'args.f is a function, which JSON has no form for; JSON.stringify would leave it out'],
    [{ d: new Set([1]) }, 'args.d is a Set, which JSON has no form for; JSON.stringify would write its own enumerable properties only, if any; convert it, or give its class a toJSON()'],
  ];
  for (const [args, why] of cases) {
    assert.throws(() => calls.key('a', 'c', 'place', args), { name: 'TypeError', message: `idem: the arguments of place are not JSON: ${why}` });
    assert.throws(() => place.key('a', 'c', args), { name: 'TypeError', message: `idem: the arguments of place are not JSON: ${why}` });
    await assert.rejects(place('a', 'c', args), { name: 'TypeError', message: `idem: the arguments of place are not JSON: ${why}` });
  }
  assert.equal(db.prepare('SELECT count(*) AS n FROM calls').get().n, 0);
  // What JSON.stringify writes for them is not the same call any more.
  assert.notEqual(calls.key('a', 'c', 'place', { x: null }), undefined);
  // An undefined member is an argument not given, as JSON.stringify has it;
  // toJSON is honoured (a Date and a Buffer are refused: rules.test.js).
  assert.equal(calls.key('a', 'c', 'place', { x: 1, y: undefined }), calls.key('a', 'c', 'place', { x: 1 }));
  class When { toJSON() { return '1970-01-01T00:00:00.000Z'; } }
  assert.equal(calls.key('a', 'c', 'place', { d: new When() }), calls.key('a', 'c', 'place', { d: '1970-01-01T00:00:00.000Z' }));
});

test('who, conv and args are checked', async (t) => {
  const { calls } = setup(t);
  const place = calls.tool({ name: 'place' }, (db, { x = null }) => x);
  await assert.rejects(place(undefined, 'c', {}), /^TypeError: idem: place\(who, conv, args\): who must be a string, an integer or bytes \(the user or principal\), not undefined$/);
  await assert.rejects(place('a', 4.5, {}), /conv must be a string, an integer or bytes \(the conversation or session\), not 4.5/);
  await assert.rejects(place('a', 'c', [1]), /args must be a plain object of named arguments, not an array/);
  await assert.rejects(place('a', 'c', 'x=1'), /args must be a plain object/);
  assert.equal(await place('a', 'c'), null);                     // no args: {}
  assert.throws(() => calls.key('a', 'c', null, {}), /tool must be a non-empty string/);
  assert.throws(() => calls.key('a', 'c', 't', undefined), /^TypeError: idem: the arguments of t are not JSON: args is undefined, which JSON has no form for$/);
  assert.equal(calls.key('a', 'c', 't', '{"b":1,"a":2}'), calls.key('a', 'c', 't', { a: 2, b: 1 }));
});

test('times are checked: a wait or a record can never loop for ever', async (t) => {
  const { calls } = setup(t);
  assert.throws(() => { calls.recordTimeoutMs = '100'; }, /calls.recordTimeoutMs must be a number of milliseconds \(0 or more\), not the string "100"/);
  assert.throws(() => { calls.recordTimeoutMs = NaN; }, /not NaN/);
  assert.throws(() => { calls.recordTimeoutMs = Infinity; }, /not Infinity/);
  assert.equal(calls.recordTimeoutMs, 30000);
  calls.recordTimeoutMs = 0;
  assert.equal(calls.recordTimeoutMs, 0);
  const key = '0'.repeat(32);
  await assert.rejects(calls.wait(key, '20'), /timeoutMs must be a number of milliseconds/);
  await assert.rejects(calls.waitOutcome(key, 20, -1), /intervalMs must be a number of milliseconds \(0 or more\), not -1/);
  await assert.rejects(calls.wait(key, 20), /no call 0{32} is claimed/);
});
