/*
 * pool-azure.c: the Azure line of the engine table (pool-engine.h), on
 * cloud/azure/arm.h: a resource group "spotrun-pool-NAME" (made where the
 * pool is first placed; one that exists already is used and never
 * deleted), and in it, per region, a virtual network and a VM scale set
 * in Flexible orchestration mode "spotrun-pool-NAME-REGION" of Spot VMs
 * (priority Spot, evictionPolicy Delete, billingProfile.maxPrice the
 * pool's max_price or -1) of one VM size over the file's zones, booting
 * the user-data as customData, every resource tagged spotrun:pool and
 * spotrun:queue. The image is the pool's, or Microsoft's HPC image
 * (jobspec/pool-keys.c; doc/azure.md says why).
 *
 * Failover (doc/design.md, "Provisioning"): ARM reports a set's capacity
 * errors in the call (SkuNotAvailable, OperationNotAllowed) or in its
 * long-running operation (ZonalAllocationFailed, AllocationFailed), so
 * `up` needs no watching: a set refused is deleted and the pool goes to
 * the next place, each size in order, each region in order within a
 * size, by the engines' shared walk (pool-failover.c: history's order,
 * backoff, tried); when every one refused, the pool stays on the
 * last (its set kept when ARM made one, at its capacity: the next `up`
 * sets it again, which asks ARM again) and waits for capacity.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arm.h"
#include "pool-engine.h"
#include "pool-failover.h"
#include "util.h"

/* The engine's client (pool-engine.h): an ARM client, its token and
 * subscription kept from call to call. */
static int
azure_open(void **c, char *err)
{
	struct sr_arm_opts o;
	struct sr_arm *a;

	memset(&o, 0, sizeof o);
	*c = NULL;
	if (sr_arm_open(&o, &a, err) == -1)
		return -1;
	*c = a;
	return 0;
}

static void
azure_close(void *c)
{
	sr_arm_close(c);
}

/* The resource group's name, and the set's and network's in region. */
static void
names(const char *pool, const char *region, char group[90], char set[90])
{
	snprintf(group, 90, "spotrun-pool-%s", pool);
	snprintf(set, 90, "spotrun-pool-%s-%s", pool, region);
}

/* Make the pool's set at place pl with the launch's target (its group
 * and network first). */
static enum sr_arm_status
make_set(struct sr_arm *c, const struct sr_pool_launch *l, const struct sr_pool_place *pl,
    struct sr_pool_where *w, char *err)
{
	const struct sr_pool *p = l->p;
	struct sr_arm_vmss_spec s;
	const char *zones[SR_POOL_LIST_MAX + 1];
	char group[90], set[90], subnet[512];
	size_t i;
	int created, made;
	enum sr_arm_status st;

	names(p->name, pl->region, group, set);
	if ((st = sr_arm_ensure_group(c, group, pl->region, p->name, l->queue, &created, err)) !=
	    SR_ARM_OK || (st = sr_arm_ensure_vnet(c, group, set, pl->region, p->name, l->queue,
	    subnet, sizeof subnet, err)) != SR_ARM_OK)
		return st;
	for (i = 0; i < p->nzones && i < SR_POOL_LIST_MAX; i++)
		zones[i] = p->zones[i];
	zones[i] = NULL;
	memset(&s, 0, sizeof s);
	s.group = group;
	s.name = set;
	s.region = pl->region;
	s.pool = p->name;
	s.queue = l->queue;
	s.vm_size = pl->types[0];
	s.zones = zones;
	s.image = p->image != NULL ? p->image : sr_pool_default_image(p->cloud);
	s.capacity = l->target;
	s.max_price = p->max_price;
	s.disk_gb = (unsigned)p->disk_gib;
	s.identity = p->role;
	s.subnet_id = subnet;
	s.user_data = l->user_data;
	s.user_data_len = l->user_data_len;
	snprintf(w->template_id, sizeof w->template_id, "%s", group);
	snprintf(w->image, sizeof w->image, "%s", s.image);
	snprintf(w->region, sizeof w->region, "%s", pl->region);
	snprintf(w->group, sizeof w->group, "%s", set);
	st = sr_arm_create_vmss(c, &s, &made, err);
	if (st == SR_ARM_OK)
		w->created = 1;
	/* refused at the call: no set to drop (a DELETE would be a 404) */
	if (!made)
		w->group[0] = '\0';
	return st;
}

static int
is_capacity(const char *code)
{
	return sr_arm_classify(code) == SR_ARM_CAPACITY;
}

/* The pool's set found: *k its place (-1: none); sets of other places
 * (an earlier failover cut short, a size no longer in the file) deleted. */
static enum sr_arm_status
adopt(struct sr_arm *c, const struct sr_pool_place *places, size_t n,
    const struct sr_arm_found *f, struct sr_pool_where *w, long *k, char *err)
{
	const struct sr_arm_vmss *v = NULL;
	size_t i;
	long at;
	enum sr_arm_status st;

	*k = -1;
	for (i = 0; i < f->nsets; i++) {
		if (v == NULL && (at = sr_pool_place_index(places, n, f->sets[i].vm_size,
		    f->sets[i].region)) >= 0) {
			v = &f->sets[i];
			*k = at;
			continue;
		}
		if ((st = sr_arm_delete_vmss(c, f->sets[i].group, f->sets[i].name, err)) !=
		    SR_ARM_OK)
			return st;
	}
	if (v != NULL) {
		snprintf(w->region, sizeof w->region, "%s", v->region);
		snprintf(w->group, sizeof w->group, "%s", v->name);
		snprintf(w->template_id, sizeof w->template_id, "%s", v->group);
	}
	return SR_ARM_OK;
}

/* What the walk's calls work with. */
struct run {
	struct sr_arm *c;
	const struct sr_pool_launch *l;
	struct sr_pool_where *w;
};

/* The walk's attempt (pool-failover.h): the set made at pl, or the one
 * found there set to the target; ARM refuses in the call or its
 * operation, so there is nothing to watch. */
static enum sr_failover_rc
azure_attempt(void *arg, const struct sr_pool_place *pl, int have,
    struct sr_failover_refusal *rf, char *err)
{
	struct run *r = arg;
	enum sr_arm_status st;

	snprintf(rf->type, sizeof rf->type, "%s", pl->types[0]);
	st = have ? sr_arm_set_capacity(r->c, r->w->template_id, r->w->group, r->l->target, err) :
	    make_set(r->c, r->l, pl, r->w, err);
	if (st == SR_ARM_CAPACITY)
		sr_failover_code_in(err, is_capacity, rf->code);
	return st == SR_ARM_OK ? SR_FAILOVER_OK : st == SR_ARM_CAPACITY ? SR_FAILOVER_CAPACITY :
	    SR_FAILOVER_ERROR;
}

/* The set ARM made (a refusal of its operation), or the one found. */
static int
azure_drop(void *arg, const struct sr_pool_place *pl, char *err)
{
	struct run *r = arg;

	(void)pl;
	return sr_arm_delete_vmss(r->c, r->w->template_id, r->w->group, err) == SR_ARM_OK ? 0 :
	    -1;
}

static int
azure_ensure(void *c, const struct sr_pool_launch *l, struct sr_pool_where *w, char *err)
{
	struct run r = { c, l, w };
	struct sr_failover_ops ops = { &r, azure_attempt, azure_drop };
	struct sr_pool_place *places;
	struct sr_arm_found f;
	size_t n = l->ntypes * l->p->nregions;
	long k = -1;
	int rc = -1;

	memset(w, 0, sizeof *w);
	w->target = l->target;
	places = sr_calloc(n + 1, sizeof *places);
	sr_pool_places_by_type(l, places);
	if (sr_arm_find_pool(r.c, l->p->name, &f, err) == SR_ARM_OK) {
		if (adopt(r.c, places, n, &f, w, &k, err) == SR_ARM_OK)
			rc = 0;
		sr_arm_found_free(&f);
	}
	if (rc == 0)
		rc = sr_pool_failover(l, w, places, n, k, &ops, err);
	free(places);
	return rc;
}

static int
azure_set_target(void *c, const struct sr_pool_where *w, unsigned target, char *err)
{
	return sr_arm_set_capacity(c, w->template_id, w->group, target, err) == SR_ARM_OK ? 0 :
	    -1;
}

static int
azure_describe(void *c, const struct sr_pool_where *w, unsigned *target,
    struct sr_pool_vms *vms, char *err)
{
	struct sr_arm_vm *v = NULL;
	struct sr_arm_vmss s;
	size_t i, n = 0;
	const char *st;
	int rc = -1;

	memset(vms, 0, sizeof *vms);
	*target = 0;
	if (sr_arm_get_vmss(c, w->template_id, w->group, &s, err) == SR_ARM_OK &&
	    sr_arm_vmss_vms(c, w->template_id, w->group, &v, &n, err) == SR_ARM_OK) {
		*target = s.capacity;
		for (i = 0; i < n; i++) {
			st = v[i].state;
			if (strcmp(st, "Creating") == 0 || strcmp(st, "Updating") == 0)
				vms->pending++;
			else if (strcmp(st, "Succeeded") == 0)
				vms->running++;
			else if (strcmp(st, "Deleting") == 0)
				vms->stopping++;
			else
				vms->other++;
		}
		rc = 0;
	}
	free(v);
	return rc;
}

/* The pool's resources are found in the whole subscription by their tag,
 * so regions only names where to look for a reader. */
static int
azure_destroy(void *c, const char *pool, const char *const *regions, size_t nregions,
    size_t *gone, char *err)
{
	(void)regions;
	(void)nregions;
	*gone = 0;
	return sr_arm_delete_pool(c, pool, gone, err) == SR_ARM_OK ? 0 : -1;
}

/* The set's VMs (virtualMachines with the 'virtualMachineScaleSet/id'
 * filter: one listing); a VM's zone is REGION-ZONE ("eastus-1"), or the
 * region for a regional one. */
static int
azure_list(void *c, const struct sr_pool_where *w, const char *pool, struct sr_pool_vm **out,
    size_t *n, char *err)
{
	struct sr_arm_vm *v = NULL;
	struct sr_pool_vm *o;
	size_t i, k = 0;

	(void)pool;
	*out = NULL;
	*n = 0;
	if (w->group[0] == '\0')	/* waiting, with no set ARM made */
		return 0;
	if (sr_arm_vmss_vms(c, w->template_id, w->group, &v, &k, err) != SR_ARM_OK)
		return -1;
	*out = sr_calloc(k + 1, sizeof **out);
	for (i = 0; i < k; i++) {
		o = &(*out)[i];
		snprintf(o->id, sizeof o->id, "%s", v[i].vm_id);
		snprintf(o->name, sizeof o->name, "%s", v[i].name);
		snprintf(o->state, sizeof o->state, "%s", v[i].state);
		if (v[i].zone[0] != '\0')
			snprintf(o->zone, sizeof o->zone, "%.40s-%.16s", v[i].region, v[i].zone);
		else
			snprintf(o->zone, sizeof o->zone, "%s", v[i].region);
		snprintf(o->type, sizeof o->type, "%s", v[i].vm_size);
		o->launched = sr_pool_time(v[i].created);
		o->spot = v[i].spot;
		o->billed = strcmp(v[i].state, "Creating") == 0 ||
		    strcmp(v[i].state, "Updating") == 0 || strcmp(v[i].state, "Succeeded") == 0;
	}
	*n = k;
	free(v);
	return 0;
}

const struct sr_pool_engine sr_pool_engine_azure = {
	.what = "VM scale set (Flexible)",
	.template_what = "resource group",
	.open = azure_open,
	.close = azure_close,
	.ensure = azure_ensure,
	.set_target = azure_set_target,
	.describe = azure_describe,
	.destroy = azure_destroy,
	.list = azure_list,
};
