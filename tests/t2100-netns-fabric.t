#!/usr/bin/env bash
test_description='ci/netns-fabric: leaf-spine fabrics of namespaces build (2 and 3 tiers), every
rail reaches every rail, path names the hops the kernel forwards along, ECMP spreads with distinct
hash seeds and polarizes with one seed, tbf shaping and degrade show in tc and in iperf3, and
nothing is left behind by down or by a failed up'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fabric.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$f
P=ROOT,NETNS
test_require_in_ci ROOT NETNS JQ IPERF3 FABSCOPE

test_lazy_prereq UNSHARE '[ "$(id -u)" = 0 ] && command -v unshare && command -v mount'
test_require_in_ci UNSHARE

# router_sysctls: "NODE policy fields seed" of every router (sysctl prints fields 0x37 as 55)
router_sysctls() {
	local n
	for n in $(. ./info && echo $LEAVES $SPINES $SUPERSPINES); do
		echo "$n $(fab exec "$n" sysctl -n net.ipv4.fib_multipath_hash_policy \
			net.ipv4.fib_multipath_hash_fields net.ipv4.fib_multipath_hash_seed | tr "\n" " ")" || return 1
	done
}

# iperf3_mbps NODE SRC DST PORT: an iperf3 TCP run of 2 s from SRC (in NODE) to a server on
# DST:PORT; prints the receiver's Mbit/s (the timeout is a hang guard, 10 x the run)
iperf3_mbps() {
	fab exec "$1" timeout 20 iperf3 -c "$3" -B "$2" -p "$4" -t 2 -J >"iperf.$4.json" &&
	jq -e ".end.sum_received.bits_per_second / 1e6 | floor" "iperf.$4.json"
}

# iperf3_server NODE ADDR PORT: a one-off iperf3 server, killed at exit, listening when this returns
iperf3_server() {
	"$FABRIC" exec -p "$PFX" "$1" iperf3 -s -1 -B "$2" -p "$3" >"server.$3.log" 2>&1 &
	local pid=$!	# iperf3 itself: netns-fabric and ip netns exec both exec
	test_atexit "test_kill_pid $pid"
	test_wait_for 10 sh -c "\"\$0\" exec -p $PFX $1 ss -Hltn 'sport = :$3' | grep -q . || ! kill -0 $pid" "$FABRIC" &&
	kill -0 $pid
}

test_expect_success 'usage errors exit 2 with one line; --help shows the header' '
	test_expect_exit 2 "$FABRIC" 2>err && one_line err &&
	while read -r args; do
		echo "args: $args" &&
		test_expect_exit 2 "$FABRIC" $args 2>err && one_line err || return 1
	done <<-\EOF &&
	bogus -p x
	up
	up -p waytoolongprefix
	up -p bad/name
	up -p x -G 0
	up -p x -G 1 -R 2
	up -p x -G 2 -R 1
	up -p x -H 254
	up -p x -P 2
	up -p x -X 2
	up -p x -G 3 -P 2 -X 2
	up -p x -r fast
	up -p x -r 0mbit
	up -p x --seed sometimes
	up -p x --seed 4294967296
	up -p x -S
	up -p x extra
	down -p x -G 2
	hostfile -p x extra
	info -p x -r 1mbit
	exec -p x h1
	path -p x 10.100.1.1 10.100.2.3 0 5201
	path -p x 10.100.1.1 10.100.2.3 2-1 5201
	path -p x 10.100.1.1 10.100.2.3 1 65536
	path -p x 10.100.1.1 10.100.2.3 1 2 sctp
	path -p x 10.100.1.1 nohost 1 2
	path -p x 10.100.1.1 10.100.2.3 1
	degrade -p x h1:rail0
	degrade -p x h1:rail0 fast
	EOF
	"$FABRIC" --help >out &&
	test_grep "ci/netns-fabric up -p PREFIX" out &&
	test_grep "^Exit codes" out
'

# a kernel before 6.11 has the hash policy and fields but no seed: a private mount namespace
# shows the script such a /proc/sys/net/ipv4
test_expect_success UNSHARE 'a kernel without net.ipv4.fib_multipath_hash_seed is exit 3, one line, nothing built' '
	test_expect_exit 3 unshare -m --propagation private sh -c "
		d=/proc/sys/net/ipv4 &&
		mount -t tmpfs none \$d &&
		touch \$d/fib_multipath_hash_policy \$d/fib_multipath_hash_fields &&
		exec \"\$0\" up -p $PFX" "$FABRIC" 2>err &&
	one_line err &&
	test_grep "no net.ipv4.fib_multipath_hash_seed" err &&
	test -z "$(our_ns)"
'

test_expect_success $P 'a failing up (tc refuses) exits 1 and removes every namespace it made' '
	mkdir -p fakebin &&
	printf "#!/bin/sh\necho \"tc: refused by the test\" >&2\nexit 1\n" >fakebin/tc &&
	chmod +x fakebin/tc &&
	test_atexit "\"\$FABRIC\" down -p \"\$PFX\"" &&
	test_expect_exit 1 env PATH="$PWD/fakebin:$PATH" "$FABRIC" up -p "$PFX" -r 100mbit 2>err &&
	test_grep "refused by the test" err &&
	test -z "$(our_ns)" &&
	test_expect_exit 1 fab info
'

test_expect_success $P 'up builds the default fabric (2 groups x 2 hosts x 2 rails, 4 leaves, 2 spines) at 200mbit' '
	fab up -r 200mbit >up.out &&
	cat up.out &&
	expect_ns h1 h2 h3 h4 l1.0 l1.1 l2.0 l2.1 s1 s2 &&
	fab hostfile >hostfile &&
	test_grep "^# .*ci/netns-fabric up -p $PFX" hostfile &&
	grep -v "^#" hostfile >hosts &&
	cat >expect <<-EOF &&
	h1 netns=$PFX-h1 rail0=10.100.1.1 rail1=10.101.1.1 leaf=l1
	h2 netns=$PFX-h2 rail0=10.100.1.2 rail1=10.101.1.2 leaf=l1
	h3 netns=$PFX-h3 rail0=10.100.2.3 rail1=10.101.2.3 leaf=l2
	h4 netns=$PFX-h4 rail0=10.100.2.4 rail1=10.101.2.4 leaf=l2
	EOF
	test_cmp expect hosts &&
	fab info >info &&
	(
		. ./info &&
		test "$LEAVES" = "l1.0 l1.1 l2.0 l2.1" && test "$SPINES" = "s1 s2" &&
		test "$HOSTS" = "h1 h2 h3 h4" && test -z "$SUPERSPINES" && test "$RATE" = 200mbit &&
		test "$H3_NS" = $PFX-h3 && test "$H3_RAIL1" = 10.101.2.3 &&
		test "$H3_RAIL1_LEAF" = l2.1 && test "$H3_RAIL1_GW" = 10.101.2.254 &&
		case " $LINKS " in *" h3:rail1 "*" l1.0-s2 "*) ;; *) false ;; esac
	) &&
	router_sysctls >sysctls &&
	cat sysctls &&
	test "$(wc -l <sysctls)" = 6 &&
	test "$(awk "\$2 == 3 && \$3 == 55" sysctls | wc -l)" = 6 &&
	test "$(awk "{print \$4}" sysctls | sort -u | wc -l)" = 6 &&
	test_expect_exit 1 fab exec h9 true
'

test_expect_success $P 'every rail of every host reaches every rail of every other host' '
	reach_all
'

test_expect_success $P 'a rail address sends on its own NIC: ping from rail 0 to a rail-1 address leaves by rail0' '
	tx0=$(tx h1 rail0) && tx1=$(tx h1 rail1) &&
	reach_from h1 10.100.1.1 10.101.2.3 10.101.2.4 10.101.1.2 &&
	test $(($(tx h1 rail0) - tx0)) -ge 3 &&
	test $(($(tx h1 rail1) - tx1)) -lt 3
'

test_expect_success $P 'path: one leaf within a group and rail, a spine across groups or rails' '
	test "$(fab path 10.100.1.1 10.100.1.2 40000 5201)" = "h1 l1.0 h2" &&
	test "$(fab path 10.101.2.4 10.101.2.3 40000 5201 udp)" = "h4 l2.1 h3" &&
	fab path 10.100.1.1 10.100.2.3 40000 5201 >p1 &&
	test_grep -x "h1 l1.0 s[12] l2.0 h3" p1 &&
	fab path 10.100.1.1 10.101.1.2 40000 5201 >p2 &&
	test_grep -x "h1 l1.0 s[12] l1.1 h2" p2 &&
	fab path 10.101.2.4 10.100.1.1 40000 5201 udp >p3 &&
	test_grep -x "h4 l2.1 s[12] l1.0 h1" p3 &&
	test_expect_exit 1 fab path 10.100.9.9 10.100.2.3 1 2 &&
	test_expect_exit 1 fab path 10.100.1.1 10.100.2.99 1 2
'

test_expect_success $P 'distinct seeds: 64 flows from h1 to h3 use both spines; a range gives what single ports do' '
	fab path 10.100.1.1 10.100.2.3 40000-40063 5201 >paths &&
	test "$(wc -l <paths)" = 64 &&
	test_grep ! -v -x "h1 l1.0 s[12] l2.0 h3" paths &&
	test "$(awk "{print \$3}" paths | sort -u | tr "\n" " ")" = "s1 s2 " &&
	test "$(fab path 10.100.1.1 10.100.2.3 40007 5201)" = "$(sed -n 8p paths)" &&
	test "$(fab path 10.100.1.1 10.100.2.3 40063 5201)" = "$(sed -n 64p paths)"
'

test_expect_success $P 'path predicts the kernel: UDP datagrams leave l1.0 by the spine path names' '
	fab path 10.100.1.1 10.100.2.3 41000-41015 5201 udp >upaths &&
	sp1=$(($(grep -n -m1 " s1 " upaths | cut -d: -f1) + 40999)) &&
	sp2=$(($(grep -n -m1 " s2 " upaths | cut -d: -f1) + 40999)) &&
	for sp in $sp1 $sp2; do
		want=$(fab path 10.100.1.1 10.100.2.3 $sp 5201 udp | cut -d" " -f3) &&
		a1=$(tx l1.0 s1) && a2=$(tx l1.0 s2) &&
		fab exec h1 perl -MIO::Socket::INET -e "
			my \$s = IO::Socket::INET->new(Proto => q(udp), LocalAddr => q(10.100.1.1),
				LocalPort => $sp) or die \$@;
			my \$to = Socket::pack_sockaddr_in(5201, Socket::inet_aton(q(10.100.2.3)));
			\$s->send(q(x) x 64, 0, \$to) or die \$! for 1 .. 200" &&
		d1=$(($(tx l1.0 s1) - a1)) && d2=$(($(tx l1.0 s2) - a2)) &&
		echo "sport $sp: path says $want; l1.0 sent $d1 on s1, $d2 on s2" &&
		case $want in
		s1) test $d1 -ge 200 && test $d2 -lt 20 ;;
		s2) test $d2 -ge 200 && test $d1 -lt 20 ;;
		*) false ;;
		esac || return 1
	done
'

test_expect_success $P 'the base rate is in tc qdisc show; degrade re-shapes one link, both ends, and nothing else' '
	check_rate 200Mbit h3:rail1 l2.1:h3 h4:rail1 l2.1:h4 l1.0:s2 s2:l1.0 l1.0:s1 &&
	fab degrade h3:rail1 20mbit &&
	check_rate 20Mbit h3:rail1 l2.1:h3 &&
	check_rate 200Mbit h3:rail0 l2.0:h3 h4:rail1 l2.1:h4 &&
	fab degrade l1.0-s2 20mbit &&
	check_rate 20Mbit l1.0:s2 s2:l1.0 &&
	check_rate 200Mbit l1.0:s1 s1:l1.0 l1.1:s2 &&
	fab degrade s2-l1.0 none &&
	check_rate "" l1.0:s2 s2:l1.0 &&
	fab degrade l1.0-s2 200mbit &&
	check_rate 200Mbit l1.0:s2 s2:l1.0 &&
	test_expect_exit 1 fab degrade h9:rail0 20mbit &&
	test_expect_exit 1 fab degrade h1:rail2 20mbit &&
	test_expect_exit 1 fab degrade l1.0-l2.0 20mbit &&
	test_expect_exit 2 fab degrade bogus 20mbit
'

# Function, not speed: the degraded link holds its flow under 60 Mbit/s (0.3 x the base rate,
# three times its own 20), the shaper bounds the other (at most 1.05 x 200) and that one is real
# (at least 0.3 x 200 = 60, so the two cannot be mistaken for each other).  How near the link
# rate a flow comes is speed: bench/netns-bench.sh measures iperf3 / link rate.
test_expect_success $P,IPERF3,JQ 'iperf3: the degraded h3:rail1 is held far below 200 Mbit/s, h4:rail1 is not, both bounded' '
	iperf3_server h3 10.101.2.3 15201 &&
	iperf3_server h4 10.101.2.4 15202 &&
	slow=$(iperf3_mbps h1 10.101.1.1 10.101.2.3 15201) &&
	fast=$(iperf3_mbps h2 10.101.1.2 10.101.2.4 15202) &&
	echo "degraded h3:rail1 (20mbit): $slow Mbit/s; h4:rail1 (200mbit): $fast Mbit/s" &&
	test "$slow" -lt 60 &&
	test "$fast" -ge 60 && test "$fast" -le 210
'

test_expect_success $P 'up -G 3 -H 1 --seed 7 replaces it: 3 hosts, 6 leaves, every router seed 7, all rails reach' '
	fab up -G 3 -H 1 --seed 7 &&
	expect_ns h1 h2 h3 l1.0 l1.1 l2.0 l2.1 l3.0 l3.1 s1 s2 &&
	fab hostfile | grep -v "^#" >hosts &&
	cat >expect <<-EOF &&
	h1 netns=$PFX-h1 rail0=10.100.1.1 rail1=10.101.1.1 leaf=l1
	h2 netns=$PFX-h2 rail0=10.100.2.2 rail1=10.101.2.2 leaf=l2
	h3 netns=$PFX-h3 rail0=10.100.3.3 rail1=10.101.3.3 leaf=l3
	EOF
	test_cmp expect hosts &&
	fab info >info &&
	router_sysctls >sysctls &&
	test "$(wc -l <sysctls)" = 8 &&
	test "$(awk "\$4 == 7" sysctls | wc -l)" = 8 &&
	check_rate "" h1:rail0 l1.0:s1 &&
	reach_all &&
	fab path 10.101.3.3 10.101.1.1 40000 5201 >p &&
	test_grep -x "h3 l3.1 s[12] l1.1 h1" p
'

# 3 tiers, 2 pods of 1 group: h1 -> h3 has 2 (leaf uplinks) x 2 (superspines) x 2 (spines
# down) = 8 paths.  One seed everywhere makes every router split flows the same way: at most 2
# paths (TESTBEDS.md: 2 of 8), distinct seeds spread 64 flows over (nearly) all 8.
test_expect_success $P '3 tiers (-P 2 -X 2) with --seed same: 64 flows polarize onto at most 2 of 8 paths' '
	fab up -P 2 -X 2 --seed same &&
	expect_ns h1 h2 h3 h4 l1.0 l1.1 l2.0 l2.1 s1 s2 s3 s4 x1 x2 &&
	fab info >info &&
	router_sysctls >sysctls &&
	test "$(awk "{print \$4}" sysctls | sort -u | wc -l)" = 1 &&
	reach_all &&
	test "$(fab path 10.100.1.1 10.100.1.2 40000 5201)" = "h1 l1.0 h2" &&
	fab path 10.100.1.1 10.101.1.2 40000 5201 >p &&
	test_grep -x "h1 l1.0 s[12] l1.1 h2" p &&
	fab path 10.100.1.1 10.100.2.3 42000-42063 5201 >same.paths &&
	test "$(wc -l <same.paths)" = 64 &&
	test_grep ! -v -x "h1 l1.0 s[12] x[12] s[34] l2.0 h3" same.paths &&
	sort same.paths | uniq -c &&
	n_same=$(sort -u same.paths | wc -l) &&
	test "$n_same" -le 2
'

test_expect_success $P '3 tiers with --seed distinct: the same 64 flows take at least 6 of 8 paths, ECMP at every tier' '
	fab up -P 2 -X 2 &&
	fab path 10.100.1.1 10.100.2.3 42000-42063 5201 >distinct.paths &&
	sort distinct.paths | uniq -c &&
	n_distinct=$(sort -u distinct.paths | wc -l) &&
	echo "distinct paths: same seed $n_same, distinct seeds $n_distinct" &&
	test "$n_distinct" -ge 6 && test "$n_distinct" -gt "$n_same" &&
	for hop in l1.0 s1 s2 x1 x2 s3 s4 l2.0; do
		test_grep " $hop " distinct.paths || return 1
	done &&
	reach_from h4 10.101.2.4 10.100.1.1 10.101.1.2
'

test_expect_success $P,FABSCOPE 'intent: the 3-tier fabric as fabscope-topology(5), every cable, no finding' '
	fab intent >fabric.topo &&
	test_grep "^# fabscope topology .* built by: ci/netns-fabric up -p $PFX .*-P 2 -X 2" fabric.topo &&
	test $(grep -c "^switch l[12]\.[01] tier=leaf pod=p[12] rail=[01]$" fabric.topo) = 4 &&
	test $(grep -c "^switch s[1-4] tier=spine pod=p[12]$" fabric.topo) = 4 &&
	test $(grep -c "^switch x[12] tier=superspine$" fabric.topo) = 2 &&
	test_grep -x "link h3:rail1 l2.1:h3 rail=1" fabric.topo &&
	test $(grep -c "^link " fabric.topo) = $((8 + 8 + 8)) &&
	"$FABSCOPE" topo check-file fabric.topo >check &&
	test_grep -x "fabric.topo: 10 switches, 4 nodes, 24 cables: 0 errors, 0 warnings" check &&
	fab hostfile | grep -v "^#" >hosts &&
	test $(grep -c " leaf=l[12] pod=p[12]$" hosts) = 4
'

test_expect_success $P 'down removes every namespace of the prefix and is idempotent' '
	fab down &&
	test -z "$(our_ns)" &&
	fab down >out &&
	test_grep "(0 namespaces removed)" out &&
	test_expect_exit 1 fab hostfile &&
	test_expect_exit 1 fab path 10.100.1.1 10.100.2.3 1 2
'

test_done
