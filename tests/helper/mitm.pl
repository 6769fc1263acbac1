#!/usr/bin/perl
# tests/helper/mitm.pl - a man in the middle of one fleet control connection, for t1160.
#
#   mitm.pl LISTEN-PORT TARGET-PORT DIR ACTION INDEX
#
# Accepts one connection on 127.0.0.1:LISTEN-PORT (an agent's --connect), connects to
# 127.0.0.1:TARGET-PORT (the coordinator) and relays the length-prefixed frames both ways.
# DIR (c2a: what the coordinator sends; a2c: what the agent sends) and INDEX (the frame's
# number that way, 0 = the first) say where ACTION happens:
#   none     relay only
#   inject   before frame INDEX, a frame of our own: frame INDEX's body with its MAC's
#            last byte flipped (what an attacker without the key can make)
#   forge    before frame INDEX, a job message of our own in plain JSON, no MAC at all
#   change   frame INDEX with one byte of its body changed
#   drop     frame INDEX never arrives
#   reorder  frame INDEX held and sent after frame INDEX+1
#   replay   frame INDEX sent, then sent again
# Prints "did ACTION at DIR INDEX" on stdout when it acted, and exits when either side closes.
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;

my ($lport, $tport, $dir, $action, $index) = @ARGV;
die "usage: mitm.pl LISTEN-PORT TARGET-PORT c2a|a2c ACTION INDEX\n" unless defined $index;
$| = 1;
my $l = IO::Socket::INET->new(LocalAddr => "127.0.0.1:$lport", Listen => 1, ReuseAddr => 1)
	or die "mitm: listen: $!\n";
print "listening\n";
my $agent = $l->accept or die "mitm: accept: $!\n";
my $coord = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$tport") or die "mitm: connect: $!\n";
my %buf = (c2a => '', a2c => '');
my %n = (c2a => 0, a2c => 0);
my $held;
my $sel = IO::Select->new($agent, $coord);

sub out_of { $_[0] eq 'c2a' ? $agent : $coord }
sub put { my ($d, $frame) = @_; my $s = out_of($d); print {$s} $frame or exit 0; $s->flush }
sub did { print "did $action at $dir $index\n" }

sub frame_out {
	my ($d, $frame) = @_;
	my $i = $n{$d}++;
	if ($d ne $dir || ($i != $index && !($action eq 'reorder' && $i == $index + 1))) {
		put($d, $frame);
		return;
	}
	if ($action eq 'inject') {
		my $f = $frame;
		substr($f, -1, 1) = chr(ord(substr($f, -1, 1)) ^ 1);
		put($d, $f); did(); put($d, $frame);
	} elsif ($action eq 'forge') {
		my $j = '{"type":"job","id":999,"test":"bw","role":"server","opts":{"size":"1G","flows":"64"}}';
		put($d, pack('N', length $j) . $j); did(); put($d, $frame);
	} elsif ($action eq 'change') {
		my $f = $frame;
		substr($f, 5, 1) = chr(ord(substr($f, 5, 1)) ^ 32);
		put($d, $f); did();
	} elsif ($action eq 'drop') {
		did();
	} elsif ($action eq 'reorder') {
		if ($i == $index) { $held = $frame; return }
		put($d, $frame); put($d, $held); did();
	} elsif ($action eq 'replay') {
		put($d, $frame); put($d, $frame); did();
	} else {
		put($d, $frame);
	}
}

for (;;) {
	for my $s ($sel->can_read(30)) {
		my $d = $s == $coord ? 'c2a' : 'a2c';
		my $r = sysread($s, my $chunk, 65536);
		exit 0 unless $r;
		$buf{$d} .= $chunk;
		while (length $buf{$d} >= 4) {
			my $len = unpack('N', $buf{$d});
			last if length $buf{$d} < 4 + $len;
			frame_out($d, substr($buf{$d}, 0, 4 + $len, ''));
		}
	}
}
