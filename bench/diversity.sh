#!/usr/bin/env bash
# The quality/diversity trade-off of mtdpp_complete_set, and its latency.
#
#   bench/diversity.sh
#
# Connects with the usual PG* variables to a server where mtdpp is installed
# (a throwaway one: MTDPP_PGBIN=... scripts/cluster.sh start DIR, then
# eval "$(scripts/cluster.sh env DIR)").  Loads amazon_daf (schema daf) and
# belgian_retail (schema br) from BENCH_DATA (default ../shared/data beside the repository)
# unless loaded, trains the models it needs unless trained (daf: multitask
# with defaults; daf_knn: itemknn; br64: multitask at rank 64, about 3
# minutes on 2 cores), then runs bench/diversity.sql and
# bench/diversity_latency.sql and writes bench/diversity_results.md and
# bench/plots/diversity.png (gnuplot).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DATA=${BENCH_DATA:-$(cd "$(dirname "$0")/.." && pwd)/../shared/data}
LAT_N=${LAT_N:-500}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }

q -c "CREATE EXTENSION IF NOT EXISTS mtdpp"
for ds in daf:amazon_daf br:belgian_retail; do
	schema=${ds%%:*} dir=${ds#*:}
	if [ "$(q -c "SELECT to_regclass('$schema.test_baskets') IS NOT NULL")" != t ]; then
		psql -X -q -v dir="$BENCH_DATA/$dir" -v schema="$schema" -f data/load.sql >/dev/null
	fi
done
train() {	# name, then mtdpp_train's arguments after the name
	local name=$1
	shift
	if [ "$(q -c "SELECT count(*) FROM mtdpp_models WHERE name = '$name' AND active")" = 0 ]; then
		q -c "SET maintenance_work_mem = '512MB'" -c "SELECT count(*) FROM mtdpp_train('$name', $*)" >/dev/null
	fi
}
train daf "'daf.train_lines', position_col => 'position'"
train daf_knn "'daf.train_lines', kind => 'itemknn'"
train br64 "'br.train_lines', rank => 64"
q -c "SELECT mtdpp_activate('daf')" >/dev/null

psql -X -q -v out="$tmp/tradeoff.txt" -f bench/diversity.sql >/dev/null
PGOPTIONS="-c bench.n=$LAT_N" psql -X -q -v out="$tmp/latency.txt" -f bench/diversity_latency.sql >/dev/null

# the curve, and the two baselines as points
awk '$1 == "mtdpp_complete_set" { print $2, $3, $4, $6 }' "$tmp/tradeoff.txt" >"$tmp/curve.dat"
awk '$1 == "item-kNN" { print $3, $4, $6 }' "$tmp/tradeoff.txt" >"$tmp/knn.dat"
mkdir -p bench/plots
gnuplot <<GP
set terminal pngcairo size 1100,460 font ",10" noenhanced
set output "bench/plots/diversity.png"
set multiplot layout 1,2 title "amazon_daf: mtdpp_complete_set over diversity 0 .. 1 (labels), against today's ranking and item-kNN"
set grid
set key bottom left
set xlabel "distinct categories in the top 10 (mean)"
set ylabel "precision@10 (%)"
plot "$tmp/curve.dat" using 3:2 with linespoints pt 7 lw 2 title "mtdpp_complete_set", \
     "" using 3:2:(sprintf("%g", \$1)) with labels offset 1.5,0.6 notitle, \
     "$tmp/knn.dat" using 2:1 with points pt 5 ps 1.5 title "item-kNN", \
     "$tmp/curve.dat" every ::0::0 using 3:2 with points pt 9 ps 2 title "mtdpp_complete (= diversity 0)"
set xlabel "mean squared cosine of item factors over the 45 pairs of the top 10"
set xrange [*:*] reverse
plot "$tmp/curve.dat" using 4:2 with linespoints pt 7 lw 2 title "mtdpp_complete_set", \
     "" using 4:2:(sprintf("%g", \$1)) with labels offset 1.5,0.6 notitle, \
     "$tmp/knn.dat" using 3:1 with points pt 5 ps 1.5 title "item-kNN"
unset multiplot
GP

commit=$(git rev-parse HEAD)
dirty=$(git status --porcelain --untracked-files=no | grep -q . && echo " (with uncommitted changes)" || true)
{
	echo "# Diverse set completion: the quality/diversity trade-off"
	echo
	echo "Written by \`bench/diversity.sh\` on $(date -u +%Y-%m-%d), commit \`$commit\`$dirty;"
	echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg);"
	echo "$(psql -X -At -c 'SELECT version()' | cut -d, -f1)."
	echo
	echo "amazon_daf, every one of its $(q -c 'SELECT count(*) FROM daf.test_baskets') test baskets with its held-out item hidden, 10 items asked"
	echo "for: model \`daf\` (multitask, default hyperparameters) through \`mtdpp_complete_set\`"
	echo "at each diversity, \`mtdpp_complete\` (today's ranking) and item-kNN (\`daf_knn\`)."
	echo "Categories: the prefix of the item name (diaper, apparel, feeding)."
	echo "Similarity: cosine of \`daf\`'s item factors over the 45 pairs of the 10, its mean and"
	echo "the mean of its square (a pair spans det S = 1 - cos^2, so that is what a DPP sees)."
	echo
	echo "| method | diversity | precision@10 (%) | distinct categories | mean cosine | mean cosine^2 | baskets |"
	echo "|---|---|---|---|---|---|---|"
	awk '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' "$tmp/tradeoff.txt"
	echo
	echo "![trade-off](plots/diversity.png)"
	echo
	echo "## Latency"
	echo
	echo "belgian_retail, model \`br64\` (multitask, rank 64, $(q -c "SELECT items FROM mtdpp_models WHERE name = 'br64' AND active") items): the first $LAT_N test"
	echo "baskets without their held-out item, each asked in turn for a 10-item set"
	echo "(\`mtdpp_complete_set\`, diversity 0.5) and a top 10 (\`mtdpp_complete\`), timed in"
	echo "PL/pgSQL around the call, after a warm-up call that loads the model."
	echo
	echo "| call | calls | p50 (ms) | p90 (ms) |"
	echo "|---|---|---|---|"
	awk '{ printf "| %s | %s | %s | %s |\n", $1 == "top10" ? "mtdpp_complete, top 10" : "mtdpp_complete_set, 10 items", $2, $3, $4 }' "$tmp/latency.txt"
	awk '{ p50[$1] = $3; p90[$1] = $4 } END { printf "\nRatio set / top 10: %.2f at p50, %.2f at p90.\n", p50["set10"] / p50["top10"], p90["set10"] / p90["top10"] }' "$tmp/latency.txt"
} >bench/diversity_results.md
cat bench/diversity_results.md
