/*
 * libranks.c: a job of several ranks checkpointing through libspotrun
 * (lib/libspotrun.h), for tests/t67-libranks.sh. Each rank (RANK of
 * WORLD_SIZE, as spotrun's `launch = ranks` sets them) holds its rows of a
 * sharded tensor "w" (f32, ROWS rows over the ranks) and the replicated
 * "bias" (f32) and "step" (i64), all registered; each of STEPS steps
 * updates them deterministically and sleeps MS milliseconds. The ranks
 * agree on the step to save at as data-parallel ranks reduce gradients:
 * at every step each writes whether spotrun_checkpoint_requested said 1
 * into DIR/A-C-S.R (A: $SPOTRUN_ATTEMPT, C: the group's restart count, S
 * the step) and waits for every rank's file of that step (a barrier on
 * one machine); when any said 1, all call spotrun_save(S), collective.
 * At the end each rank recomputes its state from scratch and prints
 * "rank R: state of step S matches an uninterrupted run", or exits 1.
 *
 *	libranks STEPS MS DIR
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libspotrun.h"

#define ROWS 12
#define COLS 256
#define NB 1024

static void
die(spotrun_ctx *ctx, int rank, spotrun_error rc, const char *what)
{
	fprintf(stderr, "libranks %d: %s: %s: %s\n", rank, what, spotrun_getErrorName(rc),
	    ctx != NULL ? spotrun_getErrorString(ctx) : "");
	exit(1);
}

/* Step s of the state: rows [r0, r0 + nr) of w, and bias. */
static void
step_of(long long s, float *w, uint64_t r0, uint64_t nr, float *bias)
{
	uint64_t i, j;

	for (i = 0; i < nr; i++) {
		for (j = 0; j < COLS; j++)
			w[i * COLS + j] = w[i * COLS + j] * 0.5f + (float)((r0 + i) * 7 + j + (uint64_t)s);
	}
	for (j = 0; j < NB; j++)
		bias[j] = bias[j] * 0.25f + (float)(j ^ (uint64_t)s);
}

static const char *
env0(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? v : "0";
}

/* Barrier of step s: every rank's flag; 1 if any is 1. Named by the
 * attempt and restart, so that a group started again never reads the
 * flags of the one before. */
static int
agree(const char *dir, int rank, int world, long long s, int flag)
{
	char path[4096], tmp[4096], tag[64];
	int r, any = 0;
	FILE *fp;

	snprintf(tag, sizeof tag, "%s-%s", env0("SPOTRUN_ATTEMPT"),
	    env0("TORCHELASTIC_RESTART_COUNT"));
	snprintf(tmp, sizeof tmp, "%s/%s-%lld.%d.tmp", dir, tag, s, rank);
	snprintf(path, sizeof path, "%s/%s-%lld.%d", dir, tag, s, rank);
	if ((fp = fopen(tmp, "w")) == NULL || fprintf(fp, "%d\n", flag) < 0 || fclose(fp) != 0 ||
	    rename(tmp, path) != 0) {
		fprintf(stderr, "libranks %d: write %s: %s\n", rank, path, strerror(errno));
		exit(1);
	}
	for (r = 0; r < world; r++) {
		int v = 0;

		snprintf(path, sizeof path, "%s/%s-%lld.%d", dir, tag, s, r);
		while ((fp = fopen(path, "r")) == NULL)
			usleep(2000);
		if (fscanf(fp, "%d", &v) != 1)
			v = 0;
		fclose(fp);
		any |= v;
	}
	return any;
}

int
main(int argc, char **argv)
{
	uint64_t shape[2] = { ROWS, COLS }, off[2], size[2], nb = NB;
	long long steps, s, start = 0, restored = -1;
	struct timespec ts;
	spotrun_params p;
	spotrun_ctx *ctx;
	spotrun_error rc;
	float *w, *w2, bias[NB], bias2[NB];
	int64_t step_done = -1;
	int rank, world, ms;

	if (argc != 4) {
		fprintf(stderr, "usage: libranks STEPS MS DIR\n");
		return 2;
	}
	steps = atoll(argv[1]);
	ms = atoi(argv[2]);
	spotrun_params_init(&p);
	ctx = spotrun_create(&p);
	rank = getenv("RANK") != NULL ? atoi(getenv("RANK")) : 0;
	world = getenv("WORLD_SIZE") != NULL ? atoi(getenv("WORLD_SIZE")) : 1;
	off[0] = (uint64_t)rank * ROWS / (uint64_t)world;
	size[0] = (uint64_t)(rank + 1) * ROWS / (uint64_t)world - off[0];
	off[1] = 0;
	size[1] = COLS;
	w = calloc(size[0] * COLS + 1, sizeof *w);
	w2 = calloc(size[0] * COLS + 1, sizeof *w2);
	memset(bias, 0, sizeof bias);
	if ((rc = spotrun_register(ctx, "w", SPOTRUN_F32, 2, shape, off, size, w)) != SPOTRUN_OK ||
	    (rc = spotrun_register(ctx, "bias", SPOTRUN_F32, 1, &nb, NULL, NULL, bias)) != SPOTRUN_OK ||
	    (rc = spotrun_register(ctx, "step", SPOTRUN_I64, 0, NULL, NULL, NULL, &step_done)) !=
	    SPOTRUN_OK)
		die(ctx, rank, rc, "register");
	if ((rc = spotrun_restore(ctx, &restored)) != SPOTRUN_OK)
		die(ctx, rank, rc, "restore");
	if (restored >= 0) {
		if (step_done != restored)
			die(ctx, rank, SPOTRUN_ERROR_GENERIC, "restored step counter differs");
		start = restored + 1;
		printf("rank %d resumed from step %lld\n", rank, restored);
		fflush(stdout);
	}
	/* a first look: past its start, so that a notice from here on gets
	 * its checkpoint rather than a stop as a job still starting */
	(void)spotrun_checkpoint_requested(ctx);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	for (s = start; s < steps; s++) {
		step_of(s, w, off[0], size[0], bias);
		step_done = s;
		nanosleep(&ts, NULL);
		if (agree(argv[3], rank, world, s, spotrun_checkpoint_requested(ctx))) {
			/* before: a notice's job is stopped once rank 0 committed,
			 * maybe before another rank's spotrun_save returned */
			printf("rank %d saving at step %lld\n", rank, s);
			fflush(stdout);
			if ((rc = spotrun_save(ctx, s)) != SPOTRUN_OK)
				die(ctx, rank, rc, "save");
			printf("rank %d checkpoint at step %lld\n", rank, s);
			fflush(stdout);
		}
	}
	memset(bias2, 0, sizeof bias2);
	for (s = 0; s < steps; s++)
		step_of(s, w2, off[0], size[0], bias2);
	if (memcmp(w, w2, size[0] * COLS * sizeof *w) != 0 || memcmp(bias, bias2, sizeof bias) != 0)
		die(ctx, rank, SPOTRUN_ERROR_GENERIC, "the state differs from an uninterrupted run's");
	printf("rank %d: state of step %lld matches an uninterrupted run\n", rank, steps - 1);
	spotrun_free(ctx);
	free(w);
	free(w2);
	return 0;
}
