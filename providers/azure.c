/*
 * azure.c: the `azure` provider: Azure Scheduled Events from the instance
 * metadata service (design.md section 4).
 *
 * Each VM gets one watcher thread. It first learns this VM's name
 * (GET /metadata/instance/compute/name?api-version=2021-02-01&format=text),
 * and GETs /metadata/scheduledevents?api-version=2020-07-01 every
 * conf->poll seconds (default 0.2 s, for a notice within 0.3 s at the 99th
 * percentile; Azure advises 1 s, and a Preempt gives only 30 s). Every request carries Metadata: true. The service starts on
 * its first use, so the first scheduledevents call may take up to 2 minutes:
 * it runs in the watcher thread (start_vm returns at once) with a total
 * timeout of FIRST_TIMEOUT, and stop_vm cancels it like any other request.
 *
 * A document whose DocumentIncarnation is the last one seen is not looked
 * at again. Events whose Resources do not name this VM are ignored. While
 * the name cannot be read (an error, retried after a backoff from
 * conf->poll doubling to NAME_RETRY_MAX), the events are polled all the
 * same and every Preempt or Terminate counts as this VM's, whatever its
 * Resources, the notice's reason saying so: a needless stop costs a
 * requeue, a missed one the work since the last checkpoint. Such a
 * notice is not acknowledged (an ack would hurry another VM's event), and
 * early events wait for the name. Once the name is read, the current
 * document is read again with it.
 * Preempt and Terminate post one SR_NOTICE_PREEMPT per VM; its deadline is
 * NotBefore (RFC 1123, "Mon, 19 Sep 2016 18:29:47 GMT", parsed strictly)
 * when that lies at most an hour ahead, also when it is past: Azure may
 * start the event at any moment then, so the runner finds no time for a
 * checkpoint and stops the job at once. Else (missing, "" as Azure sends
 * once an event has Started, unparseable, too far) the deadline is now +
 * 30 s, the shortest notice Azure gives (a Preempt's). Freeze, Reboot and
 * Redeploy post one SR_NOTICE_EARLY per VM (a checkpoint, no stop). The
 * ack (sr_provider_ack, once the notice's checkpoint is committed) POSTs
 * {"StartRequests":[{"EventId":"..."}]} for the preemption's event, so
 * Azure may go ahead without waiting for NotBefore. The POST runs on a
 * short-lived thread of its own, so the supervisor's loop never waits on
 * it; sr_provider_ack_wait and stop_vm join that thread (the POST is
 * bounded by REQ_TIMEOUT and not cancelled by a stop), so the ack is not
 * lost when the run ends right after it.
 *
 * A bad reply (not JSON, wrong types, a status other than 200, a body over
 * the cap, a timeout) is counted, kept as the last error
 * (sr_azure_errors), written to stderr the first time only, and polling
 * goes on; its incarnation is not recorded, so the next good reply of it
 * is read. The endpoint is conf->endpoint, else $SPOTRUN_AZURE_ENDPOINT
 * (how the tests point it at tests/mdemu), else http://169.254.169.254.
 * There is no next VM in the run: the run checkpoints and exits 75.
 *
 * For "auto" the probe is a GET of the instance's compute metadata
 * (COMPUTE_PATH, with Metadata: true), which must answer 200 with a JSON
 * object holding a vmId string. Not scheduledevents: its first call starts
 * the service and may take up to two minutes, far beyond the probe's
 * budget. The compute document answers at once on every Azure VM, and the
 * AWS service on the same address answers 404 to it.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "http.h"
#include "imds.h"
#include "provider-int.h"
#include "watch.h"
#include "util.h"

#define DEFAULT_ENDPOINT "http://169.254.169.254"
#define EVENTS_PATH	"/metadata/scheduledevents?api-version=2020-07-01"
#define NAME_PATH	"/metadata/instance/compute/name?api-version=2021-02-01&format=text"
#define COMPUTE_PATH	"/metadata/instance/compute?api-version=2021-02-01"
#define DEFAULT_POLL	0.2
#define MIN_POLL	0.05
#define MAX_POLL	3600.0
#define CONNECT_TIMEOUT	0.5
#define REQ_TIMEOUT	2.0
#define FIRST_TIMEOUT	120.0		/* the service starts on first use */
#define BACKOFF_MAX	2.0
#define NAME_RETRY_MAX	5.0		/* seconds between reads of a name that failed */
#define FALLBACK	30.0		/* a Preempt's notice */
#define MAX_AHEAD	3600.0
#define ID_MAX		128
#define NAME_MAX_LEN	128

struct azure {
	char *endpoint;			/* without a trailing slash */
	double poll;

	struct sr_watch w;		/* w.lock also guards the error state and ack_id */

	/* The watcher's own. */
	char vmname[NAME_MAX_LEN + 1];	/* "" until known */
	double name_retry_at;		/* monotonic: when to read it again */
	double name_backoff;		/* seconds; 0 before the first failure */
	int answered;			/* scheduledevents replied once this VM */
	long long incarnation;		/* of the last good document; -1 none */
	int preempt_posted, early_posted;

	/* Under lock. */
	char ack_id[ID_MAX + 1];	/* the preemption's EventId; "" none */

	/* The acknowledgment's thread: started by azure_ack and joined by
	 * ack_join, both on the supervisor's thread; the thread writes
	 * ack_rc and ack_err before it ends, they are read after the join. */
	pthread_t ack_th;
	int ack_live;			/* started, not joined yet */
	int ack_started;		/* one ack per VM */
	char ack_sent[ID_MAX + 1];	/* the EventId it posts */
	int ack_rc;
	char ack_err[SR_ERRMAX];
};

static const char *
base_url(const struct sr_provider_conf *c)
{
	return sr_provider_base_url(c->endpoint, "SPOTRUN_AZURE_ENDPOINT", DEFAULT_ENDPOINT);
}

static int
azure_detect(const struct sr_provider_conf *conf, double timeout)
{
	const char *headers[] = { "Metadata: true", NULL };
	struct sr_http_req req;
	struct sr_http_resp resp;
	char err[SR_ERRMAX], *base = sr_provider_trim_url(base_url(conf));
	char *url = sr_asprintf("%s%s", base, COMPUTE_PATH);
	json_t *root;
	int yes = 0;

	memset(&req, 0, sizeof req);
	req.method = "GET";
	req.url = url;
	req.headers = headers;
	req.connect_timeout = timeout;
	req.timeout = timeout;
	if (sr_http_do(&req, &resp, err) == 0) {
		if (resp.status == 200 && (root = json_loads(resp.body, 0, NULL)) != NULL) {
			yes = json_is_object(root) &&
			    json_is_string(json_object_get(root, "vmId"));
			json_decref(root);
		}
		sr_http_resp_free(&resp);
	}
	free(url);
	free(base);
	return yes;
}

static int
azure_init(struct sr_provider *p, char *err)
{
	const struct sr_provider_conf *c = &p->conf;
	const char *ep = base_url(c);
	struct azure *z;

	if (c->poll != 0 && (!(c->poll >= MIN_POLL) || !(c->poll <= MAX_POLL)))
		return sr_err(err, "create provider azure: poll is %g; it must be 0 (the "
		    "default, %g s) or between %g and %g seconds", c->poll,
		    DEFAULT_POLL, MIN_POLL, MAX_POLL);
	if (strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0)
		return sr_err(err, "create provider azure: endpoint \"%s\" is not an "
		    "http:// or https:// URL (set it like %s)", ep, DEFAULT_ENDPOINT);
	if (sr_http_init(err) == -1) {
		sr_err_prefix(err, "create provider azure");
		return SR_PROVIDER_ESYS;
	}
	z = sr_calloc(1, sizeof *z);
	z->endpoint = sr_provider_trim_url(ep);
	z->poll = c->poll > 0 ? c->poll : DEFAULT_POLL;
	sr_watch_init(&z->w, "azure");
	p->priv = z;
	return 0;
}

static int ack_join(struct azure *, char *);

static void
azure_free(struct sr_provider *p)
{
	struct azure *z = p->priv;
	char err[SR_ERRMAX];

	if (ack_join(z, err) == -1)
		fprintf(stderr, "spotrun: warning: %s\n", err);
	sr_watch_destroy(&z->w);
	free(z->endpoint);
	free(z);
	sr_http_cleanup();
}

int
sr_azure_errors(struct sr_provider *p, unsigned long *count, char *last, size_t len)
{
	struct azure *z = p->priv;

	if (strcmp(p->ops->name, "azure") != 0)
		return -1;
	sr_watch_errors(&z->w, count, last, len);
	return 0;
}

static int
stopping(void *arg)
{
	struct azure *z = arg;

	return sr_watch_stopping(&z->w);
}

/* One request to path with Metadata: true; 0 with a 200 in resp, else -1
 * with err set. body: POSTed as JSON when not NULL. */
static int
request(struct azure *z, const char *method, const char *path, const char *body,
    double timeout, int cancellable, struct sr_http_resp *resp, char *err)
{
	const char *get_h[] = { "Metadata: true", NULL };
	const char *post_h[] = { "Metadata: true", "Content-Type: application/json", NULL };
	char *url = sr_asprintf("%s%s", z->endpoint, path);
	struct sr_http_req req;
	int r = -1;

	memset(&req, 0, sizeof req);
	req.method = method;
	req.url = url;
	req.headers = body != NULL ? post_h : get_h;
	req.body = body;
	req.body_len = body != NULL ? strlen(body) : 0;
	req.connect_timeout = CONNECT_TIMEOUT;
	req.timeout = timeout;
	if (cancellable) {
		req.cancel = stopping;
		req.cancel_arg = z;
	}
	if (sr_http_do(&req, resp, err) == 0) {
		if (resp->status == 200)
			r = 0;
		else {
			sr_err(err, "%s %s: HTTP status %ld", method, url, resp->status);
			sr_http_resp_free(resp);
		}
	}
	free(url);
	return r;
}

/* "Mon, 19 Sep 2016 18:29:47 GMT" to epoch seconds; -1 when not exactly
 * that form. */
static int
parse_rfc1123(const char *s, double *out)
{
	static const char *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	struct tm tm, check;
	const char *e;
	time_t t;

	if (strlen(s) != 29)
		return -1;
	memset(&tm, 0, sizeof tm);
	e = strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (e == NULL || *e != '\0' || s[3] != ',' || s[4] != ' ' || s[7] != ' ' ||
	    s[11] != ' ' || s[16] != ' ')
		return -1;
	if ((t = timegm(&tm)) == (time_t)-1)
		return -1;
	/* Reject a day that does not exist (31 Feb) or a wrong weekday. */
	gmtime_r(&t, &check);
	if (check.tm_mday != tm.tm_mday || strncmp(s, days[check.tm_wday], 3) != 0)
		return -1;
	*out = (double)t;
	return 0;
}

double
sr_azure_deadline(const char *not_before, double now)
{
	double t;

	if (not_before == NULL || parse_rfc1123(not_before, &t) == -1 ||
	    t > now + MAX_AHEAD)
		return now + FALLBACK;
	return t;
}

static int
names_vm(json_t *resources, const char *vm)
{
	size_t i;
	json_t *r;

	json_array_foreach(resources, i, r)
		if (strcmp(json_string_value(r), vm) == 0)
			return 1;
	return 0;
}

/* Check one event's types; 0 or -1 with err set. */
static int
check_event(json_t *ev, size_t i, char *err)
{
	json_t *id = json_object_get(ev, "EventId");
	json_t *type = json_object_get(ev, "EventType");
	json_t *res = json_object_get(ev, "Resources");
	json_t *nb = json_object_get(ev, "NotBefore");
	size_t j;
	json_t *r;

	if (!json_is_object(ev) || !json_is_string(id) || !json_is_string(type) ||
	    !json_is_array(res) || (nb != NULL && !json_is_string(nb)))
		return sr_err(err, "scheduledevents: Events[%zu]: want {\"EventId\": string, "
		    "\"EventType\": string, \"Resources\": [string], \"NotBefore\": "
		    "string, ...}", i);
	if (json_string_length(id) == 0 || json_string_length(id) > ID_MAX ||
	    strspn(json_string_value(id), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq"
	    "rstuvwxyz0123456789-_.") != json_string_length(id))
		return sr_err(err, "scheduledevents: Events[%zu]: EventId is not 1 to %d "
		    "of [A-Za-z0-9_.-]", i, ID_MAX);
	json_array_foreach(res, j, r)
		if (!json_is_string(r))
			return sr_err(err, "scheduledevents: Events[%zu]: Resources[%zu] is "
			    "not a string", i, j);
	return 0;
}

/* Read one document; post what it holds for this VM. 0 or -1 with err. */
static int
read_document(struct sr_provider *p, struct azure *z, const char *body, char *err)
{
	json_error_t je;
	json_t *root, *inc, *events, *ev;
	struct sr_notice n;
	const char *type, *id;
	size_t i;
	int ret = -1, preempt, early;

	if ((root = json_loads(body, 0, &je)) == NULL)
		return sr_err(err, "scheduledevents: bad JSON at line %d: %s", je.line,
		    je.text);
	inc = json_object_get(root, "DocumentIncarnation");
	events = json_object_get(root, "Events");
	if (!json_is_object(root) || !json_is_integer(inc) || !json_is_array(events)) {
		sr_err(err, "scheduledevents: want {\"DocumentIncarnation\": integer, "
		    "\"Events\": [...]}");
		goto out;
	}
	if (json_integer_value(inc) == z->incarnation) {
		ret = 0;	/* seen already */
		goto out;
	}
	json_array_foreach(events, i, ev)
		if (check_event(ev, i, err) == -1)
			goto out;
	json_array_foreach(events, i, ev) {
		json_t *res = json_object_get(ev, "Resources");
		int known = z->vmname[0] != '\0';

		type = json_string_value(json_object_get(ev, "EventType"));
		id = json_string_value(json_object_get(ev, "EventId"));
		if (known && !names_vm(res, z->vmname))
			continue;	/* another VM's */
		preempt = strcmp(type, "Preempt") == 0 || strcmp(type, "Terminate") == 0;
		early = strcmp(type, "Freeze") == 0 || strcmp(type, "Reboot") == 0 ||
		    strcmp(type, "Redeploy") == 0;
		if (!known && !preempt)
			continue;	/* maybe another VM's: not worth a checkpoint */
		memset(&n, 0, sizeof n);
		n.seen = sr_now();
		if (known)
			snprintf(n.reason, sizeof n.reason, "azure %.16s event %s", type, id);
		else
			snprintf(n.reason, sizeof n.reason, "azure %.16s event %s for %.32s "
			    "(this VM's name is unknown: taken as this VM's)", type, id,
			    json_array_size(res) > 0 ? json_string_value(json_array_get(res, 0)) :
			    "no VM");
		if (preempt && !z->preempt_posted) {
			n.kind = SR_NOTICE_PREEMPT;
			n.deadline = sr_azure_deadline(json_string_value(
			    json_object_get(ev, "NotBefore")), n.seen);
			/* Only an event known to be this VM's is acknowledged:
			 * an ack starts the event, and another VM's is not
			 * ours to hurry. */
			pthread_mutex_lock(&z->w.lock);
			strlcpy(z->ack_id, known ? id : "", sizeof z->ack_id);
			pthread_mutex_unlock(&z->w.lock);
			sr_provider_post(p, &n);
			z->preempt_posted = 1;
		} else if (early && !z->early_posted && !z->preempt_posted) {
			n.kind = SR_NOTICE_EARLY;
			sr_provider_post(p, &n);
			z->early_posted = 1;
		}
	}
	z->incarnation = json_integer_value(inc);
	ret = 0;
out:
	json_decref(root);
	return ret;
}

/* Learn this VM's name; 0 or -1 with err set. */
static int
get_vmname(struct azure *z, char *err)
{
	struct sr_http_resp resp;
	size_t n;

	if (request(z, "GET", NAME_PATH, NULL, REQ_TIMEOUT, 1, &resp, err) == -1)
		return -1;
	n = resp.len;
	while (n > 0 && (resp.body[n - 1] == '\n' || resp.body[n - 1] == '\r'))
		n--;
	resp.body[n] = '\0';
	if (n == 0 || n > NAME_MAX_LEN || strlen(resp.body) != n ||
	    strcspn(resp.body, "\r\n\t ") != n) {
		sr_http_resp_free(&resp);
		return sr_err(err, "GET %s%s: want a VM name of 1 to %d bytes on one line",
		    z->endpoint, NAME_PATH, NAME_MAX_LEN);
	}
	memcpy(z->vmname, resp.body, n + 1);
	sr_http_resp_free(&resp);
	return 0;
}

/* Read this VM's name when it is unknown and its retry is due. A failure
 * is counted and reported (the first one on stderr) but does not stop the
 * watch; the next read is after a backoff. */
static void
learn_vmname(struct azure *z)
{
	char err[SR_ERRMAX];

	if (z->vmname[0] != '\0' || sr_mono() < z->name_retry_at)
		return;
	if (get_vmname(z, err) == 0) {
		z->incarnation = -1;	/* read the document again, with the name */
		return;
	}
	if (stopping(z))
		return;
	z->name_backoff = z->name_backoff == 0 ? z->poll :
	    fmin(z->name_backoff * 2, fmax(NAME_RETRY_MAX, z->poll));
	z->name_retry_at = sr_mono() + z->name_backoff;
	strlcat(err, "; until this VM's name is read, every Preempt or Terminate event "
	    "counts as this VM's", sizeof err);
	sr_watch_error(&z->w, err);
}

static int
poll_once(struct sr_provider *p, struct azure *z, char *err)
{
	struct sr_http_resp resp;
	int r;

	learn_vmname(z);
	if (stopping(z))
		return 0;
	r = request(z, "GET", EVENTS_PATH, NULL, z->answered ? REQ_TIMEOUT :
	    FIRST_TIMEOUT, 1, &resp, err);
	if (r == -1)
		return -1;
	z->answered = 1;
	r = read_document(p, z, resp.body, err);
	sr_http_resp_free(&resp);
	return r;
}

static void *
watch(void *arg)
{
	struct sr_provider *p = arg;
	struct azure *z = p->priv;
	char err[SR_ERRMAX];
	double next, backoff = 0;
	int stop = 0;

	while (!stop) {
		next = sr_mono() + z->poll;
		if (!z->preempt_posted) {
			if (poll_once(p, z, err) == -1 && !stopping(z)) {
				sr_watch_error(&z->w, err);
				backoff = backoff == 0 ? z->poll : fmin(backoff * 2,
				    fmax(BACKOFF_MAX, z->poll));
				next = sr_mono() + backoff;
			} else
				backoff = 0;
		} else
			next = -1;	/* nothing left to watch: wait for stop_vm */
		pthread_mutex_lock(&z->w.lock);
		while (!(stop = sr_watch_stopping(&z->w)) && (next < 0 || sr_mono() < next))
			sr_watch_wait_locked(&z->w, next);
		pthread_mutex_unlock(&z->w.lock);
	}
	return NULL;
}

static int
azure_start_vm(struct sr_provider *p, char *err)
{
	struct azure *z = p->priv;

	z->vmname[0] = '\0';
	z->name_retry_at = z->name_backoff = 0;
	z->answered = 0;
	z->incarnation = -1;
	z->preempt_posted = z->early_posted = 0;
	z->ack_id[0] = '\0';
	z->ack_started = 0;
	return sr_watch_start(&z->w, watch, p, p->attempt, err);
}

static void
azure_stop_vm(struct sr_provider *p)
{
	struct azure *z = p->priv;
	char err[SR_ERRMAX];

	sr_watch_stop(&z->w);
	/* An ack still on its way goes out before the VM is let go. */
	if (ack_join(z, err) == -1)
		fprintf(stderr, "spotrun: warning: %s\n", err);
}

static int
azure_next_vm(const struct sr_provider *p)
{
	return 0;	/* the VM goes away: exit 75 and be requeued */
}

/* The acknowledgment's thread: one POST, bounded by REQ_TIMEOUT and not
 * cancellable, so a stop waits for it instead of losing it. */
static void *
ack_main(void *arg)
{
	struct azure *z = arg;
	struct sr_http_resp resp;
	/* The id is [A-Za-z0-9_.-] (check_event): no JSON escaping needed. */
	char *body = sr_asprintf("{\"StartRequests\":[{\"EventId\":\"%s\"}]}",
	    z->ack_sent);

	z->ack_rc = request(z, "POST", EVENTS_PATH, body, REQ_TIMEOUT, 0, &resp,
	    z->ack_err);
	if (z->ack_rc == 0)
		sr_http_resp_free(&resp);
	else
		sr_err_prefix(z->ack_err, "acknowledge azure event %s", z->ack_sent);
	free(body);
	return NULL;
}

/* Wait for the ack's thread if one runs: 1 the ack was accepted, 0 none
 * ran, -1 it failed (err set). */
static int
ack_join(struct azure *z, char *err)
{
	if (!z->ack_live)
		return 0;
	pthread_join(z->ack_th, NULL);
	z->ack_live = 0;
	if (z->ack_rc == -1) {
		strlcpy(err, z->ack_err, SR_ERRMAX);
		return -1;
	}
	return 1;
}

static int
azure_ack(struct sr_provider *p, const struct sr_notice *n, char *err)
{
	struct azure *z = p->priv;
	sigset_t all, old;
	char id[ID_MAX + 1];
	int r;

	if (n->kind != SR_NOTICE_PREEMPT)
		return 0;	/* an early event goes ahead at its NotBefore */
	pthread_mutex_lock(&z->w.lock);
	strlcpy(id, z->ack_id, sizeof id);
	pthread_mutex_unlock(&z->w.lock);
	if (id[0] == '\0' || z->ack_started)
		return 0;	/* nothing (more) to acknowledge */
	strlcpy(z->ack_sent, id, sizeof z->ack_sent);
	z->ack_rc = 0;
	z->ack_err[0] = '\0';
	/* The thread takes no signals: they stay with the supervisor. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&z->ack_th, NULL, ack_main, z);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		errno = r;
		return sr_errno(err, "acknowledge azure event %s: create a thread", id);
	}
	z->ack_live = z->ack_started = 1;
	return 0;
}

static int
azure_ack_wait(struct sr_provider *p, char *err)
{
	return ack_join(p->priv, err);
}

static const char *
azure_endpoint(const struct sr_provider *p)
{
	const struct azure *z = p->priv;

	return z->endpoint;
}

/* A string member of o into buf; 0, or -1 when absent, not a string, or
 * too long. */
static int
member(json_t *o, const char *key, char *buf, size_t len)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v) || json_string_length(v) >= len ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return -1;
	strlcpy(buf, json_string_value(v), len);
	return 0;
}

static int
azure_facts(struct sr_provider *p, struct sr_facts *f, char *err)
{
	struct azure *z = p->priv;
	struct sr_http_resp resp;
	char loc[64], zone[32], prio[32];
	json_error_t je;
	json_t *root;
	int r = 0;

	strlcpy(f->provider, "azure", sizeof f->provider);
	strlcpy(f->instance_id, "unknown", sizeof f->instance_id);
	strlcpy(f->instance_type, "unknown", sizeof f->instance_type);
	strlcpy(f->zone, "unknown", sizeof f->zone);
	strlcpy(f->lifecycle, "unknown", sizeof f->lifecycle);
	if (request(z, "GET", COMPUTE_PATH, NULL, REQ_TIMEOUT, 0, &resp, err) == -1)
		return sr_err_prefix(err, "read azure facts");
	root = json_loads(resp.body, 0, &je);
	sr_http_resp_free(&resp);
	if (!json_is_object(root)) {
		json_decref(root);
		return sr_err(err, "read azure facts: %s%s: not a JSON object", z->endpoint,
		    COMPUTE_PATH);
	}
	if (member(root, "vmId", f->instance_id, sizeof f->instance_id) == -1)
		r = -1;
	if (member(root, "vmSize", f->instance_type, sizeof f->instance_type) == -1)
		r = -1;
	if (member(root, "location", loc, sizeof loc) == 0) {
		if (member(root, "zone", zone, sizeof zone) == 0 && zone[0] != '\0')
			snprintf(f->zone, sizeof f->zone, "%s-%s", loc, zone);
		else
			strlcpy(f->zone, loc, sizeof f->zone);
	} else
		r = -1;
	if (member(root, "priority", prio, sizeof prio) == 0) {
		if (strcmp(prio, "Spot") == 0 || strcmp(prio, "Low") == 0)
			strlcpy(f->lifecycle, "spot", sizeof f->lifecycle);
		else if (strcmp(prio, "Regular") == 0 || prio[0] == '\0')
			strlcpy(f->lifecycle, "on-demand", sizeof f->lifecycle);
		else
			strlcpy(f->lifecycle, prio, sizeof f->lifecycle);
	}
	json_decref(root);
	if (r == -1)
		return sr_err(err, "read azure facts: %s%s: want vmId, vmSize and location "
		    "as strings", z->endpoint, COMPUTE_PATH);
	return 0;
}

const struct sr_provider_ops sr_provider_azure_ops = {
	.name = "azure",
	.keys = SR_PROVIDER_KEY_ENDPOINT | SR_PROVIDER_KEY_POLL,
	.rented = 1,
	.detect = azure_detect,
	.detect_off = SR_IMDS_OFF_AZURE,
	.init = azure_init,
	.free = azure_free,
	.start_vm = azure_start_vm,
	.stop_vm = azure_stop_vm,
	.next_vm = azure_next_vm,
	.facts = azure_facts,
	.ack = azure_ack,
	.ack_wait = azure_ack_wait,
	.endpoint = azure_endpoint,
};
