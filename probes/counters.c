/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * NIC and RDMA counter sources behind one handle (see counters.h), and the
 * small helpers the counters' files share (counters-int.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/ethtool.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "counters-int.h"

/* ---- small helpers ---- */

static int pathf(char *buf, size_t len, const char *fmt, ...) FS_PRINTF(3, 4);

static int pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		return fs_err_usage("path too long: '%.60s...'", buf);
	return 0;
}

/* A device or interface name that is safe in a path: 1..max-1 bytes, no '/' */
int ctr_check_name(const char *what, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	const char *p;

	if (n >= max)
		return fs_err_usage("%s name '%.*s...' is longer than %zu bytes", what,
				    (int)(n < 64 ? n : 64), s, max - 1);
	if (!n || !strcmp(s, ".") || !strcmp(s, ".."))
		return fs_err_usage("invalid %s name '%s'", what, s);
	for (p = s; *p; p++)
		if (*p == '/' || isspace((unsigned char)*p) || !isprint((unsigned char)*p))
			return fs_err_usage("invalid %s name '%.*s'", what, (int)(n < 64 ? n : 64), s);
	return 0;
}

/* Strict decimal u64, surrounding blanks allowed; 0 or -1. */
int ctr_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (*s)
		return -1;
	*out = v;
	return 0;
}

/* Printable copy of at most 40 bytes of s, for messages */
const char *ctr_shown(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && s[i] != '\n' && i + 1 < len && i < 40; i++)
		buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	buf[i] = 0;
	return buf;
}

/* The basename of a symbolic link's target into buf; -1 if none. */
static int link_basename(const char *path, char *buf, size_t len)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	const char *b;

	if (n <= 0)
		return -1;
	target[n] = 0;
	b = strrchr(target, '/');
	b = b ? b + 1 : target;
	if (!*b || strlen(b) >= len)
		return -1;
	strcpy(buf, b);
	return 0;
}

/* The first line of a small file, trimmed; -1 if unreadable or empty. */
static int read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r' ||
			 buf[n - 1] == '\n' || buf[n - 1] == 0))
		buf[--n] = 0;
	return buf[0] ? 0 : -1;
}

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* ---- sources ---- */

enum src_kind { SRC_ETHTOOL, SRC_ETHTOOL_FILE, SRC_HW, SRC_PORT };

struct src_entry {
	char name[CTR_NAME_MAX];
	int metric;
	size_t index;		/* ethtool: position in the string set */
};

struct ctr_src {
	enum src_kind kind;
	char label[80];		/* "ethtool eth2", "hw_counters mlx5_0/1" */
	char driver[64];	/* "" when unknown */
	const struct ctr_map *map;
	char path[PATH_MAX];	/* fixture file or sysfs folder */
	char ifname[IFNAMSIZ];
	int fd;			/* ethtool socket */
	size_t nraw;		/* raw counters the source has */
	struct src_entry *ent;	/* those that map */
	size_t nent;
	uint64_t *vals;		/* ethtool: room for nraw values */
};

struct counters {
	struct ctr_src src[3];
	int nsrc;
	char root[PATH_MAX];	/* "" for the live system */
	char ifname[IFNAMSIZ];
};

static const struct ctr_name *src_table(const struct ctr_src *s)
{
	if (s->kind == SRC_PORT)
		return ctr_ib_port;
	if (!s->map)
		return NULL;
	return s->kind == SRC_HW ? s->map->hw : s->map->ethtool;
}

/* Entries of the raw names that map (first name of a metric wins) */
static int src_map_raw(struct ctr_src *s, const struct ctr_raw *r)
{
	const struct ctr_name *tbl = src_table(s);
	unsigned char seen[CTR_NMETRICS] = { 0 };
	size_t i, alloc = 0;

	free(s->ent);
	s->ent = NULL;
	s->nent = 0;
	s->nraw = r->n;
	for (i = 0; i < r->n; i++) {
		int m = ctr_map_name(tbl, r->name[i]);
		struct src_entry *ne;

		if (m < 0 || seen[m])
			continue;
		seen[m] = 1;
		if (FS_ALLOC_GROW(s->ent, s->nent + 1, alloc))
			return fs_err_env("out of memory mapping the counters of '%s'", s->path);
		ne = s->ent;
		memcpy(ne[s->nent].name, r->name[i], CTR_NAME_MAX);
		ne[s->nent].metric = m;
		ne[s->nent].index = i;
		s->nent++;
	}
	return 0;
}

static void put(struct ctr_snapshot *snap, int m, uint64_t v)
{
	if (snap->have[m])
		return;	/* an earlier source owns it */
	snap->v[m] = v;
	snap->have[m] = 1;
}

static int ethtool_live_load(struct ctr_src *s)
{
	struct ctr_raw r;
	int rc = ctr_eth_read_all(s->fd, s->ifname, &r, 0);

	if (rc)
		return rc;
	rc = src_map_raw(s, &r);
	free(s->vals);
	s->vals = calloc(r.n, sizeof(*s->vals));
	if (!rc && !s->vals)
		rc = fs_err_env("out of memory");
	ctr_raw_release(&r);
	return rc;
}

static int ethtool_live_read(struct ctr_src *s, struct ctr_snapshot *snap)
{
	size_t i;
	int rc, tries;

	for (tries = 0; tries < 3; tries++) {
		rc = ctr_eth_values(s->fd, s->ifname, s->nraw, s->vals);
		if (rc < 0)
			return rc;
		if (!rc)
			break;
		rc = ethtool_live_load(s);	/* the count changed: names again */
		if (rc)
			return rc;
	}
	if (tries == 3)
		return fs_err_env("the ethtool statistics of '%s' keep changing in number", s->ifname);
	for (i = 0; i < s->nent; i++)
		put(snap, s->ent[i].metric, s->vals[s->ent[i].index]);
	return 0;
}

static int ethtool_file_read(struct ctr_src *s, struct ctr_snapshot *snap)
{
	struct ctr_raw r;
	size_t i;
	int rc = ctr_ethtool_fixture(s->path, &r);

	if (rc)
		return rc;
	rc = src_map_raw(s, &r);
	for (i = 0; !rc && i < s->nent; i++)
		put(snap, s->ent[i].metric, r.val[s->ent[i].index]);
	ctr_raw_release(&r);
	return rc;
}

/* The names in a sysfs counter folder that map */
static int dir_load(struct ctr_src *s)
{
	struct ctr_raw r = { 0 };
	size_t alloc = 0;
	struct dirent *de;
	DIR *d = opendir(s->path);
	int rc = 0;

	if (!d)
		return fs_err_env("unable to open '%s': %s", s->path, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= CTR_NAME_MAX)
			continue;
		if (r.n == alloc) {
			size_t na = alloc ? 2 * alloc : 64;
			char (*nn)[CTR_NAME_MAX];

			if (na > CTR_MAX_STATS) {
				rc = fs_err_env("'%s': more than %d counters", s->path, CTR_MAX_STATS);
				break;
			}
			nn = realloc(r.name, na * sizeof(*nn));
			if (!nn) {
				rc = fs_err_env("out of memory");
				break;
			}
			r.name = nn;
			alloc = na;
		}
		strcpy(r.name[r.n++], de->d_name);
	}
	closedir(d);
	if (!rc)
		rc = src_map_raw(s, &r);
	free(r.name);
	return rc;
}

static int dir_read(struct ctr_src *s, struct ctr_snapshot *snap)
{
	char path[PATH_MAX], buf[64], tmp[48];
	size_t i;

	for (i = 0; i < s->nent; i++) {
		uint64_t v;
		ssize_t n;
		int fd;

		if (pathf(path, sizeof(path), "%s/%s", s->path, s->ent[i].name))
			return -FS_EXIT_USAGE;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* gone: absent from this reading */
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n < 0)
			continue;	/* sysfs refuses counters a port lacks (EINVAL, EIO) */
		buf[n] = 0;
		if (n == (ssize_t)sizeof(buf) - 1 || ctr_parse_u64(buf, &v))
			return fs_err(FS_EXIT_USAGE, "'%s' holds '%s', not an unsigned 64-bit integer",
				      path, ctr_shown(buf, tmp, sizeof(tmp)));
		put(snap, s->ent[i].metric, v);
	}
	return 0;
}

static void src_release(struct ctr_src *s)
{
	if (s->kind == SRC_ETHTOOL && s->fd >= 0)
		close(s->fd);
	free(s->ent);
	free(s->vals);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

void counters_free(struct counters *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < c->nsrc; i++)
		src_release(&c->src[i]);
	free(c);
}

/* The map for a source: forced by name, else by driver, else by RDMA name */
static int pick_map(const struct ctr_opts *o, struct ctr_src *s, const char *rdma_dev)
{
	if (o->driver) {
		s->map = ctr_map_by_driver(o->driver);
		if (!s->map)
			return fs_err_usage("no counter name map for driver '%s' (known: mlx5, rxe)",
					    o->driver);
		if (!s->driver[0])
			snprintf(s->driver, sizeof(s->driver), "%s", o->driver);
		return 0;
	}
	s->map = s->driver[0] ? ctr_map_by_driver(s->driver) : NULL;
	if (!s->map && rdma_dev)
		s->map = ctr_map_by_rdma_name(rdma_dev);
	return 0;
}

static int open_ethtool(struct counters *c, const struct ctr_opts *o, int explicit)
{
	struct ctr_src *s = &c->src[c->nsrc];
	char path[PATH_MAX];
	int rc;

	s->fd = -1;
	snprintf(s->ifname, sizeof(s->ifname), "%s", c->ifname);
	snprintf(s->label, sizeof(s->label), "ethtool %s", c->ifname);
	if (!c->root[0]) {
		s->kind = SRC_ETHTOOL;
		s->fd = ctr_eth_socket();
		if (s->fd < 0)
			return fs_err_env("socket for the ethtool ioctl: %s", strerror(errno));
		if (!explicit) {	/* quietly: a device found, maybe without statistics */
			uint64_t buf[(sizeof(struct ethtool_sset_info) + 4 + 7) / 8] = { 0 };
			struct ethtool_sset_info *si = (struct ethtool_sset_info *)buf;

			si->cmd = ETHTOOL_GSSET_INFO;
			si->sset_mask = 1ull << ETH_SS_STATS;
			if (ctr_eth_ioctl(s->fd, s->ifname, si) || !si->sset_mask || !si->data[0]) {
				src_release(s);
				return 0;
			}
		}
		if (ctr_eth_driver(s->fd, s->ifname, s->driver, sizeof(s->driver)))
			s->driver[0] = 0;	/* the string set read says why */
		rc = pick_map(o, s, NULL);
		if (!rc)
			rc = ethtool_live_load(s);
	} else {
		struct ctr_raw r;

		s->kind = SRC_ETHTOOL_FILE;
		if (pathf(s->path, sizeof(s->path), "%s/ethtool/%s", c->root, c->ifname))
			return -FS_EXIT_USAGE;
		if (access(s->path, F_OK)) {
			if (!explicit)
				return 0;
			return fs_err_env("'%s' has no ethtool statistics (no fixture '%s')",
					  c->ifname, s->path);
		}
		if (pathf(path, sizeof(path), "%s/sys/class/net/%s/device/driver", c->root, c->ifname))
			return -FS_EXIT_USAGE;
		if (link_basename(path, s->driver, sizeof(s->driver)))
			s->driver[0] = 0;
		rc = pick_map(o, s, NULL);
		if (!rc)
			rc = ctr_ethtool_fixture(s->path, &r);
		if (!rc) {
			rc = src_map_raw(s, &r);
			ctr_raw_release(&r);
		}
	}
	if (rc) {
		src_release(s);
		return rc;
	}
	c->nsrc++;
	return 0;
}

static int open_rdma_dir(struct counters *c, const struct ctr_opts *o, const char *dev,
			 int port, enum src_kind kind)
{
	struct ctr_src *s = &c->src[c->nsrc];
	const char *sub = kind == SRC_HW ? "hw_counters" : "counters";
	char path[PATH_MAX];
	int rc;

	s->fd = -1;
	s->kind = kind;
	if (pathf(s->path, sizeof(s->path), "%s/sys/class/infiniband/%s/ports/%d/%s",
		  c->root, dev, port, sub))
		return -FS_EXIT_USAGE;
	if (!is_dir(s->path))
		return 0;	/* not every driver has both */
	snprintf(s->label, sizeof(s->label), "%s %s/%d", sub, dev, port);
	if (pathf(path, sizeof(path), "%s/sys/class/infiniband/%s/device/driver", c->root, dev))
		return -FS_EXIT_USAGE;
	if (link_basename(path, s->driver, sizeof(s->driver)))
		s->driver[0] = 0;
	rc = pick_map(o, s, dev);
	if (!rc)
		rc = dir_load(s);
	if (rc) {
		src_release(s);
		return rc;
	}
	c->nsrc++;
	return 0;
}

/* The RDMA device of ifname: ROOT/sys/class/net/IF/device/infiniband/DEV */
static void find_rdma_dev(struct counters *c, int port, char *dev, size_t len)
{
	char path[PATH_MAX], sub[PATH_MAX], nd[IFNAMSIZ + 8], only[NAME_MAX + 1] = "";
	struct dirent *de;
	int count = 0;
	DIR *d;

	dev[0] = 0;
	if (pathf(path, sizeof(path), "%s/sys/class/net/%s/device/infiniband", c->root, c->ifname))
		return;
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= len)
			continue;
		count++;
		snprintf(only, sizeof(only), "%s", de->d_name);
		/* with several, the one whose port carries this netdev */
		if (!pathf(sub, sizeof(sub), "%s/%s/ports/%d/gid_attrs/ndevs/0", path, de->d_name, port) &&
		    !read_line(sub, nd, sizeof(nd)) && !strcmp(nd, c->ifname)) {
			snprintf(dev, len, "%s", de->d_name);
			break;
		}
	}
	closedir(d);
	if (!dev[0] && count == 1)
		snprintf(dev, len, "%s", only);
}

int counters_open(struct counters **out, const struct ctr_opts *o)
{
	struct counters *c;
	char dev[NAME_MAX + 1] = "", path[PATH_MAX];
	int port = o->port ? o->port : 1, rc = 0, n0;

	*out = NULL;
	if (!o->ifname && !o->rdma_dev)
		return fs_err_usage("name an interface or an RDMA device for the counters");
	if (port < 1 || port > 255)
		return fs_err_usage("invalid RDMA port %d", port);
	if ((o->ifname && (rc = ctr_check_name("interface", o->ifname, IFNAMSIZ))) ||
	    (o->rdma_dev && (rc = ctr_check_name("RDMA device", o->rdma_dev, 64))))
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c)
		return fs_err_env("out of memory");
	if (o->root && strcmp(o->root, "/")) {
		size_t n = strlen(o->root);

		while (n > 1 && o->root[n - 1] == '/')
			n--;
		if (!n || n >= sizeof(c->root) - 64) {
			rc = fs_err_usage("invalid root '%.60s'", o->root);
			goto fail;
		}
		memcpy(c->root, o->root, n);
		c->root[n] = 0;
		if (!is_dir(c->root)) {
			rc = fs_err_usage("root '%s' is not a folder", c->root);
			goto fail;
		}
	}
	if (o->ifname)
		snprintf(c->ifname, sizeof(c->ifname), "%s", o->ifname);
	if (o->rdma_dev) {
		snprintf(dev, sizeof(dev), "%s", o->rdma_dev);
		if ((rc = pathf(path, sizeof(path), "%s/sys/class/infiniband/%s", c->root, dev)))
			goto fail;
		if (!is_dir(path)) {
			rc = fs_err_env("no RDMA device '%s' (no '%s')", dev, path);
			goto fail;
		}
		if ((rc = pathf(path, sizeof(path), "%s/sys/class/infiniband/%s/ports/%d",
				c->root, dev, port)))
			goto fail;
		if (!is_dir(path)) {
			rc = fs_err_env("RDMA device '%s' has no port %d", dev, port);
			goto fail;
		}
		if (!o->ifname) {	/* its netdev, from the GID table */
			char nd[IFNAMSIZ + 8];

			if (!pathf(path, sizeof(path), "%s/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/0",
				   c->root, dev, port) &&
			    !read_line(path, nd, sizeof(nd)) && strlen(nd) < IFNAMSIZ &&
			    !ctr_check_name("interface", nd, IFNAMSIZ))
				snprintf(c->ifname, sizeof(c->ifname), "%s", nd);
		}
	} else {
		find_rdma_dev(c, port, dev, sizeof(dev));
	}

	if (c->ifname[0] && (rc = open_ethtool(c, o, o->ifname != NULL)))
		goto fail;
	if (dev[0]) {
		n0 = c->nsrc;
		if ((rc = open_rdma_dir(c, o, dev, port, SRC_HW)) ||
		    (rc = open_rdma_dir(c, o, dev, port, SRC_PORT)))
			goto fail;
		if (o->rdma_dev && c->nsrc == n0) {
			rc = fs_err_env("RDMA device '%s' port %d has no counter folders", dev, port);
			goto fail;
		}
	}
	if (!c->nsrc) {
		rc = fs_err_env("no counters found for '%s'", o->ifname ? o->ifname : o->rdma_dev);
		goto fail;
	}
	*out = c;
	return 0;
fail:
	counters_free(c);
	return rc;
}

int counters_read(struct counters *c, struct ctr_snapshot *snap)
{
	struct timespec a, b;
	int i, rc = 0;

	memset(snap, 0, sizeof(*snap));
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < c->nsrc && !rc; i++) {
		struct ctr_src *s = &c->src[i];

		switch (s->kind) {
		case SRC_ETHTOOL:
			rc = ethtool_live_read(s, snap);
			break;
		case SRC_ETHTOOL_FILE:
			rc = ethtool_file_read(s, snap);
			break;
		default:
			rc = dir_read(s, snap);
			break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* the middle of the reading */
	snap->t = ((double)a.tv_sec + (double)b.tv_sec) / 2 +
		  ((double)a.tv_nsec + (double)b.tv_nsec) / 2e9;
	return rc;
}

int counters_sources(const struct counters *c)
{
	return c->nsrc;
}

int counters_mapped(const struct counters *c)
{
	int i, n = 0;

	for (i = 0; i < c->nsrc; i++)
		n += (int)c->src[i].nent;
	return n;
}

double counters_link_gbps(const struct counters *c)
{
	char path[PATH_MAX], buf[32];
	uint64_t mbps;

	if (!c->ifname[0] ||
	    pathf(path, sizeof(path), "%s/sys/class/net/%s/speed", c->root, c->ifname) ||
	    read_line(path, buf, sizeof(buf)) || ctr_parse_u64(buf, &mbps) || !mbps ||
	    mbps > 100000000)
		return 0;	/* "-1" or unreadable when the link is down */
	return (double)mbps / 1000;
}

void counters_describe(const struct counters *c, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < c->nsrc && used < len; i++) {
		const struct ctr_src *s = &c->src[i];
		int n = snprintf(buf + used, len - used, "%s%s (driver %s, map %s): %zu of %zu mapped",
				 i ? "; " : "", s->label, s->driver[0] ? s->driver : "unknown",
				 s->kind == SRC_PORT ? "ib" : s->map ? s->map->name : "none",
				 s->nent, s->nraw);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}
