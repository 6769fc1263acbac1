/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hostfile and the plan's nodes: reading a hostfile, anonymous nodes
 * and those agents bring, finding a node by name, a node's endpoints.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/names.h"
#include "../core/slurp.h"
#include "plan-int.h"

int plan_ip_ok(const char *s)
{
	unsigned char a[16];

	return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

/* qsort_r's order of node indices by name; ctx: the plan */
static int name_cmp(const void *a, const void *b, void *ctx)
{
	const struct plan *p = ctx;

	return fs_name_cmp(p->nodes[*(const int *)a].name, p->nodes[*(const int *)b].name);
}

/* p->by_name: node indices sorted by name; returns 1 + the index of a
 * duplicate name, or 0 */
static int build_index(struct plan *p)
{
	int i;

	free(p->by_name);
	p->by_name_alloc = (size_t)(p->nnodes ? p->nnodes : 1);
	p->by_name = malloc(p->by_name_alloc * sizeof(int));
	for (i = 0; i < p->nnodes; i++)
		p->by_name[i] = i;
	qsort_r(p->by_name, (size_t)p->nnodes, sizeof(int), name_cmp, p);
	for (i = 1; i < p->nnodes; i++)
		if (!strcmp(p->nodes[p->by_name[i - 1]].name, p->nodes[p->by_name[i]].name))
			return 1 + p->by_name[i];
	return 0;
}

static int ep_cmp(const void *a, const void *b)
{
	const struct plan_endpoint *x = a, *y = b;

	return x->rail != y->rail ? x->rail - y->rail : x->plane - y->plane;
}

int plan_hostfile(struct plan *p, const char *path, const char *text)
{
	char *own = NULL, *dup, *line, *save = NULL;
	int lineno = 0, rc = 0;

	if (!text) {
		own = fs_slurp(path, PLAN_FILE_MAX);
		if (!own)
			return fs_err_read("hostfile", path, errno);
		text = own;
	}
	free(p->hostfile);
	free(p->hostfile_text);
	p->hostfile = strdup(path);
	p->hostfile_text = strdup(text);
	dup = strdup(text);
	for (line = dup; line && !rc; line = save) {
		char *nl = strchr(line, '\n'), *s, *w, *wsave = NULL;
		struct plan_node *n;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		lineno++;
		if ((s = strchr(line, '#')))
			*s = 0;
		s = plan_trim(line);
		if (!*s)
			continue;
		if (FS_ALLOC_GROW(p->nodes, (size_t)p->nnodes + 1, p->nodes_alloc)) {
			rc = fs_err_env("out of memory reading %s", path);
			break;
		}
		n = &p->nodes[p->nnodes];
		memset(n, 0, sizeof(*n));
		w = strtok_r(s, " \t", &wsave);
		if (strchr(w, '=') || w[0] == '-') {	/* (a name goes to the agent's --name) */
			rc = fs_err_usage("%s:%d: a line starts with the node's name, not '%s'", path, lineno, w);
			break;
		}
		if (!plan_name_ok(w)) {
			rc = fs_err_usage("%s:%d: '%s' is not a node name: give a host name (letters, digits, '.', '_', "
					  "':', '-'; at most %d bytes)", path, lineno, w, PLAN_NAME_MAX);
			break;
		}
		n->name = strdup(w);
		p->nnodes++;
		while (!rc && (w = strtok_r(NULL, " \t", &wsave))) {
			char *eq = strchr(w, '='), *k = w, *v;
			int rail, plane = 0, used = 0;

			if (!eq) {
				rc = fs_err_usage("%s:%d: '%s' is not key=value", path, lineno, w);
				break;
			}
			*eq = 0;
			v = eq + 1;
			if (!strcmp(k, "netns")) {
				n->netns = strdup(v);
			} else if (!strcmp(k, "leaf") || !strcmp(k, "pod")) {
				char **to = !strcmp(k, "leaf") ? &n->leaf : &n->pod;

				if (!plan_name_ok(v)) {
					rc = fs_err_usage("%s:%d: %s=%s is not a switch name: give letters, digits, '.', '_', "
							  "':', '-' (at most %d bytes)", path, lineno, k, v, PLAN_NAME_MAX);
					break;
				}
				if (*to) {
					rc = fs_err_usage("%s:%d: %s given twice for %s", path, lineno, k, n->name);
					break;
				}
				*to = strdup(v);
			} else if (!strcmp(k, "ssh")) {
				if (!plan_ssh_dest_ok(v)) {
					rc = fs_err_usage("%s:%d: ssh=%s is not an ssh destination: give [USER@]HOST "
							  "(a host name, an IPv4 address or [IPv6])", path, lineno, v);
					break;
				}
				n->ssh = strdup(v);
			} else if ((sscanf(k, "rail%d/%d%n", &rail, &plane, &used) == 2 && !k[used]) ||
				   (plane = 0, sscanf(k, "rail%d%n", &rail, &used) == 1 && !k[used])) {
				int i;

				if (!fs_lane_ok(rail, plane) || !*v) {
					rc = fs_err_usage("%s:%d: %s=%s: rails are 0..%d, planes 0..%d, and an address is needed",
							  path, lineno, k, v, FS_MAX_RAILS - 1, FS_MAX_PLANES - 1);
					break;
				}
				if (!plan_ip_ok(v)) {
					rc = fs_err_usage("%s:%d: %s=%s: not an IP address (the NIC's, e.g. %s=10.100.1.1)",
							  path, lineno, k, v, k);
					break;
				}
				for (i = 0; i < n->nep; i++)
					if (n->ep[i].rail == rail && n->ep[i].plane == plane)
						break;
				if (i < n->nep) {
					rc = fs_err_usage("%s:%d: %s given twice for %s", path, lineno, k, n->name);
					break;
				}
				if (FS_ALLOC_GROW(n->ep, (size_t)n->nep + 1, n->ep_alloc)) {
					rc = fs_err_env("out of memory reading %s", path);
					break;
				}
				n->ep[n->nep].rail = rail;
				n->ep[n->nep].plane = plane;
				n->ep[n->nep].ip = strdup(v);
				n->nep++;
			} else {
				rc = fs_err_usage("%s:%d: unknown key '%s': a node has netns=, ssh=, railK=, railK/P=, leaf= "
						  "and pod=",
						  path, lineno, k);
			}
		}
		if (!rc && n->nep > 1)
			qsort(n->ep, (size_t)n->nep, sizeof(*n->ep), ep_cmp);
	}
	free(dup);
	free(own);
	if (!rc && !p->nnodes)
		rc = fs_err_usage("%s: no nodes: write one node per line, e.g. 'h1 rail0=10.0.0.1'", path);
	if (!rc && (rc = build_index(p)) > 0)
		rc = fs_err_usage("%s: node '%s' is listed twice", path, p->nodes[rc - 1].name);
	return rc;
}

int plan_nodes_anon(struct plan *p, int n)
{
	int i;

	p->nodes = calloc((size_t)n, sizeof(*p->nodes));
	if (!p->nodes)
		return fs_err_env("out of memory for %d nodes", n);
	p->nodes_alloc = (size_t)n;
	p->nnodes = n;
	for (i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "node%d", i);
		p->nodes[i].name = strdup(name);
	}
	build_index(p);	/* (node0, node1, ...: no name twice) */
	return 0;
}

static int name_char(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '_' || ch == ':' || ch == '-';
}

int plan_name_ok(const char *s)
{
	size_t i;

	if (!s || !*s || !name_char((unsigned char)s[0]) || s[0] == '.' || s[0] == '_' || s[0] == ':' || s[0] == '-')
		return 0;
	for (i = 0; s[i]; i++)
		if (i >= PLAN_NAME_MAX || !name_char((unsigned char)s[i]))
			return 0;
	return 1;
}

int plan_ssh_dest_ok(const char *s)
{
	const char *at = s ? strchr(s, '@') : NULL, *host = at ? at + 1 : s;
	size_t i, n;

	if (!s || !*s || *s == '-' || (at && (at == s || strchr(host, '@'))))
		return 0;
	for (i = 0; at && s + i < at; i++)	/* the user */
		if (!name_char((unsigned char)s[i]) || s[i] == ':')
			return 0;
	n = strlen(host);
	if (n >= 3 && host[0] == '[' && host[n - 1] == ']') {	/* [IPv6] */
		for (i = 1; i < n - 1; i++)
			if (!strchr("0123456789abcdefABCDEF:.", host[i]))
				return 0;
		return 1;
	}
	return plan_name_ok(host) && !strchr(host, ':');
}

int plan_node_add(struct plan *p, const char *name)
{
	int lo = 0, hi = p->nnodes, at;
	struct plan_node *nn;

	while (lo < hi) {	/* name's place in by_name (the search of plan_node_index) */
		int mid = lo + (hi - lo) / 2, c = strcmp(p->nodes[p->by_name[mid]].name, name);

		if (!c)
			return -1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	at = lo;
	if (FS_ALLOC_GROW(p->nodes, (size_t)p->nnodes + 1, p->nodes_alloc) ||
	    FS_ALLOC_GROW(p->by_name, (size_t)p->nnodes + 1, p->by_name_alloc))
		return -1;
	nn = p->nodes;
	memset(&nn[p->nnodes], 0, sizeof(*nn));
	if (!(nn[p->nnodes].name = strdup(name)))
		return -1;
	memmove(p->by_name + at + 1, p->by_name + at, (size_t)(p->nnodes - at) * sizeof(int));
	p->by_name[at] = p->nnodes;
	return p->nnodes++;
}

int plan_node_index(const struct plan *p, const char *name)
{
	int lo = 0, hi = p->nnodes - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = fs_name_cmp(p->nodes[p->by_name[mid]].name, name);

		if (!c)
			return p->by_name[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

const struct plan_endpoint *plan_node_ep(const struct plan_node *n, struct plan_lane l)
{
	int i;

	for (i = 0; i < n->nep; i++)
		if (n->ep[i].rail == l.rail && n->ep[i].plane == l.plane)
			return &n->ep[i];
	return NULL;
}
