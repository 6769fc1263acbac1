#!/usr/bin/env bash
test_description='fabscope command line: usage, help and version, unknown commands and options,
and the exit codes for them (0 for help, 2 for usage errors)'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_require_in_ci FABSCOPE

VERSION=$(sed -n 's/^VERSION := *//p' "$SRCDIR/Makefile")
P=FABSCOPE

# Every option of bw and lat, as the help must show them; and bw's own (lat has one message
# in flight: they are refused there, see t1030)
OPTIONS='--server -p --port --bind --once --timeout --node -t --transport --op -s --size
-a --all -n --iters -D --duration --warmup --sport
--tclass --poll --json -o --output --report-gbits --label -v --verbose -h --help'
BW_OPTIONS='-q --flows -b --bidirectional --tx-depth --cq-mod --post-list'

# help_lists_options FILE: FILE shows every option in $OPTIONS as an option (at the start of an
# option line or after "-x, "), not merely somewhere in a sentence
help_lists_options() {
	local o missing="" opts=$OPTIONS
	[[ $1 == bw-help ]] && opts+=" $BW_OPTIONS"
	for o in $opts; do
		case $o in
		--*) grep -Eq -e "^ +(-[a-zA-Z], )?$o( |$)" "$1" ;;
		*) grep -Eq -e "^ +$o(, --[a-z]| [A-Z]|  |$)" "$1" ;;
		esac || missing+=" $o"
	done
	[[ -z $missing ]] && return 0
	echo "help_lists_options: $1 does not list:$missing" >&2
	return 1
}

# lists_commands FILE: the main usage lists bw and lat as commands
lists_commands() {
	test_grep -E '^ +bw +[a-z]' "$1" &&
	test_grep -E '^ +lat +[a-z]' "$1"
}

test_expect_success $P 'no arguments: exit 2, the usage on stderr, nothing on stdout' '
	fs_expect 2 &&
	test_must_be_empty out &&
	test_grep "^usage: fabscope " err &&
	lists_commands err
'

test_expect_success $P '--help and help: exit 0, the same usage on stdout, listing bw and lat' '
	fs_expect 0 --help && mv out help1 && test_must_be_empty err &&
	fs_expect 0 help && mv out help2 && test_must_be_empty err &&
	fs_expect 0 -h && mv out help3 && test_must_be_empty err &&
	test_cmp help1 help2 &&
	test_cmp help1 help3 &&
	test_grep "^usage: fabscope " help1 &&
	lists_commands help1
'

test_expect_success $P '--version and version: exit 0, one line "fabscope VERSION (transports: tcp...)"' '
	test -n "$VERSION" &&
	fs_expect 0 --version && mv out v1 && test_must_be_empty err &&
	fs_expect 0 version && mv out v2 && test_must_be_empty err &&
	test_cmp v1 v2 &&
	test $(wc -l <v1) = 1 &&
	test_grep -E "^fabscope ${VERSION//./\\.} \(transports: tcp(, [a-z0-9]+)*\)( \(test hooks: a test build, not for production\))?$" v1
'

test_expect_success $P 'help --help and help -h: the usage, exit 0' '
	fs_expect 0 help && mv out h0 &&
	fs_expect 0 help --help && test_must_be_empty err && test_cmp h0 out &&
	fs_expect 0 help -h && test_cmp h0 out
'

test_expect_success $P 'an unknown command: exit 2, one line "'\''nosuch'\'' is not a fabscope command", with a guess when there is one' '
	fs_expect 2 nosuch &&
	test_must_be_empty out &&
	ptp_one_error err "'\''nosuch'\'' is not a fabscope command; '\''fabscope help'\'' lists them" &&
	fs_expect 2 reprot &&
	ptp_one_error err "'\''reprot'\'' is not a fabscope command; did you mean '\''report'\''?" &&
	fs_expect 2 alreduce &&
	ptp_one_error err "did you mean '\''allreduce'\''?" &&
	fs_expect 2 ib_write_bw &&
	ptp_one_error err "the one that does ib_write_bw'\''s work is '\''fabscope bw -t verbs'\''" &&
	fs_expect 2 help nosuch &&
	ptp_one_error err "'\''nosuch'\'' is not a fabscope command"
'

test_expect_success $P 'an unknown option before the command: exit 2, "unknown option", then the usage' '
	fs_expect 2 --bogus &&
	test_must_be_empty out &&
	ptp_first_error err "unknown option '\''--bogus'\''" &&
	test_grep "^usage: fabscope " err
'

test_expect_success $P 'help probe PROBE is that probe'"'"'s help; help with a word too many is exit 2' '
	fs_expect 0 help probe pfc && mv out hp1 &&
	fs_expect 0 probe pfc --help && test_cmp hp1 out &&
	test_grep "^usage: fabscope probe pfc" hp1 &&
	fs_expect 2 help probe nosuch &&
	ptp_one_error err "no such probe" &&
	fs_expect 2 help bw extra &&
	ptp_one_error err "fabscope help: " "'"'"'extra'"'"' is one too many"
'

for cmd in bw lat; do
	test_expect_success $P "help $cmd, $cmd --help and $cmd -h: exit 0, the same text" '
		fs_expect 0 help '$cmd' && mv out h1 && test_must_be_empty err &&
		fs_expect 0 '$cmd' --help && mv out h2 && test_must_be_empty err &&
		fs_expect 0 '$cmd' -h && mv out h3 && test_must_be_empty err &&
		test_cmp h1 h2 &&
		test_cmp h1 h3 &&
		test_grep "^usage: fabscope '$cmd' \[options\] HOST" h1 &&
		test_grep "fabscope '$cmd' --server" h1 &&
		cp h1 '$cmd'-help
	'

	test_expect_success $P "$cmd help lists every option" '
		help_lists_options '$cmd'-help
	'

	test_expect_success $P "$cmd --help wins over a bad option after it, and still exits 0" '
		fs_expect 0 '$cmd' --help --bogus &&
		test_cmp '$cmd'-help out
	'

	test_expect_success $P "$cmd --bogus: exit 2, \"unknown option '--bogus'\" and a usage line" '
		fs_expect 2 '$cmd' --bogus &&
		test_must_be_empty out &&
		ptp_first_error err "fabscope '$cmd': " "unknown option '\''--bogus'\''" &&
		test_grep "^usage: fabscope '$cmd' " err
	'

	test_expect_success $P "$cmd -Z: exit 2, \"unknown option '-Z'\" and a usage line" '
		fs_expect 2 '$cmd' -Z &&
		test_must_be_empty out &&
		ptp_first_error err "fabscope '$cmd': " "unknown option '\''-Z'\''" &&
		test_grep "^usage: fabscope '$cmd' " err
	'

	test_expect_success $P "$cmd --json=1 (a value for a flag): exit 2, one line" '
		fs_expect 2 '$cmd' 127.0.0.1 -p $(ptp_port 0) --json=1 &&
		ptp_one_error err "--json"
	'

	test_expect_success $P "$cmd -s with no value: exit 2, one line naming -s" '
		fs_expect 2 '$cmd' 127.0.0.1 -p $(ptp_port 0) -s &&
		ptp_one_error err "'\''-s'\''"
	'
done

test_expect_success $P 'help nosuch: exit 2, names the command, nothing on stdout' '
	fs_expect 2 help nosuch &&
	test_must_be_empty out &&
	ptp_first_error err "'\''nosuch'\''"
'

test_expect_success $P 'help help: exit 0, the main usage' '
	fs_expect 0 help help &&
	test_grep "^usage: fabscope " out &&
	lists_commands out
'

test_done
