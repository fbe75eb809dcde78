/*
 * provider-int.h: what a provider implementation plugs into provider.c. Each
 * provider (local.c, signal.c, aws.c, gcp.c, azure.c) exports one
 * struct sr_provider_ops; provider.c lists them in its table, owns the notice
 * pipe and the per-VM bookkeeping, and calls the ops. Adding a provider is
 * one new file and one line in that table.
 */
#ifndef SR_PROVIDER_INT_H
#define SR_PROVIDER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "provider.h"

struct sr_provider_ops {
	const char *name;
	/* What it is to the modules above (provider.h's struct
	 * sr_provider_kind, name aside): keys, rented, window_key,
	 * poll_note. */
	unsigned keys;
	int rented;
	const char *window_key;
	const char *poll_note;
	/* Whether this machine is this provider's (for "auto"): one probe of
	 * at most timeout seconds, run on a thread of its own beside the
	 * other providers' probes (so it touches nothing but its arguments);
	 * the first in table order that says yes is picked. NULL: never
	 * picked by "auto". 1 yes, 0 no. */
	int (*detect)(const struct sr_provider_conf *conf, double timeout);
	/* The variable that, "true", forbids the probe (its cloud's metadata
	 * address is not to be asked: imds.h's SR_IMDS_OFF_*); NULL none. */
	const char *detect_off;
	/* Validate p->conf and set up p->priv; 0, or SR_PROVIDER_ECONF (a bad
	 * setting) or SR_PROVIDER_ESYS (anything else) with err set. */
	int (*init)(struct sr_provider *p, char *err);
	/* Release p->priv (after stop_vm when a VM was running). */
	void (*free)(struct sr_provider *p);
	/* Start watching VM p->attempt; 0 or -1 with err set. */
	int (*start_vm)(struct sr_provider *p, char *err);
	/* Stop watching promptly (join any thread); NULL: nothing to stop. */
	void (*stop_vm)(struct sr_provider *p);
	/* NULL: no signal is a notice. */
	int (*on_signal)(struct sr_provider *p, int signo);
	int (*next_vm)(const struct sr_provider *p);
	int simulated;		/* sr_provider_simulated */
	/* f arrives zeroed; fill what is known. */
	int (*facts)(struct sr_provider *p, struct sr_facts *f, char *err);
	/* NULL: acknowledging is a no-op that succeeds. Must not block on
	 * the network (see sr_provider_ack). */
	int (*ack)(struct sr_provider *p, const struct sr_notice *n, char *err);
	/* NULL: nothing is ever pending (see sr_provider_ack_wait). */
	int (*ack_wait)(struct sr_provider *p, char *err);
	/* NULL: no metadata service (see sr_provider_endpoint). */
	const char *(*endpoint)(const struct sr_provider *p);
};

struct sr_provider {
	const struct sr_provider_ops *ops;
	struct sr_provider_conf conf;	/* the strings are copies owned here */
	int pipe_rd, pipe_wr;		/* the notice pipe (non-blocking, CLOEXEC) */
	int attempt;			/* the current or last VM; 0 before the first */
	int running;			/* between start_vm and stop_vm */
	int taken;			/* SR_NOTICE_PREEMPT notices taken by
					 * sr_provider_read in this provider's life */
	double detect_seconds;		/* what "auto" took; -1 when named */
	void *priv;			/* the implementation's state */
};

/* Queue notice n on p's pipe; safe from any thread (one write of a struct
 * smaller than PIPE_BUF is atomic). 0, or -1 when the pipe is full or
 * broken (the notice is dropped: at most one per VM is ever pending). */
int sr_provider_post(struct sr_provider *p, const struct sr_notice *n);

/* The base URL a cloud provider uses: conf_url when set (the job file's
 * endpoint, or the provider's own choice such as aws's IPv6 address), else
 * the environment variable env when set and not empty, else dflt. The
 * result is one of the three strings, not a copy. */
const char *sr_provider_base_url(const char *conf_url, const char *env, const char *dflt);
/* Copy url without its trailing slashes into a new string (malloc'd). */
char *sr_provider_trim_url(const char *url);

/* This machine in words for sr_facts.instance_type: "2 CPUs, no GPU",
 * "16 CPUs, 8 GPUs" (NVIDIA device nodes are counted). */
void sr_provider_describe_host(char *buf, size_t len);
/* The host name: the first line of /etc/hostname, else gethostname(2),
 * else "localhost". short_name: cut at the first dot. */
void sr_provider_hostname(char *buf, size_t len, int short_name);

/* local.c: the delay `random_mean` gives VM `attempt`: an exponential with
 * that mean drawn from splitmix64(seed + attempt). Exposed for the tests. */
double sr_local_random_delay(double mean, uint64_t seed, int attempt);

/* aws.c: how many polls failed in this provider's life and the last
 * failure's message (len bytes into last, may be NULL); -1 when p is not
 * the aws provider. For the tests and diagnostics. */
int sr_aws_errors(struct sr_provider *p, unsigned long *count, char *last, size_t len);

/* gcp.c: the same for the gcp provider; -1 when p is not it. */
int sr_gcp_errors(struct sr_provider *p, unsigned long *count, char *last, size_t len);

/* azure.c: the same for the azure provider; -1 when p is not it. */
int sr_azure_errors(struct sr_provider *p, unsigned long *count, char *last, size_t len);
/* azure.c: the deadline of a Preempt or Terminate whose NotBefore is
 * not_before (NULL: none) seen at now (epoch seconds): NotBefore when it is
 * exactly RFC 1123 ("Mon, 19 Sep 2016 18:29:47 GMT") and at most an hour
 * ahead, past included (the event may start at once), else now + 30 s (a
 * Preempt's notice). */
double sr_azure_deadline(const char *not_before, double now);

extern const struct sr_provider_ops sr_provider_aws_ops;
extern const struct sr_provider_ops sr_provider_azure_ops;
extern const struct sr_provider_ops sr_provider_gcp_ops;
extern const struct sr_provider_ops sr_provider_local_ops;
extern const struct sr_provider_ops sr_provider_signal_ops;

#endif
