/*
 * netopts.c: what every network store reads alike from its URL (netops.h):
 * the key prefix after the bucket or container, sizes, the requests in
 * flight, the tries per request, the stall timeout, the parts' checksum,
 * with their bounds and messages, and the defaults they start from.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netops.h"
#include "store-int.h"
#include "util.h"

uint64_t
sr_net_parse_size(const char *v)
{
	char *end;
	unsigned long long n;
	uint64_t mul = 1;

	if (*v == '-')
		return 0;
	n = strtoull(v, &end, 10);
	if (end == v)
		return 0;
	if (*end == 'K' || *end == 'k')
		mul = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1024 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1024ULL * 1024 * 1024, end++;
	if (*end == 'i' && mul > 1)
		end++;
	if (*end == 'B' && mul > 1)
		end++;
	if (*end != '\0')
		return 0;
	return (uint64_t)n * mul;
}

int
sr_net_bad_option(const char *url, const char *name, const char *why, char *err)
{
	return sr_err(err, "open store %s: option %s: %s", url, name, why);
}

/* A whole number from lo to hi, else -1. */
static long
whole(const char *v, long lo, long hi)
{
	char *end;
	long n = strtol(v, &end, 10);

	return end != v && *end == '\0' && n >= lo && n <= hi ? n : -1;
}

void
sr_net_tuning_defaults(struct sr_xfer_tuning *t)
{
	/* bench/s3.sh: as fast as 16-64 MiB parts, and in the 256 MiB budget */
	t->part_size = 8 * 1024 * 1024;
	t->concurrency = 8;
	t->part_sum = SR_SUM_MD5;
	t->attempts = 8;
	t->stall_timeout = 30;
}

int
sr_net_tuning_option(struct sr_xfer_tuning *t, const char *url, const char *name,
    const char *v, char *err)
{
	long n;

	if (strcmp(name, "concurrency") == 0) {
		if ((n = whole(v, 1, 64)) < 0)
			return sr_net_bad_option(url, name, "want 1 to 64 requests in flight (an "
			    "upload's parts, a restore's ranged reads)", err);
		t->concurrency = (int)n;
	} else if (strcmp(name, "attempts") == 0) {
		if ((n = whole(v, 1, 100)) < 0)
			return sr_net_bad_option(url, name, "want 1 to 100 tries per request", err);
		t->attempts = (int)n;
	} else if (strcmp(name, "stall_timeout") == 0) {
		char *end;
		double d = strtod(v, &end);

		if (end == v || *end != '\0' || !(d >= 1 && d <= 3600))
			return sr_net_bad_option(url, name, "want 1 to 3600 seconds", err);
		t->stall_timeout = d;
	} else
		return 0;
	return 1;
}

char *
sr_net_prefix(const char *url, const char *rest, char *err)
{
	size_t n = rest != NULL ? strlen(rest) : 0;
	char *p, *out;

	while (n > 0 && rest[n - 1] == '/')
		n--;
	if (n == 0)
		p = sr_try_strdup("", err);
	else
		p = sr_try_strndup(rest, n, err);
	if (p == NULL) {
		sr_err_prefix(err, "open store %s", url);
		return NULL;
	}
	if (n == 0)
		return p;
	if (strstr(p, "//") != NULL) {
		sr_err(err, "open store %s: the prefix has an empty segment", url);
		free(p);
		return NULL;
	}
	if (sr_store_prefix_check("open store", p, err) == -1) {
		free(p);
		return NULL;
	}
	out = sr_try_asprintf(err, "%s/", p);
	free(p);
	if (out == NULL)
		sr_err_prefix(err, "open store %s", url);
	return out;
}

int
sr_net_sum_option(struct sr_xfer_tuning *t, const char *url, const char *name, const char *v,
    const enum sr_sum *allowed, size_t n, char *err)
{
	static const char *const names[] = { [SR_SUM_NONE] = "none", [SR_SUM_MD5] = "md5",
		[SR_SUM_CRC64] = "crc64", [SR_SUM_SHA256] = "sha256" };
	char want[64];
	size_t i, o;

	for (i = 0; i < n; i++) {
		if (strcmp(v, names[allowed[i]]) == 0) {
			t->part_sum = allowed[i];
			return 0;
		}
	}
	o = (size_t)snprintf(want, sizeof want, "want");
	for (i = 0; i < n && o < sizeof want; i++)
		o += (size_t)snprintf(want + o, sizeof want - o, "%s %s", i == 0 ? "" : i + 1 < n ?
		    "," : " or", names[allowed[i]]);
	return sr_net_bad_option(url, name, want, err);
}
