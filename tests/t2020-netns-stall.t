#!/usr/bin/env bash
test_description='a link too slow to drain a run: bw gives up within twice --timeout of the
run'"'"'s end (exit 4, one line, valid JSON) instead of waiting for a trickle of completions'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-netns.sh"

PORT=18522
P=$NETNS_PREREQS,JQ,FABSCOPE
test_require_in_ci ROOT NETNS JQ FABSCOPE

test_expect_success $P 'set up a pair shaped to 1 Mbit/s and a bw server' '
	netns_pair_up 1mbit &&
	netns_spawn b server.log "$FABSCOPE" bw --server -p $PORT &&
	netns_wait_listen b $PORT $netns_pid
'

# 512 messages of 4 KiB in flight take 16 s at 1 Mbit/s; completions come every
# 32 messages (about 1 s), so "no progress for --timeout" (4 s: four gaps, room for a TCP
# retransmission behind the shaper on a busy runner) never fires, but the drain limit of
# 2 x 4 s does, half-way through the drain.  What says that it gave up, and at that limit, is the
# exit code and the message (a drain that ran its course would exit 0 after ~17 s; "no progress"
# would name the --timeout of 4 s), not a stopwatch: how soon after the limit it gives up is
# measured by bench/netns-bench.sh (give-up time / (2 x --timeout)).  The timeout of 60 s is a
# hang guard (a hung client fails instead of hanging CI), no limit on how fast it must be.
test_expect_success $P 'a run whose last messages trickle in: exit 4, "did not complete within 8 s of the run"' '
	test_expect_code 4 netns_exec a timeout 60 "$FABSCOPE" bw "$NETNS_ADDR_B" -p $PORT \
		-s 4K --tx-depth 512 -D 1 --timeout 4 --json >out.json 2>err &&
	cat err &&
	test "$(wc -l <err)" = 1 &&
	test_grep "did not complete within 8 s of the run" err &&
	jq -e "type == \"array\"" out.json
'

test_done
