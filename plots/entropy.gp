# plots/entropy.gp - the rate of every flow of a polarization probe, by its entropy value
#   datafile  "ENTROPY GBPS SHARING" rows;  title;  xlabel
# A flow alone on its path reaches the path's rate; k flows on one path get 1/k of it each,
# so the bars fall into levels: the fewer levels and the lower, the worse the hashing.
set terminal svg size 720,340 dynamic font "sans,11" background rgb "white"
set output	# (standard output: the runner gives gnuplot the file to write, opened as a new file)
set title title noenhanced
set xlabel xlabel
set ylabel "Gb/s"
set yrange [0:*]
set grid ytics lc rgb "#dddddd"
set style fill solid 0.8 border -1
set boxwidth 0.8 relative
set xtics rotate by -60 font "sans,8" noenhanced
unset key
set palette defined (1 "#2166ac", 2 "#92c5de", 4 "#f4a582", 8 "#b2182b")
set cbrange [1:8]
set cblabel "flows sharing its bottleneck"
plot datafile using 0:2:3:xtic(1) with boxes fc palette
