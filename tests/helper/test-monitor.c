/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool mon-*: the monitor's units (tests/t0290-unit-monitor.t).
 *
 *   mon-hist V...            the bucket of each value (seconds): "V BUCKET LE"
 *   mon-hist-check N SEED    the boundaries ascend and tile [0, inf); each
 *                            bound is in its own bucket, the next double above
 *                            it in the next; N random values added to one
 *                            histogram and split over two merged give the same
 *                            counts, and the difference of the merge and one
 *                            part is the other: "ok"
 *   mon-hist-fuzz N SEED     N random 64-bit patterns as doubles (NaN, inf,
 *                            negative, subnormal): refused exactly when NaN or
 *                            negative, else counted once: "ok N REFUSED"
 *   mon-coupon P...          N for each P: the fewest 5-tuples that cover P paths
 *                            with 99 %, checked to be the fewest: "P N"
 *   mon-peers FILE SELF [PATHS SPORTS MAX]   the peers chosen: a header line
 *                            "need N pairs K leaves L lanes M", then a line a peer:
 *                            "NAME leaf|cross IP..." (0.0.0.0 where it has none)
 *   mon-peers-all FILE [PATHS SPORTS]   every node's choice at once: for each
 *                            ordered pair of leaves, the pairs probed, checked
 *                            to be min(K, |A| x |B|) distinct host pairs, and
 *                            every same-leaf pair probed both ways: "ok
 *                            LEAFPAIRS MAXPEERS"
 *   mon-peers-fuzz FILE N SEED   N mutations of FILE's text (bytes flipped,
 *                            inserted, cut, lines doubled) read with the
 *                            first word of each as self: never a crash, and
 *                            every success keeps the invariants (no self, no
 *                            peer twice, each with an address, at most MAX):
 *                            "ok N LOADED"
 *   mon-pkt-fuzz N SEED      encode/decode round trips, and N random and
 *                            mutated datagrams decoded: a decode succeeds only
 *                            on MON_PKT_LEN bytes of the format: "ok N ACCEPTED"
 *
 * Exit codes: 0 ok, 1 a check failed, 2 usage or bad input.
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/slurp.h"
#include "../../monitor/hist.h"
#include "../../monitor/peers.h"
#include "../../monitor/probe.h"
#include "test-tool.h"

static int num_arg(const char *what, const char *s, unsigned long max, unsigned long *v)
{
	return tool_parse_ulong(what, s, max, v);
}

static int hist_values(int argc, const char **argv)
{
	char le[32];

	for (int i = 1; i < argc; i++) {
		double v = strtod(argv[i], NULL);
		int b = mon_hist_bucket(v);

		printf("%s %d %s\n", argv[i], b, b < 0 ? "-" : mon_hist_le_str(b, le, sizeof(le)));
	}
	return 0;
}

static int hist_check(int argc, const char **argv)
{
	unsigned long n, seed;
	struct mon_hist all = { 0 }, a = { 0 }, b = { 0 }, m = { 0 }, d;
	uint64_t s;
	int rc;

	if (argc != 3)
		return usage_error("usage: mon-hist-check N SEED");
	if ((rc = num_arg("N", argv[1], 100000000, &n)) || (rc = num_arg("SEED", argv[2], ~0ul, &seed)))
		return -rc;
	s = seed;
	for (int i = 0; i < MON_HIST_FINITE; i++) {
		if (i && mon_hist_le[i] <= mon_hist_le[i - 1])
			return check_failed("bound %d does not ascend", i);
		if (mon_hist_bucket(mon_hist_le[i]) != i || mon_hist_bucket(nextafter(mon_hist_le[i], INFINITY)) != i + 1)
			return check_failed("bound %d (%g) is not the top of its bucket", i, mon_hist_le[i]);
	}
	if (mon_hist_bucket(0) != 0 || mon_hist_bucket(INFINITY) != MON_HIST_FINITE || mon_hist_bucket(-1e-9) != -1)
		return check_failed("0, inf or a negative value in the wrong bucket");
	for (unsigned long i = 0; i < n; i++) {	/* log-uniform over 0.1 us .. 100 s */
		double v = 1e-7 * pow(10, 9.0 * (double)(tool_rand(&s) >> 11) / 9007199254740992.0);

		mon_hist_add(&all, v);
		mon_hist_add(tool_rand(&s) & 1 ? &a : &b, v);
	}
	mon_hist_merge(&m, &a);
	mon_hist_merge(&m, &b);
	if (memcmp(m.b, all.b, sizeof(m.b)) || m.count != all.count || m.count != n ||
	    fabs(m.sum - all.sum) > 1e-9 * (all.sum + 1))
		return check_failed("the merge of two parts differs from one histogram of all");
	mon_hist_sub(&d, &m, &a);
	if (memcmp(d.b, b.b, sizeof(d.b)) || d.count != b.count)
		return check_failed("merge minus one part is not the other");
	printf("ok\n");
	return 0;
}

static int hist_fuzz(int argc, const char **argv)
{
	unsigned long n, seed, refused = 0;
	struct mon_hist h = { 0 };
	uint64_t s, sum = 0;
	int rc;

	if (argc != 3)
		return usage_error("usage: mon-hist-fuzz N SEED");
	if ((rc = num_arg("N", argv[1], 100000000, &n)) || (rc = num_arg("SEED", argv[2], ~0ul, &seed)))
		return -rc;
	s = seed;
	for (unsigned long i = 0; i < n; i++) {
		uint64_t bits = tool_rand(&s);
		double v;
		int b;

		memcpy(&v, &bits, sizeof(v));
		b = mon_hist_bucket(v);
		if ((b < 0) != (isnan(v) || v < 0) || b > MON_HIST_FINITE)
			return check_failed("value %g got bucket %d", v, b);
		if (mon_hist_add(&h, v))
			refused++;
	}
	for (int i = 0; i < MON_HIST_BUCKETS; i++)
		sum += h.b[i];
	if (sum != h.count || h.count + refused != n)
		return check_failed("counts do not add up: %llu in buckets, %llu counted, %lu refused",
				    (unsigned long long)sum, (unsigned long long)h.count, refused);
	printf("ok %lu %lu\n", n, refused);
	return 0;
}

static int coupon(int argc, const char **argv)
{
	for (int i = 1; i < argc; i++) {
		unsigned long p;
		int rc = num_arg("P", argv[i], 100000, &p), n;

		if (rc)
			return -rc;
		n = mon_coupon((int)p, MON_COUPON_MISS);
		if (p > 1 && (p * pow(1 - 1.0 / (double)p, n) > MON_COUPON_MISS ||
			      p * pow(1 - 1.0 / (double)p, n - 1) <= MON_COUPON_MISS))
			return check_failed("P %lu: N %d is not the fewest that bound the miss by %g", p, n, MON_COUPON_MISS);
		printf("%lu %d\n", p, n);
	}
	return 0;
}

static int peer_opts(int argc, const char **argv, int at, struct mon_peer_opts *o)
{
	unsigned long v[3] = { 8, 16, 4096 };
	int rc;

	for (int i = 0; i < 3 && at + i < argc; i++)
		if ((rc = num_arg("PATHS, SPORTS or MAX", argv[at + i], 1 << 20, &v[i])) || !v[i])
			return rc ? rc : -FS_EXIT_USAGE;
	o->paths = (int)v[0];
	o->sports = (int)v[1];
	o->max_peers = (int)v[2];
	return 0;
}

static int peers_show(int argc, const char **argv)
{
	struct mon_peers mp;
	struct mon_peer_opts o = { 0 };
	char ip[INET_ADDRSTRLEN];
	int rc;

	if (argc < 3 || argc > 6)
		return usage_error("usage: mon-peers FILE SELF [PATHS SPORTS MAX]");
	if ((rc = peer_opts(argc, argv, 3, &o)))
		return usage_error("bad PATHS, SPORTS or MAX");
	o.self = argv[2];
	if ((rc = mon_peers_load(&mp, argv[1], NULL, &o)))
		return -rc;
	printf("need %d pairs %d leaves %d lanes %d\n", mp.need, mp.pairs, mp.leaves, mp.nlanes);
	for (int i = 0; i < mp.n; i++) {
		printf("%s %s", mp.p[i].name, mp.p[i].cross ? "cross" : "leaf");
		for (int l = 0; l < mp.nlanes; l++)
			printf(" %s", inet_ntop(AF_INET, &mp.p[i].ip[l], ip, sizeof(ip)));
		printf("\n");
	}
	mon_peers_release(&mp);
	return 0;
}

/* the node names and leaves of FILE: "name ... leaf=L ..." lines (a test's own file) */
struct allnodes {
	char name[4096][64], leaf[4096][64];
	int n;
};

static int read_nodes(const char *text, struct allnodes *an)
{
	const char *p = text;

	an->n = 0;
	while (*p && an->n < 4096) {
		const char *nl = strchr(p, '\n'), *lf;
		char line[1024];
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len >= sizeof(line))
			return -1;
		memcpy(line, p, len);
		line[len] = 0;
		p += len + (nl ? 1 : 0);
		if (!line[0] || line[0] == '#' || sscanf(line, "%63s", an->name[an->n]) != 1)
			continue;
		lf = strstr(line, " leaf=");
		an->leaf[an->n][0] = 0;
		if (lf)
			sscanf(lf + 6, "%63s", an->leaf[an->n]);
		an->n++;
	}
	return 0;
}

static int peers_all(int argc, const char **argv)
{
	static struct allnodes an;
	static int probes[4096][4096 / 8];	/* bits: i probes j */
	struct mon_peer_opts o = { 0 };
	int rc, maxp = 0, leafpairs = 0, need_pairs = -1;
	char *text;

	if (argc < 2 || argc > 4 || peer_opts(argc, argv, 2, &o))
		return usage_error("usage: mon-peers-all FILE [PATHS SPORTS]");
	if (!(text = fs_slurp(argv[1], 1 << 24)) || read_nodes(text, &an) || an.n > 2048)
		return usage_error("cannot read '%s' as a test's hostfile of at most 2048 nodes", argv[1]);
	memset(probes, 0, sizeof(probes));
	for (int i = 0; i < an.n; i++) {
		struct mon_peers mp;

		o.self = an.name[i];
		if ((rc = mon_peers_load(&mp, argv[1], text, &o)))
			return free(text), -rc;
		need_pairs = mp.pairs;
		maxp = mp.n > maxp ? mp.n : maxp;
		for (int k = 0; k < mp.n; k++)
			for (int j = 0; j < an.n; j++)
				if (!strcmp(an.name[j], mp.p[k].name))
					probes[i][j / 8] |= 1 << (j % 8);
		mon_peers_release(&mp);
	}
	free(text);
	for (int i = 0; i < an.n; i++)
		for (int j = 0; j < an.n; j++)
			if (i != j && !strcmp(an.leaf[i], an.leaf[j]) && !(probes[i][j / 8] & (1 << (j % 8))))
				return check_failed("%s does not probe %s of its own leaf", an.name[i], an.name[j]);
	for (int a = 0; a < an.n; a++)	/* each leaf pair once: at its first hosts */
		for (int b = 0; b < an.n; b++) {
			int first = 1, na = 0, nb = 0, got = 0, want;

			for (int k = 0; k < a && first; k++)
				first = strcmp(an.leaf[k], an.leaf[a]) != 0;
			for (int k = 0; k < b && first; k++)
				first = strcmp(an.leaf[k], an.leaf[b]) != 0;
			if (!first || !strcmp(an.leaf[a], an.leaf[b]))
				continue;
			for (int i = 0; i < an.n; i++)
				for (int j = 0; j < an.n; j++)
					if (!strcmp(an.leaf[i], an.leaf[a]) && !strcmp(an.leaf[j], an.leaf[b])) {
						na += j == b, nb += i == a;
						got += !!(probes[i][j / 8] & (1 << (j % 8)));
					}
			want = need_pairs < na * nb ? need_pairs : na * nb;
			if (got != want)
				return check_failed("leaf %s to leaf %s: %d host pairs probe, not %d", an.leaf[a], an.leaf[b], got, want);
			leafpairs++;
		}
	printf("ok %d %d\n", leafpairs, maxp);
	return 0;
}

static void mutate(char *t, size_t *len, size_t cap, uint64_t *s)
{
	int k = tool_rand(s) % 4 ? 1 : 2 + (int)(tool_rand(s) % 3);	/* one change mostly: most texts still read */

	while (k-- && *len) {
		size_t at = tool_rand(s) % *len;

		switch (tool_rand(s) % 5) {
		case 0: t[at] = (char)(tool_rand(s) % 255 + 1); break;	/* no NUL: a file with one is refused whole */
		case 1: t[at] = " =\n#/.:-"[tool_rand(s) % 8]; break;
		case 2: *len = at; break;
		case 3:
			if (*len + 1 < cap) {
				memmove(t + at + 1, t + at, *len - at);
				t[at] = "0123456789 =\nrailleaf/"[tool_rand(s) % 22];
				(*len)++;
			}
			break;
		default:
			if (*len * 2 < cap) {	/* the text twice: every node duplicated */
				memcpy(t + *len, t, *len);
				*len *= 2;
			}
		}
	}
	t[*len] = 0;
}

static int check_peers(const struct mon_peers *mp, int max)
{
	if (mp->n > max)
		return check_failed("%d peers, more than %d", mp->n, max);
	for (int i = 0; i < mp->n; i++) {
		int any = 0;

		if (!strcmp(mp->p[i].name, mp->self))
			return check_failed("%s probes itself", mp->self);
		for (int l = 0; l < mp->nlanes; l++)
			any |= mp->p[i].ip[l].s_addr != 0;
		if (!any)
			return check_failed("peer %s has no address", mp->p[i].name);
		for (int j = 0; j < i; j++)
			if (!strcmp(mp->p[i].name, mp->p[j].name))
				return check_failed("peer %s twice", mp->p[i].name);
	}
	return 0;
}

static int peers_fuzz(int argc, const char **argv)
{
	unsigned long n, seed, loaded = 0;
	char *orig, *t;
	size_t olen, cap;
	uint64_t s;
	int rc;

	if (argc != 4)
		return usage_error("usage: mon-peers-fuzz FILE N SEED");
	if ((rc = num_arg("N", argv[2], 10000000, &n)) || (rc = num_arg("SEED", argv[3], ~0ul, &seed)))
		return -rc;
	if (!(orig = fs_slurp(argv[1], 1 << 20)))
		return usage_error("cannot read '%s'", argv[1]);
	olen = strlen(orig);
	cap = olen * 4 + 64;
	t = malloc(cap);
	s = seed;
	fs_set_verbosity(-1);
	for (unsigned long i = 0; i < n && t; i++) {
		struct mon_peer_opts o = { NULL, 1 + (int)(tool_rand(&s) % 16), 1 + (int)(tool_rand(&s) % 16),
					   1 + (int)(tool_rand(&s) % 8) };
		struct mon_peers mp;
		char self[64] = "";
		size_t len = olen;

		memcpy(t, orig, olen + 1);
		mutate(t, &len, cap, &s);
		sscanf(t, "%63s", self);
		o.self = self;
		if (mon_peers_load(&mp, "fuzz", t, &o))
			continue;
		loaded++;
		rc = check_peers(&mp, o.max_peers);
		mon_peers_release(&mp);
		if (rc)
			return free(t), free(orig), -rc;
	}
	free(t);
	free(orig);
	printf("ok %lu %lu\n", n, loaded);
	return 0;
}

static int pkt_fuzz(int argc, const char **argv)
{
	unsigned long n, seed, accepted = 0;
	unsigned char buf[MON_PKT_LEN * 2];
	uint64_t s;
	int rc;

	if (argc != 3)
		return usage_error("usage: mon-pkt-fuzz N SEED");
	if ((rc = num_arg("N", argv[1], 100000000, &n)) || (rc = num_arg("SEED", argv[2], ~0ul, &seed)))
		return -rc;
	s = seed;
	for (unsigned long i = 0; i < n; i++) {
		struct mon_pkt p = { 1 + (int)(tool_rand(&s) % 4), tool_rand(&s), tool_rand(&s), (uint32_t)tool_rand(&s),
				     (uint32_t)tool_rand(&s) }, q;
		size_t len = MON_PKT_LEN;

		mon_pkt_encode(buf, &p);
		if (mon_pkt_decode(buf, len, &q) || q.type != p.type || q.cookie != p.cookie || q.seq != p.seq ||
		    q.slot != p.slot || q.aux != p.aux)
			return check_failed("round trip %lu failed", i);
		if (tool_rand(&s) & 1) {	/* mutated */
			buf[tool_rand(&s) % MON_PKT_LEN] ^= (unsigned char)(1 + tool_rand(&s) % 255);
			if (tool_rand(&s) % 4 == 0)
				len = tool_rand(&s) % sizeof(buf);
		} else {		/* random */
			for (size_t k = 0; k < sizeof(buf); k++)
				buf[k] = (unsigned char)tool_rand(&s);
			len = tool_rand(&s) % sizeof(buf);
		}
		if (!mon_pkt_decode(buf, len, &q)) {
			unsigned char again[MON_PKT_LEN];

			mon_pkt_encode(again, &q);	/* accepted: it must be exactly a packet of the format */
			if (len != MON_PKT_LEN || memcmp(again, buf, MON_PKT_LEN))
				return check_failed("datagram %lu accepted but is not of the format", i);
			accepted++;
		}
	}
	printf("ok %lu %lu\n", n, accepted);
	return 0;
}

int tool_monitor(int argc, const char **argv)
{
	if (!strcmp(argv[0], "mon-hist"))
		return hist_values(argc, argv);
	if (!strcmp(argv[0], "mon-hist-check"))
		return hist_check(argc, argv);
	if (!strcmp(argv[0], "mon-hist-fuzz"))
		return hist_fuzz(argc, argv);
	if (!strcmp(argv[0], "mon-coupon"))
		return coupon(argc, argv);
	if (!strcmp(argv[0], "mon-peers"))
		return peers_show(argc, argv);
	if (!strcmp(argv[0], "mon-peers-all"))
		return peers_all(argc, argv);
	if (!strcmp(argv[0], "mon-peers-fuzz"))
		return peers_fuzz(argc, argv);
	return pkt_fuzz(argc, argv);
}
