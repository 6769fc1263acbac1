#!/usr/bin/env bash
test_description='the test library itself: TAP output, failures, prerequisites, CI rules, cleanup'
. "$(dirname "$0")/test-lib.sh"

# run_sub_test NAME [ARGS...] <script
# Writes the test script on stdin (after the test-lib preamble) to NAME.t and runs it with its
# trash directory under ours; its stdout, stderr and exit code land in NAME.out, NAME.err, NAME.rc.
# The caller's CI, TEST_VERBOSE, FABSCOPE and TEST_TOOL do not leak into it;
# SUB_ENV="VAR=value ..." sets variables for it.
run_sub_test() {
	local name=$1
	shift
	{
		printf '%s\n' '#!/usr/bin/env bash' "test_description='sub-test $name'" \
			'. "$TEST_DIRECTORY/test-lib.sh"'
		cat
	} >"$name.t" &&
	chmod +x "$name.t" &&
	env -u CI -u TEST_VERBOSE -u FABSCOPE -u TEST_TOOL TEST_OUTPUT_DIRECTORY="$PWD" ${SUB_ENV:-} "./$name.t" "$@" \
		>"$name.out" 2>"$name.err"
	echo $? >"$name.rc"
}

test_expect_success 'passing tests: ok lines, plan at the end, exit 0, trash removed' '
	run_sub_test pass <<-\EOF &&
	test_expect_success "first" "true"
	test_expect_success "second" "echo output that stays hidden"
	test_done
	EOF
	cat >expect <<-\EOF &&
	ok 1 - first
	ok 2 - second
	# passed all 2 test(s)
	1..2
	EOF
	test_cmp expect pass.out &&
	echo 0 >expect.rc && test_cmp expect.rc pass.rc &&
	test_must_be_empty pass.err &&
	test ! -e trash.pass
'

test_expect_success 'a failing body is "not ok", its output shown as # lines, exit 1, trash kept' '
	run_sub_test fail <<-\EOF &&
	test_expect_success "good" "true"
	test_expect_success "bad" "echo the-evidence && echo on-stderr >&2 && false"
	test_expect_success "after" "true"
	test_done
	EOF
	cat >expect <<-\EOF &&
	ok 1 - good
	not ok 2 - bad
	ok 3 - after
	# failed 1 among 3 test(s)
	1..3
	EOF
	test_cmp expect fail.out &&
	echo 1 >expect.rc && test_cmp expect.rc fail.rc &&
	test_grep "^# 	the-evidence$" fail.err &&
	test_grep "^# 	on-stderr$" fail.err &&
	test_grep "^# 	echo the-evidence" fail.err &&
	test_grep "trash directory kept" fail.err &&
	test -d trash.fail
'

test_expect_success 'variables set by one body are seen by the next, whatever their names' '
	run_sub_test vars <<-\EOF &&
	test_expect_success "set" "log=1 && rc=2 && want=3 && prereq=4 && code=5"
	test_expect_success "read" "test \"\$log\$rc\$want\$prereq\$code\" = 12345"
	test_done
	EOF
	test_grep "^ok 2 - read$" vars.out
'

test_expect_success 'each body starts in the trash directory, with the documented variables' '
	run_sub_test env <<-\EOF &&
	test_expect_success "wander off" "cd /"
	test_expect_success "back in trash" "test \"\$PWD\" = \"\$TRASH_DIRECTORY\""
	test_expect_success "paths" "
		test \"\$SRCDIR/tests\" = \"\$TEST_DIRECTORY\" &&
		test \"\$FABSCOPE\" = \"\$SRCDIR/fabscope\" &&
		test \"\$TEST_TOOL\" = \"\$SRCDIR/tests/helper/test-tool\" &&
		test -f \"\$SRCDIR/tests/test-lib.sh\"
	"
	test_done
	EOF
	test_grep "^1..3$" env.out &&
	test_grep ! "^not ok" env.out &&
	SUB_ENV=FABSCOPE=rel/fab run_sub_test envrel <<-\EOF &&
	test_expect_success "relative FABSCOPE made absolute" "test \"\$FABSCOPE\" = \"\$TEST_OUTPUT_DIRECTORY/rel/fab\""
	test_done
	EOF
	test_grep "^ok 1 " envrel.out
'

test_expect_success 'prerequisites: missing ones skip with the reason, ! negates, lazy ones run once' '
	run_sub_test prereq <<-EOF &&
	test_set_prereq HAVE
	test_lazy_prereq COUNTED "echo run >>\"$PWD/lazy-count\""
	test_lazy_prereq NEVER "false"
	test_expect_success HAVE "have" "true"
	test_expect_success NEVER "never" "false"
	test_expect_success HAVE,NEVER "both" "false"
	test_expect_success !NEVER "negated" "true"
	test_expect_success COUNTED "lazy 1" "true"
	test_expect_success COUNTED,HAVE "lazy 2" "true"
	test_expect_success UNHEARD_OF "unknown" "false"
	test_expect_success "have_prereq" "test_have_prereq HAVE,!NEVER && ! test_have_prereq NEVER"
	test_done
	EOF
	cat >expect <<-\EOF &&
	ok 1 - have
	ok 2 - never # SKIP missing NEVER
	ok 3 - both # SKIP missing NEVER
	ok 4 - negated
	ok 5 - lazy 1
	ok 6 - lazy 2
	ok 7 - unknown # SKIP missing UNHEARD_OF
	ok 8 - have_prereq
	# passed all 8 test(s)
	1..8
	EOF
	test_cmp expect prereq.out &&
	echo run >expect.count && test_cmp expect.count lazy-count
'

test_expect_success 'test_expect_code: as a test, and inside a body like git' '
	run_sub_test code <<-\EOF &&
	test_expect_code 3 "exits 3" "(exit 3)"
	test_expect_code 3 "exits 0, wanted 3" "true"
	test_expect_success "helper in a body" "test_expect_code 4 sh -c \"exit 4\""
	test_expect_success "helper mismatch" "test_expect_exit 4 true"
	test_expect_code 0 NEVER_SET "skipped" "false"
	test_done
	EOF
	cat >expect <<-\EOF &&
	ok 1 - exits 3
	not ok 2 - exits 0, wanted 3
	ok 3 - helper in a body
	not ok 4 - helper mismatch
	ok 5 - skipped # SKIP missing NEVER_SET
	# failed 2 among 5 test(s)
	1..5
	EOF
	test_cmp expect code.out &&
	test_grep "expected exit code 3, got 0" code.err &&
	test_grep "test_expect_exit: expected exit code 4, got 0 from: true" code.err
'

test_expect_success 'chain lint: a broken &&-chain fails (body shown, not run), a whole chain passes' '
	run_sub_test chain <<-\EOF &&
	test_expect_success "whole chain" "
		x=1 &&
		{ sleep 0 & } &&
		wait \$! &&
		for i in 1 2; do
			test \$i -gt 0 || return 1
		done &&
		test \$x = 1
	"
	test_expect_success "missing &&" "
		echo body-ran >>body.count
		leaked=yes && echo outside-the-chain >>lint.count
	"
	test_expect_success "the lint changed nothing in the shell" "test -z \"\${leaked:-}\""
	test_expect_success "a command put in the background mid-body" "
		sleep 0 &
		pid=\$! && true
	"
	test_expect_success "an exit outside the chain" "
		true
		exit 3
	"
	test_expect_success "a here-doc that is never closed" "
		cat >x <<-END &&
		never closed
	"
	test_expect_code 3 "test_expect_code is linted too" "
		false
		(exit 3)
	"
	test_expect_code 3 "a whole chain with test_expect_code" "true && (exit 3)"
	test_done
	EOF
	cat >expect <<-\EOF &&
	ok 1 - whole chain
	not ok 2 - missing &&
	ok 3 - the lint changed nothing in the shell
	not ok 4 - a command put in the background mid-body
	not ok 5 - an exit outside the chain
	not ok 6 - a here-doc that is never closed
	not ok 7 - test_expect_code is linted too
	ok 8 - a whole chain with test_expect_code
	# failed 5 among 8 test(s)
	1..8
	EOF
	test_cmp expect chain.out &&
	echo 1 >expect.rc && test_cmp expect.rc chain.rc &&
	test $(grep -c "^# broken &&-chain" chain.err) = 5 &&
	test_grep "^# broken &&-chain: with \"(exit 117) &&\" before the body it exited 0, not 117" chain.err &&
	test_grep "^# broken &&-chain: the end of the body was never reached" chain.err &&
	test_grep "^# 	echo body-ran >>body.count$" chain.err &&
	test ! -e trash.chain/body.count &&
	echo outside-the-chain >expect.lint &&
	test_cmp expect.lint trash.chain/lint.count &&
	SUB_ENV=TEST_CHAIN_LINT=0 run_sub_test nolint <<-\EOF &&
	test_expect_success "missing &&, lint off" "
		false
		true
	"
	test_done
	EOF
	test_grep "^ok 1 - missing &&, lint off$" nolint.out &&
	echo 0 >expect.rc && test_cmp expect.rc nolint.rc
'

test_expect_success 'skip_all prints "1..0 # SKIP reason" and exits 0' '
	run_sub_test skipall <<-\EOF &&
	skip_all "no fabric here"
	test_expect_success "never runs" "false"
	EOF
	echo "1..0 # SKIP no fabric here" >expect &&
	test_cmp expect skipall.out &&
	echo 0 >expect.rc && test_cmp expect.rc skipall.rc
'

test_expect_success 'test_require_in_ci: a missing prerequisite fails with CI=true, skips without' '
	cat >req.script <<-\EOF &&
	test_lazy_prereq NEVER "false"
	test_set_prereq HAVE
	test_require_in_ci HAVE NEVER
	test_expect_success HAVE,NEVER "needs both" "true"
	test_done
	EOF
	SUB_ENV=CI=true run_sub_test req_ci <req.script &&
	cat >expect <<-\EOF &&
	not ok 1 - NEVER missing in CI
	ok 2 - needs both # SKIP missing NEVER
	# failed 1 among 2 test(s)
	1..2
	EOF
	test_cmp expect req_ci.out &&
	echo 1 >expect.rc && test_cmp expect.rc req_ci.rc &&
	run_sub_test req_local <req.script &&
	cat >expect <<-\EOF &&
	ok 1 - needs both # SKIP missing NEVER
	# passed all 1 test(s)
	1..1
	EOF
	test_cmp expect req_local.out &&
	echo 0 >expect.rc && test_cmp expect.rc req_local.rc
'

test_expect_success 'test_atexit runs last-registered first, on success and on failure' '
	cat >atexit.script <<-EOF &&
	test_atexit "echo first >>\"$PWD/\$SUBNAME.order\""
	test_atexit "echo second >>\"$PWD/\$SUBNAME.order\""
	test_expect_success "maybe fail" "test -z \"\$FAIL\""
	test_done
	EOF
	SUB_ENV=SUBNAME=ok run_sub_test atexit_ok <atexit.script &&
	SUB_ENV="SUBNAME=bad FAIL=1" run_sub_test atexit_bad <atexit.script &&
	printf "second\nfirst\n" >expect &&
	test_cmp expect ok.order &&
	test_cmp expect bad.order &&
	test_grep "^not ok 1" atexit_bad.out
'

test_expect_success 'exit inside a body: that test is "not ok", atexit still runs, non-zero exit' '
	run_sub_test bodyexit <<-EOF &&
	test_atexit "echo cleaned >\"$PWD/bodyexit.cleaned\""
	test_expect_success "fine" "true"
	test_expect_success "exits" "echo last words && exit 0"
	test_expect_success "never reached" "true"
	test_done
	EOF
	cat >expect <<-\EOF &&
	ok 1 - fine
	not ok 2 - exits
	1..2
	EOF
	test_cmp expect bodyexit.out &&
	test_grep "exited (code 0) inside this body" bodyexit.err &&
	test_grep "last words" bodyexit.err &&
	test_path_is_file bodyexit.cleaned &&
	test "$(cat bodyexit.rc)" != 0
'

test_expect_success 'a script that dies before test_done is a failure' '
	run_sub_test died <<-\EOF &&
	test_expect_success "fine" "true"
	exit 0
	EOF
	test_grep "^not ok 2 - test script exited (code 0) without reaching test_done$" died.out &&
	test_grep "^1..2$" died.out &&
	test "$(cat died.rc)" != 0
'

test_expect_success 'verbose: -v and TEST_VERBOSE=1 show body output, quiet mode does not' '
	cat >verbose.script <<-\EOF &&
	test_expect_success "talk" "echo chatter-out && echo chatter-err >&2"
	test_done
	EOF
	run_sub_test quiet <verbose.script &&
	test_grep ! chatter quiet.out &&
	test_grep ! chatter quiet.err &&
	run_sub_test loud -v <verbose.script &&
	test_grep chatter-out loud.err &&
	test_grep chatter-err loud.err &&
	test_grep ! chatter loud.out &&
	SUB_ENV=TEST_VERBOSE=1 run_sub_test loud_env <verbose.script &&
	test_grep chatter-out loud_env.err
'

test_expect_success 'test_grep, test_cmp and test_must_fail say what went wrong' '
	printf "alpha\nbeta\n" >file &&
	test_grep beta file &&
	test_grep -c alpha file &&
	test_grep ! gamma file &&
	test_must_fail test_grep gamma file 2>err &&
	test_grep "no match for .gamma. in .file.; it contains:" err &&
	test_grep "^beta" err &&
	test_must_fail test_grep ! beta file 2>err &&
	test_grep "should not match" err &&
	test_must_fail test_grep ! anything no-such-file 2>err &&
	test_grep "no file" err &&
	echo other >file2 &&
	test_must_fail test_cmp file file2 >diff &&
	test_grep "^+other" diff &&
	test_must_fail false &&
	test_must_fail test_must_fail true 2>err &&
	test_grep "command succeeded" err &&
	test_must_fail test_must_fail sh -c "kill -TERM \$\$" 2>err &&
	test_grep "killed by signal 15" err &&
	test_must_fail test_must_fail no-such-command-here 2>err &&
	test_grep "could not run" err
'

test_expect_success 'test_wait_for polls until success and gives up after its limit' '
	{ (sleep 0.3 && : >appeared) & } &&
	test_wait_for 5 test -e appeared &&
	test_must_fail test_wait_for 1 false 2>err &&
	test_grep "still failing" err
'

test_expect_success 'test_kill_pid ends a background process by PID and reaps it' '
	{ sleep 300 & } &&
	pid=$! &&
	kill -0 $pid &&
	test_kill_pid $pid &&
	test_must_fail kill -0 $pid 2>/dev/null &&
	test_kill_pid $pid
'

test_expect_success 'a background child killed before it execs does not report for the script' '
	run_sub_test killrace <<-\EOF &&
	test_expect_success "spawn and kill at once" "
		for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			sleep 30 & test_kill_pid \$! || return 1
		done
	"
	test_done
	EOF
	cat >expect <<-\EOF &&
	ok 1 - spawn and kill at once
	# passed all 1 test(s)
	1..1
	EOF
	test_cmp expect killrace.out &&
	test_must_be_empty killrace.err
'

test_expect_success PROVE 'prove reads the TAP: skips counted, failures found' '
	run_sub_test proved <<-\EOF &&
	test_lazy_prereq NEVER "false"
	test_expect_success "good" "true"
	test_expect_success NEVER "skipped" "true"
	test_expect_success "bad" "false"
	test_done
	EOF
	test_must_fail env TEST_OUTPUT_DIRECTORY="$PWD" prove proved.t >prove.out 2>&1 &&
	test_grep "Failed test:  3" prove.out &&
	test_grep "Result: FAIL" prove.out &&
	env TEST_OUTPUT_DIRECTORY="$PWD" prove pass.t >prove.out 2>&1 &&
	test_grep "Result: PASS" prove.out
'

test_done
