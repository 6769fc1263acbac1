#!/usr/bin/env bash
test_description='nothing from the data becomes markup of report.md or report.html (issue 41,
finding 8): a phase named x](y)<img src=x onerror=alert(1)>[ (in a heading, a table, a plot'\''s
alt text), a polarization record'\''s node names and verdict, run names, labels and reasons all
come back from a real Markdown renderer (cmark-gfm) as text: no tag but the report'\''s own, no
link, image or list of the data'\''s; the HTML escapes them the same; the one escaping function
of each output is fuzzed in t0280'
# asan: always: feeds untrusted bytes to C code: records whose names, verdicts and labels are markup
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_lazy_prereq CMARK 'command -v cmark-gfm'
test_require_in_ci FABSCOPE JQ GNUPLOT CMARK
P=FABSCOPE,JQ,CMARK

EVIL='x](y)<img src=x onerror=alert(1)>['

# tags TAGS-FILE HTML: the tags the HTML opens, one a line, attributes dropped but an img's src
tags() { grep -o "<[a-z][a-z0-9]*[^>]*>" "$1" | sed -E "s/^<img [^>]*src=\"([^\"]*)\".*/img \1/; s/^<([a-z0-9]+).*/\1/" | sort -u; }

test_expect_success $P 'a run whose phase, nodes, verdict and labels are markup' '
	mkrun evil "{\"lb\":\"**b** [l](http://e) | c\",\"x\":\"<script>alert(2)</script>\"}" &&
	for a in h1 h2 h3 h4; do
		for b in h1 h2 h3 h4; do
			[ "$a" = "$b" ] || bwrec evil "$EVIL" 0 $a $b 10 || return 1
		done
	done &&
	jq -cn --arg ph "$EVIL" --arg s "<img src=x onerror=alert(3)>" --arg d "- [z](javascript:alert(4))" \
		--arg v "polarized](y)<svg onload=alert(5)>" --arg t "# <b>bold</b> *x*" '\''
		{schema: "fabscope.record/1", test: "polarization", scope: "set", status: "ok", phase: $ph,
		 src: {node: $s, rail: 0, plane: 0}, dst: {node: $d, rail: 0, plane: 0}, flows: 8,
		 params: {set: 0, paths: 2, link_rate_gbps: 0.1}, units: {gbps: "Gb/s (10^9 bit/s)"},
		 metrics: {paths_used: 1, expected_paths: 1.99, expected_paths_sd: 0.09, p_value: 0.0078},
		 entropy: [{value: 1, gbps: 1, sharing: 8}], verdict: $v, verdict_text: $t}'\'' >>evil/results.jsonl &&
	errrec evil "p<b>w</b>" h1 h2 "refused: <script>x</script> \`code\` _u_"
'

test_expect_success $P,GNUPLOT 'report.md rendered by cmark-gfm: only the report'\''s own tags, the data as text' '
	# written, and FAIL (exit 1): its error record is a failed test
	fs_expect 1 report evil -o ev &&
	test_grep "img src=x onerror" ev/report.md &&
	cmark-gfm --unsafe -e table -e strikethrough ev/report.md >ev.html &&
	tags ev.html >tags &&
	grep -v "^img plots/[0-9][0-9]-[A-Za-z0-9._-]*\.svg$" tags >other &&
	printf "%s\n" h1 h2 h3 li p strong table tbody td th thead tr ul | sort >allowed &&
	comm -23 other allowed >foreign &&
	test_must_be_empty foreign &&
	test_grep "&lt;img src=x onerror=alert(1)&gt;" ev.html &&
	test_grep "&lt;img src=x onerror=alert(3)&gt;" ev.html &&
	test_grep "polarized\](y)&lt;svg onload=alert(5)&gt;\|polarized](y)&lt;svg onload=alert(5)&gt;" ev.html &&
	test_grep "alt=\"x\](y)&lt;img src=x onerror=alert(1)&gt;\[\|alt=\"x](y)&lt;img src=x onerror=alert(1)&gt;\[" ev.html
'

test_expect_success $P,GNUPLOT 'report.html: the same names escaped, no tag of theirs' '
	test_grep ! "<img src=x\|<svg onload\|<script>\|<b>bold" ev/report.html &&
	test_grep "&lt;img src=x onerror=alert(1)&gt;" ev/report.html &&
	test_grep "&lt;svg onload=alert(5)&gt;" ev/report.html
'

test_done
