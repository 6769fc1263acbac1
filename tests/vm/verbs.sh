#!/usr/bin/env bash
# tests/vm/verbs.sh - the verbs checks, run INSIDE the Soft-RoCE VM by
# tests/t3010-vm-verbs.t (ci/rxe-vm -n 4).  One boot runs everything; each
# check leaves NAME.out, NAME.err and NAME.rc in $RXE_VM_OUT for the host
# side to assert on.  Nodes: rxeI on nI, 10.1.0.I (see ci/rxe-vm --help).
set -u
F=${FABSCOPE:?}
OUT=${RXE_VM_OUT:?}
T=/tmp/verbs-checks
mkdir -p "$T"
SRV=10.1.0.1
# The ASan tier runs the same checks with fewer repeats (t3010 passes these; tests/README, "The
# ASan tier"): the QP counts of the op matrix, the ping-pongs of lat, the messages per size of
# the sweeps
QPS=${VERBS_QPS:-1 4 16}
LAT_N=${VERBS_LAT_N:-2000}
SWEEP_N=${VERBS_SWEEP_N:-8}
SWEEP_READ_N=${VERBS_SWEEP_READ_N:-4}
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; cp -r "$T"/. "$OUT"/' EXIT

# run NAME CMD...: run a check with a time limit (KILL 10 s after the TERM, should it not end),
# keep its output and status.  $T comes back only when this script ends; progress.txt goes to
# the share as each check starts and ends, so that a guest the host's limit killed still says
# which check it was in and how long the others took
run() {
	local name=$1 t0=$SECONDS rc
	shift
	echo "start $name" >>"$OUT/progress.txt"
	timeout -k 10 150 "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	echo $rc >"$T/$name.rc"
	echo "$name $((SECONDS - t0))" >>"$T/times.txt"	# seconds per check, for trimming
	echo "end $name $((SECONDS - t0)) s, exit $rc" >>"$OUT/progress.txt"
}

# client NAME ARGS...: a verbs client on node 2 towards the server on node 1.
# No --qp-timeout but for the READs of 1 MiB and more (22, below): on rxe the
# default local ACK timeout is 18 (1 s, see transport/verbs-qp.c).  With 14 (67 ms) under qemu TCG on a busy host, writes
# and sends of 4-16 QPs failed now and then with "remote invalid request
# error", and READs of 1 MiB with 4 QPs or 64 KiB with 16 QPs set off storms
# of retransmitted READ requests (rxe replays every response) that never
# drained or broke QPs without an error completion.  The counters of every
# rxe device are kept in rxe-counters.txt for the post-mortem.
client() {
	local name=$1
	shift
	run "$name" "$F" "$@" -t verbs -d rxe2 --bind 10.1.0.2 --timeout 20
}

wait_port() {
	for _ in $(seq 100); do
		ss -ltnH "sport = :$1" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

run devices "$F" devices --json
run devices-text "$F" devices
# a rail map: by device; by device/port with a plane, which wins over the device's line after
# it; a port that is not there; a device left out; a device that is not here
printf '# rails\nrxe1 rail=7\nrxe2/1 rail=6 plane=1\nrxe2 rail=2\nrxe3 rail=5 plane=0\nrxe1/2 rail=8\nnosuch0 rail=9\n' \
	>"$T/rails.map"
run devices-map "$F" devices --json --rail-map "$T/rails.map"
FABSCOPE_RAIL_MAP="$T/rails.map" run devices-map-env "$F" devices

"$F" bw --server -t verbs -d rxe1 --bind $SRV -p 18600 --timeout 20 2>"$T/bw-server.log" &
pids+=($!)
"$F" lat --server -t verbs -d rxe1 --bind $SRV -p 18601 --timeout 20 2>"$T/lat-server.log" &
pids+=($!)
wait_port 18600 && wait_port 18601 || echo "servers did not start" >"$T/setup.err"

# every op with 1, 4 and 16 QPs, 64 KiB messages; and READs of 1 MiB with 4
# QPs: with the 67 ms ACK timeout these two READ cases (64 KiB x 16 QPs,
# 1 MiB x 4 QPs) stalled or broke QPs (see client above)
for op in write read send write_imm; do
	for q in $QPS; do
		client "bw-$op-q$q" bw $SRV -p 18600 --op $op -q $q -s 64K -n 100 --json -v
	done
done
# READs of 1 MiB and more with --qp-timeout 22 (17 s): a READ's response is 1,024 packets a MiB,
# which a guest starved of the host's CPU (CI's busy machine) took longer to send than rxe's 1 s
# default, so the requester asked again, and the responder replayed the whole READ each time
# (duplicate_request 20,883 in rxe-counters.txt) until the run gave up: "the last messages ...
# did not complete within 40 s of the run's end"
client bw-read-1m-q4 bw $SRV -p 18600 --op read -q 4 -s 1M -n 20 --qp-timeout 22 --json -v
client bw-read-1m-q4-timed bw $SRV -p 18600 --op read -q 4 -s 1M -D 2 --qp-timeout 22 --json
# a timed run over 4 QPs with a spinning client: rxe works inside the poster's system call
client bw-write-q4-timed bw $SRV -p 18600 --op write -q 4 -s 64K -D 2 --poll busy --json
# message sizes: 1 byte, then the sweep 2 B .. 8 MiB
client bw-1byte bw $SRV -p 18600 -s 1 -n 500 --json
client bw-sweep bw $SRV -p 18600 -a -n "$SWEEP_N" --json
client bw-sweep-read bw $SRV -p 18600 --op read -a -n "$SWEEP_READ_N" --qp-timeout 22 --json
client bw-bidir bw $SRV -p 18600 -b -q 2 -n 200 --json
client bw-bidir-send bw $SRV -p 18600 -b --op send -q 2 -n 200 --json
client bw-imm bw $SRV -p 18600 --op send -q 2 -s 64 -n 300 --inline 64 --json
# post lists, CQ moderation, adaptive polling, a path MTU below the ports'
client bw-post-list bw $SRV -p 18600 -q 2 -s 4K -n 400 --post-list 8 --cq-mod 16 --poll adaptive --json
client bw-mtu bw $SRV -p 18600 -s 64K -n 50 -m 512 --json
# --poll busy WRITEs for 3 s: the server, the target of one-sided WRITEs, has
# nothing to poll and must sleep.  Its CPU time (clock ticks) is taken over 1.5 s
# of the run, from 0.5 s after it logged the session (its set-up, long and of a
# length that follows the host's speed under TCG, comes before that line): a
# server that spun would take about every tick of that time, one that sleeps
# next to none, however busy the host is.  The reads of the log are builtins.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
busy_since=$(wc -l <"$T/bw-server.log")
session_logged() { # the server's line for the session after line $busy_since
	local line n=0
	while IFS= read -r line; do
		((++n > busy_since)) && [[ $line == *"client "*"): verbs write, "* ]] && return 0
	done <"$T/bw-server.log"
	return 1
}
client bw-busy-write bw $SRV -p 18600 --op write -s 64K -D 3 --poll busy --json &
busy_client=$!
for _ in $(seq 200); do
	session_logged && break
	sleep 0.1
done
sleep 0.5
t0=$(cpu_ticks "${pids[0]}") w0=$(date +%s%N)
sleep 1.5
echo "$t0 $(cpu_ticks "${pids[0]}") $w0 $(date +%s%N) $(getconf CLK_TCK)" >"$T/bw-busy-server-cpu.txt"
session_logged || echo "the server logged no session for bw-busy-write" >>"$T/bw-busy-server-cpu.err"
wait $busy_client
# latency, both ops, percentiles
client lat-send lat $SRV -p 18601 -n "$LAT_N" --json
client lat-write lat $SRV -p 18601 -n "$LAT_N" --op write --json
# (sweeps of few pings: a ping-pong of 8 MiB takes most of a second each way under TCG)
client lat-sweep lat $SRV -p 18601 -a -n 4 --json
client lat-read lat $SRV -p 18601 -n "$LAT_N" --op read --json
# WRITE ping-pongs against a server held 300 ms after each "ready": the client's first WRITE
# lands before the server starts the size's loop, and must not be wiped by it (it was, when
# the server cleared its buffer after "ready": no answer, exit 4)
FABSCOPE_TEST_READY_DELAY_MS=300 "$F" lat --server -t verbs -d rxe1 --bind $SRV -p 18604 \
	--timeout 20 2>"$T/lat-held-server.log" &
pids+=($!)
wait_port 18604 || echo "the held lat server did not start" >>"$T/setup.err"
client lat-write-held lat $SRV -p 18604 --op write -a -n 3 --json

# the wire: UDP source port of each QP and the DSCP of --tclass, seen on n2;
# once with the flow labels the kernel derives from the QP numbers, once
# with ours (--flow-label)
# (the packets from node 2; with both=1 in its environment, both directions)
capture() { # NAME CLIENT-ARGS...
	local name=$1 tpid filter='udp dst port 4791 and src host 10.1.0.2'
	shift
	[ "${both:-}" = 1 ] && filter='udp dst port 4791'
	# the headers only (Ethernet, IP, UDP, BTH: 54 bytes): the files come back small, and
	# tshark reads them on the host, ten times faster than under TCG
	tcpdump -i n2 -nn -U -s 96 -w "$T/$name.pcap" "$filter" 2>"$T/$name-tcpdump.err" &
	tpid=$!
	sleep 1
	client "$name" bw $SRV -p 18600 "$@" --json
	sleep 1
	kill -INT $tpid
	wait $tpid
	tcpdump -r "$T/$name.pcap" -nn -v 2>/dev/null >"$T/$name.txt"
}
capture pcap-qpn -q 4 -s 4K -n 200 --tclass 96
capture pcap-fl -q 4 -s 4K -n 200 --flow-label 1000 --tclass 184
# --sport: the ports themselves, on both ends of each flow (the server's QPs send the ACKs
# and the READ responses), so this capture takes both directions; 49152 is the one port
# whose flow label needs a high bit (0x4001)
both=1 capture pcap-sport -q 4 -s 4K -n 200 --sport 50000
both=1 capture pcap-sport-read --op read -q 2 -s 64K -n 50 --sport 49152
# WRITEs with immediate data on the wire (the opcodes tshark reads: RC RDMA WRITE ... with
# immediate), against plain WRITEs
capture pcap-imm --op write_imm -q 2 -s 4K -n 50

# the device: by netdev, by address, by --bind alone, and by the route to HOST (a server on
# rxe3, and a rule that sends unbound traffic to 10.1.0.3 out of n4 from 10.1.0.4: the
# device is rxe4, where the first active one is rxe1); --ib-port that the netdev is not on
"$F" bw --server -t verbs -d rxe3 --bind 10.1.0.3 -p 18606 --timeout 20 2>"$T/bw3-server.log" &
pids+=($!)
wait_port 18606 || echo "the rxe3 server did not start" >>"$T/setup.err"
run sel-netdev "$F" bw $SRV -p 18600 -t verbs -d n2 -n 10 --json
run sel-ip "$F" bw $SRV -p 18600 -t verbs -d 10.1.0.2 -n 10 --json
run sel-bind "$F" bw $SRV -p 18600 -t verbs --bind 10.1.0.4 -n 10 --json
ip rule add pref 500 to 10.1.0.3 iif lo lookup 104	# unbound, to 10.1.0.3: from 10.1.0.4, via n4
run sel-route "$F" bw 10.1.0.3 -p 18606 -t verbs -n 10 --json
ip rule del pref 500
run err-ibport "$F" bw $SRV -p 18600 -t verbs -d n2 --ib-port 2 -n 10
run err-ibport-dev "$F" bw $SRV -p 18600 -t verbs -d rxe2 --ib-port 2 -n 10

# errors that can be provoked here
run err-nodev "$F" bw $SRV -p 18600 -t verbs -d nosuch0
# more inline data than rxe takes (its limit is below 4096); a path MTU the links do not carry
client err-inline bw $SRV -p 18600 -s 64 --inline 4096 -n 10
client err-mtu bw $SRV -p 18600 -m 2048 -n 10
# a server that claims a RoCE v1 GID, and one whose GID no host has (a proxy rewrites the
# connection blob of the bw server's setup message): the GID type refused before any QP is
# connected; the move to RTR fails, and says so with its errno
perl "$(dirname "$0")/blob-proxy.pl" 18610 $SRV 18600 gid_type=roce-v1 2>"$T/proxy1.log" &
pids+=($!)
perl "$(dirname "$0")/blob-proxy.pl" 18611 $SRV 18600 gid=::ffff:10.1.0.9 2>"$T/proxy2.log" &
pids+=($!)
wait_port 18610 && wait_port 18611 || echo "the blob proxies did not start" >>"$T/setup.err"
client err-gidtype bw $SRV -p 18610 -n 10
client err-rtr bw $SRV -p 18611 -n 10
client err-gid bw $SRV -p 18600 -x 200 -n 10
client err-gid-empty bw $SRV -p 18600 -x 5 -n 10
client err-family bw $SRV -p 18600 -x 0 -n 10 # IPv6 link-local, IPv4 on the server
# a port no flow label gives, on a device that is no mlx5
client err-sport bw $SRV -p 18600 --sport 4000 -n 10
grep . /sys/class/infiniband/rxe2/ports/1/gid_attrs/types/* >"$T/gid-types.txt" 2>&1
ip link set n3 down
sleep 1
run err-portdown "$F" bw $SRV -p 18600 -t verbs -d rxe3 --timeout 20
ip link set n3 up
run err-memlock setpriv --reuid=65534 --regid=65534 --clear-groups -- \
	bash -c "ulimit -l 64; exec $F bw $SRV -p 18600 -t verbs -d rxe2 --bind 10.1.0.2 -s 8M -n 2 --timeout 20"
# the server's locked-memory limit too low: the client is told why, not "went away"
setpriv --reuid=65534 --regid=65534 --clear-groups -- bash -c \
	"ulimit -l 64; exec $F bw --server -t verbs -d rxe1 --bind $SRV -p 18605 --timeout 20" \
	2>"$T/memlock-server.log" &
pids+=($!)
wait_port 18605 || echo "the memlock server did not start" >>"$T/setup.err"
client err-memlock-server bw $SRV -p 18605 -s 8M -n 2
run err-unreach "$F" bw 10.1.0.9 -p 18600 -t verbs -d rxe2 --bind 10.1.0.2 --timeout 2
# a silent peer: the server stops (SIGSTOP) in the middle of a ping-pong
"$F" lat --server -t verbs -d rxe1 --bind $SRV -p 18602 --timeout 20 2>"$T/stop-server.log" &
spid=$!
pids+=($spid)
wait_port 18602
( sleep 4; kill -STOP $spid ) &
run err-silent "$F" lat $SRV -p 18602 -D 10 -t verbs -d rxe2 --bind 10.1.0.2 --timeout 3 --json
kill -CONT $spid
# a peer that never reports its results: a -b server stopped mid-run (its
# QPs still answer in the kernel, so the client's own writes complete)
"$F" bw --server -t verbs -d rxe1 --bind $SRV -p 18603 --timeout 20 2>"$T/stop2-server.log" &
spid=$!
pids+=($spid)
wait_port 18603
( sleep 3; kill -STOP $spid ) &
run err-noresults "$F" bw $SRV -p 18603 -b -D 5 -t verbs -d rxe2 --bind 10.1.0.2 --timeout 2 --json
kill -CONT $spid
# the kernel's RDMA modules gone is tested on the host (t1010)
for d in /sys/class/infiniband/rxe*; do
	for c in "$d"/ports/1/hw_counters/*; do
		[ -r "$c" ] && echo "${d##*/} ${c##*/} $(cat "$c")"
	done
done >"$T/rxe-counters.txt" 2>/dev/null
cat /proc/net/softnet_stat >"$T/softnet_stat.txt" 2>/dev/null	# column 2: backlog drops
# last: no RDMA device at all (the kernel has RDMA; every rxe link is gone).  The servers go
# first: a device some process still holds open cannot be deleted.  A server that has not ended
# 20 s after its TERM is named in setup.err (a failure) and killed, not waited for
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null; done
for _ in $(seq 200); do
	left=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left=1; done
	((left)) || break
	sleep 0.1
done
for p in "${pids[@]}"; do
	kill -0 "$p" 2>/dev/null && { echo "process $p ($(tr '\0' ' ' </proc/$p/cmdline)) had not ended 20 s after its TERM" >>"$T/setup.err"; kill -KILL "$p"; }
	wait "$p" 2>/dev/null
done
pids=()
for d in /sys/class/infiniband/rxe*; do timeout 20 rdma link delete "${d##*/}"; done
run err-nodevices "$F" bw $SRV -p 18600 -t verbs
run err-nodevices-list "$F" devices
echo done >"$T/finished"
