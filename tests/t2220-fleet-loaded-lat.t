#!/usr/bin/env bash
test_description='latency under load (a phase with load = bw): on a small leaf-spine fabric of
namespaces, every lat test of a loaded phase runs beside a bw test of its pair that started
first and outlasts it; its records say they were measured under load and name the load, the bw
records of the load are marked as the load (kind "load") and name the lat test they loaded, the
records of an idle phase carry neither; and a plan with a load where it means nothing is refused'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$ll
P=ROOT,NETNS,FABSCOPE,JQ
test_require_in_ci ROOT NETNS FABSCOPE JQ

# jq_true FILE WHAT FILTER: FILTER, on the records of FILE as one array, must be true
jq_true() {
	jq -e -s "$3" "$1" >/dev/null && return 0
	echo "jq_true: $1: not true: $2" >&2
	return 1
}

# The time a record was made (when its measurement ended), in seconds, to the millisecond; a
# record's lat and load by its pair ("src>dst"), aggregate records of test lat or bw only.
JQ_DEFS='def t: .time | capture("^(?<s>[^.]*)[.](?<ms>[0-9]+)Z$") | (.s + "Z" | fromdate) + (.ms | tonumber) / 1000;
def pair: .src.node + ">" + .dst.node;
def lat($ph): [.[] | select(.phase == $ph and .test == "lat" and .scope == "aggregate")];
def loads: [.[] | select(.kind == "load" and .scope == "aggregate")];'

# bad_plan CONTENT WORD...: a dry run refuses the plan with exit 2 and one line holding every WORD
bad_plan() {
	printf "$1" >bad.ini && shift &&
	test_expect_exit 2 "$FABSCOPE" run --dry-run bad.ini -n 2 >out 2>err &&
	test $(wc -l <err) = 1 &&
	for w; do grep -qF -- "$w" err || { echo "no \"$w\" in: $(cat err)"; return 1; }; done
}

test_expect_success FABSCOPE 'a load where it means nothing is one line naming the file, line and key' '
	bad_plan "[a]\nkind = pairwise\ntest = bw\nload = bw\nduration = 1\n" "bad.ini:4" "load = bw" "test = lat" &&
	bad_plan "[a]\nkind = pairwise\ntest = bw,lat\nload = bw\nduration = 1\n" "bad.ini:4" "test = bw,lat" &&
	bad_plan "[a]\nkind = ring\ntest = lat\nload = tcp\nduration = 1\n" "bad.ini:4" "load" "tcp" "give bw" &&
	bad_plan "[a]\nkind = ring\ntest = lat\nload = bw\n" "bad.ini:4" "needs duration" &&
	bad_plan "[global]\nduration = 1\n[a]\nkind = ring\ntest = lat\niters = 500\nload = bw\n" \
		"bad.ini:7" "needs duration" "iters" &&
	bad_plan "[a]\nkind = ring\ntest = lat\nload = bw\nduration = 1\nwarmup = 100\n" "bad.ini:6" "warmup" "seconds" &&
	bad_plan "[a]\nkind = ping\nload = bw\n" "bad.ini:3" "load = bw" "not ping" &&
	bad_plan "[global]\nload = bw\n[a]\nkind = ring\n" "bad.ini:2" "load" "phase section" &&
	# the load options are checked by bw, at the line that gave them
	bad_plan "[a]\nkind = ring\ntest = lat\nload = bw\nduration = 1\nflows = 5000\n" "bad.ini:6" "flows" "5000"
'

test_expect_success $P 'a fabric of 6 hosts on one rail, 3 leaves, 2 spines, at 200 Mbit/s' '
	test_atexit "\"$FABRIC\" down -p $PFX" &&
	"$FABRIC" up -p $PFX -G 3 -H 2 -R 1 -S 2 -r 200mbit &&
	"$FABRIC" hostfile -p $PFX >hosts &&
	test $(grep -c "^h[1-6] netns=$PFX-h[1-6] rail0=[0-9.]* leaf=l[1-3]$" hosts) = 6 &&
	cat >plan.ini <<-\EOF
	[global]
	hostfile = hosts
	duration = 2
	timeout = 5

	# each host sends to the next: every host is client of one pair and server of another
	[idle]
	kind = ring
	test = lat

	[loaded]
	kind = ring
	test = lat
	load = bw
	EOF
'

test_expect_success $P 'the dry run shows the load of the loaded phase, and only there' '
	"$FABSCOPE" run --dry-run plan.ini >dry &&
	test_grep "^\[2\] loaded: ring lat, 1 round on 1 lane, 6 jobs per test" dry &&
	test_grep "^    under load: each lat job beside a bw job of its pair, started first (6 load jobs" dry &&
	test $(grep -c "under load" dry) = 1
'

test_expect_success $P 'an idle and a loaded phase run: every test measured, nothing failed' '
	{ timeout 120 "$FABSCOPE" run plan.ini -o r1 -v >out 2>err || { cat out err >&2; false; }; } &&
	jsonl_ok r1/results.jsonl &&
	test $(jsonl_count r1/results.jsonl ".status != \"ok\"") = 0 &&
	test $(jsonl_count r1/results.jsonl ".phase == \"idle\" and .test == \"lat\"") = 6 &&
	test $(jsonl_count r1/results.jsonl ".phase == \"loaded\" and .test == \"lat\"") = 6 &&
	test $(jsonl_count r1/results.jsonl ".phase == \"loaded\" and .test == \"bw\" and .scope == \"aggregate\" and (.retest_for | not)") = 6 &&
	test $(jsonl_count r1/results.jsonl ".phase == \"idle\" and .test == \"bw\"") = 0 &&
	# the coordinator started each lat job beside its running load
	test $(grep -c "loaded/load/r1/rail0/h[1-6]>h[1-6]: the load.s client started" err) = 6 &&
	test $(grep -c "loaded/lat/r1/rail0/h[1-6]>h[1-6]: started beside its load loaded/load/" err) = 6
'

test_expect_success $P 'loaded lat records are marked and name their load; idle ones carry no mark' '
	jq_true r1/results.jsonl "every lat record of the loaded phase: params.load bw, load_job its load" \
		"$JQ_DEFS"" lat(\"loaded\") | length == 6 and all(.[]; .params.load == \"bw\" and .kind == \"ring\" and
		  .load_job == (.job | sub(\"/lat/\"; \"/load/\")))" &&
	jq_true r1/results.jsonl "no lat record of the idle phase has a mark" \
		"$JQ_DEFS"" lat(\"idle\") | length == 6 and
		  all(.[]; (.params | has(\"load\") | not) and (has(\"load_job\") | not) and .kind == \"ring\")" &&
	jq_true r1/results.jsonl "every bw record is the load (kind load), of the loaded phase, naming its lat" \
		"[.[] | select(.test == \"bw\")] | length == 12 and all(.[]; .kind == \"load\" and
		  .phase == \"loaded\" and .load_for == (.job | sub(\"/load/\"; \"/lat/\")))" &&
	jq_true r1/results.jsonl "load and lat name each other, pair by pair" \
		"$JQ_DEFS"" (lat(\"loaded\") | map({(.job): .load_job}) | add) as \$lj |
		  loads | length == 6 and all(.[]; \$lj[.load_for] == .job)"
'

test_expect_success $P 'each load overlaps its lat test: it ended after it, and measured while it ran' '
	# a lat ends before its load does (else its job fails), and after the load began measuring
	jq_true r1/results.jsonl "lat end <= load end, and lat end > load end - the load s duration" \
		"$JQ_DEFS"" (loads | map({(.job): {end: t, dur: .metrics.duration_s}}) | add) as \$ld |
		  lat(\"loaded\") | all(.[]; \$ld[.load_job] as \$l | t <= \$l.end and t > \$l.end - \$l.dur and
		    t - .params.duration_s < \$l.end)"
'

test_expect_success $P 'queues behind a load only add delay: loaded p99 >= idle p50, pair by pair' '
	jq_true r1/results.jsonl "each pair: p99 under load at least its idle p50" \
		"$JQ_DEFS"" (lat(\"idle\") | map({(pair): .metrics.lat_us.p50}) | add) as \$idle |
		  lat(\"loaded\") | length == 6 and all(.[]; .metrics.lat_us.p99 >= \$idle[pair])"
'

test_expect_success $P 'the report: the loaded phase against the idle one, the load no bandwidth result' '
	# (no thresholds: the latency phases have no criterion, the verdict INCOMPLETE)
	test_expect_exit 5 "$FABSCOPE" report r1 -o rep --no-plots >rep.out &&
	jq -e ".loaded_latency | length == 1 and .[0].phase == \"loaded\" and .[0].idle_phase == \"idle\"
		and .[0].p99_us >= .[0].idle_p50_us" rep/summary.json &&
	jq -e "[.runs[0].groups[] | select(.test == \"bw\")] == []" rep/summary.json &&
	test_grep "^## Latency under load$" rep/report.md &&
	! grep -q "loaded.*bw" out
'

test_done
