/*
 * pool-keys.c: the keys of a pool file (spotrun-pool(5)), what the file
 * knows of each cloud (how it names regions, zones and roles, its default
 * GPU image), and the parsing of each value into struct sr_pool. The
 * checks across keys are pool.c's.
 */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec-msg.h"
#include "pool-int.h"
#include "similar.h"
#include "units.h"

#define F(field) offsetof(struct sr_pool, field)

const char *const sr_pool_section_names[PSEC_N] = { "pool", "vm" };

const struct pool_key sr_pool_keys[SR_POOL_NKEYS] = {
	{ PSEC_POOL, "name", PT_NAME, F(name), 0, 0, 0,
	    "lowercase letters, digits and '-', starting with a letter, at most 40 "
	    "characters (e.g. sweep-a10g)" },
	{ PSEC_POOL, "cloud", PT_CLOUD, F(cloud), 0, 0, 0, NULL },
	{ PSEC_POOL, "regions", PT_REGIONS, F(regions), 0, 0, 0, NULL },
	{ PSEC_POOL, "zones", PT_ZONES, F(zones), 0, 0, 0, NULL },
	{ PSEC_POOL, "max_vms", PT_INT, F(max_vms), 1, SR_POOL_VMS_MAX, 0,
	    "a whole number of VMs from 1 to 1000 (e.g. max_vms = 4)" },
	{ PSEC_POOL, "max_price", PT_DOLLARS, F(max_price), 0, 0, 0,
	    "dollars a VM-hour above 0 (e.g. max_price = 1.50), or remove it to pay up to "
	    "the on-demand price" },
	{ PSEC_POOL, "cost_cap", PT_DOLLARS, F(cost_cap), 0, 0, 0,
	    "dollars for the whole pool above 0 (e.g. cost_cap = 500), or remove it" },
	{ PSEC_POOL, "idle_timeout", PT_DURATION, F(idle_timeout), 60, 7 * 86400, 1,
	    "a duration from 1m to 7d, or 0 for never (e.g. idle_timeout = 30m)" },
	{ PSEC_POOL, "on_demand_after", PT_DURATION, F(on_demand_after), 60, 7 * 86400, 0,
	    "a duration from 1m to 7d (e.g. on_demand_after = 1h), or remove it to stay "
	    "on spot" },
	{ PSEC_VM, "instance_types", PT_TYPES, F(instance_types), 0, 0, 0,
	    "instance types in order of preference (e.g. g5.xlarge, g6.xlarge)" },
	{ PSEC_VM, "gpus", PT_GPUS, F(gpus), 0, 0, 0,
	    "write COUNTxMODEL, e.g. 8xH100 or 1xA10G, or a list of them (1xA10G, 1xL4)" },
	{ PSEC_VM, "image", PT_IMAGE, F(image), 0, 0, 0,
	    "an image ID, or remove it for the cloud's GPU image" },
	{ PSEC_VM, "disk_size", PT_INT, F(disk_gib), SR_POOL_DISK_MIN, SR_POOL_DISK_MAX, 0,
	    "GiB of each VM's disk, from 10 to 65536 (e.g. disk_size = 200)" },
	{ PSEC_VM, "role", PT_ROLE, F(role), 0, 0, 0, NULL },
};

/* The images are each cloud's documented GPU image with the NVIDIA
 * driver; see spotrun-pool(5), IMAGES, for how each is found. */
const struct pool_cloud sr_pool_clouds[SR_POOL_NCLOUDS] = {
	[SR_POOL_AWS] = { "aws", ZONE_LETTER, "us-east-1", "us-east-1a",
	    "ssm:/aws/service/deeplearning/ami/x86_64/"
	    "base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id",
	    "instance profile", "spotrun-agent, or arn:aws:iam::ACCOUNT:instance-profile/NAME" },
	[SR_POOL_GCP] = { "gcp", ZONE_DASH_LETTER, "us-central1", "us-central1-a",
	    "projects/deeplearning-platform-release/global/images/family/common-cu121-debian-11",
	    "service account", "spotrun-agent@PROJECT.iam.gserviceaccount.com" },
	[SR_POOL_AZURE] = { "azure", ZONE_NUMBER, "eastus", "1",
	    "microsoft-dsvm:ubuntu-hpc:2204:latest",
	    "user-assigned managed identity", "/subscriptions/SUB/resourceGroups/RG/providers/"
	    "Microsoft.ManagedIdentity/userAssignedIdentities/NAME" },
};

const char *
sr_pool_cloud_name(enum sr_pool_cloud c)
{
	return sr_pool_clouds[c].name;
}

const char *
sr_pool_default_image(enum sr_pool_cloud c)
{
	return sr_pool_clouds[c].image;
}

const char *
sr_pool_role_kind(enum sr_pool_cloud c)
{
	return sr_pool_clouds[c].role_kind;
}

void
sr_pool_error(struct sr_pool_parse *p, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sr_js_verror(p->errs, &p->dropped, line, fmt, ap);
	va_end(ap);
}

const char *
sr_pool_article(const char *word)
{
	return strchr("aeiou", *word) != NULL && *word != '\0' ? "an" : "a";
}

int
sr_pool_zone_in(enum zone_style s, const char *z, const char *r)
{
	size_t n = strlen(r);

	switch (s) {
	case ZONE_LETTER:
		return strncmp(z, r, n) == 0 && islower((unsigned char)z[n]) && z[n + 1] == '\0';
	case ZONE_DASH_LETTER:
		return strncmp(z, r, n) == 0 && z[n] == '-' && islower((unsigned char)z[n + 1]) &&
		    z[n + 2] == '\0';
	case ZONE_NUMBER:
		return z[0] >= '1' && z[0] <= '3' && z[1] == '\0';
	}
	return 0;
}

/* Whether s is a region as cloud c writes them: lowercase letters and
 * digits, in words joined by '-' ending in a digit (us-east-1,
 * us-central1), or one word (eastus) on a cloud of numbered zones. */
int
sr_pool_region_ok(enum zone_style s, const char *r)
{
	const char *c;

	if (!islower((unsigned char)*r))
		return 0;
	for (c = r; *c != '\0'; c++) {
		if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c) &&
		    (*c != '-' || s == ZONE_NUMBER || c[1] == '-' || c[1] == '\0'))
			return 0;
	}
	return s == ZONE_NUMBER || (strchr(r, '-') != NULL && isdigit((unsigned char)c[-1]));
}

/* Split a comma-separated list into trimmed items (malloc'd); an empty
 * item, an item of a character outside [A-Za-z0-9._-], one listed twice,
 * or more than SR_POOL_LIST_MAX items is an error at line. 0 or -1. */
static int
split_list(struct sr_pool_parse *p, const struct pool_key *k, const char *v, int line,
    char ***out, size_t *n)
{
	char b[SR_JS_SHOW_MAX + 4], b2[SR_JS_SHOW_MAX + 4], **items = NULL, *it;
	const char *s = v, *e, *a, *z;
	size_t i, ni = 0;

	for (;;) {
		e = strchr(s, ',');
		if (e == NULL)
			e = s + strlen(s);
		for (a = s; a < e && isspace((unsigned char)*a); a++)
			;
		for (z = e; z > a && isspace((unsigned char)z[-1]); z--)
			;
		if (a == z) {
			sr_pool_error(p, line, "%s = %s: an empty item; separate the items with "
			    "one comma (e.g. a, b)", k->name, sr_js_show(v, b));
			goto bad;
		}
		if (ni == SR_POOL_LIST_MAX) {
			sr_pool_error(p, line, "%s = %s: more than %d items", k->name,
			    sr_js_show(v, b), SR_POOL_LIST_MAX);
			goto bad;
		}
		it = sr_asprintf("%.*s", (int)(z - a), a);
		if (strspn(it, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
		    strlen(it)) {
			sr_pool_error(p, line, "%s: '%s' holds a character that is not a letter, "
			    "a digit, '.', '_' or '-'", k->name, sr_js_show(it, b));
			free(it);
			goto bad;
		}
		for (i = 0; i < ni; i++) {
			if (strcmp(items[i], it) == 0) {
				sr_pool_error(p, line, "%s = %s: %s is listed twice; keep one",
				    k->name, sr_js_show(v, b), sr_js_show(it, b2));
				free(it);
				goto bad;
			}
		}
		items = sr_reallocarray(items, ni + 1, sizeof *items);
		items[ni++] = it;
		if (*e == '\0')
			break;
		s = e + 1;
	}
	*out = items;
	*n = ni;
	return 0;
bad:
	for (i = 0; i < ni; i++)
		free(items[i]);
	free(items);
	return -1;
}

static void
set_cloud(struct sr_pool_parse *p, const char *v, int line)
{
	const char *names[SR_POOL_NCLOUDS];
	char b[SR_JS_SHOW_MAX + 4], list[64] = "";
	int i, k;

	for (i = 0; i < SR_POOL_NCLOUDS; i++) {
		names[i] = sr_pool_clouds[i].name;
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
		    i == 0 ? "" : i == SR_POOL_NCLOUDS - 1 ? " or " : ", ", names[i]);
		if (strcmp(v, names[i]) == 0) {
			p->pool->cloud = (enum sr_pool_cloud)i;
			p->cloud_set = 1;
			return;
		}
	}
	k = sr_similar_closest(v, names, SR_POOL_NCLOUDS);
	if (k >= 0)
		sr_pool_error(p, line, "cloud = %s: not a cloud a pool can be on; did you mean "
		    "%s? (%s)", sr_js_show(v, b), names[k], list);
	else
		sr_pool_error(p, line, "cloud = %s: not a cloud a pool can be on; give %s",
		    sr_js_show(v, b), list);
}

/* "8xH100, 1xA10G" into p->pool->gpus. */
static void
set_gpus(struct sr_pool_parse *p, const struct pool_key *k, const char *v, int line)
{
	char b[SR_JS_SHOW_MAX + 4], **items, *x, *end;
	size_t i, n;
	long count;

	if (split_list(p, k, v, line, &items, &n) == -1)
		return;
	p->pool->gpus = sr_calloc(n, sizeof *p->pool->gpus);
	for (i = 0; i < n; i++) {
		x = strchr(items[i], 'x');
		count = isdigit((unsigned char)items[i][0]) ? strtol(items[i], &end, 10) : 0;
		if (count == 0 || x == NULL || end != x || x[1] == '\0' ||
		    strspn(x + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") !=
		    strlen(x + 1)) {
			sr_pool_error(p, line, "gpus: '%s' is not a GPU shape; %s",
			    sr_js_show(items[i], b), k->hint);
			break;
		}
		if (count > SR_POOL_GPUS_MAX) {
			sr_pool_error(p, line, "gpus: '%s' has %ld GPUs; a shape has 1 to %d",
			    sr_js_show(items[i], b), count, SR_POOL_GPUS_MAX);
			break;
		}
		p->pool->gpus[i].count = (int)count;
		p->pool->gpus[i].model = sr_strdup(x + 1);
	}
	p->pool->ngpus = i;
	for (i = 0; i < n; i++)
		free(items[i]);
	free(items);
}

/* Dollars: digits with an optional fraction, an optional leading '$'. */
static int
parse_dollars(const char *v, double *out)
{
	char *end;
	double d;

	if (*v == '$')
		v++;
	if (!isdigit((unsigned char)*v))
		return -1;
	d = strtod(v, &end);
	if (*end != '\0' || !isfinite(d) || d > 1e9)
		return -1;
	*out = d;
	return 0;
}

void
sr_pool_check_role(struct sr_pool_parse *p, const char *role, int line)
{
	const struct pool_cloud *c = &sr_pool_clouds[p->pool->cloud];
	char b[SR_JS_SHOW_MAX + 4];
	int ok;

	switch (c->zones) {
	case ZONE_LETTER:	/* a name, or an ARN */
		ok = strncmp(role, "arn:", 4) == 0 ? strstr(role, ":instance-profile/") != NULL :
		    strspn(role, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789+=,.@_-") == strlen(role);
		break;
	case ZONE_DASH_LETTER:	/* an email */
		ok = strchr(role, '@') != NULL && strchr(role, '/') == NULL;
		break;
	default:		/* a resource ID */
		ok = strncmp(role, "/subscriptions/", 15) == 0 &&
		    strstr(role, "/userAssignedIdentities/") != NULL;
		break;
	}
	if (!ok)
		sr_pool_error(p, line, "role = %s: not %s %s's name; give e.g. %s",
		    sr_js_show(role, b), sr_pool_article(c->role_kind), c->role_kind,
		    c->role_example);
}

void
sr_pool_set_value(struct sr_pool_parse *p, const struct pool_key *k, const char *v, int line)
{
	char *field = (char *)p->pool + k->off, b[SR_JS_SHOW_MAX + 4], *end;
	const char *s;
	double d;
	long n;
	int r;

	switch (k->type) {
	case PT_NAME:
		for (s = v; *s != '\0' && (islower((unsigned char)*s) ||
		    (s > v && (isdigit((unsigned char)*s) || *s == '-'))); s++)
			;
		if (*s != '\0' || s == v || s[-1] == '-' || s - v > SR_POOL_NAME_MAX) {
			sr_pool_error(p, line, "name = %s: a pool's name is %s", sr_js_show(v, b),
			    k->hint);
			return;
		}
		*(char **)field = sr_strdup(v);
		return;
	case PT_CLOUD:
		set_cloud(p, v, line);
		return;
	case PT_REGIONS:
		(void)split_list(p, k, v, line, &p->pool->regions, &p->pool->nregions);
		return;
	case PT_ZONES:
		(void)split_list(p, k, v, line, &p->pool->zones, &p->pool->nzones);
		return;
	case PT_TYPES:
		(void)split_list(p, k, v, line, &p->pool->instance_types, &p->pool->ntypes);
		return;
	case PT_GPUS:
		set_gpus(p, k, v, line);
		return;
	case PT_IMAGE:
	case PT_ROLE:
		if (*v == '\0' || strpbrk(v, " \t") != NULL) {
			sr_pool_error(p, line, "%s = %s: %s", k->name, sr_js_show(v, b),
			    k->type == PT_IMAGE ? "an image is one word with no blank; give an "
			    "image ID, or remove image for the cloud's GPU image" :
			    "a role is one word with no blank");
			return;
		}
		*(char **)field = sr_strdup(v);
		return;
	case PT_INT:
		n = isdigit((unsigned char)*v) ? strtol(v, &end, 10) : -1;
		if (n < 0 || *end != '\0' || n < k->min || n > k->max) {
			sr_pool_error(p, line, "%s = %s: not %s; give %s", k->name, sr_js_show(v, b),
			    n < 0 || *end != '\0' ? "a whole number" : "in range", k->hint);
			return;
		}
		*(int *)field = (int)n;
		return;
	case PT_DOLLARS:
		if (parse_dollars(v, &d) == -1) {
			sr_pool_error(p, line, "%s = %s: not an amount of dollars; give %s", k->name,
			    sr_js_show(v, b), k->hint);
			return;
		}
		if (d <= 0) {
			sr_pool_error(p, line, "%s = %s: not above 0; give %s", k->name,
			    sr_js_show(v, b), k->hint);
			return;
		}
		*(double *)field = d;
		return;
	case PT_DURATION:
		r = sr_parse_duration(v, &d);
		if (r == -1) {
			sr_pool_error(p, line, "%s = %s: not a duration; give %s", k->name,
			    sr_js_show(v, b), k->hint);
			return;
		}
		if (r == -2 || ((d < k->min || d > k->max) && !(d == 0 && k->zero_ok))) {
			sr_pool_error(p, line, "%s = %s: out of range; give %s", k->name,
			    sr_js_show(v, b), k->hint);
			return;
		}
		*(double *)field = d;
		return;
	}
}
