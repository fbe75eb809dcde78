/*
 * attempt-ranks.c: the processes of an attempt, as torchrun's agent keeps
 * its workers: each rank spawned in a process group of its own with its own
 * environment (jobenv.c) and its own log, reaped as it ends, and the first
 * rank to fail stopping the others (SIGTERM now, SIGKILL after the grace
 * period), so that the group restarts as a whole by the [retry] policy.
 * A job of one process (one rank, or launch = once) is the same with n = 1.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container.h"
#include "jobenv.h"
#include "run-int.h"
#include "util.h"

extern char **environ;

/* How long the other ranks have, after one failed, between SIGTERM and
 * SIGKILL: as long as a stop for any other reason. */
#define RANK_FAIL_GRACE	10.0

/* The environment of rank i for this attempt, with the method's variables. */
static char **
rank_env(struct run *r, const struct attempt *a, const struct sr_launch *l, long long step,
    int prev_world, int i)
{
	struct sr_jobenv_vars v;
	struct sr_jobenv_proc p;

	memset(&v, 0, sizeof v);
	v.attempt = r->attempt;
	v.ckpt_dir = r->ckpt_dir;
	v.method_env = l->env;
	v.resume_step = step;
	v.provider = sr_provider_name(r->prov);
	v.python_dir = r->python_dir;
	v.world_size = r->ranks.world;
	v.prev_world_size = prev_world;
	v.master_addr = r->hooks->gang.nodes > 1 ? r->hooks->gang.master_addr : "127.0.0.1";
	v.master_port = r->master_port;
	v.node_rank = r->hooks->gang.node;
	v.nodes = r->hooks->gang.nodes;
	v.restart_count = r->restarts;
	v.max_restarts = r->js->max_restarts;
	v.run_id = r->run_id;
	v.pci_order = r->ranks.pci_order;
	v.metrics = a->metrics_path;
	memset(&p, 0, sizeof p);
	p.rank = i;
	p.visible = r->ranks.visible[i];
	p.method_env = l->proc_env != NULL ? l->proc_env[i] : NULL;
	p.error_file = a->rank[i].error_file;
	return sr_jobenv_build(environ, r->js, &v, &p);
}

/* Rank R's log lines to the caller's hook (the agent ships them), each
 * with "[R] " after its tag, as they are echoed: "+0001.250 out [1] ...". */
static void
rank_log_to_hook(void *arg, const char *buf, size_t len)
{
	struct rank *k = arg;
	char *out = sr_malloc(len + (len / 8 + 1) * 16), *o = out, tag[16];
	const char *p = buf, *end = buf + len, *nl, *sp;
	int tn = snprintf(tag, sizeof tag, "[%d] ", k->index);

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		nl = nl != NULL ? nl + 1 : end;
		/* "+T TAG " then the text: the tag goes after the second blank */
		sp = memchr(p, ' ', (size_t)(nl - p));
		sp = sp != NULL ? memchr(sp + 1, ' ', (size_t)(nl - sp - 1)) : NULL;
		if (sp == NULL || strncmp(sp + 1 - 8, "spotrun ", 8) == 0) {
			memcpy(o, p, (size_t)(nl - p));
			o += nl - p;
		} else {
			memcpy(o, p, (size_t)(sp + 1 - p));
			o += sp + 1 - p;
			memcpy(o, tag, (size_t)tn);
			o += tn;
			memcpy(o, sp + 1, (size_t)(nl - sp - 1));
			o += nl - sp - 1;
		}
		p = nl;
	}
	k->run->hooks->log(k->run->hooks->arg, k->run->attempt, out, (size_t)(o - out));
	free(out);
}

/* Rank i's output log: the attempt's own with one rank; with several,
 * attempt-N.rank-R.log beside it, its lines echoed after "[R] ". */
static int
open_rank_log(struct run *r, struct attempt *a, int i, char *err)
{
	char *path, prefix[16];

	if (a->nranks == 1) {
		a->rank[i].log = a->log;
		return 0;
	}
	path = sr_asprintf("%s/attempt-%d.rank-%d.log", r->log_dir, r->attempt, i);
	a->rank[i].log = sr_joblog_open(path, sr_mono(), err);
	free(path);
	if (a->rank[i].log == NULL)
		return -1;
	snprintf(prefix, sizeof prefix, "[%d] ", i);
	sr_joblog_set_prefix(a->rank[i].log, prefix);
	sr_joblog_set_term(a->rank[i].log, r->term);
	a->rank[i].run = r;
	a->rank[i].index = i;
	if (r->hooks->log != NULL)
		sr_joblog_set_sink(a->rank[i].log, rank_log_to_hook, &a->rank[i]);
	return 0;
}

int
sr_run_ranks_init(struct run *r, struct attempt *a, char *err)
{
	int i;

	a->nranks = r->ranks.n;
	a->child = sr_calloc((size_t)a->nranks, sizeof *a->child);
	a->rank = sr_calloc((size_t)a->nranks, sizeof *a->rank);
	a->status_rank = -1;
	for (i = 0; i < a->nranks; i++) {
		a->child[i].pid = -1;
		a->child[i].out_fd = a->child[i].err_fd = -1;
		if (r->ranks.world > 0)
			a->rank[i].error_file = sr_asprintf("%s/attempt-%d.rank-%d.error.json",
			    r->log_dir, r->attempt, i);
	}
	for (i = 0; i < a->nranks; i++)
		if (open_rank_log(r, a, i, err) == -1)
			return -1;
	return 0;
}

void
sr_run_ranks_free(struct attempt *a)
{
	int i;

	for (i = 0; a->rank != NULL && i < a->nranks; i++) {
		if (a->rank[i].log != a->log)
			sr_joblog_close(a->rank[i].log);
		free(a->rank[i].error_file);
	}
	free(a->rank);
	free(a->child);
	a->rank = NULL;
	a->child = NULL;
	a->nranks = 0;
}

/* The command could not be executed (rank i says so): stop what was
 * started, collect it and close its pipes. */
static void
exec_failed(struct attempt *a, int i, const char *prog, char *err)
{
	int k;

	errno = a->child[i].exec_errno;
	a->exec_errno = errno;
	sr_errno(err, "run %s", prog);
	sr_child_stop_set(a->child, (size_t)(i + 1), 1, NULL, NULL);
	for (k = 0; k <= i; k++) {
		if (a->child[k].out_fd != -1)
			close(a->child[k].out_fd);
		if (a->child[k].err_fd != -1)
			close(a->child[k].err_fd);
	}
}

int
sr_run_ranks_spawn(struct run *r, struct attempt *a, const struct sr_launch *l, long long step,
    int prev_world, enum sr_attempt_end *end, char *err)
{
	struct sr_container_rank ck;
	struct sr_spawn_opts so;
	char **env, **cargv = NULL;
	int i, rc;

	*end = SR_ATTEMPT_ERROR;
	memset(&so, 0, sizeof so);
	so.argv = l->argv;
	so.cwd = r->js->workdir;
	so.capture = 1;
	so.stdin_null = 1;	/* a background group reading the terminal would stop on SIGTTIN */
	so.parent_death_signal = SIGKILL;
	so.cgroup_procs = sr_contain_procs(r->contain);
	a->started = sr_now();
	for (i = 0; i < a->nranks; i++) {
		env = rank_env(r, a, l, step, prev_world, i);
		so.envp = env;
		if (r->container != NULL) {
			memset(&ck, 0, sizeof ck);
			ck.attempt = r->attempt;
			ck.rank = i;
			ck.visible = r->ranks.visible[i];
			ck.local_dir = r->js->local_dir;
			ck.base = environ;
			cargv = sr_container_argv(r->container, r->js, &ck, l->argv, env);
			so.argv = cargv;
		}
		rc = sr_spawn(&so, &a->child[i], err);
		sr_jobenv_free(env);
		sr_container_argv_free(cargv);
		cargv = NULL;
		if (rc == -1) {
			sr_child_stop_set(a->child, (size_t)i, 1, NULL, NULL);
			return -1;
		}
		if (a->child[i].exec_errno != 0) {
			*end = SR_ATTEMPT_EXEC_FAILED;
			exec_failed(a, i, r->container != NULL ? sr_container_how(r->container) :
			    l->argv[0], err);
			return -1;
		}
		a->rank[i].out_open = a->child[i].out_fd != -1;
		a->rank[i].err_open = a->child[i].err_fd != -1;
	}
	return 0;
}

/* Rank i ended with status st (now: sr_mono()). The first to fail is the
 * job's status; while the others run on, it stops them (may_stop). */
static void
rank_ended(struct run *r, struct attempt *a, int i, int st, double now, int may_stop)
{
	char why[128], how[64], name[256];
	int left;

	if (r->container != NULL) {
		/* A client that died itself (SIGKILL) passed nothing on: the
		 * container may run on. */
		if (WIFSIGNALED(st))
			sr_container_kill(r->container, sr_container_name(r->container, r->attempt, i,
			    name, sizeof name), environ);
		st = sr_container_status(st);
	}
	a->rank[i].done = 1;
	a->rank[i].status = st;
	a->rank[i].done_at = now;
	a->ndone++;
	if (a->status_rank < 0 && (st != 0 || a->nranks == 1)) {
		a->status_rank = i;
		a->status = st;
		a->status_sent = a->sent;
		if (may_stop && a->nranks > 1 && st != 0 && a->ndone < a->nranks && !a->stopping) {
			left = a->nranks - a->ndone;
			sr_run_rank_end(a, i, how, sizeof how);
			if (left == 1)
				snprintf(why, sizeof why, "rank %d failed first (%s), so the other rank "
				    "stops", i, how);
			else
				snprintf(why, sizeof why, "rank %d failed first (%s), so the other %d "
				    "ranks stop", i, how, left);
			if (!a->noticed && sr_run_rank_killed_outside(a, i)) {
				a->rank_stop_at = now + SR_OUTSIDE_NOTICE_WAIT;
				snprintf(a->rank_stop_why, sizeof a->rank_stop_why, "%s", why);
			} else {
				sr_run_begin_stop_grace(r, a, why, RANK_FAIL_GRACE);
				a->rank_stop = 1;
			}
		}
	}
	if (a->ndone == a->nranks) {
		a->job_done = 1;
		a->job_done_at = now;
		if (a->status_rank < 0) {
			a->status = 0;
			a->status_sent = a->sent;
		}
	}
}

void
sr_run_ranks_timer(struct run *r, struct attempt *a, double now)
{
	if (a->rank_stop_at == 0 || now < a->rank_stop_at)
		return;
	a->rank_stop_at = 0;
	if (a->noticed || a->stopping || a->job_done)
		return;		/* the notice (or the end) took over */
	sr_run_begin_stop_grace(r, a, a->rank_stop_why, RANK_FAIL_GRACE);
	a->rank_stop = 1;
}

void
sr_run_ranks_reap(struct run *r, struct attempt *a)
{
	int *status = sr_calloc((size_t)a->nranks, sizeof *status);
	int *reaped = sr_calloc((size_t)a->nranks, sizeof *reaped);
	double now = sr_mono();
	int i;

	/* Reaps every child, the job's leftovers too (init-style). */
	if (sr_reap_set(a->child, (size_t)a->nranks, status, reaped) > 0)
		for (i = 0; i < a->nranks; i++)
			if (reaped[i] && !a->rank[i].done)
				rank_ended(r, a, i, status[i], now, 1);
	free(status);
	free(reaped);
}

void
sr_run_ranks_stop(struct run *r, struct attempt *a, double grace)
{
	int *status = sr_calloc((size_t)a->nranks, sizeof *status);
	int *reaped = sr_calloc((size_t)a->nranks, sizeof *reaped);
	double now;
	int i;

	sr_child_stop_set(a->child, (size_t)a->nranks, grace, status, reaped);
	now = sr_mono();
	for (i = 0; i < a->nranks; i++)
		if (reaped[i] && !a->rank[i].done)
			rank_ended(r, a, i, status[i], now, 0);
	free(status);
	free(reaped);
}
