/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool: unit tests of the code through small commands, in the style of
 * git's t/helper/test-tool.  Each command takes its input from argv or
 * stdin and prints what the code under test made of it, so that a test
 * reads `test-tool stats <input >actual && test_cmp expect actual`.
 * This file is the table of commands; each area's commands are in a file
 * of their own (named below), declared in test-tool.h.
 *
 *   stats [PCT...]           samples on stdin -> n, min, max, avg, stdev, pPCT
 *   stats-check [PCT...]     checks percentiles against exact sorted ones
 *   stats-merge [SPLIT]      checks stats_merge() against one stats of all
 *   stats-bucket V...|--all  bucket index and range of values; --all checks
 *                            that the buckets tile [0, 2^64) as documented
 *                            (test-stats.c)
 *   size|count|seconds S...  units_parse_*: the value or "error"
 *   fmt-size N...            units_format_size (test-units.c)
 *   options ARGS...          a table with every option type, parsed and printed
 *                            (test-options.c)
 *   shquote [--len N] WORD...  the words quoted for sh, one line (test-shquote.c)
 *   record TEST [PATH=JSON]  record_new() with fields set
 *   get JSON PATH...         record_get/record_num/record_str
 *   labels K=V...            record_labels
 *   lat-us                   samples on stdin -> record_lat_us
 *   derive JSON SCOPE        record_derive, the copy changed, then the template
 *   render text|json FILE [--gbits] [--comment=TEXT]
 *                            the JSON array of records in FILE through output.h
 *                            (test-record.c)
 *   wire-recv [--timeout=MS] [--count=N] [MAX]
 *                            wire messages on stdin -> compact JSON lines
 *   wire-send JSON...        framed messages to stdout
 *   wire-fuzz N SEED         N random and mutated frames through wire_recv
 *                            (test-wire.c)
 *   tcp-fuzz N SEED          N hostile peers against the TCP transport (test-tcp-fuzz.c)
 *   xport-alloc ...          transport/transport.c's buffer allocator (test-xport.c)
 *   fleet-fuzz agent|coord N SEED ...  hostile peers of the fleet protocol (test-fleet-fuzz.c)
 *   fleet-sim --connect HOST:PORT -n N  N agents in one process over the real fleet
 *                            protocol, against a coordinator (test-fleet-sim.c)
 *   plan-pairs, plan-parse, analyze, groups   fleet schedules, plans, suspects, the lane groups
 *                                      of the analysis and the report (test-plan.c)
 *   polar cdf|moments|analyze          hash-polarization arithmetic (test-polar.c)
 *   model maxmin|random|ecmp-brute     max-min rates and ECMP by enumeration (test-model.c)
 *   hmac ...                 SHA-256, HMAC-SHA256, hex, random bytes (test-hmac.c)
 *   push gateway|webhook|name|label|value ...  report/push.c (test-push.c)
 *   trace SRC SPORT DST DPORT [...]   probes/trace.c, hop per line (test-trace.c)
 *   pfc ethtool|ethtool-file|snapshot|sample|series ...  PFC counters and verdicts (test-pfc.c)
 *   macctl HEX, macctl-fuzz N SEED    MAC control frames (PFC, PAUSE) dissected (test-macctl.c)
 *   lldp HEX, lldp-fuzz N SEED        LLDP frames dissected (test-lldp.c)
 *   lldpd-json0 FILE IFACE..., lldpd-fuzz FILE N SEED   lldpcli's json0 read (test-lldpd.c)
 *   topo-fuzz FILE N SEED    intent files and DOT graphs read from mutated texts (test-topo.c)
 *   pfc-inject IF ..., pfcap IF S G   PFC frames sent, and captured live (test-pfcap.c)
 *   dissect HEX, dissect-pcap FILE, pcapgen OUT SPEC..., dissect-fuzz N SEED
 *                                    RoCEv2 packets dissected, pcap files made and read
 *                                    (test-dissect.c, test-dissect-fuzz.c, pktgen.c)
 *   mon-hist, mon-hist-check, mon-hist-fuzz, mon-coupon, mon-peers, mon-peers-all,
 *   mon-peers-fuzz, mon-pkt-fuzz     the monitor's histogram, peers and probe format
 *                                    (test-monitor.c)
 *   nightly ...              a results directory shaped like a nightly run, with
 *                            planted faults (test-nightly.c)
 *   localize-sim [...]       the monitor's localization on a simulated fabric with random
 *                            link and NIC faults (test-localize.c; bench/localize-bench.sh)
 *   promtext FILE, promtext-fuzz FILE N SEED   the Prometheus text reader of monitor analyze
 *                            (test-promtext.c)
 *
 * Exit codes: 0 ok, 1 a check failed, 2 usage or bad input.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../../core/error.h"
#include "test-tool.h"

struct tool_cmd {
	const char *name;
	int (*fn)(int argc, const char **argv);
};

static const struct tool_cmd cmds[] = {
	{ "stats", tool_stats },
	{ "stats-check", tool_stats_check },
	{ "stats-merge", tool_stats_merge },
	{ "stats-bucket", tool_stats_bucket },
	{ "size", tool_size },
	{ "count", tool_count },
	{ "seconds", tool_seconds },
	{ "fmt-size", tool_fmt_size },
	{ "options", tool_options },
	{ "shquote", tool_shquote },
	{ "quote-fuzz", tool_quote_fuzz },
	{ "record", tool_record },
	{ "get", tool_get },
	{ "labels", tool_labels },
	{ "lat-us", tool_lat_us },
	{ "derive", tool_derive },
	{ "render", tool_render },
	{ "wire-recv", tool_wire_recv },
	{ "wire-send", tool_wire_send },
	{ "wire-fuzz", tool_wire_fuzz },
	{ "tcp-fuzz", tool_tcp_fuzz },
	{ "xport-alloc", tool_xport_alloc },
	{ "fleet-fuzz", tool_fleet_fuzz },
	{ "fleet-sim", tool_fleet_sim },
	{ "polar", tool_polar },
	{ "model", tool_model },
	{ "plan-pairs", tool_plan },
	{ "plan-parse", tool_plan },
	{ "analyze", tool_plan },
	{ "groups", tool_plan },
	{ "hmac", tool_hmac },
	{ "push", tool_push },
	{ "trace", tool_trace },
	{ "pfc", tool_pfc },
	{ "macctl", tool_macctl },
	{ "macctl-fuzz", tool_macctl },
	{ "lldp", tool_lldp },
	{ "lldp-fuzz", tool_lldp },
	{ "lldpd-json0", tool_lldpd },
	{ "lldpd-fuzz", tool_lldpd },
	{ "lldpd-eintr", tool_lldpd },
	{ "topo-fuzz", tool_topo },
	{ "pfc-inject", tool_pfcap },
	{ "pfcap", tool_pfcap },
	{ "dissect", tool_dissect },
	{ "dissect-pcap", tool_dissect },
	{ "pcapgen", tool_dissect },
	{ "dissect-fuzz", tool_dissect },
	{ "nightly", tool_nightly },
	{ "mon-hist", tool_monitor },
	{ "mon-hist-check", tool_monitor },
	{ "mon-hist-fuzz", tool_monitor },
	{ "mon-coupon", tool_monitor },
	{ "mon-peers", tool_monitor },
	{ "mon-peers-all", tool_monitor },
	{ "mon-peers-fuzz", tool_monitor },
	{ "mon-pkt-fuzz", tool_monitor },
	{ "localize-sim", tool_localize_sim },
	{ "promtext", tool_promtext },
	{ "promtext-fuzz", tool_promtext },
};

static int tool_usage(void)
{
	size_t i;

	fprintf(stderr, "usage: test-tool <command> [args]\ncommands:");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(stderr, " %s", cmds[i].name);
	fprintf(stderr, "\n");
	return FS_EXIT_USAGE;
}

int main(int argc, const char **argv)
{
	static char prog[64];
	size_t i;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		return tool_usage();
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, argv[1]))
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0])) {
		fs_set_progname("test-tool");
		fs_err_usage("unknown command '%s'", argv[1]);
		return tool_usage();
	}
	snprintf(prog, sizeof(prog), "test-tool %s", cmds[i].name);
	fs_set_progname(prog);
	rc = cmds[i].fn(argc - 1, argv + 1);
	if (fflush(stdout) || ferror(stdout))
		return -fs_err_env("unable to write to stdout");
	return rc;
}
