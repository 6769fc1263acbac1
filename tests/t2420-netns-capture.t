#!/usr/bin/env bash
test_description='fabscope capture on a veth pair in a namespace of our own: RoCEv2 (UDP 4791)
and PFC frames are written, other traffic is not, each packet cut to the snap length; -c, -D
and SIGINT end it with exit 0 and a readable file; -C/-W keep a ring of the last files; a
missing interface, a bad filter and bad options are one line each'
. "$(dirname "$0")/test-lib.sh"

NS=fs$$c
NSB=fs$$d
P=ROOT,NETNS,FABSCOPE,TEST_TOOL,TCPDUMP
test_require_in_ci ROOT NETNS FABSCOPE TEST_TOOL TCPDUMP

inns() { ip netns exec "$NS" "$@"; }
innsb() { ip netns exec "$NSB" "$@"; }

# udp N PORT: N datagrams of 1000 bytes from vb (the other namespace) to va's address, on PORT
udp() {
	innsb bash -c 'for ((i = 0; i < $1; i++)); do printf "%1000s" x >/dev/udp/10.9.0.1/$2; done' - "$1" "$2"
}

# cap LOG ARGS...: fabscope capture on va in the background; returns once it captures
cap() {
	local log=$1
	shift
	ip netns exec "$NS" "$FABSCOPE" capture -i va -v "$@" >"$log" 2>&1 &
	cpid=$!
	test_atexit "test_kill_pid $cpid"
	test_wait_for 10 grep -q "capturing on va" "$log"
}

count() { tcpdump -nr "$1" 2>/dev/null | wc -l; }

# done_in SECONDS: the capture ends by itself (its exit code must be 0).  SECONDS is a hang
# guard, many times what it takes (a -D 1, a count reached, a SIGINT), so that a capture that
# does not end fails instead of hanging CI; it is no measure of how fast it ends.
done_in() {
	test_wait_for "$1" eval "! kill -0 $cpid 2>/dev/null" || { kill $cpid; return 1; }
	wait $cpid
}

test_expect_success $P 'a veth pair in a namespace of our own' '
	test_atexit "ip netns del $NS" &&
	test_atexit "ip netns del $NSB" &&
	ip netns add $NS && ip netns add $NSB &&
	{ inns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 || :; } &&
	{ innsb sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 || :; } &&
	ip -n $NS link add va type veth peer name vb netns $NSB &&
	ip -n $NS addr add 10.9.0.1/24 dev va &&
	ip -n $NSB addr add 10.9.0.2/24 dev vb &&
	ip -n $NS link set va up &&
	ip -n $NSB link set vb up &&
	# a static neighbour: no ARP round trip holding the first datagrams back
	ip -n $NSB neigh replace 10.9.0.1 lladdr "$(inns cat /sys/class/net/va/address)" dev vb &&
	test_wait_for 10 eval "ip -n $NSB link show vb | grep -q LOWER_UP"
'

# 20 datagrams to 4791 cut to 256 bytes, 5 PFC frames of 60: 24 + 20 x (16 + 256) + 5 x (16 + 60)
test_expect_success $P 'RoCEv2 and PFC frames are kept, cut to the snap length; other ports are not' '
	cap c1.log -w c1.pcap -c 25 &&
	udp 5 5000 &&
	udp 20 4791 &&
	innsb "$TEST_TOOL" pfc-inject vb --count 5 3=1000 >/dev/null &&
	done_in 20 &&
	test $(count c1.pcap) = 25 &&
	test $(tcpdump -nr c1.pcap "udp port 4791" 2>/dev/null | wc -l) = 20 &&
	test $(stat -c %s c1.pcap) = $((24 + 20 * 272 + 5 * 76)) &&
	test_grep "25 packets .* into 1 file; dropped: 0 by the kernel" c1.log
'

test_expect_success $P 'a VLAN-tagged RoCEv2 port is captured too, with --port for another UDP port' '
	cap c2.log -w c2.pcap --port 4792 -s 128 -c 6 &&
	udp 3 4791 && udp 3 4792 &&
	innsb "$TEST_TOOL" pfc-inject vb --count 3 --vlan 7 1=5 >/dev/null &&
	done_in 20 &&
	test $(tcpdump -nr c2.pcap "udp port 4792" 2>/dev/null | wc -l) = 3 &&
	test $(tcpdump -nr c2.pcap "vlan" 2>/dev/null | wc -l) = 3 &&
	test $(stat -c %s c2.pcap) = $((24 + 3 * (16 + 128) + 3 * 76))
'

test_expect_success $P '-D ends it, and SIGINT ends it with exit 0 and a readable file' '
	cap c3.log -w c3.pcap -D 1 &&
	udp 4 4791 &&
	done_in 10 &&
	test $(count c3.pcap) = 4 &&
	cap c4.log -w c4.pcap &&
	udp 7 4791 &&
	sleep 0.5 &&
	kill -INT $cpid &&
	done_in 5 &&
	test $(count c4.pcap) = 7
'

# 272 bytes a datagram: 15 fill a 4 KiB file (24 + 15 x 272 = 4104 > 4096: 14 a file), so 100
# datagrams make 8 files, of which -W 3 keeps the last 3
test_expect_success $P '-C and -W: a ring of the last files, each one whole' '
	mkdir ring &&
	cap c5.log -w ring/r.pcap -C 4K -W 3 -c 100 &&
	udp 100 4791 &&
	done_in 20 &&
	ls ring >files &&
	printf "r.pcap.5\nr.pcap.6\nr.pcap.7\n" >expect &&
	test_cmp expect files &&
	test $(count ring/r.pcap.5) = 14 && test $(count ring/r.pcap.6) = 14 &&
	test $(count ring/r.pcap.7) = 2 &&
	test_grep "100 packets .* into 8 files" c5.log
'

# a filter of over 300 characters whose last clause decides (it was cut to 255 once)
test_expect_success $P '-f: a long filter is used whole' '
	f=$(for i in $(seq 14); do printf "not host 10.77.0.%d and " $i; done) &&
	f="${f}udp port 5000" &&
	test ${#f} -gt 300 &&
	cap c6.log -w c6.pcap -f "$f" -c 3 &&
	udp 4 4791 && udp 3 5000 &&
	done_in 20 &&
	test $(count c6.pcap) = 3 &&
	test $(tcpdump -nr c6.pcap "udp port 5000" 2>/dev/null | wc -l) = 3
'

test_expect_success $P 'errors: one line each, exit 3 for the environment and 2 for usage' '
	test_expect_exit 3 inns "$FABSCOPE" capture -i nosuch0 -w x.pcap 2>e1 &&
	test $(wc -l <e1) = 1 && test_grep "no interface .nosuch0." e1 &&
	test_expect_exit 2 inns "$FABSCOPE" capture -i va -w x.pcap -f "udp port banana" 2>e2 &&
	test $(wc -l <e2) = 1 && test_grep "filter .udp port banana." e2 &&
	test_expect_exit 2 "$FABSCOPE" capture -i va 2>e3 && test_grep "give the interface" e3 &&
	test_expect_exit 2 "$FABSCOPE" capture -i va -w x.pcap -W 3 2>e4 && test_grep "give -C SIZE" e4 &&
	test_expect_exit 3 inns "$FABSCOPE" capture -i va -w /nonexistent/dir/x.pcap 2>e5 &&
	test $(wc -l <e5) = 1 && test_grep "cannot open the directory of -w ./nonexistent/dir.: No such file or directory$" e5 &&
	test $(grep -o "nonexistent/dir" e5 | wc -l) = 1
'

test_done
