/*
 * ec2.h: the AWS engine of `spotrun up` and `spotrun down` (issue 24): a
 * client of EC2's Query API that keeps a pool's spot machines through an
 * EC2 Fleet of type `maintain` (EC2 keeps the target and replaces
 * interrupted instances) on a launch template holding the user-data, and
 * finds everything a pool owns by its tags, so that `down` needs no local
 * state. doc/design.md, "Provisioning", says why a Fleet and not an Auto
 * Scaling group.
 *
 * Every resource is tagged spotrun:pool=POOL and spotrun:queue=QUEUE (the
 * template itself, and through it every instance and volume it launches;
 * the fleet). Requests are signed with store/awsauth.h's credentials chain
 * and sent with common/http.c, retried (up to 4 tries, backoff from 0.25 s)
 * on a failed connection, a 5xx, or a throttling or internal error code.
 *
 * Errors: every function returns SR_EC2_OK, or SR_EC2_CAPACITY when AWS
 * answered one of the codes a caller fails over on (another zone, type or
 * cloud: InsufficientInstanceCapacity, MaxSpotInstanceCountExceeded,
 * SpotMaxPriceTooLow, Unsupported), else SR_EC2_ERROR; err says
 * "VERB OBJECT: CODE: AWS's message" for an answer of AWS's ("create fleet
 * for pool p1: InsufficientInstanceCapacity: ..."), else the reason
 * (connection, credentials, an unreadable reply). The class comes from the
 * code (sr_ec2_classify), never from the message's text.
 */
#ifndef SR_EC2_H
#define SR_EC2_H

#include <stddef.h>

enum sr_ec2_status {
	SR_EC2_OK = 0,
	SR_EC2_ERROR = -1,		/* anything else: fix and retry, no failover */
	SR_EC2_CAPACITY = -2,		/* no capacity for this request: fail over */
};

/* The class of an AWS error code: SR_EC2_CAPACITY for the capacity codes
 * above, SR_EC2_ERROR for any other, SR_EC2_OK for NULL or "". */
enum sr_ec2_status sr_ec2_classify(const char *code);

/* Read an EC2 error document (<Response><Errors><Error><Code>..</Code>
 * <Message>..</Message>, the first error) from body: 0 with code and
 * message filled (cut to fit), or -1 when body is not one (both ""). */
int sr_ec2_parse_error(const char *body, size_t len, char *code, size_t code_len,
    char *message, size_t message_len);

struct sr_ec2;

struct sr_ec2_opts {
	const char *region;		/* NULL: AWS_REGION, AWS_DEFAULT_REGION, the profile's, us-east-1 */
	/* NULL: $SPOTRUN_EC2_ENDPOINT, else $AWS_ENDPOINT_URL_EC2, else
	 * $AWS_ENDPOINT_URL, else https://ec2.REGION.amazonaws.com;
	 * "http://127.0.0.1:PORT" in tests */
	const char *endpoint;
	/* SSM's (sr_ec2_ssm_parameter); NULL: $AWS_ENDPOINT_URL_SSM, else
	 * $AWS_ENDPOINT_URL, else https://ssm.REGION.amazonaws.com */
	const char *ssm_endpoint;
	const char *profile;		/* NULL: $AWS_PROFILE, else "default" */
	int no_imds;			/* never ask the instance role for keys */
	double timeout;			/* seconds per request; <= 0: 30 */
};

/* A client. Nothing is sent until the first call. 0, or -1 with err (a bad
 * endpoint, settings that do not read). sr_ec2_close(NULL) does nothing. */
int sr_ec2_open(const struct sr_ec2_opts *o, struct sr_ec2 **out, char *err);
void sr_ec2_close(struct sr_ec2 *c);

/* SSM GetParameter of name ("/aws/service/deeplearning/ami/..."), in the
 * client's region, on SSM's endpoint (the JSON protocol, signed as the
 * rest): 0 with its value in value (cap bytes, cut to fit), or
 * SR_EC2_ERROR with err ("read SSM parameter NAME: ParameterNotFound:
 * ..."). Retried as EC2's calls are. Where AWS's public parameters hold
 * the current image ids. */
enum sr_ec2_status sr_ec2_ssm_parameter(struct sr_ec2 *c, const char *name, char *value,
    size_t cap, char *err);

/* The launch template of a pool's machines. */
struct sr_ec2_template_spec {
	const char *name;		/* unique in the region: "spotrun-POOL" */
	const char *pool, *queue;	/* the tags' values */
	const char *image_id;		/* "ami-..." */
	const void *user_data;		/* raw bytes (sent base64), or NULL */
	size_t user_data_len;
	const char *instance_profile;	/* a name, or an ARN ("arn:..."); NULL: none */
	const char *root_device;	/* NULL: "/dev/sda1" */
	unsigned volume_gb;		/* root volume, gp3, deleted on termination; 0: the AMI's */
	const char *key_name;		/* NULL: none */
	const char *const *security_groups;	/* ids, NULL-terminated; NULL: the default */
};

/* CreateLaunchTemplate with InstanceInitiatedShutdownBehavior=terminate
 * (a poweroff ends the machine and its billing), the template tagged and
 * its TagSpecifications tagging every instance and volume launched from it.
 * id (64 bytes) gets "lt-...". */
enum sr_ec2_status sr_ec2_create_template(struct sr_ec2 *c, const struct sr_ec2_template_spec *s,
    char id[64], char *err);

/* DeleteLaunchTemplate by id. */
enum sr_ec2_status sr_ec2_delete_template(struct sr_ec2 *c, const char *id, char *err);

/* One place a fleet may launch: an instance type in a subnet (of a VPC's
 * zone) or, without a subnet, a zone of the default VPC. */
struct sr_ec2_override {
	const char *instance_type;	/* "g5.xlarge" */
	const char *subnet_id;		/* NULL: none */
	const char *zone;		/* NULL: none ("us-east-1a") */
};

struct sr_ec2_fleet_spec {
	const char *pool, *queue;	/* the tags' values */
	const char *template_id;	/* "lt-...", version $Latest */
	unsigned target;		/* spot instances to keep */
	const char *max_total_price;	/* USD an hour for the whole fleet ("12.50"); NULL: none */
	const struct sr_ec2_override *overrides;	/* in order of preference: Priority 1, 2... */
	size_t noverrides;		/* 1 or more */
	/* CreateFleet's ClientToken: the same token makes a retried create
	 * return the first fleet, not a second; NULL: none */
	const char *client_token;
};

/* CreateFleet of type maintain, spot, price-capacity-optimized, with
 * ReplaceUnhealthyInstances and the fleet tagged. id (64 bytes) gets
 * "fleet-...". A maintain fleet reports capacity errors later, in its
 * description (struct sr_ec2_fleet's error). */
enum sr_ec2_status sr_ec2_create_fleet(struct sr_ec2 *c, const struct sr_ec2_fleet_spec *s,
    char id[64], char *err);

/* ModifyFleet: the total target capacity of fleet id becomes target (EC2
 * launches or, with the default excess policy, terminates to meet it). */
enum sr_ec2_status sr_ec2_modify_fleet(struct sr_ec2 *c, const char *id, unsigned target,
    char *err);

/* DeleteFleets with TerminateInstances=true: the fleets and their
 * instances (n of ids, at most 25 a call as EC2 allows; more are sent in
 * several). A fleet EC2 could not delete fails the call with its code. */
enum sr_ec2_status sr_ec2_delete_fleets(struct sr_ec2 *c, const char *const *ids, size_t n,
    char *err);

/* TerminateInstances (strays: instances of the pool no fleet owns). */
enum sr_ec2_status sr_ec2_terminate(struct sr_ec2 *c, const char *const *ids, size_t n,
    char *err);

struct sr_ec2_fleet {
	char id[64];
	char state[32];			/* "submitted", "active", "modifying", "deleted_terminating"... */
	char type[16];			/* "maintain" */
	unsigned target;		/* total target capacity */
	double fulfilled;		/* fulfilled capacity */
	char pool[128], queue[512];	/* its tags ("" when absent) */
	/* the last error EC2 reports launching for it ("" when none), and
	 * its class: SR_EC2_CAPACITY for the capacity codes */
	char error_code[64];
	char error_message[256];
	enum sr_ec2_status error_class;
	/* the override that error was for ("" when EC2 does not say) */
	char error_type[32];		/* "g5.xlarge" */
	char error_zone[32];		/* "us-east-1a" */
};

struct sr_ec2_instance {
	char id[32];			/* "i-..." */
	char type[32];			/* "g5.xlarge" */
	char zone[32];			/* "us-east-1a" */
	char state[24];			/* "pending", "running", "shutting-down", "terminated"... */
	char launch_time[32];		/* ISO 8601, as EC2 says it */
	char lifecycle[16];		/* "spot", or "" for on-demand */
	char pool[128], queue[512];	/* its tags ("" when absent) */
};

struct sr_ec2_template {
	char id[64];
	char name[128];
	char pool[128], queue[512];
};

/* DescribeFleets of one fleet: 0 with *f filled, SR_EC2_ERROR with err
 * ("describe fleet ID: not found") when EC2 does not know it. */
enum sr_ec2_status sr_ec2_describe_fleet(struct sr_ec2 *c, const char *id,
    struct sr_ec2_fleet *f, char *err);

/* The fleet's active instances (DescribeFleetInstances), described
 * (DescribeInstances: state, type, zone, launch time, tags): *out
 * (malloc'd, free()) holds *n of them, in EC2's order. */
enum sr_ec2_status sr_ec2_fleet_instances(struct sr_ec2 *c, const char *id,
    struct sr_ec2_instance **out, size_t *n, char *err);

/* The instances tagged spotrun:pool=POOL that have not ended
 * (DescribeInstances filtered by the tag and the live states): *out
 * (malloc'd, free()) holds *n of them, in EC2's order. */
enum sr_ec2_status sr_ec2_pool_instances(struct sr_ec2 *c, const char *pool,
    struct sr_ec2_instance **out, size_t *n, char *err);

/* One price of DescribeSpotPriceHistory: what a spot instance of type in
 * zone cost an hour from timestamp on, until the next change. */
struct sr_ec2_spot_price {
	char type[32];
	char zone[32];
	char product[64];		/* "Linux/UNIX", "Linux/UNIX (Amazon VPC)"... */
	char timestamp[40];		/* ISO 8601, as EC2 says it */
	double price;			/* dollars an hour */
};

/* DescribeSpotPriceHistory of type in zone for product "Linux/UNIX",
 * every page, from start to end (ISO 8601, "2025-01-02T03:04:05Z"): the
 * changes in between and, as EC2 answers, the last one before start (the
 * price in effect at start). *out (malloc'd, free()) holds *n of them, in
 * EC2's order. */
enum sr_ec2_status sr_ec2_spot_price_history(struct sr_ec2 *c, const char *type, const char *zone,
    const char *start, const char *end, struct sr_ec2_spot_price **out, size_t *n, char *err);

/* Everything tagged spotrun:pool=POOL that still costs or may launch. */
struct sr_ec2_found {
	struct sr_ec2_fleet *fleets;	/* state not deleted* nor failed */
	size_t nfleets;
	struct sr_ec2_template *templates;
	size_t ntemplates;
	struct sr_ec2_instance *instances;	/* state not terminated */
	size_t ninstances;
};

/* Find a pool's resources by tag, every page of each listing (EC2 has no
 * tag filter for fleets: they are listed and their tags compared here).
 * On failure *f is empty. */
enum sr_ec2_status sr_ec2_find_pool(struct sr_ec2 *c, const char *pool, struct sr_ec2_found *f,
    char *err);
void sr_ec2_found_free(struct sr_ec2_found *f);

/* `spotrun down`'s work: find the pool by tag, delete its fleets with
 * their instances, terminate the instances left (strays), delete its
 * templates. Every step is tried; the first failure is returned. *gone,
 * when not NULL, gets how many resources were deleted or terminated. */
enum sr_ec2_status sr_ec2_delete_pool(struct sr_ec2 *c, const char *pool, size_t *gone,
    char *err);

#endif
