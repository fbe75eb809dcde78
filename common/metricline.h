/*
 * metricline.h: one line of a job's metrics (doc/spotrun.1, METRICS), the
 * format any program can write to $SPOTRUN_METRICS:
 *
 *	step=120 loss=0.4312 acc=0.871
 *
 * fields separated by spaces or tabs, each NAME=VALUE; step= exactly once
 * (anywhere), a decimal integer from 0 to SR_METRICS_STEP_MAX; every other
 * NAME starts with a letter or '_' and goes on with letters, digits and
 * "_.-/" (at most SR_METRICS_NAME_MAX bytes, each name once a line), its
 * VALUE a finite number as strtod(3) reads it in the C locale (nan and inf
 * are not). At least one metric, at most SR_METRICS_PER_LINE; at most
 * SR_METRICS_LINE_MAX bytes. An empty line, or one whose first non-blank
 * byte is '#', is no line at all (skipped, not bad). Parsed here and
 * nowhere else: the supervisor checks what the job wrote, the readers of
 * the store read back what it shipped (the same text, normalised).
 */
#ifndef SR_METRICLINE_H
#define SR_METRICLINE_H

#include <stddef.h>

#define SR_METRICS_LINE_MAX 1024
#define SR_METRICS_NAME_MAX 64
#define SR_METRICS_PER_LINE 32
#define SR_METRICS_STEP_MAX 999999999999999LL

struct sr_metric {
	char name[SR_METRICS_NAME_MAX + 1];
	double value;
};

struct sr_metrics_line {
	long long step;
	int n;
	struct sr_metric m[SR_METRICS_PER_LINE];
};

/* Parse len bytes at line (no newline; a trailing '\r' is allowed) into
 * out: 1 when it is a metrics line, 0 when it is empty or a comment (out
 * untouched), -1 when it is neither, with err saying why ("field 3
 * 'loss=x': not a number"), the line's text not quoted beyond its field. */
int sr_metrics_parse(const char *line, size_t len, struct sr_metrics_line *out, char *err);

/* The line's normal form, "step=N name=value ...\n" (values as "%.15g"),
 * into buf: its length, or 0 when it does not fit len bytes (it fits
 * SR_METRICS_LINE_MAX + SR_METRICS_PER_LINE * 24 always). */
size_t sr_metrics_format(const struct sr_metrics_line *l, char *buf, size_t len);

/* Whether name (NUL-terminated) is a valid metric name, step included. */
int sr_metrics_name_ok(const char *name);

#endif
