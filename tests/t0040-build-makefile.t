#!/usr/bin/env bash
test_description='the Makefile: goals of a pristine machine never probe, the probes say what to
install, WITH_VERBS, CPPFLAGS and DATADIR reach the build, install and uninstall leave nothing behind'
. "$(dirname "$0")/test-lib.sh"

test_lazy_prereq MAKE 'command -v make'
test_lazy_prereq PKGS 'command -v pkg-config && pkg-config --exists jansson libpcap libcurl sqlite3'
test_lazy_prereq VERBS_DEV 'pkg-config --exists libibverbs'
test_require_in_ci MAKE PKGS VERBS_DEV

# m ARGS...: make in the source tree, as a pristine machine without pkg-config would run it
m_bare() { make -C "$SRCDIR" --no-print-directory PKG_CONFIG=/nonexistent/pkg-config "$@"; }

test_expect_success MAKE 'help, clean, deps and uninstall work without pkg-config or any -dev package' '
	m_bare help >help.out &&
	test_grep "make demo" help.out &&
	test_grep "make check" help.out &&
	test_grep "WITH_VERBS" help.out &&
	m_bare -n clean >clean.out &&
	test_grep "rm -rf" clean.out &&
	m_bare -n deps >deps.out &&
	test_grep -x "ci/install-deps all" deps.out &&
	m_bare -n uninstall DESTDIR=/nonexistent >uninst.out &&
	test_grep "rm -f /nonexistent/usr/local/bin/fabscope" uninst.out
'

test_expect_success MAKE 'demo and check install first; only their sub-make, after the installs, probes' '
	{ m_bare -n demo >demo.out 2>&1 || true; } &&
	head -n 1 demo.out >first &&
	test_grep -x "ci/install-deps demo" first &&
	{ m_bare -n check >check.out 2>&1 || true; } &&
	head -n 1 check.out >first &&
	test_grep -x "ci/install-deps all" first
'

test_expect_success MAKE 'building without the packages: one line that names the package and make deps' '
	test_expect_code 2 m_bare -n all 2>err &&
	test_grep "jansson not found (/nonexistent/pkg-config is missing too): as root run .make deps." err &&
	test_grep "apt-get install libjansson-dev" err
'

test_expect_success MAKE,PKGS 'WITH_VERBS: yes, no, auto and a bad value' '
	printf "%s\n" "#!/bin/sh" "for a; do case \$a in libibverbs) exit 1 ;; esac; done" \
		"exec pkg-config \"\$@\"" >no-verbs-pkg-config &&
	chmod +x no-verbs-pkg-config &&
	test_expect_code 2 make -C "$SRCDIR" -n WITH_VERBS=maybe 2>err &&
	test_grep "WITH_VERBS=.maybe.: give yes, no or auto" err &&
	make -C "$SRCDIR" -n O="$PWD/b-no" WITH_VERBS=no "$PWD/b-no/fabscope" >no.out 2>&1 &&
	test_grep ! "verbs\.c" no.out &&
	test_grep ! "DHAVE_VERBS" no.out &&
	make -C "$SRCDIR" -n O="$PWD/b-no" WITH_VERBS=no PKG_CONFIG="$PWD/no-verbs-pkg-config" "$PWD/b-no/fabscope" >no.out 2>&1 &&
	test_grep ! "warning" no.out &&
	make -C "$SRCDIR" -n O="$PWD/b-auto" PKG_CONFIG="$PWD/no-verbs-pkg-config" "$PWD/b-auto/fabscope" >auto.out 2>&1 &&
	test_grep "libibverbs not found: building without the verbs transport" auto.out &&
	test_grep ! "DHAVE_VERBS" auto.out &&
	test_expect_code 2 make -C "$SRCDIR" -n O="$PWD/b-yes" WITH_VERBS=yes PKG_CONFIG="$PWD/no-verbs-pkg-config" \
		"$PWD/b-yes/fabscope" 2>yes.err &&
	test_grep "libibverbs not found" yes.err &&
	test_grep "libibverbs-dev" yes.err
'

test_expect_success MAKE,PKGS,VERBS_DEV 'CPPFLAGS, CFLAGS, LDFLAGS and DATADIR reach the compiler and linker' '
	make -C "$SRCDIR" -n O="$PWD/b-flags" WITH_VERBS=yes CPPFLAGS=-DCPP_MARK CFLAGS="-O1 -DCFLAGS_MARK" \
		LDFLAGS=-Wl,-z,now DATADIR=/opt/fs-data "$PWD/b-flags/fabscope" >flags.out 2>&1 &&
	grep " -c -o $PWD/b-flags/core/main.o " flags.out >cc.line &&
	test_grep -e "-DCPP_MARK" cc.line &&
	test_grep -e "-DCFLAGS_MARK" cc.line &&
	test_grep -e "-DHAVE_VERBS" cc.line &&
	test_grep -e "-DFABSCOPE_DATADIR=.\"/opt/fs-data\"." cc.line &&
	grep " -o $PWD/b-flags/fabscope " flags.out >ld.line &&
	test_grep -e "-Wl,-z,now" ld.line
'

test_expect_success MAKE,PKGS 'install PREFIX=/usr DESTDIR: the binary finds its templates in DATADIR; uninstall removes all' '
	make -C "$SRCDIR" -s -j2 O="$PWD/b-inst" PREFIX=/usr WITH_VERBS=no "$PWD/b-inst/fabscope" >build.out 2>&1 &&
	make -C "$SRCDIR" -s -j2 O="$PWD/b-inst" PREFIX=/usr WITH_VERBS=no DESTDIR="$PWD/stage" install >inst.out 2>&1 &&
	(cd stage && find . -type f | sort) >files &&
	test_grep -x "./usr/bin/fabscope" files &&
	test_grep -x "./usr/share/man/man1/fabscope.1" files &&
	test_grep -x "./usr/share/man/man1/fabscope-bw.1" files &&
	test_grep -x "./usr/share/man/man5/fabscope-plan.5" files &&
	test_grep -x "./usr/share/man/man7/fabscope-records.7" files &&
	test_grep -x "./usr/share/fabscope/plots/lanes.gp" files &&
	test_grep -x "./usr/share/doc/fabscope/examples/acceptance.ini" files &&
	strings stage/usr/bin/fabscope >strings.out &&
	test_grep -x "/usr/share/fabscope" strings.out &&
	# not a test build: it cannot even name the test hooks, let alone read them
	test_grep ! "FABSCOPE_TEST_" strings.out &&
	stage/usr/bin/fabscope version >version.out &&
	test_grep ! "test hooks" version.out &&
	make -C "$SRCDIR" -s -j2 O="$PWD/b-inst" PREFIX=/usr DESTDIR="$PWD/stage" uninstall >uninst.out 2>&1 &&
	(cd stage && find . -type f) >left &&
	test_must_be_empty left
'

test_expect_success MAKE,PKGS 'TEST_HOOKS: the test targets build a test build; a bad value is refused' '
	test_expect_code 2 make -C "$SRCDIR" -n TEST_HOOKS=maybe 2>err &&
	test_grep "TEST_HOOKS=.maybe.: give yes or no" err &&
	make -C "$SRCDIR" -n O="$PWD/b-hooks" TEST_HOOKS=yes "$PWD/b-hooks/fabscope" >hooks.out 2>&1 &&
	test_grep -e "-DFABSCOPE_TEST_HOOKS" hooks.out &&
	make -C "$SRCDIR" -n test >t.out 2>&1 &&
	test_grep "TEST_HOOKS=yes all" t.out
'

test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_require_in_ci GNUPLOT

test_expect_success MAKE,PKGS,GNUPLOT 'a binary outside a build tree takes its templates from the compiled-in DATADIR' '
	make -C "$SRCDIR" -s -j2 O="$PWD/b-dd" DATADIR="$PWD/dd" WITH_VERBS=no "$PWD/b-dd/fabscope" >build.out 2>&1 &&
	mkdir -p bin && cp b-dd/fabscope bin/ &&
	cap="$TEST_DIRECTORY/data/pcap/rxe-clean-write.pcap" &&
	test_expect_code 3 env -u FABSCOPE_PLOTS bin/fabscope pcap "$cap" --plot out.svg >pcap.out 2>pcap.err &&
	test_grep "gnuplot templates are not in $PWD/dd/plots" pcap.err &&
	mkdir -p dd && cp -r "$SRCDIR/plots" dd/ &&
	env -u FABSCOPE_PLOTS bin/fabscope pcap "$cap" --plot out.svg >pcap.out 2>pcap.err &&
	test_grep ! "templates" pcap.err &&
	test -s out.svg
'

test_done
