#!/usr/bin/env bash
test_description='fabscope probe polarization at its edges, between two namespaces on one link
(ci/netns-pair) and on a routed fabric (ci/netns-fabric): rates without the rate of a path or of
the host'"'"'s link, rates that infer more paths than exist, or flows that fill no path, get no
verdict but the likely cause and what to give, a record that says so and exit 1; --trace says in
one line, text and JSON, that there are no routers on one link, and on the fabric traces every
flow through routers that limit their ICMP answers as Linux does by default, names the routers
where the flows parted by address and, with the design'"'"'s switch addresses, every link by its
switches; the text gives every rate in one unit (MB/s, or Gb/s with --report-gbits) and the JSON
names its unit'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-netns.sh"

P=$NETNS_PREREQS,FABSCOPE,JQ
test_require_in_ci ROOT NETNS FABSCOPE JQ
PORT=18631

# probe NAME ARGS...: a bw server in b, the probe from a (8 flows, 1 s) with ARGS; stdout in
# NAME.out, stderr in NAME.err, the probe's exit status in NAME.rc
probe() {
	local name=$1
	shift
	netns_spawn b "$name.srv" "$FABSCOPE" bw --server --once -p $PORT --bind $NETNS_ADDR_B &&
	netns_wait_listen b $PORT $netns_pid &&
	{ netns_exec a timeout 60 "$FABSCOPE" probe polarization $NETNS_ADDR_B -p $PORT --bind $NETNS_ADDR_A \
		-q 8 -D 1 "$@" >"$name.out" 2>"$name.err"; echo $? >"$name.rc"; } &&
	test_kill_pid $netns_pid
}

# polar NAME: the probe's own records of NAME.out (JSON), one a line
polar() { jq -c '.[] | select(.test == "polarization")' "$1.out"; }

test_expect_success $P 'two namespaces on one link' '
	netns_pair_up
'

test_expect_success $P '--paths 1 without --link-rate: no verdict, the cause named, exit 1' '
	probe one --paths 1 &&
	test "$(cat one.rc)" = 1 &&
	test_grep "^# set 1 (entropy from 40000): no verdict: 8 flows used [0-9.]* paths if the fastest flow.s rate is a path.s" one.out &&
	test_grep "give --link-rate (Gb/s) and --host-rate, or --topology, or --trace$" one.out &&
	test_grep ! "polarized" one.out &&
	# text mode: the verdict line is the message, stderr stays quiet
	test_must_be_empty one.err
'

test_expect_success $P '--paths 2 and --link-rate without --host-rate: no verdict, --host-rate named' '
	probe nohost --paths 2 --link-rate 0.5 --json &&
	test "$(cat nohost.rc)" = 1 &&
	polar nohost | jq -e ".verdict == \"inconclusive\" and .verdict_reason == \"paths_not_shown_bottleneck\" and
				  .likely_cause == \"no_host_rate\" and .evidence == null and .metrics.p_value == null" >/dev/null &&
	test_grep "warning: set 1: no verdict: .*without the rate of the host.s link nothing shows that the paths were their bottleneck.*give --host-rate (Gb/s), or --topology, or --trace$" nohost.err
'

test_expect_success $P '--paths 2, flows faster than --link-rate: no verdict in the JSON record, exit 1' '
	probe two --paths 2 --link-rate 0.001 --host-rate 0.5 --json &&
	test "$(cat two.rc)" = 1 &&
	polar two >two.rec &&
	test $(wc -l <two.rec) = 1 &&
	jq -e ".verdict == \"inconclusive\" and .verdict_reason == \"more_paths_than_exist\" and
	       .likely_cause == \"link_rate_below_flows\" and .metrics.p_value == null and
	       .metrics.paths_used > .metrics.max_paths_used and .metrics.max_paths_used == 2.5 and
	       (.verdict_text | startswith(\"no verdict: 8 flows used\")) and .status == \"ok\"" two.rec >/dev/null &&
	# what was measured is kept: every flow has its record
	test $(jq "[.[] | select(.scope == \"flow\")] | length" two.out) = 8 &&
	# --json: stdout is JSON, the reason one line on stderr
	test $(wc -l <two.err) = 1 &&
	test_grep "^fabscope probe polarization: warning: set 1: no verdict: .*flows ran faster than --link-rate 0.001, which is below the rate of one path" two.err
'

test_expect_success $P 'flows that fill under half of --link-rate: no verdict, exit 1' '
	probe wide --paths 4 --link-rate 100000 --host-rate 100000 --json &&
	test "$(cat wide.rc)" = 1 &&
	polar wide | jq -e ".verdict == \"inconclusive\" and .verdict_reason == \"flows_below_one_path\" and
				.likely_cause == \"link_rate_above_flows\"" >/dev/null &&
	test_grep "warning: set 1: no verdict: 8 flows together ran at [0-9]*% of --link-rate 100000, so they did not fill even one path" wide.err
'

test_expect_success $P 'a sweep with an impossible set gives no verdict on the sets together' '
	netns_spawn b sweep.srv "$FABSCOPE" bw --server -p $PORT --bind $NETNS_ADDR_B &&
	srv=$netns_pid &&
	netns_wait_listen b $PORT $srv &&
	test_expect_exit 1 netns_exec a timeout 60 "$FABSCOPE" probe polarization $NETNS_ADDR_B -p $PORT \
		--bind $NETNS_ADDR_A -q 4 -D 0.5 --sweep 2 --paths 2 --link-rate 0.001 >sweep.out 2>sweep.err &&
	test_kill_pid $srv &&
	test_grep "^# 2 sets, no verdict: " sweep.out &&
	test_grep ! "polarized" sweep.out
'

test_expect_success $P '--trace on one link: one line says there are no routers (text)' '
	probe trace --trace &&
	test "$(cat trace.rc)" = 0 &&
	test $(grep -c "^# traced:" trace.out) = 1 &&
	test_grep "^# traced: no routers between $NETNS_ADDR_A and $NETNS_ADDR_B - every flow reached $NETNS_ADDR_B at the first hop (one link), so there are no links to name$" trace.out
'

test_expect_success $P '--trace on one link: the JSON record says so too' '
	probe tracej --trace --json &&
	test "$(cat tracej.rc)" = 0 &&
	polar tracej | jq -e ".trace.routers == 0 and .trace.all_reached and .trace.complete == 8 and
		.trace.paths == 1 and (has(\"links\") | not) and
		(.trace.text | startswith(\"traced: no routers between $NETNS_ADDR_A and $NETNS_ADDR_B\")) and
		all(.entropy[]; .path == [\"$NETNS_ADDR_B\"])" >/dev/null
'

# the text: the flows' table (BW [MB/s] or [Gb/s]) and the probe's rate lines, of the same flows
test_expect_success $P 'text: the flows'"'"' table and the probe'"'"'s rates in one unit, MB/s' '
	probe units &&
	test_grep "^ *size  *dir  *flow  *sport .* BW \[MB/s\] " units.out &&
	test_grep "^# rates (MB/s) by entropy, sharing:$" units.out &&
	test_grep ! "Gb/s" units.out &&
	# the same number for each flow in both: the table row and the rate line
	awk "\$1 == \"64K\" && \$3 ~ /^[0-9]+\$/ { print \$4, \$8 }" units.out | sort >table &&
	awk "\$1 == \"#\" && \$2 ~ /^4[0-9]+\$/ && NF == 4 { print \$2, \$3 }" units.out | sort >lines &&
	test $(wc -l <table) = 8 &&
	test_cmp table lines
'

test_expect_success $P 'text with --report-gbits: Gb/s in both; the JSON names its unit' '
	probe unitsg --report-gbits &&
	test_grep "^ *size  *dir  *flow  *sport .* BW \[Gb/s\] " unitsg.out &&
	test_grep "^# rates (Gb/s) by entropy, sharing:$" unitsg.out &&
	test_grep ! "MB/s" unitsg.out &&
	awk "\$1 == \"64K\" && \$3 ~ /^[0-9]+\$/ { print \$4, \$8 }" unitsg.out | sort >table &&
	awk "\$1 == \"#\" && \$2 ~ /^4[0-9]+\$/ && NF == 4 { print \$2, \$3 }" unitsg.out | sort >lines &&
	test $(wc -l <table) = 8 &&
	# the table has 2 decimals, the lines 4: the same rate, rounded
	join table lines | awk "{ d = \$2 - \$3; if (d < -0.006 || d > 0.006) bad = 1 } END { exit bad }" &&
	probe unitsj --json &&
	polar unitsj | jq -e ".units.gbps == \"Gb/s (10^9 bit/s)\" and .metrics.max_gbps > 0" >/dev/null
'

# a routed fabric: from h1 to h3 (other group) over a leaf, a spine and a leaf
FABRIC=$SRCDIR/ci/netns-fabric
FPFX=fs$$y
fab_server() {
	"$FABRIC" exec -p $FPFX h3 "$FABSCOPE" bw --server --once -p $PORT --bind 10.100.2.3 --node h3 >fab.srv 2>&1 &
	test_atexit "test_kill_pid $!"
}
fab_listening() { "$FABRIC" exec -p $FPFX h3 ss -ltnH "sport = :$PORT" | grep -q .; }
# fab_probe NAME ARGS...: 8 flows h1 -> h3 for 1 s with --trace and ARGS; NAME.out, NAME.err; a
# verdict, whichever (exit 0 or 1: 8 flows all on one of 2 spines is "polarized", for 1 in 128
# destination ports), but no other failure
fab_probe() {
	local name=$1 rc
	shift
	fab_server &&
	test_wait_for 10 fab_listening &&
	{ "$FABRIC" exec -p $FPFX h1 timeout 120 "$FABSCOPE" probe polarization 10.100.2.3 -p $PORT \
		--bind 10.100.1.1 --node h1 -q 8 -D 1 --trace "$@" >$name.out 2>$name.err; rc=$?; } &&
	{ test $rc = 0 || test $rc = 1 || { cat $name.err >&2; false; }; }
}

test_expect_success $P '--trace through routers at Linux'"'"'s default ICMP limit: every flow traced, hops by the design' '
	test_atexit "\"$FABRIC\" down -p $FPFX" &&
	"$FABRIC" up -p $FPFX >/dev/null &&
	"$FABRIC" intent -p $FPFX --addr >fab.topo &&
	# each router answers 6 at once, then one a second: traced patiently, not 8 of 16 flows
	for r in l1.0 s1 s2 l2.0; do
		test "$(ip netns exec $FPFX-$r sysctl -n net.ipv4.icmp_ratelimit)" = 1000 || return 1
	done &&
	fab_probe limited --topology fab.topo --json &&
	polar limited >limited.rec &&
	{ jq -e ".trace.flows == 8 and .trace.complete == 8 and .trace.exact and .trace.possible == 2 and
	       all(.entropy[]; .route[0] == \"l1.0\" and .route[2] == \"l2.0\") and
	       all(.links[]; [.from, .to] | inside([\"l1.0\", \"s1\", \"s2\", \"l2.0\"])) and
	       ([.links[].flows] | add) == 16" limited.rec >/dev/null ||
	  { jq -c "{trace, links}" limited.rec; false; }; }
'

test_expect_success $P '--trace on a fabric: the routers where the flows parted by address, or the links by name' '
	eval "$("$FABRIC" info -p $FPFX | grep -E "^(LEAVES|SPINES)=")" &&
	for r in $LEAVES $SPINES; do
		ip netns exec $FPFX-$r sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_msgs_per_sec=100000 \
			net.ipv4.icmp_msgs_burst=100000 || return 1
	done &&
	fab_probe fab &&
	test $(grep -c "^# traced:" fab.out) = 1 &&
	# by address: the leaves answer from the address of the spine link their answer leaves by,
	# so a hop pair of addresses is no link, and none is named one
	test_grep "^# traced: 8 of 8 flows to 10.100.2.3 with every hop answering, [3-9] router addresses, at most [1-8] paths\{0,1\}" fab.out &&
	test_grep ! " -> " fab.out &&
	fab_probe named --topology fab.topo &&
	test_grep "^# traced: 8 of 8 flows, every hop named by fab.topo: [12] paths\{0,1\}; the busiest links: \(l1.0 -> s[12]\|s[12] -> l2.0\) ([1-8] flows)" named.out
'

test_done
