/*
 * t-xfer.c: the request engine (store/xfer.c) under out-of-memory, against
 * tests/mdemu on loopback as its server, with a family of this test's own
 * that signs with an IMDSv2 token: one request, many at once, and an
 * error reply (its body read for an <Error> document). Each fails with an
 * error that says out-of-memory after one attempt, never retried and never
 * taken for the network's or the server's fault, or succeeds exactly; no
 * byte leaks (tests/oom-trial.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "imds.h"
#include "oom.h"
#include "tap.h"
#include "oom-trial.h"
#include "mdemu-util.h"
#include "util.h"
#include "xfer.h"

struct fam {
	char base[64];
	char token[300];		/* "X-aws-ec2-metadata-token: TOKEN" */
};

static int
t_sign(void *arg, const struct sr_xfer_req *rq, void *state, const char *what, char **url,
    struct curl_slist **hl, char *err)
{
	struct fam *f = arg;

	(void)state;
	if ((*url = sr_try_asprintf(err, "%s/latest/meta-data/%s", f->base, rq->key)) == NULL)
		return sr_err_prefix(err, "%s", what);
	if (sr_xfer_header(hl, f->token, err) == -1) {
		free(*url);
		*url = NULL;
		return sr_err_prefix(err, "%s", what);
	}
	return 0;
}

/* A 5xx would be tried again (none comes here); a 404 is the answer. */
static enum sr_xfer_judgement
t_judge(void *arg, const struct sr_xfer_req *rq, void *state, struct sr_xfer_resp *resp)
{
	(void)arg;
	(void)rq;
	(void)state;
	return resp->status >= 500 ? SR_XFER_TRANSIENT : SR_XFER_FINAL;
}

static int
t_fail(void *arg, const char *what, const struct sr_xfer_resp *resp, char *err)
{
	(void)arg;
	return sr_err(err, "%s: HTTP %ld", what, resp->status);
}

static const struct sr_xfer_family family = {
	.state_size = 16, .sign = t_sign, .judge = t_judge, .fail = t_fail,
	.capture = { "Content-Type", NULL }, .ca_hint = "(none)",
};

struct run {
	struct sr_xfer *x;
	struct sr_xfer_resp resp;
	unsigned long requests;		/* the engine's count before the run */
	const char *key;
	long status;
	const char *body;
	char got[2][64];		/* do_many's bodies */
	int ours_only;			/* the trial's scope is OOM_OURS */
	struct fam *f;
	const struct sr_xfer_tuning *tune;
};

static int
run_do(void *arg, char *err)
{
	struct run *r = arg;
	struct sr_xfer_req rq = { .method = "GET", .key = r->key };
	struct sr_store_stats st;

	sr_xfer_stats(r->x, &st);
	r->requests = st.requests;
	return sr_xfer_do(r->x, &rq, &r->resp, "get it", err);
}

/* Attempts the run made: one a request, whatever the outcome (no retry),
 * where only spotrun's allocations fail. (Curl reports some failures of
 * its own allocations as the network's: its resolver thread that could
 * not start, a reused connection it could not retry on; the engine cannot
 * tell those from real ones and tries again, which ends in success or in
 * curl's out-of-memory.) */
static int
one_attempt(struct run *r, unsigned long want, char *why)
{
	struct sr_store_stats st;

	sr_xfer_stats(r->x, &st);
	if (r->ours_only && st.requests - r->requests > want)
		return snprintf(why, SR_ERRMAX, "%lu attempts, not %lu: retried",
		    st.requests - r->requests, want), 0;
	return 1;
}

static int
check_do(void *arg, int rc, char *why)
{
	struct run *r = arg;

	if (rc == 0 && (r->resp.status != r->status || r->resp.body == NULL ||
	    strcmp(r->resp.body, r->body) != 0 ||
	    strcmp(r->resp.captured[0], "text/plain") != 0))
		return snprintf(why, SR_ERRMAX, "HTTP %ld, body %s", r->resp.status,
		    r->resp.body != NULL ? r->resp.body : "(none)"), 0;
	return one_attempt(r, 1, why);
}

/* A fresh engine for the next trial: what curl keeps in the pooled
 * handles depends on how their last transfer ended. */
static void
fresh_engine(struct run *r)
{
	char err[SR_ERRMAX];

	sr_xfer_free(r->x);
	if ((r->x = sr_xfer_new(&family, r->f, r->tune, NULL, err)) == NULL)
		sr_fatal("%s", err);
}

static void
reset_do(void *arg)
{
	struct run *r = arg;

	sr_xfer_resp_free(&r->resp);
	fresh_engine(r);
}

static void
reset_many(void *arg)
{
	fresh_engine(arg);
}

static int
many_done(void *arg, size_t i, const struct sr_xfer_resp *resp, char *err)
{
	struct run *r = arg;

	if (resp->status != 200)
		return sr_err(err, "request %zu: HTTP %ld", i, resp->status);
	snprintf(r->got[i], sizeof r->got[i], "%s", resp->body != NULL ? resp->body : "");
	return 0;
}

static int
run_many(void *arg, char *err)
{
	struct run *r = arg;
	struct sr_xfer_req rq[2] = { { .method = "GET", .key = "instance-id" },
		{ .method = "GET", .key = "instance-type" } };
	static const char *const what[2] = { "get the id", "get the type" };
	struct sr_store_stats st;

	memset(r->got, 0, sizeof r->got);
	sr_xfer_stats(r->x, &st);
	r->requests = st.requests;
	return sr_xfer_do_many(r->x, rq, what, 2, many_done, r, err);
}

static int
check_many(void *arg, int rc, char *why)
{
	struct run *r = arg;

	if (rc == 0 && (strcmp(r->got[0], "i-0123456789abcdef0") != 0 ||
	    strcmp(r->got[1], "p5.48xlarge") != 0))
		return snprintf(why, SR_ERRMAX, "got \"%s\" and \"%s\"", r->got[0], r->got[1]), 0;
	return one_attempt(r, 2, why);
}

int
main(void)
{
	struct sr_xfer_tuning tune = { .part_size = 1 << 20, .concurrency = 2,
		.part_sum = SR_SUM_NONE, .attempts = 4, .stall_timeout = 5 };
	struct sr_imds m = { .connect_timeout = 2, .timeout = 5 };
	char dir[64], err[SR_ERRMAX], tok[256];
	struct fam f;
	struct run r;
	struct emu e;

	no_cloud();
	snprintf(dir, sizeof dir, "%s/t-xfer.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp %s: %s", dir, strerror(errno));
	if (sr_http_init(err) != 0)
		sr_fatal("set up: %s", err);
	emu_start(&e, dir, NULL);
	m.base = e.url;
	if (sr_imds_token(&m, 3600, 1, tok, sizeof tok, err) != 0)
		sr_fatal("%s", err);
	snprintf(f.base, sizeof f.base, "%s", e.url);
	snprintf(f.token, sizeof f.token, "X-aws-ec2-metadata-token: %s", tok);
	memset(&r, 0, sizeof r);
	r.f = &f;
	r.tune = &tune;
	fresh_engine(&r);

	for (r.ours_only = 1; r.ours_only >= 0; r.ours_only--) {
		enum oom_scope scope = r.ours_only ? OOM_OURS : OOM_ALL;

		r.key = "instance-id";
		r.status = 200;
		r.body = "i-0123456789abcdef0";
		oom_trial(r.ours_only ? "sr_xfer_do (a GET), never retried" :
		    "sr_xfer_do (a GET; curl's allocations too)", scope, run_do, check_do,
		    reset_do, &r);
		r.key = "nothing-here";
		r.status = 404;
		r.body = "Not Found\n";
		oom_trial(r.ours_only ? "sr_xfer_do (an error reply), never retried" :
		    "sr_xfer_do (an error reply; curl's and expat's allocations too)", scope,
		    run_do, check_do, reset_do, &r);
		oom_trial(r.ours_only ? "sr_xfer_do_many (two GETs), never retried" :
		    "sr_xfer_do_many (two GETs; curl's allocations too)", scope, run_many,
		    check_many, reset_many, &r);
	}

	sr_xfer_free(r.x);
	emu_stop(&e);
	sr_http_cleanup();
	sr_rmtree(dir, err);
	return tap_done();
}
