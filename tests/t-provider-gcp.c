/*
 * t-provider-gcp.c: the `gcp` provider (providers/gcp.c) against
 * tests/mdemu, the metadata emulator, on loopback: the emulator's own GCP
 * rules (403 without Metadata-Flavor, ETags, long-polls that wait), the
 * notice's latency from the flip (the point of long-polling), the ETag sent
 * back as last_etag (from the emulator's log), 503 bursts, malformed, huge
 * and non-metadata-server replies, maintenance events, stop_vm in the
 * middle of a long-poll, facts, and configuration errors. Timings assert
 * with >= 0.2 s of slack.
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

static char tmpdir[] = "/tmp/t-provider-gcp.XXXXXX";

/* The ETag of the first logged reply whose line starts with prefix and
 * holds " -> 200 etag=", into out (32 bytes); "" when none. */
static void
log_etag(const struct emu *e, const char *prefix, char *out)
{
	char buf[2048], *t;
	FILE *f = fopen(e->log, "r");

	out[0] = '\0';
	if (f == NULL)
		return;
	while (fgets(buf, sizeof buf, f) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		if (strncmp(buf, prefix, strlen(prefix)) == 0 &&
		    (t = strstr(buf, " -> 200 etag=")) != NULL) {
			snprintf(out, 32, "%s", t + 13);
			break;
		}
	}
	fclose(f);
}

static struct sr_provider *
new_gcp(const char *endpoint, double poll)
{
	struct sr_provider_conf c;
	char err[SR_ERRMAX];
	struct sr_provider *p;

	memset(&c, 0, sizeof c);
	c.name = "gcp";
	c.endpoint = endpoint;
	c.poll = poll;
	c.max_preemptions = -1;
	if (sr_provider_new(&c, &p, err) == -1)
		sr_fatal("sr_provider_new: %s", err);
	return p;
}

#define PREEMPTED "GET /computeMetadata/v1/instance/preempted"

/* The emulator's GCP rules, through the HTTP client (its header capture
 * included). */
static void
test_emulator(void)
{
	const char *flavor[] = { "Metadata-Flavor: Google", NULL };
	const char *capture[] = { "metadata-flavor", "ETag", "X-None", NULL };
	struct sr_http_req req;
	struct sr_http_resp resp;
	char url[256], err[SR_ERRMAX], etag[64] = "";
	struct emu e;
	double t;

	emu_run(&e, tmpdir, NULL);
	memset(&req, 0, sizeof req);
	req.method = "GET";
	req.connect_timeout = 1;
	req.timeout = 5;
	req.capture = capture;
	snprintf(url, sizeof url, "%s/computeMetadata/v1/instance/preempted", e.url);
	req.url = url;
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 403,
	    "emulator: a request without Metadata-Flavor gets 403");
	is_str(resp.body, "Missing Metadata-Flavor:Google header.\n", "emulator: the 403 body");
	ok(resp.captured[0] != NULL && strcmp(resp.captured[0], "Google") == 0 &&
	    resp.captured[1] == NULL && resp.captured[2] == NULL,
	    "emulator: the 403 carries Metadata-Flavor: Google, no ETag");
	sr_http_resp_free(&resp);
	req.headers = flavor;
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 200,
	    "emulator: with the header: 200");
	is_str(resp.body, "FALSE", "emulator: not preempted");
	ok(resp.captured[1] != NULL && strlen(resp.captured[1]) == 16,
	    "emulator: an ETag of 16 characters (%s)", resp.captured[1]);
	if (resp.captured[1] != NULL)
		snprintf(etag, sizeof etag, "%s", resp.captured[1]);
	sr_http_resp_free(&resp);

	snprintf(url, sizeof url, "%s/computeMetadata/v1/instance/preempted?"
	    "wait_for_change=true&last_etag=%s&timeout_sec=1", e.url, etag);
	t = sr_mono();
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 200,
	    "emulator: a long-poll with the current ETag: 200");
	t = sr_mono() - t;
	ok(t > 0.8 && t < 1.8, "emulator: it waited timeout_sec=1 (%.2f s)", t);
	ok(resp.captured[1] != NULL && strcmp(resp.captured[1], etag) == 0 &&
	    strcmp(resp.body, "FALSE") == 0,
	    "emulator: then the same value and ETag");
	sr_http_resp_free(&resp);
	snprintf(url, sizeof url, "%s/computeMetadata/v1/instance/preempted?"
	    "wait_for_change=true&last_etag=0123&timeout_sec=5", e.url);
	t = sr_mono();
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 200 &&
	    sr_mono() - t < 0.5, "emulator: a long-poll with another ETag returns at once");
	sr_http_resp_free(&resp);
	snprintf(url, sizeof url, "%s/computeMetadata/v1/instance/nothing", e.url);
	ok(sr_http_do(&req, &resp, err) == 0 && resp.status == 404,
	    "emulator: an unknown path: 404");
	sr_http_resp_free(&resp);
	sr_sleep(0.1);
	is_int(log_count(&e, PREEMPTED " flavor=- -> 403 etag=-"), 1,
	    "emulator: the 403 is logged");
	emu_stop(&e);
}

static void
test_notice(void)
{
	const char *args[] = { "-G", "1", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	struct sr_facts f;
	char err[SR_ERRMAX], line[512], e0[32], e1[32];
	unsigned long errors = 99;
	struct emu e;
	double lat;

	emu_run(&e, tmpdir, args);
	setenv("SPOTRUN_GCP_ENDPOINT", e.url, 1);
	p = new_gcp(NULL, 0);		/* the endpoint from the environment */
	no_cloud();
	is_str(sr_provider_name(p), "gcp", "the provider is gcp");
	is_int(sr_provider_next_vm(p), 0, "gcp: no next VM (the run exits 75)");
	start(p);
	ok(wait_notice(p, 3, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "preempted = TRUE is a preemption notice");
	lat = n.seen - (e.t0 + 1);
	tap_diag("notice latency from the flip: %.1f ms", lat * 1000);
	ok(lat > -0.01 && lat < 0.3, "the notice within 0.3 s of the flip (%.3f s)", lat);
	ok(n.deadline - n.seen > 29.999 && n.deadline - n.seen < 30.001,
	    "the deadline is 30 s after the notice");
	is_str(n.reason, "gcp preemption (instance/preempted = TRUE)", "notice reason");
	ok(!wait_notice(p, 0.5, &n), "one preemption notice per VM");
	ok(sr_provider_facts(p, &f, err) == 0, "facts are read");
	is_str(f.provider, "gcp", "facts: provider");
	is_str(f.instance_id, "4520031799277581759", "facts: instance/id");
	is_str(f.instance_type, "a3-highgpu-8g", "facts: the machine type's last segment");
	is_str(f.zone, "us-central1-a", "facts: the zone's last segment");
	is_str(f.lifecycle, "spot", "facts: provisioning-model SPOT");
	ok(timed_stop(p) < 0.5, "stop_vm returns at once");
	ok(sr_gcp_errors(p, &errors, NULL, 0) == 0 && errors == 0, "no request failed");

	/* The ETag dance, from the emulator's log. */
	log_etag(&e, PREEMPTED " flavor=Google", e0);
	is_int(log_grep(&e, PREEMPTED " flavor=Google -> 200 etag="), 1,
	    "one plain GET of preempted, the first");
	snprintf(line, sizeof line, PREEMPTED "?wait_for_change=true&last_etag=%s&"
	    "timeout_sec=10 flavor=Google -> 200 etag=", e0);
	log_etag(&e, line, e1);
	ok(e0[0] != '\0' && e1[0] != '\0' && strcmp(e0, e1) != 0,
	    "the long-poll sent the first reply's ETag as last_etag; the flip changed "
	    "it (%s -> %s)", e0, e1);
	is_int(log_grep(&e, "wait_for_change=true&last_etag="), 1,
	    "one long-poll waited for the flip");
	ok(log_grep(&e, "GET /computeMetadata/v1/instance/maintenance-event flavor=Google "
	    "-> 200 etag=") >= 1, "maintenance-event was checked");
	is_int(log_grep(&e, "flavor=- "), 0, "every request carried Metadata-Flavor");
	sr_provider_free(p);
	emu_stop(&e);
}

/* A 503 burst over the flip: the long-poll in flight gets 503, the retries
 * too; the first after the burst sends the old ETag and gets TRUE at once. */
static void
test_503(void)
{
	const char *args[] = { "-u", "0.3:1.4", "-G", "0.8", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	unsigned long errors = 0;
	char last[SR_ERRMAX], want[SR_ERRMAX], e0[32], line[512];
	struct emu e;

	emu_run(&e, tmpdir, args);
	p = new_gcp(e.url, 0);
	start(p);
	ok(wait_notice(p, 4, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "503 burst: the notice arrives after it");
	ok(n.seen - (e.t0 + 1.4) > -0.05 && n.seen - (e.t0 + 1.4) < 1.0,
	    "503 burst: within 1 s of its end (%.2f s after)", n.seen - (e.t0 + 1.4));
	sr_provider_stop_vm(p, NULL);
	sr_gcp_errors(p, &errors, last, sizeof last);
	ok(errors >= 2, "503 burst: polling went on through it (%lu failures)", errors);
	snprintf(want, sizeof want, "GET %s/computeMetadata/v1/instance/", e.url);
	ok(strncmp(last, want, strlen(want)) == 0 &&
	    strcmp(last + strlen(last) - 17, ": HTTP status 503") == 0,
	    "503 burst: the last error names the status: %s", last);
	log_etag(&e, PREEMPTED " flavor=Google", e0);
	snprintf(line, sizeof line, PREEMPTED "?wait_for_change=true&last_etag=%s&"
	    "timeout_sec=10 flavor=Google -> 503 etag=-", e0);
	ok(log_count(&e, line) >= 1, "503 burst: the parked long-poll got 503");
	snprintf(line, sizeof line, PREEMPTED "?wait_for_change=true&last_etag=%s&"
	    "timeout_sec=10 flavor=Google -> 200 etag=", e0);
	is_int(log_grep(&e, line), 1,
	    "503 burst: after it, the old ETag caught the flip it missed");
	sr_provider_free(p);
	emu_stop(&e);
}

/* A hostile server from the start: no notice, no crash, polling goes on,
 * and the error says why. */
static void
hostile(const char *what, const char *const *args, const char *want_err)
{
	struct sr_provider *p;
	struct sr_notice n;
	unsigned long errors = 0;
	char last[SR_ERRMAX], want[SR_ERRMAX];
	struct emu e;

	emu_run(&e, tmpdir, args);
	p = new_gcp(e.url, 0);
	start(p);
	ok(!wait_notice(p, 1.0, &n), "%s: no notice", what);
	ok(timed_stop(p) < 0.5, "%s: stop_vm returns at once", what);
	sr_gcp_errors(p, &errors, last, sizeof last);
	ok(errors >= 2, "%s: polling went on (%lu failures)", what, errors);
	snprintf(want, sizeof want, want_err, e.url);
	is_str(last, want, "%s: the error", what);
	sr_provider_free(p);
	emu_stop(&e);
}

static void
test_hostile(void)
{
	const char *maybe[] = { "-G", "0.3", "-b", "MAYBE", NULL };
	const char *ctl[] = { "-G", "0", "-b", "TRUE\x01", NULL };
	const char *huge[] = { "-G", "0", "-H", NULL };
	const char *noflavor[] = { "-G", "0", "-F", NULL };

	hostile("a value that is not TRUE or FALSE", maybe,
	    "instance/preempted: the value \"MAYBE\" is not TRUE or FALSE");
	hostile("a control character", ctl,
	    "instance/preempted: the value \"TRUE?\" is not TRUE or FALSE");
	hostile("a huge body", huge,
	    "GET %s/computeMetadata/v1/instance/preempted: the reply is larger than "
	    "4096 bytes");
	hostile("no Metadata-Flavor in the replies", noflavor,
	    "GET %s/computeMetadata/v1/instance/maintenance-event: the reply lacks "
	    "Metadata-Flavor: Google (HTTP status 200; is this the metadata server?)");
}

static void
test_maintenance(void)
{
	const char *term[] = { "-M", "0.5", NULL };
	const char *migr[] = { "-m", "0.5", NULL };
	struct sr_provider *p;
	struct sr_notice n;
	unsigned long errors = 99;
	struct emu e;

	emu_run(&e, tmpdir, term);
	p = new_gcp(e.url, 1);
	start(p);
	ok(wait_notice(p, 3, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "TERMINATE_ON_HOST_MAINTENANCE is a preemption notice");
	ok(n.seen - (e.t0 + 0.5) > -0.01 && n.seen - (e.t0 + 0.5) < 1.5,
	    "seen within one long-poll (1 s) of it (%.2f s)", n.seen - (e.t0 + 0.5));
	ok(n.deadline - n.seen > 58.999 && n.deadline - n.seen < 59.001,
	    "its deadline: 60 s less the long-poll's 1 s");
	is_str(n.reason, "gcp host maintenance (TERMINATE_ON_HOST_MAINTENANCE)",
	    "terminate reason");
	ok(!wait_notice(p, 1.2, &n), "one notice per VM");
	sr_provider_stop_vm(p, NULL);
	ok(sr_gcp_errors(p, &errors, NULL, 0) == 0 && errors == 0, "terminate: no errors");
	sr_provider_free(p);
	emu_stop(&e);

	emu_run(&e, tmpdir, migr);
	p = new_gcp(e.url, 1);
	start(p);
	ok(wait_notice(p, 3, &n) && n.kind == SR_NOTICE_EARLY,
	    "MIGRATE_ON_HOST_MAINTENANCE is an early notice");
	is_str(n.reason, "gcp host maintenance (MIGRATE_ON_HOST_MAINTENANCE)",
	    "migrate reason");
	ok(n.deadline == 0, "an early notice has no deadline");
	ok(!wait_notice(p, 1.5, &n), "migrate: one notice, no preemption");
	sr_provider_stop_vm(p, NULL);
	sr_provider_free(p);
	emu_stop(&e);
}

static void
test_stop(void)
{
	struct sr_provider *p;
	struct emu e;
	double t;

	emu_run(&e, tmpdir, NULL);
	p = new_gcp(e.url, 30);
	start(p);
	sr_sleep(0.6);		/* a 30 s long-poll is parked in the emulator */
	t = timed_stop(p);
	ok(t < 0.5, "stop_vm during a long-poll returns in %.3f s", t);
	sr_sleep(0.2);
	is_int(log_grep(&e, "&timeout_sec=30 flavor=Google -> 0 etag=-"), 1,
	    "the long-poll was in flight, and the client hung up");
	sr_provider_free(p);
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

	memset(&c, 0, sizeof c);
	c.name = "gcp";
	c.endpoint = "ftp://metadata";
	ok(sr_provider_new(&c, &p, err) == -1, "a non-HTTP endpoint is refused");
	is_str(err, "create provider gcp: endpoint \"ftp://metadata\" is not an "
	    "http:// or https:// URL (set it like http://metadata.google.internal)",
	    "the endpoint error");
	c.endpoint = NULL;
	c.poll = 0.5;
	ok(sr_provider_new(&c, &p, err) == -1, "a long-poll of 0.5 s is refused");
	is_str(err, "create provider gcp: poll is 0.5; it must be 0 (the default, 10 s) "
	    "or a whole number of seconds from 1 to 30 (how long one long-poll waits)",
	    "the poll error");
	c.poll = 31;
	ok(sr_provider_new(&c, &p, err) == -1, "a long-poll of 31 s is refused");

	/* Nothing listens on port 1: every request fails fast, nothing hangs. */
	p = new_gcp("http://127.0.0.1:1/", 0);
	ok(sr_provider_facts(p, &f, err) == -1, "no metadata server: facts fail");
	ok(strncmp(err, "read gcp facts: GET http://127.0.0.1:1/computeMetadata/v1/"
	    "instance/id: ", 70) == 0, "no metadata server: the facts error: %s", err);
	is_str(f.instance_id, "unknown", "no metadata server: instance/id unknown");
	is_str(f.zone, "unknown", "no metadata server: zone unknown");
	start(p);
	sr_sleep(0.5);
	ok(timed_stop(p) < 0.5, "no metadata server: stop_vm returns at once");
	sr_gcp_errors(p, &errors, NULL, 0);
	ok(errors >= 2, "no metadata server: polling went on (%lu failures)", errors);
	sr_provider_free(p);

	memset(&c, 0, sizeof c);
	c.name = "auto";
	c.window = 30;
	c.grace = 30;
	c.max_preemptions = -1;
	c.trace_scale = 1;
	ok(sr_provider_new(&c, &p, err) == 0, "auto: created");
	is_str(sr_provider_name(p), "local", "auto: local when no metadata server answers");
	is_int(sr_gcp_errors(p, &errors, NULL, 0), -1, "sr_gcp_errors: -1 for another provider");
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
	test_503();
	test_hostile();
	test_maintenance();
	test_stop();
	test_config();
	if (sr_rmtree(tmpdir, err) == -1)
		tap_diag("%s", err);
	return tap_done();
}
