#!/usr/bin/env bash
# tests/vm/pcap.sh - real RoCEv2 captures with induced loss, run INSIDE the Soft-RoCE VM by
# tests/t3020-vm-pcap.t (ci/rxe-vm -n 2).  For each op (write, read, send) a short bw run
# from rxe2 (n2, 10.1.0.2) to a server on rxe1 (n1, 10.1.0.1) is captured on n2 while netem
# drops packets on the bridge's ports; one clean run (write, no loss) is the control.  Each
# run leaves NAME.pcap, NAME.out, NAME.err, NAME.rc, NAME-tcpdump.err, NAME-netem.txt (what
# netem dropped) and NAME-counters.txt (rxe's counters after it) in $RXE_VM_OUT.
# PCAP_LOSS (netem's loss, default 2%) may be set with ci/rxe-vm -e.
#
# Where the loss is: netem on n1b's egress drops requests on their way from the bridge to n1,
# netem on n2b's egress drops responses (ACKs, NAKs, READ responses) on their way to n2.  The
# capture on n2 is upstream of the first and downstream of the second: it holds every request
# rxe2 sent, resends included (a resend is a PSN seen before: what `fabscope pcap` calls a
# duplicate), and only the responses that survived (a lost READ response is a PSN gap).  netem
# on n2 itself would drop requests before tcpdump sees them (a veth's taps see a packet when
# the qdisc lets it go), and the capture would show gaps instead of the resends' history.
set -u
F=${FABSCOPE:?}
OUT=${RXE_VM_OUT:?}
T=/tmp/pcap-checks
mkdir -p "$T"
SRV=10.1.0.1
LOSS=${PCAP_LOSS:-2%}
pids=()
noloss() { tc qdisc del dev n1b root 2>/dev/null; tc qdisc del dev n2b root 2>/dev/null; }
cleanup() {
	local p
	noloss
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	cp -r "$T"/. "$OUT"/
}
trap cleanup EXIT

wait_port() {
	for _ in $(seq 100); do
		ss -ltnH "sport = :$1" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

counters() {
	for d in /sys/class/infiniband/rxe*; do
		for c in "$d"/ports/1/hw_counters/*; do
			[ -r "$c" ] && echo "${d##*/} ${c##*/} $(cat "$c")"
		done
	done
}

# one NAME OP LOSS QP-TIMEOUT: a bw run of OP captured on n2, with netem dropping LOSS (or
# none: "") each way.  A fresh server per run: a QP that rxe failed does not outlive its run.
#   -q 2 -s 4K -n 80 --tx-depth 8: 160 messages of 4 packets (path MTU 1024), at most 32
#   PSNs of a QP in flight, so that a go-back-N resend is a few dozen packets and the file
#   stays small (snap length 256: the headers).
#   --qp-timeout 14 (67 ms, the default) with loss: a lost last request or a lost last ACK
#   is resent after the local ACK timeout (rxe's retransmit timer); a lost request in the
#   middle is resent at once, when the responder's NAK (PSN sequence error) arrives; 7
#   retries.  The clean control gets 18 (1 s): under TCG an ACK now and then takes longer
#   than 67 ms, and rxe resent a few packets of a run without loss (completer_retry_err 1).
port=18600
one() {
	local name=$1 op=$2 loss=$3 qpt=$4 tpid spid
	port=$((port + 1))
	"$F" bw --server -t verbs -d rxe1 --bind $SRV -p $port --timeout 20 2>"$T/$name-server.log" &
	spid=$!
	pids+=("$spid")
	wait_port $port || echo "server did not start" >>"$T/$name-server.log"
	tcpdump -i n2 -nn -s 256 --immediate-mode -U -w "$T/$name.pcap" 'udp port 4791' \
		2>"$T/$name-tcpdump.err" &
	tpid=$!
	for _ in $(seq 50); do
		grep -q "listening on" "$T/$name-tcpdump.err" && break
		sleep 0.1
	done
	if [[ -n $loss ]]; then
		tc qdisc add dev n1b root netem loss "$loss" &&
			tc qdisc add dev n2b root netem loss "$loss" || echo "netem failed" >"$T/$name-netem.err"
	fi
	timeout 150 "$F" bw $SRV -p $port --op "$op" -q 2 -s 4K -n 80 --tx-depth 8 --json -v \
		-t verbs -d rxe2 --bind 10.1.0.2 --timeout 20 --qp-timeout "$qpt" \
		>"$T/$name.out" 2>"$T/$name.err"
	echo $? >"$T/$name.rc"
	for d in n1b n2b; do
		echo "dev $d"
		tc -s qdisc show dev $d
	done >"$T/$name-netem.txt" 2>&1
	noloss
	sleep 1
	kill -INT $tpid
	wait $tpid
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
	counters >"$T/$name-counters.txt" 2>/dev/null
}

counters >"$T/start-counters.txt" 2>/dev/null
one clean-write write "" 18
for op in write read send; do
	one "loss-$op" $op "$LOSS" 14
done
echo ok >"$T/finished"
