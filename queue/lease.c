/*
 * lease.c: the job lease of doc/fleet.md (lease.h): its JSON form, strict
 * parsing (a malformed object is reported with its key and never claimed),
 * and the conditional writes that claim, renew, end and requeue it.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lease-int.h"
#include "util.h"

/* What a GET may bring back: beyond SR_LEASE_BYTES_MAX it is malformed,
 * beyond this it is not even read. */
#define READ_MAX (64 * 1024)
/* Lost races a claim retries over the winner before it gives up. */
#define CLAIM_TRIES 8

const char *
sr_lease_rc_name(int rc)
{
	switch (rc) {
	case SR_LEASE_OK:
		return "SR_LEASE_OK";
	case SR_LEASE_ERROR:
		return "SR_LEASE_ERROR";
	case SR_LEASE_HELD:
		return "SR_LEASE_HELD";
	case SR_LEASE_LOST:
		return "SR_LEASE_LOST";
	case SR_LEASE_MALFORMED:
		return "SR_LEASE_MALFORMED";
	case SR_LEASE_TERMINAL:
		return "SR_LEASE_TERMINAL";
	case SR_LEASE_NOTFOUND:
		return "SR_LEASE_NOTFOUND";
	case SR_LEASE_STATE:
		return "SR_LEASE_STATE";
	}
	return "SR_LEASE_UNKNOWN";
}

int
sr_lease_job_check(const char *job, char *err)
{
	size_t n = job != NULL ? strlen(job) : 0, i;

	if (n == 0)
		return sr_err(err, "lease: no job name given");
	for (i = 0; i < n; i++) {
		char c = job[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			break;
	}
	if (i == n && n <= SR_LEASE_JOB_MAX)
		return 0;
	return sr_err(err, "lease for job \"%.*s%s\": not a job name (use 1-%d letters, digits, "
	    "'.', '_' or '-', starting with a letter or digit)", 64, job, n > 64 ? "..." : "",
	    SR_LEASE_JOB_MAX);
}

/* Copy s into dst (cap bytes); -1 when it does not fit. */
static int
copy_str(char *dst, size_t cap, const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n >= cap)
		return -1;
	memcpy(dst, s != NULL ? s : "", n);
	dst[n] = '\0';
	return 0;
}

int
sr_lease_owner_local(struct sr_lease_owner *o, const char *agent, const char *instance,
    const char *provider, char *err)
{
	char *boot = NULL;
	size_t n;

	memset(o, 0, sizeof *o);
	if (gethostname(o->host, sizeof o->host - 1) == -1)
		return sr_errno(err, "lease owner: gethostname");
	o->pid = (long)getpid();
	/* Without a boot id (not Linux, or no /proc) the same-host rule is off:
	 * the lease then waits for its TTL, which is safe. */
	if (sr_read_file("/proc/sys/kernel/random/boot_id", 256, &boot, &n, NULL) == 0) {
		while (n > 0 && (boot[n - 1] == '\n' || boot[n - 1] == ' '))
			boot[--n] = '\0';
		if (copy_str(o->boot_id, sizeof o->boot_id, boot) == -1)
			o->boot_id[0] = '\0';
		free(boot);
	}
	if (copy_str(o->agent, sizeof o->agent, agent) == -1)
		return sr_err(err, "lease owner: agent id \"%.40s...\" is longer than %zu bytes",
		    agent, sizeof o->agent - 1);
	if (copy_str(o->instance, sizeof o->instance, instance) == -1)
		return sr_err(err, "lease owner: instance id \"%.40s...\" is longer than %zu bytes",
		    instance, sizeof o->instance - 1);
	if (copy_str(o->provider, sizeof o->provider, provider) == -1)
		return sr_err(err, "lease owner: provider \"%.40s...\" is longer than %zu bytes",
		    provider, sizeof o->provider - 1);
	return 0;
}

/* ---- reading ---- */

static void
lease_key(char *key, size_t len, const char *job)
{
	snprintf(key, len, "_leases/%s", job);
}

/* The fix a malformed lease's message names. */
#define MALFORMED_FIX "it is never claimed as it is: `spotrun requeue %s` replaces it, " \
	"or delete the object"

/* Read job's lease (key given) into li, its etag with it; *requests
 * counted. A malformed object: SR_LEASE_MALFORMED, li->etag still set. */
static int
read_lease(struct sr_store *st, const char *job, const char *key, const char *verb,
    struct sr_lease_info *li, int *requests, char *err)
{
	char etag[SR_ETAG_MAX], why[320], serr[SR_ERRMAX];
	struct sr_object_info oi;
	void *buf;
	size_t len;
	int rc;

	(*requests)++;
	rc = sr_store_get(st, key, READ_MAX, &buf, &len, etag, err);
	if (rc == SR_STORE_NOTFOUND) {
		memset(li, 0, sizeof *li);
		sr_err(err, "%s lease %s in %s: no such lease", verb, key, sr_store_url(st));
		return SR_LEASE_NOTFOUND;
	}
	if (rc != SR_STORE_OK) {
		/* too large to read at all? that is a malformed lease, not an I/O error */
		(*requests)++;
		if (sr_store_head(st, key, &oi, serr) == SR_STORE_OK && oi.size > READ_MAX) {
			memset(li, 0, sizeof *li);
			snprintf(li->etag, sizeof li->etag, "%s", oi.etag);
			sr_err(err, "%s lease %s in %s: malformed: %llu bytes, more than the %d a "
			    "lease may have; " MALFORMED_FIX, verb, key, sr_store_url(st),
			    (unsigned long long)oi.size, SR_LEASE_BYTES_MAX, job);
			return SR_LEASE_MALFORMED;
		}
		sr_err_prefix(err, "%s lease", verb);
		return SR_LEASE_ERROR;
	}
	if (sr_lease_json_parse(job, buf, len, li, why, sizeof why) != NULL) {
		free(buf);
		memset(li, 0, sizeof *li);
		snprintf(li->etag, sizeof li->etag, "%s", etag);
		sr_err(err, "%s lease %s in %s: malformed: %s; " MALFORMED_FIX, verb, key,
		    sr_store_url(st), why, job);
		return SR_LEASE_MALFORMED;
	}
	free(buf);
	snprintf(li->etag, sizeof li->etag, "%s", etag);
	return SR_LEASE_OK;
}

int
sr_lease_read(struct sr_store *st, const char *job, struct sr_lease_info *out, char *err)
{
	char key[SR_LEASE_JOB_MAX + 16];
	int requests = 0;

	if (sr_lease_job_check(job, err) == -1)
		return SR_LEASE_ERROR;
	lease_key(key, sizeof key, job);
	return read_lease(st, job, key, "read", out, &requests, err);
}

const char *
sr_lease_fmt_time(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (gmtime_r(&s, &tm) == NULL || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%.0f", t);
	return buf;
}

const char *
sr_lease_describe(const struct sr_lease_info *li, double now, char *buf, size_t len)
{
	const struct sr_lease_owner *o = &li->owner;
	char until[32], dur[32], cloud[300] = "";

	sr_lease_fmt_time(li->expires, until, sizeof until);
	if (o->provider[0] != '\0' || o->instance[0] != '\0')
		snprintf(cloud, sizeof cloud, ", %s%s%s", o->provider,
		    o->provider[0] != '\0' && o->instance[0] != '\0' ? " " : "", o->instance);
	sr_fmt_duration(fabs(li->expires - now), dur, sizeof dur);
	snprintf(buf, len, "%s (host %s, pid %ld%s) until %s (%s%s%s)",
	    o->agent[0] != '\0' ? o->agent : "spotrun run", o->host, o->pid, cloud, until,
	    li->expires >= now ? "in " : "expired ", dur, li->expires >= now ? "" : " ago");
	return buf;
}

/* ---- claiming ---- */

/* Whether the owner of li runs on this machine (host name and boot id
 * are ours) and its process is gone: then it cannot renew, and waiting
 * for its TTL would only lose time. A pid reused since only makes the
 * lease wait for its TTL. */
static int
owner_gone(const struct sr_lease_owner *o, const struct sr_lease_owner *me)
{
	if (o->boot_id[0] == '\0' || strcmp(o->boot_id, me->boot_id) != 0 ||
	    strcmp(o->host, me->host) != 0 || o->pid == (long)getpid())
		return 0;
	return kill((pid_t)o->pid, 0) == -1 && errno == ESRCH;
}

int
sr_lease_may_claim(const struct sr_lease_info *li, const struct sr_lease_owner *me,
    double unchanged, double *wait)
{
	int yes;

	if (li->state == SR_LEASE_QUEUED || li->state == SR_LEASE_RELEASED)
		yes = 1;
	else if (li->state == SR_LEASE_RUNNING)
		yes = unchanged > li->ttl || (me != NULL && owner_gone(&li->owner, me));
	else
		yes = 0;
	if (wait != NULL)
		*wait = yes || li->state != SR_LEASE_RUNNING ? 0 : li->ttl - unchanged;
	return yes;
}

/* How often a watching claim re-reads a running lease: often enough to
 * see a renewal (every TTL / 3) soon, never more than the store takes. */
static double
watch_every(const struct sr_lease_info *li)
{
	double every = li->ttl / 6;

	return every < 0.1 ? 0.1 : every > 2 ? 2 : every;
}

/* The JSON of a lease for job in state, epoch, owner; claimed kept from
 * claimed (0: now). */
static char *
make(const char *job, int64_t epoch, enum sr_lease_state state, const struct sr_lease_owner *o,
    double claimed, double ttl, double now, struct sr_lease_info *li, char *err)
{
	memset(li, 0, sizeof *li);
	snprintf(li->job, sizeof li->job, "%s", job);
	li->epoch = epoch;
	li->state = state;
	li->owner = *o;
	li->claimed = claimed > 0 ? claimed : now;
	li->renewed = now;
	li->expires = state == SR_LEASE_RUNNING ? now + ttl : now;
	li->ttl = ttl;
	return sr_lease_json_format(li, err);
}

/* The claim of sr_lease_claim, its checks done, judging expiry by seen. */
static int
claim_steps(struct sr_store *st, const char *job, const char *key, struct sr_lease_claim *c,
    struct sr_lease_seen *seen, double ttl, struct sr_lease **out, char *err)
{
	enum { READ, CREATE, SWAP } step;
	char etag[SR_ETAG_MAX], desc[600], watched[SR_ETAG_MAX] = "";
	double now, mono, unchanged, wait;
	struct sr_lease_info cur, mine;
	int64_t epoch = 0;
	int tries, rc;

	etag[0] = '\0';
	if (c->hint_etag == NULL)
		step = READ;
	else if (c->hint_epoch <= 0)
		step = CREATE;
	else {
		step = SWAP;
		snprintf(etag, sizeof etag, "%s", c->hint_etag);
		epoch = c->hint_epoch;
	}
	for (tries = 0; tries < CLAIM_TRIES; tries++) {
		char *body;

		if (step == READ) {
			rc = read_lease(st, job, key, "claim", &cur, &c->requests, err);
			if (rc == SR_LEASE_NOTFOUND) {
				step = CREATE;
				continue;
			}
			if (rc != SR_LEASE_OK)
				return rc;
			c->found = 1;
			c->prev = cur;
			unchanged = sr_lease_seen_note(seen, sr_store_url(st), job, cur.etag, sr_mono());
			if (cur.state == SR_LEASE_RUNNING) {
				if (!sr_lease_may_claim(&cur, c->owner, unchanged, &wait)) {
					/* A one-shot claimer watches until the lease
					 * changes (a live holder) or expires, but only
					 * one that looks expired by this machine's
					 * clock: refusing a live-looking lease at once
					 * can run nothing twice, and a user who runs
					 * a job held elsewhere hears so at once. */
					if (c->watch && cur.expires <= sr_now() &&
					    (watched[0] == '\0' ||
					    strcmp(watched, cur.etag) == 0)) {
						snprintf(watched, sizeof watched, "%s", cur.etag);
						sr_sleep(wait < watch_every(&cur) ? wait + 0.01 :
						    watch_every(&cur));
						tries--;	/* a watch is no lost race */
						continue;
					}
					now = sr_now();
					sr_err(err, "claim lease %s in %s: held by %s", key,
					    sr_store_url(st), sr_lease_describe(&cur, now, desc,
					    sizeof desc));
					return SR_LEASE_HELD;
				}
				c->took_over = unchanged > cur.ttl ? SR_LEASE_TOOK_EXPIRED :
				    SR_LEASE_TOOK_GONE;
			} else if (!sr_lease_may_claim(&cur, c->owner, unchanged, NULL)) {
				sr_err(err, "claim lease %s in %s: the job %s (epoch %lld, by %s on "
				    "%s); `spotrun requeue %s` runs it again", key, sr_store_url(st),
				    sr_lease_state_name(cur.state), (long long)cur.epoch,
				    cur.owner.agent[0] != '\0' ? cur.owner.agent : "spotrun run",
				    cur.owner.host, job);
				return SR_LEASE_TERMINAL;
			}
			step = SWAP;
			snprintf(etag, sizeof etag, "%s", cur.etag);
			epoch = cur.epoch;
			continue;
		}
		if (step == SWAP && epoch >= INT64_MAX)
			return sr_err(err, "claim lease %s in %s: epoch %lld cannot grow", key,
			    sr_store_url(st), (long long)epoch);
		now = sr_now();
		mono = sr_mono();
		body = make(job, step == CREATE ? 1 : epoch + 1, SR_LEASE_RUNNING, c->owner, 0, ttl,
		    now, &mine, err);
		if (body == NULL)
			return SR_LEASE_ERROR;
		c->requests++;
		rc = sr_store_put(st, key, body, strlen(body), step == CREATE ? SR_PUT_CREATE :
		    SR_PUT_MATCH, step == CREATE ? NULL : etag, mine.etag, err);
		free(body);
		if (rc == SR_STORE_OK) {
			struct sr_lease *l = sr_calloc(1, sizeof *l);

			pthread_mutex_init(&l->lock, NULL);
			l->st = st;
			snprintf(l->key, sizeof l->key, "%s", key);
			l->info = mine;
			l->held = 1;
			l->mono_ok = mono;
			*out = l;
			return SR_LEASE_OK;
		}
		if (rc != SR_STORE_EXISTS && rc != SR_STORE_PRECONDITION && rc != SR_STORE_NOTFOUND) {
			sr_err_prefix(err, "claim lease");
			return SR_LEASE_ERROR;
		}
		/* lost a race (or the hint was stale): look at what is there now */
		step = READ;
	}
	return sr_err(err, "claim lease %s in %s: lost %d races in a row; try again", key,
	    sr_store_url(st), CLAIM_TRIES);
}

int
sr_lease_claim(struct sr_store *st, const char *job, struct sr_lease_claim *c,
    struct sr_lease **out, char *err)
{
	char key[SR_LEASE_JOB_MAX + 16];
	double ttl = c->ttl > 0 ? c->ttl : SR_LEASE_TTL_DEFAULT;
	struct sr_lease_seen *seen;
	int rc;

	*out = NULL;
	c->requests = 0;
	c->found = 0;
	c->took_over = 0;
	memset(&c->prev, 0, sizeof c->prev);
	if (sr_lease_job_check(job, err) == -1)
		return SR_LEASE_ERROR;
	if (c->owner == NULL || c->owner->host[0] == '\0' || c->owner->pid <= 0)
		return sr_err(err, "claim lease of %s: no owner (host and pid) given", job);
	if (ttl < SR_LEASE_TTL_MIN || ttl > SR_LEASE_TTL_MAX || !isfinite(ttl))
		return sr_err(err, "claim lease of %s: ttl %g s is out of range (%g to %g s)", job,
		    ttl, SR_LEASE_TTL_MIN, SR_LEASE_TTL_MAX);
	lease_key(key, sizeof key, job);
	/* renewed every ttl / 3: no closer than the store takes writes of one
	 * object (GCS: one a second) */
	if (ttl < 3 * sr_store_write_interval(st))
		return sr_err(err, "claim lease %s in %s: a TTL of %gs is too short for this store, "
		    "which takes one write of an object every %gs, and the lease is renewed every "
		    "TTL / 3: use %gs or more", key, sr_store_url(st), ttl,
		    sr_store_write_interval(st), 3 * sr_store_write_interval(st));
	seen = c->seen != NULL ? c->seen : sr_lease_seen_new();
	rc = claim_steps(st, job, key, c, seen, ttl, out, err);
	if (seen != c->seen)
		sr_lease_seen_free(seen);
	return rc;
}

/* ---- the holder's writes ---- */

/* After a lost CAS: say who has the lease now, as far as a read tells. */
static int
lost(struct sr_lease *l, const char *verb, char *err)
{
	struct sr_lease_info now_li;
	char why[SR_ERRMAX], desc[600];
	int requests = 0, rc;

	l->held = 0;
	rc = read_lease(l->st, l->info.job, l->key, verb, &now_li, &requests, why);
	if (rc == SR_LEASE_OK)
		snprintf(why, sizeof why, "now epoch %lld, %s, %s", (long long)now_li.epoch,
		    sr_lease_state_name(now_li.state),
		    sr_lease_describe(&now_li, sr_now(), desc, sizeof desc));
	else if (rc == SR_LEASE_NOTFOUND)
		snprintf(why, sizeof why, "the lease object is gone");
	sr_err(err, "%s lease %s in %s: lost: epoch %lld is no longer ours (%s); stop writing "
	    "for the job", verb, l->key, sr_store_url(l->st), (long long)l->info.epoch, why);
	return SR_LEASE_LOST;
}

/* Write l in state by CAS over its etag; the caller holds l->lock. */
static int
write_locked(struct sr_lease *l, enum sr_lease_state state, const char *verb, char *err)
{
	struct sr_lease_info next;
	double now, mono;
	char *body;
	int rc;

	if (!l->held && l->info.state == SR_LEASE_RUNNING) {
		/* a write found it taken over already (lost()) */
		sr_err(err, "%s lease %s in %s: lost: epoch %lld was taken over; stop writing for "
		    "the job", verb, l->key, sr_store_url(l->st), (long long)l->info.epoch);
		return SR_LEASE_LOST;
	}
	if (!l->held)
		return sr_err(err, "%s lease %s in %s: not held (epoch %lld is %s)", verb, l->key,
		    sr_store_url(l->st), (long long)l->info.epoch,
		    sr_lease_state_name(l->info.state));
	now = sr_now();
	mono = sr_mono();
	/* Every write changes the object, and so its etag (file:// and S3
	 * hash the content), even under a clock stopped or stepped back:
	 * observers judge expiry by the etag staying the same (lease.h). The
	 * JSON keeps milliseconds. */
	if (now < l->info.renewed + 0.002)
		now = l->info.renewed + 0.002;
	body = make(l->info.job, l->info.epoch, state, &l->info.owner, l->info.claimed,
	    l->info.ttl, now, &next, err);
	if (body == NULL)
		return SR_LEASE_ERROR;
	rc = sr_store_put(l->st, l->key, body, strlen(body), SR_PUT_MATCH, l->info.etag,
	    next.etag, err);
	free(body);
	if (rc == SR_STORE_PRECONDITION || rc == SR_STORE_NOTFOUND)
		return lost(l, verb, err);
	if (rc != SR_STORE_OK) {
		sr_err_prefix(err, "%s lease", verb);
		return SR_LEASE_ERROR;
	}
	l->info = next;
	l->mono_ok = mono;
	l->held = state == SR_LEASE_RUNNING;
	return SR_LEASE_OK;
}

int
sr_lease_renew(struct sr_lease *l, char *err)
{
	int rc;

	pthread_mutex_lock(&l->lock);
	rc = write_locked(l, SR_LEASE_RUNNING, "renew", err);
	pthread_mutex_unlock(&l->lock);
	return rc;
}

int
sr_lease_set_state(struct sr_lease *l, enum sr_lease_state state, char *err)
{
	int rc;

	if ((unsigned)state >= SR_LEASE_NSTATES)
		return sr_err(err, "set lease %s: unknown state %d", l->key, (int)state);
	pthread_mutex_lock(&l->lock);
	rc = write_locked(l, state, "set", err);
	pthread_mutex_unlock(&l->lock);
	return rc;
}

void
sr_lease_get_info(struct sr_lease *l, struct sr_lease_info *out)
{
	pthread_mutex_lock(&l->lock);
	*out = l->info;
	pthread_mutex_unlock(&l->lock);
}

int64_t
sr_lease_epoch(const struct sr_lease *l)
{
	return l->info.epoch;	/* never changes while the handle lives */
}

void
sr_lease_free(struct sr_lease *l)
{
	if (l == NULL)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l);
}

/* ---- requeue ---- */

int
sr_lease_requeue(struct sr_store *st, const char *job, unsigned states, int64_t min_epoch,
    const struct sr_lease_owner *by, struct sr_lease_info *prev, struct sr_lease_info *out,
    char *err)
{
	char key[SR_LEASE_JOB_MAX + 16], desc[600];
	struct sr_lease_info cur, next;
	int tries, requests = 0, rc;

	if (sr_lease_job_check(job, err) == -1)
		return SR_LEASE_ERROR;
	lease_key(key, sizeof key, job);
	for (tries = 0; tries < CLAIM_TRIES; tries++) {
		int malformed = 0;
		double now;
		char *body;

		rc = read_lease(st, job, key, "requeue", &cur, &requests, err);
		if (rc == SR_LEASE_MALFORMED && (states & SR_LEASE_FROM_MALFORMED)) {
			/* start it again from the caller's epoch: nothing of the old is trusted */
			char etag[SR_ETAG_MAX];

			snprintf(etag, sizeof etag, "%s", cur.etag);
			memset(&cur, 0, sizeof cur);
			snprintf(cur.job, sizeof cur.job, "%s", job);
			snprintf(cur.etag, sizeof cur.etag, "%s", etag);
			cur.epoch = 1;
			cur.ttl = SR_LEASE_TTL_DEFAULT;
			malformed = 1;
		} else if (rc != SR_LEASE_OK)
			return rc;
		if (prev != NULL)
			*prev = cur;
		now = sr_now();
		if (!malformed && !(states & SR_LEASE_BIT(cur.state))) {
			sr_err(err, "requeue lease %s in %s: its state is %s (epoch %lld), not one "
			    "asked for", key, sr_store_url(st), sr_lease_state_name(cur.state),
			    (long long)cur.epoch);
			return SR_LEASE_STATE;
		}
		if (!malformed && cur.state == SR_LEASE_RUNNING &&
		    !sr_lease_may_claim(&cur, by, 0, NULL)) {
			sr_err(err, "requeue lease %s in %s: running, held by %s", key,
			    sr_store_url(st), sr_lease_describe(&cur, now, desc, sizeof desc));
			return SR_LEASE_HELD;
		}
		body = make(job, cur.epoch > min_epoch ? cur.epoch : (min_epoch > 1 ? min_epoch : 1),
		    SR_LEASE_QUEUED, by != NULL ? by : &cur.owner, cur.claimed, cur.ttl, now, &next,
		    err);
		if (body == NULL)
			return SR_LEASE_ERROR;
		if (next.owner.host[0] == '\0' || next.owner.pid <= 0) {
			free(body);
			return sr_err(err, "requeue lease %s: no owner (host and pid) given", key);
		}
		rc = sr_store_put(st, key, body, strlen(body), SR_PUT_MATCH, cur.etag, next.etag,
		    err);
		free(body);
		if (rc == SR_STORE_OK) {
			if (out != NULL)
				*out = next;
			return SR_LEASE_OK;
		}
		if (rc != SR_STORE_PRECONDITION && rc != SR_STORE_NOTFOUND) {
			sr_err_prefix(err, "requeue lease");
			return SR_LEASE_ERROR;
		}
	}
	return sr_err(err, "requeue lease %s in %s: lost %d races in a row; try again", key,
	    sr_store_url(st), CLAIM_TRIES);
}

int
sr_lease_fresh(struct sr_lease *l)
{
	int fresh;

	pthread_mutex_lock(&l->lock);
	fresh = l->held && l->info.state == SR_LEASE_RUNNING &&
	    sr_mono() < l->mono_ok + l->info.ttl - SR_LEASE_GIVEUP(l->info.ttl);
	pthread_mutex_unlock(&l->lock);
	return fresh;
}
