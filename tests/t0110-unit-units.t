#!/usr/bin/env bash
test_description='core/units: sizes (binary multiples), counts (x1000), seconds, and the
size formatter that prints what the parser reads back'
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL

test_expect_success TEST_TOOL 'sizes: binary multiples, any case, K/KiB/KB spellings' '
	"$TEST_TOOL" size 64K 64k 64KiB 64KB 64kib 1M 8MiB 1G 1T 2 0 1B 4096B \
		18446744073709551615 16777215T >actual &&
	cat >expect <<-\EOF &&
	65536
	65536
	65536
	65536
	65536
	1048576
	8388608
	1073741824
	1099511627776
	2
	0
	1
	4096
	18446744073709551615
	18446742974197923840
	EOF
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'sizes: empty, junk, signs, fractions, overflow are errors' '
	"$TEST_TOOL" size "" abc 12x -1 +1 " 1" 1.5K 1Ki 1BB 1KiBx K 99999999999T \
		18446744073709551616 16777216T >actual &&
	for i in $(seq 14); do echo error || return 1; done >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'counts: decimal multiples, no B' '
	"$TEST_TOOL" count 5000 10K 10k 1M 1G 0 1B 10KB 1KiB 1.5K -1 "" >actual &&
	cat >expect <<-\EOF &&
	5000
	10000
	10000
	1000000
	1000000000
	0
	error
	error
	error
	error
	error
	error
	EOF
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'seconds: decimals, s and ms; zero, negative and junk are errors' '
	"$TEST_TOOL" seconds 2 0.5 250ms 1s 1.5s 1e-3 10000000 \
		0 0s 0ms -1 abc "" 1m 2S 10000001 inf nan >actual &&
	cat >expect <<-\EOF &&
	2
	0.5
	0.25
	1
	1.5
	0.001
	10000000
	error
	error
	error
	error
	error
	error
	error
	error
	error
	error
	error
	EOF
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'fmt-size: the largest exact binary unit, never rounded' '
	"$TEST_TOOL" fmt-size 0 1 1023 1024 1536 65536 1572864 1048576 1073741824 \
		1099511627776 1125899906842624 18446744073709551615 >actual &&
	cat >expect <<-\EOF &&
	0
	1
	1023
	1K
	1536
	64K
	1536K
	1M
	1G
	1T
	1024T
	18446744073709551615
	EOF
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'fmt-size output parses back to the same size' '
	for n in 0 1 2 1000 1023 1024 4096 65536 65537 1572864 8388608 1073741824 \
		3221225472 1099511627776 1125899906842624 9223372036854775808 \
		18446744073709551615 18446742974197923840; do
		s=$("$TEST_TOOL" fmt-size $n) &&
		echo "$n -> $s" &&
		test "$("$TEST_TOOL" size "$s")" = "$n" || return 1
	done
'

test_done
