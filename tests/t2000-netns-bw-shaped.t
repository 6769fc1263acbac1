#!/usr/bin/env bash
test_description='fabscope bw over a netns pair shaped to 500 Mbit/s: the shaper bounds the
aggregate and the rate is real, one record per flow with its source port, and a server outlives a
killed client'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-netns.sh"

# What the rate says about function, not speed: the shaper bounds it (TCP goodput through tbf
# at 500 Mbit/s is 500 * 1448/1514 = 478 Mbit/s, so more than 1.05 x the link means bytes were
# counted that did not cross it), and it is real (at least 0.3 x the link: a run that moved
# almost nothing, or a window of no length, is far below that even on a machine whose cores are
# busy with other work).  How near the link the rate comes is speed: bench/netns-bench.sh
# measures it (aggregate / link rate, expected 0.95-1.0).
LINK_GBPS=0.5
BW_LO=$(awk "BEGIN { print 0.3 * $LINK_GBPS }") BW_HI=$(awk "BEGIN { print 1.05 * $LINK_GBPS }")
PORT=18520
P=$NETNS_PREREQS,JQ,FABSCOPE
test_require_in_ci ROOT NETNS JQ FABSCOPE

# jq_assert FILE WHAT [JQ-OPTIONS] FILTER: FILTER must be true on FILE
jq_assert() {
	local file=$1 what=$2
	shift 2
	jq -e "$@" "$file" >/dev/null && return 0
	echo "jq_assert: $file: not true: $what" >&2
	return 1
}

# bw_client OUT ARGS...: a bw client in a, towards the server in b, JSON records to OUT (and
# a compact copy on stdout, which the test's log shows when an assertion fails).  The timeout
# is a hang guard (20 x the longest run here), so that a hung client fails instead of hanging
# CI; it is no limit on how fast a run must be.
bw_client() {
	local out=$1
	shift
	netns_exec a timeout 60 "$FABSCOPE" bw "$NETNS_ADDR_B" -p $PORT "$@" --json >"$out" &&
	jq -c '.[] | {scope, flow, flows, msg_size_bytes, src, metrics}' "$out"
}

# check_bw_run FILE FLOWS SIZE: the records of one run are well formed, bounded by the shaper
# and real
check_bw_run() {
	local f=$1 flows=$2 size=$3
	jq_assert "$f" "a non-empty JSON array" 'type == "array" and length > 0' &&
	jq_assert "$f" "every record is test=bw with msg_size_bytes=$size and flows=$flows" \
		--argjson s "$size" --argjson n "$flows" \
		'all(.[]; .test == "bw" and .msg_size_bytes == $s and .flows == $n)' &&
	jq_assert "$f" "exactly one aggregate record" \
		'[.[] | select(.scope == "aggregate")] | length == 1' &&
	jq_assert "$f" "aggregate bw_gbps at most $BW_HI (1.05 x the link) and at least $BW_LO (0.3 x)" \
		--argjson lo $BW_LO --argjson hi $BW_HI \
		'.[] | select(.scope == "aggregate") | .metrics.bw_gbps | . >= $lo and . <= $hi' &&
	jq_assert "$f" "aggregate msg_rate_mpps = bw_gbps / 8 / size (+-2 %)" --argjson s "$size" \
		'.[] | select(.scope == "aggregate") | .metrics |
		 (.bw_gbps * 1e3 / 8 / $s) as $want | .msg_rate_mpps >= $want * 0.98 and .msg_rate_mpps <= $want * 1.02' &&
	jq_assert "$f" "one flow record per flow" --argjson n "$flows" \
		'[.[] | select(.scope == "flow")] | length == $n' &&
	jq_assert "$f" "each flow record has its own src.port" \
		'[.[] | select(.scope == "flow")] |
		 all(.[]; .src.port | type == "number" and . > 0 and . < 65536) and
		 ([.[].src.port] | unique | length) == length' &&
	jq_assert "$f" "the flows' bytes add up to the aggregate's" \
		'. as $r | ([$r[] | select(.scope == "flow") | .metrics.bytes] | add) as $fb |
		 ($r[] | select(.scope == "aggregate") | .metrics.bytes) == $fb'
}

# check_timed_run FILE SECONDS: a timed run's flow windows leave out the drain, so each lies
# within the -D SECONDS: they open at a completion after the warm-up and close at the last one
# before posting stops, -D after the opening (with 8 MiB in flight per flow at 500 Mbit/s, a
# window that took in the drain would be ~0.13 s longer).  That bound holds at any speed.  A
# window loses at most the time between two completions (256 KiB apart) at each end, so it is
# most of the run; "at least half of -D" says so with room for a machine busy with other work
# (a window of no length, a bug seen once, is far below).  How much of -D a window covers is
# measured by bench/netns-bench.sh.  The aggregate bw is the sum of the flows' rates.
check_timed_run() {
	local f=$1 d=$2
	jq_assert "$f" "every flow's window is within -D $d s and at least half of it" --argjson d "$d" \
		'[.[] | select(.scope == "flow") | .metrics.duration_s] | length > 0 and
		 all(.[]; . <= $d and . >= $d * 0.5)' &&
	jq_assert "$f" "the aggregate bw_gbps is the sum of the flows'" \
		'. as $r | ([$r[] | select(.scope == "flow") | .metrics.bw_gbps] | add) as $sum |
		 ($r[] | select(.scope == "aggregate") | .metrics.bw_gbps - $sum | fabs) <= $sum * 1e-6'
}

# check_counted_run FILE: a counted run's aggregate is the flows' bytes over the span of
# their windows (they end as each flow's last message completes)
check_counted_run() {
	jq_assert "$1" "the aggregate's bw is its bytes over its span" \
		'.[] | select(.scope == "aggregate") | .metrics |
		 (.bytes * 8 / .duration_s / 1e9 - .bw_gbps | fabs) <= .bw_gbps * 1e-6'
}

test_expect_success $P 'set up a pair shaped to 500mbit and a bw server in b' '
	netns_pair_up 500mbit &&
	netns_spawn b server.log "$FABSCOPE" bw --server -p $PORT &&
	server_pid=$netns_pid &&
	netns_wait_listen b $PORT $server_pid
'

test_expect_success $P '4 flows of 64K for 3 s: the aggregate bounded by the link and real, one record per flow' '
	bw_client q4.json -t tcp -s 64K -q 4 -D 3 &&
	check_bw_run q4.json 4 65536 &&
	check_timed_run q4.json 3
'

test_expect_success $P '1 flow of 64K for 3 s: the aggregate bounded by the link and real' '
	bw_client q1.json -t tcp -s 64K -q 1 -D 3 &&
	check_bw_run q1.json 1 65536 &&
	check_timed_run q1.json 3
'

test_expect_success $P '2 flows of 500 messages of 64K (-n): each counts exactly them, the aggregate is bytes over the span' '
	bw_client n500.json -t tcp -s 64K -q 2 -n 500 &&
	check_bw_run n500.json 2 65536 &&
	jq_assert n500.json "each flow measured exactly 500 messages" \
		"[.[] | select(.scope == \"flow\") | .metrics.msgs] == [500, 500]" &&
	check_counted_run n500.json
'

test_expect_success $P 'a client killed with SIGKILL mid-run does not take the server down' '
	netns_spawn a killed.out "$FABSCOPE" bw "$NETNS_ADDR_B" -p $PORT -q 4 -D 5 --json &&
	victim=$netns_pid &&
	sleep 1.5 &&
	kill -0 $victim &&
	kill -9 $victim &&
	{ wait $victim; test $? = 137; } &&
	kill -0 $server_pid &&
	bw_client after-kill.json -s 64K -q 2 -D 2 &&
	check_bw_run after-kill.json 2 65536 &&
	kill -0 $server_pid
'

test_done
