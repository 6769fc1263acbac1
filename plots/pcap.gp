# plots/pcap.gp - a capture over time (fabscope pcap --plot): the busiest QP flows' throughput
# and the PFC pause frames per priority
#   flows     data file: one block per flow ("SECONDS GBPS" rows), blocks apart by two blank lines
#   nflows    blocks in it;  names  their titles, separated by blanks
#   pfc       data file: one block per priority with frames ("SECONDS FRAMES_PER_S");  npfc, pnames
#   xmax      the capture's length in seconds (both panels share the axis);  title
set terminal svg size 900,560 dynamic font "sans,11" background rgb "white"
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set multiplot layout 2,1 title title noenhanced
set grid ytics lc rgb "#dddddd"
set key outside right top font "sans,9" noenhanced
set xlabel "seconds from the first packet"
set ylabel "Gb/s"
set yrange [0:*]
set xrange [0:(xmax > 0 ? xmax : 1)]
set format y "%g"
if (nflows > 0) {
	plot for [i=0:nflows-1] flows index i using 1:2 with steps lw 1.5 title word(names, i+1)
} else {
	set label 1 "no RoCEv2 packets" at graph 0.5, 0.5 center
	plot [0:1][0:1] -1 notitle
	unset label 1
}
set ylabel "PFC frames/s"
if (npfc > 0) {
	plot for [i=0:npfc-1] pfc index i using 1:2 with steps lw 1.5 title word(pnames, i+1)
} else {
	set label 2 "no PFC or PAUSE frames" at graph 0.5, 0.5 center
	plot [0:1][0:1] -1 notitle
}
unset multiplot
