/*
 * t-s3-region.c: an s3:// store opened for the wrong region finds the right
 * one from the server's answer and keeps it. RGW accepts any region, so
 * tests/faultproxy stands in front of it in `region name=eu-central-1`
 * mode, answering what AWS answers to a request signed for another region
 * (400 AuthorizationHeaderMalformed naming eu-central-1; no body to a HEAD,
 * only x-amz-bucket-region). A store opened with region=us-west-2 must then
 * succeed at every operation - put, get, head, list, ranged read,
 * create-only and compare-and-swap puts, a multipart upload, deletes - with
 * exactly one request refused in all: the engine remembers the region for
 * the store. Also a store whose first request is a HEAD, one whose first is
 * a multipart upload, and one whose first requests are 8 at once. Skips
 * without a server unless SPOTRUN_TEST_REQUIRE_S3=1 (then fails).
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "tap.h"
#include "s3-util.h"
#include "util.h"

#define MiB (1024 * 1024)
#define REFUSED ": region: 400 AuthorizationHeaderMalformed to "

static struct su_proxy px;

/* The sum of the numbers that follow needle in the proxy's log. */
static long
proxy_sum(const char *needle)
{
	FILE *f = fopen(px.log, "r");
	char line[2048], *p;
	long n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL) {
		if ((p = strstr(line, needle)) != NULL)
			n += strtol(p + strlen(needle), NULL, 10);
	}
	fclose(f);
	return n;
}

/* The store at bucket/prefix through the proxy, signed for region. */
static struct sr_store *
open_store(const char *bucket, const char *prefix, const char *region)
{
	struct sr_store *st;
	char *url;

	url = sr_asprintf("s3://%s/%s?endpoint=http://127.0.0.1:%d&region=%s&part_size=5MiB"
	    "&concurrency=4", bucket, prefix, px.port, region);
	st = su_store_open(url, 0);
	free(url);
	return st;
}

/* Upload len bytes of buf as key, 1 MiB a write. 0 or the failing rc. */
static int
upload(struct sr_store *st, const char *key, const char *buf, size_t len, char *err)
{
	struct sr_upload *up = sr_store_upload_begin(st, key, err);
	size_t off;

	if (up == NULL)
		return -1;
	for (off = 0; off < len; off += MiB) {
		if (sr_upload_write(up, buf + off, len - off < MiB ? len - off : MiB, err) != 0) {
			sr_upload_abort(up);
			return -1;
		}
	}
	return sr_upload_commit(up, err);
}

struct getter {
	struct sr_store *st;
	pthread_barrier_t *go;
	int rc;
	char err[SR_ERRMAX];
};

static void *
get_main(void *arg)
{
	struct getter *g = arg;
	void *buf;
	size_t len;

	pthread_barrier_wait(g->go);
	g->rc = sr_store_get(g->st, "a", 100, &buf, &len, NULL, g->err);
	if (g->rc == 0)
		free(buf);
	return NULL;
}

int
main(void)
{
	struct sr_store *st;
	struct sr_object_info info;
	char bucket[64], err[SR_ERRMAX] = "", etag[SR_ETAG_MAX], etag2[SR_ETAG_MAX];
	char *big, *back;
	void *buf;
	size_t len;
	int n, refused;

	su_require();
	su_bucket_new(bucket, sizeof bucket, "t-s3-region");
	su_proxy_start(&px, "region name=eu-central-1");
	big = sr_malloc(12 * MiB);
	back = sr_malloc(12 * MiB);
	su_fill(big, 12 * MiB, 3);

	/* every operation, one store, opened for us-west-2 */
	st = open_store(bucket, "ops", "us-west-2");
	ok(st != NULL, "open a store for region us-west-2 through the proxy");
	if (st == NULL)
		goto out;
	su_rc_is(sr_store_put(st, "a", "alpha", 5, SR_PUT_OVERWRITE, NULL, etag, err), 0, err,
	    "put (the store's first request)");
	is_int(su_proxy_count(&px, REFUSED), 1, "the proxy refused the first request");
	is_int(su_proxy_count(&px, REFUSED "PUT /" ), 1, "... which was the PUT");
	su_rc_is(sr_store_get(st, "a", 100, &buf, &len, etag2, err), 0, err, "get");
	ok(len == 5 && memcmp(buf, "alpha", 5) == 0, "get: the bytes put");
	if (len == 5)
		free(buf);
	is_str(etag2, etag, "get: the put's etag");
	su_rc_is(sr_store_head(st, "a", &info, err), 0, err, "head");
	ok(info.size == 5, "head: size 5");
	su_rc_is(sr_store_read_range(st, "a", 1, 3, back, err), 0, err, "read a range");
	ok(memcmp(back, "lph", 3) == 0, "the range's bytes");
	n = 0;
	su_rc_is(sr_store_list(st, "", su_count_cb, &n, err), 0, err, "list");
	is_int(n, 1, "list: one key");
	su_rc_is(sr_store_put(st, "c", "1", 1, SR_PUT_CREATE, NULL, etag, err), 0, err,
	    "create-only put");
	is_int(sr_store_put(st, "c", "2", 1, SR_PUT_CREATE, NULL, NULL, err), SR_STORE_EXISTS,
	    "create-only put again: exists");
	su_rc_is(sr_store_put(st, "c", "3", 1, SR_PUT_MATCH, etag, etag2, err), 0, err,
	    "compare-and-swap");
	is_int(sr_store_put(st, "c", "4", 1, SR_PUT_MATCH, etag, NULL, err),
	    SR_STORE_PRECONDITION, "compare-and-swap from a stale etag: precondition");
	su_rc_is(upload(st, "mp", big, 12 * MiB, err), 0, err,
	    "multipart upload of 12 MiB (3 parts)");
	memset(back, 0, 12 * MiB);
	su_rc_is(sr_store_read_range(st, "mp", 0, 12 * MiB, back, err), 0, err, "read it back");
	ok(memcmp(back, big, 12 * MiB) == 0, "the multipart object is byte-exact");
	{
		const char *keys[] = { "c", "mp" };

		su_rc_is(sr_store_delete_many(st, keys, 2, err), 0, err,
		    "delete two keys in a batch");
	}
	su_rc_is(sr_store_delete(st, "a", err), 0, err, "delete");
	n = 0;
	is_int(sr_store_list(st, "", su_count_cb, &n, err), 0, "list");
	is_int(n, 0, "list: nothing left");
	refused = su_proxy_count(&px, REFUSED);
	is_int(refused, 1, "exactly one request of the store's was refused: it keeps the "
	    "region it learned");
	if (refused != 1)
		su_proxy_show(&px);
	sr_store_close(st);
	/* each connection's line is written as it ends, which closing the
	 * store makes happen soon */
	for (n = 0; n < 100 && proxy_sum(": region eu-central-1: ") < 18; n++)
		usleep(50000);
	is_int(proxy_sum(": region eu-central-1: "), 18, "the proxy forwarded the other 18 "
	    "requests, each checked (3 parts on connections of their own)");
	st = open_store(bucket, "ops", "eu-central-1");
	su_rc_is(sr_store_put(st, "x", "1", 1, SR_PUT_OVERWRITE, NULL, NULL, err), 0, err,
	    "a store for eu-central-1 itself");
	is_int(su_proxy_count(&px, REFUSED), 1, "... is not refused");
	sr_store_close(st);

	/* a store whose first request is a HEAD: AWS answers a HEAD's 400 with
	 * no body, so only the x-amz-bucket-region header names the region */
	st = open_store(bucket, "ops", "us-west-2");
	n = su_proxy_count(&px, REFUSED);
	su_rc_is(sr_store_head(st, "x", &info, err), 0, err,
	    "a HEAD as the store's first request learns the region from x-amz-bucket-region");
	is_int(su_proxy_count(&px, REFUSED) - n, 1, "... refused once");
	sr_store_close(st);

	/* a store whose first request starts a multipart upload */
	st = open_store(bucket, "ops", "us-west-2");
	n = su_proxy_count(&px, REFUSED);
	su_rc_is(upload(st, "mp2", big, 11 * MiB, err), 0, err,
	    "a multipart upload as the store's first request");
	is_int(su_proxy_count(&px, REFUSED) - n, 1, "... refused once (the initiation)");
	su_rc_is(sr_store_head(st, "mp2", &info, err), 0, err, "head it");
	ok(info.size == 11 * MiB, "11 MiB");
	sr_store_close(st);

	/* 8 first requests at once: each may be refused, none may fail */
	{
		struct getter g[8];
		pthread_t th[8];
		pthread_barrier_t go;
		int i, good = 0;

		st = open_store(bucket, "ops", "us-west-2");
		su_rc_is(sr_store_put(st, "a", "alpha", 5, SR_PUT_OVERWRITE, NULL, NULL, err), 0,
		    err, "put a");
		sr_store_close(st);
		st = open_store(bucket, "ops", "us-west-2");
		n = su_proxy_count(&px, REFUSED);
		pthread_barrier_init(&go, NULL, 8);
		for (i = 0; i < 8; i++) {
			g[i].st = st;
			g[i].go = &go;
			pthread_create(&th[i], NULL, get_main, &g[i]);
		}
		for (i = 0; i < 8; i++) {
			pthread_join(th[i], NULL);
			if (g[i].rc == 0)
				good++;
			else
				printf("# get %d: %s\n", i, g[i].err);
		}
		pthread_barrier_destroy(&go);
		is_int(good, 8, "8 gets at once as a store's first requests all succeed");
		n = su_proxy_count(&px, REFUSED) - n;
		ok(n >= 1 && n <= 8, "%d of them refused (1 to 8)", n);
		sr_store_close(st);
	}
out:
	su_proxy_stop(&px);
	su_bucket_rm(bucket);
	free(big);
	free(back);
	return tap_done();
}
