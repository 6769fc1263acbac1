# plots/heatmap.gp - the N x N matrix of one lane: row = sender, column = receiver
#   datafile  "i j value" triples, only the cells that were measured;  hdrfile: xtics/ytics names
#   title;  cblabel;  labels: 1 to write each cell's figure in it (small matrices)
set terminal svg size 560,520 dynamic font "sans,10" background rgb "white"
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set title title noenhanced
load hdrfile
set xlabel "receiver"
set ylabel "sender"
set cblabel cblabel
set datafile missing "NaN"
set palette defined (0 "#b2182b", 0.5 "#fddbc7", 1 "#2166ac")
set cbrange [0:*]
set size square
set style fill solid 1.0 noborder
unset key
if (labels) {
	plot datafile using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, \
	     '' using 1:2:(sprintf("%.3g", $3)) with labels font "sans,8"
} else {
	plot datafile using 1:2:(0.5):(0.5):3 with boxxyerror fc palette
}
