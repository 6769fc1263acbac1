#!/usr/bin/env bash
test_description='numbers from records are untrusted (issue 41, review of finding 10): a rail,
plane, round, priority or count out of an int'"'"'s range, negative, fractional or not a number is
checked before it is used (core/record.h'"'"'s record_int; a cast of such a double to int is
undefined behaviour, which the ASan tier'"'"'s UBSan now traps): a result with no rail or plane it
could be on is left out and counted, never put on rail -2147483648 or rail 0'
# asan: always: feeds untrusted bytes to C code: records whose numbers are out of every range
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_require_in_ci FABSCOPE JQ
P=FABSCOPE,JQ

# odd DIR JQ-EXPR: the first bw record of DIR changed by JQ-EXPR, appended as one more record
odd() { head -n 1 "$1/results.jsonl" | jq -c "$2" >>"$1/results.jsonl"; }

test_expect_success $P 'results whose rail, plane and round are out of range: left out, counted, no lane of theirs' '
	mkfabric base "{}" h3 10 40 &&
	cp -r base odd &&
	odd odd ".src.rail = 1e300" &&
	odd odd ".src.rail = -5" &&
	odd odd ".src.rail = 2.5" &&
	odd odd ".src.plane = 1e20" &&
	odd odd ".src.rail = \"x\" | .round = 1e300" &&
	odd odd ".round = -1e300" &&
	jq -cn "{schema: \"fabscope.record/1\", test: \"pfc\", status: \"ok\", phase: \"pfc\", src: {node: \"h1\", rail: 1e300},
		priorities: [{prio: 1e20, storm: \"long\", storm_run: 1e300}]}" >>odd/results.jsonl &&
	# written, and INCOMPLETE without thresholds (exit 5): nothing judges pw, lat and pfc
	fs_expect 5 report odd -o rep --no-plots &&
	test_grep "odd/results.jsonl: 5 result(s) whose src.rail or src.plane is no rail or plane" err &&
	test_grep ! "2147483648\|rail -\|rail 1e\|priority -" rep/report.md &&
	jq -e "[.runs[0].groups[]? // empty] | all(.rail >= 0 and .rail < 64)" rep/summary.json >/dev/null &&
	# the odd results left out, the lanes are those of the run without them
	fs_expect 5 report base -o rep0 --no-plots &&
	grep -o "^| pw | bw | rail [0-9]* |" rep/report.md | sort -u >lanes &&
	grep -o "^| pw | bw | rail [0-9]* |" rep0/report.md | sort -u >lanes0 &&
	test -s lanes0 && test_cmp lanes0 lanes
'

test_done
