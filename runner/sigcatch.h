/*
 * sigcatch.h: a signal sent only to the processes of a group that catch it.
 * Linux says of each process which signals it has a handler for (SigCgt in
 * /proc/PID/status). The checkpoint request signal (SIGUSR1 by default)
 * ends a process that has none: a job with no handler, one still importing
 * torch when the first request comes, the launcher (sh -c, torchrun) that
 * runs the real job. Those are left alone; the request file asks them.
 */
#ifndef SR_SIGCATCH_H
#define SR_SIGCATCH_H

#include <sys/types.h>

/* What one sending did. */
struct sr_sigcatch {
	int sent;		/* processes signalled */
	int skipped;		/* processes of the group that do not catch it */
	int leader;		/* 1: the group's leader was among the signalled */
	pid_t skipped_pid;	/* one skipped, the leader if it was: 0 none */
	char skipped_name[32];	/* its command name */
};

#define SR_SIGCATCH_SEEN_MAX	256

/* The processes one request has signalled so far: a later sending for the
 * same request skips them and reaches only those that have caught the
 * signal since (a handler installed after `import torch`). */
struct sr_sigcatch_seen {
	pid_t pid[SR_SIGCATCH_SEEN_MAX];
	size_t n;
};

/* Send sig to each live process of process group pgid that has a handler
 * for it, and to none other (an ignored signal is not sent either); with
 * seen, not to those in it, and those signalled are added to it (as room
 * allows). 0 with *out filled, or -1 with err when /proc cannot be read. */
int sr_sigcatch_send(pid_t pgid, int sig, struct sr_sigcatch_seen *seen, struct sr_sigcatch *out,
    char *err);

#endif
