#!/usr/bin/env bash
test_description='an unauthenticated flood does not freeze the coordinator in listener mode (issue 41,
finding 5): with ulimit -n 1024, 1,100 idle connections (reconnected when closed) leave it under
10 % of a CPU and a real agent joins within 2 s; below the ulimit -n its agents need the run
does not start, saying what to set, and at that least ulimit a flood makes it run out:
accepting pauses (said once) instead of spinning; a peer that never registers is closed after 3 s, and nothing is
allocated for it: its register is read only once all of it has come'
# asan: always: feeds untrusted bytes to C code: what unauthenticated peers send a coordinator in listener mode
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_lazy_prereq PERL 'perl -MIO::Socket::INET -e 1'
test_require_in_ci FABSCOPE PERL
PORT=$(ptp_port 0)
PORT2=$(ptp_port 1)
export FABSCOPE_TOKEN=flood-token

# flood.pl PORT N HOLD: N connections to PORT that send nothing, each made again within a second
# of being closed, for HOLD seconds; "held N" once they are all made
cat >flood.pl <<'PERL'
use IO::Socket::INET;
my ($port, $n, $hold) = @ARGV;
my @s;
sub conn { IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 5) }
for (1 .. $n) { my $c = conn() or die "connect $_: $!\n"; push @s, $c; }
$| = 1;
print "held ", scalar(@s), "\n";
my $end = time + $hold;
while (time < $end) {
	sleep 1;
	for my $i (0 .. $#s) {	# closed by the coordinator: made again
		my $b;
		$s[$i]->blocking(0);
		my $r = sysread($s[$i], $b, 65536);
		next if !defined $r || $r > 0;
		close $s[$i];
		$s[$i] = conn() // $s[$i];
	}
}
PERL

cat >plan.ini <<'PLAN'
[global]
timeout = 3

[ping]
kind = ping
PLAN

# cpu_ticks PID: user + system time of PID so far, in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# cpu_under PID SECONDS PERCENT: over SECONDS, PID used less than PERCENT of a CPU (a bound
# on the work it does while nothing is asked of it, not a speed)
cpu_under() {
	local t0 t1 hz
	hz=$(getconf CLK_TCK) &&
	t0=$(cpu_ticks $1) &&
	sleep $2 &&
	t1=$(cpu_ticks $1) &&
	echo "cpu: $((t1 - t0)) ticks of $(($2 * hz)) in $2 s" &&
	test $(((t1 - t0) * 100)) -lt $(($3 * $2 * hz))
}

test_expect_success FABSCOPE,PERL 'ulimit -n 1024, a flood of 1,100 idle connections: under 10 % CPU, a real agent joins within 2 s' '
	{ (ulimit -n 1024 && exec "$FABSCOPE" run plan.ini --launcher external -n 1 --listen 127.0.0.1:$PORT \
		--join-timeout 60 -o r -v >run.log 2>&1) & } &&
	fleet_pid=$! && test_atexit "test_kill_pid $fleet_pid" &&
	ptp_wait_listen $PORT $fleet_pid &&
	{ (ulimit -n 4096 && exec perl flood.pl $PORT 1100 60 >flood.log 2>&1) & } && flood=$! &&
	test_atexit "test_kill_pid $flood" &&
	test_wait_for 30 grep -q "^held 1100" flood.log &&
	cpu_under $fleet_pid 6 10 &&
	fleet_agent_bg a.log --connect 127.0.0.1:$PORT --name n1 --rail 0=127.0.0.1 &&
	test_wait_for 2 grep -q "agent n1 joined" run.log &&
	fleet_wait $fleet_pid 30 &&
	test_grep "connections closed before they registered\|did not register within 3000 ms\|was the oldest of 65 waiting to register when another came" run.log &&
	kill -0 $flood
'

test_expect_success FABSCOPE,PERL 'out of descriptors (the least ulimit -n the run takes): accepting pauses, said once; no spin' '
	# below what its agents need (one each) and the 64 unregistered ones it keeps, the run does
	# not start, and says what to set
	test_expect_exit 3 sh -c "ulimit -n 24 && exec \"\$0\" run plan.ini --launcher external -n 1 \
		--listen 127.0.0.1:$PORT2 -o r2x" "$FABSCOPE" 2>low.err &&
	ptp_one_error low.err "1 agents need 65 open files in the coordinator (1 each and 64 more), over the limit of 24" &&
	# at that least limit, a flood of 200 makes it run out: the 64 it keeps and the descriptors
	# it has besides are more than 65
	{ (ulimit -n 65 && exec "$FABSCOPE" run plan.ini --launcher external -n 1 --listen 127.0.0.1:$PORT2 \
		--join-timeout 30 -o r2 >run2.log 2>&1) & } &&
	fleet_pid=$! && test_atexit "test_kill_pid $fleet_pid" &&
	ptp_wait_listen $PORT2 $fleet_pid &&
	{ (ulimit -n 4096 && exec perl flood.pl $PORT2 200 30 >flood2.log 2>&1) & } && flood2=$! &&
	test_atexit "test_kill_pid $flood2" &&
	test_wait_for 30 grep -q "^held 200" flood2.log &&
	test_wait_for 10 grep -q "cannot accept a connection: Too many open files (ulimit -n 65)" run2.log &&
	cpu_under $fleet_pid 5 10 &&
	test $(grep -c "cannot accept a connection" run2.log) = 1
'

# hold.pl PORT N: N connections that each send the header of a 64 KiB register and 60,000 bytes
# of it, and wait; "sent N" then
cat >hold.pl <<'PERL'
use IO::Socket::INET;
my ($port, $n) = @ARGV;
my @s;
for (1 .. $n) {
	my $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 5) or die "connect: $!\n";
	syswrite($c, pack("N", 65536) . ("x" x 60000)) == 60004 or die "write: $!\n";
	push @s, $c;
}
$| = 1;
print "sent $n\n";
sleep 20;
PERL

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

test_expect_success FABSCOPE,PERL 'registers that never end: nothing is held for them (under 1 MB for 60 of 64 KiB)' '
	PORT3=$(ptp_port 2) &&
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:malloc_context_size=0 \
		fleet_run_bg run3.log plan.ini --launcher external -n 1 --listen 127.0.0.1:$PORT3 --join-timeout 30 -o r3 &&
	ptp_wait_listen $PORT3 $fleet_pid &&
	before=$(rss_kib $fleet_pid) &&
	{ perl hold.pl $PORT3 60 >hold.log 2>&1 & } && hold=$! &&
	test_atexit "test_kill_pid $hold" &&
	test_wait_for 20 grep -q "^sent 60" hold.log &&
	sleep 1 &&
	after=$(rss_kib $fleet_pid) &&
	echo "resident: $before kB before, $after kB with 60 registers that never end" &&
	test $((after - before)) -lt 1024 &&
	test_wait_for 10 eval "grep -q \"did not register within 3000 ms\" run3.log || ! kill -0 $hold"
'

test_done
