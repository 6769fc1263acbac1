#!/usr/bin/env bash
test_description='fabscope history (issue 43): add is idempotent by run id and one transaction a
run: killed with SIGKILL at 20 random points, the file is consistent (integrity_check), every run in
it whole or absent, and add again completes it; a second writer waits, then fails in one line (exit
3); bad input is one line and its exit code (a directory that is not a run, a FIFO for its records,
a file that is not a history, a symbolic link, a newer schema, no such run); list and diff read
what was added, the same bytes whatever the order of adding; nights of noise alone name nothing,
and a night when every link ran at 60 % is the machine (a night-wide shift), not a suspect; report
--history has the section and, in summary.json, what diff --json prints; a pair measured once is
judged with the run.s re-test of it'
# asan: always: feeds untrusted bytes to C code: results directories (run.json, results.jsonl, a FIFO) and files that are not histories
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-history.sh"

test_lazy_prereq SQLITE3 'command -v sqlite3'
test_require_in_ci SQLITE3 JQ

P=FABSCOPE,TEST_TOOL,SQLITE3,JQ

test_expect_success $P 'three nights of 64 nodes; one night.s suspects are watched until a run confirms one' '
	for k in 0 1 2; do
		"$TEST_TOOL" nightly n$k -n 64 --seed $((k + 1)) --night $k >/dev/null || return 1
	done &&
	# the planted faults of the third night are there that night alone, and no run re-tested them:
	# suspects, not confirmed, watched; nothing counts for the exit status
	"$FABSCOPE" history add --db pick.db n0 n1 n2 >/dev/null &&
	"$FABSCOPE" history diff --db pick.db --json >pick.json &&
	jq -e ".exit == 0 and (.suspects | length) > 1 and all(.suspects[]; .confirmed == false and .alarm == false) and
	       (.why | test(\"^no suspect confirmed tonight, .*; [0-9]+ suspects of one night, not confirmed\")) and
	       all(.suspects[]; .regression == false)" \
		pick.json >/dev/null &&
	# as a run that re-tested the node most off its peers writes it: confirmed
	hist_confirm n2 "$(jq -c "[.suspects[] | select(.kind == \"node\")] | min_by(.change)" pick.json)" &&
	jq -r ".suspects[0].node" n2/run.json >confirmed-node
'

test_expect_success $P 'three nights of 64 nodes; added once: whole' '
	"$FABSCOPE" history add --db ref.db n0 n1 n2 >out &&
	test_grep -x "3 added, 0 held already: ref.db" out &&
	hist_held ref.db >ref.held &&
	cat ref.held &&
	test $(wc -l <ref.held) = 3 &&
	# 64 nodes x 8 rails: 8 rounds of bw, one of lat (a ping is no lane result)
	awk -F"|" "\$2 != 4608 || \$3 != 4608 { exit 1 }" ref.held &&
	test "$(sqlite3 ref.db "PRAGMA integrity_check")" = ok &&
	test "$(sqlite3 ref.db "SELECT version FROM schema_version")" = 3 &&
	test "$(sqlite3 ref.db "SELECT count(*) FROM entity WHERE confirmed = 1")" = 1 &&
	"$FABSCOPE" history add --db ref.db n1 >out &&
	test_grep -x "n1: held already" out && hist_held ref.db >again && test_cmp ref.held again
'

test_expect_success $P 'killed at 20 random points: consistent, every run whole or absent; add completes' '
	# four files, five kills each: a kill finds runs added by the adds before it (held), one
	# half added, the file made or not yet; a pause of a millisecond every 64 results (a test
	# hook) makes an add last about a second, whatever the machine
	RANDOM=43 &&
	for i in $(seq 20); do
		ms=$((RANDOM % 1200)) && db=k$((i % 4)).db &&
		{ FABSCOPE_TEST_HISTORY_PAUSE=64 "$FABSCOPE" history add --db $db n0 n1 n2 >/dev/null 2>&1 & } &&
		pid=$! &&
		sleep $(printf "%d.%03d" $((ms / 1000)) $((ms % 1000))) &&
		{ kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; true; } &&
		test "$(sqlite3 $db "PRAGMA integrity_check")" = ok &&
		hist_held $db >now &&
		# every run in it is one of the reference, whole
		{ grep -vxF -f ref.held now >torn || true; } &&
		test_must_be_empty torn &&
		echo "kill $i after $ms ms: $(wc -l <now) run(s) whole" || return 1
	done &&
	for db in k0.db k1.db k2.db k3.db; do
		"$FABSCOPE" history add --db $db n0 n1 n2 >out &&
		hist_held $db >now && test_cmp ref.held now &&
		test "$(sqlite3 $db "PRAGMA integrity_check")" = ok || return 1
	done
'

test_expect_success $P 'a second writer waits --wait, then fails in one line, exit 3' '
	{ FABSCOPE_TEST_HISTORY_PAUSE=1 "$FABSCOPE" history add --db w.db n0 n1 n2 >slow.out 2>&1 & } &&
	pid=$! &&
	test_wait_for 10 test -s w.db-wal &&
	test_expect_exit 3 "$FABSCOPE" history add --db w.db --wait 0.2 n0 >out 2>err &&
	test_line_count = 1 err && test_grep "is busy (another writer holds it)" err &&
	wait $pid &&
	hist_held w.db >now && test_cmp ref.held now
'

test_expect_success $P 'bad input: one line, its exit code, nothing added' '
	mkdir notarun && echo "{}" >notarun/results.jsonl &&
	test_expect_exit 2 "$FABSCOPE" history add --db b.db notarun 2>err &&
	test_line_count = 1 err && test_grep "run.json. is not there" err &&
	test_expect_exit 2 "$FABSCOPE" history add --db b.db nosuch 2>err &&
	test_line_count = 1 err && test_grep "does not exist" err &&
	mkdir fifo && cp n0/run.json fifo/ && mkfifo fifo/results.jsonl &&
	test_expect_exit 3 "$FABSCOPE" history add --db b.db fifo 2>err &&
	test_line_count = 1 err && test_grep "not a regular file" err &&
	test "$(sqlite3 b.db "SELECT count(*) FROM run")" = 0 &&
	mkdir running && jq ".status = \"running\" | .id = \"still-running\"" n0/run.json >running/run.json &&
	cp n0/results.jsonl running/ &&
	"$FABSCOPE" history add --db c.db running >out 2>err &&
	test_line_count = 1 err && test_grep "warning: running: the run says it is still running" err &&
	test_grep -x "running: added" out &&
	echo "not a database at all, just text of some length to fill a page" >junk.db &&
	test_expect_exit 2 "$FABSCOPE" history list --db junk.db 2>err &&
	test_line_count = 1 err && test_grep "is not a fabscope history" err &&
	ln -s ref.db link.db &&
	test_expect_exit 2 "$FABSCOPE" history list --db link.db 2>err &&
	test_line_count = 1 err && test_grep "symbolic link" err &&
	ln -s /nonexistent/x side.db-wal &&
	test_expect_exit 2 "$FABSCOPE" history add --db side.db n0 2>err &&
	test_line_count = 1 err && test_grep "side.db-wal. is there and not a regular file" err &&
	test ! -e side.db &&
	test_expect_exit 2 "$FABSCOPE" history diff --db none.db 2>err &&
	test_line_count = 1 err && test_grep "no history .none.db." err &&
	test_expect_exit 2 "$FABSCOPE" history diff --db ref.db --run nosuch 2>err &&
	test_line_count = 1 err && test_grep "holds no run .nosuch." err &&
	test_expect_exit 2 "$FABSCOPE" history diff --db b.db 2>err &&
	test_line_count = 1 err && test_grep "holds no run" err &&
	test_expect_exit 2 "$FABSCOPE" history frob 2>err && test_grep "is not add, list, diff or trend" err &&
	test_expect_exit 2 "$FABSCOPE" history diff --db ref.db --fpr 0.7 2>err &&
	test_line_count = 1 err &&
	cp ref.db new.db && sqlite3 new.db "UPDATE schema_version SET version = 99" &&
	test_expect_exit 3 "$FABSCOPE" history list --db new.db 2>err &&
	test_line_count = 1 err && test_grep "schema 99, newer than" err &&
	test_expect_exit 3 "$FABSCOPE" history add --db new.db n0 2>err &&
	test_line_count = 1 err && test_grep "schema 99, newer than" err
'

test_expect_success $P 'list, diff, trend: what was added, oldest first, the same bytes in any order of adding' '
	"$FABSCOPE" history list --db ref.db --json >list.json &&
	jq -e "[.[].started] == [\"2026-12-04T01:00:00.000Z\", \"2026-12-05T01:00:00.000Z\",
		\"2026-12-06T01:00:00.000Z\"] and all(.[]; .results == 4608)" list.json >/dev/null &&
	test_expect_exit 1 "$FABSCOPE" history diff --db ref.db --json >d.json &&
	FABSCOPE_DB=ref.db test_expect_exit 1 "$FABSCOPE" history diff >d.txt &&
	"$FABSCOPE" history add --db o.db n2 >/dev/null && "$FABSCOPE" history add --db o.db n0 n1 >/dev/null &&
	test_expect_exit 1 "$FABSCOPE" history diff --db o.db --json >o.json &&
	test_cmp d.json o.json &&
	test_expect_exit 1 "$FABSCOPE" history diff --db o.db >o.txt && test_cmp d.txt o.txt &&
	"$FABSCOPE" history trend --db ref.db >t1 && "$FABSCOPE" history trend --db o.db >t2 && test_cmp t1 t2 &&
	test $(wc -l <t1) = 16 &&
	# the planted faults of night 3 (seed 3) that were there on night 1 or 2 too are known, the others new
	jq -e ".suspects | length > 0 and all(.[]; .status == \"new tonight\" or .status == \"known since\")" d.json >/dev/null &&
	# what counts for the exit status: the one suspect the run confirmed
	jq -e --arg n "$(cat confirmed-node)" "[.suspects[] | select(.alarm) | [.node, (.confirmed_by | test(\"^the run.s re-test$\"))]] ==
	       [[\$n, true]] and (.why | startswith(\"1 suspect confirmed tonight (new, or back)\"))" \
		d.json >/dev/null &&
	test_grep "^  node $(cat confirmed-node) .*; confirmed by the run.s re-test; " d.txt &&
	test_grep "; not confirmed: one night, and the run did not confirm it (watched, not counted); " d.txt
'

test_expect_success $P 'nights of noise only (within 2 %): nothing named, even with --min-change 0' '
	for k in 3 4 5 6; do
		"$TEST_TOOL" nightly q$k -n 64 --seed $((k + 1)) --night $k --no-faults >/dev/null || return 1
	done &&
	"$FABSCOPE" history add --db q.db q3 q4 q5 q6 >/dev/null &&
	for run in $("$FABSCOPE" history list --db q.db --json | jq -r ".[].run"); do
		"$FABSCOPE" history diff --db q.db --run $run --min-change 0 --json >q.json &&
		jq -e ".suspects == [] and .repeat == [] and .exit == 0 and .judged > 1000" q.json >/dev/null ||
		return 1
	done
'

test_expect_success $P 'a night when every link ran at 60 %: a night-wide shift, the machine; no suspect' '
	mkdir q7 &&
	jq -c ".id = \"20261211-010000-busy\" | .started = \"2026-12-11T01:00:00.000Z\"" q6/run.json >q7/run.json &&
	jq -c "if .metrics.bw_gbps then .metrics.bw_gbps *= 0.6 else . end" q6/results.jsonl >q7/results.jsonl &&
	"$FABSCOPE" history add --db q.db q7 >/dev/null &&
	"$FABSCOPE" history diff --db q.db >busy.txt &&
	cat busy.txt &&
	test_grep -x "suspects tonight: none" busy.txt &&
	test_grep "^night-wide: every lane of perm-bw bw 64 KiB -40.0 % against the nights before" busy.txt &&
	test_grep ! "night-wide: every lane of perm-lat" busy.txt
'

test_lazy_prereq GNUPLOT 'command -v gnuplot'

test_expect_success $P 'report --history: the section, and summary.json.s history is what diff --json prints' '
	{ "$FABSCOPE" report --history ref.db n2 -o rep --no-plots >out 2>err || test $? -le 5; } &&
	test_grep -x "## Since last night and over the last 3 runs" rep/report.md &&
	test_grep "^| node .* (perm-bw bw 64 KiB) | .* Gb/s | -[0-9.]* % (z [0-9.]*) | \*\*\(new tonight\|known since\)" rep/report.md &&
	jq -S .history rep/summary.json >from-report.json &&
	{ "$FABSCOPE" history diff --db ref.db --json || test $? = 1; } | jq -S . >from-diff.json &&
	test_cmp from-diff.json from-report.json &&
	test_grep "<h2>Since last night and over the last 3 runs</h2>" rep/report.html &&
	# a run the history does not hold: one line, exit 2, and what to do
	test_expect_exit 2 "$FABSCOPE" report --history q.db n2 -o rep2 --no-plots 2>err &&
	test_grep "holds no run .20261206-010000-000003." err
'

test_expect_success $P,GNUPLOT 'report --history with plots: every lane.s median and each suspect, run by run' '
	{ "$FABSCOPE" report --history ref.db n2 -o prep >/dev/null 2>&1 || test $? -le 5; } &&
	ls prep/plots >plots &&
	test_grep "trend-lanes-0.svg" plots && test_grep "trend-suspect-0.svg" plots &&
	test_grep "every lane.s median, run by run" prep/report.md
'

# the run's re-test of a suspect pair (retest_role again) is that pair's second result
retest_of() { # JOB VALUE ID: the record of JOB in q6 again, as a re-test for suspect ID
	jq -c --arg job "$1" --argjson v "$2" --arg id "$3" "select(.job == \$job) | .retest_for = \$id |
		.retest_role = \"again\" | .job += \"/retest\" | .metrics.bw_gbps = \$v" q9/results.jsonl
}

test_expect_success $P 'a pair measured once is judged with the run.s re-test: slow twice, a suspect; once, not' '
	mkdir q9 &&
	jq -c ".id = \"20261212-010000-retest\" | .started = \"2026-12-12T01:00:00.000Z\"" q6/run.json >q9/run.json &&
	a="perm-bw/bw/r1/rail0/gpu00001>gpu00009" &&
	b=$(jq -r "select(.job | startswith(\"perm-bw/bw/r2/rail3/gpu00002>\")) | .job" q6/results.jsonl) &&
	jq -c --arg a "$a" --arg b "$b" "if .job == \$a or .job == \$b then .metrics.bw_gbps *= 0.3 else . end" \
		q6/results.jsonl >q9/results.jsonl &&
	retest_of "$a" 110 s1 >retests && retest_of "$b" 381 s2 >>retests && cat retests >>q9/results.jsonl &&
	# the run named the pair slow twice, so its re-test confirmed it (records/retest.c); without
	# that in run.json, one night.s suspect is watched: exit 0
	"$FABSCOPE" history add --db r0.db q3 q4 q5 q6 q9 >/dev/null &&
	"$FABSCOPE" history diff --db r0.db --json >r0.json &&
	jq -e "[.suspects[] | [.kind, .node, .peer, .confirmed, .alarm]] ==
		[[\"pair\", \"gpu00001\", \"gpu00009\", false, false]] and .exit == 0" r0.json >/dev/null &&
	hist_confirm q9 "$(jq -c ".suspects[0]" r0.json)" &&
	"$FABSCOPE" history add --db r.db q3 q4 q5 q6 q9 >/dev/null &&
	test_expect_exit 1 "$FABSCOPE" history diff --db r.db --json >r.json &&
	jq -e "[.suspects[] | [.kind, .node, .peer, .rail, .status, (.confirmed_by | test(\"^the run.s re-test$\"))]] ==
		[[\"pair\", \"gpu00001\", \"gpu00009\", 0, \"new tonight\", true]]" r.json >/dev/null &&
	# the re-tests are the pairs. results only: the lanes and nodes have the plan.s rounds
	test "$(sqlite3 r.db "SELECT count(*) FROM result WHERE round = -1")" = 2 &&
	test "$(sqlite3 r.db "SELECT e.n FROM entity e JOIN grp g ON e.grp = g.id JOIN run r ON g.run = r.id
		WHERE r.run_id = \"20261212-010000-retest\" AND e.kind = 0 AND g.rail = 0 AND g.test = 0")" = 512
'

# slow_node SRC DST ID DAY: DST is SRC with every result of gpu00005 on rail 2 at 70 % (-30 %: a
# suspect of the history, not under half its peers: no run would have named it), a night of its own
slow_node() {
	mkdir $2 &&
	jq -c --arg id "$3" --arg day "$4" ".id = \$id | .started = \"2026-12-\(\$day)T01:00:00.000Z\"" $1/run.json >$2/run.json &&
	jq -c "if (.src.node == \"gpu00005\" or .dst.node == \"gpu00005\") and .src.rail == 2 and .metrics.bw_gbps
	       then .metrics.bw_gbps *= 0.7 else . end" $1/results.jsonl >$2/results.jsonl
}

test_expect_success $P 'a suspect two nights running is confirmed on the second (exit 1), then known (exit 0)' '
	slow_node q6 s1 20261213-010000-slow1 13 && slow_node q6 s2 20261214-010000-slow2 14 &&
	slow_node q6 s3 20261215-010000-slow3 15 &&
	"$FABSCOPE" history add --db s.db q3 q4 q5 q6 s1 >/dev/null &&
	"$FABSCOPE" history diff --db s.db --json >s1.json &&
	jq -e "[.suspects[] | [.kind, .node, .rail, .status, .confirmed, .alarm]] ==
	       [[\"node\", \"gpu00005\", 2, \"new tonight\", false, false]] and .exit == 0" s1.json >/dev/null &&
	"$FABSCOPE" history add --db s.db s2 >/dev/null &&
	test_expect_exit 1 "$FABSCOPE" history diff --db s.db --json >s2.json &&
	jq -e "[.suspects[] | [.kind, .node, .rail, .status, .confirmed_by, .alarm]] ==
	       [[\"node\", \"gpu00005\", 2, \"known since\", \"the night before (a suspect then too)\", true]] and
	       (.why | startswith(\"1 suspect confirmed tonight\"))" s2.json >/dev/null &&
	# a third night as the second: confirmed, but neither new nor worse: no page every night
	"$FABSCOPE" history add --db s.db s3 >/dev/null &&
	"$FABSCOPE" history diff --db s.db --json >s3.json &&
	jq -e "[.suspects[] | [.node, .confirmed, .alarm]] == [[\"gpu00005\", true, false]] and .exit == 0" s3.json >/dev/null
'

test_done
