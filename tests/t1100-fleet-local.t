#!/usr/bin/env bash
test_description='fabscope run and fabscope agent on loopback: plans, the local and external
launchers, the results directory, authentication (wrong token, wrong version), an agent
killed or hung mid-phase (missing, exit 4), the coordinator killed mid-phase (valid JSONL,
then --resume finishes the run), and bad plans (exit 2, one line naming file and line)'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_require_in_ci FABSCOPE JQ TEST_HOOKS
P=FABSCOPE,JQ
PORT=$(ptp_port 0)
PORT2=$(ptp_port 1)
PORT3=$(ptp_port 2)
PORT4=$(ptp_port 3)

test_expect_success $P 'a 4-node plan on the local launcher: every job measured, exit 0' '
	cat >plan.ini <<-\EOF &&
	# pairwise bw and lat, then a control-channel ping
	[global]
	duration = 0.5
	timeout = 3
	label = fabric=loopback
	label = site=lab,row=3

	[pw]
	kind = pairwise
	test = bw,lat
	size = 16K

	[ring]
	kind = ring
	flows = 2

	[ping]
	kind = ping
	EOF
	fs_expect 0 run plan.ini -n 4 -o r1 --label lb=none &&
	jsonl_ok r1/results.jsonl &&
	# pairwise: 3 rounds x 2 pairs, per test; ring: 4 jobs; ping: 4 (and the re-tests of each
	# suspect this busy host made, if any)
	test $(jsonl_count r1/results.jsonl ".phase == \"pw\" and .test == \"bw\" and .scope == \"aggregate\" and (.retest_for | not)") = 6 &&
	test $(jsonl_count r1/results.jsonl ".phase == \"pw\" and .test == \"lat\" and (.retest_for | not)") = 6 &&
	test $(jsonl_count r1/results.jsonl ".retest_for and (.retest_role | not)") = 0 &&
	test $(jsonl_count r1/results.jsonl ".phase == \"ring\" and .scope == \"aggregate\" and .flows == 2 and (.retest_for | not)") = 4 &&
	test $(jsonl_count r1/results.jsonl ".phase == \"ping\" and .metrics.rtt_us > 0") = 4 &&
	test $(jsonl_count r1/results.jsonl ".status != \"ok\" and (.retest_for | not)") = 0 &&
	test $(jsonl_count r1/results.jsonl ".labels.lb == \"none\" and .labels.fabric == \"loopback\"") = $(wc -l <r1/results.jsonl) &&
	# label lines repeat, and one line of K1=V1,K2=V2 is two labels
	test $(jsonl_count r1/results.jsonl ".labels.site == \"lab\" and .labels.row == \"3\"") = $(wc -l <r1/results.jsonl) &&
	jq -e ".labels == {\"fabric\": \"loopback\", \"site\": \"lab\", \"row\": \"3\", \"lb\": \"none\"}" r1/run.json >/dev/null &&
	jq -e ".status == \"finished\" and (.nodes | length) == 4 and all(.nodes[]; .status == \"ok\")
	       and .plan.text != null and (.phases | length) == 3" r1/run.json >/dev/null &&
	# the planned jobs, per phase, are those jobs.done lists (the re-tests are extra)
	jq -e "[.planned[] | [.name, .kind, .jobs, .skipped]] ==
	       [[\"pw\", \"pairwise\", 12, false], [\"ring\", \"ring\", 4, false], [\"ping\", \"ping\", 4, false]]" r1/run.json >/dev/null &&
	test "$(grep -vc "/retest" r1/jobs.done)" = 20 &&
	# every pair of the tournament once, and no node twice in a round
	jq -r "select(.phase == \"pw\" and .test == \"bw\" and .scope == \"aggregate\" and (.retest_for | not)) |
	       [.src.node, .dst.node] | sort | join(\"-\")" r1/results.jsonl | sort | uniq -d >dups &&
	test_must_be_empty dups &&
	jq -r "select(.phase == \"pw\" and .test == \"bw\" and .scope == \"aggregate\" and (.retest_for | not)) |
	       \"\(.round) \(.src.node)\n\(.round) \(.dst.node)\"" r1/results.jsonl | sort | uniq -d >twice &&
	test_must_be_empty twice &&
	grep -q "^suspect" out &&
	grep -q "^pw  *bw  *rail 0  *6 " out
'

test_expect_success $P 'a results directory that is not empty is refused (exit 2), nothing touched' '
	cp r1/results.jsonl before &&
	fs_expect 2 run plan.ini -n 2 -o r1 &&
	ptp_one_error err "r1" "not empty" "--resume" &&
	test_cmp before r1/results.jsonl
'

test_expect_success $P 'bad plans: one line naming the file, the line and the key; exit 2' '
	printf "[global]\nduration = 1\n[a]\nkind = pairwise\nsizee = 1M\n" >bad1.ini &&
	fs_expect 2 run bad1.ini -n 2 -o x1 &&
	ptp_one_error err "bad1.ini:5" "sizee" &&
	printf "[a]\nkind = fullmesh\n" >bad2.ini &&
	fs_expect 2 run bad2.ini -n 2 -o x2 &&
	ptp_one_error err "bad2.ini:1" "fullmesh" &&
	printf "[a]\nkind = pairwise\nsize = 12x\n" >bad3.ini &&
	fs_expect 2 run bad3.ini -n 2 -o x3 &&
	ptp_one_error err "bad3.ini:3:" "[a]" "12x" &&
	printf "[a]\nkind = pairwise\n[global]\nduration = 1\n" >bad4.ini &&
	fs_expect 2 run bad4.ini -n 2 -o x4 &&
	ptp_one_error err "bad4.ini:3" "[global]" &&
	printf "duration = 1\n" >bad5.ini &&
	fs_expect 2 run bad5.ini -n 2 -o x5 &&
	ptp_one_error err "bad5.ini:1" "section" &&
	fs_expect 2 run plan.ini -o x6 &&
	ptp_one_error err "-n N" "hostfile" &&
	fs_expect 2 run nosuch.ini -n 2 -o x7 &&
	ptp_one_error err "nosuch.ini" &&
	printf "h1 rail0=127.0.0.1\nh1 rail0=127.0.0.1\n" >dup.hosts &&
	fs_expect 2 run plan.ini --hostfile dup.hosts -o x8 &&
	ptp_one_error err "dup.hosts" "h1" "twice" &&
	printf "[global]\nduration = 1\nduration = 2\n[a]\nkind = pairwise\n" >twice1.ini &&
	fs_expect 2 run twice1.ini -n 2 -o x11 &&
	ptp_one_error err "twice1.ini:3" "duration" "given already in this section, at line 2" &&
	printf "[a]\nkind = pairwise\nsize = 4K\nsize = 8K\n" >twice2.ini &&
	fs_expect 2 run twice2.ini -n 2 -o x12 &&
	ptp_one_error err "twice2.ini:4" "size" "at line 3" &&
	# a phase may still override [global]
	printf "[global]\nduration = 1\n[a]\nkind = pairwise\nduration = 2\n" >over.ini &&
	fs_expect 0 run --dry-run over.ini -n 2 &&
	: >afile && fs_expect 2 run plan.ini -n 2 -o afile &&
	ptp_one_error err "results directory '\''afile'\'' is a file" &&
	fs_expect 2 run . -n 2 -o x9 &&
	ptp_one_error err "cannot read plan '\''.'\''" "it is a directory" &&
	fs_expect 2 run plan.ini --hostfile . -o x10 &&
	ptp_one_error err "cannot read hostfile '\''.'\''" "it is a directory" &&
	! test -e x1 && ! test -e x3 && ! test -e x8 && ! test -e x9 && ! test -e x10 && ! test -e x11 &&
	# rails no node has: said, not a silent phase of nothing
	printf "h1 rail0=127.0.0.1\nh2 rail0=127.0.0.1\n" >two.hosts &&
	printf "[a]\nkind = pairwise\nrails = 0,5\n" >rail5.ini &&
	fs_expect 0 run --dry-run rail5.ini --hostfile two.hosts &&
	test_grep "warning: rail5.ini: \[a\] rails: no node has rail 5: it is not tested" err
'

# there, but not this user's to read: the environment (3), not a bad argument
[ "$(id -u)" = 0 ] && test_require_in_ci SETPRIV
test_expect_success $P,SETPRIV 'a plan or hostfile that cannot be read: one line, exit 3' '
	cp plan.ini locked.ini && chmod 600 locked.ini &&
	test_expect_exit 3 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$FABSCOPE" run --dry-run locked.ini -n 2 2>err &&
	ptp_one_error err "cannot read plan '\''locked.ini'\''" "Permission denied" &&
	printf "h1 rail0=127.0.0.1\nh2 rail0=127.0.0.1\n" >locked.hosts && chmod 600 locked.hosts &&
	test_expect_exit 3 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$FABSCOPE" run --dry-run plan.ini --hostfile locked.hosts 2>err &&
	ptp_one_error err "cannot read hostfile '\''locked.hosts'\''" "Permission denied"
'

test_expect_success $P '--dry-run prints the schedule of every phase' '
	fs_expect 0 run --dry-run plan.ini -n 6 &&
	grep -q "^\[1\] pw: pairwise bw,lat, 10 rounds (5 of each test, bw then lat) on 1 lane, 15 jobs per test" out &&
	grep -q "^\[2\] ring: ring bw, 1 round on 1 lane, 6 jobs" out &&
	fs_expect 0 run --dry-run plan.ini -n 7 &&
	grep -q "^\[1\] pw: pairwise bw,lat, 14 rounds (7 of each test, bw then lat) on 1 lane, 21 jobs per test" out
'

test_expect_success $P '--dry-run refuses what the run would: bad values, labels, targets' '
	fs_expect 2 run --dry-run bad3.ini -n 2 &&
	ptp_one_error err "bad3.ini:3: size" "12x" "of [a]" "give a size" &&
	# the line the value was written on, also in [global] (a phase inherits it)
	printf "[global]\nduration = 0\n[a]\nkind = pairwise\nsize = 4K\n" >badg.ini &&
	fs_expect 2 run --dry-run badg.ini -n 2 &&
	ptp_one_error err "badg.ini:2: duration" "of [a]" "give a number of seconds" &&
	! grep -q -e "--duration" err &&
	printf "[a]\nkind = pairwise\n\npoll = spin\n" >badpoll.ini &&
	fs_expect 2 run --dry-run badpoll.ini -n 2 &&
	ptp_one_error err "badpoll.ini:4: poll" "spin" "of [a]" "use busy, event or adaptive" &&
	fs_expect 2 run --dry-run plan.ini -n 2 --label nokv &&
	ptp_one_error err "--label" "nokv" &&
	fs_expect 2 run --dry-run plan.ini -n 2 --label lb=ecmp,spray &&
	ptp_one_error err "--label" "lb=ecmp,spray" "a comma separates labels" &&
	# a label key on two lines of the plan: the later line, and the earlier one named
	printf "[global]\nlabel = a=1,b=2\nlabel = b=3\n[a]\nkind = ring\n" >dupl.ini &&
	fs_expect 2 run --dry-run dupl.ini -n 2 &&
	ptp_one_error err "dupl.ini:3: label '\''b'\'' is given already at line 2" &&
	# off is false: no sweep to clash with the size
	printf "[global]\nall = off\n[a]\nkind = pairwise\nsize = 4K\n" >off.ini &&
	fs_expect 0 run --dry-run off.ini -n 2 &&
	# a sweep and a size in one section: the plan keys and the line, not -a and -s
	printf "[global]\nduration = 1\n[a]\nkind = pairwise\nall = yes\nsize = 4K\n" >on.ini &&
	fs_expect 2 run --dry-run on.ini -n 2 &&
	ptp_one_error err "on.ini:6: size and all (line 5) of [a] exclude each other" &&
	! grep -q -e "-a and -s" err &&
	# a target: the local launcher names its agents node0.., agents elsewhere name themselves
	printf "[t]\nkind = incast\ntarget = gpu-7\n" >tgt.ini &&
	fs_expect 2 run --dry-run tgt.ini -n 4 &&
	ptp_one_error err "target" "gpu-7" "node0" &&
	fs_expect 0 run --dry-run tgt.ini -n 4 --launcher external &&
	# a collective over tcp with a verbs-only key: refused as its ranks would
	printf "[c]\nkind = allreduce\nmtu = 1024\n" >cmtu.ini &&
	fs_expect 2 run --dry-run cmtu.ini -n 2 &&
	ptp_one_error err "cmtu.ini" "[c]" "mtu" "transport = verbs"
'

test_expect_success $P 'agent --rail is checked before it connects: rail, plane, address' '
	for r in 64=127.0.0.1 0/8=127.0.0.1 -1=127.0.0.1 0=foo 1=10.0.0.1/24 x=127.0.0.1 0= \
		 4294967295=127.0.0.1 0/4294967295=127.0.0.1; do
		fs_expect 2 agent --connect 127.0.0.1:1 --rail "$r" &&
		ptp_one_error err "--rail" "$r" || return 1
	done &&
	# a descriptor that was not inherited is a wrong argument, not a coordinator gone
	FABSCOPE_TOKEN=t fs_expect 2 agent --fd 99 &&
	ptp_one_error err "--fd 99" "no such open file descriptor"
'

test_expect_success $P 'external launcher: agents started by hand join with the token' '
	echo "s3cret-token" >token && chmod 600 token &&
	fleet_run_bg run.log plan.ini --launcher external -n 2 --listen 127.0.0.1:$PORT \
		--token-file token -o r2 --join-timeout 20 &&
	ptp_wait_listen $PORT $fleet_pid &&
	fleet_agent_bg a1.log --connect 127.0.0.1:$PORT --token-file token --name ext-a \
		--rail 0=127.0.0.1 --rail 1=127.0.0.1 &&
	a1=$agent_pid &&
	FABSCOPE_TOKEN=s3cret-token fleet_agent_bg a2.log --connect 127.0.0.1:$PORT --name ext-b \
		--rail 0=127.0.0.1 --rail 1=127.0.0.1 &&
	a2=$agent_pid &&
	fleet_wait $fleet_pid 60 && test $fleet_rc = 0 &&
	wait $a1 && wait $a2 &&
	jq -e "[.nodes[].name] | sort == [\"ext-a\", \"ext-b\"]" r2/run.json >/dev/null &&
	# the endpoints the agents reported: two rails, one pair each
	test $(jsonl_count r2/results.jsonl ".status == \"ok\" and .phase == \"pw\" and .test == \"bw\" and .scope == \"aggregate\" and (.retest_for | not)") = 2 &&
	test $(jsonl_count r2/results.jsonl ".phase == \"pw\" and .test == \"bw\" and .scope == \"aggregate\" and .src.rail == 1 and (.retest_for | not)") = 1
'

test_expect_success $P 'external launcher: a target names an agent that joins by name' '
	printf "[global]\nduration = 0.5\ntimeout = 3\n[in]\nkind = incast\ntest = bw\ntarget = ext-b\n" >tgt2.ini &&
	fleet_run_bg run4t.log tgt2.ini --launcher external -n 3 --listen 127.0.0.1:$PORT3 \
		--token-file token -o r4t --join-timeout 20 &&
	ptp_wait_listen $PORT3 $fleet_pid &&
	for n in ext-a ext-b ext-c; do
		fleet_agent_bg $n.log --connect 127.0.0.1:$PORT3 --token-file token --name $n \
			--rail 0=127.0.0.1 || return 1
	done &&
	fleet_wait $fleet_pid 60 && test $fleet_rc = 0 &&
	jq -s -e "[.[] | select(.status == \"ok\" and .test == \"bw\" and .scope == \"aggregate\" and (.retest_for | not))] |
		length == 2 and all(.dst.node == \"ext-b\")" r4t/results.jsonl >/dev/null
'

test_expect_success $P 'external launcher: a target that did not join skips its phase, not the run' '
	printf "[global]\nduration = 0.5\ntimeout = 3\n[in]\nkind = incast\ntest = bw\ntarget = ext-z\n[pw]\nkind = pairwise\ntest = bw\n" >tgt3.ini &&
	fleet_run_bg run5t.log tgt3.ini --launcher external -n 3 --listen 127.0.0.1:$PORT4 \
		--token-file token -o r5t --join-timeout 4 &&
	ptp_wait_listen $PORT4 $fleet_pid &&
	for n in ext-a ext-b; do
		fleet_agent_bg $n-5.log --connect 127.0.0.1:$PORT4 --token-file token --name $n \
			--rail 0=127.0.0.1 || return 1
	done &&
	fleet_wait $fleet_pid 60 && test $fleet_rc = 4 &&
	test_grep "\[in\]: its target .ext-z. is not one of the agents that joined (1 did not): the phase is skipped" run5t.log &&
	test_grep "warning: agent agent2 is missing: did not join within 4 s (--join-timeout)$" run5t.log &&
	test $(jsonl_count r5t/results.jsonl ".status == \"ok\" and .phase == \"pw\" and .scope == \"aggregate\" and (.retest_for | not)") = 1 &&
	test $(jsonl_count r5t/results.jsonl ".phase == \"in\"") = 0
'

test_expect_success $P,TEST_HOOKS 'an agent with the wrong token is refused, and says so; the run goes on' '
	fleet_run_bg run3.log plan.ini --launcher external -n 2 --listen 127.0.0.1:$PORT2 \
		--token-file token -o r3 --join-timeout 15 &&
	ptp_wait_listen $PORT2 $fleet_pid &&
	test_expect_exit 3 env FABSCOPE_TOKEN=wrong "$FABSCOPE" agent --connect 127.0.0.1:$PORT2 \
		--name intruder 2>bad.log &&
	ptp_one_error bad.log "refused" "intruder" "wrong token" &&
	test_wait_for 10 grep -q "refused agent .intruder.*wrong token" run3.log &&
	test_expect_exit 3 env FABSCOPE_TEST_PROTO_VERSION=99 "$FABSCOPE" agent \
		--connect 127.0.0.1:$PORT2 --token-file token --name future 2>v99.log &&
	wv=$(sed -n "s/^#define WIRE_VERSION \([0-9]*\).*/\1/p" "$SRCDIR/core/wire.h") &&
	ptp_one_error v99.log "protocol 99" "the coordinator $wv" &&
	test_wait_for 10 grep -q "future.*protocol 99" run3.log &&
	fleet_agent_bg g1.log --connect 127.0.0.1:$PORT2 --token-file token --name good-a &&
	g1=$agent_pid &&
	fleet_agent_bg g2.log --connect 127.0.0.1:$PORT2 --token-file token --name good-b &&
	g2=$agent_pid &&
	fleet_wait $fleet_pid 60 && test $fleet_rc = 0 &&
	wait $g1 && wait $g2 &&
	jq -e "[.nodes[].name] | sort == [\"good-a\", \"good-b\"]" r3/run.json >/dev/null
'

# when no agent joins there is nothing to run: one line why, before any phase, not a failed
# record for every job
test_expect_success $P 'no agent joins: one line, no phase run; a launcher that cannot run is exit 3' '
	printf "n1 rail0=10.0.0.1 netns=fabscope-nosuch1\nn2 rail0=10.0.0.2 netns=fabscope-nosuch2\n" >bad-hosts &&
	fs_expect 4 run plan.ini --hostfile bad-hosts -o rnj1 &&
	test_grep "no agent joined, nothing to run: n1 (of 2): its agent ended before joining" err &&
	# said once, not per node or job (a progress line of agents joined may come first)
	test $(grep -c "no agent joined" err) = 1 && ! grep -q "is missing\|failed" err &&
	test_must_be_empty rnj1/results.jsonl &&
	jq -e ".status == \"failed\" and ([.nodes[] | select(.status == \"missing\")] | length) == 2" rnj1/run.json >/dev/null &&
	fs_expect 3 run plan.ini --launcher ssh --ssh /nonexistent/ssh --hostfile bad-hosts -o rnj2 &&
	test_grep "^fabscope run: no agent joined: ssh could not be run (its message is above)$" err &&
	test_must_be_empty rnj2/results.jsonl
'

test_expect_success $P 'an agent killed mid-phase is missing; the run finishes with exit 4' '
	cat >long.ini <<-\EOF &&
	[global]
	duration = 1
	timeout = 2
	[pw]
	kind = pairwise
	EOF
	# held after round 1 (a test build'"'"'s hook): what follows happens between two rounds,
	# on a condition, however busy the machine (a run of 3 s may otherwise end first)
	FABSCOPE_TEST_ROUND_HOLD=$PWD/hold4 fleet_run_bg run4.log long.ini -n 4 -o r4 --agent-timeout 8 &&
	fleet_held hold4 run4.log &&
	victim=$(fleet_agents $fleet_pid | head -n 1) &&
	test -n "$victim" &&
	vname=$(tr "\0" " " </proc/$victim/cmdline | sed "s/.*--name \([^ ]*\).*/\1/") &&
	kill -9 $victim &&
	rm hold4 &&
	fleet_wait $fleet_pid 60 && test $fleet_rc = 4 &&
	jsonl_ok r4/results.jsonl &&
	jq -e --arg v "$vname" "(.nodes[] | select(.name == \$v) | .status) == \"missing\"" r4/run.json >/dev/null &&
	test $(jsonl_count r4/results.jsonl ".status == \"error\" and (.error | test(\"missing\"))") -ge 1 &&
	# the pairs without the victim were measured
	test $(jsonl_count r4/results.jsonl ".status == \"ok\" and .scope == \"aggregate\"") -ge 3 &&
	grep -q "agent $vname is missing" run4.log &&
	grep -q "agent(s) missing" run4.log &&
	# its jobs (processes forked from it, with its command line) died with it
	test_wait_for 5 eval "test -z \"\$(fleet_pgrep_here \"agent --fd=3 --name $vname\\\$\")\""
'

test_expect_success $P 'a hung agent (stopped) is missing after --agent-timeout; exit 4' '
	# held after round 1 (a test build'"'"'s hook): what follows happens between two rounds,
	# on a condition, however busy the machine (a run of 3 s may otherwise end first)
	# (--agent-timeout 8, not less: a starved ASan coordinator was once silent for 2 s in round 1,
	# and every agent gave up on it before the hold)
	FABSCOPE_TEST_ROUND_HOLD=$PWD/hold5 fleet_run_bg run5.log long.ini -n 4 -o r5 --agent-timeout 8 &&
	fleet_held hold5 run5.log &&
	victim=$(fleet_agents $fleet_pid | tail -n 1) &&
	kill -STOP $victim &&
	test_atexit "kill -CONT $victim 2>/dev/null || :" &&
	rm hold5 &&
	fleet_wait $fleet_pid 60 && test $fleet_rc = 4 &&
	# the coordinator stopped it for good at the end (SIGKILL: it was stopped)
	! kill -0 $victim 2>/dev/null &&
	grep -q "silent for 8 s (no heartbeat): the agent hangs" run5.log &&
	jq -e "[.nodes[] | select(.status == \"missing\")] | length == 1" r5/run.json >/dev/null
'

test_expect_success $P 'the coordinator killed mid-phase leaves valid JSONL; --resume finishes the run' '
	# held after round 1 (a test build'"'"'s hook): what follows happens between two rounds,
	# on a condition, however busy the machine (a run of 3 s may otherwise end first)
	FABSCOPE_TEST_ROUND_HOLD=$PWD/hold6 fleet_run_bg run6.log long.ini -n 4 -o r6 &&
	fleet_held hold6 run6.log &&
	agents=$(fleet_agents $fleet_pid) &&
	kill -9 $fleet_pid &&
	fleet_wait $fleet_pid 10 &&
	rm hold6 &&
	# round 1 (two jobs) was measured, rounds 2 and 3 not
	test $(jsonl_count r6/results.jsonl ".scope == \"aggregate\"") = 2 &&
	jsonl_ok r6/results.jsonl &&
	before=$(wc -l <r6/results.jsonl) &&
	jq -e ".status == \"running\"" r6/run.json >/dev/null &&
	# the agents notice and go away on their own
	for a in $agents; do test_wait_for 15 eval "! kill -0 $a 2>/dev/null" || return 1; done &&
	fs_expect 0 run --resume r6 &&
	jsonl_ok r6/results.jsonl &&
	test $(wc -l <r6/results.jsonl) -gt $before &&
	# each of the 6 jobs has exactly one aggregate record (and the re-tests of what this busy
	# host made suspects, if any, one each too)
	test $(jq -r "select(.scope == \"aggregate\" and (.retest_for | not)) | .job" r6/results.jsonl | sort -u | wc -l) = 6 &&
	test $(jq -r "select(.scope == \"aggregate\" and (.retest_for | not)) | .job" r6/results.jsonl | wc -l) = 6 &&
	test $(jq -r "select(.scope == \"aggregate\") | .job" r6/results.jsonl | sort | uniq -d | wc -l) = 0 &&
	jq -e ".status == \"finished\" and (.resumed | length) == 1" r6/run.json >/dev/null
'

test_expect_success $P '--resume drops a torn last line and re-measures its job' '
	# the last record of a job (a busy host may have added re-tests after the jobs: a finished
	# run does not repeat a lost re-test, so they are left out here)
	grep -v "\"retest_for\"" r1/results.jsonl | head -c -40 >torn.jsonl &&
	mkdir r7 && cp r1/run.json r7/ && cp torn.jsonl r7/results.jsonl &&
	fs_expect 0 run --resume r7 &&
	jsonl_ok r7/results.jsonl &&
	grep -q "torn" err &&
	test $(grep -vc "\"retest_for\"" r7/results.jsonl) -ge $(grep -vc "\"retest_for\"" r1/results.jsonl) &&
	# a line that is no record, in the middle: said where, left as it is
	mkdir r7b && cp r1/run.json r1/jobs.done r7b/ &&
	{ head -n 1 r1/results.jsonl && echo "not a record" && tail -n +2 r1/results.jsonl; } >r7b/results.jsonl &&
	fs_expect 0 run --resume r7b &&
	test_grep "1 line(s) that are not records, the first at line 2: left as they are" err &&
	! grep -q "torn" err &&
	test "$(sed -n 2p r7b/results.jsonl)" = "not a record"
'

test_expect_success $P 'parallel = 1 runs the tests of a round one after another' '
	printf "[global]\nduration = 0.5\n[pw]\nkind = pairwise\nparallel = 1\n" >serial.ini &&
	fs_expect 0 run serial.ini -n 4 -o r10 &&
	test $(jsonl_count r10/results.jsonl ".scope == \"aggregate\" and (.retest_for | not)") = 6 &&
	# each test ends (time) after it measured (duration_s): the spans must not overlap
	jq -r "select(.scope == \"aggregate\" and (.retest_for | not)) | (.time | sub(\"\\\\.[0-9]+Z$\"; \"Z\") | fromdate) as \$s |
	       (.time | capture(\"\\\\.(?<ms>[0-9]+)Z$\").ms | tonumber / 1000) as \$ms |
	       \"\\(\$s + \$ms - .metrics.duration_s) \\(\$s + \$ms)\"" r10/results.jsonl | sort -n >spans &&
	awk "NR > 1 && \$1 < end - 0.05 { print \"overlap: \" \$0 \" starts before \" end; bad = 1 } { end = \$2 } END { exit bad }" spans
'

test_lazy_prereq SCRIPT 'command -v script'
test_require_in_ci SCRIPT

test_expect_success $P,SCRIPT 'on a terminal, progress is one line updated in place: phase, round, ETA' '
	script -qec "\"$FABSCOPE\" run long.ini -n 2 -o r9" /dev/null >tty.out 2>&1 &&
	tr "\r" "\n" <tty.out | grep -q "^.*\[1/1\] pw: round 1/1, 0/1 jobs, ETA" &&
	grep -q "^results: r9" tty.out &&
	! grep -q "round 1/1 done" tty.out
'

# Job keys hold the phase, test, round, lane and both nodes' names; names of 253 bytes (the
# most a name may have) once cut two jobs' keys to one (jobs.done, --resume, the records' job)
test_expect_success $P 'node names of 253 bytes: every job its own key, --resume finds nothing to run' '
	long=$(printf "n%.0s" $(seq 252)) &&
	for i in 1 2 3 4; do echo "$long$i rail0=127.0.0.1"; done >keys.hosts &&
	printf "[global]\nduration = 0.2\ntimeout = 5\n[pw]\nkind = pairwise\ntest = bw\nsize = 4K\n" >keys.ini &&
	fs_expect 0 run keys.ini --hostfile keys.hosts --no-retest -o r30 &&
	# 3 rounds of 2 pairs: 6 keys, all different, each one job'"'"'s records
	test $(grep -c "^pw/bw/r[123]/rail0/" r30/jobs.done) = 6 &&
	test $(sort -u r30/jobs.done | wc -l) = 6 &&
	jq -r "select(.scope == \"aggregate\") | .job" r30/results.jsonl | sort >jobs &&
	sort r30/jobs.done >done && test_cmp done jobs &&
	fs_expect 0 run --resume r30 &&
	test_grep "nothing left to run" err
'

test_expect_success $P '64 agents join and finish a ping phase; run.json says what the coordinator cost' '
	printf "[ping]\nkind = ping\n" >ping.ini &&
	fs_expect 0 run ping.ini -n 64 -o r8 &&
	test $(jsonl_count r8/results.jsonl ".test == \"ping\" and .status == \"ok\"") = 64 &&
	jq -e ".join_seconds > 0 and .coordinator.max_rss_kib > 0 and (.nodes | length) == 64" r8/run.json >/dev/null
'

test_expect_success $P,TEST_TOOL 'bench/fleet-bench.sh prints join times, memory per agent and plan generation time' '
	{ BENCH_OUT=$PWD/bench-out FABSCOPE="$FABSCOPE" TEST_TOOL="$TEST_TOOL" "$SRCDIR/bench/fleet-bench.sh" \
		-S 8 -n 8 -s 1 -N 300 -R 2 >bench.out 2>&1 || { cat bench.out >&2; false; }; } &&
	cat bench.out &&
	grep -q "^simulated agents joined, pinged, said bye  *8$" bench.out &&
	grep -q "^wall ratio, 8 / 2 agents  *[0-9.]* (agents x4; linear: 4)$" bench.out &&
	grep -q "^coordinator CPU ratio, 8 / 2 agents  *[0-9.]* (agents x4; linear: 4)$" bench.out &&
	grep -q "^coordinator peak RSS  *[0-9]* KiB$" bench.out &&
	grep -q "^local agents joined  *8$" bench.out &&
	grep -q "^coordinator memory per agent  *[0-9.-]* KiB$" bench.out &&
	grep -q "^join time beside 1 busy loops  *[0-9.]* s, all 8 joined and answered$" bench.out &&
	test $(jq -s "[.[] | select(.test == \"join-simulated\" and .agents == 8 and .quarter_agents == 2)] | length" \
		bench-out/fleet-bench.jsonl) = 1 &&
	# (its busy loop is gone with it)
	test -z "$(fleet_pgrep_here fleet-bench.sh)" &&
	grep -q "^tournament pairs generated and checked  *44850$" bench.out &&
	grep -q "^schedule generated (all phases)  *[0-9.]* s$" bench.out
'

test_done
