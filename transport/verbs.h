/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers of the verbs backend that `fabscope devices` shares (HAVE_VERBS). */
#ifndef FS_VERBS_H
#define FS_VERBS_H

#include <stddef.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

/* The IPv4 or IPv6 address in a RoCE GID, or "" for a link-local one. */
void vb_gid_ip(const union ibv_gid *g, char *buf, size_t len);
int vb_gid_is_v4(const union ibv_gid *g);
/* ibv_get_device_list() with one clear line in err when it gives nothing
 * (no RDMA in the kernel, no devices); the list or NULL with errno set. */
struct ibv_device **vb_device_list(int *n, char *err, size_t errlen);
/* Every valid GID of every port of ctx (ibv_query_gid_table, sized by the
 * ports' tables, so that none is left out): an array to free(), *n entries;
 * NULL with *n = 0 when there is none or it cannot be read. */
struct ibv_gid_entry *vb_gid_table(struct ibv_context *ctx, ssize_t *n);

#endif
