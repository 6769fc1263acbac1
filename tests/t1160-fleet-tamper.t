#!/usr/bin/env bash
test_description='every control message after the handshake is authenticated: a man in the
middle of one agent'"'"'s connection that injects, forges, changes, drops, reorders or replays a
message, either way, is caught at that message: the agent refuses the channel (when it was the
coordinator'"'"'s message), the run names that agent as missing because its channel was tampered
with, and nothing the attacker sent is run; the honest agent and the rest of the run go on'
# asan: always: feeds untrusted bytes to C code: control messages changed by a man in the middle
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_lazy_prereq PERL 'perl -MIO::Socket::INET -MIO::Select -e 1'
test_require_in_ci FABSCOPE JQ PERL
P=FABSCOPE,JQ,PERL
CP=$(ptp_port 0)
PP=$(ptp_port 1)
MITM=$TEST_DIRECTORY/helper/mitm.pl
export FABSCOPE_TOKEN=tamper-test-token-0123456789abcdef

cat >plan.ini <<'EOF'
[global]
timeout = 3
agent-timeout = 5

[ping]
kind = ping

[bw]
kind = pairwise
test = bw
duration = 1
EOF

# tamper NAME DIR ACTION INDEX: a run of two agents, "good" straight to the coordinator and
# "victim" through the man in the middle; the run's output in NAME.run, the victim's in
# NAME.victim, the proxy's in NAME.mitm, the run's exit code in $run_rc, the victim's in $vic_rc
tamper() {
	local name=$1 vpid gpid mpid
	perl "$MITM" $PP $CP "$2" "$3" "$4" >$name.mitm 2>&1 &
	mpid=$!
	test_atexit "test_kill_pid $mpid"
	test_wait_for 10 grep -q listening $name.mitm &&
	fleet_run_bg $name.run plan.ini --launcher external -n 2 --listen 127.0.0.1:$CP --join-timeout 20 \
		-o $name &&
	test_wait_for 10 grep -q "waiting for 2 agents" $name.run &&
	fleet_agent_bg $name.good --connect 127.0.0.1:$CP --name good --timeout 5 &&
	gpid=$agent_pid &&
	fleet_agent_bg $name.victim --connect 127.0.0.1:$PP --name victim --timeout 5 -v &&
	vpid=$agent_pid &&
	fleet_wait $fleet_pid 60 &&
	run_rc=$fleet_rc &&
	fleet_wait $vpid 30 &&
	vic_rc=$fleet_rc &&
	fleet_wait $gpid 30 &&
	test_kill_pid $mpid &&
	cat $name.mitm $name.run $name.victim &&
	{ test "$3" = none || test_grep "^did $3 at $2 $4$" $name.mitm; }
}

# the run went on without the victim: exit 4, the victim missing for its channel, the good
# agent's ping measured, and no job of the victim's finished after the tampering
run_named_victim() {
	test $run_rc = 4 &&
	test_grep "warning: agent victim is missing: its control channel was tampered with" $1.run &&
	jq -e "(.nodes[] | select(.name == \"victim\") | .why) | startswith(\"its control channel was tampered with\")" \
		$1/run.json >/dev/null &&
	jq -e "(.nodes[] | select(.name == \"victim\") | .status) == \"missing\"" $1/run.json >/dev/null &&
	jq -e "(.nodes[] | select(.name == \"good\") | .status) == \"ok\"" $1/run.json >/dev/null &&
	test $(jsonl_count $1/results.jsonl ".test == \"ping\" and .src.node == \"good\" and .status == \"ok\"") = 1
}

test_expect_success $P 'no one in the middle doing harm: the run through the proxy finishes (exit 0)' '
	{ tamper clean c2a none 0 >clean.out 2>&1 || { cat clean.out; false; }; } &&
	test $run_rc = 0 && test $vic_rc = 0 &&
	test $(jsonl_count clean/results.jsonl ".test == \"ping\" and .status == \"ok\"") = 2
'

for action in inject forge change drop reorder replay; do
	test_expect_success $P "coordinator to agent, $action: the agent refuses the channel, the run names it" '
		{ tamper c2a-'$action' c2a '$action' 2 >c2a-'$action'.out 2>&1 || { cat c2a-'$action'.out; false; }; } &&
		cat c2a-'$action'.out &&
		test $vic_rc = 4 &&
		test_grep "refused the control channel: a message from the coordinator failed its MAC" c2a-'$action'.victim &&
		test_grep "warning: agent victim: refused the control channel" c2a-'$action'.run &&
		run_named_victim c2a-'$action' &&
		test_grep ! "job 999" c2a-'$action'.victim
	'
done

for action in inject forge change drop reorder replay; do
	test_expect_success $P "agent to coordinator, $action: the coordinator drops that agent and says why" '
		{ tamper a2c-'$action' a2c '$action' 1 >a2c-'$action'.out 2>&1 || { cat a2c-'$action'.out; false; }; } &&
		cat a2c-'$action'.out &&
		test_grep "agent victim is missing: its control channel was tampered with (a message from it failed its MAC)" \
			a2c-'$action'.run &&
		run_named_victim a2c-'$action'
	'
done

test_done
