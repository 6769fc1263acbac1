#!/usr/bin/env bash
test_description='the rules of the source tree (ci/check-tree): includes point down the layers,
no realloc that loses its pointer, no guessed sign of a return code, no function over 200 lines
outside tests/, no file-scope variable assigned in two files, no file made but by core/outfile.c,
no data written into Markdown but through its escaping'
. "$(dirname "$0")/test-lib.sh"

check=$SRCDIR/ci/check-tree

# tree: a small tree of the given files (path, then its text on stdin), outside git
tree_file() {
	mkdir -p "tree/$(dirname "$1")" && cat >"tree/$1"
}

test_expect_success 'a clean small tree passes' '
	tree_file core/a.c <<-\EOF &&
	#include "a.h"
	int core_x;
	void a(void)
	{
		core_x = 1;
	}
	EOF
	tree_file report/r.c <<-\EOF &&
	#include "../core/a.h"
	#include "../records/read.h"
	#include "r.h"
	EOF
	perl "$check" -v tree >out 2>err &&
	test_must_be_empty out &&
	test_grep "2 files, 1 file-scope variables, 0 fault" err
'

test_expect_success 'an include up the layers, or sideways, is a fault' '
	tree_file pcap/p.c <<-\EOF &&
	#include "../report/report.h"
	#include "../transport/transport.h"
	#include "../core/error.h"
	#include "../plots/plot.h"
	EOF
	tree_file report/s.c <<-\EOF &&
	#include "../fleet/results.h"
	EOF
	tree_file tests/helper/t.c <<-\EOF &&
	#include "../../fleet/plan.h"
	EOF
	test_expect_code 1 perl "$check" tree >out &&
	test_grep "^pcap/p.c:1: layers: pcap/ (layer 2) includes \"../report/report.h\" of report/ (layer 4)" out &&
	test_grep "^pcap/p.c:2: layers: pcap/ (layer 2) includes \"../transport/transport.h\"" out &&
	test_grep "^report/s.c:1: layers: report/ (layer 4) includes \"../fleet/results.h\" of fleet/ (layer 4)" out &&
	test_line_count = 3 out &&
	rm -rf tree/pcap tree/report/s.c tree/tests
'

test_expect_success 'realloc into its own pointer, a guessed sign: faults; a checked one is not' '
	tree_file fleet/f.c <<-\EOF &&
	void f(struct x *c, int n)
	{
		c->jobs = realloc(c->jobs, n * sizeof(*c->jobs));
		np = realloc(c->jobs, n);	/* checked: fine */
		/* p = realloc(p, n) in a comment is fine */
		s = "q = realloc(q, 1)";
		return rc < 0 ? -rc : rc;
	}
	EOF
	test_expect_code 1 perl "$check" tree >out &&
	test_grep "^fleet/f.c:3: realloc: .c->jobs = realloc(c->jobs, ...). loses c->jobs" out &&
	test_grep "^fleet/f.c:7: exit codes: .rc < 0 ? -rc : rc. guesses a sign" out &&
	test_line_count = 2 out &&
	rm tree/fleet/f.c
'

test_expect_success 'a function of 201 lines is a fault, of 200 not, in tests/ neither' '
	{
		printf "int long_one(void)\n{\n" && for i in $(seq 201); do printf "\tx++;\n"; done && printf "}\n" &&
		printf "static int just_so(int a,\n\t\t   int b)\n{\n" && for i in $(seq 200); do printf "\tx++;\n"; done &&
		printf "}\n"
	} >long.c &&
	tree_file probes/l.c <long.c &&
	tree_file tests/helper/l.c <long.c &&
	test_expect_code 1 perl "$check" tree >out &&
	test_grep "^probes/l.c:1: length: long_one is 201 lines" out &&
	test_line_count = 1 out &&
	rm -r tree/probes tree/tests
'

# issue 41: every file is made by core/outfile.c (a checked directory, no link followed)
test_expect_success 'a file or directory made outside core/outfile.c is a fault; reading, and tests/, are not' '''
	tree_file report/w.c <<-\EOF &&
	void w(void)
	{
		FILE *f = fopen(path, "w");
		FILE *g = fopen(path, "re");
		int fd = open(path, O_WRONLY | O_CREAT, 0644);
		mkdir(dir, 0777);
		d = pcap_dump_open(h, name);
		FILE *a = fopen(path, mode);
		/* fopen(x, "w") and O_CREAT in a comment are fine */
		s = "mkdir(x)";
	}
	EOF
	tree_file core/outfile.c <<-\EOF &&
	int o(void)
	{
		return openat(d, n, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600) + mkdirat(d, n, 0777);
	}
	EOF
	tree_file tests/helper/t.c <<-\EOF &&
	void t(void)
	{
		fopen("x", "w");
	}
	EOF
	test_expect_code 1 perl "$check" tree >out &&
	test_grep "^report/w.c:3: files: fopen for anything but reading makes or truncates a file outside core/outfile.c" out &&
	test_grep "^report/w.c:5: files: O_CREAT makes a file or directory outside core/outfile.c" out &&
	test_grep "^report/w.c:6: files: mkdir makes" out &&
	test_grep "^report/w.c:7: files: pcap_dump_open makes" out &&
	test_grep "^report/w.c:8: files: fopen for anything but reading" out &&
	test_line_count = 5 out &&
	rm -r tree/report/w.c tree/core/outfile.c tree/tests
'''

# issue 41: an untrusted double is cast to an integer only through record_int (range checked)
test_expect_success 'a cast of record_num or json_number_value to an integer is a fault; in tests/ not' '''
	tree_file records/c.c <<-\EOF &&
	void c(json_t *rec)
	{
		int a = (int)record_num(rec, "src.rail", 0);
		uint64_t b = (uint64_t) json_number_value(x);
		double d = record_num(rec, "x", 0);
		int e = record_int(rec, "round", 0, 0, 7);
	}
	EOF
	tree_file tests/helper/c.c <<-\EOF &&
	int t(json_t *rec)
	{
		return (int)record_num(rec, "x", 0);
	}
	EOF
	test_expect_code 1 perl "$check" tree >out &&
	test_grep "^records/c.c:3: casts: (int)record_num(...) casts an untrusted number" out &&
	test_grep "^records/c.c:4: casts: (uint64_t)json_number_value(...)" out &&
	test_line_count = 2 out &&
	rm -r tree/records/c.c tree/tests
'''

# issue 41: in report/, data reaches Markdown only through rdoc_text (escaped)
test_expect_success 'report/: rdoc_lit of anything but a string literal, rdoc_litf of a string, are faults' '''
	tree_file report/m.c <<-\EOF &&
	void m(struct rdoc *d, const char *name, double v)
	{
		rdoc_lit(d, name);
		rdoc_lit(d, "**");
		rdoc_litf(d, "%s: %.1f", name, v);
		rdoc_litf(d, "%.1f of %d", v, 3);
		rdoc_sym(d, " -> ", " &rarr; ");
		rdoc_sym(d, name, " &rarr; ");
		rdoc_lit(d, "a long text "
			 "on two lines");
	}
	EOF
	test_expect_code 1 perl "$check" tree >out &&
	test_grep "^report/m.c:3: markup: rdoc_lit writes its text into Markdown as it stands" out &&
	test_grep "^report/m.c:5: markup: rdoc_litf formats numbers only" out &&
	test_grep "^report/m.c:8: markup: rdoc_sym writes its text into Markdown as it stands" out &&
	test_line_count = 3 out &&
	rm tree/report/m.c
'''

test_expect_success 'a file-scope variable assigned in two files is a fault; read in many is not' '
	tree_file core/b.c <<-\EOF &&
	void b(void)
	{
		core_x++;
		if (core_x == 2 && &core_x)
			g(core_x);
	}
	EOF
	tree_file fleet/g.c <<-\EOF &&
	static int mine;
	void g(void)
	{
		mine = core_x;
	}
	EOF
	test_expect_code 1 perl "$check" tree >out &&
	test_grep "^core/a.c:2: globals: .core_x. is written by 2 files (core/a.c:5, core/b.c:3)" out &&
	test_line_count = 1 out
'

test_expect_success 'the tree keeps every rule' '
	{ perl "$check" -v "$SRCDIR" >out 2>err || { cat out; false; }; } &&
	test_must_be_empty out &&
	test_grep "0 fault" err
'

test_done
