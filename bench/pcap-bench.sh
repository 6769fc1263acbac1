#!/usr/bin/env bash
# bench/pcap-bench.sh - fabscope pcap against tshark on the same capture, same run
#
#   bench/pcap-bench.sh [-m MB] [-q QPS] [-s SNAPLEN] [-r RUNS] [-k]        (run by `make bench`)
#
# Builds a RoCEv2 capture of about MB megabytes (default 500) with test-tool pcapgen: QPS
# queue pairs (default 64) between 8 hosts, RDMA WRITEs of 1 KiB cut to SNAPLEN bytes (default
# 256, what `fabscope capture` keeps), each QP's stream with its acknowledges, a PSN gap and a
# NAK with its go-back-N resend every 5000 packets, CE marks and CNPs now and then, and the
# PSNs wrapping.  Then the per-QP summary of the same file, RUNS times each (default 3, the
# best run counts), the file in the page cache for both:
#   fabscope pcap FILE --json                       the flow table, findings, PFC
#   tshark -r FILE -q -z conv,udp -z io,stat,0,"COUNT(infiniband.bth.destqp)infiniband.bth.destqp"
#                                                   every packet dissected (RoCEv2 on 4791 is
#                                                   built in), conversations and a QP count
#   tshark -r FILE -T fields -e ip.src -e ip.dst -e infiniband.bth.destqp -e infiniband.bth.psn
#                                                   the per-packet view a per-QP table is made
#                                                   from (its output to /dev/null)
# Compared: wall time (ratio tshark / fabscope: higher is better for fabscope), packets/s, and
# peak memory (max RSS from GNU time).  Output: a table and bench-out/pcap-bench.jsonl.  -k
# keeps the capture in bench-out/.
#
# Exit codes: 0 ok, 2 usage, 3 environment (a tool or the binary missing), 4 no figure.
set -euo pipefail

prog=pcap-bench
synopsis="bench/pcap-bench.sh [-m MB] [-q QPS] [-s SNAPLEN] [-r RUNS] [-k]"
. "$(dirname "$0")/lib.sh"
MB=500 QPS=64 SNAP=256 RUNS=3 keep=0
while (($#)); do
	case $1 in
	-m) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-m needs megabytes"; MB=$2; shift ;;
	-q) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-q needs a number of QPs"; QPS=$2; shift ;;
	-s) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] && (($2 >= 64)) || usage "-s needs a snap length of 64 or more"; SNAP=$2; shift ;;
	-r) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-r needs a number of runs"; RUNS=$2; shift ;;
	-k) keep=1 ;;
	-h | --help) bench_help ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done
[[ -x $FABSCOPE ]] || envfail "no fabscope binary at $FABSCOPE: run make"
[[ -x $TEST_TOOL ]] || envfail "no test-tool at $TEST_TOOL: run make"
command -v tshark >/dev/null || envfail "tshark is missing: ci/install-deps test"
[[ -x /usr/bin/time ]] || envfail "GNU time is missing: ci/install-deps bench (apt-get install time)"

out=$srcdir/bench-out
mkdir -p "$out"
cap=$out/pcap-bench.pcap
tmp=$(mktemp -d)
cleanup() { rm -rf "$tmp"; ((keep)) || rm -f "$cap"; }
trap cleanup EXIT

# the spec: per QP, blocks of 5000 writes; in each, a gap of 2 PSNs, the NAK, the resend
echo "$prog: building a capture of about $MB MB ($QPS QPs, snap length $SNAP)" >&2
rec=$((16 + SNAP))			# bytes a packet takes in the file
total=$((MB * 1000000 / rec))		# packets
per_qp=$((total / QPS))
blocks=$((per_qp / 5000 + 1))
{
	for ((b = 0; b < blocks; b++)); do
		for ((q = 0; q < QPS; q++)); do
			h=$((q % 8 + 1)) qpn=$((0x1000 + q)) rq=$((0x2000 + q))
			src="src=10.0.0.$h dst=10.0.1.$h cut=$SNAP"
			back="src=10.0.1.$h dst=10.0.0.$h"
			psn=$(((0xfff000 + b * 5004) & 0xffffff))
			t0=$(printf "%d.%06d" $((b * 3 + 1)) $((q * 1000)))
			t1=$(printf "%d.%06d" $((b * 3 + 2)) $((q * 1000)))
			t2=$(printf "%d.%06d" $((b * 3 + 3)) $((q * 1000)))
			echo "rc write_only qpn=$qpn psn=$psn len=1024 ackreq $src count=2400 time=$t0"
			echo "ack qpn=$rq psn=$(((psn + 2399) & 0xffffff)) $back time=$t0"
			echo "rc write_only qpn=$qpn psn=$(((psn + 2402) & 0xffffff)) len=1024 ackreq ecn=ce $src count=200 time=$t1"
			echo "ack qpn=$rq psn=$(((psn + 2400) & 0xffffff)) nak=seq $back time=$t1"
			echo "cnp qpn=$rq $back time=$t1"
			echo "rc write_only qpn=$qpn psn=$(((psn + 2400) & 0xffffff)) len=1024 ackreq $src count=2602 time=$t2"
			echo "ack qpn=$rq psn=$(((psn + 5001) & 0xffffff)) $back time=$t2"
		done
	done
} >"$tmp/spec"
"$TEST_TOOL" pcapgen "$cap" - <"$tmp/spec" >"$tmp/gen.out" || fail "pcapgen failed"
bytes=$(stat -c %s "$cap")
pkts=$(awk '{print $2}' "$tmp/gen.out")
cat "$cap" >/dev/null	# into the page cache

# measure NAME CMD...: the best wall time of RUNS runs and the largest max RSS (KiB); fabscope
# exits 1 on this capture (its PSN gaps and NAKs are [error] findings: a failed check)
measure() {
	local name=$1 best="" rss=0 i w r rc
	shift
	for ((i = 0; i < RUNS; i++)); do
		rc=0
		/usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/$name.err" || rc=$?
		[[ $rc == 0 || ($rc == 1 && $name == fabscope) ]] ||
			fail "$name failed: $(tail -n 3 "$tmp/$name.err")"
		read -r w r < <(tail -n 1 "$tmp/time")	# (after "Command exited with non-zero status 1")
		if [[ -z $best ]] || awk -v a="$w" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$w; fi
		((r > rss)) && rss=$r
	done
	echo "$best $rss"
}

read -r fs_s fs_kb < <(measure fabscope "$FABSCOPE" pcap "$cap" --json)
read -r ts_s ts_kb < <(measure tshark-conv tshark -r "$cap" -q -z conv,udp \
	-z "io,stat,0,COUNT(infiniband.bth.destqp)infiniband.bth.destqp")
read -r tf_s tf_kb < <(measure tshark-fields tshark -r "$cap" -T fields -e ip.src -e ip.dst \
	-e infiniband.bth.destqp -e infiniband.bth.psn)
# fabscope's flows and tshark's conversations must be of the same capture
flows=$({ "$FABSCOPE" pcap "$cap" --json 2>/dev/null || (($? == 1)); } | jq '.summary.flows')
[[ $flows -ge $QPS ]] || fail "fabscope found $flows flows, expected at least $QPS"

: >"$out/pcap-bench.jsonl"
printf '%-34s %10s %12s %12s %10s\n' "analysis of $((bytes / 1000000)) MB" "seconds" "packets/s" "max RSS MiB" "ratio"
for row in "fabscope pcap --json|$fs_s|$fs_kb" "tshark -z conv,udp -z io,stat|$ts_s|$ts_kb" \
	   "tshark -T fields (per packet)|$tf_s|$tf_kb"; do
	IFS='|' read -r name s kb <<<"$row"
	ratio=$(awk -v a="$s" -v b="$fs_s" 'BEGIN { printf "%.1f", a / (b > 0 ? b : 0.001) }')
	pps=$(awk -v n="$pkts" -v s="$s" 'BEGIN { printf "%.0f", n / (s > 0 ? s : 0.001) }')
	printf '%-34s %10s %12s %12.1f %10s\n' "$name" "$s" "$pps" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')" \
		"$([[ $name == fabscope* ]] && echo - || echo "${ratio}x")"
	printf '{"bench":"pcap","tool":"%s","bytes":%s,"packets":%s,"seconds":%s,"max_rss_kib":%s,"packets_per_s":%s,"tshark_over_fabscope":%s}\n' \
		"$name" "$bytes" "$pkts" "$s" "$kb" "$pps" "$ratio" >>"$out/pcap-bench.jsonl"
done
echo "($pkts packets in $bytes bytes, $flows QP flows; best of $RUNS runs, file in the page cache)"
