/*
 * pool-scale.c: see pool-scale.h. The rule, one step of it, and the raise
 * `spotrun submit` asks for; the loop that steps is the agent's
 * (agent-scale.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "pool-scale.h"
#include "util.h"

void
sr_pool_lease_name(const char *pool, char *buf, size_t len)
{
	snprintf(buf, len, "pool.%s", pool);
}

int
sr_pool_lease_claim(struct sr_queue *q, const char *pool, struct sr_lease_claim *c,
    struct sr_lease **out, char *err)
{
	char name[SR_LEASE_JOB_MAX + 1];

	sr_pool_lease_name(pool, name, sizeof name);
	return sr_lease_claim(sr_queue_store(q), name, c, out, err);
}

void
sr_pool_cost_add(struct sr_queue_pool *rec, const struct sr_pool_vm *v, size_t n,
    const int *busy, const struct sr_prices *prices, double now)
{
	double from, price, cost;
	size_t i;

	for (i = 0; i < n && rec->spent_at > 0; i++) {
		if (!v[i].billed || (price = sr_pool_vm_price(&v[i], prices)) <= 0)
			continue;
		from = v[i].launched > rec->spent_at ? v[i].launched : rec->spent_at;
		if (now <= from)
			continue;
		cost = price * (now - from) / 3600.0;
		rec->spent += cost;
		if (busy != NULL && busy[i])
			rec->in_jobs += cost;
		else
			rec->idle += cost;
	}
	rec->spent_at = now;
}

/* The launch prices of the n listed VMs into rec, in their order, the
 * first SR_QUEUE_POOL_PRICES priced: the VMs gone drop out. */
static void
keep_prices(struct sr_queue_pool *rec, const struct sr_pool_vm *v, size_t n)
{
	size_t i;

	rec->nprices = 0;
	for (i = 0; i < n && rec->nprices < SR_QUEUE_POOL_PRICES; i++) {
		if (v[i].price <= 0 || v[i].id[0] == '\0' || strlen(v[i].id) >=
		    sizeof rec->prices[0].vm)
			continue;
		snprintf(rec->prices[rec->nprices].vm, sizeof rec->prices[0].vm, "%s", v[i].id);
		rec->prices[rec->nprices++].price = v[i].price;
	}
}

/* Which of the n listed VMs run a job (busy[i] 1) by the agents' records:
 * a VM whose id is the instance of a live agent (agents/) on whose host a
 * job runs (run, the running markers' hosts). No job running: none, and
 * agents/ is not read. 0, or -1 with err. */
static int
busy_vms(struct sr_queue *q, const struct sr_pool_vm *v, size_t n,
    const struct sr_pool_running *run, size_t nrun, int *busy, char *err)
{
	struct sr_queue_machine *m;
	size_t nm, i, k, r;
	double now;

	if (nrun == 0 || n == 0)
		return 0;
	if (sr_queue_machines_read(q, &m, &nm, NULL, err) == -1)
		return -1;
	now = sr_now();
	for (i = 0; i < n; i++) {
		for (k = 0; k < nm && !busy[i] && v[i].id[0] != '\0'; k++) {
			if (strcmp(m[k].instance, v[i].id) != 0 || sr_queue_machine_stale(&m[k], now))
				continue;
			for (r = 0; r < nrun && !busy[i]; r++)
				busy[i] = strncmp(run[r].host, m[k].host, SR_QUEUE_HOST_MAX) == 0;
		}
	}
	free(m);
	return 0;
}

double
sr_pool_vm_price(const struct sr_pool_vm *v, const struct sr_prices *prices)
{
	const struct sr_price *pr;

	if (v->price > 0)
		return v->price;
	if (prices == NULL || (pr = sr_prices_find(prices, v->type)) == NULL)
		return 0;
	return v->spot ? pr->spot : pr->on_demand;
}

/* Fewer VMs than the target listed while the queue wants them: the
 * group's own target is read, and where the cloud lowered it (Azure: a
 * Flexible set's evicted Spot VMs, deleted, that Try & Restore did not
 * bring back, leave the set's capacity that much smaller) it is set to
 * target again, and s says so. Engines that keep their target (an EC2
 * Fleet, a managed instance group) answer target and nothing is set. */
static int
ask_again(struct sr_pool_scale *s, const struct sr_pool_where *w, unsigned target, char *err)
{
	struct sr_pool_vms vms;
	unsigned have;
	size_t len;

	if (s->e->describe(s->client, w, &have, &vms, err) == -1)
		return sr_err_prefix(err, "pool %s", s->pool);
	if (have >= target)
		return 0;
	if (s->e->set_target(s->client, w, target, err) == -1)
		return sr_err_prefix(err, "pool %s: set target %u again (the cloud's is %u)", s->pool,
		    target, have);
	s->asked_again = target - have;
	len = strlen(s->why);
	snprintf(s->why + len, sizeof s->why - len, "; asked again for %u VM%s the cloud dropped",
	    s->asked_again, s->asked_again == 1 ? "" : "s");
	return 0;
}

/* Whether the pool's record is still the one read at etag, just before a
 * write to the cloud: the record's own write is a CAS, but the cloud's
 * is not, and `down --drain` marks the record and then sets the target
 * to 0 (a step that read the record before and wrote the cloud after
 * raised the drained pool again: t18 under load, through ask_again).
 * SR_POOL_SCALE_OK, STALE (another wrote it: the next step decides), or
 * ERROR. */
static int
unchanged(struct sr_pool_scale *s, const char *etag, char *err)
{
	struct sr_queue_pool now;
	char tag[SR_ETAG_MAX];
	int rc = sr_queue_pool_read(s->q, s->pool, &now, tag, err);

	if (rc == SR_QUEUE_NOTFOUND)
		return SR_POOL_SCALE_GONE;
	if (rc != SR_QUEUE_OK)
		return SR_POOL_SCALE_ERROR;
	if (strcmp(tag, etag) != 0)
		return sr_err(err, "pool %s: its record changed since this step read it "
		    "(by %s: %s): writing nothing", s->pool, now.by, now.why), SR_POOL_SCALE_STALE;
	return SR_POOL_SCALE_OK;
}

void
sr_pool_scale_end(struct sr_pool_scale *s)
{
	if (s->e != NULL)
		s->e->close(s->client);
	s->client = NULL;
}

/* s->client of engine e, opened now unless kept (one of another engine,
 * the pool taken down and made again on another cloud, closed): 0, or
 * -1 with err. */
static int
client(struct sr_pool_scale *s, const struct sr_pool_engine *e, char *err)
{
	if (s->client != NULL && s->e == e)
		return 0;
	sr_pool_scale_end(s);
	s->e = e;
	if (e->open(&s->client, err) == -1)
		return sr_err_prefix(err, "pool %s", s->pool);
	return 0;
}

static int
step(struct sr_pool_scale *s, char *err)
{
	const struct sr_pool_engine *e;
	struct sr_queue_pool rec;
	struct sr_pool_where w;
	struct sr_pool_vm *vms = NULL;
	struct sr_pool_running *run = NULL;
	int *busy;
	char etag[SR_ETAG_MAX], idle[32];
	double now, scale_idle, mono;
	int64_t epoch = sr_lease_epoch(s->lease);
	unsigned cap, billed = 0;
	size_t n = 0, nrun = 0, i;
	int rc, listed = 0, again;

	s->vms = 0;
	s->asked_again = 0;
	s->why[0] = '\0';
	rc = sr_queue_pool_read(s->q, s->pool, &rec, etag, err);
	if (rc == SR_QUEUE_NOTFOUND)
		return SR_POOL_SCALE_GONE;
	if (rc != SR_QUEUE_OK)
		return SR_POOL_SCALE_ERROR;
	s->before = s->target = rec.target;
	s->spent = rec.spent;
	if (rec.fence > epoch)
		return sr_err(err, "pool %s: its record is fenced at lease epoch %lld, above this "
		    "scaler's %lld: writing nothing", s->pool, (long long)rec.fence,
		    (long long)epoch), SR_POOL_SCALE_STALE;
	if ((e = sr_pool_engine_named(rec.cloud)) == NULL)
		return sr_err(err, "pool %s: no fleet engine for cloud %s in this build", s->pool,
		    rec.cloud);
	sr_pool_where_of(&rec, &w);
	/* the demand first: its running jobs' hosts are whose VMs are busy */
	if (sr_pool_demand_running(s->q, -1, &s->demand, &run, &nrun, err) == -1)
		return SR_POOL_SCALE_ERROR;
	now = sr_now();
	if (e->list != NULL && s->prices != NULL) {
		if (client(s, e, err) == -1 || e->list(s->client, &w, rec.name, &vms, &n, err) ==
		    -1) {
			free(run);
			return sr_err_prefix(err, "pool %s", s->pool), SR_POOL_SCALE_ERROR;
		}
		keep_prices(&rec, vms, n);
		for (i = 0; i < n; i++)
			billed += vms[i].billed != 0;
		listed = 1;
		busy = sr_calloc(n + 1, sizeof *busy);
		rc = busy_vms(s->q, vms, n, run, nrun, busy, err);
		if (rc == 0)
			sr_pool_cost_add(&rec, vms, n, busy, s->prices, now);
		free(busy);
		free(vms);
		if (rc == -1) {
			free(run);
			return sr_err_prefix(err, "pool %s", s->pool), SR_POOL_SCALE_ERROR;
		}
		s->vms = n;
	} else if (rec.spent_at <= 0)
		rec.spent_at = now;
	free(run);
	s->spent = rec.spent;
	s->in_jobs = rec.in_jobs;
	s->idle = rec.idle;
	mono = sr_mono();
	if (s->demand > 0)
		s->drained_since = 0;
	else if (s->drained_since <= 0)
		s->drained_since = mono;
	scale_idle = s->scale_idle >= 0 ? s->scale_idle : rec.idle_timeout;
	cap = rec.max_vms > 0 ? (unsigned)rec.max_vms : rec.target;
	if (rec.draining > 0) {
		s->target = 0;
		snprintf(s->why, sizeof s->why, "%s", SR_POOL_SCALE_DRAINING);
	} else if (rec.cost_cap > 0 && rec.spent >= rec.cost_cap) {
		s->target = 0;
		snprintf(s->why, sizeof s->why, "cost cap $%.2f reached ($%.2f spent)", rec.cost_cap,
		    rec.spent);
	} else if (s->demand == 0) {
		if (rec.target == 0 || s->drained_now ||
		    (scale_idle > 0 && mono - s->drained_since >= scale_idle)) {
			s->target = 0;
			snprintf(s->why, sizeof s->why, "queue drained");
		} else
			snprintf(s->why, sizeof s->why, "queue drained; to 0 after %s idle",
			    scale_idle > 0 ? sr_fmt_duration(scale_idle, idle, sizeof idle) : "never");
	} else if (s->demand > cap) {
		s->target = cap;
		snprintf(s->why, sizeof s->why, "demand %u VM%s, max %u", s->demand,
		    s->demand == 1 ? "" : "s", cap);
	} else {
		s->target = s->demand;
		snprintf(s->why, sizeof s->why, "demand %u VM%s", s->demand, s->demand == 1 ? "" : "s");
	}
	/* a scaler stopped here past its lease's TTL wakes fenced */
	sr_fault("pool-scale-write");
	if (!sr_lease_fresh(s->lease))
		return sr_err(err, "pool %s: the pool's lease (epoch %lld) was lost: writing nothing",
		    s->pool, (long long)epoch), SR_POOL_SCALE_STALE;
	/* a pool waiting for capacity with no group (every place refused at
	 * `up`): nothing to size; `up` makes one */
	if (s->target != rec.target && rec.group[0] == '\0') {
		s->target = rec.target;
		snprintf(s->why, sizeof s->why, "%s", SR_POOL_SCALE_NO_GROUP);
	}
	/* the cloud is written to set a new target, or to ask again for the
	 * VMs it dropped (fewer billed than the target while jobs wait) */
	again = s->target == rec.target && s->demand > 0 && rec.group[0] != '\0' && listed &&
	    billed < rec.target;
	if ((s->target != rec.target || again) && (rc = unchanged(s, etag, err)) !=
	    SR_POOL_SCALE_OK)
		return rc;
	if ((s->target != rec.target || again) && client(s, e, err) == -1)
		return SR_POOL_SCALE_ERROR;
	if (s->target != rec.target && e->set_target(s->client, &w, s->target, err) == -1)
		return sr_err_prefix(err, "pool %s: set target %u", s->pool, s->target),
		    SR_POOL_SCALE_ERROR;
	if (again && ask_again(s, &w, rec.target, err) == -1)
		return SR_POOL_SCALE_ERROR;
	rec.target = s->target;
	rec.fence = epoch;
	rec.updated = now;
	snprintf(rec.by, sizeof rec.by, "%s", s->by);
	snprintf(rec.why, sizeof rec.why, "%s", s->why);
	rc = sr_queue_pool_put_if(s->q, &rec, etag, NULL, err);
	if (rc == SR_QUEUE_BUSY)
		return SR_POOL_SCALE_STALE;
	return rc == SR_QUEUE_OK ? SR_POOL_SCALE_OK : SR_POOL_SCALE_ERROR;
}

int
sr_pool_scale_step(struct sr_pool_scale *s, char *err)
{
	int rc = step(s, err);

	/* a client whose calls failed is not trusted with the next step's
	 * (credentials rotated, an az login since): it is opened anew */
	if (rc == SR_POOL_SCALE_ERROR)
		sr_pool_scale_end(s);
	return rc;
}

/* Whether pool's lease was released by its last holder (read now; a
 * lease never claimed, held, or unreadable: 0). */
static int
lease_released(struct sr_queue *q, const char *pool)
{
	char name[SR_LEASE_JOB_MAX + 1], err[SR_ERRMAX];
	struct sr_lease_info li;

	sr_pool_lease_name(pool, name, sizeof name);
	return sr_lease_read(sr_queue_store(q), name, &li, err) == SR_LEASE_OK &&
	    li.state == SR_LEASE_RELEASED;
}

int
sr_pool_raise(struct sr_queue *q, const struct sr_lease_owner *me,
    const struct sr_prices *prices, void (*note)(void *arg, const char *line), void *arg,
    char *err)
{
	struct sr_queue_pool *v;
	struct sr_lease_claim c;
	struct sr_pool_scale s;
	struct sr_lease *l;
	char line[SR_ERRMAX + 64], e[SR_ERRMAX];
	size_t n, i;
	int rc, up;

	if (sr_queue_pools_read(q, &v, &n, NULL, err) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		/* a pool above 0 is its agents'; stepped here only when none
		 * holds its lease (they released it: all ended), so that VMs
		 * its cloud dropped meanwhile are asked for again */
		up = v[i].target > 0;
		if (up && !lease_released(q, v[i].name))
			continue;
		memset(&c, 0, sizeof c);
		c.owner = me;
		c.watch = !up;
		rc = sr_pool_lease_claim(q, v[i].name, &c, &l, e);
		if (rc == SR_LEASE_HELD) {
			snprintf(line, sizeof line, "pool %s: scaled by %s", v[i].name,
			    c.prev.owner.agent[0] != '\0' ? c.prev.owner.agent : c.prev.owner.host);
			if (!up)
				note(arg, line);
			continue;
		}
		if (rc != SR_LEASE_OK) {
			snprintf(line, sizeof line, "warning: pool %s: %s", v[i].name, e);
			note(arg, line);
			continue;
		}
		memset(&s, 0, sizeof s);
		s.q = q;
		s.pool = v[i].name;
		s.lease = l;
		s.by = "spotrun submit";
		s.prices = prices;
		s.scale_idle = -1;
		rc = sr_pool_scale_step(&s, e);
		sr_pool_scale_end(&s);
		if (rc == SR_POOL_SCALE_OK)
			snprintf(line, sizeof line, "pool %s: target %u (%s)", v[i].name, s.target,
			    s.why);
		else if (rc != SR_POOL_SCALE_GONE)
			snprintf(line, sizeof line, "warning: %s", e);
		if (rc != SR_POOL_SCALE_GONE && (!up || rc != SR_POOL_SCALE_OK ||
		    s.target != s.before || s.asked_again > 0))
			note(arg, line);
		if (sr_lease_set_state(l, SR_LEASE_RELEASED, e) != SR_LEASE_OK) {
			snprintf(line, sizeof line, "warning: pool %s: release its lease: %s",
			    v[i].name, e);
			note(arg, line);
		}
		sr_lease_free(l);
	}
	free(v);
	return 0;
}
