# SPDX-License-Identifier: MIT
# tcl/run.tcl -- run every test file and add up the counts.
#
#   tclsh tcl/run.tcl ?-j N? ?FILE ...?        (default: test/*.test)
#
# Each file runs in its own tclsh process, so that one file's crash or exit
# cannot hide another's results.  N files run at once (-j N, else the
# environment's IDEM_JOBS, else the number of cores); each file's output is
# printed together when it ends, with its wall time, and with -j 1 each line
# as it comes.  The last line is "N passed, N failed" and the exit status is
# non-zero if any test failed or any file died.
#
# Each file has its own scratch directory (tcl/tester.tcl), so files can
# run at once.  The longest files start first, so that the run ends evenly.
#
# IDEM_LIB_ONLY=1 (make test-asan, test-new, test-old) leaves out the files
# that never load the library under test (the list below): they test
# programs, packages or text that those runs do not change, and make test
# runs them; a line says which were left out.
set root [file normalize [file join [file dirname [info script]] ..]]

# The files that never load the library under test (IDEM_LIB): the
# packages build their own (bindings), the benchmarks and the C API check
# use build/ (bench, capi), the UTF-8 check and the reads past the end are C
# programs (utf8, guard), and the rest read text (parts, license, make).
set lib_free {bindings.test bench.test capi.test license.test make.test
              parts.test utf8.test guard.test}
# make test-asan-suite builds capi.test's programs against its own ASan
# libidem.a (IDEM_CAPI_LIB): there capi.test runs too.
if {[info exists ::env(IDEM_CAPI_LIB)] && $::env(IDEM_CAPI_LIB) ne ""} {
  set lib_free [lsearch -all -inline -not -exact $lib_free capi.test]
}

# The files that take longest, longest first (measured on 2 cores; the
# others follow, larger first).  Only the order depends on it.
set long_first {snippets.test bindings.test examples.test durable.test
                versioned.test receiving.test canonical.test docs.test
                utf8.test bench.test claim.test hostile.test}

proc ncores {} {
  foreach cmd {{nproc} {getconf _NPROCESSORS_ONLN} {sysctl -n hw.ncpu}} {
    if {![catch {exec {*}$cmd 2>/dev/null} n] && [string is integer -strict $n] && $n > 0} {
      return $n
    }
  }
  return 1
}

set jobs ""
set files {}
for {set i 0} {$i < [llength $argv]} {incr i} {
  set a [lindex $argv $i]
  if {$a eq "-j"} {
    set jobs [lindex $argv [incr i]]
  } elseif {[regexp {^-j(\d+)$} $a -> n]} {
    set jobs $n
  } else {
    lappend files $a
  }
}
if {$jobs eq "" && [info exists ::env(IDEM_JOBS)] && $::env(IDEM_JOBS) ne ""} {
  set jobs $::env(IDEM_JOBS)
}
if {$jobs eq ""} { set jobs [ncores] }
if {![string is integer -strict $jobs] || $jobs < 1} {
  puts stderr "tcl/run.tcl: -j wants a positive number, not \"$jobs\""
  exit 2
}

if {![llength $files]} {
  set files [glob [file join $root test *.test]]
  if {[info exists ::env(IDEM_LIB_ONLY)] && $::env(IDEM_LIB_ONLY) ne ""} {
    set kept {}; set left {}
    foreach f $files {
      if {[file tail $f] in $lib_free} { lappend left [file tail $f] } else { lappend kept $f }
    }
    set files $kept
    if {[llength $left]} {
      puts "IDEM_LIB_ONLY: not run here (they never load the library under test; make test runs them): [lsort $left]"
    }
  }
}
# Longest first: the known-long files in their order, then by size.
proc order {a b} {
  set ia [lsearch -exact $::long_first [file tail $a]]
  set ib [lsearch -exact $::long_first [file tail $b]]
  if {$ia < 0} { set ia 1000 }
  if {$ib < 0} { set ib 1000 }
  if {$ia != $ib} { return [expr {$ia - $ib}] }
  set d [expr {[file size $b] - [file size $a]}]
  if {$d} { return $d }
  return [string compare $a $b]
}
set files [lsort -command order $files]

# IDEM_WRAP, if set, is a command prefix for each file's process, e.g.
#   IDEM_WRAP='valgrind -q --error-exitcode=1 --leak-check=full'
#   IDEM_WRAP='env ASAN_OPTIONS=detect_leaks=1'      (make test-asan)
set wrap {}
if {[info exists ::env(IDEM_WRAP)]} { set wrap $::env(IDEM_WRAP) }
# The files are not part of a make that may have started this runner (make
# -j2 test-old): a make they start must not look for its jobserver.
foreach v {MAKEFLAGS MFLAGS MAKELEVEL} { unset -nocomplain ::env($v) }

package require sqlite3
sqlite3 versiondb :memory:
puts "SQLite [versiondb one {SELECT sqlite_version()}], Tcl [info patchlevel],\
      [llength $files] files, $jobs at once"
versiondb close
flush stdout

set pass 0; set fail 0; set dead {}
set queue $files
set running 0
set t0 [clock milliseconds]

proc start {f} {
  global wrap jobs
  set ch [open |[list {*}$wrap [info nameofexecutable] $f 2>@1] r]
  fconfigure $ch -blocking 0 -buffering line
  set ::out($ch) ""
  set ::name($ch) [file tail $f]
  set ::start($ch) [clock milliseconds]
  fileevent $ch readable [list readable $ch]
  incr ::running
}

proc readable {ch} {
  while {[gets $ch line] >= 0} {
    append ::out($ch) $line \n
    # One at a time: each line as it comes, so that a file can say what a
    # long step is doing before it starts.
    if {$::jobs == 1} { puts $line; flush stdout }
  }
  if {[eof $ch]} { finished $ch }
}

proc finished {ch} {
  global pass fail dead
  fconfigure $ch -blocking 1
  set rc [catch {close $ch}]
  set name $::name($ch)
  set out $::out($ch)
  set secs [format %.1f [expr {([clock milliseconds] - $::start($ch)) / 1000.0}]]
  if {$::jobs > 1} { puts -nonewline $out }
  puts "-- $name: $secs s"
  flush stdout
  if {[regexp {== \S+: (\d+) ok, (\d+) failed} $out -> p n]} {
    incr pass $p; incr fail $n
    if {$rc && !$n} { lappend dead $name; incr fail }
  } else {
    lappend dead $name; incr fail
  }
  unset ::out($ch) ::name($ch) ::start($ch)
  incr ::running -1
  launch
}

proc launch {} {
  while {$::running < $::jobs && [llength $::queue]} {
    set f [lindex $::queue 0]
    set ::queue [lrange $::queue 1 end]
    start $f
  }
  if {!$::running && ![llength $::queue]} { set ::done 1 }
}

launch
if {$running} { vwait ::done }

puts "-- all files: [format %.1f [expr {([clock milliseconds] - $t0) / 1000.0}]] s"
if {[llength $dead]} { puts "files that did not finish cleanly: $dead" }
puts "$pass passed, $fail failed"
exit [expr {$fail ? 1 : 0}]
