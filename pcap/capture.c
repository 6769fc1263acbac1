/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope capture -i IF -w FILE`: record RoCEv2 (UDP 4791) and MAC
 * control (PFC, PAUSE) traffic, VLAN-tagged or not, into pcap files for
 * `fabscope pcap` (or Wireshark).  Headers are what the analysis needs, so
 * the snap length is short by default; -C and -W make a ring of files for
 * captures that run for days.  Every wake-up flushes the file (and every
 * 64 KB between), so a capture killed at any point leaves every packet
 * written so far readable, and a full disk costs no record that fitted.
 */
#include <errno.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdio_ext.h>
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
#include "capture-files.h"
#include "live.h"

#define CAP_SNAPLEN 256		/* Ethernet, 2 tags, IPv6 + extensions, UDP, BTH, RETH/AETH/atomics */
#define CAP_BUFFER (64 << 20)
#define CAP_POLL_MS 200
#define CAP_PROGRESS_NS (10 * 1000000000ull)
#define CAP_FLUSH_BYTES (64 << 10)	/* bytes held unflushed at most, as far as a record allows */
#define CAP_MARKS (CAP_FLUSH_BYTES / 16 + 2)	/* records in them at most (16 bytes of header each) */

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
	const char *ifname, *file, *filter, *bufsz, *filesz, *user;
	int snaplen, files, port, promisc, verbose;
	uint64_t count;
	double duration;
};

struct cstate {
	const struct copts *o;
	pcap_t *h;
	struct capfiles cf;	/* where the files are made (capture-files.h) */
	pcap_dumper_t *d;
	uint64_t file_limit;	/* bytes per file; 0: one file */
	int fileno;		/* the current file's number (with -C) */
	uint64_t pkts, bytes, file_bytes;
	/* what is surely on disk: the closed files', and the current file's up to its last flush */
	uint64_t done_pkts, done_bytes, file_pkts, file_wire, good_pkts, good_wire;
	off_t good_off;		/* the current file's length at its last flush */
	/* the records written since: where each ends in the file and its length on the wire, so
	 * that a write that fails keeps every whole record the disk took before it */
	uint64_t mark_end[CAP_MARKS];
	uint32_t mark_wire[CAP_MARKS];
	int marks;
	int err;		/* a file could not be made (said) */
	int werr;		/* errno of the first write that failed: the capture stops */
};

/* A write failed (err): the file cut back to the end of the last whole
 * record it holds (the disk took the bytes up to its length), so that it
 * holds whole packets, every one that could be written; the rest dropped;
 * the capture stops. */
static void write_failed(struct cstate *st, int err)
{
	FILE *f = pcap_dump_file(st->d);
	off_t keep = st->good_off;
	struct stat sb;
	int i;

	if (st->werr)
		return;
	st->werr = err ? err : EIO;
	if (f && !fstat(fileno(f), &sb))
		for (i = 0; i < st->marks && st->mark_end[i] <= (uint64_t)sb.st_size; i++) {
			keep = (off_t)st->mark_end[i];
			st->good_pkts++;
			st->good_wire += st->mark_wire[i];
		}
	st->marks = 0;
	if (f && ftruncate(fileno(f), keep))
		fs_warn("cannot cut the file back to its last whole packet: %s", strerror(errno));
	if (f)
		__fpurge(f);	/* (nothing more is written, not even by the close) */
	pcap_breakloop(st->h);
}

/* the current file flushed; 0, or -1 (write_failed) */
static int flush_file(struct cstate *st)
{
	FILE *f = pcap_dump_file(st->d);

	if (st->werr)
		return -1;
	errno = 0;
	if (pcap_dump_flush(st->d) || ferror(f)) {
		write_failed(st, errno);
		return -1;
	}
	st->good_off = ftello(f);
	st->good_pkts = st->file_pkts;
	st->good_wire = st->file_wire;
	st->marks = 0;
	return 0;
}

/* the current file flushed, synced and closed, every result checked */
static void close_file(struct cstate *st)
{
	if (!st->d)
		return;
	if (!flush_file(st) && fsync(fileno(pcap_dump_file(st->d))) && errno != EINVAL)
		write_failed(st, errno);
	st->done_pkts += st->good_pkts;
	st->done_bytes += st->good_wire;
	st->file_pkts = st->file_wire = st->good_pkts = st->good_wire = 0;
	pcap_dump_close(st->d);	/* (flushed: its fclose writes nothing) */
	st->d = NULL;
}

static int open_file(struct cstate *st)
{
	char name[4200];
	FILE *f;
	int fd, rc;

	capfiles_name(&st->cf, st->fileno, name, sizeof(name));
	if ((rc = capfiles_new(&st->cf, st->fileno, &fd)))
		return rc;
	if (!(f = fdopen(fd, "w"))) {
		close(fd);
		return fs_err_env("cannot write '%s': %s", name, strerror(errno));
	}
	if (!(st->d = pcap_dump_fopen(st->h, f))) {
		fclose(f);
		return fs_err_env("cannot write '%s': %s", name, pcap_geterr(st->h));
	}
	st->file_bytes = 24;	/* the file header */
	st->good_off = 0;
	if (flush_file(st))
		return 0;	/* (said at the end) */
	if (st->file_limit && st->o->files > 0 && st->fileno >= st->o->files)
		capfiles_remove(&st->cf, st->fileno - st->o->files);
	return 0;
}

static void on_packet(u_char *arg, const struct pcap_pkthdr *hdr, const u_char *bytes)
{
	struct cstate *st = (struct cstate *)(void *)arg;

	if (st->err || st->werr)
		return;
	if (st->file_limit && st->file_bytes + 16 + hdr->caplen > st->file_limit && st->file_bytes > 24) {
		close_file(st);
		st->fileno++;
		if (st->werr || open_file(st)) {
			st->err = !st->werr;
			pcap_breakloop(st->h);
			return;
		}
	}
	errno = 0;
	pcap_dump((u_char *)st->d, hdr, bytes);
	st->pkts++;
	st->bytes += hdr->len;
	if (ferror(pcap_dump_file(st->d))) {	/* (pcap_dump says nothing: its stream does) */
		write_failed(st, errno);
		return;
	}
	st->file_bytes += 16 + hdr->caplen;
	st->file_pkts++;
	st->file_wire += hdr->len;
	st->mark_end[st->marks] = st->file_bytes;
	st->mark_wire[st->marks++] = hdr->len;
	if ((st->file_bytes - (uint64_t)st->good_off >= CAP_FLUSH_BYTES || st->marks == CAP_MARKS) && flush_file(st))
		return;
	if (st->o->count && st->pkts >= (uint64_t)st->o->count)
		pcap_breakloop(st->h);
}

/* the last lines: what was written (and dropped); what could not be, when a write failed */
static int say_end(struct cstate *st)
{
	struct pcap_stat ps;
	char name[4200];
	uint64_t lost = st->pkts - st->done_pkts;

	if (!pcap_stats(st->h, &ps))
		fprintf(stderr, "fabscope capture: %llu packets (%.1f MB on the wire) into %d file%s; "
			"dropped: %u by the kernel, %u by the interface\n", (unsigned long long)st->done_pkts,
			(double)st->done_bytes / 1e6, st->fileno + 1, st->fileno ? "s" : "", ps.ps_drop, ps.ps_ifdrop);
	if (!st->werr)
		return 0;
	capfiles_name(&st->cf, st->fileno, name, sizeof(name));
	return fs_err_env("cannot write '%s': %s: it holds its packets up to the last that could be written; %llu "
			  "captured packet%s not written", name, strerror(st->werr), (unsigned long long)lost,
			  lost == 1 ? " is" : "s are");
}

/* poll and dispatch until a limit, a signal or an error: 0, or -FS_EXIT_* said */
static int capture_loop(struct cstate *st)
{
	const struct copts *o = st->o;
	uint64_t t0 = clock_ns(), next_progress = t0 + CAP_PROGRESS_NS;
	struct pcap_stat ps;

	while (!net_stop && !st->err && !st->werr) {
		struct pollfd pfd = { .fd = pcap_get_selectable_fd(st->h), .events = POLLIN };
		uint64_t now;
		int n;

		if (o->duration > 0 && clock_ns() - t0 >= (uint64_t)(o->duration * 1e9))
			break;
		if (poll(&pfd, 1, CAP_POLL_MS) < 0 && errno != EINTR)
			return fs_err_env("poll: %s", strerror(errno));
		n = pcap_dispatch(st->h, -1, on_packet, (u_char *)st);
		if (n == PCAP_ERROR)
			return fs_err_env("capturing on '%s': %s", o->ifname, pcap_geterr(st->h));
		if (st->d)
			flush_file(st);
		if (n == PCAP_ERROR_BREAK || (o->count && st->pkts >= o->count))
			break;
		now = clock_ns();
		if (now >= next_progress) {
			next_progress = now + CAP_PROGRESS_NS;
			if (!pcap_stats(st->h, &ps))
				fs_info("%llu packets, %.1f MB on the wire, %u dropped by the kernel",
					(unsigned long long)st->pkts, (double)st->bytes / 1e6, ps.ps_drop);
		}
	}
	return st->err ? -FS_EXIT_ENV : 0;
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
		OPT_GROUP("Privileges"),
		OPT_STRING('Z', "user", &o.user, "USER", "once the device is open, capture as USER (as tcpdump's -Z; run as root, the default is nobody; -Z root keeps root); the files are made by a process that keeps root, in the directory checked first"),
		OPT_SECONDS('D', "duration", &o.duration, "SECONDS", "stop after so long"),
		OPT_VERBOSE(&o.verbose),
		OPT_NOT_HERE('d', "device", "capture takes the interface, -i IF, as tcpdump: the netdev of the RDMA device (fabscope devices lists them)"),
		OPT_END(),
	};
	struct cstate st = { .o = &o };
	struct live_opts lo = { .immediate = 1, .nano = 1 };
	char deflt[160];
	const char *filter;	/* -f's, any length: pcap_compile takes it whole */
	uint64_t buf = CAP_BUFFER;
	int nargs, rc, nano = 0, drop = 0, status;
	uid_t uid;
	gid_t gid;

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
	if ((rc = capfiles_user(o.user, &uid, &gid, &drop)))
		return -rc;
	filter = o.filter;
	if (!filter) {
		snprintf(deflt, sizeof(deflt), "udp port %d or ether proto 0x8808 or "
			 "(vlan and (udp port %d or ether proto 0x8808))", o.port, o.port);
		filter = deflt;
	}
	lo.snaplen = o.snaplen;
	lo.buffer = (int)buf;
	lo.promisc = o.promisc;
	if ((rc = capfiles_open(&st.cf, o.file, st.file_limit != 0))) {
		capfiles_close(&st.cf);
		return -rc;
	}
	/* the parent keeps root to make the files, and never holds the device */
	if (drop && (rc = capfiles_split(&st.cf, &status))) {
		capfiles_close(&st.cf);
		return rc == 1 ? status : -rc;
	}
	if ((rc = live_open(&st.h, o.ifname, &lo, &nano))) {
		capfiles_close(&st.cf);
		return -rc;
	}
	if ((rc = live_filter(st.h, o.ifname, filter)))
		goto out;
	{
		char eb[PCAP_ERRBUF_SIZE];

		if (pcap_setnonblock(st.h, 1, eb)) {
			rc = fs_err_env("capturing on '%s': %s", o.ifname, eb);
			goto out;
		}
	}
	/* the device is open: root is given up before a packet is read or a file written */
	if ((drop && (rc = capfiles_drop(uid, gid))) || (rc = open_file(&st)))
		goto out;
	net_stop_on_signals();
	fs_info("capturing on %s (%s, snap length %d) into %s%s, as uid %u", o.ifname, filter, o.snaplen, o.file,
		st.file_limit ? ".N" : "", (unsigned)geteuid());
	rc = capture_loop(&st);
	close_file(&st);
	if (!rc)
		rc = say_end(&st);
	else
		say_end(&st);
out:
	close_file(&st);
	pcap_close(st.h);
	capfiles_close(&st.cf);
	return -rc;
}
