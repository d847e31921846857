#!/usr/bin/env bash
# Throwaway PostgreSQL 15 clusters for tests and demos.
#
# PostgreSQL refuses to run as root, so when called by root the cluster runs
# as user postgres; otherwise as the calling user.  Each cluster lives in one
# directory under /tmp that holds its data directory, its log and its Unix
# socket; it listens on no TCP address, on a port nobody else uses.
#
# As a library (bash):
#     source scripts/cluster.sh
#     cluster_start [DIR]       # DIR defaults to a new /tmp/mtdpp-cluster.XXXXXX;
#                               # the port is MTDPP_PORT, or a free one;
#                               # exports PGHOST, PGPORT, PGUSER, PGDATABASE,
#                               # MTDPP_CLUSTER; stops and removes the cluster
#                               # when the shell exits (unless MTDPP_KEEP_CLUSTER=1)
#     cluster_stop [DIR]        # stops and removes it
#     cluster_as_owner CMD...   # runs CMD as the cluster's owner
#     regress_passed LOG, regress_failed LOG   # counts of a pg_regress log
# As a command:
#     scripts/cluster.sh start DIR     # starts (or restarts afresh) a cluster kept running
#     scripts/cluster.sh stop DIR      # stops and removes it
#     scripts/cluster.sh env DIR       # prints the export lines to connect to it
#
# Settings: fsync off (throwaway data), parallel query on (up to 2 workers per
# Gather), C locale and messages, UTF-8.

MTDPP_PGBIN=${MTDPP_PGBIN:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}

if [ "$(id -u)" -eq 0 ]; then
	MTDPP_CLUSTER_OWNER=postgres
	cluster_as_owner() { runuser -u postgres -- "$@"; }
else
	MTDPP_CLUSTER_OWNER=$(id -un)
	cluster_as_owner() { "$@"; }
fi

# A port with no socket file in DIR and nothing listening on it over TCP.
_cluster_free_port() {
	local port tries=0
	while [ $tries -lt 200 ]; do
		port=$((20000 + RANDOM % 40000))
		tries=$((tries + 1))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	echo "cluster.sh: no free port found" >&2
	return 1
}

_cluster_running() {
	[ -f "$1/data/postmaster.pid" ] &&
		cluster_as_owner "$MTDPP_PGBIN/pg_ctl" -D "$1/data" status >/dev/null 2>&1
}

cluster_stop() {
	local dir=${1:-${MTDPP_CLUSTER:-}}
	[ -n "$dir" ] || return 0
	if _cluster_running "$dir"; then
		cluster_as_owner "$MTDPP_PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 ||
			cluster_as_owner "$MTDPP_PGBIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	case "$dir" in
		/tmp/?*) rm -rf "$dir" ;;
	esac
	return 0
}

cluster_start() {
	local dir=${1:-} port
	if [ -z "$dir" ]; then
		dir=$(mktemp -d /tmp/mtdpp-cluster.XXXXXX) || return 1
	else
		case "$dir" in
			/tmp/?*) ;;
			*) echo "cluster.sh: cluster directory must be under /tmp: $dir" >&2; return 1 ;;
		esac
		cluster_stop "$dir"    # re-running starts afresh
		mkdir -p "$dir" || return 1
	fi
	[ "$MTDPP_CLUSTER_OWNER" = "$(id -un)" ] || chown "$MTDPP_CLUSTER_OWNER" "$dir"
	chmod 700 "$dir"
	port=${MTDPP_PORT:-$(_cluster_free_port)} || return 1

	if ! cluster_as_owner "$MTDPP_PGBIN/initdb" -D "$dir/data" -U "$MTDPP_CLUSTER_OWNER" \
			-A trust -E UTF8 --no-locale -N >"$dir/initdb.log" 2>&1; then
		cat "$dir/initdb.log" >&2
		echo "cluster.sh: initdb failed" >&2
		return 1
	fi
	cluster_as_owner tee -a "$dir/data/postgresql.conf" >/dev/null <<CONF

# throwaway cluster for mtdpp (scripts/cluster.sh)
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
fsync = off
synchronous_commit = off
full_page_writes = off
max_worker_processes = 8
max_parallel_workers = 8
max_parallel_workers_per_gather = 2
lc_messages = 'C'
log_min_messages = warning
CONF
	if ! cluster_as_owner "$MTDPP_PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null 2>&1; then
		cat "$dir/server.log" >&2 2>/dev/null
		echo "cluster.sh: the server did not start" >&2
		return 1
	fi

	export MTDPP_CLUSTER=$dir PGHOST=$dir PGPORT=$port PGUSER=$MTDPP_CLUSTER_OWNER PGDATABASE=postgres
	if [ "${MTDPP_KEEP_CLUSTER:-0}" != 1 ]; then
		# shellcheck disable=SC2064
		trap "cluster_stop '$dir'" EXIT
		trap 'exit 130' INT
		trap 'exit 143' TERM
	fi
	return 0
}

cluster_env() {
	local dir=$1 port
	port=$(sed -n 's/^port = \([0-9]*\)$/\1/p' "$dir/data/postgresql.conf" 2>/dev/null | tail -n 1)
	[ -n "$port" ] || { echo "cluster.sh: no cluster in $dir" >&2; return 1; }
	echo "export PGHOST=$dir PGPORT=$port PGUSER=$MTDPP_CLUSTER_OWNER PGDATABASE=postgres"
}

# The tests a pg_regress log (LOG) says passed, and failed: "test x ... ok"
# up to PostgreSQL 15, "ok 1 - x" and "not ok 1 - x" from 16 on.
regress_passed() { grep -cE '^((test | +)?[^ ]+ +\.\.\. ok|ok [0-9]+ )' "$1"; }
regress_failed() { grep -cE '(\.\.\. (FAILED|failed)|^not ok [0-9]+ )' "$1"; }

# Run as a command rather than sourced.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	case "${1:-}" in
		start)
			[ -n "${2:-}" ] || { echo "usage: $0 start DIR" >&2; exit 2; }
			MTDPP_KEEP_CLUSTER=1 cluster_start "$2"
			cluster_env "$2" ;;
		stop)
			[ -n "${2:-}" ] || { echo "usage: $0 stop DIR" >&2; exit 2; }
			cluster_stop "$2" ;;
		env)
			[ -n "${2:-}" ] || { echo "usage: $0 env DIR" >&2; exit 2; }
			cluster_env "$2" ;;
		*)
			echo "usage: $0 start|stop|env DIR" >&2
			exit 2 ;;
	esac
fi
