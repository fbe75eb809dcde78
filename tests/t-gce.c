/*
 * t-gce.c: the GCP engine of `spotrun up` and `down` (cloud/gcp/gce.h) and
 * its credentials (gce-auth.h). Offline: the classes of Compute's error
 * codes, Google's error documents, label values, a JWT's header, claims
 * and RS256 signature (checked with OpenSSL against the key's public
 * half). Against tests/gceemu.py (python3 of the PATH, on loopback): an
 * authorized user's refresh token and a service account's JWT exchanged at
 * the file's token_uri (the emulator checks the JWT's kid, iss, aud, scope,
 * life and signature), the token kept and fetched again near its expiry,
 * the metadata server's token and project, the errors that name a file
 * and its key; then a pool: its template's exact body, a regional group
 * over two zones, resized, its instances, a capacity error in its
 * instances' lastAttempt and one of an operation, each classified, a
 * preempted instance replaced, the pool found by label and deleted with
 * nothing left (the emulator's state listed), operations waited on; a
 * refused token fetched again once, 503s and 429s tried again (4 tries),
 * a 403 not.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "tap.h"
#include "gce-auth.h"
#include "gce.h"
#include "http.h"
#include "store-util.h"
#include "util.h"

#define PROJECT	"p-test"

static char dir[4096];
static pid_t emu_pid[2];
static int emu_port[2];

static void
cleanup(void)
{
	char *cmd;
	int i;

	for (i = 0; i < 2; i++)
		if (emu_pid[i] > 0) {
			kill(emu_pid[i], SIGTERM);
			waitpid(emu_pid[i], NULL, 0);
		}
	if (dir[0] != '\0') {
		cmd = sr_asprintf("rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# cleanup: %s failed\n", cmd);
		free(cmd);
	}
}

static char *
path_of(const char *name)
{
	return sr_asprintf("%s/%s", dir, name);
}

static void
write_text(const char *name, const char *text)
{
	char *p = path_of(name);
	FILE *f = fopen(p, "w");

	if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0)
		sr_fatal("write %s: %s", p, strerror(errno));
	free(p);
}

static char *
read_text(const char *name)
{
	char *p = path_of(name), *buf, e[SR_ERRMAX];
	size_t len;

	if (sr_read_file(p, 1 << 22, &buf, &len, e) == -1)
		buf = sr_strdup("");
	free(p);
	return buf;
}

/* Lines of the emulator's log i holding needle. */
static int
log_count(int i, const char *needle)
{
	char name[32], *t, *p;
	int n = 0;

	snprintf(name, sizeof name, "emu%d.log", i);
	t = read_text(name);
	for (p = t; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	free(t);
	return n;
}

static void
emu_start(int i, const char *ttl, const char *polls, const char *page)
{
	char name[32], lname[32];
	char *portfile, *log, *users = path_of("users"), *sa = path_of("sa"), *emu;
	const char *top = getenv("top_srcdir");

	snprintf(name, sizeof name, "port%d", i);
	snprintf(lname, sizeof lname, "emu%d.log", i);
	portfile = path_of(name);
	log = path_of(lname);
	emu = sr_asprintf("%s/tests/gceemu.py", top != NULL && top[0] != '\0' ? top :
	    SR_TOP_SRCDIR);
	{
		const char *argv[] = { "/usr/bin/env", "python3", emu, "--port-file", portfile,
			"--project", PROJECT, "--users", users, "--sa", sa, "--token-ttl", ttl,
			"--op-polls", polls, "--page-size", page, "--log", log, NULL };

		emu_port[i] = su_server_start(argv, portfile, 30, emu, "", &emu_pid[i]);
	}
	free(portfile);
	free(log);
	free(users);
	free(sa);
	free(emu);
}

/* A hook of the emulator i (no auth): its status; its body into *body
 * when not NULL. */
static long
hook(int i, const char *method, const char *path, char **body)
{
	struct sr_http_req rq;
	struct sr_http_resp r;
	char url[512], e[SR_ERRMAX];
	long st;

	snprintf(url, sizeof url, "http://127.0.0.1:%d%s", emu_port[i], path);
	memset(&rq, 0, sizeof rq);
	rq.method = method;
	rq.url = url;
	rq.connect_timeout = 5;
	rq.timeout = 10;
	rq.body_max = 1 << 22;
	if (sr_http_do(&rq, &r, e) == -1)
		sr_fatal("%s", e);
	st = r.status;
	if (body != NULL)
		*body = sr_strdup(r.body != NULL ? r.body : "");
	sr_http_resp_free(&r);
	return st;
}

static struct sr_gce *
client(const char *file, int i, char *err)
{
	struct sr_gce_opts o;
	struct sr_gce *c = NULL;
	char ep[64];

	memset(&o, 0, sizeof o);
	snprintf(ep, sizeof ep, "http://127.0.0.1:%d", emu_port[i]);
	o.endpoint = ep;
	o.credentials = file;
	o.no_metadata = 1;
	o.timeout = 10;
	if (sr_gce_open(&o, &c, err) == -1)
		return NULL;
	return c;
}

/* ---- offline ---- */

static void
test_offline(void)
{
	static const char doc404[] = "{\"error\": {\"code\": 404, \"message\": \"The resource "
	    "'projects/p/global/instanceTemplates/x' was not found\", \"errors\": [{\"message\": "
	    "\"The resource 'projects/p/global/instanceTemplates/x' was not found\", \"domain\": "
	    "\"global\", \"reason\": \"notFound\"}]}}";
	char code[64], msg[256], lv[64], lv2[64];

	is_int(sr_gce_classify("ZONE_RESOURCE_POOL_EXHAUSTED"), SR_GCE_CAPACITY, "classify: "
	    "ZONE_RESOURCE_POOL_EXHAUSTED is capacity");
	is_int(sr_gce_classify("ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"), SR_GCE_CAPACITY,
	    "... and its _WITH_DETAILS");
	is_int(sr_gce_classify("QUOTA_EXCEEDED"), SR_GCE_CAPACITY, "... QUOTA_EXCEEDED");
	is_int(sr_gce_classify("quotaExceeded"), SR_GCE_CAPACITY, "... the HTTP reason quotaExceeded");
	is_int(sr_gce_classify("insufficientCapacity"), SR_GCE_CAPACITY, "... insufficientCapacity");
	is_int(sr_gce_classify("notFound"), SR_GCE_ERROR, "notFound is no capacity error");
	is_int(sr_gce_classify("zone_resource_pool_exhausted"), SR_GCE_ERROR, "codes are exact");
	is_int(sr_gce_classify(""), SR_GCE_OK, "no code: OK");
	is_int(sr_gce_classify(NULL), SR_GCE_OK, "NULL: OK");

	ok(sr_gce_parse_error(doc404, strlen(doc404), code, sizeof code, msg, sizeof msg) == 0 &&
	    strcmp(code, "notFound") == 0 && strcmp(msg, "The resource 'projects/p/global/"
	    "instanceTemplates/x' was not found") == 0, "parse Google's 404: reason and message");
	{
		static const char doc429[] = "{\"error\": {\"code\": 429, \"message\": \"slow\", "
		    "\"status\": \"RESOURCE_EXHAUSTED\"}}";

		ok(sr_gce_parse_error(doc429, strlen(doc429), code, sizeof code, msg, sizeof msg)
		    == 0 && strcmp(code, "RESOURCE_EXHAUSTED") == 0 && strcmp(msg, "slow") == 0,
		    "no errors[]: the status");
	}
	ok(sr_gce_parse_error("<html>", 6, code, sizeof code, msg, sizeof msg) == -1 &&
	    code[0] == '\0', "not JSON: -1");
	ok(sr_gce_parse_error("{\"error\": \"invalid_grant\"}", 26, code, sizeof code, msg,
	    sizeof msg) == -1, "an OAuth error is no Compute error document");

	sr_gce_label_value("p1", lv);
	is_str(lv, "p1", "label value: a label-safe pool is kept");
	sr_gce_label_value("s3://Bucket/q", lv);
	sr_gce_label_value("s3://Bucket/q", lv2);
	ok(strlen(lv) == 63 && strncmp(lv, "h-", 2) == 0 &&
	    strspn(lv + 2, "0123456789abcdef") == 61 && strcmp(lv, lv2) == 0,
	    "a URL is hashed: h- and 61 hex digits, the same each time (%s)", lv);
	sr_gce_label_value("s3://bucket/r", lv2);
	ok(strcmp(lv, lv2) != 0, "another URL, another value");
	{
		char long64[65];

		memset(long64, 'a', 64);
		long64[64] = '\0';
		sr_gce_label_value(long64, lv);
		ok(strncmp(lv, "h-", 2) == 0, "64 characters are too long for a label: hashed");
	}
}

/* A key pair made by openssl: key.pem, and the --sa line with its modulus. */
static void
make_key(void)
{
	char *cmd = sr_asprintf("cd '%s' && openssl genrsa -out key.pem 2048 2>/dev/null && "
	    "printf 'sa@p-test.iam.gserviceaccount.com kid-1 %%s\\n' \"$(openssl rsa -in key.pem "
	    "-noout -modulus 2>/dev/null)\" > sa && printf 'cid csecret rtoken\\n' > users", dir);

	if (system(cmd) != 0)
		sr_fatal("%s failed", cmd);
	free(cmd);
}

/* A service account's key file as gcloud writes it, with token_uri. */
static void
write_sa_file(const char *name, int port, const char *drop)
{
	char *pem = read_text("key.pem"), *text, uri[128];
	json_t *o;

	snprintf(uri, sizeof uri, "http://127.0.0.1:%d/token", port);
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "type", "service_account",
	    "project_id", PROJECT, "private_key_id", "kid-1", "private_key", pem,
	    "client_email", "sa@p-test.iam.gserviceaccount.com", "client_id", "1234",
	    "token_uri", uri);
	if (drop != NULL)
		json_object_del(o, drop);
	text = json_dumps(o, JSON_INDENT(2));
	write_text(name, text);
	free(text);
	json_decref(o);
	free(pem);
}

/* The n bytes of base64url at s decoded into out (cap bytes, NUL-ended):
 * their length without the padding's zero bytes, or -1. */
static int
b64url_decode(const char *s, size_t n, unsigned char *out, size_t cap)
{
	char b64[4096];
	size_t i;
	int len;

	if (n + 4 >= sizeof b64 || (n + 3) / 4 * 3 + 1 > cap)
		return -1;
	for (i = 0; i < n; i++)
		b64[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
	for (; i % 4 != 0; i++)
		b64[i] = '=';
	b64[i] = '\0';
	if ((len = EVP_DecodeBlock(out, (unsigned char *)b64, (int)i)) < 0)
		return -1;
	len -= (int)(i - n);	/* EVP_DecodeBlock counts the padding's bytes */
	out[len] = '\0';
	return len;
}

static void
test_jwt(void)
{
	static const char claims[] = "{\"iss\":\"sa@x\",\"scope\":\"https://www.googleapis.com/"
	    "auth/cloud-platform\",\"aud\":\"http://a/token\",\"iat\":1700000000,"
	    "\"exp\":1700003600}";
	char *pem = read_text("key.pem"), *jwt = NULL, *bad, e[SR_ERRMAX], *dot1, *dot2;
	unsigned char part[1024];
	int sl;
	EVP_PKEY *key;
	EVP_MD_CTX *md;
	BIO *bio;

	if (!ok(sr_gce_jwt(pem, "kid-1", "sa@x", "http://a/token", SR_GCE_SCOPE, 1700000000, &jwt,
	    e) == 0, "sign a JWT"))
		tap_diag("%s", e);
	if (jwt == NULL)
		jwt = sr_strdup("");
	dot1 = strchr(jwt, '.');
	dot2 = dot1 != NULL ? strchr(dot1 + 1, '.') : NULL;
	ok(dot1 != NULL && dot2 != NULL && strchr(dot2 + 1, '.') == NULL &&
	    strcspn(jwt, "+/=") == strlen(jwt), "three base64url parts, no padding");
	if (dot1 == NULL || dot2 == NULL) {
		free(jwt);
		free(pem);
		return;
	}
	b64url_decode(jwt, (size_t)(dot1 - jwt), part, sizeof part);
	is_str((char *)part, "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"kid-1\"}", "header");
	b64url_decode(dot1 + 1, (size_t)(dot2 - dot1 - 1), part, sizeof part);
	is_str((char *)part, claims, "claims: iss, scope, aud, iat, exp an hour later");
	sl = b64url_decode(dot2 + 1, strlen(dot2 + 1), part, sizeof part);
	bio = BIO_new_mem_buf(pem, -1);
	key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	md = EVP_MD_CTX_new();
	ok(key != NULL && sl == 256 && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
	    EVP_DigestVerify(md, part, (size_t)sl, (unsigned char *)jwt, (size_t)(dot2 - jwt)) == 1,
	    "the RS256 signature (256 bytes) verifies with the key's public half");
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	BIO_free(bio);
	ok(sr_gce_jwt("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "k",
	    "i", "a", "s", 1, &bad, e) == -1 && bad == NULL && strcmp(e, "sign JWT: \"private_key\" "
	    "is not a PEM RSA private key") == 0, "a bad key: %s", e);
	free(jwt);
	free(pem);
}

static void
test_credentials(void)
{
	struct sr_gce_found f;
	struct sr_gce *c;
	struct sr_gce_opts o;
	char e[SR_ERRMAX], *p, want[600], text[1024], ep[64];
	int before;

	/* an authorized user, gcloud's file with token_uri and a quota project */
	snprintf(text, sizeof text, "{\"client_id\": \"cid\", \"client_secret\": \"csecret\", "
	    "\"refresh_token\": \"rtoken\", \"type\": \"authorized_user\", \"quota_project_id\": "
	    "\"%s\", \"token_uri\": \"http://127.0.0.1:%d/token\"}\n", PROJECT, emu_port[0]);
	write_text("user.json", text);
	p = path_of("user.json");
	c = client(p, 0, e);
	if (!ok(c != NULL, "open with an authorized user's file"))
		tap_diag("%s", e);
	is_str(c != NULL ? sr_gce_project(c) : "", PROJECT, "the project: its quota_project_id");
	if (!ok(c != NULL && sr_gce_find_pool(c, "none", &f, e) == SR_GCE_OK && f.ngroups == 0 &&
	    f.ntemplates == 0 && f.ninstances == 0, "a call with its token: nothing found"))
		tap_diag("%s", e);
	sr_gce_found_free(&f);
	is_int(log_count(0, "token grant=refresh_token client_id=cid"), 1,
	    "one refresh-token grant for the three listings: the token is kept");
	ok(log_count(0, "x-goog-user-project: " PROJECT) >= 3, "x-goog-user-project sent");
	sr_gce_close(c);

	snprintf(text, sizeof text, "{\"client_id\": \"cid\", \"client_secret\": \"csecret\", "
	    "\"refresh_token\": \"stale\", \"type\": \"authorized_user\", \"token_uri\": "
	    "\"http://127.0.0.1:%d/token\"}\n", emu_port[0]);
	write_text("stale.json", text);
	free(p);
	p = path_of("stale.json");
	setenv("CLOUDSDK_CORE_PROJECT", PROJECT, 1);
	c = client(p, 0, e);
	ok(c != NULL && sr_gce_find_pool(c, "none", &f, e) == SR_GCE_ERROR, "a refused refresh "
	    "token fails");
	snprintf(want, sizeof want, "find pool none: get token from authorized user (%s): HTTP "
	    "400: invalid_grant: Bad Request", p);
	is_str(e, want, "with the token endpoint's error, no secret");
	sr_gce_close(c);
	unsetenv("CLOUDSDK_CORE_PROJECT");
	free(p);

	/* a service account: the JWT checked by the emulator */
	write_sa_file("sa.json", emu_port[0], NULL);
	p = path_of("sa.json");
	setenv("GOOGLE_APPLICATION_CREDENTIALS", p, 1);
	c = client(NULL, 0, e);
	if (!ok(c != NULL, "open with $GOOGLE_APPLICATION_CREDENTIALS naming a key file"))
		tap_diag("%s", e);
	is_str(c != NULL ? sr_gce_project(c) : "", PROJECT, "the project: the key's project_id");
	if (!ok(c != NULL && sr_gce_find_pool(c, "none", &f, e) == SR_GCE_OK, "a call with a "
	    "service account's token"))
		tap_diag("%s", e);
	sr_gce_found_free(&f);
	snprintf(want, sizeof want, "token grant=jwt-bearer kid=kid-1 iss=sa@p-test.iam."
	    "gserviceaccount.com aud=http://127.0.0.1:%d/token scope=%s life=3600", emu_port[0],
	    SR_GCE_SCOPE);
	is_int(log_count(0, want), 1, "the emulator took the JWT: kid, iss, aud, scope, life, "
	    "signature");
	sr_gce_close(c);
	free(p);

	/* errors that name the file and the key */
	write_sa_file("nokey.json", emu_port[0], "private_key");
	p = path_of("nokey.json");
	ok(client(p, 0, e) == NULL, "a key file without private_key fails at open");
	snprintf(want, sizeof want, "open GCE client: read credentials %s: service_account: no "
	    "\"private_key\"", p);
	is_str(e, want, "naming the file and the key");
	free(p);
	write_text("odd.json", "{\"type\": \"external_account\"}");
	p = path_of("odd.json");
	ok(client(p, 0, e) == NULL && strstr(e, "\"type\" is \"external_account\": want "
	    "authorized_user or service_account") != NULL, "an unknown type: %s", e);
	free(p);
	setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/adc.json", 1);
	ok(client(NULL, 0, e) == NULL && strncmp(e, "open GCE client: read credentials "
	    "/nonexistent/adc.json: ", 55) == 0, "a missing file named by the variable: %s", e);
	unsetenv("GOOGLE_APPLICATION_CREDENTIALS");

	/* gcloud's own file under $CLOUDSDK_CONFIG */
	snprintf(text, sizeof text, "%s/gcloud", dir);
	mkdir(text, 0700);
	write_sa_file("gcloud/application_default_credentials.json", emu_port[0], NULL);
	setenv("CLOUDSDK_CONFIG", text, 1);
	c = client(NULL, 0, e);
	ok(c != NULL && sr_gce_find_pool(c, "none", &f, e) == SR_GCE_OK,
	    "gcloud's file in $CLOUDSDK_CONFIG");
	sr_gce_found_free(&f);
	sr_gce_close(c);
	unsetenv("CLOUDSDK_CONFIG");

	/* no file: the metadata server, only when allowed */
	memset(&o, 0, sizeof o);
	snprintf(ep, sizeof ep, "http://127.0.0.1:%d", emu_port[0]);
	o.endpoint = ep;
	o.metadata = ep;
	o.no_metadata = 1;
	ok(sr_gce_open(&o, &c, e) == -1 && strncmp(e, "open GCE client: find GCP credentials: "
	    "none: ", 45) == 0, "no file and no metadata allowed: %s", e);
	o.no_metadata = 0;
	setenv("NO_GCE_CHECK", "True", 1);
	ok(sr_gce_open(&o, &c, e) == -1 && strstr(e, "(the metadata server is not asked: "
	    "NO_GCE_CHECK)") != NULL, "NO_GCE_CHECK=True forbids it");
	unsetenv("NO_GCE_CHECK");
	before = log_count(0, "token grant=metadata");
	if (!ok(sr_gce_open(&o, &c, e) == 0, "open with the metadata server"))
		tap_diag("%s", e);
	else {
		is_str(sr_gce_project(c), PROJECT, "its project-id");
		ok(sr_gce_find_pool(c, "none", &f, e) == SR_GCE_OK, "a call with its token");
		sr_gce_found_free(&f);
		is_int(log_count(0, "token grant=metadata") - before, 1, "one metadata token");
		sr_gce_close(c);
	}
	/* an address that is no metadata server */
	snprintf(text, sizeof text, "http://127.0.0.1:%d/nothere", emu_port[0]);
	o.metadata = text;
	o.project = PROJECT;
	ok(sr_gce_open(&o, &c, e) == 0 && sr_gce_find_pool(c, "none", &f, e) == SR_GCE_ERROR &&
	    strstr(e, "get token from metadata server") != NULL, "a metadata address that is "
	    "no metadata server fails: %s", e);
	sr_gce_close(c);
}

/* Token refresh near expiry and operations polled, on emulator 1: tokens
 * of 2 s, operations DONE at their 3rd poll. */
static void
test_refresh(void)
{
	struct sr_gce_template_spec ts;
	struct sr_gce_found f;
	struct sr_gce *c;
	char e[SR_ERRMAX], *p;

	write_sa_file("sa1.json", emu_port[1], NULL);
	p = path_of("sa1.json");
	c = client(p, 1, e);
	free(p);
	if (!ok(c != NULL && sr_gce_find_pool(c, "x", &f, e) == SR_GCE_OK, "emulator 1: a call")) {
		tap_diag("%s", e);
		sr_gce_close(c);
		return;
	}
	sr_gce_found_free(&f);
	is_int(log_count(1, "token grant=jwt-bearer"), 1, "one token");
	sr_sleep(1.2);	/* a 2 s token is used for half its life */
	ok(sr_gce_find_pool(c, "x", &f, e) == SR_GCE_OK, "a call 1.2 s later");
	sr_gce_found_free(&f);
	is_int(log_count(1, "token grant=jwt-bearer"), 2, "a new token: the old was near expiry");

	memset(&ts, 0, sizeof ts);
	ts.name = "spotrun-pool-x";
	ts.pool = "x";
	ts.queue = "gs://b/q";
	ts.machine_type = "g2-standard-4";
	ts.image = "projects/deeplearning-platform-release/global/images/family/common-cu124";
	if (!ok(sr_gce_create_template(c, &ts, e) == SR_GCE_OK, "create a template"))
		tap_diag("%s", e);
	is_int(log_count(1, "/global/operations/operation-"), 3,
	    "its operation waited on: PENDING, RUNNING, then DONE at the third wait");
	is_int(log_count(1, "/wait 200"), 3, "through operations.wait");
	is_int(sr_gce_delete_template(c, "spotrun-pool-x", e), SR_GCE_OK, "delete it, waited on");

	sr_gce_close(c);
}

static void
test_engine(void)
{
	static const char *const zones[] = { "us-central1-a", "us-central1-b", NULL };
	struct sr_gce_template_spec ts;
	struct sr_gce_group_spec gs;
	struct sr_gce_group g;
	struct sr_gce_instance *in;
	struct sr_gce_found f;
	struct sr_gce *c;
	char e[SR_ERRMAX], *p, *body, lq[64], want[600];
	json_t *t, *props, *items;
	size_t n, i, gone, creating;
	int good, before, n401, n503, n403;

	p = path_of("sa.json");
	c = client(p, 0, e);
	free(p);
	if (!ok(c != NULL, "open the engine's client")) {
		tap_diag("%s", e);
		return;
	}
	memset(&ts, 0, sizeof ts);
	ts.name = "spotrun-pool-p1";
	ts.pool = "p1";
	ts.queue = "s3://Bucket/Q";
	ts.machine_type = "n1-standard-8";
	ts.accelerator_type = "nvidia-tesla-t4";
	ts.accelerator_count = 1;
	ts.image = "projects/deeplearning-platform-release/global/images/family/common-cu124";
	ts.disk_gb = 100;
	ts.service_account = "agent@p-test.iam.gserviceaccount.com";
	ts.user_data = "#cloud-config\n";
	ts.user_data_len = 14;
	if (!ok(sr_gce_create_template(c, &ts, e) == SR_GCE_OK, "create template spotrun-pool-p1"))
		tap_diag("%s", e);
	hook(0, "GET", "/emu/state", &body);
	ok(strstr(body, "\"spotrun-pool-p1\"") != NULL, "the emulator has it");
	free(body);

	/* its exact body, as Compute keeps it */
	hook(0, "GET", "/compute/v1/projects/" PROJECT "/global/instanceTemplates/spotrun-pool-p1",
	    &body);
	ok(strstr(body, "authError") != NULL, "Compute wants a token (401 without one)");
	free(body);
	{
		struct sr_http_req rq;
		struct sr_http_resp r;
		char url[256], tok[4096], hdr[4200], *aerr = e;
		const char *h[2] = { hdr, NULL };
		struct sr_gce_auth *a;
		struct sr_gce_auth_opts ao = { NULL, NULL, 1, 10 };

		p = path_of("sa.json");
		ao.file = p;
		sr_gce_auth_new(&ao, &a, aerr);
		sr_gce_auth_token(a, tok, sizeof tok, aerr);
		snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", tok);
		snprintf(url, sizeof url, "http://127.0.0.1:%d/compute/v1/projects/" PROJECT
		    "/global/instanceTemplates/spotrun-pool-p1", emu_port[0]);
		memset(&rq, 0, sizeof rq);
		rq.method = "GET";
		rq.url = url;
		rq.headers = h;
		rq.connect_timeout = 5;
		rq.timeout = 10;
		sr_http_do(&rq, &r, e);
		t = json_loadb(r.body, r.len, 0, NULL);
		sr_http_resp_free(&r);
		sr_gce_auth_free(a);
		free(p);
	}
	props = json_object_get(t, "properties");
	sr_gce_label_value("s3://Bucket/Q", lq);
	{
		json_t *sch = json_object_get(props, "scheduling");
		json_t *d = json_array_get(json_object_get(props, "disks"), 0);
		json_t *ip = json_object_get(d, "initializeParams");
		json_t *ga = json_array_get(json_object_get(props, "guestAccelerators"), 0);
		json_t *sa = json_array_get(json_object_get(props, "serviceAccounts"), 0);
		json_t *lb = json_object_get(props, "labels");

		ok(strcmp(json_string_value(json_object_get(sch, "provisioningModel")), "SPOT") == 0 &&
		    strcmp(json_string_value(json_object_get(sch, "instanceTerminationAction")),
		    "DELETE") == 0 && strcmp(json_string_value(json_object_get(sch,
		    "onHostMaintenance")), "TERMINATE") == 0 &&
		    json_is_false(json_object_get(sch, "automaticRestart")),
		    "scheduling: SPOT, DELETE on termination, TERMINATE on maintenance, no restart");
		ok(strcmp(json_string_value(json_object_get(props, "machineType")), "n1-standard-8")
		    == 0 && strcmp(json_string_value(json_object_get(ga, "acceleratorType")),
		    "nvidia-tesla-t4") == 0 && json_integer_value(json_object_get(ga,
		    "acceleratorCount")) == 1, "machine type and its GPU");
		ok(json_is_true(json_object_get(d, "boot")) && json_is_true(json_object_get(d,
		    "autoDelete")) && strcmp(json_string_value(json_object_get(ip, "diskSizeGb")),
		    "100") == 0 && strcmp(json_string_value(json_object_get(ip, "sourceImage")),
		    ts.image) == 0 && strcmp(json_string_value(json_object_get(ip, "diskType")),
		    "pd-balanced") == 0, "boot disk: the image, 100 GB as a string, deleted with it");
		ok(strcmp(json_string_value(json_object_get(sa, "email")), ts.service_account) == 0 &&
		    strcmp(json_string_value(json_array_get(json_object_get(sa, "scopes"), 0)),
		    SR_GCE_SCOPE) == 0, "the service account, cloud-platform scope");
		ok(json_object_size(lb) == 2 && strcmp(json_string_value(json_object_get(lb,
		    "spotrun-pool")), "p1") == 0 && strcmp(json_string_value(json_object_get(lb,
		    "spotrun-queue")), lq) == 0, "labels: spotrun-pool=p1, spotrun-queue=%s", lq);
		items = json_object_get(json_object_get(props, "metadata"), "items");
		good = json_array_size(items) == 2;
		for (i = 0; i < json_array_size(items); i++) {
			const char *k = json_string_value(json_object_get(json_array_get(items, i),
			    "key"));
			const char *v = json_string_value(json_object_get(json_array_get(items, i),
			    "value"));

			good &= (strcmp(k, "spotrun-queue") == 0 && strcmp(v, "s3://Bucket/Q") == 0) ||
			    (strcmp(k, "user-data") == 0 && strcmp(v, "#cloud-config\n") == 0);
		}
		ok(good, "metadata: the queue's URL and the user-data");
	}
	json_decref(t);

	is_int(sr_gce_create_template(c, &ts, e), SR_GCE_ERROR, "the same name again");
	is_str(e, "create instance template spotrun-pool-p1: alreadyExists: The resource "
	    "'projects/p-test/global/instanceTemplates/spotrun-pool-p1' already exists",
	    "with Compute's reason and message, exactly");
	ts.name = "spotrun-pool-other";
	ts.pool = "other";
	ok(sr_gce_create_template(c, &ts, e) == SR_GCE_OK, "another pool's template");
	ts.name = "Bad_Name";
	ok(sr_gce_create_template(c, &ts, e) == SR_GCE_ERROR && strstr(e, "\"Bad_Name\" is not a "
	    "Compute name") != NULL, "a bad name is refused before any request");

	memset(&gs, 0, sizeof gs);
	gs.name = "spotrun-pool-p1-us-central1";
	gs.region = "us-central1";
	gs.template_name = "spotrun-pool-p1";
	gs.zones = zones;
	gs.target = 2;
	if (!ok(sr_gce_create_group(c, &gs, e) == SR_GCE_OK, "create the regional group, 2 zones, "
	    "target 2"))
		tap_diag("%s", e);
	ok(sr_gce_get_group(c, "us-central1", gs.name, &g, e) == SR_GCE_OK && g.target == 2 &&
	    g.none == 2 && g.creating == 0 && g.stable && g.nzones == 2 &&
	    strcmp(g.zones[0], "us-central1-a") == 0 && strcmp(g.zones[1], "us-central1-b") == 0 &&
	    strcmp(g.target_shape, "ANY") == 0 && strcmp(g.template_name, "spotrun-pool-p1") == 0 &&
	    strcmp(g.region, "us-central1") == 0, "get: target 2, 2 without action, stable, its "
	    "zones, shape ANY, its template");
	is_int(sr_gce_group_instances(c, "us-central1", gs.name, &in, &n, e), SR_GCE_OK,
	    "list its instances");
	for (i = 0, good = n == 2; i < n; i++)
		good &= strncmp(in[i].name, "spotrun-pool-p1-us-central1-", 28) == 0 &&
		    strcmp(in[i].status, "RUNNING") == 0 && strcmp(in[i].action, "NONE") == 0 &&
		    in[i].id[0] != '\0' && strncmp(in[i].zone, "us-central1-", 12) == 0 &&
		    in[i].error_code[0] == '\0';
	ok(good, "2 of them, RUNNING, no action, with ids and zones");
	{
		struct sr_gce_instance *li = NULL;
		size_t nl = 0, k;
		int same = 1;

		is_int(sr_gce_pool_instances(c, "p1", "us-central1", &li, &nl, e), SR_GCE_OK,
		    "the pool's labelled instances in us-central1");
		for (i = 0; i < n; i++) {
			for (k = 0; k < nl && strcmp(li[k].name, in[i].name) != 0; k++)
				;
			same &= k < nl && strcmp(li[k].id, in[i].id) == 0 &&
			    strcmp(li[k].zone, in[i].zone) == 0 &&
			    strcmp(li[k].machine_type, "n1-standard-8") == 0 && li[k].spot == 1 &&
			    strlen(li[k].created) == 29 && li[k].created[19] == '.' &&
			    strcmp(li[k].created + 23, "-00:00") == 0;
		}
		ok(nl == n && same, "... the group's two, the same ids and zones, their machine "
		    "type, SPOT, creationTimestamp");
		free(li);
		is_int(sr_gce_pool_instances(c, "p1", "europe-west4", &li, &nl, e), SR_GCE_OK,
		    "... in europe-west4");
		is_int((int)nl, 0, "... none there");
		free(li);
	}
	free(in);

	is_int(sr_gce_resize_group(c, "us-central1", gs.name, 3, e), SR_GCE_OK, "resize to 3");
	ok(sr_gce_group_instances(c, "us-central1", gs.name, &in, &n, e) == SR_GCE_OK && n == 3,
	    "3 instances");
	free(in);

	/* no capacity in either zone: the fourth is left CREATING */
	hook(0, "POST", "/emu/capacity?zone=us-central1-a&code=ZONE_RESOURCE_POOL_EXHAUSTED", NULL);
	hook(0, "POST", "/emu/capacity?zone=us-central1-b&code=ZONE_RESOURCE_POOL_EXHAUSTED", NULL);
	is_int(sr_gce_resize_group(c, "us-central1", gs.name, 4, e), SR_GCE_OK,
	    "resize to 4 with no capacity: the resize itself succeeds");
	ok(sr_gce_group_instances(c, "us-central1", gs.name, &in, &n, e) == SR_GCE_OK && n == 4,
	    "4 listed");
	for (i = 0, creating = 0; i < n; i++)
		if (strcmp(in[i].action, "CREATING") == 0) {
			creating++;
			ok(in[i].status[0] == '\0' && in[i].id[0] == '\0' &&
			    strcmp(in[i].error_code, "ZONE_RESOURCE_POOL_EXHAUSTED") == 0 &&
			    in[i].error_class == SR_GCE_CAPACITY, "one CREATING, not yet an instance, "
			    "its lastAttempt ZONE_RESOURCE_POOL_EXHAUSTED, class capacity");
			snprintf(want, sizeof want, "The zone 'projects/p-test/zones/%s' does not have "
			    "enough resources available to fulfill the request.  Try a different zone, "
			    "or try again later.", in[i].zone);
			is_str(in[i].error_message, want, "Google's message");
		}
	is_int(creating, 1, "exactly one");
	free(in);
	ok(sr_gce_get_group(c, "us-central1", gs.name, &g, e) == SR_GCE_OK && g.creating == 1 &&
	    g.none == 3 && !g.stable, "get: 1 creating, 3 without action, not stable");
	hook(0, "POST", "/emu/capacity?zone=us-central1-b", NULL);
	ok(sr_gce_get_group(c, "us-central1", gs.name, &g, e) == SR_GCE_OK && g.none == 4 &&
	    g.stable, "capacity back in one zone: all 4, stable");

	/* an operation's error: quota */
	hook(0, "POST", "/emu/fail-op?type=compute.instanceGroupManagers.resize&code=QUOTA_EXCEEDED",
	    NULL);
	is_int(sr_gce_resize_group(c, "us-central1", gs.name, 5, e), SR_GCE_CAPACITY,
	    "a resize whose operation fails with QUOTA_EXCEEDED: capacity");
	is_str(e, "resize group spotrun-pool-p1-us-central1 in us-central1 to 5: QUOTA_EXCEEDED: "
	    "Quota 'PREEMPTIBLE_NVIDIA_L4_GPUS' exceeded.  Limit: 0.0 in region us-central1.",
	    "the operation's code and message");
	ok(sr_gce_get_group(c, "us-central1", gs.name, &g, e) == SR_GCE_OK && g.target == 4,
	    "the target stays 4");
	hook(0, "POST", "/emu/fail-op?type=insert&code=RESOURCE_OPERATION_RATE_EXCEEDED", NULL);
	ts.name = "spotrun-pool-p2";
	ts.pool = "p2";
	is_int(sr_gce_create_template(c, &ts, e), SR_GCE_ERROR, "another operation error: no "
	    "capacity class");
	is_str(e, "create instance template spotrun-pool-p2: RESOURCE_OPERATION_RATE_EXCEEDED: "
	    "Injected failure RESOURCE_OPERATION_RATE_EXCEEDED.", "its code and message");

	is_int(sr_gce_get_group(c, "us-central1", "nope", &g, e), SR_GCE_ERROR, "get no group");
	is_str(e, "get group nope in us-central1: notFound: The resource 'projects/p-test/regions/"
	    "us-central1/instanceGroupManagers/nope' was not found", "notFound, exactly");
	is_int(sr_gce_delete_template(c, "spotrun-pool-p1", e), SR_GCE_ERROR,
	    "a template in use is not deleted");
	ok(strstr(e, "resourceInUseByAnotherResource") != NULL, "%s", e);

	/* a preemption: the group replaces the instance */
	ok(sr_gce_group_instances(c, "us-central1", gs.name, &in, &n, e) == SR_GCE_OK && n == 4,
	    "4 before the preemption");
	{
		char hp[256];

		snprintf(hp, sizeof hp, "/emu/preempt?zone=%s&name=%s", in[0].zone, in[0].name);
		is_int(hook(0, "POST", hp, NULL), 200, "preempt %s", in[0].name);
	}
	free(in);
	ok(sr_gce_group_instances(c, "us-central1", gs.name, &in, &n, e) == SR_GCE_OK && n == 4,
	    "4 after: replaced");
	for (i = 0, good = 1; i < n; i++)
		good &= strcmp(in[i].status, "RUNNING") == 0;
	ok(good, "all RUNNING");
	free(in);

	/* found by label (pages of 2: the lists are paged) */
	is_int(sr_gce_find_pool(c, "p1", &f, e), SR_GCE_OK, "find pool p1");
	ok(f.ngroups == 1 && strcmp(f.groups[0].name, gs.name) == 0 &&
	    strcmp(f.groups[0].region, "us-central1") == 0 && strcmp(f.groups[0].pool, "p1") == 0,
	    "its group, in its region");
	ok(f.ntemplates == 1 && strcmp(f.templates[0].name, "spotrun-pool-p1") == 0 &&
	    strcmp(f.templates[0].machine_type, "n1-standard-8") == 0, "its template, not "
	    "another pool's");
	is_int(f.ninstances, 4, "its 4 instances, by label");
	for (i = 0, good = 1; i < f.ninstances; i++)
		good &= strcmp(f.instances[i].pool, "p1") == 0 &&
		    strcmp(f.instances[i].machine_type, "n1-standard-8") == 0;
	ok(good, "labelled, of the template's type");
	sr_gce_found_free(&f);
	ok(log_count(0, "pageToken=") > 0, "listings followed nextPageToken");

	is_int(sr_gce_delete_pool(c, "p1", &gone, e), SR_GCE_OK, "delete the pool");
	is_int(gone, 2, "a group (with its instances) and a template");
	is_int(sr_gce_find_pool(c, "p1", &f, e), SR_GCE_OK, "find it again");
	ok(f.ngroups == 0 && f.ntemplates == 0 && f.ninstances == 0, "nothing of it found");
	sr_gce_found_free(&f);
	hook(0, "GET", "/emu/state", &body);
	is_str(body, "{\n \"templates\": [\n  \"spotrun-pool-other\"\n ],\n \"groups\": [],\n "
	    "\"instances\": []\n}\n", "the emulator's state: only the other pool's template");
	free(body);
	is_int(sr_gce_delete_pool(c, "p1", &gone, e), SR_GCE_OK, "delete it again: nothing to do");
	is_int(gone, 0, "nothing deleted");

	/* a token Compute refuses is fetched again, once */
	hook(0, "POST", "/emu/revoke", NULL);
	before = log_count(0, "token grant=jwt-bearer");
	n401 = log_count(0, " 401");
	ok(sr_gce_find_pool(c, "p1", &f, e) == SR_GCE_OK, "a call after the tokens were revoked");
	sr_gce_found_free(&f);
	is_int(log_count(0, "token grant=jwt-bearer") - before, 1, "one new token after the 401");
	is_int(log_count(0, " 401") - n401, 1, "one 401");

	/* Google's trouble is tried again; a client error is not */
	n503 = log_count(0, " 503");
	hook(0, "POST", "/emu/http-error?status=503&reason=backendError&count=2", NULL);
	ok(sr_gce_find_pool(c, "p1", &f, e) == SR_GCE_OK, "two 503 backendError, then an answer");
	sr_gce_found_free(&f);
	is_int(log_count(0, " 503") - n503, 2, "both 503s were met");
	hook(0, "POST", "/emu/http-error?status=429&reason=rateLimitExceeded&count=4", NULL);
	is_int(sr_gce_find_pool(c, "p1", &f, e), SR_GCE_ERROR, "four 429s: given up");
	is_str(e, "find pool p1: rateLimitExceeded: Injected rateLimitExceeded.", "%s", e);
	n403 = log_count(0, " 403");
	hook(0, "POST", "/emu/http-error?status=403&reason=forbidden&count=1", NULL);
	is_int(sr_gce_find_pool(c, "p1", &f, e), SR_GCE_ERROR, "a 403 at once");
	is_int(log_count(0, " 403") - n403, 1, "... not tried again");
	sr_gce_close(c);
}

int
main(void)
{
	char e[SR_ERRMAX];

	snprintf(dir, sizeof dir, "%s/t-gce.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	if (sr_http_init(e) == -1)
		sr_fatal("%s", e);
	/* nothing of the user's: no credentials file, project or endpoint */
	setenv("HOME", dir, 1);
	unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
	unsetenv("CLOUDSDK_CONFIG");
	unsetenv("CLOUDSDK_CORE_PROJECT");
	unsetenv("GOOGLE_CLOUD_PROJECT");
	unsetenv("SPOTRUN_GCE_ENDPOINT");
	unsetenv("SPOTRUN_GCE_TOKEN_URI");
	unsetenv("GCE_METADATA_HOST");
	unsetenv("NO_GCE_CHECK");

	test_offline();
	if (system("command -v openssl >/dev/null 2>&1") != 0 ||
	    system("python3 -c 'import http.server' >/dev/null 2>&1") != 0) {
		tap_skip("openssl or python3 missing");
		return tap_done();
	}
	make_key();
	test_jwt();
	emu_start(0, "3600", "2", "2");
	emu_start(1, "2", "3", "500");
	test_credentials();
	test_refresh();
	test_engine();
	sr_http_cleanup();
	return tap_done();
}
