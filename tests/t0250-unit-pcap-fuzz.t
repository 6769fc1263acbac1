#!/usr/bin/env bash
test_description='pcap/dissect.c under libFuzzer (tests/fuzz/fuzz-dissect.c, make fuzz): the
target builds with clang -fsanitize=fuzzer,address,undefined, replays a seed corpus written by
test-tool pcapgen (every kind of packet on every link type - ERF records of Ethernet and
InfiniBand, RoCE v1 among them - and cuts of them), then fuzzes for 20
seconds; any sanitizer report or broken invariant of dissect-check.h fails'
. "$(dirname "$0")/test-lib.sh"

test_lazy_prereq LIBFUZZER '
	printf "%s\n" "#include <stddef.h>" "#include <stdint.h>" \
		"int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);" \
		"int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return d && n > 1 ? 0 : 0; }" \
		>lf.c &&
	clang -fsanitize=fuzzer,address,undefined lf.c -o lf && ./lf -runs=1
'
test_require_in_ci LIBFUZZER TEST_TOOL

FUZZ_TIME=${FUZZ_TIME:-20}
TARGET=$TRASH_DIRECTORY/build/tests/fuzz/fuzz-dissect

test_expect_success LIBFUZZER 'make fuzz builds the target with clang (warnings are errors)' '
	${MAKE:-make} -C "$SRCDIR" O="$TRASH_DIRECTORY/build" DEVELOPER=1 fuzz >build.log 2>&1 &&
	test -x "$TARGET"
'

test_expect_success LIBFUZZER,TEST_TOOL 'a seed corpus from pcapgen: every kind, every link type' '
	cat >specs <<-EOF &&
	rc write_first len=64 psn=0xffffff ackreq ecn=ce
	rc write_only_imm len=16 vlan=100,200 tpid=0x88a8,0x8100
	rc read_req va=0x1000 rkey=5 dmalen=4096
	rc read_resp_first len=32 ipv6 ext=hop,frag mf
	rc read_resp_middle len=32 pad=3
	ack nak=seq
	ack rnr=14
	ack credits=31 ipopts=8
	rc atomic_ack orig=1
	rc cmp_swap
	rc send_only_inv rkey=9 len=4
	rc flush
	uc send_last_imm len=8
	rd atomic_ack
	rd read_req
	ud send_only len=32
	xrc send_first len=8
	cnp becn
	bth op=0x1f len=4
	udp dport=53 len=12
	rc send_first frag=64
	rc send_only len=200 cut=80
	rc send_only iplen=9999 udplen=3
	pfc prio=3 quanta=1000
	pause quanta=0xffff vlan=7
	eth type=0x88cc len=20
	rc write_only v1 len=16 psn=7
	EOF
	mkdir corpus &&
	tt() { "$TEST_TOOL" "$@"; } &&
	tt pcapgen --corpus corpus eth.pcap - <specs >out &&
	test_grep "^packets 27$" out &&
	for link in sll sll2 raw; do
		grep -v -e ^pfc -e ^pause -e ^eth -e vlan= -e " v1" specs >specs.$link &&
		mkdir corpus.$link &&
		tt pcapgen --link $link --corpus corpus.$link $link.pcap - <specs.$link >/dev/null &&
		for f in corpus.$link/*; do mv "$f" corpus/$link-${f##*/} || return 1; done ||
		return 1
	done &&
	grep ipv6 specs >specs.v6 && mkdir corpus.v6 &&
	tt pcapgen --link ipv6 --corpus corpus.v6 v6.pcap - <specs.v6 >/dev/null &&
	for f in corpus.v6/*; do mv "$f" corpus/v6-${f##*/} || return 1; done &&
	# ERF records: Ethernet (extension headers, padding), InfiniBand (LRH, LRH and GRH), a type not read
	cat >specs.erf <<-EOF &&
	rc write_only len=64 erfext=2 erfpad=6
	rc send_only v1 len=8 vlan=5
	pfc prio=3 quanta=1000 erfext=1
	rc write_only ib len=64 slid=1 dlid=2
	rc read_resp_first ib grh len=32 pad=2
	ack ib nak=seq
	cnp ib grh becn
	ud send_only ib len=16 erfext=3
	rc send_only erftype=5
	rc send_only len=40 cut=30
	EOF
	mkdir corpus.erf &&
	tt pcapgen --link erf --corpus corpus.erf erf.pcap - <specs.erf >out.erf &&
	test_grep "^packets 10$" out.erf &&
	for f in corpus.erf/*; do mv "$f" corpus/erf-${f##*/} || return 1; done &&
	test "$(ls corpus | wc -l)" -gt 100
'

test_expect_success LIBFUZZER 'every seed replays without a finding' '
	"$TARGET" -runs=0 corpus >replay.log 2>&1 &&
	test_grep "Done 0 runs\|INITED" replay.log &&
	test_grep ! "ERROR: AddressSanitizer\|runtime error\|fuzz-dissect:" replay.log
'

test_expect_success LIBFUZZER "$FUZZ_TIME seconds of libFuzzer: no crash, no sanitizer report" '
	mkdir work &&
	"$TARGET" -max_total_time=$FUZZ_TIME -timeout=10 -rss_limit_mb=2048 -max_len=2048 \
		-print_final_stats=1 -artifact_prefix=./crash- work corpus >fuzz.log 2>&1 &&
	test_grep "^Done [0-9]* runs" fuzz.log &&
	test_grep "^stat::number_of_executed_units: [1-9]" fuzz.log &&
	test_grep ! "ERROR: AddressSanitizer\|runtime error\|fuzz-dissect:" fuzz.log &&
	! ls crash-* 2>/dev/null &&
	sed -n "s/^stat::\(number_of_executed_units\|average_exec_per_sec\|new_units_added\): /\1 /p" \
		fuzz.log
'

test_done
