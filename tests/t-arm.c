/*
 * t-arm.c: the Azure engine of `spotrun up` and `down` (cloud/azure/arm.h)
 * and its credentials (arm-auth.h). Offline: the classes of ARM's error
 * codes, ARM's error documents (a capacity code found in the details), the
 * credentials' errors. Against tests/armemu.py (python3 of the PATH, on
 * loopback, lists paged one item a page): a service principal's secret
 * refused and accepted, the managed identity's token and subscription
 * from the metadata service (not asked when disabled); a resource group
 * made once, a network, a Flexible set of Spot VMs as ARM keeps it (its
 * exact settings read back from the emulator), its capacity set, its VMs
 * listed; capacity errors of the call (SkuNotAvailable) and of the
 * operation (ZonalAllocationFailed) classified, another error not; a
 * refused token fetched again once; 503s tried again, a 403 not; the pool
 * found by its tags and deleted, nothing left; operations followed.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "tap.h"
#include "arm-auth.h"
#include "arm.h"
#include "http.h"
#include "store-util.h"
#include "util.h"

#define SUB	"00000000-1111-2222-3333-444444444444"
#define TENANT	"tenant-1"
#define CLIENT	"11111111-2222-3333-4444-555555555555"
#define SECRET	"s3cr&t=value"

static char dir[4096];
static pid_t emu_pid;
static int emu_port;
static char ep[64];

static void
cleanup(void)
{
	char *cmd;

	if (emu_pid > 0) {
		kill(emu_pid, SIGTERM);
		waitpid(emu_pid, NULL, 0);
	}
	if (dir[0] != '\0') {
		cmd = sr_asprintf("rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# cleanup: %s failed\n", cmd);
		free(cmd);
	}
}

static int
log_count(const char *needle)
{
	char *p = sr_asprintf("%s/emu.log", dir), *t, *s, e[SR_ERRMAX];
	size_t len;
	int n = 0;

	if (sr_read_file(p, 1 << 22, &t, &len, e) == -1)
		t = sr_strdup("");
	for (s = t; (s = strstr(s, needle)) != NULL; s += strlen(needle))
		n++;
	free(t);
	free(p);
	return n;
}

static long
hook(const char *method, const char *path, json_t **doc)
{
	struct sr_http_req rq;
	struct sr_http_resp r;
	char url[512], e[SR_ERRMAX];
	json_error_t je;
	long st;

	snprintf(url, sizeof url, "%s%s", ep, path);
	memset(&rq, 0, sizeof rq);
	rq.method = method;
	rq.url = url;
	rq.connect_timeout = 5;
	rq.timeout = 10;
	rq.body_max = 1 << 22;
	if (sr_http_do(&rq, &r, e) == -1)
		sr_fatal("%s", e);
	st = r.status;
	if (doc != NULL && (*doc = json_loadb(r.body, r.len, 0, &je)) == NULL)
		sr_fatal("%s: not JSON: %s", path, je.text);
	sr_http_resp_free(&r);
	return st;
}

/* How many of the dump's list what. */
static size_t
dump_count(const char *what)
{
	json_t *d;
	size_t n;

	hook("GET", "/emu/dump", &d);
	n = json_array_size(json_object_get(d, what));
	json_decref(d);
	return n;
}

static struct sr_arm *
client(const char *sub, char *err)
{
	struct sr_arm_opts o;
	struct sr_arm *c = NULL;

	memset(&o, 0, sizeof o);
	o.endpoint = ep;
	o.subscription = sub;
	o.authority = ep;
	o.metadata = ep;
	o.timeout = 10;
	if (sr_arm_open(&o, &c, err) == -1)
		return NULL;
	return c;
}

/* The Azure CLI's login found by its azureProfile.json (test t22 runs the
 * real az against armemu.py): an empty list is no login, one with a byte
 * order mark (as az writes it) is; az not on PATH is said at the token. */
static void
test_cli_profile(void)
{
	struct sr_arm_auth_opts ao;
	struct sr_arm_auth *a = NULL;
	char e[SR_ERRMAX], tok[64], *az = sr_asprintf("%s/azcfg", dir), *prof;
	char *path = getenv("PATH") != NULL ? sr_strdup(getenv("PATH")) : NULL;

	memset(&ao, 0, sizeof ao);
	ao.timeout = 10;
	if (sr_mkdirs(az, 0700, e) == -1)
		sr_fatal("%s", e);
	setenv("AZURE_CONFIG_DIR", az, 1);
	prof = sr_asprintf("%s/azureProfile.json", az);
	if (sr_write_file_atomic(prof, "\xef\xbb\xbf{\"installationId\": \"x\", "
	    "\"subscriptions\": []}", 47, 0, e) == -1)
		sr_fatal("%s", e);
	is_int(sr_arm_auth_new(&ao, &a, e), -1, "the Azure CLI logged out (no subscription "
	    "listed): not its login");
	ok(strstr(e, "run `az login` (the Azure CLI's login, found in ") != NULL,
	    "... the error says to run az login (%s)", e);
	sr_arm_auth_free(a);
	a = NULL;
	if (sr_write_file_atomic(prof, "\xef\xbb\xbf{\"subscriptions\": [{\"id\": "
	    "\"" SUB "\", \"isDefault\": true}]}", 89, 0, e) == -1)
		sr_fatal("%s", e);
	is_int(sr_arm_auth_new(&ao, &a, e), 0, "logged in (a subscription listed, after a "
	    "byte order mark): its login (%s)", e);
	if (a != NULL) {
		char want[4200];

		snprintf(want, sizeof want, "the Azure CLI's login (az account get-access-token, "
		    "%s)", az);
		is_str(sr_arm_auth_source(a), want, "... said as the source");
		setenv("PATH", dir, 1);
		is_int(sr_arm_auth_token(a, tok, sizeof tok, e), -1, "az not on PATH: no token");
		snprintf(want, sizeof want, "get token from the Azure CLI's login (az account "
		    "get-access-token, %s): run az: not found (not on PATH)", az);
		is_str(e, want, "... said");
		if (path != NULL)
			setenv("PATH", path, 1);
	}
	sr_arm_auth_free(a);
	ao.subscription = "not a guid";
	a = NULL;
	is_int(sr_arm_auth_new(&ao, &a, e), -1, "a subscription for az that is no id: refused");
	is_str(e, "find Azure credentials: subscription \"not a guid\" is not a subscription id "
	    "(a GUID)", "... said");
	sr_arm_auth_free(a);
	unlink(prof);
	free(prof);
	free(path);
	free(az);
}

static void
test_offline(void)
{
	char code[64], msg[256], e[SR_ERRMAX];
	const char *nested = "{\"error\":{\"code\":\"OverconstrainedAllocationRequest\",\"message\":"
	    "\"outer\",\"details\":[{\"code\":\"Conflict\",\"message\":\"c\"}]}}";
	const char *deep = "{\"status\":\"Failed\",\"error\":{\"code\":\"DeploymentFailed\","
	    "\"message\":\"outer\",\"details\":[{\"code\":\"Conflict\",\"message\":\"c\","
	    "\"details\":[{\"code\":\"ZonalAllocationFailed\",\"message\":\"inner\"}]}]}}";
	struct sr_arm *c;

	is_int(sr_arm_classify("SkuNotAvailable"), SR_ARM_CAPACITY, "SkuNotAvailable: capacity");
	is_int(sr_arm_classify("OperationNotAllowed"), SR_ARM_CAPACITY, "OperationNotAllowed: capacity");
	is_int(sr_arm_classify("ZonalAllocationFailed"), SR_ARM_CAPACITY, "ZonalAllocationFailed: capacity");
	is_int(sr_arm_classify("AllocationFailed"), SR_ARM_CAPACITY, "AllocationFailed: capacity");
	is_int(sr_arm_classify("InvalidParameter"), SR_ARM_ERROR, "InvalidParameter: an error");
	is_int(sr_arm_classify("skunotavailable"), SR_ARM_ERROR, "codes compare exactly");
	is_int(sr_arm_classify(""), SR_ARM_OK, "no code: OK");
	ok(sr_arm_parse_error(nested, strlen(nested), code, sizeof code, msg, sizeof msg) == 0 &&
	    strcmp(code, "OverconstrainedAllocationRequest") == 0 && strcmp(msg, "outer") == 0,
	    "an error document: its code and message");
	ok(sr_arm_parse_error(deep, strlen(deep), code, sizeof code, msg, sizeof msg) == 0 &&
	    strcmp(code, "ZonalAllocationFailed") == 0 && strcmp(msg, "inner") == 0,
	    "an operation's error: the capacity code nested in its details");
	ok(sr_arm_parse_error("<html>", 6, code, sizeof code, msg, sizeof msg) == -1 &&
	    code[0] == '\0', "not an error document: -1");
	/* credentials */
	setenv("AZURE_CLIENT_SECRET", SECRET, 1);
	unsetenv("AZURE_TENANT_ID");
	setenv("AZURE_CLIENT_ID", CLIENT, 1);
	c = client(SUB, e);
	is_str(c == NULL ? e : "", "open ARM client: find Azure credentials: AZURE_CLIENT_SECRET "
	    "is set without AZURE_TENANT_ID: set it too (a service principal's tenant and "
	    "application id)", "a secret without its tenant: said, no fall-through");
	sr_arm_close(c);
	unsetenv("AZURE_CLIENT_SECRET");
	unsetenv("AZURE_CLIENT_ID");
	setenv("SPOTRUN_AZURE_METADATA_DISABLED", "true", 1);
	setenv("AZURE_CONFIG_DIR", "/nonexistent/t-arm/azure", 1);
	c = client(SUB, e);
	is_str(c == NULL ? e : "", "open ARM client: find Azure credentials: none: set "
	    "AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (a service principal), run "
	    "`az login` (the Azure CLI's login, found in /nonexistent/t-arm/azure), or run on an "
	    "Azure VM with a managed identity (the metadata service is not asked: "
	    "SPOTRUN_AZURE_METADATA_DISABLED=true)", "no credentials, metadata disabled: said");
	sr_arm_close(c);
	test_cli_profile();
	unsetenv("SPOTRUN_AZURE_METADATA_DISABLED");
	unsetenv("AZURE_CONFIG_DIR");
	c = client("not-a-guid!", e);
	ok(c == NULL && strstr(e, "subscription \"not-a-guid!\" is not a subscription id") != NULL,
	    "a bad subscription: said");
	sr_arm_close(c);
}

static void
principal(const char *secret)
{
	setenv("AZURE_TENANT_ID", TENANT, 1);
	setenv("AZURE_CLIENT_ID", CLIENT, 1);
	setenv("AZURE_CLIENT_SECRET", secret, 1);
}

static void
test_identity(void)
{
	struct sr_arm *c;
	struct sr_arm_found f;
	char e[SR_ERRMAX];

	unsetenv("AZURE_TENANT_ID");
	unsetenv("AZURE_CLIENT_ID");
	unsetenv("AZURE_CLIENT_SECRET");
	c = client(NULL, e);
	ok(c != NULL, "managed identity: a client");
	if (c == NULL)
		return;
	is_str(sr_arm_subscription(c), SUB, "the subscription from the metadata service");
	is_int(sr_arm_find_pool(c, "nothing", &f, e), SR_ARM_OK, "a call with its token");
	is_int(log_count("token managed-identity"), 1, "the token came from the metadata service");
	sr_arm_found_free(&f);
	sr_arm_close(c);
}

static void
test_engine(void)
{
	struct sr_arm *c;
	struct sr_arm_vmss v;
	struct sr_arm_vm *vms = NULL;
	struct sr_arm_found f;
	struct sr_arm_vmss_spec s;
	const char *zones[] = { "1", "2", NULL };
	char e[SR_ERRMAX], subnet[512], want[1024];
	json_t *d, *set, *vmp;
	size_t n = 0, gone = 0;
	int created = -1, grants, made = -1;
	enum sr_arm_status st;

	principal("wrong");
	c = client(SUB, e);
	ok(c != NULL, "a client: no request yet");
	st = sr_arm_ensure_group(c, "rg1", "eastus", "p1", "q", &created, e);
	snprintf(want, sizeof want, "create resource group rg1: get token from service principal "
	    CLIENT " (tenant " TENANT "): HTTP 401: invalid_client: AADSTS7000215: Invalid client "
	    "secret provided.");
	ok(st == SR_ARM_ERROR && strncmp(e, want, strlen(want)) == 0,
	    "a wrong secret: refused, Entra's code and message said");
	sr_arm_close(c);

	principal(SECRET);
	c = client(SUB, e);
	ok(c != NULL, "service principal: a client");
	if (c == NULL)
		return;
	is_int(sr_arm_ensure_group(c, "rg1", "eastus", "p1", "az://a/q", &created, e), SR_ARM_OK,
	    "resource group made");
	is_int(created, 1, "... and said so");
	is_int(log_count("token grant=client_credentials tenant=" TENANT " client=" CLIENT), 1,
	    "the token from the client-credentials grant (the secret checked)");
	is_int(sr_arm_ensure_group(c, "rg1", "eastus", "p1", "az://a/q", &created, e), SR_ARM_OK,
	    "resource group again");
	is_int(created, 0, "... found, not made");
	is_int(sr_arm_ensure_vnet(c, "rg1", "vn1", "eastus", "p1", "az://a/q", subnet,
	    sizeof subnet, e), SR_ARM_OK, "network made, followed to Succeeded");
	is_str(subnet, "/subscriptions/" SUB "/resourceGroups/rg1/providers/Microsoft.Network/"
	    "virtualNetworks/vn1/subnets/default", "its subnet's id");

	memset(&s, 0, sizeof s);
	s.group = "rg1";
	s.name = "set1";
	s.region = "eastus";
	s.pool = "p1";
	s.queue = "az://a/q";
	s.vm_size = "Standard_NC4as_T4_v3";
	s.zones = zones;
	s.image = "microsoft-dsvm:ubuntu-hpc:2204:latest";
	s.capacity = 2;
	s.disk_gb = 100;
	s.subnet_id = subnet;
	s.user_data = "#cloud-config\n";
	s.user_data_len = 14;
	st = sr_arm_create_vmss(c, &s, &made, e);
	is_int(st, SR_ARM_OK, "scale set made, its operation followed");
	is_int(made, 1, "... made");
	is_int(log_count("/operations/"), 4, "two operations polled, each InProgress once, "
	    "then Succeeded");
	hook("GET", "/emu/dump", &d);
	set = json_array_get(json_object_get(d, "sets"), 0);
	vmp = json_object_get(json_object_get(set, "properties"), "virtualMachineProfile");
	{
		char *got = sr_asprintf("%s %s %s %s %g %s %lld %s %s %s",
		    json_string_value(json_object_get(json_object_get(set, "properties"),
		    "orchestrationMode")),
		    json_string_value(json_object_get(vmp, "priority")),
		    json_string_value(json_object_get(vmp, "evictionPolicy")),
		    json_string_value(json_object_get(json_object_get(set, "sku"), "name")),
		    json_number_value(json_object_get(json_object_get(vmp, "billingProfile"),
		    "maxPrice")),
		    json_string_value(json_object_get(json_object_get(json_object_get(vmp,
		    "storageProfile"), "imageReference"), "offer")),
		    (long long)json_integer_value(json_object_get(json_object_get(set, "sku"),
		    "capacity")),
		    json_string_value(json_object_get(json_object_get(vmp, "osProfile"),
		    "customData")),
		    json_string_value(json_object_get(json_object_get(set, "tags"), "spotrun:pool")),
		    json_string_value(json_object_get(json_object_get(set, "tags"), "spotrun:queue")));

		is_str(got, "Flexible Spot Delete Standard_NC4as_T4_v3 -1 ubuntu-hpc 2 "
		    "I2Nsb3VkLWNvbmZpZwo= p1 az://a/q", "the set: Flexible, Spot, Delete, its size, "
		    "maxPrice -1, the image, capacity, customData the user-data in base64, tags");
		free(got);
	}
	json_decref(d);
	is_int(dump_count("vms"), 2, "two VMs");
	is_int(sr_arm_vmss_vms(c, "rg1", "set1", &vms, &n, e), SR_ARM_OK, "the set's VMs listed "
	    "(paged)");
	ok(n == 2 && strncmp(vms[0].name, "set1_", 5) == 0 && strcmp(vms[1].state, "Succeeded") == 0,
	    "... two, Succeeded");
	{
		json_t *d2 = NULL, *dv, *p0;
		char *got, *want_s;
		size_t k;

		hook("GET", "/emu/dump", &d2);
		dv = json_object_get(d2, "vms");

		for (k = 0; n == 2 && k < json_array_size(dv); k++) {
			p0 = json_object_get(json_array_get(dv, k), "properties");
			if (strcmp(json_string_value(json_object_get(json_array_get(dv, k), "name")),
			    vms[0].name) == 0)
				break;
		}
		p0 = n == 2 && k < json_array_size(dv) ? json_object_get(json_array_get(dv, k),
		    "properties") : NULL;
		got = sr_asprintf("%s %s %s %s %s %d %s|%s %s", n == 2 ? vms[0].vm_id : "",
		    n == 2 ? vms[0].created : "", n == 2 ? vms[0].region : "",
		    n == 2 ? vms[0].zone : "", n == 2 ? vms[0].vm_size : "", n == 2 && vms[0].spot,
		    n == 2 ? vms[1].zone : "", n == 2 ? vms[0].vm_id : "", n == 2 ? vms[1].vm_id : "");
		want_s = sr_asprintf("%s %s eastus 1 Standard_NC4as_T4_v3 1 2|%s %s",
		    json_string_value(json_object_get(p0, "vmId")),
		    json_string_value(json_object_get(p0, "timeCreated")),
		    n == 2 ? vms[0].vm_id : "", n == 2 ? vms[1].vm_id : "");
		is_str(got, want_s, "... each with its vmId, timeCreated, location, zone (one a "
		    "zone), size and Spot priority, as ARM wrote them");
		ok(n == 2 && strlen(vms[0].vm_id) == 36 && strcmp(vms[0].vm_id, vms[1].vm_id) != 0,
		    "... vmIds GUIDs, one each");
		free(got);
		free(want_s);
		json_decref(d2);
	}
	free(vms);
	is_int(sr_arm_set_capacity(c, "rg1", "set1", 1, e), SR_ARM_OK, "capacity 1");
	is_int(sr_arm_get_vmss(c, "rg1", "set1", &v, e), SR_ARM_OK, "the set read back");
	ok(v.capacity == 1 && strcmp(v.group, "rg1") == 0 && strcmp(v.region, "eastus") == 0 &&
	    strcmp(v.pool, "p1") == 0 && strcmp(v.state, "Succeeded") == 0,
	    "... capacity 1, its group, region, pool tag, state");
	is_int(dump_count("vms"), 1, "one VM left");

	/* capacity errors */
	hook("POST", "/emu/capacity?region=eastus&code=ZonalAllocationFailed", NULL);
	st = sr_arm_set_capacity(c, "rg1", "set1", 3, e);
	is_int(st, SR_ARM_CAPACITY, "no capacity in the operation: SR_ARM_CAPACITY");
	is_str(e, "set capacity of scale set set1: ZonalAllocationFailed: Allocation failed. We "
	    "do not have sufficient capacity for the requested VM size in this zone. Read more "
	    "about improving likelihood of allocation success at http://aka.ms/allocation-guidance",
	    "... its code and message said");
	hook("POST", "/emu/capacity?region=eastus", NULL);
	hook("POST", "/emu/capacity?region=westus2&size=Standard_NC4as_T4_v3&code=SkuNotAvailable",
	    NULL);
	s.name = "set2";
	s.region = "westus2";
	st = sr_arm_create_vmss(c, &s, &made, e);
	is_int(st, SR_ARM_CAPACITY, "SkuNotAvailable at the call: SR_ARM_CAPACITY");
	is_int(made, 0, "... nothing made (no set to delete)");
	ok(strncmp(e, "create scale set set2: SkuNotAvailable: The requested VM size for resource "
	    "'Following SKUs have failed for Capacity Restrictions: Standard_NC4as_T4_v3' is "
	    "currently not available in location 'westus2'.", 150) == 0, "... said");
	hook("POST", "/emu/capacity?region=centralus&code=ZonalAllocationFailed", NULL);
	s.name = "set3";
	s.region = "centralus";
	st = sr_arm_create_vmss(c, &s, &made, e);
	ok(st == SR_ARM_CAPACITY && made == 1, "ZonalAllocationFailed in its operation: "
	    "SR_ARM_CAPACITY, the set made (to be deleted)");
	is_int(sr_arm_delete_vmss(c, "rg1", "set3", e), SR_ARM_OK, "... and deleted");
	hook("POST", "/emu/capacity?region=centralus", NULL);
	s.name = "set2";
	s.subnet_id = "/subscriptions/" SUB "/resourceGroups/rg1/providers/Microsoft.Network/"
	    "virtualNetworks/none/subnets/default";
	s.region = "eastus";
	st = sr_arm_create_vmss(c, &s, &made, e);
	ok(st == SR_ARM_ERROR && strstr(e, "create scale set set2: InvalidResourceReference: "
	    "Resource /subscriptions/") != NULL, "a network that is not there: an error, no "
	    "failover");
	s.image = "ubuntu-hpc";
	ok(sr_arm_create_vmss(c, &s, &made, e) == SR_ARM_ERROR && strcmp(e, "create scale set set2: "
	    "image \"ubuntu-hpc\": want PUBLISHER:OFFER:SKU:VERSION or an image's resource id") ==
	    0, "a bad image: said before any call");

	/* a refused token, fetched again once; retries */
	grants = log_count("token grant=");
	hook("POST", "/emu/expire", NULL);
	is_int(sr_arm_get_vmss(c, "rg1", "set1", &v, e), SR_ARM_OK, "a token expired: the call "
	    "passes");
	is_int(log_count("token grant=") - grants, 1, "... with one new token");
	hook("POST", "/emu/http-error?status=503&code=ServerBusy&count=2", NULL);
	is_int(sr_arm_get_vmss(c, "rg1", "set1", &v, e), SR_ARM_OK, "two 503s: tried again");
	hook("POST", "/emu/http-error?status=403&code=AuthorizationFailed&count=1", NULL);
	ok(sr_arm_get_vmss(c, "rg1", "set1", &v, e) == SR_ARM_ERROR &&
	    strcmp(e, "get scale set set1: AuthorizationFailed: Injected AuthorizationFailed.") ==
	    0, "a 403: not tried again, said");
	ok(sr_arm_get_vmss(c, "rg1", "nope", &v, e) == SR_ARM_ERROR && strstr(e,
	    "get scale set nope: ResourceNotFound: The Resource "
	    "'Microsoft.Compute/virtualMachineScaleSets/nope' under resource group 'rg1' was not "
	    "found.") == e, "a set not there: ResourceNotFound");

	/* the pool found and deleted */
	is_int(sr_arm_find_pool(c, "p1", &f, e), SR_ARM_OK, "the pool found by its tags");
	ok(f.nsets == 1 && strcmp(f.sets[0].name, "set1") == 0 && f.nvnets == 1 &&
	    strcmp(f.vnets[0][1], "vn1") == 0 && f.ngroups == 1 && strcmp(f.groups[0], "rg1") == 0,
	    "... its set, network and group");
	sr_arm_found_free(&f);
	is_int(sr_arm_delete_pool(c, "p1", &gone, e), SR_ARM_OK, "the pool deleted");
	is_int((long long)gone, 3, "... three resources");
	ok(dump_count("sets") + dump_count("vms") + dump_count("vnets") + dump_count("groups") == 0,
	    "nothing left on the emulator");
	is_int(sr_arm_delete_pool(c, "p1", &gone, e), SR_ARM_OK, "deleted again");
	is_int((long long)gone, 0, "... nothing to delete");
	sr_arm_close(c);
}

int
main(void)
{
	char e[SR_ERRMAX], *portfile, *log, *emu;
	const char *top = getenv("top_srcdir");

	snprintf(dir, sizeof dir, "%s/t-arm.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	if (sr_http_init(e) == -1)
		sr_fatal("%s", e);
	unsetenv("AZURE_SUBSCRIPTION_ID");
	unsetenv("AZURE_AUTHORITY_HOST");
	unsetenv("SPOTRUN_ARM_ENDPOINT");
	unsetenv("SPOTRUN_AZURE_ENDPOINT");
	unsetenv("SPOTRUN_AZURE_METADATA_DISABLED");
	snprintf(ep, sizeof ep, "http://127.0.0.1:1");
	test_offline();
	if (system("python3 -c 'import http.server' >/dev/null 2>&1") != 0) {
		tap_skip("python3 missing");
		return tap_done();
	}
	portfile = sr_asprintf("%s/port", dir);
	log = sr_asprintf("%s/emu.log", dir);
	emu = sr_asprintf("%s/tests/armemu.py", top != NULL && top[0] != '\0' ? top :
	    SR_TOP_SRCDIR);
	{
		const char *argv[] = { "/usr/bin/env", "python3", emu, "--port-file", portfile,
			"--subscription", SUB, "--principal", TENANT ":" CLIENT ":" SECRET,
			"--page-size", "1", "--log", log, NULL };

		emu_port = su_server_start(argv, portfile, 30, emu, "", &emu_pid);
	}
	snprintf(ep, sizeof ep, "http://127.0.0.1:%d", emu_port);
	test_identity();
	test_engine();
	free(portfile);
	free(log);
	free(emu);
	sr_http_cleanup();
	return tap_done();
}
