#!/usr/bin/env bash
test_description='what an unauthenticated peer can make a bw/lat server allocate or hold is
bounded: a hello that asks for more buffer memory than --max-mem is refused before anything is
allocated; thousands of idle connections, or one that dribbles, keep no real client waiting,
neither between sessions nor while one runs'
# asan: always: feeds untrusted bytes to C code: what an unauthenticated peer sends a bw/lat server
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq PERL 'perl -MIO::Socket::INET -e 1'
test_require_in_ci FABSCOPE PERL
P=FABSCOPE,PERL
PORT=$(ptp_port 0)
PORT2=$(ptp_port 1)

# idle N PORT READY: N connections that say nothing, held until killed; READY once all are open
cat >idle.pl <<'EOF'
use IO::Socket::INET;
my ($n, $port, $ready) = @ARGV;
my @s;
for (1 .. $n) {
	my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 5) or last;
	push @s, $s;
}
open(my $f, ">", $ready); print $f scalar(@s), "\n"; close $f;
sleep 600;
EOF

# the server's resident size in kB
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

test_expect_success $P 'a hello asking for 2 GiB of buffers: refused in one line (exit 4), nothing allocated' '
	ptp_server srv.log bw $PORT --max-mem 64M &&
	srv=$ptp_pid &&
	before=$(rss_kib $srv) &&
	test_expect_code 4 "$FABSCOPE" bw 127.0.0.1 -p $PORT -s 1G -q 64 -n 1 >out 2>err &&
	test $(wc -l <err) = 1 &&
	test_grep "the test needs 2G of buffers (2 x its largest message, 1G), over this server.s limit of 64M: use a smaller -s, or start the server with a larger --max-mem" err &&
	after=$(rss_kib $srv) &&
	echo "server resident: $before kB before, $after kB after" &&
	test $((after - before)) -lt 16384 &&
	"$FABSCOPE" bw 127.0.0.1 -p $PORT -s 64K -n 100 >ok.out &&
	test_kill_pid $srv
'

test_expect_success $P 'by default the limit is an eighth of the RAM, 64M to 1G: the 2 GiB hello is refused (exit 4)' '
	ptp_server srv2.log bw $PORT &&
	srv=$ptp_pid &&
	test_expect_code 4 "$FABSCOPE" bw 127.0.0.1 -p $PORT -s 1G -q 64 -n 1 >out 2>err &&
	ram=$(awk "/^MemTotal:/ { print \$2 }" /proc/meminfo) &&
	lim=$((ram / 8 / 1024)) &&
	if [ $lim -ge 1024 ]; then lim=1G; elif [ $lim -le 64 ]; then lim=64M; else lim=; fi &&
	echo "RAM $ram kB, limit ${lim:-an eighth}" &&
	test_grep "over this server.s limit of ${lim}" err &&
	test_kill_pid $srv
'

test_expect_success $P '2,000 idle connections: a real client is still served at once (its --timeout 2 holds)' '
	ptp_server srv3.log bw $PORT &&
	srv=$ptp_pid &&
	{ perl idle.pl 2000 $PORT ready3 & } &&
	idle=$! &&
	test_atexit "test_kill_pid $idle" &&
	test_wait_for 30 test -s ready3 &&
	echo "$(cat ready3) idle connections open" &&
	test $(cat ready3) -ge 1000 &&
	"$FABSCOPE" bw 127.0.0.1 -p $PORT -n 100 --timeout 2 >real.out 2>real.err &&
	test_grep " sum " real.out &&
	test_kill_pid $idle &&
	kill -0 $srv &&
	test_kill_pid $srv
'

test_expect_success $P 'a connection that says nothing is closed after its hello deadline' '
	ptp_server srv4.log bw $PORT -v &&
	srv=$ptp_pid &&
	perl -MIO::Socket::INET -e "
		my \$s = IO::Socket::INET->new(PeerAddr => \"127.0.0.1:$PORT\") or die;
		print \$s \"\\0\";	# one byte of a length, then nothing
		\$s->flush;
		my \$b; my \$r = sysread(\$s, \$b, 1);
		exit(defined \$r && \$r == 0 ? 0 : 1)	# closed by the server
	" &&
	"$FABSCOPE" bw 127.0.0.1 -p $PORT -n 100 --timeout 2 >/dev/null &&
	test_kill_pid $srv
'

test_expect_success $P 'during a session, 500 idle connections do not keep the next client from hearing busy' '
	ptp_server srv5.log bw $PORT &&
	srv=$ptp_pid &&
	{ "$FABSCOPE" bw 127.0.0.1 -p $PORT -D 6 >long.out 2>long.err & } &&
	long=$! &&
	test_atexit "test_kill_pid $long" &&
	test_wait_for 10 grep -q "tcp write, 1 flow" srv5.log &&
	{ perl idle.pl 500 $PORT ready5 & } &&
	idle=$! &&
	test_atexit "test_kill_pid $idle" &&
	test_wait_for 30 test -s ready5 &&
	test_expect_code 4 "$FABSCOPE" bw 127.0.0.1 -p $PORT -n 10 --timeout 2 >busy.out 2>busy.err &&
	test_grep "refused: busy: serving" busy.err &&
	test_kill_pid $idle &&
	wait $long &&
	test_kill_pid $srv
'

# a "server" that answers any hello with an error message full of terminal escapes
cat >esc.pl <<'EOF'
use IO::Socket::INET;
my ($port) = @ARGV;
my $l = IO::Socket::INET->new(LocalAddr => "127.0.0.1:$port", Listen => 1, ReuseAddr => 1) or die;
$| = 1;
print "listening\n";
my $c = $l->accept or die;
my $j = '{"type":"error","message":"\u001b[2J\u001b]0;owned\u0007 cleared your screen\nfabscope bw: forged line","exit":4}';
print $c pack('N', length $j) . $j;
sleep 1;
EOF

test_expect_success $P 'control characters from a peer reach the terminal escaped, never raw' '
	{ perl esc.pl $PORT2 >esc.log & } &&
	epid=$! &&
	test_atexit "test_kill_pid $epid" &&
	test_wait_for 10 grep -q listening esc.log &&
	test_expect_code 4 "$FABSCOPE" bw 127.0.0.1 -p $PORT2 -n 10 --timeout 2 >out 2>err &&
	cat err &&
	test $(wc -l <err) = 1 &&
	! grep -q "$(printf "\033")" err &&
	! grep -q "$(printf "\007")" err &&
	test_grep -F "\x1b[2J\x1b]0;owned\x07 cleared your screen\x0afabscope bw: forged line" err
'

test_done
