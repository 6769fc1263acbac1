#!/usr/bin/env bash
test_description='core/hmac (HMAC-SHA256 through Nettle): RFC 4231 and the RFC 2104 construction
built from sha256sum, one-shot and in parts, constant-time comparison, hex in and out, random bytes'
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL

# unhex HEX: the bytes, on stdout (through the printf builtin's \xHH: no xxd, no process)
unhex() {
	local i esc=""
	for ((i = 0; i < ${#1}; i += 2)); do
		esc+="\\x${1:i:2}"
	done
	printf "$esc"
}

# sha_hex HEX: sha256sum's digest of the bytes, in $sha_hex (one process, through a file)
sha_hex() {
	unhex "$1" >.sha-in &&
	sha_hex=$(sha256sum .sha-in) &&
	sha_hex=${sha_hex%% *}
}

# hmac_ref KEYHEX MSGHEX: HMAC-SHA256 as RFC 2104 builds it, with sha256sum as the hash
hmac_ref() {
	local key=$1 msg=$2 i b h ipad="" opad=""
	if ((${#key} > 128)); then
		sha_hex "$key" && key=$sha_hex || return 1
	fi
	while ((${#key} < 128)); do
		key+=00
	done
	for ((i = 0; i < 128; i += 2)); do
		b=$((16#${key:i:2}))
		printf -v h %02x $((b ^ 0x36))
		ipad+=$h
		printf -v h %02x $((b ^ 0x5c))
		opad+=$h
	done
	sha_hex "$ipad$msg" &&
	sha_hex "$opad$sha_hex" &&
	echo "$sha_hex"
}

# repeat N HEXBYTE: N times that byte, as hex
repeat() {
	local i s=""
	for ((i = 0; i < $1; i++)); do
		s+=$2
	done
	echo "$s"
}

# ---- HMAC-SHA256

test_expect_success TEST_TOOL 'HMAC-SHA256: RFC 4231 test cases 1-4' '
	"$TEST_TOOL" hmac mac --hex-key $(repeat 20 0b) "Hi There" >actual &&
	"$TEST_TOOL" hmac mac Jefe "what do ya want for nothing?" >>actual &&
	"$TEST_TOOL" hmac mac --hex $(repeat 20 aa) $(repeat 50 dd) >>actual &&
	"$TEST_TOOL" hmac mac --hex 0102030405060708090a0b0c0d0e0f10111213141516171819 \
		$(repeat 50 cd) >>actual &&
	cat >expect <<-\EOF &&
	b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7
	5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843
	773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe
	82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b
	EOF
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'HMAC-SHA256: RFC 4231 test case 5, truncated to 128 bits' '
	"$TEST_TOOL" hmac mac --trunc=16 --hex-key $(repeat 20 0c) "Test With Truncation" >actual &&
	echo a3b6167473100ee06e0c796c2955552b >expect &&
	test_cmp expect actual &&
	"$TEST_TOOL" hmac mac --hex-key $(repeat 20 0c) "Test With Truncation" >full &&
	test_grep "^a3b6167473100ee06e0c796c2955552b[0-9a-f]\{32\}$" full
'

test_expect_success TEST_TOOL 'HMAC-SHA256: RFC 4231 test cases 6 and 7, a 131-byte key (hashed first)' '
	key=$(repeat 131 aa) &&
	"$TEST_TOOL" hmac mac --hex-key $key \
		"Test Using Larger Than Block-Size Key - Hash Key First" >actual &&
	"$TEST_TOOL" hmac mac --hex-key $key \
		"This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm." >>actual &&
	cat >expect <<-\EOF &&
	60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54
	9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2
	EOF
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'HMAC-SHA256: message from stdin = message as argument' '
	printf "what do ya want for nothing?" | "$TEST_TOOL" hmac mac Jefe >actual &&
	echo 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843 >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'HMAC-SHA256: empty key and empty message' '
	"$TEST_TOOL" hmac mac "" "" >actual &&
	"$TEST_TOOL" hmac mac --hex "" "" >>actual &&
	"$TEST_TOOL" hmac mac "" </dev/null >>actual &&
	printf "%s\n" b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad \
		b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad \
		b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'HMAC-SHA256: random keys around the block size = RFC 2104 from sha256sum' '
	pool=$("$TEST_TOOL" hmac random 400) &&
	for keylen in 0 1 32 63 64 65 128 129 200; do
		for msglen in 0 1 55 64 119 200; do
			key=${pool:0:2*keylen} &&
			msg=${pool:400-2*msglen:2*msglen} &&
			echo "key $key msg $msg" >>input &&
			hmac_ref "$key" "$msg" >>expect &&
			"$TEST_TOOL" hmac mac --hex "$key" "$msg" >>actual || return 1
		done || return 1
	done &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'HMAC-SHA256: a 64-byte key is used as is, a 65-byte one is hashed' '
	# keys of 64 and 65 bytes give different MACs; a 65-byte key K gives the same
	# MAC as the 32-byte key SHA-256(K)
	k64=$(repeat 64 aa) &&
	k65=$(repeat 65 aa) &&
	"$TEST_TOOL" hmac mac --hex-key $k64 msg >a &&
	"$TEST_TOOL" hmac mac --hex-key $k65 msg >b &&
	! cmp -s a b &&
	sha_hex $k65 &&
	"$TEST_TOOL" hmac mac --hex-key $sha_hex msg >c &&
	test_cmp b c &&
	# and a key is zero-padded to the block: trailing zero bytes do not matter
	"$TEST_TOOL" hmac mac --hex-key $(repeat 20 aa) msg >d &&
	"$TEST_TOOL" hmac mac --hex-key $(repeat 20 aa)$(repeat 44 00) msg >e &&
	test_cmp d e
'

test_expect_success TEST_TOOL 'HMAC-SHA256 in parts (the message MACs): any split gives the one-shot MAC' '
	pool=$("$TEST_TOOL" hmac random 300) &&
	key=${pool:0:64} &&
	for msglen in 0 1 63 64 65 250; do
		msg=${pool:64:2*msglen} &&
		"$TEST_TOOL" hmac mac --hex "$key" "$msg" >one &&
		for split in 1 7 64 1000; do
			"$TEST_TOOL" hmac mac --hex --split=$split "$key" "$msg" >parts &&
			test_cmp one parts || return 1
		done || return 1
	done &&
	"$TEST_TOOL" hmac mac --split=5 Jefe "what do ya want for nothing?" >actual &&
	echo 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843 >expect &&
	test_cmp expect actual
'

test_expect_success 'no SHA-256 or HMAC implementation in the tree: the primitive is the library'"'"'s' '
	! grep -rln -e 0x6a09e667 -e 0x428a2f98 -e "0x36363636\|\^ 0x36" "$SRCDIR"/core "$SRCDIR"/fleet \
		"$SRCDIR"/bench "$SRCDIR"/report "$SRCDIR"/transport "$SRCDIR"/probes "$SRCDIR"/pcap \
		"$SRCDIR"/collectives "$SRCDIR"/tests/helper >impl &&
	test_must_be_empty impl &&
	test_grep "nettle/hmac.h" "$SRCDIR/core/hmac.c"
'

# ---- comparison, hex, random

test_expect_success TEST_TOOL 'hmac_equal: every length 0..65, every single-bit difference' '
	"$TEST_TOOL" hmac equal-check >out &&
	test_grep "^ok [0-9][0-9]*$" out
'

test_expect_success TEST_TOOL 'hmac_equal: equal, first, middle and last byte differing, empty' '
	"$TEST_TOOL" hmac equal 00112233 00112233 >actual &&
	"$TEST_TOOL" hmac equal 00112233 80112233 >>actual &&
	"$TEST_TOOL" hmac equal 00112233 00102233 >>actual &&
	"$TEST_TOOL" hmac equal 00112233 00112232 >>actual &&
	"$TEST_TOOL" hmac equal "" "" >>actual &&
	"$TEST_TOOL" hmac equal ABCDEF abcdef >>actual &&
	printf "%s\n" equal differ differ differ equal equal >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'hmac_equal: of two MACs, one under a key one bit off' '
	"$TEST_TOOL" hmac mac Jefe nonce >a &&
	"$TEST_TOOL" hmac mac Kefe nonce >b &&
	"$TEST_TOOL" hmac equal $(cat a) $(cat a) >actual &&
	"$TEST_TOOL" hmac equal $(cat a) $(cat b) >>actual &&
	printf "%s\n" equal differ >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'hmac_unhex: either case in, lowercase out' '
	"$TEST_TOOL" hmac unhex 4 00ff7f80 DEADBEEF DeAdBeEf 0a1B2c3D >actual &&
	"$TEST_TOOL" hmac unhex 0 "" >>actual &&
	"$TEST_TOOL" hmac unhex 32 $(repeat 32 Ab) >>actual &&
	printf "%s\n" 00ff7f80 deadbeef deadbeef 0a1b2c3d "" $(repeat 32 ab) >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'hmac_unhex: bad characters, short and long strings are errors, output untouched' '
	# (the tool checks that a refused string left the output as it was)
	"$TEST_TOOL" hmac unhex 4 "" 0 00 000000 0000000 000000000 0000000000 \
		0000000g g0000000 000 00 "00 00 00" " 00000000" "00000000 " 0x000000 \
		-0000000 +0000000 "0000000:" "0000000/" "0000000@" "0000000G" "0000000\`" \
		"0000000~" "$(printf "0000000\377")" "$(printf "\t0000000")" >actual &&
	"$TEST_TOOL" hmac unhex 0 00 " " x >>actual &&
	for i in $(seq 28); do echo error; done >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'hmac_unhex through the tool: odd and non-hex arguments are usage errors' '
	test_expect_code 2 "$TEST_TOOL" hmac mac --hex-key zz msg &&
	test_expect_code 2 "$TEST_TOOL" hmac equal 0011 001122 &&
	test_expect_code 2 "$TEST_TOOL" hmac equal 0011 00x1
'

test_expect_success TEST_TOOL 'hmac_random: N bytes, different each time, every byte value' '
	"$TEST_TOOL" hmac random 32 >a &&
	"$TEST_TOOL" hmac random 32 >b &&
	test_grep "^[0-9a-f]\{64\}$" a &&
	test_grep "^[0-9a-f]\{64\}$" b &&
	! cmp -s a b &&
	"$TEST_TOOL" hmac random 0 >empty &&
	echo >expect &&
	test_cmp expect empty &&
	# 64 KiB hold all 256 byte values but with a chance of about 256 * e^-256
	"$TEST_TOOL" hmac random 65536 | fold -w2 | sort -u | wc -l >count &&
	echo 256 >expect &&
	test_cmp expect count
'

test_expect_success TEST_TOOL 'hmac_random: every byte filled, also when signals cut getrandom short' '
	# the tool fails on 64 zero bytes in a row, as a part never filled leaves;
	# with SIGALRM every 50 us a large getrandom returns part of what was asked
	"$TEST_TOOL" hmac random --check 41943040 >out &&
	echo "ok 41943040" >expect &&
	test_cmp expect out &&
	for i in 1 2 3; do
		"$TEST_TOOL" hmac random --interrupt 16777216 >out 2>err &&
		cat err &&
		echo "ok 16777216" >expect &&
		test_cmp expect out &&
		test_grep "^[1-9][0-9]* signals$" err || return 1
	done
'

# the canonical text the fleet handshake's macs cover (docs/design.md, fleet/fleet.h): written
# here from those words, byte by byte, not taken from the program's output
test_expect_success TEST_TOOL 'canon: no mac, keys sorted at every depth, no spaces, the escapes as documented' '
	printf "%s\n" "{ \"type\" : \"register\", \"mac\": \"ab\", \"pid\": 42,
	  \"endpoints\": [ { \"rail\": 1, \"plane\": 0, \"ip\": \"10.0.0.1\" } ], \"Z\": null,
	  \"s\": \"tab\\there \\u0001 \\u001f \\\"q\\\" \\\\ / \\u00e9\", \"b\": true, \"e\": {}, \"x\": -7 }" >in.json &&
	"$TEST_TOOL" hmac canon <in.json >out &&
	printf "%s\n" "{\"Z\":null,\"b\":true,\"e\":{},\"endpoints\":[{\"ip\":\"10.0.0.1\",\"plane\":0,\"rail\":1}],\"pid\":42,\"s\":\"tab\\there \\u0001 \\u001F \\\"q\\\" \\\\ / $(printf "\303\251")\",\"type\":\"register\",\"x\":-7}" >expect &&
	test_cmp expect out &&
	# a mac deeper down is content, not the mac: kept
	echo "{\"a\": {\"mac\": \"x\"}, \"mac\": \"y\"}" | "$TEST_TOOL" hmac canon >out &&
	echo "{\"a\":{\"mac\":\"x\"}}" >expect &&
	test_cmp expect out &&
	# a duplicate key is refused, as the wire refuses it
	echo "{\"a\": 1, \"a\": 2}" | test_expect_code 2 "$TEST_TOOL" hmac canon
'

test_expect_success TEST_TOOL 'usage errors exit 2' '
	test_expect_code 2 "$TEST_TOOL" hmac &&
	test_expect_code 2 "$TEST_TOOL" hmac nosuch &&
	test_expect_code 2 "$TEST_TOOL" hmac mac &&
	test_expect_code 2 "$TEST_TOOL" hmac mac --trunc=0 k m &&
	test_expect_code 2 "$TEST_TOOL" hmac mac --trunc=33 k m &&
	test_expect_code 2 "$TEST_TOOL" hmac mac --split=0 k m &&
	test_expect_code 2 "$TEST_TOOL" hmac sha256 x &&
	test_expect_code 2 "$TEST_TOOL" hmac unhex x 00 &&
	test_expect_code 2 "$TEST_TOOL" hmac unhex 1 &&
	test_expect_code 2 "$TEST_TOOL" hmac random &&
	test_expect_code 2 "$TEST_TOOL" hmac random -1 &&
	test_expect_code 2 "$TEST_TOOL" hmac random 1x &&
	test_expect_code 2 "$TEST_TOOL" hmac random --check &&
	test_expect_code 2 "$TEST_TOOL" hmac random --check 1 2 &&
	test_expect_code 2 "$TEST_TOOL" hmac random --nosuch 1 &&
	test_expect_code 2 "$TEST_TOOL" hmac canon x
'

test_done
