/*
 * pool-gcp.c: the GCP line of the engine table (pool-engine.h), on
 * cloud/gcp/gce.h: one global instance template "spotrun-pool-NAME" of
 * Spot VMs (provisioningModel=SPOT, instanceTerminationAction=DELETE)
 * holding the user-data, labelled spotrun-pool and spotrun-queue, and one
 * regional managed instance group on it, "spotrun-pool-NAME-REGION", over
 * the file's zones of that region (none named: Compute chooses). The image
 * is the pool's, or the Deep Learning VM family's current image
 * (images.getFromFamily), so that every VM of the template boots the same.
 *
 * Failover (doc/design.md, "Provisioning"): Compute reports a group's
 * capacity errors in its instances' lastAttempt, not in the calls that
 * made it, so `up` watches the group it made or found: a group none of
 * whose instances exists while one reports a capacity code
 * (ZONE_RESOURCE_POOL_EXHAUSTED, QUOTA_EXCEEDED: sr_gce_classify) is
 * deleted and the pool goes to the next place, the places being each type
 * in order, each region in order within a type, walked by the engines'
 * shared walk (pool-failover.c: history's order, backoff, tried); when
 * every one refused, the pool stays on the last (Compute keeps retrying
 * it) and waits for capacity, and the next `up` goes round again from
 * there.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gce.h"
#include "pool-engine.h"
#include "pool-failover.h"
#include "pool-gcp-advice.h"
#include "util.h"

#define SETTLE_S	90.0	/* how long `up` watches a group for its first VM or error */

/* The engine's client (pool-engine.h): a Compute client, its token and
 * project kept from call to call. */
static int
gcp_open(void **c, char *err)
{
	struct sr_gce_opts o;
	struct sr_gce *g;

	memset(&o, 0, sizeof o);
	*c = NULL;
	if (sr_gce_open(&o, &g, err) == -1)
		return -1;
	*c = g;
	return 0;
}

static void
gcp_close(void *c)
{
	sr_gce_close(c);
}

/* The template's and the group's names. Group names are unique within a
 * region only, so the region in it is for people; cut to Compute's 63. */
static void
names(const char *pool, const char *region, char tmpl[64], char group[64])
{
	size_t n;

	snprintf(tmpl, 64, "spotrun-pool-%s", pool);
	snprintf(group, 64, "spotrun-pool-%s-%s", pool, region);
	for (n = strlen(group); n > 0 && group[n - 1] == '-'; n--)
		group[n - 1] = '\0';
}

/* The image the VMs boot: the pool's, or its family's image now. */
static int
resolve_image(struct sr_gce *c, const struct sr_pool *p, char *image, size_t cap, char *err)
{
	const char *im = p->image != NULL ? p->image : sr_pool_default_image(p->cloud);

	if (strstr(im, "/images/family/") == NULL) {
		snprintf(image, cap, "%s", im);
		return 0;
	}
	return sr_gce_image_from_family(c, im, image, cap, err) == SR_GCE_OK ? 0 : -1;
}

/* What the engine works with during one ensure. */
struct run {
	struct sr_gce *c;
	const struct sr_pool_launch *l;
	struct sr_pool_where *w;
	char tmpl_type[64];		/* the machine type of the pool's template; "": none */
	const struct sr_pool_place *places;
	size_t nplaces;
};

/* The template of type: the pool's if it is of that type, else made
 * (the old one deleted first: its name is the pool's). */
static enum sr_gce_status
template_of(struct run *r, const char *type, char *err)
{
	const struct sr_pool *p = r->l->p;
	struct sr_gce_template_spec ts;
	char tmpl[64], group[64];
	enum sr_gce_status st;

	names(p->name, "", tmpl, group);
	snprintf(r->w->template_id, sizeof r->w->template_id, "%s", tmpl);
	if (strcmp(r->tmpl_type, type) == 0)
		return SR_GCE_OK;
	if (r->tmpl_type[0] != '\0' && (st = sr_gce_delete_template(r->c, tmpl, err)) != SR_GCE_OK)
		return st;
	r->tmpl_type[0] = '\0';
	if (r->w->image[0] == '\0' && resolve_image(r->c, p, r->w->image, sizeof r->w->image,
	    err) == -1)
		return SR_GCE_ERROR;
	memset(&ts, 0, sizeof ts);
	ts.name = tmpl;
	ts.pool = p->name;
	ts.queue = r->l->queue;
	ts.machine_type = type;
	ts.image = r->w->image;
	ts.disk_gb = (unsigned)p->disk_gib;
	ts.service_account = p->role;
	/* cloud-init's GCE datasource reads user-data (doc/gcp.md) */
	ts.user_data = r->l->user_data;
	ts.user_data_len = r->l->user_data_len;
	if ((st = sr_gce_create_template(r->c, &ts, err)) == SR_GCE_OK)
		snprintf(r->tmpl_type, sizeof r->tmpl_type, "%s", type);
	return st;
}

/* Make the group of place pl at the launch's target. */
static enum sr_gce_status
make_group(struct run *r, const struct sr_pool_place *pl, char *err)
{
	const struct sr_pool *p = r->l->p;
	struct sr_gce_group_spec gs;
	const char *zones[SR_POOL_LIST_MAX + 1];
	char tmpl[64], group[64], base[64];
	size_t i, nz = 0, rl = strlen(pl->region);
	enum sr_gce_status st;

	if ((st = template_of(r, pl->types[0], err)) != SR_GCE_OK)
		return st;
	for (i = 0; i < p->nzones && nz < SR_POOL_LIST_MAX; i++)
		if (strncmp(p->zones[i], pl->region, rl) == 0 && p->zones[i][rl] == '-')
			zones[nz++] = p->zones[i];
	zones[nz] = NULL;
	names(p->name, pl->region, tmpl, group);
	snprintf(base, sizeof base, "spotrun-%s", p->name);
	memset(&gs, 0, sizeof gs);
	gs.name = group;
	gs.region = pl->region;
	gs.template_name = tmpl;
	gs.base_instance_name = base;
	gs.zones = zones;
	gs.target = r->l->target;
	if ((st = sr_gce_create_group(r->c, &gs, err)) != SR_GCE_OK)
		return st;
	snprintf(r->w->region, sizeof r->w->region, "%s", pl->region);
	snprintf(r->w->group, sizeof r->w->group, "%s", group);
	r->w->created = 1;
	return SR_GCE_OK;
}

/* Watch the group until it has a VM for its target, or until none of its
 * instances exists and one reports a capacity error (SR_GCE_CAPACITY, its
 * code in code), or SETTLE_S passed (taken as capacity found: Compute is
 * still at work). */
static enum sr_gce_status
watch(struct run *r, unsigned target, char code[64], char *err)
{
	struct sr_gce_instance *v;
	double until = sr_now() + SETTLE_S, pause = 0.25;
	size_t i, n, exist;
	enum sr_gce_status st;

	code[0] = '\0';
	while (target > 0) {
		if ((st = sr_gce_group_instances(r->c, r->w->region, r->w->group, &v, &n, err)) !=
		    SR_GCE_OK)
			return st;
		for (i = exist = 0; i < n; i++) {
			if (v[i].status[0] != '\0')
				exist++;
			else if (v[i].error_class == SR_GCE_CAPACITY && code[0] == '\0')
				snprintf(code, 64, "%s", v[i].error_code);
		}
		free(v);
		if (exist > 0)		/* capacity somewhere: the group fills up */
			break;
		if (code[0] != '\0')
			return SR_GCE_CAPACITY;
		if (sr_now() + pause > until)
			break;
		sr_sleep(pause);
		pause = pause * 2 < 4 ? pause * 2 : 4;
	}
	return SR_GCE_OK;
}

static int
is_capacity(const char *code)
{
	return sr_gce_classify(code) == SR_GCE_CAPACITY;
}

/* The pool's group found, its template's type known; extra groups (an
 * earlier failover cut short) deleted. *k: its place, or -1. */
static enum sr_gce_status
adopt(struct run *r, const struct sr_gce_found *f, long *k, char *err)
{
	const struct sr_gce_group *g = NULL;
	char tmpl[64], group[64];
	size_t i;
	enum sr_gce_status st;

	*k = -1;
	names(r->l->p->name, "", tmpl, group);
	/* a template of another name with the pool's label is left to down */
	for (i = 0; i < f->ntemplates; i++)
		if (strcmp(f->templates[i].name, tmpl) == 0)
			snprintf(r->tmpl_type, sizeof r->tmpl_type, "%s", f->templates[i].machine_type);
	for (i = 0; i < f->ngroups; i++) {
		if (g == NULL && strcmp(f->groups[i].template_name, tmpl) == 0 &&
		    (*k = sr_pool_place_index(r->places, r->nplaces, r->tmpl_type,
		    f->groups[i].region)) >= 0) {
			g = &f->groups[i];
			continue;
		}
		if ((st = sr_gce_delete_group(r->c, f->groups[i].region, f->groups[i].name, err)) !=
		    SR_GCE_OK)
			return st;
	}
	if (g != NULL) {
		snprintf(r->w->region, sizeof r->w->region, "%s", g->region);
		snprintf(r->w->group, sizeof r->w->group, "%s", g->name);
		snprintf(r->w->template_id, sizeof r->w->template_id, "%s", tmpl);
	}
	return SR_GCE_OK;
}

/* The walk's attempt (pool-failover.h): the group made at pl, or the one
 * found there resized; then watched. */
static enum sr_failover_rc
gcp_attempt(void *arg, const struct sr_pool_place *pl, int have, struct sr_failover_refusal *rf,
    char *err)
{
	struct run *r = arg;
	enum sr_gce_status st;

	snprintf(rf->type, sizeof rf->type, "%s", pl->types[0]);
	st = have ? sr_gce_resize_group(r->c, r->w->region, r->w->group, r->l->target, err) :
	    make_group(r, pl, err);
	if (st == SR_GCE_CAPACITY)	/* refused at once: the call's or the operation's error */
		sr_failover_code_in(err, is_capacity, rf->code);
	if (st == SR_GCE_OK)
		st = watch(r, r->l->target, rf->code, err);
	return st == SR_GCE_OK ? SR_FAILOVER_OK : st == SR_GCE_CAPACITY ? SR_FAILOVER_CAPACITY :
	    SR_FAILOVER_ERROR;
}

static int
gcp_drop(void *arg, const struct sr_pool_place *pl, char *err)
{
	struct run *r = arg;

	return sr_gce_delete_group(r->c, pl->region, r->w->group, err) == SR_GCE_OK ? 0 : -1;
}

static int
gcp_ensure(void *c, const struct sr_pool_launch *l, struct sr_pool_where *w, char *err)
{
	struct run r = { c, l, w, "", NULL, 0 };
	struct sr_failover_ops ops = { &r, gcp_attempt, gcp_drop };
	struct sr_pool_place *places;
	struct sr_gce_found f;
	long k = -1;
	int rc = -1;

	memset(w, 0, sizeof *w);
	w->target = l->target;
	r.nplaces = l->ntypes * l->p->nregions;
	places = sr_calloc(r.nplaces + 1, sizeof *places);
	sr_pool_places_by_type(l, places);
	r.places = places;
	if (sr_gce_find_pool(r.c, l->p->name, &f, err) == SR_GCE_OK) {
		if (adopt(&r, &f, &k, err) == SR_GCE_OK)
			rc = 0;
		sr_gce_found_free(&f);
	}
	if (rc == 0) {
		struct sr_pool_launch la = *l;
		struct sr_pool_advice adv;

		/* a pool to place anew: Google's preemption record weighs too */
		memset(&adv, 0, sizeof adv);
		if (k < 0) {
			sr_pool_gcp_advice(r.c, l, places, r.nplaces, &adv);
			la.history = adv.history;
			la.nhistory = adv.nhistory;
		}
		rc = sr_pool_failover(&la, w, places, r.nplaces, k, &ops, err);
		sr_pool_advice_free(&adv);
	}
	free(places);
	return rc;
}

static int
gcp_set_target(void *c, const struct sr_pool_where *w, unsigned target, char *err)
{
	return sr_gce_resize_group(c, w->region, w->group, target, err) == SR_GCE_OK ? 0 : -1;
}

static int
gcp_describe(void *c, const struct sr_pool_where *w, unsigned *target,
    struct sr_pool_vms *vms, char *err)
{
	struct sr_gce_instance *v = NULL;
	struct sr_gce_group g;
	size_t i, n = 0;
	const char *s;
	int rc = -1;

	memset(vms, 0, sizeof *vms);
	*target = 0;
	if (sr_gce_get_group(c, w->region, w->group, &g, err) == SR_GCE_OK &&
	    sr_gce_group_instances(c, w->region, w->group, &v, &n, err) == SR_GCE_OK) {
		*target = g.target;
		for (i = 0; i < n; i++) {
			s = v[i].status;
			/* "": Compute is still creating it (or cannot: lastAttempt) */
			if (s[0] == '\0' || strcmp(s, "PROVISIONING") == 0 ||
			    strcmp(s, "STAGING") == 0)
				vms->pending++;
			else if (strcmp(s, "RUNNING") == 0)
				vms->running++;
			else if (strcmp(s, "STOPPING") == 0 || strcmp(s, "SUSPENDING") == 0)
				vms->stopping++;
			else
				vms->other++;
		}
		rc = 0;
	}
	free(v);
	return rc;
}

/* The pool's groups are found in every region by their template's label
 * (an aggregated list), so regions only names where to look for a reader. */
static int
gcp_destroy(void *c, const char *pool, const char *const *regions, size_t nregions,
    size_t *gone, char *err)
{
	(void)regions;
	(void)nregions;
	*gone = 0;
	return sr_gce_delete_pool(c, pool, gone, err) == SR_GCE_OK ? 0 : -1;
}

/* One VM of the pool from its group's entry m (NULL: a stray of the
 * pool no group owns) and its instance i (NULL: not made yet). */
static void
gcp_vm(struct sr_pool_vm *v, const struct sr_gce_instance *m, const struct sr_gce_instance *i)
{
	const struct sr_gce_instance *a = i != NULL ? i : m;
	const char *st = i != NULL ? i->status : m->status;

	memset(v, 0, sizeof *v);
	snprintf(v->id, sizeof v->id, "%s", a->id);
	snprintf(v->name, sizeof v->name, "%s", a->name);
	/* not made yet: what the group is doing about it ("CREATING") */
	snprintf(v->state, sizeof v->state, "%s", st[0] != '\0' ? st : m->action);
	snprintf(v->zone, sizeof v->zone, "%s", a->zone);
	if (i != NULL) {
		snprintf(v->type, sizeof v->type, "%s", i->machine_type);
		v->launched = sr_pool_time(i->created);
		v->spot = i->spot;
	}
	v->billed = strcmp(st, "PROVISIONING") == 0 || strcmp(st, "STAGING") == 0 ||
	    strcmp(st, "RUNNING") == 0;
}

/* The group's instances (listManagedInstances: those being made too) and
 * the pool's labelled instances in the region (instances.aggregatedList:
 * zone, type, creation time, spot; strays too): two listings, matched by
 * zone and name. */
static int
gcp_list(void *c, const struct sr_pool_where *w, const char *pool, struct sr_pool_vm **out,
    size_t *n, char *err)
{
	struct sr_gce_instance *m = NULL, *in = NULL;
	size_t nm = 0, ni = 0, i, j, k = 0;
	char *used;

	*out = NULL;
	*n = 0;
	if ((w->group[0] != '\0' && sr_gce_group_instances(c, w->region, w->group, &m, &nm,
	    err) != SR_GCE_OK) || sr_gce_pool_instances(c, pool, w->region, &in, &ni, err) !=
	    SR_GCE_OK) {
		free(m);
		return -1;
	}
	*out = sr_calloc(nm + ni + 1, sizeof **out);
	used = sr_calloc(ni + 1, 1);
	for (i = 0; i < nm; i++) {
		for (j = 0; j < ni; j++)
			if (!used[j] && strcmp(in[j].name, m[i].name) == 0 &&
			    strcmp(in[j].zone, m[i].zone) == 0)
				break;
		if (j < ni)
			used[j] = 1;
		gcp_vm(&(*out)[k++], &m[i], j < ni ? &in[j] : NULL);
	}
	for (j = 0; j < ni; j++)
		if (!used[j])
			gcp_vm(&(*out)[k++], &in[j], &in[j]);
	*n = k;
	free(used);
	free(m);
	free(in);
	return 0;
}

const struct sr_pool_engine sr_pool_engine_gcp = {
	.what = "managed instance group",
	.template_what = "instance template",
	.open = gcp_open,
	.close = gcp_close,
	.ensure = gcp_ensure,
	.set_target = gcp_set_target,
	.describe = gcp_describe,
	.destroy = gcp_destroy,
	.list = gcp_list,
};
