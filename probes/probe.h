/* SPDX-License-Identifier: BSD-2-Clause */
/* `fabscope probe`: the diagnostic probes (polarization; pfc to come). */
#ifndef FS_PROBE_H
#define FS_PROBE_H

int cmd_probe(int argc, const char **argv);

#endif
