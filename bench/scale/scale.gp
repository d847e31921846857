set terminal pngcairo size 1300,520 font 'sans,10' noenhanced
set output 'scale.png'
set logscale xy
set grid
set key top left
set xlabel 'order lines'
set multiplot layout 1,2 title 'mtdpp_train defaults on synthetic order lines (50,000 items)'
set title 'seconds (gather: reading and merging the lines)'
plot 'scale_hybrid.dat' using 1:2 with linespoints lw 2 pt 7 title 'hybrid', 'scale_itemknn.dat' using 1:2 with linespoints lw 2 pt 7 title 'itemknn', 'scale_multitask.dat' using 1:2 with linespoints lw 2 pt 7 title 'multitask', 'scale_gather.dat' using 1:2 with linespoints lw 2 pt 7 title 'gather', 600 with lines dt 2 lc rgb 'gray' title '10 minutes'
set title 'peak resident memory of the backend, MB'
plot 'scale_hybrid.dat' using 1:3 with linespoints lw 2 pt 7 title 'hybrid', 'scale_itemknn.dat' using 1:3 with linespoints lw 2 pt 7 title 'itemknn', 'scale_multitask.dat' using 1:3 with linespoints lw 2 pt 7 title 'multitask'
unset multiplot
