/*
 * staging.h: the staging area of an async save (lib/staging.c): where the
 * caller's thread copies the registered buffers, part by part, and where
 * the checkpoint pipeline (ckpt/savesrc.h) reads them from on the save's
 * thread. A snapshot that fits the budget is staged whole; a larger one
 * goes through two halves, each refilled once the pipeline is done with
 * what it held. Not installed; lib/async.c is its one user.
 */
#ifndef SR_LIB_STAGING_H
#define SR_LIB_STAGING_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "lib.h"
#include "ckpt.h"
#include "savesrc.h"

/* A run of one buffer's bytes at one place of the staging memory. */
struct sr_stage_part {
	size_t t;			/* the tensor: its index in the manifest */
	uint64_t off, len;		/* of the buffer's bytes (off: whole chunks) */
	size_t at;			/* where it is staged */
	size_t need;			/* parts released before it may be copied:
					 * those its half held before (0: none) */
};

struct sr_stage {
	/* Set before the save's thread starts, then read-only. */
	const struct lib_buf *bufs;	/* the registered buffers, as t's */
	const struct sr_ckpt_tensor *t;
	size_t n;
	size_t *order;			/* t's indices by name (the manifest's order) */
	struct sr_stage_part *parts;
	size_t nparts;
	uint8_t *mem;
	size_t used;			/* bytes of mem the plan uses */
	int halves;			/* 1: the snapshot whole; 2: double-buffered */
	volatile int cancel;		/* the pipeline's cancel flag (sr_flag_*) */
	/* Under mu, signalled on cv. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t staged;			/* parts copied, in order (the caller) */
	size_t released;		/* parts the pipeline is done with, this try */
	int tries;			/* describe() calls (the save's thread) */
	int overwritten;		/* a half was refilled: no second try */
	int refused;			/* a second try was refused for that */
	int ended;			/* the save's thread is past the pipeline */
	int copy_failed;		/* copy_err says why: the save stops */
	char copy_err[SR_ERRMAX];
	double filled_at;		/* sr_mono() when the last part was staged */
};

/* Plan the parts of the n buffers (t: as the pipeline takes them, bufs:
 * how to copy them) into `half` bytes, once or twice (halves), each part
 * of a buffer starting at a whole chunk of it. 0, or -1 when out of
 * memory (the parts come from ctx's allocator). */
int sr_stage_plan(const spotrun_ctx *ctx, struct sr_stage *sg, size_t half, int halves,
    size_t chunk);
/* The caller's side: copy every part in order, waiting for a half to
 * come back when it must. 0; -1 with err when a copy failed (the save is
 * told, and stops). */
int sr_stage_fill(struct sr_stage *sg, char *err);
/* The pipeline's side: the source that hands it the parts as they are
 * staged. */
void sr_stage_source(struct sr_stage *sg, struct sr_save_src *src);
/* The save's thread is done with the staging: no more waiting for it. */
void sr_stage_end(struct sr_stage *sg);
/* Free what sr_stage_plan made (not mem). */
void sr_stage_free(const spotrun_ctx *ctx, struct sr_stage *sg);

#endif
