/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fabscope monitor: the always-on fabric monitor's commands.  Without a
 * subcommand (its first argument an option) it is the agent
 * (monitor/agent.c: probes, /metrics); its subcommands (`analyze`, the
 * localization) join this table.
 */
#include "../core/builtin.h"

int cmd_monitor(int argc, const char **argv)
{
	return cmd_monitor_agent(argc, argv);
}
