/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool polar: probes/polar.c
 *
 *   polar cdf K P U            P(U <= u) for K flows on P paths under uniform hashing
 *   polar moments K P          mean and standard deviation of the occupied paths
 *   polar analyze P C <rates   one "ENTROPY GBPS" per line; prints every flow's sharing and
 *                              group, then "used U expected E sd S p P polarized 0|1 groups G
 *                              all N jain J inconclusive 0|1 cause NAME verdict WORD", then the
 *                              verdict's line
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../probes/polar.h"
#include "test-tool.h"

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
	if (argc == 4 && !strcmp(argv[1], "analyze")) {
		struct polar_flow f[1024];
		struct polar_result r;
		int n = 0, i, grp[1024], ng;
		char verdict[512];

		while (n < 1024 && scanf("%d %lf", &f[n].entropy, &f[n].gbps) == 2)
			n++;
		polar_analyze(f, n, atoi(argv[2]), atof(argv[3]), &r);
		ng = polar_groups(f, n, r.capacity, grp);
		for (i = 0; i < n; i++)
			printf("%d %d %d\n", f[i].entropy, f[i].k, grp[i]);
		polar_verdict(&r, verdict, sizeof(verdict));
		printf("used %.2f expected %.2f sd %.2f p %.3g polarized %d groups %d all %d jain %.3f "
		       "inconclusive %d cause %s verdict %s\n", r.used, r.expected, r.sd, r.p_value, r.polarized, ng,
		       r.flows_for_all, r.jain, r.inconclusive, *polar_cause_name(r.cause) ? polar_cause_name(r.cause) : "-",
		       polar_verdict_word(&r));
		printf("%s\n", verdict);
		return 0;
	}
	fprintf(stderr, "usage: test-tool polar cdf K P U | moments K P | analyze P C <rates\n");
	return 2;
}
