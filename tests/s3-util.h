/*
 * s3-util.h: helpers for the C tests against the test S3 server (Ceph RGW,
 * started by build-aux/test-all through tests/rgw.sh; its address and keys
 * in SPOTRUN_TEST_S3_*): skip, or fail under SPOTRUN_TEST_REQUIRE_S3=1,
 * without one; the keys into the environment as spotrun reads them; the aws
 * CLI for set-up and cross-checks; a bucket per test; and tests/faultproxy
 * in front of the server, with its fault switched and its log counted.
 * Header-only, included once per test program after tap.h.
 */
#ifndef SR_S3_UTIL_H
#define SR_S3_UTIL_H

#include <errno.h>
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
#include "util.h"

#define SU_FN static __attribute__((unused))

SU_FN const char *
su_env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? v : "";
}

/* Skip the whole test without a server (fail when one is required), else
 * put the server's keys where spotrun's credential chain finds them first
 * and nothing of this machine's AWS set-up in the way. */
SU_FN void
su_require(void)
{
	char err[SR_ERRMAX];

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
	setenv("AWS_CONFIG_FILE", "/dev/null", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null", 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	unsetenv("AWS_ENDPOINT_URL");
	unsetenv("AWS_ENDPOINT_URL_S3");
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_REGION");
	unsetenv("AWS_DEFAULT_REGION");
	unsetenv("AWS_CA_BUNDLE");
	if (sr_http_init(err) == -1)
		sr_fatal("%s", err);
}

/* The aws CLI against the test server (keys through the environment, never
 * on a command line); its exit status. */
SU_FN int
su_aws(const char *fmt, ...)
{
	va_list ap;
	char *args, *cmd;
	int rc;

	va_start(ap, fmt);
	if (vasprintf(&args, fmt, ap) == -1)
		sr_fatal("vasprintf: out of memory");
	va_end(ap);
	cmd = sr_asprintf("AWS_ACCESS_KEY_ID=\"$SPOTRUN_TEST_S3_ACCESS_KEY\" "
	    "AWS_SECRET_ACCESS_KEY=\"$SPOTRUN_TEST_S3_SECRET_KEY\" AWS_DEFAULT_REGION=us-east-1 "
	    "AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null "
	    "AWS_EC2_METADATA_DISABLED=true aws --endpoint-url \"$SPOTRUN_TEST_S3_ENDPOINT\" %s",
	    args);
	fflush(stdout);
	rc = system(cmd);
	free(cmd);
	free(args);
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
	    "AWS_ACCESS_KEY_ID=\"$SPOTRUN_TEST_S3_ACCESS_KEY\" "
	    "AWS_SECRET_ACCESS_KEY=\"$SPOTRUN_TEST_S3_SECRET_KEY\" AWS_DEFAULT_REGION=us-east-1 "
	    "aws --endpoint-url \"$SPOTRUN_TEST_S3_ENDPOINT\" s3api abort-multipart-upload "
	    "--bucket %s --key \"$k\" --upload-id \"$id\" >/dev/null 2>&1; done", bucket, bucket);
	su_aws("s3 rb --force s3://%s >/dev/null 2>&1", bucket);
}

/* How many multipart uploads the bucket holds (-1 when the CLI fails). */
SU_FN int
su_uploads(const char *bucket)
{
	char *cmd = sr_asprintf("AWS_ACCESS_KEY_ID=\"$SPOTRUN_TEST_S3_ACCESS_KEY\" "
	    "AWS_SECRET_ACCESS_KEY=\"$SPOTRUN_TEST_S3_SECRET_KEY\" AWS_DEFAULT_REGION=us-east-1 "
	    "AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null "
	    "AWS_EC2_METADATA_DISABLED=true aws --endpoint-url \"$SPOTRUN_TEST_S3_ENDPOINT\" "
	    "s3api list-multipart-uploads --bucket %s --query 'length(Uploads || `[]`)' "
	    "--output text", bucket);
	FILE *p;
	int n = -1;

	fflush(stdout);
	if ((p = popen(cmd, "r")) != NULL) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		if (pclose(p) != 0)
			n = -1;
	}
	free(cmd);
	return n;
}

/* tests/faultproxy in front of the test server. */
struct su_proxy {
	pid_t pid;
	int port;
	char *dir, *control, *log;
};

/* Write the control line (a new file each time, so the proxy sees it). */
SU_FN void
su_proxy_fault(struct su_proxy *p, const char *line)
{
	char *tmp = sr_asprintf("%s.new", p->control);
	FILE *f = fopen(tmp, "w");

	if (f == NULL || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0 ||
	    rename(tmp, p->control) != 0)
		sr_fatal("write %s: %s", p->control, strerror(errno));
	free(tmp);
}

/* Start the proxy with fault line in force, its files in a new directory
 * under $TMPDIR; dies when it does not come up. */
SU_FN void
su_proxy_start(struct su_proxy *p, const char *fault)
{
	const char *ep = su_env("SPOTRUN_TEST_S3_ENDPOINT"), *bd = getenv("top_builddir");
	char *bin = sr_asprintf("%s/tests/faultproxy", bd != NULL ? bd : "."), *portfile;
	char *target, tmpl[4096];
	int i;

	snprintf(tmpl, sizeof tmpl, "%s/s3-proxy.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpl) == NULL)
		sr_fatal("mkdtemp %s: %s", tmpl, strerror(errno));
	p->dir = sr_strdup(tmpl);
	p->control = sr_asprintf("%s/control", p->dir);
	p->log = sr_asprintf("%s/proxy.log", p->dir);
	portfile = sr_asprintf("%s/port", p->dir);
	if (strncmp(ep, "http://", 7) != 0)
		sr_fatal("SPOTRUN_TEST_S3_ENDPOINT %s is not http://HOST:PORT", ep);
	target = sr_strdup(ep + 7);
	target[strcspn(target, "/")] = '\0';
	su_proxy_fault(p, fault);
	fflush(stdout);
	if ((p->pid = fork()) == -1)
		sr_fatal("fork: %s", strerror(errno));
	if (p->pid == 0) {
		execl(bin, bin, "-p", portfile, "-t", target, "-c", p->control, "-l", p->log,
		    (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	for (i = 0; i < 100; i++) {
		FILE *f = fopen(portfile, "r");

		if (f != NULL) {
			int got = fscanf(f, "%d", &p->port) == 1;

			fclose(f);
			if (got)
				break;
		}
		if (waitpid(p->pid, NULL, WNOHANG) == p->pid)
			sr_fatal("%s exited at start (run `make` first?)", bin);
		usleep(50000);
	}
	if (i == 100)
		sr_fatal("%s wrote no port file in 5 s", bin);
	free(bin);
	free(portfile);
	free(target);
}

/* Lines of the proxy's log containing needle. */
SU_FN int
su_proxy_count(const struct su_proxy *p, const char *needle)
{
	FILE *f = fopen(p->log, "r");
	char line[2048];
	int n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* Print the proxy's log as TAP comments (after a failure). */
SU_FN void
su_proxy_show(const struct su_proxy *p)
{
	FILE *f = fopen(p->log, "r");
	char line[2048];

	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL)
		printf("# proxy: %s", line);
	fclose(f);
}

SU_FN void
su_proxy_stop(struct su_proxy *p)
{
	char *cmd;

	if (p->pid > 0) {
		kill(p->pid, SIGTERM);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
	if (p->dir != NULL && getenv("TU_KEEP") == NULL) {
		cmd = sr_asprintf("rm -rf '%s'", p->dir);
		if (system(cmd) != 0)
			printf("# cleanup: %s failed\n", cmd);
		free(cmd);
	}
	free(p->dir);
	free(p->control);
	free(p->log);
	p->dir = p->control = p->log = NULL;
}

#endif
