# SPDX-License-Identifier: MIT
# test/fuzz/corpus.tcl -- build the seed corpora of the fuzz targets.
#
#   tclsh test/fuzz/corpus.tcl OUTDIR
#
# writes OUTDIR/canonical/ (inputs of fuzz_canonical) and OUTDIR/key/
# (inputs of fuzz_key) from what the tests already hold:
#   - test/fuzz/seeds/canonical/* and seeds/key/* (hand-written, and every
#     finding's regression input), as they are;
#   - build/numbers.txt (make fuzz-corpus makes it), the number literals,
#     64 to a JSON array;
#   - test/data/jcs/input/*.json (the RFC 8785 examples);
#   - the JSON literals quoted in test/*.test;
#   - test/data/keys.txt, the golden key vectors, in fuzz_key's layout.
# The corpus is generated, never committed: build/fuzz-corpus by default.
set root [file normalize [file join [file dirname [info script]] .. ..]]
if {[llength $argv] != 1} { puts stderr "usage: tclsh corpus.tcl OUTDIR"; exit 2 }
set out [file normalize [lindex $argv 0]]
foreach d {canonical key} { file delete -force $out/$d; file mkdir $out/$d }

set n(canonical) 0
set n(key) 0
proc put {which bytes} {
  set f [open [file join $::out $which [format %05d [incr ::n($which)]]] wb]
  puts -nonewline $f $bytes
  close $f
}
proc slurp {path} {
  set f [open $path rb]; set d [read $f]; close $f; return $d
}
# fuzz_key's layout: flags, then who, conv, tool with 2-byte lengths, args.
proc keyinput {flags who conv tool args} {
  set b [binary format c $flags]
  foreach p [list $who $conv $tool] {
    append b [binary format s [string length $p]] $p
  }
  return $b$args
}

# 1. Hand-written seeds and regression inputs.
foreach which {canonical key} {
  foreach f [lsort [glob -nocomplain [file join $root test fuzz seeds $which *]]] {
    put $which [slurp $f]
  }
}

# 2. Number literals, 64 to an array.
set nums {}
set f [open [file join $root build numbers.txt] r]
while {[gets $f line] >= 0} {
  set lit [lindex [split $line \t] 0]
  if {$lit eq ""} continue
  lappend nums $lit
  if {[llength $nums] == 64} { put canonical "\[[join $nums ,]\]"; set nums {} }
}
close $f
if {[llength $nums]} { put canonical "\[[join $nums ,]\]" }

# 3. The RFC 8785 examples (test/data/jcs).
foreach f [lsort [glob [file join $root test data jcs input *.json]]] {
  put canonical [slurp $f]
  put key [keyinput 0x80 alice conv-1 [file rootname [file tail $f]] [slurp $f]]
}

# 4. JSON literals quoted in the tests ('...' with '' for a quote).
set seen [dict create]
foreach t [lsort [glob [file join $root test *.test]]] {
  set text [encoding convertto utf-8 [slurp $t]]
  foreach {- lit} [regexp -all -inline {'((?:[^']|'')*)'} $text] {
    set lit [string map {'' '} $lit]
    if {![regexp {^\s*[\[\{"0-9-]} $lit] || [dict exists $seen $lit]} continue
    dict set seen $lit 1
    put canonical $lit
    put key [keyinput 0x80 u c t $lit]
  }
}

# 5. The golden key vectors: TYPE:HEX parts, b being a blob.
set f [open [file join $root test data keys.txt] r]
while {[gets $f line] >= 0} {
  set fields [split $line \t]
  if {[llength $fields] < 5} continue
  set flags 0
  set parts {}
  foreach p [lrange $fields 0 3] i {0 1 2 3} {
    lassign [split $p :] type hex
    if {$hex eq "" && ![string match *: $p]} { set hex $type; set type t }
    if {$type eq "b" && $i < 3} { set flags [expr {$flags | (1 << $i)}] }
    lappend parts [binary format H* $hex]
  }
  put key [keyinput [expr {$flags | 0x80}] {*}$parts]
}
close $f

puts "corpus: $n(canonical) inputs in $out/canonical, $n(key) in $out/key"
