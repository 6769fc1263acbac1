#!/usr/bin/env bash
# bench/estimate-bench.sh - how honest `fabscope run`'s time is: each phase kind's estimate
# against what it took, on the netns fabric
#
#   bench/estimate-bench.sh [-r RUNS] [-t RATE]           (run by `make bench`; needs root)
#
# Test bed: the default ci/netns-fabric (2 groups of 2 hosts, 2 rails, 4 leaves, 2 spines, ECMP),
# every link shaped with tbf to RATE (default 200mbit); agents inside the host namespaces (local
# launcher, the fabric's hostfile), the plan's [global] topology the fabric's own design
# (`ci/netns-fabric intent`: the links' speeds, which the estimate takes for the lanes').
# The plan has a phase of every kind: pairwise bw (64K) and lat, ring, permutation (2 rounds),
# bisection, incast, ping (three: first, between the pairs and the probes, last, as a nightly
# checks its agents), polarization (16 flows, 2 paths), pfc (the probe on rail0, 2 s of load),
# allreduce and alltoall (1M to 8M), topology (listening 3 s for LLDP) and a lat phase under a bw
# load; duration 2 s, timeout 5 s.  First `fabscope run --dry-run` (its estimate, per phase and in
# all), then the run itself, RUNS times (default 3), --no-retest (a healthy bed has
# no suspect to re-test; the re-test's own bound is --retest-time).  Printed per phase kind: the
# estimate (run.json's phases[].estimate_s, made at the start, the same figure the dry run
# prints: checked), the estimate made when the phase started (estimate_start_s: from what the
# run had measured by then), what it took (actual_s), and the ratios estimate / actual (the goal
# is 0.7 to 1.3 for every kind) and estimate at start / actual; then the run's (its estimate_s
# and actual_s) and the set-up per job the run measured (what a job cost beyond its engine's
# time).  Last, per kind: the median ratio of its phases over the runs, their range, and the kinds
# whose median is outside the goal (a ping phase is a third of a millisecond, and one in which a
# process waited for a core takes ten times that: the median is the kind's figure, the range and
# the single phases outside the goal are printed beside it).
#
# Output: the table on stdout; in bench-out/estimate-bench.jsonl one JSON object per phase and run,
# one per run ("(run)") and one per kind ("(kind)": ratio_median, ratio_min, ratio_max).
# Exit codes: 0 ok (whatever the ratios), 2 usage, 3 environment (not root, a tool or the binary
# missing), 4 a run produced no estimate or time, or the dry run's estimates are not run.json's.
set -euo pipefail

prog=estimate-bench
synopsis="bench/estimate-bench.sh [-r RUNS] [-t RATE]"
. "$(dirname "$0")/lib.sh"
fabric=$srcdir/ci/netns-fabric
RUNS=3 RATE=200mbit
while (($#)); do
	case $1 in
	-r) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-r needs a number of runs"; RUNS=$2; shift ;;
	-t) [[ ${2:-} =~ ^[1-9][0-9]*(k|m|g)bit$ ]] || usage "-t needs a rate such as 200mbit"; RATE=$2; shift ;;
	-h | --help) bench_help ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done
((EUID == 0)) || envfail "must run as root (it builds network namespaces): sudo make bench"
for tool in jq ip tc timeout; do
	command -v $tool >/dev/null 2>&1 || envfail "'$tool' not found: run ci/install-deps bench (as root)"
done
bench_need fabscope

pfx=eb$$
work=$(mktemp -d /tmp/fabscope-estimate-bench.XXXXXX)
out=${BENCH_OUT:-$srcdir/bench-out}
main_pid=$BASHPID
bed_up=0
cleanup() {
	local rc=$?
	[[ $BASHPID == "$main_pid" ]] || return 0
	((bed_up)) && { "$fabric" down -p "$pfx" >/dev/null 2>&1 || true; }
	if ((rc)); then
		echo "$prog: outputs and logs kept in $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$out"
jsonl=$out/estimate-bench.jsonl
: >"$jsonl"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)

bed_up=1
"$fabric" up -p "$pfx" -r "$RATE" >"$work/fabric.log" 2>&1 || { cat "$work/fabric.log" >&2; envfail "the fabric did not come up"; }
"$fabric" hostfile -p "$pfx" >"$work/hosts"
"$fabric" intent -p "$pfx" >"$work/design"
cat >"$work/plan.ini" <<'EOF'
[global]
hostfile = hosts
topology = design
duration = 2
timeout = 5

[ping-first]
kind = ping

[pw-bw]
kind = pairwise
test = bw
size = 64K

[pw-lat]
kind = pairwise
test = lat

[ring]
kind = ring

[perm]
kind = permutation
count = 2

[bisect]
kind = bisection

[incast]
kind = incast

[ping]
kind = ping

[polar]
kind = polarization
paths = 2

[pfc]
kind = pfc
interface = rail0

[allreduce]
kind = allreduce
minbytes = 1M
maxbytes = 8M

[alltoall]
kind = alltoall
minbytes = 1M
maxbytes = 8M

[topology]
kind = topology
source = listen
lldp-listen = 3

[lat-load]
kind = pairwise
test = lat
load = bw

[ping-last]
kind = ping
EOF

"$FABSCOPE" run --dry-run "$work/plan.ini" >"$work/dry.out" 2>&1 || { cat "$work/dry.out" >&2; fail "the dry run failed"; }
dry_total=$(sed -n 's/^estimated time: \([0-9.]*\) s.*/\1/p' "$work/dry.out")
[[ -n $dry_total ]] || { cat "$work/dry.out" >&2; fail "the dry run printed no estimated time"; }

echo "# $prog: the netns fabric (4 hosts x 2 rails, $RATE links), every phase kind, $RUNS run(s);"
echo "# ratio = estimate / actual (goal 0.7 to 1.3)"
printf '%-4s %-10s %-14s %10s %10s %10s %6s %6s\n' run phase kind "estimate" "at start" "actual" ratio start
for ((k = 1; k <= RUNS; k++)); do
	d=$work/run$k
	# (exit 4: a job failed, a probe's inconclusive verdict; the times are what is measured)
	"$FABSCOPE" run "$work/plan.ini" -o "$d" --no-retest >"$work/run$k.log" 2>&1 || true
	[[ -f $d/run.json ]] && jq -e '.estimate_s and .actual_s' "$d/run.json" >/dev/null ||
		{ cat "$work/run$k.log" >&2; fail "run $k left no estimate_s and actual_s in run.json"; }
	jq -r '.phases[] | "\(.name) \(.kind) \(.estimate_s) \(.estimate_start_s) \(.actual_s)"' "$d/run.json" |
	while read -r name kind est then act; do
		# what the dry run said of this phase, "about 8.7 s" or "about 129 s (2:09)"
		dest=$(sed -n "s/^\[[0-9]*\] $name: .*; about \([0-9.e+-]*\) s.*/\1/p" "$work/dry.out")
		ratio=$(awk -v e="$est" -v a="$act" 'BEGIN { printf "%.2f", (a > 0 ? e / a : 0) }')
		ratio_then=$(awk -v e="$then" -v a="$act" 'BEGIN { printf "%.2f", (a > 0 ? e / a : 0) }')
		what=$kind
		[[ $name == pw-lat ]] && what="pairwise lat"
		[[ $name == lat-load ]] && what="lat under load"
		printf '%-4s %-10s %-14s %9.4fs %9.4fs %9.4fs %6s %6s\n' "$k" "$name" "$what" "$est" "$then" "$act" \
			"$ratio" "$ratio_then"
		jq -nc --arg time "$now" --argjson run "$k" --arg phase "$name" --arg kind "$what" \
			--argjson e "$est" --argjson t "$then" --argjson a "$act" --argjson r "$ratio" \
			--argjson rt "$ratio_then" --arg dry "$dest" \
			'{bench: "estimate-bench", time: $time, run: $run, phase: $phase, kind: $kind,
			  estimate_s: $e, estimate_start_s: $t, actual_s: $a, ratio: $r, ratio_start: $rt,
			  dry_run_s: ($dry | tonumber? // null)}' >>"$jsonl"
	done
	read -r est act setup < <(jq -r '"\(.estimate_s) \(.actual_s) \(.setup_s // 0)"' "$d/run.json")
	ratio=$(awk -v e="$est" -v a="$act" 'BEGIN { printf "%.2f", (a > 0 ? e / a : 0) }')
	printf '%-4s %-10s %-14s %9.4fs %10s %9.4fs %6s\n' "$k" "(run)" "all phases" "$est" "" "$act" "$ratio"
	printf '%-4s %-10s %-14s %s\n' "$k" "(set-up)" "measured" "$(printf '%.2f s a job' "$setup")"
	jq -nc --arg time "$now" --argjson run "$k" --argjson e "$est" --argjson a "$act" --argjson r "$ratio" \
		--argjson dry "$dry_total" --argjson su "$setup" \
		'{bench: "estimate-bench", time: $time, run: $run, phase: "(run)", estimate_s: $e, actual_s: $a,
		  ratio: $r, dry_run_s: $dry, setup_measured_s: $su}' >>"$jsonl"
done
# the dry run's estimate is the run's: one model, one figure
jq -s -e 'map(select(.phase != "(run)")) | all(.[]; .dry_run_s == null or
	((.dry_run_s - .estimate_s) | fabs) <= 0.05 * .estimate_s + 0.01)' "$jsonl" >/dev/null ||
	fail "the dry run's estimates differ from run.json's (see $jsonl)"
# per kind: the median of its phases' ratios over the runs (a kind's figure, which one phase that
# a process waited a scheduler's slice in cannot make), their range, and the goal on the median
echo "# per kind, over $RUNS run(s): the median ratio of its phases (their range), estimate and at start"
jq -s -r 'def med: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	[.[] | select(.phase != "(run)")] | group_by(.kind)[] |
	"\(.[0].kind)\t\(length)\t\(map(.ratio) | med)\t\(map(.ratio) | min)\t\(map(.ratio) | max)\t\(map(.ratio_start) | med)"' "$jsonl" |
while IFS=$'\t' read -r kind n med lo hi start; do
	printf '%-16s %2d phase(s)  median %5.2f (%.2f to %.2f)  at start %5.2f\n' "$kind" "$n" "$med" "$lo" "$hi" "$start"
	jq -nc --arg time "$now" --arg kind "$kind" --argjson n "$n" --argjson med "$med" --argjson lo "$lo" \
		--argjson hi "$hi" --argjson st "$start" \
		'{bench: "estimate-bench", time: $time, phase: "(kind)", kind: $kind, phases: $n, ratio_median: $med,
		  ratio_min: $lo, ratio_max: $hi, ratio_start_median: $st}' >>"$jsonl"
done
out_of_goal=$(jq -s -r '[.[] | select(.phase == "(kind)" and (.ratio_median < 0.7 or .ratio_median > 1.3)) |
	"\(.kind) (median \(.ratio_median))"] | if length == 0 then "none" else join(", ") end' "$jsonl")
phases_out=$(jq -s -r '[.[] | select(.phase != "(run)" and .phase != "(kind)" and (.ratio < 0.7 or .ratio > 1.3)) |
	"\(.phase) (run \(.run): \(.ratio))"] | if length == 0 then "none" else join(", ") end' "$jsonl")
echo "# kinds whose median is outside the goal of 0.7 to 1.3: $out_of_goal"
echo "# single phases outside it: $phases_out"
echo "# the dry run said $dry_total s in all; records: $jsonl"
