/*
 * pool-aws.c: the AWS line of the engine table (pool-engine.h), on
 * cloud/aws/ec2.h: an EC2 Fleet of type maintain in one of the pool's
 * regions, on a launch template "spotrun-pool-NAME" of that region
 * holding the user-data, both tagged spotrun:pool and spotrun:queue. The
 * image is the pool's, or the current Deep Learning AMI read from AWS's
 * public SSM parameter. Its VMs are listed by their tag
 * (DescribeInstances), for the scaler and `status`, each spot VM with the
 * spot price at its launch (DescribeSpotPriceHistory, one request per
 * type and zone of the VMs the caller's known prices, the pool record's,
 * do not hold).
 *
 * Failover (doc/design.md, "Provisioning"): a fleet spreads over its
 * overrides (each type in each of the file's zones of its region) by
 * itself, so a place is a region with every type. CreateFleet may refuse
 * at once (a capacity code in its error document); a maintain fleet
 * reports its capacity errors later, in DescribeFleets' errorSet, so `up`
 * watches the fleet it made or found: one with no instance whose error
 * is a capacity code (sr_ec2_classify) is deleted with its template and
 * the pool goes to the next region, by the engines' shared walk
 * (pool-failover.c: history's order, backoff, tried, waiting).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ec2.h"
#include "pool-engine.h"
#include "pool-failover.h"
#include "util.h"

/* The prefix of a default image that names an SSM parameter. */
#define SSM_PREFIX "ssm:"
#define SETTLE_S	90.0	/* how long `up` watches a fleet for its first VM or error */

/* The engine's client (pool-engine.h): an EC2 client per region asked
 * for, each opened at its first call and kept (its credentials with it:
 * the instance role's are asked of IMDS once, then as they near their
 * expiry). */
struct aws {
	struct sr_ec2 **c;
	char (*region)[64];
	size_t n;
};

static int
aws_open(void **c, char *err)
{
	(void)err;
	*c = sr_calloc(1, sizeof(struct aws));
	return 0;
}

static void
aws_close(void *c)
{
	struct aws *a = c;
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->n; i++)
		sr_ec2_close(a->c[i]);
	free(a->c);
	free(a->region);
	free(a);
}

/* *c: a's client of region, opened now unless a has it. */
static int
region_client(struct aws *a, const char *region, struct sr_ec2 **c, char *err)
{
	struct sr_ec2_opts o = { .region = region };
	size_t i;

	for (i = 0; i < a->n; i++)
		if (strcmp(a->region[i], region) == 0) {
			*c = a->c[i];
			return 0;
		}
	if (strlen(region) >= sizeof a->region[0])
		return sr_err(err, "open EC2 client: region \"%.80s\" is too long", region);
	if (sr_ec2_open(&o, c, err) != 0)
		return -1;
	a->c = sr_reallocarray(a->c, a->n + 1, sizeof *a->c);
	a->region = sr_reallocarray(a->region, a->n + 1, sizeof *a->region);
	a->c[a->n] = *c;
	snprintf(a->region[a->n], sizeof a->region[0], "%s", region);
	a->n++;
	return 0;
}

/* The image id: the pool's, or the SSM parameter's value. */
static int
resolve_image(struct sr_ec2 *c, const struct sr_pool *p, char *image, size_t cap, char *err)
{
	const char *def = sr_pool_default_image(p->cloud);

	if (p->image != NULL) {
		snprintf(image, cap, "%s", p->image);
		return 0;
	}
	if (strncmp(def, SSM_PREFIX, strlen(SSM_PREFIX)) != 0) {
		snprintf(image, cap, "%s", def);
		return 0;
	}
	return sr_ec2_ssm_parameter(c, def + strlen(SSM_PREFIX), image, cap, err) == SR_EC2_OK ?
	    0 : -1;
}

/* Delete a template left by an `up` cut short before its fleet: its name
 * is the pool's, so a new one cannot be made beside it. */
static int
drop_templates(struct sr_ec2 *c, const struct sr_ec2_found *f, char *err)
{
	size_t i;

	for (i = 0; i < f->ntemplates; i++)
		if (sr_ec2_delete_template(c, f->templates[i].id, err) != SR_EC2_OK)
			return -1;
	return 0;
}

/* The fleet's overrides: each type in each of the zones of region (in the
 * file's order), or each type in any zone when the file names none there;
 * then ordered by the history (sr_pool_type_rank of each type in its
 * zone: none, repeated preemptions, capacity failures), each rank in that
 * order, so that Priority 1, 2... follow it (price-capacity-optimized
 * weighs no priority: doc/design.md, "Provisioning"). */
static struct sr_ec2_override *
overrides(const struct sr_pool_launch *l, const char *region, size_t *n)
{
	const struct sr_pool *p = l->p;
	struct sr_ec2_override *v, *o;
	size_t i, j, nz = 0, k = 0, rl = strlen(region);
	double now = sr_now();
	int rank;

	for (j = 0; j < p->nzones; j++)
		if (strncmp(p->zones[j], region, rl) == 0)
			nz++;
	v = sr_calloc(l->ntypes * (nz > 0 ? nz : 1), sizeof *v);
	for (i = 0; i < l->ntypes; i++) {
		if (nz == 0) {
			v[k++].instance_type = l->types[i];
			continue;
		}
		for (j = 0; j < p->nzones; j++) {
			if (strncmp(p->zones[j], region, rl) != 0)
				continue;
			v[k].instance_type = l->types[i];
			v[k++].zone = p->zones[j];
		}
	}
	*n = k;
	o = sr_calloc(k + 1, sizeof *o);
	for (rank = 0, j = 0; rank <= 2; rank++)
		for (i = 0; i < k; i++)
			if (sr_pool_type_rank(l->history, l->nhistory, "aws", region, v[i].zone,
			    v[i].instance_type, now) == rank)
				o[j++] = v[i];
	free(v);
	return o;
}

/* Template and fleet made in w->region: SR_EC2_OK, SR_EC2_CAPACITY when
 * CreateFleet refused at once with a capacity code, else SR_EC2_ERROR;
 * nothing left behind when it fails. */
static enum sr_ec2_status
create(struct sr_ec2 *c, const struct sr_pool_launch *l, struct sr_pool_where *w, char *err)
{
	const struct sr_pool *p = l->p;
	struct sr_ec2_template_spec ts;
	struct sr_ec2_fleet_spec fs;
	struct sr_ec2_override *ov;
	char name[64], token[160], price[32], ignore[SR_ERRMAX];
	size_t nov;
	enum sr_ec2_status rc;

	if (resolve_image(c, p, w->image, sizeof w->image, err) == -1)
		return SR_EC2_ERROR;
	snprintf(name, sizeof name, "spotrun-pool-%s", p->name);
	memset(&ts, 0, sizeof ts);
	ts.name = name;
	ts.pool = p->name;
	ts.queue = l->queue;
	ts.image_id = w->image;
	ts.user_data = l->user_data;
	ts.user_data_len = l->user_data_len;
	ts.instance_profile = p->role;
	ts.volume_gb = (unsigned)p->disk_gib;
	if (sr_ec2_create_template(c, &ts, w->template_id, err) != SR_EC2_OK)
		return SR_EC2_ERROR;
	ov = overrides(l, w->region, &nov);
	/* the token ties a retried create to this template's fleet */
	snprintf(token, sizeof token, "spotrun-%s-%s", p->name, w->template_id);
	memset(&fs, 0, sizeof fs);
	fs.pool = p->name;
	fs.queue = l->queue;
	fs.template_id = w->template_id;
	fs.target = l->target;
	if (p->max_price > 0) {
		snprintf(price, sizeof price, "%.4f", p->max_price * p->max_vms);
		fs.max_total_price = price;
	}
	fs.overrides = ov;
	fs.noverrides = nov;
	fs.client_token = token;
	rc = sr_ec2_create_fleet(c, &fs, w->group, err);
	free(ov);
	if (rc != SR_EC2_OK)	/* leave nothing behind */
		(void)sr_ec2_delete_template(c, w->template_id, ignore);
	w->target = l->target;
	if (rc == SR_EC2_OK)
		w->created = 1;
	else
		w->group[0] = '\0';
	return rc;
}

/* What the walk's calls work with: the client of the region at hand. */
struct run {
	struct aws *a;
	const struct sr_pool_launch *l;
	struct sr_pool_where *w;
	struct sr_ec2 *c;		/* a's of the region at hand */
};

static int
client_for(struct run *r, const char *region, char *err)
{
	return region_client(r->a, region, &r->c, err);
}

/* Watch fleet w->group until one of its instances exists (capacity
 * found), or none does while its errorSet reports a capacity code
 * (SR_EC2_CAPACITY, rf filled: code, type, zone), or SETTLE_S passed
 * (taken as capacity found: EC2 is still at work). */
static enum sr_ec2_status
watch(struct run *r, struct sr_failover_refusal *rf, char *err)
{
	struct sr_ec2_instance *v;
	struct sr_ec2_fleet f;
	double until = sr_now() + SETTLE_S, pause = 0.25;
	size_t n;
	enum sr_ec2_status st;

	while (r->l->target > 0) {
		if ((st = sr_ec2_describe_fleet(r->c, r->w->group, &f, err)) != SR_EC2_OK)
			return st;
		v = NULL;
		if ((st = sr_ec2_fleet_instances(r->c, r->w->group, &v, &n, err)) != SR_EC2_OK)
			return st;
		free(v);
		if (n > 0)		/* capacity somewhere: the fleet fills up */
			break;
		if (f.error_class == SR_EC2_CAPACITY) {
			snprintf(rf->code, sizeof rf->code, "%s", f.error_code);
			snprintf(rf->type, sizeof rf->type, "%s", f.error_type);
			snprintf(rf->zone, sizeof rf->zone, "%s", f.error_zone);
			return SR_EC2_CAPACITY;
		}
		if (sr_now() + pause > until)
			break;
		sr_sleep(pause);
		pause = pause * 2 < 4 ? pause * 2 : 4;
	}
	return SR_EC2_OK;
}

static int
is_capacity(const char *code)
{
	return sr_ec2_classify(code) == SR_EC2_CAPACITY;
}

/* The walk's attempt (pool-failover.h): in pl's region, the fleet found
 * there given the target, or template and fleet made (what an `up` cut
 * short left there deleted first); then watched. */
static enum sr_failover_rc
aws_attempt(void *arg, const struct sr_pool_place *pl, int have, struct sr_failover_refusal *rf,
    char *err)
{
	struct run *r = arg;
	struct sr_ec2_found f;
	size_t n = 0;
	enum sr_ec2_status st;

	if (client_for(r, pl->region, err) == -1)
		return SR_FAILOVER_ERROR;
	if (have) {
		st = sr_ec2_modify_fleet(r->c, r->w->group, r->l->target, err);
		r->w->target = r->l->target;
	} else if ((st = sr_ec2_find_pool(r->c, r->l->p->name, &f, err)) == SR_EC2_OK) {
		/* a fleet of an earlier failover cut short, or a template alone */
		if (f.nfleets > 0)
			st = sr_ec2_delete_pool(r->c, r->l->p->name, &n, err);
		else if (drop_templates(r->c, &f, err) == -1)
			st = SR_EC2_ERROR;
		sr_ec2_found_free(&f);
		snprintf(r->w->region, sizeof r->w->region, "%s", pl->region);
		if (st == SR_EC2_OK && (st = create(r->c, r->l, r->w, err)) == SR_EC2_CAPACITY)
			/* CreateFleet refused at once: its error document's code */
			sr_failover_code_in(err, is_capacity, rf->code);
	}
	if (st == SR_EC2_OK)
		st = watch(r, rf, err);
	return st == SR_EC2_OK ? SR_FAILOVER_OK : st == SR_EC2_CAPACITY ? SR_FAILOVER_CAPACITY :
	    SR_FAILOVER_ERROR;
}

/* Delete the fleet of pl (its instances terminated) and the pool's
 * template there: the template is the region's own. */
static int
aws_drop(void *arg, const struct sr_pool_place *pl, char *err)
{
	struct run *r = arg;
	size_t n = 0;

	if (client_for(r, pl->region, err) == -1)
		return -1;
	return sr_ec2_delete_pool(r->c, r->l->p->name, &n, err) == SR_EC2_OK ? 0 : -1;
}

/* The pool found by its tags in the first of the file's regions that
 * has its fleet: *k that region's place, or -1. */
static int
adopt(struct run *r, long *k, char *err)
{
	const struct sr_pool *p = r->l->p;
	struct sr_ec2_found f;
	size_t i;

	*k = -1;
	for (i = 0; i < p->nregions && *k < 0; i++) {
		if (client_for(r, p->regions[i], err) == -1 ||
		    sr_ec2_find_pool(r->c, p->name, &f, err) != SR_EC2_OK)
			return -1;
		if (f.nfleets > 0) {
			*k = (long)i;
			snprintf(r->w->region, sizeof r->w->region, "%s", p->regions[i]);
			snprintf(r->w->group, sizeof r->w->group, "%s", f.fleets[0].id);
			if (f.ntemplates > 0)
				snprintf(r->w->template_id, sizeof r->w->template_id, "%s",
				    f.templates[0].id);
		}
		sr_ec2_found_free(&f);
	}
	return 0;
}

static int
aws_ensure(void *c, const struct sr_pool_launch *l, struct sr_pool_where *w, char *err)
{
	struct run r = { c, l, w, NULL };
	struct sr_failover_ops ops = { &r, aws_attempt, aws_drop };
	struct sr_pool_place *places;
	size_t i, n = l->p->nregions;
	long k;
	int rc;

	memset(w, 0, sizeof *w);
	w->target = l->target;
	places = sr_calloc(n + 1, sizeof *places);
	for (i = 0; i < n; i++) {
		places[i].region = l->p->regions[i];
		places[i].types = l->types;
		places[i].ntypes = l->ntypes;
	}
	rc = adopt(&r, &k, err);
	if (rc == 0)
		rc = sr_pool_failover(l, w, places, n, k, &ops, err);
	free(places);
	return rc;
}

static int
aws_set_target(void *a, const struct sr_pool_where *w, unsigned target, char *err)
{
	struct sr_ec2 *c;

	if (region_client(a, w->region, &c, err) == -1)
		return -1;
	return sr_ec2_modify_fleet(c, w->group, target, err) == SR_EC2_OK ? 0 : -1;
}

static int
aws_describe(void *a, const struct sr_pool_where *w, unsigned *target,
    struct sr_pool_vms *vms, char *err)
{
	struct sr_ec2_instance *v = NULL;
	struct sr_ec2_fleet f;
	struct sr_ec2 *c;
	size_t i, n = 0;
	int rc = -1;

	memset(vms, 0, sizeof *vms);
	*target = 0;
	if (region_client(a, w->region, &c, err) == -1)
		return -1;
	if (sr_ec2_describe_fleet(c, w->group, &f, err) == SR_EC2_OK &&
	    sr_ec2_fleet_instances(c, w->group, &v, &n, err) == SR_EC2_OK) {
		*target = f.target;
		for (i = 0; i < n; i++) {
			if (strcmp(v[i].state, "pending") == 0)
				vms->pending++;
			else if (strcmp(v[i].state, "running") == 0)
				vms->running++;
			else if (strcmp(v[i].state, "shutting-down") == 0 ||
			    strcmp(v[i].state, "stopping") == 0)
				vms->stopping++;
			else
				vms->other++;
		}
		rc = 0;
	}
	free(v);
	return rc;
}

/* EC2's launch time ("2025-01-02T03:04:05.000Z") as epoch seconds, or 0. */
static double
launch_time(const char *s)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof tm);
	if ((end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return 0;
	return (double)timegm(&tm) + (*end == '.' ? strtod(end, NULL) : 0);
}

/* t (epoch seconds) as EC2's ISO 8601 in buf (32 bytes). */
static void
iso_time(double t, char *buf)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (gmtime_r(&s, &tm) == NULL || strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, 32, "1970-01-01T00:00:00Z");
}

/* The spot price each spot VM of v launched at, unless it has one (the
 * pool's record kept it): one DescribeSpotPriceHistory per type and zone
 * of those, from the first launch to the last, the price in effect at a
 * VM's launch the latest change at or before it. A VM it does not find
 * (the history denied, unreadable or silent) keeps price 0: the caller's
 * price table then. */
static void
launch_prices(struct sr_ec2 *c, struct sr_pool_vm *v, size_t n)
{
	struct sr_ec2_spot_price *h;
	char start[32], end[32], ignore[SR_ERRMAX];
	double lo, hi, best, ts;
	size_t i, j, k, nh;
	int *need = sr_calloc(n + 1, sizeof *need);

	for (i = 0; i < n; i++)
		need[i] = v[i].spot && v[i].launched > 0 && v[i].price <= 0;
	for (i = 0; i < n; i++) {
		if (!need[i])
			continue;
		for (j = 0; j < i; j++)	/* asked already with an earlier VM */
			if (need[j] && strcmp(v[j].type, v[i].type) == 0 &&
			    strcmp(v[j].zone, v[i].zone) == 0)
				break;
		if (j < i)
			continue;
		lo = hi = v[i].launched;
		for (j = i + 1; j < n; j++)
			if (need[j] && strcmp(v[j].type, v[i].type) == 0 &&
			    strcmp(v[j].zone, v[i].zone) == 0) {
				lo = v[j].launched < lo ? v[j].launched : lo;
				hi = v[j].launched > hi ? v[j].launched : hi;
			}
		iso_time(lo, start);
		iso_time(hi + 1, end);
		if (sr_ec2_spot_price_history(c, v[i].type, v[i].zone, start, end, &h, &nh,
		    ignore) != SR_EC2_OK)
			continue;
		for (j = i; j < n; j++) {
			if (!need[j] || strcmp(v[j].type, v[i].type) != 0 ||
			    strcmp(v[j].zone, v[i].zone) != 0)
				continue;
			for (k = 0, best = 0; k < nh; k++) {
				ts = launch_time(h[k].timestamp);
				if (ts > 0 && ts <= v[j].launched && ts >= best && h[k].price > 0) {
					best = ts;
					v[j].price = h[k].price;
				}
			}
		}
		free(h);
	}
	free(need);
}

static int
aws_list(void *a, const struct sr_pool_where *w, const char *pool, struct sr_pool_vm **out,
    size_t *n, char *err)
{
	struct sr_ec2_instance *v = NULL;
	struct sr_ec2 *c;
	size_t i, k = 0;

	*out = NULL;
	*n = 0;
	if (region_client(a, w->region, &c, err) == -1 ||
	    sr_ec2_pool_instances(c, pool, &v, &k, err) != SR_EC2_OK)
		return -1;
	*out = sr_calloc(k + 1, sizeof **out);
	for (i = 0; i < k; i++) {
		snprintf((*out)[i].id, sizeof (*out)[i].id, "%s", v[i].id);
		snprintf((*out)[i].name, sizeof (*out)[i].name, "%s", v[i].id);
		snprintf((*out)[i].state, sizeof (*out)[i].state, "%s", v[i].state);
		snprintf((*out)[i].zone, sizeof (*out)[i].zone, "%s", v[i].zone);
		snprintf((*out)[i].type, sizeof (*out)[i].type, "%s", v[i].type);
		(*out)[i].launched = launch_time(v[i].launch_time);
		(*out)[i].spot = strcmp(v[i].lifecycle, "spot") == 0;
		(*out)[i].billed = strcmp(v[i].state, "pending") == 0 ||
		    strcmp(v[i].state, "running") == 0;
		/* a price the record keeps is not asked again */
		(*out)[i].price = sr_pool_known_price(w, v[i].id);
	}
	launch_prices(c, *out, k);
	*n = k;
	free(v);
	return 0;
}

static int
aws_destroy(void *a, const char *pool, const char *const *regions, size_t nregions,
    size_t *gone, char *err)
{
	struct sr_ec2 *c;
	size_t i, n;

	*gone = 0;
	for (i = 0; i < nregions; i++) {
		n = 0;
		if (region_client(a, regions[i], &c, err) == -1 ||
		    sr_ec2_delete_pool(c, pool, &n, err) != SR_EC2_OK)
			return -1;
		*gone += n;
	}
	return 0;
}

const struct sr_pool_engine sr_pool_engine_aws = {
	.what = "EC2 Fleet",
	.open = aws_open,
	.close = aws_close,
	.ensure = aws_ensure,
	.set_target = aws_set_target,
	.describe = aws_describe,
	.destroy = aws_destroy,
	.list = aws_list,
};
