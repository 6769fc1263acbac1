# plots/pfc.gp - PFC pauses over a probe's sampling, one line per port, priority and direction
# (rx: the peer paused the port; tx: the port paused the peer); below, when known, the
# fraction of each interval paused.  The load's window ("during") is shaded.
#   datafile  pairs of columns "SECONDS FRAMES/S" per series, a header row of names, NaN padding
#   fracfile  the same with the paused fraction (0..1);  npps, nfrac: series in each
#   fcols     for each fraction series, the number of its pause-rate series ("1 3"): one colour
#   dfrom, dto  the load's window in seconds (dto <= dfrom: none);  title
# A value holds over its interval: the points are interval ends, drawn as steps.
if (nfrac > 0) {
	set terminal svg size 720,560 dynamic font "sans,11" background rgb "white"
} else {
	set terminal svg size 720,360 dynamic font "sans,11" background rgb "white"
}
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set datafile missing "NaN"
set grid lc rgb "#dddddd"
set autoscale xfix
set key outside right top noenhanced
set lmargin 12			# the panels line up, whatever their tick labels
set rmargin at screen 0.66	# room for the legend
if (dto > dfrom) {
	set object 1 rect from dfrom, graph 0 to dto, graph 1 behind fc rgb "#fdebd0" fs solid 1.0 noborder
	set label 1 "load" at dfrom, graph 0.96 offset 0.5,0 tc rgb "#a0522d" font "sans,9"
}
if (nfrac > 0) {
	set multiplot layout 2,1 title title noenhanced
	set xlabel ""
	set ylabel "pause frames/s"
	set yrange [0:*]
	plot for [i=1:npps] datafile using (column(2*i-1)):(column(2*i)) with fsteps lw 2 lt i title columnheader(2*i-1)
	set xlabel "seconds"
	set ylabel "fraction of the interval paused"
	set yrange [0:1.12]		# room above 1 for the window's label
	set ytics 0, 0.2, 1
	plot for [i=1:nfrac] fracfile using (column(2*i-1)):(column(2*i)) with fsteps lw 2 lt (word(fcols, i) + 0) \
		title columnheader(2*i-1)
	unset multiplot
} else {
	set title title noenhanced
	set xlabel "seconds"
	set ylabel "pause frames/s"
	set yrange [0:*]
	plot for [i=1:npps] datafile using (column(2*i-1)):(column(2*i)) with fsteps lw 2 lt i title columnheader(2*i-1)
}
