# plots/lanes.gp - median per lane (rail/plane), one bar per run; with one run, whiskers
# min..max and the lane's worst node (the median of its pairs) as a red mark beside the bar, so
# that a lane with one node at a tenth does not look like the others.  fabscope report runs it with:
#   datafile  rows "LANE MEDIAN MIN MAX WORSTNODE" (one run; WORSTNODE NaN: fewer than 3 nodes)
#             or "LANE RUN1 RUN2 ..." with a header
#   title;  ylabel;  nruns
set terminal svg size 720,360 dynamic font "sans,11" background rgb "white"
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set title title
set ylabel ylabel
set key outside right top noenhanced
set grid ytics lc rgb "#dddddd"
set yrange [0:*]
set boxwidth 0.8 relative
set style fill solid 0.7 border -1
set xtics noenhanced
set title noenhanced
if (nruns == 1) {
	set style data boxes
	set datafile missing "nan"
	plot datafile using 0:2:xtic(1) with boxes lc rgb "#4477aa" title "median", \
	     '' using 0:2:3:4 with yerrorbars lc rgb "#222222" pt 0 title "min..max", \
	     '' using ($0 + 0.25):5 with points pt 9 ps 1.6 lc rgb "#b2182b" title "worst node"
} else {
	set style data histograms
	set style histogram clustered gap 1
	plot for [i=2:nruns+1] datafile using i:xtic(1) title columnheader(i)
}
