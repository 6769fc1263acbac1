/* SPDX-License-Identifier: BSD-2-Clause */
/* The commands of test-tool (test-tool.c has the table), each area in a file of its own. */
#ifndef FS_TEST_TOOL_H
#define FS_TEST_TOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "../../core/error.h"

/* what a command returns: the exit code, after one line */
#define usage_error(...) (-fs_err_usage(__VA_ARGS__))
#define check_failed(...) (-fs_err(FS_EXIT_CHECK, __VA_ARGS__))

/* tool-util.c: an unsigned integer in [0, max] (0x.. too): 0, or the negative exit code
 * after one line naming opt */
int tool_parse_ulong(const char *opt, const char *s, unsigned long max, unsigned long *v);
/* HEX (blanks, ':', '.', '-' between digits allowed) into a heap buffer of exactly its
 * length (NULL for none): 0, or the negative exit code after one line */
int tool_parse_hex(const char *s, uint8_t **out, size_t *len);
/* "01:80:c2:00:00:01" */
const char *tool_mac_str(const uint8_t *m, char *buf, size_t len);

/* tool-util.c: samples, one non-negative integer per line (empty lines skipped) */
struct tool_samples {
	uint64_t *v;
	size_t n, alloc;
};
/* 0, or the exit code after one line */
int tool_read_samples(FILE *f, struct tool_samples *s);
void tool_samples_release(struct tool_samples *s);

/* tool-util.c: splitmix64, the random numbers of every fuzzer here: small, fast, and the
 * same sequence for a seed everywhere */
uint64_t tool_rand(uint64_t *s);

/* tool-util.c: one JSON value, compact, on a line of stdout ("(null)" for none) */
void tool_print_json(json_t *j);

/* test-stats.c: core/stats.c */
int tool_stats(int argc, const char **argv);
int tool_stats_check(int argc, const char **argv);
int tool_stats_merge(int argc, const char **argv);
int tool_stats_bucket(int argc, const char **argv);

/* test-units.c: core/units.c */
int tool_size(int argc, const char **argv);
int tool_count(int argc, const char **argv);
int tool_seconds(int argc, const char **argv);
int tool_fmt_size(int argc, const char **argv);

/* test-shquote.c: core/shquote.c */
int tool_shquote(int argc, const char **argv);

/* test-quote.c: plots/plot.c's gnuplot quoting (and report/doc.c's escaping), fuzzed */
int tool_quote_fuzz(int argc, const char **argv);

/* test-options.c: core/options.c */
int tool_options(int argc, const char **argv);

/* test-record.c: core/record.c and core/output.c */
int tool_record(int argc, const char **argv);
int tool_get(int argc, const char **argv);
int tool_labels(int argc, const char **argv);
int tool_lat_us(int argc, const char **argv);
int tool_derive(int argc, const char **argv);
int tool_render(int argc, const char **argv);

/* test-wire.c: core/wire.c */
int tool_wire_recv(int argc, const char **argv);
int tool_wire_send(int argc, const char **argv);
int tool_wire_fuzz(int argc, const char **argv);

/* test-tcp-fuzz.c: random and mutated frames from a raw peer into a TCP flow */
int tool_tcp_fuzz(int argc, const char **argv);
/* test-fleet-fuzz.c: hostile coordinators against agents, hostile agents against a coordinator */
int tool_fleet_fuzz(int argc, const char **argv);
/* test-fleet-sim.c: N agents in one process over the real protocol, against a real coordinator */
int tool_fleet_sim(int argc, const char **argv);
/* test-hmac.c: core/hmac.c (SHA-256, HMAC-SHA256, hex, random bytes) */
int tool_hmac(int argc, const char **argv);

/* test-plan.c: plan-pairs, plan-parse, analyze */
int tool_plan(int argc, const char **argv);

/* test-push.c: report/push.c (Pushgateway, webhook, exposition helpers) */
int tool_push(int argc, const char **argv);

/* test-trace.c: probes/trace.c (TCP 5-tuple traceroute) */
int tool_trace(int argc, const char **argv);

/* test-polar.c: probes/polar.c */
int tool_polar(int argc, const char **argv);
int tool_model(int argc, const char **argv);

/* test-pfc.c: probes/counters*.c and probes/pfc.c (counter sources, PFC verdicts) */
int tool_pfc(int argc, const char **argv);

/* test-xport.c: transport/transport.c's buffer allocator (xport-alloc) */
int tool_xport_alloc(int argc, const char **argv);

/* test-macctl.c: pcap/macctl.c (macctl, macctl-fuzz) */
int tool_macctl(int argc, const char **argv);
/* test-lldp.c: pcap/lldp.c (lldp, lldp-fuzz) */
int tool_lldp(int argc, const char **argv);
int tool_lldpd(int argc, const char **argv);
int tool_topo(int argc, const char **argv);
/* test-pfcap.c: probes/pfcap.c (pfc-inject, pfcap) */
int tool_pfcap(int argc, const char **argv);

/* test-dissect.c: pcap/dissect.c (dissect, dissect-pcap, pcapgen) */
int tool_dissect(int argc, const char **argv);
/* test-dissect-fuzz.c: dissect-fuzz */
int tool_dissect_fuzz(int argc, const char **argv);

/* test-nightly.c: nightly (a results directory shaped like a nightly run, with planted faults) */
int tool_nightly(int argc, const char **argv);
/* test-localize.c: localize-sim (the monitor's localization on a simulated fabric) */
int tool_localize_sim(int argc, const char **argv);
/* test-promtext.c: promtext, promtext-fuzz */
int tool_promtext(int argc, const char **argv);

/* test-monitor.c: monitor/hist.c, monitor/peers.c, monitor/probe.c's datagrams */
int tool_monitor(int argc, const char **argv);

#endif
