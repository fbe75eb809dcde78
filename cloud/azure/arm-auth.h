/*
 * arm-auth.h: the Azure engine's access tokens for Azure Resource Manager
 * (resource https://management.azure.com/), found as the Azure CLI's
 * libraries (azure-identity's EnvironmentCredential, then
 * ManagedIdentityCredential) find them, first found wins:
 *
 *   1. a service principal: AZURE_TENANT_ID, AZURE_CLIENT_ID and
 *      AZURE_CLIENT_SECRET, a client-credentials grant POSTed to
 *      AUTHORITY/TENANT/oauth2/v2.0/token (scope
 *      https://management.azure.com/.default); AUTHORITY is the caller's,
 *      else $AZURE_AUTHORITY_HOST, else https://login.microsoftonline.com.
 *      A secret set without the tenant or the client is an error naming
 *      the one missing, not a fall-through;
 *   2. the Azure CLI's login, when its azureProfile.json (in
 *      $AZURE_CONFIG_DIR, else $HOME/.azure) lists a subscription: the
 *      token of `az account get-access-token --resource ARM [--subscription
 *      S] --output json`, as azure-identity's AzureCliCredential asks it
 *      (az refreshes its own tokens; spotrun reads none of its files but
 *      that list). Before the managed identity: a person who ran
 *      `az login` means that identity; a VM made by `spotrun up` has none;
 *   3. the VM's managed identity: GET METADATA/metadata/identity/oauth2/
 *      token?api-version=2018-02-01&resource=... with "Metadata: true" (a
 *      user-assigned identity by AZURE_CLIENT_ID); METADATA is the
 *      caller's, else $SPOTRUN_AZURE_ENDPOINT (as the azure provider and
 *      the az:// store read it), else http://169.254.169.254; 1 s to
 *      connect. Not asked when the caller forbids it or
 *      SPOTRUN_AZURE_METADATA_DISABLED=true (common/imds.h), the
 *      project's rule for every metadata address.
 *
 * A token is kept until 5 minutes before its expires_in runs out, or
 * until ARM refuses it (sr_arm_auth_reject). Errors name the variable,
 * never a secret's value.
 */
#ifndef SR_ARM_AUTH_H
#define SR_ARM_AUTH_H

#include <stddef.h>

#define SR_ARM_RESOURCE		"https://management.azure.com/"
#define SR_ARM_AUTHORITY	"https://login.microsoftonline.com"
#define SR_ARM_METADATA		"http://169.254.169.254"

struct sr_arm_auth;

struct sr_arm_auth_opts {
	const char *authority;		/* NULL: as above */
	const char *metadata;		/* NULL: as above */
	int no_metadata;
	double timeout;			/* seconds per token request; <= 0: 30 */
	const char *subscription;	/* the Azure CLI's --subscription; NULL: its default */
};

/* Find the credentials (the environment read now). 0, or -1 with err
 * ("find Azure credentials: ..."). */
int sr_arm_auth_new(const struct sr_arm_auth_opts *o, struct sr_arm_auth **out, char *err);
void sr_arm_auth_free(struct sr_arm_auth *a);

/* A valid access token into tok (len bytes), fetched when none is kept or
 * it is near its expiry. 0, or -1 with err ("get token from SOURCE:
 * ..."). Thread-safe. */
int sr_arm_auth_token(struct sr_arm_auth *a, char *tok, size_t len, char *err);
/* Forget the kept token (ARM answered 401). */
void sr_arm_auth_reject(struct sr_arm_auth *a);
/* Where the token comes from: "service principal CLIENT (tenant T)",
 * "the Azure CLI's login (az account get-access-token, DIR)", "managed
 * identity at URL". */
const char *sr_arm_auth_source(const struct sr_arm_auth *a);
/* The subscription the credentials name: the Azure CLI's (the one its
 * token was got for: its default, or the --subscription given), or the
 * VM's from the metadata service (GET METADATA/metadata/instance/compute/
 * subscriptionId?api-version=2021-02-01&format=text): 0 with out filled,
 * or -1 with err; -1 at once for a service principal. */
int sr_arm_auth_subscription(struct sr_arm_auth *a, char *out, size_t len, char *err);

#endif
