/*
 * cmd.c: the command table, lookup with a did-you-mean, and the one place
 * where a command's argv is parsed and its usage and help are printed, so
 * that every command answers -h, --help and bad arguments alike.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "run.h"
#include "similar.h"
#include "target.h"
#include "util.h"

const struct sr_cmd_entry *const sr_cmd_table[] = {
	&sr_cmd_run_entry,
	&sr_cmd_check_entry,
	&sr_cmd_ls_entry,
	&sr_cmd_agent_entry,
	&sr_cmd_submit_entry,
	&sr_cmd_status_entry,
	&sr_cmd_report_entry,
	&sr_cmd_logs_entry,
	&sr_cmd_cancel_entry,
	&sr_cmd_requeue_entry,
	&sr_cmd_retry_entry,
	&sr_cmd_gc_entry,
	&sr_cmd_cloud_init_entry,
	&sr_cmd_up_entry,
	&sr_cmd_down_entry,
	&sr_cmd_help_entry,
	NULL
};

const struct sr_cmd_entry *
sr_cmd_find(const char *name)
{
	size_t i;

	for (i = 0; sr_cmd_table[i] != NULL; i++) {
		if (strcmp(sr_cmd_table[i]->name, name) == 0)
			return sr_cmd_table[i];
	}
	return NULL;
}

void
sr_cmd_unknown(const char *name)
{
	const char *names[SR_ARRAY_LEN(sr_cmd_table)];
	size_t n;
	int k;

	for (n = 0; sr_cmd_table[n] != NULL; n++)
		names[n] = sr_cmd_table[n]->name;
	k = sr_similar_closest(name, names, n);
	if (k >= 0)
		fprintf(stderr, "spotrun: unknown command '%s'; did you mean '%s'? (spotrun help"
		    " lists the commands)\n", name, names[k]);
	else
		fprintf(stderr, "spotrun: unknown command '%s'; try 'spotrun help'\n", name);
}

/* Help and usage lines are at most this wide (tests/t06-args.sh): a longer
 * synopsis goes on further lines, indented under its first word, as a man
 * page sets it. */
#define USAGE_WIDTH 80

/* The length of the synopsis word at p: an option in brackets with its
 * value, or an operand. */
static size_t
usage_word(const char *p)
{
	const char *end = *p == '[' ? strchr(p, ']') : NULL;

	return end != NULL ? (size_t)(end - p) + 1 : strcspn(p, " ");
}

void
sr_cmd_usage(const struct sr_cmd_entry *e, FILE *fp)
{
	char *syn = sr_args_synopsis(&e->args);
	size_t indent = strlen("usage: spotrun  ") + strlen(e->name), col = indent - 1;
	const char *p = syn;

	fprintf(fp, "usage: spotrun %s", e->name);
	while (*p != '\0') {
		size_t n = usage_word(p);

		if (col > indent - 1 && col + 1 + n > USAGE_WIDTH) {
			fprintf(fp, "\n%*s", (int)indent - 1, "");
			col = indent - 1;
		}
		fprintf(fp, " %.*s", (int)n, p);
		col += 1 + n;
		p += n;
		p += strspn(p, " ");
	}
	fputc('\n', fp);
	free(syn);
}

void
sr_cmd_help(const struct sr_cmd_entry *e, FILE *fp)
{
	sr_cmd_usage(e, fp);
	fprintf(fp, "\n%s\n\noptions:\n", e->help);
	sr_args_print_options(&e->args, fp);
}

int
sr_cmd_exec(const struct sr_cmd_entry *e, int argc, char **argv)
{
	struct sr_args a;
	char err[SR_ERRMAX];
	int code;

	switch (sr_args_parse(&e->args, argc, argv, &a, err)) {
	case SR_ARGS_HELP:
		sr_cmd_help(e, stdout);
		code = 0;
		break;
	case SR_ARGS_ERROR:
		/* Nothing given at all: the usage line is the whole answer. */
		if (argc > 1)
			fprintf(stderr, "spotrun %s: %s; see 'spotrun help %s'\n", e->name, err,
			    e->name);
		sr_cmd_usage(e, stderr);
		code = SR_EXIT_USAGE;
		break;
	default:
		code = e->exec(&a);
		break;
	}
	sr_args_free(&a);
	return code;
}

int
sr_cmd_target(const char *arg, const char *store, struct sr_target *t)
{
	switch (sr_target_resolve(arg, store, t)) {
	case SR_TARGET_OK:
		return 0;
	case SR_TARGET_BAD_FILE:
		return SR_EXIT_BADSPEC;
	default:
		return SR_EXIT_USAGE;
	}
}

int
sr_cmd_run_code(const struct sr_run_result *res)
{
	switch (res->outcome) {
	case SR_RUN_FINISHED:
	case SR_RUN_FAILED:
	case SR_RUN_CANNOT_EXEC:
	case SR_RUN_CANCELLED:
		return res->code;
	case SR_RUN_PREEMPTED:
		return SR_EXIT_PREEMPTED;
	case SR_RUN_LEASE_HELD:
	case SR_RUN_LEASE_LOST:
		/* not 75: a scheduler that requeues on 75 (Slurm's RequeueExit)
		 * would run the job again once its holder ended it */
		return SR_EXIT_UNAVAILABLE;
	case SR_RUN_ERR_SYSTEM:
		return SR_EXIT_OSERR;
	case SR_RUN_ERR_UNAVAILABLE:
		return SR_EXIT_UNAVAILABLE;
	case SR_RUN_ERR_STORE:
	case SR_RUN_ERR_ATTEMPT:
		return SR_EXIT_IOERR;
	case SR_RUN_ERR_PROVIDER:
		return SR_EXIT_SOFTWARE;
	case SR_RUN_ERR_CONFIG:
		return SR_EXIT_BADSPEC;
	}
	return SR_EXIT_SOFTWARE;
}
