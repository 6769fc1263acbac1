#!/usr/bin/env bash
# bench/monitor-bench.sh - what one `fabscope monitor` agent costs: CPU and memory while it
# probes 64 peers at 10 probes/s each, against fping doing the same rate in the same run
#
#   bench/monitor-bench.sh [-d SECONDS] [-n PEERS] [-r RATE]     (run by `make bench`)
#
# On loopback, no root and no namespace: the agent under test (node a, 127.45.0.1) and PEERS
# (default 64) peer agents (127.45.1.1 ...), one leaf, each its own address; the peers probe at
# 0.01/s only, so that they answer a's probes and add almost nothing of their own.  With two
# CPUs or more, a runs on CPU 0 and the peers on CPU 1 (taskset), as peers on other machines would
# not preempt it: on loopback the sender's sendto carries the datagram into the peer's socket and
# wakes the peer, and a peer woken on a's own CPU takes it over at once (fping's ICMP echo is
# answered by the kernel, waking no one).  After 5 s of
# warm-up, a's CPU time (utime + stime of /proc/PID/stat) over -d SECONDS (default 60) is a's
# share of one core; its memory is VmRSS and VmHWM (the peak) of /proc/PID/status at the end.
# /metrics is scraped every 15 s meanwhile, as Prometheus would.  The run is checked: sent must
# be PEERS x RATE x its time (within 5 %), nothing lost.
# The peer measured against: fping -l -p 1000/RATE -t 1000 -q to the same PEERS addresses (ICMP
# echo, PEERS x RATE a second), its CPU over the same time, by the same method, in the same run:
# the ratio monitor / fping says what the agent's bookkeeping (16 source ports a peer, a
# histogram, HTTP) costs over bare probing.
# Goals (issue 44): under 1 % of a core and under 32 MiB.
#
# Output: a table on stdout and one JSON object in bench-out/monitor-bench.jsonl (rewritten).
# Exit codes: 0 ok, 1 a goal missed, 2 usage, 3 environment (the binary, fping or curl missing),
# 4 a measurement failed (an agent did not start, probes lost, the count off).
set -euo pipefail
export LC_ALL=C

prog=monitor-bench
synopsis="bench/monitor-bench.sh [-d SECONDS] [-n PEERS] [-r RATE]"
. "$(dirname "$0")/lib.sh"
DUR=60 N=64 RATE=10
while (($#)); do
	case $1 in
	-d) DUR=${2:-}; shift ;;
	-n) N=${2:-}; shift ;;
	-r) RATE=${2:-}; shift ;;
	-h | --help) bench_help ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done
[[ $DUR =~ ^[0-9]+$ && $DUR -ge 5 ]] || usage "-d: give at least 5 seconds"
[[ $N =~ ^[0-9]+$ && $N -ge 1 && $N -le 250 ]] || usage "-n: give 1 to 250 peers"
[[ $RATE =~ ^[0-9]+$ && $RATE -ge 1 && $RATE -le 100 ]] || usage "-r: give 1 to 100 probes a second"
[[ -x $FABSCOPE ]] || envfail "no binary at $FABSCOPE: run make first"
command -v fping >/dev/null || envfail "fping not found: apt-get install fping (ci/install-deps bench)"
command -v curl >/dev/null || envfail "curl not found: apt-get install curl"

work=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
out=$srcdir/bench-out
mkdir -p "$out"

PORT=47930 SPORTS=47931-47946 HTTP=9477
{
	echo "a rail0=127.45.0.1 leaf=bench"
	for ((i = 1; i <= N; i++)); do echo "p$i rail0=127.45.1.$i leaf=bench"; done
} >"$work/peers"

# ticks PID: utime + stime of PID, in clock ticks; uticks PID: utime alone
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
uticks() { awk '{ print $14 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

pin_a=() pin_p=()
if (($(nproc) >= 2)) && command -v taskset >/dev/null; then
	pin_a=(taskset -c 0) pin_p=(taskset -c 1)
fi
for ((i = 1; i <= N; i++)); do
	"${pin_p[@]}" "$FABSCOPE" monitor --peers "$work/peers" --node p$i --listen 127.45.1.$i:$HTTP --port $PORT \
		--sport-range $SPORTS --rate 0.01 --timeout 2 2>"$work/p$i.err" &
	pids+=($!)
done
exec "${pin_a[@]}" "$FABSCOPE" monitor --peers "$work/peers" --node a --listen 127.45.0.1:$HTTP --port $PORT \
	--sport-range $SPORTS --rate "$RATE" --timeout 2 2>"$work/a.err" &
apid=$!
pids+=($apid)
for ((t = 0; t < 100; t++)); do
	curl -sf http://127.45.0.1:$HTTP/healthz >/dev/null && break
	kill -0 $apid 2>/dev/null || { cat "$work/a.err" >&2; fail "the agent under test exited"; }
	sleep 0.1
done
((t < 100)) || fail "the agent under test did not answer /healthz in 10 s"
sleep 5	# warm-up: every peer up, the first probes answered

sent_of() { curl -sf http://127.45.0.1:$HTTP/metrics | awk -v w="$1" '$1 ~ "^fabscope_probe_" w "_total{" { s += $2 } END { print s + 0 }'; }
s0=$(sent_of sent) l0=$(sent_of lost) c0=$(ticks $apid) cu0=$(uticks $apid) t0=$(date +%s.%N)
for ((k = 0; k < DUR; k += 15)); do
	sleep $((DUR - k < 15 ? DUR - k : 15))
	curl -sf http://127.45.0.1:$HTTP/metrics >/dev/null || fail "a scrape of /metrics failed"
done
c1=$(ticks $apid) cu1=$(uticks $apid) t1=$(date +%s.%N)
s1=$(sent_of sent) l1=$(sent_of lost)
rss=$(awk '/^VmRSS/ { print $2 }' /proc/$apid/status) hwm=$(awk '/^VmHWM/ { print $2 }' /proc/$apid/status)
mon_cpu=$(awk -v a=$c0 -v b=$c1 -v h=$hz -v s=$t0 -v e=$t1 'BEGIN { printf "%.3f", 100 * (b - a) / h / (e - s) }')
mon_user=$(awk -v a=$cu0 -v b=$cu1 -v h=$hz -v s=$t0 -v e=$t1 'BEGIN { printf "%.3f", 100 * (b - a) / h / (e - s) }')
want=$(awk -v n=$N -v r=$RATE -v s=$t0 -v e=$t1 'BEGIN { printf "%d", n * r * (e - s) }')
sent=$((s1 - s0)) lost=$((l1 - l0))
awk -v s=$sent -v w=$want 'BEGIN { exit !(s >= 0.95 * w && s <= 1.05 * w) }' ||
	fail "the agent sent $sent probes in the window, not about $want ($N peers x $RATE/s)"
((lost == 0)) || fail "$lost probes lost on loopback: the measurement is not of a healthy run"

# the peer measured against: fping at the same rate to the same addresses, in the same run
targets=$(for ((i = 1; i <= N; i++)); do echo 127.45.1.$i; done)
exec "${pin_a[@]}" fping -l -q -p $((1000 / RATE)) -t 1000 $targets >"$work/fping.out" 2>&1 &
fpid=$!
pids+=($fpid)
sleep 5
kill -0 $fpid 2>/dev/null || { cat "$work/fping.out" >&2; envfail "fping did not run (it needs ICMP sockets: root, or net.ipv4.ping_group_range)"; }
f0=$(ticks $fpid) fu0=$(uticks $fpid) u0=$(date +%s.%N)
sleep "$DUR"
f1=$(ticks $fpid) fu1=$(uticks $fpid) u1=$(date +%s.%N)
kill $fpid
fping_cpu=$(awk -v a=$f0 -v b=$f1 -v h=$hz -v s=$u0 -v e=$u1 'BEGIN { printf "%.3f", 100 * (b - a) / h / (e - s) }')
fping_user=$(awk -v a=$fu0 -v b=$fu1 -v h=$hz -v s=$u0 -v e=$u1 'BEGIN { printf "%.3f", 100 * (b - a) / h / (e - s) }')
ratio=$(awk -v m=$mon_cpu -v f=$fping_cpu 'BEGIN { if (f > 0) printf "%.2f", m / f; else print "inf" }')

printf '%-34s %12s %12s %8s\n' "what ($N peers x $RATE/s, ${DUR} s)" "monitor" "fping" "ratio"
printf '%-34s %11s%% %11s%% %8s\n' "CPU, % of one core" "$mon_cpu" "$fping_cpu" "$ratio"
printf '%-34s %11s%% %11s%%\n' "  of which user time" "$mon_user" "$fping_user"
printf '%-34s %8.1f MiB %12s\n' "memory, VmRSS at the end" "$(awk -v k=$rss 'BEGIN { print k / 1024 }')" "-"
printf '%-34s %8.1f MiB %12s\n' "memory, VmHWM (peak)" "$(awk -v k=$hwm 'BEGIN { print k / 1024 }')" "-"
printf '%-34s %12s\n' "probes sent in the window" "$sent"
printf '%-34s %12s\n' "probes lost" "$lost"
printf '{"bench":"monitor","peers":%d,"rate":%d,"seconds":%s,"monitor_cpu_pct":%s,"monitor_user_pct":%s,"fping_cpu_pct":%s,"fping_user_pct":%s,"ratio":"%s","rss_kib":%d,"hwm_kib":%d,"sent":%d,"lost":%d}\n' \
	$N $RATE "$DUR" "$mon_cpu" "$mon_user" "$fping_cpu" "$fping_user" "$ratio" "$rss" "$hwm" $sent $lost >"$out/monitor-bench.jsonl"
rc=0
awk -v c=$mon_cpu 'BEGIN { exit !(c < 1.0) }' || { echo "# goal missed: $mon_cpu % of a core, not under 1 %"; rc=1; }
((hwm < 32768)) || { echo "# goal missed: a peak of $((hwm / 1024)) MiB, not under 32 MiB"; rc=1; }
((rc)) || echo "# goals met: under 1 % of a core and under 32 MiB"
exit $rc
