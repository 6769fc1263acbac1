/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Result records: one JSON object per measurement, built with jansson.
 * Everything that shows results (text tables, --json, results.jsonl,
 * reports) is a rendering of these objects.  Schema "fabscope.record/1":
 *
 *   schema, tool, version, time (UTC ISO 8601), test ("bw", "lat", ...),
 *   transport, op, msg_size_bytes, flows, scope ("flow" | "aggregate"),
 *   flow (index, scope "flow" only), dir ("c2s" | "s2c" | "both"),
 *   src/dst endpoints {node, ip, port, device, rail, plane, gid},
 *   labels {k: v}, params {...}, metrics {bw_gbps, msg_rate_mpps, bytes,
 *   msgs, duration_s, lat_us {min,p50,p90,p99,p999,max,avg,stdev}, ...},
 *   status ("ok" | "error"), error (message, when status is "error").
 *
 * Units are in the key names: _gbps is 10^9 bit/s, _mpps 10^6 messages/s,
 * _us microseconds, _s seconds, _bytes bytes.
 */
#ifndef FS_RECORD_H
#define FS_RECORD_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>

#include "lanes.h"	/* (record_int's bounds of rails and planes) */

#include "options.h"
#include "stats.h"

#define RECORD_SCHEMA "fabscope.record/1"

/* A new record with schema, tool, version and time filled in. */
json_t *record_new(const char *test);
/*
 * Labels: "k=v", or several in one string as "k1=v1,k2=v2" (a comma
 * separates labels, so a value holds none; an '=' in a value is its own).
 * record_label_add: those of text into o (a later key replaces an earlier
 * one); 0, or -1 when a piece is not KEY=VALUE with a key of 1 to 127
 * bytes, or is not UTF-8 (o may have the pieces before it).
 * record_labels: every string of l into a new object {"k": "v"}; -1 on a
 * bad one, which *bad then names.
 */
int record_label_add(json_t *o, const char *text);
int record_labels(const struct opt_list *l, json_t **out, const char **bad);
/* What every command says of a bad --label (its one %s: the label) */
#define RECORD_LABEL_ERR "invalid --label '%s': give KEY=VALUE, or several as K1=V1,K2=V2 (a comma " \
	"separates labels: a value holds none), keys of 1 to 127 characters, in UTF-8"
/* Latency statistics of nanosecond samples, in microseconds. */
json_t *record_lat_us(const struct stats *s);
/* A deep copy of a record with the given scope; used to derive per-flow
 * records from a template. */
json_t *record_derive(json_t *tmpl, const char *scope);

/* Accessors by dotted path ("metrics.bw_gbps"; in an array a segment is an
 * index: "endpoints.0.rail"); NULL when absent. */
json_t *record_get(json_t *rec, const char *path);
double record_num(json_t *rec, const char *path, double dflt);
/* The number at path when it is a whole number from lo to hi, else dflt: a
 * record is untrusted input, and a double out of an int's range cast to int
 * is undefined (ci/check-tree refuses (int)record_num). */
int record_int(json_t *rec, const char *path, int dflt, int lo, int hi);
/* A record's lane (src.rail, src.plane; 0 when absent): 0, or -1 when one is
 * there but no rail or plane (not a whole number within FS_MAX_*): the
 * record is left out, not put on a lane it does not name. */
int record_lane(json_t *rec, int *rail, int *plane);
const char *record_str(json_t *rec, const char *path, const char *dflt);

#endif
