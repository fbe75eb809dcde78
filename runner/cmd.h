/*
 * cmd.h: the command table. Each subcommand lives in runner/cmd-NAME.c and
 * exports one struct sr_cmd_entry; cmd.c lists them. Usage strings and the
 * man page SYNOPSIS are generated from / checked against these entries.
 */
#ifndef SR_CMD_H
#define SR_CMD_H

/* Exit codes of spotrun itself (see doc/spotrun.1, EXIT STATUS). The job's
 * own code passes through `run` unchanged when the job ran. */
#define SR_EXIT_USAGE		64	/* bad command line (EX_USAGE) */
#define SR_EXIT_BADSPEC		65	/* invalid job file (EX_DATAERR) */
#define SR_EXIT_SOFTWARE	70	/* internal error (EX_SOFTWARE) */
#define SR_EXIT_UNAVAILABLE	69	/* this machine lacks what the job needs (EX_UNAVAILABLE) */
#define SR_EXIT_OSERR		71	/* system error: fork, pipe, ... (EX_OSERR) */
#define SR_EXIT_IOERR		74	/* store or checkpoint I/O failed (EX_IOERR) */
#define SR_EXIT_PREEMPTED	75	/* preempted, checkpoint committed (EX_TEMPFAIL) */

struct sr_cmd_entry {
	const char *name;
	const char *args;	/* usage after the name: "[-q] JOB.ini" */
	const char *getopt;	/* getopt(3) string of its options */
	const char *summary;	/* one line for `spotrun help` */
	/* argv[0] is the command name; returns the process exit code. */
	int (*exec)(int argc, char **argv);
};

extern const struct sr_cmd_entry sr_cmd_run_entry;
extern const struct sr_cmd_entry sr_cmd_check_entry;
extern const struct sr_cmd_entry sr_cmd_ls_entry;
extern const struct sr_cmd_entry sr_cmd_help_entry;

/* NULL-terminated table of every command. */
extern const struct sr_cmd_entry *const sr_cmd_table[];

const struct sr_cmd_entry *sr_cmd_find(const char *name);
/* Print "usage: spotrun NAME ARGS" for e to fp (a FILE *). */
void sr_cmd_usage(const struct sr_cmd_entry *e, void *fp);

#endif
