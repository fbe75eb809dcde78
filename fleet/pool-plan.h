/*
 * pool-plan.h: what `spotrun up` would create for a pool (spotrun-pool(5))
 * on its cloud's fleet engine: the instance types its GPU shapes mean,
 * the placement candidates in order, the resources with their names and
 * tags, and what an hour of the pool costs by the price table. The dry
 * run prints it; the provisioner will create it.
 */
#ifndef SR_POOL_PLAN_H
#define SR_POOL_PLAN_H

#include <stdio.h>

#include "pool.h"
#include "prices.h"

/* The instance types of p, in order: its instance_types as written, or
 * for its gpus, each shape's types on p's cloud that table t prices
 * (a type is in t's section named as the cloud), in the order of the
 * shapes and then of the table. Every type must be in t's section of
 * the cloud. 0 with *types (malloc'd array of pointers into p and t) and
 * *n, or -1 with err naming the type or shape and what is known. */
int sr_pool_types(const struct sr_pool *p, const struct sr_prices *t, const char ***types,
    size_t *n, char *err);

/* Print the plan of p on queue to fp, deterministically: the engine and
 * why, each resource with its name and tags, the launch configuration,
 * the placement candidates (type x zone, or x region without zones), the
 * user-data's command, the limits, and the hourly cost range over the
 * candidates' spot prices times max_vms, naming the table. 0, or -1 with
 * err (sr_pool_types'). */
int sr_pool_plan_print(const struct sr_pool *p, const char *queue, const struct sr_prices *t,
    FILE *fp, char *err);

#endif
