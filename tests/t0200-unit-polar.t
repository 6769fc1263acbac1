#!/usr/bin/env bash
test_description='probes/polar.c: the occupancy distribution of uniform hashing against brute
force, its moments, the verdicts and collision groups of crafted per-flow rates, and no verdict
where the rates infer more paths than exist or did not fill one path'
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

# the flows of one host, all at much the same rate (the host, not the paths, the bottleneck):
# 8 flows about 3 Gb/s each
same_rates() {
	awk "BEGIN { for (i = 0; i < 8; i++) printf \"%d %.4f\\n\", 40000 + i, 3 + 0.1 * (i % 3) }"
}

test_expect_success $P 'more paths than exist, without --link-rate: no verdict, and why' '
	same_rates >rates5 &&
	"$TEST_TOOL" polar analyze 2 0 <rates5 >out5 &&
	# before: "not polarized: 8 flows used 8.0 of 2 paths"
	grep -q "^used 8.00 .* polarized 0 .* inconclusive 1 cause no_link_rate verdict inconclusive$" out5 &&
	grep -q "^no verdict: 8 flows used 8.0 paths, more than the 2 that exist: without --link-rate .*give --link-rate, the rate of one path" out5 &&
	! grep -q "polarized:" out5 &&
	# one path: the same
	"$TEST_TOOL" polar analyze 1 0 <rates5 >out6 &&
	grep -q "inconclusive 1 cause no_link_rate verdict inconclusive$" out6 &&
	grep -q "^no verdict: 8 flows used 8.0 paths, more than the 1 that exist" out6
'

test_expect_success $P 'flows faster than --link-rate: no verdict, the link rate named' '
	same_rates | "$TEST_TOOL" polar analyze 2 1 >out7 &&
	grep -q "inconclusive 1 cause link_rate_below_flows verdict inconclusive$" out7 &&
	grep -q "^no verdict: .*flows ran faster than --link-rate 1, which is below the rate of one path" out7
'

test_expect_success $P 'rates that fit --link-rate but add up to more paths: --paths is named' '
	# 8 flows at half a link each: 4 paths of 0.1 in use, 2 said
	awk "BEGIN { for (i = 0; i < 8; i++) printf \"%d 0.05\\n\", 40000 + i }" | "$TEST_TOOL" polar analyze 2 0.1 >out8 &&
	grep -q "^used 4.00 .* inconclusive 1 cause more_paths_than_given verdict inconclusive$" out8 &&
	grep -q "^no verdict: 8 flows used 4.0 paths, more than the 2 that exist: there are more than 2 equal paths" out8
'

test_expect_success $P 'TCP unevenness a little above P still gets its verdict' '
	# 4 links of 0.1, uneven shares (sharing 3, 3, 2, 2, 1, 1, 3, 3, 3): 4.67 of 4, under 4 + 1
	printf "1 0.034\n2 0.033\n3 0.05\n4 0.05\n5 0.1\n6 0.1\n7 0.035\n8 0.033\n9 0.04\n" >rates9 &&
	"$TEST_TOOL" polar analyze 4 0.1 <rates9 >out9 &&
	grep -q "inconclusive 0 cause - verdict not polarized$" out9 &&
	grep -q "^not polarized: 9 flows used 4.[0-9] of 4 paths" out9
'

test_expect_success $P 'flows that together fill under half of --link-rate: no verdict' '
	# before: every sharing clamped to 8, "polarized: 8 flows used 1.0 of 4 paths"
	same_rates | "$TEST_TOOL" polar analyze 4 100 >out10 &&
	grep -q "^used 1.00 .* polarized 0 .* inconclusive 1 cause link_rate_above_flows verdict inconclusive$" out10 &&
	grep -q "^no verdict: 8 flows together ran at 2[0-9]% of --link-rate 100, so they did not fill even one path" out10 &&
	# without --paths there is no verdict to withhold: only the count
	same_rates | "$TEST_TOOL" polar analyze 0 100 >out11 &&
	grep -q "inconclusive 0 cause - verdict unknown$" out11
'

test_done
