/*
 * jobkeys.c: see jobkeys.h. Every key of a job is formatted and parsed
 * here and nowhere else (tests/house.py checks that no other product file
 * spells one), so that the layout doc/format.md describes is this file.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobkeys.h"
#include "util.h"

static const char *const dirs[] = {
	[SR_JOBKEY_MANIFESTS] = "manifests",
	[SR_JOBKEY_PACKS] = "packs",
	[SR_JOBKEY_PARTS] = "parts",
	[SR_JOBKEY_ATTEMPTS] = "attempts",
	[SR_JOBKEY_METRICS] = "metrics",
};

char *
sr_jobkey_prefix(const char *job, enum sr_jobkey_dir dir, char *err)
{
	return sr_try_asprintf(err, "%s/%s/", job, dirs[dir]);
}

#define WORKDIR_PREFIX "_workdir/"

char *
sr_jobkey_workdir(const char *name, char *err)
{
	return sr_try_asprintf(err, WORKDIR_PREFIX "%s", name);
}

size_t
sr_jobkey_reserved_len(const char *job)
{
	size_t n = strlen(WORKDIR_PREFIX);

	return strncmp(job, WORKDIR_PREFIX, n) == 0 ? n : 0;
}

char *
sr_jobkey_latest(const char *job, char *err)
{
	return sr_try_asprintf(err, SR_JOBKEY_LATEST_FMT, job);
}

char *
sr_jobkey_manifest(const char *job, uint64_t seq, char *err)
{
	return sr_try_asprintf(err, "%s/manifests/%0*" PRIu64 ".json", job, SR_SEQ_DIGITS, seq);
}

char *
sr_jobkey_commit(const char *job, uint64_t seq, char *err)
{
	return sr_try_asprintf(err, "%s/manifests/%0*" PRIu64 ".commit", job, SR_SEQ_DIGITS, seq);
}

char *
sr_jobkey_pack(const char *job, uint64_t seq, const char *hex, char *err)
{
	return sr_try_asprintf(err, "%s/packs/%0*" PRIu64 "-%s.tar", job, SR_SEQ_DIGITS, seq, hex);
}

char *
sr_jobkey_node_part(const char *job, int64_t epoch, long long step, int node, char *err)
{
	return sr_try_asprintf(err, "%s/parts/%lld-%lld-%d.json", job, (long long)epoch, step,
	    node);
}

char *
sr_jobkey_rank_part(const char *job, uint64_t epoch, long long step, int rank, char *err)
{
	return sr_try_asprintf(err, "%s/parts/%" PRIu64 "-%lld-rank%d.json", job, epoch, step,
	    rank);
}

char *
sr_jobkey_parts_of_epoch(const char *job, uint64_t epoch, char *err)
{
	return sr_try_asprintf(err, "%s/parts/%" PRIu64 "-", job, epoch);
}

char *
sr_jobkey_attempt(const char *job, const char *run, int attempt, char *err)
{
	return sr_try_asprintf(err, "%s/attempts/%s-%04d.json", job, run, attempt);
}

char *
sr_jobkey_finished(const char *job, char *err)
{
	return sr_try_asprintf(err, "%s/FINISHED", job);
}

/* The rest of key after "J/DIR/", or NULL when key is not under it. */
static const char *
under(const char *job, enum sr_jobkey_dir dir, const char *key)
{
	size_t n = strlen(job), d = strlen(dirs[dir]);

	if (strncmp(key, job, n) != 0 || key[n] != '/' || strncmp(key + n + 1, dirs[dir], d) != 0 ||
	    key[n + 1 + d] != '/')
		return NULL;
	return key + n + d + 2;
}

/* Parse exactly SR_SEQ_DIGITS digits at s; returns the end or NULL. */
static const char *
parse_seq(const char *s, uint64_t *seq)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < SR_SEQ_DIGITS; i++) {
		if (s[i] < '0' || s[i] > '9')
			return NULL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*seq = v;
	return s + SR_SEQ_DIGITS;
}

/* 0 and *seq when key is exactly J/manifests/<seq><ext>. */
static int
manifests_seq(const char *job, const char *key, const char *ext, uint64_t *seq)
{
	const char *p = under(job, SR_JOBKEY_MANIFESTS, key);
	uint64_t v;

	if (p == NULL || (p = parse_seq(p, &v)) == NULL || strcmp(p, ext) != 0)
		return -1;
	*seq = v;
	return 0;
}

int
sr_jobkey_manifest_seq(const char *job, const char *key, uint64_t *seq)
{
	return manifests_seq(job, key, ".json", seq);
}

int
sr_jobkey_manifest_split(const char *key, char **job, uint64_t *seq, char *err)
{
	const char *m = NULL, *p;
	char *j;

	for (p = strstr(key, "/manifests/"); p != NULL; p = strstr(p + 1, "/manifests/"))
		m = p;		/* the last: a job's name may hold "manifests" */
	if (m == NULL || m == key)
		return sr_err(err, "%s is not the key of a manifest", key);
	if ((j = sr_try_strndup(key, (size_t)(m - key), err)) == NULL)
		return -1;
	if (sr_jobkey_manifest_seq(j, key, seq) == -1) {
		free(j);
		return sr_err(err, "%s is not the key of a manifest", key);
	}
	*job = j;
	return 0;
}

int
sr_jobkey_commit_seq(const char *job, const char *key, uint64_t *seq)
{
	return manifests_seq(job, key, ".commit", seq);
}

int
sr_jobkey_is_pack(const char *job, const char *key)
{
	const char *p = under(job, SR_JOBKEY_PACKS, key);
	uint64_t seq;

	if (p == NULL || (p = parse_seq(p, &seq)) == NULL || *p++ != '-')
		return 0;
	if (strspn(p, "0123456789abcdef") == 0)
		return 0;
	p += strspn(p, "0123456789abcdef");
	return strcmp(p, ".tar") == 0;
}

int
sr_jobkey_rank_part_parse(const char *job, const char *key, uint64_t *epoch,
    long long *step, int *rank)
{
	const char *p = under(job, SR_JOBKEY_PARTS, key);
	unsigned long long e;
	long long s;
	int r, used = 0;

	if (p == NULL || sscanf(p, "%llu-%lld-rank%d.json%n", &e, &s, &r, &used) != 3 ||
	    p[used] != '\0')
		return -1;
	*epoch = e;
	*step = s;
	*rank = r;
	return 0;
}

int
sr_jobkey_is_part(const char *job, const char *key)
{
	const char *p = under(job, SR_JOBKEY_PARTS, key);
	unsigned long long e;
	long long s;
	int n, used = 0;

	if (p == NULL)
		return 0;
	if (sscanf(p, "%llu-%lld-%d.json%n", &e, &s, &n, &used) == 3 && p[used] == '\0')
		return 1;
	used = 0;
	return sscanf(p, "%llu-%lld-rank%d.json%n", &e, &s, &n, &used) == 3 && p[used] == '\0';
}

int
sr_jobkey_is_attempt(const char *key)
{
	size_t len = strlen(key);

	return len >= 5 && strcmp(key + len - 5, ".json") == 0;
}

char *
sr_jobkey_metrics(const char *job, int64_t run, int attempt, int seg, char *err)
{
	if (run < 0 || run > 999999999999LL || attempt < 0 || attempt > 9999 || seg < 0 ||
	    seg > 999999) {
		sr_err(err, "metrics of %s: run %lld, attempt %d or segment %d out of range", job,
		    (long long)run, attempt, seg);
		return NULL;
	}
	return sr_try_asprintf(err, "%s/metrics/%012lld-%04d-%06d.txt", job, (long long)run,
	    attempt, seg);
}

int
sr_jobkey_metrics_parse(const char *job, const char *key, int64_t *run, int *attempt)
{
	size_t jl = strlen(job), i;
	const char *p;
	char tail[8];
	long long r;
	int a, s, n = 0;

	if (strncmp(key, job, jl) != 0 || strncmp(key + jl, "/metrics/", 9) != 0)
		return -1;
	p = key + jl + 9;
	/* fixed widths: 12 digits, '-', 4, '-', 6, ".txt" */
	if (strlen(p) != 12 + 1 + 4 + 1 + 6 + 4)
		return -1;
	for (i = 0; i < 12 + 1 + 4 + 1 + 6; i++)
		if ((i == 12 || i == 17) ? p[i] != '-' : (p[i] < '0' || p[i] > '9'))
			return -1;
	if (sscanf(p, "%12lld-%4d-%6d%4s%n", &r, &a, &s, tail, &n) != 4 ||
	    strcmp(tail, ".txt") != 0 || p[n] != '\0')
		return -1;
	*run = r;
	*attempt = a;
	return 0;
}
