/*
 * oom-trials.h: one scenario's out-of-memory trials (decision 4 of the
 * no-abort round) on tests/oom.h, for a test program linked with
 * tests/oom.c. Header-only; include it after tap.h.
 *
 * The operation runs once unarmed (a warm-up: the libraries' one-time
 * allocations), once armed with nth 0 to count its allocations N, then for
 * every n in 1..N and persist in {0, 1}: armed, it must succeed with
 * exactly the right result or fail with -1 and an out-of-memory message,
 * leave its state intact, and give back every byte it took. One TAP line
 * for the whole scenario, with the first bad trial as a diagnostic, so the
 * plan does not depend on N.
 */
#ifndef SR_TEST_OOM_TRIALS_H
#define SR_TEST_OOM_TRIALS_H

#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "oom.h"
#include "util.h"

struct oom_scenario {
	const char *name;	/* "sr_sigv4_sign of the suite's cases" */
	enum oom_scope scope;
	/* The operation: 0, or -1 with err. */
	int (*op)(void *arg, char *err);
	/* After op returned 0: 1 when its result is exactly right (else 0,
	 * with why); then frees that result. NULL: nothing to check. */
	int (*exact)(void *arg, char *why, size_t len);
	/* After op returned -1: 1 when the state is as before (else 0, with
	 * why). NULL: nothing to check. */
	int (*intact)(void *arg, char *why, size_t len);
	void *arg;
	/* OOM_ALL over a library that absorbs a failed allocation and
	 * succeeds (OpenSSL keeping a cache entry out, to add it later): the
	 * bytes in use are then compared after failed trials only. */
	int lib_absorbs;
	/* The bytes in use to compare before and after each trial; NULL:
	 * oom_in_use (the whole heap). Through libcurl, whose heap moves from
	 * one request to the next with nothing leaked: tests/heap-ours.h's
	 * count of spotrun's own allocations. */
	size_t (*in_use)(void);
};

/* What the trials of one or more scenarios came to. */
struct oom_tally {
	long count;		/* allocations counted (the trials' n went up to these) */
	long trials;
	long failed;		/* trials whose operation returned -1 */
	int unarmed_bad;	/* an unarmed run did not succeed exactly */
	char first[4 * SR_ERRMAX];	/* the first bad trial, "" when none */
};

/* Run sc's trials, adding them to t (zeroed by the caller). */
__attribute__((unused)) static void
oom_trials_run(const struct oom_scenario *sc, struct oom_tally *t)
{
	char err[SR_ERRMAX], why[SR_ERRMAX], err2[SR_ERRMAX] = "", why2[SR_ERRMAX] = "";
	size_t (*in_use)(void) = sc->in_use != NULL ? sc->in_use : oom_in_use;
	long n, count = 0;
	size_t before, after;
	int persist, rc, good;

	/* warm-up, then the count (both must succeed exactly); every trial
	 * starts from the state an unarmed run leaves */
	for (n = 0; n < 2; n++) {
		why[0] = err[0] = '\0';
		if (n == 1)
			oom_arm(0, 0, sc->scope);
		rc = sc->op(sc->arg, err);
		if (n == 1)
			count = oom_disarm();
		if (rc != 0 || (sc->exact != NULL && !sc->exact(sc->arg, why, sizeof why))) {
			if (t->first[0] == '\0')
				snprintf(t->first, sizeof t->first, "%s: unarmed: rc %d, err '%s' %s",
				    sc->name, rc, err, why);
			t->unarmed_bad = 1;
			return;
		}
	}
	t->count += count;
	for (n = 1; n <= count; n++) {
		for (persist = 0; persist <= 1; persist++) {
			why[0] = err[0] = '\0';
			before = in_use();
			oom_arm(n, persist, sc->scope);
			rc = sc->op(sc->arg, err);
			oom_disarm();
			t->trials++;
			if (rc == 0)
				good = sc->exact == NULL || sc->exact(sc->arg, why, sizeof why);
			else {
				t->failed++;
				good = rc == -1 && sr_err_is_oom(err) &&
				    (sc->intact == NULL || sc->intact(sc->arg, why, sizeof why));
			}
			/* unarmed once more before measuring: what a library
			 * caches lazily (OpenSSL's method store, a cache entry
			 * a failed allocation kept out) is back as it was, so
			 * that only what the trial leaked shows */
			if (sc->op(sc->arg, err2) != 0 || (sc->exact != NULL &&
			    !sc->exact(sc->arg, why2, sizeof why2))) {
				if (good)
					snprintf(why, sizeof why, "the unarmed run after it: '%s' %s",
					    err2, why2);
				good = 0;
			}
			after = in_use();
			if (good && after != before && !(rc == 0 && sc->lib_absorbs)) {
				good = 0;
				snprintf(why, sizeof why, "%zd bytes not given back",
				    (ssize_t)(after - before));
			}
			if (!good && t->first[0] == '\0')
				snprintf(t->first, sizeof t->first, "%s: n %ld, persist %d: rc %d, "
				    "err '%s'%s%s", sc->name, n, persist, rc, err,
				    why[0] != '\0' ? ", " : "", why);
		}
	}
}

/* Report t as one ok() named name: every trial good, and the injection
 * reached something (some trial failed). */
__attribute__((unused)) static void
oom_tally_report(const struct oom_tally *t, const char *name)
{
	ok(t->first[0] == '\0' && !t->unarmed_bad && t->failed > 0, "%ld trials of %s under "
	    "OOM: each failed cleanly or succeeded exactly", t->trials, name);
	if (t->first[0] != '\0')
		tap_diag("first bad trial: %s", t->first);
	else if (t->failed == 0)
		tap_diag("%ld allocations counted, no trial failed: the injection reached nothing",
		    t->count);
}

/*
 * glibc's per-thread cache keeps freed chunks counted as in use by
 * mallinfo2 (oom_in_use), so a trial that freed all it took could read as
 * a leak: run the program again, once, with the cache off. Call first in
 * main; returns only when it is off (or the exec failed: then trials may
 * report what the cache holds).
 */
__attribute__((unused)) static void
oom_trials_exact_heap(char **argv)
{
	static const char off[] = "glibc.malloc.tcache_count=0";
	const char *t = getenv("GLIBC_TUNABLES");
	char v[1024];

	if (!oom_usable() || (t != NULL && strstr(t, off) != NULL))
		return;
	snprintf(v, sizeof v, "%s%s%s", t != NULL ? t : "", t != NULL ? ":" : "", off);
	if (setenv("GLIBC_TUNABLES", v, 1) == 0)
		execv("/proc/self/exe", argv);
}

/* Whether the trials can run: under AddressSanitizer they cannot, and
 * name's line says so as a skip. */
__attribute__((unused)) static int
oom_trials_usable(const char *name)
{
	if (oom_usable())
		return 1;
	ok(1, "%s under OOM # SKIP AddressSanitizer owns malloc", name);
	return 0;
}

/* One scenario, one ok(). */
__attribute__((unused)) static void
oom_trials(const struct oom_scenario *sc)
{
	struct oom_tally t;

	if (!oom_trials_usable(sc->name))
		return;
	memset(&t, 0, sizeof t);
	oom_trials_run(sc, &t);
	oom_tally_report(&t, sc->name);
}

#endif
