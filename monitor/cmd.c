/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fabscope monitor: the always-on fabric monitor's commands.  Without a
 * subcommand (its first argument an option) it is the agent
 * (monitor/agent.c: probes, /metrics); `analyze` is the localization
 * (monitor/analyze.c).
 */
#include <string.h>

#include "../core/builtin.h"

int cmd_monitor(int argc, const char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "analyze"))
		return cmd_monitor_analyze(argc - 1, argv + 1);
	return cmd_monitor_agent(argc, argv);
}
