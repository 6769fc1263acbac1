/* SPDX-License-Identifier: BSD-2-Clause */
/* fabscope topo show (show.h). */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/names.h"
#include "../core/output.h"
#include "../core/record.h"
#include "../pcap/lldp-listen.h"
#include "lldpd.h"
#include "show.h"

#define ECN_PRIOS 8

/* the first line of SYSFS/class/net/IF/NAME into buf ("" when it cannot be read) */
static void sysfs(const struct discover_opts *o, const char *ifname, const char *name, char *buf, size_t len)
{
	char path[600];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "%s/class/net/%s/%s", o->sysfs, ifname, name);
	if (!(f = fopen(path, "re")))
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	else
		buf[0] = 0;
	fclose(f);
}

/* every interface configured up, but lo, sorted */
static int up_ifaces(const struct discover_opts *o, char ***out, int *n)
{
	char dir[600];
	DIR *d;
	struct dirent *e;
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	snprintf(dir, sizeof(dir), "%s/class/net", o->sysfs);
	if (!(d = opendir(dir)))
		return fs_err_env("cannot list the interfaces (%s): %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		char flags[32];

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lo"))
			continue;
		/* configured up (IFF_UP), carrier or not: a cable pulled from a port is its finding */
		sysfs(o, e->d_name, "flags", flags, sizeof(flags));
		if (!(strtoul(flags, NULL, 16) & 0x1))
			continue;
		if (FS_ALLOC_GROW(*out, (size_t)*n + 1, alloc) || !((*out)[*n] = strdup(e->d_name))) {
			closedir(d);
			return fs_err_env("out of memory listing the interfaces");
		}
		(*n)++;
	}
	closedir(d);
	if (*n > 1)
		qsort(*out, (size_t)*n, sizeof(**out), fs_name_pcmp);
	return 0;
}

static json_t *neighbour_json(const struct lldp *l)
{
	json_t *o = json_pack("{ss,si,ss,si,ss,ss,ss,si}", "sys_name", l->sys_name, "chassis_subtype",
			      l->chassis_subtype, "chassis", l->chassis, "port_subtype", l->port_subtype, "port",
			      l->port, "port_desc", l->port_desc, "sys_desc", l->sys_desc, "ttl", l->ttl);

	if (o && *l->mgmt)
		json_object_set_new(o, "mgmt", json_string(l->mgmt));
	if (o && l->max_frame >= 0)
		json_object_set_new(o, "max_frame", json_integer(l->max_frame));
	return o;
}

/* a number read from sysfs, or null */
static json_t *num(const char *s)
{
	char *end;
	long v;

	if (!*s)
		return json_null();
	v = strtol(s, &end, 10);
	return *end || end == s ? json_null() : json_integer(v);
}

static json_t *text(const char *s)
{
	return *s ? json_string(s) : json_null();
}

/* the priorities whose ECN enable file says 1 (ecn/roce_np/enable/P, mlx5): [3], [], or null
 * when there is no such directory */
static json_t *ecn_prios(const struct discover_opts *o, const char *ifname, const char *role)
{
	json_t *a = NULL;
	int p;

	for (p = 0; p < ECN_PRIOS; p++) {
		char name[64], v[16];

		snprintf(name, sizeof(name), "ecn/%s/enable/%d", role, p);
		sysfs(o, ifname, name, v, sizeof(v));
		if (!*v)
			continue;
		if (!a)
			a = json_array();
		if (atoi(v) == 1)
			json_array_append_new(a, json_integer(p));
	}
	return a ? a : json_null();
}

/* the NIC's firmware: device/infiniband/DEV/fw_ver (an RDMA NIC's), "" else */
static void firmware(const struct discover_opts *o, const char *ifname, char *buf, size_t len)
{
	char dir[600];
	DIR *d;
	struct dirent *e;

	buf[0] = 0;
	snprintf(dir, sizeof(dir), "%s/class/net/%s/device/infiniband", o->sysfs, ifname);
	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d)) && !*buf) {
		char name[300];

		if (e->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "device/infiniband/%s/fw_ver", e->d_name);
		sysfs(o, ifname, name, buf, len);
	}
	closedir(d);
}

static void driver(const struct discover_opts *o, const char *ifname, char *buf, size_t len)
{
	char path[600], link[512];
	const char *base;
	size_t blen;
	ssize_t r;

	buf[0] = 0;
	snprintf(path, sizeof(path), "%s/class/net/%s/device/driver", o->sysfs, ifname);
	if ((r = readlink(path, link, sizeof(link) - 1)) <= 0)
		return;
	link[r] = 0;
	base = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	blen = strlen(base) < len ? strlen(base) : len - 1;
	memcpy(buf, base, blen);
	buf[blen] = 0;
}

/* what sysfs says of one interface (the LLDP neighbour is added by the caller) */
static json_t *port_facts(const struct discover_opts *o, const char *ifname)
{
	char state[32], carrier[8], speed[32], mtu[32], drv[128], fw[128], pspeed[64], pwidth[16], numa[16];
	json_t *p;

	sysfs(o, ifname, "operstate", state, sizeof(state));
	sysfs(o, ifname, "carrier", carrier, sizeof(carrier));
	sysfs(o, ifname, "speed", speed, sizeof(speed));
	sysfs(o, ifname, "mtu", mtu, sizeof(mtu));
	sysfs(o, ifname, "device/current_link_speed", pspeed, sizeof(pspeed));
	sysfs(o, ifname, "device/current_link_width", pwidth, sizeof(pwidth));
	sysfs(o, ifname, "device/numa_node", numa, sizeof(numa));
	driver(o, ifname, drv, sizeof(drv));
	firmware(o, ifname, fw, sizeof(fw));
	p = json_pack("{ss,ss,so,so,so}", "iface", ifname, "state", state,
		      "carrier", !strcmp(carrier, "1") ? json_true() : !strcmp(carrier, "0") ? json_false() : json_null(),
		      "speed_mbps", *speed && atoi(speed) > 0 ? json_integer(atoi(speed)) : json_null(), "mtu", num(mtu));
	json_object_set_new(p, "settings", json_pack("{so,so,so,so,so,so,so,so,so}", "driver", text(drv),
			    "firmware", text(fw), "pcie_speed", text(pspeed), "pcie_width", num(pwidth),
			    "numa_node", num(numa), "ecn_np", ecn_prios(o, ifname, "roce_np"),
			    "ecn_rp", ecn_prios(o, ifname, "roce_rp"), "pfc", json_null(), "trust", json_null()));
	return p;
}

/* where the neighbours come from: "lldpd", "listen" or "none" */
static const char *source_of(const struct discover_opts *o)
{
	if (strcmp(o->source, "auto"))
		return o->source;
	return lldpd_running(o->lldpd_socket) ? "lldpd" : "listen";
}

static int neighbours(const struct discover_opts *o, const char *src, struct lldp_heard *h, int n, int quiet)
{
	if (!strcmp(src, "none"))
		return 0;
	if (!strcmp(src, "lldpd"))
		return lldpd_neighbours(o->lldpd_socket, h, n);
	if (!quiet)
		fprintf(stderr, "%s: listening for LLDP on %d interface%s for up to %g s\n", fs_progname(), n,
			n == 1 ? "" : "s", o->listen_s);
	return lldp_listen(h, n, o->listen_s);
}

int topo_observe(const struct discover_opts *o, const char *const *ifaces, int n, int quiet, json_t **doc)
{
	struct lldp_heard *h = NULL;
	char **own = NULL, host[256] = "";
	const char *src = source_of(o);
	json_t *ports = NULL;
	int i, rc = 0, nown = 0;

	*doc = NULL;
	if (!n && (rc = up_ifaces(o, &own, &nown)))
		return rc;
	if (own)
		n = nown;
	if (!n) {
		free(own);
		return fs_err_env("no interface is up here (but lo): give -i IFACE");
	}
	if (!(h = calloc((size_t)n, sizeof(*h)))) {
		rc = fs_err_env("out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		h[i].ifname = own ? own[i] : ifaces[i];
	if ((rc = neighbours(o, src, h, n, quiet)))
		goto out;
	if (!o->node)
		gethostname(host, sizeof(host) - 1);
	ports = json_array();
	for (i = 0; i < n; i++) {
		json_t *p = port_facts(o, h[i].ifname);

		json_object_set_new(p, "listened", json_boolean(strcmp(src, "none")));
		json_object_set_new(p, "neighbor", h[i].heard ? neighbour_json(&h[i].l) : json_null());
		json_object_set_new(p, "bad_frames", json_integer(h[i].bad));
		json_array_append_new(ports, p);
	}
	*doc = json_pack("{ss,ss,ss,sf,sO}", "schema", "fabscope.topo-show/1", "node", o->node ? o->node : host,
			 "source", src, "listen_s", o->listen_s, "ports", ports);
	if (!*doc)
		rc = fs_err_env("out of memory");
out:
	json_decref(ports);
	if (own)
		for (i = 0; i < n; i++)
			free(own[i]);
	free(own);
	free(h);
	return rc;
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s && *s ? s : NULL;
}

static void print_port(json_t *p, const char *src, double listen_s)
{
	json_t *nb = json_object_get(p, "neighbor"), *sp = json_object_get(p, "speed_mbps"), *mtu = json_object_get(p, "mtu");

	printf("%s: %s, ", jstr(p, "iface"), jstr(p, "state") ? jstr(p, "state") : "?");
	if (json_is_integer(sp))
		printf("%lld Mb/s, ", (long long)json_integer_value(sp));
	else
		printf("? Mb/s, ");
	if (json_is_integer(mtu))
		printf("MTU %lld: ", (long long)json_integer_value(mtu));
	else
		printf("MTU ?: ");
	if (!strcmp(src, "none")) {
		printf("neighbour not asked for (--source none)\n");
		return;
	}
	if (!json_is_object(nb)) {
		if (!strcmp(src, "lldpd"))
			printf("lldpd has no neighbour on it\n");
		else
			printf("no LLDP heard in %g s%s\n", listen_s,
			       json_integer_value(json_object_get(p, "bad_frames")) ? " (only malformed LLDP frames)" :
			       " (the switch port sends none, or nothing is cabled: see the link state)");
		return;
	}
	printf("%s port %s", jstr(nb, "sys_name") ? jstr(nb, "sys_name") : "(no system name)", json_string_value(json_object_get(nb, "port")));
	if (jstr(nb, "port_desc"))
		printf(" (%s)", jstr(nb, "port_desc"));
	printf(", chassis %s", json_string_value(json_object_get(nb, "chassis")));
	if (json_is_integer(json_object_get(nb, "max_frame")))
		printf(", max frame %lld", (long long)json_integer_value(json_object_get(nb, "max_frame")));
	printf("\n");
}

/* a result record per port (test "topology"): the port as topo show --json has it */
static int show_records(json_t *doc)
{
	struct out out;
	json_t *p;
	size_t i;

	out_init(&out, OUT_JSON, stdout);
	json_array_foreach(json_object_get(doc, "ports"), i, p) {
		json_t *rec = record_new("topology");

		json_object_set_new(rec, "status", json_string("ok"));
		json_object_set_new(rec, "src", json_pack("{sO}", "node", json_object_get(doc, "node")));
		json_object_set_new(rec, "source", json_copy(json_object_get(doc, "source")));
		json_object_set_new(rec, "listen_s", json_copy(json_object_get(doc, "listen_s")));
		json_object_set(rec, "port", p);
		out_record(&out, rec);
		json_decref(rec);
	}
	return out_finish(&out);
}

int topo_show(const struct discover_opts *o, const char *const *ifaces, int n, int json)
{
	json_t *doc, *p;
	size_t i;
	int rc = topo_observe(o, ifaces, n, json, &doc);

	if (rc)
		return rc;
	if (json == 2) {
		rc = show_records(doc);
		json_decref(doc);
		return rc;
	}
	if (json) {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else {
		json_array_foreach(json_object_get(doc, "ports"), i, p)
			print_port(p, jstr(doc, "source"), o->listen_s);
	}
	json_decref(doc);
	return 0;
}
