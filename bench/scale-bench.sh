#!/usr/bin/env bash
# bench/scale-bench.sh - how the suspects analysis and `fabscope report` scale with the fleet
#
#   bench/scale-bench.sh [-s SIZES] [-t SECONDS] [-k]             (run by `make bench`)
#
# For each size (nodes; default "64 512 4096 16384", 8 rails each), `test-tool nightly` makes two
# nights shaped like real ones (8 permutation rounds of bw on every rail, one of lat, a ping: 73
# records a node, from real records of a demo run), each with 7 planted faults (seeds 1 and 2).
# Timed with GNU time (wall, max RSS), each under a limit of SECONDS (default 600; a run past it
# is killed and shown as "> SECONDS"; the larger sizes are then skipped):
#   report     fabscope report NIGHT -o OUT --no-plots
#   baseline   fabscope report NIGHT --baseline OTHER -o OUT --no-plots
# and whether the report named exactly the planted faults (summary.json's suspects against what
# the generator printed: "7 of 7" when every one and nothing else, else "N of 7 +EXTRA").  The
# growth exponent is log(t2/t1) / log(n2/n1) of the report's wall time against the size before.
# -k keeps the work directory (its path is printed).
#
# Output: a table on stdout, one JSON object per size in bench-out/scale-bench.jsonl.
# Exit codes: 0 ok, 2 usage, 3 environment (binary or GNU time missing), 4 a fault not named.
set -euo pipefail

prog=scale-bench
usage()   { echo "$prog: $* (usage: bench/scale-bench.sh [-s SIZES] [-t SECONDS] [-k])" >&2; exit 2; }
envfail() { echo "$prog: $*" >&2; exit 3; }

srcdir=$(cd "$(dirname "$0")/.." && pwd -P)
FABSCOPE=${FABSCOPE:-$srcdir/fabscope}
TEST_TOOL=${TEST_TOOL:-$srcdir/tests/helper/test-tool}
SIZES="64 512 4096 16384" LIMIT=600 KEEP=0
while (($#)); do
	case $1 in
	-s) [[ ${2:-} =~ ^[0-9\ ]+$ ]] || usage "-s needs sizes, e.g. \"64 512\""; SIZES=$2; shift ;;
	-t) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-t needs seconds"; LIMIT=$2; shift ;;
	-k) KEEP=1 ;;
	-h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done
[[ -x $FABSCOPE ]] || envfail "no fabscope binary at $FABSCOPE: run make first"
[[ -x $TEST_TOOL ]] || envfail "no test-tool at $TEST_TOOL: run make first"
[[ -x /usr/bin/time ]] || envfail "GNU time (/usr/bin/time) is missing: apt-get install time"
command -v jq >/dev/null || envfail "jq is missing: ci/install-deps test"

work=$(mktemp -d "${TMPDIR:-/tmp}/scale-bench.XXXXXX")
((KEEP)) && echo "# $prog: work directory $work" || trap 'rm -rf "$work"' EXIT
out=${BENCH_OUT:-$srcdir/bench-out}
mkdir -p "$out"
jsonl=$out/scale-bench.jsonl
: >"$jsonl"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
bad=0

# timed NAME ARGS...: fabscope ARGS under the limit; sets wall, rss_mib ("-" when killed), rc
timed() {
	local name=$1
	shift
	rc=0
	/usr/bin/time -f '%e %M' -o "$work/$name.time" timeout "$LIMIT" "$FABSCOPE" "$@" \
		>"$work/$name.out" 2>"$work/$name.err" || rc=$?
	if ((rc == 124 || rc == 137)) || ! [[ -s $work/$name.time ]]; then
		wall="> $LIMIT" rss_mib=- killed=1
		return
	fi
	read -r wall rss_kib < <(tail -1 "$work/$name.time")
	rss_mib=$(awk -v k="$rss_kib" 'BEGIN { printf "%.0f", k / 1024 }')
}

# named DIR FAULTS: "N of 7" (+EXTRA when more were named)
named() {
	jq -r '.runs[0].suspects[] | [.kind, .phase, .test, (.rail | tostring), .node // "-", .peer // "-"] |
		join(" ")' "$1/summary.json" 2>/dev/null | sort >"$1.named" || true
	local want hit extra
	want=$(wc -l <"$2")
	hit=$(comm -12 "$1.named" "$2" | wc -l)
	extra=$(comm -23 "$1.named" "$2" | wc -l)
	printf '%s of %s%s' "$hit" "$want" "$( ((extra)) && echo " +$extra")"
	((hit == want && !extra))
}

printf '# %s: fabscope report of nightly results (N nodes x 8 rails), limit %s s a command\n' "$prog" "$LIMIT"
printf '%7s %9s %8s | %9s %8s %6s %8s | %9s %8s %8s\n' nodes records MB "report s" "RSS MiB" "exp" named \
	"base s" "RSS MiB" named
prev_n= prev_t= killed=0
for n in $SIZES; do
	if ((killed)); then
		printf '%7s %9s %8s | %9s\n' "$n" - - "skipped (a smaller size ran past $LIMIT s)"
		continue
	fi
	night=$work/night$n base=$work/base$n
	"$TEST_TOOL" nightly "$night" -n "$n" --seed 1 | sort >"$night.faults"
	"$TEST_TOOL" nightly "$base" -n "$n" --seed 2 >/dev/null
	records=$(wc -l <"$night/results.jsonl")
	mb=$(du -m "$night/results.jsonl" | cut -f1)
	timed report$n report "$night" -o "$work/rep$n" --no-plots
	r_wall=$wall r_rss=$rss_mib r_named=- b_wall=- b_rss=- b_named=- exp=-
	if [[ $r_wall != ">"* ]]; then
		r_named=$(named "$work/rep$n" "$night.faults") || bad=1
		if [[ -n $prev_n ]]; then
			exp=$(awk -v a="$prev_t" -v b="$r_wall" -v m="$prev_n" -v n="$n" \
				'BEGIN { if (a > 0 && b > 0) printf "%.2f", log(b / a) / log(n / m); else print "-" }')
		fi
		prev_n=$n prev_t=$r_wall
		timed base$n report "$night" --baseline "$base" -o "$work/bas$n" --no-plots
		b_wall=$wall b_rss=$rss_mib
		[[ $b_wall == ">"* ]] || { b_named=$(named "$work/bas$n" "$night.faults") || bad=1; }
	fi
	printf '%7s %9s %8s | %9s %8s %6s %8s | %9s %8s %8s\n' "$n" "$records" "$mb" "$r_wall" "$r_rss" "$exp" \
		"$r_named" "$b_wall" "$b_rss" "$b_named"
	jq -nc --arg time "$now" --argjson n "$n" --argjson rec "$records" --argjson mb "$mb" \
		--arg rw "$r_wall" --arg rr "$r_rss" --arg re "$exp" --arg rn "$r_named" \
		--arg bw "$b_wall" --arg br "$b_rss" --arg bn "$b_named" --argjson lim "$LIMIT" \
		'def num: tonumber? // null;
		 {bench: "scale-bench", time: $time, nodes: $n, rails: 8, records: $rec, results_mb: $mb,
		  limit_s: $lim, report_wall_s: ($rw | num), report_max_rss_mib: ($rr | num), growth_exponent: ($re | num),
		  report_named: $rn, baseline_wall_s: ($bw | num), baseline_max_rss_mib: ($br | num),
		  baseline_named: $bn}' >>"$jsonl"
	((KEEP)) || rm -rf "$night" "$base" "$work/rep$n" "$work/bas$n"
done
echo "# records: $jsonl"
((bad)) && { echo "$prog: a planted fault was not named, or something else was" >&2; exit 4; }
exit 0
