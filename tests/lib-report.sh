# lib-report.sh - crafted results directories for tests of `fabscope report` (source after
# test-lib.sh).  Everything is made from the arguments: no randomness, so reports are golden.
#
#	mkrun DIR LABELS-JSON          a results directory: run.json with those labels (4 nodes,
#	                               all ok), and an empty results.jsonl
#	bwrec DIR PHASE RAIL SRC DST GBPS      append an aggregate bw record (64 KiB)
#	latrec DIR PHASE RAIL SRC DST P50 P99  append an aggregate lat record
#	errrec DIR PHASE SRC DST MESSAGE       append a failed test
#	mkfabric DIR LABELS SLOW-NODE SLOW-GBPS FAST-GBPS
#	                               pairwise bw on rails 0 and 1 among h1..h4 and lat on rail 0;
#	                               SLOW-NODE's rail-1 pairs get SLOW-GBPS, the rest FAST-GBPS
#	pfcrec DIR PHASE NODE ROLE TARGET FIRST-ECN RX-PPS TX-PPS RX-PAUSED TX-PAUSED TEXT
#	                               append a record of the PFC probe (needs jq; see below)
#	mkpfc DIR LABELS STORMY        PFC records of 4 nodes; STORMY=1: a storm on h3, pauses before
#	                               ECN on h3 and h4, ECN first on h1; STORMY=0: light pauses
#	pushcatch PORT FILE            a one-request HTTP listener that keeps the body (for --push)

mkrun() {
	mkdir -p "$1" &&
	printf '{"schema":"fabscope.run/1","id":"run-%s","started":"2026-11-29T00:00:00Z","finished":"2026-11-29T00:01:00Z","status":"finished","labels":%s,"nodes":[{"name":"h1","status":"ok"},{"name":"h2","status":"ok"},{"name":"h3","status":"ok"},{"name":"h4","status":"ok"}]}\n' \
		"$(basename "$1")" "$2" >"$1/run.json" &&
	: >"$1/results.jsonl"
}

bwrec() {
	printf '{"schema":"fabscope.record/1","test":"bw","transport":"tcp","msg_size_bytes":65536,"scope":"aggregate","dir":"c2s","status":"ok","phase":"%s","job":"%s/bw/%s/%s>%s","src":{"node":"%s","rail":%s,"plane":0},"dst":{"node":"%s","rail":%s,"plane":0},"metrics":{"bw_gbps":%s}}\n' \
		"$2" "$2" "$3" "$4" "$5" "$4" "$3" "$5" "$3" "$6" >>"$1/results.jsonl"
}

latrec() {
	printf '{"schema":"fabscope.record/1","test":"lat","transport":"tcp","msg_size_bytes":64,"scope":"aggregate","status":"ok","phase":"%s","job":"%s/lat/%s/%s>%s","src":{"node":"%s","rail":%s,"plane":0},"dst":{"node":"%s","rail":%s,"plane":0},"metrics":{"lat_us":{"p50":%s,"p99":%s}}}\n' \
		"$2" "$2" "$3" "$4" "$5" "$4" "$3" "$5" "$3" "$6" "$7" >>"$1/results.jsonl"
}

errrec() {
	printf '{"schema":"fabscope.record/1","test":"bw","status":"error","error":"%s","phase":"%s","job":"%s/bw/r1/rail0/%s>%s","src":{"node":"%s","rail":0},"dst":{"node":"%s","rail":0}}\n' \
		"$5" "$2" "$2" "$3" "$4" "$3" "$4" >>"$1/results.jsonl"
}

mkfabric() {
	local dir=$1 labels=$2 slow=$3 sv=$4 fv=$5 a b r v
	mkrun "$dir" "$labels" || return 1
	for r in 0 1; do
		for a in h1 h2 h3 h4; do
			for b in h1 h2 h3 h4; do
				[[ $a < $b ]] || continue
				v=$fv
				[[ $r == 1 && ($a == "$slow" || $b == "$slow") ]] && v=$sv
				bwrec "$dir" pw $r "$a" "$b" "$v" || return 1
			done
		done
	done
	latrec "$dir" lat 0 h1 h2 2.0 3.0 &&
	latrec "$dir" lat 0 h1 h3 2.1 3.2 &&
	latrec "$dir" lat 0 h1 h4 2.0 9.5 &&
	latrec "$dir" lat 0 h2 h3 1.9 2.9 &&
	latrec "$dir" lat 0 h2 h4 2.2 3.1 &&
	latrec "$dir" lat 0 h3 h4 2.0 3.0
}

# pfcrec DIR PHASE NODE ROLE TARGET FIRST-ECN RX-PPS TX-PPS RX-PAUSED TX-PAUSED TEXT
#	append a record of the PFC probe: port eth2 of NODE, priority 3, sampled every 0.5 s; the
#	first 2 intervals before the load, the last 2 after it, the rest during.  The four series
#	are per interval, comma-separated ("0,0,400,400,0,0"); a paused series is "-" when the NIC
#	does not count pause durations.  ROLE sender|target|monitor; TARGET the sender's incast
#	target ("-": none); FIRST-ECN the first interval in which ECN/CNP rose (-1: never).  The
#	rest is computed as the probe does (probes/pfc.h): averages and maxima, storms (paused
#	> 99 % for 3 intervals or more in a row), the first pause, ECN before PFC and the verdict.
#	TEXT is the verdict text.
pfcrec() {
	jq -cn --arg phase "$2" --arg node "$3" --arg role "$4" --arg target "$5" --argjson fe "$6" \
		--arg rx "$7" --arg tx "$8" --arg rxp "$9" --arg txp "${10}" --arg text "${11}" '
	def nums: split(",") | map(tonumber);
	def r4: . * 10000 | round / 10000;
	def avg: if . == null then null else add / length | r4 end;
	def mx: if . == null then null else max end;
	def storm: if . == null then {run: 0, from: -1} else
		. as $a | reduce range($a | length) as $k ({cur: 0, run: 0, from: -1};
			if $a[$k] > 0.99 then .cur += 1 | if .cur > .run then .run = .cur | .from = $k - .cur + 1 else . end
			else .cur = 0 end) end;
	($rx | nums) as $rx | ($tx | nums) as $tx |
	(if $rxp == "-" then null else $rxp | nums end) as $rxp |
	(if $txp == "-" then null else $txp | nums end) as $txp |
	($rx | length) as $n |
	($rxp | storm) as $sr | ($txp | storm) as $st |
	([range($n) | select($rx[.] > 0 or $tx[.] > 0)] | first // -1) as $fp |
	(if $fe < 0 and $fp < 0 then "unknown" elif $fe >= 0 and ($fp < 0 or $fe < $fp) then "yes" else "no" end) as $ef |
	(if $sr.run >= 3 and $st.run >= 3 then "rx+tx" elif $sr.run >= 3 then "rx" elif $st.run >= 3 then "tx" else "none" end) as $storm |
	[range($n) | if . < 2 then "before" elif . >= $n - 2 then "after" else "during" end] as $ph |
	{schema: "fabscope.record/1", tool: "fabscope", version: "0.1.0", time: "2026-11-30T03:00:00Z",
	 test: "pfc", status: "ok", phase: $phase, round: 1,
	 job: ($phase + "/pfc/r1/rail0/" + $node + (if $target == "-" then "" else ">" + $target end)),
	 role: $role, src: {node: $node, rail: 0, plane: 0}}
	+ (if $target == "-" then {} else {dst: {node: $target, rail: 0, plane: 0}} end)
	+ {iface: "eth2", rdma_dev: "mlx5_0", sources: "ethtool eth2 (mlx5_core), hw_counters mlx5_0/1",
	 params: {interval_s: 0.5, before_s: 1, during_s: (($n - 4) * 0.5), after_s: 1, link_gbps: 100,
		  tclass: 96, prio: 3, flows: (if $target == "-" then 0 else 4 end),
		  storm_fraction: 0.99, storm_intervals: 3},
	 metrics: {intervals: $n, seconds: ($n * 0.5), ecn_marked: (if $fe < 0 then 0 else 1200 end),
		   cnp_sent: 0, cnp_handled: 0, resets: 0},
	 priorities: [{prio: 3, rx_frames: ($rx | add * 0.5 | round), tx_frames: ($tx | add * 0.5 | round),
		       rx_pps_avg: ($rx | avg), rx_pps_max: ($rx | mx), tx_pps_avg: ($tx | avg), tx_pps_max: ($tx | mx),
		       rx_paused_avg: ($rxp | avg), rx_paused_max: ($rxp | mx),
		       tx_paused_avg: ($txp | avg), tx_paused_max: ($txp | mx), estimated: false,
		       storm: $storm, storm_run: ([$sr.run, $st.run] | max),
		       storm_from: (if $sr.run >= $st.run then $sr.from else $st.from end),
		       first_pause: $fp, ecn_first: $ef, discards: 0}],
	 timeline: {t: [range($n) | (. + 1) * 0.5], phase: $ph,
		    ecn_ps: [range($n) | if $fe >= 0 and . >= $fe and $ph[.] == "during" then 240 else 0 end],
		    prio: {"3": ({rx_pps: $rx, tx_pps: $tx}
				 + (if $rxp == null then {} else {rx_paused: $rxp} end)
				 + (if $txp == null then {} else {tx_paused: $txp} end))}},
	 storm: ($storm != "none"), first_ecn: $fe, first_pause: $fp, ecn_first: $ef,
	 verdict: (if $storm != "none" then "storm" elif $fp >= 0 then "paused" else "clean" end),
	 verdict_text: $text}' >>"$1/results.jsonl"
}

mkpfc() {
	local z=0,0,0,0,0,0,0,0,0,0,0,0
	mkrun "$1" "$2" || return 1
	if [[ $3 == 1 ]]; then
		pfcrec "$1" pfc h1 sender h4 3 0,0,0,0,200,400,400,200,0,0,0,0 $z 0,0,0,0,0.2,0.6,0.8,0.3,0,0,0,0 $z \
			"prio 3: paused by the peer 100.0 frames/s, 20.8% of the time (max 80.0%); ECN before PFC: yes" &&
		pfcrec "$1" pfc h2 sender h4 2 $z $z $z $z "no pauses; ECN before PFC: yes" &&
		pfcrec "$1" pfc h3 sender h4 -1 0,0,400,800,1200,1200,1200,1200,1200,1200,0,0 $z \
			0,0,0.3,0.6,0.9,1,1,1,1,1,0,0 $z \
			"prio 3: paused by the peer 700.0 frames/s; PFC STORM: paused by the peer over 99% for 5 intervals from interval 5" &&
		pfcrec "$1" pfc h4 target - 4 $z 0,0,400,1200,1200,1200,800,400,400,400,0,0 $z - \
			"prio 3: pausing the peer 500.0 frames/s, time paused unknown; ECN before PFC: no"
	else
		pfcrec "$1" pfc h1 sender h4 3 $z $z $z $z "no pauses; ECN before PFC: yes" &&
		pfcrec "$1" pfc h3 sender h4 2 0,0,0,0,100,100,0,0,0,0,0,0 $z 0,0,0,0,0.05,0.1,0,0,0,0,0,0 $z \
			"prio 3: paused by the peer 16.7 frames/s, 1.3% of the time (max 10.0%); ECN before PFC: yes" &&
		pfcrec "$1" pfc h4 target - 3 $z 0,0,0,0,100,200,0,0,0,0,0,0 $z - \
			"prio 3: pausing the peer 25.0 frames/s, time paused unknown; ECN before PFC: yes"
	fi
}

# pushcatch PORT FILE: in the background (needs lib-ptp.sh), a listener on 127.0.0.1:PORT that
#	answers one HTTP request with 200 and writes its body to FILE (whole, or not at all)
pushcatch() {
	ptp_spawn pushcatch.log perl -MIO::Socket::INET -e '
		my ($port, $file) = @ARGV;
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $port, Listen => 4,
			ReuseAddr => 1, Proto => "tcp") or die "listen on $port: $!\n";
		my $c = $s->accept or die "accept: $!\n";
		binmode $c;
		local $SIG{ALRM} = sub { die "the request was not read within 10 s\n" };
		alarm 10;
		my ($head, $buf) = ("", "");
		while ($head !~ /\r\n\r\n/) { sysread($c, $buf, 4096) or last; $head .= $buf }
		my $body = $head =~ s/^.*?\r\n\r\n//sr;
		my ($len) = $head =~ /^content-length:\s*(\d+)/mi;
		while (length($body) < ($len // 0)) { sysread($c, $buf, 65536) or last; $body .= $buf }
		open(my $f, ">", "$file.tmp") or die "$file.tmp: $!\n";
		print $f $body;
		close $f;
		rename "$file.tmp", $file or die "$file: $!\n";
		print $c "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
		close $c;
	' "$1" "$2" &&
	ptp_wait_listen "$1" "$ptp_pid" || { cat pushcatch.log >&2; return 1; }
}
