/*
 * args.h: a command's arguments, parsed against a template (tmux's
 * args_parse is the model). A template names the options, short, long or
 * both, each a flag or taking a value, with a help line, and the positional
 * arguments with how many there may be; usage lines and --help are
 * generated from it, so they cannot drift from what the parser accepts.
 *
 * Accepted forms: -q, -qa (flags clustered), -s VALUE, -sVALUE, -as VALUE,
 * --long, --long VALUE, --long=VALUE; options may come before, between or
 * after the positional arguments; "--" ends the options; "-" alone is a
 * positional argument. -h and --help belong to every template: they ask
 * for the help and need not be declared.
 */
#ifndef SR_ARGS_H
#define SR_ARGS_H

#include <stdio.h>

/* Most options one template may have. */
#define SR_ARGS_MAXOPTS 16

struct sr_opt {
	char short_name;	/* 'q'; 0: long only */
	const char *long_name;	/* "quiet"; NULL: short only */
	const char *value;	/* its value's name in the usage ("STORE"); NULL: a flag */
	const char *help;	/* one line for --help */
};

struct sr_args_template {
	/* Ends with an entry of neither name; NULL: no options. A command
	 * names its options by index into this array (an enum beside it). */
	const struct sr_opt *opts;
	const char *operands;	/* the positional arguments in the usage: "JOB.ini ..." */
	int min, max;		/* how many there may be; max -1: no limit */
};

struct sr_args {
	int count[SR_ARGS_MAXOPTS];	/* how often each option was given */
	const char *value[SR_ARGS_MAXOPTS];	/* its last value (into argv), else NULL */
	const char **values[SR_ARGS_MAXOPTS];	/* all its values, in order (malloc'd) */
	int argc;			/* positional arguments */
	char **argv;			/* them, NULL-terminated (malloc'd array
					 * of pointers into the caller's argv) */
};

enum sr_args_result {
	SR_ARGS_OK = 0,
	SR_ARGS_HELP = 1,	/* -h or --help: print the help, nothing else */
	SR_ARGS_ERROR = -1
};

/*
 * Parse argv[1..argc) (argv[0] is the command's name) against t into a
 * (free it with sr_args_free whatever the result). Returns SR_ARGS_OK,
 * SR_ARGS_HELP as soon as -h or --help is met, or SR_ARGS_ERROR with err
 * (SR_ERRMAX bytes) saying exactly what is wrong: "unknown option -x",
 * "unknown option --stroe (did you mean --store?)", "option -s needs a
 * value (STORE)", "option --attempts takes no value", "too many arguments
 * (takes at most 1: JOB.ini|NAME)", "too few arguments (takes at least 1:
 * JOB.ini ...)".
 */
enum sr_args_result sr_args_parse(const struct sr_args_template *t, int argc, char *const *argv,
    struct sr_args *a, char *err);
void sr_args_free(struct sr_args *a);

/* How often option i (an index into t->opts) was given; its last value or
 * NULL; its value the nth time (0-based, below sr_args_has) or NULL, for
 * an option that may be given more than once (--label K=V ...). */
int sr_args_has(const struct sr_args *a, int i);
const char *sr_args_get(const struct sr_args *a, int i);
const char *sr_args_nth(const struct sr_args *a, int i, int n);

/* Whether t is well formed: each option has a name and a help line, no
 * name twice, -h/--help not redeclared, at most SR_ARGS_MAXOPTS options,
 * 0 <= min <= max (or max -1). 0, or -1 with err naming the fault. */
int sr_args_template_check(const struct sr_args_template *t, char *err);

/* The usage after the command's name: "[-a] [-s STORE] JOB.ini|NAME"
 * (malloc'd). */
char *sr_args_synopsis(const struct sr_args_template *t);

/* One line per option ("  -s, --store STORE  help"), -h/--help last,
 * aligned, to fp. */
void sr_args_print_options(const struct sr_args_template *t, FILE *fp);

#endif
