# tests/lib-history.sh - what the tests of `fabscope history` share (source it after test-lib.sh)
#
#	hist_held DB    "RUN|RESULTS|ROWS|ENTITIES" a line per run the history DB holds, by run id:
#	                the run's own count of its results, then its result and entity rows counted
#	                from the tables themselves (sqlite3), so a run half added shows

hist_held() {
	sqlite3 "$1" "SELECT r.run_id, r.nresults,
		(SELECT count(*) FROM result x JOIN grp g ON x.grp = g.id WHERE g.run = r.id),
		(SELECT count(*) FROM entity e JOIN grp g ON e.grp = g.id WHERE g.run = r.id)
		FROM run r ORDER BY r.run_id"
}

#	hist_confirm DIR SUSPECT
#	                DIR's run.json as a run whose own re-test confirmed SUSPECT (an entity of
#	                history diff --json: kind, phase, test, rail, plane, size, node, peer), in the
#	                form fabscope run writes its suspects (records/retest.c): what a generated
#	                night (test-tool nightly, which re-tests nothing) lacks

hist_confirm() {
	jq -c --argjson e "$2" '.suspects += [{kind: $e.kind, phase: $e.phase, test: $e.test, rail: $e.rail,
		plane: $e.plane, node: $e.node, peer: $e.peer, msg_size_bytes: $e.size,
		retest: {status: "confirmed"}} | with_entries(select(.value != null))]' "$1/run.json" >"$1/run.json+" &&
	mv "$1/run.json+" "$1/run.json"
}
