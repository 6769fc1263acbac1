#!/usr/bin/env bash
test_description='probes/counters*.c on a real driver: the ethtool statistics of a veth pair in a
namespace of our own, read through the SIOCETHTOOL ioctl (string set size, names, values), are
those `ethtool -S` prints, for one and for several queues, unprivileged too; a counter moves
when packets cross; the sampler survives the string set changing size under it; a device
without ethtool statistics, a missing interface and an over-long name are one-line errors'
. "$(dirname "$0")/test-lib.sh"

NS=fs$$e
P=ROOT,NETNS,TEST_TOOL,ETHTOOL
test_require_in_ci ROOT NETNS TEST_TOOL ETHTOOL

test_require_in_ci SETPRIV

inns() { ip netns exec "$NS" "$@"; }

# one_line FILE: FILE holds exactly one line (errors are one line)
one_line() {
	[ "$(wc -l <"$1")" = 1 ] && return 0
	echo "one_line: '$1' should hold one line; it holds:" >&2
	cat "$1" >&2
	return 1
}

# ethtool_s IF: `ethtool -S IF` as "name: value" lines, the way test-tool pfc ethtool prints them
ethtool_s() {
	inns ethtool -S "$1" | sed -e "/^NIC statistics:\$/d" -e "s/^ *//"
}

# stat FILE NAME: the value of NAME in FILE
stat() {
	sed -n "s/^$2: //p" "$1"
}

test_expect_success $P 'a veth pair in a namespace of our own' '
	test_atexit "ip netns del $NS" &&
	ip netns add $NS &&
	ip -n $NS link set lo up &&
	# no IPv6 router solicitations or MLD reports crossing on their own
	{ inns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 || :; } &&
	ip -n $NS link add va type veth peer name vb &&
	ip -n $NS addr add 10.213.0.1/24 dev va &&
	ip -n $NS link set va up &&
	ip -n $NS link set vb up &&
	ip -n $NS neigh add 10.213.0.2 lladdr 02:00:00:00:00:02 dev va
'

test_expect_success $P 'the ioctl gives the names and values ethtool -S prints' '
	inns "$TEST_TOOL" pfc ethtool va >ours &&
	ethtool_s va >theirs &&
	test_cmp theirs ours &&
	# veth: its peer, then per-queue XDP counters
	test_grep "^peer_ifindex: $(ip -n $NS -o link show vb | cut -d: -f1)$" ours &&
	test_grep "^rx_queue_0_xdp_packets: " ours &&
	test_grep "^tx_queue_0_xdp_xmit: " ours &&
	inns "$TEST_TOOL" pfc ethtool va --driver >drv &&
	echo veth >expect &&
	test_cmp expect drv
'

test_expect_success $P,SETPRIV 'reading statistics needs no privilege' '
	inns setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$TEST_TOOL" pfc ethtool va >unpriv &&
	test_cmp ours unpriv
'

test_expect_success $P 'a counter moves when packets cross' '
	# veth counts received packets per queue once NAPI runs it: GRO, and UDP eligible for it
	inns ethtool -K vb gro on rx-udp-gro-forwarding on &&
	inns "$TEST_TOOL" pfc ethtool vb >before &&
	inns bash -c "for i in \$(seq 20); do echo x >/dev/udp/10.213.0.2/9; done" &&
	inns "$TEST_TOOL" pfc ethtool vb >after &&
	test $(($(stat after rx_queue_0_xdp_packets) - $(stat before rx_queue_0_xdp_packets))) -ge 20 &&
	test $(($(stat after rx_queue_0_xdp_bytes) - $(stat before rx_queue_0_xdp_bytes))) -ge 40 &&
	# the same names as ethtool -S (values may have moved meanwhile)
	ethtool_s vb | cut -d: -f1 >theirs2 &&
	cut -d: -f1 after >names &&
	test_cmp theirs2 names
'

test_expect_success $P 'several queues, the longest interface name' '
	ip -n $NS link add fs-abcdefghijkl numrxqueues 3 numtxqueues 3 type veth \
		peer name vc numrxqueues 3 numtxqueues 3 &&
	inns "$TEST_TOOL" pfc ethtool fs-abcdefghijkl >multi &&
	ethtool_s fs-abcdefghijkl >theirs3 &&
	test_cmp theirs3 multi &&
	test_grep "^rx_queue_2_xdp_packets: " multi &&
	test "$(wc -l <multi)" -gt "$(wc -l <ours)"
'

test_expect_success $P 'the live sources: veth has no name map, so nothing maps, and that is said' '
	inns "$TEST_TOOL" pfc snapshot --if va >snap &&
	test_grep "^# sources: ethtool va (driver veth, map none): 0 of [0-9]* mapped$" snap &&
	# the speed veth reports in sysfs
	test_grep "^# link $(($(inns cat /sys/class/net/va/speed) / 1000)) Gb/s$" snap &&
	test_grep "^fabscope-counters 1$" snap &&
	test_grep "^time [0-9]" snap &&
	test "$(grep -c "^prio\|^port" snap)" = 0 &&
	inns "$TEST_TOOL" pfc snapshot --root / --if va >snap2 &&
	test_grep "^# sources: ethtool va (driver veth, map none)" snap2
'

test_expect_success $P 'the sampler reads on while the string set changes size' '
	inns "$TEST_TOOL" pfc sample --if fs-abcdefghijkl --interval 0.02 --count 40 --out ch \
		>sampled 2>sample.err &
	sampler=$! &&
	for i in 1 2 3 4; do
		inns ethtool -L fs-abcdefghijkl rx 1 tx 1 && sleep 0.1 &&
		inns ethtool -L fs-abcdefghijkl rx 3 tx 3 && sleep 0.1 || break
	done &&
	wait $sampler &&
	test_must_be_empty sample.err &&
	test_grep "^samples 40$" sampled
'

bad() { # CODE WORDS CMD...: exit CODE, nothing on stdout, one line on stderr holding WORDS
	test_expect_exit "$1" "${@:3}" >out 2>err &&
	test_must_be_empty out &&
	one_line err &&
	test_grep -F "$2" err
}

test_expect_success $P 'no statistics, no interface, a name too long: one line each' '
	bad 3 "'"'"'lo'"'"' has no ethtool statistics (its driver gives none)" \
		inns "$TEST_TOOL" pfc ethtool lo &&
	bad 3 "'"'"'lo'"'"' has no ethtool statistics" inns "$TEST_TOOL" pfc snapshot --if lo &&
	bad 3 "no interface '"'"'nosuch0'"'"' in this network namespace" \
		inns "$TEST_TOOL" pfc ethtool nosuch0 &&
	bad 3 "no interface '"'"'nosuch0'"'"'" inns "$TEST_TOOL" pfc snapshot --if nosuch0 &&
	bad 2 "is longer than 15 bytes" inns "$TEST_TOOL" pfc ethtool fs-abcdefghijklm &&
	# our namespace'"'"'s devices are not the host'"'"'s
	if ! ip link show fs-abcdefghijkl >/dev/null 2>&1; then
		bad 3 "no interface '"'"'fs-abcdefghijkl'"'"'" "$TEST_TOOL" pfc ethtool fs-abcdefghijkl
	fi
'

test_done
