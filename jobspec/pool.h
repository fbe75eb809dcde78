/*
 * pool.h: the pool file (spotrun-pool(5)), the INI file that describes the
 * spot machines `spotrun up` acquires through a cloud's fleet engine: the
 * cloud, its regions and zones in order, the instance types or GPU shapes,
 * the image, disk and role of each VM, how many VMs, and what they may
 * cost. Read into a validated struct like a job file: every error is
 * collected with its line ("FILE:LINE: message naming the key and what
 * would be valid"), unknown keys with a did-you-mean.
 *
 * A GPU shape stays data here (a count and a model): which instance types
 * have it is the fleet's knowledge (fleet/pool-plan.c), with the prices.
 */
#ifndef SR_POOL_H
#define SR_POOL_H

#include <stddef.h>

#include "jobspec.h"

#define SR_POOL_NAME_MAX	40	/* characters of a pool's name: resource names grow */
#define SR_POOL_LIST_MAX	32	/* items of one list (regions, zones, types, shapes) */
#define SR_POOL_VMS_MAX		1000	/* max_vms */
#define SR_POOL_GPUS_MAX	16	/* GPUs of one shape */
#define SR_POOL_DISK_MIN	10	/* GiB of a VM's disk */
#define SR_POOL_DISK_MAX	65536

/* The clouds a pool may be on (the pool table's order, pool-keys.c). */
enum sr_pool_cloud {
	SR_POOL_AWS,
	SR_POOL_GCP,
	SR_POOL_AZURE,
	SR_POOL_NCLOUDS
};

/* One GPU shape: count GPUs of model ("8xH100": 8, "H100"). */
struct sr_pool_gpu {
	int count;
	char *model;		/* as written */
};

struct sr_pool {
	char *path;		/* as given */
	char *name;		/* [pool] name: [a-z][a-z0-9-]*, at most SR_POOL_NAME_MAX */
	enum sr_pool_cloud cloud;
	char **regions;		/* in order of preference; at least one */
	size_t nregions;
	char **zones;		/* in order; each in one of regions (Azure: "1".."3",
				 * in every region); 0: any zone */
	size_t nzones;
	char **instance_types;	/* [vm] instance_types, in order; or */
	size_t ntypes;
	struct sr_pool_gpu *gpus;	/* [vm] gpus: any of these shapes, in order */
	size_t ngpus;
	char *image;		/* NULL: the cloud's GPU image (sr_pool_default_image) */
	int disk_gib;		/* default 100 */
	char *role;		/* the VM's instance profile, service account or
				 * identity; NULL: none */
	int max_vms;		/* default 1 */
	double max_price;	/* dollars a VM-hour; 0: up to the on-demand price */
	double cost_cap;	/* dollars for the whole pool; 0: none */
	double idle_timeout;	/* seconds an agent waits idle before its VM
				 * goes; default 30m; 0: never */
	double on_demand_after;	/* seconds without spot capacity before on-demand
				 * VMs are taken; 0: never */
};

/* Parse and validate the pool file at path. 0 with *out (sr_pool_free), or
 * -1 with every error in errs (sr_jobspec_errors_print prints them as
 * "PATH:LINE: message"; free them with sr_jobspec_errors_free); errs may
 * be NULL. */
int sr_pool_load(const char *path, struct sr_pool **out, struct sr_jobspec_errors *errs);
/* The same for the len bytes at text, named path in messages. */
int sr_pool_parse(const char *path, const char *text, size_t len, struct sr_pool **out,
    struct sr_jobspec_errors *errs);
void sr_pool_free(struct sr_pool *p);

/* The cloud's name as a pool file writes it ("aws"), which is also its
 * section of the price table. */
const char *sr_pool_cloud_name(enum sr_pool_cloud c);
/* What the VMs boot when the file names no image: the cloud's GPU image
 * with the NVIDIA driver, as it is looked up at creation (an SSM
 * parameter, an image family, a marketplace URN). */
const char *sr_pool_default_image(enum sr_pool_cloud c);
/* What [vm] role names on the cloud, in words ("instance profile"). */
const char *sr_pool_role_kind(enum sr_pool_cloud c);

#endif
