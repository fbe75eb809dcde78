/*
 * signal.c: the `signal` provider: SIGTERM to the supervisor is the notice.
 * That is how Slurm (preemption with GraceTime), Kubernetes
 * (terminationGracePeriodSeconds), `docker stop` and `systemctl stop` say a
 * job must go; each sends SIGKILL when its grace period ends. So the
 * deadline is the first SIGTERM + conf->grace: a second SIGTERM queues
 * another notice but does not restart the grace period. SIGINT and every
 * other signal are not notices (Ctrl-C stays an interrupt). There is no
 * next VM: the run checkpoints and exits 75 for the scheduler to requeue.
 */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider-int.h"
#include "util.h"

struct sigprov {
	double deadline;	/* epoch seconds; 0 until the first SIGTERM */
};

static int
signal_init(struct sr_provider *p, char *err)
{
	if (!(p->conf.grace >= 0) || isinf(p->conf.grace))
		return sr_err(err, "create provider signal: grace is %g; it must be a "
		    "finite number >= 0 (seconds between SIGTERM and SIGKILL)",
		    p->conf.grace);
	p->priv = sr_calloc(1, sizeof(struct sigprov));
	return 0;
}

static void
signal_free(struct sr_provider *p)
{
	free(p->priv);
}

static int
signal_start_vm(struct sr_provider *p, char *err)
{
	return 0;	/* nothing to watch: the notice comes as a signal */
}

static int
signal_on_signal(struct sr_provider *p, int signo)
{
	struct sigprov *s = p->priv;
	struct sr_notice n;

	if (signo != SIGTERM)
		return 0;
	memset(&n, 0, sizeof n);
	n.kind = SR_NOTICE_PREEMPT;
	n.seen = sr_now();
	if (s->deadline == 0)
		s->deadline = n.seen + p->conf.grace;
	n.deadline = s->deadline;
	strlcpy(n.reason, "SIGTERM", sizeof n.reason);
	sr_provider_post(p, &n);
	return 1;
}

static int
signal_next_vm(const struct sr_provider *p)
{
	return 0;
}

static int
signal_facts(struct sr_provider *p, struct sr_facts *f, char *err)
{
	sr_provider_hostname(f->instance_id, sizeof f->instance_id, 0);
	sr_provider_describe_host(f->instance_type, sizeof f->instance_type);
	strlcpy(f->provider, "signal", sizeof f->provider);
	strlcpy(f->zone, "unknown", sizeof f->zone);
	strlcpy(f->lifecycle, "unknown", sizeof f->lifecycle);
	return 0;
}

const struct sr_provider_ops sr_provider_signal_ops = {
	.name = "signal",
	.window_key = "grace",	/* SIGTERM's grace period */
	.detect = NULL,		/* chosen by name only */
	.init = signal_init,
	.free = signal_free,
	.start_vm = signal_start_vm,
	.next_vm = signal_next_vm,
	.facts = signal_facts,
	.on_signal = signal_on_signal,
};
