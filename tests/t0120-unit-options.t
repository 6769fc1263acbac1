#!/usr/bin/env bash
test_description='core/options: every accepted form, every usage error, and --help rendered
from the same table (test-tool options has one option of every type)'
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL

sq="'"

# opt ARGS...: run test-tool options, stdout to out, stderr to err
opt() { "$TEST_TOOL" options "$@" >out 2>err; }

# value NAME VALUE: out holds the line "NAME VALUE"
value() { test_grep -x "$1 $2" out; }

# usage_error MESSAGE: err starts with "test-tool options: MESSAGE", out is empty
usage_error() {
	echo "test-tool options: $1" >expect &&
	head -n 1 err >actual &&
	test_cmp expect actual &&
	test_must_be_empty out
}

test_expect_success TEST_TOOL 'no arguments: the defaults' '
	opt &&
	cat >expect <<-\EOF &&
	bool 0
	quiet 0
	verbose 0
	int 7
	unbounded 0
	count 0
	size 0
	seconds 0
	string (unset)
	o (unset)
	EOF
	test_cmp expect out &&
	test_must_be_empty err
'

test_expect_success TEST_TOOL 'values: -x VAL, -xVAL, --long VAL, --long=VAL' '
	for args in "-i 42" "-i42" "--int 42" "--int=42"; do
		opt $args && value int 42 || return 1
	done &&
	opt -t "two words" && value string "two words" &&
	opt -ttext && value string text &&
	opt --string= && value string "" &&
	opt -o file && value o file &&
	opt -ofile && value o file
'

test_expect_success TEST_TOOL 'a path option refuses an empty string, a plain string takes it' '
	test_expect_code 2 opt -o "" &&
	usage_error "option ${sq}-o${sq} takes a path (FILE), not an empty string" &&
	test $(wc -l <err) = 1 &&
	opt -t "" && value string ""
'

test_expect_success TEST_TOOL 'every type: int range ends, count, size, seconds, list' '
	opt -i -5 && value int -5 &&
	opt --int=100 && value int 100 &&
	opt -i-5 && value int -5 &&
	opt -n 10K && value count 10000 &&
	opt --count=5000 && value count 5000 &&
	opt -s 64K && value size 65536 &&
	opt --size=1G && value size 1073741824 &&
	opt -D 250ms && value seconds 0.25 &&
	opt --seconds 0.5 && value seconds 0.5 &&
	opt -l a --list b -lc --list=d &&
	printf "list %s\n" a b c d >expect &&
	grep ^list out >actual &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'a value that is an option of the table is a forgotten value, not the value' '
	test_expect_code 2 opt -t --quiet &&
	usage_error "option ${sq}-t${sq} requires a value, but the next word is the option ${sq}--quiet${sq} (a value that begins with ${sq}-${sq}: write --string=VALUE)" &&
	test_expect_code 2 opt --list -b &&
	usage_error "option ${sq}--list${sq} requires a value, but the next word is the option ${sq}-b${sq} (a value that begins with ${sq}-${sq}: write --list=VALUE)" &&
	test_expect_code 2 opt -o --help &&
	usage_error "option ${sq}-o${sq} requires a value, but the next word is the option ${sq}--help${sq} (a value that begins with ${sq}-${sq}: write -oVALUE)" &&
	test_expect_code 2 opt -i --count=5 &&
	test_grep "the option .--count=5." err &&
	opt --string=--quiet && value string --quiet &&
	opt -t-b && value string -b &&
	opt -t - && value string - &&
	opt -t -z && value string -z &&
	opt -i -5 && value int -5
'

test_expect_success TEST_TOOL 'seconds: hex is not a duration' '
	test_expect_code 2 opt -D 0x10 &&
	test_grep "invalid value .0x10. for option .-D." err
'

test_expect_success TEST_TOOL 'booleans: repeated, bundled, -v counts up' '
	opt -b -b --quiet && value bool 1 && value quiet 1 &&
	opt -bvv && value bool 1 && value verbose 2 &&
	opt -v --verbose -v && value verbose 3 &&
	opt -vbi3 && value verbose 1 && value bool 1 && value int 3 &&
	opt -bvofile && value bool 1 && value o file
'

test_expect_success TEST_TOOL 'positionals anywhere, in order; "--" ends options; "-" is one' '
	opt one -b two --int=3 three -- -v --int=4 - &&
	cat >expect <<-\EOF &&
	bool 1
	quiet 0
	verbose 0
	int 3
	unbounded 0
	count 0
	size 0
	seconds 0
	string (unset)
	o (unset)
	arg one
	arg two
	arg three
	arg -v
	arg --int=4
	arg -
	EOF
	test_cmp expect out &&
	opt -- && test_grep ! ^arg out &&
	opt -- -- && value arg --
'

test_expect_success TEST_TOOL 'unknown long option: exit 2, named, then the usage lines' '
	test_expect_code 2 opt --nope=3 &&
	cat >expect <<-EOF &&
	test-tool options: unknown option ${sq}--nope${sq}
	usage: test-tool options [options] [--] [args...]
	   or: test-tool options --help
	Try ${sq}test-tool options --help${sq} for the options.
	EOF
	test_cmp expect err &&
	test_must_be_empty out &&
	# no abbreviations: a likely meaning is suggested, not taken
	test_expect_code 2 opt --in=3 &&
	usage_error "unknown option ${sq}--in${sq}; did you mean ${sq}--int${sq}?" &&
	test_expect_code 2 opt --Int=3 &&
	usage_error "unknown option ${sq}--Int${sq}; did you mean ${sq}--int${sq}?" &&
	test_expect_code 2 opt --strnig=x &&
	usage_error "unknown option ${sq}--strnig${sq}; did you mean ${sq}--string${sq}?" &&
	test_expect_code 2 opt --unbound=3 &&
	usage_error "unknown option ${sq}--unbound${sq}; did you mean ${sq}--unbounded${sq}?"
'

test_expect_success TEST_TOOL 'unknown short option, alone or in a bundle: exit 2, named' '
	test_expect_code 2 opt -q &&
	usage_error "unknown option ${sq}-q${sq}" &&
	test_grep "^usage: test-tool options" err &&
	test_expect_code 2 opt -bvq &&
	usage_error "unknown option ${sq}-q${sq}"
'

test_expect_success TEST_TOOL 'missing values: exit 2, the option and what it wants' '
	test_expect_code 2 opt --int &&
	usage_error "option ${sq}--int${sq} requires an integer" &&
	test_expect_code 2 opt -b -i &&
	usage_error "option ${sq}-i${sq} requires an integer" &&
	test_expect_code 2 opt --size &&
	usage_error "option ${sq}--size${sq} requires a size (e.g. 4096, 64K, 1M)" &&
	test_expect_code 2 opt -D &&
	usage_error "option ${sq}-D${sq} requires a number of seconds (e.g. 2, 0.5, 250ms)" &&
	test_expect_code 2 opt -bl &&
	usage_error "option ${sq}-l${sq} requires a value"
'

test_expect_success TEST_TOOL 'integers: out of range and junk are refused with the range' '
	for v in 101 -6 abc 5x "" 1.5 99999999999999999999; do
		test_expect_code 2 opt --int="$v" &&
		usage_error "invalid value ${sq}$v${sq} for option ${sq}--int${sq}: expected an integer from -5 to 100" ||
		return 1
	done &&
	test_expect_code 2 opt -i 101 &&
	usage_error "invalid value ${sq}101${sq} for option ${sq}-i${sq}: expected an integer from -5 to 100"
'

test_expect_success TEST_TOOL 'sizes, counts, seconds: junk and out of range are refused' '
	test_expect_code 2 opt --size=64X &&
	usage_error "invalid value ${sq}64X${sq} for option ${sq}--size${sq}: expected a size (e.g. 4096, 64K, 1M) from 1 to 1073741824" &&
	test_expect_code 2 opt -s 2G &&
	usage_error "invalid value ${sq}2G${sq} for option ${sq}-s${sq}: expected a size (e.g. 4096, 64K, 1M) from 1 to 1073741824" &&
	test_expect_code 2 opt -s 0 &&
	test_grep "invalid value .0. for option .-s." err &&
	test_expect_code 2 opt --count=0 &&
	usage_error "invalid value ${sq}0${sq} for option ${sq}--count${sq}: expected a count (e.g. 5000, 10K, 1M) of at least 1" &&
	test_expect_code 2 opt --count=1KB &&
	test_grep "invalid value .1KB. for option .--count." err &&
	test_expect_code 2 opt --seconds=0 &&
	usage_error "invalid value ${sq}0${sq} for option ${sq}--seconds${sq}: expected a number of seconds (e.g. 2, 0.5, 250ms), more than 0 and at most 1e7" &&
	test_expect_code 2 opt -D -1 &&
	test_grep "invalid value .-1. for option .-D." err
'

test_expect_success TEST_TOOL 'a value given to a boolean is refused' '
	test_expect_code 2 opt --bool=1 &&
	usage_error "option ${sq}--bool${sq} takes no value" &&
	test_expect_code 2 opt --quiet= &&
	usage_error "option ${sq}--quiet${sq} takes no value" &&
	test_expect_code 2 opt --verbose=2 &&
	usage_error "option ${sq}--verbose${sq} takes no value"
'

test_expect_success TEST_TOOL 'the first error wins; nothing is printed to stdout' '
	test_expect_code 2 opt --int=200 --nope &&
	usage_error "invalid value ${sq}200${sq} for option ${sq}--int${sq}: expected an integer from -5 to 100"
'

test_expect_success TEST_TOOL '--help: the whole table, grouped, wrapped at 80 columns; exit 0' '
	opt --help &&
	cat >expect <<-\EOF &&
	usage: test-tool options [options] [--] [args...]
	   or: test-tool options --help

	Parse the arguments with a table that holds every option type,
	then print each value and each positional argument.

	Switches
	    -b, --bool                a boolean
	        --quiet               a boolean with a long name only
	    -v, --verbose             say more (repeat for more)

	Values
	    -i, --int N               an integer from -5 to 100 (default 7)
	        --unbounded N         an integer from 0, without an upper bound
	    -n, --count N             a count, e.g. 5000, 10K, 1M
	    -s, --size SIZE           a size up to 1G, e.g. 4096, 64K, 1M
	    -D, --seconds SECONDS     a duration, e.g. 2, 0.5, 250ms
	    -t, --string TEXT         a string
	    -l, --list ITEM           a string that may be given again and again, each
	                              kept in order; this help text is long enough to
	                              be wrapped
	    -o FILE                   an option with a short name only

	    -h, --help                show this help
	EOF
	test_cmp expect out &&
	test_must_be_empty err &&
	awk "length > 79 { print \"too long: \" \$0; bad = 1 } END { exit bad }" out
'

test_expect_success TEST_TOOL '--help names every option of the table, whatever comes before it' '
	opt -b --int=3 -h &&
	cp out help &&
	for o in -b --bool --quiet -v --verbose -i --int --unbounded -n --count \
		-s --size -D --seconds -t --string -l --list -o -h --help; do
		test_grep -e "[ ,]$o[ ,]" -e "[ ,]$o\$" help || return 1
	done &&
	opt one --list=x -- --help &&
	value arg --help &&
	opt one --list=x --help two &&
	test_cmp help out
'

test_expect_success TEST_TOOL 'an int option without a maximum refuses values beyond INT_MAX instead of wrapping' '
	# OPT_INT with max 0 ("none"): strtoll accepts 4294967296, and
	# *(int *)o->value = (int)ll stores 0 without a word
	test_expect_code 2 opt --unbounded=4294967296 &&
	test_grep "invalid value .4294967296. for option .--unbounded." err
'

test_done
