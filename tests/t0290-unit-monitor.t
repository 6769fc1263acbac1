#!/usr/bin/env bash
test_description='monitor/: the RTT histogram (boundaries, buckets, merge, hostile doubles), the
coupon-collector bound, the peers chosen from a hostfile (full mesh in a leaf, K host pairs per
leaf pair computed alike by every node, bounds), the peers file and probe datagrams fuzzed'
# asan: always: feeds untrusted bytes to C code: peers files (hostfiles) and probe datagrams
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL
P=TEST_TOOL

# fabric L H: L leaves of H hosts, two rails, leaf= given
fabric() {
	local l h
	for ((l = 1; l <= $1; l++)); do
		for ((h = 1; h <= $2; h++)); do
			echo "n$l-$h rail0=10.100.$l.$h rail1=10.101.$l.$h leaf=L$l"
		done
	done
}

test_expect_success $P 'histogram: each value in the bucket of the first bound above it; NaN and negatives refused' '
	"$TEST_TOOL" mon-hist 0 1e-6 1.0000001e-6 3e-5 0.00015 1 10 10.5 inf -1e-9 nan >actual &&
	cat >expect <<-\EOF &&
	0 0 1e-06
	1e-6 0 1e-06
	1.0000001e-6 1 2e-06
	3e-5 5 5e-05
	0.00015 7 0.0002
	1 18 1
	10 21 10
	10.5 22 +Inf
	inf 22 +Inf
	-1e-9 -1 -
	nan -1 -
	EOF
	test_cmp expect actual
'

test_expect_success $P 'histogram: bounds tile [0, inf); two parts merged are the whole; hostile doubles' '
	"$TEST_TOOL" mon-hist-check 200000 11 >out && test_grep -x ok out &&
	"$TEST_TOOL" mon-hist-fuzz 200000 5 >out && test_grep "^ok 200000 [0-9]" out
'

test_expect_success $P 'coupon bound: the fewest 5-tuples that cover P paths with 99 %' '
	"$TEST_TOOL" mon-coupon 1 2 3 4 8 16 64 >actual &&
	printf "1 1\n2 8\n3 15\n4 21\n8 51\n16 115\n64 557\n" >expect &&
	test_cmp expect actual
'

test_expect_success $P 'peers: the whole leaf, then one peer in each other leaf (8 paths, 16 ports: K = 4 of 4x4)' '
	fabric 8 4 >hosts &&
	"$TEST_TOOL" mon-peers hosts n1-1 8 16 >out &&
	test_grep -x "need 51 pairs 4 leaves 8 lanes 2" out &&
	test "$(grep -c " leaf " out)" = 3 && test "$(grep -c " cross " out)" = 7 &&
	test_grep -x "n1-2 leaf 10.100.1.2 10.101.1.2" out &&
	sed -n "s/^n\([0-9]\)-[0-9] cross .*/\1/p" out | sort -u | tr -d "\n" >leaves &&
	test "$(cat leaves)" = 2345678
'

test_expect_success $P 'peers: every node computes its part, and together each leaf pair gets K distinct host pairs' '
	fabric 8 4 >hosts &&
	"$TEST_TOOL" mon-peers-all hosts 8 16 >out && test_grep -x "ok 56 10" out &&
	"$TEST_TOOL" mon-peers-all hosts 2 16 >out && test_grep -x "ok 56 7" out &&
	"$TEST_TOOL" mon-peers-all hosts 64 4 >out && test_grep -x "ok 56 31" out &&
	fabric 5 3 >hosts3 &&
	"$TEST_TOOL" mon-peers-all hosts3 16 4 >out && test_grep -x "ok 20 14" out
'

test_expect_success $P 'peers: a lane the peer lacks is 0.0.0.0; nodes without leaf= are one leaf' '
	cat >hosts <<-\EOF &&
	a rail0=10.0.0.1 rail1=10.0.1.1
	b rail0=10.0.0.2
	c rail1=10.0.1.3
	d rail2=10.0.2.4
	EOF
	"$TEST_TOOL" mon-peers hosts a >out &&
	cat >expect <<-\EOF &&
	need 51 pairs 4 leaves 1 lanes 2
	b leaf 10.0.0.2 0.0.0.0
	c leaf 0.0.0.0 10.0.1.3
	EOF
	test_cmp expect out
'

test_expect_success $P 'peers: the node itself missing from the file is one line, exit 2' '
	fabric 2 2 >hosts &&
	test_expect_exit 2 "$TEST_TOOL" mon-peers hosts nosuch 2>err &&
	test_grep "no node .nosuch. in it" err && test $(wc -l <err) = 1
'

test_expect_success $P 'peers: more peers than --max-peers is refused, naming the bound' '
	fabric 1 6 >hosts &&
	test_expect_exit 2 "$TEST_TOOL" mon-peers hosts n1-1 8 16 3 2>err &&
	test_grep "more than 3 peers" err
'

test_expect_success $P 'peers: an IPv6 endpoint of its own is refused in one line' '
	printf "a rail0=fd00::1\nb rail0=10.0.0.2\n" >hosts &&
	test_expect_exit 2 "$TEST_TOOL" mon-peers hosts a 2>err &&
	test_grep "not an IPv4 address" err
'

test_expect_success $P 'peers file fuzzed: mutated hostfiles never crash, and what loads keeps the invariants' '
	fabric 4 3 >hosts &&
	"$TEST_TOOL" mon-peers-fuzz hosts 4000 17 >out 2>/dev/null &&
	test_grep "^ok 4000 [1-9][0-9]*$" out
'

test_expect_success $P 'probe datagrams fuzzed: only 32 bytes of the format decode, round trips exact' '
	"$TEST_TOOL" mon-pkt-fuzz 300000 23 >out &&
	test_grep "^ok 300000 [0-9]" out
'

test_done
