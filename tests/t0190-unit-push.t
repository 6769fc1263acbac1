#!/usr/bin/env bash
test_description='report/push.c against a real Prometheus Pushgateway on loopback (labels that
need escaping, grouping labels with a slash, PUT replacing the group, the gateway'\''s own message
for a malformed body) and a small perl HTTP listener as a webhook (method, headers, body, retries
on 5xx only, redirects not followed, secrets kept out of messages); a dead, a silent and an
interrupted endpoint fail in bounded time with exit 4 or 130, bad URLs with exit 2'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq PUSHGATEWAY 'command -v prometheus-pushgateway'
test_lazy_prereq PERL 'command -v perl && perl -MIO::Socket::INET -MHTTP::Tiny -e 1'
test_require_in_ci TEST_TOOL PUSHGATEWAY JQ PERL
P=TEST_TOOL
PG=TEST_TOOL,PUSHGATEWAY,JQ,PERL

# loopback only: no proxy in the way (libcurl honours these)
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

PORT_PGW=$(ptp_port 0)		# the Pushgateway
PORT_DEAD=$(ptp_port 1)		# nothing ever listens here
PORT_SILENT=$(ptp_port 2)	# accepts, never answers
PORT_HOOK=$(ptp_port 3)		# the webhook listener, one per test
PGW=http://127.0.0.1:$PORT_PGW
HOOK=http://127.0.0.1:$PORT_HOOK

# push ARGS...: test-tool push ARGS, bounded (20 s), stdout in out, stderr in err, exit code in
# $rc, seconds taken in $secs; always succeeds
push() {
	local t0=$EPOCHREALTIME
	timeout 20 "$TEST_TOOL" push "$@" >out 2>err
	rc=$?
	secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
	echo "push $*: exit $rc after $secs s; stderr:" && cat err
	return 0
}

# expect_rc CODE: the last push exited CODE
expect_rc() {
	[[ $rc == "$1" ]] && return 0
	echo "expected exit code $1, got $rc" >&2
	return 1
}

# one_line WORD...: err is exactly one line, "test-tool push: ...", holding every WORD
one_line() {
	local n w line
	n=$(wc -l <err)
	if ((n != 1)); then
		echo "one_line: err should be one line, it has $n" >&2
		return 1
	fi
	line=$(cat err)
	[[ $line == "test-tool push: "?* ]] || { echo "one_line: not 'test-tool push: ...'" >&2; return 1; }
	for w; do
		[[ $line == *"$w"* ]] && continue
		echo "one_line: does not say '$w'" >&2
		return 1
	done
}

# secs_between MIN MAX: the last push took MIN <= s < MAX seconds (a bound, not a speed test)
secs_between() {
	awk -v s="$secs" -v lo="$1" -v hi="$2" 'BEGIN { exit !(s >= lo && s < hi) }' && return 0
	echo "took $secs s, expected at least $1 s and less than $2 s" >&2
	return 1
}

# group JOB INSTANCE: the Pushgateway's group with these labels (no instance label counts as ""), from /api/v1/metrics, in ./group
group() {
	test_http_get "$PGW/api/v1/metrics" >api.json &&
	jq -e --arg j "$1" --arg i "$2" \
		'.status == "success" and ([.data[] | select(.labels.job == $j and (.labels.instance // "") == $i)] | length) == 1' \
		api.json >/dev/null &&
	jq --arg j "$1" --arg i "$2" '.data[] | select(.labels.job == $j and (.labels.instance // "") == $i)' \
		api.json >group
}

# The webhook listener: perl hook.pl PORT DIR SPEC...; the request N (from 1) goes to DIR/N.head
# (request line and headers, CRLF removed) and DIR/N.body before it is answered; answer N by
# SPEC N (the last one repeats): CODE, CODE=LOCATION (a redirect), CODE+big (a 100 KB body),
# CODE+html (a web page).
cat >hook.pl <<'EOF'
use strict;
use warnings;
use IO::Socket::INET;
my ($port, $dir, @specs) = @ARGV;
my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $port, Listen => 16,
	ReuseAddr => 1, Proto => "tcp") or die "listen on $port: $!\n";
my $n = 0;
while (my $c = $s->accept) {
	binmode $c;
	local $SIG{ALRM} = sub { die "request $n: not read within 10 s\n" };
	alarm 10;
	my ($head, $buf) = ("", "");
	while ($head !~ /\r\n\r\n/) {
		sysread($c, $buf, 4096) or last;
		$head .= $buf;
	}
	my $body = $head =~ s/^.*?\r\n\r\n//sr;
	$head =~ s/\r\n\r\n.*//s;
	my ($len) = $head =~ /^content-length:\s*(\d+)/mi;
	while (length($body) < ($len // 0)) {
		sysread($c, $buf, 65536) or last;
		$body .= $buf;
	}
	alarm 0;
	$n++;
	open(my $h, ">", "$dir/$n.head") or die; print $h $head =~ s/\r\n/\n/gr, "\n"; close $h;
	open(my $b, ">:raw", "$dir/$n.body") or die; print $b $body; close $b;
	my $spec = $specs[$n - 1] // $specs[-1];
	my ($code, $loc) = split /=/, $spec, 2;
	my $text = "answer $n: $code from the test listener\nsecond line\n";
	my $type = "text/plain";
	if ($code =~ s/\+big$//) { $text = ("x" x 300) . "\n" . ("y" x 100000) . "\n" }
	if ($code =~ s/\+html$//) { $type = "text/html"; $text = "<!DOCTYPE html>\n<p>$code</p>\n" }
	print $c "HTTP/1.1 $code Test\r\nContent-Type: $type\r\nContent-Length: ",
		length($text), "\r\n", defined $loc ? "Location: $loc\r\n" : "",
		"Connection: close\r\n\r\n", $text;
	close $c;
}
EOF

# hook SPEC...: a listener on PORT_HOOK answering by SPEC, requests in ./req (made empty)
hook() {
	rm -rf req && mkdir req &&
	! ptp_is_listening $PORT_HOOK &&
	ptp_spawn hook.log perl hook.pl $PORT_HOOK req "$@" &&
	hook_pid=$ptp_pid &&
	ptp_wait_listen $PORT_HOOK $hook_pid || { cat hook.log >&2; return 1; }
}

# requests N: the listener got exactly N requests; stops it
requests() {
	local got
	got=$(find req -name "*.head" | wc -l)
	ptp_reap $hook_pid
	[[ $got == "$1" ]] && return 0
	echo "the listener got $got requests, expected $1; its log:" >&2
	cat hook.log >&2
	return 1
}

test_expect_success $P 'push name/label: invalid characters to _, a leading digit gets a _, UTF-8 as one' '
	"$TEST_TOOL" push name "fabscope.bw-gbits" "ok:name_1" "9lives" "" "héllo wörld" "a b/c" >actual &&
	printf "%s\n" fabscope_bw_gbits ok:name_1 _9lives _ h_llo_w_rld a_b_c >expect &&
	test_cmp expect actual &&
	"$TEST_TOOL" push label "ok:name_1" "Rail 0" "0" >actual &&
	printf "%s\n" ok_name_1 Rail_0 _0 >expect &&
	test_cmp expect actual
'

test_expect_success $P 'push value: backslash, double quote and newline escaped, invalid UTF-8 as U+FFFD' '
	"$TEST_TOOL" push value "plain" "a\\b" "say \"hi\"" "two
lines" "é €" "$(printf "bad\377byte")" "" >actual &&
	{
		printf "%s\n" plain "a\\\\b" "say \\\"hi\\\"" "two\\nlines" "é €" &&
		printf "bad\357\277\275byte\n\n"
	} >expect &&
	test_cmp expect actual
'

test_expect_success $PG 'set up: a Pushgateway on loopback, in memory, in the foreground' '
	! ptp_is_listening $PORT_PGW &&
	ptp_spawn pgw.log prometheus-pushgateway --web.listen-address=127.0.0.1:$PORT_PGW \
		--persistence.file= --log.level=warn &&
	pgw_pid=$ptp_pid &&
	{ test_wait_for 10 test_http_get $PGW/-/ready >/dev/null || { cat pgw.log >&2; false; }; }
'

JOB='fabscope nightly #1?'
INSTANCE='rack 7/node:01'
COMMENT='say "hi"\ to
the "gateway" é€'

test_expect_success $PG 'push metrics with labels that need escaping, job and instance that need encoding' '
	name=$("$TEST_TOOL" push name "fabscope.bw-gbits") &&
	value=$("$TEST_TOOL" push value "$COMMENT") &&
	cat >metrics <<-EOF &&
	# HELP $name Bandwidth between a pair.
	# TYPE $name gauge
	$name{pair="a-b",comment="$value"} 97.5
	$name{pair="b-a",comment=""} 96.25
	fabscope_lat_us{pair="a-b",quantile="0.99"} 3.25
	EOF
	push gateway $PGW/ "$JOB" "$INSTANCE" <metrics &&
	expect_rc 0 && test_must_be_empty out && test_must_be_empty err &&
	printf "other_metric 1\n" >other &&
	push gateway $PGW "$JOB" "other" <other && expect_rc 0 &&
	printf "no_instance 1\n" >noinst &&
	push gateway $PGW "$JOB" <noinst && expect_rc 0
'

test_expect_success $PG 'read back from /api/v1/metrics: values and labels as pushed' '
	group "$JOB" "$INSTANCE" &&
	cat group &&
	jq -e --arg c "$COMMENT" --arg j "$JOB" --arg i "$INSTANCE" "
		.fabscope_bw_gbits.type == \"GAUGE\" and
		.fabscope_bw_gbits.help == \"Bandwidth between a pair.\" and
		(.fabscope_bw_gbits.metrics | length) == 2 and
		(.fabscope_bw_gbits.metrics[] | select(.labels.pair == \"a-b\") |
			.value == \"97.5\" and .labels.comment == \$c and
			.labels.job == \$j and .labels.instance == \$i) and
		(.fabscope_bw_gbits.metrics[] | select(.labels.pair == \"b-a\") |
			.value == \"96.25\" and .labels.comment == \"\") and
		(.fabscope_lat_us.metrics[0] | .value == \"3.25\" and .labels.quantile == \"0.99\")
	" group &&
	group "$JOB" other && jq -e ".other_metric.metrics[0].value == \"1\"" group &&
	group "$JOB" "" && jq -e ".no_instance.metrics[0].value == \"1\"" group
'

test_expect_success $PG 'a second push replaces the whole group (PUT), other groups stay' '
	printf "# TYPE fabscope_runs_total counter\nfabscope_runs_total 2\n" >second &&
	push gateway $PGW "$JOB" "$INSTANCE" <second && expect_rc 0 &&
	group "$JOB" "$INSTANCE" &&
	jq -e ".fabscope_runs_total.metrics[0].value == \"2\" and
	       .fabscope_bw_gbits == null and .fabscope_lat_us == null" group &&
	group "$JOB" other && jq -e ".other_metric.metrics[0].value == \"1\"" group
'

test_expect_success $PG 'label values ".." and "" and a job with a slash go through the base64 form' '
	printf "dots 1\n" | push gateway $PGW "job/with/slashes" ".." && expect_rc 0 &&
	group "job/with/slashes" ".." && jq -e ".dots.metrics[0].value == \"1\"" group &&
	printf "empty 1\n" | push gateway $PGW "j2" "" && expect_rc 0 &&
	group "j2" "" && jq -e ".empty.metrics[0].value == \"1\"" group
'

test_expect_success $PG 'no trailing newline: exit 4, the gateway'\''s message in one line, not retried, group kept' '
	printf "fabscope_runs_total 3" >nonl &&
	push -v --retries=2 --backoff=100 gateway $PGW "$JOB" "$INSTANCE" <nonl &&
	expect_rc 4 &&
	one_line "PUT to the Pushgateway at $PGW/metrics/job/" "HTTP 400" \
		"text format parsing error" "unexpected end of input stream" &&
	group "$JOB" "$INSTANCE" &&
	jq -e ".fabscope_runs_total.metrics[0].value == \"2\"" group
'

test_expect_success $PG 'invalid syntax: exit 4, the gateway'\''s message in one line' '
	printf "m{a=\"x} 1\n" >bad &&
	push gateway $PGW "$JOB" "$INSTANCE" <bad &&
	expect_rc 4 &&
	one_line "HTTP 400" "text format parsing error in line 1" "fix what produced it"
'

test_expect_success $PG 'a base URL with /metrics in it: exit 4 (404), the hint says so' '
	printf "m 1\n" | push gateway $PGW/metrics j &&
	expect_rc 4 &&
	one_line "HTTP 404" "without /metrics"
'

test_expect_success $P 'a dead endpoint: exit 4 after 3 attempts, in one line, within the backoff bounds' '
	! ptp_is_listening $PORT_DEAD &&
	printf "m 1\n" >m1 &&
	push --retries=2 --backoff=200 --timeout=1000 gateway http://127.0.0.1:$PORT_DEAD j <m1 &&
	expect_rc 4 &&
	one_line "PUT to the Pushgateway at http://127.0.0.1:$PORT_DEAD/metrics/job/j" \
		"after 3 attempts" "Couldn'\''t connect" "check that it runs and listens there" &&
	secs_between 0.6 10
'

test_expect_success $P 'a dead endpoint with -v and the default retries (2): one log line per retry, then the error' '
	push -v --backoff=50 gateway http://127.0.0.1:$PORT_DEAD j <m1 &&
	expect_rc 4 &&
	test $(wc -l <err) = 3 &&
	test_grep "attempt 1 of 3 failed.*trying again in 50 ms" err &&
	test_grep "attempt 2 of 3 failed.*trying again in 100 ms" err &&
	tail -n 1 err >last && test_grep "failed after 3 attempts" last
'

test_expect_success $P 'no retries (--retries=0): one attempt' '
	push -v --retries=0 --backoff=5000 gateway http://127.0.0.1:$PORT_DEAD j <m1 &&
	expect_rc 4 && one_line "PUT to the Pushgateway" && test_grep ! "after .* attempts" err &&
	secs_between 0 4
'

test_expect_success $P,PERL 'a silent endpoint: exit 4, timed out, within timeout x attempts + backoff' '
	ptp_silent_listener silent.log $PORT_SILENT &&
	silent_pid=$ptp_pid &&
	push --timeout=500 --retries=1 --backoff=100 gateway http://127.0.0.1:$PORT_SILENT j <m1 &&
	expect_rc 4 &&
	one_line "after 2 attempts" "timed out" "it had 500 ms for each try" &&
	secs_between 1.0 6
'

# interrupt PID: SIGINT to PID, true once it is gone (again and again: a background job ignores
# SIGINT until the tool has installed its handler, early under a slow sanitizer build)
interrupt() {
	kill -INT "$1" 2>/dev/null
	sleep 0.05
	! kill -0 "$1" 2>/dev/null
}

test_expect_success $P,PERL 'SIGINT during a push to the silent endpoint: exit 130 at once, one line' '
	ptp_spawn int.err "$TEST_TOOL" push --timeout=15000 gateway http://127.0.0.1:$PORT_SILENT j &&
	int_pid=$ptp_pid &&
	sleep 0.5 &&
	kill -0 $int_pid &&
	test_wait_for 5 interrupt $int_pid &&
	{ wait $int_pid; echo $? >int.rc; } &&
	ptp_reap $int_pid &&
	test "$(cat int.rc)" = 130 &&
	cp int.err err && one_line "interrupted by a signal"
'

test_expect_success $P 'bad URLs: exit 2 with one line, before any connection' '
	for url in ftp://127.0.0.1:$PORT_PGW 127.0.0.1:$PORT_PGW localhost:9091 http:// "" \
		"http://127.0.0.1:$PORT_DEAD/?a=b" "http://bad host/"; do
		push gateway "$url" j <m1 && expect_rc 2 && one_line "URL" || return 1
	done &&
	push gateway ftp://h/ j <m1 && one_line "'\''ftp://h/'\'' is not an http:// or https:// URL" &&
	push webhook ftp://127.0.0.1:$PORT_HOOK/ <m1 && expect_rc 2 && one_line "webhook" &&
	push webhook "" <m1 && expect_rc 2 && one_line "no URL" &&
	push gateway http://127.0.0.1:$PORT_DEAD "" <m1 && expect_rc 2 && one_line "no job name"
'

test_expect_success $P,PERL 'webhook: one POST with Content-Type application/json and the body as given' '
	hook 200 &&
	printf "{\"run\": \"nightly\", \"ok\": true, \"note\": \"é\\\\n\"}\n" >summary.json &&
	push webhook "$HOOK/hooks/nightly?channel=fab" <summary.json &&
	expect_rc 0 && test_must_be_empty out && test_must_be_empty err &&
	requests 1 &&
	cat req/1.head &&
	head -n 1 req/1.head >line &&
	echo "POST /hooks/nightly?channel=fab HTTP/1.1" >expect && test_cmp expect line &&
	test_grep -i "^content-type: application/json$" req/1.head &&
	test_grep -i "^user-agent: fabscope/" req/1.head &&
	test_grep -i "^content-length: $(wc -c <summary.json)$" req/1.head &&
	test_grep ! -i "^expect:" req/1.head &&
	cmp summary.json req/1.body
'

test_expect_success $P,PERL 'webhook: 500, 500, then 200 - retried, exit 0, three requests' '
	hook 500 500 200 &&
	push -v --retries=2 --backoff=50 webhook $HOOK/hook <summary.json &&
	expect_rc 0 && test_must_be_empty out &&
	requests 3 &&
	test $(grep -c "attempt [12] of 3 failed (HTTP 500: answer [12]: 500 from the test listener)" err) = 2 &&
	cmp summary.json req/3.body
'

test_expect_success $P,PERL 'webhook: 503 every time - exit 4 after the retries, with the answer'\''s first line' '
	hook 503 &&
	push --retries=1 --backoff=50 webhook $HOOK/hook <summary.json &&
	expect_rc 4 &&
	requests 2 &&
	one_line "POST to the webhook at $HOOK/hook failed after 2 attempts" \
		"HTTP 503: answer 2: 503 from the test listener" "see its log" &&
	test_grep ! "second line" err
'

test_expect_success $P,PERL 'webhook: 404 is not retried - exit 4, one request' '
	hook 404 &&
	push --retries=3 --backoff=50 webhook $HOOK/nosuch <summary.json &&
	expect_rc 4 &&
	requests 1 &&
	one_line "POST to the webhook at $HOOK/nosuch failed: HTTP 404" "check the URL'\''s path"
'

test_expect_success $P,PERL 'webhook: a redirect is not followed - exit 4, one request, the hint names the target' '
	hook "302=$HOOK/elsewhere" 200 &&
	push webhook $HOOK/hook <summary.json &&
	expect_rc 4 &&
	requests 1 &&
	one_line "HTTP 302" "redirects are not followed" "$HOOK/elsewhere"
'

test_expect_success $P,PERL 'webhook: user:password and the query are sent, but kept out of the message' '
	hook 403 &&
	push webhook "http://user:s3cret@127.0.0.1:$PORT_HOOK/hook?token=t0ken" <summary.json &&
	expect_rc 4 &&
	requests 1 &&
	test_grep "^POST /hook?token=t0ken " req/1.head &&
	test_grep -i "^authorization: basic $(printf user:s3cret | base64)$" req/1.head &&
	one_line "http://127.0.0.1:$PORT_HOOK/hook?..." "HTTP 403" &&
	test_grep ! -e s3cret -e t0ken err
'

test_expect_success $P,PERL 'webhook: a huge answer - the message keeps one short line of it' '
	hook "400+big" &&
	push webhook $HOOK/hook <summary.json &&
	expect_rc 4 &&
	requests 1 &&
	one_line "HTTP 400: xxxxxxxxxx" "..." &&
	test $(wc -c <err) -lt 600 &&
	test_grep ! yyyy err
'

test_expect_success $P,PERL 'webhook: an HTML answer - the message has the status, not the page' '
	hook "502+html" &&
	push --retries=0 webhook $HOOK/hook <summary.json &&
	expect_rc 4 &&
	requests 1 &&
	one_line "failed: HTTP 502; the server failed" &&
	test_grep ! -e DOCTYPE -e "<p>" err
'

test_expect_success $P 'webhook: a dead endpoint - exit 4 after the retries' '
	push --retries=1 --backoff=50 webhook http://127.0.0.1:$PORT_DEAD/hook <summary.json &&
	expect_rc 4 &&
	one_line "POST to the webhook" "after 2 attempts" "Couldn'\''t connect"
'

test_expect_success $PG 'the Pushgateway is still up, and stops on SIGTERM' '
	test_http_get $PGW/-/ready >/dev/null &&
	kill -0 $pgw_pid &&
	ptp_reap $pgw_pid &&
	! kill -0 $pgw_pid 2>/dev/null
'

test_done
