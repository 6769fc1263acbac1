/* SPDX-License-Identifier: BSD-2-Clause */
/* Listening for LLDP (lldp-listen.h). */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "lldp-listen.h"
#include "live.h"

static void on_frame(u_char *user, const struct pcap_pkthdr *ph, const u_char *bytes)
{
	struct lldp_heard *h = (struct lldp_heard *)user;
	struct lldp l;

	if (lldp_parse(bytes, ph->caplen, &l) == LLDP_OK) {
		h->l = l;
		h->heard++;
	} else {
		h->bad++;
	}
}

int lldp_listen(struct lldp_heard *h, int n, double secs)
{
	const struct live_opts o = { .snaplen = 4096, .promisc = 1, .immediate = 1 };
	pcap_t **pc = calloc((size_t)n + 1, sizeof(*pc));
	struct pollfd *fds = calloc((size_t)n + 1, sizeof(*fds));
	uint64_t end = clock_ns() + (uint64_t)(secs * 1e9);
	int i, rc = 0;

	if (!pc || !fds) {
		free(pc);
		free(fds);
		return fs_err_env("out of memory listening for LLDP");
	}
	for (i = 0; i < n && !rc; i++) {
		h[i].heard = h[i].bad = 0;
		if (!(rc = live_open(&pc[i], h[i].ifname, &o, NULL)) &&
		    !(rc = live_filter(pc[i], h[i].ifname, "ether proto 0x88cc")) &&
		    /* only what comes in: an lldpd on this host sends on the same port */
		    pcap_setdirection(pc[i], PCAP_D_IN) < 0)
			rc = fs_err_env("listening on '%s' for what comes in: %s", h[i].ifname, pcap_geterr(pc[i]));
		if (!rc && pcap_setnonblock(pc[i], 1, (char[PCAP_ERRBUF_SIZE]){ 0 }) < 0)
			rc = fs_err_env("listening on '%s': %s", h[i].ifname, pcap_geterr(pc[i]));
		fds[i].fd = pc[i] ? pcap_get_selectable_fd(pc[i]) : -1;
		fds[i].events = POLLIN;
	}
	while (!rc) {
		int left = clock_ms_left(end), waiting = 0;

		for (i = 0; i < n; i++)
			waiting += !h[i].heard;
		if (!waiting || left <= 0)
			break;
		if (poll(fds, (nfds_t)n, left) < 0 && errno != EINTR) {
			rc = fs_err_env("listening for LLDP: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++)
			if (fds[i].revents & POLLIN)
				pcap_dispatch(pc[i], -1, on_frame, (u_char *)&h[i]);
	}
	for (i = 0; i < n; i++)
		if (pc[i])
			pcap_close(pc[i]);
	free(pc);
	free(fds);
	return rc;
}
