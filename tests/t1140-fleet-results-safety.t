#!/usr/bin/env bash
test_description='the results directory loses nothing and follows no link: a full disk stops
the run (exit 3, run.json says so, no torn line, no job listed without its record) and --resume
after freeing space gives every record once; the directory and its files are private, an
existing one must be an empty directory of ours, and a planted symbolic link is never followed'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_lazy_prereq UNSHARE '[ "$(id -u)" = 0 ] && unshare -m true && command -v mount'
test_require_in_ci FABSCOPE JQ UNSHARE SETPRIV
P=FABSCOPE,JQ

cat >plan.ini <<'EOF'
[global]
duration = 0.2
timeout = 3

[pw]
kind = pairwise
test = bw,lat
size = 16K

[ring]
kind = ring

[ping]
kind = ping
EOF

test_path_is_missing_() { ! test -e "$1" || { echo "$1 exists" >&2; return 1; }; }

# the jobs of a run: each job key once, from the records
jobs_of() { jq -r .job "$1/results.jsonl" | sort -u; }

# (--no-retest: a re-test of a latency suspect is the host's noise's to call, and would make
# the runs' lists of jobs differ by chance; t1107 resumes re-tests)
test_expect_success $P 'a reference run of 8 agents: every job has its records and its line in jobs.done' '
	"$FABSCOPE" run plan.ini -n 8 --no-retest -o ref >ref.log 2>&1 &&
	jobs_of ref >ref.jobs &&
	test $(wc -l <ref.jobs) -gt 40 &&
	sort ref/jobs.done >ref.done &&
	test_cmp ref.jobs ref.done
'

# A tmpfs of 96 KiB holds fewer than all of the run's 108 records.  Both runs happen in one
# private mount namespace (the tmpfs goes with it); "freeing space" is a remount, larger.
test_expect_success $P,UNSHARE 'a full disk: exit 3 with what to do, run.json "failed: disk full", then --resume' '
	mkdir mnt &&
	unshare -m sh -c "
		mount -t tmpfs -o size=96k tmpfs mnt &&
		{ \"\$FABSCOPE\" run plan.ini -n 8 --no-retest -o mnt/run >full.out 2>full.err; echo \$? >full.rc; } &&
		cp -r mnt/run full &&
		mount -o remount,size=16m mnt &&
		{ \"\$FABSCOPE\" run --resume mnt/run --no-retest >res.out 2>res.err; echo \$? >res.rc; } &&
		cp -r mnt/run resumed
	" &&
	test "$(cat full.rc)" = 3 &&
	tail -n 1 full.err >last &&
	test_grep "results directory mnt/run full: [0-9]* records written, [0-9]* not; run .fabscope run --resume mnt/run. after freeing space" last &&
	test_grep "cannot append to mnt/run/results.jsonl: No space left on device: the run stops" full.err &&
	jq -e ".status == \"failed: disk full\"" full/run.json >/dev/null &&
	jsonl_ok full/results.jsonl &&
	# no job is listed done that has no record
	jobs_of full >full.jobs &&
	sort full/jobs.done >full.done &&
	test -z "$(comm -13 full.jobs full.done)" &&
	test $(wc -l <full.done) -lt $(wc -l <ref.done) &&
	test "$(cat res.rc)" = 0 &&
	jq -e ".status == \"finished\"" resumed/run.json >/dev/null &&
	jsonl_ok resumed/results.jsonl
'

test_expect_success $P,UNSHARE 'after --resume every job has its records once, and jobs.done lists each once' '
	jobs_of resumed >resumed.jobs &&
	test_cmp ref.jobs resumed.jobs &&
	sort resumed/jobs.done >resumed.done &&
	test_cmp ref.done resumed.done &&
	# one aggregate (bw), one lat record, one ping record per job: none twice
	jq -r "select(.scope == \"aggregate\" or .test == \"lat\" or .test == \"ping\" and (.retest_for | not)) | .job" \
		resumed/results.jsonl | sort | uniq -d >dups &&
	test_must_be_empty dups &&
	test $(jq -s "[.[] | select(.scope == \"aggregate\" or .test == \"lat\" or .test == \"ping\" and (.retest_for | not))] | length" resumed/results.jsonl) = \
		$(jq -s "[.[] | select(.scope == \"aggregate\" or .test == \"lat\" or .test == \"ping\" and (.retest_for | not))] | length" ref/results.jsonl)
'

test_expect_success $P 'the directory is 0750 and its files 0640; a stricter umask makes them stricter' '
	(umask 022 && "$FABSCOPE" run plan.ini -n 2 -o m022 >/dev/null 2>&1) &&
	test "$(stat -c %a m022)" = 750 &&
	for f in run.json results.jsonl jobs.done; do
		test "$(stat -c %a m022/$f)" = 640 || return 1
	done &&
	(umask 077 && "$FABSCOPE" run plan.ini -n 2 -o m077 >/dev/null 2>&1) &&
	test "$(stat -c %a m077)" = 700 &&
	test "$(stat -c %a m077/results.jsonl)" = 600 &&
	test_path_is_missing_ m022/.space-reserve
'

test_expect_success $P 'an existing directory must be empty, a directory, not a link, and ours' '
	mkdir real && ln -s real link &&
	test_expect_code 2 "$FABSCOPE" run plan.ini -n 2 -o link >out 2>err &&
	test_grep "results directory .link. is a symbolic link" err &&
	test -z "$(ls -A real)" &&
	echo x >real/x &&
	test_expect_code 2 "$FABSCOPE" run plan.ini -n 2 -o real >out 2>err &&
	test_grep "is not empty" err
'

test_expect_success $P,SETPRIV 'a directory of another user is refused (exit 3)' '
	mkdir theirs && chown 65534:65534 theirs &&
	test_expect_code 3 "$FABSCOPE" run plan.ini -n 2 -o theirs >out 2>err &&
	test_grep "results directory .theirs. belongs to another user (uid 65534)" err &&
	test -z "$(ls -A theirs)"
'

test_expect_success $P 'links planted in the directory during a run (and before --resume) are not followed' '
	echo "do not touch" >victim &&
	fleet_run_bg plant.log plan.ini -n 6 -o planted &&
	test_wait_for 20 test -s planted/results.jsonl &&
	for n in .run.json.tmp .results.jsonl.tmp results.partial.jsonl .space-reserve; do
		ln -sf "$TRASH_DIRECTORY/victim" "planted/$n" || return 1
	done &&
	fleet_wait $fleet_pid 120 &&
	test $fleet_rc = 0 &&
	test "$(cat victim)" = "do not touch" &&
	test -f planted/run.json && ! test -L planted/run.json &&
	jq -e ".status == \"finished\"" planted/run.json >/dev/null &&
	# a resume that sets records aside: results.partial.jsonl is a planted link
	head -n 3 planted/jobs.done >jd && mv jd planted/jobs.done &&
	test_expect_code 3 "$FABSCOPE" run --resume planted >res.out 2>res.err &&
	test_grep "cannot append to .planted/results.partial.jsonl.: it is a symlink, never followed" res.err &&
	test "$(cat victim)" = "do not touch"
'

test_done
