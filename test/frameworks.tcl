# SPDX-License-Identifier: MIT
# frameworks.tcl -- make test-frameworks: the agent-framework examples of
# bindings/node/examples (ai-sdk, langchain, openai-agents, and the harness
# they share), installed under build/frameworks and run with node:test; and
# those of bindings/python/examples (openai-agents, langchain, pydantic-ai,
# mcp-server), in a venv under build/py-frameworks, run with pytest.
#
#   tclsh test/frameworks.tcl          install if needed, then run them all
#
# The Python examples run as their users run them: from a venv of the
# python3 first on PATH (a pyenv build here, whose sqlite3 cannot load
# extensions: idem.connect() gives APSW connections; /usr/bin/python3 only
# where PATH has no python3, and the run says so), with the package
# installed from its wheel as sqlite-idem[apsw].  Two venvs of that python:
#   - the frameworks (pip install -r bindings/python/examples/requirements.txt,
#     every version pinned), once per machine and hash of that file and the
#     python: ~/.cache/idem/py-frameworks-<hash> ($IDEM_CACHE or
#     $XDG_CACHE_HOME/idem instead of ~/.cache/idem), so that a fresh clone
#     does not install them again; nothing of a clone goes into it;
#   - build/py-frameworks/venv, made afresh on each run, where pip installs
#     the clone's wheel (make wheel: build/dist, from the current ext/) with
#     its extra [apsw] from build/py-wheels (make py-wheels), offline (no
#     index), with no compiler (CC=false, only the venv's bin on PATH), and
#     whose .pth adds the frameworks' venv after its own site-packages.
# The tests run with that venv's python, their child processes too, and
# check that idem is the wheel's, loaded from that venv.  The four
# examples' tests run at once, beside the Node ones, in place (no bytecode
# or pytest cache is written into the tree).
#
# Each example is copied into build/frameworks/<name>, its package.json as
# it is but for `sqlite-idem`, which points at bindings/node itself; the
# three are the workspaces of one npm project there, so that the packages
# they share are installed once.  better-sqlite3 is the one that
# build/node-env compiled (make node-env; a link, so it is not compiled
# again), and the extension is build/node/idem.so, made from the sources
# (below), so npm runs no install script (--ignore-scripts).  npm installs
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

# ---- Python: the venvs, then the four examples' tests, started now ----------
set pyexamples [file join $root bindings python examples]
set pyframeworks {openai-agents langchain pydantic-ai mcp-server}
set pydir [file join $root build py-frameworks]
set python3 [auto_execok python3]
if {$python3 eq ""} {
  # (py_wheels and python_path_env, of bindings.tcl, use the python3 on PATH.)
  set python3 /usr/bin/python3
  set ::env(PATH) /usr/bin:$::env(PATH)
  puts "-- test-frameworks: no python3 on PATH: the Python examples run from $python3"
}
set python3 [lindex $python3 0]
set reqs [file join $pyexamples requirements.txt]
# The frameworks' venv is the machine's, kept by the hash of
# requirements.txt and the python: every clone (CI's fresh one too) uses
# it, and installs it only when it is missing.  It is made in a directory
# of its own and renamed into place when complete, so that two runs at once
# never see half of one.
set hash [exec $python3 -c {
import hashlib, sys
h = hashlib.sha256(open(sys.argv[1], "rb").read())
h.update(sys.version.encode()); h.update(sys.executable.encode())
print(h.hexdigest()[:16])} $reqs]
if {[info exists ::env(IDEM_CACHE)] && $::env(IDEM_CACHE) ne ""} {
  set cache $::env(IDEM_CACHE)
} elseif {[info exists ::env(XDG_CACHE_HOME)] && $::env(XDG_CACHE_HOME) ne ""} {
  set cache [file join $::env(XDG_CACHE_HOME) idem]
} elseif {[info exists ::env(HOME)] && [file writable $::env(HOME)]} {
  set cache [file join $::env(HOME) .cache idem]
} else {
  set cache [file join $root build cache]
}
set venv [file join $cache py-frameworks-$hash]
if {![file exists [file join $venv .complete]]} {
  puts "-- installing the Python frameworks (requirements.txt) into $venv"
  puts "   for [exec $python3 -c {import sys; print(sys.executable)}] (once per machine) ..."
  flush stdout
  set tmp $venv.tmp-[pid]
  file delete -force $tmp
  file mkdir $cache
  lassign [bindings_run $python3 -m venv $tmp] rc out
  if {$rc != 0} { fail "`$python3 -m venv` failed (exit $rc):\n$out" }
  lassign [bindings_run env PIP_DISABLE_PIP_VERSION_CHECK=1 timeout 900 \
             [file join $tmp bin python] -m pip install -q -r $reqs] rc out
  if {$rc != 0} {
    file delete -force $tmp
    fail "`pip install -r requirements.txt` failed (exit $rc):\n$out"
  }
  writefile [file join $tmp .complete] "$reqs\n"
  # One rename(2) (mv -T: never into a directory already there); a run at
  # once that renamed its own first has won.  (python -m works from a
  # renamed venv: its paths come from where pyvenv.cfg is.)
  if {[catch {exec mv -T $tmp $venv 2>@1}]} { file delete -force $tmp }
  if {![file exists [file join $venv .complete]]} { fail "$venv is not a complete venv: remove it" }
}
# Used now; those of other requirements unused for 30 days are removed.
file mtime [file join $venv .complete] [clock seconds]
foreach old [glob -nocomplain -directory $cache -types d py-frameworks-*] {
  set done [file join $old .complete]
  if {$old ne $venv && [file exists $done] &&
      [clock seconds] - [file mtime $done] > 30 * 86400} {
    file delete -force $old
  }
}
# The clone's venv: the wheel installed as a user installs it.
lassign [python_wheel] rc out wheel
if {$rc != 0 || $wheel eq ""} { fail "make wheel failed (exit $rc):\n$out" }
lassign [py_wheels] why wheels
if {$why ne ""} { fail "make py-wheels: $why" }
set pyvenv [file join $pydir venv]
file delete -force $pydir
file mkdir $pydir
lassign [python_path_env $pyvenv $wheel $wheels] rc out py
if {$rc != 0 || ![regexp {Successfully installed} $out]
    || [regexp -nocase {building|setup\.py|download} $out]} {
  fail "pip install [file tail $wheel]\[apsw\] into $pyvenv (offline, no compiler) failed (exit $rc):\n$out"
}
# The frameworks after the venv's own packages (site.addsitedir: their
# .pth files are read too).
set purelib {import sysconfig; print(sysconfig.get_paths()["purelib"])}
writefile [file join [exec $py -c $purelib] idem-frameworks.pth] \
  "import site; site.addsitedir('[exec [file join $venv bin python] -c $purelib]')\n"
set ::env(PYTHONDONTWRITEBYTECODE) 1
catch {unset ::env(PYTHONPATH)}
# Which Python, which idem, which connection: the wheel's extension, in
# this venv (never a stale copy elsewhere), and APSW where sqlite3 cannot
# load extensions.
lassign [bindings_run $py -c {
import sqlite3, sys, idem
c = idem.connect(":memory:")
print(sys.prefix, idem.__file__, idem.loadable_path(), type(c).__name__,
      c.execute("SELECT idem_version()").fetchone()[0],
      hasattr(sqlite3.Connection, "enable_load_extension"))}] rc out
lassign $out prefix pkg so kind version canload
if {$rc != 0 || ![string match $pyvenv/* $pkg] || ![string match $pyvenv/* $so]
    || $kind ne [expr {$canload ? "Connection" : "ApswConnection"}]} {
  fail "the examples' python ($py) does not load the wheel's idem from $pyvenv:\n$out"
}
puts "ok the Python examples: [exec $py -c {import sys; print(sys.version.split()[0], sys._base_executable if hasattr(sys, "_base_executable") else sys.executable)}],\
 sqlite-idem $version from [file tail $wheel] (\[apsw\], no compiler), idem.connect() gives\
 [expr {$kind eq "ApswConnection" ? "idem.ApswConnection (APSW)" : "sqlite3.Connection (this sqlite3 loads extensions: APSW is not used)"}]"
lassign [node_env] why envdir
if {$why ne ""} { fail "build/node-env is not there: $why" }

# The extension, from the current sources: make's build/node/idem.so,
# which the package's install script (build.js) wrote when build/node-env
# was made, and which make builds again, as build.js does, only when ext/
# has changed since (build.js itself is tested by bindings.test, whose npm
# rebuild runs it: not a third compile here, ~7 s of CPU).
if {[catch {exec make --no-print-directory -s -C $root build/node/idem.so 2>@1} out]} {
  fail "make build/node/idem.so failed:\n$out"
}

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
# The Python examples' tests run meanwhile (they mostly wait too).
set pyruns {}
foreach name [list {*}$pyframeworks harness] {
  # harness/test_agent_tool.py: idem.frameworks.agent_tool itself.
  set d [file join $pyexamples $name]
  set f [file join $d [expr {$name eq "harness" ? "test_agent_tool.py" : "test_shop.py"}]]
  lappend pyruns $name [open |[list $py -m pytest -p no:cacheprovider -v --rootdir $d $f 2>@1] r]
}

set failed [catch {exec node --test --test-concurrency=3 --test-reporter=spec \
                     {*}$files >@ stdout 2>@ stderr}]

# The Python examples' tests, started above.
foreach {name chan} $pyruns {
  set out [read $chan]
  set rc [catch {close $chan}]
  puts "# bindings/python/examples/$name (pytest)"
  puts [string trimright $out]
  if {$rc} { set failed 1 }
}

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
# And every ```python block, with the examples' python (the test target,
# where a block needs it, is started by the block itself).
set n 0
foreach {all code} [regexp -all -inline -indices {```python\n(.*?)\n```} $text] {
  set line [expr {[regexp -all \n [string range $text 0 [lindex $all 0]]] + 1}]
  set pyf [file join $pydir doc-frameworks-$line.py]
  writefile $pyf [string range $text {*}$code]\n
  lassign [bindings_run $py $pyf] rc out
  incr n
  if {$rc == 0} {
    puts "ok doc/frameworks.md:$line runs as written"
  } else {
    puts "not ok doc/frameworks.md:$line (exit $rc):\n$out"
    set failed 1
  }
}
if {$n == 0} { puts "not ok doc/frameworks.md has no ```python block"; set failed 1 }

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
