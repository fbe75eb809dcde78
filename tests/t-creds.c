/*
 * t-creds.c: credentials and store settings for s3:// and gs:// (store/s3/creds.c)
 * on temporary files named through the environment: the AWS CLI's order
 * (env, the credentials file, the config file, the instance role), profile
 * selection and section naming, session tokens, region and endpoint
 * precedence, malformed and tolerated INI, the error when nothing is found
 * (and that it comes fast), the instance role from tests/mdemu with its
 * refresh before expiry, invalidation, 16 threads during a refresh, GCS
 * HMAC keys, and that no message ever holds a secret. The real ~/.aws is
 * never read (HOME is a temp dir) and the metadata service is always the
 * emulator or 127.0.0.1:1, never 169.254.169.254.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>		/* mdemu-util.h needs it */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "creds.h"
#include "http.h"
#include "util.h"
#include "tap.h"
#include "mdemu-util.h"
#include "oom.h"
#include "oom-trial.h"

#define ROLE_URL	"/latest/meta-data/iam/security-credentials/spotrun-role"
#define GET_ROLE	"GET " ROLE_URL " ttl=- token=good -> 200"
#define AWS_FIX		"set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or a profile in " \
			"~/.aws/credentials, or run on an EC2 instance with a role"
#define NTHREADS	16

static char tmpdir[] = "/tmp/t-creds.XXXXXX";
static char homedir[600], credfile[700], conffile[700];

/* Every message and source the tests saw, checked for secrets at the end. */
static char *seen[512];
static int nseen;

static void
keep(const char *s)
{
	if (nseen < (int)SR_ARRAY_LEN(seen))
		seen[nseen++] = sr_strdup(s);
}

static void
wfile(const char *path, const char *text)
{
	char err[SR_ERRMAX];

	if (sr_write_file_atomic(path, text, strlen(text), 0, err) == -1)
		sr_fatal("%s", err);
}

/* No AWS or GCS settings but a HOME of our own, and the metadata service
 * off (127.0.0.1:1 should it be asked anyway). */
static void
clean_env(void)
{
	static const char *const vars[] = {
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
		"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SHARED_CREDENTIALS_FILE",
		"AWS_CONFIG_FILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
		"AWS_ENDPOINT_URL_S3", "AWS_CA_BUNDLE", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
		"AWS_EC2_METADATA_SERVICE_ENDPOINT", "GS_ACCESS_KEY_ID",
		"GS_SECRET_ACCESS_KEY", "GS_ENDPOINT_URL", "BOTO_CONFIG", "BOTO_PATH", NULL
	};
	int i;

	for (i = 0; vars[i] != NULL; i++)
		unsetenv(vars[i]);
	setenv("HOME", homedir, 1);
	setenv("SPOTRUN_AWS_ENDPOINT", "http://127.0.0.1:1", 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	unlink(credfile);
	unlink(conffile);
}

/* Resolve once with a fresh chain; err (and the source) kept. */
static int
get(enum sr_creds_kind kind, const char *profile, const char *imds, struct sr_creds *cr,
    char *err)
{
	struct sr_creds_opts o = { kind, profile, imds, 0 };
	struct sr_creds_chain *c;
	int r;

	memset(cr, 0, sizeof *cr);
	err[0] = '\0';
	if (sr_creds_chain_new(&o, &c, err) == -1)
		sr_fatal("sr_creds_chain_new: %s", err);
	r = sr_creds_get(c, cr, err);
	sr_creds_chain_free(c);
	keep(r == 0 ? cr->source : err);
	return r;
}

static int
config(enum sr_creds_kind kind, const char *profile, struct sr_store_config *cfg, char *err)
{
	struct sr_creds_opts o = { kind, profile, NULL, 0 };
	int r;

	err[0] = '\0';
	r = sr_store_config_load(&o, cfg, err);
	if (r == -1)
		keep(err);
	return r;
}

static const char cred_text[] =
	"# the shared credentials file\n"
	"[default]\n"
	"aws_access_key_id = AKIADEFAULT\n"
	"aws_secret_access_key = default-s3cr3t\n"
	"\n"
	"; another comment\n"
	"[work]\n"
	"aws_access_key_id=AKIAWORK\n"
	"AWS_Secret_Access_Key: work-s3cr3t\n"
	"aws_session_token = work-t0k3n\n"
	"unknown_key = whatever ; an inline comment\n"
	"[profile pfx]\n"
	"aws_access_key_id = AKIAPFX\n"
	"aws_secret_access_key = pfx-s3cr3t\n"
	"[half]\n"
	"aws_access_key_id = AKIAHALF\n";

static const char conf_text[] =
	"[default]\n"
	"region = eu-west-1\n"
	"[profile work]\n"
	"aws_access_key_id = AKIAWORKCFG\n"
	"aws_secret_access_key = workcfg-s3cr3t\n"
	"region = us-west-2\n"
	"endpoint_url = http://cfg.example:9000/\n"
	"ca_bundle = /etc/ssl/work.pem\n"
	"s3 =\n"
	"  max_concurrent_requests = 20\n"
	"  addressing_style = path\n"
	"[profile cfgonly]\n"
	"aws_access_key_id = AKIACFGONLY\n"
	"aws_secret_access_key = cfgonly-s3cr3t\n"
	"aws_session_token = cfgonly-t0k3n\n"
	"[plain]\n"
	"aws_access_key_id = AKIAPLAIN\n"
	"aws_secret_access_key = plain-s3cr3t\n"
	"[profile svc]\n"
	"services = mysvc\n"
	"endpoint_url = http://profile.example\n"
	"[services mysvc]\n"
	"s3 =\n"
	"    endpoint_url = http://svc.example:8080\n"
	"[profile sso]\n"
	"sso_session = corp\n"
	"sso_account_id = 123456789012\n"
	"[profile nothing]\n"
	"region = us-east-2\n";

static void
test_env_and_profiles(void)
{
	struct sr_creds cr;
	char err[SR_ERRMAX], want[SR_ERRMAX];

	clean_env();
	wfile(credfile, cred_text);
	wfile(conffile, conf_text);

	setenv("AWS_ACCESS_KEY_ID", "AKIAENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "env-s3cr3t", 1);
	setenv("AWS_SESSION_TOKEN", "env-t0k3n", 1);
	setenv("AWS_PROFILE", "work", 1);
	ok(get(SR_CREDS_AWS, NULL, NULL, &cr, err) == 0, "env: resolved (%s)", err);
	is_str(cr.access_key, "AKIAENV", "env wins over the profiles");
	is_str(cr.secret_key, "env-s3cr3t", "env: the secret");
	is_str(cr.session_token, "env-t0k3n", "env: AWS_SESSION_TOKEN");
	is_str(cr.source, "env", "env: source");
	ok(cr.expires == 0, "env: never expires");
	unsetenv("AWS_SESSION_TOKEN");
	get(SR_CREDS_AWS, NULL, NULL, &cr, err);
	is_str(cr.session_token, "", "env: no session token when unset");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	ok(get(SR_CREDS_AWS, NULL, NULL, &cr, err) == -1, "env: half a pair fails");
	is_str(err, "find AWS credentials: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY "
	    "is not; set both (or neither, to use the other sources)", "env: half a pair message");
	setenv("AWS_SECRET_ACCESS_KEY", "", 1);	/* empty is unset, as for the CLI */
	unsetenv("AWS_ACCESS_KEY_ID");

	ok(get(SR_CREDS_AWS, NULL, NULL, &cr, err) == 0, "AWS_PROFILE=work: resolved (%s)", err);
	is_str(cr.access_key, "AKIAWORK", "AWS_PROFILE selects [work]; the credentials file wins "
	    "over [profile work] in the config file");
	is_str(cr.secret_key, "work-s3cr3t", "profile: the secret (key name in any case, ':')");
	is_str(cr.session_token, "work-t0k3n", "profile: aws_session_token");
	snprintf(want, sizeof want, "profile work (%s)", credfile);
	is_str(cr.source, want, "profile: source names the file");
	ok(cr.expires == 0, "profile: never expires");

	unsetenv("AWS_PROFILE");
	ok(get(SR_CREDS_AWS, NULL, NULL, &cr, err) == 0, "no AWS_PROFILE: resolved");
	is_str(cr.access_key, "AKIADEFAULT", "no AWS_PROFILE: [default]");
	is_str(cr.session_token, "", "profile: no session token");
	snprintf(want, sizeof want, "profile default (%s)", credfile);
	is_str(cr.source, want, "default profile: source");

	ok(get(SR_CREDS_AWS, "cfgonly", NULL, &cr, err) == 0, "opts profile: resolved (%s)", err);
	is_str(cr.access_key, "AKIACFGONLY", "[profile cfgonly] in the config file");
	is_str(cr.session_token, "cfgonly-t0k3n", "config file: aws_session_token");
	snprintf(want, sizeof want, "profile cfgonly (%s)", conffile);
	is_str(cr.source, want, "config file: source");

	ok(get(SR_CREDS_AWS, "plain", NULL, &cr, err) == -1,
	    "[plain] in the config file is not profile plain");
	snprintf(want, sizeof want, "use AWS profile plain (named by the store's options): no "
	    "[plain] in %s and no [profile plain] in %s; add it, or name another profile",
	    credfile, conffile);
	is_str(err, want, "missing profile: message");
	setenv("AWS_PROFILE", "pfx", 1);
	ok(get(SR_CREDS_AWS, NULL, NULL, &cr, err) == -1,
	    "[profile pfx] in the credentials file is not profile pfx");
	snprintf(want, sizeof want, "use AWS profile pfx (named by AWS_PROFILE): no [pfx] in %s "
	    "and no [profile pfx] in %s; add it, or name another profile", credfile, conffile);
	is_str(err, want, "missing profile from AWS_PROFILE: message");
	unsetenv("AWS_PROFILE");

	ok(get(SR_CREDS_AWS, "half", NULL, &cr, err) == -1, "half a pair in a profile fails");
	snprintf(want, sizeof want, "find AWS credentials: [half] in %s has aws_access_key_id "
	    "but no aws_secret_access_key; set both", credfile);
	is_str(err, want, "half a pair in a profile: message");

	ok(get(SR_CREDS_AWS, "sso", NULL, &cr, err) == -1, "an SSO profile is not followed");
	snprintf(want, sizeof want, "find AWS credentials: none found; tried env "
	    "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set), profile sso (%s: no [sso], "
	    "%s: [profile sso] has sso_session, which spotrun does not follow), instance role "
	    "(AWS_EC2_METADATA_DISABLED=true); " AWS_FIX, credfile, conffile);
	is_str(err, want, "SSO profile: the message says why");

	/* Other files, named by the environment ("~" expanded). */
	snprintf(want, sizeof want, "%s/alt", homedir);
	mkdir(want, 0700);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "~/alt/creds", 1);
	setenv("AWS_CONFIG_FILE", "~/alt/conf", 1);
	snprintf(want, sizeof want, "%s/alt/conf", homedir);
	wfile(want, "[profile x]\naws_access_key_id = AKIAALT\naws_secret_access_key = alt-s3cr3t\n");
	ok(get(SR_CREDS_AWS, "x", NULL, &cr, err) == 0 && strcmp(cr.access_key, "AKIAALT") == 0,
	    "AWS_CONFIG_FILE names the config file (%s)", err);
	snprintf(want, sizeof want, "profile x (%s/alt/conf)", homedir);
	is_str(cr.source, want, "AWS_CONFIG_FILE: ~ expanded in the source");
	snprintf(want, sizeof want, "%s/alt/creds", homedir);
	wfile(want, "[x]\naws_access_key_id = AKIAALTC\naws_secret_access_key = altc-s3cr3t\n");
	ok(get(SR_CREDS_AWS, "x", NULL, &cr, err) == 0 && strcmp(cr.access_key, "AKIAALTC") == 0,
	    "AWS_SHARED_CREDENTIALS_FILE names the credentials file");
}

static void
test_long_and_tolerated(void)
{
	struct sr_creds cr;
	char err[SR_ERRMAX], *tok, *text;
	size_t i;

	clean_env();
	/* A session token as long as real ones get (inih's default line is
	 * 200 bytes), CRLF, a BOM, nested settings, unknown sections. */
	tok = sr_malloc(3001);
	for (i = 0; i < 3000; i++)
		tok[i] = "t0k3nABCDEFGHIJKLMNOPQRSTUVWXYZ+/"[i % 33];
	tok[3000] = '\0';
	text = sr_asprintf("\xEF\xBB\xBF[other thing]\r\nfoo = bar\r\n\r\n[default]\r\n"
	    "  aws_access_key_id = AKIALONG\r\naws_secret_access_key = long-s3cr3t\r\n"
	    "aws_session_token = %s\r\n", tok);
	wfile(credfile, text);
	ok(get(SR_CREDS_AWS, NULL, NULL, &cr, err) == 0, "tolerated file: resolved (%s)", err);
	is_str(cr.access_key, "AKIALONG", "BOM, CRLF, indented first key, unknown section");
	is_str(cr.session_token, tok, "a 3000-byte session token is read whole");
	free(text);
	free(tok);

	wfile(credfile, "[default]\naws_access_key_id = AKIAX\naws_secret_access_key = x-s3cr3t\n"
	    "aws_session_token = ");
	ok(get(SR_CREDS_AWS, NULL, NULL, &cr, err) == 0 && strcmp(cr.session_token, "") == 0,
	    "an empty session token is none, the last line without newline");
}

/* A malformed file gives "read FILE:LINE: reason" from both entry points. */
static void
malformed(const char *path, const char *text, size_t len, const char *reason,
    const char *name)
{
	struct sr_store_config cfg;
	struct sr_creds cr;
	char err[SR_ERRMAX], want[SR_ERRMAX];

	clean_env();
	if (sr_write_file_atomic(path, text, len > 0 ? len : strlen(text), 0, err) == -1)
		sr_fatal("%s", err);
	snprintf(want, sizeof want, "read %s%s", path, reason);
	ok(get(SR_CREDS_AWS, NULL, NULL, &cr, err) == -1, "%s: sr_creds_get fails", name);
	is_str(err, want, "%s: message", name);
	if (path == conffile) {
		ok(config(SR_CREDS_AWS, NULL, &cfg, err) == -1, "%s: config load fails", name);
		is_str(err, want, "%s: config load message", name);
	}
}

static void
test_malformed(void)
{
	malformed(credfile, "[default]\naws_access_key_id = AKIABAD\n"
	    "aws_secret_access_key wJalrXUtnFEMI-s3cr3t\n", 0,
	    ":3: expected key = value or [section] (the line is not shown: it may hold a secret)",
	    "a line without '='");
	malformed(conffile, "; comment\n[profile x\nregion = us-east-1\n", 0,
	    ":2: the section header has no closing ']'", "an unclosed section header");
	malformed(conffile, "[default]\nregion = us-east-1\n\n[default]\n", 0,
	    ":4: section [default] appears twice (first on line 1); merge them",
	    "a duplicate section");
	malformed(credfile, "[default]\naws_access_key_id = A\nAWS_ACCESS_KEY_ID = B\n", 0,
	    ":3: key 'aws_access_key_id' appears twice in [default] (first on line 2); keep one",
	    "a duplicate key");
	malformed(credfile, "[default]\naws_session_token = x\nTok3nFragmentXYZ=abc\n"
	    "Tok3nFragmentXYZ=abc\n", 0,
	    ":4: a key appears twice in [default] (first on line 3); keep one",
	    "a duplicate key that may be a secret is not named");
	malformed(conffile, "region = us-east-1\n[default]\n", 0,
	    ":1: a key comes before any [section] header; put it under one, such as [default]",
	    "a key outside any section");
	malformed(credfile, "[default]\n= value\n", 0, ":2: no key name before '='", "no key name");
	malformed(credfile, "[]\n", 0, ":1: empty section name []", "an empty section name");
	malformed(credfile, "[default]\naws_access_key_id = A\0B\n", 34,
	    ":2: the line contains a NUL byte; the file must be text", "a NUL byte");
}

static void
test_none(void)
{
	struct sr_creds cr;
	char err[SR_ERRMAX], want[SR_ERRMAX], head[SR_ERRMAX];
	double t;

	clean_env();
	ok(get(SR_CREDS_AWS, NULL, NULL, &cr, err) == -1, "no credentials anywhere: fails");
	snprintf(want, sizeof want, "find AWS credentials: none found; tried env "
	    "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set), profile default "
	    "(%s: no such file, %s: no such file), instance role "
	    "(AWS_EC2_METADATA_DISABLED=true); " AWS_FIX, credfile, conffile);
	is_str(err, want, "no credentials: the message lists every source and the fix");

	wfile(credfile, "[other]\n");
	wfile(conffile, "[profile nothing]\n[default]\nregion = us-east-2\n");
	get(SR_CREDS_AWS, NULL, NULL, &cr, err);
	snprintf(want, sizeof want, "find AWS credentials: none found; tried env "
	    "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set), profile default "
	    "(%s: no [default], %s: no aws_access_key_id in [default]), instance role "
	    "(AWS_EC2_METADATA_DISABLED=true); " AWS_FIX, credfile, conffile);
	is_str(err, want, "no credentials in existing files: the message says what is missing");

	/* With the metadata service asked (at a closed port): still fast. */
	unsetenv("AWS_EC2_METADATA_DISABLED");
	unlink(credfile);
	unlink(conffile);
	t = sr_mono();
	ok(get(SR_CREDS_AWS, NULL, NULL, &cr, err) == -1, "no credentials, IMDS asked: fails");
	t = sr_mono() - t;
	ok(t < 1.0, "no credentials: fails in %.3f s (< 1 s)", t);
	snprintf(head, sizeof head, "find AWS credentials: none found; tried env "
	    "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set), profile default "
	    "(%s: no such file, %s: no such file), instance role "
	    "(PUT http://127.0.0.1:1/latest/api/token: ", credfile, conffile);
	ok(strncmp(err, head, strlen(head)) == 0, "IMDS failure: the message names the request");
	ok(strlen(err) > strlen("); " AWS_FIX) && strcmp(err + strlen(err) -
	    strlen("); " AWS_FIX), "); " AWS_FIX) == 0, "IMDS failure: ends with the fix");
	tap_diag("%s", err);
}

static void
test_region_endpoint(void)
{
	struct sr_store_config cfg;
	char err[SR_ERRMAX], want[SR_ERRMAX];

	clean_env();
	wfile(credfile, cred_text);
	wfile(conffile, conf_text);

	ok(config(SR_CREDS_AWS, NULL, &cfg, err) == 0, "config default: loaded (%s)", err);
	is_str(cfg.region, "eu-west-1", "region: the profile's region in the config file");
	is_str(cfg.endpoint, "", "endpoint: none");
	is_str(cfg.ca_bundle, "", "CA bundle: none");
	is_str(cfg.profile, "default", "profile: default");
	setenv("AWS_DEFAULT_REGION", "ca-central-1", 1);
	config(SR_CREDS_AWS, NULL, &cfg, err);
	is_str(cfg.region, "ca-central-1", "region: AWS_DEFAULT_REGION over the config file");
	setenv("AWS_REGION", "sa-east-1", 1);
	config(SR_CREDS_AWS, NULL, &cfg, err);
	is_str(cfg.region, "sa-east-1", "region: AWS_REGION over AWS_DEFAULT_REGION");
	unsetenv("AWS_REGION");
	unsetenv("AWS_DEFAULT_REGION");
	config(SR_CREDS_AWS, "cfgonly", &cfg, err);
	is_str(cfg.region, "us-east-1", "region: us-east-1 when none is set");
	is_str(cfg.profile, "cfgonly", "profile: the one named");
	setenv("AWS_REGION", "us east", 1);
	ok(config(SR_CREDS_AWS, NULL, &cfg, err) == -1, "a bad region fails");
	is_str(err, "use region from AWS_REGION: \"us east\" is not a region name (at most 63 "
	    "letters, digits, '-', '_' or '.'), such as us-east-1", "a bad region: message");
	unsetenv("AWS_REGION");

	setenv("AWS_PROFILE", "work", 1);
	ok(config(SR_CREDS_AWS, NULL, &cfg, err) == 0, "config work: loaded (%s)", err);
	is_str(cfg.region, "us-west-2", "region of [profile work]");
	is_str(cfg.endpoint, "http://cfg.example:9000", "endpoint: the profile's endpoint_url, "
	    "without the trailing '/'");
	is_str(cfg.ca_bundle, "/etc/ssl/work.pem", "CA bundle: the profile's ca_bundle");
	setenv("AWS_CA_BUNDLE", "/tmp/env.pem", 1);
	setenv("AWS_ENDPOINT_URL", "http://global.example:1", 1);
	config(SR_CREDS_AWS, NULL, &cfg, err);
	is_str(cfg.endpoint, "http://global.example:1", "endpoint: AWS_ENDPOINT_URL over config");
	is_str(cfg.ca_bundle, "/tmp/env.pem", "CA bundle: AWS_CA_BUNDLE over config");
	setenv("AWS_ENDPOINT_URL_S3", "https://s3only.example:2/", 1);
	config(SR_CREDS_AWS, NULL, &cfg, err);
	is_str(cfg.endpoint, "https://s3only.example:2", "endpoint: AWS_ENDPOINT_URL_S3 over "
	    "AWS_ENDPOINT_URL");
	setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
	config(SR_CREDS_AWS, NULL, &cfg, err);
	is_str(cfg.endpoint, "", "endpoint: AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true ignores all");
	unsetenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
	unsetenv("AWS_ENDPOINT_URL_S3");
	unsetenv("AWS_CA_BUNDLE");

	setenv("AWS_PROFILE", "svc", 1);
	config(SR_CREDS_AWS, NULL, &cfg, err);
	is_str(cfg.endpoint, "http://global.example:1", "endpoint: AWS_ENDPOINT_URL over the "
	    "services section");
	unsetenv("AWS_ENDPOINT_URL");
	config(SR_CREDS_AWS, NULL, &cfg, err);
	is_str(cfg.endpoint, "http://svc.example:8080", "endpoint: the services section's s3 "
	    "endpoint_url over the profile's");
	setenv("AWS_ENDPOINT_URL", "ftp://x.example", 1);
	ok(config(SR_CREDS_AWS, NULL, &cfg, err) == -1, "a bad endpoint fails");
	is_str(err, "use endpoint from AWS_ENDPOINT_URL: \"ftp://x.example\" is not an http:// "
	    "or https:// URL", "a bad endpoint: message");
	unsetenv("AWS_ENDPOINT_URL");
	wfile(conffile, "[profile svc]\nendpoint_url = s3.example.com\n");
	ok(config(SR_CREDS_AWS, NULL, &cfg, err) == -1, "a bad endpoint in the config fails");
	snprintf(want, sizeof want, "use endpoint from %s:2: \"s3.example.com\" is not an "
	    "http:// or https:// URL", conffile);
	is_str(err, want, "a bad endpoint in the config: the message names FILE:LINE");
	unsetenv("AWS_PROFILE");
	ok(config(SR_CREDS_AWS, "nosuch", &cfg, err) == -1, "config: a missing profile fails");
}

static void
test_gcs(void)
{
	struct sr_store_config cfg;
	struct sr_creds cr;
	char err[SR_ERRMAX], want[SR_ERRMAX], boto[700];

	clean_env();
	snprintf(boto, sizeof boto, "%s/.boto", homedir);
	unlink(boto);
	ok(get(SR_CREDS_GCS, NULL, NULL, &cr, err) == -1, "GCS: nothing found");
	snprintf(want, sizeof want, "find GCS HMAC keys: none found; tried env "
	    "(GS_ACCESS_KEY_ID and GS_SECRET_ACCESS_KEY not set), boto config (%s: no such "
	    "file); set GS_ACCESS_KEY_ID/GS_SECRET_ACCESS_KEY, or gs_access_key_id/"
	    "gs_secret_access_key under [Credentials] in ~/.boto (make HMAC keys with "
	    "`gsutil hmac create`)", boto);
	is_str(err, want, "GCS: nothing found: message");

	wfile(boto, "[Credentials]\ngs_access_key_id = GOOGBOTO\n"
	    "gs_secret_access_key = boto-s3cr3t\n[Boto]\nca_certificates_file = /etc/gs.pem\n"
	    "[GSUtil]\nparallel_composite_upload_threshold = 150M\n");
	ok(get(SR_CREDS_GCS, NULL, NULL, &cr, err) == 0, "GCS: ~/.boto read (%s)", err);
	is_str(cr.access_key, "GOOGBOTO", "GCS: ~/.boto access key");
	is_str(cr.secret_key, "boto-s3cr3t", "GCS: ~/.boto secret");
	snprintf(want, sizeof want, "boto config %s", boto);
	is_str(cr.source, want, "GCS: boto source");
	snprintf(want, sizeof want, "%s/other.boto", tmpdir);
	setenv("BOTO_CONFIG", want, 1);
	wfile(want, "[Credentials]\ngs_access_key_id = GOOGOTHER\n");
	ok(get(SR_CREDS_GCS, NULL, NULL, &cr, err) == -1, "GCS: half a pair in BOTO_CONFIG");
	snprintf(boto, sizeof boto, "find GCS HMAC keys: [Credentials] in %s has "
	    "gs_access_key_id but no gs_secret_access_key; set both", want);
	is_str(err, boto, "GCS: BOTO_CONFIG names the file; half a pair: message");
	unsetenv("BOTO_CONFIG");

	setenv("GS_ACCESS_KEY_ID", "GOOGENV", 1);
	setenv("GS_SECRET_ACCESS_KEY", "gsenv-s3cr3t", 1);
	setenv("AWS_ACCESS_KEY_ID", "AKIANOTFORGCS", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "notforgcs-s3cr3t", 1);
	ok(get(SR_CREDS_GCS, NULL, NULL, &cr, err) == 0, "GCS: env");
	is_str(cr.access_key, "GOOGENV", "GCS: env wins over ~/.boto, AWS keys unused");
	is_str(cr.secret_key, "gsenv-s3cr3t", "GCS: env secret");
	is_str(cr.source, "env", "GCS: env source");

	ok(config(SR_CREDS_GCS, NULL, &cfg, err) == 0, "GCS config: loaded (%s)", err);
	is_str(cfg.region, "auto", "GCS: region auto");
	is_str(cfg.endpoint, "https://storage.googleapis.com", "GCS: the default endpoint");
	is_str(cfg.ca_bundle, "/etc/gs.pem", "GCS: the boto config's CA file");
	setenv("GS_ENDPOINT_URL", "http://127.0.0.1:4443", 1);
	config(SR_CREDS_GCS, NULL, &cfg, err);
	is_str(cfg.endpoint, "http://127.0.0.1:4443", "GCS: GS_ENDPOINT_URL");
}

/* ---- out of memory ---- */

/* Keys resolved from the files (a fresh chain each time, so that every
 * trial reads them) or the store settings loaded, under OOM_ALL (inih's
 * line buffer too): exactly what the unarmed run found, or a clean
 * out-of-memory. */
struct creds_trial {
	enum sr_creds_kind kind;
	const char *profile;
	int settings;		/* sr_store_config_load, not the keys */
	struct sr_creds cr;
	struct sr_store_config cfg;
	char want[2048];
	char err[SR_ERRMAX];	/* the last failure's */
};

static void
creds_shown(const struct creds_trial *t, char *out, size_t len)
{
	if (t->settings)
		snprintf(out, len, "%s|%s|%s|%s", t->cfg.region, t->cfg.endpoint, t->cfg.ca_bundle,
		    t->cfg.profile);
	else
		snprintf(out, len, "%s|%s|%s|%s", t->cr.access_key, t->cr.secret_key,
		    t->cr.session_token, t->cr.source);
}

static int
creds_op(void *arg, char *err)
{
	struct creds_trial *t = arg;
	struct sr_creds_opts o = { t->kind, t->profile, NULL, 0 };
	struct sr_creds_chain *c;
	int r;

	memset(&t->cr, 0, sizeof t->cr);
	if (t->settings)
		return sr_store_config_load(&o, &t->cfg, err);
	if (sr_creds_chain_new(&o, &c, err) == -1)
		return -1;
	r = sr_creds_get(c, &t->cr, err);
	sr_creds_chain_free(c);
	snprintf(t->err, sizeof t->err, "%s", r == 0 ? "" : err);
	return r;
}

/* After 0: exactly what the unarmed run found (nothing is left to free:
 * the chain went with the op). */
static int
creds_check(void *arg, int rc, char *why)
{
	struct creds_trial *t = arg;
	char got[2048];

	if (rc != 0)
		return 1;
	creds_shown(t, got, sizeof got);
	if (strcmp(got, t->want) == 0)
		return 1;
	snprintf(why, SR_ERRMAX, "found '%s'", got);
	return 0;
}

static void
creds_trials(const char *name, enum sr_creds_kind kind, const char *profile, int settings,
    const char *want)
{
	static struct creds_trial t;
	struct oom_trial sc = { name, OOM_ALL, creds_op, creds_check, NULL, &t };

	memset(&t, 0, sizeof t);
	t.kind = kind;
	t.profile = profile;
	t.settings = settings;
	snprintf(t.want, sizeof t.want, "%s", want);
	oom_trials(&sc);
}

static void
test_oom(void)
{
	char want[2048], boto[700];

	clean_env();
	wfile(credfile, cred_text);
	wfile(conffile, conf_text);
	/* profile cfgonly: the credentials file is read through, then the
	 * config file has the keys */
	snprintf(want, sizeof want, "AKIACFGONLY|cfgonly-s3cr3t|cfgonly-t0k3n|profile cfgonly (%s)",
	    conffile);
	creds_trials("AWS keys from the credentials and config files", SR_CREDS_AWS, "cfgonly", 0,
	    want);
	creds_trials("the store settings of AWS profile work", SR_CREDS_AWS, "work", 1,
	    "us-west-2|http://cfg.example:9000|/etc/ssl/work.pem|work");
	snprintf(boto, sizeof boto, "%s/.boto", homedir);
	wfile(boto, "[Credentials]\ngs_access_key_id = GOOGBOTO\n"
	    "gs_secret_access_key = boto-s3cr3t\n[Boto]\nca_certificates_file = /etc/gs.pem\n");
	snprintf(want, sizeof want, "GOOGBOTO|boto-s3cr3t||boto config %s", boto);
	creds_trials("GCS HMAC keys from the boto config", SR_CREDS_GCS, NULL, 0, want);
	unlink(boto);
}

/* ---- the instance role ---- */

struct racer {
	struct sr_creds_chain *c;
	pthread_barrier_t *go;
	struct sr_creds cr;
	int r;
	char err[SR_ERRMAX];
};

static void *
race(void *arg)
{
	struct racer *t = arg;

	pthread_barrier_wait(t->go);
	t->r = sr_creds_get(t->c, &t->cr, t->err);
	return NULL;
}

/* The emulator logs a request just after answering it: wait (up to 2 s)
 * for line to appear want times, then a little for any more, and count. */
static int
settled(const struct emu *e, const char *line, int want)
{
	double end = sr_mono() + 2;

	while (log_count(e, line) < want && sr_mono() < end)
		sr_sleep(0.02);
	sr_sleep(0.05);
	return log_count(e, line);
}

/* Whether cr is key set n of the emulator. */
static int
is_emu(const struct sr_creds *cr, int n)
{
	char a[32], s[32], k[32];

	snprintf(a, sizeof a, "ASIAEMU%d", n);
	snprintf(s, sizeof s, "emu-secret-%d", n);
	snprintf(k, sizeof k, "emu-token-%d", n);
	return strcmp(cr->access_key, a) == 0 && strcmp(cr->secret_key, s) == 0 &&
	    strcmp(cr->session_token, k) == 0 && strcmp(cr->source, "instance role spotrun-role") == 0;
}

/* The emulator's role routes want a token, as its other IMDSv2 routes. */
static void
no_token(const struct emu *e)
{
	char *url = sr_asprintf("%s%s", e->url, ROLE_URL), err[SR_ERRMAX];
	struct sr_http_req rq = { .method = "GET", .url = url, .connect_timeout = 1,
	    .timeout = 2 };
	struct sr_http_resp rs;

	ok(sr_http_do(&rq, &rs, err) == 0 && rs.status == 401,
	    "the role's keys without a token: 401");
	sr_http_resp_free(&rs);
	free(url);
	is_int(settled(e, "GET " ROLE_URL " ttl=- token=none -> 401", 1), 1,
	    "... logged as the other AWS routes");
}

static void
test_role(void)
{
	struct sr_creds_opts o = { SR_CREDS_AWS, NULL, NULL, 0 };
	struct sr_creds_chain *c;
	struct sr_creds cr, old;
	char err[SR_ERRMAX];
	struct emu e;
	double t;

	clean_env();
	err[0] = '\0';
	unsetenv("AWS_EC2_METADATA_DISABLED");
	emu_start(&e, tmpdir, NULL);
	setenv("SPOTRUN_AWS_ENDPOINT", e.url, 1);
	sr_creds_chain_new(&o, &c, err);
	t = sr_now();
	ok(sr_creds_get(c, &cr, err) == 0, "role: resolved (%s)", err);
	keep(cr.source);
	ok(is_emu(&cr, 1), "role: key set 1 (%s, source %s)", cr.access_key, cr.source);
	ok(cr.expires > t + 3600 - 2 && cr.expires < t + 3600 + 2,
	    "role: expires from Expiration (%.1f s ahead)", cr.expires - t);
	is_int(settled(&e, "PUT /latest/api/token ttl=21600 token=none -> 200", 1), 1,
	    "role: one IMDSv2 token PUT");
	is_int(settled(&e, "GET /latest/meta-data/iam/security-credentials/ ttl=- token=good "
	    "-> 200", 1), 1, "role: the role listed with the token");
	is_int(settled(&e, GET_ROLE, 1), 1, "role: its keys fetched with the token");
	ok(sr_creds_get(c, &cr, err) == 0 && is_emu(&cr, 1), "role: cached");
	is_int(settled(&e, GET_ROLE, 1), 1, "role: a cached get fetches nothing");
	old = cr;
	sr_creds_invalidate(c);
	ok(sr_creds_get(c, &cr, err) == 0 && is_emu(&cr, 2), "invalidate: key set 2 (%s)",
	    cr.access_key);
	is_int(settled(&e, GET_ROLE, 2), 2, "invalidate: refetched");
	sr_creds_reject(c, &old);
	ok(sr_creds_get(c, &cr, err) == 0 && is_emu(&cr, 2),
	    "rejecting keys already replaced changes nothing");
	sr_creds_reject(c, &cr);
	ok(sr_creds_get(c, &cr, err) == 0 && is_emu(&cr, 3), "rejecting the current keys refetches");
	is_int(sr_creds_resolutions(c), 3, "three resolutions");
	sr_creds_chain_free(c);

	no_token(&e);

	/* The endpoint from the options wins over the environment. */
	setenv("SPOTRUN_AWS_ENDPOINT", "http://127.0.0.1:1", 1);
	ok(get(SR_CREDS_AWS, NULL, e.url, &cr, err) == 0 && is_emu(&cr, 4),
	    "role: the options' IMDS endpoint");
	/* Profile keys come before the role. */
	wfile(credfile, "[default]\naws_access_key_id = AKIAP\naws_secret_access_key = p-s3cr3t\n");
	ok(get(SR_CREDS_AWS, NULL, e.url, &cr, err) == 0 && strcmp(cr.access_key, "AKIAP") == 0,
	    "a profile comes before the instance role");
	unlink(credfile);
	is_int(settled(&e, GET_ROLE, 4), 4, "the profile's keys asked IMDS nothing");
	setenv("AWS_EC2_METADATA_DISABLED", "TRUE", 1);
	ok(get(SR_CREDS_AWS, NULL, e.url, &cr, err) == -1, "AWS_EC2_METADATA_DISABLED=TRUE: no role");
	settled(&e, GET_ROLE, 4);
	is_int(log_grep(&e, "api/token"), 4, "AWS_EC2_METADATA_DISABLED: IMDS not asked");
	unsetenv("AWS_EC2_METADATA_DISABLED");
	/* no_imds (a store opened with no_metadata: the run's provider is
	 * local or signal) does the same */
	o.imds_endpoint = e.url;
	o.no_imds = 1;
	sr_creds_chain_new(&o, &c, err);
	ok(sr_creds_get(c, &cr, err) == -1 && strstr(err, "instance role (not asked: this provider "
	    "asks no metadata address)") != NULL, "no_imds: no role, said (%s)", err);
	sr_creds_chain_free(c);
	settled(&e, GET_ROLE, 4);
	is_int(log_grep(&e, "api/token"), 4, "no_imds: IMDS not asked");
	emu_stop(&e);
}

/* The instance role's keys under OOM (OOM_OURS: three requests to the
 * emulator through http.c): an out-of-memory is said as one, never as
 * "none found"; keys that come are one whole key set of the emulator
 * (which hands out set n to its nth request for them). */
static int
role_check(void *arg, int rc, char *why)
{
	const struct creds_trial *t = arg;
	const char *a = t->cr.access_key;
	int n;

	if (rc != 0) {
		if (strstr(t->err, "none found") != NULL) {
			snprintf(why, SR_ERRMAX, "out of memory taken for no credentials: %s", t->err);
			return 0;
		}
		if (t->cr.access_key[0] == '\0' && t->cr.secret_key[0] == '\0')
			return 1;
		snprintf(why, SR_ERRMAX, "keys left behind by a failure");
		return 0;
	}
	n = strncmp(a, "ASIAEMU", 7) == 0 ? atoi(a + 7) : 0;
	if (n > 0 && is_emu(&t->cr, n) && t->cr.expires > sr_now() + 3000)
		return 1;
	snprintf(why, SR_ERRMAX, "found %s from %s, expiring at %.0f", a, t->cr.source,
	    t->cr.expires);
	return 0;
}

static void
test_role_oom(void)
{
	static struct creds_trial t;
	struct oom_trial sc = { "AWS keys of the instance role (IMDSv2)", OOM_OURS, creds_op,
		role_check, NULL, &t };
	struct emu e;

	clean_env();
	unsetenv("AWS_EC2_METADATA_DISABLED");
	emu_start(&e, tmpdir, NULL);
	setenv("SPOTRUN_AWS_ENDPOINT", e.url, 1);
	memset(&t, 0, sizeof t);
	t.kind = SR_CREDS_AWS;
	oom_trials(&sc);
	emu_stop(&e);
}

static void
test_refresh(void)
{
	const char *args[] = { "-I", "302", NULL };
	struct sr_creds_opts o = { SR_CREDS_AWS, NULL, NULL, 0 };
	struct racer t[NTHREADS];
	pthread_t th[NTHREADS];
	pthread_barrier_t go;
	struct sr_creds_chain *c;
	struct sr_creds cr;
	char err[SR_ERRMAX];
	double t0;
	int i, good = 0;
	struct emu e;

	clean_env();
	unsetenv("AWS_EC2_METADATA_DISABLED");
	emu_start(&e, tmpdir, args);
	o.imds_endpoint = e.url;
	sr_creds_chain_new(&o, &c, err);
	/* Keys that expire in 302 s are due for a refresh 2 s from now
	 * (give or take Expiration's rounding to the second). */
	t0 = sr_mono();
	ok(sr_creds_get(c, &cr, err) == 0 && is_emu(&cr, 1), "refresh: key set 1 (%s)", err);
	ok(sr_creds_get(c, &cr, err) == 0 && is_emu(&cr, 1), "refresh: not due at once");
	is_int(settled(&e, GET_ROLE, 1), 1, "refresh: one fetch so far");
	sr_sleep(3.0 - (sr_mono() - t0));

	pthread_barrier_init(&go, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		t[i].c = c;
		t[i].go = &go;
		if (pthread_create(&th[i], NULL, race, &t[i]) != 0)
			sr_fatal("pthread_create failed");
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		good += t[i].r == 0 && is_emu(&t[i].cr, 2);
	}
	pthread_barrier_destroy(&go);
	is_int(good, NTHREADS, "16 threads during the refresh all get the new key set 2");
	is_int(settled(&e, GET_ROLE, 2), 2, "the emulator saw one refresh, not 16");
	is_int(sr_creds_resolutions(c), 2, "two resolutions");

	/* A refresh that fails while the old keys still hold returns them. */
	emu_stop(&e);
	t0 = sr_mono();
	sr_sleep(3.0);
	ok(sr_creds_get(c, &cr, err) == 0 && is_emu(&cr, 2),
	    "a failed refresh returns the keys that still hold");
	is_int(sr_creds_resolutions(c), 3, "... after trying");
	ok(sr_creds_get(c, &cr, err) == 0 && is_emu(&cr, 2) && sr_creds_resolutions(c) == 3,
	    "... and does not try again at once");
	sr_creds_invalidate(c);
	ok(sr_creds_get(c, &cr, err) == -1, "rejected keys with the service gone: an error");
	keep(err);
	ok(strstr(err, "instance role (PUT http://127.0.0.1:") != NULL,
	    "the error names the failed request");
	sr_creds_chain_free(c);
}

/* Keys within the refresh window from the start are not fetched on every
 * call. */
static void
test_short_lived(void)
{
	const char *args[] = { "-I", "100", NULL };
	struct sr_creds_opts o = { SR_CREDS_AWS, NULL, NULL, 0 };
	struct sr_creds_chain *c;
	struct sr_creds cr;
	char err[SR_ERRMAX];
	struct emu e;
	int i, r = 0;

	clean_env();
	unsetenv("AWS_EC2_METADATA_DISABLED");
	emu_start(&e, tmpdir, args);
	o.imds_endpoint = e.url;
	sr_creds_chain_new(&o, &c, err);
	for (i = 0; i < 20; i++)
		r |= sr_creds_get(c, &cr, err);
	ok(r == 0 && is_emu(&cr, 1), "keys living 100 s: key set 1 (%s)", err);
	is_int(settled(&e, GET_ROLE, 1), 1, "keys living 100 s: fetched once for 20 calls");
	sr_creds_chain_free(c);
	emu_stop(&e);
}

static void
test_no_secret_in_messages(void)
{
	static const char *const secrets[] = {
		"s3cr3t", "t0k3n", "emu-secret", "emu-token", "wJalr", "Tok3nFragment", NULL
	};
	int i, j, bad = 0;

	for (i = 0; i < nseen; i++)
		for (j = 0; secrets[j] != NULL; j++)
			if (strstr(seen[i], secrets[j]) != NULL) {
				tap_diag("a secret in: %s", seen[i]);
				bad++;
			}
	ok(nseen > 40, "%d messages and sources kept", nseen);
	is_int(bad, 0, "no message or source holds a secret");
	for (i = 0; i < nseen; i++)
		free(seen[i]);
}

int
main(void)
{
	char err[SR_ERRMAX];

	if (mkdtemp(tmpdir) == NULL)
		sr_fatal("mkdtemp: %s", strerror(errno));
	snprintf(homedir, sizeof homedir, "%s/home", tmpdir);
	snprintf(credfile, sizeof credfile, "%s/.aws/credentials", homedir);
	snprintf(conffile, sizeof conffile, "%s/.aws/config", homedir);
	snprintf(err, sizeof err, "%s/.aws", homedir);
	if (sr_mkdirs(err, 0700, err) == -1)
		sr_fatal("%s", err);
	if (sr_http_init(err) == -1)
		sr_fatal("%s", err);

	test_env_and_profiles();
	test_long_and_tolerated();
	test_malformed();
	test_none();
	test_region_endpoint();
	test_gcs();
	test_oom();
	test_role();
	test_role_oom();
	test_refresh();
	test_short_lived();
	test_no_secret_in_messages();

	sr_http_cleanup();
	if (sr_rmtree(tmpdir, err) == -1)
		tap_diag("%s", err);
	return tap_done();
}
