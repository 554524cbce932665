-- SPDX-License-Identifier: MIT
-- test/demo.sql: idem at work, in the sqlite3 shell (run it: make demo).
-- Read it top to bottom; every block says what it shows.
.load build/idem
.headers on
.mode box --wrap 160

.print
.print '== 1. The key: one call, one key ========================================'
.print 'idem_key(who, conv, tool, args) hashes the canonical (RFC 8785) args,'
.print 'so two spellings of the same call give one key ...'
SELECT idem_canonical('{ "qty": 2.0, "sku": "A0001" }') AS canonical,
       idem_key('alice', 'conv-7', 'checkout', '{ "qty": 2.0, "sku": "A0001" }')
     = idem_key('alice', 'conv-7', 'checkout', '{"sku":"A0001","qty":2}') AS same_key;
.print '... while another user, or another conversation, is another write:'
SELECT idem_key('alice', 'conv-7', 'checkout', '{"sku":"A0001","qty":2}')
     = idem_key('bob',   'conv-7', 'checkout', '{"sku":"A0001","qty":2}') AS same_user,
       idem_key('alice', 'conv-7', 'checkout', '{"sku":"A0001","qty":2}')
     = idem_key('alice', 'conv-8', 'checkout', '{"sku":"A0001","qty":2}') AS same_conv;

.print
.print '== 2. The claim: INSERT before acting; changes() says who owns it ======='
CREATE VIRTUAL TABLE calls USING idem;
CREATE TABLE orders(id INTEGER PRIMARY KEY, sku TEXT, qty INTEGER);
.print 'A local tool: claim, act and record in ONE transaction.'
BEGIN IMMEDIATE;
INSERT OR IGNORE INTO calls(who, conv, tool, args)
  VALUES('alice', 'conv-7', 'checkout', '{"sku":"A0001","qty":2}');
SELECT changes() AS claimed;                       -- 1: we own it, so we act
INSERT INTO orders(sku, qty) VALUES('A0001', 2);
UPDATE calls SET status = 'done', id = last_insert_rowid(), result = '{"order":1}'
 WHERE key = idem_key('alice', 'conv-7', 'checkout', '{"sku":"A0001","qty":2}')
   AND member = 0;
COMMIT;

.print
.print '== 3. The model retries, spelled differently: replayed, never re-run ===='
INSERT OR IGNORE INTO calls(who, conv, tool, args)
  VALUES('alice', 'conv-7', 'checkout', '{ "qty": 2, "sku": "A0001" }');
SELECT changes() AS claimed;                       -- 0: a duplicate; do not act
SELECT reply FROM calls
 WHERE key = idem_key('alice', 'conv-7', 'checkout', '{"qty":2,"sku":"A0001"}');
SELECT count(*) AS orders_taken FROM orders;
.print 'A plain INSERT says so as an error (SQLITE_CONSTRAINT); the next line'
.print 'is expected to fail:'
INSERT INTO calls(who, conv, tool, args)
  VALUES('alice', 'conv-7', 'checkout', '{"qty":2,"sku":"A0001"}');

.print
.print '== 4. A compound write is replayed as a whole group ====================='
BEGIN IMMEDIATE;
INSERT INTO calls(who, conv, tool, args)
  VALUES('alice', 'conv-7', 'split_shipment', '{"order":1,"parts":2}');
INSERT INTO calls(key, member, id, result)
  VALUES(idem_key('alice','conv-7','split_shipment','{"order":1,"parts":2}'), 1, 'ship-1', '{"box":1}'),
        (idem_key('alice','conv-7','split_shipment','{"order":1,"parts":2}'), 2, 'ship-2', '{"box":2}');
UPDATE calls SET status = 'done', id = 'shipment-9'
 WHERE key = idem_key('alice','conv-7','split_shipment','{"order":1,"parts":2}') AND member = 0;
COMMIT;
SELECT member, status, id, result FROM calls
 WHERE key = idem_key('alice','conv-7','split_shipment','{"order":1,"parts":2}');

.print
.print '== 5. A local failure releases the claim: the retry really runs ========'
BEGIN IMMEDIATE;
INSERT INTO calls(who, conv, tool, args) VALUES('bob', 'conv-1', 'restock', '{"sku":"A0001"}');
UPDATE calls SET status = 'failed', note = 'supplier offline'
 WHERE key = idem_key('bob','conv-1','restock','{"sku":"A0001"}') AND member = 0;
COMMIT;
BEGIN IMMEDIATE;
INSERT OR IGNORE INTO calls(who, conv, tool, args) VALUES('bob', 'conv-1', 'restock', '{"sku":"A0001"}');
SELECT changes() AS claimed_again;                 -- 1: the retry owns it
UPDATE calls SET status = 'done', id = 'restock-1'
 WHERE key = idem_key('bob','conv-1','restock','{"sku":"A0001"}') AND member = 0;
COMMIT;

.print
.print '== 6. An external call that timed out: unknown, kept, never retried ===='
.print 'Claim and COMMIT first; then send with the header; then record.'
INSERT INTO calls(who, conv, tool, args, kind)
  VALUES('carol', 'conv-3', 'charge_card', '{"cents":4200}', 'external');
SELECT idem_header(idem_key('carol','conv-3','charge_card','{"cents":4200}')) AS send_this_header;
UPDATE calls SET status = 'failed', note = 'timeout after 30 s'
 WHERE key = idem_key('carol','conv-3','charge_card','{"cents":4200}') AND member = 0;
.mode line
SELECT status, note, reply FROM calls
 WHERE key = idem_key('carol','conv-3','charge_card','{"cents":4200}');
.mode box --wrap 160
INSERT OR IGNORE INTO calls(who, conv, tool, args, kind)
  VALUES('carol', 'conv-3', 'charge_card', '{"cents":4200}', 'external');
SELECT changes() AS claimed;                       -- 0: not retried
.print 'The operator checks the card processor, then reconciles explicitly:'
UPDATE calls SET reconcile = 'arrived', id = 'ch_81', result = '{"charge":"ch_81"}'
 WHERE key = idem_key('carol','conv-3','charge_card','{"cents":4200}') AND member = 0;
SELECT status, id, note FROM calls
 WHERE key = idem_key('carol','conv-3','charge_card','{"cents":4200}');

.print
.print '== 7. Operations are plain SQL ==========================================='
SELECT tool, kind, status, count(*) AS n FROM calls WHERE member = 0 GROUP BY 1, 2, 3;

.print
.print '== 8. The till that sent one checkout ten times ========================'
.print 'Ten iPhones.  The till lost its network, restarted, and sent the same'
.print 'checkout again and again.  Without a claim each arrival takes one more:'
CREATE TABLE stock(lot TEXT PRIMARY KEY, name TEXT, qty INTEGER NOT NULL,
                   ver INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
INSERT INTO stock(lot, name, qty) VALUES('A0001', 'iPhone 13', 10);
UPDATE stock SET qty = qty - 1 WHERE lot = 'A0001';   -- the checkout
UPDATE stock SET qty = qty - 1 WHERE lot = 'A0001';   -- the same, again
UPDATE stock SET qty = qty - 1 WHERE lot = 'A0001';   -- ... ten times: 0
SELECT qty AS after_3_arrivals FROM stock;
UPDATE stock SET qty = 10;
.print 'With a claim, in ONE transaction with the stock update: only the'
.print 'arrival whose claim is new (changes() = 1) takes stock.  Three arrivals:'
BEGIN IMMEDIATE;
INSERT OR IGNORE INTO calls(who, conv, tool, args)
  VALUES('till-3', 'order-1001', 'checkout', '{"lot":"A0001","n":1}');
SELECT changes() AS claimed;
UPDATE stock SET qty = qty - 1 WHERE lot = 'A0001' AND changes() = 1;
UPDATE calls SET status = 'done', id = 'order-1001',
       result = (SELECT json_object('qty', qty) FROM stock WHERE lot = 'A0001')
 WHERE key = idem_key('till-3', 'order-1001', 'checkout', '{"lot":"A0001","n":1}')
   AND member = 0 AND status = 'pending';
COMMIT;
BEGIN IMMEDIATE;
INSERT OR IGNORE INTO calls(who, conv, tool, args)
  VALUES('till-3', 'order-1001', 'checkout', '{"lot":"A0001","n":1}');
SELECT changes() AS claimed;
UPDATE stock SET qty = qty - 1 WHERE lot = 'A0001' AND changes() = 1;
COMMIT;
BEGIN IMMEDIATE;
INSERT OR IGNORE INTO calls(who, conv, tool, args)
  VALUES('till-3', 'order-1001', 'checkout', '{"n":1, "lot":"A0001"}');
SELECT changes() AS claimed;
UPDATE stock SET qty = qty - 1 WHERE lot = 'A0001' AND changes() = 1;
COMMIT;
SELECT qty AS in_stock FROM stock;
.print 'Each duplicate gets what the first arrival recorded:'
SELECT reply FROM calls
 WHERE key = idem_key('till-3', 'order-1001', 'checkout', '{"lot":"A0001","n":1}');

.print
.print '== 9. Two clerks, one shelf: the version guard ========================='
.print 'Wang and Huang both read 10 iPhones; each sells 2 and writes back 8.'
.print 'Unguarded, the last write wins and the shelf says 8, not 6.  Guard the'
.print 'row version (it writes the schema: inside BEGIN ... COMMIT, doc/contract.md §7a):'
UPDATE stock SET qty = 10;
BEGIN;
SELECT idem_versioned('stock', 'ver') AS guarded;
COMMIT;
.print 'Both read the shelf:'
SELECT qty, ver FROM stock;
.print 'Wang writes 8, with the version he read (0): accepted; the version steps.'
UPDATE stock SET qty = 8, ver = 0 WHERE lot = 'A0001';
SELECT qty, ver FROM stock;
.print 'Huang writes 8, with the version he read (0).  The next line is'
.print 'expected to fail, naming both versions; nothing is changed:'
UPDATE stock SET qty = 8, ver = 0 WHERE lot = 'A0001';
.print 'Huang reads again (8, version 1) and writes 6 with version 1:'
UPDATE stock SET qty = 6, ver = 1 WHERE lot = 'A0001';
SELECT qty, ver FROM stock;
.print 'The same request, sent again, fails too (expected error):'
UPDATE stock SET qty = 6, ver = 1 WHERE lot = 'A0001';
.print 'A write that leaves ver out still steps it:'
UPDATE stock SET qty = qty - 1 WHERE lot = 'A0001';
SELECT qty, ver FROM stock;
.print 'When to use which: the claim for one request arriving twice; the'
.print 'version for two writers of one row; the till uses both.'
