#!/usr/bin/env bash
test_description='the quoting that keeps data from becoming code, fuzzed against the real
interpreter: random strings (quotes, backquotes, macros, newlines and other control bytes, UTF-8,
pieces of gnuplot that would run a command) quoted by plots/plot.c for gnuplot come back from real
gnuplot byte for byte, cut literals come back as whole prefixes, and nothing runs; random strings
of Markdown and HTML (links, images, tags, lists, headings, code, tables, entities) escaped by
report/doc.c come back from cmark-gfm as text in six places of a document'
# asan: always: feeds untrusted bytes to C code: random strings through the gnuplot quoting and the Markdown and HTML escaping
. "$(dirname "$0")/test-lib.sh"

test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_lazy_prereq CMARK 'command -v cmark-gfm'
test_require_in_ci TEST_TOOL GNUPLOT CMARK

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

test_expect_success TEST_TOOL,CMARK 'markdown: 6000 random strings in a paragraph, heading, item, cell, bold, alt: text' '
	"$TEST_TOOL" quote-fuzz markdown 6000 41 >out &&
	test_grep "6000 strings, each in 6 places of a Markdown document, came back from cmark-gfm as text" out &&
	"$TEST_TOOL" quote-fuzz markdown 3000 20260 >out &&
	test_grep "3000 strings" out
'

test_done
