/*
 * pool-plan.c: see pool-plan.h. The engines are each cloud's own, the one
 * that keeps a number of spot VMs running over several types and zones
 * and replaces a reclaimed one: an EC2 Fleet of type maintain on AWS, a
 * regional managed instance group on GCP, a Flexible VM scale set on
 * Azure. Each of them is regional, so a pool gets one per region.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gce.h"
#include "pool-plan.h"
#include "util.h"

/* The GPUs of the instance types the built-in price table has (the
 * clouds' instance type pages): what a GPU shape resolves to. */
static const struct gpu_type {
	const char *type;
	const char *model;
	int count;
} gpu_types[] = {
	{ "p5.48xlarge", "H100", 8 }, { "p4de.24xlarge", "A100", 8 },
	{ "p4d.24xlarge", "A100", 8 }, { "p3.2xlarge", "V100", 1 },
	{ "p3.8xlarge", "V100", 4 }, { "p3.16xlarge", "V100", 8 },
	{ "g6e.xlarge", "L40S", 1 }, { "g6e.12xlarge", "L40S", 4 },
	{ "g6e.48xlarge", "L40S", 8 }, { "g6.xlarge", "L4", 1 }, { "g6.2xlarge", "L4", 1 },
	{ "g6.4xlarge", "L4", 1 }, { "g6.8xlarge", "L4", 1 }, { "g6.12xlarge", "L4", 4 },
	{ "g6.16xlarge", "L4", 1 }, { "g6.24xlarge", "L4", 4 }, { "g6.48xlarge", "L4", 8 },
	{ "g5.xlarge", "A10G", 1 }, { "g5.2xlarge", "A10G", 1 }, { "g5.4xlarge", "A10G", 1 },
	{ "g5.8xlarge", "A10G", 1 }, { "g5.12xlarge", "A10G", 4 },
	{ "g5.16xlarge", "A10G", 1 }, { "g5.24xlarge", "A10G", 4 },
	{ "g5.48xlarge", "A10G", 8 }, { "g4dn.xlarge", "T4", 1 }, { "g4dn.2xlarge", "T4", 1 },
	{ "g4dn.4xlarge", "T4", 1 }, { "g4dn.8xlarge", "T4", 1 }, { "g4dn.12xlarge", "T4", 4 },
	{ "g4dn.16xlarge", "T4", 1 },
	{ "a3-highgpu-8g", "H100", 8 }, { "a2-highgpu-1g", "A100", 1 },
	{ "a2-highgpu-2g", "A100", 2 }, { "a2-highgpu-4g", "A100", 4 },
	{ "a2-highgpu-8g", "A100", 8 }, { "a2-megagpu-16g", "A100", 16 },
	{ "a2-ultragpu-1g", "A100-80GB", 1 }, { "a2-ultragpu-2g", "A100-80GB", 2 },
	{ "a2-ultragpu-4g", "A100-80GB", 4 }, { "a2-ultragpu-8g", "A100-80GB", 8 },
	{ "g2-standard-4", "L4", 1 }, { "g2-standard-8", "L4", 1 },
	{ "g2-standard-12", "L4", 1 }, { "g2-standard-16", "L4", 1 },
	{ "g2-standard-24", "L4", 2 }, { "g2-standard-32", "L4", 1 },
	{ "g2-standard-48", "L4", 4 }, { "g2-standard-96", "L4", 8 },
	{ "Standard_ND96isr_H100_v5", "H100", 8 }, { "Standard_ND96amsr_A100_v4", "A100", 8 },
	{ "Standard_ND96asr_v4", "A100", 8 }, { "Standard_NC40ads_H100_v5", "H100", 1 },
	{ "Standard_NC80adis_H100_v5", "H100", 2 }, { "Standard_NC24ads_A100_v4", "A100", 1 },
	{ "Standard_NC48ads_A100_v4", "A100", 2 }, { "Standard_NC96ads_A100_v4", "A100", 4 },
	{ "Standard_NC6s_v3", "V100", 1 }, { "Standard_NC12s_v3", "V100", 2 },
	{ "Standard_NC24s_v3", "V100", 4 }, { "Standard_NC4as_T4_v3", "T4", 1 },
	{ "Standard_NC8as_T4_v3", "T4", 1 }, { "Standard_NC16as_T4_v3", "T4", 1 },
	{ "Standard_NC64as_T4_v3", "T4", 4 },
};

/* What each cloud's engine is, indexed by enum sr_pool_cloud. */
static const struct engine {
	const char *what, *why;
	const char *group;		/* the per-region resource */
	const char *template;		/* what its VMs are made from */
	int template_regional;		/* one template per region */
	const char *spot;		/* the spot settings */
	const char *tags;		/* "tags" or "labels" */
} engines[SR_POOL_NCLOUDS] = {
	[SR_POOL_AWS] = { "EC2 Fleet, type maintain",
	    "keeps max_vms spot VMs running over every candidate type and zone, replacing a "
	    "reclaimed one",
	    "EC2 Fleet", "launch template", 1,
	    "AllocationStrategy=price-capacity-optimized, capacity rebalancing on, "
	    "InstanceInitiatedShutdownBehavior=terminate", "tags" },
	[SR_POOL_GCP] = { "regional managed instance group",
	    "keeps its target size of spot VMs over the region's zones, recreating a "
	    "preempted one",
	    "managed instance group", "instance template", 0,
	    "provisioningModel=SPOT, instanceTerminationAction=DELETE", "labels" },
	[SR_POOL_AZURE] = { "Flexible VM scale set",
	    "keeps its capacity of Spot VMs over the region's zones and types, replacing an "
	    "evicted one",
	    "VM scale set (Flexible)", NULL, 0,
	    "priority=Spot, evictionPolicy=Delete", "tags" },
};

static int
in_cloud(const struct sr_price *pr, const struct sr_pool *p)
{
	return strcmp(pr->cloud, sr_pool_cloud_name(p->cloud)) == 0;
}

int
sr_pool_types(const struct sr_pool *p, const struct sr_prices *t, const char ***types,
    size_t *n, char *err)
{
	const struct sr_price *pr;
	const char **v = NULL;
	char known[300];
	size_t i, j, k, nv = 0;

	*types = NULL;
	*n = 0;
	for (i = 0; i < p->ntypes; i++) {
		pr = sr_prices_find(t, p->instance_types[i]);
		if (pr == NULL || !in_cloud(pr, p)) {
			free(v);
			return sr_err(err, "instance type %s: not in [%s] of %s; add a line %s = "
			    "ON_DEMAND SPOT to a copy of it (--prices), or choose another",
			    p->instance_types[i], sr_pool_cloud_name(p->cloud), sr_prices_name(t),
			    p->instance_types[i]);
		}
		v = sr_reallocarray(v, nv + 1, sizeof *v);
		v[nv++] = p->instance_types[i];
	}
	for (i = 0; i < p->ngpus; i++) {
		size_t before = nv;

		*known = '\0';
		for (j = 0; j < sr_prices_count(t); j++) {
			pr = sr_prices_at(t, j);
			for (k = 0; k < SR_ARRAY_LEN(gpu_types); k++) {
				if (strcasecmp(gpu_types[k].type, pr->type) == 0)
					break;
			}
			if (k == SR_ARRAY_LEN(gpu_types) || !in_cloud(pr, p))
				continue;
			if (gpu_types[k].count == p->gpus[i].count &&
			    strcasecmp(gpu_types[k].model, p->gpus[i].model) == 0) {
				v = sr_reallocarray(v, nv + 1, sizeof *v);
				v[nv++] = pr->type;
			} else {
				char shape[48], seen[sizeof known + 4];

				/* whole items: ", 1xL4," is not in ", 1xL40S," */
				snprintf(shape, sizeof shape, ", %dx%s,", gpu_types[k].count,
				    gpu_types[k].model);
				snprintf(seen, sizeof seen, ", %s,", known);
				if (strstr(seen, shape) == NULL)
					snprintf(known + strlen(known), sizeof known - strlen(known),
					    "%s%.*s", *known ? ", " : "", (int)strlen(shape) - 3,
					    shape + 2);
			}
		}
		if (nv == before) {
			free(v);
			return sr_err(err, "gpus %dx%s: no %s instance type of %s has it; known "
			    "shapes: %s", p->gpus[i].count, p->gpus[i].model,
			    sr_pool_cloud_name(p->cloud), sr_prices_name(t), known);
		}
	}
	*types = v;
	*n = nv;
	return 0;
}

static void
print_tags(const struct sr_pool *p, const char *queue, FILE *fp)
{
	char lq[64];

	/* labels hold [a-z0-9_-] only: the queue's is its hash, the URL is metadata */
	if (p->cloud == SR_POOL_GCP) {
		sr_gce_label_value(queue, lq);
		fprintf(fp, "    labels: spotrun-pool=%s spotrun-queue=%s\n    metadata: "
		    "spotrun-queue=%s\n", p->name, lq, queue);
	} else
		fprintf(fp, "    tags: spotrun:pool=%s spotrun:queue=%s\n", p->name, queue);
}

int
sr_pool_plan_print(const struct sr_pool *p, const char *queue, const struct sr_prices *t,
    FILE *fp, char *err)
{
	const struct engine *e = &engines[p->cloud];
	const struct sr_price *pr, *lo = NULL, *hi = NULL;
	const char **types;
	char d[32];
	double od = 0;
	size_t ntypes, i, j, nc = 0;
	int over;

	if (sr_pool_types(p, t, &types, &ntypes, err) == -1)
		return -1;
	fprintf(fp, "pool %s on %s (dry run: nothing is created)\n", p->name,
	    sr_pool_cloud_name(p->cloud));
	fprintf(fp, "engine: %s: %s\n", e->what, e->why);
	fprintf(fp, "resources:\n");
	if (e->template != NULL && !e->template_regional) {
		fprintf(fp, "  %s spotrun-pool-%s (global)\n", e->template, p->name);
		print_tags(p, queue, fp);
	}
	for (i = 0; i < p->nregions; i++) {
		if (e->template != NULL && e->template_regional) {
			fprintf(fp, "  %s spotrun-pool-%s in %s\n", e->template, p->name,
			    p->regions[i]);
			print_tags(p, queue, fp);
		}
		fprintf(fp, "  %s spotrun-pool-%s-%s in %s\n", e->group, p->name, p->regions[i],
		    p->regions[i]);
		if (p->cloud == SR_POOL_GCP)	/* Compute labels no group */
			fprintf(fp, "    no labels of its own: the pool's by its template\n");
		else
			print_tags(p, queue, fp);
	}
	fprintf(fp, "launch configuration:\n");
	if (p->image != NULL)
		fprintf(fp, "  image: %s\n", p->image);
	else
		fprintf(fp, "  image: %s (the cloud's GPU image, looked up at creation)\n",
		    sr_pool_default_image(p->cloud));
	fprintf(fp, "  disk: %d GiB\n", p->disk_gib);
	fprintf(fp, "  role: %s%s%s\n", p->role != NULL ? sr_pool_role_kind(p->cloud) : "none",
	    p->role != NULL ? " " : "", p->role != NULL ? p->role : "");
	fprintf(fp, "  spot: %s\n", e->spot);
	if (p->max_price > 0)
		fprintf(fp, "  max price: $%.4f a VM-hour\n", p->max_price);
	else
		fprintf(fp, "  max price: up to the on-demand price\n");
	fprintf(fp, "  user-data: the output of spotrun cloud-init --queue %s", queue);
	if (p->idle_timeout > 0)
		fprintf(fp, " --idle-timeout %s", sr_fmt_duration(p->idle_timeout, d, sizeof d));
	fprintf(fp, "\n    (the prebuilt spotrun, published to the queue's store and "
	    "presigned at creation)\n");
	fprintf(fp, "placement candidates, in order:\n");
	for (i = 0; i < ntypes; i++) {
		pr = sr_prices_find(t, types[i]);
		over = p->max_price > 0 && pr->spot > p->max_price;
		if (!over && (lo == NULL || pr->spot < lo->spot))
			lo = pr;
		if (!over && (hi == NULL || pr->spot > hi->spot))
			hi = pr;
		if (!over && pr->on_demand > od)
			od = pr->on_demand;
		for (j = 0; j < (p->nzones > 0 ? p->nzones : p->nregions); j++) {
			if (p->nzones == 0)
				fprintf(fp, "  %2zu. %s in any zone of %s", ++nc, types[i],
				    p->regions[j]);
			else if (p->cloud == SR_POOL_AZURE)
				fprintf(fp, "  %2zu. %s in zone %s of each region", ++nc, types[i],
				    p->zones[j]);
			else
				fprintf(fp, "  %2zu. %s in %s", ++nc, types[i], p->zones[j]);
			fprintf(fp, ": spot $%.4f/h, on demand $%.4f/h%s\n", pr->spot, pr->on_demand,
			    over ? " (spot above max_price: not bid)" : "");
		}
	}
	fprintf(fp, "max VMs: %d\n", p->max_vms);
	if (p->cost_cap > 0)
		fprintf(fp, "cost cap: $%.2f for the whole pool\n", p->cost_cap);
	else
		fprintf(fp, "cost cap: none\n");
	fprintf(fp, "idle timeout: %s\n", p->idle_timeout > 0 ?
	    sr_fmt_duration(p->idle_timeout, d, sizeof d) : "never");
	if (p->on_demand_after > 0)
		fprintf(fp, "on-demand fallback: after %s without spot capacity\n",
		    sr_fmt_duration(p->on_demand_after, d, sizeof d));
	else
		fprintf(fp, "on-demand fallback: none\n");
	pr = sr_prices_find(t, types[0]);	/* the table's section, for its name */
	if (lo == NULL)
		fprintf(fp, "hourly cost: none: every candidate's spot price is above max_price");
	else
		fprintf(fp, "hourly cost: $%.2f..$%.2f for %d VM%s at spot prices",
		    lo->spot * p->max_vms, hi->spot * p->max_vms, p->max_vms,
		    p->max_vms == 1 ? "" : "s");
	if (lo != NULL && p->on_demand_after > 0)
		fprintf(fp, " ($%.2f at most on demand)", od * p->max_vms);
	fprintf(fp, "\n  (%s, [%s]%s%s, as of %s; other regions differ)\n", sr_prices_name(t),
	    pr->cloud, *pr->region ? " " : "", pr->region, pr->as_of);
	free(types);
	return 0;
}
