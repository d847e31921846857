set terminal pngcairo size 1500,1000 font 'sans,10' noenhanced
set output 'quality.png'
set rmargin 42
set bmargin 4
set multiplot layout 2,1 title 'mtdpp: test MPR and precision@20 per dataset and model (hatched: references)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.95
set grid ytics
set key outside right top vertical font 'sans,9'
set xtics font 'sans,9'
set title 'MPR (50 = random, 100 = perfect)'
set yrange [45:100]
plot 'quality_mpr.dat' using 2:xtic(1) title 'multitask' fs solid 0.85 border -1 lc 1, \
     'quality_mpr.dat' using 3 title 'multitask_nobias' fs solid 0.85 border -1 lc 2, \
     'quality_mpr.dat' using 4 title 'logistic' fs solid 0.85 border -1 lc 3, \
     'quality_mpr.dat' using 5 title 'lowrank' fs solid 0.85 border -1 lc 4, \
     'quality_mpr.dat' using 6 title 'itemknn' fs solid 0.85 border -1 lc 5, \
     'quality_mpr.dat' using 7 title 'popularity' fs solid 0.85 border -1 lc 6, \
     'quality_mpr.dat' using 8 title 'multitask (target last)' fs solid 0.85 border -1 lc 7, \
     'quality_mpr.dat' using 9 title 'paper: multi-task logDPP (Table 1/2)' fs pattern 4 border -1 lc 8, \
     'quality_mpr.dat' using 10 title 'data README: item-kNN' fs pattern 4 border -1 lc 9

unset key
set title 'precision@20 (%)'
set yrange [0:*]
plot 'quality_p20.dat' using 2:xtic(1) title 'multitask' fs solid 0.85 border -1 lc 1, \
     'quality_p20.dat' using 3 title 'multitask_nobias' fs solid 0.85 border -1 lc 2, \
     'quality_p20.dat' using 4 title 'logistic' fs solid 0.85 border -1 lc 3, \
     'quality_p20.dat' using 5 title 'lowrank' fs solid 0.85 border -1 lc 4, \
     'quality_p20.dat' using 6 title 'itemknn' fs solid 0.85 border -1 lc 5, \
     'quality_p20.dat' using 7 title 'popularity' fs solid 0.85 border -1 lc 6, \
     'quality_p20.dat' using 8 title 'multitask (target last)' fs solid 0.85 border -1 lc 7, \
     'quality_p20.dat' using 9 title 'paper: multi-task logDPP (Table 1/2)' fs pattern 4 border -1 lc 8, \
     'quality_p20.dat' using 10 title 'data README: item-kNN' fs pattern 4 border -1 lc 9

unset multiplot
