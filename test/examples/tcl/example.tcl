# SPDX-License-Identifier: MIT
package require sqlite3
sqlite3 db /tmp/idem-example.db
db enable_load_extension 1
db eval {SELECT load_extension('build/idem')}
db eval {CREATE VIRTUAL TABLE IF NOT EXISTS calls USING idem}
db transaction immediate {
  db eval {INSERT OR IGNORE INTO calls(who, conv, tool, args) VALUES('alice', 'conv-7', 'checkout', '{"sku":"A0001","qty":2}')}
  set ours [db changes]
  if {$ours} {
    # ours: act here, in this transaction, then record the outcome
    db eval {UPDATE calls SET status = 'done', id = 1 WHERE key = idem_key('alice', 'conv-7', 'checkout', '{"sku":"A0001","qty":2}') AND member = 0}
  }
}
puts $ours
