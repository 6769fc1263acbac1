#!/usr/bin/env bash
# bench/model-bench.sh - how `fabscope model`, and the report's model of a night, scale with the fabric
#
#   bench/model-bench.sh [-s SIZES] [-i SIZES] [-S SPINES] [-d DRAWS] [-n NODES] [-t SECONDS] [-k]
#                                                                       (run by `make bench`)
#
# 1. The model: for each size (hosts; default "1024 4096 8192 16384"), `fabscope model --shape
#    leaf-spine` of SIZE hosts x 8 rails, 64 hosts a leaf (SIZE / 64 groups, a leaf a group and
#    rail), SPINES spines (default 64; every leaf cabled to every spine, all 400G: 1:1), a
#    permutation (SIZE x 8 flows at once), spraying and DRAWS (default 10) per-flow ECMP draws.
#    Timed with GNU time, the best of 3 runs (the least disturbed by other jobs): wall, CPU
#    (user + sys) and max RSS.  The answer is checked: spraying a
#    permutation over a 1:1 leaf-spine carries line rate (spray /line 1.00), ECMP less.  The growth
#    is each size's CPU time over the size before's, with its exponent log(t2/t1) / log(n2/n1).
#    The work: for the sizes of -i (default "8192 16384"; "" for none), the same command's
#    instructions, counted by valgrind (cachegrind, no cache simulation), and their growth from
#    one size to the next.  The count is the algorithm's, the same on any machine and under any
#    load; the time's growth is that and the caches' (past a size whose working set leaves the
#    core's L2 a doubling costs more than twice the time: docs/benchmarks.md).
# 2. The report: `test-tool nightly -n NODES` (default 16384: bench/scale-bench.sh's night, 8 bw
#    permutation rounds on 8 rails) with its fabric (--topology: 64 nodes a leaf, 64 spines, 1:1),
#    and `fabscope report NIGHT --no-plots` with and without `--topology`, which models every bw
#    group's pairs round by round (spraying and ECMP, model/solve.h) for the "of the fabric"
#    figures; the difference is what the model costs the report.
#
# Goals (issue 42), each line "met" or "MISSED": 16,384 hosts in under 10 s; 4,096 -> 16,384
# hosts at most 5x in time; 8,192 -> 16,384 hosts at most 2.2x the instructions (twice the
# flows and cables, and a sort of the names); the report of the 16,384-node night with
# --topology within scale-bench's bound for a report (60 s, 2 GiB).  Times are judged on CPU time (user + sys): on
# this shared 2-core machine the wall time is the other jobs' too (the load average is printed
# with it); on an idle machine the two are the same.  Each command runs under a limit of SECONDS
# (default 600).  -k keeps the work directory.
#
# Output: a table on stdout, one JSON object per figure in bench-out/model-bench.jsonl.
# Exit codes: 0 ok, 1 a goal missed, 2 usage, 3 environment, 4 a wrong answer or a failed run.
set -euo pipefail

prog=model-bench
synopsis="bench/model-bench.sh [-s SIZES] [-i SIZES] [-S SPINES] [-d DRAWS] [-n NODES] [-t SECONDS] [-k]"
. "$(dirname "$0")/lib.sh"
SIZES="1024 4096 8192 16384" ISIZES="8192 16384" SPINES=64 DRAWS=10 NODES=16384 LIMIT=600 KEEP=0
while (($#)); do
	case $1 in
	-s) [[ ${2:-} =~ ^[0-9\ ]+$ ]] || usage "-s needs sizes, e.g. \"1024 4096\""; SIZES=$2; shift ;;
	-i) [[ ${2-x} =~ ^[0-9\ ]*$ ]] || usage "-i needs sizes, e.g. \"8192 16384\", or \"\""; ISIZES=$2; shift ;;
	-S) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-S needs a number of spines"; SPINES=$2; shift ;;
	-d) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-d needs a number of draws"; DRAWS=$2; shift ;;
	-n) [[ ${2:-} =~ ^(0|[1-9][0-9]*)$ ]] || usage "-n needs nodes (0: no report)"; NODES=$2; shift ;;
	-t) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-t needs seconds"; LIMIT=$2; shift ;;
	-k) KEEP=1 ;;
	-h | --help) bench_help ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done
for n in $SIZES $ISIZES; do ((n >= 64 && n % 64 == 0)) || usage "size $n: give a multiple of 64 hosts"; done
bench_need fabscope test-tool time jq
[[ -z ${ISIZES// /} ]] || command -v valgrind >/dev/null ||
	envfail "valgrind is missing (it counts the instructions of -i's sizes): ci/install-deps bench, or -i \"\""

bench_work "$KEEP"
jsonl=$out/model-bench.jsonl
: >"$jsonl"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
missed=0

# timed NAME PROGRAM ARGS...: sets wall, cpu, rss_mib ("-": killed past the limit), rc
timed() {
	local name=$1 u s k
	shift
	rc=0
	/usr/bin/time -f '%e %U %S %M' -o "$work/$name.time" timeout "$LIMIT" "$@" \
		>"$work/$name.out" 2>"$work/$name.err" || rc=$?
	if ((rc == 124 || rc == 137)) || ! [[ -s $work/$name.time ]]; then
		wall="> $LIMIT" cpu="> $LIMIT" rss_mib=-
		return
	fi
	read -r wall u s k < <(tail -1 "$work/$name.time")
	cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
	rss_mib=$(awk -v k="$k" 'BEGIN { printf "%.0f", k / 1024 }')
}

num() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

# goal WHAT OK: a line saying whether a goal was met; a missed one fails the bench
goal() {
	printf '# goal: %-62s %s\n' "$1" "$( (($2)) && echo met || echo MISSED)"
	(($2)) || missed=1
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

printf '# %s: fabscope model --shape leaf-spine, N hosts x 8 rails, 64 a leaf, %s spines (1:1, 400G),\n' \
	"$prog" "$SPINES"
printf '# permutation, spraying and %s ECMP draws; limit %s s a command\n' "$DRAWS" "$LIMIT"
printf '%7s %8s %7s %7s | %8s %8s %8s %6s %6s | %10s %11s %8s %s\n' hosts flows leaves cables \
	"wall s" "CPU s" "RSS MiB" growth exp "spray/line" "ECMP/line" "draws" "load"
declare -A CPU
prev_n= prev_t=
for n in $SIZES; do
	groups=$((n / 64))
	best_cpu= best_wall= best_rss=
	for try in 1 2 3; do
		timed model$n "$FABSCOPE" model --shape leaf-spine -G "$groups" -H 64 -R 8 -S "$SPINES" --speed 400 \
			--samples "$DRAWS" --json
		[[ $cpu == ">"* ]] && break
		((rc == 0)) || break
		if [[ -z $best_cpu ]] || awk -v a="$cpu" -v b="$best_cpu" 'BEGIN { exit !(a < b) }'; then
			best_cpu=$cpu best_wall=$wall best_rss=$rss_mib
		fi
	done
	[[ -n $best_cpu ]] && cpu=$best_cpu wall=$best_wall rss_mib=$best_rss
	ld=$(load)
	if [[ $cpu == ">"* ]]; then
		printf '%7s %8s %7s %7s | %8s\n' "$n" $((n * 8)) $((groups * 8)) - "$wall"
		CPU[$n]=$cpu
		continue
	fi
	((rc == 0)) || { cat "$work/model$n.err" >&2; fail "fabscope model of $n hosts failed (exit $rc)"; }
	read -r flows sfrac efrac samples < <(jq -r '[.all.spray.flows, .all.spray.frac_line,
		.all.ecmp.frac_line, .samples] | @tsv' "$work/model$n.out")
	((flows == n * 8)) || fail "$n hosts: $flows flows modelled, not $((n * 8))"
	awk -v s="$sfrac" -v e="$efrac" 'BEGIN { exit !(s > 0.9999 && s < 1.0001 && e > 0 && e < s) }' ||
		fail "$n hosts: spraying carries $sfrac of line rate and ECMP $efrac: a 1:1 leaf-spine sprays at 1.00"
	cables=$((n * 8 + groups * 8 * SPINES))
	growth=- exp=-
	if [[ -n $prev_n ]]; then
		growth=$(awk -v a="$prev_t" -v b="$cpu" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
		exp=$(awk -v a="$prev_t" -v b="$cpu" -v m="$prev_n" -v k="$n" \
			'BEGIN { if (a > 0 && b > 0) printf "%.2f", log(b / a) / log(k / m); else print "-" }')
	fi
	prev_n=$n prev_t=$cpu
	CPU[$n]=$cpu
	printf '%7s %8s %7s %7s | %8s %8s %8s %6s %6s | %10.4f %11.4f %8s %s\n' "$n" "$flows" $((groups * 8)) \
		"$cables" "$wall" "$cpu" "$rss_mib" "$growth" "$exp" "$sfrac" "$efrac" "$samples" "$ld"
	jq -nc --arg time "$now" --argjson n "$n" --argjson fl "$flows" --argjson sp "$SPINES" --argjson d "$samples" \
		--argjson w "$wall" --argjson c "$cpu" --argjson r "$rss_mib" --arg g "$growth" --arg e "$exp" \
		--argjson sf "$sfrac" --argjson ef "$efrac" --arg ld "$ld" \
		'{bench: "model-bench", time: $time, test: "model", hosts: $n, rails: 8, spines: $sp, flows: $fl,
		  draws: $d, wall_s: $w, cpu_s: $c, max_rss_mib: $r, growth: ($g | tonumber? // null),
		  growth_exponent: ($e | tonumber? // null), spray_frac_line: $sf, ecmp_frac_line: $ef,
		  loadavg: $ld}' >>"$jsonl"
done
if [[ -n ${CPU[16384]:-} ]]; then
	c=${CPU[16384]}
	goal "16,384 hosts x 8 rails, $SPINES spines, $DRAWS draws in under 10 s ($c s CPU)" \
		"$(num "$c" && awk -v t="$c" 'BEGIN { print (t < 10) }' || echo 0)"
	if [[ -n ${CPU[4096]:-} ]]; then
		a=${CPU[4096]}
		goal "4,096 -> 16,384 hosts at most 5x in time ($a -> $c s CPU)" \
			"$(num "$a" && num "$c" && awk -v a="$a" -v b="$c" 'BEGIN { print (b <= 5 * a) }' || echo 0)"
	fi
fi

# the work: instructions of the same command, by valgrind (the count does not move with the load)
if [[ -n ${ISIZES// /} ]]; then
	printf '# the work: instructions (valgrind --tool=cachegrind --cache-sim=no), the same command\n'
	printf '%7s %16s %7s %6s | %8s %7s\n' hosts instructions growth exp "CPU s" growth
	prev_n= prev_i= prev_c=
	for n in $ISIZES; do
		timeout "$LIMIT" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
			"$FABSCOPE" model --shape leaf-spine -G $((n / 64)) -H 64 -R 8 -S "$SPINES" --speed 400 \
			--samples "$DRAWS" --json >/dev/null 2>"$work/vg$n.err" ||
			{ tail -3 "$work/vg$n.err" >&2; envfail "valgrind of fabscope model at $n hosts failed"; }
		ins=$(sed -n 's/^==[0-9]*== I *refs: *//p' "$work/vg$n.err" | tr -d ,)
		[[ $ins =~ ^[0-9]+$ ]] || envfail "valgrind said no instruction count (in $work/vg$n.err)"
		c=${CPU[$n]:--} growth=- exp=- cgrowth=-
		if [[ -n $prev_n ]]; then
			growth=$(awk -v a="$prev_i" -v b="$ins" 'BEGIN { printf "%.2f", b / a }')
			exp=$(awk -v a="$prev_i" -v b="$ins" -v m="$prev_n" -v k="$n" 'BEGIN { printf "%.2f", log(b / a) / log(k / m) }')
			num "$c" && num "$prev_c" && cgrowth=$(awk -v a="$prev_c" -v b="$c" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
			jq -nc --arg time "$now" --argjson m "$prev_n" --argjson n "$n" --argjson a "$prev_i" --argjson b "$ins" \
				--argjson g "$growth" --arg cg "$cgrowth" \
				'{bench: "model-bench", time: $time, test: "instructions", from_hosts: $m, hosts: $n,
				  from_instructions: $a, instructions: $b, growth: $g, cpu_growth: ($cg | tonumber? // null)}' >>"$jsonl"
		fi
		printf '%7s %16s %7s %6s | %8s %7s\n' "$n" "$ins" "$growth" "$exp" "$c" "$cgrowth"
		if [[ $prev_n == 8192 && $n == 16384 ]]; then
			goal "8,192 -> 16,384 hosts at most 2.2x the instructions (${growth}x; CPU ${cgrowth}x)" \
				"$(awk -v g="$growth" 'BEGIN { print (g <= 2.2) }')"
		fi
		prev_n=$n prev_i=$ins prev_c=$c
	done
fi

if ((NODES)); then
	night=$work/night
	"$TEST_TOOL" nightly "$night" -n "$NODES" --seed 1 --topology "$work/night.topo" >/dev/null ||
		fail "test-tool nightly -n $NODES failed"
	printf '# the report of a %s-node night (%s records), with and without its fabric (%s cables)\n' "$NODES" \
		"$(wc -l <"$night/results.jsonl")" "$(grep -c '^link ' "$work/night.topo")"
	printf '%-34s %8s %8s %8s  %s\n' "" "wall s" "CPU s" "RSS MiB" load
	timed plain "$FABSCOPE" report "$night" -o "$work/plain" --no-plots
	((rc == 0)) || [[ $cpu == ">"* ]] || { cat "$work/plain.err" >&2; fail "the report failed (exit $rc)"; }
	p_wall=$wall p_cpu=$cpu p_rss=$rss_mib
	printf '%-34s %8s %8s %8s  %s\n' "report --no-plots" "$p_wall" "$p_cpu" "$p_rss" "$(load)"
	timed topo "$FABSCOPE" report "$night" --topology "$work/night.topo" -o "$work/topo" --no-plots
	((rc == 0)) || [[ $cpu == ">"* ]] || { cat "$work/topo.err" >&2; fail "the report --topology failed (exit $rc)"; }
	t_wall=$wall t_cpu=$cpu t_rss=$rss_mib
	printf '%-34s %8s %8s %8s  %s\n' "report --topology --no-plots" "$t_wall" "$t_cpu" "$t_rss" "$(load)"
	jq -nc --arg time "$now" --argjson n "$NODES" --arg pw "$p_wall" --arg pc "$p_cpu" --arg pr "$p_rss" \
		--arg tw "$t_wall" --arg tc "$t_cpu" --arg tr "$t_rss" \
		'def num: tonumber? // null;
		 {bench: "model-bench", time: $time, test: "report", nodes: $n, rails: 8,
		  plain_wall_s: ($pw | num), plain_cpu_s: ($pc | num), plain_max_rss_mib: ($pr | num),
		  topology_wall_s: ($tw | num), topology_cpu_s: ($tc | num), topology_max_rss_mib: ($tr | num)}' >>"$jsonl"
	if ((NODES == 16384)); then
		goal "report --topology of 16,384 nodes under 60 s ($t_cpu s CPU)" \
			"$(num "$t_cpu" && awk -v t="$t_cpu" 'BEGIN { print (t < 60) }' || echo 0)"
		goal "and under 2 GiB max RSS ($t_rss MiB)" "$(num "$t_rss" && awk -v m="$t_rss" 'BEGIN { print (m < 2048) }' || echo 0)"
	fi
fi
echo "# records: $jsonl"
((missed)) && { echo "$prog: a goal was missed (the lines above)" >&2; exit 1; }
exit 0
