#!/usr/bin/env bash
test_description='fabscope run on the leaf-spine fabric of namespaces (ci/netns-fabric): agents
inside the host namespaces (local launcher, netns=), a pairwise plan on both rails at once, and a
host link degraded to a tenth of its rate named as the suspect; records carry rails and nodes'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$r
P=ROOT,NETNS,FABSCOPE,JQ
test_require_in_ci ROOT NETNS FABSCOPE JQ

test_expect_success $P 'a 4-host, 2-rail, 4-leaf fabric at 200 Mbit/s, h3 rail 1 at 20 Mbit/s' '
	test_atexit "\"$FABRIC\" down -p $PFX" &&
	"$FABRIC" up -p $PFX -r 200mbit &&
	"$FABRIC" hostfile -p $PFX >hosts &&
	test $(grep -c "^h[0-9] netns=$PFX-h[0-9] rail0=[0-9.]* rail1=[0-9.]* leaf=l[12]$" hosts) = 4 &&
	"$FABRIC" degrade -p $PFX h3:rail1 20mbit
'

test_expect_success $P 'pairwise bw on both rails: every pair measured, h3 rail 1 is the suspect' '
	cat >plan.ini <<-\EOF &&
	[global]
	hostfile = hosts
	duration = 2
	timeout = 5
	label = fabric=netns

	[rails]
	kind = pairwise
	test = bw
	size = 64K
	EOF
	FS_TIMEOUT=120 &&
	fs_run() { timeout $FS_TIMEOUT "$FABSCOPE" run "$@" >out 2>err; } &&
	{ fs_run plan.ini -o r1 --label lb=ecmp || { cat out err >&2; false; }; } &&
	jsonl_ok r1/results.jsonl &&
	# 3 rounds x 2 pairs x 2 rails, all ok, each on its own rail addresses
	test $(jsonl_count r1/results.jsonl ".scope == \"aggregate\" and .status == \"ok\" and (.retest_for | not)") = 12 &&
	test $(jsonl_count r1/results.jsonl ".scope == \"aggregate\" and .src.rail == 1 and
		(.src.ip | startswith(\"10.101.\")) and (.dst.ip | startswith(\"10.101.\")) and (.retest_for | not)") = 6 &&
	test $(jsonl_count r1/results.jsonl ".scope == \"aggregate\" and .src.rail == 0 and
		(.src.ip | startswith(\"10.100.\")) and (.dst.ip | startswith(\"10.100.\")) and (.retest_for | not)") = 6 &&
	# the slow link shows in the numbers: h3 rail 1 pairs well under 40 Mbit/s
	test $(jsonl_count r1/results.jsonl ".scope == \"aggregate\" and .src.rail == 1 and
		(.src.node == \"h3\" or .dst.node == \"h3\") and .metrics.bw_gbps < 0.04 and (.retest_for | not)") = 3 &&
	# and the analysis names it: the node on that rail, nobody else
	grep "^suspect: \[rails\] h3 rail 1: slow with 3 of 3 peers" out &&
	test $(grep -c "^suspect: .* slow with" out) = 1 &&
	jq -e "[.suspects[] | select(.kind == \"node\")] == [.suspects[] | select(.kind == \"node\" and .node == \"h3\" and .rail == 1)]
	       and ([.suspects[] | select(.kind == \"node\")] | length) == 1" r1/run.json >/dev/null &&
	jq -e "(.nodes | length) == 4 and all(.nodes[]; .status == \"ok\")" r1/run.json >/dev/null &&
	# the leaves of the hostfile reach run.json, for the report of a large fleet
	jq -e "[.nodes[] | .leaf] == [\"l1\", \"l1\", \"l2\", \"l2\"]" r1/run.json >/dev/null
'

test_expect_success $P 'the agents ran inside their namespaces' '
	# the client side of each record bound the rail address of its own node
	jq -r "select(.scope == \"aggregate\" and (.retest_for | not)) | \"\(.src.node) \(.src.ip)\"" r1/results.jsonl | sort -u >seen &&
	while read -r node ip; do
		grep -q "^$node .*rail[01]=$ip\( \|$\)" hosts || { echo "$node has no address $ip"; return 1; }
	done <seen
'

test_done
