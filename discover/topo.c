/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fabscope topo: the intended topology of a fabric (fabscope-topology(5)).
 *
 *   topo check-file FILE [--json]     what the design says against itself
 *   topo export FILE --slurm [--rail K] [--plane P] [-o OUT]
 *                                     Slurm's topology.conf
 *   topo export FILE --format fabscope|dot [-o OUT]
 *                                     the file as fabscope writes it, or as a
 *                                     Graphviz graph (PTM's topology.dot)
 *   topo show [-i IFACE]... [--source S] [--listen SECONDS] [--json]
 *                                     this host's cables: LLDP neighbours (show.c)
 *   topo check FILE [OBS.json...] [--json]
 *                                     the hosts' cables and settings against
 *                                     the design (judge.c)
 *   topo discover OBS.json... [-o OUT]
 *                                     a design from what the hosts saw
 *
 * The intent file is topology/'s; this command sits a layer above it, with
 * the engines, since show listens with pcap/.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/builtin.h"
#include "../core/error.h"
#include "../core/names.h"
#include "../core/options.h"
#include "../core/outfile.h"
#include "../topology/check.h"
#include "../topology/dot.h"
#include "../topology/intent.h"
#include "../topology/slurm.h"
#include "judge.h"
#include "lldpd.h"
#include "show.h"

static const char *const topo_usage[] = {
	"fabscope topo check-file FILE [--json]",
	"fabscope topo export FILE (--slurm [--rail K] [--plane P] | --format fabscope|dot) [-o OUT]",
	"fabscope topo show [-i IFACE]... [--source auto|lldpd|listen|none] [--listen SECONDS] [--json]",
	"fabscope topo check FILE [OBS.json...] [--node NAME] [--source S] [--json]",
	"fabscope topo discover OBS.json... [-o OUT]",
	NULL,
};

static const char topo_about[] =
	"The intended topology of a fabric, from its file (fabscope-topology(5)): switches with their\n"
	"tier, pod, plane and rail, and a line per cable; or from a Graphviz graph as Cumulus PTM's\n"
	"topology.dot and NVIDIA Air write it (a device's function its tier: leaf, tor, spine,\n"
	"superspine, exit or border, oob-switch; host, server, oob-server are nodes).  Rails are\n"
	"optional (without: a lane per leaf group), peer links and loopbacks are cables, and the\n"
	"out-of-band network (cables to an oob switch) is no part of the fabric's lanes.\n"
	"\n"
	"  check-file  what the design says against itself: a port cabled twice, a cable with no\n"
	"              switch, a node port with no rail or on a leaf of another rail, a rail of a\n"
	"              node reaching two leaf groups, a cable between planes (errors); a node on a\n"
	"              spine, a cable that skips a tier, an unused switch, a function not known\n"
	"              (kept as a node), a design without rails (warnings)\n"
	"  export      Slurm's topology.conf (topology/tree) of one rail and plane, or the file as\n"
	"              fabscope writes it, or as a Graphviz graph (--format dot)\n"
	"  show        this host's cables: per interface its state, speed and MTU, the settings the\n"
	"              fabric needs alike on a rail (driver, firmware, PCIe link, ECN per priority)\n"
	"              and the LLDP neighbour on it (switch, port, chassis): from a running lldpd\n"
	"              (lldpcli), else by listening (switches send every 30 s, hence --listen 35)\n"
	"  check       the hosts against the design, port by port, as PTM does: each observation\n"
	"              (show --json of a host, or a switch's LLDP view in that form), or this host\n"
	"              observed now as the design's node --node (default: the host name);\n"
	"              errors: not-seen, no-link (cable out), no-neighbour (LLDP off on the switch),\n"
	"              swap (two cables, one finding), wrong-rail, wrong-plane, miscabled, slow-link,\n"
	"              drift (a setting in which a port differs from the majority of its rail)\n"
	"  discover    a design from observations: a leaf per neighbour, a rail per interface name,\n"
	"              as a starting point for a new cluster\n"
	"\n"
	"Exit codes: 0 no error (warnings are said), 1 an error found, 2 a file that cannot be read\n"
	"as a topology or observation, or bad options, 3 environment.";

struct topo_opts {
	int json, slurm, rail, plane, records;
	const char *format, *output;
	struct opt_list ifaces;
	struct discover_opts d;
};

/* where export and discover write: stdout (OUT NULL or "-"), or OUT made by core/outfile.h */
struct tout {
	struct outfile of;
	FILE *f;
};

/* 0, or -FS_EXIT_* said */
static int out_open(struct tout *o, const char *path)
{
	int rc;

	memset(o, 0, sizeof(*o));
	o->of.fd = -1;
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if ((rc = outfile_create(&o->of, path, 0644)))
		return rc;
	if (!(o->f = outfile_stream(&o->of))) {
		rc = fs_err_env("cannot write '%s': %s", path, strerror(errno));
		outfile_abort(&o->of);
	}
	return rc;
}

/* rc 0: what was written put in place (a file appears whole: an export that failed leaves the old
 * one); else given up.  0, or -FS_EXIT_ENV said. */
static int out_close(struct tout *o, int rc)
{
	if (o->f == stdout)
		return fflush(o->f) && !rc ? fs_err_env("cannot write the output: %s", strerror(errno)) : 0;
	if (rc) {
		outfile_abort(&o->of);
		return 0;
	}
	return outfile_commit(&o->of, 1);
}

static int topo_check_file(struct topo *t, const struct topo_opts *o)
{
	struct topo_findings fs;
	size_t nodes = 0, oob = 0, i;
	int rc = topo_check(t, &fs);

	if (rc)
		return rc;
	{	/* nodes: the distinct devices that are not switches, by one sort */
		const char **names = fs_reallocarray(NULL, t->nln + 1, sizeof(*names));
		size_t n = 0;

		if (!names) {
			topo_findings_release(&fs);
			return fs_err_env("out of memory checking %s", t->path);
		}
		for (i = 0; i < t->nln; i++) {
			if (t->ln[i].a.sw < 0)
				names[n++] = t->ln[i].a.dev;
			oob += topo_link_oob(t, &t->ln[i]);
		}
		qsort(names, n, sizeof(*names), fs_name_pcmp);
		for (i = 0; i < n; i++)
			nodes += !i || strcmp(names[i - 1], names[i]);
		free(names);
	}
	if (o->json) {
		json_t *doc = json_pack("{ss,ss,si,si,si,si,si,si,so}", "schema", "fabscope.topo-check/1", "file",
					t->path, "switches", (int)t->nsw, "nodes", (int)nodes, "links", (int)t->nln,
					"out_of_band", (int)oob, "errors", fs.errors, "warnings", (int)fs.n - fs.errors,
					"findings", topo_findings_json(&fs));

		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(doc);
	} else {
		topo_findings_print(&fs, t->path, stdout);
		char band[64] = "";

		if (oob)
			snprintf(band, sizeof(band), " (%zu out-of-band)", oob);
		printf("%s: %zu switches, %zu nodes, %zu cables%s: %d errors, %d warnings\n", t->path, t->nsw, nodes,
		       t->nln, band, fs.errors, (int)fs.n - fs.errors);
	}
	rc = fs.errors ? -FS_EXIT_CHECK : 0;
	topo_findings_release(&fs);
	return rc;
}

static int topo_export(struct topo *t, const struct topo_opts *o)
{
	struct tout out;
	int rc = 0;

	if (o->slurm == !!o->format)
		return fs_err_usage("export: give --slurm or --format fabscope|dot (one of them)");
	if (o->format && strcmp(o->format, "fabscope") && strcmp(o->format, "dot"))
		return fs_err_usage("export: --format %s: the formats are fabscope and dot (and --slurm)", o->format);
	if ((rc = out_open(&out, o->output)))
		return rc;
	if (o->slurm)
		rc = topo_slurm_write(t, o->rail, o->plane, out.f);
	else if (!strcmp(o->format, "dot"))
		rc = topo_write_dot(t, out.f);
	else
		rc = topo_write(t, out.f);
	if (out_close(&out, rc) && !rc)
		rc = -FS_EXIT_ENV;
	return rc;
}

/* show and discover: no intent file */
static int topo_run_noread(int argc, const char **argv, int nargs, const struct topo_opts *o)
{
	struct tout out;
	int rc;

	(void)argc;
	if (!strcmp(argv[0], "show")) {
		if (nargs > 1)
			return fs_err_usage("show takes no file: give the interfaces with -i");
		return topo_show(&o->d, o->ifaces.v, o->ifaces.n, o->records ? 2 : o->json);
	}
	if (nargs < 2)
		return fs_err_usage("discover: give the observations (files 'fabscope topo show --json' wrote)");
	if ((rc = out_open(&out, o->output)))
		return rc;
	rc = topo_cmd_discover(argv + 1, nargs - 1, out.f);
	if (out_close(&out, rc) && !rc)
		rc = -FS_EXIT_ENV;
	return rc;
}

int cmd_topo(int argc, const char **argv)
{
	struct topo_opts o = { .d = { .listen_s = 35, .source = "auto", .lldpd_socket = LLDPD_SOCKET_DEFAULT,
				      .sysfs = "/sys" } };
	const struct opt tab[] = {
		OPT_GROUP("check-file"),
		OPT_BOOL(0, "json", &o.json, "check-file, check, show: one JSON document"),
		OPT_GROUP("export"),
		OPT_BOOL(0, "slurm", &o.slurm, "Slurm's topology.conf (topology/tree)"),
		OPT_INT(0, "rail", &o.rail, "K", "--slurm: the rail whose cables make the tree (default 0)", 0, 63),
		OPT_INT(0, "plane", &o.plane, "P", "--slurm: the plane (default 0)", 0, 7),
		OPT_STRING(0, "format", &o.format, "NAME", "fabscope: the file as fabscope writes it; dot: as a Graphviz graph "
			   "(Cumulus PTM's topology.dot)"),
		OPT_FILE('o', "output", &o.output, "OUT", "export, discover: write to OUT (never through a symlink; "
			 "default: stdout)"),
		OPT_GROUP("show, check (this host)"),
		OPT_LIST('i', "iface", &o.ifaces, "IFACE", "show: observe IFACE (repeatable; default: every interface "
			 "configured up, but lo)"),
		OPT_STRING(0, "node", &o.d.node, "NAME", "this host's name in the design (default: the host name)"),
		OPT_STRING(0, "source", &o.d.source, "S", "the LLDP neighbours from: auto (lldpd when it runs, else "
			   "listen), lldpd, listen, none (default auto)"),
		OPT_FILE(0, "lldpd-socket", &o.d.lldpd_socket, "PATH", "lldpd's control socket (default "
			 LLDPD_SOCKET_DEFAULT ")"),
		OPT_SECONDS(0, "listen", &o.d.listen_s, "SECONDS", "listen for LLDP at most this long (default 35); "
			    "each interface stops at its first LLDPDU"),
		OPT_BOOL(0, "records", &o.records, "show: a result record per port (test topology, "
			 "fabscope-records(7)) as a JSON array, as a plan's topology phase keeps them"),
		OPT_FILE(0, "sysfs", &o.d.sysfs, "DIR", "read the interfaces from DIR instead of /sys (a copy of "
			 "another host's)"),
		OPT_END(),
	};
	struct topo t;
	int nargs = 0, rc;

	rc = opts_parse(argc, argv, tab, topo_usage, topo_about, &nargs);
	if (rc == OPTS_HELP)
		return 0;
	if (rc)
		return -rc;
	if (strcmp(o.d.source, "auto") && strcmp(o.d.source, "lldpd") && strcmp(o.d.source, "listen") &&
	    strcmp(o.d.source, "none")) {
		opt_list_release(&o.ifaces);
		return -fs_err_usage("--source %s: give auto, lldpd, listen or none", o.d.source);
	}
	if (nargs >= 1 && (!strcmp(argv[0], "show") || !strcmp(argv[0], "discover"))) {
		rc = topo_run_noread(argc, argv, nargs, &o);
		opt_list_release(&o.ifaces);
		return -rc;
	}
	opt_list_release(&o.ifaces);
	if (nargs >= 1 && strcmp(argv[0], "check-file") && strcmp(argv[0], "export") && strcmp(argv[0], "check"))
		rc = fs_err_usage("no action '%s': give check-file, export, show, check or discover", argv[0]);
	else if (nargs < 2 || (nargs > 2 && strcmp(argv[0], "check")))
		rc = fs_err_usage(nargs < 1 ? "give what to do: check-file, export, show, check or discover" :
				  nargs < 2 ? "give the topology file" : "one action and one topology file");
	if (rc) {
		opts_usage_short(topo_usage);
		return FS_EXIT_USAGE;
	}
	topo_init(&t);
	rc = topo_read(&t, argv[1], NULL);
	if (!rc)
		rc = !strcmp(argv[0], "check-file") ? topo_check_file(&t, &o) :
		     !strcmp(argv[0], "check") ? topo_cmd_check(&t, &o.d, argv + 2, nargs - 2, o.json) :
		     topo_export(&t, &o);
	topo_release(&t);
	return -rc;
}
