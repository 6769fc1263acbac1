#!/usr/bin/env bash
test_description='design files are written from names, never from data (issue 41, finding 9): an
observation whose node or interface holds a newline, a space or a quote is refused in one line
(topo discover and topo check, exit 2), so no switch or cable can be slipped into found.topo or
its DOT export; a neighbour'\''s odd names are left out in a comment that does not quote them; a
path with a newline is escaped in the comment of a Slurm export; every design writer checks its
names (topo_design_ok)'
# asan: always: feeds untrusted bytes to C code: observation files and designs whose names are not names
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_require_in_ci FABSCOPE JQ
P=FABSCOPE,JQ

# obs FILE NODE IFACE SYS PORT: an observation of one port (what topo show --json writes)
obs() {
	jq -n --arg node "$2" --arg iface "$3" --arg sys "$4" --arg port "$5" \
		'{schema: "fabscope.topo-show/1", node: $node, source: "lldpd", listen_s: 0,
		  ports: [{iface: $iface, state: "up", carrier: true, speed_mbps: 100000,
			   neighbor: (if $sys == "" then null else {sys_name: $sys, port: $port} end)}]}' >"$1"
}

EVIL='h9
switch evil tier=leaf
link h9:eth0 evil:p1 speed=1G
#'

test_expect_success $P 'a node name that would make lines of the design: refused, nothing written' '
	obs good.json h1 eth0 leaf1 swp1 &&
	obs evil.json "$EVIL" eth0 "" "" &&
	fs_expect 2 topo discover good.json evil.json -o found.topo &&
	test $(wc -l <err) = 1 && test_grep "node .h9\\\\x0aswitch evil tier=leaf\\\\x0alink h9:eth0 evil:p1 speed=1G\\\\x0a#. is not a name of fabscope-topology(5)" err &&
	! test -e found.topo &&
	fs_expect 2 topo discover evil.json &&
	! grep -q "^switch evil" out && ! grep -q "^link h9" out
'

test_expect_success $P 'an interface, a node with a space or a quote: refused too; topo check the same' '
	obs sp.json h1 "eth0 leaf9:x" leaf1 swp1 &&
	fs_expect 2 topo discover sp.json &&
	test $(wc -l <err) = 1 && test_grep "interface .eth0 leaf9:x. is not a name" err &&
	obs q.json "h\"1" eth0 leaf1 swp1 &&
	fs_expect 2 topo discover q.json &&
	test_grep "node .h\"1. is not a name" err &&
	printf "switch leaf1 tier=leaf rail=0\nlink h1:eth0 leaf1:swp1\n" >d.topo &&
	fs_expect 2 topo check d.topo good.json evil.json &&
	test $(wc -l <err) = 1 && test_grep "is not a name of fabscope-topology(5)" err
'

test_expect_success $P 'a neighbour whose names the format does not take: a comment that does not quote them' '
	obs nb.json h1 eth0 "leaf1
switch evil2 tier=leaf" "swp1
#" &&
	obs h2.json h2 eth0 leaf1 swp2 &&
	fs_expect 0 topo discover nb.json h2.json -o found.topo &&
	test_grep "^# h1:eth0: a neighbour whose names this format does not take" found.topo &&
	! grep -q "evil2" found.topo &&
	"$FABSCOPE" topo export found.topo --format dot -o found.dot &&
	! grep -q "evil" found.dot &&
	test_grep "\"h2\":\"eth0\" -- \"leaf1\":\"swp2\"" found.dot
'

test_expect_success $P 'a Slurm export: a path with a newline stays in its comment' '
	printf "switch leaf1 tier=leaf rail=0\nlink h1:eth0 leaf1:swp1\nlink h2:eth0 leaf1:swp2\n" >"x
SwitchName=evil Nodes=h1,h2" &&
	"$FABSCOPE" topo export "x
SwitchName=evil Nodes=h1,h2" --slurm -o slurm.conf &&
	! grep -q "^SwitchName=evil" slurm.conf &&
	test_grep "^SwitchName=leaf1 Nodes=h1,h2$" slurm.conf &&
	test_grep "^# topology.conf .* from x\\\\x0aSwitchName=evil" slurm.conf
'

test_done
