/*
 * cmd.h: the command table. Each subcommand lives in cli/cmd-NAME.c and
 * exports one struct sr_cmd_entry: its name, its arguments' template
 * (args.h), a summary and a description; cmd.c lists them, parses a
 * command's argv against its template, and generates usage lines, --help
 * and `spotrun help` from the entries. The man page SYNOPSIS is checked
 * against them (tests/t05-usage.sh).
 */
#ifndef SR_CMD_H
#define SR_CMD_H

#include "args.h"

/* Exit codes of spotrun itself (see doc/spotrun.1, EXIT STATUS). The job's
 * own code passes through `run` unchanged when the job ran. */
#define SR_EXIT_USAGE		64	/* bad command line (EX_USAGE) */
#define SR_EXIT_BADSPEC		65	/* invalid job file (EX_DATAERR) */
#define SR_EXIT_NOINPUT		66	/* no such job or sweep in the queue (EX_NOINPUT) */
#define SR_EXIT_SOFTWARE	70	/* internal error (EX_SOFTWARE) */
#define SR_EXIT_UNAVAILABLE	69	/* this machine lacks what the job needs, or another
					 * run holds the job (EX_UNAVAILABLE) */
#define SR_EXIT_OSERR		71	/* system error: fork, pipe, ... (EX_OSERR) */
#define SR_EXIT_IOERR		74	/* store or checkpoint I/O failed (EX_IOERR) */
#define SR_EXIT_PREEMPTED	75	/* preempted, checkpoint committed (EX_TEMPFAIL) */
#define SR_EXIT_CONFIG		78	/* the settings file is wrong (EX_CONFIG) */

struct sr_cmd_entry {
	const char *name;
	struct sr_args_template args;	/* its options and positional arguments */
	const char *summary;	/* one line for `spotrun help` */
	const char *help;	/* a short description for --help and `spotrun help NAME`
				 * (lines of at most 76 characters) */
	/* Run the command with its parsed arguments (never -h/--help, never
	 * a usage error: sr_cmd_exec answers those); returns the exit code. */
	int (*exec)(const struct sr_args *a);
};

extern const struct sr_cmd_entry sr_cmd_run_entry;
extern const struct sr_cmd_entry sr_cmd_check_entry;
extern const struct sr_cmd_entry sr_cmd_ls_entry;
extern const struct sr_cmd_entry sr_cmd_cloud_init_entry;
extern const struct sr_cmd_entry sr_cmd_help_entry;
extern const struct sr_cmd_entry sr_cmd_agent_entry;
extern const struct sr_cmd_entry sr_cmd_submit_entry;
extern const struct sr_cmd_entry sr_cmd_status_entry;
extern const struct sr_cmd_entry sr_cmd_report_entry;
extern const struct sr_cmd_entry sr_cmd_logs_entry;
extern const struct sr_cmd_entry sr_cmd_cancel_entry;
extern const struct sr_cmd_entry sr_cmd_requeue_entry;
extern const struct sr_cmd_entry sr_cmd_retry_entry;
extern const struct sr_cmd_entry sr_cmd_gc_entry;
extern const struct sr_cmd_entry sr_cmd_up_entry;
extern const struct sr_cmd_entry sr_cmd_down_entry;

/* NULL-terminated table of every command. */
extern const struct sr_cmd_entry *const sr_cmd_table[];

/* The command of that exact name, or NULL. */
const struct sr_cmd_entry *sr_cmd_find(const char *name);
/* Say on stderr that name is no command: with the closest command's name
 * when one is close ("did you mean 'run'?"), else pointing to `spotrun
 * help`. */
void sr_cmd_unknown(const char *name);

/* Parse argv (argv[0] the command's name) against e's template and run
 * it. -h/--help prints e's help on stdout (exit 0); a usage error prints
 * "spotrun NAME: what is wrong; see 'spotrun help NAME'" and the usage
 * line on stderr, or the usage line alone when no argument was given at
 * all (exit 64). Otherwise returns what e->exec returns. */
int sr_cmd_exec(const struct sr_cmd_entry *e, int argc, char **argv);

struct sr_run_result;
/* The exit status for a run's result (doc/spotrun.1, EXIT STATUS): the
 * job's own code when it ran, 126/127 when it could not be executed, 75
 * when preempted, 69 when the job's lease is held elsewhere or was lost,
 * else spotrun's own sysexits code. For `run`, and the lines of `agent`. */
int sr_cmd_run_code(const struct sr_run_result *res);

struct sr_agent_opts;
/* Run an agent with o (its queue and price table filled in here: queue
 * and prices as --queue and --prices give them, NULL: the settings'
 * and the defaults) until it ends: the exit status, after saying what
 * went wrong. `agent`, and `submit --run-local` (o->once). */
int sr_cmd_agent_run(struct sr_agent_opts *o, const char *queue, const char *prices);

struct sr_target;
/* sr_target_resolve (target.h) with its failures as exit codes: 0, 65 for
 * a job file that is not valid, 64 for a NAME that cannot be a job's. For
 * every command pointed at "a job file, or a NAME in a store". */
int sr_cmd_target(const char *arg, const char *store, struct sr_target *t);

/* "usage: spotrun NAME SYNOPSIS" to fp, on more lines when longer than 80
 * columns (the further ones indented under the first word). */
void sr_cmd_usage(const struct sr_cmd_entry *e, FILE *fp);
/* The full help of e to fp: the usage line, the description, one line
 * per option. */
void sr_cmd_help(const struct sr_cmd_entry *e, FILE *fp);

#endif
