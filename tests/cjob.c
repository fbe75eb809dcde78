/*
 * cjob.c: a small deterministic "training" job in C that checkpoints
 * through the public header spotrun.h, for tests/t62-cjob.sh. It runs STEPS
 * steps of a xorshift state update (sleeping MS milliseconds each), polls
 * for requests at every step, saves its state to state.bin, and prints
 * "result: <state>" at the end, identical whether or not it was preempted.
 * It also times its steps' work (the update and the sleep), keeping the sum
 * in its state, so that a step done again after a restore counts once, and
 * says on stderr at the end how long its kept steps took: the job's own
 * time, overrun included, which bench/goodput-run.sh takes out of the time
 * paid without a second run to compare with.
 * A third argument "periodic-only" makes it ignore the requests of notices,
 * which the goodput benchmark uses as its baseline. With "last=PATH"
 * instead, at its final step it creates PATH (the local provider's
 * notice_file: the notice comes), waits for the request (2 minutes at
 * most) and answers it with spotrun_ckpt_answer_last, its last checkpoint,
 * then takes a second over its end (tests/t31-last.sh).
 */
#include "config.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spotrun.h"

static double
mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int
save(const char *dir, long long step, uint64_t x, double kept)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof path, "%s/state.bin", dir);
	fp = fopen(path, "w");
	if (fp == NULL || fprintf(fp, "%lld %" PRIu64 " %.6f\n", step, x, kept) < 0 ||
	    fclose(fp) != 0)
		return -1;
	return 0;
}

/* Make the notice come (create path) and wait for its request. */
static int
wait_notice(const char *path)
{
	struct timespec ts = { 0, 20000000L };
	FILE *fp = fopen(path, "w");
	int i;

	if (fp == NULL || fclose(fp) != 0) {
		fprintf(stderr, "cjob: create %s failed\n", path);
		return -1;
	}
	for (i = 0; i < 6000 && spotrun_ckpt_request(NULL) == 0; i++)
		nanosleep(&ts, NULL);
	return 0;
}

int
main(int argc, char **argv)
{
	long long steps = argc > 1 ? atoll(argv[1]) : 100, step = 0, rs;
	long ms = argc > 2 ? atol(argv[2]) : 20;
	int periodic_only = argc > 3 && strcmp(argv[3], "periodic-only") == 0;
	const char *last = argc > 3 && strncmp(argv[3], "last=", 5) == 0 ? argv[3] + 5 : NULL;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	struct spotrun_request req;
	const char *dir = spotrun_ckpt_dir();
	uint64_t x = 88172645463325252ULL;
	double kept = 0, t;
	int rc;

	/* Requests are polled; the signal is not needed. */
	signal(SIGUSR1, SIG_IGN);
	if ((rc = spotrun_resume_step(&rs)) == 1) {
		char path[4096];
		FILE *fp;
		snprintf(path, sizeof path, "%s/state.bin", dir);
		fp = fopen(path, "r");
		if (fp == NULL || fscanf(fp, "%lld %" SCNu64 " %lf", &step, &x, &kept) != 3) {
			fprintf(stderr, "cjob: cannot read %s\n", path);
			return 1;
		}
		fclose(fp);
		printf("resumed from step %lld\n", step);
	} else if (rc < 0 && rc != SPOTRUN_ERR_NOT_SUPERVISED) {
		fprintf(stderr, "cjob: %s\n", spotrun_getErrorName(rc));
		return 1;
	}
	for (; step < steps; step++) {
		if (last != NULL && step == steps - 1 && wait_notice(last) == -1)
			return 1;
		rc = spotrun_ckpt_request(&req);
		if (rc == 1 && periodic_only && strcmp(req.reason, "notice") == 0)
			rc = 0;
		if (rc == 1) {
			if (save(dir, step, x, kept) == -1 || (last != NULL && step == steps - 1 ?
			    spotrun_ckpt_answer_last(&req, step) : spotrun_ckpt_answer(&req, step)) !=
			    SPOTRUN_OK) {
				fprintf(stderr, "cjob: checkpoint failed\n");
				return 1;
			}
			printf("checkpoint %llu (%s) at step %lld\n", req.seq, req.reason, step);
			fflush(stdout);
		} else if (rc < 0 && rc != SPOTRUN_ERR_NOT_SUPERVISED) {
			fprintf(stderr, "cjob: %s\n", spotrun_getErrorName(rc));
			return 1;
		}
		t = mono();
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		nanosleep(&ts, NULL);
		kept += mono() - t;
	}
	printf("result: %" PRIu64 "\n", x);
	fprintf(stderr, "cjob: %lld steps kept, their work took %.6f s\n", steps, kept);
	if (last != NULL) {
		fflush(stdout);
		sleep(1);	/* its end: results written, a moment to exit */
	}
	return 0;
}
