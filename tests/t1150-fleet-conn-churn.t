#!/usr/bin/env bash
test_description='the coordinator keeps memory by the connections alive, not by all ever made:
10,000 connections that come, take the challenge and go leave its resident size where it was
(it grew by about 2 MB when every gone connection stayed in its array and in every poll)'
# asan: always: feeds untrusted bytes to C code: connections that send half a message, or garbage
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_lazy_prereq PERL 'perl -MIO::Socket::INET -e 1'
test_require_in_ci FABSCOPE PERL
PORT=$(ptp_port 0)

cat >churn.pl <<'EOF'
use IO::Socket::INET;
my ($port, $n) = @ARGV;
for (1 .. $n) {
	my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 10) or die "connect $_: $!\n";
	my $b;
	sysread($s, $b, 4) == 4 or die "no challenge on connection $_\n";	# accepted, challenged
	close $s;
}
EOF

cat >plan.ini <<'EOF'
[global]
timeout = 3

[ping]
kind = ping
EOF

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

test_expect_success FABSCOPE,PERL '10,000 connections come and go: the coordinator grows by less than 1 MB' '
	# (the first 5,000 warm the allocator up; under ASan freed memory goes back at once)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:malloc_context_size=0 \
	FABSCOPE_TOKEN=churn fleet_run_bg run.log plan.ini --launcher external -n 1 --listen 127.0.0.1:$PORT \
		--join-timeout 120 -o r &&
	test_wait_for 20 grep -q "waiting for 1 agents" run.log &&
	perl churn.pl $PORT 5000 &&
	before=$(rss_kib $fleet_pid) &&
	perl churn.pl $PORT 10000 &&
	after=$(rss_kib $fleet_pid) &&
	echo "resident: $before kB before, $after kB after 10,000 connections" &&
	test $((after - before)) -lt 1024 &&
	kill -0 $fleet_pid
'

test_done
