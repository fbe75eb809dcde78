/*
 * tap.h: a tiny TAP producer for the C unit tests (automake's tap-driver
 * reads it). Header-only: each test program includes it once.
 *
 *   tap_plan(3); ok(x == 1, "x is one"); is_int(a, b, "..."); is_str(...);
 *   return tap_done();
 * Without tap_plan, tap_done prints the plan at the end.
 */
#ifndef SR_TAP_H
#define SR_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tap_state {
	int planned;
	int run;
	int failed;
};

static struct tap_state tap_st;

__attribute__((unused)) static void
tap_plan(int n)
{
	tap_st.planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

__attribute__((unused)) static void
tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	exit(0);
}

static int
tap_vok(int cond, const char *fmt, va_list ap)
{
	tap_st.run++;
	if (!cond)
		tap_st.failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_st.run);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 2, 3))) static int
ok(int cond, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vok(cond, fmt, ap);
	va_end(ap);
	return r;
}

__attribute__((unused)) static void
tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* One test that cannot run in this build, counted as passed with its
 * reason ("ok N - # SKIP REASON"): keeps the plan the same. */
__attribute__((unused)) static void
tap_skip(const char *reason)
{
	printf("ok %d - # SKIP %s\n", ++tap_st.run, reason);
	fflush(stdout);
}

#define is_int(got, want, ...) do {                                     \
	long long tap_g = (long long)(got), tap_w = (long long)(want);  \
	if (!ok(tap_g == tap_w, __VA_ARGS__))                           \
		tap_diag("got %lld, want %lld", tap_g, tap_w);          \
} while (0)

#define is_str(got, want, ...) do {                                     \
	const char *tap_g = (got), *tap_w = (want);                     \
	if (!ok(tap_g != NULL && tap_w != NULL && strcmp(tap_g, tap_w) == 0, __VA_ARGS__)) \
		tap_diag("got '%s'\n# want '%s'", tap_g ? tap_g : "(null)", tap_w ? tap_w : "(null)"); \
} while (0)

static int
tap_done(void)
{
	if (tap_st.planned == 0)
		printf("1..%d\n", tap_st.run);	/* plan at the end */
	else if (tap_st.planned != tap_st.run)
		printf("# planned %d tests, ran %d\n", tap_st.planned, tap_st.run);
	return 0;
}

#endif
