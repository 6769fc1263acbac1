/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The plan file: its parser ([global], then one section per phase; every
 * value checked where it is written), loading it, and freeing a plan.
 * What a plan is: plan.h.  The keys: plan-keys.c; the hostfile and the
 * nodes: plan-hosts.c; the schedules: plan-sched.c.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/record.h"
#include "../core/slurp.h"
#include "../core/units.h"
#include "../transport/transport.h"
#include "plan-int.h"

/* [global] keys that steer the run itself. */
static const char *const global_keys[] = {
	"hostfile", "nodes", "launcher", "label", "agent-timeout", "join-timeout",
	"token-file", "listen", "ssh", "agent-cmd", "seed", "mpirun", "srun", "topology", "retest-max",
	"retest-time", NULL,
};
static const char *const phase_keys[] = {
	"kind", "test", "count", "seed", "target", "rails", "parallel", "load", NULL,
};

char *plan_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* k = v at the end of kv[0..n) (alloc: of them allocated): 0, or
 * -FS_EXIT_ENV when out of memory. */
static int kv_add(struct plan_kv **kv, int *n, size_t *alloc, const char *k, const char *v, int line)
{
	struct plan_kv *nk = *kv;

	if (FS_ALLOC_GROW(nk, (size_t)*n + 1, *alloc))
		return fs_err_env("out of memory for the plan's key %s", k);
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

/* An unknown key of [section], whose own keys are own: one line, with the
 * key it most likely meant (as the command line's options do). */
static int unknown_key(const char *path, int line, const char *k, const char *section, const char *const *own)
{
	const char *s = plan_key_suggest(k, own);

	if (s)
		return perr(path, line, "unknown key '%s' in [%s]; did you mean '%s'?", k, section, s);
	return perr(path, line, "unknown key '%s' in [%s]; see 'fabscope run --help' for plan keys", k, section);
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

/* A label line of [global] (label = K=V, or K1=V1,K2=V2): each label
 * KEY=VALUE, and none given by an earlier label line (which of two would
 * win is a guess).  0, or perr's code. */
static int label_ok(const char *path, const struct plan *p, int line, const char *v)
{
	json_t *mine = json_object(), *prev, *val;
	const char *key;
	int i, rc = 0;

	if (!mine)
		return fs_err_env("out of memory for the plan's labels");
	if (record_label_add(mine, v)) {
		json_decref(mine);
		return perr(path, line, "label '%s': give KEY=VALUE, or several as K1=V1,K2=V2 (a comma separates "
			    "labels: a value holds none), keys of 1 to 127 characters", v);
	}
	for (i = 0; i < p->nglobal && !rc; i++) {
		if (strcmp(p->global[i].key, "label") || !(prev = json_object()))
			continue;
		record_label_add(prev, p->global[i].val);	/* (checked at its line) */
		json_object_foreach(mine, key, val)
			if (json_object_get(prev, key)) {
				rc = perr(path, line, "label '%s' is given already at line %d: give each label once",
					  key, p->global[i].line);
				break;
			}
		json_decref(prev);
	}
	json_decref(mine);
	return rc;
}

/* [global]'s values, checked where they are written (0, or perr's code) */
static int global_value_ok(const char *path, const struct plan *p, int line, const char *k, const char *v)
{
	uint64_t n;

	if (!strcmp(k, "nodes") && (units_parse_count(v, &n) || !n || n > (1u << 20)))
		return perr(path, line, "nodes '%s': give how many agents to wait for, from 1 to %u", v, 1u << 20);
	if (!strcmp(k, "seed") && seed_parse(v, NULL))
		return perr(path, line, "seed '%s' is not a number (e.g. 1, or 0x5eed)", v);
	if (!strcmp(k, "label"))
		return label_ok(path, p, line, v);
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

		if (*end || r < 0 || r >= FS_MAX_RAILS || *n >= FS_MAX_RAILS) {
			rc = -1;
			break;
		}
		rails[(*n)++] = (int)r;
	}
	free(dup);
	return rc || !*n ? -1 : 0;
}

/* Each of the phase's own keys is one its kind takes. */
static int kind_keys_ok(const char *path, const struct plan_phase *ph, const char *kind,
			const struct plan_kv *own, int nown)
{
	int i;

	for (i = 0; i < nown; i++) {
		if (plan_is_group(ph) && plan_engine_key(own[i].key, NULL) && !plan_in_list(plan_coll_keys, own[i].key))
			return perr(path, own[i].line, "'%s' is not a key of kind = %s: it takes %s", own[i].key, kind,
				    COLL_KEYS_TEXT);
		if (!plan_is_group(ph) && plan_in_list(plan_coll_only, own[i].key))
			return perr(path, own[i].line, "'%s' is for kind = allreduce or alltoall, not %s", own[i].key, kind);
		if (ph->kind == PLAN_PFC && plan_engine_key(own[i].key, NULL) && !plan_in_list(plan_pfc_keys, own[i].key))
			return perr(path, own[i].line, "'%s' is not a key of kind = pfc: it takes %s", own[i].key,
				    "flows, duration, size, transport, device, tclass, timeout, link-rate, interval, before, after, interface, counters-root, driver, capture, prio, quanta, storm-fraction, storm-intervals");
		if (ph->kind != PLAN_PFC && plan_in_list(plan_pfc_only, own[i].key))
			return perr(path, own[i].line, "'%s' is for kind = pfc, not %s", own[i].key, kind);
		if (ph->kind == PLAN_TOPOLOGY && plan_engine_key(own[i].key, NULL) &&
		    !plan_in_list(plan_topo_keys, own[i].key))
			return perr(path, own[i].line, "'%s' is not a key of kind = topology: it takes source, lldp-listen "
				    "and lldpd-socket", own[i].key);
		if (ph->kind != PLAN_TOPOLOGY && plan_in_list(plan_topo_keys, own[i].key))
			return perr(path, own[i].line, "'%s' is for kind = topology, not %s", own[i].key, kind);
		if (ph->kind != PLAN_POLARIZATION && ph->kind != PLAN_PFC && plan_in_list(plan_probe_only, own[i].key))
			return perr(path, own[i].line, "'%s' is for kind = polarization, not %s", own[i].key, kind);
	}
	return 0;
}

/* The tests of a bw/lat phase (test = bw, lat or bw,lat). */
static int bench_tests(const char *path, struct plan_phase *ph, const char *test)
{
	char *dup = strdup(test), *save = NULL, *t;
	int nk = 0, rc;

	for (t = strtok_r(dup, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		const char *name = !strcmp(t, "bw") ? "bw" : !strcmp(t, "lat") ? "lat" : NULL;

		if (!name || nk >= PLAN_MAX_TESTS) {
			rc = perr(path, ph->line, "test '%s' of [%s]: use bw, lat, or bw,lat", test, ph->name);
			free(dup);
			return rc;
		}
		ph->tests[nk++] = name;
	}
	free(dup);
	if (!nk)
		return perr(path, ph->line, "test of [%s] is empty: use bw, lat, or bw,lat", ph->name);
	ph->ntests = nk;
	/* values are checked where they are used, by the engines' own parser
	 * (fleet/coord-check.c runs it on every phase before anything starts) */
	return 0;
}

static int finish_phase_kv(const char *path, struct plan *p, struct plan_phase *ph,
			   const struct plan_kv *eng, int neng, struct plan_kv *own, int nown);

/* The line of a phase's engine key (its own or [global]'s), or the phase's */
static int opt_line(const struct plan_phase *ph, const char *key)
{
	int i;

	for (i = ph->nkv - 1; i >= 0; i--)
		if (!strcmp(ph->kv[i].key, key))
			return ph->kv[i].line;
	return ph->line;
}

/* load = bw (at line) of a lat phase: the lat's time bounds the load's, so
 * it must be one: a duration, and a warm-up in seconds.  The load runs
 * for a quarter more than the lat's sizes take (warm-up and duration
 * each), plus the settling and 3 s for the lat's connection (its server
 * started, listening, its client started: control round trips, under the
 * load). */
static int load_finish(const char *path, struct plan_phase *ph, int line, const char *test)
{
	const char *dv = plan_opt(ph, "duration", NULL), *wv = plan_opt(ph, "warmup", NULL);
	int sizes = plan_bool(plan_opt(ph, "all", NULL)) == 1 ? 23 : 1;	/* ptp_sizes' sweep */
	double d = 2, w;
	size_t n;

	if (ph->ntests != 1 || strcmp(ph->tests[0], "lat"))
		return perr(path, line, "load = %s of [%s] is for test = lat (the latency measured under a "
			    "bandwidth load), not test = %s", ph->load, ph->name, test);
	if (!dv)
		return perr(path, line, "load = %s of [%s] needs duration (the lat's seconds per size, here "
			    "or in [global]): the load must outlast the latency test, and a count (iters) "
			    "gives no time to size it by", ph->load, ph->name);
	units_parse_seconds(dv, &d);	/* (a bad one: the engines' check says so at its line) */
	w = d / 10;	/* lat's default warm-up: a tenth of the run */
	if (wv && (n = strlen(wv)) && wv[n - 1] == 's')
		units_parse_seconds(wv, &w);
	else if (wv && !strcmp(wv, "0"))
		w = 0;
	else if (wv)
		return perr(path, opt_line(ph, "warmup"), "warmup '%s' of [%s]: with load = %s give it in "
			    "seconds (e.g. 0.2s): a count of messages gives no time to size the load by", wv,
			    ph->name, ph->load);
	ph->load_s = ceil(PLAN_LOAD_SETTLE_S + 3 + 1.25 * sizes * (d + w));
	return 0;
}

/* Engine keys that exclude each other, as bw's and lat's -n and -D, -a
 * and -s do: a count or a duration; a sweep of every size or one size
 * (all only when it is true). */
static const struct {
	const char *a, *b, *what;
} exclusive[] = {
	{ "iters", "duration", "give a count (iters) or a duration, not both" },
	{ "all", "size", "sweep every size (all) or give one (size), not both" },
};

/* Does key = val set what an exclusive pair's key x means? (all = false
 * sweeps nothing, so it excludes nothing) */
static int excl_sets(const char *key, const char *val, const char *x)
{
	return !strcmp(key, x) && (strcmp(key, "all") || plan_bool(val) == 1);
}

/* The partner of key = val that it excludes, or NULL */
static const char *excl_partner(const char *key, const char *val, int *k)
{
	size_t i;

	for (i = 0; i < sizeof(exclusive) / sizeof(exclusive[0]); i++) {
		*k = (int)i;
		if (excl_sets(key, val, exclusive[i].a))
			return exclusive[i].b;
		if (excl_sets(key, val, exclusive[i].b))
			return exclusive[i].a;
	}
	return NULL;
}

/* Two keys of one section that exclude each other: an error at the line of
 * the later one, naming both (the plan's keys, not the engines' flags). */
static int excl_check(const char *path, const char *section, const struct plan_kv *kv, int n)
{
	int i, j, k;

	for (i = 0; i < n; i++) {
		const char *other = excl_partner(kv[i].key, kv[i].val, &k);

		for (j = 0; other && j < i; j++)
			if (excl_sets(kv[j].key, kv[j].val, other))
				return perr(path, kv[i].line, "%s and %s (line %d) of [%s] exclude each other: %s",
					    kv[i].key, kv[j].key, kv[j].line, section, exclusive[k].what);
	}
	return 0;
}

/* The phase's own key = val wins over what it excludes of [global]'s
 * defaults, already in ph->kv: those are dropped. */
static void excl_drop_inherited(struct plan_phase *ph, const char *key, const char *val)
{
	const char *other;
	int i, j, k;

	/* a size drops an inherited all = true; all = true an inherited size */
	if (!(other = excl_partner(key, !strcmp(key, "all") ? val : "1", &k)))
		return;
	for (i = j = 0; i < ph->nkv; i++) {
		if (!strcmp(ph->kv[i].key, other)) {
			free(ph->kv[i].key);
			free(ph->kv[i].val);
			continue;
		}
		ph->kv[j++] = ph->kv[i];
	}
	ph->nkv = j;
}

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
	ph->kv_alloc = 0;
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
	int i, test_line = 0, load_line = 0, rc;

	if ((i = excl_check(path, ph->name, own, nown)))
		return i;
	for (i = 0; i < neng; i++)
		if ((rc = kv_add(&ph->kv, &ph->nkv, &ph->kv_alloc, eng[i].key, eng[i].val, eng[i].line)))
			return rc;
	ph->count = 4;
	seed_parse(plan_global(p, "seed", "1"), &ph->seed);	/* (checked at its line) */
	for (i = 0; i < nown; i++) {
		const char *k = own[i].key, *val = own[i].val;
		int line = own[i].line;

		if (plan_engine_key(k, NULL)) {
			if ((rc = engine_value_ok(path, line, k, val)))
				return rc;
			excl_drop_inherited(ph, k, val);
			if ((rc = kv_add(&ph->kv, &ph->nkv, &ph->kv_alloc, k, val, line)))
				return rc;
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
		} else if (!strcmp(k, "load")) {
			if (strcmp(val, "bw"))
				return perr(path, line, "load '%s' of [%s]: give bw (each lat test then runs beside "
					    "a bw test of its pair, its load)", val, ph->name);
			ph->load = "bw";
			load_line = line;
		} else if (!strcmp(k, "target")) {
			free(ph->target);
			ph->target = strdup(val);
		} else if (!strcmp(k, "rails")) {
			if (parse_rails(val, ph->rails, &ph->nrails))
				return perr(path, line, "rails '%s' of [%s]: give rail numbers, e.g. rails = 0,1", val, ph->name);
		} else if (plan_in_list(global_keys, k))
			return perr(path, line, "'%s' belongs in [global], not in [%s]", k, ph->name);
		else
			return unknown_key(path, line, k, ph->name, phase_keys);
	}
	if (!kind)
		return perr(path, ph->line, "phase [%s] has no kind: add kind = pairwise (or ring, permutation, bisection, incast, ping, polarization, pfc, allreduce, alltoall, topology)", ph->name);
	for (i = 0; i < PLAN_NKINDS; i++)
		if (!strcmp(kind, plan_kind_names[i]))
			break;
	if (i == PLAN_NKINDS && (v = plan_kind_suggest(kind)))
		return perr(path, ph->line, "unknown kind '%s' of [%s]; did you mean '%s'?", kind, ph->name, v);
	if (i == PLAN_NKINDS)
		return perr(path, ph->line, "unknown kind '%s' of [%s]: use pairwise, ring, permutation, bisection, incast, ping, polarization, pfc, allreduce, alltoall or topology", kind, ph->name);
	ph->kind = (enum plan_kind)i;
	if ((rc = kind_keys_ok(path, ph, kind, own, nown)))
		return rc;
	if (ph->load && (PLAN_PER_NODE(ph->kind) || plan_is_group(ph) || ph->kind == PLAN_POLARIZATION ||
			 ph->kind == PLAN_PFC))
		return perr(path, load_line, "load = %s of [%s] is for the kinds of pairs (pairwise, ring, "
			    "permutation, bisection, incast), not %s", ph->load, ph->name, kind);
	if (ph->kind == PLAN_PING) {
		ph->ntests = 1;
		ph->tests[0] = "ping";
		return 0;
	}
	if (ph->kind == PLAN_TOPOLOGY) {
		const char *src = plan_opt(ph, "source", "auto");
		double l = 35;

		if (strcmp(src, "auto") && strcmp(src, "lldpd") && strcmp(src, "listen") && strcmp(src, "none"))
			return perr(path, ph->line, "source = %s of [%s]: use auto, lldpd, listen or none", src,
				    ph->name);
		if ((v = plan_opt(ph, "lldp-listen", NULL)) && (units_parse_seconds(v, &l) || l <= 0))
			return perr(path, ph->line, "lldp-listen = %s of [%s]: give seconds, e.g. 35 or 35s", v,
				    ph->name);
		ph->ntests = 1;
		ph->tests[0] = "topology";
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
		ph->tests[0] = plan_kind_names[ph->kind];
		return coll_check_values(path, ph);
	}
	if (ph->kind == PLAN_PFC) {	/* every sender at once: it is an incast */
		ph->ntests = 1;
		ph->tests[0] = "pfc";
		return 0;
	}
	if ((rc = bench_tests(path, ph, test)) || !ph->load)
		return rc;
	return load_finish(path, ph, load_line, test);
}

int plan_parse(struct plan *p, const char *path, const char *text)
{
	char *dup = strdup(text), *line, *save = NULL;
	struct plan_kv *eng = NULL;	/* engine keys of [global] */
	size_t eng_alloc = 0;
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
		s = plan_trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');

			if (!e || e[1] || e == s + 1) {
				rc = perr(path, lineno, "malformed section header '%s': write [name]", s);
				break;
			}
			*e = 0;
			s = plan_trim(s + 1);
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
			if (FS_ALLOC_GROW(p->phases, (size_t)p->nphases + 1, p->phases_alloc)) {
				rc = fs_err_env("out of memory reading %s", path);
				break;
			}
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
			char *k = plan_trim(s), *v = plan_trim(eq + 1);

			if (!*k) {
				rc = perr(path, lineno, "a value without a key");
				break;
			}
			/* a key once a section: which of two would win is a guess
			 * (label: each label once; label_ok checks) */
			if (in_global && !strcmp(k, "label"))
				i = 0;
			else if (in_global)
				i = kv_line(eng, neng, k) + kv_line(p->global, p->nglobal, k);
			else
				i = cur ? kv_line(cur->kv, cur->nkv, k) : 0;
			if (i) {
				rc = perr(path, lineno, "'%s' is given already in this section, at line %d", k, i);
				break;
			}
			if (in_global) {
				if (plan_engine_key(k, NULL)) {
					if (!(rc = engine_value_ok(path, lineno, k, v)))
						rc = kv_add(&eng, &neng, &eng_alloc, k, v, lineno);
				}
				else if (plan_in_list(global_keys, k)) {
					if (!(rc = global_value_ok(path, p, lineno, k, v)))
						rc = kv_add(&p->global, &p->nglobal, &p->global_alloc, k, v, lineno);
				}
				else if (plan_in_list(phase_keys, k))
					rc = perr(path, lineno, "'%s' belongs in a phase section, not in [global]", k);
				else
					rc = unknown_key(path, lineno, k, "global", global_keys);
			} else if (cur) {
				rc = kv_add(&cur->kv, &cur->nkv, &cur->kv_alloc, k, v, lineno);
			} else {
				rc = perr(path, lineno, "key '%s' before any section: start with [global] or a [phase]", k);
			}
		}
	}
	if (!rc)
		rc = excl_check(path, "global", eng, neng);
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

int plan_load(struct plan *p, const char *path)
{
	char *text = fs_slurp(path, PLAN_FILE_MAX);
	int rc;

	memset(p, 0, sizeof(*p));
	if (!text)
		return fs_err_read("plan", path, errno);
	rc = plan_parse(p, path, text);
	free(text);
	return rc;
}

void plan_release(struct plan *p)
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
		free(n->leaf);
		free(n->pod);
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
