/*
 * ssm.c: the one SSM call the AWS engine makes (ec2.h,
 * sr_ec2_ssm_parameter): GetParameter, where AWS publishes the current id
 * of its Deep Learning AMIs, so that a pool without an image boots the
 * newest one. SSM speaks the JSON protocol (a JSON body, the action in
 * X-Amz-Target, errors as {"__type", "message"}), not EC2's Query API.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "awsauth.h"
#include "ec2-int.h"
#include "ec2.h"
#include "http.h"
#include "json.h"
#include "util.h"

#define SSM_TYPE	"application/x-amz-json-1.1"
#define SSM_TARGET	"AmazonSSM.GetParameter"

/* The string member name of a JSON object body, or NULL. */
static const char *
member(json_t *root, const char *name)
{
	json_t *v = json_is_object(root) ? json_object_get(root, name) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The code of an error body: its __type without the "namespace#" that
 * some services put before it. */
static const char *
error_code(json_t *root)
{
	const char *t = member(root, "__type"), *hash;

	if (t == NULL)
		return NULL;
	hash = strrchr(t, '#');
	return hash != NULL ? hash + 1 : t;
}

/* SSM's codes of keys refused (resolve them again) and of trouble worth
 * another try, besides EC2's. */
static int
ssm_auth_code(const char *code)
{
	return strcmp(code, "UnrecognizedClientException") == 0 ||
	    strcmp(code, "ExpiredTokenException") == 0 || ec2_auth_code(code);
}

static int
ssm_transient_code(const char *code)
{
	return strcmp(code, "InternalServerError") == 0 || ec2_transient_code(code);
}

/* Parameter.Value of a 200's body into value: 0, or -1 with err. */
static int
parse_value(json_t *root, const char *url, char *value, size_t cap, char *err)
{
	json_t *p = json_is_object(root) ? json_object_get(root, "Parameter") : NULL;
	const char *v = member(p, "Value");

	if (v == NULL)
		return sr_err(err, "a reply without Parameter.Value from %s", url);
	if (strlen(v) >= cap)
		return sr_err(err, "its value is longer than %zu bytes", cap - 1);
	snprintf(value, cap, "%s", v);
	return 0;
}

enum sr_ec2_status
sr_ec2_ssm_parameter(struct sr_ec2 *c, const char *name, char *value, size_t cap, char *err)
{
	struct sr_http_resp resp;
	json_t *req, *root;
	const char *msg;
	char *body, code[128];
	double pause = 0.25;
	int tries, oom, rejected = 0;
	enum sr_ec2_status st = SR_EC2_ERROR;

	value[0] = '\0';
	req = json_pack("{s:s}", "Name", name);
	if (req == NULL || (body = json_dumps(req, JSON_COMPACT)) == NULL) {
		json_decref(req);
		sr_err_oom(err, "build request");
		return sr_err_prefix(err, "read SSM parameter %s", name);
	}
	json_decref(req);
	for (tries = 1;; tries++) {
		if (aws_post(c, 1, SSM_TYPE, SSM_TARGET, body, strlen(body), &resp, err) == -1) {
			if (sr_err_is_oom(err) || tries >= EC2_TRIES)
				break;
			goto again;
		}
		root = sr_json_loadb(resp.body, resp.len, 0, NULL, &oom);
		if (resp.status == 200) {
			if (parse_value(root, c->ssm_url, value, cap, err) == 0)
				st = SR_EC2_OK;
			json_decref(root);
			sr_http_resp_free(&resp);
			break;
		}
		if (error_code(root) == NULL) {
			long status = resp.status;

			sr_err(err, "HTTP %ld from %s without an SSM error document", status,
			    c->ssm_url);
			json_decref(root);
			sr_http_resp_free(&resp);
			if (status >= 500 && tries < EC2_TRIES)
				goto again;
			break;
		}
		snprintf(code, sizeof code, "%s", error_code(root));
		if ((msg = member(root, "message")) == NULL)
			msg = member(root, "Message");
		sr_err(err, "%s: %s", code, msg != NULL ? msg : "(no message)");
		json_decref(root);
		sr_http_resp_free(&resp);
		if (ssm_auth_code(code) && !rejected) {
			rejected = 1;
			sr_aws_auth_reject(c->auth);
			continue;
		}
		if (!ssm_transient_code(code) || tries >= EC2_TRIES)
			break;
again:
		sr_sleep(pause);
		pause *= 2;
	}
	free(body);
	if (st != SR_EC2_OK)
		sr_err_prefix(err, "read SSM parameter %s", name);
	return st;
}
