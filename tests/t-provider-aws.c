/*
 * t-provider-aws.c: the `aws` provider (providers/aws.c) and its HTTP client
 * (common/http.c) against tests/mdemu, the metadata emulator, on
 * loopback: the notice and its deadline (also one already past), the
 * actions (stop as terminate; hibernate a freeze notice, once per time,
 * the watch going on to a later terminate), the rebalance early warning, the
 * IMDSv2 token headers (from the emulator's log), token expiry and refresh,
 * 503 bursts, malformed, huge, redirecting and stalling replies, facts, a
 * prompt stop, configuration errors, and that "auto" still settles on
 * local at once. Timings assert with >= 0.5 s of slack.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http.h"
#include "provider-int.h"
#include "provider.h"
#include "util.h"
#include "tap.h"
#include "mdemu-util.h"

static char tmpdir[] = "/tmp/t-provider-aws.XXXXXX";

static struct sr_provider *
new_aws(const char *endpoint, double poll)
{
	struct sr_provider_conf c;
	char err[SR_ERRMAX];
	struct sr_provider *p;

	memset(&c, 0, sizeof c);
	c.name = "aws";
	c.endpoint = endpoint;
	c.poll = poll;
	c.max_preemptions = -1;
	if (sr_provider_new(&c, &p, err) == -1)
		sr_fatal("sr_provider_new: %s", err);
	return p;
}

/* Start the emulator with args and an aws provider polling it every 0.1 s,
 * its VM started. */
static struct sr_provider *
watch_emu(struct emu *e, const char *const *args)
{
	struct sr_provider *p;

	/* t0 from the emulator's own start, which the times it announces
	 * count from (under ASan at load 18 it started 2 s after the fork) */
	emu_run(e, tmpdir, args);
	p = new_aws(e->url, 0.1);
	start(p);
	return p;
}

static void
test_notice(void)
{
	const char *args[] = { "-T", "1.5", "-R", "0.5", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	struct sr_facts f;
	char err[SR_ERRMAX], line[256];
	unsigned long errors = 99;
	struct emu e;

	emu_run(&e, tmpdir, args);	/* t0: its own start */
	setenv("SPOTRUN_AWS_ENDPOINT", e.url, 1);
	p = new_aws(NULL, 0);		/* the endpoint from the environment */
	no_cloud();
	is_str(sr_provider_name(p), "aws", "the provider is aws");
	is_int(sr_provider_next_vm(p), 0, "aws: no next VM (the run exits 75)");
	start(p);
	ok(wait_notice(p, 3, &n) && n.kind == SR_NOTICE_EARLY,
	    "the rebalance recommendation is an early notice");
	ok(n.seen - (e.t0 + 0.5) > -0.3 && n.seen - (e.t0 + 0.5) < 1.0,
	    "within 1 s of the rebalance (%.2f s after it)", n.seen - (e.t0 + 0.5));
	ok(strncmp(n.reason, "aws rebalance recommendation (", 30) == 0,
	    "rebalance reason: %s", n.reason);
	ok(wait_notice(p, 3, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "the instance-action is a preemption notice");
	ok(n.seen - (e.t0 + 1.5) > -0.3 && n.seen - (e.t0 + 1.5) < 1.0,
	    "within 1 s of notice time T (%.2f s after it)", n.seen - (e.t0 + 1.5));
	ok(n.deadline - (e.t0 + 1.5 + 120) > -1 && n.deadline - (e.t0 + 1.5 + 120) < 1,
	    "the deadline is T + 120 s (off by %.2f s)", n.deadline - (e.t0 + 121.5));
	ok(strncmp(n.reason, "aws spot interruption (terminate at ", 36) == 0,
	    "notice reason: %s", n.reason);
	ok(!wait_notice(p, 1.2, &n), "one preemption notice per VM");
	ok(sr_provider_facts(p, &f, err) == 0, "facts are read");
	is_str(f.provider, "aws", "facts: provider");
	is_str(f.instance_id, "i-0123456789abcdef0", "facts: instance-id");
	is_str(f.instance_type, "p5.48xlarge", "facts: instance-type");
	is_str(f.zone, "us-east-1a", "facts: availability zone");
	is_str(f.lifecycle, "spot", "facts: instance-life-cycle");
	ok(timed_stop(p) < 0.5, "stop_vm returns at once");
	ok(sr_aws_errors(p, &errors, NULL, 0) == 0 && errors == 0, "no poll failed");
	is_int(log_count(&e, "PUT /latest/api/token ttl=21600 token=none -> 200"), 2,
	    "one token PUT with TTL 21600 for the watcher, one for the facts");
	ok(log_count(&e, "GET /latest/meta-data/spot/instance-action ttl=- token=good -> 404") >= 2,
	    "instance-action polled with the token until the notice");
	is_int(log_count(&e, "GET /latest/meta-data/spot/instance-action ttl=- token=good -> 200"), 1,
	    "instance-action not polled again after the notice");
	is_int(log_count(&e, "GET /latest/meta-data/events/recommendations/rebalance ttl=- token=good -> 200"), 1,
	    "rebalance not polled again after its notice");
	snprintf(line, sizeof line, "token=none -> 401");
	is_int(log_grep(&e, line), 0, "every GET carried the token");
	unwatch(p, &e);
}

static void
test_token_expiry(void)
{
	const char *args[] = { "-t", "1", "-T", "2.5", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	unsigned long errors = 99;
	struct emu e;

	emu_start(&e, tmpdir, args);
	p = new_aws(e.url, 0.2);
	start(p);
	ok(wait_notice(p, 4.5, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "token expiry: the notice still arrives");
	sr_provider_stop_vm(p, NULL);
	ok(log_count(&e, "PUT /latest/api/token ttl=21600 token=none -> 200") >= 2,
	    "token expiry: a new token was asked for");
	ok(log_grep(&e, "token=expired -> 401") >= 1,
	    "token expiry: the emulator refused the expired token");
	ok(sr_aws_errors(p, &errors, NULL, 0) == 0 && errors == 0,
	    "token expiry: the refresh is no error");
	unwatch(p, &e);
}

static void
test_503(void)
{
	const char *args[] = { "-u", "0.2:1.4", "-T", "0.8", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	unsigned long errors = 0;
	char last[SR_ERRMAX], want[SR_ERRMAX];
	struct emu e;

	p = watch_emu(&e, args);
	ok(wait_notice(p, 4, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "503 burst: the notice arrives after it");
	ok(n.seen - (e.t0 + 1.4) > -0.3 && n.seen - (e.t0 + 1.4) < 1.0,
	    "503 burst: within 1 s of its end (%.2f s after)", n.seen - (e.t0 + 1.4));
	sr_provider_stop_vm(p, NULL);
	sr_aws_errors(p, &errors, last, sizeof last);
	ok(errors >= 3, "503 burst: polling went on through it (%lu failures)", errors);
	snprintf(want, sizeof want, "GET %s/latest/meta-data/spot/instance-action: "
	    "HTTP status 503", e.url);
	ok(strcmp(last, want) == 0 || strstr(last, "token: HTTP status 503") != NULL,
	    "503 burst: the last error names the status: %s", last);
	unwatch(p, &e);
}

/* instance-action serves a hostile reply from the start: no notice, no
 * crash, polling goes on, and the error says why. */
static void
hostile(const char *what, const char *const *args, const char *want_err)
{
	struct sr_provider *p;
	struct sr_notice n;
	unsigned long errors = 0;
	char last[SR_ERRMAX], want[SR_ERRMAX];
	struct emu e;

	p = watch_emu(&e, args);
	ok(!wait_notice(p, 0.8, &n), "%s: no notice", what);
	ok(timed_stop(p) < 0.5, "%s: stop_vm returns at once", what);
	sr_aws_errors(p, &errors, last, sizeof last);
	ok(errors >= 2, "%s: polling went on (%lu failures)", what, errors);
	snprintf(want, sizeof want, want_err, e.url);
	is_str(last, want, "%s: the error", what);
	unwatch(p, &e);
}

static void
test_hostile(void)
{
	const char *types[] = { "-T", "0", "-b", "{\"action\":\"terminate\",\"time\":12}", NULL };
	const char *json[] = { "-T", "0", "-b", "{\"action\":", NULL };
	const char *act[] = { "-T", "0", "-b",
	    "{\"action\":\"explode\",\"time\":\"2030-01-01T00:00:00Z\"}", NULL };
	const char *ahead[] = { "-T", "0", "-b",
	    "{\"action\":\"stop\",\"time\":\"2099-01-01T00:00:00Z\"}", NULL };
	const char *iso[] = { "-T", "0", "-b",
	    "{\"action\":\"stop\",\"time\":\"2030-01-01 00:00:00\"}", NULL };
	const char *huge[] = { "-T", "0", "-H", NULL };
	const char *redir[] = { "-T", "0", "-r", NULL };
	struct emu e;

	hostile("wrong types", types,
	    "instance-action: want {\"action\": string, \"time\": string}");
	hostile("bad JSON", json,
	    "instance-action: bad JSON at line 1: unexpected token near end of file");
	hostile("unknown action", act,
	    "instance-action: unknown action \"explode\" (want terminate, stop or hibernate)");
	hostile("not ISO 8601", iso,
	    "instance-action: time \"2030-01-01 00:00:00\" is not ISO 8601 UTC "
	    "(like 2017-09-18T08:22:00Z)");
	hostile("huge body", huge,
	    "GET %s/latest/meta-data/spot/instance-action: the reply is larger than "
	    "65536 bytes");
	hostile("redirect", redir,
	    "GET %s/latest/meta-data/spot/instance-action: HTTP status 302");
	/* Too far ahead: its message holds "now", so check its shape. */
	{
		struct sr_provider *p;
		struct sr_notice n;
		unsigned long errors = 0;
		char last[SR_ERRMAX];
		const char *head = "instance-action: time 2099-01-01T00:00:00Z is ";

		p = watch_emu(&e, ahead);
		ok(!wait_notice(p, 0.6, &n), "time over an hour ahead: no notice");
		sr_provider_stop_vm(p, NULL);
		sr_aws_errors(p, &errors, last, sizeof last);
		ok(errors >= 2 && strncmp(last, head, strlen(head)) == 0 && strstr(last,
		    " s ahead; a notice time lies at most 3600 s ahead") != NULL,
		    "time over an hour ahead: the error: %s", last);
		unwatch(p, &e);
	}
}

/* A time already past is a notice all the same, with that deadline: the
 * machine may be going already (the runner finds no time for a checkpoint
 * and stops the job), never a warning the job runs on after. */
static void
test_past(void)
{
	const char *args[] = { "-T", "0.3", "-b",
	    "{\"action\":\"terminate\",\"time\":\"2001-09-09T01:46:40Z\"}", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	unsigned long errors = 99;
	struct emu e;

	p = watch_emu(&e, args);
	ok(wait_notice(p, 2, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "time in the past: a preemption notice");
	ok(n.deadline == 1000000000, "time in the past: the deadline is that time (%.0f)",
	    n.deadline);
	is_str(n.reason, "aws spot interruption (terminate at 2001-09-09T01:46:40Z, "
	    "already past)", "time in the past: the reason says so");
	ok(!wait_notice(p, 0.5, &n), "time in the past: one notice");
	sr_provider_stop_vm(p, NULL);
	ok(sr_aws_errors(p, &errors, NULL, 0) == 0 && errors == 0,
	    "time in the past: not an error");
	unwatch(p, &e);
}

/* stop is terminate for the job (memory is lost); hibernate freezes it
 * in place: SR_NOTICE_FREEZE, once per announced time, and the watch goes
 * on (a resumed instance can be interrupted again). */
static void
test_actions(void)
{
	const char *stop[] = { "-T", "0.3", "-A", "stop", NULL };
	const char *hib[] = { "-T", "0.3", "-A", "hibernate", "-W", "2", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	char want[160];
	struct emu e;
	int polls;

	p = watch_emu(&e, stop);
	ok(wait_notice(p, 2, &n) && n.kind == SR_NOTICE_PREEMPT, "stop: a preemption notice");
	ok(n.deadline - (e.t0 + 120.3) > -1 && n.deadline - (e.t0 + 120.3) < 1,
	    "stop: the deadline is the notice's time (off by %.2f s)", n.deadline - (e.t0 + 120.3));
	ok(strncmp(n.reason, "aws spot interruption (stop at ", 31) == 0 &&
	    strlen(n.reason) == 52 && strcmp(n.reason + 50, "Z)") == 0,
	    "stop: the reason: %s", n.reason);
	unwatch(p, &e);

	p = watch_emu(&e, hib);
	ok(wait_notice(p, 2, &n) && n.kind == SR_NOTICE_FREEZE, "hibernate: a freeze notice");
	ok(n.deadline - (e.t0 + 120.3) > -1 && n.deadline - (e.t0 + 120.3) < 1,
	    "hibernate: its deadline is the notice's time");
	ok(strncmp(n.reason, "aws spot interruption (hibernate at ", 36) == 0 &&
	    strstr(n.reason, "Z): the job is frozen with the instance, not stopped") != NULL,
	    "hibernate: the reason: %s", n.reason);
	ok(!wait_notice(p, 1.2, &n), "hibernate: the same time again: no second notice");
	polls = log_count(&e, "GET /latest/meta-data/spot/instance-action ttl=- token=good -> 200");
	ok(polls >= 5, "hibernate: instance-action is still polled (%d replies)", polls);
	ok(wait_notice(p, 2, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "hibernate, then terminate: a preemption notice");
	snprintf(want, sizeof want, "aws spot interruption (terminate at ");
	ok(strncmp(n.reason, want, strlen(want)) == 0 &&
	    n.deadline - (e.t0 + 122) > -1 && n.deadline - (e.t0 + 122) < 1,
	    "hibernate, then terminate: its reason and time: %s", n.reason);
	unwatch(p, &e);
}

static void
test_stall(void)
{
	const char *args[] = { "-T", "0", "-S", NULL };
	struct sr_provider *p;
	struct emu e;
	double t;

	p = watch_emu(&e, args);
	sr_sleep(0.5);		/* a request hangs in the emulator */
	t = timed_stop(p);
	ok(t < 1.5, "a stalled request: stop_vm cancels it (%.2f s)", t);
	ok(log_grep(&e, "GET /latest/meta-data/spot/instance-action ttl=- token=good -> 0") == 1,
	    "a stalled request: it was in flight");
	unwatch(p, &e);
}

/* The emulator's own IMDSv2 rules, through the HTTP client. */
static void
test_emulator(void)
{
	const char *bad_ttl[] = { "X-aws-ec2-metadata-token-ttl-seconds: 0", NULL };
	const char *big_ttl[] = { "X-aws-ec2-metadata-token-ttl-seconds: 21601", NULL };
	const char *bad_tok[] = { "X-aws-ec2-metadata-token: forged", NULL };
	struct sr_http_req req;
	struct sr_http_resp resp;
	char url[128], err[SR_ERRMAX];
	struct emu e;

	emu_start(&e, tmpdir, NULL);
	memset(&req, 0, sizeof req);
	req.connect_timeout = 1;
	req.timeout = 2;
	snprintf(url, sizeof url, "%s/latest/api/token", e.url);
	req.url = url;
	req.method = "PUT";
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 400,
	    "emulator: a token PUT without a TTL gets 400");
	sr_http_resp_free(&resp);
	req.headers = bad_ttl;
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 400,
	    "emulator: TTL 0 gets 400");
	sr_http_resp_free(&resp);
	req.headers = big_ttl;
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 400,
	    "emulator: TTL 21601 gets 400");
	sr_http_resp_free(&resp);
	snprintf(url, sizeof url, "%s/latest/meta-data/instance-id", e.url);
	req.method = "GET";
	req.headers = NULL;
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 401,
	    "emulator: a GET without a token gets 401");
	sr_http_resp_free(&resp);
	req.headers = bad_tok;
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 401,
	    "emulator: a GET with a forged token gets 401");
	sr_http_resp_free(&resp);
	emu_stop(&e);
}

static void
test_config(void)
{
	struct sr_provider_conf c;
	struct sr_provider *p;
	struct sr_facts f;
	char err[SR_ERRMAX];
	unsigned long errors = 0;
	double t;

	memset(&c, 0, sizeof c);
	c.name = "aws";
	c.endpoint = "ftp://169.254.169.254";
	ok(sr_provider_new(&c, &p, err) == -1, "a non-HTTP endpoint is refused");
	is_str(err, "create provider aws: endpoint \"ftp://169.254.169.254\" is not an "
	    "http:// or https:// URL (set it like http://169.254.169.254)",
	    "the endpoint error");
	c.endpoint = NULL;
	c.poll = 0.001;
	ok(sr_provider_new(&c, &p, err) == -1, "a poll of 1 ms is refused");
	is_str(err, "create provider aws: poll is 0.001; it must be 0 (the default, "
	    "0.2 s) or between 0.05 and 3600 seconds", "the poll error");

	/* Nothing listens on port 1: every poll fails fast, nothing hangs. */
	p = new_aws("http://127.0.0.1:1/", 0.1);
	ok(sr_provider_facts(p, &f, err) == -1, "no metadata service: facts fail");
	ok(strncmp(err, "read aws facts: PUT http://127.0.0.1:1/latest/api/token: ", 57) == 0,
	    "no metadata service: the facts error: %s", err);
	is_str(f.instance_id, "unknown", "no metadata service: instance-id unknown");
	start(p);
	sr_sleep(0.4);
	ok(timed_stop(p) < 0.5, "no metadata service: stop_vm returns at once");
	sr_aws_errors(p, &errors, NULL, 0);
	ok(errors >= 2, "no metadata service: polling went on (%lu failures)", errors);
	sr_provider_free(p);

	memset(&c, 0, sizeof c);
	c.name = "auto";
	c.window = 30;
	c.grace = 30;
	c.max_preemptions = -1;
	c.trace_scale = 1;
	t = sr_mono();
	ok(sr_provider_new(&c, &p, err) == 0, "auto: created");
	t = sr_mono() - t;
	is_str(sr_provider_name(p), "local", "auto: local when no metadata service answers");
	ok(t < 0.5, "auto: decided in %.3f s", t);
	sr_provider_free(p);
}

int
main(void)
{
	char err[SR_ERRMAX];

	if (mkdtemp(tmpdir) == NULL)
		sr_fatal("mkdtemp: %s", strerror(errno));
	no_cloud();
	test_emulator();
	test_notice();
	test_token_expiry();
	test_503();
	test_hostile();
	test_past();
	test_actions();
	test_stall();
	test_config();
	if (sr_rmtree(tmpdir, err) == -1)
		tap_diag("%s", err);
	return tap_done();
}
