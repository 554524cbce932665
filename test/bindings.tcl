# SPDX-License-Identifier: MIT
# bindings.tcl -- install the packages of bindings/ the way a user does, for
# test/bindings.test and test/examples.test.
#
#   source test/bindings.tcl             the procs below
#   tclsh test/bindings.tcl node-env     (make node-env) install the Node
#                                        environment if it is missing or stale
#
#   python_env DIR   a venv in DIR (Debian's /usr/bin/python3,
#                    --system-site-packages --without-pip) with `python -m pip
#                    install --no-build-isolation --no-index bindings/python`, which
#                    builds the extension; returns {exit-status output python}
#   python_wheel     the wheel that `make wheel` builds (built here if it is
#                    missing or stale); returns {exit-status output path}
#   py_wheels        build/py-wheels/HASH: `pip download` of the package's
#                    extra [apsw] (its requirement in pyproject.toml) for the
#                    python3 first on PATH, again only when the requirement
#                    or that Python changes (HASH); returns {why-not dir}
#   python_path_env DIR WHEEL WHEELS   a fresh venv in DIR of the python3
#                    first on PATH (--without-pip) and that Python's pip
#                    installing WHEEL[apsw] into it (pip --python) from the
#                    wheels alone (--no-index --find-links WHEELS), with no
#                    compiler on PATH (only the venv's bin) and CC=false;
#                    returns {exit-status output python}
#   node_env         build/node-env: `npm install` of better-sqlite3@12, the
#                    MCP SDK, zod, TypeScript 5 and bindings/node (whose
#                    install script builds the extension), again only when
#                    its package.json changes; returns {"" dir} or {why-not ""}
#   node_env_check NAME WHY   under CI=true, a Node environment that could not
#                    be installed (WHY not empty, and IDEM_SKIP_NODE not set)
#                    is the failed test NAME, not a skip
#
# Files that run at once (tcl/run.tcl -j) share build/node-env: one
# installs it while the others wait (a lock directory, build/node-env.lock).
#
# Nothing is written into the repository but under build/ (setup.py and
# build.js put their outputs in build/python and build/node).

set ::bindings_root [file normalize [file join [file dirname [info script]] ..]]

# Run a command; return {exit-status output}, stderr merged into output.
proc bindings_run {args} {
  set rc [catch {exec {*}$args 2>@1} out opts]
  if {$rc} {
    set ec [dict get $opts -errorcode]
    set rc [expr {[lindex $ec 0] eq "CHILDSTATUS" ? [lindex $ec 2] : "ERROR"}]
    regsub {\n?child process exited abnormally$} $out {} out
  }
  return [list $rc $out]
}

proc python_env {dir} {
  set py [file join $dir bin python]
  # The README's two lines: Debian's pip (python3-pip) installs into the
  # venv, which then needs no pip of its own (ensurepip is the slow part).
  set r [bindings_run /usr/bin/python3 -m venv --system-site-packages --without-pip $dir]
  if {[lindex $r 0] == 0} {
    set r [bindings_run env PIP_DISABLE_PIP_VERSION_CHECK=1 \
             $py -m pip install --no-build-isolation --no-index \
             [file join $::bindings_root bindings python]]
  }
  return [list {*}$r $py]
}

proc python_wheel {} {
  set r [bindings_run make --no-print-directory -s -C $::bindings_root wheel]
  set whl [lsort [glob -nocomplain -directory [file join $::bindings_root build dist] \
                    sqlite_idem-*.whl]]
  return [list {*}$r [lindex $whl end]]
}

# The requirement of the extra [apsw], as pyproject.toml gives it.
proc py_requirement {} {
  set fd [open [file join $::bindings_root bindings python pyproject.toml]]
  set text [read $fd]
  close $fd
  if {![regexp {\napsw = \["([^"]+)"\]} $text -> req]} {
    error "bindings/python/pyproject.toml names no extra apsw"
  }
  return $req
}

# One installer at a time, across clones and test files: wait for the lock
# directory lock, made with mkdir (atomic); one older than maxage seconds
# (the install's own timeout) was left by a killed run and is taken over.
# Returns its path, for the caller to delete when done.
proc dir_lock {lock maxage} {
  while {[catch {exec mkdir $lock 2>/dev/null}]} {
    if {[catch {file mtime $lock} t] == 0 && [clock seconds] - $t > $maxage} {
      file delete -force $lock
    }
    after 500
  }
  return $lock
}

proc py_wheels {} {
  if {[auto_execok python3] eq ""} { return [list "python3 is not on PATH" ""] }
  set req [py_requirement]
  # The Python (its tags) and the requirement name the directory.
  set r [bindings_run python3 -c "import hashlib, sys, sysconfig
print(hashlib.sha256(repr((sys.argv\[1\], sys.implementation.cache_tag,
      sysconfig.get_platform())).encode()).hexdigest()\[:16\])" $req]
  if {[lindex $r 0] != 0} { return [list "python3 failed: [lindex $r 1]" ""] }
  set dir [file join $::bindings_root build py-wheels [lindex $r 1]]
  if {[file exists [file join $dir .done]]} { return [list "" $dir] }
  file mkdir [file dirname $dir]
  set lock [dir_lock $dir.lock 600]
  set why ""
  if {![file exists [file join $dir .done]]} {
    puts "-- downloading $req for [exec python3 -c {import sys; print(sys.executable)}]"
    puts "   into build/py-wheels (once) ..."
    flush stdout
    file delete -force $dir
    set r [bindings_run env PIP_DISABLE_PIP_VERSION_CHECK=1 timeout 300 python3 -m pip \
             download -q --only-binary=:all: --dest $dir $req]
    if {[lindex $r 0] == 0} {
      close [open [file join $dir .done] w]
    } else {
      set why "`pip download $req` failed (exit [lindex $r 0]):\n[string range [lindex $r 1] end-600 end]"
    }
  }
  file delete -force $lock
  if {$why ne ""} { return [list $why ""] }
  return [list "" $dir]
}

proc python_path_env {dir wheel wheels} {
  set r [bindings_run python3 -m venv --without-pip $dir]
  if {[lindex $r 0] != 0} { return [list {*}$r ""] }
  set py [file join $dir bin python]
  set real [exec $py -c {import sys, os; print(os.path.realpath(sys.executable))}]
  set r [bindings_run env PATH=[file join $dir bin] CC=false CXX=false \
           PIP_DISABLE_PIP_VERSION_CHECK=1 $real -m pip --python $py install \
           --no-index --find-links $wheels "$wheel\[apsw\]"]
  return [list {*}$r $py]
}

# The Node environment's package.json: what the tests need beside the
# package, as a user installs it.
proc node_env_manifest {} {
  set idem [file join $::bindings_root bindings node]
  return "{
  \"name\": \"idem-node-env\",
  \"private\": true,
  \"description\": \"made by test/bindings.tcl: the Node tests' packages\",
  \"dependencies\": {
    \"@modelcontextprotocol/sdk\": \"^1.32.0\",
    \"@types/better-sqlite3\": \"*\",
    \"@types/node\": \"^20.0.0\",
    \"better-sqlite3\": \"^12.0.0\",
    \"sqlite-idem\": \"file:$idem\",
    \"typescript\": \"^5.0.0\",
    \"zod\": \"^3.25.0 || ^4.0.0\"
  },
  \"allowScripts\": { \"better-sqlite3\": true, \"sqlite-idem\": true }
}
"
}

proc node_env {} {
  if {[info exists ::env(IDEM_SKIP_NODE)] && $::env(IDEM_SKIP_NODE) ne ""} {
    return [list "IDEM_SKIP_NODE is set" ""]
  }
  if {[auto_execok node] eq "" || [auto_execok npm] eq ""} {
    return [list "node or npm is not installed" ""]
  }
  set dir [file join $::bindings_root build node-env]
  set manifest [node_env_manifest]
  set pj [file join $dir package.json]
  file mkdir [file dirname $dir]
  set lock [dir_lock $dir.lock 960]
  set rc [catch {node_env_install $dir $manifest $pj} res]
  file delete -force $lock
  if {$rc} { return -code error $res }
  return $res
}

proc node_env_install {dir manifest pj} {
  set old ""
  if {[file exists $pj]} { set fd [open $pj]; set old [read $fd]; close $fd }
  if {$old ne $manifest || ![file isdirectory [file join $dir node_modules better-sqlite3]]} {
    puts "-- installing better-sqlite3@12, the MCP SDK, TypeScript and bindings/node"
    puts "   into build/node-env with npm (once; a few minutes where better-sqlite3"
    puts "   is compiled from source) ..."
    flush stdout
    file mkdir $dir
    file delete -force [file join $dir package-lock.json]
    set fd [open $pj w]; puts -nonewline $fd $manifest; close $fd
    set here [pwd]
    cd $dir
    # JOBS: node-gyp compiles better-sqlite3's two sources at once.  Its
    # install script (prebuild-install) first takes a local prebuild: the
    # one compiled here by an earlier install, of the same release for the
    # same Node (node_prebuild_dir), so that a fresh clone does not compile
    # SQLite again (about a minute of CPU).
    set prebuilds [node_prebuild_dir]
    set r [bindings_run env JOBS=max \
             npm_config_better_sqlite3_local_prebuilds=$prebuilds \
             timeout 900 npm install --no-audit --no-fund]
    cd $here
    if {[lindex $r 0] != 0} {
      file delete -force $pj           ;# try again next time
      set why [lrange [lsearch -all -inline [split [lindex $r 1] \n] {npm error*}] 0 2]
      return [list "`npm install` in build/node-env failed (exit [lindex $r 0]):\n[join $why \n]" ""]
    }
    node_prebuild_keep $dir $prebuilds
    puts "   done"
  }
  return [list "" $dir]
}

# The machine's cache of idem's tests ($IDEM_CACHE, else
# $XDG_CACHE_HOME/idem, else ~/.cache/idem; test/frameworks.tcl's too):
# nothing of a clone goes into it.
proc idem_cache {} {
  if {[info exists ::env(IDEM_CACHE)] && $::env(IDEM_CACHE) ne ""} {
    return $::env(IDEM_CACHE)
  } elseif {[info exists ::env(XDG_CACHE_HOME)] && $::env(XDG_CACHE_HOME) ne ""} {
    return [file join $::env(XDG_CACHE_HOME) idem]
  } elseif {[info exists ::env(HOME)] && [file writable $::env(HOME)]} {
    return [file join $::env(HOME) .cache idem]
  }
  return [file join $::bindings_root build cache]
}

# better-sqlite3's compiled addon, kept by node_prebuild_keep as the
# tarball prebuild-install looks for (its name: the release, Node's ABI,
# the platform and architecture), in a directory of the exact Node.
proc node_prebuild_dir {} {
  set v [string trim [exec node -p {process.version + "-" + process.platform + "-" + process.arch}]]
  return [file join [idem_cache] better-sqlite3 $v]
}

# After an install that compiled better-sqlite3 (glibc Linux only: the
# tarball's name has no libc there), keep its addon for the next one.
proc node_prebuild_keep {dir prebuilds} {
  set pkg [file join $dir node_modules better-sqlite3]
  set r [bindings_run node -e {
    const p = require(process.argv[1] + "/package.json");
    const r = process.report.getReport().header;
    if (process.platform === "linux" && r.glibcVersionRuntime)
      console.log("better-sqlite3-v" + p.version + "-node-v" + process.versions.modules +
                  "-" + process.platform + "-" + process.arch + ".tar.gz");
  } $pkg]
  set name [string trim [lindex $r 1]]
  set addon [file join $pkg build Release better_sqlite3.node]
  if {[lindex $r 0] != 0 || $name eq "" || ![file exists $addon]} return
  set tgz [file join $prebuilds $name]
  if {[file exists $tgz]} return
  file mkdir $prebuilds
  # Written aside, then renamed: another install may be reading it.
  set tmp $tgz.[pid].tmp
  if {[lindex [bindings_run tar czf $tmp -C $pkg build/Release/better_sqlite3.node] 0] == 0} {
    file rename -force $tmp $tgz
  } else {
    file delete -force $tmp
  }
}

proc node_env_check {name why} {
  if {$why eq "" || ![info exists ::env(CI)] || $::env(CI) ne "true"} return
  if {[info exists ::env(IDEM_SKIP_NODE)] && $::env(IDEM_SKIP_NODE) ne ""} return
  do_test $name { set why } {}
}

if {[info exists argv0] && [file tail $argv0] eq "bindings.tcl" && [lindex $argv 0] eq "py-wheels"} {
  lassign [py_wheels] why dir
  if {$why ne ""} { puts "py-wheels: not downloaded: $why" } else { puts "py-wheels: $dir" }
  if {$why ne "" && [info exists ::env(CI)] && $::env(CI) eq "true"} { exit 1 }
}

if {[info exists argv0] && [file tail $argv0] eq "bindings.tcl" && [lindex $argv 0] eq "node-env"} {
  lassign [node_env] why dir
  if {$why ne ""} { puts "node-env: not installed: $why" } else { puts "node-env: $dir" }
  # Under CI a Node environment that cannot be installed stops the run.
  if {$why ne "" && [info exists ::env(CI)] && $::env(CI) eq "true" &&
      !([info exists ::env(IDEM_SKIP_NODE)] && $::env(IDEM_SKIP_NODE) ne "")} {
    exit 1
  }
}
