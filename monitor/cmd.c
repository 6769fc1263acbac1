/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fabscope monitor: the always-on fabric monitor's commands.  Here only
 * `analyze` (the localization, monitor/analyze.c); the agent itself
 * (probing, /metrics) joins this table.
 */
#include <stdio.h>
#include <string.h>

#include "../core/builtin.h"
#include "../core/error.h"

int cmd_monitor(int argc, const char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "analyze"))
		return cmd_monitor_analyze(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: fabscope monitor analyze --topology FILE (--metrics URL... | --prometheus URL | --replay SCRAPE...) "
		       "[options]\n"
		       "\nanalyze: name the faulty link or NIC from the monitor agents' probe counters "
		       "(fabscope monitor analyze --help; fabscope-monitor-analyze(1))\n");
		return 0;
	}
	return -fs_err_usage("monitor: give a subcommand: analyze (fabscope monitor analyze --help)");
}
