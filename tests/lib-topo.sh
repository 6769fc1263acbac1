# tests/lib-topo.sh - an intended topology for tests (source it after test-lib.sh)
#
# topo_design: a rail-optimized design (fabscope-topology(5)): 4 nodes on 2 rails, a leaf per
# group and rail, 2 spines; tests count on its line numbers
topo_design() {
	cat <<-\EOF
	# two groups of two nodes, two rails
	switch l1.0 tier=leaf rail=0
	switch l1.1 tier=leaf rail=1
	switch l2.0 tier=leaf rail=0
	switch l2.1 tier=leaf rail=1
	switch s1 tier=spine
	switch s2 tier=spine
	link h1:eth0 l1.0:p1 rail=0 speed=200G
	link h1:eth1 l1.1:p1 rail=1 speed=200G
	link h2:eth0 l1.0:p2 speed=200G
	link h2:eth1 l1.1:p2 speed=200G
	link h3:eth0 l2.0:p1 rail=0 speed=200G
	link h3:eth1 l2.1:p1 rail=1 speed=200G
	link h4:eth0 l2.0:p2 rail=0 speed=200G
	link h4:eth1 l2.1:p2 rail=1 speed=200G
	link l1.0:u1 s1:d1 speed=400G
	link l1.0:u2 s2:d1 speed=400G
	link l1.1:u1 s1:d2 speed=400G
	link l1.1:u2 s2:d2 speed=400G
	link l2.0:u1 s1:d3 speed=400G
	link l2.0:u2 s2:d3 speed=400G
	link l2.1:u1 s1:d4 speed=400G
	link l2.1:u2 s2:d4 speed=400G
	EOF
}
