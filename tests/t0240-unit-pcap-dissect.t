#!/usr/bin/env bash
test_description='pcap/dissect.c (test-tool dissect, dissect-pcap, pcapgen, dissect-fuzz): RoCEv2
packets dissected from heap buffers of exactly their captured length - golden dissections written
byte by byte, every opcode of IBA table 38 with its headers, AETH syndromes (ACK credits, RNR
timers, NAK codes), ECN and DSCP, PSN wrap, every link type (Ethernet, VLAN and QinQ, Linux cooked
v1/v2, raw IP), IPv6 extension headers, IPv4 options and fragments, lengths that disagree with the
wire, PFC/PAUSE through the same call; every cut of several packets is truncated in the right
layer or whole; a fuzz run checked against the invariants of dissect-check.h; tshark (when
installed) agrees on every packet'
# asan: always: feeds untrusted bytes to C code: packets to the RoCEv2 dissector, and its fuzzer
. "$(dirname "$0")/test-lib.sh"

test_lazy_prereq TSHARK 'command -v tshark && command -v perl'
test_require_in_ci TEST_TOOL TSHARK
P=TEST_TOOL

tt() { "$TEST_TOOL" "$@"; }
# hexof [--link L] SPEC: the packet's captured bytes in hex (test-tool pcapgen --hex)
hexof() { "$TEST_TOOL" pcapgen --hex "$@"; }
# field NAME FILE: the value of NAME in test-tool dissect's output
field() { sed -n "s/^$1 //p" "$2"; }

# written byte by byte from the specs, not by pcapgen: an RC RDMA WRITE First on VLAN 100 PCP 3,
# DSCP 26 CE, SE, pad 2, AckReq, PSN 0xffffff, a 6-byte payload and an ICRC
WRITE_FIRST="020000000002 020000000001 8100 6064 0800
	456b0044 12344000 40110000 0a000001 0a000002
	c00012b7 00300000
	06a0ffff 00000011 80ffffff
	00007f0000001000 00001234 00001000
	010203040506 0000 deadbeef"
# UD SEND Only with Immediate over IPv6 (traffic class: DSCP 26, ECT(0); flow 0x12345)
UD_SEND="020000000002 020000000001 86dd
	66a12345 0028 11 40 fd000000000000000000000000000001 fd000000000000000000000000000002
	c00012b7 00280000
	6500ffff 00000123 00000007
	80010000 00000456 cafebabe
	aabbccdd 01020304"
# a CNP (BECN set, DSCP 48) for QP 0x11, and an RC NAK "PSN sequence error" with MSN 5
CNP="020000000001 020000000002 0800
	45c0003c 00004000 40110000 0a000002 0a000001
	c00012b7 00280000
	8100ffff 40000011 00000000
	00000000000000000000000000000000 00000000"
NAK="020000000001 020000000002 0800
	45000030 00004000 40110000 0a000002 0a000001
	c00012b7 001c0000
	1100ffff 00000011 00000064
	60000005 00000000"

test_expect_success $P 'RC RDMA WRITE First on a VLAN: every field, one per line' '
	tt dissect "$WRITE_FIRST" >out &&
	cat >expect <<-EOF &&
	linktype 1 EN10MB
	caplen 86
	wirelen 86
	layers ethernet vlan ipv4 udp bth reth
	truncated no
	used 74
	flags none
	link.dst 02:00:00:00:00:02
	link.src 02:00:00:00:00:01
	link.type 0x0800
	link.tags 1
	link.vlan 100
	link.pcp 3
	ip.version 4
	ip.src 10.0.0.1
	ip.dst 10.0.0.2
	ip.hlen 20
	ip.len 68
	ip.end 86
	ip.dscp 26
	ip.ecn 3 CE
	ip.ttl 64
	ip.proto 17
	ip.frag 0
	udp.sport 49152
	udp.dport 4791
	udp.len 48
	udp.end 86
	bth.opcode 0x06 RC RDMA_WRITE_FIRST
	bth.transport RC
	bth.position first
	bth.class request
	bth.se 1
	bth.m 0
	bth.pad 2
	bth.tver 0
	bth.pkey 0xffff
	bth.fecn 0
	bth.becn 0
	bth.dqpn 0x000011
	bth.ackreq 1
	bth.psn 16777215
	reth.va 0x00007f0000001000
	reth.rkey 0x00001234
	reth.dmalen 4096
	payload.off 74
	payload.len 6
	payload.cap 6
	icrc 0xdeadbeef
	EOF
	test_cmp expect out
'

test_expect_success $P 'UD SEND Only with Immediate over IPv6: DETH, ImmDt, traffic class, flow label' '
	tt dissect "$UD_SEND" >out &&
	sed -n "/^ip.version/,\$p" out >tail &&
	cat >expect <<-EOF &&
	ip.version 6
	ip.src fd00::1
	ip.dst fd00::2
	ip.hlen 40
	ip.len 80
	ip.end 94
	ip.dscp 26
	ip.ecn 2 ECT(0)
	ip.ttl 64
	ip.proto 17
	ip.flow 0x12345
	ip.ext 0
	ip.frag 0
	udp.sport 49152
	udp.dport 4791
	udp.len 40
	udp.end 94
	bth.opcode 0x65 UD SEND_ONLY_WITH_IMMEDIATE
	bth.transport UD
	bth.position only
	bth.class request
	bth.se 0
	bth.m 0
	bth.pad 0
	bth.tver 0
	bth.pkey 0xffff
	bth.fecn 0
	bth.becn 0
	bth.dqpn 0x000123
	bth.ackreq 0
	bth.psn 7
	deth.qkey 0x80010000
	deth.sqpn 0x000456
	immdt 0xcafebabe
	payload.off 86
	payload.len 4
	payload.cap 4
	icrc 0x01020304
	EOF
	test_cmp expect tail &&
	test "$(field layers out)" = "ethernet ipv6 udp bth deth immdt"
'

test_expect_success $P 'CNP: the 16 reserved bytes, BECN, the QP to slow down; a NAK' '
	tt dissect "$CNP" >cnp &&
	test "$(field layers cnp)" = "ethernet ipv4 udp bth cnp" &&
	test "$(field bth.opcode cnp)" = "0x81 CNP" &&
	test "$(field bth.transport cnp)" = CNP &&
	test "$(field bth.position cnp)" = none &&
	test "$(field bth.class cnp)" = - &&
	test "$(field bth.becn cnp)" = 1 &&
	test "$(field bth.fecn cnp)" = 0 &&
	test "$(field bth.dqpn cnp)" = 0x000011 &&
	test "$(field ip.dscp cnp)" = 48 &&
	test "$(field payload.off cnp)" = 70 &&
	test "$(field payload.len cnp)" = 0 &&
	test "$(field icrc cnp)" = 0x00000000 &&
	tt dissect "$NAK" >nak &&
	sed -n "/^bth.opcode/,\$p" nak >tail &&
	cat >expect <<-EOF &&
	bth.opcode 0x11 RC ACKNOWLEDGE
	bth.transport RC
	bth.position only
	bth.class response ack
	bth.se 0
	bth.m 0
	bth.pad 0
	bth.tver 0
	bth.pkey 0xffff
	bth.fecn 0
	bth.becn 0
	bth.dqpn 0x000011
	bth.ackreq 0
	bth.psn 100
	aeth.syndrome 0x60
	aeth.kind nak
	aeth.nak 0 psn-seq-error
	aeth.msn 5
	payload.off 58
	payload.len 0
	payload.cap 0
	icrc 0x00000000
	EOF
	test_cmp expect tail
'

test_expect_success $P 'every opcode: its name and its headers (IBA table 38); the others reserved' '
	for op in $(seq 0 255); do echo "bth op=$op qpn=$op psn=$((op * 65793))"; done >specs &&
	tt pcapgen ops.pcap - <specs >gen &&
	test_grep "^packets 256$" gen &&
	tt dissect-pcap ops.pcap >lines &&
	sed -E "s/.* layers=ethernet,ipv4,udp,([^ ]*) .* op=(0x..) name=([^ ]*) .*/\2 \3 \1/" lines |
		grep -v " reserved " >table &&
	cat >expect <<-EOF &&
	0x00 RC_SEND_FIRST bth
	0x01 RC_SEND_MIDDLE bth
	0x02 RC_SEND_LAST bth
	0x03 RC_SEND_LAST_WITH_IMMEDIATE bth,immdt
	0x04 RC_SEND_ONLY bth
	0x05 RC_SEND_ONLY_WITH_IMMEDIATE bth,immdt
	0x06 RC_RDMA_WRITE_FIRST bth,reth
	0x07 RC_RDMA_WRITE_MIDDLE bth
	0x08 RC_RDMA_WRITE_LAST bth
	0x09 RC_RDMA_WRITE_LAST_WITH_IMMEDIATE bth,immdt
	0x0a RC_RDMA_WRITE_ONLY bth,reth
	0x0b RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE bth,reth,immdt
	0x0c RC_RDMA_READ_REQUEST bth,reth
	0x0d RC_RDMA_READ_RESPONSE_FIRST bth,aeth
	0x0e RC_RDMA_READ_RESPONSE_MIDDLE bth
	0x0f RC_RDMA_READ_RESPONSE_LAST bth,aeth
	0x10 RC_RDMA_READ_RESPONSE_ONLY bth,aeth
	0x11 RC_ACKNOWLEDGE bth,aeth
	0x12 RC_ATOMIC_ACKNOWLEDGE bth,aeth,atomicacketh
	0x13 RC_COMPARE_SWAP bth,atomiceth
	0x14 RC_FETCH_ADD bth,atomiceth
	0x16 RC_SEND_LAST_WITH_INVALIDATE bth,ieth
	0x17 RC_SEND_ONLY_WITH_INVALIDATE bth,ieth
	0x1c RC_FLUSH bth,feth,reth
	0x1d RC_ATOMIC_WRITE bth,reth
	0x20 UC_SEND_FIRST bth
	0x21 UC_SEND_MIDDLE bth
	0x22 UC_SEND_LAST bth
	0x23 UC_SEND_LAST_WITH_IMMEDIATE bth,immdt
	0x24 UC_SEND_ONLY bth
	0x25 UC_SEND_ONLY_WITH_IMMEDIATE bth,immdt
	0x26 UC_RDMA_WRITE_FIRST bth,reth
	0x27 UC_RDMA_WRITE_MIDDLE bth
	0x28 UC_RDMA_WRITE_LAST bth
	0x29 UC_RDMA_WRITE_LAST_WITH_IMMEDIATE bth,immdt
	0x2a UC_RDMA_WRITE_ONLY bth,reth
	0x2b UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE bth,reth,immdt
	0x40 RD_SEND_FIRST bth,rdeth,deth
	0x41 RD_SEND_MIDDLE bth,rdeth,deth
	0x42 RD_SEND_LAST bth,rdeth,deth
	0x43 RD_SEND_LAST_WITH_IMMEDIATE bth,rdeth,deth,immdt
	0x44 RD_SEND_ONLY bth,rdeth,deth
	0x45 RD_SEND_ONLY_WITH_IMMEDIATE bth,rdeth,deth,immdt
	0x46 RD_RDMA_WRITE_FIRST bth,rdeth,deth,reth
	0x47 RD_RDMA_WRITE_MIDDLE bth,rdeth,deth
	0x48 RD_RDMA_WRITE_LAST bth,rdeth,deth
	0x49 RD_RDMA_WRITE_LAST_WITH_IMMEDIATE bth,rdeth,deth,immdt
	0x4a RD_RDMA_WRITE_ONLY bth,rdeth,deth,reth
	0x4b RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE bth,rdeth,deth,reth,immdt
	0x4c RD_RDMA_READ_REQUEST bth,rdeth,deth,reth
	0x4d RD_RDMA_READ_RESPONSE_FIRST bth,rdeth,aeth
	0x4e RD_RDMA_READ_RESPONSE_MIDDLE bth,rdeth
	0x4f RD_RDMA_READ_RESPONSE_LAST bth,rdeth,aeth
	0x50 RD_RDMA_READ_RESPONSE_ONLY bth,rdeth,aeth
	0x51 RD_ACKNOWLEDGE bth,rdeth,aeth
	0x52 RD_ATOMIC_ACKNOWLEDGE bth,rdeth,aeth,atomicacketh
	0x53 RD_COMPARE_SWAP bth,rdeth,deth,atomiceth
	0x54 RD_FETCH_ADD bth,rdeth,deth,atomiceth
	0x55 RD_RESYNC bth,rdeth,deth
	0x5c RD_FLUSH bth,rdeth,deth,feth,reth
	0x64 UD_SEND_ONLY bth,deth
	0x65 UD_SEND_ONLY_WITH_IMMEDIATE bth,deth,immdt
	0x81 CNP bth,cnp
	0xa0 XRC_SEND_FIRST bth,xrceth
	0xa1 XRC_SEND_MIDDLE bth,xrceth
	0xa2 XRC_SEND_LAST bth,xrceth
	0xa3 XRC_SEND_LAST_WITH_IMMEDIATE bth,xrceth,immdt
	0xa4 XRC_SEND_ONLY bth,xrceth
	0xa5 XRC_SEND_ONLY_WITH_IMMEDIATE bth,xrceth,immdt
	0xa6 XRC_RDMA_WRITE_FIRST bth,xrceth,reth
	0xa7 XRC_RDMA_WRITE_MIDDLE bth,xrceth
	0xa8 XRC_RDMA_WRITE_LAST bth,xrceth
	0xa9 XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE bth,xrceth,immdt
	0xaa XRC_RDMA_WRITE_ONLY bth,xrceth,reth
	0xab XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE bth,xrceth,reth,immdt
	0xac XRC_RDMA_READ_REQUEST bth,xrceth,reth
	0xad XRC_RDMA_READ_RESPONSE_FIRST bth,aeth
	0xae XRC_RDMA_READ_RESPONSE_MIDDLE bth
	0xaf XRC_RDMA_READ_RESPONSE_LAST bth,aeth
	0xb0 XRC_RDMA_READ_RESPONSE_ONLY bth,aeth
	0xb1 XRC_ACKNOWLEDGE bth,aeth
	0xb2 XRC_ATOMIC_ACKNOWLEDGE bth,aeth,atomicacketh
	0xb3 XRC_COMPARE_SWAP bth,xrceth,atomiceth
	0xb4 XRC_FETCH_ADD bth,xrceth,atomiceth
	0xb6 XRC_SEND_LAST_WITH_INVALIDATE bth,xrceth,ieth
	0xb7 XRC_SEND_ONLY_WITH_INVALIDATE bth,xrceth,ieth
	EOF
	test_cmp expect table &&
	grep " name=reserved " lines >reserved &&
	test "$(wc -l <reserved)" = 170 &&
	test_grep ! -v "layers=ethernet,ipv4,udp,bth .* flags=opcode$" reserved &&
	perl -ne "my (\$n) = /^(\\d+) /; my (\$q) = / qpn=0x(\\w+)/; my (\$p) = / psn=(\\d+)/;
		\$n--; print if hex(\$q) != \$n || \$p != \$n * 65793" lines >bad &&
	test_must_be_empty bad
'

test_expect_success $P 'opcode classes: requests, responses, read responses, acks, positions' '
	for s in "rc read_req" "rc read_resp_first" "rc read_resp_middle" "rc read_resp_only" \
		 "rc atomic_ack" "rc fetch_add" "uc write_last_imm" "xrc send_first" "rd resync" \
		 "rc flush" "rc atomic_write len=8"; do
		tt dissect "$(hexof "$s")" >o &&
		echo "$(field bth.opcode o | cut -d" " -f2-) | $(field bth.position o) | $(field bth.class o)" ||
		return 1
	done >classes &&
	cat >expect <<-EOF &&
	RC RDMA_READ_REQUEST | only | request
	RC RDMA_READ_RESPONSE_FIRST | first | response read-response
	RC RDMA_READ_RESPONSE_MIDDLE | middle | response read-response
	RC RDMA_READ_RESPONSE_ONLY | only | response read-response
	RC ATOMIC_ACKNOWLEDGE | only | response ack
	RC FETCH_ADD | only | request
	UC RDMA_WRITE_LAST_WITH_IMMEDIATE | last | request
	XRC SEND_FIRST | first | request
	RD RESYNC | only | request
	RC FLUSH | only | request
	RC ATOMIC_WRITE | only | request
	EOF
	test_cmp expect classes
'

test_expect_success $P 'every header of the opcodes that carry one, its fields in place' '
	tt dissect "$(hexof "rc cmp_swap va=0x1122334455667788 rkey=0x99 swap=0xa cmp=0xb")" >cs &&
	test "$(field atomiceth.va cs)" = 0x1122334455667788 &&
	test "$(field atomiceth.rkey cs)" = 0x00000099 &&
	test "$(field atomiceth.swap cs)" = 0x000000000000000a &&
	test "$(field atomiceth.cmp cs)" = 0x000000000000000b &&
	tt dissect "$(hexof "rc atomic_ack msn=0x123456 orig=0xfedcba9876543210")" >aa &&
	test "$(field layers aa)" = "ethernet ipv4 udp bth aeth atomicacketh" &&
	test "$(field aeth.msn aa)" = 1193046 &&
	test "$(field atomicacketh.orig aa)" = 0xfedcba9876543210 &&
	tt dissect "$(hexof "rc send_only_inv rkey=0xabcdef01 len=16")" >inv &&
	test "$(field ieth.rkey inv)" = 0xabcdef01 &&
	test "$(field payload.len inv)" = 16 &&
	tt dissect "$(hexof "rc write_only_imm va=1 rkey=2 dmalen=3 imm=0x04050607")" >wi &&
	test "$(field layers wi)" = "ethernet ipv4 udp bth reth immdt" &&
	test "$(field reth.dmalen wi)" = 3 &&
	test "$(field immdt wi)" = 0x04050607 &&
	tt dissect "$(hexof "rd send_first eecnxt=0xabcdef qkey=0x11 sqpn=0x22")" >rd &&
	test "$(field rdeth.eecnxt rd)" = 0xabcdef &&
	test "$(field deth.qkey rd)" = 0x00000011 &&
	test "$(field deth.sqpn rd)" = 0x000022 &&
	tt dissect "$(hexof "xrc write_first xrcsrq=0x654321 va=9")" >x &&
	test "$(field xrceth.xrcsrq x)" = 0x654321 &&
	test "$(field reth.va x)" = 0x0000000000000009 &&
	tt dissect "$(hexof "rc flush feth=0x1 va=0x1000 rkey=5 dmalen=64")" >fl &&
	test "$(field layers fl)" = "ethernet ipv4 udp bth feth reth" &&
	test "$(field feth fl)" = 0x00000001 &&
	test "$(field reth.va fl)" = 0x0000000000001000
'

test_expect_success $P 'AETH: ACK credit counts, RNR NAK timers (IBA table 45), every NAK code' '
	for c in 0 1 4 5 6 7 8 29 30 31; do
		tt dissect "$(hexof "ack credits=$c")" >o && field aeth.credits o || return 1
	done >credits &&
	printf "%s\n" "0 0" "1 1" "4 4" "5 6" "6 8" "7 12" "8 16" "29 24576" "30 32768" \
		"31 invalid" >expect &&
	test_cmp expect credits &&
	for c in $(seq 0 31); do
		tt dissect "$(hexof "ack rnr=$c")" >o && field aeth.rnr o || return 1
	done >rnr &&
	cat >expect <<-EOF &&
	0 655.36ms
	1 0.01ms
	2 0.02ms
	3 0.03ms
	4 0.04ms
	5 0.06ms
	6 0.08ms
	7 0.12ms
	8 0.16ms
	9 0.24ms
	10 0.32ms
	11 0.48ms
	12 0.64ms
	13 0.96ms
	14 1.28ms
	15 1.92ms
	16 2.56ms
	17 3.84ms
	18 5.12ms
	19 7.68ms
	20 10.24ms
	21 15.36ms
	22 20.48ms
	23 30.72ms
	24 40.96ms
	25 61.44ms
	26 81.92ms
	27 122.88ms
	28 163.84ms
	29 245.76ms
	30 327.68ms
	31 491.52ms
	EOF
	test_cmp expect rnr &&
	for n in seq inv access op rd 5 31; do
		tt dissect "$(hexof "ack nak=$n")" >o &&
		echo "$(field aeth.kind o) $(field aeth.nak o)" || return 1
	done >naks &&
	cat >expect <<-EOF &&
	nak 0 psn-seq-error
	nak 1 invalid-request
	nak 2 remote-access-error
	nak 3 remote-op-error
	nak 4 invalid-rd-request
	nak 5 reserved
	nak 31 reserved
	EOF
	test_cmp expect naks &&
	tt dissect "$(hexof "ack syndrome=0x45")" >res &&
	test "$(field aeth.kind res)" = reserved &&
	test "$(field aeth.value res)" = 5 &&
	tt dissect "$(hexof "rc read_resp_last rnr=14")" >rl &&
	test "$(field aeth.rnr rl)" = "14 1.28ms"
'

test_expect_success $P 'ECN and DSCP, IPv4 and IPv6; PSN wrap 0xfffffe -> 1' '
	for e in not ect1 ect0 ce; do
		tt dissect "$(hexof "rc send_only ecn=$e dscp=26")" >o4 &&
		tt dissect "$(hexof "rc send_only ecn=$e dscp=26 ipv6 flow=0xabcde")" >o6 &&
		echo "$(field ip.ecn o4) | $(field ip.ecn o6) | $(field ip.dscp o6) $(field ip.flow o6)" ||
		return 1
	done >ecn &&
	cat >expect <<-EOF &&
	0 Not-ECT | 0 Not-ECT | 26 0xabcde
	1 ECT(1) | 1 ECT(1) | 26 0xabcde
	2 ECT(0) | 2 ECT(0) | 26 0xabcde
	3 CE | 3 CE | 26 0xabcde
	EOF
	test_cmp expect ecn &&
	tt pcapgen wrap.pcap "rc write_middle psn=0xfffffe count=4 len=64" >/dev/null &&
	tt dissect-pcap wrap.pcap >lines &&
	sed -n "s/.* psn=\([0-9]*\).*/\1/p" lines >psns &&
	printf "%s\n" 16777214 16777215 0 1 >expect &&
	test_cmp expect psns
'

# layers L SPEC...: the layers of each packet, one line each (pcapgen on link L, dissect-pcap)
layers() {
	local link=$1
	shift
	tt pcapgen --link "$link" l.pcap "$@" >/dev/null &&
	tt dissect-pcap l.pcap | sed "s/.* layers=\([^ ]*\).*/\1/"
}

test_expect_success $P 'link types: cooked v1 and v2 (direction), raw IPv4/IPv6, DLT_IPV4/IPV6' '
	tt dissect --linktype 113 "$(hexof --link sll "rc send_only sll_type=4")" >sll &&
	test "$(field layers sll)" = "sll ipv4 udp bth" &&
	test "$(field sll.type sll)" = "4 outgoing" &&
	test "$(field sll.hatype sll)" = 1 &&
	test "$(field link.src sll)" = 02:00:00:00:00:01 &&
	test "$(field link.type sll)" = 0x0800 &&
	tt dissect --linktype 276 "$(hexof --link sll2 "ack ipv6 sll_type=0 ifindex=7")" >sll2 &&
	test "$(field layers sll2)" = "sll2 ipv6 udp bth aeth" &&
	test "$(field sll.type sll2)" = "0 host" &&
	test "$(field sll.ifindex sll2)" = 7 &&
	tt dissect --linktype 276 "$(hexof --link sll2 "cnp vlan=5 pcp=6")" >sll2v &&
	test "$(field layers sll2v)" = "sll2 vlan ipv4 udp bth cnp" &&
	test "$(field link.vlan sll2v)" = 5 &&
	test "$(field link.pcp sll2v)" = 6 &&
	for lt in 12 101 228; do
		tt dissect --linktype $lt "$(hexof --link raw "rc send_only")" >r &&
		test "$(field layers r)" = "ipv4 udp bth" || return 1
	done &&
	for lt in 12 101 229; do
		tt dissect --linktype $lt "$(hexof --link raw "rc send_only ipv6")" >r &&
		test "$(field layers r)" = "ipv6 udp bth" || return 1
	done &&
	tt dissect --linktype 228 "$(hexof --link raw "rc send_only ipv6")" >v4 &&
	test "$(field layers v4)" = none &&
	test "$(field flags v4)" = ip-version &&
	tt dissect --linktype 12 "00112233" >bad &&
	test "$(field flags bad)" = ip-version &&
	test "$(field used bad)" = 1 &&
	tt dissect --linktype 147 "$(hexof "rc send_only")" >unknown &&
	test "$(field linktype unknown)" = "147 unknown" &&
	test "$(field flags unknown)" = linktype &&
	test "$(field layers unknown)" = none &&
	# in pcap files: pcap_datalink() of each link type
	test "$(layers raw "rc send_only" "ack ipv6")" = "$(printf "ipv4,udp,bth\nipv6,udp,bth,aeth")" &&
	test "$(layers ipv6 "rc send_only")" = "ipv6,udp,bth" &&
	test "$(layers ipv4 "rc send_only")" = "ipv4,udp,bth" &&
	test "$(layers sll "cnp")" = "sll,ipv4,udp,bth,cnp" &&
	test "$(layers sll2 "cnp")" = "sll2,ipv4,udp,bth,cnp"
'

test_expect_success $P 'VLAN and QinQ: the outer tag kept; three tags not looked into' '
	tt dissect "$(hexof "rc send_only vlan=100 pcp=3")" >one &&
	test "$(field link.tags one)" = 1 &&
	test "$(field link.vlan one)" = 100 &&
	test "$(field link.pcp one)" = 3 &&
	for tpid in 0x8100 0x88a8 0x9100; do
		tt dissect "$(hexof "rc send_only vlan=200,100 tpid=$tpid,0x8100 pcp=5")" >two &&
		test "$(field layers two)" = "ethernet vlan ipv4 udp bth" &&
		test "$(field link.tags two)" = 2 &&
		test "$(field link.vlan two)" = 200 &&
		test "$(field link.pcp two)" = 5 || return 1
	done &&
	tt dissect "$(hexof "rc send_only vlan=1,2,3 tpid=0x88a8,0x8100,0x8100")" >three &&
	test "$(field layers three)" = "ethernet vlan" &&
	test "$(field flags three)" = tags &&
	test "$(field link.type three)" = 0x8100 &&
	test "$(field link.vlan three)" = 1
'

test_expect_success $P 'IPv6 extension headers skipped; a later fragment is not dissected further' '
	tt dissect "$(hexof "rc write_first ext=hop,rt,dst,ah qpn=0x42")" >ext &&
	test "$(field layers ext)" = "ethernet ipv6 ipv6-ext udp bth reth" &&
	test "$(field ip.ext ext)" = 4 &&
	test "$(field ip.hlen ext)" = 76 &&
	test "$(field ip.proto ext)" = 17 &&
	test "$(field bth.dqpn ext)" = 0x000042 &&
	test "$(field flags ext)" = none &&
	tt dissect "$(hexof "rc send_first ext=hop,frag mf")" >first &&
	test "$(field layers first)" = "ethernet ipv6 ipv6-ext udp bth" &&
	test "$(field flags first)" = frag &&
	test "$(field ip.frag first)" = "0 mf" &&
	tt dissect "$(hexof "rc send_first ext=frag frag=1024")" >later &&
	test "$(field layers later)" = "ethernet ipv6 ipv6-ext" &&
	test "$(field flags later)" = frag-later &&
	test "$(field ip.frag later)" = 1024 &&
	test "$(field ip.proto later)" = 17 &&
	tt dissect "$(hexof "rc send_only ext=hop,dst,dst,dst,dst,dst,dst,dst")" >eight &&
	test "$(field ip.ext eight)" = 8 &&
	test "$(field layers eight)" = "ethernet ipv6 ipv6-ext udp bth" &&
	# nine: one more than PKT_MAX_EXT is not followed
	tt dissect "$(hexof "rc send_only ext=hop,dst,dst,dst,dst,dst,dst,dst,dst")" >nine &&
	test "$(field flags nine)" = ipv6-ext &&
	test "$(field ip.ext nine)" = 8 &&
	test "$(field layers nine)" = "ethernet ipv6 ipv6-ext"
'

test_expect_success $P 'IPv4 options and fragments' '
	tt dissect "$(hexof "rc send_only ipopts=12 len=4")" >opts &&
	test "$(field ip.hlen opts)" = 32 &&
	test "$(field layers opts)" = "ethernet ipv4 udp bth" &&
	test "$(field payload.len opts)" = 4 &&
	tt dissect "$(hexof "rc send_first mf")" >first &&
	test "$(field flags first)" = frag &&
	test "$(field layers first)" = "ethernet ipv4 udp bth" &&
	tt dissect "$(hexof "rc send_first frag=1480")" >later &&
	test "$(field flags later)" = frag-later &&
	test "$(field layers later)" = "ethernet ipv4" &&
	test "$(field ip.frag later)" = 1480 &&
	test "$(field used later)" = 34 &&
	# a header length below 20 bytes
	h=$(hexof "rc send_only") &&
	tt dissect "${h:0:28}44${h:30}" >ihl &&
	test "$(field flags ihl)" = ip-hdr &&
	test "$(field layers ihl)" = ethernet
'

test_expect_success $P 'lengths: IP/UDP lengths against the wire, pad, snaplen cuts, the ICRC' '
	tt dissect "$(hexof "rc send_only len=100 pad=3")" >pad &&
	test "$(field payload.off pad)" = 54 &&
	test "$(field payload.len pad)" = 100 &&
	test "$(field payload.cap pad)" = 100 &&
	test "$(field icrc pad)" = 0x00000000 &&
	# the snaplen cuts the payload: the headers are all there, not truncated
	tt pcapgen cut.pcap "rc write_only len=1000 cut=128" "rc write_only len=1000 cut=1072" \
		"rc write_only len=1000 cut=1074" >/dev/null &&
	tt dissect-pcap -v cut.pcap >v &&
	test "$(field truncated v | sort -u)" = no &&
	test "$(field payload.len v | sort -u)" = 1000 &&
	test "$(field payload.cap v | tr "\n" " ")" = "58 1000 1000 " &&
	test "$(field icrc v | tr "\n" " ")" = "- - 0x00000000 " &&
	# an IP length beyond the wire: flagged, the wire used
	tt dissect "$(hexof "rc send_only len=8 iplen=1500")" >ip &&
	test "$(field flags ip)" = ip-len &&
	test "$(field ip.len ip)" = 1500 &&
	test "$(field ip.end ip)" = 66 &&
	test "$(field payload.len ip)" = 8 &&
	tt dissect "$(hexof "rc send_only iplen=0")" >tso &&
	test "$(field flags tso)" = ip-len,udp-len &&
	tt dissect "$(hexof "rc send_only len=8 udplen=2000")" >udp &&
	test "$(field flags udp)" = udp-len &&
	test "$(field udp.end udp)" = 66 &&
	test "$(field payload.len udp)" = 8 &&
	tt dissect "$(hexof "rc send_only len=8 udplen=20")" >short &&
	test "$(field flags short)" = udp-len,roce-len &&
	test "$(field payload.len short)" = 0 &&
	test "$(field icrc short)" = - &&
	tt dissect "$(hexof "rc send_only len=8 udplen=3")" >tiny &&
	test "$(field flags tiny)" = udp-len &&
	test "$(field payload.len tiny)" = 8 &&
	# Ethernet padding after a short datagram is not payload
	tt dissect "$(hexof "udp dport=53 len=2")" >dns &&
	test "$(field caplen dns)" = 60 &&
	test "$(field ip.end dns)" = 44 &&
	test "$(field layers dns)" = "ethernet ipv4 udp" &&
	# a wire length below the captured one
	tt dissect --wirelen 40 "$(hexof "rc send_only")" >wl &&
	test "$(field flags wl)" = wirelen &&
	test "$(field ip.end wl)" = 58 &&
	tt dissect "$(hexof "rc send_only tver=1")" >tver &&
	test "$(field flags tver)" = tver
'

test_expect_success $P 'PFC and PAUSE through the same call, tagged or not' '
	tt dissect "$(hexof "pfc prio=3,5 quanta=1000")" >pfc &&
	test "$(field layers pfc)" = "ethernet macctl" &&
	test "$(field mac.kind pfc)" = pfc &&
	test "$(field mac.opcode pfc)" = "0x0101 PFC" &&
	test "$(field mac.enable pfc)" = 0x28 &&
	test "$(field mac.quanta pfc)" = "0 0 0 1000 0 1000 0 0" &&
	test "$(field used pfc)" = 34 &&
	tt dissect "$(hexof "pause quanta=0xffff vlan=7 pcp=7")" >pause &&
	test "$(field layers pause)" = "ethernet vlan macctl" &&
	test "$(field mac.kind pause)" = pause &&
	test "$(field mac.quanta pause)" = 65535 &&
	test "$(field link.vlan pause)" = 7 &&
	tt dissect "0180c2000001 020000000001 8808 0002" >other &&
	test "$(field mac.kind other)" = other &&
	test "$(field mac.opcode other)" = "0x0002 GATE" &&
	test "$(field mac.flags other)" = short &&
	tt dissect "$(hexof "eth type=0x88cc len=10")" >lldp &&
	test "$(field layers lldp)" = ethernet &&
	test "$(field link.type lldp)" = 0x88cc
'

test_expect_success $P 'RoCEv2 on UDP 4791 only, unless another port is given' '
	h=$(hexof "rc send_only dport=4789") &&
	tt dissect "$h" >vx &&
	test "$(field layers vx)" = "ethernet ipv4 udp" &&
	test "$(field udp.dport vx)" = 4789 &&
	tt dissect --port 4789 "$h" >port &&
	test "$(field layers port)" = "ethernet ipv4 udp bth" &&
	tt dissect --port 4789 "$(hexof "rc send_only")" >still &&
	test "$(field layers still)" = "ethernet ipv4 udp bth" &&
	tt dissect "$(hexof "rc send_only sport=4791 dport=5000")" >src &&
	test "$(field layers src)" = "ethernet ipv4 udp"
'

# cuts NAME HEX [--linktype N] RANGES...: the packet cut at every length from 0 to its own (test-tool
# dissect --cuts, each cut in a heap buffer of its length); RANGES are "BELOW:LAYER": a cut
# shorter than BELOW bytes is truncated in LAYER needing BELOW (the first range that fits); a cut
# at least as long as the last BELOW is whole, with the layers WHOLE (the last argument)
cuts() {
	local name=$1 hex=$2 lt=$3 len l r below layer want
	shift 3
	local whole=${!#}
	len=$(($(echo "$hex" | tr -dc 0-9a-f | wc -c) / 2))
	for ((l = 0; l <= len; l++)); do
		want="$l whole $whole"
		for r in "${@:1:$#-1}"; do
			IFS=: read -r below layer <<<"$r"
			if ((l < below)); then
				want="$l truncated $layer $below"
				break
			fi
		done
		echo "$want"
	done >"$name.expect" &&
	tt dissect --linktype "$lt" --cuts "$hex" >"$name.cuts" &&
	test_cmp "$name.expect" "$name.cuts"
}

test_expect_success $P 'every cut: truncated in the right layer needing the right bytes, or whole' '
	cuts write "$WRITE_FIRST" 1 14:ethernet 18:vlan 38:ipv4 46:udp 58:bth 74:reth \
		ethernet,vlan,ipv4,udp,bth,reth &&
	cuts ud "$UD_SEND" 1 14:ethernet 54:ipv6 62:udp 74:bth 82:deth 86:immdt \
		ethernet,ipv6,udp,bth,deth,immdt &&
	cuts cnp "$(hexof --link sll2 "cnp")" 276 20:sll2 40:ipv4 48:udp 60:bth 76:cnp \
		sll2,ipv4,udp,bth,cnp &&
	cuts atomic "$(hexof --link raw "rc cmp_swap ipopts=8")" 12 1:ipv4 20:ipv4 28:ipv4 36:udp \
		48:bth 76:atomiceth ipv4,udp,bth,atomiceth &&
	cuts qinq "$(hexof "pfc prio=1 quanta=9 vlan=1,2 tpid=0x88a8,0x8100")" 1 14:ethernet \
		18:vlan 22:vlan 24:macctl 42:macctl ethernet,vlan,macctl &&
	cuts ext "$(hexof "ack ext=hop,frag mf ipv6")" 1 14:ethernet 54:ipv6 62:ipv6-ext \
		70:ipv6-ext 78:udp 90:bth 94:aeth ethernet,ipv6,ipv6-ext,udp,bth,aeth &&
	cuts sll "$(hexof --link sll "rd atomic_ack")" 113 16:sll 36:ipv4 44:udp 56:bth 60:rdeth \
		64:aeth 72:atomicacketh sll,ipv4,udp,bth,rdeth,aeth,atomicacketh
'

test_expect_success $P 'fuzz: 200000 mutated packets of every kind, every invariant holds' '
	tt dissect-fuzz 200000 1 >out 2>err &&
	test_must_be_empty err &&
	test_grep "^packets 200000$" out &&
	for k in truncated whole roce cnp macctl vlan ipv6-ext unknown-link payload-cut \
		 icrc-captured cut.ethernet cut.vlan cut.sll cut.sll2 cut.macctl cut.ipv4 cut.ipv6 \
		 cut.ipv6-ext cut.udp cut.bth cut.rdeth cut.deth cut.xrceth cut.feth cut.reth \
		 cut.atomiceth cut.aeth cut.atomicacketh cut.immdt cut.ieth cut.cnp; do
		test_grep "^$k [1-9][0-9]*$" out || return 1
	done &&
	tt dissect-fuzz --port 4789 50000 987654321 >out2 &&
	test_grep "^packets 50000$" out2
'

# normalized FILE: per packet "opcode qpn psn" and the extended header fields tshark shows
# (va rkey dmalen syndrome msn qkey srcqp immdt ieth swap cmp orig), decimal, "-" where absent;
# from test-tool dissect-pcap -v and from tshark
ours() {
	tt dissect-pcap -v "$1" | perl -ne '
		BEGIN { @k = qw(op qp psn va rkey dmalen syn msn qkey sqpn imm ieth swap cmp orig) }
		sub out { print join(" ", map { $f{$_} // "-" } @k), "\n" if $n; %f = () }
		if (/^packet /) { out(); $n = 1; next }
		my ($key, $v) = /^(\S+) (\S+)/ or next;
		my %map = ("bth.opcode" => "op", "bth.dqpn" => "qp", "bth.psn" => "psn",
			"reth.va" => "va", "atomiceth.va" => "va", "reth.rkey" => "rkey",
			"atomiceth.rkey" => "rkey", "reth.dmalen" => "dmalen",
			"aeth.syndrome" => "syn", "aeth.msn" => "msn", "deth.qkey" => "qkey",
			"deth.sqpn" => "sqpn", "immdt" => "imm", "ieth.rkey" => "ieth",
			"atomiceth.swap" => "swap", "atomiceth.cmp" => "cmp",
			"atomicacketh.orig" => "orig");
		$f{$map{$key}} = $v =~ /^0x/ ? hex($v) : $v if $map{$key};
		END { out() }'
}
theirs() {
	tshark -r "$1" -T fields -E occurrence=f -e infiniband.bth.opcode -e infiniband.bth.destqp \
		-e infiniband.bth.psn -e infiniband.reth.va -e infiniband.reth.r_key \
		-e infiniband.reth.dmalen -e infiniband.aeth.syndrome -e infiniband.aeth.msn \
		-e infiniband.deth.q_key -e infiniband.deth.srcqp -e infiniband.immdt \
		-e infiniband.ieth -e infiniband.atomiceth.swapdt -e infiniband.atomiceth.cmpdt \
		-e infiniband.atomicacketh.origremdt 2>tshark.err |
	perl -ne '
		chomp; my @f = split /\t/, $_, -1; $#f = 14;
		for my $i (0 .. 14) {
			my $v = $f[$i] // "";
			$f[$i] = $v eq "" ? "-" : $v =~ /^0x/ || $i == 10 || $i == 11 ? hex($v) : $v;
		}
		print join(" ", @f), "\n"'
}
# compare OURS THEIRS: the same opcode, QP and PSN on every packet; the extended header fields
# too where tshark 4 decodes them right (RC, UC, UD; not its RD, XRC, FLUSH, ATOMIC WRITE)
compare() {
	paste -d"|" "$1" "$2" | perl -ne '
		chomp; my ($a, $b) = split /\|/;
		my @a = split / /, $a; my @b = split / /, $b;
		my $op = $a[0]; my $all = $op ne "-" && ($op < 0x18 || ($op >= 0x20 && $op < 0x2c) ||
			$op == 0x64 || $op == 0x65);
		my $n = $all ? 15 : 3;
		print "packet $.: ours $a, tshark $b\n" if join(" ", @a[0 .. $n - 1]) ne join(" ", @b[0 .. $n - 1]);
		'
}

# (at least 4 bytes of payload: tshark 4.0 throws on a reserved opcode with less)
test_expect_success $P,TSHARK 'tshark agrees: every opcode with distinctive fields' '
	for op in $(seq 0 255); do
		echo "bth op=$op qpn=$((op * 3 + 1)) psn=$((op * 65793)) va=0x1122334455667788" \
		     "rkey=0xaabbccdd dmalen=4096 qkey=0x11111111 sqpn=0x222222 eecnxt=0x333333" \
		     "imm=0x44444444 swap=0x5555555555555555 cmp=0x6666666666666666" \
		     "orig=0x7777777777777777 syndrome=$((op % 128)) msn=$((op * 99)) len=$((op % 9 + 4))"
	done >specs &&
	tt pcapgen all.pcap - <specs >/dev/null &&
	ours all.pcap >ours &&
	theirs all.pcap >theirs &&
	test "$(wc -l <ours)" = 256 &&
	test "$(wc -l <theirs)" = 256 &&
	compare ours theirs >diff &&
	test_must_be_empty diff
'

test_expect_success $P,TSHARK 'tshark agrees: link types, VLAN/QinQ, IPv6 extensions, PSN wrap' '
	cat >mixed <<-EOF &&
	rc write_first qpn=0x11 psn=0xfffffe len=1024 ecn=ce va=0x10 rkey=0x20 dmalen=4096
	rc write_middle qpn=0x11 psn=0xffffff len=1024
	rc write_last qpn=0x11 psn=0 len=1024 ackreq
	ack qpn=0x12 psn=1 msn=3
	ack qpn=0x12 psn=2 nak=seq
	ack qpn=0x12 psn=3 rnr=14
	cnp qpn=0x11 becn
	rc send_only vlan=100 pcp=3 qpn=0x13 psn=77
	rc send_only vlan=200,100 tpid=0x88a8,0x8100 qpn=0x14 psn=78
	rc read_req ipv6 ext=hop,dst qpn=0x15 psn=79 va=0x99 rkey=0x98 dmalen=65536
	rc read_resp_only ipv6 qpn=0x16 psn=79 len=512 msn=4
	ud send_only_imm qkey=0x80010000 sqpn=1 qpn=1 imm=0xbeef len=256
	pfc prio=3 quanta=1000
	udp dport=53 len=20
	EOF
	for link in eth sll sll2 raw; do
		grep -v "^pfc" mixed | { test $link = eth && cat mixed || grep -v -e vlan= -e ^pfc; } >m.$link &&
		tt pcapgen --link $link m.$link.pcap - <m.$link >/dev/null &&
		ours m.$link.pcap >ours.$link &&
		theirs m.$link.pcap >theirs.$link &&
		test "$(wc -l <ours.$link)" = "$(wc -l <m.$link)" &&
		compare ours.$link theirs.$link >diff.$link &&
		test_must_be_empty diff.$link || return 1
	done
'

test_expect_success $P 'bad input: one line, exit 2' '
	test_expect_exit 2 tt dissect >out 2>err &&
	test_grep "usage: test-tool dissect" err &&
	test_expect_exit 2 tt dissect 0a0 >out 2>err &&
	test_grep "odd number of hex digits (3)" err &&
	test_expect_exit 2 tt dissect 0g >out 2>err &&
	test_grep "'"'"'g'"'"' is not a hex digit" err &&
	test "$(wc -l <err)" = 1 &&
	test_must_be_empty out &&
	test_expect_exit 2 tt pcapgen x.pcap "rc nosuch" 2>err &&
	test_grep "'"'"'rc nosuch'"'"' is not an opcode" err &&
	test_expect_exit 2 tt pcapgen x.pcap "rc send_only psn=0x1000000" 2>err &&
	test_grep "psn: '"'"'0x1000000'"'"' is not an integer in \[0, 16777215\]" err &&
	test_expect_exit 2 tt pcapgen --link raw x.pcap "pfc" 2>err &&
	test_grep "no link layer to carry it" err &&
	test_expect_exit 2 tt pcapgen x.pcap "rc send_only bogus" 2>err &&
	test_grep "'"'"'bogus'"'"' is not a word of a packet spec" err &&
	test_expect_exit 2 tt dissect-pcap nosuch.pcap 2>err &&
	test_grep "unable to read '"'"'nosuch.pcap'"'"'" err &&
	test_expect_exit 2 tt dissect-fuzz 10 2>err &&
	test_grep "usage: test-tool dissect-fuzz" err
'

test_done
