#!/usr/bin/env bash
test_description='ci/slurm-local: a single-node Slurm cluster owned by a directory: up, srun runs
tasks with distinct SLURM_PROCID on 16 declared CPUs, a daemon dying at start-up is exit 1 with
its log, usage errors are exit 2, down stops exactly the daemons it started; with -T, slurmctld
runs topology/tree on the topology.conf that fabscope topo export --slurm wrote'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

# one single-node cluster per host (its node name is the host's name)
test_holds slurm

SLURM_LOCAL=$SRCDIR/ci/slurm-local
test_lazy_prereq SLURM '
	for c in munged mungekey slurmctld slurmd srun sinfo squeue scancel; do
		command -v $c || exit 1
	done
'
test_require_in_ci ROOT SLURM JQ FABSCOPE
P=ROOT,SLURM

# The cluster's directory: in the trash (its logs are kept when a test fails), unless that path
# is too long for the munge socket under it.
SL=$TRASH_DIRECTORY/sl
((${#SL} <= 70)) || SL=/tmp/fs$$sl
HOST=$(hostname)

# one_line FILE: FILE holds exactly one line (errors are one line)
one_line() {
	[ "$(wc -l <"$1")" = 1 ] && return 0
	echo "one_line: '$1' should hold one line; it holds:" >&2
	cat "$1" >&2
	return 1
}

# running PID: exists and is no zombie (daemons outlive the script that started them, so init
# reaps them, maybe late)
running() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat:0:1}" != Z ]
}

# procs_naming DIR: the live processes whose command line names DIR/ (none: empty output).  DIR
# goes to awk through the environment, else awk's own command line would name it.
procs_naming() {
	ps -eo pid=,stat=,args= | D="$1/" awk '$2 !~ /^Z/ && index($0, ENVIRON["D"])'
}

# in_cluster CMD...: CMD with the cluster's env sourced, in a subshell
in_cluster() { (. "$SL/env" && "$@"); }

test_expect_success 'usage errors exit 2 with a one-line message' '
	test_expect_exit 2 "$SLURM_LOCAL" 2>err && one_line err &&
	while read -r args; do
		echo "args: $args" &&
		test_expect_exit 2 "$SLURM_LOCAL" $args 2>err && one_line err || return 1
	done <<-\EOF
	bogus /tmp/x
	up
	up /tmp/x -c 0
	up /tmp/x -c many
	up /tmp/x -c
	up /tmp/x /tmp/y
	up -q /tmp/x
	up /tmp/x -w 0
	down /tmp/x -c 4
	env /tmp/x -w 3
	EOF
'

test_require_in_ci SETPRIV
test_expect_success SETPRIV 'not root is exit 3, one line that says so' '
	test_expect_exit 3 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$SLURM_LOCAL" up /tmp/fs$$nobody 2>err &&
	one_line err &&
	test_grep "must run as root" err
'

test_expect_success '--help shows the header' '
	"$SLURM_LOCAL" --help >out &&
	test_grep "ci/slurm-local up   DIR" out &&
	test_grep "^Exit codes" out
'

test_expect_success $P 'up: the node is idle with 16 CPUs, env sets SLURM_CONF, state under DIR' '
	test_atexit "\"\$SLURM_LOCAL\" down \"\$SL\"" &&
	"$SLURM_LOCAL" up "$SL" -c 16 >up.out &&
	cat up.out &&
	test_grep "node $HOST idle, 16 CPUs" up.out &&
	"$SLURM_LOCAL" env "$SL" >env.out &&
	test_cmp "$SL/env" env.out &&
	test_grep -x "export SLURM_CONF=$SL/slurm.conf" env.out &&
	test_grep -x "NodeName=$HOST NodeAddr=127.0.0.1 CPUs=16 State=UNKNOWN" "$SL/slurm.conf" &&
	test_grep -x "AuthInfo=socket=$SL/run/munge.sock" "$SL/slurm.conf" &&
	for d in munged slurmctld slurmd; do
		read -r pid <"$SL/run/$d.pid" && running $pid &&
		tr "\0" " " <"/proc/$pid/cmdline" >cmd.$d && test_grep -F "$SL/" cmd.$d || return 1
	done &&
	in_cluster sinfo -h -N -o "%N %t %c" >sinfo &&
	echo "$HOST idle 16" >expect &&
	test_cmp expect sinfo
'

test_expect_success $P 'srun -n4 --overcommit hostname prints the host name 4 times' '
	in_cluster timeout 30 srun -N1 -n4 --overcommit hostname >hosts &&
	printf "%s\n" $HOST $HOST $HOST $HOST >expect &&
	test_cmp expect hosts
'

test_expect_success $P 'srun -n4: four tasks, SLURM_PROCID 0-3 and SLURM_LOCALID 0-3, on this node' '
	in_cluster timeout 30 srun -N1 -n4 sh -c "echo \$SLURM_PROCID \$SLURM_LOCALID \$SLURM_NTASKS \$SLURMD_NODENAME" >tasks &&
	sort -n tasks >tasks.sorted &&
	printf "%s\n" "0 0 4 $HOST" "1 1 4 $HOST" "2 2 4 $HOST" "3 3 4 $HOST" >expect &&
	test_cmp expect tasks.sorted
'

test_expect_success $P 'srun -n16 fits the 16 declared CPUs without --overcommit' '
	in_cluster timeout 30 srun -N1 -n16 sh -c "echo \$SLURM_PROCID" >procids &&
	sort -n procids >procids.sorted &&
	seq 0 15 >expect &&
	test_cmp expect procids.sorted
'

test_expect_success $P,JQ 'srun -n4 fabscope allreduce: ranks from SLURM_PROCID, rails from SLURM_LOCALID' '
	{ in_cluster timeout 60 srun -N1 -n4 "$FABSCOPE" allreduce --root 127.0.0.1:$(ptp_port 0) --rail 0,1,0,1 \
		-b 100000 -e 100000 -w 1 -i 2 --json >coll.json 2>coll.err || { cat coll.err; false; }; } &&
	jq -e "length == 1 and .[0].ranks == 4 and .[0].metrics.wrong == 0 and
	       (.[0].endpoints | sort_by(.pos) | map(.rail)) == [0, 0, 1, 1] and
	       (.[0].endpoints | sort_by(.rank) | map(.rail)) == [0, 1, 0, 1]" coll.json >/dev/null
'

test_expect_success $P 'a slurmd that dies at start-up: exit 1, the error, its log; nothing left running' '
	mkdir -p fakebin &&
	printf "#!/bin/sh\necho \"fake slurmd: refusing to start\" >&2\nexit 1\n" >fakebin/slurmd &&
	chmod +x fakebin/slurmd &&
	test_expect_exit 1 env PATH="$PWD/fakebin:$PATH" "$SLURM_LOCAL" up "$SL-bad" -w 10 2>err &&
	cat err &&
	head -n 1 err >err.first &&
	test_grep "^slurm-local: slurmd exited at start-up" err.first &&
	test_grep "fake slurmd: refusing to start" err &&
	procs_naming "$SL-bad" >left &&
	test_must_be_empty left &&
	test_must_fail test -e "$SL-bad/env"
'

test_expect_success $P 'a slurmd that never registers: exit 1 after -w 1 s, the state named; nothing left' '
	printf "#!/bin/sh\necho \"fake slurmd: hanging\" >&2\nwhile :; do sleep 1; done\n" >fakebin/slurmd &&
	test_expect_exit 1 env PATH="$PWD/fakebin:$PATH" "$SLURM_LOCAL" up "$SL-bad" -w 1 2>err &&
	cat err &&
	head -n 1 err >err.first &&
	test_grep "^slurm-local: node $HOST is not idle after 1 s (state " err.first &&
	test_grep "fake slurmd: hanging" err &&
	procs_naming "$SL-bad" >left &&
	test_must_be_empty left
'
test_atexit 'rm -rf "$SL-bad"'

test_expect_success $P 'down stops exactly its daemons, keeps the logs; a second down is a no-op' '
	for d in munged slurmctld slurmd; do
		read -r pid_$d <"$SL/run/$d.pid" || return 1
	done &&
	"$SLURM_LOCAL" down "$SL" >down1 &&
	test_grep "3 daemons stopped" down1 &&
	for pid in $pid_munged $pid_slurmctld $pid_slurmd; do
		test_must_fail running $pid || return 1
	done &&
	procs_naming "$SL" >left &&
	test_must_be_empty left &&
	test_path_is_file "$SL/log/slurmctld.log" &&
	test_must_fail test -e "$SL/env" &&
	"$SLURM_LOCAL" down "$SL" >down2 &&
	test_grep "0 daemons stopped" down2 &&
	test_expect_exit 1 "$SLURM_LOCAL" env "$SL" 2>err && one_line err
'

test_expect_success $P 'down leaves alone a process whose PID is in a pidfile but is not its daemon' '
	{ sleep 60 & } &&
	stranger=$! &&
	test_atexit "test_kill_pid $stranger" &&
	echo $stranger >"$SL/run/slurmd.pid" &&
	"$SLURM_LOCAL" down "$SL" >down3 &&
	test_grep "0 daemons stopped" down3 &&
	running $stranger &&
	test_kill_pid $stranger
'

test_expect_success $P,FABSCOPE 'topology/tree takes what fabscope topo export --slurm wrote' '
	cat >intent.topo <<-EOF &&
	switch l1 tier=leaf rail=0
	switch l2 tier=leaf rail=1
	switch s1 tier=spine
	switch s2 tier=spine
	link $HOST:eth0 l1:p1 rail=0
	link $HOST:eth1 l2:p1 rail=1
	link l1:s1 s1:l1
	link l1:s2 s2:l1
	link l2:s1 s1:l2
	link l2:s2 s2:l2
	EOF
	"$FABSCOPE" topo export intent.topo --slurm -o topology.conf &&
	grep -v "^#" topology.conf >actual &&
	printf "SwitchName=l1 Nodes=%s\nSwitchName=s1 Switches=l1\nSwitchName=s2 Switches=l1\n" "$HOST" >expect &&
	test_cmp expect actual &&
	test_atexit "\"$SLURM_LOCAL\" down \"$SL\"" &&
	"$SLURM_LOCAL" up "$SL" -T topology.conf >up.out &&
	test_grep "TopologyPlugin=topology/tree" "$SL/slurm.conf" &&
	(. "$SL/env" && timeout 10 scontrol show topology) >topo.out &&
	test_grep "^SwitchName=l1 Level=0 .*Nodes=$HOST" topo.out &&
	test_grep "^SwitchName=s1 Level=1 .*Switches=l1" topo.out &&
	(. "$SL/env" && timeout 30 srun -n1 hostname) >srun.out &&
	test_grep -x "$HOST" srun.out &&
	"$SLURM_LOCAL" down "$SL" >/dev/null
'

test_done
