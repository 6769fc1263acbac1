# plots/cdf.gp - the distribution of a latency over the pairs of each lane
#   datafile  pairs of columns "LAT FRACTION" per lane, header row of names, NaN padding
#   nlanes;  title;  xlabel
set terminal svg size 720,380 dynamic font "sans,11" background rgb "white"
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set title title noenhanced
set xlabel xlabel
set ylabel "fraction of pairs"
set yrange [0:1.02]
set grid lc rgb "#dddddd"
set key right bottom noenhanced
set datafile missing "NaN"
plot for [i=1:nlanes] datafile using (column(2*i-1)):(column(2*i)) with steps lw 2 title columnheader(2*i-1)
