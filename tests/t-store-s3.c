/*
 * t-store-s3.c: the s3:// store (store.h) against a real S3 server, Ceph's
 * RADOS Gateway started by build-aux/test-all (tests/rgw.sh): every
 * operation, keys with spaces, UTF-8 and '+', create-only and
 * compare-and-swap with 16 racing threads, multipart uploads of several
 * parts (and their abort), pagination over more than 1000 keys, ranged
 * reads at boundaries, and the errors a user meets: a wrong secret, a
 * missing bucket, a bad option. Skips without a server unless
 * SPOTRUN_TEST_REQUIRE_S3=1, which makes that a failure.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "store.h"
#include "tap.h"
#include "util.h"

#define MiB (1024 * 1024)

static char bucket[64];
static char url[1024];

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? v : "";
}

/* The aws CLI against the test server, for set-up and cross-checks. */
static int
aws(const char *args)
{
	char *cmd = sr_asprintf("AWS_ACCESS_KEY_ID=\"$SPOTRUN_TEST_S3_ACCESS_KEY\" "
	    "AWS_SECRET_ACCESS_KEY=\"$SPOTRUN_TEST_S3_SECRET_KEY\" AWS_DEFAULT_REGION=us-east-1 "
	    "AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null "
	    "AWS_EC2_METADATA_DISABLED=true aws --endpoint-url \"$SPOTRUN_TEST_S3_ENDPOINT\" %s",
	    args);
	int rc = system(cmd);

	free(cmd);
	return rc;
}

static struct sr_store *
open_store(const char *u)
{
	struct sr_store *st;
	char err[SR_ERRMAX];

	if (sr_store_open(u, &st, err) == -1) {
		printf("# open %s: %s\n", u, err);
		return NULL;
	}
	return st;
}

static void
fill(char *buf, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (char)(seed >> 16);
	}
}

static int
count_cb(const struct sr_object_info *info, void *arg)
{
	int *n = arg;

	(void)info;
	(*n)++;
	return 0;
}

struct race {
	struct sr_store *st;
	const char *key;
	enum sr_put_mode mode;
	const char *etag;
	int rc;
	pthread_barrier_t *go;
	int id;
};

static void *
racer(void *arg)
{
	struct race *r = arg;
	char err[SR_ERRMAX], body[32];

	snprintf(body, sizeof body, "writer %d", r->id);
	pthread_barrier_wait(r->go);
	r->rc = sr_store_put(r->st, r->key, body, strlen(body), r->mode, r->etag, NULL, err);
	return NULL;
}

/* 16 threads put key at once in mode; how many won (rc 0) and how many
 * lost cleanly (lose_rc). */
static void
race(struct sr_store *st, const char *key, enum sr_put_mode mode, const char *etag,
    int lose_rc, const char *name)
{
	struct race r[16];
	pthread_t th[16];
	pthread_barrier_t go;
	int i, won = 0, lost = 0;

	pthread_barrier_init(&go, NULL, 16);
	for (i = 0; i < 16; i++) {
		r[i] = (struct race){ st, key, mode, etag, 99, &go, i };
		pthread_create(&th[i], NULL, racer, &r[i]);
	}
	for (i = 0; i < 16; i++) {
		pthread_join(th[i], NULL);
		won += r[i].rc == 0;
		lost += r[i].rc == lose_rc;
	}
	pthread_barrier_destroy(&go);
	is_int(won, 1, "%s: exactly one of 16 wins", name);
	is_int(lost, 15, "%s: the other 15 lose cleanly", name);
}

struct filler {
	struct sr_store *st;
	int from, to, bad;
};

static void *
fill_keys(void *arg)
{
	struct filler *f = arg;
	char key[64], err[SR_ERRMAX];
	int i;

	for (i = f->from; i < f->to; i++) {
		snprintf(key, sizeof key, "many/k%05d", i);
		if (sr_store_put(f->st, key, "x", 1, SR_PUT_OVERWRITE, NULL, NULL, err) != 0)
			f->bad++;
	}
	return NULL;
}

int
main(void)
{
	struct sr_store *st, *bad;
	struct sr_object_info info;
	struct sr_upload *up;
	char err[SR_ERRMAX], etag[SR_ETAG_MAX], etag2[SR_ETAG_MAX], *u, cmd[1024];
	const char *ep = env("SPOTRUN_TEST_S3_ENDPOINT");
	void *buf;
	size_t len;
	char *big, *back;
	int n, i;

	if (ep[0] == '\0') {
		if (strcmp(env("SPOTRUN_TEST_REQUIRE_S3"), "1") == 0) {
			ok(0, "no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset) and "
			    "SPOTRUN_TEST_REQUIRE_S3=1: build-aux/test-all could not start Ceph RGW");
			return tap_done();
		}
		tap_skip_all("no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset; build-aux/test-all "
		    "starts Ceph RGW)");
	}
	setenv("AWS_ACCESS_KEY_ID", env("SPOTRUN_TEST_S3_ACCESS_KEY"), 1);
	setenv("AWS_SECRET_ACCESS_KEY", env("SPOTRUN_TEST_S3_SECRET_KEY"), 1);
	setenv("AWS_CONFIG_FILE", "/dev/null", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null", 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	unsetenv("AWS_ENDPOINT_URL");
	unsetenv("AWS_ENDPOINT_URL_S3");
	unsetenv("AWS_PROFILE");
	if (sr_http_init(err) == -1)
		sr_fatal("%s", err);
	snprintf(bucket, sizeof bucket, "t-store-s3-%d-%lx", (int)getpid(), (long)time(NULL));
	snprintf(cmd, sizeof cmd, "s3api create-bucket --bucket %s >/dev/null", bucket);
	if (aws(cmd) != 0)
		sr_fatal("cannot create bucket %s with the aws CLI", bucket);
	snprintf(url, sizeof url, "s3://%s/run 1/?endpoint=%s&part_size=5MiB&concurrency=4",
	    bucket, ep);
	st = open_store(url);
	ok(st != NULL, "open %s", url);
	if (st == NULL)
		return tap_done();

	/* put, get, head, keys that need encoding */
	{
		static const char *keys[] = { "plain", "with space/and+plus", "\xc3\xbc\xe2\x82\xac/x",
			"odd!'()*$&=;:@,?#[]~", "a%20b" };

		for (i = 0; i < (int)SR_ARRAY_LEN(keys); i++) {
			char body[64];

			snprintf(body, sizeof body, "body of %d", i);
			is_int(sr_store_put(st, keys[i], body, strlen(body), SR_PUT_OVERWRITE, NULL,
			    etag, err), 0, "put \"%s\"", keys[i]);
			is_int(sr_store_get(st, keys[i], 100, &buf, &len, etag2, err), 0,
			    "get \"%s\"", keys[i]);
			ok(len == strlen(body) && memcmp(buf, body, len) == 0, "\"%s\" read back",
			    keys[i]);
			is_str(etag2, etag, "\"%s\": get's etag is put's", keys[i]);
			free(buf);
		}
		n = 0;
		is_int(sr_store_list(st, "", count_cb, &n, err), 0, "list all");
		is_int(n, 5, "list: the five keys, under the store's prefix only");
	}
	/* etag is the MD5 of a single PUT (S3's rule; RGW follows it) */
	is_int(sr_store_put(st, "md5", "abc", 3, SR_PUT_OVERWRITE, NULL, etag, err), 0, "put abc");
	is_str(etag, "900150983cd24fb0d6963f7d28e17f72", "etag is MD5(\"abc\"), unquoted");
	is_int(sr_store_head(st, "md5", &info, err), 0, "head");
	ok(info.size == 3, "head: size 3");
	is_str(info.etag, etag, "head: etag");
	ok(info.mtime > sr_now() - 600 && info.mtime < sr_now() + 600, "head: mtime is now-ish");

	/* missing things */
	is_int(sr_store_get(st, "nope", 100, &buf, &len, NULL, err), SR_STORE_NOTFOUND, "get missing");
	is_str(err, "get nope: no such key", "get missing: message");
	is_int(sr_store_head(st, "nope", &info, err), SR_STORE_NOTFOUND, "head missing");
	is_int(sr_store_read_range(st, "nope", 0, 1, etag2, err), SR_STORE_NOTFOUND, "read missing");
	is_int(sr_store_delete(st, "nope", err), 0, "delete missing succeeds");
	is_int(sr_store_delete(st, "md5", err), 0, "delete");
	is_int(sr_store_head(st, "md5", &info, err), SR_STORE_NOTFOUND, "deleted is gone");
	is_int(sr_store_get(st, "plain", 3, &buf, &len, NULL, err), SR_STORE_ERROR, "get over max");
	is_str(err, "get plain: the reply is larger than 3 bytes", "get over max: message");

	/* create-only and compare-and-swap */
	is_int(sr_store_put(st, "ptr", "1", 1, SR_PUT_CREATE, NULL, etag, err), 0, "create-only");
	is_int(sr_store_put(st, "ptr", "2", 1, SR_PUT_CREATE, NULL, NULL, err), SR_STORE_EXISTS,
	    "create-only again: exists");
	is_str(err, "put ptr: exists (create-only put lost the race)", "exists: message");
	is_int(sr_store_put(st, "ptr", "3", 1, SR_PUT_MATCH, etag, etag2, err), 0, "CAS from etag");
	is_int(sr_store_put(st, "ptr", "4", 1, SR_PUT_MATCH, etag, NULL, err),
	    SR_STORE_PRECONDITION, "CAS from a stale etag: precondition");
	u = sr_asprintf("put ptr: changed since etag %s (compare-and-swap lost the race)", etag);
	is_str(err, u, "stale CAS: message");
	free(u);
	is_int(sr_store_get(st, "ptr", 10, &buf, &len, NULL, err), 0, "get ptr");
	ok(len == 1 && ((char *)buf)[0] == '3', "the CAS's value stands");
	free(buf);
	race(st, "raced-manifest", SR_PUT_CREATE, NULL, SR_STORE_EXISTS, "16 create-only puts");
	is_int(sr_store_head(st, "ptr", &info, err), 0, "head ptr");
	race(st, "ptr", SR_PUT_MATCH, info.etag, SR_STORE_PRECONDITION, "16 CAS from one etag");

	/* ranged reads */
	big = sr_malloc(17 * MiB);
	back = sr_malloc(17 * MiB);
	fill(big, 17 * MiB, 7);
	is_int(sr_store_put(st, "r", big, 1000, SR_PUT_OVERWRITE, NULL, NULL, err), 0, "put 1000 B");
	is_int(sr_store_read_range(st, "r", 0, 1, back, err), 0, "read byte 0");
	ok(back[0] == big[0], "byte 0 right");
	is_int(sr_store_read_range(st, "r", 999, 1, back, err), 0, "read the last byte");
	ok(back[0] == big[999], "last byte right");
	is_int(sr_store_read_range(st, "r", 100, 900, back, err), 0, "read to the end");
	ok(memcmp(back, big + 100, 900) == 0, "tail right");
	is_int(sr_store_read_range(st, "r", 999, 2, back, err), SR_STORE_ERROR, "read past the end");
	is_str(err, "read r: the object is shorter than 1001 bytes", "past the end: message");
	is_int(sr_store_read_range(st, "r", 1000, 1, back, err), SR_STORE_ERROR, "read at the end");

	/* multipart: 17 MiB in 5 MiB parts = 4 parts */
	up = sr_store_upload_begin(st, "mp/pack 1.tar", err);
	ok(up != NULL, "upload begin");
	for (i = 0; i < 17; i++)
		if (sr_upload_write(up, big + (size_t)i * MiB, MiB, err) != 0)
			break;
	is_int(i, 17, "17 writes of 1 MiB");
	is_int(sr_upload_commit(up, err), 0, "commit multipart");
	is_int(sr_store_head(st, "mp/pack 1.tar", &info, err), 0, "head multipart object");
	ok(info.size == 17 * MiB, "multipart object size");
	ok(strlen(info.etag) > 2 && strcmp(info.etag + strlen(info.etag) - 2, "-4") == 0,
	    "multipart etag ends in -4: %s", info.etag);
	memset(back, 0, 17 * MiB);
	is_int(sr_store_read_range(st, "mp/pack 1.tar", 0, 17 * MiB, back, err), 0, "read it all");
	ok(memcmp(back, big, 17 * MiB) == 0, "multipart object byte-exact");
	is_int(sr_store_read_range(st, "mp/pack 1.tar", 5 * MiB - 3, 6, back, err), 0,
	    "read across a part boundary");
	ok(memcmp(back, big + 5 * MiB - 3, 6) == 0, "across the boundary right");

	/* md5=no: parts without Content-MD5 */
	{
		char *u2 = sr_asprintf("s3://%s/run 1/?endpoint=%s&part_size=5MiB&md5=no", bucket, ep);
		struct sr_store *st2 = open_store(u2);

		up = sr_store_upload_begin(st2, "mp/no-md5", err);
		for (i = 0; i < 11; i++)
			sr_upload_write(up, big + (size_t)i * MiB, MiB, err);
		is_int(sr_upload_commit(up, err), 0, "md5=no: multipart commit");
		memset(back, 0, 11 * MiB);
		is_int(sr_store_read_range(st, "mp/no-md5", 0, 11 * MiB, back, err), 0,
		    "md5=no: read it back");
		ok(memcmp(back, big, 11 * MiB) == 0, "md5=no: byte-exact");
		sr_store_close(st2);
		free(u2);
	}

	/* a small upload is one PUT */
	up = sr_store_upload_begin(st, "mp/small", err);
	is_int(sr_upload_write(up, big, 1234, err), 0, "small upload write");
	is_int(sr_upload_commit(up, err), 0, "small upload commit");
	is_int(sr_store_head(st, "mp/small", &info, err), 0, "small upload visible");
	ok(info.size == 1234 && strchr(info.etag, '-') == NULL, "small upload: one PUT (etag %s)",
	    info.etag);

	/* an aborted upload leaves nothing */
	up = sr_store_upload_begin(st, "mp/aborted", err);
	for (i = 0; i < 11; i++)
		sr_upload_write(up, big + (size_t)i * MiB, MiB, err);
	sr_upload_abort(up);
	is_int(sr_store_head(st, "mp/aborted", &info, err), SR_STORE_NOTFOUND, "aborted: not visible");
	snprintf(cmd, sizeof cmd, "s3api list-multipart-uploads --bucket %s --query "
	    "'length(Uploads || `[]`)' --output text | grep -qx 0", bucket);
	is_int(aws(cmd), 0, "aborted: no multipart upload left on the server");

	/* a deadline or a cancel stops an upload; nothing becomes visible */
	up = sr_store_upload_begin(st, "mp/late", err);
	sr_upload_limit(up, sr_now() - 1, NULL);
	is_int(sr_upload_write(up, big, 6 * MiB, err), -1, "a write past the deadline fails");
	is_str(err, "upload mp/late: the checkpoint's deadline passed", "past the deadline: message");
	sr_upload_abort(up);
	is_int(sr_store_head(st, "mp/late", &info, err), SR_STORE_NOTFOUND, "late: not visible");
	{
		volatile int cancel = 0;
		int rc = 0;

		up = sr_store_upload_begin(st, "mp/cancelled", err);
		sr_upload_limit(up, sr_now() + 600, &cancel);
		is_int(sr_upload_write(up, big, 11 * MiB, err), 0, "two parts before the cancel");
		cancel = 1;
		for (i = 0; i < 6 && rc == 0; i++)
			rc = sr_upload_write(up, big, 5 * MiB, err);
		if (rc == 0)
			rc = sr_upload_commit(up, err);
		else
			sr_upload_abort(up);
		is_int(rc, -1, "the cancelled upload fails");
		ok(strstr(err, "upload mp/cancelled") != NULL && strstr(err, "cancelled") != NULL,
		    "cancelled: message: %s", err);
		is_int(sr_store_head(st, "mp/cancelled", &info, err), SR_STORE_NOTFOUND,
		    "cancelled: not visible");
	}
	up = sr_store_upload_begin(st, "mp/small-late", err);
	sr_upload_limit(up, sr_now() - 1, NULL);
	is_int(sr_upload_write(up, big, 100, err), 0, "a small write is only buffered");
	is_int(sr_upload_commit(up, err), -1, "its one PUT past the deadline fails");
	is_str(err, "upload mp/small-late: the checkpoint's deadline passed", "small late: message");

	/* more than one page */
	{
		pthread_t th[4];
		struct filler f[4];
		int badn = 0;

		for (i = 0; i < 4; i++) {
			f[i] = (struct filler){ st, i * 260, (i + 1) * 260, 0 };
			pthread_create(&th[i], NULL, fill_keys, &f[i]);
		}
		for (i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			badn += f[i].bad;
		}
		is_int(badn, 0, "1040 puts");
		n = 0;
		is_int(sr_store_list(st, "many/", count_cb, &n, err), 0, "list 1040 keys");
		is_int(n, 1040, "all 1040 listed over two pages");
		n = 0;
		is_int(sr_store_list(st, "many/k0099", count_cb, &n, err), 0, "list a partial prefix");
		is_int(n, 10, "k00990..k00999");
	}

	/* batch delete: 1040 keys (two requests), a missing one, odd names */
	{
		const char **keys = sr_calloc(1043, sizeof *keys);
		char **names = sr_calloc(1040, sizeof *names);

		for (i = 0; i < 1040; i++)
			keys[i] = names[i] = sr_asprintf("many/k%05d", i);
		keys[1040] = "never/written";
		keys[1041] = "with space/and+plus";
		keys[1042] = "odd!'()*$&=;:@,?#[]~";
		is_int(sr_store_delete_many(st, keys, 1043, err), 0, "delete 1043 keys in a batch");
		n = 0;
		is_int(sr_store_list(st, "many/", count_cb, &n, err), 0, "list after the batch");
		is_int(n, 0, "all 1040 gone");
		is_int(sr_store_head(st, "odd!'()*$&=;:@,?#[]~", &info, err), SR_STORE_NOTFOUND,
		    "the key with XML characters is gone");
		is_int(sr_store_head(st, "plain", &info, err), 0, "a key not named stays");
		for (i = 0; i < 1040; i++)
			free(names[i]);
		free(names);
		free(keys);
	}

	/* errors a user meets */
	setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-for-the-test", 1);
	bad = open_store(url);
	ok(bad != NULL, "open with a wrong secret (nothing checked yet)");
	is_int(sr_store_put(bad, "x", "1", 1, SR_PUT_OVERWRITE, NULL, NULL, err), SR_STORE_ERROR,
	    "put with a wrong secret fails");
	is_str(err, "put x: the server rejects the signature (SignatureDoesNotMatch): the secret "
	    "key is wrong for access key in env; check AWS_SECRET_ACCESS_KEY or the profile",
	    "wrong secret: message");
	ok(strstr(err, "wrong-secret-for-the-test") == NULL, "the secret is not in the message");
	sr_store_close(bad);
	setenv("AWS_SECRET_ACCESS_KEY", env("SPOTRUN_TEST_S3_SECRET_KEY"), 1);

	u = sr_asprintf("s3://no-such-bucket-%d?endpoint=%s", (int)getpid(), ep);
	bad = open_store(u);
	is_int(sr_store_head(bad, "x", &info, err), SR_STORE_NOTFOUND, "head in a missing bucket");
	is_int(sr_store_get(bad, "x", 10, &buf, &len, NULL, err), SR_STORE_ERROR,
	    "get in a missing bucket is an error, not 'not found'");
	ok(strstr(err, "does not exist (create it, e.g. `aws s3 mb s3://no-such-bucket-") != NULL,
	    "missing bucket: message says how to create it: %s", err);
	sr_store_close(bad);
	free(u);

	is_int(sr_store_open("s3://Bad_Bucket/x", &bad, err), -1, "bad bucket name");
	is_str(err, "open store s3://Bad_Bucket/x: bucket \"Bad_Bucket\": a bucket name has "
	    "lowercase letters, digits, '.', '-' and '_' only", "bad bucket: message");
	is_int(sr_store_open("s3://bucket/p?part_size=1MiB", &bad, err), -1, "part too small");
	is_str(err, "open store s3://bucket/p?part_size=1MiB: option part_size: want a size from "
	    "5MiB to 5GiB, e.g. part_size=16MiB", "small part: message");
	is_int(sr_store_open("s3://bucket/p?colour=red", &bad, err), -1, "unknown option");
	is_str(err, "open store s3://bucket/p?colour=red: option colour: unknown (known: endpoint, "
	    "region, profile, part_size, concurrency, md5, attempts, stall_timeout)",
	    "unknown option: message");
	is_int(sr_store_open("s3://bucket/p?endpoint=ftp://x", &bad, err), -1, "bad endpoint");
	is_str(err, "open store s3://bucket/p?endpoint=ftp://x: endpoint \"ftp://x\" is not "
	    "http(s)://host[:port]", "bad endpoint: message");

	sr_store_close(st);
	snprintf(cmd, sizeof cmd, "s3 rb --force s3://%s >/dev/null", bucket);
	aws(cmd);
	free(big);
	free(back);
	return tap_done();
}
