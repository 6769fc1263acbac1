// SPDX-License-Identifier: GPL-2.0-only
/*
 * ci/lb/lb.bpf.c - load-balancing modes for the routers of ci/netns-fabric, a tc (clsact,
 * direct-action) ingress program.
 *
 * A router forwards with the kernel's FIB as before; this program only changes which member
 * of an ECMP group a packet leaves by.  It asks the FIB where the packet would go
 * (bpf_fib_lookup); when that egress port belongs to a group the loader described (a leaf's
 * uplinks, a spine's superspine links, a superspine's links into one pod), it picks the member
 * by the mode, decrements the TTL as forwarding would, and sends the packet to that member's
 * next hop with bpf_redirect_neigh.  Everything else (local delivery, a single path, ARP,
 * LLDP, IPv4 fragments' later pieces) goes on to the kernel unchanged.
 *
 * Modes (cfg.mode):
 *   spray-rr       every packet to the next member in turn (one counter per group)
 *   spray-random   every packet to a member drawn at random
 *   flowlet        a flow keeps its member while its packets come less than gap_ns apart; after
 *                  a longer idle gap it moves to the next member
 *   adaptive       as flowlet, but a new flowlet takes the member that carried the fewest bytes
 *                  in the recent window (window_ns; two windows are remembered)
 *   lbn            a fixed mapping: the packets of ingress port number s (the loader numbers
 *                  the router's ports) leave by member s mod n, whatever the flow
 * Built by the Makefile with clang -target bpf; loaded by ci/lb/fabric-lb.c.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <linux/stddef.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lb-common.h"

#ifndef AF_INET
#define AF_INET 2
#endif

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lb_cfg);
} lb_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LB_MAX_GROUPS);
	__type(key, __u32);
	__type(value, struct lb_group);
} lb_groups SEC(".maps");

/* egress ifindex -> its group (the FIB's choice names the group) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LB_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} lb_member_of SEC(".maps");

/* ingress ifindex -> its number on the router (lbn) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LB_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} lb_port_no SEC(".maps");

/* per group: the round-robin counter */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LB_MAX_GROUPS);
	__type(key, __u32);
	__type(value, __u64);
} lb_rr SEC(".maps");

/* per group and member: bytes sent in this window and the one before (adaptive) */
struct lb_load {
	__u64 start;
	__u64 cur;
	__u64 prev;
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LB_MAX_GROUPS * LB_MAX_MEMBERS);
	__type(key, __u32);
	__type(value, struct lb_load);
} lb_load SEC(".maps");

struct lb_flow_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u32 proto;
};
struct lb_flow {
	__u64 last;
	__u32 member;
	__u32 group;
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct lb_flow_key);
	__type(value, struct lb_flow);
} lb_flows SEC(".maps");

static __always_inline __u64 load_of(__u32 g, __u32 m, __u64 now, __u64 window)
{
	__u32 k = g * LB_MAX_MEMBERS + m;
	struct lb_load *l = bpf_map_lookup_elem(&lb_load, &k);

	if (!l)
		return ~0ULL;
	if (now - l->start >= 2 * window)
		return 0;
	if (now - l->start >= window)
		return l->cur;
	return l->cur + l->prev;
}

static __always_inline void load_add(__u32 g, __u32 m, __u64 now, __u64 window, __u32 bytes)
{
	__u32 k = g * LB_MAX_MEMBERS + m;
	struct lb_load *l = bpf_map_lookup_elem(&lb_load, &k);

	if (!l)
		return;
	if (now - l->start >= window) {
		/* racy between CPUs, as a switch's load estimate is approximate too */
		l->prev = now - l->start >= 2 * window ? 0 : l->cur;
		l->cur = 0;
		l->start = now;
	}
	__sync_fetch_and_add(&l->cur, bytes);
}

static __always_inline __u32 least_loaded(__u32 g, __u32 n, __u64 now, __u64 window)
{
	__u64 best = ~0ULL;
	__u32 pick = 0;

	for (__u32 m = 0; m < LB_MAX_MEMBERS; m++) {
		__u64 v;

		if (m >= n)
			break;
		v = load_of(g, m, now, window);
		if (v < best) {
			best = v;
			pick = m;
		}
	}
	return pick;
}

SEC("tc")
int lb_ingress(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct bpf_fib_lookup fib = {};
	struct bpf_redir_neigh nh = {};
	struct lb_flow_key fk = {};
	struct lb_group *grp;
	struct lb_cfg *cfg;
	__u32 zero = 0, g, n, m = 0, *p;
	__u16 sport = 0, dport = 0;
	__u64 now;
	__u32 check;
	long rc;

	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->ihl < 5 || ip->ttl <= 1)
		return TC_ACT_OK;
	cfg = bpf_map_lookup_elem(&lb_cfg, &zero);
	if (!cfg || cfg->mode == LB_OFF)
		return TC_ACT_OK;
	if ((ip->protocol == IPPROTO_TCP || ip->protocol == IPPROTO_UDP) &&
	    !(ip->frag_off & bpf_htons(0x3fff))) {
		__u16 *l4 = (void *)ip + ip->ihl * 4;

		if ((void *)(l4 + 2) > end)
			return TC_ACT_OK;
		sport = l4[0];
		dport = l4[1];
	}

	fib.family = AF_INET;
	fib.tos = ip->tos;
	fib.l4_protocol = ip->protocol;
	fib.sport = sport;
	fib.dport = dport;
	fib.tot_len = 0; /* the skb's own MTU check, which knows GSO packets */
	fib.ipv4_src = ip->saddr;
	fib.ipv4_dst = ip->daddr;
	fib.ifindex = skb->ingress_ifindex;
	rc = bpf_fib_lookup(skb, &fib, sizeof(fib), 0);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH)
		return TC_ACT_OK;
	p = bpf_map_lookup_elem(&lb_member_of, &fib.ifindex);
	if (!p)
		return TC_ACT_OK;
	g = *p;
	grp = bpf_map_lookup_elem(&lb_groups, &g);
	if (!grp)
		return TC_ACT_OK;
	n = grp->n;
	if (n < 2 || n > LB_MAX_MEMBERS)
		return TC_ACT_OK;
	now = bpf_ktime_get_ns();

	switch (cfg->mode) {
	case LB_SPRAY_RR: {
		__u64 *c = bpf_map_lookup_elem(&lb_rr, &g);

		if (!c)
			return TC_ACT_OK;
		m = __sync_fetch_and_add(c, 1) % n;
		break;
	}
	case LB_SPRAY_RANDOM:
		m = bpf_get_prandom_u32() % n;
		break;
	case LB_FLOWLET:
	case LB_ADAPTIVE: {
		struct lb_flow *f;

		fk.saddr = ip->saddr;
		fk.daddr = ip->daddr;
		fk.sport = sport;
		fk.dport = dport;
		fk.proto = ip->protocol;
		f = bpf_map_lookup_elem(&lb_flows, &fk);
		if (f && f->group == g && now - f->last <= cfg->gap_ns) {
			m = f->member;
		} else {
			struct lb_flow nf = { .group = g };

			if (cfg->mode == LB_ADAPTIVE)
				m = least_loaded(g, n, now, cfg->window_ns);
			else if (f && f->group == g)
				m = (f->member + 1) % n;
			else
				m = bpf_get_prandom_u32() % n;
			nf.member = m;
			f = &nf;
			bpf_map_update_elem(&lb_flows, &fk, &nf, BPF_ANY);
			f = bpf_map_lookup_elem(&lb_flows, &fk);
		}
		if (f)
			f->last = now;
		break;
	}
	case LB_LBN: {
		__u32 in = skb->ingress_ifindex, *s = bpf_map_lookup_elem(&lb_port_no, &in);

		if (!s)
			return TC_ACT_OK;
		m = *s % n;
		break;
	}
	default:
		return TC_ACT_OK;
	}
	if (m >= LB_MAX_MEMBERS)
		return TC_ACT_OK;
	if (cfg->mode == LB_ADAPTIVE)
		load_add(g, m, now, cfg->window_ns, skb->len);

	/* forwarding's TTL decrement, with RFC 1624's incremental checksum as ip_decrease_ttl */
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	ip = data + sizeof(struct ethhdr);
	if ((void *)(ip + 1) > end)
		return TC_ACT_OK;
	check = ip->check;
	check += bpf_htons(0x0100);
	ip->check = (__u16)(check + (check >= 0xFFFF));
	ip->ttl--;

	/* checked above, but the compiler drops a plain mask: the verifier needs it where it reads */
	asm volatile("%0 &= 15" : "+r"(m));
	nh.nh_family = AF_INET;
	nh.ipv4_nh = grp->m[m].nh;
	return bpf_redirect_neigh(grp->m[m].ifindex, &nh, sizeof(nh), 0);
}

char LICENSE[] SEC("license") = "GPL";
