/*
 * mdemu.c: a cloud metadata emulator for the tests: the AWS IMDSv2 and the
 * GCP metadata server and the Azure Scheduled Events interfaces of design.md
 * section 4, on 127.0.0.1 with a port the kernel picks, with scenarios
 * chosen by options (a notice at T, a rebalance at R, short-lived tokens,
 * 503 bursts, hostile replies; GCP's preempted flip at G and maintenance
 * events; Azure's Preempt at Z, another VM's event, a slow first call). Single-threaded: one poll
 * loop, one request per connection (Connection: close). A GCP long-poll
 * (wait_for_change=true with last_etag equal to the current ETag) parks its
 * connection; the loop answers it when the value changes or its timeout_sec
 * passes.
 *
 * usage: mdemu [-p PORTFILE] [-l LOGFILE] [-T SECS] [-A ACTION] [-R SECS]
 *              [-W SECS] [-t TTL] [-u FROM:TO] [-b BODY] [-H] [-r] [-S]
 *              [-G SECS] [-M SECS] [-m SECS] [-F]
 *              [-Z SECS] [-E TYPE] [-N NOTBEFORE] [-O SECS] [-z SECS] [-n SECS]
 *              [-I SECS] [-J SECS] [-j SECS] [-6] [-U] [-C FILE]
 *   -p  write the port (one line) to PORTFILE once listening, else stdout
 *   -6  listen on [::1] instead of 127.0.0.1 (the IPv6 endpoint's path)
 *   -C  every SECS counts from when FILE appears (logged "gate
 *       WALLCLOCK"), not from the start: a test's job creates it at the
 *       point it must have reached, so a loaded machine that starts the
 *       job late still gets each event at the same point of the job
 *   -U  before each request's line, one more: "ua METHOD PATH <User-Agent
 *       header|->" (who asked, as a metadata service's own logs would say)
 *   -l  log to LOGFILE (else stderr): first "start WALLCLOCK" (epoch
 *       seconds), then one line per request; AWS:
 *       "METHOD PATH ttl=<ttl header|-> token=<none|good|bad|expired> -> STATUS"
 *       GCP (paths under /computeMetadata/, PATH with its query):
 *       "METHOD PATH flavor=<Metadata-Flavor header|-> -> STATUS etag=<ETag|->"
 *       (a long-poll is logged when answered; 0: the client hung up first)
 *   -T  instance-action answers 200 from SECS after start (else 404 always),
 *       {"action":ACTION,"time":"<start + SECS + 120, ISO 8601 UTC>"}
 *   -A  the action (default terminate)
 *   -W  from SECS after start (after -T) instance-action says terminate,
 *       with time start + SECS + 120 (an instance resumed from hibernation
 *       and interrupted again)
 *   -R  rebalance answers {"noticeTime":"..."} from SECS after start
 *   -t  tokens live at most TTL seconds, whatever the client asked
 *   -u  every request between FROM and TO seconds after start gets 503
 *   -b  instance-action's 200 body is BODY verbatim (malformed replies)
 *   -H  instance-action's 200 body is 1 MiB of JSON-ish bytes
 *   -r  instance-action answers 302 to /latest/meta-data/elsewhere
 *   -S  instance-action never answers (the connection stalls until the
 *       client gives up)
 *   -G  GCP instance/preempted turns from FALSE to TRUE at SECS after start
 *       (-b BODY and -H replace TRUE, as for instance-action)
 *   -M  GCP instance/maintenance-event turns TERMINATE_ON_HOST_MAINTENANCE
 *       at SECS (else NONE)
 *   -m  ... MIGRATE_ON_HOST_MAINTENANCE at SECS (-M wins once both passed)
 *   -F  GCP replies lack the Metadata-Flavor: Google header (not the
 *       metadata server)
 *   -Z  Azure: an event for this VM (spotvm-1; EventId
 *       602d9444-d2cd-49c7-8624-8643e7171297) from SECS after start, with
 *       NotBefore = start + SECS + 30 s (RFC 1123); each change of the
 *       document increments DocumentIncarnation (from 1). A POST of
 *       StartRequests naming it turns it Started with NotBefore "".
 *       (-b BODY and -H replace the whole document from then on.)
 *   -E  the -Z event's EventType (default Preempt)
 *   -N  the -Z event's NotBefore verbatim
 *   -O  Azure: a Preempt event for another VM (othervm) from SECS
 *   -z  Azure: the first GET of scheduledevents is answered SECS late (the
 *       service starting on first use)
 *   -n  Azure: a GET of compute/name answers 500 for the first SECS seconds
 *       (this VM's name cannot be read)
 *   -I  AWS instance role: each GET of
 *       /latest/meta-data/iam/security-credentials/spotrun-role hands out
 *       new keys (AccessKeyId "ASIAEMU<N>", SecretAccessKey
 *       "emu-secret-<N>", Token "emu-token-<N>", N = 1, 2, ... so that a
 *       refresh shows) expiring SECS after that request (default 3600);
 *       .../security-credentials/ lists the role "spotrun-role"
 *   -J  Azure managed identity: GET /metadata/identity/oauth2/token
 *       (api-version, resource=https://storage.azure.com/, an optional
 *       client_id) hands out a new token each time: an unsigned JWT (as
 *       Azurite's --oauth basic takes them: aud https://storage.azure.com,
 *       iss https://sts.windows.net/TENANT/, iat and nbf now, exp SECS
 *       ahead, "n" the token's number 1, 2, ...) with expires_on = exp;
 *       without -J the route answers 400 "Identity not found" (a VM with
 *       no identity). Logged as ".. -> 200 token=N client=<id|->".
 *   -j  ... but claim expires_on SECS ahead (a token the server rejects
 *       before the client expects: its refresh on 403)
 * Azure requests (paths under /metadata/) without Metadata: true get 400;
 * they are logged as "METHOD PATH metadata=<header|-> -> STATUS", a GET of
 * scheduledevents with " incarnation=N" appended, a POST with
 * " ctype=<Content-Type|-> body=<body> wall=<epoch seconds>" (the slow
 * first call is logged when answered; 0: the client hung up first).
 * -u applies to GCP too, also to a long-poll answered inside the window.
 * GCP requests without Metadata-Flavor: Google get 403; each value's ETag
 * changes when the value does.
 * It runs until killed (SIGTERM).
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXCONN		64
#define REQMAX		16384
#define NTOKENS		64
#define HUGE_BODY	(1024 * 1024)
#define GCP_PREFIX	"/computeMetadata/v1/"
#define GCP_WAIT_DEFAULT 300		/* seconds a long-poll waits without timeout_sec */
#define GCP_WAIT_MAX	3600

enum gcp_key { K_PREEMPTED, K_MAINTENANCE, K_OTHER };

struct conn {
	int fd;			/* -1: free slot */
	char buf[REQMAX + 1];
	size_t len;
	int stalled;		/* got its request, never answered */
	/* A parked GCP long-poll (stalled is set too). */
	int parked;
	enum gcp_key key;
	char etag[32];		/* the last_etag it waits to see change */
	double deadline;	/* monotonic: answer unchanged then */
	char path[1024];	/* its relative path, for the answer */
	char line[1100];	/* the request as logged: "GET PATH?QUERY" */
	int azure;		/* a parked Azure first call (parked is set too) */
	const char *body;	/* the request body (in buf), NUL-terminated */
};

/* -C: the look for the gate file, and how far ahead everything lies until
 * it appears. */
#define GATE_POLL_MS	20
#define GATE_FAR	(365 * 86400.0)

struct token {
	char value[40];
	double expires;		/* monotonic seconds */
};

struct emu {
	double start_mono, start_wall;
	double notice_at, rebalance_at;	/* seconds after start; < 0 off */
	double again_at;		/* -W; < 0 off */
	const char *action;
	long ttl_cap;			/* 0: none */
	double burst_from, burst_to;	/* 503 window; from < 0: off */
	const char *body;		/* -b */
	int huge, redirect, stall;
	double preempt_at, terminate_at, migrate_at;	/* GCP; < 0 off */
	int no_flavor;			/* -F */
	int log_ua;			/* -U */
	const char *gate;		/* -C FILE; NULL: times count from the start */
	int gate_open;			/* FILE appeared: start_* moved there */
	double az_at, az_other_at, az_delay;	/* Azure; < 0 off */
	double az_noname;			/* -n: seconds; 0 off */
	const char *az_type, *az_notbefore;
	int az_first_done, az_acked;
	unsigned long etag_seed;
	FILE *log;
	struct token tokens[NTOKENS];
	unsigned next_token;
	unsigned long serial;
	double role_ttl;		/* -I: seconds each role key set lives */
	unsigned long role_serial;	/* role key sets handed out */
	double mi_ttl;			/* -J: seconds a token lives; < 0: no identity */
	double mi_claim;		/* -j: expires_on claimed; < 0: the real one */
	unsigned long mi_serial;	/* tokens handed out */
};

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
iso_time(double t, char *buf, size_t len)
{
	time_t s = (time_t)(t + 0.5);
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void
die(const char *what)
{
	fprintf(stderr, "mdemu: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The value of header name in the request head req (NUL-terminated), copied
 * into out; 0 when absent. */
static int
header(const char *req, const char *name, char *out, size_t len)
{
	const char *line = strstr(req, "\r\n");
	size_t n = strlen(name), v;

	while (line != NULL && line[2] != '\r' && line[2] != '\0') {
		line += 2;
		if (strncasecmp(line, name, n) == 0 && line[n] == ':') {
			const char *s = line + n + 1;

			while (*s == ' ' || *s == '\t')
				s++;
			v = strcspn(s, "\r\n");
			while (v > 0 && (s[v - 1] == ' ' || s[v - 1] == '\t'))
				v--;
			if (v >= len)
				v = len - 1;
			memcpy(out, s, v);
			out[v] = '\0';
			return 1;
		}
		line = strstr(line, "\r\n");
	}
	return 0;
}

static void
reply(int fd, int status, const char *extra, const char *body, size_t len)
{
	const char *text = status == 200 ? "OK" : status == 302 ? "Found" :
	    status == 400 ? "Bad Request" : status == 401 ? "Unauthorized" :
	    status == 403 ? "Forbidden" :
	    status == 404 ? "Not Found" : status == 405 ? "Method Not Allowed" :
	    status == 500 ? "Internal Server Error" :
	    status == 503 ? "Service Unavailable" : "Error";
	char head[512];
	size_t off = 0;
	ssize_t w;
	int n;

	n = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n%s\r\n", status, text, len,
	    extra != NULL ? extra : "");
	if (send(fd, head, (size_t)n, MSG_NOSIGNAL) != n)
		return;
	while (off < len) {
		w = send(fd, body + off, len - off, MSG_NOSIGNAL);
		if (w <= 0)
			return;	/* the client gave up (the huge body): fine */
		off += (size_t)w;
	}
}

static void
reply_str(int fd, int status, const char *body)
{
	reply(fd, status, NULL, body, strlen(body));
}

/* "good", "bad", "expired" or "none" for the request's token header. */
static const char *
check_token(struct emu *e, const char *req)
{
	char tok[128];
	double now = mono();
	int i;

	if (!header(req, "X-aws-ec2-metadata-token", tok, sizeof tok))
		return "none";
	for (i = 0; i < NTOKENS; i++) {
		if (strcmp(e->tokens[i].value, tok) == 0)
			return now < e->tokens[i].expires ? "good" : "expired";
	}
	return "bad";
}

/* ---- GCP ---- */

static unsigned long long
mix64(unsigned long long x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static int
passed(double at, double now)
{
	return at >= 0 && now >= at;
}

/* The value of the GCP path (relative to GCP_PREFIX, no query) at `now`
 * seconds after start: its key, body (static or e's), length and ETag
 * (out: 17 bytes). 0 when there is no such path. */
static int
gcp_value(struct emu *e, const char *path, double now, enum gcp_key *key,
    const char **body, size_t *len, char *etag)
{
	static char big[HUGE_BODY];
	unsigned version = 0;

	*key = K_OTHER;
	if (strcmp(path, "instance/preempted") == 0) {
		*key = K_PREEMPTED;
		*body = "FALSE";
		if (passed(e->preempt_at, now)) {
			version = 1;
			*body = e->body != NULL ? e->body : "TRUE";
			if (e->huge) {
				memset(big, 'T', HUGE_BODY);
				*body = big;
				*len = HUGE_BODY;
				goto tag;
			}
		}
	} else if (strcmp(path, "instance/maintenance-event") == 0) {
		*key = K_MAINTENANCE;
		*body = "NONE";
		if (passed(e->terminate_at, now)) {
			version = 2;
			*body = "TERMINATE_ON_HOST_MAINTENANCE";
		} else if (passed(e->migrate_at, now)) {
			version = 1;
			*body = "MIGRATE_ON_HOST_MAINTENANCE";
		}
	} else if (strcmp(path, "instance/id") == 0)
		*body = "4520031799277581759";
	else if (strcmp(path, "instance/machine-type") == 0)
		*body = "projects/123456789012/machineTypes/a3-highgpu-8g";
	else if (strcmp(path, "instance/zone") == 0)
		*body = "projects/123456789012/zones/us-central1-a";
	else if (strcmp(path, "instance/scheduling/provisioning-model") == 0)
		*body = "SPOT";
	else if (strcmp(path, "instance/scheduling/preemptible") == 0)
		*body = "TRUE";
	else if (strcmp(path, "") == 0)
		*body = "instance/\nproject/\n";	/* the root: what "auto" asks */
	else
		return 0;
	*len = strlen(*body);
tag:
	snprintf(etag, 17, "%016llx", mix64(e->etag_seed ^
	    ((unsigned long long)*key << 32) ^ version));
	return 1;
}

/* Reply with a GCP value (status 200) or status and a message. */
static void
gcp_reply(struct emu *e, int fd, int status, const char *etag, const char *body,
    size_t len)
{
	char extra[128];

	snprintf(extra, sizeof extra, "%s%s%s%s", e->no_flavor ? "" :
	    "Metadata-Flavor: Google\r\n", etag != NULL ? "ETag: " : "",
	    etag != NULL ? etag : "", etag != NULL ? "\r\n" : "");
	reply(fd, status, extra, body, len);
}

/* Answer parked connection k now (its value changed or its time is up),
 * or inside a 503 window with 503. */
static void
gcp_answer(struct emu *e, struct conn *k)
{
	double now = mono() - e->start_mono;
	char etag[32];
	const char *body;
	enum gcp_key key;
	size_t len;

	if (e->burst_from >= 0 && now >= e->burst_from && now < e->burst_to) {
		gcp_reply(e, k->fd, 503, NULL, "service unavailable\n", 20);
		fprintf(e->log, "%s flavor=Google -> 503 etag=-\n", k->line);
	} else {
		gcp_value(e, k->path, now, &key, &body, &len, etag);
		gcp_reply(e, k->fd, 200, etag, body, len);
		fprintf(e->log, "%s flavor=Google -> 200 etag=%s\n", k->line, etag);
	}
	close(k->fd);
	k->fd = -1;
	k->parked = k->stalled = 0;
}

/* The value of query parameter name in q ("a=b&c=d"), into out; 0 when
 * absent. */
static int
query(const char *q, const char *name, char *out, size_t len)
{
	size_t n = strlen(name), v;

	while (q != NULL && *q != '\0') {
		if (strncmp(q, name, n) == 0 && q[n] == '=') {
			v = strcspn(q + n + 1, "&");
			if (v >= len)
				v = len - 1;
			memcpy(out, q + n + 1, v);
			out[v] = '\0';
			return 1;
		}
		q = strchr(q, '&');
		if (q != NULL)
			q++;
	}
	return 0;
}

/* Answer a GCP request (path under /computeMetadata/); 1 when it parks. */
static int
serve_gcp(struct emu *e, struct conn *k, const char *req, const char *method,
    const char *path)
{
	char flavor[64] = "-", rel[1024], wait[16] = "", last[64], tsec[16],
	    etag[32] = "-";
	double now = mono() - e->start_mono;
	const char *q = strchr(path, '?'), *body;
	enum gcp_key key;
	int status, has_last, secs = GCP_WAIT_DEFAULT;
	size_t len, n;
	char *end;

	header(req, "Metadata-Flavor", flavor, sizeof flavor);
	n = q != NULL ? (size_t)(q - path) : strlen(path);
	if (q != NULL)
		q++;
	snprintf(rel, sizeof rel, "%.*s", (int)n, path);
	memmove(rel, rel + (strncmp(rel, GCP_PREFIX, strlen(GCP_PREFIX)) == 0 ?
	    strlen(GCP_PREFIX) : 0), strlen(rel) + 1);
	query(q, "wait_for_change", wait, sizeof wait);
	has_last = query(q, "last_etag", last, sizeof last);
	if (query(q, "timeout_sec", tsec, sizeof tsec)) {
		secs = (int)strtol(tsec, &end, 10);
		if (*end != '\0' || end == tsec || secs < 1 || secs > GCP_WAIT_MAX)
			secs = -1;
	}
	if (e->burst_from >= 0 && now >= e->burst_from && now < e->burst_to) {
		status = 503;
		gcp_reply(e, k->fd, status, NULL, "service unavailable\n", 20);
	} else if (strcmp(flavor, "Google") != 0) {
		status = 403;
		gcp_reply(e, k->fd, status, NULL, "Missing Metadata-Flavor:Google header.\n", 39);
	} else if (strcmp(method, "GET") != 0) {
		status = 405;
		gcp_reply(e, k->fd, status, NULL, "use GET\n", 8);
	} else if (secs == -1) {
		status = 400;
		gcp_reply(e, k->fd, status, NULL, "bad timeout_sec\n", 16);
	} else if (!gcp_value(e, rel, now, &key, &body, &len, etag)) {
		status = 404;
		gcp_reply(e, k->fd, status, NULL, "Not Found\n", 10);
		snprintf(etag, sizeof etag, "%s", "-");
	} else if (strcmp(wait, "true") == 0 && has_last && strcmp(last, etag) == 0) {
		/* Nothing changed since the client's last reply: wait. */
		k->parked = 1;
		k->key = key;
		snprintf(k->etag, sizeof k->etag, "%s", etag);
		snprintf(k->path, sizeof k->path, "%s", rel);
		snprintf(k->line, sizeof k->line, "%s %s", method, path);
		k->deadline = mono() + secs;
		return 1;
	} else {
		status = 200;
		gcp_reply(e, k->fd, status, etag, body, len);
	}
	if (status != 200)
		snprintf(etag, sizeof etag, "%s", "-");
	fprintf(e->log, "%s %s flavor=%s -> %d etag=%s\n", method, path, flavor,
	    status, etag);
	return 0;
}

/* The monotonic time the loop must wake at next: a parked connection's
 * deadline or a GCP value's change; -1: none. */
static double
next_wake(struct emu *e, const struct conn *conns)
{
	double at[3] = { e->preempt_at, e->terminate_at, e->migrate_at };
	double now = mono(), t, w = -1;
	int i;

	for (i = 0; i < 3; i++) {
		t = e->start_mono + at[i];
		if (at[i] >= 0 && t > now && (w < 0 || t < w))
			w = t;
	}
	for (i = 0; i < MAXCONN; i++)
		if (conns[i].fd != -1 && conns[i].parked && (w < 0 || conns[i].deadline < w))
			w = conns[i].deadline;
	return w;
}

static void az_events(struct emu *, int, char *, size_t);

/* Answer the parked connections whose value changed or whose time is up. */
static void
wake_parked(struct emu *e, struct conn *conns)
{
	double now = mono() - e->start_mono;
	const char *body;
	enum gcp_key key;
	char etag[32];
	size_t len;
	int i;

	for (i = 0; i < MAXCONN; i++) {
		struct conn *k = &conns[i];

		if (k->fd == -1 || !k->parked)
			continue;
		if (k->azure) {
			char tail[128];

			if (mono() < k->deadline)
				continue;
			az_events(e, k->fd, tail, sizeof tail);
			fprintf(e->log, "%s metadata=true -> %s\n", k->line, tail);
			close(k->fd);
			k->fd = -1;
			k->parked = k->stalled = k->azure = 0;
			continue;
		}
		gcp_value(e, k->path, now, &key, &body, &len, etag);
		if (strcmp(etag, k->etag) != 0 || mono() >= k->deadline)
			gcp_answer(e, k);
	}
}

/* ---- Azure ---- */

#define AZ_VM		"spotvm-1"
#define AZ_EVENT	"602d9444-d2cd-49c7-8624-8643e7171297"
#define AZ_OTHER	"1f4a7c0e-0000-4000-8000-00000000beef"

static void
rfc1123(double t, char *buf, size_t len)
{
	time_t s = (time_t)(t + 0.5);
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, len, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

/* The scheduledevents document at now seconds after start into buf; its
 * incarnation in *inc. */
static void
az_document(struct emu *e, double now, char *buf, size_t len, int *inc)
{
	char nb[64], ev[1024] = "", other[512] = "";

	*inc = 1;
	if (passed(e->az_other_at, now)) {
		(*inc)++;
		rfc1123(e->start_wall + e->az_other_at + 30, nb, sizeof nb);
		snprintf(other, sizeof other, "{\"EventId\":\"" AZ_OTHER "\",\"EventType\":"
		    "\"Preempt\",\"ResourceType\":\"VirtualMachine\",\"Resources\":"
		    "[\"othervm\"],\"EventStatus\":\"Scheduled\",\"NotBefore\":\"%s\","
		    "\"Description\":\"\",\"EventSource\":\"Platform\","
		    "\"DurationInSeconds\":-1}", nb);
	}
	if (passed(e->az_at, now)) {
		(*inc)++;
		if (e->az_acked)
			(*inc)++;
		rfc1123(e->start_wall + e->az_at + 30, nb, sizeof nb);
		snprintf(ev, sizeof ev, "{\"EventId\":\"" AZ_EVENT "\",\"EventType\":\"%s\","
		    "\"ResourceType\":\"VirtualMachine\",\"Resources\":[\"" AZ_VM "\"],"
		    "\"EventStatus\":\"%s\",\"NotBefore\":\"%s\",\"Description\":"
		    "\"Virtual machine is being preempted.\",\"EventSource\":\"Platform\","
		    "\"DurationInSeconds\":-1}", e->az_type,
		    e->az_acked ? "Started" : "Scheduled",
		    e->az_acked ? "" : e->az_notbefore != NULL ? e->az_notbefore : nb);
	}
	snprintf(buf, len, "{\"DocumentIncarnation\":%d,\"Events\":[%s%s%s]}", *inc,
	    other, other[0] != '\0' && ev[0] != '\0' ? "," : "", ev);
}

/* Reply to a GET of scheduledevents; its log line's tail into tail. */
static void
az_events(struct emu *e, int fd, char *tail, size_t len)
{
	static char big[HUGE_BODY];
	double now = mono() - e->start_mono;
	char doc[2048];
	int inc;

	if (passed(e->az_at, now) && e->huge) {
		memset(big, ' ', HUGE_BODY);
		big[0] = '{';
		big[HUGE_BODY - 1] = '}';
		reply(fd, 200, NULL, big, HUGE_BODY);
		snprintf(tail, len, "200 incarnation=huge");
		return;
	}
	if (passed(e->az_at, now) && e->body != NULL) {
		reply_str(fd, 200, e->body);
		snprintf(tail, len, "200 incarnation=body");
		return;
	}
	az_document(e, now, doc, sizeof doc, &inc);
	reply(fd, 200, "Content-Type: application/json\r\n", doc, strlen(doc));
	snprintf(tail, len, "200 incarnation=%d", inc);
}

/* base64url of n bytes of s, no padding, into out. */
static void
b64url(const char *s, size_t n, char *out)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t i, o = 0;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16 | (unsigned char)s[i + 1] << 8 |
		    (unsigned char)s[i + 2];

		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = tab[(v >> 6) & 63];
		out[o++] = tab[v & 63];
	}
	if (n - i == 1) {
		unsigned v = (unsigned char)s[i] << 16;

		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
	} else if (n - i == 2) {
		unsigned v = (unsigned char)s[i] << 16 | (unsigned char)s[i + 1] << 8;

		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = tab[(v >> 6) & 63];
	}
	out[o] = '\0';
}

/* The managed identity's token route; its log tail into tail. */
static void
az_token(struct emu *e, int fd, const char *path, char *tail, size_t len)
{
	static const char hdr[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
	const char *cid = strstr(path, "client_id=");
	char payload[512], h64[64], p64[720], tok[1024], body[2048], client[64] = "-";
	long now = (long)wall(), exp;
	unsigned long n;

	if (strstr(path, "resource=https%3A%2F%2Fstorage.azure.com%2F") == NULL &&
	    strstr(path, "resource=https://storage.azure.com/") == NULL) {
		reply_str(fd, 400, "{\"error\":\"invalid_resource\",\"error_description\":"
		    "\"AADSTS500011: The resource principal was not found\"}");
		snprintf(tail, len, "400");
		return;
	}
	if (e->mi_ttl < 0) {
		reply_str(fd, 400, "{\"error\":\"invalid_request\",\"error_description\":"
		    "\"Identity not found\"}");
		snprintf(tail, len, "400");
		return;
	}
	if (cid != NULL)
		snprintf(client, sizeof client, "%.*s", (int)strcspn(cid + 10, "&"), cid + 10);
	n = ++e->mi_serial;
	exp = now + (long)e->mi_ttl;
	snprintf(payload, sizeof payload, "{\"aud\":\"https://storage.azure.com\","
	    "\"iss\":\"https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/\","
	    "\"iat\":%ld,\"nbf\":%ld,\"exp\":%ld,\"oid\":\"mdemu\",\"n\":%lu}",
	    now, now, exp, n);
	b64url(hdr, strlen(hdr), h64);
	b64url(payload, strlen(payload), p64);
	snprintf(tok, sizeof tok, "%s.%s.bWRlbXUtdW5zaWduZWQ", h64, p64);
	snprintf(body, sizeof body, "{\"access_token\":\"%s\",\"client_id\":\"%s\","
	    "\"expires_in\":\"%ld\",\"expires_on\":\"%ld\",\"ext_expires_in\":\"%ld\","
	    "\"not_before\":\"%ld\",\"resource\":\"https://storage.azure.com/\","
	    "\"token_type\":\"Bearer\"}", tok, client[0] != '-' ? client :
	    "d7a1e1a4-0000-4000-8000-00000000beef", (long)e->mi_ttl,
	    e->mi_claim >= 0 ? now + (long)e->mi_claim : exp, (long)e->mi_ttl, now);
	reply(fd, 200, "Content-Type: application/json\r\n", body, strlen(body));
	snprintf(tail, len, "200 token=%lu client=%s", n, client);
}

/* Answer an Azure request (path under /metadata/); 1 when it parks. */
static int
serve_azure(struct emu *e, struct conn *k, const char *req, const char *method,
    const char *path)
{
	char meta[64] = "-", ctype[128] = "-", tail[128];
	const char *q = strchr(path, '?');
	size_t n = q != NULL ? (size_t)(q - path) : strlen(path);
	int events = strncmp(path, "/metadata/scheduledevents", n) == 0 &&
	    n == strlen("/metadata/scheduledevents");

	header(req, "Metadata", meta, sizeof meta);
	header(req, "Content-Type", ctype, sizeof ctype);
	if (strcmp(meta, "true") != 0) {
		reply_str(k->fd, 400, "{\"error\":\"Bad request. Required metadata header "
		    "not specified\"}");
		snprintf(tail, sizeof tail, "400");
	} else if (q == NULL || strstr(q, "api-version=") == NULL) {
		reply_str(k->fd, 400, "{\"error\":\"Bad request. api-version was not "
		    "specified in the request\"}");
		snprintf(tail, sizeof tail, "400");
	} else if (events && strcmp(method, "POST") == 0) {
		if (passed(e->az_at, mono() - e->start_mono) &&
		    strstr(k->body, "\"EventId\":\"" AZ_EVENT "\"") != NULL)
			e->az_acked = 1;
		/* Logged before the reply: a client that saw its ack accepted
		 * finds the line already there. */
		fprintf(e->log, "%s %s metadata=%s -> 200 ctype=%s body=%s wall=%.6f\n",
		    method, path, meta, ctype, k->body, wall());
		reply_str(k->fd, 200, "");
		return 0;
	} else if (events && strcmp(method, "GET") == 0) {
		if (e->az_delay > 0 && !e->az_first_done) {
			e->az_first_done = 1;
			k->parked = k->azure = 1;
			k->deadline = mono() + e->az_delay;
			snprintf(k->line, sizeof k->line, "%s %s", method, path);
			return 1;
		}
		az_events(e, k->fd, tail, sizeof tail);
	} else if (strcmp(method, "GET") != 0) {
		reply_str(k->fd, 405, "use GET\n");
		snprintf(tail, sizeof tail, "405");
	} else if (strcmp(path, "/metadata/instance/compute/name?api-version=2021-02-01"
	    "&format=text") == 0 && mono() - e->start_mono < e->az_noname) {
		reply_str(k->fd, 500, "{\"error\":\"Internal server error\"}");
		snprintf(tail, sizeof tail, "500");
	} else if (strcmp(path, "/metadata/instance/compute/name?api-version=2021-02-01"
	    "&format=text") == 0) {
		reply_str(k->fd, 200, AZ_VM);
		snprintf(tail, sizeof tail, "200");
	} else if (n == strlen("/metadata/identity/oauth2/token") &&
	    strncmp(path, "/metadata/identity/oauth2/token", n) == 0) {
		az_token(e, k->fd, path, tail, sizeof tail);
	} else if (strcmp(path, "/metadata/instance/compute?api-version=2021-02-01") == 0) {
		reply_str(k->fd, 200, "{\"location\":\"eastus\",\"name\":\"" AZ_VM "\","
		    "\"priority\":\"Spot\",\"vmId\":\"02aab8a4-74ef-476e-8182-f6d2ba4166a6\","
		    "\"vmSize\":\"Standard_ND96isr_H100_v5\",\"zone\":\"1\","
		    "\"evictionPolicy\":\"Deallocate\"}");
		snprintf(tail, sizeof tail, "200");
	} else {
		reply_str(k->fd, 404, "Not Found\n");
		snprintf(tail, sizeof tail, "404");
	}
	fprintf(e->log, "%s %s metadata=%s -> %s\n", method, path, meta, tail);
	return 0;
}

/* Answer one request; 1 when the connection stays open unanswered. */
static int
serve(struct emu *e, struct conn *k, char *req)
{
	char method[16], path[1024], ttlh[64] = "-", body[512], when[32];
	double now = mono() - e->start_mono;
	const char *tok = "none";
	int status, stall = 0;
	struct token *t;
	long ttl;
	char *end;
	int fd = k->fd;

	if (sscanf(req, "%15s %1023s", method, path) != 2) {
		reply_str(fd, 400, "bad request line\n");
		fprintf(e->log, "? ? ttl=- token=none -> 400\n");
		return 0;
	}
	if (e->log_ua) {
		char ua[256] = "-";

		header(req, "User-Agent", ua, sizeof ua);
		fprintf(e->log, "ua %s %s %s\n", method, path, ua);
	}
	if (strncmp(path, "/computeMetadata/", 17) == 0)
		return serve_gcp(e, k, req, method, path);
	if (strncmp(path, "/metadata/", 10) == 0)
		return serve_azure(e, k, req, method, path);
	header(req, "X-aws-ec2-metadata-token-ttl-seconds", ttlh, sizeof ttlh);
	if (strcmp(path, "/latest/api/token") != 0)
		tok = check_token(e, req);
	if (e->burst_from >= 0 && now >= e->burst_from && now < e->burst_to) {
		status = 503;
		reply_str(fd, status, "service unavailable\n");
	} else if (strcmp(path, "/latest/api/token") == 0) {
		if (strcmp(method, "PUT") != 0) {
			status = 405;
			reply_str(fd, status, "use PUT\n");
			goto out;
		}
		errno = 0;
		ttl = strtol(ttlh, &end, 10);
		if (ttlh[0] == '-' || errno != 0 || *end != '\0' || end == ttlh ||
		    ttl < 1 || ttl > 21600) {
			status = 400;
			reply_str(fd, status, "bad X-aws-ec2-metadata-token-ttl-seconds\n");
			goto out;
		}
		if (e->ttl_cap > 0 && ttl > e->ttl_cap)
			ttl = e->ttl_cap;
		t = &e->tokens[e->next_token++ % NTOKENS];
		snprintf(t->value, sizeof t->value, "AQAEA%08lx%08lx%06x==",
		    ++e->serial, (unsigned long)random(), (unsigned)getpid() & 0xffffff);
		t->expires = mono() + (double)ttl;
		status = 200;
		reply_str(fd, status, t->value);
	} else if (strcmp(tok, "good") != 0) {
		status = 401;
		reply_str(fd, status, "");
	} else if (strcmp(method, "GET") != 0) {
		status = 405;
		reply_str(fd, status, "use GET\n");
	} else if (strcmp(path, "/latest/meta-data/spot/instance-action") == 0) {
		if (e->notice_at < 0 || now < e->notice_at) {
			status = 404;
			reply_str(fd, status, "Not Found\n");
		} else if (e->stall) {
			status = 0;
			stall = 1;
		} else if (e->redirect) {
			status = 302;
			reply(fd, status, "Location: /latest/meta-data/elsewhere\r\n", "", 0);
		} else if (e->huge) {
			char *big = malloc(HUGE_BODY);

			if (big == NULL)
				die("malloc");
			memset(big, ' ', HUGE_BODY);
			big[0] = '{';
			big[HUGE_BODY - 1] = '}';
			status = 200;
			reply(fd, status, NULL, big, HUGE_BODY);
			free(big);
		} else if (e->body != NULL) {
			status = 200;
			reply_str(fd, status, e->body);
		} else {
			int again = passed(e->again_at, now);

			iso_time(e->start_wall + (again ? e->again_at : e->notice_at) + 120,
			    when, sizeof when);
			snprintf(body, sizeof body, "{\"action\":\"%s\",\"time\":\"%s\"}",
			    again ? "terminate" : e->action, when);
			status = 200;
			reply_str(fd, status, body);
		}
	} else if (strcmp(path, "/latest/meta-data/events/recommendations/rebalance") == 0) {
		if (e->rebalance_at < 0 || now < e->rebalance_at) {
			status = 404;
			reply_str(fd, status, "Not Found\n");
		} else {
			iso_time(e->start_wall + e->rebalance_at, when, sizeof when);
			snprintf(body, sizeof body, "{\"noticeTime\":\"%s\"}", when);
			status = 200;
			reply_str(fd, status, body);
		}
	} else if (strcmp(path, "/latest/meta-data/instance-id") == 0) {
		status = 200;
		reply_str(fd, status, "i-0123456789abcdef0");
	} else if (strcmp(path, "/latest/meta-data/instance-type") == 0) {
		status = 200;
		reply_str(fd, status, "p5.48xlarge");
	} else if (strcmp(path, "/latest/meta-data/instance-life-cycle") == 0) {
		status = 200;
		reply_str(fd, status, "spot");
	} else if (strcmp(path, "/latest/meta-data/placement/availability-zone") == 0) {
		status = 200;
		reply_str(fd, status, "us-east-1a");
	} else if (strcmp(path, "/latest/dynamic/instance-identity/document") == 0) {
		status = 200;
		reply_str(fd, status, "{\"instanceId\":\"i-0123456789abcdef0\","
		    "\"instanceType\":\"p5.48xlarge\",\"availabilityZone\":\"us-east-1a\","
		    "\"region\":\"us-east-1\"}");
	} else if (strcmp(path, "/latest/meta-data/iam/security-credentials/") == 0) {
		status = 200;
		reply_str(fd, status, "spotrun-role");
	} else if (strcmp(path, "/latest/meta-data/iam/security-credentials/spotrun-role") == 0) {
		char upd[32];
		unsigned long n = ++e->role_serial;

		iso_time(wall(), upd, sizeof upd);
		iso_time(wall() + e->role_ttl, when, sizeof when);
		snprintf(body, sizeof body, "{\"Code\":\"Success\",\"LastUpdated\":\"%s\","
		    "\"Type\":\"AWS-HMAC\",\"AccessKeyId\":\"ASIAEMU%lu\","
		    "\"SecretAccessKey\":\"emu-secret-%lu\",\"Token\":\"emu-token-%lu\","
		    "\"Expiration\":\"%s\"}", upd, n, n, n, when);
		status = 200;
		reply_str(fd, status, body);
	} else {
		status = 404;
		reply_str(fd, status, "Not Found\n");
	}
out:
	fprintf(e->log, "%s %s ttl=%s token=%s -> %d\n", method, path, ttlh, tok, status);
	return stall;
}

static void
usage(void)
{
	fprintf(stderr, "usage: mdemu [-p PORTFILE] [-l LOGFILE] [-T SECS] [-A ACTION] "
	    "[-W SECS] [-R SECS] [-t TTL] [-u FROM:TO] [-b BODY] [-H] [-r] [-S] [-G SECS] [-M SECS] "
	    "[-m SECS] [-F] [-Z SECS] [-E TYPE] [-N NOTBEFORE] [-O SECS] [-z SECS] [-n SECS] "
	    "[-I SECS] [-J SECS] [-j SECS] "
	    "[-6] [-U] [-C FILE]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct conn conns[MAXCONN];
	struct pollfd pfd[MAXCONN + 1];
	struct sockaddr_in sa;
	struct sockaddr_in6 sa6;
	socklen_t salen = sizeof sa, salen6 = sizeof sa6;
	const char *portfile = NULL, *logfile = NULL;
	struct emu e;
	FILE *pf;
	int ls, c, i, n, one = 1, v6 = 0, port;

	memset(&e, 0, sizeof e);
	e.notice_at = e.rebalance_at = e.burst_from = e.again_at = -1;
	e.preempt_at = e.terminate_at = e.migrate_at = -1;
	e.action = "terminate";
	e.az_at = e.az_other_at = e.az_delay = -1;
	e.az_type = "Preempt";
	e.role_ttl = 3600;
	e.mi_ttl = e.mi_claim = -1;
	while ((c = getopt(argc, argv, "p:l:T:A:W:R:t:u:b:HrSG:M:m:FZ:E:N:O:z:n:I:J:j:6UC:")) != -1) {
		switch (c) {
		case 'p': portfile = optarg; break;
		case 'l': logfile = optarg; break;
		case 'T': e.notice_at = atof(optarg); break;
		case 'A': e.action = optarg; break;
		case 'W': e.again_at = atof(optarg); break;
		case 'R': e.rebalance_at = atof(optarg); break;
		case 't': e.ttl_cap = atol(optarg); break;
		case 'u':
			if (sscanf(optarg, "%lf:%lf", &e.burst_from, &e.burst_to) != 2)
				usage();
			break;
		case 'b': e.body = optarg; break;
		case 'H': e.huge = 1; break;
		case 'r': e.redirect = 1; break;
		case 'S': e.stall = 1; break;
		case 'G': e.preempt_at = atof(optarg); break;
		case 'M': e.terminate_at = atof(optarg); break;
		case 'm': e.migrate_at = atof(optarg); break;
		case 'F': e.no_flavor = 1; break;
		case 'Z': e.az_at = atof(optarg); break;
		case 'E': e.az_type = optarg; break;
		case 'N': e.az_notbefore = optarg; break;
		case 'O': e.az_other_at = atof(optarg); break;
		case 'z': e.az_delay = atof(optarg); break;
		case 'n': e.az_noname = atof(optarg); break;
		case 'I': e.role_ttl = atof(optarg); break;
		case 'J': e.mi_ttl = atof(optarg); break;
		case 'j': e.mi_claim = atof(optarg); break;
		case 'U': e.log_ua = 1; break;
		case 'C': e.gate = optarg; break;
		case '6': v6 = 1; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	signal(SIGPIPE, SIG_IGN);
	srandom((unsigned)getpid() ^ (unsigned)time(NULL));
	e.etag_seed = ((unsigned long)random() << 31) ^ (unsigned long)random();
	e.log = stderr;
	if (logfile != NULL && (e.log = fopen(logfile, "a")) == NULL)
		die(logfile);
	setvbuf(e.log, NULL, _IOLBF, 0);

	if ((ls = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		die("socket");
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = 0;
	memset(&sa6, 0, sizeof sa6);
	sa6.sin6_family = AF_INET6;
	sa6.sin6_addr = in6addr_loopback;
	sa6.sin6_port = 0;
	if (v6) {
		if (bind(ls, (struct sockaddr *)&sa6, sizeof sa6) == -1 || listen(ls, 64) == -1)
			die("bind [::1]:0");
		if (getsockname(ls, (struct sockaddr *)&sa6, &salen6) == -1)
			die("getsockname");
		port = ntohs(sa6.sin6_port);
	} else {
		if (bind(ls, (struct sockaddr *)&sa, sizeof sa) == -1 || listen(ls, 64) == -1)
			die("bind 127.0.0.1:0");
		if (getsockname(ls, (struct sockaddr *)&sa, &salen) == -1)
			die("getsockname");
		port = ntohs(sa.sin_port);
	}
	e.start_mono = mono();
	e.start_wall = wall();
	fprintf(e.log, "start %.6f\n", e.start_wall);
	/* Gated: nothing is due until the file appears (every "SECS after
	 * start" lies a year ahead meanwhile). */
	if (e.gate != NULL)
		e.start_mono += GATE_FAR;
	if (portfile != NULL) {
		char tmp[4096];

		snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
		if ((pf = fopen(tmp, "w")) == NULL)
			die(tmp);
		fprintf(pf, "%d\n", port);
		if (fclose(pf) != 0 || rename(tmp, portfile) == -1)
			die(portfile);
	} else {
		printf("%d\n", port);
		fflush(stdout);
	}

	for (i = 0; i < MAXCONN; i++) {
		conns[i].fd = -1;
		conns[i].parked = 0;
		conns[i].azure = 0;
	}
	for (;;) {
		double wake;
		int ms = -1;

		if (e.gate != NULL && !e.gate_open && access(e.gate, F_OK) == 0) {
			e.gate_open = 1;
			e.start_mono = mono();
			e.start_wall = wall();
			fprintf(e.log, "gate %.6f\n", e.start_wall);
		}
		wake = next_wake(&e, conns);
		if (wake >= 0) {
			/* a gated wake lies a year ahead: more ms than an int holds */
			double d = wake <= mono() ? 0 : ceil((wake - mono()) * 1000);

			ms = d > INT_MAX ? INT_MAX : (int)d;
		}
		if (e.gate != NULL && !e.gate_open && (ms < 0 || ms > GATE_POLL_MS))
			ms = GATE_POLL_MS;	/* look for the file again soon */
		pfd[0].fd = ls;
		pfd[0].events = POLLIN;
		for (i = 0; i < MAXCONN; i++) {
			pfd[i + 1].fd = conns[i].fd;
			pfd[i + 1].events = POLLIN;
		}
		if (poll(pfd, MAXCONN + 1, ms) == -1) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (pfd[0].revents & POLLIN) {
			int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);

			for (i = 0; fd != -1 && i < MAXCONN && conns[i].fd != -1; i++)
				;
			if (fd != -1 && i == MAXCONN)
				close(fd);	/* full: the client retries */
			else if (fd != -1) {
				conns[i].fd = fd;
				conns[i].len = 0;
				conns[i].stalled = 0;
				conns[i].parked = 0;
				conns[i].azure = 0;
			}
		}
		for (i = 0; i < MAXCONN; i++) {
			struct conn *k = &conns[i];
			char *head, save, cl[32];
			size_t hlen, blen = 0;

			if (k->fd == -1 || pfd[i + 1].fd != k->fd ||
			    !(pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = (int)recv(k->fd, k->buf + k->len, REQMAX - k->len, 0);
			if (n <= 0 || k->stalled) {
				if (k->parked && k->azure)
					fprintf(e.log, "%s metadata=true -> 0\n", k->line);
				else if (k->parked)
					fprintf(e.log, "%s flavor=Google -> 0 etag=-\n", k->line);
				close(k->fd);	/* closed by the client, or the stall ends */
				k->fd = -1;
				k->parked = k->azure = 0;
				continue;
			}
			k->len += (size_t)n;
			k->buf[k->len] = '\0';
			head = strstr(k->buf, "\r\n\r\n");
			if (head == NULL && k->len < REQMAX)
				continue;	/* the head is not complete yet */
			if (head != NULL) {
				/* Wait for a body of Content-Length bytes (a POST). */
				hlen = (size_t)(head - k->buf) + 4;
				save = head[2];
				head[2] = '\0';
				if (header(k->buf, "Content-Length", cl, sizeof cl))
					blen = strtoul(cl, NULL, 10);
				head[2] = save;
				if (blen > REQMAX - hlen)
					blen = REQMAX - hlen;
				if (k->len < hlen + blen)
					continue;
				k->buf[hlen + blen] = '\0';
				k->body = k->buf + hlen;
			}
			if (head == NULL) {
				reply_str(k->fd, 400, "request head too large\n");
				fprintf(e.log, "? ? ttl=- token=none -> 400\n");
			} else {
				head[2] = '\0';	/* keep the last header's CRLF */
				if (serve(&e, k, k->buf)) {
					k->stalled = 1;
					continue;
				}
			}
			close(k->fd);
			k->fd = -1;
		}
		wake_parked(&e, conns);
	}
}
