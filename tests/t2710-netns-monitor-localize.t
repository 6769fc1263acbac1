#!/usr/bin/env bash
test_description='fabscope monitor analyze on the netns fabric, live: monitor agents in the hosts of
a 3-leaf-group, 2-rail, 2-spine fabric, a real Prometheus scraping them, the analyzer reading
increase() through its query API every 5 s (-K 2), its verdicts file served by node_exporter'"'"'s
textfile collector and scraped by the same Prometheus.  The paths file is the fabric'"'"'s own routing
for the probes'"'"' UDP 5-tuples (ci/netns-fabric path: `ip route get ... ipproto udp sport S dport D`
hop by hop, the routers'"'"' L4 hash; probes/trace.c traces TCP only), forward and answer.  Both
cores kept busy by two spinners on a healthy fabric: no suspect.  The datagrams of 4 of the 16 source
ports dropped on one leaf-spine uplink (CI'"'"'s kernel has no netem: mirred to a veth whose peer is
down, lib-monitor.sh): that link named, no other, in the JSON lines, the verdicts file and
Prometheus; it clears after the drop is lifted.  A quarter of the source ports dropped out of one
host'"'"'s rail-1 NIC (every path of that NIC): that NIC named, no link.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fabric.sh"
. "$TEST_DIRECTORY/lib-monitor.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$l
P=ROOT,NETNS,JQ,PROMETHEUS,NODE_EXPORTER
test_lazy_prereq NODE_EXPORTER 'command -v prometheus-node-exporter'
test_require_in_ci ROOT NETNS JQ PROMETHEUS NODE_EXPORTER FABSCOPE

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

named_event_is() {
	test "$(named_events)" = "$1"
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

# the 5-tuples the drop hits: rail 0, from leaf 1 (h1, h2) to the other leaves, source ports
# 49152-49155 (buckets 0-3), whose probe leaves l1.0 for spine $1
hit() {
	jq -r "select(.rail == 0 and .sport < $((SP0 + 4)) and .fwd[0] == \"l1.0\" and .fwd[1] == \"$1\") |
		\"\(.node)>\(.peer) \(.sport) back by \(.rev[1])\"" paths.jsonl
}

test_expect_success $P 'a quarter of the source ports dropped on one uplink of l1.0: that link named, no other' '
	hit s1 >hit.s1 && hit s2 >hit.s2 &&
	if [ $(wc -l <hit.s1) -ge $(wc -l <hit.s2) ]; then spine=s1; else spine=s2; fi &&
	cat hit.$spine && test -s hit.$spine &&
	from=$(($(wc -l <an.jsonl) + 1)) &&
	mon_loss_on l1.0 $spine $SP0/0xfffc &&
	mon_wait 90 named_is "link l1.0 -> $spine" &&
	echo "named link l1.0>$spine" >expect &&
	named_events >actual &&
	test_cmp expect actual &&
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

test_expect_success $P 'the drop lifted: the link cleared after healthy intervals, nothing named' '
	from=$(($(wc -l <an.jsonl) + 1)) &&
	mon_loss_off l1.0 $spine &&
	mon_wait 90 named_is "" &&
	echo "cleared link l1.0>$spine" >expect &&
	named_events >actual &&
	test_cmp expect actual &&
	mon_wait 30 eval "prom_suspects >actual && test_must_be_empty actual"
'

test_expect_success $P 'a quarter of the source ports dropped out of h1'"'"'s rail-1 NIC: that NIC named, no link' '
	from=$(($(wc -l <an.jsonl) + 1)) &&
	mon_loss_on h1 rail1 $SP0/0xfffc &&
	mon_wait 90 named_event_is "named nic h1 1" &&
	an | jq -r "select(.event == \"interval\") | .named | length" | tail -1 >n &&
	echo 1 >expect && test_cmp expect n &&
	suspects_seen >seen && cat seen &&
	test_grep ! "link" seen &&
	no_duplicates &&
	echo "fabscope_nic_suspect node=h1,plane=0,rail=1 1" >expect &&
	mon_wait 30 eval "prom_suspects >actual && cmp -s expect actual" &&
	test_cmp expect actual
'

test_done
