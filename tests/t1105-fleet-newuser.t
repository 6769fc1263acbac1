#!/usr/bin/env bash
test_description='fabscope run as a new user meets it: a phase overrides a [global] duration
with its own iters (both in one section: one line naming the plan keys); --dry-run counts the
rounds the run runs; --resume of a finished run launches nothing; the local launcher runs
--agent-cmd; a plan with nothing to run is refused, a phase that cannot run is said; the cause
of an agent that ended before joining is in the records and the report'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_require_in_ci FABSCOPE JQ
P=FABSCOPE,JQ

test_expect_success $P 'a phase iters overrides a [global] duration, and the reverse' '
	cat >iters.ini <<-\EOF &&
	[global]
	duration = 0.3
	timeout = 3
	[l]
	kind = pairwise
	test = lat
	iters = 100
	EOF
	fs_expect 0 run iters.ini -n 2 -o ri &&
	test $(jsonl_count ri/results.jsonl ".status == \"ok\" and .params.iters == 100 and .params.duration_s == 0") = 1 &&
	cat >dur.ini <<-\EOF &&
	[global]
	iters = 100
	timeout = 3
	[b]
	kind = pairwise
	duration = 0.3
	[l]
	kind = pairwise
	test = lat
	EOF
	fs_expect 0 run dur.ini -n 2 -o rd &&
	test $(jsonl_count rd/results.jsonl ".phase == \"b\" and .scope == \"aggregate\" and .status == \"ok\" and .params.duration_s == 0.3") = 1 &&
	# the phase without its own: [global]s iters
	test $(jsonl_count rd/results.jsonl ".phase == \"l\" and .status == \"ok\" and .params.iters == 100") = 1
'

test_expect_success $P 'iters and duration in one section: exit 2, the plan keys and file:line' '
	printf "[global]\nduration = 1\n[l]\nkind = pairwise\niters = 100\nduration = 0.3\n" >both.ini &&
	fs_expect 2 run both.ini -n 2 -o rb &&
	ptp_one_error err "both.ini:6: duration and iters (line 5) of [l] exclude each other" &&
	! grep -q -e "-n and -D" err &&
	! test -e rb &&
	printf "[global]\niters = 5\nduration = 1\n[l]\nkind = pairwise\n" >bothg.ini &&
	fs_expect 2 run --dry-run bothg.ini -n 2 &&
	ptp_one_error err "bothg.ini:3: duration and iters (line 2) of [global] exclude each other"
'

test_done
