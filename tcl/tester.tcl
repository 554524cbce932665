# SPDX-License-Identifier: MIT
# tcl/tester.tcl -- the idem test harness, in the style of SQLite's tester.tcl.
#
# A test file starts with
#
#     source [file join [file dirname [info script]] .. tcl tester.tcl]
#
# and then uses:
#
#     do_test          NAME SCRIPT EXPECTED   run SCRIPT, compare its result
#     do_execsql_test  NAME SQL EXPECTED      run SQL on [db], compare the rows
#     do_catchsql_test NAME SQL EXPECTED      run SQL, expect {0 rows} or {1 msg}
#     at_finish        SCRIPT                 run SCRIPT at finish_test
#     finish_test                             print the file's counts, exit
#
# EXPECTED is compared as a string, except that a value of the form /RE/ is a
# regular expression the result must match.  The environment variable MATCH
# (a glob, e.g. MATCH='claim-2.*') runs only the tests whose names match it.
#
# The harness opens [db] on a fresh file test.db in a private scratch
# directory, with the extension loaded.  [idem_open NAME FILE] opens more
# connections the same way; [reset_db] starts over with an empty database.
#
# Environment: IDEM_LIB is the extension to load (default build/idem.so,
# build/idem.dylib on macOS);
# IDEM_TMP is where scratch directories go;
# IDEM_STOP_AT_FAIL=1 ends the file at its first failed test (through
# finish_test, so that it still fails and cleans up): test/mutation/run.py
# sets it, since one failure is the verdict it wants.

package require sqlite3

set ::idem_root [file normalize [file join [file dirname [info script]] ..]]
if {[info exists ::env(IDEM_LIB)]} {
  set ::idem_lib [file normalize $::env(IDEM_LIB)]
} else {
  set ::idem_lib [file join $::idem_root build \
      [expr {$::tcl_platform(os) eq "Darwin" ? "idem.dylib" : "idem.so"}]]
}
set ::testfile [file tail [info script]]
if {[info exists ::argv0]} { set ::testfile [file tail $::argv0] }
set ::testdata [file join $::idem_root test data]

set ::nPass 0
set ::nFail 0
set ::failList {}
set ::match "*"
if {[info exists ::env(MATCH)] && $::env(MATCH) ne ""} { set ::match $::env(MATCH) }

# A private scratch directory, removed at finish_test.
set ::tmpbase [expr {[info exists ::env(IDEM_TMP)] ? $::env(IDEM_TMP) : "/tmp"}]
set ::scratch [file join $::tmpbase "idem-test-[pid]-[clock clicks]"]
file mkdir $::scratch
cd $::scratch

# Open connection NAME on FILE with the extension loaded.
proc idem_open {name {file test.db} args} {
  uplevel #0 [list sqlite3 $name $file {*}$args]
  $name enable_load_extension 1
  $name eval {SELECT load_extension($::idem_lib)}
  $name enable_load_extension 0
  return $name
}

# The command that starts Debian's sqlite3 shell.  The shell refuses to run
# on another SQLite library than its own (a source-id check), so when the
# suite runs on a swapped library (make test-new sets LD_LIBRARY_PATH) the
# shell gets its own back.
set ::sqlite3_cli [list sqlite3]
if {[info exists ::env(LD_LIBRARY_PATH)]} {
  set ::sqlite3_cli [list env -u LD_LIBRARY_PATH sqlite3]
}

proc forcedelete {args} {
  foreach f $args {
    foreach g [list $f $f-journal $f-wal $f-shm] { file delete -force $g }
  }
}

# Make idem table NAME of test.db (a new one: format 4) a format-3 table,
# as a build before format 4 made it (the created index in <name>_claim's
# definition, format 3 recorded), rows and rids kept; db is opened again.
proc idem_format3 {name} {
  catch {db close}
  sqlite3 idem_f3 test.db
  idem_f3 eval [string map [list %N% $name] {
    ALTER TABLE "%N%_claim" RENAME TO idem_f3_x;
    CREATE TABLE "%N%_claim"(rid INTEGER PRIMARY KEY, key BLOB NOT NULL,
      member INTEGER NOT NULL, who, conv, tool, args TEXT, kind TEXT,
      status TEXT, id, result, note TEXT, created TEXT NOT NULL, updated TEXT,
      keyargs TEXT, owner TEXT, expires TEXT, honours_key INTEGER,
      sends INTEGER, UNIQUE(key, member), UNIQUE(created, rid));
    INSERT INTO "%N%_claim" SELECT * FROM idem_f3_x;
    DROP TABLE idem_f3_x;
    UPDATE "%N%_config" SET v = 3 WHERE k = 'format';
  }]
  idem_f3 close
  idem_open db test.db
}

proc reset_db {} {
  catch {db close}
  forcedelete test.db
  idem_open db test.db
}

# execsql returns every value of every row as one flat list, like SQLite's.
proc execsql {sql {dbname db}} {
  return [uplevel #0 [list $dbname eval $sql]]
}

proc catchsql {sql {dbname db}} {
  set rc [catch {execsql $sql $dbname} res]
  return [list $rc $res]
}

proc result_matches {result expected} {
  if {[regexp {^/(.*)/$} $expected -> re]} {
    return [regexp -- $re $result]
  }
  if {$result eq $expected} { return 1 }
  # A list whose elements may be /RE/ (e.g. {1 {/^idem: .../}}) is matched
  # element by element.
  if {[catch {llength $expected} ne] || [catch {llength $result} nr]} { return 0 }
  if {$ne != $nr || ![regexp {(^|\s)\{?/} $expected]} { return 0 }
  foreach e $expected r $result {
    if {[regexp {^/(.*)/$} $e -> re]} {
      if {![regexp -- $re $r]} { return 0 }
    } elseif {$e ne $r} {
      return 0
    }
  }
  return 1
}

proc do_test {name script expected} {
  if {![string match $::match $name]} return
  set rc [catch {uplevel 1 $script} result]
  if {$rc == 1} { set result "ERROR: $result" }
  if {[result_matches $result $expected]} {
    incr ::nPass
  } else {
    incr ::nFail
    lappend ::failList $name
    puts "! $::testfile $name failed"
    puts "!   expected: \[$expected\]"
    puts "!   got:      \[$result\]"
    if {[info exists ::env(IDEM_STOP_AT_FAIL)] && $::env(IDEM_STOP_AT_FAIL) ne ""} {
      finish_test
    }
  }
}

proc do_execsql_test {name sql {expected {}}} {
  uplevel 1 [list do_test $name [list execsql $sql] [string trim $expected]]
}

proc do_catchsql_test {name sql expected} {
  uplevel 1 [list do_test $name [list catchsql $sql] $expected]
}

# The SQLite library's version as a number, e.g. 3040001.
proc sqlite_version_number {} {
  lassign [split [db one {SELECT sqlite_version()}] .] a b c
  return [expr {$a*1000000 + $b*1000 + $c}]
}
# Run SCRIPT only where SQLite has the virtual-table xIntegrity method (3.44+).
proc ifcapable_xintegrity {script} {
  if {[sqlite_version_number] >= 3044000} { uplevel 1 $script }
}

# What a file leaves outside its scratch directory (a file on /dev/shm) is
# removed at finish_test, also when the file ends early (IDEM_STOP_AT_FAIL).
set ::atFinish {}
proc at_finish {script} { lappend ::atFinish $script }

proc finish_test {} {
  foreach script $::atFinish { catch {uplevel #0 $script} }
  catch {db close}
  foreach c [info commands db*] { catch {$c close} }
  cd $::tmpbase
  file delete -force $::scratch
  puts "== $::testfile: $::nPass ok, $::nFail failed"
  if {$::nFail} { puts "== failures: $::failList" }
  exit [expr {$::nFail ? 1 : 0}]
}

idem_open db test.db
