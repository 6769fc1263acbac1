/* SPDX-License-Identifier: BSD-2-Clause */
/* LLDP neighbours from a running lldpd (lldpd.h). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/testhook.h"
#include "lldpd.h"

#define LLDPCLI_OUT_MAX (16u << 20)	/* a switch with thousands of neighbours is well under */
#define LLDPCLI_TIMEOUT_MS 15000

int lldpd_running(const char *socket_path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ok;

	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return 0;
	memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return 0;
	ok = !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return ok;
}

/* s (from lldpd, from the wire) into out, printable: other bytes as \xNN */
static void printable(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; s && *s && o + 5 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", c);
	}
	out[o] = 0;
}

/* json0 puts every value in an array of objects: v[0].key */
static json_t *first(json_t *v, const char *key)
{
	json_t *e = json_is_array(v) ? json_array_get(v, 0) : v;

	return json_is_object(e) ? json_object_get(e, key) : NULL;
}

static const char *first_value(json_t *v, const char *key)
{
	json_t *x = first(v, key);

	return json_string_value(first(x, "value"));
}

/* lldpd's names of the ID subtypes, as 802.1AB numbers them */
static int subtype(const char *type, int chassis)
{
	static const struct {
		const char *name;
		int chassis, port;
	} t[] = {
		{ "ifalias", 2, 1 }, { "mac", 4, 3 }, { "ip", 5, 4 }, { "ifname", 6, 5 }, { "local", 7, 7 },
	};
	size_t i;

	for (i = 0; type && i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(type, t[i].name))
			return chassis ? t[i].chassis : t[i].port;
	return -1;
}

/* s as a whole number from lo to hi, else -1 (what lldpcli printed is the wire's: checked, no atoi) */
static int num_in(const char *s, int lo, int hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return !errno && end != s && !*end && v >= lo && v <= hi ? (int)v : -1;
}

static void fill(struct lldp *l, json_t *itf)
{
	json_t *ch = first(itf, "chassis"), *pt = first(itf, "port"), *ttl;
	json_t *cid = first(ch, "id"), *pid = first(pt, "id");
	const char *mfs;

	memset(l, 0, sizeof(*l));
	l->kind = LLDP_OK;
	l->max_frame = -1;
	l->ttl = -1;
	l->chassis_subtype = subtype(json_string_value(first(cid, "type")), 1);
	l->port_subtype = subtype(json_string_value(first(pid, "type")), 0);
	printable(json_string_value(first(cid, "value")), l->chassis, sizeof(l->chassis));
	printable(json_string_value(first(pid, "value")), l->port, sizeof(l->port));
	printable(first_value(ch, "name"), l->sys_name, sizeof(l->sys_name));
	printable(first_value(ch, "descr"), l->sys_desc, sizeof(l->sys_desc));
	printable(first_value(pt, "descr"), l->port_desc, sizeof(l->port_desc));
	printable(first_value(ch, "mgmt-ip"), l->mgmt, sizeof(l->mgmt));
	if ((ttl = first(pt, "ttl")) && first_value(pt, "ttl"))
		l->ttl = num_in(first_value(pt, "ttl"), 0, 65535);	/* (a 16-bit field of the LLDPDU) */
	if ((mfs = first_value(pt, "mfs")))
		l->max_frame = num_in(mfs, 0, 65535);
}

int lldpd_parse_json0(const char *text, size_t len, struct lldp_heard *h, int n)
{
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL), *itfs, *itf;
	size_t k;
	int i;

	for (i = 0; i < n; i++)
		h[i].heard = h[i].bad = 0;
	if (!json_is_object(doc) || !json_is_array(json_object_get(doc, "lldp"))) {
		json_decref(doc);
		return -1;
	}
	itfs = first(json_object_get(doc, "lldp"), "interface");
	json_array_foreach(itfs, k, itf) {
		const char *name = json_string_value(json_object_get(itf, "name"));

		for (i = 0; name && i < n; i++)
			if (!strcmp(h[i].ifname, name) && !h[i].heard) {
				fill(&h[i].l, itf);
				h[i].heard = 1;
			}
	}
	json_decref(doc);
	return 0;
}

/* lldpcli's stdout into *buf (at most LLDPCLI_OUT_MAX): 0, or -FS_EXIT_ENV said */
static int run_lldpcli(const char *socket_path, char **buf, size_t *len)
{
	const char *argv[] = { "lldpcli", "-u", socket_path, "-f", "json0", "show", "neighbors", NULL };
	const char *hook = fs_test_env("FABSCOPE_TEST_LLDPCLI_TIMEOUT_MS");
	int timeout_ms = hook && atoi(hook) > 0 ? atoi(hook) : LLDPCLI_TIMEOUT_MS;
	uint64_t deadline = clock_ns() + (uint64_t)timeout_ms * 1000000ull;
	int p[2], st = 0, rc = 0;
	size_t cap = 65536;
	pid_t pid;

	*len = 0;
	if (pipe2(p, O_CLOEXEC) || !(*buf = malloc(cap)))
		return fs_err_env("cannot run lldpcli: %s", strerror(errno));
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return fs_err_env("cannot run lldpcli: fork: %s", strerror(errno));
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(p[1], 1);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);	/* (a read never waits: poll does, to the deadline) */
	for (;;) {
		struct pollfd pf = { p[0], POLLIN, 0 };
		uint64_t now = clock_ns();
		ssize_t r;
		int pr;

		if (now >= deadline) {
			rc = fs_err_env("lldpcli gave no answer in %g s (lldpd at %s)", timeout_ms / 1000.0, socket_path);
			break;
		}
		pr = poll(&pf, 1, (int)((deadline - now) / 1000000 + 1));
		if (pr < 0 && errno != EINTR) {
			rc = fs_err_env("cannot read lldpcli: poll: %s", strerror(errno));
			break;
		}
		if (pr <= 0)	/* (a signal, or the time: the deadline is looked at again) */
			continue;
		if (*len + 4096 > cap) {
			char *nb;

			if (cap >= LLDPCLI_OUT_MAX) {
				rc = fs_err_env("lldpcli wrote more than %u MiB: not a neighbour table", LLDPCLI_OUT_MAX >> 20);
				break;
			}
			if (!(nb = realloc(*buf, cap * 2))) {
				rc = fs_err_env("out of memory reading lldpcli");
				break;
			}
			*buf = nb;
			cap *= 2;
		}
		r = read(p[0], *buf + *len, cap - *len - 1);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
	}
	close(p[0]);
	if (rc)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!rc && (!WIFEXITED(st) || WEXITSTATUS(st)))
		rc = fs_err_env("lldpcli -u %s failed (%s %d)%s", socket_path, WIFEXITED(st) ? "exit" : "signal",
				WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
				WIFEXITED(st) && WEXITSTATUS(st) == 127 ? ": is lldpd's lldpcli installed?" : "");
	return rc;
}

int lldpd_neighbours(const char *socket_path, struct lldp_heard *h, int n)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = run_lldpcli(socket_path, &buf, &len);

	if (!rc && lldpd_parse_json0(buf, len, h, n))
		rc = fs_err_env("lldpcli -u %s wrote what is not its json0 neighbour table", socket_path);
	free(buf);
	return rc;
}
