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

test_expect_success $P 'ECMP drawn agrees with ECMP enumerated (729 combinations) within 2 %' '
	small_topo >small.topo &&
	"$TEST_TOOL" model ecmp-brute small.topo 20000 5 h1:0:h3 h2:0:h5 h3:0:h6 h4:0:h1 h5:0:h2 h6:0:h4 >out &&
	cat out &&
	grep -q "^combinations 729 " out &&
	perl -ne "exit 1 if /exact ([0-9.]+) sampled ([0-9.]+)/ && abs(\$2 - \$1) > 0.02 * \$1" out
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

test_expect_success $P 'what-if shapes: a 1:1 leaf-spine sprays at line rate, ECMP does not; 2:1 halves' '
	"$FABSCOPE" model --shape leaf-spine -G 4 -H 4 -S 4 --speed 100 --json >ls.json &&
	jq -e ".all.spray.frac_line == 1 and .all.ecmp.frac_line > 0.5 and .all.ecmp.frac_line < 0.9" ls.json &&
	"$FABSCOPE" model --shape leaf-spine -G 4 -H 4 -S 2 --speed 100 --json >os.json &&
	jq -e ".all.spray.frac_line < 0.7" os.json &&
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

test_expect_success $P 'a plan phase: its kind, seed and hostfile order, as --pattern gives them' '
	"$FABSCOPE" model --shape leaf-spine -G 4 -H 2 -S 2 --speed 100 --pattern permutation --seed 9 --count 3 --json >a.json &&
	printf "%s\n" "h1 rail0=10.0.0.1" "h2 rail0=10.0.0.2" "h3 rail0=10.0.0.3" "h4 rail0=10.0.0.4" \
		"h5 rail0=10.0.0.5" "h6 rail0=10.0.0.6" "h7 rail0=10.0.0.7" "h8 rail0=10.0.0.8" >hosts &&
	printf "%s\n" "[global]" "hostfile = hosts" "[ping]" "kind = ping" "[perm]" "kind = permutation" \
		"count = 3" "seed = 9" >plan.ini &&
	"$FABSCOPE" model --shape leaf-spine -G 4 -H 2 -S 2 --speed 100 --plan plan.ini --seed 9 --json >b.json &&
	jq -e ".pattern == \"[perm] (permutation, seed 9)\" and .rounds == 3" b.json &&
	jq -S ".lanes" a.json >la && jq -S ".lanes" b.json >lb &&
	test_cmp la lb
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
