#!/usr/bin/env bash
test_description='pcap/lldp.c (test-tool lldp): LLDP frames dissected from heap buffers of exactly
their captured length - every TLV a switch sends (chassis and port IDs of each subtype, TTL, port
description, system name and description, management address, the 802.3 maximum frame size),
VLAN tags, bytes that are not printable written \xNN, the rules of the first three TLVs and of
TLVs that may appear once, a frame without its end TLV, another ethertype; a fuzz run of random
LLDPDUs at every cut and with bytes changed; discover/lldpd.c (test-tool lldpd-json0): the
neighbour table of lldpcli -f json0 as lldpd 1.0.16 writes it, read and fuzzed; a signal while it
waits for lldpcli neither takes it into a read that waits for ever nor past its deadline'
# asan: always: feeds untrusted bytes to C code: LLDP frames and lldpcli JSON
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL
P=TEST_TOOL

ETH=0180c200000e02000000000288cc

# tlv TYPE HEXVALUE: a TLV (type 7 bits, length 9 bits)
tlv() {
	local n=$((${#2} / 2))
	printf '%04x%s' $(($1 << 9 | n)) "$2"
}

# hexof TEXT: TEXT as hex
hexof() {
	printf '%s' "$1" | od -An -tx1 | tr -d ' \n'
}

CHASSIS=$(tlv 1 04020000000002)
PORT=$(tlv 2 05$(hexof swp7))
TTL=$(tlv 3 0078)
REST=$(tlv 4 $(hexof "leaf-1 port 7"))$(tlv 5 $(hexof leaf-1))$(tlv 6 $(hexof "Linux 6.1"))$(tlv 7 00140014)$(tlv 8 05010a0000090200000001 00)$(tlv 127 00120f042400)
END=0000

ld() { "$TEST_TOOL" lldp "$@"; }

field() {
	sed -n "s/^$1 //p" "$2"
}

test_expect_success $P 'a switch port as lldpd sends it: every field' '
	ld $ETH$CHASSIS$PORT$TTL$REST$END >out &&
	cat >expect <<-\EOF &&
	kind ok
	why -
	src 02:00:00:00:00:02
	chassis 4 02:00:00:00:00:02
	port 5 swp7
	ttl 120
	port_desc leaf-1 port 7
	sys_name leaf-1
	sys_desc Linux 6.1
	mgmt 10.0.0.9
	max_frame 9216
	tlvs 10
	EOF
	test_cmp expect out
'

test_expect_success $P 'IDs as addresses and MACs, two VLAN tags, text escaped' '
	ld 0180c200000e020000000002810000058100000688cc$(tlv 1 05010a000009)$(tlv 2 030200000000aa)$TTL$END >out &&
	test "$(field chassis out)" = "5 10.0.0.9" &&
	test "$(field port out)" = "3 02:00:00:00:00:aa" &&
	test "$(field kind out)" = ok &&
	ld $ETH$(tlv 1 07$(hexof "sw\\1"))$(tlv 2 07$(hexof p1))$TTL$(tlv 5 6c1b5b326a0a)$END >out &&
	test "$(field chassis out)" = "7 sw\\x5c1" &&
	test "$(field sys_name out)" = "l\\x1b[2j\\x0a" &&
	ld $ETH$(tlv 1 0402)$PORT$TTL$END >out &&
	test "$(field chassis out)" = "4 \\x02"
'

test_expect_success $P 'the rules: the first three TLVs in order, once each; an ID of 1 to 255 bytes' '
	ld $ETH$PORT$CHASSIS$TTL$END >out &&
	test "$(field kind out)" = bad && test "$(field why out)" = "the first TLV is not the chassis ID" &&
	ld $ETH$CHASSIS$TTL$PORT$END >out &&
	test "$(field why out)" = "the second TLV is not the port ID" &&
	ld $ETH$CHASSIS$PORT$(tlv 5 41)$END >out &&
	test "$(field why out)" = "the third TLV is not the TTL" &&
	ld $ETH$CHASSIS$PORT$TTL$(tlv 5 41)$(tlv 5 42)$END >out &&
	test "$(field why out)" = "a TLV that may appear once appears twice" &&
	ld $ETH$(tlv 1 04)$PORT$TTL$END >out &&
	test "$(field why out)" = "a chassis or port ID of a length outside 2..256" &&
	ld $ETH$CHASSIS$PORT$END >out &&
	test "$(field why out)" = "the LLDPDU ends before its chassis ID, port ID and TTL" &&
	ld $ETH$CHASSIS$END >out &&
	test "$(field why out)" = "the LLDPDU ends before its chassis ID, port ID and TTL"
'

test_expect_success $P 'cut short: truncated, with what came before; not LLDP: nothing read' '
	ld $ETH$CHASSIS$PORT$TTL >out &&
	test "$(field kind out)" = truncated &&
	test "$(field why out)" = "cut between TLVs, before the end TLV" &&
	test "$(field port out)" = "5 swp7" &&
	ld $ETH$CHASSIS$PORT${TTL%??} >out &&
	test "$(field why out)" = "cut inside a TLV" &&
	ld $ETH >out && test "$(field why out)" = "cut before the first TLV" &&
	ld 0180c200000e020000000002 >out && test "$(field kind out)" = not &&
	ld 0180c200000e0200000000020800$CHASSIS >out &&
	printf "kind not\nwhy -\n" >expect && test_cmp expect out
'

test_expect_success $P 'fuzz: 3000 random LLDPDUs, whole, at every cut and with bytes changed' '
	"$TEST_TOOL" lldp-fuzz 3000 225 >out &&
	cat out &&
	test_grep "^lldp-fuzz: 3000 frames: ok [0-9]*, bad [1-9][0-9]*, truncated [1-9][0-9]*, not [1-9][0-9]*$" out
'

LLDPD_DATA=$TEST_DIRECTORY/data/lldpd

test_expect_success $P 'lldpcli json0 of a leaf (lldpd 1.0.16): each neighbour, an interface without one' '
	"$TEST_TOOL" lldpd-json0 "$LLDPD_DATA/leaf-4-neighbours.json0" h2 s1 nosuch >out &&
	cat >expect <<-\EOF &&
	h2 sys=h2 chassis=4/96:66:23:db:0f:99 port=5/rail0 desc=rail0 ttl=4 mgmt=10.100.1.254 max_frame=-1
	s1 sys=s1 chassis=4/ce:ac:75:4a:21:cb port=5/l1.0 desc=l1.0 ttl=4 mgmt=10.250.1.2 max_frame=-1
	nosuch -
	EOF
	test_cmp expect out &&
	"$TEST_TOOL" lldpd-json0 "$LLDPD_DATA/host-2-neighbours.json0" rail1 >out &&
	test_grep "^rail1 sys=l1.1 chassis=4/[0-9a-f:]* port=5/h1 desc=h1 ttl=4" out
'

test_expect_success $P 'what is not json0 is refused; names with bytes that are not printable are escaped' '
	echo "{\"lldp\": {}}" >notarray.json &&
	test_expect_code 1 "$TEST_TOOL" lldpd-json0 notarray.json h1 >out &&
	test_grep "not json0" out &&
	printf "[1,2" >cut.json &&
	test_expect_code 1 "$TEST_TOOL" lldpd-json0 cut.json h1 &&
	jq ".lldp[0].interface[0].chassis[0].name[0].value = \"le\u001baf\\\\x\"" \
		"$LLDPD_DATA/leaf-4-neighbours.json0" >esc.json &&
	"$TEST_TOOL" lldpd-json0 esc.json h1 >out &&
	test_grep "^h1 sys=le\\\\x1baf\\\\x5cx " out
'

test_expect_success $P 'fuzz: 5000 documents made from a real one, values of other types, keys dropped, cut' '
	"$TEST_TOOL" lldpd-fuzz "$LLDPD_DATA/leaf-4-neighbours.json0" 5000 225 >out &&
	cat out &&
	test_grep "^lldpd-fuzz: 5000 documents: refused [1-9][0-9]*, read [1-9][0-9]*, neighbours [1-9][0-9]*$" out
'


# issue 41: EINTR from poll fell into a read that blocked for ever (an lldpcli that never answers)
test_lazy_prereq LLDPCLI 'command -v lldpcli'
test_lazy_prereq TEST_HOOKS '"$FABSCOPE" version | grep -q "test hooks"'
test_require_in_ci LLDPCLI TEST_HOOKS
test_expect_success TEST_TOOL,LLDPCLI,TEST_HOOKS 'a signal while lldpcli says nothing: it ends at its deadline, not in a read' '
	mkdir sock && chmod 755 sock &&
	FABSCOPE_TEST_LLDPCLI_TIMEOUT_MS=1000 timeout 20 "$TEST_TOOL" lldpd-eintr "$TRASH_DIRECTORY/sock" >out 2>err &&
	test_grep "^lldpd-eintr: refused after 1\.[0-9] s$" out &&
	test $(wc -l <err) = 1 && test_grep "lldpcli gave no answer in 1 s" err
'

test_done
