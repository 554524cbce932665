# SPDX-License-Identifier: MIT
# test/diff/check.tcl -- compare idem_canonical() with the reference output
# written by test/diff/gen.js.
#
#   tclsh test/diff/check.tcl ?FILE?    (default build/diff.jsonl; "-" is stdin)
#
# The extension is build/idem.so (.dylib on macOS), or $IDEM_LIB as for the
# test harness.
# Lines go to SQLite as blobs and are decoded there (json_extract), so that
# Tcl never touches their characters.  Prints the first few differences and
# ends with "N passed, N failed"; the exit status is non-zero on a failure.
package require sqlite3

set root [file normalize [file join [file dirname [info script]] .. ..]]
set file [expr {[llength $argv] ? [lindex $argv 0] : [file join $root build diff.jsonl]}]
if {[info exists env(IDEM_LIB)]} {
  set lib [file normalize $env(IDEM_LIB)]
} else {
  set lib [file join $root build idem]   ;# load_extension adds .so or .dylib
}

sqlite3 db :memory:
db enable_load_extension 1
db eval {SELECT load_extension($lib)}
db enable_load_extension 0

set nPass 0
set nFail 0
if {$file eq "-"} {
  set f stdin
  fconfigure $f -translation binary
} else {
  set f [open $file rb]
}
while {[gets $f line] >= 0} {
  set rc [catch {
    db onecolumn {
      SELECT idem_canonical(json_extract(CAST(@line AS TEXT), '$[0]'))
             IS json_extract(CAST(@line AS TEXT), '$[1]')
    }
  } same]
  if {$rc==0 && $same} {
    incr nPass
    continue
  }
  incr nFail
  if {$nFail <= 5} {
    db eval {
      SELECT json_extract(CAST(@line AS TEXT), '$[0]') AS doc,
             json_extract(CAST(@line AS TEXT), '$[1]') AS want
    } break
    if {$rc} { set got "ERROR: $same" } else {
      set got [db onecolumn {SELECT idem_canonical($doc)}]
    }
    puts "line [expr {$nPass+$nFail}]:\n  doc:  $doc\n  got:  $got\n  want: $want"
  }
}
close $f
db close
puts "$nPass passed, $nFail failed"
exit [expr {$nFail ? 1 : 0}]
