/*
 * units.c: durations and byte sizes as written in job files (see units.h
 * and doc/spotrun-job.5). Strict on purpose: "20 minutes", "5M" or "30m1h"
 * are rejected rather than guessed at, so a typo becomes an error message
 * instead of a job that checkpoints every 20 seconds.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "units.h"
#include "util.h"

static const struct {
	const char *name;
	double seconds;
} duration_units[] = {	/* largest first: the order pairs must follow */
	{ "d", 86400 },
	{ "h", 3600 },
	{ "m", 60 },
	{ "s", 1 },
	{ "ms", 0.001 },
};

/* Read DIGITS[.DIGITS] at *sp into *v; 0, or -1 when there is none. */
static int
read_number(const char **sp, double *v)
{
	const char *s = *sp;
	double n = 0, scale = 1;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		n = n * 10 + (*s - '0');
		s++;
	}
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -1;
		while (*s >= '0' && *s <= '9') {
			scale /= 10;
			n += (*s - '0') * scale;
			s++;
		}
	}
	*sp = s;
	*v = n;
	return 0;
}

int
sr_parse_duration(const char *s, double *out)
{
	double total = 0, n;
	size_t next = 0, i, len;

	if (strcmp(s, "0") == 0) {
		*out = 0;
		return 0;
	}
	if (*s == '\0')
		return -1;
	/* The whole value is read before its size is judged: a long run of
	 * digits with a unit is a duration out of range, while one that goes
	 * on into a typo is not a duration at all. */
	while (*s != '\0') {
		if (read_number(&s, &n) == -1)
			return -1;
		/* The unit: letters up to the next digit or the end. */
		for (len = 0; s[len] >= 'a' && s[len] <= 'z'; len++)
			;
		for (i = next; i < SR_ARRAY_LEN(duration_units); i++) {
			if (strlen(duration_units[i].name) == len &&
			    strncmp(s, duration_units[i].name, len) == 0)
				break;
		}
		if (len == 0 || i == SR_ARRAY_LEN(duration_units))
			return -1;
		total += n * duration_units[i].seconds;	/* inf at worst, never a trap */
		next = i + 1;
		s += len;
	}
	if (!(total <= SR_DURATION_MAX))
		return -2;
	*out = total;
	return 0;
}

static const struct {
	const char *name;
	uint64_t bytes;
} size_units[] = {
	{ "", 1 },
	{ "b", 1 },
	{ "kib", 1ULL << 10 },
	{ "mib", 1ULL << 20 },
	{ "gib", 1ULL << 30 },
	{ "tib", 1ULL << 40 },
	{ "kb", 1000ULL },
	{ "mb", 1000ULL * 1000 },
	{ "gb", 1000ULL * 1000 * 1000 },
	{ "tb", 1000ULL * 1000 * 1000 * 1000 },
};

int
sr_parse_size(const char *s, uint64_t *out)
{
	uint64_t n = 0;
	size_t i;
	int over = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (n > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			over = 1;	/* still digits: too large, unless a typo follows */
		else
			n = n * 10 + (uint64_t)(*s - '0');
	}
	for (i = 0; i < SR_ARRAY_LEN(size_units); i++) {
		if (strcasecmp(s, size_units[i].name) == 0)
			break;
	}
	if (i == SR_ARRAY_LEN(size_units))
		return -1;
	if (over || n > UINT64_MAX / size_units[i].bytes)
		return -2;
	*out = n * size_units[i].bytes;
	return 0;
}
