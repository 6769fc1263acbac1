/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fabscope monitor, the agent (monitor/cmd.c dispatches to it): the
 * always-on agent.  Reads its peers (monitor/peers.h), probes them
 * (monitor/probe.h) and answers theirs, serves /metrics and /healthz
 * (monitor/http.h), writes --jsonl, and reloads the peers file on SIGHUP
 * or when the file changes (checked every second), without a restart.
 * One thread turns the probes (a turn every 10 ms: the replies read, the
 * lost counted, the probes due sent; the responders answered as their
 * requests come), libmicrohttpd's serves HTTP.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/auth.h"
#include "../core/builtin.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/options.h"
#include "../core/outfile.h"
#include "../fleet/plan.h"
#include "../transport/ud.h"
#include "expo.h"
#include "http.h"
#include "nic.h"
#include "probe.h"

#define TICK_MS 10
#define TAG_SIGNAL (3ull << 32)
#define MON_MAX_PEERS 4096
#define MON_MAX_CELLS (1u << 16)	/* peers x lanes x buckets: 14 MiB of counters, 180 MB a scrape */

struct monitor {
	const char *peers_path, *node, *listen, *jsonl, *token_file, *counters_root;
	const char *tls_cert, *tls_key, *sport_range, *transport;
	double rate, timeout_s, interval_s, duration_s;
	int port, buckets, paths, max_peers, readable_token, verbose;
	struct mon_opts o;
	struct mon_peer_opts po;
	struct stat peers_st;
	int jsonl_fd;
	struct mon_cell *prev;		/* --jsonl: the counters at the last interval */
	size_t nprev;
};

static const char *const monitor_usage[] = {
	"fabscope monitor --peers FILE [--node NAME] [--listen HOST:PORT] [--rate N] [options]",
	"   or: fabscope monitor analyze --topology FILE (--metrics URL... | --prometheus URL | --replay SCRAPE...)",
	NULL,
};

static const char monitor_about[] =
	"The always-on fabric monitor: probes its peers from the hostfile FILE over every lane (rail,\n"
	"plane) with UDP probes, or verbs UD probes (--transport), a new source port each probe,\n"
	"answers theirs, and serves per (peer, lane, source-port bucket) counters of sent and lost\n"
	"probes and an RTT histogram on\n"
	"/metrics (Prometheus), and /healthz.  Peers: every node of its leaf, and a sample across\n"
	"leaves with enough 5-tuples per leaf pair to cover --paths equal-cost paths (99 %).  The\n"
	"file is read again on SIGHUP or when it changes.  It runs until SIGTERM or SIGINT (exit 0),\n"
	"or --duration.  fabscope-monitor(1) lists every metric.";

static int parse_range(struct monitor *m)
{
	char *end;
	long lo = strtol(m->sport_range, &end, 10), hi;

	if (*end != '-')
		return fs_err_usage("--sport-range '%s': give LO-HI, e.g. 49152-49167", m->sport_range);
	hi = strtol(end + 1, &end, 10);
	if (*end || lo < 1024 || hi > 65535 || hi < lo || hi - lo >= 1024)
		return fs_err_usage("--sport-range '%s': give LO-HI within 1024-65535, at most 1024 ports", m->sport_range);
	m->o.sport_lo = (int)lo;
	m->o.nsports = (int)(hi - lo + 1);
	if (m->port >= lo && m->port <= hi)
		return fs_err_usage("--port %d is inside --sport-range %s: the responders' port must be apart", m->port,
				    m->sport_range);
	if (m->buckets > m->o.nsports)
		return fs_err_usage("--sport-buckets %d: more buckets than the %d source ports of --sport-range",
				    m->buckets, m->o.nsports);
	return 0;
}

static int load_peers(struct monitor *m, struct mon_peers *mp)
{
	struct stat st;
	int rc = mon_peers_load(mp, m->peers_path, NULL, &m->po);
	size_t cells;

	if (rc)
		return rc;
	cells = (size_t)mp->n * (size_t)mp->nlanes * (size_t)m->buckets * (m->o.transports == (MON_T_UDP | MON_T_UD) ? 2 : 1);
	if (cells > MON_MAX_CELLS) {
		mon_peers_release(mp);
		return fs_err_usage("%s: %zu peer x lane x bucket%s cells exceed the bound of %u: fewer --sport-buckets, "
				    "or leaf= in the file", m->peers_path, cells,
				    m->o.transports == (MON_T_UDP | MON_T_UD) ? " x transport" : "", MON_MAX_CELLS);
	}
	if (mp->short_pairs)
		fs_warn("%s: %d leaf pairs cannot give the %d 5-tuples that cover %d paths: every pair of their hosts "
			"is probed", m->peers_path, mp->short_pairs, mp->need, m->paths);
	if (!stat(m->peers_path, &st))
		m->peers_st = st;
	fs_log(1, "%s: %d peers (%d leaves; across leaves %d host pairs a leaf pair, %d 5-tuples), %d lanes",
		m->peers_path, mp->n, mp->leaves, mp->pairs, mp->need, mp->nlanes);
	return 0;
}

/* --transport: 0, -FS_EXIT_USAGE (a word of no transport) or -FS_EXIT_ENV (verbs, in a build without) */
static int parse_transport(struct monitor *m)
{
	char why[256];

	if (!strcmp(m->transport, "udp"))
		m->o.transports = MON_T_UDP;
	else if (!strcmp(m->transport, "verbs"))
		m->o.transports = MON_T_UD;
	else if (!strcmp(m->transport, "both"))
		m->o.transports = MON_T_UDP | MON_T_UD;
	else
		return fs_err_usage("--transport '%s': give udp, verbs (UD probes on the lanes' RDMA ports) or both",
				    m->transport);
	if ((m->o.transports & MON_T_UD) && !ud_built(why, sizeof(why)))
		return fs_err_env("--transport %s: %s", m->transport, why);
	return 0;
}

static int check_opts(struct monitor *m)
{
	int rc;

	if (!m->peers_path)
		return fs_err_usage("give --peers FILE: the hostfile of the nodes to probe (fabscope-hostfile(5)); "
				    "or 'monitor analyze' to name a faulty link or NIC");
	if (!plan_name_ok(m->node))
		return fs_err_usage("the node name '%s' is not one: give --node NAME as the peers file writes it", m->node);
	if (m->rate > 1000 || m->rate < 0.01)
		return fs_err_usage("--rate %g: give 0.01 to 1000 probes a second per peer and lane", m->rate);
	if (m->timeout_s > 60)
		return fs_err_usage("--timeout %g: at most 60 s", m->timeout_s);
	if (m->jsonl && m->interval_s < 0.1)
		return fs_err_usage("--interval %g: at least 0.1 s", m->interval_s);
	if (!m->tls_cert != !m->tls_key)
		return fs_err_usage("--tls-cert and --tls-key go together: give both (PEM files) or neither");
	if (mon_http_check_listen(m->listen))
		return -FS_EXIT_USAGE;
	m->o = (struct mon_opts){ m->rate, m->timeout_s, m->port, 0, 0, m->buckets, MON_T_UDP };
	if ((rc = parse_transport(m)))
		return rc;
	m->po = (struct mon_peer_opts){ m->node, m->paths, 0, m->max_peers };
	if (parse_range(m))
		return -FS_EXIT_USAGE;
	m->po.sports = m->o.nsports;
	return 0;
}

static int open_jsonl(struct monitor *m)
{
	struct outdir d = OUTDIR_INIT;
	const char *base;

	m->jsonl_fd = -1;
	if (!m->jsonl)
		return 0;
	if (!strcmp(m->jsonl, "-")) {
		m->jsonl_fd = STDOUT_FILENO;
		return 0;
	}
	if (outdir_of_file(&d, m->jsonl, "--jsonl"))
		return -FS_EXIT_ENV;
	base = strrchr(m->jsonl, '/') ? strrchr(m->jsonl, '/') + 1 : m->jsonl;
	m->jsonl_fd = outfile_append_in(&d, base, 0644);
	outdir_close(&d);
	return m->jsonl_fd < 0 ? m->jsonl_fd : 0;
}

/* The interval's lines, and the counters kept for the next */
static int write_jsonl(struct monitor *m, struct mon_engine *e, double interval_s)
{
	struct mon_buf b = { 0 };
	size_t n, off = 0;
	int rc = 0;

	pthread_mutex_lock(&e->lock);
	n = mon_ncells(e);
	mon_expo_jsonl(&b, e, m->prev && m->nprev == n ? m->prev : NULL, interval_s);
	if (m->nprev != n) {
		free(m->prev);
		m->prev = calloc(n ? n : 1, sizeof(*m->prev));
		m->nprev = m->prev ? n : 0;
	}
	if (m->prev)
		memcpy(m->prev, e->cells, n * sizeof(*m->prev));
	pthread_mutex_unlock(&e->lock);
	while (!rc && off < b.len) {
		ssize_t w = write(m->jsonl_fd, b.p + off, b.len - off);

		if (w < 0 && errno != EINTR)
			rc = fs_err_env("cannot write --jsonl '%s': %s", m->jsonl, strerror(errno));
		off += w > 0 ? (size_t)w : 0;
	}
	mon_buf_release(&b);
	return rc;
}

static void reload(struct monitor *m, struct mon_engine *e, const char *why)
{
	struct mon_peers np;

	fs_log(1, "reloading %s (%s)", m->peers_path, why);
	stat(m->peers_path, &m->peers_st);	/* this version is read once, taken or not */
	if (load_peers(m, &np) || mon_engine_reload(e, &np)) {
		pthread_mutex_lock(&e->lock);
		e->tot.reloads_failed++;
		pthread_mutex_unlock(&e->lock);
		fs_warn("the peers file was not taken: the monitor goes on probing the %d peers it had", e->peers.n);
		return;
	}
	free(m->prev);	/* the cells moved: the next interval starts from the reload */
	m->prev = NULL;
	m->nprev = 0;
}

static int file_changed(struct monitor *m)
{
	struct stat st;

	if (stat(m->peers_path, &st))
		return 0;	/* gone for a moment (an editor's rename): keep what we have */
	return st.st_ino != m->peers_st.st_ino || st.st_size != m->peers_st.st_size ||
	       st.st_mtim.tv_sec != m->peers_st.st_mtim.tv_sec || st.st_mtim.tv_nsec != m->peers_st.st_mtim.tv_nsec;
}

/* 1 to stop (exit status in *status) */
static int on_signal(struct monitor *m, struct mon_engine *e, int sfd, int *status)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload(m, e, "SIGHUP");
			continue;
		}
		*status = si.ssi_signo == SIGINT ? -FS_EXIT_INTERRUPTED : 0;
		return 1;
	}
	return 0;
}

static int run(struct monitor *m, struct mon_engine *e, int sfd)
{
	uint64_t start = clock_ns(), next_check = start + 1000000000ull;
	uint64_t interval_ns = (uint64_t)(m->interval_s * 1e9), next_jsonl = start + interval_ns, last_jsonl = start;
	uint64_t end = m->duration_s > 0 ? start + (uint64_t)(m->duration_s * 1e9) : 0;
	struct epoll_event ev[64];
	int status = 0;

	uint64_t next_tick = start;

	for (;;) {
		uint64_t before = clock_ns();
		int wait_ms = next_tick > before ? (int)((next_tick - before) / 1000000) + 1 : 0;
		int n = epoll_wait(e->epfd, ev, 64, wait_ms);
		uint64_t now = clock_ns();

		if (n < 0 && errno != EINTR)
			return fs_err_env("epoll_wait: %s", strerror(errno));
		for (int i = 0; i < n; i++) {
			if (ev[i].data.u64 == TAG_SIGNAL) {
				if (on_signal(m, e, sfd, &status))
					return status;
			} else {
				mon_engine_input(e, ev[i].data.u64);
			}
		}
		if (now < next_tick)
			continue;	/* a responder's datagram: answered, no turn yet */
		mon_engine_tick(e, now);
		next_tick += TICK_MS * 1000000ull;
		if (next_tick <= now)
			next_tick = now + TICK_MS * 1000000ull;	/* late (a stop): no burst of turns */
		if (now >= next_check) {
			next_check = now + 1000000000ull;
			if (file_changed(m))
				reload(m, e, "the file changed");
		}
		if (m->jsonl_fd >= 0 && now >= next_jsonl) {
			if (write_jsonl(m, e, (double)(now - last_jsonl) / 1e9))
				return -FS_EXIT_ENV;
			last_jsonl = now;
			next_jsonl = now + interval_ns;
		}
		if (end && now >= end)
			return 0;
	}
}

static int signals(struct mon_engine *e, int *sfd)
{
	sigset_t set;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TAG_SIGNAL };

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);	/* before the HTTP thread starts: it inherits the mask */
	signal(SIGPIPE, SIG_IGN);
	*sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (*sfd < 0 || epoll_ctl(e->epfd, EPOLL_CTL_ADD, *sfd, &ev))
		return fs_err_env("signalfd: %s", strerror(errno));
	return 0;
}

static int start(struct monitor *m)
{
	struct mon_engine e;
	struct mon_peers mp;
	struct mon_nics nics;
	struct mon_http h;
	struct mon_http_opts ho = { m->listen, NULL, m->tls_cert, m->tls_key };
	char *token = NULL;
	int rc, sfd = -1;

	if (m->token_file && (rc = auth_token(m->token_file, m->readable_token, &token)))
		return rc;
	ho.token = token;
	if ((rc = load_peers(m, &mp))) {
		free(token);
		return rc;
	}
	if ((rc = mon_engine_init(&e, &m->o, &mp))) {	/* (it takes mp, even on failure) */
		free(token);
		return rc;
	}
	mon_nics_open(&nics, &e.peers, m->counters_root);
	rc = signals(&e, &sfd);
	if (!rc)
		rc = open_jsonl(m);
	if (!rc && !(rc = mon_http_start(&h, &ho, &e, &nics))) {
		fs_log(1, "probing %d peers on %d lanes at %g/s each (%s); /metrics on %s (port %d)", e.peers.n,
			e.peers.nlanes, m->rate, m->transport, m->listen, h.port);
		rc = run(m, &e, sfd);
		mon_http_stop(&h);
	}
	if (m->jsonl_fd > STDOUT_FILENO)
		close(m->jsonl_fd);
	if (sfd >= 0)
		close(sfd);
	free(m->prev);
	mon_nics_release(&nics);
	mon_engine_release(&e);
	free(token);
	return rc;
}

static const char *default_node(void)
{
	static char host[256];
	const char *e = getenv("FABSCOPE_NODE");

	if (e && *e)
		return e;
	if (gethostname(host, sizeof(host) - 1))
		return "";
	return host;
}

int cmd_monitor_agent(int argc, const char **argv)
{
	struct monitor m = { .listen = ":9477", .rate = 10, .timeout_s = 1, .interval_s = 10, .port = 4793,
			     .buckets = 16, .paths = 8, .max_peers = 256, .sport_range = "49152-49167",
			     .transport = "udp" };
	int nargs, rc;
	struct opt tab[] = {
		OPT_GROUP("Peers"),
		OPT_FILE(0, "peers", &m.peers_path, "FILE", "the hostfile of the nodes to probe (fabscope-hostfile(5): railK[/P]=IPv4, leaf=); read again on SIGHUP or when it changes"),
		OPT_STRING(0, "node", &m.node, "NAME", "this node's name in FILE (default: $FABSCOPE_NODE, else the host name)"),
		OPT_INT(0, "paths", &m.paths, "P", "equal-cost paths between two leaves: the sample across leaves covers them with 99 % (default 8)", 1, 4096),
		OPT_INT(0, "max-peers", &m.max_peers, "N", "refuse a file that gives more peers (default 256)", 1, MON_MAX_PEERS),
		OPT_GROUP("Probes"),
		OPT_NUMBER(0, "rate", &m.rate, "N", "probes a second to each peer on each lane (default 10)"),
		OPT_SECONDS(0, "timeout", &m.timeout_s, "SECONDS", "a probe unanswered this long counts lost (default 1)"),
		OPT_INT(0, "port", &m.port, "PORT", "the UDP port every agent's responder listens on (default 4793)", 1, 65535),
		OPT_STRING(0, "sport-range", &m.sport_range, "LO-HI", "the source ports a probe stream rotates through, one a probe (default 49152-49167)"),
		OPT_INT(0, "sport-buckets", &m.buckets, "B", "source-port buckets, the sport_bucket label: the range split in B (default 16)", 1, 64),
		OPT_STRING(0, "transport", &m.transport, "udp|verbs|both", "UDP probes, verbs UD probes from each lane's RDMA port (fabscope_probe_ud_*), or both (default udp)"),
		OPT_GROUP("Output"),
		OPT_STRING(0, "listen", &m.listen, "HOST:PORT", "serve /metrics and /healthz there (default :9477, every address)"),
		OPT_FILE(0, "token-file", &m.token_file, "FILE", "/metrics wants 'Authorization: Bearer TOKEN', TOKEN the file's first line"),
		OPT_BOOL(0, "allow-readable-token", &m.readable_token, "accept a --token-file that others can read"),
		OPT_FILE(0, "tls-cert", &m.tls_cert, "FILE", "serve HTTPS with this PEM certificate (and --tls-key)"),
		OPT_FILE(0, "tls-key", &m.tls_key, "FILE", "the PEM private key of --tls-cert"),
		OPT_STRING(0, "jsonl", &m.jsonl, "FILE", "append each interval's counters as JSON lines to FILE ('-': standard output)"),
		OPT_SECONDS(0, "interval", &m.interval_s, "SECONDS", "the --jsonl interval (default 10)"),
		OPT_FILE(0, "counters-root", &m.counters_root, "DIR", "read the NIC counters from a tree laid out like / (a fixture) instead of this host"),
		OPT_SECONDS(0, "duration", &m.duration_s, "SECONDS", "stop after this long (default: run until SIGTERM)"),
		OPT_VERBOSE(&m.verbose),
		OPT_END(),
	};

	rc = opts_parse(argc, argv, tab, monitor_usage, monitor_about, &nargs);
	if (rc)
		return rc == OPTS_HELP ? 0 : -rc;
	fs_set_verbosity(m.verbose);
	if (nargs)
		return -fs_err_usage("unexpected argument '%s' (fabscope monitor takes options only)", argv[0]);
	if (!m.node)
		m.node = default_node();
	if ((rc = check_opts(&m)))
		return -rc;
	return -start(&m);
}
