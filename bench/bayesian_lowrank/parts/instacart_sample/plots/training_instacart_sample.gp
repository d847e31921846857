set terminal pngcairo size 1400,550 font 'sans,10' noenhanced
set output 'training_instacart_sample.png'
set multiplot layout 1,2 title 'instacart_sample: training loss and validation MPR per epoch (validation slice of the training baskets)'
set grid
set xlabel 'epoch'
set key bottom left font 'sans,9'
set title 'training loss / loss of epoch 1 (losses differ by kind)'
plot 'hist_instacart_sample_bayesian_lowrank.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc 1 title 'bayesian_lowrank'
set key bottom right
set title 'validation MPR (the best epoch is kept)'
plot 'hist_instacart_sample_bayesian_lowrank.dat' using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc 1 title 'bayesian_lowrank'
unset multiplot
