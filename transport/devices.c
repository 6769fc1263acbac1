/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope devices`: every RDMA device and port with what a fabric engineer
 * checks first (state, speed and width, MTU, GID table with types and
 * addresses, netdev, PCI address, NUMA node) and the rail and plane each
 * port stands for.
 *
 * Rails and planes come from a map file (--rail-map FILE, or the
 * FABSCOPE_RAIL_MAP environment variable) of lines
 *
 *     DEVICE[/PORT] rail=R [plane=P]      # comment
 *
 * or, without one, are inferred: devices in PCI address order (by name for
 * devices without one, such as rxe) are rails 0, 1, ...; port p of a device
 * is plane p-1 (dual-port NICs wired to two planes).  The output says which.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "../core/builtin.h"
#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/options.h"
#include "../core/lanes.h"

/*
 * --json where there is no RDMA at all: still a document a script can read,
 * with no devices and the reason (the exit code says it failed, 3)
 */
static void no_rdma_json(const char *why)
{
	json_t *all = json_pack("{s:s, s:b, s:[], s:s}", "schema", "fabscope.devices/1", "rdma", 0,
				"devices", "error", why);
	char *s = json_dumps(all, JSON_INDENT(2));

	printf("%s\n", s ? s : "{}");
	free(s);
	json_decref(all);
}

#ifdef HAVE_VERBS
#include <arpa/inet.h>
#include <net/if.h>

#include <infiniband/verbs.h>

#include "verbs.h"

struct dev_ent {
	char name[64], pci[64];
	struct ibv_device *dev;
};

struct rail_map {
	char dev[64];
	int port, rail, plane;	/* port 0: every port */
	int line, used;		/* its line in the file; whether a port here matched it */
	int dev_here;		/* a device of that name is here */
};

/* The line for port p of dev: its own line, else the device's; NULL: none. */
static struct rail_map *map_line(struct rail_map *map, int n, const char *dev, int p)
{
	struct rail_map *any = NULL;
	int k;

	for (k = 0; k < n; k++) {
		if (strcmp(map[k].dev, dev))
			continue;
		if (map[k].port == p)
			return &map[k];
		if (!map[k].port)
			any = &map[k];
	}
	return any;
}

static const char *const devices_usage[] = {
	"fabscope devices [--json] [--rail-map FILE]",
	NULL
};

static const char devices_about[] =
	"List the RDMA devices and their ports: state, speed and width, MTU, GID table\n"
	"(RoCE v1/v2, IPv4/IPv6), netdev, PCI address, NUMA node, and the rail and plane\n"
	"each port maps to (from --rail-map, else inferred in PCI order).";

static void sysfs_str(const char *dev, const char *file, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/%s", dev, file);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static void pci_of(const char *dev, char *buf, size_t len)
{
	char path[256], link[512];
	ssize_t n;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", dev);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		const char *b;

		link[n] = 0;
		b = strrchr(link, '/');
		snprintf(buf, len, "%.63s", b ? b + 1 : link);
	}
}

static int by_pci(const void *a, const void *b)
{
	const struct dev_ent *x = a, *y = b;

	if (!x->pci[0] != !y->pci[0])	/* devices with a PCI address first */
		return x->pci[0] ? -1 : 1;
	if (x->pci[0] && strcmp(x->pci, y->pci))
		return strcmp(x->pci, y->pci);
	return strcmp(x->name, y->name);
}

/* Decimal digits only (no sign, space or hex), lo to hi; -1 otherwise. */
static long map_num(const char *s, long lo, long hi)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > hi)
			return -1;
	}
	return v < lo ? -1 : v;
}

/* The map file: lines 'DEVICE[/PORT] rail=N [plane=N]', '#' comments.
 * Anything else is refused with FILE:LINE, nothing is guessed. */
static int read_map(const char *path, int from_env, struct rail_map **out, int *n)
{
	const char *env = from_env ? " (named by $FABSCOPE_RAIL_MAP)" : "";
	FILE *f = fopen(path, "r");
	char line[512], why[200] = "";
	struct stat st;
	int lineno = 0, k;
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	if (!f)	/* not there: a wrong argument (2); there but unreadable: 3 */
		return fs_err(errno == ENOENT || errno == ENOTDIR ? FS_EXIT_USAGE : FS_EXIT_ENV,
			      "cannot read rail map '%s'%s: %s", path, env, strerror(errno));
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		fclose(f);
		return fs_err_usage("rail map '%s'%s is a directory: give the map file", path, env);
	}
	while (!why[0] && fgets(line, sizeof(line), f)) {
		struct rail_map m = { .port = 0, .rail = -1, .plane = -1 };
		size_t len = strlen(line);
		char *tok, *save = NULL, *p;

		lineno++;
		if (len == sizeof(line) - 1 && line[len - 1] != '\n' && !feof(f)) {
			snprintf(why, sizeof(why), "the line is longer than %d characters",
				 (int)sizeof(line) - 2);
			break;
		}
		if ((p = strchr(line, '#')))
			*p = 0;
		tok = strtok_r(line, " \t\r\n", &save);
		if (!tok)
			continue;
		m.line = lineno;
		if ((p = strchr(tok, '/'))) {
			*p++ = 0;
			if ((m.port = (int)map_num(p, 1, 255)) < 0) {
				snprintf(why, sizeof(why), "bad port '%.20s' of '%.64s': a port number, 1 to 255",
					 p, tok);
				break;
			}
		}
		if (!*tok) {
			snprintf(why, sizeof(why), "no device name before '/%d'", m.port);
			break;
		}
		if (strlen(tok) >= sizeof(m.dev)) {
			snprintf(why, sizeof(why), "device name '%.64s...' is longer than %d characters",
				 tok, (int)sizeof(m.dev) - 1);
			break;
		}
		snprintf(m.dev, sizeof(m.dev), "%s", tok);
		while (!why[0] && (tok = strtok_r(NULL, " \t\r\n", &save))) {
			int *slot = !strncmp(tok, "rail=", 5) ? &m.rail :
				    !strncmp(tok, "plane=", 6) ? &m.plane : NULL;
			/* the ranges of hostfiles and agent --rail (fs_lane_ok) */
			long v = slot ? map_num(strchr(tok, '=') + 1, 0, slot == &m.rail ?
						FS_MAX_RAILS - 1 : FS_MAX_PLANES - 1) : -1;

			if (slot && *slot >= 0)
				snprintf(why, sizeof(why), "'%.20s' given twice", tok);
			else if (v < 0)
				snprintf(why, sizeof(why), "cannot read '%.40s': expected DEVICE[/PORT] rail=N "
					 "[plane=N], rail 0 to %d and plane 0 to %d (as in hostfiles)", tok,
					 FS_MAX_RAILS - 1, FS_MAX_PLANES - 1);
			else
				*slot = (int)v;
		}
		if (!why[0] && m.rail < 0)
			snprintf(why, sizeof(why), "no rail= for '%s'", m.dev);
		for (k = 0; !why[0] && k < *n; k++)
			if (!strcmp((*out)[k].dev, m.dev) && (*out)[k].port == m.port)
				snprintf(why, sizeof(why), "'%s%s%.0d' is mapped already, at line %d", m.dev,
					 m.port ? "/" : "", m.port, (*out)[k].line);
		if (why[0])
			break;
		if (FS_ALLOC_GROW(*out, *n + 1, alloc)) {
			fclose(f);
			free(*out);
			*out = NULL;
			return fs_err_env("out of memory reading rail map '%s'", path);
		}
		(*out)[(*n)++] = m;
	}
	if (!why[0] && ferror(f)) {
		int e = errno;

		fclose(f);
		free(*out);
		*out = NULL;
		return fs_err_env("cannot read rail map '%s'%s: %s", path, env, strerror(e));
	}
	fclose(f);
	if (why[0]) {
		free(*out);
		*out = NULL;
		*n = 0;
		return fs_err_usage("%s:%d: %s%s", path, lineno, why, env);
	}
	return 0;
}

static const char *gid_type_str(uint32_t t)
{
	return t == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : t == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1" : "IB";
}

static json_t *port_json(struct ibv_context *ctx, const char *dev, int p)
{
	static const int width_x[] = { 0, 1, 4, 0, 8, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 2 };
	struct ibv_gid_entry *e;
	struct ibv_port_attr pa;
	char rate[64], file[64];
	json_t *o, *gids = json_array();
	ssize_t n, k;

	if (ibv_query_port(ctx, (uint8_t)p, &pa))
		return NULL;
	snprintf(file, sizeof(file), "ports/%d/rate", p);
	sysfs_str(dev, file, rate, sizeof(rate));	/* "100 Gb/sec (4X EDR)" */
	o = json_pack("{s:i, s:s, s:s, s:i, s:i, s:s, s:i}",
		      "port", p, "state", ibv_port_state_str(pa.state),
		      "link_layer", pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand",
		      "active_mtu", 128 << pa.active_mtu, "max_mtu", 128 << pa.max_mtu,
		      "rate", rate, "lid", pa.lid);
	json_object_set_new(o, "speed_gbps", json_real(atof(rate)));
	json_object_set_new(o, "width", json_integer(pa.active_width < 17 ? width_x[pa.active_width] : 0));
	json_object_set_new(o, "phys_state", json_integer(pa.phys_state));
	e = vb_gid_table(ctx, &n);
	for (k = 0; k < n; k++) {
		char gid[INET6_ADDRSTRLEN], ip[INET6_ADDRSTRLEN] = "", nd[IF_NAMESIZE] = "";
		json_t *g;

		if ((int)e[k].port_num != p)
			continue;
		inet_ntop(AF_INET6, e[k].gid.raw, gid, sizeof(gid));
		vb_gid_ip(&e[k].gid, ip, sizeof(ip));
		if (e[k].ndev_ifindex)
			if_indextoname(e[k].ndev_ifindex, nd);
		g = json_pack("{s:i, s:s, s:s}", "index", (int)e[k].gid_index, "gid", gid,
			      "type", gid_type_str(e[k].gid_type));
		if (ip[0])
			json_object_set_new(g, "ip", json_string(ip));
		if (nd[0]) {
			json_object_set_new(g, "netdev", json_string(nd));
			if (!json_object_get(o, "netdev"))
				json_object_set_new(o, "netdev", json_string(nd));
		}
		json_array_append_new(gids, g);
	}
	free(e);
	json_object_set_new(o, "gids", gids);
	return o;
}

static void print_text(json_t *all)
{
	json_t *d, *p, *g;
	size_t i, j, k;

	printf("# rails and planes: %s\n", json_string_value(json_object_get(all, "rail_map")));
	json_array_foreach(json_object_get(all, "devices"), i, d) {
		printf("%s  pci %s  numa %lld  %s\n", json_string_value(json_object_get(d, "device")),
		       json_string_value(json_object_get(d, "pci")),
		       (long long)json_integer_value(json_object_get(d, "numa_node")),
		       json_string_value(json_object_get(d, "driver")));
		json_array_foreach(json_object_get(d, "ports"), j, p) {
			printf("  port %lld  %-6s %s  %s  mtu %lld (max %lld)  netdev %s  rail %lld  plane %lld\n",
			       (long long)json_integer_value(json_object_get(p, "port")),
			       json_string_value(json_object_get(p, "state")),
			       json_string_value(json_object_get(p, "link_layer")),
			       json_string_value(json_object_get(p, "rate")),
			       (long long)json_integer_value(json_object_get(p, "active_mtu")),
			       (long long)json_integer_value(json_object_get(p, "max_mtu")),
			       json_string_value(json_object_get(p, "netdev")) ?
			       json_string_value(json_object_get(p, "netdev")) : "-",
			       (long long)json_integer_value(json_object_get(p, "rail")),
			       (long long)json_integer_value(json_object_get(p, "plane")));
			json_array_foreach(json_object_get(p, "gids"), k, g)
				printf("    gid %3lld  %-8s %-40s %s\n",
				       (long long)json_integer_value(json_object_get(g, "index")),
				       json_string_value(json_object_get(g, "type")),
				       json_string_value(json_object_get(g, "gid")),
				       json_string_value(json_object_get(g, "ip")) ?
				       json_string_value(json_object_get(g, "ip")) : "");
		}
	}
}

int cmd_devices(int argc, const char **argv)
{
	const char *env_map = getenv("FABSCOPE_RAIL_MAP"), *map_path = env_map;
	int json = 0, nargs, rc, n = 0, i, k, nmap = 0;
	const struct opt opts[] = {
		OPT_BOOL(0, "json", &json, "print one JSON object instead of text"),
		OPT_FILE(0, "rail-map", &map_path, "FILE", "rail and plane of each device/port: lines 'DEVICE[/PORT] rail=N [plane=N]' (default: $FABSCOPE_RAIL_MAP, else inferred)"),
		OPT_END(),
	};
	struct ibv_device **list;
	struct rail_map *map = NULL;
	struct dev_ent *ents;
	json_t *all, *devs;
	char src[600];

	rc = opts_parse(argc, argv, opts, devices_usage, devices_about, &nargs);
	if (rc)
		return rc == OPTS_HELP ? 0 : -rc;
	if (nargs)
		return -fs_err_usage("devices takes no arguments");
	if (map_path && *map_path && (rc = read_map(map_path, map_path == env_map, &map, &nmap)))
		return -rc;
	if (map_path && *map_path && !nmap)
		fs_warn("the rail map %s has no lines: rails and planes are inferred", map_path);
	list = vb_device_list(&n, src, sizeof(src));
	if (!list) {
		free(map);
		if (json)
			no_rdma_json(src);
		return -fs_err_env("%s", src);
	}
	ents = calloc((size_t)n, sizeof(*ents));
	for (i = 0; ents && i < n; i++) {
		ents[i].dev = list[i];
		snprintf(ents[i].name, sizeof(ents[i].name), "%s", ibv_get_device_name(list[i]));
		pci_of(ents[i].name, ents[i].pci, sizeof(ents[i].pci));
	}
	if (!ents) {
		ibv_free_device_list(list);
		free(map);
		return -fs_err_env("out of memory");
	}
	qsort(ents, (size_t)n, sizeof(*ents), by_pci);
	if (nmap)
		snprintf(src, sizeof(src), "from %s", map_path);
	else
		snprintf(src, sizeof(src), "inferred: devices in PCI order (by name without one) are rails 0..%d, port p is plane p-1",
			 n - 1);
	devs = json_array();
	all = json_pack("{s:s, s:s, s:o}", "schema", "fabscope.devices/1", "rail_map", src,
			"devices", devs);
	for (i = 0; i < n; i++) {
		struct ibv_context *ctx = ibv_open_device(ents[i].dev);
		struct ibv_device_attr da;
		json_t *d, *ports;
		char drv[64] = "", path[256], link[512];
		ssize_t ln;
		int p, bad = ctx ? ibv_query_device(ctx, &da) : errno ? errno : ENODEV;

		if (bad)	/* (ibv_query_device returns the errno value) */
			fs_warn("cannot %s %s: %s", ctx ? "query" : "open", ents[i].name,
				strerror(bad > 0 ? bad : EIO));
		for (k = 0; k < nmap; k++)	/* its lines name a device that is here */
			if (!strcmp(map[k].dev, ents[i].name)) {
				map[k].dev_here = 1;
				map[k].used |= !!bad;	/* (its ports cannot be told) */
			}
		if (bad) {
			if (ctx)
				ibv_close_device(ctx);
			continue;
		}
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/driver", ents[i].name);
		ln = readlink(path, link, sizeof(link) - 1);
		if (ln > 0) {
			link[ln] = 0;
			snprintf(drv, sizeof(drv), "%.63s", strrchr(link, '/') ? strrchr(link, '/') + 1 : link);
		} else {
			sysfs_str(ents[i].name, "parent", link, sizeof(link));
			snprintf(drv, sizeof(drv), "%s", link[0] ? "rxe (software)" : "?");
		}
		sysfs_str(ents[i].name, "device/numa_node", link, sizeof(link));
		ports = json_array();
		d = json_pack("{s:s, s:s, s:s, s:i, s:s, s:i, s:o}", "device", ents[i].name,
			      "pci", ents[i].pci[0] ? ents[i].pci : "-", "driver", drv,
			      "numa_node", link[0] ? atoi(link) : -1,
			      "fw_ver", da.fw_ver, "ports_total", da.phys_port_cnt, "ports", ports);
		for (p = 1; p <= da.phys_port_cnt; p++) {
			json_t *pj = port_json(ctx, ents[i].name, p);
			struct rail_map *m = nmap ? map_line(map, nmap, ents[i].name, p) : NULL;
			int rail = i, plane = p - 1;

			if (m)	/* (also by a port that cannot be queried: port_json said why) */
				m->used = 1;
			if (!pj)
				continue;
			if (nmap) {
				rail = m ? m->rail : -1;
				plane = !m ? -1 : m->plane >= 0 ? m->plane : p - 1;
				if (!m)
					fs_warn("%s port %d is not in the rail map %s: rail and plane -1",
						ents[i].name, p, map_path);
			}
			json_object_set_new(pj, "rail", json_integer(rail));
			json_object_set_new(pj, "plane", json_integer(plane));
			json_array_append_new(ports, pj);
		}
		json_array_append_new(devs, d);
		ibv_close_device(ctx);
	}
	if (json) {
		char *s = json_dumps(all, JSON_INDENT(2));

		printf("%s\n", s ? s : "{}");
		free(s);
	} else {
		print_text(all);
	}
	for (k = 0; k < nmap; k++) {
		if (map[k].used)
			continue;
		if (!map[k].dev_here)
			fs_warn("%s:%d: no device '%s' here: the line is not used", map_path, map[k].line,
				map[k].dev);
		else if (map[k].port)
			fs_warn("%s:%d: '%s' has no port %d: the line is not used", map_path, map[k].line,
				map[k].dev, map[k].port);
		else
			fs_warn("%s:%d: every port of '%s' has a line of its own: the line is not used",
				map_path, map[k].line, map[k].dev);
	}
	json_decref(all);
	free(ents);
	free(map);
	ibv_free_device_list(list);
	return 0;
}

#else	/* !HAVE_VERBS */

int cmd_devices(int argc, const char **argv)
{
	static const char why[] = "this fabscope was built without rdma-core (libibverbs): install libibverbs-dev and rebuild";
	int i;

	for (i = 1; i < argc; i++)	/* --json: a document all the same */
		if (!strcmp(argv[i], "--json")) {
			no_rdma_json(why);
			break;
		}
	return -fs_err_env("%s", why);
}

#endif
