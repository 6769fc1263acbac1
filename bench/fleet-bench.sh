#!/usr/bin/env bash
# bench/fleet-bench.sh - how `fabscope run` scales: agents joining, coordinator memory, plan size
#
#   bench/fleet-bench.sh [-n AGENTS] [-N NODES] [-R RAILS]      (run by `make bench`)
#
# 1. Join: AGENTS (default 512) agents on loopback (local launcher: one process each, on this
#    host) join a coordinator and finish a trivial phase (kind = ping: a control-channel round
#    trip to every agent).  Printed: the time from start until every agent had joined (from
#    run.json's join_seconds; it includes forking and exec'ing the agents, which on a 2-core box
#    is most of it), the ping phase's time, and the coordinator's peak RSS; memory per agent is
#    the difference against a 2-agent run, divided by the extra agents.
# 2. Plan: a hostfile of NODES (default 16384) x RAILS (default 8) endpoints and a plan with every
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
usage()   { echo "$prog: $* (usage: bench/fleet-bench.sh [-n AGENTS] [-N NODES] [-R RAILS])" >&2; exit 2; }
envfail() { echo "$prog: $*" >&2; exit 3; }
fail()    { echo "$prog: $*" >&2; exit 4; }

srcdir=$(cd "$(dirname "$0")/.." && pwd -P)
FABSCOPE=${FABSCOPE:-$srcdir/fabscope}
AGENTS=512 NODES=16384 RAILS=8
while (($#)); do
	case $1 in
	-n) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-n needs a number"; AGENTS=$2; shift ;;
	-N) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-N needs a number"; NODES=$2; shift ;;
	-R) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] && (($2 <= 64)) || usage "-R needs 1..64"; RAILS=$2; shift ;;
	-h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done
[[ -x $FABSCOPE ]] || envfail "no fabscope binary at $FABSCOPE: run make first"
command -v jq >/dev/null || envfail "jq is missing: ci/install-deps test"
# each agent is a process with a few descriptors; the coordinator holds one socket per agent
(($(ulimit -n) > AGENTS + 64)) || ulimit -n $((AGENTS + 256)) 2>/dev/null ||
	envfail "open files limit $(ulimit -n) is too low for $AGENTS agents: raise ulimit -n"

work=$(mktemp -d /tmp/fleet-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
out=${BENCH_OUT:-$srcdir/bench-out}
mkdir -p "$out"
jsonl=$out/fleet-bench.jsonl
: >"$jsonl"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)

printf '[ping]\nkind = ping\n' >"$work/ping.ini"

join_run() { # N -> sets join_s, rss_kib, ping_s
	local n=$1 d=$work/run$1
	"$FABSCOPE" run "$work/ping.ini" -n "$n" -o "$d" --join-timeout 120 >"$work/log$n" 2>&1 ||
		{ cat "$work/log$n" >&2; fail "the $n-agent run failed"; }
	[[ $(wc -l <"$d/results.jsonl") == "$n" ]] || fail "the $n-agent run has $(wc -l <"$d/results.jsonl") records, not $n"
	join_s=$(jq -r '.join_seconds' "$d/run.json")
	rss_kib=$(jq -r '.coordinator.max_rss_kib' "$d/run.json")
	ping_s=$(jq -r '.phases[0].seconds' "$d/run.json")
}

echo "# $prog: $AGENTS agents on loopback (local launcher), then a $NODES x $RAILS plan"
join_run 2
rss2=$rss_kib
join_run "$AGENTS"
per_agent=$(awk -v a="$rss_kib" -v b="$rss2" -v n="$AGENTS" 'BEGIN { printf "%.1f", (a - b) / (n - 2) }')
printf '%-44s %10s\n' "agents joined" "$AGENTS"
printf '%-44s %10.2f s\n' "join time (start to all joined)" "$join_s"
printf '%-44s %10.3f s\n' "ping phase, every agent" "$ping_s"
printf '%-44s %10s KiB\n' "coordinator peak RSS ($AGENTS agents)" "$rss_kib"
printf '%-44s %10s KiB\n' "coordinator peak RSS (2 agents)" "$rss2"
printf '%-44s %10s KiB\n' "coordinator memory per agent" "$per_agent"
jq -nc --arg time "$now" --argjson n "$AGENTS" --argjson j "$join_s" --argjson p "$ping_s" \
	--argjson rss "$rss_kib" --argjson rss2 "$rss2" --argjson per "$per_agent" \
	'{bench: "fleet-bench", time: $time, test: "join", agents: $n, launcher: "local",
	  join_s: $j, ping_phase_s: $p, coordinator_max_rss_kib: $rss, coordinator_max_rss_kib_2_agents: $rss2,
	  coordinator_kib_per_agent: $per}' >>"$jsonl"

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
printf '%-44s %10s\n' "plan: nodes x rails" "$NODES x $RAILS"
printf '%-44s %10s\n' "tournament pairs generated and checked" "$pairs"
printf '%-44s %10s s\n' "schedule generated (all phases)" "$gen"
printf '%-44s %10s s\n' "fabscope run --dry-run, wall" "$wall"
jq -nc --arg time "$now" --argjson n "$NODES" --argjson r "$RAILS" --argjson g "$gen" --argjson w "$wall" \
	--argjson p "$pairs" \
	'{bench: "fleet-bench", time: $time, test: "plan", nodes: $n, rails: $r, tournament_pairs: $p,
	  schedule_s: $g, dry_run_wall_s: $w}' >>"$jsonl"
echo "# records: $jsonl"
