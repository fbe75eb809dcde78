/*
 * ec2-ops.c: the operations of the EC2 engine (ec2.h): the launch template,
 * the fleet of type maintain and its target, their descriptions, and a
 * pool's resources found by tag and deleted. Requests go through ec2_call
 * (ec2.c); replies are read by one table-driven listing of EC2's
 * "xSet/item" shapes, every page of them.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ec2-int.h"
#include "ec2.h"
#include "util.h"

#define TAG_POOL	"spotrun:pool"
#define TAG_QUEUE	"spotrun:queue"
#define IDS_PER_CALL	25	/* DeleteFleets' limit; TerminateInstances takes more */

/* ---- listings: EC2's "set/item" replies into arrays of structs ---- */

enum ftype { F_STR, F_UINT, F_DOUBLE };

struct field {
	const char *suffix;	/* the path below the item */
	enum ftype t;
	size_t off, len;
};

struct shape {
	const char *item;	/* "fleetSet/item" */
	size_t size;		/* of one struct */
	const struct field *f;
	size_t nf;
	size_t pool_off, queue_off;	/* the tags' char arrays (128 and 512 bytes) */
	int no_tags;			/* 1: the struct has no tags (pool_off unused) */
};

#define STR(type, m, suf) { suf, F_STR, offsetof(type, m), sizeof(((type *)0)->m) }

static const struct field fleet_fields[] = {
	STR(struct sr_ec2_fleet, id, "fleetId"),
	STR(struct sr_ec2_fleet, state, "fleetState"),
	STR(struct sr_ec2_fleet, type, "type"),
	{ "targetCapacitySpecification/totalTargetCapacity", F_UINT,
	  offsetof(struct sr_ec2_fleet, target), 0 },
	{ "fulfilledCapacity", F_DOUBLE, offsetof(struct sr_ec2_fleet, fulfilled), 0 },
	STR(struct sr_ec2_fleet, error_code, "errorSet/item/errorCode"),
	STR(struct sr_ec2_fleet, error_message, "errorSet/item/errorMessage"),
	STR(struct sr_ec2_fleet, error_type,
	    "errorSet/item/launchTemplateAndOverrides/overrides/instanceType"),
	STR(struct sr_ec2_fleet, error_zone,
	    "errorSet/item/launchTemplateAndOverrides/overrides/availabilityZone"),
};
static const struct shape fleet_shape = { "fleetSet/item", sizeof(struct sr_ec2_fleet),
	fleet_fields, SR_ARRAY_LEN(fleet_fields), offsetof(struct sr_ec2_fleet, pool),
	offsetof(struct sr_ec2_fleet, queue), 0 };

static const struct field inst_fields[] = {
	STR(struct sr_ec2_instance, id, "instanceId"),
	STR(struct sr_ec2_instance, type, "instanceType"),
	STR(struct sr_ec2_instance, zone, "placement/availabilityZone"),
	STR(struct sr_ec2_instance, state, "instanceState/name"),
	STR(struct sr_ec2_instance, launch_time, "launchTime"),
	STR(struct sr_ec2_instance, lifecycle, "instanceLifecycle"),
};
static const struct shape inst_shape = { "reservationSet/item/instancesSet/item",
	sizeof(struct sr_ec2_instance), inst_fields, SR_ARRAY_LEN(inst_fields),
	offsetof(struct sr_ec2_instance, pool), offsetof(struct sr_ec2_instance, queue), 0 };

static const struct field tmpl_fields[] = {
	STR(struct sr_ec2_template, id, "launchTemplateId"),
	STR(struct sr_ec2_template, name, "launchTemplateName"),
};
static const struct shape tmpl_shape = { "launchTemplates/item", sizeof(struct sr_ec2_template),
	tmpl_fields, SR_ARRAY_LEN(tmpl_fields), offsetof(struct sr_ec2_template, pool),
	offsetof(struct sr_ec2_template, queue), 0 };

/* DescribeFleetInstances: the ids only, in a struct sr_ec2_instance */
static const struct field fi_fields[] = {
	STR(struct sr_ec2_instance, id, "instanceId"),
	STR(struct sr_ec2_instance, type, "instanceType"),
};
static const struct shape fi_shape = { "activeInstanceSet/item", sizeof(struct sr_ec2_instance),
	fi_fields, SR_ARRAY_LEN(fi_fields), offsetof(struct sr_ec2_instance, pool),
	offsetof(struct sr_ec2_instance, queue), 0 };

static const struct field price_fields[] = {
	STR(struct sr_ec2_spot_price, type, "instanceType"),
	STR(struct sr_ec2_spot_price, zone, "availabilityZone"),
	STR(struct sr_ec2_spot_price, product, "productDescription"),
	STR(struct sr_ec2_spot_price, timestamp, "timestamp"),
	{ "spotPrice", F_DOUBLE, offsetof(struct sr_ec2_spot_price, price), 0 },
};
static const struct shape price_shape = { "spotPriceHistorySet/item",
	sizeof(struct sr_ec2_spot_price), price_fields, SR_ARRAY_LEN(price_fields), 0, 0, 1 };

struct listing {
	const struct shape *sh;
	unsigned char *cur;	/* the item being read */
	char tagkey[128], tagval[512];
	unsigned char *items;
	size_t n, cap;
	char next[4096];	/* nextToken */
	int oom;
};

static int
on_list_elem(const char *path, const char *text, void *arg)
{
	struct listing *l = arg;
	const struct shape *sh = l->sh;
	size_t il = strlen(sh->item), i;
	const char *suf;
	unsigned char *more;

	if (strcmp(path, "nextToken") == 0) {
		ec2_copy(l->next, sizeof l->next, text);
		return 0;
	}
	if (strncmp(path, sh->item, il) != 0)
		return 0;
	if (path[il] == '\0') {		/* the item closes: keep it */
		if (l->n == l->cap) {
			if ((more = sr_try_reallocarray(l->items, l->cap * 2 + 8, sh->size, NULL)) == NULL) {
				l->oom = 1;
				return 1;
			}
			l->items = more;
			l->cap = l->cap * 2 + 8;
		}
		memcpy(l->items + l->n++ * sh->size, l->cur, sh->size);
		memset(l->cur, 0, sh->size);
		return 0;
	}
	if (path[il] != '/')
		return 0;
	suf = path + il + 1;
	if (strcmp(suf, "tagSet/item/key") == 0)
		ec2_copy(l->tagkey, sizeof l->tagkey, text);
	else if (strcmp(suf, "tagSet/item/value") == 0)
		ec2_copy(l->tagval, sizeof l->tagval, text);
	else if (strcmp(suf, "tagSet/item") == 0 && !sh->no_tags) {
		if (strcmp(l->tagkey, TAG_POOL) == 0)
			ec2_copy((char *)l->cur + sh->pool_off, 128, l->tagval);
		else if (strcmp(l->tagkey, TAG_QUEUE) == 0)
			ec2_copy((char *)l->cur + sh->queue_off, 512, l->tagval);
		l->tagkey[0] = l->tagval[0] = '\0';
	}
	for (i = 0; i < sh->nf; i++) {
		if (strcmp(suf, sh->f[i].suffix) != 0)
			continue;
		if (sh->f[i].t == F_STR)
			ec2_copy((char *)l->cur + sh->f[i].off, sh->f[i].len, text);
		else if (sh->f[i].t == F_UINT)
			*(unsigned *)(void *)(l->cur + sh->f[i].off) =
			    (unsigned)strtoul(text, NULL, 10);
		else
			*(double *)(void *)(l->cur + sh->f[i].off) = strtod(text, NULL);
	}
	return 0;
}

/*
 * Every page of action with params (name, value pairs, NULL-ended) read as
 * shape sh: *items (malloc'd) gets *n structs. what names the request in
 * err.
 */
static enum sr_ec2_status
list_all(struct sr_ec2 *c, const char *what, const char *action, const char *const *params,
    const struct shape *sh, void **items, size_t *n, char *err)
{
	struct listing l;
	struct ec2_form f;
	enum sr_ec2_status st = SR_EC2_OK;
	char *body;
	size_t len, i;
	int rc;

	*items = NULL;
	*n = 0;
	memset(&l, 0, sizeof l);
	l.sh = sh;
	if ((l.cur = sr_try_calloc(1, sh->size, err)) == NULL)
		return SR_EC2_ERROR;
	do {
		memset(&f, 0, sizeof f);
		ec2_form_add(&f, "Action", action);
		for (i = 0; params != NULL && params[i] != NULL; i += 2)
			ec2_form_add(&f, params[i], params[i + 1]);
		if (l.next[0] != '\0')
			ec2_form_add(&f, "NextToken", l.next);
		l.next[0] = '\0';
		if ((st = ec2_call(c, what, &f, &body, &len, err)) != SR_EC2_OK)
			break;
		rc = ec2_xml_walk(body, len, on_list_elem, &l, err);
		free(body);
		if (rc != 0 || l.oom) {
			if (l.oom)
				sr_err_oom(err, "read reply");
			sr_err_prefix(err, "%s", what);
			st = SR_EC2_ERROR;
			break;
		}
	} while (l.next[0] != '\0');
	free(l.cur);
	if (st != SR_EC2_OK) {
		free(l.items);
		return st;
	}
	*items = l.items;
	*n = l.n;
	return SR_EC2_OK;
}

/* ---- one value out of a reply ---- */

struct one {
	const char *path;
	char *dst;
	size_t len;
};

static int
on_one(const char *path, const char *text, void *arg)
{
	struct one *o = arg;

	if (strcmp(path, o->path) == 0)
		ec2_copy(o->dst, o->len, text);
	return 0;
}

/* Send f; copy the reply's element at path into dst ("" when absent). */
static enum sr_ec2_status
call_for(struct sr_ec2 *c, const char *what, struct ec2_form *f, const char *path, char *dst,
    size_t len, char *err)
{
	struct one o = { path, dst, len };
	enum sr_ec2_status st;
	char *body;
	size_t blen;

	dst[0] = '\0';
	if ((st = ec2_call(c, what, f, &body, &blen, err)) != SR_EC2_OK)
		return st;
	if (ec2_xml_walk(body, blen, on_one, &o, err) != 0) {
		free(body);
		sr_err_prefix(err, "%s", what);
		return SR_EC2_ERROR;
	}
	free(body);
	return SR_EC2_OK;
}

/* ---- the launch template ---- */

static void
add_tags(struct ec2_form *f, const char *prefix, int n, const char *rtype, const char *pool,
    const char *queue)
{
	ec2_form_addf(f, rtype, "%sTagSpecification.%d.ResourceType", prefix, n);
	ec2_form_addf(f, TAG_POOL, "%sTagSpecification.%d.Tag.1.Key", prefix, n);
	ec2_form_addf(f, pool, "%sTagSpecification.%d.Tag.1.Value", prefix, n);
	ec2_form_addf(f, TAG_QUEUE, "%sTagSpecification.%d.Tag.2.Key", prefix, n);
	ec2_form_addf(f, queue, "%sTagSpecification.%d.Tag.2.Value", prefix, n);
}

enum sr_ec2_status
sr_ec2_create_template(struct sr_ec2 *c, const struct sr_ec2_template_spec *s, char id[64],
    char *err)
{
	char what[256], num[32], *b64 = NULL;
	struct ec2_form f;
	size_t i;
	enum sr_ec2_status st;

	id[0] = '\0';
	snprintf(what, sizeof what, "create launch template %s", s->name);
	memset(&f, 0, sizeof f);
	ec2_form_add(&f, "Action", "CreateLaunchTemplate");
	ec2_form_add(&f, "LaunchTemplateName", s->name);
	ec2_form_add(&f, "LaunchTemplateData.ImageId", s->image_id);
	/* poweroff (the idle agent, a finished job) ends the machine and its
	 * EBS bill; the default, stop, keeps the volume billed */
	ec2_form_add(&f, "LaunchTemplateData.InstanceInitiatedShutdownBehavior", "terminate");
	if (s->user_data != NULL && s->user_data_len > 0) {
		if ((b64 = sr_try_malloc(4 * ((s->user_data_len + 2) / 3) + 1, err)) == NULL) {
			ec2_form_free(&f);
			sr_err_prefix(err, "%s", what);
			return SR_EC2_ERROR;
		}
		EVP_EncodeBlock((unsigned char *)b64, s->user_data, (int)s->user_data_len);
		ec2_form_add(&f, "LaunchTemplateData.UserData", b64);
		free(b64);
	}
	if (s->instance_profile != NULL)
		ec2_form_add(&f, strncmp(s->instance_profile, "arn:", 4) == 0 ?
		    "LaunchTemplateData.IamInstanceProfile.Arn" :
		    "LaunchTemplateData.IamInstanceProfile.Name", s->instance_profile);
	if (s->volume_gb > 0) {
		snprintf(num, sizeof num, "%u", s->volume_gb);
		ec2_form_add(&f, "LaunchTemplateData.BlockDeviceMapping.1.DeviceName",
		    s->root_device != NULL ? s->root_device : "/dev/sda1");
		ec2_form_add(&f, "LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeSize", num);
		ec2_form_add(&f, "LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeType", "gp3");
		ec2_form_add(&f, "LaunchTemplateData.BlockDeviceMapping.1.Ebs.DeleteOnTermination",
		    "true");
	}
	if (s->key_name != NULL)
		ec2_form_add(&f, "LaunchTemplateData.KeyName", s->key_name);
	for (i = 0; s->security_groups != NULL && s->security_groups[i] != NULL; i++)
		ec2_form_addf(&f, s->security_groups[i], "LaunchTemplateData.SecurityGroupId.%zu",
		    i + 1);
	/* the instances and volumes launched from it carry the pool's tags,
	 * so `down` finds them even when no fleet is left */
	add_tags(&f, "LaunchTemplateData.", 1, "instance", s->pool, s->queue);
	add_tags(&f, "LaunchTemplateData.", 2, "volume", s->pool, s->queue);
	add_tags(&f, "", 1, "launch-template", s->pool, s->queue);
	st = call_for(c, what, &f, "launchTemplate/launchTemplateId", id, 64, err);
	if (st == SR_EC2_OK && id[0] == '\0') {
		sr_err(err, "%s: the reply has no launchTemplateId", what);
		return SR_EC2_ERROR;
	}
	return st;
}

enum sr_ec2_status
sr_ec2_delete_template(struct sr_ec2 *c, const char *id, char *err)
{
	char what[128], got[64];
	struct ec2_form f;

	snprintf(what, sizeof what, "delete launch template %s", id);
	memset(&f, 0, sizeof f);
	ec2_form_add(&f, "Action", "DeleteLaunchTemplate");
	ec2_form_add(&f, "LaunchTemplateId", id);
	return call_for(c, what, &f, "launchTemplate/launchTemplateId", got, sizeof got, err);
}

/* ---- the fleet ---- */

enum sr_ec2_status
sr_ec2_create_fleet(struct sr_ec2 *c, const struct sr_ec2_fleet_spec *s, char id[64], char *err)
{
	const char *lt = "LaunchTemplateConfigs.1.";
	char what[256], num[32];
	struct ec2_form f;
	size_t i;
	enum sr_ec2_status st;

	id[0] = '\0';
	snprintf(what, sizeof what, "create fleet for pool %s", s->pool);
	if (s->noverrides == 0) {
		sr_err(err, "%s: no instance type and zone to launch in", what);
		return SR_EC2_ERROR;
	}
	memset(&f, 0, sizeof f);
	ec2_form_add(&f, "Action", "CreateFleet");
	ec2_form_add(&f, "Type", "maintain");
	if (s->client_token != NULL)
		ec2_form_add(&f, "ClientToken", s->client_token);
	ec2_form_add(&f, "ReplaceUnhealthyInstances", "true");
	ec2_form_add(&f, "ExcessCapacityTerminationPolicy", "termination");
	ec2_form_add(&f, "SpotOptions.AllocationStrategy", "price-capacity-optimized");
	ec2_form_add(&f, "SpotOptions.InstanceInterruptionBehavior", "terminate");
	if (s->max_total_price != NULL)
		ec2_form_add(&f, "SpotOptions.MaxTotalPrice", s->max_total_price);
	snprintf(num, sizeof num, "%u", s->target);
	ec2_form_add(&f, "TargetCapacitySpecification.TotalTargetCapacity", num);
	ec2_form_add(&f, "TargetCapacitySpecification.DefaultTargetCapacityType", "spot");
	ec2_form_addf(&f, s->template_id, "%sLaunchTemplateSpecification.LaunchTemplateId", lt);
	ec2_form_addf(&f, "$Latest", "%sLaunchTemplateSpecification.Version", lt);
	for (i = 0; i < s->noverrides; i++) {
		const struct sr_ec2_override *o = &s->overrides[i];

		ec2_form_addf(&f, o->instance_type, "%sOverrides.%zu.InstanceType", lt, i + 1);
		if (o->subnet_id != NULL)
			ec2_form_addf(&f, o->subnet_id, "%sOverrides.%zu.SubnetId", lt, i + 1);
		if (o->zone != NULL)
			ec2_form_addf(&f, o->zone, "%sOverrides.%zu.AvailabilityZone", lt, i + 1);
		/* the caller's order; price-capacity-optimized weighs price and
		 * capacity first, capacity-optimized-prioritized would obey it */
		snprintf(num, sizeof num, "%zu", i + 1);
		ec2_form_addf(&f, num, "%sOverrides.%zu.Priority", lt, i + 1);
	}
	add_tags(&f, "", 1, "fleet", s->pool, s->queue);
	st = call_for(c, what, &f, "fleetId", id, 64, err);
	if (st == SR_EC2_OK && id[0] == '\0') {
		sr_err(err, "%s: the reply has no fleetId", what);
		return SR_EC2_ERROR;
	}
	return st;
}

enum sr_ec2_status
sr_ec2_modify_fleet(struct sr_ec2 *c, const char *id, unsigned target, char *err)
{
	char what[128], num[32], ret[16];
	struct ec2_form f;
	enum sr_ec2_status st;

	snprintf(what, sizeof what, "modify fleet %s", id);
	snprintf(num, sizeof num, "%u", target);
	memset(&f, 0, sizeof f);
	ec2_form_add(&f, "Action", "ModifyFleet");
	ec2_form_add(&f, "FleetId", id);
	ec2_form_add(&f, "TargetCapacitySpecification.TotalTargetCapacity", num);
	if ((st = call_for(c, what, &f, "return", ret, sizeof ret, err)) != SR_EC2_OK)
		return st;
	if (strcmp(ret, "true") != 0) {
		sr_err(err, "%s: EC2 answered return=%s", what, ret[0] != '\0' ? ret : "(none)");
		return SR_EC2_ERROR;
	}
	return SR_EC2_OK;
}

/* DeleteFleets' refusals: the first one's fleet, code and message. */
struct refusal {
	char fleet[64], code[128], message[256];
	int seen;
};

static int
on_refusal(const char *path, const char *text, void *arg)
{
	struct refusal *r = arg;
	const char *item = "unsuccessfulFleetDeletionSet/item";
	size_t il = strlen(item);

	if (r->seen || strncmp(path, item, il) != 0)
		return 0;
	if (strcmp(path + il, "/fleetId") == 0)
		ec2_copy(r->fleet, sizeof r->fleet, text);
	else if (strcmp(path + il, "/error/code") == 0)
		ec2_copy(r->code, sizeof r->code, text);
	else if (strcmp(path + il, "/error/message") == 0)
		ec2_copy(r->message, sizeof r->message, text);
	else if (path[il] == '\0')
		r->seen = 1;
	return 0;
}

enum sr_ec2_status
sr_ec2_delete_fleets(struct sr_ec2 *c, const char *const *ids, size_t n, char *err)
{
	struct refusal r;
	struct ec2_form f;
	enum sr_ec2_status st;
	char what[128], *body;
	size_t i, k, len;

	for (i = 0; i < n; i += IDS_PER_CALL) {
		snprintf(what, sizeof what, "delete fleet%s %s%s", n - i > 1 ? "s" : "", ids[i],
		    n - i > 1 ? "..." : "");
		memset(&f, 0, sizeof f);
		ec2_form_add(&f, "Action", "DeleteFleets");
		for (k = i; k < n && k < i + IDS_PER_CALL; k++)
			ec2_form_addf(&f, ids[k], "FleetId.%zu", k - i + 1);
		/* the instances go with the fleet: nothing keeps billing */
		ec2_form_add(&f, "TerminateInstances", "true");
		if ((st = ec2_call(c, what, &f, &body, &len, err)) != SR_EC2_OK)
			return st;
		memset(&r, 0, sizeof r);
		if (ec2_xml_walk(body, len, on_refusal, &r, err) != 0) {
			free(body);
			sr_err_prefix(err, "%s", what);
			return SR_EC2_ERROR;
		}
		free(body);
		if (r.seen) {
			sr_err(err, "delete fleet %s: %s: %s", r.fleet, r.code, r.message);
			return sr_ec2_classify(r.code) == SR_EC2_CAPACITY ? SR_EC2_CAPACITY :
			    SR_EC2_ERROR;
		}
	}
	return SR_EC2_OK;
}

enum sr_ec2_status
sr_ec2_terminate(struct sr_ec2 *c, const char *const *ids, size_t n, char *err)
{
	struct ec2_form f;
	enum sr_ec2_status st;
	char *body;
	size_t i, k, len;

	for (i = 0; i < n; i += 100) {
		memset(&f, 0, sizeof f);
		ec2_form_add(&f, "Action", "TerminateInstances");
		for (k = i; k < n && k < i + 100; k++)
			ec2_form_addf(&f, ids[k], "InstanceId.%zu", k - i + 1);
		if ((st = ec2_call(c, "terminate instances", &f, &body, &len, err)) != SR_EC2_OK)
			return st;
		free(body);
	}
	return SR_EC2_OK;
}

enum sr_ec2_status
sr_ec2_describe_fleet(struct sr_ec2 *c, const char *id, struct sr_ec2_fleet *out, char *err)
{
	const char *params[] = { "FleetId.1", id, NULL };
	struct sr_ec2_fleet *fl;
	char what[128];
	size_t n, i;
	enum sr_ec2_status st;

	memset(out, 0, sizeof *out);
	snprintf(what, sizeof what, "describe fleet %s", id);
	if ((st = list_all(c, what, "DescribeFleets", params, &fleet_shape, (void **)&fl, &n,
	    err)) != SR_EC2_OK)
		return st;
	for (i = 0; i < n && strcmp(fl[i].id, id) != 0; i++)
		;
	if (i == n) {
		free(fl);
		sr_err(err, "%s: not found", what);
		return SR_EC2_ERROR;
	}
	*out = fl[i];
	out->error_class = sr_ec2_classify(out->error_code);
	free(fl);
	return SR_EC2_OK;
}

/* DescribeInstances of ids (n of them), described into *out. */
static enum sr_ec2_status
describe_instances(struct sr_ec2 *c, const char *what, char *const *ids, size_t n,
    struct sr_ec2_instance **out, size_t *nout, char *err)
{
	char names[100][24];
	const char *params[2 * 100 + 1];
	struct sr_ec2_instance *all = NULL, *got, *more;
	size_t i, k, ngot, nall = 0;
	enum sr_ec2_status st = SR_EC2_OK;

	for (i = 0; i < n; i += 100) {
		for (k = i; k < n && k < i + 100; k++) {
			snprintf(names[k - i], sizeof names[k - i], "InstanceId.%zu", k - i + 1);
			params[2 * (k - i)] = names[k - i];
			params[2 * (k - i) + 1] = ids[k];
		}
		params[2 * (k - i)] = NULL;
		if ((st = list_all(c, what, "DescribeInstances", params, &inst_shape,
		    (void **)&got, &ngot, err)) != SR_EC2_OK)
			break;
		if ((more = sr_try_reallocarray(all, nall + ngot + 1, sizeof *all, NULL)) == NULL) {
			free(got);
			sr_err_oom(err, what);
			st = SR_EC2_ERROR;
			break;
		}
		all = more;
		memcpy(all + nall, got, ngot * sizeof *got);
		nall += ngot;
		free(got);
	}
	if (st != SR_EC2_OK) {
		free(all);
		return st;
	}
	*out = all;
	*nout = nall;
	return SR_EC2_OK;
}

enum sr_ec2_status
sr_ec2_fleet_instances(struct sr_ec2 *c, const char *id, struct sr_ec2_instance **out,
    size_t *n, char *err)
{
	const char *params[] = { "FleetId", id, NULL };
	struct sr_ec2_instance *act;
	char what[128], **ids;
	size_t na, i;
	enum sr_ec2_status st;

	*out = NULL;
	*n = 0;
	snprintf(what, sizeof what, "describe the instances of fleet %s", id);
	if ((st = list_all(c, what, "DescribeFleetInstances", params, &fi_shape, (void **)&act,
	    &na, err)) != SR_EC2_OK)
		return st;
	if (na == 0) {
		free(act);
		return SR_EC2_OK;
	}
	if ((ids = sr_try_calloc(na, sizeof *ids, err)) == NULL) {
		free(act);
		sr_err_prefix(err, "%s", what);
		return SR_EC2_ERROR;
	}
	for (i = 0; i < na; i++)
		ids[i] = act[i].id;
	st = describe_instances(c, what, ids, na, out, n, err);
	free(ids);
	free(act);
	return st;
}

enum sr_ec2_status
sr_ec2_pool_instances(struct sr_ec2 *c, const char *pool, struct sr_ec2_instance **out,
    size_t *n, char *err)
{
	const char *params[] = { "Filter.1.Name", "tag:" TAG_POOL, "Filter.1.Value.1", pool,
		"Filter.2.Name", "instance-state-name", "Filter.2.Value.1", "pending",
		"Filter.2.Value.2", "running", "Filter.2.Value.3", "shutting-down",
		"Filter.2.Value.4", "stopping", "Filter.2.Value.5", "stopped", NULL };
	char what[256];
	size_t i, k;
	enum sr_ec2_status st;

	*out = NULL;
	*n = 0;
	snprintf(what, sizeof what, "list the instances of pool %s", pool);
	if ((st = list_all(c, what, "DescribeInstances", params, &inst_shape, (void **)out, n,
	    err)) != SR_EC2_OK)
		return st;
	/* the filters checked again: a server may ignore one */
	for (i = k = 0; i < *n; i++)
		if (strcmp((*out)[i].pool, pool) == 0 && strcmp((*out)[i].state, "terminated") != 0)
			(*out)[k++] = (*out)[i];
	*n = k;
	return SR_EC2_OK;
}

enum sr_ec2_status
sr_ec2_spot_price_history(struct sr_ec2 *c, const char *type, const char *zone,
    const char *start, const char *end, struct sr_ec2_spot_price **out, size_t *n, char *err)
{
	const char *params[] = { "InstanceType.1", type, "ProductDescription.1", "Linux/UNIX",
		"Filter.1.Name", "availability-zone", "Filter.1.Value.1", zone,
		"StartTime", start, "EndTime", end, NULL };
	char what[160];
	size_t i, k;
	enum sr_ec2_status st;

	*out = NULL;
	*n = 0;
	snprintf(what, sizeof what, "read the spot price history of %.32s in %.32s", type, zone);
	if ((st = list_all(c, what, "DescribeSpotPriceHistory", params, &price_shape,
	    (void **)out, n, err)) != SR_EC2_OK)
		return st;
	/* the filters checked again: a server may ignore one */
	for (i = k = 0; i < *n; i++)
		if (strcmp((*out)[i].type, type) == 0 && strcmp((*out)[i].zone, zone) == 0)
			(*out)[k++] = (*out)[i];
	*n = k;
	return SR_EC2_OK;
}

/* ---- a pool found by tag, and deleted ---- */

void
sr_ec2_found_free(struct sr_ec2_found *f)
{
	free(f->fleets);
	free(f->templates);
	free(f->instances);
	memset(f, 0, sizeof *f);
}

enum sr_ec2_status
sr_ec2_find_pool(struct sr_ec2 *c, const char *pool, struct sr_ec2_found *out, char *err)
{
	const char *tmpl_params[] = { "Filter.1.Name", "tag:" TAG_POOL, "Filter.1.Value.1", pool,
		NULL };
	const char *inst_params[] = { "Filter.1.Name", "tag:" TAG_POOL, "Filter.1.Value.1", pool,
		"Filter.2.Name", "instance-state-name", "Filter.2.Value.1", "pending",
		"Filter.2.Value.2", "running", "Filter.2.Value.3", "shutting-down",
		"Filter.2.Value.4", "stopping", "Filter.2.Value.5", "stopped", NULL };
	struct sr_ec2_found f;
	char what[256];
	size_t i, k;
	enum sr_ec2_status st;

	memset(out, 0, sizeof *out);
	memset(&f, 0, sizeof f);
	snprintf(what, sizeof what, "find pool %s", pool);
	/* EC2 has no tag filter for fleets: all of them, compared here */
	if ((st = list_all(c, what, "DescribeFleets", NULL, &fleet_shape, (void **)&f.fleets,
	    &f.nfleets, err)) != SR_EC2_OK ||
	    (st = list_all(c, what, "DescribeLaunchTemplates", tmpl_params, &tmpl_shape,
	    (void **)&f.templates, &f.ntemplates, err)) != SR_EC2_OK ||
	    (st = list_all(c, what, "DescribeInstances", inst_params, &inst_shape,
	    (void **)&f.instances, &f.ninstances, err)) != SR_EC2_OK) {
		sr_ec2_found_free(&f);
		return st;
	}
	/* and the filters checked again: a server may ignore one */
	for (i = k = 0; i < f.nfleets; i++)
		if (strcmp(f.fleets[i].pool, pool) == 0 &&
		    strncmp(f.fleets[i].state, "deleted", 7) != 0 &&
		    strcmp(f.fleets[i].state, "failed") != 0) {
			f.fleets[i].error_class = sr_ec2_classify(f.fleets[i].error_code);
			f.fleets[k++] = f.fleets[i];
		}
	f.nfleets = k;
	for (i = k = 0; i < f.ntemplates; i++)
		if (strcmp(f.templates[i].pool, pool) == 0)
			f.templates[k++] = f.templates[i];
	f.ntemplates = k;
	for (i = k = 0; i < f.ninstances; i++)
		if (strcmp(f.instances[i].pool, pool) == 0 &&
		    strcmp(f.instances[i].state, "terminated") != 0)
			f.instances[k++] = f.instances[i];
	f.ninstances = k;
	*out = f;
	return SR_EC2_OK;
}

/* Keep the first failure: its status, its message in err. */
static void
keep_first(enum sr_ec2_status st, const char *msg, enum sr_ec2_status *first, char *err)
{
	if (st == SR_EC2_OK || *first != SR_EC2_OK)
		return;
	*first = st;
	if (err != NULL)
		snprintf(err, SR_ERRMAX, "%s", msg);
}

enum sr_ec2_status
sr_ec2_delete_pool(struct sr_ec2 *c, const char *pool, size_t *gone, char *err)
{
	struct sr_ec2_found f;
	enum sr_ec2_status st, first = SR_EC2_OK;
	const char **ids;
	char e[SR_ERRMAX];
	size_t i, n;

	if (gone != NULL)
		*gone = 0;
	if ((st = sr_ec2_find_pool(c, pool, &f, err)) != SR_EC2_OK)
		return st;
	n = f.nfleets > f.ninstances ? f.nfleets : f.ninstances;
	if ((ids = sr_try_calloc(n + 1, sizeof *ids, err)) == NULL) {
		sr_ec2_found_free(&f);
		return SR_EC2_ERROR;
	}
	/* the fleets first, so none launches a replacement meanwhile */
	for (i = 0; i < f.nfleets; i++)
		ids[i] = f.fleets[i].id;
	if (f.nfleets > 0) {
		st = sr_ec2_delete_fleets(c, ids, f.nfleets, e);
		keep_first(st, e, &first, err);
		if (st == SR_EC2_OK && gone != NULL)
			*gone += f.nfleets;
	}
	/* then every instance found: the fleets' (terminating already;
	 * terminating again does no harm) and strays no fleet owns */
	for (i = 0; i < f.ninstances; i++)
		ids[i] = f.instances[i].id;
	if (f.ninstances > 0) {
		st = sr_ec2_terminate(c, ids, f.ninstances, e);
		keep_first(st, e, &first, err);
		if (st == SR_EC2_OK && gone != NULL)
			*gone += f.ninstances;
	}
	for (i = 0; i < f.ntemplates; i++) {
		st = sr_ec2_delete_template(c, f.templates[i].id, e);
		keep_first(st, e, &first, err);
		if (st == SR_EC2_OK && gone != NULL)
			(*gone)++;
	}
	free(ids);
	sr_ec2_found_free(&f);
	return first;
}
