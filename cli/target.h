/*
 * target.h: what a command that looks at a job's objects in the store is
 * pointed at: a job file (its name and store), or a job NAME in the store
 * given with -s, else in the default store. `ls` uses it; the fleet's
 * commands (fleet-target.h) take a job file the same way.
 */
#ifndef SR_TARGET_H
#define SR_TARGET_H

#include "jobspec.h"

struct sr_target {
	struct sr_jobspec *js;	/* the job file's spec; NULL when a NAME was given */
	const char *name;	/* the job's name: js->name, or the argument */
	char *store;		/* the store's URL (malloc'd) */
};

/*
 * Resolve arg, a job file (an existing regular file, or any name ending
 * in .ini, so that a mistyped file name is reported as a missing file,
 * not looked up as a job; loaded with sr_jobfile_load) or a job NAME, and store, the -s argument (NULL when not
 * given), which wins over the job file's store (sr_target_store_url).
 * Returns SR_TARGET_OK with t filled (free it with sr_target_free), or
 * after saying why on stderr SR_TARGET_BAD_FILE (the job file is not
 * valid) or SR_TARGET_BAD_NAME (a NAME that cannot be a job's); the
 * command layer maps these to exit codes (sr_cmd_target).
 */
enum sr_target_result {
	SR_TARGET_OK = 0,
	SR_TARGET_BAD_FILE = -1,
	SR_TARGET_BAD_NAME = -2
};
enum sr_target_result sr_target_resolve(const char *arg, const char *store, struct sr_target *t);
void sr_target_free(struct sr_target *t);

/* Whether a command's argument names a job file rather than a job: an
 * existing regular file, or any name ending in .ini (so that a mistyped
 * file name is reported as a missing file, not looked up as a job). */
int sr_target_is_file(const char *arg);

/* A store as given on the command line, as a URL (malloc'd): a URL
 * (anything with "://") is kept as it is; a plain path is a directory
 * store, file:// of it, taken relative to the working directory when it is
 * not absolute (the job file's `store` takes absolute paths alike). */
char *sr_target_store_url(const char *s);

#endif
