# shellcheck shell=bash
# bench/page.sh: where a benchmark's raw output goes, and how its figures
# reach the folder's results.md (source it; bench/lib.sh does).
#
#   BENCH_LOGS   raw output of every run: CSV files, logs, machine
#                descriptions, plot data (default /tmp/mtdpp-bench-logs),
#                one folder per benchmark; nothing of it is committed.
#
# A results.md holds sections a script writes, each between the lines
# "<!-- begin NAME -->" and "<!-- end NAME -->", and text written by hand
# around them, which a run keeps.

export BENCH_LOGS=${BENCH_LOGS:-/tmp/mtdpp-bench-logs}

# bench_logs FOLDER: creates and prints $BENCH_LOGS/FOLDER.
bench_logs() {
	mkdir -p "$BENCH_LOGS/$1" && echo "$BENCH_LOGS/$1"
}

# bench_section PAGE NAME FILE: replaces section NAME of PAGE with FILE's
# text (appended at the end of PAGE when PAGE has no such section yet).
bench_section() {
	local page=$1 name=$2 file=$3 tmp
	tmp=$(mktemp) || return 1
	if [ -f "$page" ] && grep -qx "<!-- begin $name -->" "$page"; then
		awk -v b="<!-- begin $name -->" -v e="<!-- end $name -->" -v f="$file" '
			$0 == b { print; while ((getline l < f) > 0) print l; skip = 1; next }
			$0 == e { skip = 0 }
			!skip' "$page" >"$tmp"
	else
		{ [ ! -s "$page" ] || { cat "$page"; echo; }
		  echo "<!-- begin $name -->"; cat "$file"; echo "<!-- end $name -->"; } >"$tmp"
	fi
	cat "$tmp" >"$page" && rm -f "$tmp"
}
