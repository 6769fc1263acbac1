#!/usr/bin/env bash
test_description='fabscope pcap on the captures a new user brings (test-tool pcapgen): one with no
RoCE at all is said to have nothing to analyze (exit 2), never "no loss"; RoCE v1 (Ethernet type
0x8915, GRH, BTH), ERF records of Ethernet (extension headers, padding) and of InfiniBand (LRH,
LRH+GRH) are read to the same flow table, their planted gaps found; the lost column agrees with
the gaps, and the packets seen twice at the capture point are told from the first appearances
resent after a loss upstream, with the exact numbers (tshark, where installed, counts the same)'
# asan: always: feeds untrusted bytes to C code: pcap files a user brings (truncated, other link types)
. "$(dirname "$0")/test-lib.sh"
. "$SRCDIR/tests/lib-pcap.sh"

test_require_in_ci FABSCOPE TEST_TOOL JQ
P=FABSCOPE,TEST_TOOL,JQ
test_lazy_prereq TSHARK 'command -v tshark'
test_require_in_ci TSHARK	# ci/install-deps test: tshark

gen() { "$TEST_TOOL" pcapgen "$@" >/dev/null; }

# flow FILE QPN EXPR: EXPR holds on the flow to QPN in FILE.json (else the JSON is shown)
flow() {
	jq -e ".flows[] | select(.qpn == \"$2\") | $3" "$1.json" >/dev/null && return 0
	echo "flow: '$3' does not hold on $2 of $1:" >&2
	cat "$1.json" >&2
	return 1
}

# tshark's RoCE packets of FILE: "QPN PSN" per packet (tshark writes the QP as 0x%06x)
tshark_psns() {
	tshark -r "$1" -Y "infiniband.bth${2:+ and $2}" -T fields -E separator=" " \
		-e infiniband.bth.destqp -e infiniband.bth.psn 2>/dev/null
}

W="src=10.0.0.1 dst=10.0.0.2"
R="src=10.0.0.2 dst=10.0.0.1"

test_expect_success $P 'no RoCE at all: said so in the text and the JSON, exit 2, never "no loss"' '
	gen tcp.pcap "tcp count=19" &&
	test_expect_exit 2 "$FABSCOPE" pcap tcp.pcap >tcp.txt 2>tcp.err &&
	test $(wc -l <tcp.err) = 1 &&
	test_grep "tcp.pcap. has no RoCE packet (RoCEv2 on UDP port 4791, RoCE v1 on Ethernet type 0x8915, InfiniBand) among its 19 packets: nothing to analyze" tcp.err &&
	test_grep "RoCE 0 packets .*, other 19" tcp.txt &&
	test_grep "\[warn\]  no RoCE packet .* in the capture: nothing was analyzed (19 other packets)" tcp.txt &&
	test_grep ! "no loss" tcp.txt &&
	test_expect_exit 2 "$FABSCOPE" pcap tcp.pcap --json >tcp.json 2>/dev/null &&
	jq -e ".status == \"no-roce\" and .summary.packets == 19 and .summary.roce_packets == 0 and
		(.flows | length) == 0 and (.findings | length) == 1 and
		(.findings[0].text | contains(\"nothing was analyzed\"))" tcp.json &&
	# --port names another port: the line no longer suggests it
	test_expect_exit 2 "$FABSCOPE" pcap tcp.pcap --port 4789 >/dev/null 2>port.err &&
	test_grep "UDP port 4791 or 4789" port.err && test_grep ! "give --port" port.err
'

test_expect_success $P 'PFC frames and no RoCE: the pauses are analyzed, the missing RoCE noted, exit 0' '
	gen pfc.pcap "pfc prio=3 quanta=100 count=2" "tcp count=3" &&
	pcap_run pfc.json pfc.pcap --json &&
	jq -e ".status == \"pfc-only\" and .pfc.priorities[0].frames == 2 and
		any(.findings[]; .severity == \"note\" and (.text | contains(\"only the PFC and PAUSE frames were analyzed\")))" pfc.json
'

test_expect_success $P,TSHARK 'tshark counts the TCP capture the same: 19 packets, none RoCE' '
	test "$(tshark -r tcp.pcap 2>/dev/null | wc -l)" = 19 &&
	test "$(tshark -r tcp.pcap -Y tcp 2>/dev/null | wc -l)" = 19 &&
	test "$(tshark -r tcp.pcap -Y infiniband 2>/dev/null | wc -l)" = 0
'

test_expect_success $P 'RoCE v1: GRH and BTH on type 0x8915, flows keyed by the GIDs, a gap found' '
	gen v1.pcap "rc write_only v1 qpn=0x11 psn=10 len=64 count=5" \
		"rc write_only v1 qpn=0x11 psn=17 len=64 count=3" \
		"ack v1 qpn=0x22 psn=19 src=fe80::2 dst=fe80::1" &&
	pcap_run v1.pcap.json v1.pcap --json &&
	jq -e ".status == \"analyzed\" and .summary.roce_packets == 9 and .summary.other_packets == 0" v1.pcap.json &&
	flow v1.pcap 0x000011 ".addresses == \"gid\" and .src == \"fe80::1\" and .dst == \"fe80::2\" and
		.packets == 8 and .psn_first == 10 and .psn_last == 19 and .psn.gaps == 1 and .psn.lost == 2 and
		.psn.missing == 2 and .reverse == 1" &&
	flow v1.pcap 0x000022 ".acks == 1 and .reverse == 0" &&
	pcap_run v1.txt v1.pcap &&
	test_grep "QP 0x000011 fe80::1 -> fe80::2: 2 packets missing in 1 PSN gap .*PSN 0x00000f" v1.txt &&
	test_grep "^0x000011 *fe80::1 *fe80::2 *RC *8 .* 2 *0 *0 *0 " v1.txt &&
	# --host takes a GID as the IPv6 address it is shaped as
	pcap_run host.json v1.pcap --json --host fe80::2 &&
	jq -e "(.flows | length) == 2" host.json
'

test_expect_success $P,TSHARK 'tshark reads the RoCE v1 capture: the same QPs and PSNs' '
	tshark_psns v1.pcap >v1.tshark &&
	{ for p in 10 11 12 13 14 17 18 19; do echo "0x000011 $p"; done; echo "0x000022 19"; } >v1.expect &&
	test_cmp v1.expect v1.tshark
'

test_expect_success $P 'ERF Ethernet records (extension headers, padding) carry RoCEv2 and PFC' '
	gen --link erf erf.pcap "rc write_only qpn=0x11 psn=10 len=64 count=5 erfext=2 erfpad=6 $W" \
		"rc write_only qpn=0x11 psn=17 len=64 count=3 $W" "pfc prio=3 quanta=10" \
		"rc write_only qpn=0x11 psn=40 erftype=5" &&
	pcap_run erf.pcap.json erf.pcap --json &&
	jq -e ".summary.packets == 10 and .summary.roce_packets == 8 and .summary.other_packets == 1 and
		.pfc.priorities[0].prio == 3 and .pfc.priorities[0].frames == 1" erf.pcap.json &&
	# the flow counts the frames, not the ERF records around them (138 bytes each: Ethernet 14, IPv4 20, UDP 8, BTH 12, RETH 16, 64, ICRC 4)
	flow erf.pcap 0x000011 ".addresses == \"ipv4\" and .src == \"10.0.0.1\" and .packets == 8 and
		.bytes == 8 * 138 and .psn_first == 10 and .psn_last == 19 and .psn.gaps == 1 and .psn.lost == 2" &&
	# a record cut inside its ERF header, and one cut inside the frame: counted by the layer cut
	gen --link erf cut.pcap "rc write_only qpn=0x11 psn=1 erfext=1 cut=20" "rc write_only qpn=0x11 psn=2 cut=40" \
		"rc write_only qpn=0x11 psn=3" &&
	pcap_run cut.json cut.pcap --json &&
	jq -e ".summary.truncated == 2 and .summary.roce_packets == 1 and .summary.truncated_by_layer.erf == 1 and
		.summary.truncated_by_layer.ipv4 == 1" cut.json
'

test_expect_success $P,TSHARK 'tshark reads the ERF Ethernet capture: the same packets and PSNs' '
	test "$(tshark -r erf.pcap 2>/dev/null | wc -l)" = 10 &&
	tshark_psns erf.pcap eth >erf.tshark &&
	{ for p in 10 11 12 13 14 17 18 19; do echo "0x000011 $p"; done; } >erf.expect &&
	test_cmp erf.expect erf.tshark
'

test_expect_success $P 'ERF InfiniBand records: LRH then BTH (LIDs), LRH+GRH (GIDs), a gap found' '
	gen --link erf ib.pcap "rc write_only ib qpn=0x11 slid=1 dlid=2 psn=10 len=64 count=4" \
		"rc write_only ib qpn=0x11 slid=1 dlid=2 psn=16 len=64 count=2" \
		"ack ib qpn=0x22 slid=2 dlid=1 psn=17" \
		"rc send_only ib grh qpn=0x33 psn=50 len=32 count=3" &&
	pcap_run ib.pcap.json ib.pcap --json &&
	jq -e ".summary.roce_packets == 10 and .summary.truncated == 0 and (.flows | length) == 3" ib.pcap.json &&
	flow ib.pcap 0x000011 ".addresses == \"lid\" and .src == \"lid:0x0001\" and .dst == \"lid:0x0002\" and
		.packets == 6 and .psn_first == 10 and .psn_last == 17 and .psn.gaps == 1 and .psn.lost == 2 and
		.reverse == 1 and .payload_bytes == 6 * 64" &&
	flow ib.pcap 0x000022 ".src == \"lid:0x0002\" and .acks == 1 and .reverse == 0" &&
	flow ib.pcap 0x000033 ".addresses == \"gid\" and .src == \"fe80::1\" and .packets == 3 and .psn.gaps == 0" &&
	pcap_run ib.txt ib.pcap &&
	test_grep "QP 0x000011 lid:0x0001 -> lid:0x0002: 2 packets missing in 1 PSN gap" ib.txt
'

test_expect_success $P,TSHARK 'tshark reads the ERF InfiniBand capture: the same QPs, PSNs and LIDs' '
	tshark_psns ib.pcap >ib.tshark &&
	{ for p in 10 11 12 13 16 17; do echo "0x000011 $p"; done; echo "0x000022 17"
	  for p in 50 51 52; do echo "0x000033 $p"; done; } >ib.expect &&
	test_cmp ib.expect ib.tshark &&
	tshark -r ib.pcap -Y "infiniband.bth.destqp == 0x11" -T fields -e infiniband.lrh.slid 2>/dev/null |
		sort -u >slid.tshark &&
	echo 1 >slid.expect && test_cmp slid.expect slid.tshark
'

# a gap of 2 answered by a NAK and a go-back-N resend of 5 (2 first appearances, 3 seen twice),
# then a packet captured twice outside any resend, then a late packet (a gap that fills itself)
test_expect_success $P 'seen twice vs resent after a loss: the exact numbers, the lost column agrees' '
	gen both.pcap \
		"rc write_only qpn=0x11 psn=100 len=64 ackreq $W count=10 time=1.0" \
		"rc write_only qpn=0x11 psn=112 len=64 ackreq $W count=3 time=1.1" \
		"ack qpn=0x22 psn=110 nak=seq $R time=1.2" \
		"rc write_only qpn=0x11 psn=110 len=64 ackreq $W count=7 time=1.3" \
		"rc write_only qpn=0x11 psn=116 len=64 ackreq $W time=1.4" \
		"rc write_only qpn=0x11 psn=117 len=64 ackreq $W time=1.5" \
		"rc write_only qpn=0x11 psn=119 len=64 ackreq $W time=1.6" \
		"rc write_only qpn=0x11 psn=118 len=64 ackreq $W time=1.7" \
		"ack qpn=0x22 psn=119 $R time=1.8" &&
	pcap_analyze both.pcap &&
	flow both.pcap 0x000011 ".packets == 24 and .psn.gaps == 2 and .psn.lost == 2 and .psn.missing == 0 and
		.psn.resent_after_loss == 2 and .psn.seen_again == 4 and .psn.out_of_order == 1 and
		.psn.retransmission_bursts == 2" &&
	test_grep "^0x000011 *10.0.0.1 *10.0.0.2 *RC *24 .* 2 *2 *4 *1 *0 " both.pcap.txt &&
	test_grep "# lost: PSNs lost before the capture point; resent: first appearances resent after a loss; again: packets whose PSN the flow carried before; ooo: late" both.pcap.txt &&
	test_grep "QP 0x000011 10.0.0.1 -> 10.0.0.2: 2 retransmission bursts (6 packets sent again: 2 resent after a loss upstream, 4 seen twice at the capture point) after 1 NAK psn-seq-error (the first at 0.200 s, PSN 0x00006e) and 2 PSN gaps (2 packets lost before the capture point)" both.pcap.txt &&
	test_grep "1 packet out of order (late, not lost)" both.pcap.txt &&
	test_grep ! "missing" both.pcap.txt
'

test_expect_success $P,TSHARK 'tshark: the packets whose PSN came before are exactly seen_again' '
	pcap_vs_tshark both.pcap &&
	tshark -r both.pcap -Y "infiniband.bth.destqp == 0x11" -T fields -e infiniband.bth.psn 2>/dev/null |
		awk "seen[\$1]++ { n++ } END { print n + 0 }" >again.tshark &&
	echo 4 >again.expect && test_cmp again.expect again.tshark
'

test_expect_success $P 'RoCE v1: a GRH whose IPVer is not 6 is no GRH: flagged ip-version, no BTH read from it' '
	eth=0000000000020000000000018915 &&
	grh=0000000002c1b40fe800000000000000000000000000001fe800000000000000000000000000002 &&
	bth=0a00ffff00000011000000010000000000000000000000000000000000000000000000000000000000000000 &&
	"$TEST_TOOL" dissect ${eth}6$grh$bth >good &&
	test_grep "^layers ethernet grh bth reth$" good && test_grep "^flags none$" good &&
	"$TEST_TOOL" dissect ${eth}4$grh$bth >bad &&
	test_grep "^layers ethernet$" bad && test_grep "^flags ip-version$" bad
'

test_done
