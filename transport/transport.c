/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../core/error.h"
#include "transport.h"

static const struct xport_ops *const backends[] = {
	&xport_tcp_ops,
#ifdef HAVE_VERBS
	&xport_verbs_ops,
#endif
};

#define NBACKENDS (sizeof(backends) / sizeof(backends[0]))

const struct xport_ops *xport_find(const char *name)
{
	size_t i;

	for (i = 0; i < NBACKENDS; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}

const char *xport_names(void)
{
	static char buf[128];
	size_t i, n = 0;

	if (buf[0])
		return buf;
	for (i = 0; i < NBACKENDS; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
				      i ? ", " : "", backends[i]->name);
	return buf;
}

int xport_check(const char *name)
{
	if (xport_find(name))
		return 0;
	/* verbs is a real transport this build lacks (no rdma-core): the
	 * environment's doing; any other name is a typo */
	return fs_err(strcmp(name, "verbs") ? FS_EXIT_USAGE : FS_EXIT_ENV,
		      "unknown transport '%s': this build has %s", name, xport_names());
}

int xport_usable(const char *name, char *why, size_t len)
{
	const struct xport_ops *ops = xport_find(name);

	if (!ops) {
		snprintf(why, len, "unknown transport '%s': this build has %s", name, xport_names());
		return -1;
	}
	return ops->usable ? ops->usable(why, len) : 0;
}

int xport_fail(struct xport *x, int err_no, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->err, sizeof(x->err), fmt, ap);
	va_end(ap);
	return -err_no;
}

const char *xport_errmsg(const struct xport *x)
{
	return x->err[0] ? x->err : "unknown transport error";
}

int xport_open(const char *name, const struct xport_params *p, struct xport **out,
	       char *err, size_t errlen)
{
	const struct xport_ops *ops = xport_find(name);
	struct xport *x;
	int rc;

	*out = NULL;
	if (!ops) {
		snprintf(err, errlen, "unknown transport '%s' (this build has: %s)",
			 name, xport_names());
		return -ENOENT;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	x->ops = ops;
	x->params = *p;
	if (!x->params.timeout_ms)
		x->params.timeout_ms = 10000;
	if (!x->params.queue_depth)
		x->params.queue_depth = 128;
	rc = ops->open(x);
	if (rc) {
		snprintf(err, errlen, "%s", xport_errmsg(x));
		free(x);
		return rc;
	}
	*out = x;
	return 0;
}

void xport_close(struct xport *x)
{
	if (!x)
		return;
	x->ops->close(x);
	free(x);
}

int xport_mr_reg(struct xport *x, void *addr, size_t len, unsigned access,
		 struct xport_mr *mr)
{
	memset(mr, 0, sizeof(*mr));
	mr->addr = addr;
	mr->len = len;
	return x->ops->mr_reg(x, mr, access);
}

void xport_mr_dereg(struct xport *x, struct xport_mr *mr)
{
	if (mr->addr)
		x->ops->mr_dereg(x, mr);
	memset(mr, 0, sizeof(*mr));
}

json_t *xport_rmr_json(const struct xport_mr *mr)
{
	return json_pack("{s:I, s:I, s:I}", "addr", (json_int_t)(uintptr_t)mr->addr,
			 "len", (json_int_t)mr->len, "rkey", (json_int_t)mr->rkey);
}

int xport_rmr_parse(json_t *j, struct xport_rmr *rmr)
{
	json_int_t addr, len, rkey;

	if (json_unpack(j, "{s:I, s:I, s:I}", "addr", &addr, "len", &len,
			"rkey", &rkey) || len < 0 || rkey < 0 || rkey > UINT32_MAX)
		return -EPROTO;
	rmr->addr = (uint64_t)addr;
	rmr->len = (uint64_t)len;
	rmr->rkey = (uint32_t)rkey;
	return 0;
}

int xport_conn_new(struct xport *x, int nflows, enum xport_role role,
		   struct xport_conn **out)
{
	struct xport_conn *c = calloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	if (!c)
		return xport_fail(x, ENOMEM, "out of memory");
	c->x = x;
	c->nflows = nflows;
	c->role = role;
	rc = x->ops->conn_new(c);
	if (rc) {
		if (c->priv)
			x->ops->conn_release(c);
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

json_t *xport_conn_blob(struct xport_conn *c)
{
	json_t *b = json_pack("{s:s, s:i}", "transport", c->x->ops->name,
			      "flows", c->nflows);

	if (c->x->ops->conn_blob(c, b)) {
		json_decref(b);
		return NULL;
	}
	return b;
}

int xport_conn_connect(struct xport_conn *c, json_t *peer)
{
	const char *t = json_string_value(json_object_get(peer, "transport"));
	json_int_t nf = json_integer_value(json_object_get(peer, "flows"));

	if (!t || strcmp(t, c->x->ops->name))
		return xport_fail(c->x, EPROTO, "peer uses transport '%s', not '%s'",
				  t ? t : "?", c->x->ops->name);
	if (nf != c->nflows)
		return xport_fail(c->x, EPROTO, "peer has %lld flows, this side %d",
				  (long long)nf, c->nflows);
	return c->x->ops->conn_connect(c, peer);
}

void xport_conn_free(struct xport_conn *c)
{
	if (!c)
		return;
	c->x->ops->conn_release(c);
	free(c);
}

int xport_flow_info(struct xport_conn *c, int flow, json_t *info)
{
	return c->x->ops->flow_info(c, flow, info);
}

int xport_flow_stats(struct xport_conn *c, int flow, struct xport_flow_stats *st)
{
	st->retrans = st->reord_seen = st->rx_ooo = st->rx_segs = st->tx_segs = XPORT_STAT_NONE;
	if (!c->x->ops->flow_stats || flow < 0 || flow >= c->nflows)
		return -EOPNOTSUPP;
	return c->x->ops->flow_stats(c, flow, st);
}

/* Buffers of 2 MiB and more are rounded up to whole 2 MiB and asked to be
 * backed by transparent huge pages (where THP is "madvise" only, as on
 * Debian, nothing else would give them).  Fewer TLB entries for the NIC and
 * the CPU, and far fewer pages for whoever walks the page tables: on a host
 * whose kernel samples page ages (DAMON's physical-address monitor clears
 * each sampled page's accessed bit and flushes the TLBs of the processes
 * mapping it), 4 KiB pages cost the 4-rank all-reduce bed 10 times more
 * monitor time and 4-5 % of its link rate (bench/coll-bench.sh). */
#define XPORT_HUGE (2ul << 20)

static size_t alloc_len(size_t len)
{
	size_t sz = len ? (len + 4095) / 4096 * 4096 : 4096;

	return sz >= XPORT_HUGE ? (sz + XPORT_HUGE - 1) / XPORT_HUGE * XPORT_HUGE : sz;
}

void *xport_alloc(struct xport *x, size_t len)
{
	size_t sz = alloc_len(len);
	int node = x->ops->numa_node ? x->ops->numa_node(x) : -1;
	void *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (sz >= XPORT_HUGE)	/* a hint: without THP the pages stay small */
		madvise(p, sz, MADV_HUGEPAGE);
	if (node >= 0 && node < 64) {	/* before the pages are touched */
		unsigned long mask = 1ul << node;

		syscall(SYS_mbind, p, sz, 1 /* MPOL_PREFERRED */, &mask, 64, 0);
	}
	return p;
}

void xport_free(struct xport *x, void *p, size_t len)
{
	(void)x;
	if (p)
		munmap(p, alloc_len(len));
}

const char *xport_op_name(enum xport_op op)
{
	switch (op) {
	case XPORT_OP_SEND: return "send";
	case XPORT_OP_RECV: return "recv";
	case XPORT_OP_WRITE: return "write";
	case XPORT_OP_WRITE_IMM: return "write_imm";
	case XPORT_OP_READ: return "read";
	}
	return "?";
}

const char *xport_wc_status_str(enum xport_wc_status s)
{
	switch (s) {
	case XPORT_WC_OK: return "ok";
	case XPORT_WC_FLUSHED: return "flushed";
	case XPORT_WC_CONN_LOST: return "connection lost";
	case XPORT_WC_REMOTE_ERR: return "remote access error";
	case XPORT_WC_LOCAL_ERR: return "local error";
	}
	return "?";
}

int xport_poll_mode_parse(const char *s, enum xport_poll_mode *out)
{
	enum xport_poll_mode m;

	if (!s || !strcmp(s, "event"))
		m = XPORT_POLL_EVENT;
	else if (!strcmp(s, "busy"))
		m = XPORT_POLL_BUSY;
	else if (!strcmp(s, "adaptive"))
		m = XPORT_POLL_ADAPTIVE;
	else
		return -EINVAL;
	if (out)
		*out = m;
	return 0;
}
