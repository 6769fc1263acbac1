#!/usr/bin/env bash
test_description='ci/sshd-netns: sshd in namespaces it makes (-n) or that exist (--in, here a
netns-pair), reached with the ssh_config it writes; commands run in the right namespace with
their environment; usage errors are exit 2; down removes what up made and nothing else'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-netns.sh"

SSHD_NETNS=$SRCDIR/ci/sshd-netns
test_lazy_prereq SSHD '[ -x /usr/sbin/sshd ] && command -v ssh && command -v ssh-keygen'
test_require_in_ci ROOT NETNS SSHD
P=$NETNS_PREREQS,SSHD

PFX=fs$$s      # -n bed: namespaces fs<pid>s-1..3, state in /tmp/fs<pid>s-sshd
IPFX=fs$$i     # --in bed, into the netns-pair fs<pid>-a/-b, state in the trash
IDIR=$TRASH_DIRECTORY/sshd-in

# one_line FILE: FILE holds exactly one line (errors are one line)
one_line() {
	[ "$(wc -l <"$1")" = 1 ] && return 0
	echo "one_line: '$1' should hold one line; it holds:" >&2
	cat "$1" >&2
	return 1
}

# running PID: exists and is no zombie
running() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat:0:1}" != Z ]
}

# links_of PREFIX [NS]: the interfaces named PREFIX-m<i> / PREFIX-n<i> (in NS or the root namespace)
links_of() {
	ip ${2:+-n "$2"} -o link show | awk -F": " "{sub(\"@.*\", \"\", \$2); print \$2}" |
		grep -E "^$1-[mn][0-9]+\$" || true
}

# config_value CONFIG HOST KEY: KEY's value in HOST's block
config_value() {
	awk -v h="$2" -v k="$3" '$1 == "Host" { inblk = ($2 == h) } inblk && $1 == k { print $2 }' "$1"
}

# ssh_check CONFIG NAME: a command run over ssh sees FOO from its command line, runs in
# namespace NAME, on the address the config names, and keeps the host name
ssh_check() {
	local cfg=$1 name=$2 addr
	addr=$(config_value "$cfg" "$name" HostName) &&
	timeout 20 ssh -F "$cfg" "$name" \
		"FOO=bar-$name sh -c 'echo \"\$FOO\"; ip netns identify; echo \"\$SSH_CONNECTION\" | cut -d\" \" -f3; hostname'" \
		>"ssh.$name" &&
	printf "%s\n" "bar-$name" "$name" "$addr" "$(hostname)" >"expect.$name" &&
	test_cmp "expect.$name" "ssh.$name"
}

test_expect_success 'usage errors exit 2 with a one-line message' '
	test_expect_exit 2 "$SSHD_NETNS" 2>err && one_line err &&
	while read -r args; do
		echo "args: $args" &&
		test_expect_exit 2 "$SSHD_NETNS" $args 2>err && one_line err || return 1
	done <<-\EOF
	bogus -p x
	up
	up -p x
	up -p x -n 0
	up -p x -n 65
	up -p x -n two
	up -p x -n 2 --in a,b
	up -p x --in a,,b
	up -p x --in a,a
	up -p waytoolongpfx -n 1
	up -p bad/name -n 1
	up -p x -n
	down -p x -n 2
	config -p x --in a
	config -p x extra
	EOF
'

test_require_in_ci SETPRIV
test_expect_success SETPRIV 'not root is exit 3, one line that says so' '
	test_expect_exit 3 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$SSHD_NETNS" up -p x -n 1 2>err &&
	one_line err &&
	test_grep "must run as root" err
'

test_expect_success '--help shows the header' '
	"$SSHD_NETNS" --help >out &&
	test_grep "ci/sshd-netns up     -p PREFIX -n N" out &&
	test_grep "^Exit codes" out
'

test_expect_success $P 'up -n 3: three namespaces, a management link each, an ssh_config' '
	test_atexit "\"\$SSHD_NETNS\" down -p $PFX" &&
	"$SSHD_NETNS" up -p $PFX -n 3 >up.out &&
	cat up.out &&
	cfg=$("$SSHD_NETNS" config -p $PFX) &&
	test "$cfg" = /tmp/$PFX-sshd/ssh_config &&
	printf "%s\n" $PFX-1 $PFX-2 $PFX-3 >expect &&
	test_cmp expect /tmp/$PFX-sshd/hosts &&
	for i in 1 2 3; do
		test -e /run/netns/$PFX-$i &&
		links_of $PFX $PFX-$i >links.$i && echo $PFX-n$i >expect && test_cmp expect links.$i &&
		read -r pid_$i </tmp/$PFX-sshd/$PFX-$i.pid || return 1
	done &&
	links_of $PFX >links.root &&
	printf "%s\n" $PFX-m1 $PFX-m2 $PFX-m3 >expect && test_cmp expect links.root &&
	for kv in "Port 22" "User root" "IdentityFile /tmp/$PFX-sshd/id_ed25519" "BatchMode yes" \
		"StrictHostKeyChecking no" "UserKnownHostsFile /dev/null" "LogLevel ERROR"; do
		test $(grep -cx "  $kv" "$cfg") = 3 || { echo "not 3 times in $cfg: $kv"; return 1; }
	done &&
	test $(grep -c "^Host " "$cfg") = 3
'

test_expect_success $P 'ssh runs a command in every namespace, with the variable it sets' '
	for i in 1 2 3; do
		ssh_check "$cfg" $PFX-$i || return 1
	done
'

test_expect_success $P '--in a namespace that does not exist: exit 1, one line, nothing made' '
	test_expect_exit 1 "$SSHD_NETNS" up -p $IPFX -d "$IDIR" --in $PFX-1,fs$$nosuch 2>err &&
	one_line err &&
	test_grep "no namespace .fs$$nosuch." err &&
	links_of $IPFX >links && test_must_be_empty links &&
	test_must_fail test -e "$IDIR"
'

test_expect_success $P 'up --in the two sides of a netns-pair: ssh lands in each, next to its veth' '
	netns_pair_up &&
	test_atexit "\"\$SSHD_NETNS\" down -p $IPFX -d \"\$IDIR\"" &&
	"$SSHD_NETNS" up -p $IPFX -d "$IDIR" --in $NETNS_PFX-a,$NETNS_PFX-b >upin.out &&
	cat upin.out &&
	icfg=$("$SSHD_NETNS" config -p $IPFX -d "$IDIR") &&
	test "$icfg" = "$IDIR/ssh_config" &&
	ssh_check "$icfg" $NETNS_PFX-a &&
	ssh_check "$icfg" $NETNS_PFX-b &&
	timeout 20 ssh -F "$icfg" $NETNS_PFX-b "ip -4 -o addr show dev $NETNS_PFX-vb" >addr.b &&
	test_grep " $NETNS_ADDR_B/24 " addr.b
'

test_expect_success $P 'down --in: sshd and links gone, the given namespaces and their pair stay' '
	read -r ipid_a <"$IDIR/$NETNS_PFX-a.pid" &&
	read -r ipid_b <"$IDIR/$NETNS_PFX-b.pid" &&
	"$SSHD_NETNS" down -p $IPFX -d "$IDIR" >down.in &&
	test_grep "2 sshd stopped, 2 links and 0 namespaces removed" down.in &&
	test_must_fail running $ipid_a &&
	test_must_fail running $ipid_b &&
	test -e /run/netns/$NETNS_PFX-a && test -e /run/netns/$NETNS_PFX-b &&
	links_of $IPFX >links && test_must_be_empty links &&
	links_of $IPFX $NETNS_PFX-a >links && test_must_be_empty links &&
	test_must_fail test -e "$IDIR" &&
	netns_exec a ip -4 -o addr show dev $NETNS_PFX-va >addr.a &&
	test_grep " $NETNS_ADDR_A/24 " addr.a
'

test_expect_success $P 'down -n: no sshd, namespace, link or state left; again is a no-op' '
	"$SSHD_NETNS" down -p $PFX >down1 &&
	test_grep "3 sshd stopped, 3 links and 3 namespaces removed" down1 &&
	for pid in $pid_1 $pid_2 $pid_3; do
		test_must_fail running $pid || return 1
	done &&
	{ ip netns list | grep "^$PFX-" >left || true; } &&
	test_must_be_empty left &&
	links_of $PFX >links && test_must_be_empty links &&
	test_must_fail test -e /tmp/$PFX-sshd &&
	"$SSHD_NETNS" down -p $PFX >down2 &&
	test_grep "0 sshd stopped, 0 links and 0 namespaces removed" down2 &&
	test_expect_exit 1 "$SSHD_NETNS" config -p $PFX 2>err && one_line err
'

test_expect_success $P 'down leaves alone a process whose PID is in a pidfile but is not its sshd' '
	{ sleep 60 & } &&
	stranger=$! &&
	test_atexit "test_kill_pid $stranger" &&
	mkdir -p /tmp/$PFX-sshd &&
	echo "$PFX-x 99 0" >/tmp/$PFX-sshd/nodes &&
	echo $stranger >/tmp/$PFX-sshd/$PFX-x.pid &&
	"$SSHD_NETNS" down -p $PFX >down3 &&
	test_grep "0 sshd stopped" down3 &&
	running $stranger &&
	test_must_fail test -e /tmp/$PFX-sshd &&
	test_kill_pid $stranger
'

test_done
