/*
 * agent-job.c: one job an agent claimed, run exactly as `spotrun run` runs
 * a job file (sr_run_job), with the claimed lease handed in. Around the
 * run:
 *  - its spec is Q/jobs/ID/spec.ini, parsed in memory (a spec that does
 *    not parse is reported, shipped to the job's log, and the job ends
 *    failed: running it again would fail again); its relative paths are
 *    taken in the folder it was submitted from when this machine has it,
 *    else in DIR/jobs/ID, where its local state goes; a job whose working
 *    directory was shipped runs in its own copy of that snapshot
 *    (agent-workdir.c), its relative paths taken there; it keeps its
 *    checkpoints under its id in the store its marker names (Q/ckpt
 *    unless its file names one), so that its lease, S/_leases/ID, fences
 *    the checkpoints it guards;
 *  - its [job] setup runs before the run, once per machine for the same
 *    code and setup (agent-setup.c); a failed one fails the job;
 *  - its [data] is fetched after setup, before the run, into the
 *    machine's cache (agent-data.c): a URL with nothing under it, access
 *    denied or a full disk fails the job, another error of the store
 *    releases it;
 *  - a heartbeat thread writes its status marker at every transition the
 *    run reports (counts carried over from the job's newest marker:
 *    attempts, preemptions, GPU-seconds used and lost, the last
 *    checkpoint's step, this host) and again every TTL, and checks its
 *    cancel request at each heartbeat (TTL / 3), which reaches the run
 *    through a pipe: the store is never waited on in the run's loop;
 *  - its log lines go to Q/logs/ID/ through one shipping writer per
 *    attempt (queue.h's sr_queue_log_*: a copy into its buffer only),
 *    closed, which ships what is left, when the next attempt's lines come
 *    or the run ends;
 *  - a gang's job that failed on node 0 because a node was lost without a
 *    notice (agent-gang-lost.c) goes back to the queue instead;
 *  - at the end its lease ends as the run's result says (succeeded from
 *    the run's finish hook, once its last line is shipped), a released
 *    job goes back to pending, and the last marker says how it ended,
 *    written after the lease (see end_job).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent-int.h"
#include "fault.h"
#include "jobspec.h"
#include "method.h"
#include "util.h"

/* Seconds a job released after the agent's own failure is left to others. */
#define SKIP_SECONDS 60.0

struct job {
	struct sr_agent *ag;
	struct sr_queue_job *j;
	const char *id;
	int64_t epoch;
	/* the heartbeat thread */
	pthread_t th;
	int th_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* on CLOCK_MONOTONIC */
	int stop;
	int dirty;			/* prog changed since the last marker */
	struct sr_run_progress prog;
	struct sr_queue_status base;	/* the counts before this run */
	char key[SR_QUEUE_KEY_MAX];	/* the marker written last ("": none) */
	double written;			/* monotonic time of that write */
	/* cancel: the heartbeat thread writes a byte when it is requested */
	int cancel_pipe[2];
	int cancel_asked, cancel_ckpt;
	char cancel_err[SR_ERRMAX];	/* the last failure to check (said once) */
	/* logs: one writer per attempt, used from the run's thread only */
	struct sr_queue_log *log;
	int log_attempt;
	int finished;			/* its lease ended: later lines stay local */
	/* a gang's node (agent-gang.c); lead: this agent holds the lease and
	 * writes the markers and the log (node 0, or a job of one machine) */
	struct sr_agent_gang gang;
	int in_gang, lead;
	int gang_poke;			/* something for the gang's watch to pass on now */
	struct sr_agent_waker *waker;	/* another node's datagram pokes it (NULL: none) */
	int gang_lost;			/* node 0: its run failed as a node was lost */
	char *snap;			/* its shipped workdir's snapshot (NULL: none) */
	char *copy;			/* and its copy of it */
};

void
sr_agent_skip_add(struct sr_agent *ag, const char *id, double seconds)
{
	ag->skip = sr_reallocarray(ag->skip, ag->nskip + 1, sizeof *ag->skip);
	snprintf(ag->skip[ag->nskip].id, sizeof ag->skip[ag->nskip].id, "%s", id);
	ag->skip[ag->nskip++].until = sr_mono() + seconds;
}

int
sr_agent_skipped(struct sr_agent *ag, const char *id)
{
	double now = sr_mono();
	size_t i;

	for (i = 0; i < ag->nskip; i++) {
		if (ag->skip[i].until <= now)
			ag->skip[i--] = ag->skip[--ag->nskip];
		else if (strcmp(ag->skip[i].id, id) == 0)
			return 1;
	}
	return 0;
}

/* What seconds of this machine cost, spot (as it runs) and on demand,
 * added to *cost and *on_demand; a type the table lacks costs 0, said
 * once. */
static void
price(struct sr_agent *ag, double seconds, double *cost, double *on_demand)
{
	char err[SR_ERRMAX];
	double c = 0, d = 0;

	if (ag->o->prices == NULL || seconds <= 0)
		return;
	if (sr_prices_cost(ag->o->prices, ag->price_type, ag->spot, seconds, &c, err) == -1 ||
	    sr_prices_cost(ag->o->prices, ag->price_type, 0, seconds, &d, err) == -1) {
		if (!ag->price_warned)
			sr_agent_say("warning: %s; its jobs cost 0 in the status", err);
		ag->price_warned = 1;
		return;
	}
	*cost += c;
	*on_demand += d;
}

/* The status marker of job b as it stands, in state. The claim is an
 * attempt from the marker written at the claim on, before the run reports
 * one: a holder that loses its lease (taken over on a loaded machine)
 * before its run's first report writes nothing more, and the next holder
 * counts on from the marker it read at its claim. */
static void
status_of(struct job *b, const struct sr_run_progress *p, enum sr_lease_state state,
    struct sr_queue_status *s)
{
	*s = b->base;
	s->epoch = b->epoch;
	s->time = 0;
	s->state = state;
	s->attempts += p != NULL && p->attempts > 1 ? p->attempts : 1;
	if (p != NULL) {
		s->preemptions += p->preemptions;
		s->gpu_seconds += (int64_t)llround(p->seconds * p->gpus);
		s->lost_gpu_seconds += (int64_t)llround(p->lost * p->gpus);
		if (p->step >= 0)
			s->step = p->step;
		price(b->ag, p->seconds, &s->cost, &s->on_demand_cost);
	}
	snprintf(s->host, sizeof s->host, "%s", b->ag->me.host);
}

/* Write the marker (the caller holds no lock; only one thread writes at a
 * time: the heartbeat thread while it runs, the agent's before and after). */
static void
write_status(struct job *b, const struct sr_run_progress *p, enum sr_lease_state state)
{
	struct sr_queue_status s;
	char err[SR_ERRMAX];

	if (!b->lead)
		return;		/* a gang's other node: node 0 writes them */
	/* An agent stopped past its lease (a paused VM) writes no "running"
	 * after the newer run's markers: its lease may be another's by now. */
	if (state == SR_LEASE_RUNNING && !sr_lease_fresh(b->j->lease))
		return;
	status_of(b, p, state, &s);
	if (sr_queue_status_set(b->ag->q, &s, b->key[0] != '\0' ? b->key : NULL, err) != 0) {
		sr_agent_say("warning: %s: %s", b->id, err);
		return;
	}
	snprintf(b->key, sizeof b->key, "%s", s.key);
	b->written = sr_mono();
}

/* One heartbeat: the cancel request, and the marker when it is old. */
static void
beat(struct job *b)
{
	char err[SR_ERRMAX], one = 'c';
	struct sr_run_progress p;
	int ckpt = 0, rc;

	if (!b->cancel_asked) {
		rc = sr_queue_cancel_requested(b->ag->q, b->id, &ckpt, err);
		if (rc == 1) {
			b->cancel_asked = 1;
			b->cancel_ckpt = ckpt;
			sr_agent_say("%s: cancel requested%s", b->id, ckpt ? " (after a checkpoint)" : "");
			if (write(b->cancel_pipe[1], &one, 1) == -1)
				sr_agent_say("warning: %s: cancel pipe: %s", b->id, strerror(errno));
		} else if (rc == -1 && strcmp(err, b->cancel_err) != 0) {
			snprintf(b->cancel_err, sizeof b->cancel_err, "%s", err);
			sr_agent_say("warning: %s: %s", b->id, err);
		}
	}
	sr_agent_facts_renew(b->ag);
	if (sr_mono() - b->written >= b->ag->ttl) {
		pthread_mutex_lock(&b->lock);
		p = b->prog;
		pthread_mutex_unlock(&b->lock);
		write_status(b, &p, SR_LEASE_RUNNING);
	}
}

static void *
heartbeat_main(void *arg)
{
	struct job *b = arg;
	/* the first beat at once: a cancel asked while the job was being
	 * claimed reaches the run now, not a third of a TTL later */
	double interval = b->ag->ttl / 3, next = sr_mono(), at;
	double gang_next = b->in_gang ? sr_mono() : -1;
	struct sr_run_progress p;
	struct timespec ts;

	pthread_mutex_lock(&b->lock);
	while (!b->stop) {
		if (b->gang_poke) {
			b->gang_poke = 0;
			gang_next = sr_mono();
		}
		if (gang_next >= 0 && sr_mono() >= gang_next) {
			pthread_mutex_unlock(&b->lock);
			sr_agent_gang_beat(&b->gang, b->id);
			gang_next = sr_mono() + sr_agent_gang_interval();
			pthread_mutex_lock(&b->lock);
			continue;
		}
		if (b->dirty) {
			b->dirty = 0;
			p = b->prog;
			pthread_mutex_unlock(&b->lock);
			write_status(b, &p, SR_LEASE_RUNNING);
			if (gang_next >= 0)
				gang_next = sr_mono();	/* a notice to pass on at once */
			pthread_mutex_lock(&b->lock);
			continue;
		}
		if (sr_mono() >= next) {
			pthread_mutex_unlock(&b->lock);
			beat(b);
			next = sr_mono() + interval;
			pthread_mutex_lock(&b->lock);
			continue;
		}
		at = gang_next >= 0 && gang_next < next ? gang_next : next;
		sr_timespec(at, &ts);
		pthread_cond_timedwait(&b->cond, &b->lock, &ts);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

static int
heartbeat_start(struct job *b, char *err)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);	/* signals stay with the run's loop */
	rc = pthread_create(&b->th, NULL, heartbeat_main, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		return sr_errno(err, "start the heartbeat of job %s", b->id);
	}
	b->th_started = 1;
	return 0;
}

static void
heartbeat_stop(struct job *b)
{
	if (!b->th_started)
		return;
	pthread_mutex_lock(&b->lock);
	b->stop = 1;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	pthread_join(b->th, NULL);
	b->th_started = 0;
}

/* ---- the run's hooks ---- */

static void
log_close(struct job *b)
{
	char err[SR_ERRMAX];

	if (b->log != NULL && sr_queue_log_close(b->log, err) == -1)
		sr_agent_say("warning: %s: ship its log: %s", b->id, err);
	b->log = NULL;
}

/* Another node of the gang wrote what this one must read (agent-wake.c):
 * the heartbeat reads the slots now. On the waker's thread. */
static void
gang_poke(void *arg)
{
	struct job *b = arg;

	pthread_mutex_lock(&b->lock);
	b->gang_poke = 1;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

static void
on_progress(void *arg, enum sr_run_event ev, const struct sr_run_progress *p)
{
	struct job *b = arg;

	if (ev == SR_RUN_EV_REQUEST) {
		/* node 0's request, for the gang's other nodes: no marker */
		if (b->in_gang) {
			sr_agent_gang_requested(&b->gang, p->request_deadline);
			pthread_mutex_lock(&b->lock);
			b->gang_poke = 1;
			pthread_cond_broadcast(&b->cond);
			pthread_mutex_unlock(&b->lock);
		}
		return;
	}
	if (ev == SR_RUN_EV_ATTEMPT_END && b->in_gang)
		sr_agent_gang_over(&b->gang);
	if (ev == SR_RUN_EV_NOTICE && p->notice_machine) {
		if (b->in_gang)
			sr_agent_gang_noticed(&b->gang, p->notice_deadline);
		__atomic_store_n(&b->ag->going, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_lock(&b->lock);
	/* the gang learns of this machine's notice before the marker is
	 * written (a put of its own, which the other nodes waited for) */
	if (ev == SR_RUN_EV_NOTICE && p->notice_machine && b->in_gang)
		b->gang_poke = 1;
	b->prog = *p;
	b->dirty = 1;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

static void
on_log(void *arg, int attempt, const char *buf, size_t len)
{
	struct job *b = arg;
	char err[SR_ERRMAX];

	if (b->finished || !b->lead)
		return;		/* `spotrun logs -f` stopped at the lease's end; a gang's
				 * other node keeps its log (node 0's is the job's) */
	if (b->log != NULL && b->log_attempt != attempt)
		log_close(b);
	if (b->log == NULL) {
		b->log = sr_queue_log_open(b->ag->q, b->id, b->epoch, attempt, 0, 0, err);
		b->log_attempt = attempt;
		if (b->log == NULL) {
			sr_agent_say("warning: %s: %s", b->id, err);
			return;
		}
	}
	sr_queue_log_write(b->log, buf, len);
}

static int
on_stop(void *arg, int *checkpoint)
{
	struct job *b = arg;
	char c;

	if (read(b->cancel_pipe[0], &c, 1) != 1)
		return 0;
	*checkpoint = b->cancel_ckpt;
	return 1;
}

static int
on_notice(void *arg, struct sr_notice *n)
{
	struct job *b = arg;

	return sr_agent_gang_notice(&b->gang, n);
}

/* The job finished: ship its log, then end its lease succeeded. */
static int
on_finish(void *arg, char *err)
{
	struct job *b = arg;
	int rc, tries;

	log_close(b);
	b->finished = 1;
	/* the heartbeat, which writes markers too, ends first; the lease,
	 * then its marker, as end_job does */
	heartbeat_stop(b);
	if (!b->lead)
		return 0;	/* a gang's other node: node 0 ends the lease */
	for (tries = 0; tries < 3; tries++) {
		if (tries > 0)
			sr_sleep(0.5 * tries);
		rc = sr_queue_job_end(b->ag->q, b->j, SR_LEASE_SUCCEEDED, err);
		if (rc == SR_QUEUE_OK) {
			write_status(b, &b->prog, SR_LEASE_SUCCEEDED);
			return 0;
		}
		if (rc == SR_QUEUE_LOST)
			return -2;
	}
	return -1;
}

/* ---- the job ---- */

/* A spec that does not parse: its errors on stderr and in its log. */
static void
report_bad_spec(struct job *b, const char *path, const struct sr_jobspec_errors *errs)
{
	char *text = NULL;
	size_t len = 0, i;
	FILE *fp = open_memstream(&text, &len);

	if (fp == NULL)
		sr_fatal("open_memstream: out of memory");
	sr_jobspec_errors_print(path, errs, fp);
	fprintf(fp, "spotrun agent: %s: not run: its job file in the queue is not valid; it is "
	    "marked failed (submit it again once fixed)\n", b->id);
	fclose(fp);
	fputs(text, stderr);
	for (i = 0; i < len; i++) {
		/* the log's format: a spotrun line per line of the report */
		if (i == 0 || text[i - 1] == '\n') {
			size_t n = strcspn(text + i, "\n");
			char *line = sr_asprintf("+0000.000 spotrun %.*s\n", (int)n, text + i);

			on_log(b, 0, line, strlen(line));
			free(line);
		}
	}
	log_close(b);
	free(text);
}

/* The folder the job's relative paths are taken against: the job file's
 * folder where it was submitted, when this machine has it (a laptop's own
 * agent, a shared file system: the job runs as `spotrun run` would run it
 * there), else the job's folder of the agent, DIR/jobs/ID (malloc'd); and
 * the snapshot of its working directory, when it was shipped (*snap,
 * malloc'd; else NULL). */
static char *
base_dir(struct job *b, const char *own, char **snap)
{
	struct sr_queue_job_meta m;
	char err[SR_ERRMAX], *dir = NULL;
	struct stat sb;
	int rc;

	*snap = NULL;
	rc = sr_queue_meta_read(b->ag->q, b->id, &m, err);
	if (rc == SR_QUEUE_OK) {
		if (m.dir[0] == '/' && stat(m.dir, &sb) == 0 && S_ISDIR(sb.st_mode))
			dir = sr_strdup(m.dir);
		if (m.workdir[0] != '\0')
			*snap = sr_strdup(m.workdir);
		sr_queue_job_meta_free(&m);
	} else {
		sr_agent_say("warning: %s: %s (its relative paths are taken in %s)", b->id, err, own);
	}
	return dir != NULL ? dir : sr_strdup(own);
}

/* Parse j's spec for the run, named by its id, in its store, its local
 * state (unless its file names a local_dir) in DIR/jobs/ID. NULL after a
 * report when it is not a job this agent can run (err ""), or with err. */
static struct sr_jobspec *
load_spec(struct job *b, char *err)
{
	struct sr_jobspec_errors errs;
	struct sr_jobspec_names names;
	struct sr_jobspec *js;
	char *own, *dir, *path, *dflt, *snap;

	own = sr_asprintf("%s/jobs/%s", b->ag->dir, b->id);
	if (sr_mkdirs(own, 0755, err) == -1) {
		free(own);
		return NULL;
	}
	dir = base_dir(b, own, &snap);
	/* shipped: the job runs in its own copy of the snapshot, and its
	 * relative paths are taken there, never in the folder it came from */
	if (snap != NULL) {
		struct sr_lease_keeper *k = NULL;
		int rc;

		free(dir);
		dir = NULL;
		/* a restore may outlast the lease's TTL: renew it meanwhile */
		if (b->lead && (k = sr_lease_keeper_start(b->j->lease, NULL, NULL, err)) == NULL) {
			free(snap);
			free(own);
			return NULL;
		}
		rc = sr_agent_workdir(b->ag, b->id, snap, &dir, err);
		if (rc == 0 && k != NULL && sr_lease_keeper_status(k, err) != SR_LEASE_OK) {
			free(dir);
			rc = -1;
		}
		sr_lease_keeper_stop(k);
		if (rc == -1) {
			sr_err_prefix(err, "its workdir");
			free(snap);
			free(own);
			return NULL;
		}
	}
	path = sr_asprintf("%s/jobs/%s/spec.ini", sr_queue_url(b->ag->q), b->id);
	sr_method_names(&names);
	if (sr_jobspec_parse(path, dir, b->j->spec, b->j->spec_len, &names, &js, &errs) == -1) {
		report_bad_spec(b, path, &errs);
		sr_jobspec_errors_free(&errs);
		js = NULL;
	} else if (js->nsweep > 0) {
		struct sr_jobspec_errors one = { NULL, 0 };
		struct sr_jobspec_error e = { 0, "" };

		snprintf(e.msg, sizeof e.msg, "a sweep file, not one of its trials (spotrun submit "
		    "expands a sweep into its trials)");
		one.v = &e;
		one.n = 1;
		report_bad_spec(b, path, &one);
		sr_jobspec_free(js);
		js = NULL;
	}
	free(path);
	if (js == NULL) {
		free(dir);
		free(snap);
		free(own);
		err[0] = '\0';
		return NULL;
	}
	/* the default local_dir (workdir/.spotrun/NAME) is this agent's: two
	 * agents of one machine never share a job's lock and checkpoint copy */
	dflt = sr_asprintf("%s/.spotrun/%s", js->workdir, js->name);
	if (strcmp(js->local_dir, dflt) == 0) {
		free(js->local_dir);
		js->local_dir = sr_asprintf("%s/.spotrun/%s", own, b->id);
	}
	free(dflt);
	free(own);
	if (snap != NULL) {	/* whatever workdir its file names: it was shipped */
		sr_agent_say("%s: workdir %s (snapshot %s)", b->id, dir, snap);
		free(js->workdir);
		js->workdir = sr_strdup(dir);
		b->copy = sr_strdup(dir);
	}
	b->snap = snap;		/* for its setup */
	free(dir);
	free(js->name);
	js->name = sr_strdup(b->id);
	free(js->store);
	js->store = sr_strdup(b->j->store_url);
	/* the agent was told what machine this is: auto need not find out */
	if (b->ag->o->provider != NULL && strcmp(js->provider.name, "auto") == 0) {
		free((char *)js->provider.name);
		js->provider.name = sr_strdup(b->ag->o->provider);
	}
	return js;
}

static void
on_setup_log(void *arg, const char *buf, size_t len)
{
	on_log(arg, 0, buf, len);	/* before attempt 1: `spotrun logs` says "setup" */
}

/* What stopped setup or the data's fetch before the run, into res: a
 * signal (SIGTERM, a spot machine's shutdown, as in a run: a preemption),
 * a cancel, the lease lost. 1 when one did, else 0. */
static int
stopped(int signal, int cancelled, int lost, const char *lost_why, struct sr_run_result *res)
{
	if (signal != 0) {
		res->outcome = signal == SIGTERM ? SR_RUN_PREEMPTED : SR_RUN_FAILED;
		res->signal = signal;
	} else if (cancelled) {
		res->outcome = SR_RUN_CANCELLED;
	} else if (lost) {
		res->outcome = SR_RUN_LEASE_LOST;
		snprintf(res->err, sizeof res->err, "%s", lost_why);
	} else {
		return 0;
	}
	return 1;
}

/* The job's [job] setup, before its run (agent-setup.c): 0 to run the job,
 * or 1 when it ends here as res says: failed with setup's exit code,
 * stopped by a signal (a preemption: released), cancelled, its lease lost,
 * or released after the agent's own error. */
static int
setup(struct job *b, const struct sr_jobspec *js, struct sr_run_result *res)
{
	struct sr_agent_setup s;
	struct sr_lease_keeper *k = NULL;
	int rc;

	memset(&s, 0, sizeof s);
	memset(res, 0, sizeof *res);
	s.id = b->id;
	s.js = js;
	s.snap = b->snap;
	s.copy = b->copy;
	s.stop_fd = b->cancel_pipe[0];
	s.log = on_setup_log;
	s.log_arg = b;
	/* setup may outlast the lease's TTL: renew it meanwhile */
	if (b->lead && (k = sr_lease_keeper_start(b->j->lease, NULL, NULL, res->err)) == NULL) {
		res->outcome = SR_RUN_ERR_SYSTEM;
		return 1;
	}
	s.keeper = k;
	rc = sr_agent_setup(b->ag, &s, res->err);
	sr_lease_keeper_stop(k);
	if (rc == -1) {
		sr_err_prefix(res->err, "its setup");
		res->outcome = SR_RUN_ERR_SYSTEM;
	} else if (!stopped(s.signal, s.cancelled, s.lost, s.lost_why, res)) {
		if (s.code == 0)
			return 0;
		res->outcome = SR_RUN_FAILED;	/* failed: setup would fail again */
		res->code = s.code;
	}
	return 1;
}

/* The job's [data], after its setup (agent-data.c): 0 to run the job, or
 * 1 when it ends here as res says: failed (what would fail again: the
 * job file's to fix), released after the store's passing error, stopped
 * by a signal (SIGTERM: a preemption), cancelled, its lease lost. */
static int
data(struct job *b, const struct sr_jobspec *js, struct sr_run_result *res)
{
	struct sr_agent_data d;
	struct sr_lease_keeper *k = NULL;
	int rc;

	memset(&d, 0, sizeof d);
	memset(res, 0, sizeof *res);
	d.id = b->id;
	d.js = js;
	d.stop_fd = b->cancel_pipe[0];
	d.log = on_setup_log;
	d.log_arg = b;
	/* a fetch may outlast the lease's TTL: renew it meanwhile */
	if (b->lead && (k = sr_lease_keeper_start(b->j->lease, NULL, NULL, res->err)) == NULL) {
		res->outcome = SR_RUN_ERR_SYSTEM;
		return 1;
	}
	d.keeper = k;
	rc = sr_agent_data(b->ag, &d, res->err);
	sr_lease_keeper_stop(k);
	if (rc == -1) {
		res->outcome = d.res.permanent ? SR_RUN_ERR_CONFIG : SR_RUN_ERR_STORE;
	} else if (!stopped(d.signal, d.cancelled, d.lost, d.lost_why, res)) {
		return 0;
	}
	return 1;
}

/* End the lease as res says and write the last marker; count it. */
static void
end_job(struct job *b, const struct sr_run_result *res, struct sr_agent_result *ar)
{
	struct sr_lease_info li;
	char err[SR_ERRMAX];
	int state = sr_run_lease_state(res), rc;

	if (res->outcome == SR_RUN_ERR_CONFIG)
		state = SR_LEASE_FAILED;	/* the job file's to fix: not another agent's to retry */
	else if (state == SR_LEASE_FAILED && b->gang_lost)
		state = SR_LEASE_RELEASED;	/* as after a preemption: not this agent's to skip */
	else if (state == SR_LEASE_RELEASED && res->outcome != SR_RUN_PREEMPTED && res->signal == 0)
		sr_agent_skip_add(b->ag, b->id, SKIP_SECONDS);
	if (state < 0) {
		ar->lost++;
		sr_agent_say("%s: lost its lease: nothing more is written for it here", b->id);
		return;
	}
	sr_fault("agent-end");
	/* A cancel asked after the last heartbeat read: a job going back to
	 * the queue (preempted, released) ends cancelled instead, as the
	 * user was told; one that finished stays what it was. */
	if (state == SR_LEASE_RELEASED && b->lead && !b->cancel_asked &&
	    sr_queue_cancel_requested(b->ag->q, b->id, &(int){ 0 }, err) == 1) {
		sr_agent_say("%s: cancel requested: not put back in the queue", b->id);
		state = SR_LEASE_CANCELLED;
	}
	if (b->lead)
		sr_lease_get_info(b->j->lease, &li);
	if (b->lead && li.state != (enum sr_lease_state)state) {
		/* The lease first, the truth; the marker after it is a hint: an
		 * agent killed between the two leaves a marker that the next
		 * scan for dead agents' leases repairs (sr_queue_find_expired),
		 * where the other order would leave a lease running for good
		 * behind a marker that keeps scans from reading it. */
		rc = sr_queue_job_end(b->ag->q, b->j, (enum sr_lease_state)state, err);
		if (rc == SR_QUEUE_LOST) {
			ar->lost++;
			sr_agent_say("%s: %s", b->id, err);
			return;
		}
		if (rc != SR_QUEUE_OK)	/* the marker stays running, so the scans read it */
			sr_agent_say("warning: %s: %s (its lease expires; another agent takes it over)",
			    b->id, err);
		else {
			write_status(b, &b->prog, (enum sr_lease_state)state);
			/* a gang put back: its members, idle since their runs
			 * ended, claim it now instead of at their next poll */
			if (b->in_gang && state == SR_LEASE_RELEASED)
				sr_agent_wake_peers(&b->gang);
		}
	}
	switch (state) {
	case SR_LEASE_SUCCEEDED:
		ar->succeeded++;
		break;
	case SR_LEASE_FAILED:
		ar->failed++;
		break;
	case SR_LEASE_CANCELLED:
		ar->cancelled++;
		break;
	default:
		ar->released++;
		break;
	}
	if (b->lead)
		sr_agent_say("%s: %s (epoch %lld)", b->id,
		    sr_lease_state_name((enum sr_lease_state)state), (long long)b->epoch);
	else
		sr_agent_say("%s: gang node %d: %s (epoch %lld; node 0 ends the lease)", b->id,
		    b->gang.node, sr_lease_state_name((enum sr_lease_state)state),
		    (long long)b->epoch);
}

int
sr_agent_job(struct sr_agent *ag, struct sr_queue_job *j, struct sr_agent_result *ar)
{
	const struct sr_agent_opts *o = ag->o;
	struct sr_run_hooks h;
	struct sr_run_opts ro;
	struct sr_run_result res;
	struct sr_jobspec *js;
	pthread_condattr_t ca;
	struct job b;
	char err[SR_ERRMAX];
	int next = -1, rc, ended = 0, done = 0;

	memset(&b, 0, sizeof b);
	if (pthread_condattr_init(&ca) != 0 || pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&b.cond, &ca) != 0 || pthread_mutex_init(&b.lock, NULL) != 0)
		sr_fatal("agent: pthread init failed");
	pthread_condattr_destroy(&ca);
	b.ag = ag;
	b.j = j;
	b.id = j->marker.id;
	b.lead = j->lease != NULL;
	b.epoch = b.lead ? sr_lease_epoch(j->lease) : sr_gang_epoch(j->gang);
	b.cancel_pipe[0] = b.cancel_pipe[1] = -1;
	ar->jobs++;
	sr_agent_say("%s: claimed (epoch %lld%s, %d requests), store %s", b.id, (long long)b.epoch,
	    j->claim.took_over ? ", taken over" : "", j->requests, j->store_url);
	if (j->gang != NULL) {
		int sig;

		rc = sr_agent_gang_form(ag, j, &b.gang, &sig);
		if (rc != 0) {
			/* not run: back to the queue (node 0's lease and marker) */
			ar->jobs--;
			if (b.lead && sr_queue_job_end(ag->q, j, SR_LEASE_RELEASED, err) != SR_QUEUE_OK)
				sr_agent_say("warning: %s: %s", b.id, err);
			if (rc == -1) {
				ar->signal = sig;
				next = SR_AGENT_SIGNALLED;
			} else if (rc == 3) {
				next = SR_AGENT_PREEMPTED;
			}
			goto out;
		}
		b.in_gang = 1;
		b.waker = sr_agent_waker_start(ag->wake_fd, b.id, b.gang.epoch, gang_poke, &b);
	}
	/* the counts are node 0's to write (write_status): a gang's other
	 * nodes read none, a listing less on the way to each gang's start */
	sr_fault("agent-status-read");
	rc = b.lead ? sr_queue_status_get(ag->q, b.id, &b.base, err) : SR_QUEUE_NOTFOUND;
	if (rc != SR_QUEUE_OK) {
		if (rc == SR_QUEUE_ERROR)
			sr_agent_say("warning: %s: %s (its counts start from 0)", b.id, err);
		memset(&b.base, 0, sizeof b.base);
		snprintf(b.base.id, sizeof b.base.id, "%s", b.id);
		b.base.step = -1;
	} else if (j->claim.took_over && b.base.epoch < b.epoch - 1) {
		/* The holder taken over claimed epoch b.epoch - 1 and left no
		 * marker: its lease was no longer fresh when it would have
		 * written the first (a claim slower than the TTL's give-up
		 * time, as on a loaded machine). Its claim was an attempt. */
		b.base.attempts++;
	}
	b.prog.step = -1;
	write_status(&b, NULL, SR_LEASE_RUNNING);
	sr_fault("agent-claimed");
	if (pipe2(b.cancel_pipe, O_CLOEXEC | O_NONBLOCK) == -1) {
		sr_errno(err, "agent: pipe");
		sr_agent_say("%s: %s; released", b.id, err);
		if (b.lead)
			sr_queue_job_end(ag->q, j, SR_LEASE_RELEASED, err);
		ar->released++;
		goto out;
	}
	if ((js = load_spec(&b, err)) == NULL) {
		if (err[0] != '\0') {
			sr_agent_say("%s: %s; released", b.id, err);
			if (b.lead)
				sr_queue_job_end(ag->q, j, SR_LEASE_RELEASED, err);
			sr_agent_skip_add(ag, b.id, SKIP_SECONDS);
			ar->released++;
		} else {
			rc = b.lead ? sr_queue_job_end(ag->q, j, SR_LEASE_FAILED, err) : SR_QUEUE_OK;
			if (rc != SR_QUEUE_OK)
				sr_agent_say("warning: %s: %s", b.id, err);
			write_status(&b, NULL, SR_LEASE_FAILED);	/* after: see end_job */
			ar->failed++;
		}
		goto out;
	}
	memset(&h, 0, sizeof h);
	h.arg = &b;
	h.lease = j->lease;
	h.lease_prev = b.lead && j->claim.found ? &j->claim.prev : NULL;
	h.notice_fd = -1;
	if (b.in_gang) {
		sr_agent_gang_hooks(&b.gang, &h);
		h.notice = on_notice;
	}
	h.gpus = &ag->found;
	h.one_vm = 1;
	h.vm = ag->vm;
	h.trace_node = ag->o->trace_node;
	h.vm_since = ag->vm_since;
	h.term_notice = 1;
	h.progress = on_progress;
	h.log = on_log;
	h.stop_fd = b.cancel_pipe[0];
	h.stop = on_stop;
	h.finish = on_finish;
	memset(&ro, 0, sizeof ro);
	ro.quiet = o->quiet;
	ro.exit_code = o->exit_code;
	ro.hooks = &h;
	if (heartbeat_start(&b, err) == -1) {
		sr_agent_say("%s: %s; released", b.id, err);
		if (b.lead)
			sr_queue_job_end(ag->q, j, SR_LEASE_RELEASED, err);
		ar->released++;
		sr_jobspec_free(js);
		goto out;
	}
	ro.data_done = 1;	/* fetched here, after setup: data() */
	sr_agent_watch_stop(ag);	/* the run watches its machine */
	if ((js->setup == NULL || setup(&b, js, &res) == 0) &&
	    (js->ndata == 0 || data(&b, js, &res) == 0))
		sr_run_job(js, &ro, &res);
	heartbeat_stop(&b);
	log_close(&b);
	if (res.err[0] != '\0' && res.outcome != SR_RUN_FINISHED && res.outcome != SR_RUN_FAILED &&
	    res.outcome != SR_RUN_PREEMPTED && res.outcome != SR_RUN_CANCELLED)
		sr_agent_say("%s: %s", b.id, res.err);
	/* a node lost without a notice fails the others' ranks before its
	 * slot expires: the job goes back to the queue, not failed */
	if (b.in_gang && res.outcome == SR_RUN_FAILED && sr_run_lease_state(&res) == SR_LEASE_FAILED)
		b.gang_lost = sr_agent_gang_lost(ag, j, &b.gang);
	end_job(&b, &res, ar);
	/* between runs, the agent watches its machine as this run did */
	sr_agent_watch_keep(ag, &js->provider, sr_run_trace_node(&h));
	ended = !b.gang_lost && (sr_run_lease_state(&res) == SR_LEASE_SUCCEEDED ||
	    sr_run_lease_state(&res) == SR_LEASE_FAILED);
	/* a member whose job succeeded says so in its slot: node 0 must not
	 * take it for a node gone while its own job still runs (rank 0's
	 * last save, after the other ranks exited) */
	done = ended && (!b.in_gang || b.gang.node == 0 ||
	    sr_run_lease_state(&res) == SR_LEASE_SUCCEEDED);
	sr_jobspec_free(js);
	if (res.signal != 0) {
		ar->signal = res.signal;
		next = SR_AGENT_SIGNALLED;
	} else if (res.outcome == SR_RUN_PREEMPTED &&
	    (!b.in_gang || sr_agent_gang_own_notice(&b.gang))) {
		/* the machine goes (not so for another node's notice), or,
		 * the local provider's, the next is up at once */
		if (sr_agent_machine_goes(ag, res.next_vm))
			next = SR_AGENT_PREEMPTED;
	}
out:
	sr_agent_waker_stop(b.waker);
	if (b.in_gang)
		sr_agent_gang_end(&b.gang, done);
	if (b.cancel_pipe[0] != -1) {
		close(b.cancel_pipe[0]);
		close(b.cancel_pipe[1]);
	}
	pthread_cond_destroy(&b.cond);
	pthread_mutex_destroy(&b.lock);
	free(b.snap);
	free(b.copy);
	sr_queue_job_free(j);
	return next;
}
