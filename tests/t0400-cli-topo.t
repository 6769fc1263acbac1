#!/usr/bin/env bash
test_description='fabscope topo: an intended topology (fabscope-topology(5)) read and checked
against itself: a correct rail-optimized design has no finding; each planted fault (a port
cabled twice, a cable with no switch, a port without a rail or on a leaf of another rail, a
rail reaching two leaves, a cable between planes, a node on a spine, an unused switch) is one
finding of its kind on its line, errors exit 1; a file that is no topology is one line, exit 2;
the file written back reads back the same (with the switches'"'"' addresses, addr=); the Slurm export
of one rail; a Graphviz graph as
Cumulus PTM keeps one (topology.dot) read, written, and round-tripped with our format and with
Graphviz itself; both readers fuzzed'
# asan: always: feeds untrusted bytes to C code: topology files (intent, DOT, Slurm topology.conf)
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"
. "$TEST_DIRECTORY/lib-topo.sh"

test_require_in_ci FABSCOPE JQ TEST_TOOL
P=FABSCOPE,JQ

good() { topo_design; }

# finds FILE: "LINE LEVEL KIND" of each finding of check-file --json, one a line
finds() {
	jq -r '.findings[] | "\(.line) \(.level) \(.kind)"' "$1"
}

# planted EXIT 'SED-SCRIPT' 'LINE LEVEL KIND'...: the good design edited by sed has exactly those
# findings, and check-file exits EXIT
planted() {
	local rc=$1 script=$2
	shift 2
	good | sed "$script" >bad.topo &&
	test_expect_exit "$rc" "$FABSCOPE" topo check-file bad.topo --json >bad.json &&
	finds bad.json >actual &&
	printf "%s\n" "$@" >expect &&
	test_cmp expect actual
}

test_expect_success $P 'a correct rail-optimized design: no finding, exit 0; the counts' '
	good >good.topo &&
	fs_expect 0 topo check-file good.topo &&
	echo "good.topo: 6 switches, 4 nodes, 16 cables: 0 errors, 0 warnings" >expect &&
	test_cmp expect out &&
	test_must_be_empty err &&
	fs_expect 0 topo check-file good.topo --json &&
	jq -e ".schema == \"fabscope.topo-check/1\" and .switches == 6 and .nodes == 4 and .links == 16 and
		.errors == 0 and .warnings == 0 and .findings == []" out >/dev/null
'

test_expect_success $P 'each planted fault is one finding of its kind, on its line; a peer link, a loopback are cables' '
	planted 1 "s/^link h2:eth0 l1.0:p2/link h2:eth0 l1.0:p1/" "10 error port-twice" &&
	planted 1 "s/^link h4:eth1 l2.1:p2 rail=1/link h4:eth1 h3:eth9 rail=1/" "15 error no-switch" &&
	planted 1 "s/^switch l1.0 tier=leaf rail=0/switch l1.0 tier=leaf/" "10 error no-rail" &&
	planted 1 "s/^link h3:eth0 l2.0:p1 rail=0/link h3:eth0 l2.0:p1 rail=1/" "12 error wrong-rail" &&
	planted 1 "\$a link h3:eth2 l1.0:p9 rail=0" "24 error rail-leaves" &&
	planted 1 "s/^switch s2 tier=spine/switch s2 tier=spine plane=1/; s/^switch s1 tier=spine/switch s1 tier=spine plane=0/; /^link l[12].[01]:u2 /d; s/^link l1.0:u1 s1:d1/link l1.0:u1 s2:d1/; s/^switch l1.0 tier=leaf rail=0/switch l1.0 tier=leaf rail=0 plane=0/" \
		"16 error cross-plane" &&
	planted 0 "s/^link h4:eth1 l2.1:p2 rail=1/link h4:eth1 s2:p9 rail=1/" "15 warning tier" &&
	planted 0 "\$a switch s3 tier=spine" "24 warning unused" &&
	planted 0 "s/^link l1.0:u2 s2:d1/link l1.0:u2 x1:d1/; \$a switch x1 tier=superspine" "17 warning tier" &&
	good | sed "s/^link l1.0:u2 s2:d1/link l1.0:u2 l2.0:u9/; \$a link l1.0:p7 l1.0:p8" >peer.topo &&
	fs_expect 0 topo check-file peer.topo --json &&
	jq -e ".errors == 0 and .findings == []" out &&
	good | sed "\$a link l1.0:p7 l1.0:p1" >loop.topo &&
	fs_expect 1 topo check-file loop.topo --json &&
	finds out >actual && echo "24 error port-twice" >expect && test_cmp expect actual
'

test_expect_success $P 'a leaf of a rail-optimized design serving two rails; the text of findings' '
	good | sed "s/^switch l2.1 tier=leaf rail=1/switch l2.1 tier=leaf/; s/^link h4:eth1 l2.1:p2 rail=1/link h4:eth1 l2.1:p2 rail=0/" >two.topo &&
	fs_expect 1 topo check-file two.topo &&
	test_grep -x "two.topo:15: error: leaf l2.1 serves rail 1 (line 13) and rail 0: a leaf of a rail-optimized design serves one rail" out &&
	good | sed "s/^link h3:eth0 l2.0:p1 rail=0/link h3:eth0 l2.0:p1 rail=1/" >wr.topo &&
	fs_expect 1 topo check-file wr.topo &&
	test_grep -x "wr.topo:12: error: h3:eth0 is rail 1 but leaf l2.0 serves rail 0" out &&
	test_grep -x "wr.topo: 6 switches, 4 nodes, 16 cables: 1 errors, 0 warnings" out
'

test_expect_success $P 'h01 and h1 are two nodes; names in natural order (s2 before s10), each its own' '
	cat >h01.topo <<-\EOF &&
	switch s10 tier=spine
	switch s2 tier=spine
	switch l1 tier=leaf rail=0
	link h01:eth0 l1:p1 rail=0
	link h1:eth0 l1:p2 rail=0
	link h2:eth0 l1:p3 rail=0
	link l1:u1 s2:d1
	link l1:u2 s10:d1
	EOF
	fs_expect 0 topo check-file h01.topo &&
	test_grep -x "h01.topo: 3 switches, 3 nodes, 5 cables: 0 errors, 0 warnings" out &&
	fs_expect 0 topo export h01.topo --slurm &&
	grep -v "^#" out >actual &&
	printf "%s\n" "SwitchName=l1 Nodes=h01,h1,h2" "SwitchName=s2 Switches=l1" "SwitchName=s10 Switches=l1" >expect &&
	test_cmp expect actual
'

# not_topo TEXT WORDS...: exit 2, one line on stderr holding every word
not_topo() {
	printf "$1" >nt.topo && shift &&
	fs_expect 2 topo check-file nt.topo &&
	ptp_one_error err "$@"
}

test_expect_success $P 'a file that is no topology: one line with the file, line and what to write, exit 2' '
	not_topo "switch l1 tier=leaf\nrouter r1\n" "nt.topo:2" "router" "switch NAME" &&
	not_topo "switch l1 tier=core\n" "nt.topo:1" "tier=core" "leaf, spine, superspine, border or oob" &&
	not_topo "switch l1\nlink h1:e l1:p\n" "nt.topo:1" "no tier=" &&
	not_topo "switch l1 tier=leaf color=red\nlink h1:e l1:p\n" "nt.topo:1" "unknown key" "color" &&
	not_topo "switch l1 tier=leaf\nlink h1 l1:p\n" "nt.topo:2" "DEVICE:PORT" &&
	not_topo "switch l1 tier=leaf\nlink h1:e l1:p speed=fast\n" "nt.topo:2" "speed=fast" "200G" &&
	not_topo "switch l1 tier=leaf\nlink h1:e l1:p rail=99\n" "nt.topo:2" "rail=99" "0 to 63" &&
	not_topo "switch l1 tier=leaf\nlink h1:e l1:p\nswitch l1 tier=spine\n" "nt.topo:3" "declared twice" &&
	not_topo "switch l1 tier=leaf\nlink h;1:e l1:p\n" "nt.topo:2" "h;1" &&
	not_topo "switch l1 tier=leaf\nlink l1:p l1:p\n" "nt.topo:2" "to itself" &&
	not_topo "# nothing\nswitch l1 tier=leaf\n" "no links" &&
	printf "switch l1 tier=leaf\0\n" >nul.topo &&
	fs_expect 2 topo check-file nul.topo && ptp_one_error err "not a text file" &&
	fs_expect 2 topo check-file nosuch.topo && ptp_one_error err "nosuch.topo" &&
	fs_expect 2 topo check-file && test_grep "give the topology file" err &&
	fs_expect 2 topo frobnicate good.topo && test_grep "check-file, export, show, check or discover" err &&
	fs_expect 2 topo show good.topo && test_grep "show takes no file" err
'

# a dual-plane design of two pods, written out of order and with its keys in any order, and the
# same design as fabscope writes it, by hand: switches in natural order (l1.0 before l1.0.1, s2
# before s10), keys pod, plane, rail; cables in the file's order, rail, plane, speed
planes_design() {
	cat <<-\EOF
	switch s10 tier=spine plane=1 pod=p1
	switch x1 tier=superspine
	switch l1.0.1 rail=0 tier=leaf plane=1 pod=p1
	switch l2.0 tier=leaf pod=p2 rail=0 plane=0
	switch s2 pod=p1 tier=spine plane=0
	switch l1.0 plane=0 pod=p1 tier=leaf rail=0
	switch s3 tier=spine pod=p2 plane=0
	link h1:rail0 l1.0:p1 plane=0 speed=400G rail=0
	link h1:rail0.1 l1.0.1:p1 speed=400G plane=1 rail=0
	link h2:rail0 l2.0:p1 speed=400G
	link l1.0:u1 s2:d1 speed=800G
	link l2.0:u1 s3:d1 speed=800G
	link l1.0.1:u1 s10:d1 speed=800G
	link s2:u1 x1:d1
	link s3:u1 x1:d2
	EOF
}

test_expect_success $P 'export --format fabscope: the design as written by hand, pods and planes; again, the same bytes' '
	planes_design >planes.topo &&
	fs_expect 0 topo check-file planes.topo &&
	test_grep -x "planes.topo: 7 switches, 2 nodes, 8 cables: 0 errors, 0 warnings" out &&
	fs_expect 0 topo export planes.topo --format fabscope -o again.topo &&
	cat >expect <<-\EOF &&
	# fabscope topology: 7 switches, 8 links (fabscope-topology(5))
	switch l1.0 tier=leaf pod=p1 plane=0 rail=0
	switch l1.0.1 tier=leaf pod=p1 plane=1 rail=0
	switch l2.0 tier=leaf pod=p2 plane=0 rail=0
	switch s2 tier=spine pod=p1 plane=0
	switch s3 tier=spine pod=p2 plane=0
	switch s10 tier=spine pod=p1 plane=1
	switch x1 tier=superspine
	link h1:rail0 l1.0:p1 rail=0 plane=0 speed=400G
	link h1:rail0.1 l1.0.1:p1 rail=0 plane=1 speed=400G
	link h2:rail0 l2.0:p1 speed=400G
	link l1.0:u1 s2:d1 speed=800G
	link l2.0:u1 s3:d1 speed=800G
	link l1.0.1:u1 s10:d1 speed=800G
	link s2:u1 x1:d1
	link s3:u1 x1:d2
	EOF
	test_cmp expect again.topo &&
	fs_expect 0 topo export again.topo --format fabscope -o third.topo &&
	test_cmp again.topo third.topo &&
	fs_expect 0 topo export planes.topo --format fabscope &&
	test_cmp again.topo out &&
	fs_expect 0 topo export good.topo --format fabscope -o ours.topo &&
	test_grep -x "link h2:eth0 l1.0:p2 speed=200G" ours.topo &&
	test_grep -x "link h1:eth0 l1.0:p1 rail=0 speed=200G" ours.topo
'

test_expect_success $P 'export --slurm: a leaf lists its nodes, a spine its leaves, for one rail' '
	fs_expect 0 topo export good.topo --slurm --rail 1 &&
	grep -v "^#" out >actual &&
	cat >expect <<-\EOF &&
	SwitchName=l1.1 Nodes=h1,h2
	SwitchName=l2.1 Nodes=h3,h4
	SwitchName=s1 Switches=l1.1,l2.1
	SwitchName=s2 Switches=l1.1,l2.1
	EOF
	test_cmp expect actual &&
	fs_expect 2 topo export good.topo --slurm --rail 5 && ptp_one_error err "no node is cabled on rail 5" &&
	fs_expect 2 topo export good.topo && ptp_one_error err "--slurm or --format fabscope" &&
	fs_expect 2 topo export good.topo --format graphml && ptp_one_error err "--format graphml" "fabscope and dot"
'

test_expect_success $P 'addr=: a switch'"'"'s addresses read, written back (canonical, in both formats); one switch an address' '
	good | sed -e "s/^switch s1 tier=spine/& addr=10.250.1.2,10.250.3.2 addr=fd00::0:2/" \
		   -e "s/^switch s2 tier=spine/& addr=10.250.1.6/" >addr.topo &&
	fs_expect 0 topo check-file addr.topo &&
	fs_expect 0 topo export addr.topo --format fabscope -o addr2.topo &&
	test_grep -x "switch s1 tier=spine addr=10.250.1.2,10.250.3.2,fd00::2" addr2.topo &&
	test_grep -x "switch s2 tier=spine addr=10.250.1.6" addr2.topo &&
	fs_expect 0 topo export addr2.topo --format dot -o addr.dot &&
	test_grep -x "  \"s1\" \[function=\"spine\" addr=\"10.250.1.2,10.250.3.2,fd00::2\"\]" addr.dot &&
	fs_expect 0 topo export addr.dot --format fabscope -o addr3.topo &&
	test_cmp addr2.topo addr3.topo &&
	not_topo "switch l1 tier=leaf addr=10.0.0.1,nope\nlink h1:e l1:p\n" "nt.topo:1" "addr=10.0.0.1,nope" "IPv4 or IPv6" &&
	not_topo "switch l1 tier=leaf addr=10.0.0.1\nswitch s1 tier=spine addr=10.0.0.1\nlink h1:e l1:p\n" "nt.topo:2" \
		"10.0.0.1 is given to both l1 (line 1) and s1" &&
	not_topo "switch l1 tier=leaf addr=10.0.0.1,10.0.0.1\nlink h1:e l1:p\n" "nt.topo:1" "given to switch l1 twice"
'

test_lazy_prereq GRAPHVIZ 'command -v dot'
test_require_in_ci GRAPHVIZ

test_expect_success $P 'export --format dot: the graph as written by hand; read back, the design written by hand' '
	fs_expect 0 topo export planes.topo --format dot -o planes.dot &&
	cat >expect <<-\EOF &&
	// fabscope topology: 7 switches, 8 links (fabscope-topology(5))
	graph fabric {
	  "l1.0" [function="leaf" pod="p1" plane="0" rail="0"]
	  "l1.0.1" [function="leaf" pod="p1" plane="1" rail="0"]
	  "l2.0" [function="leaf" pod="p2" plane="0" rail="0"]
	  "s2" [function="spine" pod="p1" plane="0"]
	  "s3" [function="spine" pod="p2" plane="0"]
	  "s10" [function="spine" pod="p1" plane="1"]
	  "x1" [function="superspine"]
	  "h1":"rail0" -- "l1.0":"p1" [rail="0" plane="0" speed="400G"]
	  "h1":"rail0.1" -- "l1.0.1":"p1" [rail="0" plane="1" speed="400G"]
	  "h2":"rail0" -- "l2.0":"p1" [speed="400G"]
	  "l1.0":"u1" -- "s2":"d1" [speed="800G"]
	  "l2.0":"u1" -- "s3":"d1" [speed="800G"]
	  "l1.0.1":"u1" -- "s10":"d1" [speed="800G"]
	  "s2":"u1" -- "x1":"d1"
	  "s3":"u1" -- "x1":"d2"
	}
	EOF
	test_cmp expect planes.dot &&
	fs_expect 0 topo export planes.dot --format fabscope -o back.topo &&
	test_cmp again.topo back.topo &&
	fs_expect 0 topo check-file planes.dot &&
	test_grep -x "planes.dot: 7 switches, 2 nodes, 8 cables: 0 errors, 0 warnings" out &&
	fs_expect 0 topo export good.topo --format dot -o good.dot &&
	fs_expect 0 topo export good.dot --format fabscope -o goodback.topo &&
	test_cmp ours.topo goodback.topo
'

test_expect_success $P,GRAPHVIZ 'Graphviz reads our graph; what it writes back is the same design (its own order)' '
	dot -Tcanon good.dot >canon.dot 2>dot.err &&
	fs_expect 0 topo export canon.dot --format fabscope -o canon.topo &&
	sort ours.topo >ours.sorted && sort canon.topo >canon.sorted &&
	test_cmp ours.sorted canon.sorted
'

# a topology.dot as PTM and topology_converter users keep one: plain and quoted IDs, comments of
# each kind, defaults, graph attributes, attributes fabscope does not know, a host with a
# function, semicolons and commas
test_expect_success $P 'a topology.dot as PTM users keep it: the switches by function, the cables' '
	cat >ptm.dot <<-\EOF &&
	# written by hand
	graph G {
	  graph [splines=true]; node [shape=record]
	  rankdir = LR
	  /* the switches */
	  "spine1" [function="spine" os="CumulusCommunity/cumulus-vx"]
	  leaf1 [function=leaf, rail=0]; leaf2 [function="leaf" rail="1"]
	  "server1" [function="host"]
	  // the cables
	  "spine1":"swp1" -- "leaf1":"swp49";
	  "spine1":"swp2" -- "leaf2":"swp49" [LLDP=""]
	  "server1":"eth1" -- "leaf1":"swp1" [speed="100G"]
	  server1:eth2 -- "leaf2":"swp1"
	}
	EOF
	fs_expect 0 topo check-file ptm.dot &&
	test_grep "ptm.dot: 3 switches, 1 nodes, 4 cables: 0 errors, 0 warnings" out &&
	fs_expect 0 topo export ptm.dot --format fabscope &&
	grep -v "^#" out >actual &&
	cat >expect <<-\EOF &&
	switch leaf1 tier=leaf rail=0
	switch leaf2 tier=leaf rail=1
	switch spine1 tier=spine
	link spine1:swp1 leaf1:swp49
	link spine1:swp2 leaf2:swp49
	link server1:eth1 leaf1:swp1 speed=100G
	link server1:eth2 leaf2:swp1
	EOF
	test_cmp expect actual
'

CLDEMO=$TEST_DIRECTORY/data/cldemo-vagrant/topology.dot

test_expect_success $P 'Cumulus. reference topology.dot (cldemo-vagrant): no error; functions, peer links, loopbacks, out-of-band' '
	fs_expect 0 topo check-file "$CLDEMO" --json &&
	jq -e ".errors == 0 and .switches == 9 and .nodes == 7 and .links == 59 and .out_of_band == 15" out &&
	finds out >actual &&
	printf "%s\n" "0 warning lanes" "19 warning function" >expect &&
	test_cmp expect actual &&
	jq -r ".findings[1].text" out >text &&
	test_grep "^internet: function \"internet\" is none fabscope knows .*: kept as a node$" text &&
	fs_expect 0 topo check-file "$CLDEMO" &&
	test_grep "topology.dot: 9 switches, 7 nodes, 59 cables (15 out-of-band): 0 errors, 2 warnings$" out &&
	fs_expect 0 topo export "$CLDEMO" --format fabscope -o cldemo.topo &&
	grep "^switch " cldemo.topo >actual &&
	cat >expect <<-\EOF &&
	switch exit01 tier=border
	switch exit02 tier=border
	switch leaf01 tier=leaf
	switch leaf02 tier=leaf
	switch leaf03 tier=leaf
	switch leaf04 tier=leaf
	switch oob-mgmt-switch tier=oob
	switch spine01 tier=spine
	switch spine02 tier=spine
	EOF
	test_cmp expect actual &&
	test_grep -x "link exit01:swp45 exit01:swp46" cldemo.topo &&
	test_grep -x "link leaf01:swp49 leaf02:swp49" cldemo.topo &&
	fs_expect 0 topo check-file cldemo.topo &&
	test_grep "cldemo.topo: 9 switches, 7 nodes, 59 cables (15 out-of-band): 0 errors, 1 warnings$" out
'

test_expect_success $P 'its Slurm tree names its switches, the out-of-band switch none; the model has one lane' '
	fs_expect 0 topo export "$CLDEMO" --slurm &&
	grep -v "^#" out >actual &&
	cat >expect <<-\EOF &&
	SwitchName=exit01 Nodes=internet,edge01
	SwitchName=exit02 Nodes=internet,edge01
	SwitchName=leaf01 Nodes=server01,server02
	SwitchName=leaf02 Nodes=server01,server02
	SwitchName=leaf03 Nodes=server03,server04
	SwitchName=leaf04 Nodes=server03,server04
	SwitchName=spine01 Switches=leaf01,leaf02,leaf03,leaf04,exit01,exit02
	SwitchName=spine02 Switches=leaf01,leaf02,leaf03,leaf04,exit01,exit02
	EOF
	test_cmp expect actual &&
	"$FABSCOPE" model "$CLDEMO" --speed 10 --pattern ring --json >m.json &&
	jq -e "[.lanes[] | \"\(.rail)/\(.plane) \(.spray.flows)\"] == [\"0/0 6\"]" m.json
'

# obs_of TABLE: an observation (topo show --json) per device of TABLE's lines "DEV PORT SYS PORT", as
# LLDP would give them: obs-DEV.json
obs_of() {
	jq -Rsc "split(\"\n\") | map(select(length > 0) | split(\" \")) | group_by(.[0])[] |
		{schema: \"fabscope.topo-show/1\", node: .[0][0], ports: map({iface: .[1], state: \"up\",
		 carrier: true, speed_mbps: 10000, listened: true, neighbor: {sys_name: .[2], port: .[3]}})}" "$1" |
	while read -r doc; do
		echo "$doc" >"obs-$(echo "$doc" | jq -r .node).json" || return 1
	done
}

test_expect_success $P 'topo check of LLDP seen as it is designed: clean; a cable swapped: the swap, named once' '
	awk "/^link / { split(\$2, a, \":\"); split(\$3, b, \":\");
		print a[1], a[2], b[1], b[2]; print b[1], b[2], a[1], a[2] }" cldemo.topo >seen &&
	test_line_count = 118 seen &&
	obs_of seen &&
	ls obs-*.json >docs && test_line_count = 16 docs &&
	fs_expect 0 topo check "$CLDEMO" $(cat docs) &&
	test_grep "topology.dot: 16 nodes, 118 ports observed: 0 errors, 0 warnings$" out &&
	rm obs-*.json &&
	sed "s/^server01 eth1 leaf01 swp1$/server01 eth1 leaf01 swp2/; s/^server02 eth1 leaf01 swp2$/server02 eth1 leaf01 swp1/;
		s/^leaf01 swp1 server01 eth1$/leaf01 swp1 server02 eth1/; s/^leaf01 swp2 server02 eth1$/leaf01 swp2 server01 eth1/" \
		seen >swapped &&
	test "$(diff seen swapped | grep -c "^>")" = 4 &&
	obs_of swapped &&
	fs_expect 1 topo check "$CLDEMO" $(cat docs) --json &&
	jq -r ".findings[] | \"\(.kind) \(.text)\"" out >actual &&
	echo "swap server01:eth1 and server02:eth1 are swapped: server01:eth1 reaches leaf01 port swp2 and server02:eth1 reaches leaf01 port swp1; the design (lines 42 and 44) has them the other way round" >expect &&
	test_cmp expect actual &&
	rm obs-*.json &&
	sed "s/^spine01 swp1 leaf01 swp51$/spine01 swp1 leaf02 swp51/; s/^spine01 swp2 leaf02 swp51$/spine01 swp2 leaf01 swp51/;
		s/^leaf01 swp51 spine01 swp1$/leaf01 swp51 spine01 swp2/; s/^leaf02 swp51 spine01 swp2$/leaf02 swp51 spine01 swp1/" \
		seen >swapped &&
	obs_of swapped &&
	fs_expect 1 topo check "$CLDEMO" $(cat docs) --json &&
	jq -r ".findings[] | \"\(.line) \(.kind)\"" out >actual &&
	echo "23 swap" >expect &&
	test_cmp expect actual &&
	jq -r ".findings[0].text" out >text &&
	test_grep "^leaf01:swp51 and leaf02:swp51 are swapped: leaf01:swp51 reaches spine01 port swp2 and leaf02:swp51 reaches spine01 port swp1" text
'

# not_dot TEXT WORDS...: a graph that cannot be read: exit 2, one line holding every word
not_dot() {
	printf "$1" >nd.dot && shift &&
	fs_expect 2 topo check-file nd.dot &&
	ptp_one_error err "$@"
}

test_expect_success $P 'a graph that cannot be read: one line with the file, line and what is wrong' '
	not_dot "graph G {\n\"a\":\"p -- l:q\n}\n" "nd.dot:2" "unclosed quote" &&
	not_dot "graph G {\na:p -- b:q -- c:r\n}\n" "nd.dot:2" "one cable per edge" &&
	not_dot "graph G {\nsubgraph x { a }\n}\n" "nd.dot:2" "subgraphs are not read" &&
	not_dot "graph G {\nl [function=leaf]\na -- l:p\n}\n" "nd.dot:3" "a cable joins two ports" &&
	not_dot "graph G {\nl [function=leaf rail=x]\n}\n" "nd.dot:2" "rail=\"x\"" "0 to 63" &&
	not_dot "graph G {\nl [function=leaf]\na:p -- l:q [speed=\"fast\"]\n}\n" "nd.dot:3" "speed=\"fast\"" &&
	not_dot "graph G {\nl [function=leaf]\na:p -- l:q\n" "missing" &&
	not_dot "graph G {\nl [function=leaf]\na:p -- l:q\n}\n}\n" "nd.dot:5" "one graph a file" &&
	not_dot "graph G {\nl [function=leaf]\n}\n" "no cables" &&
	not_dot "graph G {\nl [function=leaf]\n\"a b\":p -- l:q\n}\n" "nd.dot:3" "a b"
'

test_expect_success $P,TEST_TOOL 'fuzz: 20000 texts each made from our file and from the graph' '
	"$TEST_TOOL" topo-fuzz good.topo 20000 400 >out 2>/dev/null &&
	cat out &&
	test_grep "^topo-fuzz: 20000 texts: refused [1-9][0-9]*, read [1-9][0-9]*$" out &&
	"$TEST_TOOL" topo-fuzz ptm.dot 20000 401 >out 2>/dev/null &&
	cat out &&
	test_grep "^topo-fuzz: 20000 texts: refused [1-9][0-9]*, read [1-9][0-9]*$" out &&
	"$TEST_TOOL" topo-fuzz good.dot 20000 402 >out 2>/dev/null &&
	test_grep "^topo-fuzz: 20000 texts: refused [1-9][0-9]*, read [1-9][0-9]*$" out
'

test_expect_success $P 'export -o never follows a symlink; --help names every option' '
	ln -s target.conf link.conf &&
	fs_expect 3 topo export good.topo --slurm -o link.conf && ptp_one_error err "symlink" &&
	test ! -e target.conf &&
	fs_expect 0 topo --help &&
	for o in --json --slurm --rail --plane --format --output --iface --listen; do test_grep -e "$o" out || return 1; done
'

test_done
