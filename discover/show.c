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
#include "../core/options.h"
#include "../pcap/lldp-listen.h"
#include "show.h"

/* the first line of /sys/class/net/IF/NAME into buf ("" when it cannot be read) */
static void sysfs(const char *ifname, const char *name, char *buf, size_t len)
{
	char path[300];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, name);
	if (!(f = fopen(path, "r")))
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	else
		buf[0] = 0;
	fclose(f);
}

/* every interface that is up (operstate up or unknown), but lo, sorted */
static int up_ifaces(char ***out, int *n)
{
	DIR *d = opendir("/sys/class/net");
	struct dirent *e;
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return fs_err_env("cannot list the interfaces (/sys/class/net): %s", strerror(errno));
	while ((e = readdir(d))) {
		char state[32];

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lo"))
			continue;
		sysfs(e->d_name, "operstate", state, sizeof(state));
		if (strcmp(state, "up") && strcmp(state, "unknown"))
			continue;
		if (FS_ALLOC_GROW(*out, (size_t)*n + 1, alloc) || !((*out)[*n] = strdup(e->d_name))) {
			closedir(d);
			return fs_err_env("out of memory listing the interfaces");
		}
		(*n)++;
	}
	closedir(d);
	for (int i = 1; i < *n; i++)	/* a few names: insertion */
		for (int j = i; j > 0 && strcmp((*out)[j - 1], (*out)[j]) > 0; j--) {
			char *t = (*out)[j];

			(*out)[j] = (*out)[j - 1];
			(*out)[j - 1] = t;
		}
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

static void print_port(const struct lldp_heard *h, const char *state, const char *speed, const char *mtu,
		       double listen_s)
{
	printf("%s: %s, %s Mb/s, MTU %s: ", h->ifname, *state ? state : "?", *speed ? speed : "?", *mtu ? mtu : "?");
	if (!h->heard) {
		printf("no LLDP heard in %g s%s\n", listen_s,
		       h->bad ? " (only malformed LLDP frames)" :
				" (the switch port sends none, or nothing is cabled: see the link state)");
		return;
	}
	printf("%s port %s", *h->l.sys_name ? h->l.sys_name : "(no system name)", h->l.port);
	if (*h->l.port_desc)
		printf(" (%s)", h->l.port_desc);
	printf(", chassis %s", h->l.chassis);
	if (h->l.max_frame >= 0)
		printf(", max frame %d", h->l.max_frame);
	printf("\n");
}

int topo_show(const struct opt_list *ifaces, double listen_s, int json)
{
	struct lldp_heard *h = NULL;
	char **own = NULL, host[256] = "";
	int n = ifaces ? ifaces->n : 0, i, rc = 0;
	json_t *ports = NULL;

	if (!n && (rc = up_ifaces(&own, &n)))
		return rc;
	if (!n) {
		free(own);
		return fs_err_env("no interface is up here (but lo): give -i IFACE");
	}
	if (!(h = calloc((size_t)n, sizeof(*h)))) {
		rc = fs_err_env("out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		h[i].ifname = own ? own[i] : ifaces->v[i];
	if (!json)
		fprintf(stderr, "%s: listening for LLDP on %d interface%s for up to %g s\n", fs_progname(), n,
			n == 1 ? "" : "s", listen_s);
	if ((rc = lldp_listen(h, n, listen_s)))
		goto out;
	gethostname(host, sizeof(host) - 1);
	ports = json_array();
	for (i = 0; i < n; i++) {
		char state[32], speed[32], mtu[32];

		sysfs(h[i].ifname, "operstate", state, sizeof(state));
		sysfs(h[i].ifname, "speed", speed, sizeof(speed));
		sysfs(h[i].ifname, "mtu", mtu, sizeof(mtu));
		if (json)
			json_array_append_new(ports, json_pack("{ss,ss,so,so,so,si}", "iface", h[i].ifname, "state", state,
				"speed_mbps", *speed && atoi(speed) > 0 ? json_integer(atoi(speed)) : json_null(),
				"mtu", *mtu ? json_integer(atoi(mtu)) : json_null(),
				"neighbor", h[i].heard ? neighbour_json(&h[i].l) : json_null(), "bad_frames", h[i].bad));
		else
			print_port(&h[i], state, speed, mtu, listen_s);
	}
	if (json) {
		json_t *doc = json_pack("{ss,ss,sf,sO}", "schema", "fabscope.topo-show/1", "node", host, "listen_s",
					listen_s, "ports", ports);

		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(doc);
	}
out:
	json_decref(ports);
	if (own)
		for (i = 0; i < n; i++)
			free(own[i]);
	free(own);
	free(h);
	return rc;
}
