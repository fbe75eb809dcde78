/*
 * gcp.c: the `gcp` provider: Compute Engine preemption notices from the
 * metadata server (design.md section 4).
 *
 * Each VM gets one watcher thread. It first GETs instance/preempted plainly
 * (the current value and its ETag), then long-polls it:
 * instance/preempted?wait_for_change=true&last_etag=ETAG&timeout_sec=WAIT,
 * with ETAG from the previous reply, so a flip that happens between two
 * requests is answered at once rather than missed. The server answers the
 * moment the value changes, so TRUE reaches the job within milliseconds:
 * one SR_NOTICE_PREEMPT per VM with deadline = now + 30 s (Spot VMs get
 * 30 s from the notice to power-off).
 *
 * Between two long-polls the thread GETs instance/maintenance-event:
 * TERMINATE_ON_HOST_MAINTENANCE (what GPU VMs get) posts SR_NOTICE_PREEMPT,
 * MIGRATE_ON_HOST_MAINTENANCE SR_NOTICE_EARLY (once per VM each). The price
 * of keeping to one plain thread: a maintenance event is seen up to WAIT
 * seconds late (conf->poll, default 10 s, at most 30). The server sets the
 * value 60 s before the event, so the deadline is now + 60 s - WAIT, the
 * worst case; a run that needs it sooner sets a shorter poll.
 *
 * Every request carries Metadata-Flavor: Google, and every reply must carry
 * it back (else it did not come from the metadata server). A failed request
 * (503, another status, a timeout, a body over BODY_MAX, a value that is not
 * one of the documented ones, an ETag that is missing or not a token) is
 * counted, kept as the last error (sr_gcp_errors), written to stderr the
 * first time only, and polling goes on after a backoff from 0.1 s doubling
 * to 2 s. A bad value does not move the ETag on, so the next long-poll
 * returns at once with the current value. Every request is bounded and
 * stop_vm cancels one in flight (the http.h cancel callback), so stop_vm
 * returns promptly even in the middle of a long-poll.
 *
 * The endpoint is conf->endpoint, else $SPOTRUN_GCP_ENDPOINT (how the tests
 * point it at tests/mdemu), else http://metadata.google.internal. There is
 * no next VM in the run: the run checkpoints and exits 75 to be requeued.
 *
 * For "auto" the probe is a GET of the metadata root with Metadata-Flavor:
 * Google, answered 200 with Metadata-Flavor: Google (as Google's own client
 * libraries check): a captive portal or a DNS search domain that happens to
 * resolve the name cannot pass for it.
 */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "imds.h"
#include "provider-int.h"
#include "watch.h"
#include "util.h"

#define DEFAULT_ENDPOINT "http://metadata.google.internal"
#define PREFIX		"/computeMetadata/v1/"
#define DEFAULT_WAIT	10	/* timeout_sec of one long-poll */
#define MAX_WAIT	30	/* bounds how late a maintenance event is seen */
#define CONNECT_TIMEOUT	0.5
#define REQ_TIMEOUT	2.0	/* a plain GET */
#define WAIT_SLACK	5.0	/* a long-poll may take this much over timeout_sec */
#define MIN_CYCLE	0.1	/* a server that does not wait cannot make us spin */
#define BACKOFF_MIN	0.1
#define BACKOFF_MAX	2.0
#define BODY_MAX	4096	/* the values are single words */
#define ETAG_MAX	64
#define SPOT_NOTICE	30.0	/* seconds from preempted = TRUE to power-off */
#define MAINT_NOTICE	60.0	/* seconds from maintenance-event to the event */

enum { CAP_FLAVOR, CAP_ETAG };

struct gcp {
	char *endpoint;			/* without a trailing slash */
	int wait;			/* timeout_sec of one long-poll */

	struct sr_watch w;		/* the watcher thread; w.lock also guards the error state */

	/* The watcher's own (only the thread touches these while it runs). */
	char etag[ETAG_MAX + 1];	/* of the last good preempted reply; "" none */
	int preempt_posted, early_posted;

};

static const char *
base_url(const struct sr_provider_conf *c)
{
	return sr_provider_base_url(c->endpoint, "SPOTRUN_GCP_ENDPOINT", DEFAULT_ENDPOINT);
}

static int
gcp_detect(const struct sr_provider_conf *conf, double timeout)
{
	const char *headers[] = { "Metadata-Flavor: Google", NULL };
	const char *capture[] = { "Metadata-Flavor", NULL };
	struct sr_http_req req;
	struct sr_http_resp resp;
	char err[SR_ERRMAX], *base = sr_provider_trim_url(base_url(conf));
	char *url = sr_asprintf("%s%s", base, PREFIX);
	int yes = 0;

	memset(&req, 0, sizeof req);
	req.method = "GET";
	req.url = url;
	req.headers = headers;
	req.capture = capture;
	req.connect_timeout = timeout;
	req.timeout = timeout;
	req.body_max = BODY_MAX;
	if (sr_http_do(&req, &resp, err) == 0) {
		yes = resp.status == 200 && resp.captured[0] != NULL &&
		    strcmp(resp.captured[0], "Google") == 0;
		sr_http_resp_free(&resp);
	}
	free(url);
	free(base);
	return yes;
}

static int
gcp_init(struct sr_provider *p, char *err)
{
	const struct sr_provider_conf *c = &p->conf;
	const char *ep = base_url(c);
	struct gcp *g;

	if (c->poll != 0 && (!(c->poll >= 1) || !(c->poll <= MAX_WAIT) ||
	    c->poll != floor(c->poll)))
		return sr_err(err, "create provider gcp: poll is %g; it must be 0 (the "
		    "default, %d s) or a whole number of seconds from 1 to %d (how "
		    "long one long-poll waits)", c->poll, DEFAULT_WAIT, MAX_WAIT);
	if (strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0)
		return sr_err(err, "create provider gcp: endpoint \"%s\" is not an "
		    "http:// or https:// URL (set it like %s)", ep, DEFAULT_ENDPOINT);
	if (sr_http_init(err) == -1) {
		sr_err_prefix(err, "create provider gcp");
		return SR_PROVIDER_ESYS;
	}
	g = sr_calloc(1, sizeof *g);
	g->endpoint = sr_provider_trim_url(ep);
	g->wait = c->poll > 0 ? (int)c->poll : DEFAULT_WAIT;
	sr_watch_init(&g->w, "gcp");
	p->priv = g;
	return 0;
}

static void
gcp_free(struct sr_provider *p)
{
	struct gcp *g = p->priv;

	sr_watch_destroy(&g->w);
	free(g->endpoint);
	free(g);
	sr_http_cleanup();
}

int
sr_gcp_errors(struct sr_provider *p, unsigned long *count, char *last, size_t len)
{
	struct gcp *g = p->priv;

	if (strcmp(p->ops->name, "gcp") != 0)
		return -1;
	sr_watch_errors(&g->w, count, last, len);
	return 0;
}

static int
stopping(void *arg)
{
	struct gcp *g = arg;

	return sr_watch_stopping(&g->w);
}

/* s (len bytes) for a message: at most 32 bytes, unprintable ones as '?',
 * "..." when cut. */
static void
show(const char *s, size_t len, char *buf, size_t size)
{
	size_t i, n = len < 32 ? len : 32;

	for (i = 0; i < n && i + 4 < size; i++)
		buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	buf[i] = '\0';
	if (n < len)
		strlcat(buf, "...", size);
}

/* GET PREFIX path (with its query), bounded by timeout seconds. 0: a 200
 * from the metadata server, resp holds the value (one trailing newline
 * dropped) and the ETag in resp->captured[CAP_ETAG] when there was one;
 * -1 with err set otherwise. */
static int
get(struct gcp *g, const char *path, double timeout, int cancellable,
    struct sr_http_resp *resp, char *err)
{
	const char *headers[] = { "Metadata-Flavor: Google", NULL };
	const char *capture[] = { "Metadata-Flavor", "ETag", NULL };
	char *url = sr_asprintf("%s%s%s", g->endpoint, PREFIX, path);
	struct sr_http_req req;
	int r = -1;

	memset(&req, 0, sizeof req);
	req.method = "GET";
	req.url = url;
	req.headers = headers;
	req.capture = capture;
	req.connect_timeout = CONNECT_TIMEOUT;
	req.timeout = timeout;
	req.body_max = BODY_MAX;
	if (cancellable) {
		req.cancel = stopping;
		req.cancel_arg = g;
	}
	if (sr_http_do(&req, resp, err) == -1)
		goto out;
	if (resp->captured[CAP_FLAVOR] == NULL ||
	    strcmp(resp->captured[CAP_FLAVOR], "Google") != 0) {
		sr_err(err, "GET %s: the reply lacks Metadata-Flavor: Google (HTTP status "
		    "%ld; is this the metadata server?)", url, resp->status);
		sr_http_resp_free(resp);
		goto out;
	}
	if (resp->status != 200) {
		sr_err(err, "GET %s: HTTP status %ld", url, resp->status);
		sr_http_resp_free(resp);
		goto out;
	}
	if (resp->len > 0 && resp->body[resp->len - 1] == '\n')
		resp->body[--resp->len] = '\0';
	if (resp->len > 0 && resp->body[resp->len - 1] == '\r')
		resp->body[--resp->len] = '\0';
	r = 0;
out:
	free(url);
	return r;
}

/* Whether the reply's value is exactly word (no NUL inside). */
static int
is_value(const struct sr_http_resp *resp, const char *word)
{
	return resp->len == strlen(word) && strcmp(resp->body, word) == 0;
}

/* The value's ETag if it is one we can send back in a query; else NULL. */
static const char *
good_etag(const struct sr_http_resp *resp)
{
	const char *t = resp->captured[CAP_ETAG];
	size_t n;

	if (t == NULL)
		return NULL;
	n = strlen(t);
	if (n == 0 || n > ETAG_MAX || strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789_.-") != n)
		return NULL;
	return t;
}

static void
post(struct sr_provider *p, enum sr_notice_kind kind, double ahead,
    const char *reason)
{
	struct sr_notice n;

	memset(&n, 0, sizeof n);
	n.kind = kind;
	n.seen = sr_now();
	n.deadline = kind == SR_NOTICE_PREEMPT ? n.seen + ahead : 0;
	strlcpy(n.reason, reason, sizeof n.reason);
	sr_provider_post(p, &n);
}

/* One request for instance/preempted: plain when there is no ETag yet, else
 * a long-poll. 0 or -1 with err set. */
static int
poll_preempted(struct sr_provider *p, struct gcp *g, char *err)
{
	struct sr_http_resp resp;
	char path[160], shown[40];
	const char *etag;
	double timeout = REQ_TIMEOUT;
	int r = 0;

	if (g->etag[0] == '\0')
		strlcpy(path, "instance/preempted", sizeof path);
	else {
		snprintf(path, sizeof path, "instance/preempted?wait_for_change=true&"
		    "last_etag=%s&timeout_sec=%d", g->etag, g->wait);
		timeout = g->wait + WAIT_SLACK;
	}
	if (get(g, path, timeout, 1, &resp, err) == -1)
		return -1;
	if (!is_value(&resp, "TRUE") && !is_value(&resp, "FALSE")) {
		show(resp.body, resp.len, shown, sizeof shown);
		sr_http_resp_free(&resp);
		return sr_err(err, "instance/preempted: the value \"%s\" is not TRUE or "
		    "FALSE", shown);
	}
	if (is_value(&resp, "TRUE")) {
		post(p, SR_NOTICE_PREEMPT, SPOT_NOTICE,
		    "gcp preemption (instance/preempted = TRUE)");
		g->preempt_posted = 1;
	}
	if ((etag = good_etag(&resp)) != NULL)
		strlcpy(g->etag, etag, sizeof g->etag);
	else {
		g->etag[0] = '\0';	/* the next request is a plain GET */
		show(resp.captured[CAP_ETAG] != NULL ? resp.captured[CAP_ETAG] : "",
		    resp.captured[CAP_ETAG] != NULL ? strlen(resp.captured[CAP_ETAG]) : 0,
		    shown, sizeof shown);
		r = sr_err(err, "instance/preempted: the ETag \"%s\" is not 1 to %d of "
		    "[A-Za-z0-9_.-]", shown, ETAG_MAX);
	}
	sr_http_resp_free(&resp);
	return r;
}

/* One plain GET of instance/maintenance-event. 0 or -1 with err set. */
static int
poll_maintenance(struct sr_provider *p, struct gcp *g, char *err)
{
	struct sr_http_resp resp;
	char shown[40];
	int r = 0;

	if (get(g, "instance/maintenance-event", REQ_TIMEOUT, 1, &resp, err) == -1)
		return -1;
	if (is_value(&resp, "TERMINATE_ON_HOST_MAINTENANCE")) {
		post(p, SR_NOTICE_PREEMPT, MAINT_NOTICE - g->wait,
		    "gcp host maintenance (TERMINATE_ON_HOST_MAINTENANCE)");
		g->preempt_posted = 1;
	} else if (is_value(&resp, "MIGRATE_ON_HOST_MAINTENANCE")) {
		if (!g->early_posted)
			post(p, SR_NOTICE_EARLY, 0,
			    "gcp host maintenance (MIGRATE_ON_HOST_MAINTENANCE)");
		g->early_posted = 1;
	} else if (!is_value(&resp, "NONE")) {
		show(resp.body, resp.len, shown, sizeof shown);
		r = sr_err(err, "instance/maintenance-event: the value \"%s\" is not NONE, "
		    "MIGRATE_ON_HOST_MAINTENANCE or TERMINATE_ON_HOST_MAINTENANCE", shown);
	}
	sr_http_resp_free(&resp);
	return r;
}

static void *
watch(void *arg)
{
	struct sr_provider *p = arg;
	struct gcp *g = p->priv;
	char err[SR_ERRMAX];
	double start, next, backoff = 0;
	int failed, stop = 0;

	g->etag[0] = '\0';
	while (!stop) {
		start = sr_mono();
		failed = 0;
		if (!g->preempt_posted && poll_preempted(p, g, err) == -1 && !stopping(g)) {
			sr_watch_error(&g->w, err);
			failed = 1;
		}
		if (!g->preempt_posted && !stopping(g) &&
		    poll_maintenance(p, g, err) == -1 && !stopping(g)) {
			sr_watch_error(&g->w, err);
			failed = 1;
		}
		if (g->preempt_posted)
			next = -1;	/* nothing left to watch: wait for stop_vm */
		else if (failed) {
			backoff = backoff == 0 ? BACKOFF_MIN : fmin(backoff * 2, BACKOFF_MAX);
			next = sr_mono() + backoff;
		} else {
			backoff = 0;
			next = start + MIN_CYCLE;
		}
		pthread_mutex_lock(&g->w.lock);
		while (!(stop = sr_watch_stopping(&g->w)) && (next < 0 || sr_mono() < next))
			sr_watch_wait_locked(&g->w, next);
		pthread_mutex_unlock(&g->w.lock);
	}
	return NULL;
}

static int
gcp_start_vm(struct sr_provider *p, char *err)
{
	struct gcp *g = p->priv;

	g->preempt_posted = g->early_posted = 0;
	return sr_watch_start(&g->w, watch, p, p->attempt, err);
}

static void
gcp_stop_vm(struct sr_provider *p)
{
	struct gcp *g = p->priv;

	sr_watch_stop(&g->w);
}

static int
gcp_next_vm(const struct sr_provider *p)
{
	return 0;	/* the VM goes away: exit 75 and be requeued */
}

/* One fact into buf (len bytes), its last '/'-separated segment when
 * last_segment ("projects/N/zones/ZONE" -> "ZONE"); on failure buf keeps
 * "unknown" and err gets the reason. */
static int
fact(struct gcp *g, const char *path, int last_segment, char *buf, size_t len,
    char *err)
{
	struct sr_http_resp resp;
	const char *v;

	if (get(g, path, REQ_TIMEOUT, 0, &resp, err) == -1)
		return -1;
	v = resp.body;
	if (last_segment && strrchr(v, '/') != NULL)
		v = strrchr(v, '/') + 1;
	if (*v == '\0' || strlen(v) >= len || strlen(resp.body) != resp.len ||
	    strcspn(v, "\r\n") != strlen(v)) {
		sr_err(err, "GET %s%s%s: want one line of 1 to %zu bytes", g->endpoint,
		    PREFIX, path, len - 1);
		sr_http_resp_free(&resp);
		return -1;
	}
	strlcpy(buf, v, len);
	sr_http_resp_free(&resp);
	return 0;
}

static int
gcp_facts(struct sr_provider *p, struct sr_facts *f, char *err)
{
	struct gcp *g = p->priv;
	char e2[SR_ERRMAX], model[32] = "unknown";
	int r = 0;

	strlcpy(f->provider, "gcp", sizeof f->provider);
	strlcpy(f->instance_id, "unknown", sizeof f->instance_id);
	strlcpy(f->instance_type, "unknown", sizeof f->instance_type);
	strlcpy(f->zone, "unknown", sizeof f->zone);
	strlcpy(f->lifecycle, "unknown", sizeof f->lifecycle);
	/* Each fact on its own, so one that fails leaves the others; err
	 * keeps the first failure. */
	if (fact(g, "instance/id", 0, f->instance_id, sizeof f->instance_id, err) == -1)
		r = -1;
	if (fact(g, "instance/machine-type", 1, f->instance_type, sizeof f->instance_type,
	    r == -1 ? e2 : err) == -1)
		r = -1;
	if (fact(g, "instance/zone", 1, f->zone, sizeof f->zone, r == -1 ? e2 : err) == -1)
		r = -1;
	if (fact(g, "instance/scheduling/provisioning-model", 0, model, sizeof model,
	    r == -1 ? e2 : err) == -1)
		r = -1;
	else if (strcmp(model, "SPOT") == 0)
		strlcpy(f->lifecycle, "spot", sizeof f->lifecycle);
	else if (strcmp(model, "STANDARD") == 0)
		strlcpy(f->lifecycle, "on-demand", sizeof f->lifecycle);
	else
		strlcpy(f->lifecycle, model, sizeof f->lifecycle);
	return r == -1 ? sr_err_prefix(err, "read gcp facts") : 0;
}

static const char *
gcp_endpoint(const struct sr_provider *p)
{
	const struct gcp *g = p->priv;

	return g->endpoint;
}

const struct sr_provider_ops sr_provider_gcp_ops = {
	.name = "gcp",
	.keys = SR_PROVIDER_KEY_ENDPOINT,
	.rented = 1,
	.poll_note = ", which long-polls",	/* no polls to space out */
	.detect = gcp_detect,
	.detect_off = SR_IMDS_OFF_GCP,
	.endpoint = gcp_endpoint,
	.init = gcp_init,
	.free = gcp_free,
	.start_vm = gcp_start_vm,
	.stop_vm = gcp_stop_vm,
	.next_vm = gcp_next_vm,
	.facts = gcp_facts,
};
