/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fabscope: benchmarks and diagnostics for RDMA/RoCE fabrics of AI clusters.
 * main() dispatches to one command from a flat table, by exact name.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include <jansson.h>

#include "builtin.h"
#include "error.h"
#include "options.h"
#include "output.h"
#include "testhook.h"
#include "version.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, const char **argv);
	const char *summary;
};

static const struct cmd commands[] = {
	{ "devices", cmd_devices, "RDMA devices, ports, GID tables, netdevs, PCI/NUMA, and their rails and planes" },
	{ "bw", cmd_bw, "point-to-point bandwidth and message rate (client or --server)" },
	{ "lat", cmd_lat, "point-to-point latency percentiles by ping-pong (client or --server)" },
	{ "allreduce", cmd_allreduce, "all-reduce between N ranks (ring or halving-doubling): nccl-tests' algbw, busbw and data check" },
	{ "alltoall", cmd_alltoall, "all-to-all between N ranks (pairwise or direct): nccl-tests' algbw, busbw and data check" },
	{ "agent", cmd_agent, "the per-node agent that 'fabscope run' launches" },
	{ "run", cmd_run, "run a plan across many nodes: launch agents, schedule tests per rail, write a results directory" },
	{ "monitor", cmd_monitor, "the always-on fabric monitor: UDP probes over every rail, plane and ECMP path, Prometheus /metrics; 'monitor analyze' names the faulty link or NIC" },
	{ "probe", cmd_probe, "diagnostic probes: polarization (ECMP hash polarization), pfc (PFC pauses, storms, ECN first)" },
	{ "pcap", cmd_pcap, "analyze a RoCEv2 capture: per-QP loss, retransmissions, NAKs, CNPs, ECN, PFC, findings" },
	{ "capture", cmd_capture, "record RoCEv2 and PFC traffic into pcap files (a ring of files for long captures)" },
	{ "topo", cmd_topo, "the intended topology of a fabric: check its file, export Slurm's topology.conf, show LLDP neighbours" },
	{ "model", cmd_model, "what the fabric should carry: max-min fair rates of a pattern under spraying and per-flow ECMP" },
	{ "report", cmd_report, "Markdown, HTML and JSON reports of results directories: rails, comparisons, thresholds, baselines, push" },
	{ "history", cmd_history, "a history of runs in SQLite: ingest results directories, what changed tonight, what keeps coming back" },
	{ "help", cmd_help, "show help for fabscope or for one command" },
	{ "version", cmd_version, "show the version and the transports built in" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void main_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: fabscope [--version] [--help] <command> [options] [args]\n\n"
		   "Benchmarks and diagnostics for RDMA/RoCE fabrics of AI clusters.\n\n"
		   "Commands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "   %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nExit codes: 0 ok, 1 a check failed, 2 usage, 3 environment (device,\n"
		   "permission, dependency, version), 4 peer failure (refused, timeout, gone),\n"
		   "130 interrupted.\n"
		   "'fabscope help <command>' or 'fabscope <command> --help' shows a command's options.\n"
		   "Manual: man fabscope\n");
}

/*
 * A word that is no command, one line: the command it most likely meant
 * (one or two edits away), or the fabscope command that does what another
 * tool of the trade of that name does; else where the list is.
 */
static int not_a_command(const char *w)
{
	static const struct { const char *tool, *here; } other[] = {
		{ "ib_write_bw", "bw -t verbs" }, { "ib_send_bw", "bw -t verbs --op send" },
		{ "ib_read_bw", "bw -t verbs --op read" }, { "ib_write_lat", "lat -t verbs --op write" },
		{ "ib_send_lat", "lat -t verbs" }, { "ib_read_lat", "lat -t verbs --op read" },
		{ "iperf3", "bw" }, { "iperf", "bw" }, { "qperf", "bw or lat" },
		{ "all_reduce_perf", "allreduce" }, { "alltoall_perf", "alltoall" },
		{ "ibv_devinfo", "devices" }, { "show_gids", "devices" }, { "tcpdump", "capture" },
		{ "tshark", "pcap" }, { "ibdiagnet", "run" },
	};
	const char *best = NULL;
	size_t i;
	int bd = 3;

	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		if (!strcmp(w, other[i].tool))
			return fs_err_usage("'%s' is not a fabscope command: the one that does %s's work is 'fabscope %s'",
					    w, w, other[i].here);
	for (i = 0; i < NCOMMANDS; i++) {
		int d = opts_distance(w, commands[i].name);

		if (d < bd && 2 * (size_t)d <= strlen(w)) {
			bd = d;
			best = commands[i].name;
		}
		if (strlen(w) >= 2 && !strncmp(commands[i].name, w, strlen(w)) && bd > 0) {
			bd = 0;	/* a beginning of one: "rep" */
			best = commands[i].name;
		}
	}
	if (best)
		return fs_err_usage("'%s' is not a fabscope command; did you mean '%s'? ('fabscope help' lists them)",
				    w, best);
	return fs_err_usage("'%s' is not a fabscope command; 'fabscope help' lists them", w);
}

int cmd_help(int argc, const char **argv)
{
	const struct cmd *c;
	const char *args[] = { NULL, "--help", NULL };
	static char prog[64];

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		main_usage(stdout);
		return 0;
	}
	c = find_cmd(argv[1]);
	if (!c || c->fn == cmd_help) {
		if (!c)
			return -not_a_command(argv[1]);
		main_usage(stdout);
		return 0;
	}
	if (argc > (c->fn == cmd_probe || c->fn == cmd_monitor ? 3 : 2)) {
		fs_err_usage("help takes one command (and for probe and monitor, one of theirs): '%s' is one too many",
			     argv[c->fn == cmd_probe || c->fn == cmd_monitor ? 3 : 2]);
		return FS_EXIT_USAGE;
	}
	snprintf(prog, sizeof(prog), "fabscope %s", c->name);
	fs_set_progname(prog);
	if (argc > 2) {	/* help probe PROBE, help monitor analyze: its options */
		const char *pargs[] = { c->name, argv[2], "--help", NULL };

		return c->fn(3, pargs);
	}
	args[0] = c->name;
	return c->fn(2, args);
}

/*
 * What the command wrote to standard output must have reached it: a full
 * disk or a failing file is one line and exit 3 (when the command had
 * nothing worse to say).  A reader that went away (EPIPE: `| head`) chose
 * to read no more, and is not an error.
 */
static int stdout_done(int rc)
{
	int e;

	errno = 0;
	if (!fflush(stdout) && !ferror(stdout))
		return rc;
	e = errno ? errno : out_stdout_errno;
	if (!e) {	/* a failure stdio did not keep: is it a pipe nobody reads? */
		struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };

		if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
			e = EPIPE;
	}
	if (e == EPIPE)
		return rc;
	fs_err_env("cannot write standard output: %s", e ? strerror(e) : "a write failed");
	return rc ? rc : FS_EXIT_ENV;
}

int main(int argc, const char **argv)
{
	const struct cmd *c;
	static char prog[64];

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		main_usage(stderr);
		return FS_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return stdout_done(cmd_help(1, argv));
	if (!strcmp(argv[1], "--version"))
		return stdout_done(cmd_version(1, argv));
	c = find_cmd(argv[1]);
	if (!c) {
		if (argv[1][0] != '-')
			return -not_a_command(argv[1]);
		fs_err_usage("unknown option '%s'", argv[1]);
		main_usage(stderr);
		return FS_EXIT_USAGE;
	}
	snprintf(prog, sizeof(prog), "fabscope %s", c->name);
	fs_set_progname(prog);
	return stdout_done(c->fn(argc - 1, argv + 1));
}
