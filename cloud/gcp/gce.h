/*
 * gce.h: the GCP engine of `spotrun up` and `spotrun down` (issue 24): a
 * client of Compute Engine's REST API (v1, JSON) that keeps a pool's spot
 * machines through a regional managed instance group (Compute keeps the
 * target size over the group's zones and recreates what is preempted) on a
 * global instance template holding the user-data, and finds everything a
 * pool owns by its labels, so that `down` needs no local state. The
 * operations mirror cloud/aws/ec2.h's, one for one, so that a table of
 * engines takes either. doc/gcp.md lists the calls and their permissions.
 *
 * Labels: spotrun-pool and spotrun-queue on the template's instances (and
 * through it on every instance the group makes), their values made
 * label-safe by sr_gce_label_value; the queue's URL itself rides in the
 * instances' metadata (spotrun-queue). Templates carry no labels of their
 * own in Compute's API: a template is the pool's when its properties'
 * labels say so, and a group is the pool's when its template is.
 *
 * Credentials: gce-auth.h (application default credentials, the metadata
 * server's token). Requests go with common/http.c, retried (4 tries,
 * backoff from 0.25 s) on a failed connection, a 5xx, 429 or a rate limit;
 * a refused token (401) is fetched again once. Mutations return a
 * long-running operation, waited on (operations/NAME/wait) until DONE or
 * the client's op_timeout.
 *
 * Errors: every function returns SR_GCE_OK, or SR_GCE_CAPACITY when Compute
 * answered a code a caller fails over on (another zone, type or cloud:
 * ZONE_RESOURCE_POOL_EXHAUSTED and its _WITH_DETAILS,
 * QUOTA_EXCEEDED, quotaExceeded, insufficientCapacity), else SR_GCE_ERROR;
 * err says "VERB OBJECT: CODE: Google's message" for an answer of
 * Compute's ("create group spotrun-p1: ZONE_RESOURCE_POOL_EXHAUSTED: ..."),
 * else the reason (connection, credentials, an unreadable reply). The
 * class comes from the code (sr_gce_classify), never from the text. The
 * same values as enum sr_ec2_status's, so a caller's failover reads both.
 */
#ifndef SR_GCE_H
#define SR_GCE_H

#include <stddef.h>

enum sr_gce_status {
	SR_GCE_OK = 0,
	SR_GCE_ERROR = -1,		/* anything else: fix and retry, no failover */
	SR_GCE_CAPACITY = -2,		/* no capacity or quota for this request: fail over */
};

/* The class of a Compute error code (an operation's error.errors[].code,
 * an instance's lastAttempt code, or an HTTP error's reason):
 * SR_GCE_CAPACITY for the capacity codes above, SR_GCE_ERROR for any
 * other, SR_GCE_OK for NULL or "". */
enum sr_gce_status sr_gce_classify(const char *code);

/* Read Google's JSON error document ({"error": {"code": 404, "message":
 * ..., "errors": [{"reason": ...}]}}) from body: 0 with code (the first
 * error's reason, else the status, else the HTTP code as digits) and
 * message filled (cut to fit), or -1 when body is not one (both ""). */
int sr_gce_parse_error(const char *body, size_t len, char *code, size_t code_len,
    char *message, size_t message_len);

/* A label value for s: s itself when it is one already (1 to 63 of
 * [a-z0-9_-]), else "h-" and the first 61 hex digits of its SHA-256, so
 * that a queue's URL (uppercase, '/', ':', any length) labels its
 * resources and is found again by the same function. */
void sr_gce_label_value(const char *s, char out[64]);

struct sr_gce;

struct sr_gce_opts {
	/* NULL: $CLOUDSDK_CORE_PROJECT, $GOOGLE_CLOUD_PROJECT, the
	 * credentials' project (a key's project_id, a user's
	 * quota_project_id), the metadata server's */
	const char *project;
	/* NULL: $SPOTRUN_GCE_ENDPOINT, else https://compute.googleapis.com;
	 * "http://127.0.0.1:PORT" in tests. Paths go below it as
	 * /compute/v1/projects/... */
	const char *endpoint;
	/* the credentials file; NULL: $GOOGLE_APPLICATION_CREDENTIALS, else
	 * ~/.config/gcloud/application_default_credentials.json (gce-auth.h) */
	const char *credentials;
	/* the metadata server; NULL: $GCE_METADATA_HOST (a host[:port], as
	 * Google's libraries read it), else http://metadata.google.internal */
	const char *metadata;
	int no_metadata;		/* never ask the metadata server */
	double timeout;			/* seconds per request; <= 0: 30 */
	double op_timeout;		/* seconds an operation is waited on; <= 0: 600 */
};

/* A client. Credentials are read now (a missing or bad file fails here,
 * naming it); no request is sent until the first call, except for the
 * project when only the metadata server knows it. 0, or -1 with err.
 * sr_gce_close(NULL) does nothing. */
int sr_gce_open(const struct sr_gce_opts *o, struct sr_gce **out, char *err);
void sr_gce_close(struct sr_gce *c);
/* The project the client works in. */
const char *sr_gce_project(const struct sr_gce *c);

/* The instance template of a pool's machines. */
struct sr_gce_template_spec {
	const char *name;		/* unique in the project: "spotrun-pool-POOL" */
	const char *pool, *queue;	/* the labels' sources (sr_gce_label_value) */
	const char *machine_type;	/* "g2-standard-4", "a2-highgpu-1g" */
	/* the GPUs to attach, for the types that take them separately
	 * ("nvidia-tesla-t4", N1 types); NULL or count 0: none (A2, A3, G2
	 * types have theirs built in) */
	const char *accelerator_type;
	unsigned accelerator_count;
	/* the boot image: a URL or partial URL ("projects/deeplearning-platform-
	 * release/global/images/family/common-cu124"); required */
	const char *image;
	unsigned disk_gb;		/* the boot disk; 0: the image's */
	const char *disk_type;		/* NULL: "pd-balanced" */
	const char *service_account;	/* an email; NULL: none (no token on the VM) */
	const void *user_data;		/* raw bytes (metadata, as text), or NULL */
	size_t user_data_len;
	/* the metadata key that carries user_data; NULL: "user-data" (what
	 * cloud-init's GCE datasource reads); "startup-script" for an image
	 * without cloud-init */
	const char *user_data_key;
	const char *network;		/* NULL: "global/networks/default" */
	int no_external_ip;		/* 1: no access config (a NAT'd network) */
};

/* instanceTemplates.insert, waited on: scheduling provisioningModel=SPOT,
 * instanceTerminationAction=DELETE (a preempted or powered-off machine is
 * gone, not stopped and billed for its disk), onHostMaintenance=TERMINATE
 * (GPU machines cannot migrate), automaticRestart false; a boot disk
 * deleted with the instance; the labels; the metadata spotrun-queue (the
 * URL) and the user-data. */
enum sr_gce_status sr_gce_create_template(struct sr_gce *c, const struct sr_gce_template_spec *s,
    char *err);

/* images.getFromFamily: the image a family URL ("projects/P/global/
 * images/family/F", or "https://.../projects/P/...") points at now, as
 * the partial URL "projects/P/global/images/NAME" into image (cap bytes),
 * so that every VM of a template boots the same image however the family
 * moves on. A URL naming an image, not a family, is copied as it is. */
enum sr_gce_status sr_gce_image_from_family(struct sr_gce *c, const char *family_url, char *image,
    size_t cap, char *err);

/* instanceTemplates.delete of name, waited on. Compute refuses while a
 * group uses it (resourceInUseByAnotherResource, SR_GCE_ERROR). */
enum sr_gce_status sr_gce_delete_template(struct sr_gce *c, const char *name, char *err);

struct sr_gce_group_spec {
	const char *name;		/* unique in the region: "spotrun-pool-POOL-REGION" */
	const char *region;		/* "us-central1" */
	const char *template_name;	/* the pool's template */
	const char *base_instance_name;	/* NULL: name; instances are BASE-xxxx */
	/* the region's zones to use, NULL-terminated; NULL or none: Compute
	 * chooses (up to three of the region's zones) */
	const char *const *zones;
	unsigned target;		/* instances to keep */
	/* distributionPolicy.targetShape; NULL: "ANY" (wherever there is
	 * capacity: what spot wants; "EVEN", "BALANCED", "ANY_SINGLE_ZONE") */
	const char *target_shape;
};

/* regionInstanceGroupManagers.insert, waited on: the group over the
 * zones, at target size, its instances from the template; with a
 * target shape other than EVEN, updatePolicy.instanceRedistributionType
 * NONE (Compute requires it). The group's capacity errors come later, in
 * its instances' lastAttempt (sr_gce_group_instances). */
enum sr_gce_status sr_gce_create_group(struct sr_gce *c, const struct sr_gce_group_spec *s,
    char *err);

/* advice.capacityHistory (v1: POST .../regions/REGION/advice/
 * capacityHistory) of Spot VMs of machine_type in zone (NULL: the whole
 * region): *rate gets the preemptionRate of the newest record of its
 * preemptionHistory (the greatest interval.endTime), -1 when it has
 * none. An account without the advice answers with an error (403):
 * SR_GCE_ERROR, as every failure; the caller takes it as no advice. */
enum sr_gce_status sr_gce_capacity_history(struct sr_gce *c, const char *region,
    const char *zone, const char *machine_type, double *rate, char *err);

/* regionInstanceGroupManagers.resize to target, waited on (Compute then
 * creates or deletes instances to meet it). */
enum sr_gce_status sr_gce_resize_group(struct sr_gce *c, const char *region, const char *name,
    unsigned target, char *err);

/* regionInstanceGroupManagers.delete, waited on: the group and its
 * instances. */
enum sr_gce_status sr_gce_delete_group(struct sr_gce *c, const char *region, const char *name,
    char *err);

/* instances.delete of a zone's instance, waited on (strays: instances of
 * the pool no group owns). */
enum sr_gce_status sr_gce_delete_instance(struct sr_gce *c, const char *zone, const char *name,
    char *err);

struct sr_gce_group {
	char name[64];
	char region[64];		/* "us-central1" */
	char template_name[64];		/* the last segment of instanceTemplate */
	unsigned target;		/* targetSize */
	/* currentActions: instances as they are and what is being done */
	unsigned none, creating, deleting, recreating, restarting, verifying;
	int stable;			/* status.isStable */
	char zones[8][64];		/* distributionPolicy, in its order */
	size_t nzones;
	char target_shape[32];
	char pool[64];			/* found by sr_gce_find_pool: the template's label */
};

/* An instance of a group (listManagedInstances): one that exists, or one
 * Compute is trying to create (no status, action CREATING, maybe an error). */
struct sr_gce_instance {
	char name[64];
	char id[32];			/* digits, "" before it exists */
	char zone[64];			/* "us-central1-a" */
	char status[24];		/* instanceStatus: "PROVISIONING", "RUNNING"...; "" */
	char action[32];		/* currentAction: "NONE", "CREATING", "DELETING"... */
	char machine_type[64];		/* found by sr_gce_find_pool only */
	char pool[64];			/* found by sr_gce_find_pool only: the label */
	char created[40];		/* sr_gce_find_pool, sr_gce_pool_instances:
					 * creationTimestamp (RFC 3339) */
	int spot;			/* those too: scheduling.provisioningModel SPOT */
	/* lastAttempt's first error ("" when none) and its class */
	char error_code[64];
	char error_message[256];
	enum sr_gce_status error_class;
};

struct sr_gce_template {
	char name[64];
	char machine_type[64];
	char pool[64];			/* its properties' spotrun-pool label */
};

/* regionInstanceGroupManagers.get: SR_GCE_ERROR with err ("get group
 * NAME: notFound: ...") when there is none. */
enum sr_gce_status sr_gce_get_group(struct sr_gce *c, const char *region, const char *name,
    struct sr_gce_group *g, char *err);

/* regionInstanceGroupManagers.listManagedInstances, every page: *out
 * (malloc'd, free()) holds *n of them, in Compute's order. */
enum sr_gce_status sr_gce_group_instances(struct sr_gce *c, const char *region, const char *name,
    struct sr_gce_instance **out, size_t *n, char *err);

/* The instances labelled with pool in region's zones, every page of
 * instances.aggregatedList (filter labels.spotrun-pool=VALUE, compared
 * again): name, id, zone, status, machine type, creation time and
 * whether spot, into *out (malloc'd, free()) and *n, in Compute's order. */
enum sr_gce_status sr_gce_pool_instances(struct sr_gce *c, const char *pool, const char *region,
    struct sr_gce_instance **out, size_t *n, char *err);

/* Everything of a pool that still costs or may launch. */
struct sr_gce_found {
	struct sr_gce_group *groups;	/* every region's */
	size_t ngroups;
	struct sr_gce_template *templates;
	size_t ntemplates;
	struct sr_gce_instance *instances;	/* labelled spotrun-pool, not being deleted */
	size_t ninstances;
};

/* Find a pool's resources, every page of each listing: the templates
 * (instanceTemplates.list, their labels compared here: the API has no
 * filter on them), the groups on them (instanceGroupManagers.aggregatedList),
 * the instances labelled (instances.aggregatedList, filter
 * labels.spotrun-pool=VALUE, compared again). On failure *f is empty. */
enum sr_gce_status sr_gce_find_pool(struct sr_gce *c, const char *pool, struct sr_gce_found *f,
    char *err);
void sr_gce_found_free(struct sr_gce_found *f);

/* `spotrun down`'s work: find the pool, delete its groups (with their
 * instances), delete the labelled instances left (strays: none a group
 * owns any more), delete its templates, each waited on. Every step is
 * tried; the first failure is returned. *gone, when not NULL, gets how
 * many resources were deleted. */
enum sr_gce_status sr_gce_delete_pool(struct sr_gce *c, const char *pool, size_t *gone,
    char *err);

#endif
