#!/usr/bin/env bash
test_description='fabscope topo check on the netns fabric with lldpd in every namespace, as on a
real fabric: the fabric as built passes (neighbours from lldpd, and by listening, the same ones);
each fault the bed makes is named exactly and once (a swap as one swap, a NIC on another rail,
a pulled cable, an MTU apart), exit 1; ECN, PFC and speed faults veth cannot express come from
fixture sysfs trees and an observation; topo discover writes a design that topo check passes'
# asan: always: feeds untrusted bytes to C code: lldpd JSON and observation files
. "$(dirname "$0")/test-lib.sh"

FABRIC=$SRCDIR/ci/netns-fabric
PFX=fs$$t
SOCKS=/run/fabscope-netns-fabric
test_lazy_prereq LLDPD 'command -v lldpd && command -v lldpcli'
test_require_in_ci ROOT NETNS JQ FABSCOPE LLDPD
P=ROOT,NETNS,JQ,FABSCOPE,LLDPD

fab() { # VERB ARGS...: ci/netns-fabric VERB -p $PFX ARGS...
	"$FABRIC" "$1" -p "$PFX" "${@:2}"
}

# heard NODE IFACE: "SYSTEM PORT" of the neighbour lldpd has on NODE's IFACE ("null null": none)
heard() {
	fab exec "$1" "$FABSCOPE" topo show -i "$2" --source lldpd --lldpd-socket "$SOCKS/$PFX-$1.sock" \
		--node "$1" --json | jq -r ".ports[0].neighbor | \"\(.sys_name) \(.port)\""
}

# wait_heard NODE IFACE "SYSTEM PORT": until lldpd on NODE has that neighbour (LLDPDUs go out
# every second, so this is a few seconds; 60 s is a hang guard)
wait_heard() {
	local i got
	for i in $(seq 120); do
		got=$(heard "$1" "$2") && [ "$got" = "$3" ] && return 0
		sleep 0.5
	done
	echo "wait_heard: $1 $2 has '$got', not '$3'" >&2
	return 1
}

# observe: obs-hI.json, what every host sees now (lldpd's neighbours)
observe() {
	local h
	for h in h1 h2 h3 h4; do
		fab exec $h "$FABSCOPE" topo show --source lldpd --lldpd-socket "$SOCKS/$PFX-$h.sock" \
			--node $h --json >obs-$h.json || return 1
	done
}

test_expect_success $P 'a 4-host, 2-rail fabric with lldpd everywhere; its design' '
	test_atexit "\"\$FABRIC\" down -p \"\$PFX\"" &&
	fab up >up.out &&
	fab lldp >lldp.out &&
	test_grep "lldpd in 10 namespaces" lldp.out &&
	fab intent >fabric.topo &&
	"$FABSCOPE" topo check-file fabric.topo &&
	# every host port, each from its own leaf port: a busy machine has had lldpd on h1 hear
	# l1.1 seconds after h2 did, and what is observed next must be the whole fabric
	for h in h1 h2 h3 h4
	do
		case $h in h1|h2) g=1 ;; *) g=2 ;; esac &&
		wait_heard $h rail0 "l$g.0 $h" && wait_heard $h rail1 "l$g.1 $h" || return 1
	done
'

test_expect_success $P 'the fabric as built: no finding, exit 0, every node and port judged' '
	observe &&
	"$FABSCOPE" topo check fabric.topo obs-h1.json obs-h2.json obs-h3.json obs-h4.json >out &&
	test_grep "^fabric.topo: 4 nodes, 8 ports observed: 0 errors, 0 warnings$" out &&
	test "$(wc -l <out)" = 1 &&
	"$FABSCOPE" topo check fabric.topo obs-h*.json --json >out.json &&
	jq -e ".schema == \"fabscope.topo-verify/1\" and .nodes == 4 and .ports == 8 and .errors == 0 and
		(.findings | length) == 0" out.json
'

test_expect_success $P 'by listening (no lldpd asked): the neighbours lldpd has; check on each host passes' '
	for h in h1 h2 h3 h4; do
		fab exec $h "$FABSCOPE" topo show --source listen --listen 20 --node $h --json >listen-$h.json &&
		jq -r ".ports[] | [.iface, .neighbor.sys_name, .neighbor.port, .neighbor.chassis] | @tsv" \
			listen-$h.json >listen-$h.tsv &&
		jq -r ".ports[] | [.iface, .neighbor.sys_name, .neighbor.port, .neighbor.chassis] | @tsv" \
			obs-$h.json >lldpd-$h.tsv &&
		test_cmp lldpd-$h.tsv listen-$h.tsv &&
		test "$(wc -l <listen-$h.tsv)" = 2 &&
		fab exec $h "$FABSCOPE" topo check fabric.topo --node $h --source listen --listen 20 >out 2>err &&
		test_grep "^fabric.topo: 1 node, 2 ports observed: 0 errors, 0 warnings$" out || return 1
	done
'

test_expect_success $P 'topo discover writes the cables the fabric has, and topo check passes it' '
	"$FABSCOPE" topo discover obs-h1.json obs-h2.json obs-h3.json obs-h4.json -o found.topo &&
	"$FABSCOPE" topo check-file found.topo &&
	"$FABSCOPE" topo check found.topo obs-h*.json >out &&
	test_grep "4 nodes, 8 ports observed: 0 errors, 0 warnings" out &&
	awk "/^link h/ {print \$2, \$3}" fabric.topo | sort >cables.expect &&
	awk "/^link/ {print \$2, \$3}" found.topo | sort >cables.actual &&
	test_cmp cables.expect cables.actual &&
	grep "^switch" found.topo | sort >sw.actual &&
	printf "switch %s tier=leaf rail=%s\n" l1.0 0 l1.1 1 l2.0 0 l2.1 1 >sw.expect &&
	test_cmp sw.expect sw.actual
'

# plan.ini: a run of one topology phase, the agents listening (no lldpd asked), judged by the design
test_expect_success $P 'a plan phase kind = topology: a record per port, no cabling error, exit 0' '
	fab hostfile >hosts &&
	cat >plan.ini <<-\EOF &&
	[global]
	hostfile = hosts
	topology = fabric.topo

	[cabling]
	kind = topology
	source = listen
	lldp-listen = 20
	EOF
	timeout 120 "$FABSCOPE" run plan.ini -o run1 >out 2>err &&
	test_grep "^cabling: .*fabric.topo: 8 ports observed: 0 errors, 0 warnings$" out &&
	test "$(jq -s "[.[] | select(.test == \"topology\" and .status == \"ok\" and .phase == \"cabling\"
		and .port.neighbor != null)] | length" run1/results.jsonl)" = 8 &&
	jq -r "select(.test == \"topology\") | \"\(.src.node) \(.port.iface) \(.port.neighbor.sys_name) \(.port.neighbor.port)\"" \
		run1/results.jsonl | sort >seen &&
	awk "/^link h/ {split(\$2, a, \":\"); split(\$3, b, \":\"); print a[1], a[2], b[1], b[2]}" fabric.topo |
		sort >seen.expect &&
	test_cmp seen.expect seen &&
	jq -e ".cabling.errors == 0 and .cabling.ports == 8" run1/run.json
'

test_expect_success $P 'four faults, each named once: a swap, a wrong rail, a pulled cable, an MTU drift' '
	fab fault swap h1 h2 0 &&
	fab fault move h3 1 0 &&
	fab fault pull h4 0 &&
	fab fault mtu h2 1 9000 &&
	wait_heard h1 rail0 "l1.0 h2" && wait_heard h2 rail0 "l1.0 h1" &&
	wait_heard h3 rail1 "l2.0 spare-h3" &&
	observe &&
	test_expect_code 1 "$FABSCOPE" topo check fabric.topo obs-h*.json >out &&
	cat out &&
	test_grep "^fabric.topo:[0-9]*: error: h1:rail0 and h2:rail0 are swapped: h1:rail0 reaches l1.0 port h2 and h2:rail0 reaches l1.0 port h1" out &&
	test_grep "^fabric.topo:[0-9]*: error: h3:rail1 (rail 1) reaches l2.0 port spare-h3, on rail 0; the design says l2.1 port h3$" out &&
	test_grep "^fabric.topo:[0-9]*: error: h4:rail0 is without carrier: a cable out, or l2.0 port h4 down" out &&
	test_grep "^fabric.topo:[0-9]*: error: h2:rail1 (rail 1): mtu 9000, where 3 of the 4 ports of rail 1 have 1500$" out &&
	test_grep "^fabric.topo: 4 nodes, 8 ports observed: 4 errors, 0 warnings$" out &&
	test "$(wc -l <out)" = 5 &&
	test_expect_code 1 "$FABSCOPE" topo check fabric.topo obs-h*.json --json >out.json &&
	jq -r "[.findings[] | .kind] | sort | join(\" \")" out.json >kinds &&
	echo "drift no-link swap wrong-rail" >kinds.expect &&
	test_cmp kinds.expect kinds
'

test_expect_success $P 'the plan phase names the same four, and the run exits 1' '
	test_expect_code 1 timeout 120 "$FABSCOPE" run plan.ini -o run2 >out 2>err &&
	grep "^cabling: " out >cabling &&
	cat cabling &&
	test "$(wc -l <cabling)" = 5 &&
	test_grep "^cabling: .*fabric.topo:[0-9]*: error: h1:rail0 and h2:rail0 are swapped" cabling &&
	test_grep "^cabling: .*fabric.topo:[0-9]*: error: h3:rail1 (rail 1) reaches l2.0 port spare-h3, on rail 0" cabling &&
	test_grep "^cabling: .*fabric.topo:[0-9]*: error: h4:rail0 is without carrier" cabling &&
	test_grep "^cabling: .*fabric.topo:[0-9]*: error: h2:rail1 (rail 1): mtu 9000, where 3 of the 4" cabling &&
	test_grep "4 cabling errors against .*fabric.topo" err &&
	jq -r "[.cabling.findings[] | .kind] | sort | join(\" \")" run2/run.json >kinds &&
	test_cmp kinds.expect kinds
'

test_expect_success $P 'the report: Cabling and configuration, a row per rail, every finding; exit 1' '
	"$FABSCOPE" report run1 --topology fabric.topo --no-plots -o rep1 >out &&
	# (a plan of one topology phase: judged by the design, every port as designed)
	test_grep "^acceptance: PASS (0 of 5 checks failed)$" out &&
	sed -n "/^## Cabling and configuration/,/^## /p" rep1/report.md >section &&
	test_grep "^| rail 0 | 4 | 4 | 4 | 4 | 0 |$" section &&
	test_grep "^| rail 1 | 4 | 4 | 4 | 4 | 0 |$" section &&
	test_grep "8 ports seen: cabled and set as fabric.topo says" section &&
	test_expect_code 1 "$FABSCOPE" report run2 --topology fabric.topo --no-plots -o rep2 >out &&
	test_grep "^cabling: FAIL (4 errors against the intended topology" out &&
	sed -n "/^## Cabling and configuration/,/^## /p" rep2/report.md >section &&
	cat section &&
	test_grep "^| rail 0 | 4 | 4 | 3 | 1 | \*\*2\*\* |$" section &&
	test_grep "^| rail 1 | 4 | 4 | 4 | 3 | \*\*2\*\* |$" section &&
	test "$(grep -c "^- \*\*error\*\* fabric.topo:[0-9]*: " section)" = 4 &&
	jq -e ".runs[0].cabling.errors == 4 and (.runs[0].cabling.lanes | length) == 2" rep2/summary.json &&
	test_grep "Cabling and configuration" rep2/report.html &&
	test_expect_code 1 "$FABSCOPE" report run2 --no-plots -o rep3 >out &&
	test_grep "^cabling: FAIL (4 errors" out
'

test_expect_success $P 'on one host alone the swap is its own port on another node'"'"'s leaf port' '
	test_expect_code 1 fab exec h1 "$FABSCOPE" topo check fabric.topo --node h1 --source lldpd \
		--lldpd-socket "$SOCKS/$PFX-h1.sock" >out &&
	test_grep "error: h1:rail0 reaches l1.0 port h2 (the design.s port for h2); the design says l1.0 port h1$" out &&
	test_grep "1 node, 2 ports observed: 1 error, 0 warnings" out &&
	# a NIC port never configured up: on the host itself, said so; in what show lists, not observed
	ip -n $PFX-h3 link set dev rail0 down &&
	test_expect_code 1 fab exec h3 "$FABSCOPE" topo check fabric.topo --node h3 --source none >out &&
	test_grep "error: h3:rail0 is configured down on the host (ip link set rail0 up), so its cable to l2.0 port h3 cannot be seen$" out &&
	fab exec h3 "$FABSCOPE" topo show --node h3 --source none --json >h3-down.json &&
	test_expect_code 1 "$FABSCOPE" topo check fabric.topo h3-down.json >out &&
	test_grep "error: h3:rail0 was not observed on h3: no such interface, or it is not configured up (the design cables it to l2.0 port h3)$" out &&
	ip -n $PFX-h3 link set dev rail0 up &&
	test_expect_code 2 fab exec h1 "$FABSCOPE" topo check fabric.topo --node h9 --source none 2>err &&
	test_grep "has no node .h9.: give --node NAME" err
'

# a host's sysfs as a fixture: rail0 and rail1 up at SPEED Mb/s, MTU 4200, ECN (roce_np) on the
# priorities PRIOS (the others 0)
fixture() { # DIR SPEED0 SPEED1 PRIOS0 PRIOS1
	local dir=$1 r p speed prios
	for r in 0 1; do
		if [ $r = 0 ]; then speed=$2 prios=$4; else speed=$3 prios=$5; fi
		mkdir -p "$dir/class/net/rail$r/ecn/roce_np/enable" || return 1
		echo up >"$dir/class/net/rail$r/operstate" &&
		echo 1 >"$dir/class/net/rail$r/carrier" &&
		echo 0x1003 >"$dir/class/net/rail$r/flags" &&
		echo "$speed" >"$dir/class/net/rail$r/speed" &&
		echo 4200 >"$dir/class/net/rail$r/mtu" || return 1
		for p in 0 1 2 3 4 5 6 7; do
			case ",$prios," in
			*",$p,"*) echo 1 ;;
			*) echo 0 ;;
			esac >"$dir/class/net/rail$r/ecn/roce_np/enable/$p"
		done
	done
}

test_expect_success $P 'ECN drift and a slow link from sysfs trees; PFC drift from an observation' '
	fixture sys-h1 200000 200000 3 3 &&
	fixture sys-h2 200000 200000 3 3 &&
	fixture sys-h3 200000 200000 4 3 &&
	fixture sys-h4 200000 100000 3 3 &&
	sed "/^link h/s/\$/ speed=200G/" fabric.topo >fast.topo &&
	for h in h1 h2 h3 h4; do
		"$FABSCOPE" topo show --sysfs sys-$h --source none --node $h --json >fx-$h.json || return 1
	done &&
	jq -e ".ports[0].settings.ecn_np == [3] and .ports[0].mtu == 4200 and .ports[0].listened == false" fx-h1.json &&
	test_expect_code 1 "$FABSCOPE" topo check fast.topo fx-h*.json >out &&
	cat out &&
	test_grep "error: h3:rail0 (rail 0): ecn_np 4, where 3 of the 4 ports of rail 0 have 3$" out &&
	test_grep "error: h4:rail1 is up at 100 Gb/s; the design says 200 Gb/s$" out &&
	test_grep "4 nodes, 8 ports observed: 2 errors, 0 warnings$" out &&
	for h in h1 h2 h3; do
		jq ".ports[].settings.pfc = [3]" fx-$h.json >pfc-$h.json || return 1
	done &&
	jq ".ports[].settings.pfc = [3, 4]" fx-h4.json >pfc-h4.json &&
	test_expect_code 1 "$FABSCOPE" topo check fabric.topo pfc-h*.json >out &&
	test_grep "error: h4:rail0 (rail 0): pfc 3,4, where 3 of the 4 ports of rail 0 have 3$" out &&
	test_grep "error: h4:rail1 (rail 1): pfc 3,4, where 3 of the 4 ports of rail 1 have 3$" out &&
	test_grep "4 nodes, 8 ports observed: 3 errors, 0 warnings$" out
'

test_expect_success $P 'observations that cannot support a verdict are refused, exit 2' '
	echo "{}" >notobs.json &&
	test_expect_code 2 "$FABSCOPE" topo check fabric.topo notobs.json 2>err &&
	test_grep "notobs.json: not what .fabscope topo show --json. writes" err &&
	jq ".node = \"h9\"" obs-h1.json >h9.json &&
	test_expect_code 2 "$FABSCOPE" topo check fabric.topo h9.json 2>err &&
	test_grep "no observed node is a node of fabric.topo" err &&
	test_expect_code 2 "$FABSCOPE" topo discover notobs.json 2>err &&
	jq ".ports[].neighbor = null" obs-h1.json >deaf.json &&
	test_expect_code 2 "$FABSCOPE" topo discover deaf.json 2>err &&
	test_grep "no port of the observations heard a neighbour" err &&
	printf "[global]\ntopology = nosuch.topo\n[c]\nkind = topology\n" >badtopo.ini &&
	test_expect_code 2 "$FABSCOPE" run badtopo.ini --hostfile hosts -o run9 2>err &&
	test "$(wc -l <err)" = 1 && test_grep "nosuch.topo" err && test ! -e run9 &&
	test_expect_code 2 "$FABSCOPE" topo check fabric.topo nosuch.json 2>err &&
	test_grep "nosuch.json" err
'

test_expect_success $P 'down stops every lldpd of the fabric' '
	fab down &&
	! ls $SOCKS/$PFX-*.sock 2>/dev/null &&
	! pgrep -f "$SOCKS/$PFX-" >/dev/null
'

test_done
