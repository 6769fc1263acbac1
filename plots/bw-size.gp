# plots/bw-size.gp - bandwidth against message size, one line per lane
#   datafile  "SIZE LANE1 LANE2 ..." with a header row;  ncols: lanes;  title
set terminal svg size 720,380 dynamic font "sans,11" background rgb "white"
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set title title noenhanced
set xlabel "message size (bytes)"
set ylabel "Gb/s"
set logscale x 2
set format x "%.0s%cB"
set grid lc rgb "#dddddd"
set key left top noenhanced
set datafile missing "NaN"
plot for [i=2:ncols+1] datafile using 1:i with linespoints pt 7 ps 0.6 title columnheader(i)
