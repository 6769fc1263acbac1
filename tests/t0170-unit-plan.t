#!/usr/bin/env bash
test_description='fleet/plan.c and fleet/analyze.c: the schedules of every phase kind (the
tournament meets every pair once with disjoint rounds, permutations are derangements), plan and
hostfile parsing with its errors, and the suspects found in crafted record sets'
# asan: always: feeds untrusted bytes to C code: plan files and hostfiles
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL FABSCOPE
P=TEST_TOOL

# check_tournament N: every unordered pair exactly once, no node twice in a round, N-1 rounds
# (N odd: N rounds, one node sits out each)
check_tournament() {
	"$TEST_TOOL" plan-pairs pairwise "$1" >pairs &&
	awk -v n="$1" '
		{ sub(":", "", $1); rounds++
		  delete seen
		  for (i = 2; i <= NF; i++) {
			split($i, e, ">"); a = e[1] + 0; b = e[2] + 0
			if (a == b || (a in seen) || (b in seen)) { print "round " $1 ": node twice: " $i; bad = 1 }
			seen[a] = seen[b] = 1
			k = a < b ? a "-" b : b "-" a
			if (k in met) { print "pair " k " met twice"; bad = 1 }
			met[k] = 1; sends[a]++
		  } }
		END {
			want = n % 2 ? n : n - 1
			if (rounds != want) { print "rounds " rounds " want " want; bad = 1 }
			for (a = 0; a < n; a++) for (b = a + 1; b < n; b++)
				if (!((a "-" b) in met)) { print "pair " a "-" b " never met"; bad = 1 }
			# who sends alternates: nobody sends in (almost) every round
			for (a = 0; a < n; a++) if (n > 3 && sends[a] >= want) { print a " always sends"; bad = 1 }
			exit bad
		}' pairs
}

test_expect_success $P 'pairwise: a round-robin tournament for 2 to 17 nodes' '
	for n in 2 3 4 5 6 7 8 9 10 11 16 17; do
		check_tournament $n || { echo "N=$n"; return 1; }
	done &&
	"$TEST_TOOL" plan-pairs pairwise 1 >one && test_must_be_empty one
'

test_expect_success $P 'permutation: count rounds, each a derangement, different per round and seed' '
	"$TEST_TOOL" plan-pairs permutation 9 5 42 >perm &&
	test $(wc -l <perm) = 5 &&
	awk "{ delete dst; for (i = 2; i <= NF; i++) { split(\$i, e, \">\");
		if (e[1] == e[2] || (e[2] in dst)) exit 1; dst[e[2]] = 1 }
		if (length(dst) != 9) exit 1 }" perm &&
	test $(sort -u perm | cut -d: -f2 | sort -u | wc -l) -gt 1 &&
	"$TEST_TOOL" plan-pairs permutation 9 5 42 >again && test_cmp perm again &&
	"$TEST_TOOL" plan-pairs permutation 9 5 43 >other && ! test_cmp perm other >/dev/null
'

test_expect_success $P 'ring, bisection and incast' '
	"$TEST_TOOL" plan-pairs ring 4 >ring && echo "1: 0>1 1>2 2>3 3>0" >expect && test_cmp expect ring &&
	"$TEST_TOOL" plan-pairs ring 2 >ring2 && echo "1: 0>1" >expect && test_cmp expect ring2 &&
	"$TEST_TOOL" plan-pairs bisection 5 >bis && echo "1: 0>2 2>0 1>3 3>1" >expect && test_cmp expect bis &&
	"$TEST_TOOL" plan-pairs incast 4 0 0 2 >inc && echo "1: 0>2 1>2 3>2" >expect && test_cmp expect inc
'

test_expect_success $P 'plan parsing: [global] defaults, phase overrides, hostfile rails and planes' '
	cat >p.ini <<-\EOF &&
	; a comment
	[global]
	launcher = local
	duration = 3
	size = 64K
	label = a=b
	label = c=d,e=f=g

	[one]
	kind = pairwise
	test = bw, lat
	size = 1M
	rails = 1

	[two]
	kind = permutation
	count = 2
	seed = 9
	EOF
	cat >h <<-\EOF &&
	# two nodes
	n1 netns=ns1 rail0=10.0.0.1 rail1=10.1.0.1 rail1/1=10.2.0.1
	n2 ssh=root@x rail1=10.1.0.2 rail0=10.0.0.2 pod=p-1 leaf=su.01
	EOF
	"$TEST_TOOL" plan-parse p.ini h >actual &&
	cat >expect <<-\EOF &&
	global launcher=local
	global label=a=b
	global label=c=d,e=f=g
	phase one kind=pairwise tests=bw,lat rails=1
	  duration=3
	  size=64K
	  size=1M
	phase two kind=permutation tests=bw count=2 seed=9
	  duration=3
	  size=64K
	node n1 netns=ns1 0/0=10.0.0.1 1/0=10.1.0.1 1/1=10.2.0.1
	node n2 ssh=root@x leaf=su.01 pod=p-1 0/0=10.0.0.2 1/0=10.1.0.2
	EOF
	test_cmp expect actual
'

# bad_plan CONTENT WORD...: parsing fails with exit 2 and one line holding every WORD
bad_plan() {
	printf "$1" >bad.ini && shift &&
	test_expect_exit 2 "$TEST_TOOL" plan-parse bad.ini 2>err &&
	test $(wc -l <err) = 1 &&
	for w; do grep -qF -- "$w" err || { echo "no \"$w\" in: $(cat err)"; return 1; }; done
}

test_expect_success $P 'plan errors name the file, the line and the key' '
	bad_plan "[a]\nkind = pairwise\nbogus = 1\n" "bad.ini:3" "bogus" &&
	bad_plan "[a]\nkind = nope\n" "bad.ini:1" "nope" &&
	bad_plan "[a]\ntest = bw\n" "bad.ini:1" "no kind" &&
	bad_plan "[a]\nkind = pairwise\ntest = iperf\n" "iperf" &&
	bad_plan "[a]\nkind = permutation\ncount = 0\n" "bad.ini:3" "count" &&
	bad_plan "[a]\nkind = pairwise\nrails = x\n" "bad.ini:3" "rails" &&
	bad_plan "[a]\nkind = ring\n[a]\nkind = ring\n" "bad.ini:3" "twice" &&
	bad_plan "[a b]\nkind = ring\n" "bad.ini:1" "phase name" &&
	bad_plan "[global]\nkind = ring\n" "bad.ini:2" "phase section" &&
	bad_plan "[a]\nkind = ring\nhostfile = h\n" "bad.ini:3" "[global]" &&
	bad_plan "[a\n" "bad.ini:1" "section header" &&
	bad_plan "[a]\nkind pairwise\n" "bad.ini:2" "key = value" &&
	bad_plan "[global]\n" "no phases" &&
	bad_plan "[global]\nnodes = -3\n[a]\nkind = ring\n" "bad.ini:2" "nodes" "-3" &&
	bad_plan "[global]\nnodes = 4x\n[a]\nkind = ring\n" "bad.ini:2" "nodes" "4x" &&
	bad_plan "[global]\nseed = abc\n[a]\nkind = ring\n" "bad.ini:2" "seed" "abc" &&
	bad_plan "[global]\nall = maybe\n[a]\nkind = ring\n" "bad.ini:2" "all" "true or false" &&
	bad_plan "[a]\nkind = pairwise\nbidirectional = sometimes\n" "bad.ini:3" "bidirectional" &&
	bad_plan "[a]\nkind = topology\nsource = snmp\n" "bad.ini:1" "source = snmp" "auto, lldpd, listen or none" &&
	bad_plan "[a]\nkind = topology\nlldp-listen = soon\n" "bad.ini:1" "lldp-listen = soon" "seconds" &&
	bad_plan "[a]\nkind = topology\nsize = 64K\n" "bad.ini:3" "not a key of kind = topology" &&
	bad_plan "[a]\nkind = pairwise\nsource = lldpd\n" "bad.ini:3" "is for kind = topology" &&
	# a typo: the key (or kind) it most likely meant, as options have
	bad_plan "[a]\nkind = pairwise\nduraton = 1\n" "bad.ini:3" "unknown key '\''duraton'\'' in [a]; did you mean '\''duration'\''?" &&
	bad_plan "[a]\nkind = pairwise\ntset = bw\n" "bad.ini:3" "did you mean '\''test'\''?" &&
	bad_plan "[a]\nkind = pairwise\nbidir = 1\n" "bad.ini:3" "did you mean '\''bidirectional'\''?" &&
	bad_plan "[global]\nhostfiel = h\n[a]\nkind = ring\n" "bad.ini:2" "unknown key '\''hostfiel'\'' in [global]; did you mean '\''hostfile'\''?" &&
	bad_plan "[global]\nsiez = 4K\n[a]\nkind = ring\n" "bad.ini:2" "did you mean '\''size'\''?" &&
	bad_plan "[a]\nkind = pairwse\n" "bad.ini:1" "unknown kind '\''pairwse'\'' of [a]; did you mean '\''pairwise'\''?" &&
	bad_plan "[a]\nkind = pairwise\nbogus = 1\n" "bad.ini:3" "see '\''fabscope run --help'\'' for plan keys" &&
	! grep -q "did you mean" err &&
	bad_plan "[global]\nlabel = novalue\n[a]\nkind = ring\n" "bad.ini:2" "label '\''novalue'\''" "KEY=VALUE" &&
	bad_plan "[global]\nlabel = a=1,b\n[a]\nkind = ring\n" "bad.ini:2" "a=1,b" "a comma separates labels" &&
	bad_plan "[global]\nlabel = a=1,\n[a]\nkind = ring\n" "bad.ini:2" "a=1," &&
	bad_plan "[global]\nlabel = a=1\nlabel = c=2,a=3\n[a]\nkind = ring\n" "bad.ini:3" \
		"label '\''a'\'' is given already at line 2" &&
	printf "\0\n" >nul.ini && test_expect_exit 2 "$TEST_TOOL" plan-parse nul.ini 2>err &&
	grep -q "not a text file" err
'

test_expect_success $P 'load = bw: a lat phase of pairs with a duration, else one line at the key' '
	printf "[global]\nduration = 1\n[a]\nkind = incast\ntest = lat\nload = bw\nflows = 4\n" >load.ini &&
	"$TEST_TOOL" plan-parse load.ini >out &&
	test_grep "^phase a kind=incast tests=lat" out &&
	bad_plan "[a]\nkind = pairwise\nload = bw\nduration = 1\n" "bad.ini:3" "load = bw" "not test = bw" &&
	bad_plan "[a]\nkind = ring\ntest = lat\nload = yes\nduration = 1\n" "bad.ini:4" "load" "yes" "give bw" &&
	bad_plan "[a]\nkind = ring\ntest = lat\nload = bw\n" "bad.ini:4" "needs duration" &&
	bad_plan "[a]\nkind = ring\ntest = lat\nload = bw\nduration = 1\nwarmup = 50\n" "bad.ini:6" "warmup" &&
	bad_plan "[a]\nkind = alltoall\nload = bw\n" "bad.ini:3" "load = bw" "not alltoall" &&
	bad_plan "[global]\nload = bw\n[a]\nkind = ring\n" "bad.ini:2" "load" "phase section"
'

test_expect_success $P 'hostfile errors: the line, and what a node line holds' '
	printf "[a]\nkind = ring\n" >ok.ini &&
	printf "n1 rail0=1.1.1.1\nrail0=2.2.2.2\n" >h1 &&
	test_expect_exit 2 "$TEST_TOOL" plan-parse ok.ini h1 2>err && grep -q "h1:2" err &&
	printf "n1 rail0=1.1.1.1 rail0=1.1.1.2\n" >h2 &&
	test_expect_exit 2 "$TEST_TOOL" plan-parse ok.ini h2 2>err && grep -q "h2:1.*twice" err &&
	printf "n1 railx=1.1.1.1\n" >h3 &&
	test_expect_exit 2 "$TEST_TOOL" plan-parse ok.ini h3 2>err && grep -q "h3:1.*railx" err &&
	printf "n1 rail99=1.1.1.1\n" >h4 &&
	test_expect_exit 2 "$TEST_TOOL" plan-parse ok.ini h4 2>err && grep -q "h4:1" err &&
	printf -- "-v rail0=1.1.1.1\n" >h8 &&
	test_expect_exit 2 "$TEST_TOOL" plan-parse ok.ini h8 2>err && grep -q "h8:1.*node.s name" err &&
	printf "n1 rail0=notanip\n" >h6 &&
	test_expect_exit 2 "$TEST_TOOL" plan-parse ok.ini h6 2>err && grep -q "h6:1.*notanip.*not an IP address" err &&
	printf "n1 rail0=fe80::1 rail1=10.0.0.1\n" >h7 &&
	"$TEST_TOOL" plan-parse ok.ini h7 >/dev/null &&
	printf "n1 rail0=1.1.1.1 leaf=a leaf=b\n" >h9 &&
	test_expect_exit 2 "$TEST_TOOL" plan-parse ok.ini h9 2>err && grep -q "h9:1.*leaf given twice" err &&
	printf "n1 rail0=1.1.1.1 pod=a;b\n" >h10 &&
	test_expect_exit 2 "$TEST_TOOL" plan-parse ok.ini h10 2>err && grep -q "h10:1.*pod=a;b is not a switch name" err &&
	printf "n1 rack=3\n" >h11 &&
	test_expect_exit 2 "$TEST_TOOL" plan-parse ok.ini h11 2>err && grep -q "h11:1.*rack.*leaf= and pod=" err &&
	printf "# nothing\n" >h5 &&
	test_expect_exit 2 "$TEST_TOOL" plan-parse ok.ini h5 2>err && grep -q "no nodes" err
'

# rec PHASE TEST RAIL SRC DST VALUE: one aggregate record
rec() {
	if [ "$2" = bw ]; then m="{\"bw_gbps\": $6}"; else m="{\"lat_us\": {\"p50\": $6}}"; fi
	printf "{\"phase\":\"%s\",\"test\":\"%s\",\"scope\":\"aggregate\",\"dir\":\"c2s\",\"status\":\"ok\",\"src\":{\"node\":\"%s\",\"rail\":%s,\"plane\":0},\"dst\":{\"node\":\"%s\",\"rail\":%s,\"plane\":0},\"metrics\":%s}\n" \
		"$1" "$2" "$4" "$3" "$5" "$3" "$m"
}

test_expect_success $P 'analyze: a node slow with every peer is the suspect, not its peers' '
	mkdir -p a1 && {
		rec p bw 0 h1 h2 100; rec p bw 0 h1 h3 98; rec p bw 0 h1 h4 9
		rec p bw 0 h2 h3 97; rec p bw 0 h2 h4 11; rec p bw 0 h3 h4 10
		rec p bw 1 h1 h2 100; rec p bw 1 h1 h3 99; rec p bw 1 h1 h4 98
		rec p bw 1 h2 h3 97; rec p bw 1 h2 h4 99; rec p bw 1 h3 h4 100
	} >a1/results.jsonl &&
	"$TEST_TOOL" analyze a1 >actual &&
	echo "node p bw 0 h4 -" >expect &&
	test_cmp expect actual
'

test_expect_success $P 'analyze: one slow pair names the path; a slow lane names the rail' '
	mkdir -p a2 && {
		rec p bw 0 h1 h2 100; rec p bw 0 h1 h3 98; rec p bw 0 h1 h4 101
		rec p bw 0 h2 h3 30; rec p bw 0 h2 h4 99; rec p bw 0 h3 h4 100
		rec p bw 1 h1 h2 20; rec p bw 1 h1 h3 19; rec p bw 1 h1 h4 21
		rec p bw 1 h2 h3 20; rec p bw 1 h2 h4 22; rec p bw 1 h3 h4 20
		rec p bw 2 h1 h2 99; rec p bw 2 h1 h3 99; rec p bw 2 h1 h4 100
		rec p bw 2 h2 h3 97; rec p bw 2 h2 h4 99; rec p bw 2 h3 h4 100
	} >a2/results.jsonl &&
	"$TEST_TOOL" analyze a2 >actual &&
	printf "pair p bw 0 h2 h3\nlane p bw 1 - -\n" >expect &&
	test_cmp expect actual
'

test_expect_success $P 'analyze: latency is judged upwards; errors and flow records are ignored' '
	mkdir -p a3 && {
		rec q lat 0 h1 h2 2.0; rec q lat 0 h1 h3 2.1; rec q lat 0 h1 h4 9.0
		rec q lat 0 h2 h3 2.0; rec q lat 0 h2 h4 8.5; rec q lat 0 h3 h4 9.5
		echo "{\"phase\":\"q\",\"test\":\"lat\",\"scope\":\"aggregate\",\"status\":\"error\",\"src\":{\"node\":\"h1\"},\"dst\":{\"node\":\"h2\"}}"
		rec q bw 0 h1 h2 1 | sed "s/aggregate/flow/"
	} >a3/results.jsonl &&
	"$TEST_TOOL" analyze a3 >actual &&
	echo "node q lat 0 h4 -" >expect &&
	test_cmp expect actual
'

# rt JOB VALUE|error SRC DST: the re-test of job JOB (its records carry retest_of)
rt() {
	if [ "$2" = error ]; then
		printf "{\"phase\":\"q\",\"test\":\"lat\",\"scope\":\"aggregate\",\"status\":\"error\",\"error\":\"h4: refused\",\"job\":\"%s/retest\",\"retest_of\":\"%s\",\"src\":{\"node\":\"%s\",\"rail\":0},\"dst\":{\"node\":\"%s\",\"rail\":0}}\n" "$1" "$1" "$3" "$4"
	else
		rec q lat 0 "$3" "$4" "$2" | sed "s|^{|{\"job\":\"$1/retest\",\"retest_of\":\"$1\",|"
	fi
}
# jrec JOB PHASE TEST RAIL SRC DST VALUE: rec, with its job key
jrec() { j=$1; shift; rec "$@" | sed "s|^{|{\"job\":\"$j\",|"; }

test_expect_success $P 'analyze: a latency pair is a suspect only when its re-test is high too' '
	mkdir -p a5 && {
		jrec q/lat/r1/rail0/h1\>h2 q lat 0 h1 h2 2.0; jrec q/lat/r1/rail0/h3\>h4 q lat 0 h3 h4 9.0
		jrec q/lat/r2/rail0/h1\>h3 q lat 0 h1 h3 2.1; jrec q/lat/r2/rail0/h2\>h4 q lat 0 h2 h4 2.2
		jrec q/lat/r3/rail0/h1\>h4 q lat 0 h1 h4 8.0; jrec q/lat/r3/rail0/h2\>h3 q lat 0 h2 h3 7.5
		for p in h1 h2 h3 h4; do jrec q/lat/r4/rail0/$p\>h5 q lat 0 $p h5 2.0; done
		# fast on its re-test; high again (the last re-test counts); the re-test failed
		rt "q/lat/r1/rail0/h3>h4" 2.1 h3 h4
		rt "q/lat/r3/rail0/h1>h4" 1.9 h1 h4; rt "q/lat/r3/rail0/h1>h4" 8.8 h1 h4
		rt "q/lat/r3/rail0/h2>h3" error h2 h3
	} >a5/results.jsonl &&
	"$TEST_TOOL" analyze a5 >actual &&
	cat >expect <<-\EOF &&
	pair q lat 0 h1 h4 confirmed: confirmed: re-test 8.8 us p50 against 2.05 (first 8)
	pair q lat 0 h2 h3 failed: re-test failed: h4: refused
	unconfirmed pair q lat 0 h3 h4 not-confirmed: not confirmed: re-test 2.1 us p50 against 2.05 (first 9)
	EOF
	test_cmp expect actual &&
	# the re-tests are no part of the lane: the same suspects without them, none judged
	grep -v retest_of a5/results.jsonl >a6.jsonl && mkdir -p a6 && mv a6.jsonl a6/results.jsonl &&
	"$TEST_TOOL" analyze a6 >actual &&
	printf "pair q lat 0 h3 h4\npair q lat 0 h1 h4\npair q lat 0 h2 h3\n" >expect &&
	test_cmp expect actual
'

# srec PHASE TEST RAIL SRC DST VALUE SIZE: rec at a message size
srec() { rec "$1" "$2" "$3" "$4" "$5" "$6" | sed "s|^{|{\"msg_size_bytes\":$7,|"; }
# nrt ID ROLE TEST SRC DST VALUE|error [SIZE]: a re-test of the suspect ID, in ROLE
nrt() {
	if [ "$6" = error ]; then
		printf "{\"test\":\"%s\",\"scope\":\"aggregate\",\"status\":\"error\",\"error\":\"%s refused\",\"src\":{\"node\":\"%s\"},\"dst\":{\"node\":\"%s\"},\"retest_for\":\"%s\",\"retest_role\":\"%s\"}\n" \
			"$3" "$5" "$4" "$5" "$1" "$2"
	else
		rec q "$3" 0 "$4" "$5" "$6" |
			sed "s|^{|{\"retest_for\":\"$1\",\"retest_role\":\"$2\",\"msg_size_bytes\":${7:-0},|"
	fi
}

test_expect_success $P 'analyze: sizes are judged apart; a suspect of several sizes is named once, at the largest' '
	mkdir -p s1 && {
		# 4K results are all ten times under the 1M ones: no suspect for that
		for z in 4096 1048576; do
			f=$(( z == 4096 ? 1 : 10 ))
			srec q bw 0 h1 h2 $f $z; srec q bw 0 h3 h4 $f $z
			srec q bw 0 h1 h3 $f $z; srec q bw 0 h2 h4 $f $z
			srec q bw 0 h1 h4 $f $z; srec q bw 0 h2 h3 $f $z
		done
	} >s1/results.jsonl &&
	"$TEST_TOOL" analyze s1 >actual &&
	test_must_be_empty actual &&
	mkdir -p s2 && {
		# h2 -> h3 slow at both sizes, h1 -> h4 at 4K only
		for z in 4096 1048576; do
			f=$(( z == 4096 ? 1 : 10 ))
			srec q bw 0 h1 h2 $f $z; srec q bw 0 h3 h4 $f $z
			srec q bw 0 h1 h3 $f $z; srec q bw 0 h2 h4 $f $z
			srec q bw 0 h2 h3 0.$f $z
		done
		srec q bw 0 h1 h4 0.1 4096; srec q bw 0 h1 h4 10 1048576
	} >s2/results.jsonl &&
	"$TEST_TOOL" analyze --sizes s2 >actual &&
	cat >expect <<-\EOF &&
	pair q bw 0 h2 h3 @1048576 sizes=2
	pair q bw 0 h1 h4 @4096
	EOF
	test_cmp expect actual
'

test_expect_success $P 'analyze: re-tests of every kind, judged against the first reference' '
	mkdir -p r1 && {
		# lane 0: h4 slow with every peer (node); h2 -> h3 slow (pair); lane 1 slow as a whole
		rec q bw 0 h1 h2 10; rec q bw 0 h1 h3 10; rec q bw 0 h1 h4 1; rec q bw 0 h2 h4 1
		rec q bw 0 h3 h4 1; rec q bw 0 h2 h3 2; rec q bw 0 h1 h5 10; rec q bw 0 h2 h5 10
		rec q bw 0 h3 h5 10; rec q bw 0 h5 h6 10; rec q bw 0 h1 h6 10
		rec q bw 1 h1 h2 3; rec q bw 1 h3 h4 3; rec q bw 1 h5 h6 3
		rec q bw 2 h1 h2 10; rec q bw 2 h3 h4 10; rec q bw 2 h5 h6 10
	} >r1/results.jsonl &&
	"$TEST_TOOL" analyze r1 >actual &&
	cat >expect <<-\EOF &&
	node q bw 0 h4 -
	pair q bw 0 h2 h3
	lane q bw 1 - -
	EOF
	test_cmp expect actual &&
	cp -r r1 r2 && {
		nrt "node:q:bw:rail0.0:0:h4>" fresh bw h4 h1 1.2
		nrt "node:q:bw:rail0.0:0:h4>" fresh bw h5 h4 0.9
		nrt "pair:q:bw:rail0.0:0:h2>h3" again bw h2 h3 2.5
		nrt "pair:q:bw:rail0.0:0:h2>h3" src-fresh bw h2 h6 9
		nrt "pair:q:bw:rail0.0:0:h2>h3" src-fresh bw h2 h1 9.5
		nrt "pair:q:bw:rail0.0:0:h2>h3" dst-fresh bw h1 h3 2
		nrt "pair:q:bw:rail0.0:0:h2>h3" dst-fresh bw h6 h3 2.2
		nrt "node:q:bw:rail0.0:0:h4>" control bw h1 h5 9
		nrt "pair:q:bw:rail0.0:0:h2>h3" control bw h1 h6 10
		nrt "lane:q:bw:rail1.0:0:>" lane bw h1 h4 9
		nrt "lane:q:bw:rail1.0:0:>" lane bw h2 h3 10
	} >>r2/results.jsonl &&
	"$TEST_TOOL" analyze r2 >actual &&
	cat >expect <<-\EOF &&
	node q bw 0 h4 - confirmed: confirmed: low with 2 of 2 fresh peers (median 1.05 Gb/s against 10 and a control of 9)
	pair q bw 0 h2 h3 confirmed: confirmed: re-test 2.5 Gb/s against 10 and a control of 10 (first 2); h2 with a fresh peer h1: 9.5; h2 with a fresh peer h6: 9; h3 with a fresh peer h1: 2 (low too); h3 with a fresh peer h6: 2.2 (low too); h3\x27s NIC, cable or leaf port
	unconfirmed lane q bw 1 - - not-confirmed: not confirmed: not low again (2 measurements: median 9.5 Gb/s against 10)
	EOF
	sed "s/\x27/\\\\x27/g" actual >actual.esc &&
	test_cmp expect actual.esc &&
	cp -r r1 r3 && {
		nrt "node:q:bw:rail0.0:0:h4>" fresh bw h4 h1 1.2
		nrt "node:q:bw:rail0.0:0:h4>" fresh bw h5 h4 9
		nrt "pair:q:bw:rail0.0:0:h2>h3" again bw h2 h3 error
		nrt "lane:q:bw:rail1.0:0:>" lane bw h1 h4 2
	} >>r3/results.jsonl &&
	"$TEST_TOOL" analyze r3 >actual &&
	cat >expect <<-\EOF &&
	pair q bw 0 h2 h3 failed: re-test failed: h3 refused
	lane q bw 1 - - inconclusive: inconclusive: low again (2 Gb/s against 10), but no control was measured with it (fewer than 2 nodes of its lane under no suspicion)
	unconfirmed node q bw 0 h4 - not-confirmed: not confirmed: low with 1 of 2 fresh peers (median 5.1 Gb/s against 10)
	EOF
	test_cmp expect actual &&
	# a control measured with the re-test: the node, low against the reference but not against a
	# control as far off, is inconclusive; the lane, low against a slow control too, is confirmed
	# (it stands out against what the fabric gives now); the pair, low against the reference but
	# not against a control that is fine, is not confirmed
	cp -r r1 r4 && {
		nrt "node:q:bw:rail0.0:0:h4>" fresh bw h4 h1 1.2
		nrt "node:q:bw:rail0.0:0:h4>" fresh bw h5 h4 0.9
		nrt "node:q:bw:rail0.0:0:h4>" control bw h1 h5 2
		nrt "pair:q:bw:rail0.0:0:h2>h3" again bw h2 h3 4
		nrt "pair:q:bw:rail0.0:0:h2>h3" control bw h1 h6 6
		nrt "lane:q:bw:rail1.0:0:>" lane bw h1 h4 0.5
		nrt "lane:q:bw:rail1.0:0:>" control bw h5 h6 4
	} >>r4/results.jsonl &&
	"$TEST_TOOL" analyze r4 >actual &&
	cat >expect <<-\EOF &&
	node q bw 0 h4 - inconclusive: inconclusive: re-test 1.05 Gb/s against 10, but the control h1 -> h5 measured 2 too: the hosts or the fabric were busy during the re-test; run again
	lane q bw 1 - - confirmed: confirmed: low again (1 measurement: median 0.5 Gb/s against 10 and a control of 4)
	unconfirmed pair q bw 0 h2 h3 not-confirmed: not confirmed: re-test 4 Gb/s against 10 and a control of 6 (first 2)
	EOF
	test_cmp expect actual
'

test_expect_success $P 'analyze: a pair re-tested twice (the control between) is confirmed only when low on both' '
	# r1: the pair h2 -> h3 is the suspect (2 Gb/s against 10); its two re-tests are judged
	# together: low on both, confirmed; fine on both, not confirmed; low on one only, inconclusive,
	# whichever of the two; fine on both beside a control as slow, not confirmed; a failed second
	# re-test fails the re-test
	pair_rt() { # DIR AGAIN AGAIN-2 CONTROL [DST-FRESH...]
		cp -r r1 $1 && {
			nrt "pair:q:bw:rail0.0:0:h2>h3" again bw h2 h3 $2
			nrt "pair:q:bw:rail0.0:0:h2>h3" control bw h1 h6 $4
			nrt "pair:q:bw:rail0.0:0:h2>h3" again-2 bw h2 h3 $3
			nrt "pair:q:bw:rail0.0:0:h2>h3" src-fresh bw h2 h6 9
			nrt "pair:q:bw:rail0.0:0:h2>h3" dst-fresh bw h1 h3 ${5:-9}
			test -z "$6" || nrt "pair:q:bw:rail0.0:0:h2>h3" dst-fresh bw h6 h3 $6
		} >>$1/results.jsonl &&
		"$TEST_TOOL" analyze $1 | grep " h2 h3 "
	} &&
	judged() { # EXPECTED DIR AGAIN AGAIN-2 CONTROL [DST-FRESH...]: its line (printf %b: \x27 for a quote)
		printf "%b\n" "$1" >expect && shift && pair_rt "$@" >actual && test_cmp expect actual
	} &&
	judged "pair q bw 0 h2 h3 confirmed: confirmed: re-tests 2.5 and 2.2 Gb/s against 10 and a control of 10 (first 2); h2 with a fresh peer h6: 9; h3 with a fresh peer h1: 9; the path between them" \
		t1 2.5 2.2 10 &&
	judged "unconfirmed pair q bw 0 h2 h3 not-confirmed: not confirmed: re-tests 9 and 9.5 Gb/s against 10 and a control of 10 (first 2)" \
		t2 9 9.5 10 &&
	judged "pair q bw 0 h2 h3 inconclusive: inconclusive: low on one re-test (2.5 Gb/s), not on the other (9) against 10 and a control of 10: the hosts were busy during one, or the fault comes and goes; run again" \
		t3 2.5 9 10 &&
	judged "pair q bw 0 h2 h3 inconclusive: inconclusive: low on one re-test (2.5 Gb/s), not on the other (9) against 10 and a control of 10: the hosts were busy during one, or the fault comes and goes; run again" \
		t4 9 2.5 10 &&
	# low against the reference on both, and a control as slow: busy, inconclusive
	judged "pair q bw 0 h2 h3 inconclusive: inconclusive: re-test 3 Gb/s against 10, but the control h1 -> h6 measured 3 too: the hosts or the fabric were busy during the re-test; run again" \
		t5 3 3.5 3 &&
	judged "pair q bw 0 h2 h3 failed: re-test failed: h3 refused" \
		t6 2.5 error 10 &&
	# an end is blamed when low with two fresh peers; low with its one is not enough; fine with
	# one of two clears it (its fault would slow every peer)
	judged "pair q bw 0 h2 h3 confirmed: confirmed: re-tests 2.5 and 2.2 Gb/s against 10 and a control of 10 (first 2); h2 with a fresh peer h6: 9; h3 with a fresh peer h1: 2 (low too); not split (an end slow with its one fresh peer measured: two are needed to blame it)" \
		t7 2.5 2.2 10 2 &&
	judged "pair q bw 0 h2 h3 confirmed: confirmed: re-tests 2.5 and 2.2 Gb/s against 10 and a control of 10 (first 2); h2 with a fresh peer h6: 9; h3 with a fresh peer h1: 2 (low too); h3 with a fresh peer h6: 9; the path between them" \
		t8 2.5 2.2 10 2 9 &&
	judged "pair q bw 0 h2 h3 confirmed: confirmed: re-tests 2.5 and 2.2 Gb/s against 10 and a control of 10 (first 2); h2 with a fresh peer h6: 9; h3 with a fresh peer h1: 2 (low too); h3 with a fresh peer h6: 2.1 (low too); h3\x27s NIC, cable or leaf port" \
		t9 2.5 2.2 10 2 2.1
'

test_expect_success $P 'the run and the report take the same results into the same groups (one filter)' '
	mkdir -p g1 && {
		# a sweep, a second lane, and records neither may take: a flow, both directions, an
		# error, a probe flow, a load, a re-test, no node, no value; no scope on one flow only
		for z in 4096 65536; do
			srec q bw 0 h1 h2 5 $z; srec q bw 0 h3 h4 6 $z; srec q bw 1 h1 h2 7 $z
		done
		rec q lat 0 h1 h2 3; rec q lat 0 h3 h4 4
		rec q bw 0 h1 h3 9 | sed "s/\"aggregate\"/\"flow\"/"
		rec q bw 0 h1 h3 9 | sed "s/\"c2s\"/\"both\"/"
		rec q bw 0 h1 h3 9 | sed "s/\"ok\"/\"error\"/"
		rec q bw 0 h1 h3 9 | sed "s/^{/{\"kind\":\"polarization\",/"
		rec q bw 0 h1 h3 9 | sed "s/^{/{\"kind\":\"load\",/"
		rec q bw 0 h1 h3 9 | sed "s/^{/{\"retest_for\":\"x\",\"retest_role\":\"again\",/"
		rec q bw 0 h1 h3 9 | sed "s/\"node\":\"h3\"//"
		rec q bw 0 h1 h3 9 | sed "s/\"bw_gbps\": 9/\"rtt\": 9/"
		rec q bw 0 h2 h4 8 | sed "s/\"scope\":\"aggregate\",//"
		rec q bw 0 h2 h4 8 | sed "s/\"scope\":\"aggregate\",/\"flows\":2,/"
	} >g1/results.jsonl &&
	"$TEST_TOOL" groups g1 >groups &&
	cat >expect <<-\EOF &&
	store q bw 0 0 4096 2
	store q bw 1 0 4096 1
	store q bw 0 0 65536 2
	store q bw 1 0 65536 1
	store q lat 0 0 0 2
	store q bw 0 0 0 1
	EOF
	grep "^store" groups >actual &&
	test_cmp expect actual &&
	# the report has each lane at its largest size: the store group of that size, no other
	grep "^report" groups | sort >report &&
	cat >expect <<-\EOF &&
	report q bw 0 0 65536 2
	report q bw 1 0 65536 1
	report q lat 0 0 0 2
	EOF
	test_cmp expect report
'

test_expect_success $P 'a phase name of 200 bytes is one group, in the analysis and the report' '
	long=$(printf "p%.0s" $(seq 200)) &&
	mkdir -p g2 && {
		rec $long bw 0 h1 h2 10; rec $long bw 0 h3 h4 10; rec $long bw 0 h1 h3 10
		rec $long bw 0 h2 h4 10; rec $long bw 0 h1 h4 1; rec $long bw 0 h2 h3 10
	} >g2/results.jsonl &&
	"$TEST_TOOL" groups g2 >groups &&
	printf "store %s bw 0 0 0 6\nreport %s bw 0 0 0 6\n" $long $long >expect &&
	test_cmp expect groups &&
	"$TEST_TOOL" analyze g2 >actual &&
	echo "pair $long bw 0 h1 h4" >expect &&
	test_cmp expect actual &&
	# (no criterion but the run.s integrity, no run.json: INCOMPLETE, exit 5)
	test_expect_exit 5 "$FABSCOPE" report g2 -o g2rep --format json --no-plots >/dev/null 2>&1 &&
	jq -e --arg p "$long" "[.runs[0].groups[] | .phase] == [\$p]" g2rep/summary.json >/dev/null
'

test_expect_success $P 'analyze: two nodes can only name their pair' '
	mkdir -p a4 && { rec p bw 0 h1 h2 1; rec p bw 1 h1 h2 100; rec p bw 2 h1 h2 99; } >a4/results.jsonl &&
	"$TEST_TOOL" analyze a4 >actual &&
	echo "lane p bw 0 - -" >expect &&
	test_cmp expect actual
'

test_done
