/*
 * pool.c: reading a pool file (spotrun-pool(5)) into a validated struct
 * sr_pool. common/inifile.c reads the lines (a syntax error stops it, with
 * its line); this file checks each setting's section and key, collecting
 * every error like the job file's parser does and with its messages
 * (jobspec-msg.c), and then what needs the whole file: required keys,
 * zones against regions, instance_types against gpus, role against the
 * cloud. The value parsers are in pool-keys.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inifile.h"
#include "jobspec-msg.h"
#include "pool-int.h"
#include "similar.h"

#define POOL_FILE_MAX (64 * 1024)	/* bytes of a pool file */

static int
key_index(const char *name, int sec)
{
	int i;

	for (i = 0; i < SR_POOL_NKEYS; i++) {
		if (strcmp(sr_pool_keys[i].name, name) == 0 &&
		    (sec < 0 || (int)sr_pool_keys[i].sec == sec))
			return i;
	}
	return -1;
}

static int
section_index(const char *name)
{
	int i;

	for (i = 0; i < PSEC_N; i++) {
		if (strcmp(sr_pool_section_names[i], name) == 0)
			return i;
	}
	return -1;
}

/* An unknown section, reported once however many keys it has. */
static void
unknown_section(struct sr_pool_parse *p, const char *section, int line)
{
	char b[SR_JS_SHOW_MAX + 4];
	int k = sr_similar_closest(section, sr_pool_section_names, PSEC_N);

	if (strcmp(p->bad_section, section) == 0)
		return;
	snprintf(p->bad_section, sizeof p->bad_section, "%s", section);
	if (k >= 0)
		sr_pool_error(p, line, "unknown section [%s]; did you mean [%s]? Valid sections: "
		    "[pool], [vm]", sr_js_show(section, b), sr_pool_section_names[k]);
	else
		sr_pool_error(p, line, "unknown section [%s]; valid sections: [pool], [vm]",
		    sr_js_show(section, b));
}

/* sr_inifile_each's callback: one "key = value" line. */
static int
on_setting(void *arg, const char *section, const char *key, const char *value, int line,
    char *err)
{
	struct sr_pool_parse *p = arg;
	const char *keys[SR_POOL_NKEYS];
	char msg[sizeof p->errs->v->msg];
	int sec, k, other;
	size_t n = 0, i;

	(void)err;
	if (*section == '\0') {
		k = key_index(key, -1);
		if (k >= 0)
			sr_pool_error(p, line, "key '%s' is outside any section; put it under [%s]",
			    key, sr_pool_section_names[sr_pool_keys[k].sec]);
		else
			sr_pool_error(p, line, "key '%s' is outside any section; put keys under "
			    "[pool] or [vm]", sr_js_show(key, (char[SR_JS_SHOW_MAX + 4]){ 0 }));
		return 0;
	}
	if ((sec = section_index(section)) < 0) {
		unknown_section(p, section, line);
		return 0;
	}
	if ((k = key_index(key, sec)) < 0) {
		other = key_index(key, -1);
		if (other >= 0) {
			sr_pool_error(p, line, "unknown key '%s' in [%s]; %s belongs in [%s]", key,
			    section, key, sr_pool_section_names[sr_pool_keys[other].sec]);
			return 0;
		}
		for (i = 0; i < SR_POOL_NKEYS; i++) {
			if ((int)sr_pool_keys[i].sec == sec)
				keys[n++] = sr_pool_keys[i].name;
		}
		sr_js_unknown_key_msg(msg, sizeof msg, key, section, keys, n);
		sr_pool_error(p, line, "%s", msg);
		return 0;
	}
	if (p->key_line[k] != 0) {
		sr_pool_error(p, line, "duplicate key '%s' in [%s] (first set on line %d); keep one",
		    key, section, p->key_line[k]);
		return 0;
	}
	p->key_line[k] = line;
	sr_pool_set_value(p, &sr_pool_keys[k], value, line);
	return 0;
}

static void
require(struct sr_pool_parse *p, const char *key, const char *example)
{
	int k = key_index(key, -1);

	if (p->key_line[k] == 0)
		sr_pool_error(p, 0, "missing required key '%s' in [%s]; add e.g. %s = %s", key,
		    sr_pool_section_names[sr_pool_keys[k].sec], key, example);
}

/* The checks that need the whole file. */
static void
finish(struct sr_pool_parse *p)
{
	struct sr_pool *pool = p->pool;
	const struct pool_cloud *c = &sr_pool_clouds[pool->cloud];
	int kr = key_index("regions", -1), kz = key_index("zones", -1);
	int kt = key_index("instance_types", -1), kg = key_index("gpus", -1);
	int kro = key_index("role", -1);
	char b[SR_JS_SHOW_MAX + 4], list[200] = "";
	size_t i, j;

	require(p, "name", "sweep-a10g");
	require(p, "cloud", "aws");
	require(p, "regions", "us-east-1");
	if (p->key_line[kt] == 0 && p->key_line[kg] == 0)
		sr_pool_error(p, 0, "missing instance_types or gpus in [vm]; add e.g. gpus = 1xA10G");
	else if (p->key_line[kt] != 0 && p->key_line[kg] != 0)
		sr_pool_error(p, p->key_line[kt] > p->key_line[kg] ? p->key_line[kt] :
		    p->key_line[kg], "instance_types and gpus both choose the machines; keep one");
	if (!p->cloud_set)
		return;		/* the rest are the cloud's rules */
	for (i = 0; i < pool->nregions; i++) {
		if (!sr_pool_region_ok(c->zones, pool->regions[i]))
			sr_pool_error(p, p->key_line[kr], "regions: %s is not %s %s region; "
			    "write it as the cloud does, e.g. %s", sr_js_show(pool->regions[i], b),
			    sr_pool_article(c->name), c->name, c->region_example);
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
		    i ? ", " : "", pool->regions[i]);
	}
	for (i = 0; i < pool->nzones; i++) {
		for (j = 0; j < pool->nregions; j++) {
			if (sr_pool_zone_in(c->zones, pool->zones[i], pool->regions[j]))
				break;
		}
		if (j < pool->nregions || (c->zones == ZONE_NUMBER && pool->nregions == 0))
			continue;
		if (c->zones == ZONE_NUMBER)
			sr_pool_error(p, p->key_line[kz], "zones: %s is not %s %s zone; %s zones "
			    "are 1, 2 or 3, in each of the regions", sr_js_show(pool->zones[i], b),
			    sr_pool_article(c->name), c->name, c->name);
		else if (pool->nregions > 0)
			sr_pool_error(p, p->key_line[kz], "zones: %s is in none of the regions "
			    "(%s); %s %s zone is its region and %s, e.g. %s",
			    sr_js_show(pool->zones[i], b), list, sr_pool_article(c->name),
			    c->name, c->zones == ZONE_LETTER ? "a letter" : "'-' and a letter",
			    c->zone_example);
	}
	if (pool->role != NULL)
		sr_pool_check_role(p, pool->role, p->key_line[kro]);
}

int
sr_pool_parse(const char *path, const char *text, size_t len, struct sr_pool **out,
    struct sr_jobspec_errors *errs)
{
	struct sr_jobspec_errors local = { NULL, 0 };
	struct sr_pool_parse p;
	char err[SR_ERRMAX], *msg;
	int line;

	*out = NULL;
	if (errs == NULL)
		errs = &local;
	errs->v = NULL;
	errs->n = 0;
	memset(&p, 0, sizeof p);
	p.errs = errs;
	p.pool = sr_calloc(1, sizeof *p.pool);
	p.pool->path = sr_strdup(path);
	p.pool->disk_gib = 100;
	p.pool->max_vms = 1;
	p.pool->idle_timeout = 30 * 60;
	if (len > POOL_FILE_MAX)
		sr_pool_error(&p, 0, "larger than %d bytes; a pool file is a short text file",
		    POOL_FILE_MAX);
	else if (sr_inifile_each("", text, len, on_setting, &p, err) == -1) {
		/* inifile's "NAME:LINE: why", named "" so that the line is ours
		 * to record like every other error */
		line = (int)strtol(err + 1, &msg, 10);
		sr_pool_error(&p, line, "%s", strncmp(msg, ": ", 2) == 0 ? msg + 2 : err);
	} else
		finish(&p);
	if (p.dropped > 0) {
		errs->n = SR_JS_ERRORS_MAX - 1;
		sr_pool_error(&p, 0, "too many errors (%zu more not shown); fix these first",
		    p.dropped + 1);
	}
	if (errs->n > 0) {
		sr_pool_free(p.pool);
		if (errs == &local)
			sr_jobspec_errors_free(&local);
		return -1;
	}
	*out = p.pool;
	return 0;
}

int
sr_pool_load(const char *path, struct sr_pool **out, struct sr_jobspec_errors *errs)
{
	char err[SR_ERRMAX], *text;
	size_t len;
	int rc;

	if (sr_read_file(path, POOL_FILE_MAX, &text, &len, err) == -1) {
		*out = NULL;
		if (errs != NULL) {
			errs->v = sr_calloc(1, sizeof *errs->v);
			errs->n = 1;
			snprintf(errs->v->msg, sizeof errs->v->msg, "%s", err);
		}
		return -1;
	}
	rc = sr_pool_parse(path, text, len, out, errs);
	free(text);
	return rc;
}

static void
free_list(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
sr_pool_free(struct sr_pool *p)
{
	size_t i;

	if (p == NULL)
		return;
	free(p->path);
	free(p->name);
	free_list(p->regions, p->nregions);
	free_list(p->zones, p->nzones);
	free_list(p->instance_types, p->ntypes);
	for (i = 0; i < p->ngpus; i++)
		free(p->gpus[i].model);
	free(p->gpus);
	free(p->image);
	free(p->role);
	free(p);
}
