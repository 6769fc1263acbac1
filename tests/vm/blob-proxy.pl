#!/usr/bin/perl
# tests/vm/blob-proxy.pl LPORT TARGET TPORT KEY=VALUE... - a man in the middle of fabscope's
# control connection, for the verbs errors a well-behaved peer never causes (tests/vm/verbs.sh).
# It listens on TARGET's address, port LPORT; for each client (one at a time) it connects to
# TARGET:TPORT and passes the messages both ways (4-byte big-endian length, JSON), but in the
# server's "setup" message it sets each KEY of the connection blob to VALUE: gid_type=roce-v1
# claims a RoCE v1 GID, gid=::ffff:10.1.0.9 an address nobody has.  It ends when no client
# has come for 60 s.
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
use JSON::PP;

my ($lport, $target, $tport, @set) = @ARGV;
die "usage: blob-proxy.pl LPORT TARGET TPORT KEY=VALUE...\n" unless $tport && @set;
my %set = map { split /=/, $_, 2 } @set;
my $json = JSON::PP->new->canonical;
my $l = IO::Socket::INET->new(LocalAddr => $target, LocalPort => $lport, Listen => 4,
	ReuseAddr => 1) or die "blob-proxy: cannot listen on $target:$lport: $!\n";

# one whole message from $fh, or undef at the end
sub frame_in {
	my ($fh) = @_;
	my ($hdr, $body) = ('', '');
	while (length $hdr < 4) { sysread($fh, $hdr, 4 - length $hdr, length $hdr) or return undef; }
	my $n = unpack 'N', $hdr;
	while (length $body < $n) { sysread($fh, $body, $n - length $body, length $body) or return undef; }
	return $body;
}

sub frame_out { my ($fh, $body) = @_; syswrite($fh, pack('N', length $body) . $body); }

while (IO::Select->new($l)->can_read(60)) {
	my $c = $l->accept or next;
	my $s = IO::Socket::INET->new(PeerAddr => $target, PeerPort => $tport) or do { close $c; next };
	my $sel = IO::Select->new($c, $s);
	LOOP: while (my @r = $sel->can_read(30)) {
		for my $fh (@r) {
			my $body = frame_in($fh);
			last LOOP unless defined $body;
			if ($fh == $s) {	# the server's messages: rewrite its setup's blob
				my $m = eval { $json->decode($body) };
				if ($m && ($m->{type} // '') eq 'setup' && ref $m->{blob} eq 'HASH') {
					$m->{blob}{$_} = $set{$_} for keys %set;
					$body = $json->encode($m);
				}
				frame_out($c, $body);
			} else {
				frame_out($s, $body);
			}
		}
	}
	close $c;
	close $s;
}
