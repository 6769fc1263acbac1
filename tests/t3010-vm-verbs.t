#!/usr/bin/env bash
test_description='verbs in the Soft-RoCE VM: every op with 1, 4 and 16 QPs, sizes 1 B to 8 MiB,
bidirectional, latency percentiles, devices, the UDP source port and DSCP of each QP on the wire,
and each bring-up error that rxe lets us provoke (one VM boot runs tests/vm/verbs.sh)'
. "$(dirname "$0")/test-lib.sh"

# one Soft-RoCE guest at a time: qemu TCG emulates 2 vCPUs on the host's cores, and two guests
# at once would starve each other's time limits
test_holds vm
test_cpus 2

test_lazy_prereq VM '"$SRCDIR/ci/rxe-vm" --check'
test_require_in_ci VM TEST_HOOKS

R=$TRASH_DIRECTORY/vm

# What the guest repeats (tests/vm/verbs.sh): the ASan tier runs every check with fewer QPs in
# the op matrix (1 and 4: 16 reach no line 4 does not), fewer ping-pongs and fewer messages per
# size of the sweeps, so that its guest fits the time limit on a busy CI machine beside the
# plain tier's (tests/README, "The ASan tier")
if test "${FABSCOPE_TEST_TIER:-}" = asan; then
	QPS="1 4" LAT_N=200 SWEEP_N=2 SWEEP_READ_N=2
else
	QPS="1 4 16" LAT_N=2000 SWEEP_N=8 SWEEP_READ_N=4
fi

# ran NAME CODE: the guest's check NAME exited CODE; else say how, with its stderr's last lines
ran() {
	local rc
	rc=$(cat "$R/$1.rc" 2>/dev/null) ||
		{ echo "$1: the guest did not run it (the VM's time limit? see vm.err)"; return 1; }
	test "$rc" = "$2" && return 0
	echo "$1: exit $rc, not $2; the last lines of its stderr:"
	tail -n 20 "$R/$1.err"
	return 1
}
# one_line NAME WORDS: the check's stderr is one line that says WORDS
one_line() {
	test "$(wc -l <"$R/$1.err")" = 1 || { echo "$1: stderr is not one line:"; cat "$R/$1.err"; return 1; }
	grep -qF -- "$2" "$R/$1.err" || { echo "$1: '$2' not in: $(cat "$R/$1.err")"; return 1; }
}
agg() { jq -e "[.[] | select(.scope == \"aggregate\")] | $2" "$R/$1.out" >/dev/null ||
	{ echo "$1: not true: $2"; jq -c '.[] | select(.scope == "aggregate") | {msg_size_bytes, flows, dir, metrics}' "$R/$1.out"; return 1; }; }
# the kernel's rdma_flow_label_to_udp_sport()
fl_sport() { echo $(( ((($1 & 0x3fff) ^ (($1 & 0xFC000) >> 14)) | 0xC000) )); }

test_expect_success VM 'boot the VM with 4 rxe nodes and run the verbs checks' '
	{ "$SRCDIR/ci/rxe-vm" -n 4 -t 900 -o "$R" -e FABSCOPE="$FABSCOPE" -e VERBS_QPS="$QPS" \
		-e VERBS_LAT_N=$LAT_N -e VERBS_SWEEP_N=$SWEEP_N -e VERBS_SWEEP_READ_N=$SWEEP_READ_N -- \
		bash "$SRCDIR/tests/vm/verbs.sh" >vm.out 2>vm.err && test -f "$R/finished" ||
		{ echo "the guest did not finish; vm.err ends:"; tail -n 15 vm.err
		  echo "its checks as they went (progress.txt, the last 8 and the slowest 8):"
		  tail -n 8 "$R/progress.txt"; grep "^end " "$R/progress.txt" | sort -k3 -n -r | head -8
		  false; }; } &&
	echo "the slowest checks (seconds):" && sort -k2 -n -r "$R/times.txt" | head -12 &&
	test "$(grep -c "^end " "$R/progress.txt")" = "$(wc -l <"$R/times.txt")" &&
	{ test ! -s "$R/setup.err" || { echo "the checks set-up failed:"; cat "$R/setup.err"; false; }; }
'

test_expect_success VM 'devices: 4 rxe devices, active, RoCE v2 GIDs with their addresses, rails inferred' '
	ran devices 0 &&
	jq -e ".devices | length == 4" "$R/devices.out" &&
	for i in 1 2 3 4; do
		jq -e --arg d rxe$i --arg ip 10.1.0.$i --arg nd n$i --argjson r $((i - 1)) \
			".devices[] | select(.device == \$d) | .ports[0] |
			 .state == \"active\" and .netdev == \$nd and .rail == \$r and
			 any(.gids[]; .type == \"RoCE v2\" and .ip == \$ip)" "$R/devices.out" || return 1
	done &&
	jq -e ".rail_map | startswith(\"inferred\")" "$R/devices.out" &&
	grep -q "^rxe1 " "$R/devices-text.out"
'

test_expect_success VM 'devices --rail-map: rails and planes from the file; what it leaves out, or names and is not here, is warned' '
	ran devices-map 0 &&
	jq -e ".rail_map | startswith(\"from \") and endswith(\"rails.map\")" "$R/devices-map.out" &&
	for want in "rxe1 7 0" "rxe2 6 1" "rxe3 5 0" "rxe4 -1 -1"; do
		set -- $want &&
		jq -e --arg d $1 --argjson r $2 --argjson p $3 \
			".devices[] | select(.device == \$d) | .ports[0] | .rail == \$r and .plane == \$p" \
			"$R/devices-map.out" || return 1
	done &&
	cat "$R/devices-map.err" &&
	test "$(wc -l <"$R/devices-map.err")" = 4 &&
	grep -q "rxe4 port 1 is not in the rail map" "$R/devices-map.err" &&
	grep -q "rails.map:4: every port of .rxe2. has a line of its own: the line is not used" "$R/devices-map.err" &&
	grep -q "rails.map:6: .rxe1. has no port 2" "$R/devices-map.err" &&
	grep -q "rails.map:7: no device .nosuch0. here" "$R/devices-map.err" &&
	# $FABSCOPE_RAIL_MAP does the same, and the text output says where the rails came from
	ran devices-map-env 0 &&
	grep -q "^# rails and planes: from .*rails.map" "$R/devices-map-env.out" &&
	grep -A1 "^rxe2 " "$R/devices-map-env.out" | grep -q "rail 6  plane 1" &&
	cmp "$R/devices-map.err" "$R/devices-map-env.err"
'

for op in write read send write_imm; do
	for q in $QPS; do
		test_expect_success VM "bw --op $op with $q QPs: exact counts, one record per QP" '
			ran bw-'$op'-q'$q' 0 &&
			agg bw-'$op'-q'$q' ".[0] | .transport == \"verbs\" and .op == \"'$op'\" and .flows == '$q' and
				.metrics.msgs == '$q' * 100 and .metrics.bw_gbps > 0" &&
			jq -e "[.[] | select(.scope == \"flow\")] | length == '$q' and
				([.[].src.qpn] | unique | length) == '$q'" "$R/bw-'$op'-q'$q'.out"
		'
	done
done

test_expect_success VM 'bw --op read, 1 MiB with 4 QPs, counted and timed; the ACK timeout: rxe'"'"'s 18, or --qp-timeout' '
	jq -e "[.[] | select(.scope == \"flow\")] | length == 4 and all(.[]; .qp_timeout == 18)" \
		"$R/bw-read-q4.out" &&
	ran bw-read-1m-q4 0 &&
	agg bw-read-1m-q4 ".[0] | .op == \"read\" and .flows == 4 and .msg_size_bytes == 1048576 and
		.metrics.msgs == 80 and .metrics.bw_gbps > 0" &&
	jq -e "[.[] | select(.scope == \"flow\")] | length == 4 and all(.[]; .qp_timeout == 22)" \
		"$R/bw-read-1m-q4.out" &&
	ran bw-read-1m-q4-timed 0 &&
	agg bw-read-1m-q4-timed ".[0] | .flows == 4 and .metrics.msgs > 0 and .metrics.bw_gbps > 0"
'

# rxe runs the requester, and the packets' way through the stack, inside the poster's
# ibv_post_send: filling 4 windows of 8 MiB in one pass took 0.5 s, the completions of that
# time came in one poll with one timestamp, and most such runs reported flows (and an
# aggregate) of 0 Gb/s over windows of no length.  What is function here: every flow has a
# window of its own, with messages and a rate in it.  How much of -D a window covers follows
# the speed of qemu on the host (windows open and close at completions): bench/netns-bench.sh
# measures window / -D for the same engine (bench/bw.c) over TCP.
test_expect_success VM 'bw -D 2, 4 QPs, --poll busy: every flow measured, over a window of some length' '
	ran bw-write-q4-timed 0 &&
	{
		jq -e "[.[] | select(.scope == \"flow\") | .metrics] | length == 4 and
			all(.[]; .duration_s > 0 and .msgs > 0 and .bw_gbps > 0)" "$R/bw-write-q4-timed.out" ||
			{ jq -c ".[] | select(.scope == \"flow\") | .metrics" "$R/bw-write-q4-timed.out"; false; }
	} &&
	jq -e "([.[] | select(.scope == \"flow\") | .metrics.bw_gbps] | add) as \$sum |
		.[] | select(.scope == \"aggregate\") | .metrics.bw_gbps | . > 0 and (. - \$sum | fabs) < 1e-6 * \$sum" \
		"$R/bw-write-q4-timed.out"
'

test_expect_success VM 'bw: 1-byte messages, and every size from 2 B to 8 MiB' '
	ran bw-1byte 0 && agg bw-1byte ".[0] | .msg_size_bytes == 1 and .metrics.msgs == 500" &&
	ran bw-sweep 0 &&
	agg bw-sweep "length == 23 and ([.[].msg_size_bytes] == [range(1; 24) | pow(2; .)]) and
		all(.[]; .metrics.msgs == '$SWEEP_N' and .metrics.bw_gbps > 0)"
'

test_expect_success VM 'bw: READs of every size from 2 B to 8 MiB' '
	ran bw-sweep-read 0 &&
	agg bw-sweep-read "length == 23 and all(.[]; .op == \"read\" and .metrics.msgs == '$SWEEP_READ_N' and .metrics.bw_gbps > 0)"
'

test_expect_success VM 'bw -b: both directions and their sum, WRITEs and SENDs; send with inline data' '
	for n in bw-bidir bw-bidir-send; do
		ran $n 0 &&
		agg $n "([.[].dir] | sort) == [\"both\", \"c2s\", \"s2c\"] and all(.[]; .metrics.bw_gbps > 0)" ||
		return 1
	done &&
	agg bw-bidir-send "length == 3 and all(.[]; .op == \"send\")" &&
	ran bw-imm 0 && agg bw-imm ".[0].metrics.msgs == 600 and .[0].msg_size_bytes == 64"
'

test_expect_success VM 'bw: post lists of 8 with a completion every 16, adaptive polling; -m 512' '
	ran bw-post-list 0 &&
	agg bw-post-list ".[0] | .metrics.msgs == 800 and .params.post_list == 8 and .params.cq_mod == 16 and
		.params.poll == \"adaptive\"" &&
	ran bw-mtu 0 &&
	jq -e "[.[] | select(.scope == \"flow\")] | length == 1 and .[0].path_mtu_bytes == 512" "$R/bw-mtu.out"
'

# The server'"'"'s CPU time over 1.5 s in the middle of the run (tests/vm/verbs.sh): a server that
# spun would take about all of it, one that sleeps next to none; a quarter tells them apart
# however slow the host is (its set-up, whose length follows the host'"'"'s speed, is left out).
test_expect_success VM 'bw --poll busy: the target of one-sided WRITEs sleeps instead of spinning' '
	ran bw-busy-write 0 &&
	agg bw-busy-write ".[0] | .metrics.msgs > 0 and .metrics.bw_gbps > 0" &&
	test_must_fail test -s "$R/bw-busy-server-cpu.err" &&
	read -r t0 t1 w0 w1 hz <"$R/bw-busy-server-cpu.txt" &&
	wall=$(( (w1 - w0) * hz / 1000000000 )) &&
	echo "server CPU: $((t1 - t0)) ticks in $wall ticks of the run" &&
	test $wall -gt 0 && test $(( (t1 - t0) * 4 )) -lt $wall
'

test_expect_success VM 'lat: send and write ping-pong and READs, ordered percentiles; a size sweep' '
	jq -e ".[0].op == \"read\"" "$R/lat-read.out" &&
	for n in lat-send lat-write lat-read; do
		ran $n 0 &&
		jq -e ".[0].metrics | .iters == '$LAT_N' and (.lat_us | .min > 0 and .min <= .p50 and .p50 <= .p90 and
			.p90 <= .p99 and .p99 <= .p999 and .p999 <= .max and .avg > 0)" "$R/$n.out" || return 1
	done &&
	ran lat-sweep 0 && jq -e "length == 23" "$R/lat-sweep.out"
'

test_expect_success VM 'lat records carry their flow: QP numbers, UDP source port and where it comes from' '
	for n in lat-send lat-write lat-read; do
		jq -e ".[0] | (.src.qpn | type) == \"number\" and (.dst.qpn | type) == \"number\" and
			.src.port >= 49152 and .dst.port == 4791 and .src.device == \"rxe2\" and
			(.sport_source | length) > 0 and .path_mtu_bytes == 1024" "$R/$n.out" || return 1
	done
'

test_expect_success VM,TEST_HOOKS 'lat --op write: a first WRITE that lands before the server'"'"'s loop starts is answered' '
	ran lat-write-held 0 &&
	jq -e "length == 23 and all(.[]; .op == \"write\" and .metrics.iters == 3)" "$R/lat-write-held.out"
'

# the source ports the records claim, and those on the wire; and per QP: each flow's
# (source, UDP source port, destination QP) as tshark decodes the packets (.qps files)
qp_hex() { printf "0x%06x" "$1"; }
# check_qps NAME [both]: the packets from each flow's source to its destination QP carry the
# flow's port, and no packet from there has a (port, QP) pair no flow claims (a READ's records
# have the server as source); with a both=1 capture the packets the other way, to each flow's
# source QP, carry the port too
check_qps() {
	# each packet's source, UDP source port and destination QP, as tshark decodes the BTH
	tshark -r "$R/$1.pcap" -Y infiniband.bth -T fields -E separator=" " -e ip.src \
		-e udp.srcport -e infiniband.bth.destqp 2>"$1-tshark.err" | sort -u >"$R/$1.qps" &&
	test -s "$R/$1.qps" || { echo "$1: tshark decoded nothing: $(cat "$1-tshark.err")"; return 1; }
	jq -r ".[] | select(.scope == \"flow\") | \"\(.src.ip) \(.src.port) \(.dst.qpn) \(.dst.ip) \(.src.qpn)\"" \
		"$R/$1.out" >flows &&
	test -s flows &&
	: >expect-fwd && : >expect-back &&
	while read -r sip port dqpn dip sqpn; do
		echo "$sip $port $(qp_hex $dqpn)" >>expect-fwd &&
		echo "$dip $port $(qp_hex $sqpn)" >>expect-back || return 1
	done <flows &&
	read -r sip _ <flows && read -r _ _ _ dip _ <flows &&
	sort -u expect-fwd >expect && grep "^$sip " "$R/$1.qps" >got &&
	test_cmp expect got &&
	if [ "${2:-}" = both ]; then
		sort -u expect-back >expect && grep "^$dip " "$R/$1.qps" >got &&
		test_cmp expect got
	fi
}

test_lazy_prereq TSHARK 'command -v tshark'
test_require_in_ci TSHARK
test_expect_success VM,TSHARK 'the wire, per QP: each QP'"'"'s packets carry the source port its record says' '
	check_qps pcap-qpn && check_qps pcap-fl && check_qps pcap-sport both && check_qps pcap-sport-read both
'

wire_ports() { grep -oE "10\.1\.0\.2\.[0-9]+ > 10\.1\.0\.1\.4791" "$R/$1.txt" | cut -d. -f5 | cut -d" " -f1 | sort -u; }
record_ports() { jq -r ".[] | select(.scope == \"flow\") | .src.port" "$R/$1.out" | sort -u; }

test_expect_success VM 'the wire: each QP uses the UDP source port its record says (kernel flow label)' '
	ran pcap-qpn 0 &&
	wire_ports pcap-qpn >wire && record_ports pcap-qpn >recorded &&
	test "$(wc -l <recorded)" = 4 &&
	test_cmp recorded wire &&
	jq -e "[.[] | select(.scope == \"flow\")] | length == 4 and all(.[]; .sport_source | test(\"QP numbers\"))" "$R/pcap-qpn.out"
'

test_expect_success VM 'the wire: --flow-label N gives flow i the port of flow label N+i' '
	ran pcap-fl 0 &&
	for i in 0 1 2 3; do fl_sport $((1000 + i)); done | sort -u >expect &&
	wire_ports pcap-fl >wire && record_ports pcap-fl >recorded &&
	test_cmp expect recorded && test_cmp expect wire
'

# the UDP source ports of the packets from HOST in a both=1 capture
wire_ports_from() { grep -oE "$2\.[0-9]+ > [0-9.]+\.4791" "$R/$1.txt" | sed -E "s/^$2\.([0-9]+) .*/\1/" | sort -u; }

test_expect_success VM 'the wire: --sport BASE gives flow i the port BASE+i, at both ends (WRITEs and ACKs)' '
	ran pcap-sport 0 &&
	seq 50000 50003 >expect &&
	record_ports pcap-sport >recorded && test_cmp expect recorded &&
	wire_ports_from pcap-sport 10.1.0.2 >wire && test_cmp expect wire &&
	wire_ports_from pcap-sport 10.1.0.1 >wire-back && test_cmp expect wire-back &&
	jq -e "[.[] | select(.scope == \"flow\")] | length == 4 and
		all(.[]; .sport_source == \"--sport, through the flow label\" and .flow_label == .src.port - 49152)" \
		"$R/pcap-sport.out"
'

test_expect_success VM 'the wire: --sport 49152 with READs: the requests and the responses keep the ports' '
	ran pcap-sport-read 0 &&
	printf "49152\n49153\n" >expect &&
	record_ports pcap-sport-read >recorded && test_cmp expect recorded &&
	wire_ports_from pcap-sport-read 10.1.0.2 >wire && test_cmp expect wire &&
	wire_ports_from pcap-sport-read 10.1.0.1 >wire-back && test_cmp expect wire-back &&
	jq -e "[.[] | select(.scope == \"flow\") | .flow_label] == [16385, 1]" "$R/pcap-sport-read.out"
'

test_expect_success VM 'a --sport no flow label gives, on a device that is no mlx5: exit 3, one line' '
	ran err-sport 3 &&
	one_line err-sport "rxe2 cannot give a QP the UDP source port 4000" &&
	one_line err-sport "give --sport 49152 or more"
'

test_expect_success VM,TSHARK 'the wire: --op write_imm sends WRITEs with immediate data, --op write plain ones' '
	# RC opcodes: 6-8 RDMA WRITE first/middle/last, 9 last with immediate, 10 only, 11 only
	# with immediate (4 KiB messages, MTU 1024: first, middles, last with immediate; 100
	# counted, and the warm-up)
	tshark -r "$R/pcap-imm.pcap" -Y infiniband.bth -T fields -e infiniband.bth.opcode 2>err |
		sort -n | uniq -c >imm-ops &&
	cat imm-ops &&
	awk "\$2 == 9 { n = \$1 } END { exit !(n >= 100) }" imm-ops &&
	! awk "\$2 == 8 || \$2 == 10" imm-ops | grep -q . &&
	tshark -r "$R/pcap-qpn.pcap" -Y infiniband.bth -T fields -e infiniband.bth.opcode 2>err |
		sort -un >plain-ops &&
	cat plain-ops && grep -qx 8 plain-ops && ! grep -qx 9 plain-ops
'

test_expect_success VM 'the wire: --tclass appears as the IP TOS byte (DSCP = tclass >> 2)' '
	grep -q "IP (tos 0x60" "$R/pcap-qpn.txt" && ! grep "IP (tos" "$R/pcap-qpn.txt" | grep -qv "tos 0x60" &&
	grep -q "IP (tos 0xb8" "$R/pcap-fl.txt" && ! grep "IP (tos" "$R/pcap-fl.txt" | grep -qv "tos 0xb8"
'

test_expect_success VM 'the device: by netdev, by address, by --bind alone, by the route to HOST' '
	for want in "sel-netdev rxe2 10.1.0.2" "sel-ip rxe2 10.1.0.2" "sel-bind rxe4 10.1.0.4" \
		    "sel-route rxe4 10.1.0.4"; do
		set -- $want &&
		ran $1 0 &&
		jq -e --arg d $2 --arg ip $3 ".[] | select(.scope == \"flow\") | .src.device == \$d and .src.ip == \$ip and
			.src.gid_index == 1" "$R/$1.out" || { cat "$R/$1.err"; return 1; }
	done
'

test_expect_success VM '--ib-port: a port the netdev is not on, a port the device does not have: exit 3, one line' '
	ran err-ibport 3 && one_line err-ibport "netdev '"'"'n2'"'"' is on port 1 of rxe2, not on port 2 (--ib-port)" &&
	ran err-ibport-dev 3 && one_line err-ibport-dev "rxe2 has no port 2"
'

test_expect_success VM 'more inline data than the device takes: exit 3, one line naming --inline' '
	ran err-inline 3 &&
	one_line err-inline "4096 bytes of inline data are more than it takes" && one_line err-inline "give a smaller --inline"
'

test_expect_success VM 'the server'"'"'s locked-memory limit too low: the client is told, exit 3, one line' '
	ran err-memlock-server 3 &&
	one_line err-memlock-server "server 10.1.0.1:18605 refused: cannot register buffers" &&
	one_line err-memlock-server "ulimit -l"
'

test_expect_success VM 'a path MTU above the ports'"'"' active MTU: exit 3, one line saying which to give' '
	ran err-mtu 3 &&
	one_line err-mtu "path MTU 2048 (-m) is more than the smaller active MTU of the two ports, 1024" &&
	one_line err-mtu "give -m 1024 or less"
'

test_expect_success VM 'a peer whose GID is RoCE v1 where ours is v2: exit 3, one line, before any QP connects' '
	ran err-gidtype 3 &&
	one_line err-gidtype "GID index 1 of rxe2 is roce-v2 but the peer'"'"'s GID is roce-v1" &&
	one_line err-gidtype "choose GIDs of one type with -x"
'

test_expect_success VM 'a QP that cannot move to RTR (the peer'"'"'s GID is nobody'"'"'s): one line naming the state and errno' '
	cat "$R/err-rtr.err" &&
	ran err-rtr 4 &&
	one_line err-rtr "to RTR (peer QP" && one_line err-rtr "GID ::ffff:10.1.0.9" &&
	grep -qE "\(errno [0-9]+\)" "$R/err-rtr.err"
'

test_expect_success VM 'no RDMA device at all: exit 3, one line saying how to add one; devices says so too' '
	ran err-nodevices 3 && one_line err-nodevices "no RDMA devices found" &&
	one_line err-nodevices "rdma link add" &&
	ran err-nodevices-list 3 && one_line err-nodevices-list "no RDMA devices found"
'

test_expect_success VM 'unknown device: exit 3, one line naming it and the devices there are' '
	ran err-nodev 3 && one_line err-nodev "no RDMA device or netdev '\''nosuch0'\''" &&
	grep -q "rxe1, rxe2" "$R/err-nodev.err"
'

test_expect_success VM 'bad GID index (beyond the table, or empty): exit 3, one line' '
	ran err-gid 3 && one_line err-gid "GID index 200 of rxe2" &&
	ran err-gid-empty 3 && one_line err-gid-empty "GID index 5 of rxe2"
'

# rxe in this kernel lists RoCE v2 GIDs only, so the RoCE v1/v2 mismatch cannot
# be provoked here; the same check refuses GIDs of different address families
test_expect_success VM 'a GID that does not match the peer (IPv6 link-local vs IPv4): exit 3, one line' '
	ran err-family 3 && one_line err-family "address family"
'

test_expect_success VM 'port down: exit 3, one line naming device and port' '
	ran err-portdown 3 && one_line err-portdown "port 1 of rxe3 is down"
'

test_expect_success VM 'memlock limit too low: exit 3, one line saying which ulimit to raise' '
	ran err-memlock 3 && one_line err-memlock "ulimit -l"
'

test_expect_success VM 'peer unreachable: exit 4 within the timeout, one line' '
	ran err-unreach 4 && one_line err-unreach "no answer within 2 s"
'

test_expect_success VM 'a peer that goes silent mid-test: exit 4, one line, valid JSON' '
	ran err-silent 4 && one_line err-silent "no answer from 10.1.0.1:18602 for 3 s" &&
	jq -e "type == \"array\"" "$R/err-silent.out"
'

test_expect_success VM 'a peer that never reports its results: exit 4 after duration + 3 x timeout, one line' '
	ran err-noresults 4 && one_line err-noresults "did not report its results within 11 s" &&
	jq -e "type == \"array\"" "$R/err-noresults.out"
'

test_done
