# tests/test-lib.sh - a small TAP test library in the style of git's t/test-lib.sh
#
# A test file tests/tNNNN-area-what.t is an executable bash script:
#
#	#!/usr/bin/env bash
#	test_description='what this file checks'
#	. "$(dirname "$0")/test-lib.sh"
#
#	test_expect_success 'title' '
#		"$FABSCOPE" --version >out &&
#		test_grep "^fabscope " out
#	'
#	test_expect_success ROOT,NETNS 'title' '...'    # without them: "ok N - title # SKIP missing NETNS"
#	test_expect_code 2 'unknown command exits 2' '"$FABSCOPE" nosuch'
#	test_done
#
# Run all with `prove tests/` from the repository root, or one directly: tests/t0000-testlib-basic.t
# Options (also to prove: prove tests/t0000-testlib-basic.t :: -v):
#	-v, --verbose    show each body's output live (on stderr); env TEST_VERBOSE=1 does the same
#	-x               trace bodies with set -x (into the captured output)
#	-i, --immediate  stop at the first failing test
#	-d, --debug      keep the trash directory even when everything passed
#
# Bodies run with `eval` in the test script's own shell (variables set by one test are seen by
# the next), from the trash directory, stdin from /dev/null.  Chain their commands with && -
# a body's exit status is that of its last command.  The &&-chain lint checks that before the
# body runs: a body in which a command is not joined to the next by && fails as "broken
# &&-chain" and does not run.  A command put in the background mid-body breaks the chain too
# ("A & B && C" runs "B && C" whatever A does): write "{ A & } && pid=$! && ...".  A top-level
# "A || B" runs B in the lint (A is skipped, so it "failed"): group it,
# "{ A || { cat log; false; }; } && ...".  The lint sees a body's top level only: inside a
# loop, an if or a { } group chain with && all the same, and end a loop's commands with
# "|| return 1" (bodies are eval'd in a function).  TEST_CHAIN_LINT=0 (env) turns the lint
# off.  Without -v a body's stdout and stderr go to
# trash.NAME/.testlib/N.out, which is printed as "# " lines on stderr when the test fails
# (stderr, like Test::More's diag, so that prove shows it without -v).
#
# Variables exported to bodies:
#	SRCDIR            the repository root (absolute)
#	FABSCOPE          the fabscope binary (absolute; default $SRCDIR/fabscope, env FABSCOPE overrides)
#	TEST_TOOL         the test helper (absolute; default $SRCDIR/tests/helper/test-tool, env
#	                  TEST_TOOL overrides: `make test-asan` points both at build-asan/)
#	TEST_DIRECTORY    $SRCDIR/tests
#	TRASH_DIRECTORY   the scratch directory: $TEST_OUTPUT_DIRECTORY/trash.NAME (NAME = file name
#	                  without .t; TEST_OUTPUT_DIRECTORY defaults to tests/).  Made empty at start,
#	                  removed when all tests passed, kept when one failed.
#
# Test functions:
#	test_expect_success [PREREQS] TITLE BODY    BODY must exit 0
#	test_expect_code CODE [PREREQS] TITLE BODY  BODY must exit CODE (inside a body, test_expect_code
#	                                            CODE CMD... works like git's: same as test_expect_exit)
#	test_done                                   print the plan, clean up, exit 0 or 1
#	skip_all REASON                             "1..0 # SKIP REASON" before any test; exits 0
#	test_require_in_ci PREREQ...                with CI=true, a missing PREREQ is a failing test
#	                                            ("not ok N - PREREQ missing in CI"), not a skip
# Prerequisites (PREREQS = comma-separated names, !NAME negates):
#	test_have_prereq PREREQS      true when all hold; built in: ROOT NETNS JQ IPERF3 QPERF TCPDUMP
#	                              PROVE FABSCOPE TEST_TOOL (unknown names count as missing)
#	test_set_prereq NAME          declare NAME present
#	test_lazy_prereq NAME SCRIPT  NAME holds if SCRIPT (run once, in a subshell) succeeds
# Helpers for bodies:
#	test_cmp EXPECT ACTUAL        diff -u
#	test_grep [!] [GREP-OPTS] PATTERN FILE   grep that says what was in FILE when it fails
#	test_expect_exit CODE CMD...  run CMD, succeed when it exits with CODE
#	test_must_fail CMD...         CMD must exit non-zero, but not die of a signal or be missing
#	test_must_be_empty FILE
#	test_line_count OP N FILE     FILE has (OP) N lines; OP: = != -lt -le -gt -ge
#	test_path_is_file FILE
#	test_wait_for SECONDS CMD...  poll CMD every 0.1 s until it succeeds; fail after SECONDS (whole)
#	test_kill_pid PID...          TERM (then KILL after 5 s) processes this script started, reap them
#	test_atexit COMMAND           run COMMAND (eval'd, last registered first) when the script
#	                              exits, whether it passed, failed, or died: netns teardown,
#	                              killing servers started in the background (by PID)
#
# What a file holds exclusively (tests/run-tests reads these lines before it starts anything):
#	test_holds NAME...            at the top level of a test file, before its tests: this file
#	                              uses something no other test may use at the same time (one
#	                              name per thing: tests/README lists them).  tests/run-tests
#	                              never starts two files holding a NAME at once; test_holds
#	                              also takes a lock per NAME for the file's life, so that two
#	                              runs side by side (two prove -j) serialise too.
#	test_cpus N                   the file keeps N CPUs busy (the Soft-RoCE guest's two): the
#	                              scheduler counts it as N of its -j files at once

# ---- where things are
TEST_DIRECTORY=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
SRCDIR=$(cd "$TEST_DIRECTORY/.." && pwd -P)
TEST_NAME=$(basename "$0")
TEST_NAME=${TEST_NAME%.t}
TEST_NAME=${TEST_NAME%.sh}
TEST_OUTPUT_DIRECTORY=${TEST_OUTPUT_DIRECTORY:-$TEST_DIRECTORY}
TRASH_DIRECTORY=$TEST_OUTPUT_DIRECTORY/trash.$TEST_NAME

test_abspath_() { # a program named by path or by PATH lookup -> absolute path
	case $1 in
	/*) echo "$1" ;;
	*/*) echo "$PWD/$1" ;;
	*) command -v "$1" || echo "$PWD/$1" ;;
	esac
}
FABSCOPE=$(test_abspath_ "${FABSCOPE:-$SRCDIR/fabscope}")
TEST_TOOL=$(test_abspath_ "${TEST_TOOL:-$SRCDIR/tests/helper/test-tool}")
export SRCDIR FABSCOPE TEST_TOOL TEST_DIRECTORY TRASH_DIRECTORY
export LC_ALL=C TZ=UTC
# a test that runs make runs it as a user would: nothing of the make that runs the tests leaks
# into it (make passes its command line on in MAKEFLAGS and in the environment: make check's
# DEVELOPER=1 WITH_VERBS=yes TEST_HOOKS=yes, TESTS=..., its -j and level)
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES GNUMAKEFLAGS DEVELOPER SANITIZE TEST_HOOKS WITH_VERBS \
	O V CFLAGS CPPFLAGS LDFLAGS PREFIX BINDIR MANDIR DATADIR DOCDIR DESTDIR PKG_CONFIG TESTS \
	FAST_TESTS FRESH_TESTS FRESH_TIER PROVE PROVE_FLAGS

# ---- options
test_verbose_=0 test_trace_=0 test_immediate_=0 test_debug_=0
case ${TEST_VERBOSE:-} in 1 | yes | true) test_verbose_=1 ;; esac
while (($#)); do
	case $1 in
	-v | --verbose) test_verbose_=1 ;;
	-x) test_trace_=1 ;;
	-i | --immediate) test_immediate_=1 ;;
	-d | --debug) test_debug_=1 ;;
	-h | --help)
		echo "$TEST_NAME: ${test_description:-}"
		echo "options: -v (verbose) -x (trace) -i (stop at first failure) -d (keep trash)"
		exit 0 ;;
	*) echo "test-lib: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done

# ---- state
test_count=0 test_failed_=0 test_done_called_=0 test_in_body_="" test_title_="" test_pid_=$BASHPID
test_atexit_=()
declare -A test_prereq_=() test_lazy_=()

# fd 6: TAP output (the script's stdout), fd 7: diagnostics (stderr).  Bodies run with both
# closed, so a server a body starts in the background never holds prove's pipe open.
exec 6>&1 7>&2
test_tap_link_=$(readlink /proc/$$/fd/1 2>/dev/null)
test_diag_link_=$(readlink /proc/$$/fd/2 2>/dev/null)

test_tap_()  { printf '%s\n' "$*" >&6; }
test_diag_() { # MESSAGE... or lines on stdin -> "# " lines on stderr
	if (($#)); then printf '%s\n' "$@"; else cat; fi | sed 's/^/# /' >&7
}
test_bug_()  { echo "bug in test script: $*" >&7; exit 1; }

rm -rf "$TRASH_DIRECTORY" && mkdir -p "$TRASH_DIRECTORY/.testlib" && cd "$TRASH_DIRECTORY" || {
	echo "test-lib: cannot set up trash directory '$TRASH_DIRECTORY'" >&2
	exit 1
}

# ---- prerequisites
test_set_prereq() { test_prereq_[$1]=1; }
test_lazy_prereq() { test_lazy_[$1]=$2; }

test_have_prereq() { # PREREQS (comma-separated, !NAME negates); sets test_missing_prereq_
	local list p name want have
	IFS=, read -ra list <<<"$1"
	test_missing_prereq_=""
	for p in "${list[@]}"; do
		name=${p#!}
		want=1
		[[ $p == !* ]] && want=0
		if [[ -z ${test_prereq_[$name]:-} ]]; then
			if [[ -n ${test_lazy_[$name]:-} ]] &&
				(cd "$TRASH_DIRECTORY/.testlib" && eval "${test_lazy_[$name]}") </dev/null >/dev/null 2>&1; then
				test_prereq_[$name]=1
			else
				test_prereq_[$name]=0
			fi
		fi
		have=${test_prereq_[$name]}
		((have == want)) || test_missing_prereq_+=${test_missing_prereq_:+,}$p
	done
	[[ -z $test_missing_prereq_ ]]
}

test_lazy_prereq ROOT '[ "$(id -u)" = 0 ]'
test_lazy_prereq NETNS '
	[ "$(id -u)" = 0 ] && command -v ip &&
	ip netns add "fsprobe$$" && ip netns del "fsprobe$$"
'
test_lazy_prereq JQ 'command -v jq'
test_lazy_prereq IPERF3 'command -v iperf3'
test_lazy_prereq QPERF 'command -v qperf'
test_lazy_prereq TCPDUMP 'command -v tcpdump'
test_lazy_prereq ETHTOOL 'command -v ethtool'
test_lazy_prereq PROVE 'command -v prove'
# SETPRIV: tests that drop root's privileges (setpriv to user nobody) need root, setpriv, that
# user, and that it can reach what they hand it: the binaries, ci/ and the trash directory.  A
# checkout under a directory others cannot search (root's 0700 home) cannot be reached: clone
# where others may search (/srv, /opt, /tmp) to run them.
test_lazy_prereq SETPRIV '
	[ "$(id -u)" = 0 ] && command -v setpriv && id nobody &&
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
		"test -x \"\$1\" && test -x \"\$2\" && test -r \"\$3\" && cd \"\$4\"" sh \
		"$FABSCOPE" "$TEST_TOOL" "$SRCDIR/ci/install-deps" "$TRASH_DIRECTORY"
'
# TEST_HOOKS: a test build, whose binary reads the FABSCOPE_TEST_* variables (make TEST_HOOKS=yes;
# the test targets build so)
test_lazy_prereq TEST_HOOKS '"$FABSCOPE" version | grep -q "test hooks"'
declare -A test_prereq_hint_=(
	[TEST_HOOKS]="$FABSCOPE is not a test build: run the tests through make test, test-all or check (or build with make TEST_HOOKS=yes)"
	[SETPRIV]="setpriv (util-linux) or user nobody is missing, or nobody cannot reach the checkout or the binaries: clone where others may search, not under root's 0700 home"
)
test_lazy_prereq FABSCOPE '[ -x "$FABSCOPE" ]'
test_lazy_prereq TEST_TOOL '[ -x "$TEST_TOOL" ]'

test_in_ci_() { case ${CI:-} in true | TRUE | True | 1 | yes) return 0 ;; esac; return 1; }

# With CI=true a prerequisite CI can provide must not be skipped quietly: report it as a failure.
test_require_in_ci() {
	test_in_ci_ || return 0
	local p
	for p; do
		test_have_prereq "$p" && continue
		test_count=$((test_count + 1)) test_failed_=$((test_failed_ + 1))
		test_tap_ "not ok $test_count - $p missing in CI"
		test_diag_ "CI=true and $p is missing: CI provides it (root, ci/install-deps, a built tree), so this fails instead of skipping${test_prereq_hint_[$p]:+ ($p: ${test_prereq_hint_[$p]})}"
	done
}

# ---- running tests
# The body is eval'd inside these functions, so their locals would shadow (and swallow) a
# body's variables of the same name: they are all named test_*_.
test_eval_() {
	((test_trace_)) && set -x
	eval "$1"
	test_rc_=$?
	{ set +x; } 2>/dev/null
	return "$test_rc_"
}

# The &&-chain lint (the idea of git's GIT_TEST_CHAIN_LINT).  A body's exit code is that of its
# last command, so a command not joined to the next by && (a missing "&&", a "cmd &" that puts
# the rest in the background, a here-doc that never ends) fails without failing the test.
# Before a body runs, "(exit 117) && BODY" is evaluated: when every command hangs on the chain,
# none runs and the result is 117; anything else means a command stood outside the chain.  A
# line after the body records the result, so a here-doc that swallows the rest of the body (and
# that line) or an exit shows as broken too.  It runs in a subshell with stdin from /dev/null
# and its output in the test's log: nothing it does reaches the script's shell (variables, cd,
# functions, traps), and the only commands that run at all are those a broken chain leaves
# outside the && (and the B of a top-level "A || B").  It sees the body's top level only, not
# the inside of a loop or a group.  TEST_CHAIN_LINT=0 turns it off.
test_chain_lint_() { # BODY LOG: 0 when BODY is one &&-chain; else why in $test_lint_msg_
	local test_lint_mark_=$TRASH_DIRECTORY/.testlib/chain-lint.rc
	test_lint_msg_=""
	rm -f "$test_lint_mark_"
	(
		test_in_body_=$2
		eval "(exit 117) && $1"$'\n\n''echo $? >"$test_lint_mark_"'
	) </dev/null >"$2" 2>&1 6>&- 7>&-
	if [[ ! -s $test_lint_mark_ ]]; then
		test_lint_msg_="broken &&-chain: the end of the body was never reached (an exit or a return outside the chain, a here-doc that is never closed, or a body that ends in &&; a top-level \"A || return 1\" runs the return here too: write \"{ A || return 1; } &&\")"
		return 1
	fi
	test_lint_rc_=$(<"$test_lint_mark_")
	rm -f "$test_lint_mark_"
	[[ $test_lint_rc_ == 117 ]] && return 0
	test_lint_msg_="broken &&-chain: with \"(exit 117) &&\" before the body it exited $test_lint_rc_, not 117: a command is not joined to the next by && (or the body has a syntax error; a top-level \"A || B\" runs B here too: write \"{ A || B; } &&\")"
	return 1
}

test_chain_lint_on_() { [[ ${TEST_CHAIN_LINT:-1} != 0 ]]; }

test_run_() { # WANT PREREQS TITLE BODY
	local test_want_=$1 test_req_=$2 test_rc_ test_log_ test_lint_msg_ test_lint_rc_
	test_count=$((test_count + 1))
	test_title_=$3
	if [[ -n $test_req_ ]] && ! test_have_prereq "$test_req_"; then
		test_tap_ "ok $test_count - $3 # SKIP missing $test_missing_prereq_"
		return 0
	fi
	test_log_=$TRASH_DIRECTORY/.testlib/$test_count.out
	cd "$TRASH_DIRECTORY" || test_bug_ "trash directory vanished"
	if test_chain_lint_on_ && ! test_chain_lint_ "$4" "$test_log_.lint"; then
		# the body does not run: a check outside the chain would not count
		test_failed_=$((test_failed_ + 1))
		test_tap_ "not ok $test_count - $3"
		{
			echo "$test_lint_msg_"
			echo "body:"
			echo "$4" | sed 's/^/	/'
			if [[ -s $test_log_.lint ]]; then
				echo "output of the commands outside the chain (run by the lint):"
				sed 's/^/	/' "$test_log_.lint"
			fi
		} | test_diag_
		cd "$TRASH_DIRECTORY" || test_bug_ "trash directory vanished"
		if ((test_immediate_)); then
			test_diag_ "stopping at the first failure (-i)"
			test_done
		fi
		return 0
	fi
	cd "$TRASH_DIRECTORY" || test_bug_ "trash directory vanished"
	test_in_body_=$test_log_
	if ((test_verbose_)); then
		test_eval_ "$4" </dev/null >&7 2>&7 6>&- 7>&-
	else
		test_eval_ "$4" </dev/null >"$test_log_" 2>&1 6>&- 7>&-
	fi
	test_rc_=$?
	test_in_body_=""
	if ((test_rc_ == test_want_)); then
		test_tap_ "ok $test_count - $3"
		return 0
	fi
	test_failed_=$((test_failed_ + 1))
	test_tap_ "not ok $test_count - $3"
	{
		if ((test_want_ == 0)); then
			echo "exit code $test_rc_"
		else
			echo "expected exit code $test_want_, got $test_rc_"
		fi
		echo "body:"
		echo "$4" | sed 's/^/	/'
		if ((!test_verbose_)) && [[ -s $test_log_ ]]; then
			echo "output:"
			sed 's/^/	/' "$test_log_"
		fi
	} | test_diag_
	if ((test_immediate_)); then
		test_diag_ "stopping at the first failure (-i)"
		test_done
	fi
}

test_expect_success() {
	local test_req_=""
	(($# == 3)) && { test_req_=$1; shift; }
	(($# == 2)) || test_bug_ "test_expect_success takes [PREREQS] TITLE BODY, got $# arguments"
	test_run_ 0 "$test_req_" "$1" "$2"
}

test_expect_code() {
	if [[ -n $test_in_body_ ]]; then
		test_expect_exit "$@"
		return
	fi
	local test_code_=$1 test_req_=""
	shift
	(($# == 3)) && { test_req_=$1; shift; }
	(($# == 2)) && [[ $test_code_ =~ ^[0-9]+$ ]] ||
		test_bug_ "test_expect_code takes CODE [PREREQS] TITLE BODY"
	test_run_ "$test_code_" "$test_req_" "$1" "$2"
}

# ---- helpers for bodies
test_cmp() { diff -u "$@"; }

test_grep() {
	local invert=0 file
	if [[ ${1:-} == "!" ]]; then
		invert=1
		shift
	fi
	(($# >= 2)) || test_bug_ "test_grep takes [!] [GREP-OPTS] PATTERN FILE"
	file=${!#}
	if [[ ! -f $file ]]; then
		echo "test_grep: no file '$file'" >&2
		return 1
	fi
	if ((invert)); then
		grep "$@" >/dev/null || return 0
		echo "test_grep: '${*: -2:1}' should not match in '$file', but these lines do:" >&2
		grep "$@" | head -n 20 >&2
		return 1
	fi
	grep "$@" >/dev/null && return 0
	echo "test_grep: no match for '${*: -2:1}' in '$file'; it contains:" >&2
	head -n 50 "$file" >&2
	return 1
}

test_expect_exit() {
	local want=$1 rc
	shift
	"$@"
	rc=$?
	((rc == want)) && return 0
	echo "test_expect_exit: expected exit code $want, got $rc from: $*" >&2
	return 1
}

test_must_fail() {
	local rc
	"$@"
	rc=$?
	if ((rc == 0)); then
		echo "test_must_fail: command succeeded: $*" >&2
	elif ((rc > 128)); then
		echo "test_must_fail: killed by signal $((rc - 128)): $*" >&2
	elif ((rc == 126 || rc == 127)); then
		echo "test_must_fail: could not run (exit $rc): $*" >&2
	else
		return 0
	fi
	return 1
}

test_must_be_empty() {
	[[ -f $1 && ! -s $1 ]] && return 0
	echo "test_must_be_empty: '$1' should be an empty file; it contains:" >&2
	head -n 50 "$1" >&2
	return 1
}

# test_line_count OP N FILE: FILE has (OP: = != -lt -le -gt -ge) N lines
test_line_count() {
	local n
	[[ $# = 3 && -f $3 ]] || { echo "test_line_count: usage: test_line_count OP N FILE (an existing file)" >&2; return 1; }
	n=$(wc -l <"$3")
	test "$n" "$1" "$2" && return 0
	echo "test_line_count: '$3' has $n lines, expected $1 $2; it contains:" >&2
	head -n 50 "$3" >&2
	return 1
}

test_path_is_file() {
	[[ -f $1 ]] && return 0
	echo "test_path_is_file: '$1' is not a file" >&2
	return 1
}

# test_http_get URL: the body on stdout; fails on anything but 200 (bounded: 5 s; perl's
# HTTP::Tiny, no proxy from the environment)
test_http_get() {
	perl -MHTTP::Tiny -e '
		my $r = HTTP::Tiny->new(timeout => 5)->get($ARGV[0]);
		$r->{status} == 200 or die "GET $ARGV[0]: $r->{status} $r->{reason}\n";
		print $r->{content};
	' "$1"
}

test_wait_for() { # SECONDS CMD...
	local tries=$(($1 * 10))
	shift
	while ((tries-- > 0)); do
		"$@" && return 0
		sleep 0.1
	done
	echo "test_wait_for: still failing after the time limit: $*" >&2
	return 1
}

test_kill_pid() {
	local pid i
	for pid; do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; continue; }
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < 50; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "test_kill_pid: $pid ignored SIGTERM for 5 s, sending SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
	done
	return 0
}

test_atexit() { test_atexit_+=("$1"); }

# test_holds NAME...: a lock per NAME ($TMPDIR/fabscope-test-holds/NAME), held until the script
# exits (the fd is inherited by what the script starts, so a server it leaves behind keeps
# holding it: it still holds the thing).  Waits for another run's file at most 30 minutes.
# test_cpus N: the file keeps N CPUs busy (tests/run-tests counts it as N files); nothing here
test_cpus() { :; }

test_holds() {
	local n fd dir=${TMPDIR:-/tmp}/fabscope-test-holds
	[[ -d $dir ]] || { mkdir -p "$dir" && chmod 1777 "$dir"; } 2>/dev/null
	for n; do
		[[ $n =~ ^[a-z][a-z0-9-]*$ ]] || test_bug_ "test_holds '$n': names are lowercase letters, digits and -"
		[[ -e $dir/$n ]] || : 2>/dev/null >>"$dir/$n"
		exec {fd}<"$dir/$n" || test_bug_ "test_holds: cannot open the lock $dir/$n"
		flock -n "$fd" && continue
		test_diag_ "waiting for '$n': another test run holds it ($dir/$n)"
		flock -w 1800 "$fd" || test_bug_ "test_holds: '$n' still held by another run after 30 minutes"
	done
}

test_run_atexit_() { # in this shell (a subshell could not reap the processes it kills)
	local i log=$TRASH_DIRECTORY/.testlib/atexit.out
	[[ -d $TRASH_DIRECTORY/.testlib ]] || log=/dev/null
	for ((i = ${#test_atexit_[@]} - 1; i >= 0; i--)); do
		cd "$TRASH_DIRECTORY" 2>/dev/null || true
		if ((test_verbose_)); then
			{ eval "${test_atexit_[i]}"; } </dev/null >&7 2>&7 6>&- 7>&-
		else
			{ eval "${test_atexit_[i]}"; } </dev/null >>"$log" 2>&1 6>&- 7>&-
		fi || test_diag_ "atexit command failed: ${test_atexit_[i]}"
	done
	test_atexit_=()
}

# ---- the end
test_remove_trash_() {
	cd "$TEST_OUTPUT_DIRECTORY" || return
	case $TRASH_DIRECTORY in */trash.?*) rm -rf "$TRASH_DIRECTORY" ;; esac
}

test_done() {
	test_done_called_=1
	test_run_atexit_
	if ((test_failed_)); then
		test_tap_ "# failed $test_failed_ among $test_count test(s)"
		test_tap_ "1..$test_count"
		test_diag_ "trash directory kept: $TRASH_DIRECTORY"
		exit 1
	fi
	test_tap_ "# passed all $test_count test(s)"
	test_tap_ "1..$test_count"
	((test_debug_)) || test_remove_trash_
	exit 0
}

skip_all() {
	if ((test_count > 0)); then
		test_diag_ "skipping the remaining tests: $1"
		test_done
	fi
	test_done_called_=1
	test_run_atexit_
	test_tap_ "1..0 # SKIP $1"
	((test_debug_)) || test_remove_trash_
	exit 0
}

# After `exit` inside a body, bash has not undone the body's redirections (fd 6 and 7 are
# closed), but it keeps close-on-exec copies of the originals at fd 10 and up: find them.
test_reopen_fds_() {
	local f fd link
	for f in "/proc/$$/fd/"*; do
		fd=${f##*/}
		((fd >= 10)) || continue
		link=$(readlink "$f" 2>/dev/null) || continue
		if [[ $link == "$test_tap_link_" ]] && ! { : >&6; } 2>/dev/null; then
			eval "exec 6>&$fd"
		fi
		if [[ $link == "$test_diag_link_" ]] && ! { : >&7; } 2>/dev/null; then
			eval "exec 7>&$fd"
		fi
	done
	{ : >&6; } 2>/dev/null || exec 6>/dev/null
	{ : >&7; } 2>/dev/null || exec 7>/dev/null
}

test_exit_() {
	local rc=$?
	# A child forked for a background job runs our traps if a signal hits it before it execs
	# (test_kill_pid right after `cmd &`): only the test script itself reports and cleans up.
	[[ $BASHPID == "$test_pid_" ]] || return
	((test_done_called_)) && return
	test_done_called_=1
	test_reopen_fds_
	if [[ -n $test_in_body_ ]]; then
		test_failed_=$((test_failed_ + 1))
		test_tap_ "not ok $test_count - $test_title_"
		test_diag_ "the test script exited (code $rc) inside this body (exit or a signal)"
		[[ -s $test_in_body_ ]] && sed 's/^/	/' "$test_in_body_" | test_diag_
	else
		test_count=$((test_count + 1)) test_failed_=$((test_failed_ + 1))
		test_tap_ "not ok $test_count - test script exited (code $rc) without reaching test_done"
	fi
	test_run_atexit_
	test_tap_ "1..$test_count"
	test_diag_ "trash directory kept: $TRASH_DIRECTORY"
	exit $((rc ? rc : 1))
}
trap test_exit_ EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
