/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The intended topology as a Graphviz graph, the way Cumulus PTM's
 * topology.dot and topology_converter write one:
 *
 *   graph fabric {
 *     "leaf1" [function="leaf" rail="0"]
 *     "spine1" [function="spine"]
 *     "leaf1":"swp49" -- "spine1":"swp1"
 *     "h1":"eth2" -- "leaf1":"swp1" [rail="0" speed="200G"]
 *   }
 *
 * The function of a device is its tier (PTM's, NVIDIA Air's and
 * topology_converter's names): leaf or tor a leaf, spine, superspine or
 * super-spine, exit or border a border leaf, oob-switch the out-of-band
 * management switch, each with pod=, plane=, rail= as in our own format;
 * host, server, oob-server or none a node.  Any other function (fake,
 * internet, ...) is kept as a node, with a note (topo_note_add) that
 * check-file says as a warning.  Edge attributes rail=, plane=, speed= are
 * the cable's; other attributes (PTM's own, topology_converter's: os=,
 * memory=, left_mac=, ...) are left alone.  The subset read: one graph
 * (graph, digraph, strict), node and edge statements with quoted or plain
 * IDs and ports, default statements (graph/node/edge [...]) and ID=ID,
 * comments (// and slash-star, and # lines); an edge is one cable (no chains), there
 * are no subgraphs.
 */
#ifndef FS_TOPOLOGY_DOT_H
#define FS_TOPOLOGY_DOT_H

#include <stdio.h>

#include "intent.h"

/* 1 when text (after blanks and comments) opens a graph */
int topo_is_dot(const char *text);

/* The graph in text into t (then topo_finish, as topo_read does): 0, or
 * -FS_EXIT_USAGE with "PATH:LINE: what is wrong" said, -FS_EXIT_ENV (out of
 * memory, said). */
int topo_parse_dot(struct topo *t, const char *path, const char *text);

/* t as such a graph, to f (it reads back to the same design): 0, or topo_design_ok's refusal
 * (a name outside the grammar: nothing written) */
int topo_write_dot(const struct topo *t, FILE *f);

#endif
