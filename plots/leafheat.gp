# plots/leafheat.gp - a large lane's leaf x leaf matrix: row = the senders' leaf, column = the receivers'
#   datafile  "i j value" for every cell (NaN: no pair between them, drawn blank: not declared
#   missing, which would drop the cell and skew the grid);  hdrfile: tics and ranges
#   title;  cblabel;  what ("leaf" or "pod");  cbmax: the top of the colour scale (the
#   same for every lane of a phase and test, so that a slow lane shows);  high_bad: 1 for latency
set terminal svg size 640,620 dynamic font "sans,10" background rgb "white"
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set title title noenhanced
load hdrfile
set xlabel "receivers' ".what
set ylabel "senders' ".what
set cblabel cblabel
if (high_bad) { set palette defined (0 "#2166ac", 0.5 "#fddbc7", 1 "#b2182b") } \
else { set palette defined (0 "#b2182b", 0.5 "#fddbc7", 1 "#2166ac") }
set cbrange [0:cbmax]
set size square
unset key
plot datafile using 1:2:3 with image
