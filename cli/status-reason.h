/*
 * status-reason.h: why a sweep's trial failed, in a line, for `spotrun
 * status SWEEP` (status-trials.c): its last attempt's end from its record
 * (the exit code, or the signal that killed it) and the last error line of
 * its output as the agent shipped it to the queue (logs/ID/, the last
 * segments). The waits of queued and running trials are status-why.c's.
 */
#ifndef SR_STATUS_REASON_H
#define SR_STATUS_REASON_H

#include <stddef.h>

#include "record.h"

/* The most bytes of an error line kept (cut on a character's boundary). */
#define SR_STATUS_LINE_MAX 512

/*
 * The line of log (len bytes of a job's log as shipped: "+SSSS.mmm out
 * TEXT", "+SSSS.mmm err TEXT", "+SSSS.mmm spotrun TEXT", runner/joblog.h)
 * that says what went wrong, into line (SR_STATUS_LINE_MAX + 1 bytes):
 * the last line the job wrote on stderr that is not blank, else its last
 * such line on stdout, else ""; a line redrawn with carriage returns as it
 * shows last, blanks around it dropped; spotrun's own lines skipped.
 * Returns line.
 */
const char *sr_status_error_line(const char *log, size_t len, char *line);

/*
 * How attempt record r ended, in words: "killed by SIGKILL" when a signal
 * killed the job, "exit N" for an exit code, else its outcome with its
 * code, "cannot run (exit 127)"; then ": " and line when line is not
 * empty. malloc'd.
 */
char *sr_status_end_reason(const struct sr_attempt_record *r, const char *line);

/* The number of columns s takes on a terminal: its UTF-8 characters (a
 * byte that starts none counts one). */
size_t sr_status_cols(const char *s);

/* s cut in place to at most w columns, a cut one ending in '~' (w >= 1);
 * returns s. */
char *sr_status_cut(char *s, size_t w);

#endif
