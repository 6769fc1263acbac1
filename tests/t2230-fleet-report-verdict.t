#!/usr/bin/env bash
test_description='the report.s verdict of a run on the bed with one slow link (issue 40, Why 1): a
dual-plane fabric of 4 hosts, links at 200 Mbit/s but host h4.s rail 1 plane 1 at 20 Mbit/s, a
pairwise bandwidth phase on its 4 lanes.  Without thresholds or the design the run.s integrity
judges it: h4, slow with every peer there, is a suspect its re-test confirmed, so FAIL (exit 1),
never PASS, and the phase said to have no criterion of its own; with the design (--topology)
every pair is held against its fair share of the fabric and the pairs of the slow link fail
(exit 1), first in the report.  Only what the shaper guarantees is asserted: those pairs carry
at most 20 Mbit/s'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$v
P=ROOT,NETNS,FABSCOPE,JQ
test_require_in_ci ROOT NETNS FABSCOPE JQ
. "$TEST_DIRECTORY/lib-fabric.sh"

test_expect_success $P 'a dual-plane bed, h4 rail 1 plane 1 at 20 Mbit/s; a pairwise run on every lane' '
	test_atexit "\"$FABRIC\" down -p $PFX >/dev/null 2>&1 || true" &&
	fab up --shape dual-plane -G 2 -H 2 -R 2 -S 2 -r 200mbit >/dev/null &&
	fab degrade h4:rail1.1 20mbit >/dev/null &&
	fab hostfile >hosts &&
	fab intent >design.topo &&
	cat >plan.ini <<-\EOF &&
	[global]
	hostfile = hosts
	duration = 2
	timeout = 10

	[pw]
	kind = pairwise
	test = bw
	size = 1M
	EOF
	{ timeout 180 "$FABSCOPE" run plan.ini -o r >run.out 2>&1 || { cat run.out >&2; false; }; } &&
	# 4 nodes: 3 rounds of 2 pairs, on 4 lanes at once
	jq -e "[.planned[] | [.name, .jobs]] == [[\"pw\", 24]]" r/run.json >/dev/null &&
	test $(jsonl_count r/results.jsonl ".scope == \"aggregate\" and .status == \"ok\" and (.retest_for | not)") = 24 &&
	# what the shaper guarantees: h4 on rail 1 plane 1 carries about 20 Mbit/s (the tbf burst of
	# 128 KiB adds more the shorter the timed window, on a busy machine too): under a quarter of
	# the 200 of the others, whatever the machine
	jq -s -e "[.[] | select(.scope == \"aggregate\" and .src.rail == 1 and .src.plane == 1 and
		(.retest_for | not) and (.src.node == \"h4\" or .dst.node == \"h4\")) | .metrics.bw_gbps] |
		length == 3 and all(. < 0.05)" r/results.jsonl >/dev/null &&
	# every re-test of h4 there too (a node: with two fresh peers)
	jq -s -e "[.[] | select(.scope == \"aggregate\" and .retest_role == \"fresh\") | .metrics.bw_gbps] |
		length == 2 and all(. < 0.05)" r/results.jsonl >/dev/null
'

test_expect_success $P 'without thresholds or the design: FAIL on the confirmed suspect, exit 1, the phase named' '
	test_expect_exit 1 "$FABSCOPE" report r -o rep0 --no-plots >out &&
	test_grep -x "acceptance: FAIL (1 of 4 checks failed; not judged: pw has no criterion)" out &&
	sed -n 3p rep0/report.md >line && test_grep -x "## Verdict: FAIL" line &&
	test_grep "^| no suspect confirmed by a re-test | 0 | 1 confirmed, 0 not | 1 of 1 | \*\*FAIL\*\* | node h4 rail 1 plane 1 (pw bw) |$" rep0/report.md &&
	jq -e ".verdict.result == \"FAIL\" and .verdict.exit_code == 1" rep0/summary.json >/dev/null
'

test_expect_success $P 'with the design: the slow link.s pairs fail against their fair share, exit 1' '
	test_expect_exit 1 "$FABSCOPE" report r -o rep1 --no-plots --topology design.topo >out &&
	cat out &&
	test_grep "^acceptance: FAIL ([1-9] of 6 checks failed)$" out &&
	sed -n 3p rep1/report.md >line && test_grep -x "## Verdict: FAIL" line &&
	# every pair of h4 on rail 1 plane 1 is under a quarter of its 0.2 Gb/s share
	jq -e "(.acceptance.checks[] | select(.check | startswith(\"bw >= 0.25 x the pair\")) |
		.pass == false and .failing >= 3) and .verdict.exit_code == 1" rep1/summary.json >/dev/null &&
	n=$(jq ".acceptance.checks[] | select(.check | startswith(\"bw >= 0.25 x the pair\")) | .failing" rep1/summary.json) &&
	grep "^- \*\*bw >= 0.25 x the pair" rep1/report.md >failing &&
	cat failing &&
	# on a machine that kept up, those three are all that failed, and the first lines name them
	if test "$n" = 3; then
		test $(tr "," "\n" <failing | grep " rail 1 plane 1 (" | grep -c "h4") = 3 || return 1
	fi &&
	# what was tested: the lanes, the design.s speeds, the jobs
	test_grep -F "| rails and planes | rails 0, 1; planes 0, 1 (4 lanes) |" rep1/report.md &&
	test_grep -F "| link speeds | 0.2 Gb/s every host port; switch links 0.2 Gb/s (the design, design.topo) |" rep1/report.md &&
	test_grep -F "| jobs | 24 planned, 24 ran, 0 failed |" rep1/report.md &&
	test_grep -F "| phase pw | bw: 24 of 24 pairs on 4 lanes, one way |" rep1/report.md
'

test_done
