/*
 * arm.h: the Azure engine of `spotrun up` and `spotrun down` (issue 24): a
 * client of Azure Resource Manager's REST API (JSON, each call with its
 * provider's api-version) that keeps a pool's Spot VMs through a VM scale
 * set in Flexible orchestration mode (ARM keeps its capacity over the
 * zones given and replaces an evicted VM), in a resource group with a
 * virtual network of the pool's, and finds everything a pool owns by its
 * tags (spotrun:pool, spotrun:queue), so that `down` needs no local state.
 * doc/azure.md lists the calls and the role actions they need.
 *
 * Credentials: arm-auth.h. Requests go with common/http.c, retried (4
 * tries, backoff from 0.25 s) on a failed connection, a 5xx or 429; a
 * refused token (401) is fetched again once. Mutations are long-running:
 * the Azure-AsyncOperation header's URL (else Location's) is polled until
 * Succeeded, Failed or Canceled, or the client's op_timeout; a URL that is
 * not below the client's endpoint is refused (the token goes nowhere
 * else).
 *
 * Errors: every function returns SR_ARM_OK, or SR_ARM_CAPACITY when ARM
 * answered a code a caller fails over on (another region, size or zone:
 * SkuNotAvailable, OperationNotAllowed (a quota), ZonalAllocationFailed,
 * AllocationFailed, OverconstrainedAllocationRequest,
 * OverconstrainedZonalAllocationRequest), else SR_ARM_ERROR; err says
 * "VERB OBJECT: CODE: ARM's message" for an answer of ARM's (an error's
 * details are searched for a capacity code, which then names it), else
 * the reason (connection, credentials, an unreadable reply). The same
 * values as enum sr_gce_status's, so a caller's failover reads both.
 */
#ifndef SR_ARM_H
#define SR_ARM_H

#include <stddef.h>

enum sr_arm_status {
	SR_ARM_OK = 0,
	SR_ARM_ERROR = -1,		/* anything else: fix and retry, no failover */
	SR_ARM_CAPACITY = -2,		/* no capacity or quota for this request: fail over */
};

/* The tags every resource of a pool carries. */
#define SR_ARM_TAG_POOL		"spotrun:pool"
#define SR_ARM_TAG_QUEUE	"spotrun:queue"

/* The class of an ARM error code: SR_ARM_CAPACITY for the codes above,
 * SR_ARM_ERROR for any other, SR_ARM_OK for NULL or "". */
enum sr_arm_status sr_arm_classify(const char *code);

/* Read ARM's error document ({"error": {"code": ..., "message": ...,
 * "details": [{"code", "message"}...]}}, or an operation's status
 * document holding "error") from body: 0 with code and message filled
 * (the first capacity code among the error and its details, else the
 * error's own; cut to fit), or -1 when body is not one (both ""). */
int sr_arm_parse_error(const char *body, size_t len, char *code, size_t code_len,
    char *message, size_t message_len);

struct sr_arm;

struct sr_arm_opts {
	/* NULL: $AZURE_SUBSCRIPTION_ID, else the metadata service's (a VM's
	 * managed identity) */
	const char *subscription;
	/* NULL: $SPOTRUN_ARM_ENDPOINT, else https://management.azure.com;
	 * "http://127.0.0.1:PORT" in tests */
	const char *endpoint;
	const char *authority;		/* arm-auth.h */
	const char *metadata;		/* arm-auth.h */
	int no_metadata;
	double timeout;			/* seconds per request; <= 0: 30 */
	double op_timeout;		/* seconds an operation is followed; <= 0: 900 */
};

/* A client. Credentials are found now; no request is sent until the
 * first call, except for the subscription when only the metadata service
 * knows it. 0, or -1 with err ("open ARM client: ..."). sr_arm_close(NULL)
 * does nothing. */
int sr_arm_open(const struct sr_arm_opts *o, struct sr_arm **out, char *err);
void sr_arm_close(struct sr_arm *c);
const char *sr_arm_subscription(const struct sr_arm *c);

/* Resource groups (Microsoft.Resources, 2021-04-01). Make name in region,
 * tagged with pool and queue, unless it exists: *created says which (one
 * that exists keeps its location and tags). */
enum sr_arm_status sr_arm_ensure_group(struct sr_arm *c, const char *name, const char *region,
    const char *pool, const char *queue, int *created, char *err);
/* Delete a resource group and all it holds, followed to its end; one
 * already gone is no error. */
enum sr_arm_status sr_arm_delete_group(struct sr_arm *c, const char *name, char *err);

/* A virtual network (Microsoft.Network, 2023-09-01) name in group and
 * region, address space 10.64.0.0/16, one subnet "default" (10.64.0.0/18),
 * tagged; create-or-update, followed. Its subnet's resource id into
 * subnet_id (cap bytes). */
enum sr_arm_status sr_arm_ensure_vnet(struct sr_arm *c, const char *group, const char *name,
    const char *region, const char *pool, const char *queue, char *subnet_id, size_t cap,
    char *err);
enum sr_arm_status sr_arm_delete_vnet(struct sr_arm *c, const char *group, const char *name,
    char *err);

struct sr_arm_vmss_spec {
	const char *group, *name;	/* "spotrun-pool-POOL", "spotrun-pool-POOL-REGION" */
	const char *region;		/* "eastus" */
	const char *pool, *queue;	/* the tags */
	const char *vm_size;		/* sku.name: "Standard_NC4as_T4_v3" */
	const char *const *zones;	/* NULL-terminated ("1", "2"); NULL or none: regional */
	/* "PUBLISHER:OFFER:SKU:VERSION" (a marketplace image), or an image's
	 * resource id ("/subscriptions/..."); required */
	const char *image;
	unsigned capacity;
	double max_price;		/* $/h; <= 0: -1, up to the on-demand price */
	unsigned disk_gb;		/* the OS disk; 0: the image's */
	const char *identity;		/* a user-assigned identity's resource id, or NULL */
	const char *subnet_id;		/* sr_arm_ensure_vnet's */
	const char *ssh_key;		/* an OpenSSH public key line; required by ARM */
	const void *user_data;		/* raw bytes (osProfile.customData, base64'd here) */
	size_t user_data_len;
};

/* Microsoft.Compute/virtualMachineScaleSets (2024-03-01) create-or-update,
 * followed: orchestrationMode Flexible, platformFaultDomainCount 1,
 * priority Spot, evictionPolicy Delete, billingProfile.maxPrice, the OS
 * disk, NIC and public IP deleted with each VM, a public IP per VM (a
 * Flexible set's VMs have no default outbound access), the user-data as
 * customData. A capacity refusal comes from the call or its operation:
 * *made says whether ARM took the request (the set exists, whatever its
 * operation's end, and is to be deleted) or refused it at the call
 * (nothing made: SkuNotAvailable, OperationNotAllowed). */
enum sr_arm_status sr_arm_create_vmss(struct sr_arm *c, const struct sr_arm_vmss_spec *s,
    int *made, char *err);
/* PATCH sku.capacity, followed. */
enum sr_arm_status sr_arm_set_capacity(struct sr_arm *c, const char *group, const char *name,
    unsigned capacity, char *err);
/* DELETE with forceDeletion=true, followed: the set and its VMs (a
 * Flexible set's VMs go with it); one already gone is no error. */
enum sr_arm_status sr_arm_delete_vmss(struct sr_arm *c, const char *group, const char *name,
    char *err);

struct sr_arm_vmss {
	char name[80];
	char group[90];			/* its resource group, from its id */
	char region[64];		/* location */
	char vm_size[64];		/* sku.name */
	unsigned capacity;		/* sku.capacity */
	char state[32];			/* provisioningState */
	char pool[64];			/* the spotrun:pool tag */
};

/* GET a set: SR_ARM_ERROR with err ("get scale set NAME: ResourceNotFound:
 * ...") when there is none. */
enum sr_arm_status sr_arm_get_vmss(struct sr_arm *c, const char *group, const char *name,
    struct sr_arm_vmss *v, char *err);

/* A VM of a Flexible set. */
struct sr_arm_vm {
	char name[80];
	char state[32];			/* provisioningState: Creating, Succeeded, Deleting... */
	char vm_id[64];			/* properties.vmId: the id the VM's metadata
					 * service gives (a GUID) */
	char region[64];		/* location */
	char zone[16];			/* zones[0]; "": regional */
	char vm_size[64];		/* properties.hardwareProfile.vmSize */
	char created[48];		/* properties.timeCreated (RFC 3339) */
	int spot;			/* properties.priority Spot */
};

/* virtualMachines of the set (the list's $filter on
 * 'virtualMachineScaleSet/id'), every page: *out (malloc'd, free()). */
enum sr_arm_status sr_arm_vmss_vms(struct sr_arm *c, const char *group, const char *name,
    struct sr_arm_vm **out, size_t *n, char *err);

/* A pool's resources by their spotrun:pool tag. */
struct sr_arm_found {
	struct sr_arm_vmss *sets;	/* every region's */
	size_t nsets;
	char (*vnets)[2][90];		/* [i][0]: group, [i][1]: name */
	size_t nvnets;
	char (*groups)[90];		/* resource groups tagged: up made them */
	size_t ngroups;
};

/* Find a pool's resources, every page of each listing: the tagged
 * resource groups (their list's tag filter), the scale sets and virtual
 * networks of the subscription with the tag (compared here). On failure
 * *f is empty. */
enum sr_arm_status sr_arm_find_pool(struct sr_arm *c, const char *pool, struct sr_arm_found *f,
    char *err);
void sr_arm_found_free(struct sr_arm_found *f);

/* `spotrun down`'s work: find the pool, delete its scale sets (their VMs
 * with them), its virtual networks, then the resource groups up made,
 * each followed. Every step is tried; the first failure is returned.
 * *gone, when not NULL, gets how many resources were deleted. */
enum sr_arm_status sr_arm_delete_pool(struct sr_arm *c, const char *pool, size_t *gone,
    char *err);

#endif
