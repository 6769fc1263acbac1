#!/usr/bin/env bash
test_description='transport buffers (xport_alloc): page-rounded below 2 MiB; from 2 MiB on
rounded to whole 2 MiB and eligible for transparent huge pages, so that the collectives and
bw buffers are not millions of 4 KiB pages (tests/helper/test-xport.c)'
. "$(dirname "$0")/test-lib.sh"

# (THP is not required in CI: a kernel that has it "never" is a real absence)
test_require_in_ci TEST_TOOL

# THP is a kernel build and boot option: "never" (or no THP at all) is a real absence
test_lazy_prereq THP '
	test -r /sys/kernel/mm/transparent_hugepage/enabled &&
	! grep -q "\[never\]" /sys/kernel/mm/transparent_hugepage/enabled
'

test_expect_success TEST_TOOL 'small buffers: whole pages, freed again' '
	"$TEST_TOOL" xport-alloc 1 4096 65537 >out &&
	test "$(wc -l <out)" = 3 &&
	awk "{sub(\"len=\", \"\", \$2); n = \$2 + 0; if (n % 4096 || n < \$1) exit 1}" out
'

test_expect_success TEST_TOOL 'from 2 MiB on: whole 2 MiB, freed again' '
	"$TEST_TOOL" xport-alloc 2097152 3145728 67108865 >out &&
	cat >expect <<-\EOT &&
	2097152 len=2097152
	3145728 len=4194304
	67108865 len=69206016
	EOT
	cut -d" " -f1,2 out >actual &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL,THP 'from 2 MiB on: eligible for huge pages (madvise)' '
	"$TEST_TOOL" xport-alloc 2097152 67108864 >out &&
	test "$(grep -c " thp=1 " out)" = 2
'

test_expect_success TEST_TOOL 'xport-alloc without a size is a usage error' '
	test_expect_code 2 "$TEST_TOOL" xport-alloc
'

test_done
