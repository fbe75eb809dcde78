/*
 * run-setup.c: what a run sets up before its first attempt and takes down
 * after its last: the job's lock (one run of a job at a time on a machine),
 * what an earlier, killed run left running, the run's folder of logs, the
 * GPUs, the store, the provider and the checkpoint method, the subreaper and
 * the signal pipe. A failure says which outcome it is (run.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "container.h"
#include "defaults.h"
#include "gpulock.h"
#include "gpus.h"
#include "leftover.h"
#include "pymodule.h"
#include "run-int.h"
#include "util.h"

extern char **environ;

static void
log_from_ckpt(void *arg, const char *msg)
{
	struct run *r = arg;

	sr_tl(&r->tl, 0, "ckpt", "%s", msg);
}

/* Record outcome oc as the run's; returns -1 for setup's return. */
static int
failed(struct sr_run_result *res, enum sr_run_outcome oc)
{
	res->outcome = oc;
	return -1;
}

/* Take the job's lock, and stop what an earlier, killed run left running. */
static int
lock_job(struct run *r, struct sr_run_result *res)
{
	struct sr_jobspec *js = r->js;
	char *err = res->err, *lockpath, *entry;
	int n;

	if (sr_mkdirs(js->local_dir, 0755, err) == -1)
		return failed(res, SR_RUN_ERR_SYSTEM);
	lockpath = sr_asprintf("%s/lock", js->local_dir);
	r->lockfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (r->lockfd == -1) {
		sr_errno(err, "open %s", lockpath);
		free(lockpath);
		return failed(res, SR_RUN_ERR_SYSTEM);
	}
	if (flock(r->lockfd, LOCK_EX | LOCK_NB) == -1) {
		sr_err(err, "lock %s: another spotrun run of job %s is using %s", lockpath, js->name,
		    js->local_dir);
		free(lockpath);
		return failed(res, SR_RUN_ERR_UNAVAILABLE);
	}
	free(lockpath);
	entry = sr_asprintf("SPOTRUN_CKPT_DIR=%s", r->ckpt_dir);
	n = sr_leftover_kill(entry, err);
	if (n == -1) {
		free(entry);
		return failed(res, SR_RUN_ERR_SYSTEM);
	}
	if (n > 0)
		fprintf(stderr, "spotrun: stopped %d process%s left running by an earlier, killed run of %s\n",
		    n, n == 1 ? "" : "es", js->name);
	/* From now on nothing this run starts outlives it (contain.h). */
	n = sr_contain_start(entry, &r->contain, err);
	free(entry);
	if (n == -1)
		return failed(res, SR_RUN_ERR_SYSTEM);
	return 0;
}

/* One folder of logs per run, so runs of the same job do not mix: its
 * start's second and the pid, and ".N" for the Nth run of an agent's
 * process in that second (runs of a gang stopped and formed again
 * follow each other within milliseconds); logs/latest points at the
 * newest. */
static int
open_log_dir(struct run *r, char *err)
{
	const char *local_dir = r->js->local_dir;
	char stamp[32], *latest, *logs = sr_asprintf("%s/logs", local_dir);
	struct tm tm;

	r->named_at = time(NULL);
	localtime_r(&r->named_at, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	if (sr_mkdirs(logs, 0755, err) == -1) {
		free(logs);
		return -1;
	}
	for (r->name_seq = 1;; r->name_seq++) {
		r->log_dir = r->name_seq == 1 ? sr_asprintf("%s/%s-%ld", logs, stamp, (long)getpid()) :
		    sr_asprintf("%s/%s-%ld.%d", logs, stamp, (long)getpid(), r->name_seq);
		if (mkdir(r->log_dir, 0755) == 0)
			break;
		if (errno != EEXIST || r->name_seq == 1000) {
			sr_errno(err, "mkdir %s", r->log_dir);
			free(logs);
			return -1;
		}
		free(r->log_dir);
		r->log_dir = NULL;
	}
	free(logs);
	latest = sr_asprintf("%s/logs/latest", local_dir);
	unlink(latest);
	(void)!symlink(strrchr(r->log_dir, '/') + 1, latest);
	free(latest);
	return 0;
}

/* Where the jobs find `import spotrun`: the source tree's python/ when
 * this is the binary of its build tree (edits show at once), else the
 * module this binary carries, written into the job's local folder. Any
 * spotrun (installed, or one fetched by a VM's user-data) so gives any
 * Python its jobs use, a virtual environment's too, the job side of its
 * own protocol. Not fatal: a job that is no Python job needs none. */
static void
place_python(struct run *r)
{
	const char *src = sr_default_python_dir();
	char err[SR_ERRMAX];

	if (src != NULL) {
		r->python_dir = sr_strdup(src);
		return;
	}
	r->python_dir = sr_asprintf("%s/python", r->js->local_dir);
	if (sr_pymodule_place(r->python_dir, err) == 0)
		return;
	sr_tl(&r->tl, 0, "warning", "%s; the job finds `import spotrun` only where its "
	    "Python has the module (doc/python.md)", err);
	free(r->python_dir);
	r->python_dir = NULL;
}

/* The job's processes on this machine: its GPUs (this machine's, or the
 * caller's, those no other run holds, up to the job's maximum, of its
 * gpu_type; locked for the whole run, gpulock.h), one rank each, or procs
 * for the CPUs (ranks.h). */
static int
plan_ranks(struct run *r, char *err)
{
	const struct sr_gpus_where w = { environ, NULL, NULL };
	const struct sr_jobspec *js = r->js;
	char busy[256];
	int rc;

	if (r->hooks->gpus != NULL) {
		r->gpus_found = *r->hooks->gpus;
		r->gpus_found.v = sr_calloc(r->gpus_found.n + 1, sizeof *r->gpus_found.v);
		if (r->gpus_found.n > 0)	/* v may be NULL then */
			memcpy(r->gpus_found.v, r->hooks->gpus->v,
			    r->gpus_found.n * sizeof *r->gpus_found.v);
	} else if (sr_gpus_discover(&w, &r->gpus_found, err) == -1) {
		return -1;
	}
	/* too few GPUs at all is sr_ranks_plan's to say; too few free, ours */
	if (js->gpus_max > 0 && r->gpus_found.n >= (size_t)js->gpus_min) {
		if (sr_gpulock_take(sr_gpulock_dir(), &r->gpus_found, (size_t)js->gpus_min,
		    (size_t)js->gpus_max, js->name, &r->gpulock, busy, sizeof busy, err) == -1)
			return -1;
		if (busy[0] != '\0')
			sr_tl(&r->tl, 0, "gpus", "in use by other runs, skipped: GPU %s", busy);
	}
	if (sr_ranks_plan(r->js, &r->gpus_found, sr_ranks_ncpus(), &r->ranks, err) == -1)
		return -1;
	rc = sr_gpus_check_type(&r->gpus_found, (size_t)r->ranks.gpus, r->js->gpu_type,
	    r->js->name, err);
	if (rc == -1)
		return -1;
	if (rc == 1)
		sr_tl(&r->tl, 0, "gpus", "gpu_type = %s not checked: the GPUs' model is not known "
		    "(%s found them; NVML: %s)", r->js->gpu_type, r->gpus_found.source,
		    r->gpus_found.nvml_why);
	return 0;
}

/* [job] image: its runtime, found now, and the image on this machine,
 * pulled only when it is not (so once per machine), the time in the log. */
static int
open_container(struct run *r, char *err)
{
	double secs;
	int pulled;

	if (r->js->image == NULL)
		return 0;
	if (sr_container_open(r->js, environ, &r->container, err) == -1 ||
	    sr_container_pull(r->container, environ, &pulled, &secs, err) == -1)
		return -1;
	if (pulled)
		sr_tl(&r->tl, 0, "image", "pulled %s with %s in %.1fs", r->js->image,
		    sr_container_how(r->container), secs);
	else
		sr_tl(&r->tl, 0, "image", "%s is on this machine; %s runs it", r->js->image,
		    sr_container_how(r->container));
	return 0;
}

/* The job's store; with a provider that asks no metadata address (local,
 * signal), its credentials ask none either. */
static int
open_store(struct run *r, char *err)
{
	const char *name = r->js->provider.name;
	struct sr_provider_kind kind;
	struct sr_store_opts so;

	memset(&so, 0, sizeof so);
	so.no_metadata = sr_provider_kind(name != NULL ? name : "auto", &kind) == 0 && !kind.metadata;
	return sr_store_open_with(r->js->store, &so, &r->st, err);
}

/* The checkpoint method of the job's mode, with the run's settings. */
static int
make_method(struct run *r, char *err)
{
	struct sr_method_ctx ctx;

	r->copts = r->js->ckpt;
	r->copts.job = r->js->name;
	r->copts.log = log_from_ckpt;
	r->copts.log_arg = r;
	/* Recorded with each checkpoint, for SPOTRUN_PREV_WORLD_SIZE: every
	 * node's ranks in a gang (node 0 commits). */
	r->copts.world_size = r->ranks.world * (r->hooks->gang.nodes > 1 ? r->hooks->gang.nodes : 1);
	memset(&ctx, 0, sizeof ctx);
	ctx.js = r->js;
	ctx.st = r->st;
	ctx.tl = &r->tl;
	ctx.term = r->term;
	ctx.copts = &r->copts;
	ctx.ckpt_dir = r->ckpt_dir;
	ctx.on_commit = sr_run_record_on_commit;
	ctx.on_commit_arg = &r->note;
	ctx.gang = &r->hooks->gang;
	return sr_method_new(r->js->mode, &ctx, &r->method, err);
}

int
sr_run_trace_node(const struct sr_run_hooks *h)
{
	return h->trace_node > 0 ? h->trace_node - 1 : h->gang.nodes > 1 ? h->gang.node : 0;
}

int
sr_run_setup(struct run *r, struct sr_run_result *res)
{
	struct sr_jobspec *js = r->js;
	struct sr_provider_conf pconf;
	char *err = res->err;
	int rc;

	r->ckpt_dir = sr_asprintf("%s/ckpt", js->local_dir);
	r->term = sr_term_new(STDERR_FILENO);
	sr_tl_set_term(&r->tl, r->term);
	if (lock_job(r, res) == -1)
		return -1;
	if (open_log_dir(r, err) == -1)
		return failed(res, SR_RUN_ERR_SYSTEM);
	place_python(r);
	if (js->nodes_min > 1 && r->hooks->gang.nodes < 2) {
		sr_err(err, "run %s: nodes = %d-%d: a job of several machines runs on a gang of "
		    "agents; `spotrun submit` it to a queue and start an agent on each machine",
		    js->name, js->nodes_min, js->nodes_max);
		return failed(res, SR_RUN_ERR_CONFIG);
	}
	if (plan_ranks(r, err) == -1)
		return failed(res, SR_RUN_ERR_UNAVAILABLE);
	if (open_store(r, err) == -1)
		return failed(res, SR_RUN_ERR_STORE);
	pconf = js->provider;
	pconf.trace_node = sr_run_trace_node(r->hooks);
	pconf.vm_since = r->hooks->vm_since;
	rc = sr_provider_new(&pconf, &r->prov, err);
	if (rc != 0)
		return failed(res, rc == SR_PROVIDER_ECONF ? SR_RUN_ERR_CONFIG : SR_RUN_ERR_PROVIDER);
	if (make_method(r, err) == -1)
		return failed(res, SR_RUN_ERR_SYSTEM);
	if (open_container(r, err) == -1)
		return failed(res, SR_RUN_ERR_CONFIG);
	if (sr_subreaper_enable(err) == -1 || sr_sig_init(&r->sigfd, err) == -1)
		return failed(res, SR_RUN_ERR_SYSTEM);
	return 0;
}

void
sr_run_teardown(struct run *r)
{
	sr_contain_end(r->contain);
	r->contain = NULL;
	sr_container_free(r->container);
	r->container = NULL;
	sr_method_free(r->method);
	if (r->prov != NULL)
		sr_provider_free(r->prov);
	if (r->st != NULL)
		sr_store_close(r->st);
	if (r->lockfd > 0)
		close(r->lockfd);
	sr_gpulock_release(&r->gpulock);
	sr_sig_reset();
	sr_tl_set_term(&r->tl, NULL);
	sr_term_free(r->term);
	sr_ranks_free(&r->ranks);
	sr_gpus_free(&r->gpus_found);
	free(r->ckpt_dir);
	free(r->log_dir);
	free(r->python_dir);
	sr_tl_destroy(&r->tl);
}
