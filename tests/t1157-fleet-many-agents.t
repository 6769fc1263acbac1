#!/usr/bin/env bash
test_description='a coordinator of a fleet, over the real protocol: 16,384 agents (the fleet size
every analysis is designed for) played by test-tool fleet-sim (one process; the handshake with
its HMACs, MACs on every message, pongs) all join one real coordinator, none is named
as not joined, and they answer its ping phase, one record each; an agent waits
for its welcome as long as the challenge says the join goes on, not only its own --timeout; and
the coordinator says why an agent did not join (a refusal is named as one, not as a join that
ran out)'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_lazy_prereq PERL 'perl -MIO::Socket::INET -MDigest::SHA -MJSON::PP -e 1'
N=16384
# the coordinator and the simulator hold a socket an agent, each in its own process
test_lazy_prereq FLEET_FDS 'test "$(ulimit -Hn)" = unlimited || test $(ulimit -Hn) -ge $((N + 256))'
test_require_in_ci FABSCOPE TEST_TOOL JQ PERL TEST_HOOKS FLEET_FDS
P=FABSCOPE,TEST_TOOL,JQ
PORT=$(ptp_port 0)
PORT2=$(ptp_port 1)
WV=$(sed -n "s/^#define WIRE_VERSION \([0-9]*\).*/\1/p" "$SRCDIR/core/wire.h")

printf '[ping]\nkind = ping\n' >ping.ini
# the names the simulated agents take: sim0 .. sim16383, computed here, not read from the run
for ((i = 0; i < N; i++)); do echo "sim$i"; done | sort >names.expect

test_expect_success $P,FLEET_FDS "$N simulated agents join one coordinator over TCP, none named missing, each answers the ping phase" '
	{ test $(ulimit -n) -gt $((N + 64)) || ulimit -n $((N + 256)); } &&
	# --join-timeout, --agent-timeout (the silence either side allows the other) and fleet_wait
	# are hang guards, far beyond what the run takes: on a loaded machine a coordinator welcoming
	# thousands may be slow to ping those it welcomed, and how fast it is is for make bench
	FABSCOPE_TOKEN=many fleet_run_bg run.log ping.ini --launcher external -n $N \
		--listen 127.0.0.1:$PORT -o r --join-timeout 600 --agent-timeout 600 &&
	ptp_wait_listen $PORT $fleet_pid &&
	FABSCOPE_TOKEN=many "$TEST_TOOL" fleet-sim --connect 127.0.0.1:$PORT -n $N >sim.json 2>sim.err &&
	fleet_wait $fleet_pid 600 && test $fleet_rc = 0 &&
	cat sim.json &&
	# the simulator: every agent joined, answered the phase'"'"'s ping and ended with bye
	test "$(jq -c "[.agents, .joined, .pongs, .byes, .failed]" sim.json)" = "[$N,$N,$N,$N,0]" &&
	# every challenge said how long the join goes on: some of the 600 s
	jq -e ".join_ms_min > 0 and .join_ms_min <= 600000" sim.json &&
	# the coordinator: every node joined, none missing, one ok ping record each, of each name
	test "$(jq "[.nodes[] | select(.status == \"ok\")] | length" r/run.json)" = $N &&
	test "$(jq ".missing_agents, .failed_jobs" r/run.json | tr "\n" " ")" = "0 0 " &&
	test "$(jq -r .status r/run.json)" = finished &&
	# and it said so: no agent named as not joined, missing or refused
	test_grep "$N of $N agents joined" run.log &&
	test_grep ! "did not join\|is missing\|refused\|gave up" run.log &&
	# one JSON object a line (one jq for all: jsonl_ok runs one a line)
	test $(wc -l <r/results.jsonl) = $N &&
	jq -e -n "[inputs | type == \"object\"] | length == $N and all" r/results.jsonl &&
	test $(jsonl_count r/results.jsonl ".test == \"ping\" and .status == \"ok\" and .metrics.rtt_us >= 0") = $N &&
	jq -r ".src.node" r/results.jsonl | sort >names.got &&
	test_cmp names.expect names.got &&
	jq -r ".agents[].node" r/run.json | sort >names.joined &&
	test_cmp names.expect names.joined
'

# a coordinator from the protocol's words (fleet/fleet.h), written apart from the C code:
# challenges with join_ms, reads the register, checks its mac over the nonces, the challenge
# and the register (canonical JSON: no "mac", keys sorted, no spaces), waits HOLD seconds,
# then answers with an error under its own mac over all three (which an agent that is still
# waiting reads, and checks: "the coordinator refused", exit 3)
cat >slowcoord.pl <<'EOF'
use IO::Socket::INET;
use Digest::SHA qw(hmac_sha256_hex);
use JSON::PP;
$| = 1;
my ($port, $token, $join_ms, $hold, $version) = @ARGV;
my $J = JSON::PP->new->utf8->canonical;
sub canon { my %m = %{$_[0]}; delete $m{mac}; $J->encode(\%m) }
sub mac { my $key = shift; hmac_sha256_hex(join("\n", @_), $key) }
my $l = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $port, Listen => 4, ReuseAddr => 1)
	or die "listen: $!\n";
open(my $f, ">", "slow.ready"); close $f;
my $s = $l->accept or die "accept: $!\n";
my $nc = "cd" x 32;
my $ch = { type => "challenge", proto => "fabscope-fleet", version => $version + 0, nonce => $nc,
	   join_ms => $join_ms + 0 };
my $j = $J->encode($ch);
print $s pack("N", length $j), $j;
my ($h, $b) = ("", "");
read($s, $h, 4) == 4 or die "no register\n";
read($s, $b, unpack("N", $h));
my $reg = $J->decode($b);
my $na = $reg->{nonce};
$na =~ /^[0-9a-f]{64}$/ or die "no nonce in $b\n";
$reg->{mac} eq mac($token, "fabscope-agent", $nc, $na, canon($ch), canon($reg)) or die "wrong mac\n";
print "registered\n";
sleep $hold;
my $e = { type => "error", message => "held back on purpose" };
$e->{mac} = mac($token, "fabscope-coordinator", $na, $nc, canon($ch), canon($reg), canon($e));
$e = $J->encode($e);
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
	# (its mac checked: the refusal comes from the coordinator, said so)
	ptp_one_error agent.err "the coordinator refused agent w1: held back on purpose" &&
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

test_expect_success $P,TEST_HOOKS 'an agent that refuses the coordinator is named so, not as a join that ran out' '
	# node1 speaks another protocol version: it refuses the challenge and ends at once
	cat >agent-wrap <<-EOF &&
	#!/bin/sh
	case " \$* " in *" node1 "*) FABSCOPE_TEST_PROTO_VERSION=99; export FABSCOPE_TEST_PROTO_VERSION ;; esac
	exec "$FABSCOPE" "\$@"
	EOF
	chmod +x agent-wrap &&
	# --join-timeout 600: the run goes on once every agent has joined or ended (fleet_wait
	# is a hang guard)
	fleet_run_bg run2.log ping.ini -n 3 --agent-cmd "$PWD/agent-wrap" -o r2 --join-timeout 600 &&
	fleet_wait $fleet_pid 120 && test $fleet_rc = 4 &&
	test_grep "agent node1 is missing: did not join: its agent refused this coordinator: agent node1 speaks fleet protocol 99" run2.log &&
	test_grep ! "within 600 s" run2.log &&
	test "$(jq -r ".nodes[] | select(.status == \"missing\") | .name" r2/run.json)" = node1 &&
	jq -r ".nodes[1].why" r2/run.json | grep "refused this coordinator" &&
	test $(jsonl_count r2/results.jsonl ".test == \"ping\" and .status == \"ok\"") = 2
'

test_done
