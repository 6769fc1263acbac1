/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope capture -i IF -w FILE`: record RoCEv2 (UDP 4791) and MAC
 * control (PFC, PAUSE) traffic, VLAN-tagged or not, into pcap files for
 * `fabscope pcap` (or Wireshark).  Headers are what the analysis needs, so
 * the snap length is short by default; -C and -W make a ring of files for
 * captures that run for days.  Every wake-up flushes the file, so a capture
 * killed at any point leaves every packet written so far readable.
 */
#include <errno.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/options.h"
#include "../core/units.h"
#include "../core/builtin.h"
#include "live.h"

#define CAP_SNAPLEN 256		/* Ethernet, 2 tags, IPv6 + extensions, UDP, BTH, RETH/AETH/atomics */
#define CAP_BUFFER (64 << 20)
#define CAP_POLL_MS 200
#define CAP_PROGRESS_NS (10 * 1000000000ull)

static const char *const capture_usage[] = {
	"fabscope capture -i IF -w FILE [options]",
	NULL,
};

static const char capture_about[] =
	"Record RoCEv2 (UDP port 4791) and MAC-control (PFC, PAUSE) frames seen on IF, with or\n"
	"without VLAN tags, into a pcap file for 'fabscope pcap' or Wireshark.  The snap length\n"
	"keeps the headers (256 bytes: Ethernet, two tags, IPv6, UDP, BTH and its extension\n"
	"headers), not the payload.  -C starts a new file (FILE.0, FILE.1, ...) every SIZE bytes\n"
	"and -W keeps only the last N of them, a ring for long captures.  SIGINT or SIGTERM ends\n"
	"the capture (exit 0); the files are flushed as packets come, so nothing written is lost.\n"
	"A NIC that offloads RoCE passes its packets to a capture only through its sniffer (ibdump,\n"
	"or libpcap's RDMA capture of the device where libpcap has it: -i mlx5_0); Soft-RoCE's\n"
	"packets go through the kernel and are seen on the netdev as they are.";

struct copts {
	const char *ifname, *file, *filter, *bufsz, *filesz;
	int snaplen, files, port, promisc, verbose;
	uint64_t count;
	double duration;
};

struct cstate {
	const struct copts *o;
	pcap_t *h;
	pcap_dumper_t *d;
	uint64_t file_limit;	/* bytes per file; 0: one file */
	int fileno;		/* the current file's number (with -C) */
	uint64_t pkts, bytes, file_bytes;
	int err;
};

static void file_name(const struct copts *o, int n, char *buf, size_t len)
{
	snprintf(buf, len, "%s.%d", o->file, n);
}

static int open_file(struct cstate *st)
{
	char name[4096];

	if (st->file_limit)
		file_name(st->o, st->fileno, name, sizeof(name));
	else
		snprintf(name, sizeof(name), "%s", st->o->file);
	st->d = pcap_dump_open(st->h, name);
	if (!st->d) {	/* (libpcap's message begins with the path: said once) */
		const char *why = pcap_geterr(st->h);
		size_t n = strlen(name);

		if (!strncmp(why, name, n) && !strncmp(why + n, ": ", 2))
			why += n + 2;
		return fs_err_env("cannot write '%s': %s", name, why);
	}
	st->file_bytes = 24;	/* the file header */
	if (st->file_limit && st->o->files > 0 && st->fileno >= st->o->files) {
		file_name(st->o, st->fileno - st->o->files, name, sizeof(name));
		if (unlink(name) && errno != ENOENT)
			fs_warn("cannot remove the oldest file of the ring '%s': %s", name, strerror(errno));
	}
	return 0;
}

static void on_packet(u_char *arg, const struct pcap_pkthdr *hdr, const u_char *bytes)
{
	struct cstate *st = (struct cstate *)(void *)arg;

	if (st->err)
		return;
	if (st->file_limit && st->file_bytes + 16 + hdr->caplen > st->file_limit && st->file_bytes > 24) {
		pcap_dump_close(st->d);
		st->d = NULL;
		st->fileno++;
		if (open_file(st)) {
			st->err = 1;
			pcap_breakloop(st->h);
			return;
		}
	}
	pcap_dump((u_char *)st->d, hdr, bytes);
	st->file_bytes += 16 + hdr->caplen;
	st->pkts++;
	st->bytes += hdr->len;
	if (st->o->count && st->pkts >= (uint64_t)st->o->count)
		pcap_breakloop(st->h);
}

int cmd_capture(int argc, const char **argv)
{
	struct copts o = { .snaplen = CAP_SNAPLEN, .port = 4791 };
	struct opt tab[] = {
		OPT_GROUP("Capture"),
		OPT_STRING('i', "interface", &o.ifname, "IF", "the interface to capture on, as tcpdump's -i (required; an RDMA device's netdev: fabscope devices lists them)"),
		OPT_FILE('w', "write", &o.file, "FILE", "the pcap file to write (required)"),
		OPT_INT('s', "snaplen", &o.snaplen, "BYTES", "bytes kept of each packet, as tcpdump's -s (default 256: the headers; in bw and lat, -s is the message size)", 64, 262144),
		OPT_INT(0, "port", &o.port, "PORT", "the RoCEv2 UDP port (default 4791)", 1, 65535),
		OPT_STRING('f', "filter", &o.filter, "BPF", "capture what this filter passes instead (pcap-filter(7) syntax; in the collectives, -f is the size step factor)"),
		OPT_BOOL(0, "promisc", &o.promisc, "promiscuous mode (a mirror port's traffic is not ours)"),
		OPT_STRING(0, "buffer", &o.bufsz, "SIZE", "kernel capture buffer (default 64M)"),
		OPT_GROUP("Files and limits"),
		OPT_STRING('C', "file-size", &o.filesz, "SIZE", "start a new file, FILE.N, every SIZE bytes (e.g. 1G)"),
		OPT_INT('W', "files", &o.files, "N", "with -C: keep only the last N files, a ring", 1, 1000000),
		OPT_COUNT('c', "count", &o.count, "N", "stop after N packets", 1, 0),
		OPT_SECONDS('D', "duration", &o.duration, "SECONDS", "stop after so long"),
		OPT_VERBOSE(&o.verbose),
		OPT_NOT_HERE('d', "device", "capture takes the interface, -i IF, as tcpdump: the netdev of the RDMA device (fabscope devices lists them)"),
		OPT_END(),
	};
	struct cstate st = { .o = &o };
	struct live_opts lo = { .immediate = 1, .nano = 1 };
	struct pcap_stat ps;
	char deflt[160];
	const char *filter;	/* -f's, any length: pcap_compile takes it whole */
	uint64_t t0, next_progress, buf = CAP_BUFFER;
	int nargs, rc, nano = 0;

	fs_set_progname("fabscope capture");
	rc = opts_parse(argc, argv, tab, capture_usage, capture_about, &nargs);
	if (rc)
		return rc == OPTS_HELP ? 0 : -rc;
	fs_set_verbosity(o.verbose);
	if (nargs)
		return -fs_err_usage("unexpected argument '%s': the filter goes in -f", argv[0]);
	if (!o.ifname || !o.file)
		return -fs_err_usage("give the interface (-i IF) and the file to write (-w FILE)");
	if (o.filesz && units_parse_size(o.filesz, &st.file_limit))
		return -fs_err_usage("bad -C '%s': a size such as 100M or 1G", o.filesz);
	if (o.filesz && st.file_limit < 4096)
		return -fs_err_usage("-C %s is too small: files of at least 4K", o.filesz);
	if (o.files && !o.filesz)
		return -fs_err_usage("-W keeps the last N files of -C: give -C SIZE too");
	if (o.bufsz && (units_parse_size(o.bufsz, &buf) || buf < 65536 || buf > (1ull << 31)))
		return -fs_err_usage("bad --buffer '%s': a size from 64K to 2G", o.bufsz);
	filter = o.filter;
	if (!filter) {
		snprintf(deflt, sizeof(deflt), "udp port %d or ether proto 0x8808 or "
			 "(vlan and (udp port %d or ether proto 0x8808))", o.port, o.port);
		filter = deflt;
	}
	lo.snaplen = o.snaplen;
	lo.buffer = (int)buf;
	lo.promisc = o.promisc;
	if ((rc = live_open(&st.h, o.ifname, &lo, &nano)))
		return -rc;
	if ((rc = live_filter(st.h, o.ifname, filter)) || (rc = open_file(&st)))
		goto out;
	{
		char eb[PCAP_ERRBUF_SIZE];

		if (pcap_setnonblock(st.h, 1, eb)) {
			rc = fs_err_env("capturing on '%s': %s", o.ifname, eb);
			goto out;
		}
	}
	net_stop_on_signals();
	fs_info("capturing on %s (%s, snap length %d) into %s%s", o.ifname, filter, o.snaplen, o.file,
		st.file_limit ? ".N" : "");
	t0 = clock_ns();
	next_progress = t0 + CAP_PROGRESS_NS;
	while (!net_stop && !st.err) {
		struct pollfd pfd = { .fd = pcap_get_selectable_fd(st.h), .events = POLLIN };
		uint64_t now;
		int n;

		if (o.duration > 0 && clock_ns() - t0 >= (uint64_t)(o.duration * 1e9))
			break;
		if (poll(&pfd, 1, CAP_POLL_MS) < 0 && errno != EINTR) {
			rc = fs_err_env("poll: %s", strerror(errno));
			break;
		}
		n = pcap_dispatch(st.h, -1, on_packet, (u_char *)&st);
		if (n == PCAP_ERROR) {
			rc = fs_err_env("capturing on '%s': %s", o.ifname, pcap_geterr(st.h));
			break;
		}
		if (st.d)
			pcap_dump_flush(st.d);
		if (n == PCAP_ERROR_BREAK || (o.count && st.pkts >= o.count))
			break;
		now = clock_ns();
		if (now >= next_progress) {
			next_progress = now + CAP_PROGRESS_NS;
			if (!pcap_stats(st.h, &ps))
				fs_info("%llu packets, %.1f MB on the wire, %u dropped by the kernel",
					(unsigned long long)st.pkts, (double)st.bytes / 1e6, ps.ps_drop);
		}
	}
	if (st.err && !rc)
		rc = -FS_EXIT_ENV;
	if (!pcap_stats(st.h, &ps))
		fprintf(stderr, "fabscope capture: %llu packets (%.1f MB on the wire) into %d file%s; "
			"dropped: %u by the kernel, %u by the interface\n", (unsigned long long)st.pkts,
			(double)st.bytes / 1e6, st.fileno + 1, st.fileno ? "s" : "", ps.ps_drop, ps.ps_ifdrop);
out:
	if (st.d)
		pcap_dump_close(st.d);
	pcap_close(st.h);
	return -rc;
}
