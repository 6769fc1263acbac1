#!/usr/bin/env bash
test_description='core/wire: length-prefixed JSON objects; sizes refused before allocation,
truncation, malformed bodies, timeouts, and random and mutated frames'
# asan: always: feeds untrusted bytes to C code: control-wire frames from a peer (lengths, JSON)
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL

# frame LEN: the 4-byte big-endian header for LEN, on stdout
frame() {
	printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) \
		$(($1 >> 8 & 255)) $(($1 & 255)))"
}

# recv_fails MESSAGE [ARGS...] <input: wire-recv exits 1 with MESSAGE, prints nothing
recv_fails() {
	local msg=$1
	shift
	test_expect_code 1 "$TEST_TOOL" wire-recv "$@" >out 2>err &&
	echo "test-tool wire-recv: $msg" >expect &&
	test_cmp expect err &&
	test_must_be_empty out
}

too_large="message too large or empty"
closed="connection closed by peer"
malformed="malformed message (not a JSON object)"

test_expect_success TEST_TOOL 'frame: 4-byte big-endian length, then the compact JSON' '
	"$TEST_TOOL" wire-send "{ \"type\" : \"hello\" }" >msg &&
	{ frame 16 && printf "{\"type\":\"hello\"}"; } >expect &&
	cmp expect msg &&
	frame 258 | od -An -tx1 >actual &&
	echo " 00 00 01 02" >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'round trip: what is sent is what is received, in key order' '
	msg="{\"type\":\"hello\",\"proto\":\"fabscope\",\"version\":1,\"n\":[1,2.5,null,true],\"s\":\"\\u00e9\\\"\"}" &&
	"$TEST_TOOL" wire-send "$msg" | "$TEST_TOOL" wire-recv >actual &&
	echo "{\"type\":\"hello\",\"proto\":\"fabscope\",\"version\":1,\"n\":[1,2.5,null,true],\"s\":\"é\\\"\"}" >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'several messages on one stream, read one after another' '
	"$TEST_TOOL" wire-send "{\"a\":1}" "{}" "{\"b\":{\"c\":[]}}" >msgs &&
	"$TEST_TOOL" wire-recv --count=3 <msgs >actual &&
	printf "%s\n" "{\"a\":1}" "{}" "{\"b\":{\"c\":[]}}" >expect &&
	test_cmp expect actual &&
	test_expect_code 1 "$TEST_TOOL" wire-recv --count=4 <msgs >out 2>err &&
	test_cmp expect out &&
	echo "test-tool wire-recv: $closed" >expect &&
	test_cmp expect err
'

test_expect_success TEST_TOOL 'a message larger than a pipe holds: partial reads through poll' '
	big=$(head -c 100000 /dev/zero | tr "\0" x) &&
	"$TEST_TOOL" wire-send "{\"big\":\"$big\"}" | "$TEST_TOOL" wire-recv >actual &&
	echo "{\"big\":\"$big\"}" >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'length 0 is refused' '
	frame 0 >in &&
	recv_fails "$too_large" <in
'

test_expect_success TEST_TOOL 'a length up to MAX is read, MAX + 1 is refused' '
	{ frame 10 && printf "{\"a\":1234}"; } >ten &&
	"$TEST_TOOL" wire-recv 10 <ten >actual &&
	echo "{\"a\":1234}" >expect &&
	test_cmp expect actual &&
	recv_fails "$too_large" 9 <ten
'

test_expect_success TEST_TOOL 'the default bound is 1 MiB, inclusive' '
	pad=$(head -c $((1048576 - 8)) /dev/zero | tr "\0" x) &&
	{ frame 1048576 && printf "{\"a\":\"%s\"}" "$pad"; } >max &&
	"$TEST_TOOL" wire-recv <max >out &&
	test "$(wc -c <out)" = 1048577 &&
	{ frame 1048577 && printf "{\"a\":\"%s\"} " "$pad"; } >over &&
	recv_fails "$too_large" <over
'

test_expect_success TEST_TOOL 'a 2 GiB length with 10 bytes after it: refused at once, before reading' '
	{ frame 2147483648 && printf "{\"a\":123}"; } >huge &&
	recv_fails "$too_large" <huge &&
	{ frame 4294967295 && printf "{\"a\":123}"; } >huge &&
	recv_fails "$too_large" <huge &&
	# through a pipe that stays open: the refusal comes without waiting for
	# the body (waiting would end in "connection closed" after the sleep)
	{ cat huge && sleep 0.5; } | recv_fails "$too_large" --timeout=60000
'

test_expect_success TEST_TOOL 'end of input inside the header or the body: connection closed' '
	recv_fails "$closed" </dev/null &&
	printf "\000\000" >in &&
	recv_fails "$closed" <in &&
	{ frame 100 && printf "{\"a\":\"0123"; } >in &&
	recv_fails "$closed" <in &&
	{ frame 10 && printf "{\"a\":1234"; } >in &&
	recv_fails "$closed" <in
'

test_expect_success TEST_TOOL 'not a JSON object: malformed' '
	for body in "{\"a\":" "{\"a\":1}x" "[1,2]" "[]" "1" "\"str\"" "null" \
		"{\"a\":1,\"a\":2}" "{\"a\":{\"b\":1,\"b\":1}}" "{a:1}" "{\"a\":\"\377\"}" \
		"{\"a\":NaN}" "{} {}"; do
		echo "body: $body" &&
		{ frame $(printf "%b" "$body" | wc -c) && printf "%b" "$body"; } >in &&
		recv_fails "$malformed" <in || return 1
	done
'

test_expect_success TEST_TOOL 'a NUL byte in the body: malformed' '
	{ frame 9 && printf "{\"a\":\"\000\"}"; } >in &&
	recv_fails "$malformed" <in &&
	{ frame 9 && printf "{\"a\":1}\000\000"; } >in &&
	recv_fails "$malformed" <in
'

test_expect_success TEST_TOOL 'a silent peer: timed out after the timeout, before the peer goes away' '
	{ { frame 8 && printf "{\"a\":"; } && sleep 0.6; } | {
		start=$(date +%s%N) &&
		recv_fails "timed out" --timeout=200 &&
		end=$(date +%s%N) &&
		echo "waited $(((end - start) / 1000000)) ms" &&
		test $(((end - start) / 1000000)) -ge 200
	}
'

test_expect_success TEST_TOOL 'wire-fuzz: 2000 random and mutated frames, every outcome seen' '
	"$TEST_TOOL" wire-fuzz 2000 42 >out &&
	cat out &&
	test_grep "^inputs 2000$" out &&
	for what in "ok" "too large" "closed" "malformed"; do
		test_grep -E "^$what [1-9][0-9]*$" out || return 1
	done
'

test_expect_success TEST_TOOL 'wire-fuzz: other seeds' '
	for seed in 1 2 3; do
		"$TEST_TOOL" wire-fuzz 500 $seed >out || return 1
	done
'

test_done
