#!/usr/bin/env bash
# bench/fleet-bench.sh - how `fabscope run` scales: agents joining, coordinator memory, plan size
#
#   bench/fleet-bench.sh [-S SIMULATED] [-n AGENTS] [-s SPINNERS] [-N NODES] [-R RAILS]
#                                                                (run by `make bench`)
#
# 1. The coordinator alone: SIMULATED (default 16384) agents played by one process,
#    `test-tool fleet-sim`, over TCP and the real protocol (handshake, MACs, heartbeats, pongs),
#    join a coordinator (`--launcher external`) and answer its ping phase; then a quarter as
#    many, for the growth.  Printed for each: the wall time from the first connection to the
#    run's end (every agent joined, pinged, said bye; the issue's target at 16,384 is under
#    10 s on this 2-core machine), the coordinator's join time, CPU seconds and peak RSS; then
#    the ratios of the wall times and of the coordinator's CPU against the ratio of agents (4:
#    linear).  The machine's load average before the runs is printed with them: on a machine
#    shared with others, the wall times are what the CPU left to these two processes allows,
#    the CPU seconds are the coordinator's own.
# 2. Real agents: AGENTS (default 8192) agents on loopback (local launcher: one process each,
#    on this host) join a coordinator and finish a trivial phase (kind = ping: a
#    control-channel round trip to every agent), once on the machine as it is and once with
#    SPINNERS (default 2; 0: not run) busy loops beside it.  Every agent must join and answer
#    (exit 0).  Printed: the time from start until every agent had joined (from run.json's
#    join_seconds; it includes forking and exec'ing the agents, which on a 2-core box is most
#    of it), the ping phase's time, and the coordinator's peak RSS; memory per agent is the
#    difference against a 2-agent run, divided by the extra agents.
# 3. Plan: a hostfile of NODES (default 16384) x RAILS (default 8) endpoints and a plan with every
#    phase kind (pairwise bw,lat; 8 permutations; ring; bisection; incast), through
#    `fabscope run --dry-run`, which reads both, builds the schedule and generates every round of
#    every phase (all 16,383 tournament rounds: 134 million pairs) and checks that each
#    tournament round is disjoint.  Lanes whose nodes are the same get the same pairs, so those
#    are generated once per node set, not once per lane (the coordinator also generates a round
#    only when it runs it).  Printed: the command's wall time and its own "schedule generated in".
#
# Output: a table on stdout, one JSON object per figure in bench-out/fleet-bench.jsonl.
# Exit codes: 0 ok, 2 usage, 3 environment (binary missing), 4 a run failed.
set -euo pipefail

prog=fleet-bench
synopsis="bench/fleet-bench.sh [-S SIMULATED] [-n AGENTS] [-s SPINNERS] [-N NODES] [-R RAILS]"
. "$(dirname "$0")/lib.sh"
SIM=16384 AGENTS=8192 SPINNERS=2 NODES=16384 RAILS=8
while (($#)); do
	case $1 in
	-S) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] && (($2 >= 4)) || usage "-S needs a number, 4 or more"; SIM=$2; shift ;;
	-n) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] && (($2 >= 3)) || usage "-n needs a number, 3 or more"; AGENTS=$2; shift ;;
	-s) [[ ${2:-} =~ ^[0-9]+$ ]] && (($2 <= 16)) || usage "-s needs 0..16"; SPINNERS=$2; shift ;;
	-N) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-N needs a number"; NODES=$2; shift ;;
	-R) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] && (($2 <= 64)) || usage "-R needs 1..64"; RAILS=$2; shift ;;
	-h | --help) bench_help ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done
bench_need fabscope test-tool jq
# the coordinator holds a socket a simulated agent, and a socket and a pipe a local one (it
# raises its own limit as far as the hard limit allows); the simulator a socket an agent
fds=$((2 * AGENTS > SIM ? 2 * AGENTS : SIM))
(($(ulimit -n) > fds + 64)) || ulimit -n $((fds + 256)) 2>/dev/null ||
	envfail "open files limit $(ulimit -n) (hard $(ulimit -Hn)) is too low for $SIM simulated and $AGENTS local agents: raise it to $((fds + 256))"

work=$(mktemp -d /tmp/fleet-bench.XXXXXX)
spinners=()
cleanup() {
	local p
	for p in "${spinners[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || :; done
	rm -rf "$work"
}
trap cleanup EXIT
out=${BENCH_OUT:-$srcdir/bench-out}
mkdir -p "$out"
jsonl=$out/fleet-bench.jsonl
: >"$jsonl"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)

printf '[ping]\nkind = ping\n' >"$work/ping.ini"

now_s() { date +%s.%N; }

sim_run() { # N -> sets sim_wall, sim_join_s, sim_cpu, sim_rss
	local n=$1 d=$work/sim$1 log=$work/simlog$1 pid port t0 t1 i
	: >"$log"	# (made here: the loop below may read it before the coordinator's shell has)
	FABSCOPE_TOKEN=fleet-bench "$FABSCOPE" run "$work/ping.ini" --launcher external -n "$n" \
		--listen 127.0.0.1:0 -o "$d" --join-timeout 600 >"$log" 2>&1 &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		port=$(sed -n "s/.*waiting for $n agents: start them with .* --connect 127\.0\.0\.1:\([0-9]*\).*/\1/p" "$log")
		[[ -n $port ]] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	[[ -n $port ]] || { kill "$pid" 2>/dev/null; cat "$log" >&2; fail "the coordinator for $n simulated agents did not listen"; }
	t0=$(now_s)
	FABSCOPE_TOKEN=fleet-bench "$TEST_TOOL" fleet-sim --connect "127.0.0.1:$port" -n "$n" >"$work/sim$n.json" 2>"$work/sim$n.err" ||
		{ kill "$pid" 2>/dev/null; cat "$work/sim$n.err" "$log" >&2; fail "not every one of $n simulated agents joined and ended with bye"; }
	wait "$pid" || { cat "$log" >&2; fail "the run of $n simulated agents failed"; }
	t1=$(now_s)
	[[ $(jq -c '[.joined, .pongs, .failed]' "$work/sim$n.json") == "[$n,$n,0]" ]] ||
		fail "the $n simulated agents say $(cat "$work/sim$n.json")"
	[[ $(wc -l <"$d/results.jsonl") == "$n" && $(jq '.missing_agents' "$d/run.json") == 0 ]] ||
		fail "the run of $n simulated agents has $(wc -l <"$d/results.jsonl") records and $(jq '.missing_agents' "$d/run.json") missing"
	sim_wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	sim_join_s=$(jq -r '.join_seconds' "$d/run.json")
	sim_cpu=$(jq -r '.coordinator.cpu_seconds' "$d/run.json")
	sim_rss=$(jq -r '.coordinator.max_rss_kib' "$d/run.json")
}

join_run() { # N -> sets join_s, rss_kib, ping_s
	local n=$1 d=$work/run$1${2:+-busy}
	rm -rf "$d"
	"$FABSCOPE" run "$work/ping.ini" -n "$n" -o "$d" --join-timeout 600 >"$work/log$n" 2>&1 ||
		{ cat "$work/log$n" >&2; fail "the $n-agent run failed${2:+ ($2)}"; }
	[[ $(wc -l <"$d/results.jsonl") == "$n" ]] || fail "the $n-agent run has $(wc -l <"$d/results.jsonl") records, not $n"
	join_s=$(jq -r '.join_seconds' "$d/run.json")
	rss_kib=$(jq -r '.coordinator.max_rss_kib' "$d/run.json")
	ping_s=$(jq -r '.phases[0].seconds' "$d/run.json")
}

echo "# $prog: $SIM simulated agents (test-tool fleet-sim), $AGENTS agents on loopback (local launcher), then a $NODES x $RAILS plan"
quarter=$((SIM / 4))
load=$(cut -d' ' -f1 /proc/loadavg)
sim_run "$quarter"
q_wall=$sim_wall q_join=$sim_join_s q_cpu=$sim_cpu q_rss=$sim_rss
sim_run "$SIM"
growth=$(awk -v a="$q_wall" -v b="$sim_wall" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
cpu_growth=$(awk -v a="$q_cpu" -v b="$sim_cpu" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
printf '%-48s %10s\n' "simulated agents joined, pinged, said bye" "$SIM"
printf '%-48s %10.2f s\n' "wall, first connection to the run's end" "$sim_wall"
printf '%-48s %10.2f s\n' "coordinator's join time (start to all joined)" "$sim_join_s"
printf '%-48s %10.2f s\n' "coordinator CPU" "$sim_cpu"
printf '%-48s %10s KiB\n' "coordinator peak RSS" "$sim_rss"
printf '%-48s %10.2f s, %s KiB\n' "the same for $quarter agents: wall, peak RSS" "$q_wall" "$q_rss"
printf '%-48s %10s (agents x4; linear: 4)\n' "wall ratio, $SIM / $quarter agents" "$growth"
printf '%-48s %10s (agents x4; linear: 4)\n' "coordinator CPU ratio, $SIM / $quarter agents" "$cpu_growth"
printf '%-48s %10s\n' "load average (1 min) before these runs" "$load"
jq -nc --arg time "$now" --argjson n "$SIM" --argjson q "$quarter" --argjson w "$sim_wall" --argjson j "$sim_join_s" \
	--argjson cpu "$sim_cpu" --argjson rss "$sim_rss" --argjson qw "$q_wall" --argjson qj "$q_join" \
	--argjson qcpu "$q_cpu" --argjson qrss "$q_rss" --argjson g "$growth" --argjson cg "$cpu_growth" \
	--argjson load "$load" \
	'{bench: "fleet-bench", time: $time, test: "join-simulated", agents: $n, wall_s: $w, join_s: $j,
	  coordinator_cpu_s: $cpu, coordinator_max_rss_kib: $rss, quarter_agents: $q, quarter_wall_s: $qw,
	  quarter_join_s: $qj, quarter_coordinator_cpu_s: $qcpu, quarter_coordinator_max_rss_kib: $qrss,
	  wall_ratio: $g, cpu_ratio: $cg, load_average_1min: $load}' >>"$jsonl"

join_run 2
rss2=$rss_kib
join_run "$AGENTS"
per_agent=$(awk -v a="$rss_kib" -v b="$rss2" -v n="$AGENTS" 'BEGIN { printf "%.1f", (a - b) / (n - 2) }')
printf '%-48s %10s\n' "local agents joined" "$AGENTS"
printf '%-48s %10.2f s\n' "join time (start to all joined)" "$join_s"
printf '%-48s %10.3f s\n' "ping phase, every agent" "$ping_s"
printf '%-48s %10s KiB\n' "coordinator peak RSS ($AGENTS agents)" "$rss_kib"
printf '%-48s %10s KiB\n' "coordinator peak RSS (2 agents)" "$rss2"
printf '%-48s %10s KiB\n' "coordinator memory per agent" "$per_agent"
jq -nc --arg time "$now" --argjson n "$AGENTS" --argjson j "$join_s" --argjson p "$ping_s" \
	--argjson rss "$rss_kib" --argjson rss2 "$rss2" --argjson per "$per_agent" \
	'{bench: "fleet-bench", time: $time, test: "join", agents: $n, launcher: "local",
	  join_s: $j, ping_phase_s: $p, coordinator_max_rss_kib: $rss, coordinator_max_rss_kib_2_agents: $rss2,
	  coordinator_kib_per_agent: $per}' >>"$jsonl"
if ((SPINNERS)); then	# a busy machine: every agent must still join and answer
	for ((i = 0; i < SPINNERS; i++)); do
		{ while :; do :; done; } &
		spinners+=($!)
	done
	join_run "$AGENTS" "with $SPINNERS busy loops"
	for p in "${spinners[@]}"; do kill "$p"; wait "$p" 2>/dev/null || :; done
	spinners=()
	printf '%-48s %10.2f s, all %s joined and answered\n' "join time beside $SPINNERS busy loops" "$join_s" "$AGENTS"
	jq -nc --arg time "$now" --argjson n "$AGENTS" --argjson j "$join_s" --argjson p "$ping_s" \
		--argjson rss "$rss_kib" --argjson s "$SPINNERS" \
		'{bench: "fleet-bench", time: $time, test: "join-busy", agents: $n, launcher: "local", spinners: $s,
		  join_s: $j, ping_phase_s: $p, coordinator_max_rss_kib: $rss}' >>"$jsonl"
fi

# the big plan
awk -v n="$NODES" -v r="$RAILS" 'BEGIN {
	for (i = 0; i < n; i++) {
		printf "n%05d", i
		for (k = 0; k < r; k++) printf " rail%d=10.%d.%d.%d", k, 100 + k, int(i / 254) % 256, i % 254 + 1
		print ""
	} }' >"$work/big.hosts"
cat >"$work/big.ini" <<EOF
[global]
hostfile = big.hosts
[rails]
kind = pairwise
test = bw,lat
[perm]
kind = permutation
count = 8
[ring]
kind = ring
[bisect]
kind = bisection
[incast]
kind = incast
EOF
t0=$(date +%s.%N)
"$FABSCOPE" run --dry-run "$work/big.ini" >"$work/dry.out" 2>&1 || { cat "$work/dry.out" >&2; fail "the dry run failed"; }
t1=$(date +%s.%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
gen=$(sed -n 's/.*schedule generated in \([0-9.]*\) s.*/\1/p' "$work/dry.out")
pairs=$(sed -n 's/^\[1\] .*(\([0-9]*\) pairs generated.*/\1/p' "$work/dry.out")
[[ -n $gen && -n $pairs ]] || { cat "$work/dry.out" >&2; fail "cannot read the dry run's output"; }
printf '%-48s %10s\n' "plan: nodes x rails" "$NODES x $RAILS"
printf '%-48s %10s\n' "tournament pairs generated and checked" "$pairs"
printf '%-48s %10s s\n' "schedule generated (all phases)" "$gen"
printf '%-48s %10s s\n' "fabscope run --dry-run, wall" "$wall"
jq -nc --arg time "$now" --argjson n "$NODES" --argjson r "$RAILS" --argjson g "$gen" --argjson w "$wall" \
	--argjson p "$pairs" \
	'{bench: "fleet-bench", time: $time, test: "plan", nodes: $n, rails: $r, tournament_pairs: $p,
	  schedule_s: $g, dry_run_wall_s: $w}' >>"$jsonl"
echo "# records: $jsonl"
