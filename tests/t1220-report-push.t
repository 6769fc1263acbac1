#!/usr/bin/env bash
test_description='fabscope report --push and --webhook end to end: the metrics of a nightly report
(per-rail medians, problems, acceptance, baseline regressions) read back from a real Pushgateway,
the JSON summary received by a webhook, and a failing webhook that keeps the report'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq PUSHGATEWAY 'command -v prometheus-pushgateway'
test_lazy_prereq PERL_HTTP 'perl -MHTTP::Tiny -MIO::Socket::INET -e 1'
test_require_in_ci FABSCOPE JQ PUSHGATEWAY PERL_HTTP
P=FABSCOPE,JQ,PUSHGATEWAY,PERL_HTTP
PORT_PGW=$(ptp_port 0)
PORT_HOOK=$(ptp_port 1)
PGW=http://127.0.0.1:$PORT_PGW

unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

http_get() {
	perl -MHTTP::Tiny -e '
		my $r = HTTP::Tiny->new(timeout => 5)->get($ARGV[0]);
		$r->{status} == 200 or die "GET $ARGV[0]: $r->{status} $r->{reason}\n";
		print $r->{content};
	' "$1"
}

# metric NAME LABEL-FILTER: the value of one sample of the group job=nightly, instance=lab-7
metric() {
	http_get "$PGW/api/v1/metrics" |
	jq -r --arg n "$1" ".data[] | select(.labels.job == \"nightly\" and .labels.instance == \"lab-7\") |
		.[\$n].metrics[]? | select($2) | .value"
}

test_expect_success $P 'set up: a Pushgateway on loopback and two results directories' '
	ptp_spawn pgw.log prometheus-pushgateway --web.listen-address=127.0.0.1:$PORT_PGW \
		--persistence.file= --log.level=warn &&
	test_wait_for 10 http_get $PGW/-/ready >/dev/null &&
	mkfabric today "{\"lb\":\"ecmp\"}" h4 0.02 0.19 &&
	mkfabric yesterday "{\"lb\":\"ecmp\"}" none 0.02 0.19 &&
	printf "[bw]\nline_rate_gbps = 0.2\nmin_fraction = 0.9\n" >th.ini &&
	printf "[bw]\nline_rate_gbps = 0.2\nmin_fraction = 0.9\n[lat]\np99_us_max = 10\n" >all.ini
'

test_expect_success $P 'the nightly report pushes its metrics; they read back from the gateway' '
	fs_expect 1 report today --baseline yesterday --thresholds th.ini --no-plots -o r1 \
		--push $PGW --job nightly --instance lab-7 &&
	grep -q "^pushed: $PGW (job nightly)$" out &&
	test "$(metric fabscope_lane ".labels.phase == \"pw\" and .labels.rail == \"1\" and .labels.stat == \"median\"")" = 0.105 &&
	test "$(metric fabscope_lane ".labels.phase == \"pw\" and .labels.rail == \"1\" and .labels.stat == \"min\"")" = 0.02 &&
	test "$(metric fabscope_lane ".labels.phase == \"lat\" and .labels.stat == \"median\" and .labels.unit == \"us\"")" = 2 &&
	test "$(metric fabscope_run_problems ".labels.what == \"suspects\"")" = 1 &&
	test "$(metric fabscope_acceptance_pass "true")" = 0 &&
	test "$(metric fabscope_acceptance_complete "true")" = 0 &&
	test "$(metric fabscope_baseline_regressions "true")" = 1 &&
	test "$(metric fabscope_check_pass ".labels.check == \"bw >= 0.9 x line rate, every pair\"")" = 0
'

test_expect_success $P 'a second night replaces the group: the gateway holds the latest report' '
	fs_expect 0 report yesterday --thresholds all.ini --no-plots -o r2 --push $PGW --job nightly --instance lab-7 &&
	test "$(metric fabscope_lane ".labels.phase == \"pw\" and .labels.rail == \"1\" and .labels.stat == \"median\"")" = 0.19 &&
	test "$(metric fabscope_acceptance_pass "true")" = 1 &&
	test "$(metric fabscope_acceptance_complete "true")" = 1 &&
	test -z "$(metric fabscope_baseline_regressions "true")"
'

# hook PORT CODE BODYFILE: a one-request HTTP listener that saves the body and answers CODE
hook() {
	perl -MIO::Socket::INET -e '
		my ($port, $code, $out) = @ARGV;
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $port, Listen => 4,
			ReuseAddr => 1) or die "listen: $!\n";
		local $SIG{ALRM} = sub { die "no request within 20 s\n" }; alarm 20;
		my $c = $s->accept;
		my ($len, $line) = (0);
		while (defined($line = <$c>)) { last if $line =~ /^\r?\n$/; $len = $1 if $line =~ /^Content-Length:\s*(\d+)/i }
		read($c, my $body, $len);
		open(my $f, ">", $out) or die; print $f $body; close $f;
		print $c "HTTP/1.1 $code X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
		close $c;
	' "$@"
}

test_expect_success $P 'the webhook receives the JSON summary' '
	ptp_spawn hook.log hook $PORT_HOOK 200 body.json &&
	ptp_wait_listen $PORT_HOOK $ptp_pid &&
	fs_expect 1 report today --thresholds th.ini --no-plots -o r3 --webhook http://127.0.0.1:$PORT_HOOK/fabscope &&
	grep -q "^posted: http://127.0.0.1:$PORT_HOOK/fabscope$" out &&
	jq -e ".schema == \"fabscope.report/1\" and .acceptance.pass == false and (.runs[0].suspects | length) == 1" body.json >/dev/null &&
	jq -S . body.json >a && jq -S . r3/summary.json >b && test_cmp b a
'

test_expect_success $P 'a webhook that fails: exit 4, one line, the report written and unchanged' '
	ptp_spawn hook2.log hook $PORT_HOOK 404 body2.json &&
	ptp_wait_listen $PORT_HOOK $ptp_pid &&
	fs_expect 4 report yesterday --thresholds all.ini --no-plots -o r4 --webhook http://127.0.0.1:$PORT_HOOK/x &&
	ptp_one_error err "404" &&
	test -s r4/report.md && test -s r4/summary.json
'

test_done
