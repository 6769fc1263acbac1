/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verbs backend (libibverbs): RC queue pairs, one per flow.
 *
 * Device choice (params.device): a device name ("mlx5_3"), a netdev name
 * ("ens1f0"), or an IP address; without it, the device whose GID table holds
 * params.bind_addr, else the first device with an active port.  GID choice:
 * params.gid_index when given, else the RoCEv2 GID of the chosen IP address
 * (a RoCE device named together with params.bind_addr must have its GID),
 * else the first RoCEv2 IPv4 GID of the port, else GID 0 (InfiniBand).
 * Path MTU: the smaller active MTU of both ports unless params.mtu says.
 *
 * UDP source ports (ECMP entropy): RoCEv2 providers that follow the kernel's
 * convention (rxe since Linux 5.18, mlx5 and others) derive the port from
 * the GRH flow label with rdma_flow_label_to_udp_sport(); with a flow label
 * of 0 the flow label comes from both QP numbers (rdma_calc_flow_label()).
 * So --flow-label gives each flow the port of our choosing, and --sport
 * (params.sport_base) the port itself: a port P of 49152..65535 is the image
 * of the flow label P & 0x3fff (see sport_flow_label).  Ports below 49152 no
 * flow label gives; mlx5 sets any port with mlx5dv_modify_qp_udp_sport(),
 * which is used for those where the device is an mlx5 one and the installed
 * libmlx5 has the call (looked up with dlopen: fabscope needs no libmlx5 to
 * start, and runs on every provider).  Both ends of flow i use the port:
 * the server's QP sends the ACKs and READ responses.  Each flow's record
 * carries its QP numbers, flow label and port, and where the port comes
 * from; tests/t3010 checks the ports against a capture.
 *
 * Errors are one line with the device, port, GID or QP they concern; the
 * bench maps open/connect failures to exit code 3 (environment).
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "transport.h"
#include "verbs.h"


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

static struct vb_x *VX(struct xport *x)
{
	return x->priv;
}

/* ---- facts from sysfs and the GID table ---- */

static int sysfs_int(const char *dev, const char *file, int dflt)
{
	char path[256];
	FILE *f;
	int v;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/%s", dev, file);
	f = fopen(path, "r");
	if (!f)
		return dflt;
	if (fscanf(f, "%d", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

int vb_gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t v4pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g->raw, v4pfx, 12);
}

void vb_gid_ip(const union ibv_gid *g, char *buf, size_t len)
{
	if (vb_gid_is_v4(g))
		inet_ntop(AF_INET, g->raw + 12, buf, (socklen_t)len);
	else if (g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80)
		buf[0] = 0;	/* link-local: no routable address */
	else
		inet_ntop(AF_INET6, g->raw, buf, (socklen_t)len);
}

struct ibv_device **vb_device_list(int *n, char *err, size_t errlen)
{
	struct ibv_device **list;
	int e;

	errno = 0;
	list = ibv_get_device_list(n);
	if (!list) {
		e = errno ? errno : ENOSYS;
		if (e == ENOSYS)
			snprintf(err, errlen, "this kernel has no RDMA support (ibv_get_device_list: %s); load the RDMA modules (e.g. ib_uverbs, rdma_rxe) or use a kernel with RDMA",
				 strerror(e));
		else
			snprintf(err, errlen, "cannot list RDMA devices: %s", strerror(e));
		errno = e;
		return NULL;
	}
	if (!*n) {
		ibv_free_device_list(list);
		snprintf(err, errlen, "no RDMA devices found; for Soft-RoCE: rdma link add rxe0 type rxe netdev IFACE");
		errno = ENODEV;
		return NULL;
	}
	return list;
}

struct ibv_gid_entry *vb_gid_table(struct ibv_context *ctx, ssize_t *n)
{
	struct ibv_device_attr da;
	struct ibv_gid_entry *e;
	size_t len = 0;
	int p;

	*n = 0;
	if (ibv_query_device(ctx, &da))
		return NULL;
	for (p = 1; p <= da.phys_port_cnt; p++) {
		struct ibv_port_attr pa;

		if (!ibv_query_port(ctx, (uint8_t)p, &pa) && pa.gid_tbl_len > 0)
			len += (size_t)pa.gid_tbl_len;
	}
	if (!len || !(e = calloc(len, sizeof(*e))))
		return NULL;
	*n = ibv_query_gid_table(ctx, e, len, 0);
	if (*n <= 0) {
		free(e);
		*n = 0;
		return NULL;
	}
	return e;
}

/* Does ip (an address in text, in any of its spellings) name this GID's address? */
static int gid_has_ip(const union ibv_gid *g, const char *ip)
{
	unsigned char a[16];

	if (inet_pton(AF_INET, ip, a) == 1)
		return vb_gid_is_v4(g) && !memcmp(g->raw + 12, a, 4);
	return inet_pton(AF_INET6, ip, a) == 1 && !memcmp(g->raw, a, 16);	/* ::ffff:a.b.c.d too */
}

static const char *gid_type_name(uint32_t t)
{
	switch (t) {
	case IBV_GID_TYPE_IB: return "ib";
	case IBV_GID_TYPE_ROCE_V1: return "roce-v1";
	case IBV_GID_TYPE_ROCE_V2: return "roce-v2";
	}
	return "?";
}

/*
 * Look for a device, port and GID: of address ip (a RoCEv2 GID with it), or
 * of netdev (a GID of that netdev: its RoCEv2 IPv4 one, else a RoCEv2 one,
 * else any; a VLAN or macvlan sibling's GIDs on the same port are not its),
 * on port want_port unless that is 0.  0 when found, else -1.
 */
static int find_by_gid(struct ibv_device **list, int n, const char *ip, const char *netdev,
		       int want_port, int *dev_i, int *port, int *gidx)
{
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_gid_entry *e;
		ssize_t k, ne, best = -1;
		int rank = 0;

		if (!ctx)
			continue;
		e = vb_gid_table(ctx, &ne);
		ibv_close_device(ctx);
		for (k = 0; k < ne; k++) {
			int v2 = e[k].gid_type == IBV_GID_TYPE_ROCE_V2, r = 0;
			char nd[IF_NAMESIZE] = "";

			if (want_port && (int)e[k].port_num != want_port)
				continue;
			if (ip) {
				r = v2 && gid_has_ip(&e[k].gid, ip) ? 3 : 0;
			} else {
				if (e[k].ndev_ifindex)
					if_indextoname(e[k].ndev_ifindex, nd);
				if (!strcmp(nd, netdev))
					r = v2 ? 2 + vb_gid_is_v4(&e[k].gid) : 1;
			}
			if (r > rank) {
				rank = r;
				best = k;
			}
		}
		if (best >= 0) {
			*dev_i = i;
			*port = (int)e[best].port_num;
			*gidx = (int)e[best].gid_index;
		}
		free(e);
		if (best >= 0)
			return 0;
	}
	return -1;
}

static int looks_like_ip(const char *s)
{
	unsigned char buf[16];

	return s && (inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1);
}

/* The first active port of dev (want: that one only, when not 0), or 0. */
static int first_active_port(struct ibv_device *dev, int want)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_device_attr da;
	int p, found = 0;

	if (!ctx)
		return 0;
	if (!ibv_query_device(ctx, &da))
		for (p = 1; p <= da.phys_port_cnt && !found; p++) {
			struct ibv_port_attr pa;

			if ((!want || want == p) && !ibv_query_port(ctx, (uint8_t)p, &pa) &&
			    pa.state == IBV_PORT_ACTIVE)
				found = p;
		}
	ibv_close_device(ctx);
	return found;
}

/* find_by_gid() for what the caller named (what: "netdev 'X'", "address X"):
 * 0 found, 1 not found; found on another port than --ib-port asks for is an
 * error of its own (-errno) */
static int find_named(struct xport *x, struct ibv_device **list, int n, const char *ip,
		      const char *netdev, const char *what, int *dev_i, int *port, int *gidx)
{
	if (!find_by_gid(list, n, ip, netdev, x->params.ib_port, dev_i, port, gidx))
		return 0;
	if (x->params.ib_port && !find_by_gid(list, n, ip, netdev, 0, dev_i, port, gidx))
		return xport_fail(x, ENODEV, "%s is on port %d of %s, not on port %d (--ib-port); drop --ib-port or name another device",
				  what, *port, ibv_get_device_name(list[*dev_i]), x->params.ib_port);
	return 1;
}

static int pick_device(struct xport *x, struct ibv_device **list, int n,
		       int *dev_i, int *port, int *gidx)
{
	const char *want = x->params.device, *ip = NULL;
	char names[256] = "", what[128];
	size_t used = 0;
	int i, rc;

	*port = x->params.ib_port;
	*gidx = -1;
	if (want && !looks_like_ip(want)) {
		for (i = 0; i < n; i++)
			if (!strcmp(ibv_get_device_name(list[i]), want)) {
				*dev_i = i;
				if (!*port)	/* none active: port 1, which open says is down */
					*port = first_active_port(list[i], 0);
				return 0;
			}
		snprintf(what, sizeof(what), "netdev '%s'", want);
		if ((rc = find_named(x, list, n, NULL, want, what, dev_i, port, gidx)) <= 0) {
			/* it was a netdev (or one on another port).  With an address
			 * to use, the GID is that address's, checked by pick_gid */
			if (!rc && looks_like_ip(x->params.bind_addr))
				*gidx = -1;
			return rc;
		}
		for (i = 0; i < n; i++)
			used += (size_t)snprintf(names + used, used < sizeof(names) ? sizeof(names) - used : 0,
						 "%s%s", i ? ", " : "", ibv_get_device_name(list[i]));
		return xport_fail(x, ENODEV, "no RDMA device or netdev '%s' (devices: %s); see 'fabscope devices'",
				  want, names);
	}
	ip = want ? want : x->params.bind_addr;
	if (ip) {
		snprintf(what, sizeof(what), "address %s", ip);
		if ((rc = find_named(x, list, n, ip, NULL, what, dev_i, port, gidx)) <= 0)
			return rc;
		return xport_fail(x, ENODEV, "no RDMA device has a RoCEv2 GID for address %s; see 'fabscope devices'",
				  ip);
	}
	/* nothing named: the device of the address the route to the peer leaves
	 * from (the rail that reaches it), else the first with an active port */
	if (x->params.route_addr &&
	    !find_by_gid(list, n, x->params.route_addr, NULL, x->params.ib_port, dev_i, port, gidx) &&
	    first_active_port(list[*dev_i], *port) == *port)
		return 0;
	*port = x->params.ib_port;
	*gidx = -1;
	for (i = 0; i < n; i++) {
		int found = first_active_port(list[i], *port);

		if (found) {
			*dev_i = i;
			*port = found;
			return 0;
		}
	}
	*dev_i = 0;	/* none active: open the first and say its port is down */
	return 0;
}

static const char *port_state_name(enum ibv_port_state s)
{
	return ibv_port_state_str(s);
}

static int pick_gid(struct xport *x, int gidx)
{
	struct vb_x *v = VX(x);
	struct ibv_gid_entry *e;
	ssize_t n, k;

	if (x->params.gid_index >= 0)
		gidx = x->params.gid_index;
	if (gidx >= 0) {
		if (gidx >= v->pattr.gid_tbl_len ||
		    ibv_query_gid_ex(v->ctx, v->port, (uint32_t)gidx, &v->gid, 0))
			return xport_fail(x, EINVAL, "GID index %d of %s port %d is empty or invalid (the table has %d entries); see 'fabscope devices'",
					  gidx, v->dev, v->port, v->pattr.gid_tbl_len);
		v->gid_index = gidx;
		return 0;
	}
	e = vb_gid_table(v->ctx, &n);
	if (x->params.bind_addr && looks_like_ip(x->params.bind_addr) &&
	    v->pattr.link_layer == IBV_LINK_LAYER_ETHERNET) {
		/* a device named, and an address: the address's GID, or they do not
		 * belong together (its traffic would leave from another address
		 * than the one the caller - and its records - name) */
		for (k = 0; k < n; k++)
			if (e[k].port_num == v->port && e[k].gid_type == IBV_GID_TYPE_ROCE_V2 &&
			    gid_has_ip(&e[k].gid, x->params.bind_addr))
				break;
		if (k == n) {
			free(e);
			return xport_fail(x, EADDRNOTAVAIL, "%s port %d has no RoCEv2 GID for %s: that address is on another device; pair each device with its own address (see 'fabscope devices')",
					  v->dev, v->port, x->params.bind_addr);
		}
	} else {	/* our port's first RoCEv2 IPv4 GID, else its first of any kind */
		ssize_t any = -1;

		for (k = 0; k < n; k++) {
			if (e[k].port_num != v->port)
				continue;
			if (any < 0)
				any = k;
			if (e[k].gid_type == IBV_GID_TYPE_ROCE_V2 && vb_gid_is_v4(&e[k].gid))
				break;
		}
		if (k == n && any >= 0)
			k = any;
	}
	if (k == n) {
		free(e);
		return xport_fail(x, ENOENT, "%s port %d has no usable GID; give an address to the netdev, or see 'fabscope devices'",
				  v->dev, v->port);
	}
	v->gid = e[k];
	v->gid_index = (int)e[k].gid_index;
	free(e);
	return 0;
}

/* ---- the locked-memory limit ---- */

#define VB_MEMLOCK_FIX "raise it with 'ulimit -l unlimited' (or memlock in /etc/security/limits.conf)"

/*
 * Can the locked-memory limit be why pinning memory failed (errno e)?  A
 * region, a QP's or a CQ's rings (mlx5 pins them too): ENOMEM, EPERM or
 * EFAULT under a finite limit that is below twice what was asked (need; 0:
 * not known).  The limit in KiB goes to *kib.
 */
static int memlock_limited(int e, size_t need, unsigned long long *kib)
{
	struct rlimit rl;

	if ((e != ENOMEM && e != EPERM && e != EFAULT) || getrlimit(RLIMIT_MEMLOCK, &rl) ||
	    rl.rlim_cur == RLIM_INFINITY || (need && rl.rlim_cur >= need * 2))
		return 0;
	*kib = (unsigned long long)rl.rlim_cur / 1024;
	return 1;
}

/* ---- UDP source ports ---- */

/* The flow label that rdma_flow_label_to_udp_sport() turns into port
 * (49152..65535): its low 14 bits, and for 49152 itself (low bits 0, and a
 * flow label of 0 means none) 0x4001, whose high bit cancels its low one. */
static uint32_t sport_flow_label(int port)
{
	uint32_t lo = (uint32_t)port & 0x3fff;

	return lo ? lo : (1u << 14) | 1;
}

/*
 * The capability to set any UDP source port: mlx5dv_modify_qp_udp_sport()
 * where dev is an mlx5 device (mlx5dv_is_supported) and the installed
 * libmlx5 has the call (rdma-core 34 and later), else NULL.  libmlx5 is
 * loaded here, when a port below 49152 asks for it, not linked: libibverbs
 * has it loaded already where there are mlx5 devices.
 */
static vb_set_sport_fn *mlx5_set_sport(struct ibv_device *dev, int *is_mlx5_dev)
{
	static void *h;
	_Bool (*is_mlx5)(struct ibv_device *);
	vb_set_sport_fn *fn;

	*is_mlx5_dev = 0;
	if (!h && !(h = dlopen("libmlx5.so.1", RTLD_NOW | RTLD_LOCAL)))
		return NULL;
	*(void **)&is_mlx5 = dlsym(h, "mlx5dv_is_supported");
	*(void **)&fn = dlsym(h, "mlx5dv_modify_qp_udp_sport");
	*is_mlx5_dev = is_mlx5 && is_mlx5(dev);
	return *is_mlx5_dev ? fn : NULL;
}

/* Can this port and GID give flow i the source port sport_base + i? */
static int check_sport(struct xport *x)
{
	struct vb_x *v = VX(x);
	int base = x->params.sport_base;

	if (x->params.flow_label)
		return xport_fail(x, EINVAL, "--sport and --flow-label both choose the UDP source ports: give one of them");
	if (!v->roce)
		return xport_fail(x, EINVAL, "%s port %d is InfiniBand: its packets have no UDP source port to set; drop --sport",
				  v->dev, v->port);
	if (v->gid.gid_type != IBV_GID_TYPE_ROCE_V2)
		return xport_fail(x, EINVAL, "GID index %d of %s is RoCE v1, whose packets have no UDP header; for --sport choose a RoCE v2 GID with -x (see 'fabscope devices')",
				  v->gid_index, v->dev);
	if (base < VB_FL_SPORT_MIN && !v->set_sport)
		return xport_fail(x, EINVAL, "%s cannot give a QP the UDP source port %d: RoCE v2 takes the port from the flow label, %d-65535 (%s); give --sport %d or more",
				  v->dev, base, VB_FL_SPORT_MIN, v->is_mlx5 ?
				  "this libmlx5 has no mlx5dv_modify_qp_udp_sport, which sets any port: rdma-core 34 and later have it" :
				  "mlx5 devices set any port", VB_FL_SPORT_MIN);
	return 0;
}

/* ---- open / close ---- */

static void vb_close(struct xport *x)
{
	struct vb_x *v = VX(x);

	if (!v)
		return;
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->ch)
		ibv_destroy_comp_channel(v->ch);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
	free(v->qps);
	free(v);
	x->priv = NULL;
}

static int vb_open(struct xport *x)
{
	struct ibv_device **list;
	struct vb_x *v;
	int n = 0, dev_i = 0, port = 0, gidx = -1, rc;

	v = calloc(1, sizeof(*v));
	if (!v)
		return xport_fail(x, ENOMEM, "out of memory");
	x->priv = v;
	list = vb_device_list(&n, x->err, sizeof(x->err));
	if (!list) {
		rc = errno;
		vb_close(x);
		return -rc;
	}
	rc = pick_device(x, list, n, &dev_i, &port, &gidx);
	if (rc) {
		ibv_free_device_list(list);
		vb_close(x);
		return rc;
	}
	snprintf(v->dev, sizeof(v->dev), "%s", ibv_get_device_name(list[dev_i]));
	if (x->params.sport_base && x->params.sport_base < VB_FL_SPORT_MIN)
		v->set_sport = mlx5_set_sport(list[dev_i], &v->is_mlx5);
	v->ctx = ibv_open_device(list[dev_i]);
	ibv_free_device_list(list);
	if (!v->ctx) {
		rc = xport_fail(x, errno, "cannot open RDMA device %s: %s", v->dev, strerror(errno));
		vb_close(x);	/* (frees v: the message is made first) */
		return rc;
	}
	if ((rc = ibv_query_device(v->ctx, &v->dattr))) {	/* returns the errno value */
		rc = rc > 0 ? rc : EIO;
		vb_close(x);
		return xport_fail(x, rc, "cannot query RDMA device: %s", strerror(rc));
	}
	v->port = (uint8_t)(port ? port : 1);
	if (v->port > v->dattr.phys_port_cnt || ibv_query_port(v->ctx, v->port, &v->pattr)) {
		rc = xport_fail(x, EINVAL, "%s has no port %d (it has %d)", v->dev, v->port,
				v->dattr.phys_port_cnt);
		vb_close(x);
		return rc;
	}
	if (v->pattr.state != IBV_PORT_ACTIVE) {
		rc = xport_fail(x, ENETDOWN, "port %d of %s is %s, not ACTIVE; check the link and the netdev behind it",
				v->port, v->dev, port_state_name(v->pattr.state));
		vb_close(x);
		return rc;
	}
	rc = pick_gid(x, gidx);
	if (rc) {
		char keep[sizeof(x->err)];

		memcpy(keep, x->err, sizeof(keep));
		vb_close(x);
		memcpy(x->err, keep, sizeof(keep));
		return rc;
	}
	v->roce = v->pattr.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (x->params.sport_base && (rc = check_sport(x))) {
		vb_close(x);
		return rc;
	}
	v->numa = sysfs_int(v->dev, "device/numa_node", -1);
	vb_gid_ip(&v->gid.gid, v->ip, sizeof(v->ip));
	if (v->gid.ndev_ifindex)
		if_indextoname(v->gid.ndev_ifindex, v->netdev);
	v->pd = ibv_alloc_pd(v->ctx);
	v->ch = v->pd ? ibv_create_comp_channel(v->ctx) : NULL;
	v->cq_size = v->dattr.max_cqe < 16384 ? v->dattr.max_cqe : 16384;
	v->cq = v->ch ? ibv_create_cq(v->ctx, v->cq_size, NULL, v->ch, 0) : NULL;
	if (!v->cq) {
		unsigned long long kib;
		int e = errno;

		rc = memlock_limited(e, 0, &kib) ?
		     xport_fail(x, e, "cannot set up %s (protection domain, completion queue): %s; the locked-memory limit, %llu KiB, may be why: " VB_MEMLOCK_FIX,
				v->dev, strerror(e), kib) :
		     xport_fail(x, e, "cannot set up %s (protection domain, completion queue): %s",
				v->dev, strerror(e));
		vb_close(x);
		return rc;
	}
	return 0;
}

static int vb_numa_node(struct xport *x)
{
	return VX(x)->numa;
}

/* ---- memory ---- */

static int vb_mr_reg(struct xport *x, struct xport_mr *mr, unsigned access)
{
	struct vb_x *v = VX(x);
	int flags = IBV_ACCESS_LOCAL_WRITE;
	struct ibv_mr *m;

	if (access & XPORT_ACCESS_REMOTE)
		flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	m = ibv_reg_mr(v->pd, mr->addr, mr->len, flags);
	if (!m) {
		int e = errno;
		unsigned long long kib;

		if (memlock_limited(e, mr->len, &kib))
			return xport_fail(x, e, "cannot register %zu bytes with %s: the locked-memory limit is %llu KiB; " VB_MEMLOCK_FIX,
					  mr->len, v->dev, kib);
		return xport_fail(x, e, "cannot register %zu bytes with %s: %s", mr->len, v->dev, strerror(e));
	}
	mr->lkey = m->lkey;
	mr->rkey = m->rkey;
	mr->priv = m;
	return 0;
}

static void vb_mr_dereg(struct xport *x, struct xport_mr *mr)
{
	(void)x;
	if (mr->priv)
		ibv_dereg_mr(mr->priv);
}

/* ---- connections ---- */

static struct vb_conn *VC(struct xport_conn *c)
{
	return c->priv;
}

/* the kernel's rdma_flow_label_to_udp_sport() */
static int fl_sport(uint32_t fl)
{
	uint32_t lo = fl & 0x3fff, hi = fl & 0xFC000;

	lo ^= hi >> 14;
	return (int)(lo | 0xC000);
}

/* the kernel's rdma_calc_flow_label() */
static uint32_t calc_flow_label(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xFFFFF);
}

static void vb_conn_free(struct xport_conn *c)
{
	struct vb_conn *vc = VC(c);
	struct vb_x *v = VX(c->x);
	int i, j;

	if (!vc)
		return;
	for (i = 0; i < c->nflows; i++) {
		if (!vc->qps[i].qp)
			continue;
		for (j = 0; j < v->nqps; j++)
			if (v->qps[j] == &vc->qps[i])
				v->qps[j] = v->qps[--v->nqps];
		ibv_destroy_qp(vc->qps[i].qp);
	}
	v->cq_need -= vc->cq_share;
	free(vc->qps);
	free(vc);
	c->priv = NULL;
}

static int vb_conn_new(struct xport_conn *c)
{
	struct xport *x = c->x;
	struct vb_x *v = VX(x);
	struct vb_conn *vc = calloc(1, sizeof(*vc));
	uint32_t depth = 2 * x->params.queue_depth + 8;
	unsigned long long kib;
	struct vb_qp **nq;
	int i, rc;

	if (!vc)
		return xport_fail(x, ENOMEM, "out of memory");
	c->priv = vc;
	vc->qps = calloc((size_t)c->nflows, sizeof(*vc->qps));
	nq = realloc(v->qps, (size_t)(v->nqps + c->nflows) * sizeof(*nq));
	if (!vc->qps || !nq)
		return xport_fail(x, ENOMEM, "out of memory");
	v->qps = nq;
	if ((int)depth > v->dattr.max_qp_wr)
		depth = (uint32_t)v->dattr.max_qp_wr;
	vc->cq_share = c->nflows * (int)(2 * depth);
	v->cq_need += vc->cq_share;
	if (v->cq_need > v->cq_size) {
		int want = v->cq_need < v->dattr.max_cqe ? v->cq_need : v->dattr.max_cqe;

		if (want <= v->cq_size || ibv_resize_cq(v->cq, want))
			return xport_fail(x, ENOSPC, "%d flows of %u work requests do not fit the completion queue of %s (at most %d entries); use fewer flows or a smaller --tx-depth",
					  c->nflows, depth, v->dev, v->dattr.max_cqe);
		v->cq_size = want;
	}
	for (i = 0; i < c->nflows; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = v->cq, .recv_cq = v->cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = depth, .max_recv_wr = depth,
				 .max_send_sge = 1, .max_recv_sge = 1,
				 .max_inline_data = x->params.max_inline },
		};
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = v->port,
			.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ,
		};
		struct vb_qp *q = &vc->qps[i];

		q->qp = ibv_create_qp(v->pd, &ia);
		if (!q->qp) {
			rc = errno;
			if (rc == EINVAL && ia.cap.max_inline_data) {	/* irdma takes 101 bytes, some none */
				struct ibv_qp_init_attr plain = ia;
				struct ibv_qp *t;

				plain.cap.max_inline_data = 0;	/* is it the inline size? */
				if ((t = ibv_create_qp(v->pd, &plain))) {
					ibv_destroy_qp(t);
					return xport_fail(x, rc, "cannot create QP %d of %d on %s: %u bytes of inline data are more than it takes (--inline; lat's default is 236): give a smaller --inline, or 0",
							  i + 1, c->nflows, v->dev, ia.cap.max_inline_data);
				}
			}
			if (memlock_limited(rc, 0, &kib))
				return xport_fail(x, rc, "cannot create QP %d of %d on %s: %s; the locked-memory limit, %llu KiB, may be why: " VB_MEMLOCK_FIX,
						  i + 1, c->nflows, v->dev, strerror(rc), kib);
			return xport_fail(x, rc, "cannot create QP %d of %d on %s: %s", i + 1, c->nflows,
					  v->dev, strerror(rc));
		}
		rc = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS);
		if (rc)
			return xport_fail(x, rc, "cannot move QP 0x%06x to INIT: %s (errno %d)",
					  q->qp->qp_num, strerror(rc), rc);
		q->c = c;
		q->flow = i;
		q->psn = (uint32_t)(clock_ns() * 2654435761u + (uint64_t)i * 7919) & 0xffffff;
		v->qps[v->nqps++] = q;
	}
	return 0;
}

static int vb_conn_blob(struct xport_conn *c, json_t *blob)
{
	struct vb_x *v = VX(c->x);
	struct vb_conn *vc = VC(c);
	json_t *qpns = json_array(), *psns = json_array();
	char gid[INET6_ADDRSTRLEN];
	int i;

	for (i = 0; i < c->nflows; i++) {
		json_array_append_new(qpns, json_integer(vc->qps[i].qp->qp_num));
		json_array_append_new(psns, json_integer(vc->qps[i].psn));
	}
	inet_ntop(AF_INET6, v->gid.gid.raw, gid, sizeof(gid));
	json_object_set_new(blob, "qpn", qpns);
	json_object_set_new(blob, "psn", psns);
	json_object_set_new(blob, "gid", json_string(gid));
	json_object_set_new(blob, "gid_type", json_string(gid_type_name(v->gid.gid_type)));
	json_object_set_new(blob, "lid", json_integer(v->pattr.lid));
	json_object_set_new(blob, "mtu", json_integer(128 << v->pattr.active_mtu));
	json_object_set_new(blob, "device", json_string(v->dev));
	return 0;
}

/* Soft-RoCE (rdma_rxe) reports this vendor ID. */
#define VB_RXE_VENDOR_ID 0xffffff

/*
 * The local ACK timeout, 4.096 us << N: params.qp_timeout when given, else
 * 14 (67 ms, as perftest): a longer one (NCCL's 18) slows recovery from
 * drops sharply.  On rxe, 18 (1.07 s): rxe is software (a few Gb/s at best,
 * 0.1-0.5 under qemu) and its responder streams each READ response from
 * one QP's task, so with several QPs reading MiBs a QP can wait longer than
 * 67 ms for its next response packet.  A requester that times out resends
 * its READ requests and the responder replays every response from the
 * requested PSN on, which adds traffic and times out more QPs.  Measured in
 * the qemu VM: with 14, READs of 1 MiB x 4 QPs and 64 KiB x 16 QPs set off
 * hundreds of duplicate requests (rxe's duplicate_request counter) and never
 * drained (2 of 2 and 1 of 1 runs); with 18, 15 of 15 READ runs of 1-16 QPs
 * completed.  (rxe's completer, given a READ response it does not expect
 * after such replays, can also move the QP to the error state without an
 * error completion: only flushes follow.)
 */
static int vb_qp_timeout(const struct vb_x *v, const struct xport_params *p)
{
	if (p->qp_timeout)
		return p->qp_timeout;
	return v->dattr.vendor_id == VB_RXE_VENDOR_ID ? 18 : 14;
}

static enum ibv_mtu mtu_enum(int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	}
	return 0;
}

static int vb_conn_connect(struct xport_conn *c, json_t *peer)
{
	struct xport *x = c->x;
	struct vb_x *v = VX(x);
	struct vb_conn *vc = VC(c);
	json_t *qpns = json_object_get(peer, "qpn"), *psns = json_object_get(peer, "psn");
	const char *gid_s = json_string_value(json_object_get(peer, "gid"));
	const char *gtype = json_string_value(json_object_get(peer, "gid_type"));
	json_int_t lid = json_integer_value(json_object_get(peer, "lid"));
	json_int_t pmtu = json_integer_value(json_object_get(peer, "mtu"));
	int mine = 128 << v->pattr.active_mtu, mtu, i, rc, want;
	union ibv_gid dgid;

	if (json_array_size(qpns) != (size_t)c->nflows || json_array_size(psns) != (size_t)c->nflows ||
	    !gid_s || inet_pton(AF_INET6, gid_s, dgid.raw) != 1 || !gtype || !mtu_enum((int)pmtu))
		return xport_fail(x, EPROTO, "the peer's connection blob is malformed");
	if (strcmp(gtype, gid_type_name(v->gid.gid_type)))
		return xport_fail(x, EINVAL, "GID index %d of %s is %s but the peer's GID is %s; choose GIDs of one type with -x on both sides (see 'fabscope devices')",
				  v->gid_index, v->dev, gid_type_name(v->gid.gid_type), gtype);
	if (v->roce && vb_gid_is_v4(&v->gid.gid) != vb_gid_is_v4(&dgid))
		return xport_fail(x, EINVAL, "GID index %d of %s is an %s GID but the peer's (%s) is %s; choose GIDs of one address family with -x (see 'fabscope devices')",
				  v->gid_index, v->dev, vb_gid_is_v4(&v->gid.gid) ? "IPv4" : "IPv6",
				  gid_s, vb_gid_is_v4(&dgid) ? "IPv4" : "IPv6");
	mtu = mine < pmtu ? mine : (int)pmtu;
	if (x->params.mtu) {
		if (!mtu_enum(x->params.mtu) || x->params.mtu > (128 << v->pattr.max_mtu))
			return xport_fail(x, EINVAL, "MTU %d is not possible on %s port %d (256..%d in powers of two)",
					  x->params.mtu, v->dev, v->port, 128 << v->pattr.max_mtu);
		if (x->params.mtu > mtu)	/* packets the links would drop */
			return xport_fail(x, EINVAL, "path MTU %d (-m) is more than the smaller active MTU of the two ports, %d (%s port %d: %d, the peer's: %d): give -m %d or less, or raise the netdevs' MTU",
					  x->params.mtu, mtu, v->dev, v->port, mine, (int)pmtu, mtu);
		mtu = x->params.mtu;
	}
	vc->mtu = mtu;
	vb_gid_ip(&dgid, vc->peer_ip, sizeof(vc->peer_ip));
	for (i = 0; i < c->nflows; i++) {
		struct vb_qp *q = &vc->qps[i];
		json_int_t rqpn = json_integer_value(json_array_get(qpns, (size_t)i));
		json_int_t rpsn = json_integer_value(json_array_get(psns, (size_t)i));
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR, .path_mtu = mtu_enum(mtu),
			.dest_qp_num = (uint32_t)rqpn, .rq_psn = (uint32_t)rpsn & 0xffffff,
			.max_dest_rd_atomic = (uint8_t)(v->dattr.max_qp_rd_atom < 16 ? v->dattr.max_qp_rd_atom : 16),
			.min_rnr_timer = 12,
			.ah_attr = { .dlid = (uint16_t)lid, .sl = (uint8_t)x->params.sl,
				     .port_num = v->port,
				     /* InfiniBand: a GRH when a GID, a class or a label is asked for */
				     .is_global = v->roce || x->params.gid_index >= 0 ||
						  x->params.tclass >= 0 || x->params.flow_label },
		};

		if (rqpn <= 0 || rqpn > 0xffffff)
			return xport_fail(x, EPROTO, "the peer's connection blob has a bad QP number");
		q->peer_qpn = (uint32_t)rqpn;
		want = x->params.sport_base ? x->params.sport_base + i : 0;
		q->flow_label = x->params.flow_label ? (x->params.flow_label + (uint32_t)i) & 0xFFFFF :
				want >= VB_FL_SPORT_MIN ? sport_flow_label(want) : 0;
		if (a.ah_attr.is_global) {
			a.ah_attr.grh.dgid = dgid;
			a.ah_attr.grh.sgid_index = (uint8_t)v->gid_index;
			a.ah_attr.grh.hop_limit = 64;
			a.ah_attr.grh.traffic_class = (uint8_t)(x->params.tclass >= 0 ? x->params.tclass : 0);
			a.ah_attr.grh.flow_label = q->flow_label;
		}
		rc = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER);
		if (rc)
			return xport_fail(x, rc, "cannot move QP 0x%06x to RTR (peer QP 0x%06x, GID %s, MTU %d): %s (errno %d)",
					  q->qp->qp_num, q->peer_qpn, gid_s, mtu, strerror(rc), rc);
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = (uint8_t)vb_qp_timeout(v, &x->params);
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = q->psn;
		a.max_rd_atomic = (uint8_t)(v->dattr.max_qp_rd_atom < 16 ? v->dattr.max_qp_rd_atom : 16);
		rc = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
		if (rc)
			return xport_fail(x, rc, "cannot move QP 0x%06x to RTS: %s (errno %d)",
					  q->qp->qp_num, strerror(rc), rc);
		if (want && want < VB_FL_SPORT_MIN) {	/* check_sport: v->set_sport is there */
			rc = v->set_sport(q->qp, (uint16_t)want);
			if (rc)
				return xport_fail(x, rc > 0 ? rc : EIO, "cannot set the UDP source port of QP 0x%06x to %d (mlx5dv_modify_qp_udp_sport): %s; give --sport %d or more (set through the flow label)",
						  q->qp->qp_num, want, strerror(rc > 0 ? rc : EIO), VB_FL_SPORT_MIN);
			q->sport = want;
			q->sport_source = "--sport, set with mlx5dv_modify_qp_udp_sport";
		} else if (!v->roce) {
			q->sport = 0;
			q->sport_source = "none (InfiniBand)";
		} else if (q->flow_label) {
			q->sport = fl_sport(q->flow_label);
			q->sport_source = want ? "--sport, through the flow label" : "flow label";
		} else {
			q->sport = fl_sport(calc_flow_label(q->qp->qp_num, q->peer_qpn));
			q->sport_source = "flow label from both QP numbers (no --flow-label)";
		}
	}
	return 0;
}

/* ---- data path ---- */

static int vb_post_list(struct xport_conn *c, const struct xport_wr *wrs, int n);

static int vb_post(struct xport_conn *c, const struct xport_wr *wr)
{
	struct ibv_recv_wr rw, *bad;
	struct ibv_sge sge;
	struct ibv_qp *qp;
	int rc;

	if (wr->op != XPORT_OP_RECV)
		return vb_post_list(c, wr, 1);
	if (wr->flow < 0 || wr->flow >= c->nflows)
		return xport_fail(c->x, EINVAL, "no flow %d", wr->flow);
	qp = VC(c)->qps[wr->flow].qp;
	sge = (struct ibv_sge){ .addr = (uintptr_t)wr->mr->addr + wr->off,
				.length = wr->len, .lkey = wr->mr->lkey };
	rw = (struct ibv_recv_wr){ .wr_id = wr->wr_id, .sg_list = &sge, .num_sge = 1 };
	rc = ibv_post_recv(qp, &rw, &bad);
	if (rc)
		return xport_fail(c->x, rc, "cannot post a receive on QP 0x%06x: %s%s", qp->qp_num,
				  strerror(rc), rc == ENOMEM ? " (queue full)" : "");
	return 0;
}

/* One chained list, one doorbell: sends, writes and reads of one flow. */
static int vb_post_list(struct xport_conn *c, const struct xport_wr *wrs, int n)
{
	struct ibv_send_wr sw[XPORT_MAX_POST_LIST], *bad;
	struct ibv_sge sge[XPORT_MAX_POST_LIST];
	struct ibv_qp *qp;
	int i, rc;

	if (n < 1 || n > XPORT_MAX_POST_LIST || wrs[0].flow < 0 || wrs[0].flow >= c->nflows)
		return xport_fail(c->x, EINVAL, "bad post list");
	qp = VC(c)->qps[wrs[0].flow].qp;
	for (i = 0; i < n; i++) {
		const struct xport_wr *wr = &wrs[i];

		if (wr->op == XPORT_OP_RECV || wr->flow != wrs[0].flow)
			return xport_fail(c->x, EINVAL, "a post list holds sends, writes or reads of one flow");
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)wr->mr->addr + wr->off,
					   .length = wr->len, .lkey = wr->mr->lkey };
		sw[i] = (struct ibv_send_wr){ .wr_id = wr->wr_id, .sg_list = &sge[i],
					      .num_sge = wr->len ? 1 : 0,
					      .next = i + 1 < n ? &sw[i + 1] : NULL };
		if (wr->flags & XPORT_WR_SIGNALED)
			sw[i].send_flags |= IBV_SEND_SIGNALED;
		if (wr->len && wr->len <= c->x->params.max_inline && wr->op != XPORT_OP_READ)
			sw[i].send_flags |= IBV_SEND_INLINE;
		switch (wr->op) {
		case XPORT_OP_SEND: sw[i].opcode = IBV_WR_SEND; break;
		case XPORT_OP_WRITE: sw[i].opcode = IBV_WR_RDMA_WRITE; break;
		case XPORT_OP_WRITE_IMM:
			sw[i].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			sw[i].imm_data = htonl(wr->imm);
			break;
		default: sw[i].opcode = IBV_WR_RDMA_READ; break;
		}
		if (wr->op != XPORT_OP_SEND) {
			if (!wr->rmr)
				return xport_fail(c->x, EINVAL, "%s needs a remote region", xport_op_name(wr->op));
			sw[i].wr.rdma.remote_addr = wr->rmr->addr + wr->roff;
			sw[i].wr.rdma.rkey = wr->rmr->rkey;
		}
	}
	rc = ibv_post_send(qp, sw, &bad);
	if (rc)
		return xport_fail(c->x, rc, "cannot post a list of %d on QP 0x%06x: %s%s", n,
				  qp->qp_num, strerror(rc), rc == ENOMEM ? " (queue full)" : "");
	return 0;
}

static struct vb_qp *qp_of(struct vb_x *v, uint32_t qpn)
{
	int i;

	for (i = 0; i < v->nqps; i++)
		if (v->qps[i]->qp->qp_num == qpn)
			return v->qps[i];
	return NULL;
}

static enum xport_wc_status map_status(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS: return XPORT_WC_OK;
	case IBV_WC_WR_FLUSH_ERR: return XPORT_WC_FLUSHED;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR: return XPORT_WC_CONN_LOST;
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR: return XPORT_WC_REMOTE_ERR;
	default: return XPORT_WC_LOCAL_ERR;
	}
}

static int translate(struct xport *x, const struct ibv_wc *in, int n, struct xport_wc *out)
{
	struct vb_x *v = VX(x);
	int i;

	for (i = 0; i < n; i++) {
		struct vb_qp *q = qp_of(v, in[i].qp_num);
		struct xport_wc *w = &out[i];

		memset(w, 0, sizeof(*w));
		w->wr_id = in[i].wr_id;
		w->status = map_status(in[i].status);
		w->flow = q ? q->flow : -1;
		w->conn = q ? q->c : NULL;
		w->len = in[i].byte_len;
		if (in[i].status != IBV_WC_SUCCESS) {
			fs_log(1, "%s: QP 0x%06x (flow %d) wr_id %llu: %s (vendor error 0x%x)", v->dev,
			       in[i].qp_num, w->flow, (unsigned long long)in[i].wr_id,
			       ibv_wc_status_str(in[i].status), in[i].vendor_err);
			/* a flush follows the error that broke the QP: keep that one */
			if (in[i].status == IBV_WC_WR_FLUSH_ERR && v->err_seen) {
				w->op = XPORT_OP_SEND;
				continue;
			}
			v->err_seen = 1;
			xport_fail(x, EIO, "%s: QP 0x%06x (flow %d): %s%s", v->dev, in[i].qp_num, w->flow,
				   ibv_wc_status_str(in[i].status),
				   in[i].status == IBV_WC_RETRY_EXC_ERR ? " (the peer does not answer)" : "");
			w->op = XPORT_OP_SEND;	/* the opcode of a failed completion is undefined */
			continue;
		}
		switch (in[i].opcode) {
		case IBV_WC_SEND: w->op = XPORT_OP_SEND; break;
		case IBV_WC_RDMA_WRITE: w->op = XPORT_OP_WRITE; break;
		case IBV_WC_RDMA_READ: w->op = XPORT_OP_READ; break;
		case IBV_WC_RECV_RDMA_WITH_IMM:
			w->has_imm = 1;
			w->imm = ntohl(in[i].imm_data);
			w->op = XPORT_OP_RECV;
			break;
		default:
			w->op = XPORT_OP_RECV;
			if (in[i].wc_flags & IBV_WC_WITH_IMM) {
				w->has_imm = 1;
				w->imm = ntohl(in[i].imm_data);
			}
		}
	}
	return n;
}

static int vb_poll(struct xport *x, struct xport_wc *wc, int max, int timeout_ms)
{
	struct vb_x *v = VX(x);
	uint64_t now, deadline = 0, spin_end = 0;
	struct ibv_wc iwc[64];

	if (max > 64)
		max = 64;
	for (;;) {
		int n = ibv_poll_cq(v->cq, max, iwc);
		struct pollfd p = { .fd = v->ch->fd, .events = POLLIN };

		if (n < 0)
			return xport_fail(x, EIO, "cannot poll the completion queue of %s", v->dev);
		if (n > 0)
			return translate(x, iwc, n, wc);
		if (timeout_ms <= 0)
			return 0;	/* a look: callers that spin read no clock here */
		now = clock_ns();
		if (!deadline) {
			deadline = now + (uint64_t)timeout_ms * 1000000ull;
			spin_end = now + XPORT_SPIN_US * 1000ull;
		}
		if (now >= deadline)
			return 0;
		if (x->params.poll_mode == XPORT_POLL_BUSY ||
		    (x->params.poll_mode == XPORT_POLL_ADAPTIVE && now < spin_end))
			continue;
		if (!v->armed) {	/* arm, then look again: no completion slips by */
			if (ibv_req_notify_cq(v->cq, 0))
				return xport_fail(x, EIO, "cannot arm the completion queue of %s", v->dev);
			v->armed = 1;
			continue;
		}
		if (poll(&p, 1, clock_ms_left(deadline)) > 0) {
			struct ibv_cq *cq;
			void *ctx;

			if (!ibv_get_cq_event(v->ch, &cq, &ctx)) {
				ibv_ack_cq_events(cq, 1);
				v->armed = 0;
			}
		}
	}
}

static int vb_flow_info(struct xport_conn *c, int flow, json_t *info)
{
	struct vb_x *v = VX(c->x);
	struct vb_qp *q = &VC(c)->qps[flow];

	json_object_set_new(info, "device", json_string(v->dev));
	json_object_set_new(info, "ib_port", json_integer(v->port));
	json_object_set_new(info, "gid_index", json_integer(v->gid_index));
	if (v->netdev[0])
		json_object_set_new(info, "netdev", json_string(v->netdev));
	json_object_set_new(info, "src_ip", json_string(v->ip));
	json_object_set_new(info, "dst_ip", json_string(VC(c)->peer_ip));
	json_object_set_new(info, "qpn", json_integer(q->qp->qp_num));
	json_object_set_new(info, "dest_qpn", json_integer(q->peer_qpn));
	json_object_set_new(info, "mtu", json_integer(VC(c)->mtu));
	json_object_set_new(info, "flow_label", json_integer(q->flow_label));
	json_object_set_new(info, "qp_timeout", json_integer(vb_qp_timeout(v, &c->x->params)));
	if (v->roce) {
		json_object_set_new(info, "sport", json_integer(q->sport));
		json_object_set_new(info, "dport", json_integer(4791));
		json_object_set_new(info, "sport_source", json_string(q->sport_source));
	}
	return 0;
}

const struct xport_ops xport_verbs_ops = {
	.name = "verbs",
	.caps = XPORT_CAP_ONESIDED | XPORT_CAP_SPORT | XPORT_CAP_RNR,
	.open = vb_open,
	.close = vb_close,
	.mr_reg = vb_mr_reg,
	.mr_dereg = vb_mr_dereg,
	.conn_new = vb_conn_new,
	.conn_blob = vb_conn_blob,
	.conn_connect = vb_conn_connect,
	.conn_free = vb_conn_free,
	.post = vb_post,
	.post_list = vb_post_list,
	.poll = vb_poll,
	.flow_info = vb_flow_info,
	.numa_node = vb_numa_node,
};
