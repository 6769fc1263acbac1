#!/usr/bin/env bash
test_description='the nightly job of examples/ as users run it: the systemd service and timer pass
systemd-analyze verify (installed in a root of their own), the cron line runs the installed
script in cron'"'"'s bare environment, two nights on the leaf-spine fabric of namespaces (run,
history add, report --history, push, history diff) leave one Pushgateway group per plan and lane
holding the second night, the Slurm batch script runs a night on the single-node Slurm bed, a
second night while one runs is refused, the settings file is data.  The tests marked "(history)"
need `fabscope history` (issue 43 items 1-3) and fail until it exists'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

# one single-node Slurm cluster per host (its node name is the host's name)
test_holds slurm

EX=$SRCDIR/examples
FABRIC=$SRCDIR/ci/netns-fabric
SLURM=$SRCDIR/ci/slurm-local
PFX=fs$$n
PORT_PGW=$(ptp_port 0)
PGW=http://127.0.0.1:$PORT_PGW
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

test_lazy_prereq SYSTEMD_ANALYZE 'command -v systemd-analyze && test -d /usr/lib/systemd/system'
test_lazy_prereq PUSHGATEWAY 'command -v prometheus-pushgateway'
test_lazy_prereq PERL_HTTP 'perl -MHTTP::Tiny -e 1'
test_lazy_prereq FLOCK 'command -v flock'
test_lazy_prereq SHELLCHECK 'command -v shellcheck'
test_lazy_prereq SLURM 'command -v sbatch && command -v srun && command -v slurmctld && command -v slurmd && command -v munged'
test_require_in_ci ROOT NETNS FABSCOPE JQ SYSTEMD_ANALYZE PUSHGATEWAY PERL_HTTP FLOCK SLURM SHELLCHECK
P=ROOT,NETNS,FABSCOPE,JQ,PUSHGATEWAY,PERL_HTTP,FLOCK

# groups JOB: the gateway's groups of job JOB, a line each: "plan rail plane run_id" (- for none)
groups() {
	test_http_get "$PGW/api/v1/metrics" |
	jq -r --arg j "$1" '.data[] | select(.labels.job == $j) |
		"\(.labels.plan // "-") \(.labels.rail // "-") \(.labels.plane // "-") \(.fabscope_run_info.metrics[0].labels.run_id)"' |
	sort
}

# job_ended ID: Slurm job ID of the bed in $SL has ended (its record says how)
job_ended() {
	(. "$SL/env" && scontrol show job "$1") | grep -q "JobState=\(COMPLETED\|FAILED\|CANCELLED\|TIMEOUT\|NODE_FAIL\|OUT_OF_MEMORY\) "
}

# nightly_env: the settings every night of this file shares (the rest from settings.conf)
nightly_env() {
	FABSCOPE_NIGHTLY_CONFIG=$TRASH_DIRECTORY/settings.conf FABSCOPE_BIN=$FABSCOPE "$@"
}

test_expect_success SHELLCHECK 'the scripts pass shellcheck' '
	shellcheck "$EX/fabscope-nightly" "$EX/fabscope-nightly.sbatch"
'

test_expect_success SYSTEMD_ANALYZE 'the service and the timer pass systemd-analyze verify, installed as their heads say' '
	# a root of their own: systemd'"'"'s units, the script at the path of ExecStart, the units in /etc
	mkdir -p root/usr/lib/systemd root/usr/local/sbin root/etc/systemd/system &&
	cp -R /usr/lib/systemd/system root/usr/lib/systemd/ &&
	install -m 0755 "$EX/fabscope-nightly" root/usr/local/sbin/fabscope-nightly &&
	install -m 0644 "$EX/fabscope-nightly.service" "$EX/fabscope-nightly.timer" root/etc/systemd/system/ &&
	systemd-analyze verify --man=no --root="$TRASH_DIRECTORY/root" \
		root/etc/systemd/system/fabscope-nightly.service root/etc/systemd/system/fabscope-nightly.timer \
		>out 2>err &&
	test_must_be_empty err &&
	# it does check: an unknown key is said, a missing script fails
	sed "s/^Type=oneshot$/&\nTypo=1/" "$EX/fabscope-nightly.service" >root/etc/systemd/system/fabscope-nightly.service &&
	systemd-analyze verify --man=no --root="$TRASH_DIRECTORY/root" \
		root/etc/systemd/system/fabscope-nightly.service 2>err &&
	test_grep "Unknown key .Typo." err &&
	install -m 0644 "$EX/fabscope-nightly.service" root/etc/systemd/system/ &&
	rm root/usr/local/sbin/fabscope-nightly &&
	test_must_fail systemd-analyze verify --man=no --root="$TRASH_DIRECTORY/root" \
		root/etc/systemd/system/fabscope-nightly.service 2>err &&
	test_grep "/usr/local/sbin/fabscope-nightly is not executable" err &&
	# the timer says when, and the pages the units name are in the tree
	systemd-analyze calendar "$(sed -n "s/^OnCalendar=//p" "$EX/fabscope-nightly.timer")" >cal &&
	test_grep "Normalized form: \*-\*-\* 02:30:00" cal &&
	sed -n "s/^Documentation=//p" "$EX/fabscope-nightly.service" "$EX/fabscope-nightly.timer" | tr " " "\n" |
		sed -n "s/^man:\(.*\)(\([1-8]\))$/\1.\2/p" | sort -u >pages &&
	test_line_count = 3 pages &&
	while read -r p; do test_path_is_file "$SRCDIR/man/$p" || return 1; done <pages
'

test_expect_success $P 'set up: a 4-host, 2-rail fabric at 200 Mbit/s, a Pushgateway, the plan and the settings' '
	test_atexit "\"$FABRIC\" down -p $PFX" &&
	"$FABRIC" up -p $PFX -r 200mbit &&
	"$FABRIC" hostfile -p $PFX >hosts &&
	ptp_spawn pgw.log prometheus-pushgateway --web.listen-address=127.0.0.1:$PORT_PGW \
		--persistence.file= --log.level=warn &&
	test_wait_for 10 test_http_get $PGW/-/ready >/dev/null &&
	mkdir etc &&
	cat >etc/nightly.ini <<-EOF &&
	[global]
	hostfile = $TRASH_DIRECTORY/hosts
	duration = 0.5
	timeout = 5

	[pw]
	kind = pairwise
	test = bw
	size = 64K
	EOF
	cat >settings.conf <<-EOF
	# the settings of fabscope-nightly, as /etc/default/fabscope-nightly holds them
	FABSCOPE_PLAN=$TRASH_DIRECTORY/etc/nightly.ini
	FABSCOPE_RESULTS="$TRASH_DIRECTORY/nights"
	FABSCOPE_PUSH=$PGW
	FABSCOPE_PUSH_JOB=fabscope-nightly
	FABSCOPE_PUSH_NODES=4
	EOF
'

test_expect_success $P 'night 1: the cron line, run as cron runs it (its own SHELL and PATH, nothing else)' '
	line=$(grep -v -e "^#" -e "^[A-Z]*=" -e "^$" "$EX/fabscope-nightly.cron") &&
	read -r min hour dom mon dow user cmd <<<"$line" &&
	test "$min $hour $dom $mon $dow $user" = "30 2 * * * root" &&
	test "$cmd" = "$(sed -n "s/^ExecStart=//p" "$EX/fabscope-nightly.service")" &&
	mkdir -p usr/local/sbin &&
	install -m 0755 "$EX/fabscope-nightly" "usr/local/sbin/fabscope-nightly" &&
	# what cron gives the command: the file'"'"'s variables, HOME, LOGNAME; the script where cmd says
	{
		env -i HOME=/root LOGNAME=root $(grep "^[A-Z]*=" "$EX/fabscope-nightly.cron") \
			FABSCOPE_NIGHTLY_CONFIG="$TRASH_DIRECTORY/settings.conf" FABSCOPE_BIN="$FABSCOPE" \
			/bin/sh -c "$TRASH_DIRECTORY$cmd" >night1.out 2>night1.err
		echo $? >night1.rc
	} &&
	ls nights | grep -x "[0-9-]*T[0-9]*Z" >dirs &&
	test_line_count = 1 dirs &&
	n1=nights/$(cat dirs) &&
	jsonl_ok $n1/results.jsonl &&
	test $(jsonl_count $n1/results.jsonl ".scope == \"aggregate\" and .status == \"ok\" and (.retest_for | not)") = 12 &&
	test_path_is_file $n1/report/report.md &&
	test_grep "^pushed: $PGW (job fabscope-nightly: 1 plan group, 2 lane groups)$" night1.out
'

test_expect_success $P 'night 2: the script as the service starts it; the gateway holds one group per plan and lane, all of night 2' '
	sleep 1 &&	# (a night is named by its second)
	{ nightly_env "$EX/fabscope-nightly" >night2.out 2>night2.err; echo $? >night2.rc; } &&
	ls nights | grep -x "[0-9-]*T[0-9]*Z" >dirs &&
	test_line_count = 2 dirs &&
	n2=nights/$(tail -n 1 dirs) &&
	id2=$(jq -r .id $n2/run.json) &&
	groups fabscope-nightly >actual &&
	printf "nightly - - %s\nnightly 0 0 %s\nnightly 1 0 %s\n" "$id2" "$id2" "$id2" >expect &&
	test_cmp expect actual &&
	# per node: the 4 nodes of each lane, the same series every night
	test_http_get "$PGW/api/v1/metrics" >api.json &&
	test $(jq "[.data[] | .fabscope_node_bandwidth_bytes_per_second.metrics[]?] | length" api.json) = 8
'

test_expect_success $P '(history) two good nights: both judged, exit 0, the report has the history section' '
	test "$(cat night1.rc) $(cat night2.rc)" = "0 0" &&
	# the job said nothing of its own (a step that failed would have)
	test_grep ! "^fabscope-nightly:" night1.err &&
	test_grep ! "^fabscope-nightly:" night2.err &&
	test_grep "Since last night" $n2/report/report.md &&
	"$FABSCOPE" history diff --db nights/fabscope.db --last 14
'

test_expect_success $P 'night 3: h3'"'"'s rail-1 link at a tenth; its suspect, confirmed by the re-test, is pushed' '
	"$FABRIC" degrade -p $PFX h3:rail1 20mbit &&
	sleep 1 &&
	{ nightly_env "$EX/fabscope-nightly" >night3.out 2>night3.err; echo $? >night3.rc; } &&
	ls nights | grep -x "[0-9-]*T[0-9]*Z" >dirs &&
	test_line_count = 3 dirs &&
	n3=nights/$(tail -n 1 dirs) &&
	jq -e "[.suspects[] | select(.retest.status == \"confirmed\") | [.kind, .node, .rail]] == [[\"node\", \"h3\", 1]]" \
		$n3/run.json >/dev/null &&
	test_http_get "$PGW/api/v1/metrics" >api3.json &&
	jq -e --arg id "$(jq -r .id $n3/run.json)" "[.data[] | select(.labels.job == \"fabscope-nightly\" and .labels.rail == \"1\") |
		(.fabscope_run_info.metrics[0].labels.run_id == \$id),
		(.fabscope_suspect.metrics[] | .labels | [.node, .kind, .status]),
		(.fabscope_lane_suspects.metrics[] | [.labels.status, .value])] ==
		[true, [\"h3\", \"node\", \"confirmed\"], [\"confirmed\", \"1\"]]" api3.json >/dev/null
'

test_expect_success $P '(history) night 3 fails the job: exit 1, a confirmed new suspect, named in the report' '
	test "$(cat night3.rc)" = 1 &&
	test_grep "^fabscope-nightly: a confirmed regression or new suspect tonight" night3.err &&
	test_grep "h3" $n3/report/report.md &&
	test_expect_exit 1 "$FABSCOPE" history diff --db nights/fabscope.db --last 14
'

test_expect_success FLOCK 'a second night while one runs is refused: exit 3, one line, nothing measured' '
	mkdir -p locked &&
	# the lock held by a process of ours (the sleep holds the descriptor flock locked)
	{ (exec 9>>locked/.fabscope-nightly.lock && flock 9 && exec sleep 30) & } && lockpid=$! &&
	test_wait_for 5 sh -c "! flock -n locked/.fabscope-nightly.lock true" &&
	test_expect_exit 3 env FABSCOPE_NIGHTLY_CONFIG=/dev/null FABSCOPE_RESULTS="$TRASH_DIRECTORY/locked" \
		FABSCOPE_BIN="$FABSCOPE" "$EX/fabscope-nightly" 2>err &&
	test_kill_pid $lockpid &&
	test_line_count = 1 err &&
	test_grep "another night is running" err &&
	test "$(ls locked)" = ""
'

test_expect_success FABSCOPE 'the settings file is data: a command in a value is not run; a bad line is exit 2' '
	cat >evil.conf <<-EOF &&
	FABSCOPE_PLAN=\$(touch $TRASH_DIRECTORY/pwned)/x.ini
	FABSCOPE_RESULTS=$TRASH_DIRECTORY/evil
	EOF
	test_expect_exit 2 env FABSCOPE_NIGHTLY_CONFIG=evil.conf FABSCOPE_BIN="$FABSCOPE" "$EX/fabscope-nightly" 2>err &&
	! test -e pwned &&
	test_grep "\$(touch" err &&
	printf "FABSCOPE_PLAN=x\nrm -rf /tmp/nothing\n" >bad.conf &&
	test_expect_exit 2 env FABSCOPE_NIGHTLY_CONFIG=bad.conf FABSCOPE_BIN="$FABSCOPE" "$EX/fabscope-nightly" 2>err &&
	test_line_count = 1 err &&
	test_grep "bad.conf: .rm -rf /tmp/nothing. is no NAME=VALUE line" err &&
	printf "FABSCOPE_PUHS=http://x\n" >typo.conf &&
	test_expect_exit 2 env FABSCOPE_NIGHTLY_CONFIG=typo.conf FABSCOPE_BIN="$FABSCOPE" "$EX/fabscope-nightly" 2>err &&
	test_line_count = 1 err &&
	test_grep "typo.conf: FABSCOPE_PUHS is no setting of fabscope-nightly" err
'

test_expect_success ROOT,SLURM,FABSCOPE,JQ,FLOCK 'the Slurm batch script runs a night on the single-node Slurm bed' '
	SL=$TRASH_DIRECTORY/sl &&
	{ ((${#SL} <= 70)) || SL=/tmp/fs$$sl; } &&
	test_atexit "\"$SLURM\" down \"$SL\"" &&
	"$SLURM" up "$SL" &&
	cat >slurm.ini <<-EOF &&
	[global]
	duration = 1
	timeout = 5

	[pw]
	kind = pairwise
	test = bw
	size = 64K
	EOF
	# sbatch'"'"'s options over the script'"'"'s #SBATCH defaults: one node, 4 tasks on it; the
	# options after the script go to fabscope run (no re-tests: loopback on a busy host is noisy)
	jobid=$(
		. "$SL/env" &&
		export FABSCOPE_NIGHTLY="$EX/fabscope-nightly" FABSCOPE_BIN="$FABSCOPE" \
			FABSCOPE_NIGHTLY_CONFIG=/dev/null FABSCOPE_PLAN="$TRASH_DIRECTORY/slurm.ini" \
			FABSCOPE_RESULTS="$TRASH_DIRECTORY/slurm-nights" &&
		sbatch --parsable --nodes=1 --ntasks=4 --ntasks-per-node=4 --overcommit \
			--output="$TRASH_DIRECTORY/slurm-%j.out" "$EX/fabscope-nightly.sbatch" \
			--listen 127.0.0.1 --launcher-args --overcommit --no-retest
	) &&
	# (sbatch --wait polls ever more slowly: half a minute after a 10 s job)
	test_wait_for 180 job_ended $jobid &&
	(. "$SL/env" && scontrol show job $jobid) >job &&
	sed -n "s/.* ExitCode=\([0-9]*\):.*/\1/p" job >slurm.rc &&
	cat slurm-*.out >slurm.log &&
	ls slurm-nights | grep -x "[0-9-]*T[0-9]*Z" >dirs &&
	test_line_count = 1 dirs &&
	s1=slurm-nights/$(cat dirs) &&
	jq -e ".options.launcher == \"slurm\" and (.nodes | length) == 4 and all(.nodes[]; .status == \"ok\")" \
		$s1/run.json >/dev/null &&
	test $(jsonl_count $s1/results.jsonl ".scope == \"aggregate\" and .status == \"ok\" and (.retest_for | not)") = 6 &&
	test_path_is_file $s1/report/report.md &&
	# outside a job the batch script refuses, saying why
	test_expect_exit 2 env -u SLURM_JOB_ID "$EX/fabscope-nightly.sbatch" 2>err &&
	test_grep "not inside a Slurm job" err
'

test_expect_success ROOT,SLURM,FABSCOPE '(history) the Slurm night was judged: the job exited 0' '
	test "$(cat slurm.rc)" = 0 &&
	test_grep ! "^fabscope-nightly:" slurm.log
'

test_done
