#!/usr/bin/env bash
test_description='fabscope run as a new user meets it: a phase overrides a [global] duration
with its own iters (both in one section: one line naming the plan keys); --dry-run counts the
rounds the run runs; --resume of a finished run launches nothing; the local launcher runs
--agent-cmd; a plan with nothing to run is refused, a phase that cannot run is said; the cause
of an agent that ended before joining is in the records and the report; on a host without RDMA
the verbs phases are said once and not run (exit 3), and a failure of many jobs is said once'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_require_in_ci FABSCOPE JQ
P=FABSCOPE,JQ

test_expect_success $P 'a phase iters overrides a [global] duration, and the reverse' '
	cat >iters.ini <<-\EOF &&
	[global]
	duration = 0.3
	timeout = 3
	[l]
	kind = pairwise
	test = lat
	iters = 100
	EOF
	fs_expect 0 run iters.ini -n 2 -o ri &&
	test $(jsonl_count ri/results.jsonl ".status == \"ok\" and .params.iters == 100 and .params.duration_s == 0") = 1 &&
	cat >dur.ini <<-\EOF &&
	[global]
	iters = 100
	timeout = 3
	[b]
	kind = pairwise
	duration = 0.3
	[l]
	kind = pairwise
	test = lat
	EOF
	fs_expect 0 run dur.ini -n 2 -o rd &&
	test $(jsonl_count rd/results.jsonl ".phase == \"b\" and .scope == \"aggregate\" and .status == \"ok\" and .params.duration_s == 0.3 and (.retest_for | not)") = 1 &&
	# the phase without its own: [global]s iters
	test $(jsonl_count rd/results.jsonl ".phase == \"l\" and .status == \"ok\" and .params.iters == 100") = 1
'

test_expect_success $P 'iters and duration in one section: exit 2, the plan keys and file:line' '
	printf "[global]\nduration = 1\n[l]\nkind = pairwise\niters = 100\nduration = 0.3\n" >both.ini &&
	fs_expect 2 run both.ini -n 2 -o rb &&
	ptp_one_error err "both.ini:6: duration and iters (line 5) of [l] exclude each other" &&
	! grep -q -e "-n and -D" err &&
	! test -e rb &&
	printf "[global]\niters = 5\nduration = 1\n[l]\nkind = pairwise\n" >bothg.ini &&
	fs_expect 2 run --dry-run bothg.ini -n 2 &&
	ptp_one_error err "bothg.ini:3: duration and iters (line 2) of [global] exclude each other"
'

test_expect_success $P '--dry-run counts the rounds the run runs: a bw,lat phase, both tests' '
	printf "[global]\nduration = 0.2\ntimeout = 3\n[pw]\nkind = pairwise\ntest = bw,lat\n" >bl.ini &&
	fs_expect 0 run --dry-run bl.ini -n 4 &&
	grep "^\[1\] pw: pairwise bw,lat, 6 rounds (3 of each test, bw then lat) on 1 lane, 6 jobs per test" out &&
	fs_expect 0 run bl.ini -n 4 -o rbl &&
	# the run: round 1/6 to 6/6, as the dry run said
	sed -n "s/^fabscope run: \[1\/1\] pw: round \([0-9]*\/[0-9]*\) done.*/\1/p" err >rounds &&
	printf "%s\n" 1/6 2/6 3/6 4/6 5/6 6/6 >expect &&
	test_cmp expect rounds &&
	# (a busy machine can make a latency suspect, whose re-test adds a record: not counted)
	test $(jsonl_count rbl/results.jsonl ".status == \"ok\" and .scope == \"aggregate\" and (.retest_for | not)") = 12 &&
	test $(jsonl_count rbl/results.jsonl ".test == \"lat\" and .round == 3 and (.retest_for | not)") = 2
'

test_expect_success $P 'run -v stays verbose after its plan check of a bw phase (which has no -v)' '
	printf "[global]\ntimeout = 5\n[b]\nkind = pairwise\ntest = bw\nsize = 4K\niters = 3\n" >v.ini &&
	fs_expect 0 run v.ini -n 2 -o rv -v &&
	test_grep "^fabscope run: agent node[01] joined from local" err
'

test_expect_success $P 'a pairwise plan on one node: refused in one line naming the phase, exit 2' '
	printf "[global]\nduration = 0.2\n[pw]\nkind = pairwise\n" >one.ini &&
	fs_expect 2 run one.ini -n 1 -o r1 &&
	ptp_one_error err "one.ini: [pw]: a pairwise phase needs at least 2 nodes and this run has 1: nothing to run" &&
	! test -e r1 &&
	fs_expect 2 run --dry-run one.ini -n 1 &&
	ptp_one_error err "[pw]" "needs at least 2 nodes" &&
	# with a hostfile: two nodes that share no lane
	printf "h1 rail0=127.0.0.1\nh2 rail1=127.0.0.1\n" >apart.hosts &&
	fs_expect 2 run --dry-run one.ini --hostfile apart.hosts &&
	ptp_one_error err "[pw]: a pairwise phase needs at least 2 nodes on one rail and plane, and its 2 share none"
'

test_expect_success $P 'a phase that cannot run beside one that can: a warning naming it, the rest runs' '
	printf "[global]\ntimeout = 3\n[pw]\nkind = pairwise\n[p]\nkind = ping\n" >mixed.ini &&
	fs_expect 0 run mixed.ini -n 1 -o rm &&
	test $(grep -c "warning: mixed.ini: \[pw\]: a pairwise phase needs at least 2 nodes and this run has 1: it is skipped" err) = 1 &&
	! grep -q "nothing to run" err &&
	test $(jsonl_count rm/results.jsonl ".phase == \"p\" and .status == \"ok\"") = 1 &&
	test $(jsonl_count rm/results.jsonl ".phase == \"pw\"") = 0
'

test_expect_success $P 'the local launcher runs --agent-cmd: a wrapper starts the agents' '
	printf "[global]\nduration = 0.2\ntimeout = 3\n[pw]\nkind = pairwise\n" >pw.ini &&
	cat >wrap.sh <<-EOF &&
	#!/bin/sh
	echo "\$*" >>"$PWD/wrapped"
	exec "$FABSCOPE" "\$@"
	EOF
	chmod +x wrap.sh &&
	fs_expect 0 run pw.ini -n 2 --agent-cmd "$PWD/wrap.sh" -o rw &&
	test $(grep -c "^agent .*--name node[01]" wrapped) = 2 &&
	test $(jsonl_count rw/results.jsonl ".status == \"ok\" and .scope == \"aggregate\" and (.retest_for | not)") = 1 &&
	jq -e ".options.agent_cmd == \"$PWD/wrap.sh\"" rw/run.json >/dev/null &&
	# the plan'\''s agent-cmd too
	: >wrapped &&
	printf "[global]\nagent-cmd = %s\nduration = 0.2\n[pw]\nkind = pairwise\n" "$PWD/wrap.sh" >pwa.ini &&
	fs_expect 0 run pwa.ini -n 2 -o rwa &&
	test $(grep -c "^agent .*--name node[01]" wrapped) = 2
'

test_expect_success $P '--agent-cmd /bin/false with the local launcher: no agent joins, exit 4' '
	fs_expect 4 run pw.ini -n 2 --agent-cmd /bin/false -o rf &&
	test_grep "no agent joined, nothing to run: node0 (of 2): its agent ended before joining, saying nothing$" err &&
	test_must_be_empty rf/results.jsonl
'

test_expect_success $P 'an agent that ended before joining: its last words in the records and the report' '
	printf "h1 rail0=127.0.0.1\nh2 rail0=127.0.0.1\nh3 rail0=127.0.0.1 netns=fabscope-t1105-nosuch\n" >ns.hosts &&
	fs_expect 4 run pw.ini --hostfile ns.hosts -o rn &&
	jsonl_ok rn/results.jsonl &&
	# (the message is ip'\''s: its words may differ, the namespace is in it)
	cause=$(jq -r ".nodes[] | select(.name == \"h3\") | .why" rn/run.json) &&
	case $cause in
	"did not join: its agent ended before joining: "*fabscope-t1105-nosuch*) ;;
	*) echo "cause: $cause"; false ;;
	esac &&
	test $(jsonl_count rn/results.jsonl ".status != \"ok\" and (.error | contains(\"fabscope-t1105-nosuch\"))") = 2 &&
	test $(jsonl_count rn/results.jsonl ".status == \"ok\" and .scope == \"aggregate\" and (.retest_for | not)") = 1 &&
	# on the terminal as before, once from the agent (not only in the run'\''s warnings)
	grep -v "^fabscope run" err | grep -q fabscope-t1105-nosuch &&
	test_expect_exit 1 "$FABSCOPE" report rn -o rep >/dev/null 2>&1 &&
	grep -q "^| no agent missing | 0 | 1 | 1 of 3 | \*\*FAIL\*\* | h3 (did not join: " rep/report.md &&
	grep -q "^- agent \*\*h3\*\* missing: did not join: its agent ended before joining: .*fabscope-t1105-nosuch" rep/report.md
'

test_expect_success $P 'the last words are bounded and escaped: control bytes, bad UTF-8, a long line' '
	cat >say.sh <<-EOF &&
	#!/bin/sh
	case "\$*" in
	*"--name h3"*)
		printf "an earlier line\n" >&2
		printf "\033[31mred\tx\\\\\\\\y \377\376 %0300d\n\n  \n" 7 >&2
		exit 1 ;;
	esac
	exec "$FABSCOPE" "\$@"
	EOF
	chmod +x say.sh &&
	printf "h1 rail0=127.0.0.1\nh2 rail0=127.0.0.1\nh3 rail0=127.0.0.1\n" >three.hosts &&
	fs_expect 4 run pw.ini --hostfile three.hosts --agent-cmd "$PWD/say.sh" -o rs &&
	jsonl_ok rs/results.jsonl &&
	why=$(jq -r ".nodes[2].why" rs/run.json) &&
	cat >want <<-\EOF &&
	did not join: its agent ended before joining: \x1b[31mred\x09x\\y \xff\xfe 0000
	EOF
	want=$(cat want) &&
	test "${why:0:${#want}}" = "$want" &&
	test "${why: -4}" = "0..." &&
	test ${#why} -le 260 &&
	test $(jsonl_count rs/results.jsonl ".status != \"ok\" and (.error | contains(\"\\\\x1b[31mred\"))") = 2 &&
	# the terminal got the line too, its control bytes escaped as fabscope'\''s own are
	printf "\033[31mred" >esc && ! grep -q -F -f esc err &&
	grep -q -F "\\x1b[31mred" err
'

test_expect_success $P '--resume of a finished run: one line, nothing launched, exit 0 (or its verdict)' '
	: >wrapped &&
	fs_expect 0 run pw.ini -n 2 --agent-cmd "$PWD/wrap.sh" -o rr &&
	test $(wc -l <wrapped) = 2 &&
	cp rr/results.jsonl rr.before && cp rr/run.json run.before &&
	fs_expect 0 run --resume rr &&
	test_must_be_empty out &&
	ptp_one_error err "fabscope run: nothing left to run: every job of rr has finished ($(wc -l <rr/results.jsonl) records); no agent started" &&
	# (the agent command of run.json would have run again)
	test $(wc -l <wrapped) = 2 &&
	test_cmp rr.before rr/results.jsonl && test_cmp run.before rr/run.json &&
	# with a hostfile, and jobs that failed: nothing runs again, the verdict stands (exit 4)
	fs_expect 4 run pw.ini --hostfile ns.hosts -o rrh &&
	cp rrh/run.json run.before &&
	fs_expect 4 run --resume rrh &&
	ptp_one_error err "nothing left to run: every job of rrh has finished ($(wc -l <rrh/results.jsonl) records), 2 of them failed (see rrh/results.jsonl); no agent started" &&
	test_cmp run.before rrh/run.json
'

test_expect_success $P '--resume of a run with jobs left still runs them' '
	cp -r rr rleft &&
	# the record of the one job and its line in jobs.done gone: it runs again
	: >rleft/results.jsonl && : >rleft/jobs.done &&
	: >wrapped &&
	fs_expect 0 run --resume rleft &&
	! grep -q "nothing left" err &&
	test $(wc -l <wrapped) = 2 &&
	test $(jsonl_count rleft/results.jsonl ".status == \"ok\" and .scope == \"aggregate\" and (.retest_for | not)") = 1
'

# No RDMA here (no verbs in the kernel, or none in this build): the agents say so when they join
test_lazy_prereq NO_RDMA '! "$FABSCOPE" devices >/dev/null 2>&1'

test_expect_success $P,NO_RDMA 'examples/nightly.ini without RDMA: said once, its verbs jobs not run, the rest run, exit 3' '
	cp "$SRCDIR/examples/nightly.ini" nightly.ini &&
	fs_expect 3 run nightly.ini -n 4 -o nn &&
	# one line for the cause, naming the nodes and the phases; no line a job
	test $(grep -c "warning:" err) = 1 &&
	test_grep "^fabscope run: warning: node0, node1, node2 and node3 cannot use verbs: .*: their jobs in permutations, ring and incast (transport = verbs) are not run$" err &&
	test_grep ! "/r[0-9]*/rail" err &&
	test_grep "^fabscope run: 27 job(s) of transport = verbs not run: nodes that cannot use verbs, said above" err &&
	test_grep "4 jobs, 0 failed, 16 not run so far" err &&
	jsonl_ok nn/results.jsonl &&
	# every job of the verbs phases has its record (16 + 8 + 3), each saying why; ping ran
	test $(jsonl_count nn/results.jsonl ".status == \"error\" and (.error | test(\"^not run: node[0-3] cannot use verbs: \"))") = 27 &&
	test $(jsonl_count nn/results.jsonl ".phase == \"ping\" and .status == \"ok\"") = 4 &&
	test $(wc -l <nn/results.jsonl) = 31 &&
	jq -e ".status == \"finished\" and .not_run_jobs == 27 and .failed_jobs == 27 and
	       all(.agents[]; .unusable.verbs | length > 0)" nn/run.json >/dev/null
'

test_expect_success $P,NO_RDMA 'a failure on every node is said once, with a count; a peer failure (4) wins over no verbs (3)' '
	cat >mixed.ini <<-\EOF &&
	[global]
	duration = 0.3
	timeout = 3
	[t]
	kind = topology
	source = lldpd
	lldpd-socket = /nonexistent/lldpd.ctl
	[v]
	kind = ring
	transport = verbs
	[b]
	kind = ring
	size = 4K
	EOF
	fs_expect 4 run mixed.ini -n 4 -o nm &&
	test $(grep -c "cannot use verbs" err) = 1 &&
	test_grep "node0, node1, node2 and node3 cannot use verbs: .*: their jobs in v (transport = verbs) are not run$" err &&
	# the topology phase fails the same way on every node: the first says it, then a count
	test $(grep -c "warning: t/topology/" err) = 1 &&
	test_grep "^fabscope run: warning: 3 more jobs failed as t/topology/r1/rail0/node[0-3] did (.*lldpd.ctl.*); each has its error record in nm/results.jsonl$" err &&
	test_grep "^fabscope run: 0 agent(s) missing, 4 job(s) failed and more not run (no verbs): see nm/results.jsonl$" err &&
	test $(jsonl_count nm/results.jsonl ".phase == \"t\" and .status == \"error\"") = 4 &&
	test $(jsonl_count nm/results.jsonl ".phase == \"v\" and .status == \"error\" and (.error | startswith(\"not run: \"))") = 4 &&
	test $(jsonl_count nm/results.jsonl ".phase == \"b\" and .scope == \"aggregate\" and .status == \"ok\" and (.retest_for | not)") = 4
'

test_done
