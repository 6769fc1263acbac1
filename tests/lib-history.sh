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
