/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The commands.  Each is cmd_<name>(argc, argv) with argv[0] the command's
 * name; it returns the process exit code (enum fs_exit).
 */
#ifndef FS_BUILTIN_H
#define FS_BUILTIN_H

int cmd_bw(int argc, const char **argv);
int cmd_devices(int argc, const char **argv);
int cmd_lat(int argc, const char **argv);
int cmd_help(int argc, const char **argv);
int cmd_version(int argc, const char **argv);

#endif
