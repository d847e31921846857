set terminal pngcairo size 1400,550 font 'sans,10' noenhanced
set output 'training_uk_retail.png'
set multiplot layout 1,2 title 'uk retail: training loss and validation MPR per epoch (validation slice of the training baskets)'
set grid
set key bottom left font 'sans,9'
set xlabel 'epoch'
set ylabel 'training loss / loss of epoch 1'
set title 'training loss (relative to epoch 1; losses differ by kind)'
plot 'hist_uk_retail_multitask.dat' using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc 1 title 'multitask', \
     'hist_uk_retail_multitask_nobias.dat' using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc 2 title 'multitask_nobias', \
     'hist_uk_retail_logistic.dat' using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc 3 title 'logistic', \
     'hist_uk_retail_lowrank.dat' using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc 4 title 'lowrank'
set key bottom right
set ylabel 'validation MPR'
set title 'validation MPR (the best epoch is kept)'
plot 'hist_uk_retail_multitask.dat' using 1:4 with linespoints lw 2 pt 7 ps 0.6 lc 1 title 'multitask', \
     'hist_uk_retail_multitask_nobias.dat' using 1:4 with linespoints lw 2 pt 7 ps 0.6 lc 2 title 'multitask_nobias', \
     'hist_uk_retail_logistic.dat' using 1:4 with linespoints lw 2 pt 7 ps 0.6 lc 3 title 'logistic', \
     'hist_uk_retail_lowrank.dat' using 1:4 with linespoints lw 2 pt 7 ps 0.6 lc 4 title 'lowrank'
unset multiplot
