# plots/heatmap.gp - the N x N matrix of one lane: row = sender, column = receiver
#   datafile  "i j value" triples, only the cells that were measured;  hdrfile: xtics/ytics names
#   title;  cblabel;  labels: 1 to write each cell's figure in it (small matrices);
#   high_bad: 1 for latency (high is worse: red), 0 for bandwidth (low is worse: red);
#   cbmax: the top of the colour scale (latency: twice the lane's median, or its highest
#   figure above that, so that a lane of equal pairs is pale, not red; 0: the highest figure)
set terminal svg size 560,520 dynamic font "sans,10" background rgb "white"
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set title title noenhanced
load hdrfile
set xlabel "receiver"
set ylabel "sender"
set cblabel cblabel
set datafile missing "NaN"
if (high_bad) { set palette defined (0 "#2166ac", 0.5 "#fddbc7", 1 "#b2182b") } \
else { set palette defined (0 "#b2182b", 0.5 "#fddbc7", 1 "#2166ac") }
if (cbmax > 0) { set cbrange [0:cbmax] } else { set cbrange [0:*] }
set size square
set style fill solid 1.0 noborder
unset key
if (labels) {
	plot datafile using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, \
	     '' using 1:2:(sprintf("%.3g", $3)) with labels font "sans,8"
} else {
	plot datafile using 1:2:(0.5):(0.5):3 with boxxyerror fc palette
}
