/*
 * spotrun.h: the job side of spotrun's directory-mode checkpoint protocol,
 * for jobs written in C or C++. Header-only: include it, nothing to link.
 *
 * A job calls spotrun_ckpt_request() at its safe points (between steps);
 * when it returns 1 the job writes its state into spotrun_ckpt_dir() and
 * calls spotrun_ckpt_answer(&req, step). On start, spotrun_resume_step() says whether
 * the directory holds a restored checkpoint. Polling the request file costs
 * one access(2) per call; a job that prefers the signal (SIGUSR1 by default)
 * sets a flag in its handler and calls spotrun_ckpt_request() only then.
 *
 * Functions return SPOTRUN_OK (0) or a negative spotrun_error code;
 * spotrun_getErrorName() names it. Stable API: names and codes only grow.
 * Outside spotrun (no SPOTRUN_CKPT_DIR in the environment) every call
 * returns SPOTRUN_ERR_NOT_SUPERVISED, so a job can run on its own too.
 */
#ifndef SPOTRUN_H
#define SPOTRUN_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPOTRUN_API_VERSION 2	/* 2: spotrun_ckpt_answer_last */

typedef enum {
	SPOTRUN_OK = 0,
	SPOTRUN_ERR_NOT_SUPERVISED = -1,	/* not running under spotrun */
	SPOTRUN_ERR_IO = -2,			/* reading or writing a marker file failed (errno) */
	SPOTRUN_ERR_BAD_REQUEST = -3,		/* the request file could not be parsed */
	SPOTRUN_ERR_TOO_LONG = -4		/* a path does not fit the buffer */
} spotrun_error;

/* What spotrun asked for. */
struct spotrun_request {
	unsigned long long seq;		/* request number */
	char reason[16];		/* "periodic", "notice" or "early" */
	double deadline;		/* epoch seconds to be done by; 0 = none */
};

static inline const char *
spotrun_getErrorName(int code)
{
	switch (code) {
	case SPOTRUN_OK: return "no error";
	case SPOTRUN_ERR_NOT_SUPERVISED: return "not running under spotrun (SPOTRUN_CKPT_DIR unset)";
	case SPOTRUN_ERR_IO: return "marker file I/O failed";
	case SPOTRUN_ERR_BAD_REQUEST: return "unreadable checkpoint request";
	case SPOTRUN_ERR_TOO_LONG: return "path too long";
	default: return "unknown error code";
	}
}

static inline const char *
spotrun__env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* The directory to write checkpoint files to (and restored ones are in), or
 * NULL when not supervised. */
static inline const char *
spotrun_ckpt_dir(void)
{
	return spotrun__env("SPOTRUN_CKPT_DIR");
}

/* The step of the restored checkpoint in *step, 1 when there is one; 0 on a
 * fresh start; or a negative error code. */
static inline int
spotrun_resume_step(long long *step)
{
	const char *v = spotrun__env("SPOTRUN_RESUME_STEP");
	char *end;

	if (spotrun__env("SPOTRUN_CKPT_DIR") == NULL)
		return SPOTRUN_ERR_NOT_SUPERVISED;
	if (v == NULL)
		return 0;
	*step = strtoll(v, &end, 10);
	return *end == '\0' ? 1 : SPOTRUN_ERR_BAD_REQUEST;
}

/* 1 and *req filled (req may be NULL) when a checkpoint is requested, 0 when
 * not, or a negative error code. */
static inline int
spotrun_ckpt_request(struct spotrun_request *req)
{
	const char *path = spotrun__env("SPOTRUN_CKPT_REQUEST");
	struct spotrun_request r;
	char line[256];
	FILE *fp;
	int ok;

	if (path == NULL)
		return SPOTRUN_ERR_NOT_SUPERVISED;
	fp = fopen(path, "r");
	if (fp == NULL)
		return errno == ENOENT ? 0 : SPOTRUN_ERR_IO;
	memset(&r, 0, sizeof r);
	ok = fgets(line, sizeof line, fp) != NULL &&
	    sscanf(line, "seq=%llu reason=%15s deadline=%lf", &r.seq, r.reason, &r.deadline) == 3;
	fclose(fp);
	if (!ok)
		return SPOTRUN_ERR_BAD_REQUEST;
	if (req != NULL)
		*req = r;
	return 1;
}

/* The done marker written atomically (a temporary file renamed into place):
 * the step (-1: none), with req the seq of the request it answers, and with
 * last the word that makes it the job's last checkpoint. */
static inline int
spotrun__done(long long step, const struct spotrun_request *req, int last)
{
	const char *path = spotrun__env("SPOTRUN_CKPT_DONE"), *sep = "";
	char tmp[4096];
	FILE *fp;
	int n;

	if (path == NULL)
		return SPOTRUN_ERR_NOT_SUPERVISED;
	n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof tmp)
		return SPOTRUN_ERR_TOO_LONG;
	fp = fopen(tmp, "w");
	if (fp == NULL)
		return SPOTRUN_ERR_IO;
	if (step >= 0) {
		fprintf(fp, "%lld", step);
		sep = " ";
	}
	if (req != NULL) {
		fprintf(fp, "%sseq=%llu", sep, req->seq);
		sep = " ";
	}
	fprintf(fp, "%s%s\n", last ? sep : "", last ? "last" : "");
	if (fclose(fp) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return SPOTRUN_ERR_IO;
	}
	return SPOTRUN_OK;
}

/* Tell spotrun the files in spotrun_ckpt_dir() are complete, at this step
 * (-1: no step), in answer to req, the request spotrun_ckpt_request()
 * filled: an answer to a request that a newer one replaced meanwhile (a
 * notice's) is then not taken for one to the newer, which
 * spotrun_ckpt_request() returns next. */
static inline int
spotrun_ckpt_answer(const struct spotrun_request *req, long long step)
{
	return spotrun__done(step, req, 0);
}

/* The same, saying this checkpoint is the job's last: its final step, after
 * which it only ends (writes its results, exits). Once it commits spotrun
 * asks for no other checkpoint, and a preemption notice lets the job end on
 * its own until the machine goes away rather than stopping it at once, so
 * that its end does not run again on the next machine. */
static inline int
spotrun_ckpt_answer_last(const struct spotrun_request *req, long long step)
{
	return spotrun__done(step, req, 1);
}

/* The same, answering whatever request is pending when spotrun reads it
 * (the marker names none): for a job that keeps no struct spotrun_request. */
static inline int
spotrun_ckpt_done(long long step)
{
	return spotrun__done(step, NULL, 0);
}

#endif
