# tests/lib-netns.sh - a two-namespace test bed for tests (source it after test-lib.sh)
#
# The pair comes from ci/netns-pair: namespaces $NETNS_PFX-a and $NETNS_PFX-b joined by a veth,
# addresses $NETNS_ADDR_A and $NETNS_ADDR_B.  The prefix is unique per test script (its PID),
# so test scripts can run in parallel (prove -j).  Everything here is torn down by test_atexit.
#
#	NETNS_PREREQS             the prerequisites a test using the pair needs (ROOT,NETNS)
#	netns_pair_up [RATE]      build the pair (tbf-shaped to RATE when given); registers its teardown
#	netns_exec a|b CMD...     run CMD in one side, in the foreground
#	netns_spawn a|b LOG CMD...  start CMD in the background in one side, stdout+stderr to LOG;
#	                          its PID (CMD's own: netns-pair execs all the way) in $netns_pid,
#	                          killed at exit
#	netns_wait_listen a|b PORT PID [SECONDS]  wait (default 10 s) until a TCP socket listens on
#	                          PORT in that side; fails early if PID exits first

NETNS_PAIR=$SRCDIR/ci/netns-pair
NETNS_PFX=fs$$
NETNS_ADDR_A=10.77.0.1
NETNS_ADDR_B=10.77.0.2
NETNS_PREREQS=ROOT,NETNS

netns_pair_up() {
	test_atexit '"$NETNS_PAIR" down -p "$NETNS_PFX"' &&
	"$NETNS_PAIR" up -p "$NETNS_PFX" -n "${NETNS_ADDR_A%.*}" ${1:+-r "$1"}
}

netns_exec() {
	"$NETNS_PAIR" exec -p "$NETNS_PFX" "$@"
}

netns_spawn() {
	local side=$1 log=$2
	shift 2
	"$NETNS_PAIR" exec -p "$NETNS_PFX" "$side" "$@" >"$log" 2>&1 &
	netns_pid=$!
	test_atexit "test_kill_pid $netns_pid"
}

netns_wait_listen() {
	"$NETNS_PAIR" wait-listen -p "$NETNS_PFX" ${4:+-w "$4"} "$1" "$2" "$3"
}
