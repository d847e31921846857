# bench/lib.sh: helpers shared by bench/sweep and bench/run (source it).
#
# The benchmark never uses the shared `mtdpp` install: other engineers run
# `make install` from the live working tree at any moment, and a backend that
# loads a newer mtdpp.so than the SQL objects of its database breaks.  So the
# bench builds a *committed* revision (BENCH_REV, default HEAD; or
# BENCH_REV=worktree for the working tree as it is) in a private directory and
# installs it under another extension name, mtdpp_bench (mtdpp_bench.so,
# mtdpp_bench.control, mtdpp_bench--<ver>.sql).  The C code and the SQL API
# are byte-for-byte the project's; only the file names differ.  Inside the
# bench database the functions are the usual mtdpp_train, mtdpp_evaluate,
# mtdpp_complete and the models the usual mtdpp.models / mtdpp.items.
#
# The cluster is a throwaway one run by user postgres (PostgreSQL refuses
# root) in BENCH_DIR (default /tmp/pgbench_c) on port BENCH_PORT (5498),
# Unix socket only, fsync off.

BENCH_REPO=${BENCH_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BENCH_DATA=${BENCH_DATA:-$BENCH_REPO/../shared/data}
BENCH_DIR=${BENCH_DIR:-/tmp/pgbench_c}
BENCH_PORT=${BENCH_PORT:-5498}
BENCH_EXT=${BENCH_EXT:-mtdpp_bench}
BENCH_REV=${BENCH_REV:-HEAD}
BENCH_BUILD=${BENCH_BUILD:-/tmp/pgbench_build}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}

export PGHOST=$BENCH_DIR PGPORT=$BENCH_PORT PGUSER=postgres PGDATABASE=postgres

# Every dataset of BENCH_DATA: schema name, directory, split file.
# instacart_sample is loaded twice: split.csv (last item held out) and
# split_random.csv (a random one), as schemas instacart_sample / instacart_random.
BENCH_DATASETS=(amazon_diaper amazon_daf belgian_retail uk_retail instacart_sample instacart_random)
dataset_dir() { case $1 in instacart_random) echo "$BENCH_DATA/instacart_sample" ;; *) echo "$BENCH_DATA/$1" ;; esac; }
dataset_split() { case $1 in instacart_random) echo split_random.csv ;; *) echo split.csv ;; esac; }

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

q() { psql -X -v ON_ERROR_STOP=1 -qAt "$@"; }

# Builds BENCH_REV into BENCH_BUILD and installs it as extension BENCH_EXT.
# Sets BENCH_COMMIT (the commit id, or "worktree+<HEAD>").
bench_build() {
	local rev=$BENCH_REV
	rm -rf "$BENCH_BUILD" && mkdir -p "$BENCH_BUILD" || die "cannot create $BENCH_BUILD"
	if [ "$rev" = worktree ]; then
		BENCH_COMMIT="worktree+$(git -C "$BENCH_REPO" rev-parse --short HEAD)"
		(cd "$BENCH_REPO" && tar -cf - Makefile ./*.control sql src) | tar -xf - -C "$BENCH_BUILD"
	else
		BENCH_COMMIT=$(git -C "$BENCH_REPO" rev-parse "$rev") || die "unknown revision $rev"
		git -C "$BENCH_REPO" archive "$BENCH_COMMIT" Makefile mtdpp.control sql src | tar -xf - -C "$BENCH_BUILD"
	fi
	(
		cd "$BENCH_BUILD" || exit 1
		local ver
		ver=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" mtdpp.control)
		sed "s|\$libdir/mtdpp'|\$libdir/$BENCH_EXT'|" mtdpp.control >"$BENCH_EXT.control"
		cp "sql/mtdpp--$ver.sql" "sql/$BENCH_EXT--$ver.sql"
		make -s -j2 EXTENSION="$BENCH_EXT" MODULE_big="$BENCH_EXT" >build.log 2>&1 &&
			make -s EXTENSION="$BENCH_EXT" MODULE_big="$BENCH_EXT" install >>build.log 2>&1
	) || { cat "$BENCH_BUILD/build.log" >&2; die "build of $BENCH_COMMIT failed"; }
	export BENCH_COMMIT
	log "built and installed $BENCH_EXT from $BENCH_COMMIT"
}

bench_cluster_stop() {
	if [ -f "$BENCH_DIR/data/postmaster.pid" ]; then
		as_postgres "$PGBIN/pg_ctl" -D "$BENCH_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
}

# (Re)starts the throwaway cluster from scratch.
bench_cluster_start() {
	case $BENCH_DIR in /tmp/?*) ;; *) die "BENCH_DIR must be under /tmp" ;; esac
	bench_cluster_stop
	rm -rf "$BENCH_DIR"
	mkdir -p "$BENCH_DIR" && chown postgres "$BENCH_DIR" 2>/dev/null
	as_postgres "$PGBIN/initdb" -D "$BENCH_DIR/data" -U postgres -A trust -E UTF8 --no-locale -N \
		>"$BENCH_DIR/initdb.log" 2>&1 || die "initdb failed (see $BENCH_DIR/initdb.log)"
	as_postgres tee -a "$BENCH_DIR/data/postgresql.conf" >/dev/null <<CONF
port = $BENCH_PORT
listen_addresses = ''
unix_socket_directories = '$BENCH_DIR'
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 256MB
maintenance_work_mem = 1GB
max_parallel_workers_per_gather = 0
lc_messages = 'C'
CONF
	as_postgres "$PGBIN/pg_ctl" -D "$BENCH_DIR/data" -l "$BENCH_DIR/server.log" -w -t 60 start >/dev/null ||
		die "server did not start (see $BENCH_DIR/server.log)"
	q -c "CREATE EXTENSION $BENCH_EXT" || die "CREATE EXTENSION $BENCH_EXT failed"
	log "cluster up in $BENCH_DIR, port $BENCH_PORT"
}

# Loads one dataset (schema = its name) with the project's data/load.sql.
bench_load() {
	local ds=$1
	psql -X -q -v ON_ERROR_STOP=1 -v dir="$(dataset_dir "$ds")" -v schema="$ds" \
		-v split="$(dataset_split "$ds")" -f "$BENCH_BUILD/load.sql" >/dev/null ||
		die "loading $ds failed"
}

bench_load_sql() {
	if [ "$BENCH_REV" = worktree ]; then
		cp "$BENCH_REPO/data/load.sql" "$BENCH_BUILD/load.sql"
	else
		git -C "$BENCH_REPO" show "$BENCH_COMMIT:data/load.sql" >"$BENCH_BUILD/load.sql"
	fi
}

# Number of distinct items of a dataset's orders.csv (the catalog of the protocol).
catalog_size() { q -c "SELECT count(DISTINCT item_id) FROM $1.orders"; }
