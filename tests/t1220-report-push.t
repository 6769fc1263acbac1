#!/usr/bin/env bash
test_description='fabscope report --push and --webhook end to end: the metrics of a nightly report
(per-lane figures, problems, acceptance, baseline regressions) read back from a real Pushgateway
in a group per plan and one per plan and lane, which the next night replaces (two nights, two
plans, per-node series bounded by --push-nodes, a lane not measured keeps its older group); the
JSON summary received by a webhook, and a failing webhook that keeps the report'
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

# snap: what the gateway holds now, into api.json, which metric, groups and gmetric read
snap() {
	test_http_get "$PGW/api/v1/metrics" >api.json
}

# metric NAME LABEL-FILTER: the values of the samples of the groups job=nightly, instance=lab-7
metric() {
	jq -r --arg n "$1" ".data[] | select(.labels.job == \"nightly\" and .labels.instance == \"lab-7\") |
		.[\$n].metrics[]? | select($2) | .value" api.json
}

# groups JOB: the gateway's groups of job JOB, one line each: plan rail plane (- for none)
groups() {
	jq -r --arg j "$1" '.data[] | select(.labels.job == $j) | .labels |
		"\(.plan // "-") \(.rail // "-") \(.plane // "-")"' api.json | sort
}

# gmetric JOB PLAN RAIL NAME LABEL-FILTER: the values of NAME in one group (RAIL - : the plan's own)
gmetric() {
	jq -r --arg j "$1" --arg p "$2" --arg r "$3" --arg n "$4" '.data[] |
		select(.labels.job == $j and .labels.plan == $p and (.labels.rail // "-") == $r) |
		.[$n].metrics[]? | select('"$5"') | .value' api.json | sort
}

# night DIR PLAN STARTED SLOW-NODE SLOW-GBPS: a results directory of plan PLAN (run.json's plan.path)
night() {
	mkfabric "$1" "{\"lb\":\"ecmp\"}" "$4" "$5" 0.19 &&
	jq --arg p "/etc/fabscope/$2.ini" --arg t "$3" ".plan = {path: \$p, text: \"\"} | .started = \$t" \
		"$1/run.json" >"$1/run.json+" && mv "$1/run.json+" "$1/run.json"
}

test_expect_success $P 'set up: a Pushgateway on loopback and two results directories' '
	ptp_spawn pgw.log prometheus-pushgateway --web.listen-address=127.0.0.1:$PORT_PGW \
		--persistence.file= --log.level=warn &&
	test_wait_for 10 test_http_get $PGW/-/ready >/dev/null &&
	mkfabric today "{\"lb\":\"ecmp\"}" h4 0.02 0.19 &&
	mkfabric yesterday "{\"lb\":\"ecmp\"}" none 0.02 0.19 &&
	printf "[bw]\nline_rate_gbps = 0.2\nmin_fraction = 0.9\n" >th.ini &&
	printf "[bw]\nline_rate_gbps = 0.2\nmin_fraction = 0.9\n[lat]\np99_us_max = 10\n" >all.ini
'

test_expect_success $P 'the nightly report pushes its metrics; they read back from the gateway' '
	fs_expect 1 report today --baseline yesterday --thresholds th.ini --no-plots -o r1 \
		--push $PGW --job nightly --instance lab-7 &&
	grep -q "^pushed: $PGW (job nightly: 1 plan group, 2 lane groups)$" out &&
	snap &&
	test "$(metric fabscope_lane_bandwidth_bytes_per_second ".labels.phase == \"pw\" and .labels.rail == \"1\"")" = 1.3125e+07 &&
	test "$(metric fabscope_lane_worst_pair_bandwidth_bytes_per_second ".labels.phase == \"pw\" and .labels.rail == \"1\"")" = 2.5e+06 &&
	test "$(metric fabscope_lane_best_pair_bandwidth_bytes_per_second ".labels.phase == \"pw\" and .labels.rail == \"1\"")" = 2.375e+07 &&
	test "$(metric fabscope_lane_latency_p50_seconds ".labels.phase == \"lat\"")" = 2e-06 &&
	test "$(metric fabscope_lane_worst_pair_latency_p50_seconds ".labels.phase == \"lat\"")" = 2.2e-06 &&
	test "$(metric fabscope_lane_latency_p99_seconds ".labels.phase == \"lat\"")" = 3.05e-06 &&
	test "$(metric fabscope_lane_pairs ".labels.phase == \"pw\" and .labels.rail == \"0\"")" = 6 &&
	test "$(metric fabscope_lane_suspects ".labels.rail == \"1\" and .labels.kind == \"node\"")" = 1 &&
	test "$(metric fabscope_run_suspects "true")" = 1 &&
	test "$(metric fabscope_acceptance_pass "true")" = 0 &&
	test "$(metric fabscope_acceptance_complete "true")" = 0 &&
	test "$(metric fabscope_baseline_regressions "true")" = 1 &&
	test "$(metric fabscope_check_pass ".labels.check == \"bw >= 0.9 x line rate, every pair\"")" = 0 &&
	# no per-node series without --push-nodes, and no run label of one run
	test -z "$(metric fabscope_node_bandwidth_bytes_per_second "true")" &&
	test -z "$(metric fabscope_suspect "true")" &&
	test -z "$(metric fabscope_lane_bandwidth_bytes_per_second ".labels.run")" &&
	test "$(metric fabscope_run_info "true" | wc -l)" = 3 &&
	test "$(metric fabscope_run_info ".labels.run_id == \"run-today\"" | wc -l)" = 3
'

test_expect_success $P 'a second night replaces the groups: the gateway holds the latest report' '
	fs_expect 0 report yesterday --thresholds all.ini --no-plots -o r2 --push $PGW --job nightly --instance lab-7 &&
	snap &&
	test "$(metric fabscope_lane_bandwidth_bytes_per_second ".labels.phase == \"pw\" and .labels.rail == \"1\"")" = 2.375e+07 &&
	test "$(metric fabscope_acceptance_pass "true")" = 1 &&
	test "$(metric fabscope_acceptance_complete "true")" = 1 &&
	test -z "$(metric fabscope_baseline_regressions "true")" &&
	test -z "$(metric fabscope_lane_suspects "true")" &&
	test "$(metric fabscope_run_info ".labels.run_id == \"run-yesterday\"" | wc -l)" = 3 &&
	test -z "$(metric fabscope_run_info ".labels.run_id == \"run-today\"")"
'

test_expect_success $P 'two nights of two plans: one group per plan and lane, tonight replaced last night' '
	night n1 nightly 2026-12-01T02:30:00Z h4 0.02 &&
	night n2 nightly 2026-12-02T02:30:00Z none 0.02 &&
	night w1 weekly 2026-12-01T04:00:00Z none 0.02 &&
	fs_expect 5 report n1 --no-plots -o rn1 --push $PGW --job fleet --push-nodes 2 &&
	fs_expect 5 report w1 --no-plots -o rw1 --push $PGW --job fleet &&
	fs_expect 5 report n2 --no-plots -o rn2 --push $PGW --job fleet --push-nodes 2 &&
	snap &&
	groups fleet >actual &&
	cat >expect <<-\EOF &&
	nightly - -
	nightly 0 0
	nightly 1 0
	weekly - -
	weekly 0 0
	weekly 1 0
	EOF
	test_cmp expect actual &&
	# every group of nightly is the second night: its id and start, its figures
	for r in - 0 1; do
		test "$(gmetric fleet nightly $r fabscope_run_info true)" = 1 &&
		test "$(gmetric fleet nightly $r fabscope_run_timestamp_seconds true)" = 1.7961786e+09 &&
		test -n "$(gmetric fleet nightly $r fabscope_run_info ".labels.run_id == \"run-n2\"")" || return 1
	done &&
	test "$(gmetric fleet nightly 1 fabscope_lane_worst_pair_bandwidth_bytes_per_second true)" = 2.375e+07 &&
	# the first night named h4 on rail 1 (its suspect, its slow median); the second night does not
	test -z "$(gmetric fleet nightly 1 fabscope_suspect true)" &&
	test "$(gmetric fleet nightly 1 fabscope_node_bandwidth_bytes_per_second true | wc -l)" = 2 &&
	test -z "$(gmetric fleet nightly 1 fabscope_node_bandwidth_bytes_per_second ".labels.node == \"h4\"")" &&
	# the other plan is its own groups, untouched by the nightly pushes, without per-node series
	test -n "$(gmetric fleet weekly - fabscope_run_info ".labels.run_id == \"run-w1\"")" &&
	test -z "$(gmetric fleet weekly 0 fabscope_node_bandwidth_bytes_per_second true)"
'

test_expect_success $P '--push-nodes N: at most N nodes a lane, the worst first; the suspects named' '
	fs_expect 5 report n1 --no-plots -o rn1b --push $PGW --job fleet2 --push-nodes 1 &&
	snap &&
	test "$(gmetric fleet2 nightly 1 fabscope_node_bandwidth_bytes_per_second ".labels.node == \"h4\"")" = 2.5e+06 &&
	test "$(gmetric fleet2 nightly 1 fabscope_node_bandwidth_bytes_per_second true | wc -l)" = 1 &&
	test "$(gmetric fleet2 nightly 0 fabscope_node_bandwidth_bytes_per_second true | wc -l)" = 1 &&
	test "$(gmetric fleet2 nightly 0 fabscope_node_latency_p50_seconds true | wc -l)" = 1 &&
	test "$(gmetric fleet2 nightly 1 fabscope_suspect ".labels.node == \"h4\" and .labels.kind == \"node\" and .labels.phase == \"pw\"")" = 1 &&
	fs_expect 2 report n1 --no-plots -o x --push $PGW --push-nodes 1025 &&
	ptp_one_error err "push-nodes" "1024" &&
	fs_expect 2 report n1 --no-plots -o x --push-nodes 2 &&
	ptp_one_error err "--push-nodes" "--push URL" &&
	! test -e x
'

test_expect_success $P 'a lane not measured tonight keeps its older group, its timestamp says so' '
	night m1 lanes 2026-12-01T02:30:00Z none 0.02 &&
	night m2 lanes 2026-12-02T02:30:00Z none 0.02 &&
	jq -c "select(.src.rail != 1)" m2/results.jsonl >m2/r && mv m2/r m2/results.jsonl &&
	fs_expect 5 report m1 --no-plots -o rm1 --push $PGW --job fleet &&
	fs_expect 5 report m2 --no-plots -o rm2 --push $PGW --job fleet &&
	snap &&
	test "$(gmetric fleet lanes - fabscope_run_timestamp_seconds true)" = 1.7961786e+09 &&
	test "$(gmetric fleet lanes 0 fabscope_run_timestamp_seconds true)" = 1.7961786e+09 &&
	test "$(gmetric fleet lanes 1 fabscope_run_timestamp_seconds true)" = 1.7960922e+09
'

test_expect_success $P 'names from the results are data: a long phase with quotes, a backslash and a newline, an odd plan' '
	night odd nightly 2026-12-01T02:30:00Z h4 0.02 &&
	ph=$(printf "p\"q\\\\r\nx%03000d" 0) &&
	jq -c --arg p "$ph" "if .phase == \"pw\" then .phase = \$p else . end" odd/results.jsonl >r &&
	mv r odd/results.jsonl &&
	jq --arg p "/etc/fab scope/nächt ly.v2.ini" ".plan.path = \$p" odd/run.json >r && mv r odd/run.json &&
	fs_expect 5 report odd --no-plots -o rodd --push $PGW --job odd --push-nodes 4 &&
	snap &&
	test "$(groups odd)" = "$(printf "nächt ly.v2 - -\nnächt ly.v2 0 0\nnächt ly.v2 1 0")" &&
	jq -e --arg p "$ph" "[.data[] | select(.labels.job == \"odd\") | .fabscope_lane_pairs.metrics[]? |
		select(.labels.test == \"bw\") | .labels.phase == \$p] == [true, true]" api.json >/dev/null &&
	jq -e --arg p "$ph" "[.data[] | select(.labels.job == \"odd\") | .fabscope_suspect.metrics[]? |
		select(.labels.phase == \$p and .labels.node == \"h4\")] | length == 1" api.json >/dev/null
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
