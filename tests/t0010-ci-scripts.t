#!/usr/bin/env bash
test_description='ci/netns-pair and ci/install-deps: usage errors, permissions, and the pair
that the netns tests stand on (addresses, tbf numbers, exec keeping the PID, wait-listen)'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-netns.sh"

test_require_in_ci ROOT NETNS JQ

[ "$(id -u)" = 0 ] && test_require_in_ci SETPRIV
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# one_line FILE: FILE holds exactly one line (errors are one line)
one_line() {
	[ "$(wc -l <"$1")" = 1 ] && return 0
	echo "one_line: '$1' should hold one line; it holds:" >&2
	cat "$1" >&2
	return 1
}

test_expect_success 'netns-pair: usage errors exit 2 with a one-line message' '
	test_expect_exit 2 "$NETNS_PAIR" 2>err && one_line err &&
	while read -r args; do
		echo "args: $args" &&
		test_expect_exit 2 "$NETNS_PAIR" $args 2>err && one_line err || return 1
	done <<-\EOF
	bogus -p x
	up
	up -p waytoolongprefix
	up -p bad/name
	up -p x -r fast
	up -p x -r 0mbit
	up -p x -r 0500mbit
	up -p x -n 10.300.0
	up -p x -n 10.08.0
	up -p x -n 10.0
	up -p x -r
	down -p x -r 1mbit
	info -p x extra
	exec -p x -q a true
	EOF
'

test_expect_success 'netns-pair: --help shows the header' '
	"$NETNS_PAIR" --help >out &&
	test_grep "ci/netns-pair up   -p PREFIX" out &&
	test_grep "^Exit codes" out
'

test_expect_success SETPRIV 'netns-pair: not root is exit 3, one line that says so' '
	test_expect_exit 3 as_nobody "$NETNS_PAIR" up -p x 2>err &&
	one_line err &&
	test_grep "must run as root" err
'

test_expect_success 'install-deps: groups nest (build < test < bench < all), -l lists them' '
	for g in build test bench all; do
		"$SRCDIR/ci/install-deps" -l $g >$g.list || return 1
	done &&
	test_grep -x libjansson-dev build.list &&
	test_grep -x libmicrohttpd-dev build.list &&
	test_grep -x jq test.list &&
	test_grep -x qperf bench.list &&
	test_grep -x gnuplot-nox all.list &&
	test_grep ! -x jq build.list &&
	test -z "$(sort build.list | comm -23 - <(sort test.list))" &&
	test -z "$(sort test.list | comm -23 - <(sort bench.list))" &&
	test -z "$(sort bench.list | comm -23 - <(sort all.list))" &&
	"$SRCDIR/ci/install-deps" -l >default.list &&
	test_cmp all.list default.list
'

test_expect_success 'install-deps: usage errors exit 2; a dry run installs nothing and exits 0' '
	test_expect_exit 2 "$SRCDIR/ci/install-deps" nosuchgroup 2>err && one_line err &&
	test_expect_exit 2 "$SRCDIR/ci/install-deps" build test 2>err && one_line err &&
	test_expect_exit 2 "$SRCDIR/ci/install-deps" --bogus 2>err && one_line err &&
	"$SRCDIR/ci/install-deps" -n all >out &&
	test_grep -E "nothing to do|dry run: would run" out
'

test_expect_success SETPRIV 'install-deps: not root, with everything installed, is not an error' '
	if "$SRCDIR/ci/install-deps" -n build | grep -q "nothing to do"; then
		as_nobody "$SRCDIR/ci/install-deps" build >out &&
		test_grep "nothing to do" out
	fi
'

test_expect_success $NETNS_PREREQS,JQ 'up -r 500mbit: namespaces, addresses, tbf on both ends' '
	netns_pair_up 500mbit >up.out &&
	test_grep "rate 500mbit" up.out &&
	for side in a b; do
		dev=$NETNS_PFX-v$side &&
		netns_exec $side ip -j addr show dev $dev >addr.$side.json &&
		netns_exec $side tc -j qdisc show dev $dev >qdisc.$side.json &&
		netns_exec $side ip -j link show dev lo >lo.$side.json &&
		netns_exec $side cat /proc/sys/net/ipv6/conf/$dev/disable_ipv6 >v6.$side || return 1
	done &&
	jq -e ".[0].addr_info | map(select(.family == \"inet\")) | .[0] |
	       .local == \"$NETNS_ADDR_A\" and .prefixlen == 24" addr.a.json &&
	jq -e ".[0].addr_info | map(select(.family == \"inet\")) | .[0].local == \"$NETNS_ADDR_B\"" addr.b.json &&
	for side in a b; do
		cat qdisc.$side.json &&
		jq -e ".[0] | .kind == \"tbf\" and .options.rate == 62500000 and
		       .options.burst >= 131000 and .options.lat >= 6000" qdisc.$side.json &&
		jq -e ".[0].flags | index(\"UP\")" lo.$side.json &&
		echo 1 >expect && test_cmp expect v6.$side || return 1
	done
'

test_expect_success $NETNS_PREREQS 'info prints the pair as key=value lines' '
	"$NETNS_PAIR" info -p $NETNS_PFX >info &&
	test_grep -x "NS_A=$NETNS_PFX-a" info &&
	test_grep -x "DEV_B=$NETNS_PFX-vb" info &&
	test_grep -x "ADDR_B=$NETNS_ADDR_B" info &&
	test_grep "^QDISC_A=\"qdisc tbf" info
'

test_expect_success $NETNS_PREREQS 'exec keeps the PID: $! is the command itself, inside side b' '
	netns_spawn b sleep.log sleep 300 &&
	test_wait_for 5 grep -qx sleep /proc/$netns_pid/comm &&
	echo $NETNS_PFX-b >expect &&
	ip netns identify $netns_pid >actual &&
	test_cmp expect actual &&
	test_kill_pid $netns_pid &&
	test_must_fail kill -0 $netns_pid 2>/dev/null
'

test_expect_success $NETNS_PREREQS 'wait-listen: exit 1 and one line on timeout or a dead server' '
	test_expect_exit 1 "$NETNS_PAIR" wait-listen -p $NETNS_PFX -w 1 b 18599 2>err &&
	one_line err && test_grep "nothing listens on TCP port 18599" err &&
	netns_spawn b true.log true &&
	test_expect_exit 1 "$NETNS_PAIR" wait-listen -p $NETNS_PFX b 18599 $netns_pid 2>err &&
	one_line err && test_grep "exited before anything listened" err &&
	test_expect_exit 2 "$NETNS_PAIR" wait-listen -p $NETNS_PFX c 18599 2>err &&
	test_expect_exit 2 "$NETNS_PAIR" wait-listen -p $NETNS_PFX b 70000 2>err
'

test_expect_success $NETNS_PREREQS 'up again rebuilds (here unshaped); down is idempotent; a gone pair is exit 1' '
	"$NETNS_PAIR" up -p $NETNS_PFX >/dev/null &&
	netns_exec a tc qdisc show dev $NETNS_PFX-va >qdisc &&
	test_grep ! tbf qdisc &&
	"$NETNS_PAIR" down -p $NETNS_PFX >down1 &&
	test_grep "2 namespaces removed" down1 &&
	"$NETNS_PAIR" down -p $NETNS_PFX >down2 &&
	test_grep "0 namespaces removed" down2 &&
	test_expect_exit 1 "$NETNS_PAIR" exec -p $NETNS_PFX a true 2>err && one_line err &&
	test_expect_exit 1 "$NETNS_PAIR" info -p $NETNS_PFX 2>err && one_line err
'

test_expect_success 'verbs-bench: a bad -r or an unknown argument is exit 2 with one line' '
	test_expect_code 2 bash "$SRCDIR/bench/verbs-bench.sh" -r 0 2>err &&
	test "$(wc -l <err)" = 1 && test_grep "rounds, 1 or more" err &&
	test_expect_code 2 bash "$SRCDIR/bench/verbs-bench.sh" --fast 2>err &&
	test "$(wc -l <err)" = 1 && test_grep "unknown argument" err
'

# (bench/lib.sh: what every other bench script starts with)
test_expect_success 'the benches: -h prints the head comment, an unknown argument is exit 2 with one line' '
	for b in "$SRCDIR"/bench/*-bench.sh; do
		n=$(basename "$b") &&
		case $n in verbs-bench.sh) continue ;; esac &&
		bash "$b" -h >out 2>err &&
		test_grep "^bench/$n - " out && test_must_be_empty err &&
		! grep -q "^set -euo" out &&
		test_expect_code 2 bash "$b" --no-such 2>err && test_line_count = 1 err &&
		test_grep "^${n%.sh}: unknown argument .--no-such. (usage: bench/$n " err || return 1
	done
'

test_done
