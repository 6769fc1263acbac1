#!/usr/bin/env bash
test_description='no code from paths or names, no file written through a link: a results
directory, an -o and a node whose names hold gnuplot code run nothing (issue 41, finding 1);
links planted by another user in a report directory, its plots/, beside pcap --plot and at a
topology export are never written through, and a directory another user owns or can write to
is refused in one line, exit 3 (finding 2); a topology export that fails leaves the old file
whole (finding 10)'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_lazy_prereq UNSHARE '[ "$(id -u)" = 0 ] && unshare -m true && command -v mount'
test_require_in_ci FABSCOPE JQ GNUPLOT
[ "$(id -u)" = 0 ] && test_require_in_ci SETPRIV UNSHARE
P=FABSCOPE,JQ

asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# the victim: root's private file, which no report may touch; a report of this run without
# thresholds is written and INCOMPLETE (exit 5: nothing judges pw and lat)
test_expect_success $P 'a run with heatmaps, lanes and CDFs to plot; a private file of root' '
	mkfabric base "{}" h3 10 40 &&
	echo "root only" >victim && chmod 600 victim
'

# gnuplot ran these as -e datafile='PATH' and outfile='PATH': a quote in PATH ended the string
Q="q'; system('id > PWNED'); x='"
test_expect_success $P,GNUPLOT 'a results directory whose name is gnuplot code: nothing runs, the plots are drawn' '
	cp -r base "$Q" &&
	fs_expect 5 report "$Q" &&
	! test -e PWNED && ! test -e "$Q/report/PWNED" && ! test -e "$Q/report/plots/PWNED" &&
	ls "$Q/report/plots/"*.svg >svgs && test $(wc -l <svgs) -ge 4 &&
	fs_expect 5 report base -o "out-$Q" &&
	! test -e PWNED && ! test -e "out-$Q/plots/PWNED" &&
	ls "out-$Q/plots/"*.svg >svgs && test $(wc -l <svgs) -ge 4
'

# node names reach gnuplot in the heatmaps' tics files (loaded as code) and titles
test_expect_success $P,GNUPLOT 'node and phase names that are gnuplot code: nothing runs, the names are drawn as they are' '
	mkdir names &&
	sed -e "s/\"h3\"/\"h3'\''\\\\nsystem(\\\\\"touch PWNED2\\\\\")\\\\n#\\\\u0060touch PWNED3\\\\u0060\"/g" \
	    -e "s/\"pw\"/\"pw\\\\\"\`touch PWNED4\`@x\"/g" base/results.jsonl >names/results.jsonl &&
	cp base/run.json names/ &&
	jq -e "select(.src.node | startswith(\"h3\")) | .src.node | contains(\"\\n\")" names/results.jsonl >/dev/null &&
	fs_expect 5 report names -o names-rep &&
	! test -e PWNED2 && ! test -e PWNED3 && ! test -e PWNED4 &&
	! test -e names-rep/plots/PWNED2 && ! test -e names-rep/plots/PWNED3 && ! test -e names-rep/plots/PWNED4 &&
	! grep -q "^system" names-rep/plots/*.tics.gp &&
	ls names-rep/plots/*heat*.svg >heats && test -s heats &&
	grep -l "touch PWNED2" names-rep/plots/*heat*.svg >/dev/null
'

test_expect_success $P,SETPRIV 'a report directory another user can write to is refused (exit 3); the link planted there is not followed' '
	mkdir shared && chmod 777 shared &&
	asnobody ln -s "$TRASH_DIRECTORY/victim" shared/report.md.tmp &&
	asnobody ln -s "$TRASH_DIRECTORY/victim" shared/report.md &&
	fs_expect 3 report base -o shared --format md &&
	test $(wc -l <err) = 1 && test_grep "o .shared. can be written by other users (mode 0777).*FABSCOPE_SHARED_DIRS=1" err &&
	test "$(cat victim)" = "root only" &&
	# asked for: the link at the temporary name of old is nothing, the one at the name is refused
	FABSCOPE_SHARED_DIRS=1 fs_expect 3 report base -o shared --format md &&
	test $(wc -l <err) = 1 && test_grep "cannot write .shared/report.md.: it is a symlink, never followed nor replaced" err &&
	test "$(cat victim)" = "root only" && test -L shared/report.md.tmp &&
	asnobody rm shared/report.md &&
	FABSCOPE_SHARED_DIRS=1 fs_expect 5 report base -o shared --format md &&
	test -f shared/report.md && ! test -L shared/report.md &&
	test "$(cat victim)" = "root only"
'

test_expect_success $P,SETPRIV 'an -o of another user, or a link, is refused; a sticky one (as /tmp) is not' '
	mkdir theirs && chown 65534:65534 theirs &&
	fs_expect 3 report base -o theirs --no-plots &&
	test $(wc -l <err) = 1 && test_grep "o .theirs. belongs to another user (uid 65534): give one of your own" err &&
	test -z "$(ls -A theirs)" &&
	mkdir real && ln -s real alink &&
	fs_expect 2 report base -o alink --no-plots &&
	test $(wc -l <err) = 1 && test_grep "o .alink. is a symbolic link: give the directory itself" err &&
	test -z "$(ls -A real)" &&
	mkdir sticky && chmod 1777 sticky &&
	fs_expect 5 report base -o sticky --no-plots &&
	test -s sticky/report.md
'

test_expect_success $P,GNUPLOT,SETPRIV 'links planted in plots/ are not written through' '
	mkdir -p sp/plots && chmod 777 sp sp/plots &&
	for n in 01-lanes-pw-bw.svg lanes-pw-bw.dat lanes-pw-bw.dat.tmp heat-pw-bw-r0-p0.tics.gp \
		 01-lanes-pw-bw.svg.log; do
		asnobody ln -s "$TRASH_DIRECTORY/victim" "sp/plots/$n" || return 1
	done &&
	FABSCOPE_SHARED_DIRS=1 fs_expect 5 report base -o sp &&
	test "$(cat victim)" = "root only" &&
	test_grep "some plots are missing\|no plots" err &&
	test -s sp/report.md
'

# a capture of RoCEv2 flows and PFC frames (test-tool pcapgen, as t0260 makes them)
W="src=10.0.0.1 dst=10.0.0.2" R="src=10.0.0.2 dst=10.0.0.1"
test_expect_success $P,GNUPLOT 'pcap --plot: a path, a capture name that are gnuplot code run nothing' '
	"$TEST_TOOL" pcapgen cong.pcap "rc send_only qpn=0x51 psn=1 len=64 ackreq $W count=4 time=4.1" \
		"ack qpn=0x52 psn=2 $R time=4.3" "pfc prio=3 quanta=1000 count=4 time=4.6" >/dev/null &&
	cp cong.pcap "p'\''; system('\''touch PWNED5'\''); x='\''.pcap" &&
	"$FABSCOPE" pcap "p'\''; system('\''touch PWNED5'\''); x='\''.pcap" \
		--plot "o'\''; system('\''touch PWNED6'\''); x='\''.svg" >/dev/null &&
	! test -e PWNED5 && ! test -e PWNED6 &&
	test_grep "<svg" "o'\''; system('\''touch PWNED6'\''); x='\''.svg"
'

test_expect_success $P,GNUPLOT,SETPRIV 'pcap --plot: a link planted at its data files is not followed' '
	mkdir pp && chmod 777 pp &&
	asnobody ln -s "$TRASH_DIRECTORY/victim" pp/out.svg.flows.dat &&
	asnobody ln -s "$TRASH_DIRECTORY/victim" pp/out.svg.pfc.dat &&
	test_expect_exit 3 "$FABSCOPE" pcap cong.pcap --plot pp/out.svg >/dev/null 2>perr &&
	test_grep "can be written by other users" perr &&
	test "$(cat victim)" = "root only" &&
	FABSCOPE_SHARED_DIRS=1 "$FABSCOPE" pcap cong.pcap --plot pp/out.svg >/dev/null &&
	test_grep "<svg" pp/out.svg &&
	test "$(cat victim)" = "root only"
'

# a design larger than the space left: the export fails; topology.conf stays what it was
test_expect_success $P,UNSHARE 'a topology export that fails on a full disk leaves the old file whole (exit 3)' '
	{
		echo "switch leaf1 tier=leaf rail=0" &&
		for i in $(seq 1 3000); do echo "link node$i:eth0 leaf1:port$i"; done
	} >big.topo &&
	mkdir mnt &&
	unshare -m sh -c "
		mount -t tmpfs -o size=64k,mode=0755 tmpfs mnt &&
		printf \"SwitchName=old Nodes=a,b\\n\" >mnt/topology.conf &&
		{ \"\$FABSCOPE\" topo export big.topo --format fabscope -o mnt/topology.conf >exp.out 2>exp.err; echo \$? >exp.rc; } &&
		cp mnt/topology.conf after.conf && ls -A mnt >after.ls
	" &&
	test "$(cat exp.rc)" = 3 &&
	test $(wc -l <exp.err) = 1 && test_grep "cannot write .mnt/topology.conf.: No space left on device" exp.err &&
	test "$(cat after.conf)" = "SwitchName=old Nodes=a,b" &&
	test "$(cat after.ls)" = topology.conf
'

test_done
