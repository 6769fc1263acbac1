#!/usr/bin/env bash
test_description='fabscope probe polarization on a 3-tier fabric of namespaces (pods, spines,
superspines) whose spine-superspine links are the bottleneck, with the design (its speeds and its
switches'"'"' addresses): identical hash seeds on every router give the verdict "polarized",
distinct seeds "not polarized", each from every flow traced (its hops named by the design, each
link one of its cables), the rates agreeing; every flow'"'"'s inferred sharing is checked against
the path the kernel routes its 5-tuple on (ci/netns-fabric path); two labelled runs of a plan
with a polarization phase say the verdict in their summary, the polarized one exits 1, and the
report says what the runs said, names the worse run, and fails its [polarization] threshold'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$z
P=ROOT,NETNS,FABSCOPE,JQ,ETHTOOL
test_require_in_ci ROOT NETNS FABSCOPE JQ ETHTOOL
PORT=18611

# fabric SEED: a 2-pod fabric, 1 Gb/s everywhere except pod 1's 4 spine-superspine links
# (100 Mb/s): from h1 (pod 1) to h3 (pod 2), 4 bottleneck links to spread over
fabric() {
	"$FABRIC" up -p $PFX -P 2 -X 2 -r 1gbit --seed "$1" >/dev/null &&
	for l in s1-x1 s1-x2 s2-x1 s2-x2; do
		"$FABRIC" degrade -p $PFX $l 100mbit >/dev/null || return 1
	done &&
	# h1 segments what it sends (TSO and GSO off), as a NIC puts MTU-sized frames on the wire:
	# tbf on a veth queues GSO packets of up to 64 KiB, and a tail drop of one loses ~45
	# segments at once, which TCP recovers from only by a retransmission timeout (200 ms and
	# up, doubling), so a bottleneck link's flows stalled for much of a 3 s probe (20 probes:
	# 15 timeouts with offloads on, none with them off)
	nics=$(ip -n $PFX-h1 -o link show | sed -n "s/^[0-9]*: \(rail[0-9]*\)@.*/\1/p") &&
	test "$(echo $nics)" = "rail0 rail1" &&
	for nic in $nics; do
		ip netns exec $PFX-h1 ethtool -K $nic tso off gso off || return 1
	done &&
	# routers answer every TTL-exceeded (Linux limits them to a few a second by default)
	eval "$("$FABRIC" info -p $PFX | grep -E "^(LEAVES|SPINES|SUPERSPINES)=")" &&
	for r in $LEAVES $SPINES $SUPERSPINES; do
		ip netns exec $PFX-$r sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_msgs_per_sec=100000 \
			net.ipv4.icmp_msgs_burst=100000 || return 1
	done
}

# design: the fabric's intent with its switches' addresses, and the degraded links' speed
design() {
	"$FABRIC" intent -p $PFX --addr | sed -E "s/^(link s[12]:x[12] x[12]:s[12]) speed=1G$/\1 speed=100M/"
}

listening() { "$FABRIC" exec -p $PFX h3 ss -ltnH "sport = :$PORT" | grep -q .; }

# probe NAME [SECONDS]: 16 flows h1 -> h3 for SECONDS (3), records in NAME.json
probe() {
	local rc
	"$FABRIC" exec -p $PFX h3 "$FABSCOPE" bw --server --once -p $PORT --bind 10.100.2.3 --node h3 >srv.log 2>&1 &
	srv=$! &&
	test_wait_for 10 listening &&
	design >design.topo &&
	{ "$FABRIC" exec -p $PFX h1 "$FABSCOPE" probe polarization 10.100.2.3 -p $PORT --bind 10.100.1.1 \
		--node h1 -q 16 --topology design.topo -D ${2:-3} --trace --json >"$1.json" 2>"$1.err"; rc=$?; } &&
	# a verdict either way: polarized exits 1
	{ test $rc = 0 || test $rc = 1 || { cat "$1.err" >&2; kill $srv; wait $srv; return 1; }; } &&
	wait $srv || { echo "# the server failed:" >&2; cat srv.log >&2; return 1; }
}

# crosscheck NAME: the kernel's own paths for the flows' 5-tuples (ci/netns-fabric path) against
# the probe's inference.  The flows the kernel routes over one spine-superspine link share it,
# so their 1/sharing add up to about one link (TCP shares unevenly: 0.7 to 1.4), and the paths
# in use that the probe reports are about the number of distinct links (within 0.6)
crosscheck() {
	local dport
	dport=$(jq -r ".[] | select(.scope == \"flow\") | .dst.port" "$1.json" | head -n 1) &&
	test -n "$dport" &&
	jq -r ".[] | select(.test == \"polarization\") | .entropy[] | \"\(.value) \(.sharing)\"" "$1.json" >"$1.sharing" &&
	test $(wc -l <"$1.sharing") = 16 &&
	"$FABRIC" path -p $PFX 10.100.1.1 10.100.2.3 40000-40015 $dport tcp >"$1.paths" &&
	test $(wc -l <"$1.paths") = 16 &&
	# the spine-superspine hop of every path: "s1-x2"
	awk "{ for (i = 1; i < NF; i++) if (\$i ~ /^s[12]\$/ && \$(i+1) ~ /^x/) print \$i \"-\" \$(i+1) }" "$1.paths" >"$1.links" &&
	test $(wc -l <"$1.links") = 16 &&
	paste -d " " "$1.sharing" "$1.links" >"$1.both" &&
	used=$(jq ".[] | select(.test == \"polarization\") | .metrics.paths_used" "$1.json") &&
	awk -v used="$used" "{ s[\$3] += 1 / \$2 } END {
		for (l in s) { n++; printf \"%s carries %.2f of a link\\n\", l, s[l]; if (s[l] < 0.7 || s[l] > 1.4) bad = 1 }
		printf \"%d links in the kernel paths, %.2f paths used by the probe\\n\", n, used
		if (used < n - 0.6 || used > n + 0.6) bad = 1
		exit bad }" "$1.both"
}

# poldump FILE: what a failed check looked at, for the log
poldump() {
	jq -c ".[] | select(.test == \"polarization\") | {verdict, evidence, metrics, rates, trace, links: .links[0:2],
		incomplete: [.entropy[] | select(.path_complete != true or (.path | length) < 5)]}" "$1" >&2
	jq -c ".[] | select(.scope == \"flow\") | [.src.port, .metrics.bw_gbps]" "$1" | tr "\n" " " >&2
	echo >&2
}

test_expect_success $P 'identical hash seeds on every router: "polarized"' '
	test_atexit "\"$FABRIC\" down -p $PFX" &&
	fabric same &&
	# one retry, with what the first probe saw in the log: 1 run in about 45 failed here under
	# ASan (one CI run too) with the sharing right (the next test passed on its file); what
	# failed was not logged then
	polarized() {
		probe same && {
		# the design gave the paths, their rate and the host link: 4 spine-superspine cables of
		# 0.1 Gb/s at the narrowest tier, 1 Gb/s hosts, 8 end-to-end paths
		jq -e ".[] | select(.test == \"polarization\") | .params.paths == 4 and .params.link_rate_gbps == 0.1 and
		       .params.host_rate_gbps == 1 and .params.design.paths == 8" same.json >/dev/null &&
		# the traces decide (every flow on 2 of the 8 paths), the rates agree (about 2 of 4 links)
		jq -e ".[] | select(.test == \"polarization\") | .verdict == \"polarized\" and .evidence == \"traces\" and
		       .trace.exact and .trace.complete == 16 and .trace.paths <= 2 and .trace.possible == 8 and
		       .metrics.p_value < 0.01 and .rates.verdict == \"polarized\" and .metrics.paths_used < 2.6 and
		       (.entropy | length) == 16" same.json >/dev/null &&
		# each flow of the probe is also a record of its own, with its source port and rate
		test $(jq "[.[] | select(.scope == \"flow\" and .src.port >= 40000 and .src.port < 40016 and .metrics.bw_gbps > 0)] | length" same.json) = 16 &&
		# --trace: every flow has its traced path, to the destination, by switch; every link
		# is a cable of the design; polarized, the busiest carried at least 6 of the 16 flows
		jq -e ".[] | select(.test == \"polarization\") | all(.entropy[]; .path_complete and (.path | length) >= 5
		       and (.route | length) == 5) and .links[0].flows >= 6 and
		       all(.links[]; .from + \" \" + .to | test(\"^(l1.0 s[12]|s[12] x[12]|x[12] s[34]|s[34] l2.0)$\"))" same.json >/dev/null
		} || { poldump same.json; false; }
	} &&
	{ polarized || { echo "# not as expected on the first try, probing again" && polarized; }; }
'

test_expect_success $P 'polarized: the inferred sharing matches the kernel'"'"'s paths; 2 of 4 links used' '
	crosscheck same &&
	test $(sort -u same.links | wc -l) -le 2
'

test_expect_success $P 'distinct hash seeds: "not polarized", and the sharing matches the paths again' '
	"$FABRIC" down -p $PFX >/dev/null &&
	fabric distinct &&
	# one retry: the kernel routes the flows over all 4 links every time (crosscheck says
	# so), but on a host whose cores are busy with other work the flows of one link now and
	# then get a small share of the probe (paths_used 2.87 in one CI run out of dozens; 3.00
	# in 1 of 15 probes here with both cores spinning, with no TCP timeout in them; both
	# tries of a 3 s probe once failed in the ASan tier of CI).  So 5 s, and the paths used
	# are judged against the links the kernel chose (crosscheck, within 0.6), not a constant
	spread() {
		probe distinct 5 && {
		# the rates: 4 links of 4 (the traces: a sample of uniform hashing of 16 flows on 8 paths,
		# "polarized" for 1% of the destination ports the server may take, as for any fabric
		# that hashes uniformly)
		jq -e ".[] | select(.test == \"polarization\") | .rates.verdict == \"not polarized\" and
		       .trace.exact and .trace.complete == 16 and .trace.paths >= 4" distinct.json >/dev/null &&
		crosscheck distinct
		} || { poldump distinct.json; false; }
	} &&
	{ spread || { echo "# not spread on the first try, probing again" && spread; }; } &&
	test $(sort -u distinct.links | wc -l) -ge 3
'

plan() {
	cat <<-EOF
	[global]
	hostfile = hosts
	topology = design.topo
	timeout = 5
	[spread]
	kind = polarization
	rails = 0
	flows = 16
	duration = 3
	trace = 1
	EOF
}

# the run's summary line of its probe ("polarization: [spread] h1 -> h3 rail 0: TEXT"): TEXT
summary_text() {
	sed -n "s/^polarization: \[spread\] h1 -> h3 rail 0: //p" "$1"
}

test_expect_success $P 'a plan phase under both seeds: the verdict in the summary, the exit status, the report' '
	"$FABRIC" hostfile -p $PFX | grep -E "^h(1|3) " >hosts &&
	design >design.topo &&
	plan >plan.ini &&
	# the design (of the distinct fabric up now: the same addresses with either seed) gives the
	# paths and rates the plan does not; the coordinator judges each probe with it.  Distinct
	# seeds: not polarized (or, for 0.1% of the ports the server takes, at most 4 of the 8
	# paths: "polarized", as uniform hashing itself does)
	{ timeout 120 "$FABSCOPE" run plan.ini -o run-distinct --label lb=distinct-seeds >run1.out 2>run1.err ||
		{ cat run1.out run1.err >&2; false; }; } &&
	"$FABRIC" down -p $PFX >/dev/null && fabric same &&
	test_expect_exit 1 timeout 120 "$FABSCOPE" run plan.ini -o run-same --label lb=same-seeds >run2.out 2>run2.err &&
	test_grep "^fabscope run: 1 of 1 polarization probe polarized (the polarization: lines above)$" run2.err &&
	test_grep -x "polarization: 1 probe: 1 polarized, 0 not polarized, 0 without a verdict" run2.out &&
	summary_text run2.out >sum2 &&
	test_grep "^polarized: 16 flows took [12] of 8 paths, traced (every flow, every hop, named by .*design.topo and each link one of its cables)" sum2 &&
	summary_text run1.out >sum1 &&
	test_grep "^not polarized: 16 flows took [5-8] of 8 paths, traced" sum1 &&
	jq -e "select(.test == \"polarization\") | .verdict == \"polarized\" and .evidence == \"traces\" and
	       .src.node == \"h1\" and .dst.node == \"h3\" and .params.paths == 4" run-same/results.jsonl >/dev/null &&
	jq -e "select(.test == \"polarization\") | .verdict == \"not polarized\"" run-distinct/results.jsonl >/dev/null &&
	jq -e ".polarization | .probes == 1 and .polarized == 1 and .verdicts[0].evidence == \"traces\"" run-same/run.json >/dev/null &&
	# the probe failed by its verdict only: no failed job
	jq -e ".failed_jobs == 0" run-same/run.json >/dev/null &&
	# a probe called polarized fails the report, by the run'"'"'s integrity (no thresholds)
	test_expect_exit 1 "$FABSCOPE" report run-distinct run-same -o cmp >report.out &&
	test_grep "^| no polarized probe | none | 1 of 2 polarized | 1 of 2 | \*\*FAIL\*\* | lb=same-seeds: spread h1 -> h3 rail 0 (traces) |$" cmp/report.md &&
	grep -q "^\*\*Worse: lb=same-seeds\*\*, polarized," cmp/report.md &&
	# the report says what the run said: the same line, the same count
	grep -F -q -- "- lb=same-seeds: h1 -> h3 rail 0: $(cat sum2)" cmp/report.md &&
	grep -q "^- lb=same-seeds: h1 -> h3 rail 0: polarized: 16 flows took .* Collisions: .*flows filled about [0-9.]* links\{0,1\} (1/" cmp/report.md &&
	grep -q "| lb=same-seeds | spread | h1 -> h3 | rail 0 | 1 | 16 | [12] of 8 traced | .* | \*\*polarized\*\* | traces |" cmp/report.md &&
	grep -q "| lb=distinct-seeds | spread | h1 -> h3 | rail 0 | 1 | 16 | [5-8] of 8 traced | .* | \*\*not polarized\*\* | traces |" cmp/report.md &&
	# and the links by name: the switches of the design, traced
	grep -q "^- lb=same-seeds: h1 -> h3 rail 0: polarized: .* Traced, the busiest links: l1.0 -> s[12] ([0-9]* flows)" cmp/report.md &&
	ls cmp/plots/*polar-spread* >/dev/null &&
	jq -e "[.runs[] | .polarization[0].verdict] == [\"not polarized\", \"polarized\"]" cmp/summary.json >/dev/null
'

test_expect_success $P 'the thresholds'"'"' [polarization]: a polarized probe fails the report, exit 1' '
	# polarized = fail says again what the run'"'"'s integrity judges: the same one row
	printf "[polarization]\npolarized = fail\n" >th.ini &&
	test_expect_exit 1 "$FABSCOPE" report run-distinct run-same -o th --thresholds th.ini >th.out &&
	test_grep "^| no polarized probe | none | 1 of 2 polarized | 1 of 2 | \*\*FAIL\*\* | lb=same-seeds: spread h1 -> h3 rail 0 (traces) |$" th/report.md &&
	test "$(grep -c "^| no polarized probe |" th/report.md)" = 1 &&
	"$FABSCOPE" report run-distinct -o th1 --thresholds th.ini >th1.out &&
	test_grep "^| no polarized probe | none | 0 of 1 polarized | 0 of 1 | \*\*PASS\*\* | - |$" th1/report.md
'

test_done
