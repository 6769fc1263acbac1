#!/usr/bin/env bash
test_description='fabscope allreduce and alltoall over TCP on this host: every element right for
1 to 8 ranks and sizes that do not divide, both algorithms each, a corrupted element caught,
nccl-tests formulas, ranks started by hand and by mpirun, rail order, and the failure paths'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq MPIRUN 'command -v mpirun'
test_require_in_ci MPIRUN JQ
# the silent root is a perl listener (lib-ptp.sh)
test_lazy_prereq PERL 'command -v perl && perl -MIO::Socket::INET -e 1'
test_require_in_ci PERL
# a --bind address that is not here fails to bind (not so with ip_nonlocal_bind)
test_lazy_prereq NO_NONLOCAL_BIND '! grep -qx 1 /proc/sys/net/ipv4/ip_nonlocal_bind'

# the records of a --json run: every one correct, and as many as expected
# all_right FILE NSIZES
all_right() {
	jq -e --argjson n "$2" 'length == $n and all(.[]; .status == "ok" and .metrics.wrong == 0)' "$1" >/dev/null ||
		{ echo "all_right $1: not $2 records all with wrong == 0:"; jq -c '.[] | [.msg_size_bytes, .metrics.wrong]' "$1"; return 1; }
}

# The lines of an -n run's stderr other than the warnings that more ranks than
# cores, or -n without -i, bring (t0305): on a small host they come with every
# run of many ranks.  not_cores FILE >OUT
not_cores() {
	grep -v "^fabscope [a-z]*: warning: \([0-9]* ranks on this host's\|-n [0-9]* starts\)" "$1"
}

# Sizes 4 B (one element: fewer than the ranks) to ~3 MB by a factor that is not a power of two,
# with 4 KiB chunks so that a segment travels in many pieces.
SWEEP="-b 4 -e 3000000 -f 9.3 --chunk 4K -w 1 -i 2"
NSIZES=7

for n in 1 2 3 4 5 6 7 8; do
	test_expect_success JQ "allreduce ring and rhd, $n ranks: every element of every size right" '
		"$FABSCOPE" allreduce -n '$n' $SWEEP --json >ring.json &&
		all_right ring.json $NSIZES &&
		"$FABSCOPE" allreduce -n '$n' -A rhd $SWEEP --json >rhd.json &&
		all_right rhd.json $NSIZES &&
		jq -e "all(.[]; .ranks == '$n' and .dtype == \"float32\" and .op == \"sum\" and
		       .count * 4 == .msg_size_bytes)" ring.json >/dev/null &&
		# one rank: nothing crosses the fabric, busbw 0 (nccl-tests), its node named
		if test '$n' = 1; then
			jq -e "all(.[]; .metrics.busbw_gbps == 0 and .metrics.algbw_gbps > 0 and
			       .endpoints[0].node != \"?\")" ring.json >/dev/null
		fi
	'
	# 4 B gives more than one rank no element: skipped (t0305)
	test_expect_success JQ "alltoall pairwise and direct, $n ranks: every element right, sizes rounded to 4n" '
		a2a_sizes=$(($NSIZES - ('$n' > 1))) &&
		"$FABSCOPE" alltoall -n '$n' $SWEEP --json >pw.json &&
		all_right pw.json $a2a_sizes &&
		"$FABSCOPE" alltoall -n '$n' -A direct $SWEEP --json >direct.json &&
		all_right direct.json $a2a_sizes &&
		jq -e "all(.[]; .msg_size_bytes % (4 * '$n') == 0 and .count * 4 == .msg_size_bytes)" pw.json >/dev/null
	'
done

test_expect_success JQ 'two flows per peer and a shallow queue still deliver every element' '
	"$FABSCOPE" allreduce -n 5 -q 2 --tx-depth 2 $SWEEP --json >q2.json &&
	all_right q2.json $NSIZES &&
	"$FABSCOPE" alltoall -n 5 -q 3 --tx-depth 1 -A direct $SWEEP --json >a2a-q3.json &&
	all_right a2a-q3.json $(($NSIZES - 1))
'

test_expect_success JQ 'nccl-tests formulas: algbw = size / time, busbw = algbw x 2(n-1)/n and (n-1)/n' '
	"$FABSCOPE" allreduce -n 4 -b 64K -e 1M -f 4 -w 1 -i 3 --json >f.json &&
	"$FABSCOPE" alltoall -n 4 -b 64K -e 1M -f 4 -w 1 -i 3 --json >g.json &&
	jq -e "length == 3 and all(.[]; .metrics as \$m | (\$m.algbw_gbps - .msg_size_bytes * 8 / \$m.time_us / 1000 | fabs) < 1e-6 * \$m.algbw_gbps + 1e-9 and
	       (\$m.busbw_gbps - \$m.algbw_gbps * 1.5 | fabs) < 1e-9 + 1e-9 * \$m.busbw_gbps and
	       \$m.time_us_min <= \$m.time_us and \$m.time_us <= \$m.time_us_max)" f.json >/dev/null &&
	jq -e "length == 3 and all(.[]; (.metrics.busbw_gbps - .metrics.algbw_gbps * 0.75 | fabs) < 1e-9 + 1e-9 * .metrics.busbw_gbps)" g.json >/dev/null &&
	jq -e "[.[].msg_size_bytes] == [65536, 262144, 1048576]" f.json >/dev/null
'

test_expect_success 'the table: nccl-tests columns, the ring order, a footer with the average busbw' '
	"$FABSCOPE" allreduce -n 3 -b 1M -e 2M -w 1 -i 2 >table &&
	cat table &&
	test_grep "size \[B\] *count *type *redop *group *time \[us\] *algbw \[GB/s\] *busbw \[GB/s\] *#wrong" table &&
	test_grep "^ *1048576 *262144 *float32 *sum *all .* 0$" table &&
	test_grep "ring position 2 *rank 2" table &&
	test_grep "^# Out of bounds values : 0 OK" table &&
	test_grep "^# Avg bus bandwidth *: .* GB/s (.* Gb/s) over 2 sizes" table
'

test_expect_success JQ '--multi-rail: a ring per rail at once, a record per rail and their sum' '
	"$FABSCOPE" allreduce -n 5 --rail 0,1 --multi-rail -b 1000 -e 1M -f 31 --chunk 4K -w 1 -i 2 --json >mr.json &&
	jq -c ".[] | [.group, .scope, .ranks, .metrics.wrong, [.endpoints[] | [.rank, .pos, .rail]]]" mr.json &&
	jq -e "length == 9 and all(.[]; .metrics.wrong == 0)" mr.json >/dev/null &&
	jq -e "[.[0:3][] | .group] == [\"rail 0\", \"rail 1\", \"sum\"] and
	       (.[0] | .scope == \"rail\" and .rail == 0 and .ranks == 3 and
		       [.endpoints[] | [.rank, .pos]] == [[0, 0], [2, 1], [4, 2]]) and
	       (.[1] | .rail == 1 and .ranks == 2 and [.endpoints[] | .rank] == [1, 3]) and
	       (.[2] | .scope == \"aggregate\" and .ranks == 5 and .rails == 2)" mr.json >/dev/null &&
	jq -e "[range(0; 9; 3) as \$i | .[\$i:\$i+3]] | all(.[]; (.[2].metrics.busbw_gbps - .[0].metrics.busbw_gbps -
	       .[1].metrics.busbw_gbps | fabs) < 1e-6)" mr.json >/dev/null &&
	test_expect_exit 1 "$FABSCOPE" alltoall -n 4 --rail 0,1 --multi-rail -b 64K -e 64K -w 1 -i 2 --corrupt 3 \
		--json >mr-bad.json 2>/dev/null &&
	jq -e "[.[] | [.group, (.metrics.wrong > 0)]] == [[\"rail 0\", false], [\"rail 1\", true], [\"sum\", true]]" mr-bad.json >/dev/null
'

for algo in "allreduce ring" "allreduce rhd" "alltoall pairwise" "alltoall direct"; do
	set -- $algo
	test_expect_success JQ "$1 $2: one element corrupted on the wire is caught: #wrong > 0, exit 1, one line" '
		test_expect_exit 1 "$FABSCOPE" '$1' -n 5 -A '$2' -b 1000 -e 100000 -f 10 -w 1 -i 2 --corrupt 3 \
			--json >bad.json 2>err-all &&
		jq -e "length == 3 and all(.[]; .metrics.wrong > 0)" bad.json >/dev/null &&
		not_cores err-all >err &&
		test $(wc -l <err) = 1 &&
		test_grep "wrong element.*data check failed" err
	'
done

test_expect_success JQ '--no-check: no verdict (wrong -1), exit 0 even with a corrupted element' '
	"$FABSCOPE" allreduce -n 3 -b 4K -w 1 -i 2 --corrupt 1 --no-check --json >nc.json &&
	jq -e "length == 1 and all(.[]; .metrics.wrong == -1 and .params.check == false)" nc.json >/dev/null
'

# rank_bg LOG ARGS...: a rank started by hand, in the background; its PID in $rank_pid
rank_bg() {
	local log=$1
	shift
	"$FABSCOPE" "$@" >"$log.out" 2>"$log.err" &
	rank_pid=$!
	test_atexit "test_kill_pid $rank_pid"
}

PORT=$(ptp_port 1)	# the root (rank 0) of the ranks started by hand

# long_ring3 PREFIX: a long 3-rank allreduce in the background, ranks 1, 2, 0 (logs PREFIXr.out
# and .err, pids in p0, p1, p2), once rank 0 has printed its ring
long_ring3() {
	local r
	for r in 1 2 0; do
		rank_bg $1$r allreduce --rank $r --nranks 3 --root 127.0.0.1:$PORT -b 16M -w 0 -i 100000 --timeout 5 ||
			return 1
		eval "p$r=\$rank_pid"
	done
	test_wait_for 30 grep -q "ring position 2" ${1}0.out
}

test_expect_success JQ 'ranks started by hand meet at --root, in rail order; records name every endpoint' '
	rank_bg r1 allreduce --rank 1 --nranks 4 --root 127.0.0.1:$PORT --rail 0 --node n1 -b 256K -e 256K -w 1 -i 2 &&
	p1=$rank_pid &&
	rank_bg r2 allreduce --rank 2 --nranks 4 --root 127.0.0.1:$PORT --rail 1 --node n2 -b 256K -e 256K -w 1 -i 2 &&
	p2=$rank_pid &&
	rank_bg r3 allreduce --rank 3 --nranks 4 --root 127.0.0.1:$PORT --rail 0 --node n3 -b 256K -e 256K -w 1 -i 2 &&
	p3=$rank_pid &&
	"$FABSCOPE" allreduce --rank 0 --nranks 4 --root 127.0.0.1:$PORT --rail 1 --node n0 -b 256K -e 256K -w 1 -i 2 \
		--label lb=ecmp --json >hand.json &&
	wait $p1 && wait $p2 && wait $p3 &&
	test_must_be_empty r1.out && test_must_be_empty r1.err &&
	all_right hand.json 1 &&
	jq -e ".[0] | .labels.lb == \"ecmp\" and (.endpoints | length == 4 and
	       (sort_by(.pos) | map(.rank)) == [1, 3, 0, 2] and
	       (sort_by(.pos) | map(.rail)) == [0, 0, 1, 1] and all(.[]; .ip == \"127.0.0.1\"))" hand.json >/dev/null
'

# nccl-tests' letters as the README maps them: the same meaning, or one line naming what to give
test_expect_success JQ 'nccl-tests letters: -g N is -n N and -c 0 --no-check; -g 1 under a launcher; -t N names -n' '
	"$FABSCOPE" allreduce -g 3 -b 4K -w 1 -i 2 --json >g.json 2>g.err &&
	jq -e "length == 1 and .[0].ranks == 3 and .[0].metrics.wrong == 0" g.json >/dev/null &&
	"$FABSCOPE" allreduce -n 3 -b 4K -w 1 -i 2 --corrupt 1 -c 0 --json >c0.json &&
	jq -e "length == 1 and .[0].metrics.wrong == -1 and .[0].params.check == false" c0.json >/dev/null &&
	test_expect_exit 1 "$FABSCOPE" allreduce -n 3 -b 4K -w 1 -i 2 --corrupt 1 -c 1 --json >c1.json 2>c1.err &&
	jq -e ".[0].metrics.wrong > 0" c1.json >/dev/null &&
	# one GPU a process under mpirun is one rank a process here
	OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 rank_bg g1 alltoall -g 1 --root 127.0.0.1:$PORT -b 64K -w 1 -i 2 &&
	OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "$FABSCOPE" alltoall -g 1 --root 127.0.0.1:$PORT -b 64K -w 1 -i 2 \
		--json >g1.json &&
	wait $rank_pid &&
	all_right g1.json 1 &&
	OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 test_expect_exit 2 "$FABSCOPE" allreduce -g 2 --root 127.0.0.1:$PORT 2>e1 &&
	test $(wc -l <e1) = 1 &&
	test_grep "^fabscope allreduce: -g 2: a fabscope rank is one process, so under mpirun or srun (or with --rank) give -g 1 and start 2 times the processes (-np)$" e1 &&
	test_expect_exit 2 "$FABSCOPE" allreduce -g 3 -n 2 2>e2 &&
	test $(wc -l <e2) = 1 && test_grep "\-g 3 and -n 2: nccl-tests. -g is -n here" e2 &&
	test_expect_exit 2 "$FABSCOPE" alltoall -n 2 -t 4 2>e3 &&
	test $(wc -l <e3) = 1 && test_grep "\-t 4: -t is the transport here (tcp or verbs); nccl-tests. -t THREADS is -n RANKS" e3 &&
	test_expect_exit 2 "$FABSCOPE" allreduce -n 2 -c 1 --no-check 2>e4 &&
	test $(wc -l <e4) = 1 && test_grep "\-c 1 (check the data) and --no-check contradict" e4 &&
	test_expect_exit 2 "$FABSCOPE" allreduce -n 2 -c 2 2>e5 &&
	test_grep "invalid value .2. for option .-c." e5
'

test_expect_success JQ 'ranks from an MPI launcher environment (OMPI_COMM_WORLD_RANK/SIZE)' '
	OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 rank_bg e1 alltoall --root 127.0.0.1:$PORT -b 64K -e 64K -w 1 -i 2 &&
	OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "$FABSCOPE" alltoall --root 127.0.0.1:$PORT -b 64K -e 64K -w 1 -i 2 \
		--json >env.json &&
	wait $rank_pid &&
	all_right env.json 1
'

test_expect_success MPIRUN,JQ 'under mpirun: 3 ranks of allreduce, rank 0 prints' '
	{ mpirun --allow-run-as-root --oversubscribe -np 3 --mca btl self,tcp \
		"$FABSCOPE" allreduce --root 127.0.0.1:$PORT -b 100000 -e 400000 -w 1 -i 2 --json >mpi.json 2>mpi.err ||
		{ cat mpi.err; false; }; } &&
	all_right mpi.json 3 &&
	jq -e "all(.[]; .ranks == 3)" mpi.json >/dev/null
'

test_expect_success 'a rank with other options is refused by name: exit 2, one line on each' '
	rank_bg m1 allreduce --rank 1 --nranks 2 --root 127.0.0.1:$PORT -b 1M --timeout 5 &&
	test_expect_exit 2 "$FABSCOPE" allreduce --rank 0 --nranks 2 --root 127.0.0.1:$PORT -b 2M --timeout 5 \
		>/dev/null 2>err0 &&
	{ wait $rank_pid; echo $? >rc1; } &&
	cat err0 m1.err &&
	test $(wc -l <err0) = 1 &&
	test_grep "rank 1 (.*) runs with other options than rank 0" err0 &&
	test_grep "min_bytes 1048576 there, 2097152 here" err0 &&
	echo 2 >expect && test_cmp expect rc1 &&
	test $(wc -l <m1.err) = 1
'

test_expect_success 'a rank killed mid-run: rank 0 exits 4 and names it, the others end too' '
	long_ring3 k &&
	sleep 0.5 &&
	kill -9 $p2 &&
	{ wait $p0; echo $? >rc0; } &&
	{ wait $p1; echo $? >rc1; } &&
	cat k0.err k1.err &&
	echo 4 >expect && test_cmp expect rc0 && test_cmp expect rc1 &&
	test $(wc -l <k0.err) = 1 &&
	test_grep "rank 2 (" k0.err &&
	test_grep -i "connection lost\|connection closed" k0.err
'

# Rank 0 stopped while rank 2 dies: rank 1 fails first, tells the root and exits, so the root may
# see its connection to rank 1 break before the one to rank 2; its line still leads with rank 2
# (rank 1's word "send to rank 2 (...) failed", or its own "cannot post a receive for rank 2 (...)"
# when it meets rank 2's connection first: the first rank named in parentheses is rank 2)
test_expect_success 'a rank killed while rank 0 is stopped: rank 0 still names it first' '
	long_ring3 s &&
	sleep 0.5 &&
	kill -STOP $p0 &&
	kill -9 $p2 &&
	{ wait $p1; echo $? >rc1; } &&
	kill -CONT $p0 &&
	{ wait $p0; echo $? >rc0; } &&
	cat s0.err s1.err &&
	echo 4 >expect && test_cmp expect rc0 && test_cmp expect rc1 &&
	test $(wc -l <s0.err) = 1 &&
	if grep -q "rank 1: no progress .*(waiting for data from rank 0)" s1.err; then
		# rank 1 starved on the stopped root before it met rank 2 (seen under ASan): the
		# ordering above did not arise; rank 0 still leads with the word of the rank it broke with
		grep "^fabscope allreduce: rank 1: no progress .* (then rank 0: " s0.err
	else
		# rank 0 names rank 2: as what a rank it broke with said, or (continued after rank 1
		# gave up) as the rank it waited for itself
		grep -E "^fabscope allreduce: rank ([01]: [^(]* rank 2 \(|0: no progress .* \(waiting for data from rank 2\))" s0.err
	fi
'

test_expect_success 'no root to meet: exit 4 after --timeout, one line that says where it looked' '
	test_expect_exit 4 "$FABSCOPE" allreduce --rank 1 --nranks 2 --root 127.0.0.1:1 --timeout 1 2>err &&
	test $(wc -l <err) = 1 &&
	test_grep "cannot reach the root at 127.0.0.1:1" err
'

test_expect_success 'rank 0 alone waits --timeout for the others, then exit 4 naming how many came' '
	test_expect_exit 4 "$FABSCOPE" allreduce --rank 0 --nranks 3 --root 127.0.0.1:$PORT --timeout 1 2>err &&
	test_grep "0 of 3 ranks joined\|1 of 3 ranks joined" err &&
	# a timeout under a second is said as it is, not as 0 s
	test_expect_exit 4 "$FABSCOPE" allreduce --rank 0 --nranks 3 --root 127.0.0.1:$PORT --timeout 0.5 2>err &&
	test_grep "ranks joined within 0.5 s" err
'

test_expect_success 'usage errors: exit 2, one line each' '
	for args in "-n 2 -A tree" "-n 2 --rank 1" "--rank 2 --nranks 2" "--rank 1 --nranks 2" \
		    "-n 2 -t nosuch" "-n 2 -f 0.5" "-n 2 extra" "-n 2 --corrupt 5" "-n 2 --poll spin" "-n 2 --rail 0,x" \
		    "-n 2 -m 1024" "-n 2 -x 3 -t tcp" "-n 2 --qp-timeout 18" "-n 4 --label nokv" "" "-b 1K" \
		    "-n 2 -f 1 -b 4K -e 8K" "-n 2 -f 1.01 -b 4K -e 8M"; do
		test_expect_exit 2 "$FABSCOPE" allreduce $args 2>err &&
		test $(wc -l <err) = 1 || { echo "for: $args"; cat err; return 1; }
	done &&
	test_expect_exit 2 "$FABSCOPE" alltoall -n 2 -A ring 2>err &&
	test_grep "pairwise or direct" err &&
	test_expect_exit 2 "$FABSCOPE" allreduce -b 1K 2>err &&
	test_grep "how many ranks" err &&
	# a sweep that cannot reach -e is refused, not cut short
	test_expect_exit 2 "$FABSCOPE" allreduce -n 2 -f 1 -b 4K -e 8K 2>err &&
	test_grep "stepfactor 1 never gets from -b to -e" err &&
	test_expect_exit 2 "$FABSCOPE" allreduce -n 2 -f 1.01 -b 4K -e 8M 2>err &&
	test_grep "over 64 sizes" err &&
	test_expect_exit 2 "$FABSCOPE" alltoall -n 2 -o "" 2>err &&
	test_grep "option .-o. takes a path (FILE), not an empty string" err &&
	if "$FABSCOPE" version | grep -q verbs; then	# (checked before any device is opened)
		test_expect_exit 2 "$FABSCOPE" allreduce -n 2 -t verbs -m 1000 2>err &&
		test_grep "invalid MTU 1000" err
	fi
'

test_expect_success 'verbs options with tcp: exit 2, one line naming them, before any rank starts' '
	test_expect_exit 2 "$FABSCOPE" allreduce -n 2 --device mlx5_0 2>err-dev &&
	test $(wc -l <err-dev) = 1 &&
	test_grep "^fabscope allreduce: --device is for -t verbs, not -t tcp; over tcp, --bind" err-dev &&
	test_expect_exit 2 "$FABSCOPE" alltoall -n 2 -t tcp --gid-index 3 -m 1024 2>err-gid &&
	test $(wc -l <err-gid) = 1 &&
	test_grep "^fabscope alltoall: --gid-index and --mtu are for -t verbs, not -t tcp$" err-gid &&
	# a rank started by hand says so at once, not after looking for its root
	test_expect_exit 2 "$FABSCOPE" allreduce --rank 1 --nranks 2 --root 127.0.0.1:1 \
		--device mlx5_0,mlx5_1 --ib-port 1 --qp-timeout 14 2>err-hand &&
	test $(wc -l <err-hand) = 1 &&
	test_grep "^fabscope allreduce: --device, --ib-port and --qp-timeout are for -t verbs" err-hand
'

PORT_SILENT=$(ptp_port 0)	# accepts, never answers

test_expect_success PERL 'a root that accepts and never answers: exit 4, one line naming the one --timeout' '
	ptp_silent_listener silent-root.log $PORT_SILENT &&
	test_expect_exit 4 "$FABSCOPE" allreduce --rank 1 --nranks 2 --root 127.0.0.1:$PORT_SILENT \
		--timeout 1 2>err-silent &&
	cat err-silent &&
	test $(wc -l <err-silent) = 1 &&
	test_grep "rank 1: the root (rank 0) sent no .welcome. within 1 s (--timeout)" err-silent
'

test_expect_success '-n: each rank says its own failure once; no rank repeats what another sent it' '
	test_expect_exit 3 "$FABSCOPE" allreduce -n 3 --netns fs-t0300-no-such-ns -b 4K --timeout 5 \
		>/dev/null 2>err-ns-all &&
	cat err-ns-all &&
	not_cores err-ns-all >err-ns &&
	test $(wc -l <err-ns) = 3 &&
	for r in 0 1 2; do
		test $(grep -c "^fabscope allreduce: rank $r: cannot enter network namespace .fs-t0300-no-such-ns." err-ns) = 1 ||
			return 1
	done &&
	# a run that goes well says nothing (with no more ranks than cores)
	n=$(nproc) && { test $n -le 3 || n=3; } &&
	"$FABSCOPE" alltoall -n $n -b 4K -w 1 -i 2 >/dev/null 2>err-quiet &&
	test_must_be_empty err-quiet
'

test_expect_success NO_NONLOCAL_BIND '-n: a data address that is not here: the ranks that bind it say so, once each' '
	test_expect_exit 3 "$FABSCOPE" allreduce -n 4 --bind 192.0.2.1 -b 4K --timeout 5 >/dev/null 2>err-bind-all &&
	cat err-bind-all &&
	not_cores err-bind-all >err-bind &&
	test $(wc -l <err-bind) = 3 &&
	test $(grep -c "cannot listen for data flows on 192.0.2.1" err-bind) = 3 &&
	test $(sort err-bind | uniq -d | wc -l) = 0
'

test_done
