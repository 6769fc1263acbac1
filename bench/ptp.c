/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/record.h"
#include "../core/testhook.h"
#include "../core/units.h"
#include "../core/version.h"
#include "../core/wire.h"
#include "../core/auth.h"
#include "ptp.h"


int ptp_options(struct ptp_opts *o, struct opt *tab, int max)
{
	int bw = !strcmp(o->test, "bw");
	/* a bw-only option in lat: there, one line that says so */
#define BW_ONLY(o_, s, l) (bw ? (struct opt)o_ : (struct opt)OPT_NOT_HERE(s, l, "it is an option of bw: a latency test has one message in flight"))
	const struct opt t[] = {
		OPT_GROUP("Connection"),
		OPT_BOOL(0, "server", &o->server, "run as the server: wait for clients, serve one after another"),
		OPT_INT('p', "port", &o->port, "PORT", "control port (default 18520); a server given 0 takes any free port and says which", 0, 65535),
		OPT_STRING(0, "bind", &o->bind, "ADDR", "local address to use: the client's source, the server's listening address; selects the rail"),
		OPT_BOOL(0, "once", &o->once, "server: exit after one client"),
		OPT_SIZE(0, "max-mem", &o->max_mem, "SIZE", "server: the most buffer memory a client may make it allocate, 2 x its largest message (default: an eighth of the RAM, 64M to 1G); a test that needs more is refused before anything is allocated", 1, 1ll << 40),
		OPT_STRING(0, "token-file", &o->token_file, "FILE", "a shared secret (the file, less a trailing newline): a server serves only clients that prove it, a client talks only to a server that proves it (default: none); the file must be 0600"),
		OPT_BOOL(0, "allow-readable-token", &o->allow_readable_token, "accept a --token-file that others can read (with a warning)"),
		OPT_SECONDS(0, "timeout", &o->timeout_s, "SECONDS", "give up on a silent peer after this long (default 10)"),
		OPT_STRING(0, "node", &o->node, "NAME", "this node's name in records (default: the host name)"),
		OPT_GROUP("Test"),
		OPT_STRING('t', "transport", &o->transport, "NAME", "transport: tcp (default) or verbs (not a time as in iperf3: that is -D)"),
		OPT_STRING(0, "op", &o->op, "OP", bw ? "operation: write (default), send, read or write_imm" : "operation: send (default; ping-pong of SENDs), write (ping-pong of WRITEs) or read (one READ at a time)"),
		OPT_SIZE('s', "size", &o->size, "SIZE", bw ? "message size, e.g. 4096, 64K, 1M (default 64K; at most 1G, and a message must fit the --timeout at the link's rate)" : "message size, e.g. 4096, 64K, 1M (default 2; at most 1G)", 1, 1ll << 30),
		OPT_BOOL('a', "all", &o->sweep, "sweep message sizes from 2 B to 8 MiB in powers of two"),
		BW_ONLY(OPT_INT('q', "flows", &o->flows, "N", "flows (TCP connections or QPs) per test (default 1; perftest's -q)", 1, PTP_MAX_FLOWS), 'q', "flows"),
		OPT_COUNT('n', "iters", &o->iters, "N", bw ? "messages per flow to measure, instead of -D (perftest's -n; in the collectives, -n is the number of ranks)" : "round trips to measure (default 10000; perftest's -n; in the collectives, -n is the number of ranks)", 1, 0),
		OPT_SECONDS('D', "duration", &o->duration, "SECONDS", bw ? "measure for this long per size instead of -n (default 2, with -a 1; perftest's -D, iperf3's -t)" : "measure for this long per size instead of -n (perftest's -D)"),
		OPT_STRING(0, "warmup", &o->warmup, "N|Ns", "warm-up before measuring: N messages per flow, or N seconds with an 's' (default: a tenth of the run)"),
		BW_ONLY(OPT_BOOL('b', "bidirectional", &o->bidir, "traffic both ways at once (perftest's -b, iperf3's --bidir; in the collectives, -b is the smallest size, as in nccl-tests)"), 'b', "bidirectional"),
		OPT_INT(0, "sport", &o->sport, "BASE", "source port of flow 0; flow i uses BASE+i (ECMP entropy); verbs: 49152-65535 (any on mlx5), both ends of a flow; default: any", 1, 65535),
		BW_ONLY(OPT_INT(0, "tx-depth", &o->tx_depth, "N", "messages outstanding per flow (default 128; perftest's -t)", 1, 65536), 0, "tx-depth"),
		BW_ONLY(OPT_INT(0, "cq-mod", &o->cq_mod, "N", "ask for a completion every N messages (default 32)", 1, 65536), 0, "cq-mod"),
		BW_ONLY(OPT_INT(0, "post-list", &o->post_list, "N", "post N messages per call (verbs: one chained list, one doorbell; default 1)", 1, XPORT_MAX_POST_LIST), 0, "post-list"),
		OPT_INT(0, "tclass", &o->tclass, "N", "traffic class (IP TOS byte; DSCP = N >> 2)", 0, 255),
		OPT_STRING(0, "poll", &o->poll, "MODE", "how to wait for completions: busy (spin), event (sleep), adaptive (spin 50 us, then sleep); default: event; a server given --poll keeps its own"),
		OPT_GROUP("Verbs (-t verbs)"),
		OPT_STRING('d', "device", &o->device, "DEV", "RDMA device, its netdev, or an IP address of its GID table (default: the device of --bind, else the one of the address the route to HOST leaves from, else the first active one)"),
		OPT_INT(0, "ib-port", &o->ib_port, "N", "port of the device (default: the first active one)", 1, 255),
		OPT_INT('x', "gid-index", &o->gid_index, "N", "GID index (default: the RoCEv2 GID of the address)", 0, 255),
		OPT_INT('m', "mtu", &o->mtu, "BYTES", "path MTU: 256, 512, 1024, 2048 or 4096 (default: the smaller active MTU of both ports)", 256, 4096),
		OPT_INT(0, "sl", &o->sl, "N", "service level", 0, 15),
		OPT_INT(0, "qp-timeout", &o->qp_timeout, "N", "local ACK timeout, 4.096 us << N (default 14: 67 ms, as perftest; 18 on Soft-RoCE); larger for slow or lossy peers", 1, 31),
		OPT_INT(0, "flow-label", &o->flow_label_i, "N", "GRH flow label of flow 0, flow i gets N+i; on RoCE v2 it sets the UDP source port (or give --sport)", 1, 0xFFFFF),
		OPT_INT(0, "inline", &o->inline_size, "BYTES", bw ? "send messages up to this size inline (default 0)" : "send messages up to this size inline (default 236, as perftest; 0 for --op read)", 0, 4096),
		OPT_GROUP("Output"),
		OPT_BOOL(0, "json", &o->json, "print the records as one JSON array instead of a table"),
		OPT_FILE('o', "output", &o->output, "FILE", "also write the records to FILE, a JSON line each (as results.jsonl), flushed record by record"),
		OPT_BOOL(0, "report-gbits", &o->gbits, "text: bandwidth in Gb/s instead of MB/s (10^6 bytes/s)"),
		OPT_LIST(0, "label", &o->labels, "K=V", "add a label to every record, e.g. lb=ecmp (repeatable)"),
		OPT_VERBOSE(&o->verbose),
		/* what perftest and iperf3 users type: said what it is here */
		OPT_NOT_HERE('c', "client", "iperf3's -c HOST: give HOST as the argument, fabscope bw HOST; perftest's -c RC: the connection is RC always"),
		OPT_NOT_HERE('P', "parallel", "iperf3's -P N, parallel streams: here -q N, flows of bw"),
		OPT_NOT_HERE('J', NULL, "iperf3's -J: here --json"),
		OPT_NOT_HERE('R', "reverse", "iperf3's -R: the client sends with --op write or send, the server with --op read; perftest's -R, rdma_cm: QPs connect over fabscope's own control connection"),
		OPT_NOT_HERE('l', "length", "iperf3's -l LEN: here -s SIZE"),
		OPT_NOT_HERE('i', "interval", "perftest's -i PORT: here --ib-port N; iperf3's -i, reports every N s: fabscope reports per size"),
		OPT_NOT_HERE('u', "udp", "iperf3's -u: fabscope tests over TCP or verbs, -t tcp|verbs"),
		OPT_NOT_HERE('e', "use_event", "perftest's -e: here --poll event (the default)"),
		OPT_NOT_HERE('I', "inline_size", "perftest's -I SIZE: here --inline BYTES"),
		OPT_NOT_HERE('S', NULL, "perftest's -S SL: here --sl N"),
		OPT_NOT_HERE('T', "tos", "perftest's -T TOS and iperf3's --tos: here --tclass N"),
		OPT_NOT_HERE('F', NULL, "perftest's -F: fabscope does not check the CPU frequency; drop it"),
		OPT_NOT_HERE(0, "qp", "perftest's --qp=N: here -q N (--flows)"),
		OPT_NOT_HERE(0, "ib-dev", "perftest's --ib-dev: here -d DEV"),
		OPT_NOT_HERE(0, "report_gbits", "perftest's --report_gbits: here --report-gbits"),
		OPT_NOT_HERE(0, "post_list", "perftest's --post_list: here --post-list N"),
		OPT_NOT_HERE(0, "connection", "perftest's --connection: the connection is RC always"),
		OPT_NOT_HERE(0, "time", "iperf3's --time: here -D SECONDS"),
		OPT_NOT_HERE(0, "bidir", "iperf3's --bidir: here -b"),
		OPT_END(),
	};
#undef BW_ONLY
	int n = (int)(sizeof(t) / sizeof(t[0]));

	if (n > max)
		return -1;
	memcpy(tab, t, sizeof(t));
	return n - 1;	/* without the end marker */
}

/*
 * A value of --KEY that is none of its choices, one line: where a plan wrote
 * it when it did ("plan.ini:5: poll 'spin' of [bw]: ADVICE", see
 * opts_set_origin), else "BEFORE<value>AFTER: ADVICE".
 */
static int bad_choice(const char *key, const char *val, const char *before, const char *after,
		      const char *advice)
{
	const char *where = opts_where(key, val);

	if (where)
		return opts_err_at(where, "%s", advice);
	return fs_err_usage("%s%s%s: %s", before, val, after, advice);
}

static int parse_warmup(struct ptp_opts *o)
{
	size_t n;
	uint64_t v;

	if (!o->warmup) {
		if (o->iters)
			o->warmup_iters = o->iters / 10 ? o->iters / 10 : 1;
		else
			o->warmup_s = o->duration / 10;
		return 0;
	}
	n = strlen(o->warmup);
	if (n && o->warmup[n - 1] == 's') {
		if (units_parse_seconds(o->warmup, &o->warmup_s) &&
		    strcmp(o->warmup, "0s"))
			goto bad;
		return 0;
	}
	if (units_parse_count(o->warmup, &v))
		goto bad;
	o->warmup_iters = v;
	return 0;
bad:
	return bad_choice("warmup", o->warmup, "invalid value '", "' for option '--warmup'",
			  "expected messages (e.g. 100) or seconds (e.g. 0.5s)");
}

/* --op: 0, or -exit code with one line said */
static int check_op(const struct ptp_opts *o, int is_bw)
{
	if (strcmp(o->op, "write") && strcmp(o->op, "send") && strcmp(o->op, "read") &&
	    (!is_bw || strcmp(o->op, "write_imm")))
		return bad_choice("op", o->op, "unknown --op '", "'", is_bw ? "bw takes write, send, read or write_imm" :
				  "lat takes send, write or read");
	return 0;
}

int ptp_finish_opts(struct ptp_opts *o, int nargs)
{
	int is_bw = !strcmp(o->test, "bw");

	if (o->server && nargs)
		return fs_err_usage("--server takes no HOST argument");
	if (!o->server && nargs != 1)
		return fs_err_usage(nargs ? "too many arguments: give one HOST" :
				    "missing HOST: give the server's address, or --server to be the server");
	if (!o->server && !o->port)
		return fs_err_usage("--port 0 is for a server: give the client the port the server listens on");
	if (!o->timeout_s)
		o->timeout_s = 10;
	if (!o->transport)
		o->transport = "tcp";
	if (*o->transport && strspn(o->transport, "0123456789.") == strlen(o->transport))
		return fs_err_usage("-t is the transport here (tcp or verbs), not iperf3's time: give -D %s for %s seconds",
				    o->transport, o->transport);
	if (!xport_find(o->transport))
		return xport_check(o->transport);
	if (strcmp(o->transport, "verbs") &&
	    (o->device || o->ib_port || o->gid_index >= 0 || o->mtu || o->sl ||
	     o->flow_label_i || o->inline_size >= 0 || o->qp_timeout))
		return fs_err_usage("-d, --ib-port, -x, -m, --sl, --flow-label, --inline and --qp-timeout are for -t verbs");
	if (o->inline_size < 0)	/* small pings go inline, as perftest's lat tests (READs never) */
		o->inline_size = is_bw || strcmp(o->transport, "verbs") ||
				 (o->op && !strcmp(o->op, "read")) ? 0 : 236;
	if (o->mtu && (o->mtu & (o->mtu - 1))) {
		char v[16];

		snprintf(v, sizeof(v), "%d", o->mtu);
		return bad_choice("mtu", v, "invalid MTU ", "", "use 256, 512, 1024, 2048 or 4096");
	}
	if (o->poll && xport_poll_mode_parse(o->poll, NULL))
		return bad_choice("poll", o->poll, "unknown --poll mode '", "'", "use busy, event or adaptive");
	if (o->server) {	/* the client's parameters rule the session ... */
		json_t *l;
		const char *bad;

		o->server_poll = o->poll;	/* ... but for a --poll of its own */
		/* The test's options are the client's, and a server ignores its
		 * own (a plan gives the same ones to both sides); a wrong value is
		 * still an error, here as on a client. */
		if (o->op && check_op(o, is_bw))
			return -FS_EXIT_USAGE;
		if (record_labels(&o->labels, &l, &bad))
			return fs_err_usage(RECORD_LABEL_ERR, bad);
		json_decref(l);
		return parse_warmup(o);
	}
	if (o->iters && o->duration)
		return fs_err_usage("-n and -D exclude each other: give a count or a duration");
	if (o->sweep && o->size)
		return fs_err_usage("-a and -s exclude each other: sweep all sizes or give one");
	if (!o->size)
		o->size = is_bw ? 65536 : 2;
	if (!o->iters && !o->duration) {
		if (is_bw)
			o->duration = o->sweep ? 1 : 2;
		else
			o->iters = 10000;
	}
	if (!o->op)
		o->op = is_bw ? "write" : "send";
	if (check_op(o, is_bw))
		return -FS_EXIT_USAGE;
	if (!o->poll)
		o->poll = "event";
	if (!o->flows)
		o->flows = 1;
	if (!o->post_list)
		o->post_list = 1;
	if (!o->tx_depth)
		o->tx_depth = 128;
	if (!o->cq_mod)
		o->cq_mod = o->tx_depth < 32 ? o->tx_depth : 32;
	if (o->cq_mod > o->tx_depth)
		return fs_err_usage("--cq-mod %d is larger than --tx-depth %d: completions would never come",
				    o->cq_mod, o->tx_depth);
	if (o->sport && o->sport + o->flows - 1 > 65535)
		return fs_err_usage("--sport %d with %d flows runs past port 65535", o->sport, o->flows);
	if (o->sport && o->flow_label_i)
		return fs_err_usage("--sport and --flow-label both choose the UDP source ports: give one of them");
	if (o->flow_label_i && o->flow_label_i + o->flows - 1 > 0xFFFFF)	/* 0: rxe's own choice */
		return fs_err_usage("--flow-label %d with %d flows runs past the largest label, %d",
				    o->flow_label_i, o->flows, 0xFFFFF);
	return parse_warmup(o);
}

int ptp_out_init(struct out *out, const struct ptp_opts *o)
{
	/* perftest's --output=bandwidth|latency|message_rate prints one
	 * number; ours names a file: a file named so is ./bandwidth */
	if (o->output && (!strcmp(o->output, "bandwidth") || !strcmp(o->output, "latency") ||
			  !strcmp(o->output, "message_rate")))
		return fs_err_usage("--output FILE writes the records as JSON to FILE; perftest's --output=%s "
				    "(print only that number) is not an option here: take it from --json "
				    "(metrics.%s); to name a file '%s', write ./%s", o->output,
				    !strcmp(o->output, "bandwidth") ? "bw_gbps" : !strcmp(o->output, "latency") ?
				    "lat_us.p50" : "msg_rate_mpps", o->output, o->output);
	out_init(out, o->json ? OUT_JSON : OUT_TEXT, stdout);
	out->gbits = o->gbits;
	return o->output ? out_json_file(out, o->output) : 0;
}

int ptp_sizes(const struct ptp_opts *o, uint64_t *sizes, int max)
{
	uint64_t s;
	int n = 0;

	if (!o->sweep) {
		sizes[0] = o->size;
		return 1;
	}
	for (s = PTP_SWEEP_MIN; s <= PTP_SWEEP_MAX && n < max; s *= 2)
		sizes[n++] = s;
	return n;
}

/* ---- control channel ---- */

static const char *peer_role(const struct ptp_ctx *c)
{
	return c->is_server ? "client" : "server";
}

int ptp_send(struct ptp_ctx *c, json_t *msg)
{
	int rc = wire_send(c->ctl, msg, c->timeout_ms);

	json_decref(msg);
	if (rc == -EINTR)
		return fs_err(FS_EXIT_INTERRUPTED, "interrupted");
	if (rc == -ECONNRESET || rc == -EPIPE)	/* as recv_msg says it: between sizes, the same */
		return fs_err_peer("%s %s went away (control connection closed)",
				   peer_role(c), c->peer_name);
	if (rc)
		return fs_err_peer("control connection to %s %s: %s", peer_role(c),
				   c->peer_name, wire_strerror(rc));
	return 0;
}

static int recv_checked(struct ptp_ctx *c, json_t *m, json_t **msg, const char *expect)
{
	const char *type = json_string_value(json_object_get(m, "type"));

	if (type && !strcmp(type, "error")) {
		const char *why = json_string_value(json_object_get(m, "message"));
		int code = (int)json_integer_value(json_object_get(m, "exit"));

		/* a refusal is the peer's failure (4), whatever it thought of
		 * our request; but for what is the environment's on either end
		 * (3: a token, a protocol version), which stays what it is */
		code = fs_err(code == FS_EXIT_ENV ? code : FS_EXIT_PEER, "%s %s refused: %s",
			      peer_role(c), c->peer_name, why ? why : "no reason given");
		json_decref(m);
		return code;
	}
	if (expect && (!type || strcmp(type, expect))) {
		int code = fs_err_peer("%s %s sent '%s' where '%s' was due: protocol error",
				       peer_role(c), c->peer_name, type ? type : "?", expect);

		json_decref(m);
		return code;
	}
	*msg = m;
	return 0;
}

/*
 * The first message of a session (first != 0) is where a peer that is no
 * fabscope peer shows: another service's greeting or error page, or nothing
 * at all from a server busy with another client.  Say so, and what to do.
 */
static int recv_msg(struct ptp_ctx *c, json_t **msg, const char *expect, int first)
{
	char what[128];
	json_t *m;
	int rc = wire_recv_what(c->ctl, &m, WIRE_MAX_MSG, c->timeout_ms, what, sizeof(what));

	*msg = NULL;
	if (rc == -ECONNRESET)
		return fs_err_peer("%s %s went away (control connection closed)",
				   peer_role(c), c->peer_name);
	if (rc == -EINTR)
		return fs_err(FS_EXIT_INTERRUPTED, "interrupted");
	if (first && (rc == -EMSGSIZE || rc == -EPROTO)) {
		if (c->is_server)
			return fs_err_peer("client %s sent something that is not a fabscope control message (%s); not a fabscope client? closed its connection",
					   c->peer_name, what);
		return fs_err_peer("server %s sent something that is not a fabscope control message (%s); is %d another service's port? run 'fabscope %s --server -p %d' there",
				   c->peer_name, what, c->o->port, c->o->test, c->o->port);
	}
	if (first && rc == -ETIMEDOUT && !c->is_server)
		return fs_err_peer("server %s accepted the connection but did not answer within %g s: busy with another test (an older fabscope server serves one client at a time without saying so), or not a fabscope server; retry later, or check the port",
				   c->peer_name, c->o->timeout_s);
	if (rc)
		return fs_err_peer("control connection to %s %s: %s%s%s%s", peer_role(c),
				   c->peer_name, wire_strerror(rc), what[0] ? " (" : "", what,
				   what[0] ? ")" : "");
	return recv_checked(c, m, msg, expect);
}

int ptp_recv(struct ptp_ctx *c, json_t **msg, const char *expect)
{
	return recv_msg(c, msg, expect, 0);
}

int ptp_try_recv(struct ptp_ctx *c, json_t **msg)
{
	struct pollfd p = { .fd = c->ctl, .events = POLLIN };
	int rc;

	*msg = NULL;
	if (poll(&p, 1, 0) <= 0)
		return 0;
	rc = ptp_recv(c, msg, NULL);
	return rc ? rc : 1;
}

int ptp_send_error(int fd, int code, const char *why)
{
	json_t *m = json_pack("{s:s, s:s, s:i}", "type", "error", "message", why, "exit", code);
	int rc = wire_send(fd, m, 2000);

	json_decref(m);
	return rc;
}

/* ---- sessions ---- */

static const char *node_name(const struct ptp_opts *o)
{
	static char host[256];

	if (o->node)
		return o->node;
	if (!host[0] && gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "localhost");
	return host;
}

static json_t *params_json(const struct ptp_opts *o)
{
	uint64_t sizes[32];
	int i, n = ptp_sizes(o, sizes, 32);
	json_t *a = json_array();

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)sizes[i]));
	/* (one format per key: json_pack ignores values the format has no place for) */
	return json_pack("{s:s, s:s, s:o, s:i, s:I, s:f, s:I, s:f, s:b, s:i, s:i, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}",
			 "transport", o->transport, "op", o->op, "sizes", a,
			 "flows", o->flows, "iters", (json_int_t)o->iters,
			 "duration_s", o->duration, "warmup_iters", (json_int_t)o->warmup_iters,
			 "warmup_s", o->warmup_s, "bidir", o->bidir, "tx_depth", o->tx_depth,
			 "cq_mod", o->cq_mod, "poll", o->poll, "tclass", o->tclass,
			 "mtu", o->mtu, "sl", o->sl, "flow_label", o->flow_label_i,
			 "post_list", o->post_list, "qp_timeout", o->qp_timeout, "sport", o->sport,
			 "inline", o->inline_size);
}

/* The server adopts the client's test parameters. */
static int params_adopt(struct ptp_opts *o, json_t *p, char *why, size_t len)
{
	const char *transport, *op, *poll;
	json_int_t flows, iters, wi, depth, cqm, tclass, mtu = 0, sl = 0, fl = 0, pl = 1, qto = 0, sport = 0;
	json_int_t inl = o->inline_size;	/* a client without the key: the server's default */
	double dur, ws;
	int bidir;
	json_t *sizes;

	if (json_unpack(p, "{s:s, s:s, s:o, s:I, s:I, s:F, s:I, s:F, s:b, s:I, s:I, s:s, s:I}",
			"transport", &transport, "op", &op, "sizes", &sizes,
			"flows", &flows, "iters", &iters, "duration_s", &dur,
			"warmup_iters", &wi, "warmup_s", &ws, "bidir", &bidir,
			"tx_depth", &depth, "cq_mod", &cqm, "poll", &poll, "tclass", &tclass) ||
	    !json_is_array(sizes) || flows < 1 || flows > PTP_MAX_FLOWS ||
	    depth < 1 || depth > 65536 || cqm < 1 || cqm > depth || iters < 0 ||
	    wi < 0 || dur < 0 || ws < 0 || dur > 1e6 || ws > 1e6 ||
	    tclass < -1 || tclass > 255 ||
	    json_unpack(p, "{s?I, s?I, s?I, s?I, s?I, s?I, s?I}", "mtu", &mtu, "sl", &sl, "flow_label", &fl,
			"post_list", &pl, "qp_timeout", &qto, "sport", &sport, "inline", &inl) ||
	    inl < 0 || inl > 4096 ||
	    mtu < 0 || mtu > 4096 || sl < 0 || sl > 15 || fl < 0 || fl > 0xFFFFF || qto < 0 || qto > 31 ||
	    sport < 0 || sport + flows - 1 > 65535 || (sport && fl) ||
	    pl < 1 || pl > XPORT_MAX_POST_LIST) {
		snprintf(why, len, "malformed or out-of-range test parameters");
		return -1;
	}
	if (strcmp(op, "write") && strcmp(op, "send") && strcmp(op, "read") &&
	    (strcmp(o->test, "bw") || strcmp(op, "write_imm"))) {
		snprintf(why, len, "unknown operation '%s'", op);
		return -1;
	}
	if (xport_poll_mode_parse(poll, NULL)) {
		snprintf(why, len, "unknown poll mode '%s'", poll);
		return -1;
	}
	if (strcmp(transport, o->transport)) {
		snprintf(why, len, "this server runs transport '%s', the client asked for '%s'; start the server with -t %s",
			 o->transport, transport, transport);
		return -1;
	}
	o->op = op;
	o->flows = (int)flows;
	o->iters = (uint64_t)iters;
	o->duration = dur;
	o->warmup_iters = (uint64_t)wi;
	o->warmup_s = ws;
	o->bidir = bidir;
	o->tx_depth = (int)depth;
	o->cq_mod = (int)cqm;
	o->poll = poll;
	o->post_list = (int)pl;
	o->tclass = (int)tclass;
	o->mtu = (int)mtu;
	o->sl = (int)sl;
	o->qp_timeout = (int)qto;
	o->flow_label_i = (int)fl;
	o->sport = (int)sport;
	o->inline_size = (int)inl;
	return 0;
}

static int max_size(json_t *sizes, uint64_t *out)
{
	size_t i;
	json_t *v;

	*out = 0;
	json_array_foreach(sizes, i, v) {
		json_int_t s = json_integer_value(v);

		if (!json_is_integer(v) || s < 1 || s > (1ll << 30))
			return -1;
		if ((uint64_t)s > *out)
			*out = (uint64_t)s;
	}
	return *out ? 0 : -1;
}

static struct xport_params xport_params_of(const struct ptp_ctx *c, const char *bind)
{
	const struct ptp_opts *o = c->o;
	struct xport_params p = {
		.bind_addr = bind,
		/* a server's (passive) TCP flows take no source port; its QPs do:
		 * both ends of flow i use port sport + i (see transport/verbs.c) */
		.sport_base = o->sport,
		.tclass = o->tclass,
		.device = o->device,
		.route_addr = c->route_src[0] ? c->route_src : NULL,
		.ib_port = o->ib_port,
		.gid_index = o->gid_index,
		.mtu = o->mtu,
		.sl = o->sl,
		.flow_label = (uint32_t)o->flow_label_i,
		.max_inline = (uint32_t)o->inline_size,
		.timeout_ms = c->timeout_ms,
		.queue_depth = (uint32_t)o->tx_depth,
		.qp_timeout = o->qp_timeout,
	};

	xport_poll_mode_parse(o->poll, &p.poll_mode);	/* checked with the options */
	return p;
}

/*
 * A failure of this side's transport, one line: said here, and a server
 * sends it to its client too, whose run fails with it (and its exit code)
 * instead of "went away" when the control connection closes.
 */
static int FS_PRINTF(3, 4) xport_trouble(struct ptp_ctx *c, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->is_server)
		ptp_send_error(c->ctl, code, msg);
	return fs_err(code, "%s", msg);
}

/* Open the transport and register the buffers: all that can fail locally,
 * done before any peer is involved. */
uint64_t ptp_max_mem(const struct ptp_opts *o)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0, dflt = ram / 8;

	if (o->max_mem)
		return o->max_mem;
	if (dflt > (1ull << 30))	/* 2 x 512 MiB messages: past any real test's */
		dflt = 1ull << 30;
	return dflt > (64ull << 20) ? dflt : 64ull << 20;
}

static int open_transport(struct ptp_ctx *c, uint64_t maxsize, const char *bind)
{
	struct xport_params p = xport_params_of(c, bind);
	char err[256];
	int rc;

	rc = xport_open(c->o->transport, &p, &c->x, err, sizeof(err));
	if (rc)
		return xport_trouble(c, FS_EXIT_ENV, "%s", err);
	c->area = (size_t)maxsize;
	c->buf = xport_alloc(c->x, 2 * c->area);	/* on the NIC's NUMA node */
	if (!c->buf)
		return xport_trouble(c, FS_EXIT_ENV, "cannot allocate %zu bytes of buffers", 2 * c->area);
	memset(c->buf, 0xa5, 2 * c->area);
	rc = xport_mr_reg(c->x, c->buf, 2 * c->area, XPORT_ACCESS_REMOTE, &c->mr);
	if (rc)
		return xport_trouble(c, FS_EXIT_ENV, "cannot register buffers: %s", xport_errmsg(c->x));
	return 0;
}

/* Exchange blobs with the peer and connect the flows. */
static int connect_transport(struct ptp_ctx *c)
{
	struct ptp_opts *o = c->o;
	json_t *m, *blob, *peer_blob, *region;
	int rc, i;

	if (!c->is_server) {
		rc = xport_conn_new(c->x, o->flows, XPORT_ROLE_ACTIVE, &c->conn);
		if (rc)
			return fs_err_env("%s", xport_errmsg(c->x));
		blob = xport_conn_blob(c->conn);
		rc = ptp_send(c, json_pack("{s:s, s:o, s:o}", "type", "setup", "blob", blob,
					   "region", xport_rmr_json(&c->mr)));
		if (rc || (rc = ptp_recv(c, &m, "setup")))
			return rc;
	} else {
		rc = ptp_recv(c, &m, "setup");
		if (rc)
			return rc;
		rc = xport_conn_new(c->x, o->flows, XPORT_ROLE_PASSIVE, &c->conn);
		if (rc) {
			json_decref(m);
			return xport_trouble(c, FS_EXIT_ENV, "%s", xport_errmsg(c->x));
		}
		blob = xport_conn_blob(c->conn);
		rc = ptp_send(c, json_pack("{s:s, s:o, s:o}", "type", "setup", "blob", blob,
					   "region", xport_rmr_json(&c->mr)));
		if (rc) {
			json_decref(m);
			return rc;
		}
	}
	peer_blob = json_object_get(m, "blob");
	region = json_object_get(m, "region");
	if (!peer_blob || xport_rmr_parse(region, &c->peer_rmr) ||
	    c->peer_rmr.len < 2 * c->area) {
		json_decref(m);
		return xport_trouble(c, FS_EXIT_PEER, "%s sent a malformed setup message", c->peer_name);
	}
	rc = xport_conn_connect(c->conn, peer_blob);
	json_decref(m);
	if (rc)
		return xport_trouble(c, rc == -EADDRINUSE ? FS_EXIT_USAGE :
				     rc == -EPROTO || rc == -ETIMEDOUT || rc == -ECONNREFUSED ||
				     rc == -ECONNRESET || rc == -EHOSTUNREACH || rc == -ENETUNREACH ?
				     FS_EXIT_PEER : FS_EXIT_ENV, "%s", xport_errmsg(c->x));
	c->flows_info = json_array();
	for (i = 0; i < o->flows; i++) {
		json_t *fi = json_object();

		xport_flow_info(c->conn, i, fi);
		json_array_append_new(c->flows_info, fi);
	}
	return 0;
}

static void set_endpoints(struct ptp_ctx *c, const char *peer_node)
{
	json_t *f0 = json_array_get(c->flows_info, 0);

	c->local_ep = json_pack("{s:s, s:s}", "node", node_name(c->o),
				"ip", record_str(f0, "src_ip", "?"));
	c->peer_ep = json_pack("{s:s, s:s}", "node", peer_node ? peer_node : "?",
			       "ip", record_str(f0, "dst_ip", "?"));
}

/*
 * --token-file: both ends prove the secret before a test, as the fleet's
 * handshake does (fleet.h), under roles of their own.  The client's hello
 * carries its nonce (auth); the server answers with a challenge, its nonce
 * and HMAC(token, "fabscope-ptp-server\n" nonce_c "\n" nonce_s); the client,
 * having checked it, sends HMAC(token, "fabscope-ptp-client\n" nonce_s "\n"
 * nonce_c) in an auth message, and only then does the server look at what the
 * hello asks.  Neither side sends the token.  What follows the handshake is not
 * MAC'd: like iperf3's authentication this keeps strangers off a server, it
 * does not protect a session against a man in the middle.
 */
/* The client's side, with the server's first answer in *m (its hello on
 * success). */
static int client_auth(struct ptp_ctx *c, const char *cn, json_t **m)
{
	const char *type = json_string_value(json_object_get(*m, "type"));
	const char *sn = json_string_value(json_object_get(*m, "nonce"));
	char mac[AUTH_NONCE_HEX + 1];
	int rc;

	if (!type || strcmp(type, "challenge")) {
		rc = fs_err_env("server %s did not prove the token of --token-file: it runs without one; not talking to it",
				c->peer_name);
		goto fail;
	}
	if (!auth_nonce_ok(sn) ||
	    !auth_mac_ok(c->o->token, "ptp-server", cn, sn, json_string_value(json_object_get(*m, "mac")))) {
		ptp_send_error(c->ctl, FS_EXIT_ENV, "its --token-file holds another secret than this server's");
		rc = fs_err_env("server %s does not know the token of --token-file (another secret, or not the server you meant); not talking to it",
				c->peer_name);
		goto fail;
	}
	auth_mac(c->o->token, "ptp-client", sn, cn, mac);
	json_decref(*m);
	*m = NULL;
	rc = ptp_send(c, json_pack("{s:s, s:s}", "type", "auth", "mac", mac));
	return rc ? rc : recv_msg(c, m, "hello", 0);
fail:
	json_decref(*m);
	*m = NULL;
	return rc;
}

/*
 * A message that the link from local cannot carry within --timeout (nor, in
 * a timed bw run, within -D) at its line rate: said before the run, exit 2,
 * instead of a run that times out or measures nothing.  The line rate bounds
 * what any message can take; a link without a known rate is not checked.
 */
static int fits_link(const struct ptp_opts *o, const struct net_addr *local, uint64_t size)
{
	char ifn[80], sz[32];
	int mbps = net_link_speed(local, ifn, sizeof(ifn));
	double t;

	if (mbps <= 0)
		return 0;
	t = (double)size * 8 / ((double)mbps * 1e6);	/* one message at line rate */
	units_format_size(size, sz, sizeof(sz));
	if (t > o->timeout_s)
		return fs_err_usage("a %s message takes at least %.3g s at the %d Mb/s of %s, longer than --timeout %g: "
				    "give a smaller -s, or --timeout %.0f", sz, t, mbps, ifn, o->timeout_s, 2 * t + 1);
	if (!strcmp(o->test, "bw") && !o->iters && t > o->duration)
		return fs_err_usage("a %s message takes at least %.3g s at the %d Mb/s of %s: -D %g would measure none; "
				    "give -D %.0f, -n, or a smaller -s", sz, t, mbps, ifn, o->duration, 10 * t + 1);
	return 0;
}

int ptp_client_open(struct ptp_ctx *c, struct ptp_opts *o, const char *host)
{
	char cn[AUTH_NONCE_HEX + 1];
	struct net_addr dst, src;
	char err[256], name[NET_ADDRSTRLEN + 64];
	const char *bad = NULL, *peer_node;
	json_t *m;
	uint64_t maxsize, sizes[32];
	int rc, n;

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->ctl = -1;
	c->timeout_ms = units_ms(o->timeout_s);
	net_stop_on_signals();	/* ^C ends the run cleanly, keeping the records */
	if (record_labels(&o->labels, &c->labels, &bad))
		return fs_err_usage(RECORD_LABEL_ERR, bad);
	if (!*host)	/* (getaddrinfo would take it for this host) */
		return fs_err_usage("HOST is empty: give the server's name or address");
	if (net_resolve(host, o->port, 0, &dst, err, sizeof(err)))
		return fs_err_usage("cannot resolve host '%s': %s; check the name or give an IP address",
				    host, err);
	if (o->bind && net_resolve(o->bind, 0, 1, &src, err, sizeof(err)))
		return fs_err_usage("cannot use --bind '%s': %s", o->bind, err);
	if (o->bind && src.ss.ss_family != dst.ss.ss_family)
		return fs_err_usage("--bind '%s' is an IPv%c address and '%s' IPv%c: give both of one family",
				    o->bind, src.ss.ss_family == AF_INET6 ? '6' : '4', host,
				    dst.ss.ss_family == AF_INET6 ? '6' : '4');
	if (o->bind && (rc = net_can_bind(&src)))	/* not the peer's failure: ours */
		return fs_err_env("cannot use --bind '%s': %s", o->bind, rc == -EADDRNOTAVAIL ?
				  "no interface here has that address" : strerror(-rc));
	net_addr_str(&dst, name, sizeof(name));
	c->peer_name = strdup(name);
	n = ptp_sizes(o, sizes, 32);
	maxsize = sizes[n - 1];
	{
		struct net_addr rs;
		int have = !!o->bind;

		if (!o->bind && !net_route_src(&dst, &rs)) {	/* the device of the rail that reaches HOST (verbs, without -d) */
			net_addr_host(&rs, c->route_src, sizeof(c->route_src));
			have = 1;
		}
		if (have && (rc = fits_link(o, o->bind ? &src : &rs, maxsize)))
			return rc;
	}
	rc = open_transport(c, maxsize, o->bind);	/* local trouble first */
	if (rc)
		return rc;
	rc = net_connect(&dst, o->bind ? &src : NULL, c->timeout_ms);
	if (rc < 0) {
		if (rc == -ECONNREFUSED)
			return fs_err_peer("cannot connect to %s: connection refused; is 'fabscope %s --server -p %d' running there?",
					   name, o->test, o->port);
		if (rc == -ETIMEDOUT)
			return fs_err_peer("cannot connect to %s: no answer within %.0f s; check the address, routes and firewalls",
					   name, o->timeout_s);
		return fs_err_peer("cannot connect to %s: %s", name, strerror(-rc));
	}
	c->ctl = rc;
	if (o->token && (rc = auth_nonce(cn)))
		return fs_err_env("cannot get random bytes for a nonce: %s", strerror(-rc));
	rc = ptp_send(c, json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:o, s:s*}",
				   "type", "hello", "proto", PTP_PROTO,
				   "version", wire_version(), "tool_version", FABSCOPE_VERSION,
				   "test", o->test, "node", node_name(o),
				   "params", params_json(o), "auth", o->token ? cn : NULL));
	if (rc || (rc = recv_msg(c, &m, o->token ? NULL : "hello", 1)))
		return rc;
	if (o->token && (rc = client_auth(c, cn, &m)))
		return rc;
	peer_node = json_string_value(json_object_get(m, "node"));
	{	/* the server's poll mode, when it is not ours, goes in the records */
		const char *pp = json_string_value(json_object_get(m, "poll"));

		if (pp && !xport_poll_mode_parse(pp, NULL))
			snprintf(c->peer_poll, sizeof(c->peer_poll), "%s", pp);
	}
	if (json_integer_value(json_object_get(m, "version")) != wire_version()) {
		rc = fs_err_env("protocol version mismatch with %s: it speaks %lld, this side %d; run the same fabscope version on both ends",
				name, (long long)json_integer_value(json_object_get(m, "version")),
				wire_version());
		json_decref(m);
		return rc;
	}
	rc = connect_transport(c);
	if (!rc)
		set_endpoints(c, peer_node);
	json_decref(m);
	return rc;
}

void ptp_close(struct ptp_ctx *c)
{
	if (c->conn)
		xport_conn_free(c->conn);
	if (c->x) {
		xport_mr_dereg(c->x, &c->mr);
		xport_free(c->x, c->buf, 2 * c->area);
		xport_close(c->x);
	}
	if (c->ctl >= 0)
		close(c->ctl);
	json_decref(c->local_ep);
	json_decref(c->peer_ep);
	json_decref(c->flows_info);
	json_decref(c->labels);
	free((void *)c->peer_name);
	memset(c, 0, sizeof(*c));
	c->ctl = -1;
}

/* Handshake with one client; on success the session runs. */
/* After the set-up: "run" a size, "ready", the test, until "bye". */
static int serve_sizes(struct ptp_ctx *c, const struct ptp_test *t)
{
	json_t *m;
	int rc = t->prepare(c);
	/* for tests: hold the server this long after "ready", so that the
	 * client's first message surely lands before the size's test starts */
	const char *delay = fs_test_env("FABSCOPE_TEST_READY_DELAY_MS");
	int delay_ms = delay ? atoi(delay) : 0;

	while (!rc) {
		const char *type;
		json_int_t size;

		rc = ptp_recv(c, &m, NULL);
		if (rc)
			break;
		type = json_string_value(json_object_get(m, "type"));
		if (type && !strcmp(type, "bye")) {
			json_decref(m);
			return 0;
		}
		size = json_integer_value(json_object_get(m, "size"));
		rc = !type || strcmp(type, "run") || size < 1 || (uint64_t)size > c->area;
		json_decref(m);
		if (rc)
			return fs_err_peer("client %s: bad run request", c->peer_name);
		if (t->arm_size && (rc = t->arm_size(c, (uint64_t)size)))
			break;
		rc = ptp_send(c, json_pack("{s:s}", "type", "ready"));
		if (!rc && delay_ms > 0)
			poll(NULL, 0, delay_ms);
		if (!rc)
			rc = t->serve_size(c, (uint64_t)size);
	}
	return rc;
}

/* One client, its handshake done (ptp-accept.c: hello checked, the token proved): its session. */
static int serve_one(struct ptp_opts *o, int fd, const struct net_addr *peer, json_t *m,
		     const struct ptp_test *t, struct ptp_busy *busy)
{
	struct ptp_opts so = *o;	/* the client's parameters go here */
	struct ptp_ctx c;
	char name[NET_ADDRSTRLEN], why[256], bind[NET_ADDRSTRLEN];
	const char *proto, *test = "", *cnode;
	struct net_addr local;
	json_t *params = NULL;
	uint64_t maxsize;
	int rc;

	memset(&c, 0, sizeof(c));
	why[0] = 0;
	c.o = &so;
	c.is_server = 1;
	c.ctl = fd;
	c.timeout_ms = units_ms(o->timeout_s);
	net_addr_str(peer, name, sizeof(name));
	c.peer_name = strdup(name);
	json_unpack(m, "{s:s, s:s, s:o}", "proto", &proto, "test", &test, "params", &params);
	cnode = json_string_value(json_object_get(m, "node"));
	if (strcmp(test, o->test)) {
		snprintf(why, sizeof(why), "this server runs '%s', the client asked for '%s'; start 'fabscope %s --server'",
			 o->test, test, test);
		ptp_send_error(fd, FS_EXIT_PEER, why);
		rc = fs_err_usage("client %s: %s", name, why);
		goto out_m;
	}
	if (params_adopt(&so, params, why, sizeof(why)) ||
	    max_size(json_object_get(params, "sizes"), &maxsize)) {
		if (!why[0])
			snprintf(why, sizeof(why), "malformed message sizes");
		ptp_send_error(fd, FS_EXIT_PEER, why);
		rc = fs_err_usage("client %s: %s", name, why);
		goto out_m;
	}
	{	/* what the client asks is bounded before anything is allocated */
		uint64_t need = 2 * maxsize, limit = ptp_max_mem(o);

		if (need > limit) {
			char n[32], l[32], sz[32];

			units_format_size(need, n, sizeof(n));
			units_format_size(limit, l, sizeof(l));
			units_format_size(maxsize, sz, sizeof(sz));
			snprintf(why, sizeof(why), "the test needs %s of buffers (2 x its largest message, %s), over this "
				 "server's limit of %s: use a smaller -s, or start the server with a larger --max-mem",
				 n, sz, l);
			ptp_send_error(fd, FS_EXIT_PEER, why);
			rc = fs_err_usage("client %s: refused: %s", name, why);
			goto out_m;
		}
	}
	if (o->server_poll)	/* how this node waits is its own business */
		so.poll = o->server_poll;
	record_labels(&o->labels, &c.labels, &proto);	/* (checked by ptp_finish_opts) */
	rc = ptp_send(&c, json_pack("{s:s, s:s, s:i, s:s, s:s, s:s}", "type", "hello",
				    "proto", PTP_PROTO, "version", wire_version(),
				    "tool_version", FABSCOPE_VERSION, "node", node_name(o),
				    "poll", so.poll));
	if (rc)
		goto out_m;
	ptp_busy_start(busy, name, cnode, &so);
	/* data flows listen where the client reached us, unless --bind says */
	net_local_addr(fd, &local);
	net_addr_host(&local, bind, sizeof(bind));
	rc = open_transport(&c, maxsize, o->bind ? o->bind : bind);
	if (!rc)
		rc = connect_transport(&c);
	if (rc)
		goto out_m;
	set_endpoints(&c, cnode);
	fs_info("client %s (%s): %s %s, %d flow%s", name, cnode ? cnode : "?",
		so.transport, so.op, so.flows, so.flows > 1 ? "s" : "");
	rc = serve_sizes(&c, t);
	if (!rc)
		fs_info("client %s: done", name);
out_m:
	ptp_busy_stop(busy);	/* before the teardown: the next client may be here */
	ptp_close(&c);	/* closes fd */
	return rc;
}

int ptp_server_loop(struct ptp_opts *o, const struct ptp_test *t)
{
	struct net_addr a;
	char err[256], name[NET_ADDRSTRLEN];
	struct ptp_queue q;
	int lfd, rc = 0, i;

	net_stop_on_signals();
	if (net_resolve(o->bind, o->port, 1, &a, err, sizeof(err)))
		return fs_err_usage("cannot use --bind '%s': %s", o->bind, err);
	{	/* the transport must work here before clients come */
		struct ptp_ctx probe = { .o = o, .is_server = 1, .ctl = -1 };
		struct xport_params p;
		struct xport *x;

		o->poll = o->poll ? o->poll : "event";
		o->tx_depth = o->tx_depth ? o->tx_depth : 128;
		p = xport_params_of(&probe, o->bind);
		p.sport_base = 0;	/* the clients' choice, checked with each */
		if (xport_open(o->transport, &p, &x, err, sizeof(err)))
			return fs_err_env("%s", err);
		xport_close(x);
	}
	lfd = net_listen(&a, 1024);	/* a burst of connections waits in the queue, not refused */
	net_addr_str(&a, name, sizeof(name));
	if (lfd == -EADDRINUSE)
		return fs_err_env("cannot listen on %s: port %d is in use; pick another with -p", name, o->port);
	if (lfd < 0)
		return fs_err_env("cannot listen on %s: %s", name, strerror(-lfd));
	if (!net_local_addr(lfd, &a))	/* the port taken, for --port 0 */
		net_addr_str(&a, name, sizeof(name));
	out_sink_event("listening", json_integer(net_addr_port(&a)));
	fs_info("%s server listening on %s (%s)", o->test, name, o->transport);
	if ((rc = ptp_queue_init(&q, o, lfd))) {
		close(lfd);
		return rc;
	}
	while (!net_stop) {
		struct ptp_busy busy = { .lfd = lfd, .once = o->once };
		struct net_addr peer;
		json_t *hello;
		int fd = ptp_queue_next(&q, &peer, &hello);

		if (o->once && q.failed && fd < 0) {	/* the one client, refused */
			rc = q.failed;
			break;
		}
		if (fd == -ETIMEDOUT || fd == -EINTR)
			continue;
		if (fd < 0) {
			rc = fs_err_env("accept on %s: %s", name, strerror(-fd));
			break;
		}
		rc = serve_one(o, fd, &peer, hello, t, &busy);
		json_decref(hello);
		for (i = 0; i < busy.nhanded; i++)	/* came as the session ended: next */
			ptp_queue_add(&q, busy.handed[i], &busy.handed_peer[i]);
		if (o->once)
			break;
		rc = 0;	/* a client's failure is not the server's */
	}
	ptp_queue_release(&q);
	close(lfd);
	if (net_stop && !o->once)
		fs_info("stopped");
	return net_stop ? 0 : rc;
}

/* A command line of t into o: 0, OPTS_HELP (the help printed), or -FS_EXIT_*
 * after the one-line message; ptp_opts_release() frees what it holds. */
static int ptp_parse(const struct ptp_test *t, int argc, const char **argv, struct ptp_opts *o,
		     int checking)
{
	struct opt tab[80];
	int nargs, rc;

	*o = (struct ptp_opts){ .test = t->name, .tclass = -1, .gid_index = -1, .inline_size = -1,
				.port = PTP_DEFAULT_PORT };
	ptp_options(o, tab, 80);
	rc = opts_parse(argc, argv, tab, t->usage, t->about, &nargs);
	if (rc)
		return rc;
	if (!checking)	/* (a plan check keeps the coordinator's own -v) */
		fs_set_verbosity(o->verbose);
	rc = ptp_finish_opts(o, nargs);
	if (!rc && o->allow_readable_token && !o->token_file)
		rc = fs_err_usage("--allow-readable-token is for --token-file");
	if (!rc && o->token_file)
		rc = auth_token(o->token_file, o->allow_readable_token, &o->token);
	return rc;
}

static void ptp_opts_release(struct ptp_opts *o)
{
	opt_list_release(&o->labels);
	if (o->token) {
		explicit_bzero(o->token, strlen(o->token));
		free(o->token);
		o->token = NULL;
	}
}

int ptp_check_args(const char *test, int argc, const char **argv)
{
	struct ptp_opts o;
	int rc = ptp_parse(!strcmp(test, "bw") ? &bw_test : &lat_test, argc, argv, &o, 1);

	ptp_opts_release(&o);
	return rc == OPTS_HELP ? 0 : rc;
}

int ptp_cmd(const struct ptp_test *t, int argc, const char **argv)
{
	struct ptp_opts o;
	int rc = ptp_parse(t, argc, argv, &o, 0);

	if (!rc)
		rc = o.server ? ptp_server_loop(&o, t) : t->client(&o, argv[0]);
	ptp_opts_release(&o);
	return rc == OPTS_HELP ? 0 : -rc;
}

json_t *ptp_record(struct ptp_ctx *c, uint64_t size, int client_is_src)
{
	struct ptp_opts *o = c->o;
	int local_is_src = c->is_server ? !client_is_src : client_is_src;
	json_t *r = record_new(o->test);

	json_object_set_new(r, "transport", json_string(o->transport));
	json_object_set_new(r, "op", json_string(o->op));
	json_object_set_new(r, "msg_size_bytes", json_integer((json_int_t)size));
	json_object_set_new(r, "flows", json_integer(o->flows));
	json_object_set_new(r, "dir", json_string(client_is_src ? "c2s" : "s2c"));
	json_object_set_new(r, "src", json_deep_copy(local_is_src ? c->local_ep : c->peer_ep));
	json_object_set_new(r, "dst", json_deep_copy(local_is_src ? c->peer_ep : c->local_ep));
	json_object_set_new(r, "labels", json_deep_copy(c->labels));
	json_object_set_new(r, "params", json_pack("{s:I, s:f, s:I, s:f, s:i, s:i, s:i, s:s, s:b}",
		"iters", (json_int_t)o->iters, "duration_s", o->duration,
		"warmup_iters", (json_int_t)o->warmup_iters, "warmup_s", o->warmup_s,
		"tx_depth", o->tx_depth, "cq_mod", o->cq_mod, "post_list", o->post_list,
		"poll", o->poll, "bidir", o->bidir));
	/* what was asked for the wire; null: the default (the flows' facts say what came) */
	json_object_set_new(json_object_get(r, "params"), "tclass",
			    o->tclass >= 0 ? json_integer(o->tclass) : json_null());
	json_object_set_new(json_object_get(r, "params"), "sport",
			    o->sport ? json_integer(o->sport) : json_null());
	if (!c->is_server && c->peer_poll[0] && strcmp(c->peer_poll, o->poll))
		json_object_set_new(json_object_get(r, "params"), "server_poll",
				    json_string(c->peer_poll));
	json_object_set_new(r, "status", json_string("ok"));
	return r;
}

void ptp_flow_facts(json_t *rec, json_t *info)
{
	static const struct { const char *from, *where, *to; } map[] = {
		{ "sport", "src", "port" }, { "dport", "dst", "port" },
		{ "qpn", "src", "qpn" }, { "dest_qpn", "dst", "qpn" },
		{ "device", "src", "device" }, { "ib_port", "src", "ib_port" },
		{ "netdev", "src", "netdev" }, { "gid_index", "src", "gid_index" },
		{ "flow_label", NULL, "flow_label" }, { "sport_source", NULL, "sport_source" },
		{ "mtu", NULL, "path_mtu_bytes" }, { "qp_timeout", NULL, "qp_timeout" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		json_t *v = json_object_get(info, map[i].from);

		if (v)
			json_object_set(map[i].where ? json_object_get(rec, map[i].where) : rec,
					map[i].to, v);
	}
}

int ptp_wc_error(struct ptp_ctx *c, const struct xport_wc *wc)
{
	const char *who = c->is_server ? "client" : "server";

	if (wc->status == XPORT_WC_CONN_LOST || wc->status == XPORT_WC_FLUSHED)
		return fs_err_peer("%s %s went away during the test (%s)", who,
				   c->peer_name, xport_errmsg(c->x));
	return fs_err_peer("%s on flow %d failed: %s (%s)", xport_op_name(wc->op),
			   wc->flow, xport_wc_status_str(wc->status), xport_errmsg(c->x));
}
