/*
 * ci/lb/fabric-lb.c - put a load-balancing mode on one router of ci/netns-fabric, or take it off.
 *
 *   fabric-lb [--obj FILE] NETNS MODE [--gap USEC] [--window USEC] GROUP...
 *   fabric-lb [--obj FILE] NETNS off
 *
 * MODE: spray-rr (spray), spray-random, flowlet, adaptive, lbn (see lb.bpf.c).  GROUP is one
 * ECMP group of the router, IF=NEXTHOP[,IF=NEXTHOP...]: the interfaces its members leave by and
 * the next hop's address on each.  The program (FILE, default lb.bpf.o beside this binary) is
 * loaded once, its maps filled, and attached to the ingress (clsact) of every interface of the
 * namespace but lo; interfaces are numbered in ifindex order for lbn.  It stays attached after
 * this exits.  `off` removes the clsact qdisc of every interface: the kernel's ECMP again.
 * --gap: flowlet/adaptive idle gap (default 500 us); --window: adaptive load window (1000 us).
 *
 * Exit codes: 0 done, 1 failure (load, attach), 2 usage, 3 environment (no such namespace, not
 * root).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lb-common.h"

static const char *prog = "fabric-lb";

static void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("FABRIC_LB_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static const struct {
	const char *name;
	enum lb_mode mode;
} modes[] = {
	{ "spray", LB_SPRAY_RR },   { "spray-rr", LB_SPRAY_RR }, { "spray-random", LB_SPRAY_RANDOM },
	{ "flowlet", LB_FLOWLET }, { "adaptive", LB_ADAPTIVE }, { "lbn", LB_LBN },
	{ "off", LB_OFF },
};

static unsigned long long usec_arg(const char *opt, const char *s)
{
	char *e;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno || e == s || *e || v == 0 || v > 10000000ULL || s[0] == '-')
		die(2, "bad %s '%s' (want microseconds, 1 to 10000000)", opt, s);
	return v;
}

static void enter_netns(const char *ns)
{
	char path[PATH_MAX];
	int fd;

	if (!*ns || strchr(ns, '/') || strlen(ns) > 200)
		die(2, "bad namespace name '%s'", ns);
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(3, "no network namespace '%s' (%s: %s)", ns, path, strerror(errno));
	if (setns(fd, CLONE_NEWNET) < 0)
		die(3, "cannot enter namespace '%s': %s (need root)", ns, strerror(errno));
	close(fd);
}

/* "s1=10.250.1.2,s2=10.250.1.6" -> one group */
static void parse_group(const char *arg, struct lb_group *g)
{
	char *copy = strdup(arg), *save = NULL, *tok;

	if (!copy)
		die(1, "out of memory");
	memset(g, 0, sizeof(*g));
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		struct in_addr a;
		unsigned int ifx;

		if (!eq)
			die(2, "bad group member '%s' in '%s' (want IF=NEXTHOP)", tok, arg);
		*eq = '\0';
		if (g->n == LB_MAX_MEMBERS)
			die(2, "group '%s' has more than %d members", arg, LB_MAX_MEMBERS);
		if (inet_pton(AF_INET, eq + 1, &a) != 1)
			die(2, "bad next hop '%s' of %s (want an IPv4 address)", eq + 1, tok);
		ifx = if_nametoindex(tok);
		if (!ifx)
			die(1, "no interface '%s' in this namespace (group '%s')", tok, arg);
		g->m[g->n].ifindex = ifx;
		g->m[g->n].nh = a.s_addr;
		g->n++;
	}
	free(copy);
	if (g->n < 2)
		die(2, "group '%s' has fewer than 2 members: nothing to balance", arg);
}

static void detach_all(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;

	if (!ifs)
		die(1, "cannot list interfaces: %s", strerror(errno));
	for (i = ifs; i->if_index; i++) {
		DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)i->if_index,
				    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
		if (!strcmp(i->if_name, "lo"))
			continue;
		bpf_tc_hook_destroy(&hook); /* none there: fine */
	}
	if_freenameindex(ifs);
}

int main(int argc, char **argv)
{
	const char *obj_path = NULL, *ns, *mode_name;
	char self[PATH_MAX], objbuf[PATH_MAX + 16];
	struct lb_cfg cfg = { .gap_ns = 500000ULL, .window_ns = 1000000ULL };
	struct lb_group groups[LB_MAX_GROUPS];
	unsigned int ngroups = 0, nports = 0, k;
	struct bpf_object *obj;
	struct bpf_program *p;
	struct if_nameindex *ifs, *i;
	int argi = 1, found = 0, prog_fd, fd_cfg, fd_groups, fd_member, fd_port;
	__u32 zero = 0;

	if (argi < argc && !strcmp(argv[argi], "--obj")) {
		if (argi + 1 >= argc)
			die(2, "--obj needs a file");
		obj_path = argv[argi + 1];
		argi += 2;
	}
	if (argc - argi < 2)
		die(2, "usage: fabric-lb [--obj FILE] NETNS MODE [--gap USEC] [--window USEC] IF=NH,IF=NH... | NETNS off");
	ns = argv[argi++];
	mode_name = argv[argi++];
	for (k = 0; k < sizeof(modes) / sizeof(modes[0]); k++) {
		if (!strcmp(modes[k].name, mode_name)) {
			cfg.mode = modes[k].mode;
			found = 1;
		}
	}
	if (!found)
		die(2, "unknown mode '%s' (spray-rr, spray-random, flowlet, adaptive, lbn or off)", mode_name);
	if (geteuid() != 0)
		die(3, "must run as root (BPF and network namespaces)");
	enter_netns(ns);
	if (cfg.mode == LB_OFF) {
		if (argi != argc)
			die(2, "off takes no other argument");
		detach_all();
		return 0;
	}
	for (; argi < argc; argi++) {
		if (!strcmp(argv[argi], "--gap") || !strcmp(argv[argi], "--window")) {
			if (argi + 1 >= argc)
				die(2, "%s needs microseconds", argv[argi]);
			if (argv[argi][2] == 'g')
				cfg.gap_ns = usec_arg("--gap", argv[argi + 1]) * 1000ULL;
			else
				cfg.window_ns = usec_arg("--window", argv[argi + 1]) * 1000ULL;
			argi++;
			continue;
		}
		if (ngroups == LB_MAX_GROUPS)
			die(2, "more than %d groups", LB_MAX_GROUPS);
		parse_group(argv[argi], &groups[ngroups++]);
	}
	if (!ngroups)
		die(2, "no group given (IF=NEXTHOP,IF=NEXTHOP...): this router has nothing to balance");

	if (!obj_path) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		char *slash;

		if (n < 0)
			die(1, "cannot find my own path: %s", strerror(errno));
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
		snprintf(objbuf, sizeof(objbuf), "%s/lb.bpf.o", self);
		obj_path = objbuf;
	}
	libbpf_set_print(quiet_print);
	obj = bpf_object__open_file(obj_path, NULL);
	if (!obj)
		die(1, "cannot open %s: %s", obj_path, strerror(errno));
	if (bpf_object__load(obj))
		die(1, "the kernel refused %s (FABRIC_LB_DEBUG=1 shows the verifier's log)", obj_path);
	p = bpf_object__find_program_by_name(obj, "lb_ingress");
	if (!p)
		die(1, "%s has no program lb_ingress", obj_path);
	prog_fd = bpf_program__fd(p);
	fd_cfg = bpf_object__find_map_fd_by_name(obj, "lb_cfg");
	fd_groups = bpf_object__find_map_fd_by_name(obj, "lb_groups");
	fd_member = bpf_object__find_map_fd_by_name(obj, "lb_member_of");
	fd_port = bpf_object__find_map_fd_by_name(obj, "lb_port_no");
	if (fd_cfg < 0 || fd_groups < 0 || fd_member < 0 || fd_port < 0)
		die(1, "%s lacks one of its maps", obj_path);
	for (k = 0; k < ngroups; k++) {
		if (bpf_map_update_elem(fd_groups, &k, &groups[k], BPF_ANY))
			die(1, "cannot fill lb_groups: %s", strerror(errno));
		for (unsigned int m = 0; m < groups[k].n; m++) {
			if (bpf_map_update_elem(fd_member, &groups[k].m[m].ifindex, &k, BPF_ANY))
				die(1, "cannot fill lb_member_of: %s", strerror(errno));
		}
	}
	/* the mode last: until now the program (not attached yet anyway) passes everything */
	if (bpf_map_update_elem(fd_cfg, &zero, &cfg, BPF_ANY))
		die(1, "cannot fill lb_cfg: %s", strerror(errno));

	ifs = if_nameindex();
	if (!ifs)
		die(1, "cannot list interfaces: %s", strerror(errno));
	for (i = ifs; i->if_index; i++) {
		DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)i->if_index,
				    .attach_point = BPF_TC_INGRESS);
		DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = prog_fd, .handle = 1, .priority = 1,
				    .flags = BPF_TC_F_REPLACE);
		__u32 no = nports;
		int err;

		if (!strcmp(i->if_name, "lo"))
			continue;
		if (bpf_map_update_elem(fd_port, &i->if_index, &no, BPF_ANY))
			die(1, "cannot fill lb_port_no: %s", strerror(errno));
		err = bpf_tc_hook_create(&hook);
		if (err && err != -EEXIST)
			die(1, "cannot add clsact to %s in %s: %s", i->if_name, ns, strerror(-err));
		err = bpf_tc_attach(&hook, &opts);
		if (err)
			die(1, "cannot attach to %s in %s: %s", i->if_name, ns, strerror(-err));
		nports++;
	}
	if_freenameindex(ifs);
	bpf_object__close(obj); /* the filters hold the program, the program its maps */
	printf("%s: %s: %s on %u ports, %u group%s\n", prog, ns, mode_name, nports, ngroups,
	       ngroups == 1 ? "" : "s");
	return 0;
}
