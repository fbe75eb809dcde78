/*
 * local.c: the `local` provider: simulated preemption notices, so the
 * quickstart, the tests and the benchmarks run on any Linux machine.
 *
 * Each VM (sr_provider_start_vm) gets one watcher thread that posts at most
 * ONE SR_NOTICE_PREEMPT notice, at the first of these that are configured:
 *  - `after`: conf->after seconds after the VM started;
 *  - `random_mean`: an exponential delay with that mean, drawn from
 *    splitmix64(seed + attempt), so a run is reproducible and each VM
 *    draws its own delay;
 *  - `notice_file`: the file exists (checked every 50 ms, also at once). It
 *    is removed when taken, so one `touch` is one preemption and the next
 *    VM does not see it again; if it cannot be removed it still counts once
 *    per VM;
 *  - `trace`: VM number k lives as long as the k-th up-period of the trace
 *    that starts at or after trace_start, scaled down by trace_scale (trace
 *    seconds per real second). The machine goes away at the end of the
 *    period; the notice comes conf->window real seconds before that, or at
 *    once when the period is shorter than the window (the deadline stays the
 *    end of the period). An up-period still running at the end of the trace,
 *    and every VM past the last period, gets no notice from the trace.
 * The deadline is seen + window, except for the trace (the period's end).
 * Once conf->max_preemptions notices were taken (sr_provider_read) in this
 * provider's life, later VMs get none (-1: no limit). After a preemption
 * the local provider always plays "the next VM" (sr_provider_next_vm = 1).
 * Down-time between trace periods is not simulated: the next VM starts at
 * once. The first VM may be one that is up already (conf->vm_since: an
 * agent's machine, which outlives its jobs): its trace period is counted
 * from then. With conf->machine_only (an agent's watch between its runs)
 * only the trace plays: the other triggers are each run's own.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "provider-int.h"
#include "trace.h"
#include "watch.h"
#include "util.h"

#define NOTICE_FILE_POLL 0.05	/* seconds between checks of notice_file */

struct local {
	struct sr_trace *trace;		/* NULL without conf->trace */
	size_t first;			/* the period VM 1 replays */

	struct sr_watch w;		/* this VM's watcher thread */

	/* This VM's plan, written by start_vm before the thread starts. */
	double fire_at;			/* monotonic seconds; < 0: no timed notice */
	double fixed_deadline;		/* epoch seconds; 0: seen + window */
	char reason[128];		/* of the timed notice */
	int watch_file;
	int fired;			/* the thread posted this VM's notice */
	int started;			/* VMs started: the first is conf->vm_since's */
};

/* splitmix64 (Steele, Lea, Flood 2014): one well-mixed 64-bit value per
 * input, which is all a per-VM draw needs. */
static uint64_t
splitmix64(uint64_t x)
{
	uint64_t z = x + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double
sr_local_random_delay(double mean, uint64_t seed, int attempt)
{
	uint64_t z = splitmix64(seed + (uint64_t)attempt);
	double u = (double)(z >> 11) * 0x1.0p-53;	/* [0, 1) */

	return -mean * log1p(-u);
}

static int
local_detect(const struct sr_provider_conf *conf, double timeout)
{
	return 1;	/* any machine can simulate */
}

static int
check_setting(const char *key, double v, char *err)
{
	if (!(v >= 0) || isinf(v))
		return sr_err(err, "create provider local: %s is %g; it must be a "
		    "finite number >= 0", key, v);
	return 0;
}

static int
local_init(struct sr_provider *p, char *err)
{
	const struct sr_provider_conf *c = &p->conf;
	struct local *l;

	if (check_setting("window", c->window, err) == -1 ||
	    check_setting("after", c->after, err) == -1 ||
	    check_setting("random_mean", c->random_mean, err) == -1 ||
	    check_setting("trace_start", c->trace_start, err) == -1)
		return -1;
	if (c->max_preemptions < -1)
		return sr_err(err, "create provider local: max_preemptions is %d; it "
		    "must be >= 0, or -1 for no limit", c->max_preemptions);
	if (c->trace != NULL && (!(c->trace_scale > 0) || isinf(c->trace_scale)))
		return sr_err(err, "create provider local: trace_scale is %g; it must "
		    "be > 0 (trace seconds per real second, 1 = real time)",
		    c->trace_scale);
	l = sr_calloc(1, sizeof *l);
	if (c->trace != NULL) {
		if (sr_trace_load(c->trace, &l->trace, err) == -1) {
			free(l);
			return sr_err_prefix(err, "create provider local");
		}
		if (sr_trace_nodes(l->trace) > 1 && c->trace_node > 0) {
			sr_trace_free(l->trace);
			l->trace = NULL;
			if (sr_trace_load_node(c->trace, c->trace_node, &l->trace,
			    err) == -1) {
				free(l);
				return sr_err_prefix(err, "create provider local");
			}
		}
		if (sr_trace_start_period(l->trace, c->trace, c->trace_start, &l->first,
		    err) == -1) {
			sr_err_prefix(err, "create provider local: trace_start = %.10g s",
			    c->trace_start);
			sr_trace_free(l->trace);
			free(l);
			return -1;
		}
	}
	sr_watch_init(&l->w, "local");
	p->priv = l;
	return 0;
}

static void
local_free(struct sr_provider *p)
{
	struct local *l = p->priv;

	sr_watch_destroy(&l->w);
	sr_trace_free(l->trace);
	free(l);
}

/* Keep the earliest trigger: its time, reason and deadline. */
static void
plan(struct local *l, double at, double deadline, const char *reason)
{
	if (at < 0)		/* past (a machine's age before the clock's zero): at once */
		at = 0;
	if (l->fire_at >= 0 && l->fire_at <= at)
		return;
	l->fire_at = at;
	l->fixed_deadline = deadline;
	strlcpy(l->reason, reason, sizeof l->reason);
}

static void
plan_vm(struct sr_provider *p, struct local *l)
{
	const struct sr_provider_conf *c = &p->conf;
	double mono = sr_mono(), wall = sr_now(), age = 0, born, born_wall;
	char why[128];

	/* a machine up before this run: the trace's period has been running
	 * since (`after` and the random delay count from the run's start) */
	if (l->started++ == 0 && c->vm_since > 0 && wall > c->vm_since)
		age = wall - c->vm_since;
	born = mono - age;
	born_wall = wall - age;
	l->fire_at = -1;
	l->fixed_deadline = 0;
	l->reason[0] = '\0';
	l->watch_file = 0;
	l->fired = 0;
	if (c->max_preemptions >= 0 && p->taken >= c->max_preemptions)
		return;		/* this VM lives until it is stopped */
	if (c->after > 0 && !c->machine_only) {
		snprintf(why, sizeof why, "simulated preemption (after %g s)", c->after);
		plan(l, mono + c->after, 0, why);
	}
	if (c->random_mean > 0 && !c->machine_only) {
		snprintf(why, sizeof why, "simulated preemption (random, mean %g s)",
		    c->random_mean);
		plan(l, mono + sr_local_random_delay(c->random_mean, c->seed,
		    p->attempt), 0, why);
	}
	if (l->trace != NULL) {
		size_t n = sr_trace_nperiods(l->trace);
		size_t k = l->first + (size_t)(p->attempt - 1);

		if (k < n && !sr_trace_period(l->trace, k)->reaches_end) {
			double life = sr_trace_period(l->trace, k)->length / c->trace_scale;
			double lead = life > c->window ? life - c->window : 0;

			snprintf(why, sizeof why, "simulated preemption (trace up-period "
			    "%zu of %zu)", k + 1, n);
			plan(l, born + lead, born_wall + life, why);
		}
	}
	l->watch_file = c->notice_file != NULL && !c->machine_only;
}

static void
fire(struct sr_provider *p, struct local *l, const char *reason, double deadline)
{
	struct sr_notice n;

	memset(&n, 0, sizeof n);
	n.kind = SR_NOTICE_PREEMPT;
	n.seen = sr_now();
	n.deadline = deadline > 0 ? deadline : n.seen + p->conf.window;
	strlcpy(n.reason, reason, sizeof n.reason);
	sr_provider_post(p, &n);
}

/* Whether notice_file is there; it is removed when taken. */
static int
take_notice_file(const char *path)
{
	if (access(path, F_OK) == -1)
		return 0;
	unlink(path);	/* failure: still one notice for this VM */
	return 1;
}

static void *
watch(void *arg)
{
	struct sr_provider *p = arg;
	struct local *l = p->priv;
	char why[128];

	pthread_mutex_lock(&l->w.lock);
	while (!sr_watch_stopping(&l->w)) {
		double now = sr_mono(), wake = -1;

		if (l->fire_at >= 0 && now >= l->fire_at) {
			fire(p, l, l->reason, l->fixed_deadline);
			l->fired = 1;
			break;
		}
		if (l->watch_file && take_notice_file(p->conf.notice_file)) {
			snprintf(why, sizeof why, "simulated preemption (notice file %s)",
			    p->conf.notice_file);
			fire(p, l, why, 0);
			l->fired = 1;
			break;
		}
		if (l->fire_at >= 0)
			wake = l->fire_at;
		if (l->watch_file && (wake < 0 || wake > now + NOTICE_FILE_POLL))
			wake = now + NOTICE_FILE_POLL;
		sr_watch_wait_locked(&l->w, wake);
	}
	pthread_mutex_unlock(&l->w.lock);
	return NULL;
}

static int
local_start_vm(struct sr_provider *p, char *err)
{
	struct local *l = p->priv;

	plan_vm(p, l);
	if (l->fire_at < 0 && !l->watch_file)
		return 0;	/* nothing can fire: no thread */
	return sr_watch_start(&l->w, watch, p, p->attempt, err);
}

/* A timed notice whose time came before the thread, stopped first or
 * not yet run, posted it: the machine goes all the same, and the caller
 * that asks (sr_provider_stop_vm's left) must learn so. */
static void
local_stop_vm(struct sr_provider *p)
{
	struct local *l = p->priv;

	sr_watch_stop(&l->w);
	if (!l->fired && l->fire_at >= 0 && sr_mono() >= l->fire_at) {
		fire(p, l, l->reason, l->fixed_deadline);
		l->fired = 1;
	}
}

static int
local_next_vm(const struct sr_provider *p)
{
	return 1;
}

static int
local_facts(struct sr_provider *p, struct sr_facts *f, char *err)
{
	char host[64], desc[48];

	sr_provider_hostname(host, sizeof host, 1);
	sr_provider_describe_host(desc, sizeof desc);
	strlcpy(f->provider, "local", sizeof f->provider);
	/* Before the first VM starts, the facts are those of VM 1. */
	snprintf(f->instance_id, sizeof f->instance_id, "local-%s-%d", host,
	    p->attempt > 0 ? p->attempt : 1);
	snprintf(f->instance_type, sizeof f->instance_type, "local (%s)", desc);
	strlcpy(f->zone, "local", sizeof f->zone);
	strlcpy(f->lifecycle, "spot (simulated)", sizeof f->lifecycle);
	return 0;
}

const struct sr_provider_ops sr_provider_local_ops = {
	.name = "local",
	.window_key = "window",	/* the simulated notice's window */
	.detect = local_detect,
	.init = local_init,
	.free = local_free,
	.start_vm = local_start_vm,
	.stop_vm = local_stop_vm,
	.next_vm = local_next_vm,
	.simulated = 1,
	.facts = local_facts,
};
