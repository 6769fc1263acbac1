# plots/coll.gp - busbw of a collective against message size, one line per lane (and run)
#   datafile  pairs of columns "SIZE BUSBW" per line, header row of names, NaN padding
#   nlines;  dts, lcs: per line, as words, its dash type (one per run) and its colour (one
#   per lane);  title
set terminal svg size 720,380 dynamic font "sans,11" background rgb "white"
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set title title noenhanced
set xlabel "message size (bytes)"
set ylabel "busbw (Gb/s)"
set logscale x 2
set format x "%.0b %BB"
set yrange [0:*]
set grid lc rgb "#dddddd"
set key outside right top noenhanced
set datafile missing "NaN"
plot for [i=1:nlines] datafile using (column(2*i-1)):(column(2*i)) with linespoints \
	dt int(word(dts, i)) lc int(word(lcs, i)) lw 1.5 pt 7 ps 0.6 title columnheader(2*i-1)
