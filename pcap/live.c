/* SPDX-License-Identifier: BSD-2-Clause */
/* Live captures opened with clear errors: see live.h. */
#include "../core/error.h"
#include "live.h"

int live_open(pcap_t **out, const char *ifname, const struct live_opts *o, int *nano)
{
	char eb[PCAP_ERRBUF_SIZE] = "";
	pcap_t *h;
	int rc, ns = 0;

	*out = NULL;
	h = pcap_create(ifname, eb);
	if (!h)
		return fs_err_env("capturing on '%s': %s", ifname, eb);
	if (pcap_set_snaplen(h, o->snaplen) || pcap_set_promisc(h, o->promisc) ||
	    (o->immediate && pcap_set_immediate_mode(h, 1)) ||
	    (o->buffer && pcap_set_buffer_size(h, o->buffer))) {
		pcap_close(h);
		return fs_err_env("capturing on '%s': libpcap refused the settings", ifname);
	}
	if (o->nano)
		ns = !pcap_set_tstamp_precision(h, PCAP_TSTAMP_PRECISION_NANO);
	rc = pcap_activate(h);
	if (rc < 0) {
		const char *why = *pcap_geterr(h) ? pcap_geterr(h) : pcap_statustostr(rc);

		switch (rc) {
		case PCAP_ERROR_NO_SUCH_DEVICE:
			fs_err_env("no interface '%s' in this network namespace", ifname);
			break;
		case PCAP_ERROR_PERM_DENIED:
			fs_err_env("capturing on '%s' needs CAP_NET_RAW: run as root", ifname);
			break;
		case PCAP_ERROR_IFACE_NOT_UP:
			fs_err_env("'%s' is down: bring it up (ip link set %s up)", ifname, ifname);
			break;
		default:
			fs_err_env("capturing on '%s': %s", ifname, why);
		}
		pcap_close(h);
		return -FS_EXIT_ENV;
	}
	/* rc > 0 is a warning (promiscuous mode, timestamp type): it runs */
	if (ns && pcap_get_tstamp_precision(h) != PCAP_TSTAMP_PRECISION_NANO)
		ns = 0;
	if (nano)
		*nano = ns;
	*out = h;
	return 0;
}

int live_filter(pcap_t *h, const char *ifname, const char *filter)
{
	struct bpf_program prog;
	int rc;

	if (pcap_compile(h, &prog, filter, 1, PCAP_NETMASK_UNKNOWN))
		return fs_err_usage("capturing on '%s': filter '%s': %s", ifname, filter, pcap_geterr(h));
	rc = pcap_setfilter(h, &prog);
	pcap_freecode(&prog);
	if (rc)
		return fs_err_env("capturing on '%s': setting the filter: %s", ifname, pcap_geterr(h));
	return 0;
}
