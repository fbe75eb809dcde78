/*
 * pool-int.h: what the parts of the pool file parser share (pool.c: the
 * sections, keys and checks across keys; pool-keys.c: the key table, the
 * clouds' table and the parsing of each value). pool.c calls down into
 * pool-keys.c, never the other way. Not for use outside them.
 */
#ifndef SR_POOL_INT_H
#define SR_POOL_INT_H

#include <stddef.h>

#include "pool.h"
#include "util.h"

enum pool_section { PSEC_POOL, PSEC_VM, PSEC_N };

/* "pool", "vm": indexed by enum pool_section. */
extern const char *const sr_pool_section_names[PSEC_N];

enum pool_type {
	PT_NAME, PT_CLOUD, PT_REGIONS, PT_ZONES, PT_TYPES, PT_GPUS, PT_IMAGE, PT_ROLE,
	PT_INT, PT_DOLLARS, PT_DURATION
};

struct pool_key {
	enum pool_section sec;
	const char *name;
	enum pool_type type;
	size_t off;		/* the field in struct sr_pool */
	double min, max;	/* PT_INT, PT_DURATION (0 allowed when zero_ok) */
	int zero_ok;
	const char *hint;	/* what is valid, with an example */
};

#define SR_POOL_NKEYS 14
extern const struct pool_key sr_pool_keys[SR_POOL_NKEYS];

/* How a cloud names its zones. */
enum zone_style {
	ZONE_LETTER,		/* the region and a letter: us-east-1a (AWS) */
	ZONE_DASH_LETTER,	/* the region, '-', a letter: us-central1-a (GCP) */
	ZONE_NUMBER		/* 1, 2 or 3 in every region (Azure) */
};

/* What the pool file knows of a cloud, indexed by enum sr_pool_cloud. */
struct pool_cloud {
	const char *name;		/* as the file writes it */
	enum zone_style zones;
	const char *region_example, *zone_example;
	const char *image;		/* sr_pool_default_image */
	const char *role_kind;		/* sr_pool_role_kind */
	const char *role_example;
};
extern const struct pool_cloud sr_pool_clouds[SR_POOL_NCLOUDS];

/* The state of one load. */
struct sr_pool_parse {
	struct sr_pool *pool;
	struct sr_jobspec_errors *errs;
	size_t dropped;
	int key_line[SR_POOL_NKEYS];	/* where each key was set; 0: not */
	int cloud_set;			/* cloud parsed: its rules apply */
	char bad_section[64];		/* the last unknown [section] reported */
};

/* Record an error at line (0: none). */
void sr_pool_error(struct sr_pool_parse *p, int line, const char *fmt, ...) SR_PRINTF(3, 4);
/* Parse value v of key k (set at line) into p->pool, or record an error. */
void sr_pool_set_value(struct sr_pool_parse *p, const struct pool_key *k, const char *v,
    int line);
/* Whether role is the kind cloud c takes; if not, an error at line. */
void sr_pool_check_role(struct sr_pool_parse *p, const char *role, int line);
/* "an" before a word of a vowel, else "a": for messages. */
const char *sr_pool_article(const char *word);
/* Whether r is a region as a cloud of that zone style writes them:
 * lowercase words and digits joined by '-', ending in a digit (us-east-1,
 * us-central1), or one word (eastus) where zones are numbered. */
int sr_pool_region_ok(enum zone_style s, const char *r);
/* Whether zone z belongs to region r on a cloud of that zone style. */
int sr_pool_zone_in(enum zone_style s, const char *z, const char *r);

#endif
