#!/usr/bin/env bash
test_description='fabscope model: max-min fair rates by progressive filling against hand-computed
cases (a link shared 3 ways, two bottlenecks in series, a parking lot, a flow split in two) and
against a plain solver on random problems (every flow with a bottleneck); per-flow ECMP drawn
against every combination of paths enumerated on a small leaf-spine; the command on a topology
file, on paths given hop by hop (exact), on made shapes (what-if), on a plan phase; bad input
is one line, exit 2'
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci FABSCOPE JQ TEST_TOOL
P=FABSCOPE,JQ,TEST_TOOL

mm() { "$TEST_TOOL" model maxmin; }

# three leaves, three spines, two hosts a leaf, 100G everywhere but l1-s3 (50G)
small_topo() {
	cat <<-\EOF
	switch l1 tier=leaf rail=0
	switch l2 tier=leaf rail=0
	switch l3 tier=leaf rail=0
	switch s1 tier=spine
	switch s2 tier=spine
	switch s3 tier=spine
	link h1:eth0 l1:p1 rail=0 speed=100G
	link h2:eth0 l1:p2 rail=0 speed=100G
	link h3:eth0 l2:p1 rail=0 speed=100G
	link h4:eth0 l2:p2 rail=0 speed=100G
	link h5:eth0 l3:p1 rail=0 speed=100G
	link h6:eth0 l3:p2 rail=0 speed=100G
	link l1:s1 s1:l1 speed=100G
	link l1:s2 s2:l1 speed=100G
	link l1:s3 s3:l1 speed=50G
	link l2:s1 s1:l2 speed=100G
	link l2:s2 s2:l2 speed=100G
	link l2:s3 s3:l2 speed=100G
	link l3:s1 s1:l3 speed=100G
	link l3:s2 s2:l3 speed=100G
	link l3:s3 s3:l3 speed=100G
	EOF
}

test_expect_success $P 'a link shared three ways: a third each' '
	printf "cap 90\n0\n0\n0\n" | mm >out &&
	printf "30\n30\n30\n" >expect &&
	test_cmp expect out
'

test_expect_success $P 'two bottlenecks in series: the first halves, the second gives the rest' '
	printf "cap 10 30\n0\n0 1\n1\n" | mm >out &&
	printf "5\n5\n25\n" >expect &&
	test_cmp expect out &&
	printf "cap 1 1\n0 1\n0\n1\n" | mm >out &&
	printf "0.5\n0.5\n0.5\n" >expect &&
	test_cmp expect out
'

test_expect_success $P 'a flow split in two halves, one half sharing a link: both at 20/3' '
	printf "cap 10 10\n0:0.5 1:0.5\n0\n" | mm >out &&
	printf "6.66667\n6.66667\n" >expect &&
	test_cmp expect out
'

test_expect_success $P 'random problems: feasible, a bottleneck for every flow, the plain solver.s answer' '
	"$TEST_TOOL" model random 3000 11 >out &&
	echo "ok 3000" >expect &&
	test_cmp expect out
'

# an asymmetric 3-tier fabric: pods p1 (l1; s1, s2) and p2 (l2; s3, s4), superspines x1..x4; s2 has
# one uplink (to x2) and it is 50G, every other cable 100G and every spine of p2 reaches every
# superspine.  l1 -> l2: 10 shortest paths, 8 through s1, 2 through s2
asym_topo() {
	printf "%s\n" "switch l1 tier=leaf rail=0 pod=p1" "switch l2 tier=leaf rail=0 pod=p2" \
		"switch s1 tier=spine pod=p1" "switch s2 tier=spine pod=p1" "switch s3 tier=spine pod=p2" \
		"switch s4 tier=spine pod=p2" &&
	for x in 1 2 3 4; do echo "switch x$x tier=superspine"; done &&
	printf "%s\n" "link h1:eth0 l1:p1 rail=0" "link h2:eth0 l1:p2 rail=0" "link h3:eth0 l2:p1 rail=0" \
		"link h4:eth0 l2:p2 rail=0" "link l1:u1 s1:d1" "link l1:u2 s2:d1" "link l2:u1 s3:d1" "link l2:u2 s4:d1" \
		"link s2:u1 x2:d2 speed=50G" &&
	for x in 1 2 3 4; do
		printf "%s\n" "link s1:u$x x$x:d1" "link s3:u$x x$x:d3" "link s4:u$x x$x:d4" || return 1
	done
}

test_expect_success $P 'ECMP drawn hop by hop on an asymmetric fabric, against the enumerator: exact values' '
	asym_topo >asym.topo &&
	"$TEST_TOOL" model ecmp-brute asym.topo 20000 5 h1:0:h3 h2:0:h4 >out &&
	cat out &&
	# by hand, two flows l1 -> l2: both through s1 share l1-s1 (100), both through s2 share the 50G
	# cable (50 in all), one through each: 100 or, when their spines of p2 differ, 150.  A flow
	# takes s2 with probability 1/2 drawn hop by hop (100 expected), 2/10 drawn among its paths
	# (0.64 * 100 + 0.04 * 50 + 0.32 * 125 = 106); spraying puts half of each on the 50G cable
	grep -x "combinations 100" out &&
	grep -x "spray paths 100.000000 model 100.000000" out &&
	grep "^ecmp per-hop 100.000000 per-path 106.000000 sampled " out &&
	grep -c "^flow [01] paths 10 per-hop 50.000000 per-path 53.000000 sampled " out >n && echo 2 >expect &&
	test_cmp expect n &&
	# the model drawn 20000 times: per hop (the standard error is about 0.2), not per path
	perl -ne "exit 1 if /^ecmp .* sampled ([0-9.]+)/ && abs(\$1 - 100) > 1.5" out
'

# spraying where flows do not arrive evenly over a destination leaf's last hops, which the model
# must then keep apart (model/fabric.h: one constraint only when every flow arrives evenly)
test_expect_success $P 'spraying against the enumerator: uneven arrival, uneven last hops, a leaf as transit' '
	# asym_topo without s3-x4: from l1, s3 gets 1/16 + 5/16 + 1/16 = 7/16 of a flow, s4 9/16; the
	# 10G cables s3-l2 and s4-l2 are the bottleneck, s4-l2 the tighter: 2 flows x 9/16 x r = 10
	asym_topo | sed -e "/^link s3:u4 x4:d3$/d" \
		-e "s/^link l2:u[12] s[34]:d1$/& speed=10G/" >uneven.topo &&
	grep -c "speed=10G" uneven.topo >n && echo 2 >expect && test_cmp expect n &&
	"$TEST_TOOL" model ecmp-brute uneven.topo 10 5 h1:0:h3 h2:0:h4 >out &&
	cat out &&
	grep -x "combinations 81" out &&
	grep -x "spray paths 17.777778 model 17.777778" out &&
	# asym_topo with two 10G cables l2-s3 and one l2-s4: flows arrive evenly at s3 and s4, but s4.s
	# one cable carries half of each flow, s3.s two a quarter: 2 flows x 1/2 x r = 10
	asym_topo | sed -e "s/^link l2:u[12] s[34]:d1$/& speed=10G/" >parallel.topo &&
	echo "link l2:u3 s3:d2 speed=10G" >>parallel.topo &&
	"$TEST_TOOL" model ecmp-brute parallel.topo 10 5 h1:0:h3 h2:0:h4 >out &&
	cat out &&
	grep -x "spray paths 20.000000 model 20.000000" out &&
	# a leaf that is a transit: l3 on every superspine and on l2 (10G), l4 on s4 only; from l1, l2.s
	# three neighbours s3, s4, l3 get a third of a flow each over 10G cables, but l4 -> l3 sprays a
	# fifth of its flow over s4 -> l2 -> l3 too: s4-l2 carries r/3 + r/5 = 10, both flows 18.75
	asym_topo | sed -e "s/^link l2:u[12] s[34]:d1$/& speed=10G/" >transit.topo &&
	printf "%s\n" "switch l3 tier=leaf rail=0" "switch l4 tier=leaf rail=0" "link h5:eth0 l3:p1 rail=0" \
		"link h7:eth0 l4:p1 rail=0" "link l3:l2 l2:l3 speed=10G" "link l4:u1 s4:d9" >>transit.topo &&
	for x in 1 2 3 4; do echo "link l3:x$x x$x:l3" >>transit.topo || return 1; done &&
	"$TEST_TOOL" model ecmp-brute transit.topo 10 5 h1:0:h3 h7:0:h5 >out &&
	cat out &&
	grep -x "combinations 75" out &&
	grep -x "spray paths 37.500000 model 37.500000" out
'

test_expect_success $P 'paths given: ECMP exact along them, spray between their ends' '
	small_topo >small.topo &&
	cat >paths <<-\EOF &&
	# two flows on one spine, one on another
	h1 l1 s1 l2 h3
	h2 l1 s1 l3 h5
	h4 l2 s2 l3 h6
	EOF
	"$FABSCOPE" model small.topo --paths paths --json >m.json &&
	jq -r ".flows[] | \"\(.ecmp_gbps) \(.path)\"" m.json >out &&
	printf "%s\n" "50 h1 l1 s1 l2 h3" "50 h2 l1 s1 l3 h5" "100 h4 l2 s2 l3 h6" >expect &&
	test_cmp expect out &&
	jq -e ".all.ecmp.agg_gbps == 200 and .all.ecmp.line_gbps == 300 and .ecmp == \"paths\"" m.json &&
	jq -e "[.flows[] | .spray_gbps] == [75, 75, 100]" m.json &&
	"$FABSCOPE" model small.topo --paths paths >text &&
	test_grep "ECMP along the paths given" text &&
	test_grep "^ *50.00 *75.00  h1 l1 s1 l2 h3$" text
'

test_expect_success $P 'a permutation on the small fabric: spray loses to the slow cable, ECMP more' '
	small_topo >small.topo &&
	"$FABSCOPE" model small.topo --json --samples 400 >m.json &&
	jq -e ".lanes | length == 1" m.json &&
	jq -e ".all.spray.flows == 6 and .all.spray.line_gbps == 600" m.json &&
	jq -e ".all.spray.frac_line < 1 and .all.ecmp.frac_line < .all.spray.frac_line" m.json &&
	jq -e ".all.ecmp.agg_p5_gbps <= .all.ecmp.agg_gbps and .all.ecmp.agg_gbps <= .all.ecmp.agg_p95_gbps" m.json
'

# shape_file GROUPS HOSTS SPINES: the fabric --shape leaf-spine makes (one rail, 100G), as a file
shape_file() {
	awk -v g="$1" -v h="$2" -v s="$3" "BEGIN {
		for (i = 1; i <= g; i++) printf \"switch l%d.0 tier=leaf rail=0\\n\", i
		for (k = 1; k <= s; k++) printf \"switch s%d tier=spine\\n\", k
		for (i = 1; i <= g * h; i++)
			printf \"link h%d:rail0 l%d.0:h%d rail=0 speed=100G\\n\", i, int((i - 1) / h) + 1, i
		for (i = 1; i <= g; i++)
			for (k = 1; k <= s; k++) printf \"link l%d.0:s%d s%d:l%d.0 speed=100G\\n\", i, k, k, i
	}"
}

test_expect_success $P 'what-if shapes: 1:1 sprays at line rate, 2:1 exactly half; ECMP as enumerated' '
	"$FABSCOPE" model --shape leaf-spine -G 4 -H 4 -S 4 --speed 100 --json >ls.json &&
	jq -e ".all.spray.frac_line == 1" ls.json &&
	# a bisection of 16 hosts on 4 leaves of 4: h1-h4 <-> h9-h12, h5-h8 <-> h13-h16, every flow
	# across, 4 a leaf each way; over 2 spines (2:1) spraying gives each flow 50 (800 in all); per
	# flow ECMP loses a leaf.s uplink when its 4 flows all draw one spine: 750 expected (1/8 of the
	# time 100 a leaf, else 200)
	shape_file 4 4 2 >os.topo &&
	"$FABSCOPE" model --shape leaf-spine -G 4 -H 4 -S 2 --speed 100 --pattern bisection --json >os.json &&
	"$FABSCOPE" model os.topo --pattern bisection --json >osf.json &&
	jq -S ".lanes" os.json >la && jq -S ".lanes" osf.json >lb && test_cmp la lb &&
	jq -e ".all.spray.agg_gbps == 800 and .all.spray.frac_line == 0.5 and .all.spray.flows == 16" os.json &&
	flows= && for i in 1 2 3 4 5 6 7 8; do flows="$flows h$i:0:h$((i + 8)) h$((i + 8)):0:h$i"; done &&
	"$TEST_TOOL" model ecmp-brute os.topo 2000 3 $flows >brute &&
	grep -x "combinations 65536" brute && grep -x "spray paths 800.000000 model 800.000000" brute &&
	grep "^ecmp per-hop 750.000000 per-path 750.000000 " brute &&
	# the model.s own mean of its draws: 200 draws, a standard error of about 5
	jq -e ".samples == 200 and (.all.ecmp.agg_gbps - 750 | fabs) < 20" os.json &&
	"$FABSCOPE" model --shape dual-plane -R 2 -G 2 -H 2 -S 2 --speed 100 --json >dp.json &&
	jq -r ".lanes[] | \"\(.rail)/\(.plane)\"" dp.json >lanes &&
	printf "%s\n" 0/0 0/1 1/0 1/1 >expect &&
	test_cmp expect lanes &&
	"$FABSCOPE" model --shape rail-only -R 2 -G 3 -H 2 -S 2 --speed 100 --pattern alltoall --json >ro.json &&
	jq -e ".all.spray.frac_line == 1" ro.json &&
	"$FABSCOPE" model --shape leaf-spine -G 4 -H 2 -S 2 -P 2 -X 2 --speed 100 --pattern bisection --json >3t.json &&
	jq -e ".all.spray.frac_line == 1" 3t.json &&
	"$FABSCOPE" model --shape leaf-spine --speed 100 >text &&
	test_grep "^lane " text && test_grep "^all " text && test_grep "draws: p5" text
'

test_expect_success $P 'a plan phase: its kind and seed as --pattern gives them, its hostfile.s order' '
	"$FABSCOPE" model --shape leaf-spine -G 4 -H 2 -S 2 --speed 100 --pattern permutation --seed 9 --count 3 --json >a.json &&
	printf "%s\n" "h1 rail0=10.0.0.1" "h2 rail0=10.0.0.2" "h3 rail0=10.0.0.3" "h4 rail0=10.0.0.4" \
		"h5 rail0=10.0.0.5" "h6 rail0=10.0.0.6" "h7 rail0=10.0.0.7" "h8 rail0=10.0.0.8" >hosts &&
	printf "%s\n" "[global]" "hostfile = hosts" "[ping]" "kind = ping" "[perm]" "kind = permutation" \
		"count = 3" "seed = 9" >plan.ini &&
	"$FABSCOPE" model --shape leaf-spine -G 4 -H 2 -S 2 --speed 100 --plan plan.ini --seed 9 --json >b.json &&
	jq -e ".pattern == \"[perm] (permutation, seed 9)\" and .rounds == 3" b.json &&
	jq -S ".lanes" a.json >la && jq -S ".lanes" b.json >lb &&
	test_cmp la lb &&
	# a ring in the hostfile.s order, not the hosts. natural one: 2 hosts a leaf, 2 uplinks of 50G.
	# h1 h2 h3 ... (the default): 4 flows within a leaf, 4 across, one a leaf: 100 each, 800;
	# h1 h3 h5 h7 h2 h4 h6 h8: all 8 across, 2 a leaf on 100 of uplinks: 50 each, 400
	"$FABSCOPE" model --shape leaf-spine -G 4 -H 2 -S 2 --speed 100 --uplink-speed 50 --pattern ring --json >r.json &&
	jq -e ".all.spray.agg_gbps == 800" r.json &&
	printf "%s\n" "h1 rail0=10.0.0.1" "h3 rail0=10.0.0.3" "h5 rail0=10.0.0.5" "h7 rail0=10.0.0.7" \
		"h2 rail0=10.0.0.2" "h4 rail0=10.0.0.4" "h6 rail0=10.0.0.6" "h8 rail0=10.0.0.8" >odd-first &&
	printf "%s\n" "[global]" "hostfile = odd-first" "[ring]" "kind = ring" >ring.ini &&
	"$FABSCOPE" model --shape leaf-spine -G 4 -H 2 -S 2 --speed 100 --uplink-speed 50 --plan ring.ini --json >p.json &&
	jq -e ".pattern == \"[ring] (ring)\" and .all.spray.flows == 8 and .all.spray.agg_gbps == 400" p.json
'

# h01 and h1: one natural key, two names (core/names.h); two rails, so that a sort by natural key
# alone interleaves their ports (h01 rail 0, h1 rail 0, h01 rail 1, ...)
h01_topo() {
	cat <<-\EOF
	switch l1.0 tier=leaf rail=0
	switch l1.1 tier=leaf rail=1
	switch l2.0 tier=leaf rail=0
	switch l2.1 tier=leaf rail=1
	switch s1 tier=spine
	link h01:eth0 l1.0:p1 rail=0 speed=100G
	link h01:eth1 l1.1:p1 rail=1 speed=100G
	link h1:eth0 l1.0:p2 rail=0 speed=100G
	link h1:eth1 l1.1:p2 rail=1 speed=100G
	link h2:eth0 l2.0:p1 rail=0 speed=100G
	link h2:eth1 l2.1:p1 rail=1 speed=100G
	link l1.0:u1 s1:d1 speed=100G
	link l1.1:u1 s1:d2 speed=100G
	link l2.0:u1 s1:d3 speed=100G
	link l2.1:u1 s1:d4 speed=100G
	EOF
}

test_expect_success $P 'h01 and h1 are two hosts: 3 in a 3-host design, their cables taken by --paths and --plan' '
	h01_topo >h01.topo &&
	"$FABSCOPE" model h01.topo --pattern ring >text &&
	test_grep "^fabscope model: h01.topo: 3 hosts, 5 switches; ring, 1 round$" text &&
	"$FABSCOPE" model h01.topo --pattern ring --json >m.json &&
	jq -e "[.lanes[] | .spray.flows] == [3, 3]" m.json &&
	printf "%s\n" "h01 l1.0 s1 l2.0 h2" "h1 l1.1 s1 l2.1 h2" "h2 l2.0 s1 l1.0 h1" >paths &&
	"$FABSCOPE" model h01.topo --paths paths --json >p.json &&
	jq -r ".flows[] | \"\(.rail) \(.ecmp_gbps) \(.path)\"" p.json >out &&
	printf "%s\n" "0 100 h01 l1.0 s1 l2.0 h2" "1 100 h1 l1.1 s1 l2.1 h2" "0 100 h2 l2.0 s1 l1.0 h1" >expect &&
	test_cmp expect out &&
	printf "%s\n" "h2 rail0=10.0.0.2 rail1=10.1.0.2" "h1 rail0=10.0.0.1 rail1=10.1.0.1" \
		"h01 rail0=10.0.0.11 rail1=10.1.0.11" >hosts01 &&
	printf "%s\n" "[global]" "hostfile = hosts01" "[inc]" "kind = incast" "target = h1" >inc.ini &&
	"$FABSCOPE" model h01.topo --plan inc.ini --json >i.json &&
	jq -e "[.lanes[] | .spray.flows] == [2, 2] and .all.spray.line_gbps == 200" i.json
'

test_expect_success $P 'bad input: one line, exit 2' '
	small_topo | sed "s/ speed=100G//" >nospeed.topo &&
	test_expect_exit 2 "$FABSCOPE" model nospeed.topo 2>err &&
	test_line_count = 1 err && test_grep "nospeed.topo:7: .* has no speed=" err &&
	"$FABSCOPE" model nospeed.topo --speed 100 >/dev/null &&
	test_expect_exit 2 "$FABSCOPE" model --shape ring --speed 1 2>err && test_line_count = 1 err &&
	test_expect_exit 2 "$FABSCOPE" model --shape leaf-spine 2>err && test_grep "needs the cables. speed" err &&
	test_expect_exit 2 "$FABSCOPE" model small.topo --pattern shuffle 2>err && test_grep "give permutation" err &&
	echo "h1 l1 s9 l2 h3" >bad.paths &&
	test_expect_exit 2 "$FABSCOPE" model small.topo --paths bad.paths 2>err &&
	test_grep "bad.paths:1: no cable between l1 and s9" err && test_line_count = 1 err &&
	test_expect_exit 2 "$FABSCOPE" model 2>err &&
	test_expect_exit 2 "$FABSCOPE" model small.topo --plan plan.ini --phase nosuch 2>err &&
	test_grep "no phase .nosuch." err
'

test_done
