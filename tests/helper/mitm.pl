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
#   recode   frame INDEX (a handshake message: plain JSON) decoded and written again as canonical
#            JSON (keys sorted, no spaces), its meaning unchanged: the control for flip:KEY
#   flip:KEY frame INDEX (a handshake message) with one byte of the value of its member KEY
#            changed, written again as recode does: the last letter or digit of the value's JSON
#            text, a digit to the next (9 to 8), a letter to the next (f, z to the one before,
#            so that hex stays hex); in an array or object that is its last scalar's; null
#            becomes 0, true false and false true
# Prints "keys DIR I K1 K2 ..." for every frame that is a JSON object alone (the handshake's),
# its members' keys, and "did ACTION at DIR INDEX" on stdout when it acted; exits when either
# side closes.
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
use JSON::PP;

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

my $J = JSON::PP->new->utf8->canonical->allow_nonref;

# the body of a frame as a JSON object, or undef (a frame after the welcome has its MAC after it)
sub object_of {
	my $o = eval { $J->decode(substr($_[0], 4)) };
	return ref $o eq 'HASH' ? $o : undef;
}

# v with the last letter or digit of its JSON text changed, or undef when it has none
sub flipped {
	return 0 unless defined $_[0];	# (null: not a byte to flip, a value to change)
	return $_[0] ? JSON::PP::false : JSON::PP::true if JSON::PP::is_bool($_[0]);
	my $t = $J->encode($_[0]);
	$t =~ /^(.*)([0-9A-Za-z])/s or return undef;
	my ($head, $c) = ($1, $2);
	my $n = $c eq '9' ? '8' : $c =~ /[fzFZ]/ ? chr(ord($c) - 1) : chr(ord($c) + 1);
	return $J->decode($head . $n . substr($t, length($head) + 1));
}

# the frame of object o
sub frame_of { my $b = $J->encode($_[0]); return pack('N', length $b) . $b }

sub frame_out {
	my ($d, $frame) = @_;
	my $i = $n{$d}++;
	my $o = object_of($frame);
	print "keys $d $i ", join(' ', sort keys %$o), "\n" if $o;
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
	} elsif ($action eq 'recode' && $o) {
		put($d, frame_of($o)); did();
	} elsif ($action =~ /^flip:(.+)$/ && $o && exists $o->{$1} && defined(my $v = flipped($o->{$1}))) {
		$o->{$1} = $v;
		put($d, frame_of($o)); did();
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
