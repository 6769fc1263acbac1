#!/usr/bin/env bash
test_description='fabscope pcap on golden captures of real Soft-RoCE traffic (write, read, send)
with real loss (tests/data/pcap, recorded by tests/vm/pcap.sh): the flows with retransmissions,
PSN gaps and NAKs are named by findings, and per flow the packets, requests, NAKs by code and
resends agree with tshark'"'"'s per-packet view of the same file; the clean control has none'
# asan: always: feeds untrusted bytes to C code: pcap files of real Soft-RoCE traffic
. "$(dirname "$0")/test-lib.sh"

test_lazy_prereq TSHARK 'command -v tshark'
test_require_in_ci FABSCOPE JQ TSHARK
P=FABSCOPE,JQ,TSHARK
D=$SRCDIR/tests/data/pcap
. "$TEST_DIRECTORY/lib-pcap.sh"

for op in write read send; do
	test_expect_success $P "loss, $op: retransmissions found, their QPs named, tshark agrees" '
		cp "$D/rxe-loss-'$op'.pcap" . &&
		f=rxe-loss-'$op'.pcap &&
		pcap_analyze $f &&
		# the capture is upstream of the requests'"'"' loss: every request is there, resends too
		jq -e "[.flows[] | select(.requests > 0)] | length == 2 and
			all(.[]; .psn.gaps == 0 and .psn.retransmission_bursts > 0 and .psn.seen_again + .psn.resent_after_loss > 0)" $f.json &&
		jq -e "[.flows[].naks[\"psn-seq-error\"] // 0] | add > 0" $f.json &&
		pcap_findings_name $f &&
		pcap_vs_tshark $f
	'
done

test_expect_success $P 'loss, read: the READ responses lost on the way back are PSN gaps' '
	cp "$D/rxe-loss-read.pcap" . &&
	pcap_analyze rxe-loss-read.pcap &&
	jq -e "[.flows[] | select(.read_responses > 0)] | length == 2 and all(.[]; .psn.gaps > 0)" rxe-loss-read.pcap.json
'

test_expect_success $P 'the clean control: no gap, duplicate, NAK or finding; tshark agrees' '
	cp "$D/rxe-clean-write.pcap" . &&
	f=rxe-clean-write.pcap &&
	pcap_analyze $f &&
	jq -e "(.flows | length) == 4 and all(.flows[]; .psn.gaps == 0 and .psn.seen_again == 0 and .psn.resent_after_loss == 0 and
		.psn.out_of_order == 0 and .naks == {} and .rnr_naks == 0) and .findings == []" $f.json &&
	test_grep "findings: none" $f.txt &&
	pcap_vs_tshark $f
'

test_done
