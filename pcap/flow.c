/* SPDX-License-Identifier: BSD-2-Clause */
/* The per-QP flow table: see flow.h. */
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"

#define PSN_MOD (1u << 24)

/* b - a as a signed distance modulo 2^24, in [-2^23, 2^23) */
static int32_t psn_diff(uint32_t b, uint32_t a)
{
	uint32_t d = (b - a) & ROCE_PSN_MASK;

	return d >= PSN_MOD / 2 ? (int32_t)d - (int32_t)PSN_MOD : (int32_t)d;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xbf58476d1ce4e5b9ull;
}

static uint64_t key_hash(const struct flow_key *k)
{
	uint64_t w[4], h = k->dqpn;

	memcpy(w, k->src, 16);
	memcpy(w + 2, k->dst, 16);
	h = mix(h, w[0]);
	h = mix(h, w[2]);
	if (k->fam == PKT_ADDR_IPV6 || k->fam == PKT_ADDR_GID) {
		h = mix(h, w[1]);
		h = mix(h, w[3]);
	}
	return h ^ (h >> 31);
}

static int key_eq(const struct flow_key *a, const struct flow_key *b)
{
	return a->dqpn == b->dqpn && a->fam == b->fam && !memcmp(a->src, b->src, 16) &&
	       !memcmp(a->dst, b->dst, 16);
}

int flow_table_init(struct flow_table *t, int max_flows)
{
	unsigned op;

	memset(t, 0, sizeof(*t));
	for (op = 0; op < 256; op++) {
		t->op_is[op] = (uint8_t)((roce_is_request(op) ? FLOW_OP_REQ : 0) |
					 (roce_is_response(op) ? FLOW_OP_RESP : 0) |
					 (roce_is_read_response(op) ? FLOW_OP_READ_RESP : 0) |
					 (roce_is_ack(op) ? FLOW_OP_ACK : 0) | (roce_has_payload(op) ? FLOW_OP_DATA : 0));
		t->op_pos[op] = (uint8_t)roce_position(op);
	}
	t->max = max_flows > 0 ? max_flows : 1;
	t->nslots = 1;
	while (t->nslots < (size_t)t->max * 2 && t->nslots < (1u << 22))
		t->nslots <<= 1;
	t->slot = calloc(t->nslots, sizeof(*t->slot));
	t->v = calloc((size_t)t->max, sizeof(*t->v));
	return t->slot && t->v ? 0 : -1;
}

void flow_table_release(struct flow_table *t)
{
	int i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i]->lat);
		free(t->v[i]);
	}
	free(t->v);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static struct flow *flow_get(struct flow_table *t, const struct flow_key *k, double ts)
{
	size_t h;
	struct flow *f;

	if (t->recent && key_eq(&t->recent->key, k))	/* packets come in runs of one QP */
		return t->recent;
	h = (size_t)(key_hash(k) & (t->nslots - 1));
	for (f = t->slot[h]; f; f = f->next)
		if (key_eq(&f->key, k))
			return t->recent = f;
	if (t->n >= t->max)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->key = *k;
	f->reverse = -1;
	f->index = t->n;
	f->first = ts;
	f->t0 = t->first;
	f->bucket_w = 0.001;
	f->lat_min = INFINITY;
	f->next = t->slot[h];
	t->slot[h] = f;
	t->v[t->n++] = f;
	return t->recent = f;
}

static void event(struct flow_event *ev, int *n, double t, uint32_t psn, uint8_t code)
{
	if (*n >= FLOW_EVENTS)
		return;
	ev[*n].t = t;
	ev[*n].psn = psn;
	ev[*n].code = code;
	ev[*n].n = 1;
	(*n)++;
}

/* A flow's bitmaps of PSNs in its window: one bit a PSN, modulo the window */
static void psn_bit_put(uint8_t *bits, uint32_t psn, int on)
{
	uint32_t i = psn % FLOW_WINDOW;

	if (on)
		bits[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		bits[i / 8] &= (uint8_t)~(1u << (i % 8));
}

static int psn_bit(const uint8_t *bits, uint32_t psn)
{
	uint32_t i = psn % FLOW_WINDOW;

	return bits[i / 8] >> (i % 8) & 1;
}

/* a packet sent again: *count is seen_again or resent */
static void burst(struct flow *f, uint64_t *count, uint32_t psn, double ts)
{
	(*count)++;
	if (!f->in_burst) {
		f->bursts++;
		f->in_burst = 1;
		event(f->burst_ev, &f->nburst_ev, ts, psn, 0);
	} else if (f->nburst_ev && f->bursts <= FLOW_EVENTS) {
		f->burst_ev[f->nburst_ev - 1].n++;
	}
}

/* How psn_track judges a packet. */
enum psn_kind {
	PSN_REQUEST,		/* a request: NAKs of the reverse flow tell resends */
	PSN_RESPONSE,		/* a READ response MIDDLE or LAST: follows the one before */
	PSN_RESPONSE_NEW,	/* a READ response FIRST or ONLY: starts where its READ did */
};

/*
 * A request's (or a READ response's) PSN: in order, a gap, a duplicate or
 * out of order.  nak: the reverse flow, when it is known (its NAKs tell a
 * resend from a late packet).  slack_next: PSNs the next request may skip
 * (a READ's responses).  PSNs skipped without a loss (a READ's, or on the
 * response side the PSNs of the requests between two READs) are marked
 * seen: a packet that comes back to one is sent again (rxe re-READs the
 * rest of a READ at a PSN inside the first one's range).  A READ response
 * that fills a gap is a resend: a responder answers in order.
 */
static void psn_track(struct flow *f, const struct flow *nak, uint32_t psn, double ts, uint32_t slack_next,
		      enum psn_kind kind)
{
	int32_t d;

	if (!f->have_psn) {
		f->have_psn = 1;
		f->first_psn = f->max_psn = psn;
		f->expect = (psn + 1) & ROCE_PSN_MASK;
		psn_bit_put(f->seen, psn, 1);
		psn_bit_put(f->carried, psn, 1);
		f->read_slack = slack_next;
		return;
	}
	d = psn_diff(psn, f->expect);
	if (d >= 0) {
		uint32_t skip = (uint32_t)d, i;
		int lost = kind == PSN_REQUEST ? skip > f->read_slack : kind == PSN_RESPONSE && skip;

		if (lost) {
			f->gaps++;
			f->lost += skip;
			f->missing += skip;
			event(f->gap_ev, &f->ngap_ev, ts, f->expect, 0);
		}
		for (i = 0; i < skip && i < FLOW_WINDOW; i++) {	/* lost: not seen; skipped: taken */
			psn_bit_put(f->seen, (f->expect + i) & ROCE_PSN_MASK, !lost);
			psn_bit_put(f->carried, (f->expect + i) & ROCE_PSN_MASK, 0);
		}
		psn_bit_put(f->seen, psn, 1);
		psn_bit_put(f->carried, psn, 1);
		f->max_psn = psn;
		f->expect = (psn + 1) & ROCE_PSN_MASK;
		f->in_burst = 0;
	} else if (-d > FLOW_WINDOW || psn_bit(f->carried, psn)) {
		burst(f, &f->seen_again, psn, ts);	/* seen before (or too old to know) */
	} else if (psn_bit(f->seen, psn)) {
		psn_bit_put(f->carried, psn, 1);	/* a PSN a READ's responses took: READ again */
		burst(f, &f->resent, psn, ts);
	} else {
		psn_bit_put(f->seen, psn, 1);	/* it fills a gap */
		psn_bit_put(f->carried, psn, 1);
		if (f->missing)
			f->missing--;
		if (f->in_burst || kind != PSN_REQUEST || (nak && nak->have_seq_nak && nak->seq_nak_psn == psn)) {
			burst(f, &f->resent, psn, ts);	/* the resend asked for, or a response again */
		} else {
			f->ooo++;	/* late, not lost */
			if (f->lost)
				f->lost--;
		}
	}
	f->read_slack = slack_next;
}

static unsigned lat_bucket(uint64_t ns)
{
	unsigned e = 0, b;

	if (ns < 8)
		return (unsigned)ns;
	while ((ns >> e) > 1)
		e++;
	b = 8 * (e - 2) + (unsigned)((ns >> (e - 3)) & 7);
	return b < FLOW_LAT_BUCKETS ? b : FLOW_LAT_BUCKETS - 1;
}

static double lat_bucket_mid(unsigned b)
{
	unsigned e, m;

	if (b < 8)
		return b;
	e = b / 8 + 2;
	m = b % 8;
	return ldexp(8 + m + 0.5, (int)e - 3);
}

static void lat_add(struct flow *f, double s)
{
	if (!(s >= 0))
		return;
	if (!f->lat && !(f->lat = calloc(FLOW_LAT_BUCKETS, sizeof(*f->lat))))
		return;
	f->lat[lat_bucket((uint64_t)llround(s * 1e9))]++;
	f->nlat++;
	f->lat_sum += s;
	if (s < f->lat_min)
		f->lat_min = s;
	if (s > f->lat_max)
		f->lat_max = s;
}

double flow_lat_percentile(const struct flow *f, double p)
{
	uint64_t want, acc = 0;
	unsigned b;

	if (!f->nlat || !f->lat)
		return NAN;
	want = (uint64_t)ceil(p / 100 * (double)f->nlat);
	if (want < 1)
		want = 1;
	for (b = 0; b < FLOW_LAT_BUCKETS; b++) {
		acc += f->lat[b];
		if (acc >= want) {
			double v = lat_bucket_mid(b) / 1e9;

			return v < f->lat_min ? f->lat_min : v > f->lat_max ? f->lat_max : v;
		}
	}
	return f->lat_max;
}

static void pend_add(struct flow *f, uint32_t psn, double ts)
{
	int i;

	if (f->npending == FLOW_PENDING) {	/* the oldest has waited long enough */
		f->pend_head = (f->pend_head + 1) % FLOW_PENDING;
		f->npending--;
		f->pend_dropped++;
	}
	i = (f->pend_head + f->npending) % FLOW_PENDING;
	f->pending[i].psn = psn;
	f->pending[i].t = ts;
	f->npending++;
}

/* An acknowledge (or READ response) of PSN psn at ts: every request at or before it is answered. */
static void pend_ack(struct flow *f, uint32_t psn, double ts)
{
	while (f->npending) {
		int i = f->pend_head;

		if (psn_diff(psn, f->pending[i].psn) < 0)
			break;
		lat_add(f, ts - f->pending[i].t);
		f->pend_head = (f->pend_head + 1) % FLOW_PENDING;
		f->npending--;
	}
}

/* The request flow an acknowledge flow answers: the other way between the same hosts,
 * not paired yet, whose PSNs cover the acknowledged one. */
static struct flow *find_requester(struct flow_table *t, const struct flow *r, uint32_t psn)
{
	struct flow *best = NULL;
	int i;

	for (i = 0; i < t->n; i++) {
		struct flow *f = t->v[i];

		if (f->reverse >= 0 || f == r || f->key.fam != r->key.fam ||
		    memcmp(f->key.src, r->key.dst, 16) || memcmp(f->key.dst, r->key.src, 16) || !f->have_psn)
			continue;
		if (psn_diff(psn, f->first_psn) >= 0 && psn_diff(f->max_psn, psn) >= 0)
			return f;
		if (!best)
			best = f;
	}
	return best;
}

static void pair(struct flow *a, struct flow *b)
{
	a->reverse = b->index;
	b->reverse = a->index;
}

static void timeline_add(struct flow *f, double ts, uint64_t bytes)
{
	double off = ts - f->t0, at;
	size_t b;

	if (off < 0)
		off = 0;
	while ((at = off / f->bucket_w) >= FLOW_BUCKETS) {	/* twice as wide: merge pairs */
		int i;

		for (i = 0; i < FLOW_BUCKETS / 2; i++)
			f->timeline[i] = f->timeline[2 * i] + f->timeline[2 * i + 1];
		memset(f->timeline + FLOW_BUCKETS / 2, 0, sizeof(f->timeline) / 2);
		f->bucket_w *= 2;
	}
	b = (size_t)at;
	f->timeline[b < FLOW_BUCKETS ? b : FLOW_BUCKETS - 1] += bytes;
}

static void pfc_add(struct flow_table *t, const struct macctl *m, double ts)
{
	int p;
	size_t b;

	if (!t->pfc.bucket_w)
		t->pfc.bucket_w = 0.001;
	while (ts / t->pfc.bucket_w >= FLOW_BUCKETS) {	/* twice as wide: merge pairs */
		for (p = 0; p < 8; p++) {
			int i;

			for (i = 0; i < FLOW_BUCKETS / 2; i++)
				t->pfc.timeline[p][i] = t->pfc.timeline[p][2 * i] + t->pfc.timeline[p][2 * i + 1];
			memset(t->pfc.timeline[p] + FLOW_BUCKETS / 2, 0, sizeof(t->pfc.timeline[p]) / 2);
		}
		t->pfc.bucket_w *= 2;
	}
	b = ts > 0 ? (size_t)(ts / t->pfc.bucket_w) : 0;
	if (b >= FLOW_BUCKETS)
		b = FLOW_BUCKETS - 1;
	if (m->kind == MACCTL_PFC) {
		for (p = 0; p < 8; p++) {
			if (!(m->enable >> p & 1))
				continue;
			t->pfc.timeline[p][b]++;
			t->pfc.frames[p]++;
			t->pfc.quanta[p] += m->quanta[p];
			if (m->quanta[p])
				t->pfc.xoff[p]++;
			else
				t->pfc.xon[p]++;
		}
	} else if (m->kind == MACCTL_PAUSE) {
		t->pfc.pause_frames++;
		t->pfc.pause_quanta += m->quanta[0];
	} else {
		t->macctl_other++;
		return;
	}
	if (!t->pfc.have) {
		t->pfc.have = 1;
		t->pfc.first = ts;
	}
	t->pfc.last = ts;
}

void flow_add_brief(struct flow_table *t, const struct pkt_brief *k, double ts)
{
	struct flow_key key;
	struct flow *f;
	unsigned op, i, is;

	t->pkts++;
	t->bytes += k->wirelen;
	if (!t->have_time) {
		t->first = ts;
		t->have_time = 1;
	}
	if (ts > t->last)
		t->last = ts;
	for (i = 0; k->flags && i < 32; i++)
		if (k->flags >> i & 1)
			t->flags[i]++;
	if (k->truncated) {
		t->truncated++;
		t->cut[k->cut < PKT_L_MAX ? k->cut : 0]++;
	}
	if (k->mac) {
		pfc_add(t, k->mac, ts - t->first);
		return;
	}
	if (!(k->layers & PKT_BIT(PKT_L_BTH))) {
		if (!k->truncated)
			t->other++;
		return;
	}
	t->roce++;
	t->roce_bytes += k->wirelen;
	memset(&key, 0, sizeof(key));
	memcpy(key.src, k->src, 16);
	memcpy(key.dst, k->dst, 16);
	key.fam = (uint8_t)k->addr;
	key.dqpn = k->dqpn;
	f = flow_get(t, &key, ts);
	if (!f) {
		t->overflow_pkts++;
		return;
	}
	op = k->opcode;
	if (!f->pkts)
		f->transport = (int)roce_transport(op);
	f->pkts++;
	f->bytes += k->wirelen;
	f->payload += k->payload_len;
	f->last = ts;
	f->ops[op]++;
	timeline_add(f, ts, k->wirelen);
	if (k->ecn == 3)
		f->ce++;
	else if (k->ecn)
		f->ect++;
	if (f->pkts > 1 && k->sport != f->last_sport)
		f->sport_changes++;	/* a new port, or back to an earlier one */
	f->last_sport = k->sport;
	for (i = 0; i < (unsigned)f->nsports && f->sports[i] != k->sport; i++)
		;
	if (i == (unsigned)f->nsports) {
		if (f->nsports < FLOW_SPORTS)
			f->sports[f->nsports++] = k->sport;
		else
			f->sports_more = 1;
	}
	if (op == ROCE_OP_CNP) {
		f->cnps++;
		event(f->cnp_ev, &f->ncnp_ev, ts - t->first, k->psn, 0);
		return;
	}
	is = t->op_is[op];
	if (is & FLOW_OP_REQ) {
		uint32_t slack = 0;
		enum roce_position pos = t->op_pos[op];

		f->requests++;
		if ((k->layers & PKT_BIT(PKT_L_RETH)) && !(is & FLOW_OP_DATA) && k->dma_len)
			slack = (uint32_t)(((uint64_t)k->dma_len + 255) / 256 - 1);	/* a READ: its responses' PSNs */
		if (slack > FLOW_WINDOW)
			slack = FLOW_WINDOW;	/* (2 GiB READs at 256 B: beyond the window anyway) */
		if ((pos == ROCE_POS_FIRST || pos == ROCE_POS_MIDDLE) && k->payload_len > f->mtu_seen)
			f->mtu_seen = (uint32_t)k->payload_len;
		psn_track(f, f->reverse >= 0 ? t->v[f->reverse] : NULL, k->psn, ts - t->first, slack, PSN_REQUEST);
		if (f->transport == ROCE_RC && (k->ackreq || slack || !(is & FLOW_OP_DATA)))
			pend_add(f, k->psn, ts);
		return;
	}
	if (!(is & FLOW_OP_RESP))
		return;
	f->responses++;
	if (is & FLOW_OP_READ_RESP) {
		f->read_resps++;
		enum roce_position pos = t->op_pos[op];

		psn_track(f, NULL, k->psn, ts - t->first, 0, pos == ROCE_POS_FIRST || pos == ROCE_POS_ONLY ?
			  PSN_RESPONSE_NEW : PSN_RESPONSE);
	}
	if (is & FLOW_OP_ACK)
		f->acks++;
	if ((k->layers & PKT_BIT(PKT_L_AETH))) {
		enum roce_aeth_kind ak = roce_aeth_kind(k->syndrome);
		unsigned v = roce_aeth_value(k->syndrome);

		if (ak == ROCE_AETH_NAK) {
			f->naks[v % FLOW_NAK_CODES]++;
			if (v == ROCE_NAK_PSN_SEQ) {
				f->have_seq_nak = 1;
				f->seq_nak_psn = k->psn;
				if (f->reverse < 0 && f->pair_tried != t->n) {	/* pair now: resends must
											 * be told from late packets */
					struct flow *q = find_requester(t, f, k->psn);

					if (q)
						pair(f, q);
					else
						f->pair_tried = t->n;
				}
			}
			event(f->nak_ev, &f->nnak_ev, ts - t->first, k->psn, (uint8_t)v);
		} else if (ak == ROCE_AETH_RNR) {
			f->rnr++;
			event(f->rnr_ev, &f->nrnr_ev, ts - t->first, k->psn, (uint8_t)v);
		} else if (ak == ROCE_AETH_ACK) {
			f->acks_plain++;
		}
		if (ak != ROCE_AETH_ACK && ak != ROCE_AETH_RESERVED)
			return;	/* a NAK answers nothing: the request is sent again */
	}
	/* what this answers: the paired request flow, found at the first answer */
	if (f->reverse < 0 && f->pair_tried != t->n) {	/* again only when flows came */
		struct flow *q = find_requester(t, f, k->psn);

		if (q)
			pair(f, q);
		else
			f->pair_tried = t->n;
	}
	if (f->reverse >= 0)
		pend_ack(t->v[f->reverse], k->psn, ts);
}

void flow_add(struct flow_table *t, const struct pkt *k, double ts)
{
	struct pkt_brief b;

	pkt_brief_of(k, &b);
	flow_add_brief(t, &b, ts);
}

/* flows ordered by (v6, src, dst): the ones between two hosts one way are a run */
static int hosts_cmp3(const struct flow_key *a, int fam, const uint8_t *src, const uint8_t *dst)
{
	int c;

	if (a->fam != fam)
		return a->fam < fam ? -1 : 1;
	if ((c = memcmp(a->src, src, 16)))
		return c;
	return memcmp(a->dst, dst, 16);
}

static int hosts_cmp(const void *x, const void *y)
{
	const struct flow *a = *(struct flow *const *)x, *b = *(struct flow *const *)y;

	return hosts_cmp3(&a->key, b->key.fam, b->key.src, b->key.dst);
}

void flow_finish(struct flow_table *t)
{
	struct flow **by;
	int i;

	/* the only flow the other way between two hosts is the reverse one */
	if (t->n < 2 || !(by = malloc((size_t)t->n * sizeof(*by))))
		return;
	memcpy(by, t->v, (size_t)t->n * sizeof(*by));
	qsort(by, (size_t)t->n, sizeof(*by), hosts_cmp);
	for (i = 0; i < t->n; i++) {
		struct flow *a = t->v[i];
		int lo = 0, hi = t->n;

		if (a->reverse >= 0)
			continue;
		while (lo < hi) {	/* the first flow from a's destination to its source */
			int mid = lo + (hi - lo) / 2;

			if (hosts_cmp3(&by[mid]->key, a->key.fam, a->key.dst, a->key.src) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < t->n && !hosts_cmp3(&by[lo]->key, a->key.fam, a->key.dst, a->key.src) &&
		    (lo + 1 == t->n || hosts_cmp3(&by[lo + 1]->key, a->key.fam, a->key.dst, a->key.src)) &&
		    by[lo] != a && by[lo]->reverse < 0)
			pair(a, by[lo]);
	}
	free(by);
}

const char *flow_addr(const uint8_t *a, int fam, char *buf, size_t len)
{
	if (fam == PKT_ADDR_LID) {
		snprintf(buf, len, "lid:0x%04x", (unsigned)a[0] << 8 | a[1]);
		return buf;
	}
	if (!inet_ntop(fam == PKT_ADDR_IPV4 ? AF_INET : AF_INET6, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}
