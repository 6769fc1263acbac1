/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Raw ethtool statistics (see counters.h): the SIOCETHTOOL ioctl of a live
 * netdev, and the fixture file that stands in for it under a fixture root.
 */
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "../core/error.h"
#include "counters-int.h"

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

int ctr_eth_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 && errno == EAFNOSUPPORT)
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return fd;
}

/* SIOCETHTOOL with data; 0 or -errno */
int ctr_eth_ioctl(int fd, const char *ifname, void *data)
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
	rc = ctr_eth_ioctl(fd, ifname, si);
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
	rc = ctr_eth_ioctl(fd, ifname, gs);
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
int ctr_eth_values(int fd, const char *ifname, size_t n, uint64_t *vals)
{
	size_t room = eth_room(n);
	struct ethtool_stats *st;
	int rc;

	st = calloc(1, sizeof(*st) + room * sizeof(uint64_t));
	if (!st)
		return fs_err_env("out of memory");
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = (uint32_t)n;
	rc = ctr_eth_ioctl(fd, ifname, st);
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
int ctr_eth_read_all(int fd, const char *ifname, struct ctr_raw *out, int vals_too)
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
		rc = ctr_eth_values(fd, ifname, (size_t)n, out->val);
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
	rc = ctr_check_name("interface", ifname, IFNAMSIZ);
	if (rc)
		return rc;
	fd = ctr_eth_socket();
	if (fd < 0)
		return fs_err_env("socket for the ethtool ioctl: %s", strerror(errno));
	rc = ctr_eth_read_all(fd, ifname, out, 1);
	close(fd);
	return rc;
}

/* ETHTOOL_GDRVINFO's driver name; 0 or -errno, silently */
int ctr_eth_driver(int fd, const char *ifname, char *buf, size_t len)
{
	struct ethtool_drvinfo di;
	size_t n;
	int rc;

	memset(&di, 0, sizeof(di));
	di.cmd = ETHTOOL_GDRVINFO;
	rc = ctr_eth_ioctl(fd, ifname, &di);
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

	rc = ctr_check_name("interface", ifname, IFNAMSIZ);
	if (rc)
		return rc;
	fd = ctr_eth_socket();
	if (fd < 0)
		return fs_err_env("socket for the ethtool ioctl: %s", strerror(errno));
	rc = ctr_eth_driver(fd, ifname, buf, len);
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
					  path, lineno, ctr_shown(s, tmp, sizeof(tmp)));
			goto out;
		}
		end = colon;
		while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		*end = 0;
		if (!*s || (size_t)(end - s) >= CTR_NAME_MAX) {
			rc = fs_err_usage("%s:%lu: counter name '%s' empty or over %d bytes",
					  path, lineno, ctr_shown(s, tmp, sizeof(tmp)), CTR_NAME_MAX - 1);
			goto out;
		}
		if (ctr_parse_u64(colon + 1, &v)) {
			rc = fs_err_usage("%s:%lu: value of '%s' is not an unsigned 64-bit integer: '%s'",
					  path, lineno, s, ctr_shown(colon + 1, tmp, sizeof(tmp)));
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
