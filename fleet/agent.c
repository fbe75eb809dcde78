/*
 * agent.c: the agent's loop (agent.h). It sets up once: the queue, this
 * machine's GPUs (NVML) and provider (the option's, else auto: the cloud
 * it runs in, for its instance id and type), the lease owner it claims as
 * ("HOST-PID"), its labels; GPU device nodes with no working driver are
 * said plainly, in its log and the queue (agent-facts.c), and offer no
 * GPU. Then, until it ends: claim a job it can run
 * (sr_queue_claim: a pending job whose GPU needs fit the GPUs no other run
 * on the machine holds, gpulock.h; why each one that does not fit is
 * skipped is said once, agent-facts.c) and run it (agent-job.c); when
 * there is none, look for leases of agents that died without a word
 * (sr_queue_find_expired, at most every TTL / 3) and claim those as they
 * expire, else wait, a little longer each time (0.05 s doubling to 5 s),
 * until the idle timeout; idle, it sweeps the queue's debris (debris.h)
 * when its turn comes (once an SR_DEBRIS_INTERVAL for all the agents).
 * Beside the loop, its scaler thread sizes the queue's pools
 * (agent-scale.c). A signal ends it between jobs (a job running
 * gets it through its run, whose end then ends the agent too).
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

#include "agent-int.h"
#include "debris.h"
#include "gpulock.h"
#include "gpus.h"
#include "supervise.h"
#include "util.h"

/* Seconds between claims of an empty queue, first (then doubling): short,
 * as a job's end is when one comes back soonest: a gang stopped by one
 * node's notice is released by its node 0 just after the other nodes'
 * runs end, and each poll they wait for it is the whole gang's time. */
#define POLL_MIN 0.05
#define POLL_MAX 5.0		/* ... at most */
#define ERROR_MAX 30.0		/* seconds between tries of a queue that fails, at most */

extern char **environ;

int
sr_agent_default_dir(char *buf, size_t len, char *err)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

	if (xdg != NULL && xdg[0] == '/')
		snprintf(buf, len, "%s/spotrun/agent", xdg);
	else if (home != NULL && home[0] == '/')
		snprintf(buf, len, "%s/.local/state/spotrun/agent", home);
	else
		return sr_err(err, "agent: no folder for its jobs: neither XDG_STATE_HOME nor HOME is "
		    "an absolute path (give one with --dir)");
	return 0;
}

/* ---- labels ---- */

int
sr_agent_label_check(const struct sr_agent_label *l, char *err)
{
	static const char name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_.-";
	size_t n = strlen(l->value), k = strlen(l->key);
	char *end;
	long v;

	if (k == 0 || k > 64 || strspn(l->key, name_chars) != k)
		return sr_err(err, "label %.64s: not a name (1-64 letters, digits, '_', '.', '-')",
		    l->key);
	if (n > 256 || strspn(l->value, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_.-:/") != n)
		return sr_err(err, "label %s=%.64s: not a value (at most 256 letters, digits, '_', "
		    "'.', '-', ':', '/')", l->key, l->value);
	if (strcmp(l->key, "gpus") == 0) {
		errno = 0;
		v = strtol(l->value, &end, 10);
		if (end == l->value || *end != '\0' || errno != 0 || v < 0 || v > SR_QUEUE_GPUS_MAX)
			return sr_err(err, "label gpus=%.64s: not a number of GPUs from 0 to %d",
			    l->value, SR_QUEUE_GPUS_MAX);
		return 0;
	}
	if (n == 0)
		return sr_err(err, "label %s=: empty (leave it out)", l->key);
	if ((strcmp(l->key, "gpu_type") == 0 && n > SR_QUEUE_GPU_TYPE_MAX) ||
	    (strcmp(l->key, "provider") == 0 && n >= sizeof ((struct sr_lease_owner *)0)->provider) ||
	    (strcmp(l->key, "instance") == 0 && n >= sizeof ((struct sr_lease_owner *)0)->instance) ||
	    (strcmp(l->key, "host") == 0 && n > SR_QUEUE_HOST_MAX) ||
	    (strcmp(l->key, "pool") == 0 && n > SR_QUEUE_POOL_NAME_MAX))
		return sr_err(err, "label %s=%.64s...: too long", l->key, l->value);
	return 0;
}

/* The value of label key, or NULL. */
static const char *
label(const struct sr_agent_opts *o, const char *key)
{
	const char *v = NULL;
	size_t i;

	for (i = 0; i < o->nlabels; i++) {
		if (strcmp(o->labels[i].key, key) == 0)
			v = o->labels[i].value;
	}
	return v;
}

/* ---- setup ---- */

/* The provider option: a name of the table (else -1 with err), and what
 * it means to the stores: with one that asks no metadata address, their
 * credentials ask none either. */
static int
provider_check(const struct sr_agent_opts *o, struct sr_store_opts *so, char *err)
{
	struct sr_provider_kind kind;
	char names[128];

	memset(so, 0, sizeof *so);
	if (o->provider == NULL)
		return 0;
	if (sr_provider_kind(o->provider, &kind) == -1) {
		sr_provider_names(0, names, sizeof names);
		return sr_err(err, "provider %.64s: not a provider; give one of %s", o->provider, names);
	}
	so->no_metadata = !kind.metadata;
	return 0;
}

/* What provider runs this machine (the option's, else auto's answer) and
 * its facts. */
static void
detect_provider(struct sr_agent *ag, char *name, size_t len)
{
	struct sr_provider_kind kind;
	struct sr_provider_conf conf;
	struct sr_provider *p;
	char err[SR_ERRMAX];

	memset(&conf, 0, sizeof conf);
	conf.name = ag->o->provider != NULL ? ag->o->provider : "auto";
	conf.max_preemptions = -1;
	snprintf(name, len, "local");
	snprintf(ag->price_type, sizeof ag->price_type, "local");
	ag->spot = 1;
	if (sr_provider_new(&conf, &p, err) != 0) {
		sr_agent_say("warning: %s; taken as local", err);
		return;
	}
	snprintf(name, len, "%s", sr_provider_name(p));
	if (sr_provider_facts(p, &ag->facts, err) == -1)
		sr_agent_say("warning: %s", err);
	sr_provider_free(p);
	/* a machine spotrun does not rent is priced as "local" (prices.h) */
	if (sr_provider_kind(name, &kind) == 0 && kind.rented) {
		snprintf(ag->price_type, sizeof ag->price_type, "%s", ag->facts.instance_type);
		ag->spot = strncmp(ag->facts.lifecycle, "spot", 4) == 0;
		/* a cloud's spot machine is watched before its first job too */
		if (ag->spot) {
			conf.name = name;
			sr_agent_watch_keep(ag, &conf, 0);
		}
	}
}

static void
warn_cb(void *arg, const char *msg)
{
	sr_agent_say("warning: %s", msg);
}

/* Everything the loop needs; -1 with res's end and err. */
static int
setup(struct sr_agent *ag, struct sr_agent_result *res)
{
	const struct sr_agent_opts *o = ag->o;
	char *err = res->err, provider[32], agent_id[128];
	const struct sr_gpus_where w = { environ, NULL, NULL };
	const struct sr_gpus *g = &ag->found;
	struct sr_store_opts so;
	const char *v;
	size_t i;

	for (i = 0; i < o->nlabels; i++) {
		if (sr_agent_label_check(&o->labels[i], err) == -1) {
			res->end = SR_AGENT_ERR_CONFIG;
			return -1;
		}
	}
	if (o->dir != NULL)
		snprintf(ag->dir, sizeof ag->dir, "%s", o->dir);
	else if (sr_agent_default_dir(ag->dir, sizeof ag->dir, err) == -1) {
		res->end = SR_AGENT_ERR_CONFIG;
		return -1;
	}
	if (sr_mkdirs(ag->dir, 0755, err) == -1 || sr_subreaper_enable(err) == -1 ||
	    sr_sig_init(&ag->sigfd, err) == -1) {
		res->end = SR_AGENT_ERR_SYSTEM;
		return -1;
	}
	if (provider_check(o, &so, err) == -1) {
		res->end = SR_AGENT_ERR_CONFIG;
		return -1;
	}
	if (sr_queue_open_with(o->queue, &so, &ag->q, err) == -1) {
		res->end = SR_AGENT_ERR_QUEUE;
		return -1;
	}
	/* the leases of Q/ckpt (the same kind of store) are renewed every TTL / 3 */
	if (sr_run_lease_ttl(&ag->ttl, sr_queue_store(ag->q), err) == -1) {
		res->end = SR_AGENT_ERR_CONFIG;
		return -1;
	}
	if (sr_gpus_discover(&w, &ag->found, err) == -1) {
		res->end = SR_AGENT_ERR_SYSTEM;
		return -1;
	}
	/* device nodes with no working driver are no GPUs to offer (said
	 * below); the label gpus is the operator's word over them */
	if (g->no_driver[0] != '\0' && label(o, "gpus") == NULL) {
		ag->found.n = 0;
		ag->found.source = "none";
	}
	sr_gpus_model(g->n > 0 ? g->v[0].model : "", ag->gpu_type, sizeof ag->gpu_type);
	if ((v = label(o, "gpus")) != NULL)
		sr_gpus_resize(&ag->found, (size_t)atoi(v));
	ag->gpus = (int)g->n;
	if ((v = label(o, "gpu_type")) != NULL)
		snprintf(ag->gpu_type, sizeof ag->gpu_type, "%s", v);
	detect_provider(ag, provider, sizeof provider);
	if ((v = label(o, "provider")) != NULL)
		snprintf(provider, sizeof provider, "%s", v);
	if (sr_lease_owner_local(&ag->me, NULL, (v = label(o, "instance")) != NULL ? v :
	    ag->facts.instance_id, provider, err) == -1) {
		res->end = SR_AGENT_ERR_SYSTEM;
		return -1;
	}
	if ((v = label(o, "host")) != NULL)
		snprintf(ag->me.host, sizeof ag->me.host, "%s", v);
	if ((v = label(o, "pool")) != NULL)
		snprintf(ag->pool, sizeof ag->pool, "%s", v);
	snprintf(agent_id, sizeof agent_id, "%.100s-%ld", ag->me.host, ag->me.pid);
	snprintf(ag->me.agent, sizeof ag->me.agent, "%s", agent_id);
	ag->claim.owner = &ag->me;
	ag->claim.gpus = ag->gpus;
	ag->claim.gpu_type = ag->gpu_type;
	ag->claim.ttl = ag->ttl;
	ag->seen = sr_lease_seen_new();
	ag->claim.seen = ag->seen;
	ag->claim.warn = warn_cb;
	ag->claim.unfit = sr_agent_unfit;
	ag->claim.warn_arg = ag;
	if (sr_agent_gang_setup(ag, label(o, "addr"), err) == -1) {
		res->end = SR_AGENT_ERR_CONFIG;
		return -1;
	}
	ag->so = so;
	sr_agent_say("%s on %s%s%s, %d GPU%s%s%s%s%s%s, queue %s, lease TTL %.0fs", agent_id, provider,
	    ag->me.instance[0] != '\0' ? " " : "", ag->me.instance, ag->gpus, ag->gpus == 1 ? "" : "s",
	    ag->gpus > 0 && g->v[0].model[0] != '\0' ? " (" : "",
	    ag->gpus > 0 ? g->v[0].model : "", ag->gpus > 0 && g->v[0].model[0] != '\0' ? ")" : "",
	    ag->gpu_type[0] != '\0' ? ", model " : "",
	    ag->gpu_type, o->queue_where != NULL ? o->queue_where : sr_queue_url(ag->q), ag->ttl);
	for (i = 0; i < o->nlabels; i++)
		sr_agent_say("label %s=%s", o->labels[i].key, o->labels[i].value);
	sr_agent_facts_say(ag, label(o, "gpus"));
	if (g->no_driver[0] == '\0' && g->nvml_why[0] != '\0' &&
	    strncmp(g->nvml_why, "load ", 5) != 0)
		sr_agent_say("warning: NVML: %s", g->nvml_why);
	return 0;
}

/* ---- waiting ---- */

/* Run the idle command with /bin/sh -c: its exit code, or -1 (said). */
static int
idle_command(struct sr_agent *ag, const char *cmd)
{
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL }, err[SR_ERRMAX];
	struct sr_spawn_opts so;
	struct sr_child c;
	int status;

	memset(&so, 0, sizeof so);
	so.argv = argv;
	so.envp = environ;
	so.stdin_null = 1;
	if (sr_spawn(&so, &c, err) == -1) {
		sr_agent_say("idle command: %s", err);
		return -1;
	}
	/* sr_reap, not sr_agent_wait's reaping, which would take its status */
	while (sr_reap(&c, &status) != 1) {
		struct pollfd pf = { .fd = ag->sigfd, .events = POLLIN };
		int sig;

		(void)poll(&pf, 1, 1000);
		while (sr_sig_next(ag->sigfd, &sig) == 1) {
			if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
				sr_child_signal(&c, sig);
		}
	}
	return sr_exit_code(status);
}

/* ---- claiming ---- */

/* Claim only jobs that fit the GPUs no run on this machine holds now
 * (another agent's job, a `spotrun run`): the run locks them (gpulock.h),
 * and one that finds too few free fails. */
static void
count_free_gpus(struct sr_agent *ag)
{
	ag->held[0] = '\0';
	ag->claim.gpus = ag->gpus > 0 ? (int)sr_gpulock_free_held(sr_gpulock_dir(), &ag->found,
	    ag->held, sizeof ag->held) : 0;
}

/* Claim one job the agent may run now: SR_QUEUE_OK with *out,
 * SR_QUEUE_EMPTY, or SR_QUEUE_ERROR (err). Jobs on the skip list are put
 * back at once; a job whose marker named another store than its
 * meta.json is claimed in meta.json's (sr_queue_job_verify). */
static int
claim(struct sr_agent *ag, struct sr_queue_job **out, char *err)
{
	int rc, tries;

	count_free_gpus(ag);
	for (tries = 0; tries < 4; tries++) {
		sr_agent_gang_port(ag);
		rc = sr_queue_claim(ag->q, &ag->claim, out, err);
		if (rc == SR_QUEUE_OK)
			rc = sr_queue_job_verify(ag->q, &ag->claim, out, err);
		if (rc == SR_QUEUE_BUSY || rc == SR_QUEUE_NOTFOUND) {
			sr_agent_say("warning: %s", err);
			continue;
		}
		if (rc != SR_QUEUE_OK || !sr_agent_skipped(ag, (*out)->marker.id))
			return rc;
		/* released after a failure here a moment ago: for another agent */
		if ((*out)->gang != NULL)
			(void)sr_gang_set((*out)->gang, SR_GANG_RELEASED, 0, 0, err);
		if ((*out)->lease != NULL &&
		    sr_queue_job_end(ag->q, *out, SR_LEASE_RELEASED, err) != SR_QUEUE_OK)
			sr_agent_say("warning: %s", err);
		sr_queue_job_free(*out);
		*out = NULL;
	}
	return SR_QUEUE_EMPTY;
}

/* What `--once` waits for before it ends: the running leases held
 * elsewhere when it first found nothing to claim, each with its renewal
 * then. One renewed since has a live holder (dropped); one that expires
 * unrenewed is a dead holder's, taken over. */
struct watch {
	struct {
		char id[SR_QUEUE_ID_MAX + 1];
		double renewed;
	} *v;
	size_t n;
	int set;		/* filled by a scan (maybe with none) */
};

/* Whether w says to wait for e: the first scan fills w; later ones keep
 * only what it holds, not renewed since. */
static int
watch_wait(struct watch *w, const struct sr_queue_expired *e, int first)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		if (strcmp(w->v[i].id, e->id) == 0)
			return w->v[i].renewed == e->lease.renewed;
	}
	if (!first)
		return 0;	/* claimed after the first scan: a live holder */
	w->v = sr_reallocarray(w->v, w->n + 1, sizeof *w->v);
	snprintf(w->v[w->n].id, sizeof w->v[w->n].id, "%s", e->id);
	w->v[w->n++].renewed = e->lease.renewed;
	return 1;
}

/* The leases of dead agents: claim the first that can be claimed now;
 * else *wait gets the seconds until the next one can (-1: none). Read
 * are the leases not renewed for half a TTL (a live holder renews every
 * TTL / 3); with w (`--once`), every lease held elsewhere, waited for as
 * w says: a holder that died a moment after its renewal looks alive for
 * a TTL yet, and --once must not end before its lease expires. */
static int
claim_expired(struct sr_agent *ag, struct sr_queue_job **out, double *wait, struct watch *w,
    char *err)
{
	struct sr_queue_expired *v;
	size_t n, i;
	int rc = SR_QUEUE_EMPTY, first = w != NULL && !w->set;

	*wait = -1;
	count_free_gpus(ag);
	/* a lease this agent saw unchanged for half its TTL is worth a read
	 * (a live holder renews every TTL / 3); --once (w) reads every one */
	if (sr_queue_find_expired(ag->q, &ag->me, ag->seen, w != NULL ? 0 : ag->ttl / 2,
	    w != NULL ? ag->ttl : ag->ttl / 2, &v, &n, err) != 0)
		return SR_QUEUE_ERROR;
	if (w != NULL)
		w->set = 1;
	for (i = 0; i < n && rc != SR_QUEUE_OK; i++) {
		if (sr_agent_skipped(ag, v[i].id))
			continue;
		if (v[i].wait > 0 && w != NULL && !watch_wait(w, &v[i], first))
			continue;
		if (v[i].wait > 0) {
			if (*wait < 0 || v[i].wait < *wait)
				*wait = v[i].wait;
			continue;
		}
		rc = sr_queue_claim_id(ag->q, &ag->claim, v[i].id, out, err);
		if (rc != SR_QUEUE_OK && rc != SR_QUEUE_BUSY)
			sr_agent_say("warning: take over %s: %s", v[i].id, err);
	}
	free(v);
	return rc == SR_QUEUE_OK ? SR_QUEUE_OK : SR_QUEUE_EMPTY;
}

/* ---- the sweep at idle ---- */

static void
gc_say(void *arg, const char *job, const char *msg)
{
	(void)arg;
	if (job == NULL)
		sr_agent_say("%s", msg);
	else
		sr_agent_say("gc %s: %s", job, msg);
}

/* Delete the queue's debris as `spotrun gc --queue Q --apply` would
 * (debris.h), when it is this agent's turn (sr_queue_sweep_turn: one
 * sweep an interval for all the queue's agents), over the jobs whose
 * status changed since a grace and an interval before the last sweep
 * began (all at the queue's first). Said in one line when there was any
 * debris, what failed as a warning; never an end of the agent. Returns
 * the seconds until it should ask again. */
static double
idle_gc(struct sr_agent *ag)
{
	struct sr_debris_opts o;
	struct sr_debris_total t = { 0 };
	char err[SR_ERRMAX], sz[32];
	double last, since;
	int turn;

	memset(&o, 0, sizeof o);
	o.grace = SR_DEBRIS_GRACE;
	o.apply = 1;
	o.note = gc_say;
	turn = sr_queue_sweep_turn(ag->q, SR_DEBRIS_INTERVAL, ag->me.agent, &last, err);
	if (turn == -1)
		sr_agent_say("warning: gc at idle: %s; the next sweep tries again", err);
	if (turn != 1)
		return SR_DEBRIS_INTERVAL / 4;
	since = last > 0 ? last - o.grace - SR_DEBRIS_INTERVAL : 0;
	if (sr_debris_queue(ag->q, NULL, 0, since, &o, &t, err) != 0)
		sr_agent_say("warning: gc at idle: %s; the next sweep tries again", err);
	if (t.objects > 0)
		sr_agent_say("gc at idle: deleted %ld object%s, %s, of %ld job%s", t.objects,
		    t.objects == 1 ? "" : "s", sr_fmt_bytes(t.bytes, sz, sizeof sz), t.jobs,
		    t.jobs == 1 ? "" : "s");
	return SR_DEBRIS_INTERVAL;
}

/* ---- the loop ---- */

enum sr_agent_end
sr_agent_run(const struct sr_agent_opts *o, struct sr_agent_result *res)
{
	double idle_since = sr_mono(), delay = POLL_MIN, next_scan = 0, expiry = -1, wait;
	double next_gc = 0;	/* when it may sweep at idle again */
	double once_until = -1;	/* --once: when it stops waiting for leases */
	struct watch watch = { NULL, 0, 0 };
	struct sr_queue_job *j;
	struct sr_agent ag;
	char err[SR_ERRMAX];
	int rc, sig, next;

	memset(res, 0, sizeof *res);
	memset(&ag, 0, sizeof ag);
	ag.o = o;
	ag.vm = 1;
	ag.vm_since = sr_now();
	ag.sigfd = -1;
	ag.wake_fd = -1;
	if (setup(&ag, res) == -1)
		goto out;
	if (sr_agent_scale_start(&ag, res->err) == -1) {
		res->end = SR_AGENT_ERR_CONFIG;
		goto out;
	}
	for (;;) {
		if (o->max_jobs > 0 && res->jobs >= o->max_jobs) {
			res->end = SR_AGENT_MAX_JOBS;
			break;
		}
		if ((sig = sr_agent_wait(&ag, 0, 1)) != 0) {
			res->end = SR_AGENT_SIGNALLED;
			res->signal = sig;
			break;
		}
		/* a machine whose notice came takes no job: the next one
		 * does (the local provider's), or none (a cloud's goes) */
		if (sr_agent_watch_check(&ag, "between jobs") == 2) {
			res->end = SR_AGENT_PREEMPTED;
			break;
		}
		/* A dead machine's job before the pending ones, whenever its scan
		 * is due: it was claimed ahead of every job pending now, and
		 * with a backlog it would otherwise wait for the whole backlog,
		 * not its TTL and a poll (doc/fleet.md). */
		rc = SR_QUEUE_EMPTY;
		if (sr_mono() >= next_scan || (expiry >= 0 && sr_mono() >= expiry)) {
			next_scan = sr_mono() + ag.ttl / 3;
			/* --once ends when nothing is left, so it must see a
			 * dead holder's lease that expires later too (it used
			 * to end up to a TTL before): it reads every lease */
			rc = claim_expired(&ag, &j, &wait, o->once ? &watch : NULL, err);
			expiry = wait >= 0 ? sr_mono() + wait + 0.05 : -1;
			/* ... until each is renewed (a live holder: dropped,
			 * within TTL / 3) or expires; a TTL and a poll at most */
			if (o->once && rc == SR_QUEUE_EMPTY && once_until < 0)
				once_until = sr_mono() + ag.ttl + POLL_MAX;
		}
		if (rc == SR_QUEUE_EMPTY)
			rc = claim(&ag, &j, err);
		sr_agent_facts_renew(&ag);
		if (rc == SR_QUEUE_OK) {
			next = sr_agent_job(&ag, j, res);
			/* the run's end gave the signals back to their defaults */
			if (sr_sig_init(&ag.sigfd, err) == -1)
				sr_fatal("agent: %s", err);
			if (next >= 0) {
				res->end = (enum sr_agent_end)next;
				break;
			}
			idle_since = sr_mono();
			delay = POLL_MIN;
			once_until = -1;
			watch.n = 0;
			watch.set = 0;
			continue;
		}
		if (rc == SR_QUEUE_ERROR && sr_store_err_permanent(err)) {
			/* the queue's own objects (a job's are failed by the
			 * claim): no retry mends it */
			res->end = SR_AGENT_ERR_QUEUE;
			snprintf(res->err, sizeof res->err, "%s (a permanent error: the agent stops)",
			    err);
			break;
		}
		if (rc == SR_QUEUE_EMPTY && sr_mono() >= next_gc) {
			next_gc = sr_mono() + idle_gc(&ag);
		}
		if (rc == SR_QUEUE_ERROR) {
			sr_agent_say("warning: %s; trying again in %.0fs", err, delay < 1 ? 1 : delay);
			delay = delay * 2 > ERROR_MAX ? ERROR_MAX : delay * 2;
		} else if (o->once && (expiry < 0 || (once_until >= 0 && sr_mono() >= once_until))) {
			res->end = SR_AGENT_DRAINED;
			break;
		}
		if (o->idle_timeout > 0 && sr_mono() - idle_since >= o->idle_timeout) {
			res->end = SR_AGENT_IDLE;
			/* the pools it scales go to 0 before its machine goes */
			sr_agent_scale_stop(&ag, 1);
			if (o->idle_command != NULL) {
				sr_agent_say("idle for %.0fs: running the idle command: %s", o->idle_timeout,
				    o->idle_command);
				res->idle_status = idle_command(&ag, o->idle_command);
			}
			break;
		}
		wait = delay;
		if (expiry >= 0 && expiry - sr_mono() < wait)
			wait = expiry - sr_mono() > 0 ? expiry - sr_mono() : 0;
		/* the scan is due every TTL / 3 even when the poll is longer: a
		 * dead holder's lease expires a TTL after this agent first saw
		 * it unchanged, so seeing it late is taking it over late */
		if (next_scan - sr_mono() < wait)
			wait = next_scan - sr_mono() > 0 ? next_scan - sr_mono() : 0;
		if (o->idle_timeout > 0 && idle_since + o->idle_timeout - sr_mono() < wait)
			wait = idle_since + o->idle_timeout - sr_mono();
		if ((sig = sr_agent_wait(&ag, wait, 1)) != 0) {
			res->end = SR_AGENT_SIGNALLED;
			res->signal = sig;
			break;
		}
		if (rc == SR_QUEUE_EMPTY)
			delay = delay * 2 > POLL_MAX ? POLL_MAX : delay * 2;
	}
	sr_agent_say("ends: %d job%s (%d succeeded, %d failed, %d released, %d cancelled, %d lost)",
	    res->jobs, res->jobs == 1 ? "" : "s", res->succeeded, res->failed, res->released,
	    res->cancelled, res->lost);
out:
	sr_agent_scale_stop(&ag, res->end == SR_AGENT_IDLE || res->end == SR_AGENT_DRAINED);
	sr_agent_facts_end(&ag);
	sr_agent_watch_free(&ag);
	sr_agent_wake_close(&ag);
	free(watch.v);
	sr_queue_close(ag.q);
	sr_lease_seen_free(ag.seen);
	free(ag.skip);
	sr_gpus_free(&ag.found);
	sr_sig_reset();
	return res->end;
}
