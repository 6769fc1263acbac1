#!/usr/bin/env bash
test_description='every control message is authenticated: a man in the middle of one agent'"'"'s
connection that injects, forges, changes, drops, reorders or replays a message after the
handshake, either way, is caught at that message: the agent refuses the channel (when it was
the coordinator'"'"'s message), the run names that agent as missing because its channel was
tampered with, and nothing the attacker sent is run; the honest agent and the rest of the run go
on.  In the handshake, every field of the challenge, the register and the welcome is covered by
a mac under the token: one byte of any of them changed on the way and the agent is never
welcomed (or refuses its welcome), while the same messages written again with the same meaning
go through'
# asan: always: feeds untrusted bytes to C code: control messages changed by a man in the middle
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_lazy_prereq PERL 'perl -MIO::Socket::INET -MIO::Select -MJSON::PP -e 1'
test_require_in_ci FABSCOPE JQ PERL TEST_HOOKS
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

cat >ping.ini <<'EOF'
[global]
timeout = 3
agent-timeout = 5

[ping]
kind = ping
EOF

# hs_run NAME DIR INDEX ACTION: a run of one agent, "victim" (with an endpoint, so that the
# register has one), through the man in the middle acting on handshake message DIR INDEX (c2a 0
# the challenge, a2c 0 the register, c2a 1 the welcome); the victim's exit code in $vic_rc, the
# run's PID in $run_pid, left running (--join-timeout 600 is a hang guard: a refused agent does
# not end the join), its output in NAME.run
hs_run() {
	local name=$1 mpid
	perl "$MITM" $PP $CP "$2" "$4" "$3" >$name.mitm 2>&1 &
	mpid=$!
	test_atexit "test_kill_pid $mpid"
	test_wait_for 10 grep -q listening $name.mitm &&
	fleet_run_bg $name.run ping.ini --launcher external -n 1 --listen 127.0.0.1:$CP --join-timeout 600 \
		-o $name &&
	run_pid=$fleet_pid &&
	test_wait_for 10 grep -q "waiting for 1 agents" $name.run &&
	fleet_agent_bg $name.victim --connect 127.0.0.1:$PP --name victim --rail 0=127.0.0.1 --timeout 5 -v &&
	fleet_wait $agent_pid 30 &&
	vic_rc=$fleet_rc &&
	test_kill_pid $mpid
}

# hs_refused NAME KEY: the victim of hs_run was never welcomed: the man in the middle changed KEY,
# the victim failed (exit 3 or 4, one line why), never joined, and no welcome reached it (the
# coordinator answered with an error, if at all)
hs_refused() {
	cat $1.mitm $1.victim $1.run &&
	test_grep "^did flip:$2 at " $1.mitm &&
	{ test $vic_rc = 3 || test $vic_rc = 4; } &&
	test_grep ! "joined as" $1.victim &&
	test $(wc -l <$1.victim) = 1
}

test_expect_success $P 'the handshake written again with the same meaning (canonical JSON): the run goes on' '
	for at in "c2a 0" "a2c 0" "c2a 1"; do
		d=${at% *} && i=${at#* } &&
		hs_run recode-$d-$i $d $i recode &&
		cat recode-$d-$i.mitm recode-$d-$i.run &&
		test_grep "^did recode at $d $i$" recode-$d-$i.mitm &&
		test $vic_rc = 0 &&
		fleet_wait $run_pid 60 && test $fleet_rc = 0 &&
		test $(jsonl_count recode-$d-$i/results.jsonl ".test == \"ping\" and .status == \"ok\"") = 1 ||
		return 1
	done &&
	# the fields of each handshake message, as they went (the flips below change each)
	sed -n "s/^keys c2a 0 //p" recode-c2a-0.mitm >keys.challenge &&
	sed -n "s/^keys a2c 0 //p" recode-c2a-0.mitm >keys.register &&
	sed -n "s/^keys c2a 1 //p" recode-c2a-0.mitm >keys.welcome &&
	test "$(cat keys.challenge)" = "join_ms nonce proto type version" &&
	test "$(cat keys.welcome)" = "heartbeat_ms mac node silence_ms type" &&
	for k in endpoints host mac node nonce pid proto tool_version type version; do
		grep -qw $k keys.register || { echo "the register has no $k: $(cat keys.register)"; return 1; }
	done &&
	# a host without RDMA says so in its register (unusable: {verbs: why}): flipped below too
	if ! "$FABSCOPE" devices >/dev/null 2>&1; then
		grep -qw unusable keys.register || { echo "no unusable in the register: $(cat keys.register)"; return 1; }
	fi
'

test_expect_success $P 'any field of the challenge changed on the way: the agent is never welcomed' '
	for key in $(cat keys.challenge); do
		hs_run ch-$key c2a 0 flip:$key &&
		hs_refused ch-$key $key &&
		test_grep ! "^keys c2a 1 .*heartbeat_ms" ch-$key.mitm &&
		case $key in
		proto)	test_grep "is not a fabscope coordinator" ch-$key.victim ;;
		version) test_grep "speaks fleet protocol" ch-$key.victim &&
			test_wait_for 10 grep -q "refused this coordinator: agent victim speaks fleet protocol" ch-$key.run ;;
		# what the agent saw is not what the coordinator sent: its register'"'"'s mac fails
		*)	test_grep "refused by a peer that did not prove the token over the handshake" ch-$key.victim &&
			test_wait_for 10 grep -q "refused agent .victim. from 127.0.0.1: authentication failed" ch-$key.run ;;
		esac &&
		test_kill_pid $run_pid || return 1
	done
'

test_expect_success $P 'any field of the register changed on the way: the coordinator refuses it' '
	for key in $(cat keys.register); do
		hs_run reg-$key a2c 0 flip:$key &&
		hs_refused reg-$key $key &&
		test_grep ! "^keys c2a 1 .*heartbeat_ms" reg-$key.mitm &&
		test_grep "^keys c2a 1 mac message type$" reg-$key.mitm &&
		test $vic_rc = 3 && test_grep "refused" reg-$key.victim &&
		case $key in
		type)	want="expected a register message" ;;
		version) want="speaks fleet protocol" ;;
		*)	want="authentication failed" ;;
		esac &&
		test_wait_for 10 grep -q "refused agent .victi.. from 127.0.0.1: .*$want" reg-$key.run &&
		test_kill_pid $run_pid || return 1
	done
'

test_expect_success $P 'any field of the welcome changed on the way: the agent refuses it, the run says why' '
	for key in $(cat keys.welcome); do
		hs_run wel-$key c2a 1 flip:$key &&
		hs_refused wel-$key $key &&
		test $vic_rc = 3 &&
		case $key in
		type)	test_grep "refused by a peer that did not prove the token" wel-$key.victim &&
			test_wait_for 10 grep -q "agent victim is missing: its connection closed" wel-$key.run ;;
		*)	test_grep "welcome failed its MAC over the handshake" wel-$key.victim &&
			test_wait_for 10 grep -q "agent victim: refused the control channel: the welcome failed its MAC" \
				wel-$key.run &&
			test_wait_for 10 grep -q "agent victim is missing: its control channel was tampered with" \
				wel-$key.run ;;
		esac &&
		test_kill_pid $run_pid || return 1
	done
'

test_expect_success $P,TEST_HOOKS 'an agent of protocol 4 (its macs over the nonces only) is refused in one line, both sides' '
	fleet_run_bg v4.run ping.ini --launcher external -n 1 --listen 127.0.0.1:$CP --join-timeout 600 -o v4 &&
	test_wait_for 10 grep -q "waiting for 1 agents" v4.run &&
	wv=$(sed -n "s/^#define WIRE_VERSION \([0-9]*\).*/\1/p" "$SRCDIR/core/wire.h") &&
	test_expect_exit 3 env FABSCOPE_TEST_PROTO_VERSION=4 "$FABSCOPE" agent --connect 127.0.0.1:$CP \
		--name old 2>v4.agent &&
	ptp_one_error v4.agent "agent old speaks fleet protocol 4, the coordinator $wv: run the same fabscope version everywhere" &&
	test_wait_for 10 grep -q "refused this coordinator: agent old speaks fleet protocol 4, the coordinator $wv" v4.run &&
	test $(grep -c "protocol 4" v4.run) = 1 &&
	test_kill_pid $fleet_pid
'

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
