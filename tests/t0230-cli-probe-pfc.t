#!/usr/bin/env bash
test_description='fabscope probe pfc end to end on counter fixture trees laid out like an mlx5
host, whose values a writer process changes over time while the probe samples them: a PFC storm
(the peer pausing us non-stop during the load) is detected; ECN marks and CNPs rising before the
first pause give "ECN before PFC: yes", pauses first give "no"; quiet counters give "clean"; a
sender runs real incast load (bw flows on a traffic class) to a target that serves it with
--serve; bad options, a dead target and an interrupt each keep what was measured or say why
in one line'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-pfc.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_require_in_ci FABSCOPE JQ
P=FABSCOPE,JQ
PORT=$(ptp_port 0)	# and PORT + 1, PORT + 2 (this script's block: lib-ptp.sh)
# the polarization probe's source ports (its flows' entropy), up to 4: of the block too, never the
# default 40000, which is in the kernel's ephemeral range: any loopback connection may hold it
SPORT=$(ptp_port 4)

# set ROOT PAUSES DURATION [ECN CNP]: the counters that move, each file written to a temporary
# name and renamed, so that the probe never reads half a file (two forks: the loop must keep up
# on a loaded machine)
set_ctrs() {
	local r=$1 hwc=$1/sys/class/infiniband/mlx5_0/ports/1/hw_counters
	eth "$r/next" rx_prio3_pause=$2 tx_prio3_pause=0 rx_prio3_pause_duration=$3 \
		tx_prio3_pause_duration=0 rx_prio3_discards=0 rx_discards_phy=0 \
		tx_pause_storm_warning_events=0 tx_pause_storm_error_events=0 &&
	if [ $# -gt 3 ]; then
		echo "$4" >"$r/next/e" && echo "$5" >"$r/next/c" &&
		mv "$r/next/e" "$hwc/np_ecn_marked_roce_packets" && mv "$r/next/c" "$hwc/rp_cnp_handled"
	fi &&
	mv "$r/next/ethtool/eth2" "$r/ethtool/eth2"
}

# writer ROOT MODE [ERR]: change the counters until ROOT/stop exists, as functions of the time
# since ROOT/go appeared, or with ERR since the probe said on it that it is sampling (so that a
# probe that starts late on a busy machine still sees the first intervals quiet, and a slow
# loop changes nothing but the resolution).
# storm: from 0.6 s the peer pauses us all the time (2 s of pause per millisecond, clamped to
# the interval); ecn: ECN marks and CNPs from 0.3 s, light pauses (1 %) from 1.2 s; pfc: the
# other way round; quiet: nothing moves
writer() {
	local r=$1 mode=$2 err=${3:-} t0 ms p=0 d=0 e=0 c=0
	mkdir -p "$r/next/ethtool" || return 1
	if [ -n "$err" ]; then
		while ! grep -qs "sampling" "$err" && [ ! -e "$r/stop" ]; do sleep 0.01; done
	else
		while [ ! -e "$r/go" ]; do sleep 0.01; done
	fi
	t0=${EPOCHREALTIME/./}
	while [ ! -e "$r/stop" ]; do
		ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
		case $mode in
		storm)	((ms >= 600)) && p=$((ms - 600)) d=$(((ms - 600) * 2000000)) ;;
		ecn)	((ms >= 300)) && e=$(((ms - 300) * 10)) c=$(((ms - 300) / 2))
			((ms >= 1200)) && p=$(((ms - 1200) / 10)) d=$(((ms - 1200) * 10)) ;;
		pfc)	((ms >= 300)) && p=$(((ms - 300) / 10)) d=$(((ms - 300) * 10))
			((ms >= 1200)) && e=$(((ms - 1200) * 10)) c=$(((ms - 1200) / 2)) ;;
		esac
		case $mode in
		ecn | pfc) set_ctrs "$r" $p $d $e $c ;;
		*) set_ctrs "$r" $p $d ;;
		esac || return 1
		sleep 0.02
	done
}

# fixture ROOT: an mlx5 host with quiet counters
fixture() {
	mlx5 "$1" &&
	eth "$1" rx_prio3_pause=0 tx_prio3_pause=0 rx_prio3_pause_duration=0 tx_prio3_pause_duration=0 \
		rx_prio3_discards=0 rx_discards_phy=0 tx_pause_storm_warning_events=0 \
		tx_pause_storm_error_events=0
}

writer_bg() { writer "$@" & wpid=$!; }

# watch ROOT MODE OUT [ARGS...]: the probe watching ROOT's eth2 (0.2 s intervals, 0.4 s before,
# 1.2 s of "load", 0.4 s after, unless ARGS say otherwise) while the writer runs MODE; the record
# in OUT.json, the text in OUT.txt
watch() {
	local r=$1 mode=$2 out=$3 rc
	shift 3
	rm -f "$r/go" "$r/stop" "$out.err" &&
	writer_bg "$r" "$mode" "$out.err" &&
	"$FABSCOPE" probe pfc -i eth2 --counters-root "$r" --interval 0.2 --before 0.4 -D 1.2 \
		--after 0.4 -o "$out.json" "$@" >"$out.txt" 2>"$out.err"
	rc=$?
	touch "$r/stop"
	wait $wpid
	[ $rc = 0 ] || { cat "$out.err" >&2; return 1; }
}

test_expect_success $P 'a PFC storm: the peer pauses us through the load, detected on rx' '
	fixture fx &&
	watch fx storm storm -D 1.8 &&
	# -o FILE: JSON lines (fabscope-records(7)), the one record on one line
	test $(wc -l <storm.json) = 1 && jq -e ".test == \"pfc\"" storm.json >/dev/null &&
	jq -s -e ".[0].test == \"pfc\" and .[0].role == \"monitor\" and .[0].verdict == \"storm\" and .[0].storm" storm.json &&
	jq -s -e ".[0].priorities[] | select(.prio == 3) | .storm == \"rx\" and .storm_run >= 3 and .storm_from >= 1
		and .rx_paused_max == 1 and .estimated == false and .rx_frames > 0" storm.json &&
	# quiet before the load: the first interval was not paused
	jq -s -e ".[0].timeline.prio[\"3\"].rx_paused[0] == 0" storm.json &&
	jq -s -e ".[0].timeline.phase | index(\"during\") == 2" storm.json &&
	# no --tclass, no --prio: unknown, so null (not -1)
	jq -s -e ".[0].params | .tclass == null and .prio == null" storm.json &&
	test_grep "PFC STORM: paused by the peer" storm.txt &&
	test_grep "^# verdict: storm" storm.txt
'

test_expect_success $P 'ECN marks and CNPs before the first pause: ECN before PFC yes' '
	fixture fx2 &&
	watch fx2 ecn ecn &&
	jq -s -e ".[0].verdict == \"paused\" and .[0].ecn_first == \"yes\" and .[0].storm == false" ecn.json &&
	jq -s -e ".[0].first_ecn >= 0 and .[0].first_pause > .[0].first_ecn" ecn.json &&
	jq -s -e ".[0].metrics.ecn_marked > 0 and .[0].metrics.cnp_handled > 0" ecn.json &&
	jq -s -e ".[0].priorities[] | select(.prio == 3) | .ecn_first == \"yes\" and .storm == \"none\"" ecn.json &&
	jq -s -e ".[0].timeline.ecn_ps | max > 0" ecn.json &&
	test_grep "ECN before PFC: yes" ecn.txt
'

test_expect_success $P 'pauses before ECN: ECN before PFC no' '
	fixture fx3 &&
	watch fx3 pfc pfc &&
	jq -s -e ".[0].verdict == \"paused\" and .[0].ecn_first == \"no\"" pfc.json &&
	jq -s -e ".[0].first_pause < .[0].first_ecn" pfc.json
'

test_expect_success $P 'quiet counters: clean, and the watched priority (from --tclass) in the timeline' '
	fixture fx4 &&
	watch fx4 quiet quiet --tclass 106 --json &&
	jq -s -e ".[0].verdict == \"clean\" and .[0].params.prio == 3 and .[0].params.tclass == 106" quiet.json &&
	jq -s -e "(.[0].timeline.prio[\"3\"].rx_pps | length) == .[0].metrics.intervals" quiet.json &&
	jq -s -e ".[0].metrics.intervals >= 9 and .[0].ecn_first == \"unknown\"" quiet.json &&
	jq -e "type == \"array\" and .[0].status == \"ok\"" quiet.txt
'

serve_bg() {
	"$FABSCOPE" probe pfc --serve -p $PORT -i eth2 --counters-root fxs --interval 0.2 --before 0.4 \
		-D 1.5 --after 0.6 --node target --json >target.json 2>target.err &
	spid=$!
}
listening() { ss -ltnH "sport = :$PORT" | grep -q .; }

test_expect_success $P 'incast: a sender runs flows on a traffic class to a target that serves them' '
	fixture fxs && fixture fxc &&
	serve_bg &&
	test_wait_for 10 listening &&
	"$FABSCOPE" probe pfc 127.0.0.1 -p $PORT -i eth2 --counters-root fxc --interval 0.2 --before 0.4 \
		-D 1 --after 0.4 -q 2 --tclass 96 --node sender --label lb=ecmp --json >sender.json 2>sender.err &&
	wait $spid &&
	jq -e ".[0].role == \"sender\" and .[0].dst.ip == \"127.0.0.1\" and .[0].params.flows == 2" sender.json &&
	jq -e ".[0].params.prio == 3 and .[0].labels.lb == \"ecmp\" and .[0].src.node == \"sender\"" sender.json &&
	jq -e ".[0].metrics.load_gbps > 0" sender.json &&
	jq -e ".[0].role == \"target\" and .[0].verdict == \"clean\"" target.json
'

# 300 flows write more records than a pipe holds: the probe reads them while the load runs
test_expect_success $P 'a sender with 300 flows: every record of the load read, its rate kept' '
	fixture fxq &&
	{ "$FABSCOPE" bw --server --once -p $((PORT + 1)) --bind 127.0.0.1 >srvq.log 2>&1 & } &&
	spq=$! &&
	test_wait_for 10 eval "ss -ltnH \"sport = :$((PORT + 1))\" | grep -q ." &&
	"$FABSCOPE" probe pfc 127.0.0.1 -p $((PORT + 1)) -i eth2 --counters-root fxq -q 300 -s 4K -D 1 \
		--before 0 --after 0.2 --interval 0.2 --json >q300.json 2>q300.err &&
	wait $spq &&
	jq -e ".[0].metrics.load_gbps > 0 and .[0].load_error == null and .[0].params.flows == 300" q300.json
'

# the text of probe polarization: the flows' table and the verdict, no record dumped as JSON
test_expect_success $P 'probe polarization on loopback, text: the table and the verdict, no JSON line' '
	{ "$FABSCOPE" bw --server -p $((PORT + 2)) --bind 127.0.0.1 >srvp.log 2>&1 & } &&
	spp=$! &&
	test_wait_for 10 eval "ss -ltnH \"sport = :$((PORT + 2))\" | grep -q ." &&
	{ "$FABSCOPE" probe polarization 127.0.0.1 -p $((PORT + 2)) -q 2 -D 0.5 --paths 2 --sweep 2 \
		--sport $SPORT >polar.txt 2>polar.err; rc=$?; } &&
	# loopback has no path and no link rate to judge by: each set and the sweep say no
	# verdict, and why; a probe without a verdict is no pass (exit 1), nor a failed run
	test_kill_pid $spp && test $rc = 1 &&
	test_grep "^# set 1 (entropy from $SPORT): no verdict: " polar.txt &&
	test_grep "^# set 2 (entropy from $((SPORT + 2))): no verdict: " polar.txt &&
	test_grep "give --link-rate (Gb/s) and --host-rate, or --topology, or --trace$" polar.txt &&
	test_grep "^# 2 sets, no verdict: " polar.txt &&
	test_must_be_empty polar.err &&
	test_grep "c2s .*sum" polar.txt &&
	! grep -n "^[[{]" polar.txt
'

# a flow that completes no message in its window (a starved flow; here a 64M message in 0.1 ms)
# has no rate, yet the probe ran: its set is judged ("flows_starved"), and its flows' records
# are the probe's measurement, no failed test for the run or its report
test_expect_success $P 'a polarization probe with starved flows: no verdict, no failed test' '
	cat >starved.ini <<-EOF &&
	[global]
	timeout = 5
	[spread]
	kind = polarization
	flows = 2
	sport = $SPORT
	duration = 0.0001
	size = 64M
	paths = 2
	link-rate = 100
	host-rate = 200
	EOF
	test_expect_exit 1 "$FABSCOPE" run starved.ini -n 2 -o starved >starved.out 2>starved.err &&
	test_grep "^fabscope run: 1 of 1 polarization probe gave no verdict" starved.err &&
	test_grep "no verdict: 2 of 2 flows completed no message in their window" starved.err &&
	jq -s -e "length == 4 and all(.[]; .status == \"ok\" and .error == null) and
		([.[] | select(.test == \"bw\" and .scope == \"flow\") | .metrics.msgs] == [0, 0]) and
		([.[] | select(.test == \"polarization\")][0] | .params.starved_flows == 2 and
		 .verdict == \"inconclusive\" and .likely_cause == \"flows_starved\")" starved/results.jsonl &&
	jq -e ".failed_jobs == 0 and .polarization.inconclusive == 1" starved/run.json &&
	test_expect_exit 5 "$FABSCOPE" report starved -o starved-rep --no-plots >starved-rep.out &&
	test_grep "^| no test failed (no record with status error) | 0 | 0 | 0 of 4 | \*\*PASS\*\* | - |$" starved-rep/report.md
'

test_expect_success $P 'bad options: one line, exit 2; a missing interface: one line, exit 3' '
	test_expect_exit 2 "$FABSCOPE" probe pfc 2>e1 &&
	test_grep "which port?" e1 && test $(wc -l <e1) = 1 &&
	test_expect_exit 2 "$FABSCOPE" probe pfc 127.0.0.1 --serve -i eth2 2>e2 &&
	test_grep "give no HOST" e2 &&
	test_expect_exit 2 "$FABSCOPE" probe pfc -i eth2 --counters-root fx --capture 2>e3 &&
	test_grep "needs a live interface" e3 &&
	test_expect_exit 2 "$FABSCOPE" probe pfc -i eth2 --counters-root fx --interval 0 2>e4 &&
	test_grep "interval" e4 &&
	test_expect_exit 3 "$FABSCOPE" probe pfc -i nosuch0 --counters-root fx 2>e5 &&
	test $(wc -l <e5) = 1 && test_grep "nosuch0" e5 &&
	test_expect_exit 3 "$FABSCOPE" probe pfc --bind 192.0.2.77 2>e6 &&
	test_grep "no interface has the address 192.0.2.77" e6 &&
	test_expect_exit 2 "$FABSCOPE" probe nosuch 2>e7 && test_grep "try polarization or pfc" e7 &&
	# the load'"'"'s options are checked before sampling starts, not in its bw seconds later
	test_expect_exit 2 "$FABSCOPE" probe pfc 127.0.0.1 -i eth2 --counters-root fx -s 10x 2>e8 &&
	test $(wc -l <e8) = 1 && test_grep "invalid value .10x. for option .-s." e8 &&
	! grep -q "sampling" e8 &&
	test_expect_exit 2 "$FABSCOPE" probe pfc 127.0.0.1 -i eth2 --counters-root fx -t nosuch 2>e9 &&
	test_grep "unknown transport .nosuch." e9 &&
	test_expect_exit 2 "$FABSCOPE" probe pfc -i eth2 --counters-root fx --before 1e7 --after 1e7 \
		-D 1e7 --interval 0.01 2>e10 &&
	test_grep "more than 10000000 samples" e10 &&
	test_expect_exit 2 "$FABSCOPE" probe polarization 127.0.0.1 -s 10x 2>e11 &&
	test_grep "invalid value .10x. for option .-s." e11 &&
	test_expect_exit 2 "$FABSCOPE" probe polarization 127.0.0.1 --label a=1 --label nokv 2>e12 &&
	test_grep "invalid --label .nokv." e12 &&
	test_expect_exit 2 "$FABSCOPE" probe polarization 127.0.0.1 $(for i in $(seq 33); do echo --label k$i=v; done) 2>e13 &&
	test $(wc -l <e13) = 1 && test_grep "33 labels: at most 32" e13 &&
	test_expect_exit 2 "$FABSCOPE" probe polarization 127.0.0.1 --flow-label 1048570 -q 4 --sweep 2 2>e14 &&
	test $(wc -l <e14) = 1 && test_grep "flow-label 1048570 with 4 flows x 2 sets runs past the largest label" e14
'

test_expect_success $P 'a dead target: the counters are kept, the load error said, exit 4' '
	fixture fx5 &&
	test_expect_exit 4 "$FABSCOPE" probe pfc 127.0.0.1 -p 9 -i eth2 --counters-root fx5 --interval 0.2 \
		--before 0.2 -D 0.4 --after 0.2 --timeout 2 -o dead.json >/dev/null 2>dead.err &&
	jq -s -e ".[0].status == \"ok\" and (.[0].load_error | test(\"load to 127.0.0.1 failed\"))" dead.json &&
	jq -s -e ".[0].metrics.intervals >= 3" dead.json
'

probe_bg() {
	"$FABSCOPE" probe pfc -i eth2 --counters-root fx6 --interval 0.2 --before 0 -D 30 --after 0 \
		-o int.json >/dev/null 2>int.err &
	ppid=$!
}

test_expect_success $P 'interrupted: the intervals so far are judged and kept, exit 130' '
	fixture fx6 &&
	probe_bg &&
	sleep 1.2 &&
	kill -INT $ppid &&
	test_expect_exit 130 wait $ppid &&
	jq -s -e ".[0].interrupted == true and .[0].metrics.intervals >= 3" int.json
'

test_expect_success $P 'a plan phase kind = pfc: incast from every node to the target, each port judged' '
	fixture fxp &&
	cat >plan.ini <<-EOF &&
	[global]
	timeout = 3
	[incast]
	kind = pfc
	target = node3
	duration = 1.2
	before = 0.4
	after = 0.4
	interval = 0.2
	interface = eth2
	counters-root = $PWD/fxp
	flows = 2
	tclass = 96
	EOF
	rm -f fxp/go fxp/stop &&
	writer_bg fxp storm &&
	touch fxp/go &&
	{ "$FABSCOPE" run plan.ini -n 4 -o run --label lb=ecmp >run.out 2>run.err; rc=$?; } &&
	touch fxp/stop && wait $wpid && test $rc = 0 &&
	# (storms are t0230 1: four probes and their agents on a loaded machine may see the writer
	# stall for an interval, which breaks a run of paused intervals but not the pauses)
	jq -s -e "length == 4 and all(.[]; .test == \"pfc\" and .kind == \"pfc\" and .status == \"ok\"
		and .labels.lb == \"ecmp\" and (.verdict == \"storm\" or .verdict == \"paused\")
		and .priorities[0].rx_frames > 0)" run/results.jsonl &&
	jq -s -e "[.[] | select(.role == \"sender\")] | length == 3 and
		all(.[]; .dst.node == \"node3\" and .metrics.load_gbps > 0 and .params.prio == 3)" run/results.jsonl &&
	jq -s -e "[.[] | select(.role == \"target\")] | length == 1 and .[0].src.node == \"node3\" and
		.[0].dst == null and (.[0].job | endswith(\":target\"))" run/results.jsonl &&
	# every port paused without ECN first (storm or not): each node is a suspect
	test $(grep -c "^suspect: \[incast\] node[0-3] eth2: PFC" run.out) = 4 &&
	# and the report renders the phase: a row per port, the suspects, the storm or pause lines
	# (no thresholds: the pfc phase has no criterion, INCOMPLETE)
	test_expect_exit 5 "$FABSCOPE" report run -o rep --no-plots >rep.out 2>&1 &&
	test_grep "^## PFC pauses" rep/report.md &&
	test $(grep -c "^| run | incast | node[0-3] | " rep/report.md) = 4 &&
	test $(grep -c "^| run | incast | node3 | target | eth2 | 3 |" rep/report.md) = 1 &&
	jq -e "[.runs[0].pfc[] | select(.verdict == \"storm\" or .verdict == \"paused\")] | length == 4" rep/summary.json &&
	"$FABSCOPE" run plan.ini -n 4 --dry-run >dry.out 2>&1 &&
	test_grep "incast" dry.out
'

test_expect_success $P 'plan errors: a pfc key in another kind, a key pfc does not take, an unknown target' '
	printf "[a]\nkind = pairwise\ninterval = 1\n" >p1.ini &&
	test_expect_exit 2 "$FABSCOPE" run p1.ini -n 2 2>e1 && test_grep "for kind = pfc" e1 &&
	printf "[a]\nkind = pfc\nsweep = 2\n" >p2.ini &&
	test_expect_exit 2 "$FABSCOPE" run p2.ini -n 2 2>e2 && test_grep "not a key of kind = pfc" e2 &&
	printf "[a]\nkind = pfc\ntarget = nosuch\n" >p3.ini &&
	test_expect_exit 2 "$FABSCOPE" run p3.ini -n 2 2>e3 && test_grep "target .nosuch. of \[a\] is not a node" e3
'

test_done
