#!/usr/bin/env bash
# bench/coll-bench.sh - fabscope allreduce/alltoall against Open MPI's, same hosts, same run
#
#   bench/coll-bench.sh [-r RATE] [-b MIN] [-e MAX] [-f FACTOR] [-w WARMUP] [-i ITERS] [-L LARGE] [--mpi-only]
#                                                       (run by `make bench`; needs root)
#
# Test bed: 4 hosts of a ci/netns-fabric leaf-spine (-G 4 -H 1 -R 1 -S 2: one NIC per host, each
# host on its own leaf, two spines, ECMP), every link shaped with tbf to RATE (default 500mbit:
# at 1gbit the 2 cores of the CI machine, not the links, bound 4 ranks plus the forwarding),
# so that a host's NIC (RATE each way) is the bottleneck; ci/sshd-netns puts an sshd into each
# host namespace (a management veth from the root namespace).  One rank per host: mpirun runs in
# the root namespace and starts its daemons (orted) over ssh into the 4 sshds (a hostfile of the
# 4 namespaces with slots=1, --map-by node; plm_rsh_agent = a wrapper of `ssh -F <the bed's
# ssh_config>` that gives each host its own TMPDIR, see below); the daemons call back to mpirun
# over the management links (oob_tcp_if_include = their /24) and start the ranks, which
# therefore run inside the host namespaces (checked before measuring: rank i in host i+1).
# The same mpirun placement starts both:
#   Open MPI    bench/mpi-coll (built here with mpicc): MPI_Allreduce (float32 sum, out of
#               place) / MPI_Alltoall measured like nccl-tests, over --mca pml ob1, btl tcp,self,
#               btl_tcp_if_include rail0 (the fabric NIC); twice per op: the tuned component's
#               own choice of algorithm ("default"), and forced to the algorithm fabscope runs
#               by default (coll_tuned_allreduce_algorithm 4 = ring, coll_tuned_alltoall_algorithm
#               2 = pairwise)
#   fabscope    fabscope allreduce|alltoall --root H1:PORT -t tcp ... --json (ranks from
#               OMPI_COMM_WORLD_RANK/SIZE; rank 0 listens on h1's fabric address)
# Sizes MIN..MAX (default 1M..64M) times FACTOR (default 2); per size WARMUP (default 2) untimed
# calls, then ITERS (default 5) timed ones; both tools get the same numbers.  busbw (Gbit/s) =
# algbw * 2(n-1)/n for allreduce, algbw * (n-1)/n for alltoall: in a link-bound run it
# approaches RATE.  Ratios are fabscope / MPI (higher is better for fabscope), against both MPI
# runs.  Also printed: the ring all-reduce's busbw as a fraction of RATE at the largest size
# and at every size from LARGE on (default 16M: at 500mbit such a call moves 24 MB per rank,
# some 0.4 s, so its start and end - pipeline fill and drain - are a few per cent of it), the
# lowest of them, and how busy the machine's CPUs were during each tool's runs (both cores, everything on the
# machine: Open MPI's ranks poll for progress, and 4 ranks + the veth forwarding share the
# cores, so a run can be CPU-bound before it is link-bound; then the fraction is below 1).
# --mpi-only measures Open MPI alone (checks the bed and the MPI side without a fabscope).
#
# Output: the table on stdout and in bench-out/coll-bench.txt; bench-out/coll-bench.json (one
# object: the bed, every run's records, the comparison rows, the fractions).  Logs of a failed
# run are kept in the scratch folder it names.
# Exit codes: 0 ok (whatever the ratios), 1 a run reported wrong data, 2 usage, 3 environment
# (not root, a tool or the binary missing), 4 a run failed or produced no figure.
set -euo pipefail

prog=coll-bench
synopsis="bench/coll-bench.sh [-r RATE] [-b MIN] [-e MAX] [-f FACTOR] [-w WARMUP] [-i ITERS] [-L LARGE] [--mpi-only]"
. "$(dirname "$0")/lib.sh"
fabric=$srcdir/ci/netns-fabric
sshd_bed=$srcdir/ci/sshd-netns
RATE=500mbit MIN=1M MAX=64M FACTOR=2 WARMUP=2 ITERS=5 LARGE=16M mpi_only=0
size_re='^[1-9][0-9]*[KMG]?$'
while (($#)); do
	case $1 in
	-r) [[ ${2:-} =~ ^[1-9][0-9]*(k|m|g)bit$ ]] || usage "-r needs a rate such as 500mbit or 1gbit"; RATE=$2; shift ;;
	-b) [[ ${2:-} =~ $size_re ]] || usage "-b needs a size such as 1M"; MIN=$2; shift ;;
	-e) [[ ${2:-} =~ $size_re ]] || usage "-e needs a size such as 64M"; MAX=$2; shift ;;
	-f) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] && (($2 >= 2)) || usage "-f needs a factor of 2 or more"; FACTOR=$2; shift ;;
	-w) [[ ${2:-} =~ ^[0-9]+$ ]] || usage "-w needs a number of warm-up iterations"; WARMUP=$2; shift ;;
	-i) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage "-i needs a number of iterations (1 or more)"; ITERS=$2; shift ;;
	-L) [[ ${2:-} =~ $size_re ]] || usage "-L needs a size such as 16M"; LARGE=$2; shift ;;
	--mpi-only) mpi_only=1 ;;
	-h | --help) bench_help ;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done

bytes() { # 64M -> 67108864
	local v=$1 m=1
	case $v in
	*K) m=1024 ;; *M) m=$((1024 * 1024)) ;; *G) m=$((1024 * 1024 * 1024)) ;;
	esac
	echo $((${v%[KMG]} * m))
}
min_b=$(bytes "$MIN") max_b=$(bytes "$MAX") large_b=$(bytes "$LARGE")
((min_b <= max_b)) || usage "-b $MIN is larger than -e $MAX"
((max_b <= 1024 * 1024 * 1024)) || usage "-e $MAX: at most 1G (two buffers of it per rank, 4 ranks on this host)"
rate_bps=${RATE%bit}
case $rate_bps in
*k) rate_bps=$((${rate_bps%k} * 1000)) ;; *m) rate_bps=$((${rate_bps%m} * 1000000)) ;; *g) rate_bps=$((${rate_bps%g} * 1000000000)) ;;
esac

((EUID == 0)) || envfail "must run as root (it builds network namespaces and sshds): sudo make bench"
for tool in mpicc mpirun ssh ssh-keygen jq ip tc timeout pkg-config; do
	command -v $tool >/dev/null 2>&1 || envfail "'$tool' not found: run ci/install-deps bench (as root)"
done
[[ -x /usr/sbin/sshd ]] || envfail "no /usr/sbin/sshd: run ci/install-deps bench (openssh-server)"
echo '#include <mpi.h>' | mpicc -E -x c - >/dev/null 2>&1 ||
	envfail "mpicc cannot find mpi.h: run ci/install-deps bench (libopenmpi-dev)"
pkg-config --exists jansson || envfail "jansson's pkg-config file is missing: run ci/install-deps bench (libjansson-dev)"
if ((!mpi_only)); then
	[[ -x $FABSCOPE ]] || envfail "no fabscope binary at $FABSCOPE: run make (or use --mpi-only)"
	"$FABSCOPE" allreduce --help >/dev/null 2>&1 && "$FABSCOPE" alltoall --help >/dev/null 2>&1 ||
		envfail "$FABSCOPE has no allreduce/alltoall command: run make (or use --mpi-only)"
fi

pfx=cb$$
out_dir=$srcdir/bench-out
work=$(mktemp -d /tmp/fabscope-coll-bench.XXXXXX)
sshd_dir=$work/sshd
main_pid=$BASHPID
bed_up=0

cleanup() {
	local rc=$?
	[[ $BASHPID == "$main_pid" ]] || return 0
	if ((bed_up)); then
		"$sshd_bed" down -p "${pfx}s" -d "$sshd_dir" >/dev/null 2>&1 || true
		"$fabric" down -p "$pfx" >/dev/null 2>&1 || true
	fi
	if ((rc)); then
		echo "$prog: outputs and logs kept in $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- mpi-coll
# shellcheck disable=SC2046 # pkg-config's flags are words
mpicc -Wall -Wextra -O2 -o "$work/mpi-coll" "$srcdir/bench/mpi-coll.c" \
	$(pkg-config --cflags --libs jansson) 2>"$work/mpicc.log" ||
	{ cat "$work/mpicc.log" >&2; fail "mpicc could not build bench/mpi-coll.c"; }

# ---- the bed
bed_up=1
"$fabric" up -p "$pfx" -G 4 -H 1 -R 1 -S 2 -r "$RATE" >"$work/fabric.log" 2>&1 || {
	rc=$?
	((rc == 3)) && envfail "no fabric test bed here: $(tail -n 1 "$work/fabric.log")"
	cat "$work/fabric.log" >&2
	fail "ci/netns-fabric up failed"
}
hosts=(h1 h2 h3 h4)
host_ns=("${hosts[@]/#/$pfx-}")
"$sshd_bed" up -p "${pfx}s" -d "$sshd_dir" --in "$(IFS=,; echo "${host_ns[*]}")" >"$work/sshd.log" 2>&1 || {
	rc=$?
	((rc == 3)) && envfail "no sshd test bed here: $(tail -n 1 "$work/sshd.log")"
	cat "$work/sshd.log" >&2
	fail "ci/sshd-netns up failed"
}
ssh_config=$("$sshd_bed" config -p "${pfx}s" -d "$sshd_dir")
# the management /24 the sshds sit on (HostName 10.250.K.x): mpirun's daemons talk over it
mgmt_net=$(awk '$1 == "HostName" { split($2, a, "."); print a[1] "." a[2] "." a[3] ".0/24"; exit }' "$ssh_config")
[[ $mgmt_net =~ ^10\.250\.[0-9]+\.0/24$ ]] || fail "cannot read the management network from $ssh_config"
eval "$("$fabric" info -p "$pfx" | grep -E '^H1_RAIL0=')"
root_ip=$H1_RAIL0
printf '%s slots=1\n' "${host_ns[@]}" >"$work/hostfile"

# mpirun's ssh: the namespaces share the machine's host name and /tmp, so every orted would take
# the same session directory (/tmp/ompi.HOSTNAME.0/...) and write the same hwloc.sm and PMIx
# files in it at once (seen: an orted crashing in hwloc_shmem_topology_write).  This wrapper
# gives each host a TMPDIR of its own, under which its orted and ranks keep their session
# directory; PMIx keeps its job data in its hash store, not in shared-memory files.
{
	echo '#!/bin/sh'
	echo '# plm_rsh_agent of coll-bench: ssh HOST CMD... into a host namespace, with its own TMPDIR'
	echo 'host=$1'
	echo 'shift'
	printf 'exec ssh -F %q "$host" "TMPDIR=%q/tmp-$host; export TMPDIR; mkdir -p \\$TMPDIR; PMIX_MCA_gds=hash; export PMIX_MCA_gds;" "$@"\n' \
		"$ssh_config" "$work"
} >"$work/ssh-ns"
chmod +x "$work/ssh-ns"

# the placement, shared by every run: one rank per host namespace
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PMIX_MCA_gds=hash
mpirun_base=(mpirun --allow-run-as-root --hostfile "$work/hostfile" -n ${#hosts[@]} --map-by node
	--mca plm_rsh_agent "$work/ssh-ns" --mca oob_tcp_if_include "$mgmt_net"
	--mca rtc_hwloc_vmhole none)
mpi_mca=(--mca pml ob1 --mca btl "tcp,self" --mca btl_tcp_if_include rail0)

# check the placement first: rank i must run in host i+1's namespace
timeout 60 "${mpirun_base[@]}" sh -c 'echo "$OMPI_COMM_WORLD_RANK $(ip netns identify)"' </dev/null \
	>"$work/placement.out" 2>"$work/placement.err" ||
	{ tail -n 5 "$work/placement.err" >&2; fail "mpirun could not start a rank in every host namespace over ssh"; }
placement=$(sort -n "$work/placement.out" | tr '\n' ' ')
[[ $placement == "0 $pfx-h1 1 $pfx-h2 2 $pfx-h3 3 $pfx-h4 " ]] ||
	fail "mpirun placed the ranks wrongly: '$placement' (want rank i in $pfx-h(i+1))"

# a run's time limit: its bytes at a tenth of RATE, plus start-up
sum_b=0
for ((s = min_b; s <= max_b; s *= FACTOR)); do sum_b=$((sum_b + s)); done
run_limit=$((sum_b * (WARMUP + ITERS + 1) * 2 * 8 * 10 / rate_bps + 60))

cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }

# run NAME CMD...: CMD's stdout in $work/NAME.out; sets run_rc, run_s, run_cpu (busy fraction)
run() {
	local name=$1 b0 t0 b1 t1 s0 s1
	shift
	read -r b0 t0 < <(cpu_ticks)
	s0=$(date +%s.%N)
	echo "$prog: $name" >&2
	run_rc=0
	timeout "$run_limit" "$@" </dev/null >"$work/$name.out" 2>"$work/$name.err" || run_rc=$?
	if ((run_rc)); then
		echo "$prog: $name exited with $run_rc$( ((run_rc == 124)) && echo " (timed out after $run_limit s)"); its last lines:" >&2
		tail -n 5 "$work/$name.err" | sed 's/^/  /' >&2
	fi
	s1=$(date +%s.%N)
	read -r b1 t1 < <(cpu_ticks)
	run_s=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.1f", b - a }')
	run_cpu=$(awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) 'BEGIN { printf "%.2f", (t > 0 ? b / t : 0) }')
}

runs=$work/runs.jsonl
: >"$runs"
failed=0
# add_run TOOL OP ALG NAME MCA-TEXT: one object in runs.jsonl from $work/NAME.out (records
# normalised to mpi-coll's shape: size, count, ranks, time_us, algbw_gbps, busbw_gbps, wrong).
# A run that exits non-zero keeps what it printed; it counts as failed unless its records
# show wrong elements (fabscope exits 1 on wrong data: that is reported as wrong, exit 1).
add_run() {
	local tool=$1 op=$2 alg=$3 name=$4 mca=$5 recs status=ok
	if [[ $tool == mpi ]]; then
		recs=$(jq -cs '.' "$work/$name.out" 2>/dev/null) || recs=""
	else
		recs=$(jq -c '[.[] | {size: .msg_size_bytes, count: (.count // .metrics.count // null),
			ranks: (.ranks // .metrics.ranks // null), time_us: .metrics.time_us,
			algbw_gbps: .metrics.algbw_gbps, busbw_gbps: .metrics.busbw_gbps,
			wrong: .metrics.wrong, algo: .algo, rank_ips: [.endpoints[]?.ip]}]' \
			"$work/$name.out" 2>/dev/null) || recs=""
		# the algorithm fabscope says it ran, when it says
		alg=$(jq -r 'first(.[].algo | strings) // empty' <<<"$recs" 2>/dev/null) || true
		alg=${alg:-$3}
	fi
	if [[ -z $recs ]] || ! jq -e 'length > 0 and all(.[]; (.busbw_gbps | type) == "number")' \
		<<<"$recs" >/dev/null 2>&1; then
		((run_rc)) || echo "$prog: $name: no records in its output ($work/$name.out)" >&2
		recs='[]' status="no records"
		failed=1
	fi
	if ((run_rc)); then
		status="exit $run_rc"
		jq -e 'any(.[]; (.wrong // 0) > 0)' <<<"$recs" >/dev/null || failed=1
	fi
	jq -cn --arg tool "$tool" --arg op "$op" --arg alg "$alg" --arg mca "$mca" --arg status "$status" \
		--argjson s "$run_s" --argjson cpu "$run_cpu" --argjson recs "$recs" \
		'{tool: $tool, op: $op, algorithm: $alg, mca: $mca, status: $status, seconds: $s,
		  cpu_busy: $cpu, records: $recs}' >>"$runs"
}

mpi_run() { # OP ALG-NAME ALG-NUMBER (0: the tuned component's choice)
	local op=$1 alg=$2 num=$3 extra=()
	((num)) && extra=(--mca coll_tuned_use_dynamic_rules 1 --mca "coll_tuned_${op}_algorithm" "$num")
	run "mpi-$op-$alg" "${mpirun_base[@]}" "${mpi_mca[@]}" "${extra[@]}" "$work/mpi-coll" "$op" \
		-b "$MIN" -e "$MAX" -f "$FACTOR" -w "$WARMUP" -i "$ITERS"
	add_run mpi "$op" "$alg" "mpi-$op-$alg" "${mpi_mca[*]}${extra[*]:+ ${extra[*]}}"
}

fs_run() { # OP ALG-NAME (fabscope's default algorithm, for the record)
	local op=$1 port=18540
	[[ $op == alltoall ]] && port=18541
	run "fabscope-$op" "${mpirun_base[@]}" "$FABSCOPE" "$op" --root "$root_ip:$port" -t tcp \
		-b "$MIN" -e "$MAX" -f "$FACTOR" --warmup "$WARMUP" --iters "$ITERS" --json
	add_run fabscope "$op" "$2" "fabscope-$op" ""
}

load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "$prog: 4 hosts, one rank each, every link $RATE; sizes $MIN..$MAX x$FACTOR, warm-up $WARMUP, $ITERS timed; load average $load" >&2
mpi_run allreduce default 0
mpi_run allreduce ring 4
((mpi_only)) || fs_run allreduce ring
mpi_run alltoall default 0
mpi_run alltoall pairwise 2
((mpi_only)) || fs_run alltoall pairwise

# ---- the table and the JSON
mkdir -p "$out_dir"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
version=null
((mpi_only)) || version=$("$FABSCOPE" version 2>/dev/null | head -n 1 | jq -R .) || version=null
[[ -n $version ]] || version=null
ompi=$(mpirun --version 2>/dev/null | sed -n '1s/.*) //p')

jq -s --arg time "$now" --argjson version "$version" --arg ompi "$ompi" --arg rate "$RATE" \
	--argjson bps "$rate_bps" --argjson w "$WARMUP" --argjson i "$ITERS" --argjson cpus "$(nproc)" \
	--argjson large "$large_b" --arg load "$load" --arg placement "${mpirun_base[*]//$work/\$WORK}" '
	def busbw(tool; op; alg; size): first(.[] | select(.tool == tool and .op == op and
		(tool == "fabscope" or .algorithm == alg)) | .records[] | select(.size == size) | .busbw_gbps) // null;
	def ratio(a; b): if a == null or b == null or b == 0 then null else a / b end;
	. as $runs
	| ($runs | map(select(.tool == "fabscope")) | map({(.op): .algorithm}) | add // {}) as $fsalg
	| {bench: "coll-bench", time: $time, fabscope_version: $version, openmpi_version: $ompi,
	   testbed: {hosts: 4, ranks_per_host: 1, topology: "ci/netns-fabric -G 4 -H 1 -R 1 -S 2 (a leaf per host, 2 spines, ECMP)",
		     rate: $rate, rate_gbps: ($bps / 1e9), transport: "tcp", cpus: $cpus, load_average_before: $load,
		     placement: $placement},
	   warmup: $w, iters: $i, runs: $runs,
	   comparison: [
		($runs | map(.op) | unique[]) as $op
		| (if $op == "allreduce" then "ring" else "pairwise" end) as $alg
		| ($runs | map(select(.op == $op)) | map(.records[].size) | unique[]) as $size
		| {op: $op, size: $size, mpi_alg: $alg, fabscope_alg: ($fsalg[$op] // null),
		   mpi_default_busbw_gbps: ($runs | busbw("mpi"; $op; "default"; $size)),
		   mpi_alg_busbw_gbps: ($runs | busbw("mpi"; $op; $alg; $size)),
		   fabscope_busbw_gbps: ($runs | busbw("fabscope"; $op; $alg; $size))}
		| .fabscope_over_mpi_default = ratio(.fabscope_busbw_gbps; .mpi_default_busbw_gbps)
		| .fabscope_over_mpi_alg = ratio(.fabscope_busbw_gbps; .mpi_alg_busbw_gbps)],
	   wrong: ([$runs[].records[].wrong // 0] | add // 0)}
	| .link_fraction = (
		([.comparison[] | select(.op == "allreduce")] | max_by(.size)) as $c
		| if $c == null then null else
		  {op: "allreduce", size: $c.size, rate_gbps: ($bps / 1e9),
		   mpi_ring: ratio($c.mpi_alg_busbw_gbps; $bps / 1e9),
		   mpi_default: ratio($c.mpi_default_busbw_gbps; $bps / 1e9),
		   fabscope_ring: ratio($c.fabscope_busbw_gbps; $bps / 1e9)} end)
	| .large_fractions = [.comparison[] | select(.op == "allreduce" and .size >= $large)
		| {size, mpi_ring: ratio(.mpi_alg_busbw_gbps; $bps / 1e9),
		   fabscope_ring: ratio(.fabscope_busbw_gbps; $bps / 1e9)}]
	' "$runs" >"$work/coll-bench.json" || fail "cannot put the results together (jq failed)"
cp "$work/coll-bench.json" "$out_dir/coll-bench.json"

# the text: every figure below comes from coll-bench.json
{
	echo "$prog: 4 netns hosts, 1 rank each, every link tbf $RATE; Open MPI $ompi (ob1, btl tcp) vs fabscope -t tcp"
	echo "$prog: busbw in Gbit/s, warm-up $WARMUP + $ITERS timed calls per size; ratio = fabscope / MPI (higher is better for fabscope)"
	jq -r '
		def f: if . == null then "n/a" else tostring end;
		def sz: if . >= 1073741824 and . % 1073741824 == 0 then "\(. / 1073741824)G"
			elif . >= 1048576 and . % 1048576 == 0 then "\(. / 1048576)M"
			elif . >= 1024 and . % 1024 == 0 then "\(. / 1024)K" else tostring end;
		(.comparison | group_by(.op)[]) as $rows
		| ($rows[0].mpi_alg) as $alg
		| "",
		  ([$rows[0].op, "size", "MPI default", "MPI \($alg)", "fabscope \($rows[0].fabscope_alg // "")",
		    "fs/MPI-def", "fs/MPI-\($alg)"] | @tsv),
		  ($rows[] | [.op, (.size | sz), (.mpi_default_busbw_gbps | f), (.mpi_alg_busbw_gbps | f),
			      (.fabscope_busbw_gbps | f), (.fabscope_over_mpi_default | f), (.fabscope_over_mpi_alg | f)]
		   | @tsv)' "$out_dir/coll-bench.json" |
		awk -F'\t' '
		function num(v, d) { return v ~ /^[0-9.e+-]+$/ ? sprintf("%." d "f", v) : v }
		NF { printf "%-10s %5s %12s %13s %17s %11s %15s\n", $1, $2, num($3, 3), num($4, 3), num($5, 3),
			num($6, 2), num($7, 2); next }
		{ print }'
	echo
	jq -r '
		def f: if . == null then "n/a" else . * 100 | round | "\(.)%" end;
		(.link_fraction | select(. != null)
		 | "ring all-reduce busbw at \(.size / 1048576 * 1000 | round / 1000)M / link rate \(.rate_gbps) Gbit/s: MPI ring \(.mpi_ring | f), fabscope ring \(.fabscope_ring | f) (MPI default: \(.mpi_default | f))"),
		(select(.large_fractions | length > 0)
		 | "ring all-reduce busbw / link rate at every size from \(.large_fractions[0].size / 1048576 * 1000 | round / 1000)M: " +
		   ([.large_fractions[] | "\(.size / 1048576 * 1000 | round / 1000)M \(.fabscope_ring | f)"] | join(", ")) +
		   "; lowest \([.large_fractions[].fabscope_ring // 0] | min | f) (MPI ring: lowest \([.large_fractions[].mpi_ring // 0] | min | f))"),
		"CPU busy during the runs (all \(.testbed.cpus) CPUs, whole machine): " +
		([.runs[] | "\(.tool) \(.op) \(.algorithm) \(.cpu_busy * 100 | round)%"] | join(", ")),
		"load average before: \(.testbed.load_average_before); wrong elements: \(.wrong)",
		(first(.runs[] | select(.tool == "fabscope") | .records[0].rank_ips | select(length > 0))
		 | "fabscope ranks 0..\(length - 1) on \(join(", "))"),
		(.runs[] | select(.status != "ok") | "RUN FAILED: \(.tool) \(.op) \(.algorithm): \(.status)")
		' "$out_dir/coll-bench.json"
	echo "$prog: records in bench-out/coll-bench.json"
} | tee "$out_dir/coll-bench.txt"

((failed)) && fail "a run failed (logs in $work)"
wrong=$(jq '.wrong' "$out_dir/coll-bench.json")
if ((wrong > 0)); then
	echo "$prog: $wrong wrong elements reported (see bench-out/coll-bench.json)" >&2
	exit 1
fi
exit 0
