#!/usr/bin/env bash
test_description='fabscope run'"'"'s time: --dry-run estimates each phase from what its options
cost (a duration, a phase more, a probe'"'"'s duration, a collective'"'"'s sizes at the lanes'"'"'
speed of the design), the run records each phase'"'"'s estimate next to what it took and the
run'"'"'s (the same figures the dry run printed), and on a terminal the ETA counts the phase'"'"'s
time, not zero'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_require_in_ci FABSCOPE JQ
P=FABSCOPE,JQ

# est FILE: the total of a dry run's output, in seconds ("estimated time: 12.3 s for ...")
est() { sed -n 's/^estimated time: \([0-9.]*\) s.*/\1/p' "$1"; }
# about FILE PHASE: a phase's estimate in a dry run's output ("[1] pw: ...; about 8.7 s")
about() { sed -n "s/^\[[0-9]*\] $2: .*; about \([0-9.e+-]*\) s.*/\1/p" "$1"; }
# gt A B: A > B (seconds, as decimals)
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

test_expect_success $P 'a plan of a pairwise bw phase: the dry run estimates it, and says on what' '
	cat >p1.ini <<-\EOF &&
	[global]
	duration = 1

	[pw]
	kind = pairwise
	test = bw
	EOF
	fs_expect 0 run --dry-run p1.ini -n 4 &&
	cp out d1 &&
	test -n "$(est d1)" && gt "$(est d1)" 0 &&
	test -n "$(about d1 pw)" &&
	test_grep "^estimated time: .* for the phases; lanes taken at 100 Gb/s (no link speeds known" d1 &&
	test_grep "^    and at most 120 s more to re-test suspects, if there are any (--retest-time)" d1
'

test_expect_success $P 'a longer duration makes a longer estimate, of the phase and of the plan' '
	sed "s/^duration = 1$/duration = 3/" p1.ini >p3.ini &&
	fs_expect 0 run --dry-run p3.ini -n 4 &&
	cp out d3 &&
	gt "$(est d3)" "$(est d1)" && gt "$(about d3 pw)" "$(about d1 pw)" &&
	# three rounds of 4 nodes, each about 2 s longer
	gt "$(est d3)" "$(awk -v a="$(est d1)" "BEGIN { print a + 5 }")"
'

test_expect_success $P 'a phase more, a topology phase or a longer polarization probe: a longer estimate' '
	cp p1.ini p4.ini &&
	printf "\n[cables]\nkind = topology\nsource = listen\nlldp-listen = 20\n" >>p4.ini &&
	fs_expect 0 run --dry-run p4.ini -n 4 &&
	cp out d4 &&
	gt "$(about d4 cables)" 20 &&
	gt "$(est d4)" "$(awk -v a="$(est d1)" "BEGIN { print a + 19 }")" &&
	printf "[pol]\nkind = polarization\npaths = 2\nduration = 2\n" >pol2.ini &&
	sed "s/^duration = 2$/duration = 5/" pol2.ini >pol5.ini &&
	fs_expect 0 run --dry-run pol2.ini -n 4 && cp out dp2 &&
	fs_expect 0 run --dry-run pol5.ini -n 4 && cp out dp5 &&
	# one probe at a time: 2 of them on the lane, each 3 s longer (and its warm-up)
	gt "$(est dp5)" "$(awk -v a="$(est dp2)" "BEGIN { print a + 6 }")"
'

test_expect_success $P 'a collective'"'"'s estimate goes by the lanes'"'"' speed in the design' '
	printf "h1 rail0=10.9.0.1\nh2 rail0=10.9.0.2\nh3 rail0=10.9.0.3\nh4 rail0=10.9.0.4\n" >c.hosts &&
	for sp in 200M 100G; do
		{
			echo "switch l1 tier=leaf rail=0" &&
			for h in 1 2 3 4; do echo "link h$h:rail0 l1:h$h rail=0 speed=$sp" || return 1; done
		} >design-$sp &&
		printf "[global]\nhostfile = c.hosts\ntopology = design-$sp\n\n[ar]\nkind = allreduce\nminbytes = 1M\nmaxbytes = 16M\n" \
			>c-$sp.ini &&
		fs_expect 0 run --dry-run c-$sp.ini &&
		cp out dc-$sp || return 1
	done &&
	test_grep "lanes at 0.2 Gb/s (./design-200M.s links)" dc-200M &&
	test_grep "lanes at 100 Gb/s (./design-100G.s links)" dc-100G &&
	# 31 MiB a size sweep, 1.5 x of it a call, 25 calls: over 30 s at 0.2 Gb/s, under 2 s at 100
	gt "$(about dc-200M ar)" 30 && gt 2 "$(about dc-100G ar)"
'

test_expect_success $P 'run.json: each phase'"'"'s estimate next to what it took, and the run'"'"'s; the dry run'"'"'s figures' '
	cat >run.ini <<-\EOF &&
	[global]
	duration = 0.5
	timeout = 3

	[pw]
	kind = pairwise
	test = bw,lat
	size = 16K

	[ping]
	kind = ping
	EOF
	fs_expect 0 run --dry-run run.ini -n 4 && cp out dr &&
	fs_expect 0 run run.ini -n 4 -o r1 --no-retest &&
	jq -e "(.phases | length) == 2 and
	       all(.phases[]; (.estimate_s | type) == \"number\" and .estimate_s > 0 and
	                      (.actual_s | type) == \"number\" and .actual_s > 0 and .actual_s == .seconds) and
	       .estimate_s > 0 and .actual_s > 0 and
	       (.estimate_s - ([.phases[].estimate_s] | add) | fabs) < 1e-6 and
	       (.actual_s - ([.phases[].actual_s] | add) | fabs) < 1e-6" r1/run.json >/dev/null &&
	# the dry run printed the same estimates (to its rounding)
	for ph in pw ping; do
		e=$(jq -r --arg p $ph ".phases[] | select(.name == \$p) | .estimate_s" r1/run.json) &&
		awk -v a="$e" -v b="$(about dr $ph)" "BEGIN { exit !(b > 0 && (a - b < 0.05 * a + 0.01) && (b - a < 0.05 * a + 0.01)) }" ||
			{ echo "phase $ph: run.json says $e s, the dry run $(about dr $ph) s"; return 1; }
	done &&
	awk -v a="$(jq .estimate_s r1/run.json)" -v b="$(est dr)" "BEGIN { exit !((a - b)^2 < (0.05 * a)^2) }"
'

test_lazy_prereq SCRIPT 'command -v script'
test_require_in_ci SCRIPT

# The first progress line of a phase comes as its first round starts: its ETA is the phase's
# estimate (less the moments it took to start the jobs), never 0:00 for a phase of seconds.
test_expect_success $P,SCRIPT 'on a terminal the ETA starts at the phase'"'"'s estimate, not at zero' '
	printf "[global]\nduration = 4\ntimeout = 3\n\n[pw]\nkind = pairwise\ntest = bw\n" >eta.ini &&
	fs_expect 0 run --dry-run eta.ini -n 2 && cp out de &&
	s=$(about de pw) && gt "$s" 4 &&
	script -qec "\"$FABSCOPE\" run eta.ini -n 2 -o r2 --no-retest" /dev/null >tty.out 2>&1 &&
	tr "\r" "\n" <tty.out | grep "\[1/1\] pw: round 1/1, 0/1 jobs, ETA" | head -n 1 >first &&
	want=$(awk -v s="$s" "BEGIN { printf \"0:%02d\", int(s) }") &&
	want1=$(awk -v s="$s" "BEGIN { printf \"0:%02d\", int(s) - 1 }") &&
	{ grep -q "ETA $want" first || grep -q "ETA $want1" first ||
		{ echo "want ETA $want (or $want1) first: $(cat first)"; false; }; }
'

test_done
