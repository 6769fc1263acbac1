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

# The expected counts below are taken from the night's own records and run.json (jq), or from the
# generator's definition (tests/helper/test-nightly.c: NODES x 8 rails; bw 8 rounds of a
# permutation, lat one, ping one: 8 x 8 + 8 + 1 records a node), never from fabscope's output.

# lanes DIR: every (phase, test, rail) of DIR's bw and lat results, one a line
lanes() {
	jq -r 'select(.status == "ok" and .scope == "aggregate" and (.test == "bw" or .test == "lat")) |
		"\(.phase) \(.test) \(.src.rail)"' "$1/results.jsonl" | sort -u
}

# leaves DIR: how many leaves DIR's nodes are on (run.json)
leaves() {
	jq "[.nodes[].leaf] | unique | length" "$1/run.json"
}

# pairs_of DIR RAIL NODE: the bw results of the perm-bw phase on RAIL that NODE sent or received
pairs_of() {
	jq -r --argjson r "$2" --arg n "$3" 'select(.phase == "perm-bw" and .test == "bw" and .src.rail == $r and
		(.src.node == $n or .dst.node == $n)) | .job' "$1/results.jsonl" | wc -l
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
	for d in night:512 small:64; do
		jq -r .test ${d%:*}/results.jsonl | sort | uniq -c | awk "{ print \$2, \$1 }" >counts &&
		n=${d#*:} &&
		printf "%s\n" "bw $((n * 8 * 8))" "lat $((n * 8))" "ping $n" >expect &&
		test_cmp expect counts || return 1
	done &&
	jq -e ".nodes | length == 512" night/run.json >/dev/null &&
	test $(leaves night) = $((512 / 64))
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
	jq -e ".runs[0].records == $(wc -l <clean/results.jsonl)" rep-clean/summary.json >/dev/null
'

test_expect_success $P 'with --baseline (the slow rails differ: a regression), the night'\''s own faults' '
	# a figure a lane of both nights; regressed: the lanes slow in this night and not in the base
	lanes night >a && lanes base >b && test_cmp a b &&
	awk "\$1 == \"lane\" { print \$2, \$3, \$4 }" faults | sort >slow.night &&
	awk "\$1 == \"lane\" { print \$2, \$3, \$4 }" base.faults | sort >slow.base &&
	regressed=$(comm -23 slow.night slow.base | wc -l) &&
	test $regressed -ge 1 &&
	fs_expect 1 report night --baseline base -o rep-base --no-plots &&
	grep -q "^baseline base: REGRESSED ($regressed of $(wc -l <a) figures regressed)$" out &&
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
	jq -e ".runs[0].aggregated_by == {\"key\": \"leaf\", \"groups\": $(leaves night)}" rep/summary.json &&
	# every lane: the 10 worst of each (fabscope-report(1)), a lane has thousands of pairs
	jq -e "[.runs[0].groups[] | select((.worst_pairs | length) == 10 and (.worst_nodes | length) == 10)] |
		length == $(lanes night | wc -l)" rep/summary.json >/dev/null &&
	while read -r kind phase test rail node peer; do
		case $kind/$test in
		node/bw) test "$(worst nodes $rail node)" = "$node" &&
			 test "$(worst nodes $rail pairs)" = "$(pairs_of night $rail $node)" ;;
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
	jq -e "[.runs[0].groups[] | select(.worst_pairs)] | length == $(lanes small | wc -l)" rep-small/summary.json \
		>/dev/null &&
	"$TEST_TOOL" nightly tiny -n 16 --seed 5 >/dev/null &&
	fs_expect 5 report tiny -o rep-tiny --no-plots &&
	jq -e "[.runs[0].groups[] | select(.worst_pairs)] | length == 0" rep-tiny/summary.json >/dev/null &&
	! grep -q "Worst pairs" rep-tiny/report.md
'

test_expect_success $P,GNUPLOT 'with plots: a leaf x leaf heatmap a lane, CDFs of bandwidth, no node heatmap' '
	fs_expect 5 report night -o rep-plots &&
	test $(ls rep-plots/plots/*-leafheat-perm-bw-bw-r*.svg | wc -l) = $(lanes night | grep -c " bw ") &&
	test $(ls rep-plots/plots/*-leafheat-perm-lat-lat-r*.svg | wc -l) = $(lanes night | grep -c " lat ") &&
	! ls rep-plots/plots/*-heat-* 2>/dev/null &&
	ls rep-plots/plots/*-cdf-perm-bw-bw.svg &&
	# a cell for every leaf pair that has a result: in a permutation of 512 nodes over 8 rounds,
	# every pair of the 8 leaves has some (counted from the records)
	jq -r --slurpfile run night/run.json "(\$run[0].nodes | map({(.name): .leaf}) | add) as \$leaf |
		select(.phase == \"perm-bw\" and .test == \"bw\" and .src.rail == 0) |
		\"\(\$leaf[.src.node]) \(\$leaf[.dst.node])\"" night/results.jsonl | sort -u | wc -l >cells &&
	test $(grep -c "^[0-9]" rep-plots/plots/leafheat-perm-bw-bw-r0-p0.dat) = $(cat cells) &&
	# the bandwidth CDF: a column pair (rate, fraction) a lane, both rising, every fraction to 1,
	# no more steps than a lane has pairs (4,096: 512 nodes x 8 rounds)
	tail -n +2 rep-plots/plots/cdf-perm-bw-bw.dat >rows &&
	test $(wc -l <rows) -le $((512 * 8)) && test $(wc -l <rows) -ge 100 &&
	awk -v cols=$((2 * $(lanes night | grep -c " bw "))) "NF != cols { exit 1 }
		{ for (i = 1; i <= NF; i++) { if (NR > 1 && \$i < p[i]) exit 1; p[i] = \$i } }
		END { for (i = 2; i <= cols; i += 2) if (p[i] != 1) exit 1 }" rows &&
	fs_expect 5 report small -o rep-small-plots &&
	test $(ls rep-small-plots/plots/*-heat-perm-bw-bw-r*.svg | wc -l) = $(lanes small | grep -c " bw ") &&
	! ls rep-small-plots/plots/*-leafheat-* 2>/dev/null
'

test_expect_success 'test-tool analyze (the analysis at the end of run) names them too' '
	"$TEST_TOOL" analyze night | grep -v "^ " | sed "s/ (null)/ -/g" | sort >actual &&
	test_cmp faults actual
'

test_done
