/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "clock.h"
#include "error.h"
#include "output.h"
#include "record.h"
#include "units.h"

enum col_kind { COL_INT, COL_REAL, COL_STR, COL_SIZE, COL_FLOW };

struct out_col {
	const char *head;
	const char *path;
	enum col_kind kind;
	int width;
	int prec;
	double scale;	/* multiply numbers by this before printing */
};

/* bw: bandwidth column is chosen at run time (MB/s or Gb/s) */

int out_stdout_errno;

/* fflush, noting standard output's first failure for main (stdio forgets it) */
static void flush(FILE *f)
{
	if (fflush(f) == EOF && f == stdout && !out_stdout_errno)
		out_stdout_errno = errno ? errno : EIO;
}
static const struct out_col bw_cols[] = {
	{ "size", "msg_size_bytes", COL_SIZE, 8, 0, 1 },
	{ "dir", "dir", COL_STR, 5, 0, 1 },
	{ "flow", "flow", COL_FLOW, 5, 0, 1 },
	{ "sport", "src.port", COL_INT, 6, 0, 1 },
	{ "msgs", "metrics.msgs", COL_INT, 11, 0, 1 },
	{ "bytes", "metrics.bytes", COL_INT, 14, 0, 1 },
	{ "secs", "metrics.duration_s", COL_REAL, 7, 3, 1 },
	{ NULL, "metrics.bw_gbps", COL_REAL, 12, 2, 1 },
	{ "rate [Mpps]", "metrics.msg_rate_mpps", COL_REAL, 12, 4, 1 },
	{ NULL }
};

static const struct out_col lat_cols[] = {
	{ "size", "msg_size_bytes", COL_SIZE, 8, 0, 1 },
	{ "iters", "metrics.iters", COL_INT, 9, 0, 1 },
	{ "min", "metrics.lat_us.min", COL_REAL, 9, 2, 1 },
	{ "p50", "metrics.lat_us.p50", COL_REAL, 9, 2, 1 },
	{ "p90", "metrics.lat_us.p90", COL_REAL, 9, 2, 1 },
	{ "p99", "metrics.lat_us.p99", COL_REAL, 9, 2, 1 },
	{ "p99.9", "metrics.lat_us.p999", COL_REAL, 9, 2, 1 },
	{ "max", "metrics.lat_us.max", COL_REAL, 9, 2, 1 },
	{ "avg", "metrics.lat_us.avg", COL_REAL, 9, 2, 1 },
	{ "stdev", "metrics.lat_us.stdev", COL_REAL, 9, 2, 1 },
	{ NULL }
};

/* the collectives: nccl-tests' columns, bandwidth in GB/s as nccl-tests prints it */
static const struct out_col coll_cols[] = {
	{ "size [B]", "msg_size_bytes", COL_INT, 12, 0, 1 },
	{ "count", "count", COL_INT, 12, 0, 1 },
	{ "type", "dtype", COL_STR, 8, 0, 1 },
	{ "redop", "op", COL_STR, 6, 0, 1 },
	{ "group", "group", COL_STR, 7, 0, 1 },
	{ "time [us]", "metrics.time_us", COL_REAL, 11, 1, 1 },
	{ "algbw [GB/s]", "metrics.algbw_gbps", COL_REAL, 13, 3, 0.125 },
	{ "busbw [GB/s]", "metrics.busbw_gbps", COL_REAL, 13, 3, 0.125 },
	{ "#wrong", "metrics.wrong", COL_INT, 7, 0, 1 },
	{ NULL }
};

static const struct {
	const char *test;
	const struct out_col *cols;
	const char *tail;	/* printed after the header row */
} tables[] = {
	{ "bw", bw_cols, NULL },
	{ "lat", lat_cols, "  [us, one-way = round trip / 2]" },
	{ "allreduce", coll_cols, NULL },
	{ "alltoall", coll_cols, NULL },
};

void out_init(struct out *o, enum out_format fmt, FILE *f)
{
	memset(o, 0, sizeof(*o));
	o->fmt = fmt;
	o->f = f;
}

void out_comment(struct out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->fmt != OUT_TEXT)
		return;
	fputs("# ", o->f);
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
	fputc('\n', o->f);
	flush(o->f);
}

static const char *col_head(const struct out *o, const struct out_col *c)
{
	if (c->head)
		return c->head;
	return o->gbits ? "BW [Gb/s]" : "BW [MB/s]";
}

static double col_scale(const struct out *o, const struct out_col *c)
{
	if (!c->head && !o->gbits)	/* Gb/s -> MB/s (10^6 bytes) */
		return 1000.0 / 8.0;
	return c->scale;
}

static void print_cell(struct out *o, const struct out_col *c, json_t *rec)
{
	json_t *v = record_get(rec, c->path);
	char buf[64];

	switch (c->kind) {
	case COL_FLOW:
		if (!strcmp(record_str(rec, "scope", ""), "aggregate"))
			fprintf(o->f, " %*s", c->width, "sum");
		else if (json_is_integer(v))
			fprintf(o->f, " %*lld", c->width, (long long)json_integer_value(v));
		else
			fprintf(o->f, " %*s", c->width, "-");
		return;
	case COL_SIZE:
		if (json_is_integer(v)) {
			units_format_size((uint64_t)json_integer_value(v), buf, sizeof(buf));
			fprintf(o->f, " %*s", c->width, buf);
			return;
		}
		break;
	case COL_INT:
		if (json_is_number(v)) {
			fprintf(o->f, " %*.0f", c->width, json_number_value(v));
			return;
		}
		break;
	case COL_REAL:
		if (json_is_number(v)) {
			fprintf(o->f, " %*.*f", c->width, c->prec,
				json_number_value(v) * col_scale(o, c));
			return;
		}
		break;
	case COL_STR:
		if (json_is_string(v)) {
			fprintf(o->f, " %*s", c->width, json_string_value(v));
			return;
		}
		break;
	}
	fprintf(o->f, " %*s", c->width, "-");
}

static void print_text(struct out *o, json_t *rec)
{
	const char *test = record_str(rec, "test", "?");
	const struct out_col *cols = NULL, *c;
	const char *tail = NULL, *name = NULL;
	size_t i;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (!strcmp(tables[i].test, test)) {
			cols = tables[i].cols;
			tail = tables[i].tail;
			name = tables[i].test;
		}
	if (!strcmp(test, "pfc") || !strcmp(test, "polarization"))
		return;	/* the probes write their own summaries */
	if (!cols) {	/* a test without a table: fall back to its JSON */
		char *s = json_dumps(rec, JSON_COMPACT);

		fprintf(o->f, "%s\n", s ? s : "?");
		free(s);
		return;
	}
	if (!o->last_test || strcmp(o->last_test, test)) {
		for (c = cols; c->path; c++)
			fprintf(o->f, " %*s", c->width, col_head(o, c));
		if (!strcmp(test, "lat") && !strcmp(record_str(rec, "op", ""), "read"))
			tail = "  [us, READ: request to data back, whole]";
		fprintf(o->f, "%s\n", tail ? tail : "");
		o->last_test = name;
	}
	/* one flow: its row would repeat the sum */
	if (!strcmp(record_str(rec, "scope", ""), "flow") &&
	    record_num(rec, "flows", 0) == 1)
		return;
	for (c = cols; c->path; c++)
		print_cell(o, c, rec);
	if (strcmp(record_str(rec, "status", "ok"), "ok"))	/* "error", "cut" */
		fprintf(o->f, "  %s: %s", record_str(rec, "status", "?"), record_str(rec, "error", "?"));
	fputc('\n', o->f);
}

int out_json_file(struct out *o, const char *path)
{
	struct stat st, out;
	int rc;

	o->jpath = path;
	o->jerr = 0;
	o->jmade = 0;
	if (!strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr")) {	/* (links: not followed) */
		int fd = dup(strcmp(path, "/dev/stdout") ? 2 : 1);

		if (fd < 0 || !(o->jf = fdopen(fd, "a"))) {
			if (fd >= 0)
				close(fd);
			return fs_err_env("cannot write '%s': %s", path, strerror(errno));
		}
	} else {	/* a new file, in place at the first record */
		if ((rc = outfile_create(&o->jof, path, 0644)))
			return rc;
		o->jmade = 1;
		if (!(o->jf = outfile_stream(&o->jof))) {
			rc = fs_err_env("cannot write '%s': %s", path, strerror(errno));
			outfile_abort(&o->jof);
			o->jmade = 0;
			return rc;
		}
		if (!o->jof.published && !lstat(path, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
			o->jkeep = 1;	/* (its content stays until ours comes) */
		return 0;
	}
	/* a file with records in it is kept until ours come; not one that is
	 * our standard output too (-o /dev/stdout >file: the table is in it) */
	o->jkeep = !fstat(fileno(o->jf), &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
		   !(!fstat(fileno(o->f), &out) && out.st_dev == st.st_dev && out.st_ino == st.st_ino);
	return 0;
}

static void json_elem(FILE *f, int n, json_t *rec)
{
	char *s = json_dumps(rec, JSON_COMPACT | JSON_REAL_PRECISION(10));

	fputs(n ? ",\n" : "[\n", f);
	fputs(s ? s : "{}", f);
	free(s);
	flush(f);
}

static void json_close(FILE *f, int n)
{
	fputs(n ? "\n]\n" : "[]\n", f);
	flush(f);
}

/* A record as one line of JSON lines (the --output file, as results.jsonl) */
static void json_line(FILE *f, json_t *rec)
{
	char *s = json_dumps(rec, JSON_COMPACT | JSON_REAL_PRECISION(10));

	fputs(s ? s : "{}", f);
	fputc('\n', f);
	free(s);
	flush(f);
}

static int out_sink_fd = -1;

void out_set_sink_fd(int fd)
{
	out_sink_fd = fd;
}

int out_sink_set(void)
{
	return out_sink_fd >= 0;
}

static void sink_line(json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT);
	size_t len, off = 0;

	if (!text)
		return;
	len = strlen(text);
	text[len] = '\n';	/* replaces the NUL: one write of the whole line */
	while (off < len + 1) {
		ssize_t n = write(out_sink_fd, text + off, len + 1 - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(text);
}

void out_sink_event(const char *key, json_t *value)
{
	json_t *o;

	if (out_sink_fd < 0) {
		json_decref(value);
		return;
	}
	o = json_pack("{so}", key, value);
	if (o)
		sink_line(o);
	json_decref(o);
}

static uint64_t out_progress_ns;	/* the last report's time */

int out_progress_due(uint64_t now_ns)
{
	return out_sink_fd >= 0 && now_ns - out_progress_ns >= OUT_PROGRESS_MS * 1000000ull;
}

void out_progress(double bytes, double frac, const char *fmt, ...)
{
	char what[200];
	va_list ap;
	json_t *p;

	if (out_sink_fd < 0)
		return;
	out_progress_ns = clock_ns();
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	p = json_pack("{sf,ss}", "bytes", bytes, "what", what);
	if (p && frac >= 0)
		json_object_set_new(p, "frac", json_real(frac > 1 ? 1 : frac));
	out_sink_event("progress", p);
}

void out_record(struct out *o, json_t *rec)
{
	if (out_sink_fd >= 0)
		sink_line(rec);
	if (o->fmt == OUT_JSON)
		json_elem(o->f, o->nrec, rec);
	else
		print_text(o, rec);
	o->nrec++;
	flush(o->f);
	if (o->jf) {
		if (!o->jn && o->jmade && outfile_publish(&o->jof, 1) && !o->jerr)	/* the last run's records go now */
			o->jerr = -1;	/* (said) */
		else if (!o->jn && !o->jmade && o->jkeep) {	/* /dev/stdout >file */
			int rc = ftruncate(fileno(o->jf), 0);

			(void)rc;	/* it was a plain file when opened */
		}
		errno = 0;
		json_line(o->jf, rec);
		o->jn++;
		if (ferror(o->jf) && !o->jerr)	/* (json_line flushed it) */
			o->jerr = errno ? errno : EIO;
	}
}

int out_finish(struct out *o)
{
	int rc = 0;

	if (o->fmt == OUT_JSON)
		json_close(o->f, o->nrec);
	flush(o->f);	/* (standard output's errors: main's to say) */
	if (o->jf) {
		errno = 0;
		if (ferror(o->jf) && !o->jerr)
			o->jerr = errno ? errno : EIO;
		if (o->jmade && ((!o->jn && o->jkeep) || o->jerr)) {	/* nothing measured: the last run's file stays */
			outfile_abort(&o->jof);
		} else if (o->jmade) {
			if (outfile_commit(&o->jof, 0))
				o->jerr = -1;	/* (said) */
		} else if (fclose(o->jf) && !o->jerr) {
			o->jerr = errno ? errno : EIO;
		}
		o->jf = NULL;
		o->jmade = 0;
		if (o->jerr > 0)	/* what was measured is on standard output still */
			rc = fs_err_env("cannot write '%s': %s", o->jpath ? o->jpath : "the --output file",
					strerror(o->jerr));
		else if (o->jerr)
			rc = -FS_EXIT_ENV;
	}
	return rc;
}
