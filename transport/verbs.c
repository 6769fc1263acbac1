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
 * of the flow label P & 0x3fff (see vb_sport_flow_label).  Ports below 49152 no
 * flow label gives; mlx5 sets any port with mlx5dv_modify_qp_udp_sport(),
 * which is used for those where the device is an mlx5 one and the installed
 * libmlx5 has the call (looked up with dlopen: fabscope needs no libmlx5 to
 * start, and runs on every provider).  Both ends of flow i use the port:
 * the server's QP sends the ACKs and READ responses.  Each flow's record
 * carries its QP numbers, flow label and port, and where the port comes
 * from; tests/t3010 checks the ports against a capture.
 *
 * This file opens the device and finds the port and GID; verbs-qp.c makes
 * and connects the QPs and runs the data path (verbs-int.h: their state).
 *
 * Errors are one line with the device, port, GID or QP they concern; the
 * bench maps open/connect failures to exit code 3 (environment).
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../core/error.h"
#include "transport.h"
#include "verbs.h"
#include "verbs-int.h"


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

const char *vb_gid_type_name(uint32_t t)
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
int vb_find_by_gid(struct ibv_device **list, int n, const char *ip, const char *netdev,
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

/* vb_find_by_gid() for what the caller named (what: "netdev 'X'", "address X"):
 * 0 found, 1 not found; found on another port than --ib-port asks for is an
 * error of its own (-errno) */
static int find_named(struct xport *x, struct ibv_device **list, int n, const char *ip,
		      const char *netdev, const char *what, int *dev_i, int *port, int *gidx)
{
	if (!vb_find_by_gid(list, n, ip, netdev, x->params.ib_port, dev_i, port, gidx))
		return 0;
	if (x->params.ib_port && !vb_find_by_gid(list, n, ip, netdev, 0, dev_i, port, gidx))
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
	    !vb_find_by_gid(list, n, x->params.route_addr, NULL, x->params.ib_port, dev_i, port, gidx) &&
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

/*
 * Can the locked-memory limit be why pinning memory failed (errno e)?  A
 * region, a QP's or a CQ's rings (mlx5 pins them too): ENOMEM, EPERM or
 * EFAULT under a finite limit that is below twice what was asked (need; 0:
 * not known).  The limit in KiB goes to *kib.
 */
int vb_memlock_limited(int e, size_t need, unsigned long long *kib)
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
uint32_t vb_sport_flow_label(int port)
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

		rc = vb_memlock_limited(e, 0, &kib) ?
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

		if (vb_memlock_limited(e, mr->len, &kib))
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

/* RDMA in the kernel, and a device: what vb_open needs before a device is chosen */
static int vb_usable(char *why, size_t len)
{
	struct ibv_device **list;
	int n = 0;

	if (!(list = vb_device_list(&n, why, len)))
		return -1;
	ibv_free_device_list(list);
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
	.conn_release = vb_conn_release,
	.post = vb_post,
	.post_list = vb_post_list,
	.poll = vb_poll,
	.flow_info = vb_flow_info,
	.numa_node = vb_numa_node,
	.usable = vb_usable,
};
