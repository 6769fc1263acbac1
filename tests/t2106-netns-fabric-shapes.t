#!/usr/bin/env bash
test_description='ci/netns-fabric --shape: a rail-only fabric (each rail its own spines, no leaf on
another rail.s spines, cross-rail traffic sent by the host out of the destination.s NIC) and a
dual-plane one (every NIC a port on each of two planes that never meet): reachability, the cables
of a leaf, per-interface counters that show where packets went, path, intent that fabscope reads,
the hostfile.s endpoints per plane, degrade and spray on plane-1 names; usage errors'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fabric.sh"
. "$TEST_DIRECTORY/lib-lb.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$s
P=ROOT,NETNS,JQ
test_lazy_prereq LB '[ -x "$SRCDIR/ci/lb/fabric-lb" ] && [ -r "$SRCDIR/ci/lb/lb.bpf.o" ]'
test_require_in_ci ROOT NETNS JQ FABSCOPE LB

# ifaces NODE: the interfaces of NODE but lo, sorted, one a line
ifaces() {
	ip -n "$PFX-$1" -o link show | awk -F': ' '{ sub(/@.*/, "", $2); if ($2 != "lo") print $2 }' | sort
}

# sum_tx NODE...: the packets sent by every interface of these nodes together
sum_tx() {
	local n v t=0
	for n; do
		v=$(ip -n "$PFX-$n" -j -s link show | jq "[.[] | select(.ifname != \"lo\") | .stats64.tx.packets] | add") ||
			return 1
		t=$((t + v))
	done
	echo $t
}

# uplink_sum NODE: the packets sent by all uplinks of NODE together (lib-lb.sh's uplink_tx)
uplink_sum() {
	uplink_tx "$1" | tr " " "\n" | awk -F= '{ t += $2 } END { print t + 0 }'
}

test_expect_success 'usage errors: a bad --shape, or one that cannot be, is exit 2 with one line' '
	while read -r args; do
		echo "args: $args" &&
		test_expect_exit 2 "$FABRIC" $args 2>err && one_line err || return 1
	done <<-\EOF &&
	up -p x --shape bogus
	up -p x --shape
	up -p x --shape Rail-only
	up -p x --shape rail-only -P 2 -X 2
	up -p x --shape rail-only -R 16 -S 8
	up -p x --shape dual-plane -S 65
	hostfile -p x --shape rail-only
	lb -p x spray --shape dual-plane
	EOF
	test_expect_exit 2 "$FABRIC" up -p x --shape bogus 2>err &&
	test_grep "bad shape .bogus. (want leaf-spine, rail-only or dual-plane)" err &&
	test_expect_exit 2 "$FABRIC" up -p x --shape rail-only -P 2 -X 2 2>err &&
	test_grep "rail-only has no pods" err &&
	"$FABRIC" --help >out &&
	test_grep -e "--shape leaf-spine|rail-only|dual-plane" out &&
	test_grep "^  *rail-only " out && test_grep "^  *dual-plane " out
'

test_expect_success $P 'rail-only: up builds 4 hosts x 2 rails, 4 leaves and 2 spines for each rail' '
	test_atexit "\"\$FABRIC\" down -p \"\$PFX\"" &&
	fab up --shape rail-only >up.out &&
	cat up.out &&
	test_grep "4 hosts x 2 rails, 4 leaves, 4 spines, shape rail-only, 16 links" up.out &&
	expect_ns h1 h2 h3 h4 l1.0 l1.1 l2.0 l2.1 s1 s2 s3 s4 &&
	fab info >info &&
	test_grep -x "SHAPE=rail-only" info &&
	(
		. ./info &&
		test "$SPINES" = "s1 s2 s3 s4" && test "$LEAVES" = "l1.0 l1.1 l2.0 l2.1" &&
		test "$H3_RAIL1" = 10.101.2.3 && test "$H3_RAIL1_LEAF" = l2.1 &&
		test "$LINKS" = "h1:rail0 h1:rail1 h2:rail0 h2:rail1 h3:rail0 h3:rail1 h4:rail0 h4:rail1 l1.0-s1 l1.0-s2 l1.1-s3 l1.1-s4 l2.0-s1 l2.0-s2 l2.1-s3 l2.1-s4"
	) &&
	fab hostfile >hostfile &&
	test_grep "^# .*ci/netns-fabric up -p $PFX .*--shape rail-only" hostfile &&
	test_grep -x "h3 netns=$PFX-h3 rail0=10.100.2.3 rail1=10.101.2.3 leaf=l2" hostfile
'

test_expect_success $P 'rail-only: a leaf is cabled to its own rail.s spines only and routes only its rail' '
	ifaces l1.0 >if.l1.0 && printf "%s\n" h1 h2 s1 s2 >expect && test_cmp expect if.l1.0 &&
	ifaces l2.1 >if.l2.1 && printf "%s\n" h3 h4 s3 s4 >expect && test_cmp expect if.l2.1 &&
	ifaces s3 >if.s3 && printf "%s\n" l1.1 l2.1 >expect && test_cmp expect if.s3 &&
	ifaces s2 >if.s2 && printf "%s\n" l1.0 l2.0 >expect && test_cmp expect if.s2 &&
	ip -n "$PFX-l1.0" route get 10.100.2.3 >r && test_grep " dev s[12] " r &&
	test_must_fail ip -n "$PFX-l1.0" route get 10.101.2.3 &&
	test_must_fail ip -n "$PFX-s1" route get 10.101.2.3 &&
	test_expect_exit 1 fab degrade l1.0-s3 20mbit
'

test_expect_success $P 'rail-only: every rail of every host reaches every rail of every other host' '
	reach_all "rail[0-9]*"
'

test_expect_success $P 'rail-only: cross-rail packets leave the host by the destination.s rail, both ways' '
	a0=$(tx h1 rail0) && a1=$(tx h1 rail1) && u0=$(uplink_sum l1.0) && u1=$(uplink_sum l1.1) &&
	udp_flow h1 10.100.1.1 5001 10.101.2.3 100 0 &&
	d0=$(($(tx h1 rail0) - a0)) && d1=$(($(tx h1 rail1) - a1)) &&
	e0=$(($(uplink_sum l1.0) - u0)) && e1=$(($(uplink_sum l1.1) - u1)) &&
	echo "10.100.1.1 -> 10.101.2.3: h1 sent $d0 on rail0, $d1 on rail1; up from l1.0 $e0, from l1.1 $e1" &&
	test $d1 -ge 100 && test $d0 -lt 10 && test $e1 -ge 100 && test $e0 -lt 10 &&
	a0=$(tx h3 rail0) && a1=$(tx h3 rail1) &&
	udp_flow h3 10.101.2.3 5002 10.100.1.1 100 0 &&
	d0=$(($(tx h3 rail0) - a0)) && d1=$(($(tx h3 rail1) - a1)) &&
	echo "10.101.2.3 -> 10.100.1.1: h3 sent $d0 on rail0, $d1 on rail1" &&
	test $d0 -ge 100 && test $d1 -lt 10
'

test_expect_success $P 'rail-only: path names the hops, the host leaving by the destination.s rail' '
	fab path 10.100.1.1 10.101.2.3 40000 5201 >p1 &&
	test_grep -x "h1 l1.1 s[34] l2.1 h3" p1 &&
	fab path 10.101.2.3 10.100.1.1 40000 5201 udp >p2 &&
	test_grep -x "h3 l2.0 s[12] l1.0 h1" p2 &&
	test "$(fab path 10.100.1.1 10.101.1.2 40000 5201)" = "h1 l1.1 h2" &&
	fab path 10.100.1.1 10.100.2.4 40000 5201 >p3 &&
	test_grep -x "h1 l1.0 s[12] l2.0 h4" p3 &&
	fab path 10.100.1.1 10.101.2.3 40000-40063 5201 >paths &&
	test_line_count = 64 paths &&
	test_grep ! -v -x "h1 l1.1 s[34] l2.1 h3" paths &&
	test "$(awk "{print \$3}" paths | sort -u | tr "\n" " ")" = "s3 s4 "
'

test_expect_success $P,FABSCOPE 'rail-only: intent gives every spine its rail, and fabscope reads it' '
	fab intent >ro.topo &&
	test_grep "^# fabscope topology .* built by: ci/netns-fabric up -p $PFX .*--shape rail-only" ro.topo &&
	test $(grep -c "^switch s[12] tier=spine rail=0$" ro.topo) = 2 &&
	test $(grep -c "^switch s[34] tier=spine rail=1$" ro.topo) = 2 &&
	test_grep -x "link l1.1:s3 s3:l1.1" ro.topo &&
	test_grep ! "^link l[12]\.0:s[34] " ro.topo &&
	test_grep ! "^link l[12]\.1:s[12] " ro.topo &&
	test $(grep -c "^link " ro.topo) = 16 &&
	"$FABSCOPE" topo check-file ro.topo >check &&
	test_grep -x "ro.topo: 8 switches, 4 nodes, 16 cables: 0 errors, 0 warnings" check &&
	"$FABSCOPE" topo export ro.topo --format fabscope -o ro.export &&
	test_grep -x "switch s3 tier=spine rail=1" ro.export
'

test_expect_success $P,LB 'rail-only: spray takes a leaf.s uplinks among its own rail.s spines' '
	fab lb spray >lb.out && test_grep "a BPF program on 4 routers" lb.out &&
	a=$(uplink_tx l1.1) && udp_flow h1 10.100.1.1 5003 10.101.2.3 80 0 && b=$(uplink_tx l1.1) &&
	d=$(uplink_delta "$a" "$b") && echo "l1.1: $d" &&
	case " $d" in *" s3="*" s4="*) ;; *) false ;; esac &&
	every_one "$d" 30 &&
	fab lb ecmp >/dev/null
'

test_expect_success $P 'dual-plane: up builds two planes; the hostfile has both ports of each rail' '
	fab up --shape dual-plane >up.out &&
	cat up.out &&
	test_grep "4 hosts x 2 rails x 2 planes, 8 leaves, 4 spines, shape dual-plane, 32 links" up.out &&
	expect_ns h1 h2 h3 h4 l1.0 l1.1 l2.0 l2.1 l1.0.1 l1.1.1 l2.0.1 l2.1.1 s1 s2 s3 s4 &&
	fab hostfile >hostfile &&
	test_grep "^# .*ci/netns-fabric up -p $PFX .*--shape dual-plane" hostfile &&
	grep -v "^#" hostfile >hosts &&
	cat >expect <<-EOF &&
	h1 netns=$PFX-h1 rail0=10.100.1.1 rail0/1=10.150.1.1 rail1=10.101.1.1 rail1/1=10.151.1.1 leaf=l1
	h2 netns=$PFX-h2 rail0=10.100.1.2 rail0/1=10.150.1.2 rail1=10.101.1.2 rail1/1=10.151.1.2 leaf=l1
	h3 netns=$PFX-h3 rail0=10.100.2.3 rail0/1=10.150.2.3 rail1=10.101.2.3 rail1/1=10.151.2.3 leaf=l2
	h4 netns=$PFX-h4 rail0=10.100.2.4 rail0/1=10.150.2.4 rail1=10.101.2.4 rail1/1=10.151.2.4 leaf=l2
	EOF
	test_cmp expect hosts &&
	fab info >info &&
	test_grep -x "SHAPE=dual-plane" info &&
	(
		. ./info &&
		test "$LEAVES" = "l1.0 l1.1 l2.0 l2.1 l1.0.1 l1.1.1 l2.0.1 l2.1.1" &&
		test "$SPINES" = "s1 s2 s3 s4" &&
		test "$H3_RAIL1" = 10.101.2.3 && test "$H3_RAIL1_LEAF" = l2.1 &&
		test "$H3_RAIL1_P1" = 10.151.2.3 && test "$H3_RAIL1_P1_GW" = 10.151.2.254 &&
		test "$H3_RAIL1_P1_LEAF" = l2.1.1 &&
		case " $LINKS " in *" h3:rail1.1 "*" l1.0.1-s3 "*) ;; *) false ;; esac
	) &&
	ifaces h1 >if.h1 && printf "%s\n" rail0 rail0.1 rail1 rail1.1 >expect && test_cmp expect if.h1 &&
	ifaces l1.0.1 >if.l && printf "%s\n" h1 h2 s3 s4 >expect && test_cmp expect if.l &&
	ifaces s3 >if.s3 && printf "%s\n" l1.0.1 l1.1.1 l2.0.1 l2.1.1 >expect && test_cmp expect if.s3
'

test_expect_success $P,FABSCOPE 'dual-plane: fabscope reads the hostfile: a lane per rail and plane' '
	printf "[global]\nhostfile = hosts\n[p]\nkind = pairwise\ntest = lat\n" >dp.plan &&
	"$FABSCOPE" run --dry-run dp.plan >dry &&
	cat dry &&
	test_grep "4 nodes, 4 lanes" dry
'

test_expect_success $P 'dual-plane: each plane reaches across, plane 0 to plane 0 and plane 1 to plane 1' '
	reach_all "rail[0-9]*" &&
	reach_all "rail[0-9]*/1"
'

test_expect_success $P 'dual-plane: the planes never meet' '
	test_expect_exit 1 fab path 10.150.1.1 10.100.2.3 40000 5201 2>err &&
	test_grep "no route in s[34] " err &&
	test_expect_exit 1 fab path 10.101.2.3 10.151.1.1 40000 5201 &&
	test_must_fail reach_from h1 10.150.1.1 10.100.2.3 >out &&
	test_grep "no reply: 10.150.1.1 -> 10.100.2.3" out
'

test_expect_success $P 'dual-plane: path follows plane 1 on plane-1 names' '
	test "$(fab path 10.150.1.1 10.150.1.2 40000 5201)" = "h1 l1.0.1 h2" &&
	fab path 10.150.1.1 10.151.2.3 40000-40063 5201 udp >paths &&
	test_line_count = 64 paths &&
	test_grep ! -v -x "h1 l1.0.1 s[34] l2.1.1 h3" paths &&
	test "$(awk "{print \$3}" paths | sort -u | tr "\n" " ")" = "s3 s4 " &&
	fab path 10.101.2.4 10.100.1.2 40000 5201 >p0 &&
	test_grep -x "h4 l2.1 s[12] l1.0 h2" p0
'

# 500 packets, a millisecond apart (under the links' shaping): a plane-0 router that carried
# them would count 500 or more; what the six count beside them is the bed's own (ARP, their
# neighbours' probes), which grows with the time the counters take to read on a busy machine
# (20 packets once, beside a make check and two spinners)
test_expect_success $P 'dual-plane: plane-1 packets cross only plane-1 leaves and spines' '
	plane0="l1.0 l1.1 l2.0 l2.1 s1 s2" &&
	z=$(sum_tx $plane0) &&
	a0=$(tx h1 rail0) && a1=$(tx h1 rail0.1) && u=$(uplink_sum l1.0.1) &&
	s=$(($(tx s3 l2.1.1) + $(tx s4 l2.1.1))) &&
	udp_flow h1 10.150.1.1 5001 10.151.2.3 500 1000 &&
	d0=$(($(tx h1 rail0) - a0)) && d1=$(($(tx h1 rail0.1) - a1)) &&
	du=$(($(uplink_sum l1.0.1) - u)) &&
	ds=$(($(tx s3 l2.1.1) + $(tx s4 l2.1.1) - s)) &&
	dz=$(($(sum_tx $plane0) - z)) &&
	echo "h1 sent $d0 on rail0, $d1 on rail0.1; up from l1.0.1 $du; s3+s4 to l2.1.1 $ds; plane 0 routers $dz" &&
	test $d1 -ge 500 && test $d0 -lt 50 && test $du -ge 500 && test $ds -ge 500 && test $dz -lt 50
'

test_expect_success $P,FABSCOPE 'dual-plane: intent has plane= on switches and host cables, and fabscope reads it' '
	fab intent >dp.topo &&
	test $(grep -c "^switch l[12]\.[01] tier=leaf plane=0 rail=[01]$" dp.topo) = 4 &&
	test $(grep -c "^switch l[12]\.[01]\.1 tier=leaf plane=1 rail=[01]$" dp.topo) = 4 &&
	test $(grep -c "^switch s[12] tier=spine plane=0$" dp.topo) = 2 &&
	test $(grep -c "^switch s[34] tier=spine plane=1$" dp.topo) = 2 &&
	test_grep -x "link h3:rail1 l2.1:h3 rail=1 plane=0" dp.topo &&
	test_grep -x "link h3:rail1.1 l2.1.1:h3 rail=1 plane=1" dp.topo &&
	test_grep -x "link l1.0.1:s3 s3:l1.0.1" dp.topo &&
	test $(grep -c "^link " dp.topo) = 32 &&
	"$FABSCOPE" topo check-file dp.topo >check &&
	test_grep -x "dp.topo: 12 switches, 4 nodes, 32 cables: 0 errors, 0 warnings" check &&
	"$FABSCOPE" topo export dp.topo --slurm --rail 1 --plane 1 -o slurm.conf &&
	cat slurm.conf &&
	test_grep -x "SwitchName=l2.1.1 Nodes=h3,h4" slurm.conf &&
	test_grep -x "SwitchName=s3 Switches=l1.1.1,l2.1.1" slurm.conf &&
	test_grep ! "SwitchName=s[12] " slurm.conf
'

test_expect_success $P 'dual-plane: degrade re-shapes a plane-1 link, both ends, and nothing else' '
	fab degrade h3:rail1.1 20mbit &&
	check_rate 20Mbit h3:rail1.1 l2.1.1:h3 &&
	check_rate "" h3:rail1 l2.1:h3 &&
	fab degrade l1.0.1-s4 20mbit &&
	check_rate 20Mbit l1.0.1:s4 s4:l1.0.1 &&
	check_rate "" l1.0.1:s3 l1.0:s2 &&
	fab degrade s4-l1.0.1 none &&
	check_rate "" l1.0.1:s4 s4:l1.0.1 &&
	test_expect_exit 1 fab degrade l1.0.1-s1 20mbit &&
	test_expect_exit 1 fab degrade h1:rail2.1 20mbit
'

test_expect_success $P,LB 'dual-plane: spray on every leaf; a plane-1 leaf sprays one flow over both plane-1 spines' '
	fab lb spray >lb.out && test_grep "a BPF program on 8 routers" lb.out &&
	a=$(uplink_tx l1.0.1) && udp_flow h1 10.150.1.1 5004 10.150.2.3 80 0 && b=$(uplink_tx l1.0.1) &&
	d=$(uplink_delta "$a" "$b") && echo "l1.0.1: $d" &&
	case " $d" in *" s3="*" s4="*) ;; *) false ;; esac &&
	every_one "$d" 30 &&
	a=$(uplink_tx l1.0) && udp_flow h1 10.100.1.1 5004 10.100.2.3 80 0 && b=$(uplink_tx l1.0) &&
	d=$(uplink_delta "$a" "$b") && echo "l1.0: $d" &&
	case " $d" in *" s1="*" s2="*) ;; *) false ;; esac &&
	every_one "$d" 30 &&
	fab lb ecmp >/dev/null
'

test_expect_success $P,FABSCOPE 'dual-plane with pods (-P 2 -X 1): each plane its own spines and superspine' '
	fab up --shape dual-plane -G 2 -H 1 -P 2 -X 1 >up.out &&
	test_grep "2 hosts x 2 rails x 2 planes, 8 leaves, 8 spines, 2 superspines in 2 pods" up.out &&
	expect_ns h1 h2 l1.0 l1.1 l2.0 l2.1 l1.0.1 l1.1.1 l2.0.1 l2.1.1 s1 s2 s3 s4 s5 s6 s7 s8 x1 x2 &&
	fab path 10.150.1.1 10.151.2.2 40000 5201 >p1 &&
	test_grep -x "h1 l1.0.1 s[56] x2 s[78] l2.1.1 h2" p1 &&
	fab path 10.100.1.1 10.100.2.2 40000 5201 >p0 &&
	test_grep -x "h1 l1.0 s[12] x1 s[34] l2.0 h2" p0 &&
	reach_all "rail[0-9]*" &&
	reach_all "rail[0-9]*/1" &&
	fab intent >pods.topo &&
	test_grep -x "switch x2 tier=superspine plane=1" pods.topo &&
	test_grep -x "switch s7 tier=spine pod=p2 plane=1" pods.topo &&
	"$FABSCOPE" topo check-file pods.topo >check &&
	test_grep -x "pods.topo: 18 switches, 2 nodes, 32 cables: 0 errors, 0 warnings" check
'

test_expect_success $P 'down removes every namespace of both planes, and the state' '
	fab down >out &&
	test_grep "(20 namespaces removed)" out &&
	test -z "$(our_ns)" &&
	test ! -e "/run/fabscope-netns-fabric/$PFX.env" &&
	test_expect_exit 1 fab info
'

test_done
