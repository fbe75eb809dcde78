/*
 * t-url-same.c: sr_store_url_same (store/url-same.c): the spellings of one
 * store told the same, different stores told apart, each pair both ways.
 */
#include "config.h"

#include <stdio.h>

#include "store.h"
#include "tap.h"
#include "util.h"

static const struct {
	const char *a, *b;
	int same;
} cases[] = {
	/* one store, spelt otherwise */
	{ "s3://b/q/ckpt", "s3://b/q/ckpt", 1 },
	{ "s3://b/q/ckpt?endpoint=http://localhost:7480",
	  "s3://b/q/ckpt?endpoint=http://127.0.0.1:7480", 1 },
	{ "s3://b/q/ckpt?endpoint=http://[::1]:7480", "s3://b/q/ckpt?endpoint=http://LocalHost:7480", 1 },
	{ "s3://b/q/ckpt?endpoint=http://127.0.0.1:7480&concurrency=8&region=eu-west-1",
	  "s3://b/q/ckpt?region=us-east-1&endpoint=http://localhost:7480/", 1 },
	{ "s3://b/q/ckpt?endpoint=https://rgw.example:443", "s3://b/q/ckpt?endpoint=HTTPS://RGW.example", 1 },
	{ "s3://b/q/ckpt?endpoint=http://rgw.example:80", "s3://b/q/ckpt?endpoint=http://rgw.example", 1 },
	{ "s3://b/q/ckpt?endpoint=http%3A%2F%2Flocalhost%3A7480",
	  "s3://b/q/ckpt?endpoint=http://127.0.0.1:7480", 1 },
	{ "s3://b/q/ckpt/", "s3://b/q/ckpt", 1 },
	{ "s3://b/q/ckpt?part_size=64MiB", "s3://b/q/ckpt", 1 },
	{ "file:///srv/q/ckpt", "file://localhost/srv/q/ckpt", 1 },
	{ "file:///srv/q/ckpt//", "file:///srv/q/ckpt", 1 },
	{ "az://acct/c/q/ckpt?endpoint=http://127.0.0.1:10000/acct",
	  "az://acct/c/q/ckpt?endpoint=http://localhost:10000/acct", 1 },
	/* different stores */
	{ "s3://b/q/ckpt", "gs://b/q/ckpt", 0 },
	{ "s3://b/q/ckpt", "s3://c/q/ckpt", 0 },
	{ "s3://b/q/ckpt", "s3://b/q2/ckpt", 0 },
	{ "s3://b/q/ckpt", "s3://b/Q/ckpt", 0 },
	{ "s3://b/q/ckpt?endpoint=http://localhost:7480", "s3://b/q/ckpt?endpoint=http://localhost:7481", 0 },
	{ "s3://b/q/ckpt?endpoint=http://localhost:7480", "s3://b/q/ckpt?endpoint=https://localhost:7480", 0 },
	{ "s3://b/q/ckpt?endpoint=http://localhost:7480", "s3://b/q/ckpt", 0 },
	{ "s3://b/q/ckpt?endpoint=http://rgw.example:8080", "s3://b/q/ckpt?endpoint=http://rgw.example", 0 },
	{ "s3://b/q/ckpt?endpoint=http://a.example", "s3://b/q/ckpt?endpoint=http://b.example", 0 },
	{ "file:///srv/q/ckpt", "file:///srv/q", 0 },
	{ "file:///srv/q/ckpt", "file://host/srv/q/ckpt", 0 },
	{ "az://acct/c/q", "az://acct/d/q", 0 },
	{ "az://acct/c/q?endpoint=http://127.0.0.1:10000/acct",
	  "az://acct/c/q?endpoint=http://127.0.0.1:10000/ACCT", 0 },
};

int
main(void)
{
	size_t i;

	tap_plan((int)(2 * SR_ARRAY_LEN(cases) + 2));
	for (i = 0; i < SR_ARRAY_LEN(cases); i++) {
		is_int(sr_store_url_same(cases[i].a, cases[i].b), cases[i].same, "%s %s %s",
		    cases[i].a, cases[i].same ? "==" : "!=", cases[i].b);
		is_int(sr_store_url_same(cases[i].b, cases[i].a), cases[i].same, "... and back");
	}
	is_int(sr_store_url_same(NULL, "s3://b/q"), 0, "NULL is no store");
	is_int(sr_store_url_same("s3://b/q", NULL), 0, "... either way");
	return tap_done();
}
