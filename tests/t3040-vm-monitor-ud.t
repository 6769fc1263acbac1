#!/usr/bin/env bash
test_description='fabscope monitor --transport verbs between two Soft-RoCE nodes: each agent learns
the other'"'"'s UD responder QP over UDP and probes it from 4 UD QPs (4 source-port buckets); /metrics
and --jsonl show UD probes sent and answered with RTTs in every bucket, the clock they were timed
with (rxe has no completion timestamps: software), the probes on the wire from distinct UDP source
ports (a capture on the bridge, read by fabscope pcap), UDP and UD side by side (--transport both);
with the peer'"'"'s agent stopped, its UD probes count lost'
# asan: always: feeds untrusted bytes to C code: UD probes and replies from peers, the UD QP questions and answers over UDP
. "$(dirname "$0")/test-lib.sh"

# one Soft-RoCE guest at a time: qemu TCG emulates 2 vCPUs on the host's cores, and two guests
# at once would starve each other's time limits
test_holds vm
test_cpus 2
. "$TEST_DIRECTORY/lib-vm.sh"

test_lazy_prereq CURL 'command -v curl'
test_require_in_ci VM FABSCOPE JQ CURL TCPDUMP TEST_HOOKS
P=VM,FABSCOPE,JQ,CURL,TCPDUMP,TEST_HOOKS	# FABSCOPE_TEST_UD_MAX_AHS: a test build

# series FILE NAME PEER: "BUCKET VALUE" of NAME{...,peer="PEER",...} per sport_bucket, in bucket order
series() {
	sed -n "s/^$2{.*peer=\"$3\".*sport_bucket=\"\([0-9]*\)\"} \([0-9.e+-]*\)$/\1 \2/p" "$1" | sort -n
}
# total FILE NAME PEER: the sum of series
total() { series "$@" | awk '{ n += $2 } END { print n + 0 }'; }

test_expect_success $P 'boot 2 rxe nodes: agents probe each other over UD, then one is stopped' '
	vm_script -n 2 -t 420 - <<-\EOF
	printf "n1 rail0=10.1.0.1 leaf=l1\nn2 rail0=10.1.0.2 leaf=l1\n" >/tmp/peers
	MON=(--peers /tmp/peers --rate 5 --timeout 3 --sport-range 49152-49155 --sport-buckets 4 --interval 1 -v)
	# answered HOST PEER: every bucket of HOST'"'"'s UD series towards PEER has 2 answered probes
	answered() {
		curl -sf -o /tmp/m.prom "http://$1:9477/metrics" &&
		test "$(sed -n "s/^fabscope_probe_ud_rtt_seconds_count{.*peer=\"$2\".*} \([0-9]*\)$/\1/p" /tmp/m.prom |
			awk "\$1 >= 2 { n++ } END { print n + 0 }")" = 4
	}
	# lost HOST PEER: HOST counts UD probes to PEER lost
	lost() {
		curl -sf -o /tmp/m.prom "http://$1:9477/metrics" &&
		sed -n "s/^fabscope_probe_ud_lost_total{.*peer=\"$2\".*} \([0-9]*\)$/\1/p" /tmp/m.prom |
			awk "{ n += \$1 } END { exit !(n > 0) }"
	}
	until_ok() { local i; for ((i = 0; i < $1; i++)); do "${@:2}" && return 0; vm_nap_ 0.5; done; return 1; }
	scrape() { curl -sf -o "/tmp/$2.prom" "http://$1:9477/metrics" && vm_save "/tmp/$2.prom"; }

	vm_capture_start br0 ud -s 128 udp port 4791 || echo "no capture" >&2
	VM_SPAWN_LIMIT=200 vm_spawn /tmp/n1.log "$FABSCOPE" monitor "${MON[@]}" --node n1 --listen 10.1.0.1:9477 \
		--transport verbs --jsonl /tmp/n1.jsonl
	n1=$vm_pid
	# n2 keeps 3 address handles where it needs 4 (a test build): they are replaced as it goes
	VM_SPAWN_LIMIT=200 vm_spawn /tmp/n2.log env FABSCOPE_TEST_UD_MAX_AHS=3 "$FABSCOPE" monitor "${MON[@]}" \
		--node n2 --listen 10.1.0.2:9477 --transport both
	n2=$vm_pid
	vm_check -t 60 up until_ok 120 eval "curl -sf http://10.1.0.1:9477/healthz && curl -sf http://10.1.0.2:9477/healthz"
	vm_check -t 90 answered-n1 until_ok 180 answered 10.1.0.1 n2
	vm_check -t 90 answered-n2 until_ok 180 answered 10.1.0.2 n1
	vm_check scrape-healthy eval "scrape 10.1.0.1 healthy-n1 && scrape 10.1.0.2 healthy-n2"
	vm_capture_stop; echo $? >/tmp/capture.rc
	vm_check capture grep -qx 0 /tmp/capture.rc
	kill -TERM $n2; vm_reap $n2; echo $? >/tmp/n2.rc
	vm_check stop-n2 grep -qx 0 /tmp/n2.rc
	vm_check -t 90 lost-n1 until_ok 180 lost 10.1.0.1 n2
	vm_check scrape-stopped scrape 10.1.0.1 stopped-n1
	kill -TERM $n1; vm_reap $n1; echo $? >/tmp/n1.rc
	vm_check stop-n1 grep -qx 0 /tmp/n1.rc
	vm_save /tmp/n1.log /tmp/n2.log /tmp/n1.jsonl
	EOF
'
vm_results_as_tests VM

H1=$VM_OUT/healthy-n1.prom H2=$VM_OUT/healthy-n2.prom S1=$VM_OUT/stopped-n1.prom

test_expect_success $P 'n1 (verbs): per bucket UD probes sent, answered with RTTs, none lost; no UDP series' '
	series $H1 fabscope_probe_ud_sent_total n2 >sent &&
	series $H1 fabscope_probe_ud_rtt_seconds_count n2 >count &&
	series $H1 fabscope_probe_ud_lost_total n2 >lost &&
	printf "0\n1\n2\n3\n" >expect && cut -d" " -f1 count >buckets && test_cmp expect buckets &&
	join sent count | awk "\$3 < 2 || \$3 > \$2 { bad = 1 } END { exit bad }" &&
	awk "\$2 != 0 { bad = 1 } END { exit bad }" lost &&
	test "$(total $H1 fabscope_probe_ud_rtt_seconds_sum n2)" != 0 &&
	grep "^fabscope_probe_ud_rtt_seconds_bucket{.*peer=\"n2\".*le=\"+Inf\"}" $H1 | sed "s/.*} //" >inf &&
	cut -d" " -f2 count >counts && test_cmp counts inf &&
	! grep -q "^fabscope_probe_sent_total" $H1 &&
	test_grep "^fabscope_monitor_ud_questions_total{node=\"n1\",result=\"answered\"} [1-9]" $H1 &&
	test_grep "^fabscope_monitor_ud_echoed_total{node=\"n1\"} [1-9]" $H1
'

test_expect_success $P 'the UD lane: rxe1, its responder QP, software time (rxe has no completion timestamps)' '
	test_grep "^fabscope_monitor_ud_lane_info{node=\"n1\",rail=\"0\",plane=\"0\",device=\"rxe1\",port=\"1\",qpn=\"[0-9]*\",clock=\"software\"} 1$" $H1 &&
	test_grep "gives no completion timestamps" "$VM_OUT/n1.log"
'

test_expect_success $P 'n2 (both): UDP and UD probes towards n1 answered in every bucket' '
	series $H2 fabscope_probe_rtt_seconds_count n1 | awk "\$2 > 0 { n++ } END { exit n != 4 }" &&
	series $H2 fabscope_probe_ud_rtt_seconds_count n1 | awk "\$2 > 0 { n++ } END { exit n != 4 }" &&
	test_grep "^fabscope_probe_unreachable_total{node=\"n2\",peer=\"n1\"" $H2 &&
	test_grep "^fabscope_probe_ud_unresolved_total{node=\"n2\",peer=\"n1\"" $H2
'

test_expect_success $P 'address handles: one per (peer, flow label), kept; n2'"'"'s 3 replaced in turn, its probes answered' '
	# n1 sends its probes to n2, and its replies to n2'"'"'s, with the 4 flow labels of ports 49152-49155
	test_grep "^fabscope_monitor_ud_address_handles_total{node=\"n1\",rail=\"0\",plane=\"0\",event=\"created\"} 4$" $H1 &&
	test_grep "^fabscope_monitor_ud_address_handles_total{node=\"n1\",rail=\"0\",plane=\"0\",event=\"replaced\"} 0$" $H1 &&
	test_grep "^fabscope_monitor_ud_address_handles_total{node=\"n2\",rail=\"0\",plane=\"0\",event=\"replaced\"} [1-9]" $H2
'

test_expect_success $P,JQ '--jsonl: n1 wrote its UD intervals, transport verbs, the buckets /metrics has' '
	jq -c "select(.transport != \"verbs\" or .node != \"n1\" or .peer != \"n2\")" "$VM_OUT/n1.jsonl" >other &&
	test_must_be_empty other &&
	jq -s "map(.sport_bucket) | unique" "$VM_OUT/n1.jsonl" >b &&
	test "$(jq -c . b)" = "[0,1,2,3]" &&
	test "$(jq -s "map(.rtt_count) | add" "$VM_OUT/n1.jsonl")" -gt 0
'

test_expect_success $P,JQ 'on the wire: n1'"'"'s UD probes to n2'"'"'s responder QP left from distinct UDP source ports' '
	qpn=$(sed -n "s/^fabscope_monitor_ud_lane_info{node=\"n2\".*qpn=\"\([0-9]*\)\".*/\1/p" $H2) &&
	test -n "$qpn" &&
	cp "$VM_OUT/ud.pcap" . &&
	# (rxe gives each QP the port of a hash of its number, one of 16,384: 4 expected, and two of
	# them may meet; fabscope pcap exits 1 when it has findings, a flow changing ports is one)
	{ "$FABSCOPE" pcap ud.pcap --json >pcap.json || test $? = 1; } &&
	jq -e --arg q "$(printf 0x%06x $qpn)" "[.flows[] | select(.qpn == \$q and .src == \"10.1.0.1\")] |
		length == 1 and .[0].transport == \"UD\" and .[0].requests > 0 and (.[0].udp_sports | length) >= 3" pcap.json
'

test_expect_success $P 'n2 stopped: n1 counts its UD probes to n2 lost, and still sends them' '
	test "$(total $S1 fabscope_probe_ud_lost_total n2)" -gt 0 &&
	test "$(total $S1 fabscope_probe_ud_sent_total n2)" -gt "$(total $H1 fabscope_probe_ud_sent_total n2)"
'

test_done
