package require sqlite3
sqlite3 db x.db
db enable_load_extension 1
db eval {SELECT load_extension('build/idem')}
puts [db eval {CREATE VIRTUAL TABLE IF NOT EXISTS calls USING idem; INSERT OR IGNORE INTO calls(who, conv, tool, args) VALUES('alice', 'conv-7', 'checkout', '{"sku":"A0001","qty":2}'); SELECT changes()}]
