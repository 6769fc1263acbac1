#!/usr/bin/env bash
test_description='pcap/macctl.c (test-tool macctl): MAC control frames dissected from heap buffers
of exactly their captured length - PFC with several class-enable vectors, 802.3x PAUSE, one and
two VLAN tags of each TPID, three tags (not looked into), a destination other than
01:80:c2:00:00:01 and reserved vector bits (flagged, still parsed), other opcodes, another
ethertype, short frames and snaplen cuts; every cut from 0 bytes to the whole frame is truncated
(needing the right number of bytes) or the whole result, never more; quanta in seconds; a fuzz
run checked against a second walk of the bytes'
# asan: always: feeds untrusted bytes to C code: MAC control (PFC, PAUSE) frames
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL
P=TEST_TOOL

DST=0180c2000001
SRC=02000000000b

# pad HEX: HEX with zero bytes up to the 60-byte minimum frame
pad() {
	local h=$1
	while [ ${#h} -lt 120 ]; do h=${h}00; done
	echo "$h"
}

# pfc VECTOR T0 ... T7: opcode and body of a PFC frame; VECTOR is the 2-byte class-enable
# vector in hex (high byte reserved), the times decimal or 0x hex
pfc() {
	local v=$1 t
	shift
	printf '0101%s' "$v"
	for t; do printf '%04x' "$t"; done
}

# tag TPID PCP VID: a VLAN tag (4 bytes)
tag() {
	printf '%s%04x' "$1" $(($2 << 13 | $3))
}

mc() { "$TEST_TOOL" macctl "$@"; }

# field NAME FILE: the value of NAME in test-tool macctl's output
field() {
	sed -n "s/^$1 //p" "$2"
}

test_expect_success $P 'PFC: every field, one per line' '
	mc $(pad $DST${SRC}8808$(pfc 0008 0 0 0 1000 0 0 0 0)) >out &&
	cat >expect <<-EOF &&
	kind pfc
	needed -
	at -
	caplen 60
	wirelen 60
	dst 01:80:c2:00:00:01
	src 02:00:00:00:00:0b
	tags 0
	vlan -
	pcp -
	ethertype 0x8808
	opcode 0x0101 PFC
	enable 0x08 3
	reserved 0x00
	quanta 0 0 0 1000 0 0 0 0
	flags none
	EOF
	test_cmp expect out
'

test_expect_success $P 'PFC: class-enable vectors, times of priorities not enabled still read' '
	mc $(pad $DST${SRC}8808$(pfc 00ff 1 2 3 4 5 6 7 0xffff)) >all &&
	test "$(field enable all)" = "0xff 0 1 2 3 4 5 6 7" &&
	test "$(field quanta all)" = "1 2 3 4 5 6 7 65535" &&
	mc $(pad $DST${SRC}8808$(pfc 0081 0xffff 9 9 9 9 9 9 0)) >ends &&
	test "$(field enable ends)" = "0x81 0 7" &&
	test "$(field quanta ends)" = "65535 9 9 9 9 9 9 0" &&
	mc $(pad $DST${SRC}8808$(pfc 0000 5 0 0 0 0 0 0 0)) >none &&
	test "$(field kind none)" = pfc &&
	test "$(field enable none)" = 0x00 &&
	test "$(field quanta none)" = "5 0 0 0 0 0 0 0" &&
	test "$(field flags none)" = none &&
	mc $(pad $DST${SRC}8808$(pfc 0024 0 0 0x8000 0 0 0x1234 0 0)) >two &&
	test "$(field enable two)" = "0x24 2 5" &&
	test "$(field quanta two)" = "0 0 32768 0 0 4660 0 0"
'

test_expect_success $P 'PFC: reserved bits of the vector are flagged, the frame still parsed' '
	mc $(pad $DST${SRC}8808$(pfc 0108 0 0 0 77 0 0 0 0)) >out &&
	test "$(field kind out)" = pfc &&
	test "$(field enable out)" = "0x08 3" &&
	test "$(field reserved out)" = 0x01 &&
	test "$(field quanta out)" = "0 0 0 77 0 0 0 0" &&
	test "$(field flags out)" = reserved &&
	mc $(pad $DST${SRC}8808$(pfc ff00 0 0 0 0 0 0 0 0)) >out2 &&
	test "$(field reserved out2)" = 0xff &&
	test "$(field flags out2)" = reserved
'

test_expect_success $P 'PAUSE: one time, no vector' '
	mc $(pad $DST${SRC}88080001ffff) >out &&
	cat >expect <<-EOF &&
	kind pause
	needed -
	at -
	caplen 60
	wirelen 60
	dst 01:80:c2:00:00:01
	src 02:00:00:00:00:0b
	tags 0
	vlan -
	pcp -
	ethertype 0x8808
	opcode 0x0001 PAUSE
	enable -
	reserved -
	quanta 65535
	flags none
	EOF
	test_cmp expect out &&
	mc $(pad $DST${SRC}880800010000) >xon &&
	test "$(field kind xon)" = pause &&
	test "$(field quanta xon)" = 0
'

test_expect_success $P 'a destination other than 01:80:c2:00:00:01 is flagged, still parsed' '
	mc $(pad 020000000001${SRC}8808$(pfc 0002 0 500 0 0 0 0 0 0)) >out &&
	test "$(field kind out)" = pfc &&
	test "$(field dst out)" = 02:00:00:00:00:01 &&
	test "$(field quanta out)" = "0 500 0 0 0 0 0 0" &&
	test "$(field flags out)" = dst &&
	mc $(pad ffffffffffff${SRC}880800010100) >pause &&
	test "$(field kind pause)" = pause &&
	test "$(field flags pause)" = dst &&
	mc $(pad 020000000001${SRC}8808$(pfc 0102 0 1 0 0 0 0 0 0)) >both &&
	test "$(field flags both)" = dst,reserved
'

test_expect_success $P 'one VLAN tag of each TPID: the VLAN id and PCP kept' '
	for tpid in 8100 88a8 9100; do
		mc $(pad $DST$SRC$(tag $tpid 3 100)8808$(pfc 0010 0 0 0 0 300 0 0 0)) >out &&
		test "$(field kind out)" = pfc &&
		test "$(field tags out)" = 1 &&
		test "$(field vlan out)" = 100 &&
		test "$(field pcp out)" = 3 &&
		test "$(field enable out)" = "0x10 4" &&
		test "$(field quanta out)" = "0 0 0 0 300 0 0 0" || return 1
	done &&
	# VLAN 0 (priority tagged) and 4095, PCP 0 and 7
	mc $(pad $DST$SRC$(tag 8100 7 0)880800010001) >p0 &&
	test "$(field vlan p0)" = 0 && test "$(field pcp p0)" = 7 &&
	test "$(field kind p0)" = pause &&
	mc $(pad $DST$SRC$(tag 8100 0 4095)880800010001) >p1 &&
	test "$(field vlan p1)" = 4095 && test "$(field pcp p1)" = 0 &&
	# the DEI bit is neither VLAN nor PCP
	mc $(pad ${DST}${SRC}8100$(printf %04x $((5 << 13 | 1 << 12 | 42)))880800010001) >dei &&
	test "$(field vlan dei)" = 42 && test "$(field pcp dei)" = 5
'

test_expect_success $P 'two tags: the outer one is kept; a third is not looked into' '
	mc $(pad $DST$SRC$(tag 88a8 5 200)$(tag 8100 3 100)8808$(pfc 0040 0 0 0 0 0 0 0xffff 0)) >out &&
	cat >expect <<-EOF &&
	kind pfc
	needed -
	at -
	caplen 60
	wirelen 60
	dst 01:80:c2:00:00:01
	src 02:00:00:00:00:0b
	tags 2
	vlan 200
	pcp 5
	ethertype 0x8808
	opcode 0x0101 PFC
	enable 0x40 6
	reserved 0x00
	quanta 0 0 0 0 0 0 65535 0
	flags none
	EOF
	test_cmp expect out &&
	mc $(pad $DST$SRC$(tag 9100 1 7)$(tag 9100 2 8)880800010005) >qinq &&
	test "$(field tags qinq)" = 2 && test "$(field vlan qinq)" = 7 &&
	test "$(field pcp qinq)" = 1 && test "$(field kind qinq)" = pause &&
	mc $(pad $DST$SRC$(tag 88a8 1 1)$(tag 8100 2 2)$(tag 8100 3 3)880800010005) >three &&
	test "$(field kind three)" = not-mac-control &&
	test "$(field tags three)" = 2 &&
	test "$(field vlan three)" = 1 &&
	test "$(field ethertype three)" = 0x8100 &&
	test "$(field opcode three)" = - &&
	test "$(field flags three)" = tags
'

test_expect_success $P 'other MAC control opcodes: named when 802.3 names them' '
	mc $(pad $DST${SRC}88080002) >gate &&
	test "$(field kind gate)" = other &&
	test "$(field opcode gate)" = "0x0002 GATE" &&
	test "$(field quanta gate)" = - &&
	mc $(pad $DST${SRC}8808fffe) >ext &&
	test "$(field opcode ext)" = "0xfffe EXTENSION" &&
	mc $(pad 02000000000c${SRC}88081234) >unk &&
	test "$(field kind unk)" = other &&
	test "$(field opcode unk)" = "0x1234 unknown" &&
	test "$(field flags unk)" = dst &&
	# the opcodes of PFC and PAUSE byte-swapped are not them
	mc $(pad $DST${SRC}88080100) >swapped &&
	test "$(field kind swapped)" = other
'

test_expect_success $P 'another ethertype is not MAC control, whatever follows' '
	mc $(pad $DST${SRC}0800$(pfc 00ff 1 1 1 1 1 1 1 1)) >ip &&
	test "$(field kind ip)" = not-mac-control &&
	test "$(field ethertype ip)" = 0x0800 &&
	test "$(field opcode ip)" = - &&
	test "$(field quanta ip)" = - &&
	test "$(field flags ip)" = none &&
	# 0x8809 (slow protocols, LACP) is not 0x8808; a tagged IPv6 frame neither
	mc $(pad $DST${SRC}88090101) >slow &&
	test "$(field kind slow)" = not-mac-control &&
	mc $(pad $DST$SRC$(tag 8100 0 10)86dd) >v6 &&
	test "$(field kind v6)" = not-mac-control &&
	test "$(field ethertype v6)" = 0x86dd &&
	test "$(field vlan v6)" = 10
'

test_expect_success $P 'short frames and snaplen cuts' '
	# an unpadded PFC frame: whole, but shorter than 60 bytes on the wire
	mc $DST${SRC}8808$(pfc 0001 9 0 0 0 0 0 0 0) >short &&
	test "$(field kind short)" = pfc &&
	test "$(field caplen short)" = 34 &&
	test "$(field flags short)" = short &&
	# 40 bytes of a 60-byte frame captured: the fields are all there
	f=$(pad $DST${SRC}8808$(pfc 0001 9 0 0 0 0 0 0 0)) &&
	mc --wirelen 60 ${f:0:80} >cut &&
	test "$(field kind cut)" = pfc &&
	test "$(field wirelen cut)" = 60 &&
	test "$(field flags cut)" = none &&
	# 30 bytes: the capture stops inside the times
	mc --wirelen 60 ${f:0:60} >cut2 &&
	cat >expect <<-EOF &&
	kind truncated
	needed 34
	at pfc
	caplen 30
	wirelen 60
	dst -
	src -
	tags -
	vlan -
	pcp -
	ethertype -
	opcode -
	enable -
	reserved -
	quanta -
	flags -
	EOF
	test_cmp expect cut2
'

# cuts NAME HEX RANGES...: the frame cut at every length from 0 to its own (test-tool macctl
# --cuts, each cut in a buffer of its length); RANGES are "BELOW:NEEDED:AT": a cut shorter than
# BELOW bytes is truncated needing NEEDED at AT (the first range that fits); a cut at least as
# long as the last BELOW gives the result of the whole frame
cuts() {
	local name=$1 hex=$2 len=$((${#2} / 2)) l r below needed at want
	shift 2
	for ((l = 0; l <= len; l++)); do
		want="$l whole"
		for r; do
			IFS=: read -r below needed at <<<"$r"
			if ((l < below)); then
				want="$l truncated $needed $at"
				break
			fi
		done
		echo "$want"
	done >"$name.expect" &&
	mc --cuts "$hex" >"$name.cuts" &&
	test_cmp "$name.expect" "$name.cuts"
}

test_expect_success $P 'every cut of a double-tagged PFC frame' '
	cuts qpfc $(pad $DST$SRC$(tag 88a8 5 200)$(tag 8100 3 100)8808$(pfc 0040 0 0 0 0 0 0 0xffff 0)) \
		14:14:ethernet 18:18:vlan 22:22:vlan 24:24:opcode 42:42:pfc &&
	test "$(wc -l <qpfc.cuts)" = 61
'

test_expect_success $P 'every cut of a PAUSE frame, a tagged one, another opcode, an IPv4 frame' '
	cuts pause $(pad $DST${SRC}88080001abcd) 14:14:ethernet 16:16:opcode 18:18:pause &&
	mc --wirelen 60 $DST${SRC}88080001abcd >pause18 &&
	test "$(field kind pause18)" = pause &&
	test "$(field quanta pause18)" = 43981 &&
	cuts tpause $(pad $DST$SRC$(tag 8100 2 5)88080001abcd) \
		14:14:ethernet 18:18:vlan 20:20:opcode 22:22:pause &&
	cuts gate $(pad $DST${SRC}88080002) 14:14:ethernet 16:16:opcode &&
	cuts ip $(pad $DST${SRC}0800) 14:14:ethernet &&
	cuts three $(pad $DST$SRC$(tag 88a8 1 1)$(tag 8100 2 2)$(tag 8100 3 3)8808) \
		14:14:ethernet 18:18:vlan 22:22:vlan &&
	# an unpadded PFC frame on a wire as short: every cut, the whole one flagged short
	cuts unpadded $DST${SRC}8808$(pfc 0001 9 0 0 0 0 0 0 0) \
		14:14:ethernet 16:16:opcode 34:34:pfc
'

test_expect_success $P 'quanta in seconds: 512 bit times each at the link speed, unknown speed NAN' '
	f=$(pad $DST${SRC}8808$(pfc 0081 0xffff 0 0 0 0 0 0 1)) &&
	mc --link-gbps 100 $f >s100 &&
	test "$(field time_s s100)" = "0.0003355392 0 0 0 0 0 0 5.12e-09" &&
	mc --link-gbps 0.001 $f >slow &&
	test "$(field time_s slow)" = "33.55392 0 0 0 0 0 0 0.000512" &&
	mc --link-gbps 0 $f >zero &&
	test "$(field time_s zero)" = "nan nan nan nan nan nan nan nan" &&
	mc --link-gbps 25 $(pad $DST${SRC}880800010100) >p25 &&
	test "$(field time_s p25)" = 5.24288e-06 &&
	mc --link-gbps 25 $(pad $DST${SRC}0800) >ip &&
	test "$(field time_s ip)" = -
'

test_expect_success $P 'fuzz: 200000 random and mutated frames, each kind reached' '
	"$TEST_TOOL" macctl-fuzz 200000 1 >out 2>err &&
	test_must_be_empty err &&
	test_grep "^frames 200000$" out &&
	for k in not-mac-control pfc pause other truncated; do
		test_grep "^$k [1-9][0-9]*$" out || return 1
	done &&
	"$TEST_TOOL" macctl-fuzz 50000 987654321 >out2 &&
	test_grep "^frames 50000$" out2
'

test_expect_success $P 'bad input: one line, exit 2' '
	test_expect_exit 2 mc 0180c2 0001 >out 2>err &&
	test_grep "usage: test-tool macctl" err &&
	test_expect_exit 2 mc 0180c2000 >out 2>err &&
	test_grep "odd number of hex digits (9)" err &&
	test_expect_exit 2 mc 0180zz >out 2>err &&
	test_grep "'"'"'z'"'"' is not a hex digit" err &&
	test "$(wc -l <err)" = 1 &&
	test_must_be_empty out &&
	test_expect_exit 2 "$TEST_TOOL" macctl-fuzz 10 >out 2>err &&
	test_grep "usage: test-tool macctl-fuzz N SEED" err
'

test_done
