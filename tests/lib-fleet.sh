# lib-fleet.sh - helpers for tests of `fabscope run` and `fabscope agent` (source after test-lib.sh)
#
#	fleet_run_bg LOG ARGS...    start `fabscope run ARGS` in the background (stdout and stderr
#	                            in LOG); its PID in $fleet_pid, killed at exit
#	fleet_agent_bg LOG ARGS...  start `fabscope agent ARGS` in the background; PID in $agent_pid
#	fleet_wait PID SECS         wait for PID to exit within SECS; its exit code in $fleet_rc
#	                            (124 and a message when it did not)
#	fleet_agents PID            the PIDs of the agents a coordinator started (its children
#	                            running `fabscope agent`)
#	jsonl_ok FILE               every line of FILE is one JSON object (a torn line fails)
#	jsonl_count FILE JQ-FILTER  how many lines of FILE the filter selects
#	fleet_records_wait FILE N SECS   wait until FILE has at least N lines

fleet_run_bg() {
	local log=$1
	shift
	"$FABSCOPE" run "$@" >"$log" 2>&1 &
	fleet_pid=$!
	test_atexit "test_kill_pid $fleet_pid"
}

fleet_agent_bg() {
	local log=$1
	shift
	"$FABSCOPE" agent "$@" >"$log" 2>&1 &
	agent_pid=$!
	test_atexit "test_kill_pid $agent_pid"
}

fleet_wait() {
	local pid=$1 tries=$(($2 * 10))
	while ((tries-- > 0)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			fleet_rc=$?
			return 0
		fi
		sleep 0.1
	done
	echo "fleet_wait: process $pid still runs after $2 s" >&2
	fleet_rc=124
	return 1
}

fleet_agents() {
	local p
	for p in $(pgrep -P "$1"); do
		grep -qa -- agent "/proc/$p/cmdline" 2>/dev/null && echo "$p"
	done
}

# fleet_pgrep_here PATTERN: the processes whose command line matches PATTERN
# (pgrep -f) and that run in this directory, so that the agents of another
# test file running at the same time (same names: node0..) are not counted
fleet_pgrep_here() {
	local p
	for p in $(pgrep -f -- "$1"); do
		[[ $(readlink "/proc/$p/cwd" 2>/dev/null) == "$PWD" ]] && echo "$p"
	done
	return 0
}

jsonl_ok() {
	local n=0 line
	while IFS= read -r line || [[ -n $line ]]; do
		n=$((n + 1))
		if ! printf '%s\n' "$line" | jq -e 'type == "object"' >/dev/null 2>&1; then
			echo "jsonl_ok: $1 line $n is not a JSON object: ${line:0:200}" >&2
			return 1
		fi
	done <"$1"
	# the last line ends with a newline: nothing was cut
	[[ ! -s $1 || $(tail -c 1 "$1" | od -An -c | tr -d ' ') == '\n' ]] || {
		echo "jsonl_ok: $1 does not end with a newline" >&2
		return 1
	}
}

jsonl_count() {
	jq -c "select($2)" "$1" | wc -l
}

# fleet_held FILE LOG [SECONDS]: wait until the run started by fleet_run_bg holds at a test
# hook (FABSCOPE_TEST_ROUND_HOLD or _RETEST_HOLD=FILE: FILE appears) or has ended (a hang guard
# of SECONDS, default 120); true only if it holds, else LOG is shown
fleet_held() {
	test_wait_for "${3:-120}" eval "test -e \"$1\" || ! kill -0 $fleet_pid 2>/dev/null" &&
	{ test -e "$1" || { cat "$2" >&2; false; }; }
}

fleet_records_wait() {
	local file=$1 n=$2 tries=$(($3 * 10))
	while ((tries-- > 0)); do
		[[ -f $file ]] && (($(wc -l <"$file") >= n)) && return 0
		sleep 0.1
	done
	echo "fleet_records_wait: $file has fewer than $n lines after $3 s" >&2
	return 1
}
