# SPDX-License-Identifier: MIT
# frameworks.tcl -- make test-frameworks: the agent-framework examples of
# bindings/node/examples (ai-sdk, langchain, openai-agents, and the harness
# they share), installed under build/frameworks and run with node:test.
#
#   tclsh test/frameworks.tcl          install if needed, then run them all
#
# Each example is copied into build/frameworks/<name>, its package.json as
# it is but for `sqlite-idem`, which points at bindings/node itself; the
# three are the workspaces of one npm project there, so that the packages
# they share are installed once.  better-sqlite3 is the one that
# build/node-env compiled (make node-env; a link, so it is not compiled
# again), and the extension is built from the sources by the package's own
# build.js, so npm runs no install script (--ignore-scripts).  npm installs
# again only when a package.json changes.  Nothing is written into the
# source tree.
source [file join [file dirname [info script]] bindings.tcl]

set root $::bindings_root
set examples [file join $root bindings node examples]
set frameworks {ai-sdk langchain openai-agents}
set dir [file join $root build frameworks]

proc readfile {f} { set fd [open $f]; set t [read $fd]; close $fd; return $t }
proc writefile {f t} { set fd [open $f w]; puts -nonewline $fd $t; close $fd }
proc fail {msg} { puts stderr "test-frameworks: $msg"; exit 1 }

lassign [node_env] why envdir
if {$why ne ""} { fail "build/node-env is not there: $why" }

# The extension, from the current sources (what the package's install
# script does).
lassign [bindings_run node [file join $root bindings node build.js]] rc out
if {$rc != 0} { fail "bindings/node/build.js failed:\n$out" }

# The examples' files, copied afresh (their node_modules stay).
file mkdir $dir
set manifests ""
foreach name [list harness {*}$frameworks] {
  set to [file join $dir $name]
  file mkdir $to
  foreach f [glob -nocomplain -directory $to * .?*] {
    if {[file tail $f] ni {. .. node_modules}} { file delete -force $f }
  }
  foreach f [glob -nocomplain -directory [file join $examples $name] -types f *.js package.json] {
    file copy $f $to
  }
  set pj [file join $to package.json]
  if {[file exists $pj]} {
    set text [string map [list {"file:../.."} "\"file:[file join $root bindings node]\""] [readfile $pj]]
    writefile $pj $text
    append manifests $text
  }
}
set top "{
  \"name\": \"idem-frameworks\",
  \"private\": true,
  \"description\": \"made by test/frameworks.tcl: the framework examples, as workspaces\",
  \"workspaces\": \[\"[join $frameworks {", "}]\"\],
  \"dependencies\": {
    \"better-sqlite3\": \"file:[file join $envdir node_modules better-sqlite3]\"
  }
}
"
writefile [file join $dir package.json] $top
append manifests $top

set stamp [file join $dir .installed]
if {![file exists $stamp] || [readfile $stamp] ne $manifests
    || ![file isdirectory [file join $dir node_modules ai]]} {
  puts "-- installing the frameworks' npm packages into build/frameworks (once) ..."
  flush stdout
  file delete -force $stamp [file join $dir package-lock.json]
  cd $dir
  lassign [bindings_run timeout 900 npm install --ignore-scripts --prefer-offline \
             --no-audit --no-fund] rc out
  if {$rc != 0} { fail "`npm install` in build/frameworks failed (exit $rc):\n$out" }
  writefile $stamp $manifests
}

cd $dir
set files {}
foreach name $frameworks { lappend files [file join $name shop.test.js] }
# The three files at once: their tests mostly wait (for processes to start,
# for the target), and none depends on another's timing.
set failed [catch {exec node --test --test-concurrency=3 --test-reporter=spec \
                     {*}$files >@ stdout 2>@ stderr}]

# Every ```js block of doc/frameworks.md runs as written (with the packages
# installed here), and exits 0.
set doc [file join $root doc frameworks.md]
set text [readfile $doc]
set n 0
foreach {all code} [regexp -all -inline -indices {```js\n(.*?)\n```} $text] {
  set line [expr {[regexp -all \n [string range $text 0 [lindex $all 0]]] + 1}]
  set js [file join $dir doc-frameworks-$line.js]
  writefile $js [string range $text {*}$code]\n
  lassign [bindings_run node $js] rc out
  incr n
  if {$rc == 0} {
    puts "ok doc/frameworks.md:$line runs as written"
  } else {
    puts "not ok doc/frameworks.md:$line (exit $rc):\n$out"
    set failed 1
  }
}
if {$n == 0} { puts "not ok doc/frameworks.md has no ```js block"; set failed 1 }

# A user's `npm install` in an example prints no install-scripts warning:
# each example approves its packages' install scripts in allowScripts (npm
# 11.16 and later list those not approved; a package from a folder is
# approved by its file: spec).  A dry run, in the source tree, writes
# nothing.
lassign [bindings_run npm --version] rc npmv
if {$rc == 0 && [package vcompare $npmv 11.16.0] >= 0} {
  foreach name [list . {*}$frameworks] {
    cd [file join $examples $name]
    lassign [bindings_run timeout 300 npm install --dry-run --prefer-offline \
               --no-audit --no-fund] rc out
    set what "bindings/node/examples/[string trimleft $name .]"
    if {$rc == 0 && ![regexp {install-scripts|allowScripts} $out]} {
      puts "ok $what: npm install warns of no install script"
    } else {
      puts "not ok $what: npm install (exit $rc):\n$out"
      set failed 1
    }
  }
  cd $dir
} else {
  puts "-- npm $npmv has no allowScripts: the examples' install was not checked"
}
exit $failed
