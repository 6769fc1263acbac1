#!/usr/bin/env bash
test_description='fabscope bw and lat refuse bad input before they connect: malformed values,
options that exclude each other, a missing or extra HOST, an unknown transport or host; each is
one line on stderr and the documented exit code (2 usage, 3 environment)'
# asan: always: feeds untrusted bytes to C code: malformed command-line values
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-ptp.sh"

test_require_in_ci FABSCOPE
P=FABSCOPE

# Nothing listens here: should a bad value get past the checks, the client is refused (exit 4)
# instead of reaching some real server on the default port.
PORT=$(ptp_port 0)

# bad_input CODE 'ARGS' WORD...: `fabscope ARGS -p $PORT` exits CODE before connecting, with
# nothing on stdout and one line on stderr that says every WORD.  ARGS is split on blanks.
bad_input() {
	local code=$1 args=$2 words=("${@:3}") w body
	body="fs_expect $code $args -p \$PORT && test_must_be_empty out && ptp_one_error err"
	for w in "${words[@]}"; do
		body+=" $(printf '%q' "$w")"
	done
	test_expect_success $P "fabscope $args: exit $code, one line saying ${words[*]}" "$body"
}

# malformed sizes: the value and the option, quoted
bad_input 2 'bw 127.0.0.1 -s abc'  "invalid value 'abc' for option '-s'"
bad_input 2 'bw 127.0.0.1 -s 12x'  "invalid value '12x' for option '-s'"
bad_input 2 'bw 127.0.0.1 -s 0'    "invalid value '0' for option '-s'"
bad_input 2 'bw 127.0.0.1 -s 2G'   "invalid value '2G' for option '-s'"
bad_input 2 'bw 127.0.0.1 -s -1'   "invalid value '-1' for option '-s'"
bad_input 2 'bw 127.0.0.1 --size abc' "invalid value 'abc' for option '--size'"
bad_input 2 'lat 127.0.0.1 -s abc' "invalid value 'abc' for option '-s'"

# counts, durations, ports, timeouts
bad_input 2 'bw 127.0.0.1 -n 0'       "invalid value '0' for option '-n'"
bad_input 2 'bw 127.0.0.1 -n abc'     "invalid value 'abc' for option '-n'"
bad_input 2 'lat 127.0.0.1 -n 0'      "invalid value '0' for option '-n'" "of at least 1"
bad_input 2 'bw 127.0.0.1 -D -1'      "invalid value '-1' for option '-D'"
bad_input 2 'bw 127.0.0.1 -D abc'     "invalid value 'abc' for option '-D'"
bad_input 2 'bw 127.0.0.1 -D 0'       "invalid value '0' for option '-D'"
bad_input 2 'bw 127.0.0.1 -q 0'       "invalid value '0' for option '-q'"
bad_input 2 'bw 127.0.0.1 -q 5000'    "invalid value '5000' for option '-q'"
bad_input 2 'bw 127.0.0.1 -p 70000'   "invalid value '70000' for option '-p'"
bad_input 2 'bw 127.0.0.1 --output='  "option '--output' takes a path (FILE), not an empty string"
bad_input 2 'lat 127.0.0.1 --output=' "option '--output' takes a path (FILE), not an empty string"
test_expect_success $P 'fabscope bw 127.0.0.1 --port 0: exit 2, one line (port 0 is for a server)' '
	fs_expect 2 bw 127.0.0.1 --port 0 &&
	test_must_be_empty out &&
	ptp_one_error err "--port 0 is for a server"
'
bad_input 2 'bw 127.0.0.1 --warmup xyz' "invalid value 'xyz' for option '--warmup'"
bad_input 2 'bw 127.0.0.1 --timeout abc' "invalid value 'abc' for option '--timeout'"
bad_input 2 'bw 127.0.0.1 --timeout 0'   "invalid value '0' for option '--timeout'"
bad_input 2 'bw 127.0.0.1 --tclass 256'  "invalid value '256' for option '--tclass'"
bad_input 2 'bw 127.0.0.1 --tx-depth 0'  "invalid value '0' for option '--tx-depth'"

# options that exclude each other, or do not fit the test
bad_input 2 'bw 127.0.0.1 -n 10 -D 1'  "-n" "-D"
bad_input 2 'bw 127.0.0.1 -a -s 64K'   "-a" "-s"
bad_input 2 'bw 127.0.0.1 --op bogus'  "'bogus'" "--op"
bad_input 2 'lat 127.0.0.1 --op write_imm'  "'write_imm'" "--op" "send, write or read"
bad_input 2 'bw 127.0.0.1 --poll nope' "'nope'" "--poll"
bad_input 2 'bw --server --poll nope' "'nope'" "--poll"
bad_input 2 'lat 127.0.0.1 -q 2'       "-q"
bad_input 2 'lat 127.0.0.1 -b'         "-b"
bad_input 2 'bw 127.0.0.1 --label novalue' "'novalue'" "--label"
test_expect_success $P 'a label that is not UTF-8 is refused, not dropped; an empty HOST is refused' '
	fs_expect 2 bw 127.0.0.1 -p 9 --label "$(printf "k=\377\376")" &&
	ptp_one_error err "invalid --label" "in UTF-8" &&
	fs_expect 2 bw "" -p 9 &&
	ptp_one_error err "HOST is empty"
'
bad_input 2 'bw 127.0.0.1 --cq-mod 64 --tx-depth 8' "--cq-mod" "--tx-depth"
bad_input 2 'bw 127.0.0.1 --sport 65530 -q 10' "--sport"

if "$FABSCOPE" version | grep -q verbs; then	# (checked before the device is looked for)
	bad_input 2 'bw 127.0.0.1 -t verbs --flow-label 1048575 -q 4' "--flow-label" "largest label"
	bad_input 2 'bw 127.0.0.1 -t verbs --sport 50000 --flow-label 7' "--sport and --flow-label" "give one"
fi
bad_input 2 'bw 127.0.0.1 -D 0x10'     "invalid value '0x10' for option '-D'"
bad_input 2 'bw 127.0.0.1 --timeout 1e9' "'1e9'" "at most 1e7"

# a server ignores the test's options (the client's rule, and a plan gives both sides the
# same ones), but a value that is wrong is still refused before it listens
bad_input 2 'bw --server --op bogus'      "'bogus'" "--op"
bad_input 2 'lat --server --op write_imm' "'write_imm'" "--op"
bad_input 2 'bw --server --warmup 10x'    "'10x'" "--warmup"
bad_input 2 'bw --server --label nokv'    "'nokv'" "--label"

# an option where a value should be: the option is named, not taken as the value
bad_input 2 'bw 127.0.0.1 --node --json' "option '--node' requires" "the option '--json'" "--node=VALUE"
bad_input 2 'bw 127.0.0.1 --bind -p 5'   "option '--bind' requires" "the option '-p'"
bad_input 2 'bw 127.0.0.1 -o --json'     "option '-o' requires" "the option '--json'" "--output=VALUE"
test_expect_success $P 'a value that begins with - is still taken with = (--node=-x)' '
	fs_expect 4 bw 127.0.0.1 -p $PORT --node=-x --timeout 1 &&
	! grep -q "requires" err
'

# -o FILE: a run that fails before it measures anything leaves the last run's records alone
test_expect_success $P '-o FILE: a bad host or label does not empty an existing FILE' '
	echo "[\"precious\"]" >keep.json &&
	cp keep.json expect &&
	fs_expect 2 bw no-such-host.invalid -p $PORT -o keep.json &&
	test_cmp expect keep.json &&
	fs_expect 2 lat 127.0.0.1 -p $PORT -o keep.json --label nokv &&
	test_cmp expect keep.json &&
	fs_expect 4 bw 127.0.0.1 -p $PORT -o keep.json --timeout 1 &&
	test_cmp expect keep.json
'
test_expect_success $P '-o FILE: a new or empty FILE of a failed run stays empty (JSON lines: no record, no line)' '
	rm -f new.json &&
	fs_expect 4 bw 127.0.0.1 -p $PORT -o new.json --timeout 1 &&
	test_path_is_file new.json && test_must_be_empty new.json &&
	: >empty.json &&
	fs_expect 4 bw 127.0.0.1 -p $PORT -o empty.json --timeout 1 &&
	test_must_be_empty empty.json
'

# -o FILE is a file of records, JSON lines as a run'''s results.jsonl (fabscope-records(7)), in
# every command that has it; --json is the same records as one array on standard output
test_require_in_ci JQ
PORT2=$(ptp_port 1)
test_expect_success $P,JQ '-o FILE is JSON lines, with --json or without: bw, lat, probe polarization' '
	ptp_server srv.log bw $PORT2 &&
	"$FABSCOPE" bw 127.0.0.1 -p $PORT2 -q 2 -D 0.2 --json -o bw.jsonl >bw.out &&
	"$FABSCOPE" bw 127.0.0.1 -p $PORT2 -q 2 -D 0.2 -o bwt.jsonl >bwt.out &&
	# (its flows'"'"' source ports from the block too: the default 40000 is in the ephemeral range)
	"$FABSCOPE" probe polarization 127.0.0.1 -p $PORT2 -q 2 -D 0.2 --sport $(ptp_port 2) --json -o pol.jsonl \
		>pol.out &&
	test_kill_pid $ptp_pid &&
	ptp_server srv2.log lat $PORT2 &&
	"$FABSCOPE" lat 127.0.0.1 -p $PORT2 -n 100 --json -o lat.jsonl >lat.out &&
	test_kill_pid $ptp_pid &&
	for f in bw bwt pol lat; do
		# a record a line, each a whole object: no array around them
		test $(wc -l <$f.jsonl) -ge 1 &&
		test_grep ! "^\[" $f.jsonl &&
		while read -r line; do
			printf "%s\n" "$line" | jq -e "type == \"object\" and .schema == \"fabscope.record/1\"" >/dev/null ||
				{ echo "$f.jsonl: not a record line: $line"; return 1; }
		done <$f.jsonl || return 1
	done &&
	# the same records as --json printed, one array
	for f in bw pol lat; do
		jq -c ".[]" $f.out >a && jq -c . $f.jsonl >b && test_cmp a b || return 1
	done &&
	test $(wc -l <bw.jsonl) = 3 && test $(wc -l <bwt.jsonl) = 3 &&
	jq -e "select(.test == \"polarization\") | .scope == \"set\"" pol.jsonl >/dev/null &&
	# and jq -s makes them the array again
	jq -s -e "length == 3 and .[2].scope == \"aggregate\"" bw.jsonl >/dev/null
'

# HOST: missing, one too many, or given to a server
bad_input 2 'bw'                     "missing HOST"
bad_input 2 'lat'                    "missing HOST"
bad_input 2 'bw a b'                 "HOST"
bad_input 2 'bw --server 1.2.3.4'    "--server"
bad_input 2 'lat --server 1.2.3.4'   "--server"

# transports: one this build lacks is the environment's fault, a made-up one the user's
# -t verbs: a build without rdma-core does not know it; a build with it finds
# no RDMA in this machine's kernel (the VM tier, t3xxx, tests verbs for real)
if "$FABSCOPE" version | grep -q verbs; then
	no_verbs="no RDMA support"
else
	no_verbs="unknown transport 'verbs'"
fi
bad_input 3 'bw 127.0.0.1 -t verbs'  "$no_verbs"
bad_input 3 'lat 127.0.0.1 -t verbs' "$no_verbs"
bad_input 2 'bw 127.0.0.1 -d rxe0' "are for -t verbs"
bad_input 2 'bw 127.0.0.1 -t foo'    "unknown transport 'foo'"

# a host that cannot be resolved (.invalid never resolves, RFC 2606; no DNS server needed)
bad_input 2 'bw no-such-host.invalid'  "cannot resolve host 'no-such-host.invalid'"
bad_input 2 'lat no-such-host.invalid' "cannot resolve host 'no-such-host.invalid'"

test_expect_success $P 'the messages are prefixed with the command: "fabscope bw: " and "fabscope lat: "' '
	fs_expect 2 bw 127.0.0.1 -p $PORT -s abc &&
	ptp_one_error err "fabscope bw: " &&
	fs_expect 2 lat 127.0.0.1 -p $PORT -s abc &&
	ptp_one_error err "fabscope lat: "
'

test_expect_success $P 'a bad value is reported whatever the other options, and nothing connects' '
	! ptp_is_listening $PORT &&
	fs_expect 2 bw 127.0.0.1 -p $PORT --json -q 4 -s 12x -D 1 &&
	ptp_one_error err "invalid value '\''12x'\'' for option '\''-s'\''"
'

# devices --rail-map: the file is read before the devices are looked for, so its errors are
# the same on a machine without RDMA (the VM tier, t3010, applies a good map to real ports)
if "$FABSCOPE" version | grep -q verbs; then
	# bad_map FILE CONTENT WORDS...: a map of CONTENT (printf's format) is exit 2, one line of WORDS
	bad_map() {
		printf "$2" >"$1" &&
		fs_expect 2 devices --rail-map "$1" &&
		ptp_one_error err "${@:3}"
	}
	test_expect_success $P 'devices --rail-map: a bad line is exit 2, FILE:LINE and what is wrong' '
		bad_map port.map "# rails\nmlx5_0 rail=0\nmlx5_1/x rail=1\n" "port.map:3" "bad port '\''x'\''" "1 to 255" &&
		bad_map port0.map "mlx5_0/0 rail=0\n" "port0.map:1" "bad port '\''0'\''" &&
		bad_map rail.map "mlx5_0 rail=two\n" "rail.map:1" "'\''rail=two'\''" "DEVICE[/PORT] rail=N [plane=N]" &&
		bad_map norail.map "mlx5_0 plane=1\n" "norail.map:1" "no rail=" "mlx5_0" &&
		bad_map empty-rail.map "mlx5_0 rail=\n" "empty-rail.map:1" "'\''rail='\''" "rail 0 to 63 and plane 0 to 7" &&
		bad_map rail64.map "mlx5_0 rail=64\n" "rail64.map:1" "'\''rail=64'\''" "rail 0 to 63" &&
		bad_map plane8.map "mlx5_0 rail=63 plane=8\n" "plane8.map:1" "'\''plane=8'\''" "plane 0 to 7" &&
		bad_map twice.map "mlx5_0 rail=1 rail=2\n" "twice.map:1" "'\''rail=2'\'' given twice" &&
		bad_map dup.map "mlx5_0/1 rail=1\nmlx5_0 rail=2\nmlx5_0/1 rail=3\n" \
			"dup.map:3" "'\''mlx5_0/1'\'' is mapped already, at line 1" &&
		bad_map nodev.map "/1 rail=1\n" "nodev.map:1" "no device name" &&
		# a long line is refused, not split (its tail would be read as a line of its own)
		bad_map long.map "# %0600d mlx5_0 rail=3\nmlx5_0 rail=1\n" "long.map:1" "longer than 510 characters" &&
		mkdir map.d &&
		fs_expect 2 devices --rail-map map.d &&
		ptp_one_error err "map.d" "is a directory"
	'
	test_expect_success $P 'devices: a rail map that is not there is exit 2; $FABSCOPE_RAIL_MAP is named' '
		fs_expect 2 devices --rail-map nosuch.map &&
		ptp_one_error err "cannot read rail map" "nosuch.map" "No such file" &&
		FABSCOPE_RAIL_MAP=nosuch.map fs_expect 2 devices &&
		ptp_one_error err "nosuch.map" "FABSCOPE_RAIL_MAP" &&
		FABSCOPE_RAIL_MAP=twice.map fs_expect 2 devices &&
		ptp_one_error err "twice.map:1" "FABSCOPE_RAIL_MAP"
	'
	test_expect_success $P 'devices: a rail map of comments only is said to be empty (rails inferred)' '
		printf "# nothing yet\n\n" >empty.map &&
		# (exit 3 where the kernel has no RDMA, as here before CI gets a VM)
		{ "$FABSCOPE" devices --rail-map empty.map >out 2>err; echo $? >rc; } &&
		grep -qx "[03]" rc &&
		test_grep "rail map empty.map has no lines: rails and planes are inferred" err
	'
	[ "$(id -u)" = 0 ] && test_require_in_ci SETPRIV
	# as_nobody CMD...: CMD as user nobody, its stderr in ./err
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@" 2>err; }
	test_expect_success $P,SETPRIV 'devices: a rail map that is there but cannot be read is exit 3' '
		printf "mlx5_0 rail=0\n" >locked.map && chmod 600 locked.map &&
		test_expect_exit 3 as_nobody "$FABSCOPE" devices --rail-map "$PWD/locked.map" &&
		ptp_one_error err "locked.map" "Permission denied"
	'
fi

test_done
