/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool polar: probes/polar.c and polar-judge.c
 *
 *   polar cdf K P U            P(U <= u) for K flows on P paths under uniform hashing
 *   polar moments K P          mean and standard deviation of the occupied paths
 *   polar analyze P C [H] <rates
 *                              one "ENTROPY GBPS" per line (H: the host's link, Gb/s); prints
 *                              every flow's sharing and group, then "used U expected E sd S p P
 *                              polarized 0|1 groups G all N jain J inconclusive 0|1 cause NAME
 *                              verdict WORD", then the verdict's line
 *   polar traces K P PATHS COMPLETE EXACT
 *                              the traces' verdict for K flows of which COMPLETE were traced,
 *                              PATHS distinct (EXACT 1: named by the design) of P: "verdict
 *                              WORD p P", then why there is none
 *   polar judge [TOPOLOGY] <record
 *                              a polarization record (one JSON object) judged, with the
 *                              design in the file TOPOLOGY; prints the record
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../probes/polar-judge.h"
#include "../../probes/polar.h"
#include "test-tool.h"

static int analyze(int argc, const char **argv)
{
	static struct polar_flow f[1024];
	struct polar_result r;
	int n = 0, i, grp[1024], ng;
	char verdict[1400];

	while (n < 1024 && scanf("%d %lf", &f[n].entropy, &f[n].gbps) == 2)
		n++;
	polar_analyze(f, n, atoi(argv[2]), atof(argv[3]), argc > 4 ? atof(argv[4]) : 0, &r);
	polar_decide(&r, NULL);
	ng = polar_groups(f, n, r.capacity, grp);
	for (i = 0; i < n; i++)
		printf("%d %d %d\n", f[i].entropy, f[i].k, grp[i]);
	polar_verdict(&r, NULL, verdict, sizeof(verdict));
	printf("used %.2f expected %.2f sd %.2f p %.3g polarized %d groups %d all %d jain %.3f "
	       "inconclusive %d cause %s verdict %s\n", r.used, r.expected, r.sd, r.p_value,
	       r.verdict == POLAR_POLARIZED, ng, r.flows_for_all, r.jain, r.verdict == POLAR_INCONCLUSIVE,
	       *polar_cause_name(r.cause) ? polar_cause_name(r.cause) : "-", polar_word(r.verdict));
	printf("%s\n", verdict);
	return 0;
}

static int judge(int argc, const char **argv)
{
	json_error_t e;
	json_t *rec = json_loadf(stdin, 0, &e);
	struct polar_judgment j;
	struct topo t;
	int rc;

	if (!rec) {
		fprintf(stderr, "test-tool polar judge: %s\n", e.text);
		return 1;
	}
	topo_init(&t);
	if (argc > 2 && (rc = topo_read(&t, argv[2], NULL))) {
		json_decref(rec);
		return -rc;
	}
	if (polar_judge_record(rec, argc > 2 ? &t : NULL, &j)) {
		fprintf(stderr, "test-tool polar judge: no flows in the record\n");
		rc = 1;
	} else {
		json_dumpf(rec, stdout, JSON_SORT_KEYS | JSON_COMPACT);
		putchar('\n');
		rc = 0;
	}
	topo_release(&t);
	json_decref(rec);
	return rc;
}

int tool_polar(int argc, const char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "cdf")) {
		printf("%.12g\n", polar_occupancy_cdf(atoi(argv[2]), atoi(argv[3]), atoi(argv[4])));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "moments")) {
		double m, sd;

		polar_occupancy_moments(atoi(argv[2]), atoi(argv[3]), &m, &sd);
		printf("%.9g %.9g\n", m, sd);
		return 0;
	}
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "analyze"))
		return analyze(argc, argv);
	if (argc == 7 && !strcmp(argv[1], "traces")) {
		struct polar_traces t = { .given = 1, .flows = atoi(argv[2]), .possible = atoi(argv[3]),
					  .paths = atoi(argv[4]), .complete = atoi(argv[5]), .exact = atoi(argv[6]) };

		polar_judge_traces(&t, t.flows);
		printf("verdict %s p %.3g\n%s\n", polar_word(t.verdict), t.p_value, t.why);
		return 0;
	}
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "judge"))
		return judge(argc, argv);
	fprintf(stderr, "usage: test-tool polar cdf K P U | moments K P | analyze P C [H] <rates | "
		"traces K P PATHS COMPLETE EXACT | judge [TOPOLOGY] <record\n");
	return 2;
}
