/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/error.h"
#include "../core/units.h"
#include "../transport/transport.h"
#include "plan.h"

static const char *const kind_names[] = {
	[PLAN_PAIRWISE] = "pairwise", [PLAN_RING] = "ring",
	[PLAN_PERMUTATION] = "permutation", [PLAN_BISECTION] = "bisection",
	[PLAN_INCAST] = "incast", [PLAN_PING] = "ping", [PLAN_POLARIZATION] = "polarization",
	[PLAN_PFC] = "pfc", [PLAN_ALLREDUCE] = "allreduce", [PLAN_ALLTOALL] = "alltoall",
};

/* Engine options a plan may set: the long options of bw, lat, the probes
 * and the collectives, passed to the agents' engines as --KEY=VALUE
 * (booleans as --KEY when true). */
static const struct {
	const char *key;
	int is_bool;
} engine_keys[] = {
	{ "transport", 0 }, { "op", 0 }, { "size", 0 }, { "all", 1 }, { "flows", 0 },
	{ "iters", 0 }, { "duration", 0 }, { "warmup", 0 }, { "bidirectional", 1 },
	{ "sport", 0 }, { "tx-depth", 0 }, { "cq-mod", 0 }, { "post-list", 0 },
	{ "tclass", 0 }, { "device", 0 }, { "ib-port", 0 }, { "gid-index", 0 },
	{ "mtu", 0 }, { "sl", 0 }, { "qp-timeout", 0 }, { "flow-label", 0 }, { "inline", 0 }, { "poll", 0 },
	{ "timeout", 0 },
	/* the polarization probe's own */
	{ "paths", 0 }, { "link-rate", 0 }, { "sweep", 0 }, { "trace", 1 },
	/* the PFC probe's own */
	{ "interval", 0 }, { "before", 0 }, { "after", 0 }, { "interface", 0 }, { "counters-root", 0 },
	{ "driver", 0 }, { "capture", 1 }, { "prio", 0 }, { "quanta", 0 }, { "storm-fraction", 0 },
	{ "storm-intervals", 0 },
	/* the collectives' own */
	{ "algo", 0 }, { "minbytes", 0 }, { "maxbytes", 0 }, { "stepfactor", 0 }, { "chunk", 0 },
	{ "no-check", 1 }, { "corrupt", 0 },
};

/* what `fabscope probe polarization` takes of them */
static const char *const polar_keys[] = {
	"flows", "sport", "flow-label", "duration", "size", "transport", "device", "tclass",
	"timeout", "paths", "link-rate", "sweep", "trace", NULL,
};
static const char *const probe_only[] = { "paths", "link-rate", "sweep", "trace", NULL };
/* what `fabscope probe pfc` takes of them */
static const char *const pfc_keys[] = {
	"flows", "duration", "size", "transport", "device", "tclass", "timeout", "link-rate",
	"interval", "before", "after", "interface", "counters-root", "driver", "capture", "prio",
	"quanta", "storm-fraction", "storm-intervals", NULL,
};
static const char *const pfc_only[] = {
	"interval", "before", "after", "interface", "counters-root", "driver", "capture", "prio",
	"quanta", "storm-fraction", "storm-intervals", NULL,
};

/* what `fabscope allreduce` and `fabscope alltoall` take of them (their
 * --rank, --nranks, --root, --port, --bind, --node and --rail come from the
 * coordinator) */
static const char *const coll_keys[] = {
	"algo", "minbytes", "maxbytes", "stepfactor", "warmup", "iters", "chunk", "flows",
	"tx-depth", "tclass", "no-check", "transport", "timeout", "ib-port", "gid-index", "mtu",
	"qp-timeout", "poll", "corrupt", NULL,
};
static const char *const coll_only[] = {
	"algo", "minbytes", "maxbytes", "stepfactor", "chunk", "no-check", "corrupt", NULL,
};
#define COLL_KEYS_TEXT "algo, minbytes, maxbytes, stepfactor, warmup, iters, chunk, flows, tx-depth, " \
	"tclass, no-check, transport, timeout, ib-port, gid-index, mtu, qp-timeout, poll, corrupt"

/* [global] keys that steer the run itself. */
static const char *const global_keys[] = {
	"hostfile", "nodes", "launcher", "label", "agent-timeout", "join-timeout",
	"token-file", "listen", "ssh", "agent-cmd", "seed", "mpirun", "srun", NULL,
};
static const char *const phase_keys[] = {
	"kind", "test", "count", "seed", "target", "rails", "parallel", NULL,
};

const char *plan_kind_name(enum plan_kind k)
{
	return kind_names[k];
}

int plan_engine_key(const char *key, int *is_bool)
{
	size_t i;

	for (i = 0; i < sizeof(engine_keys) / sizeof(engine_keys[0]); i++)
		if (!strcmp(engine_keys[i].key, key)) {
			if (is_bool)
				*is_bool = engine_keys[i].is_bool;
			return 1;
		}
	return 0;
}

int plan_bool(const char *v)
{
	static const char *const yes[] = { "1", "true", "yes", "on", NULL };
	static const char *const no[] = { "0", "false", "no", "off", NULL };
	int i;

	for (i = 0; v && yes[i]; i++)
		if (!strcasecmp(v, yes[i]))
			return 1;
	for (i = 0; v && no[i]; i++)
		if (!strcasecmp(v, no[i]))
			return 0;
	return -1;
}

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

int plan_key_for(const char *key, const char *engine)
{
	if (!plan_engine_key(key, NULL))
		return 0;
	if (!strcmp(engine, "polarization"))
		return in_list(polar_keys, key);
	if (!strcmp(engine, "pfc"))
		return in_list(pfc_keys, key);
	if (!strcmp(engine, "allreduce") || !strcmp(engine, "alltoall"))
		return in_list(coll_keys, key);
	return !in_list(probe_only, key) && !in_list(pfc_only, key) && !in_list(coll_only, key);
}

int plan_is_group(const struct plan_phase *ph)
{
	return ph->kind == PLAN_ALLREDUCE || ph->kind == PLAN_ALLTOALL;
}

/* The sizes of a collective phase, as `fabscope allreduce` makes them:
 * from minbytes by stepfactor (default 2) up to maxbytes; one of them alone
 * is one size, neither is 32M; at most 64 of them. */
static int coll_sizes(const struct plan_phase *ph, uint64_t *sizes, int max)
{
	uint64_t lo = 0, hi = 0;
	double f = 2, s;
	const char *v;
	int n = 0;

	if ((v = plan_opt(ph, "minbytes", NULL)))
		units_parse_size(v, &lo);
	if ((v = plan_opt(ph, "maxbytes", NULL)))
		units_parse_size(v, &hi);
	if ((v = plan_opt(ph, "stepfactor", NULL)))
		f = strtod(v, NULL);
	if (!lo && !hi)
		lo = hi = 32u << 20;
	else if (!hi)
		hi = lo;
	else if (!lo)
		lo = hi;
	if (hi < lo)
		hi = lo;
	for (s = (double)lo; s <= (double)hi && n < max; s *= f) {
		if (!n || (uint64_t)s != sizes[n - 1])
			sizes[n++] = (uint64_t)s;
		if (!(f > 1.0))
			break;
	}
	return n;
}

double plan_coll_seconds(const struct plan_phase *ph, int nranks, double gbps, double step_s)
{
	uint64_t sizes[64], it, w = 5, n_it = 20;
	int n = coll_sizes(ph, sizes, 64), i, steps;
	double t = 1 + 0.01 * nranks;	/* connecting: each rank to the root, blobs */
	const char *v;

	if ((v = plan_opt(ph, "warmup", NULL)))
		units_parse_count(v, &w);
	if ((v = plan_opt(ph, "iters", NULL)))
		units_parse_count(v, &n_it);
	it = w + n_it;
	/* what leaves a rank per operation: 2(n-1)/n of the size for the
	 * all-reduce (ring or halving-doubling), (n-1)/n for the all-to-all;
	 * message steps per operation: 2(n-1) and n-1 */
	steps = nranks > 1 ? (ph->kind == PLAN_ALLREDUCE ? 2 : 1) * (nranks - 1) : 0;
	for (i = 0; i < n; i++) {
		double bytes = (ph->kind == PLAN_ALLREDUCE ? 2.0 : 1.0) * (double)sizes[i];

		/* and the data check of each size: about a pass over the buffers */
		t += (double)it * (bytes * 8 / (gbps * 1e9) + steps * step_s) +
		     3.0 * (double)sizes[i] * 8 / (gbps * 1e9);
	}
	return t;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static int kv_add(struct plan_kv **kv, int *n, const char *k, const char *v, int line)
{
	struct plan_kv *nk = realloc(*kv, (size_t)(*n + 1) * sizeof(**kv));

	if (!nk)
		return -1;
	*kv = nk;
	nk[*n].key = strdup(k);
	nk[*n].val = strdup(v);
	nk[*n].line = line;
	(*n)++;
	return 0;
}

/* The line of key in kv, or 0 */
static int kv_line(const struct plan_kv *kv, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key))
			return kv[i].line;
	return 0;
}

static const char *kv_get(const struct plan_kv *kv, int n, const char *key, const char *dflt)
{
	int i;

	for (i = n - 1; i >= 0; i--)	/* the last one wins */
		if (!strcmp(kv[i].key, key))
			return kv[i].val;
	return dflt;
}

const char *plan_global(const struct plan *p, const char *key, const char *dflt)
{
	return kv_get(p->global, p->nglobal, key, dflt);
}

const char *plan_opt(const struct plan_phase *ph, const char *key, const char *dflt)
{
	return kv_get(ph->kv, ph->nkv, key, dflt);
}

static int perr(const char *path, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int perr(const char *path, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fs_err_usage("%s:%d: %s", path, line, msg);
}

int plan_lane_ok(int rail, int plane)
{
	return rail >= 0 && rail < PLAN_MAX_LANES && plane >= 0 && plane <= 7;
}

int plan_ip_ok(const char *s)
{
	unsigned char a[16];

	return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

/* an engine key's value, as far as the plan can tell: booleans */
static int engine_value_ok(const char *path, int line, const char *k, const char *v)
{
	int is_bool = 0;

	if (plan_engine_key(k, &is_bool) && is_bool && plan_bool(v) < 0)
		return perr(path, line, "%s = '%s': write true or false (also yes/no, on/off, 1/0)", k, v);
	return 0;
}

/* a seed, [global]'s or a phase's: decimal or 0x hex; 0 or -1 */
static int seed_parse(const char *v, uint64_t *out)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || !*v || *end || *v == '-')
		return -1;
	if (out)
		*out = x;
	return 0;
}

/* [global]'s numbers, checked where they are written (0, or perr's code) */
static int global_value_ok(const char *path, int line, const char *k, const char *v)
{
	uint64_t n;

	if (!strcmp(k, "nodes") && (units_parse_count(v, &n) || !n || n > (1u << 20)))
		return perr(path, line, "nodes '%s': give how many agents to wait for, from 1 to %u", v, 1u << 20);
	if (!strcmp(k, "seed") && seed_parse(v, NULL))
		return perr(path, line, "seed '%s' is not a number (e.g. 1, or 0x5eed)", v);
	return 0;
}

/* "0,2,5" -> rails */
static int parse_rails(const char *v, int *rails, int *n)
{
	char *dup = strdup(v), *save = NULL, *t;
	int rc = 0;

	*n = 0;
	for (t = strtok_r(dup, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		char *end;
		long r = strtol(t, &end, 10);

		if (*end || r < 0 || r >= PLAN_MAX_LANES || *n >= PLAN_MAX_LANES) {
			rc = -1;
			break;
		}
		rails[(*n)++] = (int)r;
	}
	free(dup);
	return rc || !*n ? -1 : 0;
}

static int finish_phase_kv(const char *path, struct plan *p, struct plan_phase *ph,
			   const struct plan_kv *eng, int neng, struct plan_kv *own, int nown);

/* The values of a collective phase's options, checked as the collectives'
 * parser checks them (their ranges), so that a bad one is a usage error
 * naming the line before anything starts ([global]'s values too: they are
 * the phase's).  The transport's name is checked by the coordinator. */
static int coll_check_values(const char *path, const struct plan_phase *ph)
{
	static const struct {
		const char *key;
		char type;	/* s size, c count, i int, n factor >= 1, t seconds, e enum */
		long long min, max;
		const char *what;
	} tab[] = {
		{ "minbytes", 's', 4, 1ll << 34, "a size from 4 to 16G, e.g. 1M" },
		{ "maxbytes", 's', 4, 1ll << 34, "a size from 4 to 16G, e.g. 64M" },
		{ "chunk", 's', 4, 1ll << 30, "a size from 4 to 1G, e.g. 1M" },
		{ "stepfactor", 'n', 1, 0, "a number of at least 1, e.g. 2" },
		{ "warmup", 'c', 0, 0, "a count, e.g. 5" },
		{ "iters", 'c', 1, 0, "a count of at least 1, e.g. 20" },
		{ "flows", 'i', 1, 64, "1 to 64" },
		{ "tx-depth", 'i', 1, 4096, "1 to 4096" },
		{ "tclass", 'i', 0, 255, "0 to 255" },
		{ "ib-port", 'i', 1, 255, "1 to 255" },
		{ "gid-index", 'i', 0, 255, "0 to 255" },
		{ "mtu", 'i', 256, 4096, "256 to 4096" },
		{ "qp-timeout", 'i', 1, 31, "1 to 31" },
		{ "corrupt", 'i', 0, 1023, "a rank, 0 to 1023 (testing: the data check must fail)" },
		{ "timeout", 't', 0, 0, "seconds, e.g. 30" },
		{ "poll", 'e', 0, 0, "busy, event or adaptive" },
		{ "algo", 'e', 0, 0, NULL },
	};
	int i;
	size_t k;

	for (i = 0; i < ph->nkv; i++) {
		const char *key = ph->kv[i].key, *v = ph->kv[i].val, *what = NULL;

		for (k = 0; k < sizeof(tab) / sizeof(tab[0]); k++)
			if (!strcmp(tab[k].key, key))
				break;
		if (k == sizeof(tab) / sizeof(tab[0]))
			continue;
		switch (tab[k].type) {
		case 's':
		case 'c': {
			uint64_t u;

			if ((tab[k].type == 's' ? units_parse_size(v, &u) : units_parse_count(v, &u)) ||
			    u < (uint64_t)tab[k].min || (tab[k].max && u > (uint64_t)tab[k].max))
				what = tab[k].what;
			break;
		}
		case 'i': {
			char *end;
			long long x;

			errno = 0;
			x = strtoll(v, &end, 10);
			if (errno || end == v || *end || x < tab[k].min || x > tab[k].max)
				what = tab[k].what;
			break;
		}
		case 'n': {
			char *end;
			double d;

			errno = 0;
			d = strtod(v, &end);
			if (errno || end == v || *end || !(d >= 1) || d > 1e6)
				what = tab[k].what;
			break;
		}
		case 't': {
			double d;

			if (units_parse_seconds(v, &d))
				what = tab[k].what;
			break;
		}
		default:
			if (!strcmp(key, "poll") && xport_poll_mode_parse(v, NULL))
				what = tab[k].what;
			if (!strcmp(key, "algo") && ph->kind == PLAN_ALLREDUCE && strcmp(v, "ring") && strcmp(v, "rhd"))
				what = "ring or rhd (recursive halving-doubling) for kind = allreduce";
			if (!strcmp(key, "algo") && ph->kind == PLAN_ALLTOALL && strcmp(v, "pairwise") &&
			    strcmp(v, "direct"))
				what = "pairwise or direct for kind = alltoall";
			break;
		}
		if (what)
			return perr(path, ph->kv[i].line, "%s '%s' of [%s]: give %s", key, v, ph->name, what);
	}
	/* as -b and -e: the sweep goes up from minbytes to maxbytes */
	{
		const char *lo_v = plan_opt(ph, "minbytes", NULL), *hi_v = plan_opt(ph, "maxbytes", NULL);
		uint64_t lo, hi;

		if (lo_v && hi_v && !units_parse_size(lo_v, &lo) && !units_parse_size(hi_v, &hi) && hi < lo)
			for (i = ph->nkv - 1; i >= 0; i--)
				if (!strcmp(ph->kv[i].key, "maxbytes"))
					return perr(path, ph->kv[i].line, "maxbytes '%s' of [%s] is below minbytes '%s': "
						    "the sweep goes up from minbytes to maxbytes", hi_v, ph->name, lo_v);
	}
	return 0;
}

/* The phase's own keys are sorted into engine options and phase keys;
 * [global]'s engine options come first, so the phase's override them. */
static int finish_phase(const char *path, struct plan *p, struct plan_phase *ph,
			const struct plan_kv *eng, int neng)
{
	struct plan_kv *own = ph->kv;
	int nown = ph->nkv, rc, i;

	ph->kv = NULL;
	ph->nkv = 0;
	rc = finish_phase_kv(path, p, ph, eng, neng, own, nown);
	for (i = 0; i < nown; i++) {
		free(own[i].key);
		free(own[i].val);
	}
	free(own);
	return rc;
}

static int finish_phase_kv(const char *path, struct plan *p, struct plan_phase *ph,
			   const struct plan_kv *eng, int neng, struct plan_kv *own, int nown)
{
	const char *kind = NULL, *test = "bw", *v;
	int i, nk = 0, test_line = 0;

	for (i = 0; i < neng; i++)
		kv_add(&ph->kv, &ph->nkv, eng[i].key, eng[i].val, eng[i].line);
	ph->count = 4;
	seed_parse(plan_global(p, "seed", "1"), &ph->seed);	/* (checked at its line) */
	for (i = 0; i < nown; i++) {
		const char *k = own[i].key, *val = own[i].val;
		int line = own[i].line;

		if (plan_engine_key(k, NULL)) {
			int rc = engine_value_ok(path, line, k, val);

			if (rc)
				return rc;
			kv_add(&ph->kv, &ph->nkv, k, val, line);
		} else if (!strcmp(k, "kind"))
			kind = val;
		else if (!strcmp(k, "test")) {
			test = val;
			test_line = line;
		} else if (!strcmp(k, "count")) {
			uint64_t c;

			if (units_parse_count(val, &c) || !c || c > 100000)
				return perr(path, line, "count '%s' of [%s]: give a number of rounds from 1 to 100000", val, ph->name);
			ph->count = (int)c;
		} else if (!strcmp(k, "seed")) {
			if (seed_parse(val, &ph->seed))
				return perr(path, line, "seed '%s' of [%s] is not a number", val, ph->name);
		} else if (!strcmp(k, "parallel")) {
			uint64_t c;

			if (units_parse_count(val, &c) || !c || c > 1000000)
				return perr(path, line, "parallel '%s' of [%s]: give how many tests may run at once, e.g. 1", val, ph->name);
			ph->parallel = (int)c;
		} else if (!strcmp(k, "target")) {
			free(ph->target);
			ph->target = strdup(val);
		} else if (!strcmp(k, "rails")) {
			if (parse_rails(val, ph->rails, &ph->nrails))
				return perr(path, line, "rails '%s' of [%s]: give rail numbers, e.g. rails = 0,1", val, ph->name);
		} else if (in_list(global_keys, k))
			return perr(path, line, "'%s' belongs in [global], not in [%s]", k, ph->name);
		else
			return perr(path, line, "unknown key '%s' in [%s]; see 'fabscope run --help' for plan keys", k, ph->name);
	}
	if (!kind)
		return perr(path, ph->line, "phase [%s] has no kind: add kind = pairwise (or ring, permutation, bisection, incast, ping, polarization, pfc, allreduce, alltoall)", ph->name);
	for (i = 0; i < PLAN_NKINDS; i++)
		if (!strcmp(kind, kind_names[i]))
			break;
	if (i == PLAN_NKINDS)
		return perr(path, ph->line, "unknown kind '%s' of [%s]: use pairwise, ring, permutation, bisection, incast, ping, polarization, pfc, allreduce or alltoall", kind, ph->name);
	ph->kind = (enum plan_kind)i;
	for (i = 0; i < nown; i++) {
		if (plan_is_group(ph) && plan_engine_key(own[i].key, NULL) && !in_list(coll_keys, own[i].key))
			return perr(path, own[i].line, "'%s' is not a key of kind = %s: it takes %s", own[i].key, kind,
				    COLL_KEYS_TEXT);
		if (!plan_is_group(ph) && in_list(coll_only, own[i].key))
			return perr(path, own[i].line, "'%s' is for kind = allreduce or alltoall, not %s", own[i].key, kind);
		if (ph->kind == PLAN_PFC && plan_engine_key(own[i].key, NULL) && !in_list(pfc_keys, own[i].key))
			return perr(path, own[i].line, "'%s' is not a key of kind = pfc: it takes %s", own[i].key,
				    "flows, duration, size, transport, device, tclass, timeout, link-rate, interval, before, after, interface, counters-root, driver, capture, prio, quanta, storm-fraction, storm-intervals");
		if (ph->kind != PLAN_PFC && in_list(pfc_only, own[i].key))
			return perr(path, own[i].line, "'%s' is for kind = pfc, not %s", own[i].key, kind);
		if (ph->kind != PLAN_POLARIZATION && ph->kind != PLAN_PFC && in_list(probe_only, own[i].key))
			return perr(path, own[i].line, "'%s' is for kind = polarization, not %s", own[i].key, kind);
	}
	if (ph->kind == PLAN_PING) {
		ph->ntests = 1;
		ph->tests[0] = "ping";
		return 0;
	}
	if (ph->kind == PLAN_POLARIZATION) {
		ph->ntests = 1;
		ph->tests[0] = "polarization";
		if (!ph->parallel)
			ph->parallel = 1;	/* one probe at a time: its flows must be alone */
		return 0;
	}
	if (plan_is_group(ph)) {	/* the kind is the test */
		if (test_line && strcmp(test, kind))
			return perr(path, test_line, "test '%s' of [%s]: kind = %s is its own test; drop test", test,
				    ph->name, kind);
		ph->ntests = 1;
		ph->tests[0] = kind_names[ph->kind];
		if ((i = coll_check_values(path, ph)))
			return i;
		/* the time estimate: 10 Gb/s per rank and 20 us a step */
		ph->est_s = plan_coll_seconds(ph, 0, 10, 20e-6);
		return 0;
	}
	if (ph->kind == PLAN_PFC) {	/* every sender at once: it is an incast */
		double b = 2, d = 10, a = 2;

		ph->ntests = 1;
		ph->tests[0] = "pfc";
		if ((v = plan_opt(ph, "before", NULL)) && strcmp(v, "0"))
			units_parse_seconds(v, &b);
		else if (v)
			b = 0;
		if ((v = plan_opt(ph, "after", NULL)) && strcmp(v, "0"))
			units_parse_seconds(v, &a);
		else if (v)
			a = 0;
		if ((v = plan_opt(ph, "duration", NULL)))
			units_parse_seconds(v, &d);
		ph->est_s = b + d + a + 1;
		return 0;
	}
	{
		char *dup = strdup(test), *save = NULL, *t;

		for (t = strtok_r(dup, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
			const char *name = !strcmp(t, "bw") ? "bw" : !strcmp(t, "lat") ? "lat" : NULL;

			if (!name || nk >= PLAN_MAX_TESTS) {
				int rc = perr(path, ph->line, "test '%s' of [%s]: use bw, lat, or bw,lat", test, ph->name);

				free(dup);
				return rc;
			}
			ph->tests[nk++] = name;
		}
		free(dup);
		if (!nk)
			return perr(path, ph->line, "test of [%s] is empty: use bw, lat, or bw,lat", ph->name);
		ph->ntests = nk;
	}
	/* values are checked where they are used, by the engines' own parser
	 * (fleet/coord.c runs it on every phase before anything starts) */
	/* the time estimate of a round: the duration (bw's defaults: 2 s,
	 * 1 s per size with all = 1, 23 sizes) and a second to connect */
	{
		int all = plan_bool(plan_opt(ph, "all", NULL)) == 1;
		double d = all ? 1 : 2;

		if ((v = plan_opt(ph, "duration", NULL)))
			units_parse_seconds(v, &d);
		ph->est_s = (all ? 23 * d : d) + 1;
	}
	return 0;
}

int plan_parse(struct plan *p, const char *path, const char *text)
{
	char *dup = strdup(text), *line, *save = NULL;
	struct plan_kv *eng = NULL;	/* engine keys of [global] */
	int neng = 0, lineno = 0, in_global = 0, rc = 0, i;
	struct plan_phase *cur = NULL;

	memset(p, 0, sizeof(*p));
	p->path = strdup(path);
	p->text = strdup(text);
	for (line = dup; line && !rc; line = save) {
		char *nl = strchr(line, '\n'), *s, *eq;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		lineno++;
		s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');

			if (!e || e[1] || e == s + 1) {
				rc = perr(path, lineno, "malformed section header '%s': write [name]", s);
				break;
			}
			*e = 0;
			s = trim(s + 1);
			if (!strcmp(s, "global")) {
				if (p->nphases) {
					rc = perr(path, lineno, "[global] must come before the phases");
					break;
				}
				in_global = 1;
				continue;
			}
			for (i = 0; i < p->nphases; i++)
				if (!strcmp(p->phases[i].name, s))
					break;
			if (i < p->nphases) {
				rc = perr(path, lineno, "phase [%s] is defined twice", s);
				break;
			}
			for (e = s; *e; e++)
				if (!isalnum((unsigned char)*e) && !strchr("-_.", *e))
					break;
			if (*e) {
				rc = perr(path, lineno, "phase name '%s': use letters, digits, '-', '_' and '.'", s);
				break;
			}
			in_global = 0;
			p->phases = realloc(p->phases, (size_t)(p->nphases + 1) * sizeof(*p->phases));
			cur = &p->phases[p->nphases++];
			memset(cur, 0, sizeof(*cur));
			cur->name = strdup(s);
			cur->line = lineno;
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			rc = perr(path, lineno, "expected key = value, got '%s'", s);
			break;
		}
		*eq = 0;
		{
			char *k = trim(s), *v = trim(eq + 1);

			if (!*k) {
				rc = perr(path, lineno, "a value without a key");
				break;
			}
			/* a key once a section: which of two would win is a guess */
			if (in_global)
				i = kv_line(eng, neng, k) + kv_line(p->global, p->nglobal, k);
			else
				i = cur ? kv_line(cur->kv, cur->nkv, k) : 0;
			if (i) {
				rc = perr(path, lineno, "'%s' is given already in this section, at line %d", k, i);
				break;
			}
			if (in_global) {
				if (plan_engine_key(k, NULL)) {
					rc = engine_value_ok(path, lineno, k, v);
					kv_add(&eng, &neng, k, v, lineno);
				}
				else if (in_list(global_keys, k)) {
					rc = global_value_ok(path, lineno, k, v);
					kv_add(&p->global, &p->nglobal, k, v, lineno);
				}
				else if (in_list(phase_keys, k))
					rc = perr(path, lineno, "'%s' belongs in a phase section, not in [global]", k);
				else
					rc = perr(path, lineno, "unknown key '%s' in [global]; see 'fabscope run --help' for plan keys", k);
			} else if (cur) {
				kv_add(&cur->kv, &cur->nkv, k, v, lineno);
			} else {
				rc = perr(path, lineno, "key '%s' before any section: start with [global] or a [phase]", k);
			}
		}
	}
	for (i = 0; !rc && i < p->nphases; i++)
		rc = finish_phase(path, p, &p->phases[i], eng, neng);
	if (!rc && !p->nphases)
		rc = fs_err_usage("%s: no phases: add a section such as [bw] with kind = pairwise", path);
	for (i = 0; i < neng; i++) {
		free(eng[i].key);
		free(eng[i].val);
	}
	free(eng);
	free(dup);
	return rc;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		size_t n;

		if (cap - len < 65536) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 65536 + 1);

			if (!nb) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
		}
		errno = 0;
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {	/* (EISDIR for a directory) */
		int e = errno ? errno : EIO;

		free(buf);
		fclose(f);
		errno = e;
		return NULL;
	}
	fclose(f);
	buf[len] = 0;
	if (memchr(buf, 0, len)) {
		free(buf);
		errno = EILSEQ;
		return NULL;
	}
	return buf;
}

int plan_load(struct plan *p, const char *path)
{
	char *text = slurp(path);
	int rc;

	memset(p, 0, sizeof(*p));
	if (!text)
		return fs_err_read("plan", path, errno);
	rc = plan_parse(p, path, text);
	free(text);
	return rc;
}

static const struct plan *sort_plan;

static int name_cmp(const void *a, const void *b)
{
	return strcmp(sort_plan->nodes[*(const int *)a].name, sort_plan->nodes[*(const int *)b].name);
}

/* p->by_name: node indices sorted by name; returns 1 + the index of a
 * duplicate name, or 0 */
static int build_index(struct plan *p)
{
	int i;

	free(p->by_name);
	p->by_name = malloc((size_t)(p->nnodes ? p->nnodes : 1) * sizeof(int));
	for (i = 0; i < p->nnodes; i++)
		p->by_name[i] = i;
	sort_plan = p;
	qsort(p->by_name, (size_t)p->nnodes, sizeof(int), name_cmp);
	for (i = 1; i < p->nnodes; i++)
		if (!strcmp(p->nodes[p->by_name[i - 1]].name, p->nodes[p->by_name[i]].name))
			return 1 + p->by_name[i];
	return 0;
}

static int ep_cmp(const void *a, const void *b)
{
	const struct plan_endpoint *x = a, *y = b;

	return x->rail != y->rail ? x->rail - y->rail : x->plane - y->plane;
}

int plan_hostfile(struct plan *p, const char *path, const char *text)
{
	char *own = NULL, *dup, *line, *save = NULL;
	int lineno = 0, rc = 0, cap = 0;

	if (!text) {
		own = slurp(path);
		if (!own)
			return fs_err_read("hostfile", path, errno);
		text = own;
	}
	free(p->hostfile);
	free(p->hostfile_text);
	p->hostfile = strdup(path);
	p->hostfile_text = strdup(text);
	dup = strdup(text);
	for (line = dup; line && !rc; line = save) {
		char *nl = strchr(line, '\n'), *s, *w, *wsave = NULL;
		struct plan_node *n;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		lineno++;
		if ((s = strchr(line, '#')))
			*s = 0;
		s = trim(line);
		if (!*s)
			continue;
		if (p->nnodes == cap) {
			cap = cap ? cap * 2 : 64;
			p->nodes = realloc(p->nodes, (size_t)cap * sizeof(*p->nodes));
		}
		n = &p->nodes[p->nnodes];
		memset(n, 0, sizeof(*n));
		w = strtok_r(s, " \t", &wsave);
		if (strchr(w, '=') || w[0] == '-') {	/* (a name goes to the agent's --name) */
			rc = fs_err_usage("%s:%d: a line starts with the node's name, not '%s'", path, lineno, w);
			break;
		}
		n->name = strdup(w);
		p->nnodes++;
		while (!rc && (w = strtok_r(NULL, " \t", &wsave))) {
			char *eq = strchr(w, '='), *k = w, *v;
			int rail, plane = 0, used = 0;

			if (!eq) {
				rc = fs_err_usage("%s:%d: '%s' is not key=value", path, lineno, w);
				break;
			}
			*eq = 0;
			v = eq + 1;
			if (!strcmp(k, "netns")) {
				n->netns = strdup(v);
			} else if (!strcmp(k, "ssh")) {
				n->ssh = strdup(v);
			} else if ((sscanf(k, "rail%d/%d%n", &rail, &plane, &used) == 2 && !k[used]) ||
				   (plane = 0, sscanf(k, "rail%d%n", &rail, &used) == 1 && !k[used])) {
				int i;

				if (!plan_lane_ok(rail, plane) || !*v) {
					rc = fs_err_usage("%s:%d: %s=%s: rails are 0..%d, planes 0..7, and an address is needed",
							  path, lineno, k, v, PLAN_MAX_LANES - 1);
					break;
				}
				if (!plan_ip_ok(v)) {
					rc = fs_err_usage("%s:%d: %s=%s: not an IP address (the NIC's, e.g. %s=10.100.1.1)",
							  path, lineno, k, v, k);
					break;
				}
				for (i = 0; i < n->nep; i++)
					if (n->ep[i].rail == rail && n->ep[i].plane == plane)
						break;
				if (i < n->nep) {
					rc = fs_err_usage("%s:%d: %s given twice for %s", path, lineno, k, n->name);
					break;
				}
				n->ep = realloc(n->ep, (size_t)(n->nep + 1) * sizeof(*n->ep));
				n->ep[n->nep].rail = rail;
				n->ep[n->nep].plane = plane;
				n->ep[n->nep].ip = strdup(v);
				n->nep++;
			} else {
				rc = fs_err_usage("%s:%d: unknown key '%s': a node has netns=, ssh=, railK= and railK/P=",
						  path, lineno, k);
			}
		}
		if (!rc && n->nep > 1)
			qsort(n->ep, (size_t)n->nep, sizeof(*n->ep), ep_cmp);
	}
	free(dup);
	free(own);
	if (!rc && !p->nnodes)
		rc = fs_err_usage("%s: no nodes: write one node per line, e.g. 'h1 rail0=10.0.0.1'", path);
	if (!rc && (rc = build_index(p)) > 0)
		rc = fs_err_usage("%s: node '%s' is listed twice", path, p->nodes[rc - 1].name);
	return rc;
}

int plan_nodes_anon(struct plan *p, int n)
{
	int i;

	p->nodes = calloc((size_t)n, sizeof(*p->nodes));
	p->nnodes = n;
	for (i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "node%d", i);
		p->nodes[i].name = strdup(name);
	}
	return build_index(p) ? -1 : 0;
}

int plan_node_add(struct plan *p, const char *name)
{
	struct plan_node *nn;

	if (plan_node_index(p, name) >= 0)
		return -1;
	nn = realloc(p->nodes, (size_t)(p->nnodes + 1) * sizeof(*nn));
	if (!nn)
		return -1;
	p->nodes = nn;
	memset(&nn[p->nnodes], 0, sizeof(*nn));
	nn[p->nnodes].name = strdup(name);
	p->nnodes++;
	build_index(p);
	return p->nnodes - 1;
}

int plan_node_index(const struct plan *p, const char *name)
{
	int lo = 0, hi = p->nnodes - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(p->nodes[p->by_name[mid]].name, name);

		if (!c)
			return p->by_name[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

void plan_free(struct plan *p)
{
	int i, j;

	for (i = 0; i < p->nphases; i++) {
		struct plan_phase *ph = &p->phases[i];

		for (j = 0; j < ph->nkv; j++) {
			free(ph->kv[j].key);
			free(ph->kv[j].val);
		}
		free(ph->kv);
		free(ph->name);
		free(ph->target);
	}
	free(p->phases);
	for (i = 0; i < p->nglobal; i++) {
		free(p->global[i].key);
		free(p->global[i].val);
	}
	free(p->global);
	for (i = 0; i < p->nnodes; i++) {
		struct plan_node *n = &p->nodes[i];

		for (j = 0; j < n->nep; j++)
			free(n->ep[j].ip);
		free(n->ep);
		free(n->name);
		free(n->netns);
		free(n->ssh);
	}
	free(p->nodes);
	free(p->by_name);
	free(p->path);
	free(p->text);
	free(p->hostfile);
	free(p->hostfile_text);
	memset(p, 0, sizeof(*p));
}

const struct plan_endpoint *plan_node_ep(const struct plan_node *n, struct plan_lane l)
{
	int i;

	for (i = 0; i < n->nep; i++)
		if (n->ep[i].rail == l.rail && n->ep[i].plane == l.plane)
			return &n->ep[i];
	return NULL;
}

int plan_lanes(const struct plan *p, const struct plan_phase *ph, struct plan_lane *out, int max)
{
	uint8_t seen[PLAN_MAX_LANES][8] = { { 0 } };
	int i, j, n = 0, r, pl;

	for (i = 0; i < p->nnodes; i++)
		for (j = 0; j < p->nodes[i].nep; j++)
			seen[p->nodes[i].ep[j].rail][p->nodes[i].ep[j].plane] = 1;
	for (r = 0; r < PLAN_MAX_LANES; r++) {
		int want = !ph || !ph->nrails;

		for (j = 0; ph && j < ph->nrails; j++)
			want |= ph->rails[j] == r;
		for (pl = 0; pl < 8 && want; pl++)
			if (seen[r][pl] && n < max) {
				out[n].rail = r;
				out[n].plane = pl;
				n++;
			}
	}
	return n;
}

int plan_rounds(const struct plan_phase *ph, int n)
{
	switch (ph->kind) {
	case PLAN_PAIRWISE:
		return n < 2 ? 0 : n % 2 ? n : n - 1;
	case PLAN_PERMUTATION:
		return n < 2 ? 0 : ph->count;
	case PLAN_PING:
		return 1;
	case PLAN_POLARIZATION:
		return n < 2 ? 0 : 1;
	default:
		return n < 2 ? 0 : 1;
	}
}

/* splitmix64: a small, well-mixed generator for reproducible permutations */
static uint64_t mix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int plan_round_pairs(const struct plan_phase *ph, int n, int r, int target,
		     struct plan_pair *out)
{
	int i, k = 0;

	switch (ph->kind) {
	case PLAN_PAIRWISE: {
		/* the circle method: node m-1 stays, the others rotate; with
		 * an odd count a phantom node m-1 gives one node a bye */
		int m = n % 2 ? n + 1 : n, c = m - 1;

		for (i = 0; i < m / 2; i++) {
			int a = i ? (r + i) % c : m - 1, b = (r - i + c) % c;

			if (!i)
				b = r;
			if (a >= n || b >= n)
				continue;
			/* who sends: the smaller index when the sum is odd, the
			 * larger when even; every node sends to about half its peers */
			{
				int lo = a < b ? a : b, hi = a < b ? b : a;

				out[k].client = (lo + hi) % 2 ? lo : hi;
				out[k].server = (lo + hi) % 2 ? hi : lo;
			}
			k++;
		}
		return k;
	}
	case PLAN_RING:
		for (i = 0; i < n; i++) {
			out[k].client = i;
			out[k++].server = (i + 1) % n;
		}
		return n == 2 ? 1 : k;
	case PLAN_PERMUTATION: {
		/* Sattolo's shuffle: a uniformly random single cycle, which
		 * is a derangement; round r has its own stream of the seed */
		int *perm = malloc((size_t)n * sizeof(*perm));
		uint64_t s = ph->seed * 0x100000001b3ull + (uint64_t)r;

		if (!perm)
			return 0;
		for (i = 0; i < n; i++)
			perm[i] = i;
		for (i = n - 1; i > 0; i--) {
			int j = (int)(mix64(&s) % (uint64_t)i), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		for (i = 0; i < n; i++) {
			out[k].client = i;
			out[k++].server = perm[i];
		}
		free(perm);
		return k;
	}
	case PLAN_BISECTION: {
		int h = n / 2;

		for (i = 0; i < h; i++) {
			out[k].client = i;
			out[k++].server = i + h;
			out[k].client = i + h;
			out[k++].server = i;
		}
		return k;
	}
	case PLAN_INCAST:
	case PLAN_PFC:
		for (i = 0; i < n; i++)
			if (i != target) {
				out[k].client = i;
				out[k++].server = target;
			}
		return k;
	case PLAN_POLARIZATION:	/* across the middle of the node list, one way */
		for (i = 0; i < n / 2; i++) {
			out[k].client = i;
			out[k++].server = i + n / 2;
		}
		return k;
	case PLAN_PING:
	case PLAN_ALLREDUCE:	/* a group per lane, no pairs */
	case PLAN_ALLTOALL:
		return 0;
	}
	return 0;
}
