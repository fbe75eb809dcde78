/*
 * spotrun.c: libspotrun (libspotrun.h), the job's side of library mode.
 * A context holds the store opened once, the registered buffers and the
 * request protocol's state; spotrun_save and spotrun_restore hand the
 * buffers to the checkpoint module (ckpt.h: sr_ckpt_save_tensors,
 * sr_ckpt_restore_tensors), so a library checkpoint is one of the job's
 * checkpoints like any other: on LATEST's chain, listed by `spotrun ls`,
 * kept and collected by the same retention and gc.
 *
 * The request protocol (doc/design.md, "Library mode"): under spotrun the
 * environment names a request file, SPOTRUN_CKPT_REQUEST (the line
 * directory mode writes: seq, reason, deadline), and a done marker,
 * SPOTRUN_CKPT_DONE, which the library writes once it has committed the
 * checkpoint that answers a request ("seq=N step=S checkpoint=C"). A save
 * that answers a request takes its deadline; SPOTRUN_EPOCH is the run's
 * fencing epoch, which every commit carries.
 *
 * Nothing here prints: messages go to the caller's callback and stay in
 * ctx->msg for spotrun_getErrorString. Nothing here ends the process
 * either, not even when memory runs out: the checkpoint and store modules
 * allocate with malloc through sr_try_* and return the failure, which the
 * API returns as SPOTRUN_ERROR_MEMORY (doc/design.md, "Out of memory in
 * the job's process"; tests/t09-lib-exports.sh reads the disassembly for
 * any call that could). The allocator hooks cover what the library keeps
 * itself, the modules below it use malloc (BUGS in libspotrun(3)).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"
#include "catalog.h"
#include "latest.h"
#include "manifest.h"
#include "store.h"
#include "util.h"
#include "lib.h"		/* libspotrun.h with its experimental part */
#include "device.h"

#define SPOTRUN_API __attribute__((visibility("default")))

/* spotrun_params as 0.1 laid it out, which programs built then pass: the
 * stable fields keep these offsets (the experimental ones' slots are
 * reserved0 and reserved1 now). */
struct params_0_1 {
	size_t size;
	const char *store, *job;
	void *(*alloc)(void *, size_t);
	void (*free)(void *, void *);
	void *alloc_opaque;
	void (*message)(void *, spotrun_msg_level, const char *);
	void *message_opaque;
	int keep, threads;
	size_t chunk_size, staging_bytes;
	const char *cuda_library;
	int rank, world_size;
};
#define KEEPS_OFFSET(f, g) _Static_assert(offsetof(spotrun_params, f) == \
    offsetof(struct params_0_1, g), "spotrun_params." #f " at its offset of 0.1")
KEEPS_OFFSET(store, store);
KEEPS_OFFSET(job, job);
KEEPS_OFFSET(alloc, alloc);
KEEPS_OFFSET(free, free);
KEEPS_OFFSET(alloc_opaque, alloc_opaque);
KEEPS_OFFSET(message, message);
KEEPS_OFFSET(message_opaque, message_opaque);
KEEPS_OFFSET(keep, keep);
KEEPS_OFFSET(threads, threads);
KEEPS_OFFSET(chunk_size, chunk_size);
KEEPS_OFFSET(reserved0, staging_bytes);
KEEPS_OFFSET(reserved1, cuda_library);
KEEPS_OFFSET(rank, rank);
KEEPS_OFFSET(world_size, world_size);
_Static_assert(sizeof(spotrun_params) == sizeof(struct params_0_1), "spotrun_params of 0.1");

_Static_assert(SPOTRUN_MAX_DIMS == SR_TENSOR_DIMS, "dimensions of the API and the manifest");
_Static_assert((int)SPOTRUN_U64 == (int)SR_DT_U64 && (int)SPOTRUN_BF16 == (int)SR_DT_BF16 &&
    (int)SPOTRUN_F8_E5M2 == (int)SR_DT_F8E5M2 && SR_DT_COUNT == 15,
    "spotrun_dtype numbers are the manifest's");

/* How often spotrun_checkpoint_requested looks at the request file. */
#define REQUEST_POLL 0.02

/* The checkpoint module's lines: what its retention did is news; the
 * rest are warnings (a fallback to an older checkpoint, a LATEST that is
 * not a number), with or without their "warning: ". */
static void
ckpt_log(void *arg, const char *msg)
{
	sr_lib_tell(arg, strncmp(msg, "retention: ", 11) == 0 ? SPOTRUN_MSG_INFO : SPOTRUN_MSG_WARNING,
	    msg);
}

/* ---- the stable API ---- */

SPOTRUN_API unsigned
spotrun_versionNumber(void)
{
	return SPOTRUN_VERSION_NUMBER;
}

SPOTRUN_API const char *
spotrun_getErrorName(spotrun_error code)
{
	static const char *const names[SPOTRUN_ERROR_maxCode] = {
		[SPOTRUN_OK] = "no error",
		[SPOTRUN_ERROR_GENERIC] = "error (generic)",
		[SPOTRUN_ERROR_PARAMETER] = "invalid parameter",
		[SPOTRUN_ERROR_MEMORY] = "out of memory",
		[SPOTRUN_ERROR_NO_STORE] = "no checkpoint store given",
		[SPOTRUN_ERROR_NO_JOB] = "no job name given",
		[SPOTRUN_ERROR_NAME_TAKEN] = "buffer name already registered",
		[SPOTRUN_ERROR_STORE] = "checkpoint store failed",
		[SPOTRUN_ERROR_MISMATCH] = "checkpoint does not match the registered buffers",
		[SPOTRUN_ERROR_CORRUPT] = "no usable checkpoint",
		[SPOTRUN_ERROR_DEADLINE] = "checkpoint deadline missed",
		[SPOTRUN_ERROR_FENCED] = "job taken over by a newer run",
		[SPOTRUN_ERROR_NOT_BUILT] = "not built yet",
		[SPOTRUN_ERROR_NO_DEVICE] = "no usable CUDA device",
	};

	if ((unsigned)code >= SPOTRUN_ERROR_maxCode)
		return "unknown error code";
	return names[code];
}

SPOTRUN_API void
spotrun_params_init(spotrun_params *params)
{
	if (params == NULL)
		return;
	const char *keep = getenv("SPOTRUN_CKPT_KEEP");
	char *end;
	long k;

	memset(params, 0, sizeof *params);
	params->size = sizeof *params;
	params->keep = 2;
	params->rank = params->world_size = -1;	/* $RANK, $WORLD_SIZE */
	/* the job file's keep, under spotrun */
	if (keep != NULL && *keep != '\0') {
		k = strtol(keep, &end, 10);
		if (*end == '\0' && k >= 0 && k <= INT32_MAX)
			params->keep = (int)k;
	}
}

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* A failure of spotrun_create, kept for every later call. */
static void
stick(spotrun_ctx *ctx, spotrun_error code, const char *msg)
{
	ctx->sticky = code;
	strlcpy(ctx->sticky_msg, msg, sizeof ctx->sticky_msg);
	strlcpy(ctx->msg, msg, sizeof ctx->msg);
	sr_lib_tell(ctx, SPOTRUN_MSG_ERROR, msg);
}

/* Say that this process marks its first look at a request (path: the
 * run's SPOTRUN_CKPT_LOOK; NULL: it has none): created empty, not emptied
 * where another rank looked already. Until a rank's first look, a notice
 * finds the job still starting and spotrun stops it at once (doc/spotrun.1,
 * CHECKPOINT PROTOCOL). A marker that cannot be made leaves spotrun unable
 * to tell, and it waits for an answer as ever. */
static void
declare_look(spotrun_ctx *ctx, const spotrun_params *params, const char *path)
{
	int fd;

	if (path == NULL)
		return;
	if ((ctx->look_path = sr_lib_strdup(params, path)) == NULL) {
		stick(ctx, SPOTRUN_ERROR_MEMORY, "spotrun_create: out of memory");
		return;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) != -1)
		(void)close(fd);
}

static void
setup(spotrun_ctx *ctx, const spotrun_params *params)
{
	const char *store = params->store != NULL ? params->store : env("SPOTRUN_STORE");
	const char *job = params->job != NULL ? params->job : env("SPOTRUN_JOB");
	const char *epoch = env("SPOTRUN_EPOCH"), *req, *done, *saves;
	/* spotrun's run says its store's credentials may ask no metadata address */
	const struct sr_store_opts so = { .no_metadata = env("SPOTRUN_STORE_NO_METADATA") != NULL };
	char err[SR_ERRMAX], *end;
	spotrun_error code;

	if (params->reserved0 != 0 || params->reserved1 != NULL) {
		stick(ctx, SPOTRUN_ERROR_PARAMETER, "spotrun_create: params.reserved0 and reserved1 "
		    "must be 0 (0.1's staging_bytes and cuda_library there are the experimental "
		    "spotrun_set_staging_bytes and spotrun_set_cuda_library now)");
		return;
	}
	if (store == NULL) {
		stick(ctx, SPOTRUN_ERROR_NO_STORE, "spotrun_create: no store: set params.store "
		    "(e.g. file:///var/tmp/ckpt) or run under spotrun (SPOTRUN_STORE)");
		return;
	}
	if (job == NULL) {
		stick(ctx, SPOTRUN_ERROR_NO_JOB, "spotrun_create: no job name: set params.job or "
		    "run under spotrun (SPOTRUN_JOB)");
		return;
	}
	if (sr_ckpt_job_check(job, err) == -1) {
		snprintf(ctx->msg, sizeof ctx->msg, "spotrun_create: %s", err);
		stick(ctx, SPOTRUN_ERROR_PARAMETER, ctx->msg);
		return;
	}
	if (epoch != NULL) {
		errno = 0;
		ctx->epoch = strtoull(epoch, &end, 10);
		if (errno != 0 || *end != '\0' || ctx->epoch > SR_EPOCH_MAX) {
			snprintf(ctx->msg, sizeof ctx->msg, "spotrun_create: SPOTRUN_EPOCH=%.40s is "
			    "not an epoch (0 to %llu)", epoch, SR_EPOCH_MAX);
			stick(ctx, SPOTRUN_ERROR_PARAMETER, ctx->msg);
			return;
		}
	}
	if ((code = sr_lib_ranks_setup(ctx, ctx->msg, sizeof ctx->msg)) != SPOTRUN_OK) {
		stick(ctx, code, ctx->msg);
		return;
	}
	ctx->store_url = sr_lib_strdup(params, store);
	ctx->job = sr_lib_strdup(params, job);
	req = env("SPOTRUN_CKPT_REQUEST");
	done = env("SPOTRUN_CKPT_DONE");
	/* Every rank reads the request; rank 0 alone answers it, once the
	 * checkpoint of all is committed. */
	if (req != NULL && (done != NULL || ctx->p.rank > 0)) {
		ctx->req_path = sr_lib_strdup(params, req);
		ctx->done_path = ctx->p.rank == 0 ? sr_lib_strdup(params, done) : NULL;
		if (ctx->p.rank == 0 && (saves = env("SPOTRUN_CKPT_SAVES")) != NULL &&
		    (ctx->saves_path = sr_lib_strdup(params, saves)) == NULL) {
			stick(ctx, SPOTRUN_ERROR_MEMORY, "spotrun_create: out of memory");
			return;
		}
		if (ctx->req_path == NULL || (ctx->p.rank == 0 && ctx->done_path == NULL)) {
			stick(ctx, SPOTRUN_ERROR_MEMORY, "spotrun_create: out of memory");
			return;
		}
		declare_look(ctx, params, env("SPOTRUN_CKPT_LOOK"));
		if (ctx->sticky != SPOTRUN_OK)
			return;
	}
	if (ctx->store_url == NULL || ctx->job == NULL) {
		stick(ctx, SPOTRUN_ERROR_MEMORY, "spotrun_create: out of memory");
		return;
	}
	if (sr_store_open_with(ctx->store_url, &so, &ctx->st, err) != 0) {
		snprintf(ctx->msg, sizeof ctx->msg, "spotrun_create: %s", err);
		stick(ctx, sr_lib_oom_or(SPOTRUN_ERROR_STORE, err), ctx->msg);
	}
}

SPOTRUN_API spotrun_ctx *
spotrun_create(const spotrun_params *params)
{
	spotrun_params p;
	spotrun_ctx *ctx;

	if (params == NULL)
		return NULL;
	/* A caller built against an older header passed a shorter struct:
	 * the fields it lacks keep their defaults. */
	spotrun_params_init(&p);
	memcpy(&p, params, params->size > 0 && params->size < sizeof p ? params->size : sizeof p);
	p.size = sizeof p;
	if ((ctx = sr_lib_alloc(&p, sizeof *ctx)) == NULL)
		return NULL;
	memset(ctx, 0, sizeof *ctx);
	ctx->p = p;
	ctx->p.store = ctx->p.job = NULL;
	setup(ctx, &p);
	return ctx;
}

SPOTRUN_API void
spotrun_free(spotrun_ctx *ctx)
{
	size_t i;

	if (ctx == NULL)
		return;
	sr_async_free(ctx);		/* waits for a save in flight */
	sr_lib_device_free(ctx);
	sr_store_close(ctx->st);
	for (i = 0; i < ctx->nbufs; i++)
		sr_lib_free(&ctx->p, ctx->bufs[i].name);
	sr_lib_free(&ctx->p, ctx->bufs);
	sr_lib_free(&ctx->p, ctx->store_url);
	sr_lib_free(&ctx->p, ctx->job);
	sr_lib_free(&ctx->p, ctx->req_path);
	sr_lib_free(&ctx->p, ctx->done_path);
	sr_lib_free(&ctx->p, ctx->saves_path);
	sr_lib_free(&ctx->p, ctx->look_path);
	sr_lib_free(&ctx->p, ctx->cuda_library);
	sr_lib_free(&ctx->p, ctx);
}

SPOTRUN_API const char *
spotrun_getErrorString(const spotrun_ctx *ctx)
{
	return ctx != NULL ? ctx->msg : "spotrun: no context (spotrun_create returned NULL)";
}

/* ---- registration ---- */

/* Printable ASCII: what a manifest, a message and a terminal all carry
 * unchanged. */
static int
name_ok(const char *name)
{
	size_t i;

	for (i = 0; name[i] != '\0'; i++) {
		if (name[i] < 0x20 || name[i] > 0x7e)
			return 0;
	}
	return i >= 1 && i <= SR_TENSOR_NAME_MAX;
}

/* The start of a registration and the checks every kind of buffer
 * passes; b filled but for host. */
static spotrun_error
check_buf(spotrun_ctx *ctx, const char *name, spotrun_dtype dtype, int ndim,
    const uint64_t *shape, const uint64_t *offsets, const uint64_t *sizes, struct lib_buf *b)
{
	uint64_t elems = 1;
	size_t i, esize;
	spotrun_error rc;
	int d;

	if (ctx == NULL)
		return SPOTRUN_ERROR_PARAMETER;
	if ((rc = sr_lib_begin(ctx)) != SPOTRUN_OK)
		return rc;

	if (name == NULL || !name_ok(name))
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register: a buffer's name is 1 to %d "
		    "printable ASCII characters", SR_TENSOR_NAME_MAX);
	if ((unsigned)dtype >= SR_DT_COUNT)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": dtype %d is not a "
		    "spotrun_dtype", name, (int)dtype);
	if (ndim < 0 || ndim > SR_TENSOR_DIMS)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": %d dimensions (0 to %d)",
		    name, ndim, SR_TENSOR_DIMS);
	if (ndim > 0 && shape == NULL)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": no shape for %d "
		    "dimensions", name, ndim);
	for (i = 0; i < ctx->nbufs; i++) {
		if (strcmp(ctx->bufs[i].name, name) == 0)
			return sr_lib_fail(ctx, SPOTRUN_ERROR_NAME_TAKEN, "register \"%s\": a buffer of "
			    "that name is registered already", name);
	}
	memset(b, 0, sizeof *b);
	b->device = -1;
	b->dtype = dtype;
	b->ndim = ndim;
	for (d = 0; d < ndim; d++) {
		b->shape[d] = shape[d];
		b->offsets[d] = offsets != NULL ? offsets[d] : 0;
		b->sizes[d] = sizes != NULL ? sizes[d] : shape[d] - b->offsets[d];
		if (b->offsets[d] > shape[d] || b->sizes[d] > shape[d] - b->offsets[d])
			return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": dimension %d: "
			    "the slice [%" PRIu64 ", %" PRIu64 " + %" PRIu64 ") is outside the shape's "
			    "%" PRIu64, name, d, b->offsets[d], b->offsets[d], b->sizes[d], shape[d]);
		if (b->sizes[d] != 0 && elems > UINT64_MAX / b->sizes[d])
			return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": the slice has "
			    "more than 2^64 elements", name);
		elems *= b->sizes[d];
	}
	esize = sr_dtype_size((enum sr_dtype)dtype);
	if (elems > SIZE_MAX / esize)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": the slice does not fit "
		    "in memory", name);
	b->bytes = elems * esize;
	return SPOTRUN_OK;
}

static spotrun_error add_buf(spotrun_ctx *ctx, struct lib_buf *b, const char *name);

SPOTRUN_API spotrun_error
spotrun_register(spotrun_ctx *ctx, const char *name, spotrun_dtype dtype, int ndim,
    const uint64_t *shape, const uint64_t *offsets, const uint64_t *sizes, void *host)
{
	struct lib_buf b;
	spotrun_error rc;

	if ((rc = check_buf(ctx, name, dtype, ndim, shape, offsets, sizes, &b)) != SPOTRUN_OK)
		return rc;
	if (host == NULL && b.bytes > 0)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": no buffer (NULL) for "
		    "%" PRIu64 " bytes", name, b.bytes);
	b.host = host;
	return add_buf(ctx, &b, name);
}

/* Append a checked registration. */
static spotrun_error
add_buf(spotrun_ctx *ctx, struct lib_buf *b, const char *name)
{
	struct lib_buf *nb;

	if (ctx->nbufs == ctx->bufs_cap) {
		size_t cap = ctx->bufs_cap ? ctx->bufs_cap * 2 : 16;
		if ((nb = sr_lib_alloc(&ctx->p, cap * sizeof *nb)) == NULL)
			return sr_lib_fail(ctx, SPOTRUN_ERROR_MEMORY, "register \"%s\": out of memory", name);
		if (ctx->nbufs > 0)
			memcpy(nb, ctx->bufs, ctx->nbufs * sizeof *nb);
		sr_lib_free(&ctx->p, ctx->bufs);
		ctx->bufs = nb;
		ctx->bufs_cap = cap;
	}
	if ((b->name = sr_lib_strdup(&ctx->p, name)) == NULL)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_MEMORY, "register \"%s\": out of memory", name);
	ctx->bufs[ctx->nbufs++] = *b;
	return SPOTRUN_OK;
}

/* ---- the request protocol ---- */

/* The first look at a request (spotrun_checkpoint_requested, or a save
 * that may answer one): the job is past its start. Written before the
 * request file is read, so that spotrun never takes a job answering for
 * one still starting; a marker that cannot be written is removed, and
 * spotrun then cannot tell and waits for an answer as ever. */
static void
mark_look(spotrun_ctx *ctx)
{
	int fd;

	if (ctx->look_path == NULL || ctx->looked)
		return;
	ctx->looked = 1;
	if ((fd = open(ctx->look_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) == -1 ||
	    write(fd, "looked\n", 7) != 7)
		(void)unlink(ctx->look_path);
	if (fd != -1)
		(void)close(fd);
}

/* Read the request file: 1 pending (seq and deadline set), 0 none. A
 * file that does not parse is no request (the supervisor writes it
 * atomically, so a half line is never seen). */
static int
read_request(spotrun_ctx *ctx)
{
	unsigned long long seq;
	char line[256], reason[16];
	double deadline;
	FILE *fp;
	int ok;

	if ((fp = fopen(ctx->req_path, "re")) == NULL)
		return 0;
	ok = fgets(line, sizeof line, fp) != NULL &&
	    sscanf(line, "seq=%llu reason=%15s deadline=%lf", &seq, reason, &deadline) == 3;
	fclose(fp);
	if (!ok || seq <= ctx->answered_seq)
		return 0;
	ctx->req_seq = seq;
	ctx->req_deadline = deadline;
	strlcpy(ctx->req_reason, reason, sizeof ctx->req_reason);
	return 1;
}

SPOTRUN_API int
spotrun_checkpoint_requested(spotrun_ctx *ctx)
{
	struct stat sb;
	double now;

	if (ctx == NULL || ctx->sticky != SPOTRUN_OK || ctx->req_path == NULL)
		return 0;
	now = sr_mono();
	if (ctx->req_checked > 0 && now - ctx->req_checked < REQUEST_POLL)
		return ctx->req_pending;
	ctx->req_checked = now;
	mark_look(ctx);
	sr_async_reap(ctx);		/* an async save's answer, if it landed */
	ctx->req_pending = stat(ctx->req_path, &sb) == 0 && read_request(ctx) &&
	    !sr_async_take_request(ctx);
	return ctx->req_pending;
}

/* Tell the supervisor which checkpoint answers request seq, with the
 * commit's figures for its timeline: written to a temporary file renamed
 * into place, so it is read whole or not at all. */
static void
answer(spotrun_ctx *ctx, long long step, const struct sr_ckpt_stats *cs)
{
	ctx->answered_seq = ctx->req_seq;
	ctx->req_pending = 0;
	if (ctx->done_path == NULL)	/* a rank above 0: rank 0 answers */
		return;
	sr_async_answer(ctx, ctx->req_seq, step, cs, cs->seconds, ctx->last);	/* blocked throughout */
}

/* ---- save and restore ---- */

static void
opts_of(const spotrun_ctx *ctx, struct sr_ckpt_opts *o)
{
	memset(o, 0, sizeof *o);
	o->job = ctx->job;
	o->chunk_size = ctx->p.chunk_size;
	o->threads = ctx->p.threads;
	o->keep = ctx->p.keep;
	o->log = ckpt_log;
	o->log_arg = (void *)ctx;
	o->epoch = ctx->epoch;
	o->world_size = 1;
}

/* The buffers as the checkpoint module takes them (malloc'd; NULL with
 * err on out-of-memory). */
static struct sr_ckpt_tensor *
tensors_of(const spotrun_ctx *ctx, char *err)
{
	struct sr_ckpt_tensor *t = sr_try_calloc(ctx->nbufs + 1, sizeof *t, err);
	size_t i;

	if (t == NULL)
		return NULL;
	for (i = 0; i < ctx->nbufs; i++) {
		const struct lib_buf *b = &ctx->bufs[i];
		t[i].name = b->name;
		t[i].dtype = (int)b->dtype;
		t[i].ndim = b->ndim;
		t[i].shape = b->shape;
		t[i].offsets = b->offsets;
		t[i].sizes = b->sizes;
		t[i].data = b->host;
		t[i].bytes = b->bytes;
	}
	return t;
}

/* Whether a device buffer is registered: its save and restore go through
 * lib/device.c. */
static int
has_device(const spotrun_ctx *ctx)
{
	size_t i;

	for (i = 0; i < ctx->nbufs; i++)
		if (ctx->bufs[i].device >= 0)
			return 1;
	return 0;
}

/* A code for what the checkpoint module (or lib/device.c) returned, with
 * the message it wrote: an out-of-memory anywhere below is MEMORY. */
static spotrun_error
code_of(int rc, const char *err)
{
	spotrun_error code;

	switch (rc) {
	case 0: return SPOTRUN_OK;
	case SR_LIB_DEVICE_FAILED: code = SPOTRUN_ERROR_NO_DEVICE; break;
	case SR_CKPT_LATE: code = SPOTRUN_ERROR_DEADLINE; break;
	case SR_CKPT_FENCED: code = SPOTRUN_ERROR_FENCED; break;
	case SR_CKPT_MISMATCH: code = SPOTRUN_ERROR_MISMATCH; break;
	case SR_CKPT_UNUSABLE: code = SPOTRUN_ERROR_CORRUPT; break;
	case -1: code = SPOTRUN_ERROR_STORE; break;
	default: code = SPOTRUN_ERROR_GENERIC; break;
	}
	return sr_lib_oom_or(code, err);
}

/* What both kinds of save do first: check the call (verb names it), wait
 * for an async save in flight, and take the newest request, read now (its
 * deadline is the save's): the options in o, *answering whether it is. */
static spotrun_error
save_begin(spotrun_ctx *ctx, const char *verb, long long step, struct sr_ckpt_opts *o,
    int *answering)
{
	spotrun_error rc;

	if (ctx == NULL)
		return SPOTRUN_ERROR_PARAMETER;
	if ((rc = sr_lib_begin(ctx)) != SPOTRUN_OK)
		return rc;
	if (step < 0)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "%s: step %lld is negative", verb, step);
	if (ctx->nbufs == 0)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "%s: no buffer is registered", verb);
	sr_async_settle(ctx);
	mark_look(ctx);
	*answering = ctx->req_path != NULL && read_request(ctx);
	opts_of(ctx, o);
	if (*answering)
		o->deadline = ctx->req_deadline;
	return SPOTRUN_OK;
}

SPOTRUN_API spotrun_error
spotrun_save(spotrun_ctx *ctx, long long step)
{
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats cs;
	struct sr_ckpt_tensor *t;
	char err[SR_ERRMAX];
	int rc, answering;

	if ((rc = save_begin(ctx, "save", step, &o, &answering)) != SPOTRUN_OK)
		return rc;
	if ((t = tensors_of(ctx, err)) == NULL)
		rc = -1;
	else if (has_device(ctx))
		rc = sr_lib_device_save(ctx, &o, t, step, &cs, err);
	else
		rc = sr_lib_ranks_save(ctx, &o, NULL, t, ctx->nbufs, step, &cs, err);
	free(t);
	/* Past its deadline the supervisor has given the request up: it is
	 * not asked again. */
	if (answering && rc == SR_CKPT_LATE) {
		ctx->answered_seq = ctx->req_seq;
		ctx->req_pending = 0;
	}
	if (rc != 0) {
		sr_lib_report_save(ctx, answering ? ctx->req_seq : 0, step, NULL, 0, err);
		return sr_lib_fail(ctx, code_of(rc, err), "%s", err);
	}
	sr_async_tell_commit(ctx, step, ctx->nbufs, &cs, -1);
	if (answering)
		answer(ctx, step, &cs);
	else
		sr_lib_report_save(ctx, 0, step, &cs, cs.seconds, NULL);	/* blocked throughout */
	return SPOTRUN_OK;
}

SPOTRUN_API spotrun_error
spotrun_restore(spotrun_ctx *ctx, long long *step)
{
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats cs;
	struct sr_ckpt_tensor *t;
	char err[SR_ERRMAX], line[SR_ERRMAX];
	const char *resume;
	int rc;

	if (ctx == NULL)
		return SPOTRUN_ERROR_PARAMETER;
	if ((rc = sr_lib_begin(ctx)) != SPOTRUN_OK)
		return rc;
	if (step == NULL)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "restore: step is NULL");
	sr_async_settle(ctx);		/* the save in flight lands first */
	*step = -1;
	if (ctx->nbufs == 0)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "restore: no buffer is registered");
	/* Under spotrun's library mode the supervisor said whether to resume:
	 * an empty SPOTRUN_RESUME_STEP is a fresh start (no checkpoint yet,
	 * or the job finished in an earlier run and starts afresh). */
	if (ctx->req_path != NULL && (resume = getenv("SPOTRUN_RESUME_STEP")) != NULL &&
	    *resume == '\0') {
		sr_lib_tell(ctx, SPOTRUN_MSG_INFO, "restore: spotrun starts the job afresh");
		return SPOTRUN_OK;
	}
	opts_of(ctx, &o);
	if ((t = tensors_of(ctx, err)) == NULL)
		rc = -1;
	else if (has_device(ctx))
		rc = sr_lib_device_restore(ctx, t, &o, &cs, err);
	else
		rc = sr_ckpt_restore_tensors(ctx->st, &o, t, ctx->nbufs, &cs, err);
	free(t);
	if (rc == SR_CKPT_NONE)
		return SPOTRUN_OK;
	if (rc != 0)
		return sr_lib_fail(ctx, code_of(rc, err), "%s", err);
	*step = cs.step;
	snprintf(line, sizeof line, "checkpoint %" PRIu64 " of %s restored: step %lld (%" PRIu64
	    " chunk%s read, %" PRIu64 " bytes)", cs.seq, ctx->job, cs.step, cs.read_chunks,
	    cs.read_chunks == 1 ? "" : "s", cs.read_bytes);
	sr_lib_tell(ctx, SPOTRUN_MSG_INFO, line);
	return SPOTRUN_OK;
}

/* ---- experimental ---- */

/* The settings of the experimental tier are the context's, not fields of
 * spotrun_params, so that they can change or go with their functions. */
SPOTRUN_API spotrun_error
spotrun_set_staging_bytes(spotrun_ctx *ctx, size_t bytes)
{
	spotrun_error rc;

	if (ctx == NULL)
		return SPOTRUN_ERROR_PARAMETER;
	if ((rc = sr_lib_begin(ctx)) != SPOTRUN_OK)
		return rc;
	ctx->staging_bytes = bytes;	/* read by the next save_async, on this thread */
	return SPOTRUN_OK;
}

SPOTRUN_API spotrun_error
spotrun_set_last(spotrun_ctx *ctx, int last)
{
	spotrun_error rc;

	if (ctx == NULL || (last != 0 && last != 1))
		return SPOTRUN_ERROR_PARAMETER;
	if ((rc = sr_lib_begin(ctx)) != SPOTRUN_OK)
		return rc;
	ctx->last = last;	/* read when a save begins, on this thread */
	return SPOTRUN_OK;
}

SPOTRUN_API spotrun_error
spotrun_set_cuda_library(spotrun_ctx *ctx, const char *path)
{
	const char *chosen;
	spotrun_error rc;
	char *copy = NULL;

	if (ctx == NULL)
		return SPOTRUN_ERROR_PARAMETER;
	if ((rc = sr_lib_begin(ctx)) != SPOTRUN_OK)
		return rc;
	if ((chosen = sr_lib_device_library(ctx)) != NULL)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "set_cuda_library: spotrun_register_device "
		    "has opened the CUDA driver %s already (or tried to): set the library before the "
		    "first device buffer", chosen);
	if (path != NULL && (copy = sr_lib_strdup(&ctx->p, path)) == NULL)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_MEMORY, "set_cuda_library: out of memory");
	sr_lib_free(&ctx->p, ctx->cuda_library);
	ctx->cuda_library = copy;
	return SPOTRUN_OK;
}

SPOTRUN_API spotrun_error
spotrun_register_device(spotrun_ctx *ctx, const char *name, spotrun_dtype dtype, int ndim,
    const uint64_t *shape, const uint64_t *offsets, const uint64_t *sizes, void *device_ptr,
    int device)
{
	struct lib_buf b;
	spotrun_error rc;

	if ((rc = check_buf(ctx, name, dtype, ndim, shape, offsets, sizes, &b)) != SPOTRUN_OK ||
	    (rc = sr_lib_device_register(ctx, &b, name, device_ptr, device)) != SPOTRUN_OK)
		return rc;
	return add_buf(ctx, &b, name);
}

/* The save in the background (lib/async.c): the call returns once the
 * buffers are in staging. */
SPOTRUN_API spotrun_error
spotrun_save_async(spotrun_ctx *ctx, long long step)
{
	double t0 = sr_mono();
	struct sr_ckpt_opts o;
	int answering;
	spotrun_error rc;

	if ((rc = save_begin(ctx, "save_async", step, &o, &answering)) != SPOTRUN_OK)
		return rc;
	return sr_async_start(ctx, step, &o, answering, t0);
}

/* The first save_async's staging, allocated and faulted in ahead of it
 * (lib/async.c). */
SPOTRUN_API spotrun_error
spotrun_prepare_async(spotrun_ctx *ctx)
{
	struct sr_ckpt_opts o;
	spotrun_error rc;

	if (ctx == NULL)
		return SPOTRUN_ERROR_PARAMETER;
	if ((rc = sr_lib_begin(ctx)) != SPOTRUN_OK)
		return rc;
	opts_of(ctx, &o);
	return sr_async_prepare(ctx, &o);
}

SPOTRUN_API spotrun_error
spotrun_wait(spotrun_ctx *ctx)
{
	char err[SR_ERRMAX];
	spotrun_error e;
	int rc;

	if (ctx == NULL)
		return SPOTRUN_ERROR_PARAMETER;
	if ((e = sr_lib_begin(ctx)) != SPOTRUN_OK)
		return e;
	if (!sr_async_collect(ctx, &rc, err) || rc == 0)
		return SPOTRUN_OK;
	return sr_lib_fail(ctx, code_of(rc, err), "%s", err);
}
