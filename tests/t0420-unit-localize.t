#!/usr/bin/env bash
test_description='fabscope monitor analyze: the vote over probe groups and its hysteresis, on a small
hand-made leaf-spine (3 leaf groups of 4 hosts, 4 rails, 4 spines): the scrapes of every agent
and the traced paths are made by test-tool localize-sim (ECMP by a hash per switch, a fault
dropping 2 % of what crosses it, 1e-4 noise everywhere), read back by the command with --replay.
A fault on a leaf uplink (leaf -> spine) and on a spine downlink (spine -> leaf) names that link
and nothing else; a NIC names the NIC, not a link; two NICs of one host on two of its four rails
name both NICs, not the host; a busy host (loss on every rail) and noise name no link or NIC;
a fault must last K intervals to be named and is cleared after K healthy ones; the same input
gives the same output; without traced paths an uplink fault is inconclusive between the
uplinks of its leaf and a NIC is still named'
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL FABSCOPE
test_lazy_prereq JQ 'command -v jq'
test_require_in_ci JQ
P=TEST_TOOL,FABSCOPE,JQ

# the design: leaves lG.R (group G, rail R), spines s1..s4, hosts h1..h12 (4 a group)
design() {
	local r g k i
	for r in 0 1 2 3; do
		for g in 1 2 3; do echo "switch l$g.$r tier=leaf rail=$r"; done
	done
	for k in 1 2 3 4; do echo "switch s$k tier=spine"; done
	for r in 0 1 2 3; do
		for i in $(seq 1 12); do
			g=$(((i - 1) / 4 + 1))
			echo "link h$i:rail$r l$g.$r:h$i rail=$r speed=400G"
		done
		for g in 1 2 3; do
			for k in 1 2 3 4; do echo "link l$g.$r:s$k s$k:l$g.$r speed=400G"; done
		done
	done
}

# scenario DIR [SIM OPTION...]: the scrapes and paths of a run of 6 intervals
scenario() {
	local dir=$1
	shift
	mkdir -p "$dir" &&
	"$TEST_TOOL" localize-sim --topology fab.topo --peers 4 --buckets 4 --width 4 --probes 200 \
		--intervals 6 --loss 0.02:0.02 --busy 0 --seed 7 --write "$dir" "$@" >"$dir/sim.out"
}

# analyze DIR [OPTION...]: the command over DIR's scrapes, JSON lines in DIR/out.jsonl
analyze() {
	local dir=$1 rc=0
	shift
	# (the simulator's buckets are 4 source ports wide; the agent's default, the analyzer's, is 1)
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay "$dir"/scrape-*.prom "$@" \
		>"$dir/out.jsonl" 2>"$dir/err" || rc=$?
	echo "$rc" >"$dir/rc"
}

# named DIR: what was named, in order, a line each ("interval kind name-or-from>to")
named() {
	jq -r 'select(.event == "named") | "\(.interval) \(.kind) " +
		(if .kind == "link" then "\(.from)>\(.to)" elif .kind == "nic" then "\(.node):\(.rail)" else .node end)' \
		"$1/out.jsonl"
}

# every EVENT line of FILE holds for COND (a jq expression), and there is one at least
all_of() {
	jq -s -e --arg ev "$2" "map(select(.event == \$ev)) | length > 0 and all(.[]; $3)" "$1" >/dev/null
}

test_expect_success $P 'the design' '
	design >fab.topo &&
	"$FABSCOPE" topo check-file fab.topo >check &&
	test_grep "16 switches, 12 nodes, 96 cables: 0 errors" check
'

test_expect_success $P 'a leaf uplink (l1.0 -> s2): that link, and nothing else' '
	scenario up --fault link:l1.0:s2 &&
	analyze up --paths up/paths.jsonl --verdicts up/verdicts.prom &&
	echo "3 link l1.0>s2" >expect &&
	named up >actual &&
	test_cmp expect actual &&
	echo 1 >expect && test_cmp expect up/rc &&
	grep -v "^#" up/verdicts.prom >v &&
	echo "fabscope_link_suspect{from=\"l1.0\",to=\"s2\",rail=\"0\",plane=\"\"} 1" >expect &&
	test_cmp expect v
'

test_expect_success $P 'the verdict says its evidence and how it was confirmed' '
	all_of up/out.jsonl named ".failing_through > 0 and (.healthy_avoiding | type == \"number\") and .paths == \"traced\" and
		.bad_rate > 0.005 and .bad_rate < 0.04 and
		(.confirmed | test(\"3 intervals in a row .the failing groups. paths traced.\"))" &&
	test_line_count = 7 up/out.jsonl &&
	all_of up/out.jsonl interval ".groups >= 700 and .probes > 100000"
'

test_expect_success $P 'a spine downlink (s3 -> l2.1): that link, and nothing else' '
	scenario down --fault link:s3:l2.1 &&
	analyze down --paths down/paths.jsonl &&
	echo "3 link s3>l2.1" >expect &&
	named down >actual &&
	test_cmp expect actual
'

test_expect_success $P 'a NIC (h6 rail 1): the NIC, no link' '
	scenario nic --fault nic:h6:1 &&
	analyze nic --paths nic/paths.jsonl --verdicts nic/verdicts.prom &&
	echo "3 nic h6:1" >expect &&
	named nic >actual &&
	test_cmp expect actual &&
	grep -v "^#" nic/verdicts.prom >v &&
	echo "fabscope_nic_suspect{node=\"h6\",rail=\"1\",plane=\"0\"} 1" >expect &&
	test_cmp expect v
'

test_expect_success $P 'two NICs of one host, on two of its four rails: both NICs, not the host' '
	scenario two --fault nic:h9:0 --fault nic:h9:2 &&
	analyze two --paths two/paths.jsonl &&
	printf "3 nic h9:0\n3 nic h9:2\n" >expect &&
	named two | sort >actual &&
	test_cmp expect actual
'

test_expect_success $P 'a busy host (0.5 % lost on every rail) and noise: no link, no NIC' '
	scenario busy --busy-host h4 --busy-loss 0.005 &&
	analyze busy --paths busy/paths.jsonl &&
	named busy >actual &&
	test_grep ! -e " link " -e " nic " actual &&
	echo "3 host h4" >expect &&
	test_cmp expect actual
'

test_expect_success $P 'a healthy fabric with noise: nothing named, exit 0' '
	scenario healthy &&
	analyze healthy --paths healthy/paths.jsonl &&
	named healthy >actual &&
	test_must_be_empty actual &&
	echo 0 >expect && test_cmp expect healthy/rc &&
	all_of healthy/out.jsonl interval ".suspects == []"
'

test_expect_success $P 'hysteresis: 2 intervals of a fault name nothing with K 3, the link with K 2' '
	scenario short --fault link:l1.0:s2 --fault-from 1 --fault-to 3 &&
	analyze short --paths short/paths.jsonl &&
	named short >actual &&
	test_must_be_empty actual &&
	analyze short --paths short/paths.jsonl -K 2 &&
	echo "3 link l1.0>s2" >expect &&
	named short >actual &&
	test_cmp expect actual
'

test_expect_success $P 'hysteresis: cleared after K healthy intervals, named no more' '
	scenario clear --fault nic:h2:3 --fault-to 3 &&
	analyze clear --paths clear/paths.jsonl -K 2 &&
	jq -r "select(.event == \"named\" or .event == \"cleared\") | \"\(.interval) \(.event) \(.node)\"" \
		clear/out.jsonl >actual &&
	printf "2 named h2\n5 cleared h2\n" >expect &&
	test_cmp expect actual &&
	all_of clear/out.jsonl cleared ".confirmed == \"no suspect in 2 intervals in a row\"" &&
	echo 0 >expect && test_cmp expect clear/rc
'

test_expect_success $P 'the same input, the same output' '
	cp up/out.jsonl first.jsonl &&
	analyze up --paths up/paths.jsonl &&
	test_cmp first.jsonl up/out.jsonl
'

test_expect_success $P 'without traced paths: an uplink fault is inconclusive, a NIC is still named' '
	analyze up &&
	named up >actual &&
	test_must_be_empty actual &&
	all_of up/out.jsonl interval "(.suspects | length > 0) and (.suspects[0].inconclusive_between | length > 0)" &&
	analyze nic &&
	echo "3 nic h6:1" >expect &&
	named nic >actual &&
	test_cmp expect actual
'

test_done
