/*
 * http.c: bounded HTTP requests on libcurl for the metadata services; see
 * http.h. One easy handle per request: the metadata services are on the
 * local link and are polled about once a second, so connection reuse buys
 * nothing and a fresh handle keeps each request independent of the last.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "http.h"
#include "util.h"

#define CANCEL_TICK_MS	50	/* how often a cancellable request checks */

struct sink {
	char *buf;
	size_t len, max;
	int over;		/* the reply went past max */
	int oom;		/* ... or past the memory to hold it */
};

int
sr_http_init(char *err)
{
	CURLcode c;

	if ((c = curl_global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK)
		return sr_err(err, "initialise libcurl: %s", curl_easy_strerror(c));
	return 0;
}

void
sr_http_cleanup(void)
{
	curl_global_cleanup();
}

static size_t
on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct sink *s = arg;
	size_t n = size * nmemb;
	char *more;

	if (n > s->max - s->len) {
		s->over = 1;
		return 0;	/* makes curl fail with CURLE_WRITE_ERROR */
	}
	if ((more = sr_try_reallocarray(s->buf, s->len + n + 1, 1, NULL)) == NULL) {
		s->oom = 1;
		return 0;
	}
	s->buf = more;
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	s->buf[s->len] = '\0';
	return n;
}

/* What the header callback fills: the values of req->capture's names. */
struct heads {
	const struct sr_http_req *req;
	char *val[SR_HTTP_CAPTURE_MAX];
	int oom;		/* a value could not be kept */
};

static size_t
on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	struct heads *h = arg;
	size_t n = size * nmemb, k, i, v;
	const char *name, *s;

	if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		/* A new reply (after a 1xx): forget the last one's headers. */
		for (i = 0; i < SR_HTTP_CAPTURE_MAX; i++) {
			free(h->val[i]);
			h->val[i] = NULL;
		}
		return n;
	}
	for (i = 0; i < SR_HTTP_CAPTURE_MAX && (name = h->req->capture[i]) != NULL; i++) {
		k = strlen(name);
		if (n <= k || data[k] != ':' || strncasecmp(data, name, k) != 0)
			continue;
		s = data + k + 1;
		v = n - k - 1;
		while (v > 0 && (*s == ' ' || *s == '\t')) {
			s++;
			v--;
		}
		while (v > 0 && (s[v - 1] == '\r' || s[v - 1] == '\n' ||
		    s[v - 1] == ' ' || s[v - 1] == '\t'))
			v--;
		if (v > SR_HTTP_HEADER_MAX)
			v = SR_HTTP_HEADER_MAX;
		free(h->val[i]);
		if ((h->val[i] = sr_try_malloc(v + 1, NULL)) == NULL) {
			h->oom = 1;
			return 0;	/* makes curl fail with CURLE_WRITE_ERROR */
		}
		memcpy(h->val[i], s, v);
		h->val[i][v] = '\0';
	}
	return n;
}

static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
    curl_off_t ulnow)
{
	const struct sr_http_req *req = arg;

	return req->cancel(req->cancel_arg) ? 1 : 0;
}

/* curl_easy_perform, but with req->cancel checked at least every
 * CANCEL_TICK_MS: easy_perform calls the progress callback only about once
 * a second while the server is silent, too late for a prompt stop_vm. */
static CURLcode
perform_cancellable(CURL *e, const struct sr_http_req *req)
{
	CURLcode c = CURLE_OK;
	CURLMsg *msg;
	CURLMcode mc;
	CURLM *m;
	int running = 1, left;

	if ((m = curl_multi_init()) == NULL)
		return CURLE_OUT_OF_MEMORY;
	if (curl_multi_add_handle(m, e) != CURLM_OK) {
		curl_multi_cleanup(m);
		return CURLE_OUT_OF_MEMORY;
	}
	while (running) {
		if ((mc = curl_multi_perform(m, &running)) != CURLM_OK) {
			c = mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_RECV_ERROR;
			break;
		}
		if (!running)
			break;
		if (req->cancel(req->cancel_arg)) {
			c = CURLE_ABORTED_BY_CALLBACK;
			running = 0;
			break;
		}
		if ((mc = curl_multi_poll(m, NULL, 0, CANCEL_TICK_MS, NULL)) != CURLM_OK) {
			c = mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_RECV_ERROR;
			break;
		}
	}
	if (c == CURLE_OK) {
		c = CURLE_RECV_ERROR;	/* unless the transfer says how it ended */
		while ((msg = curl_multi_info_read(m, &left)) != NULL)
			if (msg->msg == CURLMSG_DONE && msg->easy_handle == e)
				c = msg->data.result;
	}
	curl_multi_remove_handle(m, e);
	curl_multi_cleanup(m);
	return c;
}

int
sr_http_do(const struct sr_http_req *req, struct sr_http_resp *resp, char *err)
{
	struct curl_slist *hdrs = NULL, *h;
	struct sink s = { NULL, 0, 0, 0, 0 };
	struct heads hd;
	char cerr[CURL_ERROR_SIZE] = "";
	const char *const *hp;
	CURLcode c;
	CURL *e;
	size_t i;
	int ret = -1;

	memset(resp, 0, sizeof *resp);
	memset(&hd, 0, sizeof hd);
	hd.req = req;
	s.max = req->body_max > 0 ? req->body_max : SR_HTTP_BODY_MAX;
	if ((e = curl_easy_init()) == NULL) {
		sr_err_oom(err, "curl_easy_init");
		return sr_err_prefix(err, "%s %s", req->method, req->url);
	}
	for (hp = req->headers; hp != NULL && *hp != NULL; hp++) {
		if ((h = curl_slist_append(hdrs, *hp)) == NULL) {
			sr_err_oom(err, "curl_slist_append");
			goto fail;
		}
		hdrs = h;
	}
	/* the string options are copied: each may fail on OOM */
	if ((c = curl_easy_setopt(e, CURLOPT_URL, req->url)) != CURLE_OK ||
	    (c = curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https")) != CURLE_OK ||
	    /* link-local: never via a proxy */
	    (c = curl_easy_setopt(e, CURLOPT_NOPROXY, "*")) != CURLE_OK ||
	    (c = curl_easy_setopt(e, CURLOPT_USERAGENT, SR_HTTP_USER_AGENT)) != CURLE_OK ||
	    (c = curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req->method)) != CURLE_OK) {
		sr_http_easy_err(c, "curl_easy_setopt", err);
		goto fail;
	}
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);	/* we run in threads */
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075700
	/* Without it, a timeout while a name is being resolved (a DNS server
	 * that never answers) waits for the resolver thread: 10 s and more
	 * past the request's timeout. With it, the thread finishes alone. */
	curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L);
#endif
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)(req->connect_timeout * 1000 + 0.5));
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(req->timeout * 1000 + 0.5));
	curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)s.max);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
	if (req->capture != NULL) {
		curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(e, CURLOPT_HEADERDATA, &hd);
	}
	if (req->cancel != NULL) {
		curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(e, CURLOPT_XFERINFODATA, (void *)req);
		curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
	}
	if (req->body != NULL) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
	} else if (strcmp(req->method, "GET") != 0) {
		/* An empty body with Content-Length: 0, as IMDS expects on PUT. */
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
	}
	c = req->cancel != NULL ? perform_cancellable(e, req) : curl_easy_perform(e);
	/* no fault of the server's: a caller must not take it for one */
	if (s.oom || hd.oom || c == CURLE_OUT_OF_MEMORY) {
		sr_err_oom(err, s.oom || hd.oom ? "keep the reply" : "curl");
		goto fail;
	}
	if (s.over || c == CURLE_FILESIZE_EXCEEDED) {
		sr_err(err, "%s %s: the reply is larger than %zu bytes", req->method,
		    req->url, s.max);
		goto out;
	}
	if (c != CURLE_OK) {
		sr_err(err, "%s %s: %s", req->method, req->url,
		    cerr[0] != '\0' ? cerr : curl_easy_strerror(c));
		goto out;
	}
	if (s.buf == NULL && (s.buf = sr_try_calloc(1, 1, err)) == NULL)
		goto fail;
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &resp->status);
	resp->body = s.buf;
	resp->len = s.len;
	s.buf = NULL;
	for (i = 0; i < SR_HTTP_CAPTURE_MAX; i++) {
		resp->captured[i] = hd.val[i];
		hd.val[i] = NULL;
	}
	ret = 0;
	goto out;
fail:
	sr_err_prefix(err, "%s %s", req->method, req->url);
out:
	for (i = 0; i < SR_HTTP_CAPTURE_MAX; i++)
		free(hd.val[i]);
	free(s.buf);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(e);
	return ret;
}

int
sr_http_easy_err(CURLcode c, const char *what, char *err)
{
	if (c == CURLE_OUT_OF_MEMORY)
		return sr_err_oom(err, what);
	return sr_err(err, "%s: %s", what, curl_easy_strerror(c));
}

int
sr_http_multi_err(CURLMcode mc, const char *what, char *err)
{
	if (mc == CURLM_OUT_OF_MEMORY)
		return sr_err_oom(err, what);
	return sr_err(err, "%s: %s", what, curl_multi_strerror(mc));
}

void
sr_http_resp_free(struct sr_http_resp *resp)
{
	size_t i;

	for (i = 0; i < SR_HTTP_CAPTURE_MAX; i++)
		free(resp->captured[i]);
	free(resp->body);
	memset(resp, 0, sizeof *resp);
}
