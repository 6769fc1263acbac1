#!/usr/bin/env bash
test_description='the fleet control protocol against hostile peers (tests/helper/test-fleet-fuzz.c):
a fake coordinator against real agents (bad challenges and welcomes, hostile message
streams, bad frames; exit codes, bounded waits, no job process left behind), and hostile
agents against a real coordinator whose run still finishes with the real agents'
# asan: always: feeds untrusted bytes to C code: fuzzed fleet-protocol messages
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_require_in_ci FABSCOPE TEST_TOOL JQ
P=FABSCOPE,TEST_TOOL,JQ

# The agent side: each seed starts 20 agents, one after another.
for seed in 1 2; do
	test_expect_success FABSCOPE,TEST_TOOL "agents against a hostile coordinator, seed $seed" '
		{ "$TEST_TOOL" fleet-fuzz agent 20 '$seed' "$FABSCOPE" >out 2>err ||
			{ cat err; false; }; } &&
		test_grep "^agents 20 exit0 [0-9]* exit3 [0-9]* exit4 [1-9]" out &&
		test_must_be_empty err &&
		! test -e fz-injected.json
	'
done

cat >plan.ini <<\EOF
# three nodes: the real n1 and n2, and fz, a hostile agent
[global]
duration = 0.2
timeout = 1

[pw]
kind = pairwise

[ping]
kind = ping
EOF
echo "fleet-fuzz-token" >token
chmod 600 token

# coord_fuzz SEED N DIR LAUNCHER-ARGS... : a run of plan.ini expecting fz and
# two real agents (named $real); test-tool fleet-fuzz coord is fz and N hostile
# connections; the real agents start once its first half is done
coord_fuzz() {
	local seed=$1 n=$2 dir=$3 port
	shift 3
	port=$(ptp_port $((seed % 8)))
	fleet_run_bg $dir.log plan.ini --launcher external --listen 127.0.0.1:$port \
		--token-file token -o $dir --agent-timeout 2 --join-timeout 30 "$@" || return 1
	run=$fleet_pid
	ptp_wait_listen $port $run || return 1
	: >$dir.fz
	"$TEST_TOOL" fleet-fuzz coord $n $seed 127.0.0.1:$port "$(cat token)" 2 >$dir.fz 2>$dir.fz.err &
	fz=$!
	test_atexit "test_kill_pid $fz"
	test_wait_for 30 grep -q "^phase 1 done" $dir.fz || { cat $dir.fz.err $dir.log; return 1; }
	set -- $real
	fleet_agent_bg $dir.a1 --connect 127.0.0.1:$port --token-file token --name $1 && a1=$agent_pid &&
	fleet_agent_bg $dir.a2 --connect 127.0.0.1:$port --token-file token --name $2 && a2=$agent_pid &&
	fleet_wait $run 60 && coord_rc=$fleet_rc &&
	fleet_wait $fz 10 && fz_rc=$fleet_rc &&
	fleet_wait $a1 10 && a1_rc=$fleet_rc &&
	fleet_wait $a2 10 && a2_rc=$fleet_rc &&
	echo "coordinator $coord_rc, fuzzer $fz_rc, agents $a1_rc $a2_rc" &&
	cat $dir.fz $dir.fz.err
}

# What a run around the hostile agents must come to: fz stayed (heartbeats) but
# failed its 2 pairwise jobs (its own done, exit non-zero), so exit 4 with no
# agent missing (its own records, some with status error, are in those jobs); the real pair was measured; fz's ping answered; records of the
# hostile agent for ids not its own, and pongs for jobs that are not pings,
# changed nothing; results.jsonl is valid JSONL.  A record fz made up may make
# a suspect, which the run re-tests with fz in it (and fz fails that too): any
# other failed job is such a re-test, of fz; no job without fz failed.
check_run() {
	local dir=$1 a=$2 b=$3 failed retests
	test "$coord_rc" = 4 && test "$fz_rc" = 0 && test "$a1_rc" = 0 && test "$a2_rc" = 0 &&
	test_must_be_empty $dir.fz.err &&
	test_grep "^connections [1-9][0-9]* closed [1-9][0-9]* refused [1-9]" $dir.fz &&
	jsonl_ok $dir/results.jsonl &&
	jq -e ".missing_agents == 0 and (.nodes | length) == 3 and
	       all(.nodes[]; .status == \"ok\")" $dir/run.json >/dev/null &&
	test $(jq -r "select(.phase == \"pw\" and .status == \"error\" and (.retest_for | not) and
	       (.src.node == \"fz\" or .dst.node == \"fz\")) | .job" $dir/results.jsonl | sort -u | wc -l) = 2 &&
	failed=$(jq .failed_jobs $dir/run.json) &&
	retests=$(jq -r "select(.retest_for and (.src.node == \"fz\" or .dst.node == \"fz\")) | .job" \
		$dir/results.jsonl | sort -u | wc -l) &&
	echo "failed jobs: $failed, re-test jobs with fz: $retests" &&
	test $failed -ge 2 && test $((failed - 2)) -le $retests &&
	test $(jsonl_count $dir/results.jsonl ".status == \"error\" and .src.node != \"fz\" and
	       .dst.node != \"fz\"") = 0 &&
	test $(jsonl_count $dir/results.jsonl ".phase == \"pw\" and .test == \"bw\" and .status == \"ok\" and
	       .scope == \"aggregate\" and ([.src.node, .dst.node] | sort) == [\"$a\", \"$b\"]") -ge 1 &&
	test $(jsonl_count $dir/results.jsonl ".phase == \"pw\" and .test == \"ping\"") = 0 &&
	test $(jsonl_count $dir/results.jsonl ".phase == \"ping\" and .status == \"ok\"") = 3 &&
	test_grep "refused agent" $dir.log &&
	test_grep "0 agent(s) missing, $failed job(s) failed" $dir.log
}

test_expect_success $P 'hostile agents against a coordinator with a hostfile: refused, the run finishes' '
	printf "n1 rail0=127.0.0.1\nn2 rail0=127.0.0.1\nfz rail0=127.0.0.1\n" >hosts &&
	real="n1 n2" &&
	coord_fuzz 3 24 r1 --hostfile hosts &&
	check_run r1 n1 n2 &&
	test_grep "not in the hostfile" r1.log
'

test_expect_success $P 'hostile agents against a coordinator of -n 3: no slot taken, the run finishes' '
	real="ra rb" &&
	coord_fuzz 4 24 r2 -n 3 &&
	check_run r2 ra rb &&
	test_grep "3 agents have joined already" r2.log
'

test_expect_success TEST_TOOL 'fleet-fuzz without its arguments is a usage error' '
	test_expect_code 2 "$TEST_TOOL" fleet-fuzz &&
	test_expect_code 2 "$TEST_TOOL" fleet-fuzz agent 1 &&
	test_expect_code 2 "$TEST_TOOL" fleet-fuzz coord 1 x 127.0.0.1:1 t
'

test_done
