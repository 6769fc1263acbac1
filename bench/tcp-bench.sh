#!/usr/bin/env bash
# bench/tcp-bench.sh - fabscope's TCP transport against real peers, same test bed, same run
#
#   bench/tcp-bench.sh [-t SECONDS] [--peers-only]          (run by `make bench`; needs root)
#
# On an unshaped ci/netns-pair (client in a, servers in b):
#   bw, 1 and 8 flows:  fabscope bw HOST -q N -s 128K -D T --json   vs  iperf3 -c HOST -P N -t T -J
#                       (128K = iperf3's default TCP write size)
#   lat, 2-byte msgs:   fabscope lat HOST -s 2 -n 50000 --json      vs  qperf HOST -t T -m 2 tcp_lat
# Compared: fabscope's aggregate bw_gbps with iperf3's receiver-side sum (Gbit/s); fabscope's
# lat_us.p50 with qperf's latency, which is also one-way (round trip / 2) but a mean - fabscope's
# avg is printed and recorded too.  Ratios are fabscope/peer: for bw higher is better, for
# latency lower is better.
#
# Output: a table on stdout and one JSON object per comparison in bench-out/tcp-bench.jsonl
# (rewritten each run).  --peers-only measures only iperf3 and qperf (checks the test bed and
# the parsing without a fabscope binary).  Veth between namespaces on one host is memory
# copies and softirqs on shared cores: compare ratios, not absolute figures.
#
# Exit codes: 0 ok, 2 usage, 3 environment (not root, a tool or the binary missing), 4 a
# measurement produced no figure.
set -euo pipefail

prog=tcp-bench
synopsis="bench/tcp-bench.sh [-t SECONDS] [--peers-only]"
. "$(dirname "$0")/lib.sh"
pair=$srcdir/ci/netns-pair
T=5 peers_only=0
while (($#)); do
	case $1 in
	-t)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-t needs whole seconds"
		T=$2
		shift ;;
	--peers-only) peers_only=1 ;;
	-h | --help) bench_help ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done

((EUID == 0)) || envfail "must run as root (it builds a network namespace pair): sudo make bench"
for tool in iperf3 qperf jq ip ss timeout; do
	command -v $tool >/dev/null 2>&1 || envfail "'$tool' not found: run ci/install-deps bench (as root)"
done
((peers_only)) || [[ -x $FABSCOPE ]] || envfail "no fabscope binary at $FABSCOPE: run make (or use --peers-only)"

pfx=fb$$
host=10.77.0.2
fs_bw_port=18530 fs_lat_port=18531
out_dir=$srcdir/bench-out
jsonl=$out_dir/tcp-bench.jsonl
work=$(mktemp -d /tmp/fabscope-tcp-bench.XXXXXX)
pids=() main_pid=$BASHPID

cleanup() {
	local rc=$? pid
	# a background child killed before it exec'd runs this trap too: only the script cleans up
	[[ $BASHPID == "$main_pid" ]] || return 0
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	"$pair" down -p "$pfx" >/dev/null 2>&1 || true
	if ((rc)); then
		echo "$prog: outputs and server logs kept in $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

in_a() { "$pair" exec -p "$pfx" a "$@"; }

# spawn_b LOG CMD...: start CMD in b in the background (the PID is CMD's own), remember it in
# $spawned and in pids (killed at exit)
spawn_b() {
	local log=$1
	shift
	"$pair" exec -p "$pfx" b "$@" >"$log" 2>&1 &
	spawned=$!
	pids+=("$spawned")
}

# wait_b PORT PID: until PID listens on PORT in b
wait_b() {
	"$pair" wait-listen -p "$pfx" b "$1" "$2" ||
		{ sed 's/^/  /' "$work"/*.log >&2; fail "a server did not come up"; }
}

# qperf_us FILE: qperf's "latency = 15.6 us" line in microseconds (ns, us, ms or sec)
qperf_us() {
	awk '$1 == "latency" && $2 == "=" {
		v = $3; gsub(",", "", v); u = $4
		if (u == "ns") v /= 1000; else if (u == "ms") v *= 1000
		else if (u == "sec" || u == "s") v *= 1000000; else if (u != "us") exit 1
		printf "%.3f\n", v; found = 1; exit
	} END { exit !found }' "$1"
}

# The measurements set globals (fs_gbps, peer_gbps, fs_p50, fs_avg, peer_us) rather than print:
# a server started inside $(...) would escape the cleanup.
fs_bw() { # FLOWS
	in_a timeout $((T + 60)) "$FABSCOPE" bw "$host" -p $fs_bw_port -q "$1" -s 128K -D "$T" --json \
		>"$work/fs-bw-$1.json" || fail "fabscope bw -q $1 failed"
	fs_gbps=$(jq -e '[.[] | select(.scope == "aggregate")][0].metrics.bw_gbps' "$work/fs-bw-$1.json") ||
		fail "no aggregate bw_gbps in fabscope's output ($work/fs-bw-$1.json)"
}

iperf3_bw() { # FLOWS
	local pid
	spawn_b "$work/iperf3-s.log" timeout $((T + 60)) iperf3 -s -1
	pid=$spawned
	wait_b 5201 "$pid"
	in_a timeout $((T + 60)) iperf3 -c "$host" -P "$1" -t "$T" -J >"$work/iperf3-$1.json" ||
		fail "iperf3 -c -P $1 failed: $(jq -r '.error // empty' "$work/iperf3-$1.json" 2>/dev/null)"
	wait "$pid" || true
	peer_gbps=$(jq -e '.end.sum_received.bits_per_second / 1e9' "$work/iperf3-$1.json") ||
		fail "no end.sum_received in iperf3's output"
}

fs_lat() { # POLL-MODE
	in_a timeout $((T + 60)) "$FABSCOPE" lat "$host" -p $fs_lat_port -s 2 -n 50000 --poll "$1" --json \
		>"$work/fs-lat.json" || fail "fabscope lat --poll $1 failed"
	fs_p50=$(jq -e '[.[] | select(.test == "lat")][0].metrics.lat_us.p50' "$work/fs-lat.json") ||
		fail "no lat_us.p50 in fabscope's output"
	fs_avg=$(jq '[.[] | select(.test == "lat")][0].metrics.lat_us.avg' "$work/fs-lat.json")
}

qperf_lat() {
	in_a timeout $((T + 60)) qperf -vv "$host" -t "$T" -m 2 tcp_lat >"$work/qperf-lat.txt" 2>&1 ||
		fail "qperf tcp_lat failed: $(tail -n 1 "$work/qperf-lat.txt")"
	peer_us=$(qperf_us "$work/qperf-lat.txt") || fail "no 'latency = N unit' line in qperf's output"
}

# row TEST FLOWS SIZE FABSCOPE PEER RATIO: one line of the table
row() { printf '%-5s %5s %6s  %-32s %-26s %7s\n' "$@"; }

"$pair" up -p "$pfx" >/dev/null
mkdir -p "$out_dir"
: >"$jsonl"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
version=null
if ((!peers_only)); then
	version=$("$FABSCOPE" version 2>/dev/null | head -n 1 | jq -R .) || true
	[[ -n $version ]] || version=null
fi

# record TEST FLOWS SIZE FABSCOPE PEER FS_KEY PEER_KEY: one line of bench-out/tcp-bench.jsonl;
# FABSCOPE and PEER are JSON objects of figures (FABSCOPE null with --peers-only), the ratio is
# FABSCOPE[FS_KEY] / PEER[PEER_KEY].  Prints the ratio (or n/a) for the table.
record() {
	jq -cn --arg time "$now" --argjson version "$version" --arg test "$1" --argjson flows "$2" \
		--argjson size "$3" --argjson dur "$T" --argjson fs "$4" --argjson peer "$5" \
		--arg fk "$6" --arg pk "$7" '
		{bench: "tcp-bench", time: $time, fabscope_version: $version, test: $test,
		 transport: "tcp", testbed: "netns veth pair, unshaped", flows: $flows,
		 msg_size_bytes: $size, duration_s: $dur, fabscope: $fs, peer: $peer,
		 ratio_of: "fabscope.\($fk) / peer.\($pk)",
		 ratio: (if $fs == null or $peer[$pk] == 0 then null else $fs[$fk] / $peer[$pk] end)}' |
		tee -a "$jsonl" | jq -r 'if .ratio == null then "n/a" else .ratio * 1000 | round / 1000 end'
}

if ((!peers_only)); then
	spawn_b "$work/fs-bw-s.log" "$FABSCOPE" bw --server -p $fs_bw_port
	wait_b $fs_bw_port "$spawned"
	spawn_b "$work/fs-lat-s.log" "$FABSCOPE" lat --server -p $fs_lat_port
	wait_b $fs_lat_port "$spawned"
fi
spawn_b "$work/qperf-s.log" qperf
wait_b 19765 "$spawned"

echo "tcp-bench: unshaped netns veth pair, $T s per run, $(nproc) CPUs; ratio = fabscope/peer"
row test flows size fabscope peer ratio
for flows in 1 8; do
	fs=null fs_text=n/a
	if ((!peers_only)); then
		fs_bw "$flows"
		fs=$(jq -cn --argjson v "$fs_gbps" '{bw_gbps: $v}')
		fs_text=$(printf '%.2f Gbit/s' "$fs_gbps")
	fi
	iperf3_bw "$flows"
	r=$(record bw "$flows" 131072 "$fs" "$(jq -cn --argjson v "$peer_gbps" '{tool: "iperf3", bw_gbps: $v}')" \
		bw_gbps bw_gbps)
	row bw "$flows" 128K "$fs_text" "$(printf '%.2f Gbit/s (iperf3)' "$peer_gbps")" "$r"
done

# event (the default) sleeps in the kernel like qperf's blocking calls: the like-for-like
# comparison; busy spins, which on a host with spare cores is what latency tests use
qperf_lat
for mode in event busy; do
	fs=null fs_text=n/a
	if ((!peers_only)); then
		fs_lat $mode
		fs=$(jq -cn --argjson p "$fs_p50" --argjson a "$fs_avg" --arg m $mode \
			'{poll: $m, lat_us_p50: $p, lat_us_avg: $a}')
		fs_text=$(printf 'p50 %.2f us (avg %.2f) %s' "$fs_p50" "$fs_avg" $mode)
	fi
	r=$(record lat 1 2 "$fs" "$(jq -cn --argjson v "$peer_us" '{tool: "qperf", lat_us_mean: $v}')" \
		lat_us_p50 lat_us_mean)
	row lat 1 2 "$fs_text" "$(printf '%.2f us (qperf, mean)' "$peer_us")" "$r"
done

echo "tcp-bench: records in ${jsonl#"$srcdir"/}"
