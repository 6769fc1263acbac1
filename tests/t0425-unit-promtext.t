#!/usr/bin/env bash
test_description='monitor/promtext.c (test-tool promtext): the Prometheus text format as the monitor
agents serve it - samples with and without labels, escapes, blanks, comments, NaN and infinities,
timestamps, CRLF; every malformed form refused in one line naming line and column; bounds on a
line, labels and values; a fuzz run of mutated exposition read from buffers of exactly their
length; and fabscope monitor analyze given a scrape that is not the format: one line naming the
file and the line, the other scrapes still read'
# asan: always: feeds untrusted bytes to C code: Prometheus text from the agents' /metrics
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL FABSCOPE
P=TEST_TOOL

pt() { "$TEST_TOOL" promtext "$@"; }

test_expect_success $P 'samples, labels, escapes, comments, special values, timestamps' '
	cat >in <<-\EOF &&
	# HELP fabscope_probe_sent_total Probes sent.
	# TYPE fabscope_probe_sent_total counter
	fabscope_probe_sent_total{node="h1",peer="h2",rail="0",plane="0",sport_bucket="3"} 120

	  up 1
	a_b:c{x="q\"u\\o\nte" , y = "é",} 1.5e3 1700000000000
	nan_v NaN
	inf_v{le="+Inf"} +Inf
	neg -Inf
	# a comment
	EOF
	printf "crlf{a=\"1\"} 2\r\n" >>in &&
	pt in >out &&
	cat >expect <<-\EOF &&
	fabscope_probe_sent_total node=h1 peer=h2 rail=0 plane=0 sport_bucket=3 120
	up 1
	a_b:c x=q"u\\o\nte y=é 1500
	nan_v nan
	inf_v le=+Inf inf
	neg -inf
	crlf a=1 2
	EOF
	test_cmp expect out
'

# refused TEXT EXPECTED-ERROR: TEXT (printf'd) is refused with that line
refused() {
	printf "$1" >bad &&
	test_expect_code 1 pt bad >out &&
	tail -n 1 out >last &&
	echo "error: $2" >expect &&
	test_cmp expect last
}

test_expect_success $P 'malformed lines: one error line, with line and column' '
	refused "ok 1\n{x=\"1\"} 1\n" "line 2, column 1: a metric name was expected" &&
	refused "m{x=\"1\" 2\n" "line 1, column 9: '"'"','"'"' or '"'"'}'"'"' was expected after a label" &&
	refused "m{x=\"1} 2\n" "line 1, column 10: a label value is not closed" &&
	refused "m{x=1} 2\n" "line 1, column 5: a label value must begin with '"'"'\"'"'"'" &&
	refused "m{1x=\"1\"} 2\n" "line 1, column 3: a label name was expected" &&
	refused "m{x\"1\"} 2\n" "line 1, column 4: '"'"'='"'"' was expected after a label name" &&
	refused "m{x=\"a\\\\t\"} 2\n" "line 1, column 8: a label value'"'"'s escape is not \\\\, \\\" or \\n" &&
	refused "m{x=\"1\",x=\"2\"} 2\n" "line 1, column 14: a label given twice" &&
	refused "m\n" "line 1, column 2: a value was expected" &&
	refused "m 1x\n" "line 1, column 3: the value is not a number" &&
	refused "m 0x10\n" "line 1, column 3: the value is not a number" &&
	refused "m 1 2 3\n" "line 1, column 7: more after the timestamp" &&
	refused "m{x=\"\xff\"} 1\n" "line 1, column 6: a label value is not valid UTF-8" &&
	refused "m{x=\"\xed\xa0\x80\"} 1\n" "line 1, column 6: a label value is not valid UTF-8"
'

test_expect_success $P 'a NUL byte is refused' '
	printf "m 1\n\000m 2\n" >bad &&
	test_expect_code 1 pt bad >out &&
	test_grep "^error: line 2, column 1: a NUL byte" out
'

test_expect_success $P 'bounds: a line over 64 KiB, 33 labels, a 1025-byte value, a 1025-byte name' '
	{ printf "m{x=\""; head -c 70000 /dev/zero | tr "\0" a; printf "\"} 1\n"; } >bad &&
	test_expect_code 1 pt bad >out &&
	test_grep "a line longer than 65536 bytes" out &&
	{ printf "m{"; for i in $(seq 1 33); do printf "l$i=\"v\","; done; printf "} 1\n"; } >bad &&
	test_expect_code 1 pt bad >out &&
	test_grep "more than 32 labels" out &&
	{ printf "m{"; for i in $(seq 1 32); do printf "l$i=\"v\","; done; printf "} 1\n"; } >ok &&
	pt ok >out && test_line_count = 1 out &&
	{ printf "m{x=\""; head -c 1025 /dev/zero | tr "\0" a; printf "\"} 1\n"; } >bad &&
	test_expect_code 1 pt bad >out &&
	test_grep "a label value longer than 1024 bytes" out &&
	{ head -c 1025 /dev/zero | tr "\0" m; printf " 1\n"; } >bad &&
	test_expect_code 1 pt bad >out &&
	test_grep "a name longer than 1024 bytes" out
'

test_expect_success $P 'fuzz: 3000 mutated expositions, no read past a buffer, every string bounded' '
	"$TEST_TOOL" localize-sim --groups 2 --hosts 2 --rails 2 --spines 2 --peers 1 --buckets 2 --width 1 \
		--probes 10 --intervals 1 --write . >/dev/null &&
	head -c 6000 scrape-01.prom >seed.prom &&
	printf "x{a=\"\\\\n\\\\\\\\\\\\\"\",b=\"\xc3\xa9\"} NaN 12\n" >>seed.prom &&
	"$TEST_TOOL" promtext-fuzz seed.prom 3000 7 >out &&
	test_grep "^runs 3000 read [0-9]* refused [0-9]* samples [0-9]* out-of-bounds 0$" out &&
	test_grep ! "read 0 " out &&
	test_grep ! "refused 0 " out
'

test_expect_success $P,FABSCOPE 'monitor analyze: a scrape that is not the format is said, the others read' '
	cat >fab.topo <<-\EOF &&
	switch l1 tier=leaf
	link h1:p0 l1:h1
	link h2:p0 l1:h2
	EOF
	line="fabscope_probe_sent_total{node=\"h1\",peer=\"h2\",rail=\"0\",plane=\"0\",sport_bucket=\"0\"}" &&
	lost="fabscope_probe_lost_total{node=\"h1\",peer=\"h2\",rail=\"0\",plane=\"0\",sport_bucket=\"0\"}" &&
	printf "%s 0\n%s 0\n" "$line" "$lost" >s0 &&
	printf "%s 100\n%s 1\nbroken{\n" "$line" "$lost" >s1 &&
	printf "%s 200\n%s 1\n" "$line" "$lost" >s2 &&
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay s0 s1 s2 >out 2>err &&
	test_grep "s1: line 3, column 8: a label name was expected; its other probe groups are left out" err &&
	test_line_count = 1 err &&
	jq -s -e "length == 2 and .[0].probes == 100 and .[0].bad == 1 and .[1].probes == 100 and .[1].bad == 0" out &&
	# --max-body below the reader'"'"'s first 64 KiB: small scrapes are read (every file was "too
	# large" before), one over it is refused in one line
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay s0 s2 --max-body 4096 >out 2>err &&
	jq -s -e "length == 1 and .[0].probes == 200" out &&
	{ cat s2 && head -c 5000 /dev/zero | tr "\\0" "#" && echo; } >big &&
	test_expect_code 3 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay s0 big \
		--max-body 4096 >out 2>err &&
	test_line_count = 1 err && test_grep "big.: File too large" err
'

test_expect_success $P,FABSCOPE 'monitor analyze: a probe metric without its labels, or a count that is none' '
	printf "fabscope_probe_sent_total{node=\"h1\",rail=\"0\",plane=\"0\",sport_bucket=\"0\"} 1\n" >s1 &&
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay s0 s1 >out 2>err &&
	test_grep "s1: line 1: fabscope_probe_sent_total has no label .peer." err &&
	printf "%s -1\n" "$line" >s1 &&
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay s0 s1 >out 2>err &&
	test_grep "s1: line 1: fabscope_probe_sent_total is -1: a count is a finite number >= 0" err &&
	printf "%s 1\n" "${line/rail=\"0\"/rail=\"x\"}" >s1 &&
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay s0 s1 >out 2>err &&
	test_grep "label rail is not a number from 0 to 65535" err
'

test_expect_success $P,FABSCOPE 'monitor analyze --slow: probes slower than the next bucket bound up are bad' '
	lab="node=\"h1\",peer=\"h2\",rail=\"0\",plane=\"0\",sport_bucket=\"0\"" &&
	hist() {
		printf "fabscope_probe_sent_total{%s} %s\nfabscope_probe_lost_total{%s} %s\n" "$lab" $1 "$lab" $2 &&
		printf "fabscope_probe_rtt_seconds_bucket{%s,le=\"%s\"} %s\n" "$lab" 0.0001 $3 "$lab" 0.001 $4 \
			"$lab" +Inf $5 &&
		printf "fabscope_probe_rtt_seconds_count{%s} %s\n" "$lab" $5
	} &&
	hist 0 0 0 0 0 >h0 &&
	hist 100 2 50 90 98 >h1 &&
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay h0 h1 >out &&
	jq -e ".probes == 100 and .bad == 2" out &&
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay h0 h1 --slow 0.0005 >out &&
	jq -e ".bad == 10" out &&
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay h0 h1 --slow 0.0001 >out &&
	jq -e ".bad == 50" out &&
	"$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay h0 h1 --slow 1 >out &&
	jq -e ".bad == 2" out
'

test_expect_success $P,FABSCOPE 'monitor analyze: usage errors in one line, exit 2' '
	test_expect_code 2 "$FABSCOPE" monitor analyze --replay s0 s1 2>err &&
	test_grep "needs the design: --topology FILE" err &&
	test_expect_code 2 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo 2>err &&
	test_grep "reads the agents. --metrics URL, a Prometheus server (--prometheus URL) or saved scrapes" err &&
	test_expect_code 2 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay s0 2>err &&
	test_grep "two scrapes or more" err &&
	test_expect_code 2 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo s0 s1 2>err &&
	test_grep "saved scrapes are read with --replay" err &&
	test_expect_code 2 "$FABSCOPE" monitor analyze --topology nosuch.topo --replay s0 s2 2>err &&
	test_line_count = 1 err &&
	test_expect_code 2 "$FABSCOPE" monitor analyze --sport-width 4 --topology fab.topo --replay s0 nosuch 2>err &&
	test_grep "nosuch" err &&
	test_expect_code 2 "$FABSCOPE" monitor 2>err &&
	test_grep "give --peers FILE.*or .monitor analyze." err
'

test_done
