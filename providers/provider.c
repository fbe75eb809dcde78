/*
 * provider.c: the provider table, creation by name, the notice pipe and the
 * per-VM bookkeeping shared by every provider. The implementations
 * (local.c, signal.c, aws.c, gcp.c, azure.c) only decide when a notice happens and post it
 * here; the supervisor polls sr_provider_fd() and takes notices with
 * sr_provider_read().
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider-int.h"
#include "util.h"

/* Tried in this order by "auto"; local detects every machine, so it comes
 * last (the cloud providers go before it). aws, gcp and azure do not probe yet
 * (their detect says no), so "auto" costs no network wait. */
static const struct sr_provider_ops *const providers[] = {
	&sr_provider_aws_ops,
	&sr_provider_gcp_ops,
	&sr_provider_azure_ops,
	&sr_provider_signal_ops,
	&sr_provider_local_ops,
};

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "auto, local, signal": the names a job file may give, sorted. */
static void
valid_names(char *buf, size_t len)
{
	const char *names[SR_ARRAY_LEN(providers)];
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(providers); i++)
		names[i] = providers[i]->name;
	qsort(names, SR_ARRAY_LEN(names), sizeof names[0], cmp_names);
	strlcpy(buf, "auto", len);
	for (i = 0; i < SR_ARRAY_LEN(names); i++) {
		strlcat(buf, ", ", len);
		strlcat(buf, names[i], len);
	}
}

static const struct sr_provider_ops *
find_ops(const struct sr_provider_conf *conf, char *err)
{
	const char *name = conf->name;
	char names[256];
	size_t i;

	if (name == NULL || strcmp(name, "auto") == 0) {
		for (i = 0; i < SR_ARRAY_LEN(providers); i++) {
			if (providers[i]->detect != NULL && providers[i]->detect(conf))
				return providers[i];
		}
		sr_err(err, "create provider auto: no provider detected this machine");
		return NULL;
	}
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
	int fds[2];

	ops = find_ops(conf, err);
	if (ops == NULL)
		return -1;
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) == -1)
		return sr_errno(err, "create provider %s: pipe", ops->name);
	p = sr_calloc(1, sizeof *p);
	p->ops = ops;
	p->conf = *conf;
	p->conf.name = sr_strdup(ops->name);
	p->conf.notice_file = conf->notice_file ? sr_strdup(conf->notice_file) : NULL;
	p->conf.trace = conf->trace ? sr_strdup(conf->trace) : NULL;
	p->conf.endpoint = conf->endpoint ? sr_strdup(conf->endpoint) : NULL;
	p->pipe_rd = fds[0];
	p->pipe_wr = fds[1];
	if (ops->init(p, err) == -1) {
		p->ops = NULL;	/* nothing of the implementation to free */
		sr_provider_free(p);
		return -1;
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
			sr_provider_stop_vm(p);
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

void
sr_provider_stop_vm(struct sr_provider *p)
{
	struct sr_notice n;

	if (!p->running)
		return;
	if (p->ops->stop_vm != NULL)
		p->ops->stop_vm(p);
	p->running = 0;
	/* A notice nobody took belongs to the VM that is gone: drop it, so the
	 * next VM does not start with a stale one. */
	while (read(p->pipe_rd, &n, sizeof n) > 0)
		;
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
