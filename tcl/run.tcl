# SPDX-License-Identifier: MIT
# tcl/run.tcl -- run every test file and add up the counts.
#
#   tclsh tcl/run.tcl ?FILE ...?        (default: test/*.test)
#
# Each file runs in its own tclsh process, so that one file's crash or exit
# cannot hide another's results.  The last line is "N passed, N failed" and
# the exit status is non-zero if any test failed or any file died.
set root [file normalize [file join [file dirname [info script]] ..]]
set files $argv
if {![llength $files]} { set files [lsort [glob [file join $root test *.test]]] }

# IDEM_WRAP, if set, is a command prefix for each file's process, e.g.
#   IDEM_WRAP='valgrind -q --error-exitcode=1 --leak-check=full'
#   IDEM_WRAP='env ASAN_OPTIONS=detect_leaks=1'      (make test-asan)
set wrap {}
if {[info exists ::env(IDEM_WRAP)]} { set wrap $::env(IDEM_WRAP) }

package require sqlite3
sqlite3 versiondb :memory:
puts "SQLite [versiondb one {SELECT sqlite_version()}], Tcl [info patchlevel]"
versiondb close

set pass 0; set fail 0; set dead {}
foreach f $files {
  set name [file tail $f]
  # Each line is shown as it comes, so that a file can say what a long step
  # is doing before it starts.
  set ch [open |[list {*}$wrap [info nameofexecutable] $f 2>@1] r]
  set out ""
  while {[gets $ch line] >= 0} {
    puts $line; flush stdout
    append out $line \n
  }
  set rc [catch {close $ch}]
  if {[regexp {== \S+: (\d+) ok, (\d+) failed} $out -> p n]} {
    incr pass $p; incr fail $n
    if {$rc && !$n} { lappend dead $name; incr fail }
  } else {
    lappend dead $name; incr fail
  }
}
if {[llength $dead]} { puts "files that did not finish cleanly: $dead" }
puts "$pass passed, $fail failed"
exit [expr {$fail ? 1 : 0}]
