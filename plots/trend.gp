# plots/trend.gp - values run by run, one line a series (a lane's median, a suspect's value):
# fabscope report --history runs it with:
#   datafile  rows "RUN SERIES1 SERIES2 ..." with a header naming the series (NaN: not measured)
#   title;  ylabel;  nseries
set terminal svg size 720,360 dynamic font "sans,11" background rgb "white"
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set title title noenhanced
set ylabel ylabel
set xlabel "run (oldest first)"
set key outside right top noenhanced
set grid ytics lc rgb "#dddddd"
set yrange [0:*]
set xtics 1
set datafile missing "NaN"
plot for [i=2:nseries+1] datafile using 1:i with linespoints pt 7 ps 0.6 title columnheader(i)
