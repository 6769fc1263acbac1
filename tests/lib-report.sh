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
