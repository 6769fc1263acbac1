# bench/lib.sh - the start every bench script shares; sourced, not run:
#
#	prog=NAME
#	synopsis="bench/NAME.sh [-x N] ..."
#	. "$(dirname "$0")/lib.sh"
#
# It sets srcdir (the top of the tree), FABSCOPE and TEST_TOOL (the environment's, else the
# tree's), and defines:
#	usage WORDS        "NAME: WORDS (usage: SYNOPSIS)" on stderr, exit 2
#	envfail WORDS      "NAME: WORDS", exit 3: something the bench needs is missing
#	fail WORDS         "NAME: WORDS", exit 4: a measurement failed
#	bench_help         the script's head comment (line 2 up to `set -euo pipefail`), exit 0
#	bench_need WHAT... each of fabscope, test-tool, time (GNU time), jq there, else envfail
#	                   naming it and how to get it
#	bench_work KEEP    work: a new directory under $TMPDIR (default /tmp), removed at exit
#	                   unless KEEP is 1 (then its path is printed); out: $BENCH_OUT, else
#	                   bench-out/ of the tree, made
# shellcheck shell=bash

usage()   { echo "$prog: $* (usage: $synopsis)" >&2; exit 2; }
envfail() { echo "$prog: $*" >&2; exit 3; }
fail()    { echo "$prog: $*" >&2; exit 4; }

srcdir=$(cd "$(dirname "$0")/.." && pwd -P)
FABSCOPE=${FABSCOPE:-$srcdir/fabscope}
TEST_TOOL=${TEST_TOOL:-$srcdir/tests/helper/test-tool}

bench_help() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
	exit 0
}

bench_need() {
	local w
	for w; do
		case $w in
		fabscope) [[ -x $FABSCOPE ]] || envfail "no fabscope binary at $FABSCOPE: run make first" ;;
		test-tool) [[ -x $TEST_TOOL ]] || envfail "no test-tool at $TEST_TOOL: run make first" ;;
		time) [[ -x /usr/bin/time ]] || envfail "GNU time (/usr/bin/time) is missing: apt-get install time" ;;
		jq) command -v jq >/dev/null || envfail "jq is missing: ci/install-deps test" ;;
		*) echo "bench/lib.sh: bench_need: unknown '$w'" >&2; exit 2 ;;
		esac
	done
}

bench_work() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX")
	if [[ ${1:-0} == 1 ]]; then
		echo "# $prog: work directory $work"
	else
		# shellcheck disable=SC2064
		trap "rm -rf '$work'" EXIT
	fi
	out=${BENCH_OUT:-$srcdir/bench-out}
	mkdir -p "$out"
}
