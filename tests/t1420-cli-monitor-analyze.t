#!/usr/bin/env bash
test_description='fabscope monitor analyze over HTTP: the agents'"'"' /metrics scraped interval after interval
(a loopback server that answers each GET with the next saved scrape), the NIC fault named, its
change POSTed to a webhook, the verdicts file in Prometheus text; an agent that does not answer
and one whose answer is over --max-body said in one line each while the analysis goes on'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq PERL_NET 'perl -MIO::Socket::INET -e 1'
test_require_in_ci TEST_TOOL FABSCOPE JQ PERL_NET
P=TEST_TOOL,FABSCOPE,JQ,PERL_NET
PORT=$(ptp_port 0)
PORT_DOWN=$(ptp_port 1)

unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

# serve N: (run in the background: it becomes the perl process, whose PID $! is) answer N requests on $PORT, a GET with the next of scrape-*.prom (then 404), a POST
# saved to hook-K.json, then exit
serve() {
	exec perl -MIO::Socket::INET -e '
		my ($port, $n) = @ARGV;
		$SIG{PIPE} = "IGNORE";
		my @files = sort glob("scrape-*.prom");
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $port, Listen => 8,
			ReuseAddr => 1) or die "listen: $!\n";
		open(my $ready, ">", "ready") or die; close $ready;
		local $SIG{ALRM} = sub { die "not all requests within 120 s\n" }; alarm 120;
		my ($gets, $posts) = (0, 0);
		for (1 .. $n) {
			my $c = $s->accept or die;
			my $req = <$c>;
			my ($len, $line) = (0);
			while (defined($line = <$c>)) { last if $line =~ /^\r?\n$/; $len = $1 if $line =~ /^Content-Length:\s*(\d+)/i }
			if ($req =~ /^POST/) {
				read($c, my $body, $len);
				open(my $f, ">", "hook-" . $posts++ . ".json") or die; print $f $body; close $f;
				print $c "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";
			} elsif ($gets < @files) {
				open(my $f, "<", $files[$gets++]) or die; local $/; my $body = <$f>; close $f;
				print $c "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " .
					length($body) . "\r\nConnection: close\r\n\r\n$body";
			} else {
				print $c "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
			}
			close $c;
		}
	' "$PORT" "$1"
}

# the server of a test before, if it still waits (its test failed early)
pid=
stop_server() {
	if test -n "$pid"; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	return 0
}

test_expect_success $P 'set up: a 12-host, 4-rail design, 4 intervals with a NIC dropping 2 %' '
	for r in 0 1 2 3; do
		for g in 1 2 3; do echo "switch l$g.$r tier=leaf rail=$r"; done
	done >fab.topo &&
	for k in 1 2 3 4; do echo "switch s$k tier=spine"; done >>fab.topo &&
	for r in 0 1 2 3; do
		for i in $(seq 1 12); do echo "link h$i:rail$r l$(((i - 1) / 4 + 1)).$r:h$i rail=$r"; done &&
		for g in 1 2 3; do
			for k in 1 2 3 4; do echo "link l$g.$r:s$k s$k:l$g.$r"; done
		done || return 1
	done >>fab.topo &&
	"$TEST_TOOL" localize-sim --topology fab.topo --peers 4 --buckets 4 --width 4 --probes 200 \
		--intervals 4 --loss 0.02:0.02 --busy 0 --seed 7 --write . --fault nic:h6:1 >sim.out &&
	test_path_is_file scrape-04.prom
'

test_expect_success $P 'scraped over HTTP: the NIC named, POSTed to the webhook, in the verdicts file' '
	stop_server &&
	rm -f ready &&
	{ serve 6 >serve.log 2>&1 & } && pid=$! &&
	test_atexit "kill $pid 2>/dev/null || :" &&
	test_wait_for 20 test -e ready &&
	test_expect_code 1 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --paths paths.jsonl \
		--metrics http://127.0.0.1:$PORT/metrics --count 4 --interval 0.05 \
		--webhook http://127.0.0.1:$PORT/hook --verdicts verdicts.prom --json out.jsonl 2>err &&
	wait $pid &&
	test_must_be_empty err &&
	jq -r "select(.event == \"named\") | \"\(.interval) \(.kind) \(.node) \(.rail)\"" out.jsonl >named &&
	echo "3 nic h6 1" >expect &&
	test_cmp expect named &&
	jq -e ".event == \"named\" and .kind == \"nic\" and .node == \"h6\" and .rail == 1 and
		(.confirmed | test(\"^a suspect in 3 intervals in a row\")) and .time != null" hook-0.json &&
	! test -e hook-1.json &&
	grep -v "^#" verdicts.prom >v &&
	echo "fabscope_nic_suspect{node=\"h6\",rail=\"1\",plane=\"0\"} 1" >expect &&
	test_cmp expect v &&
	test_grep "^# TYPE fabscope_link_suspect gauge" verdicts.prom
'

test_expect_success $P 'an agent that does not answer: said once a scrape, the others read' '
	stop_server &&
	rm -f ready &&
	{ serve 3 >serve.log 2>&1 & } && pid=$! &&
	test_atexit "kill $pid 2>/dev/null || :" &&
	test_wait_for 20 test -e ready &&
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --metrics http://127.0.0.1:$PORT_DOWN/metrics \
		--metrics http://127.0.0.1:$PORT/metrics --count 2 --interval 0.05 >out.jsonl 2>err &&
	wait $pid &&
	test_line_count = 3 err &&
	test_grep "GET http://127.0.0.1:$PORT_DOWN/metrics failed: .*check that it runs and listens there" err &&
	test_line_count = 2 out.jsonl &&
	jq -s -e "all(.[]; .probes > 100000)" out.jsonl
'

test_expect_success $P 'an answer over --max-body is refused in one line' '
	stop_server &&
	rm -f ready &&
	{ serve 2 >serve.log 2>&1 & } && pid=$! &&
	test_atexit "kill $pid 2>/dev/null || :" &&
	test_wait_for 20 test -e ready &&
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --metrics http://127.0.0.1:$PORT/metrics \
		--count 1 --interval 0.05 --max-body 4K >out.jsonl 2>err &&
	wait $pid &&
	test_grep "the answer is over 4096 bytes; raise the bound" err &&
	jq -s -e "length == 1 and .[0].groups == 0" out.jsonl
'

test_done
