#!/usr/bin/env bash
test_description='load-balancing modes compared on the bed: one bisection plan with colliding
pairs (a polarized ECMP hash) run under ecmp, spray and flowlet; spray carries more than ECMP and
reorders, ECMP almost never reorders, flowlet reorders no more than spray (its first path is
drawn, not hashed: it may dodge the collision and carry the most); the report.s modes
section says so from the records; fabscope model along the paths the flows took (ECMP with the
bed.s known hash) is within -25 % and +10 % of every lane.s aggregate (a busy machine starves
senders, the shapers bound them); a dual-plane run.s report compares its planes'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$c
P=ROOT,NETNS,FABSCOPE,JQ,LB
test_lazy_prereq LB '[ -x "$SRCDIR/ci/lb/fabric-lb" ] && [ -r "$SRCDIR/ci/lb/lb.bpf.o" ]'
test_require_in_ci ROOT NETNS FABSCOPE JQ LB

fab() { "$FABRIC" "$1" -p "$PFX" "${@:2}"; }

# addr I R: host I.s rail-R address (4 hosts a group)
addr() { echo "10.$((100 + $2)).$((($1 - 1) / 4 + 1)).$1"; }

# spine I J R: the spine a flow from host I to host J on rail R crosses (the l3 hash: any ports)
spine() { fab path "$(addr "$1" "$3")" "$(addr "$2" "$3")" 5000 5001 | awk "{print \$3}"; }

# paths_of RUN ROUND: a line a pair of RUN's ROUND, the path the bed routes it on now (ports 5000
# to 5001; under the l3 hash every port's), as `fabscope model --paths` reads them
paths_of() {
	jq -r "select(.scope == \"aggregate\" and .status == \"ok\" and .round == $2 and (.retest_for | not)) |
		\"\(.src.ip) \(.dst.ip)\"" \
		"$1/results.jsonl" >"$1.flows.$2" &&
	test -s "$1.flows.$2" &&
	while read -r src dst; do
		fab path "$src" "$dst" 5000 5001 || return 1
	done <"$1.flows.$2"
}

# The runs compare what each mode carries: the pairs that collide are the point, not suspects to
# re-test (each re-test would add its pair again, fresh peers and a control): --no-retest.
run_mode() { # MODE [LB ARGS]: the plan under MODE into r-MODE
	local m=$1
	shift
	fab lb "$@" >/dev/null &&
	timeout 180 "$FABSCOPE" run plan.ini -o "r-$m" --label "lb=$m" --no-retest >"$m.out" 2>&1 ||
	{ cat "$m.out" >&2; return 1; }
}

# What the tests below share is made here and only here: the bed, its design, the colliding hosts
# and the plans.  Each test after it makes its own runs and reads only those and this.
test_expect_success $P 'setup: a 3-leaf, 2-rail bed at 200 Mbit/s, one hash seed, addresses only: pairs that collide' '
	test_atexit "\"$FABRIC\" down -p $PFX >/dev/null 2>&1 || true" &&
	fab up -G 3 -H 4 -R 2 -S 2 -r 200mbit --seed same --hash l3 >/dev/null &&
	: >spines &&
	for r in 0 1; do
		for a in 1 2 3 4; do
			for b in 5 6 7 8; do
				echo "$r $a $b $(spine $a $b $r) $(spine $b $a $r)" >>spines || return 1
			done
		done
	done &&
	# hosts A, C (group 1) and B, D (group 2): A to B and C to D on one spine, and back, on both rails
	found=$(perl -ane "\$s{\"\$F[0] \$F[1] \$F[2]\"} = \"\$F[3] \$F[4]\";
		END { for \$a (1..4) { for \$c (\$a+1..4) { for \$b (5..8) { for \$d (5..8) { next if \$b == \$d;
			if (\$s{\"0 \$a \$b\"} eq \$s{\"0 \$c \$d\"} && \$s{\"1 \$a \$b\"} eq \$s{\"1 \$c \$d\"}) {
				print \"\$a \$c \$b \$d\\n\"; exit } } } } } }" spines) &&
	test -n "$found" &&
	echo "colliding: $found" &&
	fab hostfile >hosts.all &&
	for i in $found; do grep "^h$i " hosts.all || return 1; done >hosts &&
	cat >plan.ini <<-\EOF &&
	[global]
	hostfile = hosts
	duration = 4
	timeout = 5

	[bis]
	kind = bisection
	test = bw
	size = 1M
	EOF
	# the same hosts paired one way a round (pairwise), and eight flows a pair
	sed "s/^kind = bisection/kind = pairwise/; s/^\[bis\]/[pw]/" plan.ini >pw.ini &&
	sed "s/^\[pw\]/[pw8]/; \$a flows = 8" pw.ini >pw8.ini &&
	fab intent >design.topo
'

test_expect_success $P 'spray carries more than polarized ECMP and reorders; ECMP almost never; flowlet no more than spray' '
	run_mode ecmp ecmp &&
	run_mode spray spray &&
	run_mode flowlet flowlet --gap 25000 &&
	for m in ecmp spray flowlet; do
		test $(jsonl_count r-$m/results.jsonl ".scope == \"aggregate\" and .status == \"ok\" and (.retest_for | not)") = 8 || return 1
	done &&
	# every lane is judged by the model (a verdict, 0 or 1, by the rates: not asserted here)
	{ "$FABSCOPE" report r-ecmp r-spray r-flowlet --topology design.topo -o rep --no-plots >rep.out; rc=$?; } &&
	{ test $rc = 0 || test $rc = 1; } &&
	jq -e ".modes | length == 2" rep/summary.json &&
	jq -c ".modes[] | [.rail, [.runs[] | [.name, .aggregate_gbps, .reord_seen, .ooo_pct, .of_expected]]]" rep/summary.json &&
	jq -e "all(.modes[]; (.runs | map({key: .name, value: .}) | from_entries) as \$r |
		\$r[\"lb=spray\"].aggregate_gbps > 1.3 * \$r[\"lb=ecmp\"].aggregate_gbps and
		\$r[\"lb=spray\"].reord_seen > 0 and
		\$r[\"lb=ecmp\"].reord_seen <= 2 + \$r[\"lb=spray\"].reord_seen / 10 and
		\$r[\"lb=flowlet\"].reord_seen <= \$r[\"lb=spray\"].reord_seen and
		\$r[\"lb=ecmp\"].expected_gbps > 0.7 and \$r[\"lb=ecmp\"].of_expected < 0.7)" rep/summary.json &&
	jq -e "all(.modes[]; .best.aggregate != \"lb=ecmp\" and .best.reordering != \"lb=spray\")" rep/summary.json &&
	test $(grep -c "^- highest aggregate: \*\*lb=\(spray\|flowlet\)\*\*" rep/report.md) = 2 &&
	test $(grep -c "^- \*\*lb=ecmp\*\*: 0\.[0-6][0-9] of what the fabric carries" rep/report.md) = 2
'

# within MEASURED MODEL: MEASURED is at most 10 % over what the model says (the links' shapers
# bound it) and at most 25 % under (a busy machine starves the senders of CPU; a lane the model
# gives half of what it gives another, two flows on one uplink, is still told apart both ways)
within() {
	perl -e "exit(\$ARGV[0] <= 1.10 * \$ARGV[1] && \$ARGV[0] >= 0.75 * \$ARGV[1] ? 0 : 1)" "$1" "$2"
}

# A pairwise plan under ECMP for the model: its rounds carry data one way across a link (a
# bisection round sends both ways, and a full queue then drops the other direction.s ACKs, which
# no rate model describes).
test_expect_success $P 'fabscope model along the flows. own paths: within -25 % and +10 % of every round and lane' '
	fab lb ecmp >/dev/null &&
	timeout 180 "$FABSCOPE" run pw.ini -o r-pw --label lb=ecmp --no-retest >pw.out 2>&1 &&
	test $(jsonl_count r-pw/results.jsonl ".scope == \"aggregate\" and .status == \"ok\" and (.retest_for | not)") = 12 &&
	for round in 1 2 3; do
		paths_of r-pw $round >r-pw.paths.$round &&
		"$FABSCOPE" model design.topo --paths r-pw.paths.$round --json >model.$round.json &&
		for r in 0 1; do
			measured=$(jq -s "[.[] | select(.scope == \"aggregate\" and .round == $round and .src.rail == $r and (.retest_for | not)) | .metrics.bw_gbps] | add" r-pw/results.jsonl) &&
			expected=$(jq ".lanes[] | select(.rail == $r) | .ecmp.agg_gbps" model.$round.json) &&
			echo "round $round rail $r: measured $measured, model $expected ($(tr "\n" "," <r-pw.paths.$round))" &&
			within "$measured" "$expected" || return 1
		done || return 1
	done
'

# Ideal splitting on the bed: eight flows a pair, hashed on their ports, fill every uplink a round
# offers, as splitting each pair equally would; the model.s spray aggregate of the same pairs (its
# spraying uses a path.s ends only: the pairs of this run.s own rounds)
test_expect_success $P 'fabscope model.s ideal splitting: within -25 % and +10 % of eight hashed flows a pair' '
	fab lb ecmp --hash l4 --seed distinct >/dev/null &&
	timeout 180 "$FABSCOPE" run pw8.ini -o r-pw8 --label lb=ecmp8 --no-retest >pw8.out 2>&1 &&
	test $(jsonl_count r-pw8/results.jsonl ".scope == \"aggregate\" and .status == \"ok\" and (.retest_for | not)") = 12 &&
	for round in 1 2 3; do
		paths_of r-pw8 $round >r-pw8.paths.$round &&
		"$FABSCOPE" model design.topo --paths r-pw8.paths.$round --json >model8.$round.json &&
		for r in 0 1; do
			measured=$(jq -s "[.[] | select(.scope == \"aggregate\" and .round == $round and .src.rail == $r and (.retest_for | not)) | .metrics.bw_gbps] | add" r-pw8/results.jsonl) &&
			expected=$(jq ".lanes[] | select(.rail == $r) | .spray.agg_gbps" model8.$round.json) &&
			echo "round $round rail $r: measured $measured, model (ideal) $expected" &&
			within "$measured" "$expected" || return 1
		done || return 1
	done
'

test_expect_success $P 'a dual-plane run: the report compares its planes' '
	fab up --shape dual-plane -G 3 -H 1 -R 1 -S 2 -r 200mbit >/dev/null &&
	fab hostfile >dp.hosts &&
	grep -q "rail0/1=" dp.hosts &&
	cat >dp.ini <<-\EOF &&
	[global]
	hostfile = dp.hosts
	duration = 2
	timeout = 5

	[ring]
	kind = ring
	test = bw
	size = 1M
	EOF
	timeout 180 "$FABSCOPE" run dp.ini -o r-dp --no-retest >dp.out 2>&1 &&
	test_expect_exit 5 "$FABSCOPE" report r-dp -o dprep --no-plots >/dev/null &&
	jq -e "(.planes | length) == 1 and (.planes[0].planes | map(.plane)) == [0, 1]" dprep/summary.json &&
	test_grep "^## Planes$" dprep/report.md &&
	test_grep "^| plane 1 | " dprep/report.md
'

test_done
