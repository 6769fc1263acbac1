# lib-pfc.sh - counter fixture trees laid out like a real mlx5 host, for tests of the PFC
# counter layer and `fabscope probe pfc` (source after test-lib.sh).
#
#	mlx5 ROOT              PCI function, netdev eth2 (100 Gb/s), RDMA device mlx5_0 port 1,
#	                       driver links, counter folders with mlx5_ib's other counters
#	eth ROOT NAME=VALUE... ROOT/ethtool/eth2 as `ethtool -S eth2` prints it
#	hw ROOT NAME=VALUE...  files of mlx5_0 port 1 hw_counters

# mlx5 ROOT: an mlx5 port as sysfs shows it: PCI function 0000:3b:00.0 bound to mlx5_core,
# netdev eth2 (100 Gb/s), RDMA device mlx5_0 port 1 carrying eth2, counter folders, and the
# ethtool fixture ROOT/ethtool/eth2
mlx5() {
	local r=$1 pci=$1/sys/devices/pci0000:00/0000:3b:00.0
	local port=$pci/infiniband/mlx5_0/ports/1 f
	mkdir -p "$pci/net/eth2" "$port/hw_counters" "$port/counters" "$port/gid_attrs/ndevs" \
		"$r/sys/bus/pci/drivers/mlx5_core" "$r/sys/class/net" "$r/sys/class/infiniband" \
		"$r/ethtool" &&
	ln -s ../../../bus/pci/drivers/mlx5_core "$pci/driver" &&
	ln -s ../../../0000:3b:00.0 "$pci/net/eth2/device" &&
	ln -s ../../../0000:3b:00.0 "$pci/infiniband/mlx5_0/device" &&
	ln -s ../../devices/pci0000:00/0000:3b:00.0/net/eth2 "$r/sys/class/net/eth2" &&
	ln -s ../../devices/pci0000:00/0000:3b:00.0/infiniband/mlx5_0 "$r/sys/class/infiniband/mlx5_0" &&
	echo 100000 >"$pci/net/eth2/speed" &&
	echo eth2 >"$port/gid_attrs/ndevs/0" &&
	# the counters mlx5_ib has besides those the map knows, and its lifespan knob
	for f in rx_write_requests rx_read_requests rx_atomic_requests out_of_buffer \
		duplicate_request rnr_nak_retry_err implied_nak_seq_err local_ack_timeout_err \
		rp_cnp_ignored rx_icrc_encapsulated roce_adp_retrans req_cqe_error lifespan; do
		echo 7 >"$port/hw_counters/$f" || return 1
	done &&
	for f in port_rcv_data port_xmit_data port_rcv_packets port_xmit_packets port_rcv_errors \
		symbol_error link_downed; do
		echo 123456 >"$port/counters/$f" || return 1
	done &&
	hw "$r" np_ecn_marked_roce_packets=0 np_cnp_sent=0 rp_cnp_handled=0 out_of_sequence=0 \
		packet_seq_err=0 &&
	echo 0 >"$port/counters/port_xmit_wait" &&
	echo 0 >"$port/counters/port_xmit_discards"
}

# eth ROOT NAME=VALUE...: ROOT/ethtool/eth2 as `ethtool -S eth2` prints it, with names of an
# mlx5 port that no map knows around the ones given, some close to known ones
eth() {
	local r=$1 kv
	shift
	{
		echo "NIC statistics:"
		echo "     rx_packets: 881726"
		echo "     ch0_poll: 4410"
		echo "     rx_prio3_bytes: 99123"
		echo "     rx_prio3_pause_transition: 77"
		echo "     rx_prio9_pause: 5"
		echo "     rx_prio33_pause: 6"
		echo "     tx_prio3_pause_duration_max: 8"
		echo "     rx_pause_ctrl_phy: 9"
		for kv; do
			echo "     ${kv%%=*}: ${kv#*=}"
		done
		echo "     tx_pci_signal_integrity: 0"
	} >"$r/ethtool/eth2"
}

# hw ROOT NAME=VALUE...: files of mlx5_0 port 1 hw_counters
hw() {
	local r=$1 kv
	shift
	for kv; do
		echo "${kv#*=}" >"$r/sys/class/infiniband/mlx5_0/ports/1/hw_counters/${kv%%=*}" || return 1
	done
}
