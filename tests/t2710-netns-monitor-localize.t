#!/usr/bin/env bash
test_description='fabscope monitor analyze on the netns fabric, live: monitor agents in the hosts of
a 3-leaf-group, 2-rail, 2-spine fabric, a real Prometheus scraping them, the analyzer reading
increase() through its query API every 5 s (-K 2), its verdicts file served by node_exporter'"'"'s
textfile collector and scraped by the same Prometheus.  The paths file is the fabric'"'"'s own routing
for the probes'"'"' UDP 5-tuples (ci/netns-fabric path: `ip route get ... ipproto udp sport S dport D`
hop by hop, the routers'"'"' L4 hash; probes/trace.c traces TCP only), forward and answer.  Both
cores kept busy by two spinners on a healthy fabric: no suspect.  2 % random loss of every packet
one leaf-spine uplink carries (CI'"'"'s kernel has no netem: ci/loss/loss.bpf.o, a tc BPF program that
drops each packet with probability 0.02, lib-monitor.sh; its counters checked against that share):
that link named, no other, within 12 of the analyzer'"'"'s intervals (60 s) of the loss starting, in
the JSON lines, the verdicts file and Prometheus; cleared within 24 intervals of the loss lifted.
2 % random loss out of one host'"'"'s rail-1 NIC (its rail link): that NIC named, no link.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fabric.sh"
. "$TEST_DIRECTORY/lib-monitor.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$l
P=ROOT,NETNS,JQ,PROMETHEUS,NODE_EXPORTER,LOSS_BPF
test_lazy_prereq NODE_EXPORTER 'command -v prometheus-node-exporter'
test_require_in_ci ROOT NETNS JQ PROMETHEUS NODE_EXPORTER LOSS_BPF FABSCOPE

SP0=49152	# the agents' default --sport-range 49152-49167, a port a bucket
NE_PORT=9100	# node_exporter, in h1's namespace

# paths_of NODE PEER RAIL: the JSON lines of the 16 5-tuples of NODE's probes to PEER on RAIL:
# forward from NODE's rail address, source port S, to PEER's responder; the answer back from the
# responder's port to S (the switches only, as the analyzer wants them)
paths_of() {
	local a b s fwd rev i=0
	a=$(. ./info && eval "echo \${${1^^}_RAIL$3}") &&
	b=$(. ./info && eval "echo \${${2^^}_RAIL$3}") &&
	fab path "$a" "$b" $SP0-$((SP0 + 15)) $MON_UDP_PORT udp >fwd.tmp || return 1
	while read -r fwd; do
		s=$((SP0 + i)) i=$((i + 1))
		fwd=${fwd#* } fwd=${fwd% *}
		rev=$(fab path "$b" "$a" $MON_UDP_PORT $s udp) || return 1
		rev=${rev#* } rev=${rev% *}
		printf '{"node":"%s","peer":"%s","rail":%d,"plane":0,"sport":%d,"fwd":["%s"],"rev":["%s"]}\n' \
			"$1" "$2" "$3" $s "${fwd// /\",\"}" "${rev// /\",\"}"
	done <fwd.tmp
}

# an: the analyzer's JSON lines from line $from on
an() {
	tail -n +"$from" an.jsonl 2>/dev/null
}

# named_is WANT: what the analyzer's last interval line (since $from) names ("link l1.0 -> s1"; ";" between)
named_is() {
	an | jq -r 'select(.event == "interval") | "is: \(.named | join(";"))"' | tail -1 >named.now &&
	test "$(cat named.now)" = "is: $1"
}

# suspects_seen: every element a suspect in an interval since $from ("link l1.0>s1", "nic h1 1",
# "host h1"), and every element named there, one a line, sorted and unique
suspects_seen() {
	an | jq -r 'select(.event == "interval") | (.suspects[] |
		if .kind == "link" then "link \(.from)>\(.to)" elif .kind == "nic" then "nic \(.node) \(.rail)"
		else "\(.kind) \(.node)" end), (.named[] | "named: \(.)")' | sort -u
}

# no_duplicates: no interval line lists one element twice among its suspects
no_duplicates() {
	an | jq -e -s 'all(.[] | select(.event == "interval") | .suspects |
		map("\(.kind) \(.from) \(.to) \(.node) \(.rail)"); length == (unique | length))' >/dev/null
}

named_events() {
	an | jq -r 'select(.event == "named" or .event == "cleared") |
		"\(.event) \(.kind) \(if .kind == "link" then "\(.from)>\(.to)" else "\(.node) \(.rail)" end)"'
}

intervals_since() {
	test "$(an | jq -s 'map(select(.event == "interval")) | length')" -ge "$1"
}

# prom_suspects: the verdict series of value 1 in Prometheus now (the analyzer's --verdicts file,
# scraped from node_exporter), "METRIC LABELS 1" (LABELS: k=v,... without instance and job)
prom_suspects() {
	mon_api /api/v1/query --data-urlencode 'query={__name__=~"fabscope_(link|nic|host)_suspect"} == 1' |
	jq -r '.data.result[] | [.metric.__name__, (.metric | del(.__name__, .instance, .job) | to_entries |
		map("\(.key)=\(.value)") | join(",")), .value[1]] | join(" ")' | sort
}

test_expect_success $P 'the bed: agents in 6 hosts, 2 rails; Prometheus; node_exporter serving the verdicts' '
	mon_bed -G 3 -H 2 -R 2 -S 2 &&
	fab intent --addr >fab.topo &&
	mkdir textfile &&
	{ "$FABRIC" exec -p $PFX h1 prometheus-node-exporter --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$PWD/textfile" \
		--web.listen-address=127.0.0.1:$NE_PORT >ne.log 2>&1 & } &&
	ne=$! && test_atexit "test_kill_pid $ne" &&
	MON_PROM_EXTRA_TARGET=127.0.0.1:$NE_PORT &&
	mon_agents --timeout 1 --rate 50 &&
	mon_prom
'

test_expect_success $P 'the paths file: every 5-tuple of every pair and rail, from the routers'"'"' own lookups' '
	for r in 0 1; do
		for a in h1 h2 h3 h4 h5 h6; do
			for b in h1 h2 h3 h4 h5 h6; do
				test $a = $b || paths_of $a $b $r || return 1
			done
		done
	done >paths.jsonl &&
	test $(wc -l <paths.jsonl) = 960 &&
	jq -r "select(.node == \"h1\" and .peer == \"h3\" and .rail == 0) | .fwd | join(\" \")" paths.jsonl |
		sort -u >h1h3 &&
	cat h1h3 &&
	test_grep -x "l1.0 s[12] l2.0" h1h3 &&
	jq -e -s "map(select(.node == \"h1\" and .peer == \"h2\")) | length == 32 and
		all(.[]; .fwd == [\"l1.\(.rail)\"] and .rev == .fwd)" paths.jsonl
'

test_expect_success $P 'the analyzer runs against Prometheus, every 5 s' '
	sleep 4 &&
	{ "$FABRIC" exec -p $PFX h1 "$FABSCOPE" monitor analyze --topology "$PWD/fab.topo" \
		--prometheus http://127.0.0.1:$MON_PROM_PORT --paths "$PWD/paths.jsonl" --interval 5 -K 2 \
		--json "$PWD/an.jsonl" --verdicts "$PWD/textfile/fabscope.prom" 2>an.err & } &&
	an=$! && test_atexit "test_kill_pid $an" &&
	from=1 &&
	mon_wait 30 intervals_since 1 &&
	an | jq -e -s "map(select(.event == \"interval\")) | .[0].groups > 0 and .[0].probes > 0"
'

test_expect_success $P 'both cores busy (two spinners), no fault: no suspect in 6 intervals' '
	{ sh -c "while :; do :; done" & } && s1=$! &&
	test_atexit "test_kill_pid $s1" &&
	{ sh -c "while :; do :; done" & } && s2=$! &&
	test_atexit "test_kill_pid $s2" &&
	from=$(($(wc -l <an.jsonl) + 1)) &&
	mon_wait 90 intervals_since 6 &&
	test_kill_pid $s1 $s2 &&
	an | jq -e -s "map(select(.event == \"interval\")) | all(.[]; .groups > 0 and .probes > 0)" &&
	suspects_seen >seen &&
	test_must_be_empty seen
'

# through SPINE: the 5-tuples of rail 0 whose probe or answer leaves l1.0 for SPINE
through() {
	jq -r "select(.rail == 0 and ((.fwd[0] == \"l1.0\" and .fwd[1] == \"$1\") or
		(.rev[0] == \"l1.0\" and .rev[1] == \"$1\"))) | \"\(.node)>\(.peer) \(.sport)\"" paths.jsonl
}

# named_or_past N: the analyzer named something since $from, or N intervals passed without
named_or_past() {
	test -n "$(named_events)" || intervals_since "$1"
}

# cleared_or_past N: as named_or_past, for a clearing
cleared_or_past() {
	test -n "$(an | jq -r "select(.event == \"cleared\") | .event")" || intervals_since "$1"
}

# intervals_to EVENT: the analyzer's intervals since $from up to its first EVENT line, that one
# counted (the first, which began before $from, counted too)
intervals_to() {
	an | jq -s --arg ev "$1" '(map(select(.event == $ev))[0].interval) -
		(map(select(.event == "interval"))[0].interval) + 1'
}

# loss_share_is NODE DEV: the loss program there dropped 2 % of the packets it saw, as a random
# draw per packet makes it: at least 1,000 packets, the drops within 5 standard deviations of
# 0.02 of them (a loss of whole 5-tuples would not be: a quarter, or none)
loss_share_is() {
	mon_random_loss_seen "$1" "$2" >share &&
	cat share &&
	awk "{ sd = sqrt(\$1 * 0.02 * 0.98); d = \$2 - \$1 * 0.02; exit !(\$1 >= 1000 && d <= 5 * sd && -d <= 5 * sd) }" share
}

# lossy_named NODE DEV WHAT: 2 % random loss out of NODE's DEV, named (the analyzer's event
# "named WHAT", alone) within 12 intervals; from: the first line of an.jsonl since
lossy_named() {
	from=$(($(wc -l <an.jsonl) + 1)) &&
	mon_random_loss_on "$1" "$2" 2 &&
	mon_wait 240 named_or_past 13 &&
	echo "named $3" >expect &&
	named_events >actual &&
	test_cmp expect actual &&
	intervals_to named >n && cat n &&
	test $(cat n) -le 12
}

test_expect_success $P '2 % random loss on one uplink of l1.0: that link named within 12 intervals, no other' '
	through s1 >through.s1 && through s2 >through.s2 &&
	if [ $(wc -l <through.s1) -ge $(wc -l <through.s2) ]; then spine=s1; else spine=s2; fi &&
	test -s through.$spine &&
	lossy_named l1.0 $spine "link l1.0>$spine" &&
	mon_wait 30 named_is "link l1.0 -> $spine" &&
	printf "link l1.0>$spine\nnamed: link l1.0 -> $spine\n" >expect &&
	suspects_seen >actual &&
	test_cmp expect actual &&
	no_duplicates &&
	an | jq -c "select(.event == \"named\")" &&
	an | jq -e -s "map(select(.event == \"named\"))[0] | .failing_through > 0 and (.confirmed | test(\"traced\"))" &&
	echo "fabscope_link_suspect{from=\"l1.0\",to=\"$spine\",rail=\"0\",plane=\"\"} 1" >expect &&
	grep -v "^#" textfile/fabscope.prom | grep " 1$" | sort >actual &&
	test_cmp expect actual
'

test_expect_success $P 'Prometheus, scraping the verdicts, has that link suspect and nothing else' '
	echo "fabscope_link_suspect from=l1.0,rail=0,to=$spine 1" >expect &&
	mon_wait 30 eval "prom_suspects >actual && cmp -s expect actual" &&
	test_cmp expect actual
'

test_expect_success $P 'the loss was random: 2 % of the packets out of l1.0 to that spine' '
	loss_share_is l1.0 $spine
'

test_expect_success $P 'the loss lifted: the link cleared within 24 intervals, nothing named' '
	from=$(($(wc -l <an.jsonl) + 1)) &&
	mon_random_loss_off l1.0 $spine &&
	mon_wait 240 cleared_or_past 25 &&
	echo "cleared link l1.0>$spine" >expect &&
	named_events >actual &&
	test_cmp expect actual &&
	intervals_to cleared >n && cat n &&
	test $(cat n) -le 24 &&
	mon_wait 30 named_is "" &&
	mon_wait 30 eval "prom_suspects >actual && test_must_be_empty actual"
'

test_expect_success $P '2 % random loss out of h1'"'"'s rail-1 NIC: that NIC named within 12 intervals, no link' '
	lossy_named h1 rail1 "nic h1 1" &&
	an | jq -r "select(.event == \"interval\") | .named | length" | tail -1 >n &&
	echo 1 >expect && test_cmp expect n &&
	suspects_seen >seen && cat seen &&
	test_grep ! "link" seen &&
	no_duplicates &&
	echo "fabscope_nic_suspect node=h1,plane=0,rail=1 1" >expect &&
	mon_wait 30 eval "prom_suspects >actual && cmp -s expect actual" &&
	test_cmp expect actual &&
	loss_share_is h1 rail1
'

test_done
