#!/usr/bin/env bash
test_description='fabscope bw and lat when the peer fails, on loopback: refused, silent,
another protocol version, the wrong test, not a fabscope server, a server busy with another
client, killed mid-run, garbage on the control port.  The client exits 4 (peer; the wrong test
is a refusal too) or 3 (version) with one line; a server outlives its clients; --json output stays valid JSON'
# asan: always: feeds untrusted bytes to C code: what a failing or garbling bw/lat peer sends
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_require_in_ci FABSCOPE JQ TEST_HOOKS
P=FABSCOPE,JQ

# perl is there wherever prove is; the silent peer and the garbage sender use it
test_lazy_prereq PERL 'command -v perl && perl -MIO::Socket::INET -e 1'
test_require_in_ci PERL

PORT_NONE=$(ptp_port 0)		# nothing ever listens here
PORT_SILENT=$(ptp_port 1)	# accepts, never answers
PORT_BW=$(ptp_port 2)		# a bw server that lives through the whole script
PORT_LAT=$(ptp_port 3)		# a lat server that lives through the whole script
PORT_V99=$(ptp_port 4)		# servers speaking protocol version 99, then fake servers
PORT_VICTIM=$(ptp_port 5)	# servers killed in the middle of a run
PORT_READ=$(ptp_port 6)		# a lat server of READs whose client stops

# A short normal run: the server it talks to is alive and serving.
normal_run() { # bw|lat PORT
	fs_expect 0 "$1" 127.0.0.1 -p "$2" -n 2000 -s 4K --json &&
	jq -e "type == \"array\" and length > 0 and all(.[]; .test == \"$1\" and .status == \"ok\")" out >/dev/null
}

# server_alive PID LOG: the server process is still there
server_alive() {
	kill -0 "$1" 2>/dev/null && return 0
	echo "server_alive: server $1 is gone; its log:" >&2
	cat "$2" >&2
	return 1
}

# lines_matching PATTERN FILE: how many lines of FILE match (fixed string)
lines_matching() { grep -cF -e "$1" "$2"; }

# send_raw PORT FILE: connect, send FILE's bytes, close our side, print what the server says
# back (bounded: 15 s)
send_raw() {
	perl -MIO::Socket::INET -e '
		my ($port, $file) = @ARGV;
		open(my $f, "<:raw", $file) or die "$file: $!\n";
		local $/; my $data = <$f>;
		my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port,
			Proto => "tcp") or die "connect: $!\n";
		binmode $s;
		print $s $data;
		shutdown($s, 1);
		local $SIG{ALRM} = sub { die "no close from the server within 15 s\n" };
		alarm 15;
		my $got = "";
		while (sysread($s, my $buf, 4096)) { $got .= $buf }
		print $got;
	' "$1" "$2"
}

# frame FILE: a control message, 4-byte big-endian length then the bytes of FILE
frame() {
	perl -e 'local $/; my $d = <STDIN>; print pack("N", length $d), $d' <"$1"
}

test_expect_success $P 'set up: a bw and a lat server on loopback' '
	ptp_server bw.log bw $PORT_BW &&
	bw_pid=$ptp_pid &&
	ptp_server lat.log lat $PORT_LAT &&
	lat_pid=$ptp_pid &&
	normal_run bw $PORT_BW &&
	normal_run lat $PORT_LAT
'

test_expect_success $P 'every op on tcp: bw write, send, read, write_imm; lat send, write, read' '
	for op in write send read write_imm; do
		fs_expect 0 bw 127.0.0.1 -p $PORT_BW --op $op -q 2 -n 300 -s 4K --json &&
		jq -e --arg op $op "[.[] | select(.scope == \"aggregate\")] | length == 1 and
			(.[0] | .op == \$op and .metrics.msgs == 600)" out || return 1
	done &&
	for op in send write read; do
		fs_expect 0 lat 127.0.0.1 -p $PORT_LAT --op $op -n 500 --json &&
		jq -e --arg op $op ".[0] | .op == \$op and .metrics.iters == 500 and (.src.port | type) == \"number\"" out ||
		return 1
	done
'

for cmd in bw lat; do
	test_expect_success $P "$cmd to a port where nothing listens: exit 4, connection refused, how to start the server" '
		! ptp_is_listening $PORT_NONE &&
		fs_expect 4 '$cmd' 127.0.0.1 -p $PORT_NONE &&
		ptp_one_error err "connection refused" "fabscope '$cmd' --server"
	'
done

test_expect_success $P,PERL 'set up: a listener that accepts and never answers' '
	ptp_silent_listener silent.log $PORT_SILENT &&
	silent_pid=$ptp_pid
'

# silent after accepting: a busy older fabscope server, or another service waiting for more
silent_words() { ptp_one_error err "server 127.0.0.1:$PORT_SILENT accepted the connection" \
	"did not answer within 1 s" "busy with another test" "not a fabscope server"; }

# (that --timeout 1 is what gave up is in the message, "did not answer within 1 s"; fs_expect's
# limit is only a hang guard)
test_expect_success $P,PERL 'bw --json to a silent peer with --timeout 1: exit 4, no answer within 1 s, stdout valid JSON' '
	fs_expect 4 bw 127.0.0.1 -p $PORT_SILENT --timeout 1 --json &&
	silent_words &&
	jq -e "type == \"array\"" out
'

test_expect_success $P,PERL 'lat to a silent peer with --timeout 1: exit 4, no answer within 1 s' '
	fs_expect 4 lat 127.0.0.1 -p $PORT_SILENT --timeout 1 &&
	silent_words
'

test_expect_success $P,TEST_HOOKS 'client with protocol version 99, server with the build'"'"'s: exit 3, "protocol version mismatch"' '
	FABSCOPE_TEST_PROTO_VERSION=99 fs_expect 3 bw 127.0.0.1 -p $PORT_BW &&
	ptp_one_error err "protocol version mismatch"
'

test_expect_success $P,TEST_HOOKS 'the server logs one line about that mismatch' '
	test_wait_for 5 grep -q "protocol version mismatch" bw.log &&
	test $(lines_matching "protocol version mismatch" bw.log) = 1 &&
	ptp_has_words_ "server log" "$(grep -F "protocol version mismatch" bw.log)" "99"
'

test_expect_success $P,TEST_HOOKS 'the server survives the mismatch and serves a normal client' '
	server_alive $bw_pid bw.log &&
	normal_run bw $PORT_BW
'

test_expect_success $P,TEST_HOOKS 'lat client with version 99: exit 3 too, and the lat server survives' '
	FABSCOPE_TEST_PROTO_VERSION=99 fs_expect 3 lat 127.0.0.1 -p $PORT_LAT &&
	ptp_one_error err "protocol version mismatch" &&
	server_alive $lat_pid lat.log &&
	normal_run lat $PORT_LAT
'

test_expect_success $P,TEST_HOOKS 'server with version 99, normal client: the client exits 3, "protocol version mismatch"' '
	FABSCOPE_TEST_PROTO_VERSION=99 ptp_server v99.log bw $PORT_V99 &&
	v99_pid=$ptp_pid &&
	fs_expect 3 bw 127.0.0.1 -p $PORT_V99 &&
	ptp_one_error err "protocol version mismatch" &&
	server_alive $v99_pid v99.log &&
	ptp_reap $v99_pid
'

# fake_server LOG PORT FILE [reply]: a listener on 127.0.0.1:PORT that sends FILE's bytes to
# each client at once (a greeting, as SSH does) or, with "reply", after the first bytes the
# client sends (an answer, as HTTP does); then reads until the client closes (15 s at most)
fake_server() {
	ptp_spawn "$1" perl -MIO::Socket::INET -e '
		my ($port, $file, $mode) = @ARGV;
		open(my $f, "<:raw", $file) or die "$file: $!\n";
		local $/; my $data = <$f>;
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $port,
			Listen => 16, ReuseAddr => 1, Proto => "tcp") or die "listen: $!\n";
		local $SIG{ALRM} = sub { die "a client stayed 15 s\n" };
		while (my $c = $s->accept) {
			binmode $c;
			alarm 15;
			sysread($c, my $hello, 65536) if $mode eq "reply";
			syswrite($c, $data);
			1 while sysread($c, my $buf, 65536);
			alarm 0;
			close $c;
		}
	' "$2" "$3" "${4:-greet}" &&
	ptp_wait_listen "$2" "$ptp_pid" || { cat "$1" >&2; return 1; }
}

# not_fabscope CMD: the client CMD to the fake server on PORT_V99 exits 4 with one line saying
# it is no fabscope server there, what came, and how to start one; then WORDS
not_fabscope() {
	local cmd=$1
	shift
	fs_expect 4 "$cmd" 127.0.0.1 -p $PORT_V99 --timeout 3 --json &&
	ptp_one_error err "server 127.0.0.1:$PORT_V99 sent something that is not a fabscope control message" \
		"is $PORT_V99 another service" "fabscope $cmd --server -p $PORT_V99" "$@" &&
	jq -e "type == \"array\"" out
}

test_expect_success $P,PERL 'bw and lat to an SSH-like server (a greeting first): exit 4, not a fabscope server, what it sent' '
	printf "SSH-2.0-OpenSSH_9.6p1 Debian-4\r\n" >ssh.txt &&
	fake_server fake.log $PORT_V99 ssh.txt &&
	fake_pid=$ptp_pid &&
	not_fabscope bw "SSH-2.0-OpenSSH_9.6p1 Debian-4" &&
	not_fabscope lat "SSH-2.0-OpenSSH_9.6p1 Debian-4" &&
	ptp_reap $fake_pid
'

test_expect_success $P,PERL 'bw to an HTTP-like server (an error page in answer): exit 4, not a fabscope server, what it sent' '
	printf "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" >http.txt &&
	fake_server fake.log $PORT_V99 http.txt reply &&
	fake_pid=$ptp_pid &&
	not_fabscope bw "HTTP/1.1 400 Bad Request" &&
	ptp_reap $fake_pid
'

test_expect_success $P,PERL 'lat to a peer that answers an absurd length: exit 4, not a fabscope server, the length said' '
	printf "\377\377\377\377" >absurd.bin &&
	fake_server fake.log $PORT_V99 absurd.bin reply &&
	fake_pid=$ptp_pid &&
	not_fabscope lat "4294967295 bytes" &&
	ptp_reap $fake_pid
'

test_expect_success $P,PERL 'bw to a peer that answers a framed body that is not JSON: exit 4, not a fabscope server' '
	printf "\0\0\0\003\001\002\003" >notjson.bin &&
	fake_server fake.log $PORT_V99 notjson.bin reply &&
	fake_pid=$ptp_pid &&
	not_fabscope bw "not a JSON object" &&
	ptp_reap $fake_pid
'

test_expect_success $P 'lat client to a bw server: a refusal, exit 4, one line naming both tests' '
	fs_expect 4 lat 127.0.0.1 -p $PORT_BW &&
	ptp_one_error err "'\''bw'\''" "'\''lat'\''"
'

test_expect_success $P 'bw client to a lat server: a refusal, exit 4, one line naming both tests' '
	fs_expect 4 bw 127.0.0.1 -p $PORT_LAT &&
	ptp_one_error err "'\''bw'\''" "'\''lat'\''"
'

# Results that cannot be written are an error, not a quiet exit 0; a reader that left is not.
test_lazy_prereq DEV_FULL 'test -w /dev/full'
test_require_in_ci DEV_FULL
test_expect_success $P,DEV_FULL 'an --output file that cannot be written: exit 3, one line, the table kept' '
	fs_expect 3 bw 127.0.0.1 -p $PORT_BW -n 100 -o /dev/full &&
	ptp_one_error err "cannot write '\''/dev/full'\''" "No space left on device" &&
	test_grep "c2s .*sum" out &&
	fs_expect 3 lat 127.0.0.1 -p $PORT_LAT -n 100 -o /dev/full &&
	ptp_one_error err "cannot write '\''/dev/full'\''" "No space left on device"
'
test_expect_success $P,DEV_FULL 'standard output that cannot be written: exit 3, one line' '
	test_expect_exit 3 timeout 20 "$FABSCOPE" bw 127.0.0.1 -p $PORT_BW -n 100 --json >/dev/full 2>err &&
	ptp_one_error err "cannot write standard output" "No space left on device" &&
	test_expect_exit 3 "$FABSCOPE" help bw >/dev/full 2>err &&
	ptp_one_error err "cannot write standard output"
'
test_expect_success $P,PERL 'a standard output nobody reads any more (EPIPE): exit 0, nothing said' '
	# a pipe whose read end is closed before fabscope starts: its first write fails
	timeout 20 perl -e '\''pipe(R, W) or die; close R; open(STDOUT, ">&", \*W) or die; exec @ARGV'\'' \
		"$FABSCOPE" bw 127.0.0.1 -p $PORT_BW -n 100 2>err &&
	test_must_be_empty err
'

# a --bind this host cannot use is ours to fix, not the peer's failure (exit 4 before)
test_expect_success $P 'client --bind: an address no interface has is exit 3, another family exit 2' '
	fs_expect 3 bw 127.0.0.1 -p $PORT_BW -n 10 --bind 192.0.2.99 &&
	ptp_one_error err "cannot use --bind '\''192.0.2.99'\''" "no interface here has that address" &&
	fs_expect 2 lat 127.0.0.1 -p $PORT_LAT -n 10 --bind ::1 &&
	ptp_one_error err "--bind '\''::1'\'' is an IPv6 address" "IPv4" "one family" &&
	normal_run bw $PORT_BW
'

test_expect_success $P 'both servers survive the wrong-test clients and serve the right ones' '
	server_alive $bw_pid bw.log &&
	server_alive $lat_pid lat.log &&
	normal_run bw $PORT_BW &&
	normal_run lat $PORT_LAT
'

# kill_server_mid_run CMD ARGS...: a CMD server on PORT_VICTIM, a client with ARGS --json
# --timeout 3 to it (stdout in victim.json, stderr in victim.err, exit code in victim.rc);
# once the server logs the session, wait $KILL_AFTER s (default 1) and kill -9 the server
kill_server_mid_run() {
	local cmd=$1 cpid spid
	shift
	ptp_server victim.log "$cmd" $PORT_VICTIM &&
	spid=$ptp_pid &&
	{ timeout 15 "$FABSCOPE" "$cmd" 127.0.0.1 -p $PORT_VICTIM --timeout 3 --json "$@" \
		>victim.json 2>victim.err & } &&
	cpid=$! &&
	test_atexit "test_kill_pid $cpid" &&
	ptp_wait_log 5 "client .*: tcp " victim.log &&
	sleep "${KILL_AFTER:-1}" &&
	server_alive $spid victim.log &&
	kill -0 $cpid &&
	kill -9 $spid &&
	{ wait $cpid; echo $? >victim.rc; } &&
	ptp_reap $cpid &&
	ptp_reap $spid &&
	echo "client exit $(cat victim.rc); stderr:" && cat victim.err
}

test_expect_success $P 'bw -D 5, server killed after 1 s: exit 4, one line "went away", stdout valid JSON' '
	kill_server_mid_run bw -D 5 &&
	test $(cat victim.rc) = 4 &&
	ptp_one_error victim.err "went away" &&
	jq -e "type == \"array\"" victim.json
'

test_expect_success $P 'lat -D 5, server killed after 1 s: exit 4, one line "went away", stdout valid JSON' '
	kill_server_mid_run lat -D 5 &&
	test $(cat victim.rc) = 4 &&
	ptp_one_error victim.err "went away" &&
	jq -e "type == \"array\"" victim.json
'

test_expect_success $P 'bw -a sweep, server killed after 2 s: exit 4, JSON holds the sizes done before (and what the cut one had, "cut")' '
	KILL_AFTER=2 kill_server_mid_run bw -a -D 0.3 &&
	test $(cat victim.rc) = 4 &&
	ptp_one_error victim.err "went away" &&
	jq -c "[.[] | [.msg_size_bytes, .scope, .status]]" victim.json &&
	jq -e "type == \"array\" and length > 0 and any(.[]; .status == \"ok\") and
	       ([.[] | select(.status != \"ok\") | .msg_size_bytes] | unique | length <= 1) and
	       ((map(.msg_size_bytes) | max) as \$m |
	        all(.[]; .status == \"ok\" or (.status == \"cut\" and .msg_size_bytes == \$m)))" victim.json &&
	jq -e "[.[] | select(.scope == \"aggregate\") | .msg_size_bytes] as \$s |
	       (\$s | length) > 0 and \$s == [range(0; \$s | length) | pow(2; . + 1)]" victim.json
'

# new_log_has SINCE PATTERN FILE: a line after the first SINCE lines of FILE matches PATTERN
new_log_has() { tail -n +$(($1 + 1)) "$3" | grep -qE -e "$2"; }

# kill_client_mid_run CMD SERVERPID SERVERLOG PORT: a CMD client with -D 5 to the server; once
# the server logs the session, wait 1 s and kill -9 the client.  The server must then log
# exactly one line about it ("went away"), in SERVERLOG.new
kill_client_mid_run() {
	local cmd=$1 spid=$2 slog=$3 port=$4 cpid since
	since=$(wc -l <"$slog") &&
	{ "$FABSCOPE" "$cmd" 127.0.0.1 -p "$port" -D 5 --json >killed.json 2>killed.err & } &&
	cpid=$! &&
	test_atexit "test_kill_pid $cpid" &&
	test_wait_for 5 new_log_has $since "client .*: tcp " "$slog" &&
	sleep 1 &&
	kill -0 $cpid &&
	kill -9 $cpid &&
	{ wait $cpid; test $? = 137; } &&
	ptp_reap $cpid &&
	test_wait_for 5 new_log_has $since "went away" "$slog" &&
	sleep 0.3 &&
	tail -n +$((since + 1)) "$slog" >"$slog.new" &&
	echo "the server said:" && cat "$slog.new" &&
	test $(grep -c . "$slog.new") = 2 &&
	test $(lines_matching "went away" "$slog.new") = 1
}

test_expect_success $P 'bw client killed mid-run: the server logs one line, lives on, serves the next client' '
	kill_client_mid_run bw $bw_pid bw.log $PORT_BW &&
	server_alive $bw_pid bw.log &&
	normal_run bw $PORT_BW &&
	server_alive $bw_pid bw.log
'

test_expect_success $P 'lat client killed mid-run: the server logs one line, lives on, serves the next client' '
	kill_client_mid_run lat $lat_pid lat.log $PORT_LAT &&
	server_alive $lat_pid lat.log &&
	normal_run lat $PORT_LAT &&
	server_alive $lat_pid lat.log
'

# A READ server has no completions to see its client by: the client says "alive" about every
# second, and a server that hears nothing for --timeout gives up
test_expect_success $P 'lat --op read, client stopped mid-run: the server gives up after --timeout, one line, serves on' '
	ptp_server read.log lat $PORT_READ --timeout 1 &&
	read_pid=$ptp_pid &&
	since=$(wc -l <read.log) &&
	{ "$FABSCOPE" lat 127.0.0.1 -p $PORT_READ --op read -D 20 --timeout 1 --json >stopped.json 2>stopped.err & } &&
	cpid=$! &&
	test_atexit "kill -CONT $cpid 2>/dev/null; test_kill_pid $cpid" &&
	test_wait_for 5 new_log_has $since "client .*: tcp read" read.log &&
	sleep 1.5 &&
	kill -STOP $cpid &&
	test_wait_for 6 new_log_has $since "said nothing for 2 s during the READs" read.log &&
	kill -CONT $cpid &&
	{ wait $cpid; test $? = 4; } &&
	ptp_reap $cpid &&
	cat stopped.err &&
	server_alive $read_pid read.log &&
	fs_expect 0 lat 127.0.0.1 -p $PORT_READ --op read -n 2000 --json &&
	jq -e ".[0] | .op == \"read\" and .metrics.iters == 2000 and .metrics.lat_us.p50 > 0" out &&
	ptp_reap $read_pid	# (its port serves again below)
'

test_expect_success $P,PERL 'garbage on the bw control port: 100 random bytes, the server survives' '
	head -c 100 /dev/urandom >random.bin &&
	send_raw $PORT_BW random.bin >reply.bin &&
	server_alive $bw_pid bw.log &&
	normal_run bw $PORT_BW
'

test_expect_success $P,PERL 'garbage on the bw control port: a huge length prefix, an empty frame' '
	printf "\377\377\377\377" >huge.bin &&
	printf "\0\0\0\0" >empty.bin &&
	send_raw $PORT_BW huge.bin >reply.bin &&
	send_raw $PORT_BW empty.bin >reply.bin &&
	server_alive $bw_pid bw.log &&
	normal_run bw $PORT_BW
'

test_expect_success $P,PERL 'an HTTP request on the bw control port: one server line naming the client and what it sent' '
	since=$(wc -l <bw.log) &&
	printf "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n" >get.txt &&
	send_raw $PORT_BW get.txt >reply.bin &&
	test_must_be_empty reply.bin &&
	test_wait_for 5 new_log_has $since "not a fabscope control message" bw.log &&
	tail -n +$((since + 1)) bw.log >bw.log.new &&
	echo "the server said:" && cat bw.log.new &&
	test $(grep -c . bw.log.new) = 1 &&
	ptp_has_words_ "server log" "$(cat bw.log.new)" "client 127.0.0.1:" \
		"sent something that is not a fabscope control message" "GET / HTTP/1.1" &&
	server_alive $bw_pid bw.log &&
	normal_run bw $PORT_BW
'

test_expect_success $P,PERL 'a huge length prefix on the lat control port: the server line says so, serves on' '
	since=$(wc -l <lat.log) &&
	send_raw $PORT_LAT huge.bin >reply.bin &&
	test_wait_for 5 new_log_has $since "not a fabscope control message" lat.log &&
	tail -n +$((since + 1)) lat.log >lat.log.new &&
	test $(grep -c . lat.log.new) = 1 &&
	ptp_has_words_ "server log" "$(cat lat.log.new)" "client 127.0.0.1:" "4294967295 bytes" &&
	server_alive $lat_pid lat.log &&
	normal_run lat $PORT_LAT
'

test_expect_success $P,PERL 'a framed but bogus hello (wrong proto): an error reply, the server survives' '
	printf "%s" "{\"type\":\"hello\",\"proto\":\"nope\",\"version\":1}" >bogus.json &&
	frame bogus.json >bogus.bin &&
	send_raw $PORT_BW bogus.bin >reply.bin &&
	tail -c +5 reply.bin >reply.json &&
	jq -e ".type == \"error\" and (.message | type == \"string\")" reply.json &&
	server_alive $bw_pid bw.log &&
	normal_run bw $PORT_BW
'

test_expect_success $P,PERL 'framed garbage: not JSON, a JSON array, a truncated frame; the server survives' '
	printf "this is not json" >notjson.txt && frame notjson.txt >f1.bin &&
	printf "[1,2,3]" >array.json && frame array.json >f2.bin &&
	printf "\0\0\0\144{\"type\":" >f3.bin &&
	printf "%s" "{\"type\":\"hello\",\"proto\":\"fabscope-ptp\",\"version\":1,\"test\":\"bw\",\"params\":{\"sizes\":[1]}}" >params.json &&
	frame params.json >f4.bin &&
	for f in f1 f2 f3 f4; do
		send_raw $PORT_BW $f.bin >$f.reply || return 1
	done &&
	server_alive $bw_pid bw.log &&
	normal_run bw $PORT_BW
'

test_expect_success $P,PERL 'garbage on the lat control port: the lat server survives' '
	send_raw $PORT_LAT random.bin >reply.bin &&
	send_raw $PORT_LAT bogus.bin >reply.bin &&
	send_raw $PORT_LAT f4.bin >reply.bin &&
	server_alive $lat_pid lat.log &&
	normal_run lat $PORT_LAT
'

test_expect_success $P,PERL 'a server whose last client failed still exits 0 on SIGTERM (its own run went fine)' '
	ptp_server term.log bw $(ptp_port 6) &&
	term_pid=$ptp_pid &&
	send_raw $(ptp_port 6) bogus.bin >reply.bin &&
	test_wait_for 5 grep -q "malformed hello" term.log &&
	server_alive $term_pid term.log &&
	kill -TERM $term_pid &&
	{ wait $term_pid; echo $? >term.rc; } &&
	ptp_reap $term_pid &&
	echo "server exit code: $(cat term.rc)" &&
	test "$(cat term.rc)" = 0
'

test_expect_success $P 'a server given --poll keeps its own mode; the client'"'"'s records name it' '
	ptp_server own.log bw $(ptp_port 7) --poll event --once &&
	own_pid=$ptp_pid &&
	fs_expect 0 bw 127.0.0.1 -p $(ptp_port 7) --poll busy -n 2000 -s 4K --json &&
	jq -e "length > 0 and all(.[]; .params.poll == \"busy\" and .params.server_poll == \"event\")" out >/dev/null &&
	{ wait $own_pid; echo $? >own.rc; } && ptp_reap $own_pid && test "$(cat own.rc)" = 0 &&
	fs_expect 0 bw 127.0.0.1 -p $PORT_BW --poll busy -n 2000 -s 4K --json &&
	jq -e "length > 0 and all(.[]; .params.poll == \"busy\" and (.params | has(\"server_poll\") | not))" out >/dev/null
'

test_expect_success $P 'records name the messages kept in flight a flow: the depth, less where the 8 MiB cap holds' '
	fs_expect 0 bw 127.0.0.1 -p $PORT_BW -n 300 -s 4K --json &&
	jq -e "length > 0 and all(.[]; .params.inflight_msgs == 128)" out >/dev/null &&
	fs_expect 0 bw 127.0.0.1 -p $PORT_BW -n 40 -s 1M -b --json &&
	jq -e "length > 0 and all(.[]; .params.inflight_msgs == 8) and any(.[]; .dir == \"s2c\") and any(.[]; .dir == \"both\")" out >/dev/null &&
	fs_expect 0 bw 127.0.0.1 -p $PORT_BW -n 300 -s 4K --tx-depth 5 --cq-mod 1 --json &&
	jq -e "length > 0 and all(.[]; .params.inflight_msgs == 5)" out >/dev/null
'

# A server serves one client at a time; while it does, another client is told so at once.
# busy_second CMD SERVERPID SERVERLOG PORT: a CMD client with -D 3 to the server (its stdout in
# long.json, stderr in long.err); once the server logs that session, a second client with
# --timeout 5 must exit 4 with one line "refused: busy: serving ..." (stderr in err), refused
# before the first session is done; the first must then finish with exit 0 and good records.
# "At once" is in the message: a client that waited for its --timeout would say "did not
# answer within 5 s" instead.  How soon it hears (refusal time / --timeout) is measured by
# bench/netns-bench.sh; the timeouts here are hang guards.
busy_second() {
	local cmd=$1 spid=$2 slog=$3 port=$4 lpid since
	since=$(wc -l <"$slog") &&
	{ timeout 20 "$FABSCOPE" "$cmd" 127.0.0.1 -p "$port" -D 3 --json >long.json 2>long.err & } &&
	lpid=$! &&
	test_atexit "test_kill_pid $lpid" &&
	test_wait_for 5 new_log_has $since "client .*: tcp " "$slog" &&
	fs_expect 4 "$cmd" 127.0.0.1 -p "$port" --timeout 5 &&
	echo "the second client said:" && cat err &&
	ptp_one_error err "server 127.0.0.1:$port refused: busy: serving 127.0.0.1:" "since" \
		"a $cmd test, tcp" &&
	kill -0 $lpid &&
	{ wait $lpid; echo $? >long.rc; } &&
	ptp_reap $lpid &&
	echo "the first client exited $(cat long.rc)" && cat long.err &&
	test "$(cat long.rc)" = 0 &&
	test_must_be_empty long.err &&
	jq -e "length > 0 and all(.[]; .status == \"ok\")" long.json >/dev/null &&
	tail -n +$((since + 1)) "$slog" >"$slog.new" &&
	echo "the server said:" && cat "$slog.new" &&
	test $(lines_matching "refused: busy serving 127.0.0.1:" "$slog.new") = 1 &&
	test $(lines_matching ": done" "$slog.new") = 1 &&
	# refused while the first session ran, not after it (then it would have been served)
	test $(grep -n "refused: busy" "$slog.new" | cut -d: -f1) -lt $(grep -n ": done" "$slog.new" | cut -d: -f1)
}

test_expect_success $P 'bw: a second client while one runs hears at once that the server is busy (exit 4); the first is undisturbed' '
	busy_second bw $bw_pid bw.log $PORT_BW &&
	server_alive $bw_pid bw.log &&
	normal_run bw $PORT_BW
'

test_expect_success $P 'lat: a second client while one runs hears at once that the server is busy (exit 4); the first is undisturbed' '
	busy_second lat $lat_pid lat.log $PORT_LAT &&
	server_alive $lat_pid lat.log &&
	normal_run lat $PORT_LAT
'

# (the server logs a client done after the client has its results and may have exited: the
# sixth line is waited for, a hang guard of 30 s)
six_done() {
	tail -n +$((since + 1)) bw.log >bw.log.new &&
	test $(lines_matching ": done" bw.log.new) -ge 6
}

test_expect_success $P 'clients one right after another are all served, never told busy' '
	since=$(wc -l <bw.log) &&
	for i in 1 2 3 4 5 6; do
		fs_expect 0 bw 127.0.0.1 -p $PORT_BW -n 200 -s 4K || return 1
	done &&
	test_wait_for 30 six_done &&
	test_grep ! busy bw.log.new &&
	test $(lines_matching ": done" bw.log.new) = 6
'

test_expect_success $P,TEST_HOOKS 'a client that comes as a session ends is handed on and served, not refused' '
	# a grace of 10 s (default 0.5 s) stands for a session that ends within the grace
	FABSCOPE_TEST_BUSY_GRACE_MS=10000 ptp_server grace.log bw $PORT_V99 &&
	grace_pid=$ptp_pid &&
	{ timeout 20 "$FABSCOPE" bw 127.0.0.1 -p $PORT_V99 -D 2 --json >first.json 2>first.err & } &&
	first_pid=$! &&
	test_atexit "test_kill_pid $first_pid" &&
	ptp_wait_log 5 "client .*: tcp " grace.log &&
	fs_expect 0 bw 127.0.0.1 -p $PORT_V99 -n 2000 -s 4K --json &&
	{ wait $first_pid; echo $? >first.rc; } &&
	ptp_reap $first_pid &&
	test "$(cat first.rc)" = 0 &&
	jq -e "length > 0 and all(.[]; .status == \"ok\")" out >/dev/null &&
	echo "the server said:" && cat grace.log &&
	test_grep ! busy grace.log &&
	test $(lines_matching ": done" grace.log) = 2 &&
	server_alive $grace_pid grace.log &&
	ptp_reap $grace_pid
'

test_expect_success $P 'a --once server tells a second client it is busy at once, then exits 0 after the first' '
	ptp_server once.log lat $PORT_V99 --once &&
	once_pid=$ptp_pid &&
	{ timeout 20 "$FABSCOPE" lat 127.0.0.1 -p $PORT_V99 -D 2 --json >first.json 2>first.err & } &&
	first_pid=$! &&
	test_atexit "test_kill_pid $first_pid" &&
	ptp_wait_log 5 "client .*: tcp " once.log &&
	fs_expect 4 lat 127.0.0.1 -p $PORT_V99 --timeout 3 &&
	ptp_one_error err "refused: busy: serving 127.0.0.1:" "a lat test" &&
	{ wait $first_pid; echo $? >first.rc; } &&
	ptp_reap $first_pid &&
	test "$(cat first.rc)" = 0 &&
	{ wait $once_pid; echo $? >once.rc; } &&
	ptp_reap $once_pid &&
	echo "server exit code: $(cat once.rc)" && cat once.log &&
	test "$(cat once.rc)" = 0
'

test_expect_success $P 'bw: a timed window too short for the messages gives the figure with a warning, or none at all is exit 1' '
	# ten 1 MiB messages in 0.1 ms would be 840 Gb/s: no host times that many; and
	# a busy one may time none (see t1030 for a window that surely holds none)
	{ timeout 20 "$FABSCOPE" bw 127.0.0.1 -p $PORT_BW -D 0.0001 -s 1M --json >out 2>err; rc=$?; } &&
	if [ $rc = 0 ]; then
		ptp_one_error err "warning: 1048576-byte messages: a flow completed only" \
			"in its timed window (-D 0.0001)" "give a longer -D" &&
		jq -e "any(.[]; .scope == \"aggregate\" and .status == \"ok\")" out >/dev/null
	else
		test $rc = 1 &&
		ptp_one_error err "measured nothing: a flow completed no 1M message inside its timed window (-D 0.0001)" &&
		jq -e "all(.[]; .status == \"error\")" out >/dev/null
	fi &&
	# a window that holds enough says nothing
	fs_expect 0 bw 127.0.0.1 -p $PORT_BW -D 0.5 -s 4K --json &&
	test_must_be_empty err
'

test_expect_success $P 'the long-lived servers are still up at the end, and stop on SIGTERM with exit 0' '
	server_alive $bw_pid bw.log &&
	server_alive $lat_pid lat.log &&
	kill -TERM $bw_pid $lat_pid &&
	{ wait $bw_pid; echo $? >bw.rc; } &&
	{ wait $lat_pid; echo $? >lat.rc; } &&
	ptp_reap $bw_pid && ptp_reap $lat_pid &&
	test "$(cat bw.rc) $(cat lat.rc)" = "0 0"
'

test_done
