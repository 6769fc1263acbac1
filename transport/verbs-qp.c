/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verbs backend's connections and data path: one RC QP per flow, its
 * connection blob (QP number, PSN, GID, MTU), the moves INIT -> RTR -> RTS
 * with the path MTU, GRH (traffic class, flow label) and UDP source port
 * of each flow (see verbs.c for how the ports are chosen), posts and
 * completions on the one CQ all connections share.  verbs.c opens the
 * device; verbs-int.h holds the state both files use.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "../core/clock.h"
#include "../core/alloc.h"
#include "../core/error.h"
#include "transport.h"
#include "verbs.h"
#include "verbs-int.h"

/* ---- connections ---- */

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

void vb_conn_release(struct xport_conn *c)
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

int vb_conn_new(struct xport_conn *c)
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
	nq = fs_reallocarray(v->qps, (size_t)v->nqps + (size_t)c->nflows, sizeof(*nq));
	if (nq)
		v->qps = nq;	/* (before the check: the old array may be gone) */
	if (!vc->qps || !nq)
		return xport_fail(x, ENOMEM, "out of memory");
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
			if (vb_memlock_limited(rc, 0, &kib))
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

int vb_conn_blob(struct xport_conn *c, json_t *blob)
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
	json_object_set_new(blob, "gid_type", json_string(vb_gid_type_name(v->gid.gid_type)));
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

int vb_conn_connect(struct xport_conn *c, json_t *peer)
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
	if (strcmp(gtype, vb_gid_type_name(v->gid.gid_type)))
		return xport_fail(x, EINVAL, "GID index %d of %s is %s but the peer's GID is %s; choose GIDs of one type with -x on both sides (see 'fabscope devices')",
				  v->gid_index, v->dev, vb_gid_type_name(v->gid.gid_type), gtype);
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
				want >= VB_FL_SPORT_MIN ? vb_sport_flow_label(want) : 0;
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

int vb_post_list(struct xport_conn *c, const struct xport_wr *wrs, int n);

int vb_post(struct xport_conn *c, const struct xport_wr *wr)
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
int vb_post_list(struct xport_conn *c, const struct xport_wr *wrs, int n)
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

int vb_poll(struct xport *x, struct xport_wc *wc, int max, int timeout_ms)
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

int vb_flow_info(struct xport_conn *c, int flow, json_t *info)
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
