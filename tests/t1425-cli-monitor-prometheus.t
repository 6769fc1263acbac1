#!/usr/bin/env bash
test_description='fabscope monitor analyze --prometheus: the probe counters'"'"' increase() over each interval
from a real Prometheus server (Debian'"'"'s prometheus, its storage backfilled by promtool with
7 scrapes, 10 s apart, of a 12-host, 4-rail leaf-spine whose uplink l1.0 -> s2 drops 2 %), read
through its HTTP query API at fixed times (--at): the link named at the third interval, the
same lines twice; a server that answers something else is said in one line'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq PROMETHEUS 'command -v prometheus && command -v promtool'
test_require_in_ci TEST_TOOL FABSCOPE JQ PROMETHEUS
P=TEST_TOOL,FABSCOPE,JQ,PROMETHEUS
PORT=$(ptp_port 0)
PROM=http://127.0.0.1:$PORT

unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

# T0: a whole hour, three before now (within the server's retention, before its head block)
T0=$(( $(date +%s) / 3600 * 3600 - 3 * 3600 ))

test_expect_success $P 'set up: the scrapes backfilled into a Prometheus server on loopback' '
	for r in 0 1 2 3; do
		for g in 1 2 3; do echo "switch l$g.$r tier=leaf rail=$r"; done
	done >fab.topo &&
	for k in 1 2 3 4; do echo "switch s$k tier=spine"; done >>fab.topo &&
	for r in 0 1 2 3; do
		for i in $(seq 1 12); do echo "link h$i:rail$r l$(((i - 1) / 4 + 1)).$r:h$i rail=$r"; done &&
		for g in 1 2 3; do
			for k in 1 2 3 4; do echo "link l$g.$r:s$k s$k:l$g.$r"; done
		done || return 1
	done >>fab.topo &&
	"$TEST_TOOL" localize-sim --topology fab.topo --peers 4 --buckets 4 --width 4 --probes 200 \
		--intervals 6 --loss 0.02:0.02 --busy 0 --seed 7 --write . --fault link:l1.0:s2 >sim.out &&
	for i in 0 1 2 3 4 5 6; do
		grep -v "^#" scrape-0$i.prom | grep -v rtt_seconds | sed "s/\$/ $((T0 + 10 * i))/" || return 1
	done >om.txt &&
	echo "# EOF" >>om.txt &&
	promtool tsdb create-blocks-from openmetrics om.txt tsdb >backfill.out &&
	printf "global:\n  scrape_interval: 1h\n" >prom.yml &&
	ptp_spawn prom.log prometheus --config.file=prom.yml --storage.tsdb.path=tsdb \
		--web.listen-address=127.0.0.1:$PORT --log.level=warn &&
	test_wait_for 30 ptp_is_listening $PORT
'

test_expect_success $P 'three intervals of increase(): the uplink named at the third, nothing else' '
	test_wait_for 30 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --prometheus $PROM --at $((T0 + 20)) \
		--interval 20 --count 1 --json probe.jsonl &&
	test_expect_code 1 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --paths paths.jsonl \
		--prometheus $PROM/ --at $((T0 + 20)) --interval 20 --count 3 >out.jsonl 2>err &&
	test_must_be_empty err &&
	jq -r "select(.event == \"named\") | \"\(.interval) \(.kind) \(.from)>\(.to) \(.time)\"" out.jsonl >named &&
	echo "3 link l1.0>s2 $(date -u -d @$((T0 + 60)) +%Y-%m-%dT%H:%M:%SZ)" >expect &&
	test_cmp expect named &&
	jq -s -e "map(select(.event == \"interval\")) | length == 3 and all(.[]; .groups == 800 and .probes > 0)" out.jsonl &&
	test_expect_code 1 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --paths paths.jsonl --prometheus $PROM \
		--at $((T0 + 20)) --interval 20 --count 3 >again.jsonl 2>err &&
	test_cmp out.jsonl again.jsonl
'

test_expect_success $P 'a URL that is not a Prometheus server: one line, exit 4' '
	test_expect_code 4 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --prometheus $PROM/nothing \
		--at $((T0 + 20)) --interval 20 --count 1 >out 2>err &&
	test_line_count = 1 err &&
	test_grep "GET $PROM/nothing/api/v1/query?...: HTTP 404" err
'

test_expect_success $P 'usage: --at without --prometheus, a range under a second' '
	test_expect_code 2 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay scrape-00.prom scrape-01.prom \
		--at 1 2>err &&
	test_grep "with --prometheus" err &&
	test_expect_code 2 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --prometheus $PROM --interval 0.5 2>err &&
	test_grep "whole seconds" err
'

test_done
