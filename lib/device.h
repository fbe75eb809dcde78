/*
 * device.h: libspotrun's device buffers (lib/device.c): buffers in CUDA
 * device memory, registered with spotrun_register_device, saved and
 * restored through pinned host staging with the driver loaded at run time
 * (kernels/cudadrv.h). spotrun.c calls these; they call nothing of
 * spotrun.c.
 */
#ifndef SR_LIB_DEVICE_H
#define SR_LIB_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "lib.h"

/* What sr_lib_device_save and _restore return, besides the checkpoint
 * module's codes, when the device failed (a CUDA call, the staging
 * memory): SPOTRUN_ERROR_NO_DEVICE. */
#define SR_LIB_DEVICE_FAILED (-100)

/* Check and complete a device registration of b (check_buf's): open
 * device `device` of the driver (spotrun_set_cuda_library's, else
 * $SPOTRUN_CUDA_LIBRARY, else libcuda.so.1) if this context has not yet,
 * and check that ptr is memory of that device holding b->bytes. SPOTRUN_OK
 * with b->device and b->dptr set, or the error (the message in ctx). */
spotrun_error sr_lib_device_register(spotrun_ctx *ctx, struct lib_buf *b, const char *name,
    void *ptr, int device);

/* The CUDA driver library the context's first device registration chose
 * (whether it opened or not), NULL before one: from then on it stays. */
const char *sr_lib_device_library(const spotrun_ctx *ctx);

/* spotrun_save and spotrun_restore of a context with device buffers (host
 * ones too), t[] being ctx->bufs as the checkpoint module takes them (a
 * device buffer's data NULL): sr_ckpt_save_tensors' and
 * sr_ckpt_restore_tensors' contracts, or SR_LIB_DEVICE_FAILED with err.
 * Restore uses t[i].data of device buffers for its pinned memory, and
 * leaves them NULL. */
int sr_lib_device_save(spotrun_ctx *ctx, const struct sr_ckpt_opts *o,
    const struct sr_ckpt_tensor *t, long long step, struct sr_ckpt_stats *stats, char *err);
int sr_lib_device_restore(spotrun_ctx *ctx, struct sr_ckpt_tensor *t,
    const struct sr_ckpt_opts *o, struct sr_ckpt_stats *stats, char *err);

/* Copy bytes [off, off + len) of device buffer b into host memory dst
 * (pinned or not) and wait for them: the copy into an async save's staging
 * of a device buffer, as memcpy is a host buffer's (lib/staging.c's
 * sr_staging_copy). 0, or -1 with err naming the CUDA call. */
int sr_lib_device_copy(const struct lib_buf *b, uint64_t off, void *dst, size_t len, char *err);
/* Staging memory of n bytes for an async save (sr_staging_alloc): pinned
 * when the context has a GPU (one such allocation at a time), else, or if
 * pinning fails, from the allocator hooks. NULL when out of memory. */
void *sr_lib_device_pin(const spotrun_ctx *ctx, size_t n);
/* Free mem if sr_lib_device_pin pinned it: 1; else 0 (the caller frees
 * it with the hooks). */
int sr_lib_device_unpin(const spotrun_ctx *ctx, void *mem);

/* The chunk sums of an async save's device buffers (lib/async.c,
 * lib/staging.c), as the blocking save uses them: a chunk whose sum
 * equals the one this context's last commit recorded is referenced, not
 * copied off the GPU nor staged. */
struct sr_dev_sums;
struct sr_mentry;
struct sr_mchunk;
/* Give every device buffer of ctx its record of the last commit (empty
 * until one), before a save copies ctx->bufs: 0, or -1 out of memory. */
int sr_lib_device_memos(spotrun_ctx *ctx);
/* The sums of the device buffers among bufs[n] (the save's copy of
 * ctx->bufs, t as the pipeline takes them, o the save's options: chunk
 * size, rank), computed now on their GPUs where the kernels are (only the
 * sums come off them), else later from the staged bytes. *out NULL when
 * ctx has no device. 0, or -1 with err (a CUDA call: the call named). */
int sr_lib_device_sums(spotrun_ctx *ctx, const struct lib_buf *bufs,
    const struct sr_ckpt_tensor *t, size_t n, const struct sr_ckpt_opts *o,
    struct sr_dev_sums **out, char *err);
/* Chunk k of buffer bi: the last commit's record of it when its sum is
 * known (computed on the GPU, or, staged set, from its staged bytes) and
 * equal, else NULL; *csum its sum, or NULL for a host buffer. */
const struct sr_mchunk *sr_lib_device_ref(const struct sr_dev_sums *u, size_t bi, size_t k,
    int staged, const uint8_t **csum);
/* Without the kernels: the sum of chunk k of bi from its staged bytes. */
void sr_lib_device_sum_staged(struct sr_dev_sums *u, size_t bi, size_t k, const uint8_t *bytes,
    size_t len);
/* Keep the record of the last chunk saved into entry e, buffer bi's. */
void sr_lib_device_record(struct sr_dev_sums *u, size_t bi, const struct sr_mentry *e);
/* A try of the save starts again: forget what it recorded. */
void sr_lib_device_sums_restart(struct sr_dev_sums *u);
/* The save ended: committed as checkpoint seq, its records become the
 * ones the next save compares with; else no record is trusted. From the
 * save's thread: the caller's thread reads them only once it has
 * collected the save. */
void sr_lib_device_sums_end(struct sr_dev_sums *u, int committed, uint64_t seq);
void sr_lib_device_sums_free(struct sr_dev_sums *u);

/* Close the driver and free what the context's device buffers hold (NULL
 * devices: nothing). */
void sr_lib_device_free(spotrun_ctx *ctx);

#endif
