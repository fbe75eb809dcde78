/*
 * libtrain.c: a small deterministic training loop in C that checkpoints
 * through libspotrun (lib/libspotrun.h), for tests/t66-libjob.sh. It fits
 * a linear model w (f32) to a fixed target with Adam (moments m and v,
 * f32), keeps a bf16 copy of w as a mixed-precision job would, and a step
 * counter (i64) and a data cursor (u64), all registered with the library.
 * Each of STEPS steps sleeps MS milliseconds and polls
 * spotrun_checkpoint_requested; a request is answered with spotrun_save
 * (with "async": spotrun_save_async, training going on while it lands).
 * With own=K it also saves on its own, unasked, after every K-th step;
 * with world=N its context claims N ranks (params.world_size) though it is
 * alone, so that its collective saves fail (the others never come).
 * With last=PATH, at its final step it creates PATH (the local provider's
 * notice_file: the notice comes), waits for the request (2 minutes at
 * most), answers it as its last checkpoint (spotrun_set_last), and takes
 * a second over its end.
 * With hold=PATH, once restored it says "holding" and waits for PATH (2
 * minutes at most) before its first step: a start that has not ended,
 * for a notice that comes before the job's first look at a request.
 * At the end it prints "result: <FNV-1a of the state>" and writes the
 * state's bytes to OUT, the same whether or not it was preempted.
 *
 *	libtrain STEPS MS OUT [async] [own=K] [world=N] [last=PATH] [hold=PATH]
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define SPOTRUN_EXPERIMENTAL	/* spotrun_save_async */
#include <time.h>
#include <unistd.h>

#include "libspotrun.h"

#define N 4096

static float w[N], m[N], v[N];
static uint16_t w16[N];
static int64_t step_done;
static uint64_t cursor;

static uint16_t
to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof u);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static void
train_step(long long s)
{
	const float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
	float c1 = 1.0f - powf(b1, (float)(s + 1)), c2 = 1.0f - powf(b2, (float)(s + 1));
	int i;

	for (i = 0; i < N; i++) {
		/* the target and the batch's noise follow the data cursor */
		float target = sinf((float)i * 0.01f);
		float noise = (float)((cursor * 2654435761u + (uint64_t)i) % 1000) * 1e-5f;
		float g = 2.0f * (w[i] - target) + noise;

		m[i] = b1 * m[i] + (1 - b1) * g;
		v[i] = b2 * v[i] + (1 - b2) * g * g;
		w[i] -= lr * (m[i] / c1) / (sqrtf(v[i] / c2) + eps);
		w16[i] = to_bf16(w[i]);
	}
	cursor += 64;
	step_done = s;
}

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n-- > 0)
		h = (h ^ *b++) * 1099511628211ULL;
	return h;
}

static int
check(spotrun_ctx *ctx, spotrun_error rc, const char *what)
{
	if (rc == SPOTRUN_OK)
		return 0;
	fprintf(stderr, "libtrain: %s: %s: %s\n", what, spotrun_getErrorName(rc),
	    spotrun_getErrorString(ctx));
	exit(1);
}

int
main(int argc, char **argv)
{
	const uint64_t shape[1] = { N };
	struct timespec ts;
	spotrun_params p;
	spotrun_ctx *ctx;
	long long steps, s, start = 0, restored;
	uint64_t h = 1469598103934665603ULL;
	FILE *fp;
	int ms, async = 0, own = 0, world = 0, i, waited;
	const char *last = NULL, *hold = NULL;
	spotrun_error rc;

	for (i = 4; i < argc; i++) {
		if (strcmp(argv[i], "async") == 0)
			async = 1;
		else if (strncmp(argv[i], "last=", 5) == 0 && argv[i][5] != '\0')
			last = argv[i] + 5;
		else if (strncmp(argv[i], "hold=", 5) == 0 && argv[i][5] != '\0')
			hold = argv[i] + 5;
		else if (sscanf(argv[i], "own=%d", &own) == 1 && own > 0)
			;
		else if (sscanf(argv[i], "world=%d", &world) == 1 && world > 0)
			;
		else
			argc = 0;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: libtrain STEPS MS OUT [async] [own=K] [world=N] "
		    "[last=PATH] [hold=PATH]\n");
		return 2;
	}
	steps = atoll(argv[1]);
	ms = atoi(argv[2]);
	spotrun_params_init(&p);
	if (world > 0)
		p.world_size = world;
	if ((ctx = spotrun_create(&p)) == NULL)
		return 1;
	check(ctx, spotrun_register(ctx, "w", SPOTRUN_F32, 1, shape, NULL, NULL, w), "register");
	check(ctx, spotrun_register(ctx, "adam.m", SPOTRUN_F32, 1, shape, NULL, NULL, m), "register");
	check(ctx, spotrun_register(ctx, "adam.v", SPOTRUN_F32, 1, shape, NULL, NULL, v), "register");
	check(ctx, spotrun_register(ctx, "w.bf16", SPOTRUN_BF16, 1, shape, NULL, NULL, w16),
	    "register");
	check(ctx, spotrun_register(ctx, "step", SPOTRUN_I64, 0, NULL, NULL, NULL, &step_done),
	    "register");
	check(ctx, spotrun_register(ctx, "cursor", SPOTRUN_U64, 0, NULL, NULL, NULL, &cursor),
	    "register");
	check(ctx, spotrun_restore(ctx, &restored), "restore");
	if (restored >= 0) {
		start = restored + 1;
		printf("resumed from step %lld\n", restored);
		fflush(stdout);
	}
	if (hold != NULL) {
		printf("holding\n");
		fflush(stdout);
		ts.tv_sec = 0;
		ts.tv_nsec = 20000000L;
		for (waited = 0; access(hold, F_OK) != 0 && waited < 6000; waited++)
			nanosleep(&ts, NULL);
	}
	/* a first look: past its start, so that a notice from here on gets
	 * its checkpoint rather than a stop as a job still starting */
	(void)spotrun_checkpoint_requested(ctx);
	for (s = start; s < steps; s++) {
		train_step(s);
		if (last != NULL && s == steps - 1) {
			if ((fp = fopen(last, "w")) == NULL || fclose(fp) != 0) {
				fprintf(stderr, "libtrain: create %s failed\n", last);
				return 1;
			}
			ts.tv_sec = 0;
			ts.tv_nsec = 20000000L;
			for (waited = 0; !spotrun_checkpoint_requested(ctx) && waited < 6000; waited++)
				nanosleep(&ts, NULL);
			check(ctx, spotrun_set_last(ctx, 1), "set_last");
		}
		if (spotrun_checkpoint_requested(ctx)) {
			/* said before the save: on a notice the supervisor may
			 * stop the job the moment the commit lands, before any
			 * line after it is written */
			printf("saving at step %lld\n", s);
			fflush(stdout);
			check(ctx, async ? spotrun_save_async(ctx, s) : spotrun_save(ctx, s), "save");
			printf("checkpoint at step %lld\n", s);
			fflush(stdout);
		} else if (own > 0 && (s + 1) % own == 0) {
			/* unasked; a failure is the job's to weigh (here: go on) */
			rc = async ? spotrun_save_async(ctx, s) : spotrun_save(ctx, s);
			printf("own checkpoint at step %lld: %s\n", s, spotrun_getErrorName(rc));
			fflush(stdout);
		}
		ts.tv_sec = 0;
		ts.tv_nsec = (long)ms * 1000000L;
		nanosleep(&ts, NULL);
	}
	check(ctx, spotrun_wait(ctx), "wait");
	h = fnv(h, w, sizeof w);
	h = fnv(h, m, sizeof m);
	h = fnv(h, v, sizeof v);
	h = fnv(h, w16, sizeof w16);
	h = fnv(h, &step_done, sizeof step_done);
	h = fnv(h, &cursor, sizeof cursor);
	printf("result: %016" PRIx64 "\n", h);
	fflush(stdout);
	if (last != NULL)
		sleep(1);	/* its end: results written, a moment to exit */
	if ((fp = fopen(argv[3], "wb")) == NULL || fwrite(w, sizeof w, 1, fp) != 1 ||
	    fwrite(m, sizeof m, 1, fp) != 1 || fwrite(v, sizeof v, 1, fp) != 1 ||
	    fwrite(w16, sizeof w16, 1, fp) != 1 || fclose(fp) != 0) {
		fprintf(stderr, "libtrain: write %s failed\n", argv[3]);
		return 1;
	}
	spotrun_free(ctx);
	return 0;
}
