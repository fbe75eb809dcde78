/*
 * arm-int.h: what the files of the Azure engine share (not for other
 * modules): the client, the call with its retries, and the following of
 * a long-running operation. arm.c has the transport, arm-ops.c the
 * operations of arm.h, arm-auth.c the tokens.
 */
#ifndef SR_ARM_INT_H
#define SR_ARM_INT_H

#include <stddef.h>

#include <jansson.h>

#include "arm-auth.h"
#include "arm.h"

struct sr_arm {
	struct sr_arm_auth *auth;
	char subscription[64];
	char endpoint[512];	/* "https://management.azure.com", no trailing '/' */
	char base[640];		/* ENDPOINT/subscriptions/SUB */
	double timeout, op_timeout;
	/* the code of the last error ARM answered ("ResourceNotFound"), so
	 * that a delete of what is already gone can be told apart */
	char last_code[64];
	long last_status;
	/* whether the last arm_call's request was answered 2xx: a PUT that
	 * made its resource, whatever its operation's end */
	int accepted;
};

/* Whether s is safe in a path unescaped: 1 to 89 of [A-Za-z0-9._-]. */
int arm_name_ok(const char *s);

/*
 * method (GET, PUT, PATCH, DELETE) base+path (path starts with '/' and
 * carries its api-version; or a whole URL below the endpoint) with body
 * (JSON, or NULL); a 2xx's reply in *reply (NULL to drop it; JSON null
 * for an empty body). Retries as arm.h says; an error of ARM's ends as
 * "WHAT: CODE: MESSAGE" with its class. With follow nonzero, a
 * long-running answer (201 or 202, or an Azure-AsyncOperation header) is
 * followed to its end.
 */
enum sr_arm_status arm_call(struct sr_arm *c, const char *what, const char *method,
    const char *path, json_t *body, json_t **reply, int follow, char *err);

/* src percent-encoded into dst of cap bytes (cut to fit). In arm-auth.c. */
void arm_escape(char *dst, size_t cap, const char *src);

/* The string member key of o into dst of cap bytes ("" when absent). */
void arm_str(json_t *o, const char *key, char *dst, size_t cap);

#endif
