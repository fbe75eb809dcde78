/*
 * t-place.c: the placement history's rule (fleet/pool-failover.h;
 * doc/design.md, "Provisioning"): a place's rank from its types' events
 * of the last hour (capacity failures 2, two preemptions or more 1, one
 * preemption 0), the cloud, region, type and zone each matched, old and
 * future events ignored; one type's rank in a zone; and the region of a
 * zone as each cloud names it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "pool-failover.h"
#include "queue.h"
#include "tap.h"

static struct sr_queue_place_event
ev(const char *cloud, const char *region, const char *zone, const char *type, const char *why,
    double at)
{
	struct sr_queue_place_event e;

	memset(&e, 0, sizeof e);
	snprintf(e.cloud, sizeof e.cloud, "%s", cloud);
	snprintf(e.region, sizeof e.region, "%s", region);
	snprintf(e.zone, sizeof e.zone, "%s", zone);
	snprintf(e.type, sizeof e.type, "%s", type);
	snprintf(e.why, sizeof e.why, "%s", why);
	e.at = at;
	return e;
}

static void
test_rank(void)
{
	static const char *const two[] = { "g5.xlarge", "g6.xlarge" };
	static const char *const one[] = { "g5.xlarge" };
	struct sr_pool_place p2 = { "us-east-1", two, 2 }, p1 = { "us-east-1", one, 1 };
	struct sr_queue_place_event h[8];
	double now = 1.0e9;

	is_int(sr_pool_place_rank(NULL, 0, "aws", &p1, now), 0, "no history: rank 0");
	h[0] = ev("aws", "us-east-1", "us-east-1a", "g5.xlarge", "preempted", now - 60);
	is_int(sr_pool_place_rank(h, 1, "aws", &p1, now), 0, "one preemption: rank 0");
	h[1] = ev("aws", "us-east-1", "us-east-1b", "g5.xlarge", "preempted", now - 30);
	is_int(sr_pool_place_rank(h, 2, "aws", &p1, now), 1, "two preemptions in the hour: rank 1");
	is_int(sr_pool_place_rank(h, 2, "aws", &p2, now), 0,
	    "... but a place with another type free of events keeps rank 0");
	h[2] = ev("aws", "us-east-1", "", "g6.xlarge", "InsufficientInstanceCapacity", now - 10);
	is_int(sr_pool_place_rank(h, 3, "aws", &p2, now), 1,
	    "one type preempted twice, the other refused: the lighter, 1");
	h[3] = ev("aws", "us-east-1", "", "g5.xlarge", "InsufficientInstanceCapacity", now - 5);
	is_int(sr_pool_place_rank(h, 4, "aws", &p2, now), 2, "both types refused: rank 2");
	is_int(sr_pool_place_rank(h, 4, "gcp", &p2, now), 0, "another cloud's events do not count");
	h[0].at = h[1].at = now - 3601;
	is_int(sr_pool_place_rank(h, 2, "aws", &p1, now), 0, "preemptions over an hour old: rank 0");
	is_int(sr_pool_place_rank(h + 3, 1, "aws", &p1, now + 3600), 0,
	    "a refusal an hour old no longer counts");
	h[4] = ev("aws", "us-east-2", "", "g5.xlarge", "InsufficientInstanceCapacity", now);
	h[5] = ev("aws", "us-east-1", "", "g5.xlarge", "InsufficientInstanceCapacity", now + 120);
	is_int(sr_pool_place_rank(h + 4, 2, "aws", &p1, now), 0,
	    "another region's refusal, and one in the future, do not count");
	/* one type in a zone (the order of an AWS fleet's overrides) */
	h[0] = ev("aws", "us-east-1", "us-east-1a", "g5.xlarge", "preempted", now - 60);
	h[1] = ev("aws", "us-east-1", "us-east-1a", "g5.xlarge", "preempted", now - 30);
	is_int(sr_pool_type_rank(h, 2, "aws", "us-east-1", "us-east-1a", "g5.xlarge", now), 1,
	    "type in zone: two preemptions there, 1");
	is_int(sr_pool_type_rank(h, 2, "aws", "us-east-1", "us-east-1b", "g5.xlarge", now), 0,
	    "... none in another zone, 0");
	is_int(sr_pool_type_rank(h, 2, "aws", "us-east-1", NULL, "g5.xlarge", now), 1,
	    "... any zone (NULL), 1");
	h[2] = ev("aws", "us-east-1", "", "g5.xlarge", "MaxSpotInstanceCountExceeded", now - 1);
	is_int(sr_pool_type_rank(h + 2, 1, "aws", "us-east-1", "us-east-1b", "g5.xlarge", now), 2,
	    "an event naming no zone counts in every zone");
}

static void
test_zone_region(void)
{
	char r[64];

	is_int(sr_pool_zone_region(SR_POOL_AWS, "us-east-1a", r, sizeof r), 0, "aws zone");
	is_str(r, "us-east-1", "... us-east-1a is in us-east-1");
	is_int(sr_pool_zone_region(SR_POOL_GCP, "us-central1-a", r, sizeof r), 0, "gcp zone");
	is_str(r, "us-central1", "... us-central1-a is in us-central1");
	is_int(sr_pool_zone_region(SR_POOL_AZURE, "eastus-1", r, sizeof r), 0, "azure location-zone");
	is_str(r, "eastus", "... eastus-1 is in eastus");
	is_int(sr_pool_zone_region(SR_POOL_AZURE, "westeurope", r, sizeof r), 0, "azure location alone");
	is_str(r, "westeurope", "... is its own region");
	is_int(sr_pool_zone_region(SR_POOL_AWS, "unknown", r, sizeof r), -1, "unknown zone: -1");
	is_int(sr_pool_zone_region(SR_POOL_AWS, "", r, sizeof r), -1, "empty zone: -1");
	is_int(sr_pool_zone_region(SR_POOL_AWS, "us-east-1", r, sizeof r), -1,
	    "an aws region is not a zone: -1");
	is_int(sr_pool_zone_region(SR_POOL_GCP, "us-central1", r, sizeof r), -1,
	    "a gcp region is not a zone: -1");
}

int
main(void)
{
	test_rank();
	test_zone_region();
	return tap_done();
}
