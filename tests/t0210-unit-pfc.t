#!/usr/bin/env bash
test_description='probes/counters*.c and probes/pfc.c (test-tool pfc): counter sources read from
fixture trees laid out like a real mlx5 host (sysfs hw_counters and counters, the ethtool names,
the driver links), values changed by the test between snapshots: the name map (unknown names
ignored), pause rates, paused fractions (measured and estimated), storms and near-storms, ECN
before PFC (yes, no, unknown), counter resets, the sampler; malformed fixture lines, values and
snapshot files are one-line errors'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-pfc.sh"

test_require_in_ci TEST_TOOL
P=TEST_TOOL

# one_line FILE: FILE holds exactly one line (errors are one line)
one_line() {
	[ "$(wc -l <"$1")" = 1 ] && return 0
	echo "one_line: '$1' should hold one line; it holds:" >&2
	cat "$1" >&2
	return 1
}

# snap ROOT T OUT [ARGS...]: a snapshot of eth2 under ROOT at time T
snap() {
	"$TEST_TOOL" pfc snapshot --root "$1" --if eth2 --at "$2" "${@:4}" >"$3"
}

# iv_line FILE K PRIO: the interval line of priority PRIO in interval K of series output
iv_line() {
	grep "^iv $2 prio $3 " "$1"
}

test_expect_success $P 'the snapshot maps mlx5 names, ignores the others, says what it read' '
	mlx5 fx &&
	eth fx rx_prio3_pause=10 tx_prio3_pause=20 rx_prio3_pause_duration=30 \
		tx_prio3_pause_duration=40 rx_prio3_discards=50 rx_discards_phy=60 \
		tx_pause_storm_warning_events=70 tx_pause_storm_error_events=80 &&
	hw fx np_ecn_marked_roce_packets=1 np_cnp_sent=2 rp_cnp_handled=3 out_of_sequence=4 \
		packet_seq_err=5 &&
	echo 6 >fx/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_wait &&
	snap fx 12.5 s &&
	cat >expect <<-\EOF &&
	# sources: ethtool eth2 (driver mlx5_core, map mlx5): 8 of 17 mapped; hw_counters mlx5_0/1 (driver mlx5_core, map mlx5): 5 of 18 mapped; counters mlx5_0/1 (driver mlx5_core, map ib): 2 of 9 mapped
	# link 100 Gb/s
	fabscope-counters 1
	time 12.500000000
	prio3.rx_pause 10
	prio3.tx_pause 20
	prio3.rx_pause_us 30
	prio3.tx_pause_us 40
	prio3.rx_discards 50
	port.ecn_marked 1
	port.cnp_sent 2
	port.cnp_handled 3
	port.out_of_sequence 4
	port.packet_seq_err 5
	port.storm_warning 70
	port.storm_error 80
	port.rx_discards_phy 60
	port.xmit_wait 6
	port.xmit_discards 0
	EOF
	test_cmp expect s
'

test_expect_success $P 'the RDMA device alone finds its netdev; the driver is found or named' '
	"$TEST_TOOL" pfc snapshot --root fx --rdma mlx5_0 --port 1 >s2 &&
	test_grep "^# sources: ethtool eth2 (driver mlx5_core, map mlx5): 8 of 17" s2 &&
	test_grep "^prio3.rx_pause 10$" s2 &&
	# without the driver links: ethtool maps nothing, the RDMA name still says mlx5
	cp -a fx fx-nodrv &&
	rm fx-nodrv/sys/devices/pci0000:00/0000:3b:00.0/driver &&
	"$TEST_TOOL" pfc snapshot --root fx-nodrv --if eth2 >s3 &&
	test_grep "^# sources: ethtool eth2 (driver unknown, map none): 0 of 17 mapped; hw_counters mlx5_0/1 (driver unknown, map mlx5): 5 of 18" s3 &&
	test_grep ! "^prio3" s3 &&
	"$TEST_TOOL" pfc snapshot --root fx-nodrv --if eth2 --driver mlx5 >s4 &&
	test_grep "^# sources: ethtool eth2 (driver mlx5, map mlx5): 8 of 17" s4 &&
	test_grep "^prio3.rx_pause 10$" s4
'

test_expect_success $P 'soft-RoCE: rxe names in hw_counters, found by the device name' '
	mkdir -p rxe/sys/class/infiniband/rxe0/ports/1/hw_counters &&
	for f in sent_pkts rcvd_pkts duplicate_request rcvd_rnr_err send_rnr_err ack_deferred; do
		echo 1 >rxe/sys/class/infiniband/rxe0/ports/1/hw_counters/$f || return 1
	done &&
	echo 11 >rxe/sys/class/infiniband/rxe0/ports/1/hw_counters/out_of_seq_request &&
	echo 12 >rxe/sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_seq_err &&
	"$TEST_TOOL" pfc snapshot --root rxe --rdma rxe0 --at 1 >r &&
	cat >expect <<-\EOF &&
	# sources: hw_counters rxe0/1 (driver unknown, map rxe): 2 of 8 mapped
	fabscope-counters 1
	time 1.000000000
	port.out_of_sequence 11
	port.packet_seq_err 12
	EOF
	test_cmp expect r
'

test_expect_success $P 'pause rates and paused fractions from the duration counters' '
	eth fx rx_prio3_pause=0 tx_prio3_pause=0 rx_prio3_pause_duration=0 \
		tx_prio3_pause_duration=0 rx_prio3_discards=0 &&
	snap fx 100 a0 &&
	eth fx rx_prio3_pause=1000 tx_prio3_pause=10 rx_prio3_pause_duration=500000 \
		tx_prio3_pause_duration=2500 rx_prio3_discards=0 &&
	snap fx 101 a1 &&
	# two seconds, 3 s of pause measured: clamped to the whole interval
	eth fx rx_prio3_pause=3000 tx_prio3_pause=10 rx_prio3_pause_duration=3500000 \
		tx_prio3_pause_duration=2500 rx_prio3_discards=40 &&
	snap fx 103 a2 &&
	"$TEST_TOOL" pfc series a0 a1 a2 >out &&
	test "$(iv_line out 0 3)" = "iv 0 prio 3 rx_pps 1000.000 tx_pps 10.000 rx_paused 0.500000 tx_paused 0.002500 rx_est 0 tx_est 0 discards_ps 0.000" &&
	test "$(iv_line out 1 3)" = "iv 1 prio 3 rx_pps 1000.000 tx_pps 0.000 rx_paused 1.000000 tx_paused 0.000000 rx_est 0 tx_est 0 discards_ps 20.000" &&
	test_grep "^iv 0 100.000000 101.000000$" out &&
	test_grep "^verdict prio 3 present 1 rx_frames 3000 tx_frames 10 storm_rx no 1 1 storm_tx no 0 -1 " out &&
	test_grep "^text prio 3: paused by the peer 1000.0 frames/s, 75.0% of the time (max 100.0%); pausing the peer 5.0 frames/s, 0.1% of the time (max 0.2%); no storm" out &&
	# other priorities have no counters here
	test_grep "^verdict prio 0 present 0 .* ecn_first unknown$" out &&
	test_grep ! "^iv 0 prio 0 " out
'

test_expect_success $P 'frames only: the fraction is an estimate at the link speed, or unknown' '
	eth fx tx_prio3_pause=0 &&
	snap fx 0 e0 &&
	eth fx tx_prio3_pause=1000 &&
	snap fx 1 e1 &&
	# 1000 frames x 65535 quanta x 512 bits at 100 Gb/s = 0.33553920 s
	"$TEST_TOOL" pfc series --link-gbps 100 e0 e1 >out &&
	test "$(iv_line out 0 3)" = "iv 0 prio 3 rx_pps - tx_pps 1000.000 rx_paused - tx_paused 0.335539 rx_est 0 tx_est 1 discards_ps -" &&
	test_grep "pausing the peer 1000.0 frames/s, 33.6% of the time (max 33.6%) estimated from frames" out &&
	# XON-heavy peers ask for fewer quanta
	"$TEST_TOOL" pfc series --link-gbps 100 --quanta 1000 e0 e1 >out2 &&
	test_grep "^iv 0 prio 3 .* tx_paused 0.005120 rx_est 0 tx_est 1 " out2 &&
	# at 25 Gb/s four times longer; 3000 frames in a second pause all of it
	eth fx tx_prio3_pause=4000 &&
	snap fx 2 e2 &&
	"$TEST_TOOL" pfc series --link-gbps 25 e0 e1 e2 >out3 &&
	test_grep "^iv 1 prio 3 .* tx_paused 1.000000 rx_est 0 tx_est 1 " out3 &&
	# without a link speed nothing is guessed
	"$TEST_TOOL" pfc series e0 e1 >out4 &&
	test "$(iv_line out4 0 3)" = "iv 0 prio 3 rx_pps - tx_pps 1000.000 rx_paused - tx_paused - rx_est 0 tx_est 0 discards_ps -"
'

# series_of NAME DIR US...: snapshots NAME.0 ... of rx_prio3 pause durations rising by US each
# second (frames rising by 100 a second), from 0
series_of() {
	local name=$1 i=0 us=0 frames=0 d
	shift
	eth fx rx_prio3_pause=0 rx_prio3_pause_duration=0 tx_prio3_pause=0 &&
	snap fx 0 $name.0 || return 1
	for d; do
		i=$((i + 1)) us=$((us + d)) frames=$((frames + 100))
		eth fx rx_prio3_pause=$frames rx_prio3_pause_duration=$us tx_prio3_pause=0 &&
		snap fx $i $name.$i || return 1
	done
	ls $name.[0-9]* | sort -t. -k2 -n >$name.list
}

test_expect_success $P 'a storm: paused over 99% for 3 intervals or more' '
	series_of st 200000 995000 999000 1000000 996000 300000 &&
	"$TEST_TOOL" pfc series $(cat st.list) >out &&
	test_grep "^verdict prio 3 present 1 rx_frames 600 tx_frames 0 storm_rx yes 4 1 storm_tx no 0 -1 " out &&
	test_grep "^verdict port .* storm yes " out &&
	test_grep "PFC STORM: paused by the peer over 99% for 4 intervals from interval 1" out
'

test_expect_success $P 'near-storms are not storms' '
	# 98.5% for ever
	series_of ns 985000 985000 985000 985000 985000 985000 &&
	"$TEST_TOOL" pfc series $(cat ns.list) >out &&
	test_grep "^verdict prio 3 present 1 .* storm_rx no 0 -1 " out &&
	test_grep "^verdict port .* storm no " out &&
	test_grep "no storm" out &&
	# 99.5% twice, a break, twice again
	series_of br 995000 995000 500000 995000 995000 &&
	"$TEST_TOOL" pfc series $(cat br.list) >out2 &&
	test_grep "^verdict prio 3 present 1 .* storm_rx no 2 0 " out2 &&
	# ... which two intervals in a row make a storm
	"$TEST_TOOL" pfc series --storm-intervals 2 $(cat br.list) >out3 &&
	test_grep "^verdict prio 3 present 1 .* storm_rx yes 2 0 " out3 &&
	# exactly the threshold does not count
	"$TEST_TOOL" pfc series --storm-fraction 0.995 $(cat st.list) >out4 &&
	test_grep "^verdict prio 3 present 1 .* storm_rx yes 3 2 " out4
'

test_expect_success $P 'the NIC sending pauses non-stop is a storm too (tx), its own events reported' '
	eth fx tx_prio3_pause=0 tx_prio3_pause_duration=0 tx_pause_storm_warning_events=0 &&
	snap fx 0 tx.0 &&
	eth fx tx_prio3_pause=500 tx_prio3_pause_duration=1000000 tx_pause_storm_warning_events=0 &&
	snap fx 1 tx.1 &&
	eth fx tx_prio3_pause=900 tx_prio3_pause_duration=2000000 tx_pause_storm_warning_events=1 &&
	snap fx 2 tx.2 &&
	eth fx tx_prio3_pause=1500 tx_prio3_pause_duration=3000000 tx_pause_storm_warning_events=1 &&
	snap fx 3 tx.3 &&
	"$TEST_TOOL" pfc series tx.0 tx.1 tx.2 tx.3 >out &&
	test_grep "^verdict prio 3 present 1 rx_frames 0 tx_frames 1500 storm_rx no 0 -1 storm_tx yes 3 0 " out &&
	test_grep "PFC STORM: pausing the peer over 99% for 3 intervals from interval 0" out &&
	test_grep "^iv 1 port storm_warning 1$" out &&
	test_grep "NIC storm warnings 1" out
'

# ecn_case NAME STEP...: STEP is E (ECN marks and CNPs rise), P (pauses rise), B (both), - (neither)
ecn_case() {
	local name=$1 i=0 e=0 p=0 s
	shift
	eth fx rx_prio3_pause=0 tx_prio3_pause=0 &&
	hw fx np_ecn_marked_roce_packets=0 np_cnp_sent=0 rp_cnp_handled=0 &&
	snap fx 0 $name.0 || return 1
	for s; do
		i=$((i + 1))
		case $s in E | B) e=$((e + 25)) ;; esac
		case $s in P | B) p=$((p + 40)) ;; esac
		eth fx rx_prio3_pause=$p tx_prio3_pause=0 &&
		hw fx np_ecn_marked_roce_packets=$e np_cnp_sent=$((e / 5)) rp_cnp_handled=0 &&
		snap fx $i $name.$i || return 1
	done
	"$TEST_TOOL" pfc series $(ls $name.[0-9]* | sort -t. -k2 -n) >$name.out
}

test_expect_success $P 'ECN before PFC: yes when ECN/CNP rose strictly first, or alone' '
	ecn_case y1 - E E P B &&
	test_grep "^verdict prio 3 present 1 .* first_pause 3 ecn_first yes$" y1.out &&
	test_grep "^verdict port intervals 5 ecn_present 1 first_ecn 1 first_pause 3 ecn_first yes " y1.out &&
	test_grep "ECN before PFC: yes (ECN/CNP from interval 1, pauses from 3)" y1.out &&
	test_grep "^iv 1 port ecn_marked 25$" y1.out &&
	test_grep "^iv 1 port cnp_sent 5$" y1.out &&
	ecn_case y2 E E - &&
	test_grep "^verdict port .* first_ecn 0 first_pause -1 ecn_first yes " y2.out &&
	test_grep "ECN before PFC: yes (ECN/CNP from interval 0, pauses never)" y2.out
'

test_expect_success $P 'PFC before ECN: no when pauses came first, in the same interval, or alone' '
	ecn_case n1 P E B &&
	test_grep "^verdict prio 3 present 1 .* first_pause 0 ecn_first no$" n1.out &&
	test_grep "ECN before PFC: no (ECN/CNP from interval 1, pauses from 0)" n1.out &&
	ecn_case n2 - B E &&
	test_grep "^verdict port .* first_ecn 1 first_pause 1 ecn_first no " n2.out &&
	test_grep "ECN before PFC: no (ECN/CNP from interval 1, pauses from 1, the same)" n2.out &&
	ecn_case n3 P P &&
	test_grep "ECN before PFC: no (pauses from interval 0, ECN/CNP never)" n3.out
'

test_expect_success $P 'ECN before PFC: unknown without ECN/CNP counters, pause counters, or change' '
	# an ethtool-only host: no RDMA device
	rm -rf fx-eth && cp -a fx fx-eth &&
	rm -r fx-eth/sys/devices/pci0000:00/0000:3b:00.0/infiniband fx-eth/sys/class/infiniband &&
	eth fx-eth rx_prio3_pause=0 &&
	snap fx-eth 0 u0 &&
	test_grep "^# sources: ethtool eth2 (driver mlx5_core, map mlx5): 1 of 10 mapped$" u0 &&
	eth fx-eth rx_prio3_pause=50 &&
	snap fx-eth 1 u1 &&
	"$TEST_TOOL" pfc series u0 u1 >out &&
	test_grep "^verdict prio 3 present 1 .* first_pause 0 ecn_first unknown$" out &&
	test_grep "^verdict port intervals 1 ecn_present 0 first_ecn -1 first_pause 0 ecn_first unknown " out &&
	test_grep "ECN before PFC: unknown (no ECN/CNP counters)" out &&
	# a priority without pause counters
	test_grep "^verdict prio 5 present 0 .* ecn_first unknown$" out &&
	# counters, but nothing rose
	ecn_case q - - &&
	test_grep "^verdict port .* ecn_first unknown " q.out &&
	test_grep "ECN before PFC: unknown (neither ECN/CNP nor pauses rose)" q.out
'

test_expect_success $P 'a counter that goes down is a reset: flagged, never a negative rate' '
	eth fx rx_prio3_pause=5000 rx_prio3_pause_duration=900000 &&
	hw fx np_ecn_marked_roce_packets=70 &&
	snap fx 0 r0 &&
	eth fx rx_prio3_pause=6000 rx_prio3_pause_duration=1000000 &&
	snap fx 1 r1 &&
	# the driver reloaded: counters from 0 again
	eth fx rx_prio3_pause=200 rx_prio3_pause_duration=100000 &&
	hw fx np_ecn_marked_roce_packets=3 &&
	snap fx 2 r2 &&
	eth fx rx_prio3_pause=600 rx_prio3_pause_duration=300000 &&
	snap fx 3 r3 &&
	"$TEST_TOOL" pfc series r0 r1 r2 r3 >out &&
	test "$(iv_line out 1 3)" = "iv 1 prio 3 rx_pps 200.000 tx_pps - rx_paused 0.100000 tx_paused - rx_est 0 tx_est 0 discards_ps -" &&
	test "$(iv_line out 2 3)" = "iv 2 prio 3 rx_pps 400.000 tx_pps - rx_paused 0.200000 tx_paused - rx_est 0 tx_est 0 discards_ps -" &&
	test_grep "^iv 1 reset prio3.rx_pause$" out &&
	test_grep "^iv 1 reset prio3.rx_pause_us$" out &&
	test_grep "^iv 1 reset port.ecn_marked$" out &&
	test "$(grep -c " reset " out)" = 3 &&
	test_grep "^iv 1 port ecn_marked 3$" out &&
	test_grep "^verdict port .* resets 3$" out &&
	test_grep "3 counter resets (counted from their new values)" out &&
	grep "^iv" out >ivs &&
	test_grep ! -e " -[0-9]" ivs &&
	# a 32-bit counter wrapping is a reset too
	printf "fabscope-counters 1\ntime 0\nprio0.tx_pause 4294967290\n" >w0 &&
	printf "fabscope-counters 1\ntime 1\nprio0.tx_pause 4\n" >w1 &&
	"$TEST_TOOL" pfc series w0 w1 >outw &&
	test_grep "^iv 0 prio 0 rx_pps - tx_pps 4.000 " outw &&
	test_grep "^iv 0 reset prio0.tx_pause$" outw
'

test_expect_success $P 'snapshot files round-trip; a counter absent from one sample is not judged there' '
	printf "fabscope-counters 1\n# a comment\ntime 5\nprio3.rx_pause 10\nport.cnp_sent 1\n" >h0 &&
	printf "fabscope-counters 1\ntime 6\nprio3.rx_pause 20\n" >h1 &&
	printf "fabscope-counters 1\ntime 7\nprio3.rx_pause 30\nport.cnp_sent 9\n" >h2 &&
	"$TEST_TOOL" pfc series h0 h1 h2 >out &&
	test_grep ! "^iv . port cnp_sent" out &&
	test_grep "^verdict port intervals 2 ecn_present 0 " out
'

bad() { # CODE FILE WORDS: exit CODE with nothing on stdout and one line on stderr holding WORDS
	test_expect_exit "$1" "${@:4}" >out 2>err &&
	test_must_be_empty out &&
	one_line err &&
	test_grep -F "$3" err
}

test_expect_success $P 'malformed ethtool fixture lines: one line naming file, line and text' '
	mlx5 bad &&
	for line in "rx_prio3_pause 12|malformed line" "rx_prio3_pause: -5|is not an unsigned" \
		"rx_prio3_pause: 12abc|is not an unsigned" "rx_prio3_pause:|is not an unsigned" \
		"rx_prio3_pause: 18446744073709551616|is not an unsigned" ": 5|empty or over 31" \
		"a_name_that_is_longer_than_31_bytes: 1|empty or over 31"; do
		{ echo "NIC statistics:"; echo "     rx_prio0_pause: 1"; echo "     ${line%|*}"; } >bad/ethtool/eth2 &&
		bad 2 x "bad/ethtool/eth2:3: " "$TEST_TOOL" pfc snapshot --root bad --if eth2 &&
		test_grep -F "${line#*|}" err &&
		bad 2 x "bad/ethtool/eth2:3: " "$TEST_TOOL" pfc ethtool-file bad/ethtool/eth2 ||
		{ echo "line: $line"; return 1; }
	done &&
	# the largest value passes
	echo "rx_prio3_pause: 18446744073709551615" >bad/ethtool/eth2 &&
	"$TEST_TOOL" pfc ethtool-file bad/ethtool/eth2 >ok &&
	test_grep "^rx_prio3_pause: 18446744073709551615$" ok &&
	# a line longer than any counter line
	awk "BEGIN { printf \"rx_prio3_pause: \"; for (i = 0; i < 300; i++) printf \"1\"; print \"\" }" >bad/ethtool/eth2 &&
	bad 2 x "bad/ethtool/eth2:1: line too long" "$TEST_TOOL" pfc snapshot --root bad --if eth2
'

test_expect_success $P 'malformed sysfs values and snapshot files: one line each' '
	mlx5 bad2 &&
	eth bad2 rx_prio3_pause=1 &&
	echo abc >bad2/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent &&
	bad 2 x "np_cnp_sent'"'"' holds '"'"'abc'"'"', not an unsigned 64-bit integer" \
		"$TEST_TOOL" pfc snapshot --root bad2 --if eth2 &&
	awk "BEGIN { for (i = 0; i < 100; i++) printf \"9\"; print \"\" }" \
		>bad2/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent &&
	bad 2 x "not an unsigned 64-bit integer" "$TEST_TOOL" pfc snapshot --root bad2 --if eth2 &&
	echo 1 >bad2/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent &&
	"$TEST_TOOL" pfc snapshot --root bad2 --if eth2 --at 1 >good &&
	printf "time 1\n" >nov &&
	bad 2 x "nov: not a counter snapshot" "$TEST_TOOL" pfc series good nov &&
	printf "fabscope-counters 1\ntime 2\nprio3.rx_pauses 1\n" >unk &&
	bad 2 x "unk:3: unknown metric '"'"'prio3.rx_pauses'"'"'" "$TEST_TOOL" pfc series good unk &&
	printf "fabscope-counters 1\ntime 2\nprio3.rx_pause x1\n" >val &&
	bad 2 x "val:3: bad value of '"'"'prio3.rx_pause'"'"'" "$TEST_TOOL" pfc series good val &&
	printf "fabscope-counters 1\nprio3.rx_pause 1\n" >not &&
	bad 2 x "not: no time line" "$TEST_TOOL" pfc series good not &&
	printf "fabscope-counters 1\ntime 1\n" >same &&
	bad 2 x "is not later than" "$TEST_TOOL" pfc series good same &&
	: >empty &&
	bad 2 x "empty: empty, not a counter snapshot" "$TEST_TOOL" pfc series good empty &&
	bad 2 x "series needs two snapshot files" "$TEST_TOOL" pfc series good
'

test_expect_success $P 'sources that are not there: one line each' '
	bad 3 x "'"'"'eth9'"'"' has no ethtool statistics (no fixture" \
		"$TEST_TOOL" pfc snapshot --root fx --if eth9 &&
	bad 3 x "no RDMA device '"'"'mlx5_7'"'"'" "$TEST_TOOL" pfc snapshot --root fx --rdma mlx5_7 &&
	bad 3 x "RDMA device '"'"'mlx5_0'"'"' has no port 2" \
		"$TEST_TOOL" pfc snapshot --root fx --rdma mlx5_0 --port 2 &&
	bad 2 x "no counter name map for driver '"'"'bnx9'"'"'" \
		"$TEST_TOOL" pfc snapshot --root fx --if eth2 --driver bnx9 &&
	bad 2 x "invalid interface name '"'"'..'"'"'" "$TEST_TOOL" pfc snapshot --root fx --if .. &&
	bad 2 x "invalid RDMA device name '"'"'a/b'"'"'" "$TEST_TOOL" pfc snapshot --root fx --rdma a/b &&
	bad 2 x "root '"'"'nowhere'"'"' is not a folder" "$TEST_TOOL" pfc snapshot --root nowhere --if eth2 &&
	bad 2 x "name an interface or an RDMA device" "$TEST_TOOL" pfc snapshot --root fx
'

test_expect_success $P 'the sampler: count samples an interval apart, judged as a series' '
	eth fx rx_prio3_pause=0 &&
	"$TEST_TOOL" pfc sample --root fx --if eth2 --interval 0.05 --count 4 --out smp >out &&
	test_grep "^samples 4$" out &&
	test "$(ls smp.* | wc -l)" = 4 &&
	# deadlines an interval apart: the three gaps add up to 0.15 s (a slow read under load
	# shortens the gap after it, lengthens the one before)
	awk "/^gap / { if (\$3 <= 0 || \$3 > 1) bad = 1; sum += \$3; n++ }
		END { exit bad || n != 3 || sum < 0.14 || sum > 2 }" out &&
	"$TEST_TOOL" pfc series smp.0 smp.1 smp.2 smp.3 >ser &&
	test_grep "^iv 2 prio 3 rx_pps 0.000 " ser &&
	bad 2 x "sample needs --interval" "$TEST_TOOL" pfc sample --root fx --if eth2 --count 2 --out x
'

test_done
