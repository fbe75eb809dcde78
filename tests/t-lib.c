/*
 * t-lib.c: libspotrun (lib/libspotrun.h) through its API only, linked as
 * the shared library: host buffers of every dtype, whole and sliced, saved
 * and restored bit for bit; the manifest's tensors as doc/format.md says;
 * a damaged checkpoint falling back to the one before; every error by its
 * code, name and exact message; the request protocol (request file, done
 * marker, deadline); spotrun_report's lines and refusals; a fenced job; the allocator hooks; and not a byte on
 * stdout or stderr from the library. The store is read with the
 * checkpoint module (linked statically) only to check what was written.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPOTRUN_EXPERIMENTAL
#include "libspotrun.h"

#include "tap.h"
#include "ckpt-util.h"
#include "lib-util.h"
#include "mdemu-util.h"

#include "ckpt.h"
#include "manifest.h"
#include "store.h"
#include "util.h"

/* What the message callback was told, one line each. */
struct msgs {
	struct tu_log log;
	int levels[3];
};

static void
on_msg(void *opaque, spotrun_msg_level level, const char *text)
{
	struct msgs *m = opaque;

	if ((unsigned)level < 3)
		m->levels[level]++;
	tu_log_fn(&m->log, text);
}

static void
msgs_free(struct msgs *m)
{
	tu_log_clear(&m->log);
	free(m->log.lines);
	memset(m, 0, sizeof *m);
}

/* The library's output, if any: stdout and stderr go to files while it
 * runs (quiet_begin .. quiet_end), which must stay empty. */
struct quiet {
	int saved[2];
	char *path[2];
};

static void
quiet_begin(struct quiet *q, const char *dir)
{
	int fd, i;

	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < 2; i++) {
		q->path[i] = sr_asprintf("%s/fd%d", dir, i + 1);
		fd = open(q->path[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		q->saved[i] = dup(i + 1);
		if (fd == -1 || q->saved[i] == -1 || dup2(fd, i + 1) == -1)
			sr_fatal("redirect fd %d: %s", i + 1, strerror(errno));
		close(fd);
	}
}

/* Bytes the library wrote to stdout and stderr. */
static long
quiet_end(struct quiet *q)
{
	struct stat sb;
	long n = 0;
	int i;

	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < 2; i++) {
		dup2(q->saved[i], i + 1);
		close(q->saved[i]);
		if (stat(q->path[i], &sb) == 0)
			n += (long)sb.st_size;
		free(q->path[i]);
	}
	return n;
}

/* The buffers of the test: every dtype, some sliced. */
#define NBUF 15
struct buf {
	const char *name;
	spotrun_dtype dtype;
	int ndim;
	uint64_t shape[3], off[3], size[3];
	int whole;			/* offsets and sizes NULL */
	size_t esize;
	void *p;
	size_t bytes;
};

static struct buf bufs[NBUF] = {
	{ "w", SPOTRUN_F32, 2, { 4, 6 }, { 0 }, { 0 }, 1, 4, NULL, 0 },
	{ "big", SPOTRUN_F32, 1, { 800000 }, { 0 }, { 0 }, 1, 4, NULL, 0 },
	{ "b16", SPOTRUN_BF16, 2, { 4, 8 }, { 1, 0 }, { 2, 8 }, 0, 2, NULL, 0 },
	{ "h", SPOTRUN_F16, 1, { 100 }, { 10 }, { 50 }, 0, 2, NULL, 0 },
	{ "d", SPOTRUN_F64, 0, { 0 }, { 0 }, { 0 }, 1, 8, NULL, 0 },
	{ "e4m3", SPOTRUN_F8_E4M3, 3, { 2, 3, 4 }, { 1, 1, 0 }, { 1, 2, 4 }, 0, 1, NULL, 0 },
	{ "e5m2", SPOTRUN_F8_E5M2, 1, { 33 }, { 0 }, { 0 }, 1, 1, NULL, 0 },
	{ "i8", SPOTRUN_I8, 1, { 7 }, { 0 }, { 0 }, 1, 1, NULL, 0 },
	{ "i16", SPOTRUN_I16, 1, { 9 }, { 0 }, { 0 }, 1, 2, NULL, 0 },
	{ "i32", SPOTRUN_I32, 2, { 3, 3 }, { 0, 1 }, { 3, 2 }, 0, 4, NULL, 0 },
	{ "i64", SPOTRUN_I64, 1, { 5 }, { 0 }, { 0 }, 1, 8, NULL, 0 },
	{ "u8", SPOTRUN_U8, 1, { 1000 }, { 0 }, { 0 }, 1, 1, NULL, 0 },
	{ "u64", SPOTRUN_U64, 1, { 2 }, { 0 }, { 0 }, 1, 8, NULL, 0 },
	{ "raw", SPOTRUN_BYTES, 1, { 4097 }, { 0 }, { 0 }, 1, 1, NULL, 0 },
	{ "empty", SPOTRUN_I32, 2, { 0, 4 }, { 0 }, { 0 }, 1, 4, NULL, 0 },
};

static void
alloc_bufs(void)
{
	size_t i, n;
	int d;

	for (i = 0; i < NBUF; i++) {
		struct buf *b = &bufs[i];
		n = 1;
		for (d = 0; d < b->ndim; d++)
			n *= b->whole ? b->shape[d] : b->size[d];
		b->bytes = n * b->esize;
		b->p = sr_calloc(1, b->bytes + 1);
	}
}

static void
fill_bufs(uint64_t seed)
{
	size_t i;

	for (i = 0; i < NBUF; i++)
		tu_fill(bufs[i].p, bufs[i].bytes, seed + i);
}

static void **
copy_bufs(void)
{
	void **c = sr_calloc(NBUF, sizeof *c);
	size_t i;

	for (i = 0; i < NBUF; i++) {
		c[i] = sr_malloc(bufs[i].bytes + 1);
		memcpy(c[i], bufs[i].p, bufs[i].bytes);
	}
	return c;
}

/* Whether every buffer equals copy c; names the first that does not. */
static int
same_as(void **c)
{
	size_t i;

	for (i = 0; i < NBUF; i++) {
		if (memcmp(c[i], bufs[i].p, bufs[i].bytes) != 0) {
			printf("# buffer %s differs\n", bufs[i].name);
			return 0;
		}
	}
	return 1;
}

static int
register_all(spotrun_ctx *ctx)
{
	size_t i;
	int rc;

	for (i = 0; i < NBUF; i++) {
		struct buf *b = &bufs[i];
		rc = spotrun_register(ctx, b->name, b->dtype, b->ndim, b->shape,
		    b->whole ? NULL : b->off, b->whole ? NULL : b->size, b->p);
		if (rc != SPOTRUN_OK) {
			printf("# register %s: %s\n", b->name, spotrun_getErrorString(ctx));
			return rc;
		}
	}
	return SPOTRUN_OK;
}

static spotrun_ctx *
new_ctx(const char *url, const char *job, struct msgs *m, struct counts *c)
{
	spotrun_params p;

	spotrun_params_init(&p);
	p.store = url;
	p.job = job;
	p.message = m != NULL ? on_msg : NULL;
	p.message_opaque = m;
	p.chunk_size = 1 << 20;		/* "big" takes 4 chunks */
	p.threads = 2;
	p.keep = 0;
	if (c != NULL) {
		p.alloc = count_alloc;
		p.free = count_free;
		p.alloc_opaque = c;
	}
	return spotrun_create(&p);
}

static void
test_names(void)
{
	static const char *const want[] = {
		"no error", "error (generic)", "invalid parameter", "out of memory",
		"no checkpoint store given", "no job name given", "buffer name already registered",
		"checkpoint store failed", "checkpoint does not match the registered buffers",
		"no usable checkpoint", "checkpoint deadline missed", "job taken over by a newer run",
		"not built yet", "no usable CUDA device",
	};
	int i, all = 1;

	for (i = 0; i < SPOTRUN_ERROR_maxCode; i++) {
		if (strcmp(spotrun_getErrorName((spotrun_error)i), want[i]) != 0) {
			printf("# code %d: %s\n", i, spotrun_getErrorName((spotrun_error)i));
			all = 0;
		}
	}
	ok(all && SPOTRUN_ERROR_maxCode == 14, "every code has its name (14 codes)");
	is_str(spotrun_getErrorName(SPOTRUN_ERROR_maxCode), "unknown error code",
	    "a number past the codes is unknown");
	is_str(spotrun_getErrorName((spotrun_error)-1), "unknown error code", "so is -1");
	is_int(spotrun_versionNumber(), SPOTRUN_VERSION_NUMBER, "the library's version is the header's");
}

static void
test_no_store(void)
{
	struct msgs m;
	spotrun_ctx *ctx;
	float x = 1;
	long long step = 5;

	memset(&m, 0, sizeof m);
	unsetenv("SPOTRUN_STORE");
	unsetenv("SPOTRUN_JOB");
	ok(spotrun_create(NULL) == NULL, "spotrun_create(NULL) is NULL");
	ctx = new_ctx(NULL, NULL, &m, NULL);
	ok(ctx != NULL, "a context without a store is made, to say why");
	is_int(spotrun_register(ctx, "x", SPOTRUN_F32, 0, NULL, NULL, NULL, &x),
	    SPOTRUN_ERROR_NO_STORE, "and every call returns SPOTRUN_ERROR_NO_STORE");
	is_str(spotrun_getErrorString(ctx), "spotrun_create: no store: set params.store (e.g. "
	    "file:///var/tmp/ckpt) or run under spotrun (SPOTRUN_STORE)", "with the fix");
	is_int(spotrun_restore(ctx, &step), SPOTRUN_ERROR_NO_STORE, "restore too");
	is_int(m.levels[SPOTRUN_MSG_ERROR], 3, "each failure told the callback");
	is_int(spotrun_checkpoint_requested(ctx), 0, "nothing is requested of it");
	spotrun_free(ctx);
	msgs_free(&m);

	setenv("SPOTRUN_STORE", "file:///nonexistent-spotrun-test", 1);
	ctx = new_ctx(NULL, NULL, NULL, NULL);
	is_int(spotrun_save(ctx, 1), SPOTRUN_ERROR_NO_JOB, "a store from SPOTRUN_STORE but no job");
	is_str(spotrun_getErrorString(ctx), "spotrun_create: no job name: set params.job or run "
	    "under spotrun (SPOTRUN_JOB)", "its message");
	spotrun_free(ctx);
	unsetenv("SPOTRUN_STORE");
	ctx = new_ctx("file:///tmp", "bad//job", NULL, NULL);
	is_int(spotrun_save(ctx, 1), SPOTRUN_ERROR_PARAMETER, "a bad job name");
	spotrun_free(ctx);
}

/* spotrun_report (experimental): the line it appends, its refusals, and
 * nothing written outside spotrun; a context without a store reports. */
static void
test_report(const char *dir)
{
	const char *names[] = { "loss", "val/acc" }, *bad[] = { "step" }, *twice[] = { "a", "a" };
	double values[] = { 0.25, 0.875 }, inf[] = { 1.0 / 0.0 };
	char *path = sr_asprintf("%s/metrics", dir), *text, err[SR_ERRMAX];
	struct msgs m;
	spotrun_ctx *ctx;
	size_t len;

	memset(&m, 0, sizeof m);
	unsetenv("SPOTRUN_STORE");
	unsetenv("SPOTRUN_JOB");
	unsetenv("SPOTRUN_METRICS");
	ctx = new_ctx(NULL, NULL, &m, NULL);
	is_int(spotrun_report(ctx, 3, 2, names, values), SPOTRUN_OK,
	    "report without SPOTRUN_METRICS: OK, nothing written");
	setenv("SPOTRUN_METRICS", path, 1);
	is_int(spotrun_report(ctx, 3, 2, names, values), SPOTRUN_OK, "report: OK, without a store");
	is_int(spotrun_report(ctx, 4, 1, names, values), SPOTRUN_OK, "and again");
	is_int(spotrun_report(ctx, -1, 1, names, values), SPOTRUN_ERROR_PARAMETER, "a step < 0");
	is_int(spotrun_report(ctx, 1, 1, bad, values), SPOTRUN_ERROR_PARAMETER, "a metric named step");
	is_str(spotrun_getErrorString(ctx), "report metrics: name 0 is no metric name (a letter "
	    "or _, then letters, digits and _.-/; at most 64 bytes)", "its message");
	is_int(spotrun_report(ctx, 1, 2, twice, values), SPOTRUN_ERROR_PARAMETER, "a name twice");
	is_int(spotrun_report(ctx, 1, 1, names, inf), SPOTRUN_ERROR_PARAMETER, "an infinite value");
	is_int(spotrun_report(ctx, 1, 0, names, values), SPOTRUN_ERROR_PARAMETER, "no metric");
	text = NULL;
	sr_read_file(path, 4096, &text, &len, err);
	is_str(text != NULL ? text : "", "step=3 loss=0.25 val/acc=0.875\nstep=4 loss=0.25\n",
	    "two lines in their normal form, nothing of the refused calls");
	free(text);
	unsetenv("SPOTRUN_METRICS");
	spotrun_free(ctx);
	msgs_free(&m);
	free(path);
}

/* spotrun_params is the stable tier's: the slots 0.1's experimental fields
 * held are reserved, and the experimental settings are setters. */
static void
test_reserved(const char *url)
{
	spotrun_params p;
	spotrun_ctx *ctx;
	int x = 0;

	spotrun_params_init(&p);
	ok(p.reserved0 == 0 && p.reserved1 == NULL, "spotrun_params_init: the reserved slots 0");
	p.store = url;
	p.job = "reserved";
	p.reserved0 = (size_t)1 << 20;	/* a program of 0.1 that set staging_bytes */
	ctx = spotrun_create(&p);
	is_int(spotrun_set_staging_bytes(ctx, 1 << 20), SPOTRUN_ERROR_PARAMETER, "a reserved slot "
	    "set: spotrun_create's kept failure, returned by a setter too");
	is_str(spotrun_getErrorString(ctx), "spotrun_create: params.reserved0 and reserved1 must "
	    "be 0 (0.1's staging_bytes and cuda_library there are the experimental "
	    "spotrun_set_staging_bytes and spotrun_set_cuda_library now)", "naming the setters");
	spotrun_free(ctx);
	p.reserved0 = 0;
	p.reserved1 = &x;
	ctx = spotrun_create(&p);
	is_int(spotrun_set_cuda_library(ctx, NULL), SPOTRUN_ERROR_PARAMETER, "so is reserved1");
	spotrun_free(ctx);
	is_int(spotrun_set_staging_bytes(NULL, 0), SPOTRUN_ERROR_PARAMETER, "a setter without a "
	    "context: SPOTRUN_ERROR_PARAMETER");
	is_int(spotrun_set_cuda_library(NULL, "x"), SPOTRUN_ERROR_PARAMETER, "both");
}

static void
test_params(const char *url)
{
	struct msgs m;
	spotrun_ctx *ctx;
	uint64_t shape[2] = { 4, 6 }, off[2] = { 3, 0 }, size[2] = { 2, 6 };
	float x[24];
	char longname[300];
	long long step;

	memset(&m, 0, sizeof m);
	ctx = new_ctx(url, "params", &m, NULL);
	is_int(spotrun_register(ctx, "x", (spotrun_dtype)15, 2, shape, NULL, NULL, x),
	    SPOTRUN_ERROR_PARAMETER, "dtype 15 is refused");
	is_str(spotrun_getErrorString(ctx), "register \"x\": dtype 15 is not a spotrun_dtype",
	    "naming it");
	is_int(spotrun_register(ctx, "x", SPOTRUN_F32, 9, shape, NULL, NULL, x),
	    SPOTRUN_ERROR_PARAMETER, "9 dimensions are refused");
	is_str(spotrun_getErrorString(ctx), "register \"x\": 9 dimensions (0 to 8)", "saying so");
	is_int(spotrun_register(ctx, "x", SPOTRUN_F32, 2, shape, off, size, x),
	    SPOTRUN_ERROR_PARAMETER, "a slice past the shape is refused");
	is_str(spotrun_getErrorString(ctx), "register \"x\": dimension 0: the slice [3, 3 + 2) is "
	    "outside the shape's 4", "naming the dimension");
	is_int(spotrun_register(ctx, "x", SPOTRUN_F32, 2, shape, NULL, NULL, NULL),
	    SPOTRUN_ERROR_PARAMETER, "a NULL buffer is refused");
	is_str(spotrun_getErrorString(ctx), "register \"x\": no buffer (NULL) for 96 bytes", "so");
	memset(longname, 'a', 256);
	longname[256] = '\0';
	is_int(spotrun_register(ctx, longname, SPOTRUN_F32, 2, shape, NULL, NULL, x),
	    SPOTRUN_ERROR_PARAMETER, "a name of 256 bytes is refused");
	is_str(spotrun_getErrorString(ctx), "register: a buffer's name is 1 to 255 printable ASCII "
	    "characters", "with the rule");
	is_int(spotrun_register(ctx, "a\nb", SPOTRUN_F32, 2, shape, NULL, NULL, x),
	    SPOTRUN_ERROR_PARAMETER, "so is one with a newline");
	is_int(spotrun_save(ctx, 1), SPOTRUN_ERROR_PARAMETER, "a save with nothing registered");
	is_str(spotrun_getErrorString(ctx), "save: no buffer is registered", "says so");
	is_int(spotrun_register(ctx, "x", SPOTRUN_F32, 2, shape, NULL, NULL, x), SPOTRUN_OK,
	    "a good registration");
	is_str(spotrun_getErrorString(ctx), "", "clears the last error");
	is_int(spotrun_register(ctx, "x", SPOTRUN_I8, 0, NULL, NULL, NULL, x),
	    SPOTRUN_ERROR_NAME_TAKEN, "a name twice is SPOTRUN_ERROR_NAME_TAKEN");
	is_str(spotrun_getErrorString(ctx), "register \"x\": a buffer of that name is registered "
	    "already", "its message");
	is_int(spotrun_save(ctx, -1), SPOTRUN_ERROR_PARAMETER, "a negative step");
	is_str(spotrun_getErrorString(ctx), "save: step -1 is negative", "is refused");
	is_int(spotrun_restore(ctx, NULL), SPOTRUN_ERROR_PARAMETER, "restore without a step");
	step = 42;
	is_int(spotrun_restore(ctx, &step), SPOTRUN_OK, "restore of a job with no checkpoint");
	is_int(step, -1, "says step -1");
	setenv("SPOTRUN_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
	is_int(spotrun_register_device(ctx, "dev", SPOTRUN_BF16, 2, shape, NULL, NULL, x, 0),
	    SPOTRUN_ERROR_NO_DEVICE, "a device buffer without the CUDA driver: "
	    "SPOTRUN_ERROR_NO_DEVICE");
	unsetenv("SPOTRUN_CUDA_LIBRARY");
	is_str(spotrun_getErrorString(ctx), "register \"dev\": no CUDA driver "
	    "(/nonexistent/libcuda.so.1: cannot open shared object file: No such file or "
	    "directory); nothing registered: name the CUDA driver with spotrun_set_cuda_library or "
	    "SPOTRUN_CUDA_LIBRARY, or register host buffers", "naming the library, why, and what to do "
	    "instead (tests/t-lib-device has the rest)");
	is_int(spotrun_register(ctx, "dev", SPOTRUN_F32, 2, shape, NULL, NULL, x), SPOTRUN_OK,
	    "and nothing was registered under its name");
	is_int(spotrun_register_device(ctx, "dev", SPOTRUN_F32, 2, shape, NULL, NULL, x, 0),
	    SPOTRUN_ERROR_NAME_TAKEN, "the device entry checks its arguments as register does");
	is_int(spotrun_register(NULL, "x", SPOTRUN_F32, 0, NULL, NULL, NULL, x),
	    SPOTRUN_ERROR_PARAMETER, "no context: SPOTRUN_ERROR_PARAMETER");
	spotrun_free(ctx);
	spotrun_free(NULL);
	msgs_free(&m);
}

struct listed {
	int n;
	long long step[4];
	uint64_t files[4];
	uint64_t reused[4];
};

static int
list_cb(const struct sr_ckpt_stats *ck, int is_latest, void *arg)
{
	struct listed *l = arg;

	if (l->n < 4) {
		l->step[l->n] = ck->step;
		l->files[l->n] = ck->files;
		l->reused[l->n] = ck->reused_chunks;
	}
	l->n++;
	return 0;
}

/* A context with one buffer that lib/job's checkpoint 1 does not hold
 * as registered: restore fails with SPOTRUN_ERROR_MISMATCH and why. */
static void
mismatch(const char *url, const char *name, spotrun_dtype dtype, const uint64_t *shape,
    const uint64_t *off, const uint64_t *size, const char *label, const char *why)
{
	spotrun_ctx *ctx = new_ctx(url, "lib/job", NULL, NULL);
	char want[512];
	float f[32];
	long long step;

	snprintf(want, sizeof want, "restore lib/job: checkpoint 1: %s", why);
	spotrun_register(ctx, name, dtype, 2, shape, off, size, f);
	is_int(spotrun_restore(ctx, &step), SPOTRUN_ERROR_MISMATCH, "%s: SPOTRUN_ERROR_MISMATCH",
	    label);
	is_str(spotrun_getErrorString(ctx), want, "%s: the message says what differs", label);
	spotrun_free(ctx);
}

static void
test_save_restore(const char *url, const char *dir)
{
	struct msgs m;
	struct counts cnt = { 0, 0 };
	struct quiet q;
	struct sr_store *st;
	struct sr_manifest man;
	struct listed l;
	spotrun_ctx *ctx;
	void **v7, **v8;
	char err[SR_ERRMAX], want[512], *pack, *key, hex[65];
	long long step = -2;
	int rc_reg, rc_save, rc_save8, rc_restore, rc;
	long noise;
	size_t i, total;

	memset(&m, 0, sizeof m);
	alloc_bufs();
	fill_bufs(7);
	v7 = copy_bufs();
	quiet_begin(&q, dir);
	ctx = new_ctx(url, "lib/job", &m, &cnt);
	rc_reg = register_all(ctx);
	rc_save = spotrun_save(ctx, 7);
	noise = quiet_end(&q);
	is_int(rc_reg, SPOTRUN_OK, "15 buffers of every dtype registered");
	is_int(rc_save, SPOTRUN_OK, "saved at step 7");
	is_int(noise, 0, "the library wrote nothing to stdout or stderr");
	for (i = 0, total = 0; i < NBUF; i++)
		total += bufs[i].bytes;
	snprintf(want, sizeof want, "checkpoint 0 of lib/job committed: step 7, 15 buffers, %zu "
	    "bytes (", total);
	ok(m.log.n >= 1 && strncmp(m.log.lines[m.log.n - 1], want, strlen(want)) == 0,
	    "the callback was told of the commit: %s", m.log.n ? m.log.lines[m.log.n - 1] : "");
	is_int(m.levels[SPOTRUN_MSG_ERROR] + m.levels[SPOTRUN_MSG_WARNING], 0,
	    "and of no error or warning");

	/* What the store holds. */
	if (sr_store_open(url, &st, err) != 0)
		sr_fatal("%s", err);
	rc = load_manifest(st, "lib/job", 0, &man);
	ok(rc == 0, "its manifest parses and passes a restore's checks");
	is_int(man.version, 3, "as version 3");
	is_int(man.ntensors, 14 + 1, "with 15 tensors");
	is_int(man.nentries, 0, "and no files");
	ok(man.ntensors > 1 && strcmp(man.tensors[0].name, "b16") == 0 &&
	    strcmp(man.tensors[14].name, "w") == 0, "sorted by name");
	if (man.ntensors == 15) {
		const struct sr_mtensor *t = &man.tensors[0];
		ok(t->dtype == SR_DT_BF16 && t->ndim == 2 && t->shape[0] == 4 && t->shape[1] == 8 &&
		    t->npieces == 1 && t->pieces[0].offsets[0] == 1 && t->pieces[0].offsets[1] == 0 &&
		    t->pieces[0].sizes[0] == 2 && t->pieces[0].sizes[1] == 8 &&
		    t->pieces[0].data.size == 32 && t->pieces[0].data.nchunks == 1,
		    "b16: bf16, shape [4,8], its piece at [1,0] of [2,8], 32 bytes in one chunk");
		t = &man.tensors[1];
		ok(strcmp(t->name, "big") == 0 && t->pieces[0].data.nchunks == 4 &&
		    t->pieces[0].data.chunks[3].rlen == 3200000 - 3 * (1 << 20),
		    "big: 3.2 MB in 4 chunks of 1 MiB and the rest");
		t = &man.tensors[2];
		ok(strcmp(t->name, "d") == 0 && t->ndim == 0 && t->pieces[0].data.size == 8,
		    "d: a scalar f64, 0 dimensions, 8 bytes");
		t = &man.tensors[4];
		ok(strcmp(t->name, "e5m2") == 0 && t->dtype == SR_DT_F8E5M2, "e5m2's dtype");
		t = &man.tensors[5];
		ok(strcmp(t->name, "empty") == 0 && t->shape[0] == 0 && t->pieces[0].data.size == 0 &&
		    t->pieces[0].data.nchunks == 0, "empty: shape [0,4], no bytes, no chunk");
	} else
		for (i = 0; i < 5; i++)
			ok(0, "tensor %zu", i);
	sr_manifest_free(&man);
	memset(&l, 0, sizeof l);
	rc = sr_ckpt_list(st, "lib/job", list_cb, &l, err);
	ok(rc == 0 && l.n == 1 && l.step[0] == 7 && l.files[0] == 15,
	    "the checkpoint module lists it (spotrun ls): step 7, 15 buffers as its files");
	spotrun_free(ctx);
	ok(cnt.allocs > 0 && cnt.allocs == cnt.frees, "the hooks made all %d allocations and "
	    "as many frees (%d)", cnt.allocs, cnt.frees);

	/* Back, into zeroed buffers of a new context. */
	for (i = 0; i < NBUF; i++)
		memset(bufs[i].p, 0, bufs[i].bytes);
	tu_log_clear(&m.log);
	quiet_begin(&q, dir);
	ctx = new_ctx(url, "lib/job", &m, NULL);
	register_all(ctx);
	rc_restore = spotrun_restore(ctx, &step);
	noise = quiet_end(&q);
	is_int(rc_restore, SPOTRUN_OK, "restored");
	is_int(step, 7, "step 7");
	ok(same_as(v7), "every buffer bit for bit as saved");
	is_int(noise, 0, "silently");
	/* every chunk read once: the boxes are the pieces saved */
	ok(m.log.n == 1 && strncmp(m.log.lines[0], "checkpoint 0 of lib/job restored: step 7 (17 "
	    "chunks read, ", 58) == 0, "the callback was told: %s", m.log.n ? m.log.lines[0] : "");

	/* A second checkpoint: unchanged buffers are referenced. */
	tu_fill(bufs[0].p, bufs[0].bytes, 99);		/* w changes */
	v8 = copy_bufs();
	rc_save8 = spotrun_save(ctx, 8);
	is_int(rc_save8, SPOTRUN_OK, "saved at step 8");
	memset(&l, 0, sizeof l);
	sr_ckpt_list(st, "lib/job", list_cb, &l, err);
	ok(l.n == 2 && l.step[1] == 8 && l.reused[1] == 16, "checkpoint 1 references the 16 "
	    "chunks of the 13 buffers with bytes that did not change (%" PRIu64 ")", l.reused[1]);
	memset(bufs[0].p, 0, bufs[0].bytes);
	is_int(spotrun_restore(ctx, &step), SPOTRUN_OK, "restore again");
	ok(step == 8 && same_as(v8), "step 8, as saved");

	/* Damage: checkpoint 1's own pack goes; restore falls back to 0. */
	rc = load_manifest(st, "lib/job", 1, &man);
	pack = NULL;
	if (rc == 0 && man.ntensors == 15 && man.tensors[14].pieces[0].data.nchunks == 1) {
		pack = sr_strdup(man.tensors[14].pieces[0].data.chunks[0].pack);
		sr_id_hex(man.chunk_id, man.tensors[14].pieces[0].data.chunks[0].id, hex);
	}
	sr_manifest_free(&man);
	ok(pack != NULL && strstr(pack, "lib/job/packs/0000000001-") == pack,
	    "w's chunk is in checkpoint 1's pack");
	key = sr_asprintf("%s", pack != NULL ? pack : "x");
	sr_store_delete(st, key, err);
	tu_log_clear(&m.log);
	memset(m.levels, 0, sizeof m.levels);
	is_int(spotrun_restore(ctx, &step), SPOTRUN_OK, "a restore with that pack gone");
	ok(step == 7 && same_as(v7), "brings back step 7, bit for bit");
	snprintf(want, sizeof want, "checkpoint 1: chunk %s of tensor \"w\": pack %s is missing; "
	    "falling back to checkpoint 0", hex, key);
	ok(tu_log_has(&m.log, want), "the callback was told why");
	is_int(m.levels[SPOTRUN_MSG_WARNING], 1, "as a warning");
	free(key);
	free(pack);

	/* Mismatches, each named; no fallback. */
	spotrun_free(ctx);
	{
		uint64_t s47[2] = { 4, 7 }, s48[2] = { 4, 8 }, o00[2] = { 0, 0 }, z28[2] = { 2, 8 };

		mismatch(url, "w", SPOTRUN_F32, s47, NULL, NULL, "another shape", "tensor \"w\" has "
		    "shape [4,6] there, but registered with [4,7]");
		mismatch(url, "b16", SPOTRUN_F16, s48, o00, z28, "another dtype", "tensor \"b16\" is "
		    "bf16 there, but registered as f16");
		mismatch(url, "b16", SPOTRUN_BF16, s48, o00, z28, "a slice not saved", "tensor "
		    "\"b16\": no saved piece holds offsets [0,0] sizes [1,8] of the box registered "
		    "(offsets [0,0] sizes [2,8]; 1 piece saved)");
		mismatch(url, "zz", SPOTRUN_F32, s47, NULL, NULL, "a name not saved",
		    "it has no tensor \"zz\"");
	}
	sr_store_close(st);
	for (i = 0; i < NBUF; i++) {
		free(v7[i]);
		free(v8[i]);
	}
	free(v7);
	free(v8);
	msgs_free(&m);
}

/* A directory checkpoint (manifest version 2) restores as before, and
 * the library does not take it for its own. */
static void
test_old_manifest(const char *url, const char *dir)
{
	struct sr_ckpt_opts o;
	struct sr_store *st;
	struct sr_manifest man;
	spotrun_ctx *ctx;
	char err[SR_ERRMAX], why[256], *src = tu_path(dir, "src"), *dst = tu_path(dir, "dst");
	long long step;
	float x[4];

	tu_mkdir(dir, "src", 0755);
	tu_write_noise(src, "model.bin", 100000, 3);
	tu_mkdir(src, "sub", 0755);
	tu_write(src, "sub/n.txt", "hello\n", 6);
	memset(&o, 0, sizeof o);
	o.job = "dirjob";
	o.chunk_size = 64 << 10;
	if (sr_store_open(url, &st, err) != 0)
		sr_fatal("%s", err);
	is_int(sr_ckpt_save(st, &o, src, 3, NULL, err), 0, "a directory saves");
	ok(load_manifest(st, "dirjob", 0, &man) == 0 && man.version == 2 && man.ntensors == 0 &&
	    man.nentries == 3, "as version 2, files only");
	sr_manifest_free(&man);
	is_int(sr_ckpt_restore(st, &o, dst, NULL, err), 0, "and restores");
	why[0] = '\0';
	ok(tu_tree_cmp(src, dst, "", why, sizeof why) == 0, "the same tree%s", why);
	ctx = new_ctx(url, "dirjob", NULL, NULL);
	spotrun_register(ctx, "x", SPOTRUN_F32, 0, NULL, NULL, NULL, x);
	is_int(spotrun_restore(ctx, &step), SPOTRUN_ERROR_MISMATCH, "the library does not "
	    "restore a directory checkpoint");
	is_str(spotrun_getErrorString(ctx), "restore dirjob: checkpoint 0: it holds files, not "
	    "tensors (a directory checkpoint)", "and says what it holds");
	spotrun_free(ctx);
	sr_store_close(st);
	free(src);
	free(dst);
}

/* The request protocol, as library mode's supervisor speaks it. */
static void
test_requests(const char *url, const char *dir)
{
	spotrun_ctx *ctx;
	char *req = tu_path(dir, "request"), *done = tu_path(dir, "done"), line[200], err[SR_ERRMAX];
	char *buf = NULL;
	float x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct sr_store *st;
	int n;

	setenv("SPOTRUN_CKPT_REQUEST", req, 1);
	setenv("SPOTRUN_CKPT_DONE", done, 1);
	ctx = new_ctx(url, "reqjob", NULL, NULL);
	spotrun_register(ctx, "x", SPOTRUN_F32, 1, (uint64_t[]){ 8 }, NULL, NULL, x);
	is_int(spotrun_checkpoint_requested(ctx), 0, "no request file: nothing requested");
	n = snprintf(line, sizeof line, "seq=3 reason=notice deadline=%.3f\n", sr_now() + 60);
	tu_write(dir, "request", line, (size_t)n);
	is_int(spotrun_checkpoint_requested(ctx), 0, "within 20 ms of the last look: the answer "
	    "is the last one");
	usleep(25000);
	is_int(spotrun_checkpoint_requested(ctx), 1, "25 ms later the request is seen");
	is_int(spotrun_save(ctx, 11), SPOTRUN_OK, "the save answers it");
	ok(sr_read_file(done, 4096, &buf, NULL, err) == 0 && strncmp(buf,
	    "seq=3 step=11 checkpoint=0 raw=32 stored=", 41) == 0 && strstr(buf, " new=") != NULL &&
	    strstr(buf, " reused=0 seconds=") != NULL, "the done marker names request, step, "
	    "checkpoint and its figures: %s", buf != NULL ? buf : err);
	free(buf);
	usleep(25000);
	is_int(spotrun_checkpoint_requested(ctx), 0, "an answered request is not asked again");
	n = snprintf(line, sizeof line, "seq=4 reason=notice deadline=%.3f\n", sr_now() - 1);
	tu_write(dir, "request", line, (size_t)n);
	usleep(25000);
	is_int(spotrun_checkpoint_requested(ctx), 1, "a new request is");
	is_int(spotrun_save(ctx, 12), SPOTRUN_ERROR_DEADLINE, "its deadline passed: "
	    "SPOTRUN_ERROR_DEADLINE");
	is_str(spotrun_getErrorString(ctx), "checkpoint of reqjob missed its deadline after 0 B "
	    "of 32 B; nothing committed", "nothing committed");
	usleep(25000);
	is_int(spotrun_checkpoint_requested(ctx), 0, "a request past its deadline is not asked "
	    "again");
	spotrun_free(ctx);

	if (sr_store_open(url, &st, err) != 0)
		sr_fatal("%s", err);
	sr_ckpt_fence(st, "reqjob", 5, err);
	sr_store_close(st);
	unlink(req);
	ctx = new_ctx(url, "reqjob", NULL, NULL);
	spotrun_register(ctx, "x", SPOTRUN_F32, 1, (uint64_t[]){ 8 }, NULL, NULL, x);
	is_int(spotrun_save(ctx, 13), SPOTRUN_ERROR_FENCED, "a job fenced by epoch 5: a save at "
	    "epoch 0 is SPOTRUN_ERROR_FENCED");
	is_str(spotrun_getErrorString(ctx), "save reqjob: nothing committed: job reqjob is now run "
	    "by epoch 5 (a newer run took it over)", "saying who holds it");
	spotrun_free(ctx);
	setenv("SPOTRUN_EPOCH", "5", 1);
	ctx = new_ctx(url, "reqjob", NULL, NULL);
	spotrun_register(ctx, "x", SPOTRUN_F32, 1, (uint64_t[]){ 8 }, NULL, NULL, x);
	is_int(spotrun_save(ctx, 13), SPOTRUN_OK, "with SPOTRUN_EPOCH=5 it commits");
	spotrun_free(ctx);
	setenv("SPOTRUN_EPOCH", "x5", 1);
	ctx = new_ctx(url, "reqjob", NULL, NULL);
	is_int(spotrun_save(ctx, 13), SPOTRUN_ERROR_PARAMETER, "a bad SPOTRUN_EPOCH");
	is_str(spotrun_getErrorString(ctx), "spotrun_create: SPOTRUN_EPOCH=x5 is not an epoch (0 "
	    "to 9223372036854775807)", "is named");
	spotrun_free(ctx);
	unsetenv("SPOTRUN_EPOCH");
	unsetenv("SPOTRUN_CKPT_REQUEST");
	unsetenv("SPOTRUN_CKPT_DONE");
	free(req);
	free(done);
}

int
main(void)
{
	char *dir, *store, *url, *sub;

	no_cloud();
	setvbuf(stdout, NULL, _IOLBF, 0);
	dir = tu_tmpdir("t-lib");
	store = tu_path(dir, "store");
	url = sr_asprintf("file://%s", store);
	test_names();
	test_no_store();
	test_report(dir);
	test_reserved(url);
	test_params(url);
	test_save_restore(url, dir);
	sub = tu_path(dir, "old");
	mkdir(sub, 0755);
	test_old_manifest(url, sub);
	test_requests(url, dir);
	tu_rmtree(dir);
	free(sub);
	free(url);
	free(store);
	free(dir);
	return tap_done();
}
