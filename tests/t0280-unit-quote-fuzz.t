#!/usr/bin/env bash
test_description='the quoting that keeps data from becoming code, fuzzed against the real
interpreter: random strings (quotes, backquotes, macros, newlines and other control bytes, UTF-8,
pieces of gnuplot that would run a command) quoted by plots/plot.c for gnuplot come back from real
gnuplot byte for byte, cut literals come back as whole prefixes, and nothing runs'
. "$(dirname "$0")/test-lib.sh"

test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_require_in_ci TEST_TOOL GNUPLOT

test_must_be_empty_dir_() { test -z "$(ls -A "$1")" || { ls -A "$1" >&2; return 1; }; }

test_expect_success TEST_TOOL,GNUPLOT 'gnuplot: 6000 random strings come back as they went in, no command runs' '
	mkdir run &&
	"$TEST_TOOL" quote-fuzz gnuplot 6000 41 "$TRASH_DIRECTORY/run" >out &&
	test_grep "6000 strings (.* cut) through gnuplot, each came back as it went in; no command ran" out &&
	test_must_be_empty_dir_ run
'



test_expect_success TEST_TOOL,GNUPLOT 'gnuplot: another seed' '
	mkdir run2 &&
	"$TEST_TOOL" quote-fuzz gnuplot 3000 20260 "$TRASH_DIRECTORY/run2" >out &&
	test_grep "each came back as it went in" out &&
	test_must_be_empty_dir_ run2
'

test_done
