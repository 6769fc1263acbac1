/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The commands.  Each is cmd_<name>(argc, argv) with argv[0] the command's
 * name; it returns the process exit code (enum fs_exit).
 */
#ifndef FS_BUILTIN_H
#define FS_BUILTIN_H

/* bench/: the point-to-point tests */
int cmd_bw(int argc, const char **argv);
int cmd_lat(int argc, const char **argv);
/* collectives/ */
int cmd_allreduce(int argc, const char **argv);
int cmd_alltoall(int argc, const char **argv);
/* probes/ */
int cmd_probe(int argc, const char **argv);
/* pcap/ */
int cmd_capture(int argc, const char **argv);
int cmd_pcap(int argc, const char **argv);
/* fleet/: the coordinator and its agents */
int cmd_agent(int argc, const char **argv);
int cmd_run(int argc, const char **argv);
/* monitor/: the always-on fabric monitor (cmd.c dispatches; the agent: agent.c; the
 * localization: analyze.c) */
int cmd_monitor(int argc, const char **argv);
int cmd_monitor_agent(int argc, const char **argv);
int cmd_monitor_analyze(int argc, const char **argv);
/* report/ */
int cmd_report(int argc, const char **argv);
int cmd_history(int argc, const char **argv);
/* topology/ */
int cmd_topo(int argc, const char **argv);
int cmd_model(int argc, const char **argv);
/* transport/ */
int cmd_devices(int argc, const char **argv);
int cmd_version(int argc, const char **argv);
/* core/main.c */
int cmd_help(int argc, const char **argv);

#endif
