// SPDX-License-Identifier: MIT
// example.js -- idem from Node.js, with better-sqlite3.
//
//   npm install --prefix build/node better-sqlite3@12      (once)
//   NODE_PATH=build/node/node_modules node test/examples/node/example.js [database]
//
// (after `make` has built build/idem.so).  better-sqlite3 brings its own
// SQLite; db.loadExtension() loads idem into it.  One tool call,
// place_order, arrives twice: the first claims, acts and records in one
// transaction; the model's retry (spelled differently) is a duplicate, does
// not act, and gets back the reply that the first arrival recorded.
'use strict';
const path = require('node:path');
const Database = require('better-sqlite3');

// The extension, without its suffix; IDEM_LIB points at another build.
const ext = process.env.IDEM_LIB
  ? process.env.IDEM_LIB.replace(/\.(so|dylib)$/, '')
  : path.join(__dirname, '..', '..', '..', 'build', 'idem');

const db = new Database(process.argv[2] || ':memory:', { timeout: 5000 });
db.loadExtension(ext);
db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS calls USING idem;
         CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, sku, qty)`);

const claim = db.prepare(
  'INSERT OR IGNORE INTO calls(who, conv, tool, args) VALUES (?, ?, ?, ?)');
const replay = db.prepare(
  'SELECT reply FROM calls WHERE key = idem_key(?, ?, ?, ?) AND member = 0');
const record = db.prepare(`UPDATE calls SET status = 'done', id = ?, result = ?
                            WHERE key = idem_key(?, ?, ?, ?) AND member = 0`);
const insertOrder = db.prepare('INSERT INTO orders(sku, qty) VALUES (?, ?)');

// One arrival of the tool call.  db.transaction(...).immediate() runs it in
// BEGIN IMMEDIATE ... COMMIT, and rolls back if it throws.
const placeOrder = db.transaction((who, conv, args) => {
  const call = [who, conv, 'place_order', JSON.stringify(args)];
  if (claim.run(...call).changes === 0) {
    // A duplicate: never act; hand back what the first arrival recorded.
    return JSON.parse(replay.get(...call).reply);
  }
  const id = Number(insertOrder.run(args.sku, args.qty).lastInsertRowid);
  const result = { order: id };
  record.run(id, JSON.stringify(result), ...call);
  return { id, idempotent: false, result, status: 'done' };
});

const { v } = db.prepare('SELECT idem_version() AS v').get();
console.log(`idem ${v} in SQLite ${db.prepare('SELECT sqlite_version() AS s').get().s} (better-sqlite3)`);
const first = placeOrder.immediate('alice', 'conv-7', { sku: 'A0001', qty: 2 });
console.log('first: ', JSON.stringify(first));
const retry = placeOrder.immediate('alice', 'conv-7', { qty: 2, sku: 'A0001' });
console.log('retry: ', JSON.stringify(retry));
const { n } = db.prepare('SELECT count(*) AS n FROM orders').get();
console.log('orders:', n);
db.close();
process.exit(retry.idempotent === true && n === 1 ? 0 : 1);
