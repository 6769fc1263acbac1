/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Pushing results out of a run: Prometheus metrics to a Pushgateway, a JSON
 * summary to a webhook.  Both over HTTP(S) with libcurl.
 *
 * Every attempt is bounded (connect + transfer within timeout_ms).  Failed
 * attempts are retried with exponential backoff when retrying can help: a
 * connection error (refused, reset, timed out, name not resolved) or an HTTP
 * 5xx answer.  An HTTP 4xx or 3xx answer is final (redirects are never
 * followed), and so are malformed URLs, TLS verification failures and
 * SIGINT/SIGTERM (net_stop, core/net.h: stops an attempt under way and the
 * waits between attempts).
 *
 * On failure one line goes to stderr (core/error.h): what was pushed where
 * (the URL without user:password@ and without its query string), the HTTP
 * status and the first line of the answer (at most 200 bytes of it; none
 * from an HTML page), or curl's error, and what to do.  With verbosity 1
 * (fs_set_verbosity) each failed attempt that is retried is logged too.
 * When net_stop is already set, nothing is sent.
 * The functions return 0 or a negative exit code:
 *	-FS_EXIT_USAGE        a malformed URL (not http:// or https://, no
 *	                      host), an empty job name, no body
 *	-FS_EXIT_PEER         the endpoint failed: unreachable, timed out,
 *	                      answered something else than 2xx
 *	-FS_EXIT_INTERRUPTED  SIGINT/SIGTERM (net_stop) during the push
 *	-FS_EXIT_ENV          libcurl could not be set up (out of memory)
 * They never touch anything else: local results stay where they are, and
 * the caller decides what a failed push means for its exit code.
 *
 * libcurl honours the usual proxy variables (http_proxy, https_proxy,
 * no_proxy).  Thread-safe: curl_global_init runs once (pthread_once).
 */
#ifndef FS_PUSH_H
#define FS_PUSH_H

#define PUSH_DEFAULT_TIMEOUT_MS 5000
#define PUSH_DEFAULT_RETRIES 2
#define PUSH_DEFAULT_BACKOFF_MS 500
#define PUSH_MAX_RETRIES 100
#define PUSH_MAX_BACKOFF_MS 30000	/* the doubling stops there */

struct push_opts {
	int timeout_ms;		/* per attempt, connect + transfer; <= 0: 5000 */
	int retries;		/* extra attempts after the first: 0 means none,
				 * < 0 the default (2), at most 100 */
	int backoff_ms;		/* first wait between attempts, doubling up to
				 * 30 s; <= 0: 500 */
	const char *job, *instance;	/* Pushgateway grouping labels; job is
					 * required, instance may be NULL (none) */
	const char *const *group;	/* more grouping labels after them, in
					 * this order: name, value, ..., NULL (or
					 * group NULL); a NULL value skips its
					 * label; names as push_label_name makes */
	const char *user_agent;	/* NULL: "fabscope/VERSION" */
};

/* Every default (2 retries); set job and instance after it. */
#define PUSH_OPTS_INIT { .retries = -1 }

/*
 * PUT (replace the whole group) the Prometheus text exposition body to
 * BASE/metrics/job/JOB[/instance/INSTANCE][/NAME/VALUE...] (o->group).  base_url like
 * http://127.0.0.1:9091, optionally with a path prefix (a trailing slash is
 * fine), without a query.  Label values are percent-encoded; a value that
 * is empty, holds a '/' or is "." or ".." uses the Pushgateway's
 * "LABEL@base64/VALUE" form (base64url).  The body must be valid text
 * exposition ending with a newline: the gateway answers 400 otherwise, and
 * its message is in the error line.  Returns 0 or a negative exit code (see
 * above).
 */
int push_gateway(const char *base_url, const char *body, const struct push_opts *o);

/*
 * POST json_text to url (Content-Type: application/json); any 2xx is
 * success.  Same timeouts, retries and errors as push_gateway; job and
 * instance are not used.  o may be NULL (every default).
 */
int push_webhook(const char *url, const char *json_text, const struct push_opts *o);
/*
 * GET url (http:// or https://, no redirect followed) within timeout_ms
 * (<= 0: 5000), one attempt: the body, NUL-terminated, into *body (the caller
 * frees) and its length into *len.  An answer over max_bytes is cut off and
 * refused.  0, or a negative exit code said (as above; -FS_EXIT_PEER for a
 * status other than 2xx or an answer over the bound).
 */
int push_fetch(const char *url, size_t max_bytes, int timeout_ms, char **body, size_t *len);
/* The URLs push_gateway and push_webhook would refuse (either may be NULL),
 * refused before any work: 0, or a negative exit code with one line said. */
int push_check_urls(const char *gateway, const char *webhook);

/*
 * Prometheus text exposition helpers; the caller frees the result (NULL
 * only when out of memory).
 * push_metric_name: a valid metric name, [a-zA-Z_:][a-zA-Z0-9_:]*: every
 *	other character (a UTF-8 sequence counts as one) becomes '_', a
 *	leading digit gets a '_' before it, "" becomes "_".
 * push_label_name: the same for label names, where ':' is not allowed
 *	either ([a-zA-Z_][a-zA-Z0-9_]*).  Names starting with "__" are
 *	reserved by Prometheus: do not make them.
 * push_label_value: the text between the quotes of label="...": backslash,
 *	double quote and newline escaped (\\, \", \n); invalid UTF-8 bytes
 *	become U+FFFD (the gateway rejects invalid UTF-8).
 */
char *push_metric_name(const char *s);
char *push_label_name(const char *s);
char *push_label_value(const char *s);

#endif
