/*
 * t-queue.c: the queue (queue/queue.h) on file://, Ceph RGW, Azurite and
 * gs:// against tests/gcsemu.py with GCS's one write a second per object on
 * (every 429 retried until answered, no object changed twice within it): the
 * default URL and Q/ckpt, submitting (the exact keys, create-only ids:
 * the same job twice is "already in the queue", a submission cut short is
 * completed), pending markers in priority order with the GPU filter,
 * claims in 3 requests (fresh and released jobs) plus the marker's delete,
 * stale and malformed markers and leases skipped or repaired, 32 processes
 * claiming one job, status markers (newest per job; 2,500 jobs in 3 list
 * requests), leases of dead machines found by listings, cancel, requeue
 * and retry, and log segments shipped, read back and followed in order.
 */
#include "config.h"

#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lease.h"
#include "queue.h"
#include "store.h"
#include "tap.h"
#include "mdemu-util.h"
#include "s3-util.h"
#include "queue-util.h"
#include "az-util.h"
#include "gs-util.h"
#include "util.h"

#define T0 1764560000.0		/* 2025-12-01T03:33:20Z */

static struct sr_lease_owner A, X;
static const char *url;
static char qurl[1024], qurl2[1024];	/* the queue, and one for test_expired alone */

static struct sr_queue *
open_queue(void)
{
	struct sr_queue *q;
	char err[SR_ERRMAX];

	if (sr_queue_open(url, &q, err) != 0)
		sr_fatal("%s", err);
	return q;
}

/* Requests made through q since the last call (per kind in *c). */
static long
delta(struct sr_queue *q, struct sr_queue_counts *last, struct sr_queue_counts *d)
{
	struct sr_queue_counts now;

	sr_queue_get_counts(q, &now);
	if (d != NULL) {
		d->requests = now.requests - last->requests;
		d->lists = now.lists - last->lists;
		d->gets = now.gets - last->gets;
		d->puts = now.puts - last->puts;
		d->deletes = now.deletes - last->deletes;
		d->heads = now.heads - last->heads;
	}
	*last = now;
	return d != NULL ? d->requests : 0;
}

/* Submit a job with these fields. */
static int
add(struct sr_queue *q, const char *id, int prio, int gmin, int gmax, const char *type,
    double when, const char *spec, char *err)
{
	struct sr_queue_meta m = { .id = id, .priority = prio, .gpus_min = gmin,
		.gpus_max = gmax, .gpu_type = type, .submitted = when, .by = "me@laptop" };

	return sr_queue_add(q, spec != NULL ? spec : "[job]\nname = x\n",
	    strlen(spec != NULL ? spec : "[job]\nname = x\n"), &m, err);
}

/* Keys under prefix, tab-separated, into out. */
static const char *
keys(struct sr_queue *q, const char *prefix, char *out, size_t len)
{
	return qu_keys(sr_queue_store(q), prefix, out, len);
}

static struct sr_queue_agent
agent(const struct sr_lease_owner *o, int gpus, const char *type)
{
	struct sr_queue_agent a = { .owner = o, .gpus = gpus, .gpu_type = type };

	return a;
}

static void
test_urls(void)
{
	char buf[512], err[SR_ERRMAX];
	const char *home = getenv("HOME"), *xdg = getenv("XDG_DATA_HOME");
	char *savehome = home != NULL ? sr_strdup(home) : NULL;
	char *savexdg = xdg != NULL ? sr_strdup(xdg) : NULL;
	struct sr_queue *q;

	setenv("XDG_DATA_HOME", "/x/data", 1);
	setenv("HOME", "/h", 1);
	ok(sr_queue_default_url(buf, sizeof buf, err) == 0 &&
	    strcmp(buf, "file:///x/data/spotrun/queue") == 0, "default queue: $XDG_DATA_HOME/"
	    "spotrun/queue");
	setenv("XDG_DATA_HOME", "relative", 1);
	ok(sr_queue_default_url(buf, sizeof buf, err) == 0 &&
	    strcmp(buf, "file:///h/.local/share/spotrun/queue") == 0,
	    "... a relative XDG_DATA_HOME is ignored: $HOME/.local/share/spotrun/queue");
	unsetenv("XDG_DATA_HOME");
	setenv("HOME", "", 1);
	is_int(sr_queue_default_url(buf, sizeof buf, err), -1, "... neither: an error");
	is_str(err, "default queue: neither XDG_DATA_HOME nor HOME is an absolute path; give the "
	    "queue's URL (--queue or SPOTRUN_QUEUE)", "... message");
	if (savehome != NULL)
		setenv("HOME", savehome, 1);
	if (savexdg != NULL)
		setenv("XDG_DATA_HOME", savexdg, 1);
	free(savehome);
	free(savexdg);

	snprintf(buf, sizeof buf, "%s/", url);
	if (strncmp(url, "file://", 7) == 0) {
		char want[1024];

		ok(sr_queue_open(buf, &q, err) == 0, "open %s", buf);
		snprintf(want, sizeof want, "%s/ckpt", url);
		is_str(sr_queue_ckpt_url(q), want, "Q/ckpt: the queue's URL + /ckpt");
		sr_queue_close(q);
	}
	ok(sr_queue_open("s3://bkt/pre/fix?endpoint=http://127.0.0.1:1&region=x", &q, err) == 0,
	    "open an s3:// queue (no request made)");
	is_str(sr_queue_ckpt_url(q), "s3://bkt/pre/fix/ckpt?endpoint=http://127.0.0.1:1&region=x",
	    "... its Q/ckpt goes before the options");
	sr_queue_close(q);
	ok(sr_queue_open("s3://bkt?endpoint=http://127.0.0.1:1", &q, err) == 0 &&
	    strcmp(sr_queue_ckpt_url(q), "s3://bkt/ckpt?endpoint=http://127.0.0.1:1") == 0,
	    "... a bucket without a prefix: s3://bkt/ckpt");
	sr_queue_close(q);
	is_int(sr_queue_open("ftp://x", &q, err), -1, "a queue URL that is no store's");
	is_str(err, "open queue: open store ftp://x: unsupported scheme \"ftp\" (supported: "
	    "file://, s3://, gs://, az://)", "... message");
}

static void
test_add(struct sr_queue *q)
{
	struct sr_queue_counts c0, d;
	struct sr_queue_job_meta m;
	struct sr_queue_param params[] = { { "lr", "0.1" }, { "depth", "12" } };
	struct sr_queue_meta meta = { .id = "train.003", .name = "train", .sweep = "train",
		.params = params, .nparams = 2, .gpus_min = 1, .gpus_max = 8, .gpu_type = "H100",
		.priority = 0, .submitted = T0, .by = "me@laptop" };
	const char *spec = "[job]\nname = train\ncommand = python3 train.py --lr 0.1\n";
	char err[SR_ERRMAX], out[4096], want[2048], *s;
	int rc;

	delta(q, &c0, NULL);
	rc = sr_queue_add(q, spec, strlen(spec), &meta, err);
	su_rc_is(rc, SR_QUEUE_OK, err, "submit a sweep trial");
	is_int(delta(q, &c0, &d), 4, "... 4 requests: spec, status marker, pending marker, meta");
	is_str(keys(q, "jobs/train.003/", out, sizeof out),
	    "jobs/train.003/meta.json\tjobs/train.003/spec.ini", "... its job objects");
	is_str(keys(q, "pending/", out, sizeof out),
	    "pending/09999~1764560000000~train.003~1-8~H100~q~0~", "... its pending marker: "
	    "priority (inverted), submit time, id, GPUs, GPU type, store, no lease yet");
	is_str(keys(q, "index/", out, sizeof out),
	    "index/train.003~000000000000~1764560000000~queued~0~0~0~0~0.0000~0.0000~~",
	    "... its status marker: queued, nothing run");
	s = qu_get(sr_queue_store(q), "jobs/train.003/spec.ini", NULL);
	is_str(s, spec, "... the spec as given");
	free(s);
	rc = sr_queue_meta_read(q, "train.003", &m, err);
	su_rc_is(rc, SR_QUEUE_OK, err, "read its meta");
	ok(rc == 0 && strcmp(m.name, "train") == 0 && strcmp(m.sweep, "train") == 0 &&
	    m.gpus_min == 1 && m.gpus_max == 8 && strcmp(m.gpu_type, "H100") == 0 &&
	    m.priority == 0 && m.submitted == T0 && strcmp(m.by, "me@laptop") == 0 &&
	    strcmp(m.store, sr_queue_ckpt_url(q)) == 0, "... fields, the store Q/ckpt");
	ok(rc == 0 && m.nparams == 2 && strcmp(m.param_names[0], "lr") == 0 &&
	    strcmp(m.param_values[0], "0.1") == 0 && strcmp(m.param_names[1], "depth") == 0 &&
	    strcmp(m.param_values[1], "12") == 0, "... the trial's parameters, in order");
	sr_queue_job_meta_free(&m);

	rc = sr_queue_add(q, spec, strlen(spec), &meta, err);
	is_int(rc, SR_QUEUE_EXISTS, "the same job file again: refused");
	snprintf(want, sizeof want, "add job train.003 to queue %s: already in the queue "
	    "(submitted 2025-12-01T03:33:20Z by me@laptop, the same job file); to run it again: "
	    "`spotrun requeue train.003`, or submit it under another name", url);
	is_str(err, want, "... \"already in the queue\"");
	rc = sr_queue_add(q, "[job]\n", 6, &meta, err);
	is_int(rc, SR_QUEUE_EXISTS, "another job file under the same id: refused");
	ok(strstr(err, "by me@laptop, another job file); to run it again") != NULL,
	    "... saying the file differs");
	is_str(keys(q, "pending/", out, sizeof out),
	    "pending/09999~1764560000000~train.003~1-8~H100~q~0~", "... no second marker");

	/* cut short after the spec: the same spec completes it, another is refused */
	qu_put(sr_queue_store(q), "jobs/half/spec.ini", "[job]\n", 6);
	meta.id = "half";
	rc = sr_queue_add(q, "[job]\nx\n", 8, &meta, err);
	is_int(rc, SR_QUEUE_EXISTS, "a submission cut short, another job file: refused");
	snprintf(want, sizeof want, "add job half to queue %s: a submission of it with another "
	    "job file was cut short (jobs/half/spec.ini has no meta.json): delete jobs/half/ in "
	    "the queue, or submit under another name", url);
	is_str(err, want, "... message");
	rc = sr_queue_add(q, "[job]\n", 6, &meta, err);
	su_rc_is(rc, SR_QUEUE_OK, err, "... the same job file: the submission is completed");
	ok(sr_queue_meta_read(q, "half", &m, err) == 0, "... meta.json written");
	sr_queue_job_meta_free(&m);
	{
		struct sr_queue_agent a = agent(&A, 0, NULL);
		struct sr_queue_job *j;

		ok(sr_queue_claim_id(q, &a, "half", &j, err) == 0 &&
		    sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err) == 0, "... and runs");
		sr_queue_job_free(j);
	}

	meta.id = "_bad";
	is_int(sr_queue_add(q, "x", 1, &meta, err), SR_QUEUE_ERROR, "a bad id");
	is_str(err, "add job: lease for job \"_bad\": not a job name (use 1-128 letters, digits, "
	    "'.', '_' or '-', starting with a letter or digit)", "... message");
	meta.id = "p";
	meta.priority = 10000;
	is_int(sr_queue_add(q, "x", 1, &meta, err), SR_QUEUE_ERROR, "priority 10000");
	is_str(err, "add job p: priority 10000 is out of range (-9999 to 9999)", "... message");
	meta.priority = 0;
	meta.gpus_min = 8;
	meta.gpus_max = 1;
	is_int(sr_queue_add(q, "x", 1, &meta, err), SR_QUEUE_ERROR, "gpus 8-1");
	is_str(err, "add job p: gpus 8-1 is not a range from 0 to 4096", "... message");
	meta.gpus_min = 0;
	meta.store = "ftp://nowhere";
	is_int(sr_queue_add(q, "x", 1, &meta, err), SR_QUEUE_ERROR, "a store that is no URL of ours");
	is_str(err, "add job p: store: open store ftp://nowhere: unsupported scheme \"ftp\" "
	    "(supported: file://, s3://, gs://, az://)", "... message");
}

/* A job with a checkpoint store of its own: registered under stores/. */
static void
test_own_store(struct sr_queue *q, const char *own)
{
	struct sr_queue_meta meta = { .id = "own", .store = own, .submitted = T0 + 1 };
	struct sr_queue_agent a = agent(&A, 0, NULL);
	struct sr_queue_job *j;
	struct sr_queue_job_meta m;
	struct sr_queue *q2;
	char err[SR_ERRMAX], out[2048], *s;
	int rc;

	su_rc_is(sr_queue_add(q, "[job]\n", 6, &meta, err), SR_QUEUE_OK, err,
	    "submit a job with its own store");
	keys(q, "stores/", out, sizeof out);
	ok(strlen(out) == strlen("stores/") + 16, "... registered as stores/HASH (%s)", out);
	s = qu_get(sr_queue_store(q), out, NULL);
	is_str(s, own, "... holding the store's URL");
	free(s);
	ok(sr_queue_meta_read(q, "own", &m, err) == 0 && strcmp(m.store, own) == 0,
	    "... and in meta.json");
	sr_queue_job_meta_free(&m);
	q2 = open_queue();	/* a fresh agent: the hash resolves through stores/ */
	rc = sr_queue_claim(q2, &a, &j, err);
	su_rc_is(rc, SR_QUEUE_OK, err, "a fresh agent claims it");
	ok(rc == 0 && strcmp(j->marker.id, "own") == 0 && strcmp(j->store_url, own) == 0,
	    "... in its own store");
	is_int(rc == 0 ? j->requests : -1, 4, "... 4 requests: its store's URL read once more");
	if (rc == 0) {
		struct sr_lease_info li;

		ok(sr_lease_read(j->store, "own", &li, err) == 0 && li.epoch == 1,
		    "... the lease is in that store");
		sr_queue_job_end(q2, j, SR_LEASE_SUCCEEDED, err);
		sr_queue_job_free(j);
	}
	sr_queue_close(q2);
}

static int
order_cb(const struct sr_queue_pending *p, void *arg)
{
	char *out = arg;

	snprintf(out + strlen(out), 1024 - strlen(out), "%s%s", out[0] ? " " : "", p->id);
	return 0;
}

static void
test_pending(struct sr_queue *q)
{
	struct sr_queue_agent cpu = agent(&A, 0, NULL), a100 = agent(&A, 1, "A100"),
	    h100 = agent(&A, 8, "h100"), spread = agent(&A, 0, NULL);
	struct sr_queue_counts c0, d;
	struct sr_queue_job *j;
	char err[SR_ERRMAX], order[1024] = "", want[1024], *lease;
	int bad = -1, rc;

	/* train.003 (prio 0, 1-8 H100) is there from test_add */
	add(q, "lo", -5, 0, 0, NULL, T0 + 10, NULL, err);
	add(q, "hi", 10, 0, 0, NULL, T0 + 20, NULL, err);
	add(q, "mid-late", 0, 0, 0, NULL, T0 + 30, NULL, err);
	add(q, "mid-early", 0, 0, 0, NULL, T0 + 5, NULL, err);
	add(q, "big", 0, 8, 8, NULL, T0 + 6, NULL, err);
	qu_put(sr_queue_store(q), "pending/garbage", "", 0);
	is_int(sr_queue_pending_list(q, order_cb, order, &bad, err), 0, "list pending markers");
	is_str(order, "hi train.003 mid-early big mid-late lo",
	    "... in claim order: priority first, then submit time");
	is_int(bad, 1, "... a key that does not parse is skipped and counted");
	sr_store_delete(sr_queue_store(q), "pending/garbage", err);

	/* pick = 1: strict order (an agent picks at random among the first
	 * `pick` of the best priority; the spread is checked below) */
	cpu.pick = a100.pick = h100.pick = 1;
	sr_queue_get_counts(q, &c0);
	rc = sr_queue_claim(q, &a100, &j, err);
	su_rc_is(rc, SR_QUEUE_OK, err, "an agent with one A100 claims");
	ok(rc == 0 && strcmp(j->marker.id, "hi") == 0, "... the highest priority job it fits (hi)");
	ok(rc == 0 && j->requests == 3 && j->cleanup_requests == 1, "... in 3 requests (%d), "
	    "then 1 to delete the marker", rc == 0 ? j->requests : -1);
	delta(q, &c0, &d);
	ok(d.requests == 4 && d.lists == 1 && d.gets == 1 && d.deletes == 1,
	    "... counted: 1 list, the lease's create-only put, 1 get (the spec), 1 delete");
	ok(rc == 0 && strcmp(j->spec, "[job]\nname = x\n") == 0 && j->spec_len == 15,
	    "... with its spec");
	lease = qu_get(sr_queue_store(q), "ckpt/_leases/hi", NULL);
	ok(rc == 0 && strcmp(j->store_url, sr_queue_ckpt_url(q)) == 0 &&
	    sr_lease_epoch(j->lease) == 1 && lease != NULL,
	    "... its lease in Q/ckpt (ckpt/_leases/hi), epoch 1");
	free(lease);
	if (rc == 0) {
		sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err);
		sr_queue_job_free(j);
	}
	rc = sr_queue_claim(q, &a100, &j, err);
	ok(rc == 0 && strcmp(j->marker.id, "mid-early") == 0,
	    "next: the older of the priority-0 jobs it fits (not train.003: H100; not big: 8 GPUs)");
	if (rc == 0) {
		sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err);
		sr_queue_job_free(j);
	}
	rc = sr_queue_claim(q, &h100, &j, err);
	ok(rc == 0 && strcmp(j->marker.id, "train.003") == 0, "an 8-GPU H100 agent (the type "
	    "in any case) takes train.003, the oldest of priority 0");
	if (rc == 0) {
		sr_queue_job_end(q, j, SR_LEASE_RELEASED, err);
		sr_queue_job_free(j);
	}
	rc = sr_queue_claim(q, &cpu, &j, err);
	ok(rc == 0 && strcmp(j->marker.id, "mid-late") == 0, "a CPU agent: mid-late");
	if (rc == 0) {
		sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err);
		sr_queue_job_free(j);
	}
	rc = sr_queue_claim(q, &cpu, &j, err);
	ok(rc == 0 && strcmp(j->marker.id, "lo") == 0, "... then lo");
	if (rc == 0) {
		sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err);
		sr_queue_job_free(j);
	}
	rc = sr_queue_claim(q, &cpu, &j, err);
	is_int(rc, SR_QUEUE_EMPTY, "... then nothing it can run");
	snprintf(want, sizeof want, "claim from queue %s: no job this agent can run (0 GPUs)", url);
	is_str(err, want, "... message");
	/* the rest: train.003 and big, one of them released with a lease hint */
	while (sr_queue_claim(q, &h100, &j, err) == 0) {
		sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err);
		sr_queue_job_free(j);
	}
	is_str(keys(q, "pending/", order, sizeof order), "", "every marker is gone");

	/* the default pick spreads agents over the first jobs of a priority */
	{
		int seen[4] = { 0 }, i, distinct = 0;

		for (i = 0; i < 4; i++) {
			char id[16];

			snprintf(id, sizeof id, "spread%d", i);
			add(q, id, 0, 0, 0, NULL, T0 + 100 + i, NULL, err);
		}
		for (i = 0; i < 24; i++) {
			if (sr_queue_claim(q, &spread, &j, err) != 0)
				break;
			seen[j->marker.id[6] - '0']++;
			sr_queue_job_end(q, j, SR_LEASE_RELEASED, err);
			sr_queue_job_free(j);
		}
		for (i = 0; i < 4; i++)
			distinct += seen[i] > 0;
		ok(distinct >= 3, "24 claims of 4 jobs of one priority, each released again: at "
		    "random, not always the oldest (%d %d %d %d)", seen[0], seen[1], seen[2],
		    seen[3]);
		while (sr_queue_claim(q, &spread, &j, err) == 0) {
			sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err);
			sr_queue_job_free(j);
		}
	}
}

static void
test_released(struct sr_queue *q)
{
	struct sr_queue_agent a = agent(&A, 0, NULL);
	struct sr_queue_job *j;
	char err[SR_ERRMAX], out[1024];
	int rc;

	add(q, "rel", 0, 0, 0, NULL, T0 + 40, NULL, err);
	rc = sr_queue_claim(q, &a, &j, err);
	su_rc_is(rc, SR_QUEUE_OK, err, "claim a job");
	is_int(sr_queue_job_end(q, j, SR_LEASE_RELEASED, err), SR_QUEUE_OK,
	    "release it (preempted)");
	keys(q, "pending/", out, sizeof out);
	ok(strncmp(out, "pending/09999~1764560040000~rel~0-0~~q~1~", 41) == 0 &&
	    strlen(out) > 41, "... its marker is back with the lease's epoch 1 and etag (%s)", out);
	sr_queue_job_free(j);
	rc = sr_queue_claim(q, &a, &j, err);
	su_rc_is(rc, SR_QUEUE_OK, err, "claim it again");
	is_int(rc == 0 ? j->requests : -1, 3, "... in 3 requests: a CAS over the marker's etag, "
	    "no GET of the lease");
	ok(rc == 0 && sr_lease_epoch(j->lease) == 2 && j->claim.found == 0,
	    "... epoch 2");
	is_int(sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err), SR_QUEUE_OK, "it succeeds");
	is_str(keys(q, "pending/", out, sizeof out), "", "... no marker back");
	sr_queue_job_free(j);
}

static int warnings;
static char warned[SR_ERRMAX];

static void
on_warn(void *arg, const char *msg)
{
	(void)arg;
	warnings++;
	snprintf(warned, sizeof warned, "%s", msg);
}

static void
test_stale(struct sr_queue *q)
{
	struct sr_queue_agent a = agent(&A, 0, NULL), b = agent(&X, 0, NULL);
	struct sr_queue_job *j, *jb;
	char err[SR_ERRMAX], out[2048], want[1024], marker[1024];
	int rc;

	/* a marker left behind by a claimer that died before deleting it */
	add(q, "stale", 0, 0, 0, NULL, T0 + 50, NULL, err);
	keys(q, "pending/", marker, sizeof marker);
	rc = sr_queue_claim(q, &b, &jb, err);
	su_rc_is(rc, SR_QUEUE_OK, err, "a remote agent claims a job");
	qu_put(sr_queue_store(q), marker, "", 0);
	rc = sr_queue_claim(q, &a, &j, err);
	is_int(rc, SR_QUEUE_EMPTY, "its marker put back: another agent finds the job held");
	is_str(keys(q, "pending/", out, sizeof out), "", "... and deletes the stale marker");
	sr_queue_job_end(q, jb, SR_LEASE_SUCCEEDED, err);
	sr_queue_job_free(jb);
	qu_put(sr_queue_store(q), marker, "", 0);
	is_int(sr_queue_claim(q, &a, &j, err), SR_QUEUE_EMPTY, "a marker of an ended job");
	is_str(keys(q, "pending/", out, sizeof out), "", "... is deleted too");

	/* a malformed lease: skipped with one warning, never claimed */
	add(q, "badlease", 5, 0, 0, NULL, T0 + 60, NULL, err);
	add(q, "good", 5, 0, 0, NULL, T0 + 61, NULL, err);
	qu_put(sr_queue_store(q), "ckpt/_leases/badlease", "{\"job\":", 7);
	warnings = 0;
	a.warn = on_warn;
	rc = sr_queue_claim(q, &a, &j, err);
	ok(rc == 0 && strcmp(j->marker.id, "good") == 0, "beside a malformed lease, the other job "
	    "is claimed");
	if (rc == 0) {
		sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err);
		sr_queue_job_free(j);
	}
	rc = sr_queue_claim(q, &a, &j, err);
	is_int(rc, SR_QUEUE_EMPTY, "the malformed one is never claimed");
	is_int(warnings, 1, "... one warning, once");
	snprintf(want, sizeof want, "claim lease _leases/badlease in %s: malformed: not JSON: "
	    "unexpected token near end of file at line 1, column 7; it is never claimed as "
	    "it is: `spotrun requeue badlease` replaces it, or delete the object",
	    sr_queue_ckpt_url(q));
	is_str(warned, want, "... naming the key and the fix");
	ok(strstr(keys(q, "pending/", out, sizeof out), "badlease") != NULL,
	    "... its marker stays (status shows it waiting)");
	rc = sr_queue_requeue(q, "badlease", SR_LEASE_FROM_MALFORMED, 3, &A, err);
	su_rc_is(rc, SR_QUEUE_OK, err, "requeue replaces the malformed lease");
	{
		struct sr_queue *q2 = open_queue();

		rc = sr_queue_claim(q2, &a, &j, err);
		ok(rc == 0 && strcmp(j->marker.id, "badlease") == 0 && sr_lease_epoch(j->lease) == 4,
		    "... then it is claimed, at epoch 4");
		if (rc == 0) {
			sr_queue_job_end(q2, j, SR_LEASE_SUCCEEDED, err);
			sr_queue_job_free(j);
		}
		/* older markers of badlease (without the hint) are stale now */
		while (sr_queue_claim(q2, &a, &j, err) == 0)
			sr_queue_job_free(j);
		sr_queue_close(q2);
	}
}

/* 32 processes claim from a queue of one job. */
static int
claimer(int i, void *arg)
{
	(void)arg;
	return qu_claimer(url, i, agent(NULL, 0, NULL), NULL);
}

static void
test_crowd(struct sr_queue *q)
{
	struct qu_crowd c;
	char err[SR_ERRMAX], out[1024];

	add(q, "crowd", 0, 0, 0, NULL, T0 + 70, NULL, err);
	qu_crowd_run(&c, 32, claimer, NULL);
	is_int(qu_crowd_count(&c, SR_QUEUE_OK), 1, "32 agents claim from a queue of one job: one "
	    "gets it");
	is_int(qu_crowd_count(&c, SR_QUEUE_EMPTY), 31, "... the other 31 find nothing to run");
	is_str(keys(q, "pending/", out, sizeof out), "", "... no marker left");
	qu_crowd_free(&c);
}

/* Status markers. */
struct count {
	int n, many, running;
	char last[SR_QUEUE_ID_MAX + 1];
	int sorted;
};

static int
count_cb(const struct sr_queue_status *s, void *arg)
{
	struct count *c = arg;

	c->n++;
	c->many += strncmp(s->id, "many.", 5) == 0;
	c->running += s->state == SR_LEASE_RUNNING && strncmp(s->id, "many.", 5) == 0;
	if (c->n > 1 && strcmp(c->last, s->id) >= 0)
		c->sorted = 0;
	snprintf(c->last, sizeof c->last, "%s", s->id);
	return 0;
}

struct filler {
	struct sr_queue *q;
	int from, to, bad;
};

static void *
fill_main(void *arg)
{
	struct filler *f = arg;
	char err[SR_ERRMAX];
	int i;

	for (i = f->from; i < f->to; i++) {
		struct sr_queue_status s = { .time = T0 + i, .state = SR_LEASE_SUCCEEDED,
			.attempts = 1, .step = 100 };

		snprintf(s.id, sizeof s.id, "many.%04d", i);
		if (sr_queue_status_set(f->q, &s, "", err) != 0)
			f->bad++;
	}
	return NULL;
}

static void
test_status(struct sr_queue *q, int many)
{
	struct sr_queue_status s = { .id = "st", .epoch = 7, .time = T0 + 0.123,
		.state = SR_LEASE_RUNNING, .attempts = 3, .preemptions = 2, .gpu_seconds = 7200,
		.lost_gpu_seconds = 360, .cost = 1.23456, .on_demand_cost = 4.5, .step = 4500,
		.host = "ip 10/0~1" };
	struct sr_queue_status g, s2;
	struct sr_queue_counts c0, d;
	struct count cnt = { .sorted = 1 };
	struct filler f[8];
	pthread_t th[8];
	char err[SR_ERRMAX], old[SR_QUEUE_KEY_MAX], out[2048];
	int i, stale = -1, bad = -1, nbad = 0;

	su_rc_is(sr_queue_status_set(q, &s, "", err), SR_QUEUE_OK, err, "write a status marker");
	is_str(s.key, "index/st~000000000007~1764560000123~running~3~2~7200~360~1.2346~4.5000~"
	    "4500~ip%2010%2F0%7E1", "... its key: every field, the host percent-encoded");
	su_rc_is(sr_queue_status_get(q, "st", &g, err), SR_QUEUE_OK, err, "read it back");
	ok(g.epoch == 7 && fabs(g.time - (T0 + 0.123)) < 1e-6 && g.state == SR_LEASE_RUNNING &&
	    g.attempts == 3 && g.preemptions == 2 && g.gpu_seconds == 7200 &&
	    g.lost_gpu_seconds == 360 && fabs(g.cost - 1.2346) < 1e-9 &&
	    fabs(g.on_demand_cost - 4.5) < 1e-9 && g.step == 4500 &&
	    strcmp(g.host, "ip 10/0~1") == 0, "... every field");
	snprintf(old, sizeof old, "%s", s.key);
	s2 = s;
	s2.time = T0 + 5;
	s2.state = SR_LEASE_RELEASED;
	s2.preemptions = 3;
	s2.step = -1;
	su_rc_is(sr_queue_status_set(q, &s2, old, err), SR_QUEUE_OK, err, "a transition");
	is_str(keys(q, "index/st~", out, sizeof out),
	    "index/st~000000000007~1764560005000~released~3~3~7200~360~1.2346~4.5000~~"
	    "ip%2010%2F0%7E1",
	    "... the new marker replaces the old (no step: empty)");
	s.time = T0 + 9;
	s.epoch = 8;
	sr_queue_status_set(q, &s, "", err);
	ok(sr_queue_status_get(q, "st", &g, err) == 0 && g.epoch == 8 &&
	    g.state == SR_LEASE_RUNNING, "two markers of one job: the newest (epoch 8) is taken");
	s.epoch = 9;
	sr_queue_status_set(q, &s, NULL, err);
	is_int(strchr(keys(q, "index/st~", out, sizeof out), '\t') == NULL, 1,
	    "... a write with no old key given lists them and deletes the older ones");
	sr_store_delete(sr_queue_store(q), s.key, err);

	if (!many)
		return;
	/* 2,500 jobs: 3 list requests */
	for (i = 0; i < 8; i++) {
		f[i] = (struct filler){ q, i * 2500 / 8, (i + 1) * 2500 / 8, 0 };
		pthread_create(&th[i], NULL, fill_main, &f[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		nbad += f[i].bad;
	}
	is_int(nbad, 0, "2,500 status markers written");
	for (i = 0; i < 10; i++) {
		struct sr_queue_status r = { .time = T0 + 9999, .epoch = 1,
			.state = SR_LEASE_RUNNING, .step = -1 };

		snprintf(r.id, sizeof r.id, "many.%04d", i * 100);
		sr_queue_status_set(q, &r, "", err);	/* the old one left behind */
	}
	qu_put(sr_queue_store(q), "index/not-a-marker", "", 0);
	sr_queue_get_counts(q, &c0);
	is_int(sr_queue_status_list(q, count_cb, &cnt, &stale, &bad, err), 0, "status of them all");
	delta(q, &c0, &d);
	is_int(d.requests, 3, "... in 3 list requests (2,511 markers)");
	is_int(d.gets, 0, "... and no GET");
	ok(cnt.many == 2500 && cnt.sorted, "... one entry per job, in id order (%d of %d)",
	    cnt.many, cnt.n);
	is_int(cnt.running, 10, "... the newest marker of each: the 10 rewritten are running");
	is_int(stale, 10, "... 10 older markers skipped");
	is_int(bad, 1, "... 1 key that does not parse skipped");
	sr_store_delete(sr_queue_store(q), "index/not-a-marker", err);
}

/* The same queue spelt another way by the agent than by the submitter (an
 * endpoint alias, an option of its own, file://localhost/): its jobs are
 * the agent's to claim by id, their store the queue's own. */
static void
test_spelling(void)
{
	struct sr_queue *q, *q2;
	struct sr_queue_agent a = agent(&A, 0, NULL);
	struct sr_queue_job *j;
	char err[SR_ERRMAX], alt[1200], *lo;
	int rc;

	if (strncmp(qurl2, "file://", 7) == 0)
		snprintf(alt, sizeof alt, "file://localhost%s/", qurl2 + 7);
	else if ((lo = strstr(qurl2, "127.0.0.1")) != NULL)
		snprintf(alt, sizeof alt, "%.*slocalhost%s&concurrency=3", (int)(lo - qurl2), qurl2,
		    lo + 9);
	else
		snprintf(alt, sizeof alt, "%s%cconcurrency=3", qurl2,
		    strchr(qurl2, '?') != NULL ? '&' : '?');
	if (sr_queue_open(qurl2, &q, err) != 0 || sr_queue_open(alt, &q2, err) != 0)
		sr_fatal("%s", err);
	if (add(q, "spelt", 0, 0, 0, NULL, T0 + 90, NULL, err) != 0)
		sr_fatal("add: %s", err);
	rc = sr_queue_claim_id(q2, &a, "spelt", &j, err);
	if (!ok(rc == 0, "a job submitted to %s is claimed through %s", qurl2, alt))
		tap_diag("got %d: %s", rc, err);
	if (rc == 0) {
		ok(sr_store_url_same(j->store_url, sr_queue_ckpt_url(q2)),
		    "... in the queue's own store (%s)", j->store_url);
		sr_queue_job_end(q2, j, SR_LEASE_SUCCEEDED, err);
		sr_queue_job_free(j);
	} else
		ok(0, "... in the queue's own store");
	sr_queue_close(q2);
	sr_queue_close(q);
}

static void
test_expired(void)
{
	struct sr_queue *q;
	struct sr_queue_agent a = agent(&A, 0, NULL), x = agent(&X, 0, NULL);
	struct sr_queue_expired *e;
	struct sr_queue_job *j, *jx, *ja, *jr;
	struct sr_queue_counts c0, d;
	struct sr_lease_seen *seen = sr_lease_seen_new();
	char err[SR_ERRMAX], out[2048];
	size_t n = 99, i;
	int rc, found = 0;

	if (sr_queue_open(qurl2, &q, err) != 0)
		sr_fatal("%s", err);
	a.seen = seen;
	/* 1 s, or the shortest TTL the store takes (3 s on gs://) */
	x.ttl = 3 * sr_store_write_interval(sr_queue_store(q)) > 1 ?
	    3 * sr_store_write_interval(sr_queue_store(q)) : 1;
	add(q, "dead", 0, 0, 0, NULL, T0 + 80, NULL, err);
	add(q, "live", 0, 0, 0, NULL, T0 + 81, NULL, err);
	add(q, "orphan", 0, 0, 0, NULL, T0 + 82, NULL, err);
	if (sr_queue_claim_id(q, &x, "dead", &jx, err) != 0 ||
	    sr_queue_claim_id(q, &a, "live", &ja, err) != 0 ||
	    sr_queue_claim_id(q, &a, "orphan", &jr, err) != 0)
		sr_fatal("claim_id: %s", err);
	is_str(keys(q, "pending/", out, sizeof out), "", "claim_id deletes the jobs' markers");
	sr_queue_job_end(q, jr, SR_LEASE_RELEASED, err);
	sr_store_delete(sr_queue_store(q), jr->marker.key, err);	/* its marker lost */
	sr_queue_job_free(jr);
	/* expiry is judged by what this observer saw, on its monotonic clock:
	 * a first scan has seen nothing unchanged yet */
	sr_queue_get_counts(q, &c0);
	rc = sr_queue_find_expired(q, &A, seen, x.ttl, x.ttl, &e, &n, err);
	delta(q, &c0, &d);
	ok(rc == 0 && n == 0 && d.gets == 0 && sr_lease_seen_count(seen) == 3,
	    "a first scan reads no lease: it saw none unchanged for min_age yet; it notes "
	    "the 3 (%zu found, %ld gets, %zu noted)", n, d.gets, sr_lease_seen_count(seen));
	free(e);
	sr_sleep(x.ttl + 0.3);
	sr_queue_get_counts(q, &c0);
	rc = sr_queue_find_expired(q, &A, seen, x.ttl, x.ttl, &e, &n, err);
	su_rc_is(rc, 0, err, "find leases lost with their machines");
	delta(q, &c0, &d);
	for (i = 0; i < n; i++) {
		if (strcmp(e[i].id, "dead") == 0 && e[i].wait == 0 &&
		    strcmp(e[i].lease.owner.agent, "agent-x") == 0)
			found |= 1;
		else if (strcmp(e[i].id, "orphan") == 0 && e[i].wait == 0 &&
		    e[i].lease.state == SR_LEASE_RELEASED)
			found |= 2;
		else
			found |= 4;
	}
	is_int(found, 3, "... the expired one (agent-x's) and the released one without a marker, "
	    "no other (%zu)", n);
	ok(d.gets == 3 && d.lists == 4, "... 4 listings (index, pending, Q/ckpt's leases, stores) "
	    "and a GET of each lease seen unchanged for a TTL, the live one too (%ld lists, %ld "
	    "gets)", d.lists, d.gets);
	free(e);
	rc = sr_queue_claim_id(q, &a, "dead", &j, err);
	ok(rc == 0 && j->claim.took_over && sr_lease_epoch(j->lease) == 2,
	    "claim it by id: taken over at epoch 2");
	is_int(sr_queue_job_end(q, jx, SR_LEASE_SUCCEEDED, err), SR_QUEUE_LOST,
	    "the dead agent's late end is refused: SR_QUEUE_LOST");
	rc = sr_queue_claim_id(q, &x, "live", &jr, err);
	is_int(rc, SR_QUEUE_BUSY, "claim_id of a held job: SR_QUEUE_BUSY");
	ok(strstr(err, "held by agent-a") != NULL, "... saying who holds it");
	sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err);
	sr_queue_job_end(q, ja, SR_LEASE_SUCCEEDED, err);
	sr_queue_job_free(j);
	sr_queue_job_free(jx);
	sr_queue_job_free(ja);
	rc = sr_queue_claim_id(q, &a, "orphan", &j, err);
	ok(rc == 0, "the orphan is claimed by id");
	if (rc == 0) {
		sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err);
		sr_queue_job_free(j);
	}
	sr_queue_job_free(NULL);
	sr_queue_close(q);
	sr_lease_seen_free(seen);
}

static void
test_cancel_requeue(struct sr_queue *q)
{
	struct sr_queue_agent a = agent(&A, 0, NULL);
	enum sr_queue_cancel how;
	struct sr_queue_status s;
	struct sr_lease_info li;
	struct sr_queue_job *j;
	char err[SR_ERRMAX], out[2048], want[1024];
	int cp = -1, rc;

	add(q, "cq", 0, 0, 0, NULL, T0 + 90, NULL, err);
	rc = sr_queue_cancel(q, "cq", 1, &X, &how, err);
	ok(rc == 0 && how == SR_QUEUE_CANCEL_DONE, "cancel a queued job: done at once");
	ok(sr_lease_read(sr_queue_ckpt_store(q, NULL, err), "cq", &li, err) == 0 &&
	    li.state == SR_LEASE_CANCELLED && li.epoch == 1, "... its lease: cancelled");
	ok(sr_queue_status_get(q, "cq", &s, err) == 0 && s.state == SR_LEASE_CANCELLED,
	    "... its status: cancelled");
	is_int(sr_queue_claim(q, &a, &j, err), SR_QUEUE_EMPTY, "... it is not claimed");
	rc = sr_queue_cancel(q, "cq", 1, &X, &how, err);
	ok(rc == 0 && how == SR_QUEUE_CANCEL_ENDED, "cancel it again: it had ended");
	rc = sr_queue_cancel(q, "nosuch", 1, &X, &how, err);
	is_int(rc, SR_QUEUE_NOTFOUND, "cancel an unknown job");
	snprintf(want, sizeof want, "cancel: job nosuch: not in queue %s", url);
	is_str(err, want, "... message");

	rc = sr_queue_requeue(q, "cq", SR_LEASE_BIT(SR_LEASE_FAILED), 0, &X, err);
	is_int(rc, SR_QUEUE_BUSY, "retry of a cancelled job when only failed ones are asked");
	rc = sr_queue_requeue(q, "cq", SR_LEASE_BIT(SR_LEASE_FAILED) |
	    SR_LEASE_BIT(SR_LEASE_CANCELLED), 0, &X, err);
	su_rc_is(rc, SR_QUEUE_OK, err, "retry it (failed, cancelled)");
	ok(sr_queue_status_get(q, "cq", &s, err) == 0 && s.state == SR_LEASE_QUEUED &&
	    s.epoch == 1, "... its status: queued");
	keys(q, "pending/", out, sizeof out);
	ok(strncmp(out, "pending/09999~1764560090000~cq~0-0~~q~1~", 40) == 0,
	    "... its marker back, with the lease hint (%s)", out);
	rc = sr_queue_claim(q, &a, &j, err);
	ok(rc == 0 && j->requests == 3 && sr_lease_epoch(j->lease) == 2,
	    "... claimed in 3 requests at epoch 2");
	is_int(sr_queue_cancel_requested(q, "cq", &cp, err), 0, "... no cancel request pending");

	rc = sr_queue_cancel(q, "cq", 0, &X, &how, err);
	ok(rc == 0 && how == SR_QUEUE_CANCEL_ASKED, "cancel it while it runs: asked");
	is_int(sr_queue_cancel_requested(q, "cq", &cp, err), 1, "... the holder sees the request");
	is_int(cp, 0, "... without a final checkpoint, as asked");
	s = (struct sr_queue_status){ .id = "cq", .epoch = 2, .state = SR_LEASE_CANCELLED,
		.step = -1 };
	if (rc == 0) {
		is_int(sr_queue_job_end(q, j, SR_LEASE_CANCELLED, err), SR_QUEUE_OK,
		    "... and ends the job cancelled");
		sr_queue_job_free(j);
	}
	qu_put(sr_queue_store(q), "jobs/cq/cancel", "garbage", 7);
	is_int(sr_queue_cancel_requested(q, "cq", &cp, err), 1,
	    "a cancel object that does not parse is a request");
	is_int(cp, 1, "... with a checkpoint first (nothing lost)");
	rc = sr_queue_requeue(q, "cq", SR_LEASE_TERMINALS, 0, &X, err);
	su_rc_is(rc, SR_QUEUE_OK, err, "requeue (any ended state)");
	is_int(sr_queue_cancel_requested(q, "cq", &cp, err), 0, "... the cancel request is gone");
	rc = sr_queue_claim(q, &a, &j, err);
	ok(rc == 0 && strcmp(j->marker.id, "cq") == 0, "... and it runs again");
	if (rc == 0) {
		sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err);
		sr_queue_job_free(j);
	}
	rc = sr_queue_requeue(q, "nosuch", SR_LEASE_TERMINALS, 0, &X, err);
	is_int(rc, SR_QUEUE_NOTFOUND, "requeue an unknown job");
	add(q, "fresh", 0, 0, 0, NULL, T0 + 91, NULL, err);
	rc = sr_queue_requeue(q, "fresh", SR_LEASE_TERMINALS, 0, &X, err);
	is_int(rc, SR_QUEUE_NOTFOUND, "requeue a job never claimed");
	is_str(err, "requeue fresh: it was never claimed: it is still waiting in the queue",
	    "... message");
	while (sr_queue_claim(q, &a, &j, err) == 0) {
		sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err);
		sr_queue_job_free(j);
	}
}

/* Logs. */
struct collect {
	char *data;
	size_t len;
	int segments;
	char keys[4096];
};

static int
collect_cb(void *arg, const char *key, const char *data, size_t len)
{
	struct collect *c = arg;

	c->data = sr_realloc(c->data, c->len + len + 1);
	memcpy(c->data + c->len, data, len);
	c->len += len;
	c->data[c->len] = '\0';
	c->segments++;
	snprintf(c->keys + strlen(c->keys), sizeof c->keys - strlen(c->keys), "%s%s",
	    c->keys[0] ? " " : "", key + strlen("logs/lg/"));
	return 0;
}

struct follower {
	struct sr_queue *q;
	volatile int stop;
	struct collect c;
	int rc;
};

static void *
follow_main(void *arg)
{
	struct follower *f = arg;
	char err[SR_ERRMAX];

	f->rc = sr_queue_log_follow(f->q, "lg", 0.1, &f->stop, collect_cb, &f->c, err);
	return NULL;
}

static void
test_logs(struct sr_queue *q)
{
	struct sr_queue_log *lw;
	struct collect c = { 0 };
	struct follower f = { 0 };
	pthread_t th;
	char err[SR_ERRMAX], line[128], *all = sr_calloc(1, 64 * 1024), after[SR_QUEUE_KEY_MAX] = "";
	size_t alen = 0;
	int i, cuts = 1;

	lw = sr_queue_log_open(q, "lg", 1, 1, 0.2, 1024, err);
	ok(lw != NULL, "open a log writer (segments every 0.2 s or 1 KiB)");
	for (i = 0; i < 30; i++) {
		int n = snprintf(line, sizeof line, "line %03d: %.*s\n", i, 80, "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890");

		sr_queue_log_write(lw, line, (size_t)n);
		memcpy(all + alen, line, (size_t)n);
		alen += (size_t)n;
	}
	sr_queue_log_write(lw, "no newline at the end", 21);
	memcpy(all + alen, "no newline at the end", 21);
	alen += 21;
	is_int(sr_queue_log_close(lw, err), 0, "close it: everything shipped");
	is_int(sr_queue_log_read(q, "lg", after, collect_cb, &c, err), 0, "read the log");
	ok(c.len == alen && memcmp(c.data, all, alen) == 0, "... the output, byte for byte, in "
	    "order (%zu bytes)", c.len);
	ok(c.segments >= 3, "... in %d segments of at most 1 KiB", c.segments);
	ok(strncmp(c.keys, "000000000001-0001-000000 000000000001-0001-000001", 49) == 0,
	    "... named RUN-ATTEMPT-NNNNNN (%.60s)", c.keys);
	{
		size_t o = 0;
		char *k, *save = NULL, *dup = sr_strdup(c.keys);

		(void)o;
		for (k = strtok_r(dup, " ", &save); k != NULL; k = strtok_r(NULL, " ", &save)) {
			char key[256], *seg;
			size_t n;

			snprintf(key, sizeof key, "logs/lg/%s", k);
			seg = qu_get(sr_queue_store(q), key, &n);
			if (seg == NULL || n > 1024 || (strcmp(k, strrchr(c.keys, ' ') + 1) != 0 &&
			    seg[n - 1] != '\n'))
				cuts = 0;
			free(seg);
		}
		free(dup);
	}
	ok(cuts, "... each cut after a line's end, but the last");
	ok(strcmp(after + strlen("logs/lg/"), strrchr(c.keys, ' ') + 1) == 0,
	    "... after: the last key read (%s)", after);
	free(c.data);
	memset(&c, 0, sizeof c);
	is_int(sr_queue_log_read(q, "lg", after, collect_cb, &c, err), 0, "read again from there");
	is_int(c.segments, 0, "... nothing new");

	/* follow while a second attempt writes */
	f.q = q;
	pthread_create(&th, NULL, follow_main, &f);
	lw = sr_queue_log_open(q, "lg", 1, 2, 0.1, 1024, err);
	sr_queue_log_write(lw, "attempt 2 line 1\n", 17);
	sr_sleep(0.5);
	sr_queue_log_write(lw, "attempt 2 line 2\n", 17);
	sr_queue_log_close(lw, err);
	lw = sr_queue_log_open(q, "lg", 2, 1, 0.1, 1024, err);
	sr_queue_log_write(lw, "run 2\n", 6);
	sr_queue_log_close(lw, err);
	for (i = 0; i < 50 && (f.c.len < alen + 40 || strstr(f.c.data, "run 2\n") == NULL); i++)
		sr_sleep(0.1);
	f.stop = 1;
	pthread_join(th, NULL);
	is_int(f.rc, 0, "follow the log while it grows, then stop");
	ok(f.c.len == alen + 40 && memcmp(f.c.data, all, alen) == 0 &&
	    strcmp(f.c.data + alen, "attempt 2 line 1\nattempt 2 line 2\nrun 2\n") == 0,
	    "... it saw the old segments, then the new ones in order: attempt 2, then run 2");
	ok(strstr(f.c.keys, "000000000001-0002-000000 000000000001-0002-000001 "
	    "000000000002-0001-000000") != NULL, "... (%s)", strstr(f.c.keys, "000000000001-0002"));
	free(f.c.data);
	free(all);
	is_int(sr_queue_log_read(q, "_x", after, collect_cb, &c, err), -1, "a bad id");

	/* the tail: the last segment, and the one before of the same attempt */
	{
		char *tail = NULL;
		size_t tlen = 0;

		is_int(sr_queue_log_tail(q, "lg", &tail, &tlen, err), 0, "the log's tail");
		ok(tail != NULL && tlen == 6 && strcmp(tail, "run 2\n") == 0,
		    "... the last segment alone, the one before being another attempt's");
		free(tail);
		lw = sr_queue_log_open(q, "lg", 3, 1, 0.1, 8, err);
		sr_queue_log_write(lw, "run 3 a\nrun 3 b\nrun 3 c\n", 24);
		sr_queue_log_close(lw, err);
		is_int(sr_queue_log_tail(q, "lg", &tail, &tlen, err), 0, "the tail of three segments");
		ok(tail != NULL && tlen == 16 && strcmp(tail, "run 3 b\nrun 3 c\n") == 0,
		    "... the last two, in order (%s)", tail != NULL ? tail : "NULL");
		free(tail);
		is_int(sr_queue_log_tail(q, "nolog", &tail, &tlen, err), 0, "no log: no error");
		ok(tail == NULL && tlen == 0, "... and no tail");
		is_int(sr_queue_log_tail(q, "_x", &tail, &tlen, err), -1, "a bad id");
	}
}

static void
suite(const char *name, const char *own_store, int many)
{
	struct sr_queue *q = open_queue();

	printf("# == %s: %s\n", name, url);
	test_add(q);
	test_own_store(q, own_store);
	test_pending(q);
	test_released(q);
	test_stale(q);
	test_crowd(q);
	test_status(q, many);
	test_expired();
	test_spelling();
	test_cancel_requeue(q);
	test_logs(q);
	sr_queue_close(q);
}

int
main(void)
{
	char root[512], bucket[64], own[1024], err[SR_ERRMAX];

	no_cloud();
	if (sr_lease_owner_local(&A, "agent-a", "", "local", err) != 0)
		sr_fatal("%s", err);
	memset(&X, 0, sizeof X);
	snprintf(X.host, sizeof X.host, "other-host");
	X.pid = 4242;
	snprintf(X.agent, sizeof X.agent, "agent-x");

	qu_tmpdir(root, sizeof root, "t-queue");
	snprintf(qurl, sizeof qurl, "file://%s/queue", root);
	snprintf(qurl2, sizeof qurl2, "file://%s/queue2", root);
	url = qurl;
	test_urls();
	snprintf(own, sizeof own, "file://%s/own-store", root);
	suite("file://", own, 1);
	qu_rmdir(root);

	if (qu_s3_start(bucket, sizeof bucket, "t-queue")) {
		snprintf(qurl, sizeof qurl, "s3://%s/queue?endpoint=%s", bucket,
		    su_env("SPOTRUN_TEST_S3_ENDPOINT"));
		snprintf(qurl2, sizeof qurl2, "s3://%s/queue2?endpoint=%s", bucket,
		    su_env("SPOTRUN_TEST_S3_ENDPOINT"));
		snprintf(own, sizeof own, "s3://%s/own?endpoint=%s", bucket,
		    su_env("SPOTRUN_TEST_S3_ENDPOINT"));
		url = qurl;
		suite("RGW", own, 1);
		su_bucket_rm(bucket);
	}
	if (au_start(bucket, sizeof bucket, "t-queue")) {
		const char *acct = su_env("SPOTRUN_TEST_AZ_ACCOUNT"), *ep =
		    su_env("SPOTRUN_TEST_AZ_ENDPOINT");

		snprintf(qurl, sizeof qurl, "az://%s/%s/queue?endpoint=%s", acct, bucket, ep);
		snprintf(qurl2, sizeof qurl2, "az://%s/%s/queue2?endpoint=%s", acct, bucket, ep);
		snprintf(own, sizeof own, "az://%s/%s/own?endpoint=%s", acct, bucket, ep);
		url = qurl;
		suite("Azurite", own, 1);
		au_container_rm(bucket);
	}
	/* gs:// against gcsemu with GCS's one write a second per object */
	gu_start("spotrun-queue", 1.0, "t-queue");
	snprintf(qurl, sizeof qurl, "gs://spotrun-queue/queue?endpoint=http://127.0.0.1:%d", gu.port);
	snprintf(qurl2, sizeof qurl2, "gs://spotrun-queue/queue2?endpoint=http://127.0.0.1:%d",
	    gu.port);
	snprintf(own, sizeof own, "gs://spotrun-queue/own?endpoint=http://127.0.0.1:%d", gu.port);
	url = qurl;
	suite("gcsemu (one write a second per object)", own, 0);
	gu_rate_ok("the queue's");
	return tap_done();
}
