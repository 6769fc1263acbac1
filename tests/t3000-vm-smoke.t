#!/usr/bin/env bash
test_description='ci/rxe-vm, the Soft-RoCE VM test bed: its contract (exit status, stdout/stderr,
-e, -o, the directory), then one 4-node boot: four rxe devices with their RoCE v2 IPv4 GIDs,
ib_write_bw from rxe2 to rxe1 captured on br0 as RoCEv2 (UDP 4791) between 10.1.0.2 and 10.1.0.1,
and the host-built fabscope running in the guest'
. "$(dirname "$0")/test-lib.sh"

# one Soft-RoCE guest at a time: qemu TCG emulates 2 vCPUs on the host's cores, and two guests
# at once would starve each other's time limits
test_holds vm
test_cpus 2
. "$TEST_DIRECTORY/lib-vm.sh"

test_lazy_prereq PERFTEST 'command -v ib_write_bw && command -v ibv_devices'
test_require_in_ci VM PERFTEST TCPDUMP FABSCOPE JQ

# one_line FILE: FILE holds exactly one line (ci/rxe-vm's errors are one line)
one_line() {
	[ "$(wc -l <"$1")" = 1 ] && return 0
	echo "one_line: '$1' should hold one line; it holds:" >&2
	cat "$1" >&2
	return 1
}

test_expect_success 'usage errors exit 125 with one line, before any boot' '
	test_expect_exit 125 "$RXE_VM" 2>err && one_line err &&
	test_grep "nothing to run" err &&
	while read -r args; do
		echo "args: $args" &&
		test_expect_exit 125 "$RXE_VM" $args 2>err && one_line err || return 1
	done <<-\EOF
	-n 17 -- true
	-n x -- true
	-m 100 -- true
	-t 5 -- true
	--mtu 9 -- true
	-e 1X=2 -- true
	-e novalue -- true
	--bogus -- true
	-c true -- false
	-n
	EOF
'

test_expect_success '--help describes the fabric and the exit codes' '
	"$RXE_VM" --help >out &&
	test_grep "ci/rxe-vm \[options\] -c" out &&
	test_grep "rxe1  rxe2 ... rxeN" out &&
	test_grep "RXE_VM_GID_INDEX" out &&
	test_grep "^Exit codes" out
'

# the first run on a fresh clone fetches the kernel and says so on stderr: do it here, not in
# the test below that compares stderr
test_expect_success VM '--prepare fills the kernel cache (fetched once per clone)' '
	"$RXE_VM" --prepare >out &&
	test_grep "^rxe-vm: cache ready in .*: linux-image-" out &&
	"$RXE_VM" --check >out &&
	test_grep "^rxe-vm: ready: qemu and the cached kernel" out
'

test_expect_success VM 'a VM without nodes: exit status, stdout and stderr apart, -e, argv, cwd, -o' '
	mkdir -p here/sub &&
	(cd here/sub && vm_run -n 0 -t 120 -o "$TRASH_DIRECTORY/o" -e "GREETING=hello world" -- \
		bash -c "echo \"out \$GREETING \$FABSCOPE_VM \$RXE_VM_NODES \$1|\$2\"; echo err >&2;
			pwd >\"\$RXE_VM_OUT/pwd\"; mkdir -p \"\$RXE_VM_OUT/d\" && echo deep >\"\$RXE_VM_OUT/d/f\"; exit 7" \
		x "a  b" "c'\''d" >"$TRASH_DIRECTORY/stdout" 2>"$TRASH_DIRECTORY/stderr"
	test $? = 7) &&
	echo "out hello world 1 0 a  b|c'\''d" >expect &&
	test_cmp expect stdout &&
	echo err >expect &&
	test_cmp expect stderr &&
	echo "$TRASH_DIRECTORY/here/sub" >expect &&
	test_cmp expect o/pwd &&
	echo deep >expect &&
	test_cmp expect o/d/f
'

# -t: a command that outlives it is ended by the guest, which says so on stderr and still brings
# back what the command wrote (the guest stops it 6 s and a thirtieth of -t early); should a starved
# guest not manage even that, the host's limit ends the VM, and its line says how far the guest
# got.  Exit 124 either way, with one of those two lines.
test_expect_success VM 'a command past -t: exit 124, and which side ended it, how far it got' '
	test_expect_exit 124 vm_run -n 0 -t 30 -o "$TRASH_DIRECTORY/late" -- \
		bash -c "echo begun >\"\$RXE_VM_OUT/begun\"; exec sleep 600" >out 2>err &&
	if grep -q "^rxe-vm: guest: the command ran out of time" err; then
		echo begun >expect && test_cmp expect late/begun
	else
		test_grep -E "^rxe-vm: time limit of 30s ran out \(-t\); the VM was killed; the (guest|command) " err
	fi
'

# The guest's half of the 4-node tests: it runs every check in one boot, the tests below look at
# what it left in $VM_OUT.  (Written here, in the trash directory, which the guest sees too.)
cat >guest-4nodes.sh <<\EOF
vm_note nodes "$RXE_VM_NODES"
vm_note gid_index "${RXE_VM_GID_INDEX:-none}"
vm_note fabscope_vm "${FABSCOPE_VM:-}"
vm_check devices ibv_devices
vm_check devinfo ibv_devinfo -d rxe1
vm_check nodes cat /run/rxe-vm/nodes

gids() { # the GID tables: DEV INDEX GID TYPE NETDEV, one line each, empty entries left out
	local d line f i type ndev
	for d in /sys/class/infiniband/rxe*; do
		# one grep per table (1024 entries): "PATH:GID" for the entries in use
		grep -H -v -x 0000:0000:0000:0000:0000:0000:0000:0000 "$d"/ports/1/gids/* |
		while read -r line; do
			f=${line%%:*} i=${f##*/}
			read -r type <"$d/ports/1/gid_attrs/types/$i"
			read -r ndev <"$d/ports/1/gid_attrs/ndevs/$i"
			echo "${d##*/} $i ${line#*:} $type $ndev"
		done
	done
}
vm_check gids gids
g1=$(vm_gid_index rxe1) && g2=$(vm_gid_index rxe2)
vm_note gid_rxe1 "$g1"
vm_note gid_rxe2 "$g2"
ip -s -j link show n1 >/tmp/n1.before.json

# ib_write_bw: the server on rxe1 (10.1.0.1), the client on rxe2 connecting to it, 200 writes of
# 64 KiB (-D adds 2 s margins); the client may start before the server listens (vm_wait_tcp,
# vm_retry).  The first 200 RoCEv2 packets that
# cross br0 (the switch) are kept.
# perftest turns cycles into time with a clock rate it samples as it starts; under TCG on a busy
# host that sampling can fail ("Correlation coefficient r^2: 0.68 < 0.9"), and ib_write_bw then
# reports a rate of 0 for writes that were made: the pair runs again (3 times at most) when either
# end says so.
write_bw_pair() {
	local attempt rc src
	for attempt in 1 2 3; do
		VM_SPAWN_LIMIT=60 vm_spawn /tmp/write_bw.server.log \
			ib_write_bw -d rxe1 -x "$g1" -F --report_gbits -n 200 --source_ip 10.1.0.1
		server=$vm_pid
		vm_wait_tcp 18515 20
		vm_retry 5 timeout 40 ib_write_bw -d rxe2 -x "$g2" -F --report_gbits -n 200 \
			--source_ip 10.1.0.2 10.1.0.1 >/tmp/write_bw.client.log 2>&1
		rc=$?
		vm_reap $server
		src=$?
		grep -q "Correlation coefficient r^2" /tmp/write_bw.client.log /tmp/write_bw.server.log || break
		echo "attempt $attempt: perftest's clock sampling failed, the pair runs again"
	done
	vm_note write_bw_server_rc $src
	cat /tmp/write_bw.client.log
	return $rc
}
vm_capture_start br0 roce -c 200 -s 128 udp port 4791
vm_check -t 200 write_bw_client write_bw_pair
vm_save /tmp/write_bw.server.log
vm_capture_stop
ip -s -j link show n1 >/tmp/n1.after.json
vm_save /tmp/n1.before.json /tmp/n1.after.json

vm_check fabscope "$FABSCOPE" --version
EOF

test_expect_success VM,PERFTEST 'boot 4 nodes once: devices, GIDs, ib_write_bw rxe2 -> rxe1 captured on br0, fabscope' '
	vm_script -n 4 -t 240 guest-4nodes.sh
'

test_expect_success VM,PERFTEST 'the guest saw FABSCOPE_VM=1 and 4 nodes; all rxe GIDs at one index' '
	echo 1 >expect && vm_note_value fabscope_vm >actual && test_cmp expect actual &&
	echo 4 >expect && vm_note_value nodes >actual && test_cmp expect actual &&
	vm_note_value gid_index >actual && test_grep -x "[0-9][0-9]*" actual
'

test_expect_success VM,PERFTEST 'ibv_devices lists rxe1..rxe4, rxe1 is an active Ethernet port' '
	vm_result devices &&
	for i in 1 2 3 4; do
		test_grep -E "^[[:space:]]*rxe$i[[:space:]]" "$VM_OUT/devices.log" || return 1
	done &&
	test "$(grep -cE "^[[:space:]]*rxe[0-9]" "$VM_OUT/devices.log")" = 4 &&
	vm_result devinfo &&
	test_grep "PORT_ACTIVE" "$VM_OUT/devinfo.log" &&
	test_grep "link_layer:[[:space:]]*Ethernet" "$VM_OUT/devinfo.log" &&
	test_grep "active_mtu:[[:space:]]*1024" "$VM_OUT/devinfo.log"
'

test_expect_success VM,PERFTEST 'each rxeI has ::ffff:10.1.0.I as a RoCE v2 GID on nI, at the noted index' '
	vm_result gids &&
	idx=$(vm_note_value gid_index) &&
	for i in 1 2 3 4; do
		test_grep -x "rxe$i $idx 0000:0000:0000:0000:0000:ffff:0a01:000$i RoCE v2 n$i" "$VM_OUT/gids.log" || return 1
	done &&
	vm_note_value gid_rxe1 >actual && echo "$idx" >expect && test_cmp expect actual &&
	vm_result nodes &&
	test_grep -x "2 rxe2 n2 10.1.0.2 02:00:0a:01:00:02 $idx" "$VM_OUT/nodes.log"
'

test_expect_success VM,PERFTEST 'ib_write_bw rxe2 -> rxe1 moved data, both ends agree' '
	vm_result write_bw_client &&
	echo 0 >expect && vm_note_value write_bw_server_rc >actual && test_cmp expect actual &&
	for side in "$VM_OUT/write_bw_client.log" "$VM_OUT/write_bw.server.log"; do
		test_grep "GID index[[:space:]]*: $(vm_note_value gid_index)" "$side" &&
		# "#bytes #iterations BW-peak BW-average MsgRate": 64 KiB messages, a rate above 0
		awk '"'"'$1 == 65536 && $2 > 0 && $4 > 0 { ok = 1 } END { exit !ok }'"'"' "$side" || {
			echo "no result line with a rate in $side:" >&2; cat "$side" >&2; return 1; }
	done &&
	test_grep "GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:01:00:02" "$VM_OUT/write_bw_client.log"
'

test_expect_success VM,PERFTEST,TCPDUMP 'br0 carried RoCEv2: UDP 4791 from 10.1.0.2 (n2) to 10.1.0.1 (n1)' '
	test_path_is_file "$VM_OUT/roce.pcap" &&
	tcpdump -enr "$VM_OUT/roce.pcap" >pkts 2>tcpdump.err &&
	# 02:00:0a:01:00:02 > 02:00:0a:01:00:01, ... 10.1.0.2.PORT > 10.1.0.1.4791: UDP, length N
	grep -E "^[^ ]+ 02:00:0a:01:00:02 > 02:00:0a:01:00:01, .* 10\.1\.0\.2\.[0-9]+ > 10\.1\.0\.1\.4791: UDP" pkts >fwd &&
	n=$(wc -l <fwd) &&
	echo "$n of $(wc -l <pkts) captured packets: rxe2 -> rxe1" &&
	test "$n" -ge 100 &&
	test_grep ! -E "10\.1\.0\.[34]" pkts
'

test_expect_success VM,PERFTEST,JQ 'the packets really arrived through n1: its RX counter grew' '
	before=$(jq ".[0].stats64.rx.packets" "$VM_OUT/n1.before.json") &&
	after=$(jq ".[0].stats64.rx.packets" "$VM_OUT/n1.after.json") &&
	echo "n1 rx packets: $before -> $after" &&
	test $((after - before)) -ge 200
'

test_expect_success VM,PERFTEST 'the host-built fabscope runs in the guest, the same binary' '
	vm_result fabscope &&
	"$FABSCOPE" --version >expect &&
	test_cmp expect "$VM_OUT/fabscope.log"
'

test_done
