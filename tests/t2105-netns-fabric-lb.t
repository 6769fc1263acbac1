#!/usr/bin/env bash
test_description='ci/netns-fabric lb: every load-balancing mode of the bed does what it says, shown by
the per-link packet counters of the routers: ecmp one uplink per 5-tuple, spray (round robin and
random) one flow on every uplink, flowlet a flow that moves only after an idle gap, adaptive a new
flowlet on a less loaded uplink, lbn a fixed ingress-port to uplink mapping; the 3-tier spray
reaches every superspine; ecmp takes the programs off again'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-lb.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$b
P=ROOT,NETNS,JQ,LB
test_lazy_prereq LB '[ -x "$SRCDIR/ci/lb/fabric-lb" ] && [ -r "$SRCDIR/ci/lb/lb.bpf.o" ]'
test_require_in_ci ROOT NETNS JQ LB FABSCOPE

fab() { "$FABRIC" "$1" -p "$PFX" "${@:2}"; }

# flow_on NODE SRC SPORT DST COUNT GAP_US: send one flow from NODE; prints the one uplink of
# l1.0 that carried it (fails when it went over several)
flow_on() {
	local a b
	a=$(uplink_tx l1.0) &&
	udp_flow "$@" &&
	b=$(uplink_tx l1.0) &&
	only_one "$(uplink_delta "$a" "$b")" "$5"
}

test_expect_success $P 'usage and environment errors are one line with their exit code' '
	test_expect_exit 2 "$FABRIC" lb -p "$PFX" 2>err && test_line_count = 1 err &&
	test_expect_exit 2 "$FABRIC" lb -p "$PFX" bogus 2>err && test_grep "unknown mode .bogus." err &&
	test_expect_exit 2 "$FABRIC" lb -p "$PFX" flowlet --gap 0 2>err && test_grep "bad --gap" err &&
	test_expect_exit 2 "$FABRIC" lb -p "$PFX" flowlet --gap 10000001 2>err && test_grep "bad --gap" err &&
	test_expect_exit 1 "$FABRIC" lb -p "$PFX" flowlet --gap 10000000 2>err && test_grep "no fabric" err &&
	test_expect_exit 2 "$FABRIC" lb -p "$PFX" ecmp --hash l5 2>err && test_grep "bad hash" err &&
	test_expect_exit 2 "$FABRIC" up -p "$PFX" --lb bogus 2>err && test_line_count = 1 err &&
	test_expect_exit 1 "$FABRIC" lb -p "$PFX" spray 2>err && test_grep "no fabric with prefix" err &&
	FABRIC_LB=/nonexistent/fabric-lb test_expect_exit 3 "$FABRIC" up -p "$PFX" -G 3 -H 2 -R 1 --lb spray 2>err &&
	test_grep "needs the BPF loader" err && test_line_count = 1 err &&
	! ip netns list | grep "^$PFX-"
'

test_expect_success $P 'the loader: usage, a bad namespace, a group it cannot use, a refused object' '
	L=$SRCDIR/ci/lb/fabric-lb &&
	test_expect_exit 2 "$L" 2>err && test_line_count = 1 err &&
	test_expect_exit 2 "$L" x bogus 2>err && test_grep "unknown mode .bogus." err &&
	test_expect_exit 2 "$L" a/b spray 2>err && test_grep "bad namespace name" err &&
	test_expect_exit 3 "$L" "$PFX-nosuch" spray s1=10.0.0.1,s2=10.0.0.2 2>err &&
	test_grep "no network namespace" err && test_line_count = 1 err &&
	ip netns add "$PFX-lbx" && test_atexit "ip netns del $PFX-lbx 2>/dev/null || true" &&
	test_expect_exit 2 "$L" "$PFX-lbx" spray lo=10.0.0.1 2>err && test_grep "fewer than 2 members" err &&
	test_expect_exit 2 "$L" "$PFX-lbx" spray lo=bad,lo=10.0.0.1 2>err && test_grep "bad next hop .bad." err &&
	test_expect_exit 1 "$L" "$PFX-lbx" spray eth9=10.0.0.1,lo=10.0.0.2 2>err && test_grep "no interface .eth9." err &&
	test_expect_exit 2 "$L" "$PFX-lbx" flowlet --gap 0 lo=10.0.0.1,lo=10.0.0.2 2>err && test_grep "bad --gap" err &&
	echo "not an object" >bad.o &&
	test_expect_exit 1 "$L" --obj bad.o "$PFX-lbx" spray lo=10.0.0.1,lo=10.0.0.2 2>err &&
	test_line_count = 1 err && test_grep "cannot open bad.o" err &&
	ip netns del "$PFX-lbx"
'

test_expect_success $P 'a 2-tier bed with four spines, per-flow ECMP: one uplink per 5-tuple' '
	test_atexit "\"$FABRIC\" down -p $PFX >/dev/null 2>&1 || true" &&
	fab up -G 3 -H 2 -R 1 -S 4 >up.out &&
	test_grep "lb ecmp" up.out &&
	fab info >info && test_grep "^LB=ecmp$" info && test_grep "^HASH=l4$" info &&
	: >ecmp.used &&
	for sport in 5001 5002 5003 5004 5005 5006 5007 5008; do
		flow_on h1 10.100.1.1 $sport 10.100.2.3 20 0 >>ecmp.used || return 1
	done &&
	sort -u ecmp.used >ecmp.distinct &&
	cat ecmp.distinct &&
	test "$(wc -l <ecmp.distinct)" -ge 2
'

test_expect_success $P 'spray: one flow on every uplink, in turn or at random' '
	fab lb spray >lb.out && test_grep "lb spray-rr: a BPF program on 3 routers" lb.out &&
	fab info | grep -q "^LB=spray-rr$" &&
	a=$(uplink_tx l1.0) && udp_flow h1 10.100.1.1 5001 10.100.2.3 80 0 && b=$(uplink_tx l1.0) &&
	d=$(uplink_delta "$a" "$b") && echo "rr: $d" &&
	every_one "$d" 18 &&
	fab lb spray-random >/dev/null &&
	a=$(uplink_tx l1.0) && udp_flow h1 10.100.1.1 5002 10.100.2.3 200 0 && b=$(uplink_tx l1.0) &&
	d=$(uplink_delta "$a" "$b") && echo "random: $d" &&
	every_one "$d" 10
'

test_expect_success $P 'flowlet: a flow stays put within a burst and moves after an idle gap' '
	fab lb flowlet --gap 300000 >lb.out && test_grep "gap 300000 us" lb.out &&
	: >fl.used &&
	# back-to-back bursts (no spacing to stretch on a busy machine) a second apart: sleep only
	# lengthens the idle gap, so every burst is one flowlet and the next one moves
	for burst in 1 2 3 4; do
		flow_on h1 10.100.1.1 5001 10.100.2.3 20 0 >>fl.used || return 1
		sleep 1
	done &&
	cat fl.used &&
	test "$(uniq fl.used | wc -l)" = 4
'

test_expect_success $P 'adaptive: twelve new flowlets take the three unloaded uplinks in turn, never the loaded one' '
	# a gap and a window of 10 s: the loaded flow is remembered until the test ends (within 20 s of
	# it), and each new flow (a new 5-tuple) is a new flowlet
	fab lb adaptive --gap 10000000 --window 10000000 >/dev/null &&
	a=$(uplink_tx l1.0) &&
	udp_flow h1 10.100.1.1 6001 10.100.2.3 1000 0 &&
	b=$(uplink_tx l1.0) &&
	busy=$(only_one "$(uplink_delta "$a" "$b")" 1000) &&
	for sport in 6101 6102 6103 6104 6105 6106 6107 6108 6109 6110 6111 6112; do
		udp_flow h2 10.100.1.2 $sport 10.100.2.3 20 0 || return 1
	done &&
	c=$(uplink_tx l1.0) &&
	d=$(uplink_delta "$b" "$c") &&
	echo "loaded: $busy; 12 flowlets of 20 packets: $d" &&
	# the least loaded in bytes, each in turn: 4 flowlets (80 packets) on each of the other three,
	# none on the loaded one (an ARP now and then aside).  A random pick passes with a probability
	# of (3/4)^12 * 34650 / 3^12, 0.2 %
	perl -e "my (\$busy, \$d) = @ARGV; for (split q( ), \$d) { my (\$u, \$n) = split /=/;
		exit 1 if \$u eq \$busy ? \$n > 2 : (\$n < 80 || \$n > 82) }" "$busy" "$d"
'

test_expect_success $P 'lbn: every flow of one ingress port leaves by that port.s uplink' '
	fab lb lbn >/dev/null &&
	: >h1.used && : >h2.used &&
	for sport in 7001 7002 7003 7004; do
		flow_on h1 10.100.1.1 $sport 10.100.2.3 10 0 >>h1.used &&
		flow_on h2 10.100.1.2 $sport 10.100.2.3 10 0 >>h2.used || return 1
	done &&
	sort -u h1.used >h1.one && sort -u h2.used >h2.one &&
	test_line_count = 1 h1.one && test_line_count = 1 h2.one &&
	! cmp -s h1.one h2.one
'

test_expect_success $P,FABSCOPE 'bw over TCP records each flow.s retransmissions, reorderings and out-of-order arrivals' '
	fab lb spray >/dev/null &&
	{ "$FABRIC" exec -p "$PFX" h3 "$FABSCOPE" bw --server --once --bind 10.100.2.3 >srv.out 2>&1 & } &&
	srvpid=$! &&
	test_atexit "test_kill_pid $srvpid" &&
	test_wait_for 10 sh -c "\"\$0\" exec -p $PFX h3 ss -Hltn | grep -q 10.100.2.3:18520" "$FABRIC" &&
	"$FABRIC" exec -p "$PFX" h1 "$FABSCOPE" bw -D 1 -q 2 --bind 10.100.1.1 -o bw.json 10.100.2.3 >bw.out &&
	wait $srvpid &&
	jq -s -e "length == 3" bw.json &&
	jq -s -e "all(.[]; .metrics | (.retrans_segs >= 0) and (.reord_seen >= 0) and (.ooo_pkts >= 0)
		and (.rx_segs > 0) and (.ooo_pct >= 0))" bw.json &&
	jq -s -e ".[2].metrics.rx_segs == .[0].metrics.rx_segs + .[1].metrics.rx_segs" bw.json
'

test_expect_success $P 'ecmp again: the programs are off every router, the hash is l3 with one seed' '
	fab lb ecmp --hash l3 --seed same >lb.out && test_grep "the kernel.s hash (l3, seed same)" lb.out &&
	for n in l1.0 l2.0 l3.0 s1 s4; do
		! tc -n "$PFX-$n" qdisc show | grep -w clsact || return 1
	done &&
	test "$(fab exec l1.0 sysctl -n net.ipv4.fib_multipath_hash_fields)" = 7 &&
	test "$(fab exec s2 sysctl -n net.ipv4.fib_multipath_hash_seed)" = 1 &&
	# eight source ports: hashed with the ports (l4) they spread over the four uplinks (all on one:
	# 4^-7), with addresses and protocol only (l3) they all take one
	: >l3.used &&
	for sport in 5001 5002 5003 5004 5005 5006 5007 5008; do
		flow_on h1 10.100.1.1 $sport 10.100.2.3 20 0 >>l3.used || return 1
	done &&
	sort -u l3.used >l3.one &&
	cat l3.used &&
	test_line_count = 1 l3.one
'

test_expect_success $P '3 tiers: spray reaches every superspine and every spine of the far pod' '
	fab up -G 4 -H 1 -R 1 -S 2 -P 2 -X 2 --lb spray >up.out &&
	test_grep "lb spray-rr" up.out &&
	a1=$(uplink_tx s1) && a2=$(uplink_tx x1) &&
	udp_flow h1 10.100.1.1 5001 10.100.3.3 80 0 &&
	b1=$(uplink_tx s1) && b2=$(uplink_tx x1) &&
	d1=$(uplink_delta "$a1" "$b1") && d2=$(uplink_delta "$a2" "$b2") &&
	echo "s1: $d1; x1: $d2" &&
	every_one "$(echo "$d1" | tr " " "\n" | grep "^x" | tr "\n" " ")" 15 &&
	every_one "$(echo "$d2" | tr " " "\n" | grep -E "^s[34]=" | tr "\n" " ")" 8 &&
	fab down >/dev/null &&
	! ip netns list | grep "^$PFX-"
'

test_done
