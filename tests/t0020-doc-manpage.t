#!/usr/bin/env bash
test_description='the manual: every option that --help lists is documented in fabscope(1),
the page renders without warnings, and make install puts binary and page in place'
. "$(dirname "$0")/test-lib.sh"

test_lazy_prereq GROFF 'command -v groff'
test_require_in_ci GROFF

# the long options a command's --help lists, one per line, without dashes
help_options() {
	"$FABSCOPE" $1 --help | grep -oE -- '--[a-z][a-z0-9-]*' | sed 's/^--//' | sort -u
}

for cmd in bw lat allreduce alltoall devices run agent report "probe polarization" "probe pfc" capture pcap; do
	test_expect_success "every option of '$cmd --help' is in the manual" '
		help_options "'"$cmd"'" >opts &&
		test -s opts &&
		: >missing &&
		while read -r o; do
			esc=$(printf "%s" "$o" | sed "s/-/\\\\\\\\-/g") &&
			grep -q -- "\\\\-\\\\-$esc" "$SRCDIR/core/fabscope.1" || echo "$o" >>missing
		done <opts &&
		test_must_be_empty missing
	'
done

test_expect_success 'every command of fabscope --help has a section in the manual' '
	"$FABSCOPE" --help | sed -n "/^Commands:/,/^$/p" | awk "NF>1 {print \$1}" >cmds &&
	test -s cmds &&
	while read -r c; do
		grep -q "^\\.B $c\$\\|^\\.B $c \\\\fR" "$SRCDIR/core/fabscope.1" || echo "$c" ;
	done <cmds >missing &&
	test_must_be_empty missing
'

test_expect_success GROFF 'the manual renders without groff warnings' '
	groff -man -ww -z "$SRCDIR/core/fabscope.1" 2>warnings &&
	test_must_be_empty warnings
'

# (built in a directory of its own, O=: PREFIX sets the DATADIR compiled in, and a build in the
# tree would leave the tree'"'"'s fabscope looking for its plot templates under /opt/fs, for every
# test after this one)
test_expect_success 'make install puts the binary and the page under DESTDIR/PREFIX' '
	make -s -C "$SRCDIR" install O="$TRASH_DIRECTORY/build" DESTDIR="$TRASH_DIRECTORY/root" PREFIX=/opt/fs \
		>/dev/null &&
	test -x root/opt/fs/bin/fabscope &&
	test_path_is_file root/opt/fs/share/man/man1/fabscope.1 &&
	root/opt/fs/bin/fabscope --version >v &&
	test_grep "^fabscope 0.1.0" v
'

test_done
