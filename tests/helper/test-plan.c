/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool commands for fleet/plan.c and fleet/analyze.c:
 *
 *   plan-pairs KIND N [COUNT [SEED [TARGET]]]
 *        every round of a phase of KIND among N nodes, one line per round:
 *        "ROUND: C>S C>S ..." (node indices)
 *   plan-parse FILE [HOSTFILE]
 *        the plan (and hostfile) as parsed: phases with their kind, tests,
 *        engine options in order; nodes with their endpoints
 *   analyze [--sizes] DIR
 *        the suspects of the records in DIR/results.jsonl, one per line:
 *        "KIND PHASE TEST RAIL NODE PEER", and " STATUS: CONFIRMATION"
 *        after one that a re-test judged; then the pairs a re-test did not
 *        confirm, "unconfirmed KIND ..." likewise; with --sizes, " @SIZE"
 *        after a suspect's pair
 *   analyze --groups DIR
 *        the store's groups (records/store.h: the analysis's, a message
 *        size apart), one a line, tab-separated:
 *        "PHASE TEST RAIL PLANE SIZE PAIRS MIN MEDIAN MAX" (%g)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../records/analyze.h"
#include "../../report/report.h"
#include "../../fleet/plan.h"
#include "../../fleet/results.h"
#include "../../records/read.h"
#include "../../records/store.h"
#include "test-tool.h"

static int kind_of(const char *s, enum plan_kind *k)
{
	int i;

	for (i = 0; i <= PLAN_PING; i++)
		if (!strcmp(plan_kind_name((enum plan_kind)i), s)) {
			*k = (enum plan_kind)i;
			return 0;
		}
	return -1;
}

static int plan_pairs(int argc, const char **argv)
{
	struct plan_phase ph;
	struct plan_pair *pairs;
	int n, r, i, nr;

	memset(&ph, 0, sizeof(ph));
	if (argc < 3 || kind_of(argv[1], &ph.kind) || (n = atoi(argv[2])) < 0) {
		fprintf(stderr, "usage: test-tool plan-pairs KIND N [COUNT [SEED [TARGET]]]\n");
		return 2;
	}
	ph.count = argc > 3 ? atoi(argv[3]) : 4;
	ph.seed = argc > 4 ? strtoull(argv[4], NULL, 0) : 1;
	pairs = malloc((size_t)(2 * n + 2) * sizeof(*pairs));
	nr = plan_rounds(&ph, n);
	for (r = 0; r < nr; r++) {
		int np = plan_round_pairs(&ph, n, r, argc > 5 ? atoi(argv[5]) : 0, pairs);

		printf("%d:", r + 1);
		for (i = 0; i < np; i++)
			printf(" %d>%d", pairs[i].client, pairs[i].server);
		printf("\n");
	}
	free(pairs);
	return 0;
}

static int plan_parse_cmd(int argc, const char **argv)
{
	struct plan p;
	int i, j, rc;

	if (argc < 2) {
		fprintf(stderr, "usage: test-tool plan-parse FILE [HOSTFILE]\n");
		return 2;
	}
	rc = plan_load(&p, argv[1]);
	if (!rc && argc > 2)
		rc = plan_hostfile(&p, argv[2], NULL);
	if (rc) {
		plan_release(&p);
		return -rc;
	}
	for (i = 0; i < p.nglobal; i++)
		printf("global %s=%s\n", p.global[i].key, p.global[i].val);
	for (i = 0; i < p.nphases; i++) {
		const struct plan_phase *ph = &p.phases[i];

		printf("phase %s kind=%s tests=%s%s%s", ph->name, plan_kind_name(ph->kind), ph->tests[0],
		       ph->ntests > 1 ? "," : "", ph->ntests > 1 ? ph->tests[1] : "");
		if (ph->kind == PLAN_PERMUTATION)
			printf(" count=%d seed=%llu", ph->count, (unsigned long long)ph->seed);
		if (ph->target)
			printf(" target=%s", ph->target);
		for (j = 0; j < ph->nrails; j++)
			printf("%s%d", j ? "," : " rails=", ph->rails[j]);
		printf("\n");
		for (j = 0; j < ph->nkv; j++)
			printf("  %s=%s\n", ph->kv[j].key, ph->kv[j].val);
	}
	for (i = 0; i < p.nnodes; i++) {
		const struct plan_node *n = &p.nodes[i];

		printf("node %s", n->name);
		if (n->netns)
			printf(" netns=%s", n->netns);
		if (n->ssh)
			printf(" ssh=%s", n->ssh);
		if (n->leaf)
			printf(" leaf=%s", n->leaf);
		if (n->pod)
			printf(" pod=%s", n->pod);
		for (j = 0; j < n->nep; j++)
			printf(" %d/%d=%s", n->ep[j].rail, n->ep[j].plane, n->ep[j].ip);
		printf("\n");
	}
	plan_release(&p);
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the store's groups as they are, every size apart (test-tool analyze --groups) */
static void groups_print(const struct rstore *st)
{
	size_t i, j;

	for (i = 0; i < st->ng; i++) {
		const struct rstore_group *g = &st->g[i];
		double *v = malloc((g->n ? g->n : 1) * sizeof(*v)), med;

		if (!v || !g->n) {
			free(v);
			continue;
		}
		for (j = 0; j < g->n; j++)
			v[j] = g->r[j].v;
		qsort(v, g->n, sizeof(*v), dbl_cmp);
		med = g->n % 2 ? v[g->n / 2] : (v[g->n / 2 - 1] + v[g->n / 2]) / 2;
		printf("%s\t%s\t%d\t%d\t%.0f\t%zu\t%g\t%g\t%g\n", rstore_str(st, g->phase),
		       g->test == RSTORE_BW ? "bw" : "lat", g->rail, g->plane, g->size, g->n, v[0], med, v[g->n - 1]);
		free(v);
	}
}

static int analyze_cmd(int argc, const char **argv)
{
	struct rstore st;
	json_t *sus, *nc, *s;
	size_t i;
	int pass, sizes = argc == 3 && !strcmp(argv[1], "--sizes"), groups = argc == 3 && !strcmp(argv[1], "--groups");

	if (sizes || groups) {
		argv++;
		argc--;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: test-tool analyze [--sizes|--groups] DIR (with a results.jsonl)\n");
		return 2;
	}
	rstore_init(&st);
	if (rstore_load(&st, argv[1], NULL, NULL)) {
		fprintf(stderr, "test-tool analyze: cannot read %s/results.jsonl\n", argv[1]);
		rstore_release(&st);
		return 2;
	}
	if (groups) {
		groups_print(&st);
		rstore_release(&st);
		return 0;
	}
	sus = analyze_suspects_retest(&st, ANALYZE_LOW_FRAC, NULL, &nc);
	for (pass = 0; pass < 2; pass++)
		json_array_foreach(pass ? nc : sus, i, s) {
			const char *rs = json_string_value(json_object_get(json_object_get(s, "retest"), "status"));

			printf("%s%s %s %s %lld %s %s", pass ? "unconfirmed " : "",
			       json_string_value(json_object_get(s, "kind")),
			       json_string_value(json_object_get(s, "phase")),
			       json_string_value(json_object_get(s, "test")),
			       (long long)json_integer_value(json_object_get(s, "rail")),
			       json_string_value(json_object_get(s, "node")) ? json_string_value(json_object_get(s, "node")) : "-",
			       json_string_value(json_object_get(s, "peer")) ? json_string_value(json_object_get(s, "peer")) : "-");
			if (sizes && json_is_number(json_object_get(s, "msg_size_bytes")))
				printf(" @%.0f", json_number_value(json_object_get(s, "msg_size_bytes")));
			if (json_array_size(json_object_get(s, "sizes")) > 1)
				printf(" sizes=%zu", json_array_size(json_object_get(s, "sizes")));
			if (rs && strcmp(rs, "not-retested"))	/* a re-test judged it */
				printf(" %s: %s", rs, json_string_value(json_object_get(s, "confirmation")));
			else if (rs && json_object_get(json_object_get(s, "retest"), "why"))
				printf(" not-retested: %s", json_string_value(json_object_get(s, "confirmation")));
			putchar('\n');
		}
	json_decref(sus);
	json_decref(nc);
	rstore_release(&st);
	return 0;
}

/* test-tool groups DIR: the lane groups of the run's analysis (store: every
 * size) and of the report (the largest size of each lane), one line each:
 * "store|report PHASE TEST RAIL PLANE SIZE N" */
static int groups_cmd(int argc, const char **argv)
{
	struct rstore st;
	struct rrun run;
	size_t i;
	int k;

	if (argc != 2) {
		fprintf(stderr, "usage: test-tool groups DIR (with a results.jsonl)\n");
		return 2;
	}
	rstore_init(&st);
	if (rstore_load(&st, argv[1], NULL, NULL)) {
		fprintf(stderr, "test-tool groups: cannot read %s/results.jsonl\n", argv[1]);
		rstore_release(&st);
		return 2;
	}
	for (i = 0; i < st.ng; i++)
		printf("store %s %s %d %d %.0f %zu\n", rstore_str(&st, st.g[i].phase),
		       st.g[i].test == RSTORE_BW ? "bw" : "lat", st.g[i].rail, st.g[i].plane, st.g[i].size, st.g[i].n);
	rstore_release(&st);
	memset(&run, 0, sizeof(run));
	if (report_load_run(&run, argv[1])) {
		report_free_run(&run);
		return 2;
	}
	for (k = 0; k < run.ng; k++)
		printf("report %s %s %d %d %.0f %d\n", run.g[k].phase, run.g[k].test, run.g[k].rail, run.g[k].plane,
		       run.g[k].size, run.g[k].n);
	report_free_run(&run);
	return 0;
}

int tool_plan(int argc, const char **argv)
{
	if (!strcmp(argv[0], "groups"))
		return groups_cmd(argc, argv);
	if (!strcmp(argv[0], "plan-pairs"))
		return plan_pairs(argc, argv);
	if (!strcmp(argv[0], "plan-parse"))
		return plan_parse_cmd(argc, argv);
	return analyze_cmd(argc, argv);
}
