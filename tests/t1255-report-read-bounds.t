#!/usr/bin/env bash
test_description='the readers of a results directory take untrusted files (issue 41, finding 7):
results.jsonl, run.json or jobs.done that is /dev/zero, a FIFO or a directory is refused in one line,
exit 3, at once (it grew to gigabytes, or hung, before); a line over the bound (16 MiB) is read past
and counted as not a record, the records around it kept; fabscope run --resume refuses the same; a
thresholds file that is no regular file, or has a line over 510 bytes, is a usage error (exit 2)'
# asan: always: feeds untrusted bytes to C code: results directories whose files are no files, or lines past the bound
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_require_in_ci FABSCOPE JQ
P=FABSCOPE,JQ

# (a report of these runs without thresholds is INCOMPLETE, exit 5: nothing judges pw and lat)
# report CODE ARGS...: fs_expect with at most 1 GB of memory (what /dev/zero made it take: it
# is bounded now, and an old build must fail here, not fill the machine) and 20 s (a hang
# guard); not under ASan, whose shadow memory needs address space of its own
report() {
	if [ "${FABSCOPE_TEST_TIER:-}" = asan ]; then
		fs_expect "$@"
	else
		(ulimit -v 1048576 && fs_expect "$@")
	fi
}

test_expect_success $P 'a run with records to read' '
	mkfabric base "{}" h3 10 40 &&
	fs_expect 5 report base -o rep0 --no-plots &&
	test_grep "pw" rep0/report.md
'

test_expect_success $P 'results.jsonl that is /dev/zero: one line, exit 3, at once' '
	mkrun zero "{}" && ln -sf /dev/zero zero/results.jsonl &&
	report 3 report zero -o rz --no-plots &&
	test $(wc -l <err) = 1 &&
	test_grep "cannot read .zero/results.jsonl.: not a regular file (a FIFO, a device or a directory)" err &&
	! test -e rz/report.md
'

test_expect_success $P 'results.jsonl or run.json that is a FIFO: one line, exit 3, no hang' '
	mkrun fifo "{}" && rm fifo/results.jsonl && mkfifo fifo/results.jsonl &&
	report 3 report fifo -o rf --no-plots &&
	test $(wc -l <err) = 1 && test_grep "cannot read .fifo/results.jsonl.: not a regular file" err &&
	mkdir fifo2 && cp base/results.jsonl fifo2/ && mkfifo fifo2/run.json &&
	report 3 report fifo2 -o rf2 --no-plots &&
	test $(wc -l <err) = 1 && test_grep "cannot read .fifo2/run.json.: not a regular file" err &&
	mkdir dir3 && mkdir dir3/results.jsonl &&
	report 3 report dir3 -o rd --no-plots &&
	test_grep "not a regular file" err
'

# jobs.done says what of the planned jobs ran: read only with run.json's planned jobs
test_expect_success $P 'jobs.done that is /dev/zero or a FIFO: one line, exit 3, no hang' '
	mkdir jd && cp base/results.jsonl jd/ &&
	jq -c ".planned = [{name: \"pw\", kind: \"pairwise\", jobs: 1}]" base/run.json >jd/run.json &&
	echo "pw/bw/r1/rail0/h1>h2" >jd/jobs.done &&
	report 5 report jd -o rj0 --no-plots &&
	test_grep "^| every planned job ran | all | 1 of 1 ran |" rj0/report.md &&
	ln -sf /dev/zero jd/jobs.done &&
	report 3 report jd -o rj1 --no-plots &&
	test $(wc -l <err) = 1 && test_grep "cannot read .jd/jobs.done.: not a regular file" err &&
	rm jd/jobs.done && mkfifo jd/jobs.done &&
	report 3 report jd -o rj2 --no-plots &&
	test $(wc -l <err) = 1 && test_grep "cannot read .jd/jobs.done.: not a regular file" err
'

test_expect_success $P 'a thresholds file that is /dev/zero or a FIFO: one line, exit 2, no hang; a long line: exit 2' '
	printf "[bw]\nmin_gbps = 0.001\n" >th.ini &&
	report 5 report base -o rt0 --no-plots --thresholds th.ini &&
	ln -sf /dev/zero thz.ini &&
	report 2 report base -o rt1 --no-plots --thresholds thz.ini &&
	test $(wc -l <err) = 1 && test_grep "cannot read thresholds .thz.ini.: not a regular file" err &&
	mkfifo thf.ini &&
	report 2 report base -o rt2 --no-plots --thresholds thf.ini &&
	test $(wc -l <err) = 1 && test_grep "cannot read thresholds .thf.ini.: not a regular file" err &&
	{ printf "[bw]\n# " && head -c 600 /dev/zero | tr "\0" x && printf "\nmin_gbps = 0.001\n"; } >thl.ini &&
	report 2 report base -o rt3 --no-plots --thresholds thl.ini &&
	test $(wc -l <err) = 1 && test_grep "thl.ini:2: a line over 510 bytes" err
'

test_expect_success $P 'a line of 17 MiB: read past, counted as not a record; the records around it are read' '
	mkrun long "{}" &&
	head -n 3 base/results.jsonl >>long/results.jsonl &&
	{ head -c $((17 << 20)) /dev/zero | tr "\0" x && echo; } >>long/results.jsonl &&
	tail -n +4 base/results.jsonl >>long/results.jsonl &&
	report 5 report long -o rl --no-plots &&
	test_grep "1 line(s) that are not records were skipped, the first at line 4" err &&
	jq -e ".runs[0].records == $(wc -l <base/results.jsonl)" rl/summary.json >/dev/null
'

test_expect_success $P 'run --resume: a jobs.done that is a FIFO is refused, exit 3, no hang' '
	mkdir -p res && cp base/results.jsonl res/ &&
	printf "{\"schema\":\"fabscope.run/1\",\"plan\":\"\",\"status\":\"interrupted\"}\n" >res/run.json &&
	mkfifo res/jobs.done &&
	report 3 run --resume res &&
	test_grep "cannot read .res/jobs.done.: not a regular file" err
'

test_done
