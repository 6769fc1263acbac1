#!/usr/bin/env bash
test_description='probes/trace.c (test-tool trace): TCP SYN probes of one exact 5-tuple and
rising TTL name the routers of that flow in the fabric of namespaces (ci/netns-fabric); for every
source port the routers traced are those ci/netns-fabric path predicts from the kernel, on 2 tiers
(both spines), 3 tiers (several full paths) and 3 tiers with one hash seed (few classes); under
the default ICMP rate limit retries fill the gaps, and a patient trace of 12 ports gets every one;
a live 5-tuple is reached by its challenge ACK; a trace waits (--settle) for the connection of a
running 5-tuple to end, so none of its ACKs is taken for an answer; concurrent traces do not mix;
unreachable destinations end bounded; without CAP_NET_RAW exit 3'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fabric.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$t
P=ROOT,NETNS,TEST_TOOL
test_require_in_ci ROOT NETNS TEST_TOOL

test_require_in_ci SETPRIV

# trace NODE ARGS...: test-tool trace ARGS inside host NODE
trace() {
	fab exec "$1" "$TEST_TOOL" trace "${@:2}"
}

# routers: the router nodes of the fabric built last (from ./info)
routers() { (. ./info && echo $LEAVES $SPINES $SUPERSPINES); }

# bed_up ARGS...: (re)build the fabric, note its addresses in ./addrs ("ADDRESS NODE", each
# address naming exactly one node); a listener from an older fabric is stopped first (it would
# keep that fabric's h3 namespace alive)
bed_up() {
	if [ -n "${listener_pid:-}" ]; then
		test_kill_pid $listener_pid
		listener_pid=
	fi
	fab up "$@" &&
	fab info >info &&
	for n in $(. ./info && echo $HOSTS $LEAVES $SPINES $SUPERSPINES); do
		ip -n "$PFX-$n" -o -4 addr show |
		awk -v n="$n" '{ for (i = 1; i < NF; i++) if ($i == "inet") { a = $(i + 1); sub("/.*", "", a);
			if (a !~ /^127\./) print a, n } }' || return 1
	done | sort -u >addrs &&
	test "$(awk "{print \$1}" addrs | uniq -d | wc -l)" = 0 &&
	test_grep "^10.100.1.254 l1.0$" addrs
}

# relax_icmp: no ICMP error rate limits in the routers of our fabric (per namespace sysctls):
# each TTL round sends one probe per port through the same routers
relax_icmp() {
	local n
	for n in $(routers); do
		ip netns exec "$PFX-$n" sysctl -q -w net.ipv4.icmp_ratelimit=0 \
			net.ipv4.icmp_msgs_per_sec=100000 net.ipv4.icmp_msgs_burst=10000 >/dev/null || return 1
	done
}

# listen NODE ADDR PORT: a TCP listener (never accepting) in NODE, killed at exit
listen() {
	"$FABRIC" exec -p "$PFX" "$1" perl -MIO::Socket::INET -e '
		my $s = IO::Socket::INET->new(LocalAddr => $ARGV[0], LocalPort => $ARGV[1], Listen => 1024,
			ReuseAddr => 1) or die "listen: $@\n";
		sleep 3600' "$2" "$3" >listener.log 2>&1 &
	listener_pid=$!	# perl itself: netns-fabric and ip netns exec both exec
	test_atexit "test_kill_pid $listener_pid"
	test_wait_for 10 sh -c "ip netns exec $PFX-$1 ss -Hltn 'sport = :$3' | grep -q . || ! kill -0 $listener_pid" &&
	kill -0 $listener_pid
}

# as_nodes SRC_NODE FILE: test-tool trace output -> one line per trace, the nodes it crossed
# as path prints them ("h1 l1.0 s2 l2.0 h3"); "*" for a silent hop, "?ADDR" for an address
# of no node, " (not reached)" appended when the destination did not answer
as_nodes() {
	awk -v src="$1" '
		NR == FNR { node[$1] = $2; next }
		FNR == 1 || /^sport / { line = src }
		/^[0-9]+ / { line = line " " ($2 == "*" ? "*" : ($2 in node) ? node[$2] : "?" $2) }
		/^reached$/ { print line; line = src }
		/^not reached$/ { print line " (not reached)"; line = src }' addrs "$2"
}

# check_many SRC_NODE SRC DST DPORT PORTS OUT: trace the ports (A-B) all at once and check
# that each trace crossed the nodes path names for that 5-tuple; OUT.nodes keeps them
check_many() {
	local node=$1 src=$2 dst=$3 dport=$4 ports=$5 out=$6
	trace "$node" "$src" "${ports%-*}" "$dst" "$dport" --many "$((${ports%-*} + 1))-${ports#*-}" >"$out" &&
	test "$(grep -c "^sport " "$out")" = $((${ports#*-} - ${ports%-*} + 1)) &&
	as_nodes "$node" "$out" >"$out.nodes" &&
	fab path "$src" "$dst" "$ports" "$dport" tcp >"$out.path" &&
	test_cmp "$out.path" "$out.nodes"
}

# icmp_limited NODE: ICMP errors NODE did not send for the per-host rate limit, so far
icmp_limited() {
	ip netns exec "$PFX-$1" nstat -asz IcmpOutRateLimitHost | awk '$1 == "IcmpOutRateLimitHost" { print $2 }'
}

test_expect_success TEST_TOOL 'usage errors exit 2 with one line, before any socket is opened' '
	while read -r args; do
		echo "args: $args" &&
		test_expect_exit 2 "$TEST_TOOL" trace $args 2>err && one_line err || return 1
	done <<-\EOF
	10.0.0.1 1 10.0.0.2
	10.0.0.1 0 10.0.0.2 80
	10.0.0.1 1 10.0.0.2 65536
	10.0.0.1 1 fe80::1 80
	nohost 1 10.0.0.2 80
	10.0.0.1 1 10.0.0.2 80 --max-ttl 17
	10.0.0.1 1 10.0.0.2 80 --timeout 0
	10.0.0.1 1 10.0.0.2 80 --many 5-2
	10.0.0.1 1 10.0.0.2 80 --many 1,x
	10.0.0.1 1 10.0.0.2 80 --bogus
	EOF
'

test_expect_success $P 'a 2-tier fabric (2 spines, distinct seeds), a listener on h3 10.100.2.3:5201' '
	test_atexit "\"\$FABRIC\" down -p \"\$PFX\"" &&
	bed_up &&
	listen h3 10.100.2.3 5201
'

# A router answers 6 errors back to back towards one host, then one a second
# (icmp_ratelimit 1000 ms, a bucket of 6, full on a fresh fabric): 8 ports at once lose
# answers at l1.0 and l2.0, the retries after a 1.1 s pause get them (one answer a round).
test_expect_success $P 'default ICMP limits, 8 ports at once: the routers drop answers, retries after --pause get every hop' '
	before=$(icmp_limited l1.0) &&
	trace h1 10.100.1.1 41000 10.100.2.3 5201 --timeout 300 --pause 1100 --probes 4 \
		--many 41001-41007 >limited &&
	after=$(icmp_limited l1.0) &&
	echo "l1.0 rate-limited $((after - before)) answers" &&
	test $((after - before)) -ge 1 &&
	as_nodes h1 limited >limited.nodes &&
	fab path 10.100.1.1 10.100.2.3 41000-41007 5201 >limited.path &&
	test_cmp limited.path limited.nodes
'

test_expect_success $P 'default ICMP limits: single traces name the routers path predicts, hop by hop' '
	for sp in 40000 40001 40002; do
		trace h1 10.100.1.1 $sp 10.100.2.3 5201 >one.$sp &&
		cat one.$sp &&
		test "$(sed -n "\$p" one.$sp)" = reached &&
		test "$(grep -c "^[1-4] 10\.[0-9.]* [0-9.]*$" one.$sp)" = 4 &&
		test "$(as_nodes h1 one.$sp)" = "$(fab path 10.100.1.1 10.100.2.3 $sp 5201)" || return 1
	done &&
	# the kernel picks the source (-): rail 0 towards a rail-0 address
	trace h1 - 40003 10.100.2.3 5201 >one.auto &&
	test "$(as_nodes h1 one.auto)" = "$(fab path 10.100.1.1 10.100.2.3 40003 5201)"
'

# Patient: a TTL asked again while answers come.  12 ports through routers at their default
# limit: the 3 rounds of a plain trace get at most 6 + 3 answers of l1.0 (and of l2.0), the
# patient trace every one, as path predicts (one answer a router a round: at least 6 rounds)
test_expect_success $P 'default ICMP limits, 12 ports at once, --patient: every port traced to the end' '
	trace h1 10.100.1.1 41100 10.100.2.3 5201 --timeout 600 --pause 500 --patient \
		--many 41101-41111 >patient &&
	test $(grep -c "^reached$" patient) = 12 &&
	test_grep ! "\*" patient &&
	as_nodes h1 patient >patient.nodes &&
	fab path 10.100.1.1 10.100.2.3 41100-41111 5201 >patient.path &&
	test_cmp patient.path patient.nodes
'

test_expect_success $P 'no ICMP limits in our routers: 32 ports traced at once, each as path predicts, both spines seen' '
	relax_icmp &&
	check_many h1 10.100.1.1 10.100.2.3 5201 42000-42031 t2 &&
	test_grep ! -v -x "h1 l1.0 s[12] l2.0 h3" t2.nodes &&
	test "$(cut -d" " -f3 t2.nodes | sort -u | tr "\n" " ")" = "s1 s2 " &&
	# other rail, other direction: h4 rail 1 to h1 rail 0 crosses l2.1, a spine, l1.0
	check_many h4 10.101.2.4 10.100.1.1 5999 43000-43015 t2back &&
	test_grep ! -v -x "h4 l2.1 s[12] l1.0 h1" t2back.nodes
'

# A live connection of the traced 5-tuple: the destination answers the SYN with a challenge ACK
# (RFC 5961) that acks none of our numbers, and our host, whose socket it is, sends no RST to
# end it: before, the trace never reached it.  (The same ACK answers a SYN on a 5-tuple in
# TIME_WAIT on both ends, as the polarization probe's flows can leave theirs.)
# live_server ADDR PORT, live_client ADDR SPORT DST DPORT: a connection that stays up for 60 s
# (each execs into its perl, so that the PID in $! of "{ live_server ... & }" is perl's own)
live_server() {
	exec "$FABRIC" exec -p "$PFX" h3 perl -MIO::Socket::INET -e '
		my $l = IO::Socket::INET->new(LocalAddr => $ARGV[0], LocalPort => $ARGV[1], Listen => 4,
			ReuseAddr => 1) or die "listen: $@\n";
		my $c = $l->accept; sleep 60' "$@" >live-srv.log 2>&1
}
live_client() {
	exec "$FABRIC" exec -p "$PFX" h1 perl -MIO::Socket::INET -e '
		my $s = IO::Socket::INET->new(LocalAddr => $ARGV[0], LocalPort => $ARGV[1],
			PeerAddr => $ARGV[2], PeerPort => $ARGV[3]) or die "connect: $!\n";
		sleep 60' "$@" >live-cli.log 2>&1
}
test_expect_success $P 'a live 5-tuple: the destination'"'"'s challenge ACK is its answer, reached' '
	{ live_server 10.100.2.3 5402 & } &&
	live_srv=$! &&
	test_atexit "test_kill_pid $live_srv" &&
	test_wait_for 10 sh -c "ip netns exec $PFX-h3 ss -Hltn \"sport = :5402\" | grep -q ." &&
	{ live_client 10.100.1.1 47400 10.100.2.3 5402 & } &&
	live_cli=$! &&
	test_atexit "test_kill_pid $live_cli" &&
	test_wait_for 10 sh -c "ip netns exec $PFX-h1 ss -Htn state established \"sport = :47400\" | grep -q ." &&
	trace h1 10.100.1.1 47400 10.100.2.3 5402 --max-ttl 6 --timeout 300 >live &&
	test "$(sed -n "\$p" live)" = reached &&
	test "$(as_nodes h1 live)" = "$(fab path 10.100.1.1 10.100.2.3 47400 5402)" &&
	test_kill_pid $live_cli $live_srv
'

# A 5-tuple whose connection still runs when the trace starts (the polarization probe traces its
# flows just after they ended, and on a busy host their connections close later): the
# destination's ACKs of its data came while a hop stayed silent and were taken for the
# destination's answer at that TTL (CI: a flow "crossed 0 switches").  Every ICMP answer is
# dropped at h1 here, so every router is silent, as a rate-limited one is.
# stream_client ADDR SPORT DST DPORT SECONDS: sends 1 KiB every 2 ms for SECONDS, then closes
# first (its end in TIME_WAIT); sink_server ADDR PORT: reads one connection to its end
stream_client() {
	exec "$FABRIC" exec -p "$PFX" h1 perl -MIO::Socket::INET -e '
		my $s = IO::Socket::INET->new(LocalAddr => $ARGV[0], LocalPort => $ARGV[1],
			PeerAddr => $ARGV[2], PeerPort => $ARGV[3]) or die "connect: $!\n";
		my $end = time + $ARGV[4];
		while (time < $end) { syswrite($s, "x" x 1024); select(undef, undef, undef, 0.002) }
		close $s' "$@" >stream-cli.log 2>&1
}
sink_server() {
	exec "$FABRIC" exec -p "$PFX" h3 perl -MIO::Socket::INET -e '
		my $l = IO::Socket::INET->new(LocalAddr => $ARGV[0], LocalPort => $ARGV[1], Listen => 4,
			ReuseAddr => 1) or die "listen: $@\n";
		my $c = $l->accept; 1 while sysread($c, my $b, 65536)' "$@" >stream-srv.log 2>&1
}
# stream_case: the stream, the traces without and with --settle (ICMP dropped at h1 meanwhile)
stream_case() {
	{ sink_server 10.100.2.3 5403 & } &&
	sink=$! &&
	test_atexit "test_kill_pid $sink" &&
	test_wait_for 10 sh -c "ip netns exec $PFX-h3 ss -Hltn \"sport = :5403\" | grep -q ." &&
	# (no drop action in CI's kernels: ICMP goes out of a veth whose peer is down, and is lost)
	ip -n $PFX-h1 link add icmpsink type veth peer name icmpsink1 &&
	ip -n $PFX-h1 link set icmpsink up &&
	tc -n $PFX-h1 filter add dev rail0 ingress protocol ip u32 match ip protocol 1 0xff \
		action mirred egress redirect dev icmpsink &&
	{ stream_client 10.100.1.1 47500 10.100.2.3 5403 4 & } &&
	stream=$! &&
	test_atexit "test_kill_pid $stream" &&
	test_wait_for 10 sh -c "ip netns exec $PFX-h1 ss -Htn state established \"sport = :47500\" | grep -q ." &&
	# the hazard: unsettled, an ACK of the stream answers the silent first hop
	trace h1 10.100.1.1 47500 10.100.2.3 5403 --max-ttl 6 --timeout 1000 --probes 1 >stray &&
	test_grep -x reached stray &&
	test "$(grep -c "^[0-9]" stray)" -lt 4 &&
	# settled: traced after the stream ended, the silent hops stay silent and h3 answers at TTL 4
	trace h1 10.100.1.1 47500 10.100.2.3 5403 --max-ttl 6 --timeout 300 --probes 1 --settle 30000 >settled &&
	test_must_fail sh -c "ip netns exec $PFX-h1 ss -Htn \"sport = :47500\" | grep -v TIME-WAIT | grep ." &&
	test "$(cut -d" " -f1,2 settled | tr "\n" " ")" = "1 * 2 * 3 * 4 10.100.2.3 reached " &&
	test_kill_pid $stream $sink
}
test_expect_success $P 'a 5-tuple still sending when the trace starts: --settle waits for its end, no ACK of it is an answer' '
	tc -n $PFX-h1 qdisc add dev rail0 clsact &&
	{ stream_case; rc=$?; tc -n $PFX-h1 qdisc del dev rail0 clsact; ip -n $PFX-h1 link del icmpsink
	  test $rc = 0; }
'

test_expect_success $P 'a closed port answers RST: reached too' '
	trace h1 10.100.1.1 44000 10.100.2.3 5999 >closed &&
	test "$(as_nodes h1 closed)" = "$(fab path 10.100.1.1 10.100.2.3 44000 5999)"
'

test_expect_success $P 'two traces of the same 16 ports at the same time do not mix' '
	# (a brace group: "A & pa=$! && ..." would put "pa=$! && ..." in the background too)
	{ "$FABRIC" exec -p "$PFX" h1 "$TEST_TOOL" trace 10.100.1.1 45000 10.100.2.3 5201 \
		--many 45001-45015 >conc.a & } &&
	pa=$! &&
	{ "$FABRIC" exec -p "$PFX" h1 "$TEST_TOOL" trace 10.100.1.1 45000 10.100.2.3 5201 \
		--many 45001-45015 >conc.b & } &&
	pb=$! &&
	test -n "$pa" && test -n "$pb" && test "$pa" != "$pb" &&
	wait $pa && wait $pb &&
	fab path 10.100.1.1 10.100.2.3 45000-45015 5201 >conc.path &&
	as_nodes h1 conc.a >conc.a.nodes && test_cmp conc.path conc.a.nodes &&
	as_nodes h1 conc.b >conc.b.nodes && test_cmp conc.path conc.b.nodes
'

test_expect_success $P 'no host behind the leaf: its unreachable ends the trace there, not reached' '
	trace h1 10.100.1.1 46000 10.100.2.99 5201 >unreach &&
	cat unreach &&
	as_nodes h1 unreach >unreach.nodes &&
	test_grep -x "h1 l1.0 s[12] l2.0 (not reached)" unreach.nodes
'

# A black hole in both spines: TTL 2 and up vanish without an answer.  The trace must end by
# itself, saying which hops were silent and that the destination was not reached; the timeout
# of 60 s around it is a hang guard (20 x its bound of max-ttl x probes x (timeout + pause) =
# 2.8 s), no limit on its speed.  It must also have waited for the answers it did not get:
# 3 silent TTLs x (2 rounds of 300 ms + a pause of 100 ms) = 2.1 s at least.  That is a lower
# bound only, which a slow or busy machine cannot break (it only makes the trace longer).  How
# close to its bound it ends is measured by bench/netns-bench.sh (elapsed / 2.8 s).
test_expect_success $P 'a black hole: silent hops, not reached, ends by itself after waiting out its probes' '
	for s in s1 s2; do
		ip -n $PFX-$s route add blackhole 10.99.0.0/16 || return 1
	done &&
	start=$(date +%s%N) &&
	fab exec h1 timeout 60 "$TEST_TOOL" trace 10.100.1.1 47000 10.99.1.1 5201 --max-ttl 4 --timeout 300 \
		--probes 2 --pause 100 >hole &&
	ms=$((($(date +%s%N) - start) / 1000000)) &&
	cat hole && echo "$ms ms" &&
	test "$(as_nodes h1 hole)" = "h1 l1.0 * * * (not reached)" &&
	test $ms -ge 2000
'

test_expect_success $P,SETPRIV 'without CAP_NET_RAW: exit 3, one line that says what to do' '
	test_expect_exit 3 fab exec h1 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$TEST_TOOL" trace 10.100.1.1 48000 10.100.2.3 5201 >out 2>err &&
	one_line err &&
	test_grep "CAP_NET_RAW" err && test_grep "cap_net_raw" err &&
	test_must_be_empty out
'

test_expect_success $P 'a source address not of this host: exit 3, one line' '
	test_expect_exit 3 trace h1 10.100.1.2 48000 10.100.2.3 5201 2>err &&
	one_line err &&
	test_grep "not an address of this host" err
'

# 3 tiers, 2 pods of 1 group: h1 -> h3 has 2 spines x 2 superspines x 2 spines = 8 paths
test_expect_success $P '3 tiers (-P 2 -X 2), distinct seeds: 32 ports, each as path predicts, at least 6 of the 8 full paths' '
	bed_up -P 2 -X 2 &&
	listen h3 10.100.2.3 5201 &&
	relax_icmp &&
	check_many h1 10.100.1.1 10.100.2.3 5201 42000-42031 t3 &&
	test_grep ! -v -x "h1 l1.0 s[12] x[12] s[34] l2.0 h3" t3.nodes &&
	sort t3.nodes | uniq -c &&
	n_distinct=$(sort -u t3.nodes | wc -l) &&
	test "$n_distinct" = "$(sort -u t3.path | wc -l)" &&
	test "$n_distinct" -ge 6
'

test_expect_success $P '3 tiers, --seed same: the traced paths collapse to the few classes path names' '
	bed_up -P 2 -X 2 --seed same &&
	listen h3 10.100.2.3 5201 &&
	relax_icmp &&
	check_many h1 10.100.1.1 10.100.2.3 5201 42000-42031 same &&
	sort same.nodes | uniq -c &&
	n_same=$(sort -u same.nodes | wc -l) &&
	echo "distinct seeds: $n_distinct paths; one seed: $n_same" &&
	test "$n_same" -le 2 && test "$n_same" -lt "$n_distinct" &&
	test "$(sort -u same.path)" = "$(sort -u same.nodes)"
'

test_done
