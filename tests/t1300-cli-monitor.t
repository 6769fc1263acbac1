#!/usr/bin/env bash
test_description='fabscope monitor on loopback: its usage errors (one line, exit 2 or 3), two agents
probing each other with /metrics and /healthz, the bearer token (401 without, compared by the
library path) and TLS, HTTP methods and paths refused, hostile datagrams to the responder and the
source ports refused and counted (and no answer to an address outside the peers file), SIGHUP and a
bad file, SIGTERM and SIGINT; the deployment files checked by their tools: systemd-analyze verify,
promtool check rules, the DaemonSet structurally, the dashboard against what an agent exports'
# asan: always: feeds untrusted bytes to C code: hostile UDP datagrams, HTTP requests, peers files
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-pfc.sh"

test_lazy_prereq CURL 'command -v curl'
test_lazy_prereq PERL 'perl -MIO::Socket::INET -e 1'
test_lazy_prereq OPENSSL 'command -v openssl'
test_lazy_prereq SYSTEMD_ANALYZE 'command -v systemd-analyze'
test_lazy_prereq MAN_DB 'command -v man && man --version'
test_lazy_prereq PROMTOOL 'command -v promtool'
test_lazy_prereq PYYAML 'python3 -c "import yaml"'
test_require_in_ci FABSCOPE CURL PERL OPENSSL SYSTEMD_ANALYZE MAN_DB PROMTOOL PYYAML
P=FABSCOPE,CURL

A=127.44.0.1 B=127.44.0.2
HA=$(ptp_port 0) HB=$(ptp_port 1) UDP=$(ptp_port 2) S0=$(ptp_port 3) S3=$(ptp_port 6)
MON=(--port $UDP --sport-range $S0-$S3 --sport-buckets 4 --timeout 2)
printf "a rail0=$A leaf=l1\nb rail0=$B leaf=l1\n" >peers

# start NAME HTTP-PORT [OPTS...]: agent NAME (pid in $ptp_pid), until its /healthz answers
start() {
	local n=$1 h=$2 ip
	ip=$([ $n = a ] && echo $A || echo $B)
	shift 2
	ptp_spawn agent.$n.log "$FABSCOPE" monitor --peers peers --node $n --listen $ip:$h "${MON[@]}" "$@" &&
	eval "pid_$n=\$ptp_pid" &&
	test_wait_for 10 curl -sfk -o /dev/null "$(proto "$@")://$ip:$h/healthz" || { cat agent.$n.log >&2; return 1; }
}
proto() { case " $* " in *" --tls-cert "*) echo https ;; *) echo http ;; esac; }

# value FILE SERIES: the value of one series in a /metrics text
value() { sed -n "s/^$2 //p" "$1"; }

test_expect_success $P 'usage errors: one line each, exit 2' '
	while read -r args; do
		echo "args: $args" &&
		test_expect_exit 2 "$FABSCOPE" monitor $args 2>err && test $(wc -l <err) = 1 || return 1
	done <<-EOF
	--node a
	--peers peers --node nosuch
	--peers peers --node a --sport-range 5-9
	--peers peers --node a --sport-range 40000-30000
	--peers peers --node a --sport-range 40000-49999
	--peers peers --node a --port 40001 --sport-range 40000-40015
	--peers peers --node a --sport-range 40000-40003 --sport-buckets 5
	--peers peers --node a --rate 0
	--peers peers --node a --rate 5000
	--peers peers --node a --listen nohostport
	--peers peers --node a --listen 127.0.0.1:99999
	--peers peers --node a --tls-cert peers
	--peers peers --node bad/name
	--peers peers --node a extra
	--peers /nonexistent --node a
	--peers peers --node a --transport tcp
	EOF
'

# this host has no RDMA port with 127.44.0.1 (nor any RDMA, here); a build without rdma-core says so
test_expect_success $P '--transport verbs or both without an RDMA port for the lane: one line, exit 3' '
	for t in verbs both; do
		test_expect_exit 3 "$FABSCOPE" monitor --peers peers --node a --listen $A:$HA "${MON[@]}" --transport $t 2>err &&
		test $(wc -l <err) = 1 &&
		test_grep -E "^fabscope monitor: --transport $t: (rail 0 plane 0 \($A\): |this fabscope was built without rdma-core)" err || return 1
	done
'

test_expect_success $P 'an address not of this host, a port taken: one line, exit 3' '
	printf "a rail0=192.0.2.1\nb rail0=$B\n" >peers.far &&
	test_expect_exit 3 "$FABSCOPE" monitor --peers peers.far --node a --listen $A:$HA "${MON[@]}" 2>err &&
	test $(wc -l <err) = 1 && test_grep "cannot bind UDP 192.0.2.1:$UDP" err &&
	ptp_silent_listener l.log $HA &&
	test_expect_exit 3 "$FABSCOPE" monitor --peers peers --node a --listen 127.0.0.1:$HA "${MON[@]}" 2>err &&
	test_grep "cannot serve HTTP on 127.0.0.1:$HA" err && test $(wc -l <err) = 1 &&
	ptp_reap $ptp_pid
'

test_expect_success $P 'a peer with no agent: its probes are refused by its host, counted unreachable and lost' '
	start a $HA &&
	test_wait_for 10 sh -c "curl -sf http://$A:$HA/metrics >m && grep -q \"^fabscope_probe_unreachable_total{node=.a.,peer=.b.,rail=.0.,plane=.0.} [1-9]\" m" &&
	test_wait_for 10 sh -c "curl -sf http://$A:$HA/metrics | grep -q \"^fabscope_probe_lost_total{node=.a.,peer=.b.,.*} [1-9]\""
'

test_expect_success $P 'two agents: /healthz ok, sent grows, nothing lost once both are up, RTTs counted' '
	start b $HB &&
	curl -sf http://$A:$HA/healthz >h && test "$(cat h)" = ok &&
	sleep 3 &&
	curl -sf http://$A:$HA/metrics >m1 &&
	test_wait_for 10 sh -c "curl -sf http://$A:$HA/metrics >m2 && test \$(sed -n \"s/^fabscope_probe_sent_total{node=.a.,peer=.b.,rail=.0.,plane=.0.,sport_bucket=.3.} //p\" m2) -gt \$(sed -n \"s/^fabscope_probe_sent_total{node=.a.,peer=.b.,rail=.0.,plane=.0.,sport_bucket=.3.} //p\" m1)" &&
	test "$(grep "^fabscope_probe_lost_total{node=\"a\",peer=\"b\"" m1 | sort)" = "$(grep "^fabscope_probe_lost_total{node=\"a\",peer=\"b\"" m2 | sort)" &&
	test "$(grep -c "^fabscope_probe_sent_total{node=\"a\",peer=\"b\",rail=\"0\",plane=\"0\",sport_bucket=\"[0-3]\"}" m2)" = 4 &&
	test "$(value m2 "fabscope_probe_rtt_seconds_bucket{node=\"a\",peer=\"b\",rail=\"0\",plane=\"0\",sport_bucket=\"0\",le=\"+Inf\"}")" -gt 0 &&
	test_grep -x "fabscope_monitor_sport_buckets{node=\"a\"} 4" m2 &&
	u=$(value m1 "fabscope_probe_unreachable_total{node=\"a\",peer=\"b\",rail=\"0\",plane=\"0\"}") &&
	test "$(value m2 "fabscope_probe_unreachable_total{node=\"a\",peer=\"b\",rail=\"0\",plane=\"0\"}")" = "$u" &&
	test_grep "^# TYPE fabscope_probe_rtt_seconds histogram$" m2 &&
	test_grep "le=\"1e-06\"" m2 && test_grep "le=\"0.001\"" m2 && test_grep "le=\"10\"" m2
'

test_expect_success $P 'HTTP: other methods 405, other paths 404, a body 413' '
	test "$(curl -s -o /dev/null -w "%{http_code}" -X POST http://$A:$HA/metrics)" = 405 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" http://$A:$HA/nope)" = 404 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -X GET --data-binary @peers http://$A:$HA/metrics)" = 413 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" http://$A:$HA/healthz)" = 200
'

# udp_send ADDR PORT FROM-ADDR HEX...: one datagram per HEX from FROM-ADDR; prints what comes
# back within 0.5 s of each ("-" for nothing)
udp_send() {
	perl -MIO::Socket::INET -e '
		my ($to, $port, $from, @pk) = @ARGV;
		my $s = IO::Socket::INET->new(Proto => "udp", LocalAddr => $from, PeerAddr => $to, PeerPort => $port) or die "$!\n";
		for my $h (@pk) {
			$s->send(pack("H*", $h));
			my $r = ""; my $rin = ""; vec($rin, fileno($s), 1) = 1;
			if (select($rin, undef, undef, 0.5)) { $s->recv($r, 100) }
			print length($r) ? unpack("H*", $r) : "-", "\n";
		}' "$@"
}

test_expect_success $P,PERL 'hostile datagrams: refused and counted, never answered from outside the file; probing goes on' '
	req=4653 && req=${req}4d50 && req=${req}01010000 && req=${req}0102030405060708 && req=${req}0000000000000001 && req=${req}0000000000000000 &&
	# a well-formed request from a peer of the file is answered with the same bytes, type 2
	udp_send $A $UDP $B $req >out &&
	test "$(cat out)" = "$(echo $req | sed "s/^\(.\{10\}\)01/\102/")" &&
	curl -sf http://$A:$HA/metrics >before &&
	udp_send $A $UDP 127.44.0.9 $req 00 "${req}00" "$(echo $req | sed "s/^4653/4654/")" \
		"$(echo $req | sed "s/^\(.\{10\}\)01/\103/")" >out &&
	test "$(sort -u out)" = "-" &&
	for p in $S0 $S3; do
		udp_send $A $p $B $(echo $req | sed "s/^\(.\{10\}\)01/\102/") 0000 ffffffff >out &&
		test "$(sort -u out)" = "-" || return 1
	done &&
	curl -sf http://$A:$HA/metrics >after &&
	test "$(value after "fabscope_monitor_refused_total{node=\"a\",what=\"request\"}")" -ge $(($(value before "fabscope_monitor_refused_total{node=\"a\",what=\"request\"}") + 5)) &&
	test "$(value after "fabscope_monitor_refused_total{node=\"a\",what=\"reply\"}")" -ge $(($(value before "fabscope_monitor_refused_total{node=\"a\",what=\"reply\"}") + 6)) &&
	curl -sf http://$A:$HA/healthz >/dev/null && kill -0 $pid_a
'

test_expect_success $P,PERL 'an agent without --transport verbs: questions for its UD QP, answers, a request with aux refused' '
	curl -sf http://$A:$HA/metrics >before &&
	q=4653 && q=${q}4d50 && q=${q}01030000 && q=${q}0102030405060708 && q=${q}0000000000000001 && q=${q}00000000 &&
	udp_send $A $UDP $B ${q}00000000 "$(echo ${q}00000000 | sed "s/^\(.\{10\}\)03/\104/")" \
		"$(echo ${q}00000011 | sed "s/^\(.\{10\}\)03/\101/")" >out &&
	test "$(sort -u out)" = "-" &&
	curl -sf http://$A:$HA/metrics >after &&
	test "$(value after "fabscope_monitor_refused_total{node=\"a\",what=\"request\"}")" = $(($(value before "fabscope_monitor_refused_total{node=\"a\",what=\"request\"}") + 3)) &&
	! grep -q "^fabscope_probe_ud_\|^fabscope_monitor_ud_" after
'

test_expect_success $P 'peers file: SIGHUP takes a new one; a bad one is refused and the old peers stay' '
	printf "a rail0=$A leaf=l1\nb rail0=$B leaf=l1\nc rail0=127.44.0.3 leaf=l2\n" >peers.new && cp peers.new peers &&
	kill -HUP $pid_a &&
	test_wait_for 10 sh -c "curl -sf http://$A:$HA/metrics | grep -qx \"fabscope_monitor_reloads_total{node=.a.,result=.ok.} [12]\"" &&
	curl -sf http://$A:$HA/metrics >m &&
	test_grep -x "fabscope_monitor_peers{node=\"a\",kind=\"cross\"} 1" m &&
	echo "b rail0=not-an-address" >>peers &&
	test_wait_for 10 sh -c "curl -sf http://$A:$HA/metrics | grep -qx \"fabscope_monitor_reloads_total{node=.a.,result=.error.} 1\"" &&
	test_grep "not an IP address" agent.a.log &&
	test_grep "goes on probing the 2 peers it had" agent.a.log &&
	curl -sf http://$A:$HA/healthz >/dev/null
'

test_expect_success $P 'SIGTERM stops an agent with exit 0, SIGINT with 130' '
	kill -TERM $pid_a && { wait $pid_a; rc=$?; test $rc = 0; } &&
	kill -INT $pid_b && { wait $pid_b; rc=$?; test $rc = 130; } &&
	ptp_reap $pid_a && ptp_reap $pid_b
'

test_expect_success $P,OPENSSL 'bearer token and TLS: /metrics wants the token, /healthz does not; HTTPS through the library' '
	printf "a rail0=$A leaf=l1\nb rail0=$B leaf=l1\n" >peers &&
	echo s3cret-token >tok && chmod 644 tok &&
	test_expect_exit 3 "$FABSCOPE" monitor --peers peers --node a --listen $A:$HA --token-file tok "${MON[@]}" 2>err &&
	test_grep "can be read or written by others" err &&
	chmod 600 tok &&
	openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 -subj /CN=fabscope-test 2>/dev/null &&
	start a $HA --token-file tok --tls-cert cert.pem --tls-key key.pem &&
	test "$(curl -sk -o /dev/null -w "%{http_code}" https://$A:$HA/metrics)" = 401 &&
	curl -sk -D hdr -o /dev/null https://$A:$HA/metrics && test_grep -i "^WWW-Authenticate: Bearer" hdr &&
	test "$(curl -sk -o /dev/null -w "%{http_code}" -H "Authorization: Bearer s3cret-tokeN" https://$A:$HA/metrics)" = 401 &&
	test "$(curl -sk -o /dev/null -w "%{http_code}" -H "Authorization: Bearer s3cret-token-and-more" https://$A:$HA/metrics)" = 401 &&
	test "$(curl -sk -o /dev/null -w "%{http_code}" -H "Authorization: Basic czNjcmV0LXRva2Vu" https://$A:$HA/metrics)" = 401 &&
	curl -sfk -H "Authorization: Bearer s3cret-token" https://$A:$HA/metrics >m &&
	test_grep "^fabscope_monitor_info{node=\"a\"" m &&
	test "$(curl -sk https://$A:$HA/healthz)" = "ok" &&
	test_must_fail curl -sf http://$A:$HA/healthz &&
	ptp_reap $pid_a
'

test_expect_success $P 'NIC counters from a fixture tree: an mlx5 port under its RDMA device, pause time in seconds' '
	mlx5 nic && eth nic rx_prio3_pause=11 rx_prio3_pause_duration=2500 &&
	mv nic/ethtool/eth2 nic/ethtool/lo &&
	ln -s ../../devices/pci0000:00/0000:3b:00.0/net/eth2 nic/sys/class/net/lo &&
	echo lo >nic/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0 &&
	hw nic np_ecn_marked_roce_packets=5 np_cnp_sent=4 out_of_sequence=2 &&
	start a $HA --counters-root nic &&
	curl -sf http://$A:$HA/metrics >m &&
	test_grep -x "fabscope_nic_pfc_received_frames_total{node=\"a\",device=\"mlx5_0\",port=\"1\",rail=\"0\",plane=\"0\",priority=\"3\"} 11" m &&
	test_grep -x "fabscope_nic_pfc_received_pause_seconds_total{node=\"a\",device=\"mlx5_0\",port=\"1\",rail=\"0\",plane=\"0\",priority=\"3\"} 0.0025" m &&
	test_grep -x "fabscope_nic_cnp_sent_total{node=\"a\",device=\"mlx5_0\",port=\"1\",rail=\"0\",plane=\"0\"} 4" m &&
	test "$(grep -c "^# TYPE fabscope_nic_pfc_received_frames_total counter$" m)" = 1
'

test_expect_success $P 'the Grafana dashboard names only metrics an agent exports' '
	start b $HB &&
	test_wait_for 10 sh -c "curl -sf http://$A:$HA/metrics | grep -q \"^fabscope_probe_rtt_seconds_count{node=.a.,peer=.b.\"" &&
	curl -sf http://$A:$HA/metrics | sed -n "s/^\([a-z_:]*\)[{ ].*/\1/p" | sort -u >exported &&
	"$SRCDIR/ci/check-dashboard" "$SRCDIR/deploy/grafana/fabscope-monitor.json" >named &&
	test "$(wc -l <named)" -ge 10 &&
	comm -23 named exported >missing && test_must_be_empty missing
'

# (verify runs man for Documentation=man:fabscope-monitor(1): the page of this tree is found
# through MANPATH, as an installed one would be)
test_expect_success SYSTEMD_ANALYZE,MAN_DB 'the systemd unit passes systemd-analyze verify (its ExecStart the built binary)' '
	mkdir -p unit manroot/man1 &&
	cp "$SRCDIR/man/fabscope-monitor.1" manroot/man1/ &&
	sed "s|/usr/bin/fabscope|$FABSCOPE|" "$SRCDIR/deploy/systemd/fabscope-monitor.service" >unit/fabscope-monitor.service &&
	MANPATH=$PWD/manroot systemd-analyze verify unit/fabscope-monitor.service >out 2>&1 &&
	test_must_be_empty out &&
	sed "s/^ExecStart=.*/ExecStart=fabscope monitor/; s/^Restart=on-failure/Restart=sometimes/" unit/fabscope-monitor.service >unit/bad.service &&
	test_must_fail systemd-analyze verify unit/bad.service >err 2>&1 && test_grep . err
'

test_expect_success PROMTOOL 'the alerting rules pass promtool check rules; a broken expression does not' '
	promtool check rules "$SRCDIR/deploy/prometheus/fabscope-monitor-rules.yml" >out &&
	test_grep "SUCCESS: 6 rules found" out &&
	sed "s/> 0.001/> > 0.001/" "$SRCDIR/deploy/prometheus/fabscope-monitor-rules.yml" >bad.yml &&
	test_must_fail promtool check rules bad.yml >/dev/null 2>&1
'

test_expect_success PYYAML 'the DaemonSet: a structural check of its schema and of what the monitor needs' '
	"$SRCDIR/ci/check-daemonset" "$SRCDIR/deploy/kubernetes/fabscope-monitor-daemonset.yaml" >out &&
	test_grep -x "ok: Namespace, ConfigMap, DaemonSet" out &&
	sed "s/hostNetwork: true/hostNetwork: \"yes\"/; s/drop: \[\"ALL\"\]/drop: [\"ALL\"]\n              add: [\"SYS_ADMIN\"]/; s/readOnly: true/readonly: true/" \
		"$SRCDIR/deploy/kubernetes/fabscope-monitor-daemonset.yaml" >bad.yaml &&
	test_expect_exit 1 "$SRCDIR/ci/check-daemonset" bad.yaml >out &&
	test_grep "hostNetwork: true or false is wanted" out &&
	test_grep "SYS_ADMIN" out &&
	test_grep "unknown key .readonly." out
'

test_done
