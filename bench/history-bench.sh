#!/usr/bin/env bash
# bench/history-bench.sh - how fabscope history scales (issue 43)
#
#   bench/history-bench.sh [-n NODES] [-s NODES] [-N NIGHTS] [-t SECONDS] [-k]   (run by `make bench`)
#
# One night of NODES (default 16,384) x 8 rails made by `test-tool nightly` (73 records a node,
# from real records of a demo run, 7 planted faults) is added to an empty history: wall time, CPU
# time and max RSS (GNU time), against the goals of issue 43: under 30 s and under 1 GiB.  Then
# NIGHTS (default 30) nights of -s NODES (default 1,024) x 8 rails, each its own seed and day
# (--seed K --night K: other faults each night), are added one by one (each night's wall time),
# and `history diff --last NIGHTS` and `history trend --last NIGHTS` answered on them (wall time,
# max RSS; goals: each under 10 s and 1 GiB); the file's size.  Each command runs under a limit
# of SECONDS (default 600).  -k keeps the work directory (its path is printed).
#
# Output: a table on stdout, one JSON object in bench-out/history-bench.jsonl.
# Exit codes: 0 ok, 1 a goal missed, 2 usage, 3 environment (binary, GNU time or jq missing).
set -euo pipefail

prog=history-bench
synopsis="bench/history-bench.sh [-n NODES] [-s NODES] [-N NIGHTS] [-t SECONDS] [-k]"
. "$(dirname "$0")/lib.sh"
BIG=16384 SMALL=1024 NIGHTS=30 LIMIT=600 KEEP=0
num() { [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "$1 needs a number"; }
while (($#)); do
	case $1 in
	-n) num -n "${2:-}"; BIG=$2; shift ;;
	-s) num -s "${2:-}"; SMALL=$2; shift ;;
	-N) num -N "${2:-}"; NIGHTS=$2; shift ;;
	-t) num -t "${2:-}"; LIMIT=$2; shift ;;
	-k) KEEP=1 ;;
	-h | --help) bench_help ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done
bench_need fabscope test-tool time jq

bench_work "$KEEP"
missed=0

# timed NAME ARGS...: fabscope ARGS under the limit; sets wall, cpu, rss_mib (wall "> LIMIT" when killed)
timed() {
	local name=$1 rc=0 u s rss
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$work/$name.time" timeout "$LIMIT" "$FABSCOPE" "$@" \
		>"$work/$name.out" 2>"$work/$name.err" || rc=$?
	if ((rc == 124 || rc == 137)) || ! [[ -s $work/$name.time ]]; then
		wall="> $LIMIT" cpu=- rss_mib=-
		return
	fi
	((rc <= 1)) || { cat "$work/$name.err" >&2; envfail "fabscope $* exited $rc"; }
	read -r wall u s rss < <(tail -1 "$work/$name.time")
	cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
	rss_mib=$(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }')
}

# goal WHAT OK: a line saying whether a goal was met; a missed one fails the bench
goal() {
	printf '# goal: %-52s %s\n' "$1" "$( (($2)) && echo met || echo MISSED)"
	(($2)) || missed=1
}
under() { [[ $1 != ">"* ]] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

printf '# %s: fabscope history, one %s-node night and %s nights of %s nodes (8 rails), %s\n' "$prog" "$BIG" \
	"$NIGHTS" "$SMALL" "$(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
"$TEST_TOOL" nightly "$work/big" -n "$BIG" --seed 1 >/dev/null
records=$(wc -l <"$work/big/results.jsonl")
mb=$(du -m "$work/big/results.jsonl" | cut -f1)
timed add-big history add --db "$work/big.db" "$work/big"
big_wall=$wall big_cpu=$cpu big_rss=$rss_mib
big_results=$(sed -n 's/.*"results": \([0-9]*\).*/\1/p' < <("$FABSCOPE" history list --db "$work/big.db" --json))
rm -rf "$work/big"
printf '%-40s %10s %10s %10s %9s\n' "" "wall s" "CPU s" "RSS MiB" "records"
printf '%-40s %10s %10s %10s %9s\n' "add one $BIG x 8 night ($mb MB)" "$big_wall" "$big_cpu" "$big_rss" "$records"

adds=()
for ((k = 1; k <= NIGHTS; k++)); do
	"$TEST_TOOL" nightly "$work/n$k" -n "$SMALL" --seed "$k" --night "$k" >/dev/null
	timed add$k history add --db "$work/series.db" "$work/n$k"
	adds+=("$wall")
	rm -rf "$work/n$k"
done
add_sum=$(printf '%s\n' "${adds[@]}" | awk '{ s += $1 } END { printf "%.1f", s }')
add_max=$(printf '%s\n' "${adds[@]}" | sort -g | tail -1)
printf '%-40s %10s %10s %10s\n' "add $NIGHTS nights of $SMALL x 8, each" "max $add_max" "-" "$rss_mib"
timed diff history diff --db "$work/series.db" --last "$NIGHTS" --json
diff_wall=$wall diff_cpu=$cpu diff_rss=$rss_mib
suspects=$(jq '.suspects | length' "$work/diff.out") repeat=$(jq '.repeat | length' "$work/diff.out")
printf '%-40s %10s %10s %10s   %s suspects tonight, %s repeat offenders\n' "diff --last $NIGHTS" "$diff_wall" \
	"$diff_cpu" "$diff_rss" "$suspects" "$repeat"
timed trend history trend --db "$work/series.db" --last "$NIGHTS" --json
trend_wall=$wall trend_cpu=$cpu trend_rss=$rss_mib
lanes=$(jq '.lanes | length' "$work/trend.out")
printf '%-40s %10s %10s %10s   %s lanes\n' "trend --last $NIGHTS" "$trend_wall" "$trend_cpu" "$trend_rss" "$lanes"
db_mib=$(du -m "$work/series.db" | cut -f1)
big_db_mib=$(du -m "$work/big.db" | cut -f1)
printf '# files: %s MiB for the %s-node night, %s MiB for the %s nights (%s s adding them)\n' "$big_db_mib" \
	"$BIG" "$db_mib" "$NIGHTS" "$add_sum"

goal "one $BIG-node night added under 30 s" "$(under "$big_wall" 30 && echo 1 || echo 0)"
goal "one $BIG-node night added under 1 GiB" "$(under "$big_rss" 1024 && echo 1 || echo 0)"
goal "every lane result of it kept ($big_results)" "$( ((big_results > 0)) && echo 1 || echo 0)"
goal "diff of $NIGHTS nights under 10 s and 1 GiB" "$(under "$diff_wall" 10 && under "$diff_rss" 1024 && echo 1 || echo 0)"
goal "trend of $NIGHTS nights under 10 s and 1 GiB" "$(under "$trend_wall" 10 && under "$trend_rss" 1024 && echo 1 || echo 0)"

jq -cn --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg load "$(cut -d' ' -f1 /proc/loadavg)" \
	--argjson big "$BIG" --argjson small "$SMALL" --argjson nights "$NIGHTS" --argjson records "$records" \
	--arg big_wall "$big_wall" --arg big_cpu "$big_cpu" --arg big_rss "$big_rss" --arg add_max "$add_max" \
	--arg add_sum "$add_sum" --arg diff_wall "$diff_wall" --arg diff_rss "$diff_rss" \
	--arg trend_wall "$trend_wall" --arg trend_rss "$trend_rss" --argjson db_mib "$db_mib" \
	--argjson missed "$missed" \
	'{date: $date, load: $load, big_nodes: $big, records: $records, add_big_s: $big_wall, add_big_cpu_s: $big_cpu,
	  add_big_rss_mib: $big_rss, series_nodes: $small, nights: $nights, add_night_max_s: $add_max,
	  add_nights_s: $add_sum, diff_s: $diff_wall, diff_rss_mib: $diff_rss, trend_s: $trend_wall,
	  trend_rss_mib: $trend_rss, series_db_mib: $db_mib, goals_missed: $missed}' >>"$out/history-bench.jsonl"
exit $missed
