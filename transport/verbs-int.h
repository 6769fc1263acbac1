/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verbs backend's private state, shared by its two files: verbs.c (the
 * device, port and GID; open/close; memory) and verbs-qp.c (connections:
 * QPs and their moves to RTS; the data path: posts and completions).  The
 * ops table is in verbs.c.  Not for callers of the transport: they see
 * transport.h only.
 */
#ifndef FS_VERBS_INT_H
#define FS_VERBS_INT_H

#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <jansson.h>

#include "transport.h"

/* The UDP source ports a RoCE v2 flow label can give (IB_ROCE_UDP_ENCAP_VALID_PORT_MIN..) */
#define VB_FL_SPORT_MIN 0xC000

/* mlx5dv_modify_qp_udp_sport()'s type (infiniband/mlx5dv.h of rdma-core 34 and later; the
 * header is not included: older ones lack the call, and it is looked up at run time) */
typedef int vb_set_sport_fn(struct ibv_qp *qp, uint16_t port);

struct vb_qp {
	struct ibv_qp *qp;
	struct xport_conn *c;
	int flow;
	uint32_t psn, peer_qpn, flow_label;
	int sport;
	const char *sport_source;
};

struct vb_x {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	uint8_t port;
	int gid_index;
	struct ibv_gid_entry gid;
	char dev[64], netdev[IF_NAMESIZE], ip[INET6_ADDRSTRLEN];
	int numa, roce, armed, err_seen, is_mlx5;
	vb_set_sport_fn *set_sport;	/* mlx5dv_modify_qp_udp_sport, where there is one */
	int cq_size, cq_need;
	struct vb_qp **qps;	/* every QP, to find a completion's flow */
	int nqps;
};

struct vb_conn {
	struct vb_qp *qps;
	int mtu;		/* path MTU in bytes */
	int cq_share;		/* completion queue entries taken */
	char peer_ip[INET6_ADDRSTRLEN];
};

static inline struct vb_x *VX(struct xport *x)
{
	return x->priv;
}

static inline struct vb_conn *VC(struct xport_conn *c)
{
	return c->priv;
}

#define VB_MEMLOCK_FIX "raise it with 'ulimit -l unlimited' (or memlock in /etc/security/limits.conf)"

/* "ib", "roce-v1" or "roce-v2": a GID type as the connection blob names it */
const char *vb_gid_type_name(uint32_t t);
/* Can the locked-memory limit be why pinning memory failed with errno e?
 * (need: the bytes asked for, 0 when not known); the limit in KiB to *kib */
int vb_memlock_limited(int e, size_t need, unsigned long long *kib);
/* The flow label that gives the UDP source port port (49152..65535) */
uint32_t vb_sport_flow_label(int port);
/*
 * Look for a device, port and GID: of address ip (a RoCEv2 GID with it), or
 * of netdev, on port want_port unless that is 0 (verbs.c says how); 0 when
 * found (its index in list, its port and GID index), else -1.  ud.c finds
 * a monitor lane's port by its address with it.
 */
int vb_find_by_gid(struct ibv_device **list, int n, const char *ip, const char *netdev,
		   int want_port, int *dev_i, int *port, int *gidx);

/* verbs-qp.c: the xport_ops of a connection and of the data path */
int vb_conn_new(struct xport_conn *c);
int vb_conn_blob(struct xport_conn *c, json_t *blob);
int vb_conn_connect(struct xport_conn *c, json_t *peer);
void vb_conn_release(struct xport_conn *c);
int vb_post(struct xport_conn *c, const struct xport_wr *wr);
int vb_post_list(struct xport_conn *c, const struct xport_wr *wrs, int n);
int vb_poll(struct xport *x, struct xport_wc *wc, int max, int timeout_ms);
int vb_flow_info(struct xport_conn *c, int flow, json_t *info);

#endif
