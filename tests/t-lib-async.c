/*
 * t-lib-async.c: libspotrun's async save (spotrun_save_async,
 * spotrun_wait) through the API only, on a file:// store: the snapshot is
 * the buffers as they were when the call returned, bit for bit in every
 * dtype, though they change at once; the call returns before the save's
 * thread has committed anything (held, exactly, in the message callback
 * the thread calls); a state larger than the budget (spotrun_set_staging_bytes)
 * is staged in two halves, the hooks never holding more than the budget, and its
 * chunks are those a blocking save makes; a second save, a blocking save,
 * a restore and spotrun_free each wait for the save in flight; a store
 * that fails gives its error from spotrun_wait, nothing committed; a
 * notice that comes during a save is answered by it (its deadline taken,
 * the done marker written once the commit lands); the allocator hooks
 * balance, no thread is left, and the library prints nothing. All but
 * the failing store again on S3 (Ceph RGW, started by build-aux/test-all;
 * skipped without one, failed under SPOTRUN_TEST_REQUIRE_S3=1).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPOTRUN_EXPERIMENTAL
#include "libspotrun.h"

#include "tap.h"
#include "ckpt-util.h"
#include "mdemu-util.h"
#include "s3-util.h"

#include "latest.h"
#include "store.h"
#include "util.h"

/* ---- buffers: one of every dtype, some sliced ---- */

#define NBUF 15
struct buf {
	const char *name;
	spotrun_dtype dtype;
	int ndim;
	uint64_t shape[2], off[2], size[2];
	size_t esize;
	uint8_t *p;
	size_t bytes;
};

static struct buf bufs[NBUF] = {
	{ "big", SPOTRUN_F32, 1, { 200000 }, { 0 }, { 200000 }, 4, NULL, 0 },
	{ "f64", SPOTRUN_F64, 2, { 9, 30 }, { 3, 0 }, { 5, 30 }, 8, NULL, 0 },
	{ "f16", SPOTRUN_F16, 1, { 5000 }, { 0 }, { 5000 }, 2, NULL, 0 },
	{ "bf16", SPOTRUN_BF16, 2, { 64, 64 }, { 0, 16 }, { 64, 32 }, 2, NULL, 0 },
	{ "e4m3", SPOTRUN_F8_E4M3, 1, { 777 }, { 0 }, { 777 }, 1, NULL, 0 },
	{ "e5m2", SPOTRUN_F8_E5M2, 1, { 33 }, { 0 }, { 33 }, 1, NULL, 0 },
	{ "i8", SPOTRUN_I8, 1, { 7 }, { 0 }, { 7 }, 1, NULL, 0 },
	{ "i16", SPOTRUN_I16, 1, { 9000 }, { 0 }, { 9000 }, 2, NULL, 0 },
	{ "i32", SPOTRUN_I32, 2, { 3, 3 }, { 0, 1 }, { 3, 2 }, 4, NULL, 0 },
	{ "i64", SPOTRUN_I64, 1, { 1500 }, { 0 }, { 1500 }, 8, NULL, 0 },
	{ "u8", SPOTRUN_U8, 1, { 4097 }, { 0 }, { 4097 }, 1, NULL, 0 },
	{ "u16", SPOTRUN_U16, 1, { 11 }, { 0 }, { 11 }, 2, NULL, 0 },
	{ "u32", SPOTRUN_U32, 1, { 2049 }, { 0 }, { 2049 }, 4, NULL, 0 },
	{ "u64", SPOTRUN_U64, 1, { 2 }, { 0 }, { 2 }, 8, NULL, 0 },
	{ "raw", SPOTRUN_BYTES, 0, { 0 }, { 0 }, { 0 }, 1, NULL, 0 },
};

static size_t total_bytes;

static void
alloc_bufs(void)
{
	size_t i;
	int d;

	for (i = 0; i < NBUF; i++) {
		struct buf *b = &bufs[i];
		b->bytes = b->esize;
		for (d = 0; d < b->ndim; d++)
			b->bytes *= b->size[d];
		b->p = sr_calloc(1, b->bytes);
		total_bytes += b->bytes;
	}
}

static void
fill_bufs(uint64_t seed)
{
	size_t i;

	for (i = 0; i < NBUF; i++)
		tu_fill(bufs[i].p, bufs[i].bytes, seed + i);
}

/* Whether every buffer holds what fill_bufs(seed) put there. */
static int
holds(uint64_t seed)
{
	uint8_t *want;
	size_t i;
	int same;

	for (i = 0; i < NBUF; i++) {
		want = sr_malloc(bufs[i].bytes);
		tu_fill(want, bufs[i].bytes, seed + i);
		same = memcmp(want, bufs[i].p, bufs[i].bytes) == 0;
		free(want);
		if (!same) {
			printf("# buffer %s is not seed %llu's\n", bufs[i].name,
			    (unsigned long long)seed);
			return 0;
		}
	}
	return 1;
}

static void
register_all(spotrun_ctx *ctx)
{
	size_t i;

	for (i = 0; i < NBUF; i++) {
		struct buf *b = &bufs[i];
		if (spotrun_register(ctx, b->name, b->dtype, b->ndim, b->shape, b->off, b->size,
		    b->p) != SPOTRUN_OK)
			sr_fatal("register %s: %s", b->name, spotrun_getErrorString(ctx));
	}
}

/* ---- the message callback, which can hold the save's thread ---- */

static pthread_t main_thread;

struct msgs {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct tu_log log;
	int hold;			/* hold the save's thread at the warning below */
	int held;			/* it is held */
};

/* What the save's thread says when the packs of the checkpoint before are
 * gone (drop_packs), before it stores a byte. */
#define HOLD_AT " is missing: its chunks are stored again"

static void
on_msg(void *opaque, spotrun_msg_level level, const char *text)
{
	struct msgs *m = opaque;

	pthread_mutex_lock(&m->mu);
	tu_log_fn(&m->log, text);
	if (m->hold && level == SPOTRUN_MSG_WARNING && strstr(text, HOLD_AT) != NULL &&
	    !pthread_equal(pthread_self(), main_thread)) {
		m->held = 1;
		pthread_cond_broadcast(&m->cv);
		while (m->hold)
			pthread_cond_wait(&m->cv, &m->mu);
		m->held = 0;
	}
	pthread_mutex_unlock(&m->mu);
}

static void
msgs_init(struct msgs *m)
{
	memset(m, 0, sizeof *m);
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
}

/* Wait until the save's thread is held. */
static void
until_held(struct msgs *m)
{
	pthread_mutex_lock(&m->mu);
	while (!m->held)
		pthread_cond_wait(&m->cv, &m->mu);
	pthread_mutex_unlock(&m->mu);
}

static void
release(struct msgs *m)
{
	pthread_mutex_lock(&m->mu);
	m->hold = 0;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
}

/* The first line starting with prefix, or "". */
static const char *
line_of(struct msgs *m, const char *prefix)
{
	size_t i;

	for (i = 0; i < m->log.n; i++) {
		if (strncmp(m->log.lines[i], prefix, strlen(prefix)) == 0)
			return m->log.lines[i];
	}
	return "";
}

static void
msgs_free(struct msgs *m)
{
	tu_log_clear(&m->log);
	free(m->log.lines);
	pthread_mutex_destroy(&m->mu);
	pthread_cond_destroy(&m->cv);
}

/* ---- allocator hooks that count, bytes too ---- */

struct counts {
	pthread_mutex_t mu;
	long allocs, frees;
	size_t live, peak, largest;
};

static struct counts cnt = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0 };

static void *
count_alloc(void *opaque, size_t n)
{
	struct counts *c = opaque;
	size_t *p = malloc(n + 16);

	if (p == NULL)
		return NULL;
	p[0] = n;
	pthread_mutex_lock(&c->mu);
	c->allocs++;
	c->live += n;
	if (c->live > c->peak)
		c->peak = c->live;
	if (n > c->largest)
		c->largest = n;
	pthread_mutex_unlock(&c->mu);
	return (char *)p + 16;
}

static void
count_free(void *opaque, void *ptr)
{
	struct counts *c = opaque;
	size_t *p = (size_t *)((char *)ptr - 16);

	pthread_mutex_lock(&c->mu);
	c->frees++;
	c->live -= p[0];
	pthread_mutex_unlock(&c->mu);
	free(p);
}

/* ---- the store and the process ---- */

static spotrun_ctx *
new_ctx(const char *url, const char *job, struct msgs *m, size_t staging)
{
	spotrun_params p;
	spotrun_ctx *ctx;

	spotrun_params_init(&p);
	p.store = url;
	p.job = job;
	p.message = m != NULL ? on_msg : NULL;
	p.message_opaque = m;
	p.chunk_size = 64 << 10;	/* "big" is 13 chunks */
	p.threads = 2;
	p.keep = 0;
	p.alloc = count_alloc;
	p.free = count_free;
	p.alloc_opaque = &cnt;
	ctx = spotrun_create(&p);
	if (spotrun_set_staging_bytes(ctx, staging) != SPOTRUN_OK)
		sr_fatal("spotrun_set_staging_bytes: %s", spotrun_getErrorString(ctx));
	return ctx;
}

/* The job's LATEST: its seq, or -1. */
static long long
latest(const char *url, const char *job)
{
	struct sr_store *st;
	struct sr_latest l;
	char err[SR_ERRMAX];
	long long seq = -1;

	if (sr_store_open(url, &st, err) != 0)
		sr_fatal("%s", err);
	if (sr_latest_read(st, job, &l, err) == 0 && l.state == SR_LATEST_OK)
		seq = (long long)l.seq;
	sr_store_close(st);
	return seq;
}

struct keys {
	char **v;
	size_t n;
};

static int
add_key(const struct sr_object_info *info, void *arg)
{
	struct keys *k = arg;

	k->v = sr_reallocarray(k->v, k->n + 1, sizeof *k->v);
	k->v[k->n++] = sr_strdup(info->key);
	return 0;
}

/* Take away the packs of the job's checkpoints, so that the next save's
 * thread warns (HOLD_AT) before it stores anything. */
static void
drop_packs(const char *url, const char *job)
{
	struct sr_store *st;
	struct keys k = { NULL, 0 };
	char err[SR_ERRMAX], *prefix = sr_asprintf("%s/packs/", job);

	if (sr_store_open(url, &st, err) != 0 || sr_store_list(st, prefix, add_key, &k, err) != 0)
		sr_fatal("%s", err);
	while (k.n > 0) {
		if (sr_store_delete(st, k.v[--k.n], err) != 0)
			sr_fatal("%s", err);
		free(k.v[k.n]);
	}
	free(k.v);
	free(prefix);
	sr_store_close(st);
}

/* Threads of this process. */
static int
threads_now(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Restore the job into the buffers with a new context: its step, or -1. */
static long long
restore_into(const char *url, const char *job)
{
	spotrun_ctx *ctx = new_ctx(url, job, NULL, 0);
	long long step = -1;

	register_all(ctx);
	if (spotrun_restore(ctx, &step) != SPOTRUN_OK)
		printf("# restore %s: %s\n", job, spotrun_getErrorString(ctx));
	spotrun_free(ctx);
	return step;
}

/* A blocking save of seed's state as the job's first checkpoint, its
 * packs then dropped (the next save's thread can be held). */
static void
first_checkpoint(const char *url, const char *job, uint64_t seed)
{
	spotrun_ctx *ctx = new_ctx(url, job, NULL, 0);

	register_all(ctx);
	fill_bufs(seed);
	if (spotrun_save(ctx, 0) != SPOTRUN_OK)
		sr_fatal("save %s: %s", job, spotrun_getErrorString(ctx));
	spotrun_free(ctx);
	drop_packs(url, job);
}

/* ---- the tests ---- */

/* The snapshot is taken when the call returns, and nothing is committed
 * until the save's thread goes on. */
static void
test_snapshot(const char *url)
{
	struct msgs m;
	spotrun_ctx *ctx;
	const char *info;
	char want[200];
	int threads;

	msgs_init(&m);
	first_checkpoint(url, "snap", 100);
	threads = threads_now();	/* after a save's workers came and went */
	ctx = new_ctx(url, "snap", &m, 0);
	register_all(ctx);
	fill_bufs(1);
	m.hold = 1;
	is_int(spotrun_save_async(ctx, 5), SPOTRUN_OK, "save_async returns once the buffers are "
	    "staged");
	fill_bufs(2);		/* training goes on at once */
	until_held(&m);
	is_int((int)latest(url, "snap"), 0, "it returned with the save's thread held before its "
	    "first upload: LATEST is still checkpoint 0");
	ok(threads_now() == threads + 1, "the save runs on one thread of the context's (%d, "
	    "then %d)", threads, threads_now());
	release(&m);
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "spotrun_wait: the save committed");
	is_str(spotrun_getErrorString(ctx), "", "no error");
	is_int((int)latest(url, "snap"), 1, "only then is checkpoint 1 the newest");
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "a second spotrun_wait: none in flight, "
	    "SPOTRUN_OK");
	snprintf(want, sizeof want, "checkpoint 1 of snap committed: step 5, 15 buffers, %zu "
	    "bytes (", total_bytes);
	info = line_of(&m, want);
	ok(*info != '\0' && strstr(info, " new); training blocked 0.") != NULL &&
	    strstr(info, " s of ") != NULL, "the commit is told with the time training was "
	    "blocked: %s", info);
	spotrun_free(ctx);
	is_int(threads_now(), threads, "after spotrun_free no thread is left");
	fill_bufs(3);
	is_int((int)restore_into(url, "snap"), 5, "the checkpoint restores step 5");
	ok(holds(1), "bit for bit the buffers as save_async took them, in every dtype, though "
	    "they changed as it returned");
	msgs_free(&m);
}

/* Allocator hooks that take each allocation of its own pages, fresh from
 * mmap (no page of it resident until touched), after a header page with
 * its size; the largest one is kept, to look at its pages. */
struct pages {
	pthread_mutex_t mu;
	long live;
	uint8_t *largest;
	size_t largest_n;
};

static void *
page_alloc(void *opaque, size_t n)
{
	struct pages *pg = opaque;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, n + ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	*(size_t *)p = n;
	pthread_mutex_lock(&pg->mu);
	pg->live++;
	if (n > pg->largest_n) {
		pg->largest_n = n;
		pg->largest = p + ps;
	}
	pthread_mutex_unlock(&pg->mu);
	return p + ps;
}

static void
page_free(void *opaque, void *ptr)
{
	struct pages *pg = opaque;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p = (uint8_t *)ptr - ps;

	pthread_mutex_lock(&pg->mu);
	pg->live--;
	if (ptr == pg->largest)
		pg->largest = NULL;
	pthread_mutex_unlock(&pg->mu);
	munmap(p, *(size_t *)p + ps);
}

/* How many of the pages of [p, p + n) are resident (mincore). */
static size_t
resident(const uint8_t *p, size_t n)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), np = (n + ps - 1) / ps, i, k = 0;
	unsigned char *v = sr_malloc(np);

	if (mincore((void *)p, n, v) == -1)
		sr_fatal("mincore: %s", strerror(errno));
	for (i = 0; i < np; i++)
		k += v[i] & 1;
	free(v);
	return k;
}

/* spotrun_prepare_async: the staging allocated and its pages faulted in
 * ahead of the first save_async, which then allocates none and still
 * saves the state byte for byte. */
static void
test_prepare(const char *url)
{
	struct pages pg = { PTHREAD_MUTEX_INITIALIZER, 0, NULL, 0 };
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), np = (total_bytes + ps - 1) / ps, k;
	spotrun_params p;
	spotrun_ctx *ctx;
	uint8_t *stage;
	struct msgs m;
	char want[200];

	msgs_init(&m);
	spotrun_params_init(&p);
	p.store = url;
	p.job = "prep";
	p.message = on_msg;
	p.message_opaque = &m;
	p.chunk_size = 64 << 10;
	p.threads = 2;
	p.alloc = page_alloc;
	p.free = page_free;
	p.alloc_opaque = &pg;
	if ((ctx = spotrun_create(&p)) == NULL)
		sr_fatal("spotrun_create failed");
	register_all(ctx);
	fill_bufs(40);
	is_int(spotrun_prepare_async(ctx), SPOTRUN_OK, "spotrun_prepare_async: SPOTRUN_OK");
	snprintf(want, sizeof want, "staging of %zu bytes ready for spotrun_save_async, its pages "
	    "faulted in", total_bytes);
	is_str(line_of(&m, "staging of "), want, "it says so: the whole state's bytes");
	stage = pg.largest;
	ok(stage != NULL && pg.largest_n == total_bytes, "through the allocator hooks (%zu bytes "
	    "at once)", pg.largest_n);
	k = stage != NULL ? resident(stage, total_bytes) : 0;
	ok(k == np, "every page of it is resident before any save (%zu of %zu): faulted in, not "
	    "left to the first copy", k, np);
	is_int(spotrun_prepare_async(ctx), SPOTRUN_OK, "a second call: SPOTRUN_OK ...");
	is_int((int)m.log.n, 1, "... with nothing to do (no second message)");
	pg.largest_n = 0;
	is_int(spotrun_save_async(ctx, 40), SPOTRUN_OK, "the first save_async");
	ok(pg.largest_n < total_bytes, "allocates no staging: it takes the "
	    "prepared one (its largest allocation %zu bytes)", pg.largest_n);
	fill_bufs(41);
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "it commits");
	spotrun_free(ctx);
	is_int((int)pg.live, 0, "spotrun_free frees the staging too");
	fill_bufs(42);
	is_int((int)restore_into(url, "prep"), 40, "the checkpoint restores step 40");
	ok(holds(40), "byte for byte the state the first save_async took");
	msgs_free(&m);
}

/* A state larger than the budget: two halves of it. */
static void
test_budget(const char *url)
{
	struct msgs m;
	spotrun_ctx *ctx;
	const size_t budget = 256 << 10;
	size_t base;
	char want[200];

	msgs_init(&m);
	ctx = new_ctx(url, "budget", &m, budget);
	register_all(ctx);
	fill_bufs(10);
	pthread_mutex_lock(&cnt.mu);
	base = cnt.live;
	cnt.peak = cnt.live;
	cnt.largest = 0;
	pthread_mutex_unlock(&cnt.mu);
	is_int(spotrun_save_async(ctx, 1), SPOTRUN_OK, "save_async of %zu bytes with a budget of "
	    "%zu", total_bytes, budget);
	fill_bufs(11);
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "it commits");
	ok(cnt.largest == budget, "the staging is one allocation of the budget (%zu bytes)",
	    cnt.largest);
	ok(cnt.peak - base <= budget + (32 << 10), "the hooks held %zu bytes above the context "
	    "at most: the budget and 32 KiB of bookkeeping", cnt.peak - base);
	spotrun_free(ctx);
	is_int((int)restore_into(url, "budget"), 1, "the checkpoint restores");
	ok(holds(10), "bit for bit the snapshot, though it was staged half by half while the "
	    "buffers changed after the call");
	/* a blocking save of the same bytes stores nothing new: the parts
	 * started at whole chunks, so the chunks are the same */
	ctx = new_ctx(url, "budget", &m, budget);
	register_all(ctx);
	is_int(spotrun_save(ctx, 2), SPOTRUN_OK, "a blocking save of the snapshot again");
	snprintf(want, sizeof want, "checkpoint 0 of budget committed: step 1, 15 buffers, %zu "
	    "bytes (", total_bytes);
	ok(strstr(line_of(&m, want), "; training blocked ") != NULL, "the async save's commit "
	    "was told: %s", line_of(&m, want));
	snprintf(want, sizeof want, "checkpoint 1 of budget committed: step 2, 15 buffers, %zu "
	    "bytes (", total_bytes);
	ok(strstr(line_of(&m, want), " stored, 0 new)") != NULL, "stores no new chunk: the "
	    "async save's chunks are a blocking save's (%s)", line_of(&m, want));
	spotrun_free(ctx);

	/* a budget lowered between saves: the staging kept shrinks to it */
	ctx = new_ctx(url, "lowered", &m, 0);
	register_all(ctx);
	ok(spotrun_save_async(ctx, 1) == SPOTRUN_OK && spotrun_wait(ctx) == SPOTRUN_OK,
	    "an async save with the default budget: the whole state staged");
	pthread_mutex_lock(&cnt.mu);
	base = cnt.live;
	cnt.largest = 0;
	pthread_mutex_unlock(&cnt.mu);
	is_int(spotrun_set_staging_bytes(ctx, budget), SPOTRUN_OK, "spotrun_set_staging_bytes "
	    "lowers it to %zu", budget);
	ok(spotrun_save_async(ctx, 2) == SPOTRUN_OK && spotrun_wait(ctx) == SPOTRUN_OK,
	    "the next async save commits");
	ok(cnt.largest == budget && base - cnt.live == total_bytes - budget, "its staging: a new "
	    "allocation of the budget, the whole state's freed (%zu bytes fewer held)",
	    base - cnt.live);
	spotrun_free(ctx);

	ctx = new_ctx(url, "budget", &m, 100000);
	register_all(ctx);
	is_int(spotrun_save_async(ctx, 3), SPOTRUN_ERROR_PARAMETER, "a budget below two chunks");
	snprintf(want, sizeof want, "save_async: staging_bytes 100000 is below two chunks of 65536 "
	    "bytes, the least a snapshot larger than it (%zu bytes) is staged in: raise it, or "
	    "lower chunk_size", total_bytes);
	is_str(spotrun_getErrorString(ctx), want, "is refused, saying what to change");
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "nothing is in flight");
	spotrun_free(ctx);
	msgs_free(&m);
}

/* Each call that needs the store to itself waits for the save in flight. */
static void
test_in_flight(const char *url)
{
	struct msgs m;
	spotrun_ctx *ctx;
	long long step;

	ctx = new_ctx(url, "flight", NULL, 0);
	register_all(ctx);
	fill_bufs(20);
	is_int(spotrun_save_async(ctx, 1), SPOTRUN_OK, "a save in flight");
	fill_bufs(21);
	is_int(spotrun_save_async(ctx, 2), SPOTRUN_OK, "a second save_async");
	is_int((int)latest(url, "flight"), 0, "waited for the first: when it returns, "
	    "checkpoint 0 is committed");
	fill_bufs(22);
	is_int(spotrun_save(ctx, 3), SPOTRUN_OK, "a blocking save with the second in flight");
	is_int((int)latest(url, "flight"), 2, "commits after it: checkpoint 2");
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "nothing is left in flight");
	fill_bufs(23);
	is_int(spotrun_save_async(ctx, 4), SPOTRUN_OK, "another save in flight");
	fill_bufs(24);
	is_int(spotrun_restore(ctx, &step), SPOTRUN_OK, "a restore with it in flight");
	is_int((int)step, 4, "waited for it: it restores step 4");
	ok(holds(23), "the state save_async took");
	spotrun_free(ctx);
	is_int((int)restore_into(url, "flight"), 4, "four checkpoints, the last step 4");

	/* spotrun_free with a save in flight: it lands, nothing leaks */
	ctx = new_ctx(url, "flight", NULL, 0);
	register_all(ctx);
	fill_bufs(25);
	is_int(spotrun_save_async(ctx, 5), SPOTRUN_OK, "a save in flight, then spotrun_free");
	spotrun_free(ctx);
	is_int((int)latest(url, "flight"), 4, "spotrun_free waited for its commit");
	fill_bufs(0);
	is_int((int)restore_into(url, "flight"), 5, "which restores");
	ok(holds(25), "with its state");

	/* nothing to copy: empty buffers only */
	msgs_init(&m);
	ctx = new_ctx(url, "empty", &m, 0);
	spotrun_register(ctx, "none", SPOTRUN_I32, 2, (uint64_t[]){ 0, 4 }, NULL, NULL, NULL);
	is_int(spotrun_save_async(ctx, 1), SPOTRUN_OK, "save_async of an empty buffer");
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "commits");
	ok(strstr(line_of(&m, "checkpoint 0 of empty committed: step 1, 1 buffer, 0 bytes (0 "
	    "stored, 0 new); training blocked 0."), " s of ") != NULL, "training blocked for no "
	    "time to speak of: %s", line_of(&m, "checkpoint 0 of empty"));
	spotrun_free(ctx);
	msgs_free(&m);
}

/* A store that fails after the snapshot: the error is spotrun_wait's. */
static void
test_failing(const char *url, const char *store)
{
	struct msgs m;
	spotrun_ctx *ctx;
	char *tmp = sr_asprintf("%s/.tmp", store);
	char want[300];
	const char *p;

	msgs_init(&m);
	ctx = new_ctx(url, "fail", &m, 0);
	register_all(ctx);
	fill_bufs(30);
	is_int(spotrun_save(ctx, 1), SPOTRUN_OK, "checkpoint 0");
	/* the file store writes every object in ROOT/.tmp first: a file there
	 * makes every write fail, every read work */
	tu_rmtree(tmp);
	tu_write(store, ".tmp", "x", 1);
	fill_bufs(31);
	is_int(spotrun_save_async(ctx, 2), SPOTRUN_OK, "save_async on a store that cannot be "
	    "written: the snapshot is taken");
	is_int(spotrun_wait(ctx), SPOTRUN_ERROR_STORE, "spotrun_wait gives the store's error");
	snprintf(want, sizeof want, "%s/lock: Not a directory", tmp);
	p = spotrun_getErrorString(ctx);
	ok(strncmp(p, "upload fail/packs/0000000001-", 29) == 0 && strlen(p) > strlen(want) &&
	    strcmp(p + strlen(p) - strlen(want), want) == 0 && strstr(p, ".tar: open lock file ") !=
	    NULL, "saying what failed: %s", p);
	spotrun_free(ctx);
	unlink(tmp);
	mkdir(tmp, 0777);
	is_int((int)latest(url, "fail"), 0, "nothing committed");
	fill_bufs(0);
	is_int((int)restore_into(url, "fail"), 1, "the checkpoint before restores");
	ok(holds(30), "with its state");
	free(tmp);
	msgs_free(&m);
}

/* A save larger than its budget, answering a notice, whose commit fails:
 * it cannot try again (its first parts are overwritten), and says so at
 * once rather than retrying to the deadline. */
static void
test_no_retry(const char *url, const char *store, const char *dir)
{
	struct msgs m;
	spotrun_ctx *ctx;
	char *req = tu_path(dir, "request"), *done = tu_path(dir, "done"), line[200];
	char *key = sr_asprintf("%s/retry/manifests/0000000001.json", store);
	double t0;
	int n;

	setenv("SPOTRUN_CKPT_REQUEST", req, 1);
	setenv("SPOTRUN_CKPT_DONE", done, 1);
	unlink(req);
	msgs_init(&m);
	ctx = new_ctx(url, "retry", &m, 256 << 10);
	register_all(ctx);
	fill_bufs(50);
	is_int(spotrun_save(ctx, 1), SPOTRUN_OK, "checkpoint 0");
	/* the next manifest's key is a folder: the commit fails, the packs
	 * before it do not */
	if (sr_mkdirs(key, 0755, line) == -1)
		sr_fatal("%s", line);
	n = snprintf(line, sizeof line, "seq=1 reason=notice deadline=%.3f\n", sr_now() + 30);
	tu_write(dir, "request", line, (size_t)n);
	usleep(25000);
	is_int(spotrun_checkpoint_requested(ctx), 1, "a notice, 30 s left");
	fill_bufs(51);
	t0 = sr_mono();
	is_int(spotrun_save_async(ctx, 2), SPOTRUN_OK, "a save for it, staged in two halves");
	is_int(spotrun_wait(ctx), SPOTRUN_ERROR_STORE, "its commit fails");
	is_str(spotrun_getErrorString(ctx), "save retry: the store failed and the snapshot of step "
	    "2, larger than the staging budget, cannot be tried again (its first parts are "
	    "overwritten; the failure is in the warning before); nothing committed",
	    "and it is not tried again");
	ok(sr_mono() - t0 < 20, "well before the deadline (%.1f s of 30)", sr_mono() - t0);
	ok(strstr(line_of(&m, "warning: checkpoint try 1 failed: "), "keys exist below this one") !=
	    NULL, "the warning said why the try failed: %s",
	    line_of(&m, "warning: checkpoint try 1 failed: "));
	usleep(25000);
	is_int(spotrun_checkpoint_requested(ctx), 1, "the notice is still unanswered");
	spotrun_free(ctx);
	rmdir(key);
	unsetenv("SPOTRUN_CKPT_REQUEST");
	unsetenv("SPOTRUN_CKPT_DONE");
	unlink(req);
	fill_bufs(0);
	is_int((int)restore_into(url, "retry"), 1, "checkpoint 0 is the newest");
	ok(holds(50), "with its state");
	free(key);
	free(req);
	free(done);
	msgs_free(&m);
}

/* The done marker's line without its newline, or why it cannot be read
 * (malloc'd). */
static char *
done_text(const char *done)
{
	char *buf, err[SR_ERRMAX];

	if (sr_read_file(done, 4096, &buf, NULL, err) == -1)
		return sr_strdup(err);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Start the save of step and hold its thread; then write request seq
 * (reason, deadline) and return what spotrun_checkpoint_requested says
 * 25 ms later, the save still held. */
static int
request_in_flight(spotrun_ctx *ctx, struct msgs *m, long long step, const char *dir,
    int seq, const char *reason, double deadline)
{
	char line[200];
	int n;

	m->hold = 1;
	if (spotrun_save_async(ctx, step) != SPOTRUN_OK)
		sr_fatal("save_async: %s", spotrun_getErrorString(ctx));
	until_held(m);
	n = snprintf(line, sizeof line, "seq=%d reason=%s deadline=%.3f\n", seq, reason, deadline);
	tu_write(dir, "request", line, (size_t)n);
	usleep(25000);
	return spotrun_checkpoint_requested(ctx);
}

/* A request while a save is in flight. */
static void
test_requests(const char *url, const char *dir)
{
	struct msgs m;
	spotrun_ctx *ctx;
	char *req = tu_path(dir, "request"), *done = tu_path(dir, "done"), line[200];
	char *buf;
	int n;

	setenv("SPOTRUN_CKPT_REQUEST", req, 1);
	setenv("SPOTRUN_CKPT_DONE", done, 1);
	msgs_init(&m);
	first_checkpoint(url, "req", 40);
	ctx = new_ctx(url, "req", &m, 0);
	register_all(ctx);
	fill_bufs(41);
	is_int(request_in_flight(ctx, &m, 7, dir, 9, "notice", sr_now() + 120), 0, "a notice "
	    "comes while a save is in flight: the save takes it (nothing more to save for it)");
	ok(access(done, F_OK) == -1, "no done marker before the commit");
	release(&m);
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "the save commits");
	buf = done_text(done);
	ok(strncmp(buf, "seq=9 step=7 checkpoint=1 raw=", 30) == 0 &&
	    strstr(buf, " blocked=0.") != NULL, "then the done marker answers the notice, with "
	    "the time training was blocked: %s", buf);
	free(buf);
	usleep(25000);
	is_int(spotrun_checkpoint_requested(ctx), 0, "it is not asked again");

	/* a periodic request during a save: the next save answers it */
	drop_packs(url, "req");
	is_int(request_in_flight(ctx, &m, 8, dir, 10, "periodic", sr_now() + 120), 1, "a periodic "
	    "request that came after the save in flight began is asked for");
	release(&m);
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "the save in flight commits");
	buf = done_text(done);
	ok(strncmp(buf, "seq=9 ", 6) == 0, "without answering it (the marker still says seq 9)");
	free(buf);
	is_int(spotrun_save_async(ctx, 9), SPOTRUN_OK, "the next save");
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "commits");
	buf = done_text(done);
	ok(strncmp(buf, "seq=10 step=9 checkpoint=3 ", 27) == 0, "and answers it: %s", buf);
	free(buf);

	/* a notice whose deadline passes: the save in flight keeps to it */
	drop_packs(url, "req");
	is_int(request_in_flight(ctx, &m, 10, dir, 11, "notice", sr_now() - 1), 0, "a notice "
	    "already past its deadline is taken by the save in flight");
	release(&m);
	is_int(spotrun_wait(ctx), SPOTRUN_ERROR_DEADLINE, "which stops at the notice's deadline");
	snprintf(line, sizeof line, "checkpoint of req missed its deadline after 0 B of %zu B; "
	    "nothing committed", total_bytes);
	ok(strncmp(spotrun_getErrorString(ctx), line, strlen("checkpoint of req missed its "
	    "deadline after ")) == 0 && strstr(spotrun_getErrorString(ctx), "; nothing committed") !=
	    NULL, "nothing committed: %s", spotrun_getErrorString(ctx));
	is_int((int)latest(url, "req"), 3, "LATEST is still checkpoint 3");
	usleep(25000);
	is_int(spotrun_checkpoint_requested(ctx), 0, "the notice given up is not asked again");

	/* a request pending when the save begins is its own */
	drop_packs(url, "req");
	n = snprintf(line, sizeof line, "seq=12 reason=periodic deadline=%.3f\n", sr_now() + 120);
	tu_write(dir, "request", line, (size_t)n);
	usleep(25000);
	is_int(spotrun_checkpoint_requested(ctx), 1, "a periodic request");
	m.hold = 1;
	is_int(spotrun_save_async(ctx, 11), SPOTRUN_OK, "a save for it");
	until_held(&m);
	usleep(25000);
	is_int(spotrun_checkpoint_requested(ctx), 0, "while it is in flight the request is not "
	    "asked again");
	release(&m);
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "it commits");
	buf = done_text(done);
	ok(strncmp(buf, "seq=12 step=11 checkpoint=4 ", 28) == 0, "and answers it: %s", buf);
	free(buf);
	spotrun_free(ctx);
	unsetenv("SPOTRUN_CKPT_REQUEST");
	unsetenv("SPOTRUN_CKPT_DONE");
	unlink(req);
	unlink(done);
	free(req);
	free(done);
	msgs_free(&m);
}

/* ---- the library's output: none ---- */

static int saved_fd[2];
static char *out_path;

static void
quiet_begin(const char *dir)
{
	int fd, i;

	fflush(stdout);
	out_path = tu_path(dir, "out");
	fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (i = 0; i < 2; i++) {
		saved_fd[i] = dup(i + 1);
		if (fd == -1 || saved_fd[i] == -1 || dup2(fd, i + 1) == -1)
			sr_fatal("redirect fd %d: %s", i + 1, strerror(errno));
	}
	close(fd);
}

/* What was written meanwhile: the library's, or the tests' own lines. */
static char *
quiet_end(void)
{
	char *buf = NULL, err[SR_ERRMAX];
	int i;

	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < 2; i++) {
		dup2(saved_fd[i], i + 1);
		close(saved_fd[i]);
	}
	if (sr_read_file(out_path, 1 << 20, &buf, NULL, err) == -1)
		buf = sr_strdup(err);
	free(out_path);
	return buf;
}

int
main(void)
{
	char *dir, *store, *url, *out, *s3;
	const char *p;

	no_cloud();
	main_thread = pthread_self();
	dir = tu_tmpdir("t-lib-async");
	store = tu_path(dir, "store");
	url = sr_asprintf("file://%s", store);
	alloc_bufs();
	unsetenv("SPOTRUN_CKPT_REQUEST");
	unsetenv("SPOTRUN_CKPT_DONE");
	unsetenv("SPOTRUN_EPOCH");

	/* TAP lines go to the file too, and are echoed after: anything else
	 * in it is the library's */
	quiet_begin(dir);
	test_snapshot(url);
	test_budget(url);
	test_in_flight(url);
	test_failing(url, store);
	test_no_retry(url, store, dir);
	test_requests(url, dir);
	test_prepare(url);
	if (su_env("SPOTRUN_TEST_S3_ENDPOINT")[0] != '\0') {
		char bucket[64];

		setenv("AWS_ACCESS_KEY_ID", su_env("SPOTRUN_TEST_S3_ACCESS_KEY"), 1);
		setenv("AWS_SECRET_ACCESS_KEY", su_env("SPOTRUN_TEST_S3_SECRET_KEY"), 1);
		su_isolate();
		su_bucket_new(bucket, sizeof bucket, "t-lib-async");
		s3 = sr_asprintf("s3://%s/jobs?endpoint=%s", bucket,
		    su_env("SPOTRUN_TEST_S3_ENDPOINT"));
		printf("# the same on %s\n", s3);
		test_snapshot(s3);
		test_budget(s3);
		test_in_flight(s3);
		test_requests(s3, dir);
		su_bucket_rm(bucket);
		free(s3);
	} else if (strcmp(su_env("SPOTRUN_TEST_REQUIRE_S3"), "1") == 0)
		ok(0, "no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset) and SPOTRUN_TEST_REQUIRE_S3=1: "
		    "build-aux/test-all could not start Ceph RGW");
	else
		ok(1, "the same on S3 # SKIP no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset; "
		    "build-aux/test-all starts Ceph RGW)");
	out = quiet_end();
	fputs(out, stdout);
	for (p = out; *p != '\0'; p = strchr(p, '\n') != NULL ? strchr(p, '\n') + 1 : p + strlen(p)) {
		if (strncmp(p, "ok ", 3) != 0 && strncmp(p, "not ok ", 7) != 0 &&
		    strncmp(p, "# ", 2) != 0)
			break;
	}
	ok(*p == '\0', "the library printed nothing (every line was a test's)");
	ok(cnt.allocs > 0 && cnt.allocs == cnt.frees && cnt.live == 0, "the hooks made all %ld "
	    "allocations and as many frees (%ld), nothing left", cnt.allocs, cnt.frees);
	free(out);
	tu_rmtree(dir);
	free(url);
	free(store);
	free(dir);
	return tap_done();
}
