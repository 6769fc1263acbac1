# tests/lib-monitor.sh - `fabscope monitor` agents in the hosts of the netns fabric, and a real
# Prometheus server scraping them (source after test-lib.sh and lib-fabric.sh; set FABRIC and PFX)
#
#	mon_bed FABRIC-UP-ARGS...      build the fabric (fab up), its hostfile as ./peers.hosts (the
#	                               agents' --peers), ./info; the fabric is removed at exit
#	mon_agents [OPTS...]           start an agent in every host (--node hI, --listen on its rail-0
#	                               address, port $MON_HTTP_PORT, OPTS added: e.g. --timeout 5),
#	                               each killed by PID at exit, and wait for every /healthz;
#	                               MON_AGENT_OPTS_hI adds options to one host's agent only
#	mon_prom [RULES...]            a Prometheus server in host $MON_PROM_NODE (default h1), its
#	                               config and data in ./prom (scrape every second, every agent a
#	                               target, the rule files RULES loaded), on 127.0.0.1:$MON_PROM_PORT
#	                               there, killed by PID at exit; waits until every target is up;
#	                               MON_PROM_EXTRA_TARGET=HOST:PORT scrapes one more (job
#	                               fabscope-verdicts: a node_exporter serving the analyzer's verdicts)
#	mon_query PROMQL               the query's result vector as "LABELS VALUE" lines, sorted
#	                               (LABELS: k=v,... of the series in Prometheus' order, without
#	                               __name__ and the target's instance and job)
#	mon_query_value PROMQL         the one value of a query of one result ("" if none)
#	mon_wait SECONDS CMD...        CMD until it succeeds, once a second (a Prometheus query costs
#	                               processes: test_wait_for's ten a second would take the CPU)
#	mon_value_is PROMQL VALUE      it is VALUE now (for mon_wait)
#	mon_sent_above N               sum(fabscope_probe_sent_total) > N now
#	mon_lost_grown BEFORE          the series whose lost count is above what BEFORE (the output of
#	                               mon_query fabscope_probe_lost_total, earlier) says, sorted LABELS
#	mon_lost_grown_is BEFORE FILE  they are FILE's lines
#	mon_rules_ok                   every rule loaded is healthy and has been evaluated
#	mon_reloads_are NODE RESULT N  NODE's agent says N reloads of RESULT (ok, error)
#	mon_api PATH [CURL-ARGS...]    GET Prometheus' API PATH (/api/v1/...) to stdout
#	mon_metrics NODE               GET NODE's agent's /metrics to stdout
#	mon_loss_on LINK-NODE DEV SPORT[/MASK]   drop the UDP datagrams of source port SPORT (the ports
#	                               that match it under MASK: 49152/0xfffc, 4 ports) that NODE sends out
#	                               of DEV (tc clsact, u32 on the source port, mirred to a veth
#	                               whose peer is down: CI's kernels have no netem and no drop
#	                               action); mon_loss_off LINK-NODE DEV removes it
#	mon_random_loss_on NODE DEV PERCENT   drop PERCENT % (at most 2 decimals) of every packet
#	                               that NODE sends out of DEV, each packet drawn on its own, as
#	                               netem's loss does (ci/loss/loss.bpf.o, a tc BPF program on
#	                               clsact egress: prerequisite LOSS_BPF); mon_random_loss_off NODE
#	                               DEV removes it
#	mon_random_loss_seen NODE DEV  what it did so far: "PACKETS DROPPED" (the clsact counters)
#	mon_path SRC-NODE DST-NODE SPORT   the nodes a probe from SRC's rail-0 to DST's crosses
#	mon_backlog_drops              what the bed's kernels counted as dropped, every place a probe
#	                               can die without the fabric's rule: a CPU's input backlog full
#	                               (/proc/net/softnet_stat's second column, the machine's: a veth
#	                               hands what it sends to it, and a busy machine overflows it), a
#	                               packet waiting for an unresolved neighbour (arp_cache's
#	                               unresolved_discards), and in every namespace of the bed the UDP
#	                               datagrams refused (Udp InErrors: a socket's buffer full; NoPorts),
#	                               the IP layer's discards (InHdrErrors InAddrErrors InDiscards
#	                               OutDiscards OutNoRoutes), each link's rx and tx dropped and each
#	                               qdisc's drops (not the loss rules' own: clsact, monsink): losses
#	                               a probe meets as a fabric's
#
# The agents and Prometheus live in the namespaces the test made: their ports are the
# namespaces' own (nothing on the machine's loopback), the same in every file.

MON_HTTP_PORT=${MON_HTTP_PORT:-9477}
MON_UDP_PORT=${MON_UDP_PORT:-4793}
MON_PROM_PORT=${MON_PROM_PORT:-9090}
MON_PROM_NODE=${MON_PROM_NODE:-h1}

MON_LOSS_BPF=${MON_LOSS_BPF:-$SRCDIR/ci/loss/loss.bpf.o}

test_lazy_prereq PROMETHEUS 'command -v prometheus && command -v curl'
test_lazy_prereq LOSS_BPF '[ -r "$MON_LOSS_BPF" ] && command -v tc'

mon_bed() {
	test_atexit "\"$FABRIC\" down -p $PFX"
	fab up "$@" >bed.log &&
	fab info >info &&
	fab hostfile >peers.hosts
}

# mon_addr NODE: NODE's rail-0 address from ./info
mon_addr() {
	(. ./info && eval "echo \${${1^^}_RAIL0}")
}

mon_agents() {
	local h pid extra
	for h in $(. ./info && echo $HOSTS); do
		extra=MON_AGENT_OPTS_$h
		"$FABRIC" exec -p "$PFX" "$h" "$FABSCOPE" monitor --peers "$PWD/peers.hosts" --node "$h" \
			--listen "$(mon_addr $h):$MON_HTTP_PORT" --port $MON_UDP_PORT "$@" ${!extra:-} \
			>"agent.$h.out" 2>"agent.$h.err" &
		pid=$!	# the agent itself: netns-fabric and ip netns exec both exec
		test_atexit "test_kill_pid $pid"
		echo "$h $pid" >>agents.pids
	done
	for h in $(. ./info && echo $HOSTS); do
		test_wait_for 20 mon_healthy "$h" || { cat "agent.$h.err" >&2; return 1; }
	done
}

mon_healthy() {
	fab exec "$1" curl -sf "http://$(mon_addr $1):$MON_HTTP_PORT/healthz" >/dev/null
}

mon_metrics() {
	fab exec "$1" curl -sf "http://$(mon_addr $1):$MON_HTTP_PORT/metrics"
}

mon_prom() {
	local h targets="" rules="" r pid n
	mkdir -p prom/data &&
	for h in $(. ./info && echo $HOSTS); do
		targets="$targets${targets:+, }'$(mon_addr $h):$MON_HTTP_PORT'"
	done &&
	for r; do
		rules="$rules  - $r"$'\n'
	done &&
	cat >prom/prometheus.yml <<-EOF &&
	global:
	  scrape_interval: 1s
	  evaluation_interval: 1s
	rule_files:
	$rules
	scrape_configs:
	  - job_name: fabscope-monitor
	    static_configs:
	      - targets: [$targets]
	${MON_PROM_EXTRA_TARGET:+  - job_name: fabscope-verdicts}
	${MON_PROM_EXTRA_TARGET:+    static_configs:}
	${MON_PROM_EXTRA_TARGET:+      - targets: ['$MON_PROM_EXTRA_TARGET']}
	EOF
	{ "$FABRIC" exec -p "$PFX" "$MON_PROM_NODE" prometheus --config.file="$PWD/prom/prometheus.yml" \
		--storage.tsdb.path="$PWD/prom/data" --web.listen-address=127.0.0.1:$MON_PROM_PORT \
		>prom/log 2>&1 & } &&
	pid=$! &&
	test_atexit "test_kill_pid $pid" &&
	test_wait_for 30 sh -c "kill -0 $pid && \"\$0\" exec -p $PFX $MON_PROM_NODE curl -sf http://127.0.0.1:$MON_PROM_PORT/-/ready >/dev/null" "$FABRIC" ||
		{ tail -5 prom/log >&2; return 1; }
	n=$(. ./info && echo $HOSTS | wc -w) &&
	{ test -z "${MON_PROM_EXTRA_TARGET:-}" || n=$((n + 1)); } &&
	test_wait_for 30 mon_up_is "$n"
}

mon_up_is() {
	test "$(mon_query_value 'count(up == 1)')" = "$1"
}

mon_api() {
	fab exec "$MON_PROM_NODE" curl -sf "http://127.0.0.1:$MON_PROM_PORT$1" "${@:2}"
}

mon_query() {
	mon_api /api/v1/query --data-urlencode "query=$1" |
	jq -r '.data.result[] | [(.metric | del(.__name__, .instance, .job) | to_entries | map("\(.key)=\(.value)") | join(",")), .value[1]] | join(" ")' |
	sort
}

mon_query_value() {
	mon_api /api/v1/query --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // ""'
}

mon_loss_on() {
	ip -n "$PFX-$1" link add monsink type veth peer name monsink1 &&
	ip -n "$PFX-$1" link set monsink up &&
	tc -n "$PFX-$1" qdisc add dev "$2" clsact &&
	tc -n "$PFX-$1" filter add dev "$2" egress protocol ip u32 match ip protocol 17 0xff \
		match ip sport "${3%%/*}" "$([[ $3 == */* ]] && echo "${3#*/}" || echo 0xffff)" action mirred egress redirect dev monsink
}

mon_loss_off() {
	tc -n "$PFX-$1" qdisc del dev "$2" clsact &&
	ip -n "$PFX-$1" link del monsink
}

# the share is the filter's classid minor, in units of 0.01 % (ci/loss/loss.bpf.c)
mon_random_loss_on() {
	local share frac
	[[ $3 =~ ^([0-9]{1,3})(\.([0-9]{1,2}))?$ ]] ||
		{ echo "mon_random_loss_on: '$3' is not a percentage with at most 2 decimals" >&2; return 1; }
	frac=${BASH_REMATCH[3]}00
	share=$((10#${BASH_REMATCH[1]} * 100 + 10#${frac:0:2}))
	((share >= 1 && share <= 10000)) || { echo "mon_random_loss_on: '$3' is not in 0.01 to 100" >&2; return 1; }
	tc -n "$PFX-$1" qdisc add dev "$2" clsact &&
	tc -n "$PFX-$1" filter add dev "$2" egress bpf da obj "$MON_LOSS_BPF" sec tc classid "0:$(printf %x $share)"
}

mon_random_loss_off() {
	tc -n "$PFX-$1" qdisc del dev "$2" clsact
}

mon_random_loss_seen() {
	tc -n "$PFX-$1" -s -j qdisc show dev "$2" | jq -r '.[] | select(.kind == "clsact") | "\(.packets) \(.drops)"'
}

mon_path() {
	fab path "$(mon_addr $1)" "$(mon_addr $2)" "$3" "$MON_UDP_PORT" udp
}

mon_value_is() {
	test "$(mon_query_value "$1")" = "$2"
}

mon_sent_above() {
	test "$(mon_query_value "sum(fabscope_probe_sent_total)")" -gt "$1"
}

mon_lost_grown() {
	mon_query fabscope_probe_lost_total | awk -v before="$1" '
		BEGIN { while ((getline l < before) > 0) { split(l, f, " "); was[f[1]] = f[2] } }
		$2 > ($1 in was ? was[$1] : 0) { print $1 }' | sort
}

mon_lost_grown_is() {
	mon_lost_grown "$1" | cmp -s "$2" -
}

mon_rules_ok() {
	mon_api /api/v1/rules >rules.now.json &&
	test "$(jq "[.data.groups[].rules[] | select(.health != \"ok\" or (.lastEvaluation | startswith(\"0001\")))] | length" rules.now.json)" = 0
}

mon_reloads_are() {
	mon_metrics "$1" | grep -qx "fabscope_monitor_reloads_total{node=\"$1\",result=\"$2\"} $3"
}

mon_wait() {
	local end=$((SECONDS + $1))
	shift
	while ! "$@"; do
		((SECONDS < end)) || { echo "mon_wait: still failing after the time limit: $*" >&2; return 1; }
		sleep 1
	done
}

mon_backlog_drops() {
	local n=0 processed dropped rest ns row c
	while read -r processed dropped rest; do
		n=$((n + 16#$dropped))
	done </proc/net/softnet_stat
	# (the neighbour table is the machine's: read once; a row a CPU, in hexadecimal)
	{
		read -ra row && for ((c = 0; c < ${#row[@]}; c++)); do [[ ${row[c]} == unresolved_discards ]] && break; done
		while read -ra row; do
			((c < ${#row[@]})) && n=$((n + 16#${row[c]}))
		done
	} </proc/net/stat/arp_cache
	for ns in $(ip netns list | awk -v p="$PFX-" 'index($1, p) == 1 { print $1 }'); do
		n=$((n + $(ip netns exec "$ns" awk '
			# /proc/net/snmp: a line of names, then a line of values, a protocol each
			$1 == "Ip:" || $1 == "Udp:" { if (!(($1) in names)) { names[$1] = $0; next }
				split(names[$1], k); for (i = 2; i <= NF; i++) v[$1 k[i]] = $i }
			END { n = split("Ip:InHdrErrors Ip:InAddrErrors Ip:InDiscards Ip:OutDiscards Ip:OutNoRoutes " \
					"Udp:InErrors Udp:NoPorts", f)
				for (i = 1; i <= n; i++) s += v[f[i]]
				print s + 0 }
			' /proc/net/snmp)))
		# (not monsink, nor a clsact qdisc: what mon_loss_on and mon_random_loss_on drop there is
		# the fabric's rule, not the bed)
		n=$((n + $(ip -n "$ns" -s -j link show | jq "[.[] | select(.ifname | startswith(\"monsink\") | not) |
			.stats64.rx.dropped + .stats64.tx.dropped] | add // 0")))
		n=$((n + $(tc -n "$ns" -s -j qdisc show | jq "[.[] | select(.kind != \"clsact\" and
			(.dev | startswith(\"monsink\") | not)) | .drops // 0] | add // 0")))
	done
	echo $n
}
