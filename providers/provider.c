/*
 * provider.c: the provider table, creation by name (and "auto": the
 * clouds' probes run in parallel), the notice pipe and the per-VM
 * bookkeeping shared by every provider. The implementations (local.c,
 * signal.c, aws.c, gcp.c, azure.c) only decide when a notice happens and
 * post it here; the supervisor polls sr_provider_fd() and takes notices
 * with sr_provider_read().
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "imds.h"
#include "provider-int.h"
#include "util.h"

/* Picked in this order by "auto" among those whose probe said yes; local
 * detects every machine, so it comes last. aws and azure share an address
 * (169.254.169.254) but each probe asks for what only its own service
 * answers, so at most one of them says yes on a real machine. */
static const struct sr_provider_ops *const providers[] = {
	&sr_provider_aws_ops,
	&sr_provider_gcp_ops,
	&sr_provider_azure_ops,
	&sr_provider_signal_ops,
	&sr_provider_local_ops,
};

/* What "auto" takes of the keys: it passes them to the cloud it finds. */
#define AUTO_KEYS	(SR_PROVIDER_KEY_POLL | SR_PROVIDER_KEY_IPV6)

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names that take key (0: every name a job file may give, sorted,
 * "auto" first), into names; returns how many. */
static size_t
collect_names(unsigned key, const char *names[SR_ARRAY_LEN(providers) + 1])
{
	size_t i, n = 0;

	if (key == 0)
		names[n++] = "auto";
	for (i = 0; i < SR_ARRAY_LEN(providers); i++)
		if (key == 0 || (providers[i]->keys & key))
			names[n++] = providers[i]->name;
	if (key == 0)
		qsort(names + 1, n - 1, sizeof names[0], cmp_names);
	else if (AUTO_KEYS & key)
		names[n++] = "auto";
	return n;
}

/* names[0..n) joined into buf, the last two by last ("a, b or c"). */
static void
join_names(const char *const *names, size_t n, const char *last, char *buf, size_t len)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i > 0)
			strlcat(buf, i + 1 == n ? last : ", ", len);
		strlcat(buf, names[i], len);
	}
}

void
sr_provider_names(unsigned key, char *buf, size_t len)
{
	const char *names[SR_ARRAY_LEN(providers) + 1];

	join_names(names, collect_names(key, names), " or ", buf, len);
}

int
sr_provider_kind(const char *name, struct sr_provider_kind *kind)
{
	size_t i;

	memset(kind, 0, sizeof *kind);
	kind->poll_note = "";
	if (strcmp(name, "auto") == 0) {
		kind->name = "auto";
		kind->keys = AUTO_KEYS;
		kind->metadata = 1;
		return 0;
	}
	for (i = 0; i < SR_ARRAY_LEN(providers); i++) {
		const struct sr_provider_ops *o = providers[i];

		if (strcmp(name, o->name) != 0)
			continue;
		kind->name = o->name;
		kind->keys = o->keys;
		kind->rented = o->rented;
		kind->metadata = o->rented;	/* the clouds; local and signal ask none */
		kind->window_key = o->window_key;
		if (o->poll_note != NULL)
			kind->poll_note = o->poll_note;
		return 0;
	}
	return -1;
}

/* "auto, aws, azure, gcp, local, signal": the names a job file may give,
 * sorted. */
static void
valid_names(char *buf, size_t len)
{
	const char *names[SR_ARRAY_LEN(providers) + 1];

	join_names(names, collect_names(0, names), ", ", buf, len);
}

/* How long "auto" waits for its probes at most: their own bound, plus a
 * little for the threads to report. A probe still running then (a
 * resolver that ignores the timeout, say) is left to finish on its own
 * and counts as "no". */
#define DETECT_WAIT	(SR_DETECT_TIMEOUT + 0.1)

/* What one "auto" shares with its probe threads: the last of them (or the
 * caller) to let go frees it, so a probe that outlives the wait touches
 * nothing of the caller's. */
struct detection {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* signalled as each probe ends */
	int refs;			/* the caller and each running probe */
	int pending;			/* probes not ended */
	struct sr_provider_conf conf;	/* a copy: endpoint is copied too */
	struct probe {
		struct detection *d;
		const struct sr_provider_ops *ops;
		int done, yes;
	} pr[SR_ARRAY_LEN(providers)];
};

static void
detection_release(struct detection *d)
{
	int last;

	pthread_mutex_lock(&d->lock);
	last = --d->refs == 0;
	pthread_mutex_unlock(&d->lock);
	if (!last)
		return;
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free((char *)d->conf.endpoint);
	free(d);
}

static void
probe_run(struct probe *pr)
{
	struct detection *d = pr->d;
	int yes = pr->ops->detect(&d->conf, SR_DETECT_TIMEOUT) == 1;

	pthread_mutex_lock(&d->lock);
	pr->yes = yes;
	pr->done = 1;
	d->pending--;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

static void *
probe_main(void *arg)
{
	struct probe *pr = arg;
	struct detection *d = pr->d;

	probe_run(pr);
	sr_http_cleanup();	/* the reference taken for this thread */
	detection_release(d);
	return NULL;
}

/* "auto": every provider's probe at once, so the wait is that of the
 * slowest probe (SR_DETECT_TIMEOUT, DETECT_WAIT at worst), not their sum;
 * the first in table order that said yes wins, so the choice does not
 * depend on which answered first. */
static const struct sr_provider_ops *
detect(const struct sr_provider_conf *conf, char *err)
{
	const struct sr_provider_ops *found = NULL;
	struct detection *d = sr_calloc(1, sizeof *d);
	pthread_condattr_t ca;
	pthread_attr_t ta;
	pthread_t th;
	sigset_t all, old;
	double until = sr_mono() + DETECT_WAIT;
	struct timespec ts;
	size_t i;

	if (pthread_mutex_init(&d->lock, NULL) != 0 || pthread_condattr_init(&ca) != 0 ||
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&d->cond, &ca) != 0 || pthread_attr_init(&ta) != 0 ||
	    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED) != 0)
		sr_fatal("create provider auto: pthread init failed");
	pthread_condattr_destroy(&ca);
	d->refs = 1;
	d->conf = *conf;
	d->conf.endpoint = conf->endpoint != NULL ? sr_strdup(conf->endpoint) : NULL;
	d->conf.notice_file = d->conf.trace = d->conf.name = NULL;
	/* The probes take no signals: they stay with the supervisor. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < SR_ARRAY_LEN(providers); i++) {
		struct probe *pr = &d->pr[i];

		pr->d = d;
		pr->ops = providers[i];
		if (pr->ops->detect == NULL ||
		    (pr->ops->detect_off != NULL && sr_imds_off(pr->ops->detect_off))) {
			pr->done = 1;
			continue;
		}
		if (sr_http_init(err) == -1) {
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			sr_err_prefix(err, "create provider auto");
			goto out;
		}
		pthread_mutex_lock(&d->lock);
		d->pending++;
		d->refs++;
		pthread_mutex_unlock(&d->lock);
		if (pthread_create(&th, &ta, probe_main, pr) != 0) {
			/* No thread: probe here instead. */
			probe_main(pr);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	pthread_mutex_lock(&d->lock);
	while (d->pending > 0 && sr_mono() < until) {
		ts.tv_sec = (time_t)until;
		ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_nsec = 999999999L;
		pthread_cond_timedwait(&d->cond, &d->lock, &ts);
	}
	for (i = 0; i < SR_ARRAY_LEN(providers) && found == NULL; i++) {
		if (d->pr[i].done && d->pr[i].yes)
			found = providers[i];
	}
	pthread_mutex_unlock(&d->lock);
	/* Local needs no probe, but its thread may not have run by the
	 * deadline on a loaded machine: it is the choice then all the same. */
	if (found == NULL)
		found = &sr_provider_local_ops;
out:
	pthread_attr_destroy(&ta);
	detection_release(d);
	return found;
}

static const struct sr_provider_ops *
find_ops(const struct sr_provider_conf *conf, char *err)
{
	const char *name = conf->name;
	char names[256];
	size_t i;

	if (name == NULL || strcmp(name, "auto") == 0)
		return detect(conf, err);
	for (i = 0; i < SR_ARRAY_LEN(providers); i++) {
		if (strcmp(name, providers[i]->name) == 0)
			return providers[i];
	}
	valid_names(names, sizeof names);
	sr_err(err, "create provider \"%s\": unknown name; valid names: %s", name, names);
	return NULL;
}

int
sr_provider_new(const struct sr_provider_conf *conf, struct sr_provider **out, char *err)
{
	const struct sr_provider_ops *ops;
	struct sr_provider *p;
	int fds[2], r, automatic = conf->name == NULL || strcmp(conf->name, "auto") == 0;
	double t0 = sr_mono(), took;

	ops = find_ops(conf, err);
	if (ops == NULL)	/* "auto" fails only for want of threads or libcurl */
		return automatic ? SR_PROVIDER_ESYS : SR_PROVIDER_ECONF;
	took = automatic ? sr_mono() - t0 : -1;
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) == -1) {
		sr_errno(err, "create provider %s: pipe", ops->name);
		return SR_PROVIDER_ESYS;
	}
	p = sr_calloc(1, sizeof *p);
	p->ops = ops;
	p->conf = *conf;
	p->conf.name = sr_strdup(ops->name);
	p->conf.notice_file = conf->notice_file ? sr_strdup(conf->notice_file) : NULL;
	p->conf.trace = conf->trace ? sr_strdup(conf->trace) : NULL;
	p->conf.endpoint = conf->endpoint ? sr_strdup(conf->endpoint) : NULL;
	/* poll means another thing to gcp (how long one long-poll waits), and
	 * it was given for aws and azure: "auto" does not pass it on. */
	if (automatic && strcmp(ops->name, "gcp") == 0)
		p->conf.poll = 0;
	p->detect_seconds = took;
	p->pipe_rd = fds[0];
	p->pipe_wr = fds[1];
	if ((r = ops->init(p, err)) != 0) {
		p->ops = NULL;	/* nothing of the implementation to free */
		sr_provider_free(p);
		return r == SR_PROVIDER_ESYS ? SR_PROVIDER_ESYS : SR_PROVIDER_ECONF;
	}
	*out = p;
	return 0;
}

void
sr_provider_free(struct sr_provider *p)
{
	if (p == NULL)
		return;
	if (p->ops != NULL) {
		if (p->running)
			sr_provider_stop_vm(p, NULL);
		p->ops->free(p);
	}
	close(p->pipe_rd);
	close(p->pipe_wr);
	free((char *)p->conf.name);
	free((char *)p->conf.notice_file);
	free((char *)p->conf.trace);
	free((char *)p->conf.endpoint);
	free(p);
}

const char *
sr_provider_name(const struct sr_provider *p)
{
	return p->ops->name;
}

double
sr_provider_detect_seconds(const struct sr_provider *p)
{
	return p->detect_seconds;
}

const char *
sr_provider_endpoint(const struct sr_provider *p)
{
	return p->ops->endpoint != NULL ? p->ops->endpoint(p) : NULL;
}

const char *
sr_provider_base_url(const char *conf_url, const char *env, const char *dflt)
{
	const char *v;

	if (conf_url != NULL && *conf_url != '\0')
		return conf_url;
	if ((v = getenv(env)) != NULL && *v != '\0')
		return v;
	return dflt;
}

char *
sr_provider_trim_url(const char *url)
{
	char *s = sr_strdup(url);
	size_t n = strlen(s);

	while (n > 0 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

int
sr_provider_start_vm(struct sr_provider *p, int attempt, char *err)
{
	if (attempt < 1)
		return sr_err(err, "start VM %d: attempts are numbered from 1", attempt);
	if (p->running)
		return sr_err(err, "start VM %d: VM %d is still being watched; stop it first",
		    attempt, p->attempt);
	p->attempt = attempt;
	if (p->ops->start_vm(p, err) == -1)
		return -1;
	p->running = 1;
	return 0;
}

int
sr_provider_stop_vm(struct sr_provider *p, struct sr_notice *left)
{
	struct sr_notice n;
	int got = 0;

	if (!p->running)
		return 0;
	if (p->ops->stop_vm != NULL)
		p->ops->stop_vm(p);
	p->running = 0;
	/* A notice nobody took belongs to the VM that is gone: drop it, so the
	 * next VM does not start with a stale one; the caller may see it. */
	while (read(p->pipe_rd, &n, sizeof n) == (ssize_t)sizeof n)
		if (left != NULL && !got && n.kind == SR_NOTICE_PREEMPT) {
			*left = n;
			got = 1;
		}
	return got;
}

int
sr_provider_fd(const struct sr_provider *p)
{
	return p->pipe_rd;
}

int
sr_provider_post(struct sr_provider *p, const struct sr_notice *n)
{
	ssize_t r;

	do
		r = write(p->pipe_wr, n, sizeof *n);
	while (r == -1 && errno == EINTR);
	return r == (ssize_t)sizeof *n ? 0 : -1;
}

int
sr_provider_read(struct sr_provider *p, struct sr_notice *n, char *err)
{
	ssize_t r;

	do
		r = read(p->pipe_rd, n, sizeof *n);
	while (r == -1 && errno == EINTR);
	if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (r == -1)
		return sr_errno(err, "read notice from %s", p->ops->name);
	if (r != (ssize_t)sizeof *n)
		return sr_err(err, "read notice from %s: short read (%zd of %zu bytes)",
		    p->ops->name, r, sizeof *n);
	n->reason[sizeof n->reason - 1] = '\0';
	if (n->kind == SR_NOTICE_PREEMPT)
		p->taken++;
	return 1;
}

int
sr_provider_simulated(const struct sr_provider *p)
{
	return p->ops->simulated;
}

int
sr_provider_on_signal(struct sr_provider *p, int signo)
{
	if (p->ops->on_signal == NULL)
		return 0;
	return p->ops->on_signal(p, signo);
}

int
sr_provider_next_vm(const struct sr_provider *p)
{
	return p->ops->next_vm(p);
}

int
sr_provider_facts(struct sr_provider *p, struct sr_facts *f, char *err)
{
	memset(f, 0, sizeof *f);
	return p->ops->facts(p, f, err);
}

int
sr_provider_ack(struct sr_provider *p, const struct sr_notice *n, char *err)
{
	if (p->ops->ack == NULL)
		return 0;
	return p->ops->ack(p, n, err);
}

int
sr_provider_ack_wait(struct sr_provider *p, char *err)
{
	if (p->ops->ack_wait == NULL)
		return 0;
	return p->ops->ack_wait(p, err);
}

void
sr_provider_describe_host(char *buf, size_t len)
{
	char path[32];
	int ncpu = sr_ncpus(), ngpu = 0, i;

	/* One /dev/nvidiaN per GPU the driver exposes (nvidiactl, -uvm and
	 * -modeset are not GPUs). */
	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof path, "/dev/nvidia%d", i);
		if (access(path, F_OK) == 0)
			ngpu++;
	}
	if (ngpu == 0)
		snprintf(buf, len, "%d CPU%s, no GPU", ncpu, ncpu == 1 ? "" : "s");
	else
		snprintf(buf, len, "%d CPU%s, %d GPU%s", ncpu, ncpu == 1 ? "" : "s",
		    ngpu, ngpu == 1 ? "" : "s");
}

void
sr_provider_hostname(char *buf, size_t len, int short_name)
{
	char host[256] = "";
	char *line = NULL, *s, *e;

	if (sr_read_file("/etc/hostname", 4096, &line, NULL, NULL) == 0) {
		s = line;
		while (isspace((unsigned char)*s))
			s++;
		e = s + strcspn(s, " \t\r\n");
		*e = '\0';
		strlcpy(host, s, sizeof host);
		free(line);
	}
	if (host[0] == '\0' && gethostname(host, sizeof host) == -1)
		host[0] = '\0';
	host[sizeof host - 1] = '\0';
	if (host[0] == '\0')
		strlcpy(host, "localhost", sizeof host);
	if (short_name)
		host[strcspn(host, ".")] = '\0';
	strlcpy(buf, host, len);
}
