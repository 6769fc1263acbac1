#!/usr/bin/env bash
test_description='fabscope history with a design (issue 43): a run of a plan with [global] topology
keeps the design it read in run.json, and history add keeps, per run, each of its nodes. NIC ports
(rail, plane) and the switch port it is cabled to (its host port too); the nodes of the run only,
nodes x rails rows; history add --topology gives the design of runs that carry none.  diff, its
JSON and the report name a node (a pair.s two ends) with the cable of the night it is named for,
and say a recabling where it happened, never mixing two nights. cables; a node the design lacks
is said so.  A file of schema 1 (the schema before cables, written here as it was) is refused by
the readers and migrated by add, its runs kept, and answers as a file made anew.  Bad input (a
design that is not one, given or carried) is one line and its exit code, nothing of it added'
# asan: always: feeds untrusted bytes to C code: designs carried in run.json and given with --topology, a history of an older schema
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-history.sh"

test_lazy_prereq SQLITE3 'command -v sqlite3'
test_require_in_ci SQLITE3 JQ

P=FABSCOPE,TEST_TOOL,SQLITE3,JQ
DESIGN=/etc/fabscope/fabric.topo

# with_design DIR FILE: DIR's run.json carrying FILE as the run of a plan with [global] topology
# keeps it (what fabscope run writes; the nights of test-tool nightly carry none)
with_design() {
	jq --rawfile t "$2" --arg p "$DESIGN" ".topology = {path: \$p, text: \$t}" "$1/run.json" >"$1/run.json+" &&
	mv "$1/run.json+" "$1/run.json"
}

# port_of FILE NODE RAIL: SWITCH:PORT the design FILE cables NODE's rail RAIL to
port_of() { awk -v h="$2:rail$3" '$1 == "link" && $2 == h { print $3 }' "$1"; }

# recable FILE NODE RAIL PORT: FILE with NODE's rail RAIL on port PORT of the same switch
recable() { sed "s/^link $2:rail$3 \([^:]*\):[^ ]* /link $2:rail$3 \1:$4 /" "$1"; }

# slow DIR NODE RAIL: every bw result through NODE on RAIL at 0.3 x
slow() {
	jq -c --arg n "$2" --argjson r "$3" "if .test == \"bw\" and .src.rail == \$r and
		(.src.node == \$n or .dst.node == \$n) then .metrics.bw_gbps *= 0.3 else . end" \
		"$1/results.jsonl" >"$1/r+" && mv "$1/r+" "$1/results.jsonl"
}

# cables DB: run|node|rail|plane|switch:port|host port, every cable held
cables() {
	sqlite3 "$1" "SELECT r.run_id, n.s, c.rail, c.plane, s.s || ':' || p.s, h.s FROM cable c
		JOIN run r ON c.run = r.id JOIN name n ON n.id = c.node JOIN name s ON s.id = c.switch
		JOIN name p ON p.id = c.port JOIN name h ON h.id = c.host_port"
}

# design_rows FILE: node|rail|plane|switch:port|host port of FILE's NIC ports but ghost's, sorted
design_rows() {
	awk '$1 == "link" && $2 ~ /^gpu/ { split($2, a, ":"); r = $4; sub("rail=", "", r);
		print a[1] "|" r "|-1|" $3 "|" a[2] }' "$1" | sort
}

test_expect_success $P 'a run of a plan with [global] topology keeps the design in run.json; add keeps its cables' '
	{
		echo "switch l1 tier=leaf rail=0" &&
		for i in 0 1 2 3; do echo "link node$i:eth0 l1:swp$((i + 1)) rail=0" || return 1; done
	} >fab.topo &&
	printf "[global]\ntopology = fab.topo\nduration = 0.2\ntimeout = 3\n\n[pw]\nkind = pairwise\ntest = bw\nsize = 16K\n" >p.ini &&
	{ timeout 120 "$FABSCOPE" run p.ini -n 4 -o r1 --no-retest >out 2>&1 || { cat out; false; }; } &&
	jq -e --rawfile t fab.topo ".topology == {path: \"./fab.topo\", text: \$t}" r1/run.json >/dev/null &&
	"$FABSCOPE" history add --db r.db r1 >out &&
	test_grep -x "r1: added, with the cables of ./fab.topo (the design its run.json carries)" out &&
	cables r.db | cut -d"|" -f2- | sort >got &&
	printf "node%d|0|-1|l1:swp%d|eth0\n" 0 1 1 2 2 3 3 4 >want &&
	test_cmp want got &&
	test "$(sqlite3 r.db "SELECT design FROM run")" = ./fab.topo &&
	"$FABSCOPE" history list --db r.db --json >l.json &&
	jq -e ".[0].design == \"./fab.topo\"" l.json >/dev/null
'

test_expect_success $P 'three nights with a design, the third recabled: each night.s cables, the run.s nodes only' '
	for k in 0 1 2; do
		"$TEST_TOOL" nightly n$k -n 64 --seed 5 --night $k --topology d.topo >f$k || return 1
	done &&
	# a node of the design that no run has: never held
	echo "link ghost:rail0 su001.0:p99 rail=0" >>d.topo &&
	awk "\$1 == \"node\" && \$3 == \"bw\" { print \$5, \$4; exit }" f0 >nic &&
	read node rail <nic &&
	port=$(port_of d.topo $node $rail) && leaf=${port%%:*} &&
	echo "$node rail $rail: $port" &&
	recable d.topo $node $rail p65 >d2.topo &&
	test "$(port_of d2.topo $node $rail)" = $leaf:p65 &&
	with_design n0 d.topo && with_design n1 d.topo && with_design n2 d2.topo &&
	"$FABSCOPE" history add --db c.db n0 n1 n2 >out &&
	for k in 0 1 2; do
		test_grep -x "n$k: added, with the cables of $DESIGN (the design its run.json carries)" out || return 1
	done &&
	run0=$(jq -r .id n0/run.json) && run1=$(jq -r .id n1/run.json) && run2=$(jq -r .id n2/run.json) &&
	cables c.db >all &&
	# 64 nodes x 8 rails a night, exactly the design.s (no ghost: not a node of the runs)
	test_line_count = 1536 all &&
	test "$(sqlite3 c.db "SELECT count(*) FROM name WHERE s = \"ghost\"")" = 0 &&
	design_rows d.topo >want0 && design_rows d2.topo >want2 &&
	test_line_count = 512 want0 &&
	grep "^$run0|" all | cut -d"|" -f2- | sort >got0 && test_cmp want0 got0 &&
	grep "^$run1|" all | cut -d"|" -f2- | sort >got1 && test_cmp want0 got1 &&
	grep "^$run2|" all | cut -d"|" -f2- | sort >got2 && test_cmp want2 got2 &&
	! cmp -s want0 want2 &&
	test "$(sqlite3 c.db "SELECT count(*) FROM run WHERE design = \"$DESIGN\"")" = 3
'

test_expect_success $P 'diff names each node with the cable of its night and says the recabling' '
	"$FABSCOPE" history diff --db c.db >d.txt &&
	cat d.txt &&
	test_grep "^  node $node rail $rail plane 0 (cable $node:rail$rail -> $leaf:p65) (perm-bw bw 64 KiB): .*; known since" d.txt &&
	test_grep -x "    recabled at run $run2 (2026-12-06T01:00:00.000Z): $node:rail$rail -> $port before, $node:rail$rail -> $leaf:p65 since" d.txt &&
	test "$(grep -c recabled d.txt)" = 1 &&
	# the other slow NIC, its own cable, never recabled
	awk "\$1 == \"node\" && \$3 == \"bw\" { n++ } n == 2 { print \$5, \$4; exit }" f0 >nic2 &&
	read node2 rail2 <nic2 &&
	test_grep "^  node $node2 rail $rail2 plane 0 (cable $node2:rail$rail2 -> $(port_of d.topo $node2 $rail2)) (perm-bw" d.txt &&
	test_grep "^  lane rail [0-9] plane 0 (perm-bw bw 64 KiB)" d.txt &&
	"$FABSCOPE" history diff --db c.db --json >d.json &&
	jq -e --arg n $node --arg leaf $leaf --arg r0 $run0 --arg r2 $run2 --arg d "$DESIGN" --argjson rail $rail "
		(.suspects[] | select(.node == \$n)) as \$e |
		\$e.cable == {switch: \$leaf, port: \"p65\", host_port: \"rail\(\$rail)\", run: \$r2, design: \$d} and
		\$e.recabled == [{node: \$n, at: {run: \$r2, started: \"2026-12-06T01:00:00.000Z\"},
			from: {switch: \$leaf, port: \"p\(\$n[3:] | tonumber)\", host_port: \"rail\(\$rail)\"},
			to: {switch: \$leaf, port: \"p65\", host_port: \"rail\(\$rail)\"}}] and
		\$e.since.run == \$r0" d.json >/dev/null &&
	jq -e "[.suspects[] | select(.kind != \"lane\")] | length > 0 and all(.cable.switch | type == \"string\")" d.json >/dev/null &&
	jq -e "[.suspects[] | select(.kind == \"lane\")] | all(has(\"cable\") | not)" d.json >/dev/null &&
	# the night before: its own cable, nothing recabled yet (the slow NICs. second night: each
	# confirmed by the night before, so that night exits 1)
	test_expect_exit 1 "$FABSCOPE" history diff --db c.db --run $run1 >d1.txt &&
	test_grep "^  node $node rail $rail plane 0 (cable $node:rail$rail -> $port) (perm-bw" d1.txt &&
	test_grep ! recabled d1.txt
'

test_expect_success $P 'a repeat offender named as on its last night a suspect; a night without a design; not in the design; a pair' '
	# four nights of noise; gpu00010 rail 3 slow on the first and third (back: a repeat offender),
	# gpu00020 rail 1 slow tonight (new), gpu00030 rail 5 too (and the design has no port of it);
	# the second night carries no design, tonight gpu00010 rail 3 is recabled to p65
	for k in 0 1 2 3; do
		"$TEST_TOOL" nightly q$k -n 64 --seed $((k + 11)) --night $k --no-faults >/dev/null || return 1
	done &&
	slow q0 gpu00010 3 && slow q2 gpu00010 3 && slow q3 gpu00020 1 && slow q3 gpu00030 5 &&
	recable d.topo gpu00010 3 p65 | grep -v "^link gpu00030:rail5 " >dq3.topo &&
	with_design q0 d.topo && with_design q2 d.topo && with_design q3 dq3.topo &&
	# a pair measured once, slow twice with the run.s re-test of it: a suspect pair
	job=$(jq -r "select(.job | startswith(\"perm-bw/bw/r1/rail2/\")) | .job" q3/results.jsonl | head -n 1) &&
	a=${job##*/} && b=${a#*>} && a=${a%>*} &&
	jq -c --arg j "$job" "if .job == \$j then .metrics.bw_gbps *= 0.3 else . end" q3/results.jsonl >r+ &&
	jq -c --arg j "$job" "select(.job == \$j) | .retest_for = \"s1\" | .retest_role = \"again\" |
		.job += \"/retest\"" r+ >retest && cat r+ retest >q3/results.jsonl &&
	# (slow twice, the run.s re-test confirmed it, as run.json says; the nodes of tonight are
	# suspects of one night, watched)
	hist_confirm q3 "{\"kind\": \"pair\", \"phase\": \"perm-bw\", \"test\": \"bw\", \"rail\": 2, \"plane\": 0,
		\"size\": 65536, \"node\": \"$a\", \"peer\": \"$b\"}" &&
	"$FABSCOPE" history add --db q.db q0 q1 q2 q3 >out &&
	test_grep -x "q1: added" out &&
	test "$(sqlite3 q.db "SELECT count(*) FROM run WHERE design IS NULL")" = 1 &&
	test "$(cables q.db | cut -d"|" -f1 | sort | uniq -c | awk "{ print \$1 }" | tr "\n" " ")" = "512 512 511 " &&
	qr0=$(jq -r .id q0/run.json) && qr2=$(jq -r .id q2/run.json) && qr3=$(jq -r .id q3/run.json) &&
	test_expect_exit 1 "$FABSCOPE" history diff --db q.db >q.txt &&
	cat q.txt &&
	test_grep "^  node gpu00020 rail 1 plane 0 (cable gpu00020:rail1 -> su001.1:p20) (perm-bw bw 64 KiB): .*; new tonight" q.txt &&
	test_grep "^  node gpu00030 rail 5 plane 0 (cable gpu00030: not in $DESIGN) (perm-bw bw 64 KiB): .*; new tonight" q.txt &&
	test_grep "^  pair $a -> $b rail 2 plane 0 (cables $a:rail2 -> $(port_of d.topo $a 2), $b:rail2 -> $(port_of d.topo $b 2)) (perm-bw bw 64 KiB): .*; new tonight" q.txt &&
	sed -n "/^repeat offenders/,/^result/p" q.txt >rep.txt &&
	test_grep "^  node gpu00010 rail 3 plane 0 (cable gpu00010:rail3 -> su001.3:p10 on run $qr2) (perm-bw bw 64 KiB): known since .* (run $qr0); a suspect in 2 of the 4 runs" rep.txt &&
	test_grep -x "    recabled at run $qr3 (2026-12-07T01:00:00.000Z): gpu00010:rail3 -> su001.3:p10 before, gpu00010:rail3 -> su001.3:p65 since" rep.txt &&
	test_expect_exit 1 "$FABSCOPE" history diff --db q.db --json >q.json &&
	jq -e "[.suspects[] | select(.alarm) | .kind] == [\"pair\"] and
	       ([.suspects[] | select(.node == \"gpu00020\" or .node == \"gpu00030\") | .confirmed] == [false, false])" \
		q.json >/dev/null &&
	jq -e "(.suspects[] | select(.kind == \"pair\")) as \$p | \$p.cable.switch == \"su001.2\" and
		\$p.peer_cable.host_port == \"rail2\" and (\$p | has(\"recabled\") | not)" q.json >/dev/null &&
	jq -e --arg d "$DESIGN" --arg r "$qr3" "(.suspects[] | select(.node == \"gpu00030\")).cable ==
		{switch: null, port: null, host_port: null, run: \$r, design: \$d}" q.json >/dev/null &&
	{ "$FABSCOPE" report --history q.db q3 -o rep --no-plots >/dev/null 2>&1 || test $? -le 5; } &&
	test_grep "^| node gpu00020 rail 1 plane 0 (cable gpu00020:rail1 -> su001.1:p20) (perm-bw bw 64 KiB) |" rep/report.md &&
	test_grep "^| node gpu00010 rail 3 plane 0 (cable gpu00010:rail3 -> su001.3:p10 on run $qr2) (perm-bw bw 64 KiB); recabled at run $qr3 (2026-12-07T01:00:00.000Z): gpu00010:rail3 -> su001.3:p10 before, gpu00010:rail3 -> su001.3:p65 since |" rep/report.md &&
	jq -S .history rep/summary.json >from-report.json && jq -S . q.json >from-diff.json &&
	test_cmp from-diff.json from-report.json
'

test_expect_success $P 'a file of schema 1: the readers refuse it, add migrates it, and it answers as one made anew' '
	# schema 1 as fabscope wrote it before cables (report/history-store.c migration[0])
	cat >v1.sql <<-\EOF &&
	CREATE TABLE schema_version(version INTEGER NOT NULL);
	INSERT INTO schema_version(version) VALUES (1);
	CREATE TABLE name(id INTEGER PRIMARY KEY, s TEXT NOT NULL UNIQUE);
	CREATE TABLE run(id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, started TEXT NOT NULL, status TEXT, version TEXT, plan_path TEXT, plan_text TEXT, hostfile_text TEXT, dir TEXT, nresults INTEGER NOT NULL DEFAULT 0);
	CREATE TABLE label(run INTEGER NOT NULL, k TEXT NOT NULL, v TEXT, PRIMARY KEY(run, k)) WITHOUT ROWID;
	CREATE TABLE node(run INTEGER NOT NULL, name INTEGER NOT NULL, leaf TEXT, pod TEXT, PRIMARY KEY(run, name)) WITHOUT ROWID;
	CREATE TABLE grp(id INTEGER PRIMARY KEY, run INTEGER NOT NULL, phase INTEGER NOT NULL, test INTEGER NOT NULL, rail INTEGER NOT NULL, plane INTEGER NOT NULL, size REAL NOT NULL, UNIQUE(run, phase, test, rail, plane, size));
	CREATE TABLE result(grp INTEGER NOT NULL, src INTEGER NOT NULL, dst INTEGER NOT NULL, round INTEGER NOT NULL, v REAL NOT NULL);
	CREATE INDEX result_grp ON result(grp);
	CREATE TABLE entity(grp INTEGER NOT NULL, kind INTEGER NOT NULL, a INTEGER NOT NULL, b INTEGER NOT NULL, v REAL NOT NULL, n INTEGER NOT NULL, PRIMARY KEY(grp, kind, a, b)) WITHOUT ROWID;
	EOF
	# the first two nights without their design, as schema 1 held them: the rows of a file
	# made now, under the old tables
	for k in 0 1; do
		"$TEST_TOOL" nightly m$k -n 64 --seed 5 --night $k >/dev/null || return 1
	done &&
	"$FABSCOPE" history add --db src.db m0 m1 >/dev/null &&
	sqlite3 v1.db <v1.sql &&
	sqlite3 v1.db "ATTACH \"src.db\" AS s; INSERT INTO name SELECT * FROM s.name;
		INSERT INTO run SELECT id, run_id, started, status, version, plan_path, plan_text, hostfile_text, dir,
			nresults FROM s.run;
		INSERT INTO label SELECT * FROM s.label; INSERT INTO node SELECT * FROM s.node;
		INSERT INTO grp SELECT * FROM s.grp; INSERT INTO result SELECT * FROM s.result;
		INSERT INTO entity SELECT grp, kind, a, b, v, n FROM s.entity" &&
	hist_held v1.db >v1.held && test_line_count = 2 v1.held &&
	test_expect_exit 3 "$FABSCOPE" history list --db v1.db 2>err &&
	test_line_count = 1 err &&
	test_grep "is a history of schema 1: .fabscope history add. migrates it to 3" err &&
	test_expect_exit 3 "$FABSCOPE" history diff --db v1.db 2>err && test_line_count = 1 err &&
	"$FABSCOPE" history add --db v1.db n2 >out &&
	test_grep -x "n2: added, with the cables of $DESIGN (the design its run.json carries)" out &&
	test "$(sqlite3 v1.db "SELECT version FROM schema_version")" = 3 &&
	test "$(sqlite3 v1.db "PRAGMA integrity_check")" = ok &&
	hist_held v1.db | head -n 2 >old.held && test_cmp v1.held old.held &&
	test "$(sqlite3 v1.db "SELECT count(*) FROM run WHERE design IS NULL")" = 2 &&
	cables v1.db | cut -d"|" -f1 | sort -u >runs && echo "$run2" >want && test_cmp want runs &&
	"$FABSCOPE" history add --db anew.db m0 m1 n2 >/dev/null &&
	"$FABSCOPE" history diff --db v1.db --json >mig.json &&
	"$FABSCOPE" history diff --db anew.db --json >anew.json &&
	test_cmp anew.json mig.json &&
	jq -e "[.suspects[] | select(.kind == \"node\")] | length > 0 and all(.cable.run == \"$run2\")" mig.json >/dev/null
'

test_expect_success $P 'add --topology: the design of runs that carry none; bad designs: one line, nothing of them added' '
	"$FABSCOPE" history add --db t.db --topology d.topo m0 n2 >out &&
	test_grep -x "m0: added, with the cables of d.topo (--topology)" out &&
	test_grep -x "n2: added, with the cables of $DESIGN (the design its run.json carries)" out &&
	cables t.db >tc &&
	grep "^$run0|" tc | cut -d"|" -f2- | sort >got && test_cmp want0 got &&
	grep "^$run2|" tc | cut -d"|" -f2- | sort >got && test_cmp want2 got &&
	test "$(sqlite3 t.db "SELECT design FROM run WHERE run_id = \"$run0\"")" = d.topo &&
	test_expect_exit 2 "$FABSCOPE" history diff --db t.db --topology d.topo 2>err &&
	test_line_count = 1 err && test_grep "history diff: --topology is for add" err &&
	test_expect_exit 2 "$FABSCOPE" history add --db none.db --topology nosuch.topo m0 2>err &&
	test_line_count = 1 err && test_grep "cannot read topology .nosuch.topo." err &&
	test ! -e none.db &&
	printf "switch l1 tier=leaf\nlink gpu00001:rail0 l1:p1 rail=x\n" >bad.topo &&
	test_expect_exit 2 "$FABSCOPE" history add --db none.db --topology bad.topo m0 2>err &&
	test_line_count = 1 err && test_grep "^fabscope history: bad.topo:2: " err &&
	test ! -e none.db &&
	mkdir bad && cp m1/results.jsonl bad/ && cp m1/run.json bad/ && with_design bad bad.topo &&
	test_expect_exit 2 "$FABSCOPE" history add --db b.db m0 bad >out 2>err &&
	test_line_count = 1 err && test_grep "bad/run.json (topology $DESIGN):2: " err &&
	test_grep -x "m0: added" out &&
	test "$(sqlite3 b.db "SELECT run_id FROM run")" = "$run0" &&
	test "$(sqlite3 b.db "SELECT count(*) FROM cable")" = 0 &&
	test "$(sqlite3 b.db "PRAGMA integrity_check")" = ok
'

test_done
