/* SPDX-License-Identifier: BSD-2-Clause */
/* NIC and RDMA counter sources and their name maps: see counters.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "../core/error.h"
#include "counters.h"

/* ---- metric names ---- */

static const char *const prio_names[CTR_PRIO_METRICS] = {
	[CTR_RX_PAUSE] = "rx_pause",
	[CTR_TX_PAUSE] = "tx_pause",
	[CTR_RX_PAUSE_US] = "rx_pause_us",
	[CTR_TX_PAUSE_US] = "tx_pause_us",
	[CTR_RX_DISCARDS] = "rx_discards",
};

static const char *const port_names[CTR_PORT_METRICS] = {
	[CTR_ECN_MARKED] = "ecn_marked",
	[CTR_CNP_SENT] = "cnp_sent",
	[CTR_CNP_HANDLED] = "cnp_handled",
	[CTR_OUT_OF_SEQUENCE] = "out_of_sequence",
	[CTR_PACKET_SEQ_ERR] = "packet_seq_err",
	[CTR_STORM_WARN] = "storm_warning",
	[CTR_STORM_ERROR] = "storm_error",
	[CTR_RX_DISCARDS_PHY] = "rx_discards_phy",
	[CTR_XMIT_WAIT] = "xmit_wait",
	[CTR_XMIT_DISCARDS] = "xmit_discards",
};

const char *ctr_metric_name(int idx, char *buf, size_t len)
{
	int p = CTR_PRIOS * CTR_PRIO_METRICS;

	if (idx < 0 || idx >= CTR_NMETRICS)
		snprintf(buf, len, "?");
	else if (idx < p)
		snprintf(buf, len, "prio%d.%s", idx / CTR_PRIO_METRICS,
			 prio_names[idx % CTR_PRIO_METRICS]);
	else
		snprintf(buf, len, "port.%s", port_names[idx - p]);
	return buf;
}

int ctr_metric_parse(const char *name)
{
	int i;

	if (!strncmp(name, "prio", 4) && name[4] >= '0' && name[4] < '0' + CTR_PRIOS &&
	    name[5] == '.') {
		for (i = 0; i < CTR_PRIO_METRICS; i++)
			if (!strcmp(name + 6, prio_names[i]))
				return ctr_prio_idx(name[4] - '0', (enum ctr_prio_metric)i);
		return -1;
	}
	if (!strncmp(name, "port.", 5))
		for (i = 0; i < CTR_PORT_METRICS; i++)
			if (!strcmp(name + 5, port_names[i]))
				return ctr_port_idx((enum ctr_port_metric)i);
	return -1;
}

/* ---- name maps ---- */

/*
 * A raw name, "%p" standing for one priority digit 0-7; prio: metric is an
 * enum ctr_prio_metric (else an enum ctr_port_metric).
 */
struct ctr_name {
	const char *pat;
	int prio;
	int metric;
};

#define PRIO(pat, m) { pat, 1, m }
#define PORT(pat, m) { pat, 0, m }

/* mlx5_core ethtool -S: Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst */
static const struct ctr_name mlx5_ethtool[] = {
	PRIO("rx_prio%p_pause", CTR_RX_PAUSE),
	PRIO("tx_prio%p_pause", CTR_TX_PAUSE),
	PRIO("rx_prio%p_pause_duration", CTR_RX_PAUSE_US),	/* microseconds */
	PRIO("tx_prio%p_pause_duration", CTR_TX_PAUSE_US),
	PRIO("rx_prio%p_discards", CTR_RX_DISCARDS),
	PORT("tx_pause_storm_warning_events", CTR_STORM_WARN),
	PORT("tx_pause_storm_error_events", CTR_STORM_ERROR),
	PORT("rx_discards_phy", CTR_RX_DISCARDS_PHY),
	{ NULL, 0, 0 }
};

/* mlx5_ib ports/N/hw_counters (the q counters and the congestion counters) */
static const struct ctr_name mlx5_hw[] = {
	PORT("np_ecn_marked_roce_packets", CTR_ECN_MARKED),
	PORT("np_cnp_sent", CTR_CNP_SENT),
	PORT("rp_cnp_handled", CTR_CNP_HANDLED),
	PORT("out_of_sequence", CTR_OUT_OF_SEQUENCE),
	PORT("packet_seq_err", CTR_PACKET_SEQ_ERR),
	{ NULL, 0, 0 }
};

/* rdma_rxe (soft-RoCE) hw_counters: rxe_hw_counters.c; out_of_sequence before 4.19 */
static const struct ctr_name rxe_hw[] = {
	PORT("out_of_seq_request", CTR_OUT_OF_SEQUENCE),
	PORT("out_of_sequence", CTR_OUT_OF_SEQUENCE),
	PORT("rcvd_seq_err", CTR_PACKET_SEQ_ERR),
	{ NULL, 0, 0 }
};

/* InfiniBand PMA port counters: the same names for every driver */
static const struct ctr_name ib_port[] = {
	PORT("port_xmit_wait", CTR_XMIT_WAIT),
	PORT("port_xmit_discards", CTR_XMIT_DISCARDS),
	{ NULL, 0, 0 }
};

struct ctr_map {
	const char *name;
	const char *const *drivers;	/* netdev and PCI driver names, NULL-terminated */
	const char *rdma_prefix;	/* RDMA device names this driver gives */
	const struct ctr_name *ethtool, *hw;
};

static const char *const mlx5_drivers[] = { "mlx5_core", "mlx5e_rep", "mlx5_ib", NULL };
static const char *const rxe_drivers[] = { "rdma_rxe", "rxe", NULL };

static const struct ctr_map maps[] = {
	{ "mlx5", mlx5_drivers, "mlx5_", mlx5_ethtool, mlx5_hw },
	{ "rxe", rxe_drivers, "rxe", NULL, rxe_hw },
};

#define NMAPS (sizeof(maps) / sizeof(maps[0]))

static const struct ctr_map *map_by_driver(const char *driver)
{
	size_t i, j;

	for (i = 0; i < NMAPS; i++) {
		if (!strcmp(maps[i].name, driver))
			return &maps[i];
		for (j = 0; maps[i].drivers[j]; j++)
			if (!strcmp(maps[i].drivers[j], driver))
				return &maps[i];
	}
	return NULL;
}

static const struct ctr_map *map_by_rdma_name(const char *dev)
{
	size_t i;

	for (i = 0; i < NMAPS; i++)
		if (!strncmp(dev, maps[i].rdma_prefix, strlen(maps[i].rdma_prefix)))
			return &maps[i];
	return NULL;
}

/* The priority matched (0 for a name without one), or -1. */
static int name_match(const char *pat, const char *name)
{
	const char *ph = strstr(pat, "%p");
	size_t pre;

	if (!ph)
		return strcmp(pat, name) ? -1 : 0;
	pre = (size_t)(ph - pat);
	if (strncmp(pat, name, pre))
		return -1;
	if (name[pre] < '0' || name[pre] >= '0' + CTR_PRIOS)
		return -1;
	return strcmp(ph + 2, name + pre + 1) ? -1 : name[pre] - '0';
}

/* The metric index a raw name maps to in tbl (NULL: none), or -1. */
static int map_name(const struct ctr_name *tbl, const char *name)
{
	int p;

	for (; tbl && tbl->pat; tbl++) {
		p = name_match(tbl->pat, name);
		if (p < 0)
			continue;
		return tbl->prio ? ctr_prio_idx(p, (enum ctr_prio_metric)tbl->metric) :
				   ctr_port_idx((enum ctr_port_metric)tbl->metric);
	}
	return -1;
}

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
static int check_name(const char *what, const char *s, size_t max)
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
static int parse_u64(const char *s, uint64_t *out)
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
static const char *shown(const char *s, char *buf, size_t len)
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

/* ---- raw ethtool statistics ---- */

void ctr_raw_release(struct ctr_raw *r)
{
	free(r->name);
	free(r->val);
	r->name = NULL;
	r->val = NULL;
	r->n = 0;
}

static int raw_alloc(struct ctr_raw *r, size_t n)
{
	r->name = calloc(n ? n : 1, sizeof(*r->name));
	r->val = calloc(n ? n : 1, sizeof(*r->val));
	r->n = 0;
	if (!r->name || !r->val) {
		ctr_raw_release(r);
		return fs_err_env("out of memory");
	}
	return 0;
}

static int eth_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 && errno == EAFNOSUPPORT)
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return fd;
}

/* SIOCETHTOOL with data; 0 or -errno */
static int eth_ioctl(int fd, const char *ifname, void *data)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strlen(ifname) + 1);	/* checked < IFNAMSIZ */
	ifr.ifr_data = data;
	return ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

static int eth_fail(const char *ifname, const char *what, int err)
{
	if (err == -ENODEV)
		return fs_err_env("no interface '%s' in this network namespace", ifname);
	if (err == -EOPNOTSUPP)
		return fs_err_env("'%s' has no ethtool statistics (its driver gives none)", ifname);
	return fs_err_env("ethtool %s of '%s': %s", what, ifname, strerror(-err));
}

/* The size of the ETH_SS_STATS string set: > 0, or a negative exit code */
static int eth_count(int fd, const char *ifname)
{
	uint64_t buf[(sizeof(struct ethtool_sset_info) + sizeof(uint32_t) + 7) / 8];
	struct ethtool_sset_info *si = (struct ethtool_sset_info *)buf;
	int rc;

	memset(buf, 0, sizeof(buf));
	si->cmd = ETHTOOL_GSSET_INFO;
	si->sset_mask = 1ull << ETH_SS_STATS;
	rc = eth_ioctl(fd, ifname, si);
	if (rc)
		return eth_fail(ifname, "string set size", rc);
	if (!(si->sset_mask & (1ull << ETH_SS_STATS)) || !si->data[0])
		return fs_err_env("'%s' has no ethtool statistics (its driver gives none)", ifname);
	if (si->data[0] > CTR_MAX_STATS)
		return fs_err_env("'%s' counts %u ethtool statistics, more than %d",
				  ifname, si->data[0], CTR_MAX_STATS);
	return (int)si->data[0];
}

/*
 * The kernel writes as many entries as the driver counts now, whatever len
 * or n_stats we pass: room for growth between GSSET_INFO and the read.
 */
static size_t eth_room(size_t n)
{
	return 2 * n + 256;
}

/* Names into r (allocated); 1 when the count changed meanwhile */
static int eth_strings(int fd, const char *ifname, size_t n, struct ctr_raw *r)
{
	size_t room = eth_room(n), i;
	struct ethtool_gstrings *gs;
	int rc;

	gs = calloc(1, sizeof(*gs) + room * ETH_GSTRING_LEN);
	if (!gs)
		return fs_err_env("out of memory");
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = (uint32_t)n;
	rc = eth_ioctl(fd, ifname, gs);
	if (rc) {
		free(gs);
		return eth_fail(ifname, "statistics names", rc);
	}
	if (gs->len != n) {
		free(gs);
		return 1;
	}
	rc = raw_alloc(r, n);
	if (rc) {
		free(gs);
		return rc;
	}
	for (i = 0; i < n; i++) {
		const char *s = (const char *)gs->data + i * ETH_GSTRING_LEN;
		size_t len = strnlen(s, ETH_GSTRING_LEN);

		if (len >= CTR_NAME_MAX)
			len = CTR_NAME_MAX - 1;
		memcpy(r->name[i], s, len);
		r->name[i][len] = 0;
	}
	r->n = n;
	free(gs);
	return 0;
}

/* n values into vals; 1 when the count changed meanwhile */
static int eth_values(int fd, const char *ifname, size_t n, uint64_t *vals)
{
	size_t room = eth_room(n);
	struct ethtool_stats *st;
	int rc;

	st = calloc(1, sizeof(*st) + room * sizeof(uint64_t));
	if (!st)
		return fs_err_env("out of memory");
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = (uint32_t)n;
	rc = eth_ioctl(fd, ifname, st);
	if (rc) {
		free(st);
		return eth_fail(ifname, "statistics", rc);
	}
	if (st->n_stats != n) {
		free(st);
		return 1;
	}
	memcpy(vals, st->data, n * sizeof(uint64_t));
	free(st);
	return 0;
}

/* Names (and values when vals_too) of ifname, retried while the count moves */
static int eth_read_all(int fd, const char *ifname, struct ctr_raw *out, int vals_too)
{
	int tries, rc = 0, n;

	for (tries = 0; tries < 3; tries++) {
		n = eth_count(fd, ifname);
		if (n < 0)
			return n;
		rc = eth_strings(fd, ifname, (size_t)n, out);
		if (rc < 0)
			return rc;
		if (rc)
			continue;
		if (!vals_too)
			return 0;
		rc = eth_values(fd, ifname, (size_t)n, out->val);
		if (rc < 0) {
			ctr_raw_release(out);
			return rc;
		}
		if (!rc)
			return 0;
		ctr_raw_release(out);
	}
	return fs_err_env("the ethtool statistics of '%s' keep changing in number", ifname);
}

int ctr_ethtool_stats(const char *ifname, struct ctr_raw *out)
{
	int fd, rc;

	memset(out, 0, sizeof(*out));
	rc = check_name("interface", ifname, IFNAMSIZ);
	if (rc)
		return rc;
	fd = eth_socket();
	if (fd < 0)
		return fs_err_env("socket for the ethtool ioctl: %s", strerror(errno));
	rc = eth_read_all(fd, ifname, out, 1);
	close(fd);
	return rc;
}

/* ETHTOOL_GDRVINFO's driver name; 0 or -errno, silently */
static int eth_driver(int fd, const char *ifname, char *buf, size_t len)
{
	struct ethtool_drvinfo di;
	size_t n;
	int rc;

	memset(&di, 0, sizeof(di));
	di.cmd = ETHTOOL_GDRVINFO;
	rc = eth_ioctl(fd, ifname, &di);
	if (rc)
		return rc;
	n = strnlen(di.driver, sizeof(di.driver));
	if (n >= len)
		n = len - 1;
	memcpy(buf, di.driver, n);
	buf[n] = 0;
	return 0;
}

int ctr_ethtool_driver(const char *ifname, char *buf, size_t len)
{
	int fd, rc;

	rc = check_name("interface", ifname, IFNAMSIZ);
	if (rc)
		return rc;
	fd = eth_socket();
	if (fd < 0)
		return fs_err_env("socket for the ethtool ioctl: %s", strerror(errno));
	rc = eth_driver(fd, ifname, buf, len);
	close(fd);
	return rc ? eth_fail(ifname, "driver information", rc) : 0;
}

int ctr_ethtool_fixture(const char *path, struct ctr_raw *out)
{
	size_t alloc = 0;
	unsigned long lineno = 0;
	char line[256], tmp[48];
	FILE *f;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	f = fopen(path, "re");
	if (!f)
		return fs_err_env("unable to open '%s': %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *colon, *end;
		size_t len = strlen(line);
		uint64_t v;

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		else if (!feof(f)) {
			rc = fs_err_usage("%s:%lu: line too long", path, lineno);
			goto out;
		}
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#' || !strcmp(s, "NIC statistics:"))
			continue;
		colon = strrchr(s, ':');
		if (!colon) {
			rc = fs_err_usage("%s:%lu: malformed line '%s' (want 'name: value')",
					  path, lineno, shown(s, tmp, sizeof(tmp)));
			goto out;
		}
		end = colon;
		while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		*end = 0;
		if (!*s || (size_t)(end - s) >= CTR_NAME_MAX) {
			rc = fs_err_usage("%s:%lu: counter name '%s' empty or over %d bytes",
					  path, lineno, shown(s, tmp, sizeof(tmp)), CTR_NAME_MAX - 1);
			goto out;
		}
		if (parse_u64(colon + 1, &v)) {
			rc = fs_err_usage("%s:%lu: value of '%s' is not an unsigned 64-bit integer: '%s'",
					  path, lineno, s, shown(colon + 1, tmp, sizeof(tmp)));
			goto out;
		}
		if (out->n == alloc) {
			size_t na = alloc ? 2 * alloc : 64;
			char (*nn)[CTR_NAME_MAX];
			uint64_t *nv;

			if (na > CTR_MAX_STATS) {
				rc = fs_err_usage("%s: more than %d counters", path, CTR_MAX_STATS);
				goto out;
			}
			nn = realloc(out->name, na * sizeof(*nn));
			if (nn)
				out->name = nn;
			nv = realloc(out->val, na * sizeof(*nv));
			if (nv)
				out->val = nv;
			if (!nn || !nv) {
				rc = fs_err_env("out of memory");
				goto out;
			}
			alloc = na;
		}
		memcpy(out->name[out->n], s, (size_t)(end - s) + 1);
		out->val[out->n++] = v;
	}
	if (ferror(f))
		rc = fs_err_env("unable to read '%s': %s", path, strerror(errno));
out:
	fclose(f);
	if (rc)
		ctr_raw_release(out);
	return rc;
}

/* ---- snapshot files ---- */

int ctr_snapshot_write(FILE *f, const struct ctr_snapshot *s)
{
	char name[48];
	int i;

	fprintf(f, "fabscope-counters 1\ntime %.9f\n", s->t);
	for (i = 0; i < CTR_NMETRICS; i++)
		if (s->have[i])
			fprintf(f, "%s %" PRIu64 "\n", ctr_metric_name(i, name, sizeof(name)), s->v[i]);
	return ferror(f) ? -FS_EXIT_ENV : 0;
}

int ctr_snapshot_read(const char *path, struct ctr_snapshot *s)
{
	unsigned long lineno = 0;
	char line[256], tmp[48];
	int version = 0, have_time = 0, rc = 0;
	FILE *f;

	memset(s, 0, sizeof(*s));
	f = fopen(path, "re");
	if (!f)
		return fs_err_read("counter snapshot", path, errno);
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		char *key = line, *val;
		int idx;

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		else if (!feof(f)) {
			rc = fs_err_usage("%s:%lu: line too long", path, lineno);
			goto out;
		}
		if (!len || line[0] == '#')
			continue;
		val = strchr(line, ' ');
		if (!val) {
			rc = fs_err_usage("%s:%lu: malformed line '%s' (want 'name value')",
					  path, lineno, shown(line, tmp, sizeof(tmp)));
			goto out;
		}
		*val++ = 0;
		if (!version) {
			if (strcmp(key, "fabscope-counters") || strcmp(val, "1")) {
				rc = fs_err_usage("%s: not a counter snapshot (version 1)", path);
				goto out;
			}
			version = 1;
			continue;
		}
		if (!strcmp(key, "time")) {
			char *end;

			errno = 0;
			s->t = strtod(val, &end);
			if (errno || end == val || *end || !(s->t >= 0)) {
				rc = fs_err_usage("%s:%lu: bad time '%s'", path, lineno,
						  shown(val, tmp, sizeof(tmp)));
				goto out;
			}
			have_time = 1;
			continue;
		}
		idx = ctr_metric_parse(key);
		if (idx < 0) {
			rc = fs_err_usage("%s:%lu: unknown metric '%s'", path, lineno,
					  shown(key, tmp, sizeof(tmp)));
			goto out;
		}
		if (s->have[idx] || parse_u64(val, &s->v[idx])) {
			rc = fs_err_usage("%s:%lu: %s of '%s'", path, lineno,
					  s->have[idx] ? "second value" : "bad value",
					  shown(key, tmp, sizeof(tmp)));
			goto out;
		}
		s->have[idx] = 1;
	}
	if (!version || !have_time)
		rc = fs_err_usage("%s: %s", path, !version ? "empty, not a counter snapshot" :
				  "no time line");
out:
	fclose(f);
	return rc;
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
		return ib_port;
	if (!s->map)
		return NULL;
	return s->kind == SRC_HW ? s->map->hw : s->map->ethtool;
}

/* Entries of the raw names that map (first name of a metric wins) */
static int src_map_raw(struct ctr_src *s, const struct ctr_raw *r)
{
	const struct ctr_name *tbl = src_table(s);
	unsigned char seen[CTR_NMETRICS] = { 0 };
	size_t i;

	free(s->ent);
	s->ent = NULL;
	s->nent = 0;
	s->nraw = r->n;
	for (i = 0; i < r->n; i++) {
		int m = map_name(tbl, r->name[i]);
		struct src_entry *ne;

		if (m < 0 || seen[m])
			continue;
		seen[m] = 1;
		ne = realloc(s->ent, (s->nent + 1) * sizeof(*ne));
		if (!ne)
			return fs_err_env("out of memory");
		s->ent = ne;
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
	int rc = eth_read_all(s->fd, s->ifname, &r, 0);

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
		rc = eth_values(s->fd, s->ifname, s->nraw, s->vals);
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
		if (n == (ssize_t)sizeof(buf) - 1 || parse_u64(buf, &v))
			return fs_err(FS_EXIT_USAGE, "'%s' holds '%s', not an unsigned 64-bit integer",
				      path, shown(buf, tmp, sizeof(tmp)));
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
		s->map = map_by_driver(o->driver);
		if (!s->map)
			return fs_err_usage("no counter name map for driver '%s' (known: mlx5, rxe)",
					    o->driver);
		if (!s->driver[0])
			snprintf(s->driver, sizeof(s->driver), "%s", o->driver);
		return 0;
	}
	s->map = s->driver[0] ? map_by_driver(s->driver) : NULL;
	if (!s->map && rdma_dev)
		s->map = map_by_rdma_name(rdma_dev);
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
		s->fd = eth_socket();
		if (s->fd < 0)
			return fs_err_env("socket for the ethtool ioctl: %s", strerror(errno));
		if (!explicit) {	/* quietly: a device found, maybe without statistics */
			uint64_t buf[(sizeof(struct ethtool_sset_info) + 4 + 7) / 8] = { 0 };
			struct ethtool_sset_info *si = (struct ethtool_sset_info *)buf;

			si->cmd = ETHTOOL_GSSET_INFO;
			si->sset_mask = 1ull << ETH_SS_STATS;
			if (eth_ioctl(s->fd, s->ifname, si) || !si->sset_mask || !si->data[0]) {
				src_release(s);
				return 0;
			}
		}
		if (eth_driver(s->fd, s->ifname, s->driver, sizeof(s->driver)))
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
	if ((o->ifname && (rc = check_name("interface", o->ifname, IFNAMSIZ))) ||
	    (o->rdma_dev && (rc = check_name("RDMA device", o->rdma_dev, 64))))
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
			    !check_name("interface", nd, IFNAMSIZ))
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
	    read_line(path, buf, sizeof(buf)) || parse_u64(buf, &mbps) || !mbps ||
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
