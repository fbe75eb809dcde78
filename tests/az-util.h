/*
 * az-util.h: helpers for the C tests of the az:// store against Azurite
 * (started by build-aux/test-all through tests/azurite.sh; its address,
 * account and key in SPOTRUN_TEST_AZ_*): skip, or fail under
 * SPOTRUN_TEST_REQUIRE_AZ=1, without it; the key into the environment as
 * the Azure CLI reads it, and this machine's Azure set-up kept out (no
 * connection string, SAS, client id or CA bundle of its own, the metadata
 * services on a closed port); the Azure CLI (az, Debian's azure-cli) for
 * set-up and cross-checks, with its connection string in its environment,
 * never on a command line, and its files in a directory of the test's; a
 * container per test; Azurite's access log counted. What every store test
 * shares is tests/store-util.h. Header-only, included once per test
 * program after tap.h.
 */
#ifndef SR_AZ_UTIL_H
#define SR_AZ_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "mdemu-util.h"
#include "store-util.h"
#include "util.h"

#define AU_FN static __attribute__((unused))

/* The Azure CLI's own directory (its config and logs), made by au_require. */
static char au_cli_dir[4096];

AU_FN void
au_cli_dir_rm(void)
{
	char *cmd;

	if (au_cli_dir[0] == '\0')
		return;
	cmd = sr_asprintf("rm -rf '%s'", au_cli_dir);
	if (system(cmd) != 0)
		printf("# cleanup: %s failed\n", cmd);
	free(cmd);
}

/* Keep this machine's Azure set-up out of the test and every metadata
 * service on loopback, then start the HTTP engine. The caller puts the
 * credentials it means in the environment. */
AU_FN void
au_isolate(void)
{
	char err[SR_ERRMAX];

	unsetenv("AZURE_STORAGE_CONNECTION_STRING");
	unsetenv("AZURE_STORAGE_SAS_TOKEN");
	unsetenv("AZURE_STORAGE_KEY");
	unsetenv("AZURE_STORAGE_ACCOUNT");
	unsetenv("AZURE_CLIENT_ID");
	unsetenv("REQUESTS_CA_BUNDLE");
	no_cloud();
	if (sr_http_init(err) == -1)
		sr_fatal("%s", err);
}

/* Put Azurite's account and key where spotrun looks first
 * (AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY), this machine's Azure
 * set-up out of the way, and make the Azure CLI's directory. */
AU_FN void
au_setup(void)
{
	char tmpl[4096];

	au_isolate();
	setenv("AZURE_STORAGE_ACCOUNT", su_env("SPOTRUN_TEST_AZ_ACCOUNT"), 1);
	setenv("AZURE_STORAGE_KEY", su_env("SPOTRUN_TEST_AZ_KEY"), 1);
	snprintf(tmpl, sizeof tmpl, "%s/az-cli.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpl) == NULL)
		sr_fatal("mkdtemp %s: %s", tmpl, strerror(errno));
	snprintf(au_cli_dir, sizeof au_cli_dir, "%s", tmpl);
	atexit(au_cli_dir_rm);
}

/* Skip the whole test without Azurite (fail when it is required), else
 * au_setup. */
AU_FN void
au_require(void)
{
	if (su_env("SPOTRUN_TEST_AZ_ENDPOINT")[0] == '\0') {
		if (strcmp(su_env("SPOTRUN_TEST_REQUIRE_AZ"), "1") == 0) {
			ok(0, "no Azurite (SPOTRUN_TEST_AZ_ENDPOINT unset) and "
			    "SPOTRUN_TEST_REQUIRE_AZ=1: build-aux/test-all could not start it");
			exit(tap_done());
		}
		tap_skip_all("no Azurite (SPOTRUN_TEST_AZ_ENDPOINT unset; build-aux/test-all "
		    "starts it)");
	}
	au_setup();
}

AU_FN void au_container_new(char *out, size_t len, const char *tag);

/* For a test whose Azure part is one of several: without Azurite one TAP
 * line (a skip, or a failure when it is required) and 0; else au_setup, a
 * new container named into out, and 1. */
AU_FN int
au_start(char *out, size_t len, const char *tag)
{
	if (su_env("SPOTRUN_TEST_AZ_ENDPOINT")[0] == '\0') {
		if (strcmp(su_env("SPOTRUN_TEST_REQUIRE_AZ"), "1") == 0)
			ok(0, "no Azurite (SPOTRUN_TEST_AZ_ENDPOINT unset) and "
			    "SPOTRUN_TEST_REQUIRE_AZ=1: build-aux/test-all could not start it");
		else
			ok(1, "the Azurite part # SKIP no Azurite (SPOTRUN_TEST_AZ_ENDPOINT unset; "
			    "build-aux/test-all starts it)");
		return 0;
	}
	au_setup();
	au_container_new(out, len, tag);
	return 1;
}

/* The shell command that runs the Azure CLI with args against Azurite
 * (with tls the HTTPS one, its CA trusted): the connection string is built
 * by the shell from the environment, so no secret is in any process's
 * argv; malloc'd. */
AU_FN char *
au_cli_cmd(int tls, const char *fmt, va_list ap)
{
	char *args, *cmd;

	if (vasprintf(&args, fmt, ap) == -1)
		sr_fatal("vasprintf: out of memory");
	cmd = sr_asprintf("export AZURE_CONFIG_DIR='%s' AZURE_CORE_COLLECT_TELEMETRY=no %s"
	    "AZURE_STORAGE_CONNECTION_STRING=\"DefaultEndpointsProtocol=%s;"
	    "AccountName=$SPOTRUN_TEST_AZ_ACCOUNT;AccountKey=$SPOTRUN_TEST_AZ_KEY;"
	    "BlobEndpoint=$SPOTRUN_TEST_AZ_%sENDPOINT;\"; unset AZURE_STORAGE_KEY "
	    "AZURE_STORAGE_ACCOUNT AZURE_STORAGE_SAS_TOKEN; az %s", au_cli_dir,
	    tls ? "REQUESTS_CA_BUNDLE=\"$SPOTRUN_TEST_AZ_CA\" " : "", tls ? "https" : "http",
	    tls ? "TLS_" : "", args);
	free(args);
	return cmd;
}

/* Run the Azure CLI (au_cli_cmd); its exit status. */
AU_FN int
au_cli_vrun(int tls, const char *fmt, va_list ap)
{
	char *cmd = au_cli_cmd(tls, fmt, ap);
	int rc;

	fflush(stdout);
	rc = system(cmd);
	free(cmd);
	return rc;
}

/* The Azure CLI against the HTTPS Azurite; its exit status. */
AU_FN int
au_cli_tls(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = au_cli_vrun(1, fmt, ap);
	va_end(ap);
	return rc;
}

/* The Azure CLI; its exit status. */
AU_FN int
au_cli(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = au_cli_vrun(0, fmt, ap);
	va_end(ap);
	return rc;
}

/* The Azure CLI's output (trailing newlines removed) into out; its status
 * (-1 when it cannot be run). */
AU_FN int
au_cli_out(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	cmd = au_cli_cmd(0, fmt, ap);
	va_end(ap);
	rc = su_cmd_out(out, len, cmd);
	free(cmd);
	return rc;
}

/* The output of a Python script run with /usr/bin/python3 (which sees the
 * Azure SDK that Debian's azure-cli brings), args after it, with `svc`
 * bound to a BlobServiceClient for Azurite (its connection string made
 * from the environment); trailing newlines removed, into out. Its status
 * (-1 when it cannot be run). */
AU_FN int
au_py_out(char *out, size_t len, const char *script, const char *args)
{
	char *cmd = sr_asprintf("/usr/bin/python3 -c 'import os, sys\n"
	    "from azure.storage.blob import BlobServiceClient\n"
	    "e = os.environ\n"
	    "svc = BlobServiceClient.from_connection_string(\"DefaultEndpointsProtocol=http;"
	    "AccountName=%%s;AccountKey=%%s;BlobEndpoint=%%s;\" %% (e[\"SPOTRUN_TEST_AZ_ACCOUNT\"], "
	    "e[\"SPOTRUN_TEST_AZ_KEY\"], e[\"SPOTRUN_TEST_AZ_ENDPOINT\"]))\n%s' %s", script,
	    args);
	int rc = su_cmd_out(out, len, cmd);

	free(cmd);
	return rc;
}

/* The blobs of container under prefix that have only uncommitted blocks
 * (a block upload never committed), as the Azure SDK lists them with
 * include=uncommittedblobs and not without: sorted, tab-separated, into
 * out. (The Azure CLI 2.45 cannot list them: its --include has no
 * uncommitted blobs.) */
AU_FN void
au_uncommitted(const char *container, const char *prefix, char *out, size_t len)
{
	char *args = sr_asprintf("'%s' '%s'", container, prefix);

	if (au_py_out(out, len, "c = svc.get_container_client(sys.argv[1])\n"
	    "com = set(b.name for b in c.list_blobs(name_starts_with=sys.argv[2]))\n"
	    "print(\"\\t\".join(sorted(b.name for b in c.list_blobs(name_starts_with=sys.argv[2], "
	    "include=[\"uncommittedblobs\"]) if b.name not in com)))", args) != 0)
		snprintf(out, len, "(listing the uncommitted blobs with the Azure SDK failed)");
	free(args);
}

/* Create a container named TAG-PID-TIME (TAG: lowercase, digits, '-') into
 * out; dies when it cannot. */
AU_FN void
au_container_new(char *out, size_t len, const char *tag)
{
	snprintf(out, len, "%s-%d-%lx", tag, (int)getpid(), (long)time(NULL));
	if (au_cli("storage container create -n %s -o none", out) != 0)
		sr_fatal("cannot create container %s with the Azure CLI", out);
}

AU_FN void
au_container_rm(const char *name)
{
	au_cli("storage container delete -n %s -o none >/dev/null 2>&1", name);
}

/* Whether Azurite's access log has a line containing s. */
AU_FN int
au_log_has(const char *s)
{
	FILE *f = fopen(su_env("SPOTRUN_TEST_AZ_LOG"), "r");
	char line[8192];
	int found = 0;

	while (f != NULL && !found && fgets(line, sizeof line, f) != NULL)
		found = strstr(line, s) != NULL;
	if (f != NULL)
		fclose(f);
	return found;
}

/* Azurite writes a request's line to its log after it has answered: send
 * one request of our own and wait (2 s at most) until its line is there,
 * so that the log holds every request answered before. */
AU_FN void
au_log_sync(void)
{
	static unsigned serial;
	char token[64], *u, err[SR_ERRMAX];
	struct sr_http_req rq = { .method = "GET", .connect_timeout = 2, .timeout = 5 };
	struct sr_http_resp resp;
	double end = sr_mono() + 2;

	snprintf(token, sizeof token, "logsync-%d-%u", (int)getpid(), ++serial);
	u = sr_asprintf("%s/%s", su_env("SPOTRUN_TEST_AZ_ENDPOINT"), token);
	rq.url = u;
	if (sr_http_do(&rq, &resp, err) == 0)
		sr_http_resp_free(&resp);
	while (!au_log_has(token) && sr_mono() < end)
		usleep(10000);
	free(u);
}

/* Lines of Azurite's access log (SPOTRUN_TEST_AZ_LOG) containing every
 * needle given (NULL ends them), once every request answered so far is
 * in it. */
AU_FN int
au_log_count(const char *needle, ...)
{
	FILE *f;
	char line[8192];
	int n = 0;

	au_log_sync();
	if ((f = fopen(su_env("SPOTRUN_TEST_AZ_LOG"), "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		const char *s = needle;
		va_list ap;
		int all = 1;

		va_start(ap, needle);
		for (; s != NULL; s = va_arg(ap, const char *))
			all = all && strstr(line, s) != NULL;
		va_end(ap);
		n += all;
	}
	fclose(f);
	return n;
}

#endif
