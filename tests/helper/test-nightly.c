/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool nightly: a results directory shaped like a real nightly run, for
 * the scale of the suspects analysis (records/analyze.c) and of `fabscope
 * report` (tests/t1230-report-scale.t, bench/scale-bench.sh).
 *
 *   nightly DIR -n NODES [--seed S] [--night K] [--no-faults] [--topology FILE]
 *
 * NODES (16 or more) x 8 rails: a permutation phase of bw (8 rounds, every
 * node sends to one other on every rail), a permutation phase of lat (one
 * round), a ping phase: 73 records a node.  Nodes are on leaves of 64 (leaf=,
 * pod= in the hostfile and run.json's nodes; 16 leaves a pod).  Each record is a real one of a
 * `make demo` run (below, as it wrote it) with its node, peer, rail, address,
 * port, time, job key and measured values varied; run.json is shaped as
 * `fabscope run` writes it (hostfile, plan, nodes, agents, phases).
 *
 * --night K: the run of K days after the first (2026-12-04 01:00 UTC): its start time, its
 * records' times and its run id moved so (the history's tests and bench/history-bench.sh).
 *
 * --topology FILE writes the night's intended fabric (fabscope-topology(5)),
 * for `report --topology`: a leaf a scalable unit (64 nodes) and rail,
 * suNNN.R, taking the nodes' ports railR; NIGHT_SPINES spines spK, every
 * leaf cabled to every one; 400G everywhere (the lanes' levels are 380-390
 * Gb/s).  A 1:1 leaf-spine, as bench/model-bench.sh times the model on.
 *
 * Planted faults, one suspect each (on seven different rails, the nodes
 * drawn from the seed), printed on stdout one a line as "KIND PHASE TEST RAIL
 * NODE PEER" (as test-tool analyze prints suspects; "-" for none):
 *   1, 2  a slow NIC: every bw result through a node on one rail (0.2x, 0.3x)
 *   3, 4  a slow path: one bw result of a pair in one round (0.3x, 0.35x)
 *   5     a slow rail: every bw result on it (0.4x)
 *   6     a high-latency pair: one lat result (3x)
 *   7     a high-latency node: both lat results through a node on one rail (4x)
 * The rest is noise within +-2 % (bw) and +-5 % (lat) of a lane's level, so
 * that nothing else is a suspect.  Deterministic: the same NODES and seed
 * make the same bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../../core/error.h"
#include "test-tool.h"

#define NRAILS 8
#define BW_ROUNDS 8
#define NODES_PER_LEAF 64
#define LEAVES_PER_POD 16
#define NIGHT_SPINES 64
#define T0 1796346000	/* 2026-12-04T01:00:00Z */

/* Real records of a `make demo` run (/tmp/base/demo/run/results.jsonl). */
static const char bw_template[] =
	"{\"schema\":\"fabscope.record/1\",\"tool\":\"fabscope\",\"version\":\"0.1.0\",\"time\":\"2026-12-03T15:55:01.739Z\","
	"\"test\":\"bw\",\"transport\":\"tcp\",\"op\":\"write\",\"msg_size_bytes\":65536,\"flows\":1,\"dir\":\"c2s\","
	"\"src\":{\"node\":\"h2\",\"ip\":\"10.100.1.2\",\"port\":37171,\"rail\":0,\"plane\":0},"
	"\"dst\":{\"node\":\"h3\",\"ip\":\"10.100.2.3\",\"rail\":0,\"plane\":0},\"labels\":{\"demo\":\"1\",\"lb\":\"ecmp\"},"
	"\"params\":{\"iters\":0,\"duration_s\":1.5,\"warmup_iters\":0,\"warmup_s\":0.14999999999999999,\"tx_depth\":128,"
	"\"cq_mod\":32,\"post_list\":1,\"poll\":\"event\",\"bidir\":false,\"tclass\":null,\"sport\":null,\"inflight_msgs\":128},"
	"\"status\":\"ok\",\"scope\":\"aggregate\",\"metrics\":{\"bw_gbps\":0.18975179089319796,"
	"\"msg_rate_mpps\":0.0003619228189338645,\"bytes\":35127296,\"msgs\":536,\"duration_s\":1.4809787389999998},"
	"\"run\":\"20261203-155459-ab08be\",\"phase\":\"pairwise-bw\",\"kind\":\"pairwise\",\"round\":1,"
	"\"job\":\"pairwise-bw/bw/r1/rail0/h2>h3\"}";
static const char lat_template[] =
	"{\"schema\":\"fabscope.record/1\",\"tool\":\"fabscope\",\"version\":\"0.1.0\",\"time\":\"2026-12-03T15:55:16.091Z\","
	"\"test\":\"lat\",\"transport\":\"tcp\",\"op\":\"send\",\"msg_size_bytes\":64,\"flows\":1,\"dir\":\"c2s\","
	"\"src\":{\"node\":\"h1\",\"ip\":\"10.100.1.1\",\"port\":46435,\"rail\":0,\"plane\":0},"
	"\"dst\":{\"node\":\"h4\",\"ip\":\"10.100.2.4\",\"port\":33573,\"rail\":0,\"plane\":0},\"labels\":{\"demo\":\"1\",\"lb\":\"ecmp\"},"
	"\"params\":{\"iters\":0,\"duration_s\":0.5,\"warmup_iters\":0,\"warmup_s\":0.050000000000000003,\"tx_depth\":128,"
	"\"cq_mod\":32,\"post_list\":1,\"poll\":\"event\",\"bidir\":false,\"tclass\":null,\"sport\":null},"
	"\"status\":\"ok\",\"scope\":\"aggregate\",\"metrics\":{\"lat_us\":{\"min\":14.803000000000001,\"p50\":17.439499999999999,"
	"\"p90\":17.759499999999999,\"p99\":28.831499999999998,\"p999\":63.935499999999998,\"max\":1447.1510000000001,"
	"\"avg\":18.243212012583303,\"stdev\":13.966182305228084},\"iters\":13669},\"run\":\"20261203-155459-ab08be\","
	"\"phase\":\"pairwise-lat\",\"kind\":\"pairwise\",\"round\":1,\"job\":\"pairwise-lat/lat/r1/rail0/h1>h4\"}";
static const char ping_template[] =
	"{\"schema\":\"fabscope.record/1\",\"tool\":\"fabscope\",\"version\":\"0.1.0\",\"time\":\"2026-12-03T15:55:28.873Z\","
	"\"test\":\"ping\",\"transport\":\"control\",\"metrics\":{\"rtt_us\":263.56900000000002},\"status\":\"ok\","
	"\"labels\":{\"demo\":\"1\",\"lb\":\"ecmp\"},\"run\":\"20261203-155459-ab08be\",\"phase\":\"ping\",\"kind\":\"ping\","
	"\"round\":1,\"job\":\"ping/ping/r1/rail0/h1\",\"src\":{\"node\":\"h1\",\"ip\":\"10.100.1.1\",\"rail\":0,\"plane\":0}}";

static const char plan_text[] =
	"# nightly: every rail, 8 permutations of bw, one of latency, a ping\n[global]\nhostfile = hosts\n"
	"timeout = 30\nlabel = night=1\n\n[perm-bw]\nkind = permutation\ntest = bw\nsize = 64K\n"
	"duration = 1.5\ncount = 8\n\n[perm-lat]\nkind = permutation\ntest = lat\nsize = 64\n"
	"duration = 0.5\ncount = 1\n\n[ping]\nkind = ping\n";

struct night {
	int n;			/* nodes */
	uint64_t rng;
	int faults;
	const char *topology;	/* --topology FILE, or NULL */
	char run_id[64];
	long night;		/* --night K: days after T0 */
	double t;		/* seconds since T0 of the record being written */
	/* the faults: nodes, rails, rounds */
	int nic[2], nic_rail[2];
	int path_src[2], path_round[2], path_rail[2];
	int slow_rail;
	int latpair_src, latpair_rail, latnode, latnode_rail;
	int *perm[BW_ROUNDS + 1];	/* round r: node i sends to perm[r][i]; the last: lat */
	double level[NRAILS];		/* the lane's bw level */
	json_t *bw, *lat, *ping;
};

static uint64_t next(struct night *g)
{
	return tool_rand(&g->rng);
}

static double uni(struct night *g)	/* [0, 1) */
{
	return (double)(next(g) >> 11) / 9007199254740992.0;
}

static int below(struct night *g, int n)
{
	return (int)(next(g) % (uint64_t)n);
}

/* A permutation without fixed points (a shuffle, then each fixed point swapped with its neighbour). */
static void derange(struct night *g, int *p)
{
	int i;

	for (i = 0; i < g->n; i++)
		p[i] = i;
	for (i = g->n - 1; i > 0; i--) {
		int j = below(g, i + 1), t = p[i];

		p[i] = p[j];
		p[j] = t;
	}
	for (i = 0; i < g->n; i++)
		if (p[i] == i) {
			int j = (i + 1) % g->n, t = p[i];

			p[i] = p[j];
			p[j] = t;
		}
}

static void node_name(int i, char *buf, size_t len)
{
	snprintf(buf, len, "gpu%05d", i + 1);
}

/* its leaf (64 nodes a leaf of each rail: a scalable unit) and pod (16 leaves) */
static void node_leaf(int i, char *leaf, size_t llen, char *pod, size_t plen)
{
	snprintf(leaf, llen, "su%03d", i / NODES_PER_LEAF + 1);
	snprintf(pod, plen, "pod%02d", i / (NODES_PER_LEAF * LEAVES_PER_POD) + 1);
}

static void node_ip(int i, int rail, char *buf, size_t len)
{
	snprintf(buf, len, "10.%d.%d.%d", 100 + rail, i / 250, i % 250 + 1);
}

static void set_time(struct night *g, json_t *rec)
{
	time_t s = T0 + g->night * 86400 + (time_t)g->t;
	struct tm tm;
	char buf[64];

	gmtime_r(&s, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ".%03dZ", (int)((g->t - (double)(long)g->t) * 1000));
	json_object_set_new(rec, "time", json_string(buf));
}

/* src/dst endpoint of a record: node, address, rail (and a port when with_port) */
static void set_ep(struct night *g, json_t *ep, int node, int rail, int with_port)
{
	char buf[64];

	node_name(node, buf, sizeof(buf));
	json_object_set_new(ep, "node", json_string(buf));
	node_ip(node, rail, buf, sizeof(buf));
	json_object_set_new(ep, "ip", json_string(buf));
	if (with_port)
		json_object_set_new(ep, "port", json_integer(32768 + below(g, 28000)));
	json_object_set_new(ep, "rail", json_integer(rail));
}

static void set_job(struct night *g, json_t *rec, const char *phase, const char *test, int round, int rail,
		    int a, int b)
{
	char job[160], na[32], nb[32];

	node_name(a, na, sizeof(na));
	if (b >= 0) {
		node_name(b, nb, sizeof(nb));
		snprintf(job, sizeof(job), "%s/%s/r%d/rail%d/%s>%s", phase, test, round, rail, na, nb);
	} else {
		snprintf(job, sizeof(job), "%s/%s/r%d/rail%d/%s", phase, test, round, rail, na);
	}
	json_object_set_new(rec, "run", json_string(g->run_id));
	json_object_set_new(rec, "phase", json_string(phase));
	json_object_set_new(rec, "kind", json_string(!strcmp(phase, "ping") ? "ping" : "permutation"));
	json_object_set_new(rec, "round", json_integer(round));
	json_object_set_new(rec, "job", json_string(job));
}

static int put(FILE *f, json_t *rec)
{
	if (json_dumpf(rec, f, JSON_COMPACT | JSON_PRESERVE_ORDER) || fputc('\n', f) == EOF)
		return -1;
	return 0;
}

/* The bw factor of a's result to b on rail in round r (1 when no fault). */
static double bw_fault(const struct night *g, int r, int rail, int a, int b)
{
	double f = 1;
	int k;

	if (!g->faults)
		return 1;
	for (k = 0; k < 2; k++) {
		if (rail == g->nic_rail[k] && (a == g->nic[k] || b == g->nic[k]))
			f *= k ? 0.3 : 0.2;
		if (rail == g->path_rail[k] && r == g->path_round[k] && a == g->path_src[k])
			f *= k ? 0.35 : 0.3;
	}
	if (rail == g->slow_rail)
		f *= 0.4;
	return f;
}

static int write_bw(struct night *g, FILE *f, int r, int rail, int a)
{
	json_t *m = json_object_get(g->bw, "metrics");
	int b = g->perm[r - 1][a];
	double dur = 1.48 + 0.01 * uni(g), bw = g->level[rail] * (0.98 + 0.04 * uni(g)) * bw_fault(g, r, rail, a, b);
	double bytes = bw * 1e9 / 8 * dur;
	long msgs = (long)(bytes / 65536);

	set_time(g, g->bw);
	set_ep(g, json_object_get(g->bw, "src"), a, rail, 1);
	set_ep(g, json_object_get(g->bw, "dst"), b, rail, 0);
	json_object_set_new(m, "bw_gbps", json_real(bw));
	json_object_set_new(m, "msg_rate_mpps", json_real((double)msgs / dur / 1e6));
	json_object_set_new(m, "bytes", json_integer((json_int_t)msgs * 65536));
	json_object_set_new(m, "msgs", json_integer(msgs));
	json_object_set_new(m, "duration_s", json_real(dur));
	set_job(g, g->bw, "perm-bw", "bw", r, rail, a, b);
	return put(f, g->bw);
}

static int write_lat(struct night *g, FILE *f, int rail, int a)
{
	static const char *const keys[] = { "min", "p50", "p90", "p99", "p999", "max", "avg", "stdev" };
	static const double ratio[] = { 0.85, 1, 1.02, 1.65, 3.67, 83, 1.046, 0.8 };
	json_t *m = json_object_get(g->lat, "metrics"), *l = json_object_get(m, "lat_us");
	int b = g->perm[BW_ROUNDS][a], k;
	double p50 = 3.1 * (0.95 + 0.1 * uni(g));

	if (g->faults && ((rail == g->latpair_rail && a == g->latpair_src) ||
			  (rail == g->latnode_rail && (a == g->latnode || b == g->latnode))))
		p50 *= rail == g->latnode_rail ? 4 : 3;
	set_time(g, g->lat);
	set_ep(g, json_object_get(g->lat, "src"), a, rail, 1);
	set_ep(g, json_object_get(g->lat, "dst"), b, rail, 1);
	for (k = 0; k < 8; k++)
		json_object_set_new(l, keys[k], json_real(p50 * ratio[k] * (k == 1 ? 1 : 0.97 + 0.06 * uni(g))));
	json_object_set_new(m, "iters", json_integer((json_int_t)(0.5e6 / p50 * 0.9)));
	set_job(g, g->lat, "perm-lat", "lat", 1, rail, a, b);
	return put(f, g->lat);
}

static int write_ping(struct night *g, FILE *f, int a)
{
	set_time(g, g->ping);
	json_object_set_new(json_object_get(g->ping, "metrics"), "rtt_us", json_real(180 + 120 * uni(g)));
	set_ep(g, json_object_get(g->ping, "src"), a, 0, 0);
	set_job(g, g->ping, "ping", "ping", 1, 0, a, -1);
	return put(f, g->ping);
}

static int write_results(struct night *g, const char *dir)
{
	char path[4096];
	FILE *f;
	int r, rail, a, rc = 0;

	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	if (!(f = fopen(path, "w")))
		return -fs_err_env("cannot write %s: %s", path, strerror(errno));
	for (r = 1; r <= BW_ROUNDS && !rc; r++, g->t += 2.1)
		for (rail = 0; rail < NRAILS && !rc; rail++)
			for (a = 0; a < g->n && !rc; a++)
				rc = write_bw(g, f, r, rail, a);
	for (rail = 0; rail < NRAILS && !rc; rail++, g->t += 0.7)
		for (a = 0; a < g->n && !rc; a++)
			rc = write_lat(g, f, rail, a);
	for (a = 0; a < g->n && !rc; a++)
		rc = write_ping(g, f, a);
	if (fclose(f) || rc)
		return -fs_err_env("cannot write %s", path);
	return 0;
}

static json_t *run_nodes(struct night *g, json_t **agents, char **hosts)
{
	json_t *nodes = json_array();
	size_t cap = (size_t)g->n * (80 + NRAILS * 20) + 256, len = 0;
	int i, rail;

	*agents = json_array();
	*hosts = malloc(cap);
	len += (size_t)snprintf(*hosts, cap, "# nightly fabric: %d nodes x %d rails\n", g->n, NRAILS);
	for (i = 0; i < g->n; i++) {
		json_t *eps = json_array();
		char name[32], ip[32], leaf[16], pod[16];

		node_name(i, name, sizeof(name));
		node_leaf(i, leaf, sizeof(leaf), pod, sizeof(pod));
		len += (size_t)snprintf(*hosts + len, cap - len, "%s", name);
		for (rail = 0; rail < NRAILS; rail++) {
			node_ip(i, rail, ip, sizeof(ip));
			json_array_append_new(eps, json_pack("{si,si,ss}", "rail", rail, "plane", 0, "ip", ip));
			len += (size_t)snprintf(*hosts + len, cap - len, " rail%d=%s", rail, ip);
		}
		len += (size_t)snprintf(*hosts + len, cap - len, " leaf=%s pod=%s\n", leaf, pod);
		json_array_append_new(nodes, json_pack("{ss,so,ss,sn,ss,ss}", "name", name, "endpoints", eps,
						       "status", "ok", "why", "leaf", leaf, "pod", pod));
		json_array_append_new(*agents, json_pack("{ss,ss,si,ss,ss,sf}", "node", name, "host", name,
			"pid", 4000 + below(g, 60000), "version", "0.1.0", "from", name, "joined_s",
			0.5 + 2 * uni(g)));
	}
	return nodes;
}

static int write_run(struct night *g, const char *dir)
{
	char path[4096], started[32], finished[32], *hosts, *text;
	json_t *agents, *nodes = run_nodes(g, &agents, &hosts), *run;
	time_t t0 = T0 + g->night * 86400, t1 = t0 + (time_t)g->t + 1;
	struct tm tm;
	FILE *f;
	int rc = 0;

	strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%S.000Z", gmtime_r(&t0, &tm));
	strftime(finished, sizeof(finished), "%Y-%m-%dT%H:%M:%S.000Z", gmtime_r(&t1, &tm));
	snprintf(path, sizeof(path), "%s/run.json", dir);
	run = json_pack("{ss,ss,ss,ss,ss,s{ss,ss},s{ss,ss},s{ss,ss,sn,sn,sn,sn,sn,sf,sf},s{ss,ss},so,"
			"s[{ss,ss,si,sf,ss}{ss,ss,si,sf,ss}{ss,ss,si,sf,ss}],so,sf}",
		"schema", "fabscope.run/1", "id", g->run_id, "version", "0.1.0", "started", started,
		"status", "finished",
		"plan", "path", "/etc/fabscope/nightly.ini", "text", plan_text,
		"hostfile", "path", "/etc/fabscope/hosts", "text", hosts,
		"options", "launcher", "ssh", "token_file", "/etc/fabscope/token", "ssh", "launcher_args",
		"agent_cmd", "listen", "nodes", "agent_timeout", 10.0, "join_timeout", 300.0,
		"labels", "night", "1", "lb", "ecmp",
		"agents", agents,
		"phases", "name", "perm-bw", "kind", "permutation", "rounds", BW_ROUNDS, "seconds", 2.1 * BW_ROUNDS,
		"status", "done", "name", "perm-lat", "kind", "permutation", "rounds", 1, "seconds", 0.7 * NRAILS,
		"status", "done", "name", "ping", "kind", "ping", "rounds", 1, "seconds", 0.2, "status", "done",
		"nodes", nodes, "join_seconds", 2.6);
	free(hosts);
	json_object_set_new(run, "suspects", json_array());
	json_object_set_new(run, "not_confirmed", json_array());
	json_object_set_new(run, "retest", json_pack("{ss}", "off", "--no-retest"));
	json_object_set_new(run, "finished", json_string(finished));
	json_object_set_new(run, "failed_jobs", json_integer(0));
	json_object_set_new(run, "wrong_records", json_integer(0));
	json_object_set_new(run, "missing_agents", json_integer(0));
	text = json_dumps(run, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(run);
	if (!text || !(f = fopen(path, "w")))
		rc = -fs_err_env("cannot write %s", path);
	else if (fputs(text, f) == EOF || fputc('\n', f) == EOF || fclose(f))
		rc = -fs_err_env("cannot write %s", path);
	free(text);
	return rc;
}

/* Distinct nodes for the faults, rails from a shuffle, and the permutations. */
static void plan_night(struct night *g)
{
	int rails[NRAILS], used[8], i, j, nu = 0;

	for (i = 0; i < NRAILS; i++) {
		rails[i] = i;
		g->level[i] = 380 + 10 * uni(g);
	}
	for (i = NRAILS - 1; i > 0; i--) {
		int t = rails[i];

		j = below(g, i + 1);
		rails[i] = rails[j];
		rails[j] = t;
	}
	for (i = 0; i < 6; i++) {	/* nic[0], nic[1], path_src[0], path_src[1], latpair_src, latnode */
		do {
			used[nu] = below(g, g->n);
			for (j = 0; j < nu && used[j] != used[nu]; j++)
				;
		} while (j < nu);
		nu++;
	}
	g->nic[0] = used[0], g->nic[1] = used[1];
	g->path_src[0] = used[2], g->path_src[1] = used[3];
	g->latpair_src = used[4], g->latnode = used[5];
	g->nic_rail[0] = rails[0], g->nic_rail[1] = rails[1];
	g->path_rail[0] = rails[2], g->path_rail[1] = rails[3];
	g->slow_rail = rails[4];
	g->latpair_rail = rails[5], g->latnode_rail = rails[6];
	g->path_round[0] = 1 + below(g, BW_ROUNDS), g->path_round[1] = 1 + below(g, BW_ROUNDS);
	for (i = 0; i <= BW_ROUNDS; i++) {
		g->perm[i] = malloc((size_t)g->n * sizeof(int));
		derange(g, g->perm[i]);
	}
}

static void print_faults(const struct night *g)
{
	char a[32], b[32];
	int k;

	if (!g->faults)
		return;
	for (k = 0; k < 2; k++) {
		node_name(g->nic[k], a, sizeof(a));
		printf("node perm-bw bw %d %s -\n", g->nic_rail[k], a);
	}
	for (k = 0; k < 2; k++) {
		node_name(g->path_src[k], a, sizeof(a));
		node_name(g->perm[g->path_round[k] - 1][g->path_src[k]], b, sizeof(b));
		printf("pair perm-bw bw %d %s %s\n", g->path_rail[k], a, b);
	}
	printf("lane perm-bw bw %d - -\n", g->slow_rail);
	node_name(g->latpair_src, a, sizeof(a));
	node_name(g->perm[BW_ROUNDS][g->latpair_src], b, sizeof(b));
	printf("pair perm-lat lat %d %s %s\n", g->latpair_rail, a, b);
	node_name(g->latnode, a, sizeof(a));
	printf("node perm-lat lat %d %s -\n", g->latnode_rail, a);
}

/* the night's intended fabric (above), to path */
static int write_topology(const struct night *g, const char *path)
{
	FILE *f = fopen(path, "w");
	int i, rail, k, leaves = (g->n + NODES_PER_LEAF - 1) / NODES_PER_LEAF;
	char name[32];

	if (!f)
		return fs_err_env("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "# the nightly fabric: %d nodes x %d rails, %d nodes a leaf, %d spines\n", g->n, NRAILS,
		NODES_PER_LEAF, NIGHT_SPINES);
	for (i = 0; i < leaves; i++)
		for (rail = 0; rail < NRAILS; rail++)
			fprintf(f, "switch su%03d.%d tier=leaf rail=%d\n", i + 1, rail, rail);
	for (k = 1; k <= NIGHT_SPINES; k++)
		fprintf(f, "switch sp%d tier=spine\n", k);
	for (i = 0; i < g->n; i++) {
		node_name(i, name, sizeof(name));
		for (rail = 0; rail < NRAILS; rail++)
			fprintf(f, "link %s:rail%d su%03d.%d:p%d rail=%d speed=400G\n", name, rail,
				i / NODES_PER_LEAF + 1, rail, i % NODES_PER_LEAF + 1, rail);
	}
	for (i = 0; i < leaves; i++)
		for (rail = 0; rail < NRAILS; rail++)
			for (k = 1; k <= NIGHT_SPINES; k++)
				fprintf(f, "link su%03d.%d:u%d sp%d:d%d speed=400G\n", i + 1, rail, k, k,
					i * NRAILS + rail + 1);
	if (ferror(f) | fclose(f))
		return fs_err_env("cannot write %s: %s", path, strerror(errno));
	return 0;
}

static int parse_args(int argc, const char **argv, struct night *g, const char **dir)
{
	unsigned long v;
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			if ((rc = tool_parse_ulong("-n", argv[++i], 1 << 20, &v)))
				return rc;
			g->n = (int)v;
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			if ((rc = tool_parse_ulong("--seed", argv[++i], 0xffffffffUL, &v)))
				return rc;
			g->rng = v;
		} else if (!strcmp(argv[i], "--night") && i + 1 < argc) {
			if ((rc = tool_parse_ulong("--night", argv[++i], 10000, &v)))
				return rc;
			g->night = (long)v;
		} else if (!strcmp(argv[i], "--no-faults")) {
			g->faults = 0;
		} else if (!strcmp(argv[i], "--topology") && i + 1 < argc) {
			g->topology = argv[++i];
		} else if (argv[i][0] != '-' && !*dir) {
			*dir = argv[i];
		} else {
			return -fs_err_usage("usage: test-tool nightly DIR -n NODES [--seed S] [--night K] [--no-faults] [--topology FILE]");
		}
	}
	if (!*dir || g->n < 16)
		return -fs_err_usage("usage: test-tool nightly DIR -n NODES (16 or more) [--seed S] [--no-faults] [--topology FILE]");
	return 0;
}

int tool_nightly(int argc, const char **argv)
{
	struct night g = { .n = 0, .rng = 1, .faults = 1 };
	const char *dir = NULL;
	int rc, i;

	if ((rc = parse_args(argc, argv, &g, &dir)))
		return -rc;
	{
		time_t t0 = T0 + g.night * 86400;
		struct tm tm;
		char day[16];

		strftime(day, sizeof(day), "%Y%m%d", gmtime_r(&t0, &tm));
		snprintf(g.run_id, sizeof(g.run_id), "%s-010000-%06" PRIx64, day, g.rng & 0xffffff);
	}
	if (mkdir(dir, 0777) && errno != EEXIST)
		return fs_err_env("cannot make %s: %s", dir, strerror(errno));
	g.bw = json_loads(bw_template, 0, NULL);
	g.lat = json_loads(lat_template, 0, NULL);
	g.ping = json_loads(ping_template, 0, NULL);
	for (i = 0; i < 3; i++)	/* the plan's labels, as on every record */
		json_object_set_new(i ? i > 1 ? g.ping : g.lat : g.bw, "labels",
				    json_pack("{ss,ss}", "night", "1", "lb", "ecmp"));
	plan_night(&g);
	rc = write_results(&g, dir);
	if (!rc)
		rc = write_run(&g, dir);
	if (!rc && g.topology)
		rc = write_topology(&g, g.topology);
	if (!rc)
		print_faults(&g);
	for (i = 0; i <= BW_ROUNDS; i++)
		free(g.perm[i]);
	json_decref(g.bw);
	json_decref(g.lat);
	json_decref(g.ping);
	return -rc;
}
