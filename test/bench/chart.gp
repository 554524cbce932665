# SPDX-License-Identifier: MIT
# chart.gp -- the ratios of test/bench/shapes.py as an SVG chart (gnuplot).
#
#   gnuplot -e "data='build/bench/time'; out='doc/img/x.svg'; what='time'" \
#     test/bench/chart.gp
#
# data.bars: "name" canonical key (a row per corpus and shape); data.sizes:
# a block per sized shape, its first line "name" ..., then MB canonical key n.
# Left: each corpus and shape, idem_canonical and idem_key against json()
# (1.0: as costly as json()).  Right: the sized shapes, the ratio against
# the document's size (it must not grow).
if (!exists("what")) what = "time"
set terminal svg size 1200,720 dynamic font "sans,11" background "#ffffff"
set output out
set multiplot layout 1,2 title sprintf("idem against SQLite's json() (%s): below 1.0 idem costs less", what)

set title "corpora and shapes"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -55 left scale 0 font "sans,9"
set ylabel sprintf("%s / json()  (clipped at 2)", what)
set yrange [0:2]
set grid ytics
set key top left
set lmargin 8
set bmargin 14
plot data.'.bars' using 2:xtic(1) title "idem\\_canonical" lc rgb "#3b6ea8", \
     '' using 3 title "idem\\_key" lc rgb "#e1812c", \
     1 with lines dt 2 lc rgb "#555555" title "json()"

set title "sized shapes: the ratio against the size"
unset style
set style data linespoints
set xtics rotate by 0 auto font "sans,10"
set logscale x 2
set format x "%g"
set xlabel "document size (MB)"
set bmargin 14
set key bottom left font "sans,9"
set yrange [0:1.6]
plot for [i=0:4] data.'.sizes' index i using 1:2 title columnheader(1) \
       lw 2 pt 7 lc i+1, \
     for [i=0:4] data.'.sizes' index i using 1:3 notitle lw 1 dt 3 pt 6 lc i+1, \
     1 with lines dt 2 lc rgb "#555555" title "json() (dotted: idem\\_key)"
unset multiplot
