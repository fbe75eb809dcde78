/*
 * oom-trial.h: the out-of-memory trial of one operation (round 3's rule
 * for the job-side library): run it once to count its allocations N, then
 * for every n in 1..N, with and without persist, fail the nth (tests/oom.h)
 * and hold the outcome to exactly one of two: success with the result
 * exactly right, or -1 with an error that says out-of-memory; either way
 * the state checked after it is intact and no byte leaked. An operation
 * that allocates nothing (N = 0) must succeed exactly with every
 * allocation failing. One ok() per
 * scenario, with the first bad trial's details, so the plan never moves.
 * Header-only, included once per test program after tap.h and oom.h.
 */
#ifndef SR_TEST_OOM_TRIAL_H
#define SR_TEST_OOM_TRIAL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oom.h"
#include "util.h"

struct oom_trial {
	const char *name;		/* "sr_store_put (create-only)" */
	enum oom_scope scope;
	/* The operation: its return code, err filled on failure. */
	int (*run)(void *arg, char *err);
	/* Whether the state after an outcome rc is the right one (the
	 * result exact after 0, nothing half-done after -1); why (SR_ERRMAX
	 * bytes) says what is wrong otherwise. */
	int (*check)(void *arg, int rc, char *why);
	/* Put the state back as it was before run (unarmed); may be NULL. */
	void (*reset)(void *arg);
	void *arg;
};

/* One run: rc, the check, the reset. 0 when the outcome was one of the
 * two allowed, else -1 with why. */
static int
oom_trial_once(const struct oom_trial *t, int armed, long nth, int persist, long *counted,
    char *why)
{
	char err[SR_ERRMAX] = "";
	int rc, good;

	if (armed)
		oom_arm(nth, persist, t->scope);
	rc = t->run(t->arg, err);
	if (armed) {
		long n = oom_disarm();

		if (counted != NULL)
			*counted = n;
	}
	why[0] = '\0';
	if (rc != 0 && !(rc == -1 && sr_err_is_oom(err)))
		snprintf(why, SR_ERRMAX, "rc %d, not 0 nor -1 with an out-of-memory error: %s",
		    rc, err);
	good = why[0] == '\0' && t->check(t->arg, rc, why);
	if (good == 0 && why[0] == '\0')
		snprintf(why, SR_ERRMAX, "rc %d (%s): the state after it is wrong", rc, err);
	if (t->reset != NULL)
		t->reset(t->arg);
	return good ? 0 : -1;
}

/* One trial with the leak check: no more bytes in use after it than
 * before. What a library keeps between calls changes with a trial's
 * outcome (curl keeps a connection alive, or closes it after a failed
 * transfer, and its pooled handle's buffers with it; OpenSSL fills a
 * cache the first time it gets past an allocation an earlier trial
 * failed), so a trial that leaves more in use is run again: a leak grows
 * every time. Five times in a row: on a loaded CI machine an S3 list grew
 * by 16 bytes three times in a row with no leak found (curl's state
 * follows how the replies arrive); a leak on a failure path grows each
 * time by its size. 0, or -1 with why (each run's growth). */
#define OOM_TRIAL_RUNS 5

static int
oom_trial_leak(const struct oom_trial *t, long nth, int persist, char *why)
{
	size_t before, after;
	char grew[128] = "";
	int again;

	for (again = 0; again < OOM_TRIAL_RUNS; again++) {
		size_t used = strlen(grew);

		before = oom_in_use();
		if (oom_trial_once(t, 1, nth, persist, NULL, why) == -1)
			return -1;
		if ((after = oom_in_use()) <= before)
			return 0;
		snprintf(grew + used, sizeof grew - used, "%s%zu", used > 0 ? ", " : "",
		    after - before);
	}
	snprintf(why, SR_ERRMAX, "%zu bytes in use after it, %zu before; %d runs in a row "
	    "grew by %s bytes", after, before, OOM_TRIAL_RUNS, grew);
	return -1;
}

/* The whole scenario: one ok(). */
__attribute__((unused)) static int
oom_trials(const struct oom_trial *t)
{
	char why[SR_ERRMAX], first[SR_ERRMAX] = "";
	long n, total = 0, bad = 0;
	int persist;

	if (!oom_usable()) {
		snprintf(why, sizeof why, "AddressSanitizer owns malloc (trials of %s under OOM)",
		    t->name);
		tap_skip(why);
		return 1;
	}
	/* the warm-up: lazy one-time allocations of the libraries happen
	 * here, not in a trial; then the count */
	if (oom_trial_once(t, 0, 0, 0, NULL, why) == -1 ||
	    oom_trial_once(t, 1, 0, 0, &total, why) == -1) {
		ok(0, "trials of %s under OOM", t->name);
		tap_diag("unarmed: %s", why);
		return 0;
	}
	if (total == 0) {
		/* nothing to fail: then it must come out exact when every
		 * allocation fails */
		oom_trial_leak(t, 1, 1, why);
		if (!ok(why[0] == '\0', "%s allocates nothing%s: exact with every allocation "
		    "failing", t->name, t->scope == OOM_OURS ? " itself" : ""))
			tap_diag("%s", why);
		return why[0] == '\0';
	}
	for (persist = 0; persist <= 1; persist++)
		for (n = 1; n <= total; n++) {
			if (oom_trial_leak(t, n, persist, why) == -1 && bad++ == 0)
				snprintf(first, sizeof first, "n %ld, persist %d: %s", n, persist,
				    why);
		}
	if (!ok(bad == 0, "%ld trials of %s under OOM: each failed cleanly or succeeded "
	    "exactly", 2 * total, t->name))
		tap_diag("%ld bad; the first: %s", bad, first);
	return bad == 0;
}

/* The same, the scenario given in the call. */
__attribute__((unused)) static int
oom_trial(const char *name, enum oom_scope scope, int (*run)(void *, char *),
    int (*check)(void *, int, char *), void (*reset)(void *), void *arg)
{
	struct oom_trial t = { name, scope, run, check, reset, arg };

	return oom_trials(&t);
}

/* A buffer a trial's operation hands out (a file read, an object got). */
struct oom_buf {
	char *buf;
	size_t len;
};

/* Whether b is right for the outcome rc: after 0 exactly want,
 * NUL-terminated; after a failure nothing handed out. */
__attribute__((unused)) static int
oom_buf_check(const struct oom_buf *b, int rc, const char *want, char *why)
{
	if (rc == 0 && (b->len != strlen(want) || memcmp(b->buf, want, b->len) != 0 ||
	    b->buf[b->len] != '\0'))
		return snprintf(why, SR_ERRMAX, "other bytes (%zu)", b->len), 0;
	if (rc != 0 && b->buf != NULL)
		return snprintf(why, SR_ERRMAX, "a buffer handed out on failure"), 0;
	return 1;
}

__attribute__((unused)) static void
oom_buf_free(struct oom_buf *b)
{
	free(b->buf);
	b->buf = NULL;
	b->len = 0;
}

#endif
