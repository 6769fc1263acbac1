#!/usr/bin/env bash
test_description='fabscope run through the real launchers: ssh into sshd instances inside the
host namespaces of the leaf-spine fabric (ci/sshd-netns --in), Open MPI'"'"'s mpirun, and srun of a
single-node Slurm cluster started by the test (ci/slurm-local); each plan finishes with every job
measured'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

# one single-node Slurm cluster per host (its node name is the host's name)
test_holds slurm

FABRIC=$SRCDIR/ci/netns-fabric
SSHD=$SRCDIR/ci/sshd-netns
SLURM=$SRCDIR/ci/slurm-local
PFX=fs$$l

test_lazy_prereq SSHD 'test -x /usr/sbin/sshd && command -v ssh'
test_lazy_prereq MPIRUN 'command -v mpirun'
test_lazy_prereq SLURM 'command -v srun && command -v slurmctld && command -v slurmd && command -v munged'
test_require_in_ci ROOT NETNS FABSCOPE JQ SSHD MPIRUN SLURM

cat >plan.ini <<\EOF
[global]
duration = 1
timeout = 5

[pw]
kind = pairwise
test = bw
size = 64K

[ping]
kind = ping
EOF

test_expect_success ROOT,NETNS,SSHD,FABSCOPE,JQ 'ssh: agents over ssh inside the fabric hosts, tests over the rails' '
	test_atexit "\"$FABRIC\" down -p $PFX" &&
	test_atexit "\"$SSHD\" down -p ${PFX}s -d \"$TRASH_DIRECTORY/sshd\"" &&
	"$FABRIC" up -p $PFX -r 500mbit &&
	"$SSHD" up -p ${PFX}s -d "$TRASH_DIRECTORY/sshd" --in $PFX-h1,$PFX-h2,$PFX-h3,$PFX-h4 &&
	cfg=$("$SSHD" config -p ${PFX}s -d "$TRASH_DIRECTORY/sshd") &&
	"$FABRIC" hostfile -p $PFX | sed "s/ netns=\([^ ]*\)/ ssh=\1/" >hosts &&
	test $(grep -c " ssh=$PFX-h[1-4] " hosts) = 4 &&
	{ timeout 120 "$FABSCOPE" run plan.ini --hostfile hosts --launcher ssh --ssh "ssh -F $cfg" \
		-o ssh-run >out 2>err || { cat out err >&2; false; }; } &&
	jsonl_ok ssh-run/results.jsonl &&
	# 3 rounds x 2 pairs x 2 rails, all measured over the fabric addresses
	test $(jsonl_count ssh-run/results.jsonl ".scope == \"aggregate\" and .test == \"bw\" and .status == \"ok\"
		and (.src.ip | test(\"^10\\\\.10[01]\\\\.\")) and (.retest_for | not)") = 12 &&
	test $(jsonl_count ssh-run/results.jsonl ".test == \"ping\" and .status == \"ok\"") = 4 &&
	jq -e "[.nodes[].name] | sort == [\"h1\", \"h2\", \"h3\", \"h4\"]" ssh-run/run.json >/dev/null
'

test_expect_success ROOT,NETNS,SSHD,FABSCOPE 'ssh: an unreachable node is missing, the others run (exit 4)' '
	cfg=$("$SSHD" config -p ${PFX}s -d "$TRASH_DIRECTORY/sshd") &&
	sed "s/^h4 ssh=[^ ]*/h4 ssh=nosuchhost.invalid/" hosts >hosts4 &&
	test_expect_exit 4 timeout 120 "$FABSCOPE" run plan.ini --hostfile hosts4 --launcher ssh \
		--ssh "ssh -F $cfg" -o ssh-bad >out 2>err &&
	grep -q "agent h4 is missing" err &&
	jq -e "(.nodes[] | select(.name == \"h4\") | .status) == \"missing\"" ssh-bad/run.json >/dev/null &&
	test $(jsonl_count ssh-bad/results.jsonl ".scope == \"aggregate\" and .test == \"bw\" and .status == \"ok\" and (.retest_for | not)") = 6
'

test_expect_success MPIRUN,FABSCOPE,JQ 'mpi: mpirun starts the agents, they connect back' '
	{ timeout 120 "$FABSCOPE" run plan.ini --launcher mpi -n 3 --listen 127.0.0.1 \
		--launcher-args "--oversubscribe $( [ "$(id -u)" = 0 ] && echo --allow-run-as-root)" \
		-o mpi-run >out 2>err || { cat out err >&2; false; }; } &&
	jsonl_ok mpi-run/results.jsonl &&
	# 3 nodes: 3 rounds of one pair
	test $(jsonl_count mpi-run/results.jsonl ".scope == \"aggregate\" and .test == \"bw\" and .status == \"ok\" and (.retest_for | not)") = 3 &&
	jq -e "[.nodes[].name] | sort == [\"$(hostname):0\", \"$(hostname):1\", \"$(hostname):2\"]" mpi-run/run.json >/dev/null
'

# mpirun that exits at once (an option it does not know): the run says so and stops then, not
# after --join-timeout (300 s here, past the timeout of 60 the command runs under)
test_expect_success MPIRUN,FABSCOPE,JQ 'mpi: a launcher that exits before any agent joined: exit 3, one line, at once' '
	test_expect_exit 3 timeout 60 "$FABSCOPE" run plan.ini --launcher mpi -n 3 --listen 127.0.0.1 \
		--launcher-args "--fabscope-no-such-option" --join-timeout 300 -o mpi-bad >out 2>err &&
	test_grep "^fabscope run: no agent joined: mpirun exited with status [0-9]* before any did" err &&
	test $(grep -c "^fabscope run: " err) = 1 &&
	jq -e ".status == \"failed\"" mpi-bad/run.json >/dev/null
'

test_expect_success ROOT,SLURM,FABSCOPE,JQ 'slurm: srun on a single-node cluster starts the agents' '
	test_atexit "\"$SLURM\" down \"$TRASH_DIRECTORY/slurm\"" &&
	"$SLURM" up "$TRASH_DIRECTORY/slurm" &&
	{
		(
			. "$TRASH_DIRECTORY/slurm/env" &&
			timeout 120 "$FABSCOPE" run plan.ini --launcher slurm -n 4 --listen 127.0.0.1 \
				--launcher-args "--overcommit" -o slurm-run >out 2>err
		) || { cat out err >&2; false; }
	} &&
	jsonl_ok slurm-run/results.jsonl &&
	test $(jsonl_count slurm-run/results.jsonl ".scope == \"aggregate\" and .test == \"bw\" and .status == \"ok\" and (.retest_for | not)") = 6 &&
	jq -e "[.nodes[].name] | sort == [\"$(hostname):0\", \"$(hostname):1\", \"$(hostname):2\", \"$(hostname):3\"]" \
		slurm-run/run.json >/dev/null
'

test_done
