// SPDX-License-Identifier: GPL-2.0-only
/*
 * ci/loss/loss.bpf.c - random packet loss on a link of ci/netns-fabric, a tc (clsact,
 * direct-action) program: what netem's `loss P%` does, for kernels that have neither sch_netem
 * nor the gact drop action (CI's: htb, tbf, u32, clsact, mirred and cls_bpf only).
 *
 * Every packet the filter sees, whatever its protocol, is dropped (TC_ACT_SHOT) with
 * probability SHARE / 10000, drawn on its own with bpf_get_prandom_u32(); the others go on
 * unchanged (TC_ACT_OK).  SHARE comes from the filter, not from a map: cls_bpf copies the
 * filter's classid into skb->tc_classid before the program runs, and the program reads its
 * minor number, so one object serves every rate and nothing is left to set after the load:
 *
 *	tc qdisc add dev IF clsact
 *	tc filter add dev IF egress bpf da obj loss.bpf.o sec tc classid 0:c8	(0xc8 = 200: 2 %)
 *
 * Built by the Makefile with clang -target bpf (with ci/lb's programs); tests/lib-monitor.sh's
 * mon_random_loss_on loads it.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#define LOSS_UNITS 10000	/* the share's unit: 0.01 % */

SEC("tc")
int loss(struct __sk_buff *skb)
{
	__u32 share = skb->tc_classid & 0xffff;

	if (share && bpf_get_prandom_u32() % LOSS_UNITS < share)
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
