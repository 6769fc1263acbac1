/* SPDX-License-Identifier: BSD-2-Clause */
/* The history's SQLite file: opening, schema and migrations, adding a run (history.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/record.h"
#include "../core/testhook.h"
#include "../records/read.h"
#include "../records/result.h"
#include "../topology/intent.h"
#include "history.h"

/*
 * The schema, version by version: migration[v] takes a file of version v
 * to v + 1 (0: an empty file).  A new version appends its statements here
 * and raises HIST_SCHEMA; nothing already here ever changes.
 */
static const char *const migration[HIST_SCHEMA] = {
	/* 0 -> 1 */
	"CREATE TABLE schema_version(version INTEGER NOT NULL);"
	"INSERT INTO schema_version(version) VALUES (0);"
	"CREATE TABLE name(id INTEGER PRIMARY KEY, s TEXT NOT NULL UNIQUE);"
	"CREATE TABLE run(id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, started TEXT NOT NULL,"
	" status TEXT, version TEXT, plan_path TEXT, plan_text TEXT, hostfile_text TEXT, dir TEXT,"
	" nresults INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE label(run INTEGER NOT NULL, k TEXT NOT NULL, v TEXT, PRIMARY KEY(run, k)) WITHOUT ROWID;"
	"CREATE TABLE node(run INTEGER NOT NULL, name INTEGER NOT NULL, leaf TEXT, pod TEXT,"
	" PRIMARY KEY(run, name)) WITHOUT ROWID;"
	"CREATE TABLE grp(id INTEGER PRIMARY KEY, run INTEGER NOT NULL, phase INTEGER NOT NULL,"
	" test INTEGER NOT NULL, rail INTEGER NOT NULL, plane INTEGER NOT NULL, size REAL NOT NULL,"
	" UNIQUE(run, phase, test, rail, plane, size));"
	"CREATE TABLE result(grp INTEGER NOT NULL, src INTEGER NOT NULL, dst INTEGER NOT NULL,"
	" round INTEGER NOT NULL, v REAL NOT NULL);"
	"CREATE INDEX result_grp ON result(grp);"
	"CREATE TABLE entity(grp INTEGER NOT NULL, kind INTEGER NOT NULL, a INTEGER NOT NULL,"
	" b INTEGER NOT NULL, v REAL NOT NULL, n INTEGER NOT NULL, PRIMARY KEY(grp, kind, a, b)) WITHOUT ROWID;",
	/* 1 -> 2: the cables of a run with a design */
	"ALTER TABLE run ADD COLUMN design TEXT;"
	"CREATE TABLE cable(run INTEGER NOT NULL, node INTEGER NOT NULL, rail INTEGER NOT NULL, plane INTEGER NOT NULL,"
	" switch INTEGER NOT NULL, port INTEGER NOT NULL, host_port INTEGER NOT NULL,"
	" PRIMARY KEY(run, node, rail, plane)) WITHOUT ROWID;",
	/* 2 -> 3: the suspects the run's own re-test confirmed */
	"ALTER TABLE entity ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 0;",
};

static int db_err(struct hist *h, const char *what)
{
	int code = sqlite3_errcode(h->db);

	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		return fs_err_env("the history '%s' is busy (another writer holds it): try again later, or give "
				  "--wait SECONDS", h->path);
	if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
		return fs_err_usage("'%s' is not a fabscope history (%s): give the file 'fabscope history add' "
				    "made", h->path, sqlite3_errmsg(h->db));
	return fs_err_env("history '%s': %s: %s", h->path, what, sqlite3_errmsg(h->db));
}

/* a constant SQL text without parameters */
static int exec(struct hist *h, const char *sql, const char *what)
{
	if (sqlite3_exec(h->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_err(h, what);
	return 0;
}

static int prep(struct hist *h, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(h->db, sql, -1, st, NULL) != SQLITE_OK)
		return db_err(h, "preparing a query");
	return 0;
}

/* the file's schema version: 0 an empty file, -1 a file of tables but not a history's */
static int schema_version(struct hist *h, int *v)
{
	sqlite3_stmt *st;
	int rc, ntab;

	if ((rc = prep(h, "SELECT count(*) FROM sqlite_schema", &st)))
		return rc;
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_err(h, "reading its schema");
	}
	ntab = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	*v = 0;
	if (!ntab)
		return 0;
	if (sqlite3_prepare_v2(h->db, "SELECT version FROM schema_version", -1, &st, NULL) != SQLITE_OK) {
		*v = -1;
		return 0;
	}
	*v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	return 0;
}

/* an older (or empty) file brought to HIST_SCHEMA, in one transaction */
static int migrate(struct hist *h)
{
	sqlite3_stmt *st;
	int rc, v;

	if ((rc = exec(h, "BEGIN IMMEDIATE", "locking it")))
		return rc;
	if ((rc = schema_version(h, &v)))
		goto fail;
	if (v < 0) {
		rc = fs_err_usage("'%s' is an SQLite file but not a fabscope history (no schema_version): give "
				  "another --db", h->path);
		goto fail;
	}
	if (v > HIST_SCHEMA) {
		rc = fs_err_env("'%s' is a history of schema %d, newer than this fabscope's %d: use a newer "
				"fabscope", h->path, v, HIST_SCHEMA);
		goto fail;
	}
	for (; v < HIST_SCHEMA; v++)
		if ((rc = exec(h, migration[v], "migrating its schema")))
			goto fail;
	if ((rc = prep(h, "UPDATE schema_version SET version = ?1", &st)))
		goto fail;
	sqlite3_bind_int(st, 1, HIST_SCHEMA);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_finalize(st);
		rc = db_err(h, "migrating its schema");
		goto fail;
	}
	sqlite3_finalize(st);
	return exec(h, "COMMIT", "migrating its schema");
fail:
	sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int hist_open(struct hist *h, const char *path, int mode, double wait_s)
{
	int flags = SQLITE_OPEN_NOFOLLOW | (mode == HIST_WRITE ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE :
					    SQLITE_OPEN_READONLY);
	struct stat sb;
	int rc, v;

	memset(h, 0, sizeof(*h));
	h->path = path;
	if (lstat(path, &sb)) {
		if (errno != ENOENT || mode != HIST_WRITE)
			return errno == ENOENT ?
			       fs_err_usage("no history '%s': make one with 'fabscope history add --db %s DIR'", path,
					    path) :
			       fs_err_env("cannot open the history '%s': %s", path, strerror(errno));
	} else if (S_ISLNK(sb.st_mode)) {
		return fs_err_usage("the history '%s' is a symbolic link: give the file itself", path);
	} else if (!S_ISREG(sb.st_mode)) {
		return fs_err_usage("the history '%s' is not a regular file", path);
	}
	/* SQLite makes FILE-wal, FILE-shm (and a -journal) beside it, none through a link either:
	 * this says so in a line; SQLite opens them with O_NOFOLLOW too (3.40: a link planted
	 * between this look and its open fails the open, "unable to open database file", and
	 * the link's target is left alone), so the look leaves no window */
	{
		static const char *const side[] = { "-wal", "-shm", "-journal" };
		char sp[4096 + 16];
		size_t i;

		for (i = 0; i < sizeof(side) / sizeof(*side); i++) {
			snprintf(sp, sizeof(sp), "%s%s", path, side[i]);
			if (!lstat(sp, &sb) && !S_ISREG(sb.st_mode))
				return fs_err_usage("'%s' is there and not a regular file (a symbolic link?): the history "
						    "'%s' writes it; remove it", sp, path);
		}
	}
	if (sqlite3_open_v2(path, &h->db, flags, NULL) != SQLITE_OK) {
		rc = fs_err_env("cannot open the history '%s': %s", path,
				h->db ? sqlite3_errmsg(h->db) : "out of memory");
		hist_close(h);
		return rc;
	}
	sqlite3_busy_timeout(h->db, wait_s * 1000 > INT32_MAX ? INT32_MAX : (int)(wait_s * 1000));
	sqlite3_extended_result_codes(h->db, 0);
	if (mode == HIST_WRITE) {
		/* WAL: readers (a report, a diff) never wait for the night's ingest; FULL: a
		 * committed run survives the machine's crash too */
		if ((rc = exec(h, "PRAGMA journal_mode=WAL", "setting its journal")) ||
		    (rc = exec(h, "PRAGMA synchronous=FULL", "setting its journal")) ||
		    (rc = exec(h, "PRAGMA cache_size=-262144", "setting its cache")) ||
		    (rc = migrate(h))) {
			hist_close(h);
			return rc;
		}
		return 0;
	}
	if ((rc = schema_version(h, &v))) {
		hist_close(h);
		return rc;
	}
	if (v <= 0 || v > HIST_SCHEMA) {
		rc = v > HIST_SCHEMA ?
		     fs_err_env("'%s' is a history of schema %d, newer than this fabscope's %d: use a newer "
				"fabscope", path, v, HIST_SCHEMA) :
		     fs_err_usage("'%s' is not a fabscope history: give the file 'fabscope history add' made", path);
		hist_close(h);
		return rc;
	}
	if (v < HIST_SCHEMA) {
		rc = fs_err_env("'%s' is a history of schema %d: 'fabscope history add' migrates it to %d", path, v,
				HIST_SCHEMA);
		hist_close(h);
		return rc;
	}
	return 0;
}

void hist_close(struct hist *h)
{
	if (h->db)
		sqlite3_close(h->db);
	h->db = NULL;
}

/* ---- adding a run ---- */

/* names interned in the file, cached here (open addressing over their text); node: the
 * run's nodes among them (run.json's, the results' ends), whose cables are kept */
struct hnames {
	char **s;
	long long *id;
	unsigned char *node;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t x = 1469598103934665603ull;

	for (; *s; s++)
		x = (x ^ (unsigned char)*s) * 1099511628211ull;
	return x;
}

struct hadd {
	struct hist *h;
	const char *dir;
	long long run;
	struct hnames names;
	const struct topo *given;	/* history add --topology: the design of a run without its own */
	sqlite3_stmt *name_ins, *name_get, *grp_ins, *res_ins, *ent_ins, *res_sel;
	struct hgrp {
		long long phase, id;
		int test, rail, plane;
		double size;
	} *g;
	size_t ng, g_alloc;
	long long nres;
	int rc;			/* what putting a batch in said (-FS_EXIT_*) */
	long hook_every, hook_n;	/* FABSCOPE_TEST_HISTORY_PAUSE: sleep a ms every so many results */
};

static void hnames_release(struct hnames *nm)
{
	size_t i;

	for (i = 0; i < nm->cap; i++)
		free(nm->s[i]);
	free(nm->s);
	free(nm->id);
	free(nm->node);
	memset(nm, 0, sizeof(*nm));
}

static int hnames_grow(struct hnames *nm)
{
	size_t cap = nm->cap ? 2 * nm->cap : 1024, i;
	char **s = calloc(cap, sizeof(*s));
	long long *id = calloc(cap, sizeof(*id));
	unsigned char *node = calloc(cap, 1);

	if (!s || !id || !node) {
		free(s);
		free(id);
		free(node);
		return -ENOMEM;
	}
	for (i = 0; i < nm->cap; i++)
		if (nm->s[i]) {
			size_t j = hash_str(nm->s[i]) & (cap - 1);

			while (s[j])
				j = (j + 1) & (cap - 1);
			s[j] = nm->s[i];
			id[j] = nm->id[i];
			node[j] = nm->node[i];
		}
	free(nm->s);
	free(nm->id);
	free(nm->node);
	nm->s = s;
	nm->id = id;
	nm->node = node;
	nm->cap = cap;
	return 0;
}

/* the slot of s in the cache, or (size_t)-1 when this run has not named it */
static size_t hnames_find(const struct hnames *nm, const char *s)
{
	size_t j;

	if (!nm->cap)
		return (size_t)-1;
	for (j = hash_str(s) & (nm->cap - 1); nm->s[j]; j = (j + 1) & (nm->cap - 1))
		if (!strcmp(nm->s[j], s))
			return j;
	return (size_t)-1;
}

/* the id of name s in the file (added when new): >= 0, or -FS_EXIT_ENV said; node: s is
 * one of the run's nodes */
static long long name_id(struct hadd *a, const char *s, int node)
{
	struct hnames *nm = &a->names;
	size_t j;
	long long id;

	if (2 * (nm->n + 1) > nm->cap && hnames_grow(nm))
		return fs_err_env("out of memory adding '%s' to the history", a->dir);
	for (j = hash_str(s) & (nm->cap - 1); nm->s[j]; j = (j + 1) & (nm->cap - 1))
		if (!strcmp(nm->s[j], s)) {
			nm->node[j] |= node != 0;
			return nm->id[j];
		}
	sqlite3_reset(a->name_ins);
	sqlite3_bind_text(a->name_ins, 1, s, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(a->name_ins) != SQLITE_DONE)
		return db_err(a->h, "adding a name");
	sqlite3_reset(a->name_get);
	sqlite3_bind_text(a->name_get, 1, s, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(a->name_get) != SQLITE_ROW)
		return db_err(a->h, "reading a name");
	id = sqlite3_column_int64(a->name_get, 0);
	if (!(nm->s[j] = strdup(s)))
		return fs_err_env("out of memory adding '%s' to the history", a->dir);
	nm->id[j] = id;
	nm->node[j] = node != 0;
	nm->n++;
	return id;
}

/* the row of the run's group (made when new), or -FS_EXIT_* said */
static long long grp_id(struct hadd *a, long long phase, int test, int rail, int plane, double size)
{
	struct hgrp *g;
	size_t i;

	for (i = 0; i < a->ng; i++)	/* a run has few: its phases x tests x lanes x sizes */
		if (a->g[i].phase == phase && a->g[i].test == test && a->g[i].rail == rail &&
		    a->g[i].plane == plane && a->g[i].size == size)
			return a->g[i].id;
	if (FS_ALLOC_GROW(a->g, a->ng + 1, a->g_alloc))
		return fs_err_env("out of memory adding '%s' to the history", a->dir);
	sqlite3_reset(a->grp_ins);
	sqlite3_bind_int64(a->grp_ins, 1, a->run);
	sqlite3_bind_int64(a->grp_ins, 2, phase);
	sqlite3_bind_int(a->grp_ins, 3, test);
	sqlite3_bind_int(a->grp_ins, 4, rail);
	sqlite3_bind_int(a->grp_ins, 5, plane);
	sqlite3_bind_double(a->grp_ins, 6, size);
	if (sqlite3_step(a->grp_ins) != SQLITE_DONE)
		return db_err(a->h, "adding a group");
	g = &a->g[a->ng++];
	g->phase = phase;
	g->test = test;
	g->rail = rail;
	g->plane = plane;
	g->size = size;
	g->id = sqlite3_last_insert_rowid(a->h->db);
	return g->id;
}

/*
 * Reading results.jsonl: JSON is most of an add's time (jansson: ~30 MB/s a core; a 16,384-node
 * night is 1 GB), so the file is read in parts by up to HIST_READERS threads (each
 * records_scan_range: the one reader of records), their lane results handed over in batches
 * of numbers and names through a queue of at most HQ_MAX, and put in the file by this
 * thread (SQLite's connection is one thread's).  Memory: the batches queued, never the file.
 */
#define HIST_READERS 4
#define HB_N 4096
#define HQ_MAX 8

struct hb_res {
	double size, v;
	size_t phase, src, dst;	/* offsets in the batch's names */
	int round, test, rail, plane;
};

struct hbatch {
	struct hb_res r[HB_N];
	size_t n;
	char *names;
	size_t nlen, ncap;
	struct hbatch *next;
};

struct hqueue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct hbatch *head, *tail;
	int queued, running, stop, rc;
	long bad;
};

struct hreader {
	struct hqueue *q;
	const char *dir;
	off_t from, to;
	struct hbatch *cur;
	pthread_t t;
};

static void hbatch_free(struct hbatch *b)
{
	if (b) {
		free(b->names);
		free(b);
	}
}

/* s into b's names: its offset, or (size_t)-1 out of memory */
static size_t hb_name(struct hbatch *b, const char *s)
{
	size_t n = strlen(s) + 1, off = b->nlen;

	if (FS_ALLOC_GROW(b->names, b->nlen + n, b->ncap))
		return (size_t)-1;
	memcpy(b->names + off, s, n);
	b->nlen += n;
	return off;
}

/* the reader's batch to the queue (waiting while it is full): 0, or 1 when told to stop */
static int hq_push(struct hreader *w)
{
	struct hqueue *q = w->q;
	int stop;

	pthread_mutex_lock(&q->mu);
	while (q->queued >= HQ_MAX && !q->stop)
		pthread_cond_wait(&q->cv, &q->mu);
	if (!(stop = q->stop)) {
		if (q->tail)
			q->tail->next = w->cur;
		else
			q->head = w->cur;
		q->tail = w->cur;
		q->queued++;
		pthread_cond_broadcast(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
	if (stop)
		hbatch_free(w->cur);
	w->cur = NULL;
	return stop;
}

/*
 * A re-test of a suspect pair by the run (role "again": the same pair measured again, as
 * fleet/coord-retest.c does before a suspect is named) as a result of that pair, round
 * HIST_RETEST_ROUND: its second result, so that a pair measured once a night is judged
 * when the run re-tested it (the better middle of two: slow twice).  Never a lane's or a
 * node's result (add_entities): the re-tests are of suspects, not a sample of the lane.
 */
static int retest_result(json_t *rec, struct rresult *res)
{
	struct rretest rt;

	if (!rretest_of(rec, &rt) || rt.error || rt.test < 0 || strcmp(rt.role, "again") ||
	    record_lane(rec, &res->rail, &res->plane))
		return 0;
	res->phase = record_str(rec, "phase", RRES_STANDALONE);
	res->src = rt.src;
	res->dst = rt.dst;
	res->test = rt.test;
	res->size = rt.size;
	res->v = rt.v;
	res->round = HIST_RETEST_ROUND;
	return 1;
}

/* records_scan_range's callback, in a reader: a lane result into the batch, the rest left */
static int read_record(json_t *rec, void *ctx)
{
	struct hreader *w = ctx;
	struct rresult res;
	struct hb_res *r;

	if (rresult_of(rec, &res) <= 0 && !retest_result(rec, &res))
		return 0;
	if (!isfinite(res.v) || res.v < 0)
		return 0;
	if (!w->cur && !(w->cur = calloc(1, sizeof(*w->cur))))
		return -ENOMEM;
	r = &w->cur->r[w->cur->n];
	if ((r->phase = hb_name(w->cur, res.phase)) == (size_t)-1 || (r->src = hb_name(w->cur, res.src)) == (size_t)-1 ||
	    (r->dst = hb_name(w->cur, res.dst)) == (size_t)-1)
		return -ENOMEM;
	r->size = isfinite(res.size) ? res.size : 0;
	r->v = res.v;
	r->round = res.round;
	r->test = res.test;
	r->rail = res.rail;
	r->plane = res.plane;
	if (++w->cur->n == HB_N)
		return hq_push(w);
	return 0;
}

static void *reader(void *arg)
{
	struct hreader *w = arg;
	struct records_scan_info si;
	int rc = records_scan_range(w->dir, w->from, w->to, read_record, w, &si);

	if (!rc && w->cur)
		rc = hq_push(w);
	hbatch_free(w->cur);
	w->cur = NULL;
	pthread_mutex_lock(&w->q->mu);
	if (rc < 0 && !w->q->rc)
		w->q->rc = rc;
	w->q->bad += si.bad + si.torn;
	w->q->running--;
	pthread_cond_broadcast(&w->q->cv);
	pthread_mutex_unlock(&w->q->mu);
	return NULL;
}

/* one batch into the file */
static int add_batch(struct hadd *a, const struct hbatch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		const struct hb_res *r = &b->r[i];
		long long phase, src = -1, dst = -1, g = -1;

		if ((phase = name_id(a, b->names + r->phase, 0)) < 0 || (src = name_id(a, b->names + r->src, 1)) < 0 ||
		    (dst = name_id(a, b->names + r->dst, 1)) < 0 ||
		    (g = grp_id(a, phase, r->test, r->rail, r->plane, r->size)) < 0)
			return (int)(phase < 0 ? phase : src < 0 ? src : dst < 0 ? dst : g);
		sqlite3_reset(a->res_ins);
		sqlite3_bind_int64(a->res_ins, 1, g);
		sqlite3_bind_int64(a->res_ins, 2, src);
		sqlite3_bind_int64(a->res_ins, 3, dst);
		sqlite3_bind_int(a->res_ins, 4, r->round);
		sqlite3_bind_double(a->res_ins, 5, r->v);
		if (sqlite3_step(a->res_ins) != SQLITE_DONE)
			return db_err(a->h, "adding a result");
		a->nres++;
		if (a->hook_every && ++a->hook_n % a->hook_every == 0)
			usleep(1000);
	}
	return 0;
}

/* the readers' parts of results.jsonl: n of them, cut at lines */
static int split(struct hadd *a, struct hreader *w, int *n)
{
	char path[4096];
	struct stat st;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int k;

	snprintf(path, sizeof(path), "%s/results.jsonl", a->dir);
	if (stat(path, &st))
		return -errno;
	*n = st.st_size < (16 << 20) || cpus < 2 ? 1 : cpus < HIST_READERS ? (int)cpus : HIST_READERS;
	for (k = 0; k < *n; k++) {
		off_t at = k ? records_line_start(a->dir, st.st_size / *n * k) : 0;

		if (at < 0)
			return (int)at;
		w[k].from = at;
		if (k)
			w[k - 1].to = at;
		w[k].to = -1;
	}
	return 0;
}

/* every lane result of the directory into the file, read by the readers: 0, -errno of the
 * reading (not said), or a->rc set (-FS_EXIT_* said: the file's) */
static int add_results(struct hadd *a, long *bad)
{
	struct hqueue q = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	struct hreader w[HIST_READERS];
	int n = 0, k, started = 0, rc;

	memset(w, 0, sizeof(w));
	if ((rc = split(a, w, &n)))
		return rc;
	for (k = 0; k < n; k++) {
		w[k].q = &q;
		w[k].dir = a->dir;
		q.running++;
		if (pthread_create(&w[k].t, NULL, reader, &w[k])) {
			q.running--;
			rc = -EAGAIN;
			break;
		}
		started++;
	}
	while (!rc) {
		struct hbatch *b;

		pthread_mutex_lock(&q.mu);
		while (!q.head && q.running && !q.rc)
			pthread_cond_wait(&q.cv, &q.mu);
		rc = q.rc;
		if ((b = q.head)) {
			q.head = b->next;
			if (!q.head)
				q.tail = NULL;
			q.queued--;
			pthread_cond_broadcast(&q.cv);
		}
		pthread_mutex_unlock(&q.mu);
		if (!b || rc) {
			hbatch_free(b);
			break;
		}
		a->rc = add_batch(a, b);
		hbatch_free(b);
		if (a->rc)
			break;
	}
	pthread_mutex_lock(&q.mu);
	q.stop = 1;
	pthread_cond_broadcast(&q.cv);
	pthread_mutex_unlock(&q.mu);
	for (k = 0; k < started; k++)
		pthread_join(w[k].t, NULL);
	while (q.head) {
		struct hbatch *b = q.head;

		q.head = b->next;
		hbatch_free(b);
	}
	*bad = q.bad;
	return rc ? rc : q.rc;
}

/* one entity's row */
static int ent_put(struct hadd *a, long long grp, int kind, long long x, long long y, double v, long n)
{
	sqlite3_reset(a->ent_ins);
	sqlite3_bind_int64(a->ent_ins, 1, grp);
	sqlite3_bind_int(a->ent_ins, 2, kind);
	sqlite3_bind_int64(a->ent_ins, 3, x);
	sqlite3_bind_int64(a->ent_ins, 4, y);
	sqlite3_bind_double(a->ent_ins, 5, v);
	sqlite3_bind_int64(a->ent_ins, 6, n);
	if (sqlite3_step(a->ent_ins) != SQLITE_DONE)
		return db_err(a->h, "adding what a node measured");
	return 0;
}

struct kv {
	long long a, b;
	double v;
	int retest;		/* a re-test's (round HIST_RETEST_ROUND) */
};

static int kv_cmp(const void *x, const void *y)
{
	const struct kv *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return p->v < q->v ? -1 : p->v > q->v;
}

static int dbl_cmp(const void *x, const void *y)
{
	double p = *(const double *)x, q = *(const double *)y;

	return p < q ? -1 : p > q;
}

/* the median of v[0..n) (sorted); of an even number, the better middle one (bw: the higher,
 * lat: the lower), so that a node is slow with most of its peers, never with one of two */
static double median_sorted(const double *v, size_t n, int test)
{
	return n % 2 ? v[n / 2] : test == RRES_BW ? v[n / 2] : v[n / 2 - 1];
}

/* runs of equal keys (a; b too when pairs) of kv[0..n) (sorted) into entities of kind */
static int put_runs(struct hadd *a, long long grp, int test, int kind, struct kv *kv, size_t n, double *tmp)
{
	size_t i, j, k;
	int rc;

	for (i = 0; i < n; i = j) {
		for (j = i; j < n && kv[j].a == kv[i].a && (kind == 1 || kv[j].b == kv[i].b); j++)
			;
		for (k = i; k < j; k++)
			tmp[k - i] = kv[k].v;
		if (kind == 2 && j - i < 2)
			continue;	/* a pair measured once: its result is all there is (never judged) */
		qsort(tmp, j - i, sizeof(*tmp), dbl_cmp);
		if ((rc = ent_put(a, grp, kind, kv[i].a, kind == 1 ? -1 : kv[i].b, median_sorted(tmp, j - i, test),
				  (long)(j - i))))
			return rc;
	}
	return 0;
}

/* a group's lane, nodes and pairs: read back its results (memory: one group's) */
static int add_entities(struct hadd *a, long long grp, int test)
{
	struct kv *kv = NULL;
	double *v = NULL;
	size_t n = 0, alloc = 0, valloc = 0, i, m;
	int rc = 0, s;

	sqlite3_reset(a->res_sel);
	sqlite3_bind_int64(a->res_sel, 1, grp);
	while ((s = sqlite3_step(a->res_sel)) == SQLITE_ROW) {
		if (FS_ALLOC_GROW(kv, 2 * n + 2, alloc)) {
			rc = fs_err_env("out of memory adding '%s' to the history", a->dir);
			goto out;
		}
		kv[n].a = sqlite3_column_int64(a->res_sel, 0);
		kv[n].b = sqlite3_column_int64(a->res_sel, 1);
		kv[n].v = sqlite3_column_double(a->res_sel, 2);
		kv[n].retest = sqlite3_column_int(a->res_sel, 3) == HIST_RETEST_ROUND;
		n++;
	}
	if (s != SQLITE_DONE) {
		rc = db_err(a->h, "reading a group back");
		goto out;
	}
	if (!n)
		goto out;
	if (FS_ALLOC_GROW(v, 2 * n, valloc)) {
		rc = fs_err_env("out of memory adding '%s' to the history", a->dir);
		goto out;
	}
	qsort(kv, n, sizeof(*kv), kv_cmp);	/* pairs: src -> dst, their re-tests too */
	if ((rc = put_runs(a, grp, test, 2, kv, n, v)))
		goto out;
	for (i = m = 0; i < n; i++)	/* the lane's and the nodes': the results of the plan's rounds */
		if (!kv[i].retest)
			kv[m++] = kv[i];
	if (!(n = m))
		goto out;
	for (i = 0; i < n; i++)
		v[i] = kv[i].v;
	qsort(v, n, sizeof(*v), dbl_cmp);
	if ((rc = ent_put(a, grp, 0, -1, -1, median_sorted(v, n, test), (long)n)))
		goto out;
	for (i = 0; i < n; i++) {	/* nodes: a result counts for both its ends */
		kv[n + i].a = kv[i].b;
		kv[n + i].b = -1;
		kv[n + i].v = kv[i].v;
		kv[i].b = -1;
	}
	qsort(kv, 2 * n, sizeof(*kv), kv_cmp);
	rc = put_runs(a, grp, test, 1, kv, 2 * n, v);
out:
	free(kv);
	free(v);
	return rc;
}

static void hadd_release(struct hadd *a)
{
	sqlite3_finalize(a->name_ins);
	sqlite3_finalize(a->name_get);
	sqlite3_finalize(a->grp_ins);
	sqlite3_finalize(a->res_ins);
	sqlite3_finalize(a->ent_ins);
	sqlite3_finalize(a->res_sel);
	hnames_release(&a->names);
	free(a->g);
}

static int hadd_prepare(struct hadd *a)
{
	struct hist *h = a->h;
	int rc;

	if ((rc = prep(h, "INSERT OR IGNORE INTO name(s) VALUES (?1)", &a->name_ins)) ||
	    (rc = prep(h, "SELECT id FROM name WHERE s = ?1", &a->name_get)) ||
	    (rc = prep(h, "INSERT INTO grp(run, phase, test, rail, plane, size) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
		       &a->grp_ins)) ||
	    (rc = prep(h, "INSERT INTO result(grp, src, dst, round, v) VALUES (?1, ?2, ?3, ?4, ?5)", &a->res_ins)) ||
	    (rc = prep(h, "INSERT INTO entity(grp, kind, a, b, v, n) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
		       &a->ent_ins)) ||
	    (rc = prep(h, "SELECT src, dst, v, round FROM result WHERE grp = ?1", &a->res_sel)))
		return rc;
	return 0;
}

/* 1 when the run id is held already */
static int run_held(struct hist *h, const char *run_id)
{
	sqlite3_stmt *st;
	int rc, s;

	if ((rc = prep(h, "SELECT 1 FROM run WHERE run_id = ?1", &st)))
		return rc;
	sqlite3_bind_text(st, 1, run_id, -1, SQLITE_TRANSIENT);
	s = sqlite3_step(st);
	sqlite3_finalize(st);
	if (s != SQLITE_ROW && s != SQLITE_DONE)
		return db_err(h, "looking the run up");
	return s == SQLITE_ROW;
}

static const char *str_or_null(json_t *o, const char *path)
{
	return record_str(o, path, NULL);
}

/* run.json's facts, labels and nodes; a->run set */
static int add_run_row(struct hadd *a, json_t *run)
{
	static const char *const key[] = { "id", "started", "status", "version", "plan.path", "plan.text",
					   "hostfile.text" };
	sqlite3_stmt *st;
	const char *k;
	json_t *v, *n;
	size_t i;
	int rc;

	if ((rc = prep(a->h, "INSERT INTO run(run_id, started, status, version, plan_path, plan_text, hostfile_text, dir)"
		       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", &st)))
		return rc;
	for (i = 0; i < sizeof(key) / sizeof(*key); i++)
		sqlite3_bind_text(st, (int)i + 1, str_or_null(run, key[i]), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 8, a->dir, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(a->h, "adding the run");
	sqlite3_finalize(st);
	if (rc)
		return rc;
	a->run = sqlite3_last_insert_rowid(a->h->db);
	if ((rc = prep(a->h, "INSERT OR REPLACE INTO label(run, k, v) VALUES (?1, ?2, ?3)", &st)))
		return rc;
	json_object_foreach(json_object_get(run, "labels"), k, v) {
		if (!json_is_string(v))
			continue;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, a->run);
		sqlite3_bind_text(st, 2, k, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, json_string_value(v), -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return db_err(a->h, "adding a label");
		}
	}
	sqlite3_finalize(st);
	if ((rc = prep(a->h, "INSERT OR REPLACE INTO node(run, name, leaf, pod) VALUES (?1, ?2, ?3, ?4)", &st)))
		return rc;
	json_array_foreach(json_object_get(run, "nodes"), i, n) {
		long long id;

		if (!str_or_null(n, "name"))
			continue;
		if ((id = name_id(a, str_or_null(n, "name"), 1)) < 0) {
			sqlite3_finalize(st);
			return (int)id;
		}
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, a->run);
		sqlite3_bind_int64(st, 2, id);
		sqlite3_bind_text(st, 3, str_or_null(n, "leaf"), -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 4, str_or_null(n, "pod"), -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return db_err(a->h, "adding a node");
		}
	}
	sqlite3_finalize(st);
	return 0;
}

/* run.json of dir, checked as a results directory's: the run or NULL and the error said */
static json_t *load_run(const char *dir, int *rc)
{
	char path[4096];
	struct stat sb;
	json_t *run;
	int err;

	*rc = 0;
	if (stat(dir, &sb)) {
		*rc = errno == ENOENT || errno == ENOTDIR ?
		      fs_err_usage("'%s' does not exist: give a results directory (what 'fabscope run -o' wrote)", dir) :
		      fs_err_env("cannot read '%s': %s", dir, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(sb.st_mode)) {
		*rc = fs_err_usage("'%s' is not a directory: give a results directory (what 'fabscope run -o' wrote)",
				   dir);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/run.json", dir);
	run = records_load_json(AT_FDCWD, path, RECORDS_RUN_MAX, 1, &err, NULL);
	if (!run) {
		*rc = err == -ENOENT || err == -EPROTO ?
		      fs_err_usage("'%s' %s: the history keeps runs by their id; give a results directory of "
				   "'fabscope run'", path, err == -ENOENT ? "is not there" : "is not JSON") :
		      fs_err_env("cannot read '%s': %s", path, records_strerror(err));
		return NULL;
	}
	if (!str_or_null(run, "id") || !*str_or_null(run, "id") || strlen(str_or_null(run, "id")) > 200 ||
	    !str_or_null(run, "started") || strlen(str_or_null(run, "started")) > 64) {
		*rc = fs_err_usage("'%s' has no run id or start time (id, started): give a results directory of "
				   "'fabscope run'", path);
		json_decref(run);
		return NULL;
	}
	return run;
}

/* the host cables of t (a NIC port to a switch port) of the run's nodes into table cable, t's
 * name into run.design: nodes x rails rows, one pass over the cables */
static int put_cables(struct hadd *a, const struct topo *t, const char *design)
{
	sqlite3_stmt *st;
	size_t i;
	int rc;

	if ((rc = prep(a->h, "UPDATE run SET design = ?1 WHERE id = ?2", &st)))
		return rc;
	sqlite3_bind_text(st, 1, design, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, a->run);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(a->h, "adding the run's design");
	sqlite3_finalize(st);
	if (rc || (rc = prep(a->h, "INSERT OR IGNORE INTO cable(run, node, rail, plane, switch, port, host_port)"
			     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", &st)))
		return rc;
	for (i = 0; i < t->nln && !rc; i++) {
		const struct topo_link *l = &t->ln[i];
		size_t slot;
		long long node, sw, port, hp;
		int rail, plane;

		if (l->a.sw >= 0 || l->b.sw < 0 || topo_link_oob(t, l))
			continue;	/* between switches, between nodes, out of band: no NIC port's */
		slot = hnames_find(&a->names, l->a.dev);
		if (slot == (size_t)-1 || !a->names.node[slot])
			continue;	/* a node this run did not have */
		node = a->names.id[slot];
		rail = l->rail >= 0 ? l->rail : t->sw[l->b.sw].rail;
		plane = l->plane >= 0 ? l->plane : t->sw[l->b.sw].plane;	/* -1: any (a design without) */
		if ((sw = name_id(a, l->b.dev, 0)) < 0 || (port = name_id(a, l->b.port, 0)) < 0 ||
		    (hp = name_id(a, l->a.port, 0)) < 0) {
			rc = (int)(sw < 0 ? sw : port < 0 ? port : hp);
			break;
		}
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, a->run);
		sqlite3_bind_int64(st, 2, node);
		sqlite3_bind_int(st, 3, rail < 0 ? 0 : rail);	/* (no rail: a design without, rail 0) */
		sqlite3_bind_int(st, 4, plane < 0 ? -1 : plane);
		sqlite3_bind_int64(st, 5, sw);
		sqlite3_bind_int64(st, 6, port);
		sqlite3_bind_int64(st, 7, hp);
		if (sqlite3_step(st) != SQLITE_DONE)	/* (a second cable of a port: the first kept, as the report) */
			rc = db_err(a->h, "adding a cable");
	}
	sqlite3_finalize(st);
	return rc;
}

/*
 * The run's design: run.json's own (topology {path, text}: the night's, as its run read it),
 * else the one add was given (--topology); its cables kept, its name in *design ("" none).
 */
static int add_design(struct hadd *a, json_t *run, struct hist_design *d)
{
	const char *text = record_str(run, "topology.text", NULL), *path = record_str(run, "topology.path", "");
	char name[4096 + 256];
	struct topo own;
	int rc;

	if (!text && !a->given)
		return 0;
	if (!text) {
		snprintf(d->name, sizeof(d->name), "%s", a->given->path);
		return put_cables(a, a->given, a->given->path);
	}
	topo_init(&own);
	snprintf(name, sizeof(name), "%s/run.json (topology %.4000s)", a->dir, path);
	if (!(rc = topo_read(&own, name, text))) {
		snprintf(d->name, sizeof(d->name), "%s", *path ? path : "run.json");
		d->own = 1;
		rc = put_cables(a, &own, d->name);
	}
	topo_release(&own);
	return rc;
}

/*
 * The entities the run's own re-tests confirmed (run.json's suspects whose retest.status is
 * "confirmed": a lane, a node, a pair either way round) marked confirmed = 1: what history
 * diff counts as a confirmed suspect on its first night.  A suspect of no group held here (a
 * collective's, the PFC probe's) marks nothing.
 */
static int add_confirmed(struct hadd *a, json_t *run)
{
	static const char *const kinds[] = { "lane", "node", "pair" };
	sqlite3_stmt *st;
	json_t *s;
	size_t i;
	int rc = 0, k;

	if ((rc = prep(a->h, "UPDATE entity SET confirmed = 1 WHERE grp = (SELECT g.id FROM grp g JOIN name p ON"
		       " p.id = g.phase WHERE g.run = ?1 AND p.s = ?2 AND g.test = ?3 AND g.rail = ?4 AND"
		       " g.plane = ?5 AND g.size = ?6) AND kind = ?7 AND"
		       " ((a = coalesce((SELECT id FROM name WHERE s = ?8), -1) AND b = coalesce((SELECT id FROM name"
		       " WHERE s = ?9), -1)) OR (kind = 2 AND b = (SELECT id FROM name WHERE s = ?8) AND"
		       " a = (SELECT id FROM name WHERE s = ?9)))", &st)))
		return rc;
	json_array_foreach(json_object_get(run, "suspects"), i, s) {
		const char *test = record_str(s, "test", "");
		double size = record_num(s, "msg_size_bytes", 0);

		if (strcmp(record_str(s, "retest.status", ""), "confirmed") || (strcmp(test, "bw") && strcmp(test, "lat")))
			continue;
		for (k = 0; k < 3 && strcmp(record_str(s, "kind", ""), kinds[k]); k++)
			;
		if (k == 3)
			continue;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, a->run);
		sqlite3_bind_text(st, 2, record_str(s, "phase", ""), -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 3, !strcmp(test, "bw") ? RRES_BW : RRES_LAT);
		sqlite3_bind_int(st, 4, record_int(s, "rail", 0, 0, 1 << 20));
		sqlite3_bind_int(st, 5, record_int(s, "plane", 0, 0, 1 << 20));
		sqlite3_bind_double(st, 6, isfinite(size) ? size : 0);
		sqlite3_bind_int(st, 7, k);
		/* (NULL: no name, -1 as the entity has it) */
		sqlite3_bind_text(st, 8, k ? record_str(s, "node", NULL) : NULL, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 9, k == 2 ? record_str(s, "peer", NULL) : NULL, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE) {
			rc = db_err(a->h, "marking what the run confirmed");
			break;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

static int add_body(struct hadd *a, json_t *run, struct hist_design *d)
{
	sqlite3_stmt *st;
	long bad = 0;
	size_t i;
	int rc;

	if ((rc = hadd_prepare(a)) || (rc = add_run_row(a, run)))
		return rc;
	rc = add_results(a, &bad);
	if (a->rc)
		return a->rc;	/* said */
	if (rc == -ENOMEM || rc == -EAGAIN)
		return fs_err_env("out of memory adding '%s' to the history", a->dir);
	if (rc < 0)
		return rc == -ENOENT ?
		       fs_err_usage("'%s' has no results.jsonl: is it a results directory of 'fabscope run'?", a->dir) :
		       fs_err_env("cannot read %s/results.jsonl: %s", a->dir, records_strerror(rc));
	if (bad)
		fs_warn("%s/results.jsonl: %ld line(s) that are not records were skipped", a->dir, bad);
	for (i = 0; i < a->ng; i++)
		if ((rc = add_entities(a, a->g[i].id, a->g[i].test)))
			return rc;
	if ((rc = add_confirmed(a, run)) || (rc = add_design(a, run, d)))
		return rc;
	if ((rc = prep(a->h, "UPDATE run SET nresults = ?1 WHERE id = ?2", &st)))
		return rc;
	sqlite3_bind_int64(st, 1, a->nres);
	sqlite3_bind_int64(st, 2, a->run);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(a->h, "finishing the run");
	sqlite3_finalize(st);
	return rc;
}

int hist_add(struct hist *h, const char *dir, const struct topo *given, struct hist_design *d)
{
	struct hadd a = { .h = h, .dir = dir, .given = given };
	const char *hook = fs_test_env("FABSCOPE_TEST_HISTORY_PAUSE");
	json_t *run;
	int rc;

	memset(d, 0, sizeof(*d));
	if (!(run = load_run(dir, &rc)))
		return rc;
	if (hook)
		a.hook_every = strtol(hook, NULL, 10);
	if ((rc = exec(h, "BEGIN IMMEDIATE", "locking it")))
		goto out;
	if ((rc = run_held(h, str_or_null(run, "id"))) != 0) {
		sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
		goto out;	/* 1: held already; or said */
	}
	if ((rc = add_body(&a, run, d)) || (rc = exec(h, "COMMIT", "committing the run"))) {
		sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
		goto out;
	}
	if (!strcmp(record_str(run, "status", ""), "running"))	/* (a crashed coordinator's too) */
		fs_warn("%s: the run says it is still running (or its coordinator died): added as it is; what "
			"a later 'fabscope run --resume' adds is not (the run id is held)", dir);
out:
	hadd_release(&a);
	json_decref(run);
	return rc;
}

/* ---- the runs held ---- */

int hist_runs(struct hist *h, struct hrun **runs, int *n)
{
	sqlite3_stmt *st;
	struct hrun *r = NULL;
	size_t alloc = 0;
	int rc, s;

	*runs = NULL;
	*n = 0;
	if ((rc = prep(h, "SELECT id, run_id, started, status, dir, nresults, design FROM run ORDER BY started, run_id", &st)))
		return rc;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		struct hrun *x;
		const char *c;

		if (FS_ALLOC_GROW(r, (size_t)*n + 1, alloc)) {
			sqlite3_finalize(st);
			hist_runs_free(r, *n);
			return fs_err_env("out of memory reading the history '%s'", h->path);
		}
		x = &r[(*n)++];
		memset(x, 0, sizeof(*x));
		x->id = sqlite3_column_int64(st, 0);
		x->run_id = strdup((c = (const char *)sqlite3_column_text(st, 1)) ? c : "");
		x->started = strdup((c = (const char *)sqlite3_column_text(st, 2)) ? c : "");
		x->status = strdup((c = (const char *)sqlite3_column_text(st, 3)) ? c : "?");
		x->dir = strdup((c = (const char *)sqlite3_column_text(st, 4)) ? c : "");
		x->nresults = sqlite3_column_int64(st, 5);
		c = (const char *)sqlite3_column_text(st, 6);
		x->design = c ? strdup(c) : NULL;
		if (!x->run_id || !x->started || !x->status || !x->dir || (c && !x->design)) {
			sqlite3_finalize(st);
			hist_runs_free(r, *n);
			return fs_err_env("out of memory reading the history '%s'", h->path);
		}
	}
	sqlite3_finalize(st);
	if (s != SQLITE_DONE) {
		hist_runs_free(r, *n);
		return db_err(h, "reading its runs");
	}
	*runs = r;
	return 0;
}

void hist_runs_free(struct hrun *runs, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		free(runs[i].run_id);
		free(runs[i].started);
		free(runs[i].status);
		free(runs[i].dir);
		free(runs[i].design);
	}
	free(runs);
}
