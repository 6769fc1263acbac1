# shellcheck shell=bash
# tests/lib-pcap.sh - fabscope pcap against tshark on a real capture, for
# t0270-unit-pcap-golden.t (the captures kept here) and t3020-vm-pcap.t (fresh ones from the
# VM).  Sourced by the test script, after test-lib.sh; each function runs in a test body in
# the trash directory and fails (saying why) when the two disagree.
#
#	pcap_analyze FILE     fabscope pcap --json FILE into FILE.json, its text into FILE.txt
#	                      (pcap_run: each exits 1 when it has an [error] finding, else 0)
#	pcap_vs_tshark FILE   per flow (source IP, destination IP, destination QP - a flow as
#	                      pcap/flow.h defines it): packets, requests, NAKs, RNR NAKs and NAKs
#	                      by code as tshark decodes each packet; and the resends: "seen" are
#	                      the packets whose PSN the same flow carried earlier in the file
#	                      (requests, or READ responses on the way back: the packets whose PSNs
#	                      the flow table tracks), "behind" those behind the flow's highest PSN
#	                      not carried before.  fabscope's seen_again is exactly tshark's seen
#	                      (the same packet twice at the capture point), and its
#	                      resent_after_loss plus out_of_order exactly tshark's behind (first
#	                      appearances behind: resends of packets lost upstream, or late ones)
#	pcap_findings_name FILE
#	                      a flow with retransmission bursts or PSN gaps has a finding that
#	                      names it ("QP Q SRC -> DST:"); N NAKs of a code in a flow are told
#	                      (" N NAK CODE") by a finding of that flow or of its reverse (the
#	                      resend they caused); in the JSON (findings[].flow) and the text

pcap_analyze() {
	pcap_run "$1.json" "$1" --json && pcap_run "$1.txt" "$1"
}

# pcap_run OUT FILE [ARGS...]: fabscope pcap FILE ARGS, its standard output into OUT and its
# standard error into OUT without its extension, .err; its exit status must be the one its
# findings call for (pcap_exit_ok)
pcap_run() {
	local out=$1 rc=0
	shift
	"$FABSCOPE" pcap "$@" >"$out" 2>"${out%.*}.err" || rc=$?
	pcap_exit_ok "$out" "${out%.*}.err" $rc
}

# pcap_exit_ok OUT ERR RC: an [error] finding in OUT (text or JSON) is a failed check: RC 1
# and the last line of ERR says so; without one, RC 0 and no such line
pcap_exit_ok() {
	if grep -q -e "\[error\]" -e "\"severity\": \"error\"" "$1"; then
		[ "$3" = 1 ] && tail -n 1 "$2" | grep -q "error finding.*a failed check$" && return 0
		echo "fabscope pcap: [error] findings in $1, exit $3 (want 1 and the line on $2):"
	else
		[ "$3" = 0 ] && ! grep -q "error finding" "$2" && return 0
		echo "fabscope pcap: no [error] finding in $1, exit $3 (want 0):"
	fi
	cat "$2"
	return 1
}

# tshark's per-packet view: source, destination, destination QP (0x%06x), opcode, PSN and
# the AETH syndrome (empty without one), all decimal but the QP
pcap_tshark_() {
	tshark -r "$1" -Y infiniband.bth -T fields -E separator=/t -E occurrence=f \
		-e ip.src -e ip.dst -e infiniband.bth.destqp -e infiniband.bth.opcode \
		-e infiniband.bth.psn -e infiniband.aeth.syndrome 2>/dev/null >"$1.tshark" ||
		{ echo "tshark cannot read $1"; return 1; }
	test -s "$1.tshark" || { echo "tshark found no RoCEv2 packet in $1"; return 1; }
}

pcap_vs_tshark() {
	local f=$1
	pcap_tshark_ "$f" || return 1
	: >"$f.tshark-naks"
	# flows: "SRC DST QPN packets requests naks rnr seen behind"; naks by code: "SRC DST QPN CODE N"
	awk -F'\t' -v naks="$f.tshark-naks" '
		BEGIN { split("psn-seq-error invalid-request remote-access-error remote-op-error invalid-rd-request", name, " ") }
		{
			k = $1 " " $2 " " $3; pk[k]++; op = $4 + 0
			if ($6 != "") {
				s = $6 + 0
				if (s >= 96 && s < 128) { nak[k]++; c = s % 32; nk[k " " (c < 5 ? name[c + 1] : "reserved-nak")]++ }
				else if (s >= 32 && s < 64) rnr[k]++
			}
			# the requests of pcap/roce.c (RC and UC), and READ responses: PSN-tracked
			isreq = op <= 12 || op == 19 || op == 20 || op == 22 || op == 23 || op == 28 || op == 29 ||
				(op >= 32 && op <= 43)
			if (isreq) req[k]++
			if (isreq || (op >= 13 && op <= 16)) {
				p = $5 + 0
				if ((k SUBSEP p) in seen) dup[k]++
				else if (k in top && (p - top[k] + 16777216) % 16777216 >= 8388608) behind[k]++
				seen[k, p] = 1
				if (!(k in top) || (p - top[k] + 16777216) % 16777216 < 8388608) top[k] = p
			}
		}
		END {
			for (k in pk) printf "%s %d %d %d %d %d %d\n", k, pk[k], req[k], nak[k], rnr[k], dup[k], behind[k]
			for (k in nk) printf "%s %d\n", k, nk[k] >naks
		}' "$f.tshark" | sort >"$f.tshark-flows" || return 1
	sort -o "$f.tshark-naks" "$f.tshark-naks" || return 1
	jq -r '.flows[] | "\(.src) \(.dst) \(.qpn) \(.packets) \(.requests) \([.naks[]] | add // 0) \(.rnr_naks)"' \
		"$f.json" | sort >"$f.ours-flows" &&
	jq -r '.flows[] | . as $x | .naks | to_entries[] | "\($x.src) \($x.dst) \($x.qpn) \(.key) \(.value)"' \
		"$f.json" | sort >"$f.ours-naks" || return 1
	cut -d" " -f1-7 "$f.tshark-flows" >"$f.tshark-flows7"
	test_cmp "$f.tshark-flows7" "$f.ours-flows" || { echo "$f: flows differ (src dst qpn packets requests naks rnr)"; return 1; }
	test_cmp "$f.tshark-naks" "$f.ours-naks" || { echo "$f: NAKs by code differ"; return 1; }
	# the resends, flow by flow: "SRC/DST/QPN SEEN BEHIND SEEN-AGAIN RESENT OUT-OF-ORDER"
	jq -r '.flows[] | "\(.src)/\(.dst)/\(.qpn) \(.psn.seen_again) \(.psn.resent_after_loss) \(.psn.out_of_order)"' \
		"$f.json" | sort >"$f.ours-dups" &&
	awk '{ print $1 "/" $2 "/" $3, $8, $9 }' "$f.tshark-flows" | sort >"$f.tshark-dups" &&
	join "$f.tshark-dups" "$f.ours-dups" >"$f.dups" || return 1
	test "$(wc -l <"$f.dups")" = "$(wc -l <"$f.ours-flows")" || { echo "$f: flows do not pair up:"; cat "$f.dups"; return 1; }
	awk '$2 != $4 || $3 != $5 + $6 {
			bad = 1
			print "resends differ: flow " $1 ": tshark " $2 " seen again and " $3 " behind, fabscope " $4 " seen again, " $5 " resent after a loss and " $6 " out of order"
		}
		END { exit bad }' "$f.dups"
}

pcap_findings_name() {
	local f=$1 bad=0 idx text
	# one line per thing a finding must say: "FLOW-INDEXES|TEXT" (indexes space-separated)
	jq -r '.flows[] |
		(select(.psn.retransmission_bursts > 0 or .psn.gaps > 0) | "\(.index)|QP \(.qpn) \(.src) -> \(.dst):"),
		(. as $x | .naks | to_entries[] | "\($x.index) \($x.reverse)| \(.value) NAK \(.key)")' \
		"$f.json" >"$f.must-say" || return 1
	while IFS='|' read -r idx text; do
		jq -e --arg t "$text" --arg i "$idx" '($i | split(" ") | map(tonumber)) as $i |
			any(.findings[]; (.flow as $f | $i | index($f)) != null and (.text | contains($t)))' \
			"$f.json" >/dev/null || { echo "$f: no finding of flow $idx says '$text'"; bad=1; }
		grep -qF -- "$text" "$f.txt" || { echo "$f: the text does not say '$text'"; bad=1; }
	done <"$f.must-say"
	return $bad
}
