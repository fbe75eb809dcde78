/*
 * gce-ops.c: the operations of the GCP engine (gce.h): the instance
 * template, the regional managed instance group, its size, its state and
 * its instances, and a pool's resources found by label and deleted.
 * Requests go through gce_call and gce_mutate (gce.c); replies are read
 * with jansson, every page of a listing.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gce-int.h"
#include "gce.h"
#include "util.h"

#define LABEL_POOL	"spotrun-pool"
#define LABEL_QUEUE	"spotrun-queue"
#define MD_QUEUE	"spotrun-queue"	/* the queue's URL itself, in metadata */
#define PATH_MAX_GCE	1400

/* ---- growing arrays ---- */

/* Room for one more item of size bytes in *v (n in use, *cap allocated):
 * the new item, zeroed, or NULL when memory ran out. */
static void *
grow(void **v, size_t n, size_t *cap, size_t size)
{
	void *more;

	if (n == *cap) {
		if ((more = sr_try_reallocarray(*v, *cap * 2 + 4, size, NULL)) == NULL)
			return NULL;
		*v = more;
		*cap = *cap * 2 + 4;
	}
	memset((char *)*v + n * size, 0, size);
	return (char *)*v + n * size;
}

/* Every page of method path (its query, if any, escaped already), each
 * page's reply handed to fn (a nonzero return from it: out of memory). */
static enum sr_gce_status
each_page(struct sr_gce *c, const char *what, const char *method, const char *path,
    int (*fn)(json_t *page, void *arg), void *arg, char *err)
{
	char next[1024], esc[3100], *p;
	json_t *page;
	enum sr_gce_status st;
	int rc;

	next[0] = '\0';
	do {
		if (next[0] == '\0')
			p = sr_try_strdup(path, err);
		else {
			gce_escape(esc, sizeof esc, next);
			p = sr_try_asprintf(err, "%s%spageToken=%s", path,
			    strchr(path, '?') != NULL ? "&" : "?", esc);
		}
		if (p == NULL)
			return sr_err_prefix(err, "%s", what);
		st = gce_call(c, what, method, p, NULL, &page, err);
		free(p);
		if (st != SR_GCE_OK)
			return st;
		rc = fn(page, arg);
		gce_str(page, "nextPageToken", next, sizeof next);
		json_decref(page);
		if (rc != 0) {
			sr_err_oom(err, "read reply");
			return sr_err_prefix(err, "%s", what);
		}
	} while (next[0] != '\0');
	return SR_GCE_OK;
}

static int
check_names(const char *what, const char *const *names, char *err)
{
	size_t i;

	for (i = 0; names[i] != NULL; i++)
		if (!gce_name_ok(names[i]))
			return sr_err(err, "%s: \"%.80s\" is not a Compute name (1 to 63 of "
			    "[a-z0-9-], a letter first)", what, names[i]);
	return 0;
}

/* ---- the template ---- */

static json_t *
template_body(const struct sr_gce_template_spec *s, char *err)
{
	char lp[64], lq[64], gb[32];
	json_t *b, *props, *items, *disk, *init, *nic;

	sr_gce_label_value(s->pool, lp);
	sr_gce_label_value(s->queue, lq);
	items = json_pack("[{s:s, s:s}]", "key", MD_QUEUE, "value", s->queue);
	if (items != NULL && s->user_data != NULL && s->user_data_len > 0) {
		json_t *ud = json_stringn(s->user_data, s->user_data_len);

		if (ud == NULL) {
			json_decref(items);
			sr_err(err, "the user-data is not UTF-8 text (Compute's metadata holds "
			    "text)");
			return NULL;
		}
		if (json_array_append_new(items, json_pack("{s:s, s:o}", "key",
		    s->user_data_key != NULL ? s->user_data_key : "user-data", "value", ud)) == -1) {
			json_decref(items);
			items = NULL;
		}
	}
	init = json_pack("{s:s, s:s}", "sourceImage", s->image, "diskType",
	    s->disk_type != NULL ? s->disk_type : "pd-balanced");
	if (init != NULL && s->disk_gb > 0) {
		snprintf(gb, sizeof gb, "%u", s->disk_gb);	/* int64: a string in JSON */
		json_object_set_new(init, "diskSizeGb", json_string(gb));
	}
	disk = json_pack("[{s:b, s:b, s:s, s:o}]", "boot", 1, "autoDelete", 1, "type",
	    "PERSISTENT", "initializeParams", init);
	nic = json_pack("[{s:s}]", "network", s->network != NULL ? s->network :
	    "global/networks/default");
	if (nic != NULL && !s->no_external_ip)
		json_object_set_new(json_array_get(nic, 0), "accessConfigs",
		    json_pack("[{s:s, s:s}]", "type", "ONE_TO_ONE_NAT", "name", "External NAT"));
	props = json_pack("{s:s, s:{s:s, s:s}, s:{s:o}, s:{s:s, s:s, s:s, s:b}, s:o, s:o}",
	    "machineType", s->machine_type,
	    "labels", LABEL_POOL, lp, LABEL_QUEUE, lq,
	    "metadata", "items", items,
	    "scheduling", "provisioningModel", "SPOT", "instanceTerminationAction", "DELETE",
	    "onHostMaintenance", "TERMINATE", "automaticRestart", 0,
	    "disks", disk, "networkInterfaces", nic);
	if (props != NULL && s->accelerator_type != NULL && s->accelerator_count > 0)
		json_object_set_new(props, "guestAccelerators", json_pack("[{s:s, s:i}]",
		    "acceleratorType", s->accelerator_type, "acceleratorCount",
		    (int)s->accelerator_count));
	if (props != NULL && s->service_account != NULL)
		json_object_set_new(props, "serviceAccounts", json_pack("[{s:s, s:[s]}]", "email",
		    s->service_account, "scopes", SR_GCE_SCOPE));
	b = json_pack("{s:s, s:s+, s:o}", "name", s->name, "description", "spotrun pool ",
	    s->pool, "properties", props);
	if (b == NULL)
		sr_err_oom(err, "build request");
	return b;
}

enum sr_gce_status
sr_gce_create_template(struct sr_gce *c, const struct sr_gce_template_spec *s, char *err)
{
	const char *names[] = { s->name, NULL };
	char what[256];
	json_t *b;
	enum sr_gce_status st;

	snprintf(what, sizeof what, "create instance template %.100s", s->name);
	if (check_names(what, names, err) == -1)
		return SR_GCE_ERROR;
	if (s->machine_type == NULL || s->image == NULL || s->pool == NULL || s->queue == NULL) {
		sr_err(err, "%s: a machine type, an image, a pool and a queue are required", what);
		return SR_GCE_ERROR;
	}
	if ((b = template_body(s, err)) == NULL) {
		sr_err_prefix(err, "%s", what);
		return SR_GCE_ERROR;
	}
	st = gce_mutate(c, what, "POST", "/global/instanceTemplates", b, err);
	json_decref(b);
	return st;
}

enum sr_gce_status
sr_gce_image_from_family(struct sr_gce *c, const char *family_url, char *image, size_t cap,
    char *err)
{
	const char *p = strstr(family_url, "projects/"), *fam;
	char what[400], path[512], proj[128], name[128];
	json_t *j;
	size_t n;
	enum sr_gce_status st;

	snprintf(what, sizeof what, "get image of family %.300s", family_url);
	if (p == NULL || (fam = strstr(p, "/global/images/")) == NULL) {
		sr_err(err, "%s: want projects/PROJECT/global/images/family/FAMILY", what);
		return SR_GCE_ERROR;
	}
	if (strncmp(fam, "/global/images/family/", 22) != 0) {
		snprintf(image, cap, "%s", p);	/* an image, not a family */
		return SR_GCE_OK;
	}
	n = (size_t)(fam - p) - 9;
	snprintf(proj, sizeof proj, "%.*s", (int)(n < sizeof proj ? n : sizeof proj - 1), p + 9);
	snprintf(name, sizeof name, "%s", fam + 22);
	if (n >= sizeof proj || strspn(proj, "abcdefghijklmnopqrstuvwxyz0123456789-:.") != n ||
	    !gce_name_ok(name)) {
		sr_err(err, "%s: want projects/PROJECT/global/images/family/FAMILY", what);
		return SR_GCE_ERROR;
	}
	snprintf(path, sizeof path, "/projects/%s/global/images/family/%s", proj, name);
	if ((st = gce_call(c, what, "GET", path, NULL, &j, err)) != SR_GCE_OK)
		return st;
	gce_str(j, "name", name, sizeof name);
	json_decref(j);
	if (!gce_name_ok(name)) {
		sr_err(err, "%s: the reply names no image", what);
		return SR_GCE_ERROR;
	}
	snprintf(image, cap, "projects/%s/global/images/%s", proj, name);
	return SR_GCE_OK;
}

enum sr_gce_status
sr_gce_delete_template(struct sr_gce *c, const char *name, char *err)
{
	const char *names[] = { name, NULL };
	char what[128], path[256];

	snprintf(what, sizeof what, "delete instance template %.64s", name);
	if (check_names(what, names, err) == -1)
		return SR_GCE_ERROR;
	snprintf(path, sizeof path, "/global/instanceTemplates/%s", name);
	return gce_mutate(c, what, "DELETE", path, NULL, err);
}

/* ---- the group ---- */

enum sr_gce_status
sr_gce_create_group(struct sr_gce *c, const struct sr_gce_group_spec *s, char *err)
{
	const char *names[] = { s->name, s->region, s->template_name,
		s->base_instance_name != NULL ? s->base_instance_name : s->name, NULL };
	const char *shape = s->target_shape != NULL ? s->target_shape : "ANY";
	char what[256], path[256], tmpl[512], zone[128];
	json_t *b, *zones;
	size_t i;
	enum sr_gce_status st;

	snprintf(what, sizeof what, "create group %.64s in %.64s", s->name, s->region);
	if (check_names(what, names, err) == -1 ||
	    (s->zones != NULL && check_names(what, s->zones, err) == -1))
		return SR_GCE_ERROR;
	if ((zones = json_array()) == NULL)
		goto oom;
	for (i = 0; s->zones != NULL && s->zones[i] != NULL; i++) {
		snprintf(zone, sizeof zone, "zones/%s", s->zones[i]);
		json_array_append_new(zones, json_pack("{s:s}", "zone", zone));
	}
	snprintf(tmpl, sizeof tmpl, "projects/%s/global/instanceTemplates/%s", c->project,
	    s->template_name);
	b = json_pack("{s:s, s:s, s:s, s:s, s:i, s:{s:o, s:s}}", "name", s->name,
	    "description", "spotrun pool group", "baseInstanceName", names[3],
	    "instanceTemplate", tmpl, "targetSize", (int)s->target,
	    "distributionPolicy", "zones", zones, "targetShape", shape);
	if (b == NULL)
		goto oom;
	if (i == 0)	/* no zone named: Compute chooses the region's */
		json_object_del(json_object_get(b, "distributionPolicy"), "zones");
	/* Compute refuses proactive redistribution with any shape but EVEN */
	if (strcmp(shape, "EVEN") != 0)
		json_object_set_new(b, "updatePolicy", json_pack("{s:s}",
		    "instanceRedistributionType", "NONE"));
	snprintf(path, sizeof path, "/regions/%s/instanceGroupManagers", s->region);
	st = gce_mutate(c, what, "POST", path, b, err);
	json_decref(b);
	return st;
oom:
	sr_err_oom(err, "build request");
	sr_err_prefix(err, "%s", what);
	return SR_GCE_ERROR;
}

enum sr_gce_status
sr_gce_resize_group(struct sr_gce *c, const char *region, const char *name, unsigned target,
    char *err)
{
	const char *names[] = { region, name, NULL };
	char what[256], path[256];

	snprintf(what, sizeof what, "resize group %.64s in %.64s to %u", name, region, target);
	if (check_names(what, names, err) == -1)
		return SR_GCE_ERROR;
	snprintf(path, sizeof path, "/regions/%s/instanceGroupManagers/%s/resize?size=%u", region,
	    name, target);
	return gce_mutate(c, what, "POST", path, NULL, err);
}

enum sr_gce_status
sr_gce_delete_group(struct sr_gce *c, const char *region, const char *name, char *err)
{
	const char *names[] = { region, name, NULL };
	char what[256], path[256];

	snprintf(what, sizeof what, "delete group %.64s in %.64s", name, region);
	if (check_names(what, names, err) == -1)
		return SR_GCE_ERROR;
	snprintf(path, sizeof path, "/regions/%s/instanceGroupManagers/%s", region, name);
	return gce_mutate(c, what, "DELETE", path, NULL, err);
}

static unsigned
uint_of(json_t *o, const char *key)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_integer(v) && json_integer_value(v) > 0 ?
	    (unsigned)json_integer_value(v) : 0;
}

static void
read_group(json_t *j, struct sr_gce_group *g)
{
	json_t *a = json_object_get(j, "currentActions"), *dp, *zs, *st;
	char url[512];
	size_t i;

	memset(g, 0, sizeof *g);
	gce_str(j, "name", g->name, sizeof g->name);
	gce_str(j, "region", url, sizeof url);
	gce_tail(g->region, sizeof g->region, url);
	gce_str(j, "instanceTemplate", url, sizeof url);
	gce_tail(g->template_name, sizeof g->template_name, url);
	g->target = uint_of(j, "targetSize");
	g->none = uint_of(a, "none");
	g->creating = uint_of(a, "creating") + uint_of(a, "creatingWithoutRetries");
	g->deleting = uint_of(a, "deleting");
	g->recreating = uint_of(a, "recreating");
	g->restarting = uint_of(a, "restarting");
	g->verifying = uint_of(a, "verifying");
	st = json_object_get(j, "status");
	g->stable = json_is_object(st) && json_is_true(json_object_get(st, "isStable"));
	dp = json_object_get(j, "distributionPolicy");
	gce_str(dp, "targetShape", g->target_shape, sizeof g->target_shape);
	zs = json_is_object(dp) ? json_object_get(dp, "zones") : NULL;
	for (i = 0; json_is_array(zs) && i < json_array_size(zs) &&
	    g->nzones < SR_ARRAY_LEN(g->zones); i++) {
		gce_str(json_array_get(zs, i), "zone", url, sizeof url);
		gce_tail(g->zones[g->nzones++], sizeof g->zones[0], url);
	}
}

enum sr_gce_status
sr_gce_get_group(struct sr_gce *c, const char *region, const char *name, struct sr_gce_group *g,
    char *err)
{
	const char *names[] = { region, name, NULL };
	char what[256], path[256];
	json_t *j;
	enum sr_gce_status st;

	memset(g, 0, sizeof *g);
	snprintf(what, sizeof what, "get group %.64s in %.64s", name, region);
	if (check_names(what, names, err) == -1)
		return SR_GCE_ERROR;
	snprintf(path, sizeof path, "/regions/%s/instanceGroupManagers/%s", region, name);
	if ((st = gce_call(c, what, "GET", path, NULL, &j, err)) != SR_GCE_OK)
		return st;
	read_group(j, g);
	json_decref(j);
	return SR_GCE_OK;
}

/* The zone of an instance's URL (".../zones/Z/instances/N"), or "". */
static void
zone_of(const char *url, char *dst, size_t cap)
{
	const char *z = strstr(url, "/zones/");

	dst[0] = '\0';
	if (z != NULL)
		snprintf(dst, cap, "%.*s", (int)strcspn(z + 7, "/"), z + 7);
}

struct instances {
	struct sr_gce_instance *v;
	size_t n, cap;
	const char *want_pool;		/* aggregated listing: the label value kept */
};

static int
on_managed(json_t *page, void *arg)
{
	struct instances *l = arg;
	json_t *mis = json_object_get(page, "managedInstances"), *m, *errs;
	struct sr_gce_instance *in;
	char url[512];
	size_t i;

	for (i = 0; json_is_array(mis) && i < json_array_size(mis); i++) {
		m = json_array_get(mis, i);
		if ((in = grow((void **)&l->v, l->n, &l->cap, sizeof *l->v)) == NULL)
			return -1;
		l->n++;
		gce_str(m, "instance", url, sizeof url);
		gce_tail(in->name, sizeof in->name, url);
		zone_of(url, in->zone, sizeof in->zone);
		gce_str(m, "id", in->id, sizeof in->id);
		gce_str(m, "instanceStatus", in->status, sizeof in->status);
		gce_str(m, "currentAction", in->action, sizeof in->action);
		errs = json_object_get(json_object_get(json_object_get(m, "lastAttempt"), "errors"),
		    "errors");
		if (json_is_array(errs) && json_array_size(errs) > 0) {
			gce_str(json_array_get(errs, 0), "code", in->error_code,
			    sizeof in->error_code);
			gce_str(json_array_get(errs, 0), "message", in->error_message,
			    sizeof in->error_message);
			in->error_class = sr_gce_classify(in->error_code);
		}
	}
	return 0;
}

enum sr_gce_status
sr_gce_group_instances(struct sr_gce *c, const char *region, const char *name,
    struct sr_gce_instance **out, size_t *n, char *err)
{
	const char *names[] = { region, name, NULL };
	struct instances l = { NULL, 0, 0, NULL };
	char what[256], path[256];
	enum sr_gce_status st;

	*out = NULL;
	*n = 0;
	snprintf(what, sizeof what, "list the instances of group %.64s in %.64s", name, region);
	if (check_names(what, names, err) == -1)
		return SR_GCE_ERROR;
	snprintf(path, sizeof path, "/regions/%s/instanceGroupManagers/%s/listManagedInstances",
	    region, name);
	if ((st = each_page(c, what, "POST", path, on_managed, &l, err)) != SR_GCE_OK) {
		free(l.v);
		return st;
	}
	*out = l.v;
	*n = l.n;
	return SR_GCE_OK;
}

/* ---- a pool found by label ---- */

void
sr_gce_found_free(struct sr_gce_found *f)
{
	free(f->groups);
	free(f->templates);
	free(f->instances);
	memset(f, 0, sizeof *f);
}

struct templates {
	struct sr_gce_template *v;
	size_t n, cap;
	const char *want_pool;
};

static int
on_templates(json_t *page, void *arg)
{
	struct templates *l = arg;
	json_t *items = json_object_get(page, "items"), *t, *props;
	struct sr_gce_template *tp;
	char pool[64], url[512];
	size_t i;

	for (i = 0; json_is_array(items) && i < json_array_size(items); i++) {
		t = json_array_get(items, i);
		props = json_object_get(t, "properties");
		gce_str(json_object_get(props, "labels"), LABEL_POOL, pool, sizeof pool);
		if (strcmp(pool, l->want_pool) != 0)
			continue;
		if ((tp = grow((void **)&l->v, l->n, &l->cap, sizeof *l->v)) == NULL)
			return -1;
		l->n++;
		gce_str(t, "name", tp->name, sizeof tp->name);
		gce_str(props, "machineType", url, sizeof url);
		gce_tail(tp->machine_type, sizeof tp->machine_type, url);
		snprintf(tp->pool, sizeof tp->pool, "%s", pool);
	}
	return 0;
}

struct groups {
	struct sr_gce_group *v;
	size_t n, cap;
	const struct templates *t;
};

static int
on_groups(json_t *page, void *arg)
{
	struct groups *l = arg;
	json_t *items = json_object_get(page, "items"), *scope, *igms;
	struct sr_gce_group g, *gp;
	const char *key;
	size_t i, k;

	json_object_foreach(items, key, scope) {
		/* regional groups only: the engine makes no zonal one */
		if (strncmp(key, "regions/", 8) != 0)
			continue;
		igms = json_object_get(scope, "instanceGroupManagers");
		for (i = 0; json_is_array(igms) && i < json_array_size(igms); i++) {
			read_group(json_array_get(igms, i), &g);
			for (k = 0; k < l->t->n && strcmp(l->t->v[k].name, g.template_name) != 0; k++)
				;
			if (k == l->t->n)
				continue;
			if ((gp = grow((void **)&l->v, l->n, &l->cap, sizeof *l->v)) == NULL)
				return -1;
			l->n++;
			*gp = g;
			snprintf(gp->pool, sizeof gp->pool, "%s", l->t->v[k].pool);
		}
	}
	return 0;
}

static int
on_instances(json_t *page, void *arg)
{
	struct instances *l = arg;
	json_t *items = json_object_get(page, "items"), *scope, *insts, *j;
	struct sr_gce_instance *in;
	const char *key;
	char pool[64], url[512];
	size_t i;

	json_object_foreach(items, key, scope) {
		insts = json_object_get(scope, "instances");
		for (i = 0; json_is_array(insts) && i < json_array_size(insts); i++) {
			j = json_array_get(insts, i);
			/* the filter checked again: a server may ignore one */
			gce_str(json_object_get(j, "labels"), LABEL_POOL, pool, sizeof pool);
			if (strcmp(pool, l->want_pool) != 0)
				continue;
			if ((in = grow((void **)&l->v, l->n, &l->cap, sizeof *l->v)) == NULL)
				return -1;
			l->n++;
			gce_str(j, "name", in->name, sizeof in->name);
			gce_str(j, "id", in->id, sizeof in->id);
			gce_str(j, "zone", url, sizeof url);
			gce_tail(in->zone, sizeof in->zone, url);
			gce_str(j, "status", in->status, sizeof in->status);
			gce_str(j, "machineType", url, sizeof url);
			gce_tail(in->machine_type, sizeof in->machine_type, url);
			snprintf(in->pool, sizeof in->pool, "%s", pool);
			gce_str(j, "creationTimestamp", in->created, sizeof in->created);
			gce_str(json_object_get(j, "scheduling"), "provisioningModel", url,
			    sizeof url);
			in->spot = strcmp(url, "SPOT") == 0;
		}
	}
	return 0;
}

/* The pool's labelled instances, every zone's. */
static enum sr_gce_status
list_instances(struct sr_gce *c, const char *what, const char *lp, struct instances *l, char *err)
{
	char filter[128], esc[400], path[512];

	snprintf(filter, sizeof filter, "labels.%s = \"%s\"", LABEL_POOL, lp);
	gce_escape(esc, sizeof esc, filter);
	snprintf(path, sizeof path, "/aggregated/instances?filter=%s", esc);
	l->want_pool = lp;
	return each_page(c, what, "GET", path, on_instances, l, err);
}

enum sr_gce_status
sr_gce_pool_instances(struct sr_gce *c, const char *pool, const char *region,
    struct sr_gce_instance **out, size_t *n, char *err)
{
	struct instances l = { NULL, 0, 0, NULL };
	char what[256], lp[64];
	size_t i, k, rl = strlen(region);
	enum sr_gce_status st;

	*out = NULL;
	*n = 0;
	snprintf(what, sizeof what, "list the instances of pool %.64s in %.64s", pool, region);
	sr_gce_label_value(pool, lp);
	if ((st = list_instances(c, what, lp, &l, err)) != SR_GCE_OK) {
		free(l.v);
		return st;
	}
	/* the region's zones only: REGION-X */
	for (i = k = 0; i < l.n; i++)
		if (strncmp(l.v[i].zone, region, rl) == 0 && l.v[i].zone[rl] == '-')
			l.v[k++] = l.v[i];
	*out = l.v;
	*n = k;
	return SR_GCE_OK;
}

enum sr_gce_status
sr_gce_find_pool(struct sr_gce *c, const char *pool, struct sr_gce_found *out, char *err)
{
	struct templates t = { NULL, 0, 0, NULL };
	struct groups g = { NULL, 0, 0, &t };
	struct instances in = { NULL, 0, 0, NULL };
	char what[256], lp[64];
	enum sr_gce_status st;

	memset(out, 0, sizeof *out);
	snprintf(what, sizeof what, "find pool %.128s", pool);
	sr_gce_label_value(pool, lp);
	t.want_pool = lp;
	/* the templates first: a group is the pool's when its template is */
	if ((st = each_page(c, what, "GET", "/global/instanceTemplates", on_templates, &t,
	    err)) != SR_GCE_OK ||
	    (st = each_page(c, what, "GET", "/aggregated/instanceGroupManagers", on_groups, &g,
	    err)) != SR_GCE_OK ||
	    (st = list_instances(c, what, lp, &in, err)) != SR_GCE_OK) {
		free(t.v);
		free(g.v);
		free(in.v);
		return st;
	}
	out->templates = t.v;
	out->ntemplates = t.n;
	out->groups = g.v;
	out->ngroups = g.n;
	out->instances = in.v;
	out->ninstances = in.n;
	return SR_GCE_OK;
}

enum sr_gce_status
sr_gce_delete_instance(struct sr_gce *c, const char *zone, const char *name, char *err)
{
	const char *names[] = { zone, name, NULL };
	char what[256], path[256];

	snprintf(what, sizeof what, "delete instance %.64s in %.64s", name, zone);
	if (check_names(what, names, err) == -1)
		return SR_GCE_ERROR;
	snprintf(path, sizeof path, "/zones/%s/instances/%s", zone, name);
	return gce_mutate(c, what, "DELETE", path, NULL, err);
}

/* Keep the first failure: its status, its message in err. A delete of
 * what is gone already (notFound) is no failure. 1 when st deleted. */
static int
keep_first(struct sr_gce *c, enum sr_gce_status st, const char *msg, enum sr_gce_status *first,
    char *err)
{
	if (st == SR_GCE_OK)
		return 1;
	if (strcmp(c->last_code, "notFound") == 0 || *first != SR_GCE_OK)
		return 0;
	*first = st;
	if (err != NULL)
		snprintf(err, SR_ERRMAX, "%s", msg);
	return 0;
}

enum sr_gce_status
sr_gce_delete_pool(struct sr_gce *c, const char *pool, size_t *gone, char *err)
{
	struct instances left = { NULL, 0, 0, NULL };
	struct sr_gce_found f;
	enum sr_gce_status st, first = SR_GCE_OK;
	char e[SR_ERRMAX], lp[64];
	size_t i, n = 0;

	if (gone != NULL)
		*gone = 0;
	if ((st = sr_gce_find_pool(c, pool, &f, err)) != SR_GCE_OK)
		return st;
	/* the groups first, so none creates a replacement meanwhile; their
	 * deletion, waited on, takes their instances */
	for (i = 0; i < f.ngroups; i++)
		n += keep_first(c, sr_gce_delete_group(c, f.groups[i].region, f.groups[i].name, e),
		    e, &first, err);
	/* then the labelled instances left, listed again: strays no group
	 * owns (abandoned, or made by hand from the template) */
	sr_gce_label_value(pool, lp);
	st = list_instances(c, "find pool's instances", lp, &left, e);
	keep_first(c, st, e, &first, err);
	for (i = 0; st == SR_GCE_OK && i < left.n; i++)
		n += keep_first(c, sr_gce_delete_instance(c, left.v[i].zone, left.v[i].name, e), e,
		    &first, err);
	free(left.v);
	for (i = 0; i < f.ntemplates; i++)
		n += keep_first(c, sr_gce_delete_template(c, f.templates[i].name, e), e, &first,
		    err);
	sr_gce_found_free(&f);
	if (gone != NULL)
		*gone = n;
	return first;
}
