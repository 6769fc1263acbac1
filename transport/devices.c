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
#include <unistd.h>

#include "../core/builtin.h"
#include "../core/error.h"
#include "../core/options.h"

#ifdef HAVE_VERBS
#include <arpa/inet.h>
#include <jansson.h>
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
};

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

static int read_map(const char *path, int from_env, struct rail_map **out, int *n)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int lineno = 0;

	*out = NULL;
	*n = 0;
	if (!f)	/* not there: a wrong argument (2); there but unreadable: 3 */
		return fs_err(errno == ENOENT || errno == ENOTDIR ? FS_EXIT_USAGE : FS_EXIT_ENV,
			      "cannot read rail map '%s'%s: %s", path,
			      from_env ? " (named by $FABSCOPE_RAIL_MAP)" : "", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct rail_map m = { .port = 0, .rail = -1, .plane = -1 };
		char *tok, *save = NULL, *p = strchr(line, '#');
		struct rail_map *nm;

		lineno++;
		if (p)
			*p = 0;
		tok = strtok_r(line, " \t\r\n", &save);
		if (!tok)
			continue;
		m.line = lineno;
		p = strchr(tok, '/');
		if (p) {
			char *end;
			long v;

			*p = 0;
			errno = 0;
			v = strtol(p + 1, &end, 10);
			if (errno || end == p + 1 || *end || v < 1 || v > 255) {
				fclose(f);
				free(*out);
				return fs_err_usage("%s:%d: bad port '%s' of '%s': a port number, 1 to 255",
						    path, lineno, p + 1, tok);
			}
			m.port = (int)v;
		}
		snprintf(m.dev, sizeof(m.dev), "%s", tok);
		while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
			char *end;
			long v;

			if (!strncmp(tok, "rail=", 5))
				v = strtol(tok + 5, &end, 10), m.rail = (int)v;
			else if (!strncmp(tok, "plane=", 6))
				v = strtol(tok + 6, &end, 10), m.plane = (int)v;
			else
				end = tok, v = -1;
			if (*end || v < 0 || v > 4095) {
				fclose(f);
				free(*out);
				return fs_err_usage("%s:%d: cannot read '%s': expected DEVICE[/PORT] rail=N [plane=N]",
						    path, lineno, tok);
			}
		}
		if (m.rail < 0) {
			fclose(f);
			free(*out);
			return fs_err_usage("%s:%d: no rail= for '%s'", path, lineno, m.dev);
		}
		nm = realloc(*out, (size_t)(*n + 1) * sizeof(*nm));
		if (!nm) {
			fclose(f);
			free(*out);
			return fs_err_env("out of memory");
		}
		*out = nm;
		nm[(*n)++] = m;
	}
	fclose(f);
	return 0;
}

static const char *gid_type_str(uint32_t t)
{
	return t == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : t == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1" : "IB";
}

static json_t *port_json(struct ibv_context *ctx, const char *dev, int p)
{
	static const int width_x[] = { 0, 1, 4, 0, 8, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 2 };
	struct ibv_gid_entry e[256];
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
	n = ibv_query_gid_table(ctx, e, 256, 0);
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
		OPT_STRING(0, "rail-map", &map_path, "FILE", "rail and plane of each device/port: lines 'DEVICE[/PORT] rail=N [plane=N]' (default: $FABSCOPE_RAIL_MAP, else inferred)"),
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
		int p;

		if (!ctx || ibv_query_device(ctx, &da)) {
			fs_warn("cannot open %s: %s", ents[i].name, strerror(errno));
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
			int rail = i, plane = p - 1;

			if (!pj)
				continue;
			if (nmap) {
				rail = plane = -1;
				for (k = 0; k < nmap; k++)
					if (!strcmp(map[k].dev, ents[i].name) && (!map[k].port || map[k].port == p)) {
						rail = map[k].rail;
						plane = map[k].plane >= 0 ? map[k].plane : p - 1;
						map[k].used = 1;
					}
				if (rail < 0)
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
	for (k = 0; k < nmap; k++)
		if (!map[k].used)
			fs_warn("%s:%d: no device '%s'%s here: the line is not used", map_path, map[k].line,
				map[k].dev, map[k].port ? " with that port" : "");
	json_decref(all);
	free(ents);
	free(map);
	ibv_free_device_list(list);
	return 0;
}

#else	/* !HAVE_VERBS */

int cmd_devices(int argc, const char **argv)
{
	(void)argc;
	(void)argv;
	return -fs_err_env("this fabscope was built without rdma-core (libibverbs): install libibverbs-dev and rebuild");
}

#endif
