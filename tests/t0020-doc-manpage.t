#!/usr/bin/env bash
test_description='the manual: every command of fabscope --help has a page of its own, every
option of a command'"'"'s --help is documented on that page, every page renders without
warnings and is listed in fabscope(1), and make install puts the binary and every page in place'
. "$(dirname "$0")/test-lib.sh"

MAN=$SRCDIR/man

test_lazy_prereq GROFF 'command -v groff'
test_lazy_prereq MAN_DB 'command -v man && man --version'
test_require_in_ci GROFF

# the commands that fabscope --help lists, one per line
commands() {
	"$FABSCOPE" --help | sed -n "/^Commands:/,/^$/p" | awk "NF>1 {print \$1}"
}

# the long options a command's --help lists, one per line, without dashes ("" is fabscope's own)
help_options() {
	"$FABSCOPE" $1 --help | grep -oE -- '--[a-z][a-z0-9-]*' | sed 's/^--//' | sort -u
}

# page_names PAGE OPTION: PAGE names \-\-OPTION (roff's dashes), as a whole: --cq-mod is not
# named by \-\-cq\-mode, nor --tx by \-\-tx\-depth
page_names() {
	perl -e '($r = "--" . shift) =~ s/-/\\-/g; local $/; $_ = <>;
		exit(/\Q$r\E(?![a-z0-9]|\\-)/ ? 0 : 1)' "$2" "$1"
}

# missing_options CMD PAGE: the options of CMD --help that PAGE does not name
missing_options() {
	help_options "$1" >opts &&
	test -s opts &&
	while read -r o; do
		page_names "$MAN/$2" "$o" || echo "$o"
	done <opts
}

test_expect_success 'every command of fabscope --help has a page of its own, fabscope-COMMAND(1)' '
	commands >cmds &&
	test -s cmds &&
	test_path_is_file "$MAN/fabscope.1" &&
	while read -r c; do
		test -f "$MAN/fabscope-$c.1" || echo "$c"
	done <cmds >missing &&
	test_must_be_empty missing
'

test_expect_success 'every option of fabscope --help is in fabscope(1)' '
	missing_options "" fabscope.1 >missing &&
	test_must_be_empty missing
'

# (help has no options of its own: 'fabscope help --help' is fabscope --help)
for cmd in $(commands | grep -vx -e help -e probe) "probe polarization" "probe pfc" "monitor analyze"; do
	page=fabscope-${cmd%% *}.1
	[[ $cmd == "monitor analyze" ]] && page=fabscope-monitor-analyze.1
	test_expect_success "every option of '$cmd --help' is in $page" '
		missing_options "'"$cmd"'" "'"$page"'" >missing &&
		test_must_be_empty missing
	'
done

test_expect_success 'every page is listed in the SEE ALSO of fabscope(1), and has a NAME' '
	sed -n "/^\\.SH SEE ALSO/,\$p" "$MAN/fabscope.1" >see &&
	for p in "$MAN"/fabscope-*.[1-8]; do
		n=$(basename "$p") &&
		name=${n%.*} sec=${n##*.} &&
		esc=$(printf "%s" "$name" | sed "s/-/\\\\\\\\-/g") &&
		{ grep -q "^\\.BR $esc ($sec)" see || echo "$n: not in fabscope(1)"; } &&
		{ sed -n "/^\\.SH NAME/{n;p;}" "$p" | grep -q "^$esc \\\\- " || echo "$n: no NAME line"; } ||
		return 1
	done >missing &&
	test_must_be_empty missing
'

test_expect_success GROFF 'every page renders without groff warnings' '
	for p in "$MAN"/*.[1-8]; do
		groff -man -ww -z "$p" 2>&1 | sed "s|^|$(basename "$p"): |"
	done >warnings &&
	test_must_be_empty warnings
'

test_expect_success MAN_DB 'every page renders with man -l without warnings' '
	for p in "$MAN"/*.[1-8]; do
		LC_ALL=C.UTF-8 MANROFFSEQ= MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$p" 2>&1 >/dev/null |
			sed "s|^|$(basename "$p"): |"
	done >warnings &&
	test_must_be_empty warnings
'

# (built in a directory of its own, O=: PREFIX sets the DATADIR compiled in, and a build in the
# tree would leave the tree'"'"'s fabscope looking for its plot templates under /opt/fs, for every
# test after this one)
test_expect_success 'make install puts the binary and every page under DESTDIR/PREFIX' '
	make -s -C "$SRCDIR" install O="$TRASH_DIRECTORY/build" DESTDIR="$TRASH_DIRECTORY/root" PREFIX=/opt/fs \
		>/dev/null &&
	test -x root/opt/fs/bin/fabscope &&
	for p in "$MAN"/*.[1-8]; do
		n=$(basename "$p") &&
		test_cmp "$p" "root/opt/fs/share/man/man${n##*.}/$n" || return 1
	done &&
	root/opt/fs/bin/fabscope --version >v &&
	test_grep "^fabscope 0.1.0" v
'

test_expect_success MAN_DB 'after make install, man finds fabscope-bw and fabscope-plan' '
	MANPAGER=cat MANWIDTH=80 man -M root/opt/fs/share/man fabscope-bw >bw.txt 2>err &&
	test_grep "^NAME" bw.txt &&
	test_grep "fabscope-bw - point-to-point bandwidth" bw.txt &&
	MANPAGER=cat man -M root/opt/fs/share/man 5 fabscope-plan >plan.txt 2>err &&
	test_grep "fabscope-plan - " plan.txt
'

test_expect_success 'make uninstall removes every page' '
	make -s -C "$SRCDIR" uninstall O="$TRASH_DIRECTORY/build" DESTDIR="$TRASH_DIRECTORY/root" PREFIX=/opt/fs \
		>/dev/null &&
	find root -type f >left &&
	test_must_be_empty left
'

test_done
