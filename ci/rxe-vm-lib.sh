# shellcheck shell=bash
# ci/rxe-vm-lib.sh - helpers for bash scripts that run inside ci/rxe-vm's guest (source it there:
# `. "$RXE_VM_LIB"`; tests/lib-vm.sh's vm_script does that for you).  Not for the host.
#
# The pattern: one VM boot per test file.  The guest script runs many checks, each recorded in
# $RXE_VM_OUT/checks (one line each: "ok NAME MS" or "not ok NAME MS rc=RC") with its output in
# $RXE_VM_OUT/NAME.log; the host's test file asserts on those (vm_result NAME) after the VM is gone.
#
#	vm_check [-t SECONDS] NAME CMD [ARG...]
#	                      run CMD (a program or a function of the script, in a subshell; default
#	                      limit 60 s, then 124) with stdout+stderr into NAME.log, record it;
#	                      returns CMD's status.  NAME: [A-Za-z0-9_.-], unique per run
#	vm_note NAME TEXT...  record a value for the host (one line "NAME TEXT" in $RXE_VM_OUT/notes)
#	vm_gid_index DEV [IP] the GID index of DEV's RoCE v2 GID for IPv4 address IP (default: the
#	                      node's own, 10.1.0.I for rxeI); prints it, fails when there is none
#	vm_spawn LOG CMD...   start CMD in the background (stdout+stderr to LOG, stdin /dev/null,
#	                      limited to 120 s or $VM_SPAWN_LIMIT); its PID in $vm_pid
#	vm_reap PID           wait for a vm_spawn'ed PID, return its status (124: it ran out of time)
#	vm_wait_tcp PORT [S]  wait (default 10 s) until something listens on TCP PORT
#	vm_retry N CMD...     run CMD up to N times, 0.5 s apart, until it succeeds (a client that
#	                      may start before its server listens)
#	vm_capture_start IFACE NAME [FILTER...]
#	                      tcpdump on IFACE into /tmp/NAME.pcap (packets in full, FILTER is tcpdump's),
#	                      returns once tcpdump listens; one capture at a time
#	vm_capture_stop       stop it (every packet seen is written: --immediate-mode, SIGINT) and
#	                      copy NAME.pcap and NAME.tcpdump.log into $RXE_VM_OUT
#	vm_kill_tree PID      TERM PID and its descendants (KILL 2 s later)
#	vm_save FILE...       copy files (written to /tmp first: the share is slow) into $RXE_VM_OUT
#
# The fabric (ci/rxe-vm --help): node I is rxeI on netdev nI, 10.1.0.I, bridged by br0;
# $RXE_VM_NODES nodes; $RXE_VM_GID_INDEX the RoCE v2 IPv4 GID index (the same on every node).

: "${RXE_VM_OUT:?ci/rxe-vm-lib.sh is for scripts run by ci/rxe-vm}"
vm_checks_=$RXE_VM_OUT/checks

# Under TCG every program started costs 50-100 ms: the helpers use bash builtins where they can.
vm_ms_() { local t=${EPOCHREALTIME/./}; printf -v "$1" '%d' $((t / 1000)); } # VAR <- now in ms
# sleep without starting /bin/sleep: read with a timeout from a fifo nobody writes
mkfifo "/tmp/.vm-nap.$$" 2>/dev/null
exec {vm_nap_fd_}<>"/tmp/.vm-nap.$$"
vm_nap_() { read -r -t "$1" -u "$vm_nap_fd_"; }

vm_check() {
	local limit=60 name t0 now deadline rc pid log
	if [[ $1 == -t ]]; then
		limit=$2
		shift 2
	fi
	name=$1
	shift
	[[ $name =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "vm_check: bad name '$name'" >&2; return 2; }
	log=/tmp/vm-check.$name.log
	vm_ms_ t0
	# a subshell, so that CMD may be a function of the script (timeout(1) runs programs only)
	("$@") </dev/null >"$log" 2>&1 &
	pid=$!
	deadline=$((t0 + limit * 1000))
	while kill -0 "$pid" 2>/dev/null; do
		vm_ms_ now
		((now < deadline)) || break
		vm_nap_ 0.02
	done
	if kill -0 "$pid" 2>/dev/null; then
		vm_kill_tree "$pid"
		wait "$pid"
		rc=124
		echo "vm_check: $name ran out of time (${limit}s)" >>"$log"
	else
		wait "$pid"
		rc=$?
	fi
	cp "$log" "$RXE_VM_OUT/$name.log"
	vm_ms_ now
	if ((rc == 0)); then
		echo "ok $name $((now - t0))" >>"$vm_checks_"
		echo "vm_check: ok $name"
	else
		echo "not ok $name $((now - t0)) rc=$rc" >>"$vm_checks_"
		echo "vm_check: not ok $name (rc=$rc)"
	fi
	return "$rc"
}

vm_kill_tree() { # PID: TERM it and all its descendants, KILL what is left 2 s later
	local pids=("$1") i=0 p n
	while ((i < ${#pids[@]})); do # breadth-first over the children
		for p in $(ps -o pid= --ppid "${pids[i]}" 2>/dev/null); do pids+=("$p"); done
		i=$((i + 1))
	done
	kill -TERM "${pids[@]}" 2>/dev/null
	for ((n = 0; n < 20; n++)); do
		kill -0 "${pids[@]}" 2>/dev/null || return 0
		vm_nap_ 0.1
	done
	kill -KILL "${pids[@]}" 2>/dev/null
	return 0
}

vm_note() {
	local name=$1
	shift
	echo "$name $*" >>"$RXE_VM_OUT/notes"
}

vm_gid_index() {
	local dev=$1 ip=${2:-} want f type
	[[ -n $ip ]] || ip=10.1.0.${dev#rxe}
	printf -v want '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${ip//./ } || return 1
	# one grep over the table (1024 entries on rxe) instead of a bash loop
	for f in $(grep -lx "$want" /sys/class/infiniband/"$dev"/ports/1/gids/* 2>/dev/null); do
		read -r type <"/sys/class/infiniband/$dev/ports/1/gid_attrs/types/${f##*/}" 2>/dev/null &&
			[[ $type == "RoCE v2" ]] || continue
		echo "${f##*/}"
		return 0
	done
	echo "vm_gid_index: $dev has no RoCE v2 GID for $ip" >&2
	return 1
}

vm_spawn() {
	local log=$1
	shift
	timeout -k 3 "${VM_SPAWN_LIMIT:-120}" "$@" </dev/null >"$log" 2>&1 &
	vm_pid=$!
}

vm_reap() { wait "$1"; }

vm_wait_tcp() {
	local port=$1 tries=$((${2:-10} * 10))
	while ((tries-- > 0)); do
		[[ -n $(ss -Htln "sport = :$port" 2>/dev/null) ]] && return 0
		vm_nap_ 0.1
	done
	echo "vm_wait_tcp: nothing listens on TCP port $port" >&2
	return 1
}

vm_retry() {
	local n=$1 i
	shift
	for ((i = 1; i <= n; i++)); do
		"$@" && return 0
		((i < n)) && vm_nap_ 0.5
	done
	return 1
}

vm_capture_start() {
	local iface=$1 name=$2 i line
	shift 2
	vm_cap_name_=$name
	tcpdump -i "$iface" -n --immediate-mode -U -w "/tmp/$name.pcap" "$@" >"/tmp/$name.tcpdump.log" 2>&1 &
	vm_cap_pid_=$!
	for ((i = 0; i < 200; i++)); do # "listening on IFACE" once the capture is live
		[[ -f /tmp/$name.tcpdump.log ]] && while read -r line; do
			[[ $line == *"listening on"* ]] && return 0
		done <"/tmp/$name.tcpdump.log"
		kill -0 "$vm_cap_pid_" 2>/dev/null || break
		vm_nap_ 0.05
	done
	echo "vm_capture_start: tcpdump on $iface did not start:" >&2
	cat "/tmp/$name.tcpdump.log" >&2
	return 1
}

vm_capture_stop() {
	local rc
	[[ -n ${vm_cap_pid_:-} ]] || { echo "vm_capture_stop: no capture running" >&2; return 1; }
	kill -INT "$vm_cap_pid_" 2>/dev/null
	wait "$vm_cap_pid_"
	rc=$?
	vm_cap_pid_=""
	cp "/tmp/$vm_cap_name_.pcap" "/tmp/$vm_cap_name_.tcpdump.log" "$RXE_VM_OUT/" || return 1
	((rc == 0 || rc == 130)) # tcpdump stopped by SIGINT exits 0
}

vm_save() { cp "$@" "$RXE_VM_OUT/"; }
