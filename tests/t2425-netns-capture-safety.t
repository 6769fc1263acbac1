#!/usr/bin/env bash
test_description='fabscope capture, run as root, gives root up once the device is open (issue 41,
finding 3): the process that reads packets and writes the files runs as nobody with no capability
(-Z USER another user, -Z root keeps root); its ring files are never written through links
another user planted (finding 2); and a full disk is exit 3 with what could not be written, the
file cut back to whole packets (finding 4)'
. "$(dirname "$0")/test-lib.sh"

NS=fs$$z
NSB=fs$$y
P=ROOT,NETNS,FABSCOPE,TCPDUMP
test_lazy_prereq UNSHARE '[ "$(id -u)" = 0 ] && unshare -m true && command -v mount'
test_require_in_ci ROOT NETNS FABSCOPE TCPDUMP SETPRIV UNSHARE

inns() { ip netns exec "$NS" "$@"; }
innsb() { ip netns exec "$NSB" "$@"; }
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# udp N: N datagrams of 1000 bytes from vb (the other namespace) to va's address, on port 4791
udp() {
	innsb bash -c 'for ((i = 0; i < $1; i++)); do printf "%1000s" x >/dev/udp/10.9.0.1/4791; done' - "$1"
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

# done_in SECONDS: the capture ends by itself (a hang guard, no measure of speed); its exit code
done_in() {
	test_wait_for "$1" eval "! kill -0 $cpid 2>/dev/null" || { kill $cpid; return 1; }
	wait $cpid
}

# field PID NAME: a line of /proc/PID/status, its values
field() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" | tr -s "[:space:]" " " | sed "s/ $//"; }

test_expect_success $P 'a veth pair in namespaces of our own' '
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
	ip -n $NSB neigh replace 10.9.0.1 lladdr "$(inns cat /sys/class/net/va/address)" dev vb &&
	test_wait_for 10 eval "ip -n $NSB link show vb | grep -q LOWER_UP" &&
	echo "root only" >victim && chmod 600 victim
'

test_expect_success $P 'run as root, it captures as nobody with no capability; the files are root'\''s' '
	cap c1.log -w c1.pcap &&
	kid=$(cat /proc/$cpid/task/*/children) &&
	test -n "$kid" && test $(echo $kid | wc -w) = 1 &&
	test "$(field $kid Uid)" = "65534 65534 65534 65534" &&
	test "$(field $kid Gid)" = "65534 65534 65534 65534" &&
	test "$(field $kid CapEff)" = 0000000000000000 &&
	test "$(field $kid CapPrm)" = 0000000000000000 &&
	test "$(field $kid NoNewPrivs)" = 1 &&
	test "$(field $cpid Uid)" = "0 0 0 0" &&
	udp 5 &&
	test_wait_for 10 eval "test \$(count c1.pcap) = 5" &&
	kill -TERM $cpid &&
	done_in 10 &&
	test $(count c1.pcap) = 5 &&
	test "$(stat -c %u c1.pcap)" = 0 &&
	test_grep "as uid 65534" c1.log &&
	test_grep "5 packets .* into 1 file" c1.log
'

test_expect_success $P '-Z root keeps root (nothing forked); -Z with no such user: one line, exit 2' '
	cap c2.log -w c2.pcap -Z root -c 3 &&
	test "$(field $cpid Uid)" = "0 0 0 0" &&
	test -z "$(cat /proc/$cpid/task/*/children)" &&
	udp 3 &&
	done_in 10 &&
	test $(count c2.pcap) = 3 &&
	test_expect_exit 2 timeout 20 ip netns exec "$NS" "$FABSCOPE" capture -i va -w c3.pcap -Z nosuchuser41 2>e &&
	test $(wc -l <e) = 1 && test_grep "Z nosuchuser41: no such user" e &&
	! test -e c3.pcap
'

test_expect_success $P,SETPRIV 'ring files: a directory others can write to is refused; links planted there are not followed' '
	mkdir ring && chmod 777 ring &&
	for n in 0 1 2 3 4 5 6 7; do asnobody ln -s "$TRASH_DIRECTORY/victim" ring/r.pcap.$n || return 1; done &&
	test_expect_exit 3 timeout 20 ip netns exec "$NS" "$FABSCOPE" capture -i va -w ring/r.pcap -C 4K -W 3 -c 100 2>e &&
	test $(wc -l <e) = 1 && test_grep "can be written by other users" e &&
	test "$(cat victim)" = "root only" &&
	FABSCOPE_SHARED_DIRS=1 test_expect_exit 3 timeout 20 ip netns exec "$NS" "$FABSCOPE" capture -i va -w ring/r.pcap -C 4K -W 3 -c 100 2>e &&
	test $(wc -l <e) = 1 && test_grep "cannot write .ring/r.pcap.0.: it is a symlink, never followed nor replaced" e &&
	test "$(cat victim)" = "root only" &&
	# the links gone, the ring is written as ever, by the process that kept root
	asnobody rm ring/r.pcap.0 ring/r.pcap.1 ring/r.pcap.2 ring/r.pcap.3 ring/r.pcap.4 &&
	chmod 755 ring &&
	cap c4.log -w ring/r.pcap -C 4K -W 3 -c 50 &&
	udp 50 &&
	done_in 20 &&
	test "$(cat victim)" = "root only" &&
	test $(count ring/r.pcap.2) = 14 && test $(count ring/r.pcap.3) = 8 &&
	! test -e ring/r.pcap.0 &&
	test -L ring/r.pcap.5
'

# 64 KiB hold the file header and some 240 packets of 272 bytes; 2000 come (a busy machine
# drops some in the kernel: enough are left to fill it).  The capture's processes are stopped
# while they come, so that its writer holds them all at once when the disk fills, as a busy
# machine's writer may: it must still keep every whole packet the disk took.
test_expect_success $P,UNSHARE 'a full disk: exit 3, what was not written said, the file holds whole packets' '
	mkdir mnt &&
	unshare -m sh -c "
		mount -t tmpfs -o size=64k,mode=0755 tmpfs mnt &&
		{ timeout 60 ip netns exec $NS \"\$FABSCOPE\" capture -i va -v -w mnt/f.pcap -c 2000 >full.log 2>&1; echo \$? >full.rc; } &
		i=0; while ! grep -q \"capturing on va\" full.log 2>/dev/null && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
		pids=\$(pgrep -f \"^\$FABSCOPE capture -i va -v -w mnt/f.pcap\")
		echo \$pids >stopped
		kill -STOP \$pids
		ip netns exec $NSB bash -c \"for ((i = 0; i < 2000; i++)); do printf %1000s x >/dev/udp/10.9.0.1/4791; done\"
		kill -CONT \$pids
		wait
		cp mnt/f.pcap full.pcap
	" &&
	test -s stopped &&
	{ test "$(cat full.rc)" = 3 || { echo "exit $(cat full.rc), not 3:"; cat full.log; false; } >&2; } &&
	tail -n 1 full.log >last &&
	test_grep "cannot write .mnt/f.pcap.: No space left on device: it holds its packets up to the last that could be written; [0-9]* captured packets\? \(is\|are\) not written" last &&
	tcpdump -nr full.pcap >pkts 2>tcpdump.err &&
	! grep -qi "truncated\|error" tcpdump.err &&
	# every whole record the 64 KB took is kept, however many the writer
	# held when the disk filled: one more would not have fitted
	n=$(wc -l <pkts) && test $n -gt 0 && test $n -lt 2000 &&
	test $((24 + (n + 1) * 272)) -gt 65536 &&
	test_grep "capture: $n packets .* into 1 file" full.log &&
	test $(stat -c %s full.pcap) = $((24 + n * 272))
'

test_done
