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
 * device `device` of the driver (params.cuda_library, else
 * $SPOTRUN_CUDA_LIBRARY, else libcuda.so.1) if this context has not yet,
 * and check that ptr is memory of that device holding b->bytes. SPOTRUN_OK
 * with b->device and b->dptr set, or the error (the message in ctx). */
spotrun_error sr_lib_device_register(spotrun_ctx *ctx, struct lib_buf *b, const char *name,
    void *ptr, int device);

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

/* Close the driver and free what the context's device buffers hold (NULL
 * devices: nothing). */
void sr_lib_device_free(spotrun_ctx *ctx);

#endif
