#!/usr/bin/env bash
# bench/scale-bench.sh - how the suspects analysis and `fabscope report` scale with the fleet
#
#   bench/scale-bench.sh [-s SIZES] [-t SECONDS] [-k]             (run by `make bench`)
#
# For each size (nodes; default "64 512 4096 16384", 8 rails each), `test-tool nightly` makes two
# nights shaped like real ones (8 permutation rounds of bw on every rail, one of lat, a ping: 73
# records a node, from real records of a demo run), each with 7 planted faults (seeds 1 and 2).
# Nodes are on leaves of 64 (hostfile leaf=).  Timed with GNU time (wall, max RSS), each under a
# limit of SECONDS (default 600; a run past it is killed and shown as "> SECONDS"; the larger
# sizes are then skipped):
#   report     fabscope report NIGHT -o OUT --no-plots
#   baseline   fabscope report NIGHT --baseline OTHER -o OUT --no-plots
#   analyze    test-tool analyze NIGHT: the suspects analysis at the end of `fabscope run`
#   plots      fabscope report NIGHT -o OUT (with gnuplot): the page an operator opens, its size,
#              and headless Chromium loading it (--dump-dom) within t1210's 60 s, every plot in
#              the DOM, a leaf x leaf heatmap per lane above 64 nodes
# and whether the report named exactly the planted faults (summary.json's suspects against what
# the generator printed: "7 of 7" when every one and nothing else, else "N of 7 +EXTRA").  The
# growth exponent is log(t2/t1) / log(n2/n1) of the report's wall time against the size before.
# At 16,384 nodes the goals of issue 28 are checked: report under 60 s and 2 GiB, --baseline
# under 120 s, report time at most 5x that of 4,096 nodes, the HTML under 4 MiB and loaded.
# -k keeps the work directory (its path is printed).
#
# Output: a table on stdout, one JSON object per size in bench-out/scale-bench.jsonl.
# Exit codes: 0 ok, 1 a goal missed, 2 usage, 3 environment (binary or GNU time missing), 4 a
# fault not named.
set -euo pipefail

prog=scale-bench
synopsis="bench/scale-bench.sh [-s SIZES] [-t SECONDS] [-k]"
. "$(dirname "$0")/lib.sh"
SIZES="64 512 4096 16384" LIMIT=600 KEEP=0
while (($#)); do
	case $1 in
	-s) [[ ${2:-} =~ ^[0-9\ ]+$ ]] || usage "-s needs sizes, e.g. \"64 512\""; SIZES=$2; shift ;;
	-t) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-t needs seconds"; LIMIT=$2; shift ;;
	-k) KEEP=1 ;;
	-h | --help) bench_help ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done
bench_need fabscope test-tool time jq

bench_work "$KEEP"
jsonl=$out/scale-bench.jsonl
: >"$jsonl"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
bad=0

# timed NAME ARGS...: fabscope ARGS under the limit; sets wall, rss_mib ("-" when killed), rc
timed() {
	local name=$1
	shift
	timed_cmd "$name" "$FABSCOPE" "$@"
}

# timed_cmd NAME PROGRAM ARGS...: the same for any program
timed_cmd() {
	local name=$1
	shift
	rc=0
	/usr/bin/time -f '%e %M' -o "$work/$name.time" timeout "$LIMIT" "$@" \
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

# browse DIR: headless Chromium loads DIR/report.html as t1210 does (60 s); sets load_s, in_dom
# ("N/M": plots in the DOM of those made, "-" without Chromium)
browse() {
	local t0 t1
	load_s=- in_dom=-
	command -v chromium >/dev/null || return 0
	t0=$(date +%s.%N)
	timeout 60 chromium --headless=new --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$work/chrome" \
		--dump-dom "file://$1/report.html" >"$1.dom" 2>/dev/null || { load_s="failed"; return 0; }
	t1=$(date +%s.%N)
	load_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	grep -q "<h2>Suspects</h2>" "$1.dom" || { load_s="incomplete"; return 0; }
	in_dom="$(grep -o "<svg" "$1.dom" | wc -l)/$(find "$1/plots" -name '*.svg' | wc -l)"
}

# goal WHAT OK: a line saying whether an issue-28 goal was met; a missed one fails the bench
goal() {
	printf '# goal: %-58s %s\n' "$1" "$( (($2)) && echo met || echo MISSED)"
	(($2)) || missed=1
}

printf '# %s: fabscope report of nightly results (N nodes x 8 rails), limit %s s a command\n' "$prog" "$LIMIT"
printf '%7s %9s %8s | %9s %8s %6s %8s | %9s %8s %8s | %9s %8s | %8s %8s %6s %5s %7s\n' nodes records MB \
	"report s" "RSS MiB" "exp" named "base s" "RSS MiB" named "analyze s" "RSS MiB" "plots s" "HTML KiB" \
	"load s" "heat" "in DOM"
prev_n= prev_t= killed=0 missed=0 t4096=
declare -A R
for n in $SIZES; do
	if ((killed)); then
		printf '%7s %9s %8s | %9s\n' "$n" - - "skipped (a smaller size ran past $LIMIT s)"
		((n == 16384)) && missed=1
		continue
	fi
	night=$work/night$n base=$work/base$n
	"$TEST_TOOL" nightly "$night" -n "$n" --seed 1 | sort >"$night.faults"
	"$TEST_TOOL" nightly "$base" -n "$n" --seed 2 >/dev/null
	records=$(wc -l <"$night/results.jsonl")
	mb=$(du -m "$night/results.jsonl" | cut -f1)
	timed report$n report "$night" -o "$work/rep$n" --no-plots
	r_wall=$wall r_rss=$rss_mib r_named=- b_wall=- b_rss=- b_named=- exp=-
	a_wall=- a_rss=- p_wall=- html_kib=- load_s=- in_dom=- heat=-
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
		timed_cmd analyze$n "$TEST_TOOL" analyze "$night"
		a_wall=$wall a_rss=$rss_mib
		if command -v gnuplot >/dev/null; then
			timed plots$n report "$night" -o "$work/plt$n"
			p_wall=$wall
			if [[ -s $work/plt$n/report.html ]]; then
				html_kib=$(( $(stat -c %s "$work/plt$n/report.html") / 1024 ))
				heat=$(find "$work/plt$n/plots" -name '*-leafheat-*.svg' | wc -l)
				browse "$work/plt$n"
			fi
		fi
	fi
	R[$n]="$r_wall $r_rss $b_wall $html_kib $load_s $in_dom"
	printf '%7s %9s %8s | %9s %8s %6s %8s | %9s %8s %8s | %9s %8s | %8s %8s %6s %5s %7s\n' "$n" "$records" "$mb" \
		"$r_wall" "$r_rss" "$exp" "$r_named" "$b_wall" "$b_rss" "$b_named" "$a_wall" "$a_rss" "$p_wall" \
		"$html_kib" "$load_s" "$heat" "$in_dom"
	jq -nc --arg time "$now" --argjson n "$n" --argjson rec "$records" --argjson mb "$mb" \
		--arg rw "$r_wall" --arg rr "$r_rss" --arg re "$exp" --arg rn "$r_named" \
		--arg bw "$b_wall" --arg br "$b_rss" --arg bn "$b_named" --argjson lim "$LIMIT" \
		--arg aw "$a_wall" --arg ar "$a_rss" --arg pw "$p_wall" --arg hk "$html_kib" --arg ls "$load_s" \
		--arg ht "$heat" --arg id "$in_dom" \
		'def num: tonumber? // null;
		 {bench: "scale-bench", time: $time, nodes: $n, rails: 8, records: $rec, results_mb: $mb,
		  limit_s: $lim, report_wall_s: ($rw | num), report_max_rss_mib: ($rr | num), growth_exponent: ($re | num),
		  report_named: $rn, baseline_wall_s: ($bw | num), baseline_max_rss_mib: ($br | num),
		  baseline_named: $bn, analyze_wall_s: ($aw | num), analyze_max_rss_mib: ($ar | num),
		  plots_wall_s: ($pw | num), html_kib: ($hk | num), browser_load_s: ($ls | num),
		  leaf_heatmaps: ($ht | num), plots_in_dom: $id}' >>"$jsonl"
	((n == 4096)) && [[ $r_wall != ">"* ]] && t4096=$r_wall
	((KEEP)) || rm -rf "$night" "$base" "$work/rep$n" "$work/bas$n" "$work/plt$n" "$work/plt$n.dom"
done
if [[ -n ${R[16384]:-} ]]; then
	read -r rw rr bw hk ls id <<<"${R[16384]}"
	num() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
	goal "report of 16,384 nodes under 60 s ($rw s)" "$(num "$rw" && awk -v t="$rw" 'BEGIN { print (t < 60) }' || echo 0)"
	goal "and under 2 GiB max RSS ($rr MiB)" "$(num "$rr" && awk -v m="$rr" 'BEGIN { print (m < 2048) }' || echo 0)"
	goal "--baseline against another night under 120 s ($bw s)" \
		"$(num "$bw" && awk -v t="$bw" 'BEGIN { print (t < 120) }' || echo 0)"
	if [[ -n $t4096 ]]; then
		goal "4,096 -> 16,384 nodes at most 5x in time ($t4096 -> $rw s)" \
			"$(num "$rw" && awk -v a="$t4096" -v b="$rw" 'BEGIN { print (b <= 5 * a) }' || echo 0)"
	fi
	if [[ $hk != - ]]; then
		goal "the HTML page under 4 MiB ($hk KiB)" "$( ((hk < 4096)) && echo 1 || echo 0)"
		[[ $ls == - ]] || goal "Chromium loads it, every plot in the DOM ($ls s, $id)" \
			"$(num "$ls" && [[ ${id%/*} == "${id#*/}" ]] && echo 1 || echo 0)"
	fi
fi
echo "# records: $jsonl"
((bad)) && { echo "$prog: a planted fault was not named, or something else was" >&2; exit 4; }
((missed)) && { echo "$prog: a goal was missed (the lines above)" >&2; exit 1; }
exit 0
