#!/usr/bin/env bash
test_description='fabscope allreduce and alltoall over verbs in the Soft-RoCE VM: every element
right for 2 to 8 ranks (one per rxe device), ring, rhd, pairwise and direct, sizes that do not
divide, several QPs per peer; a spoiled element caught; the records, the rxe counters and the
wire agree on who talked to whom (one VM boot runs tests/vm/coll.sh; t0300 does this over TCP)'
. "$(dirname "$0")/test-lib.sh"

# one Soft-RoCE guest at a time: qemu TCG emulates 2 vCPUs on the host's cores, and two guests
# at once would starve each other's time limits
test_holds vm
test_cpus 2

test_lazy_prereq VM '"$SRCDIR/ci/rxe-vm" --check'
test_require_in_ci VM JQ TCPDUMP

R=$TRASH_DIRECTORY/vm

# The rank counts the guest sweeps (tests/vm/coll.sh): the ASan tier takes 2, 5 (not a power of
# two: rhd's extra ranks) and 8, one iteration a size, so that its guest fits the time limit on
# a busy CI machine; the plain tier every count from 2 to 8 (tests/README, "The ASan tier")
if test "${FABSCOPE_TEST_TIER:-}" = asan; then
	RANKS="2 5 8" ITERS=1
else
	RANKS="2 3 4 5 6 7 8" ITERS=2
fi

# ran NAME [CODE]: the guest's run NAME exited CODE (default 0); else say how, with its stderr
ran() {
	local rc
	rc=$(cat "$R/$1.rc" 2>/dev/null) || { echo "$1: the guest did not run it"; return 1; }
	test "$rc" = "${2:-0}" && return 0
	echo "$1: exit $rc, not ${2:-0}; its stderr:"
	cat "$R/$1.err"
	return 1
}

# deltas NAME COUNTER: "rxeI DELTA" for each device, what COUNTER grew by during run NAME
# (NAME.c0, NAME.c1: `grep -r . .../rxe*/ports/1/hw_counters/` before and after)
deltas() {
	awk -F: -v c="$2" 'FNR == 1 { f++ } { n = split($1, p, "/"); if (p[n] != c) next
		if (f == 1) a[p[5]] = $2; else b[p[5]] = $2 } END { for (d in b) print d, b[d] - a[d] }' \
		"$R/$1.c0" "$R/$1.c1" | sort -V
}

# one_per_device NAME N: rxe1..rxeN sent and received SENDs during run NAME, the other
# devices nothing (rank i on rxe(i+1): every rank used its own device, and only it)
one_per_device() {
	local n=$2
	{ deltas "$1" rdma_sends; deltas "$1" rdma_recvs; } |
		awk -v n="$n" '{ i = substr($1, 4) + 0; if ((i <= n) != ($2 > 0)) bad = bad " " $0 }
			END { if (bad != "") { print "wrong devices busy:" bad; exit 1 } }' || {
		echo "$1 ($n ranks): rdma_sends, then rdma_recvs, per device:"
		deltas "$1" rdma_sends
		deltas "$1" rdma_recvs
		return 1
	}
}

# The sizes tests/vm/coll.sh sweeps (-b 4 -e 3000000 -f 9.3), as the loop makes them; a record
# holds them rounded down to whole floats (allreduce) or to multiples of 4N (alltoall), and
# alltoall skips the sizes below 4N (one element a rank: 4 B here).
RAW='[4, 37, 345, 3217, 29922, 278275, 2587960]'

# records NAME N ALGO ROUND: every record of run NAME is right, over verbs, with N ranks in
# ring order 0..N-1, rank r on rail r at 10.1.0.(r+1), and the sizes of the sweep
records() {
	jq -e --argjson n "$2" --arg algo "$3" --argjson round "$4" --argjson raw "$RAW" '
		($raw | map(. / $round | floor | . * $round) | map(select(. > 0))) as $want |
		length == ($want | length) and
		[.[].msg_size_bytes] == $want and
		all(.[]; .status == "ok" and .transport == "verbs" and .algo == $algo and
		    .ranks == $n and .flows == 1 and .metrics.wrong == 0 and
		    .params.chunk_bytes == 16384 and .params.check == true and
		    (.endpoints | length == $n and
		     all(.[]; .ip == "10.1.0.\(.rank + 1)" and .rail == .rank and .pos == .rank) and
		     (map(.rank) | sort) == [range($n)]))' "$R/$1.out" >/dev/null || {
		echo "$1: not the right records (one a size of $RAW that rounds to a multiple of $4 above 0) of $3 over verbs with $2 ranks:"
		jq -c '.[] | {msg_size_bytes, transport, algo, ranks, wrong: .metrics.wrong, status}' "$R/$1.out"
		jq -c '.[0].endpoints' "$R/$1.out"
		return 1
	}
}

test_expect_success VM 'boot the VM with 8 rxe nodes and run the collectives over verbs' '
	{ "$SRCDIR/ci/rxe-vm" -n 8 -t 900 -o "$R" -e FABSCOPE="$FABSCOPE" -e COLL_RANKS="$RANKS" \
		-e COLL_ITERS=$ITERS -- bash "$SRCDIR/tests/vm/coll.sh" >vm.out 2>vm.err &&
		test -f "$R/finished" ||
		{ echo "the guest did not finish; vm.err ends:"; tail -n 15 vm.err; false; }; } &&
	echo "seconds per run (guest clock); RNR NAKs received / SENDs, all devices:" &&
	for t in "$R"/*.time; do
		n=$(basename "$t" .time) &&
		echo "$n $(awk "{ printf \"%.1f\", \$2 - \$1 }" "$t") s," \
			"RNR $(deltas $n rcvd_rnr_err | awk "{ s += \$2 } END { print s }")" \
			"/ $(deltas $n rdma_sends | awk "{ s += \$2 } END { print s }")" || return 1
	done &&
	echo "load at the end: $(cat "$R/loadavg")"
'

for n in $RANKS; do
	test_expect_success VM,JQ "allreduce ring and rhd, $n ranks over verbs: every element of every size right, one rxe device each" '
		ran ar-ring-'$n' && records ar-ring-'$n' '$n' ring 4 && one_per_device ar-ring-'$n' '$n' &&
		ran ar-rhd-'$n' && records ar-rhd-'$n' '$n' rhd 4 && one_per_device ar-rhd-'$n' '$n' &&
		jq -e "all(.[]; .op == \"sum\" and .dtype == \"float32\" and .count * 4 == .msg_size_bytes)" \
			"$R/ar-ring-'$n'.out" >/dev/null
	'
	test_expect_success VM,JQ "alltoall pairwise and direct, $n ranks over verbs: every element right, sizes rounded to 4n" '
		ran a2a-pairwise-'$n' && records a2a-pairwise-'$n' '$n' pairwise $((4 * '$n')) &&
		one_per_device a2a-pairwise-'$n' '$n' &&
		ran a2a-direct-'$n' && records a2a-direct-'$n' '$n' direct $((4 * '$n')) &&
		one_per_device a2a-direct-'$n' '$n'
	'
done

for algo in ring rhd pairwise direct; do
	test_expect_success VM,JQ "$algo over verbs: one element spoiled on its way to rank 3 of 5 is caught: #wrong > 0, exit 1, one line" '
		ran bad-'$algo' 1 &&
		jq -e "length == 3 and all(.[]; .transport == \"verbs\" and .metrics.wrong > 0)" \
			"$R/bad-'$algo'.out" >/dev/null &&
		# (5 ranks on the VM'\''s cores: the warning that they take turns, then the one error)
		test "$(grep -vc "warning: 5 ranks on this host" "$R/bad-'$algo'.err")" = 1 &&
		test_grep "wrong element.*data check failed" "$R/bad-'$algo'.err"
	'
done

test_expect_success VM,JQ 'two and three QPs per peer, queues 2 and 1 deep: every element right' '
	ran flows2 && ran flows3 &&
	jq -e "length == 6 and all(.[]; .transport == \"verbs\" and .flows == 2 and .params.tx_depth == 2 and
	       .metrics.wrong == 0)" "$R/flows2.out" >/dev/null &&
	jq -e "length == 5 and all(.[]; .transport == \"verbs\" and .flows == 3 and .params.tx_depth == 1 and
	       .metrics.wrong == 0)" "$R/flows3.out" >/dev/null &&
	one_per_device flows2 5 && one_per_device flows3 5
'

# data_pairs NAME: "SRC DST" of the RoCEv2 packets run NAME sent with data (requests of 1 KiB;
# ACKs are 20 bytes of BTH, AETH and ICRC), each pair once
data_pairs() { awk '$3 > 256 { print $1, $2 }' "$R/$1.wire" | sort -u; }

test_expect_success VM 'no sender waits out RNR NAKs: receivers say when their RECVs are posted' '
	for t in "$R"/*.c0; do
		n=$(basename "$t" .c0) &&
		case $n in flows*) continue ;; esac &&
		r=$(deltas "$n" rcvd_rnr_err | awk "{ s += \$2 } END { print s + 0 }") &&
		s=$(deltas "$n" rdma_sends | awk "{ s += \$2 } END { print s + 0 }") &&
		{ test $((r * 100)) -le "$s" || { echo "$n: $r RNR NAKs in $s SENDs"; return 1; }; } || return 1
	done
'

test_expect_success VM 'a device given with another device'"'"'s address: exit 3, each rank says which' '
	ran swapped 3 &&
	grep -q "rank 0: rxe1 port 1 has no RoCEv2 GID for 10.1.0.2: that address is on another device" "$R/swapped.err" &&
	! grep -v "has no RoCEv2 GID" "$R/swapped.err"
'

test_expect_success VM,JQ 'no --bind: each endpoint is its device, its RoCEv2 GID and that GID'"'"'s address' '
	ran nobind &&
	{
		jq -e "length == 1 and (.[0].endpoints | length == 3 and
		       all(.[]; .device == \"rxe\(.rank + 1)\" and .gid == \"::ffff:10.1.0.\(.rank + 1)\" and
			       .ip == \"10.1.0.\(.rank + 1)\"))" "$R/nobind.out" >/dev/null || {
			jq -c ".[0].endpoints" "$R/nobind.out"
			false
		}
	}
'

test_expect_success VM,JQ,TCPDUMP 'the wire: the ring of the record, each rank sending from its own address to the next' '
	ran wire-ring &&
	jq -e "length == 1 and all(.[]; .metrics.wrong == 0)" "$R/wire-ring.out" >/dev/null &&
	jq -r ".[0].endpoints | sort_by(.pos) | map(.ip) as \$ip |
	       range(\$ip | length) | \"\(\$ip[.]) \(\$ip[(. + 1) % (\$ip | length)])\"" "$R/wire-ring.out" |
		sort >expect &&
	test "$(wc -l <expect)" = 4 &&
	data_pairs wire-ring >actual &&
	test_cmp expect actual
'

test_expect_success VM,JQ,TCPDUMP 'the wire: direct all-to-all, every rank sending to every other from its own address' '
	ran wire-direct &&
	jq -e "length == 1 and all(.[]; .metrics.wrong == 0)" "$R/wire-direct.out" >/dev/null &&
	jq -r "[.[0].endpoints[].ip] as \$ip | \$ip[] as \$a | \$ip[] as \$b | select(\$a != \$b) | \"\(\$a) \(\$b)\"" \
		"$R/wire-direct.out" | sort >expect &&
	test "$(wc -l <expect)" = 12 &&
	data_pairs wire-direct >actual &&
	test_cmp expect actual
'

test_done
