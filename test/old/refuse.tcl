# SPDX-License-Identifier: MIT
# refuse.tcl -- make test-old: idem, loaded into a SQLite older than the
# oldest it supports (tclsh run with LD_LIBRARY_PATH pointing at that
# library), must refuse with a message that names both versions, and
# register nothing.
#
#   tclsh test/old/refuse.tcl /path/to/idem.so
package require sqlite3
sqlite3 db :memory:
db enable_load_extension 1
set version [db one {SELECT sqlite_version()}]
set lib [lindex $argv 0]
set rc [catch {db eval {SELECT load_extension(:lib)}} msg]
# (SQLite puts "error during initialization: " before it.)
set want "idem needs SQLite 3.40.0 or later; this is SQLite $version"
set rc2 [catch {db eval {SELECT idem_version()}} msg2]
puts "SQLite $version: load_extension: $msg"
if {$rc && [string match "*$want" $msg] && $rc2 && [string match "no such function*" $msg2]} {
  puts "refused, as it must be"
  exit 0
}
puts "FAILED: want the error \"$want\" and no idem_version(); got rc $rc, \"$msg\"; idem_version(): $msg2"
exit 1
