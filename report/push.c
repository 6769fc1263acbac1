/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Pushing metrics to a Prometheus Pushgateway and JSON to a webhook over
 * HTTP(S) with libcurl: bounded attempts, retries with backoff, one-line
 * errors (push.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "../core/error.h"
#include "../core/net.h"
#include "push.h"

#define RESP_MAX 4096		/* what is kept of an answer's body */
#define RESP_LINE_MAX 200	/* what of its first line goes into an error */

/*
 * libcurl, loaded the first time a URL is checked or a push made, not when
 * fabscope starts: linked, it and the thirty libraries it needs took
 * about 20 ms of every run's start-up, whatever the command.
 */
static struct {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
	__typeof__(curl_free) *free;
	__typeof__(curl_url) *url;
	__typeof__(curl_url_set) *url_set;
	__typeof__(curl_url_get) *url_get;
	__typeof__(curl_url_cleanup) *url_cleanup;
	__typeof__(curl_url_strerror) *url_strerror;
} cu;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;
static char curl_why[160] = "not loaded";

static void curl_load(void)
{
	/* the OpenSSL build (Debian's libcurl4), else the GnuTLS or NSS one */
	static const char *const names[] = { "libcurl.so.4", "libcurl-gnutls.so.4", "libcurl-nss.so.4" };
	void *h = NULL;
	size_t i;

	for (i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(curl_why, sizeof(curl_why), "no libcurl.so.4: install libcurl4");
		return;
	}
#define CURL_SYM(n) \
	do { \
		if (!(*(void **)&cu.n = dlsym(h, "curl_" #n))) { \
			snprintf(curl_why, sizeof(curl_why), "the libcurl found has no curl_" #n); \
			return; \
		} \
	} while (0)
	CURL_SYM(global_init);
	CURL_SYM(easy_init);
	CURL_SYM(easy_setopt);
	CURL_SYM(easy_perform);
	CURL_SYM(easy_getinfo);
	CURL_SYM(easy_strerror);
	CURL_SYM(easy_cleanup);
	CURL_SYM(slist_append);
	CURL_SYM(slist_free_all);
	CURL_SYM(free);
	CURL_SYM(url);
	CURL_SYM(url_set);
	CURL_SYM(url_get);
	CURL_SYM(url_cleanup);
	CURL_SYM(url_strerror);
#undef CURL_SYM
	curl_init_rc = cu.global_init(CURL_GLOBAL_DEFAULT);
	if (curl_init_rc != CURLE_OK)
		snprintf(curl_why, sizeof(curl_why), "%s", cu.easy_strerror(curl_init_rc));
}

/* 0 with libcurl loaded and set up, else -1 with curl_why saying why */
static int curl_ready(void)
{
	pthread_once(&curl_once, curl_load);
	return curl_init_rc == CURLE_OK ? 0 : -1;
}

/* ---- exposition helpers ---- */

/* Length of the valid UTF-8 sequence at p (1 to 4), 0 when it is not one. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0))
			return 0;	/* overlong, surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
			return 0;	/* overlong, above U+10FFFF */
		return 4;
	}
	return 0;
}

static int name_char(unsigned char c, int colon, int first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return 1;
	if (c == ':')
		return colon;
	return !first && c >= '0' && c <= '9';
}

static char *make_name(const char *s, int colon)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char *out = malloc(strlen((const char *)p) + 2), *o = out;

	if (!out)
		return NULL;
	if (*p >= '0' && *p <= '9')
		*o++ = '_';
	while (*p) {
		size_t n = utf8_len(p);

		if (n == 1 && name_char(*p, colon, o == out))
			*o++ = (char)*p;
		else
			*o++ = '_';
		p += n ? n : 1;
	}
	if (o == out)
		*o++ = '_';
	*o = 0;
	return out;
}

char *push_metric_name(const char *s)
{
	return make_name(s, 1);
}

char *push_label_name(const char *s)
{
	return make_name(s, 0);
}

char *push_label_value(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	/* worst case: every byte invalid, 3 bytes of U+FFFD each */
	char *out = malloc(3 * strlen((const char *)p) + 1), *o = out;

	if (!out)
		return NULL;
	while (*p) {
		size_t n = utf8_len(p);

		if (*p == '\\' || *p == '"') {
			*o++ = '\\';
			*o++ = (char)*p;
		} else if (*p == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else if (!n) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
		} else {
			memcpy(o, p, n);
			o += n;
		}
		p += n ? n : 1;
	}
	*o = 0;
	return out;
}

/* ---- URLs ---- */

/*
 * url as it may be shown in a message: no user:password@, the query (a
 * webhook's token, often) as "?...", no fragment.  Caller frees.
 */
static char *shown_url(const char *url)
{
	const char *auth = strstr(url, "://"), *end, *at = NULL, *q;
	char *out = malloc(strlen(url) + 8), *o = out;

	if (!out)
		return NULL;
	auth = auth ? auth + 3 : url;
	end = auth + strcspn(auth, "/?#");
	for (q = auth; q < end; q++)
		if (*q == '@')
			at = q;
	memcpy(o, url, (size_t)(auth - url));
	o += auth - url;
	if (at)
		auth = at + 1;
	q = auth + strcspn(auth, "?#");
	memcpy(o, auth, (size_t)(q - auth));
	o += q - auth;
	if (*q == '?')
		o = stpcpy(o, "?...");
	*o = 0;
	return out;
}

/*
 * An http:// or https:// URL with a host, nothing else; with no_query, no
 * query or fragment either (a base to append a path to).  early: before the
 * report is written, where libcurl missing is not yet an error (the push says it).
 */
static int check_url(const char *url, const char *what, int no_query, int early)
{
	const char *example = no_query ? "http://HOST:9091" : "https://HOST/PATH";
	char *shown, *host = NULL, *part = NULL;
	const char *why = NULL;
	CURLUcode uc;
	CURLU *u;
	int rc = 0;

	if (!url || !*url)
		return fs_err_usage("no URL for the %s; give one like %s", what, example);
	shown = shown_url(url);
	if (!shown)
		return fs_err_env("out of memory");
	if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8)) {
		rc = fs_err_usage("'%s' is not an http:// or https:// URL for the %s; give one like %s",
				  shown, what, example);
		goto out;
	}
	if (url[strcspn(url, " \t\r\n\v\f")]) {
		why = "it holds white space";
		goto bad;
	}
	if (curl_ready()) {	/* early, before the report: the push says so after it */
		rc = early ? 0 : fs_err_env("libcurl cannot be set up (%s); cannot check '%s'", curl_why, shown);
		goto out;
	}
	u = cu.url();
	if (!u) {
		rc = fs_err_env("out of memory");
		goto out;
	}
	uc = cu.url_set(u, CURLUPART_URL, url, 0);
	if (uc) {
		why = cu.url_strerror(uc);
	} else if (cu.url_get(u, CURLUPART_HOST, &host, 0) || !host || !*host) {
		why = "it has no host";
	} else if (no_query && (!cu.url_get(u, CURLUPART_QUERY, &part, 0) ||
				!cu.url_get(u, CURLUPART_FRAGMENT, &part, 0))) {
		why = "a base URL takes no query or fragment";
	}
	cu.free(host);
	cu.free(part);
	cu.url_cleanup(u);
bad:
	if (why)
		rc = fs_err_usage("'%s' is not a valid URL for the %s (%s); give one like %s",
				  shown, what, why, example);
out:
	free(shown);
	return rc;
}

int push_check_urls(const char *gateway, const char *webhook)
{
	int rc = 0;

	if (gateway)
		rc = check_url(gateway, "Pushgateway", 1, 1);
	if (!rc && webhook)
		rc = check_url(webhook, "webhook", 0, 1);
	return rc;
}

/* A label in the Pushgateway's path: "/NAME/PCT-ENCODED" or "/NAME@base64/B64URL". */
static char *put_label(char *o, const char *name, const char *v)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	const unsigned char *p = (const unsigned char *)v;
	size_t len = strlen(v), i;

	*o++ = '/';
	o = stpcpy(o, name);
	if (!len || strchr(v, '/') || !strcmp(v, ".") || !strcmp(v, "..")) {
		o = stpcpy(o, "@base64/");
		if (!len)
			*o++ = '=';	/* the gateway's spelling of an empty value */
		for (i = 0; i < len; i += 3) {
			unsigned long w = (unsigned long)p[i] << 16;

			if (i + 1 < len)
				w |= (unsigned long)p[i + 1] << 8;
			if (i + 2 < len)
				w |= p[i + 2];
			*o++ = b64[w >> 18 & 63];
			*o++ = b64[w >> 12 & 63];
			if (i + 1 < len)
				*o++ = b64[w >> 6 & 63];
			if (i + 2 < len)
				*o++ = b64[w & 63];
		}
	} else {
		*o++ = '/';
		for (; *p; p++) {
			if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || strchr("-._~", *p))
				*o++ = (char)*p;
			else
				o += sprintf(o, "%%%02X", *p);
		}
	}
	*o = 0;
	return o;
}

/* ---- HTTP ---- */

struct resp {
	char buf[RESP_MAX + 1];
	size_t len;
};

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
	struct resp *r = ud;
	size_t len = size * n, room = RESP_MAX - r->len;

	if (len < room)
		room = len;
	memcpy(r->buf + r->len, p, room);
	r->len += room;
	r->buf[r->len] = 0;
	return size * n;	/* the rest is read and dropped */
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	return net_stop ? 1 : 0;	/* non-zero aborts the transfer */
}

/* Sleep ms unless net_stop is set (checked every 100 ms at least): 0, or -1 when stopped. */
static int backoff_sleep(int ms)
{
	struct timespec end, now;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	while (!net_stop) {
		struct timespec step;
		long left_ns;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left_ns = (end.tv_sec - now.tv_sec) * 1000000000L + (end.tv_nsec - now.tv_nsec);
		if (left_ns <= 0)
			return 0;
		if (left_ns > 100000000L)
			left_ns = 100000000L;
		step.tv_sec = 0;
		step.tv_nsec = left_ns;
		nanosleep(&step, NULL);	/* EINTR: look at net_stop again */
	}
	return -1;
}

/* The first non-empty line of an answer, made printable and short, in out ("" if none). */
static void first_line(const struct resp *r, char *out, size_t outlen)
{
	const char *p = r->buf;
	size_t n = 0;

	while (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t')
		p++;
	while (p[n] && p[n] != '\n' && p[n] != '\r' && n < RESP_LINE_MAX && n + 4 < outlen)
		n++;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	memcpy(out, p, n);
	out[n] = 0;
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	if (p[n] && p[n] != '\n' && p[n] != '\r')
		strcpy(out + n, "...");
}

static int curl_retryable(CURLcode cc)
{
	switch (cc) {
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_FAILED_INIT:
	case CURLE_URL_MALFORMAT:
	case CURLE_NOT_BUILT_IN:
	case CURLE_OUT_OF_MEMORY:
	case CURLE_ABORTED_BY_CALLBACK:
	case CURLE_BAD_FUNCTION_ARGUMENT:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_TOO_MANY_REDIRECTS:
		return 0;
	default:
		return 1;
	}
}

static const char *curl_hint(CURLcode cc, int timeout_ms, char *buf, size_t len)
{
	switch (cc) {
	case CURLE_COULDNT_CONNECT:
		return "check that it runs and listens there";
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return "check the host name (and the proxy variables)";
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(buf, len, "check that it is up and answering (it had %d ms for each try)",
			 timeout_ms);
		return buf;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
		return "check its TLS certificate and the CA certificates installed here";
	default:
		return "check that it is up and that the URL is right";
	}
}

enum push_kind { PUSH_GATEWAY, PUSH_WEBHOOK };

struct target {
	enum push_kind kind;
	const char *what;	/* "the Pushgateway" */
	const char *url;
	const char *shown;	/* url for messages */
	const char *method;	/* "PUT", "POST" */
	const char *content_type;
};

#define SETOPT(opt, val) do { if (cu.easy_setopt(h, opt, val) != CURLE_OK) goto setup_failed; } while (0)

static int push_http(const struct target *t, const char *body, const struct push_opts *o)
{
	int timeout_ms = o && o->timeout_ms > 0 ? o->timeout_ms : PUSH_DEFAULT_TIMEOUT_MS;
	int retries = o && o->retries >= 0 ? o->retries : PUSH_DEFAULT_RETRIES;
	int attempts = (retries < PUSH_MAX_RETRIES ? retries : PUSH_MAX_RETRIES) + 1;
	int backoff_ms = o && o->backoff_ms > 0 ? o->backoff_ms : PUSH_DEFAULT_BACKOFF_MS;
	const char *ua = o && o->user_agent ? o->user_agent : "fabscope/" FABSCOPE_VERSION;
	char errbuf[CURL_ERROR_SIZE], hdr[128], line[RESP_LINE_MAX + 8], hintbuf[160];
	char reason[CURL_ERROR_SIZE + RESP_LINE_MAX + 64], attempts_s[32] = "";
	struct curl_slist *headers = NULL, *hl;
	struct resp *r = NULL;
	const char *hint = "";
	CURLcode cc = CURLE_OK;
	int attempt, rc = 0;
	long status = 0;
	CURL *h;

	if (curl_ready())
		return fs_err_env("libcurl cannot be set up (%s); nothing was pushed to %s", curl_why, t->shown);
	h = cu.easy_init();
	r = malloc(sizeof(*r));
	if (!h || !r)
		goto setup_failed;
	snprintf(hdr, sizeof(hdr), "Content-Type: %s", t->content_type);
	hl = cu.slist_append(headers, hdr);
	if (!hl)
		goto setup_failed;
	headers = hl;
	hl = cu.slist_append(headers, "Expect:");	/* send the body at once, no 100-continue */
	if (!hl)
		goto setup_failed;
	headers = hl;
	SETOPT(CURLOPT_URL, t->url);
	SETOPT(CURLOPT_NOSIGNAL, 1L);
	SETOPT(CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	SETOPT(CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	SETOPT(CURLOPT_FOLLOWLOCATION, 0L);
	SETOPT(CURLOPT_FAILONERROR, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
#else
	SETOPT(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	SETOPT(CURLOPT_USERAGENT, ua);
	SETOPT(CURLOPT_HTTPHEADER, headers);
	SETOPT(CURLOPT_POSTFIELDS, body);
	SETOPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	SETOPT(CURLOPT_CUSTOMREQUEST, t->method);
	SETOPT(CURLOPT_WRITEFUNCTION, on_data);
	SETOPT(CURLOPT_WRITEDATA, r);
	SETOPT(CURLOPT_NOPROGRESS, 0L);
	SETOPT(CURLOPT_XFERINFOFUNCTION, on_progress);
	SETOPT(CURLOPT_ERRORBUFFER, errbuf);

	for (attempt = 1; attempt <= attempts; attempt++) {
		char *ctype = NULL;
		int retry;

		if (net_stop)
			goto interrupted;
		errbuf[0] = 0;
		r->len = 0;
		r->buf[0] = 0;
		status = 0;
		cc = cu.easy_perform(h);
		if (cc == CURLE_ABORTED_BY_CALLBACK && net_stop)
			goto interrupted;
		if (cc == CURLE_OK) {
			cu.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
			if (status >= 200 && status < 300)
				goto done;
			retry = status >= 500;
			first_line(r, line, sizeof(line));
			if (cu.easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ctype) == CURLE_OK &&
			    ctype && strcasestr(ctype, "html"))
				line[0] = 0;	/* a web page says nothing on one line */
			snprintf(reason, sizeof(reason), "HTTP %ld%s%s", status,
				 *line ? ": " : "", line);
		} else {
			retry = curl_retryable(cc);
			snprintf(reason, sizeof(reason), "%s", *errbuf ? errbuf : cu.easy_strerror(cc));
		}
		if (!retry || attempt == attempts)
			break;
		fs_log(1, "%s to %s at %s: attempt %d of %d failed (%s); trying again in %d ms",
		       t->method, t->what, t->shown, attempt, attempts, reason, backoff_ms);
		if (backoff_sleep(backoff_ms))
			goto interrupted;
		backoff_ms = backoff_ms > PUSH_MAX_BACKOFF_MS / 2 ? PUSH_MAX_BACKOFF_MS : 2 * backoff_ms;
	}
	if (attempt > 1)
		snprintf(attempts_s, sizeof(attempts_s), " after %d attempts", attempt);

	if (cc != CURLE_OK) {
		hint = curl_hint(cc, timeout_ms, hintbuf, sizeof(hintbuf));
		rc = cc == CURLE_URL_MALFORMAT || cc == CURLE_UNSUPPORTED_PROTOCOL ?
			FS_EXIT_USAGE : FS_EXIT_PEER;
	} else {
		char *loc = NULL;

		rc = FS_EXIT_PEER;
		if (status >= 500) {
			hint = "the server failed: see its log";
		} else if (status == 400 && t->kind == PUSH_GATEWAY) {
			hint = "it rejected the metrics text: fix what produced it";
		} else if (status == 401 || status == 403 || status == 407) {
			hint = "check the credentials and what the endpoint allows";
		} else if (status == 404 || status == 405) {
			hint = t->kind == PUSH_GATEWAY ? "check the URL (the Pushgateway's base, without /metrics)" :
							 "check the URL's path";
		} else if (status >= 300 && status < 400) {
			char *to;

			cu.easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc);
			to = loc ? shown_url(loc) : NULL;
			snprintf(hintbuf, sizeof(hintbuf),
				 "redirects are not followed: give the URL it points to%s%.100s%s",
				 to ? " (" : "", to ? to : "", to ? ")" : "");
			free(to);
			hint = hintbuf;
		} else {
			hint = "check the URL and what the endpoint expects";
		}
	}
	rc = fs_err(rc, "%s to %s at %s failed%s: %s; %s", t->method, t->what, t->shown,
		    attempts_s, reason, hint);
	goto done;

interrupted:
	rc = fs_err(FS_EXIT_INTERRUPTED, "%s to %s at %s interrupted by a signal; push again later",
		    t->method, t->what, t->shown);
	goto done;
setup_failed:
	rc = fs_err_env("libcurl cannot be set up for %s (out of memory?); nothing was pushed",
			t->shown);
done:
	cu.slist_free_all(headers);
	if (h)
		cu.easy_cleanup(h);
	free(r);
	return rc;
}

int push_gateway(const char *base_url, const char *body, const struct push_opts *o)
{
	struct target t = {
		.kind = PUSH_GATEWAY,
		.what = "the Pushgateway",
		.method = "PUT",
		.content_type = "text/plain; version=0.0.4; charset=utf-8",
	};
	char *url, *p, *shown = NULL;
	const char *const *g;
	size_t blen, glen;
	int rc;

	rc = check_url(base_url, "Pushgateway", 1, 0);
	if (rc)
		return rc;
	if (!o || !o->job || !*o->job || !body) {
		shown = shown_url(base_url);
		if (!shown)
			return fs_err_env("out of memory");
		if (!body)
			rc = fs_err_usage("no metrics text for the Pushgateway at %s", shown);
		else
			rc = fs_err_usage("no job name for the Pushgateway at %s; give one (the 'job' grouping label)",
					  shown);
		free(shown);
		return rc;
	}
	blen = strlen(base_url);
	while (blen && base_url[blen - 1] == '/')
		blen--;
	glen = 3 * (strlen(o->job) + (o->instance ? strlen(o->instance) : 0));
	for (g = o->group; g && g[0]; g += 2)
		glen += 16 + strlen(g[0]) + (g[1] ? 3 * strlen(g[1]) : 0);
	url = malloc(blen + 64 + glen);
	if (!url)
		return fs_err_env("out of memory");
	memcpy(url, base_url, blen);
	p = stpcpy(url + blen, "/metrics");
	p = put_label(p, "job", o->job);
	if (o->instance)
		p = put_label(p, "instance", o->instance);
	for (g = o->group; g && g[0]; g += 2)
		if (g[1])
			p = put_label(p, g[0], g[1]);
	shown = shown_url(url);
	if (!shown) {
		free(url);
		return fs_err_env("out of memory");
	}
	t.url = url;
	t.shown = shown;
	rc = push_http(&t, body, o);
	free(shown);
	free(url);
	return rc;
}

int push_webhook(const char *url, const char *json_text, const struct push_opts *o)
{
	struct target t = {
		.kind = PUSH_WEBHOOK,
		.what = "the webhook",
		.url = url,
		.method = "POST",
		.content_type = "application/json",
	};
	char *shown;
	int rc;

	rc = check_url(url, "webhook", 0, 0);
	if (rc)
		return rc;
	shown = shown_url(url);
	if (!shown)
		return fs_err_env("out of memory");
	if (!json_text) {
		rc = fs_err_usage("no JSON text for the webhook at %s", shown);
	} else {
		t.shown = shown;
		rc = push_http(&t, json_text, o);
	}
	free(shown);
	return rc;
}

/* ---- GET ---- */

struct fetch_body {
	char *buf;
	size_t len, alloc, max;
	int over;
};

static size_t on_fetch_data(char *p, size_t size, size_t n, void *ud)
{
	struct fetch_body *b = ud;
	size_t len = size * n;

	if (len > b->max - b->len) {
		b->over = 1;
		return 0;	/* aborts the transfer: CURLE_WRITE_ERROR */
	}
	if (b->len + len + 1 > b->alloc) {
		size_t na = b->alloc ? b->alloc : 65536;
		char *nb;

		while (na < b->len + len + 1)
			na = na > b->max / 2 ? b->max + 1 : 2 * na;
		if (!(nb = realloc(b->buf, na)))
			return 0;
		b->buf = nb;
		b->alloc = na;
	}
	memcpy(b->buf + b->len, p, len);
	b->len += len;
	b->buf[b->len] = 0;
	return len;
}

#define FSETOPT(opt, val) do { if (cu.easy_setopt(h, opt, val) != CURLE_OK) goto setup_failed; } while (0)

int push_fetch(const char *url, size_t max_bytes, int timeout_ms, char **body, size_t *len)
{
	struct fetch_body b = { .max = max_bytes };
	char errbuf[CURL_ERROR_SIZE], hintbuf[160];
	CURL *h = NULL;
	CURLcode cc;
	long status = 0;
	char *shown;
	int rc;

	*body = NULL;
	*len = 0;
	if ((rc = check_url(url, "metrics", 0, 0)))
		return rc;
	if (!(shown = shown_url(url)))
		return fs_err_env("out of memory");
	if (timeout_ms <= 0)
		timeout_ms = PUSH_DEFAULT_TIMEOUT_MS;
	if (curl_ready()) {
		rc = fs_err_env("libcurl cannot be set up (%s); %s was not read", curl_why, shown);
		goto out;
	}
	if (!(h = cu.easy_init()))
		goto setup_failed;
	FSETOPT(CURLOPT_URL, url);
	FSETOPT(CURLOPT_NOSIGNAL, 1L);
	FSETOPT(CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	FSETOPT(CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	FSETOPT(CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	FSETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
#else
	FSETOPT(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	FSETOPT(CURLOPT_USERAGENT, "fabscope/" FABSCOPE_VERSION);
	FSETOPT(CURLOPT_WRITEFUNCTION, on_fetch_data);
	FSETOPT(CURLOPT_WRITEDATA, &b);
	FSETOPT(CURLOPT_NOPROGRESS, 0L);
	FSETOPT(CURLOPT_XFERINFOFUNCTION, on_progress);
	FSETOPT(CURLOPT_ERRORBUFFER, errbuf);
	errbuf[0] = 0;
	cc = cu.easy_perform(h);
	if (cc == CURLE_ABORTED_BY_CALLBACK && net_stop) {
		rc = fs_err(FS_EXIT_INTERRUPTED, "GET %s interrupted by a signal", shown);
	} else if (b.over) {
		rc = fs_err_peer("GET %s: the answer is over %zu bytes; raise the bound or ask for less", shown,
				 max_bytes);
	} else if (cc != CURLE_OK) {
		rc = fs_err(cc == CURLE_URL_MALFORMAT || cc == CURLE_UNSUPPORTED_PROTOCOL ? FS_EXIT_USAGE : FS_EXIT_PEER,
			    "GET %s failed: %s; %s", shown, *errbuf ? errbuf : cu.easy_strerror(cc),
			    curl_hint(cc, timeout_ms, hintbuf, sizeof(hintbuf)));
	} else if (cu.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status), status < 200 || status >= 300) {
		rc = fs_err_peer("GET %s: HTTP %ld; check the URL and that it serves it", shown, status);
	} else {
		*body = b.buf ? b.buf : strdup("");
		*len = b.len;
		b.buf = NULL;
		rc = *body ? 0 : fs_err_env("out of memory");
	}
	goto out;
setup_failed:
	rc = fs_err_env("libcurl cannot be set up for %s (out of memory?)", shown);
out:
	if (h)
		cu.easy_cleanup(h);
	free(b.buf);
	free(shown);
	return rc;
}
