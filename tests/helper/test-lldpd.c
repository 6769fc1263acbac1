/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool lldpd-json0, lldpd-fuzz: discover/lldpd.c's reading of lldpcli's
 * json0 neighbour table (tests/t0225-unit-lldp.t).
 *
 *   lldpd-json0 FILE IFACE...   the neighbour of each IFACE in FILE, a line
 *                               each ("IFACE -" when none), exit 1 when FILE
 *                               is not json0
 *   lldpd-fuzz FILE N SEED      N documents made from FILE: a value of the
 *                               tree replaced by one of another type, a key
 *                               dropped, an array emptied, or bytes changed
 *                               and the text cut; each parsed for the
 *                               interfaces FILE has, every string printable
 *                               and within its buffer; one line of counts
 *   lldpd-eintr DIR             lldpd_neighbours against DIR/ctl, a socket that
 *                               takes lldpcli's connection and never answers,
 *                               and one SIGALRM 100 ms in: it must end at its
 *                               deadline (FABSCOPE_TEST_LLDPCLI_TIMEOUT_MS, a
 *                               test build's), not wait in a read; says after
 *                               how long, exit 0 when it refused
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include "../../core/clock.h"
#include "../../discover/lldpd.h"
#include "test-tool.h"

#define FUZZ_IFACES 8

static int read_all(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "re");
	size_t cap = 1 << 16;

	*len = 0;
	if (!f || !(*text = malloc(cap))) {
		if (f)
			fclose(f);
		fprintf(stderr, "test-tool: cannot read %s\n", path);
		return 1;
	}
	for (;;) {
		size_t r = fread(*text + *len, 1, cap - *len, f);

		*len += r;
		if (*len < cap)
			break;
		if (!(*text = realloc(*text, cap *= 2)))
			abort();
	}
	fclose(f);
	return 0;
}

static void print_heard(const struct lldp_heard *h)
{
	const struct lldp *l = &h->l;

	if (!h->heard) {
		printf("%s -\n", h->ifname);
		return;
	}
	printf("%s sys=%s chassis=%d/%s port=%d/%s desc=%s ttl=%d mgmt=%s max_frame=%d\n", h->ifname,
	       l->sys_name, l->chassis_subtype, l->chassis, l->port_subtype, l->port, l->port_desc, l->ttl,
	       *l->mgmt ? l->mgmt : "-", l->max_frame);
}

static int printable_in(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	if (n == cap)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static int strings_ok(const struct lldp *l)
{
	return printable_in(l->sys_name, sizeof(l->sys_name)) && printable_in(l->chassis, sizeof(l->chassis)) &&
	       printable_in(l->port, sizeof(l->port)) && printable_in(l->port_desc, sizeof(l->port_desc)) &&
	       printable_in(l->sys_desc, sizeof(l->sys_desc)) && printable_in(l->mgmt, sizeof(l->mgmt));
}

/* every value of the tree (depth first), for picking one */
static void collect(json_t *v, json_t **all, size_t *n, size_t cap)
{
	const char *k;
	json_t *e;
	size_t i;

	if (*n < cap)
		all[(*n)++] = v;
	if (json_is_object(v))
		json_object_foreach(v, k, e)
			collect(e, all, n, cap);
	else if (json_is_array(v))
		json_array_foreach(v, i, e)
			collect(e, all, n, cap);
}

static json_t *random_value(uint64_t *rng)
{
	char s[300];
	size_t i, n;

	switch (tool_rand(rng) % 6) {
	case 0: return json_null();
	case 1: return json_integer((json_int_t)tool_rand(rng));
	case 2: return json_array();
	case 3: return json_object();
	case 4: return json_true();
	default:
		n = tool_rand(rng) % sizeof(s);
		for (i = 0; i < n; i++)
			s[i] = (char)(1 + tool_rand(rng) % 255);
		return json_stringn(s, n);
	}
}

/* one structural change somewhere in doc */
static void mutate_tree(json_t *doc, uint64_t *rng)
{
	json_t *all[4096], *v;
	size_t n = 0;
	const char *k;
	json_t *e;

	collect(doc, all, &n, 4096);
	v = all[tool_rand(rng) % n];
	if (json_is_object(v) && json_object_size(v)) {
		size_t pick = tool_rand(rng) % json_object_size(v), i = 0;
		void *tmp;

		json_object_foreach_safe(v, tmp, k, e) {
			if (i++ != pick)
				continue;
			if (tool_rand(rng) % 2)
				json_object_del(v, k);
			else
				json_object_set_new(v, k, random_value(rng));
			break;
		}
	} else if (json_is_array(v) && json_array_size(v)) {
		if (tool_rand(rng) % 2)
			json_array_clear(v);
		else
			json_array_set_new(v, tool_rand(rng) % json_array_size(v), random_value(rng));
	}
}

static int fuzz_parse(const char *text, size_t len, struct lldp_heard *h, int nh, long *counts)
{
	int i, rc = lldpd_parse_json0(text, len, h, nh);

	counts[rc ? 0 : 1]++;
	for (i = 0; i < nh; i++) {
		counts[2] += h[i].heard;
		if (h[i].heard && !strings_ok(&h[i].l)) {
			fprintf(stderr, "lldpd-fuzz: a string left unterminated or unprintable\n");
			return 1;
		}
	}
	return 0;
}

static int fuzz(const char *path, unsigned long n, uint64_t rng)
{
	struct lldp_heard h[FUZZ_IFACES];
	const char *names[FUZZ_IFACES];
	long counts[3] = { 0 };
	json_t *doc, *itf;
	char *text;
	size_t len, i;
	int nh = 0, rc = 0;

	if (read_all(path, &text, &len) || !(doc = json_loadb(text, len, 0, NULL)))
		return 1;
	json_array_foreach(json_object_get(json_array_get(json_object_get(doc, "lldp"), 0), "interface"), i, itf)
		if (nh < FUZZ_IFACES && json_string_value(json_object_get(itf, "name")))
			names[nh++] = json_string_value(json_object_get(itf, "name"));
	memset(h, 0, sizeof(h));
	for (i = 0; i < (size_t)nh; i++)
		h[i].ifname = names[i];
	for (i = 0; i < n && !rc; i++) {
		json_t *m = json_deep_copy(doc);
		char *t;
		size_t tl, k, j;

		for (k = 1 + tool_rand(&rng) % 4; k; k--)
			mutate_tree(m, &rng);
		t = json_dumps(m, 0);
		tl = strlen(t);
		if (tool_rand(&rng) % 4 == 0) {	/* bytes changed, the text cut */
			for (j = 0; j < 1 + tool_rand(&rng) % 8; j++)
				t[tool_rand(&rng) % tl] = (char)tool_rand(&rng);
			tl = tool_rand(&rng) % (tl + 1);
		}
		{
			char *exact = malloc(tl + 1);	/* exactly its length, for ASan */

			memcpy(exact, t, tl);
			rc = fuzz_parse(exact, tl, h, nh, counts);
			free(exact);
		}
		free(t);
		json_decref(m);
	}
	if (!rc)
		printf("lldpd-fuzz: %lu documents: refused %ld, read %ld, neighbours %ld\n", n, counts[0], counts[1],
		       counts[2]);
	json_decref(doc);
	free(text);
	return rc;
}

static void on_alarm(int sig)
{
	(void)sig;	/* (there only to interrupt: poll returns EINTR) */
}

/* lldpd_neighbours against a socket that takes lldpcli's connection and never answers, and one
 * SIGALRM (no SA_RESTART) 100 ms in, while it waits: it must end at its deadline, not wait for
 * ever in a read after the poll that the signal cut short; how long it took */
static int eintr(const char *dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sigaction act = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 0 }, { 0, 100000 } };
	struct lldp_heard h = { .ifname = "eth0" };
	uint64_t t0;
	int fd, rc;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ctl", dir);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 8) || chmod(sa.sun_path, 0666)) {	/* (lldpcli may run as its own user) */
		fprintf(stderr, "test-tool lldpd-eintr: %s: %s\n", sa.sun_path, strerror(errno));
		return 1;
	}
	sigemptyset(&act.sa_mask);
	sigaction(SIGALRM, &act, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	t0 = clock_ns();
	rc = lldpd_neighbours(sa.sun_path, &h, 1);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	printf("lldpd-eintr: %s after %.1f s\n", rc ? "refused" : "answered", (clock_ns() - t0) / 1e9);
	close(fd);
	return rc ? 0 : 1;
}

int tool_lldpd(int argc, const char **argv)
{
	struct lldp_heard h[64];
	unsigned long n, seed;
	char *text;
	size_t len;
	int i, rc;

	if (!strcmp(argv[0], "lldpd-eintr")) {
		if (argc != 2)
			return usage_error("usage: test-tool lldpd-eintr DIR");
		return eintr(argv[1]);
	}
	if (!strcmp(argv[0], "lldpd-fuzz")) {
		if (argc != 4)
			return usage_error("usage: test-tool lldpd-fuzz FILE N SEED");
		if ((rc = tool_parse_ulong("N", argv[2], 10000000, &n)) ||
		    (rc = tool_parse_ulong("SEED", argv[3], ~0ul, &seed)))
			return -rc;
		return fuzz(argv[1], n, seed);
	}
	if (argc < 3 || argc > 66)
		return usage_error("usage: test-tool lldpd-json0 FILE IFACE...");
	if (read_all(argv[1], &text, &len))
		return 1;
	memset(h, 0, sizeof(h));
	for (i = 2; i < argc; i++)
		h[i - 2].ifname = argv[i];
	rc = lldpd_parse_json0(text, len, h, argc - 2);
	free(text);
	if (rc) {
		printf("not json0\n");
		return 1;
	}
	for (i = 0; i < argc - 2; i++)
		print_heard(&h[i]);
	return 0;
}
