#!/usr/bin/env bash
test_description='bw/lat --token-file: a server with a token serves only clients that prove it,
a client with one talks only to a server that proves it; a missing or wrong token on either end
is refused in one line on both (exit 3) before the server looks at what the client asks; the
handshake is the one the man page gives (a client written from it in Perl gets past it); clients
that say hello with a nonce and then stall hold nothing up: the server handshakes every client at
once, and a token client is served while four of them stall'
# asan: always: feeds untrusted bytes to C code: token handshakes, right and wrong
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq PERL 'perl -MIO::Socket::INET -MDigest::SHA -e 1'
test_require_in_ci FABSCOPE PERL
P=FABSCOPE,PERL
PORT=$(ptp_port 0)
# the protocol version of this build (the hello must carry it)
WIRE_VERSION=$(sed -n "s/^#define WIRE_VERSION \([0-9]*\).*/\1/p" "$SRCDIR/core/wire.h")
export WIRE_VERSION

# pclient PORT TOKEN [NONCE]: a client from the man page's words (MACs made with TOKEN); prints what it got
cat >pclient.pl <<'EOF'
use IO::Socket::INET;
use Digest::SHA qw(hmac_sha256_hex);
my ($port, $token, $nc) = @ARGV;
$nc //= "ab" x 32;
my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 5) or die "connect: $!\n";
sub put { my $j = shift; print $s pack("N", length $j), $j; }
sub get {
	my ($h, $b) = ("", "");
	read($s, $h, 4) == 4 or return "(closed)";
	read($s, $b, unpack("N", $h));
	return $b;
}
put(qq({"type":"hello","proto":"fabscope-ptp","version":$ENV{WIRE_VERSION},"tool_version":"x","test":"bw","node":"perl",) .
    qq("params":{"sizes":[4096],"flows":1,"op":"write","transport":"tcp"},"auth":"$nc"}));
my $ch = get();
print "challenge: $ch\n";
my ($ns) = $ch =~ /"nonce": *"([0-9a-f]{64})"/ or exit 1;
my ($smac) = $ch =~ /"mac": *"([0-9a-f]{64})"/ or exit 1;
print "server proof: ", ($smac eq hmac_sha256_hex("fabscope-ptp-server\n$nc\n$ns", $token) ? "right" : "wrong"), "\n";
put(qq({"type":"auth","mac":") . hmac_sha256_hex("fabscope-ptp-client\n$ns\n$nc", $token) . qq("}));
print "answer: ", get(), "\n";
EOF

test_expect_success $P 'token files: 0600 ones work; others are refused (exit 3) unless --allow-readable-token' '
	printf "the-secret\n" >tok && chmod 600 tok &&
	printf "another\n" >tok2 && chmod 600 tok2 &&
	printf "the-secret" >open && chmod 644 open &&
	test_expect_code 3 "$FABSCOPE" bw --server -p $PORT --token-file open 2>err &&
	test $(wc -l <err) = 1 &&
	test_grep "token file .open. can be read or written by others (mode 0644): chmod 600 it, or give --allow-readable-token" err &&
	test_expect_code 2 "$FABSCOPE" bw 127.0.0.1 -p $PORT --allow-readable-token 2>err &&
	test_grep "allow-readable-token is for --token-file" err &&
	test_expect_code 3 "$FABSCOPE" lat 127.0.0.1 -p $PORT --token-file missing 2>err &&
	test_grep "cannot read token file .missing." err
'

test_expect_success $P 'the same token on both ends: bw and lat run, and a readable file works when allowed' '
	ptp_server srv.log bw $PORT --token-file tok &&
	srv=$ptp_pid &&
	"$FABSCOPE" bw 127.0.0.1 -p $PORT -n 100 --token-file tok --json >bw.json &&
	test_grep "\"test\":\"bw\"" bw.json &&
	"$FABSCOPE" bw 127.0.0.1 -p $PORT -n 100 --token-file open --allow-readable-token --json >bw2.json 2>err &&
	test_grep "accepted (--allow-readable-token)" err &&
	test_kill_pid $srv &&
	ptp_server lsrv.log lat $PORT --token-file tok &&
	srv=$ptp_pid &&
	"$FABSCOPE" lat 127.0.0.1 -p $PORT -n 100 --token-file tok --json >lat.json &&
	test_grep "\"test\":\"lat\"" lat.json &&
	test_kill_pid $srv
'

test_expect_success $P 'a client without the token: refused before its over-the-limit ask is even read, exit 3 both ends' '
	ptp_spawn s1.log "$FABSCOPE" bw --server --bind 127.0.0.1 -p $PORT --once --token-file tok --max-mem 64M &&
	srv=$ptp_pid && ptp_wait_listen $PORT $srv &&
	test_expect_code 3 "$FABSCOPE" bw 127.0.0.1 -p $PORT -s 64M -n 1 >out 2>err &&
	test $(wc -l <err) = 1 &&
	test_grep "server 127.0.0.1:$PORT refused: this server serves only clients that know its token: give --token-file" err &&
	test_expect_code 3 wait $srv &&
	test_grep "client 127.0.0.1:[0-9]*: refused: it has no token (--token-file)" s1.log &&
	test_grep ! "buffers" s1.log err
'

test_expect_success $P 'a client with another token: refused, exit 3 both ends; the server then serves the right one' '
	ptp_server s2.log bw $PORT --token-file tok &&
	srv=$ptp_pid &&
	test_expect_code 3 "$FABSCOPE" bw 127.0.0.1 -p $PORT -n 100 --token-file tok2 >out 2>err &&
	test $(wc -l <err) = 1 &&
	test_grep "server 127.0.0.1:$PORT does not know the token of --token-file (another secret, or not the server you meant); not talking to it" err &&
	test_wait_for 10 grep -q "refused: its --token-file holds another secret than this server.s" s2.log &&
	"$FABSCOPE" bw 127.0.0.1 -p $PORT -n 100 --token-file tok --json >ok.json &&
	test_grep "\"test\":\"bw\"" ok.json &&
	test_kill_pid $srv
'

test_expect_success $P 'a client with a token and a server without: refused, exit 3 both ends' '
	ptp_spawn s3.log "$FABSCOPE" bw --server --bind 127.0.0.1 -p $PORT --once &&
	srv=$ptp_pid && ptp_wait_listen $PORT $srv &&
	test_expect_code 3 "$FABSCOPE" bw 127.0.0.1 -p $PORT -n 100 --token-file tok >out 2>err &&
	test $(wc -l <err) = 1 &&
	test_grep "refused: this server has no token: drop --token-file, or start the server with one" err &&
	test_must_be_empty out &&
	test_expect_code 3 wait $srv &&
	test_grep "refused: it wants a token and this server has none" s3.log
'

test_expect_success $P 'a server that skips the challenge (one without a token that ignores auth): the client refuses it' '
	{ perl -MIO::Socket::INET -e '\''
		my $l = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0],
			Listen => 4, ReuseAddr => 1) or die "listen: $!\n";
		open(my $f, ">", "fake.ready"); close $f;
		my $c = $l->accept or die; my $h; read($c, $h, 4); read($c, my $b, unpack("N", $h));
		my $j = qq({"type":"hello","proto":"fabscope-ptp","version":$ENV{WIRE_VERSION},"tool_version":"x","node":"fake","poll":"event"});
		print $c pack("N", length $j), $j; sleep 3;'\'' $PORT & } &&
	fake=$! &&
	test_atexit "test_kill_pid $fake" &&
	test_wait_for 10 test -e fake.ready &&
	test_expect_code 3 "$FABSCOPE" bw 127.0.0.1 -p $PORT -n 100 --token-file tok >out 2>err &&
	test $(wc -l <err) = 1 &&
	test_grep "server 127.0.0.1:$PORT did not prove the token of --token-file: it runs without one; not talking to it" err &&
	test_kill_pid $fake
'

test_expect_success $P 'the handshake is the man page'\''s: a client written from it gets past it (and only then are its made-up parameters judged); with a wrong MAC it is refused' '
	ptp_server s4.log bw $PORT --token-file tok &&
	srv=$ptp_pid &&
	perl pclient.pl $PORT the-secret >right.out &&
	cat right.out &&
	test_grep "^server proof: right" right.out &&
	test_grep "^answer: {\"type\":\"error\",\"message\":\"malformed or out-of-range test parameters\",\"exit\":4}" right.out &&
	perl pclient.pl $PORT not-the-secret >wrong.out &&
	cat wrong.out &&
	test_grep "^server proof: wrong" wrong.out &&
	test_grep "^answer: {\"type\":\"error\",\"message\":\"wrong token: this server has another secret\",\"exit\":3}" wrong.out &&
	test_wait_for 10 grep -q "client 127.0.0.1:[0-9]*: refused: it does not know the token" s4.log &&
	test_kill_pid $srv
'

test_expect_success $P 'a hello whose nonce is not 64 hex digits: refused as malformed (exit 4), no challenge sent' '
	ptp_spawn s5.log "$FABSCOPE" bw --server --bind 127.0.0.1 -p $PORT --once --token-file tok &&
	srv=$ptp_pid && ptp_wait_listen $PORT $srv &&
	{ perl pclient.pl $PORT the-secret "zz$(printf "%062d" 0)" >bad.out || true; } &&
	cat bad.out &&
	test_grep "^challenge: {\"type\":\"error\",\"message\":\"malformed hello\",\"exit\":4}" bad.out &&
	test_expect_code 4 wait $srv &&
	test_grep "client 127.0.0.1:[0-9]*: malformed hello (its nonce); is it a fabscope client?" s5.log
'

# stall.pl PORT N HOLD: N connections that each send a hello with a nonce (as a token client
# does) and then nothing, made again when the server closes them, for HOLD seconds
cat >stall.pl <<'EOF'
use IO::Socket::INET;
my ($port, $n, $hold) = @ARGV;
my $hello = qq({"type":"hello","proto":"fabscope-ptp","version":3,"tool_version":"x","test":"bw",) .
	qq("node":"staller","params":{"sizes":[4096],"flows":1,"op":"write","transport":"tcp"},"auth":") .
	("cd" x 32) . qq("});
sub stall {
	my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 5) or return undef;
	syswrite($s, pack("N", length $hello) . $hello);
	return $s;
}
my @s = map { stall() } 1 .. $n;
$| = 1;
print "stalling $n\n";
my $end = time + $hold;
while (time < $end) {
	select(undef, undef, undef, 0.2);
	for my $i (0 .. $#s) {	# closed (or its challenge read and left): made again
		my $b;
		next unless $s[$i];
		$s[$i]->blocking(0);
		my $r = sysread($s[$i], $b, 65536);
		next if !defined $r || $r > 0;
		close $s[$i];
		$s[$i] = stall();
	}
}
EOF

test_expect_success $P 'four clients that say hello and stall: three token clients in a row are served all the same' '
	ptp_server s6.log bw $PORT --token-file tok &&
	srv=$ptp_pid &&
	{ perl stall.pl $PORT 4 40 >stall.log 2>&1 & } && stall=$! &&
	test_atexit "test_kill_pid $stall" &&
	test_wait_for 10 grep -q "^stalling 4" stall.log &&
	for i in 1 2 3; do
		"$FABSCOPE" bw 127.0.0.1 -p $PORT -n 100 --token-file tok --json >t$i.json 2>t$i.err ||
			{ cat t$i.err; return 1; }
		test_grep "\"test\":\"bw\"" t$i.json || return 1
	done &&
	kill -0 $stall &&
	test_kill_pid $stall &&
	test_kill_pid $srv
'

test_done
