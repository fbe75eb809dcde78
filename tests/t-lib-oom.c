/*
 * t-lib-oom.c: libspotrun when memory runs out. The job-side library must
 * never abort (not even on out-of-memory) and never lose or garble a
 * checkpoint: each allocation a call makes is failed in turn (tests/oom.c:
 * the nth only, or the nth and every one after it; those of spotrun's own
 * code, or every one, the C library's and jansson's and zstd's too), and
 * every such trial must end with SPOTRUN_OK and the exact result, or
 * SPOTRUN_ERROR_MEMORY saying "out of memory"; with no byte leaked; with
 * the job's newest checkpoint the new one after a save that said OK and
 * the one before after one that failed, bit for bit; and a restore never
 * falling back to an older checkpoint because memory ran out. One TAP line per scenario, naming its first bad trial.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define SPOTRUN_EXPERIMENTAL
#include "libspotrun.h"

#include "cudaapi.h"
#include "fake-cuda-util.h"
#include "tap.h"
#include "ckpt-util.h"
#include "mdemu-util.h"
#include "oom.h"
#include "s3-util.h"
#include "util.h"

/* The state: a changing f32 matrix, a changing bf16 vector and a large
 * f32 tensor that never changes (its chunks deduplicated after the first
 * save: the path that references old chunks). */
#define W_N	(64 * 64)
#define B_N	1000
#define BIG_N	(3 * 65536 + 123)
static float w[W_N], big[BIG_N];
static uint16_t b16[B_N];

/* With the stand-in CUDA driver (tests/fake-cuda.c) loaded, w lives on
 * its device 0 (dev_w), copied there by fill and back by same. */
static struct fcu F;
static CUdeviceptr dev_w;
static int on_device;		/* w registered as a device buffer */

static void
fake_open(void)
{
	fcu_open(&F, SR_FAKE_CUDA, 1);
	if (F.alloc(&dev_w, sizeof w) != CUDA_SUCCESS)
		sr_fatal("fake CUDA: cuMemAlloc");
}

static void
fill(long long step)
{
	size_t i;

	for (i = 0; i < W_N; i++)
		w[i] = (float)(step * 1000 + (long long)i) * 0.5f;
	for (i = 0; i < B_N; i++)
		b16[i] = (uint16_t)(step * 7 + (long long)i * 13);
	for (i = 0; i < BIG_N; i++)
		big[i] = (float)i * 0.25f;
	if (on_device && F.htod(dev_w, w, sizeof w) != CUDA_SUCCESS)
		sr_fatal("fake CUDA: cuMemcpyHtoD");
}

static int
same(long long step)
{
	size_t i;

	if (on_device && F.dtoh(w, dev_w, sizeof w) != CUDA_SUCCESS)
		sr_fatal("fake CUDA: cuMemcpyDtoH");
	for (i = 0; i < W_N; i++)
		if (w[i] != (float)(step * 1000 + (long long)i) * 0.5f)
			return 0;
	for (i = 0; i < B_N; i++)
		if (b16[i] != (uint16_t)(step * 7 + (long long)i * 13))
			return 0;
	for (i = 0; i < BIG_N; i++)
		if (big[i] != (float)i * 0.25f)
			return 0;
	return 1;
}

static void
clear(void)
{
	memset(w, 0xee, sizeof w);
	memset(b16, 0xee, sizeof b16);
	memset(big, 0xee, sizeof big);
	if (on_device && F.htod(dev_w, w, sizeof w) != CUDA_SUCCESS)
		sr_fatal("fake CUDA: cuMemcpyHtoD");
}

/* A context with the three buffers registered: the first failing code
 * (SPOTRUN_OK when none) and *out the context (NULL when its allocation
 * failed). */
static spotrun_error
open_ctx(const char *url, const char *job, spotrun_ctx **out)
{
	static const uint64_t ws[2] = { 64, 64 }, bs[1] = { B_N }, gs[1] = { BIG_N };
	spotrun_params p;
	spotrun_ctx *ctx;
	spotrun_error rc;

	spotrun_params_init(&p);
	p.store = url;
	p.job = job;
	p.chunk_size = 1 << 16;		/* big: 4 chunks */
	p.threads = 2;
	p.keep = 1;			/* the one before collected: gc runs too */
	p.rank = 0;
	p.world_size = 1;
	*out = ctx = spotrun_create(&p);
	if (ctx == NULL)
		return SPOTRUN_ERROR_MEMORY;
	if ((rc = spotrun_set_cuda_library(ctx, SR_FAKE_CUDA)) != SPOTRUN_OK ||
	    (rc = on_device ? spotrun_register_device(ctx, "w", SPOTRUN_F32, 2, ws, NULL, NULL,
	    (void *)(uintptr_t)dev_w, 0) : spotrun_register(ctx, "w", SPOTRUN_F32, 2, ws, NULL,
	    NULL, w)) != SPOTRUN_OK ||
	    (rc = spotrun_register(ctx, "b16", SPOTRUN_BF16, 1, bs, NULL, NULL, b16)) != SPOTRUN_OK ||
	    (rc = spotrun_register(ctx, "big", SPOTRUN_F32, 1, gs, NULL, NULL, big)) != SPOTRUN_OK)
		return rc;
	return SPOTRUN_OK;
}

/* The job's newest checkpoint, read with no failure injected: its step
 * (-1: none) and whether the buffers hold exactly that step's state. */
static long long
newest(const char *url, const char *job, int *exact)
{
	spotrun_ctx *ctx;
	long long step = -1;
	spotrun_error rc;

	clear();
	if ((rc = open_ctx(url, job, &ctx)) == SPOTRUN_OK)
		rc = spotrun_restore(ctx, &step);
	if (rc != SPOTRUN_OK) {
		tap_diag("restore of %s without injection: %s: %s", job, spotrun_getErrorName(rc),
		    ctx != NULL ? spotrun_getErrorString(ctx) : "");
		step = -2;
	}
	spotrun_free(ctx);
	*exact = step >= 0 && same(step);
	return step;
}

/* The dynamic loader keeps the message of a failed dlsym (the library
 * probes the driver's optional entry points) in memory of malloc's until
 * the next dlerror: none is kept when a trial counts its bytes. */
static void
dl_settle(void)
{
	dlerror();
	dlerror();
}

enum op { OP_CREATE, OP_SAVE, OP_SAVE_ASYNC, OP_RESTORE };
static const char *const op_names[] = { "create and register", "save", "save_async and wait",
	"restore" };

/* What one scenario found: its trials and the first bad one. */
struct verdict {
	long trials, failed_ok, succeeded;
	int warming;			/* the warm-up: leaks not counted */
	long bad_n;			/* the first bad trial's n (bad not empty) */
	char bad[SR_ERRMAX];
};

static void
bad(struct verdict *v, long n, int persist, const char *fmt, ...)
{
	char what[SR_ERRMAX - 64];
	va_list ap;

	if (v->bad[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	snprintf(v->bad, sizeof v->bad, "trial n=%ld%s: %s", n, persist ? " persist" : "", what);
	v->bad_n = n;
}

/* One trial: op with the nth allocation failing (and those after it with
 * persist); *committed is the job's newest checkpoint, updated. 1 when the
 * nth allocation was reached (a failure was injected), else 0. */
static int
trial(const char *url, const char *job, enum op op, long n, int persist, enum oom_scope scope,
    long long *committed, struct verdict *v)
{
	char msg[SR_ERRMAX];
	long long step = *committed + 1, got = -1;
	spotrun_ctx *ctx = NULL;
	spotrun_error rc = SPOTRUN_OK;
	size_t before, after;
	long failures;
	int exact;

	fill(step);
	dl_settle();
	before = oom_in_use();
	if (op == OP_CREATE) {
		oom_arm(n, persist, scope);
		rc = open_ctx(url, job, &ctx);
	} else {
		if ((rc = open_ctx(url, job, &ctx)) != SPOTRUN_OK) {
			bad(v, n, persist, "open without injection: %s", spotrun_getErrorName(rc));
			spotrun_free(ctx);
			return 0;
		}
		if (op == OP_RESTORE)
			clear();
		oom_arm(n, persist, scope);
		if (op == OP_SAVE)
			rc = spotrun_save(ctx, step);
		else if (op == OP_SAVE_ASYNC) {
			if ((rc = spotrun_save_async(ctx, step)) == SPOTRUN_OK)
				rc = spotrun_wait(ctx);
		} else
			rc = spotrun_restore(ctx, &got);
	}
	failures = oom_failures();
	oom_disarm();
	strlcpy(msg, ctx != NULL ? spotrun_getErrorString(ctx) : "(no context)", sizeof msg);
	if (op == OP_RESTORE && rc == SPOTRUN_OK && (got != *committed || !same(got)))
		bad(v, n, persist, "restore said step %lld (%s), the newest is %lld", got,
		    got >= 0 && same(got) ? "its data exact" : "data wrong", *committed);
	spotrun_free(ctx);
	dl_settle();
	after = oom_in_use();
	v->trials++;
	if (rc == SPOTRUN_OK)
		v->succeeded++;
	else if (rc == SPOTRUN_ERROR_MEMORY && (ctx == NULL || strstr(msg, "out of memory") != NULL))
		v->failed_ok++;
	else
		bad(v, n, persist, "%s returned %s: %s", op_names[op], spotrun_getErrorName(rc), msg);
	if (rc != SPOTRUN_OK && failures == 0)
		bad(v, n, persist, "%s failed with no allocation failed: %s", op_names[op], msg);
	/* exactly as many bytes in use as before: fewer would be a free of
	 * what an earlier trial left (its leak, or a stand-in's deferred
	 * free, as the fake driver's TLS was: tests/fake-cuda.c) */
	if (after > before && !v->warming)
		bad(v, n, persist, "%s leaked %ld bytes (%s)", op_names[op], (long)(after - before),
		    spotrun_getErrorName(rc));
	else if (after < before && !v->warming)
		bad(v, n, persist, "%s freed %ld bytes an earlier trial left (%s)", op_names[op],
		    (long)(before - after), spotrun_getErrorName(rc));
	if (op == OP_SAVE || op == OP_SAVE_ASYNC) {
		got = newest(url, job, &exact);
		if (rc == SPOTRUN_OK && got != step)
			bad(v, n, persist, "save of step %lld said OK, the newest is %lld", step, got);
		else if (rc != SPOTRUN_OK && got != *committed)
			bad(v, n, persist, "after a failed save of %lld the newest is %lld, not %lld",
			    step, got, *committed);
		else if (!exact)
			bad(v, n, persist, "checkpoint of step %lld restores other data", got);
		if (got >= 0)
			*committed = got;
	}
	return failures > 0;
}

/* The keys of one listing, for remove_job. */
struct key_list {
	char **keys;
	size_t n, cap;
};

static int
collect_key(const struct sr_object_info *info, void *arg)
{
	struct key_list *l = arg;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->keys = sr_reallocarray(l->keys, l->cap, sizeof *l->keys);
	}
	l->keys[l->n++] = sr_strdup(info->key);
	return 0;
}

/* Delete every object of job in the store at url (a trial's leftovers); a
 * failure is the scenario's (the store answered every trial before it). */
static void
remove_job(const char *url, const char *job, struct verdict *v)
{
	struct key_list l = { NULL, 0, 0 };
	struct sr_store *st;
	char err[SR_ERRMAX], *prefix = sr_asprintf("%s/", job);
	size_t i;

	if (sr_store_open(url, &st, err) == -1) {
		bad(v, 0, 0, "open %s to remove the trial's job: %s", url, err);
	} else {
		if (sr_store_list(st, prefix, collect_key, &l, err) != 0 ||
		    sr_store_delete_many(st, (const char *const *)l.keys, l.n, err) == -1)
			bad(v, 0, 0, "remove the trial's job %s: %s", job, err);
		sr_store_close(st);
	}
	for (i = 0; i < l.n; i++)
		free(l.keys[i]);
	free(l.keys);
	free(prefix);
}

/* A trial on a job of its own (so that what a failed trial leaves, an
 * uncollected checkpoint, cannot grow the next trial's work): one
 * checkpoint saved first without injection (step 1: the one a save
 * dedupes against and its gc collects, the one a restore must find), then
 * op. What trial returns. */
static int
fresh_trial(const char *url, const char *tag, enum op op, long n, int persist,
    enum oom_scope scope, struct verdict *v)
{
	char job[96];
	long long committed = 0;
	int warming = v->warming, r;

	snprintf(job, sizeof job, "%s-%ld-%d", tag, n, persist);
	if (op != OP_CREATE) {
		v->warming = 1;
		trial(url, job, OP_SAVE, 0, 0, scope, &committed, v);
		v->warming = warming;
		v->trials--;
		v->succeeded--;
		if (committed != 1) {
			bad(v, n, persist, "the first save without injection: newest %lld", committed);
			return 0;
		}
	}
	r = trial(url, job, op, n, persist, scope, &committed, v);
	/* Each trial's job removed after it: the thousands of trials then
	 * need a few MB, not gigabytes (room on a tmpfs, below), and on S3
	 * the bucket's removal at the end has nothing left to list and
	 * delete one by one (it took 180 s after a whole run). */
	if (strncmp(url, "file://", 7) == 0) {
		char *p = sr_asprintf("%s/%s", url + 7, job);

		tu_rmtree(p);
		free(p);
	} else {
		remove_job(url, job, v);
	}
	return r;
}

/* The trials n = first, first + step, ... of a scenario into *v, until
 * one reaches no allocation (the call made fewer than n). */
static void
trials_from(const char *url, const char *tag, enum op op, int persist, enum oom_scope scope,
    long first, long step, struct verdict *v)
{
	long n;

	for (n = first; n < 100000; n += step)
		if (!fresh_trial(url, tag, op, n, persist, scope, v))
			break;
}

/* The trials of a scenario in workers processes side by side, each
 * taking every workers-th n: each trial is on a job of its own, so they
 * are independent, and over the network a trial spends most of its time
 * waiting for the server's answers (5% of a CPU on RGW). Their verdicts
 * summed into *v, its first bad trial the one of the smallest n; a
 * worker that did not report (killed, aborted) is a bad trial too. */
static void
trials_side_by_side(const char *url, const char *tag, enum op op, int persist,
    enum oom_scope scope, int workers, struct verdict *v)
{
	struct verdict part;
	pid_t pid[16];
	int fd[16], k, status;

	if (workers > 16)
		workers = 16;
	fflush(stdout);
	for (k = 0; k < workers; k++) {
		int p[2];

		if (pipe(p) == -1 || (pid[k] = fork()) == -1)
			sr_fatal("pipe or fork: %s", strerror(errno));
		if (pid[k] == 0) {
			close(p[0]);
			memset(&part, 0, sizeof part);
			trials_from(url, tag, op, persist, scope, k + 1, workers, &part);
			fflush(stdout);
			_exit(write(p[1], &part, sizeof part) == (ssize_t)sizeof part ? 0 : 1);
		}
		close(p[1]);
		fd[k] = p[0];
	}
	for (k = 0; k < workers; k++) {
		ssize_t got = read(fd[k], &part, sizeof part);

		close(fd[k]);
		if (waitpid(pid[k], &status, 0) == -1 || got != (ssize_t)sizeof part ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			bad(v, k + 1, persist, "the worker of trials n=%ld, %ld... ended with status "
			    "%#x, reporting nothing", (long)k + 1, (long)k + 1 + workers, status);
			continue;
		}
		v->trials += part.trials;
		v->failed_ok += part.failed_ok;
		v->succeeded += part.succeeded;
		if (part.bad[0] != '\0' && (v->bad[0] == '\0' || part.bad_n < v->bad_n)) {
			memcpy(v->bad, part.bad, sizeof v->bad);
			v->bad_n = part.bad_n;
		}
	}
}

/* A scenario: every allocation of op failed in turn, until a trial
 * reaches none (the call made fewer than n); in workers processes when
 * more than 1. */
static void
scenario(const char *url, const char *store, enum op op, int persist, enum oom_scope scope,
    int workers)
{
	struct verdict v;
	char tag[64];

	memset(&v, 0, sizeof v);
	snprintf(tag, sizeof tag, "oom-%d-%d-%d", (int)op, (int)scope, on_device);
	/* A warm-up settles the libraries' one-time allocations. */
	v.warming = 1;
	fresh_trial(url, tag, op, 0, persist, scope, &v);
	if (v.bad[0] != '\0' || v.failed_ok != 0) {
		ok(0, "%s %s under OOM (%s%s%s): set-up failed: %s", store, op_names[op],
		    scope == OOM_OURS ? "spotrun's allocations" : "every allocation but jansson's and OpenSSL's",
		    persist ? ", persisting" : "", on_device ? ", w on the device" : "", v.bad);
		return;
	}
	memset(&v, 0, sizeof v);
	if (workers > 1)
		trials_side_by_side(url, tag, op, persist, scope, workers, &v);
	else
		trials_from(url, tag, op, persist, scope, 1, 1, &v);
	ok(v.bad[0] == '\0' && v.failed_ok > 0,
	    "%s %s under OOM (%s%s): %ld trials, each failed with SPOTRUN_ERROR_MEMORY or "
	    "succeeded exactly, nothing leaked, no checkpoint lost%s", store, op_names[op],
	    scope == OOM_OURS ? "spotrun's allocations" : "every allocation but jansson's and OpenSSL's",
	    persist ? ", persisting" : "", v.trials, on_device ? " (w on the device)" : "");
	if (v.bad[0] != '\0')
		tap_diag("%s", v.bad);
	else
		tap_diag("%ld failed cleanly, %ld succeeded", v.failed_ok, v.succeeded);
}

/* Every op, with the nth allocation failing alone and (up to
 * max_persist) with every one after it too; the trials of each in
 * workers processes. */
static void
scenarios(const char *url, const char *store, enum oom_scope scope, int max_persist,
    int workers)
{
	int op, persist;

	for (op = OP_CREATE; op <= OP_RESTORE; op++)
		for (persist = 0; persist <= max_persist; persist++)
			scenario(url, store, (enum op)op, persist, scope, workers);
}

/* The file:// scenarios' folder: on a tmpfs (/dev/shm) when it has room,
 * where fsync costs nothing: the trials' thousands of saves took 3.5
 * times as long on a disk, and what is under test here is memory, not
 * durability (t-store-file and t-ckpt test that on the disk). */
static char *
scratch_dir(void)
{
	struct statvfs sv;
	char *p;

	if (getenv("TMPDIR") == NULL && statvfs("/dev/shm", &sv) == 0 &&
	    (unsigned long long)sv.f_bavail * sv.f_frsize >= (64ULL << 20)) {
		p = sr_asprintf("/dev/shm/t-lib-oom.XXXXXX");
		if (mkdtemp(p) != NULL)
			return p;
		free(p);
	}
	return tu_tmpdir("t-lib-oom");
}

/* argv[1]: "file" (the default) runs the file:// scenarios, "s3" those
 * on RGW (tests/t-lib-oom-s3.sh), so that the two halves run side by
 * side under make -j. */
int
main(int argc, char **argv)
{
	char *dir, *url, bucket[96];
	const char *ep = su_env("SPOTRUN_TEST_S3_ENDPOINT");
	const char *part = argc > 1 ? argv[1] : "file";

	no_cloud();
	setvbuf(stdout, NULL, _IOLBF, 0);
	unsetenv("RANK");
	unsetenv("WORLD_SIZE");
	unsetenv("SPOTRUN_CKPT_REQUEST");
	unsetenv("SPOTRUN_CKPT_DONE");
	unsetenv("SPOTRUN_EPOCH");
	if (!oom_usable())
		tap_skip_all("AddressSanitizer owns malloc: no injection in this build");
	if (strcmp(part, "file") != 0 && strcmp(part, "s3") != 0)
		sr_fatal("usage: t-lib-oom [file | s3]");
	if (strcmp(part, "s3") == 0)
		goto s3;
	dir = scratch_dir();
	url = sr_asprintf("file://%s", dir);
	scenarios(url, "file://", OOM_OURS, 1, 1);
	scenarios(url, "file://", OOM_ALL_BUT_FRAGILE, 1, 1);
	/* Device buffers: the fake driver's own allocations are its, not
	 * spotrun's (a stand-in is not under test), so only spotrun's fail. */
	fake_open();
	on_device = 1;
	scenarios(url, "file://", OOM_OURS, 1, 1);
	on_device = 0;
	free(url);
	tu_rmtree(dir);
	free(dir);
	return tap_done();
s3:
	if (ep[0] == '\0' && strcmp(su_env("SPOTRUN_TEST_REQUIRE_S3"), "1") != 0)
		tap_skip_all("no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset)");
	if (su_server_maybe("s3://")) {
		su_bucket_new(bucket, sizeof bucket, "liboom");
		url = sr_asprintf("s3://%s/o/?endpoint=%s", bucket, ep);
		/* over the network the nth alone (the error paths' own
		 * failures are file://'s): half the time of a run; 4
		 * processes of trials side by side, each waiting on RGW */
		scenarios(url, "s3://", OOM_OURS, 0, 4);
		su_bucket_rm(bucket);
		free(url);
	}
	return tap_done();
}
