/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UD endpoints for datagram probes (transport/ud.h says what and why).
 * Work request ids: bit 63 a send, bits 32..47 the QP's index (0 the
 * responder, 1 + i probe QP i), bits 0..31 the slot of its buffer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ud.h"

uint32_t ud_flow_label_of_sport(int port)
{
	uint32_t lo = (uint32_t)port & 0x3fff;

	return lo ? lo : (1u << 14) | 1;	/* (a flow label of 0 is none: 0x4001 gives 49152) */
}

#ifdef HAVE_VERBS

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "../core/alloc.h"
#include "verbs.h"
#include "verbs-int.h"

#define GRH_LEN 40
#define SLOT 128		/* a buffer: the GRH and UD_MSG_MAX bytes, rounded up */
#define DEPTH 64
#define RESP_DEPTH 512
#define WR_SEND (1ull << 63)
#define WR_ID(send, q, slot) ((send) | (uint64_t)(q) << 32 | (uint32_t)(slot))

struct ud_ah {
	uint64_t key;		/* (ip << 20 | flow label) + 1; 0: empty */
	struct ibv_ah *ah;
	uint32_t refs;		/* sends in flight with it */
};

struct ud_q {
	struct ibv_qp *qp;
	int depth;
	size_t base;		/* its buffers: depth receives, then depth sends */
	int head, n;		/* sends in flight: the slots head - n .. head - 1 (mod depth) */
	uint64_t *ah_of;	/* [slot]: the key of the address handle a send in flight holds (entries
				 * move in the table as others go: a key, not an index) */
	uint64_t *tag;		/* [slot] */
};

struct ud_ep {
	struct ud_info info;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq_ex *cqx;	/* NULL: a plain CQ (no extended CQ on this provider) */
	struct ibv_cq *cq;
	int ts;			/* 0 none, 1 wall-clock ns, 2 device cycles */
	uint64_t khz;		/* the device clock (ts 2) */
	struct ibv_mr *mr;
	unsigned char *buf;
	size_t buflen;
	struct ud_q *q;		/* [0] the responder, [1 + i] probe QP i */
	int nq;
	uint32_t qkey;
	uint8_t port;
	int gidx;
	struct ud_ah *ah;	/* open addressing, linear probing */
	size_t ah_cap, ah_n, ah_max, hand;
};

int ud_built(char *why, size_t len)
{
	(void)why, (void)len;
	return 1;
}

static int fail(char *err, size_t len, int e, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t len, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -(e ? e : EIO);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The device and port of ip, opened, and its GID index */
static int find_port(struct ud_ep *ep, struct in_addr ip, char *err, size_t errlen)
{
	char a[INET_ADDRSTRLEN];
	struct ibv_device **list;
	struct ibv_port_attr pa;
	int n = 0, dev_i = 0, port = 0, rc = 0;

	inet_ntop(AF_INET, &ip, a, sizeof(a));
	if (!(list = vb_device_list(&n, err, errlen)))
		return -(errno ? errno : ENODEV);
	if (vb_find_by_gid(list, n, a, NULL, 0, &dev_i, &port, &ep->gidx)) {
		ibv_free_device_list(list);
		return fail(err, errlen, ENODEV, "no RDMA device has a RoCEv2 GID for %s, the lane's address; see 'fabscope devices', or probe it with --transport udp",
			    a);
	}
	snprintf(ep->info.dev, sizeof(ep->info.dev), "%s", ibv_get_device_name(list[dev_i]));
	ep->ctx = ibv_open_device(list[dev_i]);
	ibv_free_device_list(list);
	if (!ep->ctx)
		return fail(err, errlen, errno, "cannot open RDMA device %s: %s", ep->info.dev, strerror(errno));
	ep->port = (uint8_t)port;
	if ((rc = ibv_query_port(ep->ctx, ep->port, &pa)))
		return fail(err, errlen, rc, "cannot query %s port %d: %s", ep->info.dev, port, strerror(rc));
	if (pa.state != IBV_PORT_ACTIVE)
		return fail(err, errlen, ENETDOWN, "port %d of %s (address %s) is %s, not ACTIVE; check the link and the netdev behind it",
			    port, ep->info.dev, a, ibv_port_state_str(pa.state));
	ep->info.port = port;
	ep->info.gid_index = ep->gidx;
	return 0;
}

/* The completion queue: with the device's timestamps where it gives them */
static int make_cq(struct ud_ep *ep, int cqe, char *err, size_t errlen)
{
	struct ibv_device_attr_ex dx;
	struct ibv_cq_init_attr_ex ca = { .cqe = (uint32_t)cqe, .channel = ep->ch };
	uint64_t base = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_SRC_QP;
	int e = 0;

	memset(&dx, 0, sizeof(dx));
	if (!ibv_query_device_ex(ep->ctx, NULL, &dx))
		ep->khz = dx.hca_core_clock;
	ca.wc_flags = base | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	if ((ep->cqx = ibv_create_cq_ex(ep->ctx, &ca)))
		ep->ts = 1;
	e = errno;
	if (!ep->cqx && ep->khz) {	/* the device's cycles, which its clock rate turns into ns */
		ca.wc_flags = base | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
		if ((ep->cqx = ibv_create_cq_ex(ep->ctx, &ca)))
			ep->ts = 2;
		e = errno;
	}
	/* Without timestamps a plain CQ: an extended one gives nothing more, and rxe's (rdma-core 44,
	 * Linux 6.1) polled as ibv_create_cq_ex(3) says hands out empty completions (wr_id 0,
	 * status success, 0 bytes) once its first batch ends, without end */
	if (!ep->cqx)
		snprintf(ep->info.clock_why, sizeof(ep->info.clock_why),
			 "%s gives no completion timestamps (ibv_create_cq_ex: %s)", ep->info.dev, strerror(e));
	if (ep->cqx) {
		ep->cq = ibv_cq_ex_to_cq(ep->cqx);
	} else if (!(ep->cq = ibv_create_cq(ep->ctx, cqe, NULL, ep->ch, 0))) {
		unsigned long long kib;

		e = errno;
		if (vb_memlock_limited(e, 0, &kib))
			return fail(err, errlen, e, "cannot make a completion queue on %s: %s; the locked-memory limit, %llu KiB, may be why: " VB_MEMLOCK_FIX,
				    ep->info.dev, strerror(e), kib);
		return fail(err, errlen, e, "cannot make a completion queue on %s: %s", ep->info.dev, strerror(e));
	}
	ep->info.clock = ep->ts ? UD_CLOCK_DEVICE : UD_CLOCK_SOFTWARE;
	if (ibv_req_notify_cq(ep->cq, 0))
		return fail(err, errlen, EIO, "cannot arm the completion queue of %s", ep->info.dev);
	return 0;
}

static int post_recv(struct ud_ep *ep, int qi, int slot)
{
	struct ud_q *q = &ep->q[qi];
	struct ibv_sge sge = { (uintptr_t)(ep->buf + q->base + (size_t)slot * SLOT), SLOT, ep->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR_ID(0, qi, slot), .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(q->qp, &wr, &bad);
}

/* QP qi: made, moved to RTS, its receives posted */
static int make_qp(struct ud_ep *ep, int qi, char *err, size_t errlen)
{
	struct ud_q *q = &ep->q[qi];
	struct ibv_qp_init_attr ia = {
		.send_cq = ep->cq, .recv_cq = ep->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = (uint32_t)q->depth, .max_recv_wr = (uint32_t)q->depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = ep->port, .qkey = ep->qkey };
	int rc;

	q->ah_of = calloc((size_t)q->depth, sizeof(*q->ah_of));
	q->tag = calloc((size_t)q->depth, sizeof(*q->tag));
	if (!q->ah_of || !q->tag)
		return fail(err, errlen, ENOMEM, "out of memory for the UD QPs of %s", ep->info.dev);
	if (!(q->qp = ibv_create_qp(ep->pd, &ia)))
		return fail(err, errlen, errno, "cannot create UD QP %d of %d on %s: %s", qi + 1, ep->nq, ep->info.dev,
			    strerror(errno));
	rc = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	if (!rc) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		rc = ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
	}
	if (!rc) {
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		rc = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	if (rc)
		return fail(err, errlen, rc, "cannot move UD QP 0x%06x of %s to RTS: %s", q->qp->qp_num, ep->info.dev,
			    strerror(rc));
	for (int s = 0; s < q->depth; s++)
		if ((rc = post_recv(ep, qi, s)))
			return fail(err, errlen, rc, "cannot post receives on UD QP 0x%06x of %s: %s", q->qp->qp_num,
				    ep->info.dev, strerror(rc));
	return 0;
}

static int make_all(struct ud_ep *ep, int nqps, char *err, size_t errlen)
{
	size_t off = 0;
	int cqe = 0, rc, fl;

	ep->nq = nqps + 1;
	ep->q = calloc((size_t)ep->nq, sizeof(*ep->q));
	if (!ep->q)
		return fail(err, errlen, ENOMEM, "out of memory for %d UD QPs", ep->nq);
	for (int i = 0; i < ep->nq; i++) {
		ep->q[i].depth = i ? DEPTH : RESP_DEPTH;
		ep->q[i].base = off;
		off += 2 * (size_t)ep->q[i].depth * SLOT;
		cqe += 2 * ep->q[i].depth;
	}
	ep->buflen = off;
	if (!(ep->pd = ibv_alloc_pd(ep->ctx)) || !(ep->ch = ibv_create_comp_channel(ep->ctx)))
		return fail(err, errlen, errno, "cannot set up %s (protection domain, completion channel): %s",
			    ep->info.dev, strerror(errno));
	fl = fcntl(ep->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(ep->ch->fd, F_SETFL, fl | O_NONBLOCK))
		return fail(err, errlen, errno, "fcntl: %s", strerror(errno));
	if ((rc = make_cq(ep, cqe, err, errlen)))
		return rc;
	if (!(ep->buf = calloc(1, ep->buflen)) ||
	    !(ep->mr = ibv_reg_mr(ep->pd, ep->buf, ep->buflen, IBV_ACCESS_LOCAL_WRITE))) {
		unsigned long long kib;
		int e = ep->buf ? errno : ENOMEM;

		if (vb_memlock_limited(e, ep->buflen, &kib))
			return fail(err, errlen, e, "cannot register %zu bytes with %s: the locked-memory limit is %llu KiB; " VB_MEMLOCK_FIX,
				    ep->buflen, ep->info.dev, kib);
		return fail(err, errlen, e, "cannot register %zu bytes with %s: %s", ep->buflen, ep->info.dev,
			    strerror(e));
	}
	for (int i = 0; i < ep->nq; i++)
		if ((rc = make_qp(ep, i, err, errlen)))
			return rc;
	ep->info.resp_qpn = ep->q[0].qp->qp_num;
	ep->info.nqps = nqps;
	return 0;
}

int ud_open(struct ud_ep **out, struct in_addr ip, int nqps, uint32_t qkey, size_t max_ahs, char *err,
	    size_t errlen)
{
	struct ud_ep *ep;
	int rc;

	*out = NULL;
	if (nqps < 1 || nqps > 1024 || max_ahs < 1 || max_ahs > (1u << 20))
		return fail(err, errlen, EINVAL, "ud_open: %d QPs, %zu address handles", nqps, max_ahs);
	if (!(ep = calloc(1, sizeof(*ep))))
		return fail(err, errlen, ENOMEM, "out of memory");
	ep->qkey = qkey;
	ep->ah_max = max_ahs;
	for (ep->ah_cap = 16; ep->ah_cap < 2 * max_ahs; ep->ah_cap *= 2)
		;
	ep->ah = calloc(ep->ah_cap, sizeof(*ep->ah));
	rc = ep->ah ? find_port(ep, ip, err, errlen) : fail(err, errlen, ENOMEM, "out of memory");
	if (!rc)
		rc = make_all(ep, nqps, err, errlen);
	if (rc) {
		ud_close(ep);
		return rc;
	}
	*out = ep;
	return 0;
}

void ud_close(struct ud_ep *ep)
{
	if (!ep)
		return;
	for (int i = 0; ep->q && i < ep->nq; i++) {
		if (ep->q[i].qp)
			ibv_destroy_qp(ep->q[i].qp);
		free(ep->q[i].ah_of);
		free(ep->q[i].tag);
	}
	for (size_t i = 0; ep->ah && i < ep->ah_cap; i++)
		if (ep->ah[i].key)
			ibv_destroy_ah(ep->ah[i].ah);
	if (ep->mr)
		ibv_dereg_mr(ep->mr);
	if (ep->cq)
		ibv_destroy_cq(ep->cq);
	if (ep->ch)
		ibv_destroy_comp_channel(ep->ch);
	if (ep->pd)
		ibv_dealloc_pd(ep->pd);
	if (ep->ctx)
		ibv_close_device(ep->ctx);
	free(ep->q);
	free(ep->ah);
	free(ep->buf);
	free(ep);
}

const struct ud_info *ud_info(const struct ud_ep *ep)
{
	return &ep->info;
}

int ud_fd(const struct ud_ep *ep)
{
	return ep->ch->fd;
}

/* ---- address handles: cached per (destination, flow label), bounded ---- */

static size_t ah_home(const struct ud_ep *ep, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (ep->ah_cap - 1);
}

/* Is h in the cyclic range (i, j]? */
static int cyc_in(size_t i, size_t h, size_t j)
{
	return i <= j ? i < h && h <= j : h > i || h <= j;
}

/* Take entry i out, moving the ones after it back (linear probing stays whole) */
static void ah_remove(struct ud_ep *ep, size_t i)
{
	size_t j = i, mask = ep->ah_cap - 1;

	ibv_destroy_ah(ep->ah[i].ah);
	ep->ah[i].key = 0;
	ep->ah_n--;
	for (;;) {
		j = (j + 1) & mask;
		if (!ep->ah[j].key)
			return;
		if (!cyc_in(i, ah_home(ep, ep->ah[j].key), j)) {	/* its probe passes i: move it there */
			ep->ah[i] = ep->ah[j];
			ep->ah[j].key = 0;
			i = j;
		}
	}
}

/* An entry with no send in flight out, so that another fits, the next from the clock hand on
 * (amortized O(1): the sends in flight are few): 0, or -EAGAIN when every one has a send out */
static int ah_evict(struct ud_ep *ep)
{
	for (size_t n = 0; n < ep->ah_cap; n++, ep->hand = (ep->hand + 1) & (ep->ah_cap - 1))
		if (ep->ah[ep->hand].key && !ep->ah[ep->hand].refs) {
			ah_remove(ep, ep->hand);	/* (the hand stays: what moved back into it is next) */
			ep->info.ah_replaced++;
			return 0;
		}
	return -EAGAIN;
}

/* The index of key's entry, or -1 */
static long ah_find(const struct ud_ep *ep, uint64_t key)
{
	for (size_t i = ah_home(ep, key); ep->ah[i].key; i = (i + 1) & (ep->ah_cap - 1))
		if (ep->ah[i].key == key)
			return (long)i;
	return -1;
}

/* The entry of (dst, flow label), made if need be: its index, or -errno */
static long ah_get(struct ud_ep *ep, struct in_addr dst, uint32_t fl)
{
	uint64_t key = ((uint64_t)ntohl(dst.s_addr) << 20 | (fl & 0xFFFFF)) + 1;
	long found = ah_find(ep, key);
	struct ibv_ah_attr a = { .is_global = 1, .port_num = ep->port };
	struct ibv_ah *ah;
	size_t i;

	if (found >= 0)
		return found;
	if (ep->ah_n >= ep->ah_max && ah_evict(ep))
		return -EAGAIN;
	for (i = ah_home(ep, key); ep->ah[i].key; i = (i + 1) & (ep->ah_cap - 1))
		;	/* its free slot */
	memset(a.grh.dgid.raw + 10, 0xff, 2);	/* ::ffff:a.b.c.d, RoCE v2 over IPv4 */
	memcpy(a.grh.dgid.raw + 12, &dst.s_addr, 4);
	a.grh.flow_label = fl & 0xFFFFF;
	a.grh.sgid_index = (uint8_t)ep->gidx;
	a.grh.hop_limit = 64;
	if (!(ah = ibv_create_ah(ep->pd, &a)))
		return -(errno ? errno : EIO);
	ep->ah[i] = (struct ud_ah){ key, ah, 0 };
	ep->ah_n++;
	ep->info.ah_created++;
	return (long)i;
}

int ud_send(struct ud_ep *ep, int qp, struct in_addr dst, uint32_t dqpn, uint32_t flow_label, const void *msg,
	    size_t len, uint64_t tag)
{
	int qi = qp == UD_RESPONDER ? 0 : qp + 1, slot, rc;
	struct ud_q *q;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;
	long a;

	if (qi < 0 || qi >= ep->nq || len > UD_MSG_MAX)
		return -EINVAL;
	q = &ep->q[qi];
	if (q->n >= q->depth)
		return -EAGAIN;
	if ((a = ah_get(ep, dst, flow_label)) < 0)
		return (int)a;
	slot = q->head;
	memcpy(ep->buf + q->base + ((size_t)q->depth + (size_t)slot) * SLOT, msg, len);
	sge = (struct ibv_sge){ (uintptr_t)(ep->buf + q->base + ((size_t)q->depth + (size_t)slot) * SLOT),
				(uint32_t)len, ep->mr->lkey };
	wr.wr_id = WR_ID(WR_SEND, qi, slot);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ep->ah[a].ah;
	wr.wr.ud.remote_qpn = dqpn;
	wr.wr.ud.remote_qkey = ep->qkey;
	if ((rc = ibv_post_send(q->qp, &wr, &bad)))
		return -rc;
	ep->ah[a].refs++;
	q->ah_of[slot] = ep->ah[a].key;
	q->tag[slot] = tag;
	q->head = (q->head + 1) % q->depth;
	q->n++;
	return 0;
}

/* ---- completions ---- */

/* The sender's IPv4 address from the 40 bytes before a message: RoCE v2 over IPv4 puts its IPv4
 * header in the last 20 of them; else an IPv6 header, whose source may be v4-mapped */
static uint32_t grh_src(const unsigned char *g)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint32_t ip = 0;

	if (g[20] == 0x45)
		memcpy(&ip, g + 32, 4);
	else if (g[0] >> 4 == 6 && !memcmp(g + 8, mapped, 12))
		memcpy(&ip, g + 20, 4);
	return ip;
}

/* The SQ error state a failed UD send may leave: back to RTS */
static void recover(struct ud_q *q)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (!ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia) && a.qp_state == IBV_QPS_SQE) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
	}
}

/* One completion (id, status, bytes, GRH flag, source QP, device time) into c */
static void take(struct ud_ep *ep, uint64_t id, enum ibv_wc_status st, uint32_t bytes, int grh, uint32_t src_qp,
		 uint64_t t, struct ud_comp *c)
{
	int qi = (int)(id >> 32 & 0xffff), slot = (int)(uint32_t)id, ok = st == IBV_WC_SUCCESS;
	struct ud_q *q;

	memset(c, 0, offsetof(struct ud_comp, data));
	c->qp = qi ? qi - 1 : UD_RESPONDER;
	c->ok = ok;
	if (!ok && !ep->info.failed++)
		snprintf(ep->info.first_failure, sizeof(ep->info.first_failure), "%s of UD QP %d of %d on %s: %s (status %d)",
			 id & WR_SEND ? "a send" : "a receive", qi + 1, ep->nq, ep->info.dev, ibv_wc_status_str(st), (int)st);
	c->t_ns = t;
	if (qi >= ep->nq || slot >= ep->q[qi].depth) {
		c->ok = 0;
		return;
	}
	q = &ep->q[qi];
	if (id & WR_SEND) {
		int first = (q->head - q->n + q->depth) % q->depth;

		c->send = 1;
		c->tag = q->tag[slot];
		if (q->n && slot == first) {	/* (a UD queue completes its sends in order) */
			long a = ah_find(ep, q->ah_of[slot]);

			if (a >= 0 && ep->ah[a].refs)
				ep->ah[a].refs--;
			q->n--;
		}
		if (!ok)
			recover(q);
		return;
	}
	if (ok && bytes >= GRH_LEN && bytes - GRH_LEN <= UD_MSG_MAX) {
		const unsigned char *b = ep->buf + q->base + (size_t)slot * SLOT;

		c->len = bytes - GRH_LEN;
		memcpy(c->data, b + GRH_LEN, c->len);
		c->src_ip = grh ? grh_src(b) : 0;
		c->src_qpn = src_qp;
	} else {
		c->ok = 0;
	}
	post_recv(ep, qi, slot);	/* (fails on a QP in error, which receives nothing more) */
}

static uint64_t dev_ns(struct ud_ep *ep)
{
	if (ep->ts == 1)
		return ibv_wc_read_completion_wallclock_ns(ep->cqx);
	if (ep->ts == 2)
		return (uint64_t)((unsigned __int128)ibv_wc_read_completion_ts(ep->cqx) * 1000000u / ep->khz);
	return 0;
}

static int poll_ex(struct ud_ep *ep, struct ud_comp *out, int max, uint64_t now)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int n = 0, rc = ibv_start_poll(ep->cqx, &pa);

	if (rc == ENOENT)
		return 0;
	if (rc)
		return -rc;
	for (;;) {
		struct ibv_cq_ex *x = ep->cqx;

		take(ep, x->wr_id, x->status, ibv_wc_read_byte_len(x),
		     !!(ibv_wc_read_wc_flags(x) & IBV_WC_GRH), ibv_wc_read_src_qp(x), ep->ts ? dev_ns(ep) : now,
		     &out[n++]);
		if (n == max || ibv_next_poll(x))
			break;
	}
	ibv_end_poll(ep->cqx);
	return n;
}

static int poll_plain(struct ud_ep *ep, struct ud_comp *out, int max, uint64_t now)
{
	struct ibv_wc wc[32];
	int n = ibv_poll_cq(ep->cq, max < 32 ? max : 32, wc);

	if (n < 0)
		return -EIO;
	for (int i = 0; i < n; i++)
		take(ep, wc[i].wr_id, wc[i].status, wc[i].byte_len, !!(wc[i].wc_flags & IBV_WC_GRH),
		     wc[i].src_qp, now, &out[i]);
	return n;
}

int ud_poll(struct ud_ep *ep, struct ud_comp *out, int max)
{
	struct ibv_cq *cq;
	void *ctx;
	unsigned ev = 0;

	while (!ibv_get_cq_event(ep->ch, &cq, &ctx))
		ev++;
	if (ev) {
		ibv_ack_cq_events(ep->cq, ev);
		if (ibv_req_notify_cq(ep->cq, 0))
			return -EIO;
	}
	if (max <= 0)
		return 0;
	return ep->cqx ? poll_ex(ep, out, max, realtime_ns()) : poll_plain(ep, out, max, realtime_ns());
}

#else	/* !HAVE_VERBS */

#define NO_VERBS "this fabscope was built without rdma-core (libibverbs): install libibverbs-dev and rebuild"

int ud_built(char *why, size_t len)
{
	snprintf(why, len, "%s", NO_VERBS);
	return 0;
}

int ud_open(struct ud_ep **out, struct in_addr ip, int nqps, uint32_t qkey, size_t max_ahs, char *err,
	    size_t errlen)
{
	(void)ip, (void)nqps, (void)qkey, (void)max_ahs;
	*out = NULL;
	snprintf(err, errlen, "%s", NO_VERBS);
	return -ENOSYS;
}

void ud_close(struct ud_ep *ep)
{
	(void)ep;
}

const struct ud_info *ud_info(const struct ud_ep *ep)
{
	(void)ep;
	return NULL;
}

int ud_fd(const struct ud_ep *ep)
{
	(void)ep;
	return -1;
}

int ud_send(struct ud_ep *ep, int qp, struct in_addr dst, uint32_t dqpn, uint32_t flow_label, const void *msg,
	    size_t len, uint64_t tag)
{
	(void)ep, (void)qp, (void)dst, (void)dqpn, (void)flow_label, (void)msg, (void)len, (void)tag;
	return -ENOSYS;
}

int ud_poll(struct ud_ep *ep, struct ud_comp *out, int max)
{
	(void)ep, (void)out, (void)max;
	return -ENOSYS;
}

#endif
