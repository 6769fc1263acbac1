#!/usr/bin/env bash
# bench/verbs-bench.sh - fabscope's verbs transport against perftest and qperf on the same
# Soft-RoCE link, in the same VM boot (run by `make bench`; needs qemu: ci/install-deps vm).
#
#   bench/verbs-bench.sh [-r ROUNDS]
#
# In the VM (ci/rxe-vm -n 2): server side rxe1 (10.1.0.1), client side rxe2 (10.1.0.2).
# bw: 64K and 1M messages, 1 and 4 QPs, 2 s each, both clients polling their CQs busily
#     (perftest's default; its -e is not used); fabscope's server sleeps (its own --poll event:
#     as the receiver of SENDs it only reposts receives), perftest's receiver spins:
#     fabscope bw -t verbs --op write|read|send --poll busy  vs  ib_write_bw / ib_read_bw / ib_send_bw
# lat: 2-byte ping-pong, busy polling (perftest's way):
#     fabscope lat --op send|write --poll busy     vs  ib_send_lat / ib_write_lat
# Both tools run with the same local ACK timeout, 18 (fabscope --qp-timeout, perftest -u; see
# verbs-bench.guest for why not perftest's default 14).
# qperf's rc_bw and rc_lat cannot run on RoCE here: qperf 0.4.11 moves its QPs to RTR
# without a GRH (InfiniBand LID addressing), which rxe refuses ("failed to modify QP to
# RTR: Invalid argument"), and with -cm1 its rdma_cm client does not bind a source address
# ("unexpected event from RDMA CM: Event unreachable").  The script says so when it runs.
# Every bandwidth pair runs ROUNDS times (default 7), every latency pair three times as many
# (a run is short, and its p50 jumps in the host's slow phases), each round both tools one
# after the other, which goes first alternating.  rxe under qemu TCG is software on emulated CPUs, and this host's
# speed swings in phases of tens of seconds that slow every run in them alike (0.26 Gb/s
# runs, then a minute of 0.16 for both tools); so each round's two runs, adjacent in time,
# are compared, and a row's ratio is the median of its rounds' ratios, shown with their
# range.  Each tool's median figure is shown too.  Ratios are fabscope/peer: for bandwidth
# higher is better, for latency lower.  Absolute figures mean nothing here (TCG); the
# ratios do.  A round where a tool gave no figure is counted as failed, not compared.
# The aa: rows are an A/A control: ib_write_bw and ib_read_bw against themselves (1 MiB, 1 QP,
# the rows where both tools sit at rxe's per-QP ceiling), same rounds, ratio = run 1 / run 2:
# how far from 1.0 two equal tools land in the same run.
# Each row also gets the sign test's interval (at least 90 %) for its median ratio, and a verdict:
# faster or slower when that interval lies wholly on one side of 1.0, tie when it holds 1.0 (the
# rounds cannot tell the two tools apart); with 7 rounds the interval is the rounds' whole range.
# Output: a table, and bench-out/verbs-bench.jsonl (every round's pair).
set -euo pipefail
srcdir=$(cd "$(dirname "$0")/.." && pwd -P)
ROUNDS=7
case ${1:-} in
'') ;;
-r) [[ ${2:-} =~ ^[1-9][0-9]*$ && $# == 2 ]] ||
	{ echo "verbs-bench: -r needs a number of rounds, 1 or more (usage: bench/verbs-bench.sh [-r ROUNDS])" >&2; exit 2; }
	ROUNDS=$2 ;;
*) echo "verbs-bench: unknown argument '$1' (usage: bench/verbs-bench.sh [-r ROUNDS])" >&2; exit 2 ;;
esac
out=$srcdir/bench-out
mkdir -p "$out"
tmp=$(mktemp -d /tmp/fabscope-verbs-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$srcdir/ci/rxe-vm" --check >/dev/null || { echo "verbs-bench: no VM here: $("$srcdir/ci/rxe-vm" --check 2>&1)" >&2; exit 3; }
"$srcdir/ci/rxe-vm" -n 2 -t 1500 -o "$tmp" -e FABSCOPE="$srcdir/fabscope" -e ROUNDS="$ROUNDS" \
	-- bash "$srcdir/bench/verbs-bench.guest" >"$tmp/vm.out" 2>"$tmp/vm.err" ||
	{ echo "verbs-bench: the VM run failed:" >&2; tail -5 "$tmp/vm.err" >&2; exit 4; }
cp "$tmp/verbs-bench.jsonl" "$out/verbs-bench.jsonl"
# what fabscope's clients said on stderr (nothing when every run went well)
cp "$tmp/fabscope.err" "$out/verbs-bench-fabscope.err" 2>/dev/null || : >"$out/verbs-bench-fabscope.err"
# perftest runs made again because its clock sampling failed (see perf in verbs-bench.guest)
cp "$tmp/perftest-clock.log" "$out/verbs-bench-perftest-clock.log" 2>/dev/null ||
	: >"$out/verbs-bench-perftest-clock.log"
echo "verbs-bench: Soft-RoCE (rxe) in qemu TCG, $ROUNDS rounds (latency $((3 * ROUNDS))); ratio = fabscope/peer, the median of the rounds' ratios"
fmt='%-12s %7s %4s  %10s %10s %-12s %7s  %-13s %-13s %-7s %-5s %s\n'
printf "$fmt" test size qps fabscope peer peer-tool ratio range 90%-interval verdict won failed
jq -r '[.test, .size, .qps, (.fabscope // "-" | tostring | .[0:8]), (.peer // "-" | tostring | .[0:8]),
	.peer_tool, (.ratio // "-"), "\(.ratio_min // "-")-\(.ratio_max // "-")",
	(if .ci_lo then "\(.ci_lo)-\(.ci_hi)" else "-" end), (.verdict // "-"),
	"\(.won)/\((.rounds | length) - .failed_rounds)", .failed_rounds] | @tsv' \
	"$out/verbs-bench.jsonl" |
	while IFS=$'\t' read -r t s q f p tool r range ci verdict won fail; do
		printf "$fmt" "$t" "$s" "$q" "$f" "$p" "$tool" "$r" "$range" "$ci" "$verdict" "$won" "$fail"
	done
jq -rs 'map(select(.test | startswith("aa:") | not)) |
	"verbs-bench: against perftest: \(map(select(.verdict == "faster")) | length) rows faster, " +
	"\(map(select(.verdict == "tie")) | length) tied, \(map(select(.verdict == "slower")) | length) slower, " +
	"\(map(select(.verdict == null)) | length) with too few rounds to tell; " +
	"\(map(select(.ratio != null and (if .higher_is_better then .ratio >= 1 else .ratio <= 1 end))) | length) " +
	"of \(length) at or past a ratio of 1.0"' "$out/verbs-bench.jsonl"
echo "verbs-bench: bandwidth in Gb/s, latency p50 (fabscope) vs typical/median (perftest) in us;" \
	"fabscope and peer are each tool's median over the rounds; 90%-interval: the sign test's interval" \
	"for the median ratio (verdict tie: the rounds cannot tell the tools apart)"
grep -q '"aa:' "$out/verbs-bench.jsonl" &&
	echo "verbs-bench: aa: rows are the A/A control, perftest against itself (its first run in the fabscope" \
		"column): the spread of a tie"
[ -s "$out/verbs-bench-perftest-clock.log" ] &&
	echo "verbs-bench: $(wc -l <"$out/verbs-bench-perftest-clock.log") perftest run(s) made again, their clock sampling" \
		"failed (a rate of 0): see bench-out/verbs-bench-perftest-clock.log"
[ -s "$out/verbs-bench-fabscope.err" ] &&
	echo "verbs-bench: fabscope's clients wrote to stderr: see bench-out/verbs-bench-fabscope.err"
echo "verbs-bench: qperf rc_bw/rc_lat left out: qperf cannot connect RC QPs over RoCE (no GRH; see the script)"
