/*
 * arm-ops.c: the operations of the Azure engine (arm.h) on the transport
 * of arm.c: resource groups, the virtual network, the Flexible scale set
 * of Spot VMs and its VMs, a pool found by its tags and deleted.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "arm-int.h"
#include "arm.h"
#include "util.h"

#define V_RG		"api-version=2021-04-01"
#define V_NET		"api-version=2023-09-01"
#define V_COMPUTE	"api-version=2024-03-01"
#define P_VMSS		"/providers/Microsoft.Compute/virtualMachineScaleSets"
#define P_VNET		"/providers/Microsoft.Network/virtualNetworks"
#define ADMIN		"spotrun"
/* how long Try & Restore tries (ISO 8601; Azure's default, 1 hour) */
#define SPOT_RESTORE_TIMEOUT	"PT1H"

static json_t *
tags(const char *pool, const char *queue)
{
	return json_pack("{s:s, s:s}", SR_ARM_TAG_POOL, pool, SR_ARM_TAG_QUEUE, queue);
}

static int
names_ok(const char *a, const char *b, const char *what, char *err)
{
	if (!arm_name_ok(a) || (b != NULL && !arm_name_ok(b)))
		return sr_err(err, "%s: \"%.90s\"%s%.90s: not a resource name (1 to 89 of "
		    "[A-Za-z0-9._-])", what, a, b != NULL ? ", " : "", b != NULL ? b : "");
	return 0;
}

/* Whether the error just answered says the resource is not there. */
static int
gone(struct sr_arm *c)
{
	return c->last_status == 404 || strcmp(c->last_code, "ResourceNotFound") == 0 ||
	    strcmp(c->last_code, "ResourceGroupNotFound") == 0 ||
	    strcmp(c->last_code, "NotFound") == 0;
}

/* ---- resource groups ---- */

enum sr_arm_status
sr_arm_ensure_group(struct sr_arm *c, const char *name, const char *region, const char *pool,
    const char *queue, int *created, char *err)
{
	char what[160], path[256], e[SR_ERRMAX];
	json_t *body;
	enum sr_arm_status st;

	*created = 0;
	snprintf(what, sizeof what, "create resource group %s", name);
	if (names_ok(name, region, what, err) == -1)
		return SR_ARM_ERROR;
	snprintf(path, sizeof path, "/resourcegroups/%s?" V_RG, name);
	if ((st = arm_call(c, what, "GET", path, NULL, NULL, 0, e)) == SR_ARM_OK)
		return SR_ARM_OK;
	if (!gone(c)) {
		snprintf(err, SR_ERRMAX, "%s", e);
		return st;
	}
	if ((body = json_pack("{s:s, s:o}", "location", region, "tags", tags(pool, queue))) ==
	    NULL)
		return sr_err_oom(err, what);
	st = arm_call(c, what, "PUT", path, body, NULL, 1, err);
	json_decref(body);
	if (st == SR_ARM_OK)
		*created = 1;
	return st;
}

enum sr_arm_status
sr_arm_delete_group(struct sr_arm *c, const char *name, char *err)
{
	char what[160], path[256];
	enum sr_arm_status st;

	snprintf(what, sizeof what, "delete resource group %s", name);
	if (names_ok(name, NULL, what, err) == -1)
		return SR_ARM_ERROR;
	snprintf(path, sizeof path, "/resourcegroups/%s?" V_RG, name);
	st = arm_call(c, what, "DELETE", path, NULL, NULL, 1, err);
	return st != SR_ARM_OK && gone(c) ? SR_ARM_OK : st;
}

/* ---- the network ---- */

enum sr_arm_status
sr_arm_ensure_vnet(struct sr_arm *c, const char *group, const char *name, const char *region,
    const char *pool, const char *queue, char *subnet_id, size_t cap, char *err)
{
	char what[160], path[400];
	json_t *body;
	enum sr_arm_status st;

	snprintf(what, sizeof what, "create virtual network %s", name);
	if (names_ok(group, name, what, err) == -1)
		return SR_ARM_ERROR;
	snprintf(path, sizeof path, "/resourceGroups/%s" P_VNET "/%s?" V_NET, group, name);
	body = json_pack("{s:s, s:o, s:{s:{s:[s]}, s:[{s:s, s:{s:s}}]}}", "location", region,
	    "tags", tags(pool, queue), "properties", "addressSpace", "addressPrefixes",
	    "10.64.0.0/16", "subnets", "name", "default", "properties", "addressPrefix",
	    "10.64.0.0/18");
	if (body == NULL)
		return sr_err_oom(err, what);
	st = arm_call(c, what, "PUT", path, body, NULL, 1, err);
	json_decref(body);
	if (st == SR_ARM_OK)
		snprintf(subnet_id, cap, "/subscriptions/%s/resourceGroups/%s" P_VNET
		    "/%s/subnets/default", c->subscription, group, name);
	return st;
}

enum sr_arm_status
sr_arm_delete_vnet(struct sr_arm *c, const char *group, const char *name, char *err)
{
	char what[160], path[400];
	enum sr_arm_status st;

	snprintf(what, sizeof what, "delete virtual network %s", name);
	if (names_ok(group, name, what, err) == -1)
		return SR_ARM_ERROR;
	snprintf(path, sizeof path, "/resourceGroups/%s" P_VNET "/%s?" V_NET, group, name);
	st = arm_call(c, what, "DELETE", path, NULL, NULL, 1, err);
	return st != SR_ARM_OK && gone(c) ? SR_ARM_OK : st;
}

/* ---- the scale set ---- */

/* base64 of n bytes at p, malloc'd, or NULL with err. */
static char *
b64(const void *p, size_t n, char *err)
{
	char *s = sr_try_malloc(4 * ((n + 2) / 3) + 1, err);

	if (s != NULL)
		EVP_EncodeBlock((unsigned char *)s, p, (int)n);
	return s;
}

/* A throwaway OpenSSH public key ("ssh-rsa AAAA... spotrun"): ARM wants
 * a login for a Linux VM, and no one logs in to an agent; the private half
 * is never kept. malloc'd, or NULL with err. */
static char *
throwaway_key(char *err)
{
	EVP_PKEY *k = NULL;
	BIGNUM *bn[2] = { NULL, NULL };
	unsigned char blob[1024];
	const char *names[2] = { OSSL_PKEY_PARAM_RSA_E, OSSL_PKEY_PARAM_RSA_N };
	char *b = NULL, *line = NULL;
	size_t len = 0;
	int i;

	if ((k = EVP_RSA_gen(2048)) == NULL)
		goto out;
	memcpy(blob, "\0\0\0\7ssh-rsa", 11);
	len = 11;
	for (i = 0; i < 2; i++) {
		if (EVP_PKEY_get_bn_param(k, names[i], &bn[i]) != 1 ||
		    BN_bn2mpi(bn[i], NULL) > (int)(sizeof blob - len))
			goto out;
		/* BN_bn2mpi writes SSH's mpint: a 4-byte length, then big-endian
		 * with a zero byte before a high bit */
		len += (size_t)BN_bn2mpi(bn[i], blob + len);
	}
	if ((b = b64(blob, len, err)) != NULL)
		line = sr_try_asprintf(err, "ssh-rsa %s " ADMIN, b);
out:
	if (line == NULL && b == NULL)
		sr_err(err, "make an SSH key: OpenSSL could not");
	free(b);
	BN_free(bn[0]);
	BN_free(bn[1]);
	EVP_PKEY_free(k);
	return line;
}

/* The imageReference of s ("P:O:S:V" or a resource id), or NULL. */
static json_t *
image_ref(const char *im)
{
	char part[4][128];
	const char *p = im;
	size_t i, n;

	if (im[0] == '/')
		return json_pack("{s:s}", "id", im);
	for (i = 0; i < 4; i++) {
		n = strcspn(p, ":");
		if (n == 0 || n >= sizeof part[i] || (i < 3 && p[n] != ':') || (i == 3 && p[n] != '\0'))
			return NULL;
		snprintf(part[i], sizeof part[i], "%.*s", (int)n, p);
		p += n + (i < 3);
	}
	return json_pack("{s:s, s:s, s:s, s:s}", "publisher", part[0], "offer", part[1], "sku",
	    part[2], "version", part[3]);
}

enum sr_arm_status
sr_arm_create_vmss(struct sr_arm *c, const struct sr_arm_vmss_spec *s, int *made,
    char *err)
{
	char what[160], path[400], *ud = NULL, *key = NULL;
	json_t *body = NULL, *vmp, *img, *zones, *disk;
	size_t i;
	enum sr_arm_status st = SR_ARM_ERROR;

	*made = 0;
	snprintf(what, sizeof what, "create scale set %s", s->name);
	if (names_ok(s->group, s->name, what, err) == -1 || names_ok(s->region, s->vm_size, what,
	    err) == -1)
		return SR_ARM_ERROR;
	if ((img = image_ref(s->image)) == NULL)
		return sr_err(err, "%s: image \"%.200s\": want PUBLISHER:OFFER:SKU:VERSION or an "
		    "image's resource id", what, s->image);
	if ((key = s->ssh_key != NULL ? sr_try_strdup(s->ssh_key, err) : throwaway_key(err)) ==
	    NULL || (ud = b64(s->user_data != NULL ? s->user_data : "", s->user_data_len,
	    err)) == NULL) {
		json_decref(img);
		sr_err_prefix(err, "%s", what);
		goto out;
	}
	disk = json_pack("{s:s, s:s, s:{s:s}}", "createOption", "FromImage", "deleteOption",
	    "Delete", "managedDisk", "storageAccountType", "StandardSSD_LRS");
	if (disk != NULL && s->disk_gb > 0)
		json_object_set_new(disk, "diskSizeGB", json_integer(s->disk_gb));
	vmp = json_pack("{s:s, s:s, s:{s:f}, s:{s:o, s:o},"
	    " s:{s:s, s:s, s:s, s:{s:b, s:{s:[{s:s, s:s}]}}},"
	    " s:{s:s, s:[{s:s, s:{s:b, s:s, s:[{s:s, s:{s:b, s:{s:s},"
	    " s:{s:s, s:{s:s, s:s}, s:{s:s}}}}]}}]}}",
	    "priority", "Spot", "evictionPolicy", "Delete",
	    "billingProfile", "maxPrice", s->max_price > 0 ? s->max_price : -1.0,
	    "storageProfile", "imageReference", img, "osDisk", disk,
	    "osProfile", "computerNamePrefix", "spotrun", "adminUsername", ADMIN, "customData", ud,
	    "linuxConfiguration", "disablePasswordAuthentication", 1, "ssh", "publicKeys",
	    "path", "/home/" ADMIN "/.ssh/authorized_keys", "keyData", key,
	    "networkProfile", "networkApiVersion", "2020-11-01", "networkInterfaceConfigurations",
	    "name", "nic", "properties", "primary", 1, "deleteOption", "Delete",
	    "ipConfigurations", "name", "ip", "properties", "primary", 1, "subnet", "id",
	    s->subnet_id != NULL ? s->subnet_id : "",
	    "publicIPAddressConfiguration", "name", "pip", "sku", "name", "Standard", "tier",
	    "Regional", "properties", "deleteOption", "Delete");
	if (vmp == NULL) {
		sr_err_oom(err, what);
		goto out;
	}
	zones = json_array();
	for (i = 0; s->zones != NULL && s->zones[i] != NULL; i++)
		json_array_append_new(zones, json_string(s->zones[i]));
	/* spotRestorePolicy: Azure's Try & Restore brings evicted Spot VMs
	 * back to the set's count while capacity allows (for up to
	 * restoreTimeout); past it the set is smaller, and the pool's
	 * scaler asks again (pool-scale.c) */
	body = json_pack("{s:s, s:o, s:{s:s, s:s, s:I}, s:{s:s, s:i, s:b, s:o, s:{s:b, s:s}}}",
	    "location", s->region, "tags", tags(s->pool, s->queue),
	    "sku", "name", s->vm_size, "tier", "Standard", "capacity", (json_int_t)s->capacity,
	    "properties", "orchestrationMode", "Flexible", "platformFaultDomainCount", 1,
	    "singlePlacementGroup", 0, "virtualMachineProfile", vmp,
	    "spotRestorePolicy", "enabled", 1, "restoreTimeout", SPOT_RESTORE_TIMEOUT);
	if (body == NULL || (json_array_size(zones) > 0 &&
	    json_object_set(body, "zones", zones) == -1)) {
		json_decref(zones);
		sr_err_oom(err, what);
		goto out;
	}
	json_decref(zones);
	if (s->identity != NULL && json_object_set_new(body, "identity", json_pack("{s:s, s:{s:{}}}",
	    "type", "UserAssigned", "userAssignedIdentities", s->identity)) == -1) {
		sr_err_oom(err, what);
		goto out;
	}
	snprintf(path, sizeof path, "/resourceGroups/%s" P_VMSS "/%s?" V_COMPUTE, s->group,
	    s->name);
	st = arm_call(c, what, "PUT", path, body, NULL, 1, err);
	*made = c->accepted;
out:
	json_decref(body);
	if (ud != NULL) {
		explicit_bzero(ud, strlen(ud));
		free(ud);
	}
	free(key);
	return st;
}

enum sr_arm_status
sr_arm_set_capacity(struct sr_arm *c, const char *group, const char *name, unsigned capacity,
    char *err)
{
	char what[160], path[400];
	json_t *body;
	enum sr_arm_status st;

	snprintf(what, sizeof what, "set capacity of scale set %s", name);
	if (names_ok(group, name, what, err) == -1)
		return SR_ARM_ERROR;
	snprintf(path, sizeof path, "/resourceGroups/%s" P_VMSS "/%s?" V_COMPUTE, group, name);
	if ((body = json_pack("{s:{s:I}}", "sku", "capacity", (json_int_t)capacity)) == NULL)
		return sr_err_oom(err, what);
	st = arm_call(c, what, "PATCH", path, body, NULL, 1, err);
	json_decref(body);
	return st;
}

enum sr_arm_status
sr_arm_delete_vmss(struct sr_arm *c, const char *group, const char *name, char *err)
{
	char what[160], path[400];
	enum sr_arm_status st;

	snprintf(what, sizeof what, "delete scale set %s", name);
	if (names_ok(group, name, what, err) == -1)
		return SR_ARM_ERROR;
	snprintf(path, sizeof path, "/resourceGroups/%s" P_VMSS "/%s?forceDeletion=true&"
	    V_COMPUTE, group, name);
	st = arm_call(c, what, "DELETE", path, NULL, NULL, 1, err);
	return st != SR_ARM_OK && gone(c) ? SR_ARM_OK : st;
}

/* The resource group in a resource id ("/subscriptions/S/resourceGroups/G/..."). */
static void
group_of(const char *id, char *dst, size_t cap)
{
	const char *p = strstr(id, "/resourceGroups/");

	if (p == NULL)
		p = strstr(id, "/resourcegroups/");
	dst[0] = '\0';
	if (p != NULL)
		snprintf(dst, cap, "%.*s", (int)strcspn(p + 16, "/"), p + 16);
}

static void
read_vmss(json_t *o, struct sr_arm_vmss *v)
{
	json_t *sku = json_object_get(o, "sku"), *cap;
	char id[1024];

	memset(v, 0, sizeof *v);
	arm_str(o, "name", v->name, sizeof v->name);
	arm_str(o, "id", id, sizeof id);
	group_of(id, v->group, sizeof v->group);
	arm_str(o, "location", v->region, sizeof v->region);
	arm_str(sku, "name", v->vm_size, sizeof v->vm_size);
	cap = json_is_object(sku) ? json_object_get(sku, "capacity") : NULL;
	v->capacity = json_is_integer(cap) && json_integer_value(cap) > 0 ?
	    (unsigned)json_integer_value(cap) : 0;
	arm_str(json_object_get(o, "properties"), "provisioningState", v->state, sizeof v->state);
	arm_str(json_object_get(o, "tags"), SR_ARM_TAG_POOL, v->pool, sizeof v->pool);
}

enum sr_arm_status
sr_arm_get_vmss(struct sr_arm *c, const char *group, const char *name, struct sr_arm_vmss *v,
    char *err)
{
	char what[160], path[400];
	json_t *o;
	enum sr_arm_status st;

	memset(v, 0, sizeof *v);
	snprintf(what, sizeof what, "get scale set %s", name);
	if (names_ok(group, name, what, err) == -1)
		return SR_ARM_ERROR;
	snprintf(path, sizeof path, "/resourceGroups/%s" P_VMSS "/%s?" V_COMPUTE, group, name);
	if ((st = arm_call(c, what, "GET", path, NULL, &o, 0, err)) == SR_ARM_OK) {
		read_vmss(o, v);
		json_decref(o);
	}
	return st;
}

/* Every item of a list at path, page after page (nextLink), to fn. */
static enum sr_arm_status
list_all(struct sr_arm *c, const char *what, const char *path,
    int (*fn)(json_t *item, void *arg, char *err), void *arg, char *err)
{
	char *next = NULL, link[2048];
	json_t *page, *x;
	size_t i, pages = 0;
	enum sr_arm_status st;

	for (;;) {
		st = arm_call(c, what, "GET", next != NULL ? next : path, NULL, &page, 0, err);
		free(next);
		next = NULL;
		if (st != SR_ARM_OK)
			return st;
		json_array_foreach(json_object_get(page, "value"), i, x) {
			if (json_is_object(x) && fn(x, arg, err) == -1) {
				json_decref(page);
				return SR_ARM_ERROR;
			}
		}
		arm_str(page, "nextLink", link, sizeof link);
		json_decref(page);
		if (link[0] == '\0')
			return SR_ARM_OK;
		if (++pages > 10000)
			return sr_err(err, "%s: more than 10000 pages", what);
		if ((next = sr_try_strdup(link, err)) == NULL)
			return SR_ARM_ERROR;
	}
}

struct vms {
	struct sr_arm_vm *v;
	size_t n;
};

static int
on_vm(json_t *o, void *arg, char *err)
{
	struct vms *l = arg;
	struct sr_arm_vm *m;
	json_t *props = json_object_get(o, "properties"), *zones = json_object_get(o, "zones");
	char prio[16];

	(void)err;
	l->v = sr_reallocarray(l->v, l->n + 1, sizeof *l->v);
	m = &l->v[l->n++];
	arm_str(o, "name", m->name, sizeof m->name);
	arm_str(props, "provisioningState", m->state, sizeof m->state);
	arm_str(props, "vmId", m->vm_id, sizeof m->vm_id);
	arm_str(o, "location", m->region, sizeof m->region);
	m->zone[0] = '\0';
	if (json_is_array(zones) && json_is_string(json_array_get(zones, 0)))
		snprintf(m->zone, sizeof m->zone, "%s", json_string_value(json_array_get(zones, 0)));
	arm_str(json_object_get(props, "hardwareProfile"), "vmSize", m->vm_size,
	    sizeof m->vm_size);
	arm_str(props, "timeCreated", m->created, sizeof m->created);
	arm_str(props, "priority", prio, sizeof prio);
	m->spot = strcmp(prio, "Spot") == 0;
	return 0;
}

enum sr_arm_status
sr_arm_vmss_vms(struct sr_arm *c, const char *group, const char *name, struct sr_arm_vm **out,
    size_t *n, char *err)
{
	char what[160], id[600], filter[400], esc[1300], *path;
	struct vms l = { NULL, 0 };
	enum sr_arm_status st;

	*out = NULL;
	*n = 0;
	snprintf(what, sizeof what, "list VMs of scale set %s", name);
	if (names_ok(group, name, what, err) == -1)
		return SR_ARM_ERROR;
	snprintf(id, sizeof id, "/subscriptions/%s/resourceGroups/%s" P_VMSS "/%s",
	    c->subscription, group, name);
	snprintf(filter, sizeof filter, "'virtualMachineScaleSet/id' eq '%s'", id);
	arm_escape(esc, sizeof esc, filter);
	if ((path = sr_try_asprintf(err, "/resourceGroups/%s/providers/Microsoft.Compute/"
	    "virtualMachines?" V_COMPUTE "&$filter=%s", group, esc)) == NULL)
		return SR_ARM_ERROR;
	st = list_all(c, what, path, on_vm, &l, err);
	free(path);
	if (st != SR_ARM_OK) {
		free(l.v);
		return st;
	}
	*out = l.v;
	*n = l.n;
	return SR_ARM_OK;
}

/* ---- a pool ---- */

struct find {
	const char *pool;
	struct sr_arm_found *f;
};

static int
tagged(json_t *o, const char *pool)
{
	char v[128];

	arm_str(json_object_get(o, "tags"), SR_ARM_TAG_POOL, v, sizeof v);
	return strcmp(v, pool) == 0;
}

static int
on_group(json_t *o, void *arg, char *err)
{
	struct find *fd = arg;

	(void)err;
	if (!tagged(o, fd->pool))	/* the filter, checked again */
		return 0;
	fd->f->groups = sr_reallocarray(fd->f->groups, fd->f->ngroups + 1, sizeof *fd->f->groups);
	arm_str(o, "name", fd->f->groups[fd->f->ngroups++], sizeof fd->f->groups[0]);
	return 0;
}

static int
on_set(json_t *o, void *arg, char *err)
{
	struct find *fd = arg;

	(void)err;
	if (!tagged(o, fd->pool))
		return 0;
	fd->f->sets = sr_reallocarray(fd->f->sets, fd->f->nsets + 1, sizeof *fd->f->sets);
	read_vmss(o, &fd->f->sets[fd->f->nsets++]);
	return 0;
}

static int
on_vnet(json_t *o, void *arg, char *err)
{
	struct find *fd = arg;
	char id[1024];
	size_t k;

	(void)err;
	if (!tagged(o, fd->pool))
		return 0;
	fd->f->vnets = sr_reallocarray(fd->f->vnets, fd->f->nvnets + 1, sizeof *fd->f->vnets);
	k = fd->f->nvnets++;
	arm_str(o, "id", id, sizeof id);
	group_of(id, fd->f->vnets[k][0], sizeof fd->f->vnets[k][0]);
	arm_str(o, "name", fd->f->vnets[k][1], sizeof fd->f->vnets[k][1]);
	return 0;
}

void
sr_arm_found_free(struct sr_arm_found *f)
{
	free(f->sets);
	free(f->vnets);
	free(f->groups);
	memset(f, 0, sizeof *f);
}

enum sr_arm_status
sr_arm_find_pool(struct sr_arm *c, const char *pool, struct sr_arm_found *f, char *err)
{
	struct find fd = { pool, f };
	char what[160], filter[256], esc[800], *path;
	enum sr_arm_status st;

	memset(f, 0, sizeof *f);
	snprintf(what, sizeof what, "find pool %s", pool);
	if (names_ok(pool, NULL, what, err) == -1)
		return SR_ARM_ERROR;
	snprintf(filter, sizeof filter, "tagName eq '" SR_ARM_TAG_POOL "' and tagValue eq '%s'",
	    pool);
	arm_escape(esc, sizeof esc, filter);
	if ((path = sr_try_asprintf(err, "/resourcegroups?" V_RG "&$filter=%s", esc)) == NULL)
		return SR_ARM_ERROR;
	st = list_all(c, what, path, on_group, &fd, err);
	free(path);
	if (st == SR_ARM_OK)
		st = list_all(c, what, P_VMSS "?" V_COMPUTE, on_set, &fd, err);
	if (st == SR_ARM_OK)
		st = list_all(c, what, P_VNET "?" V_NET, on_vnet, &fd, err);
	if (st != SR_ARM_OK)
		sr_arm_found_free(f);
	return st;
}

enum sr_arm_status
sr_arm_delete_pool(struct sr_arm *c, const char *pool, size_t *gone_n, char *err)
{
	struct sr_arm_found f;
	char e[SR_ERRMAX];
	size_t i, n = 0;
	enum sr_arm_status st, first = SR_ARM_OK;

	if (gone_n != NULL)
		*gone_n = 0;
	if ((st = sr_arm_find_pool(c, pool, &f, err)) != SR_ARM_OK)
		return st;
	/* the sets first: a network in use by a VM cannot go */
	for (i = 0; i < f.nsets; i++) {
		if ((st = sr_arm_delete_vmss(c, f.sets[i].group, f.sets[i].name, e)) == SR_ARM_OK)
			n++;
		else if (first == SR_ARM_OK) {
			first = st;
			snprintf(err, SR_ERRMAX, "%s", e);
		}
	}
	for (i = 0; i < f.nvnets; i++) {
		if ((st = sr_arm_delete_vnet(c, f.vnets[i][0], f.vnets[i][1], e)) == SR_ARM_OK)
			n++;
		else if (first == SR_ARM_OK) {
			first = st;
			snprintf(err, SR_ERRMAX, "%s", e);
		}
	}
	for (i = 0; i < f.ngroups && first == SR_ARM_OK; i++) {
		if ((st = sr_arm_delete_group(c, f.groups[i], e)) == SR_ARM_OK)
			n++;
		else {
			first = st;
			snprintf(err, SR_ERRMAX, "%s", e);
		}
	}
	sr_arm_found_free(&f);
	if (gone_n != NULL)
		*gone_n = n;
	return first;
}
