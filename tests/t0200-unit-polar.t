#!/usr/bin/env bash
test_description='probes/polar.c: the occupancy distribution of uniform hashing against brute
force, its moments, and the verdicts and collision groups of crafted per-flow rates'
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL
P=TEST_TOOL

# brute K P: every one of the P^K assignments of K flows to P paths; prints the cdf of the
# number of occupied paths for u = 1..P, then the mean and standard deviation
brute() {
	awk -v K="$1" -v P="$2" 'BEGIN {
		total = P ^ K
		for (a = 0; a < total; a++) {
			x = a; delete used; u = 0
			for (i = 0; i < K; i++) { b = x % P; x = int(x / P); if (!(b in used)) { used[b] = 1; u++ } }
			cnt[u]++; s += u; s2 += u * u
		}
		c = 0
		for (u = 1; u <= P; u++) { c += cnt[u]; printf "%.9f\n", c / total }
		m = s / total; printf "%.6f %.6f\n", m, sqrt(s2 / total - m * m)
	}'
}

test_expect_success $P 'P(U <= u) and the moments equal brute force for small K and P' '
	for kp in "1 3" "3 3" "4 3" "5 4" "6 5" "8 4" "7 7"; do
		set -- $kp &&
		brute $1 $2 >expect &&
		for ((u = 1; u <= $2; u++)); do
			"$TEST_TOOL" polar cdf $1 $2 $u | awk "{ printf \"%.9f\\n\", \$1 }"
		done >actual &&
		"$TEST_TOOL" polar moments $1 $2 | awk "{ printf \"%.6f %.6f\\n\", \$1, \$2 }" >>actual &&
		test_cmp expect actual || { echo "K=$1 P=$2"; return 1; }
	done
'

test_expect_success $P 'the textbook figures: 16 flows on 4 paths' '
	"$TEST_TOOL" polar moments 16 4 >m &&
	awk "{ exit !(\$1 > 3.959 && \$1 < 3.961) }" m &&
	# two paths of four: 6 (2^16 - 2) / 4^16
	"$TEST_TOOL" polar cdf 16 4 2 >c &&
	awk "{ exit !(\$1 > 9.15e-5 && \$1 < 9.16e-5) }" c
'

test_expect_success $P 'polarized: 16 flows on 2 of 4 links (13 and 3, uneven as TCP is)' '
	awk "BEGIN { for (i = 0; i < 13; i++) printf \"%d %.4f\\n\", 40000 + i, 0.1 / 13 * (0.85 + 0.3 * (i % 4) / 3);
		     for (i = 13; i < 16; i++) printf \"%d %.4f\\n\", 40000 + i, 0.1 / 3 * (0.9 + 0.1 * (i % 3)) }" >rates &&
	"$TEST_TOOL" polar analyze 4 0.1 <rates >out &&
	grep -q "^used 2.[0-9]* .* polarized 1 groups 2 " out &&
	grep -q "^polarized: 16 flows used 2.[0-9] of 4 paths" out &&
	# the 13 are one group, the 3 another
	test $(awk "NF == 3 && \$1 < 40013 { print \$3 }" out | sort -u | wc -l) = 1 &&
	test $(awk "NF == 3 && \$1 >= 40013 { print \$3 }" out | sort -u | wc -l) = 1
'

test_expect_success $P 'random collisions: the same flows spread over 4 links are not polarized' '
	printf "1 0.05\n2 0.05\n3 0.1\n4 0.033\n5 0.033\n6 0.034\n7 0.1\n" >rates2 &&
	"$TEST_TOOL" polar analyze 4 0.1 <rates2 >out2 &&
	grep -q "^used 4.00 .* polarized 0 groups 4 " out2 &&
	grep -q "^not polarized: 7 flows used 4.0 of 4 paths" out2 &&
	# without the number of paths there is no verdict, only the count
	"$TEST_TOOL" polar analyze 0 0.1 <rates2 >out3 &&
	grep -q "give the number of equal paths" out3
'

test_expect_success $P 'without a link rate the fastest flow stands for it' '
	printf "1 0.2\n2 0.1\n3 0.1\n" | "$TEST_TOOL" polar analyze 2 0 >out4 &&
	grep -q "^1 1 " out4 && grep -q "^2 2 " out4 && grep -q "^used 2.00 " out4
'

test_done
