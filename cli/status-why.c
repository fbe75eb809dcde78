/*
 * status-why.c: why a job waits, or may have stopped without a word, for
 * `spotrun status` (status-why.h). A queued job's needs come from its
 * pending marker (the GPUs, their model, the machines of a gang, in its
 * key); what each agent offers from its record under agents/, which every
 * agent writes at its start; a running job's last renewal from its lease
 * object's time in a listing (no GET).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status-why.h"
#include "termsafe.h"
#include "util.h"

struct reader {
	const struct sr_fleet_row *const *rows;	/* sorted by id: ix's order */
	size_t n;
	const struct sr_queue_machine *mv;	/* the live agents' records */
	size_t nm;
	size_t gone;			/* records of agents gone without a word */
	char capped[384];		/* "; pool P at its cost cap (...)": "" none */
	double now;
	struct sr_status_why *w;
};

static int
row_cmp(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct sr_fleet_row *const *)elem)->id);
}

static int
rows_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct sr_fleet_row *const *)a)->id,
	    (*(const struct sr_fleet_row *const *)b)->id);
}

/* The row of job id among r's, or NULL. */
static const struct sr_fleet_row *
row_of(const struct reader *r, const char *id)
{
	const struct sr_fleet_row *const *p = bsearch(id, r->rows, r->n, sizeof *r->rows,
	    row_cmp);

	return p != NULL ? *p : NULL;
}

static void
add(struct sr_status_why *w, const char *id, char *why)
{
	w->v = sr_reallocarray(w->v, w->n + 1, sizeof *w->v);
	w->v[w->n].id = sr_strdup(id);
	w->v[w->n++].why = why;
}

/* "1xH100", "2 GPUs", "no GPU": what p needs of one machine. */
static const char *
needs(const struct sr_queue_pending *p, char *buf, size_t len)
{
	if (p->gpus_min == 0)
		snprintf(buf, len, "no GPU");
	else if (p->gpu_type[0] != '\0')
		snprintf(buf, len, "%dx%s", p->gpus_min, p->gpu_type);
	else
		snprintf(buf, len, "%d GPU%s", p->gpus_min, p->gpus_min == 1 ? "" : "s");
	return buf;
}

/* The agents in words, "vm-a: 0 GPUs, vm-b: 8xA100", the first few. */
static void
agents_line(const struct reader *r, char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < r->nm && i < 3 && used < len; i++) {
		const struct sr_queue_machine *m = &r->mv[i];

		if (m->gpus > 0 && m->gpu_type[0] != '\0')
			used += (size_t)snprintf(buf + used, len - used, "%s%s: %dx%s",
			    i > 0 ? ", " : "", m->host, m->gpus, m->gpu_type);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%s: %d GPU%s",
			    i > 0 ? ", " : "", m->host, m->gpus, m->gpus == 1 ? "" : "s");
	}
	if (i < r->nm && used < len)
		snprintf(buf + used, len - used, " and %zu more", r->nm - i);
}

/* A queued job's reason, with the pools at their cost cap after it: no
 * agent comes for it from them, whatever else it waits for. */
static void
add_queued(struct reader *r, const char *id, char *why)
{
	if (r->capped[0] != '\0') {
		char *both = sr_asprintf("%s%s", why, r->capped);

		free(why);
		why = both;
	}
	add(r->w, id, why);
}

static int
pending_cb(const struct sr_queue_pending *p, void *arg)
{
	struct reader *r = arg;
	const struct sr_fleet_row *row = row_of(r, p->id);
	char need[SR_QUEUE_GPU_TYPE_MAX + 32], agents[512];
	size_t i;
	int fit = 0;

	if (row == NULL || (row->state != SR_LEASE_QUEUED && row->state != SR_LEASE_RELEASED))
		return 0;
	for (i = 0; i < r->nm; i++)
		fit += sr_queue_pending_fits(p, r->mv[i].gpus, r->mv[i].gpu_type);
	needs(p, need, sizeof need);
	agents_line(r, agents, sizeof agents);
	if (r->nm == 0 && r->gone > 0)
		add_queued(r, p->id, sr_asprintf("needs %s: no agent is running on this queue (start "
		    "one: spotrun agent; %zu agent%s stopped renewing %s record over %.0fm ago: "
		    "gone, and spotrun gc --apply removes %s)", need, r->gone,
		    r->gone == 1 ? "" : "s", r->gone == 1 ? "its" : "their",
		    SR_QUEUE_MACHINE_STALE / 60, r->gone == 1 ? "it" : "them"));
	else if (r->nm == 0)
		add_queued(r, p->id, sr_asprintf("needs %s: no agent is running on this queue (start "
		    "one: spotrun agent)", need));
	else if (fit == 0)
		add_queued(r, p->id, sr_asprintf("needs %s: no agent has %s (%s)", need,
		    p->gpus_min == 1 ? "one" : "them", agents));
	else if (fit < p->nodes_min)
		add_queued(r, p->id, sr_asprintf("needs %d machines of %s: %d agent%s %s (%s)",
		    p->nodes_min, need, fit, fit == 1 ? "" : "s", fit == 1 ? "has it" : "have it",
		    agents));
	else
		add_queued(r, p->id, sr_asprintf("needs %s: waits for one of %d agent%s that can run it",
		    need, fit, fit == 1 ? "" : "s"));
	return 0;
}

static int
lease_cb(void *arg, const char *id, double mtime)
{
	struct reader *r = arg;
	const struct sr_fleet_row *row = row_of(r, id);
	double age = r->now - mtime;
	char ago[32];

	if (row == NULL || row->state != SR_LEASE_RUNNING || age < SR_STATUS_SILENT)
		return 0;
	if (age < 3600)
		snprintf(ago, sizeof ago, "%dm", (int)(age / 60));
	else
		snprintf(ago, sizeof ago, "%dh%02dm", (int)(age / 3600), (int)age % 3600 / 60);
	add(r->w, id, sr_asprintf("agent silent for %s (its lease was last renewed %s ago; "
	    "another agent takes the job over once it expires)", ago, ago));
	return 0;
}

static int
why_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sr_status_why_one *)a)->id,
	    ((const struct sr_status_why_one *)b)->id);
}

/* The pools whose VMs have cost their cap (the scaler set their target to
 * 0: fleet/pool-scale.c), said once for every queued job: "; pool gpu at
 * its cost cap ($10.00 spent of $10.00): no VM comes from it until the
 * cap is raised (cost_cap in its pool file, then spotrun up)". One listing
 * of pools/ and a GET per pool. 0, or -1 with err. */
static int
capped_pools(struct sr_queue *q, char *buf, size_t len, char *err)
{
	struct sr_queue_pool *v;
	size_t n, i, k = 0, first = 0;

	buf[0] = '\0';
	if (sr_queue_pools_read(q, &v, &n, NULL, err) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if (v[i].cost_cap > 0 && v[i].spent >= v[i].cost_cap && k++ == 0)
			first = i;
	if (k > 0) {
		char more[48] = "";

		if (k > 1)
			snprintf(more, sizeof more, " and %zu more", k - 1);
		snprintf(buf, len, "; pool %s%s at %s cost cap ($%.2f spent of $%.2f): no VM comes "
		    "from %s until the cap is raised (cost_cap in the pool file, then spotrun up)",
		    v[first].name, more, k > 1 ? "their" : "its", v[first].spent,
		    v[first].cost_cap, k > 1 ? "them" : "it");
	}
	free(v);
	return 0;
}

int
sr_status_why_read(struct sr_queue *q, const struct sr_fleet_row *const *rows, size_t n,
    const struct sr_queue_machine *mv, size_t nm, double now, struct sr_status_why *w,
    char *err)
{
	const struct sr_fleet_row **sorted = sr_calloc(n + 1, sizeof *sorted);
	struct sr_queue_machine *live = sr_calloc(nm + 1, sizeof *live);
	struct reader r = { .rows = (const struct sr_fleet_row *const *)sorted, .n = n,
	    .mv = live, .now = now, .w = w };
	int waiting = 0, running = 0, rc = 0;
	size_t i;

	memset(w, 0, sizeof *w);
	/* an agent killed without a word offers nothing: its record is left
	 * out of what fits (queue.h, SR_QUEUE_MACHINE_STALE) */
	for (i = 0; i < nm; i++) {
		if (sr_queue_machine_stale(&mv[i], now))
			r.gone++;
		else
			live[r.nm++] = mv[i];
	}
	for (i = 0; i < n; i++) {
		sorted[i] = rows[i];
		waiting |= rows[i]->state == SR_LEASE_QUEUED || rows[i]->state == SR_LEASE_RELEASED;
		running |= rows[i]->state == SR_LEASE_RUNNING;
	}
	sr_sort(sorted, n, sizeof *sorted, rows_cmp);
	if (waiting && capped_pools(q, r.capped, sizeof r.capped, err) == -1)
		rc = -1;
	if (rc == 0 && waiting && sr_queue_pending_list(q, pending_cb, &r, NULL, err) != 0)
		rc = -1;
	if (rc == 0 && running && sr_queue_lease_times(q, lease_cb, &r, err) != 0)
		rc = -1;
	free(sorted);
	free(live);
	if (rc != 0) {
		sr_status_why_free(w);
		return -1;
	}
	/* by id, the first said of a job kept (a stale second pending marker) */
	sr_sort(w->v, w->n, sizeof *w->v, why_cmp);
	for (i = 0, n = 0; i < w->n; i++) {
		if (n > 0 && strcmp(w->v[n - 1].id, w->v[i].id) == 0) {
			free(w->v[i].id);
			free(w->v[i].why);
		} else
			w->v[n++] = w->v[i];
	}
	w->n = n;
	return 0;
}

void
sr_status_why_print(const struct sr_status_why *w)
{
	char *safe;
	size_t i;

	if (w->n > 0)
		putchar('\n');
	for (i = 0; i < w->n; i++) {
		char *line = sr_asprintf("%s: %s", w->v[i].id, w->v[i].why);

		safe = sr_malloc(SR_TERMSAFE_LEN(strlen(line)));
		printf("%s\n", sr_termsafe(line, safe, SR_TERMSAFE_LEN(strlen(line))));
		free(safe);
		free(line);
	}
}

static int
find_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct sr_status_why_one *)elem)->id);
}

const char *
sr_status_why_find(const struct sr_status_why *w, const char *id)
{
	const struct sr_status_why_one *o = w->n > 0 ? bsearch(id, w->v, w->n, sizeof *w->v,
	    find_cmp) : NULL;

	return o != NULL ? o->why : NULL;
}

void
sr_status_why_free(struct sr_status_why *w)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		free(w->v[i].id);
		free(w->v[i].why);
	}
	free(w->v);
	memset(w, 0, sizeof *w);
}
