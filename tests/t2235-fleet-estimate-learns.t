#!/usr/bin/env bash
test_description='fabscope run'"'"'s estimate learns from what the run measures: on a fabric whose
design says 200 Mbit/s everywhere but where one host'"'"'s rail 1 link runs at 20 Mbit/s, the
dry run and the run'"'"'s start take the design'"'"'s speed; once the pairwise bw phase has measured
rail 1, the all-reduce after it is estimated again at that lane'"'"'s measured speed (run.json'"'"'s
estimate_start_s beside estimate_s), and the live ETA on a terminal starts from that, not from
the design'"'"'s figure'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$e
P=ROOT,NETNS,FABSCOPE,JQ,SCRIPT
test_lazy_prereq SCRIPT 'command -v script'
test_require_in_ci ROOT NETNS FABSCOPE JQ SCRIPT

# num FILE JQ: a number of run.json
num() { jq -r "$2" "$1"; }
# gt A B: A > B (decimals)
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

test_expect_success $P 'a 4-host, 2-rail fabric at 200 Mbit/s, h3 rail 1 at 20; its design says 200' '
	test_atexit "\"$FABRIC\" down -p $PFX" &&
	"$FABRIC" up -p $PFX -r 200mbit &&
	"$FABRIC" hostfile -p $PFX >hosts &&
	"$FABRIC" intent -p $PFX >design &&
	"$FABRIC" degrade -p $PFX h3:rail1 20mbit &&
	cat >plan.ini <<-\EOF
	[global]
	hostfile = hosts
	topology = design
	timeout = 4

	[rails]
	kind = pairwise
	test = bw
	duration = 1

	[ar]
	kind = allreduce
	minbytes = 1M
	maxbytes = 4M
	warmup = 1
	iters = 2
	EOF
'

test_expect_success $P 'the dry run takes the design'"'"'s speed' '
	fs_expect 0 run --dry-run plan.ini &&
	test_grep "^estimated time: .* for the phases; lanes at 0.2 Gb/s (./design.s links)" out
'

# The shaper bounds h3's rail 1 pairs to 20 Mbit/s: the lane's measured speed is at most about a
# tenth of the design's, so the all-reduce's bytes (7 MiB a call, 3 calls, 1.5 x of it out of
# each rank) cost at least 9 times what the run's start said; with its connecting (about 1 s,
# the same at either speed) the estimate made when it starts is well over 4 times the first.
test_expect_success $P 'the all-reduce is estimated again at rail 1'"'"'s measured speed; the ETA follows' '
	{ script -qec "\"$FABSCOPE\" run plan.ini -o r1 --no-retest" /dev/null >tty.out 2>&1 ||
		{ cat tty.out; false; }; } &&
	jq -e ".status == \"finished\" and .failed_jobs == 0 and (.phases | length) == 2" r1/run.json >/dev/null &&
	rails_est=$(num r1/run.json ".phases[0].estimate_s") &&
	rails_now=$(num r1/run.json ".phases[0].estimate_start_s") &&
	ar_est=$(num r1/run.json ".phases[1].estimate_s") &&
	ar_now=$(num r1/run.json ".phases[1].estimate_start_s") &&
	echo "rails: $rails_est then $rails_now; ar: $ar_est then $ar_now" &&
	# nothing was measured before the first phase: the same estimate
	awk -v a="$rails_est" -v b="$rails_now" "BEGIN { exit !((a - b)^2 < 1e-6) }" &&
	gt "$ar_now" "$(awk -v a="$ar_est" "BEGIN { print 4 * a }")" &&
	# the all-reduce'"'"'s first progress line: its ETA is that estimate (to the second), not the design'"'"'s
	tr "\r" "\n" <tty.out | grep "\[2/2\] ar: round 1/1, 0/2 jobs, ETA" | head -n 1 >first &&
	want=$(awk -v s="$ar_now" "BEGIN { printf \"%d:%02d\", int(s) / 60, int(s) % 60 }") &&
	want1=$(awk -v s="$ar_now" "BEGIN { printf \"%d:%02d\", int(s - 1) / 60, int(s - 1) % 60 }") &&
	{ grep -q "ETA $want" first || grep -q "ETA $want1" first ||
		{ echo "want ETA $want (or $want1) first: $(cat first)"; false; }; } &&
	# and every size of both lanes finished
	test $(jsonl_count r1/results.jsonl ".test == \"allreduce\" and .status == \"ok\"") = 6
'

test_done
