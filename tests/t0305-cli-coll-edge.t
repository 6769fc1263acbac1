#!/usr/bin/env bash
test_description='allreduce and alltoall on this host, the edges a new user meets: more ranks
than cores (a warning; nccl-tests habit -n for iterations: the -i hint), a sweep whose rows come
as each size finishes, SIGINT mid-sweep (rows kept, one "interrupted", exit 130, no noise from
the other ranks), a progress line on a terminal, and alltoall sizes that give a rank no element'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq SETSID 'command -v setsid'
# a terminal for stderr: script(1), util-linux
test_lazy_prereq SCRIPT 'command -v script && script -qec true /dev/null </dev/null >/dev/null'
test_require_in_ci JQ SETSID SCRIPT

CORES=$(nproc)
MANY=$((CORES + 2))

# The lines of FILE other than the warning about more ranks than cores: not_cores FILE >OUT
not_cores() {
	grep -v "^fabscope [a-z]*: warning: [0-9]* ranks on this host's" "$1"
}

# bg LOG ARGS...: fabscope ARGS in the background, LOG.out and LOG.err; its PID in $bg_pid
bg() {
	local log=$1
	shift
	"$FABSCOPE" "$@" >"$log.out" 2>"$log.err" &
	bg_pid=$!
	test_atexit "test_kill_pid $bg_pid"
}

test_expect_success 'more ranks than cores: one warning, the run goes on; -n without -i: the -i hint' '
	# nccl-tests command line shape (-b -e -f -n -w), sizes tiny so that it ends soon
	"$FABSCOPE" allreduce -b 8 -e 16 -f 2 -n $MANY -w 1 >out 2>err &&
	cat err &&
	test $(wc -l <err) = 2 &&
	test_grep "^fabscope allreduce: warning: $MANY ranks on this host.s $CORES cores\\?: they take turns on the CPUs" err &&
	test_grep "give -n $CORES or fewer" err &&
	test_grep "^fabscope allreduce: warning: -n $MANY starts $MANY ranks; .*nccl-tests. -n (iterations), that is -i here: -i $MANY$" err &&
	# and it ran: both sizes, with that many ranks
	test_grep "^# fabscope allreduce: $MANY ranks," out &&
	test_grep "^ *16 *4 *float32 *sum *all .* 0$" out &&
	# -i given: the iterations are known, only the cores are said
	"$FABSCOPE" alltoall -n $MANY -b 4K -w 1 -i 2 >out 2>err &&
	test $(wc -l <err) = 1 &&
	test_grep "warning: $MANY ranks on this host" err &&
	# -w without -i, ranks within the cores: the hint alone
	"$FABSCOPE" allreduce -n 1 -b 8 -w 1 >out 2>err &&
	test $(wc -l <err) = 1 &&
	test_grep "warning: -n 1 starts 1 rank; .*that is -i here: -i 1$" err &&
	# no more ranks than cores and -i given: nothing said
	"$FABSCOPE" allreduce -n 1 -b 8 -w 1 -i 2 >out 2>err &&
	test_must_be_empty err
'

test_expect_success JQ 'a sweep: each row as its size finishes; SIGINT to rank 0 keeps them, one line, exit 130' '
	# 3000 iterations of 4 KiB are done long before those of 16 MiB (48 GB a rank) are
	bg s1 allreduce -n 3 -b 4K -e 16M -f 4096 -w 0 -i 3000 -o s1.json &&
	test_wait_for 60 grep -q "^ *4096 *1024 *float32" s1.out &&
	kill -0 $bg_pid &&
	test_grep "^# fabscope allreduce: 3 ranks" s1.out &&
	# (the records file has its first record too)
	test_wait_for 10 grep -q "\"msg_size_bytes\":4096" s1.json &&
	kill -INT $bg_pid &&
	{ wait $bg_pid; echo $? >rc; } &&
	cat s1.out s1.err &&
	echo 130 >expect && test_cmp expect rc &&
	not_cores s1.err >err &&
	test $(wc -l <err) = 1 &&
	test_grep "^fabscope allreduce: interrupted during size 16777216 B (2 of 2): the 1 size measured is kept$" err &&
	! grep -i "broken pipe\|connection\|failed" s1.err &&
	! grep "16777216" s1.out &&
	test_grep "^# Avg bus bandwidth .* over 1 size$" s1.out &&
	jq -s -e "length == 1 and .[0].msg_size_bytes == 4096 and .[0].metrics.wrong == 0" s1.json >/dev/null &&
	# stderr is no terminal: no progress line, however long the size ran
	! grep "iteration\|warmup" s1.err
'

test_expect_success JQ,SETSID 'SIGINT to every rank at once (a terminal'"'"'s ^C): --json kept, one line, exit 130' '
	{ setsid "$FABSCOPE" alltoall -n 3 -b 3K -e 12M -f 4096 -w 0 -i 3000 --json >s2.json 2>s2.err & } &&
	pid=$! &&
	test_atexit "test_kill_pid $pid" &&
	test_wait_for 60 grep -q "\"msg_size_bytes\":3072" s2.json &&
	kill -INT -- -$pid &&
	{ wait $pid; echo $? >rc; } &&
	cat s2.err &&
	echo 130 >expect && test_cmp expect rc &&
	not_cores s2.err >err &&
	test $(wc -l <err) = 1 &&
	test_grep "^fabscope alltoall: interrupted during size 12582912 B (2 of 2): the 1 size measured is kept$" err &&
	jq -e "length == 1 and .[0].msg_size_bytes == 3072" s2.json >/dev/null
'

PORT=$(ptp_port 0)

test_expect_success 'the header comes before the ranks meet; interrupted there: one line, exit 130' '
	bg h0 allreduce --rank 0 --nranks 2 --root 127.0.0.1:$PORT -b 4K --timeout 60 &&
	# no other rank ever comes: the first line is out all the same
	test_wait_for 30 grep -q "^# fabscope allreduce: 2 ranks, tcp, ring" h0.out &&
	kill -INT $bg_pid &&
	{ wait $bg_pid; echo $? >rc; } &&
	cat h0.err &&
	echo 130 >expect && test_cmp expect rc &&
	test $(wc -l <h0.err) = 1 &&
	test_grep "^fabscope allreduce: interrupted while the ranks met: nothing measured$" h0.err
'

PORT1=$(ptp_port 1)

test_expect_success 'ranks started by hand, rank 0 interrupted: each of the others says so once, exit 130' '
	for r in 1 2; do
		bg h$r allreduce --rank $r --nranks 3 --root 127.0.0.1:$PORT1 -b 16M -w 0 -i 1000000 || return 1
		eval "p$r=\$bg_pid"
	done &&
	bg h0 allreduce --rank 0 --nranks 3 --root 127.0.0.1:$PORT1 -b 16M -w 0 -i 1000000 &&
	p0=$bg_pid &&
	test_wait_for 60 grep -q "ring position 2" h0.out &&
	kill -INT $p0 &&
	for r in 0 1 2; do
		{ eval "wait \$p$r"; echo $? >rc$r; } &&
		echo 130 >expect && test_cmp expect rc$r && test $(wc -l <h$r.err) = 1 || { cat h$r.err; return 1; }
	done &&
	test_grep "^fabscope allreduce: interrupted during size 16777216 B (1 of 1): nothing measured yet$" h0.err &&
	test_grep "^fabscope allreduce: rank 1: rank 0 was interrupted$" h1.err &&
	test_grep "^fabscope allreduce: rank 2: rank 0 was interrupted$" h2.err
'

test_expect_success SCRIPT 'stderr a terminal: a long size shows its progress there, and SIGINT says where it was' '
	cat >prog.sh <<-EOF &&
	echo \$\$ >prog.pid
	exec "$FABSCOPE" allreduce -n 2 -b 16M -w 0 -i 1000000 >prog.out
	EOF
	{ script -qfec "sh prog.sh" prog.tty </dev/null >/dev/null 2>&1 & } &&
	spid=$! &&
	test_atexit "test_kill_pid $spid" &&
	test_wait_for 60 grep -q "size 16777216 B (1 of 1): iteration [0-9]* of 1000000" prog.tty &&
	kill -INT $(cat prog.pid) &&
	{ wait $spid; echo $? >rc; } &&
	cat -v prog.tty &&
	echo 130 >expect && test_cmp expect rc &&
	# the line is rewritten in place: a carriage return and erase-line before each
	test_grep "$(printf "\r\033\\[K")fabscope allreduce: size 16777216 B" prog.tty &&
	test_grep "fabscope allreduce: interrupted during size 16777216 B (1 of 1)" prog.tty &&
	# the table is not on the terminal, and only rows are in it
	test_grep "^# fabscope allreduce: 2 ranks" prog.out &&
	! grep "iteration" prog.out
'

test_expect_success JQ 'alltoall: a size that gives a rank no element is refused, naming the least (exit 2)' '
	test_expect_exit 2 "$FABSCOPE" alltoall -n 3 -b 8 -e 8 >out 2>err &&
	cat err &&
	test $(wc -l <err) = 1 &&
	test_grep "^fabscope alltoall: size 8 B is below 12 B, the least alltoall of 3 ranks can run: each rank needs one 4-byte element; give -b 12 or more$" err &&
	# refused before any rank started: nothing on standard output
	test_must_be_empty out &&
	# a sweep that never gets there
	test_expect_exit 2 "$FABSCOPE" alltoall -n 5 -b 4 -e 19 -f 2 -w 1 -i 2 >out 2>err &&
	test $(wc -l <err) = 1 &&
	test_grep "every size (4 to 16 B) is below 20 B, the least alltoall of 5 ranks can run.*give -e 20 or more$" err &&
	# one element each is enough
	"$FABSCOPE" alltoall -n 3 -b 12 -w 1 -i 2 --json >ok.json 2>err &&
	jq -e "length == 1 and .[0].msg_size_bytes == 12 and .[0].count == 3 and .[0].metrics.wrong == 0" ok.json >/dev/null &&
	# allreduce has no such floor: one element of 4 bytes, whatever the ranks
	"$FABSCOPE" allreduce -n 3 -b 4 -w 1 -i 2 --json >ar.json 2>/dev/null &&
	jq -e "length == 1 and .[0].count == 1 and .[0].metrics.wrong == 0" ar.json >/dev/null
'

test_expect_success JQ 'alltoall: a sweep whose low end is too small says which sizes it skips, runs the rest' '
	"$FABSCOPE" alltoall -n 3 -b 4 -e 64 -f 2 -w 1 -i 2 --json >sw.json 2>err &&
	cat err &&
	not_cores err >err1 &&
	test $(wc -l <err1) = 1 &&
	test_grep "^fabscope alltoall: warning: sizes 4 and 8 skipped: below 12 B, the least alltoall of 3 ranks can run" err1 &&
	# 16, 32 and 64, each rounded down to a multiple of 12
	jq -e "[.[].msg_size_bytes] == [12, 24, 60] and all(.[]; .metrics.wrong == 0)" sw.json >/dev/null
'

test_expect_success JQ 'alltoall --multi-rail: the floor is the largest rail'"'"'s ranks, not all of them' '
	# rails of 3 and 1: 8 B is short of 12
	test_expect_exit 2 "$FABSCOPE" alltoall -n 4 --rail 0,0,0,1 --multi-rail -b 8 -w 1 -i 2 >out 2>err-all &&
	not_cores err-all >err &&
	cat err &&
	test $(wc -l <err) = 1 &&
	test_grep "size 8 B is below 12 B, the least alltoall of 3 ranks can run" err &&
	# rails of 2 and 2: 8 B gives each rank of a rail one element (4 ranks x 4 B would be 16)
	"$FABSCOPE" alltoall -n 4 --rail 0,1 --multi-rail -b 8 -w 1 -i 2 --json >mr.json 2>/dev/null &&
	jq -e "length == 3 and all(.[]; .metrics.wrong == 0) and .[0].msg_size_bytes == 8 and .[0].ranks == 2" mr.json >/dev/null
'

test_done
