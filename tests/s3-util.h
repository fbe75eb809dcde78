/*
 * s3-util.h: helpers for the C tests of the S3 family (t-store-s3,
 * t-store-gs, t-s3-region, t-s3-race) against the test S3 server (Ceph RGW,
 * started by build-aux/test-all through tests/rgw.sh; its address and keys
 * in SPOTRUN_TEST_S3_*) or tests/gcsemu.py: skip, or fail under
 * SPOTRUN_TEST_REQUIRE_S3=1, without a server; the keys into the
 * environment as spotrun reads them and this machine's AWS set-up kept out;
 * the aws CLI for set-up and cross-checks; a bucket per test; the fault
 * proxy in front of RGW. What every store test shares is tests/store-util.h.
 * Header-only, included once per test program after tap.h.
 */
#ifndef SR_S3_UTIL_H
#define SR_S3_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "store-util.h"
#include "store.h"
#include "util.h"

/* Keep this machine's AWS set-up out of the test (config and credential
 * files, profile, region, endpoint, CA bundle, a session token, the
 * metadata service), then start the HTTP engine; dies when it cannot. The
 * caller puts the keys it means in the environment. */
SU_FN void
su_isolate(void)
{
	char err[SR_ERRMAX];

	setenv("AWS_CONFIG_FILE", "/dev/null", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null", 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("AWS_ENDPOINT_URL");
	unsetenv("AWS_ENDPOINT_URL_S3");
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_REGION");
	unsetenv("AWS_DEFAULT_REGION");
	unsetenv("AWS_CA_BUNDLE");
	if (sr_http_init(err) == -1)
		sr_fatal("%s", err);
}

/* Skip the whole test without a server (fail when one is required), else
 * put the server's keys where spotrun's credential chain finds them first
 * and nothing of this machine's AWS set-up in the way. */
SU_FN void
su_require(void)
{
	if (su_env("SPOTRUN_TEST_S3_ENDPOINT")[0] == '\0') {
		if (strcmp(su_env("SPOTRUN_TEST_REQUIRE_S3"), "1") == 0) {
			ok(0, "no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset) and "
			    "SPOTRUN_TEST_REQUIRE_S3=1: build-aux/test-all could not start Ceph RGW");
			exit(tap_done());
		}
		tap_skip_all("no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset; build-aux/test-all "
		    "starts Ceph RGW)");
	}
	setenv("AWS_ACCESS_KEY_ID", su_env("SPOTRUN_TEST_S3_ACCESS_KEY"), 1);
	setenv("AWS_SECRET_ACCESS_KEY", su_env("SPOTRUN_TEST_S3_SECRET_KEY"), 1);
	su_isolate();
}

/* Whether the test server is there for the part of a test that also runs
 * without one: 1 with its keys set as su_require sets them; else 0, after
 * a failed test line when a server is required (SPOTRUN_TEST_REQUIRE_S3=1)
 * or a comment that `what` is not tested. */
SU_FN int
su_server_maybe(const char *what)
{
	if (su_env("SPOTRUN_TEST_S3_ENDPOINT")[0] != '\0') {
		setenv("AWS_ACCESS_KEY_ID", su_env("SPOTRUN_TEST_S3_ACCESS_KEY"), 1);
		setenv("AWS_SECRET_ACCESS_KEY", su_env("SPOTRUN_TEST_S3_SECRET_KEY"), 1);
		su_isolate();
		return 1;
	}
	if (strcmp(su_env("SPOTRUN_TEST_REQUIRE_S3"), "1") == 0)
		ok(0, "no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset) and SPOTRUN_TEST_REQUIRE_S3=1: "
		    "build-aux/test-all could not start Ceph RGW");
	else
		tap_diag("%s not tested: no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset)", what);
	return 0;
}

/* The shell command that runs the aws CLI with args against the test
 * server (keys through the environment, never on a command line), for
 * every command of the line; malloc'd. */
SU_FN char *
su_aws_cmd(const char *fmt, va_list ap)
{
	char *args, *cmd;

	if (vasprintf(&args, fmt, ap) == -1)
		sr_fatal("vasprintf: out of memory");
	cmd = sr_asprintf("export AWS_ACCESS_KEY_ID=\"$SPOTRUN_TEST_S3_ACCESS_KEY\" "
	    "AWS_SECRET_ACCESS_KEY=\"$SPOTRUN_TEST_S3_SECRET_KEY\" AWS_DEFAULT_REGION=us-east-1 "
	    "AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null "
	    "AWS_EC2_METADATA_DISABLED=true; aws --endpoint-url \"$SPOTRUN_TEST_S3_ENDPOINT\" %s",
	    args);
	free(args);
	return cmd;
}

/* The aws CLI against the test server; its exit status. */
SU_FN int
su_aws(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	cmd = su_aws_cmd(fmt, ap);
	va_end(ap);
	fflush(stdout);
	rc = system(cmd);
	free(cmd);
	return rc;
}

/* The aws CLI's output (trailing newlines removed) into out; its status
 * (-1 when it cannot be run). */
SU_FN int
su_aws_out(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	cmd = su_aws_cmd(fmt, ap);
	va_end(ap);
	rc = su_cmd_out(out, len, cmd);
	free(cmd);
	return rc;
}

/* Create a bucket named TAG-PID-TIME into out; dies when it cannot. */
SU_FN void
su_bucket_new(char *out, size_t len, const char *tag)
{
	snprintf(out, len, "%s-%d-%lx", tag, (int)getpid(), (long)time(NULL));
	if (su_aws("s3api create-bucket --bucket %s >/dev/null", out) != 0)
		sr_fatal("cannot create bucket %s with the aws CLI", out);
}

/* Remove the bucket with its objects and multipart uploads. */
SU_FN void
su_bucket_rm(const char *bucket)
{
	su_aws("s3api list-multipart-uploads --bucket %s --query 'Uploads[].[Key,UploadId]' "
	    "--output text 2>/dev/null | while read -r k id; do [ \"$k\" = None ] || "
	    "aws --endpoint-url \"$SPOTRUN_TEST_S3_ENDPOINT\" s3api abort-multipart-upload "
	    "--bucket %s --key \"$k\" --upload-id \"$id\" >/dev/null 2>&1; done", bucket, bucket);
	su_aws("s3 rb --force s3://%s >/dev/null 2>&1", bucket);
}

/* How many multipart uploads the bucket holds (-1 when the CLI fails). */
SU_FN int
su_uploads(const char *bucket)
{
	char out[64];
	int n;

	if (su_aws_out(out, sizeof out, "s3api list-multipart-uploads --bucket %s --query "
	    "'length(Uploads || `[]`)' --output text", bucket) != 0 || sscanf(out, "%d", &n) != 1)
		return -1;
	return n;
}

/* tests/faultproxy in front of the test S3 server. */
SU_FN void
su_proxy_start(struct su_proxy *p, const char *fault)
{
	su_proxy_start_to(p, su_env("SPOTRUN_TEST_S3_ENDPOINT"), fault);
}

#endif
