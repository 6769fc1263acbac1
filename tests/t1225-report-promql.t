#!/usr/bin/env bash
test_description='the PromQL of fabscope-nightly(7) answers its questions on what fabscope pushes:
seven nights of reports pushed to a real Pushgateway (a pair confirmed as suspect on nights 2, 4 and
6, another new on night 7, a node under half its lane on nights 3, 5 and 7, a lane measured on
nights 1-6 only), the gateway read back after each push as Prometheus would scrape it (honor_labels),
and every query of the page, taken from the page, run by promtool on those series; promtool check
metrics finds nothing to say of the pushed families'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq PUSHGATEWAY 'command -v prometheus-pushgateway'
test_lazy_prereq PROMTOOL 'command -v promtool'
test_lazy_prereq PERL_HTTP 'perl -MHTTP::Tiny -e 1'
test_require_in_ci FABSCOPE JQ PUSHGATEWAY PROMTOOL PERL_HTTP
P=FABSCOPE,JQ,PUSHGATEWAY,PROMTOOL,PERL_HTTP
PORT_PGW=$(ptp_port 0)
PGW=http://127.0.0.1:$PORT_PGW
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

# confirmed DIR A B: a latency pair A-B on rail 0 at 9 us, high again on its re-test (confirmed)
confirmed() {
	sed -i "/\"job\":\"lat\/lat\/0\/$2>$3\"/d" "$1/results.jsonl" &&
	latrec "$1" lat 0 "$2" "$3" 9.0 9.5 &&
	printf '{"schema":"fabscope.record/1","test":"lat","transport":"tcp","msg_size_bytes":64,"scope":"aggregate","status":"ok","phase":"lat","job":"lat/lat/0/%s>%s/retest","retest_of":"lat/lat/0/%s>%s","src":{"node":"%s","rail":0,"plane":0},"dst":{"node":"%s","rail":0,"plane":0},"metrics":{"lat_us":{"p50":8.8,"p99":9.9}}}\n' \
		"$2" "$3" "$2" "$3" "$2" "$3" >>"$1/results.jsonl"
}

test_expect_success $P 'seven nights pushed; the gateway read back after each' '
	ptp_spawn pgw.log prometheus-pushgateway --web.listen-address=127.0.0.1:$PORT_PGW \
		--persistence.file= --log.level=warn &&
	test_wait_for 10 test_http_get $PGW/-/ready >/dev/null &&
	for k in 1 2 3 4 5 6 7; do
		slow=none &&
		case $k in 3|5|7) slow=h4 ;; esac &&
		mkfabric night$k "{\"lb\":\"ecmp\"}" $slow 0.02 0.19 &&
		# night k started k-1 days after the epoch: promtool'"'"'s clock
		jq ".plan = {path: \"/etc/fabscope/nightly.ini\", text: \"\"} |
			.started = \"1970-01-0${k}T00:00:00Z\"" night$k/run.json >r && mv r night$k/run.json &&
		case $k in 2|4|6) confirmed night$k h1 h4 ;; 7) confirmed night$k h2 h3 ;; esac &&
		if test $k -lt 7; then
			for p in "h1 h2" "h1 h3" "h1 h4" "h2 h3" "h2 h4" "h3 h4"; do
				bwrec night$k pw 2 $p 0.19 || return 1
			done
		fi &&
		{ "$FABSCOPE" report night$k --no-plots -o r$k --push $PGW --job fleet --push-nodes 4 \
			>out$k 2>err$k; test $? -le 5; } &&
		test_grep "^pushed: " out$k &&
		test_http_get $PGW/metrics >scrape$k || return 1
	done &&
	# two more days of the gateway holding night 7, and no night
	cp scrape7 scrape8 && cp scrape7 scrape9 &&
	jq -r ".runs[0].suspects[] | select(.retest.status == \"confirmed\") | \"\(.node)-\(.peer)\"" r7/summary.json >conf &&
	test "$(cat conf)" = h2-h3
'

# series: promtool'"'"'s input_series from scrape1..scrape9 (a day apart), as Prometheus scraping
# the gateway with honor_labels keeps them: the fabscope_ families, instance="" dropped
series() {
	perl -e '
		my (%v, @order);
		for my $d (0 .. $#ARGV) {
			open(my $f, "<", $ARGV[$d]) or die "$ARGV[$d]: $!\n";
			while (<$f>) {
				next unless /^(fabscope_\w+)\{(.*)\} (\S+)$/;
				my ($name, $l, $val) = ($1, $2, $3);
				my %lab;
				$lab{$1} = $2 while $l =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
				delete $lab{instance} if $lab{instance} eq "";
				my $key = $name . "{" . join(",", map { "$_=\"$lab{$_}\"" } sort keys %lab) . "}";
				push @order, $key unless $v{$key};
				$v{$key}[$d] = $val;
			}
		}
		for my $key (@order) {
			(my $q = $key) =~ s/\x27/\x27\x27/g;
			print "      - series: \x27$q\x27\n        values: \x27",
				join(" ", map { $v{$key}[$_] // "_" } 0 .. $#ARGV), "\x27\n";
		}
	' scrape1 scrape2 scrape3 scrape4 scrape5 scrape6 scrape7 scrape8 scrape9
}

# queries: the PromQL blocks of fabscope-nightly(7)'"'"'s PROMQL section, one file each: q1, q2, ...
queries() {
	perl -e '
		local $/; my $t = <>;
		my ($sec) = $t =~ /^\.SH PROMQL\n(.*?)^\.SH /ms or die "no PROMQL section\n";
		my $n = 0;
		while ($sec =~ /^\.RS\n\.nf\n(.*?)^\.fi\n\.RE$/msg) {
			(my $q = $1) =~ s/\\-/-/g;
			open(my $f, ">", "q" . ++$n) or die; print $f $q; close $f;
		}
		print "$n\n";
	' "$SRCDIR/man/fabscope-nightly.7"
}

# expr_test N EVAL-TIME: the promql_expr_test of query qN at EVAL-TIME, its expected samples on stdin
expr_test() {
	echo "      - expr: |" &&
	sed "s/^/          /" q$1 &&
	echo "        eval_time: $2" &&
	echo "        exp_samples:" &&
	sed "s/^/          /"
}

test_expect_success $P 'the page has seven queries; promtool finds each answer on the pushed series' '
	test "$(queries)" = 7 &&
	J="job=\\\"fleet\\\",plan=\\\"nightly\\\"" &&
	{
		printf "rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1d\n    input_series:\n" &&
		series &&
		printf "    promql_expr_test:\n" &&
		# since last night (night 7 against 6): rail 1'"'"'s median fell to 0.105/0.19 (h4 slow)
		expr_test 1 6d <<-EOF &&
		- labels: "{$J,phase=\"pw\",plane=\"0\",rail=\"1\"}"
		  value: 0.5526315789473685
		EOF
		expr_test 2 6d <<-EOF &&
		[]
		EOF
		# new tonight: h2-h3; h1-h4 (nights 2, 4, 6) is not confirmed tonight
		expr_test 3 6d <<-EOF &&
		- labels: "fabscope_suspect{$J,kind=\"pair\",node=\"h2\",peer=\"h3\",phase=\"lat\",plane=\"0\",rail=\"0\",status=\"confirmed\",test=\"lat\"}"
		  value: 1
		EOF
		# repeat offenders: h1 (its pair with h4) on 3 of the last 7 nights, h2 once
		expr_test 4 6d <<-EOF &&
		- labels: "{$J,node=\"h1\",plane=\"0\",rail=\"0\"}"
		  value: 3
		EOF
		# two nights sooner (night 5), only 2 of 7: no repeat offender yet
		expr_test 4 4d <<-EOF &&
		[]
		EOF
		expr_test 5 6d <<-EOF &&
		- labels: "{$J,node=\"h4\",phase=\"pw\",plane=\"0\",rail=\"1\"}"
		  value: 3
		EOF
		# rail 2, measured until night 6: its group is older than the plan'"'"'s on night 7
		expr_test 6 6d <<-EOF &&
		- labels: "fabscope_run_timestamp_seconds{$J,plane=\"0\",rail=\"2\"}"
		  value: 432000
		EOF
		expr_test 6 5d <<-EOF &&
		[]
		EOF
		# no night after night 7 (6d): said after 26 hours, not before
		expr_test 7 7d <<-EOF &&
		[]
		EOF
		expr_test 7 8d <<-EOF
		- labels: "{$J}"
		  value: 172800
		EOF
	} >test.yml &&
	{ promtool test rules test.yml >out 2>&1 || { cat out >&2; false; }; }
'

test_expect_success $P 'promtool check metrics: every pushed family passes Prometheus'"'"' linter' '
	mkfabric lint "{\"lb\":\"ecmp\"}" h4 0.02 0.19 &&
	confirmed lint h1 h4 &&
	mkpfc lintpfc "{\"lb\":\"spray\"}" 1 &&
	{ "$FABSCOPE" report lint lintpfc --no-plots -o rl --push $PGW --job lint --push-nodes 4 >out 2>err;
	  test $? -le 5; } &&
	test_http_get $PGW/metrics | grep "^\(# [A-Z]* \)\?fabscope_" >lint.txt &&
	for f in lane_bandwidth_bytes_per_second lane_latency_p99_seconds node_latency_p50_seconds suspect \
		pfc_max_paused_ratio run_timestamp_seconds run_info check_pass; do
		test_grep "^fabscope_$f{" lint.txt || return 1
	done &&
	promtool check metrics <lint.txt >out 2>&1 &&
	test_must_be_empty out &&
	# the linter does look: a quantile label on a gauge is refused
	sed "s/^\(fabscope_lane_bandwidth_bytes_per_second{\)/\1quantile=\"0.5\",/" lint.txt >bad.txt &&
	test_must_fail promtool check metrics <bad.txt >out 2>&1 &&
	test_grep "quantile" out
'

test_expect_success $P 'promtool does judge: a wrong expectation fails' '
	sed "0,/value: 3$/s//value: 4/" test.yml >wrong.yml &&
	! cmp -s test.yml wrong.yml &&
	test_must_fail promtool test rules wrong.yml >out 2>&1 &&
	test_grep "FAILED" out
'

test_done
