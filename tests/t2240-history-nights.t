#!/usr/bin/env bash
test_description='seven nights on the netns fabric kept in a history (issue 43): 6 hosts x 2 rails,
host links at 100 Mbit/s (the leaf-spine links at 1 Gbit/s, so that two flows on one spine never
halve a pair), a pairwise bw phase a night (5 peers a node; 64 KiB messages, 16 outstanding: a
flow on the slow link drains in a moment).  h1 rail 0 at 10 Mbit/s on nights 2,
4 and 6; h4 rail 1 at 10 Mbit/s from night 5 on; night 3 with both cores kept busy by two spinners.  history diff
of night 7 names h1 rail 0 a repeat offender (a suspect in 3 of 7 runs: 2, 4, 6) and h4 rail 1 a
suspect known since night 5, its change point at night 5; nothing is a suspect on the busy night;
night 5 names h4 rail 1 "new tonight", not confirmed (one night, no re-test: exit 0), night 6
confirms it by the night before (exit 1); the nights added in another order give the same bytes,
and the report with --history says the same, in the same bytes.  Only what the shapers guarantee is asserted: a
link at 10 Mbit/s carries a tenth of one at 100'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$y
P=ROOT,NETNS,FABSCOPE,JQ
test_require_in_ci ROOT NETNS FABSCOPE JQ
. "$TEST_DIRECTORY/lib-fabric.sh"

spin_pids=
stop_spinners() {
	local p
	for p in $spin_pids; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	spin_pids=
	return 0
}

# night K: one run of the plan into nK, its run id into ids
night() {
	timeout 120 "$FABSCOPE" run plan.ini -o "n$1" --no-retest >"run$1.out" 2>&1 ||
		{ cat "run$1.out" >&2; return 1; }
	jq -r .id "n$1/run.json" >>ids
}

test_expect_success $P 'seven nights: h1 rail 0 slow on 2, 4, 6; h4 rail 1 from 5 on; 3 busy' '
	test_atexit "\"$FABRIC\" down -p $PFX >/dev/null 2>&1 || true" &&
	test_atexit stop_spinners &&
	fab up -G 2 -H 3 -R 2 -S 2 -r 100mbit >/dev/null &&
	for l in l1.0-s1 l1.0-s2 l1.1-s1 l1.1-s2 l2.0-s1 l2.0-s2 l2.1-s1 l2.1-s2; do
		fab degrade $l 1gbit >/dev/null || return 1
	done &&
	fab hostfile >hosts &&
	cat >plan.ini <<-\EOF &&
	[global]
	hostfile = hosts
	duration = 0.5
	timeout = 10

	[pw]
	kind = pairwise
	test = bw
	size = 64K
	tx-depth = 16
	EOF
	: >ids &&
	night 1 &&
	fab degrade h1:rail0 10mbit >/dev/null && night 2 && fab degrade h1:rail0 100mbit >/dev/null &&
	{ sh -c "while :; do :; done" & } && spin_pids=$! &&
	{ sh -c "while :; do :; done" & } && spin_pids="$spin_pids $!" &&
	night 3 && stop_spinners &&
	fab degrade h1:rail0 10mbit >/dev/null && night 4 && fab degrade h1:rail0 100mbit >/dev/null &&
	fab degrade h4:rail1 10mbit >/dev/null && night 5 &&
	fab degrade h1:rail0 10mbit >/dev/null && night 6 && fab degrade h1:rail0 100mbit >/dev/null &&
	night 7 &&
	test $(wc -l <ids) = 7 &&
	# what the shapers guarantee: every result through h1 rail 0 on 2, 4, 6 and through h4
	# rail 1 on 5, 6, 7 carried about 10 Mbit/s (under 0.03 Gb/s with the tbf burst)
	for k in 2 4 6; do
		jq -s -e "[.[] | select(.scope == \"aggregate\" and .src.rail == 0 and
			(.src.node == \"h1\" or .dst.node == \"h1\")) | .metrics.bw_gbps] |
			length == 5 and all(. < 0.03)" n$k/results.jsonl >/dev/null || return 1
	done &&
	for k in 5 6 7; do
		jq -s -e "[.[] | select(.scope == \"aggregate\" and .src.rail == 1 and
			(.src.node == \"h4\" or .dst.node == \"h4\")) | .metrics.bw_gbps] |
			length == 5 and all(. < 0.03)" n$k/results.jsonl >/dev/null || return 1
	done
'

run_of() { sed -n "$1p" ids; }

test_expect_success $P 'history add: seven runs, once each; again: held already' '
	"$FABSCOPE" history add --db h.db n1 n2 n3 n4 n5 n6 n7 >out &&
	test_grep -x "7 added, 0 held already: h.db" out &&
	"$FABSCOPE" history add --db h.db n3 >out &&
	test_grep -x "n3: held already" out &&
	"$FABSCOPE" history list --db h.db --json | jq -r ".[].run" >listed &&
	test_cmp ids listed
'

test_expect_success $P 'night 7: h1 rail 0 a repeat offender (3 of 7), h4 rail 1 known since night 5' '
	"$FABSCOPE" history diff --db h.db --last 7 --json >d7.json &&
	"$FABSCOPE" history diff --db h.db --last 7 >d7.txt &&
	cat d7.txt &&
	jq -e --arg r2 $(run_of 2) --arg r4 $(run_of 4) --arg r6 $(run_of 6) "[.repeat[] |
		select(.kind == \"node\" and .node == \"h1\" and .rail == 0)] | length == 1 and
		.[0].in_runs == 3 and .[0].runs == 7 and .[0].suspect_runs == [\$r2, \$r4, \$r6]" d7.json >/dev/null &&
	jq -e --arg r5 $(run_of 5) "[.suspects[] | select(.kind == \"node\" and .node == \"h4\" and .rail == 1)] |
		length == 1 and .[0].status == \"known since\" and .[0].since.run == \$r5 and
		.[0].change_point.at.run == \$r5 and .[0].in_runs == 3" d7.json >/dev/null &&
	# nothing else: no other node, and no pair (h1.s and h4.s are their nodes. evidence)
	jq -e "[.suspects[], .repeat[] | select(.kind != \"node\" or
		(.node != \"h1\" and .node != \"h4\"))] | length == 0" d7.json >/dev/null &&
	test_grep "^  node h1 rail 0 plane 0 (pw bw 64 KiB): known since .*; a suspect in 3 of the 7 runs" d7.txt &&
	test_grep "^    change point at run $(run_of 5) " d7.txt &&
	# night 7 brings nothing new: h4 is known, h1 is well tonight
	jq -e ".exit == 0" d7.json >/dev/null
'

test_expect_success $P 'the busy night raises nothing; night 5 names h4 rail 1 new tonight, night 6 confirms it' '
	jq -e --arg r3 $(run_of 3) "[.suspects[], .repeat[] | select(.suspect_runs | index(\$r3))] |
		length == 0" d7.json >/dev/null &&
	"$FABSCOPE" history diff --db h.db --run $(run_of 3) >d3.txt &&
	cat d3.txt &&
	test_grep -x "suspects tonight: none" d3.txt &&
	# (the nights ran with --no-retest: one night is never confirmed by the run; h1 rail 0, slow
	# on nights 2 and 4 and well on 3, is one night.s suspect each time too)
	"$FABSCOPE" history diff --db h.db --run $(run_of 5) --json >d5.json &&
	jq -e "[.suspects[] | select(.status == \"new tonight\")] | length == 1 and
		.[0].node == \"h4\" and .[0].rail == 1 and .[0].confirmed == false and .[0].alarm == false" d5.json >/dev/null &&
	jq -e ".exit == 0 and (.why | test(\"^no suspect confirmed tonight.*; 1 suspect of one night, not confirmed\"))" \
		d5.json >/dev/null &&
	test_expect_exit 1 "$FABSCOPE" history diff --db h.db --run $(run_of 6) --json >d6.json &&
	jq -e "[.suspects[] | select(.alarm) | [.node, .rail, .status, .confirmed_by]] ==
	       [[\"h4\", 1, \"known since\", \"the night before (a suspect then too)\"]] and
	       ([.suspects[] | select(.node == \"h1\") | .confirmed] == [false])" d6.json >/dev/null &&
	for k in 2 4; do
		"$FABSCOPE" history diff --db h.db --run $(run_of $k) --json >d$k.json &&
		jq -e "[.suspects[] | [.node, .rail, .confirmed]] == [[\"h1\", 0, false]] and .exit == 0" d$k.json \
			>/dev/null || return 1
	done
'

test_expect_success $P 'the same nights added in another order: the same bytes' '
	"$FABSCOPE" history add --db o.db n7 n3 n1 n6 >/dev/null &&
	"$FABSCOPE" history add --db o.db n2 n5 n4 n7 >/dev/null &&
	"$FABSCOPE" history diff --db o.db --last 7 --json >o7.json &&
	"$FABSCOPE" history diff --db o.db --last 7 >o7.txt &&
	test_cmp d7.json o7.json && test_cmp d7.txt o7.txt &&
	"$FABSCOPE" history diff --db o.db --run $(run_of 5) --json >o5.json &&
	test_cmp d5.json o5.json &&
	test_expect_exit 1 "$FABSCOPE" history diff --db o.db --run $(run_of 6) --json >o6.json &&
	test_cmp d6.json o6.json
'

test_expect_success $P 'report --history: the section names both, the same bytes from either history' '
	for db in h o; do
		{ "$FABSCOPE" report --history $db.db n7 -o rep-$db --no-plots >/dev/null || test $? -le 5; } &&
		sed -n "/^## Since last night/,/^## Summary/p" rep-$db/report.md >sec-$db &&
		jq -S .history rep-$db/summary.json >hist-$db.json || return 1
	done &&
	cat sec-h &&
	sed "s/the history o\.db/the history h.db/" sec-o >sec-o-named-h &&
	test_cmp sec-h sec-o-named-h && test_cmp hist-h.json hist-o.json &&
	test_grep -x "## Since last night and over the last 7 runs" sec-h &&
	test_grep -F "| node h1 rail 0 plane 0 (pw bw 64 KiB) | **repeat offender, known since $(jq -r .started n2/run.json)** | 3 of 7 runs | $(run_of 2), $(run_of 4), $(run_of 6) |" sec-h &&
	test_grep -F "| **known since $(jq -r .started n5/run.json)** | 3 of 7 runs | run $(run_of 5) (" sec-h &&
	test_grep -F "**Nothing new or worse**: no suspect confirmed tonight" sec-h
'

test_done
