#!/usr/bin/env bash
test_description='fabscope pcap on real captures from the Soft-RoCE VM with induced loss (netem):
write, read and send between two rxe devices, each captured while packets are dropped, and a
clean control; the flows with retransmissions, PSN gaps and NAKs are named by findings, and per
flow the packets, requests, NAKs by code and resends agree with tshark (one VM boot runs
tests/vm/pcap.sh)'
. "$(dirname "$0")/test-lib.sh"

# one Soft-RoCE guest at a time: qemu TCG emulates 2 vCPUs on the host's cores, and two guests
# at once would starve each other's time limits
test_holds vm
test_cpus 2

test_lazy_prereq VM '"$SRCDIR/ci/rxe-vm" --check'
test_lazy_prereq TSHARK 'command -v tshark'
test_require_in_ci VM JQ TSHARK
. "$TEST_DIRECTORY/lib-pcap.sh"

R=$TRASH_DIRECTORY/vm

# the packets netem dropped on a bridge port during run NAME (n1b: requests, n2b: responses)
netem_dropped() { awk -v d="$2" '$1 == "dev" { on = $2 == d } on && /dropped/ {
	sub(/.*dropped /, ""); sub(/,.*/, ""); print; exit }' "$R/$1-netem.txt"; }

test_expect_success VM 'boot the VM with 2 rxe nodes, capture write, read and send with loss' '
	"$SRCDIR/ci/rxe-vm" -n 2 -t 600 -o "$R" -e FABSCOPE="$FABSCOPE" -- \
		bash "$SRCDIR/tests/vm/pcap.sh" >vm.out 2>vm.err &&
	test -f "$R/finished"
'

# rxe in the 6.1 kernel now and then fails a QP with "remote invalid request" after
# retransmitting (see tests/vm/verbs.sh): the run then exits non-zero, but what was captured
# up to there is real traffic all the same, so such a run is accepted (and said)
run_ended() {
	local rc
	rc=$(cat "$R/$1.rc") || return 1
	test "$rc" = 0 && return 0
	grep -qi "remote invalid request" "$R/$1.err" || { echo "$1: exit $rc:"; cat "$R/$1.err"; return 1; }
	echo "$1: exit $rc, rxe 6.1's remote invalid request error after retransmissions (accepted)"
}

for op in write read send; do
	test_expect_success VM,JQ,TSHARK "loss, $op: netem dropped, tcpdump did not; retransmissions found, their QPs named" '
		run_ended loss-'$op' &&
		test $(($(netem_dropped loss-'$op' n1b) + $(netem_dropped loss-'$op' n2b))) -gt 0 &&
		test_grep "^0 packets dropped by kernel" "$R/loss-'$op'-tcpdump.err" &&
		test "$(stat -c %s "$R/loss-'$op'.pcap")" -lt 2000000 &&
		cp "$R/loss-'$op'.pcap" . &&
		f=loss-'$op'.pcap &&
		pcap_analyze $f &&
		jq -e "any(.flows[]; .psn.retransmission_bursts > 0 or .psn.gaps > 0)" $f.json &&
		# the capture is upstream of the loss of requests: every request sent is in it
		jq -e "[.flows[] | select(.requests > 0)] | length > 0 and all(.[]; .psn.gaps == 0)" $f.json &&
		pcap_findings_name $f
	'
	test_expect_success VM,JQ,TSHARK "loss, $op: per flow, packets, requests, NAKs by code and resends agree with tshark" '
		pcap_vs_tshark loss-'$op'.pcap
	'
done

test_expect_success VM,JQ 'loss: the responders NAKed sequence errors (psn-seq-error), fabscope counted them' '
	for op in write read send; do
		jq "[.flows[].naks[\"psn-seq-error\"] // 0] | add" loss-$op.pcap.json || return 1
	done >naks &&
	test "$(awk "{ n += \$1 } END { print n }" naks)" -gt 0
'

test_expect_success VM,JQ,TSHARK 'the clean control: no gap, duplicate, NAK or finding; tshark agrees' '
	test "$(cat "$R/clean-write.rc")" = 0 &&
	! grep -q netem "$R/clean-write-netem.txt" &&
	cp "$R/clean-write.pcap" . &&
	f=clean-write.pcap &&
	pcap_analyze $f &&
	pcap_vs_tshark $f &&
	{
		jq -e "(.flows | length) == 4 and all(.flows[]; .psn.gaps == 0 and .psn.seen_again == 0 and .psn.resent_after_loss == 0 and
			.psn.out_of_order == 0 and .naks == {} and .rnr_naks == 0) and .findings == []" $f.json || {
			echo "rxe counters during the control (a resend without loss is a local ACK timeout):"
			diff "$R/start-counters.txt" "$R/clean-write-counters.txt"
			false
		}
	}
'

test_done
