/*
 * bench-goodput.c: what checkpointing on the notice is worth, computed on a
 * real spot trace with the trace API (providers/trace.h). A model, not a
 * run: the end-to-end measurement replays the same trace through spotrun.
 *
 * Model. Each up-period of the trace is one VM, paid for its whole length;
 * the job resumes at once from its last committed checkpoint on the next one
 * (restore time and the down-time between VMs are not counted: nobody pays
 * for a VM that is not there). The job works, and every INTERVAL seconds of
 * work stops for a synchronous checkpoint of C seconds; the work before it is
 * safe once it completes.
 *  (a) periodic only: the preemption at the end of a period loses the work
 *      since the last completed checkpoint.
 *  (b) periodic + on notice: the notice comes WINDOW seconds before the end
 *      (at the start when the period is shorter); the job stops and
 *      checkpoints at once. If the C seconds fit before the end, all work up
 *      to the notice is safe; if not, the loss is as in (a). A periodic
 *      checkpoint already running at the notice is let finish instead (a new
 *      one would end later), and is kept if it ends before the machine goes.
 * A period still up at the end of the trace is not preempted: its work
 * counts. Goodput = safe work / paid up-time.
 *
 * Usage: bench-goodput TRACE [INTERVAL_SECONDS]  (default 1800)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "util.h"

/* Safe work (seconds) in a period of length len. window < 0: no notice. */
static double
simulate(double len, int reaches_end, double interval, double c, double window)
{
	double t = 0, safe = 0, pending = 0, notice = -1;

	if (window >= 0 && !reaches_end)
		notice = len > window ? len - window : 0;
	for (;;) {
		/* Work until the next checkpoint, the notice or the end. */
		double stop = t + interval;

		if (notice >= 0 && notice < stop) {
			pending += notice - t;
			break;
		}
		if (len <= stop) {
			pending += len - t;
			return safe + (reaches_end ? pending : 0);
		}
		pending += interval;
		t = stop;
		/* A periodic checkpoint of c seconds. */
		stop = t + c;
		if (notice >= 0 && notice < stop) {
			/* Restarting it at the notice would end later: let it
			 * finish if it can, and stop there. */
			return safe + (stop <= len ? pending : 0);
		}
		if (len < stop)
			return safe + (reaches_end ? pending : 0);
		safe += pending;
		pending = 0;
		t = stop;
	}
	/* At the notice: checkpoint everything if it fits before the end. */
	if (notice + c <= len)
		safe += pending;
	return safe;
}

static double
goodput(const struct sr_trace *tr, double interval, double c, double window)
{
	double safe = 0, paid = 0;
	size_t k;

	for (k = 0; k < sr_trace_nperiods(tr); k++) {
		const struct sr_trace_period *p = sr_trace_period(tr, k);

		paid += p->length;
		safe += simulate(p->length, p->reaches_end, interval, c, window);
	}
	return safe / paid;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	static const double costs[] = { 10, 30, 60, 120, 300 };
	static const double windows[] = { 120, 30 };	/* AWS; GCP and Azure */
	char err[SR_ERRMAX], b1[32];
	struct sr_trace *tr;
	double interval = 1800, up = 0, *lens, median;
	size_t i, j, n;
	const char *name;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench-goodput TRACE [INTERVAL_SECONDS]\n");
		return 64;
	}
	if (argc == 3 && !((interval = strtod(argv[2], NULL)) > 0)) {
		fprintf(stderr, "bench-goodput: interval %s: must be a number > 0\n", argv[2]);
		return 64;
	}
	if (sr_trace_load(argv[1], &tr, err) == -1) {
		fprintf(stderr, "bench-goodput: %s\n", err);
		return 1;
	}
	n = sr_trace_nperiods(tr);
	lens = sr_calloc(n, sizeof *lens);
	for (i = 0; i < n; i++) {
		lens[i] = sr_trace_period(tr, i)->length;
		up += lens[i];
	}
	qsort(lens, n, sizeof *lens, cmp_double);
	median = n % 2 ? lens[n / 2] : (lens[n / 2 - 1] + lens[n / 2]) / 2;
	name = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
	printf("trace %s: %zu up-periods, %.1f h up of %.1f h, median up %.2f h\n",
	    name, n, up / 3600, sr_trace_duration(tr) / 3600, median / 3600);
	printf("periodic checkpoint every %s of work, taking C seconds\n",
	    sr_fmt_duration(interval, b1, sizeof b1));
	printf("goodput = work kept / up-time paid\n\n");
	printf("%8s  %14s", "C", "periodic only");
	for (j = 0; j < SR_ARRAY_LEN(windows); j++)
		printf("  + on notice (%3.0f s)", windows[j]);
	printf("\n");
	for (i = 0; i < SR_ARRAY_LEN(costs); i++) {
		printf("%6.0f s  %13.1f%%", costs[i], 100 * goodput(tr, interval, costs[i], -1));
		for (j = 0; j < SR_ARRAY_LEN(windows); j++)
			printf("  %19.1f%%", 100 * goodput(tr, interval, costs[i], windows[j]));
		printf("\n");
	}
	free(lens);
	sr_trace_free(tr);
	return 0;
}
