/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope pcap FILE`: read a capture (libpcap offline: pcap or pcapng),
 * dissect every packet (dissect.h), account it in the per-QP flow table
 * (flow.h), and say what went wrong, on which QP, when: a summary, the flow
 * table, findings written for a human, and the PFC pauses per priority.
 * Times are seconds from the first packet of the capture.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <jansson.h>
#include <pcap/pcap.h>

#include "../core/error.h"
#include "../core/options.h"
#include "../core/builtin.h"
#include "../plots/plot.h"
#include "flow.h"
#include "reader.h"

static const char *const pcap_usage[] = {
	"fabscope pcap FILE [options]",
	NULL,
};

static const char pcap_about[] =
	"Analyze a RoCE capture (pcap or pcapng: Ethernet, Linux cooked SLL/SLL2, raw IP, or ERF\n"
	"records of Ethernet, IP or InfiniBand as NIC sniffers write them; VLAN tags; IPv4 and\n"
	"IPv6).  Every UDP 4791 packet (RoCEv2), Ethernet type 0x8915 packet (RoCE v1: GRH and\n"
	"BTH) and InfiniBand packet (LRH, GRH, BTH) is dissected to its transport headers and\n"
	"accounted per QP: one flow per direction, keyed by source, destination (IP addresses,\n"
	"GIDs, or LIDs) and destination QP, paired with its reverse.  Per flow: packets, bytes,\n"
	"opcodes, the PSN range, gaps and the PSNs lost in them before the capture point, those\n"
	"resent after the loss, packets seen twice (the same PSN again), retransmission bursts,\n"
	"out-of-order packets, NAKs by code, RNR NAKs, request to\n"
	"acknowledge latency, CNPs, the CE-marked fraction, UDP source ports.  Then findings\n"
	"for a human, and PFC/PAUSE frames per priority (time paused from the quanta with\n"
	"--link-speed).  PSNs wrap at 2^24.  Memory is per flow, not per packet (at most\n"
	"--max-flows flows; packets beyond are counted, not tracked), so the size of the file\n"
	"does not matter.  Packets cut inside a header are counted by the layer cut.  A capture\n"
	"without a RoCE packet (or PFC frame) is said to have nothing to analyze: exit status 2.";

struct aopts {
	const char *filter, *host, *qpstr, *plot;
	int qp, json, all, port, max_flows, verbose;
	double link_gbps;
};

static double rel(const struct flow_table *t, double ts)
{
	return ts - t->first;
}

/* "psn-seq-error", ...; a reserved code by its number, "nak-7" */
static const char *nak_label(unsigned code)
{
	static char buf[FLOW_NAK_CODES][12];
	const char *n = roce_nak_name(code);

	if (n)
		return n;
	snprintf(buf[code % FLOW_NAK_CODES], sizeof(buf[0]), "nak-%u", code % FLOW_NAK_CODES);
	return buf[code % FLOW_NAK_CODES];
}

/* The first kept NAK event of this code; NULL when none of the kept ones has it. */
static const struct flow_event *nak_event(const struct flow *f, unsigned code)
{
	int i;

	for (i = 0; i < f->nnak_ev; i++)
		if (f->nak_ev[i].code == code)
			return &f->nak_ev[i];
	return NULL;
}

static int flow_selected(const struct flow_table *t, const struct flow *f, const struct aopts *o)
{
	const struct flow *r = f->reverse >= 0 ? t->v[f->reverse] : NULL;

	return o->qp < 0 || f->key.dqpn == (uint32_t)o->qp || (r && r->key.dqpn == (uint32_t)o->qp);
}

/*
 * --qp names a QP that no flow of the capture has: say so, with the QPs it
 * does have, rather than give that QP a clean bill of health.  1 when absent.
 */
static int qp_absent(const struct flow_table *t, const struct aopts *o, const char *file)
{
	char have[200] = "";
	size_t used = 0;
	int i, n = 0;

	for (i = 0; i < t->n; i++)
		if (flow_selected(t, t->v[i], o))
			return 0;
	for (i = 0; i < t->n && n <= 8; i++) {	/* eight are named: then "..." */
		int j, seen = 0;

		for (j = 0; j < i && !seen; j++)	/* a QP once, though it has flows both ways */
			seen = t->v[j]->key.dqpn == t->v[i]->key.dqpn;
		if (seen)
			continue;
		if (n++ < 8 && used < sizeof(have))
			used += (size_t)snprintf(have + used, sizeof(have) - used, "%s0x%06x",
						 used ? ", " : "", t->v[i]->key.dqpn);
	}
	fs_err_usage("--qp 0x%06x: no RoCEv2 packet in '%s' is to or from that QP (%s%s%s)%s",
		     (unsigned)o->qp, file, n ? "its QPs: " : "it has no RoCEv2 flow", have,
		     n > 8 ? ", ..." : "",
		     t->overflow_pkts ? "; flows beyond --max-flows were not tracked" : "");
	return 1;
}

static void flow_name(const struct flow *f, char *buf, size_t len)
{
	char s[64], d[64];

	snprintf(buf, len, "QP 0x%06x %s -> %s", f->key.dqpn, flow_addr(f->key.src, f->key.fam, s, sizeof(s)),
		 flow_addr(f->key.dst, f->key.fam, d, sizeof(d)));
}

/* ---- findings ---- */

struct finding {
	char text[512];
	double t;
	int severity;		/* 2 error, 1 warning, 0 note */
	int flow;		/* -1: the capture */
};

struct findings {
	struct finding *v;
	int n, cap;
};

static void find_add(struct findings *fs, int sev, int flow, double t, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void find_add(struct findings *fs, int sev, int flow, double t, const char *fmt, ...)
{
	va_list ap;
	struct finding *x;

	if (fs->n == fs->cap) {
		struct finding *nv = realloc(fs->v, (size_t)(fs->cap ? 2 * fs->cap : 16) * sizeof(*nv));

		if (!nv)
			return;
		fs->v = nv;
		fs->cap = fs->cap ? 2 * fs->cap : 16;
	}
	x = &fs->v[fs->n++];
	va_start(ap, fmt);
	vsnprintf(x->text, sizeof(x->text), fmt, ap);
	va_end(ap);
	x->t = t;
	x->severity = sev;
	x->flow = flow;
}

static int find_cmp(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;

	if (x->severity != y->severity)
		return y->severity - x->severity;
	return x->t < y->t ? -1 : x->t > y->t;
}

static void flow_findings(const struct flow_table *t, const struct flow *f, struct findings *fs)
{
	const struct flow *r = f->reverse >= 0 ? t->v[f->reverse] : NULL;
	char name[200];
	unsigned c;

	flow_name(f, name, sizeof(name));
	if (f->seen_again || f->resent) {
		char why[400] = "";
		size_t used = 0;

#define WHY(...) do { if (used < sizeof(why)) used += (size_t)snprintf(why + used, sizeof(why) - used, \
								      __VA_ARGS__); } while (0)
		if (r)
			for (c = 0; c < FLOW_NAK_CODES; c++)
				if (r->naks[c]) {
					const struct flow_event *e = nak_event(r, c);

					WHY("%s%llu NAK %s", used ? " and " : " after ", (unsigned long long)r->naks[c],
					    nak_label(c));
					if (e)
						WHY(" (the first at %.3f s, PSN 0x%06x)", e->t, e->psn);
				}
		if (r && r->read_resps && r->gaps)	/* a READ whose responses were lost is read again */
			WHY("%s%llu gap%s in the READ responses on the way back", used ? " and " : " after ",
			    (unsigned long long)r->gaps, r->gaps == 1 ? "" : "s");
		if (f->lost)
			WHY("%s%llu PSN gap%s (%llu packet%s %s)", used ? " and " : " after ", (unsigned long long)f->gaps,
			    f->gaps == 1 ? "" : "s", (unsigned long long)f->lost, f->lost == 1 ? "" : "s",
			    f->read_resps && !f->requests ?
			    "of READ responses lost before the capture point: the requester read them again" :
			    used ? "lost before the capture point" :
			    "lost before the capture point; no NAK seen: timeouts?");
#undef WHY
		find_add(fs, 2, f->index, f->burst_ev[0].t,
			 "%s: %llu retransmission burst%s (%llu packet%s sent again: %llu resent after a loss upstream, "
			 "%llu seen twice at the capture point)%s; the first at %.3f s from PSN 0x%06x",
			 name, (unsigned long long)f->bursts, f->bursts == 1 ? "" : "s",
			 (unsigned long long)(f->seen_again + f->resent), f->seen_again + f->resent == 1 ? "" : "s",
			 (unsigned long long)f->resent, (unsigned long long)f->seen_again, why, f->burst_ev[0].t,
			 f->burst_ev[0].psn);
	}
	if (f->missing)
		find_add(fs, 2, f->index, f->gap_ev[0].t,
			 "%s: %llu packet%s missing in %llu PSN gap%s (lost before the capture point, or dropped by the capture, and not seen again); the first at %.3f s, PSN 0x%06x",
			 name, (unsigned long long)f->missing, f->missing == 1 ? "" : "s", (unsigned long long)f->gaps,
			 f->gaps == 1 ? "" : "s", f->gap_ev[0].t, f->gap_ev[0].psn);
	if (f->ooo)
		find_add(fs, 1, f->index, 0, "%s: %llu packet%s out of order (late, not lost)", name,
			 (unsigned long long)f->ooo, f->ooo == 1 ? "" : "s");
	for (c = 0; c < FLOW_NAK_CODES; c++) {
		const struct flow_event *e = nak_event(f, c);
		char when[64] = "";

		if (!f->naks[c] || c == ROCE_NAK_PSN_SEQ)
			continue;
		if (e)
			snprintf(when, sizeof(when), ", the first at %.3f s (PSN 0x%06x)", e->t, e->psn);
		find_add(fs, 2, f->index, e ? e->t : 0,
			 "%s: %llu NAK %s%s: the requester's QP goes to the error state",
			 name, (unsigned long long)f->naks[c], nak_label(c), when);
	}
	if (f->naks[ROCE_NAK_PSN_SEQ] && !(r && (r->seen_again || r->resent))) {
		const struct flow_event *e = nak_event(f, ROCE_NAK_PSN_SEQ);

		find_add(fs, 1, f->index, e ? e->t : 0,
			 "%s: %llu NAK psn-seq-error (the responder saw a gap), the first at %.3f s",
			 name, (unsigned long long)f->naks[ROCE_NAK_PSN_SEQ], e ? e->t : 0.0);
	}
	if (f->rnr)
		find_add(fs, 1, f->index, f->rnr_ev[0].t,
			 "%s: %llu RNR NAK%s (receiver not ready: no receive posted; timer %.2f ms), the first at %.3f s",
			 name, (unsigned long long)f->rnr, f->rnr == 1 ? "" : "s",
			 roce_rnr_timer_ms(f->rnr_ev[0].code), f->rnr_ev[0].t);
	if (f->ce)
		find_add(fs, 1, f->index, 0,
			 "%s: %.1f%% of packets CE-marked (%llu): a switch queue on the path was congested",
			 name, 100.0 * (double)f->ce / (double)f->pkts, (unsigned long long)f->ce);
	if (f->cnps)
		find_add(fs, 1, f->index, f->cnp_ev[0].t,
			 "%s: %llu CNP%s (congestion notifications to this QP: DCQCN cuts its rate), the first at %.3f s",
			 name, (unsigned long long)f->cnps, f->cnps == 1 ? "" : "s", f->cnp_ev[0].t);
	if (f->sport_changes) {
		char ports[64] = "";
		size_t used = 0;
		int i;

		for (i = 0; i < f->nsports && used < sizeof(ports); i++)
			used += (size_t)snprintf(ports + used, sizeof(ports) - used, "%s%u", i ? ", " : "", f->sports[i]);
		find_add(fs, 0, f->index, 0, "%s: its UDP source port changed %llu time%s (ports %s%s)", name,
			 (unsigned long long)f->sport_changes, f->sport_changes == 1 ? "" : "s", ports,
			 f->sports_more ? " and more" : "");
	}
	if (f->npending && r)
		find_add(fs, 0, f->index, 0, "%s: %d request%s never acknowledged before the capture ended", name,
			 f->npending, f->npending == 1 ? " was" : "s were");
}

/* what a capture without RoCE packets lacks, for a finding and the error line */
static void no_roce_what(const struct aopts *o, char *buf, size_t len)
{
	char port[32] = "";

	if (o->port && o->port != ROCE_UDP_PORT)
		snprintf(port, sizeof(port), " or %d", o->port);
	snprintf(buf, len, "no RoCE packet (RoCEv2 on UDP port 4791%s, RoCE v1 on Ethernet type 0x8915, InfiniBand)",
		 port);
}

static void capture_findings(const struct flow_table *t, const struct aopts *o, struct findings *fs)
{
	int p, l;

	if (!t->roce) {
		char what[200];

		no_roce_what(o, what, sizeof(what));
		const char *where = o->filter || o->host ? " passed the selection" : " in the capture";

		if (t->pfc.have)
			find_add(fs, 0, -1, 0, "%s%s: only the PFC and PAUSE frames were analyzed", what, where);
		else
			find_add(fs, 1, -1, 0, "%s%s: nothing was analyzed (%llu other packets), so nothing is known "
				 "of loss or retransmission", what, where, (unsigned long long)t->pkts);
	}

	if (t->truncated) {
		char where[256] = "";
		size_t used = 0;

		for (l = 0; l < PKT_L_MAX; l++)
			if (t->cut[l] && used < sizeof(where))
				used += (size_t)snprintf(where + used, sizeof(where) - used, "%s%s %llu",
							 used ? ", " : "", pkt_layer_name((enum pkt_layer)l),
							 (unsigned long long)t->cut[l]);
		find_add(fs, 1, -1, 0, "%llu packet%s cut inside a header (%s): capture with a longer snap length",
			 (unsigned long long)t->truncated, t->truncated == 1 ? "" : "s", where);
	}
	if (t->overflow_pkts)
		find_add(fs, 1, -1, 0, "more than %d QP flows: %llu packets of the others are counted but not tracked (raise --max-flows)",
			 t->max, (unsigned long long)t->overflow_pkts);
	for (p = 0; p < 8; p++) {
		double s = o->link_gbps > 0 ? (double)t->pfc.quanta[p] * 512 / (o->link_gbps * 1e9) : NAN;

		if (!t->pfc.frames[p])
			continue;
		if (isnan(s))
			find_add(fs, 1, -1, t->pfc.first,
				 "PFC: priority %d paused %llu times (%llu XON), %llu quanta in all (give --link-speed for the time); from %.3f s to %.3f s",
				 p, (unsigned long long)t->pfc.xoff[p], (unsigned long long)t->pfc.xon[p],
				 (unsigned long long)t->pfc.quanta[p], t->pfc.first, t->pfc.last);
		else
			find_add(fs, 1, -1, t->pfc.first,
				 "PFC: priority %d paused %llu times (%llu XON), %llu quanta = %.6f s at %g Gb/s at most; from %.3f s to %.3f s",
				 p, (unsigned long long)t->pfc.xoff[p], (unsigned long long)t->pfc.xon[p],
				 (unsigned long long)t->pfc.quanta[p], s, o->link_gbps, t->pfc.first, t->pfc.last);
	}
	if (t->pfc.pause_frames)
		find_add(fs, 1, -1, t->pfc.first, "802.3x PAUSE: %llu frames, %llu quanta (the whole link, every priority)",
			 (unsigned long long)t->pfc.pause_frames, (unsigned long long)t->pfc.pause_quanta);
}

/* ---- output ---- */

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* what a flow's src and dst are */
static const char *addr_kind(int fam)
{
	switch (fam) {
	case PKT_ADDR_IPV4: return "ipv4";
	case PKT_ADDR_IPV6: return "ipv6";
	case PKT_ADDR_GID: return "gid";
	case PKT_ADDR_LID: return "lid";
	}
	return "none";
}

static json_t *flow_json(const struct flow_table *t, const struct flow *f)
{
	char s[64], d[64], name[48];
	json_t *ops = json_object(), *naks = json_object(), *sp = json_array(), *tl = json_array();
	unsigned i;

	for (i = 0; i < 256; i++)
		if (f->ops[i]) {
			const char *n = roce_opcode_name(i);

			if (!n) {
				snprintf(name, sizeof(name), "reserved 0x%02x", i);
				n = name;
			}
			json_object_set_new(ops, n, json_integer((json_int_t)f->ops[i]));
		}
	for (i = 0; i < FLOW_NAK_CODES; i++)
		if (f->naks[i])
			json_object_set_new(naks, nak_label(i), json_integer((json_int_t)f->naks[i]));
	for (i = 0; i < (unsigned)f->nsports; i++)
		json_array_append_new(sp, json_integer(f->sports[i]));
	for (i = 0; i < FLOW_BUCKETS && f->t0 + i * f->bucket_w <= f->last; i++)
		json_array_append_new(tl, json_integer((json_int_t)f->timeline[i]));
	return json_pack("{si,ss,ss,ss,si,ss,sI,sI,sI,sf,sf,sI,sI,sI,sI,so,so,s{sI,sI,sI,sI,sI,sI,sI,sI,sI},so,sI,sI,"
			 "s{so,so,so,so,sI},sI,sI,sI,so,sI,s{sf,so},so,ss}",
		"index", f->index, "qpn", (snprintf(name, sizeof(name), "0x%06x", f->key.dqpn), name),
		"src", flow_addr(f->key.src, f->key.fam, s, sizeof(s)),
		"dst", flow_addr(f->key.dst, f->key.fam, d, sizeof(d)), "reverse", f->reverse,
		"transport", roce_transport_name((enum roce_transport)f->transport),
		"packets", (json_int_t)f->pkts, "bytes", (json_int_t)f->bytes, "payload_bytes", (json_int_t)f->payload,
		"first_s", rel(t, f->first), "last_s", rel(t, f->last),
		"requests", (json_int_t)f->requests, "responses", (json_int_t)f->responses,
		"acks", (json_int_t)f->acks, "read_responses", (json_int_t)f->read_resps,
		"psn_first", f->have_psn ? json_integer(f->first_psn) : json_null(),
		"psn_last", f->have_psn ? json_integer(f->max_psn) : json_null(),
		"psn", "gaps", (json_int_t)f->gaps, "lost", (json_int_t)f->lost, "missing", (json_int_t)f->missing,
		"resent_after_loss", (json_int_t)f->resent, "seen_again", (json_int_t)f->seen_again,
		"retransmission_bursts", (json_int_t)f->bursts, "out_of_order", (json_int_t)f->ooo,
		"unanswered", (json_int_t)f->npending, "untimed", (json_int_t)f->pend_dropped,
		"naks", naks, "rnr_naks", (json_int_t)f->rnr, "ack_plain", (json_int_t)f->acks_plain,
		"ack_latency_s", "p50", jnum(flow_lat_percentile(f, 50)), "p99", jnum(flow_lat_percentile(f, 99)),
		"min", jnum(f->nlat ? f->lat_min : NAN), "max", jnum(f->nlat ? f->lat_max : NAN), "n", (json_int_t)f->nlat,
		"cnps", (json_int_t)f->cnps, "ce", (json_int_t)f->ce, "ect", (json_int_t)f->ect,
		"udp_sports", sp, "udp_sport_changes", (json_int_t)f->sport_changes,
		"timeline", "bucket_s", f->bucket_w, "bytes", tl, "opcodes", ops,
		"addresses", addr_kind(f->key.fam));
}

static void print_text(FILE *out, const struct flow_table *t, const struct aopts *o, const char *file,
		       const struct findings *fs, int shown)
{
	double dur = t->last - t->first;
	int i, p, any_pfc = 0;

	fprintf(out, "# %s: %llu packets, %.1f MB, %.3f s; RoCE %llu packets (%.1f MB), other %llu, cut %llu\n",
		file, (unsigned long long)t->pkts, (double)t->bytes / 1e6, dur, (unsigned long long)t->roce,
		(double)t->roce_bytes / 1e6, (unsigned long long)t->other, (unsigned long long)t->truncated);
	fprintf(out, "# %d QP flows%s\n", t->n, t->overflow_pkts ? " (more were not tracked)" : "");
	if (shown && t->n) {
		fprintf(out, "# lost: PSNs lost before the capture point; resent: first appearances resent after a loss; "
			"again: packets whose PSN the flow carried before; ooo: late\n");
		fprintf(out, "%-10s %-16s %-16s %-4s %9s %11s %8s %6s %6s %6s %6s %5s %6s %5s %5s %9s %9s\n", "qpn", "src",
			"dst", "tp", "packets", "bytes", "Gb/s", "lost", "resent", "again", "ooo", "naks", "rnr", "cnps",
			"ce%", "ack p50", "ack p99");
		for (i = 0; i < t->n; i++) {
			const struct flow *f = t->v[i];
			char s[64], d[64], q[16];
			uint64_t naks = 0;
			double span = f->last - f->first;
			unsigned c;

			if (!flow_selected(t, f, o))
				continue;
			for (c = 0; c < FLOW_NAK_CODES; c++)
				naks += f->naks[c];
			snprintf(q, sizeof(q), "0x%06x", f->key.dqpn);
			fprintf(out, "%-10s %-16s %-16s %-4s %9llu %11llu %8.3f %6llu %6llu %6llu %6llu %5llu %6llu %5llu %5.1f",
				q, flow_addr(f->key.src, f->key.fam, s, sizeof(s)),
				flow_addr(f->key.dst, f->key.fam, d, sizeof(d)),
				roce_transport_name((enum roce_transport)f->transport), (unsigned long long)f->pkts,
				(unsigned long long)f->bytes, span > 0 ? (double)f->bytes * 8 / span / 1e9 : 0.0,
				(unsigned long long)f->lost, (unsigned long long)f->resent,
				(unsigned long long)f->seen_again, (unsigned long long)f->ooo,
				(unsigned long long)naks, (unsigned long long)f->rnr, (unsigned long long)f->cnps,
				f->pkts ? 100.0 * (double)f->ce / (double)f->pkts : 0.0);
			if (f->nlat)
				fprintf(out, " %7.1fus %7.1fus\n", flow_lat_percentile(f, 50) * 1e6,
					flow_lat_percentile(f, 99) * 1e6);
			else
				fprintf(out, " %9s %9s\n", "-", "-");
		}
	}
	for (p = 0; p < 8; p++)
		any_pfc |= t->pfc.frames[p] > 0;
	if (any_pfc || t->pfc.pause_frames) {
		fprintf(out, "# PFC pauses per priority: frames, XOFF, XON, quanta%s\n",
			o->link_gbps > 0 ? ", paused at most (s)" : "");
		for (p = 0; p < 8; p++)
			if (t->pfc.frames[p]) {
				fprintf(out, "#   prio %d  %llu  %llu  %llu  %llu", p, (unsigned long long)t->pfc.frames[p],
					(unsigned long long)t->pfc.xoff[p], (unsigned long long)t->pfc.xon[p],
					(unsigned long long)t->pfc.quanta[p]);
				if (o->link_gbps > 0)
					fprintf(out, "  %.6f", (double)t->pfc.quanta[p] * 512 / (o->link_gbps * 1e9));
				fputc('\n', out);
			}
	}
	fprintf(out, "# findings:%s\n", fs->n ? "" : " none: no loss, retransmission, NAK, RNR, congestion mark or pause");
	for (i = 0; i < fs->n; i++)
		fprintf(out, "#   %s %s\n", fs->v[i].severity == 2 ? "[error]" : fs->v[i].severity ? "[warn] " : "[note] ",
			fs->v[i].text);
}

static json_t *result_json(const struct flow_table *t, const struct aopts *o, const char *file,
			   const struct findings *fs, const char *read_error)
{
	json_t *flows = json_array(), *fa = json_array(), *cut = json_object(), *pfc = json_array();
	int i, p;

	for (i = 0; i < t->n; i++)
		if (flow_selected(t, t->v[i], o))
			json_array_append_new(flows, flow_json(t, t->v[i]));
	for (i = 0; i < fs->n; i++)
		json_array_append_new(fa, json_pack("{ss,sf,ss,si}", "severity",
			fs->v[i].severity == 2 ? "error" : fs->v[i].severity ? "warning" : "note",
			"t_s", fs->v[i].t, "text", fs->v[i].text, "flow", fs->v[i].flow));
	for (i = 0; i < PKT_L_MAX; i++)
		if (t->cut[i])
			json_object_set_new(cut, pkt_layer_name((enum pkt_layer)i), json_integer((json_int_t)t->cut[i]));
	for (p = 0; p < 8; p++)
		if (t->pfc.frames[p])
			json_array_append_new(pfc, json_pack("{si,sI,sI,sI,sI,so}", "prio", p,
				"frames", (json_int_t)t->pfc.frames[p], "xoff", (json_int_t)t->pfc.xoff[p],
				"xon", (json_int_t)t->pfc.xon[p], "quanta", (json_int_t)t->pfc.quanta[p],
				"paused_max_s", jnum(o->link_gbps > 0 ?
						     (double)t->pfc.quanta[p] * 512 / (o->link_gbps * 1e9) : NAN)));
	return json_pack("{ss,so,ss,s{sI,sI,sf,sI,sI,sI,sI,so,sI,si,sI,so},so,s{so,sI,sI},so}",
		"schema", "fabscope.pcap/1", "file", json_stringn_nocheck(file, strlen(file)),
		"status", t->roce ? "analyzed" : t->pfc.have ? "pfc-only" : "no-roce",
		"summary", "packets", (json_int_t)t->pkts, "bytes", (json_int_t)t->bytes,
		"duration_s", t->pkts ? t->last - t->first : 0.0, "roce_packets", (json_int_t)t->roce,
		"roce_bytes", (json_int_t)t->roce_bytes, "other_packets", (json_int_t)t->other,
		"truncated", (json_int_t)t->truncated, "truncated_by_layer", cut,
		"untracked_packets", (json_int_t)t->overflow_pkts, "flows", t->n,
		"mac_control_other", (json_int_t)t->macctl_other,
		"read_error", read_error ? json_string(read_error) : json_null(),
		"flows", flows,
		"pfc", "priorities", pfc, "pause_frames", (json_int_t)t->pfc.pause_frames,
		"pause_quanta", (json_int_t)t->pfc.pause_quanta,
		"findings", fa);
}

/*
 * The capture over time into an SVG through plots/pcap.gp: the 8 busiest
 * flows' Gb/s and the PFC frames per second of each priority.  0, or -1
 * after one line saying why.
 */
/* the busiest flows of t (at most 8), their indexes into top: how many */
static int busiest(const struct flow_table *t, int *top)
{
	int ntop = 0, i, j;

	for (i = 0; i < t->n; i++) {	/* the busiest, by insertion */
		for (j = ntop; j > 0 && t->v[top[j - 1]]->bytes < t->v[i]->bytes; j--)
			if (j < 8)
				top[j] = top[j - 1];
		if (j < 8) {
			top[j] = i;
			if (ntop < 8)
				ntop++;
		}
	}
	return ntop;
}

/* the flows' data file (its names into names): 0, or -FS_EXIT_ENV said */
static int plot_flows(const struct flow_table *t, const int *top, int ntop, struct outfile *of, char *names,
		      size_t nlen)
{
	FILE *f = outfile_stream(of);
	int i, j;

	if (!f)
		return fs_err_env("no plot: cannot write '%s': %s", of->path, strerror(errno));
	for (j = 0; j < ntop; j++) {
		const struct flow *fl = t->v[top[j]];
		char s[64], d[64];
		size_t used = strlen(names);

		for (i = 0; i < FLOW_BUCKETS && i * fl->bucket_w <= fl->last - fl->t0; i++)
			fprintf(f, "%.9g %.9g\n", i * fl->bucket_w, (double)fl->timeline[i] * 8 / fl->bucket_w / 1e9);
		fprintf(f, "\n\n");
		snprintf(names + used, nlen - used, "%s0x%06x:%s>%s", j ? " " : "", fl->key.dqpn,
			 flow_addr(fl->key.src, fl->key.fam, s, sizeof(s)), flow_addr(fl->key.dst, fl->key.fam, d, sizeof(d)));
	}
	return fflush(f) || ferror(f) ? fs_err_env("no plot: cannot write '%s': %s", of->path, strerror(errno)) : 0;
}

/* the PFC frames' data file (its names into pnames, the priorities into *npfc) */
static int plot_pfc(const struct flow_table *t, struct outfile *of, char *pnames, size_t plen, int *npfc)
{
	FILE *f = outfile_stream(of);
	int i, p;

	*npfc = 0;
	if (!f)
		return fs_err_env("no plot: cannot write '%s': %s", of->path, strerror(errno));
	for (p = 0; p < 8; p++) {
		size_t used = strlen(pnames);

		if (!t->pfc.frames[p])
			continue;
		for (i = 0; i < FLOW_BUCKETS && i * t->pfc.bucket_w <= t->last - t->first; i++)
			fprintf(f, "%.9g %.9g\n", i * t->pfc.bucket_w, t->pfc.timeline[p][i] / t->pfc.bucket_w);
		fprintf(f, "\n\n");
		snprintf(pnames + used, plen - used, "%sprio%d", (*npfc)++ ? " " : "", p);
	}
	return fflush(f) || ferror(f) ? fs_err_env("no plot: cannot write '%s': %s", of->path, strerror(errno)) : 0;
}

/*
 * The capture over time into an SVG through plots/pcap.gp: the 8 busiest
 * flows' Gb/s and the PFC frames per second of each priority.  Every file
 * (the SVG, the data files gnuplot reads, under temporary names and removed
 * after) is made by core/outfile.h in the SVG's directory, checked first.
 * 0, or -FS_EXIT_* after one line saying why.
 */
static int write_plot(const struct flow_table *t, const char *svg, const char *file)
{
	char tdir[4096], why[512], vars[8192] = "", names[1024] = "", pnames[256] = "", title[700], stem[300];
	const char *base = strrchr(svg, '/') ? strrchr(svg, '/') + 1 : svg;
	struct outdir dir = OUTDIR_INIT;
	struct outfile fo = { .fd = -1 }, po = { .fd = -1 };
	int top[8], ntop, npfc = 0, rc;

	if (strlen(svg) > 1000 || strlen(file) > 600)
		return fs_err_usage("no plot: a path of over 1000 bytes");
	if (plot_find_templates(tdir, sizeof(tdir)))
		return fs_err_env("no plot: the gnuplot templates are not in %s (set FABSCOPE_PLOTS to the plots folder)",
				  plot_templates_default());
	if (!*base || strlen(base) > 200)
		return fs_err_usage("no plot: '%s' names no file (or a name of over 200 bytes)", svg);
	if ((rc = outdir_of_file(&dir, svg, "the directory of --plot")))
		return rc;
	ntop = busiest(t, top);
	snprintf(stem, sizeof(stem), "%s.flows.dat", base);
	if (!(rc = outfile_temp_in(&fo, &dir, stem, 0644)) &&
	    !(rc = plot_flows(t, top, ntop, &fo, names, sizeof(names)))) {
		snprintf(stem, sizeof(stem), "%s.pfc.dat", base);
		if (!(rc = outfile_temp_in(&po, &dir, stem, 0644)))
			rc = plot_pfc(t, &po, pnames, sizeof(pnames), &npfc);
	}
	if (!rc) {	/* (gnuplot runs in dir: the data files by their temporary names) */
		plot_var_str(vars, sizeof(vars), "flows", fo.tmp);
		plot_var_num(vars, sizeof(vars), "nflows", ntop);
		plot_var_str(vars, sizeof(vars), "names", names);
		plot_var_str(vars, sizeof(vars), "pfc", po.tmp);
		plot_var_num(vars, sizeof(vars), "npfc", npfc);
		plot_var_str(vars, sizeof(vars), "pnames", pnames);
		plot_var_num(vars, sizeof(vars), "xmax", t->pkts ? t->last - t->first : 0.0);
		snprintf(title, sizeof(title), "%s: the busiest QP flows and PFC pauses", file);
		plot_var_str(vars, sizeof(vars), "title", title);
		if (plot_gnuplot(tdir, "pcap.gp", vars, &dir, base, why, sizeof(why)))
			rc = fs_err_env("no plot: %s", why);
	}
	outfile_abort(&fo);
	outfile_abort(&po);
	outdir_close(&dir);
	return rc;
}

/* an IPv6 address matches a GID too (RoCE v1: the GIDs are IPv6-shaped) */
static int host_match(const struct pkt_brief *k, const uint8_t *host, int v6)
{
	if (v6 ? k->addr != PKT_ADDR_IPV6 && k->addr != PKT_ADDR_GID : k->addr != PKT_ADDR_IPV4)
		return 0;
	return !memcmp(k->src, host, v6 ? 16 : 4) || !memcmp(k->dst, host, v6 ? 16 : 4);
}

/* One analysis: the capture, its selection, the flows read from it. */
struct analyze_run {
	const struct aopts *o;
	const char *file;
	struct reader rd;
	struct bpf_program prog;
	int have_prog;
	uint8_t host[16];	/* --host */
	int host_v6;
	unsigned long long host_hits, host_seen;
	const char *read_error;	/* a file cut short: why (into rd) */
	struct flow_table t;
};

/* --qp, --link-speed and --host: 0, or -FS_EXIT_USAGE said. */
static int analyze_check_opts(struct aopts *o, struct analyze_run *r)
{
	if (o->qpstr) {
		char *end;
		unsigned long v;

		/* decimal, or hex with 0x: never octal, so 000013 is 13, not 11 */
		int hex = o->qpstr[0] == '0' && (o->qpstr[1] == 'x' || o->qpstr[1] == 'X');
		const char *digits = o->qpstr + (hex ? 2 : 0);

		errno = 0;
		v = strtoul(digits, &end, hex ? 16 : 10);
		if (errno || !isxdigit((unsigned char)digits[0]) || *end || v > 0xffffff)
			return fs_err_usage("--qp '%s' is not a QP number (24 bits: 0x11 or 17)", o->qpstr);
		o->qp = (int)v;
	}
	if (!isnan(o->link_gbps) && !(o->link_gbps > 0 && o->link_gbps <= 1e6))
		return fs_err_usage("--link-speed %g: give the link's speed in Gb/s, e.g. 100 or 400", o->link_gbps);
	if (o->host) {
		r->host_v6 = strchr(o->host, ':') != NULL;
		if (inet_pton(r->host_v6 ? AF_INET6 : AF_INET, o->host, r->host) != 1)
			return fs_err_usage("--host '%s' is not an IP address", o->host);
	}
	return 0;
}

/* The capture open, its link type known, -f compiled: 0, or -FS_EXIT_* said (nothing open). */
static int analyze_open(struct analyze_run *r)
{
	const char *file = r->file;
	int linktype;

	if (reader_open(&r->rd, file)) {
		if (r->rd.env)	/* there, but not ours to read */
			return fs_err_env("cannot open '%s': %s", file, r->rd.err);
		return fs_err_usage("cannot read '%s' as a capture: %s", file, r->rd.err);
	}
	linktype = r->rd.linktype;
	if (!pkt_linktype_known(linktype)) {
		fs_err_usage("'%s' has link type %s: fabscope reads Ethernet, Linux cooked (SLL, SLL2), raw IP and ERF",
			     file, pcap_datalink_val_to_name(linktype) ? pcap_datalink_val_to_name(linktype) : "unknown");
		reader_close(&r->rd);
		return -FS_EXIT_USAGE;
	}
	if (r->o->filter) {
		pcap_t *ph = reader_pcap(&r->rd);

		if (!ph || pcap_compile(ph, &r->prog, r->o->filter, 1, PCAP_NETMASK_UNKNOWN)) {
			fs_err_usage("filter '%s': %s", r->o->filter, ph ? pcap_geterr(ph) : "no libpcap handle");
			reader_close(&r->rd);
			return -FS_EXIT_USAGE;
		}
		r->have_prog = 1;
	}
	return 0;
}

/* Every packet selected into the flow table, to the end or where the file is cut short. */
static void analyze_read_all(struct analyze_run *r)
{
	struct pkt_opts po = { 0 };
	struct pcap_pkthdr hdr;
	const uint8_t *bytes;
	int linktype = r->rd.linktype, nano = r->rd.nano, rc;

	po.roce_port = (uint16_t)r->o->port;
	for (;;) {
		struct pkt k;
		struct pkt_brief b;
		double ts;

		rc = reader_next(&r->rd, &hdr, &bytes);
		if (!rc)
			break;
		if (rc < 0) {	/* a file cut short: what was read stands */
			r->read_error = r->rd.err;
			fs_warn("'%s' ends inside a packet after %llu packets (%s): analyzing those", r->file,
				(unsigned long long)r->t.pkts, r->read_error);
			break;
		}
		if (r->have_prog && !pcap_offline_filter(&r->prog, &hdr, bytes))
			continue;
		if (!pkt_brief_fast(bytes, hdr.caplen, hdr.len, linktype, &po, &b)) {
			pkt_dissect_opts(bytes, hdr.caplen, hdr.len, linktype, &po, &k);
			pkt_brief_of(&k, &b);	/* (b.mac points into k) */
		}
		if (r->o->host && !b.mac) {	/* (PFC frames stay) */
			if (!host_match(&b, r->host, r->host_v6)) {
				r->host_seen++;
				continue;
			}
			r->host_hits++;
		}
		ts = (double)hdr.ts.tv_sec + (double)hdr.ts.tv_usec / (nano ? 1e9 : 1e6);
		flow_add_brief(&r->t, &b, ts);
	}
	flow_finish(&r->t);
}

/* The findings, sorted, and the result as JSON or text; the plot: 0, or -FS_EXIT_ENV said. */
static int analyze_report(struct analyze_run *r)
{
	const struct aopts *o = r->o;
	struct flow_table *t = &r->t;
	struct findings fs = { 0 };
	int i, rc, errors = 0;

	for (i = 0; i < t->n; i++)
		if (flow_selected(t, t->v[i], o))
			flow_findings(t, t->v[i], &fs);
	capture_findings(t, o, &fs);
	if (fs.n)
		qsort(fs.v, (size_t)fs.n, sizeof(*fs.v), find_cmp);
	for (i = 0; i < fs.n; i++)
		errors += fs.v[i].severity == 2;
	if (o->json) {
		json_t *j = result_json(t, o, r->file, &fs, r->read_error);
		char *s = json_dumps(j, JSON_INDENT(1) | JSON_REAL_PRECISION(10));

		puts(s ? s : "{}");
		free(s);
		json_decref(j);
	} else {
		print_text(stdout, t, o, r->file, &fs, o->all || o->qp >= 0 || t->n <= 64);
	}
	free(fs.v);
	reader_close(&r->rd);	/* (read_error points into it) */
	rc = o->plot && write_plot(t, o->plot, r->file) ? -FS_EXIT_ENV : 0;
	if (!t->roce && !t->pfc.have) {	/* no verdict on what was not there: bad input, as --qp */
		char what[200];

		no_roce_what(o, what, sizeof(what));
		rc = fs_err_usage("'%s' has %s among its %llu packets%s: nothing to analyze%s", r->file, what,
				  (unsigned long long)t->pkts, o->filter || o->host ? " selected" : "",
				  o->port ? "" : " (RoCEv2 on another UDP port: give --port)");
	}
	/* an [error] finding (loss, retransmission, a NAK that breaks the
	 * QP) is a failed check, as a failed data check is elsewhere;
	 * warnings and notes are not */
	if (!rc && errors)
		rc = fs_err(FS_EXIT_CHECK, "'%s': %d error finding%s (loss, retransmission or a NAK that breaks a QP): "
			    "a failed check", r->file, errors, errors == 1 ? "" : "s");
	return rc;
}

int cmd_pcap(int argc, const char **argv)
{
	struct aopts o = { .qp = -1, .max_flows = 65536, .link_gbps = NAN };
	struct opt tab[] = {
		OPT_GROUP("Selection"),
		OPT_STRING(0, "qp", &o.qpstr, "QPN", "only this QP's flows, either direction (0x11 or 17)"),
		OPT_STRING(0, "host", &o.host, "IP", "only packets from or to this address (PFC frames stay)"),
		OPT_STRING('f', "filter", &o.filter, "BPF", "only packets this filter passes (pcap-filter(7))"),
		OPT_INT(0, "port", &o.port, "PORT", "another UDP port carrying RoCEv2 besides 4791", 1, 65535),
		OPT_GROUP("Analysis"),
		OPT_NUMBER(0, "link-speed", &o.link_gbps, "GBPS", "the link's speed in Gb/s: PFC quanta as time"),
		OPT_INT(0, "max-flows", &o.max_flows, "N", "QP flows tracked at most (default 65536; a few KiB each)", 1, 16777216),
		OPT_GROUP("Output"),
		OPT_BOOL(0, "json", &o.json, "one JSON object (schema fabscope.pcap/1)"),
		OPT_BOOL(0, "flows", &o.all, "text: the flow table too (default: with --qp or up to 64 flows)"),
		OPT_FILE(0, "plot", &o.plot, "SVG", "draw the 8 busiest flows' Gb/s and the PFC frames over time (gnuplot)"),
		OPT_VERBOSE(&o.verbose),
		OPT_END(),
	};
	struct analyze_run r = { .o = &o };
	int nargs, rc;

	fs_set_progname("fabscope pcap");
	rc = opts_parse(argc, argv, tab, pcap_usage, pcap_about, &nargs);
	if (rc)
		return rc == OPTS_HELP ? 0 : -rc;
	fs_set_verbosity(o.verbose);
	if (nargs != 1)
		return -fs_err_usage(nargs ? "give one capture file" : "missing FILE: the capture to analyze");
	r.file = argv[0];
	if ((rc = analyze_check_opts(&o, &r)) || (rc = analyze_open(&r)))
		return -rc;
	if (flow_table_init(&r.t, o.max_flows)) {
		fs_err_env("out of memory for %d flows", o.max_flows);
		reader_close(&r.rd);
		if (r.have_prog)
			pcap_freecode(&r.prog);
		return FS_EXIT_ENV;
	}
	analyze_read_all(&r);
	if (o.host && !r.host_hits && r.host_seen) {	/* like --qp: a selection of nothing is a wrong argument */
		rc = fs_err_usage("--host %s: no packet in '%s' is from or to that address", o.host, r.file);
		reader_close(&r.rd);
	} else if (o.qp >= 0 && qp_absent(&r.t, &o, r.file)) {
		rc = -FS_EXIT_USAGE;
		reader_close(&r.rd);
	} else {
		rc = analyze_report(&r);
	}
	if (r.have_prog)
		pcap_freecode(&r.prog);
	flow_table_release(&r.t);
	return -rc;
}
