/*
 * jobfile.h: loading the job file a command was given, as every command
 * does it: the errors printed as `spotrun check` prints them, and a script
 * or a program given where a job file goes recognised as such, with one
 * line saying what to write, instead of a page of INI errors.
 */
#ifndef SR_JOBFILE_H
#define SR_JOBFILE_H

#include <stddef.h>

#include "jobspec.h"

enum sr_jobfile_result {
	SR_JOBFILE_OK = 0,
	SR_JOBFILE_INVALID = -1,	/* not a valid job file: errors printed */
	SR_JOBFILE_NOT_JOB = -2		/* a script or program: said so */
};

/* Load the job file at path into *js (NULL on failure). On failure stderr
 * gets its errors ("PATH:LINE: message"), or, when sr_jobfile_not_job
 * recognises a script or a program, only "spotrun: PATH is a script, not
 * a job file; write a job file with command = python3 PATH (see
 * spotrun-job(5), examples/quickstart.ini)". */
enum sr_jobfile_result sr_jobfile_load(const char *path, struct sr_jobspec **js);

/*
 * Whether the file at path, which did not load as a job file, is a script
 * or a program given in its place. It is, when it is a regular file and
 *   - it starts with the ELF magic (a program), or
 *   - its first line starts with "#!", or its name ends in .py, .sh,
 *     .bash, .zsh, .pl, .rb, .js, .lua, .jl or .R,
 *     and its first line that is neither blank nor an INI comment (';' or
 *     '#') in its first 64 KiB is not a [section] header, or it has none.
 * A job file with a "#!" line of its own is never taken for a script: its
 * [job] header comes first after the comment. When it is, cmd (len bytes)
 * gets the command a job file would run it with: the interpreter of its
 * "#!" line (through env too), else the usual one for its name (python3,
 * sh, bash, zsh, perl, ruby, node, lua, julia, Rscript), then PATH quoted
 * for the job file; a program or a script with neither gets PATH alone
 * ("./" before a name without a '/'). *what gets "a script" or "a program".
 * Never blocks: a FIFO or a device is no script.
 */
int sr_jobfile_not_job(const char *path, char *cmd, size_t len, const char **what);

#endif
