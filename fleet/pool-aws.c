/*
 * pool-aws.c: the AWS line of the engine table (pool-engine.h), on
 * cloud/aws/ec2.h: an EC2 Fleet of type maintain in the pool's first
 * region, on a launch template "spotrun-pool-NAME" holding the user-data,
 * both tagged spotrun:pool and spotrun:queue. The image is the pool's, or
 * the current Deep Learning AMI read from AWS's public SSM parameter. Its
 * VMs are listed by their tag (DescribeInstances), for the scaler and
 * `status`, each spot VM with the spot price at its launch
 * (DescribeSpotPriceHistory, one request per type and zone).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ec2.h"
#include "pool-engine.h"
#include "util.h"

/* The prefix of a default image that names an SSM parameter. */
#define SSM_PREFIX "ssm:"

static int
open_region(const char *region, struct sr_ec2 **c, char *err)
{
	struct sr_ec2_opts o = { .region = region };

	return sr_ec2_open(&o, c, err) == 0 ? 0 : -1;
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
 * file's order), or each type in any zone when the file names none there. */
static struct sr_ec2_override *
overrides(const struct sr_pool_launch *l, const char *region, size_t *n)
{
	const struct sr_pool *p = l->p;
	struct sr_ec2_override *v;
	size_t i, j, nz = 0, k = 0, rl = strlen(region);

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
	return v;
}

static int
create(struct sr_ec2 *c, const struct sr_pool_launch *l, struct sr_pool_where *w, char *err)
{
	const struct sr_pool *p = l->p;
	struct sr_ec2_template_spec ts;
	struct sr_ec2_fleet_spec fs;
	struct sr_ec2_override *ov;
	char name[64], token[160], price[32], ignore[SR_ERRMAX];
	size_t nov;
	int rc;

	if (resolve_image(c, p, w->image, sizeof w->image, err) == -1)
		return -1;
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
		return -1;
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
	rc = sr_ec2_create_fleet(c, &fs, w->group, err) == SR_EC2_OK ? 0 : -1;
	free(ov);
	if (rc == -1)	/* leave nothing behind */
		(void)sr_ec2_delete_template(c, w->template_id, ignore);
	w->target = l->target;
	w->created = 1;
	return rc;
}

static int
aws_ensure(const struct sr_pool_launch *l, struct sr_pool_where *w, char *err)
{
	struct sr_ec2_found f;
	struct sr_ec2 *c;
	int rc;

	memset(w, 0, sizeof *w);
	snprintf(w->region, sizeof w->region, "%s", l->p->regions[0]);
	if (open_region(w->region, &c, err) == -1)
		return -1;
	if (sr_ec2_find_pool(c, l->p->name, &f, err) != SR_EC2_OK) {
		sr_ec2_close(c);
		return -1;
	}
	if (f.nfleets > 0) {
		/* up again: the pool is there; only its target moves */
		snprintf(w->group, sizeof w->group, "%s", f.fleets[0].id);
		if (f.ntemplates > 0)
			snprintf(w->template_id, sizeof w->template_id, "%s", f.templates[0].id);
		rc = sr_ec2_modify_fleet(c, w->group, l->target, err) == SR_EC2_OK ? 0 : -1;
		w->target = l->target;
	} else if ((rc = drop_templates(c, &f, err)) == 0)
		rc = create(c, l, w, err);
	sr_ec2_found_free(&f);
	sr_ec2_close(c);
	return rc;
}

static int
aws_set_target(const struct sr_pool_where *w, unsigned target, char *err)
{
	struct sr_ec2 *c;
	int rc;

	if (open_region(w->region, &c, err) == -1)
		return -1;
	rc = sr_ec2_modify_fleet(c, w->group, target, err) == SR_EC2_OK ? 0 : -1;
	sr_ec2_close(c);
	return rc;
}

static int
aws_describe(const struct sr_pool_where *w, unsigned *target, struct sr_pool_vms *vms,
    char *err)
{
	struct sr_ec2_instance *v = NULL;
	struct sr_ec2_fleet f;
	struct sr_ec2 *c;
	size_t i, n = 0;
	int rc = -1;

	memset(vms, 0, sizeof *vms);
	*target = 0;
	if (open_region(w->region, &c, err) == -1)
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
	sr_ec2_close(c);
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

/* The spot price each spot VM of v launched at: one
 * DescribeSpotPriceHistory per type and zone, from the first launch to
 * the last, the price in effect at a VM's launch the latest change at or
 * before it. A VM it does not find (the history denied, unreadable or
 * silent) keeps price 0: the caller's price table then. */
static void
launch_prices(struct sr_ec2 *c, struct sr_pool_vm *v, size_t n)
{
	struct sr_ec2_spot_price *h;
	char start[32], end[32], ignore[SR_ERRMAX];
	double lo, hi, best, ts;
	size_t i, j, k, nh;

	for (i = 0; i < n; i++) {
		if (!v[i].spot || v[i].launched <= 0 || v[i].price > 0)
			continue;
		for (j = 0; j < i; j++)	/* asked already with an earlier VM */
			if (v[j].spot && v[j].launched > 0 && strcmp(v[j].type, v[i].type) == 0 &&
			    strcmp(v[j].zone, v[i].zone) == 0)
				break;
		if (j < i)
			continue;
		lo = hi = v[i].launched;
		for (j = i + 1; j < n; j++)
			if (v[j].spot && v[j].launched > 0 && strcmp(v[j].type, v[i].type) == 0 &&
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
			if (!v[j].spot || v[j].launched <= 0 || strcmp(v[j].type, v[i].type) != 0 ||
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
}

static int
aws_list(const struct sr_pool_where *w, const char *pool, struct sr_pool_vm **out, size_t *n,
    char *err)
{
	struct sr_ec2_instance *v = NULL;
	struct sr_ec2 *c;
	size_t i, k = 0;

	*out = NULL;
	*n = 0;
	if (open_region(w->region, &c, err) == -1)
		return -1;
	if (sr_ec2_pool_instances(c, pool, &v, &k, err) != SR_EC2_OK) {
		sr_ec2_close(c);
		return -1;
	}
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
	}
	launch_prices(c, *out, k);
	sr_ec2_close(c);
	*n = k;
	free(v);
	return 0;
}

static int
aws_destroy(const char *pool, const char *const *regions, size_t nregions, size_t *gone,
    char *err)
{
	struct sr_ec2 *c;
	size_t i, n;

	*gone = 0;
	for (i = 0; i < nregions; i++) {
		if (open_region(regions[i], &c, err) == -1)
			return -1;
		n = 0;
		if (sr_ec2_delete_pool(c, pool, &n, err) != SR_EC2_OK) {
			sr_ec2_close(c);
			return -1;
		}
		*gone += n;
		sr_ec2_close(c);
	}
	return 0;
}

const struct sr_pool_engine sr_pool_engine_aws = {
	.what = "EC2 Fleet",
	.ensure = aws_ensure,
	.set_target = aws_set_target,
	.describe = aws_describe,
	.destroy = aws_destroy,
	.list = aws_list,
};
