/* ci/lb/lb-common.h - what lb.bpf.c and its loader fabric-lb.c share: modes and map values */
#ifndef FABSCOPE_LB_COMMON_H
#define FABSCOPE_LB_COMMON_H

#include <linux/types.h>

#define LB_MAX_GROUPS 16
#define LB_MAX_MEMBERS 16
#define LB_MAX_PORTS 256

enum lb_mode {
	LB_OFF = 0,
	LB_SPRAY_RR = 1,
	LB_SPRAY_RANDOM = 2,
	LB_FLOWLET = 3,
	LB_ADAPTIVE = 4,
	LB_LBN = 5,
};

struct lb_cfg {
	__u32 mode;
	__u32 pad;
	__u64 gap_ns;    /* flowlet, adaptive: the idle gap after which a flow may move */
	__u64 window_ns; /* adaptive: how long a member's byte count is remembered */
};

struct lb_member {
	__u32 ifindex;
	__u32 nh; /* the next hop's IPv4 address, network order */
};

struct lb_group {
	__u32 n;
	__u32 pad;
	struct lb_member m[LB_MAX_MEMBERS];
};

#endif
