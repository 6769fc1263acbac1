/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The coordinator's checks before a run: every phase's target is a node,
 * and every phase's options pass the engines' own parser.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/ptp.h"
#include "../core/error.h"
#include "../core/options.h"
#include "../transport/transport.h"
#include "coord.h"

int coord_phase_verbs(const struct plan_phase *ph)
{
	return ph->kind != PLAN_PING && ph->kind != PLAN_TOPOLOGY && !strcmp(plan_opt(ph, "transport", "tcp"), "verbs");
}

/* "a, b, c and 4 more": the first names of list (a JSON array of strings) */
static void name_list(json_t *list, char *buf, size_t len)
{
	size_t i, n = json_array_size(list), used = 0;

	buf[0] = 0;
	for (i = 0; i < n && i < 6 && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", !i ? "" : i + 1 == n ? " and " : ", ",
					 json_string_value(json_array_get(list, i)));
	if (i < n && used < len)
		snprintf(buf + used, len - used, " and %zu more", n - i);
}

void coord_check_transports(struct coord *c)
{
	json_t *causes = json_object(), *phases = json_array(), *v;
	const char *why;
	char names[400], which[400];
	int i, said = 0, rest = 0;

	for (i = 0; i < c->plan.nphases; i++)
		if (!c->plan.phases[i].skip && coord_phase_verbs(&c->plan.phases[i]))
			json_array_append_new(phases, json_string(c->plan.phases[i].name));
	for (i = 0; json_array_size(phases) && i < c->plan.nnodes; i++) {
		json_t *l;

		if (!c->node_noverbs[i] || c->node_conn[i] < 0)
			continue;
		if (!(l = json_object_get(causes, c->node_noverbs[i]))) {
			l = json_array();
			json_object_set_new(causes, c->node_noverbs[i], l);
		}
		json_array_append_new(l, json_string(c->plan.nodes[i].name));
	}
	name_list(phases, which, sizeof(which));
	json_object_foreach(causes, why, v) {	/* a line a cause (at most 8: then how many more) */
		if (said++ >= 8) {
			rest += (int)json_array_size(v);
			continue;
		}
		name_list(v, names, sizeof(names));
		fs_warn("%s cannot use verbs: %s: %s jobs in %s (transport = verbs) are not run", names, why,
			json_array_size(v) == 1 ? "its" : "their", which);
	}
	if (rest)
		fs_warn("%d more node%s cannot use verbs, for %d other reasons (run.json's agents say each): "
			"their jobs in %s are not run", rest, rest == 1 ? "" : "s", said - 8, which);
	json_decref(causes);
	json_decref(phases);
}

/* Every phase's options through the engines' own parser, before anything
 * starts: a bad value is a usage error naming the plan and the phase. */
int coord_check_targets(struct coord *c, int joined)
{
	int pi, i;

	for (pi = 0; pi < c->plan.nphases; pi++) {
		struct plan_phase *ph = &c->plan.phases[pi];

		for (i = 0; ph->target && i < c->plan.nnodes; i++)
			if (!strcmp(c->plan.nodes[i].name, ph->target))
				break;
		if (ph->target && i == c->plan.nnodes && joined && c->missing) {
			/* it may be one that did not join: the other phases run */
			fs_warn("[%s]: its target '%s' is not one of the agents that joined "
				"(%d did not): the phase is skipped", ph->name, ph->target, c->missing);
			ph->skip = 1;
		} else if (ph->target && i == c->plan.nnodes)
			return fs_err_usage("%s: target '%s' of [%s] is not %s (the first is '%s')",
					    c->plan.path, ph->target, ph->name,
					    joined ? "one of the agents that joined" : "a node of the plan",
					    c->plan.nnodes ? c->plan.nodes[0].name : "none");
	}
	return 0;
}

/* opts_origin for a phase's engine options: the line the value was written on */
struct value_origin {
	const char *path;
	const struct plan_phase *ph;
	char buf[1200];
};

static const char *value_where(const char *key, const char *val, void *ctx)
{
	struct value_origin *vo = ctx;
	int i;

	for (i = 0; i < vo->ph->nkv; i++)	/* in argv's order: the first such is the one refused */
		if (!strcmp(vo->ph->kv[i].key, key) && !strcmp(vo->ph->kv[i].val, val)) {
			snprintf(vo->buf, sizeof(vo->buf), "%s:%d: %s '%s' of [%s]", vo->path,
				 vo->ph->kv[i].line, key, val, vo->ph->name);
			return vo->buf;
		}
	return NULL;
}

/* The options a job of ph gets (load: those of its load, test bw),
 * through the engine's own parser: 0, or its exit code after its one
 * line, which names the plan's line of the value it refused. */
static int check_engine(struct coord *c, const struct plan_phase *ph, const char *test, int load)
{
	const char *argv[80];
	char *bufs[70], prog[600], dur[64], warm[64];
	struct value_origin vo;
	struct opts_origin origin = { value_where, &vo, "fabscope run" };
	int argc = 0, nb = 0, rc, is_bool, i;

	argv[argc++] = test;
	argv[argc++] = "127.0.0.1";
	for (i = 0; i < ph->nkv && nb < 60; i++) {
		size_t len = strlen(ph->kv[i].key) + strlen(ph->kv[i].val) + 4;

		if (load ? !plan_load_key(ph->kv[i].key) : !plan_key_for(ph->kv[i].key, test))
			continue;	/* [global]'s default for other kinds; the lat's own */
		plan_engine_key(ph->kv[i].key, &is_bool);
		bufs[nb] = malloc(len);
		if (is_bool)
			snprintf(bufs[nb], len, "--%s", ph->kv[i].key);
		else
			snprintf(bufs[nb], len, "--%s=%s", ph->kv[i].key, ph->kv[i].val);
		if (is_bool && plan_bool(ph->kv[i].val) == 0)
			free(bufs[nb]);
		else
			argv[argc++] = bufs[nb++];
	}
	if (load) {	/* as coord-job.c's job_opts gives them */
		snprintf(dur, sizeof(dur), "--duration=%g", ph->load_s);
		snprintf(warm, sizeof(warm), "--warmup=%gs", PLAN_LOAD_SETTLE_S);
		argv[argc++] = dur;
		argv[argc++] = warm;
	}
	argv[argc] = NULL;
	snprintf(prog, sizeof(prog), "fabscope run: %s [%s]%s", c->plan.path, ph->name, load ? " (its load)" : "");
	fs_set_progname(prog);
	vo.path = c->plan.path;
	vo.ph = ph;
	opts_set_origin(&origin);
	rc = ptp_check_args(test, argc, argv);
	opts_set_origin(NULL);
	fs_set_progname("fabscope run");
	for (i = 0; i < nb; i++)
		free(bufs[i]);
	return rc;
}

/* Phases that need two nodes and cannot have them (on one node; with a
 * hostfile, on no lane): each is said and skipped; when no phase is left
 * there is nothing to run, a usage error (not a run of nothing, exit 0). */
static int check_runnable(struct coord *c)
{
	struct plan_lane lanes[PLAN_MAX_LANES];
	int pi, li, nl, n, best, runs = 0, first = -1;
	int *idx = malloc((size_t)(c->plan.nnodes ? c->plan.nnodes : 1) * sizeof(int));
	char why[160];

	for (pi = 0; pi < c->plan.nphases; pi++) {
		struct plan_phase *ph = &c->plan.phases[pi];

		if (PLAN_PER_NODE(ph->kind) || ph->skip) {
			runs += !ph->skip;
			continue;
		}
		if (c->plan.hostfile) {	/* the nodes and their lanes are known */
			nl = plan_lanes(&c->plan, ph, lanes, PLAN_MAX_LANES);
			for (li = 0, best = 0; li < nl; li++)
				if ((n = coord_lane_nodes(c, lanes[li], idx)) > best)
					best = n;
		} else {
			best = c->expected;
		}
		if (best >= 2) {
			runs++;
			continue;
		}
		if (first < 0)
			first = pi;
		ph->skip = 1;
	}
	free(idx);
	for (pi = first; pi >= 0 && pi < c->plan.nphases; pi++) {
		const struct plan_phase *ph = &c->plan.phases[pi];

		if (!ph->skip || PLAN_PER_NODE(ph->kind))
			continue;
		if (c->plan.hostfile && c->expected >= 2)
			snprintf(why, sizeof(why), "on one rail and plane, and its %d share none", c->expected);
		else
			snprintf(why, sizeof(why), "and this run has %d", c->expected);
		if (!runs)	/* the first such phase: nothing else would have run */
			return fs_err_usage("%s: [%s]: a %s phase needs at least 2 nodes %s: nothing to run",
					    c->plan.path, ph->name, plan_kind_name(ph->kind), why);
		fs_warn("%s: [%s]: a %s phase needs at least 2 nodes %s: it is skipped", c->plan.path,
			ph->name, plan_kind_name(ph->kind), why);
	}
	return 0;
}

int coord_check_phases(struct coord *c)
{
	int pi, t, i;

	/* without a hostfile, agents started by slurm, mpirun or by hand
	 * bring their names when they join: their targets are checked then */
	if (c->plan.nnodes && (i = coord_check_targets(c, 0)))
		return i;
	for (pi = 0; c->plan.nnodes && pi < c->plan.nphases; pi++) {	/* rails no node has */
		const struct plan_phase *ph = &c->plan.phases[pi];
		int r, n, e, has;

		for (r = 0; r < ph->nrails; r++) {
			for (n = 0, has = 0; n < c->plan.nnodes && !has; n++)
				for (e = 0; e < c->plan.nodes[n].nep; e++)
					has |= c->plan.nodes[n].ep[e].rail == ph->rails[r];
			if (!has)
				fs_warn("%s: [%s] rails: no node has rail %d: it is not tested", c->plan.path,
					ph->name, ph->rails[r]);
		}
	}
	if ((i = check_runnable(c)))
		return i;
	for (pi = 0; pi < c->plan.nphases; pi++) {
		struct plan_phase *ph = &c->plan.phases[pi];

		for (t = 0; t < ph->ntests + !!ph->load; t++) {	/* (and the load's) */
			if (plan_is_group(ph)) {	/* plan.c checked the values; the transport is left */
				const char *tr = plan_opt(ph, "transport", "tcp");

				if (!xport_find(tr))
					return fs_err_usage("%s: transport '%s' of [%s]: built in are %s", c->plan.path,
							    tr, ph->name, xport_names());
				if (strcmp(tr, "verbs") && (plan_opt(ph, "ib-port", NULL) || plan_opt(ph, "gid-index", NULL) ||
							    plan_opt(ph, "mtu", NULL) || plan_opt(ph, "qp-timeout", NULL)))
					return fs_err_usage("%s: [%s] runs over %s: ib-port, gid-index, mtu and "
							    "qp-timeout are for transport = verbs", c->plan.path, ph->name,
							    tr);	/* as the ranks would say */
				continue;
			}
			if (PLAN_PER_NODE(ph->kind) || ph->kind == PLAN_POLARIZATION || ph->kind == PLAN_PFC)
				continue;	/* (the probe checks its options when it runs) */
			if ((i = check_engine(c, ph, t < ph->ntests ? ph->tests[t] : "bw", t == ph->ntests)))
				return i;
		}
	}
	return 0;
}
