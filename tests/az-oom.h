/*
 * az-oom.h: the out-of-memory trials of the az:// store's tests (decision
 * 4 of issue 13's round): one scenario is an operation run once to count
 * its allocations N, then once for every n in 1..N with the nth failing,
 * alone and with every one after it, each run ending either in success
 * with exactly the right result or in -1 with an out-of-memory error, and
 * nothing left allocated. One ok() per scenario, so that the plan does not
 * depend on N; the first bad trial is told in a diagnostic. Header-only,
 * included after tap.h by a program linked with tests/oom.c.
 */
#ifndef SR_AZ_OOM_H
#define SR_AZ_OOM_H

#include <stdio.h>
#include <string.h>

#include "oom.h"
#include "util.h"

struct ao_scenario {
	const char *name;	/* "sr_az_sign": the ok() names it */
	enum oom_scope scope;
	/* Run the operation once: 0 (its result kept in arg), or -1 with err. */
	int (*op)(void *arg, char *err);
	/* After op returned 0: whether its result is exactly right (why says
	 * how it is not); then free the result, so that arg is as before op. */
	int (*check)(void *arg, char *why, size_t len);
	void *arg;
	/* Optional, unarmed after every run: whether what the operation
	 * touches is as it must be (a store's object whole, old or new, never
	 * half-written). */
	int (*intact)(void *arg, char *why, size_t len);
};

/* Run s's trials; one ok(). */
static __attribute__((unused)) void
ao_run(const struct ao_scenario *s)
{
	char err[SR_ERRMAX], why[SR_ERRMAX], first[2 * SR_ERRMAX] = "";
	size_t before;
	long n, count, bad = 0;
	int persist, rc;

	if (!oom_usable()) {
		ok(1, "trials of %s under OOM # SKIP AddressSanitizer owns malloc", s->name);
		return;
	}
	/* warm-up, armed to count (oom_arm's own first look at the loaded
	 * objects allocates): one-time allocations are not a leak */
	why[0] = '\0';
	oom_arm(0, 0, s->scope);
	rc = s->op(s->arg, err);
	oom_disarm();
	if (rc != 0 || !s->check(s->arg, why, sizeof why) ||
	    (s->intact != NULL && !s->intact(s->arg, why, sizeof why))) {
		ok(0, "trials of %s under OOM: the operation works unarmed", s->name);
		tap_diag("%s", why[0] != '\0' ? why : err);
		return;
	}
	oom_arm(0, 0, s->scope);
	rc = s->op(s->arg, err);
	count = oom_disarm();
	if (rc != 0 || !s->check(s->arg, why, sizeof why) || count == 0 ||
	    (s->intact != NULL && !s->intact(s->arg, why, sizeof why))) {
		ok(0, "trials of %s under OOM: counted %ld allocations", s->name, count);
		tap_diag("rc %d: %s", rc, rc != 0 ? err : why);
		return;
	}
	for (n = 1; n <= count; n++)
		for (persist = 0; persist <= 1; persist++) {
			size_t after;
			int good;

			err[0] = why[0] = '\0';
			before = oom_in_use();
			oom_arm(n, persist, s->scope);
			rc = s->op(s->arg, err);
			oom_disarm();
			good = rc == 0 ? s->check(s->arg, why, sizeof why) :
			    rc == -1 && sr_err_is_oom(err);
			/* before intact, which may use what keeps a cache */
			after = oom_in_use();
			if (good && after != before) {
				good = 0;
				snprintf(why, sizeof why, "%zd bytes more in use than before",
				    (ssize_t)(after - before));
			}
			if (good && s->intact != NULL)
				good = s->intact(s->arg, why, sizeof why);
			if (!good && bad++ == 0)
				snprintf(first, sizeof first, "n %ld, persist %d: rc %d, err '%s'%s%s",
				    n, persist, rc, err, why[0] != '\0' ? ": " : "", why);
		}
	ok(bad == 0, "%ld trials of %s under OOM: each failed cleanly or succeeded exactly",
	    2 * count, s->name);
	if (bad > 0)
		tap_diag("%ld bad, the first: %s", bad, first);
}

#endif
