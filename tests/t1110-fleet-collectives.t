#!/usr/bin/env bash
test_description='fabscope run with allreduce and alltoall phases on loopback (local launcher):
per lane one group job of every node on it, rank 0 listening and the others joining it, all
lanes at once; records from rank 0 with every rank endpoint, the run labels and the lane;
--dry-run shows each lane ranks; bad keys refused (exit 2, one line); an agent killed
mid-phase fails the job naming it (exit 4); one interrupted half-way runs again whole on
--resume; wrong data, doctored or live, fails the check
(exit 1); the
analysis names a slow lane'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_require_in_ci FABSCOPE JQ TEST_TOOL
P=FABSCOPE,JQ

# coll_records FILE PHASE TEST RAIL NRANKS: how many ok records of PHASE have the collective's
# shape: scope aggregate, wrong == 0, NRANKS endpoints (ranks 0.. in order, on RAIL, each with
# a node, an address and a plane), the lane, and no src or dst
coll_records() {
	jq -c --arg p "$2" --arg t "$3" --argjson rail "$4" --argjson n "$5" '
		select(.phase == $p and .test == $t and .kind == $t and .status == "ok" and
		       .scope == "aggregate" and .metrics.wrong == 0 and .metrics.busbw_gbps > 0 and
		       .ranks == $n and .rail == $rail and .plane == 0 and
		       .src == null and .dst == null and .round == 1 and (.run | length) > 0 and
		       (.endpoints | length) == $n and
		       ([.endpoints[].rank] == [range($n)]) and
		       all(.endpoints[]; .rail == $rail and .plane == 0 and (.node | length) > 0 and
		           (.ip | length) > 0))' "$1" | wc -l
}

# at_once LOG N: the coordinator's -v log shows N group jobs started before any finished
at_once() {
	awk -v n="$2" '/: started, rank 0 on / { if (!fin) started++ } /: finished, / { fin = 1 }
		END { if (started != n) { print "at_once: " started " jobs started before one finished, not " n; exit 1 } }' "$1"
}

test_expect_success $P 'allreduce and alltoall on 4 local agents: a record per size from rank 0, 4 endpoints' '
	cat >plan.ini <<-\EOF &&
	[global]
	label = fabric=loopback
	warmup = 1
	iters = 3

	[ar]
	kind = allreduce
	minbytes = 64K
	maxbytes = 256K

	[a2a]
	kind = alltoall
	algo = direct
	minbytes = 64K
	maxbytes = 128K
	EOF
	fs_expect 0 run plan.ini -n 4 -o r1 --label lb=none &&
	jsonl_ok r1/results.jsonl &&
	test $(wc -l <r1/results.jsonl) = 5 &&
	test $(coll_records r1/results.jsonl ar allreduce 0 4) = 3 &&
	test $(coll_records r1/results.jsonl a2a alltoall 0 4) = 2 &&
	test $(jsonl_count r1/results.jsonl ".phase == \"a2a\" and .algo == \"direct\" and .params.iters == 3") = 2 &&
	# rank i is the i-th node
	test $(jsonl_count r1/results.jsonl "[.endpoints[].node] == [\"node0\", \"node1\", \"node2\", \"node3\"]") = 5 &&
	test $(jsonl_count r1/results.jsonl ".labels.lb == \"none\" and .labels.fabric == \"loopback\"") = 5 &&
	test "$(jq -r .job r1/results.jsonl | sort -u | tr "\n" " ")" = "a2a/alltoall/r1/rail0/4-ranks ar/allreduce/r1/rail0/4-ranks " &&
	jq -e ".status == \"finished\" and .wrong_records == 0 and .failed_jobs == 0 and (.phases | length) == 2" r1/run.json >/dev/null &&
	# the summary: busbw per lane and size
	grep -q "^ar  *allreduce  *rail 0  *64K  *4 " out &&
	grep -q "^ar  *allreduce  *rail 0  *256K  *4 " out &&
	grep -q "^a2a  *alltoall  *rail 0  *128K  *4 " out &&
	grep -q "^suspects: none" out &&
	! grep -q "^failed:" out
'

test_expect_success $P 'two rails: a ring per rail at once, each record with its lane; a lone node is skipped' '
	cat >hosts <<-\EOF &&
	h1 rail0=127.0.0.1 rail1=127.0.0.2
	h2 rail0=127.0.0.1 rail1=127.0.0.2
	h3 rail0=127.0.0.1 rail1=127.0.0.2
	h4 rail0=127.0.0.1 rail1=127.0.0.2
	h5 rail2=127.0.0.3
	EOF
	cat >rails.ini <<-\EOF &&
	[global]
	hostfile = hosts
	[ar]
	kind = allreduce
	minbytes = 256K
	maxbytes = 1M
	warmup = 1
	iters = 3
	EOF
	fs_expect 0 run rails.ini -o r2 -v &&
	jsonl_ok r2/results.jsonl &&
	test $(coll_records r2/results.jsonl ar allreduce 0 4) = 3 &&
	test $(coll_records r2/results.jsonl ar allreduce 1 4) = 3 &&
	test $(jsonl_count r2/results.jsonl ".rail == 0 and (.endpoints | length) == 4 and all(.endpoints[]; .ip == \"127.0.0.1\")") = 3 &&
	test $(jsonl_count r2/results.jsonl ".rail == 1 and (.endpoints | length) == 4 and all(.endpoints[]; .ip == \"127.0.0.2\")") = 3 &&
	test $(jsonl_count r2/results.jsonl "[.endpoints[].node] == [\"h1\", \"h2\", \"h3\", \"h4\"]") = 6 &&
	test $(wc -l <r2/results.jsonl) = 6 &&
	at_once err 2 &&
	grep -q "ar: rail 2 has one node only: no allreduce on it" err &&
	grep -q "^ar  *allreduce  *rail 1  *1M  *4 " out
'

test_expect_success $P '--dry-run shows the collective phases: per lane, its ranks in order' '
	fs_expect 0 run --dry-run rails.ini &&
	grep -q "^\[1\] ar: allreduce, 1 round on 3 lanes, 2 jobs" out &&
	grep -q "^    rail 0: 4 ranks: h1 h2 h3 h4$" out &&
	grep -q "^    rail 1: 4 ranks: h1 h2 h3 h4$" out &&
	grep -q "^    rail 2: 1 node: skipped" out &&
	fs_expect 0 run --dry-run plan.ini -n 3 &&
	grep -q "^\[2\] a2a: alltoall, 1 round on 1 lane, 1 job" out &&
	grep -q "^    rail 0: 3 ranks: node0 node1 node2$" out
'

# bad_run CONTENT WORD...: `fabscope run` refuses the plan with exit 2 and one line holding
# every WORD, and starts nothing
bad_run() {
	printf "$1" >bad.ini && shift &&
	fs_expect 2 run bad.ini -n 2 -o xbad &&
	ptp_one_error err "$@" &&
	! test -e xbad
}

test_expect_success $P 'bad plans: keys of the other kind, a test, bad values: exit 2, one line' '
	bad_run "[a]\nkind = allreduce\nsize = 1M\n" "bad.ini:3" "size" "kind = allreduce" "minbytes" &&
	bad_run "[a]\nkind = alltoall\nbidirectional = 1\n" "bad.ini:3" "bidirectional" "alltoall" &&
	bad_run "[a]\nkind = pairwise\nminbytes = 1M\n" "bad.ini:3" "minbytes" "allreduce or alltoall" &&
	bad_run "[a]\nkind = ring\nno-check = 1\n" "bad.ini:3" "no-check" &&
	bad_run "[a]\nkind = allreduce\ntest = bw\n" "bad.ini:3" "test" "allreduce" &&
	bad_run "[a]\nkind = alltoall\nalgo = ring\n" "bad.ini:3" "algo" "ring" "pairwise or direct" &&
	bad_run "[global]\nalgo = rhd\n[a]\nkind = alltoall\n" "bad.ini:2" "algo" "rhd" "[a]" &&
	bad_run "[a]\nkind = allreduce\niters = 0\n" "bad.ini:3" "iters" &&
	bad_run "[a]\nkind = allreduce\nmaxbytes = 1Q\n" "bad.ini:3" "maxbytes" &&
	bad_run "[global]\nminbytes = 4M\n[a]\nkind = allreduce\nmaxbytes = 1M\n" "bad.ini:5" "maxbytes" "below minbytes" &&
	bad_run "[a]\nkind = allreduce\nflows = 65\n" "bad.ini:3" "flows" "1 to 64" &&
	bad_run "[a]\nkind = allreduce\npoll = spin\n" "bad.ini:3" "poll" "busy" &&
	bad_run "[a]\nkind = allreduce\ntransport = carrier-pigeon\n" "transport" "carrier-pigeon" "[a]" &&
	# [global] keys go to the kinds that take them: size to the bw phase, *bytes to the collective
	printf "[global]\nsize = 64K\nminbytes = 64K\nmaxbytes = 64K\n[r]\nkind = ring\nduration = 0.3\n[a]\nkind = allreduce\nwarmup = 1\niters = 2\n" >mixed.ini &&
	fs_expect 0 run mixed.ini -n 2 -o r3 &&
	test $(jsonl_count r3/results.jsonl ".phase == \"r\" and .scope == \"aggregate\" and .status == \"ok\" and (.retest_for | not)") = 1 &&
	test $(coll_records r3/results.jsonl a allreduce 0 2) = 1
'

test_expect_success $P 'an agent killed mid-phase: the job fails naming it, the run goes on, exit 4' '
	cat >long.ini <<-\EOF &&
	[global]
	timeout = 5
	[ar]
	kind = allreduce
	minbytes = 256K
	maxbytes = 64M
	warmup = 1
	iters = 10
	[ping]
	kind = ping
	EOF
	fleet_run_bg run4.log long.ini -n 4 -o r4 --agent-timeout 3 &&
	fleet_records_wait r4/results.jsonl 1 60 &&
	victim= ranks= &&
	for p in $(fleet_agents $fleet_pid); do
		tr "\0" " " </proc/$p/cmdline | grep -q -- "--name node2 " && victim=$p
		ranks="$ranks $(pgrep -P $p)"
	done &&
	test -n "$victim" && test -n "$(echo $ranks)" &&
	kill -9 $victim &&
	fleet_wait $fleet_pid 60 && test $fleet_rc = 4 &&
	jsonl_ok r4/results.jsonl &&
	# the job: one error record naming the agent, with every rank of the group
	test $(jsonl_count r4/results.jsonl ".phase == \"ar\" and .status == \"error\" and
		(.error | test(\"agent node2 missing\")) and (.endpoints | length) == 4 and .rail == 0") = 1 &&
	test $(jsonl_count r4/results.jsonl ".phase == \"ar\" and .status == \"ok\"") -ge 1 &&
	test $(jsonl_count r4/results.jsonl ".phase == \"ar\" and .status == \"ok\"") -lt 9 &&
	grep -q "ar/allreduce/r1/rail0/4-ranks: agent node2 missing" run4.log &&
	# the run went on: the others answer the ping phase
	test $(jsonl_count r4/results.jsonl ".phase == \"ping\" and .status == \"ok\"") = 3 &&
	jq -e "(.nodes[] | select(.name == \"node2\") | .status) == \"missing\" and .failed_jobs == 2" r4/run.json >/dev/null &&
	grep -q "agent(s) missing" run4.log &&
	# the ranks of the group were stopped: none is left
	for p in $ranks; do test_wait_for 10 eval "! kill -0 $p 2>/dev/null" || return 1; done
'

# a collective's records stream size by size: one stopped half-way has not finished, and
# --resume must run it again whole, not count its first sizes as the job
test_expect_success $P 'a collective interrupted after its first sizes: --resume runs it again whole' '
	cat >sweep.ini <<-\EOF &&
	[ar]
	kind = allreduce
	minbytes = 256K
	maxbytes = 64M
	iters = 40
	EOF
	fleet_run_bg run8.log sweep.ini -n 4 -o r8 &&
	fleet_records_wait r8/results.jsonl 2 60 &&
	kill -INT $fleet_pid &&
	fleet_wait $fleet_pid 60 && test $fleet_rc = 130 &&
	jsonl_ok r8/results.jsonl &&
	before=$(wc -l <r8/results.jsonl) &&
	test $before -ge 2 && test $before -lt 9 &&
	test_grep "round 1/1 stopped, 0 of 1 jobs finished" run8.log &&
	test_must_be_empty r8/jobs.done &&
	FS_TIMEOUT=300 fs_expect 0 run --resume r8 &&
	test_grep "$before record(s) of jobs that did not finish moved to results.partial.jsonl" err &&
	# every size once, from the run that finished; the first run'"'"'s sizes kept aside
	test $(jq -r "select(.phase == \"ar\" and .status == \"ok\") | .msg_size_bytes" r8/results.jsonl |
		sort -u | wc -l) = 9 &&
	test $(wc -l <r8/results.jsonl) = 9 &&
	test $(wc -l <r8/results.partial.jsonl) = $before &&
	test_grep "^results: r8 (9 records)$" out &&
	test "$(cat r8/jobs.done)" = "ar/allreduce/r1/rail0/4-ranks" &&
	# resumed again: nothing left to run, nothing moved
	fs_expect 0 run --resume r8 &&
	! grep -q "moved to results.partial" err &&
	test $(wc -l <r8/results.jsonl) = 9 &&
	test $(wc -l <r8/results.partial.jsonl) = $before
'

test_expect_success $P 'wrong data in a collective fails the check: exit 1 and a failed line naming the lane' '
	# (a2a left to run, so that the resumed run runs, and checks every record at its end)
	mkdir r5 && cp r1/run.json r5/ &&
	jq -c "select(.phase != \"a2a\") |
	       if .phase == \"ar\" and .msg_size_bytes == 131072 then .metrics.wrong = 3 else . end" \
		r1/results.jsonl >r5/results.jsonl &&
	fs_expect 1 run --resume r5 &&
	grep -q "^failed: \[ar\] allreduce rail 0: 3 wrong elements at 128K (4 ranks)" out &&
	grep -q "^fabscope run: 3 wrong elements in 1 record: a collective.s data check failed" err &&
	jq -e ".wrong_records == 1 and ([.suspects[] | select(.kind == \"wrong-data\")] | length) == 1" r5/run.json >/dev/null &&
	# resumed again, nothing left: no agent, and the verdict stands (exit 1, one line)
	fs_expect 1 run --resume r5 &&
	ptp_one_error err "nothing left to run: every job of r5 has finished (5 records), 3 wrong elements in 1 of them" "no agent started"
'

test_expect_success $P 'a live wrong element (corrupt = 2): every size fails its check, exit 1, the run goes on' '
	cat >plan-bad.ini <<-\EOF &&
	[global]
	warmup = 1
	iters = 2

	[spoiled]
	kind = allreduce
	minbytes = 64K
	maxbytes = 128K
	corrupt = 2

	[clean]
	kind = alltoall
	minbytes = 64K
	maxbytes = 64K
	EOF
	fs_expect 1 run plan-bad.ini -n 3 -o r6 &&
	test $(jsonl_count r6/results.jsonl ".phase == \"spoiled\" and .metrics.wrong > 0") = 2 &&
	test $(jsonl_count r6/results.jsonl ".phase == \"clean\" and .metrics.wrong == 0") = 1 &&
	grep -q "^failed: \[spoiled\] allreduce rail 0: [1-9][0-9]* wrong elements at 64K (3 ranks)" out &&
	grep -q "^failed: \[spoiled\] allreduce rail 0: [1-9][0-9]* wrong elements at 128K (3 ranks)" out &&
	! grep -q "^failed: \[clean\]" out &&
	jq -e ".wrong_records == 2 and .failed_jobs == 0" r6/run.json >/dev/null
'

# crec PHASE TEST RAIL SIZE BUSBW WRONG: one record of a collective, as the coordinator writes it
crec() {
	printf '{"phase":"%s","test":"%s","kind":"%s","scope":"aggregate","status":"ok","rail":%s,"plane":0,"ranks":4,"msg_size_bytes":%s,"endpoints":[],"metrics":{"busbw_gbps":%s,"algbw_gbps":1,"time_us":10,"wrong":%s}}\n' \
		"$1" "$2" "$2" "$3" "$4" "$5" "$6"
}

test_expect_success TEST_TOOL 'the analysis: a lane slow at the largest size is named; wrong data is a failure' '
	mkdir -p a1 && {
		crec ar allreduce 0 1024 1.0 0; crec ar allreduce 0 1048576 90 0
		crec ar allreduce 1 1024 1.1 0; crec ar allreduce 1 1048576 20 0
		crec ar allreduce 2 1024 0.1 0; crec ar allreduce 2 1048576 95 0
		crec ar allreduce 3 1024 1.0 0; crec ar allreduce 3 1048576 88 0
		crec x alltoall 0 4096 50 0; crec x alltoall 1 4096 48 2
	} >a1/results.jsonl &&
	"$TEST_TOOL" analyze a1 >actual &&
	printf "wrong-data x alltoall 1 - -\nlane ar allreduce 1 - -\n" >expect &&
	test_cmp expect actual
'

test_done
