/*
 * request.h: the marker files of the directory-mode protocol (see
 * doc/spotrun.1, CHECKPOINT PROTOCOL). spotrun posts a request file; the job
 * answers with a done file holding the step number.
 */
#ifndef SR_REQUEST_H
#define SR_REQUEST_H

#include <stdint.h>

/* Post a request: remove a stale done file first, then write "seq=N
 * reason=R deadline=D" to request_path atomically. A done file left from an
 * earlier request (a job that answered just after spotrun withdrew it at its
 * deadline) would otherwise be taken as the answer to this one. */
int sr_req_post(const char *request_path, const char *done_path, uint64_t seq,
    const char *reason, double deadline, char *err);
/* 1 when the done file exists (*step = its number, or -1 when empty), 0 when
 * not yet, -1 when it exists but holds something other than a step number. */
int sr_req_done(const char *done_path, long long *step, char *err);
/* Remove both marker files (missing files are fine). */
void sr_req_clear(const char *request_path, const char *done_path);

#endif
