#!/usr/bin/env bash
test_description='the pristine-machine tier: the Debian package builds clean and hardened; on a
minbase Debian 12 with make and git alone, the README quick start (make demo, make check) passes;
the .deb installs with apt on another such root and works there'
. "$(dirname "$0")/test-lib.sh"

# What a pristine machine is here: `debootstrap --variant=minbase bookworm` from this machine's
# mirror (ci/fresh-debian, cached in /var/cache/fabscope), entered as a machine of its own.
# Two roots: "qs" runs the quick start from a clone of the commit under test, in /srv/fabscope
# (a few tests drop root's privileges to user nobody, who cannot reach root's 0700 home: the
# README says so); "deb" gets only the package.  The inner `make check` runs the unit tier (FRESH_TESTS_INNER), plainly and
# under ASan, and not this tier again (FRESH_TIER=no).  Hang guards only: every inner command
# has a `timeout` many times its normal time (the quick start takes 5-10 minutes), so that a
# hung install fails this file instead of CI.

test_lazy_prereq DEBOOTSTRAP 'command -v debootstrap'
test_lazy_prereq UNSHARE 'command -v unshare && command -v chroot && command -v findmnt'
test_lazy_prereq DEBBUILD 'command -v dpkg-buildpackage && command -v dh && command -v lintian && command -v hardening-check'
test_lazy_prereq GIT 'command -v git && git -C "$SRCDIR" rev-parse --git-dir'
test_require_in_ci ROOT DEBOOTSTRAP UNSHARE DEBBUILD GIT
P=ROOT,DEBOOTSTRAP,UNSHARE,GIT

FRESH="$SRCDIR/ci/fresh-debian"
INNER_TESTS=${FRESH_TESTS_INNER:-tests/t00[0-3]*.t tests/t01[0-4]*.t}
QS=$TRASH_DIRECTORY/qs DEB_ROOT=$TRASH_DIRECTORY/deb
test_atexit '"$FRESH" destroy "$QS"; "$FRESH" destroy "$DEB_ROOT"'

# in_root ROOT SECONDS SCRIPT: run SCRIPT with bash inside ROOT (hang guard SECONDS), CI and
# the inner make check's limits passed on
in_root() {
	timeout -k 10 "$2" "$FRESH" enter "$1" -e CI="${CI:-}" -e TESTS="$INNER_TESTS" -e FRESH_TIER=no \
		-- bash -euo pipefail -c "$3"
}

# the lines of the README's quick-start block, comments cut
quickstart() {
	awk '/^## Quick start/ { q = 1; next } q && /^## / { exit }
	     q && /^```sh/ { b = 1; next } b && /^```/ { exit } b { print }' "$SRCDIR/README.md" |
		sed 's/[[:space:]]#.*$//; s/[[:space:]]*$//' | grep -v '^$'
}

test_expect_success 'the README quick start: prerequisites, then make demo, then make check' '
	quickstart >qs.lines &&
	cat qs.lines &&
	test_grep -x "make demo" qs.lines &&
	test_grep -x "make check" qs.lines &&
	test "$(grep -n -x "make demo" qs.lines | cut -d: -f1)" -lt "$(grep -n -x "make check" qs.lines | cut -d: -f1)" &&
	sed "/^make demo$/,\$d" qs.lines >qs.pre &&
	test_grep "apt-get install" qs.pre
'

test_expect_success DEBBUILD 'ci/build-deb: the package builds (dpkg-buildpackage -us -uc -b), lintian finds no error' '
	{ "$SRCDIR/ci/build-deb" -o "$TRASH_DIRECTORY/debs" --lintian >build.out 2>&1 ||
		{ cat build.out; false; }; } &&
	cat build.out &&
	ls debs/fabscope_*_amd64.deb >deb.path &&
	test $(wc -l <deb.path) = 1 &&
	! grep "^E:" debs/lintian.txt
'

test_expect_success DEBBUILD 'the package holds the binary, fabscope(1), the templates, examples, copyright' '
	dpkg-deb -c "$(cat deb.path)" | awk "{ print \$6 }" >contents &&
	for f in ./usr/bin/fabscope ./usr/share/man/man1/fabscope.1.gz ./usr/share/man/man1/fabscope-bw.1.gz \
		./usr/share/man/man5/fabscope-plan.5.gz ./usr/share/man/man7/fabscope-records.7.gz \
		./usr/share/fabscope/plots/lanes.gp \
		./usr/share/fabscope/plots/heatmap.gp ./usr/share/doc/fabscope/copyright \
		./usr/share/doc/fabscope/examples/acceptance.ini ./usr/share/doc/fabscope/examples/hosts \
		./usr/share/doc/fabscope/examples/thresholds.ini \
		./usr/share/doc/fabscope/deploy/systemd/fabscope-monitor.service \
		./usr/share/doc/fabscope/deploy/kubernetes/fabscope-monitor-daemonset.yaml \
		./usr/share/doc/fabscope/deploy/prometheus/fabscope-monitor-rules.yml \
		./usr/share/doc/fabscope/deploy/grafana/fabscope-monitor.json; do
		test_grep -x "$f" contents || return 1
	done &&
	dpkg-deb -f "$(cat deb.path)" Depends >depends &&
	test_grep "libjansson4" depends && test_grep "libpcap0.8" depends &&
	test_grep "libibverbs1" depends && test_grep "libcurl4" depends &&
	test_grep "libsqlite3-0" depends &&
	test_grep "libmicrohttpd12" depends
'

# Debian 12 builds no binary with control-flow protection (its crt objects carry no CET note:
# a hello world has none either), so that one check is left out; the rest must all hold.
test_expect_success DEBBUILD 'the packaged binary is hardened: PIE, stack protector, fortify, relro, bindnow' '
	rm -rf x && mkdir x && dpkg-deb -x "$(cat deb.path)" x &&
	{ hardening-check --nocfprotection x/usr/bin/fabscope >hc.out 2>&1 || { cat hc.out; false; }; } &&
	cat hc.out &&
	test_grep "Fortify Source functions: yes" hc.out &&
	test_grep "Immediate binding: yes" hc.out &&
	test_grep "Read-only relocations: yes" hc.out &&
	strings x/usr/bin/fabscope >strings.out &&
	test_grep -x "/usr/share/fabscope" strings.out
'

test_expect_success $P 'a pristine root: minbase Debian 12, no make, git, compiler or pkg-config' '
	timeout 900 "$FRESH" root "$QS" &&
	in_root "$QS" 60 "
		. /etc/os-release && test \"\$VERSION_ID\" = 12 &&
		for c in make git cc gcc pkg-config jq; do
			! command -v \$c || { echo \"\$c is there\"; exit 1; }
		done
		test -d /var/lib/apt && mountpoint -q / && mountpoint -q /proc
	"
'

test_expect_success $P 'inside: the prerequisites of the quick start, a clone of the commit under test' '
	commit=$(git -C "$SRCDIR" rev-parse HEAD) &&
	echo "commit under test: $commit" &&
	{ test -z "$(git -C "$SRCDIR" status --porcelain --untracked-files=no)" ||
		echo "note: the work tree has changes that are not committed; the clone has HEAD only"; } &&
	git init -q --bare "$QS/root/src.git" &&
	git -C "$SRCDIR" push -q "$QS/root/src.git" "$commit:refs/heads/main" &&
	git -C "$QS/root/src.git" symbolic-ref HEAD refs/heads/main &&
	{ in_root "$QS" 900 "$(cat qs.pre)" >pre.out 2>&1 || { tail -n 30 pre.out; false; }; } &&
	in_root "$QS" 120 "git clone -q /root/src.git /srv/fabscope && git -C /srv/fabscope log -1 --format=%H" >clone.out &&
	test "$(tail -n 1 clone.out)" = "$commit"
'

test_expect_success $P 'make demo on the pristine root: installs the demo packages only, passes, leaves its report' '
	{ in_root "$QS" 1500 "cd /srv/fabscope && make demo" >demo.out 2>&1 || { tail -n 60 demo.out; false; }; } &&
	tail -n 30 demo.out &&
	test_grep "^suspect: .*h4 rail 1" demo.out &&
	# the degraded link named by the design: ci/demo gives report the intent file of the bed
	test_grep "h4 rail 1: slow with .*; design: h4:rail1 -> l2.1:h4" "$QS/srv/fabscope/demo-out/run/report/report.md" &&
	test_path_is_file "$QS/srv/fabscope/demo-out/run/report/report.html" &&
	test_path_is_file "$QS/srv/fabscope/demo-out/run/results.jsonl" &&
	ls "$QS"/srv/fabscope/demo-out/run/report/plots/*.svg >svgs &&
	test -s svgs &&
	in_root "$QS" 60 "
		for p in qemu-system-x86 chromium slurm-wlm openmpi-bin; do
			! dpkg-query -W -f=\"\\\${Status}\" \$p 2>/dev/null | grep -q \"ok installed\" ||
				{ echo \"make demo installed \$p\"; exit 1; }
		done
	"
'

test_expect_success $P 'make check on the pristine root: its installs, the builds, the unit tier (plain and ASan)' '
	{ in_root "$QS" 3600 "cd /srv/fabscope && make check" >check.out 2>&1 || { tail -n 80 check.out; false; }; } &&
	grep -E "^(All tests successful|Files=|Result:)" check.out >check.res &&
	cat check.res &&
	test $(grep -c "^Result: PASS" check.res) = 1 &&
	test_grep ! "^Result: FAIL" check.res &&
	# one run of tests/run-tests, both tiers: the plain files and their ASan repeats
	grep "^\[[0-9:]*\] tests/t0" check.out >plain.ran && test -s plain.ran &&
	grep "^\[[0-9:]*\] asan/t0" check.out >asan.ran && test -s asan.ran
'

test_expect_success $P,DEBBUILD 'the .deb on another pristine root: apt installs it with its dependencies' '
	timeout 900 "$FRESH" root "$DEB_ROOT" &&
	cp "$(cat deb.path)" "$DEB_ROOT/tmp/" &&
	deb=/tmp/$(basename "$(cat deb.path)") &&
	{ in_root "$DEB_ROOT" 1200 "
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q >/dev/null
		apt-get install -y -q $deb man-db >/tmp/apt.log 2>&1 || { tail -n 20 /tmp/apt.log; exit 1; }
		dpkg-query -W -f=\"\\\${Status}\" fabscope
	" >install.out 2>&1 || { cat install.out; false; }; } &&
	test_grep "install ok installed" install.out
'

test_expect_success $P,DEBBUILD 'the installed package: fabscope --version, man fabscope, the example plans' '
	{ in_root "$DEB_ROOT" 120 "
		command -v fabscope
		fabscope --version
		MANPAGER=cat man fabscope | head -n 20
		MANPAGER=cat man fabscope-bw | head -n 5
		cd /usr/share/doc/fabscope/examples
		fabscope run --dry-run acceptance.ini
		fabscope run --dry-run nightly.ini --hostfile hosts-dual-plane
	" >pkg.out 2>&1 || { cat pkg.out; false; }; } &&
	cat pkg.out &&
	test_grep -x "/usr/bin/fabscope" pkg.out &&
	test_grep "^fabscope 0\.[0-9]*\.[0-9]* (transports: tcp, verbs)" pkg.out &&
	test_grep ! "test hooks" pkg.out &&
	test_grep "^NAME" pkg.out &&
	test_grep "fabscope-bw - point-to-point bandwidth" pkg.out &&
	test_grep "^plan acceptance.ini: 4 nodes, 2 lanes" pkg.out &&
	test_grep "^estimated time" pkg.out
'

test_expect_success $P,DEBBUILD 'fabscope report on the demo results: plots from the packaged templates' '
	test -d "$QS/srv/fabscope/demo-out/run" &&
	mkdir -p "$DEB_ROOT/root/run" &&
	cp "$QS"/srv/fabscope/demo-out/run/run.json "$QS"/srv/fabscope/demo-out/run/results.jsonl \
	   "$QS"/srv/fabscope/demo-out/run/jobs.done "$DEB_ROOT/root/run/" &&
	# the demo fabric has a slow node: the verdict is FAIL (exit 1), as in make demo
	{ in_root "$DEB_ROOT" 300 "
		fabscope report /root/run || echo report exit \$?
		ls /root/run/report/plots/
	" >report.out 2>&1 || { cat report.out; false; }; } &&
	cat report.out &&
	test_grep -x "report exit 1" report.out &&
	test_grep "^acceptance: FAIL (" report.out &&
	ls "$DEB_ROOT"/root/run/report/plots/*.svg >svgs2 &&
	test -s svgs2 &&
	test_path_is_file "$DEB_ROOT/root/run/report/report.html" &&
	test_grep ! "templates" "$DEB_ROOT/root/run/report/report.md" &&
	test_grep ! "no plots" "$DEB_ROOT/root/run/report/report.md"
'

test_done
