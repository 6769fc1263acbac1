#!/usr/bin/env bash
# bench/netns-bench.sh - the speeds behind the functional tests' claims, as ratios measured in the
# same run, on the namespace test beds the t2xxx tests use
#
#   bench/netns-bench.sh [-r ROUNDS]              (run by `make bench`; needs root)
#
# The functional tiers check function only: a shaper bounds a rate and the rate is real, a
# stalled run exits 4 and says after how long, a trace ends by itself.  They hold on a machine
# whose cores are busy with other work.  How close each figure comes to what it should be is
# speed, and is measured here instead, each as a ratio of two figures of the same run:
#   bw-shaped-q4, -q1  fabscope bw -s 64K -q 4 (1) -D 3 over a ci/netns-pair shaped to 500mbit:
#                      aggregate bw / link rate; TCP goodput through tbf is 1448/1514 of the link,
#                      so 0.95-1.0 (t2000 checks 0.3 x <= aggregate <= 1.05 x)
#   bw-window-q4, -q1  the same runs: the shortest flow window / -D; at most 1.0 (the window
#                      leaves out the drain), near it (t2000 checks 0.5 <= window / -D <= 1)
#   iperf3-shaped      iperf3 -t 3 over the same pair: received / link rate, 0.95-1.0 (t2100 checks
#                      0.3 x <= iperf3 <= 1.05 x on the fabric)
#   lat-p50-ab         fabscope lat -n 20000 twice on the pair, client and server pinned to CPU 0
#                      (as t2010): p50 of run A / p50 of run B, 1.0 (t2010 checked <= 2x once)
#   bw-busy-refusal    a bw client while the server serves another: the time until it hears
#                      "refused: busy" / its --timeout (5 s): ~0.1, the server's grace of 0.5 s
#                      for a session about to end, and start-up (t1020 checks the message)
#   bw-stall-giveup    bw -s 4K --tx-depth 512 -D 1 --timeout 2 over a pair shaped to 1mbit (16 s
#                      to drain): (its time - -D - warm-up) / (2 x --timeout), the drain limit;
#                      a little over 1.0, the connection's set-up (t2020 checks exit 4 and "did not
#                      complete within 4 s of the run"; it once checked "within 15 s")
#   trace-blackhole    test-tool trace --max-ttl 4 --probes 2 --timeout 300 --pause 100 into a black
#                      hole behind both spines of a ci/netns-fabric: elapsed / its bound 4 x (2 x
#                      300 + 100) ms = 2.8 s; between 0.75 (3 silent TTLs: 2.1 s) and 1.0 (t2300
#                      checks >= 2.1 s and the silent hops; it once checked < 4.8 s)
#   trace-32-vs-1      32 source ports traced at once / 1 traced alone, routers without ICMP rate
#                      limits: near 1 when the traces run concurrently, 32 if one after another
#   coll-rail-ratio    fabscope allreduce -n 8 --multi-rail -b 2M on a 4-host, 2-rail fabric at
#                      200mbit with h3:rail1 degraded to 20mbit: rail 0 busbw / rail 1 busbw, ~10
#                      (t2500 checks rail 0 > rail 1; it once checked > 3x)
#   coll-rail1-link    the same run: rail 1 busbw / its 20 Mbit/s link, 0.8-1.0 (t2500 checks <= 1.05)
# Every measurement runs ROUNDS times (default 3); a row shows the median of its rounds' ratios
# and their range.  Veth between namespaces on one host is memory copies and softirqs on shared
# cores: compare ratios, not absolute figures.
#
# Output: a table on stdout and one JSON object per row in bench-out/netns-bench.jsonl (rewritten
# each run; every round's figures in it).
# Exit codes: 0 ok, 2 usage, 3 environment (not root, a tool or the binary missing), 4 a
# measurement failed or produced no figure.
set -euo pipefail
export LC_ALL=C

prog=netns-bench
synopsis="bench/netns-bench.sh [-r ROUNDS]"
. "$(dirname "$0")/lib.sh"
pair=$srcdir/ci/netns-pair
fabric=$srcdir/ci/netns-fabric
ROUNDS=3
while (($#)); do
	case $1 in
	-r)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-r needs a number of rounds, 1 or more"
		ROUNDS=$2
		shift ;;
	-h | --help) bench_help ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done

((EUID == 0)) || envfail "must run as root (it builds network namespaces): sudo make bench"
for tool in iperf3 jq ip ss taskset timeout perl; do
	command -v $tool >/dev/null 2>&1 || envfail "'$tool' not found: run ci/install-deps bench (as root)"
done
[[ -x $FABSCOPE ]] || envfail "no fabscope binary at $FABSCOPE: run make"
[[ -x $TEST_TOOL ]] || envfail "no test-tool at $TEST_TOOL: run make"

pfx_p=nb$$p pfx_s=nb$$s pfx_f=nb$$f	# the 500mbit pair, the 1mbit pair, the fabric
host=10.77.0.2
bw_port=18540 lat_port=18541 stall_port=18542
out_dir=$srcdir/bench-out
jsonl=$out_dir/$prog.jsonl
work=$(mktemp -d /tmp/fabscope-netns-bench.XXXXXX)
pids=() main_pid=$BASHPID

cleanup() {
	local rc=$? pid
	# a background child killed before it exec'd runs this trap too: only the script cleans up
	[[ $BASHPID == "$main_pid" ]] || return 0
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	"$pair" down -p "$pfx_p" >/dev/null 2>&1 || true
	"$pair" down -p "$pfx_s" >/dev/null 2>&1 || true
	"$fabric" down -p "$pfx_f" >/dev/null 2>&1 || true
	if ((rc)); then
		echo "$prog: outputs and server logs kept in $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# in PFX a|b CMD...: CMD in one side of a pair;  fab NODE CMD...: CMD in a node of the fabric
in_pair() { "$pair" exec -p "$1" "${@:2}"; }
fab() { "$fabric" exec -p "$pfx_f" "$@"; }

# spawn LOG CMD...: start CMD in the background (CMD's own PID: the bed scripts exec), remember it
# in $spawned and in pids (killed at exit)
spawn() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 &
	spawned=$!
	pids+=("$spawned")
}

# wait_pair PFX PORT PID: until PID listens on PORT in b of the pair
wait_pair() {
	"$pair" wait-listen -p "$1" b "$2" "$3" ||
		{ sed 's/^/  /' "$work"/*.log >&2; fail "a server did not come up"; }
}

now_s() { echo "$EPOCHREALTIME"; }
# ratio A B: A / B, 4 decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) exit 1; printf "%.4f\n", a / b }'; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", b - a }'; }

# note KEY RATIO FIGURES: one round's ratio of row KEY and the figures it came from (a JSON object)
declare -A ratios=() figures=()
note() {
	ratios[$1]+="${ratios[$1]:+ }$2"
	figures[$1]+="${figures[$1]:+,}$3"
}

# ---- the measurements (each sets its figures through note)

bw_shaped() { # FLOWS: fabscope bw over the 500mbit pair, -D 3
	local q=$1 f=$work/bw-q$1.json agg wmin wmax
	in_pair "$pfx_p" a timeout 60 "$FABSCOPE" bw "$host" -p $bw_port -s 64K -q "$q" -D 3 --json >"$f" ||
		fail "fabscope bw -q $q failed"
	agg=$(jq -e '[.[] | select(.scope == "aggregate")][0].metrics.bw_gbps' "$f") ||
		fail "no aggregate bw_gbps in $f"
	wmin=$(jq -e '[.[] | select(.scope == "flow") | .metrics.duration_s] | min' "$f") ||
		fail "no flow windows in $f"
	wmax=$(jq -e '[.[] | select(.scope == "flow") | .metrics.duration_s] | max' "$f")
	note bw-shaped-q$q "$(ratio "$agg" 0.5)" "{\"bw_gbps\": $agg, \"link_gbps\": 0.5}"
	note bw-window-q$q "$(ratio "$wmin" 3)" \
		"{\"window_s_min\": $wmin, \"window_s_max\": $wmax, \"duration_s\": 3}"
}

iperf3_shaped() { # iperf3 -t 3 over the 500mbit pair
	local pid gbps
	spawn "$work/iperf3-s.log" "$pair" exec -p "$pfx_p" b timeout 60 iperf3 -s -1 -p 5201
	pid=$spawned
	wait_pair "$pfx_p" 5201 "$pid"
	in_pair "$pfx_p" a timeout 60 iperf3 -c "$host" -p 5201 -t 3 -J >"$work/iperf3.json" ||
		fail "iperf3 failed: $(jq -r '.error // empty' "$work/iperf3.json" 2>/dev/null)"
	wait "$pid" || true
	gbps=$(jq -e '.end.sum_received.bits_per_second / 1e9' "$work/iperf3.json") ||
		fail "no end.sum_received in iperf3's output"
	note iperf3-shaped "$(ratio "$gbps" 0.5)" "{\"bw_gbps\": $gbps, \"link_gbps\": 0.5}"
}

lat_ab() { # two lat runs, pinned as t2010 pins them: p50 A / p50 B
	local r p=()
	for r in a b; do
		in_pair "$pfx_p" a timeout 60 taskset -c 0 "$FABSCOPE" lat "$host" -p $lat_port -n 20000 --json \
			>"$work/lat-$r.json" || fail "fabscope lat failed"
		p+=("$(jq -e '[.[] | select(.test == "lat")][0].metrics.lat_us.p50' "$work/lat-$r.json")") ||
			fail "no lat_us.p50 in $work/lat-$r.json"
	done
	note lat-p50-ab "$(ratio "${p[0]}" "${p[1]}")" "{\"p50_us_a\": ${p[0]}, \"p50_us_b\": ${p[1]}}"
}

busy_refusal() { # a second client while a -D 3 run is served: time to hear "busy" / --timeout 5
	local lpid t0 t1 rc=0 since
	since=$(wc -l <"$work/bw-s.log")
	spawn "$work/long.out" "$pair" exec -p "$pfx_p" a timeout 60 "$FABSCOPE" bw "$host" -p $bw_port -D 3 --json
	lpid=$spawned
	for _ in $(seq 100); do
		tail -n +$((since + 1)) "$work/bw-s.log" | grep -q "client .*: tcp " && break
		sleep 0.1
	done
	t0=$(now_s)
	in_pair "$pfx_p" a timeout 60 "$FABSCOPE" bw "$host" -p $bw_port --timeout 5 \
		>"$work/second.out" 2>"$work/second.err" || rc=$?
	t1=$(now_s)
	((rc == 4)) && grep -q "refused: busy" "$work/second.err" ||
		fail "the second client was not refused as busy (exit $rc): $(cat "$work/second.err")"
	wait "$lpid" || fail "the first client failed: $(cat "$work/long.out")"
	note bw-busy-refusal "$(ratio "$(elapsed "$t0" "$t1")" 5)" \
		"{\"refused_after_s\": $(elapsed "$t0" "$t1"), \"timeout_s\": 5}"
}

stall_giveup() { # bw over the 1mbit pair: (time - -D - warm-up) / (2 x --timeout)
	local t0 t1 rc=0 s srv
	# a fresh pair and server each round: the last round's 512 KiB in tbf's queue would hold the
	# next connection's set-up back for 4 s, and its server may still be draining
	"$pair" up -p "$pfx_s" -r 1mbit >/dev/null
	spawn "$work/stall-s.log" "$pair" exec -p "$pfx_s" b "$FABSCOPE" bw --server -p $stall_port
	srv=$spawned
	wait_pair "$pfx_s" $stall_port "$srv"
	t0=$(now_s)
	in_pair "$pfx_s" a timeout 60 "$FABSCOPE" bw "$host" -p $stall_port -s 4K --tx-depth 512 -D 1 \
		--timeout 2 --json >"$work/stall.json" 2>"$work/stall.err" || rc=$?
	t1=$(now_s)
	((rc == 4)) && grep -q "did not complete within 4 s of the run" "$work/stall.err" ||
		fail "the stalled run did not give up at its drain limit (exit $rc): $(cat "$work/stall.err")"
	# -D 1 with the default warm-up of a tenth of it
	s=$(awk -v e="$(elapsed "$t0" "$t1")" 'BEGIN { printf "%.4f\n", e - 1 - 0.1 }')
	note bw-stall-giveup "$(ratio "$s" 4)" "{\"elapsed_s\": $(elapsed "$t0" "$t1"), \"after_run_s\": $s, \"limit_s\": 4}"
	kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
}

trace_blackhole() { # a trace into a black hole behind both spines: elapsed / 2.8 s
	local t0 t1
	t0=$(now_s)
	fab h1 timeout 60 "$TEST_TOOL" trace 10.100.1.1 47000 10.99.1.1 5201 --max-ttl 4 --timeout 300 \
		--probes 2 --pause 100 >"$work/hole" 2>&1 || fail "the black-hole trace failed: $(cat "$work/hole")"
	t1=$(now_s)
	grep -qx "not reached" "$work/hole" || fail "the black-hole trace reached something: $(cat "$work/hole")"
	note trace-blackhole "$(ratio "$(elapsed "$t0" "$t1")" 2.8)" \
		"{\"elapsed_s\": $(elapsed "$t0" "$t1"), \"bound_s\": 2.8, \"silent_s\": 2.1}"
}

trace_many() { # 32 ports at once / 1 port alone, to the listener on h3
	local t0 t1 t2 t3 n
	t0=$(now_s)
	fab h1 timeout 60 "$TEST_TOOL" trace 10.100.1.1 42000 10.100.2.3 5201 >"$work/one" 2>&1 ||
		fail "a single trace failed: $(cat "$work/one")"
	t1=$(now_s)
	t2=$(now_s)
	fab h1 timeout 60 "$TEST_TOOL" trace 10.100.1.1 42000 10.100.2.3 5201 --many 42001-42031 \
		>"$work/many" 2>&1 || fail "32 traces at once failed: $(tail -n 3 "$work/many")"
	t3=$(now_s)
	n=$(grep -cx "reached" "$work/many" || true)
	((n == 32)) || fail "of 32 traces at once, $n reached h3"
	note trace-32-vs-1 "$(ratio "$(elapsed "$t2" "$t3")" "$(elapsed "$t0" "$t1")")" \
		"{\"one_s\": $(elapsed "$t0" "$t1"), \"thirty_two_s\": $(elapsed "$t2" "$t3")}"
}

# ranks HOSTFILE HOSTS RAILS: the per-rank lists (--netns, --bind, --rail), host-major (as t2500)
ranks() {
	awk -v hosts="$2" -v rails="$3" '
		/^h[0-9]/ && n < hosts {
			n++
			for (r = 0; r < rails; r++) {
				split($0, f, " "); ip = ""
				for (k in f) if (f[k] ~ "^rail" r "=") { ip = f[k]; sub(/^rail[0-9]+=/, "", ip) }
				ns = f[2]; sub(/^netns=/, "", ns)
				nss = nss sep ns; ips = ips sep ip; rl = rl sep r; sep = ","
			}
		}
		END { print "--netns " nss " --bind " ips " --rail " rl }' "$1"
}

coll_rails() { # allreduce --multi-rail with h3:rail1 at 20 of 200 Mbit/s
	local f=$work/mr.json r0 r1
	# shellcheck disable=SC2046 # the rank lists are words
	timeout 180 "$FABSCOPE" allreduce -n 8 $(ranks "$work/hosts" 4 2) --multi-rail -b 2M -e 2M -w 1 -i 2 \
		--json >"$f" 2>"$work/mr.err" || fail "the multi-rail allreduce failed: $(cat "$work/mr.err")"
	r0=$(jq -e '.[] | select(.group == "rail 0") | .metrics.busbw_gbps' "$f") || fail "no rail 0 record in $f"
	r1=$(jq -e '.[] | select(.group == "rail 1") | .metrics.busbw_gbps' "$f") || fail "no rail 1 record in $f"
	note coll-rail-ratio "$(ratio "$r0" "$r1")" "{\"rail0_busbw_gbps\": $r0, \"rail1_busbw_gbps\": $r1}"
	note coll-rail1-link "$(ratio "$r1" 0.02)" "{\"rail1_busbw_gbps\": $r1, \"link_gbps\": 0.02}"
}

# ---- the beds
"$pair" up -p "$pfx_p" -r 500mbit >/dev/null
"$fabric" up -p "$pfx_f" -r 200mbit >/dev/null
"$fabric" degrade -p "$pfx_f" h3:rail1 20mbit >/dev/null
"$fabric" hostfile -p "$pfx_f" >"$work/hosts"
# a black hole in both spines; no ICMP error rate limits in the routers (as t2300)
eval "$("$fabric" info -p "$pfx_f" | grep -E '^(LEAVES|SPINES)=')"
for n in $SPINES; do
	ip -n "$pfx_f-$n" route add blackhole 10.99.0.0/16
done
for n in $LEAVES $SPINES; do
	ip netns exec "$pfx_f-$n" sysctl -q -w net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_msgs_per_sec=100000 \
		net.ipv4.icmp_msgs_burst=10000 >/dev/null
done
spawn "$work/listener.log" "$fabric" exec -p "$pfx_f" h3 perl -MIO::Socket::INET -e '
	my $s = IO::Socket::INET->new(LocalAddr => $ARGV[0], LocalPort => $ARGV[1], Listen => 1024,
		ReuseAddr => 1) or die "listen: $@\n";
	sleep 3600' 10.100.2.3 5201
listener=$spawned
for _ in $(seq 100); do
	ip netns exec "$pfx_f-h3" ss -Hltn 'sport = :5201' | grep -q . && break
	kill -0 "$listener" 2>/dev/null || fail "the listener on h3 did not start: $(cat "$work/listener.log")"
	sleep 0.1
done

spawn "$work/bw-s.log" "$pair" exec -p "$pfx_p" b "$FABSCOPE" bw --server -p $bw_port
wait_pair "$pfx_p" $bw_port "$spawned"
spawn "$work/lat-s.log" "$pair" exec -p "$pfx_p" b taskset -c 0 "$FABSCOPE" lat --server -p $lat_port
wait_pair "$pfx_p" $lat_port "$spawned"

for ((round = 1; round <= ROUNDS; round++)); do
	bw_shaped 4
	bw_shaped 1
	iperf3_shaped
	lat_ab
	busy_refusal
	stall_giveup
	trace_blackhole
	trace_many
	coll_rails
done

# ---- the table and the records
mkdir -p "$out_dir"
: >"$jsonl"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
version=$("$FABSCOPE" version 2>/dev/null | head -n 1 | jq -R .) || true
[[ -n $version ]] || version=null

# row KEY RATIO_OF EXPECTED
fmt='%-16s %-46s %-22s %7s  %s\n'
echo "$prog: ci/netns-pair (500mbit, 1mbit) and ci/netns-fabric (200mbit, h3:rail1 20mbit), $(nproc) CPUs," \
	"$ROUNDS rounds; each ratio is of two figures of one run, the median of the rounds"
printf "$fmt" measure "ratio of" expected ratio range
row() {
	local key=$1 of=$2 expected=$3 line
	line=$(jq -cn --arg time "$now" --argjson version "$version" --arg measure "$key" --arg of "$of" \
		--arg expected "$expected" --argjson rounds "[${ratios[$key]// /,}]" \
		--argjson figures "[${figures[$key]}]" '
		($rounds | sort) as $s |
		{bench: "netns-bench", time: $time, fabscope_version: $version, measure: $measure,
		 ratio_of: $of, expected: $expected, rounds: $rounds, figures: $figures,
		 ratio: (if ($s | length) % 2 == 1 then $s[($s | length) / 2 | floor]
			 else ($s[($s | length) / 2 - 1] + $s[($s | length) / 2]) / 2 end),
		 ratio_min: $s[0], ratio_max: $s[-1]}')
	echo "$line" >>"$jsonl"
	jq -r --arg fmt "$fmt" '[.measure, .ratio_of, .expected, (.ratio * 1000 | round / 1000 | tostring),
		"\(.ratio_min * 1000 | round / 1000)-\(.ratio_max * 1000 | round / 1000)"] | @tsv' <<<"$line" |
		while IFS=$'\t' read -r m o e r g; do printf "$fmt" "$m" "$o" "$e" "$r" "$g"; done
}
row bw-shaped-q4 "aggregate bw / link, -q 4 -D 3" "0.95-1.0"
row bw-shaped-q1 "aggregate bw / link, -q 1 -D 3" "0.95-1.0"
row bw-window-q4 "shortest flow window / -D, -q 4" "<= 1, near 1"
row bw-window-q1 "flow window / -D, -q 1" "<= 1, near 1"
row iperf3-shaped "iperf3 received / link" "0.95-1.0"
row lat-p50-ab "p50 of run A / p50 of run B" "1.0"
row bw-busy-refusal "time to hear busy / --timeout 5 s" "~0.1 (0.5 s grace)"
row bw-stall-giveup "give-up after the run / 2 x --timeout" "1.0 and a little"
row trace-blackhole "elapsed / max-ttl x probes x (t + pause)" "0.75-1.0"
row trace-32-vs-1 "32 ports at once / 1 port alone" "near 1 (32: serial)"
row coll-rail-ratio "rail 0 busbw / rail 1 busbw" "~10 (200/20 Mbit/s)"
row coll-rail1-link "rail 1 busbw / its 20 Mbit/s link" "0.8-1.0, <= 1.05"
echo "$prog: records in ${jsonl#"$srcdir"/}"
