/*
 * request.h: the marker files of the directory-mode protocol (see
 * doc/spotrun.1, CHECKPOINT PROTOCOL). spotrun posts a request file; each
 * process that answers (each rank, or the one process of launch = once)
 * does so with a done file of its own holding the step number and the seq
 * of the request it answers ("120 seq=3"; a bare step from older jobs
 * answers whatever request is pending; "120 seq=3 last": the job's last
 * checkpoint).
 */
#ifndef SR_REQUEST_H
#define SR_REQUEST_H

#include <stddef.h>
#include <stdint.h>

/* Post a request: remove stale done files first (the n of done_paths),
 * then write "seq=N reason=R deadline=D" to request_path atomically. A
 * done file left from an earlier request (a job that answered just after
 * spotrun withdrew it at its deadline) would otherwise be taken as the
 * answer to this one. */
int sr_req_post(const char *request_path, char *const *done_paths, size_t n, uint64_t seq,
    const char *reason, double deadline, char *err);
/* 1 when the done file exists (*step = its number, or -1 when it names none;
 * *seq = the request it answers, or -1 when it names none; *last = 1 when
 * it ends with the word "last": the job says this checkpoint is its last,
 * what follows it is the job's end), 0 when not yet, -1 when it exists but
 * holds something other than "[STEP] [seq=N] [last]". */
int sr_req_done(const char *done_path, long long *step, long long *seq, int *last, char *err);
/* A process's first-look marker (SPOTRUN_CKPT_LOOK; doc/spotrun.1,
 * CHECKPOINT PROTOCOL): -1 absent (it marks nothing, or has not said so
 * yet), 1 created empty (it has not looked for a request), 0 written (it
 * has). One stat. */
int sr_req_look(const char *look_path);
/* Remove the marker files: the request and the n done files (missing
 * files are fine). */
void sr_req_clear(const char *request_path, char *const *done_paths, size_t n);

#endif
