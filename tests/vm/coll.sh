#!/usr/bin/env bash
# tests/vm/coll.sh - fabscope allreduce and alltoall over verbs, run INSIDE the Soft-RoCE VM by
# tests/t3030-vm-collectives.t (ci/rxe-vm -n 8).  One boot runs everything; each run leaves
# NAME.out (the records, --json), NAME.err, NAME.rc, NAME.time (start and end, guest clock) and NAME.c0/NAME.c1
# (every rxe device's hw_counters before and after, `grep -r` lines) in $RXE_VM_OUT, for the
# host side to assert on.  Nodes: rxeI on nI, 10.1.0.I (see ci/rxe-vm --help); rank i of a run
# gets rxe(i+1) and 10.1.0.(i+1) from the per-rank lists --device and --bind.
#
# Runs:
#   ar-ring-N ar-rhd-N a2a-pairwise-N a2a-direct-N   N = 2..8 ranks (as many as the VM has
#        nodes): the size sweep SWEEP, sizes that do not divide by N, 16 KiB chunks
#   bad-ALGO         5 ranks, one element spoiled on its way to rank 3 (--corrupt 3)
#   flows2 flows3    5 ranks, two (three) QPs per peer and a shallow queue
#   nobind           3 ranks given devices but no addresses: the endpoints they record
#   wire-ring wire-direct   4 ranks while tcpdump listens on br0 (the switch): which node
#        sent RoCEv2 packets to which (NAME.wire: "SRC DST UDP-LENGTH" per packet)
# Under qemu TCG every program started costs 50-100 ms: nothing here forks in a loop.
set -u
F=${FABSCOPE:?}
OUT=${RXE_VM_OUT:?}
NODES=${RXE_VM_NODES:?}
T=/tmp/coll-checks
mkdir -p "$T"
trap 'cp -r "$T"/. "$OUT"/' EXIT

# Seven sizes from 4 B (one element: fewer than the ranks; alltoall skips it) to
# 2.6 MB by a factor that is not a power of two (4, 37, 345, 3217, 29922, 278275, 2587960 B
# before allreduce rounds to whole floats and alltoall to multiples of 4N): segments and
# blocks of unequal lengths.  16 KiB chunks: a ring segment of the largest size travels in
# 20 (8 ranks) to 79 (2 ranks) messages, a last one shorter.  -w 1 -i 2: three runs of a size
# back to back on the same queues, then the next size with another message layout.
# The ASan tier (t3030 passes these) sweeps fewer rank counts, one iteration a size
SWEEP=(-b 4 -e 3000000 -f 9.3 --chunk 16K -w 1 -i "${COLL_ITERS:-2}")
MAXN=$((NODES < 8 ? NODES : 8))
RANKS=${COLL_RANKS:-$(seq -s " " 2 "$MAXN")}

counters() { grep -r . /sys/class/infiniband/rxe*/ports/1/hw_counters/ >"$1" 2>/dev/null; }

# coll NAME N ARGS...: fabscope ARGS with N ranks over verbs, one rxe device and address each.
# --qp-timeout 18 (1 s, as tests/vm/verbs.sh: under TCG an ACK can take longer than the
# default 67 ms); --timeout 60: a busy 2-core host slows TCG a lot, and 8 ranks share 2 vCPUs.
coll() {
	local name=$1 n=$2 i devs="" binds="" t0
	shift 2
	for ((i = 1; i <= n; i++)); do
		devs+=${devs:+,}rxe$i
		binds+=${binds:+,}10.1.0.$i
	done
	counters "$T/$name.c0"
	t0=$EPOCHREALTIME
	timeout 200 "$F" "$@" -n "$n" -t verbs --device "$devs" --bind "$binds" \
		--qp-timeout 18 --timeout 60 --json >"$T/$name.out" 2>"$T/$name.err"
	echo $? >"$T/$name.rc"
	counters "$T/$name.c1"
	echo "${t0} ${EPOCHREALTIME}" >"$T/$name.time"
}

for n in $RANKS; do
	coll ar-ring-$n $n allreduce "${SWEEP[@]}"
	coll ar-rhd-$n $n allreduce -A rhd "${SWEEP[@]}"
	coll a2a-pairwise-$n $n alltoall "${SWEEP[@]}"
	coll a2a-direct-$n $n alltoall -A direct "${SWEEP[@]}"
done
echo "$MAXN" >"$T/maxn"

# the data check must be able to fail: one element spoiled on its way to rank 3 of 5
coll bad-ring 5 allreduce -b 1000 -e 100000 -f 10 -w 1 -i 2 --corrupt 3
coll bad-rhd 5 allreduce -A rhd -b 1000 -e 100000 -f 10 -w 1 -i 2 --corrupt 3
coll bad-pairwise 5 alltoall -b 1000 -e 100000 -f 10 -w 1 -i 2 --corrupt 3
coll bad-direct 5 alltoall -A direct -b 1000 -e 100000 -f 10 -w 1 -i 2 --corrupt 3

# several QPs per peer (chunk k on QP k mod q: each QP's RECVs must match its SENDs in
# order), and queues so shallow that every message waits for the one before
coll flows2 5 allreduce -q 2 --tx-depth 2 -b 4 -e 1000000 -f 9.3 --chunk 16K -w 1 -i 2
coll flows3 5 alltoall -A direct -q 3 --tx-depth 1 -b 4 -e 1000000 -f 9.3 --chunk 16K -w 1 -i 2

# a device paired with another device's address: refused (exit 3), not run from the wrong GID
timeout 100 "$F" allreduce -n 2 -t verbs --device rxe1,rxe2 --bind 10.1.0.2,10.1.0.1 -b 64K -w 0 -i 1 \
	--qp-timeout 18 --timeout 30 --json >"$T/swapped.out" 2>"$T/swapped.err"
echo $? >"$T/swapped.rc"

# no --bind: the ranks meet over loopback; the records must still name each rank's device,
# GID and the GID's address (the data path's), not the control connection's 127.0.0.1
timeout 100 "$F" allreduce -n 3 -t verbs --device rxe1,rxe2,rxe3 -b 64K -w 0 -i 1 \
	--qp-timeout 18 --timeout 30 --json >"$T/nobind.out" 2>"$T/nobind.err"
echo $? >"$T/nobind.rc"

# the wire: who sends RoCEv2 to whom, seen on the bridge every node's traffic crosses
wire() { # NAME ARGS...
	local name=$1 tpid
	shift
	tcpdump -i br0 -nn -s 96 --immediate-mode -U -w "$T/$name.pcap" 'udp dst port 4791' \
		2>"$T/$name-tcpdump.err" &
	tpid=$!
	for _ in $(seq 50); do
		grep -q "listening on" "$T/$name-tcpdump.err" && break
		sleep 0.1
	done
	coll "$name" 4 "$@"
	kill -INT $tpid
	wait $tpid
	# "IP 10.1.0.1.49153 > 10.1.0.2.4791: UDP, length 1052" -> "10.1.0.1 10.1.0.2 1052"
	tcpdump -r "$T/$name.pcap" -nn 2>/dev/null |
		sed -nE 's/.* IP ([0-9.]+)\.[0-9]+ > ([0-9.]+)\.4791: UDP, length ([0-9]+).*/\1 \2 \3/p' >"$T/$name.wire"
	rm -f "$T/$name.pcap"
}
wire wire-ring allreduce -b 64K -e 64K --chunk 16K -w 0 -i 1
wire wire-direct alltoall -A direct -b 64K -e 64K --chunk 16K -w 0 -i 1

cat /proc/loadavg >"$T/loadavg"
echo ok >"$T/finished"
