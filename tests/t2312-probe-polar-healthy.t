#!/usr/bin/env bash
test_description='fabscope probe polarization on a healthy 1:1 fabric (the default 2-spine
leaf-spine of namespaces, every link 200 Mbit/s, a hash seed of its own in every router), where
the hosts'"'"' links are as fast as the paths and so set the flows'"'"' rates: 16 flows h1 -> h3 are
never called polarized.  Probed 5 times in a row as a new user did (--paths 2 --link-rate 0.2):
the same "no verdict" each time, saying why and to give --host-rate or --trace, where before it
said "polarized" (3 of 3 runs); with --host-rate, no verdict either (the host link, not the
paths, was the bottleneck); traced with the design'"'"'s switch addresses, 5 times "not polarized",
2 of 2 paths counted, every hop a cable of the design.  A plan of the 4 pairs as the user wrote
it says in its summary what the report says, per pair, and exits 1 without a verdict (the
thresholds'"'"' [polarization] inconclusive = fail fails the report too); with the design and
traces, all 4 not polarized and exit 0; a sweep of 2 sets in a plan (before: its second set found
no server) gives one verdict on them together.  Rates are never asserted: only verdicts'
. "$(dirname "$0")/test-lib.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$p
P=ROOT,NETNS,FABSCOPE,JQ,ETHTOOL
test_require_in_ci ROOT NETNS FABSCOPE JQ ETHTOOL
PORT=18641

listening() { "$FABRIC" exec -p $PFX h3 ss -ltnH "sport = :$PORT" | grep -q .; }

# probe NAME ARGS...: 16 flows h1 -> h3 with ARGS, --json into NAME.json (NAME.err, NAME.rc); a
# verdict either way (exit 0 or 1), no other failure
probe() {
	local name=$1 rc
	shift
	"$FABRIC" exec -p $PFX h3 "$FABSCOPE" bw --server --once -p $PORT --bind 10.100.2.3 --node h3 >srv.log 2>&1 &
	srv=$! &&
	test_wait_for 10 listening &&
	{ "$FABRIC" exec -p $PFX h1 timeout 60 "$FABSCOPE" probe polarization 10.100.2.3 -p $PORT \
		--bind 10.100.1.1 --node h1 -q 16 -s 16K --json "$@" >$name.json 2>$name.err; rc=$?; } &&
	echo $rc >$name.rc &&
	wait $srv &&
	{ test $rc = 0 || test $rc = 1 || { cat $name.err >&2; false; }; }
}

# verdict NAME: "VERDICT EVIDENCE LIKELY_CAUSE" of NAME.json's polarization record
verdict() {
	jq -r '.[] | select(.test == "polarization") | "\(.verdict) \(.evidence) \(.likely_cause)"' "$1.json"
}

test_expect_success $P 'the default leaf-spine, 200 Mbit/s, distinct seeds; the design with its addresses' '
	test_atexit "\"$FABRIC\" down -p $PFX" &&
	"$FABRIC" up -p $PFX -r 200mbit >/dev/null &&
	"$FABRIC" intent -p $PFX --addr >design.topo &&
	test_grep -x "switch s1 tier=spine addr=10.250.1.2,10.250.2.2,10.250.3.2,10.250.4.2" design.topo &&
	# routers answer every TTL-exceeded (Linux limits them to a few a second by default: the
	# probe waits them out, t2315 shows it; here it need not)
	eval "$("$FABRIC" info -p $PFX | grep -E "^(LEAVES|SPINES)=")" &&
	for r in $LEAVES $SPINES; do
		ip netns exec $PFX-$r sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_msgs_per_sec=100000 \
			net.ipv4.icmp_msgs_burst=100000 || return 1
	done &&
	# the senders segment what they send, as a NIC does (see t2310: with offloads, a tail drop
	# at a tbf loses a 64 KiB GSO packet and its flow waits out a retransmission timeout; one
	# flow of 16 that completes no message in the window fails the whole measurement)
	for h in h1 h2; do
		for nic in rail0 rail1; do
			ip netns exec $PFX-$h ethtool -K $nic tso off gso off || return 1
		done
	done
'

test_expect_success $P 'as the user probed: 5 times the same "no verdict", never "polarized", exit 1' '
	for i in 1 2 3 4 5; do
		probe user$i --paths 2 --link-rate 0.2 -D 2 &&
		verdict user$i >>user.verdicts &&
		test "$(cat user$i.rc)" = 1 || return 1
	done &&
	sort -u user.verdicts >user.once &&
	echo "inconclusive null no_host_rate" >expect &&
	test_cmp expect user.once &&
	test_grep "warning: set 1: no verdict: .*give --host-rate (Gb/s), or --topology, or --trace$" user1.err
'

test_expect_success $P 'the host link as fast as a path (--host-rate 0.2): the rates are no evidence' '
	for i in 1 2; do
		probe host$i --paths 2 --link-rate 0.2 --host-rate 0.2 -D 2 &&
		verdict host$i >>host.verdicts || return 1
	done &&
	# the host link (or, on a busy machine, a CPU under it), never the paths
	cut -d " " -f 1,2 host.verdicts | sort -u >host.once &&
	echo "inconclusive null" >expect &&
	test_cmp expect host.once &&
	{ ! grep -v -E " (host_link_bottleneck|paths_not_full|link_rate_above_flows|flows_starved)$" host.verdicts; }
'

test_expect_success $P 'traced with the design: 5 times "not polarized", 2 of 2 paths, every hop a cable' '
	for i in 1 2 3 4 5; do
		probe traced$i --topology design.topo --trace -D 2 &&
		verdict traced$i >>traced.verdicts &&
		jq -e ".[] | select(.test == \"polarization\") | .trace.exact and .trace.complete == 16 and
		       .trace.paths == 2 and .trace.possible == 2 and .params.paths == 2 and
		       .params.host_rate_gbps == 0.2 and .rates.verdict == \"inconclusive\"" traced$i.json >/dev/null &&
		test "$(cat traced$i.rc)" = 0 || { jq -c ".[] | select(.test == \"polarization\") | {verdict, rates, trace}" traced$i.json; return 1; }
	done &&
	sort -u traced.verdicts >traced.once &&
	echo "not polarized traces null" >expect &&
	test_cmp expect traced.once &&
	# every link traced is a cable of the design, by its switches
	jq -r ".[] | select(.test == \"polarization\") | .links[] | \"\(.from) \(.to)\"" traced*.json | sort -u >links &&
	printf "%s\n" "l1.0 s1" "l1.0 s2" "s1 l2.0" "s2 l2.0" >expect &&
	test_cmp expect links
'

plan() {
	cat <<-EOF
	[global]
	hostfile = hosts
	timeout = 5
	$1
	[spread]
	kind = polarization
	flows = 16
	duration = 2
	size = 16K
	$2
	EOF
}

# pairs DIR: "PAIR VERDICT" of each probe, from the run's summary and from the report of DIR
pairs_summary() { sed -n "s/^polarization: \[spread\] \(h[0-9] -> h[0-9] rail [01]\): \([a-z ]*\):.*/\1 \2/p" "$1" | sort; }
pairs_report() {
	sed -n "s/^| [^|]* | spread | \(h[0-9] -> h[0-9]\) | \(rail [01]\) | 1 | 16 | [^|]* | [^|]* | [^|]* | \*\*\([a-z ]*\)\*\* | .*/\1 \2 \3/p" "$1" |
	sed "s/ inconclusive$/ no verdict/" | sort
}

test_expect_success $P 'a plan of the 4 pairs as the user wrote it: no verdict in the summary and the report, exit 1' '
	"$FABRIC" hostfile -p $PFX >hosts &&
	plan "" "paths = 2
	link-rate = 0.2" >user.ini &&
	test_expect_exit 1 timeout 120 "$FABSCOPE" run user.ini -o run-user >run-user.out 2>run-user.err &&
	test_grep "^fabscope run: 4 of 4 polarization probes gave no verdict (the polarization: lines above say why, and what to give)$" run-user.err &&
	test_grep -x "polarization: 4 probes: 0 polarized, 0 not polarized, 4 without a verdict" run-user.out &&
	# no failed job: the probes measured, their verdicts are in the records; the line of each
	# probe that failed the run is its verdict (before: a rate warning of its flows, as a job error)
	jq -e ".failed_jobs == 0 and .polarization.inconclusive == 4" run-user/run.json >/dev/null &&
	test_grep "^fabscope run: warning: spread/polarization/r1/rail0/h1>h3: no verdict: 16 flows used [0-9.]* of 2 paths by their rates, but without the rate of the host" run-user.err &&
	test $(grep -c "^fabscope run: warning: spread/polarization/r1/rail[01]/h[12]>h[34]: no verdict: " run-user.err) = 4 &&
	pairs_summary run-user.out >sum &&
	test $(wc -l <sum) = 4 &&
	test $(grep -c " no verdict$" sum) = 4 &&
	printf "[polarization]\ninconclusive = fail\npolarized = fail\n" >th.ini &&
	test_expect_exit 1 "$FABSCOPE" report run-user -o rep-user --thresholds th.ini --no-plots >rep.out &&
	pairs_report rep-user/report.md >rep &&
	test_cmp sum rep &&
	test_grep "^| every polarization probe judged | none | 4 of 4 without a verdict | 4 of 4 | \*\*FAIL\*\* | spread h1 -> h3 rail 0: no\\\\_host\\\\_rate, " rep-user/report.md &&
	# each pair with the line the summary gave it
	sed -n "s/^polarization: \[spread\] //p" run-user.out | grep -v "^[0-9]" | sort >sum.lines &&
	sed -n "s/^- //p" rep-user/report.md | grep "^h[0-9] -> h[0-9] rail [01]: " | sed "s/\\\\//g" | sort >rep.lines &&
	test_cmp sum.lines rep.lines &&
	# none polarized: the row judges the probes with a verdict, and says the others
	test_grep "^| no polarized probe | none | 0 of 0 polarized (4 without a verdict) | 0 of 0 | \*\*PASS\*\* | - |$" rep-user/report.md
'

test_expect_success $P 'the plan with the design and traces: 4 pairs not polarized, the summary as the report, exit 0' '
	plan "topology = design.topo" "trace = 1" >design.ini &&
	{ timeout 120 "$FABSCOPE" run design.ini -o run-design >run-design.out 2>run-design.err ||
		{ cat run-design.out run-design.err >&2; false; }; } &&
	test_grep -x "polarization: 4 probes: 0 polarized, 4 not polarized, 0 without a verdict" run-design.out &&
	pairs_summary run-design.out >sum2 &&
	test $(grep -c " not polarized$" sum2) = 4 &&
	"$FABSCOPE" report run-design -o rep-design --thresholds th.ini --no-plots >rep2.out &&
	pairs_report rep-design/report.md >rep2 &&
	test_cmp sum2 rep2 &&
	test $(grep -c "| 2 of 2 traced | .* | \*\*not polarized\*\* | traces |$" rep-design/report.md) = 4
'

test_expect_success $P 'a sweep of 2 entropy sets in a plan: a client a set, one verdict on them together' '
	grep -E "^h(1|3) " hosts >hosts13 &&
	plan "topology = design.topo" "trace = 1
	sweep = 2
	rails = 0" | sed "s/^hostfile = hosts$/hostfile = hosts13/" >sweep.ini &&
	{ timeout 120 "$FABSCOPE" run sweep.ini -o run-sweep >run-sweep.out 2>run-sweep.err ||
		{ cat run-sweep.out run-sweep.err >&2; false; }; } &&
	test $(jq -s "[.[] | select(.test == \"polarization\" and .scope == \"set\")] | length" run-sweep/results.jsonl) = 2 &&
	jq -e "select(.test == \"polarization\" and .scope == \"sweep\") | .verdict == \"not polarized\" and
	       .evidence == \"traces\" and .metrics.sets == 2" run-sweep/results.jsonl >/dev/null &&
	test_grep "^polarization: \[spread\] h1 -> h3 rail 0: not polarized: 2 sets used 2.0 paths on average (traced)" run-sweep.out &&
	test_grep -x "polarization: 1 probe: 0 polarized, 1 not polarized, 0 without a verdict" run-sweep.out
'

test_done
