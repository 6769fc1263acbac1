#!/usr/bin/env bash
test_description='the suspects analysis at scale: test-tool nightly makes a results directory
shaped like a real nightly run (512 nodes x 8 rails: 8 permutation rounds of bw, one of lat, a
ping; records as a real run writes them) with 7 planted faults; fabscope report names exactly
those (every one, nothing else) in summary.json, with --baseline too, and none in a night
without faults; the generator is deterministic by seed'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_require_in_ci FABSCOPE JQ
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
	fs_expect 0 report night -o rep --no-plots &&
	named rep >actual &&
	test_cmp faults actual &&
	grep -q "^report: rep/summary.json$" out
'

test_expect_success $P 'and at 64 nodes; a night without faults has no suspects' '
	fs_expect 0 report small -o rep-small --no-plots &&
	named rep-small >actual &&
	test_cmp small.faults actual &&
	fs_expect 0 report clean -o rep-clean --no-plots &&
	named rep-clean >actual &&
	test_must_be_empty actual &&
	jq -e ".runs[0].records == 4672" rep-clean/summary.json >/dev/null
'

test_expect_success $P 'with --baseline (the slow rails differ: a regression), the night'\''s own faults' '
	fs_expect 1 report night --baseline base -o rep-base --no-plots &&
	grep -q "^baseline base: REGRESSED (1 of 16 figures regressed)$" out &&
	named rep-base >actual &&
	test_cmp faults actual &&
	fs_expect 0 report base -o rep-b --no-plots &&
	named rep-b >actual &&
	test_cmp base.faults actual
'

test_expect_success 'test-tool analyze (the analysis at the end of run) names them too' '
	"$TEST_TOOL" analyze night | grep -v "^ " | sed "s/ (null)/ -/g" | sort >actual &&
	test_cmp faults actual
'

test_done
