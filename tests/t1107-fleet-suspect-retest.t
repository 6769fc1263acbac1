#!/usr/bin/env bash
test_description='fabscope run re-tests its latency pair suspects before it names them: on the
leaf-spine fabric of namespaces (ci/netns-fabric), a pair made slow with an htb class of its own
(one host'\''s rail-1 link, towards one peer) stays the suspect after its re-test; a pair slow
only until the re-test (the slow class removed while a test build holds the re-test) is "not
confirmed"; --retest-max bounds the re-tests, --no-retest turns them off; results.jsonl keeps
both measurements and fabscope report says how each suspect was confirmed, or that it was not
re-tested (an older directory too)'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$q
P=ROOT,NETNS,FABSCOPE,JQ
PH=$P,TEST_HOOKS	# FABSCOPE_TEST_RETEST_HOLD: a test build
test_require_in_ci ROOT NETNS FABSCOPE JQ TEST_HOOKS

# slow_pair HOST PEER: what HOST sends on rail 1 to PEER's rail-1 address goes through an htb
# class of 100 kbit/s with a burst of 200 bytes (a message of lat waits milliseconds there,
# against tens of microseconds elsewhere); the rest of HOST's traffic is not shaped.  (This
# kernel may have no netem; htb and u32 are what the fabric's CI kernels have.)
slow_pair() {
	local ns=$PFX-$1 var=${2^^}_RAIL1
	tc -n "$ns" qdisc del dev rail1 root 2>/dev/null
	tc -n "$ns" qdisc add dev rail1 root handle 1: htb default 10 &&
	tc -n "$ns" class add dev rail1 parent 1: classid 1:10 htb rate 10gbit quantum 1514 &&
	tc -n "$ns" class add dev rail1 parent 1: classid 1:20 htb rate 100kbit ceil 100kbit \
		burst 200b cburst 200b quantum 1514 &&
	tc -n "$ns" filter add dev rail1 parent 1: protocol ip u32 match ip dst "${!var}/32" flowid 1:20
}

# fast_again HOST...: the rail-1 link of each HOST unshaped again (it may be already)
fast_again() {
	local h
	for h; do
		tc -n "$PFX-$h" qdisc del dev rail1 root 2>/dev/null
	done
	return 0
}

# held_or_over: the re-test hold file is there, or the run is over
held_or_over() {
	test -e hold || ! kill -0 $fleet_pid 2>/dev/null
}

# pair_is A B: a jq test that the object's pair (.node/.peer, or .src.node/.dst.node) is A and B,
# either way round
pair_is() {
	echo "([.node // .src.node, .peer // .dst.node] | sort) == ([\"$1\", \"$2\"] | sort)"
}

test_expect_success $P 'a 4-host, 2-rail fabric; lat pairwise on rail 1, one test at a time' '
	test_atexit "\"$FABRIC\" down -p $PFX" &&
	"$FABRIC" up -p $PFX &&
	"$FABRIC" hostfile -p $PFX >hosts &&
	"$FABRIC" info -p $PFX >fabric.env &&
	. ./fabric.env &&
	test -n "$H1_RAIL1" && test -n "$H2_RAIL1" &&
	cat >plan.ini <<-\EOF
	[global]
	hostfile = hosts
	duration = 0.5
	timeout = 5

	[lat]
	kind = pairwise
	test = lat
	rails = 1
	parallel = 1
	EOF
'

FS_TIMEOUT=180
fs_run() { timeout $FS_TIMEOUT "$FABSCOPE" run "$@" >out 2>err || { cat out err >&2; false; }; }

test_expect_success $P 'a pair slow in the run and on its re-test is the suspect, re-tested' '
	fast_again h3 h4 && slow_pair h4 h1 &&
	fs_run plan.ini -o r1 &&
	fast_again h4 &&
	jsonl_ok r1/results.jsonl &&
	# the 6 pairs of the tournament, then one re-test: h1 and h4 again, its own job key
	test $(jsonl_count r1/results.jsonl "(.retest_of | not) and .status == \"ok\"") = 6 &&
	test $(jsonl_count r1/results.jsonl ".retest_of") = 1 &&
	jq -c "select((.retest_of | not) and $(pair_is h1 h4))" r1/results.jsonl >first &&
	jq -c "select(.retest_of)" r1/results.jsonl >again &&
	test $(wc -l <first) = 1 &&
	jq -e --slurpfile f first ".status == \"ok\" and .retest_of == \$f[0].job and .job == \$f[0].job + \"/retest\"
	       and .src.node == \$f[0].src.node and .dst.node == \$f[0].dst.node and .src.rail == 1
	       and .test == \"lat\" and .phase == \"lat\" and .round == \$f[0].round" again >/dev/null &&
	# the suspect carries both measurements, as the records have them
	jq -e --slurpfile f first --slurpfile a again "
	       ([.suspects[] | select(.kind == \"pair\" and $(pair_is h1 h4))] | length) == 1 and
	       (.suspects[] | select(.kind == \"pair\" and $(pair_is h1 h4)) |
		.retest.status == \"confirmed\" and .job == \$f[0].job and
		.retest.first == \$f[0].metrics.lat_us.p50 and .retest.retest == \$a[0].metrics.lat_us.p50) and
	       ([.not_confirmed[] | select($(pair_is h1 h4))] | length) == 0 and
	       .retest.max == 8 and .retest.retested == 1" r1/run.json >/dev/null &&
	test_grep "^suspect: \[lat\] h[14] -> h[14] on rail 1: .*; re-tested: first p50 [0-9.e+]* us, re-test p50 [0-9.e+]* us$" out &&
	test_grep "re-testing 1 latency suspect, one at a time" err &&
	# the lane summary is of the run, not of the re-test
	test_grep "^lat  *lat  *rail 1  *6 " out
'

test_expect_success $P 'fabscope report on that directory: the suspect, re-tested, with both p50s' '
	# a suspect its re-test confirmed fails the run.s integrity, thresholds or not
	test_expect_exit 1 "$FABSCOPE" report r1 -o rep1 --format md,html,json >report.out 2>report.err &&
	test_grep "^| no suspect confirmed by a re-test | 0 | 1 confirmed, 0 not | 1 of 1 | \*\*FAIL\*\* | pair h[14]-h[14] rail 1 (lat lat) |$" rep1/report.md &&
	test_grep "^- \*\*pair\*\* \[lat\] h[14] -> h[14] on rail 1: .* (re-tested: first p50 [0-9.e+]* us, re-test p50 [0-9.e+]* us)$" rep1/report.md &&
	test_grep "re-tested: first p50" rep1/report.html &&
	jq -e "[.runs[0].suspects[] | select(.kind == \"pair\" and $(pair_is h1 h4)) | .retest.status] == [\"confirmed\"]" \
		rep1/summary.json >/dev/null
'

test_expect_success $PH 'a pair slow only until the re-test is "not confirmed", not a suspect' '
	fast_again h3 h4 && slow_pair h4 h1 &&
	FABSCOPE_TEST_RETEST_HOLD=$PWD/hold fleet_run_bg run2.log plan.ini -o r2 &&
	# the hold file appears once the phases are done, before the re-test starts (the wait
	# is a hang guard: it ends as soon as the file is there, or the run is over)
	test_wait_for $FS_TIMEOUT held_or_over &&
	{ test -e hold || { cat run2.log >&2; false; }; } &&
	fast_again h4 &&
	rm hold &&
	fleet_wait $fleet_pid $FS_TIMEOUT &&
	{ test $fleet_rc = 0 || { cat run2.log >&2; false; }; } &&
	jsonl_ok r2/results.jsonl &&
	# both measurements are kept: the slow one of the run, the re-test of the same job
	jq -c "select((.retest_of | not) and $(pair_is h1 h4))" r2/results.jsonl >first &&
	jq -c "select(.retest_of)" r2/results.jsonl >again &&
	test $(wc -l <first) = 1 && test $(wc -l <again) = 1 &&
	jq -e --slurpfile f first ".status == \"ok\" and .retest_of == \$f[0].job" again >/dev/null &&
	jq -e --slurpfile f first --slurpfile a again "
	       ([.suspects[] | select($(pair_is h1 h4))] | length) == 0 and
	       ([.not_confirmed[] | select($(pair_is h1 h4))] | length) == 1 and
	       (.not_confirmed[] | select($(pair_is h1 h4)) |
		.kind == \"pair\" and .retest.status == \"not-confirmed\" and
		.retest.first == \$f[0].metrics.lat_us.p50 and .retest.retest == \$a[0].metrics.lat_us.p50)" \
		r2/run.json >/dev/null &&
	test_grep "^not confirmed: \[lat\] h[14] -> h[14] on rail 1: .*; not confirmed (re-test p50 [0-9.e+]* us, first p50 [0-9.e+]* us)$" run2.log &&
	test_grep ! "^suspect: \[lat\] h[14] -> h[14] on rail 1" run2.log
'

test_expect_success $PH 'fabscope report on that directory: "not confirmed", apart from the suspects' '
	test_expect_exit 5 "$FABSCOPE" report r2 -o rep2 --format md,html,json >report.out 2>report.err &&
	test_grep "^Not confirmed (high in the run, not on the re-test):" rep2/report.md &&
	test_grep "^- \[lat\] h[14] -> h[14] on rail 1: .*: not confirmed (re-test p50 [0-9.e+]* us, first p50 [0-9.e+]* us)$" rep2/report.md &&
	test_grep ! "^- \*\*pair\*\* \[lat\] h[14] -> h[14]" rep2/report.md &&
	test_grep "class=\"not-confirmed\"" rep2/report.html &&
	jq -e "([.runs[0].not_confirmed[] | select($(pair_is h1 h4))] | length) == 1 and
	       ([.runs[0].suspects[] | select($(pair_is h1 h4))] | length) == 0" rep2/summary.json >/dev/null
'

test_expect_success $P '--retest-max 1 re-tests one of two slow pairs; the other says why not' '
	fast_again h3 h4 && slow_pair h4 h1 && slow_pair h3 h2 &&
	fs_run plan.ini -o r3 --retest-max 1 &&
	fast_again h3 h4 &&
	test $(jsonl_count r3/results.jsonl ".retest_of") = 1 &&
	jq -e "([.suspects[] | select(.kind == \"pair\" and ($(pair_is h1 h4) or $(pair_is h2 h3)))] | length) == 2 and
	       ([.suspects[] | select(.kind == \"pair\" and .retest.status == \"confirmed\")] | length) == 1 and
	       ([.suspects[] | select(.kind == \"pair\" and .retest.status == \"not-retested\" and
				      .retest.why == \"over --retest-max 1\")] | length) == 1 and
	       .retest.retested == 1 and (.retest.skipped | length) == 1 and
	       ([.retest.skipped[]] == [\"over --retest-max 1\"])" r3/run.json >/dev/null &&
	test $(grep -c "^suspect: \[lat\] h[1-4] -> h[1-4] on rail 1: .*; re-tested: first p50" out) = 1 &&
	test $(grep -c "^suspect: \[lat\] h[1-4] -> h[1-4] on rail 1: .*; not re-tested (over --retest-max 1)$" out) = 1
'

test_expect_success $P '--no-retest: no re-test records, every suspect "not re-tested (--no-retest)"' '
	fast_again h3 h4 && slow_pair h4 h1 &&
	fs_run plan.ini -o r4 --no-retest &&
	fast_again h4 &&
	test $(jsonl_count r4/results.jsonl ".retest_of") = 0 &&
	test_grep "^suspect: \[lat\] h[14] -> h[14] on rail 1: .*; not re-tested (--no-retest)$" out &&
	test_grep ! "re-testing" err &&
	jq -e ".retest.off == \"--no-retest\" and
	       (.suspects[] | select(.kind == \"pair\" and $(pair_is h1 h4)) | .retest.status == \"not-retested\")" \
		r4/run.json >/dev/null &&
	test_expect_exit 5 "$FABSCOPE" report r4 -o rep4 --format md >report.out 2>report.err &&
	test_grep "^- \*\*pair\*\* \[lat\] h[14] -> h[14] on rail 1: .* (not re-tested (--no-retest))$" rep4/report.md
'

test_expect_success $PH 'interrupted before its re-test, the run is finished by --resume, re-test and all' '
	fast_again h3 h4 && slow_pair h4 h1 &&
	FABSCOPE_TEST_RETEST_HOLD=$PWD/hold6 fleet_run_bg run6.log plan.ini -o r6 &&
	test_wait_for $FS_TIMEOUT eval "test -e hold6 || ! kill -0 $fleet_pid 2>/dev/null" &&
	{ test -e hold6 || { cat run6.log >&2; false; }; } &&
	kill -INT $fleet_pid &&
	fleet_wait $fleet_pid $FS_TIMEOUT &&
	{ test $fleet_rc = 130 || { cat run6.log >&2; false; }; } &&
	rm hold6 &&
	test $(jsonl_count r6/results.jsonl ".retest_of") = 0 &&
	jq -e ".status == \"interrupted\" and .retest.retested == 1" r6/run.json >/dev/null &&
	# every job of the plan is done: the resumed run only re-tests
	fs_run --resume r6 &&
	fast_again h4 &&
	test $(jsonl_count r6/results.jsonl "(.retest_of | not)") = 6 &&
	test $(jsonl_count r6/results.jsonl ".retest_of") = 1 &&
	jq -e ".status == \"finished\" and
	       (.suspects[] | select(.kind == \"pair\" and $(pair_is h1 h4)) | .retest.status == \"confirmed\")" \
		r6/run.json >/dev/null
'

test_expect_success $P 'fabscope report on a directory of before the re-tests: "not re-tested"' '
	# r3 as an older fabscope wrote it: no re-test records, no retest or not_confirmed in run.json
	mkdir old &&
	jq -c "select(.retest_of | not)" r3/results.jsonl >old/results.jsonl &&
	jq "del(.retest, .not_confirmed, .suspects)" r3/run.json >old/run.json &&
	test_expect_exit 5 "$FABSCOPE" report old -o rep-old --format md,json >report.out 2>report.err &&
	test $(grep -c "^- \*\*pair\*\* \[lat\] h[1-4] -> h[1-4] on rail 1: .* (not re-tested)$" rep-old/report.md) = 2 &&
	jq -e "[.runs[0].suspects[] | select(.kind == \"pair\") | .retest.status] == [\"not-retested\", \"not-retested\"]" \
		rep-old/summary.json >/dev/null
'

test_expect_success $P 'a bad --retest-max is refused (exit 2), before any agent starts' '
	test_expect_code 2 "$FABSCOPE" run plan.ini -o r5 --retest-max -1 >out 2>err &&
	test $(wc -l <err) = 1 && test_grep "retest-max" err &&
	! test -e r5
'

test_done
