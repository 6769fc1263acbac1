#!/usr/bin/env bash
test_description='fabscope pcap on synthesized captures (test-tool pcapgen): the per-QP flow
table and its findings - a PSN gap answered by a NAK and a go-back-N resend across the 24-bit
PSN wrap, packets lost and never resent, late packets, READ requests whose responses take PSNs,
request-to-acknowledge latency, RNR NAKs, fatal NAKs, CE marks and CNPs, PFC and PAUSE frames;
VLAN tags, IPv6, cooked and raw link types; --qp, --host, --filter; packets cut inside headers
and a file cut inside a packet are reported, never read past; bad files are one line, exit 2
(3 for one this user may not read).
Where tshark is installed its per-packet view of the same files agrees'
# asan: always: feeds untrusted bytes to C code: pcap files
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-pcap.sh"

test_require_in_ci FABSCOPE TEST_TOOL JQ
P=FABSCOPE,TEST_TOOL,JQ
test_lazy_prereq TSHARK 'command -v tshark'
test_lazy_prereq EDITCAP 'command -v editcap'
test_require_in_ci TSHARK EDITCAP	# ci/install-deps test: tshark (and wireshark-common)
test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_require_in_ci GNUPLOT

gen() { "$TEST_TOOL" pcapgen "$@" >/dev/null; }

# j FILE EXPR [ARGS...]: the expression holds on fabscope pcap --json ARGS of FILE (else the
# JSON is shown)
j() {
	pcap_run "$1.json" "$1" --json "${@:3}" || return 1
	jq -e "$2" "$1.json" >/dev/null && return 0
	echo "j: '$2' does not hold on $1:" >&2
	cat "$1.json" >&2
	return 1
}

# flow FILE QPN EXPR: EXPR holds on the flow to QPN
flow() { j "$1" ".flows[] | select(.qpn == \"$2\") | $3"; }

W="src=10.0.0.1 dst=10.0.0.2"
R="src=10.0.0.2 dst=10.0.0.1"

test_expect_success $P 'a gap, a NAK and the go-back-N resend across the PSN wrap' '
	gen nak.pcap \
		"rc write_only qpn=0x11 psn=0xfffff0 len=1024 ackreq $W count=12 time=1.1" \
		"ack qpn=0x22 psn=0xfffffb $R time=1.2" \
		"rc write_only qpn=0x11 psn=0xfffffe len=1024 ackreq $W count=4 time=1.3" \
		"ack qpn=0x22 psn=0xfffffc nak=seq $R time=1.4" \
		"rc write_only qpn=0x11 psn=0xfffffc len=1024 ackreq $W count=6 time=1.5" \
		"ack qpn=0x22 psn=0x000001 $R time=1.6" &&
	flow nak.pcap 0x000011 ".packets == 22 and .psn.gaps == 1 and .psn.lost == 2 and .psn.missing == 0
		and .psn.resent_after_loss == 2 and .psn.seen_again == 4 and .psn.retransmission_bursts == 1 and .psn.out_of_order == 0 and .psn_first == 16777200
		and .psn_last == 1 and .reverse == 1 and .ack_latency_s.n == 22" &&
	flow nak.pcap 0x000022 ".naks[\"psn-seq-error\"] == 1 and .acks == 3 and .reverse == 0" &&
	pcap_run nak.txt nak.pcap &&
	test_grep "\[error\] QP 0x000011 10.0.0.1 -> 10.0.0.2: 1 retransmission burst (6 packets sent again: 2 resent after a loss upstream, 4 seen twice at the capture point) after 1 NAK psn-seq-error (the first at 0.300 s, PSN 0xfffffc) and 1 PSN gap (2 packets lost before the capture point); the first at 0.400 s from PSN 0xfffffc" nak.txt &&
	# the table says the 2 lost, 2 resent, 4 seen again
	test_grep "^0x000011 .* 22 .* 2  *2  *4  *0 " nak.txt
'

# an [error] finding is a fault the capture shows: a failed check, as fabscope-pcap(1) says
test_expect_success $P,JQ 'an [error] finding exits 1 with one line; warnings and notes exit 0' '
	gen clean.pcap "rc write_only qpn=0x61 psn=1 len=1024 ackreq $W count=4 time=1.0" \
		"ack qpn=0x62 psn=4 $R time=1.1" &&
	"$FABSCOPE" pcap clean.pcap >clean.txt 2>clean.err &&
	test_grep "# findings: none" clean.txt && test_must_be_empty clean.err &&
	gen warn.pcap "rc send_only qpn=0x63 psn=1 len=64 ecn=ce $W count=4 time=1.0" "cnp qpn=0x64 $R time=1.1" &&
	"$FABSCOPE" pcap warn.pcap >warn.txt 2>warn.err &&
	test_grep "\[warn\]" warn.txt && test_grep ! "\[error\]" warn.txt && test_must_be_empty warn.err &&
	test_expect_exit 1 "$FABSCOPE" pcap nak.pcap >nak1.txt 2>nak1.err &&
	test_grep "\[error\]" nak1.txt &&
	test $(wc -l <nak1.err) = 1 &&
	test_grep "^fabscope pcap: .nak.pcap.: 1 error finding (loss, retransmission or a NAK that breaks a QP): a failed check$" nak1.err &&
	test_expect_exit 1 "$FABSCOPE" pcap nak.pcap --json >nak1.json 2>nak1j.err &&
	test_cmp nak1.err nak1j.err &&
	jq -e "[.findings[] | select(.severity == \"error\")] | length == 1" nak1.json >/dev/null
'

test_expect_success $P 'lost and never resent; late packets are out of order, not lost' '
	gen loss.pcap \
		"rc send_only qpn=0x31 psn=100 len=64 $W count=5 time=2.1" \
		"rc send_only qpn=0x31 psn=108 len=64 $W count=2 time=2.2" \
		"rc send_only qpn=0x31 psn=106 len=64 $W time=2.3" \
		"rc send_only qpn=0x31 psn=110 len=64 $W time=2.4" &&
	flow loss.pcap 0x000031 ".psn.gaps == 1 and .psn.lost == 2 and .psn.missing == 2 and .psn.out_of_order == 1
		and .psn.seen_again == 0 and .psn.resent_after_loss == 0" &&
	pcap_run loss.txt loss.pcap &&
	test_grep "2 packets missing in 1 PSN gap .*PSN 0x000069" loss.txt &&
	test_grep "1 packet out of order (late, not lost)" loss.txt &&
	test_grep ! "retransmission" loss.txt
'

test_expect_success $P 'READ: the responses take PSNs, their gaps are losses on the way back' '
	gen read.pcap \
		"rc read_req qpn=0x41 psn=500 dmalen=4096 $W time=3.1" \
		"rc read_resp_first qpn=0x42 psn=500 len=1024 $R time=3.2" \
		"rc read_resp_middle qpn=0x42 psn=501 len=1024 $R time=3.3" \
		"rc read_resp_last qpn=0x42 psn=503 len=1024 $R time=3.4" \
		"rc write_only qpn=0x41 psn=504 len=64 ackreq $W time=3.5" \
		"ack qpn=0x42 psn=504 $R time=3.6" &&
	flow read.pcap 0x000041 ".psn.gaps == 0 and .psn.lost == 0 and .requests == 2 and .ack_latency_s.n == 2" &&
	flow read.pcap 0x000042 ".read_responses == 3 and .psn.gaps == 1 and .psn.lost == 1" &&
	flow read.pcap 0x000041 "(.ack_latency_s.p50 - 0.1 | fabs) < 0.01"
'

# the responder's READ responses skip the PSNs the requester spent on other requests
test_expect_success $P 'READs between WRITEs: no false gap on the way back; a re-READ is a resend' '
	gen mixed.pcap \
		"rc write_only qpn=0x43 psn=100 len=64 $W time=3.1" \
		"rc read_req qpn=0x43 psn=101 dmalen=1024 $W time=3.2" \
		"rc write_only qpn=0x43 psn=105 len=64 $W time=3.3" \
		"rc read_req qpn=0x43 psn=106 dmalen=200 $W time=3.4" \
		"rc read_resp_first qpn=0x44 psn=101 len=256 $R time=3.5" \
		"rc read_resp_middle qpn=0x44 psn=102 len=256 $R time=3.6" \
		"rc read_resp_middle qpn=0x44 psn=103 len=256 $R time=3.7" \
		"rc read_resp_last qpn=0x44 psn=104 len=256 $R time=3.8" \
		"rc read_resp_only qpn=0x44 psn=106 len=200 $R time=3.9" \
		"rc read_req qpn=0x43 psn=103 dmalen=512 $W time=4.1" &&
	flow mixed.pcap 0x000044 ".read_responses == 5 and .psn.gaps == 0 and .psn.lost == 0" &&
	flow mixed.pcap 0x000043 ".psn.gaps == 0 and .psn.out_of_order == 0 and .psn.resent_after_loss == 1
		and .psn.seen_again == 0"
'

test_expect_success $P 'a capture that starts with a PFC frame; NAK times by code; ports; unanswered' '
	gen pfc0.pcap "pfc prio=2 quanta=10 time=1.0" "pfc prio=2 quanta=10 time=1.5" \
		"rc send_only qpn=0x55 psn=1 len=10 $W time=1.9" &&
	pcap_run pfc0.txt pfc0.pcap &&
	test_grep "from 0.000 s to 0.500 s" pfc0.txt &&
	gen naks.pcap "rc send_only qpn=0x56 psn=1 len=10 ackreq $W count=5 time=1.0" \
		"ack qpn=0x57 psn=2 nak=seq $R time=2.0" "ack qpn=0x57 psn=3 nak=access $R time=6.0" &&
	pcap_run naks.txt naks.pcap &&
	test_grep "1 NAK remote-access-error, the first at 5.000 s (PSN 0x000003)" naks.txt &&
	gen ports.pcap "rc send_only qpn=0x58 psn=1 len=10 sport=1000 $W" "rc send_only qpn=0x58 psn=2 len=10 sport=2000 $W" \
		"rc send_only qpn=0x58 psn=3 len=10 sport=1000 $W" "rc send_only qpn=0x58 psn=4 len=10 sport=2000 $W" &&
	flow ports.pcap 0x000058 ".udp_sport_changes == 3 and .udp_sports == [1000, 2000]" &&
	gen unans.pcap "rc write_only qpn=0x59 psn=1 len=10 ackreq $W count=2 time=1.0" \
		"ack qpn=0x5a psn=2 $R time=1.1" "rc write_only qpn=0x59 psn=3 len=10 ackreq $W count=3 time=1.2" &&
	flow unans.pcap 0x000059 ".psn.unanswered == 3 and .ack_latency_s.n == 2" &&
	pcap_run unans.txt unans.pcap &&
	test_grep "3 requests were never acknowledged before the capture ended" unans.txt &&
	test_expect_exit 2 "$FABSCOPE" pcap unans.pcap --link-speed 25ms 2>e &&
	test_grep "expected a number" e
'

test_expect_success $P 'RNR NAKs, a fatal NAK, CE marks, CNPs, PFC and PAUSE frames' '
	gen cong.pcap \
		"rc send_only qpn=0x51 psn=1 len=64 ackreq ecn=ce $W count=4 time=4.1" \
		"rc send_only qpn=0x51 psn=5 len=64 ackreq ecn=ect0 $W count=4 time=4.2" \
		"ack qpn=0x52 psn=2 rnr=14 $R time=4.3" \
		"ack qpn=0x52 psn=3 nak=access $R time=4.4" \
		"cnp qpn=0x52 $R count=3 time=4.5" \
		"pfc prio=3,5 quanta=1000 count=4 time=4.6" \
		"pfc prio=3 quanta=0 time=4.7" \
		"pause quanta=500 count=2 time=4.8" &&
	flow cong.pcap 0x000051 ".ce == 4 and .ect == 4 and .packets == 8" &&
	flow cong.pcap 0x000052 ".rnr_naks == 1 and .naks[\"remote-access-error\"] == 1 and .cnps == 3" &&
	j cong.pcap "(.pfc.priorities[] | select(.prio == 3) | .frames == 5 and .xoff == 4 and .xon == 1
		and .quanta == 4000) and (.pfc.priorities[] | select(.prio == 5) | .quanta == 4000)
		and .pfc.pause_frames == 2 and .pfc.pause_quanta == 1000" &&
	pcap_run cong.txt cong.pcap --link-speed 100 &&
	test_grep "\[error\] QP 0x000052 .*1 NAK remote-access-error.*goes to the error state" cong.txt &&
	test_grep "1 RNR NAK (receiver not ready: no receive posted; timer 1.28 ms)" cong.txt &&
	test_grep "50.0% of packets CE-marked (4)" cong.txt &&
	test_grep "3 CNPs" cong.txt &&
	test_grep "PFC: priority 3 paused 4 times (1 XON), 4000 quanta = 0.000020 s at 100 Gb/s" cong.txt &&
	test_grep "802.3x PAUSE: 2 frames, 1000 quanta" cong.txt
'

test_expect_success $P 'VLAN, IPv6, SLL, SLL2 and raw IP: the same flow table' '
	for l in eth sll sll2 raw; do
		gen --link $l "l-$l.pcap" "rc write_only qpn=0x61 psn=7 len=100 src=fd00::1 dst=fd00::2 count=3" \
			"rc write_only qpn=0x62 psn=9 len=100 $W count=2" || return 1
		flow "l-$l.pcap" 0x000061 ".src == \"fd00::1\" and .packets == 3 and .psn.lost == 0" || return 1
		flow "l-$l.pcap" 0x000062 ".dst == \"10.0.0.2\" and .packets == 2" || return 1
	done &&
	gen vlan.pcap "rc write_only qpn=0x63 psn=1 len=100 vlan=100,200 ext=hop,dst src=fd00::1 dst=fd00::2 count=4" &&
	flow vlan.pcap 0x000063 ".packets == 4 and .psn.lost == 0"
'

test_expect_success $P '--qp, --host and --filter select; other traffic is counted apart' '
	gen sel.pcap "rc send_only qpn=0x71 psn=1 len=10 $W count=3" \
		"rc send_only qpn=0x72 psn=1 len=10 src=10.0.0.3 dst=10.0.0.4 count=2" \
		"udp dport=53 len=20 count=4" &&
	j sel.pcap ".summary.roce_packets == 5 and .summary.other_packets == 4 and (.flows | length) == 2" &&
	j sel.pcap "(.flows | length) == 1 and .flows[0].qpn == \"0x000072\"" "--qp=0x72" &&
	j sel.pcap "(.flows | length) == 1 and .flows[0].qpn == \"0x000071\"" "--host=10.0.0.2" &&
	# a selection without RoCE: said so, exit 2 (see t0265)
	test_expect_exit 2 "$FABSCOPE" pcap sel.pcap --json "--filter=udp port 53" >dns.json 2>dns.err &&
	jq -e ".summary.packets == 4 and (.flows | length) == 0 and .status == \"no-roce\"" dns.json &&
	test_grep "has no RoCE packet .* among its 4 packets selected: nothing to analyze" dns.err &&
	# an address no packet has: a wrong argument, as a QP not there is, not a clean verdict
	test_expect_exit 2 "$FABSCOPE" pcap sel.pcap --host 10.9.9.9 >out 2>err &&
	test_must_be_empty out && test $(wc -l <err) = 1 &&
	test_grep "host 10.9.9.9: no packet in .sel.pcap. is from or to that address" err &&
	test_expect_exit 2 "$FABSCOPE" pcap sel.pcap --link-speed 0 2>err &&
	test $(wc -l <err) = 1 && test_grep "link-speed 0: give the link.s speed" err
'

test_expect_success $P '--qp: decimal or 0x hex, never octal; a QP not in the capture is an error' '
	# 0x72 = 114; "000114" is 114 too (strtoul base 0 read it as octal 76)
	j sel.pcap "(.flows | length) == 1 and .flows[0].qpn == \"0x000072\"" "--qp=114" &&
	j sel.pcap "(.flows | length) == 1 and .flows[0].qpn == \"0x000072\"" "--qp=000114" &&
	test_expect_exit 2 "$FABSCOPE" pcap sel.pcap --qp 0x99 >out 2>err &&
	test_must_be_empty out &&
	test $(wc -l <err) = 1 &&
	test_grep "qp 0x000099: no RoCEv2 packet in .sel.pcap. is to or from that QP (its QPs: 0x000071, 0x000072)" err &&
	test_expect_exit 2 "$FABSCOPE" pcap sel.pcap --qp 0x1000000 2>err &&
	test_grep "is not a QP number" err &&
	test_expect_exit 2 "$FABSCOPE" pcap sel.pcap --qp " 17" 2>err &&
	test_expect_exit 2 "$FABSCOPE" pcap sel.pcap --qp 0x 2>err
'

test_expect_success $P 'packets cut inside a header: counted by layer, never read past' '
	gen cut.pcap "rc write_first qpn=0x81 psn=1 len=1000 $W cut=40" \
		"rc write_first qpn=0x81 psn=2 len=1000 $W cut=50" \
		"rc write_first qpn=0x81 psn=3 len=1000 $W cut=60" \
		"rc write_first qpn=0x81 psn=4 len=1000 $W cut=80" &&
	# 40 bytes stop in the UDP header, 50 in the BTH, 60 in the RETH; 80 hold every header
	j cut.pcap ".summary.truncated == 3 and .summary.truncated_by_layer.udp == 1 and
		.summary.truncated_by_layer.bth == 1 and .summary.truncated_by_layer.reth == 1" &&
	flow cut.pcap 0x000081 ".packets == 2" &&
	pcap_run cut.txt cut.pcap &&
	test_grep "3 packets cut inside a header" cut.txt
'

test_expect_success $P 'a file cut inside a packet: a warning, the packets before it analyzed' '
	gen whole.pcap "rc send_only qpn=0x91 psn=1 len=100 $W count=10" &&
	head -c $(($(stat -c %s whole.pcap) - 50)) whole.pcap >torn.pcap &&
	pcap_run torn.json torn.pcap --json &&
	jq -e ".summary.packets == 9 and .summary.read_error != null" torn.json &&
	test_grep "ends inside a packet after 9 packets" torn.err
'

test_expect_success $P 'bad input: one line, exit 2' '
	echo "not a capture" >bad.pcap &&
	test_expect_exit 2 "$FABSCOPE" pcap bad.pcap 2>e1 &&
	test $(wc -l <e1) = 1 && test_grep "cannot read .bad.pcap. as a capture" e1 &&
	test_expect_exit 2 "$FABSCOPE" pcap nosuch.pcap 2>e2 && test $(wc -l <e2) = 1 &&
	test_expect_exit 2 "$FABSCOPE" pcap whole.pcap --filter "udp port banana" 2>e3 &&
	test_grep "filter .udp port banana." e3 &&
	test_expect_exit 2 "$FABSCOPE" pcap whole.pcap --host 10.0.0 2>e4 &&
	test_expect_exit 2 "$FABSCOPE" pcap 2>e5 && test_grep "missing FILE" e5
'

# a capture that is there but that this user cannot read is the environment (3), with the
# system's reason; a path that is not there stays a wrong argument (2, above)
[ "$(id -u)" = 0 ] && test_require_in_ci SETPRIV
test_expect_success $P,SETPRIV 'a capture that cannot be read: one line, exit 3' '
	cp whole.pcap locked.pcap && chmod 600 locked.pcap &&
	test_expect_exit 3 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$FABSCOPE" pcap locked.pcap >out 2>err &&
	test $(wc -l <err) = 1 && test_grep "cannot open .locked.pcap.: Permission denied" err &&
	test_must_be_empty out
'

test_expect_success $P,GNUPLOT '--plot: the busiest flows and the PFC frames over time, an SVG' '
	pcap_run cong.plot.txt cong.pcap --plot cong.svg &&
	test_grep "<svg" cong.svg &&
	test_grep -F "0x000051:10.0.0.1>10.0.0.2" cong.svg &&
	test_grep "prio3" cong.svg && test_grep "prio5" cong.svg &&
	test_path_is_file cong.svg && ! test -e cong.svg.flows.dat &&
	pcap_run sel.plot.txt sel.pcap --plot sel.svg &&
	test_grep "no PFC or PAUSE frames" sel.svg &&
	test_expect_exit 3 env FABSCOPE_PLOTS=/nonexistent "$FABSCOPE" pcap cong.pcap --plot x.svg >x.out 2>x.err &&
	test_grep "no plot: the gnuplot templates are not in /nonexistent (FABSCOPE_PLOTS)" x.err &&
	test_grep "findings" x.out &&
	# a folder that is not there: the error names it, the analysis is printed
	test_expect_exit 3 "$FABSCOPE" pcap cong.pcap --plot nodir/y.svg >y.out 2>y.err &&
	test $(wc -l <y.err) = 1 &&
	test_grep "cannot open the directory of --plot .nodir.: No such file" y.err &&
	test_grep "findings" y.out
'

# swap FILE OUT: the same capture written big-endian (every header field byte-swapped)
swap() {
	perl -e '
		local $/; open(my $f, "<:raw", $ARGV[0]) or die; my $d = <$f>;
		my @g = unpack("V v v V V V V", substr($d, 0, 24));
		my $o = pack("N n n N N N N", @g); my $p = 24;
		while ($p + 16 <= length $d) {
			my @h = unpack("V4", substr($d, $p, 16));
			$o .= pack("N4", @h) . substr($d, $p + 16, $h[2]); $p += 16 + $h[2];
		}
		open(my $w, ">:raw", $ARGV[1]) or die; print $w $o;' "$1" "$2"
}

test_expect_success $P 'a big-endian pcap reads the same; a record too long to be a packet is said' '
	swap nak.pcap nak-be.pcap &&
	! cmp -s nak.pcap nak-be.pcap &&
	"$FABSCOPE" pcap nak-be.pcap --json | jq -S "del(.file)" >be.json &&
	"$FABSCOPE" pcap nak.pcap --json | jq -S "del(.file)" >le.json &&
	test_cmp le.json be.json &&
	cap=$(od -A n -t u4 -j 32 -N 4 nak.pcap) &&
	{ head -c $((24 + 16 + cap)) nak.pcap && printf "\001\000\000\000\000\000\000\000\377\377\377\177\377\377\377\177" &&
	  head -c 200 /dev/zero; } >huge.pcap &&
	pcap_run huge.json huge.pcap --json &&
	jq -e ".summary.packets == 1" huge.json &&
	test_grep "a record of 2147483647 bytes: not a packet" huge.err
'

# classic pcap files are read in blocks and walked in place; pcapng goes through libpcap's reader
test_expect_success $P,EDITCAP 'pcapng: the same analysis as the pcap it was converted from' '
	editcap -F pcapng nak.pcap nak.pcapng &&
	"$FABSCOPE" pcap nak.pcapng --json | jq -S "del(.file)" >ng.json &&
	"$FABSCOPE" pcap nak.pcap --json | jq -S "del(.file)" >classic.json &&
	test_cmp classic.json ng.json &&
	head -c $(($(stat -c %s nak.pcapng) - 40)) nak.pcapng >torn.pcapng &&
	pcap_run tng.json torn.pcapng --json &&
	jq -e ".summary.packets == 24 and .summary.read_error != null" tng.json &&
	test_grep "ends inside a packet after 24 packets" tng.err
'

# tshark decodes UDP 4791 as RoCEv2 itself; its per-packet opcodes, QPs and PSNs and its
# count of NAKs must be what the flow table counted
test_expect_success $P,TSHARK 'tshark sees the same packets, QPs, PSNs and NAKs' '
	for f in nak cong read loss; do
		tshark -r $f.pcap -Y infiniband.bth -T fields -e infiniband.bth.destqp \
			2>/dev/null | sort | uniq -c | awk "{printf \"%s %d\\n\", \$2, \$1}" >$f.tshark || return 1
		jq -r ".flows[] | \"\(.qpn | ltrimstr(\"0x\") | ascii_downcase) \(.packets)\"" $f.pcap.json |
			sed "s/^0*\([0-9a-f]\)/0x\1/" | sort >$f.ours || return 1
		sed -i "s/^0x0*\([0-9a-f]\)/0x\1/" $f.tshark &&
		sort -o $f.tshark $f.tshark &&
		test_cmp $f.tshark $f.ours || return 1
	done &&
	tshark -r nak.pcap -Y "infiniband.aeth.syndrome == 0x60" 2>/dev/null | wc -l >naks.tshark &&
	test "$(cat naks.tshark)" = 1
'

test_done
