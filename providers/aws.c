/*
 * aws.c: the `aws` provider: EC2 spot interruption notices from the instance
 * metadata service, IMDSv2 only (design.md section 4).
 *
 * Each VM gets one watcher thread that, every conf->poll seconds (default
 * 0.2 s: AWS advises 5 s, but a notice should reach the job within 0.3 s
 * at the 99th percentile; a GET to the VM's own metadata service costs
 * about 0.1% of a core each second, doc/benchmarks.md), asks for a session token (PUT /latest/api/token with
 * X-aws-ec2-metadata-token-ttl-seconds) when it has none or it is near its
 * end, then GETs /latest/meta-data/spot/instance-action with
 * X-aws-ec2-metadata-token. 404 means no notice; 401 means the token is no
 * longer valid: it is dropped and the request is retried once with a fresh
 * one. 200 carries {"action":"terminate|stop|hibernate","time":"...Z"}
 * (design.md section 4 has what each means and the sources):
 *  - terminate and stop: one SR_NOTICE_PREEMPT with that deadline per VM,
 *    and instance-action is not polled again. A stopped instance keeps its
 *    EBS volumes and may be started again later, but its memory is lost:
 *    for the job it is the same as terminate (checkpoint, stop, exit 75).
 *  - hibernate: SR_NOTICE_FREEZE. The hibernation begins at once (no two
 *    minutes), freezes every process and saves RAM to the root volume;
 *    the same instance may be resumed when capacity returns, much later,
 *    or never. So the job is asked for a checkpoint and left to be frozen,
 *    not stopped, and polling goes on: after a resume the reply may change
 *    (a later terminate, or hibernate with a new time: one notice each).
 * The rebalance
 * recommendation (/latest/meta-data/events/recommendations/rebalance, 200
 * with {"noticeTime":"..."}) posts one SR_NOTICE_EARLY per VM.
 *
 * A time in the past is a notice all the same, with that (past) deadline:
 * the machine may be going already, and the runner, finding no time left
 * for a checkpoint, stops the job at once rather than let it run on. A bad
 * reply (not JSON, wrong types, an unknown action, a time more than an
 * hour ahead, a body over the cap, 5xx, a timeout) is counted, kept as the
 * last error
 * (sr_aws_errors), written to stderr the first time only, and polling goes
 * on: the next poll may well succeed. Every request is bounded
 * (CONNECT_TIMEOUT, REQ_TIMEOUT, the body cap, no redirects) and stop_vm
 * cancels one in flight, so a hostile endpoint can neither hang nor crash
 * the supervisor.
 *
 * The endpoint is conf->endpoint, else http://[fd00:ec2::254] with
 * conf->ipv6 (the IMDS address on IPv6-only instances), else
 * $SPOTRUN_AWS_ENDPOINT (how the tests point it at tests/mdemu), else
 * http://169.254.169.254. There is no next VM in the run: the run
 * checkpoints and exits 75 for a scheduler to requeue.
 *
 * For "auto" the probe is the token PUT: answered 200 with a token only by
 * IMDSv2 (Azure's service on the same address wants Metadata: true and
 * answers 400 or 404).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "http.h"
#include "imds.h"
#include "provider-int.h"
#include "watch.h"
#include "util.h"

#define DEFAULT_ENDPOINT "http://169.254.169.254"
#define IPV6_ENDPOINT	"http://[fd00:ec2::254]"
#define DEFAULT_POLL	0.2		/* seconds between polls */
#define MIN_POLL	0.05
#define MAX_POLL	3600.0
#define TOKEN_TTL	21600		/* seconds asked for (the maximum) */
#define TOKEN_MARGIN	60.0		/* refresh this long before the end */
#define CONNECT_TIMEOUT	0.5
#define REQ_TIMEOUT	2.0
#define MAX_AHEAD	3600.0		/* a notice time further ahead is bad */

struct aws {
	char *endpoint;			/* without a trailing slash */
	double poll;

	struct sr_watch w;		/* the watcher thread; w.lock also guards the error state */

	/* The watcher's own (only the thread touches these while it runs). */
	char token[256];		/* "" when none */
	double token_end;		/* monotonic seconds */
	int preempt_posted, early_posted;
	double freeze_time;		/* the time of the hibernate posted; 0 none */
};

/* The base URL conf asks for (see the top of this file). */
static const char *
base_url(const struct sr_provider_conf *c)
{
	const char *mine = c->endpoint;

	if ((mine == NULL || *mine == '\0') && c->ipv6)
		mine = IPV6_ENDPOINT;
	return sr_provider_base_url(mine, "SPOTRUN_AWS_ENDPOINT", DEFAULT_ENDPOINT);
}

/* The probe: a short-lived token (60 s), a small reply cap. */
static int
aws_detect(const struct sr_provider_conf *conf, double timeout)
{
	char err[SR_ERRMAX], tok[256], *base = sr_provider_trim_url(base_url(conf));
	const struct sr_imds m = { .base = base, .connect_timeout = timeout,
	    .timeout = timeout, .body_max = 4096 };
	int yes;

	yes = sr_imds_token(&m, 60, 0, tok, sizeof tok, err) == 0;
	explicit_bzero(tok, sizeof tok);
	free(base);
	return yes;
}

static int
aws_init(struct sr_provider *p, char *err)
{
	const struct sr_provider_conf *c = &p->conf;
	const char *ep = base_url(c);
	struct aws *a;

	if (c->poll != 0 && (!(c->poll >= MIN_POLL) || !(c->poll <= MAX_POLL)))
		return sr_err(err, "create provider aws: poll is %g; it must be 0 (the "
		    "default, %g s) or between %g and %g seconds", c->poll,
		    DEFAULT_POLL, MIN_POLL, MAX_POLL);
	if (strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0)
		return sr_err(err, "create provider aws: endpoint \"%s\" is not an "
		    "http:// or https:// URL (set it like http://169.254.169.254)", ep);
	if (sr_http_init(err) == -1) {
		sr_err_prefix(err, "create provider aws");
		return SR_PROVIDER_ESYS;
	}
	a = sr_calloc(1, sizeof *a);
	a->endpoint = sr_provider_trim_url(ep);
	a->poll = c->poll > 0 ? c->poll : DEFAULT_POLL;
	sr_watch_init(&a->w, "aws");
	p->priv = a;
	return 0;
}

static void
aws_free(struct sr_provider *p)
{
	struct aws *a = p->priv;

	sr_watch_destroy(&a->w);
	free(a->endpoint);
	free(a);
	sr_http_cleanup();
}

int
sr_aws_errors(struct sr_provider *p, unsigned long *count, char *last, size_t len)
{
	struct aws *a = p->priv;

	if (strcmp(p->ops->name, "aws") != 0)
		return -1;
	sr_watch_errors(&a->w, count, last, len);
	return 0;
}

static int
stopping(void *arg)
{
	struct aws *a = arg;

	return sr_watch_stopping(&a->w);
}

/* How this provider reaches IMDS; a cancellable request ends early when
 * the watcher is told to stop. */
static struct sr_imds
imds(struct aws *a, int cancellable)
{
	struct sr_imds m = { .base = a->endpoint, .connect_timeout = CONNECT_TIMEOUT,
	    .timeout = REQ_TIMEOUT, .cancel = cancellable ? stopping : NULL,
	    .cancel_arg = cancellable ? a : NULL };

	return m;
}

/* Get a session token into tok (len bytes). 0 or -1 with err set. */
static int
get_token(struct aws *a, char *tok, size_t len, int cancellable, char *err)
{
	struct sr_imds m = imds(a, cancellable);

	return sr_imds_token(&m, TOKEN_TTL, 1, tok, len, err);
}

/* GET path with the watcher's token, getting a token first when there is
 * none or it is near its end; on 401 one retry with a fresh token. */
static int
get(struct aws *a, const char *path, struct sr_http_resp *resp, char *err)
{
	struct sr_imds m = imds(a, 1);
	int tries;

	for (tries = 0; tries < 2; tries++) {
		if (a->token[0] == '\0' || sr_mono() >= a->token_end) {
			if (get_token(a, a->token, sizeof a->token, 1, err) == -1) {
				a->token[0] = '\0';
				return -1;
			}
			a->token_end = sr_mono() + TOKEN_TTL - TOKEN_MARGIN;
		}
		if (sr_imds_get(&m, path, a->token, resp, err) == -1)
			return -1;
		if (resp->status != 401)
			return 0;
		sr_http_resp_free(resp);
		a->token[0] = '\0';	/* expired or revoked: get another */
	}
	return sr_err(err, "GET %s%s: HTTP status 401 with a fresh token",
	    a->endpoint, path);
}

/* One instance-action reply body to a notice; -1 with err set when bad. */
static int
parse_action(const char *body, double now, struct sr_notice *n, char *err)
{
	json_error_t je;
	json_t *root, *action, *time;
	const char *act;
	double when;
	int ret = -1;

	if ((root = json_loads(body, 0, &je)) == NULL)
		return sr_err(err, "instance-action: bad JSON at line %d: %s",
		    je.line, je.text);
	action = json_object_get(root, "action");
	time = json_object_get(root, "time");
	if (!json_is_object(root) || !json_is_string(action) || !json_is_string(time)) {
		sr_err(err, "instance-action: want {\"action\": string, \"time\": "
		    "string}");
		goto out;
	}
	act = json_string_value(action);
	if (strcmp(act, "terminate") != 0 && strcmp(act, "stop") != 0 &&
	    strcmp(act, "hibernate") != 0) {
		sr_err(err, "instance-action: unknown action \"%.32s\" (want terminate, "
		    "stop or hibernate)", act);
		goto out;
	}
	if (sr_imds_parse_time(json_string_value(time), &when) == -1) {
		sr_err(err, "instance-action: time \"%.40s\" is not ISO 8601 UTC "
		    "(like 2017-09-18T08:22:00Z)", json_string_value(time));
		goto out;
	}
	if (when > now + MAX_AHEAD) {
		sr_err(err, "instance-action: time %s is %.0f s ahead; a notice time "
		    "lies at most %.0f s ahead", json_string_value(time), when - now,
		    MAX_AHEAD);
		goto out;
	}
	memset(n, 0, sizeof *n);
	n->kind = strcmp(act, "hibernate") == 0 ? SR_NOTICE_FREEZE : SR_NOTICE_PREEMPT;
	n->seen = now;
	n->deadline = when;
	snprintf(n->reason, sizeof n->reason, "aws spot interruption (%s at %s%s)%s",
	    act, json_string_value(time), when < now ? ", already past" : "",
	    n->kind == SR_NOTICE_FREEZE ? ": the job is frozen with the instance, "
	    "not stopped" : "");
	ret = 0;
out:
	json_decref(root);
	return ret;
}

static int
parse_rebalance(const char *body, double now, struct sr_notice *n, char *err)
{
	json_error_t je;
	json_t *root, *t;
	double when;
	int ret = -1;

	if ((root = json_loads(body, 0, &je)) == NULL)
		return sr_err(err, "rebalance: bad JSON at line %d: %s", je.line, je.text);
	t = json_object_get(root, "noticeTime");
	if (!json_is_string(t) || sr_imds_parse_time(json_string_value(t), &when) == -1) {
		sr_err(err, "rebalance: want {\"noticeTime\": \"...Z\"}");
		goto out;
	}
	memset(n, 0, sizeof *n);
	n->kind = SR_NOTICE_EARLY;
	n->seen = now;
	n->deadline = 0;	/* no deadline: the machine may live on */
	snprintf(n->reason, sizeof n->reason, "aws rebalance recommendation (%s)",
	    json_string_value(t));
	ret = 0;
out:
	json_decref(root);
	return ret;
}

/* Poll path once; 1 with *n set when it holds a notice, 0 none (404), -1
 * with err set. */
static int
poll_one(struct aws *a, const char *path,
    int (*parse)(const char *, double, struct sr_notice *, char *),
    struct sr_notice *n, char *err)
{
	struct sr_http_resp resp;
	int r;

	if (get(a, path, &resp, err) == -1)
		return -1;
	if (resp.status == 404)
		r = 0;
	else if (resp.status == 200)
		r = parse(resp.body, sr_now(), n, err) == -1 ? -1 : 1;
	else
		r = sr_err(err, "GET %s%s: HTTP status %ld", a->endpoint, path,
		    resp.status);
	sr_http_resp_free(&resp);
	return r;
}

static void
poll_once(struct sr_provider *p, struct aws *a)
{
	char err[SR_ERRMAX];
	struct sr_notice n;
	int r;

	if (!a->preempt_posted) {
		r = poll_one(a, "/latest/meta-data/spot/instance-action", parse_action,
		    &n, err);
		if (r == 1 && n.kind == SR_NOTICE_FREEZE) {
			/* The same hibernation is announced until it happens
			 * (and maybe after a resume): one notice for it. */
			if (n.deadline != a->freeze_time) {
				sr_provider_post(p, &n);
				a->freeze_time = n.deadline;
				return;
			}
		} else if (r == 1) {
			sr_provider_post(p, &n);
			a->preempt_posted = 1;
			return;
		}
		if (r == -1) {
			if (!stopping(a))
				sr_watch_error(&a->w, err);
			return;
		}
	}
	if (!a->early_posted && !stopping(a)) {
		r = poll_one(a, "/latest/meta-data/events/recommendations/rebalance",
		    parse_rebalance, &n, err);
		if (r == 1) {
			sr_provider_post(p, &n);
			a->early_posted = 1;
		} else if (r == -1 && !stopping(a))
			sr_watch_error(&a->w, err);
	}
}

static void *
watch(void *arg)
{
	struct sr_provider *p = arg;
	struct aws *a = p->priv;
	double next;
	int stop = 0;

	while (!stop) {
		next = sr_mono() + a->poll;
		if (!a->preempt_posted || !a->early_posted)
			poll_once(p, a);
		pthread_mutex_lock(&a->w.lock);
		while (!(stop = sr_watch_stopping(&a->w)) && sr_mono() < next)
			sr_watch_wait_locked(&a->w, next);
		pthread_mutex_unlock(&a->w.lock);
	}
	return NULL;
}

static int
aws_start_vm(struct sr_provider *p, char *err)
{
	struct aws *a = p->priv;

	a->preempt_posted = a->early_posted = 0;
	a->freeze_time = 0;
	return sr_watch_start(&a->w, watch, p, p->attempt, err);
}

static void
aws_stop_vm(struct sr_provider *p)
{
	struct aws *a = p->priv;

	sr_watch_stop(&a->w);
}

static int
aws_next_vm(const struct sr_provider *p)
{
	return 0;	/* the instance goes away: exit 75 and be requeued */
}

/* One fact into buf; on failure buf gets "unknown" and err the reason. */
static int
fact(struct aws *a, const char *tok, const char *path, char *buf, size_t len,
    char *err)
{
	struct sr_imds m = imds(a, 0);
	struct sr_http_resp resp;
	size_t n;

	strlcpy(buf, "unknown", len);
	if (sr_imds_get(&m, path, tok, &resp, err) == -1)
		return -1;
	if (resp.status != 200) {
		sr_err(err, "GET %s%s: HTTP status %ld", a->endpoint, path, resp.status);
		sr_http_resp_free(&resp);
		return -1;
	}
	n = strcspn(resp.body, "\r\n");
	if (n == 0 || n >= len) {
		sr_err(err, "GET %s%s: want one line of 1 to %zu bytes", a->endpoint,
		    path, len - 1);
		sr_http_resp_free(&resp);
		return -1;
	}
	resp.body[n] = '\0';
	strlcpy(buf, resp.body, len);
	sr_http_resp_free(&resp);
	return 0;
}

static int
aws_facts(struct sr_provider *p, struct sr_facts *f, char *err)
{
	struct aws *a = p->priv;
	char tok[256];
	int r = 0;

	strlcpy(f->provider, "aws", sizeof f->provider);
	strlcpy(f->instance_id, "unknown", sizeof f->instance_id);
	strlcpy(f->instance_type, "unknown", sizeof f->instance_type);
	strlcpy(f->zone, "unknown", sizeof f->zone);
	strlcpy(f->lifecycle, "unknown", sizeof f->lifecycle);
	/* Its own token: the watcher's belongs to the watcher thread. */
	if (get_token(a, tok, sizeof tok, 0, err) == -1)
		return sr_err_prefix(err, "read aws facts");
	if (fact(a, tok, "/latest/meta-data/instance-id", f->instance_id,
	    sizeof f->instance_id, err) == -1 ||
	    fact(a, tok, "/latest/meta-data/instance-type", f->instance_type,
	    sizeof f->instance_type, err) == -1 ||
	    fact(a, tok, "/latest/meta-data/placement/availability-zone", f->zone,
	    sizeof f->zone, err) == -1 ||
	    fact(a, tok, "/latest/meta-data/instance-life-cycle", f->lifecycle,
	    sizeof f->lifecycle, err) == -1)
		r = sr_err_prefix(err, "read aws facts");
	return r;
}

static const char *
aws_endpoint(const struct sr_provider *p)
{
	const struct aws *a = p->priv;

	return a->endpoint;
}

const struct sr_provider_ops sr_provider_aws_ops = {
	.name = "aws",
	.keys = SR_PROVIDER_KEY_ENDPOINT | SR_PROVIDER_KEY_POLL | SR_PROVIDER_KEY_IPV6,
	.rented = 1,
	.detect = aws_detect,
	.detect_off = SR_IMDS_OFF_AWS,
	.endpoint = aws_endpoint,
	.init = aws_init,
	.free = aws_free,
	.start_vm = aws_start_vm,
	.stop_vm = aws_stop_vm,
	.next_vm = aws_next_vm,
	.facts = aws_facts,
};
