/*
 * t-lease.c: the job lease (queue/lease.h) on file://, on Ceph RGW, on
 * Azurite (az://) and on gs:// against tests/gcsemu.py with GCS's limit of
 * one write a second per object on (the short TTLs 3 s there, a shorter
 * one refused with its message; every 429 retried until answered, no
 * object changed twice within a second):
 * claim create-only and by CAS with epoch + 1, its JSON, who holds it and
 * until when, renew, released and terminal states, requeue, expiry and the
 * same-host rule (a dead pid is taken over at once, a live or remote one
 * waits for the TTL), every kind of malformed lease object with its exact
 * message (never claimed, never changed, replaced only by requeue), the
 * keeper (renews, reports a lost lease through its fd and callback, stops
 * at once, gives up before the TTL ends when the store does not answer),
 * 32 processes claiming one job (one winner, absent and released), a
 * holder SIGSTOPped past its expiry that can neither renew nor set a state
 * once another claimed, and 2,000 random or mutated objects as a lease.
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
#include <time.h>
#include <unistd.h>

#include "lease.h"
#include "store.h"
#include "tap.h"
#include "mdemu-util.h"
#include "s3-util.h"
#include "queue-util.h"
#include "az-util.h"
#include "gs-util.h"
#include "util.h"

static struct sr_lease_owner A, B, X;
static const char *url;		/* the store under test */
static char store_url[1024];

static struct sr_store *
open_store(void)
{
	return su_store_open(url, 1);
}

/* Claim job for o (ttl, no hint): the rc; *l set on success. */
static int
claim(struct sr_store *st, const char *job, const struct sr_lease_owner *o, double ttl,
    struct sr_lease **l, struct sr_lease_claim *c, char *err)
{
	struct sr_lease_claim mine = { .owner = o, .ttl = ttl };

	if (c == NULL)
		c = &mine;
	c->owner = o;
	c->ttl = ttl;
	return sr_lease_claim(st, job, c, l, err);
}

/* want seconds as a TTL, or the shortest the store takes (3 s on gs://,
 * which takes one write of an object a second: renewals every TTL / 3). */
static double
ttl_for(struct sr_store *st, double want)
{
	double least = 3 * sr_store_write_interval(st);

	return want > least ? want : least;
}

/* The message prefix of a lease key in this store. */
static const char *
in(const char *verb, const char *job, char *buf, size_t len)
{
	snprintf(buf, len, "%s lease _leases/%s in %s: ", verb, job, url);
	return buf;
}

static void
test_basics(struct sr_store *st)
{
	struct sr_lease_claim c = { .owner = &A, .hint_etag = "" };
	struct sr_lease_info li;
	struct sr_lease *l, *l2;
	char err[SR_ERRMAX], want[2048], p[1024], until[32], etag1[SR_ETAG_MAX], *raw;
	double t0 = sr_now();
	time_t t;
	struct tm tm;
	int rc;

	rc = sr_lease_claim(st, "basic", &c, &l, err);
	su_rc_is(rc, SR_LEASE_OK, err, "claim an absent lease");
	is_int(c.requests, 1, "... one request: create-only, as the hint said none exists");
	is_int(c.found, 0, "... nothing was there");
	is_int(sr_lease_epoch(l), 1, "... epoch 1");
	is_int(sr_lease_read(st, "basic", &li, err), SR_LEASE_OK, "read it");
	is_str(li.job, "basic", "... job");
	is_int(li.epoch, 1, "... epoch");
	is_str(sr_lease_state_name(li.state), "running", "... state");
	ok(strcmp(li.owner.host, A.host) == 0 && li.owner.pid == (long)getpid() &&
	    strcmp(li.owner.boot_id, A.boot_id) == 0 && strlen(li.owner.boot_id) == 36,
	    "... owner: this host, pid and boot id (%s)", li.owner.boot_id);
	ok(strcmp(li.owner.agent, "agent-a") == 0 && strcmp(li.owner.instance, "i-0abc") == 0 &&
	    strcmp(li.owner.provider, "local") == 0, "... agent, instance, provider as given");
	ok(li.ttl == 60 && fabs(li.expires - li.renewed - 60) < 0.002 &&
	    fabs(li.claimed - t0) < 2 && li.claimed == li.renewed, "... ttl 60 s (the default), "
	    "expires = renewed + ttl, claimed now");
	strlcpy(etag1, li.etag, sizeof etag1);
	raw = qu_get(st, "_leases/basic", NULL);
	snprintf(want, sizeof want, "{\"job\":\"basic\",\"epoch\":1,\"state\":\"running\","
	    "\"owner\":{\"host\":\"%s\",\"pid\":%d,\"boot_id\":\"%s\",\"agent\":\"agent-a\","
	    "\"instance\":\"i-0abc\",\"provider\":\"local\"},\"claimed\":", A.host, (int)getpid(),
	    A.boot_id);
	ok(raw != NULL && strncmp(raw, want, strlen(want)) == 0 &&
	    strstr(raw, ",\"ttl\":60") != NULL, "the object is the JSON of doc/fleet.md");
	if (raw != NULL && strncmp(raw, want, strlen(want)) != 0)
		tap_diag("got %s", raw);
	free(raw);

	/* another agent on this machine: its holder (this process) is alive */
	memset(&c, 0, sizeof c);
	rc = claim(st, "basic", &B, 0, &l2, &c, err);
	su_rc_is(rc, SR_LEASE_HELD, err, "a second claim is refused while it is held");
	t = (time_t)li.expires;
	gmtime_r(&t, &tm);
	strftime(until, sizeof until, "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(want, sizeof want, "%sheld by agent-a (host %s, pid %d, local i-0abc) until %s (in ",
	    in("claim", "basic", p, sizeof p), A.host, (int)getpid(), until);
	qu_like(err, want, "s)", "... saying who holds it and until when");
	ok(c.found == 1 && c.prev.epoch == 1 && strcmp(c.prev.owner.agent, "agent-a") == 0,
	    "... and giving the holder's lease");
	is_int(c.requests, 1, "... after one GET");

	is_int(sr_lease_renew(l, err), SR_LEASE_OK, "renew");
	sr_lease_get_info(l, &li);
	ok(strcmp(li.etag, etag1) != 0 && li.renewed > t0, "... a new etag and renewal time");
	is_int(sr_lease_set_state(l, SR_LEASE_RELEASED, err), SR_LEASE_OK, "release it");
	is_int(sr_lease_renew(l, err), SR_LEASE_ERROR, "a released lease cannot be renewed");
	snprintf(want, sizeof want, "%snot held (epoch 1 is released)",
	    in("renew", "basic", p, sizeof p));
	is_str(err, want, "... message");
	sr_lease_free(l);

	memset(&c, 0, sizeof c);
	rc = claim(st, "basic", &B, 0, &l2, &c, err);
	su_rc_is(rc, SR_LEASE_OK, "err", "a released lease is claimed at once");
	ok(rc == 0 && sr_lease_epoch(l2) == 2 && c.found && c.prev.state == SR_LEASE_RELEASED &&
	    !c.took_over, "... epoch 2, over the released one, no takeover");
	is_int(c.requests, 2, "... GET and CAS");
	is_int(sr_lease_set_state(l2, SR_LEASE_SUCCEEDED, err), SR_LEASE_OK, "it succeeds");
	sr_lease_free(l2);

	memset(&c, 0, sizeof c);
	rc = claim(st, "basic", &A, 0, &l, &c, err);
	su_rc_is(rc, SR_LEASE_TERMINAL, err, "a succeeded job is not claimed again");
	snprintf(want, sizeof want, "%sthe job succeeded (epoch 2, by agent-b on %s); `spotrun "
	    "requeue basic` runs it again", in("claim", "basic", p, sizeof p), A.host);
	is_str(err, want, "... message");

	rc = sr_lease_requeue(st, "basic", SR_LEASE_BIT(SR_LEASE_FAILED) |
	    SR_LEASE_BIT(SR_LEASE_CANCELLED), 0, &X, NULL, NULL, err);
	is_int(rc, SR_LEASE_STATE, "retry (failed, cancelled) refuses a succeeded job");
	snprintf(want, sizeof want, "%sits state is succeeded (epoch 2), not one asked for",
	    in("requeue", "basic", p, sizeof p));
	is_str(err, want, "... message");
	rc = sr_lease_requeue(st, "basic", SR_LEASE_TERMINALS, 0, &X, NULL, &li, err);
	su_rc_is(rc, SR_LEASE_OK, err, "requeue an ended job");
	ok(li.state == SR_LEASE_QUEUED && li.epoch == 2 && strcmp(li.owner.host, "other-host") == 0,
	    "... queued, epoch kept, written by the requeuer");
	memset(&c, 0, sizeof c);
	c.hint_etag = li.etag;
	c.hint_epoch = li.epoch;
	rc = claim(st, "basic", &A, 0, &l, &c, err);
	su_rc_is(rc, SR_LEASE_OK, err, "claim the queued lease with the requeue's etag as hint");
	is_int(c.requests, 1, "... one request: a CAS over the hint");
	is_int(sr_lease_epoch(l), 3, "... epoch 3");
	is_int(sr_lease_set_state(l, SR_LEASE_FAILED, err), SR_LEASE_OK, "it fails");
	sr_lease_free(l);
	rc = sr_lease_requeue(st, "basic", SR_LEASE_BIT(SR_LEASE_FAILED), 9, &X, NULL, &li, err);
	ok(rc == SR_LEASE_OK && li.epoch == 9, "retry with the checkpoints' epoch 9: epoch 9");
	memset(&c, 0, sizeof c);
	c.hint_etag = "1234567";	/* a generation on gs://, which takes only numbers */
	c.hint_epoch = 9;
	rc = claim(st, "basic", &A, 0, &l, &c, err);
	ok(rc == SR_LEASE_OK && sr_lease_epoch(l) == 10 && c.requests == 3,
	    "a stale hint costs one request: CAS lost, GET, CAS (epoch 10)");
	is_int(sr_lease_requeue(st, "basic", SR_LEASE_BIT(SR_LEASE_RUNNING), 0, &X, NULL, NULL,
	    err), SR_LEASE_HELD, "requeue refuses a running lease that has not expired");
	sr_lease_free(l);
	is_int(sr_lease_requeue(st, "nosuch", SR_LEASE_TERMINALS, 0, &X, NULL, NULL, err),
	    SR_LEASE_NOTFOUND, "requeue of a job without a lease: SR_LEASE_NOTFOUND");
	is_int(sr_lease_read(st, "nosuch", &li, err), SR_LEASE_NOTFOUND, "read: SR_LEASE_NOTFOUND");
	snprintf(want, sizeof want, "%sno such lease", in("read", "nosuch", p, sizeof p));
	is_str(err, want, "... message");
	is_int(sr_lease_read(st, "_x", &li, err), SR_LEASE_ERROR, "a bad job name");
	is_str(err, "lease for job \"_x\": not a job name (use 1-128 letters, digits, '.', '_' "
	    "or '-', starting with a letter or digit)", "... message");
}

static void
test_expiry(struct sr_store *st)
{
	struct sr_lease_claim c = { 0 };
	struct sr_lease_owner dead = A, alive = A, remote_dead = A;
	struct sr_lease_info li;
	struct sr_lease *lx, *lx2, *la, *l;
	char err[SR_ERRMAX], want[1024], p[512];
	pid_t pid;
	int rc;

	double ttl = ttl_for(st, 1), t0;
	struct sr_lease_seen *seen = sr_lease_seen_new();
	struct sr_lease_keeper *k;

	su_rc_is(claim(st, "expiry", &X, ttl, &lx, NULL, err), SR_LEASE_OK, err,
	    ttl > 1 ? "a remote agent claims with a 3 s TTL" : "a remote agent claims with a 1 s TTL");
	su_rc_is(claim(st, "expiry2", &X, ttl, &lx2, NULL, err), SR_LEASE_OK, err,
	    "... and a second job");
	if (lx == NULL || lx2 == NULL)
		return;
	c.seen = seen;
	is_int(claim(st, "expiry", &A, 0, &la, &c, err), SR_LEASE_HELD, "held before expiry");
	sr_sleep(ttl + 0.2);
	is_int(claim(st, "expiry2", &A, 0, &l, NULL, err), SR_LEASE_HELD,
	    "... and still held, past its TTL, to a claimer that saw it only now");
	memset(&c, 0, sizeof c);
	c.seen = seen;
	rc = claim(st, "expiry", &A, 0, &la, &c, err);
	su_rc_is(rc, SR_LEASE_OK, err, "taken over once this claimer saw it unchanged past its TTL");
	ok(rc == 0 && c.took_over == SR_LEASE_TOOK_EXPIRED && sr_lease_epoch(la) == 2 &&
	    strcmp(c.prev.owner.agent, "agent-x") == 0, "... took_over (expired), epoch 2, from "
	    "agent-x");
	sr_lease_seen_free(seen);
	rc = sr_lease_renew(lx, err);
	is_int(rc, SR_LEASE_LOST, "the old holder's renewal is lost");
	snprintf(want, sizeof want, "%slost: epoch 1 is no longer ours (now epoch 2, running, "
	    "agent-a (host %s, pid %d, local i-0abc) until ", in("renew", "expiry", p, sizeof p),
	    A.host, (int)getpid());
	qu_like(err, want, "s)); stop writing for the job", "... message: who has it now");
	is_int(sr_lease_set_state(lx, SR_LEASE_SUCCEEDED, err), SR_LEASE_LOST,
	    "... and stays lost for a later write");
	sr_lease_free(lx);
	memset(&c, 0, sizeof c);
	c.watch = 1;
	t0 = sr_mono();
	rc = claim(st, "expiry2", &A, 0, &l, &c, err);
	su_rc_is(rc, SR_LEASE_OK, err, "a watching one-shot claim takes the second over too");
	ok(c.took_over == SR_LEASE_TOOK_EXPIRED && sr_mono() - t0 > ttl &&
	    sr_mono() - t0 < ttl + 2.5, "... after watching it unchanged for its TTL (%.2f s, TTL "
	    "%g s)", sr_mono() - t0, ttl);
	is_int(sr_lease_set_state(lx2, SR_LEASE_SUCCEEDED, err), SR_LEASE_LOST,
	    "the old holder cannot set a state: SR_LEASE_LOST");
	ok(sr_lease_read(st, "expiry2", &li, err) == 0 && li.state == SR_LEASE_RUNNING &&
	    li.epoch == 2 && strcmp(li.owner.agent, "agent-a") == 0,
	    "... the lease is the new holder's, untouched");
	sr_lease_free(lx2);
	sr_lease_free(l);
	sr_lease_free(la);

	/* a watching claim ends as soon as it sees the holder renew */
	su_rc_is(claim(st, "watchlive", &X, ttl_for(st, 1.5), &lx, NULL, err), SR_LEASE_OK, err,
	    "a remote agent claims and renews");
	k = sr_lease_keeper_start(lx, NULL, NULL, err);
	memset(&c, 0, sizeof c);
	c.watch = 1;
	t0 = sr_mono();
	is_int(claim(st, "watchlive", &A, 0, &l, &c, err), SR_LEASE_HELD,
	    "a watching claim of a renewed lease: SR_LEASE_HELD");
	ok(sr_mono() - t0 < ttl_for(st, 1.5), "... once it saw a renewal, before the TTL (%.2f s)",
	    sr_mono() - t0);
	sr_lease_keeper_stop(k);
	sr_lease_free(lx);

	/* the same-host rule */
	fflush(stdout);
	if ((pid = fork()) == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	dead.pid = (long)pid;
	snprintf(dead.agent, sizeof dead.agent, "dead");
	su_rc_is(claim(st, "deadpid", &dead, 60, &l, NULL, err), SR_LEASE_OK, err,
	    "a lease of a process of this machine that has exited");
	sr_lease_free(l);
	memset(&c, 0, sizeof c);
	rc = claim(st, "deadpid", &A, 0, &l, &c, err);
	su_rc_is(rc, SR_LEASE_OK, err, "... is taken over at once, 60 s before it expires");
	ok(rc == 0 && c.took_over && c.prev.owner.pid == (long)pid, "... from that pid");
	sr_lease_free(l);
	alive.pid = (long)getppid();
	su_rc_is(claim(st, "alivepid", &alive, 60, &l, NULL, err), SR_LEASE_OK, err,
	    "a lease of a live process of this machine");
	sr_lease_free(l);
	is_int(claim(st, "alivepid", &A, 0, &l, NULL, err), SR_LEASE_HELD, "... waits for its TTL");
	snprintf(remote_dead.host, sizeof remote_dead.host, "twin-host");
	remote_dead.pid = (long)pid;
	su_rc_is(claim(st, "twin", &remote_dead, 60, &l, NULL, err), SR_LEASE_OK, err,
	    "a lease with this boot id and a dead pid, but another host name");
	sr_lease_free(l);
	is_int(claim(st, "twin", &A, 0, &l, NULL, err), SR_LEASE_HELD,
	    "... waits for its TTL (a container with its own pids)");
}

/* Malformed lease objects: each with its exact reason. */
static void
test_malformed(struct sr_store *st)
{
	static const struct {
		const char *body, *why;
	} cases[] = {
		{ "not json", "not JSON: '[' or '{' expected near 'not' at line 1, column 3" },
		{ "", "not JSON: '[' or '{' expected near end of file at line 1, column 0" },
		{ "[1,2]", "not a JSON object but an array" },
		{ "{\"job\":\"m\",\"epoch\":0}", "\"epoch\" is 0, not an integer from 1 to "
		    "9223372036854775807" },
		{ "{\"job\":\"m\",\"epoch\":-3}", "\"epoch\" is -3, not an integer from 1 to "
		    "9223372036854775807" },
		{ "{\"job\":\"m\",\"epoch\":\"7\"}", "\"epoch\" is a string, not an integer" },
		{ "{\"job\":\"m\",\"epoch\":7.0}", "\"epoch\" is a real number, not an integer" },
		{ "{\"job\":\"m\"}", "no \"epoch\"" },
		{ "{\"job\":\"other\",\"epoch\":1}", "\"job\" is \"other\", not \"m\" (the job its "
		    "key names)" },
		{ "{\"job\":7}", "\"job\" is an integer, not a string" },
		{ "{\"job\":\"m\",\"epoch\":1,\"state\":\"bogus\"}", "\"state\" is \"bogus\", not one "
		    "of queued, running, released, succeeded, failed, cancelled" },
		{ "{\"job\":\"m\",\"epoch\":1,\"state\":\"running\"}", "no \"owner\"" },
		{ "{\"job\":\"m\",\"epoch\":1,\"state\":\"running\",\"owner\":[]}",
		    "\"owner\" is an array, not an object" },
		{ "{\"job\":\"m\",\"epoch\":1,\"state\":\"running\",\"owner\":{\"host\":\"h\","
		    "\"pid\":\"x\"}}", "\"owner.pid\" is a string, not an integer" },
		{ "{\"job\":\"m\",\"epoch\":1,\"state\":\"running\",\"owner\":{\"host\":\"\","
		    "\"pid\":1}}", "\"owner.host\" is empty" },
		{ "{\"job\":\"m\",\"epoch\":1,\"state\":\"running\",\"owner\":{\"host\":\"h\","
		    "\"pid\":1,\"boot_id\":\"b\",\"agent\":\"\",\"instance\":\"\",\"provider\":\"\"},"
		    "\"claimed\":1,\"renewed\":1,\"expires\":-1,\"ttl\":60}",
		    "\"expires\" is -1, not a number from 0 to 1e+11" },
		{ "{\"job\":\"m\",\"epoch\":1,\"state\":\"running\",\"owner\":{\"host\":\"h\","
		    "\"pid\":1,\"boot_id\":\"b\",\"agent\":\"\",\"instance\":\"\",\"provider\":\"\"},"
		    "\"claimed\":1,\"renewed\":1,\"expires\":1,\"ttl\":0}",
		    "\"ttl\" is 0, not a number from 1 to 86400" },
		{ "{\"job\":\"m\",\"epoch\":1,\"epoch\":2}", "not JSON: duplicate object key near "
		    "'\"epoch\"' at line 1, column 28" },
	};
	char err[SR_ERRMAX], want[1024], p[512], *before, *after;
	struct sr_lease_info li;
	struct sr_lease *l;
	size_t i, big = 5000;
	char *body;
	int rc, same = 1, all = 1;

	for (i = 0; i < SR_ARRAY_LEN(cases); i++) {
		char job[16];

		snprintf(job, sizeof job, "m");
		qu_put(st, "_leases/m", cases[i].body, strlen(cases[i].body));
		rc = claim(st, job, &A, 0, &l, NULL, err);
		snprintf(want, sizeof want, "%smalformed: %s; it is never claimed as it is: `spotrun "
		    "requeue m` replaces it, or delete the object", in("claim", "m", p, sizeof p),
		    cases[i].why);
		if (rc != SR_LEASE_MALFORMED || strcmp(err, want) != 0) {
			all = 0;
			tap_diag("case %zu: rc %d\n#  got  %s\n#  want %s", i, rc, err, want);
		}
		after = qu_get(st, "_leases/m", NULL);
		same = same && after != NULL && strcmp(after, cases[i].body) == 0;
		free(after);
	}
	ok(all, "%zu kinds of malformed lease: SR_LEASE_MALFORMED with the exact reason, the key "
	    "and the fix", SR_ARRAY_LEN(cases));
	ok(same, "... and none of them was written over");

	body = sr_malloc(big + 1);
	memset(body, ' ', big);
	memcpy(body, "{\"job\":\"m\"", 10);
	body[big - 1] = '}';
	body[big] = '\0';
	qu_put(st, "_leases/m", body, big);
	is_int(sr_lease_read(st, "m", &li, err), SR_LEASE_MALFORMED, "a 5000-byte lease");
	snprintf(want, sizeof want, "%smalformed: 5000 bytes, more than the 4096 a lease may have; "
	    "it is never claimed as it is: `spotrun requeue m` replaces it, or delete the object",
	    in("read", "m", p, sizeof p));
	is_str(err, want, "... message");
	free(body);
	big = 200 * 1024;
	body = sr_calloc(1, big);
	qu_put(st, "_leases/m", body, big);
	is_int(claim(st, "m", &A, 0, &l, NULL, err), SR_LEASE_MALFORMED, "a 200 KiB lease");
	snprintf(want, sizeof want, "%smalformed: 204800 bytes, more than the 4096 a lease may "
	    "have; it is never claimed as it is: `spotrun requeue m` replaces it, or delete the "
	    "object", in("claim", "m", p, sizeof p));
	is_str(err, want, "... message (too large to read: its size from a HEAD)");
	free(body);

	qu_put(st, "_leases/m", "{\"job\":", 7);
	is_int(sr_lease_requeue(st, "m", SR_LEASE_TERMINALS, 0, &X, NULL, NULL, err),
	    SR_LEASE_MALFORMED, "requeue without SR_LEASE_FROM_MALFORMED leaves it");
	before = qu_get(st, "_leases/m", NULL);
	ok(before != NULL && strcmp(before, "{\"job\":") == 0, "... unchanged");
	free(before);
	rc = sr_lease_requeue(st, "m", SR_LEASE_FROM_MALFORMED, 5, &X, NULL, &li, err);
	su_rc_is(rc, SR_LEASE_OK, err, "requeue with SR_LEASE_FROM_MALFORMED replaces it");
	ok(li.state == SR_LEASE_QUEUED && li.epoch == 5, "... queued at the epoch given (5)");
	rc = claim(st, "m", &A, 0, &l, NULL, err);
	ok(rc == SR_LEASE_OK && sr_lease_epoch(l) == 6, "... then claimed at epoch 6");
	if (rc == 0)
		sr_lease_free(l);
}

/* Keeper callbacks record here. */
static int lost_calls;
static char lost_why[SR_ERRMAX];

static void
on_lost(void *arg, int rc, const char *why)
{
	(void)arg;
	lost_calls++;
	snprintf(lost_why, sizeof lost_why, "%s (%s)", why, sr_lease_rc_name(rc));
}

static void
test_keeper(struct sr_store *st)
{
	struct sr_lease_keeper *k;
	struct sr_lease *l, *l2;
	char err[SR_ERRMAX], why[SR_ERRMAX], want[1024], p[512], body[512];
	double t0;
	int rc;

	double ttl = ttl_for(st, 1.5);

	su_rc_is(claim(st, "keep", &A, ttl, &l, NULL, err), SR_LEASE_OK, err,
	    ttl > 1.5 ? "claim, TTL 3 s" : "claim, TTL 1.5 s");
	k = sr_lease_keeper_start(l, on_lost, NULL, err);
	ok(k != NULL, "start its keeper");
	sr_sleep(ttl * 2.2 / 1.5);
	ok(sr_lease_keeper_renewals(k) >= 3, "it renewed every TTL / 3 (%d in %.1f s)",
	    sr_lease_keeper_renewals(k), ttl * 2.2 / 1.5);
	is_int(claim(st, "keep", &B, 0, &l2, NULL, err), SR_LEASE_HELD,
	    "still held %.1f s after its first expiry", ttl * 0.7 / 1.5);
	is_int(sr_lease_keeper_status(k, why), SR_LEASE_OK, "the keeper says held");
	ok(!qu_readable(sr_lease_keeper_fd(k), 0), "... its fd is not readable");
	t0 = sr_mono();
	sr_lease_keeper_stop(k);
	ok(sr_mono() - t0 < 0.1, "it stops at once (%.3f s)", sr_mono() - t0);
	is_int(sr_lease_set_state(l, SR_LEASE_SUCCEEDED, err), SR_LEASE_OK, "then the job ends");
	sr_lease_free(l);

	su_rc_is(claim(st, "keeplost", &A, ttl, &l, NULL, err), SR_LEASE_OK, err, "claim another");
	lost_calls = 0;
	k = sr_lease_keeper_start(l, on_lost, NULL, err);
	/* someone writes over it (an operator, a bug): the next CAS is lost */
	snprintf(body, sizeof body, "{\"job\":\"keeplost\",\"epoch\":2,\"state\":\"running\","
	    "\"owner\":{\"host\":\"h2\",\"pid\":7,\"boot_id\":\"\",\"agent\":\"agent-b\","
	    "\"instance\":\"\",\"provider\":\"\"},\"claimed\":%.3f,\"renewed\":%.3f,"
	    "\"expires\":%.3f,\"ttl\":60}", sr_now(), sr_now(), sr_now() + 60);
	qu_put(st, "_leases/keeplost", body, strlen(body));
	ok(qu_readable(sr_lease_keeper_fd(k), 2), "the keeper's fd becomes readable");
	rc = sr_lease_keeper_status(k, why);
	is_int(rc, SR_LEASE_LOST, "... status SR_LEASE_LOST");
	snprintf(want, sizeof want, "%slost: epoch 1 is no longer ours (now epoch 2, running, "
	    "agent-b (host h2, pid 7) until ", in("renew", "keeplost", p, sizeof p));
	qu_like(why, want, "s)); stop writing for the job", "... why");
	is_int(lost_calls, 1, "the callback ran once");
	snprintf(want, sizeof want, "%s (SR_LEASE_LOST)", why);
	is_str(lost_why, want, "... with the same reason");
	sr_lease_keeper_stop(k);
	is_int(sr_lease_renew(l, err), SR_LEASE_LOST, "the lost lease stays lost (SR_LEASE_LOST)");
	snprintf(want, sizeof want, "%slost: epoch 1 was taken over; stop writing for the job",
	    in("renew", "keeplost", p, sizeof p));
	is_str(err, want, "... saying so");
	sr_lease_free(l);
}

/* 32 processes claim one job. */
static int
racer(int i, void *arg)
{
	struct sr_lease_owner me;
	struct sr_lease *l;
	struct sr_store *st;
	char err[SR_ERRMAX], agent[32];
	int rc;

	snprintf(agent, sizeof agent, "racer-%d", i);
	sr_lease_owner_local(&me, agent, "", "local", err);
	if (sr_store_open(url, &st, err) != 0)
		return 99;
	rc = claim(st, arg, &me, 0, &l, NULL, err);
	if (rc == 0)
		sr_lease_free(l);
	sr_store_close(st);
	return rc;
}

static void
test_race(struct sr_store *st)
{
	struct qu_crowd c;
	struct sr_lease_info li;
	struct sr_lease *l;
	char err[SR_ERRMAX];

	qu_crowd_run(&c, 32, racer, "race");
	is_int(qu_crowd_count(&c, SR_LEASE_OK), 1, "32 processes claim an absent lease: one wins");
	is_int(qu_crowd_count(&c, SR_LEASE_HELD), 31, "... the other 31 see it held");
	ok(sr_lease_read(st, "race", &li, err) == 0 && li.epoch == 1 &&
	    strncmp(li.owner.agent, "racer-", 6) == 0, "... epoch 1, a racer's");
	qu_crowd_free(&c);

	if (claim(st, "race2", &A, 0, &l, NULL, err) != 0 ||
	    sr_lease_set_state(l, SR_LEASE_RELEASED, err) != 0)
		sr_fatal("race2: %s", err);
	sr_lease_free(l);
	qu_crowd_run(&c, 32, racer, "race2");
	is_int(qu_crowd_count(&c, SR_LEASE_OK), 1, "32 processes claim a released lease: one wins");
	is_int(qu_crowd_count(&c, SR_LEASE_HELD), 31, "... the other 31 see it held");
	ok(sr_lease_read(st, "race2", &li, err) == 0 && li.epoch == 2, "... epoch 2");
	qu_crowd_free(&c);
}

/* A holder stopped past its expiry: once resumed it can neither set a
 * state nor renew. */
static void
test_sigstop(struct sr_store *st)
{
	struct sr_lease_claim c = { 0 };
	struct sr_lease_seen *seen = sr_lease_seen_new();
	struct sr_lease_info li;
	struct sr_lease *l;
	int ready[2], go[2], res[2], r[2] = { 99, 99 };
	char err[SR_ERRMAX], b;
	pid_t pid;
	int rc;
	double ttl = ttl_for(st, 2);

	if (pipe(ready) == -1 || pipe(go) == -1 || pipe(res) == -1)
		sr_fatal("pipe");
	fflush(stdout);
	if ((pid = fork()) == 0) {
		struct sr_lease_owner me;
		struct sr_lease *l1, *l2;
		struct sr_lease_keeper *k;
		struct sr_store *cst;
		char cerr[SR_ERRMAX];

		sr_lease_owner_local(&me, "stopped", "", "local", cerr);
		if (sr_store_open(url, &cst, cerr) != 0 || claim(cst, "stop1", &me, ttl, &l1, NULL,
		    cerr) != 0 || claim(cst, "stop2", &me, ttl, &l2, NULL, cerr) != 0 ||
		    (k = sr_lease_keeper_start(l2, NULL, NULL, cerr)) == NULL)
			_exit(1);
		/* stopped right after a renewal, never inside one */
		while (sr_lease_keeper_renewals(k) < 1)
			sr_sleep(0.01);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(1);
		r[0] = sr_lease_set_state(l1, SR_LEASE_SUCCEEDED, cerr);
		r[1] = qu_readable(sr_lease_keeper_fd(k), 3) ? sr_lease_keeper_status(k, NULL) : 0;
		/* the renewal in flight answered before the process ends */
		sr_lease_keeper_stop(k);
		if (write(res[1], r, sizeof r) != (ssize_t)sizeof r)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], &b, 1) != 1)
		sr_fatal("the stopped holder did not start");
	kill(pid, SIGSTOP);
	c.seen = seen;
	is_int(claim(st, "stop1", &A, 0, &l, &c, err), SR_LEASE_HELD,
	    "a SIGSTOPped holder's lease is held until seen unchanged for its TTL");
	memset(&c, 0, sizeof c);
	c.seen = seen;
	is_int(claim(st, "stop2", &A, 0, &l, &c, err), SR_LEASE_HELD, "... both");
	sr_sleep(ttl + 0.8);
	memset(&c, 0, sizeof c);
	c.seen = seen;
	rc = claim(st, "stop1", &A, 0, &l, &c, err);
	ok(rc == SR_LEASE_OK && c.took_over && sr_lease_epoch(l) == 2,
	    "a holder SIGSTOPped past its expiry is taken over (epoch 2)");
	if (rc == 0)
		sr_lease_free(l);
	memset(&c, 0, sizeof c);
	c.seen = seen;
	rc = claim(st, "stop2", &A, 0, &l, &c, err);
	ok(rc == SR_LEASE_OK && sr_lease_epoch(l) == 2, "... its kept lease too");
	sr_lease_seen_free(seen);
	if (rc == 0)
		sr_lease_free(l);
	kill(pid, SIGCONT);
	if (write(go[1], "g", 1) != 1 || read(res[0], r, sizeof r) != (ssize_t)sizeof r)
		r[0] = r[1] = 98;
	waitpid(pid, NULL, 0);
	is_int(r[0], SR_LEASE_LOST, "resumed, it cannot set a state: SR_LEASE_LOST");
	is_int(r[1], SR_LEASE_LOST, "... and its keeper reports the lease lost");
	ok(sr_lease_read(st, "stop1", &li, err) == 0 && li.epoch == 2 &&
	    li.state == SR_LEASE_RUNNING && strcmp(li.owner.agent, "agent-a") == 0,
	    "... the lease is the new holder's, untouched");
	close(ready[0]);
	close(go[0]);
	close(go[1]);
	close(res[0]);
	close(res[1]);
}

/* 2,000 objects: random bytes, and a valid lease with random bytes changed. */
static void
test_fuzz(struct sr_store *st)
{
	char err[SR_ERRMAX], buf[700], valid[600];
	struct sr_lease *l;
	unsigned seed = 12345;
	int i, malformed = 0, claimed = 0, other = 0, bad_rc = 0, vlen;

	vlen = snprintf(valid, sizeof valid, "{\"job\":\"fz\",\"epoch\":3,\"state\":\"released\","
	    "\"owner\":{\"host\":\"h\",\"pid\":9,\"boot_id\":\"\",\"agent\":\"a\",\"instance\":"
	    "\"\",\"provider\":\"\"},\"claimed\":1.5,\"renewed\":2,\"expires\":3,\"ttl\":60}");
	for (i = 0; i < 2000; i++) {
		size_t len, j;
		int rc;

		if (i < 1000) {
			len = (size_t)(rand_r(&seed) % 600);
			for (j = 0; j < len; j++)
				buf[j] = (char)rand_r(&seed);
		} else {
			int flips = 1 + rand_r(&seed) % 4;

			len = (size_t)vlen;
			memcpy(buf, valid, len);
			while (flips-- > 0)
				buf[rand_r(&seed) % len] = (char)rand_r(&seed);
		}
		qu_put(st, "_leases/fz", buf, len);
		rc = claim(st, "fz", &A, 0, &l, NULL, err);
		if (rc == SR_LEASE_MALFORMED)
			malformed++;
		else if (rc == SR_LEASE_OK) {
			claimed++;
			sr_lease_free(l);
		} else if (rc == SR_LEASE_HELD || rc == SR_LEASE_TERMINAL)
			other++;
		else {
			bad_rc++;
			if (bad_rc < 4)
				tap_diag("object %d: rc %d: %s", i, rc, err);
		}
		if (i == 999) {
			is_int(malformed, 1000, "1,000 objects of random bytes: all malformed, none "
			    "claimed, no crash");
			malformed = 0;
		}
	}
	ok(malformed + claimed + other == 1000 && bad_rc == 0 && malformed > 500,
	    "1,000 valid leases with bytes changed: malformed (%d) or a valid lease (%d claimed, "
	    "%d held or ended), no other outcome", malformed, claimed, other);
}

static void
suite(const char *name, int full)
{
	struct sr_store *st = open_store();

	printf("# == %s: %s\n", name, url);
	test_basics(st);
	test_expiry(st);
	test_malformed(st);
	test_keeper(st);
	test_race(st);
	test_sigstop(st);
	if (full)
		test_fuzz(st);
	sr_store_close(st);
}

/* Where the store takes one write of an object a second (gs://), a TTL
 * whose renewals would come faster is refused. */
static void
test_short_ttl(struct sr_store *st)
{
	struct sr_lease *l;
	char err[SR_ERRMAX], want[1024];

	is_int(claim(st, "short", &A, 2.5, &l, NULL, err), SR_LEASE_ERROR,
	    "gs://: a TTL of 2.5 s is refused (renewals every 0.83 s)");
	snprintf(want, sizeof want, "claim lease _leases/short in %s: a TTL of 2.5s is too short "
	    "for this store, which takes one write of an object every 1s, and the lease is "
	    "renewed every TTL / 3: use 3s or more", url);
	is_str(err, want, "... message");
	su_rc_is(claim(st, "short", &A, 3, &l, NULL, err), SR_LEASE_OK, err, "... 3 s is taken");
	sr_lease_free(l);
}

/* A number of seconds, to the nanosecond. */
static void
is_near(double got, double want, const char *what)
{
	ok(fabs(got - want) < 1e-9, "%s (%g)", what, got);
}

/* An observer's record and the judgement on it: pure, no store, no
 * clock (the times are given). */
static void
test_seen(void)
{
	struct sr_lease_seen *s = sr_lease_seen_new();
	struct sr_lease_info li;
	struct sr_lease_owner far = X;
	double wait = -1;
	int y;

	is_near(sr_lease_seen_note(s, "file:///a", "j", "e1", 100), 0, "a lease first seen: 0 s");
	is_near(sr_lease_seen_note(s, "file:///a", "j", "e1", 130.5), 30.5,
	    "... the same etag 30.5 s later: unchanged for 30.5 s");
	is_near(sr_lease_seen_note(s, "file:///a", "j", "e2", 131), 0, "a new etag: 0 again");
	is_near(sr_lease_seen_note(s, "file:///a", "j", "e2", 140), 9, "... counted from it");
	is_near(sr_lease_seen_note(s, "file:///b", "j", "e2", 141), 0,
	    "the same job in another store is another lease");
	is_near(sr_lease_seen_note(s, "file:///a", "i", "e2", 142), 0, "... so is another job");
	is_near(sr_lease_seen_note(s, "file:///a", "k", "e3", 142), 0, "... and one after it");
	is_int((int)sr_lease_seen_count(s), 4, "4 leases noted");
	is_near(sr_lease_seen_note(s, "file:///a", "j", "e2", 150), 19, "j is still there (19 s)");
	sr_lease_seen_forget(s, 145);
	is_int((int)sr_lease_seen_count(s), 1, "forget those not noted since 145: j stays");
	is_near(sr_lease_seen_note(s, "file:///a", "j", "e2", 160), 29, "... with its history");
	is_near(sr_lease_seen_note(s, "file:///b", "j", "e2", 160), 0, "... the others start anew");
	is_near(sr_lease_seen_note(s, "file:///a", "j", "e2", 130), 0,
	    "a time before the first: 0, never negative");
	sr_lease_seen_free(s);
	sr_lease_seen_free(NULL);

	memset(&li, 0, sizeof li);
	li.state = SR_LEASE_RUNNING;
	li.ttl = 6;
	li.owner = far;
	/* the holder's own times say nothing: one far in the past, one far ahead */
	li.expires = 1;
	y = sr_lease_may_claim(&li, &A, 5.9, &wait);
	ok(!y && fabs(wait - 0.1) < 1e-9,
	    "running, expires long past by its writer's clock, seen unchanged 5.9 s of a 6 s TTL: "
	    "not claimable, 0.1 s to wait (%g)", wait);
	li.expires = 4e9;
	ok(!sr_lease_may_claim(&li, &A, 6, NULL), "... 6 s: not yet (more than the TTL is needed)");
	ok(sr_lease_may_claim(&li, &A, 6.01, &wait) && wait == 0,
	    "... 6.01 s: claimable although expires is 2096, wait 0");
	ok(!sr_lease_may_claim(&li, NULL, 0, &wait) && wait == 6, "seen just now: wait the TTL");
	li.state = SR_LEASE_RELEASED;
	ok(sr_lease_may_claim(&li, &A, 0, &wait) && wait == 0, "released: claimable at once");
	li.state = SR_LEASE_QUEUED;
	ok(sr_lease_may_claim(&li, &A, 0, NULL), "queued: claimable at once");
	li.state = SR_LEASE_SUCCEEDED;
	ok(!sr_lease_may_claim(&li, &A, 1e9, &wait) && wait == 0, "succeeded: never, wait 0");
}

/* The keeper against a store that stops answering: it gives the lease up
 * before the TTL ends, while the renewal still hangs. */
static void
test_keeper_giveup(const char *bucket)
{
	struct su_proxy px = { 0 };
	struct sr_lease_keeper *k;
	struct sr_store *st;
	struct sr_lease *l;
	char err[SR_ERRMAX], why[SR_ERRMAX], purl[1024], want[1024];
	double t0, t_lost;

	su_proxy_start(&px, "pass");
	snprintf(purl, sizeof purl, "s3://%s/giveup?endpoint=http://127.0.0.1:%d&attempts=1",
	    bucket, px.port);
	st = su_store_open(purl, 1);
	su_rc_is(claim(st, "gu", &A, 3, &l, NULL, err), SR_LEASE_OK, err,
	    "through a proxy: claim with TTL 3 s");
	k = sr_lease_keeper_start(l, NULL, NULL, err);
	t0 = sr_mono();
	/* a stopped proxy: the open connection hangs, new ones are not accepted */
	kill(px.pid, SIGSTOP);
	ok(qu_readable(sr_lease_keeper_fd(k), 4), "the store hangs: the keeper gives up");
	t_lost = sr_mono() - t0;
	ok(t_lost < 3.0, "... before its 3 s TTL ends (%.2f s; it gives up at 2.5 s after the "
	    "last renewal)", t_lost);
	is_int(sr_lease_keeper_status(k, why), SR_LEASE_LOST, "... SR_LEASE_LOST");
	snprintf(want, sizeof want, "renew lease _leases/gu in %s: lost: not renewed for ", purl);
	qu_like(why, want, "s, too close to its expiry to go on (last error: a renewal still in "
	    "flight)", "... why");
	kill(px.pid, SIGCONT);
	sr_lease_keeper_stop(k);
	sr_lease_free(l);
	sr_store_close(st);
	su_proxy_stop(&px);
}

int
main(void)
{
	char root[512], bucket[64], err[SR_ERRMAX];

	no_cloud();
	if (sr_lease_owner_local(&A, "agent-a", "i-0abc", "local", err) != 0)
		sr_fatal("%s", err);
	B = A;
	snprintf(B.agent, sizeof B.agent, "agent-b");
	memset(&X, 0, sizeof X);
	snprintf(X.host, sizeof X.host, "other-host");
	X.pid = 4242;
	snprintf(X.boot_id, sizeof X.boot_id, "00000000-0000-0000-0000-000000000000");
	snprintf(X.agent, sizeof X.agent, "agent-x");

	test_seen();
	qu_tmpdir(root, sizeof root, "t-lease");
	snprintf(store_url, sizeof store_url, "file://%s/store", root);
	url = store_url;
	suite("file://", 1);
	qu_rmdir(root);

	if (qu_s3_start(bucket, sizeof bucket, "t-lease")) {
		snprintf(store_url, sizeof store_url, "s3://%s/leases?endpoint=%s", bucket,
		    su_env("SPOTRUN_TEST_S3_ENDPOINT"));
		url = store_url;
		suite("RGW", 0);
		test_keeper_giveup(bucket);
		su_bucket_rm(bucket);
	}
	if (au_start(bucket, sizeof bucket, "t-lease")) {
		snprintf(store_url, sizeof store_url, "az://%s/%s/leases?endpoint=%s",
		    su_env("SPOTRUN_TEST_AZ_ACCOUNT"), bucket, su_env("SPOTRUN_TEST_AZ_ENDPOINT"));
		url = store_url;
		suite("Azurite", 0);
		au_container_rm(bucket);
	}
	/* gs:// against gcsemu with GCS's one write a second per object */
	gu_start("spotrun-lease", 1.0, "t-lease");
	snprintf(store_url, sizeof store_url, "gs://spotrun-lease/leases?endpoint=http://127.0.0.1:%d",
	    gu.port);
	url = store_url;
	suite("gcsemu (one write a second per object)", 0);
	{
		struct sr_store *st = open_store();

		test_short_ttl(st);
		sr_store_close(st);
	}
	gu_rate_ok("the leases'");
	return tap_done();
}
