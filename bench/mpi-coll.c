/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi-coll: Open MPI's own MPI_Allreduce and MPI_Alltoall, measured the way
 * nccl-tests measures NCCL's, as the peer bench/coll-bench.sh compares
 * `fabscope allreduce|alltoall` against.  Not part of fabscope: the script
 * builds it with mpicc into a scratch folder.
 *
 *   mpi-coll allreduce|alltoall [-b MIN] [-e MAX] [-f FACTOR] [-w WARMUP] [-i ITERS]
 *
 * Sizes take K, M, G suffixes (powers of 1024); sizes MIN, MIN*FACTOR, ...
 * up to MAX.  float32 throughout:
 *   allreduce  MPI_Allreduce(MPI_SUM), out of place, count = size / 4
 *   alltoall   MPI_Alltoall, size is a rank's whole send buffer, each peer
 *              gets count = size / 4 / nranks floats; a size that does not
 *              divide is rounded down (as nccl-tests does), and the rounded
 *              size is the one reported; a size under 4 * nranks is skipped
 * Per size: one call whose result is checked (send buffers hold small
 * integers, so every sum is exact; "wrong" counts the elements that differ,
 * summed over ranks), WARMUP untimed calls, MPI_Barrier, then ITERS calls
 * back to back.  time_us is the elapsed time / ITERS, averaged over ranks
 * (nccl-tests' default); algbw = size / time; busbw = algbw * 2(n-1)/n for
 * allreduce, algbw * (n-1)/n for alltoall.  Rank 0 prints one JSON object a
 * line per size, rates in Gbit/s (10^9 bit/s):
 *   {"op":"allreduce","size":S,"count":C,"ranks":n,"time_us":T,
 *    "algbw_gbps":A,"busbw_gbps":B,"wrong":W}
 * count is the allreduce's element count, the per-peer count for alltoall.
 *
 * Exit codes: 0 ok (also with wrong elements: the record says so), 2 usage,
 * 3 out of memory.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <mpi.h>

enum coll_op { OP_ALLREDUCE, OP_ALLTOALL };

struct coll_opts {
	enum coll_op op;
	const char *name;
	uint64_t min, max, factor;
	long warmup, iters;
};

static int rank, nranks;

#define USAGE "usage: mpi-coll allreduce|alltoall [-b MIN] [-e MAX] [-f FACTOR] [-w WARMUP] [-i ITERS]"

/* "64M" -> 67108864; K, M, G are powers of 1024; -1 on anything else */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_long(const char *s, long lo, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo)
		return -1;
	*out = v;
	return 0;
}

static int usage_error(const char *fmt, const char *arg)
{
	if (rank == 0) {
		fprintf(stderr, "mpi-coll: ");
		fprintf(stderr, fmt, arg);
		fprintf(stderr, " (%s)\n", USAGE);
	}
	return -1;
}

static int parse_opts(int argc, char **argv, struct coll_opts *o)
{
	int c;

	o->min = 1 << 20;
	o->max = 64 << 20;
	o->factor = 2;
	o->warmup = 2;
	o->iters = 5;
	while ((c = getopt(argc, argv, "b:e:f:w:i:h")) != -1) {
		switch (c) {
		case 'b':
			if (parse_size(optarg, &o->min) || !o->min)
				return usage_error("bad size '%s' for -b", optarg);
			break;
		case 'e':
			if (parse_size(optarg, &o->max) || !o->max)
				return usage_error("bad size '%s' for -e", optarg);
			break;
		case 'f':
			if (parse_size(optarg, &o->factor) || o->factor < 2)
				return usage_error("bad factor '%s' for -f (want 2 or more)", optarg);
			break;
		case 'w':
			if (parse_long(optarg, 0, &o->warmup))
				return usage_error("bad warm-up count '%s' for -w", optarg);
			break;
		case 'i':
			if (parse_long(optarg, 1, &o->iters))
				return usage_error("bad iteration count '%s' for -i (want 1 or more)", optarg);
			break;
		default:
			return usage_error("%s", "bad option");
		}
	}
	if (optind != argc - 1)
		return usage_error("%s", "want one operation");
	o->name = argv[optind];
	if (!strcmp(o->name, "allreduce"))
		o->op = OP_ALLREDUCE;
	else if (!strcmp(o->name, "alltoall"))
		o->op = OP_ALLTOALL;
	else
		return usage_error("unknown operation '%s'", o->name);
	if (o->min > o->max)
		return usage_error("%s", "-b is larger than -e");
	return 0;
}

/* what rank r sends at element i (of the whole buffer): 0..12, so sums over
 * up to a million ranks stay exact in float32 (below 2^24); it depends on
 * i only through i % FILL_PERIOD */
#define FILL_PERIOD 13
static float fill_value(int r, uint64_t i)
{
	return (float)(((uint64_t)r * 7 + i) % FILL_PERIOD);
}

static void fill(float *send, uint64_t count)
{
	uint64_t i;

	for (i = 0; i < count; i++)
		send[i] = fill_value(rank, i);
}

/* elements of recv that differ from what the operation must give */
static int64_t check(const struct coll_opts *o, const float *recv, uint64_t count)
{
	int64_t wrong = 0;
	uint64_t i, j;
	int r;

	if (o->op == OP_ALLREDUCE) {
		float want[FILL_PERIOD] = { 0 };

		for (i = 0; i < FILL_PERIOD; i++)
			for (r = 0; r < nranks; r++)
				want[i] += fill_value(r, i);
		for (i = 0; i < count; i++)
			wrong += recv[i] != want[i % FILL_PERIOD];
		return wrong;
	}
	/* alltoall: block r of recv is block `rank` of rank r's send buffer */
	for (r = 0; r < nranks; r++)
		for (j = 0; j < count; j++) {
			i = (uint64_t)rank * count + j;
			wrong += recv[(uint64_t)r * count + j] != fill_value(r, i);
		}
	return wrong;
}

static void call(const struct coll_opts *o, const float *send, float *recv, uint64_t count)
{
	if (o->op == OP_ALLREDUCE)
		MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	else
		MPI_Alltoall(send, (int)count, MPI_FLOAT, recv, (int)count, MPI_FLOAT, MPI_COMM_WORLD);
}

static void print_record(const struct coll_opts *o, uint64_t size, uint64_t count,
			 double time_s, int64_t wrong)
{
	double algbw = (double)size * 8 / 1e9 / time_s;
	double factor = o->op == OP_ALLREDUCE ? 2.0 * (nranks - 1) / nranks
					      : (double)(nranks - 1) / nranks;
	json_t *rec = json_pack("{s:s, s:I, s:I, s:i, s:f, s:f, s:f, s:I}",
				"op", o->name, "size", (json_int_t)size, "count", (json_int_t)count,
				"ranks", nranks, "time_us", time_s * 1e6,
				"algbw_gbps", algbw, "busbw_gbps", algbw * factor,
				"wrong", (json_int_t)wrong);

	if (rec) {
		json_dumpf(rec, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8));
		fputc('\n', stdout);
		fflush(stdout);
		json_decref(rec);
	}
}

static void run_size(const struct coll_opts *o, float *send, float *recv, uint64_t size)
{
	uint64_t count, total;	/* count per call; total floats in a buffer */
	int64_t wrong, wrong_all;
	double t0, t, t_sum;
	long k;

	if (o->op == OP_ALLREDUCE) {
		count = size / 4;
		total = count;
	} else {
		count = size / 4 / (uint64_t)nranks;
		total = count * (uint64_t)nranks;
	}
	if (!count)
		return;
	size = total * 4;

	fill(send, total);
	memset(recv, 0xff, total * 4);	/* NaN: never equal to a right answer */
	call(o, send, recv, count);
	wrong = check(o, recv, count);
	MPI_Allreduce(&wrong, &wrong_all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);

	for (k = 0; k < o->warmup; k++)
		call(o, send, recv, count);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (k = 0; k < o->iters; k++)
		call(o, send, recv, count);
	t = (MPI_Wtime() - t0) / (double)o->iters;
	MPI_Allreduce(&t, &t_sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		print_record(o, size, count, t_sum / nranks, wrong_all);
}

int main(int argc, char **argv)
{
	struct coll_opts o;
	float *send, *recv;
	uint64_t size, bytes;
	int ok;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (parse_opts(argc, argv, &o)) {
		MPI_Finalize();
		return 2;
	}
	/* an MPI count is an int */
	if (o.max / 4 > INT32_MAX) {
		usage_error("%s", "-e is too large (at most 8G: MPI counts are ints)");
		MPI_Finalize();
		return 2;
	}
	bytes = o.max / 4 * 4;
	send = malloc(bytes ? bytes : 4);
	recv = malloc(bytes ? bytes : 4);
	ok = send && recv;
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!ok) {
		if (rank == 0)
			fprintf(stderr, "mpi-coll: out of memory for two buffers of %" PRIu64 " bytes\n", bytes);
		free(send);
		free(recv);
		MPI_Finalize();
		return 3;
	}
	for (size = o.min; size <= o.max; size *= o.factor) {
		run_size(&o, send, recv, size);
		if (size > o.max / o.factor)
			break;
	}
	free(send);
	free(recv);
	MPI_Finalize();
	return 0;
}
