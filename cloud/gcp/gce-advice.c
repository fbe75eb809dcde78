/*
 * gce-advice.c: Compute's advice.capacityHistory (gce.h): the Spot
 * preemption rate Google recorded for a machine type in a zone or region,
 * which the GCP engine weighs places by (fleet/pool-gcp-advice.c).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "gce-int.h"
#include "gce.h"
#include "util.h"

enum sr_gce_status
sr_gce_capacity_history(struct sr_gce *c, const char *region, const char *zone,
    const char *machine_type, double *rate, char *err)
{
	char what[256], path[256], loc[128];
	json_t *body, *reply = NULL, *hist, *rec, *v, *iv;
	const char *e, *best = NULL;
	enum sr_gce_status st;
	size_t i;

	*rate = -1;
	snprintf(what, sizeof what, "ask the capacity history of %.64s in %.64s", machine_type,
	    zone != NULL ? zone : region);
	if (!gce_name_ok(region) || (zone != NULL && !gce_name_ok(zone)) ||
	    !gce_name_ok(machine_type))
		return sr_err(err, "%s: not a Compute name", what), SR_GCE_ERROR;
	snprintf(loc, sizeof loc, "%s/%s", zone != NULL ? "zones" : "regions",
	    zone != NULL ? zone : region);
	body = json_pack("{s:{s:s, s:{s:s}}, s:{s:s}, s:[s]}", "instanceProperties",
	    "machineType", machine_type, "scheduling", "provisioningModel", "SPOT",
	    "locationPolicy", "location", loc, "types", "PREEMPTION");
	if (body == NULL)
		return sr_err_oom(err, what), SR_GCE_ERROR;
	snprintf(path, sizeof path, "/regions/%s/advice/capacityHistory", region);
	st = gce_call(c, what, "POST", path, body, &reply, err);
	json_decref(body);
	if (st != SR_GCE_OK)
		return st;
	/* the newest record: the greatest endTime (RFC 3339 in UTC, "Z",
	 * compares as text) */
	hist = json_object_get(reply, "preemptionHistory");
	json_array_foreach(hist, i, rec) {
		iv = json_object_get(json_object_get(rec, "interval"), "endTime");
		v = json_object_get(rec, "preemptionRate");
		if (!json_is_string(iv) || !json_is_number(v) || json_number_value(v) < 0 ||
		    json_number_value(v) > 1)
			continue;
		e = json_string_value(iv);
		if (best == NULL || strcmp(e, best) > 0) {
			best = e;
			*rate = json_number_value(v);
		}
	}
	json_decref(reply);
	return SR_GCE_OK;
}
