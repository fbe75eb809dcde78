/*
 * provider.h: where preemption notices come from. One interface for every
 * source: the clouds' metadata services (`aws`, `gcp`, `azure`), SIGTERM
 * with a grace period (`signal`) and simulated notices (`local`), plus
 * `auto`, which detects the cloud.
 *
 * A provider watches in a thread of its own and reports notices by writing
 * to a pipe, so the supervisor's poll loop wakes the moment one arrives.
 * Lifecycle: sr_provider_new -> (sr_provider_start_vm ... sr_provider_stop_vm)
 * once per attempt ("VM") -> sr_provider_free.
 */
#ifndef SR_PROVIDER_H
#define SR_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

enum sr_notice_kind {
	SR_NOTICE_PREEMPT = 1,	/* the machine goes away at the deadline */
	SR_NOTICE_EARLY,	/* early warning (rebalance): checkpoint, keep running */
	/* The machine freezes the job's processes where they stand and may
	 * resume them later, or never (AWS hibernate: RAM saved to the root
	 * volume, the same instance resumed when capacity returns). The runner
	 * asks for a checkpoint as for SR_NOTICE_EARLY (whatever
	 * early_checkpoint says: it is the only one if the machine never comes
	 * back) and does not stop the job: killing it would lose what the
	 * hibernation keeps. deadline: when the freeze begins (often already
	 * past: AWS gives no two minutes for hibernation). The provider keeps
	 * watching: a resumed machine can be interrupted again. */
	SR_NOTICE_FREEZE
};

struct sr_notice {
	enum sr_notice_kind kind;
	double seen;		/* epoch seconds when the provider saw it */
	double deadline;	/* epoch seconds when the machine goes away; may
				 * be past (the machine may be going already:
				 * the runner then has no time for a checkpoint
				 * and stops the job at once) */
	char reason[128];	/* "simulated preemption", "SIGTERM", ... */
};

/* Facts about this machine, recorded with each attempt. */
struct sr_facts {
	char provider[16];
	char instance_id[64];
	char instance_type[64];
	char zone[64];
	char lifecycle[32];	/* "spot", "on-demand", "unknown", "spot (simulated)" */
};

/* Settings from the job's [provider] section. */
struct sr_provider_conf {
	const char *name;		/* "local", "signal", "aws", "gcp", "azure", "auto" */
	double window;			/* local: notice window in seconds (default 30) */
	double grace;			/* signal: grace period in seconds (default 30) */
	/* local: what triggers a notice (the first that fires). */
	double after;			/* seconds after the VM starts; 0 = off */
	double random_mean;		/* mean seconds of an exponential; 0 = off */
	uint64_t seed;			/* for random_mean */
	const char *notice_file;	/* a notice when this file appears; NULL = off */
	const char *trace;		/* a spot trace (JSON, see shared/data) or NULL */
	double trace_scale;		/* trace seconds per real second (e.g. 600); > 0 */
	double trace_start;		/* trace offset in trace seconds */
	int trace_node;			/* local: the gang node (0-based) this VM
					 * is, for a multi-node trace (values 0..N
					 * nodes up, trace.h): node k replays its
					 * own up-periods; a one-node trace is the
					 * same for every node. Set by the runner,
					 * not a job file key. */
	/* local: since when (epoch seconds) the first VM this provider starts
	 * has been up; 0: from its start. Set by the runner for an agent,
	 * which plays the local provider's machines one after another across
	 * its jobs: a trace's period then ends where it would for that
	 * machine, not a whole period after each claim. */
	double vm_since;
	int max_preemptions;		/* local: stop noticing after this many; -1 = no limit */
	/* local: watch the machine alone, not a run: only the trace's notices
	 * (the end of the machine's up-period), not after, random_mean or
	 * notice_file, which are each run's own. Set by an agent for its
	 * watch between runs (fleet/agent-watch.c), not a job file key. */
	int machine_only;
	/* aws, gcp, azure: the metadata service's base URL; NULL: aws
	 * http://[fd00:ec2::254] with ipv6, else $SPOTRUN_AWS_ENDPOINT, else
	 * http://169.254.169.254; gcp $SPOTRUN_GCP_ENDPOINT, else
	 * http://metadata.google.internal; azure $SPOTRUN_AZURE_ENDPOINT, else
	 * http://169.254.169.254. So a setting of the job file wins over the
	 * environment. "auto" probes the same URLs. */
	const char *endpoint;
	int ipv6;			/* aws: the IPv6 endpoint fd00:ec2::254 */
	double poll;			/* aws, azure: seconds between polls; 0 = 0.5.
					 * gcp: timeout_sec of one long-poll
					 * (whole seconds, 1..30); 0 = 10. When
					 * "auto" picks gcp, poll is not used. */
};

/* The [provider] keys, beyond name, that only some providers take: a job
 * file that sets one for a provider that does not take it is refused, so
 * that a typo in name does not silently drop it. */
enum sr_provider_key {
	SR_PROVIDER_KEY_ENDPOINT = 1 << 0,	/* endpoint: a metadata service's URL */
	SR_PROVIDER_KEY_POLL = 1 << 1,		/* poll: seconds between polls */
	SR_PROVIDER_KEY_IPV6 = 1 << 2		/* ipv6: the service's IPv6 address */
};

/* What a provider is, by name, for the modules above that must not know
 * the names: the job file's checks, the fleet's pricing. */
struct sr_provider_kind {
	const char *name;
	unsigned keys;			/* enum sr_provider_key bits it takes */
	/* A cloud that rents the machine out: the machine is priced by its
	 * instance type, and its facts' lifecycle says whether it is spot.
	 * 0: a machine spotrun does not rent (local, signal). */
	int rented;
	/* It asks a cloud's metadata address (169.254.169.254...): the clouds
	 * and auto's probes. 0 (local, signal): nothing on the machine may
	 * ask one for it, the store's credentials included (sr_store_opts'
	 * no_metadata). */
	int metadata;
	/* The key of [provider] that sets the notice window this provider
	 * gives ("window", "grace"), which must be longer than the
	 * checkpoint's margin; NULL: the cloud sets it. */
	const char *window_key;
	/* Said of it where poll is refused (", which long-polls"), or "". */
	const char *poll_note;
};

struct sr_provider;

/* How long "auto" may take at most to probe the clouds, all at once, in
 * seconds (each probe's connect and total timeout). */
#define SR_DETECT_TIMEOUT 0.3

/* sr_provider_new's errors: whose they are to fix. */
enum sr_provider_error {
	SR_PROVIDER_ECONF = -1,	/* the settings (the job file's): an unknown name,
				 * a bad value, a trace that is missing or bad or
				 * whose start is past its last up-period, an
				 * endpoint that is not a URL */
	SR_PROVIDER_ESYS = -2	/* this machine or spotrun: a pipe, libcurl's
				 * set-up, "auto" finding nothing */
};

/* Create the provider named by conf->name. "auto" (or NULL) probes the
 * metadata services of aws, gcp and azure in parallel, each bounded by
 * SR_DETECT_TIMEOUT, and picks the first of those (in that order) whose
 * service answered as only it does, else local: on a laptop that costs at
 * most about SR_DETECT_TIMEOUT. The strings in conf are copied. 0, or an
 * enum sr_provider_error with err set; an unknown name's message lists the
 * valid ones. */
int sr_provider_new(const struct sr_provider_conf *conf, struct sr_provider **out, char *err);
void sr_provider_free(struct sr_provider *p);
/* What the provider named name is; "auto" too (it takes poll and ipv6,
 * which it passes to the cloud it finds). 0 with *kind filled, or -1 when
 * no provider has that name. */
int sr_provider_kind(const char *name, struct sr_provider_kind *kind);
/* The names, as a list in words for messages ("aws, gcp or azure"): with
 * key 0 every name a job file may give, sorted, "auto" first; else those
 * that take key (an enum sr_provider_key), in table order, "auto" last when
 * it takes it too. Truncated to len. */
void sr_provider_names(unsigned key, char *buf, size_t len);
const char *sr_provider_name(const struct sr_provider *p);
/* Seconds "auto" took to decide; -1 when conf->name named the provider. */
double sr_provider_detect_seconds(const struct sr_provider *p);
/* The metadata service's base URL (aws, gcp, azure: without a trailing
 * slash), or NULL for the providers that have none. Creating a provider
 * connects nowhere, so this shows where it would go. */
const char *sr_provider_endpoint(const struct sr_provider *p);

/* Start watching for attempt number `attempt` (1-based). */
int sr_provider_start_vm(struct sr_provider *p, int attempt, char *err);
/* Stop watching promptly (joins the thread) and drop the notices of this VM
 * that nobody read: they do not count for max_preemptions. With left not
 * NULL, the first preemption notice among them (with the local provider,
 * also a timed one whose time had come as its watch stopped) is given
 * there instead, and 1 returned:
 * a run ending for another reason learns that its machine goes too. 0
 * when there was none. */
int sr_provider_stop_vm(struct sr_provider *p, struct sr_notice *left);

/* Readable when a notice is pending. */
int sr_provider_fd(const struct sr_provider *p);
/* Take the pending notice: 1 got one, 0 none pending, -1 error. The pipe is
 * non-blocking and close-on-exec; each notice is one atomic write. */
int sr_provider_read(struct sr_provider *p, struct sr_notice *n, char *err);

/* The supervisor got signal signo: 1 if the provider took it as a notice
 * (the `signal` provider takes SIGTERM), else 0. Async-signal-unsafe: call
 * from the loop, not from a handler. */
int sr_provider_on_signal(struct sr_provider *p, int signo);

/* Whether a next VM follows a preemption inside this run (local: yes, after
 * every notice it gave; max_preemptions caps the notices, so the VM after the
 * last one runs to the end; signal: no, the run exits 75). */
int sr_provider_next_vm(const struct sr_provider *p);

/* Whether its notices are simulated (local): nothing happens to the machine
 * or the job before the deadline, so a job that ends on its own after one
 * (a non-zero exit, a SIGSEGV) crashed by itself, and is no preemption. 1 or
 * 0 (the clouds and signal, whose sender may stop the job itself). */
int sr_provider_simulated(const struct sr_provider *p);

int sr_provider_facts(struct sr_provider *p, struct sr_facts *f, char *err);
/* Tell the provider the checkpoint for this notice is safe (Azure's ack).
 * Returns at once: the acknowledgment goes out on a thread of its own, so
 * the caller's loop never waits for the network. 0 (also when this
 * provider or notice needs none), or -1 with err when it cannot start. */
int sr_provider_ack(struct sr_provider *p, const struct sr_notice *n, char *err);
/* Wait for the acknowledgment sr_provider_ack started to end (each is
 * bounded by its request timeout, 2 s for Azure): 1 it was sent and
 * accepted, 0 none was pending, -1 it failed, with err. stop_vm waits for
 * it too (and reports a failure on stderr), so it is never lost when the
 * run ends; call this first to log the outcome. */
int sr_provider_ack_wait(struct sr_provider *p, char *err);

#endif
