/*
 * cmd-agent.c: `spotrun agent [options]`: run jobs from a queue on this
 * machine until told to stop (runner/agent.c): claim one it can run, run
 * it as `spotrun run` does, record how it ended, claim the next. The
 * options become struct sr_agent_opts; how the agent ended becomes the
 * exit status (doc/spotrun.1).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "cmd.h"
#include "fleet.h"
#include "trace.h"
#include "units.h"

enum {
	AG_QUEUE, AG_IDLE_TIMEOUT, AG_IDLE_COMMAND, AG_ONCE, AG_MAX_JOBS, AG_LABEL, AG_LABELS, AG_DIR,
	AG_PRICES, AG_PROVIDER, AG_TRACE_NODE, AG_QUIET
};

static const struct sr_opt agent_opts[] = {
	[AG_QUEUE] = { 0, "queue", "URL", "the queue (as for submit)" },
	[AG_IDLE_TIMEOUT] = { 0, "idle-timeout", "DUR", "end after DUR without a job (e.g. 10m)" },
	[AG_IDLE_COMMAND] = { 0, "idle-command", "CMD", "then run CMD (e.g. 'systemctl poweroff')" },
	[AG_ONCE] = { 0, "once", NULL, "end when nothing is left to claim" },
	[AG_MAX_JOBS] = { 0, "max-jobs", "N", "end after running N jobs" },
	[AG_LABEL] = { 0, "label", "K=V", "a label of this machine (gpus, gpu_type, ...)" },
	[AG_LABELS] = { 0, "labels", "K=V,...", "labels, comma-separated (the unit's form)" },
	[AG_DIR] = { 0, "dir", "DIR", "run jobs in DIR/jobs/ID" },
	[AG_PRICES] = { 0, "prices", "FILE", "price the machine with FILE's table" },
	[AG_PROVIDER] = { 0, "provider", "NAME", "the machine's provider (default auto: probed)" },
	[AG_TRACE_NODE] = { 0, "trace-node", "N", "local: replay node N (1..) of a multi-node trace" },
	[AG_QUIET] = { 'q', "quiet", NULL, "print only the important lines of runs" },
	{ 0 }
};

/* The exit status for how the agent ended. */
static int
agent_exit_code(const struct sr_agent_result *res)
{
	switch (res->end) {
	case SR_AGENT_IDLE:
		return res->idle_status > 0 ? res->idle_status : 0;
	case SR_AGENT_DRAINED:
	case SR_AGENT_MAX_JOBS:
		return 0;
	case SR_AGENT_PREEMPTED:
		return SR_EXIT_PREEMPTED;
	case SR_AGENT_SIGNALLED:
		return 128 + res->signal;
	case SR_AGENT_ERR_CONFIG:
		return SR_EXIT_USAGE;
	case SR_AGENT_ERR_QUEUE:
		return SR_EXIT_IOERR;
	case SR_AGENT_ERR_SYSTEM:
		return SR_EXIT_OSERR;
	}
	return SR_EXIT_SOFTWARE;
}

/* One label K=V (text, copied into *copy) into l; -1 after a message. */
static int
parse_label(const char *opt, const char *text, size_t len, struct sr_agent_label *l, char **copy)
{
	char err[SR_ERRMAX], *eq;

	*copy = strndup(text, len);
	if (*copy == NULL || (eq = strchr(*copy, '=')) == NULL || eq == *copy) {
		fprintf(stderr, "spotrun agent: %s %.*s: not KEY=VALUE (e.g. %s gpu_type=H100)\n", opt,
		    (int)len, text, opt);
		return -1;
	}
	*eq = '\0';
	l->key = *copy;
	l->value = eq + 1;
	if (sr_agent_label_check(l, err) == -1) {
		fprintf(stderr, "spotrun agent: %s: %s\n", opt, err);
		return -1;
	}
	return 0;
}

/* Every --label K=V and --labels K=V,... into *labels (*n of them,
 * malloc'd, their strings in *copies); -1 after a message. */
static int
parse_labels(const struct sr_args *a, struct sr_agent_label **labels, char ***copies, size_t *n)
{
	int i;

	*labels = NULL;
	*copies = NULL;
	*n = 0;
	for (i = 0; i < sr_args_has(a, AG_LABEL) + sr_args_has(a, AG_LABELS); i++) {
		int list = i >= sr_args_has(a, AG_LABEL);
		const char *p = list ? sr_args_nth(a, AG_LABELS, i - sr_args_has(a, AG_LABEL)) :
		    sr_args_nth(a, AG_LABEL, i);

		for (;;) {
			size_t len = list ? strcspn(p, ",") : strlen(p);

			*labels = realloc(*labels, (*n + 1) * sizeof **labels);
			*copies = realloc(*copies, (*n + 1) * sizeof **copies);
			if (*labels == NULL || *copies == NULL) {
				fprintf(stderr, "spotrun agent: out of memory\n");
				exit(SR_EXIT_OSERR);
			}
			(*copies)[*n] = NULL;
			(*n)++;
			if (parse_label(list ? "--labels" : "--label", p, len, &(*labels)[*n - 1],
			    &(*copies)[*n - 1]) == -1)
				return -1;
			if (p[len] == '\0')
				break;
			p += len + 1;
		}
	}
	return 0;
}

int
sr_cmd_agent_run(struct sr_agent_opts *o, const char *queue, const char *prices)
{
	struct sr_agent_result res;
	struct sr_prices *table = NULL;
	struct sr_fleet f;
	char err[SR_ERRMAX];
	int code;

	if ((code = sr_fleet_resolve(&f, queue)) != 0)
		return code;
	if (sr_fleet_prices(prices, &f.set, &table, err) == -1) {
		fprintf(stderr, "spotrun agent: %s\n", err);
		sr_fleet_close(&f);
		return SR_EXIT_CONFIG;
	}
	o->queue = f.url;
	o->queue_where = f.where;
	if (o->provider == NULL)
		o->provider = f.set.provider;
	o->prices = table;
	if (o->exit_code == NULL)
		o->exit_code = sr_cmd_run_code;
	sr_agent_run(o, &res);
	code = agent_exit_code(&res);
	if (res.end >= SR_AGENT_ERR_CONFIG)
		fprintf(stderr, "spotrun agent: %s\n", res.err);
	sr_prices_free(table);
	sr_fleet_close(&f);
	return code;
}

static int
cmd_agent_exec(const struct sr_args *a)
{
	struct sr_agent_label *labels = NULL;
	char *end, **copies = NULL;
	int code = SR_EXIT_USAGE;
	size_t nl = 0, i;
	struct sr_agent_opts o;
	const char *v;
	long n;

	memset(&o, 0, sizeof o);
	o.exit_code = sr_cmd_run_code;
	o.quiet = sr_args_has(a, AG_QUIET) > 0;
	o.once = sr_args_has(a, AG_ONCE) > 0;
	o.idle_command = sr_args_get(a, AG_IDLE_COMMAND);
	o.dir = sr_args_get(a, AG_DIR);
	o.provider = sr_args_get(a, AG_PROVIDER);
	if ((v = sr_args_get(a, AG_IDLE_TIMEOUT)) != NULL &&
	    (sr_parse_duration(v, &o.idle_timeout) != 0 || o.idle_timeout <= 0)) {
		fprintf(stderr, "spotrun agent: --idle-timeout %s: not a duration (e.g. 10m, 90s)\n", v);
		goto out;
	}
	if (o.idle_command != NULL && o.idle_timeout <= 0) {
		fprintf(stderr, "spotrun agent: --idle-command needs --idle-timeout (when to run it)\n");
		goto out;
	}
	if ((v = sr_args_get(a, AG_MAX_JOBS)) != NULL) {
		errno = 0;
		n = strtol(v, &end, 10);
		if (end == v || *end != '\0' || errno != 0 || n < 1 || n > 1000000000) {
			fprintf(stderr, "spotrun agent: --max-jobs %s: not a number of jobs from 1\n", v);
			goto out;
		}
		o.max_jobs = (int)n;
	}
	if ((v = sr_args_get(a, AG_TRACE_NODE)) != NULL) {
		errno = 0;
		n = strtol(v, &end, 10);
		if (end == v || *end != '\0' || errno != 0 || n < 1 || n > SR_TRACE_NODES_MAX) {
			fprintf(stderr, "spotrun agent: --trace-node %s: not a node of a trace (1 to "
			    "%d)\n", v, SR_TRACE_NODES_MAX);
			goto out;
		}
		o.trace_node = (int)n;
	}
	if (o.dir != NULL && o.dir[0] != '/') {
		fprintf(stderr, "spotrun agent: --dir %s: give an absolute path\n", o.dir);
		goto out;
	}
	if (parse_labels(a, &labels, &copies, &nl) == -1)
		goto out;
	o.labels = labels;
	o.nlabels = nl;
	code = sr_cmd_agent_run(&o, sr_args_get(a, AG_QUEUE), sr_args_get(a, AG_PRICES));
out:
	for (i = 0; i < nl; i++)
		free(copies[i]);
	free(copies);
	free(labels);
	return code;
}

const struct sr_cmd_entry sr_cmd_agent_entry = {
	.name = "agent",
	.args = { .opts = agent_opts, .operands = "", .min = 0, .max = 0 },
	.summary = "run jobs from a queue on this machine",
	.help = "Run jobs from a queue on this machine: claim one this machine can run (its\n"
	    "GPUs are found with NVML), run it as spotrun run does under the job's lease,\n"
	    "heartbeat its status and ship its output to the queue, then claim the next.\n"
	    "On a preemption notice the job is checkpointed and put back in the queue,\n"
	    "and the agent stops claiming. Exits 0 when idle, drained or done, 75 when\n"
	    "preempted (see spotrun(1)).",
	.exec = cmd_agent_exec,
};
