#!/usr/bin/env bash
test_description='what a new user of bw, lat and the command line trips over (issue 26): the
end of a bidirectional size without a stray control message; a size the link cannot carry said
before the run, and a run that measured nothing is no success; what was measured before the
server went away is kept as "cut"; perftest and iperf3 flags named with what to give here; lat
without bw'\''s options; a refusing peer exits 4; an unknown command is one line with a guess;
version --json; devices --json without RDMA is still a document'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-netns.sh"

test_lazy_prereq ETHTOOL 'command -v ethtool'
test_require_in_ci FABSCOPE JQ TEST_HOOKS ROOT NETNS ETHTOOL
P=FABSCOPE,JQ
PORT=$(ptp_port 0)
PORT2=$(ptp_port 1)

# one_line FILE TEXT...: FILE is one line "fabscope...: ..." that holds each TEXT
one_line() {
	local f=$1 p
	shift
	if [ "$(wc -l <"$f")" != 1 ] || ! grep -q "^fabscope[a-z ]*: " "$f"; then
		echo "one_line: $f should be one error line; it holds:" >&2
		cat "$f" >&2
		return 1
	fi
	for p; do
		grep -qF -e "$p" "$f" && continue
		echo "one_line: '$(cat "$f")' does not say '$p'" >&2
		return 1
	done
}

test_expect_success $P,TEST_HOOKS 'bw -b: the server reads nothing of the next message at the end of a size (it once called "bye" unexpected)' '
	# the hook makes the server send its "finished" only after the client'\''s and then
	# pause, so that the client'\''s "bye" is there when the old code looked once more
	FABSCOPE_TEST_BW_FIN_HOLD_MS=300 ptp_server srv.log bw $PORT &&
	srv=$ptp_pid &&
	for i in 1 2 3; do
		"$FABSCOPE" bw 127.0.0.1 -p $PORT -b -q 2 -D 0.3 --json >b$i.json || return 1
	done &&
	test_wait_for 10 eval "test \$(grep -c \": done\$\" srv.log) = 3" &&
	test_kill_pid $srv &&
	! grep "unexpected control message" srv.log &&
	jq -e "[.[] | select(.dir == \"both\")] | length == 1" b3.json >/dev/null
'

test_expect_success $P,ROOT,NETNS,ETHTOOL 'a message the link cannot carry within --timeout or -D: said before the run (exit 2)' '
	ns=fs$$t &&
	test_atexit "ip netns del $ns 2>/dev/null" &&
	ip netns add $ns &&
	ip -n $ns tuntap add mode tap name fstap0 &&
	ip -n $ns addr add 10.81.0.1/24 dev fstap0 &&
	ip -n $ns link set fstap0 up &&
	ip netns exec $ns ethtool -s fstap0 speed 10 duplex full &&
	test "$(ip netns exec $ns cat /sys/class/net/fstap0/speed)" = 10 &&
	test_expect_code 2 ip netns exec $ns "$FABSCOPE" bw 10.81.0.2 -s 1G 2>err &&
	one_line err "a 1G message takes at least 859 s at the 10 Mb/s of fstap0, longer than --timeout 10" "give a smaller -s, or --timeout" &&
	test_expect_code 2 ip netns exec $ns "$FABSCOPE" bw 10.81.0.2 -s 4M 2>err &&
	one_line err "a 4M message takes at least 3.36 s at the 10 Mb/s of fstap0: -D 2 would measure none" &&
	test_expect_code 2 ip netns exec $ns "$FABSCOPE" lat 10.81.0.2 -s 64M 2>err &&
	one_line err "64M message takes at least 53.7 s" &&
	# what the link carries is not refused (nothing listens there: the connect fails, 4)
	test_expect_code 4 ip netns exec $ns "$FABSCOPE" bw 10.81.0.2 -s 64K --timeout 1 2>err &&
	one_line err "cannot connect to 10.81.0.2"
'

test_expect_success $P,ROOT,NETNS 'a link of unknown rate: a timed window without one message is exit 1 and says so; no message at all within --timeout says why' '
	netns_pair_up 100mbit &&
	netns_spawn b srv2.log "$FABSCOPE" bw --server -p $PORT2 --max-mem 1G &&
	netns_wait_listen b $PORT2 $netns_pid &&
	test_expect_code 1 netns_exec a "$FABSCOPE" bw $NETNS_ADDR_B -p $PORT2 -s 64M -D 1 --timeout 30 -o e.json >out 2>err &&
	one_line err "measured nothing: a flow completed no 64M message inside its timed window (-D 1)" "give a longer -D, -n, or a smaller -s" &&
	jq -s -e "length == 2 and all(.[]; .status == \"error\" and (.error | test(\"measured nothing\")) and .metrics.msgs == 0)" e.json >/dev/null &&
	test_grep "error: measured nothing" out &&
	test_expect_code 4 netns_exec a "$FABSCOPE" bw $NETNS_ADDR_B -p $PORT2 -s 64M -n 1 --timeout 3 2>err &&
	one_line err "no 64M message completed within --timeout 3 s: at this link'\''s rate one takes longer" "give a smaller -s or a larger --timeout"
'

test_expect_success $P 'the server interrupted mid-test: the client keeps what it measured, status "cut" (bw and lat)' '
	for t in bw lat; do
		ptp_server s-$t.log $t $PORT &&
		srv=$ptp_pid &&
		{ "$FABSCOPE" $t 127.0.0.1 -p $PORT -D 60 --warmup 0s -o c-$t.json >c-$t.out 2>c-$t.err & cl=$!; } &&
		ptp_wait_log 10 "client 127.0.0.1" s-$t.log &&
		sleep 1 &&
		kill -INT $srv &&
		{ wait $cl; rc=$?; } &&
		test $rc = 4 &&
		jq -s -e "length >= 1 and all(.[]; .status == \"cut\" and (.error | test(\"cut short, what was measured until then: server 127.0.0.1:$PORT went away\")))" c-$t.json >/dev/null &&
		if [ $t = bw ]; then
			jq -s -e "all(.[]; .metrics.msgs > 0 and .metrics.bw_gbps > 0)" c-bw.json >/dev/null
		else
			jq -s -e ".[0].metrics.iters > 0 and .[0].metrics.lat_us.p50 > 0" c-lat.json >/dev/null
		fi &&
		test_grep "cut: cut short" c-$t.out || return 1
		wait $srv 2>/dev/null
	done
'

test_expect_success $P 'perftest and iperf3 flags: one line naming what to give here (exit 2)' '
	for f in "-P 4:iperf3'\''s -P N, parallel streams: here -q N" "-J:iperf3'\''s -J: here --json" \
		 "-c host:iperf3'\''s -c HOST: give HOST as the argument" "-R:iperf3'\''s -R" \
		 "-l 1M:iperf3'\''s -l LEN: here -s SIZE" "--qp=4:perftest'\''s --qp=N: here -q N" \
		 "--report_gbits:here --report-gbits" "-F:perftest'\''s -F"; do
		test_expect_code 2 "$FABSCOPE" bw ${f%%:*} 127.0.0.1 2>err &&
		one_line err "unknown option" "${f#*:}" || return 1
	done &&
	test_expect_code 2 "$FABSCOPE" bw -t 10 127.0.0.1 2>err &&
	one_line err "-t is the transport here (tcp or verbs), not iperf3'\''s time: give -D 10 for 10 seconds" &&
	test_expect_code 2 "$FABSCOPE" bw 127.0.0.1 --output=bandwidth 2>err &&
	one_line err "perftest'\''s --output=bandwidth (print only that number) is not an option here" "write ./bandwidth" &&
	! test -e bandwidth &&
	test_expect_code 2 "$FABSCOPE" capture -d mlx5_0 -w x.pcap 2>err &&
	one_line err "capture takes the interface, -i IF, as tcpdump"
'

test_expect_success $P 'lat has no bw options: --post-list, -b, -q refused in one line; its help shows none of them' '
	for f in "--post-list 4" -b "-q 2" "--tx-depth 4" "--cq-mod 2"; do
		test_expect_code 2 "$FABSCOPE" lat $f 127.0.0.1 2>err &&
		one_line err "it is an option of bw" || return 1
	done &&
	"$FABSCOPE" help lat >h &&
	! grep -e "--post-list\|--bidirectional\|--tx-depth\|--cq-mod\|bw default\|--flows" h &&
	test_grep "round trips to measure (default 10000" h &&
	"$FABSCOPE" help bw >hb &&
	test_grep -e "--post-list" hb &&
	tr -s " \n" "  " <hb | grep -F "in the collectives, -b is the smallest size"
'

test_expect_success $P '-d chooses the RDMA device in every command that chooses one; letters that differ say so in --help' '
	for c in bw lat allreduce alltoall "probe polarization" "probe pfc"; do
		"$FABSCOPE" $c --help >h || return 1
		grep -E "^ +-d, --device DEV" h || { echo "$c --help has no -d, --device" >&2; return 1; }
	done &&
	test_expect_code 2 "$FABSCOPE" allreduce -d mlx5_0 -n 2 -b 8 -e 8 2>err &&
	one_line err "--device is for -t verbs, not -t tcp" &&
	"$FABSCOPE" allreduce --help | tr -s " \n" "  " >ha &&
	grep -F "nccl-tests'\'' -n, the iterations, is -i here" ha &&
	grep -F "in bw, -b is bidirectional" ha &&
	grep -F "in capture and pcap, -f is a filter" ha &&
	"$FABSCOPE" capture --help | tr -s " \n" "  " >hc &&
	grep -F "in bw and lat, -s is the message size" hc &&
	grep -F "in the collectives, -f is the size step factor" hc
'

test_expect_success $P 'lat against a bw server is a refusal: exit 4, one line' '
	ptp_server srv3.log bw $PORT &&
	srv=$ptp_pid &&
	test_expect_code 4 "$FABSCOPE" lat 127.0.0.1 -p $PORT 2>err &&
	one_line err "refused: this server runs '\''bw'\'', the client asked for '\''lat'\''" &&
	test_kill_pid $srv
'

test_expect_success $P 'an unknown command is one line with a guess; version --json is JSON' '
	test_expect_code 2 "$FABSCOPE" nosuch >out 2>err &&
	test_must_be_empty out &&
	one_line err "'\''nosuch'\'' is not a fabscope command; '\''fabscope help'\'' lists them" &&
	test_expect_code 2 "$FABSCOPE" lta 2>err &&
	one_line err "did you mean '\''lat'\''?" &&
	"$FABSCOPE" version --json >v.json &&
	jq -e ".tool == \"fabscope\" and (.version | type) == \"string\" and (.transports | index(\"tcp\")) != null and .test_hooks == true" v.json >/dev/null &&
	test_expect_code 2 "$FABSCOPE" version extra 2>err &&
	one_line err "version takes no arguments"
'

test_expect_success $P 'devices --json is a JSON document with RDMA or without (the exit code is the same as without --json)' '
	{ "$FABSCOPE" devices >/dev/null 2>&1; want=$?; } &&
	{ "$FABSCOPE" devices --json >d.json 2>err; rc=$?; } &&
	test $rc = $want &&
	jq -e ".schema == \"fabscope.devices/1\" and (.devices | type) == \"array\"" d.json >/dev/null &&
	if [ $rc = 3 ]; then
		jq -e ".rdma == false and (.error | length) > 0" d.json >/dev/null &&
		one_line err "$(jq -r .error d.json)"
	else
		test $rc = 0
	fi
'

test_done
