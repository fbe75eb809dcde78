/*
 * creds.c: credentials and settings for the s3:// and gs:// stores, found
 * as the AWS CLI and gsutil find them (see creds.h): the chain of sources,
 * the cache of role credentials with its refresh, and the store settings
 * (region, endpoint, CA bundle). The INI files are read by creds-ini.c and
 * the instance role by creds-imds.c.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "creds-int.h"
#include "creds.h"
#include "util.h"

#define IMDS_DEFAULT	"http://169.254.169.254"
#define GCS_ENDPOINT	"https://storage.googleapis.com"
#define SHOW_MAX	100	/* longest setting a message quotes */

#define AWS_WHAT	"find AWS credentials"
#define AWS_FIX		"set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or a profile in " \
			"~/.aws/credentials, or run on an EC2 instance with a role"
#define GCS_WHAT	"find GCS HMAC keys"
#define GCS_FIX		"set GS_ACCESS_KEY_ID/GS_SECRET_ACCESS_KEY, or gs_access_key_id/" \
			"gs_secret_access_key under [Credentials] in ~/.boto (make HMAC " \
			"keys with `gsutil hmac create`)"

/* What the AWS and GCS resolvers need: the chain's argument. */
struct sources {
	enum sr_creds_kind kind;
	char *profile;			/* from the options, or NULL */
	char *imds;			/* from the options, or NULL */
	int no_imds;			/* from the options */
};

/* The profile and the two AWS files, as one resolution sees them. */
struct aws_files {
	char name[128];			/* the profile */
	const char *named_by;		/* NULL, "AWS_PROFILE" or "the store's options" */
	char csec[160];			/* the profile's section in the config file */
	struct sr_ini *cred, *conf;	/* NULL until loaded */
};

/* Keys that make a profile's credentials come from elsewhere: spotrun
 * does not follow them, and says so. */
static const char *const unsupported[] = {
	"role_arn", "credential_process", "sso_session", "sso_start_url",
	"web_identity_token_file", "credential_source", NULL
};

static int
is_true(const char *v)
{
	return v != NULL && strcasecmp(v, "true") == 0;
}

static void
append(char *buf, size_t len, const char *fmt, ...) SR_PRINTF(3, 4);

/* Append a formatted note to buf, after ", " when buf is not empty. */
static void
append(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n > 0 && n + 2 < len) {
		memcpy(buf + n, ", ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* The home directory: $HOME, else the password entry's. */
static void
home(char *buf, size_t len)
{
	const char *h = sr_creds_env("HOME");
	struct passwd pw, *res = NULL;
	char tmp[4096];

	if (h == NULL && getpwuid_r(getuid(), &pw, tmp, sizeof tmp, &res) == 0 &&
	    res != NULL)
		h = pw.pw_dir;
	snprintf(buf, len, "%s", h != NULL ? h : "/");
}

/* The file named by env var, with a leading "~" expanded, else HOME/rel;
 * NULL with err on out-of-memory. */
static char *
file_path(const char *var, const char *rel, char *err)
{
	const char *v = sr_creds_env(var);
	char h[4096];

	home(h, sizeof h);
	if (v == NULL)
		return sr_try_asprintf(err, "%s/%s", h, rel);
	if (v[0] == '~' && (v[1] == '/' || v[1] == '\0'))
		return sr_try_asprintf(err, "%s%s", h, v + 1);
	return sr_try_strdup(v, err);
}

static int
load(const char *var, const char *rel, struct sr_ini **f, char *err)
{
	char *path = file_path(var, rel, err);
	int r;

	*f = NULL;
	if (path == NULL)
		return sr_err_prefix(err, "read %s", rel);
	r = sr_ini_load(path, f, err);
	free(path);
	return r;
}

/* Name the profile and its config section; the files are loaded later. */
static int
aws_profile(const char *opt, struct aws_files *af, char *err)
{
	const char *name = opt;

	memset(af, 0, sizeof *af);
	if (name != NULL)
		af->named_by = "the store's options";
	else if ((name = sr_creds_env("AWS_PROFILE")) != NULL)
		af->named_by = "AWS_PROFILE";
	else
		name = "default";
	if (strlen(name) >= sizeof af->name)
		return sr_err(err, "use AWS profile: its name is longer than %zu bytes",
		    sizeof af->name - 1);
	snprintf(af->name, sizeof af->name, "%s", name);
	snprintf(af->csec, sizeof af->csec, "profile %s", name);
	return 0;
}

static int
load_conf(struct aws_files *af, char *err)
{
	if (af->conf != NULL)
		return 0;
	if (load("AWS_CONFIG_FILE", ".aws/config", &af->conf, err) == -1)
		return -1;
	/* The default profile is [default] in the config file; the CLI also
	 * takes [profile default]. */
	if (strcmp(af->name, "default") == 0 &&
	    (sr_ini_has_section(af->conf, "default") ||
	    !sr_ini_has_section(af->conf, "profile default")))
		snprintf(af->csec, sizeof af->csec, "default");
	return 0;
}

static int
load_cred(struct aws_files *af, char *err)
{
	if (af->cred != NULL)
		return 0;
	return load("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials", &af->cred, err);
}

static void
aws_files_free(struct aws_files *af)
{
	sr_ini_free(af->cred);
	sr_ini_free(af->conf);
}

/* A profile named by the user must exist, as the CLI insists. */
static int
check_profile(struct aws_files *af, char *err)
{
	if (af->named_by == NULL || sr_ini_has_section(af->conf, af->csec))
		return 0;
	if (load_cred(af, err) == -1)
		return -1;
	if (sr_ini_has_section(af->cred, af->name))
		return 0;
	return sr_err(err, "use AWS profile %s (named by %s): no [%s] in %s and no [%s] in "
	    "%s; add it, or name another profile", af->name, af->named_by, af->name,
	    sr_ini_path(af->cred), af->csec, sr_ini_path(af->conf));
}

/*
 * Keys from [sec] of f: key names ak, sk and tk (NULL: no token). 1 when
 * found (out filled, but for source); 0 when none are there, with the
 * reason appended to note; -1 with err for half a pair or a key too long.
 */
static int
keys_from(const struct sr_ini *f, const char *sec, const char *ak, const char *sk,
    const char *tk, const char *what, struct sr_creds *out, char *note, size_t len,
    char *err)
{
	const char *a, *s, *t = NULL;
	int i;

	if (!sr_ini_exists(f)) {
		append(note, len, "%s: no such file", sr_ini_path(f));
		return 0;
	}
	if (!sr_ini_has_section(f, sec)) {
		append(note, len, "%s: no [%s]", sr_ini_path(f), sec);
		return 0;
	}
	a = sr_ini_get(f, sec, ak);
	s = sr_ini_get(f, sec, sk);
	if (a != NULL && *a == '\0')
		a = NULL;
	if (s != NULL && *s == '\0')
		s = NULL;
	if (a == NULL && s == NULL) {
		for (i = 0; tk != NULL && unsupported[i] != NULL; i++) {
			if (sr_ini_get(f, sec, unsupported[i]) != NULL) {
				append(note, len, "%s: [%s] has %s, which spotrun does not "
				    "follow", sr_ini_path(f), sec, unsupported[i]);
				return 0;
			}
		}
		append(note, len, "%s: no %s in [%s]", sr_ini_path(f), ak, sec);
		return 0;
	}
	if (a == NULL || s == NULL)
		return sr_err(err, "%s: [%s] in %s has %s but no %s; set both", what, sec,
		    sr_ini_path(f), a != NULL ? ak : sk, a != NULL ? sk : ak);
	if (tk != NULL && (t = sr_ini_get(f, sec, tk)) != NULL && *t == '\0')
		t = NULL;
	if (sr_creds_copy(out->access_key, sizeof out->access_key, a) == -1)
		return sr_err(err, "%s: %s in [%s] of %s is longer than %zu bytes", what, ak,
		    sec, sr_ini_path(f), sizeof out->access_key - 1);
	if (sr_creds_copy(out->secret_key, sizeof out->secret_key, s) == -1)
		return sr_err(err, "%s: %s in [%s] of %s is longer than %zu bytes", what, sk,
		    sec, sr_ini_path(f), sizeof out->secret_key - 1);
	if (t != NULL && sr_creds_copy(out->session_token, sizeof out->session_token, t) == -1)
		return sr_err(err, "%s: %s in [%s] of %s is longer than %zu bytes", what, tk,
		    sec, sr_ini_path(f), sizeof out->session_token - 1);
	out->expires = 0;
	return 1;
}

/* Keys from the environment variables ak, sk (and tk, when not NULL): 1
 * when found, 0 when neither is set, -1 with err for half a pair. */
static int
keys_from_env(const char *ak, const char *sk, const char *tk, const char *what,
    struct sr_creds *out, char *err)
{
	const char *a = sr_creds_env(ak), *s = sr_creds_env(sk);
	const char *t = tk != NULL ? sr_creds_env(tk) : NULL;

	if (a == NULL && s == NULL)
		return 0;
	if (a == NULL || s == NULL)
		return sr_err(err, "%s: %s is set but %s is not; set both (or neither, to use "
		    "the other sources)", what, a != NULL ? ak : sk, a != NULL ? sk : ak);
	if (sr_creds_copy(out->access_key, sizeof out->access_key, a) == -1)
		return sr_err(err, "%s: %s is longer than %zu bytes", what, ak,
		    sizeof out->access_key - 1);
	if (sr_creds_copy(out->secret_key, sizeof out->secret_key, s) == -1)
		return sr_err(err, "%s: %s is longer than %zu bytes", what, sk,
		    sizeof out->secret_key - 1);
	if (t != NULL && sr_creds_copy(out->session_token, sizeof out->session_token, t) == -1)
		return sr_err(err, "%s: %s is longer than %zu bytes", what, tk,
		    sizeof out->session_token - 1);
	out->expires = 0;
	snprintf(out->source, sizeof out->source, "env");
	return 1;
}

/* The metadata service's base URL, without a trailing '/'. */
static void
imds_base(const struct sources *c, char *buf, size_t len)
{
	const char *b = c->imds;
	size_t n;

	if (b == NULL && (b = sr_creds_env("SPOTRUN_AWS_ENDPOINT")) == NULL &&
	    (b = sr_creds_env("AWS_EC2_METADATA_SERVICE_ENDPOINT")) == NULL)
		b = IMDS_DEFAULT;
	snprintf(buf, len, "%s", b);
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '/')
		buf[--n] = '\0';
}

static int
resolve_aws(struct sources *c, struct sr_creds *out, char *err)
{
	char tried[SR_ERRMAX] = "", note[SR_ERRMAX] = "", ierr[SR_ERRMAX], base[1024];
	struct aws_files af;
	int r;

	if ((r = keys_from_env("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
	    "AWS_SESSION_TOKEN", AWS_WHAT, out, err)) != 0)
		return r == 1 ? 0 : -1;
	append(tried, sizeof tried, "env (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set)");

	/* The profile: keys all from the credentials file, else all from the
	 * config file. */
	if (aws_profile(c->profile, &af, err) == -1)
		return -1;
	if (load_cred(&af, err) == -1 || load_conf(&af, err) == -1 ||
	    check_profile(&af, err) == -1) {
		aws_files_free(&af);
		return -1;
	}
	r = keys_from(af.cred, af.name, "aws_access_key_id", "aws_secret_access_key",
	    "aws_session_token", AWS_WHAT, out, note, sizeof note, err);
	if (r == 1)
		snprintf(out->source, sizeof out->source, "profile %s (%s)", af.name,
		    sr_ini_path(af.cred));
	else if (r == 0) {
		r = keys_from(af.conf, af.csec, "aws_access_key_id", "aws_secret_access_key",
		    "aws_session_token", AWS_WHAT, out, note, sizeof note, err);
		if (r == 1)
			snprintf(out->source, sizeof out->source, "profile %s (%s)", af.name,
			    sr_ini_path(af.conf));
	}
	aws_files_free(&af);
	if (r != 0)
		return r == 1 ? 0 : -1;
	append(tried, sizeof tried, "profile %s (%s)", af.name, note);

	if (is_true(sr_creds_env("AWS_EC2_METADATA_DISABLED"))) {
		append(tried, sizeof tried, "instance role (AWS_EC2_METADATA_DISABLED=true)");
	} else if (c->no_imds) {
		append(tried, sizeof tried, "instance role (not asked: this provider asks no "
		    "metadata address)");
	} else {
		imds_base(c, base, sizeof base);
		if (sr_imds_role_creds(base, out, ierr) == 0)
			return 0;
		/* out of memory is no reason to say "none found" */
		if (sr_err_is_oom(ierr))
			return sr_err(err, "%s: %s", AWS_WHAT, ierr);
		append(tried, sizeof tried, "instance role (%s)", ierr);
	}
	return sr_creds_none_found(err, AWS_WHAT, tried, AWS_FIX);
}

static int
resolve_gcs(struct sources *c, struct sr_creds *out, char *err)
{
	char tried[SR_ERRMAX] = "", note[SR_ERRMAX] = "";
	struct sr_ini *f;
	int r;

	if ((r = keys_from_env("GS_ACCESS_KEY_ID", "GS_SECRET_ACCESS_KEY", NULL, GCS_WHAT,
	    out, err)) != 0)
		return r == 1 ? 0 : -1;
	append(tried, sizeof tried, "env (GS_ACCESS_KEY_ID and GS_SECRET_ACCESS_KEY not set)");
	if (load("BOTO_CONFIG", ".boto", &f, err) == -1)
		return -1;
	r = keys_from(f, "Credentials", "gs_access_key_id", "gs_secret_access_key", NULL,
	    GCS_WHAT, out, note, sizeof note, err);
	if (r == 1)
		snprintf(out->source, sizeof out->source, "boto config %s", sr_ini_path(f));
	sr_ini_free(f);
	if (r != 0)
		return r == 1 ? 0 : -1;
	append(tried, sizeof tried, "boto config (%s)", note);
	return sr_creds_none_found(err, GCS_WHAT, tried, GCS_FIX);
}

/* ---- store settings ---- */

/* Check and copy a region; from names where it came from. */
static int
set_region(struct sr_store_config *cfg, const char *v, const char *from, char *err)
{
	char b[SHOW_MAX + 4];
	size_t n = strlen(v);

	if (n >= sizeof cfg->region || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_.") != n)
		return sr_err(err, "use region from %s: \"%s\" is not a region name (at most "
		    "%zu letters, digits, '-', '_' or '.'), such as us-east-1", from,
		    sr_creds_shown(v, SHOW_MAX, b, sizeof b), sizeof cfg->region - 1);
	memcpy(cfg->region, v, n + 1);
	return 0;
}

/* Check and copy an endpoint URL, without trailing '/'. */
static int
set_endpoint(struct sr_store_config *cfg, const char *v, const char *from, char *err)
{
	char b[SHOW_MAX + 4];
	size_t n = strlen(v);

	while (n > 0 && v[n - 1] == '/')
		n--;
	if ((strncasecmp(v, "http://", 7) != 0 && strncasecmp(v, "https://", 8) != 0) ||
	    n <= 8 || strcspn(v, " \t\r\n") < n)
		return sr_err(err, "use endpoint from %s: \"%s\" is not an http:// or https:// "
		    "URL", from, sr_creds_shown(v, SHOW_MAX, b, sizeof b));
	if (n >= sizeof cfg->endpoint)
		return sr_err(err, "use endpoint from %s: longer than %zu bytes", from,
		    sizeof cfg->endpoint - 1);
	memcpy(cfg->endpoint, v, n);
	cfg->endpoint[n] = '\0';
	return 0;
}

static int
set_ca(struct sr_store_config *cfg, const char *v, const char *from, char *err)
{
	if (sr_creds_copy(cfg->ca_bundle, sizeof cfg->ca_bundle, v) == -1)
		return sr_err(err, "use CA bundle from %s: longer than %zu bytes", from,
		    sizeof cfg->ca_bundle - 1);
	return 0;
}

/* "PATH:LINE" of key in [sec] of f, into buf. */
static const char *
where(const struct sr_ini *f, const char *sec, const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%d", sr_ini_path(f), sr_ini_line(f, sec, key));
	return buf;
}

/* The first environment variable of names (NULL-terminated) that is set;
 * *which names it. */
static const char *
first_env(const char *const *names, const char **which)
{
	const char *v;

	for (; *names != NULL; names++)
		if ((v = sr_creds_env(*names)) != NULL) {
			*which = *names;
			return v;
		}
	return NULL;
}

static int
config_aws(const struct sr_creds_opts *o, struct sr_store_config *cfg, char *err)
{
	static const char *const region_env[] = { "AWS_REGION", "AWS_DEFAULT_REGION", NULL };
	static const char *const endpoint_env[] = { "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL",
	    NULL };
	char at[4200], svc[160];
	struct aws_files af;
	const char *v, *from, *sv;
	int r = -1;

	if (aws_profile(o->profile, &af, err) == -1)
		return -1;
	if (load_conf(&af, err) == -1 || check_profile(&af, err) == -1)
		goto out;
	snprintf(cfg->profile, sizeof cfg->profile, "%s", af.name);

	if ((v = first_env(region_env, &from)) != NULL) {
		if (set_region(cfg, v, from, err) == -1)
			goto out;
	} else if ((v = sr_ini_get(af.conf, af.csec, "region")) != NULL && *v != '\0') {
		if (set_region(cfg, v, where(af.conf, af.csec, "region", at, sizeof at),
		    err) == -1)
			goto out;
	} else
		snprintf(cfg->region, sizeof cfg->region, "us-east-1");

	/* The endpoint, in the CLI's order: the S3 variable, the global one,
	 * the profile's services section, the profile's own endpoint_url. */
	if (!is_true(sr_creds_env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) &&
	    !is_true(sr_ini_get(af.conf, af.csec, "ignore_configured_endpoint_urls"))) {
		sv = sr_ini_get(af.conf, af.csec, "services");
		snprintf(svc, sizeof svc, "services %s", sv != NULL ? sv : "");
		if ((v = first_env(endpoint_env, &from)) != NULL) {
			if (set_endpoint(cfg, v, from, err) == -1)
				goto out;
		} else if (sv != NULL &&
		    (v = sr_ini_get(af.conf, svc, "s3.endpoint_url")) != NULL && *v != '\0') {
			if (set_endpoint(cfg, v, where(af.conf, svc, "s3.endpoint_url", at,
			    sizeof at), err) == -1)
				goto out;
		} else if ((v = sr_ini_get(af.conf, af.csec, "endpoint_url")) != NULL &&
		    *v != '\0') {
			if (set_endpoint(cfg, v, where(af.conf, af.csec, "endpoint_url", at,
			    sizeof at), err) == -1)
				goto out;
		}
	}

	if ((v = sr_creds_env("AWS_CA_BUNDLE")) != NULL) {
		if (set_ca(cfg, v, "AWS_CA_BUNDLE", err) == -1)
			goto out;
	} else if ((v = sr_ini_get(af.conf, af.csec, "ca_bundle")) != NULL && *v != '\0') {
		if (set_ca(cfg, v, where(af.conf, af.csec, "ca_bundle", at, sizeof at),
		    err) == -1)
			goto out;
	}
	r = 0;
out:
	aws_files_free(&af);
	return r;
}

static int
config_gcs(struct sr_store_config *cfg, char *err)
{
	char at[4200];
	struct sr_ini *f;
	const char *v;
	int r = -1;

	snprintf(cfg->region, sizeof cfg->region, "auto");
	if ((v = sr_creds_env("GS_ENDPOINT_URL")) != NULL) {
		if (set_endpoint(cfg, v, "GS_ENDPOINT_URL", err) == -1)
			return -1;
	} else
		snprintf(cfg->endpoint, sizeof cfg->endpoint, "%s", GCS_ENDPOINT);
	if (load("BOTO_CONFIG", ".boto", &f, err) == -1)
		return -1;
	if ((v = sr_ini_get(f, "Boto", "ca_certificates_file")) != NULL && *v != '\0' &&
	    set_ca(cfg, v, where(f, "Boto", "ca_certificates_file", at, sizeof at), err) == -1)
		goto out;
	r = 0;
out:
	sr_ini_free(f);
	return r;
}

int
sr_store_config_load(const struct sr_creds_opts *o, struct sr_store_config *cfg, char *err)
{
	memset(cfg, 0, sizeof *cfg);
	switch (o->kind) {
	case SR_CREDS_AWS:
		return config_aws(o, cfg, err);
	case SR_CREDS_GCS:
		return config_gcs(cfg, err);
	}
	return sr_err(err, "load store settings: unknown kind %d", (int)o->kind);
}

/* ---- the chain ---- */

static int
resolve(void *arg, struct sr_creds *out, char *err)
{
	struct sources *c = arg;

	return c->kind == SR_CREDS_GCS ? resolve_gcs(c, out, err) : resolve_aws(c, out, err);
}

static void
sources_free(void *arg)
{
	struct sources *c = arg;

	free(c->profile);
	free(c->imds);
	free(c);
}

int
sr_creds_chain_new(const struct sr_creds_opts *o, struct sr_creds_chain **out, char *err)
{
	struct sources *c;

	*out = NULL;
	if (o->kind != SR_CREDS_AWS && o->kind != SR_CREDS_GCS)
		return sr_err(err, "create a credentials chain: unknown kind %d", (int)o->kind);
	if ((c = sr_try_calloc(1, sizeof *c, err)) == NULL)
		return sr_err_prefix(err, "create a credentials chain");
	c->kind = o->kind;
	c->no_imds = o->no_imds;
	if ((o->profile != NULL && (c->profile = sr_try_strdup(o->profile, err)) == NULL) ||
	    (o->imds_endpoint != NULL &&
	    (c->imds = sr_try_strdup(o->imds_endpoint, err)) == NULL)) {
		sources_free(c);
		return sr_err_prefix(err, "create a credentials chain");
	}
	if ((*out = sr_creds_chain_make(resolve, c, sources_free, err)) == NULL)
		return -1;	/* c freed by it */
	return 0;
}
