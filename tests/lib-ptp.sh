# tests/lib-ptp.sh - loopback helpers for point-to-point tests (source it after test-lib.sh)
#
# No root, no namespaces: servers listen on 127.0.0.1 only.  Each test script gets its own
# block of PTP_PORTS ports below the kernel's ephemeral range (32768-), chosen from its PID,
# skipping blocks where something already listens, so scripts run in parallel (prove -j) do
# not collide.  Everything started here is killed at exit by PID (test_atexit + test_kill_pid).
#
#	ptp_port N                 port N (0 <= N < PTP_PORTS) of this script's block
#	ptp_is_listening PORT      true when a TCP socket listens on PORT (any address)
#	ptp_spawn LOG CMD...       start CMD in the background, stdout+stderr to LOG; its PID in
#	                           $ptp_pid, killed at exit
#	ptp_reap PID               stop (test_kill_pid) and reap a process ptp_spawn started, or
#	                           reap one already killed, and drop it from the exit-time kills
#	                           (so that they never signal a later process given the same PID)
#	ptp_wait_listen PORT PID [SECONDS]  wait (default 10 s) until PORT listens; fails at once
#	                           if PID exits first
#	ptp_server LOG TEST PORT [ARGS...]  `fabscope TEST --server` on 127.0.0.1:PORT, LOG its
#	                           output; waits until it listens (shows LOG if it does not);
#	                           PID in $ptp_pid, killed at exit
#	ptp_silent_listener LOG PORT  a TCP listener on 127.0.0.1:PORT that accepts and never
#	                           says a word (perl); waits until it listens; PID in $ptp_pid
#	ptp_wait_log SECONDS PATTERN FILE  wait until FILE has a line matching PATTERN (grep -E)
#	fs_expect CODE ARGS...     run `fabscope ARGS` (bounded by FS_TIMEOUT s, default 20) with
#	                           stdout in ./out and stderr in ./err; succeed when it exits CODE,
#	                           else say what it did (a hang shows as 124).  The bound is a hang
#	                           guard, many times a normal run, not a limit on how fast fabscope
#	                           must be: what a test checks about time is the exit code and the
#	                           message ("did not answer within 1 s")
#	ptp_one_error ERRFILE WORD...  ERRFILE is exactly one line, "fabscope...: ...", and holds
#	                           every WORD (fixed strings)
#	ptp_first_error ERRFILE WORD...  the same for the first line, with exactly one
#	                           "fabscope...:" line in the file (an error followed by usage)

PTP_PORTS=8

ptp_port() {
	if ! (($1 >= 0 && $1 < PTP_PORTS)); then
		echo "ptp_port $1: a script has ports 0 to $((PTP_PORTS - 1))" >&2
		return 1
	fi
	echo $((PTP_PORT_BASE + $1))
}

# /proc/net/tcp{,6}: local address "HEXIP:HEXPORT", state 0A is LISTEN
ptp_is_listening() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" 'FNR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { found = 1 }
		END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# This script's block: from its PID, skipping blocks where something already listens (a
# server another script left behind, say) and blocks another running script has claimed: a
# claim is a lock on $TMPDIR/fabscope-test-ports/BASE held for the script's life (two scripts
# whose PIDs pick the same block would otherwise both take it before either listens).
ptp_pick_block_() {
	local try n base fd dir=${TMPDIR:-/tmp}/fabscope-test-ports
	[[ -d $dir ]] || { mkdir -p "$dir" && chmod 1777 "$dir"; } 2>/dev/null
	for ((try = 0; try < 100; try++)); do
		base=$((20000 + (($$ + try * 7) % 1500) * PTP_PORTS))
		for ((n = 0; n < PTP_PORTS; n++)); do
			ptp_is_listening $((base + n)) && continue 2
		done
		[[ -e $dir/$base ]] || : 2>/dev/null >>"$dir/$base"
		exec {fd}<"$dir/$base" 2>/dev/null || continue
		flock -n "$fd" || { exec {fd}<&-; continue; }
		PTP_PORT_BASE=$base
		return 0
	done
	PTP_PORT_BASE=$((20000 + ($$ % 1500) * PTP_PORTS))
}
ptp_pick_block_

ptp_spawn() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 &
	ptp_pid=$!
	test_atexit "test_kill_pid $ptp_pid"
}

ptp_reap() {
	local i
	test_kill_pid "$1"
	for i in "${!test_atexit_[@]}"; do
		[[ ${test_atexit_[i]} == "test_kill_pid $1" ]] && unset "test_atexit_[i]"
	done
	test_atexit_=("${test_atexit_[@]}")
}

ptp_wait_listen() {
	local port=$1 pid=$2 tries=$((${3:-10} * 10))
	while ((tries-- > 0)); do
		ptp_is_listening "$port" && return 0
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "ptp_wait_listen: process $pid exited before port $port listened" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "ptp_wait_listen: nothing listens on port $port after ${3:-10} s" >&2
	return 1
}

ptp_server() {
	local log=$1 test=$2 port=$3
	shift 3
	if ptp_is_listening "$port"; then
		echo "ptp_server: port $port is already taken; not starting a server there" >&2
		return 1
	fi
	ptp_spawn "$log" "$FABSCOPE" "$test" --server --bind 127.0.0.1 -p "$port" "$@" &&
	ptp_wait_listen "$port" "$ptp_pid" || { cat "$log" >&2; return 1; }
}

ptp_silent_listener() {
	local log=$1 port=$2
	ptp_spawn "$log" perl -MIO::Socket::INET -e '
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0],
			Listen => 16, ReuseAddr => 1, Proto => "tcp") or die "listen: $!\n";
		my @keep;
		while (my $c = $s->accept) { push @keep, $c }	# accept, keep open, never answer
	' "$port" &&
	ptp_wait_listen "$port" "$ptp_pid" || { cat "$log" >&2; return 1; }
}

ptp_wait_log() {
	local secs=$1 pattern=$2 file=$3
	test_wait_for "$secs" grep -qE "$pattern" "$file" || { cat "$file" >&2; return 1; }
}

fs_expect() {
	local want=$1 rc
	shift
	timeout "${FS_TIMEOUT:-20}" "$FABSCOPE" "$@" >out 2>err
	rc=$?
	((rc == want)) && return 0
	{
		if ((rc == 124)); then
			echo "fs_expect: fabscope $* did not finish within ${FS_TIMEOUT:-20} s (expected exit $want)"
		else
			echo "fs_expect: fabscope $*: expected exit code $want, got $rc"
		fi
		echo "stdout:" && head -n 20 out && echo "stderr:" && head -n 20 err
	} >&2
	return 1
}

ptp_has_words_() { # WHAT LINE WORD...
	local what=$1 line=$2 w
	shift 2
	case $line in
	fabscope*:\ ?*) ;;
	*) echo "$what: '$line' is not 'fabscope...: message'" >&2; return 1 ;;
	esac
	for w; do
		[[ $line == *"$w"* ]] && continue
		echo "$what: '$line' does not say '$w'" >&2
		return 1
	done
}

ptp_one_error() {
	local file=$1 n
	shift
	n=$(wc -l <"$file")
	if ((n != 1)); then
		echo "ptp_one_error: $file should be one error line, it has $n:" >&2
		head -n 20 "$file" >&2
		return 1
	fi
	ptp_has_words_ ptp_one_error "$(cat "$file")" "$@"
}

ptp_first_error() {
	local file=$1 n
	shift
	n=$(grep -c '^fabscope[^:]*: ' "$file")
	if ((n != 1)); then
		echo "ptp_first_error: $file should have one 'fabscope...:' line, it has $n:" >&2
		head -n 20 "$file" >&2
		return 1
	fi
	ptp_has_words_ ptp_first_error "$(head -n 1 "$file")" "$@"
}
