#!/usr/bin/env bash
test_description='probes/pfcap.c on a veth pair in a namespace of our own: PFC and PAUSE frames
sent from one end (test-tool pfc-inject) are counted by a live capture (test-tool pfcap) as
received on the other end and as sent on the sending end, per priority: frames, XOFF and XON,
quanta, and the time paused - exact where pauses do not overlap, an XOFF refreshed inside its
own pause counted once, an XON ending a pause early, a pause still running counted up to the
read; 802.3x PAUSE apart, a VLAN-tagged frame, another opcode; no link speed, no time; missing
interface, interface down and no privilege are one-line errors'
. "$(dirname "$0")/test-lib.sh"

NS=fs$$p
P=ROOT,NETNS,TEST_TOOL,JQ
test_require_in_ci ROOT NETNS TEST_TOOL JQ TCPDUMP FABSCOPE

test_require_in_ci SETPRIV

inns() { ip netns exec "$NS" "$@"; }

# one_line FILE: FILE holds exactly one line (errors are one line)
one_line() {
	[ "$(wc -l <"$1")" = 1 ] && return 0
	echo "one_line: '$1' should hold one line; it holds:" >&2
	cat "$1" >&2
	return 1
}

# capture NAME IF LINK_GBPS [ARGS...]: test-tool pfcap on IF in the background (stopped by
# stop NAME, 60 s at most), its lines in NAME.json; returns once the capture runs
capture() {
	local name=$1 ifname=$2 gbps=$3
	shift 3
	rm -f "$name.ready" || return 1
	# not through inns: $! must be test-tool itself (ip netns exec execs it), not a subshell
	ip netns exec "$NS" "$TEST_TOOL" pfcap "$ifname" 60 "$gbps" --ready "$name.ready" "$@" \
		>"$name.json" 2>"$name.err" &
	eval "pid_$name=$!"
	test_atexit "test_kill_pid $!"
	test_wait_for 10 test -e "$name.ready"
}

# stop NAME: SIGTERM; the capture prints its final counts and exits 0, nothing on stderr
stop() {
	local pid
	eval "pid=\$pid_$1"
	kill -TERM "$pid" && wait "$pid" &&
	test_must_be_empty "$1.err" &&
	tail -n 1 "$1.json" >"$1.final" &&
	jq -e .final "$1.final" >/dev/null
}

# check FILE JQ-EXPR: the expression holds on the counts in FILE (else they are shown)
check() {
	jq -e "def abs: if . < 0 then -. else . end; $2" "$1" >/dev/null && return 0
	echo "check: '$2' does not hold on $1:" >&2
	jq -c . "$1" >&2
	return 1
}

# per_prio FILE DIR: [frames, xoff, xon, quanta] of each priority in direction DIR (rx, tx)
per_prio() {
	jq -c "[.prio[].$2 | [.frames, .xoff, .xon, .quanta]]" "$1"
}

inject() { inns "$TEST_TOOL" pfc-inject vb "$@" >>inject.out; }

test_expect_success $P 'a veth pair in a namespace of our own' '
	test_atexit "ip netns del $NS" &&
	ip netns add $NS &&
	# nothing crossing on its own (router solicitations, MLD); the filter would drop it anyway
	{ inns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 || :; } &&
	ip -n $NS link add va type veth peer name vb &&
	ip -n $NS link set va up &&
	ip -n $NS link set vb up
'

# 100 Gb/s: one quantum is 5.12 ns, the longest pause (0xffff) 335.5 us.  pfc-inject leaves at
# least the gap between frames (1 or 2 ms), so no pause overlaps the next frame of its priority
# and the time paused is exactly frames x quanta x 512 / 1e11; the tolerance is for rounding.
test_expect_success $P 'at 100 Gb/s: frames, XOFF/XON, quanta and time paused, exact' '
	capture a va 100 &&
	capture b vb 100 &&
	: >inject.out &&
	inject --count 100 --gap-us 2000 3=1000 &&
	inject --count 10 --gap-us 2000 5=0xffff &&
	inject --count 5 --gap-us 1000 0=100 7=0 &&
	inject --count 5 --gap-us 1000 --pause 2000 &&
	inject --count 2 --gap-us 1000 --vlan 100 1=300 &&
	inject --opcode 2 &&
	printf "sent %s\n" 100 10 5 5 2 1 >expect &&
	test_cmp expect inject.out &&
	stop a &&
	stop b &&
	check a.final ".ifname == \"va\" and .link_gbps == 100" &&
	check a.final ".frames == 123 and .pfc == 117 and .pause == 5 and .other == 1" &&
	check a.final ".truncated == 0 and .dropped == 0" &&
	echo "[[5,5,0,500],[2,2,0,600],[0,0,0,0],[100,100,0,100000],[0,0,0,0],[10,10,0,655350],[0,0,0,0],[5,0,5,0]]" >expect &&
	per_prio a.final rx >actual &&
	test_cmp expect actual &&
	check a.final "[.prio[].rx.paused_s] as \$p |
		[2.56e-6, 3.072e-6, 0, 5.12e-4, 0, 3.355392e-3, 0, 0] as \$e |
		all(range(8); ((\$p[.] - \$e[.]) | abs) < 1e-12)" &&
	check a.final ".global.rx == {frames: 5, xoff: 5, xon: 0, quanta: 10000, paused_s: .global.rx.paused_s}" &&
	check a.final "((.global.rx.paused_s - 5.12e-5) | abs) < 1e-12" &&
	# va sent nothing
	check a.final "(.prio | length) == 8 and all(.prio[], .global; .tx == {frames: 0, xoff: 0, xon: 0, quanta: 0, paused_s: 0})" &&
	# vb: the same frames, as sent; nothing received
	check b.final ".ifname == \"vb\" and .frames == 123 and .pfc == 117 and .pause == 5 and .other == 1" &&
	per_prio b.final tx >actual.b &&
	test_cmp expect actual.b &&
	jq -c "[.prio[], .global | .rx]" a.final >rx.a &&
	jq -c "[.prio[], .global | .tx]" b.final >tx.b &&
	test_cmp rx.a tx.b &&
	check b.final "(.prio | length) == 8 and all(.prio[], .global; .rx == {frames: 0, xoff: 0, xon: 0, quanta: 0, paused_s: 0})"
'

# 0.001 Gb/s: one quantum is 512 us, 1000 quanta 0.512 s, 0xffff quanta 33.55 s.  These cases
# depend on when frames are sent: the bounds allow for scheduling delays on a busy machine and
# stay clear of the values a wrong accounting would give (said at each).
test_expect_success $P 'at 1 Mb/s: a refreshed XOFF counted once, an XON ending a pause, a pause running' '
	capture s va 0.001 --interval 0.25 &&
	: >inject.out &&
	# two XOFFs 0.2 s apart: paused from the first until 0.512 s after the second, 0.712 s
	# (plus scheduling delay of the second frame); counting both whole would give 1.024 s
	inject --count 2 --gap-us 200000 2=1000 &&
	# a 33 s pause of priority 4 ended by an XON 0.3 s later; one of priority 6 left running
	inject 4=0xffff 6=0xffff &&
	sleep 0.3 &&
	inject 4=0 &&
	sleep 2 &&
	stop s &&
	check s.final ".frames == 4 and .pfc == 4 and .pause == 0 and .dropped == 0" &&
	echo "[[0,0,0,0],[0,0,0,0],[2,2,0,2000],[0,0,0,0],[2,1,1,65535],[0,0,0,0],[1,1,0,65535],[0,0,0,0]]" >expect &&
	per_prio s.final rx >actual &&
	test_cmp expect actual &&
	check s.final ".prio[2].rx.paused_s >= 0.711 and .prio[2].rx.paused_s < 0.9" &&
	# the XON came at least 0.3 s after the XOFF (plus the start of pfc-inject); ignored, the
	# pause would have run on until the capture stopped, 2 s later at least
	check s.final ".prio[4].rx.paused_s >= 0.3 and .prio[4].rx.paused_s < 1.5" &&
	# priority 6 is still paused when the capture stops: counted up to then, at least the 2.3 s
	# slept since its frame, at most the time the capture ran
	check s.final ".prio[6].rx.paused_s >= 2.3 and .prio[6].rx.paused_s <= .t" &&
	# the reads on the way: a running pause grows with the clock (0.1 s: the read and the
	# time printed with it are taken apart), an ended one stays put
	head -n -1 s.json >reads &&
	test "$(wc -l <reads)" -ge 8 &&
	jq -s -e "def abs: if . < 0 then -. else . end;
		[.[] | select(.prio[6].rx.frames == 1)] | length >= 6 and
		all(range(1; length) as \$i | [.[\$i - 1], .[\$i]];
			((.[1].prio[6].rx.paused_s - .[0].prio[6].rx.paused_s) - (.[1].t - .[0].t)) | abs < 0.1)" \
		reads >/dev/null &&
	jq -s -e "[.[] | select(.prio[4].rx.xon == 1) | .prio[4].rx.paused_s] | length >= 4 and
		(unique | length == 1)" reads >/dev/null &&
	check s.final "(.prio | length) == 8 and all(.prio[], .global; .tx.frames == 0)"
'

test_expect_success $P 'without a link speed frames are counted, time is unknown' '
	capture z va 0 &&
	: >inject.out &&
	inject --count 3 --gap-us 1000 3=1000 &&
	inject --pause 5 &&
	stop z &&
	check z.final ".link_gbps == 0 and .frames == 4 and .pfc == 3 and .pause == 1" &&
	check z.final ".prio[3].rx == {frames: 3, xoff: 3, xon: 0, quanta: 3000, paused_s: null}" &&
	check z.final ".global.rx == {frames: 1, xoff: 1, xon: 0, quanta: 5, paused_s: null}" &&
	check z.final "(.prio | length) == 8 and all(.prio[], .global; .rx.paused_s == null and .tx.paused_s == null)"
'

# tcpdump cannot decode PFC (opcode 0x0101 is "Unknown" to it), but its capture of the bytes,
# taken apart by the dissector, checks pfc-inject and macctl against each other
test_expect_success $P,TCPDUMP 'what pfc-inject sends, captured by tcpdump, dissects as sent' '
	{ ip netns exec $NS timeout 20 tcpdump -i va -n -U -c 4 -w td.pcap \
		"ether proto 0x8808 or (vlan and ether proto 0x8808)" 2>td.err & } &&
	td=$! &&
	test_atexit "test_kill_pid $td" &&
	test_wait_for 10 grep -q "listening on" td.err &&
	: >inject.out &&
	inject --src 02:00:00:00:aa:bb 3=1000 5=0 &&
	inject --pause 7 &&
	inject --vlan 100 1=300 &&
	inject --opcode 2 &&
	wait $td &&
	tcpdump -r td.pcap -n -e >td.txt 2>/dev/null &&
	test "$(grep -c " > 01:80:c2:00:00:01, .* length 60: " td.txt)" = 4 &&
	test_grep "^[0-9:.]* 02:00:00:00:aa:bb > 01:80:c2:00:00:01, ethertype MPCP (0x8808)" td.txt &&
	# the bytes of each frame, one frame per line
	tcpdump -r td.pcap -xx 2>/dev/null |
	awk "/^[^\t]/ { if (f != \"\") print f; f = \"\"; next }
	     { for (i = 2; i <= NF; i++) f = f \$i }
	     END { if (f != \"\") print f }" >frames &&
	test "$(wc -l <frames)" = 4 &&
	n=0 &&
	while read -r hex; do
		n=$((n + 1)) &&
		"$TEST_TOOL" macctl "$hex" >f$n || return 1
	done <frames &&
	grep -h "^kind\|^src\|^vlan\|^enable\|^quanta\|^opcode\|^flags\|^caplen" f1 f2 f3 f4 >got &&
	mac=$(inns cat /sys/class/net/vb/address) &&
	cat >expect <<-EOF &&
	kind pfc
	caplen 60
	src 02:00:00:00:aa:bb
	vlan -
	opcode 0x0101 PFC
	enable 0x28 3 5
	quanta 0 0 0 1000 0 0 0 0
	flags none
	kind pause
	caplen 60
	src $mac
	vlan -
	opcode 0x0001 PAUSE
	enable -
	quanta 7
	flags none
	kind pfc
	caplen 60
	src $mac
	vlan 100
	opcode 0x0101 PFC
	enable 0x02 1
	quanta 0 300 0 0 0 0 0 0
	flags none
	kind other
	caplen 60
	src $mac
	vlan -
	opcode 0x0002 GATE
	enable -
	quanta -
	flags none
	EOF
	test_cmp expect got
'

bad() { # CODE WORDS CMD...: exit CODE, nothing on stdout, one line on stderr holding WORDS
	test_expect_exit "$1" "${@:3}" >out 2>err &&
	test_must_be_empty out &&
	one_line err &&
	test_grep -F "$2" err
}

# probe NAME ARGS...: fabscope probe pfc --capture on va in the background (its record in
# NAME.jsonl, a JSON line; probe_wait makes it the array NAME.json); returns once it samples
# (its -v line says so)
probe() {
	local name=$1
	shift
	ip netns exec "$NS" "$FABSCOPE" probe pfc -i va --capture -v -o "$name.jsonl" "$@" \
		>"$name.out" 2>"$name.err" &
	eval "ppid_$name=$!"
	test_atexit "test_kill_pid $!"
	test_wait_for 10 grep -q "sampling" "$name.err"
}

probe_wait() {
	local pid
	eval "pid=\$ppid_$1"
	wait "$pid" || { cat "$1.err" >&2; return 1; }
	test $(wc -l <"$1.jsonl") = 1 && jq -s . "$1.jsonl" >"$1.json"
}

# The probe's own capture: veth has no PFC counters (its driver has no map), so the pause
# frames per priority and the time paused come from the frames the probe sees
test_expect_success $P,FABSCOPE 'probe pfc --capture: injected frames counted per priority, time from quanta' '
	probe pc --link-rate 100 --interval 0.25 --before 0.25 -D 1 --after 0.25 &&
	inject --count 40 --gap-us 2000 3=1000 &&
	inject --count 10 --gap-us 2000 5=0xffff 6=0 &&
	probe_wait pc &&
	check pc.json ".[0].capture.iface == \"va\" and .[0].capture.pfc == 50 and .[0].capture.truncated == 0" &&
	check pc.json ".[0].capture.prio[] | select(.prio == 3) | .rx_frames == 40 and .rx_xoff == 40
		and .rx_quanta == 40000 and .tx_frames == 0 and ((.rx_paused_s - 40000 * 512 / 1e11) | abs) < 1e-9" &&
	check pc.json ".[0].capture.prio[] | select(.prio == 5) | .rx_frames == 10 and .rx_quanta == 655350" &&
	check pc.json ".[0].capture.prio[] | select(.prio == 6) | .rx_xon == 10 and .rx_quanta == 0" &&
	# the pause metrics of the record are the capture'"'"'s: frames, and time measured (not estimated)
	check pc.json ".[0].priorities[] | select(.prio == 3) | .rx_frames == 40 and .estimated == false
		and .rx_paused_max > 0 and .rx_paused_max < 0.01" &&
	check pc.json ".[0].verdict == \"paused\" and .[0].storm == false and (.[0].sources | test(\"capture va\"))"
'

# 1 Mb/s: a quantum is 512 us, an XOFF of 0xffff quanta 33.5 s: frames every 100 ms keep
# priority 4 paused from the first one on - a storm, as a switch watchdog would judge it
test_expect_success $P,FABSCOPE 'probe pfc --capture: a peer pausing without end is a storm' '
	probe st --link-rate 0.001 --interval 0.25 --before 0.25 -D 1.5 --after 0 &&
	inject --count 12 --gap-us 100000 4=0xffff &&
	probe_wait st &&
	check st.json ".[0].verdict == \"storm\" and .[0].storm" &&
	check st.json ".[0].priorities[] | select(.prio == 4) | .storm == \"rx\" and .storm_run >= 3
		and .rx_paused_max == 1" &&
	grep -q "PFC STORM" st.out
'

test_expect_success $P 'no interface, interface down, a name too long, bad arguments: one line each' '
	bad 3 "no interface '"'"'nosuch0'"'"' in this network namespace" \
		inns "$TEST_TOOL" pfcap nosuch0 1 100 &&
	bad 3 "no interface '"'"'nosuch0'"'"' in this network namespace" \
		inns "$TEST_TOOL" pfc-inject nosuch0 3=1 &&
	ip -n $NS link add vc type veth peer name vd &&
	bad 3 "'"'"'vc'"'"' is down: bring it up (ip link set vc up)" inns "$TEST_TOOL" pfcap vc 1 100 &&
	bad 3 "'"'"'vc'"'"' is down" inns "$TEST_TOOL" pfc-inject vc 3=1 &&
	bad 2 "is longer than 15 bytes" inns "$TEST_TOOL" pfcap fs-abcdefghijklm 1 100 &&
	bad 2 "LINK_GBPS: '"'"'-1'"'"' is not a non-negative number" inns "$TEST_TOOL" pfcap va 1 -1 &&
	bad 2 "PRIO: '"'"'8'"'"' is not an integer in [0, 7]" inns "$TEST_TOOL" pfc-inject va 8=1 &&
	bad 2 "QUANTA: '"'"'65536'"'"' is not an integer in [0, 65535]" \
		inns "$TEST_TOOL" pfc-inject va 1=65536 &&
	bad 2 "usage: test-tool pfc-inject" inns "$TEST_TOOL" pfc-inject va 1=1 --pause 3
'

test_expect_success $P,SETPRIV 'capturing and sending need CAP_NET_RAW, and say so' '
	bad 3 "capturing on '"'"'va'"'"' needs CAP_NET_RAW: run as root" \
		inns setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$TEST_TOOL" pfcap va 1 100 &&
	bad 3 "sending on '"'"'vb'"'"' needs CAP_NET_RAW: run as root" \
		inns setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$TEST_TOOL" pfc-inject vb 3=1
'

test_done
