set terminal pngcairo size 1500,1000 font 'sans,10' noenhanced
set output 'quality.png'
set rmargin 42
set multiplot layout 2,1 title 'mtdpp: test MPR and precision@20, canonical split (hatched: references)'
set style data histograms
set style histogram clustered gap 1
set boxwidth 0.95
set grid ytics
set key outside right top vertical font 'sans,9'
set title 'MPR (50 = random, 100 = perfect)'
set yrange [45:100]
plot 'quality_mpr.dat' using 2:xtic(1) title 'popularity' fs solid 0.85 border -1 lc 1, \
     'quality_mpr.dat' using 3 title 'bayesian_lowrank' fs solid 0.85 border -1 lc 2, \
     'quality_mpr.dat' using 4 title 'paper: multi-task logDPP' fs pattern 4 border -1 lc 3, \
     'quality_mpr.dat' using 5 title 'data README: item-kNN' fs pattern 4 border -1 lc 4

unset key
set title 'precision@20 (%)'
set yrange [0:*]
plot 'quality_p20.dat' using 2:xtic(1) title 'popularity' fs solid 0.85 border -1 lc 1, \
     'quality_p20.dat' using 3 title 'bayesian_lowrank' fs solid 0.85 border -1 lc 2, \
     'quality_p20.dat' using 4 title 'paper: multi-task logDPP' fs pattern 4 border -1 lc 3, \
     'quality_p20.dat' using 5 title 'data README: item-kNN' fs pattern 4 border -1 lc 4

unset multiplot
