#!/usr/bin/env bash
test_description='a coordinator of many agents: an agent waits for its welcome as long as the
challenge says the join goes on, not only its own --timeout (a coordinator busy welcoming
thousands is not a gone one), and no longer'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_lazy_prereq PERL 'perl -MIO::Socket::INET -MDigest::SHA -e 1'
test_require_in_ci FABSCOPE PERL
P=FABSCOPE
PORT2=$(ptp_port 1)
WV=$(sed -n "s/^#define WIRE_VERSION \([0-9]*\).*/\1/p" "$SRCDIR/core/wire.h")

# a coordinator from the protocol's words (fleet/fleet.h): challenges with join_ms, reads the
# register, checks its mac, waits HOLD seconds, then answers with an error (which an agent
# that is still waiting reads: "refused", exit 3)
cat >slowcoord.pl <<'EOF'
use IO::Socket::INET;
use Digest::SHA qw(hmac_sha256_hex);
$| = 1;
my ($port, $token, $join_ms, $hold, $version) = @ARGV;
my $l = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $port, Listen => 4, ReuseAddr => 1)
	or die "listen: $!\n";
open(my $f, ">", "slow.ready"); close $f;
my $s = $l->accept or die "accept: $!\n";
my $nc = "cd" x 32;
my $j = qq({"type":"challenge","proto":"fabscope-fleet","version":$version,"nonce":"$nc","join_ms":$join_ms});
print $s pack("N", length $j), $j;
my ($h, $b) = ("", "");
read($s, $h, 4) == 4 or die "no register\n";
read($s, $b, unpack("N", $h));
my ($na) = $b =~ /"nonce":"([0-9a-f]{64})"/ or die "no nonce in $b\n";
my ($mac) = $b =~ /"mac":"([0-9a-f]{64})"/ or die "no mac in $b\n";
$mac eq hmac_sha256_hex("fabscope-agent\n$nc\n$na", $token) or die "wrong mac\n";
print "registered\n";
sleep $hold;
my $e = q({"type":"error","message":"held back on purpose"});
print $s pack("N", length $e), $e;
sleep 2;
EOF

test_expect_success $P,PERL 'an agent waits for its welcome as long as the join goes on, beyond its --timeout' '
	rm -f slow.ready &&
	{ perl slowcoord.pl $PORT2 tok 30000 3 $WV >slow.out 2>&1 & } && slow=$! &&
	test_atexit "test_kill_pid $slow" &&
	test_wait_for 10 test -e slow.ready &&
	# --timeout 1: the answer comes 3 s after the register, within the 30 s the join has
	test_expect_exit 3 env FABSCOPE_TOKEN=tok "$FABSCOPE" agent --connect 127.0.0.1:$PORT2 --name w1 \
		--timeout 1 2>agent.err &&
	ptp_one_error agent.err "refused" "held back on purpose" &&
	test_grep "^registered$" slow.out &&
	wait $slow
'

test_expect_success $P,PERL 'with no join left (join_ms 0) it waits its --timeout only, and says so' '
	rm -f slow.ready &&
	{ perl slowcoord.pl $PORT2 tok 0 8 $WV >slow.out 2>&1 & } && slow=$! &&
	test_atexit "test_kill_pid $slow" &&
	test_wait_for 10 test -e slow.ready &&
	test_expect_exit 4 env FABSCOPE_TOKEN=tok "$FABSCOPE" agent --connect 127.0.0.1:$PORT2 --name w2 \
		--timeout 1 2>agent.err &&
	ptp_one_error agent.err "no answer from the coordinator within 1.0 s of registering" \
		"its join had 0.0 s left" &&
	test_kill_pid $slow
'

test_done
