/*
 * t-reshard-device.c: device buffers in a job of several ranks
 * (lib/device-save.c, lib/staging.c through lib/ranks.c), against the fake
 * CUDA driver (tests/fake-cuda.c) as t-lib-device runs it; ranks are
 * forked processes as in t-reshard, each loading the fake itself. A
 * tensor of device buffers split along dim 0, a replicated one on the
 * device (each rank copying and uploading its share of its chunks alone),
 * and host ones beside them, saved by 2 ranks blocking and by 3 in the
 * background, restored onto 1, 2 and 3 ranks' device buffers bit for bit,
 * each restore holding two chunks of pinned memory at most; a second save
 * of the same state copies no chunk off the device and uploads nothing on
 * any rank (with the kernels; without them every chunk of the rank's is
 * copied, none uploaded); a rank that never saves: rank 0's exact error,
 * nothing committed.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define SPOTRUN_EXPERIMENTAL
#include "libspotrun.h"

#include "tap.h"
#include "ckpt-util.h"
#include "mdemu-util.h"
#include "ranks-util.h"

#include "cudaapi.h"
#include "fake-cuda-util.h"
#include "store.h"
#include "util.h"

#ifdef HAVE_CUDA
#define KERNELS 1
#else
#define KERNELS 0
#endif

#define RANKS 3
#define CHUNK 4096

struct tdef {
	const char *name;
	spotrun_dtype dt;
	size_t es;
	int ndim;
	uint64_t shape[2];
	int split;		/* the dimension split between the ranks; -1: replicated */
	int device;
};

static const struct tdef T[] = {
	{ "emb", SPOTRUN_BF16, 2, 1, { 20000 }, -1, 1 },	/* 10 chunks */
	{ "h", SPOTRUN_F32, 4, 2, { 6, 10 }, 1, 0 },
	{ "n", SPOTRUN_I64, 8, 0, { 0 }, -1, 0 },
	{ "w", SPOTRUN_F32, 4, 2, { 48, 512 }, 0, 1 },		/* 24 chunks */
};
#define NT (sizeof T / sizeof T[0])

struct result {
	int rc;
	long long step;
	int exact;
	uint64_t copies, dtoh, pinned;	/* the fake's, for the last call */
	char msg[SR_ERRMAX + 64];
};

static struct result *res;

struct job {
	const char *url, *job;
	int world;
	long long step[RANKS];	/* -1: the rank never saves */
	int version, restore, async, saves;
	const char *wait;
};

static void
box_of(const struct tdef *t, int w, int r, uint64_t *off, uint64_t *size)
{
	int d;

	for (d = 0; d < t->ndim; d++) {
		off[d] = 0;
		size[d] = t->shape[d];
	}
	if (t->split >= 0) {
		d = t->split;
		off[d] = (uint64_t)r * t->shape[d] / (uint64_t)w;
		size[d] = (uint64_t)(r + 1) * t->shape[d] / (uint64_t)w - off[d];
	}
}

static uint64_t
bytes_of(const struct tdef *t, const uint64_t *size)
{
	uint64_t n = t->es;
	int d;

	for (d = 0; d < t->ndim; d++)
		n *= size[d];
	return n;
}

/* The box of global tensor g (of t) into buf, row-major, or compared
 * with it (to 0: 1 when equal). */
static int
box_copy(const struct tdef *t, const uint8_t *g, const uint64_t *off, const uint64_t *size,
    uint8_t *buf, int to)
{
	return ru_box_copy(t->ndim, t->shape, t->es, g, off, size, buf, to);
}

/* The raw bytes rank r of w saves: its boxes, its shares. */
static uint64_t
raw_of_rank(int w, int r)
{
	uint64_t sum = 0, off[2], size[2], b;
	size_t i;

	for (i = 0; i < NT; i++) {
		box_of(&T[i], w, r, off, size);
		b = bytes_of(&T[i], size);
		if (T[i].split < 0 && w > 1)
			b = ru_share_bytes(b, CHUNK, w, r);
		sum += b;
	}
	return sum;
}

/* The chunks of device buffers rank r of w saves. */
static uint64_t
dev_chunks_of_rank(int w, int r)
{
	uint64_t sum = 0, off[2], size[2], n;
	size_t i;

	for (i = 0; i < NT; i++) {
		if (!T[i].device)
			continue;
		box_of(&T[i], w, r, off, size);
		n = (bytes_of(&T[i], size) + CHUNK - 1) / CHUNK;
		sum += T[i].split < 0 && w > 1 ? (uint64_t)(r + 1) * n / (uint64_t)w -
		    (uint64_t)r * n / (uint64_t)w : n;
	}
	return sum;
}

static void
on_msg(void *opaque, spotrun_msg_level level, const char *text)
{
	if (level == SPOTRUN_MSG_INFO && strstr(text, "retention") == NULL)
		strlcpy(opaque, text, SR_ERRMAX + 64);
}

/* The fake, as a rank drives it. */
static struct fcu F;

static void
fake_open(void)
{
	fcu_open(&F, SR_FAKE_CUDA, 1);
}

static int
rank_main(const struct job *j, int r)
{
	struct result *out = &res[r];
	uint64_t off[NT][2], size[NT][2], n;
	uint8_t *g[NT], *buf[NT];
	CUdeviceptr d[NT];
	spotrun_params p;
	spotrun_ctx *ctx;
	size_t i;
	int rc = SPOTRUN_OK, s, exact = 1;

	fake_open();
	if (j->wait != NULL)
		setenv("SPOTRUN_RANK_WAIT", j->wait, 1);
	spotrun_params_init(&p);
	p.store = j->url;
	p.job = j->job;
	p.chunk_size = CHUNK;
	p.threads = 2;
	p.keep = 0;
	p.rank = r;
	p.world_size = j->world;
	p.message = on_msg;
	p.message_opaque = out->msg;
	ctx = spotrun_create(&p);
	spotrun_set_cuda_library(ctx, SR_FAKE_CUDA);
	for (i = 0; i < NT; i++) {
		uint64_t all = bytes_of(&T[i], T[i].shape);

		box_of(&T[i], j->world, r, off[i], size[i]);
		n = bytes_of(&T[i], size[i]);
		g[i] = sr_malloc(all + 1);
		tu_fill(g[i], all, (uint64_t)(1000 * j->version + (int)i));
		buf[i] = sr_malloc(n + 1);
		memset(buf[i], 0x5a, n);
		if (!j->restore)
			box_copy(&T[i], g[i], off[i], size[i], buf[i], 1);
		d[i] = 0;
		if (T[i].device) {
			if (F.alloc(&d[i], n) != CUDA_SUCCESS || F.htod(d[i], buf[i], n) != CUDA_SUCCESS)
				sr_fatal("fake CUDA: cuMemAlloc");
			if (rc == SPOTRUN_OK)
				rc = spotrun_register_device(ctx, T[i].name, T[i].dt, T[i].ndim,
				    T[i].shape, off[i], size[i], (void *)(uintptr_t)d[i], 0);
		} else {
			if (rc == SPOTRUN_OK)
				rc = spotrun_register(ctx, T[i].name, T[i].dt, T[i].ndim, T[i].shape,
				    off[i], size[i], buf[i]);
		}
	}
	out->step = -1;
	n = F.count("pinned_bytes");
	F.reset();
	if (rc == SPOTRUN_OK && j->restore) {
		rc = spotrun_restore(ctx, &out->step);
		out->pinned = F.count("pinned_peak") - n;
	}
	for (s = 0; s < j->saves && rc == SPOTRUN_OK && !j->restore && j->step[r] >= 0; s++) {
		F.reset();
		if (!j->async)
			rc = spotrun_save(ctx, j->step[r] + s);
		else if ((rc = spotrun_save_async(ctx, j->step[r] + s)) == SPOTRUN_OK)
			rc = spotrun_wait(ctx);
	}
	out->copies = F.count("cuMemcpyDtoHAsync");
	out->dtoh = F.count("dtoh_bytes");
	for (i = 0; i < NT; i++) {
		n = bytes_of(&T[i], size[i]);
		if (j->restore && T[i].device && F.dtoh(buf[i], d[i], n) != CUDA_SUCCESS)
			exact = 0;
		if (j->restore && rc == SPOTRUN_OK && !box_copy(&T[i], g[i], off[i], size[i], buf[i], 0))
			exact = 0;
		free(g[i]);
		free(buf[i]);
	}
	out->rc = rc;
	out->exact = exact;
	if (rc != SPOTRUN_OK)
		strlcpy(out->msg, spotrun_getErrorString(ctx), sizeof out->msg);
	spotrun_free(ctx);
	return 0;
}

static int
rank_entry(const void *j, int r)
{
	return rank_main(j, r);
}

static void
run_ranks(const struct job *j)
{
	int r, died[RANKS];

	memset(res, 0, RANKS * sizeof *res);
	ru_run_ranks(j->world, rank_entry, j, died);
	for (r = 0; r < j->world; r++) {
		if (died[r])
			res[r].rc = -100;
	}
}

static struct job
job_of(const char *url, const char *name, int world, long long step, int version)
{
	struct job j;
	int r;

	memset(&j, 0, sizeof j);
	j.url = url;
	j.job = name;
	j.world = world;
	for (r = 0; r < RANKS; r++)
		j.step[r] = step;
	j.version = version;
	j.saves = 1;
	return j;
}

/* Every rank of w said its commit of step with its own raw bytes. */
static void
check_commit(const char *name, int w, long long step, const char *what)
{
	char want[256];
	int r, all = 1;

	for (r = 0; r < w; r++) {
		snprintf(want, sizeof want, "checkpoint 0 of %s committed: step %lld, %zu buffers, "
		    "%" PRIu64 " bytes (", name, step, NT, raw_of_rank(r == 0 ? 1 : w, r == 0 ? 0 : r));
		if (res[r].rc != SPOTRUN_OK || strncmp(res[r].msg, want, strlen(want)) != 0) {
			all = 0;
			tap_diag("rank %d: rc %d: %s (want %s...)", r, res[r].rc, res[r].msg, want);
		}
	}
	ok(all, "%s: every rank says checkpoint 0 committed with its own raw bytes (rank 0: "
	    "all of them)", what);
}

/* Restore job by m ranks onto their device buffers. */
static void
restore_by(const char *url, const char *name, int m, long long step, int version)
{
	struct job j = job_of(url, name, m, -1, version);
	int r, all = 1, bound = 1;

	j.restore = 1;
	run_ranks(&j);
	for (r = 0; r < m; r++) {
		if (res[r].rc != SPOTRUN_OK || res[r].step != step || !res[r].exact) {
			all = 0;
			tap_diag("rank %d of %d: rc %d step %lld exact %d: %s", r, m, res[r].rc,
			    res[r].step, res[r].exact, res[r].msg);
		}
		if (res[r].pinned != 2 * CHUNK) {
			bound = 0;
			tap_diag("rank %d of %d: %" PRIu64 " bytes pinned", r, m, res[r].pinned);
		}
	}
	ok(all, "%s restored by %d rank%s onto device buffers: every box bit for bit, step %lld",
	    name, m, m == 1 ? "" : "s", step);
	ok(bound, "%s restored by %d: each rank held two chunks of pinned memory at most (%d "
	    "bytes)", name, m, 2 * CHUNK);
}

int
main(void)
{
	char *top, *url, err[SR_ERRMAX], before[96], after[96];
	struct sr_store *st;
	struct job j;
	int r, all, a;

	no_cloud();
	setvbuf(stdout, NULL, _IOLBF, 0);
	unsetenv("RANK");
	unsetenv("WORLD_SIZE");
	unsetenv("SPOTRUN_CKPT_REQUEST");
	unsetenv("SPOTRUN_CKPT_DONE");
	unsetenv("SPOTRUN_EPOCH");
	unsetenv("FAKE_CUDA_FAIL");
	unsetenv("SPOTRUN_CUDA_LIBRARY");
	res = mmap(NULL, RANKS * sizeof *res, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0);
	if (res == MAP_FAILED)
		sr_fatal("mmap: %s", strerror(errno));
	top = tu_tmpdir("reshard-device");
	url = sr_asprintf("file://%s", top);
	if (sr_store_open(url, &st, err) != 0)
		sr_fatal("%s", err);
	tap_diag("%s build", KERNELS ? "an nvcc" : "a no-nvcc");

	/* blocking, 2 ranks */
	j = job_of(url, "dev2", 2, 3, 1);
	run_ranks(&j);
	check_commit("dev2", 2, 3, "device buffers saved by 2 ranks");
	ru_latest_text(st, "dev2", after, sizeof after);
	is_str(after, "0\n", "one move of LATEST");
	restore_by(url, "dev2", 1, 3, 1);
	restore_by(url, "dev2", 3, 3, 1);

	/* in the background, 3 ranks */
	j = job_of(url, "dev3", 3, 4, 2);
	j.async = 1;
	run_ranks(&j);
	check_commit("dev3", 3, 4, "device buffers saved by 3 ranks in the background");
	restore_by(url, "dev3", 2, 4, 2);

	/* a second save of the same state: nothing copied off, nothing new */
	for (a = 0; a <= 1; a++) {
		j = job_of(url, a ? "reuse-async" : "reuse", 2, 5, 3);
		j.async = a;
		j.saves = 2;
		run_ranks(&j);
		for (r = 0, all = 1; r < 2; r++) {
			uint64_t want = KERNELS ? 0 : dev_chunks_of_rank(2, r), stored, fresh;
			const char *q = strstr(res[r].msg, "bytes (");

			if (res[r].rc != SPOTRUN_OK || res[r].copies != want || q == NULL ||
			    sscanf(q, "bytes (%" SCNu64 " stored, %" SCNu64 " new)", &stored, &fresh) != 2 ||
			    fresh != 0) {
				all = 0;
				tap_diag("rank %d: rc %d, %" PRIu64 " chunks copied (want %" PRIu64 "): %s", r,
				    res[r].rc, res[r].copies, want, res[r].msg);
			}
		}
		ok(all, "%s, 2 ranks, the same state saved twice: the second %s", a ? "async" :
		    "blocking", KERNELS ? "copies no chunk off the device and uploads nothing on "
		    "either rank" : "copies each rank's chunks (no kernels) and uploads nothing");
		restore_by(url, j.job, 1, 6, 3);
	}

	/* a rank that never saves */
	ru_latest_text(st, "dev3", before, sizeof before);
	j = job_of(url, "dev3", 2, 9, 4);
	j.async = 1;
	j.step[1] = -1;
	j.wait = "2";
	run_ranks(&j);
	is_int(res[0].rc, SPOTRUN_ERROR_DEADLINE, "device buffers, rank 1 never saves: rank 0's "
	    "wait fails");
	is_str(res[0].msg, "checkpoint of dev3: rank 1 did not save step 9 within 2s (no part "
	    "dev3/parts/0-9-rank1.json); nothing committed", "naming the rank and the step");
	ru_latest_text(st, "dev3", after, sizeof after);
	is_str(after, before, "LATEST unchanged");
	restore_by(url, "dev3", 3, 4, 2);

	sr_store_close(st);
	tu_rmtree(top);
	free(top);
	free(url);
	return tap_done();
}
