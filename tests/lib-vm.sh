# tests/lib-vm.sh - tests that run in ci/rxe-vm's Soft-RoCE VM (source it after test-lib.sh)
#
# The VM (ci/rxe-vm --help) boots Debian's kernel under qemu TCG with the host's root filesystem
# read-only, so the freshly built fabscope runs there unchanged, with real verbs on rxe devices:
# node I is rxeI on netdev nI with 10.1.0.I, the nodes bridged by br0.  A boot costs 5-20 s and
# CI has 2 cores, so boot ONCE per test file: one guest script runs every check and leaves its
# results in $RXE_VM_OUT, and the host's tests assert on them after the VM is gone:
#
#	. "$TEST_DIRECTORY/lib-vm.sh"
#	test_require_in_ci VM
#	test_expect_success VM 'boot a 2-node VM and run the guest checks' '
#		vm_script -n 2 - <<-\EOF
#		vm_check devices ibv_devices
#		vm_spawn /tmp/server.log "$FABSCOPE" ... -d rxe1 ...
#		vm_check -t 30 client "$FABSCOPE" ... -d rxe2 ... 10.1.0.1
#		vm_reap $vm_pid; vm_save /tmp/server.log
#		EOF
#	'
#	test_expect_success VM 'the client ran' 'vm_result client && test_grep ... "$VM_OUT/client.log"'
#
# The guest script is bash, runs in the trash directory (but its writes there stay in the guest:
# write results to $RXE_VM_OUT, big ones to /tmp first and vm_save them) with ci/rxe-vm-lib.sh
# sourced (vm_check, vm_note, vm_gid_index, vm_spawn, vm_reap, vm_wait_tcp, vm_retry,
# vm_capture_start/stop, vm_save: see that file), and with FABSCOPE, TEST_TOOL, SRCDIR,
# TEST_DIRECTORY, TRASH_DIRECTORY, LC_ALL, TZ (and ASAN_OPTIONS, UBSAN_OPTIONS when set: `make
# test-asan` runs the ASan build in the guest too) as on the host, plus FABSCOPE_VM=1,
# RXE_VM_NODES, RXE_VM_GID_INDEX (RoCE v2 IPv4 GID index, 1 on Debian 12's kernel), RXE_VM_OUT.
#
# Prerequisite VM: `ci/rxe-vm --check` passes (qemu, a static busybox, kmod; the kernel cached or
# fetchable).  Root is not needed.  ci/install-deps vm (or all) installs what it wants.
#
#	RXE_VM                 the script (env RXE_VM overrides: $SRCDIR/ci/rxe-vm)
#	VM_OUT                 $TRASH_DIRECTORY/vm-out: what the guest left in $RXE_VM_OUT
#	VM_LOG                 $TRASH_DIRECTORY/vm.log: the last vm_script's stdout and stderr
#	vm_rc                  the last vm_script's exit status
#	vm_run [OPTS] [--] CMD [ARG...]   ci/rxe-vm itself: output and exit status pass through
#	vm_script [OPTS] FILE|- [ARG...]  one boot running FILE (- = stdin) as above; OPTS are
#	                       ci/rxe-vm's (-n, -t, -m, --mtu, -e, -v; default -t 300); VM_OUT is
#	                       emptied first; returns the script's status; output into VM_LOG, whose
#	                       last lines go to stderr when the status is not 0
#	vm_result NAME         the guest's vm_check NAME passed; else says what happened, with its log
#	vm_note_value NAME     prints what the guest's vm_note NAME recorded (fails if nothing)
#	vm_results_as_tests [PREREQS]   one host test per guest check ("guest check NAME"), for
#	                       checks that need no more than their exit status

RXE_VM=${RXE_VM:-$SRCDIR/ci/rxe-vm}
VM_OUT=$TRASH_DIRECTORY/vm-out
VM_LOG=$TRASH_DIRECTORY/vm.log
vm_rc=""
test_lazy_prereq VM '"$RXE_VM" --check'

vm_run() {
	"$RXE_VM" "$@"
}

vm_script() {
	local opts=() file="" have_t=0 e
	while (($#)); do
		case $1 in
		-n | -m | -s | -t | -e | --mtu)
			(($# >= 2)) || { echo "vm_script: $1 needs an argument" >&2; return 2; }
			[[ $1 == -t ]] && have_t=1
			opts+=("$1" "$2")
			shift 2 ;;
		-v | --mtu=*) opts+=("$1"); shift ;;
		--) shift; file=${1:-}; shift; break ;;
		-) file=-; shift; break ;;
		-*) echo "vm_script: unknown option '$1'" >&2; return 2 ;;
		*) file=$1; shift; break ;;
		esac
	done
	[[ -n $file ]] || { echo "vm_script: no script given" >&2; return 2; }
	if [[ $file == - ]]; then
		file=$TRASH_DIRECTORY/vm-script.sh
		cat >"$file" || return 2
	fi
	[[ -f $file ]] || { echo "vm_script: no script '$file'" >&2; return 2; }
	case $file in /*) ;; *) file=$PWD/$file ;; esac
	((have_t)) || opts+=(-t 300)
	for e in FABSCOPE TEST_TOOL SRCDIR TEST_DIRECTORY TRASH_DIRECTORY LC_ALL TZ ASAN_OPTIONS UBSAN_OPTIONS \
		FABSCOPE_TEST_TIER; do
		[[ -n ${!e+set} ]] && opts+=(-e "$e=${!e}")
	done
	rm -rf "$VM_OUT" && mkdir -p "$VM_OUT" || return 2
	"$RXE_VM" "${opts[@]}" -o "$VM_OUT" -- \
		bash -c 'f=$1; shift; . "$RXE_VM_LIB" || exit 125; . "$f"' vm-script "$file" "$@" >"$VM_LOG" 2>&1
	vm_rc=$?
	if ((vm_rc != 0)); then
		echo "vm_script: exit status $vm_rc; the last lines of $VM_LOG:" >&2
		tail -n 20 "$VM_LOG" | sed 's/^/  /' >&2
	fi
	return "$vm_rc"
}

vm_result() {
	local name=$1 line
	if [[ ! -f $VM_OUT/checks ]]; then
		echo "vm_result: the guest recorded no checks (no $VM_OUT/checks: did the VM boot? vm_rc=$vm_rc)" >&2
		[[ -f $VM_LOG ]] && tail -n 20 "$VM_LOG" | sed 's/^/  /' >&2
		return 1
	fi
	line=$(grep -E "^(not )?ok $name( |$)" "$VM_OUT/checks" | tail -n 1)
	case $line in
	"ok $name"*) return 0 ;;
	"") echo "vm_result: the guest did not run check '$name'; it ran: $(awk '{ print ($1 == "not" ? $3 : $2) }' "$VM_OUT/checks" | tr '\n' ' ')" >&2 ;;
	*) echo "vm_result: guest check failed: $line" >&2 ;;
	esac
	if [[ -f $VM_OUT/$name.log ]]; then
		echo "its output ($VM_OUT/$name.log):" >&2
		tail -n 40 "$VM_OUT/$name.log" | sed 's/^/  /' >&2
	fi
	return 1
}

vm_note_value() {
	local v
	v=$(awk -v n="$1" '$1 == n { sub(/^[^ ]+ ?/, ""); v = $0; found = 1 } END { if (found) print v; exit !found }' \
		"$VM_OUT/notes" 2>/dev/null) || { echo "vm_note_value: the guest noted no '$1'" >&2; return 1; }
	printf '%s\n' "$v"
}

vm_results_as_tests() {
	local prereq=${1:-} name
	if [[ ! -f $VM_OUT/checks ]]; then
		test_expect_success "$prereq" 'the guest recorded its checks' 'vm_result __none__'
		return
	fi
	for name in $(awk '{ print ($1 == "not" ? $3 : $2) }' "$VM_OUT/checks"); do
		test_expect_success "$prereq" "guest check $name" "vm_result $name"
	done
}
