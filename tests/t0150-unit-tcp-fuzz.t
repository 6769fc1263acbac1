#!/usr/bin/env bash
test_description='the TCP transport against hostile peers: seeded random and mutated frames
from a raw socket into a flow (tests/helper/test-tcp-fuzz.c); no crash, no sanitizer report, every
posted receive comes back exactly once, no receive larger than its buffer'
# asan: always: feeds untrusted bytes to C code: fuzzed frames of the TCP transport
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL

for seed in 1 2 3; do
	test_expect_success TEST_TOOL "300 hostile peers, seed $seed" '
		"$TEST_TOOL" tcp-fuzz 300 '$seed' >out 2>err &&
		test_grep "^runs 300 refused-by-transport [0-9]" out &&
		test_must_be_empty err
	'
done

test_expect_success TEST_TOOL 'the transport refuses some peers and lives on with others' '
	"$TEST_TOOL" tcp-fuzz 300 4 >out &&
	refused=$(awk "{print \$4}" out) &&
	test "$refused" -gt 0 &&
	test "$refused" -lt 300
'

test_expect_success TEST_TOOL 'tcp-fuzz without N and SEED is a usage error' '
	test_expect_code 2 "$TEST_TOOL" tcp-fuzz
'

test_done
