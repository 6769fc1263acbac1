#!/usr/bin/env bash
test_description='the suspects analysis at scale: test-tool nightly makes a results directory
shaped like a real nightly run (512 nodes x 8 rails: 8 permutation rounds of bw, one of lat, a
ping; records as a real run writes them) with 7 planted faults; fabscope report names exactly
those (every one, nothing else) in summary.json, with --baseline too, and none in a night
without faults; the generator is deterministic by seed.  A lane that large gets its worst pairs
and nodes (the planted slow NICs and paths first, with their leaves) and, with plots, a leaf x
leaf heatmap in place of the node x node one'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_require_in_ci FABSCOPE JQ GNUPLOT
P=FABSCOPE,JQ
FS_TIMEOUT=120

# named DIR: the suspects of DIR's summary.json as the generator prints the faults, sorted
named() {
	jq -r '.runs[0].suspects[] | [.kind, .phase, .test, (.rail | tostring), .node // "-", .peer // "-"] |
		join(" ")' "$1/summary.json" | sort
}

test_expect_success 'setup: two nights of 512 nodes, a night of 64, one without faults' '
	"$TEST_TOOL" nightly night -n 512 --seed 28 >faults.raw &&
	sort faults.raw >faults &&
	test $(wc -l <faults) = 7 &&
	"$TEST_TOOL" nightly base -n 512 --seed 29 >base.raw &&
	sort base.raw >base.faults &&
	! test_cmp faults base.faults >/dev/null &&
	"$TEST_TOOL" nightly small -n 64 --seed 3 | sort >small.faults &&
	"$TEST_TOOL" nightly clean -n 64 --seed 3 --no-faults >clean.faults &&
	test_must_be_empty clean.faults &&
	test $(wc -l <night/results.jsonl) = 37376 &&
	test $(wc -l <small/results.jsonl) = 4672 &&
	jq -e ".nodes | length == 512" night/run.json >/dev/null
'

test_expect_success 'the same seed makes the same bytes' '
	"$TEST_TOOL" nightly again -n 512 --seed 28 >again.faults &&
	test_cmp faults.raw again.faults &&
	cmp night/results.jsonl again/results.jsonl &&
	cmp night/run.json again/run.json
'

test_expect_success $P 'report names exactly the planted faults at 512 nodes' '
	fs_expect 5 report night -o rep --no-plots &&
	named rep >actual &&
	test_cmp faults actual &&
	grep -q "^report: rep/summary.json$" out
'

test_expect_success $P 'and at 64 nodes; a night without faults has no suspects' '
	fs_expect 5 report small -o rep-small --no-plots &&
	named rep-small >actual &&
	test_cmp small.faults actual &&
	fs_expect 5 report clean -o rep-clean --no-plots &&
	named rep-clean >actual &&
	test_must_be_empty actual &&
	jq -e ".runs[0].records == 4672" rep-clean/summary.json >/dev/null
'

test_expect_success $P 'with --baseline (the slow rails differ: a regression), the night'\''s own faults' '
	fs_expect 1 report night --baseline base -o rep-base --no-plots &&
	grep -q "^baseline base: REGRESSED (1 of 16 figures regressed)$" out &&
	named rep-base >actual &&
	test_cmp faults actual &&
	fs_expect 5 report base -o rep-b --no-plots &&
	named rep-b >actual &&
	test_cmp base.faults actual
'

# worst KIND RAIL WHICH: the summary's worst_KIND of the perm-bw bw group of RAIL, field WHICH of the first
worst() {
	jq -r --argjson r "$2" ".runs[0].groups[] | select(.phase == \"perm-bw\" and .test == \"bw\" and .rail == \$r) |
		.worst_$1[0].$3" rep/summary.json
}

test_expect_success $P 'large lanes: the worst pairs and nodes, the planted ones first, with their leaves' '
	jq -e ".runs[0].aggregated_by == {\"key\": \"leaf\", \"groups\": 8}" rep/summary.json &&
	jq -e "[.runs[0].groups[] | select((.worst_pairs | length) == 10 and (.worst_nodes | length) == 10)] |
		length == 16" rep/summary.json >/dev/null &&
	while read -r kind phase test rail node peer; do
		case $kind/$test in
		node/bw) test "$(worst nodes $rail node)" = "$node" &&
			 test "$(worst nodes $rail pairs)" = 16 ;;
		pair/bw) test "$(worst pairs $rail src)" = "$node" &&
			 test "$(worst pairs $rail dst)" = "$peer" ;;
		esac || { echo "not first among the worst: $kind $rail $node $peer"; return 1; }
	done <faults &&
	leaf=$(jq -r ".nodes[] | select(.name == \"$(awk "\$1 == \"node\" && \$3 == \"bw\" { print \$5; exit }" faults)\") | .leaf" \
		night/run.json) &&
	test "$(worst nodes $(awk "\$1 == \"node\" && \$3 == \"bw\" { print \$4; exit }" faults) leaf)" = "$leaf" &&
	grep -q "^## Worst pairs and nodes$" rep/report.md &&
	grep -q "^| # | worst nodes | leaf | median of its pairs (Gb/s) | pairs | of median |$" rep/report.md
'

test_expect_success $P 'worst tables for 64 nodes, none for 16 (the pairwise matrices show them all)' '
	jq -e "[.runs[0].groups[] | select(.worst_pairs)] | length == 16" rep-small/summary.json >/dev/null &&
	"$TEST_TOOL" nightly tiny -n 16 --seed 5 >/dev/null &&
	fs_expect 5 report tiny -o rep-tiny --no-plots &&
	jq -e "[.runs[0].groups[] | select(.worst_pairs)] | length == 0" rep-tiny/summary.json >/dev/null &&
	! grep -q "Worst pairs" rep-tiny/report.md
'

test_expect_success $P,GNUPLOT 'with plots: a leaf x leaf heatmap a lane, CDFs of bandwidth, no node heatmap' '
	fs_expect 5 report night -o rep-plots &&
	test $(ls rep-plots/plots/*-leafheat-perm-bw-bw-r*.svg | wc -l) = 8 &&
	test $(ls rep-plots/plots/*-leafheat-perm-lat-lat-r*.svg | wc -l) = 8 &&
	! ls rep-plots/plots/*-heat-* 2>/dev/null &&
	ls rep-plots/plots/*-cdf-perm-bw-bw.svg &&
	test $(grep -c "^[0-9]" rep-plots/plots/leafheat-perm-bw-bw-r0-p0.dat) = 64 &&
	tail -n +2 rep-plots/plots/cdf-perm-bw-bw.dat | wc -l >rows && test $(cat rows) = 400 &&
	fs_expect 5 report small -o rep-small-plots &&
	test $(ls rep-small-plots/plots/*-heat-perm-bw-bw-r*.svg | wc -l) = 8 &&
	! ls rep-small-plots/plots/*-leafheat-* 2>/dev/null
'

test_expect_success 'test-tool analyze (the analysis at the end of run) names them too' '
	"$TEST_TOOL" analyze night | grep -v "^ " | sed "s/ (null)/ -/g" | sort >actual &&
	test_cmp faults actual
'

test_done
