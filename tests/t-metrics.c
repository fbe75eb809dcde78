/*
 * t-metrics.c: the job's metrics (doc/spotrun.1, METRICS): the line
 * parser and its normal form (common/metricline.c), the segments' keys
 * (common/jobkeys.c), the shipper (runner/metrics.c: bad lines counted,
 * the cap's thinning, the last line kept, a line without newline) and the
 * reader's merge on a file:// store (several lines of a step, a resumed
 * attempt dropping the steps it did again).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobkeys.h"
#include "metricline.h"
#include "metrics.h"
#include "store.h"
#include "util.h"
#include "tap.h"

static int
parse(const char *s, struct sr_metrics_line *l, char *err)
{
	return sr_metrics_parse(s, strlen(s), l, err);
}

static void
t_parse(void)
{
	struct sr_metrics_line l;
	char err[SR_ERRMAX], buf[2048], big[1100];
	static const struct { const char *line, *why; } bad[] = {
		{ "loss=0.5", "no step=N" },
		{ "step=3", "no metric beside the step" },
		{ "step=3 loss", "field 2 'loss': not NAME=VALUE" },
		{ "step=3 loss=x", "field 2 'loss=x': not a number" },
		{ "step=3 loss=nan", "field 2 'loss=nan': not a finite number" },
		{ "step=3 loss=1e999", "field 2 'loss=1e999': not a finite number" },
		{ "step=-1 loss=1", "field 1 'step=-1': the step is a whole number from 0 to "
		    "999999999999999" },
		{ "step=1.5 loss=1", "field 1 'step=1.5': the step is a whole number from 0 to "
		    "999999999999999" },
		{ "step=1 step=2 loss=1", "field 2: step= twice" },
		{ "step=1 loss=1 loss=2", "field 3: loss twice" },
		{ "step=1 9x=1", "field 2 '9x=1': a name starts with a letter or _ and has letters, "
		    "digits and _.-/ only" },
		{ "step=1 a\033]0;x=1", "field 2 'a?]0;x=1': a name starts with a letter or _ and "
		    "has letters, digits and _.-/ only" },
		{ "{\"step\": 1, \"loss\": 2}", "field 1 '{\"step\":': not NAME=VALUE" },
	};
	size_t i;

	is_int(parse("step=120 loss=0.4312 acc=0.871", &l, err), 1, "a line parses");
	ok(l.step == 120 && l.n == 2 && strcmp(l.m[0].name, "loss") == 0 && l.m[0].value == 0.4312 &&
	    strcmp(l.m[1].name, "acc") == 0, "its step and metrics in order");
	sr_metrics_format(&l, buf, sizeof buf);
	is_str(buf, "step=120 loss=0.4312 acc=0.871\n", "its normal form");
	is_int(parse("  val/acc=1e-3\tstep=7   train.loss_2=-2 \r", &l, err), 1,
	    "tabs, spaces, a CR, step anywhere, names with / . _ digits");
	sr_metrics_format(&l, buf, sizeof buf);
	is_str(buf, "step=7 val/acc=0.001 train.loss_2=-2\n", "normalised: the step first");
	is_int(parse("", &l, err), 0, "an empty line is none");
	is_int(parse("   # a comment", &l, err), 0, "a comment is none");
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		is_int(parse(bad[i].line, &l, err), -1, "bad line %zu is refused", i);
		is_str(err, bad[i].why, "and says why");
	}
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	memcpy(big, "step=1 a=1 ", 11);
	is_int(parse(big, &l, err), -1, "a line over 1024 bytes is refused");
	is_str(err, "1099 bytes: a line has at most 1024", "saying its length");
	strcpy(buf, "step=1");
	for (i = 0; i < 33; i++)
		sprintf(buf + strlen(buf), " m%zu=1", i);
	is_int(parse(buf, &l, err), -1, "33 metrics are too many");
	is_str(err, "more than 32 metrics", "saying so");
}

static void
t_keys(void)
{
	char err[SR_ERRMAX], *k = sr_jobkey_metrics("j.1", 3, 2, 7, err);
	int64_t run = -1;
	int attempt = -1;

	is_str(k, "j.1/metrics/000000000003-0002-000007.txt", "a segment's key");
	is_int(sr_jobkey_metrics_parse("j.1", k, &run, &attempt), 0, "read back");
	ok(run == 3 && attempt == 2, "its run and attempt");
	free(k);
	is_int(sr_jobkey_metrics_parse("j.1", "j.1/metrics/000000000003-0002-00007.txt", &run,
	    &attempt), -1, "a key of another width is none");
	is_int(sr_jobkey_metrics_parse("j", "j.1/metrics/000000000003-0002-000007.txt", &run,
	    &attempt), -1, "nor another job's");
	ok(sr_jobkey_metrics("j", 0, 10000, 0, err) == NULL, "an attempt out of range: no key");
	k = sr_jobkey_prefix("j", SR_JOBKEY_METRICS, err);
	is_str(k, "j/metrics/", "the prefix");
	free(k);
}

static void
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	if (fd == -1 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		sr_fatal("write %s", path);
	close(fd);
}

/* The value of name at step, or -1 when there is none. */
static double
at(const struct sr_metrics_table *t, long long step, const char *name)
{
	size_t r;
	double v;

	for (r = 0; r < t->nrows; r++)
		if (t->rows[r].step == step && sr_metrics_value(t, r, sr_metrics_find(t, name), &v))
			return v;
	return -1;
}

static void
t_ship(const char *dir)
{
	struct sr_store *st;
	struct sr_metrics_ship *m;
	struct sr_metrics_counts c;
	struct sr_metrics_table t;
	char err[SR_ERRMAX], *url = sr_asprintf("file://%s/store", dir);
	char *path = sr_asprintf("%s/m", dir), line[128];
	size_t r;
	int i, sorted = 1;

	if (sr_store_open(url, &st, err) != 0)
		sr_fatal("%s", err);
	/* attempt 1: steps 1-20, a bad line, two lines of step 5 */
	m = sr_metrics_ship_start(st, "job", 1, 1, path, 0.05, err);
	ok(m != NULL, "the shipper starts");
	for (i = 1; i <= 20; i++) {
		snprintf(line, sizeof line, "step=%d loss=%d\n", i, 100 - i);
		write_file(path, line);
	}
	write_file(path, "step=5 acc=0.5\nthis is no metric\n");
	usleep(200000);
	write_file(path, "step=21 loss=79");	/* no newline: taken at the end */
	is_int(sr_metrics_ship_stop(m, &c, err), 0, "stopped: all shipped");
	ok(c.lines == 22 && c.kept == 22 && c.bad == 1 && c.thinned == 0,
	    "counts: 22 lines kept, 1 bad (%ld %ld %ld %ld)", c.lines, c.kept, c.bad, c.thinned);
	is_str(c.first_bad, "line 22: field 1 'this': not NAME=VALUE", "the first bad line, named");
	ok(c.segments >= 2, "in more than one segment (%d)", c.segments);
	/* attempt 2, resumed from step 10: 11-15 again, then 16 */
	m = sr_metrics_ship_start(st, "job", 1, 2, path, 0.05, err);
	write_file(path, "step=11 loss=1\nstep=12 loss=2\nstep=13 loss=3\n");
	sr_metrics_ship_stop(m, NULL, err);
	is_int(sr_metrics_read(st, "job", &t, err), 0, "read back");
	is_int((int)t.nrows, 13, "steps 1-13: those from 11 on are attempt 2's, 14-21 are gone");
	ok(at(&t, 10, "loss") == 90 && at(&t, 11, "loss") == 1 && at(&t, 13, "loss") == 3 &&
	    at(&t, 14, "loss") == -1, "each step from the attempt that did it last");
	ok(at(&t, 5, "loss") == 95 && at(&t, 5, "acc") == 0.5, "two lines of step 5 merged");
	for (r = 1; r < t.nrows; r++)
		sorted &= t.rows[r - 1].step < t.rows[r].step;
	ok(sorted, "in step order, each step once");
	sr_metrics_table_free(&t);

	/* the cap: 30000 lines; the first 10000 all, then thinned; the last kept */
	m = sr_metrics_ship_start(st, "cap", 1, 1, path, 3600, err);
	{
		FILE *f = fopen(path, "a");

		for (i = 0; i < 30001; i++)
			fprintf(f, "step=%d x=%d\n", i, i);
		fclose(f);
	}
	sr_metrics_ship_stop(m, &c, err);
	ok(c.lines == 30001 && c.kept + c.thinned == 30001, "the cap: every line counted");
	ok(c.kept == 10000 + 5000 + 2500 + 1, "10000 lines, then every 2nd step for 5000, every "
	    "4th after, and the last: %ld kept", c.kept);
	is_int(sr_metrics_read(st, "cap", &t, err), 0, "read back");
	ok(t.nrows == (size_t)c.kept && t.rows[9999].step == 9999 && t.rows[10000].step == 10000 &&
	    t.rows[10001].step == 10002 && t.rows[t.nrows - 1].step == 30000,
	    "steps 0-9999, 10000, 10002, ..., and the last, 30000");
	sr_metrics_table_free(&t);
	is_int(sr_metrics_read(st, "none", &t, err), 0, "a job with no metrics reads");
	ok(t.nrows == 0 && t.segments == 0, "as an empty table");
	sr_store_close(st);
	free(url);
	free(path);
}

int
main(void)
{
	char dir[] = "/tmp/t-metrics.XXXXXX", *cmd;

	tap_plan(60);
	t_parse();
	t_keys();
	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp");
	t_ship(dir);
	cmd = sr_asprintf("rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
	free(cmd);
	return tap_done();
}
