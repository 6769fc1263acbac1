#!/usr/bin/env bash
test_description='fabscope report at its edges, on crafted results directories: a path that does
not exist, a file given as a run or as -o, a run given twice or as its own baseline, each one
line and exit 2; a baseline measured with other message sizes is "not comparable" rather than a
REGRESSION (text, Markdown, HTML, summary.json), and a baseline with nothing comparable is no
pass; a polarization set without a verdict is shown with its reason and left out of "Worse"; a
sweep'"'"'s verdict on its sets together is its probe'"'"'s; a 200-byte phase name is one group, named
whole; the suspects analysis and the report group the same records alike'
# asan: always: feeds untrusted bytes to C code: crafted results directories at their edges
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"
. "$TEST_DIRECTORY/lib-topo.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_require_in_ci FABSCOPE JQ
P=FABSCOPE,JQ

# resize DIR BYTES: DIR's bw records measured at another message size
resize() {
	sed -i "s/\"msg_size_bytes\":65536/\"msg_size_bytes\":$2/" "$1/results.jsonl"
}

test_expect_success $P 'setup: a 64K run and a 1K run of the same plan' '
	mkfabric r64 "{\"lb\":\"ecmp\"}" h3 40 90 &&
	mkfabric r1k "{\"lb\":\"ecmp\"}" h3 4 9 &&
	resize r1k 1024 &&
	test $(grep -c "\"msg_size_bytes\":1024" r1k/results.jsonl) = 12
'

test_expect_success $P 'a path that does not exist: it says so, exit 2' '
	fs_expect 2 report nothere &&
	ptp_one_error err "'"'"'nothere'"'"' does not exist: give a results directory" &&
	test_must_be_empty out &&
	fs_expect 2 report r64 --baseline nothere/either -o x &&
	ptp_one_error err "'"'"'nothere/either'"'"' does not exist" &&
	! test -e x
'

test_expect_success $P 'a file given as a run: not a directory, exit 2' '
	echo "not a run" >afile &&
	fs_expect 2 report afile &&
	ptp_one_error err "'"'"'afile'"'"' is not a directory: give a results directory"
'

test_expect_success $P '-o an existing file: one line, exit 2, the file untouched' '
	echo "keep me" >afile &&
	# with plots asked for: they are not tried either
	fs_expect 2 report r64 -o afile &&
	ptp_one_error err "-o '"'"'afile'"'"' is a file, not a directory: give a directory" &&
	test_must_be_empty out &&
	test "$(cat afile)" = "keep me" &&
	! test -e afile.tmp
'

test_expect_success $P 'a run given twice is refused, however it is spelled: exit 2, nothing written' '
	fs_expect 2 report r64 r64 -o twice &&
	ptp_one_error err "'"'"'r64'"'"' and '"'"'r64'"'"' are the same results directory" "give each run once" &&
	ln -s r64 alias &&
	fs_expect 2 report r1k ./r64/ alias -o twice &&
	ptp_one_error err "'"'"'./r64/'"'"' and '"'"'alias'"'"' are the same results directory" &&
	! test -e twice &&
	# two runs that are not the same are compared as before
	fs_expect 5 report r64 r1k --no-plots -o pair &&
	test -s pair/report.md
'

test_expect_success $P 'a run as its own baseline is refused: exit 2' '
	fs_expect 2 report r64 --baseline ./r64 -o self &&
	ptp_one_error err "--baseline '"'"'./r64'"'"' is '"'"'r64'"'"' itself" "give an earlier run" &&
	! test -e self
'

test_expect_success $P 'a 1K run against a 64K baseline: "not comparable", not a REGRESSION (text)' '
	fs_expect 5 report r1k --baseline r64 --no-plots -o cmp &&
	test_must_be_empty err &&
	test_grep "^baseline r64: no regression (0 of 3 figures regressed; 2 not comparable: measured with other message sizes or test parameters, see the report)$" out &&
	test_grep ! "REGRESS" out
'

test_expect_success $P '... in Markdown and HTML: each bw figure names both sizes' '
	test_grep "^## Against the baseline: no regression$" cmp/report.md &&
	test_grep "0 of 3 figures regressed; 2 not comparable (measured with other message sizes" cmp/report.md &&
	test_grep "^| pw bw rail 0 median | 90 Gb/s | 9 Gb/s | \*\*not comparable\*\* | not comparable: measured with 1K messages tcp, 1 flow, c2s; the baseline with 64K messages tcp, 1 flow, c2s |$" cmp/report.md &&
	test_grep "^| pw bw rail 1 median | .* | \*\*not comparable\*\* |" cmp/report.md &&
	# latency was measured alike: judged
	test_grep "^| lat lat rail 0 median | 2 us | 2 us (+0.0%) | \*\*ok\*\* |" cmp/report.md &&
	test_grep ! "REGRESSION" cmp/report.md &&
	test $(grep -c "<td class=\"warn\">not comparable</td>" cmp/report.html) = 2 &&
	test_grep ! "REGRESSION</td>" cmp/report.html
'

test_expect_success $P '... in summary.json: comparable false, no pass either way, the counts' '
	jq -e ".baseline | .verdict == \"no regression\" and .pass and .regressed == 0 and .not_comparable == 2 and
	       ([.medians[] | select(.comparable == false)] | length) == 2 and
	       all(.medians[] | select(.comparable == false); .pass == null and .result == \"not comparable\" and
		   (.endpoints | contains(\"1K messages\") and contains(\"64K messages\"))) and
	       ([.medians[] | select(.comparable == null)] | length) == 1" cmp/summary.json >/dev/null
'

test_expect_success $P 'a regression where sizes match is still one, beside the not comparable' '
	mkfabric slow "{\"lb\":\"ecmp\"}" h3 4 9 &&
	resize slow 1024 &&
	sed -i "s/\"p50\":2.0,/\"p50\":5.0,/" slow/results.jsonl &&
	fs_expect 1 report slow --baseline r64 --no-plots -o cmp2 &&
	test_grep "^baseline r64: REGRESSED (1 of 3 figures regressed; 2 not comparable" out &&
	test_grep "^| lat lat rail 0 median | 2 us | .* | \*\*REGRESSION\*\* |" cmp2/report.md &&
	test $(grep -c "\*\*not comparable\*\*" cmp2/report.md) = 2
'

test_expect_success $P 'nothing comparable at all: no verdict, and no pass (exit 1)' '
	mkrun b1k "{}" && bwrec b1k pw 0 h1 h2 5 && resize b1k 1024 &&
	mkrun b64 "{}" && bwrec b64 pw 0 h1 h2 80 &&
	fs_expect 1 report b1k --baseline b64 --no-plots -o cmp3 &&
	test_grep "^baseline b64: not comparable (0 of 1 figures regressed; 1 not comparable" out &&
	test_grep "^## Against the baseline: not comparable$" cmp3/report.md &&
	test_grep ! "REGRESSION" cmp3/report.md &&
	jq -e ".baseline | .verdict == \"not comparable\" and (.pass | not) and .regressed == 0" cmp3/summary.json >/dev/null
'

# polar DIR VERDICT USED P EXTRA-JSON: a polarization set of h1 -> h3 in DIR
polar() {
	jq -cn --arg v "$2" --argjson used "$3" --argjson p "$4" --argjson x "$5" '
	{schema: "fabscope.record/1", test: "polarization", scope: "set", status: "ok", phase: "spread",
	 src: {node: "h1", rail: 0, plane: 0}, dst: {node: "h3", rail: 0, plane: 0}, flows: 8,
	 params: {set: 0, paths: $p, link_rate_gbps: 0.1}, units: {gbps: "Gb/s (10^9 bit/s)"},
	 metrics: {paths_used: $used, expected_paths: 1.99, expected_paths_sd: 0.09, p_value: 0.0078},
	 verdict: $v, verdict_text: ($v + ": 8 flows used \($used) of \($p) paths")} + $x' >>"$1/results.jsonl"
}

test_expect_success $P 'a polarization set without a verdict: its reason, no p-value, not the "worse" run' '
	mkrun pa "{\"lb\":\"same\"}" &&
	polar pa polarized 1.0 2 "{}" &&
	mkrun pb "{\"lb\":\"wide\"}" &&
	# before: paths_used 1.0 made it the worse run, a verdict its flows could not support
	polar pb inconclusive 0.5 2 "{\"verdict_reason\": \"flows_below_one_path\", \"likely_cause\": \"link_rate_above_flows\",
		\"verdict_text\": \"no verdict: 8 flows together ran at 20% of --link-rate 100\"}" &&
	jq -c ".metrics.p_value = null" pb/results.jsonl >pb/r && mv pb/r pb/results.jsonl &&
	# a probe the probe called polarized fails the run; one without a verdict leaves its phase not judged
	fs_expect 1 report pa pb --no-plots -o pol &&
	test_grep -x "acceptance: FAIL (1 of 5 checks failed; not judged: spread has no criterion)" out &&
	test_grep -F "| no polarized probe | none | 1 of 1 polarized (1 without a verdict) | 1 of 1 | **FAIL** | lb=same: spread h1 -> h3 rail 0 (1 of 2 paths) |" pol/report.md &&
	test_grep -F -- "- lb=wide: **spread** has no criterion: polarization: a probe gave no verdict (inconclusive, or no number of paths): see Hash polarization" pol/report.md &&
	test_grep "^| lb=wide | spread | h1 -> h3 | rail 0 | 1 | 8 | 0.5 of 2 | 2.0 +- 0.1 | - | \*\*inconclusive\*\* | - |$" pol/report.md &&
	test_grep "^- lb=wide: h1 -> h3 rail 0: no verdict: 8 flows together ran at 20% of --link-rate 100$" pol/report.md &&
	test_grep "^- lb=same: h1 -> h3 rail 0: polarized: 8 flows used 1 of 2 paths. Collisions: " pol/report.md &&
	# [polarization] inconclusive = fail: the probe without a verdict fails instead, and its phase is judged
	printf "[polarization]\ninconclusive = fail\n" >inc.ini &&
	fs_expect 1 report pa pb --no-plots -o pol-inc --thresholds inc.ini &&
	test_grep -x "acceptance: FAIL (2 of 6 checks failed)" out &&
	test_grep -F "| every polarization probe judged | none | 1 of 2 without a verdict | 1 of 2 | **FAIL** | lb=wide: spread h1 -> h3 rail 0: link\\_rate\\_above\\_flows |" pol-inc/report.md &&
	fs_expect 1 report pb --no-plots -o pol-inc1 --thresholds inc.ini &&
	test_grep -x "acceptance: FAIL (1 of 6 checks failed)" out &&
	# polarized = off would be a gate that is not there: refused
	printf "[polarization]\npolarized = off\n" >off.ini &&
	fs_expect 2 report pa --no-plots -o pol-off --thresholds off.ini &&
	test_grep "off.ini:2: polarized = .off.: a polarized probe always fails the run.s integrity" err &&
	# one run with a verdict: no "worse" to name
	test_grep ! "Worse" pol/report.md &&
	test_grep "<td class=\"num\">-</td><td class=\"fail\">inconclusive</td>" pol/report.html &&
	jq -e "[.runs[] | .polarization[0] | {verdict, verdict_reason, likely_cause}] ==
	       [{verdict: \"polarized\", verdict_reason: null, likely_cause: null},
		{verdict: \"inconclusive\", verdict_reason: \"flows_below_one_path\", likely_cause: \"link_rate_above_flows\"}]" \
		pol/summary.json >/dev/null &&
	jq -e "[.runs[] | .polarization[0] | has(\"verdict_reason\")] == [false, true]" pol/summary.json >/dev/null
'

test_expect_success $P 'a sweep of entropy sets: its verdict on the sets together is the probe'"'"'s, listed and judged' '
	mkrun sw "{\"lb\":\"sweep\"}" &&
	job="{\"job\": \"spread/polarization/r1/rail0/h1>h3\"" &&
	polar sw "not polarized" 1.9 2 "$job, \"params\": {\"set\": 0, \"paths\": 2}}" &&
	polar sw "not polarized" 1.8 2 "$job, \"params\": {\"set\": 1, \"paths\": 2}}" &&
	polar sw polarized 1.85 2 "$job, \"scope\": \"sweep\", \"evidence\": \"rates\", \"params\": {\"set\": -1, \"paths\": 2},
		\"verdict_text\": \"polarized: 2 sets used 1.9 paths on average (by their rates), where uniform hashing uses 2.0 (p = 0.004 over the sets)\"}" &&
	printf "[polarization]\npolarized = fail\n" >sw.ini &&
	fs_expect 1 report sw --no-plots -o swr --thresholds sw.ini &&
	test_grep "^- h1 -> h3 rail 0: the sets together: polarized: 2 sets used 1.9 paths on average" swr/report.md &&
	test_grep ! "^- h1 -> h3 rail 0: not polarized" swr/report.md &&
	# one probe: the sweep decides, not its sets
	test_grep "^| no polarized probe | none | 1 of 1 polarized | 1 of 1 | \*\*FAIL\*\* | spread h1 -> h3 rail 0 (rates) |$" swr/report.md &&
	# the same without the file: the run'"'"'s integrity judges it (polarized = fail says it again)
	fs_expect 1 report sw --no-plots -o swr0 &&
	test_grep "^| no polarized probe | none | 1 of 1 polarized | 1 of 1 | \*\*FAIL\*\* | spread h1 -> h3 rail 0 (rates) |$" swr0/report.md
'

test_expect_success $P '--topology: each suspect names the ports and links of the design it points at' '
	mkfabric design "{\"lb\":\"ecmp\"}" h4 0.02 0.19 &&
	latrec design lat 1 h1 h3 2.0 3.0 && latrec design lat 1 h2 h4 2.1 3.0 &&
	latrec design lat 1 h1 h4 2.0 3.1 && latrec design lat 1 h2 h3 9.0 9.5 &&
	topo_design >fabric.topo &&
	# (pairs at 0.19 Gb/s on a design of 200G ports: the model fails them)
	test_expect_exit 1 "$FABSCOPE" report design -o rep-design --topology fabric.topo --no-plots >out &&
	jq -r ".runs[0].suspects[] | [.kind, .node, (.rail | tostring), .design] | @tsv" rep-design/summary.json >actual &&
	cat actual &&
	test_grep -x "node	h4	1	h4:eth1 -> l2.1:p2" actual &&
	test_grep -x "pair	h2	1	h2:eth1 -> l1.1:p2, h3:eth1 -> l2.1:p1; across l1.1 -> s1|s2 -> l2.1" actual &&
	test_grep "h4 rail 1: slow with 3 of 3 peers.*; design: h4:eth1 -> l2.1:p2 (not re-tested)$" rep-design/report.md &&
	test_grep "h4 rail 1: slow with 3 of 3 peers.*; design: h4:eth1 -&gt; l2.1:p2" rep-design/report.html &&
	test_expect_exit 5 "$FABSCOPE" report design -o rep-nodesign --no-plots >out &&
	test "$(jq "[.runs[0].suspects[] | select(.design)] | length" rep-nodesign/summary.json)" = 0 &&
	sed "/^link h4:eth1/d" fabric.topo >partial.topo &&
	test_expect_exit 1 "$FABSCOPE" report design -o rep-partial --topology partial.topo --no-plots >out &&
	jq -r ".runs[0].suspects[] | select(.kind == \"node\") | .design" rep-partial/summary.json >actual &&
	echo "h4 rail 1: not in partial.topo" >expect && test_cmp expect actual &&
	printf "switch l1 tier=core\n" >bad.topo &&
	test_expect_exit 2 "$FABSCOPE" report design -o rep-bad --topology bad.topo 2>err &&
	test_grep "bad.topo:1" err
'

# a phase name of 200 bytes (plans allow 253): two of them that differ in the last byte only
long_phase() { printf "%0199d%s" 0 "$1" | tr 0 p; }

test_expect_success $P 'a 200-byte phase name: one group a phase and lane, the whole name kept' '
	mkrun long "{}" &&
	for ph in "$(long_phase 1)" "$(long_phase 2)"; do
		bwrec long "$ph" 0 h1 h2 10 && bwrec long "$ph" 0 h3 h4 10 && bwrec long "$ph" 0 h1 h3 10 || return 1
	done &&
	test $(long_phase 1 | wc -c) = 200 &&
	test_expect_exit 5 "$FABSCOPE" report long -o rep-long --no-plots >out &&
	jq -r ".runs[0].groups[] | \"\(.phase) \(.test) \(.rail) \(.pairs)\"" rep-long/summary.json >actual &&
	printf "%s bw 0 3\n" "$(long_phase 1)" "$(long_phase 2)" >expect &&
	test_cmp expect actual &&
	test $(grep -c "$(long_phase 2)" rep-long/report.md) -ge 1
'

# rec DIR JQ-EDIT: a bw record of phase "edge" (h1 > h2 on rail 0, 64K, 10 Gb/s) edited by JQ-EDIT
rec() {
	jq -nc "{schema: \"fabscope.record/1\", test: \"bw\", transport: \"tcp\", msg_size_bytes: 65536,
		scope: \"aggregate\", dir: \"c2s\", status: \"ok\", phase: \"edge\", job: \"j\",
		src: {node: \"h1\", rail: 0, plane: 0}, dst: {node: \"h2\", rail: 0, plane: 0},
		metrics: {bw_gbps: 10}} | $2" >>"$1/results.jsonl"
}

test_expect_success $P,TEST_TOOL 'the suspects analysis and the report take the same records into the same groups' '
	mkrun edges "{}" &&
	rec edges "." && rec edges ".src.node = \"h3\" | .dst.node = \"h4\"" &&
	rec edges ".dst.node = \"h3\" | .metrics.bw_gbps = 12" &&
	# no scope on a test of one flow: its one record is its aggregate (records/result.h)
	rec edges "del(.scope)" &&
	# left out by both: no scope on a test of two flows, no status, both directions, a lat test.s
	# load, a re-test, a rail past the bounds, a rail that is no integer, no peer, no figure
	rec edges "del(.scope) | .flows = 2" && rec edges "del(.status)" && rec edges ".dir = \"both\"" &&
	rec edges ".kind = \"load\"" && rec edges ".retest_of = \"j\"" && rec edges ".src.rail = 70" &&
	rec edges ".src.rail = 1.5" && rec edges "del(.dst.node)" && rec edges "del(.metrics)" &&
	# a phase that swept sizes: the analysis judges each size apart, the report shows its 1M
	# pairs (the largest), not its 1K ones, before or after
	rec edges ".phase = \"sweep\" | .msg_size_bytes = 1024 | .metrics.bw_gbps = 1" &&
	rec edges ".phase = \"sweep\" | .msg_size_bytes = 1048576 | .metrics.bw_gbps = 20" &&
	rec edges ".phase = \"sweep\" | .msg_size_bytes = 1048576 | .src.node = \"h3\" | .metrics.bw_gbps = 22" &&
	rec edges ".phase = \"sweep\" | .msg_size_bytes = 1024 | .src.node = \"h4\" | .metrics.bw_gbps = 1" &&
	# no phase: a standalone result; rail 1 plane 1; a lat result
	rec edges "del(.phase)" && rec edges ".src.rail = 1 | .src.plane = 1" &&
	rec edges ".test = \"lat\" | del(.metrics) | .metrics.lat_us = {p50: 3, p99: 5}" &&
	"$TEST_TOOL" analyze --groups edges | sort >store &&
	cat store &&
	printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "(standalone)" bw 0 0 65536 1 10 10 10 \
		edge bw 0 0 65536 4 10 10 12 edge bw 1 1 65536 1 10 10 10 edge lat 0 0 65536 1 3 3 3 \
		sweep bw 0 0 1024 2 1 1 1 sweep bw 0 0 1048576 2 20 21 22 | sort >expect &&
	test_cmp expect store &&
	# the report: each lane of the store at its largest size, the same pairs, min, median, max
	awk -F "\t" -v OFS="\t" "{ k = \$1 OFS \$2 OFS \$3 OFS \$4
		if (!(k in size) || \$5 + 0 > size[k]) { size[k] = \$5 + 0; row[k] = k OFS \$6 OFS \$7 OFS \$8 OFS \$9 } }
		END { for (k in row) print row[k] }" store | sort >largest &&
	test_expect_exit 5 "$FABSCOPE" report edges -o rep-edges --no-plots >out &&
	jq -r ".runs[0].groups[] | [.phase, .test, .rail, .plane, .pairs, .min, .median, .max] | @tsv" \
		rep-edges/summary.json | sort >report &&
	test_cmp largest report
'

test_done
