# fabscope - one non-recursive Makefile.
#
#   make                 build ./fabscope and the test helper
#   make check           install what is missing (as root), build, run every test tier
#   make demo            a local run on an embedded default, with its report
#   make bench           ratios against real peers (iperf3, qperf, tshark, Open MPI); needs root
#   make install         PREFIX=/usr/local DESTDIR= : binary and fabscope(1)
#   make fuzz            libFuzzer targets (clang), e.g. tests/fuzz/fuzz-dissect
#
# Knobs: V=1 (show commands), DEVELOPER=1 (warnings are errors), O=DIR (build
# into DIR), SANITIZE=1 (ASan + UBSan), local overrides in config.mak.

-include config.mak

CC ?= cc
PKG_CONFIG ?= pkg-config
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
O ?= .
VERSION := 0.1.0

CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes \
	    -Wstrict-prototypes -Wpointer-arith -Wno-unused-parameter
ifdef DEVELOPER
WARNINGS += -Werror
endif
ifdef SANITIZE
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
	  -DGET_PARANOID
LDFLAGS += -fsanitize=address,undefined
endif
ALL_CFLAGS = -std=gnu11 $(CFLAGS) $(WARNINGS) -MMD -MP -D_GNU_SOURCE \
	     -DFABSCOPE_VERSION='"$(VERSION)"' $(DEP_CFLAGS)

# required: a JSON library (jansson)
ifeq ($(shell $(PKG_CONFIG) --exists jansson && echo y),y)
DEP_CFLAGS += $(shell $(PKG_CONFIG) --cflags jansson)
LIBS += $(shell $(PKG_CONFIG) --libs jansson)
else
$(error jansson not found: run 'ci/install-deps build' as root, or apt-get install libjansson-dev)
endif
LIBS += -lm

# required: libpcap for live captures (probe pfc) and the pcap/ dissectors
ifeq ($(shell $(PKG_CONFIG) --exists libpcap && echo y),y)
DEP_CFLAGS += $(shell $(PKG_CONFIG) --cflags libpcap)
LIBS += $(shell $(PKG_CONFIG) --libs libpcap)
else
$(error libpcap not found: run 'ci/install-deps build' as root, or apt-get install libpcap-dev)
endif

# the PFC capture reads in a thread of its own
DEP_CFLAGS += -pthread
LIBS += -pthread

# optional: rdma-core's libibverbs for the verbs transport
ifeq ($(shell $(PKG_CONFIG) --exists libibverbs && echo y),y)
DEP_CFLAGS += -DHAVE_VERBS $(shell $(PKG_CONFIG) --cflags libibverbs)
LIBS += $(shell $(PKG_CONFIG) --libs libibverbs)
VERBS_SRC := transport/verbs.c transport/verbs-qp.c
endif

# required: libcurl for pushing results (Pushgateway, webhook); report/push.c
# loads it (libcurl.so.4) when it first needs it, so every other command
# starts without it and its thirty libraries
ifeq ($(shell $(PKG_CONFIG) --exists libcurl && echo y),y)
DEP_CFLAGS += $(shell $(PKG_CONFIG) --cflags libcurl)
LIBS += -ldl
else
$(error libcurl not found: run 'ci/install-deps build' as root, or apt-get install libcurl4-openssl-dev)
endif

ifeq ($(V),1)
Q :=
QCC :=
QLD :=
else
Q := @
QCC = @echo '   CC $@';
QLD = @echo '   LD $@';
endif

CORE_SRC := core/error.c core/clock.c core/units.c core/stats.c core/options.c \
	    core/net.c core/wire.c core/record.c core/output.c core/hmac.c
XPORT_SRC := transport/transport.c transport/tcp.c transport/tcp-flow.c transport/devices.c $(VERBS_SRC)
BENCH_SRC := bench/ptp.c bench/ptp-busy.c bench/bw.c bench/lat.c
FLEET_SRC := fleet/plan.c fleet/plan-keys.c fleet/plan-hosts.c fleet/plan-sched.c fleet/auth.c fleet/agent.c \
	     fleet/coord.c fleet/coord-job.c fleet/coord-phase.c fleet/coord-check.c fleet/launch.c fleet/results.c \
	     fleet/analyze.c fleet/run.c
REPORT_SRC := report/push.c report/model.c report/checks.c report/plots.c report/render.c report/polar.c report/pfc.c report/coll.c report/coll-render.c \
	      report/coll-export.c report/coll-checks.c report/coll-plot.c report/cmd.c
PROBES_SRC := probes/polar.c probes/probe.c probes/probe-polar.c probes/probe-pfc.c probes/trace.c \
	      probes/counters.c probes/counters-names.c probes/counters-ethtool.c probes/counters-snap.c \
	      probes/pfc.c probes/pfcap.c
COLL_SRC := collectives/comm.c collectives/xfer.c collectives/allreduce.c collectives/alltoall.c \
	    collectives/cmd.c
PCAP_SRC := pcap/tok.c pcap/macctl.c pcap/roce.c pcap/dissect.c pcap/live.c pcap/capture.c pcap/flow.c pcap/reader.c pcap/analyze.c
LIB_SRC := $(CORE_SRC) $(XPORT_SRC) $(BENCH_SRC) $(FLEET_SRC) $(REPORT_SRC) $(PROBES_SRC) \
	   $(PCAP_SRC) $(COLL_SRC)
MAIN_SRC := core/main.c
TOOL_SRC := tests/helper/test-tool.c tests/helper/fuzz-tcp.c tests/helper/hmac-tool.c tests/helper/plan-tool.c tests/helper/polar-tool.c tests/helper/fuzz-fleet.c tests/helper/push-tool.c tests/helper/trace-tool.c tests/helper/pfc-tool.c \
	    tests/helper/macctl-tool.c tests/helper/pfcap-tool.c tests/helper/dissect-tool.c \
	    tests/helper/dissect-fuzz.c tests/helper/dissect-check.c tests/helper/pktgen.c \
	    tests/helper/tool-util.c tests/helper/xport-tool.c

LIB_OBJ := $(LIB_SRC:%.c=$(O)/%.o)
MAIN_OBJ := $(MAIN_SRC:%.c=$(O)/%.o)
TOOL_OBJ := $(TOOL_SRC:%.c=$(O)/%.o)
ALL_OBJ := $(LIB_OBJ) $(MAIN_OBJ) $(TOOL_OBJ)

PROGRAMS := $(O)/fabscope $(O)/tests/helper/test-tool

all: $(PROGRAMS)

$(O)/fabscope: $(LIB_OBJ) $(MAIN_OBJ)
	$(QLD)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(O)/tests/helper/test-tool: $(LIB_OBJ) $(TOOL_OBJ)
	$(QLD)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

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
		    pcap/roce.c pcap/macctl.c pcap/flow.c
FUZZ_TARGETS := $(O)/tests/fuzz/fuzz-dissect

fuzz: $(FUZZ_TARGETS)

$(O)/tests/fuzz/fuzz-dissect: $(FUZZ_DISSECT_SRC) pcap/dissect.h pcap/get.h pcap/macctl.h pcap/flow.h pcap/tok.h \
			      tests/helper/dissect-check.h
	@mkdir -p $(dir $@)
	$(QLD)$(FUZZ_CC) -std=gnu11 $(FUZZ_CFLAGS) $(WARNINGS) -D_GNU_SOURCE \
		$(shell $(PKG_CONFIG) --cflags libpcap) -o $@ $(FUZZ_DISSECT_SRC) -lm

# ---- tests ----
# Tiers: unit (no root), netns (root), ASan/UBSan (the whole suite again).
PROVE ?= prove
PROVE_FLAGS ?=
TESTS ?= tests/t*.t

deps:
	@ci/install-deps all

test: all
	$(PROVE) $(PROVE_FLAGS) $(TESTS)

test-asan:
	$(MAKE) O=build-asan SANITIZE=1 DEVELOPER=1 all
	FABSCOPE=$(CURDIR)/build-asan/fabscope TEST_TOOL=$(CURDIR)/build-asan/tests/helper/test-tool \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	$(PROVE) $(PROVE_FLAGS) $(TESTS)

check: deps
	$(MAKE) DEVELOPER=1 all
	$(MAKE) test
	$(MAKE) test-asan

demo: deps all
	@ci/demo

bench: all
	bench/fleet-bench.sh
	@ci/install-deps bench
	bench/pcap-bench.sh
	bench/coll-bench.sh
	bench/tcp-bench.sh
	@ci/install-deps vm
	bench/verbs-bench.sh

install: $(O)/fabscope
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 0755 $(O)/fabscope $(DESTDIR)$(BINDIR)/fabscope
	install -m 0644 core/fabscope.1 $(DESTDIR)$(MANDIR)/man1/fabscope.1
	install -d $(DESTDIR)$(PREFIX)/share/fabscope/plots
	install -m 0644 plots/*.gp $(DESTDIR)$(PREFIX)/share/fabscope/plots/

clean:
	rm -rf $(ALL_OBJ) $(ALL_OBJ:.o=.d) $(PROGRAMS) $(FUZZ_TARGETS) $(O)/.build-flags build-asan \
		tests/trash.*

.PHONY: all deps test test-asan check demo bench install clean fuzz FORCE
