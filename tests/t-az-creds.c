/*
 * t-az-creds.c: where the az:// store finds its credentials (store/azure/
 * az-creds.c), each source against Azurite, which checks them: a
 * connection string with AccountKey (whose BlobEndpoint is the store's
 * endpoint when the URL names none) or SharedAccessSignature, the account
 * key of AZURE_STORAGE_KEY, a SAS in AZURE_STORAGE_SAS_TOKEN (a container
 * SAS made by the Azure CLI, with and without its '?'), and the VM's managed
 * identity: tokens from tests/mdemu (-J) taken by the HTTPS Azurite that
 * checks bearer tokens, one fetch for many requests, a token the server
 * rejects fetched again once, a user-assigned identity by AZURE_CLIENT_ID.
 * And the messages when they are wrong: a read-only SAS, an expired one, a
 * malformed connection string, one for another account, none at all (what
 * was tried, the metadata service's own reason), a private CA not trusted,
 * a bearer token over HTTP; no secret in any of them. And under
 * out-of-memory (tests/oom.c): a connection string's endpoint and its
 * credentials (the C library's allocations failing too), the token
 * service's replies (jansson's too) and a token fetched from tests/mdemu
 * (spotrun's own: libcurl, failing, can send the request without its
 * query), each run failing with an OOM error or giving exactly the
 * credentials, nothing leaked.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "az-creds.h"
#include "store.h"
#include "tap.h"
#include "oom.h"
#include "oom-trial.h"
#include "az-util.h"
#include "util.h"

static char container[64];

/* A store at URL u; put then get "k"; 0 or the put's/get's rc, err set. */
static int
roundtrip(const char *u, const char *body, char *err)
{
	struct sr_store *st;
	void *buf = NULL;
	size_t len = 0;
	int rc;

	if (sr_store_open(u, &st, err) == -1)
		return SR_STORE_ERROR;
	rc = sr_store_put(st, "k", body, strlen(body), SR_PUT_OVERWRITE, NULL, NULL, err);
	if (rc == 0)
		rc = sr_store_get(st, "k", 100, &buf, &len, NULL, err);
	if (rc == 0 && (len != strlen(body) || memcmp(buf, body, len) != 0))
		rc = sr_err(err, "get k: read back %zu other bytes", len);
	free(buf);
	sr_store_close(st);
	return rc;
}

/* A SAS for the container made by the Azure CLI, into out. */
static void
make_sas(char *out, size_t len, const char *perms, const char *expiry)
{
	if (au_cli_out(out, len, "storage container generate-sas -n %s --permissions %s "
	    "--expiry %s -o tsv", container, perms, expiry) != 0 || strchr(out, '=') == NULL)
		sr_fatal("az storage container generate-sas failed: %s", out);
}

/* Every variable a source reads, unset. */
static void
no_creds(void)
{
	unsetenv("AZURE_STORAGE_CONNECTION_STRING");
	unsetenv("AZURE_STORAGE_KEY");
	unsetenv("AZURE_STORAGE_SAS_TOKEN");
	unsetenv("AZURE_STORAGE_ACCOUNT");
	unsetenv("AZURE_CLIENT_ID");
	unsetenv("REQUESTS_CA_BUNDLE");
}

static void
test_keys_and_sas(const char *acct, const char *ep, const char *key)
{
	char err[SR_ERRMAX], sas[1024], *u, *cs, *q, *want;

	u = sr_asprintf("az://%s/%s/creds?endpoint=%s", acct, container, ep);
	is_int(roundtrip(u, "by key", err), 0, "AZURE_STORAGE_KEY: put and get");

	/* a connection string: its key, and its endpoint when the URL has none */
	no_creds();
	cs = sr_asprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"
	    "BlobEndpoint=%s;", acct, key, ep);
	setenv("AZURE_STORAGE_CONNECTION_STRING", cs, 1);
	free(cs);
	q = sr_asprintf("az://%s/%s/creds", acct, container);
	is_int(roundtrip(q, "by connection string", err), 0,
	    "a connection string: key and endpoint from it (none in the URL)");
	if (err[0] != '\0')
		printf("# %s\n", err);
	cs = sr_asprintf("AccountName=%s;AccountKey=d3JvbmcgYWNjb3VudCBrZXk=;BlobEndpoint=%s",
	    acct, ep);
	setenv("AZURE_STORAGE_CONNECTION_STRING", cs, 1);
	free(cs);
	is_int(roundtrip(q, "x", err), SR_STORE_ERROR, "a connection string with a wrong key");
	want = sr_asprintf("put k: the server rejects the signature (AuthorizationFailure): the "
	    "account key from AZURE_STORAGE_CONNECTION_STRING is wrong for account %s; check "
	    "AZURE_STORAGE_KEY or the connection string's AccountKey", acct);
	is_str(err, want, "... message names the connection string");
	free(want);
	setenv("AZURE_STORAGE_CONNECTION_STRING", "AccountName=otheracct;AccountKey=eA==", 1);
	is_int(roundtrip(q, "x", err), SR_STORE_ERROR, "a connection string for another account");
	want = sr_asprintf("open store %s: AZURE_STORAGE_CONNECTION_STRING's AccountName names "
	    "account otheracct, but the store is in account %s; use the credentials of %s", q,
	    acct, acct);
	is_str(err, want, "... message");
	free(want);
	setenv("AZURE_STORAGE_CONNECTION_STRING", "AccountName=x;secret-without-a-name", 1);
	is_int(roundtrip(q, "x", err), SR_STORE_ERROR, "a malformed connection string");
	want = sr_asprintf("open store %s: read AZURE_STORAGE_CONNECTION_STRING: part 2 is not "
	    "Name=value (the form is AccountName=...;AccountKey=...)", q);
	is_str(err, want, "... message, without the part's text");
	free(want);
	cs = sr_asprintf("AccountName=%s;BlobEndpoint=%s", acct, ep);
	setenv("AZURE_STORAGE_CONNECTION_STRING", cs, 1);
	free(cs);
	is_int(roundtrip(q, "x", err), SR_STORE_ERROR, "a connection string with no secret");
	is_str(err, "put k: find Azure credentials: AZURE_STORAGE_CONNECTION_STRING has neither "
	    "AccountKey nor SharedAccessSignature", "... message");
	setenv("AZURE_STORAGE_CONNECTION_STRING", "UseDevelopmentStorage=true", 1);
	{
		struct sr_store *st;
		struct sr_object_info info;
		char *u2 = sr_asprintf("az://devstoreaccount1/%s?attempts=1", container);

		is_int(sr_store_open(u2, &st, err), 0, "UseDevelopmentStorage=true opens "
		    "devstoreaccount1");
		is_int(sr_store_head(st, "k", &info, err), SR_STORE_ERROR,
		    "... on Azurite's port 10000, where nothing listens here");
		ok(strstr(err, "127.0.0.1 port 10000") != NULL, "... the error names it: %s", err);
		sr_store_close(st);
		free(u2);
		is_int(sr_store_open(q, &st, err), -1, "UseDevelopmentStorage=true is for "
		    "devstoreaccount1 only");
	}
	no_creds();

	/* SAS: a container SAS the Azure CLI made, with and without its '?' */
	make_sas(sas, sizeof sas, "racwdl", "2030-01-01T00:00Z");
	setenv("AZURE_STORAGE_SAS_TOKEN", sas, 1);
	is_int(roundtrip(u, "by SAS", err), 0, "AZURE_STORAGE_SAS_TOKEN: put and get");
	{
		char *qs = sr_asprintf("?%s", sas);

		setenv("AZURE_STORAGE_SAS_TOKEN", qs, 1);
		is_int(roundtrip(u, "by ?SAS", err), 0, "... with its leading '?'");
		free(qs);
	}
	{
		struct sr_store *st;
		int n = 0;

		sr_store_open(u, &st, err);
		is_int(sr_store_list(st, "", su_count_cb, &n, err), 0, "SAS: list");
		is_int(n, 1, "... one blob");
		sr_store_close(st);
	}
	cs = sr_asprintf("BlobEndpoint=%s;SharedAccessSignature=%s", ep, sas);
	unsetenv("AZURE_STORAGE_SAS_TOKEN");
	setenv("AZURE_STORAGE_CONNECTION_STRING", cs, 1);
	free(cs);
	is_int(roundtrip(q, "by SAS in a connection string", err), 0,
	    "a connection string with SharedAccessSignature");
	no_creds();
	make_sas(sas, sizeof sas, "rl", "2030-01-01T00:00Z");
	setenv("AZURE_STORAGE_SAS_TOKEN", sas, 1);
	is_int(roundtrip(u, "x", err), SR_STORE_ERROR, "a read-only SAS cannot put");
	want = sr_asprintf("put k: access denied (AuthorizationPermissionMismatch) for the "
	    "credentials from AZURE_STORAGE_SAS_TOKEN: the SAS needs the permissions racwdl (read, "
	    "add, create, write, delete, list) for the container on az://%s/%s", acct, container);
	is_str(err, want, "... message");
	free(want);
	ok(strstr(err, "sig=") == NULL, "... without the SAS");
	make_sas(sas, sizeof sas, "racwdl", "2020-01-01T00:00Z");
	setenv("AZURE_STORAGE_SAS_TOKEN", sas, 1);
	is_int(roundtrip(u, "x", err), SR_STORE_ERROR, "an expired SAS");
	want = sr_asprintf("put k: the server rejects the SAS token from AZURE_STORAGE_SAS_TOKEN "
	    "(AuthorizationFailure: it is wrong, expired or for another account); make a new one, "
	    "e.g. `az storage container generate-sas --account-name %s -n %s --permissions racwdl "
	    "--expiry DATE`", acct, container);
	is_str(err, want, "... message");
	free(want);
	setenv("AZURE_STORAGE_SAS_TOKEN", "not a sas", 1);
	is_int(roundtrip(u, "x", err), SR_STORE_ERROR, "a SAS that is not one");
	is_str(err, "put k: find Azure credentials: AZURE_STORAGE_SAS_TOKEN is not a SAS token "
	    "(sv=...&sig=..., as `az storage container generate-sas` prints it)", "... message");
	no_creds();
	free(u);
	free(q);
}

static void
test_identity(const char *acct, const char *tls_ep, const char *ca)
{
	char err[SR_ERRMAX], *u, *want, dir[] = "/tmp/t-az-creds.XXXXXX";
	struct emu e;

	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp: %s", strerror(errno));
	no_creds();
	u = sr_asprintf("az://%s/%s/mi?endpoint=%s", acct, container, tls_ep);

	/* nothing at all: every source tried, the metadata service's refusal */
	{
		const char *args[] = { NULL };

		emu_start(&e, dir, args);
		setenv("SPOTRUN_AZURE_ENDPOINT", e.url, 1);
		setenv("REQUESTS_CA_BUNDLE", ca, 1);
		is_int(roundtrip(u, "x", err), SR_STORE_ERROR, "no credentials and no identity");
		want = sr_asprintf("put k: find Azure credentials: none found; tried "
		    "AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY and AZURE_STORAGE_SAS_TOKEN "
		    "(not set), managed identity (GET %s/metadata/identity/oauth2/token: HTTP status "
		    "400: invalid_request (Identity not found); assign the VM a managed identity (`az "
		    "vm identity assign`)); set AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN or "
		    "AZURE_STORAGE_CONNECTION_STRING, or run on an Azure VM with a managed identity",
		    e.url);
		is_str(err, want, "... message: what was tried and why each gave nothing");
		free(want);
		emu_stop(&e);
	}
	no_cloud();
	is_int(roundtrip(u, "x", err), SR_STORE_ERROR, "no metadata service (a laptop)");
	ok(strstr(err, "managed identity (GET http://127.0.0.1:1/metadata/identity/oauth2/token: ")
	    != NULL, "... message names the request that failed: %s", err);

	/* a managed identity: tokens from the emulator, checked by Azurite */
	{
		const char *args[] = { "-J", "3600", NULL };

		emu_start(&e, dir, args);
		setenv("SPOTRUN_AZURE_ENDPOINT", e.url, 1);
		is_int(roundtrip(u, "by managed identity", err), 0,
		    "managed identity: put and get over HTTPS with a bearer token");
		if (err[0] != '\0')
			printf("# %s\n", err);
		is_int(log_count(&e, "GET /metadata/identity/oauth2/token?api-version=2018-02-01&"
		    "resource=https%3A%2F%2Fstorage.azure.com%2F metadata=true -> 200 token=1 "
		    "client=-"), 1, "... one token fetched, with Metadata: true, for storage");
		is_int(log_grep(&e, "token=2"), 0, "... and used for every request");
		unsetenv("REQUESTS_CA_BUNDLE");
		is_int(roundtrip(u, "x", err), SR_STORE_ERROR, "the private CA not trusted");
		ok(strstr(err, "put k: the server's TLS certificate is not trusted: ") != NULL &&
		    strstr(err, "(for a private CA set REQUESTS_CA_BUNDLE to its PEM file, as for "
		    "the Azure CLI)") != NULL, "... message: %s", err);
		setenv("REQUESTS_CA_BUNDLE", ca, 1);
		setenv("AZURE_CLIENT_ID", "0d8a4a2b-1111-4222-8333-444455556666", 1);
		is_int(roundtrip(u, "by a user-assigned identity", err), 0,
		    "AZURE_CLIENT_ID: a user-assigned identity");
		is_int(log_grep(&e, "client=0d8a4a2b-1111-4222-8333-444455556666"), 1,
		    "... asked for by its client id");
		setenv("AZURE_CLIENT_ID", "not a guid; x", 1);
		is_int(roundtrip(u, "x", err), SR_STORE_ERROR, "an AZURE_CLIENT_ID that is not one");
		ok(strstr(err, "managed identity (AZURE_CLIENT_ID is not a client id (a GUID such as "
		    "a1b2c3d4-...))") != NULL, "... message: %s", err);
		unsetenv("AZURE_CLIENT_ID");
		emu_stop(&e);
	}
	/* a token the server rejects before its expires_on: fetched again once */
	{
		const char *args[] = { "-J", "2", "-j", "3600", NULL };
		struct sr_store *st;
		void *buf = NULL;
		size_t len = 0;

		emu_start(&e, dir, args);
		setenv("SPOTRUN_AZURE_ENDPOINT", e.url, 1);
		sr_store_open(u, &st, err);
		is_int(sr_store_put(st, "k", "v1", 2, SR_PUT_OVERWRITE, NULL, NULL, err), 0,
		    "a token that lives 2 s and claims an hour: put");
		sleep(3);
		is_int(sr_store_get(st, "k", 10, &buf, &len, NULL, err), 0,
		    "3 s later Azurite rejects it; the get fetches a new one and succeeds");
		if (err[0] != '\0')
			printf("# %s\n", err);
		ok(len == 2 && memcmp(buf, "v1", 2) == 0, "... and reads the value");
		free(buf);
		is_int(log_grep(&e, "token=2 "), 1, "... with the second token");
		is_int(log_grep(&e, "token=3 "), 0, "... once");
		sr_store_close(st);
		emu_stop(&e);
	}
	/* a bearer token over plain HTTP is refused (Azurite, as Azure) */
	{
		const char *args[] = { "-J", "3600", NULL };
		char *hu = sr_asprintf("az://%s/%s/mi?endpoint=%s", acct, container,
		    su_env("SPOTRUN_TEST_AZ_ENDPOINT"));

		emu_start(&e, dir, args);
		setenv("SPOTRUN_AZURE_ENDPOINT", e.url, 1);
		is_int(roundtrip(hu, "x", err), SR_STORE_ERROR, "a bearer token over HTTP");
		is_str(err, "put k: the server rejects the token of the managed identity "
		    "(AuthorizationFailure)", "... message");
		ok(strstr(err, "eyJ") == NULL, "... without the token");
		emu_stop(&e);
		free(hu);
	}
	no_creds();
	no_cloud();
	free(u);
	rmdir(dir);
}

/* The OOM trials: the endpoint a connection string gives, or the
 * credentials a new chain resolves (from the environment, or from the
 * token service at imds) with what they must be. */
struct cred_trial {
	const char *account, *imds;
	char endpoint[1024];
	struct sr_creds cr, want;
};

static int
endpoint_op(void *arg, char *err)
{
	struct cred_trial *t = arg;

	return sr_az_env_endpoint(t->account, t->endpoint, sizeof t->endpoint, err);
}

static int
endpoint_check(void *arg, int rc, char *why)
{
	struct cred_trial *t = arg;
	char *want = sr_asprintf("http://%s.blob.core.example.invalid", t->account);
	int good = rc != 0 || strcmp(t->endpoint, want) == 0;

	if (!good)
		snprintf(why, SR_ERRMAX, "endpoint '%s'", t->endpoint);
	free(want);
	return good;
}

static int
chain_op(void *arg, char *err)
{
	struct cred_trial *t = arg;
	struct sr_creds_chain *c = sr_az_creds_chain(t->account, t->imds, 0, err);
	int rc;

	if (c == NULL)
		return -1;
	rc = sr_creds_get(c, &t->cr, err);
	sr_creds_chain_free(c);
	return rc;
}

/* A token is new at each fetch: its JWT header and mdemu's signature part
 * are the same, its expiry an hour from now. */
static int
chain_check(void *arg, int rc, char *why)
{
	struct cred_trial *t = arg;
	const struct sr_creds *g = &t->cr, *w = &t->want;
	size_t hl = strcspn(w->session_token, ".");
	const char *sig = strrchr(w->session_token, '.');
	double now = sr_now();
	int good = g->form == w->form && strcmp(g->source, w->source) == 0 &&
	    strcmp(g->secret_key, w->secret_key) == 0;

	if (rc != 0)
		return 1;
	if (w->form == SR_AZ_BEARER)
		good = good && strncmp(g->session_token, w->session_token, hl + 1) == 0 &&
		    strlen(g->session_token) > strlen(sig) && strcmp(g->session_token +
		    strlen(g->session_token) - strlen(sig), sig) == 0 &&
		    g->expires > now + 3590 && g->expires <= now + 3600;
	else
		good = good && strcmp(g->session_token, w->session_token) == 0;
	if (!good)
		snprintf(why, SR_ERRMAX, "form %d, source '%s', expires %.0f", g->form, g->source,
		    g->expires);
	return good;
}

static void
chain_reset(void *arg)
{
	sr_creds_wipe(&((struct cred_trial *)arg)->cr);
}

/* The OOM trials of the reply reader alone: a token, or a refusal whose
 * exact message is the right result. */
struct reply_trial {
	long status;
	const char *body;
	struct sr_creds cr;
	char msg[SR_ERRMAX];
};

#define TR_URL "http://127.0.0.1:1/metadata/identity/oauth2/token"
#define TR_CLIENT "0d8a4a2b-1111-4222-8333-444455556666"
#define TR_TOKEN "eyJ0eXAiOiJKV1QifQ.eyJuIjoxfQ.c2ln"

static int
reply_op(void *arg, char *err)
{
	struct reply_trial *t = arg;
	int rc;

	memset(&t->cr, 0, sizeof t->cr);
	t->msg[0] = '\0';
	rc = sr_az_token_reply(t->status, t->body, strlen(t->body), TR_URL, TR_CLIENT, &t->cr,
	    err);
	if (rc == -1 && !sr_err_is_oom(err)) {
		snprintf(t->msg, sizeof t->msg, "%s", err);
		return 0;
	}
	return rc;
}

static int
reply_check(void *arg, int rc, char *why)
{
	struct reply_trial *t = arg;
	int good;

	if (rc != 0)
		return 1;
	if (t->status == 200)
		good = t->msg[0] == '\0' && t->cr.form == SR_AZ_BEARER &&
		    strcmp(t->cr.session_token, TR_TOKEN) == 0 && t->cr.expires == 1796126400 &&
		    strcmp(t->cr.source, "managed identity " TR_CLIENT) == 0;
	else
		good = strcmp(t->msg, "GET " TR_URL ": HTTP status 400: invalid_request (Identity "
		    "not found); assign the VM a managed identity (`az vm identity assign`)") == 0;
	if (!good)
		snprintf(why, SR_ERRMAX, "form %d, expires %.0f, message '%s'", t->cr.form,
		    t->cr.expires, t->msg);
	return good;
}

static void
reply_reset(void *arg)
{
	sr_creds_wipe(&((struct reply_trial *)arg)->cr);
}

static void
test_oom(const char *acct, const char *key)
{
	struct reply_trial rt = { .status = 200, .body = "{\"access_token\":\"" TR_TOKEN "\","
		"\"client_id\":\"" TR_CLIENT "\",\"expires_in\":\"3600\",\"expires_on\":"
		"\"1796126400\",\"resource\":\"https://storage.azure.com/\",\"token_type\":"
		"\"Bearer\"}" },
	    rr = { .status = 400, .body = "{\"error\":\"invalid_request\",\"error_description\":"
		"\"Identity not found\"}" };
	struct cred_trial t = { .account = acct };
	char err[SR_ERRMAX], dir[SR_ERRMAX], *cs;
	const char *args[] = { "-J", "3600", NULL };
	struct emu e;

	oom_trial("sr_az_token_reply on a token (jansson's allocations too)", OOM_ALL, reply_op,
	    reply_check, reply_reset, &rt);
	oom_trial("sr_az_token_reply on a refusal (jansson's allocations too)", OOM_ALL,
	    reply_op, reply_check, reply_reset, &rr);

	no_creds();
	no_cloud();
	cs = sr_asprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"
	    "EndpointSuffix=core.example.invalid", acct, key);
	setenv("AZURE_STORAGE_CONNECTION_STRING", cs, 1);
	free(cs);
	oom_trial("sr_az_env_endpoint on a connection string", OOM_OURS, endpoint_op,
	    endpoint_check, NULL, &t);

	t.want.form = SR_AZ_SHARED_KEY;
	snprintf(t.want.secret_key, sizeof t.want.secret_key, "%s", key);
	snprintf(t.want.source, sizeof t.want.source, "AZURE_STORAGE_CONNECTION_STRING");
	oom_trial("credentials from a connection string", OOM_ALL, chain_op, chain_check,
	    chain_reset, &t);

	/* the token reply: what the first fetch gives, unarmed, is the model */
	no_creds();
	snprintf(dir, sizeof dir, "%s/t-az-creds.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp %s: %s", dir, strerror(errno));
	emu_start(&e, dir, args);
	t.imds = e.url;
	if (chain_op(&t, err) == -1)
		sr_fatal("%s", err);
	t.want = t.cr;
	oom_trial("a managed identity's token fetched", OOM_OURS, chain_op, chain_check,
	    chain_reset, &t);
	sr_creds_wipe(&t.want);
	emu_stop(&e);
	rmdir(dir);
}

int
main(void)
{
	const char *acct, *ep, *key, *tls_ep, *ca;

	au_require();
	acct = su_env("SPOTRUN_TEST_AZ_ACCOUNT");
	ep = su_env("SPOTRUN_TEST_AZ_ENDPOINT");
	key = su_env("SPOTRUN_TEST_AZ_KEY");
	tls_ep = su_env("SPOTRUN_TEST_AZ_TLS_ENDPOINT");
	ca = su_env("SPOTRUN_TEST_AZ_CA");
	au_container_new(container, sizeof container, "t-az-creds");
	test_keys_and_sas(acct, ep, key);
	if (tls_ep[0] == '\0')
		ok(0, "no HTTPS Azurite (SPOTRUN_TEST_AZ_TLS_ENDPOINT unset; tests/azurite.sh start "
		    "--tls starts it)");
	else {
		/* the HTTPS Azurite keeps its own blobs: its own container */
		if (au_cli_tls("storage container create -n %s -o none", container) != 0)
			sr_fatal("cannot create container %s on the HTTPS Azurite", container);
		test_identity(acct, tls_ep, ca);
		au_cli_tls("storage container delete -n %s -o none", container);
	}
	test_oom(acct, key);
	au_container_rm(container);
	return tap_done();
}
