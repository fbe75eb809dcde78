/*
 * gce-auth.c: the GCP engine's access tokens (gce-auth.h): application
 * default credentials read with jansson, a service account's JWT signed
 * RS256 with OpenSSL's EVP, the token endpoints and the metadata server
 * reached with common/http.c, the token kept under a mutex until near its
 * expiry.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "gce-auth.h"
#include "gce-int.h"
#include "http.h"
#include "imds.h"
#include "json.h"
#include "util.h"

#define FILE_MAX	(64 * 1024)	/* a key file is ~2.4 KB */
#define TOKEN_MAX	4096
#define EARLY		300.0		/* refresh this long before expiry */
#define MD_CONNECT	1.0
#define JWT_LIFE	3600

enum kind { K_USER = 1, K_SERVICE, K_METADATA };

struct sr_gce_auth {
	enum kind kind;
	char file[1024];
	char token_uri[512];
	char client_id[256], client_secret[256];
	char *refresh_token;		/* K_USER */
	char client_email[256], key_id[128];
	char *private_key;		/* K_SERVICE: PEM */
	char project[128], quota_project[128];
	char metadata[512];		/* K_METADATA: the base URL */
	char source[1400];
	double timeout;
	pthread_mutex_t mu;
	char token[TOKEN_MAX];		/* "" when none kept */
	double expires;			/* sr_mono() */
};

static void
wipe_free(char *s)
{
	if (s != NULL) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

/* ---- the file ---- */

/* A string member of o into dst, or -1 naming the file and the key. */
static int
member(json_t *o, const char *key, int required, const char *file, const char *type, char *dst,
    size_t cap, char *err)
{
	json_t *v = json_object_get(o, key);

	dst[0] = '\0';
	if (v == NULL || json_is_null(v)) {
		if (required)
			return sr_err(err, "read credentials %s: %s: no \"%s\"", file, type, key);
		return 0;
	}
	if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= cap)
		return sr_err(err, "read credentials %s: %s: \"%s\" is not a string of 1 to %zu "
		    "bytes", file, type, key, cap - 1);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int
member_dup(json_t *o, const char *key, const char *file, const char *type, char **dst, char *err)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL || !json_is_string(v) || json_string_length(v) == 0)
		return sr_err(err, "read credentials %s: %s: %s \"%s\"", file, type,
		    v == NULL ? "no" : "not a string:", key);
	return (*dst = sr_try_strdup(json_string_value(v), err)) == NULL ? -1 : 0;
}

static int
read_file(struct sr_gce_auth *a, const char *path, char *err)
{
	const char *type, *uri;
	json_error_t je;
	json_t *root, *t;
	char *buf, e[SR_ERRMAX];
	size_t len;
	int oom, rc = -1;

	snprintf(a->file, sizeof a->file, "%s", path);
	if (sr_read_file(path, FILE_MAX, &buf, &len, e) == -1)
		return sr_err(err, "read credentials %s: %s", path, e);
	root = sr_json_loadb(buf, len, 0, &je, &oom);
	explicit_bzero(buf, len);
	free(buf);
	if (root == NULL)
		return oom ? sr_err_oom(err, "read credentials") :
		    sr_err(err, "read credentials %s: line %d: %s", path, je.line, je.text);
	if (!json_is_object(root) || (t = json_object_get(root, "type")) == NULL ||
	    !json_is_string(t)) {
		sr_err(err, "read credentials %s: no \"type\" (authorized_user or service_account)",
		    path);
		goto out;
	}
	type = json_string_value(t);
	if (strcmp(type, "authorized_user") == 0) {
		a->kind = K_USER;
		if (member(root, "client_id", 1, path, type, a->client_id, sizeof a->client_id,
		    err) == -1 || member(root, "client_secret", 1, path, type, a->client_secret,
		    sizeof a->client_secret, err) == -1 ||
		    member_dup(root, "refresh_token", path, type, &a->refresh_token, err) == -1 ||
		    member(root, "quota_project_id", 0, path, type, a->quota_project,
		    sizeof a->quota_project, err) == -1)
			goto out;
		snprintf(a->project, sizeof a->project, "%s", a->quota_project);
		snprintf(a->source, sizeof a->source, "authorized user (%s)", path);
	} else if (strcmp(type, "service_account") == 0) {
		a->kind = K_SERVICE;
		if (member(root, "client_email", 1, path, type, a->client_email,
		    sizeof a->client_email, err) == -1 ||
		    member_dup(root, "private_key", path, type, &a->private_key, err) == -1 ||
		    member(root, "private_key_id", 0, path, type, a->key_id, sizeof a->key_id,
		    err) == -1 || member(root, "project_id", 0, path, type, a->project,
		    sizeof a->project, err) == -1)
			goto out;
		snprintf(a->source, sizeof a->source, "service account %s (%s)", a->client_email,
		    path);
	} else {
		sr_err(err, "read credentials %s: \"type\" is \"%.64s\": want authorized_user or "
		    "service_account", path, type);
		goto out;
	}
	if (member(root, "token_uri", 0, path, type, a->token_uri, sizeof a->token_uri, err) == -1)
		goto out;
	if (a->token_uri[0] == '\0')
		snprintf(a->token_uri, sizeof a->token_uri, "%s",
		    (uri = getenv("SPOTRUN_GCE_TOKEN_URI")) != NULL && uri[0] != '\0' ? uri :
		    SR_GCE_TOKEN_URI);
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int
sr_gce_auth_new(const struct sr_gce_auth_opts *o, struct sr_gce_auth **out, char *err)
{
	struct sr_gce_auth *a;
	const char *env, *home, *cfg, *md;
	char path[1024];
	struct stat st;

	*out = NULL;
	if ((a = sr_try_calloc(1, sizeof *a, err)) == NULL)
		return -1;
	pthread_mutex_init(&a->mu, NULL);
	a->timeout = o->timeout > 0 ? o->timeout : 30;
	path[0] = '\0';
	if (o->file != NULL)
		snprintf(path, sizeof path, "%s", o->file);
	else if ((env = getenv("GOOGLE_APPLICATION_CREDENTIALS")) != NULL && env[0] != '\0')
		snprintf(path, sizeof path, "%s", env);
	else {
		if ((cfg = getenv("CLOUDSDK_CONFIG")) != NULL && cfg[0] != '\0')
			snprintf(path, sizeof path, "%s/application_default_credentials.json", cfg);
		else if ((home = getenv("HOME")) != NULL && home[0] != '\0')
			snprintf(path, sizeof path,
			    "%s/.config/gcloud/application_default_credentials.json", home);
		if (path[0] != '\0' && stat(path, &st) == -1 && errno == ENOENT)
			path[0] = '\0';
	}
	if (path[0] != '\0') {
		if (read_file(a, path, err) == -1) {
			sr_gce_auth_free(a);
			return -1;
		}
		*out = a;
		return 0;
	}
	if (o->no_metadata || sr_imds_off(SR_IMDS_OFF_GCP)) {
		sr_gce_auth_free(a);
		return sr_err(err, "find GCP credentials: none: set GOOGLE_APPLICATION_CREDENTIALS "
		    "or run `gcloud auth application-default login` (the metadata server is not "
		    "asked: %s)", o->no_metadata ? "the caller forbids it" : "NO_GCE_CHECK");
	}
	a->kind = K_METADATA;
	if (o->metadata != NULL)
		snprintf(a->metadata, sizeof a->metadata, "%s", o->metadata);
	else if ((md = getenv("GCE_METADATA_HOST")) != NULL && md[0] != '\0')
		snprintf(a->metadata, sizeof a->metadata, "http://%s", md);
	else
		snprintf(a->metadata, sizeof a->metadata, "%s", SR_GCE_METADATA);
	snprintf(a->source, sizeof a->source, "metadata server %s", a->metadata);
	*out = a;
	return 0;
}

void
sr_gce_auth_free(struct sr_gce_auth *a)
{
	if (a == NULL)
		return;
	wipe_free(a->refresh_token);
	wipe_free(a->private_key);
	pthread_mutex_destroy(&a->mu);
	explicit_bzero(a, sizeof *a);
	free(a);
}

const char *
sr_gce_auth_project(const struct sr_gce_auth *a)
{
	return a->project;
}

const char *
sr_gce_auth_quota_project(const struct sr_gce_auth *a)
{
	return a->quota_project;
}

const char *
sr_gce_auth_source(const struct sr_gce_auth *a)
{
	return a->source;
}

/* ---- the JWT ---- */

/* base64url without padding of n bytes at p, appended to s (its room
 * counted by the caller). */
static void
b64url(char *s, const void *p, size_t n)
{
	size_t i, k = strlen(s);

	EVP_EncodeBlock((unsigned char *)s + k, p, (int)n);
	for (i = k; s[i] != '\0'; i++) {
		if (s[i] == '+')
			s[i] = '-';
		else if (s[i] == '/')
			s[i] = '_';
		else if (s[i] == '=') {
			s[i] = '\0';
			break;
		}
	}
}

int
sr_gce_jwt(const char *pem, const char *kid, const char *iss, const char *aud,
    const char *scope, long iat, char **out, char *err)
{
	json_t *h, *c;
	char *hs = NULL, *cs = NULL, *jwt = NULL;
	unsigned char *sig = NULL;
	size_t siglen = 0, cap;
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *md = NULL;
	BIO *bio;
	int rc = -1;

	*out = NULL;
	h = json_pack("{s:s, s:s}", "alg", "RS256", "typ", "JWT");
	c = json_pack("{s:s, s:s, s:s, s:I, s:I}", "iss", iss, "scope", scope, "aud", aud,
	    "iat", (json_int_t)iat, "exp", (json_int_t)iat + JWT_LIFE);
	if (h != NULL && kid != NULL && kid[0] != '\0' &&
	    json_object_set_new(h, "kid", json_string(kid)) == -1) {
		json_decref(h);
		h = NULL;
	}
	if (h == NULL || c == NULL || (hs = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER)) ==
	    NULL || (cs = json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER)) == NULL) {
		sr_err_oom(err, "sign JWT");
		goto out;
	}
	if ((bio = BIO_new_mem_buf(pem, -1)) == NULL) {
		sr_err_oom(err, "sign JWT");
		goto out;
	}
	key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	BIO_free(bio);
	if (key == NULL || EVP_PKEY_base_id(key) != EVP_PKEY_RSA) {
		sr_err(err, "sign JWT: \"private_key\" is not a PEM RSA private key");
		goto out;
	}
	cap = 4 * (strlen(hs) + strlen(cs)) / 3 + 8 + 2 * (size_t)EVP_PKEY_size(key) + 16;
	if ((jwt = sr_try_calloc(1, cap, err)) == NULL)
		goto out;
	b64url(jwt, hs, strlen(hs));
	strcat(jwt, ".");
	b64url(jwt, cs, strlen(cs));
	if ((md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestSign(md, NULL, &siglen, (const unsigned char *)jwt, strlen(jwt)) != 1 ||
	    (sig = sr_try_malloc(siglen, err)) == NULL ||
	    EVP_DigestSign(md, sig, &siglen, (const unsigned char *)jwt, strlen(jwt)) != 1) {
		sr_err(err, "sign JWT: OpenSSL could not sign with the key");
		goto out;
	}
	strcat(jwt, ".");
	b64url(jwt, sig, siglen);
	*out = jwt;
	jwt = NULL;
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	free(sig);
	free(jwt);
	free(hs);
	free(cs);
	json_decref(h);
	json_decref(c);
	return rc;
}

/* ---- the token endpoints ---- */

/* Here, below gce.c, which calls into this file (no loop of calls). */
void
gce_escape(char *dst, size_t cap, const char *src)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	size_t k = 0;

	for (p = (const unsigned char *)src; *p != '\0' && k + 4 < cap; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~')
			dst[k++] = (char)*p;
		else {
			dst[k++] = '%';
			dst[k++] = hex[*p >> 4];
			dst[k++] = hex[*p & 15];
		}
	}
	dst[k] = '\0';
}

/* Append name=value to a form of cap bytes, value percent-encoded. */
static void
form_add(char *f, size_t cap, const char *name, const char *value)
{
	size_t k = strlen(f);

	k += (size_t)snprintf(f + k, cap - k, "%s%s=", k > 0 ? "&" : "", name);
	gce_escape(f + k, cap - k, value);
}

/* Read {"access_token": ..., "expires_in": N} from a 200, or an OAuth
 * error ({"error": ..., "error_description": ...}) from another status. */
static int
read_token(struct sr_gce_auth *a, const char *what, const struct sr_http_resp *r, char *err)
{
	json_t *root, *t, *e, *d, *x;
	json_error_t je;
	double ttl;
	int oom, rc = -1;

	root = sr_json_loadb(r->body, r->len, 0, &je, &oom);
	if (oom)
		return sr_err_oom(err, what);
	if (r->status != 200) {
		e = json_is_object(root) ? json_object_get(root, "error") : NULL;
		d = json_is_object(root) ? json_object_get(root, "error_description") : NULL;
		if (json_is_string(e))
			sr_err(err, "%s: HTTP %ld: %.100s%s%.200s", what, r->status,
			    json_string_value(e), json_is_string(d) ? ": " : "",
			    json_is_string(d) ? json_string_value(d) : "");
		else
			sr_err(err, "%s: HTTP %ld", what, r->status);
		json_decref(root);
		return -1;
	}
	t = json_is_object(root) ? json_object_get(root, "access_token") : NULL;
	x = json_is_object(root) ? json_object_get(root, "expires_in") : NULL;
	if (!json_is_string(t) || json_string_length(t) == 0 ||
	    json_string_length(t) >= sizeof a->token || !json_is_number(x)) {
		sr_err(err, "%s: the reply has no access_token and expires_in", what);
		goto out;
	}
	memcpy(a->token, json_string_value(t), json_string_length(t) + 1);
	ttl = json_number_value(x);
	/* a short-lived token is used for half its life rather than not at all */
	a->expires = sr_mono() + (ttl > 2 * EARLY ? ttl - EARLY : ttl / 2);
	rc = 0;
out:
	if (t != NULL && json_is_string(t))
		explicit_bzero((char *)json_string_value(t), json_string_length(t));
	json_decref(root);
	return rc;
}

static int
fetch(struct sr_gce_auth *a, char *err)
{
	const char *form_hdr[] = { "Content-Type: application/x-www-form-urlencoded", NULL };
	const char *md_hdr[] = { "Metadata-Flavor: Google", NULL };
	const char *capture[] = { "Metadata-Flavor", NULL };
	struct sr_http_req rq;
	struct sr_http_resp r;
	char what[1600], *form = NULL, *jwt = NULL, *url = NULL;
	size_t cap;
	int rc = -1;

	memset(&rq, 0, sizeof rq);
	rq.connect_timeout = a->timeout < 10 ? a->timeout : 10;
	rq.timeout = a->timeout;
	snprintf(what, sizeof what, "get token from %s", a->source);
	if (a->kind == K_METADATA) {
		if ((url = sr_try_asprintf(err, "%s/computeMetadata/v1/instance/service-accounts/"
		    "default/token", a->metadata)) == NULL)
			return -1;
		rq.method = "GET";
		rq.url = url;
		rq.headers = md_hdr;
		rq.capture = capture;
		rq.connect_timeout = MD_CONNECT;
	} else {
		if (a->kind == K_SERVICE && sr_gce_jwt(a->private_key, a->key_id, a->client_email,
		    a->token_uri, SR_GCE_SCOPE, (long)sr_now(), &jwt, err) == -1)
			return sr_err_prefix(err, "%s", what);
		cap = 512 + 3 * (jwt != NULL ? strlen(jwt) : strlen(a->refresh_token) +
		    strlen(a->client_id) + strlen(a->client_secret));
		if ((form = sr_try_calloc(1, cap, err)) == NULL) {
			wipe_free(jwt);
			return -1;
		}
		if (a->kind == K_SERVICE) {
			form_add(form, cap, "grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer");
			form_add(form, cap, "assertion", jwt);
		} else {
			form_add(form, cap, "grant_type", "refresh_token");
			form_add(form, cap, "client_id", a->client_id);
			form_add(form, cap, "client_secret", a->client_secret);
			form_add(form, cap, "refresh_token", a->refresh_token);
		}
		wipe_free(jwt);
		rq.method = "POST";
		rq.url = a->token_uri;
		rq.headers = form_hdr;
		rq.body = form;
		rq.body_len = strlen(form);
	}
	if (sr_http_do(&rq, &r, err) == -1) {
		sr_err_prefix(err, "%s", what);
		goto out;
	}
	if (a->kind == K_METADATA && r.status == 200 && (r.captured[0] == NULL ||
	    strcmp(r.captured[0], "Google") != 0))
		sr_err(err, "%s: the reply lacks \"Metadata-Flavor: Google\": not a metadata "
		    "server", what);
	else
		rc = read_token(a, what, &r, err);
	if (r.body != NULL)
		explicit_bzero(r.body, r.len);
	sr_http_resp_free(&r);
out:
	wipe_free(form);
	free(url);
	return rc;
}

int
sr_gce_auth_token(struct sr_gce_auth *a, char *tok, size_t len, char *err)
{
	int rc = 0;

	pthread_mutex_lock(&a->mu);
	if (a->token[0] == '\0' || sr_mono() >= a->expires)
		rc = fetch(a, err);
	if (rc == 0 && strlen(a->token) >= len)
		rc = sr_err(err, "get token from %s: longer than %zu bytes", a->source, len - 1);
	if (rc == 0)
		memcpy(tok, a->token, strlen(a->token) + 1);
	pthread_mutex_unlock(&a->mu);
	return rc;
}

void
sr_gce_auth_reject(struct sr_gce_auth *a)
{
	pthread_mutex_lock(&a->mu);
	explicit_bzero(a->token, sizeof a->token);
	pthread_mutex_unlock(&a->mu);
}

int
sr_gce_auth_metadata_project(struct sr_gce_auth *a, char *out, size_t len, char *err)
{
	const char *hdr[] = { "Metadata-Flavor: Google", NULL };
	struct sr_http_req rq;
	struct sr_http_resp r;
	char *url;
	int rc = -1;

	if (a->kind != K_METADATA)
		return sr_err(err, "get project: the credentials (%s) name none", a->source);
	if ((url = sr_try_asprintf(err, "%s/computeMetadata/v1/project/project-id",
	    a->metadata)) == NULL)
		return -1;
	memset(&rq, 0, sizeof rq);
	rq.method = "GET";
	rq.url = url;
	rq.headers = hdr;
	rq.connect_timeout = MD_CONNECT;
	rq.timeout = a->timeout;
	if (sr_http_do(&rq, &r, err) == -1)
		sr_err_prefix(err, "get project from %s", a->source);
	else if (r.status != 200 || r.len == 0 || r.len >= len ||
	    strspn(r.body, "abcdefghijklmnopqrstuvwxyz0123456789-:.") != r.len)
		sr_err(err, "get project from %s: HTTP %ld, %zu bytes: not a project id",
		    a->source, r.status, r.len);
	else {
		memcpy(out, r.body, r.len + 1);
		rc = 0;
	}
	sr_http_resp_free(&r);
	free(url);
	return rc;
}
