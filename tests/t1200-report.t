#!/usr/bin/env bash
test_description='fabscope report on crafted results directories: golden Markdown and JSON for a
comparison of two labelled runs, the verdict first (PASS only when every measured phase was judged:
INCOMPLETE, exit 5, naming the phase without a criterion), the run.s integrity judged without
thresholds, thresholds that pass and fail (naming the endpoints), [phase NAME] limits, a baseline
regression, plots through gnuplot (and the report without them), a push to a dead endpoint that
keeps the local report, and bad input; the PFC probe'\''s section: golden Markdown and JSON of a run
with a storm against a calm one, [pfc] thresholds, its Prometheus lines, its timeline plot, and
records with nulls and parts missing; the collectives section, from records of real allreduce
and alltoall runs: golden Markdown and JSON of two labelled multi-rail runs, wrong data failing
(exit 1), [allreduce] and [alltoall] min_busbw_gbps, the busbw plot and the Prometheus lines'
# asan: always: feeds untrusted bytes to C code: crafted results directories (records, run.json)
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_require_in_ci FABSCOPE JQ
P=FABSCOPE,JQ
test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_require_in_ci GNUPLOT
test_lazy_prereq PERL 'perl -MIO::Socket::INET -e 1'
test_require_in_ci PERL

# collrun DIR LABELS-JSON PHASE RC ARGS...: add to results directory DIR (made by mkrun when
#	missing) what rank 0 of a real `fabscope ARGS --json` printed, one record a line, as a
#	plan's phase PHASE writes them ("-": no phase, a standalone run); RC its expected exit code
collrun() {
	local dir=$1 labels=$2 phase=$3 want=$4 rc
	shift 4
	{ test -d "$dir" || mkrun "$dir" "$labels"; } || return 1
	timeout 60 "$FABSCOPE" "$@" --json >"$dir.json" 2>"$dir.err"
	rc=$?
	if ((rc != want)); then
		echo "collrun: fabscope $*: exit $rc, expected $want" >&2
		cat "$dir.err" >&2
		return 1
	fi
	jq -c --arg phase "$phase" '.[] | if $phase == "-" then . else . + {phase: $phase} end' "$dir.json" \
		>>"$dir/results.jsonl"
}

# collfix DIR RAIL=FACTOR...: stable numbers for golden files in DIR's collective records, made as
#	the collectives make them: time_us = 10 + size / 1000 / FACTOR (the lane's; "all" for a
#	record without a rail; 1 when not given), min and max 10 % off, algbw = size / time, busbw =
#	algbw x 2(n-1)/n (allreduce) or (n-1)/n (alltoall); a multi-rail "sum" adds its rails' rates
#	up and takes the slowest rail's time.  Everything else stays as the run wrote it.
collfix() {
	local dir=$1 f
	shift
	f=$(printf '%s\n' "$@" | jq -Rn '[inputs | select(length > 0) | split("=") | {key: .[0], value: (.[1] | tonumber)}] | from_entries') &&
	jq -cs --argjson f "$f" '
	def r4: . * 10000 | round / 10000;
	def coll: .test == "allreduce" or .test == "alltoall";
	def lane: if .rail == null then "all" else .rail | tostring end;
	def rates: (if .test == "allreduce" then 2 * (.ranks - 1) / .ranks else (.ranks - 1) / .ranks end) as $k |
		.metrics.algbw_gbps = (.msg_size_bytes * 8 / .metrics.time_us / 1000 | r4) |
		.metrics.busbw_gbps = (.metrics.algbw_gbps * $k | r4);
	[.[] | if coll and .group != "sum" then
		(10 + .msg_size_bytes / 1000 / ($f[lane] // 1) | r4) as $t |
		.metrics += {time_us: $t, time_us_min: ($t * 0.9 | r4), time_us_max: ($t * 1.1 | r4)} | rates
	else . end] as $a |
	$a[] | if coll and .group == "sum" then . as $s |
		[$a[] | select(.test == $s.test and .phase == $s.phase and .msg_size_bytes == $s.msg_size_bytes and .scope == "rail")] as $r |
		.metrics += {time_us: ($r | map(.metrics.time_us) | max),
			     algbw_gbps: ($r | map(.metrics.algbw_gbps) | add | r4),
			     busbw_gbps: ($r | map(.metrics.busbw_gbps) | add | r4)}
	else . end' "$dir/results.jsonl" >"$dir/fixed" &&
	mv "$dir/fixed" "$dir/results.jsonl"
}

# golden_md FILE: a report.md as the golden files have it: this fabscope's version (in "What was
#	tested") as VERSION, so that a new version is no new report
golden_md() {
	sed "s/; report $("$FABSCOPE" version | awk "{ print \$2 }") |/; report VERSION |/g" "$1"
}

test_expect_success $P 'two runs labelled lb=ecmp and lb=spray: the golden Markdown and JSON' '
	mkfabric ecmp "{\"lb\":\"ecmp\",\"fabric\":\"lab\"}" h4 0.02 0.19 &&
	mkfabric spray "{\"lb\":\"spray\",\"fabric\":\"lab\"}" none 0.02 0.21 &&
	errrec spray pw h1 h2 "agent h2 missing: silent" &&
	# a failed test fails the run.s integrity, thresholds or not; no phase has a criterion
	fs_expect 1 report ecmp spray -o cmp --no-plots &&
	test_grep -x "acceptance: FAIL (1 of 4 checks failed; not judged: pw and lat have no criterion)" out &&
	golden_md cmp/report.md >md &&
	test_cmp "$TEST_DIRECTORY/data/report/compare.md" md &&
	jq "del(.version)" cmp/summary.json >summary &&
	test_cmp "$TEST_DIRECTORY/data/report/compare.json" summary &&
	grep -q "^report: cmp/report.html$" out &&
	grep -q "<td>lb=spray wins\|<li>pw bw rail 1: lb=spray wins" cmp/report.html
'

test_expect_success $P '--by names runs by one label; one run is named by its directory' '
	fs_expect 1 report ecmp spray --by fabric -o by --no-plots --format md &&
	grep -q "^| | fabric=lab | fabric=lab |$" by/report.md &&
	! test -e by/report.html && ! test -e by/summary.json &&
	fs_expect 5 report ecmp -o one --no-plots --format md &&
	grep -q "^| | ecmp |$" one/report.md &&
	fs_expect 1 report ecmp spray --by nosuchlabel -o nolabel --no-plots --format md &&
	test_grep "warning: --by nosuchlabel: run .*ecmp has no label .nosuchlabel." err &&
	! grep -q "^## Comparison" one/report.md
'

test_expect_success $P 'without thresholds: the phases have no criterion, INCOMPLETE, exit 5, never PASS' '
	mkfabric clean "{\"lb\":\"spray\"}" none 0.02 0.21 &&
	fs_expect 5 report clean -o t0 --no-plots &&
	test_grep -x "acceptance: INCOMPLETE: pw and lat have no criterion (0 of 4 checks failed)" out &&
	head -n 8 t0/report.md >first &&
	test_grep -x "## Verdict: INCOMPLETE" first &&
	test_grep -x "pw and lat have no criterion (0 of 4 checks failed)" first &&
	test_grep -F -- "- **pw** has no criterion: bw on every lane: give \[bw\] min\_fraction or min\_gbps in a thresholds file, or --topology with the cables" first &&
	jq -e ".verdict.result == \"INCOMPLETE\" and .verdict.exit_code == 5 and .acceptance.pass == false and
	       (.verdict.not_judged | map(.phase)) == [\"pw\", \"lat\"]" t0/summary.json >/dev/null &&
	test_grep "class=\"verdict warn\">INCOMPLETE" t0/report.html &&
	# a criterion for bandwidth only: latency is still not judged
	printf "[bw]\nmin_gbps = 0.01\n" >bwonly.ini &&
	fs_expect 5 report clean -o t0b --no-plots --thresholds bwonly.ini &&
	test_grep -x "acceptance: INCOMPLETE: lat has no criterion (0 of 5 checks failed)" out
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
	fs_expect 0 report clean -o t1 --no-plots --thresholds pass.ini &&
	grep -q "^acceptance: PASS (0 of 6 checks failed)$" out &&
	grep -q "^## Verdict: PASS" t1/report.md &&
	test_grep -x "every measured phase judged; 6 checks, none failed" t1/report.md &&
	grep -q "^## Acceptance checks" t1/report.md &&
	jq -e ".acceptance.pass == true and .verdict.result == \"PASS\" and .verdict.exit_code == 0" t1/summary.json >/dev/null &&
	grep -q "class=\"verdict pass\">PASS" t1/report.html &&
	# a failed test fails the run whatever the thresholds say of its pairs
	fs_expect 1 report spray -o t1b --no-plots --thresholds pass.ini &&
	test_grep -x "acceptance: FAIL (1 of 6 checks failed)" out &&
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
	grep -q "^acceptance: FAIL (3 of 7 checks failed)$" out &&
	test_grep -x -- "- \*\*bw >= 0.9 x line rate, every pair\*\*: h1-h4 rail 1 (0.02), h2-h4 rail 1 (0.02), h3-h4 rail 1 (0.02)" t2/report.md &&
	grep -qF "| bw >= 0.9 x line rate, every pair | 0.18 Gb/s | 0.02 Gb/s | 3 of 12 | **FAIL** | h1-h4 rail 1 (0.02), h2-h4 rail 1 (0.02), h3-h4 rail 1 (0.02) |" t2/report.md &&
	grep -qF "| latency p99 \<= 5 us, every pair | 5 us | 9.5 us | 1 of 6 | **FAIL** | h1-h4 rail 0 (9.5) |" t2/report.md &&
	grep -qF "| suspects \<= 0 | 0 | 1 | 1 of 1 | **FAIL** | ecmp (1) |" t2/report.md &&
	jq -e ".acceptance.pass == false and ([.acceptance.checks[] | select(.pass)] | length) == 4 and
	       .verdict.exit_code == 1 and (.verdict.failing | length) == 3" t2/summary.json >/dev/null &&
	grep -q "class=\"verdict fail\">FAIL" t2/report.html &&
	# a run that measured nothing does not pass a gate
	mkdir none && : >none/results.jsonl &&
	fs_expect 1 report none -o t4 --no-plots --thresholds pass.ini &&
	test_grep -x "acceptance: FAIL (2 of 6 checks failed; not judged: the run measured nothing; the check .every planned job ran. could not judge)" out &&
	grep -qF "| bw >= 0.9 x line rate, every pair | 0.18 Gb/s | n/a | 0 of 0 | **FAIL** | nothing measured: no record gives this check a value |" t4/report.md &&
	jq -e ".acceptance.pass == false" t4/summary.json >/dev/null
'

test_expect_success $P 'a per-rail line rate: rail 1 judged against its own speed' '
	printf "[bw]\nline_rate_gbps = 0.2\nrail1 = 0.02\nmin_fraction = 0.9\n[lat]\np99_us_max = 10\n" >rail.ini &&
	fs_expect 0 report ecmp -o t3 --no-plots --thresholds rail.ini &&
	test_grep -x "acceptance: PASS (0 of 6 checks failed)" out
'

test_expect_success $P '[phase NAME]: a phase judged by its own limits, the global row without it' '
	# ecmp: pw at 0.19 Gb/s, but h4 on rail 1 at 0.02; lat p50 1.9 to 2.2 us
	printf "[bw]\nmin_gbps = 0.1\n[lat]\np50_us_max = 1\n[phase pw]\nmin_gbps = 0.01\n[phase lat]\np50_us_max = 3\n" >ph.ini &&
	fs_expect 0 report ecmp -o ph1 --no-plots --thresholds ph.ini &&
	test_grep -x "acceptance: PASS (0 of 8 checks failed)" out &&
	test_grep -F "| bw >= 0.1 Gb/s, every pair | 0.1 Gb/s | n/a | 0 of 0 | **PASS** | every phase has a \[phase NAME\] limit of its own |" ph1/report.md &&
	test_grep -F "| pw: bw >= 0.01 Gb/s, every pair | 0.01 Gb/s | 0.02 Gb/s | 0 of 12 | **PASS** | - |" ph1/report.md &&
	test_grep -F "| lat: latency p50 \<= 3 us, every pair | 3 us | 2.2 us | 0 of 6 | **PASS** | - |" ph1/report.md &&
	printf "[phase pw]\nmin_gbps = 0.05\n[phase lat]\np99_us_max = 5\n[phase nosuch]\nmin_gbps = 1\n" >ph2.ini &&
	fs_expect 1 report ecmp -o ph2 --no-plots --thresholds ph2.ini &&
	test_grep -x "acceptance: FAIL (2 of 6 checks failed)" out &&
	test_grep -F "| pw: bw >= 0.05 Gb/s, every pair | 0.05 Gb/s | 0.02 Gb/s | 3 of 12 | **FAIL** | h1-h4 rail 1 (0.02), h2-h4 rail 1 (0.02), h3-h4 rail 1 (0.02) |" ph2/report.md &&
	test_grep -F "| lat: latency p99 \<= 5 us, every pair | 5 us | 9.5 us | 1 of 6 | **FAIL** | h1-h4 rail 0 (9.5) |" ph2/report.md &&
	test_grep "ph2.ini:6: \[phase nosuch\]: no run measured a phase of that name: its limits judge nothing" err &&
	bad_phase() {
		printf "$1" >bp.ini &&
		fs_expect 2 report ecmp --thresholds bp.ini -o x &&
		ptp_one_error err "${@:2}"
	} &&
	bad_phase "[phase]\nmin_gbps = 1\n" "bp.ini:1" "[phase NAME]" &&
	bad_phase "[phase a/b]\nmin_gbps = 1\n" "bp.ini:1" "letters, digits" &&
	bad_phase "[phase pw]\nstorm = fail\n" "bp.ini:2" "[phase pw] storm" &&
	bad_phase "[phase pw]\nmin_gbps = 1\nmin_gbps = 2\n" "bp.ini:3" "given already, at line 2" &&
	bad_phase "[phase pw]\nmin_fraction = 0.5\n" "min_fraction needs line_rate_gbps"
'

test_expect_success $P 'suspects: one confirmed by its re-test fails the run without thresholds; one not confirmed is said' '
	mkfabric sus "{\"lb\":\"ecmp\"}" none 0.19 0.19 &&
	latrec sus lat 0 h1 h4 9.0 9.5 &&
	sed -i "/\"job\":\"lat\/lat\/0\/h1>h4\"/{/\"p50\":2.0/d}" sus/results.jsonl &&
	printf "%s\n" "{\"schema\":\"fabscope.record/1\",\"test\":\"lat\",\"transport\":\"tcp\",\"msg_size_bytes\":64,\"scope\":\"aggregate\",\"status\":\"ok\",\"phase\":\"lat\",\"job\":\"lat/lat/0/h1>h4/retest\",\"retest_of\":\"lat/lat/0/h1>h4\",\"src\":{\"node\":\"h1\",\"rail\":0,\"plane\":0},\"dst\":{\"node\":\"h4\",\"rail\":0,\"plane\":0},\"metrics\":{\"lat_us\":{\"p50\":8.8,\"p99\":9.9}}}" >>sus/results.jsonl &&
	printf "[bw]\nmin_gbps = 0.1\n[lat]\np50_us_max = 10\n" >sus.ini &&
	fs_expect 1 report sus -o sus1 --no-plots --thresholds sus.ini &&
	test_grep -x "acceptance: FAIL (1 of 6 checks failed)" out &&
	test_grep -F "| no suspect confirmed by a re-test | 0 | 1 confirmed, 0 not | 1 of 1 | **FAIL** | pair h1-h4 rail 0 (lat lat) |" sus1/report.md &&
	jq -e ".runs[0].suspects[0].retest.status == \"confirmed\"" sus1/summary.json >/dev/null &&
	# the suspect of ecmp (h4 on rail 1) was never re-tested: not judged, unless asked
	printf "[bw]\nline_rate_gbps = 0.2\nrail1 = 0.02\nmin_fraction = 0.09\n[lat]\np50_us_max = 10\n" >un.ini &&
	fs_expect 0 report ecmp -o sus2 --no-plots --thresholds un.ini &&
	test_grep -F "| no suspect confirmed by a re-test | 0 | 0 confirmed, 1 not | 0 of 1 | **PASS** | 1 suspect not confirmed (named from one measurement, or fast on the re-test): not judged here, see Suspects |" sus2/report.md &&
	printf "[suspects]\nmax_unconfirmed = 0\n" >>un.ini &&
	fs_expect 1 report ecmp -o sus3 --no-plots --thresholds un.ini &&
	test_grep -F "| suspects not confirmed by a re-test \<= 0 | 0 | 1 | 1 of 1 | **FAIL** | node h4 rail 1 (pw bw) |" sus3/report.md
'

test_expect_success $P 'baseline: a median worse than the tolerance is a regression (exit 1)' '
	fs_expect 1 report ecmp --baseline spray -o b1 --no-plots &&
	grep -q "^baseline spray: REGRESSED (1 of 3 figures regressed)$" out &&
	grep -qF "| pw bw rail 1 median | 0.21 Gb/s | 0.105 Gb/s (-50.0%) | **REGRESSION** | down rail 1 by 50.0% (tolerance 10%) |" b1/report.md &&
	test_grep -x -- "- \*\*baseline\*\*: REGRESSED against spray (see Against the baseline)" b1/report.md &&
	# no regression is no verdict on the phases: they have no criterion still (exit 5)
	fs_expect 5 report clean --baseline ecmp -o b2 --no-plots &&
	grep -q "^baseline ecmp: no regression (0 of 3 figures regressed)$" out &&
	fs_expect 5 report ecmp --baseline spray --tolerance 60 -o b3 --no-plots &&
	jq -e ".baseline.pass == true and .baseline.tolerance == 0.6" b3/summary.json >/dev/null
'

test_expect_success $P,GNUPLOT 'plots: gnuplot draws SVGs, the HTML holds them inline, the Markdown links them' '
	fs_expect 5 report ecmp -o p1 &&
	ls p1/plots/*.svg >svgs &&
	test $(wc -l <svgs) -ge 5 &&
	grep -q "heat-pw-bw-r1" svgs && grep -q "cdf-lat-p99" svgs && grep -q "lanes-pw-bw" svgs &&
	test $(grep -c "<svg" p1/report.html) = $(wc -l <svgs) &&
	! grep -q "<?xml" p1/report.html &&
	grep -q "^!\[pw: bw per lane (median, min..max)\](plots/01-lanes-pw-bw.svg)$" p1/report.md &&
	# each lane with its worst node beside the median: h4 at 0.02 on rail 1
	test_grep -x "\"rail 1\" 0.105 0.02 0.19 0.02" p1/plots/lanes-pw-bw.dat &&
	test_grep "worst node" p1/plots/01-lanes-pw-bw.svg &&
	# latency the right way round: its scale is twice the median, red the highest
	test_grep "high_bad" "$SRCDIR/plots/heatmap.gp" &&
	fs_expect 1 report ecmp spray -o p2 &&
	grep -q "pw: bw per lane, by run" p2/report.md
'

test_expect_success $P 'without the gnuplot templates the report is written and says why' '
	FABSCOPE_PLOTS=/nonexistent fs_expect 5 report ecmp -o np &&
	grep -q "^no plots: the gnuplot templates" np/report.md &&
	grep -q "no plots: the gnuplot templates" np/report.html &&
	grep -q "no plots" err
'

test_expect_success $P 'a push to a dead endpoint: the report is written, exit 4, one line' '
	port=$(ptp_port 0) &&
	fs_expect 4 report clean -o dead --no-plots --thresholds pass.ini --push http://127.0.0.1:$port &&
	test -s dead/report.md && test -s dead/summary.json &&
	grep -q "127.0.0.1:$port" err &&
	# a verdict that is not PASS keeps its code over the push.s
	fs_expect 5 report ecmp -o dead1 --no-plots --push http://127.0.0.1:$port &&
	fs_expect 1 report ecmp -o dead2 --no-plots --thresholds fail.ini --push http://127.0.0.1:$port &&
	test -s dead2/report.md
'

test_expect_success $P 'bad input: one line and exit 2 (or 3 when a file cannot be written)' '
	fs_expect 2 report &&
	ptp_first_error err "results directory" &&
	fs_expect 2 report nosuch &&
	ptp_one_error err "nosuch" "does not exist: give a results directory" &&
	mkdir empty &&
	fs_expect 2 report empty &&
	ptp_one_error err "empty" "results.jsonl" &&
	# bad_th FILE CONTENT WORDS...: thresholds of CONTENT (a printf format): exit 2, one line of WORDS
	bad_th() {
		local f=$1
		printf "$2" >"$f" && shift 2 &&
		fs_expect 2 report ecmp --thresholds "$f" -o x &&
		ptp_one_error err "$@"
	} &&
	bad_th bad.ini "[bw]\nmin_speed = 3\n" "bad.ini:2" "min_speed" &&
	bad_th noline.ini "[bw]\nmin_fraction = 0.9\n" "line_rate_gbps" &&
	bad_th twice.ini "[bw]\nmin_gbps = 1\n[lat]\np50_us_max = 5\n[bw]\nmin_gbps = 2\n" \
		"twice.ini:6" "bw.min_gbps" "given already, at line 2" &&
	bad_th frac.ini "[bw]\nline_rate_gbps = 1\nmin_fraction = 1.5\n" "frac.ini:3" "0 to 1" &&
	bad_th count.ini "[run]\nmax_missing = 1.5\n" "count.ini:2" "whole number" &&
	bad_th rate.ini "[bw]\nrail3 = 100\n" "no check in it" "min_fraction" &&
	fs_expect 2 report ecmp --thresholds . -o x &&
	ptp_one_error err "cannot read thresholds '\''.'\''" "it is a directory" &&
	fs_expect 2 report ecmp --format pdf &&
	ptp_one_error err "pdf" &&
	fs_expect 2 report ecmp --tolerance lots &&
	ptp_one_error err "lots" &&
	fs_expect 2 report ecmp --push ftp://x -o x --no-plots &&
	ptp_one_error err "ftp://x" &&
	! test -e x &&
	fs_expect 2 report ecmp --webhook "http://h/a b" -o x --no-plots &&
	ptp_one_error err "white space" &&
	! test -e x &&
	fs_expect 2 report ecmp --format "" -o x &&
	ptp_one_error err "--format" "names no format" &&
	fs_expect 2 report ecmp --format , -o x &&
	! test -e x &&
	touch afile &&
	fs_expect 3 report ecmp -o afile/sub &&
	ptp_one_error err "afile/sub"
'

test_expect_success $P 'lines that are not records and records of another schema: left out, with the line and the schema' '
	mkfabric foreign "{\"lb\":\"ecmp\"}" none 0.19 0.19 &&
	sed -i "3s/.*/not json/" foreign/results.jsonl &&
	bwrec foreign pw 0 h1 h2 4242 &&
	sed -i "\$s/record\/1/record\/2/" foreign/results.jsonl &&
	echo "{\"schema\":\"fabscope.record/2\"}" >>foreign/results.jsonl &&
	fs_expect 5 report foreign -o foreignrep --no-plots &&
	test $(grep -c "warning" err) = 2 &&
	test_grep "foreign/results.jsonl: 1 line(s) that are not records were skipped, the first at line 3" err &&
	test_grep "2 record(s) of schema .fabscope.record/2. left out: this fabscope reads fabscope.record/1" err &&
	# the 4242 Gb/s of the newer schema is not in the report
	! grep -q 4242 foreignrep/report.md foreignrep/summary.json &&
	grep -q "0.19" foreignrep/report.md
'

# a path that is not there is a wrong argument (2, above); one that is there but that this user
# cannot read is the environment (3), with the system's reason
[ "$(id -u)" = 0 ] && test_require_in_ci SETPRIV
# as_nobody CMD...: CMD as user nobody, its stderr in ./err
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@" 2>err; }
test_expect_success $P,SETPRIV 'a results directory that is there but cannot be read: one line, exit 3' '
	cp -r ecmp locked && chmod 700 locked &&
	test_expect_exit 3 as_nobody "$FABSCOPE" report locked -o /nonexistent/x --no-plots &&
	ptp_one_error err "cannot read" "locked/results.jsonl" "Permission denied" &&
	# the directory itself, in one that nobody may enter
	mkdir closed && cp -r ecmp closed/run && chmod 700 closed &&
	test_expect_exit 3 as_nobody "$FABSCOPE" report closed/run -o /nonexistent/x --no-plots &&
	ptp_one_error err "cannot read '\''closed/run'\''" "Permission denied" &&
	# its run.json, and a thresholds file (a missing run.json is only a warning, above)
	cp -r ecmp rjlocked && chmod 600 rjlocked/run.json &&
	test_expect_exit 3 as_nobody "$FABSCOPE" report rjlocked -o /nonexistent/x --no-plots &&
	ptp_one_error err "cannot read '\''rjlocked/run.json'\''" "Permission denied" &&
	printf "[bw]\nmin_gbps = 1\n" >th-locked.ini && chmod 600 th-locked.ini &&
	test_expect_exit 3 as_nobody "$FABSCOPE" report ecmp -o /nonexistent/x --no-plots --thresholds th-locked.ini &&
	ptp_one_error err "cannot read thresholds '\''th-locked.ini'\''" "Permission denied"
'

test_expect_success $P 'PFC: a storm on h3 and ECN first on h1 against a calm run: the golden Markdown and JSON' '
	mkpfc pfc-ecmp "{\"lb\":\"ecmp\",\"fabric\":\"lab\"}" 1 &&
	mkpfc pfc-spray "{\"lb\":\"spray\",\"fabric\":\"lab\"}" 0 &&
	fs_expect 5 report pfc-ecmp pfc-spray -o pfc --no-plots &&
	test_grep -x "acceptance: INCOMPLETE: pfc has no criterion (0 of 4 checks failed)" out &&
	golden_md pfc/report.md >md &&
	test_cmp "$TEST_DIRECTORY/data/report/pfc.md" md &&
	jq "del(.version)" pfc/summary.json >summary &&
	test_cmp "$TEST_DIRECTORY/data/report/pfc.json" summary &&
	test $(grep -c "^No bandwidth or latency results.$" pfc/report.md) = 2 &&
	jq -e "[.runs[].groups | length] == [0, 0]" pfc/summary.json >/dev/null &&
	grep -q "<h2>PFC pauses</h2>" pfc/report.html &&
	grep -q "<td class=\"fail\">rx</td>" pfc/report.html &&
	grep -q "<li><b>PFC storm</b>: h3 eth2 prio 3 rx, paused &gt; 99 % for 5 intervals from 2.5 s (lb=ecmp)</li>" pfc/report.html
'

test_expect_success $P 'PFC thresholds: [pfc] storm = fail and max_paused pass on a calm run, fail naming the ports' '
	printf "[pfc]\nstorm = fail\nmax_paused = 0.5\n" >pfc.ini &&
	fs_expect 0 report pfc-spray -o pt1 --no-plots --thresholds pfc.ini &&
	grep -q "^acceptance: PASS (0 of 6 checks failed)$" out &&
	grep -qF "| no PFC storm, every port and priority | none | none | 0 of 3 | **PASS** | - |" pt1/report.md &&
	grep -qF "| PFC paused \<= 50 % of an interval, every port, priority and direction | 50 % | 10 % (1 unknown) | 0 of 5 | **PASS** | - |" pt1/report.md &&
	fs_expect 1 report pfc-ecmp -o pt2 --no-plots --thresholds pfc.ini &&
	grep -q "^acceptance: FAIL (2 of 6 checks failed)$" out &&
	grep -qF "| no PFC storm, every port and priority | none | 1 storm | 1 of 4 | **FAIL** | h3 eth2 prio 3 rx (from 2.5 s) |" pt2/report.md &&
	grep -qF "| PFC paused \<= 50 % of an interval, every port, priority and direction | 50 % | 100 % (1 unknown) | 2 of 7 | **FAIL** | h1 eth2 prio 3 rx (80 %), h3 eth2 prio 3 rx (100 %) |" pt2/report.md &&
	jq -e "[.acceptance.checks[] | select(.pass | not) | .endpoints] == [\"h3 eth2 prio 3 rx (from 2.5 s)\", \"h1 eth2 prio 3 rx (80 %), h3 eth2 prio 3 rx (100 %)\"]" pt2/summary.json >/dev/null &&
	printf "[pfc]\nstorm = off\nmax_paused = 1\n" >off.ini &&
	fs_expect 0 report pfc-ecmp -o pt3 --no-plots --thresholds off.ini &&
	grep -q "^acceptance: PASS (0 of 5 checks failed)$" out &&
	# max_pps: pause frames a second, the highest interval of every port, priority and direction
	printf "[pfc]\nmax_pps = 150\n" >pps.ini &&
	fs_expect 1 report pfc-spray -o pt4 --no-plots --thresholds pps.ini &&
	grep -qF "| PFC pause frames \<= 150/s, every port, priority and direction | 150/s | 200/s | 1 of 6 | **FAIL** | h4 eth2 prio 3 tx (200/s) |" pt4/report.md &&
	printf "[pfc]\nstorm = maybe\n" >bad1.ini &&
	fs_expect 2 report pfc-ecmp -o x --no-plots --thresholds bad1.ini &&
	ptp_one_error err "bad1.ini:2" "maybe" &&
	printf "[pfc]\nmax_paused = 1.5\n" >bad2.ini &&
	fs_expect 2 report pfc-ecmp -o x --no-plots --thresholds bad2.ini &&
	ptp_one_error err "bad2.ini:2" "max_paused"
'

test_expect_success $P,PERL 'PFC: the pushed exposition has pause rates, paused fractions where known and storms' '
	port=$(ptp_port 1) &&
	pushcatch $port body &&
	fs_expect 5 report pfc-ecmp pfc-spray -o pe --no-plots --push http://127.0.0.1:$port &&
	test_wait_for 5 test -f body &&
	grep -qx "fabscope_pfc_pause_frames_per_second{run=\"lb=ecmp\",phase=\"pfc\",node=\"h3\",iface=\"eth2\",prio=\"3\",dir=\"rx\"} 700" body &&
	grep -qx "fabscope_pfc_pause_frames_per_second{run=\"lb=spray\",phase=\"pfc\",node=\"h4\",iface=\"eth2\",prio=\"3\",dir=\"tx\"} 25" body &&
	grep -qx "fabscope_pfc_max_paused_ratio{run=\"lb=ecmp\",phase=\"pfc\",node=\"h1\",iface=\"eth2\",prio=\"3\",dir=\"rx\"} 0.8" body &&
	grep -qx "fabscope_pfc_storm{run=\"lb=ecmp\",phase=\"pfc\",node=\"h3\",iface=\"eth2\",prio=\"3\"} 1" body &&
	grep -qx "fabscope_pfc_storm{run=\"lb=spray\",phase=\"pfc\",node=\"h3\",iface=\"eth2\",prio=\"3\"} 0" body &&
	! grep "^fabscope_pfc_max_paused_ratio{[^}]*node=\"h4\"[^}]*dir=\"tx\"" body &&
	for m in pause_frames_per_second max_paused_ratio storm; do
		test $(grep -c "^# TYPE fabscope_pfc_$m gauge$" body) = 1 &&
		test $(grep -c "^# HELP fabscope_pfc_$m " body) = 1 || return 1
	done &&
	test $(grep -c "^fabscope_pfc_pause_frames_per_second{" body) = 14 &&
	test $(grep -c "^fabscope_pfc_max_paused_ratio{" body) = 12 &&
	test $(grep -c "^fabscope_pfc_storm{" body) = 7
'

test_expect_success $P,PERL 'PFC: a port sampled again in a later round is one series, at its worst' '
	mkdir rounds && cp pfc-ecmp/run.json rounds/ &&
	grep "\"node\":\"h3\"" pfc-ecmp/results.jsonl | sed "s/\"rx_pps_avg\":700/\"rx_pps_avg\":900/" >rounds/results.jsonl &&
	grep "\"node\":\"h3\"" pfc-ecmp/results.jsonl >>rounds/results.jsonl &&
	port=$(ptp_port 2) &&
	pushcatch $port body2 &&
	fs_expect 5 report rounds -o pr --no-plots --push http://127.0.0.1:$port &&
	test_wait_for 5 test -f body2 &&
	grep "^fabscope_pfc_pause_frames_per_second{" body2 >lines &&
	test_grep -x "fabscope_pfc_pause_frames_per_second{phase=\"pfc\",node=\"h3\",iface=\"eth2\",prio=\"3\",dir=\"rx\"} 900" lines &&
	test $(wc -l <lines) = 2
'

test_expect_success $P,GNUPLOT 'PFC: one pause timeline per run and phase, inline in the HTML, linked from the Markdown' '
	fs_expect 5 report pfc-ecmp pfc-spray -o pp &&
	ls pp/plots/*.svg >svgs &&
	test $(wc -l <svgs) = 2 &&
	grep -q "01-pfc-pfc-0.svg" svgs && grep -q "02-pfc-pfc-1.svg" svgs &&
	test $(grep -c "<svg" pp/report.html) = 2 &&
	! grep -q "<?xml" pp/report.html &&
	grep -q "<figcaption>lb=ecmp, pfc: PFC pause frames/s and paused fraction per port, priority and direction</figcaption>" pp/report.html &&
	grep -q "^!\[lb=spray, pfc: PFC pause frames/s and paused fraction per port, priority and direction\](plots/02-pfc-pfc-1.svg)$" pp/report.md &&
	head -n 1 pp/plots/pfc-pfc-0.dat >hdr &&
	test_grep -x "\"h1 eth2 prio 3 rx\" \"s0\" \"h3 eth2 prio 3 rx\" \"s1\" \"h4 eth2 prio 3 tx\" \"s2\"" hdr &&
	grep -q "h3 eth2 prio 3 rx" pp/plots/01-pfc-pfc-0.svg &&
	fs_expect 5 report pfc-spray -o pp1 &&
	test_grep "^!\[pfc: PFC pause frames/s" pp1/report.md
'

test_expect_success $P 'PFC: records with nulls, wrong types and parts missing render as unknown and n/a' '
	mkrun pfc-odd "{\"lb\":\"ecmp\"}" &&
	cat >>pfc-odd/results.jsonl <<-\EOF &&
	{"test":"pfc","status":"ok","phase":"pfc","role":"monitor","src":{"node":"h9"},"iface":null,"params":"x","priorities":[{"prio":3,"rx_pps_avg":null,"rx_pps_max":"x","tx_pps_avg":5,"storm":null,"storm_from":"3","storm_run":1e300,"first_pause":1e300,"ecn_first":7,"estimated":"yes"},{"prio":99},{"prio":3.5},"junk",{"prio":3,"rx_pps_avg":1}],"timeline":{"t":[0.5,"x",1.5,2],"phase":["before","during",3],"prio":{"3":{"rx_pps":[0,5,null,7,9,9],"tx_pps":"no","rx_paused":[null,null],"tx_paused":[0.5]},"x":1}},"verdict":null,"storm":"yes","first_ecn":-7}
	{"test":"pfc","status":"ok","phase":"pfc","role":"target","src":{"node":"h4"},"iface":"eth2","verdict":"unknown","verdict_text":"no pause counters; port: 10 intervals, 5.000 s"}
	{"test":"pfc","status":"ok","phase":"pfc","priorities":{"prio":3},"timeline":[1,2],"src":"h1","dst":7,"role":"sender"}
	{"test":"pfc","status":"ok","phase":"pfc","src":{"node":"h5"},"iface":"eth5","priorities":[{"prio":0,"storm":"rx+tx","storm_run":4,"storm_from":9}],"timeline":{"t":[],"prio":{"0":{"rx_pps":[1,2]}}}}
	{"test":"pfc","status":"error","error":"no device","phase":"pfc"}
	EOF
	fs_expect 1 report pfc-odd -o odd &&
	test_grep -F "| pfc-odd | pfc | h4 | target | eth2 | - | n/a | n/a | n/a | unknown | unknown | **unknown** |" odd/report.md &&
	test_grep -F "| pfc-odd | pfc | h9 | monitor | - | 3 | n/a / n/a | 5 / n/a | n/a / n/a | unknown | unknown | **unknown** |" odd/report.md &&
	test_grep -F "| pfc-odd | pfc | ? | sender | - | - | n/a | n/a | n/a | unknown | unknown | **unknown** |" odd/report.md &&
	test_grep -F "| pfc-odd | pfc | h5 | - | eth5 | 0 | n/a / n/a | n/a / n/a | n/a / n/a | rx+tx | unknown | **unknown** |" odd/report.md &&
	test_grep -xF -- "- **PFC storm**: h5 eth5 prio 0 rx+tx, paused > 99 % for 4 intervals" odd/report.md &&
	test_grep -xF -- "- h4 eth2, target: no pause counters; port: 10 intervals, 5.000 s" odd/report.md &&
	test_grep -xF -- "- h9 -, monitor: verdict unknown; n/a: the record has no verdict text" odd/report.md &&
	test_grep "records | 5 (1 failed)" odd/report.md &&
	jq -e ".runs[0].pfc | length == 4 and (map(.verdict) | unique) == [\"unknown\"] and
		(.[] | select(.node == \"h9\") | .priorities == [{prio: 3, rx_frames: null, tx_frames: null,
		rx_pps_avg: null, rx_pps_max: null, tx_pps_avg: 5, tx_pps_max: null, rx_paused_max: null,
		tx_paused_max: null, estimated: false, storm: null, storm_intervals: 0, storm_from_s: null,
		first_pause_s: null, ecn_first: \"unknown\"}])" odd/summary.json >/dev/null &&
	printf "[pfc]\nstorm = fail\nmax_paused = 0.5\n" >odd.ini &&
	fs_expect 1 report pfc-odd -o odd2 --no-plots --thresholds odd.ini &&
	grep -qF "| no PFC storm, every port and priority | none | 1 storm | 1 of 1 | **FAIL** | h5 eth5 prio 0 rx+tx |" odd2/report.md &&
	# nothing the check could judge: not a pass
	grep -qF "| PFC paused \<= 50 % of an interval, every port, priority and direction | 50 % | n/a (4 unknown) | 0 of 0 | **FAIL** | nothing measured: no record gives this check a value |" odd2/report.md
'

test_expect_success $P 'collectives: two labelled multi-rail runs (lb=ecmp, rail 1 slow; lb=spray): the golden Markdown and JSON' '
	collrun coll-ecmp "{\"lb\":\"ecmp\",\"fabric\":\"lab\"}" coll 0 allreduce -n 4 --rail 0,1,0,1 --multi-rail \
		--node h1 -b 64K -e 1M -i 2 -w 1 --label lb=ecmp &&
	collrun coll-ecmp - a2a 0 alltoall -n 3 --node h2 -b 64K -e 256K -i 2 -w 1 --label lb=ecmp &&
	collfix coll-ecmp 0=1 1=0.5 &&
	collrun coll-spray "{\"lb\":\"spray\",\"fabric\":\"lab\"}" coll 0 allreduce -n 4 --rail 0,1,0,1 --multi-rail \
		--node h1 -b 64K -e 1M -i 2 -w 1 --label lb=spray &&
	collfix coll-spray 0=1 1=1 &&
	fs_expect 5 report coll-ecmp coll-spray -o coll --no-plots &&
	golden_md coll/report.md >md &&
	test_cmp "$TEST_DIRECTORY/data/report/coll.md" md &&
	jq "del(.version)" coll/summary.json >summary &&
	test_cmp "$TEST_DIRECTORY/data/report/coll.json" summary &&
	test_grep "^acceptance: INCOMPLETE: coll and a2a have no criterion (0 of 5 checks failed)$" out &&
	test_grep "<h2>Collectives</h2>" coll/report.html &&
	test_grep "<p><b>lb=ecmp, phase coll, rail 1</b>: 2 ranks on h1</p>" coll/report.html &&
	test_grep "<li><b>phase coll, rail 1</b>: at 1M, lb=spray is best with 7.924 Gb/s busbw; lb=ecmp 3.981 (0.50 x)</li>" coll/report.html
'

test_expect_success $P 'collectives against a baseline: a lane whose mean busbw fell is a regression, exit 1' '
	fs_expect 1 report coll-ecmp --baseline coll-spray -o cb1 --no-plots &&
	test_grep "^baseline coll-spray: REGRESSED (1 of 2 figures regressed)$" out &&
	test_grep -F "| allreduce ring, phase coll, rail 1 mean busbw over 5 sizes | " cb1/report.md &&
	test_grep -F "down by 48.7% (tolerance 10%), most at 1M (-49.8%)" cb1/report.md &&
	test_grep -F "| allreduce ring, phase coll, rail 0 mean busbw over 5 sizes | " cb1/report.md &&
	! grep -F "alltoall" cb1/report.md | grep -q "mean busbw" &&
	jq -e ".baseline.pass == false" cb1/summary.json >/dev/null &&
	fs_expect 5 report coll-spray --baseline coll-ecmp -o cb2 --no-plots &&
	test_grep "^baseline coll-ecmp: no regression (0 of 2 figures regressed)$" out
'

test_expect_success $P 'collectives: records of standalone runs, as measured (rhd; alltoall unchecked)' '
	collrun coll-real "{\"lb\":\"ecmp\"}" - 0 allreduce -n 3 --node h2 -A rhd -b 64K -e 256K -i 2 -w 1 &&
	collrun coll-real - - 0 alltoall -n 3 --node h3 -b 64K -e 128K -i 2 -w 1 --no-check &&
	fs_expect 5 report coll-real -o real --no-plots &&
	test_grep "^acceptance: INCOMPLETE: (standalone) has no criterion (0 of 5 checks failed)$" out &&
	test_grep -x "### allreduce, rhd, tcp" real/report.md &&
	test_grep -x "### alltoall, pairwise, tcp" real/report.md &&
	test_grep -x "\*\*rail 0\*\*: 3 ranks on h2" real/report.md &&
	test_grep -x "| 65536 | 16384 | [0-9.]* | [0-9.e+]* | [0-9.e+]* | 0 |" real/report.md &&
	test_grep -x "| 131064 | 32766 | [0-9.]* | [0-9.e+]* | [0-9.e+]* | n/a |" real/report.md &&
	test $(grep -c "^| [0-9]" real/report.md) = 5 &&
	test_grep "busbw = algbw x 2(n-1)/n for allreduce, x (n-1)/n for alltoall" real/report.md &&
	test_grep -F "| collectives return the right data, every lane and size | 0 wrong | 0 wrong | 0 of 3 | **PASS** | - |" real/report.md &&
	jq -e ".runs[0].collectives | map([.test, .algo, .phase, .lane, .rail, .plane, .ranks, (.sizes | length), .sizes[0].wrong]) ==
		[[\"allreduce\", \"rhd\", \"(standalone)\", \"rail 0\", 0, 0, 3, 3, 0], [\"alltoall\", \"pairwise\", \"(standalone)\", \"rail 0\", 0, 0, 3, 2, -1]]" \
		real/summary.json >/dev/null &&
	jq -e ".runs[0].collectives[0].sizes | all(.busbw_gbps > 0 and .time_us > 0 and .time_us_min <= .time_us_max)" real/summary.json >/dev/null &&
	mkrun coll-plane "{\"lb\":\"spray\"}" &&
	jq -c "select(.scope == \"rail\") | . + {plane: .rail, kind: .test, round: 1, group: \"all\"}" coll-spray/results.jsonl \
		>>coll-plane/results.jsonl &&
	fs_expect 5 report coll-plane -o plane --no-plots &&
	test_grep -x "\*\*phase coll, rail 0\*\*: 2 ranks on h1" plane/report.md &&
	test_grep -x "\*\*phase coll, rail 1 plane 1\*\*: 2 ranks on h1" plane/report.md &&
	jq -e "[.runs[0].collectives[] | [.lane, .rail, .plane]] == [[\"rail 0\", 0, 0], [\"rail 1 plane 1\", 1, 1]]" plane/summary.json >/dev/null
'

test_expect_success $P 'collectives: wrong data (--corrupt) fails the report, naming the rail and the sizes (exit 1)' '
	collrun coll-bad "{\"lb\":\"ecmp\"}" coll 1 allreduce -n 4 --rail 0,1,0,1 --multi-rail --node h1 -b 64K -e 128K \
		-i 2 -w 1 --corrupt 1 &&
	fs_expect 1 report coll-bad -o bad --no-plots &&
	test_grep "^acceptance: FAIL (1 of 5 checks failed; not judged: coll has no criterion)$" out &&
	test_grep "^| collectives return the right data, every lane and size | 0 wrong | [0-9]* wrong | 2 of 4 | \*\*FAIL\*\* | allreduce ring, phase coll, rail 1 at 64K ([0-9]* wrong), allreduce ring, phase coll, rail 1 at 128K ([0-9]* wrong) |$" bad/report.md &&
	test_grep "^| 65536 | 16384 | [0-9.]* | [0-9.e+]* | [0-9.e+]* | \*\*[1-9][0-9]*\*\* |$" bad/report.md &&
	test_grep "^- \*\*Wrong data\*\*: allreduce ring, phase coll, rail 1: [0-9]* wrong elements at 64K, 128K (a rank, its NIC or the fabric corrupted data)$" bad/report.md &&
	test_grep ! "Wrong data.*rail 0" bad/report.md &&
	test_grep "<td class=\"fail\">[1-9][0-9]*</td>" bad/report.html &&
	jq -e ".acceptance.pass == false and (.acceptance.checks[] | select(.check | startswith(\"collectives\")) | .failing) == 2" bad/summary.json >/dev/null &&
	printf "[run]\nmax_failed = 0\n" >run.ini &&
	fs_expect 1 report coll-bad -o bad2 --no-plots --thresholds run.ini &&
	test_grep "^acceptance: FAIL (1 of 5 checks failed; not judged: coll has no criterion)$" out
'

test_expect_success $P 'collectives: [allreduce] and [alltoall] min_busbw_gbps, per lane at the largest size' '
	printf "[allreduce]\nmin_busbw_gbps = 5\n" >ar.ini &&
	fs_expect 0 report coll-spray -o ct0 --no-plots --thresholds ar.ini &&
	test_grep "^acceptance: PASS (0 of 6 checks failed)$" out &&
	test_grep -F "| allreduce busbw >= 5 Gb/s, every lane at its largest size | 5 Gb/s | 7.924 Gb/s | 0 of 2 | **PASS** | - |" ct0/report.md &&
	# coll-spray ran no alltoall: a gate with nothing behind it fails
	printf "[allreduce]\nmin_busbw_gbps = 5\n[alltoall]\nmin_busbw_gbps = 1\n" >coll.ini &&
	fs_expect 1 report coll-spray -o ct1 --no-plots --thresholds coll.ini &&
	test_grep "^acceptance: FAIL (1 of 7 checks failed)$" out &&
	test_grep -F "| alltoall busbw >= 1 Gb/s, every lane at its largest size | 1 Gb/s | n/a | 0 of 0 | **FAIL** | nothing measured: no record gives this check a value |" ct1/report.md &&
	fs_expect 1 report coll-ecmp coll-spray -o ct2 --no-plots --thresholds coll.ini &&
	test_grep "^acceptance: FAIL (1 of 7 checks failed)$" out &&
	test_grep -F "| allreduce busbw >= 5 Gb/s, every lane at its largest size | 5 Gb/s | 3.981 Gb/s | 1 of 4 | **FAIL** | lb=ecmp: allreduce ring, phase coll, rail 1 at 1M (3.98) |" ct2/report.md &&
	test_grep -F "| alltoall busbw >= 1 Gb/s, every lane at its largest size | 1 Gb/s | 5.137 Gb/s | 0 of 1 | **PASS** | - |" ct2/report.md &&
	jq -e "[.acceptance.checks[] | select(.pass | not) | .endpoints] == [\"lb=ecmp: allreduce ring, phase coll, rail 1 at 1M (3.98)\"]" ct2/summary.json >/dev/null &&
	printf "[alltoall]\nmin_busbw_gbps = 20\n" >a2a.ini &&
	fs_expect 1 report coll-ecmp -o ct3 --no-plots --thresholds a2a.ini &&
	test_grep -F "| alltoall busbw >= 20 Gb/s, every lane at its largest size | 20 Gb/s | 5.137 Gb/s | 1 of 1 | **FAIL** | alltoall pairwise, phase a2a, rail 0 at 262140 (5.14) |" ct3/report.md &&
	# a phase of its own: coll judged at 3 Gb/s, the rest at 5; a2a at 20
	printf "[allreduce]\nmin_busbw_gbps = 5\n[alltoall]\nmin_busbw_gbps = 1\n[phase coll]\nmin_busbw_gbps = 3\n" >ph.ini &&
	fs_expect 0 report coll-ecmp -o ct4 --no-plots --thresholds ph.ini &&
	test_grep -F "| coll: allreduce busbw >= 3 Gb/s, every lane at its largest size | 3 Gb/s | 3.981 Gb/s | 0 of 2 | **PASS** | - |" ct4/report.md &&
	printf "[allreduce]\nmin_busbw_gbps = fast\n" >bad3.ini &&
	fs_expect 2 report coll-ecmp -o x --no-plots --thresholds bad3.ini &&
	ptp_one_error err "bad3.ini:2" "fast" &&
	printf "[allreduce]\nmax_busbw_gbps = 5\n" >bad4.ini &&
	fs_expect 2 report coll-ecmp -o x --no-plots --thresholds bad4.ini &&
	ptp_one_error err "bad4.ini:2" "allreduce.max_busbw_gbps"
'

test_expect_success $P,GNUPLOT 'collectives: busbw against size per collective, a line per lane and run, after the other plots' '
	fs_expect 5 report coll-ecmp coll-spray -o cp &&
	ls cp/plots/*.svg >svgs &&
	test_grep -x "cp/plots/01-coll-allreduce-ring-tcp.svg" svgs &&
	test_grep -x "cp/plots/02-coll-alltoall-pairwise-tcp.svg" svgs &&
	test $(wc -l <svgs) = 2 &&
	test $(grep -c "<svg" cp/report.html) = 2 &&
	test_grep "<figcaption>allreduce (ring, tcp): busbw against message size, per lane and run</figcaption>" cp/report.html &&
	test_grep -x "!\[alltoall (pairwise, tcp): busbw against message size, per lane and run\](plots/02-coll-alltoall-pairwise-tcp.svg)" cp/report.md &&
	head -n 1 cp/plots/coll-allreduce-ring-tcp.dat >hdr &&
	test_grep -x "\"lb=ecmp, rail 0\" \"s0\" \"lb=ecmp, rail 1\" \"s1\" \"lb=spray, rail 0\" \"s2\" \"lb=spray, rail 1\" \"s3\"" hdr &&
	test_grep -x "1048576 7.9244 1048576 3.981 1048576 7.9244 1048576 7.9244" cp/plots/coll-allreduce-ring-tcp.dat &&
	test_grep "lb=spray, rail 1" cp/plots/01-coll-allreduce-ring-tcp.svg &&
	mkfabric mixed "{\"lb\":\"ecmp\"}" h4 0.02 0.19 &&
	collrun mixed - coll 0 allreduce -n 3 --node h1 -b 64K -e 128K -i 2 -w 1 &&
	fs_expect 5 report mixed -o mp &&
	ls mp/plots/*.svg >svgs &&
	n=$(wc -l <svgs) &&
	test_grep -x "mp/plots/$(printf %02d $n)-coll-allreduce-ring-tcp.svg" svgs &&
	test $(grep -c "<svg" mp/report.html) = $n
'

test_expect_success $P,PERL 'collectives: the pushed exposition has busbw, algbw and time per lane and size, wrong per lane' '
	port=$(ptp_port 3) &&
	pushcatch $port body3 &&
	fs_expect 5 report coll-ecmp coll-spray -o cpe --no-plots --push http://127.0.0.1:$port &&
	test_wait_for 5 test -f body3 &&
	test_grep -x "fabscope_coll_bus_bandwidth_bytes_per_second{run=\"lb=ecmp\",phase=\"coll\",test=\"allreduce\",algo=\"ring\",transport=\"tcp\",lane=\"rail 1\",rail=\"1\",plane=\"0\",size_bytes=\"1048576\"} 497625000" body3 &&
	test_grep -x "fabscope_coll_bus_bandwidth_bytes_per_second{run=\"lb=spray\",phase=\"coll\",test=\"allreduce\",algo=\"ring\",transport=\"tcp\",lane=\"sum\",size_bytes=\"1048576\"} 1.9811e+09" body3 &&
	test_grep -x "fabscope_coll_operation_seconds{run=\"lb=ecmp\",phase=\"a2a\",test=\"alltoall\",algo=\"pairwise\",transport=\"tcp\",lane=\"rail 0\",rail=\"0\",plane=\"0\",size_bytes=\"65532\"} 7.5532e-05" body3 &&
	test_grep -x "fabscope_coll_wrong_elements{run=\"lb=ecmp\",phase=\"coll\",test=\"allreduce\",algo=\"ring\",transport=\"tcp\",lane=\"rail 0\",rail=\"0\",plane=\"0\"} 0" body3 &&
	for m in bus_bandwidth_bytes_per_second algorithm_bandwidth_bytes_per_second operation_seconds wrong_elements; do
		test $(grep -c "^# TYPE fabscope_coll_$m gauge$" body3) = 1 &&
		test $(grep -c "^# HELP fabscope_coll_$m " body3) = 1 || return 1
	done &&
	test $(grep -c "^fabscope_coll_bus_bandwidth_bytes_per_second{" body3) = 33 &&
	test $(grep -c "^fabscope_coll_wrong_elements{" body3) = 7 &&
	test_grep -x "fabscope_check_pass{check=\"collectives return the right data, every lane and size\"} 1" body3
'

test_expect_success $P 'collectives: records with nulls, wrong types and parts missing render as n/a; a lone sum counts' '
	mkrun coll-odd "{\"lb\":\"ecmp\"}" &&
	cat >>coll-odd/results.jsonl <<-\EOF &&
	{"test":"allreduce","status":"ok","msg_size_bytes":"x"}
	{"test":"allreduce","status":"ok","msg_size_bytes":1024,"metrics":null,"endpoints":"no","group":7,"rail":-3,"ranks":"4"}
	{"test":"allreduce","status":"ok","msg_size_bytes":2048,"metrics":{"busbw_gbps":"fast","wrong":"3","time_us":null},"endpoints":[{"rail":1,"node":null},{"rail":2,"node":"a"},"junk"],"algo":null,"transport":5}
	{"test":"alltoall","status":"ok","msg_size_bytes":1e300}
	{"test":"alltoall","status":"ok","algo":"pairwise","msg_size_bytes":4096,"group":"sum","metrics":{"wrong":5,"busbw_gbps":1}}
	{"test":"alltoall","status":"ok","algo":"pairwise","msg_size_bytes":4096,"group":"sum","metrics":{"wrong":2,"busbw_gbps":3}}
	{"test":"allreduce","status":"error","error":"rank 2 died","msg_size_bytes":4096}
	EOF
	fs_expect 1 report coll-odd -o odd3 &&
	test_grep -x "\*\*all\*\*: ranks unknown" odd3/report.md &&
	test_grep -x "| 2048 | n/a | n/a | n/a | n/a | n/a |" odd3/report.md &&
	test_grep -x "| 4096 | n/a | n/a | n/a | 2 | \*\*7\*\* |" odd3/report.md &&
	test_grep -F "| collectives return the right data, every lane and size | 0 wrong | 7 wrong | 1 of 1 | **FAIL** | alltoall pairwise, sum at 4K (7 wrong) |" odd3/report.md &&
	test_grep "records | 7 (1 failed)" odd3/report.md &&
	test_must_be_empty err &&
	! ls odd3/plots/*.svg &&
	jq -e ".runs[0].collectives | map([.lane, .rail, .ranks, (.sizes | map(.busbw_gbps))]) == [[\"all\", null, 0, [null, null]], [\"sum\", null, 0, [2]]]" \
		odd3/summary.json >/dev/null
'

test_expect_success $P 'names, labels and reasons from the data are text in report.md, never HTML or markup' '
	mkrun evil "{\"lb\":\"<script>alert(1)</script>\",\"x\":\"*b* [l](http://e) | c\"}" &&
	bwrec evil pw 0 "<img src=x onerror=alert(1)>" h2 0.19 &&
	bwrec evil pw 0 h2 h3 0.19 &&
	bwrec evil pw 0 h3 h1 0.19 &&
	errrec evil "p<b>w</b>" h1 h2 "refused: <script>x</script> \`code\` _u_" &&
	fs_expect 1 report evil -o ev --no-plots &&
	# outside code spans (where nothing is markup) no "<" is left unescaped
	sed "s/\`[^\`]*\`//g" ev/report.md >ev.text &&
	test_grep ! "\(^\|[^\\]\)<" ev.text &&
	test_grep -F "\<img src=x onerror=alert(1)>" ev/report.md &&
	test_grep -F "\\<script>alert(1)\\</script>" ev/report.md &&
	test_grep -F "\\*b\\* \\[l\\](http://e) \\| c" ev/report.md &&
	test_grep -F "refused: \\<script>x\\</script> \\\`code\\\` \\_u\\_" ev/report.md &&
	test_grep ! "<script>" ev/report.html &&
	test_grep "&lt;script&gt;alert(1)&lt;/script&gt;" ev/report.html
'

test_expect_success $P 'a run.json that is not JSON: the records alone, with a warning, nothing leaked' '
	mkfabric badrun "{\"lb\":\"ecmp\"}" none 0.19 0.19 &&
	echo "{ not json" >badrun/run.json &&
	fs_expect 5 report badrun -o br --no-plots &&
	test_grep "the check .every planned job ran. could not judge" out &&
	test_grep "badrun/run.json: missing or unreadable; the report has the records only" err &&
	test_grep ! "LeakSanitizer\|ERROR: AddressSanitizer" err &&
	test_path_is_file br/report.md
'

test_done
