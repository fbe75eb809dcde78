/*
 * device-int.h: what the files of libspotrun's device buffers share
 * (device.c: the driver, registration, staging memory, restore;
 * device-save.c: the save): a context's devices and the records of its
 * last commit. Not installed; spotrun.c sees device.h only.
 */
#ifndef SR_LIB_DEVICE_INT_H
#define SR_LIB_DEVICE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cudadrv.h"
#include "lib.h"
#include "manifest.h"

#define SR_DEV_CHUNK_DEFAULT ((size_t)16 << 20)	/* save.c's default chunk */
#define SLOTS 2				/* staging buffers: double-buffered */
#define SR_LIB_MAX_GPUS 16		/* devices of one context at most */

struct sr_dev_gpu {
	int ordinal;
	struct sr_cuda *cu;
	CUstream stream;
	CUdeviceptr tmp[SLOTS];		/* the split's output, tmp_bytes each */
	size_t tmp_bytes;
};

/* What this context's last commit holds of one device buffer. */
struct sr_dev_memo {
	size_t n;			/* chunks; 0: nothing known */
	uint8_t *sums;			/* 16 bytes a chunk */
	struct sr_mchunk *chunks;	/* their records, pack strings owned */
};

struct sr_lib_devs {
	char *lib;			/* the driver library */
	struct sr_dev_gpu gpus[SR_LIB_MAX_GPUS];
	size_t ngpus;
	uint8_t *stage[SLOTS];		/* pinned, stage_bytes each */
	size_t stage_bytes;
	size_t stage_gpu;		/* whose context allocated them */
	void *async_pinned;		/* an async save's staging (sr_lib_device_pin) */
	uint64_t last_seq;		/* the commit the memos describe */
	int have_last;
};

/* The handle of device `ordinal`, or NULL. */
struct sr_dev_gpu *sr_dev_gpu_of(struct sr_lib_devs *d, int ordinal);
/* CUDA result r of `call` (an API name) done for `what`: 0, or -1 with err
 * "WHAT: CALL: NAME (number): text". */
int sr_dev_ok(struct sr_dev_gpu *g, CUresult r, const char *what, const char *call, char *err);
/* Make g's context current for the calls that follow (sr_dev_pop gives the
 * caller's back): 0, or -1 with err (NULL-able) saying for what. */
int sr_dev_push(struct sr_dev_gpu *g, const char *what, char *err);
void sr_dev_pop(struct sr_dev_gpu *g);
/* Free what a memo holds (the memo itself is the caller's). */
void sr_dev_memo_clear(const spotrun_params *p, struct sr_dev_memo *mm);
/* The pinned staging buffers and the split's device memory, of at least
 * `bytes` each, allocated on first need: 0, or -1 with err. */
int sr_dev_stage_alloc(spotrun_ctx *ctx, size_t bytes, char *err);

#endif
