/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The intended topology of a fabric: switches with their tier, pod, plane
 * and rail, and every cable between two ports (fabscope-topology(5)).
 *
 * A device that is not declared a switch is a node (a host); a cable with a
 * node at one end is a host port and carries the rail (and plane) of that
 * NIC port.  The model is what the file says, checked for form only when
 * read (topo_parse); what the design says about itself is judged by
 * topo_check (check.c).
 *
 *   switch NAME tier=leaf|spine|superspine|border|oob [pod=POD] [plane=P] [rail=R] [addr=A,B,...]
 *   link DEV:PORT DEV:PORT [rail=R] [plane=P] [speed=SPEED]
 *
 * A switch's addr= are the addresses it answers from (IPv4 or IPv6
 * literals: its interfaces', its loopback), as a traceroute's hops name
 * routers by address; an address belongs to one switch.
 *
 * Tiers by level: nodes 0; leaves and border (exit) leaves 1; spines 2;
 * superspines 3.  An oob switch is the out-of-band management network's: a
 * cable with an end on one is out-of-band, checked as a cable but no part
 * of the fabric (no lane, no rail, not routed, not in Slurm's tree).  A
 * cable between two switches of one level is a peer link (MLAG's), one from
 * a port to another of the same switch a loopback; both are cables.  Rails
 * and planes are optional: a design that gives no rail has one lane per
 * leaf group (a leaf, or leaves joined by peer links), rail 0.
 *
 * Names (devices, ports, pods) are 1 to TOPO_NAME_MAX bytes of letters,
 * digits, '.', '_', '-' and '/', beginning with a letter or digit; ':'
 * separates a device from its port.  A file is at most TOPO_FILE_MAX bytes.
 */
#ifndef FS_TOPOLOGY_INTENT_H
#define FS_TOPOLOGY_INTENT_H

#include <stddef.h>
#include <stdio.h>

#include "../core/error.h"

#define TOPO_NAME_MAX 128
#define TOPO_FILE_MAX (256u << 20)

enum topo_tier { TOPO_NODE, TOPO_LEAF, TOPO_SPINE, TOPO_SUPERSPINE, TOPO_BORDER, TOPO_OOB };

struct topo_switch {
	char *name;
	enum topo_tier tier;
	char *pod;		/* NULL: not given */
	int plane, rail;	/* -1: not given */
	int line;		/* where it was declared (0: made, not read) */
	char **addr;		/* addr=: its addresses, as inet_ntop writes them */
	size_t naddr, addr_alloc;
};

/* An address of a switch, for the lookup by address (topo_addr_switch) */
struct topo_addr {
	const char *addr;	/* the switch's own string */
	int sw;
};

struct topo_end {
	char *dev, *port;
	int sw;			/* its switch (index), -1: a node */
};

struct topo_link {
	struct topo_end a, b;	/* a node's end first, when there is one */
	int rail, plane;	/* -1: not given */
	double speed_gbps;	/* 0: not given */
	int line;
};

/* what reading found worth a warning without refusing the file */
struct topo_note {
	int line;
	char *text;
};

struct topo {
	char *path;		/* for messages: the file it was read from */
	struct topo_switch *sw;	/* sorted by name once read */
	size_t nsw, sw_alloc;
	struct topo_link *ln;	/* in the file's order */
	size_t nln, ln_alloc;
	struct topo_addr *byaddr;	/* every switch address, sorted (topo_finish) */
	size_t naddr;
	struct topo_note *notes;	/* in the file's order */
	size_t nnotes, notes_alloc;
};

void topo_init(struct topo *t);
void topo_release(struct topo *t);

/* A tier's level (above); -1 for an oob switch, outside the fabric */
int topo_tier_level(enum topo_tier t);
/* 1 when cable l has an end on an oob switch (out-of-band) */
int topo_link_oob(const struct topo *t, const struct topo_link *l);
/* A note of the reading (text as printf): 0, or -FS_EXIT_ENV said */
int topo_note_add(struct topo *t, int line, const char *fmt, ...) FS_PRINTF(3, 4);

/* 1 when s is a name as above */
int topo_name_ok(const char *s);
const char *topo_tier_name(enum topo_tier t);

/*
 * Read the intent file at path (text may be given instead, path then only
 * names it): 0, or -FS_EXIT_USAGE with "PATH:LINE: what is wrong" said,
 * -FS_EXIT_ENV when it cannot be read or memory runs out (said).
 */
int topo_read(struct topo *t, const char *path, const char *text);
/* The text of the intent file at path (malloc'd, the caller frees), for a
 * caller that keeps what it read (a run's run.json): 0, or -FS_EXIT_* said
 * as topo_read says it. */
int topo_load_text(const char *path, char **text);
/* Declare a switch / add a link as the file's lines do (line 0); then
 * topo_finish.  0, or -FS_EXIT_* said (a name that is not one, a switch
 * declared twice, out of memory). */
int topo_add_switch(struct topo *t, const char *name, enum topo_tier tier, const char *pod, int plane,
		    int rail, int line);
int topo_add_link(struct topo *t, const char *adev, const char *aport, const char *bdev, const char *bport,
		  int rail, int plane, double speed_gbps, int line);
/* Addresses of switch sw (its index as declared, before topo_finish), as
 * addr= gives them ("A,B,..."): 0, or -FS_EXIT_* said (not an address
 * literal, out of memory). */
int topo_add_switch_addrs(struct topo *t, size_t sw, const char *list, int line);
/* Sort the switches, resolve every link's ends and index the addresses;
 * 0, or -FS_EXIT_USAGE said (a switch declared twice, an address given
 * to two switches), -FS_EXIT_ENV (out of memory). */
int topo_finish(struct topo *t);

/* The switch named name, or -1 */
int topo_switch_index(const struct topo *t, const char *name);
/* The switch that answers from addr (any literal form), or -1 (a binary
 * search) */
int topo_addr_switch(const struct topo *t, const char *addr);
/* Is there a cable between devices a and b (switches or nodes)?  A scan of
 * the cables. */
int topo_cabled(const struct topo *t, const char *a, const char *b);

/*
 * The one check of every design writer (topo_write, topo_write_dot,
 * topo_slurm_write): each switch, pod, device and port a name (topo_name_ok),
 * and each switch address one as topo_add_switch_addrs keeps it (hex digits,
 * '.', ':'), so that nothing in a name (a newline, a space, a quote) can make
 * a line, an attribute or a statement of the file written.  0, or -FS_EXIT_USAGE
 * with the first name that is not one said (its control bytes as \xNN).
 */
int topo_design_ok(const struct topo *t);
/* The file's text for t (our own format), to f: 0, or topo_design_ok's refusal (nothing written) */
int topo_write(const struct topo *t, FILE *f);

/* "200G", "25G", "400G" (a whole number of Gb/s, or Mb/s with M); 0 on error */
double topo_parse_speed(const char *s);

#endif
