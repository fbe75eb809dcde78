/*
 * jobspec-int.h: what the parts of the job file parser share (jobspec.c:
 * reading lines and keys, checks across keys; jobspec-keys.c: the table of
 * keys and the parsing of each value; jobspec-msg.c: recording errors).
 * jobspec.c calls down into jobspec-keys.c, and both call jobspec-msg.c;
 * nothing calls back up. Not for use outside them.
 */
#ifndef SR_JOBSPEC_INT_H
#define SR_JOBSPEC_INT_H

#include <stddef.h>

#include "jobspec.h"
#include "util.h"

#define SR_JS_MAXKEYS	48	/* room for the keys of sr_js_keys[] */

enum section {
	SEC_JOB, SEC_ENV, SEC_RESOURCES, SEC_CHECKPOINT, SEC_PROVIDER, SEC_RETRY,
	SEC_SWEEP, SEC_DATA, NSECTIONS,
	SEC_NONE = -1,		/* before the first header */
	SEC_UNKNOWN = -2	/* inside a bad header: its keys are not checked */
};

/* "job", "env", ...: indexed by enum section. */
extern const char *const sr_js_section_names[NSECTIONS];

enum type {
	T_NAME, T_COMMAND, T_SHELL, T_BOOL, T_PATH, T_STRING, T_GPUS, T_MODE, T_DURATION,
	T_INT, T_STORE, T_SIGNAL, T_SIZE, T_PROVIDER, T_UINT64, T_POSITIVE,
	T_PREEMPTIONS, T_EXITCODES, T_URL, T_PROCS, T_LAUNCH, T_NODES, T_IMAGE, T_RUNTIME
};

struct key {
	enum section sec;
	const char *name;
	enum type type;
	size_t off;		/* the field in struct sr_jobspec */
	double min, max;	/* T_INT, T_SIZE, T_DURATION; T_URL: the port */
	int zero_ok;		/* T_DURATION: 0 (off) is allowed below min */
	const char *hint;	/* what is valid, with an example */
	const char *range;	/* for a value out of [min, max] */
};

/* What a command is, for its messages. */
#define SR_JS_COMMAND_HINT "give the program and its arguments (e.g. python3 train.py --epochs 3)"

/* Every key of the sections that have fixed keys ([env] and [sweep] have
 * the user's names), with its type, range and messages. */
extern const struct key sr_js_keys[];
extern const size_t sr_js_nkeys;

/* The state of one load: what the reader, the inih callback and the value
 * parsers share. */
struct sr_js_parse {
	struct sr_jobspec *js;
	const struct sr_jobspec_names *names;	/* the caller's: js->names */
	struct sr_jobspec_errors *errs;
	size_t nerrs_dropped;	/* errors beyond the cap */

	const char *buf;	/* the whole file */
	size_t len, off;	/* its length, and the reader's position */
	int line;		/* the line inih is working on (1-based) */
	int section;		/* enum section, SEC_NONE or SEC_UNKNOWN */

	int key_line[SR_JS_MAXKEYS];	/* where each key was set; 0 = not set */
	char *raw[SR_JS_MAXKEYS];	/* its value as written, for messages */
	int line_comment;	/* the current line ends in a " ;" comment (not " #") */
	int line_bad;		/* its value is not text (reported): not parsed */
	int command_comment;	/* so did the line of command = */
	int setup_comment;	/* and that of setup = */
	int *env_line;		/* line of each js->env entry */
	size_t nenv, env_cap;	/* entries of js->env and env_line, and their room */
	/* The names of [env] seen so far, for the duplicate check: an open
	 * addressing table of nenv + 1 based indexes into js->env (0: empty),
	 * env_slots long (a power of two, at most half full), so a file of
	 * 100,000 variables is checked in linear time. */
	size_t *env_index, env_slots;
	int sweep_first_line;	/* of the first [sweep] key */
	int *sweep_header_line;	/* every [sweep] header, for js (see jobspec.h) */
	size_t nsweep_headers;
};

/* Path p made absolute against dir and tidied lexically: no "." parts, no
 * doubled or trailing slashes. ".." is kept: resolving it needs the file
 * system, which is the run's business, not the parser's. malloc'd. */
char *sr_js_absolute_path(const char *dir, const char *p);

/* The argv of a command: { "/bin/sh", "-c", command } with shell, else
 * its words (sr_words_split, strict). 0 with *argv set; -1 with err when it
 * does not split; -2 (*argv set) when the program's name is empty. */
int sr_js_argv(const char *command, int shell, char ***argv, char *err);

/* Parse value v of key k (at p->line) into p->js, or record an error. */
void sr_js_set_value(struct sr_js_parse *p, const struct key *k, const char *v);
/* One line of [env] / of [sweep]: check name and value, add them to p->js. */
void sr_js_set_env(struct sr_js_parse *p, const char *name, const char *v);
void sr_js_set_sweep(struct sr_js_parse *p, const char *name, const char *v);
/* One line of [data]: check the destination and the URL, add them to
 * p->js. */
void sr_js_set_data(struct sr_js_parse *p, const char *name, const char *v);
/* The checks of [data] that need the whole file: one destination inside
 * another, and destinations in the job's local_dir (its checkpoint copy)
 * or in its working directory's .spotrun/. */
void sr_js_check_data(struct sr_js_parse *p);

/* The checks of a sweep file that need the whole file (jobspec-sweep.c):
 * the number of trials, the trials' names, every ${name} in the command
 * and [env] values, each trial's command, the size of the trials' job
 * files. Sets js->argv to the first trial's. Called once everything else
 * is known, for a file with a [sweep] only. */
void sr_js_check_sweep(struct sr_js_parse *p);

#endif
