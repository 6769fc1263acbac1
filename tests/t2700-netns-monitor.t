#!/usr/bin/env bash
test_description='fabscope monitor on the netns fabric, scraped by a real Prometheus: every agent
probes its peers (whole leaf, sample across leaves), sent grows and nothing is lost on a healthy
fabric, the datagrams of one source port dropped on one leaf-spine link show as lost exactly for
the peers and bucket whose path crosses it and stop when it is lifted, the NIC counters and every
metric the Grafana dashboard names are exported, the alerting rules load, --jsonl has the same
numbers, and a changed peers file is taken without a restart'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fabric.sh"
. "$TEST_DIRECTORY/lib-monitor.sh"
. "$TEST_DIRECTORY/lib-pfc.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$m
P=ROOT,NETNS,JQ,PROMETHEUS
test_require_in_ci ROOT NETNS JQ PROMETHEUS FABSCOPE

# the NIC of h1 as an mlx5 port (lib-pfc.sh's fixture, its netdev named rail0)
nic_fixture() {
	mlx5 nic &&
	eth nic rx_prio3_pause=11 tx_prio3_pause=7 rx_prio3_pause_duration=1500 &&
	hw nic np_ecn_marked_roce_packets=5 np_cnp_sent=4 rp_cnp_handled=3 out_of_sequence=2 &&
	mv nic/ethtool/eth2 nic/ethtool/rail0 &&
	ln -s ../../devices/pci0000:00/0000:3b:00.0/net/eth2 nic/sys/class/net/rail0 &&
	echo rail0 >nic/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0
}

test_expect_success $P 'the bed: 3 leaves of 2 hosts, 2 spines; an agent in every host; Prometheus scraping them' '
	nic_fixture &&
	mon_bed -G 3 -H 2 -R 1 -S 2 &&
	MON_AGENT_OPTS_h1="--counters-root $PWD/nic" &&
	MON_AGENT_OPTS_h2="--jsonl $PWD/h2.jsonl --interval 1" &&
	mon_agents --timeout 5 &&
	mon_prom "$SRCDIR/deploy/prometheus/fabscope-monitor-rules.yml"
'

test_expect_success $P 'each agent: its info, its 5 peers (1 of its leaf, 4 across), 16 buckets each' '
	for h in h1 h2 h3 h4 h5 h6; do
		mon_metrics $h >m.$h &&
		test_grep "^fabscope_monitor_info{node=\"$h\",version=\"[0-9.]*\"} 1$" m.$h &&
		test_grep -x "fabscope_monitor_peers{node=\"$h\",kind=\"leaf\"} 1" m.$h &&
		test_grep -x "fabscope_monitor_peers{node=\"$h\",kind=\"cross\"} 4" m.$h &&
		test "$(grep -c "^fabscope_probe_sent_total{" m.$h)" = 80 &&
		test "$(grep -c "^fabscope_probe_rtt_seconds_bucket{.*le=\"+Inf\"}" m.$h)" = 80 || return 1
	done &&
	test_grep "^fabscope_probe_sent_total{node=\"h3\",peer=\"h4\",rail=\"0\",plane=\"0\",sport_bucket=\"15\"} " m.h3
'

# The agents start one after another: the probes an agent sends before its peer's responder is
# up are lost (and counted so).  Once every agent is up and the timeout (5 s) has passed, the
# healthy fabric loses nothing more, but what the bed itself drops: a veth hands each packet to
# a CPU's input backlog, which a busy machine (four test files at once) overflows, and the
# kernel counts each such drop (mon_backlog_drops); a probe lost beyond those is a failure.
test_expect_success $P 'Prometheus: sent grows on all 30 pairs and all 16 buckets, nothing lost, RTTs counted' '
	# (the bed.s drops counted before the wait: a probe counted lost after l0 went out less
	# than its timeout before, after d0)
	d0=$(mon_backlog_drops) && sleep 6 &&
	l0=$(mon_query_value "sum(fabscope_probe_lost_total)") &&
	s1=$(mon_query_value "sum(fabscope_probe_sent_total)") &&
	echo "lost while the agents started: $l0 of $s1" &&
	mon_wait 30 mon_sent_above "$s1" &&
	mon_wait 30 mon_value_is "count(sum by (node, peer) (fabscope_probe_sent_total) > 0)" 30 &&
	mon_wait 30 mon_value_is "count(fabscope_probe_sent_total > 0)" 480 &&
	mon_wait 30 mon_value_is "count(fabscope_probe_rtt_seconds_count > 0)" 480 &&
	mon_wait 30 mon_sent_above $((s1 + 1500)) &&
	sleep 6 && l1=$(mon_query_value "sum(fabscope_probe_lost_total)") && d1=$(mon_backlog_drops) &&
	echo "lost since: $((l1 - l0)); the bed dropped $((d1 - d0)) packets meanwhile" &&
	test $((l1 - l0)) -le $((d1 - d0)) &&
	test "$(mon_query_value "count(fabscope_probe_rtt_seconds_count > fabscope_probe_sent_total)")" = "" &&
	test "$(mon_query_value "sum(fabscope_monitor_refused_total)")" = 0
'

# the probes the drop hits: from leaf 1 (h1, h2) to the other leaves, source port 49155 (bucket
# 3), whose path leaves l1.0 for spine $spine
expected_lost() {
	local src dst
	for src in h1 h2; do
		for dst in h3 h4 h5 h6; do
			mon_path $src $dst 49155 >path || return 1
			if grep -q "^$src l1.0 $1 " path; then
				echo "node=$src,peer=$dst,plane=0,rail=0,sport_bucket=3"
			fi
		done
	done
}

# what grew beyond the expected series must be no more than the bed's own drops (above); each
# expected series must have grown by 3 (at 10/16 probe a second, within seconds)
# (-v: each such series, with its value before, instead of the sum)
grown_off_link() {
	mon_query fabscope_probe_lost_total | awk -v before=lost.before -v wantf=expect -v each="${1:-}" '
		BEGIN { while ((getline l < before) > 0) { split(l, f, " "); was[f[1]] = f[2] }
			while ((getline l < wantf) > 0) want[l] = 1 }
		!($1 in want) && $2 > was[$1] { n += $2 - was[$1]
			if (each) print $1, ($1 in was ? was[$1] : "(not there before)"), "->", $2 }
		END { if (!each) print n + 0 }'
}

expected_grown() {
	mon_query fabscope_probe_lost_total | awk -v before=lost.before -v wantf=expect '
		BEGIN { while ((getline l < before) > 0) { split(l, f, " "); was[f[1]] = f[2] }
			while ((getline l < wantf) > 0) { want[l] = 1; n++ } }
		($1 in want) && $2 >= was[$1] + 3 { got++ } END { exit got != n }'
}

test_expect_success $P 'one source port dropped on one leaf-spine link: lost rises for exactly the peers behind it' '
	expected_lost s1 >exp.s1 && expected_lost s2 >exp.s2 &&
	if [ $(wc -l <exp.s1) -ge $(wc -l <exp.s2) ]; then spine=s1; else spine=s2; fi &&
	sort exp.$spine >expect && cat expect &&
	test -s expect &&
	# (the bed.s drops counted first, then the probes. timeout waited: a probe counted lost from
	# here on went out within it, so a drop that lost it is one counted after d0)
	d0=$(mon_backlog_drops) && sleep 5 &&
	mon_query fabscope_probe_lost_total >lost.before &&
	mon_loss_on l1.0 $spine 49155 &&
	{ mon_wait 60 expected_grown || { mon_lost_grown lost.before; false; }; } &&
	off=$(grown_off_link) && d1=$(mon_backlog_drops) &&
	echo "lost off the link: $off; the bed dropped $((d1 - d0)) packets meanwhile" &&
	{ test $off -le $((d1 - d0)) || { echo "grown off the link:"; grown_off_link -v; false; }; } &&
	if [ $off = 0 ]; then mon_lost_grown lost.before >actual && test_cmp expect actual; fi
'

test_expect_success $P 'the drop lifted: lost stops rising once the probes in flight have timed out' '
	mon_loss_off l1.0 $spine &&
	sleep 6 &&
	l1=$(mon_query_value "sum(fabscope_probe_lost_total)") && d0=$(mon_backlog_drops) &&
	s1=$(mon_query_value "sum(fabscope_probe_sent_total)") &&
	mon_wait 30 mon_sent_above $((s1 + 600)) &&
	sleep 6 && l2=$(mon_query_value "sum(fabscope_probe_lost_total)") && d1=$(mon_backlog_drops) &&
	echo "lost since: $((l2 - l1)); the bed dropped $((d1 - d0)) packets meanwhile" &&
	test $((l2 - l1)) -le $((d1 - d0))
'

test_expect_success $P 'NIC counters: h1 exports its fixture mlx5 port under device mlx5_0, port 1, in base units' '
	mon_metrics h1 >m.h1 &&
	test_grep -x "fabscope_nic_pfc_received_frames_total{node=\"h1\",device=\"mlx5_0\",port=\"1\",rail=\"0\",plane=\"0\",priority=\"3\"} 11" m.h1 &&
	test_grep -x "fabscope_nic_pfc_sent_frames_total{node=\"h1\",device=\"mlx5_0\",port=\"1\",rail=\"0\",plane=\"0\",priority=\"3\"} 7" m.h1 &&
	test_grep -x "fabscope_nic_pfc_received_pause_seconds_total{node=\"h1\",device=\"mlx5_0\",port=\"1\",rail=\"0\",plane=\"0\",priority=\"3\"} 0.0015" m.h1 &&
	test_grep -x "fabscope_nic_ecn_marked_packets_total{node=\"h1\",device=\"mlx5_0\",port=\"1\",rail=\"0\",plane=\"0\"} 5" m.h1 &&
	test_grep -x "fabscope_nic_out_of_sequence_packets_total{node=\"h1\",device=\"mlx5_0\",port=\"1\",rail=\"0\",plane=\"0\"} 2" m.h1 &&
	test_grep "^fabscope_nic_counters_sources{node=\"h1\",device=\"mlx5_0\",port=\"1\",rail=\"0\",plane=\"0\"} [1-3]$" m.h1 &&
	mon_metrics h3 >m.h3 &&
	test_grep "^fabscope_nic_counters_sources{node=\"h3\",device=\"rail0\",port=\"1\",rail=\"0\",plane=\"0\"} 1$" m.h3 &&
	test_grep ! "^fabscope_nic_pfc" m.h3
'

test_expect_success $P 'the Grafana dashboard names only metrics the agents export (as Prometheus scraped them)' '
	mon_api /api/v1/label/__name__/values | jq -r ".data[]" | sort -u >exported &&
	"$SRCDIR/ci/check-dashboard" "$SRCDIR/deploy/grafana/fabscope-monitor.json" >named &&
	test -s named &&
	sort -u named | comm -23 - exported >missing &&
	test_must_be_empty missing
'

test_expect_success $P 'the alerting rules are loaded, and every one evaluates without error' '
	mon_api /api/v1/rules >rules.json &&
	test "$(jq "[.data.groups[].rules[]] | length" rules.json)" -ge 3 &&
	mon_wait 10 mon_rules_ok
'

test_expect_success $P '--jsonl: h2 wrote its intervals, the same counters /metrics has' '
	test_wait_for 10 test -s h2.jsonl &&
	# (the intervals written so far first, whole lines only, then /metrics: the file grows every
	# second, so read after the metrics it may hold an interval they do not)
	sed -n "/}\$/p" h2.jsonl >h2.snap &&
	mon_metrics h2 >m.h2 &&
	jq -c "select(.node != \"h2\" or .schema != \"fabscope.monitor/1\" or (.rtt_buckets | length) != 23)" h2.snap >bad &&
	test_must_be_empty bad &&
	jq -s "map(select(.peer == \"h1\" and .sport_bucket == 0)) | map(.sent) | add" h2.snap >j.sent &&
	sed -n "s/^fabscope_probe_sent_total{node=\"h2\",peer=\"h1\",rail=\"0\",plane=\"0\",sport_bucket=\"0\"} //p" m.h2 >m.sent &&
	test "$(cat j.sent)" -gt 0 && test "$(cat j.sent)" -le "$(cat m.sent)" &&
	test "$(($(cat m.sent) - $(cat j.sent)))" -le 20
'

test_expect_success $P 'a changed peers file is taken without a restart; a node left out of it keeps probing' '
	grep -v "^h6 " peers.hosts >peers.new && mv peers.new peers.hosts &&
	mon_wait 20 mon_reloads_are h1 ok 1 &&
	mon_metrics h1 >m.h1 &&
	test_grep ! "peer=\"h6\"" m.h1 &&
	test_grep "^fabscope_probe_sent_total{node=\"h1\",peer=\"h3\"" m.h1 &&
	mon_wait 20 mon_reloads_are h6 error 1 &&
	test_grep "no node .h6." agent.h6.err &&
	mon_healthy h6 &&
	for h in h1 h2 h3 h4 h5 h6; do
		kill -0 $(sed -n "s/^$h //p" agents.pids) || return 1
	done
'

test_done
