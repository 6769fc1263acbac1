#!/usr/bin/env bash
test_description='fabscope report on crafted results directories: golden Markdown and JSON for a
comparison of two labelled runs, thresholds that pass and fail (naming the endpoints), a baseline
regression, plots through gnuplot (and the report without them), a push to a dead endpoint that
keeps the local report, and bad input'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_require_in_ci FABSCOPE JQ
P=FABSCOPE,JQ
test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_require_in_ci GNUPLOT

test_expect_success $P 'two runs labelled lb=ecmp and lb=spray: the golden Markdown and JSON' '
	mkfabric ecmp "{\"lb\":\"ecmp\",\"fabric\":\"lab\"}" h4 0.02 0.19 &&
	mkfabric spray "{\"lb\":\"spray\",\"fabric\":\"lab\"}" none 0.02 0.21 &&
	errrec spray pw h1 h2 "agent h2 missing: silent" &&
	fs_expect 0 report ecmp spray -o cmp --no-plots &&
	test_cmp "$TEST_DIRECTORY/data/report/compare.md" cmp/report.md &&
	jq "del(.version)" cmp/summary.json >summary &&
	test_cmp "$TEST_DIRECTORY/data/report/compare.json" summary &&
	grep -q "^report: cmp/report.html$" out &&
	grep -q "<td>lb=spray wins\|<li>pw bw rail 1: lb=spray wins" cmp/report.html
'

test_expect_success $P '--by names runs by one label; one run is named by its directory' '
	fs_expect 0 report ecmp spray --by fabric -o by --no-plots --format md &&
	grep -q "^| | fabric=lab | fabric=lab |$" by/report.md &&
	! test -e by/report.html && ! test -e by/summary.json &&
	fs_expect 0 report ecmp -o one --no-plots --format md &&
	grep -q "^| | ecmp |$" one/report.md &&
	! grep -q "^## Comparison" one/report.md
'

test_expect_success $P 'thresholds: PASS exits 0; FAIL exits 1 and names every failing pair' '
	cat >pass.ini <<-\EOF &&
	# a fabric of 0.2 Gb/s ports
	[bw]
	line_rate_gbps = 0.2
	min_fraction = 0.9
	[lat]
	p50_us_max = 5
	EOF
	fs_expect 0 report spray -o t1 --no-plots --thresholds pass.ini &&
	grep -q "^acceptance: PASS (0 of 2 checks failed)$" out &&
	grep -q "^## Acceptance: PASS" t1/report.md &&
	jq -e ".acceptance.pass == true" t1/summary.json >/dev/null &&
	cat >fail.ini <<-\EOF &&
	[bw]
	line_rate_gbps = 0.2
	min_fraction = 0.9
	[lat]
	p99_us_max = 5
	[run]
	max_failed = 0
	max_suspects = 0
	EOF
	fs_expect 1 report ecmp -o t2 --no-plots --thresholds fail.ini &&
	grep -q "^acceptance: FAIL (3 of 4 checks failed)$" out &&
	grep -qF "| bw >= 0.9 x line rate, every pair | 0.18 Gb/s | 0.02 Gb/s | 3 of 12 | **FAIL** | h1-h4 rail 1 (0.02), h2-h4 rail 1 (0.02), h3-h4 rail 1 (0.02) |" t2/report.md &&
	grep -qF "| latency p99 <= 5 us, every pair | 5 us | 9.5 us | 1 of 6 | **FAIL** | h1-h4 rail 0 (9.5) |" t2/report.md &&
	grep -qF "| suspects <= 0 | 0 | 1 | 1 of 1 | **FAIL** | ecmp (1) |" t2/report.md &&
	jq -e ".acceptance.pass == false and ([.acceptance.checks[] | select(.pass)] | length) == 1" t2/summary.json >/dev/null &&
	grep -q "class=\"verdict fail\">FAIL" t2/report.html
'

test_expect_success $P 'a per-rail line rate: rail 1 judged against its own speed' '
	printf "[bw]\nline_rate_gbps = 0.2\nrail1 = 0.02\nmin_fraction = 0.9\n" >rail.ini &&
	fs_expect 0 report ecmp -o t3 --no-plots --thresholds rail.ini
'

test_expect_success $P 'baseline: a median worse than the tolerance is a regression (exit 1)' '
	fs_expect 1 report ecmp --baseline spray -o b1 --no-plots &&
	grep -q "^baseline spray: REGRESSED (1 of 3 medians regressed)$" out &&
	grep -qF "| pw bw rail 1 median | 0.21 Gb/s | 0.105 Gb/s (-50.0%) | **REGRESSION** | down rail 1 by 50.0% (tolerance 10%) |" b1/report.md &&
	fs_expect 0 report spray --baseline ecmp -o b2 --no-plots &&
	grep -q "^baseline ecmp: no regression (0 of 3 medians regressed)$" out &&
	fs_expect 0 report ecmp --baseline spray --tolerance 60 -o b3 --no-plots &&
	jq -e ".baseline.pass == true and .baseline.tolerance == 0.6" b3/summary.json >/dev/null
'

test_expect_success $P,GNUPLOT 'plots: gnuplot draws SVGs, the HTML holds them inline, the Markdown links them' '
	fs_expect 0 report ecmp -o p1 &&
	ls p1/plots/*.svg >svgs &&
	test $(wc -l <svgs) -ge 5 &&
	grep -q "heat-pw-bw-r1" svgs && grep -q "cdf-lat-p99" svgs && grep -q "lanes-pw-bw" svgs &&
	test $(grep -c "<svg" p1/report.html) = $(wc -l <svgs) &&
	! grep -q "<?xml" p1/report.html &&
	grep -q "^!\[pw: bw per lane (median, min..max)\](plots/01-lanes-pw-bw.svg)$" p1/report.md &&
	fs_expect 0 report ecmp spray -o p2 &&
	grep -q "pw: bw per lane, by run" p2/report.md
'

test_expect_success $P 'without the gnuplot templates the report is written and says why' '
	FABSCOPE_PLOTS=/nonexistent fs_expect 0 report ecmp -o np &&
	grep -q "^no plots: the gnuplot templates" np/report.md &&
	grep -q "no plots: the gnuplot templates" np/report.html &&
	grep -q "no plots" err
'

test_expect_success $P 'a push to a dead endpoint: the report is written, exit 4, one line' '
	port=$(ptp_port 0) &&
	fs_expect 4 report ecmp -o dead --no-plots --push http://127.0.0.1:$port &&
	test -s dead/report.md && test -s dead/summary.json &&
	grep -q "127.0.0.1:$port" err &&
	fs_expect 1 report ecmp -o dead2 --no-plots --thresholds fail.ini --push http://127.0.0.1:$port &&
	test -s dead2/report.md
'

test_expect_success $P 'bad input: one line and exit 2 (or 3 when a file cannot be written)' '
	fs_expect 2 report &&
	ptp_first_error err "results directory" &&
	fs_expect 2 report nosuch &&
	ptp_one_error err "nosuch" "not a results directory" &&
	mkdir empty &&
	fs_expect 2 report empty &&
	ptp_one_error err "empty" "results.jsonl" &&
	printf "[bw]\nmin_speed = 3\n" >bad.ini &&
	fs_expect 2 report ecmp --thresholds bad.ini -o x &&
	ptp_one_error err "bad.ini:2" "min_speed" &&
	printf "[bw]\nmin_fraction = 0.9\n" >noline.ini &&
	fs_expect 2 report ecmp --thresholds noline.ini -o x &&
	ptp_one_error err "line_rate_gbps" &&
	fs_expect 2 report ecmp --format pdf &&
	ptp_one_error err "pdf" &&
	fs_expect 2 report ecmp --tolerance lots &&
	ptp_one_error err "lots" &&
	fs_expect 2 report ecmp --push ftp://x -o x --no-plots &&
	ptp_one_error err "ftp://x" &&
	touch afile &&
	fs_expect 3 report ecmp -o afile/sub &&
	ptp_one_error err "afile/sub"
'

test_done
