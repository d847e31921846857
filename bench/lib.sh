# shellcheck shell=bash
# bench/lib.sh: what bench/quality/run and bench/speed/run share (source it).
#
# The extension is built from the working tree and installed into the
# PostgreSQL of $PG_CONFIG (default: pg_config on the PATH), which also runs
# the throwaway cluster (scripts/cluster.sh, the tests' launcher).  Anyone
# else's `make install` into that PostgreSQL during a run changes the library
# measured: on a shared machine, point PG_CONFIG to a copy of PostgreSQL of
# your own.
#
#   BENCH_DATA        the datasets (default: shared/data beside the repository,
#                     i.e. $(dirname repo)/shared/data; layout in its README.md)
#   BENCH_SPLIT_TOOL  make_split.py (default: $BENCH_DATA/../tools/make_split.py)
#   BENCH_CLUSTER     the cluster's directory (default /tmp/mtdpp-bench)
#   BENCH_PORT        its port (default: a free one)
#   BENCH_KEEP=1      leave the cluster running at the end
#   BENCH_LOGS        raw output of the runs, one folder per benchmark
#                     (default /tmp/mtdpp-bench-logs; bench/page.sh): only
#                     results.md pages are written into the tree

BENCH_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_DATA=${BENCH_DATA:-$(dirname "$BENCH_REPO")/shared/data}
BENCH_SPLIT_TOOL=${BENCH_SPLIT_TOOL:-$BENCH_DATA/../tools/make_split.py}
BENCH_CLUSTER=${BENCH_CLUSTER:-/tmp/mtdpp-bench}
export PG_CONFIG=${PG_CONFIG:-pg_config}
export MTDPP_PGBIN
MTDPP_PGBIN=$("$PG_CONFIG" --bindir) || exit 1
export PATH=$MTDPP_PGBIN:$PATH
[ -z "${BENCH_PORT:-}" ] || export MTDPP_PORT=$BENCH_PORT
[ "${BENCH_KEEP:-0}" != 1 ] || export MTDPP_KEEP_CLUSTER=1
# shellcheck source=scripts/cluster.sh
source "$BENCH_REPO/scripts/cluster.sh"
# shellcheck source=bench/page.sh
source "$BENCH_REPO/bench/page.sh"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
q() { psql -X -v ON_ERROR_STOP=1 -qAt "$@"; }
sql_lit() { printf "'%s'" "${1//\'/\'\'}"; }

# Builds and installs the working tree; sets BENCH_COMMIT (the short commit,
# "+uncommitted" when src/, sql/ or the Makefile differ from it).
bench_build() {
	local sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	make -C "$BENCH_REPO" -s -j2 >/tmp/mtdpp-bench-make.log 2>&1 &&
		"${sudo[@]}" make -C "$BENCH_REPO" -s install >>/tmp/mtdpp-bench-make.log 2>&1 ||
		{ cat /tmp/mtdpp-bench-make.log >&2; die "build failed"; }
	BENCH_COMMIT=$(git -C "$BENCH_REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
	[ -z "$(git -C "$BENCH_REPO" status --porcelain -- src sql Makefile 2>/dev/null)" ] ||
		BENCH_COMMIT="$BENCH_COMMIT+uncommitted"
	log "built and installed mtdpp $BENCH_COMMIT into $("$PG_CONFIG" --pkglibdir)"
}

# Starts the cluster afresh (stopped when the calling shell exits, unless
# BENCH_KEEP=1), with the extension and the bench schema (bench/bench.sql).
# Order lines are read without parallel workers unless a measurement asks.
bench_start() {
	cluster_start "$BENCH_CLUSTER" || die "the cluster did not start"
	q -c "ALTER SYSTEM SET max_parallel_workers_per_gather = 0" \
	  -c "ALTER SYSTEM SET maintenance_work_mem = '2GB'" \
	  -c "SELECT pg_reload_conf()" -c "CREATE EXTENSION mtdpp" >/dev/null &&
		q -f "$BENCH_REPO/bench/bench.sql" || die "setting up the bench database failed"
	log "cluster in $BENCH_CLUSTER, port $PGPORT"
}

# split_schema DATASET SPLIT: the schema a split is loaded as; SPLIT is
# "canonical" (the dataset's own split.csv) or the seed of make_split.py.
split_schema() { if [ "$2" = canonical ]; then echo "$1"; else echo "${1}_s$2"; fi; }

# test_schemas DATASET SPLIT: the schemas of its test baskets; instacart_sample
# twice, the last item added held out, then a random one (same baskets).
test_schemas() {
	local s
	s=$(split_schema "$1" "$2")
	case $1 in instacart_sample) echo "$s ${s}_random" ;; *) echo "$s" ;; esac
}

# bench_load DATASET SPLIT: loads the split's schemas with data/load.sql,
# drawing a seed's split with make_split.py as data/README.md says
# (uk_retail: baskets of at most 100 items; instacart_sample: the last
# item added held out, and a random one).
bench_load() {
	local ds=$1 split=$2 schema dir src=$BENCH_DATA/$1 flags=()
	schema=$(split_schema "$ds" "$split")
	dir=$src
	if [ "$split" != canonical ]; then
		dir=$BENCH_CLUSTER/splits/$schema
		mkdir -p "$dir" && ln -sf "$src/orders.csv" "$dir/orders.csv" || die "cannot write $dir"
		[ ! -f "$src/items.csv" ] || ln -sf "$src/items.csv" "$dir/items.csv"
		[ "$ds" != uk_retail ] || flags=(--max-size 100)
		if [ "$ds" = instacart_sample ]; then
			flags=(--protocol last)
			python3 "$BENCH_SPLIT_TOOL" "$src/orders.csv" "$dir/split_random.csv" --seed "$split" 2>/dev/null ||
				die "make_split.py $ds --seed $split failed"
		fi
		python3 "$BENCH_SPLIT_TOOL" "$src/orders.csv" "$dir/split.csv" --seed "$split" "${flags[@]}" 2>/dev/null ||
			die "make_split.py $ds --seed $split failed"
	fi
	psql -X -q -v ON_ERROR_STOP=1 -v dir="$dir" -v schema="$schema" -f "$BENCH_REPO/data/load.sql" >/dev/null ||
		die "loading $ds ($split) failed"
	if [ "$ds" = instacart_sample ]; then
		psql -X -q -v ON_ERROR_STOP=1 -v dir="$dir" -v schema="${schema}_random" -v split=split_random.csv \
			-f "$BENCH_REPO/data/load.sql" >/dev/null || die "loading $ds ($split, random item held out) failed"
	fi
}

# carve_validation SCHEMA: validation baskets out of a split's training
# baskets, so that choices never read its test baskets: a tenth of the
# training baskets of two items or more (at most 2,000, by md5 of the order
# id) become SCHEMA.val_baskets (order_id, basket, held_out: one item, the
# smallest md5 of order and item), the other training lines
# SCHEMA.fit_lines.
carve_validation() {
	q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS $1.val_baskets, $1.fit_lines" \
	  -c "CREATE TABLE $1.val_baskets AS
	        WITH b AS (SELECT order_id, array_agg(item_id ORDER BY position) AS basket
	                   FROM $1.train_lines GROUP BY order_id HAVING count(DISTINCT item_id) >= 2),
	             v AS (SELECT * FROM b ORDER BY md5(order_id::text)
	                   LIMIT least(2000, (SELECT count(*) / 10 FROM b)))
	        SELECT order_id, basket,
	               (SELECT i FROM unnest(basket) i ORDER BY md5(order_id::text || ':' || i) LIMIT 1) AS held_out
	        FROM v" \
	  -c "CREATE TABLE $1.fit_lines AS
	        SELECT * FROM $1.train_lines t
	        WHERE NOT EXISTS (SELECT 1 FROM $1.val_baskets v WHERE v.order_id = t.order_id)" >/dev/null
}

# Cores busy (all processes, this benchmark's included) over the last
# interval: busy_begin before a measurement, busy_end after it prints them.
busy_begin() { BUSY0=$(grep '^cpu ' /proc/stat); }
busy_end() {
	awk -v a="$BUSY0" -v n="$(nproc)" '{ split(a, x); t = 0
		for (i = 2; i <= 9; i++) t += $i - x[i]    # guest time is in user already
		idle = $5 + $6 - x[5] - x[6]
		printf "%.2f\n", (t > 0 ? n * (t - idle) / t : 0) }' <(grep '^cpu ' /proc/stat)
}
load1() { cut -d' ' -f1 /proc/loadavg; }

# The machine, as key=value lines.
machine_info() {
	echo "cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)"
	echo "cores=$(nproc)"
	echo "memory=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "postgres=$(q -c 'SELECT version()')"
	echo "blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null)"
	# OpenBLAS says which kernels it picked for this CPU when asked to
	echo "blas_core=$(OPENBLAS_VERBOSE=2 python3 -c 'import ctypes; ctypes.CDLL("libblas.so.3")' 2>&1 |
		sed -n 's/^Core: *//p')"
	echo "commit=$BENCH_COMMIT"
	echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
}
