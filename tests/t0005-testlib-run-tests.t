#!/usr/bin/env bash
test_description='tests/run-tests, the parallel scheduler of make check: longest first by the
timings, files that hold the same name never at once, files that hold nothing side by side, a
failure named with its diagnostics (when it ends and again after the summary), tiers, usage'
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci PROVE
P=PROVE
RUN_TESTS=$SRCDIR/tests/run-tests

# mk NAME HOLDS BODY: NAME.t, a TAP file of one test that holds HOLDS (- for none) and runs BODY
# (a shell line; its exit status is the test's).  Each file's holds are names of this run only
# ($$), so another run of this test beside it waits for nothing of ours.
mk() {
	{
		echo '#!/bin/bash'
		echo 'test_holds() { :; }'
		test "$2" = - || echo "test_holds $2"
		echo 'echo 1..1'
		echo "if $3; then echo 'ok 1 - $1'; else echo 'not ok 1 - $1'; fi"
	} >"$1.t" && chmod +x "$1.t"
}

test_expect_success $P 'files of a run' '
	mk long - true && mk short - true && mk new - true &&
	mk vm1 "vm-$$" true && mk vm2 "vm-$$ slurm-$$" true &&
	cat >timings <<-\EOF
	# TIER FILE SECONDS
	plain long.t 300
	plain short.t 2
	plain vm1.t 40
	plain vm2.t 50
	asan long.t 900
	EOF
'

test_expect_success $P '--list: longest first; a file not in the timings counts as 600 s; the holds' '
	"$RUN_TESTS" --list --timings timings long.t short.t new.t vm1.t vm2.t --tier asan long.t short.t >out &&
	cat >expect <<-EOF &&
	asan long.t 900 -
	plain new.t 600 -
	asan short.t 600 -
	plain long.t 300 -
	plain vm2.t 50 vm-$$,slurm-$$
	plain vm1.t 40 vm-$$
	plain short.t 2 -
	EOF
	test_cmp expect out &&
	# files holding a name count as their chain: vm1 and vm2 (40 + 50 + 250 s of vm3) before
	# long (300 s), the longest of them first
	mk vm3 "vm-$$" true && echo "plain vm3.t 250" >>timings &&
	"$RUN_TESTS" --list --timings timings long.t short.t vm1.t vm2.t vm3.t >out &&
	cat >expect <<-EOF &&
	plain vm3.t 250 vm-$$
	plain vm2.t 50 vm-$$,slurm-$$
	plain vm1.t 40 vm-$$
	plain long.t 300 -
	plain short.t 2 -
	EOF
	test_cmp expect out
'

# a file that holds nothing runs beside another: each waits (a hang guard, 60 s) until the
# other has started; run one after the other, the first would wait out its guard and fail
test_expect_success $P 'files that hold nothing run side by side' '
	mk side1 - "touch s1.in; for i in \$(seq 600); do test -e s2.in && break; sleep 0.1; done; test -e s2.in" &&
	mk side2 - "touch s2.in; for i in \$(seq 600); do test -e s1.in && break; sleep 0.1; done; test -e s1.in" &&
	"$RUN_TESTS" -j 2 --timings timings side1.t side2.t >out 2>err &&
	test_grep "^All tests successful" out
'

# two files that hold the same name: each, while it runs, looks for the other (for 2 s): it
# must never see it, with four slots free
test_expect_success $P 'files that hold the same name never run at once' '
	mk held1 "x-$$" "touch h1.in; sleep 2; ! test -e h2.in && rm h1.in" &&
	mk held2 "y-$$ x-$$" "touch h2.in; sleep 2; ! test -e h1.in && rm h2.in" &&
	"$RUN_TESTS" -j 4 --timings timings held1.t held2.t >out 2>err &&
	test_grep "^All tests successful" out &&
	test ! -e h1.in && test ! -e h2.in
'

# test_cpus 2 with two slots: the file runs alone (the others look for it, and it for them,
# while they run); it starts first, being the longest, and the files after it wait for it;
# with three slots one other file runs beside it
test_expect_success $P 'a file that keeps two CPUs busy counts as two files' '
	{
		echo "#!/bin/bash" && echo "test_cpus() { :; }" && echo "test_cpus 2" &&
		echo "echo 1..1" &&
		echo "touch heavy.in; sleep 2; if ! ls light*.in 2>/dev/null; then echo \"ok 1 - alone\"; else echo \"not ok 1 - beside\"; fi; rm heavy.in"
	} >heavy.t && chmod +x heavy.t &&
	mk light1 - "touch light1.in; sleep 0.5; ! test -e heavy.in && rm light1.in" &&
	mk light2 - "touch light2.in; sleep 0.5; ! test -e heavy.in && rm light2.in" &&
	printf "%s\n" "plain heavy.t 100" "plain light1.t 2" "plain light2.t 1" >ctimings &&
	"$RUN_TESTS" --list --timings ctimings heavy.t light1.t >out &&
	test_grep "^plain heavy.t 100 - cpus=2$" out &&
	"$RUN_TESTS" -j 2 --timings ctimings heavy.t light1.t light2.t >out 2>err &&
	test_grep "^All tests successful" out &&
	# three slots: heavy and one light file at once, never both light files beside it
	mk both1 - "touch both1.in; for i in \$(seq 600); do test -e heavy.in && break; sleep 0.1; done; test -e heavy.in" &&
	{
		echo "#!/bin/bash" && echo "test_cpus 2 # two" && echo "echo 1..1" &&
		echo "touch heavy.in; for i in \$(seq 600); do test -e both1.in && break; sleep 0.1; done; if test -e both1.in; then echo \"ok 1 - beside one\"; else echo \"not ok 1 - alone\"; fi; sleep 1; rm heavy.in"
	} >heavy3.t && chmod +x heavy3.t &&
	printf "%s\n" "plain heavy3.t 100" "plain both1.t 2" >c3timings &&
	"$RUN_TESTS" -j 3 --timings c3timings heavy3.t both1.t >out 2>err &&
	test_grep "^All tests successful" out
'

# a file that leaves a line half written holds nobody up: with two slots, "partial" writes half a
# line and waits (a hang guard, 60 s) for "third", which can start only once the harness has seen
# "quick" end; a harness stuck reading the half line would never start it
test_expect_success $P 'a half-written line holds up no other file' '
	cat >partial.t <<-\EOF &&
	#!/bin/bash
	echo 1..1
	printf "# half a line"
	for i in $(seq 600); do test -e third.in && break; sleep 0.1; done
	echo
	if test -e third.in; then echo "ok 1 - third ran"; else echo "not ok 1 - third never ran"; fi
	EOF
	chmod +x partial.t &&
	mk quick - true && mk third - "touch third.in" &&
	printf "%s\n" "plain partial.t 100" "plain quick.t 50" "plain third.t 1" >ptimings &&
	"$RUN_TESTS" -j 2 --timings ptimings partial.t quick.t third.t >out 2>err &&
	test_grep "^All tests successful" out
'

test_expect_success $P 'a failure: the file and its diagnostics when it ends, again after the summary, exit 1' '
	cat >bad.t <<-\EOF &&
	#!/bin/bash
	echo 1..2
	echo "ok 1 - fine"
	echo "the reason it failed" >&2
	echo "not ok 2 - broken"
	EOF
	chmod +x bad.t &&
	test_expect_exit 1 "$RUN_TESTS" -j 2 --timings timings short.t bad.t >out 2>err &&
	test_grep "^---- bad.t: its diagnostics ----$" out &&
	test_grep "^---- bad.t failed: the last lines of its diagnostics ----$" out &&
	test $(grep -c "^the reason it failed$" out) = 2 &&
	# the second time after the summary (its "Result: FAIL"), for a log read from its end
	sed -n "/^Result: FAIL/,\$p" out >tail &&
	test_grep "^the reason it failed$" tail &&
	test_grep "Failed tests*: *2$" out &&
	test_grep ! "short.t: its diagnostics" out
'

test_expect_success $P '--save-timings: a line per file and tier that ran' '
	# (the fresh tier: a tier of its own that needs no build of its own, as asan and cov do)
	"$RUN_TESTS" -j 2 --timings timings --save-timings saved short.t long.t --tier fresh short.t >out 2>err &&
	grep -v "^#" saved | cut -d" " -f1,2 >got &&
	printf "%s\n" "fresh short.t" "plain long.t" "plain short.t" >expect &&
	test_cmp expect got &&
	grep -v "^#" saved | cut -d" " -f3 >secs &&
	test_line_count = 3 secs &&
	test_grep ! -Ev "^[0-9]+\.[0-9]$" secs
'

test_expect_success $P 'usage errors: exit 2, one line' '
	test_expect_exit 2 "$RUN_TESTS" 2>err && test_line_count = 1 err &&
	test_expect_exit 2 "$RUN_TESTS" -j 0 short.t 2>err && test_line_count = 1 err &&
	test_grep "give a number of files at once" err &&
	test_expect_exit 2 "$RUN_TESTS" --tier nope short.t 2>err && test_line_count = 1 err &&
	test_grep "unknown tier .nope." err &&
	test_expect_exit 2 "$RUN_TESTS" no-such.t 2>err && test_line_count = 1 err &&
	test_grep "no test file .no-such.t." err &&
	mk badhold "Bad_Name" true &&
	test_expect_exit 2 "$RUN_TESTS" --list badhold.t 2>err && test_line_count = 1 err &&
	test_grep "badhold.t: line [0-9]*: test_holds .Bad_Name.: names are lowercase" err &&
	printf "test_cpus two\n" >badcpus.t &&
	test_expect_exit 2 "$RUN_TESTS" --list badcpus.t 2>err && test_line_count = 1 err &&
	test_grep "badcpus.t: line 1: test_cpus .two.: give a number of CPUs" err
'

test_done
