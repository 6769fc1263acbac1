# fabscope - one non-recursive Makefile.
#
#   make                 build ./fabscope and the test helper
#   make demo            install what the demo needs (as root), build, run a local multi-agent
#                        plan on an embedded default and write its report (demo-out/)
#   make check           install everything the tiers use (as root), build, run every tier at
#                        once (tests/run-tests): unit, CLI, netns, Soft-RoCE VM, the ASan/UBSan
#                        selection (tests/asan-tests), the pristine-machine tier (a debootstrap
#                        root: the quick start, the .deb)
#   make test            the fast tier that needs no root and no test bed (t0xxx, t1xxx)
#   make test-all        every functional tier (TESTS=... to pick files)
#   make test-asan       the ASan + UBSan selection of the functional tiers (build-asan/);
#                        make test-asan-all runs every functional file so
#   make test-fresh      the pristine-machine tier alone (root, network to the Debian mirror)
#   make coverage        line coverage of the functional tiers (build-cov/, gcovr): a table per
#                        folder, the least covered files, and the ASan selection made anew
#   make deps            install every package the tiers use (ci/install-deps all; as root)
#   make bench           ratios against real peers (iperf3, qperf, tshark, Open MPI, fping), and the
#                        monitor's localization on a simulated fabric; needs root
#   make install         PREFIX=/usr/local DESTDIR= : the binary, the manual pages (man/: man1,
#                        man5, man7), the plot templates (DATADIR), examples and the monitor's
#                        deployment files (DOCDIR); make uninstall removes them
#   make doc             check that every manual page renders without groff warnings
#   make fuzz            libFuzzer targets (clang), e.g. tests/fuzz/fuzz-dissect
#   make help            this text
#
# Knobs: V=1 (show commands), DEVELOPER=1 (warnings are errors), O=DIR (build into DIR),
# SANITIZE=1 (ASan + UBSan, float-to-integer overflow too), WITH_VERBS=yes|no|auto (the verbs transport: required, left out,
# or built in when libibverbs-dev is there), WITH_LB=yes|no|auto (the test bed's BPF
# programs: the load-balancing modes of ci/lb, the random loss of ci/loss; clang and libbpf-dev), PREFIX, DATADIR (compiled in: where the plot
# templates are found), CFLAGS, CPPFLAGS, LDFLAGS (dpkg-buildflags' are honoured), TESTS
# (the test files of test/test-all/test-asan), FRESH_TIER=no (make check without the pristine
# tier), TEST_JOBS (test files at once; default twice the CPUs), TEST_FLAGS (tests/run-tests'
# options, default --timer), COVERAGE=1 (a --coverage build), TEST_HOOKS=yes (a test build:
# the binary reads the FABSCOPE_TEST_* variables; the test targets build so, plain make and
# make install never); local overrides in config.mak.

-include config.mak

CC ?= cc
PKG_CONFIG ?= pkg-config
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/fabscope
DOCDIR ?= $(PREFIX)/share/doc/fabscope
O ?= .
VERSION := 0.1.0

CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes \
	    -Wstrict-prototypes -Wpointer-arith -Wno-unused-parameter
ifdef DEVELOPER
WARNINGS += -Werror
endif
TEST_HOOKS ?= no
ifeq ($(TEST_HOOKS),yes)
HOOK_CFLAGS := -DFABSCOPE_TEST_HOOKS
else ifneq ($(TEST_HOOKS),no)
$(error TEST_HOOKS='$(TEST_HOOKS)': give yes or no)
endif
ifdef COVERAGE
CFLAGS += -O0 --coverage
LDFLAGS += --coverage
endif
ifdef SANITIZE
CFLAGS += -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined,float-cast-overflow \
	  -DGET_PARANOID
LDFLAGS += -fsanitize=address,undefined,float-cast-overflow
endif
ALL_CFLAGS = -std=gnu11 $(CPPFLAGS) $(CFLAGS) $(WARNINGS) -MMD -MP -D_GNU_SOURCE \
	     -DFABSCOPE_VERSION='"$(VERSION)"' -DFABSCOPE_DATADIR='"$(DATADIR)"' $(HOOK_CFLAGS) $(DEP_CFLAGS)

# ---- dependencies, probed with pkg-config only when something is compiled
# Goals that must work on a machine without the -dev packages (a pristine Debian: `make demo`
# installs them first, then builds in a sub-make) skip the probes.
NOPROBE_GOALS := deps demo check clean distclean help uninstall test-fresh doc
PROBE := yes
ifneq ($(MAKECMDGOALS),)
ifeq ($(filter-out $(NOPROBE_GOALS),$(MAKECMDGOALS)),)
PROBE := no
endif
endif

# pkg_need NAME,PACKAGE: a required library, or stop with what to install
pkg_have = $(shell $(PKG_CONFIG) --exists $(1) 2>/dev/null && echo y)
pkg_need = $(if $(call pkg_have,$(1)),,$(error $(1) not found$(if $(shell command -v $(PKG_CONFIG)),, ($(PKG_CONFIG) is missing too)): as root run 'make deps' (every tier's packages) or 'ci/install-deps build' (what building needs), or apt-get install $(2)))

ifeq ($(PROBE),yes)
# required: a JSON library (jansson)
$(call pkg_need,jansson,libjansson-dev)
DEP_CFLAGS += $(shell $(PKG_CONFIG) --cflags jansson)
LIBS += $(shell $(PKG_CONFIG) --libs jansson)

# required: Nettle for HMAC-SHA256 (the control channel's handshake and message MACs)
$(call pkg_need,nettle,nettle-dev)
DEP_CFLAGS += $(shell $(PKG_CONFIG) --cflags nettle)
LIBS += $(shell $(PKG_CONFIG) --libs nettle)

# required: libpcap for live captures (probe pfc) and the pcap/ dissectors
$(call pkg_need,libpcap,libpcap-dev)
DEP_CFLAGS += $(shell $(PKG_CONFIG) --cflags libpcap)
LIBS += $(shell $(PKG_CONFIG) --libs libpcap)

# required: SQLite for the history of runs (fabscope history, report --history)
$(call pkg_need,sqlite3,libsqlite3-dev)
DEP_CFLAGS += $(shell $(PKG_CONFIG) --cflags sqlite3)
LIBS += $(shell $(PKG_CONFIG) --libs sqlite3)

# required: libcurl for pushing results (Pushgateway, webhook); report/push.c loads it
# (libcurl.so.4) when it first needs it, so every other command starts without it and its
# thirty libraries.  Only its headers are used at build time: a package must declare the
# runtime library (debian/control: libcurl4), which dpkg-shlibdeps cannot see.
$(call pkg_need,libcurl,libcurl4-openssl-dev)
DEP_CFLAGS += $(shell $(PKG_CONFIG) --cflags libcurl)

# required: libmicrohttpd, the HTTP server of `fabscope monitor` (/metrics, /healthz)
$(call pkg_need,libmicrohttpd,libmicrohttpd-dev)
DEP_CFLAGS += $(shell $(PKG_CONFIG) --cflags libmicrohttpd)
LIBS += $(shell $(PKG_CONFIG) --libs libmicrohttpd)

# the verbs transport (rdma-core's libibverbs): WITH_VERBS=yes (required), no (left out),
# auto (built in when libibverbs-dev is there, and a warning says so when it is not)
WITH_VERBS ?= auto
ifeq ($(WITH_VERBS),yes)
$(call pkg_need,libibverbs,libibverbs-dev)
HAVE_VERBS := y
else ifeq ($(WITH_VERBS),auto)
HAVE_VERBS := $(call pkg_have,libibverbs)
ifneq ($(HAVE_VERBS),y)
$(warning libibverbs not found: building without the verbs transport (-t verbs); install libibverbs-dev, or say WITH_VERBS=no to build without it quietly)
endif
else ifneq ($(WITH_VERBS),no)
$(error WITH_VERBS='$(WITH_VERBS)': give yes, no or auto)
endif
ifeq ($(HAVE_VERBS),y)
DEP_CFLAGS += -DHAVE_VERBS $(shell $(PKG_CONFIG) --cflags libibverbs)
LIBS += $(shell $(PKG_CONFIG) --libs libibverbs)
VERBS_SRC := transport/verbs.c transport/verbs-qp.c
endif

# the test bed's BPF programs, clang -target bpf: its load-balancing modes (ci/lb: a tc program
# and its loader, libbpf) and its random loss (ci/loss: a tc program that tc loads):
# WITH_LB=yes (required), no (left out), auto (built when clang and libbpf-dev are there)
WITH_LB ?= auto
BPF_CLANG ?= clang
ifeq ($(WITH_LB),yes)
$(call pkg_need,libbpf,libbpf-dev)
$(if $(shell command -v $(BPF_CLANG)),,$(error $(BPF_CLANG) not found: the BPF programs of ci/lb need clang (apt-get install clang)))
HAVE_LB := y
else ifeq ($(WITH_LB),auto)
HAVE_LB := $(if $(shell command -v $(BPF_CLANG)),$(call pkg_have,libbpf))
else ifneq ($(WITH_LB),no)
$(error WITH_LB='$(WITH_LB)': give yes, no or auto)
endif
endif
LIBS += -lm -ldl

# the PFC capture reads in a thread of its own
DEP_CFLAGS += -pthread
LIBS += -pthread

ifeq ($(V),1)
Q :=
QCC :=
QLD :=
else
Q := @
QCC = @echo '   CC $@';
QLD = @echo '   LD $@';
endif

CORE_SRC := core/error.c core/clock.c core/units.c core/stats.c core/options.c core/names.c core/lanes.c \
	    core/net.c core/wire.c core/record.c core/output.c core/hmac.c core/shquote.c \
	    core/auth.c core/alloc.c core/slurp.c core/outfile.c
RECORDS_SRC := records/read.c records/result.c records/store.c records/analyze.c records/retest.c \
	       records/polar.c
PLOTS_SRC := plots/plot.c
XPORT_SRC := transport/transport.c transport/tcp.c transport/tcp-flow.c transport/tcp-info.c transport/devices.c transport/version.c transport/ud.c $(VERBS_SRC)
BENCH_SRC := bench/ptp.c bench/ptp-busy.c bench/ptp-accept.c bench/bw.c bench/lat.c
FLEET_SRC := fleet/plan.c fleet/plan-keys.c fleet/plan-hosts.c fleet/plan-sched.c fleet/agent.c \
	     fleet/coord.c fleet/coord-job.c fleet/coord-phase.c fleet/coord-check.c fleet/launch.c fleet/results.c \
	     fleet/run.c fleet/run-topo.c fleet/coord-retest.c fleet/coord-polar.c fleet/plan-est.c
REPORT_SRC := report/push.c report/doc.c report/model.c report/aggregate.c report/worst.c report/design.c report/cabling.c report/modes.c report/thresh.c report/checks.c report/verdict.c report/tested.c report/plots.c report/render.c report/prom.c report/polar.c report/pfc.c report/coll.c report/coll-render.c \
	      report/coll-export.c report/coll-checks.c report/coll-plot.c report/cmd.c \
	      report/history-store.c report/history-diff.c report/history-render.c report/history-cmd.c
PROBES_SRC := probes/polar.c probes/polar-judge.c probes/probe.c probes/probe-polar.c probes/probe-pfc.c probes/trace.c \
	      probes/counters.c probes/counters-names.c probes/counters-ethtool.c probes/counters-snap.c \
	      probes/pfc.c probes/pfcap.c
COLL_SRC := collectives/comm.c collectives/xfer.c collectives/allreduce.c collectives/alltoall.c \
	    collectives/cmd.c
TOPO_SRC := topology/intent.c topology/dot.c topology/ecmp.c topology/check.c topology/slurm.c topology/verify.c discover/topo.c \
	discover/show.c discover/lldpd.c discover/judge.c
PCAP_SRC := pcap/tok.c pcap/macctl.c pcap/lldp.c pcap/lldp-listen.c pcap/roce.c pcap/dissect.c pcap/live.c pcap/capture.c pcap/capture-files.c pcap/flow.c pcap/reader.c pcap/analyze.c
MONITOR_SRC := monitor/hist.c monitor/peers.c monitor/probe.c monitor/probe-ud.c monitor/expo.c monitor/http.c monitor/nic.c \
	       monitor/agent.c monitor/localize.c monitor/vote.c monitor/verdict.c monitor/pipeline.c \
	       monitor/promtext.c monitor/scrape.c monitor/promql.c monitor/analyze.c monitor/cmd.c
MODEL_SRC := model/maxmin.c model/fabric.c model/solve.c model/shape.c fleet/model-cmd.c
LIB_SRC := $(MODEL_SRC) $(CORE_SRC) $(RECORDS_SRC) $(XPORT_SRC) $(BENCH_SRC) $(FLEET_SRC) $(REPORT_SRC) $(PROBES_SRC) \
	   $(PCAP_SRC) $(COLL_SRC) $(PLOTS_SRC) $(TOPO_SRC) $(MONITOR_SRC)
MAIN_SRC := core/main.c
TOOL_SRC := tests/helper/test-tool.c tests/helper/test-stats.c tests/helper/test-units.c \
	    tests/helper/test-shquote.c tests/helper/test-quote.c tests/helper/test-options.c tests/helper/test-record.c \
	    tests/helper/test-wire.c tests/helper/test-tcp-fuzz.c tests/helper/test-xport.c \
	    tests/helper/test-fleet-fuzz.c tests/helper/test-fleet-sim.c tests/helper/test-plan.c tests/helper/test-polar.c tests/helper/test-model.c \
	    tests/helper/test-hmac.c tests/helper/test-push.c tests/helper/test-trace.c \
	    tests/helper/test-pfc.c tests/helper/test-macctl.c tests/helper/test-lldp.c tests/helper/test-lldpd.c tests/helper/test-topo.c tests/helper/test-pfcap.c \
	    tests/helper/test-dissect.c tests/helper/test-dissect-fuzz.c tests/helper/test-nightly.c tests/helper/test-monitor.c \
	    tests/helper/test-localize.c tests/helper/test-promtext.c \
	    tests/helper/dissect-check.c tests/helper/pktgen.c tests/helper/tool-util.c

LIB_OBJ := $(LIB_SRC:%.c=$(O)/%.o)
MAIN_OBJ := $(MAIN_SRC:%.c=$(O)/%.o)
TOOL_OBJ := $(TOOL_SRC:%.c=$(O)/%.o)
ALL_OBJ := $(LIB_OBJ) $(MAIN_OBJ) $(TOOL_OBJ)

PROGRAMS := $(O)/fabscope $(O)/tests/helper/test-tool
ifeq ($(HAVE_LB),y)
PROGRAMS += $(O)/ci/lb/fabric-lb $(O)/ci/lb/lb.bpf.o $(O)/ci/loss/loss.bpf.o
endif

all: $(PROGRAMS)

$(O)/fabscope: $(LIB_OBJ) $(MAIN_OBJ)
	$(QLD)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(O)/tests/helper/test-tool: $(LIB_OBJ) $(TOOL_OBJ)
	$(QLD)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(O)/ci/lb/fabric-lb: ci/lb/fabric-lb.c ci/lb/lb-common.h $(O)/.build-flags
	@mkdir -p $(dir $@)
	$(QLD)$(CC) -std=gnu11 $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(shell $(PKG_CONFIG) --cflags libbpf) \
		$(LDFLAGS) -o $@ $< $(shell $(PKG_CONFIG) --libs libbpf)

# the asm/ headers of <linux/bpf.h> live in the multiarch include directory
$(O)/ci/lb/lb.bpf.o: ci/lb/lb.bpf.c ci/lb/lb-common.h
	@mkdir -p $(dir $@)
	$(QCC)$(BPF_CLANG) -O2 -g -target bpf -I/usr/include/$(shell $(CC) -dumpmachine) \
		-Wall -Werror -c -o $@ $<

$(O)/ci/loss/loss.bpf.o: ci/loss/loss.bpf.c
	@mkdir -p $(dir $@)
	$(QCC)$(BPF_CLANG) -O2 -g -target bpf -I/usr/include/$(shell $(CC) -dumpmachine) \
		-Wall -Werror -c -o $@ $<

# rebuild everything when the flags change (a new optional part, SANITIZE=1)
$(O)/.build-flags: FORCE
	@mkdir -p $(O)
	@echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(LIBS)' | cmp -s - $@ || \
		echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(LIBS)' >$@

$(O)/%.o: %.c $(O)/.build-flags
	@mkdir -p $(dir $@)
	$(QCC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

-include $(ALL_OBJ:.o=.d)

# ---- fuzzing: libFuzzer targets, built with clang (make fuzz; tests/t0250-unit-pcap-fuzz.t) ----
FUZZ_CC ?= clang
FUZZ_CFLAGS ?= -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -DGET_PARANOID
FUZZ_DISSECT_SRC := tests/fuzz/fuzz-dissect.c tests/helper/dissect-check.c pcap/dissect.c pcap/tok.c \
		    pcap/roce.c pcap/macctl.c pcap/flow.c pcap/lldp.c
FUZZ_TARGETS := $(O)/tests/fuzz/fuzz-dissect

fuzz: $(FUZZ_TARGETS)

$(O)/tests/fuzz/fuzz-dissect: $(FUZZ_DISSECT_SRC) pcap/dissect.h pcap/get.h pcap/macctl.h pcap/flow.h pcap/tok.h pcap/lldp.h \
			      tests/helper/dissect-check.h
	@mkdir -p $(dir $@)
	$(QLD)$(FUZZ_CC) -std=gnu11 $(FUZZ_CFLAGS) $(WARNINGS) -D_GNU_SOURCE \
		$(shell $(PKG_CONFIG) --cflags libpcap) -o $@ $(FUZZ_DISSECT_SRC) -lm

# ---- tests ----
# Tiers: unit and CLI (t0xxx, t1xxx: no root), netns (t2xxx, root), Soft-RoCE VM (t3xxx,
# qemu), ASan/UBSan (the files of tests/asan-tests again: chosen by line coverage, see
# tests/README), pristine machine (t4xxx: a debootstrap root, once, not under ASan).  CI=true
# turns a prerequisite CI can provide into a failure.  tests/run-tests runs the files in
# parallel, longest first, serialising those that hold the same thing (test_holds); TEST_JOBS
# sets how many at once (default 2 per CPU).
RUN_TESTS ?= tests/run-tests
TEST_FLAGS ?= --timer
TEST_JOBS ?=
RUN_TESTS_J = $(RUN_TESTS) $(if $(TEST_JOBS),-j $(TEST_JOBS)) $(TEST_FLAGS)
TESTS ?= tests/t[0-3]*.t
FAST_TESTS ?= tests/t0*.t tests/t1*.t
FRESH_TESTS ?= tests/t4*.t
FRESH_TIER ?= yes
# the ASan tier: the files tests/asan-tests names (made by make coverage), those of TESTS
ASAN_TESTS ?= $(filter $(wildcard $(TESTS)),$(shell sed 's/\#.*//' tests/asan-tests 2>/dev/null))
BUILD_ASAN = $(MAKE) O=build-asan SANITIZE=1 DEVELOPER=1 TEST_HOOKS=yes \
	     WITH_VERBS=$(if $(filter y,$(HAVE_VERBS)),yes,$(WITH_VERBS)) all

deps:
	@ci/install-deps all

# what dh_auto_test runs: no root, no bed, no network beyond loopback.  The tests run a test
# build (TEST_HOOKS=yes).
test:
	$(MAKE) TEST_HOOKS=yes all
	$(RUN_TESTS_J) $(FAST_TESTS)

test-all:
	$(MAKE) TEST_HOOKS=yes all
	$(RUN_TESTS_J) $(TESTS)

test-asan:
	$(BUILD_ASAN)
	$(RUN_TESTS_J) --tier asan $(ASAN_TESTS)

# every functional file under ASan, not only the selection (what the selection is measured against)
test-asan-all:
	$(BUILD_ASAN)
	$(RUN_TESTS_J) --tier asan $(TESTS)

test-fresh:
	$(RUN_TESTS_J) --tier fresh $(FRESH_TESTS)

# The goals a pristine machine starts with install first and build in a sub-make, so that
# the probes above run only once the packages are there.  The two builds run side by side,
# then every tier in one run of tests/run-tests: the tiers share its job slots, so the
# pristine tier's downloads and the ASan files overlap the rest.
check:
	@ci/install-deps all
	$(MAKE) check-build
	$(MAKE) DEVELOPER=1 WITH_VERBS=yes WITH_LB=yes check-run

check-build:
	$(MAKE) -j2 DEVELOPER=1 WITH_VERBS=yes WITH_LB=yes TEST_HOOKS=yes all check-build-asan

check-build-asan:
	$(BUILD_ASAN)

check-run:
	$(RUN_TESTS_J) --tier plain $(TESTS) --tier asan $(ASAN_TESTS) \
		$(if $(filter yes,$(FRESH_TIER)),--tier fresh $(FRESH_TESTS))

# line coverage of the plain functional tiers (gcov, gcovr): build-cov/, a table per folder, the
# least covered files, and what each test file reaches (which chooses tests/asan-tests)
coverage:
	$(MAKE) O=build-cov COVERAGE=1 TEST_HOOKS=yes WITH_VERBS=$(if $(filter y,$(HAVE_VERBS)),yes,$(WITH_VERBS)) all
	$(MAKE) WITH_LB=yes ci/lb/fabric-lb ci/lb/lb.bpf.o ci/loss/loss.bpf.o	# the bed's BPF programs, which t2105, t2107 and t2710 load from ci/
	rm -rf build-cov/runs
	-$(RUN_TESTS_J) --tier cov $(TESTS)
	ci/coverage build-cov

demo:
	@ci/install-deps demo
	$(MAKE) all
	@ci/demo

bench: all
	bench/fleet-bench.sh
	bench/scale-bench.sh
	bench/history-bench.sh
	bench/localize-bench.sh
	@ci/install-deps bench
	bench/model-bench.sh
	bench/netns-bench.sh
	bench/pcap-bench.sh
	bench/coll-bench.sh
	bench/estimate-bench.sh
	bench/tcp-bench.sh
	bench/monitor-bench.sh
	@ci/install-deps vm
	bench/verbs-bench.sh

# the manual: a page per command (section 1), the file formats (5), the records (7)
MAN1 := $(wildcard man/*.1)
MAN5 := $(wildcard man/*.5)
MAN7 := $(wildcard man/*.7)
MAN_PAGES := $(MAN1) $(MAN5) $(MAN7)
# the monitor's deployment: a systemd unit, a DaemonSet, alerting rules, a dashboard (DOCDIR/deploy)
DEPLOY_FILES := deploy/systemd/fabscope-monitor.service deploy/kubernetes/fabscope-monitor-daemonset.yaml \
		deploy/prometheus/fabscope-monitor-rules.yml deploy/grafana/fabscope-monitor.json

install: $(O)/fabscope
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(DATADIR)/plots $(DESTDIR)$(DOCDIR)/examples
	install -m 0755 $(O)/fabscope $(DESTDIR)$(BINDIR)/fabscope
	install -m 0644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(MAN5) $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 $(MAN7) $(DESTDIR)$(MANDIR)/man7/
	install -m 0644 plots/*.gp $(DESTDIR)$(DATADIR)/plots/
	install -m 0644 examples/* $(DESTDIR)$(DOCDIR)/examples/
	install -d $(addprefix $(DESTDIR)$(DOCDIR)/deploy/,systemd kubernetes prometheus grafana)
	for f in $(DEPLOY_FILES); do install -m 0644 $$f $(DESTDIR)$(DOCDIR)/$$f || exit 1; done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/fabscope
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(MAN5))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(MAN7)))
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/plots/,$(notdir $(wildcard plots/*.gp)))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/examples/,$(notdir $(wildcard examples/*)))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(DEPLOY_FILES))
	-rmdir $(addprefix $(DESTDIR)$(DOCDIR)/deploy/,systemd kubernetes prometheus grafana) \
		$(DESTDIR)$(DOCDIR)/deploy 2>/dev/null
	-rmdir $(DESTDIR)$(DATADIR)/plots $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(DOCDIR) 2>/dev/null

doc:
	@for p in $(MAN_PAGES); do groff -man -ww -z $$p 2>&1 | sed "s|^|$$p: |"; done | \
		{ ! grep .; } && echo "doc: $(words $(MAN_PAGES)) pages render without warnings"

clean:
	rm -rf $(ALL_OBJ) $(ALL_OBJ:.o=.d) $(PROGRAMS) $(FUZZ_TARGETS) $(O)/.build-flags build-asan build-cov \
		tests/trash.* tests/trash-asan tests/trash-cov

help:
	@sed -n '3,/^$$/{/^$$/d;s/^# \{0,1\}//;p}' $(firstword $(MAKEFILE_LIST))

.PHONY: all deps test test-all test-asan test-asan-all test-fresh check check-build check-build-asan check-run coverage demo bench install uninstall doc clean help fuzz FORCE
