/*
 * ec2-int.h: what the files of the EC2 engine share (not for other
 * modules): the client, a request's form, the call with its retries, and
 * the walk over an XML reply. ec2.c has the transport, ec2-ops.c the
 * operations of ec2.h, ssm.c the one SSM call.
 */
#ifndef SR_EC2_INT_H
#define SR_EC2_INT_H

#include <stddef.h>

#include "awsauth.h"
#include "ec2.h"

struct sr_ec2 {
	struct sr_aws_auth *auth;
	char region[64];
	char url[512];			/* "https://ec2.us-east-1.amazonaws.com/" */
	char host[512];			/* the Host header as curl sends it */
	char ssm_url[512], ssm_host[512];	/* the same of SSM (ssm.c) */
	double timeout;
};

/* A request's form body, application/x-www-form-urlencoded. An allocation
 * that fails sets oom; ec2_call then fails with "out of memory". */
struct ec2_form {
	char *buf;
	size_t len, cap;
	int oom;
};

struct sr_http_resp;

/* One signed POST to EC2 (ssm 0) or SSM (ssm 1), of content type ctype
 * with X-Amz-Target target (NULL: none). 0 with *resp (any status), or -1
 * with err (no reply). */
int aws_post(struct sr_ec2 *c, int ssm, const char *ctype, const char *target, const void *body,
    size_t len, struct sr_http_resp *resp, char *err);
/* An error code worth another try (throttling, AWS's own trouble), and
 * one that refuses the keys (resolving them again may help). */
int ec2_transient_code(const char *code);
int ec2_auth_code(const char *code);
#define EC2_TRIES	4

/* Append name=value, both percent-encoded. */
void ec2_form_add(struct ec2_form *f, const char *name, const char *value);
/* Append a name built from fmt and value. */
void ec2_form_addf(struct ec2_form *f, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ec2_form_free(struct ec2_form *f);

/*
 * Send the form (Action=... already in it; Version is added) and take a
 * 200's body into *body (malloc'd, NUL-terminated, *len bytes). Retries as
 * ec2.h says; an error of AWS's ends as "WHAT: CODE: MESSAGE" with its
 * class (sr_ec2_classify). The form is freed.
 */
enum sr_ec2_status ec2_call(struct sr_ec2 *c, const char *what, struct ec2_form *f,
    char **body, size_t *len, char *err);


/*
 * Walk an XML reply: fn is called for every element that closes, with its
 * path below the root element ("fleetSet/item/fleetId"; "" for the root)
 * and its text. The store's walk (store/xmlwalk.h) under it. A nonzero
 * return from fn stops the walk and is returned; else 0, or -1 with err
 * for a reply that is not XML or an element's text longer than
 * SR_XML_TEXT_MAX bytes.
 */
int ec2_xml_walk(const char *body, size_t len,
    int (*fn)(const char *path, const char *text, void *arg), void *arg, char *err);

/* Copy text into dst of cap bytes, cut to fit. */
void ec2_copy(char *dst, size_t cap, const char *text);

#endif
