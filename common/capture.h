/*
 * capture.h: run another program and read what it prints, for credentials
 * that a cloud's own CLI holds (the Azure CLI's login: `az account
 * get-access-token`), as the clouds' SDKs take them.
 */
#ifndef SR_CAPTURE_H
#define SR_CAPTURE_H

#include <stddef.h>

struct sr_capture {
	char *out, *errout;	/* its stdout and stderr, NUL-terminated */
	size_t out_len, err_len;
	int status;		/* waitpid's status */
};

/* Run argv[0] (looked up on PATH) with argv (NULL-terminated), stdin
 * /dev/null, in a process group of its own, and read its stdout and
 * stderr into c, at most max bytes each. 0 once it has ended (whatever its
 * status: the caller reads c->status), or -1 with err ("run NAME: ...")
 * when it could not be started (not on PATH: "not found"), printed more
 * than max bytes, or ran past timeout seconds: then its whole process
 * group is killed and reaped first. Thread-safe; fills c in either case
 * (free it with sr_capture_free). */
int sr_capture_run(const char *const *argv, double timeout, size_t max, struct sr_capture *c,
    char *err);
void sr_capture_free(struct sr_capture *c);

#endif
