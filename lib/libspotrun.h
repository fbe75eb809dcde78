/*
 * libspotrun.h: libspotrun, the job's side of spotrun's library mode: a C
 * or CUDA training program registers the buffers that hold its state, and
 * the library saves them to spotrun's checkpoint store at the program's
 * safe points and brings them back when it starts again on another machine
 * (libspotrun(3); the checkpoint format: spotrun's doc/format.md).
 *
 *	spotrun_params p;
 *	spotrun_ctx *ctx;
 *	long long step;
 *
 *	spotrun_params_init(&p);		// store and job: from spotrun's environment
 *	ctx = spotrun_create(&p);
 *	spotrun_register(ctx, "w", SPOTRUN_F32, 2, shape, NULL, NULL, w);
 *	if (spotrun_restore(ctx, &step) == SPOTRUN_OK && step >= 0)
 *		start = step + 1;		// w holds what step `step` saved
 *	for (s = start; s < n; s++) {
 *		train(s);
 *		if (spotrun_checkpoint_requested(ctx))
 *			spotrun_save(ctx, s);
 *	}
 *	spotrun_free(ctx);
 *
 * Every function that can fail returns a spotrun_error: SPOTRUN_OK (0) or
 * a positive code that spotrun_getErrorName() names; the detail (which
 * buffer, which checkpoint, what the store said) goes to the message
 * callback and stays readable with spotrun_getErrorString(). The library
 * never prints, never calls exit or abort (not for a bad argument, not
 * when memory runs out: SPOTRUN_ERROR_MEMORY; BUGS in libspotrun(3) names
 * the one assertion of jansson's in its reach), and never keeps a pointer
 * to a buffer it was not given.
 *
 * Threads:
 * - One thread at a time calls a context's functions (any thread: the
 *   program serialises its calls). spotrun_versionNumber and
 *   spotrun_getErrorName may be called from any thread at any time.
 * - The registered buffers must not change while spotrun_save or
 *   spotrun_restore runs (device buffers: synchronise the streams that
 *   write them first); an async save's only while spotrun_save_async runs.
 * - While an async save is in flight (spotrun_save_async returned, its
 *   spotrun_wait not yet): the buffers may change; spotrun_register,
 *   spotrun_checkpoint_requested, spotrun_getErrorString and the
 *   experimental setters may be called (a buffer registered then is the
 *   next save's); spotrun_save, spotrun_save_async, spotrun_restore and
 *   spotrun_free first wait for it (training waits with them).
 * - The save's thread calls the message callback too (the commit,
 *   warnings), maybe while the caller's thread does: a callback that
 *   shares state with other code must be thread-safe. It also calls the
 *   allocator hooks for an async save of device buffers, so hooks given
 *   with device buffers must be thread-safe.
 *
 * Two tiers, as zstd's: the stable part comes first, its names, codes and
 * the layout of spotrun_params only grow, exported at version node
 * SPOTRUN_0.1 (lib/libspotrun.map). What is fenced by SPOTRUN_EXPERIMENTAL
 * may change or go between versions, and is exported at a node of its own,
 * SPOTRUN_EXPERIMENTAL_0, renamed when it changes (so that a program built
 * against another experimental tier fails to load rather than calling a
 * function whose contract changed); a program that uses it defines
 * SPOTRUN_EXPERIMENTAL before including this header, and links the
 * version it built with. Its settings are setters on the context, never
 * fields of spotrun_params, so that they can go without a trace.
 *
 * This header and spotrun.h (the header-only helper of directory mode) are
 * two ways for a job to take part; a job uses one of them.
 */
#ifndef SPOTRUN_LIB_H
#define SPOTRUN_LIB_H

#ifdef SPOTRUN_H
#error "libspotrun.h (library mode) and spotrun.h (directory mode) are alternatives: include one"
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPOTRUN_VERSION_MAJOR 0
#define SPOTRUN_VERSION_MINOR 1
#define SPOTRUN_VERSION_RELEASE 0
#define SPOTRUN_VERSION_NUMBER \
	(SPOTRUN_VERSION_MAJOR * 10000 + SPOTRUN_VERSION_MINOR * 100 + SPOTRUN_VERSION_RELEASE)

/* The version of the library linked at run time (SPOTRUN_VERSION_NUMBER's
 * form), which may be newer than the header's. */
unsigned spotrun_versionNumber(void);

/* Numbered errors: a code keeps its number and meaning for ever. */
typedef enum {
	SPOTRUN_OK = 0,
	SPOTRUN_ERROR_GENERIC = 1,		/* none of those below (a bug: say so) */
	SPOTRUN_ERROR_PARAMETER = 2,		/* an argument is invalid: which, in the message */
	SPOTRUN_ERROR_MEMORY = 3,		/* the allocator returned NULL */
	SPOTRUN_ERROR_NO_STORE = 4,		/* no store URL: not under spotrun, no params.store */
	SPOTRUN_ERROR_NO_JOB = 5,		/* no job name: not under spotrun, no params.job */
	SPOTRUN_ERROR_NAME_TAKEN = 6,		/* a buffer of that name is registered already */
	SPOTRUN_ERROR_STORE = 7,		/* the store failed (I/O, network, permissions) */
	SPOTRUN_ERROR_MISMATCH = 8,		/* the checkpoint holds other tensors than those
						 * registered (a name, type, shape or slice) */
	SPOTRUN_ERROR_CORRUPT = 9,		/* every checkpoint failed its checks */
	SPOTRUN_ERROR_DEADLINE = 10,		/* the save missed its deadline: nothing committed */
	SPOTRUN_ERROR_FENCED = 11,		/* a newer run holds the job: stop */
	SPOTRUN_ERROR_NOT_BUILT = 12,		/* a part of the API that is not built yet */
	SPOTRUN_ERROR_NO_DEVICE = 13,		/* no CUDA driver or device for a device
						 * buffer, or a CUDA call failed: which, in
						 * the message */
	SPOTRUN_ERROR_maxCode = 14		/* never returned: codes are below it */
} spotrun_error;

/* "no error", "invalid parameter", ...: a constant string for every code,
 * "unknown error code" for a number that is none. */
const char *spotrun_getErrorName(spotrun_error code);

/* Element types. The numbers are part of the format: they never change. */
typedef enum {
	SPOTRUN_BYTES = 0,			/* raw bytes, no element structure */
	SPOTRUN_F32 = 1,
	SPOTRUN_F64 = 2,
	SPOTRUN_F16 = 3,
	SPOTRUN_BF16 = 4,
	SPOTRUN_F8_E4M3 = 5,
	SPOTRUN_F8_E5M2 = 6,
	SPOTRUN_I8 = 7,
	SPOTRUN_I16 = 8,
	SPOTRUN_I32 = 9,
	SPOTRUN_I64 = 10,
	SPOTRUN_U8 = 11,
	SPOTRUN_U16 = 12,
	SPOTRUN_U32 = 13,
	SPOTRUN_U64 = 14
} spotrun_dtype;

/* Dimensions of a tensor at most. */
#define SPOTRUN_MAX_DIMS 8

/* What the message callback is told. */
typedef enum {
	SPOTRUN_MSG_ERROR = 0,			/* why a call failed (then its code is returned) */
	SPOTRUN_MSG_WARNING = 1,		/* a fallback to an older checkpoint, and the like */
	SPOTRUN_MSG_INFO = 2			/* a checkpoint committed or restored */
} spotrun_msg_level;

typedef struct spotrun_ctx_s spotrun_ctx;

/* Settings of a context. Fill with spotrun_params_init, then change
 * fields; from 0.1 on a field keeps its offset and meaning and new ones
 * are only appended, `size` telling the library which the caller has.
 * Strings are copied by spotrun_create. */
typedef struct {
	size_t size;				/* sizeof(spotrun_params), set by init */
	const char *store;			/* store URL (file://, s3://, gs://, az://);
						 * NULL: $SPOTRUN_STORE */
	const char *job;			/* job name; NULL: $SPOTRUN_JOB */
	/* Memory the library allocates for itself (its context, its list of
	 * buffers, its messages); both NULL: malloc and free. */
	void *(*alloc)(void *opaque, size_t size);
	void (*free)(void *opaque, void *ptr);
	void *alloc_opaque;
	/* Where messages go (a line without newline, valid during the call);
	 * NULL: nowhere, the last error is still in spotrun_getErrorString. */
	void (*message)(void *opaque, spotrun_msg_level level, const char *text);
	void *message_opaque;
	int keep;				/* checkpoints kept (0: all) */
	int threads;				/* compression threads (0: all CPUs) */
	size_t chunk_size;			/* bytes per chunk (0: 16 MiB) */
	/* Reserved, 0 (spotrun_create refuses another value): 0.1 held the
	 * experimental staging_bytes and cuda_library here, now the setters
	 * spotrun_set_staging_bytes and spotrun_set_cuda_library; the slots
	 * keep the offsets of the fields after them. */
	size_t reserved0;
	const void *reserved1;
	/* A job of several ranks saving one checkpoint (spotrun_save): this
	 * process's rank, 0 to world_size - 1, and their number. -1 (the
	 * default): from $RANK and $WORLD_SIZE (spotrun's `launch = ranks`
	 * and torchrun set them), 0 and 1 when they are not set. */
	int rank;
	int world_size;
} spotrun_params;

/* Defaults: everything from spotrun's environment, keep 2. */
void spotrun_params_init(spotrun_params *params);

/* A context: the store opened, no buffer registered. NULL when params is
 * NULL or its allocator failed; any other failure (no store, no job, a
 * store that does not open) is kept in the context and returned by every
 * later call, so that the one check needed is the first call's code. */
spotrun_ctx *spotrun_create(const spotrun_params *params);
/* Close the store and free the context (NULL: nothing). The buffers are
 * the caller's. */
void spotrun_free(spotrun_ctx *ctx);

/* The message of the last failure of a call on ctx ("" after success):
 * what the message callback was told, valid until the next call. */
const char *spotrun_getErrorString(const spotrun_ctx *ctx);

/* Register a host buffer: this process's slice of tensor `name` (1 to 255
 * bytes, unique in ctx), of type dtype and global shape[ndim] (ndim 0 to
 * SPOTRUN_MAX_DIMS; 0: a scalar). The slice is the box [offsets[d],
 * offsets[d] + sizes[d]) of each dimension, stored row-major and
 * contiguous at host (the product of sizes times the element's size, in
 * bytes); offsets NULL: all 0; sizes NULL: the whole shape. The buffer is
 * read by spotrun_save and written by spotrun_restore, and must stay
 * valid until ctx is freed. */
spotrun_error spotrun_register(spotrun_ctx *ctx, const char *name, spotrun_dtype dtype,
    int ndim, const uint64_t *shape, const uint64_t *offsets, const uint64_t *sizes, void *host);

/* Save every registered buffer as the checkpoint of this step (>= 0) and
 * commit it: when it returns SPOTRUN_OK the checkpoint is durable in the
 * store and the newest of the job. Training waits for it (the buffers
 * must not change until it returns). With world_size > 1 it is
 * collective: every rank calls it with the same step, and the one
 * checkpoint of every rank's buffers is committed when it returns
 * SPOTRUN_OK on any rank; a buffer registered with its whole box (offsets
 * 0, sizes the shape) on every rank is replicated, saved once, each rank
 * uploading a share of it. */
spotrun_error spotrun_save(spotrun_ctx *ctx, long long step);

/* Fill every registered buffer from the newest usable checkpoint of the
 * job: SPOTRUN_OK with *step the step it saved, or -1 (and the buffers
 * untouched) when the job has none yet. Each buffer's box is read from
 * the pieces saved, whatever the number of ranks that saved them and how
 * they were split (resharding). A checkpoint whose data fails its
 * checks falls back to the one before (a warning); after an error the
 * buffers' contents are undefined. */
spotrun_error spotrun_restore(spotrun_ctx *ctx, long long *step);

/* 1 when spotrun asks for a checkpoint (periodic, or a preemption
 * notice: then by a deadline), else 0. Cheap enough to call at every
 * step: a clock read, and one stat(2) at most every 20 ms. Outside
 * spotrun's library mode always 0: the program saves when it chooses. */
int spotrun_checkpoint_requested(spotrun_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* SPOTRUN_LIB_H */

/* ---- experimental: may change or go between versions ----
 * Guarded apart, as zstd's ZSTD_STATIC_LINKING_ONLY part: a file that
 * included this header without SPOTRUN_EXPERIMENTAL can include it again
 * with it. */
#if defined(SPOTRUN_EXPERIMENTAL) && !defined(SPOTRUN_LIB_H_EXPERIMENTAL)
#define SPOTRUN_LIB_H_EXPERIMENTAL

#ifdef __cplusplus
extern "C" {
#endif

/* The staging memory's budget of the next spotrun_save_async, in bytes
 * (0, the default: the registered state's size, up to 1 GiB). A snapshot
 * larger than it is staged in two halves of whole chunks; a budget below
 * two chunks fails that save with SPOTRUN_ERROR_PARAMETER. Staging kept
 * from an earlier save above a lowered budget is freed by the next one.
 * Callable at any time, a save in flight included (it keeps its own). */
spotrun_error spotrun_set_staging_bytes(spotrun_ctx *ctx, size_t bytes);

/* The CUDA driver library that the first spotrun_register_device loads
 * (copied; NULL: $SPOTRUN_CUDA_LIBRARY, else "libcuda.so.1"). After the
 * first device buffer is registered the driver is loaded, and another
 * library is SPOTRUN_ERROR_PARAMETER. */
spotrun_error spotrun_set_cuda_library(spotrun_ctx *ctx, const char *path);

/* Register a buffer in GPU memory as spotrun_register does a host one:
 * device_ptr is a device pointer (a CUdeviceptr, cast) of CUDA device
 * `device` (an ordinal), holding the slice's bytes. The first one loads
 * the CUDA driver (spotrun_set_cuda_library); without it, or without that
 * device, SPOTRUN_ERROR_NO_DEVICE, naming the library and why; a host pointer or
 * memory of another device: SPOTRUN_ERROR_PARAMETER. spotrun_save and
 * spotrun_save_async copy the buffer off the GPU through pinned host
 * memory, only the chunks that changed since this context's last
 * checkpoint (of a rank's share, for a replicated buffer of several
 * ranks); spotrun_restore fills it through two chunks of pinned memory and
 * waits for the copies before it returns. The buffer must not change
 * while either runs (synchronise the streams that write it first). */
spotrun_error spotrun_register_device(spotrun_ctx *ctx, const char *name, spotrun_dtype dtype,
    int ndim, const uint64_t *shape, const uint64_t *offsets, const uint64_t *sizes,
    void *device_ptr, int device);

/* Save as spotrun_save does, in the background: returns once every
 * registered buffer is copied into the library's staging memory (its
 * budget: spotrun_set_staging_bytes), and from then on the buffers may
 * change; the hashing, compression, upload and commit run on a thread of the
 * context's own. A snapshot larger than the budget is staged in two
 * halves, the call returning once its last part is copied (training
 * waits longer, while the first parts are uploaded). SPOTRUN_OK: the
 * snapshot is taken; the save's own result is spotrun_wait's. With
 * world_size > 1 it is collective as spotrun_save is: every rank's
 * spotrun_wait returns SPOTRUN_OK once the checkpoint of all is
 * committed. One save is in flight at a time: a second one, spotrun_save,
 * spotrun_restore and spotrun_free first wait for it (the thread rules
 * above say what else may run meanwhile). */
spotrun_error spotrun_save_async(spotrun_ctx *ctx, long long step);

/* Allocate the staging memory that spotrun_save_async needs for the
 * buffers registered now (within spotrun_set_staging_bytes's budget; a
 * device buffer counted whole) and fault its pages in, so that the first
 * spotrun_save_async blocks only for its copy, as the later ones do:
 * without it, the first one does this inside the call, which made it
 * block as long as a blocking save (doc/benchmarks.md). Optional; call it
 * once the buffers are registered, before training. Staging kept from an
 * earlier save, or held by a save in flight, is left as it is. */
spotrun_error spotrun_prepare_async(spotrun_ctx *ctx);

/* Say whether the checkpoints the job saves from now on, in answer to
 * spotrun's requests, are its last (1) or not (0, the default): its final
 * step's state, after which it only ends (writes its results, exits).
 * Once such a save commits, spotrun asks for no other, and a preemption
 * notice lets the job end on its own until the machine goes away, rather
 * than stopping it, so that its end does not run again on the next
 * machine (spotrun(1), CHECKPOINT PROTOCOL: "last"). Taken when a save
 * begins (an async save keeps what it was). SPOTRUN_ERROR_PARAMETER for
 * another value. With world_size > 1, rank 0's counts: it answers for
 * all. */
spotrun_error spotrun_set_last(spotrun_ctx *ctx, int last);

/* Wait until the save in flight is committed or failed, and return its
 * result (its message in spotrun_getErrorString); SPOTRUN_OK when none
 * is in flight. */
spotrun_error spotrun_wait(spotrun_ctx *ctx);

/* Report n metrics of step (names[i] = values[i]) to spotrun: one line
 * "step=120 loss=0.43 acc=0.87" appended with one write(2) to the file
 * $SPOTRUN_METRICS names, which spotrun keeps with the job in its store
 * (rank 0's; the other ranks' go to /dev/null; spotrun(1), METRICS). A
 * name starts with a letter or _ and holds letters, digits and _.-/ (at
 * most 64 bytes, not "step", each once); a value is a finite number; n
 * from 1 to 32; step from 0 to 999999999999999; the line at most 1024
 * bytes: else SPOTRUN_ERROR_PARAMETER, writing nothing. SPOTRUN_OK
 * otherwise, also outside spotrun (no SPOTRUN_METRICS: nothing written)
 * and when the file cannot be written (told as a warning: metrics never
 * stop training). Needs no store: a context whose spotrun_create failed
 * reports all the same. Several calls for one step merge. */
spotrun_error spotrun_report(spotrun_ctx *ctx, long long step, int n, const char *const *names,
    const double *values);

#ifdef __cplusplus
}
#endif

#endif /* SPOTRUN_EXPERIMENTAL */
