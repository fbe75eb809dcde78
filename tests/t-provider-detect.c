/*
 * t-provider-detect.c: `auto` (providers/provider.c and each cloud's probe)
 * and where the cloud providers point: auto settles on local within 0.5 s
 * when nothing answers (closed ports, and ports that take the connection
 * but never reply: the three probes run in parallel, so it costs one probe's
 * timeout, not three; and a DNS server that never answers, in a mount
 * namespace of a child: libcurl's resolver outlives its timeout, auto does
 * not wait for it), picks aws, gcp and azure against tests/mdemu, and
 * refuses look-alikes (no Metadata-Flavor, a 503, a service that answers
 * 401); job-file settings win over the environment; the aws IPv6 endpoint
 * (only its URL: nothing here connects to fd00:ec2::254) and the aws
 * provider over IPv6 against the emulator on [::1].
 *
 * Every endpoint here is on loopback: main points all three at a closed
 * port first (no_cloud), and each case overrides only what it tests.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "provider-int.h"
#include "provider.h"
#include "util.h"
#include "tap.h"
#include "mdemu-util.h"

/* "auto" decides within 0.5 s; this much more for a loaded machine. */
#define SLACK 0.25

static char tmpdir[] = "/tmp/t-provider-detect.XXXXXX";

static struct sr_provider_conf
conf_auto(void)
{
	struct sr_provider_conf c;

	memset(&c, 0, sizeof c);
	c.name = "auto";
	c.window = 30;
	c.grace = 30;
	c.seed = 1;
	c.trace_scale = 1;
	c.max_preemptions = -1;
	return c;
}

/* Run "auto" with conf c: the name it picked (static), and how long
 * sr_provider_new took in *took. */
static const char *
run_auto(const struct sr_provider_conf *c, double *took, double *said)
{
	static char name[16];
	char err[SR_ERRMAX];
	struct sr_provider *p;
	double t = sr_mono();

	if (sr_provider_new(c, &p, err) == -1) {
		*took = sr_mono() - t;
		snprintf(name, sizeof name, "error");
		tap_diag("%s", err);
		return name;
	}
	*took = sr_mono() - t;
	if (said != NULL)
		*said = sr_provider_detect_seconds(p);
	strlcpy(name, sr_provider_name(p), sizeof name);
	sr_provider_free(p);
	return name;
}

/* log_grep, after waiting (at most 2 s) for at least one such line: the
 * emulator logs a request just after it answers it. */
static int
log_grep_wait(const struct emu *e, const char *s)
{
	double end = sr_mono() + 2;

	while (log_grep(e, s) < 1 && sr_mono() < end)
		sr_sleep(0.01);
	return log_grep(e, s);
}

/* A loopback port that takes connections (the kernel completes them from
 * the backlog) and never answers: the worst case for a probe. */
static int
silent_port(int *port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sa, sizeof sa) == -1 ||
	    listen(fd, 16) == -1 || getsockname(fd, (struct sockaddr *)&sa, &len) == -1)
		sr_fatal("silent port: %s", strerror(errno));
	*port = ntohs(sa.sin_port);
	return fd;
}

static void
test_nothing_answers(void)
{
	struct sr_provider_conf c = conf_auto();
	char url[64];
	double took, said = -1;
	int fd, port;

	no_cloud();
	is_str(run_auto(&c, &took, &said), "local", "closed ports: auto picks local");
	tap_diag("auto with three closed ports: %.3f s", took);
	ok(took < 0.5 + SLACK, "closed ports: decided in %.3f s (bar: 0.5 s)", took);
	ok(said >= 0 && said <= took, "closed ports: the provider reports %.3f s", said);

	fd = silent_port(&port);
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	setenv("SPOTRUN_AWS_ENDPOINT", url, 1);
	setenv("SPOTRUN_GCP_ENDPOINT", url, 1);
	setenv("SPOTRUN_AZURE_ENDPOINT", url, 1);
	is_str(run_auto(&c, &took, NULL), "local", "silent ports: auto picks local");
	tap_diag("auto with three silent ports: %.3f s", took);
	ok(took < 0.5 + SLACK, "silent ports: decided in %.3f s (bar: 0.5 s)", took);
	/* In sequence the three probes would take 3 x SR_DETECT_TIMEOUT. */
	ok(took >= SR_DETECT_TIMEOUT - 0.05 && took < 2 * SR_DETECT_TIMEOUT,
	    "silent ports: one probe's timeout (%.2f s), the probes ran in parallel", took);

	/* A mix: one silent, two closed. */
	no_cloud();
	setenv("SPOTRUN_GCP_ENDPOINT", url, 1);
	is_str(run_auto(&c, &took, NULL), "local", "one silent, two closed: local");
	ok(took < 0.5 + SLACK, "one silent, two closed: decided in %.3f s", took);
	close(fd);
	no_cloud();
}

static void
test_picks(void)
{
	static const struct {
		const char *env, *name, *probe;
	} clouds[] = {
		{ "SPOTRUN_AWS_ENDPOINT", "aws",
		  "PUT /latest/api/token ttl=60 token=none -> 200" },
		{ "SPOTRUN_GCP_ENDPOINT", "gcp",
		  "GET /computeMetadata/v1/ flavor=Google -> 200 etag=" },
		{ "SPOTRUN_AZURE_ENDPOINT", "azure",
		  "GET /metadata/instance/compute?api-version=2021-02-01 metadata=true -> 200" },
	};
	struct sr_provider_conf c = conf_auto();
	struct sr_provider *p;
	char err[SR_ERRMAX];
	struct emu e;
	double took;
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(clouds); i++) {
		emu_run(&e, tmpdir, NULL);
		no_cloud();
		setenv(clouds[i].env, e.url, 1);
		is_str(run_auto(&c, &took, NULL), clouds[i].name, "auto picks %s against "
		    "its emulated metadata service", clouds[i].name);
		ok(took < 0.5 + SLACK, "%s: decided in %.3f s", clouds[i].name, took);
		is_int(log_grep_wait(&e, clouds[i].probe), 1, "%s: the probe: %s", clouds[i].name,
		    clouds[i].probe);
		/* The provider it made points where the probe went. */
		if (sr_provider_new(&c, &p, err) == 0) {
			is_str(sr_provider_endpoint(p), e.url, "%s: the provider's endpoint",
			    clouds[i].name);
			sr_provider_free(p);
		} else
			ok(0, "%s: %s", clouds[i].name, err);
		emu_stop(&e);
	}

	/* All three answer (one emulator serves them all): table order. */
	emu_run(&e, tmpdir, NULL);
	setenv("SPOTRUN_AWS_ENDPOINT", e.url, 1);
	setenv("SPOTRUN_GCP_ENDPOINT", e.url, 1);
	setenv("SPOTRUN_AZURE_ENDPOINT", e.url, 1);
	is_str(run_auto(&c, &took, NULL), "aws", "all three answer: aws, the first in the table");
	no_cloud();
	setenv("SPOTRUN_GCP_ENDPOINT", e.url, 1);
	setenv("SPOTRUN_AZURE_ENDPOINT", e.url, 1);
	is_str(run_auto(&c, &took, NULL), "gcp", "gcp and azure answer: gcp");

	/* poll means seconds between polls to aws and azure, and a long-poll's
	 * whole seconds to gcp: auto does not hand 0.2 s to gcp. */
	no_cloud();
	setenv("SPOTRUN_GCP_ENDPOINT", e.url, 1);
	c.poll = 0.2;
	is_str(run_auto(&c, &took, NULL), "gcp", "auto picks gcp with poll = 0.2 s set "
	    "(poll is not gcp's)");
	c.poll = 0;
	emu_stop(&e);
	no_cloud();
}

/* Services that are not the cloud's must not pass for it. */
static void
test_lookalikes(void)
{
	const char *noflavor[] = { "-F", NULL }, *unavailable[] = { "-u", "0:600", NULL };
	struct sr_provider_conf c = conf_auto();
	char url[96];
	struct emu e;
	double took;

	emu_run(&e, tmpdir, noflavor);
	no_cloud();
	setenv("SPOTRUN_GCP_ENDPOINT", e.url, 1);
	is_str(run_auto(&c, &took, NULL), "local", "gcp: a reply without Metadata-Flavor: "
	    "Google is not gcp");
	is_int(log_grep_wait(&e, "GET /computeMetadata/v1/ flavor=Google -> 200"), 1,
	    "gcp look-alike: the probe was answered 200");
	emu_stop(&e);

	emu_run(&e, tmpdir, unavailable);
	no_cloud();
	setenv("SPOTRUN_AWS_ENDPOINT", e.url, 1);
	is_str(run_auto(&c, &took, NULL), "local", "aws: a 503 to the token PUT is not aws");
	emu_stop(&e);

	/* Under /x every path reaches the emulator's AWS rules: 401 without a
	 * token, and no Metadata-Flavor. */
	emu_run(&e, tmpdir, NULL);
	snprintf(url, sizeof url, "%s/x", e.url);
	no_cloud();
	setenv("SPOTRUN_AZURE_ENDPOINT", url, 1);
	is_str(run_auto(&c, &took, NULL), "local", "azure: a 401 to the compute GET is not azure");
	is_int(log_grep_wait(&e, "GET /x/metadata/instance/compute?api-version=2021-02-01 "
	    "ttl=- token=none -> 401"), 1, "azure look-alike: the probe was answered 401");
	no_cloud();
	setenv("SPOTRUN_GCP_ENDPOINT", url, 1);
	is_str(run_auto(&c, &took, NULL), "local", "gcp: a 401 without Metadata-Flavor is not gcp");
	emu_stop(&e);
	no_cloud();
}

/* In a child: a private mount namespace whose /etc/resolv.conf names a
 * loopback "DNS server" that takes queries and never answers (the worst
 * resolver a laptop can have), so a name looked up here goes nowhere but
 * loopback. 0 ready, -1 not possible here (with why). */
static int
stalled_dns(char *why, size_t len)
{
	struct sockaddr_in sa;
	char *text = NULL, path[256], *ns = NULL, conf[64], addr[32];
	int fd, n;

	if (geteuid() != 0)
		return snprintf(why, len, "not root"), -1;
	/* Only files and dns: any other source could leave the machine. */
	if (sr_read_file("/etc/nsswitch.conf", 1 << 16, &ns, NULL, NULL) == -1 ||
	    strstr(ns, "\nhosts:          files dns\n") == NULL) {
		free(ns);
		return snprintf(why, len, "/etc/nsswitch.conf: hosts is not 'files dns'"), -1;
	}
	free(ns);
	/* An address of this process's own, so that runs side by side do
	 * not clash. */
	snprintf(addr, sizeof addr, "127.77.%d.%d", (int)(getpid() >> 8) & 255,
	    (int)getpid() & 255);
	n = snprintf(conf, sizeof conf, "nameserver %s\n", addr);
	snprintf(path, sizeof path, "%s/resolv.conf", tmpdir);
	if (sr_write_file_atomic(path, conf, (size_t)n, 0, NULL) == -1 ||
	    unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
	    mount(path, "/etc/resolv.conf", NULL, MS_BIND, NULL) == -1)
		return snprintf(why, len, "cannot bind a resolv.conf in a mount namespace: "
		    "%s", strerror(errno)), -1;
	if (sr_read_file("/etc/resolv.conf", 4096, &text, NULL, NULL) == -1 ||
	    strcmp(text, conf) != 0) {
		free(text);
		return snprintf(why, len, "the resolv.conf did not take"), -1;
	}
	free(text);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(53);
	sa.sin_addr.s_addr = inet_addr(addr);
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof sa) == -1)
		return snprintf(why, len, "bind %s:53: %s", addr, strerror(errno)), -1;
	return 0;	/* fd stays open: queries pile up unanswered */
}

/* A resolver that never answers (GCP's endpoint is a name): libcurl waits
 * for its resolver thread past the request's timeout, so auto must not
 * wait for a probe past its own bound. */
static void
test_dns_stall(void)
{
	struct sr_provider_conf c = conf_auto();
	char why[200] = "", got[64] = "";
	int pfd[2], status;
	double took = -1;
	pid_t pid;

	if (pipe(pfd) == -1 || (pid = fork()) == -1)
		sr_fatal("pipe/fork: %s", strerror(errno));
	if (pid == 0) {
		const char *name;

		close(pfd[0]);
		if (stalled_dns(why, sizeof why) == -1) {
			dprintf(pfd[1], "skip %s", why);
			_exit(0);
		}
		no_cloud();
		setenv("SPOTRUN_GCP_ENDPOINT", "http://metadata.spotrun-test.invalid", 1);
		name = run_auto(&c, &took, NULL);
		dprintf(pfd[1], "%s %.3f", name, took);
		_exit(0);	/* the resolver's thread may still wait: do not */
	}
	close(pfd[1]);
	if (read(pfd[0], got, sizeof got - 1) < 0)
		got[0] = '\0';
	close(pfd[0]);
	waitpid(pid, &status, 0);
	if (strncmp(got, "skip ", 5) == 0) {
		ok(1, "stalled DNS # SKIP %s", got + 5);
		ok(1, "stalled DNS: the time # SKIP %s", got + 5);
		return;
	}
	ok(strncmp(got, "local ", 6) == 0, "stalled DNS for gcp's name: auto picks local (%s)",
	    got);
	took = strncmp(got, "local ", 6) == 0 ? atof(got + 6) : 99;
	tap_diag("auto with a DNS server that never answers: %.3f s", took);
	ok(took < 0.5 + SLACK, "stalled DNS: decided in %.3f s (bar: 0.5 s)", took);
}

/* Where a named cloud provider points: conf (the job file) first, then
 * the environment, then the default. Creating a provider connects nowhere. */
static void
test_endpoints(void)
{
	static const struct {
		const char *name, *env, *dflt;
	} clouds[] = {
		{ "aws", "SPOTRUN_AWS_ENDPOINT", "http://169.254.169.254" },
		{ "gcp", "SPOTRUN_GCP_ENDPOINT", "http://metadata.google.internal" },
		{ "azure", "SPOTRUN_AZURE_ENDPOINT", "http://169.254.169.254" },
	};
	struct sr_provider_conf c = conf_auto();
	struct sr_provider *p;
	char err[SR_ERRMAX];
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(clouds); i++) {
		c = conf_auto();
		c.name = clouds[i].name;
		setenv(clouds[i].env, "http://127.0.0.1:7", 1);
		c.endpoint = "http://127.0.0.1:9//";
		if (sr_provider_new(&c, &p, err) == 0) {
			is_str(sr_provider_endpoint(p), "http://127.0.0.1:9", "%s: the job "
			    "file's endpoint wins over %s (trailing slashes dropped)",
			    clouds[i].name, clouds[i].env);
			sr_provider_free(p);
		} else
			ok(0, "%s: %s", clouds[i].name, err);
		c.endpoint = NULL;
		if (sr_provider_new(&c, &p, err) == 0) {
			is_str(sr_provider_endpoint(p), "http://127.0.0.1:7", "%s: else %s",
			    clouds[i].name, clouds[i].env);
			sr_provider_free(p);
		} else
			ok(0, "%s: %s", clouds[i].name, err);
		unsetenv(clouds[i].env);
		if (sr_provider_new(&c, &p, err) == 0) {
			is_str(sr_provider_endpoint(p), clouds[i].dflt, "%s: else %s",
			    clouds[i].name, clouds[i].dflt);
			sr_provider_free(p);
		} else
			ok(0, "%s: %s", clouds[i].name, err);
		no_cloud();
	}

	/* aws's IPv6 address: the URL only (never connected to here). */
	c = conf_auto();
	c.name = "aws";
	c.ipv6 = 1;
	if (sr_provider_new(&c, &p, err) == 0) {
		is_str(sr_provider_endpoint(p), "http://[fd00:ec2::254]",
		    "aws ipv6: the endpoint is http://[fd00:ec2::254], over $SPOTRUN_AWS_ENDPOINT");
		sr_provider_free(p);
	} else
		ok(0, "aws ipv6: %s", err);
	c.endpoint = "http://127.0.0.1:9";
	if (sr_provider_new(&c, &p, err) == 0) {
		is_str(sr_provider_endpoint(p), "http://127.0.0.1:9",
		    "aws ipv6 and an endpoint: the endpoint wins");
		sr_provider_free(p);
	} else
		ok(0, "aws ipv6 and endpoint: %s", err);
	c = conf_auto();
	c.name = "local";
	if (sr_provider_new(&c, &p, err) == 0) {
		ok(sr_provider_endpoint(p) == NULL, "local: no endpoint");
		ok(sr_provider_detect_seconds(p) == -1, "a named provider: no detection time");
		sr_provider_free(p);
	} else
		ok(0, "local: %s", err);
}

/* The aws provider (and its probe) over IPv6: the emulator on [::1]. */
static void
test_ipv6(void)
{
	const char *args[] = { "-6", "-T", "0.5", NULL };
	struct sr_provider_conf c = conf_auto();
	struct sr_provider *p;
	struct sr_notice n;
	struct sr_facts f;
	char err[SR_ERRMAX], url[64];
	struct emu e;
	double took;

	emu_run(&e, tmpdir, args);
	snprintf(url, sizeof url, "http://[::1]:%d", e.port);
	c.name = "aws";
	c.endpoint = url;
	c.poll = 0.1;
	if (sr_provider_new(&c, &p, err) == -1) {
		ok(0, "aws over IPv6: %s", err);
		emu_stop(&e);
		return;
	}
	start(p);
	ok(wait_notice(p, 3, &n) && n.kind == SR_NOTICE_PREEMPT,
	    "aws over IPv6 ([::1]): the notice arrives");
	ok(sr_provider_facts(p, &f, err) == 0 && strcmp(f.instance_type, "p5.48xlarge") == 0,
	    "aws over IPv6: facts");
	sr_provider_free(p);

	no_cloud();
	setenv("SPOTRUN_AWS_ENDPOINT", url, 1);
	c = conf_auto();
	is_str(run_auto(&c, &took, NULL), "aws", "auto over IPv6: picks aws");
	is_int(log_grep_wait(&e, "PUT /latest/api/token ttl=60 token=none -> 200"), 1,
	    "auto over IPv6: the probe reached [::1]");
	no_cloud();
	emu_stop(&e);
}

int
main(void)
{
	char err[SR_ERRMAX];

	if (mkdtemp(tmpdir) == NULL)
		sr_fatal("mkdtemp: %s", strerror(errno));
	no_cloud();
	test_nothing_answers();
	test_picks();
	test_lookalikes();
	test_dns_stall();
	test_endpoints();
	test_ipv6();
	if (sr_rmtree(tmpdir, err) == -1)
		tap_diag("%s", err);
	return tap_done();
}
