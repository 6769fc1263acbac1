# plots/modes.gp - one bandwidth phase and lane under each load-balancing mode (a run each)
#   datafile  "NAME AGGREGATE EXPECTED" rows (EXPECTED NaN: no topology);  title
# Bars: the pairs' sum a round under each mode; a mark: what the fabric carries for the same
# pairs (the model, every switch splitting equally), when the report was given --topology.
set terminal svg size 720,340 dynamic font "sans,11" background rgb "white"
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set title title noenhanced
set ylabel "aggregate Gb/s (a round)"
set yrange [0:*]
set grid ytics lc rgb "#dddddd"
set style fill solid 0.8 border -1
set boxwidth 0.6 relative
set xtics noenhanced
set key top right noenhanced
set datafile missing "NaN"
plot datafile using 0:2:xtic(1) with boxes lc rgb "#2166ac" title "measured", \
     datafile using 0:3 with points pt 9 ps 2 lc rgb "#b2182b" title "the fabric (model)"
