#!/usr/bin/env bash
test_description='probes/polar.c and polar-judge.c: the occupancy distribution of uniform hashing
against brute force, its moments, the verdicts and collision groups of crafted per-flow rates, and
no verdict where the rates infer more paths than exist, did not fill one path, were set by the
host'"'"'s link (a 1:1 fabric: never a verdict, whatever the rates) or lie within their noise; the
traces'"'"' verdict on an upper bound and on an exact count; and records judged against a design
whose switch addresses name every hop, each link checked against its cables'
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
	# the host link (1 Gb/s) carries the 4 paths: they are the bottleneck by design
	"$TEST_TOOL" polar analyze 4 0.1 1 <rates >out &&
	grep -q "^used 2.[0-9]* .* polarized 1 groups 2 " out &&
	grep -q "^polarized: 16 flows used 2.[0-9] of 4 paths by their rates, .*; the paths were their bottleneck by design (the host.s link, 1 Gb/s, carries 4 paths of 0.1 Gb/s)$" out &&
	# the 13 are one group, the 3 another
	test $(awk "NF == 3 && \$1 < 40013 { print \$3 }" out | sort -u | wc -l) = 1 &&
	test $(awk "NF == 3 && \$1 >= 40013 { print \$3 }" out | sort -u | wc -l) = 1
'

test_expect_success $P 'random collisions: the same flows spread over 4 links are not polarized' '
	printf "1 0.05\n2 0.05\n3 0.1\n4 0.033\n5 0.033\n6 0.034\n7 0.1\n" >rates2 &&
	"$TEST_TOOL" polar analyze 4 0.1 1 <rates2 >out2 &&
	grep -q "^used 4.00 .* polarized 0 groups 4 " out2 &&
	grep -q "^not polarized: 7 flows used 4.0 of 4 paths by their rates" out2 &&
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
	grep -q "^no verdict: 8 flows used 8.0 paths if the fastest flow.s rate is a path.s, more than exist .*give --link-rate (Gb/s) and --host-rate" out5 &&
	! grep -q "polarized:" out5 &&
	# one path: the same
	"$TEST_TOOL" polar analyze 1 0 <rates5 >out6 &&
	grep -q "inconclusive 1 cause no_link_rate verdict inconclusive$" out6 &&
	grep -q "^no verdict: 8 flows used 8.0 paths if the fastest flow.s rate is a path.s, more than exist" out6
'

test_expect_success $P 'flows faster than --link-rate: no verdict, the link rate named' '
	same_rates | "$TEST_TOOL" polar analyze 2 1 100 >out7 &&
	grep -q "inconclusive 1 cause link_rate_below_flows verdict inconclusive$" out7 &&
	grep -q "^no verdict: .*flows ran faster than --link-rate 1, which is below the rate of one path" out7
'

test_expect_success $P 'rates that fit --link-rate but add up to more paths: --paths is named' '
	# 8 flows at half a link each: 4 paths of 0.1 in use, 2 said
	awk "BEGIN { for (i = 0; i < 8; i++) printf \"%d 0.05\\n\", 40000 + i }" | "$TEST_TOOL" polar analyze 2 0.1 1 >out8 &&
	grep -q "^used 4.00 .* inconclusive 1 cause more_paths_than_given verdict inconclusive$" out8 &&
	grep -q "^no verdict: 8 flows used 4.0 paths, more than the 2 that exist: there are more than 2 equal paths" out8
'

test_expect_success $P 'TCP unevenness a little above P still gets its verdict' '
	# 4 links of 0.1, uneven shares (sharing 3, 3, 2, 2, 1, 1, 3, 3, 3): 4.67 of 4, under 4 + 1
	printf "1 0.034\n2 0.033\n3 0.05\n4 0.05\n5 0.1\n6 0.1\n7 0.035\n8 0.033\n9 0.04\n" >rates9 &&
	"$TEST_TOOL" polar analyze 4 0.1 1 <rates9 >out9 &&
	grep -q "inconclusive 0 cause - verdict not polarized$" out9 &&
	grep -q "^not polarized: 9 flows used 4.[0-9] of 4 paths" out9
'

test_expect_success $P 'flows that together fill under half of --link-rate: no verdict' '
	# before: every sharing clamped to 8, "polarized: 8 flows used 1.0 of 4 paths"
	same_rates | "$TEST_TOOL" polar analyze 4 100 1000 >out10 &&
	grep -q "^used 1.00 .* polarized 0 .* inconclusive 1 cause link_rate_above_flows verdict inconclusive$" out10 &&
	grep -q "^no verdict: 8 flows together ran at 2[0-9]% of --link-rate 100, so they did not fill even one path" out10 &&
	# without --paths there is no verdict to withhold: only the count
	same_rates | "$TEST_TOOL" polar analyze 0 100 >out11 &&
	grep -q "inconclusive 0 cause - verdict unknown$" out11
'

test_expect_success $P 'polarized rates without the host'"'"'s link: no verdict, --host-rate named' '
	"$TEST_TOOL" polar analyze 4 0.1 <rates >out12 &&
	grep -q "inconclusive 1 cause no_host_rate verdict inconclusive$" out12 &&
	grep -q "^no verdict: 16 flows used 2.[0-9] of 4 paths by their rates, but without the rate of the host.s link nothing shows that the paths were their bottleneck .*give --host-rate (Gb/s), or --topology, or --trace$" out12
'

# equal rates of 16 flows adding up to TOTAL Gb/s
equal16() {
	awk -v t="$1" "BEGIN { for (i = 0; i < 16; i++) printf \"%d %.6f\\n\", 40000 + i, t / 16 }"
}

test_expect_success $P 'a 1:1 fabric (host link = path = 0.2, 2 paths): no total of the flows gives a verdict' '
	# the host link was their bottleneck (the issue: "polarized: 16 flows used 1.1 of 2 paths"),
	# or, under it, a CPU: whatever the flows add up to, the rates are no evidence
	for t in 0.05 0.09 0.1 0.12 0.15 0.16 0.17 0.19 0.2 0.21 0.25 0.3 0.4; do
		equal16 $t | "$TEST_TOOL" polar analyze 2 0.2 0.2 >o || return 1
		grep -q " inconclusive 1 cause [a-z_]* verdict inconclusive$" o || { cat o; return 1; }
	done &&
	equal16 0.2 | "$TEST_TOOL" polar analyze 2 0.2 0.2 >o13 &&
	grep -q "cause host_link_bottleneck verdict inconclusive$" o13 &&
	# per-flow rates over windows of their own add up past the link: still the host link,
	# not "more paths than given" (the cause does not hang on the rates'"'"' noise)
	for t in 0.17 0.3 0.6 0.9; do
		equal16 $t | "$TEST_TOOL" polar analyze 2 0.2 0.2 >o || return 1
		grep -q "cause host_link_bottleneck verdict inconclusive$" o || { cat o; return 1; }
	done &&
	grep -q "^no verdict: the host.s link was the flows. bottleneck: together 100% of it (0.2 Gb/s, less than 2 paths of 0.2 Gb/s).*give --trace" o13 &&
	equal16 0.15 | "$TEST_TOOL" polar analyze 2 0.2 0.2 >o14 &&
	grep -q "cause paths_not_full verdict inconclusive$" o14
'

test_expect_success $P 'rates within their noise of the boundary: no verdict' '
	# 8 flows of one link, 5 of another, 3 at a ninth: 2.33 paths of 4, between 2 (p < 0.01) and 3
	{ awk "BEGIN { for (i = 0; i < 8; i++) print 40000 + i, 0.0125 }" &&
	  awk "BEGIN { for (i = 8; i < 13; i++) print 40000 + i, 0.02 }" &&
	  awk "BEGIN { for (i = 13; i < 16; i++) print 40000 + i, 0.0111 }"; } >rates15 &&
	"$TEST_TOOL" polar analyze 4 0.1 1 <rates15 >o15 &&
	grep -q "^used 2.33 .* inconclusive 1 cause within_noise verdict inconclusive$" o15 &&
	grep -q "^no verdict: 16 flows used 2.3 of 4 paths by their rates, within their noise (0.25 of a path)" o15
'

test_expect_success $P 'a flow that completed no message: its rate unknown, no verdict on the rates' '
	printf "1 0.1\n2 0\n3 0.05\n4 0.05\n" | "$TEST_TOOL" polar analyze 2 0.1 1 >o16 &&
	grep -q " inconclusive 1 cause flows_starved verdict inconclusive$" o16 &&
	grep -q "^no verdict: 1 of 4 flows completed no message in their window, so their rates are unknown .*give a longer -D or a smaller -s, or --trace$" o16
'

test_expect_success $P 'traces: an upper bound shows "polarized" only; an exact count both ways' '
	"$TEST_TOOL" polar traces 16 4 2 16 0 >t1 && grep -q "^verdict polarized p 9.1[56]e-05$" t1 &&
	"$TEST_TOOL" polar traces 16 2 2 16 0 >t2 && grep -q "^verdict inconclusive p 1$" t2 &&
	grep -q "^at most 2 of 2 paths traced .*cannot show \"not polarized\"" t2 &&
	"$TEST_TOOL" polar traces 16 2 2 16 1 >t3 && grep -q "^verdict not polarized p 1$" t3 &&
	"$TEST_TOOL" polar traces 16 8 2 16 1 >t4 && grep -q "^verdict polarized " t4 &&
	# aliases: more paths by address than exist
	"$TEST_TOOL" polar traces 16 2 4 16 0 >t5 && grep -q "^verdict inconclusive" t5 &&
	grep -q "^4 distinct paths by address traced, more than the 2 that exist: routers answer from several addresses" t5 &&
	# a flow not traced to the end: no count at all
	"$TEST_TOOL" polar traces 16 4 2 9 0 >t6 && grep -q "^verdict inconclusive" t6 &&
	grep -q "^9 of 16 flows traced to the destination with every hop answering: routers limit their ICMP answers" t6
'

# a 2-spine leaf-spine design with the addresses its routers answer from
design() {
	cat <<-EOF
	switch l1 tier=leaf addr=10.100.1.254,10.250.1.1,10.250.1.5
	switch l2 tier=leaf addr=10.100.2.254,10.250.3.1,10.250.3.5
	switch s1 tier=spine addr=10.250.1.2,10.250.3.2
	switch s2 tier=spine addr=10.250.1.6,10.250.3.6
	link h1:rail0 l1:h1 rail=0 speed=200M
	link h3:rail0 l2:h3 rail=0 speed=200M
	link l1:s1 s1:l1 speed=200M
	link l1:s2 s2:l1 speed=200M
	link l2:s1 s1:l2 speed=200M
	link l2:s2 s2:l2 speed=200M
	EOF
}

# record N SPINES...: a set of N flows h1 -> h3 at 0.2/N each, flow i traced through the i-th of
# SPINES (2 or 6: s1 or s2; i modulo their number), l2 answering from the address its answer
# leaves by (by pairs of flows: s1 or s2's link, whichever spine the flow took)
record() {
	local n=$1
	shift
	jq -cn --argjson n "$n" --arg sp "$*" "
	  (\$sp | split(\" \")) as \$s |
	  {test: \"polarization\", scope: \"set\", flows: \$n, src: {node: \"h1\", ip: \"10.100.1.1\", rail: 0},
	   dst: {node: \"h3\", ip: \"10.100.2.3\"}, params: {set: 0}, trace: {},
	   entropy: [range(\$n) | {value: (40000 + .), gbps: (0.2 / \$n), path_complete: true,
	     path: [\"10.100.1.254\", \"10.250.1.\" + \$s[. % (\$s | length)],
		    \"10.250.3.\" + (if (. / 2 | floor) % 2 == 0 then \"1\" else \"5\" end), \"10.100.2.3\"]}]}"
}

test_expect_success $P 'a record judged with the design: switches by name, the paths counted, the rates set aside' '
	design >d.topo &&
	record 16 2 6 >spread.json &&
	"$TEST_TOOL" polar judge d.topo <spread.json >j1 &&
	# the design gives 2 paths of 0.2 Gb/s and a host link of 0.2: the rates are no evidence, the traces are
	jq -e ".params.paths == 2 and .params.link_rate_gbps == 0.2 and .params.host_rate_gbps == 0.2 and
	       .params.design.paths == 2 and .rates.cause == \"host_link_bottleneck\" and
	       .verdict == \"not polarized\" and .evidence == \"traces\" and .trace.exact and
	       .trace.paths == 2 and .trace.possible == 2 and .metrics.p_value == 1 and
	       .entropy[1].route == [\"l1\", \"s2\", \"l2\"] and
	       ([.links[] | \"\(.from)>\(.to)\"] | sort) == [\"l1>s1\", \"l1>s2\", \"s1>l2\", \"s2>l2\"]" j1 >/dev/null &&
	jq -r .verdict_text j1 | grep -q "^not polarized: 16 flows took 2 of 2 paths, traced (every flow, every hop, named by d.topo and each link one of its cables)" &&
	# without the design: l2 answers from two addresses, 4 sequences of 2 paths: no count to judge
	jq ".params.paths = 2" spread.json | "$TEST_TOOL" polar judge >j2 &&
	jq -e ".verdict == \"inconclusive\" and .trace.exact == false and .trace.paths == 4 and
	       (.trace.why | startswith(\"4 distinct paths by address traced, more than the 2 that exist\")) and
	       (.links | not) and (.hops | length) == 3" j2 >/dev/null
'

test_expect_success $P 'polarized by the traces, exactly; a link that is no cable of the design: no count' '
	record 16 2 >one.json &&
	"$TEST_TOOL" polar judge d.topo <one.json >j3 &&
	jq -e ".verdict == \"polarized\" and .evidence == \"traces\" and .trace.paths == 1 and
	       .metrics.p_value < 0.001" j3 >/dev/null &&
	# s1 answering as 10.250.9.9, an address of none of its switches: hops by address again
	jq -c ".entropy[3].path[1] = \"10.250.9.9\"" one.json | "$TEST_TOOL" polar judge d.topo >j4 &&
	jq -e ".trace.exact == false and (.trace.how | contains(\"not all of them in the design\"))" j4 >/dev/null &&
	# a path l1 -> l2 straight: no such cable
	jq -c ".entropy[5].path = [\"10.100.1.254\", \"10.250.3.1\", \"10.100.2.3\"]" one.json |
		"$TEST_TOOL" polar judge d.topo >j5 &&
	jq -e ".verdict == \"inconclusive\" and (.trace.why | startswith(\"traced l1 (10.100.1.254) -> l2 (10.250.3.1) is no cable of d.topo\"))" j5 >/dev/null
'

test_done
