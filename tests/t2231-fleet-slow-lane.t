#!/usr/bin/env bash
test_description='fabscope run judges a job by its progress, not by a clock: an all-reduce on a lane
with one link at a tenth of the others'"'"' rate runs long past the time it was given and finishes
every size (a record each), because its bytes keep moving; the same job with its engines stopped
(SIGSTOP) moves nothing and is stopped as hung, the message saying what it did last, the records
of the sizes it finished kept'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$s
P=ROOT,NETNS,FABSCOPE,JQ
test_require_in_ci ROOT NETNS FABSCOPE JQ

test_expect_success $P 'a 4-host, 2-rail fabric at 200 Mbit/s, h3 rail 1 at 20 Mbit/s' '
	test_atexit "\"$FABRIC\" down -p $PFX" &&
	"$FABRIC" up -p $PFX -r 200mbit &&
	"$FABRIC" hostfile -p $PFX >hosts &&
	"$FABRIC" degrade -p $PFX h3:rail1 20mbit
'

# The time a job is given (fabscope-run(1): its sizes at a floor of 1 Gb/s a rank, twice, and three
# of its --timeout and 10 s: some 25 s here) is what stopped such a job before: rail 1 moves 1.5 x
# (1 + 2 + 4 + 8) MiB per call, 4 calls a size, through h3'"'"'s 20 Mbit/s link each way, which
# the shaper bounds to no less than about 38 s; rail 0, ten times as fast, ends in a few seconds.
# No figure of time is checked: that every size has its record, and the run exit 0, is the point.
test_expect_success $P 'plan: an all-reduce of 1M to 8M, 1 warm-up and 3 timed calls a size' '
	cat >plan.ini <<-\EOF
	[global]
	hostfile = hosts
	timeout = 4

	[ar]
	kind = allreduce
	minbytes = 1M
	maxbytes = 8M
	warmup = 1
	iters = 3
	EOF
'

test_expect_success $P 'the slow lane finishes its sizes: a record for each, on both lanes; exit 0' '
	{ timeout 300 "$FABSCOPE" run plan.ini -o r1 >out 2>err || { cat out err >&2; false; }; } &&
	jsonl_ok r1/results.jsonl &&
	for rail in 0 1; do
		jq -s -e --argjson r $rail "[.[] | select(.rail == \$r and .retest_for == null)] |
			length == 4 and all(.[]; .status == \"ok\" and .metrics.wrong == 0) and
			(map(.msg_size_bytes) == [1048576, 2097152, 4194304, 8388608])" r1/results.jsonl >/dev/null ||
			return 1
	done &&
	test_grep ! "hung" err &&
	jq -e ".failed_jobs == 0 and .status == \"finished\"" r1/run.json >/dev/null
'

# The engines of rail 1 (each agent'"'"'s one job left once rail 0 is done) stopped after its first
# size: nothing moves, no record comes, so once past its time and 22 s (3 x 4 + 10) of silence
# the coordinator stops the job, as hung, and says what came last.
test_expect_success $P 'the same job with its engines stopped: stopped as hung, what it did last said' '
	fleet_run_bg run2.log plan.ini -o r2 &&
	test_wait_for 120 eval "test \$(jsonl_count r2/results.jsonl \".rail == 0\") = 4 &&
		test \$(jsonl_count r2/results.jsonl \".rail == 1\") -ge 1" &&
	stopped= &&
	for a in $(fleet_agents $fleet_pid); do
		for j in $(pgrep -P $a); do
			kill -STOP $j && stopped="$stopped $j" || return 1
		done
	done &&
	test_atexit "kill -CONT $stopped 2>/dev/null || :" &&
	test $(echo $stopped | wc -w) = 4 &&
	fleet_wait $fleet_pid 180 && test $fleet_rc = 4 &&
	jsonl_ok r2/results.jsonl &&
	jq -s -e "[.[] | select(.status == \"error\" and .retest_for == null)] | length == 1 and .[0].rail == 1 and
		(.[0].error | test(\"^no progress for [0-9]+ s \\\\(no record, no bytes moved\\\\), [0-9]+ s after it started: stopped as hung \\\\(the agent or its engine\\\\); last: h[1-4]: \"))" \
		r2/results.jsonl >/dev/null &&
	# the sizes it finished stay: rail 1'"'"'s first ones, all of rail 0
	test $(jsonl_count r2/results.jsonl ".rail == 1 and .status == \"ok\" and .msg_size_bytes == 1048576 and
		.retest_for == null") = 1 &&
	test $(jsonl_count r2/results.jsonl ".rail == 0 and .status == \"ok\" and .retest_for == null") = 4 &&
	grep "stopped as hung" run2.log
'

test_done
