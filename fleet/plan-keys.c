/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The keys a plan may set: the phase kinds' names, the engine options and
 * which engine takes which, a plan's booleans.
 */
#include <string.h>
#include <strings.h>

#include "../core/options.h"
#include "plan-int.h"

const char *const plan_kind_names[] = {
	[PLAN_PAIRWISE] = "pairwise", [PLAN_RING] = "ring",
	[PLAN_PERMUTATION] = "permutation", [PLAN_BISECTION] = "bisection",
	[PLAN_INCAST] = "incast", [PLAN_PING] = "ping", [PLAN_POLARIZATION] = "polarization",
	[PLAN_PFC] = "pfc", [PLAN_ALLREDUCE] = "allreduce", [PLAN_ALLTOALL] = "alltoall",
	[PLAN_TOPOLOGY] = "topology",
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
	{ "paths", 0 }, { "link-rate", 0 }, { "host-rate", 0 }, { "sweep", 0 }, { "trace", 1 },
	/* the PFC probe's own */
	{ "interval", 0 }, { "before", 0 }, { "after", 0 }, { "interface", 0 }, { "counters-root", 0 },
	{ "driver", 0 }, { "capture", 1 }, { "prio", 0 }, { "quanta", 0 }, { "storm-fraction", 0 },
	{ "storm-intervals", 0 },
	/* the collectives' own */
	{ "algo", 0 }, { "minbytes", 0 }, { "maxbytes", 0 }, { "stepfactor", 0 }, { "chunk", 0 },
	{ "no-check", 1 }, { "corrupt", 0 },
	/* the topology phase's own (topo show) */
	{ "source", 0 }, { "lldp-listen", 0 }, { "lldpd-socket", 0 },
};

/* what `fabscope probe polarization` takes of them */
static const char *const polar_keys[] = {
	"flows", "sport", "flow-label", "duration", "size", "transport", "device", "tclass",
	"timeout", "paths", "link-rate", "host-rate", "sweep", "trace", NULL,
};
const char *const plan_probe_only[] = { "paths", "link-rate", "host-rate", "sweep", "trace", NULL };
/* what `fabscope probe pfc` takes of them */
const char *const plan_pfc_keys[] = {
	"flows", "duration", "size", "transport", "device", "tclass", "timeout", "link-rate",
	"interval", "before", "after", "interface", "counters-root", "driver", "capture", "prio",
	"quanta", "storm-fraction", "storm-intervals", NULL,
};
const char *const plan_pfc_only[] = {
	"interval", "before", "after", "interface", "counters-root", "driver", "capture", "prio",
	"quanta", "storm-fraction", "storm-intervals", NULL,
};

/* what `fabscope allreduce` and `fabscope alltoall` take of them (their
 * --rank, --nranks, --root, --port, --bind, --node and --rail come from the
 * coordinator) */
const char *const plan_coll_keys[] = {
	"algo", "minbytes", "maxbytes", "stepfactor", "warmup", "iters", "chunk", "flows",
	"tx-depth", "tclass", "no-check", "transport", "timeout", "ib-port", "gid-index", "mtu",
	"qp-timeout", "poll", "corrupt", NULL,
};
const char *const plan_coll_only[] = {
	"algo", "minbytes", "maxbytes", "stepfactor", "chunk", "no-check", "corrupt", NULL,
};

/* what `fabscope topo show` takes of them, and only it */
const char *const plan_topo_keys[] = { "source", "lldp-listen", "lldpd-socket", NULL };

/* bw's own: lat has one message in flight, one way at a time */
static const char *const bw_only[] = {
	"flows", "bidirectional", "tx-depth", "cq-mod", "post-list", NULL,
};

const char *plan_kind_name(enum plan_kind k)
{
	return plan_kind_names[k];
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

int plan_in_list(const char *const *list, const char *s)
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
		return plan_in_list(polar_keys, key);
	if (!strcmp(engine, "pfc"))
		return plan_in_list(plan_pfc_keys, key);
	if (!strcmp(engine, "allreduce") || !strcmp(engine, "alltoall"))
		return plan_in_list(plan_coll_keys, key);
	if (!strcmp(engine, "topology"))
		return plan_in_list(plan_topo_keys, key);
	if (plan_in_list(plan_topo_keys, key))
		return 0;
	if (!strcmp(engine, "lat") && plan_in_list(bw_only, key))
		return 0;
	return !plan_in_list(plan_probe_only, key) && !plan_in_list(plan_pfc_only, key) && !plan_in_list(plan_coll_only, key);
}

int plan_load_key(const char *key)
{
	/* what the lat measures, not what loads it */
	static const char *const lat_own[] = {
		"size", "all", "iters", "duration", "warmup", "op", "sport", "flow-label", "inline", NULL,
	};

	return plan_key_for(key, "bw") && !plan_in_list(lat_own, key);
}

int plan_is_group(const struct plan_phase *ph)
{
	return ph->kind == PLAN_ALLREDUCE || ph->kind == PLAN_ALLTOALL;
}

const char *plan_key_suggest(const char *key, const char *const *own)
{
	struct opts_near n;
	size_t i;

	opts_near_init(&n, key);
	for (; own && *own; own++)
		opts_near_offer(&n, *own);
	for (i = 0; i < sizeof(engine_keys) / sizeof(engine_keys[0]); i++)
		opts_near_offer(&n, engine_keys[i].key);
	return opts_near_best(&n);
}

const char *plan_kind_suggest(const char *kind)
{
	struct opts_near n;
	int i;

	opts_near_init(&n, kind);
	for (i = 0; i < PLAN_NKINDS; i++)
		opts_near_offer(&n, plan_kind_names[i]);
	return opts_near_best(&n);
}
