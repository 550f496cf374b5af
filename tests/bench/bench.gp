# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The plot of `make bench`: gnuplot -e "dir='...'; out='...'; cpus=N" bench.gp
# Left: latency distributions, UALink beside PRIME; right: batch T(N).
set terminal pngcairo size 1400,560 font ",10"
set output out
load dir.'/fit.dat'
set multiplot layout 1,2 title sprintf("UALink uAPI on the emulated pod (QEMU TCG, %d vCPUs), PRIME on vgem in the same run", cpus)

set title "latency (cumulative distribution)"
set logscale x
set xlabel "microseconds"
set ylabel "fraction of samples"
set key bottom right
set grid
plot dir.'/lat-prime-cached.dat' w l lw 2 t "PRIME handle->fd, cached", \
     dir.'/lat-prime-fresh.dat' w l lw 2 t "PRIME handle->fd->handle, fresh", \
     dir.'/lat-info.dat' w l t "UALink INFO", \
     dir.'/lat-prime-b2b.dat' w l lw 2 t "PRIME handle->fd, cached, back to back", \
     dir.'/lat-pipe.dat' w l lw 2 dt 3 t "thread round trip (pipe)", \
     dir.'/lat-again.dat' w l t "UALink repeated import, after a first", \
     dir.'/lat-again-b2b.dat' w l t "UALink repeated import, back to back", \
     dir.'/lat-export.dat' w l t "UALink export", \
     dir.'/lat-first.dat' w l t "UALink first import (wall)", \
     dir.'/lat-first-cpu.dat' w l dt 2 t "UALink first import (importer CPU)", \
     dir.'/lat-release.dat' w l t "UALink release"

set title "batched import: T(N) = a + b N"
unset logscale x
set logscale xy
set xlabel "handles in the batch (N)"
set ylabel "microseconds"
set key top left
plot dir.'/tn-one.dat' u 1:2 w lp pt 7 t "1 exporter, wall", \
     dir.'/tn-one.dat' u 1:3 w lp pt 6 t "1 exporter, importer CPU", \
     dir.'/tn-many.dat' u 1:2 w lp pt 5 t "N exporters, wall", \
     dir.'/tn-many.dat' u 1:3 w lp pt 4 t "N exporters, importer CPU", \
     dir.'/tn-one.dat' u 1:6 w lp pt 1 lc rgb "gray40" t "PRIME beside 1 exporter, CPU", \
     dir.'/tn-many.dat' u 1:6 w lp pt 2 lc rgb "gray40" t "PRIME beside N exporters, CPU", \
     [1:1023] a1 + b1 * x dt 2 t "fit, 1 exporter", \
     [1:1023] an + bn * x dt 3 t "fit, N exporters", \
     [1:1023] prime * x dt 4 lc rgb "black" t "PRIME fresh round trip (at the start) x N"
unset multiplot
