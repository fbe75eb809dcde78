/*
 * fleet.h: what the fleet's commands (submit, status, logs, cancel,
 * requeue, retry, and the agent) share: where the queue is, opening it,
 * who acts on it, and which price table the agent uses. doc/fleet.md,
 * "Where the queue is", has the rules.
 */
#ifndef SR_FLEET_H
#define SR_FLEET_H

#include <stddef.h>

#include "lease.h"
#include "prices.h"
#include "queue.h"
#include "settings.h"

#define SR_FLEET_FROM_MAX 4200	/* where the queue came from, for messages */

struct sr_fleet {
	struct sr_settings set;		/* the user's settings file */
	char *url;			/* the queue's URL */
	char from[SR_FLEET_FROM_MAX];	/* "--queue", "$SPOTRUN_QUEUE", "PATH:LINE" of the
					 * settings file, or "the default" */
	struct sr_queue *q;		/* open */
	struct sr_lease_owner me;	/* this process, as "spotrun CMD" */
	char *where;			/* "URL (from WHERE)", for messages */
};

/*
 * Where the queue is, first found of: given (--queue), $SPOTRUN_QUEUE (set
 * and not empty), queue = in [fleet] of the settings file s (may be NULL),
 * the embedded default (sr_queue_default_url: file://$XDG_DATA_HOME/spotrun/
 * queue). A given or environment value that is not a URL is a directory,
 * made file:// (relative to the working directory), as -s STORE is.
 * 0 with *url (malloc'd) and from (fromlen bytes) saying which, or -1
 * with err.
 */
int sr_fleet_queue_url(const char *given, const struct sr_settings *s, char **url, char *from,
    size_t fromlen, char *err);

/*
 * Read the settings file and find the queue (sr_fleet_queue_url), its URL
 * checked but the queue not opened (f->q NULL; `submit --dry-run`): 0
 * with f's settings, url, from and where (sr_fleet_close), or after saying
 * why on stderr an exit code: 78 for a bad settings file, 64 for a queue
 * URL that cannot be one.
 */
int sr_fleet_resolve(struct sr_fleet *f, const char *given);
/*
 * sr_fleet_resolve, then open the queue for command cmd ("status"): 0
 * with f filled, or an exit code after saying why: those above, 74 when
 * the queue cannot be opened (a file:// folder that cannot be made), 71
 * when this process cannot be named. Makes no request.
 */
int sr_fleet_open(struct sr_fleet *f, const char *cmd, const char *given);
/* The second half of sr_fleet_open, on an f that sr_fleet_resolve filled
 * (0, or an exit code said; f is closed then). */
int sr_fleet_attach(struct sr_fleet *f, const char *cmd);
void sr_fleet_close(struct sr_fleet *f);

/*
 * Whether the queue that f resolved to (sr_fleet_resolve) is there for a
 * command that would make it by writing to it (submit): 0 when it is, or
 * may be made (create, the default queue, or not a directory of this
 * machine: a bucket is no typo's), else an exit code after saying why on
 * stderr: 66 for a file:// queue whose directory does not exist (a typo
 * would silently start a queue no agent reads) or is no directory.
 */
int sr_fleet_must_exist(const struct sr_fleet *f, int create);

/*
 * The price table the agent prices attempts with: the file given
 * (--prices), else prices = in [fleet] of s (may be NULL), else the
 * built-in one (sr_prices_builtin). 0 with *out, or -1 with err naming
 * the file (and for the settings, its line).
 */
int sr_fleet_prices(const char *given, const struct sr_settings *s, struct sr_prices **out,
    char *err);

#endif
