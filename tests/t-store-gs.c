/*
 * t-store-gs.c: the gs:// store (store.h) against tests/gcsemu.py, our
 * emulator of GCS's XML API (HMAC keys, SigV4 checked, generations,
 * x-goog-if-generation-match, 404 on deleting a missing object, no
 * multi-object delete), started here on loopback. It checks what differs
 * from s3:// (tests/t-store-s3.c): etags are the x-goog-generation the
 * server gave (read from the emulator's request log), create-only sends
 * x-goog-if-generation-match: 0 and compare-and-swap the generation, 16
 * racers of each, a lost reply of a conditional put found to be our own
 * (tests/faultproxy), multipart of several parts byte-exact, a missing key
 * deleted without an error, 1043 keys deleted one DELETE each (never POST
 * ?delete), unfinished multipart uploads of saves that died listed with GET
 * ?uploads and aborted by prefix and age (the emulator lists the whole
 * bucket, as a server that ignores prefix= would: the client keeps to the
 * prefix), and the errors a GCS user meets (wrong secret, unknown access
 * id, missing bucket) saying what to fix for GCS. Needs /usr/bin/python3;
 * finds the emulator at $top_srcdir/tests/gcsemu.py (set by make check) or
 * next to this source.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ckpt.h"
#include "sigv4.h"
#include "store.h"
#include "tap.h"
#include "s3-util.h"
#include "gs-util.h"
#include "util.h"

#define MiB (1024 * 1024)
#define BUCKET "spotrun-gs-test"
#define PREFIX "ckpt/run 1"
/* The path the client sends for key (under the bucket and prefix). */
static char *
wire_path(const char *key)
{
	char *raw = sr_asprintf("/%s/%s/%s", BUCKET, PREFIX, key);
	char *w = sr_sigv4_uri_encode(raw, strlen(raw), 1, NULL);

	free(raw);
	return w;
}

/* "METHOD PATH-OF-KEY" + rest: the start of a log line, malloc'd. */
static char *
logged(const char *method, const char *key, const char *rest)
{
	char *w = wire_path(key), *s = sr_asprintf("%s %s%s", method, w, rest);

	free(w);
	return s;
}

/* The x-goog-generation of the last logged reply to "METHOD PATH-OF-KEY"
 * + rest, into gen ("" when none). */
static void
log_generation(const char *method, const char *key, const char *rest, char *gen, size_t len)
{
	FILE *f = fopen(gu.log, "r");
	char line[8192], *start = logged(method, key, rest);
	const char *g;

	gen[0] = '\0';
	if (f != NULL) {
		while (fgets(line, sizeof line, f) != NULL)
			if (strncmp(line, start, strlen(start)) == 0) {
				gen[0] = '\0';
				if ((g = strstr(line, " x-goog-generation=")) != NULL)
					snprintf(gen, len, "%.*s", (int)strcspn(g + 19, " \n"), g + 19);
			}
		fclose(f);
	}
	free(start);
}

static void
log_show(int last)
{
	char *cmd = sr_asprintf("tail -n %d '%s' | sed 's/^/# emulator: /'", last, gu.log);

	fflush(stdout);
	if (system(cmd) != 0)
		printf("# (no log)\n");
	free(cmd);
}

static int
all_digits(const char *s)
{
	return s[0] != '\0' && strspn(s, "0123456789") == strlen(s);
}

struct listed {
	int n;
	char etags[8][SR_ETAG_MAX];
	char keys[8][64];
};

static int
list_cb(const struct sr_object_info *info, void *arg)
{
	struct listed *l = arg;

	if (l->n < 8) {
		snprintf(l->etags[l->n], SR_ETAG_MAX, "%s", info->etag);
		snprintf(l->keys[l->n], sizeof l->keys[l->n], "%s", info->key);
	}
	l->n++;
	return 0;
}

/* put, get, head and list: every etag is the generation the server gave. */
static void
test_basic(struct sr_store *st)
{
	static const char *keys[] = { "plain", "with space/and+plus", "\xc3\xbc\xe2\x82\xac/x",
		"odd!'()*$&=;:@,[]~", "a%20b" };
	char err[SR_ERRMAX], etag[SR_ETAG_MAX], etag2[SR_ETAG_MAX], gen[64];
	struct sr_object_info info;
	struct listed l;
	void *buf;
	size_t len;
	int i;

	for (i = 0; i < (int)SR_ARRAY_LEN(keys); i++) {
		char body[64];

		snprintf(body, sizeof body, "body of %d", i);
		is_int(sr_store_put(st, keys[i], body, strlen(body), SR_PUT_OVERWRITE, NULL, etag,
		    err), 0, "put \"%s\"", keys[i]);
		log_generation("PUT", keys[i], " ", gen, sizeof gen);
		ok(all_digits(gen), "\"%s\": the emulator gave generation %s", keys[i], gen);
		is_str(etag, gen, "\"%s\": put's etag is the x-goog-generation", keys[i]);
		is_int(sr_store_get(st, keys[i], 100, &buf, &len, etag2, err), 0,
		    "get \"%s\"", keys[i]);
		ok(len == strlen(body) && memcmp(buf, body, len) == 0, "\"%s\" read back", keys[i]);
		is_str(etag2, gen, "\"%s\": get's etag is the generation", keys[i]);
		free(buf);
		is_int(sr_store_head(st, keys[i], &info, err), 0, "head \"%s\"", keys[i]);
		is_str(info.etag, gen, "\"%s\": head's etag is the generation", keys[i]);
		ok(info.size == strlen(body), "\"%s\": head's size", keys[i]);
	}
	ok(info.mtime > sr_now() - 600 && info.mtime < sr_now() + 600, "head: mtime is now-ish");

	memset(&l, 0, sizeof l);
	is_int(sr_store_list(st, "", list_cb, &l, err), 0, "list all");
	is_int(l.n, 5, "list: the five keys, under the store's prefix only");
	is_str(l.keys[0], "a%20b", "list: in key order, the prefix taken off");
	is_int(sr_store_head(st, l.keys[0], &info, err), 0, "head the first listed");
	/* store.h has one etag per object; GCS lists <Generation> with each
	 * <Contents>, and a listed etag that is the MD5 would never pass a
	 * compare-and-swap */
	is_str(l.etags[0], info.etag, "list's etag is the generation, as head's");

	/* a second put of the same key: a new generation */
	log_generation("PUT", "plain", " ", gen, sizeof gen);
	is_int(sr_store_put(st, "plain", "v2", 2, SR_PUT_OVERWRITE, NULL, etag2, err), 0,
	    "overwrite plain");
	ok(all_digits(etag2) && strtoull(etag2, NULL, 10) > strtoull(gen, NULL, 10),
	    "overwrite: a new, higher generation (%s after %s)", etag2, gen);
}

static void
test_missing(struct sr_store *st)
{
	char err[SR_ERRMAX], b[4], *w;
	struct sr_object_info info;
	void *buf;
	size_t len;

	is_int(sr_store_get(st, "nope", 100, &buf, &len, NULL, err), SR_STORE_NOTFOUND,
	    "get missing");
	is_str(err, "get nope: no such key", "get missing: message");
	is_int(sr_store_head(st, "nope", &info, err), SR_STORE_NOTFOUND, "head missing");
	is_str(err, "head nope: no such key", "head missing: message");
	is_int(sr_store_read_range(st, "nope", 0, 1, b, err), SR_STORE_NOTFOUND, "read missing");
	is_int(sr_store_delete(st, "nope", err), 0, "delete missing succeeds");
	w = logged("DELETE", "nope", " 404");
	is_int(gu_log_count(w, NULL), 1, "... though GCS answered 404 NoSuchKey");
	free(w);
	is_int(sr_store_put(st, "gone", "x", 1, SR_PUT_OVERWRITE, NULL, NULL, err), 0, "put gone");
	is_int(sr_store_delete(st, "gone", err), 0, "delete");
	w = logged("DELETE", "gone", " 204");
	is_int(gu_log_count(w, NULL), 1, "... GCS answered 204");
	free(w);
	is_int(sr_store_head(st, "gone", &info, err), SR_STORE_NOTFOUND, "deleted is gone");
	is_int(sr_store_get(st, "plain", 1, &buf, &len, NULL, err), SR_STORE_ERROR, "get over max");
	is_str(err, "get plain: the reply is larger than 1 bytes", "get over max: message");
}

static void
test_conditional(struct sr_store *st)
{
	char err[SR_ERRMAX], etag[SR_ETAG_MAX], etag2[SR_ETAG_MAX], gen[64], *w, *u;
	struct sr_object_info info;
	void *buf;
	size_t len;

	is_int(sr_store_put(st, "ptr", "1", 1, SR_PUT_CREATE, NULL, etag, err), 0, "create-only");
	w = wire_path("ptr");
	u = sr_asprintf("PUT %s x-goog-if-generation-match=0 200", w);
	is_int(gu_log_count(u, NULL), 1, "create-only sent x-goog-if-generation-match: 0");
	free(u);
	log_generation("PUT", "ptr", " ", gen, sizeof gen);
	is_str(etag, gen, "create-only: the etag is the generation");
	is_int(sr_store_put(st, "ptr", "2", 1, SR_PUT_CREATE, NULL, NULL, err), SR_STORE_EXISTS,
	    "create-only again: exists");
	is_str(err, "put ptr: exists (create-only put lost the race)", "exists: message");
	u = sr_asprintf("PUT %s x-goog-if-generation-match=0 412", w);
	is_int(gu_log_count(u, NULL), 1, "... GCS answered 412");
	free(u);

	is_int(sr_store_put(st, "ptr", "3", 1, SR_PUT_MATCH, etag, etag2, err), 0,
	    "compare-and-swap from the generation");
	u = sr_asprintf("PUT %s x-goog-if-generation-match=%s 200", w, etag);
	is_int(gu_log_count(u, NULL), 1, "CAS sent x-goog-if-generation-match: %s", etag);
	free(u);
	log_generation("PUT", "ptr", " ", gen, sizeof gen);
	is_str(etag2, gen, "CAS: the new etag is the new generation");
	ok(strcmp(etag2, etag) != 0, "... not the old one");
	is_int(sr_store_put(st, "ptr", "4", 1, SR_PUT_MATCH, etag, NULL, err),
	    SR_STORE_PRECONDITION, "CAS from a stale generation: precondition");
	u = sr_asprintf("put ptr: changed since etag %s (compare-and-swap lost the race)", etag);
	is_str(err, u, "stale CAS: message");
	free(u);
	u = sr_asprintf("PUT %s x-goog-if-generation-match=%s 412", w, etag);
	is_int(gu_log_count(u, NULL), 1, "... GCS answered 412");
	free(u);
	is_int(sr_store_get(st, "ptr", 10, &buf, &len, NULL, err), 0, "get ptr");
	ok(len == 1 && ((char *)buf)[0] == '3', "the CAS's value stands");
	free(buf);
	is_int(sr_store_put(st, "never", "1", 1, SR_PUT_MATCH, etag, NULL, err),
	    SR_STORE_PRECONDITION, "CAS on a missing key: precondition");
	free(w);

	su_race(st, "raced-manifest", SR_PUT_CREATE, NULL, SR_STORE_EXISTS, "16 create-only puts");
	w = logged("PUT", "raced-manifest", " x-goog-if-generation-match=0 ");
	is_int(gu_log_count(w, " 200", NULL), 1, "... one 200 in the emulator's log");
	is_int(gu_log_count(w, " 412", NULL), 15, "... fifteen 412");
	free(w);
	is_int(sr_store_head(st, "ptr", &info, err), 0, "head ptr");
	su_race(st, "ptr", SR_PUT_MATCH, info.etag, SR_STORE_PRECONDITION,
	    "16 CAS from one generation");
}

/* A conditional put whose reply the network lost: the retry's 412 is our
 * own write when the object's MD5 ETag is our body's; the etag returned is
 * still the generation. tests/faultproxy between us and the emulator. */
static void
test_lost_reply(void)
{
	struct su_proxy px;
	struct sr_store *ps;
	char err[SR_ERRMAX] = "", etag[SR_ETAG_MAX], etag2[SR_ETAG_MAX], gen[64], line[8192];
	char *purl, *ep, *w;
	const char *bd = getenv("top_builddir");
	char *bin = sr_asprintf("%s/tests/faultproxy", bd != NULL ? bd : ".");
	FILE *f;
	int rc;

	if (access(bin, X_OK) != 0) {
		ok(1, "lost replies # SKIP no %s (make tests/faultproxy)", bin);
		free(bin);
		return;
	}
	free(bin);
	ep = sr_asprintf("http://127.0.0.1:%d", gu.port);
	setenv("SPOTRUN_TEST_S3_ENDPOINT", ep, 1);	/* su_proxy_start's target */
	su_proxy_start(&px, "pass");
	purl = sr_asprintf("gs://" BUCKET "/" PREFIX "?endpoint=http://127.0.0.1:%d", px.port);

	su_proxy_fault(&px, "lose");
	ps = su_store_open(purl, 0);
	rc = sr_store_put(ps, "lost1", "manifest one", 12, SR_PUT_CREATE, NULL, etag, err);
	is_int(rc, 0, "create-only put whose reply was lost: the retry's 412 is our own write");
	if (rc != 0)
		printf("# %s\n", err);
	is_int(su_proxy_count(&px, "lose: forwarded"), 1, "... the proxy lost the first reply");
	w = logged("PUT", "lost1", " x-goog-if-generation-match=0 412");
	is_int(gu_log_count(w, NULL), 1, "... the retry got 412");
	free(w);
	/* the generation of the first attempt, the write that landed */
	w = logged("PUT", "lost1", " x-goog-if-generation-match=0 200 x-goog-generation=");
	gen[0] = '\0';
	if ((f = fopen(gu.log, "r")) != NULL) {
		while (fgets(line, sizeof line, f) != NULL)
			if (strncmp(line, w, strlen(w)) == 0)
				snprintf(gen, sizeof gen, "%.*s", (int)strcspn(line + strlen(w), " \n"),
				    line + strlen(w));
		fclose(f);
	}
	free(w);
	is_str(etag, gen, "... and the etag is the generation of the write that landed");
	sr_store_close(ps);

	su_proxy_fault(&px, "lose");
	ps = su_store_open(purl, 0);
	rc = sr_store_put(ps, "lost1", "manifest two", 12, SR_PUT_MATCH, etag, etag2, err);
	is_int(rc, 0, "compare-and-swap whose reply was lost: our own write");
	is_int(su_proxy_count(&px, "lose: forwarded"), 2, "... the proxy lost its reply");
	ok(all_digits(etag2) && strcmp(etag2, etag) != 0, "... a new generation: %s", etag2);
	sr_store_close(ps);

	su_proxy_fault(&px, "lose");
	ps = su_store_open(purl, 0);
	rc = sr_store_put(ps, "lost1", "manifest six", 12, SR_PUT_CREATE, NULL, NULL, err);
	is_int(rc, SR_STORE_EXISTS, "a create-only put on a taken key whose 412 was lost: exists");
	sr_store_close(ps);
	su_proxy_stop(&px);
	unsetenv("SPOTRUN_TEST_S3_ENDPOINT");
	free(purl);
	free(ep);
}

static void
test_ranges(struct sr_store *st, const char *big)
{
	char err[SR_ERRMAX], back[1000];

	is_int(sr_store_put(st, "r", big, 1000, SR_PUT_OVERWRITE, NULL, NULL, err), 0, "put 1000 B");
	is_int(sr_store_read_range(st, "r", 0, 1, back, err), 0, "read byte 0");
	ok(back[0] == big[0], "byte 0 right");
	is_int(sr_store_read_range(st, "r", 999, 1, back, err), 0, "read the last byte");
	ok(back[0] == big[999], "last byte right");
	is_int(sr_store_read_range(st, "r", 100, 900, back, err), 0, "read to the end");
	ok(memcmp(back, big + 100, 900) == 0, "tail right");
	is_int(sr_store_read_range(st, "r", 0, 1000, back, err), 0, "read it all");
	ok(memcmp(back, big, 1000) == 0, "all right");
	is_int(sr_store_read_range(st, "r", 999, 2, back, err), SR_STORE_ERROR,
	    "read past the end (206, short)");
	is_str(err, "read r: the object is shorter than 1001 bytes", "past the end: message");
	is_int(sr_store_read_range(st, "r", 1000, 1, back, err), SR_STORE_ERROR,
	    "read at the end (416 InvalidRange)");
	is_str(err, "read r: the object is shorter than 1001 bytes", "at the end: message");
}

static void
test_multipart(struct sr_store *st, const char *big, char *back)
{
	char err[SR_ERRMAX], gen[64], *w;
	struct sr_object_info info;
	struct sr_store_stats stats;
	struct sr_upload *up;
	int i;

	/* 13 MiB in 5 MiB parts: 5 + 5 + 3 */
	sr_store_stats(st, &stats);
	up = sr_store_upload_begin(st, "mp/pack 1.tar", err);
	ok(up != NULL, "upload begin");
	for (i = 0; i < 13; i++)
		if (sr_upload_write(up, big + (size_t)i * MiB, MiB, err) != 0)
			break;
	is_int(i, 13, "13 writes of 1 MiB");
	is_int(sr_upload_commit(up, err), 0, "commit multipart");
	su_check_all_acked(st, &stats, 5, "multipart");
	w = wire_path("mp/pack 1.tar");
	{
		char *pre = sr_asprintf("PUT %s?partNumber=", w), *ini = sr_asprintf("POST %s?uploads", w);
		char *fin = sr_asprintf("POST %s?uploadId=", w);

		is_int(gu_log_count(ini, " 200", NULL), 1, "one multipart upload initiated");
		is_int(gu_log_count(pre, " 200", NULL), 3, "three parts sent");
		is_int(gu_log_count(fin, " 200", NULL), 1, "completed");
		free(pre);
		free(ini);
		free(fin);
	}
	log_generation("POST", "mp/pack 1.tar", "?uploadId=", gen, sizeof gen);
	is_int(sr_store_head(st, "mp/pack 1.tar", &info, err), 0, "head multipart object");
	ok(info.size == 13 * MiB, "multipart object size");
	ok(all_digits(info.etag), "its etag is a generation: %s", info.etag);
	is_str(info.etag, gen, "... the one the completion gave");
	memset(back, 0, 13 * MiB);
	is_int(sr_store_read_range(st, "mp/pack 1.tar", 0, 13 * MiB, back, err), 0, "read it all");
	ok(memcmp(back, big, 13 * MiB) == 0, "multipart object byte-exact");
	is_int(sr_store_read_range(st, "mp/pack 1.tar", 10 * MiB - 3, 6, back, err), 0,
	    "read across a part boundary");
	ok(memcmp(back, big + 10 * MiB - 3, 6) == 0, "across the boundary right");
	free(w);

	/* a small upload is one PUT */
	up = sr_store_upload_begin(st, "mp/small", err);
	is_int(sr_upload_write(up, big, 1234, err), 0, "small upload write");
	is_int(sr_upload_commit(up, err), 0, "small upload commit");
	is_int(sr_store_head(st, "mp/small", &info, err), 0, "small upload visible");
	ok(info.size == 1234, "small upload: 1234 bytes");
	w = wire_path("mp/small");
	{
		char *p = sr_asprintf("PUT %s 200", w), *q = sr_asprintf("POST %s?", w);

		is_int(gu_log_count(p, NULL), 1, "small upload: one PUT");
		is_int(gu_log_count(q, NULL), 0, "small upload: no multipart");
		free(p);
		free(q);
	}
	free(w);

	/* an aborted upload leaves nothing */
	up = sr_store_upload_begin(st, "mp/aborted", err);
	for (i = 0; i < 11; i++)
		sr_upload_write(up, big + (size_t)i * MiB, MiB, err);
	sr_upload_abort(up);
	is_int(sr_store_head(st, "mp/aborted", &info, err), SR_STORE_NOTFOUND,
	    "aborted: not visible");
	w = logged("DELETE", "mp/aborted", "?uploadId=");
	is_int(gu_log_count(w, " 204", NULL), 1, "aborted: the upload deleted on the server (204)");
	free(w);
}

static void
test_many(struct sr_store *st)
{
	const char **keys;
	char err[SR_ERRMAX], *w;
	struct sr_object_info info;
	int n, before;

	is_int(su_put_many(st, 1040), 0, "1040 puts");
	n = 0;
	is_int(sr_store_list(st, "many/", su_count_cb, &n, err), 0, "list 1040 keys");
	is_int(n, 1040, "all 1040 listed over two pages");
	is_int(gu_log_count("GET /" BUCKET "/?list-type=2&max-keys=1000&prefix=ckpt%2Frun%201%2Fmany%2F"
	    "&continuation-token=", " 200", NULL), 1, "... the second with a continuation token");
	n = 0;
	is_int(sr_store_list(st, "many/k0099", su_count_cb, &n, err), 0, "list a partial prefix");
	is_int(n, 10, "k00990..k00999");

	keys = su_many_keys(1040, "never/written", "with space/and+plus", "odd!'()*$&=;:@,[]~",
	    (char *)NULL);
	before = gu_log_count("DELETE /" BUCKET "/", NULL);
	is_int(sr_store_delete_many(st, keys, 1043, err), 0, "delete_many of 1043 keys");
	is_int(gu_log_count("DELETE /" BUCKET "/", NULL) - before, 1043, "... one DELETE each");
	is_int(gu_log_count("POST /", "?delete", NULL), 0, "... and no POST ?delete");
	w = logged("DELETE", "never/written", " 404");
	is_int(gu_log_count(w, NULL), 1, "... the missing one answered 404, taken as done");
	free(w);
	n = 0;
	is_int(sr_store_list(st, "many/", su_count_cb, &n, err), 0, "list after delete_many");
	is_int(n, 0, "all 1040 gone");
	is_int(sr_store_head(st, "odd!'()*$&=;:@,[]~", &info, err), SR_STORE_NOTFOUND,
	    "the odd key is gone");
	is_int(sr_store_head(st, "plain", &info, err), 0, "a key not named stays");
	su_many_keys_free(keys, 1040);
}

/* sr_store_list_stale_uploads's callback: the keys, each on a line. */
static int
stale_listed(const char *key, double initiated, void *arg)
{
	char *buf = arg;
	size_t n = strlen(buf);

	snprintf(buf + n, 512 - n, "%s%s", key, initiated > 0 && initiated < sr_now() + 1 ?
	    "\n" : " (no time)\n");
	return 0;
}

/* gc_each of a dry run: each object on a line, its size when known. */
static void
gc_told(void *arg, const char *key, uint64_t size, const char *why)
{
	char *buf = arg;
	size_t n = strlen(buf);

	snprintf(buf + n, 512 - n, "%s %s: %s\n", key, size == SR_GC_SIZE_UNKNOWN ? "-" : "size",
	    why);
}

/* Unfinished multipart uploads: GET ?uploads, then DELETE ?uploadId= for
 * each one under the prefix that is old enough; a dry run's listing of the
 * same, aborting none. */
static void
test_stale_uploads(struct sr_store *st, const char *url)
{
	char listed[512] = "";
	char err[SR_ERRMAX], *w;
	int n = -1, rc, aborts = gu_log_count("DELETE /", "?uploadId=", NULL);
	const char *list = "GET /" BUCKET "/?uploads=&prefix=ckpt%2Frun%201%2Fjob%2Fpacks%2F 200";

	is_int(su_dying_upload(url, "job/packs/0000000001-aa.tar"), 0,
	    "a save dies mid-upload, its multipart upload left open");
	is_int(su_dying_upload(url, "other/packs/0000000001-bb.tar"), 0,
	    "another save dies mid-upload, under another prefix");
	is_int(sr_store_abort_stale_uploads(st, "job/packs/", sr_now() - 3600, &n, err), 0,
	    "abort uploads started over an hour ago");
	is_int(n, 0, "... none is that old");
	is_int(gu_log_count(list, NULL), 1, "... the uploads listed with GET ?uploads&prefix=");
	is_int(sr_store_list_stale_uploads(st, "job/packs/", sr_now() + 60, stale_listed, listed,
	    err), 0, "list the uploads under job/packs/ started before a minute from now");
	is_str(listed, "job/packs/0000000001-aa.tar\n", "... the dying save's, with its start, "
	    "not the other prefix's");
	is_int(gu_log_count("DELETE /", "?uploadId=", NULL), aborts, "... and none aborted");
	{
		struct sr_ckpt_opts o;
		char told[512] = "";

		memset(&o, 0, sizeof o);
		o.job = "job";
		o.gc_each = gc_told;
		o.gc_arg = told;
		o.gc_dry_run = 1;
		is_int(sr_ckpt_gc_log(st, &o, "job", 0, sr_now() + 60, NULL, err), 0,
		    "a dry run of gc of the job");
		is_str(told, "job/packs/0000000001-aa.tar -: unfinished upload of a pack (its parts; "
		    "aborted, not deleted)\n", "... lists its unfinished upload, size unknown");
		is_int(gu_log_count("DELETE /", "?uploadId=", NULL), aborts, "... and aborts none");
	}
	rc = sr_store_abort_stale_uploads(st, "job/packs/", sr_now() + 60, &n, err);
	is_int(rc, 0, "abort uploads under job/packs/ started before a minute from now");
	if (rc != 0)
		printf("# %s\n", err);
	is_int(n, 1, "... one aborted");
	w = logged("DELETE", "job/packs/0000000001-aa.tar", "?uploadId=");
	is_int(gu_log_count(w, " 204", NULL), 1, "... with DELETE ?uploadId= (204)");
	free(w);
	is_int(gu_log_count("DELETE /", "?uploadId=", NULL) - aborts, 1, "... and no other upload "
	    "aborted, though the emulator listed the other one too");
	is_int(sr_store_abort_stale_uploads(st, "job/packs/", sr_now() + 60, &n, err), 0,
	    "abort again");
	is_int(n, 0, "... nothing left to abort");
	is_int(sr_store_abort_stale_uploads(st, "other/", sr_now() + 60, &n, err), 0,
	    "abort the uploads under other/");
	is_int(n, 1, "... the other save's, left open until now");
}

/* The errors a GCS user meets, and what they are told to fix. */
static void
test_errors(const char *url)
{
	struct sr_store *bad;
	struct sr_object_info info;
	char err[SR_ERRMAX], *u;
	void *buf;
	size_t len;
	const char *want;

	setenv("GS_SECRET_ACCESS_KEY", "wrong+secret/for-the-test", 1);
	bad = su_store_open(url, 0);
	ok(bad != NULL, "open with a wrong secret (nothing checked yet)");
	is_int(sr_store_put(bad, "x", "1", 1, SR_PUT_OVERWRITE, NULL, NULL, err), SR_STORE_ERROR,
	    "put with a wrong secret fails");
	want = "put x: the server rejects the signature (SignatureDoesNotMatch): the secret key "
	    "is wrong for access key in env";
	ok(strncmp(err, want, strlen(want)) == 0, "wrong secret: SignatureDoesNotMatch, "
	    "the keys from env: %s", err);
	ok(strstr(err, "GS_SECRET_ACCESS_KEY") != NULL && strstr(err, "AWS_") == NULL,
	    "wrong secret on gs://: the message names GS_SECRET_ACCESS_KEY, not AWS's variable");
	ok(strstr(err, "wrong+secret") == NULL, "the secret is not in the message");
	is_int(gu_log_count("PUT /" BUCKET "/ckpt/run%201/x 403", NULL), 1,
	    "... the emulator refused it with 403");
	sr_store_close(bad);
	setenv("GS_SECRET_ACCESS_KEY", GU_SECRET, 1);

	setenv("GS_ACCESS_KEY_ID", "GOOG1EUNKNOWNACCESSID", 1);
	bad = su_store_open(url, 0);
	is_int(sr_store_get(bad, "x", 10, &buf, &len, NULL, err), SR_STORE_ERROR,
	    "get with an unknown access id fails");
	is_str(err, "get x: the server does not know the access key (InvalidAccessKeyId) from env; "
	    "check the credentials and the endpoint", "unknown access id: message");
	sr_store_close(bad);
	setenv("GS_ACCESS_KEY_ID", GU_ACCESS_ID, 1);

	u = sr_asprintf("gs://no-such-bucket?endpoint=http://127.0.0.1:%d", gu.port);
	bad = su_store_open(u, 0);
	is_int(sr_store_head(bad, "x", &info, err), SR_STORE_NOTFOUND, "head in a missing bucket");
	is_int(sr_store_get(bad, "x", 10, &buf, &len, NULL, err), SR_STORE_ERROR,
	    "get in a missing bucket is an error, not 'not found'");
	ok(strncmp(err, "get x: bucket no-such-bucket does not exist", 43) == 0,
	    "missing bucket: message: %s", err);
	ok(strstr(err, "gs://no-such-bucket") != NULL && strstr(err, "s3://") == NULL,
	    "missing bucket on gs://: how to create it names gs://, not `aws s3 mb s3://`");
	is_int(sr_store_delete(bad, "x", err), SR_STORE_ERROR,
	    "delete in a missing bucket is an error (404 NoSuchBucket is not NoSuchKey)");
	sr_store_close(bad);
	free(u);

	is_int(sr_store_open("gs://Bad_Bucket/x", &bad, err), -1, "bad bucket name");
	is_str(err, "open store gs://Bad_Bucket/x: bucket \"Bad_Bucket\": a bucket name has "
	    "lowercase letters, digits, '.', '-' and '_' only", "bad bucket: message");
	/* half a key pair: found at open or at the first request */
	unsetenv("GS_SECRET_ACCESS_KEY");
	if (sr_store_open(url, &bad, err) == 0) {
		ok(sr_store_head(bad, "x", &info, err) == SR_STORE_ERROR, "half a key pair in env: "
		    "the first request fails");
		sr_store_close(bad);
	} else
		ok(1, "half a key pair in env: open fails");
	ok(strstr(err, "GS_ACCESS_KEY_ID is set but GS_SECRET_ACCESS_KEY is not; set both") !=
	    NULL, "half a pair: message: %s", err);
	setenv("GS_SECRET_ACCESS_KEY", GU_SECRET, 1);
}

int
main(void)
{
	struct sr_store *st;
	char *url, *big, *back;
	int status;

	/* GCS's keys where spotrun finds them first, nothing of AWS's; the
	 * emulator without its rate limit (t-lease and t-queue turn it on) */
	gu_start(BUCKET, 0, "t-store-gs");
	su_isolate();

	url = sr_asprintf("gs://" BUCKET "/" PREFIX "?endpoint=http://127.0.0.1:%d&part_size=5MiB"
	    "&concurrency=4", gu.port);
	st = su_store_open(url, 0);
	ok(st != NULL, "open %s", url);
	if (st == NULL)
		return tap_done();
	big = sr_malloc(13 * MiB);
	back = sr_malloc(13 * MiB);
	su_fill(big, 13 * MiB, 7);

	test_basic(st);
	test_missing(st);
	test_conditional(st);
	test_lost_reply();
	test_ranges(st, big);
	su_check_acks(st, big, back, "small reads");
	test_multipart(st, big, back);
	test_many(st);
	test_stale_uploads(st, url);
	test_errors(url);

	ok(waitpid(gu.pid, &status, WNOHANG) == 0, "the emulator is still up");
	if (tap_st.failed > 0)
		log_show(30);
	sr_store_close(st);
	free(url);
	free(big);
	free(back);
	return tap_done();
}
