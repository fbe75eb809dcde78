/*
 * metricline.c: see metricline.h. One line at a time, no allocation: what
 * the job writes is anyone's bytes, and a bad line costs one message.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metricline.h"
#include "util.h"

int
sr_metrics_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > SR_METRICS_NAME_MAX)
		return 0;
	if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
	    name[0] == '_'))
		return 0;
	for (i = 1; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '.' || c == '-' || c == '/'))
			return 0;
	}
	return 1;
}

/* The field (at most 40 bytes of it, control bytes as '?') for a message. */
static const char *
quote(const char *p, size_t n, char *buf, size_t len)
{
	size_t i, k = n < 40 ? n : 40;

	if (k > len - 4)
		k = len - 4;
	for (i = 0; i < k; i++)
		buf[i] = (unsigned char)p[i] < 0x20 || (unsigned char)p[i] >= 0x7f ? '?' : p[i];
	if (k < n) {
		memcpy(buf + k, "...", 3);
		k += 3;
	}
	buf[k] = '\0';
	return buf;
}

/* One NAME=VALUE field (n bytes at p, field number f) into l. */
static int
field(const char *p, size_t n, int f, int *have_step, struct sr_metrics_line *l, char *err)
{
	const char *eq = memchr(p, '=', n);
	char name[SR_METRICS_NAME_MAX + 1], val[64], q[48], *end;
	size_t nl, vl;
	double v;
	int i;

	if (eq == NULL)
		return sr_err(err, "field %d '%s': not NAME=VALUE", f, quote(p, n, q, sizeof q));
	nl = (size_t)(eq - p);
	vl = n - nl - 1;
	if (nl == 0 || nl > SR_METRICS_NAME_MAX)
		return sr_err(err, "field %d '%s': a name of 1 to %d bytes, then =", f,
		    quote(p, n, q, sizeof q), SR_METRICS_NAME_MAX);
	memcpy(name, p, nl);
	name[nl] = '\0';
	if (!sr_metrics_name_ok(name))
		return sr_err(err, "field %d '%s': a name starts with a letter or _ and has "
		    "letters, digits and _.-/ only", f, quote(p, n, q, sizeof q));
	if (vl == 0 || vl >= sizeof val)
		return sr_err(err, "field %d '%s': no value, or one too long", f,
		    quote(p, n, q, sizeof q));
	memcpy(val, eq + 1, vl);
	val[vl] = '\0';
	if (strcmp(name, "step") == 0) {
		long long s;

		if (*have_step)
			return sr_err(err, "field %d: step= twice", f);
		for (i = 0; val[i] != '\0'; i++)
			if (val[i] < '0' || val[i] > '9' || i >= 15)
				return sr_err(err, "field %d '%s': the step is a whole number from 0 to "
				    "%lld", f, quote(p, n, q, sizeof q), SR_METRICS_STEP_MAX);
		s = strtoll(val, NULL, 10);
		l->step = s;
		*have_step = 1;
		return 0;
	}
	errno = 0;
	v = strtod(val, &end);
	if (*end != '\0' || end == val)
		return sr_err(err, "field %d '%s': not a number", f, quote(p, n, q, sizeof q));
	if (!isfinite(v))
		return sr_err(err, "field %d '%s': not a finite number", f, quote(p, n, q, sizeof q));
	for (i = 0; i < l->n; i++)
		if (strcmp(l->m[i].name, name) == 0)
			return sr_err(err, "field %d: %s twice", f, name);
	if (l->n == SR_METRICS_PER_LINE)
		return sr_err(err, "more than %d metrics", SR_METRICS_PER_LINE);
	memcpy(l->m[l->n].name, name, nl + 1);
	l->m[l->n].value = v;
	l->n++;
	return 0;
}

int
sr_metrics_parse(const char *line, size_t len, struct sr_metrics_line *out, char *err)
{
	struct sr_metrics_line l;
	size_t i = 0, start;
	int f = 0, have_step = 0;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len || line[i] == '#')
		return 0;
	if (len > SR_METRICS_LINE_MAX)
		return sr_err(err, "%zu bytes: a line has at most %d", len, SR_METRICS_LINE_MAX);
	if (memchr(line, '\0', len) != NULL)
		return sr_err(err, "a NUL byte in the line");
	l.n = 0;
	l.step = -1;
	while (i < len) {
		start = i;
		while (i < len && line[i] != ' ' && line[i] != '\t')
			i++;
		if (field(line + start, i - start, ++f, &have_step, &l, err) == -1)
			return -1;
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
	}
	if (!have_step)
		return sr_err(err, "no step=N");
	if (l.n == 0)
		return sr_err(err, "no metric beside the step");
	*out = l;
	return 1;
}

size_t
sr_metrics_format(const struct sr_metrics_line *l, char *buf, size_t len)
{
	size_t k;
	int i, w;

	w = snprintf(buf, len, "step=%lld", l->step);
	if (w < 0 || (size_t)w >= len)
		return 0;
	k = (size_t)w;
	for (i = 0; i < l->n; i++) {
		w = snprintf(buf + k, len - k, " %s=%.15g", l->m[i].name, l->m[i].value);
		if (w < 0 || (size_t)w >= len - k)
			return 0;
		k += (size_t)w;
	}
	if (k + 1 >= len)
		return 0;
	buf[k++] = '\n';
	buf[k] = '\0';
	return k;
}
