#!/usr/bin/env bash
test_description='fabscope report: runs made under different load-balancing modes side by side
(aggregate a round, slowest pair, fairness, what TCP saw of the order), against what the intended
fabric carries (--topology: the model of the same pairs), the best mode per metric and the modes
far below the fabric named; the verdict from the model without thresholds (every pair against its
fair share, every lane against per-flow ECMP; [model] and [phase NAME] fractions); a dual-plane
run.s planes side by side; records without counters'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-report.sh"

test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_require_in_ci FABSCOPE JQ GNUPLOT
P=FABSCOPE,JQ

# rec DIR RAIL PLANE ROUND SRC DST GBPS RETRANS REORD OOO RXSEGS: an aggregate bw record of
# phase perm with the TCP counters (RETRANS "-": none of them)
rec() {
	jq -cn --argjson rail "$2" --argjson plane "$3" --argjson round "$4" --arg s "$5" --arg d "$6" \
		--argjson bw "$7" --arg rt "$8" --arg rs "$9" --arg oo "${10}" --arg rx "${11}" '
	{schema: "fabscope.record/1", test: "bw", transport: "tcp", msg_size_bytes: 1048576,
	 scope: "aggregate", dir: "c2s", status: "ok", phase: "perm", round: $round,
	 job: "perm/bw/r\($round)/rail\($rail)/\($s)>\($d)",
	 src: {node: $s, rail: $rail, plane: $plane}, dst: {node: $d, rail: $rail, plane: $plane},
	 metrics: ({bw_gbps: $bw} + (if $rt == "-" then {} else
		{retrans_segs: ($rt | tonumber), reord_seen: ($rs | tonumber), ooo_pkts: ($oo | tonumber),
		 rx_segs: ($rx | tonumber)} end))}' >>"$1/results.jsonl"
}

# mode DIR LB GBPS(h1>h3 h2>h4 h3>h1 h4>h2) OOO-PER-PAIR REORD-PER-PAIR: one round of a permutation
mode() {
	mkrun "$1" "{\"lb\":\"$2\"}" &&
	rec "$1" 0 0 1 h1 h3 "$3" 2 "$8" "$7" 1000 &&
	rec "$1" 0 0 1 h2 h4 "$4" 2 "$8" "$7" 1000 &&
	rec "$1" 0 0 1 h3 h1 "$5" 2 "$8" "$7" 1000 &&
	rec "$1" 0 0 1 h4 h2 "$6" 2 "$8" "$7" 1000
}

design() {
	cat <<-\EOF
	switch l1 tier=leaf rail=0
	switch l2 tier=leaf rail=0
	switch s1 tier=spine
	switch s2 tier=spine
	link h1:eth0 l1:p1 rail=0 speed=1G
	link h2:eth0 l1:p2 rail=0 speed=1G
	link h3:eth0 l2:p1 rail=0 speed=1G
	link h4:eth0 l2:p2 rail=0 speed=1G
	link l1:s1 s1:l1 speed=1G
	link l1:s2 s2:l1 speed=1G
	link l2:s1 s1:l2 speed=1G
	link l2:s2 s2:l2 speed=1G
	EOF
}

test_expect_success $P 'three modes: the table, the best per metric, the mode far below the fabric' '
	mode ecmp ecmp 0.5 0.5 0.5 0.5 0 0 &&
	mode spray spray 0.95 0.95 0.95 0.95 50 20 &&
	mode flowlet flowlet 0.9 0.9 0.6 0.6 10 4 &&
	design >design.topo &&
	fs_expect 0 report ecmp spray flowlet --topology design.topo -o r --no-plots &&
	jq -e ".modes | length == 1" r/summary.json &&
	jq -e ".modes[0].best == {aggregate: \"lb=spray\", slowest: \"lb=spray\", fairness: \"lb=ecmp\",
		reordering: \"lb=ecmp\"}" r/summary.json &&
	jq -e "[.modes[0].runs[] | .expected_gbps] == [4, 4, 4]" r/summary.json &&
	jq -e "[.modes[0].runs[] | .expected_ecmp_gbps] | all(. > 2.8 and . < 3.2)" r/summary.json &&
	jq -e "[.modes[0].runs[] | .of_expected] == [0.5, 0.95, 0.75]" r/summary.json &&
	jq -e "[.modes[0].runs[] | .ooo_pct] == [0, 5, 1]" r/summary.json &&
	jq -e "[.modes[0].runs[] | .reord_seen] == [0, 80, 16]" r/summary.json &&
	test_grep "^## Load-balancing modes$" r/report.md &&
	test_grep "^| lb=spray | 3.8 | 0.95 | " r/report.md &&
	test_grep "^- highest aggregate: \*\*lb=spray\*\* (3.8; lb=ecmp 2, -47 %; lb=flowlet 3, -21 %)$" r/report.md &&
	test_grep "^- least reordering: \*\*lb=ecmp\*\* (0 reorderings; lb=spray 80; lb=flowlet 16)$" r/report.md &&
	test_grep "^- \*\*lb=ecmp\*\*: 0.50 of what the fabric carries; receivers took 0.0 % of segments out of order (behind a loss or a reordering), senders detected 0 reorderings and retransmitted 8 segments$" r/report.md &&
	! grep -q "lb=spray\*\*: 0.95 of what" r/report.md &&
	grep -q "<h2>Load-balancing modes</h2>" r/report.html
'

test_expect_success $P 'the model judges bw without thresholds: a slow pair, a lane far below, a node not in the design' '
	# the three modes above: every pair at a quarter of its fair share or more, every lane at 0.6 of
	# what ECMP carries (lb=ecmp: 2 of about 3 Gb/s); the link speeds are the design.s
	fs_expect 0 report ecmp spray flowlet --topology design.topo -o m0 --no-plots &&
	test_grep -x "acceptance: PASS (0 of 6 checks failed)" out &&
	test_grep -F "| bw >= 0.25 x the pair'"'"'s fair share of design.topo (the model), every pair | 0.25 x fair share | 0.5 x | 0 of 12 | **PASS** | - |" m0/report.md &&
	test_grep -F "| link speeds | 1 Gb/s every host port; switch links 1 Gb/s (the design, design.topo) |" m0/report.md &&
	jq -e ".verdict.result == \"PASS\" and .verdict.judged_by == [\"integrity\", \"design.topo\"]" m0/summary.json >/dev/null &&
	# h2 to h4 at a fifth of its link: the pair is named, with what the model expected
	mode slow slow 0.95 0.2 0.95 0.95 0 0 &&
	fs_expect 1 report slow --topology design.topo -o m1 --no-plots &&
	test_grep -x "acceptance: FAIL (1 of 6 checks failed)" out &&
	test_grep -F "h2-h4 rail 0 (0.2 of 1)" m1/report.md &&
	# every pair at 0.3 of its link: each above a quarter, the lane far below what ECMP carries
	mode weak weak 0.3 0.3 0.3 0.3 0 0 &&
	fs_expect 1 report weak --topology design.topo -o m2 --no-plots &&
	# (what ECMP carries is fabscope model.s, draws and all: the pairs are a bisection)
	ecmp=$("$FABSCOPE" model design.topo --pattern bisection --json | jq ".lanes[0].ecmp.agg_gbps") &&
	worst=$(awk -v e="$ecmp" "BEGIN { printf \"%.3g\", 1.2 / e }") &&
	awk -v w="$worst" "BEGIN { exit !(w > 0.3 && w < 0.6) }" &&
	test_grep "^| lane aggregate >= 0.6 x what design.topo carries (the model, per-flow ECMP), every lane | 0.6 x ECMP | $worst x | 1 of 1 | \*\*FAIL\*\* | perm rail 0 (1.2 of [0-9.]* Gb/s) |$" m2/report.md &&
	# the fractions are the operator.s: [model], and a phase.s own
	printf "[model]\naggregate_fraction = 0.3\n" >model.ini &&
	fs_expect 0 report weak --topology design.topo --thresholds model.ini -o m3 --no-plots &&
	printf "[phase perm]\npair_fraction = 0.1\n" >phase.ini &&
	fs_expect 0 report slow --topology design.topo --thresholds phase.ini -o m4 --no-plots &&
	test_grep -F "| perm: bw >= 0.1 x the pair'"'"'s fair share of design.topo (the model), every pair |" m4/report.md &&
	# a node the design does not have: its lane has no expectation, not judged
	mkrun odd "{\"lb\":\"ecmp\"}" &&
	rec odd 0 0 1 h1 h5 0.9 0 0 0 1000 &&
	rec odd 0 0 1 h2 h4 0.9 0 0 0 1000 &&
	fs_expect 5 report odd --topology design.topo -o m5 --no-plots &&
	test_grep -x "acceptance: INCOMPLETE: perm has no criterion (0 of 4 checks failed)" out
'

test_expect_success $P 'the expectation is fabscope model.s: the same pairs, draws, routing order and seed' '
	# a bisection as fabscope run pairs it (h1>h3, h3>h1, h2>h4, h4>h2): ECMP may put two flows on
	# one uplink, so its expectation depends on every draw
	for r in ba bb; do
		mkrun $r "{\"lb\":\"$r\"}" &&
		rec $r 0 0 1 h1 h3 0.9 - && rec $r 0 0 1 h3 h1 0.9 - &&
		rec $r 0 0 1 h2 h4 0.9 - && rec $r 0 0 1 h4 h2 0.9 - || return 1
	done &&
	fs_expect 0 report ba bb --topology design.topo -o rb --no-plots &&
	"$FABSCOPE" model design.topo --pattern bisection --json >m.json &&
	jq -r ".lanes[0] | \"\(.spray.agg_gbps) \(.ecmp.agg_gbps)\"" m.json >model &&
	jq -r ".modes[0].runs[] | \"\(.expected_gbps) \(.expected_ecmp_gbps)\"" rb/summary.json >report &&
	printf "%s\n" "$(cat model)" "$(cat model)" >expect &&
	test_cmp expect report &&
	read spray ecmp <model &&
	awk -v s="$spray" -v e="$ecmp" "BEGIN { exit !(s == 4 && e > 2 && e < 4) }"
'

test_expect_success $P 'two rails through one cable: every lane of a round modelled at once, as it ran' '
	# a node.s two NICs (rails 0 and 1) on one leaf, the leaves joined by one 1G cable each way: a
	# bisection on both rails puts 4 flows on that cable, a quarter each, 1 a lane (each lane
	# alone would have 2)
	cat >shared.topo <<-\EOF &&
	switch l1 tier=leaf
	switch l2 tier=leaf
	switch s1 tier=spine
	link h1:eth0 l1:p1 rail=0 speed=1G
	link h1:eth1 l1:p2 rail=1 speed=1G
	link h2:eth0 l1:p3 rail=0 speed=1G
	link h2:eth1 l1:p4 rail=1 speed=1G
	link h3:eth0 l2:p1 rail=0 speed=1G
	link h3:eth1 l2:p2 rail=1 speed=1G
	link h4:eth0 l2:p3 rail=0 speed=1G
	link h4:eth1 l2:p4 rail=1 speed=1G
	link l1:s1 s1:l1 speed=1G
	link l2:s1 s1:l2 speed=1G
	EOF
	for r in sa sb; do
		mkrun $r "{\"lb\":\"$r\"}" &&
		for rail in 0 1; do
			rec $r $rail 0 1 h1 h3 0.2 - && rec $r $rail 0 1 h3 h1 0.2 - &&
			rec $r $rail 0 1 h2 h4 0.2 - && rec $r $rail 0 1 h4 h2 0.2 - || return 1
		done
	done &&
	fs_expect 0 report sa sb --topology shared.topo -o rs --no-plots &&
	"$FABSCOPE" model shared.topo --pattern bisection --json >ms.json &&
	jq -r ".lanes[] | \"\(.rail) \(.spray.agg_gbps) \(.ecmp.agg_gbps)\"" ms.json >model &&
	printf "%s\n" "0 1 1" "1 1 1" >expect && test_cmp expect model &&
	jq -r ".modes[] | \"\(.rail) \(.runs[0].expected_gbps) \(.runs[0].expected_ecmp_gbps)\"" rs/summary.json >report &&
	test_cmp model report
'

test_expect_success $P,GNUPLOT 'plots: the aggregates under each mode against the fabric, the pairs. rates a CDF each' '
	fs_expect 0 report ecmp spray flowlet --topology design.topo -o rp &&
	jq -r ".plots[] | .file" rp/summary.json >files &&
	test_grep "modes-perm-r0p0.svg$" files &&
	test_grep "modes-cdf-perm-r0p0.svg$" files &&
	jq -e "[.plots[].title] | index(\"perm, rail 0: aggregate under each mode\") != null" rp/summary.json &&
	printf "%s\n" "\"lb=ecmp\" 2 4" "\"lb=spray\" 3.8 4" "\"lb=flowlet\" 3 4" >expect &&
	test_cmp expect rp/plots/modes-perm-r0p0.dat &&
	head -1 rp/plots/modes-cdf-perm-r0p0.dat >head &&
	echo "\"lb=ecmp\" \"f0\" \"lb=spray\" \"f1\" \"lb=flowlet\" \"f2\"" >expect &&
	test_cmp expect head &&
	test $(grep -c "<svg" rp/report.html) -ge 4
'

test_expect_success $P 'without --topology: no expectation column, the rest alike' '
	fs_expect 5 report ecmp spray -o r2 --no-plots &&
	jq -e ".modes[0].runs[0].expected_gbps == null and .modes[0].runs[0].of_expected == null" r2/summary.json &&
	! grep -q "of the fabric" r2/report.md &&
	test_grep "^| run | aggregate Gb/s | median | slowest | fairness | retransmitted | reorderings | out of order |$" r2/report.md
'

test_expect_success $P 'a design without speeds: a warning naming the cable, no expectation, no verdict (exit 5)' '
	design | sed "s/ speed=1G//" >nospeed.topo &&
	fs_expect 5 report ecmp spray --topology nospeed.topo -o r6 --no-plots &&
	test_grep -x "acceptance: INCOMPLETE: perm has no criterion (0 of 4 checks failed)" out &&
	test_grep -F "**perm** has no criterion: bw on every lane: the model has no expectation for its pairs" r6/report.md &&
	test_grep "warning: nospeed.topo:5: a cable without speed=: the modes are not held against" err &&
	! grep -v "warning:" err | grep -q . &&
	jq -e ".modes[0].runs[0].expected_gbps == null" r6/summary.json
'

test_expect_success $P 'records without the TCP counters (verbs, older runs): dashes, never zeros' '
	mkrun old "{\"lb\":\"old\"}" &&
	rec old 0 0 1 h1 h3 0.5 - - - - &&
	rec old 0 0 1 h2 h4 0.5 - - - - &&
	fs_expect 5 report ecmp old -o r3 --no-plots &&
	jq -e ".modes[0].runs[1] | .retrans == null and .ooo_pct == null" r3/summary.json &&
	jq -e ".modes[0].best.reordering == null" r3/summary.json &&
	test_grep "^| lb=old | 1 | 0.5 | 0.5 | 1 | - | - | - |$" r3/report.md
'

# lat DIR PHASE SRC DST P50 P99 LOADED(0|1): an aggregate lat record, under a bw load when LOADED
lat() {
	jq -cn --arg ph "$2" --arg s "$3" --arg d "$4" --argjson p50 "$5" --argjson p99 "$6" --argjson l "$7" '
	{schema: "fabscope.record/1", test: "lat", transport: "tcp", msg_size_bytes: 64, scope: "aggregate",
	 status: "ok", phase: $ph, round: 1, job: "\($ph)/lat/r1/rail0/\($s)>\($d)",
	 params: (if $l == 1 then {load: "bw"} else {} end),
	 src: {node: $s, rail: 0, plane: 0}, dst: {node: $d, rail: 0, plane: 0},
	 metrics: {lat_us: {p50: $p50, p99: $p99}}} + (if $l == 1 then {load_job: "\($ph)/load/r1/rail0/\($s)>\($d)"} else {} end)' >>"$1/results.jsonl"
}

# loadrec DIR PHASE SRC DST: the bw record of a lat test.s load
loadrec() {
	jq -cn --arg ph "$2" --arg s "$3" --arg d "$4" '
	{schema: "fabscope.record/1", test: "bw", kind: "load", transport: "tcp", msg_size_bytes: 65536,
	 scope: "aggregate", dir: "c2s", status: "ok", phase: $ph, round: 1,
	 job: "\($ph)/load/r1/rail0/\($s)>\($d)", load_for: "\($ph)/lat/r1/rail0/\($s)>\($d)",
	 src: {node: $s, rail: 0, plane: 0}, dst: {node: $d, rail: 0, plane: 0}, metrics: {bw_gbps: 0.19}}' >>"$1/results.jsonl"
}

test_expect_success $P 'latency under load: against the idle p50 of its lane, the load itself no bw result' '
	for m in ecmp spray; do
		mkrun "l$m" "{\"lb\":\"$m\"}" &&
		lat "l$m" idle h1 h2 30 40 0 && lat "l$m" idle h3 h4 30 50 0 || return 1
	done &&
	lat lecmp busy h1 h2 300 3000 1 && lat lecmp busy h3 h4 330 2800 1 &&
	loadrec lecmp busy h1 h2 && loadrec lecmp busy h3 h4 &&
	lat lspray busy h1 h2 600 900 1 && lat lspray busy h3 h4 600 1200 1 &&
	loadrec lspray busy h1 h2 && loadrec lspray busy h3 h4 &&
	fs_expect 5 report lecmp lspray -o r5 --no-plots &&
	jq -e "[.runs[].groups[] | select(.test == \"bw\")] == []" r5/summary.json &&
	jq -e ".loaded_latency == [
		{run: \"lb=ecmp\", phase: \"busy\", rail: 0, plane: 0, idle_phase: \"idle\", idle_p50_us: 30, p50_us: 315, p99_us: 2900},
		{run: \"lb=spray\", phase: \"busy\", rail: 0, plane: 0, idle_phase: \"idle\", idle_p50_us: 30, p50_us: 600, p99_us: 1050}]" r5/summary.json &&
	test_grep "^## Latency under load$" r5/report.md &&
	test_grep "^| lb=ecmp | busy | rail 0 | 30 | 315 | 2900 | 10.5 | 96.7 |$" r5/report.md &&
	grep -qF -- "- \[busy\] rail 0: the lowest loaded p99 is **lb=spray** (1050 us)" r5/report.md
'

test_expect_success $P 'a dual-plane run: its planes side by side, the slower one said' '
	mkrun dp "{\"lb\":\"ecmp\"}" &&
	rec dp 0 0 1 h1 h3 0.9 0 0 0 1000 &&
	rec dp 0 0 1 h2 h4 0.9 0 0 0 1000 &&
	rec dp 0 1 1 h1 h3 0.45 0 0 0 1000 &&
	rec dp 0 1 1 h2 h4 0.45 0 0 30 1000 &&
	fs_expect 5 report dp -o r4 --no-plots &&
	jq -e ".planes | length == 1" r4/summary.json &&
	jq -e "[.planes[0].planes[] | .aggregate_gbps] == [1.8, 0.9]" r4/summary.json &&
	test_grep "^## Planes$" r4/report.md &&
	test_grep "^- plane 1: -50 % aggregate against plane 0; 1.50 % out of order against 0.00 %$" r4/report.md &&
	! grep -q "^## Load-balancing modes" r4/report.md
'

test_done
