/*
 * gce-int.h: what the files of the GCP engine share (not for other
 * modules): the client, the call with its retries, and the wait on a
 * long-running operation. gce.c has the transport, gce-ops.c the
 * operations of gce.h.
 */
#ifndef SR_GCE_INT_H
#define SR_GCE_INT_H

#include <stddef.h>

#include <jansson.h>

#include "gce-auth.h"
#include "gce.h"

struct sr_gce {
	struct sr_gce_auth *auth;
	char project[128];
	char base[768];		/* "https://compute.googleapis.com/compute/v1/projects/PROJECT" */
	size_t root_len;	/* base's length up to "/projects/": another project's paths */
	double timeout, op_timeout;
	/* the code of the last error Compute answered ("notFound"), so that
	 * a delete of what is already gone can be told apart */
	char last_code[64];
};

/* Whether s is a Compute resource name (1 to 63 of [a-z0-9-], starting
 * with a letter), safe to put in a path unescaped. */
int gce_name_ok(const char *s);

/*
 * method (GET, POST, DELETE) base+path (path starts with '/', any query
 * escaped by the caller; a path starting "/projects/" goes below
 * .../compute/v1 instead, for another project's resource: an image) with body (JSON, or NULL), and the 200's reply
 * in *reply (NULL to drop it). Retries as gce.h says; an error of
 * Compute's ends as "WHAT: CODE: MESSAGE" with its class.
 */
enum sr_gce_status gce_call(struct sr_gce *c, const char *what, const char *method,
    const char *path, json_t *body, json_t **reply, char *err);

/* gce_call of a mutation, then the operation it returns waited on until
 * DONE: its error, when it has one, is "WHAT: CODE: MESSAGE" (the first
 * of error.errors[]) with its class. */
enum sr_gce_status gce_mutate(struct sr_gce *c, const char *what, const char *method,
    const char *path, json_t *body, char *err);

/* src percent-encoded for a query into dst of cap bytes (cut to fit). */
void gce_escape(char *dst, size_t cap, const char *src);

/* The last segment of a URL ("https://.../zones/us-central1-a" ->
 * "us-central1-a") into dst of cap bytes. */
void gce_tail(char *dst, size_t cap, const char *url);

/* The string member key of o into dst of cap bytes ("" when absent). */
void gce_str(json_t *o, const char *key, char *dst, size_t cap);

#endif
