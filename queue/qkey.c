/*
 * qkey.c: the keys of the queue's markers (doc/fleet.md, "Key syntax"):
 * writing and strictly parsing pending and index markers, whose fields are
 * '~'-separated and, where free text, percent-encoded, so that every key
 * passes the store's key rules (no '/', no control characters) and sorts as
 * a claimer or a status reader needs (fixed-width numbers).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue-int.h"
#include "util.h"

#define PENDING "pending/"
#define INDEX "index/"
#define FIELDS_MAX 12

static int
plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '.' || c == '_' || c == '-';
}

/* Percent-encode s (at most max bytes of it) into out (len bytes). */
static const char *
enc(const char *s, size_t max, char *out, size_t len)
{
	size_t o = 0, i;

	for (i = 0; s[i] != '\0' && i < max && o + 4 < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (plain(c))
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, len - o, "%%%02X", c);
	}
	out[o] = '\0';
	return out;
}

void
sr_qkey_machine(const char *agent, char *key, size_t len)
{
	char e[SR_QUEUE_MACHINE_AGENT_MAX * 3 + 1];

	snprintf(key, len, "agents/%s", enc(agent, SR_QUEUE_MACHINE_AGENT_MAX, e, sizeof e));
}

int
sr_qkey_pool(const char *name, char *key, size_t len, char *err)
{
	const char *c;

	/* a pool's name as spotrun-pool(5) allows it: no encoding needed */
	for (c = name; *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
			break;
	if (name[0] == '\0' || *c != '\0' || strlen(name) > SR_QUEUE_POOL_NAME_MAX)
		return sr_err(err, "pool name \"%.64s\": want [a-z0-9-], at most %d characters",
		    name, SR_QUEUE_POOL_NAME_MAX);
	snprintf(key, len, "%s%s", SR_QKEY_POOLS, name);
	return 0;
}

/* Decode field f (n bytes) into out (cap bytes): 0, or -1. */
static int
dec(const char *f, size_t n, char *out, size_t cap)
{
	size_t o = 0, i;

	for (i = 0; i < n; i++) {
		int hi, lo;

		if (o + 1 >= cap)
			return -1;
		if (f[i] != '%') {
			if (!plain((unsigned char)f[i]))
				return -1;
			out[o++] = f[i];
			continue;
		}
		if (i + 2 >= n)
			return -1;
		hi = sr_hexval(f[i + 1]);
		lo = sr_hexval(f[i + 2]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			return -1;
		out[o++] = (char)(hi * 16 + lo);
		i += 2;
	}
	out[o] = '\0';
	return 0;
}

/* A field of a key: start and length. */
struct field {
	const char *s;
	size_t n;
};

/* Split s at '~' into exactly want fields. */
static int
split(const char *s, struct field *f, int want)
{
	int k = 0;

	for (;;) {
		const char *t = strchr(s, '~');

		if (k == want)
			return -1;
		f[k].s = s;
		f[k].n = t != NULL ? (size_t)(t - s) : strlen(s);
		k++;
		if (t == NULL)
			break;
		s = t + 1;
	}
	return k == want ? 0 : -1;
}

/* Field f as a number of digits (exactly width of them, 0: 1-18), at most
 * max. */
static int
num(const struct field *f, int width, long long max, long long *out)
{
	long long v = 0;
	size_t i;

	if (f->n == 0 || f->n > 18 || (width > 0 && f->n != (size_t)width))
		return -1;
	for (i = 0; i < f->n; i++) {
		if (f->s[i] < '0' || f->s[i] > '9')
			return -1;
		v = v * 10 + (f->s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

/* The field as a NUL-terminated copy (cap bytes). */
static int
copy(const struct field *f, char *out, size_t cap)
{
	if (f->n >= cap)
		return -1;
	memcpy(out, f->s, f->n);
	out[f->n] = '\0';
	return 0;
}

static long long
ms_of(double t)
{
	return (long long)llround(t * 1000.0);
}

int
sr_qkey_job(const char *id, const char *file, char *key, size_t len, char *err)
{
	if (sr_lease_job_check(id, err) == -1)
		return -1;
	snprintf(key, len, "jobs/%s/%s", id, file);
	return 0;
}

/* ---- pending/P~T~ID~MIN-MAX~TYPE~STORE~EPOCH~ETAG[~NODES] ---- */

/* A field "LO-HI" of numbers from min to max, LO <= HI: 0, or -1. */
static int
range(const struct field *f, long long min, long long max, int *lo_out, int *hi_out)
{
	const char *dash = memchr(f->s, '-', f->n);
	long long lo, hi;

	if (dash == NULL)
		return -1;
	{
		struct field a = { f->s, (size_t)(dash - f->s) };
		struct field b = { dash + 1, f->n - a.n - 1 };

		if (num(&a, 0, max, &lo) == -1 || num(&b, 0, max, &hi) == -1 || hi < lo || lo < min)
			return -1;
	}
	*lo_out = (int)lo;
	*hi_out = (int)hi;
	return 0;
}

int
sr_qkey_pending(const struct sr_queue_pending *p, char *key, size_t len, char *err)
{
	char type[3 * SR_QUEUE_GPU_TYPE_MAX + 4], etag[3 * SR_ETAG_MAX + 4], nodes[16] = "";
	long long ms = ms_of(p->submitted);
	int n;

	if (sr_lease_job_check(p->id, err) == -1)
		return -1;
	if (p->priority < SR_QUEUE_PRIORITY_MIN || p->priority > SR_QUEUE_PRIORITY_MAX)
		return sr_err(err, "job %s: priority %d is out of range (%d to %d)", p->id,
		    p->priority, SR_QUEUE_PRIORITY_MIN, SR_QUEUE_PRIORITY_MAX);
	if (p->gpus_min < 0 || p->gpus_max < p->gpus_min || p->gpus_max > SR_QUEUE_GPUS_MAX)
		return sr_err(err, "job %s: gpus %d-%d is not a range from 0 to %d", p->id,
		    p->gpus_min, p->gpus_max, SR_QUEUE_GPUS_MAX);
	if (ms < 0 || ms > 9999999999999LL)
		return sr_err(err, "job %s: submit time %.3f is out of range", p->id, p->submitted);
	if (p->nodes_max > 1 && (p->nodes_min < 1 || p->nodes_min > p->nodes_max ||
	    p->nodes_max > SR_QUEUE_NODES_MAX))
		return sr_err(err, "job %s: nodes %d-%d is not a range from 1 to %d", p->id,
		    p->nodes_min, p->nodes_max, SR_QUEUE_NODES_MAX);
	if (p->nodes_max > 1)
		snprintf(nodes, sizeof nodes, "~%d-%d", p->nodes_min, p->nodes_max);
	n = snprintf(key, len, PENDING "%05d~%013lld~%s~%d-%d~%s~%s~%lld~%s%s",
	    SR_QUEUE_PRIORITY_MAX - p->priority, ms, p->id, p->gpus_min, p->gpus_max,
	    enc(p->gpu_type, SR_QUEUE_GPU_TYPE_MAX, type, sizeof type), p->store,
	    (long long)p->epoch, p->epoch > 0 ? enc(p->etag, SR_ETAG_MAX, etag, sizeof etag) : "",
	    nodes);
	if (n < 0 || (size_t)n >= len)
		return sr_err(err, "job %s: its pending marker's key is too long", p->id);
	return 0;
}

int
sr_qkey_pending_parse(const char *key, struct sr_queue_pending *p, char *err)
{
	struct field f[9];
	long long v;
	size_t i;

	memset(p, 0, sizeof *p);
	p->nodes_min = p->nodes_max = 1;
	if (strncmp(key, PENDING, strlen(PENDING)) != 0)
		goto bad;
	/* a gang's marker has a ninth field, its nodes MIN-MAX */
	if (split(key + strlen(PENDING), f, 9) == 0) {
		if (range(&f[8], 1, SR_QUEUE_NODES_MAX, &p->nodes_min, &p->nodes_max) == -1 ||
		    p->nodes_max < 2)
			goto bad;
	} else if (split(key + strlen(PENDING), f, 8) == -1)
		goto bad;
	if (num(&f[0], 5, SR_QUEUE_PRIORITY_MAX - SR_QUEUE_PRIORITY_MIN, &v) == -1)
		goto bad;
	p->priority = SR_QUEUE_PRIORITY_MAX - (int)v;
	if (num(&f[1], 13, 9999999999999LL, &v) == -1)
		goto bad;
	p->submitted = (double)v / 1000.0;
	if (copy(&f[2], p->id, sizeof p->id) == -1 || sr_lease_job_check(p->id, NULL) == -1)
		goto bad;
	if (range(&f[3], 0, SR_QUEUE_GPUS_MAX, &p->gpus_min, &p->gpus_max) == -1)
		goto bad;
	if (dec(f[4].s, f[4].n, p->gpu_type, sizeof p->gpu_type) == -1)
		goto bad;
	if (copy(&f[5], p->store, sizeof p->store) == -1)
		goto bad;
	if (strcmp(p->store, "q") != 0) {
		if (f[5].n != 16)
			goto bad;
		for (i = 0; i < 16; i++)
			if (sr_hexval(p->store[i]) == -1)
				goto bad;
	}
	if (num(&f[6], 0, INT64_MAX / 16, &v) == -1)
		goto bad;
	p->epoch = v;
	if (dec(f[7].s, f[7].n, p->etag, sizeof p->etag) == -1 || (v == 0) != (p->etag[0] == '\0'))
		goto bad;
	snprintf(p->key, sizeof p->key, "%s", key);
	return 0;
bad:
	return sr_err(err, "pending marker %.200s: not a key of the form "
	    "pending/P~T~ID~MIN-MAX~TYPE~STORE~EPOCH~ETAG[~NODES]", key);
}

int
sr_queue_pending_fits(const struct sr_queue_pending *p, int gpus, const char *gpu_type)
{
	if (p->gpus_min > gpus)
		return 0;
	if (p->gpu_type[0] == '\0')
		return 1;
	return gpu_type != NULL && strcasecmp(p->gpu_type, gpu_type) == 0;
}

/* ---- index/ID~EPOCH~T~STATE~ATTEMPTS~PREEMPTIONS~USED~LOST~COST~ONDEMAND~STEP~HOST ---- */

int
sr_qkey_index(const struct sr_queue_status *s, char *key, size_t len, char *err)
{
	char host[3 * SR_QUEUE_HOST_MAX + 4], step[24] = "";
	long long ms = ms_of(s->time);
	int n;

	if (sr_lease_job_check(s->id, err) == -1)
		return -1;
	if (s->epoch < 0 || s->epoch > 999999999999LL || ms < 0 || ms > 9999999999999LL ||
	    (unsigned)s->state >= SR_LEASE_NSTATES || s->attempts < 0 || s->preemptions < 0 ||
	    s->gpu_seconds < 0 || s->lost_gpu_seconds < 0 || !(s->cost >= 0) || s->cost > 1e12 ||
	    !(s->on_demand_cost >= 0) || s->on_demand_cost > 1e12)
		return sr_err(err, "job %s: a status field is out of range (epoch %lld, time %.3f, "
		    "attempts %d, preemptions %d, GPU-seconds %lld/%lld, cost %g, on demand %g)",
		    s->id, (long long)s->epoch, s->time, s->attempts, s->preemptions,
		    (long long)s->gpu_seconds, (long long)s->lost_gpu_seconds, s->cost,
		    s->on_demand_cost);
	if (s->step >= 0)
		snprintf(step, sizeof step, "%lld", (long long)s->step);
	n = snprintf(key, len, INDEX "%s~%012lld~%013lld~%s~%d~%d~%lld~%lld~%.4f~%.4f~%s~%s",
	    s->id, (long long)s->epoch, ms, sr_lease_state_name(s->state), s->attempts,
	    s->preemptions, (long long)s->gpu_seconds, (long long)s->lost_gpu_seconds, s->cost,
	    s->on_demand_cost, step, enc(s->host, SR_QUEUE_HOST_MAX, host, sizeof host));
	if (n < 0 || (size_t)n >= len)
		return sr_err(err, "job %s: its status marker's key is too long", s->id);
	return 0;
}

/* A sum of dollars as the marker writes it (digits and a '.'): 0, or -1. */
static int
dollars(const struct field *f, double *out)
{
	char word[32], *end;
	size_t i;

	if (copy(f, word, sizeof word) == -1 || word[0] < '0' || word[0] > '9')
		return -1;
	for (i = 0; word[i] != '\0'; i++)
		if ((word[i] < '0' || word[i] > '9') && word[i] != '.')
			return -1;
	*out = strtod(word, &end);
	return *end == '\0' ? 0 : -1;
}

int
sr_qkey_index_parse(const char *key, struct sr_queue_status *s, char *err)
{
	struct field f[12];
	char word[32];
	long long v;

	memset(s, 0, sizeof *s);
	if (strncmp(key, INDEX, strlen(INDEX)) != 0 || split(key + strlen(INDEX), f, 12) == -1)
		goto bad;
	if (copy(&f[0], s->id, sizeof s->id) == -1 || sr_lease_job_check(s->id, NULL) == -1)
		goto bad;
	if (num(&f[1], 12, 999999999999LL, &v) == -1)
		goto bad;
	s->epoch = v;
	if (num(&f[2], 13, 9999999999999LL, &v) == -1)
		goto bad;
	s->time = (double)v / 1000.0;
	if (copy(&f[3], word, sizeof word) == -1 || sr_lease_state_parse(word, &s->state) == -1)
		goto bad;
	if (num(&f[4], 0, 0x7fffffff, &v) == -1)
		goto bad;
	s->attempts = (int)v;
	if (num(&f[5], 0, 0x7fffffff, &v) == -1)
		goto bad;
	s->preemptions = (int)v;
	if (num(&f[6], 0, INT64_MAX / 16, &v) == -1)
		goto bad;
	s->gpu_seconds = v;
	if (num(&f[7], 0, INT64_MAX / 16, &v) == -1)
		goto bad;
	s->lost_gpu_seconds = v;
	if (dollars(&f[8], &s->cost) == -1 || dollars(&f[9], &s->on_demand_cost) == -1)
		goto bad;
	s->step = -1;
	if (f[10].n > 0) {
		if (num(&f[10], 0, INT64_MAX / 16, &v) == -1)
			goto bad;
		s->step = v;
	}
	if (dec(f[11].s, f[11].n, s->host, sizeof s->host) == -1)
		goto bad;
	snprintf(s->key, sizeof s->key, "%s", key);
	return 0;
bad:
	return sr_err(err, "status marker %.200s: not a key of the form index/ID~EPOCH~TIME~"
	    "STATE~ATTEMPTS~PREEMPTIONS~USED~LOST~COST~ONDEMAND~STEP~HOST", key);
}
