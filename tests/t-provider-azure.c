/*
 * t-provider-azure.c: the `azure` provider (providers/azure.c) against
 * tests/mdemu, the metadata emulator, on loopback: the emulator's Azure
 * rules (400 without Metadata: true, DocumentIncarnation), the notice's
 * latency from the event (polling every 0.2 s), its deadline from
 * NotBefore (also one in the past) and the fallback, this VM's name that
 * cannot be read (every Preempt or Terminate counts, unacknowledged; the
 * name read again after a backoff), the ack's exact POST body (from the
 * emulator's log) sent from a thread of its own (it neither blocks nor is
 * lost by a stop), a slow first call that neither delays start_vm nor loses
 * the notice, stop_vm in the middle of it, another VM's events, early
 * events, malformed, mistyped and huge documents, facts, and configuration
 * errors. Timings assert with >= 0.2 s of slack.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
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

#define EVENTS		"/metadata/scheduledevents?api-version=2020-07-01"
#define EVENT_ID	"602d9444-d2cd-49c7-8624-8643e7171297"
#define ACK_LINE	"POST " EVENTS " metadata=true -> 200 ctype=application/json " \
			"body={\"StartRequests\":[{\"EventId\":\"" EVENT_ID "\"}]} wall="

static char tmpdir[] = "/tmp/t-provider-azure.XXXXXX";

static struct sr_provider *
new_azure(const char *endpoint, double poll)
{
	struct sr_provider_conf c;
	char err[SR_ERRMAX];
	struct sr_provider *p;

	memset(&c, 0, sizeof c);
	c.name = "azure";
	c.endpoint = endpoint;
	c.poll = poll;
	c.max_preemptions = -1;
	if (sr_provider_new(&c, &p, err) == -1)
		sr_fatal("sr_provider_new: %s", err);
	return p;
}

/* Start the emulator with args and an azure provider polling it every poll
 * seconds (0: the default), its VM started. */
static struct sr_provider *
watch_emu(struct emu *e, const char *const *args, double poll)
{
	struct sr_provider *p;

	emu_run(e, tmpdir, args);
	p = new_azure(e->url, poll);
	start(p);
	return p;
}

static void
test_emulator(void)
{
	const char *meta[] = { "Metadata: true", NULL };
	struct sr_http_req req;
	struct sr_http_resp resp;
	char url[256], err[SR_ERRMAX];
	struct emu e;

	emu_run(&e, tmpdir, NULL);
	memset(&req, 0, sizeof req);
	req.method = "GET";
	req.connect_timeout = 1;
	req.timeout = 5;
	snprintf(url, sizeof url, "%s" EVENTS, e.url);
	req.url = url;
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 400,
	    "emulator: a request without Metadata: true gets 400");
	is_str(resp.body, "{\"error\":\"Bad request. Required metadata header not "
	    "specified\"}", "emulator: the 400 body");
	sr_http_resp_free(&resp);
	req.headers = meta;
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 200,
	    "emulator: with the header: 200");
	is_str(resp.body, "{\"DocumentIncarnation\":1,\"Events\":[]}",
	    "emulator: no events, incarnation 1");
	sr_http_resp_free(&resp);
	snprintf(url, sizeof url, "%s/metadata/scheduledevents", e.url);
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 400,
	    "emulator: no api-version: 400");
	sr_http_resp_free(&resp);
	sr_sleep(0.1);
	is_int(log_count(&e, "GET " EVENTS " metadata=- -> 400"), 1,
	    "emulator: the 400 is logged");
	is_int(log_count(&e, "GET " EVENTS " metadata=true -> 200 incarnation=1"), 1,
	    "emulator: the 200 is logged with its incarnation");
	emu_stop(&e);
}

static void
test_notice(void)
{
	const char *args[] = { "-Z", "1", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	struct sr_facts f;
	char err[SR_ERRMAX];
	unsigned long errors = 99;
	struct emu e;
	double lat;

	emu_run(&e, tmpdir, args);
	setenv("SPOTRUN_AZURE_ENDPOINT", e.url, 1);
	p = new_azure(NULL, 0);		/* the endpoint from the environment */
	no_cloud();
	is_str(sr_provider_name(p), "azure", "the provider is azure");
	is_int(sr_provider_next_vm(p), 0, "azure: no next VM (the run exits 75)");
	start(p);
	ok(wait_notice(p, 3, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "a Preempt event for this VM is a preemption notice");
	lat = n.seen - (e.t0 + 1);
	tap_diag("notice latency from the event: %.1f ms", lat * 1000);
	ok(lat > -0.01 && lat < 1.0, "the notice within 1 s of the event (%.3f s)", lat);
	ok(fabs(n.deadline - (e.t0 + 31)) <= 0.51,
	    "the deadline is NotBefore (event + 30 s, to the second): %.3f", n.deadline - e.t0);
	is_str(n.reason, "azure Preempt event " EVENT_ID, "notice reason");
	ok(!wait_notice(p, 1.5, &n), "the same incarnation again: no second notice");
	is_int(log_count(&e, ACK_LINE), 0, "no ack before the checkpoint");
	is_int(sr_provider_ack_wait(p, err), 0, "ack_wait before any ack: nothing pending");
	ok(sr_provider_ack(p, &n, err) == 0, "the ack starts");
	is_int(sr_provider_ack_wait(p, err), 1, "the ack was accepted");
	is_int(log_grep(&e, ACK_LINE), 1, "the ack: one POST with the exact StartRequests body");
	is_int(sr_provider_ack_wait(p, err), 0, "ack_wait again: nothing pending");
	ok(sr_provider_ack(p, &n, err) == 0 && sr_provider_ack_wait(p, err) == 0,
	    "a second ack of the same VM: nothing to do");
	is_int(log_grep(&e, ACK_LINE), 1, "still one POST");
	ok(sr_provider_facts(p, &f, err) == 0, "facts are read");
	is_str(f.provider, "azure", "facts: provider");
	is_str(f.instance_id, "02aab8a4-74ef-476e-8182-f6d2ba4166a6", "facts: vmId");
	is_str(f.instance_type, "Standard_ND96isr_H100_v5", "facts: vmSize");
	is_str(f.zone, "eastus-1", "facts: location-zone");
	is_str(f.lifecycle, "spot", "facts: priority Spot");
	ok(timed_stop(p) < 0.5, "stop_vm returns at once");
	ok(sr_azure_errors(p, &errors, NULL, 0) == 0 && errors == 0, "no request failed");
	is_int(log_count(&e, "GET /metadata/instance/compute/name?api-version=2021-02-01"
	    "&format=text metadata=true -> 200"), 1, "the VM name was read once");
	ok(log_count(&e, "GET " EVENTS " metadata=true -> 200 incarnation=2") >= 1,
	    "the event's incarnation was read");
	is_int(log_grep(&e, "metadata=- "), 0, "every request carried Metadata: true");
	unwatch(p, &e);
}

/* The service's first call takes 3 s: start_vm does not wait for it, and
 * the event published meanwhile arrives with its reply. */
/* The ack goes out on a thread of its own: sr_provider_ack returns at once
 * even when the service never answers (the emulator stopped: the kernel
 * still takes the connection), ack_wait is bounded by the POST's 2 s
 * timeout; and an ack started right before stop_vm still reaches the
 * service (stop_vm waits for it rather than cancel it). */
static void
test_ack_async(void)
{
	const char *args[] = { "-Z", "0.2", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	char err[SR_ERRMAX] = "", want[200];
	struct emu e;
	double t;

	p = watch_emu(&e, args, 0.1);
	ok(wait_notice(p, 3, &n) && n.kind == SR_NOTICE_PREEMPT, "async ack: the notice");
	kill(e.pid, SIGSTOP);
	t = sr_mono();
	ok(sr_provider_ack(p, &n, err) == 0, "async ack: started");
	t = sr_mono() - t;
	ok(t < 0.1, "async ack: sr_provider_ack returns at once with the service silent "
	    "(%.3f s)", t);
	t = sr_mono();
	is_int(sr_provider_ack_wait(p, err), -1, "async ack: a silent service: the ack fails");
	t = sr_mono() - t;
	ok(t > 1.5 && t < 3.0, "async ack: ack_wait is bounded by the 2 s timeout (%.2f s)", t);
	snprintf(want, sizeof want, "acknowledge azure event " EVENT_ID ": POST %s" EVENTS ": ",
	    e.url);
	ok(strncmp(err, want, strlen(want)) == 0, "async ack: the error: %s", err);
	kill(e.pid, SIGCONT);
	unwatch(p, &e);

	p = watch_emu(&e, args, 0.1);
	ok(wait_notice(p, 3, &n) && n.kind == SR_NOTICE_PREEMPT, "ack then stop: the notice");
	ok(sr_provider_ack(p, &n, err) == 0, "ack then stop: started");
	sr_provider_stop_vm(p, NULL);		/* at once: the run is ending */
	is_int(log_grep(&e, ACK_LINE), 1, "ack then stop: the POST was not lost");
	is_int(sr_provider_ack_wait(p, err), 0, "ack then stop: stop_vm waited for it");
	unwatch(p, &e);
}

static void
test_slow_first(void)
{
	const char *args[] = { "-z", "3", "-Z", "0.5", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	unsigned long errors = 99;
	struct emu e;
	double t;

	emu_run(&e, tmpdir, args);
	p = new_azure(e.url, 0);
	t = sr_mono();
	start(p);
	t = sr_mono() - t;
	ok(t < 0.2, "slow first call: start_vm returns at once (%.3f s)", t);
	ok(wait_notice(p, 6, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "slow first call: the notice arrives");
	ok(n.seen - e.t0 > 2.8 && n.seen - e.t0 < 4.0,
	    "slow first call: with the first reply (%.2f s after start)", n.seen - e.t0);
	sr_provider_stop_vm(p, NULL);
	ok(sr_azure_errors(p, &errors, NULL, 0) == 0 && errors == 0,
	    "slow first call: not an error");
	is_int(log_count_wait(&e, "GET " EVENTS " metadata=true -> 200 incarnation=2", 1, 2), 1,
	    "slow first call: one (slow) request, answered");
	unwatch(p, &e);
}

static void
test_stop(void)
{
	const char *args[] = { "-z", "30", NULL };
	struct sr_provider *p;
	struct emu e;
	double t;

	p = watch_emu(&e, args, 0);
	sr_sleep(0.6);		/* the first call is parked in the emulator */
	t = timed_stop(p);
	ok(t < 0.5, "stop_vm during the slow first call returns in %.3f s", t);
	sr_sleep(0.2);
	is_int(log_count(&e, "GET " EVENTS " metadata=true -> 0"), 1,
	    "the first call was in flight, and the client hung up");
	unwatch(p, &e);
}

static void
test_other_vm(void)
{
	const char *args[] = { "-O", "0.3", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	unsigned long errors = 99;
	struct emu e;

	p = watch_emu(&e, args, 0);
	ok(!wait_notice(p, 1.5, &n), "another VM's Preempt: no notice");
	sr_provider_stop_vm(p, NULL);
	ok(log_count(&e, "GET " EVENTS " metadata=true -> 200 incarnation=2") >= 1,
	    "another VM's Preempt: its document was read");
	ok(sr_azure_errors(p, &errors, NULL, 0) == 0 && errors == 0,
	    "another VM's Preempt: no error");
	unwatch(p, &e);
}

static void
test_kinds(void)
{
	const char *freeze[] = { "-Z", "0.3", "-E", "Freeze", NULL };
	const char *term[] = { "-Z", "0.3", "-E", "Terminate", "-N", "", NULL };
	const char *past[] = { "-Z", "0.3", "-N", "Mon, 19 Sep 2016 18:29:47 GMT", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	char err[SR_ERRMAX];
	struct emu e;

	p = watch_emu(&e, freeze, 0);
	ok(wait_notice(p, 2, &n) && n.kind == SR_NOTICE_EARLY, "Freeze is an early notice");
	is_str(n.reason, "azure Freeze event " EVENT_ID, "Freeze reason");
	ok(n.deadline == 0, "an early notice has no deadline");
	ok(!wait_notice(p, 1, &n), "Freeze: one notice");
	ok(sr_provider_ack(p, &n, err) == 0, "acking an early notice succeeds");
	is_int(sr_provider_ack_wait(p, err), 0, "... starts nothing");
	is_int(log_grep(&e, "POST "), 0, "... and POSTs nothing (Freeze goes ahead at NotBefore)");
	unwatch(p, &e);

	p = watch_emu(&e, term, 0);
	ok(wait_notice(p, 2, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "Terminate is a preemption notice");
	ok(n.deadline - n.seen > 29.999 && n.deadline - n.seen < 30.001,
	    "NotBefore \"\": the deadline is 30 s after the notice");
	unwatch(p, &e);

	p = watch_emu(&e, past, 0);
	ok(wait_notice(p, 2, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "NotBefore in the past: a preemption notice");
	ok(n.deadline == 1474309787, "NotBefore in the past: the deadline is NotBefore, not "
	    "30 s more (%.0f s from now)", n.deadline - n.seen);
	unwatch(p, &e);
}

#define NAME_GET	"GET /metadata/instance/compute/name?api-version=2021-02-01&format=text"
#define OTHER_ID	"1f4a7c0e-0000-4000-8000-00000000beef"

/* This VM's name cannot be read: the events are watched all the same, a
 * Preempt or Terminate counts whatever VM it names (the reason says so)
 * and is not acknowledged, early events wait for the name, and the name is
 * read again after a backoff; once it is read, another VM's events no
 * longer count, and the current document is read again with it. */
static void
test_name_unknown(void)
{
	const char *other[] = { "-n", "1000", "-O", "0.3", NULL };
	const char *own[] = { "-n", "1000", "-Z", "0.3", "-E", "Terminate", NULL };
	const char *freeze[] = { "-n", "1000", "-Z", "0.3", "-E", "Freeze", NULL };
	const char *later[] = { "-n", "0.5", "-O", "1.5", NULL };
	const char *reread[] = { "-n", "0.8", "-Z", "0.1", "-E", "Freeze", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	char err[SR_ERRMAX], last[SR_ERRMAX], want[SR_ERRMAX];
	unsigned long errors = 0;
	struct emu e;
	double t;
	int reads;

	p = watch_emu(&e, other, 0.1);
	ok(wait_notice(p, 2, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "name unknown: another VM's Preempt is a preemption notice");
	is_str(n.reason, "azure Preempt event " OTHER_ID " for othervm (this VM's name is "
	    "unknown: taken as this VM's)", "name unknown: the reason says so");
	ok(sr_provider_ack(p, &n, err) == 0 && sr_provider_ack_wait(p, err) == 0,
	    "name unknown: the notice is not acknowledged");
	sr_provider_stop_vm(p, NULL);
	is_int(log_grep(&e, "POST "), 0, "name unknown: nothing POSTed (another VM's event)");
	sr_azure_errors(p, &errors, last, sizeof last);
	snprintf(want, sizeof want, "GET %s/metadata/instance/compute/name?api-version="
	    "2021-02-01&format=text: HTTP status 500; until this VM's name is read, every "
	    "Preempt or Terminate event counts as this VM's", e.url);
	is_str(last, want, "name unknown: the error says what counts meanwhile");
	unwatch(p, &e);

	p = watch_emu(&e, own, 0.1);
	ok(wait_notice(p, 2, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "name unknown: this VM's Terminate is a preemption notice");
	is_str(n.reason, "azure Terminate event " EVENT_ID " for spotvm-1 (this VM's name is "
	    "unknown: taken as this VM's)", "name unknown: its reason");
	unwatch(p, &e);

	p = watch_emu(&e, freeze, 0.1);
	t = sr_mono();
	ok(!wait_notice(p, 1.2, &n), "name unknown: a Freeze waits for the name");
	sr_provider_stop_vm(p, NULL);
	t = sr_mono() - t;
	sr_azure_errors(p, &errors, NULL, 0);
	reads = log_count(&e, NAME_GET " metadata=true -> 500");
	/* Reads at 0, 0.1, 0.3, 0.7 s (then 1.5 s): a backoff, not every poll. */
	ok(reads >= 3 && reads <= 5 && errors == (unsigned long)reads &&
	    log_count(&e, "GET " EVENTS " metadata=true -> 200 incarnation=2") >= 5,
	    "name unknown: read again after a backoff while the events are polled (%d "
	    "reads, %lu errors in %.1f s at poll 0.1 s)", reads, errors, t);
	unwatch(p, &e);

	p = watch_emu(&e, later, 0.1);
	ok(!wait_notice(p, 2.5, &n), "name read late: another VM's Preempt after it: no notice");
	sr_provider_stop_vm(p, NULL);
	is_int(log_count(&e, NAME_GET " metadata=true -> 200"), 1,
	    "name read late: read once it answers, then not again");
	ok(log_count(&e, NAME_GET " metadata=true -> 500") >= 2,
	    "name read late: it failed first");
	unwatch(p, &e);

	p = watch_emu(&e, reread, 0.1);
	ok(wait_notice(p, 3, &n) && n.kind == SR_NOTICE_EARLY,
	    "name read late: the Freeze seen before it is taken once the name is known");
	ok(n.seen - e.t0 > 0.7, "name read late: the Freeze came after the name (%.2f s)",
	    n.seen - e.t0);
	is_str(n.reason, "azure Freeze event " EVENT_ID, "name read late: the Freeze's reason");
	unwatch(p, &e);
}

static void
test_deadline(void)
{
	double t = 1474309787;	/* Mon, 19 Sep 2016 18:29:47 GMT */

	ok(sr_azure_deadline("Mon, 19 Sep 2016 18:29:47 GMT", t - 40) == t,
	    "NotBefore 40 s ahead is the deadline");
	ok(sr_azure_deadline("Mon, 19 Sep 2016 18:29:47 GMT", t - 3600) == t,
	    "NotBefore 1 h ahead is the deadline");
	ok(sr_azure_deadline("Mon, 19 Sep 2016 18:29:47 GMT", t - 3601) == t - 3571,
	    "NotBefore more than 1 h ahead: now + 30 s");
	ok(sr_azure_deadline("Mon, 19 Sep 2016 18:29:47 GMT", t + 1) == t,
	    "NotBefore 1 s in the past is the deadline (the event may start at once)");
	ok(sr_azure_deadline("Mon, 19 Sep 2016 18:29:47 GMT", t + 86400) == t,
	    "NotBefore a day in the past is the deadline");
	ok(sr_azure_deadline("", t) == t + 30, "NotBefore \"\": now + 30 s");
	ok(sr_azure_deadline(NULL, t) == t + 30, "no NotBefore: now + 30 s");
	ok(sr_azure_deadline("Tue, 19 Sep 2016 18:29:47 GMT", t - 40) == t - 10,
	    "a wrong weekday: now + 30 s");
	ok(sr_azure_deadline("Mon, 19 Sep 2016 18:29:47 UTC", t - 40) == t - 10,
	    "not GMT: now + 30 s");
	ok(sr_azure_deadline("Mon, 19 Sep 2016 18:29:47 GMTx", t - 40) == t - 10,
	    "trailing bytes: now + 30 s");
	ok(sr_azure_deadline("Mon, 9 Sep 2016 18:29:47 GMT", t - 40) == t - 10,
	    "a one-digit day: now + 30 s");
	ok(sr_azure_deadline("2016-09-19T18:29:47Z", t - 40) == t - 10,
	    "ISO 8601: now + 30 s");
}

/* A hostile document from the start: no notice, no crash, polling goes on,
 * and the error says why. */
static void
hostile(const char *what, const char *const *args, const char *want_err)
{
	struct sr_provider *p;
	struct sr_notice n;
	unsigned long errors = 0;
	char last[SR_ERRMAX], want[SR_ERRMAX];
	struct emu e;

	p = watch_emu(&e, args, 0);
	ok(!wait_notice(p, 1.6, &n), "%s: no notice", what);
	ok(timed_stop(p) < 0.5, "%s: stop_vm returns at once", what);
	sr_azure_errors(p, &errors, last, sizeof last);
	ok(errors >= 2, "%s: polling went on (%lu failures)", what, errors);
	snprintf(want, sizeof want, want_err, e.url);
	is_str(last, want, "%s: the error", what);
	unwatch(p, &e);
}

static void
test_hostile(void)
{
	const char *notjson[] = { "-Z", "0", "-b", "not json", NULL };
	const char *inc[] = { "-Z", "0", "-b", "{\"DocumentIncarnation\":\"2\",\"Events\":[]}", NULL };
	const char *res[] = { "-Z", "0", "-b", "{\"DocumentIncarnation\":2,\"Events\":"
	    "[{\"EventId\":\"x\",\"EventType\":\"Preempt\",\"Resources\":\"spotvm-1\"}]}", NULL };
	const char *res2[] = { "-Z", "0", "-b", "{\"DocumentIncarnation\":2,\"Events\":"
	    "[{\"EventId\":\"x\",\"EventType\":\"Preempt\",\"Resources\":[\"spotvm-1\",7]}]}", NULL };
	const char *id[] = { "-Z", "0", "-b", "{\"DocumentIncarnation\":2,\"Events\":"
	    "[{\"EventId\":\"a\\\"b\",\"EventType\":\"Preempt\",\"Resources\":[\"spotvm-1\"]}]}",
	    NULL };
	const char *nb[] = { "-Z", "0", "-b", "{\"DocumentIncarnation\":2,\"Events\":"
	    "[{\"EventId\":\"x\",\"EventType\":\"Preempt\",\"Resources\":[\"spotvm-1\"],"
	    "\"NotBefore\":12}]}", NULL };
	const char *huge[] = { "-Z", "0", "-H", NULL };
	const char *evshape = "scheduledevents: Events[0]: want {\"EventId\": string, "
	    "\"EventType\": string, \"Resources\": [string], \"NotBefore\": string, ...}";

	hostile("not JSON", notjson,
	    "scheduledevents: bad JSON at line 1: '[' or '{' expected near 'not'");
	hostile("a string incarnation", inc, "scheduledevents: want {\"DocumentIncarnation\": "
	    "integer, \"Events\": [...]}");
	hostile("Resources a string", res, evshape);
	hostile("a number in Resources", res2,
	    "scheduledevents: Events[0]: Resources[1] is not a string");
	hostile("a quote in EventId", id,
	    "scheduledevents: Events[0]: EventId is not 1 to 128 of [A-Za-z0-9_.-]");
	hostile("NotBefore a number", nb, evshape);
	hostile("a huge body", huge, "GET %s" EVENTS ": the reply is larger than 65536 bytes");
}

static void
test_config(void)
{
	struct sr_provider_conf c;
	struct sr_provider *p;
	struct sr_facts f;
	struct sr_notice n;
	char err[SR_ERRMAX];
	unsigned long errors = 0;

	memset(&c, 0, sizeof c);
	c.name = "azure";
	c.endpoint = "ftp://metadata";
	ok(sr_provider_new(&c, &p, err) == -1, "a non-HTTP endpoint is refused");
	is_str(err, "create provider azure: endpoint \"ftp://metadata\" is not an "
	    "http:// or https:// URL (set it like http://169.254.169.254)",
	    "the endpoint error");
	c.endpoint = NULL;
	c.poll = 0.01;
	ok(sr_provider_new(&c, &p, err) == -1, "a poll of 0.01 s is refused");
	is_str(err, "create provider azure: poll is 0.01; it must be 0 (the default, "
	    "0.2 s) or between 0.05 and 3600 seconds", "the poll error");

	/* Nothing listens on port 1: every request fails fast, nothing hangs. */
	p = new_azure("http://127.0.0.1:1/", 0);
	ok(sr_provider_facts(p, &f, err) == -1, "no metadata service: facts fail");
	ok(strncmp(err, "read azure facts: GET http://127.0.0.1:1/metadata/instance/"
	    "compute?api-version=2021-02-01: ", 82) == 0,
	    "no metadata service: the facts error: %s", err);
	is_str(f.instance_id, "unknown", "no metadata service: vmId unknown");
	start(p);
	sr_sleep(1.0);
	ok(timed_stop(p) < 0.5, "no metadata service: stop_vm returns at once");
	sr_azure_errors(p, &errors, NULL, 0);
	ok(errors >= 2, "no metadata service: polling went on (%lu failures)", errors);
	memset(&n, 0, sizeof n);
	n.kind = SR_NOTICE_PREEMPT;
	ok(sr_provider_ack(p, &n, err) == 0, "ack with no event seen: nothing to do");
	sr_provider_free(p);

	memset(&c, 0, sizeof c);
	c.name = "auto";
	c.window = 30;
	c.grace = 30;
	c.max_preemptions = -1;
	c.trace_scale = 1;
	ok(sr_provider_new(&c, &p, err) == 0, "auto: created");
	is_str(sr_provider_name(p), "local", "auto: local when no metadata service answers");
	is_int(sr_azure_errors(p, &errors, NULL, 0), -1,
	    "sr_azure_errors: -1 for another provider");
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
	test_ack_async();
	test_slow_first();
	test_stop();
	test_other_vm();
	test_kinds();
	test_name_unknown();
	test_deadline();
	test_hostile();
	test_config();
	if (sr_rmtree(tmpdir, err) == -1)
		tap_diag("%s", err);
	return tap_done();
}
