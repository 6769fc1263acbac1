# tests/lib-lb.sh - traffic and per-link counters for the load-balancing modes of ci/netns-fabric
# (source it after test-lib.sh; needs FABRIC and PFX set, and perl)

# udp_flow NODE SRC SPORT DST COUNT GAP_US: COUNT UDP datagrams of 100 bytes from SRC:SPORT in
# NODE to DST port 9, GAP_US microseconds apart (0: back to back).  One 5-tuple; an unconnected
# socket, so that the port-unreachable answers do not fail the sends.
udp_flow() {
	"$FABRIC" exec -p "$PFX" "$1" perl -MIO::Socket::INET -MSocket -MTime::HiRes=usleep -e '
		my ($src, $sport, $dst, $count, $gap) = @ARGV;
		my $s = IO::Socket::INET->new(Proto => "udp", LocalAddr => $src, LocalPort => $sport,
			ReuseAddr => 1) or die "udp_flow: socket $src:$sport: $!\n";
		my $to = sockaddr_in(9, inet_aton($dst));
		for (1 .. $count) {
			send($s, "x" x 100, 0, $to) or die "udp_flow: send: $!\n";
			usleep($gap) if $gap;
		}' "$2" "$3" "$4" "$5" "$6"
}

# uplink_tx NODE: "DEV=PACKETS" for every uplink of NODE (interfaces named sK or xK), one line
uplink_tx() {
	ip -n "$PFX-$1" -j -s link show | jq -r '[.[] | select(.ifname | test("^[sx][0-9]+$")) |
		"\(.ifname)=\(.stats64.tx.packets)"] | join(" ")'
}

# uplink_delta BEFORE AFTER: "DEV=DELTA ..." between two uplink_tx lines of one node
uplink_delta() {
	perl -e 'my %a = map { split /=/ } split " ", $ARGV[0];
		print join(" ", map { my ($d, $v) = split /=/; "$d=" . ($v - ($a{$d} // 0)) }
			split " ", $ARGV[1]), "\n"' "$1" "$2"
}

# only_one DELTA MIN: exactly one uplink carried at least MIN packets and the others together at
# most 2 (an ARP now and then); prints that uplink
only_one() {
	perl -e 'my ($min) = pop @ARGV; my (@big, $rest);
		for (split " ", $ARGV[0]) { my ($d, $v) = split /=/; if ($v >= $min) { push @big, $d } else { $rest += $v } }
		if (@big == 1 && $rest <= 2) { print "$big[0]\n"; exit 0 }
		print STDERR "only_one: want one uplink with >= $min packets, the rest <= 2: $ARGV[0]\n"; exit 1' "$1" "$2"
}

# every_one DELTA MIN: every uplink carried at least MIN packets
every_one() {
	perl -e 'my ($min) = pop @ARGV; my $ok = 1;
		for (split " ", $ARGV[0]) { my ($d, $v) = split /=/; $ok = 0 if $v < $min }
		exit 0 if $ok; print STDERR "every_one: want >= $min packets on every uplink: $ARGV[0]\n"; exit 1' "$1" "$2"
}
