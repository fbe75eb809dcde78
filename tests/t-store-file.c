/*
 * t-store-file.c: the object store front end (store/store.c) and its file://
 * backend (store/store-file.c), on a fresh temp directory: every operation,
 * exact messages, key validation, listing order, atomic publication under
 * races between 16 processes (create-only and compare-and-swap), streamed
 * uploads, aborts and write failures that leave nothing behind; and every
 * operation under out-of-memory (tests/oom-trial.h): it fails with an
 * error that says so, leaving nothing half-written, or succeeds exactly.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "pace.h"
#include "store.h"
#include "tap.h"
#include "nofsync.h"
#include "oom.h"
#include "oom-trial.h"
#include "util.h"

#define RACERS 16

static char root[64];

static struct sr_store *
open_store(void)
{
	char *url = sr_asprintf("file://%s/store", root), err[SR_ERRMAX];
	struct sr_store *st;

	if (sr_store_open(url, &st, err) != 0)
		sr_fatal("%s", err);
	free(url);
	return st;
}

static char *
path_of(const char *key)
{
	return sr_asprintf("%s/store/%s", root, key);
}

static int
exists(const char *key)
{
	char *p = path_of(key);
	struct stat sb;
	int r = lstat(p, &sb) == 0;

	free(p);
	return r;
}

/* Entries in the store's temp area other than the lock file. */
static int
temp_files(void)
{
	char *cmd = sr_asprintf("ls -A %s/store/.tmp 2>/dev/null | grep -vx lock | wc -l", root);
	FILE *f = popen(cmd, "r");
	int n = -1;

	if (f == NULL || fscanf(f, "%d", &n) != 1)
		n = -1;
	if (f != NULL)
		pclose(f);
	free(cmd);
	return n;
}

static void
sha_etag(const void *buf, size_t len, char *out)
{
	unsigned char d[32];
	unsigned int dl;
	int i;

	EVP_Digest(buf, len, d, &dl, EVP_sha256(), NULL);
	for (i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void
test_open(void)
{
	char err[SR_ERRMAX], *url;
	struct sr_store *st;

	url = sr_asprintf("file://%s/new/deep/store/", root);
	ok(sr_store_open(url, &st, err) == 0, "open creates a missing store root");
	is_str(sr_store_url(st), url, "sr_store_url gives the URL back");
	sr_store_close(st);
	free(url);
	url = sr_asprintf("%s/new/deep/store", root);
	ok(access(url, F_OK) == 0, "the root directory exists");
	free(url);

	is_int(sr_store_open("file://relative/dir", &st, err), -1, "relative file URL refused");
	is_str(err, "open store file://relative/dir: a file URL names an absolute directory: "
	    "file:///path/to/dir", "message for a relative file URL");
	is_int(sr_store_open("ftp://host/x", &st, err), -1, "unknown scheme refused");
	is_str(err, "open store ftp://host/x: unsupported scheme \"ftp\" (supported: file://, s3://, gs://, az://)",
	    "message for an unknown scheme");
	is_int(sr_store_open("/just/a/path", &st, err), -1, "a path is not a URL");
	is_str(err, "open store /just/a/path: not a URL (use file:///absolute/path, s3://bucket/prefix, gs://bucket/prefix or az://account/container/prefix)", "message for a path");
	ok(st == NULL, "failed open leaves *out NULL");
	url = sr_asprintf("file://localhost%s/pct%%20dir", root);
	ok(sr_store_open(url, &st, err) == 0, "file://localhost/... with %%20 opens");
	sr_store_close(st);
	free(url);
	url = sr_asprintf("%s/pct dir", root);
	ok(access(url, F_OK) == 0, "percent-decoded root \"pct dir\" exists");
	free(url);
}

static void
test_put_get(struct sr_store *st)
{
	char err[SR_ERRMAX], etag[SR_ETAG_MAX], etag2[SR_ETAG_MAX], want[33];
	struct sr_object_info info;
	size_t len;
	void *buf;
	int rc;

	rc = sr_store_put(st, "a/b/hello", "hello", 5, SR_PUT_OVERWRITE, NULL, etag, err);
	is_int(rc, SR_STORE_OK, "put a/b/hello");
	is_str(etag, "2cf24dba5fb0a30e26e83b2ac5b9e29e", "etag = hex of SHA-256[0:16]");
	rc = sr_store_get(st, "a/b/hello", 100, &buf, &len, etag2, err);
	ok(rc == SR_STORE_OK && len == 5 && memcmp(buf, "hello", 6) == 0,
	    "get gives the bytes back, NUL-terminated");
	is_str(etag2, etag, "get gives the same etag");
	free(buf);
	rc = sr_store_head(st, "a/b/hello", &info, err);
	ok(rc == SR_STORE_OK && info.size == 5 && strcmp(info.etag, etag) == 0 &&
	    strcmp(info.key, "a/b/hello") == 0 && info.mtime > sr_now() - 60 &&
	    info.mtime <= sr_now() + 1, "head: key, size, etag, mtime");

	rc = sr_store_put(st, "a/b/hello", "hello, world", 12, SR_PUT_OVERWRITE, NULL, etag, err);
	sha_etag("hello, world", 12, want);
	ok(rc == SR_STORE_OK && strcmp(etag, want) == 0, "overwrite: new etag");
	rc = sr_store_get(st, "a/b/hello", 12, &buf, &len, NULL, err);
	ok(rc == SR_STORE_OK && len == 12 && memcmp(buf, "hello, world", 12) == 0,
	    "get of exactly max bytes, new content");
	free(buf);
	rc = sr_store_get(st, "a/b/hello", 11, &buf, &len, NULL, err);
	is_int(rc, SR_STORE_ERROR, "get larger than max fails");
	is_str(err, "get a/b/hello: 12 bytes, more than the 11 allowed", "message for too large");
	ok(buf == NULL, "failed get leaves *buf NULL");

	rc = sr_store_get(st, "a/b/nope", 100, &buf, &len, NULL, err);
	is_int(rc, SR_STORE_NOTFOUND, "get of a missing key: SR_STORE_NOTFOUND");
	is_str(err, "get a/b/nope: no such object", "message for a missing key");
	is_int(sr_store_get(st, "a/b", 100, &buf, &len, NULL, err), SR_STORE_NOTFOUND,
	    "a directory of keys is not an object");
	is_int(sr_store_get(st, "a/b/hello/x", 100, &buf, &len, NULL, err), SR_STORE_NOTFOUND,
	    "a key below an object: not found");
	is_int(sr_store_head(st, "zzz", &info, err), SR_STORE_NOTFOUND, "head of a missing key");

	rc = sr_store_put(st, "empty", "", 0, SR_PUT_OVERWRITE, NULL, etag, err);
	sha_etag("", 0, want);
	ok(rc == SR_STORE_OK && strcmp(etag, want) == 0, "empty object: etag of nothing");
	rc = sr_store_get(st, "empty", 0, &buf, &len, etag2, err);
	ok(rc == SR_STORE_OK && len == 0 && ((char *)buf)[0] == '\0' && strcmp(etag2, want) == 0,
	    "get of an empty object with max 0");
	free(buf);
	rc = sr_store_put(st, "nullbuf", NULL, 0, SR_PUT_OVERWRITE, NULL, NULL, err);
	is_int(rc, SR_STORE_OK, "put of NULL, 0 bytes, no etag wanted");
	is_int(sr_store_put(st, "nullbuf", NULL, 3, SR_PUT_OVERWRITE, NULL, NULL, err),
	    SR_STORE_ERROR, "put of NULL, 3 bytes refused");
	is_str(err, "put nullbuf: no data", "message for NULL data");

	/* the file store cannot hold both "n" and "n/x" */
	sr_store_put(st, "n", "1", 1, SR_PUT_OVERWRITE, NULL, NULL, err);
	is_int(sr_store_put(st, "n/x", "2", 1, SR_PUT_OVERWRITE, NULL, NULL, err),
	    SR_STORE_ERROR, "put below an object fails");
	is_str(err, "put n/x: a leading part of the key is an object: the file store cannot "
	    "hold both \"a\" and \"a/b\"", "message names the limit");
	sr_store_put(st, "m/x", "1", 1, SR_PUT_OVERWRITE, NULL, NULL, err);
	is_int(sr_store_put(st, "m", "2", 1, SR_PUT_OVERWRITE, NULL, NULL, err),
	    SR_STORE_ERROR, "put over a directory of keys fails");
	is_str(err, "put m: keys exist below this one: the file store cannot hold both \"a\" "
	    "and \"a/b\"", "message names the limit");
	is_int(sr_store_put(st, "m", "2", 1, SR_PUT_CREATE, NULL, NULL, err), SR_STORE_ERROR,
	    "create-only over a directory of keys: an error, not SR_STORE_EXISTS");
	is_int(temp_files(), 0, "failed puts leave no temp files");
	sr_store_delete(st, "n", err);
	sr_store_delete(st, "m/x", err);
}

static void
test_conditional(struct sr_store *st)
{
	char err[SR_ERRMAX], e1[SR_ETAG_MAX], e2[SR_ETAG_MAX], e3[SR_ETAG_MAX], quoted[128];
	size_t len;
	void *buf;
	int rc;

	rc = sr_store_put(st, "c/LATEST", "1", 1, SR_PUT_CREATE, NULL, e1, err);
	is_int(rc, SR_STORE_OK, "create-only put of a new key");
	rc = sr_store_put(st, "c/LATEST", "2", 1, SR_PUT_CREATE, NULL, e2, err);
	is_int(rc, SR_STORE_EXISTS, "create-only put of an existing key: SR_STORE_EXISTS");
	is_str(err, "put c/LATEST: object exists", "message for an existing key");
	sr_store_get(st, "c/LATEST", 10, &buf, &len, NULL, err);
	ok(len == 1 && memcmp(buf, "1", 1) == 0, "the first content stays");
	free(buf);

	rc = sr_store_put(st, "c/LATEST", "2", 1, SR_PUT_MATCH, e1, e2, err);
	is_int(rc, SR_STORE_OK, "CAS with the current etag succeeds");
	rc = sr_store_put(st, "c/LATEST", "3", 1, SR_PUT_MATCH, e1, e3, err);
	is_int(rc, SR_STORE_PRECONDITION, "CAS with a stale etag: SR_STORE_PRECONDITION");
	snprintf(quoted, sizeof quoted, "put c/LATEST: etag is %s, not %s (If-Match)", e2, e1);
	is_str(err, quoted, "message names both etags");
	snprintf(quoted, sizeof quoted, "\"%s\"", e2);
	rc = sr_store_put(st, "c/LATEST", "3", 1, SR_PUT_MATCH, quoted, e3, err);
	is_int(rc, SR_STORE_OK, "CAS accepts the etag in HTTP quotes");
	sr_store_get(st, "c/LATEST", 10, &buf, &len, e1, err);
	ok(len == 1 && memcmp(buf, "3", 1) == 0 && strcmp(e1, e3) == 0,
	    "content and etag after the CAS");
	free(buf);
	rc = sr_store_put(st, "c/none", "x", 1, SR_PUT_MATCH, e3, NULL, err);
	is_int(rc, SR_STORE_PRECONDITION, "CAS of a missing key: SR_STORE_PRECONDITION");
	is_str(err, "put c/none: no such object to replace (If-Match)", "message for CAS of nothing");
	ok(!exists("c/none"), "nothing written");
	is_int(sr_store_put(st, "c/x", "x", 1, SR_PUT_MATCH, NULL, NULL, err), SR_STORE_ERROR,
	    "SR_PUT_MATCH without an etag refused");
	is_str(err, "put c/x: an etag to match goes with SR_PUT_MATCH only", "its message");
	is_int(sr_store_put(st, "c/x", "x", 1, SR_PUT_CREATE, e1, NULL, err), SR_STORE_ERROR,
	    "an etag with SR_PUT_CREATE refused");
	is_int(sr_store_put(st, "c/x", "x", 1, (enum sr_put_mode)7, NULL, NULL, err),
	    SR_STORE_ERROR, "unknown mode refused");
	is_str(err, "put c/x: unknown put mode 7", "its message");
	is_int(temp_files(), 0, "lost races leave no temp files");

	/* A put that would be refused is refused before anything is written
	 * (the queue's and the fence's losers paid a temp file and its fsync):
	 * with the temp area a plain file, where no temp file can be made,
	 * the losers still get their answers; only a put that goes ahead
	 * fails. */
	{
		char *tmp = path_of(".tmp"), *aside = path_of(".tmp-aside");
		FILE *f;

		if (rename(tmp, aside) != 0 || (f = fopen(tmp, "w")) == NULL)
			sr_fatal("set the temp area aside");
		fclose(f);
		rc = sr_store_put(st, "c/LATEST", "4", 1, SR_PUT_CREATE, NULL, NULL, err);
		ok(rc == SR_STORE_EXISTS && strcmp(err, "put c/LATEST: object exists") == 0,
		    "a create-only put of an existing key is refused before a temp file: %s", err);
		rc = sr_store_put(st, "c/LATEST", "4", 1, SR_PUT_MATCH, e2, NULL, err);
		is_int(rc, SR_STORE_PRECONDITION, "... so is a CAS with a stale etag");
		snprintf(quoted, sizeof quoted, "put c/LATEST: etag is %s, not %s (If-Match)", e3, e2);
		is_str(err, quoted, "... with the same message");
		rc = sr_store_put(st, "c/none", "x", 1, SR_PUT_MATCH, e3, NULL, err);
		is_int(rc, SR_STORE_PRECONDITION, "... and a CAS of a missing key");
		rc = sr_store_put(st, "c/LATEST", "4", 1, SR_PUT_MATCH, e3, NULL, err);
		is_int(rc, SR_STORE_ERROR, "a CAS that would win needs its temp file: it fails here");
		if (unlink(tmp) != 0 || rename(aside, tmp) != 0)
			sr_fatal("put the temp area back");
		rc = sr_store_put(st, "c/LATEST", "4", 1, SR_PUT_MATCH, e3, e1, err);
		is_int(rc, SR_STORE_OK, "... and wins with the temp area back");
		free(tmp);
		free(aside);
	}
}

/* Files written by something else have no cached etag: the store hashes
 * them, with a buffer of each file's size up to its 1 MiB read size; the
 * sizes around both edges hash whole. */
static void
test_etag_sizes(struct sr_store *st)
{
	static const size_t sizes[] = { 0, 1, 4096, ((size_t)1 << 20) - 1, (size_t)1 << 20,
		((size_t)1 << 20) + 1, ((size_t)3 << 20) + 7 };
	char err[SR_ERRMAX], want[33], *p = path_of("e/sized");
	struct sr_object_info info;
	unsigned char *buf;
	size_t i, j;
	FILE *f;

	for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		buf = malloc(sizes[i] + 1);
		for (j = 0; j < sizes[i]; j++)
			buf[j] = (unsigned char)(j * 131 + i);
		/* the put makes the directory; the write replaces its content */
		sr_store_put(st, "e/sized", "x", 1, SR_PUT_OVERWRITE, NULL, NULL, err);
		f = fopen(p, "w");
		if (f == NULL || fwrite(buf, 1, sizes[i], f) != sizes[i] || fclose(f) != 0)
			ok(0, "write %s", p);
		sha_etag(buf, sizes[i], want);
		ok(sr_store_head(st, "e/sized", &info, err) == 0 && strcmp(info.etag, want) == 0 &&
		    info.size == sizes[i], "a file of %zu bytes written behind the store: hashed whole",
		    sizes[i]);
		free(buf);
	}
	sr_store_delete(st, "e/sized", err);
	free(p);
}

static void
test_etag_cache(struct sr_store *st)
{
	char err[SR_ERRMAX], e1[SR_ETAG_MAX], want[33], xa[128], *p = path_of("e/obj");
	struct sr_object_info info;
	struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	FILE *f;

	sr_store_put(st, "e/obj", "abc", 3, SR_PUT_OVERWRITE, NULL, e1, err);
	ok(getxattr(p, "user.spotrun.etag", xa, sizeof xa) > 0 || errno == ENOTSUP,
	    "the etag is kept in an xattr (where supported)");
	removexattr(p, "user.spotrun.etag");
	ok(sr_store_head(st, "e/obj", &info, err) == 0 && strcmp(info.etag, e1) == 0,
	    "without the xattr the file is hashed: same etag");
	/* changed behind the store's back: the cached etag must not be believed */
	sr_store_put(st, "e/obj", "abc", 3, SR_PUT_OVERWRITE, NULL, e1, err);
	f = fopen(p, "w");
	fputs("xyz", f);
	fclose(f);
	utimensat(AT_FDCWD, p, ts, 0);
	sha_etag("xyz", 3, want);
	ok(sr_store_head(st, "e/obj", &info, err) == 0 && strcmp(info.etag, want) == 0,
	    "a file rewritten in place gets the etag of its new content");
	is_int(sr_store_put(st, "e/obj", "new", 3, SR_PUT_MATCH, e1, NULL, err),
	    SR_STORE_PRECONDITION, "so a CAS against the old etag fails");
	is_int(sr_store_put(st, "e/obj", "new", 3, SR_PUT_MATCH, want, NULL, err), SR_STORE_OK,
	    "and one against the new etag succeeds");
	free(p);
	sr_store_delete(st, "e/obj", err);
	test_etag_sizes(st);
}

static void
test_ranges(struct sr_store *st)
{
	char err[SR_ERRMAX], buf[16];
	int rc;

	sr_store_put(st, "r/obj", "0123456789", 10, SR_PUT_OVERWRITE, NULL, NULL, err);
	rc = sr_store_read_range(st, "r/obj", 0, 10, buf, err);
	ok(rc == 0 && memcmp(buf, "0123456789", 10) == 0, "read the whole object");
	rc = sr_store_read_range(st, "r/obj", 3, 4, buf, err);
	ok(rc == 0 && memcmp(buf, "3456", 4) == 0, "read bytes 3..6");
	rc = sr_store_read_range(st, "r/obj", 9, 1, buf, err);
	ok(rc == 0 && buf[0] == '9', "read the last byte");
	is_int(sr_store_read_range(st, "r/obj", 10, 0, buf, err), 0, "read 0 bytes at the end");
	is_int(sr_store_read_range(st, "r/obj", 10, 1, buf, err), SR_STORE_ERROR,
	    "read 1 byte at the end fails");
	is_str(err, "read r/obj: bytes 10..11 asked, past the end of the object (10 bytes)",
	    "message for a read past the end");
	is_int(sr_store_read_range(st, "r/obj", 9, 2, buf, err), SR_STORE_ERROR,
	    "read across the end fails");
	is_int(sr_store_read_range(st, "r/obj", 11, 0, buf, err), SR_STORE_ERROR,
	    "read 0 bytes beyond the end fails");
	is_int(sr_store_read_range(st, "r/obj", UINT64_MAX, 2, buf, err), SR_STORE_ERROR,
	    "offset near 2^64 does not wrap around");
	is_int(sr_store_read_range(st, "r/none", 0, 1, buf, err), SR_STORE_NOTFOUND,
	    "ranged read of a missing key: SR_STORE_NOTFOUND");
	is_str(err, "read r/none: no such object", "its message");
	sr_store_delete(st, "r/obj", err);
}

struct listing {
	char keys[1024];
	int n, stop_at;
	uint64_t bytes;
};

static int
collect(const struct sr_object_info *info, void *arg)
{
	struct listing *l = arg;

	if (l->n > 0)
		strlcat(l->keys, " ", sizeof l->keys);
	strlcat(l->keys, info->key, sizeof l->keys);
	l->bytes += info->size;
	if (strlen(info->etag) != 32)
		return -77;
	if (++l->n == l->stop_at)
		return 7;
	return 0;
}

static const char *
list(struct sr_store *st, const char *prefix, int *rc)
{
	static struct listing l;
	char err[SR_ERRMAX];

	memset(&l, 0, sizeof l);
	*rc = sr_store_list(st, prefix, collect, &l, err);
	return l.keys;
}

static void
test_list(struct sr_store *st)
{
	static const char *keys[] = { "L/zz", "L/job/packs/1-abc.tar", "L/jobx",
		"L/job/manifests/2.json", "L/job/manifests/10.json", "L/job/LATEST",
		"L/job-2/x", "L/job/manifests/1.json" };
	char err[SR_ERRMAX];
	struct listing l;
	size_t i;
	int rc;

	for (i = 0; i < SR_ARRAY_LEN(keys); i++)
		sr_store_put(st, keys[i], keys[i], strlen(keys[i]), SR_PUT_OVERWRITE, NULL, NULL,
		    err);
	is_str(list(st, "L/", &rc), "L/job-2/x L/job/LATEST L/job/manifests/1.json "
	    "L/job/manifests/10.json L/job/manifests/2.json L/job/packs/1-abc.tar L/jobx L/zz",
	    "list L/: every key below, in byte order ('-' < '/')");
	is_int(rc, 0, "list returns 0");
	is_str(list(st, "L/job/", &rc), "L/job/LATEST L/job/manifests/1.json "
	    "L/job/manifests/10.json L/job/manifests/2.json L/job/packs/1-abc.tar",
	    "list a directory prefix");
	is_str(list(st, "L/job", &rc), "L/job-2/x L/job/LATEST L/job/manifests/1.json "
	    "L/job/manifests/10.json L/job/manifests/2.json L/job/packs/1-abc.tar L/jobx",
	    "list a prefix that is part of a segment");
	is_str(list(st, "L/job/manifests/1", &rc), "L/job/manifests/1.json "
	    "L/job/manifests/10.json", "list a prefix ending inside a file name");
	is_str(list(st, "L/job/LATEST", &rc), "L/job/LATEST", "list a whole key");
	is_str(list(st, "L/nothing/", &rc), "", "list of a missing prefix: nothing");
	is_int(rc, 0, "and no error");
	is_str(list(st, "L/job/LATEST/x", &rc), "", "list below an object: nothing");
	is_str(list(st, ".tmp/", &rc), "", "the temp area is not listed");
	list(st, "", &rc);
	ok(rc == 0 && strstr(list(st, "", &rc), ".tmp") == NULL && strstr(list(st, "", &rc),
	    "L/zz") != NULL, "list of everything skips .tmp");

	memset(&l, 0, sizeof l);
	l.stop_at = 2;
	rc = sr_store_list(st, "L/", collect, &l, err);
	ok(rc == 7 && l.n == 2, "a non-zero return from the callback stops the listing and is "
	    "returned");
	memset(&l, 0, sizeof l);
	sr_store_list(st, "L/job/manifests/", collect, &l, err);
	is_int(l.bytes, strlen("L/job/manifests/1.json") + strlen("L/job/manifests/10.json") +
	    strlen("L/job/manifests/2.json"), "listed sizes are right");
	is_int(sr_store_list(st, "/abs", collect, &l, err), SR_STORE_ERROR,
	    "absolute prefix refused");
	is_str(err, "list /abs: invalid prefix: starts with '/' (keys are relative to the store)",
	    "its message");
	is_int(sr_store_list(st, "L/../", collect, &l, err), SR_STORE_ERROR, "prefix with .. refused");

	/* delete: parents left empty go, the root and other keys stay */
	is_int(sr_store_delete(st, "L/job/packs/1-abc.tar", err), 0, "delete a key");
	ok(!exists("L/job/packs"), "its directory, now empty, is gone");
	ok(exists("L/job/manifests"), "directories with other keys stay");
	is_int(sr_store_delete(st, "L/job/packs/1-abc.tar", err), 0, "deleting it again succeeds");
	is_int(sr_store_delete(st, "L/never/was", err), 0, "deleting a missing key succeeds");
	is_int(sr_store_delete(st, "L/job", err), 0, "deleting a \"directory\" is a no-op");
	ok(exists("L/job/LATEST"), "and removes nothing");
	for (i = 0; i < SR_ARRAY_LEN(keys); i++)
		sr_store_delete(st, keys[i], err);
	ok(!exists("L"), "deleting every key removes every directory");
	ok(exists(""), "but not the store root");
}

static void
test_keys(struct sr_store *st)
{
	static const struct {
		const char *key, *msg;
	} bad[] = {
		{ "", "put \"\": invalid key: empty" },
		{ "/abs", "put /abs: invalid key: starts with '/' (keys are relative to the store)" },
		{ "a//b", "put a//b: invalid key: has an empty segment (\"//\")" },
		{ "a/", "put a/: invalid key: ends with '/'" },
		{ "./a", "put ./a: invalid key: has a \".\" segment" },
		{ "a/./b", "put a/./b: invalid key: has a \".\" segment" },
		{ "../x", "put ../x: invalid key: has a \"..\" segment" },
		{ "a/..", "put a/..: invalid key: has a \"..\" segment" },
		{ "a\nb", "put a\\x0ab: invalid key: control character 0x0a at byte 1" },
		{ ".tmp/x", "put .tmp/x: invalid key: \".tmp\" is the file store's temporary area" },
		{ ".tmp", "put .tmp: invalid key: \".tmp\" is the file store's temporary area" },
	};
	static const char *good[] = { ".x", "..x", "a.b/..c", "x/.tmp", ".tmpx", "sp ace",
		"ünïcode" };
	char err[SR_ERRMAX], longkey[1100], etag[SR_ETAG_MAX];
	struct sr_object_info info;
	size_t i, len;
	void *buf;

	for (i = 0; i < SR_ARRAY_LEN(bad); i++) {
		is_int(sr_store_put(st, bad[i].key, "x", 1, SR_PUT_OVERWRITE, NULL, NULL, err),
		    SR_STORE_ERROR, "hostile key %zu refused by put", i);
		is_str(err, bad[i].msg, "message for hostile key %zu", i);
	}
	ok(sr_store_get(st, "../../etc/passwd", 1 << 20, &buf, &len, NULL, err) == SR_STORE_ERROR &&
	    sr_store_head(st, "/etc/passwd", &info, err) == SR_STORE_ERROR &&
	    sr_store_read_range(st, "a/../../x", 0, 1, etag, err) == SR_STORE_ERROR &&
	    sr_store_delete(st, "../x", err) == SR_STORE_ERROR &&
	    sr_store_upload_begin(st, "/x", err) == NULL, "get, head, read, delete and upload "
	    "check keys too");
	is_str(err, "upload /x: invalid key: starts with '/' (keys are relative to the store)",
	    "with the verb in the message");
	memset(longkey, 'k', sizeof longkey);
	longkey[1024] = '\0';
	is_int(sr_store_put(st, longkey, "x", 1, SR_PUT_OVERWRITE, NULL, NULL, err),
	    SR_STORE_ERROR, "a 1024-byte key passes the check (then meets NAME_MAX)");
	ok(strstr(err, "invalid key") == NULL, "it is not called invalid");
	longkey[1024] = 'k';
	longkey[1025] = '\0';
	is_int(sr_store_put(st, longkey, "x", 1, SR_PUT_OVERWRITE, NULL, NULL, err),
	    SR_STORE_ERROR, "a 1025-byte key is refused");
	ok(strstr(err, ": invalid key: 1025 bytes long, at most 1024 allowed") != NULL &&
	    strlen(err) < 200, "message, with the key shortened: %s", err);
	for (i = 0; i < SR_ARRAY_LEN(good); i++) {
		ok(sr_store_put(st, good[i], "x", 1, SR_PUT_OVERWRITE, NULL, NULL, err) == 0 &&
		    sr_store_delete(st, good[i], err) == 0, "key \"%s\" is fine", good[i]);
	}
	is_int(temp_files(), 0, "refused keys leave no temp files");
}

/* A stream of deterministic bytes: byte i of the upload. */
static uint8_t
stream_byte(size_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13);
}

static void
test_upload(struct sr_store *st)
{
	size_t total = (5 << 20) + 12345, sent = 0, piece = 37 * 1024 + 5, len, i;
	uint8_t *chunk = sr_malloc(piece), *all = sr_malloc(total);
	char err[SR_ERRMAX], want[33];
	struct sr_object_info info;
	struct sr_upload *up;
	void *buf;
	int good = 1;

	for (i = 0; i < total; i++)
		all[i] = stream_byte(i);
	up = sr_store_upload_begin(st, "u/big/pack.tar", err);
	ok(up != NULL, "upload begins");
	while (sent < total && good) {
		size_t n = total - sent < piece ? total - sent : piece;

		memcpy(chunk, all + sent, n);
		good = sr_upload_write(up, chunk, n, err) == 0;
		sent += n;
		if (sent > total / 2 && sent - n <= total / 2)
			ok(sr_store_head(st, "u/big/pack.tar", &info, err) == SR_STORE_NOTFOUND,
			    "half-way through, the object is not visible");
	}
	ok(good, "5 MiB written in 37 KiB pieces");
	is_int(sr_upload_commit(up, err), 0, "commit");
	ok(sr_store_get(st, "u/big/pack.tar", total, &buf, &len, info.etag, err) == 0 &&
	    len == total && memcmp(buf, all, total) == 0, "the object has every byte");
	free(buf);
	sha_etag(all, total, want);
	is_str(info.etag, want, "etag computed while streaming = SHA-256 of the content");
	ok(sr_store_head(st, "u/big/pack.tar", &info, err) == 0 && info.size == total &&
	    strcmp(info.etag, want) == 0, "head agrees");

	up = sr_store_upload_begin(st, "u/aborted", err);
	sr_upload_write(up, "partial", 7, err);
	is_int(temp_files(), 1, "an upload in progress has its temp file");
	sr_upload_abort(up);
	ok(!exists("u/aborted") && temp_files() == 0, "abort leaves nothing: no object, no temp "
	    "file");
	sr_upload_abort(NULL);
	ok(1, "abort of NULL is safe");
	up = sr_store_upload_begin(st, "u/empty", err);
	ok(up != NULL && sr_upload_commit(up, err) == 0 && exists("u/empty"),
	    "an upload of nothing makes an empty object");
	sr_store_delete(st, "u/empty", err);
	sr_store_delete(st, "u/big/pack.tar", err);
	free(chunk);
	free(all);
}

/* A put or an upload that hits a write error (EFBIG under RLIMIT_FSIZE,
 * as ENOSPC would) leaves no object and no temp file. The upload's first
 * error says which write failed and why: where the store writes direct,
 * its staging buffer (8 MiB) goes to the disk in the background once full
 * and the failure is told by the commit; through the page cache, by the
 * write itself, and every write after it refuses. */
static void
test_write_failure(void)
{
	int status, fds[2];
	char msg[SR_ERRMAX] = "", msg2[SR_ERRMAX] = "";
	pid_t pid;

	if (pipe(fds) == -1)
		sr_fatal("pipe failed");
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 64 * 1024, 64 * 1024 };
		struct sr_store *st = open_store();
		uint8_t *big = sr_calloc(1, 1 << 20);
		char err[SR_ERRMAX] = "", err2[SR_ERRMAX] = "";
		struct sr_upload *up;
		int rc, rc2 = 0, i;

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		rc = sr_store_put(st, "w/full", big, 1 << 20, SR_PUT_OVERWRITE, NULL, NULL, err);
		up = sr_store_upload_begin(st, "w/full2", err2);
		for (i = 0; up != NULL && i < 10 && rc2 == 0; i++)	/* 10 MiB */
			rc2 = sr_upload_write(up, big, 1 << 20, err2);
		if (up != NULL && rc2 == 0)
			rc2 = sr_upload_commit(up, err2);
		else if (up != NULL) {
			char err3[SR_ERRMAX];

			if (sr_upload_write(up, "x", 1, err3) == 0 ||
			    strcmp(err3, "upload w/full2: an earlier write failed") != 0 ||
			    sr_upload_commit(up, err3) != SR_STORE_ERROR ||
			    strcmp(err3, "upload w/full2: an earlier write failed") != 0)
				rc2 = 99;
			else
				rc2 = SR_STORE_ERROR;
		}
		dprintf(fds[1], "%s\n%s\n", err, err2);
		_exit(rc == SR_STORE_ERROR && rc2 == SR_STORE_ERROR ? 0 : 1);
	}
	close(fds[1]);
	waitpid(pid, &status, 0);
	{
		FILE *f = fdopen(fds[0], "r");

		if (fgets(msg, sizeof msg, f) == NULL || fgets(msg2, sizeof msg2, f) == NULL)
			msg[0] = '\0';
		fclose(f);
	}
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "put and upload fail when the disk "
	    "refuses the bytes");
	ok(strncmp(msg, "put w/full: write ", 18) == 0 && strstr(msg, "File too large") != NULL,
	    "message says what and why: %.*s", (int)strcspn(msg, "\n"), msg);
	ok(strncmp(msg2, "upload w/full2: write ", 22) == 0 && strstr(msg2, ": File too large\n") !=
	    NULL, "the upload's first error says what and why: %.*s", (int)strcspn(msg2, "\n"),
	    msg2);
	ok(!exists("w/full") && !exists("w/full2") && !exists("w") && temp_files() == 0,
	    "no partial object, no temp file left");
}

/* The lowest descriptor number not open: with every lower one open, the
 * count of open descriptors. */
static int
lowest_free_fd(void)
{
	int fd = dup(0), n = fd;

	if (fd == -1)
		sr_fatal("dup: %s", strerror(errno));
	close(fd);
	return n;
}

/* 60 objects in 3 directories flushed with room for 24 more descriptors:
 * the flush holds only some open at once (a save of 1 TiB has a thousand
 * packs, and RLIMIT_NOFILE is often 1024). */
static void
flush_many(struct sr_store *st)
{
	char err[SR_ERRMAX] = "", names[60][16];
	const char *keys[60];
	struct rlimit old, lim;
	int i, rc;

	for (i = 0; i < 60; i++) {
		snprintf(names[i], sizeof names[i], "m%d/k%02d", i % 3, i);
		keys[i] = names[i];
		if (sr_store_put(st, keys[i], "x", 1, SR_PUT_OVERWRITE, NULL, NULL, err) != 0)
			sr_fatal("put %s: %s", keys[i], err);
	}
	if (getrlimit(RLIMIT_NOFILE, &old) == -1)
		sr_fatal("getrlimit: %s", strerror(errno));
	lim = old;
	lim.rlim_cur = (rlim_t)lowest_free_fd() + 24;
	if (setrlimit(RLIMIT_NOFILE, &lim) == -1)
		sr_fatal("setrlimit: %s", strerror(errno));
	rc = sr_store_flush(st, keys, 60, err);
	if (setrlimit(RLIMIT_NOFILE, &old) == -1)
		sr_fatal("setrlimit: %s", strerror(errno));
	is_int(rc, 0, "60 objects in 3 directories flushed with room for 24 descriptors %s", err);
	for (i = 0; i < 60; i++)
		sr_store_delete(st, keys[i], err);
}

/* An upload whose flush is deferred is committed without an fsync, whole
 * and visible, and made durable by sr_store_flush; a put and a plain
 * upload sync at once. Told apart in a child whose fsync fails (EIO). */
static void
test_deferred_flush(struct sr_store *st)
{
	size_t total = (3 << 20) + 5, len, i;
	uint8_t *all = sr_malloc(total);
	char err[SR_ERRMAX] = "", lines[4][SR_ERRMAX], want[SR_ERRMAX];
	const char *keys[2] = { "d/later", "d/none" };
	int status, fds[2], rc[4] = { 9, 9, 9, 9 };
	void *buf;
	pid_t pid;
	FILE *f;

	for (i = 0; i < total; i++)
		all[i] = stream_byte(i * 7);
	if (pipe(fds) == -1)
		sr_fatal("pipe failed");
	pid = fork();
	if (pid == 0) {
		struct sr_upload *up;
		char e[4][SR_ERRMAX] = { "", "", "", "" };
		int r[4] = { 8, 8, 8, 8 };

		if (nf_fsync_fails(EIO) == -1) {
			dprintf(fds[1], "no seccomp filter: %s\n", strerror(errno));
			_exit(1);
		}
		r[0] = sr_store_put(st, "d/small", "x", 1, SR_PUT_OVERWRITE, NULL, NULL, e[0]);
		if ((up = sr_store_upload_begin(st, "d/plain", e[1])) != NULL &&
		    (r[1] = sr_upload_write(up, all, 100000, e[1])) == 0)
			r[1] = sr_upload_commit(up, e[1]);
		if ((up = sr_store_upload_begin(st, "d/later", e[2])) != NULL &&
		    (r[2] = sr_upload_write(up, all, total, e[2])) == 0) {
			sr_upload_defer_flush(up);
			r[2] = sr_upload_commit(up, e[2]);
		}
		r[3] = sr_store_flush(st, keys, 1, e[3]);
		for (i = 0; i < 4; i++)
			dprintf(fds[1], "%d %s\n", r[i], e[i]);
		_exit(0);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	for (i = 0; i < 4; i++) {
		lines[i][0] = '\0';
		if (fgets(lines[i], sizeof lines[i], f) != NULL) {
			lines[i][strcspn(lines[i], "\n")] = '\0';
			rc[i] = atoi(lines[i]);
		}
	}
	fclose(f);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a child whose fsync fails%s%s",
	    WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : ": ", lines[0]);
	ok(rc[0] == SR_STORE_ERROR && strstr(lines[0], " put d/small: sync ") != NULL &&
	    strstr(lines[0], ": Input/output error") != NULL, "a put syncs at once: %s", lines[0]);
	ok(rc[1] == SR_STORE_ERROR && strstr(lines[1], " upload d/plain: sync ") != NULL &&
	    strstr(lines[1], ": Input/output error") != NULL, "so does a plain upload's commit: %s",
	    lines[1]);
	is_str(lines[2], "0 ", "an upload with its flush deferred commits without a sync");
	snprintf(want, sizeof want, "%d flush d/later: sync %s/store/d/later: Input/output error",
	    SR_STORE_ERROR, root);
	is_str(lines[3], want, "its flush syncs it");
	ok(!exists("d/small") && !exists("d/plain") && temp_files() == 0,
	    "the failed ones left no object and no temp file");
	ok(sr_store_get(st, "d/later", total, &buf, &len, NULL, err) == 0 && len == total &&
	    memcmp(buf, all, total) == 0, "the deferred one is whole and visible %s", err);
	free(buf);
	is_int(sr_store_flush(st, keys, 1, err), 0, "flushed %s", err);
	is_int(sr_store_flush(st, keys, 2, err), SR_STORE_NOTFOUND, "a missing key's flush");
	is_str(err, "flush d/none: no such object", "says which");
	keys[1] = "../x";
	ok(sr_store_flush(st, keys, 2, err) == SR_STORE_ERROR &&
	    strncmp(err, "flush ../x: invalid key", 23) == 0, "an invalid key is refused "
	    "before any flush: %s", err);
	is_int(sr_store_flush(st, keys, 0, err), 0, "no keys: nothing to do");
	sr_store_delete(st, "d/later", err);
	free(all);
	flush_many(st);
}

/* RACERS processes race: each child runs fn and exits with its rc (negated);
 * a shared barrier lets them start their writes together. */
static void
race(int (*fn)(struct sr_store *, int, int, int), int counts[5], int *winner)
{
	int ready[2], go[2], i, status;
	pid_t pids[RACERS];
	char c;

	if (pipe(ready) == -1 || pipe(go) == -1)
		sr_fatal("pipe failed");
	for (i = 0; i < RACERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct sr_store *st = open_store();

			close(ready[0]);
			close(go[1]);
			_exit(-fn(st, i, ready[1], go[0]) & 0xff);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < RACERS; i++)
		if (read(ready[0], &c, 1) != 1)
			break;
	close(go[1]);	/* everyone reads EOF at once: go */
	close(ready[0]);
	memset(counts, 0, 5 * sizeof *counts);
	*winner = -1;
	for (i = 0; i < RACERS; i++) {
		waitpid(pids[i], &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) < 5) {
			counts[WEXITSTATUS(status)]++;
			if (WEXITSTATUS(status) == 0)
				*winner = i;
		}
	}
}

/* Tell the parent this racer is ready, then wait for the go (EOF). */
static void
wait_go(int ready, int go)
{
	char c = 'r';

	if (write(ready, &c, 1) != 1)
		_exit(100);
	close(ready);
	while (read(go, &c, 1) > 0)
		;
}

static int
racer_create(struct sr_store *st, int i, int ready, int go)
{
	char err[SR_ERRMAX], body[32];

	snprintf(body, sizeof body, "racer %d", i);
	wait_go(ready, go);
	return sr_store_put(st, "race/create", body, strlen(body), SR_PUT_CREATE, NULL, NULL,
	    err);
}

static int
racer_cas(struct sr_store *st, int i, int ready, int go)
{
	char err[SR_ERRMAX], body[32], etag[SR_ETAG_MAX];
	size_t len;
	void *buf;

	if (sr_store_get(st, "race/cas", 100, &buf, &len, etag, err) != 0)
		return -10;
	free(buf);
	snprintf(body, sizeof body, "racer %d", i);
	wait_go(ready, go);
	return sr_store_put(st, "race/cas", body, strlen(body), SR_PUT_MATCH, etag, NULL, err);
}

static void
test_races(struct sr_store *st)
{
	char err[SR_ERRMAX], want[32];
	int counts[5], winner;
	size_t len;
	void *buf;

	race(racer_create, counts, &winner);
	is_int(counts[0], 1, "create-only race: exactly one SR_STORE_OK");
	is_int(counts[-SR_STORE_EXISTS], RACERS - 1, "and %d SR_STORE_EXISTS", RACERS - 1);
	snprintf(want, sizeof want, "racer %d", winner);
	ok(sr_store_get(st, "race/create", 100, &buf, &len, NULL, err) == 0 &&
	    strcmp(buf, want) == 0, "the object holds the winner's content (%s)", want);
	free(buf);

	sr_store_put(st, "race/cas", "start", 5, SR_PUT_OVERWRITE, NULL, NULL, err);
	race(racer_cas, counts, &winner);
	is_int(counts[0], 1, "CAS race: exactly one SR_STORE_OK");
	is_int(counts[-SR_STORE_PRECONDITION], RACERS - 1, "and %d SR_STORE_PRECONDITION",
	    RACERS - 1);
	snprintf(want, sizeof want, "racer %d", winner);
	ok(sr_store_get(st, "race/cas", 100, &buf, &len, NULL, err) == 0 &&
	    strcmp(buf, want) == 0, "the object holds the winner's content (%s)", want);
	free(buf);
	is_int(temp_files(), 0, "the losers left no temp files");
	sr_store_delete(st, "race/create", err);
	sr_store_delete(st, "race/cas", err);
}

static void
test_sweep(void)
{
	char *old = sr_asprintf("%s/store/.tmp/1-dead", root);
	char *fresh = sr_asprintf("%s/store/.tmp/2-alive", root);
	struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	struct sr_store *st;
	FILE *f;

	f = fopen(old, "w");
	fclose(f);
	f = fopen(fresh, "w");
	fclose(f);
	utimensat(AT_FDCWD, old, ts, 0);
	st = open_store();
	ok(access(old, F_OK) == -1 && access(fresh, F_OK) == 0,
	    "open removes unlocked temp files (of older versions) over a day old, keeps fresh ones");
	unlink(fresh);
	sr_store_close(st);
	free(old);
	free(fresh);
}

/* The temp files of this version's writers carry a flock while their
 * writer lives: a dead writer's goes at the next open, however fresh; a
 * live one's stays, however old, even while another process opens the
 * store, and its upload then commits. */
static void
test_sweep_locked(void)
{
	char *dead = sr_asprintf("%s/store/.tmp/99999-00000000deadbeef.w", root);
	char *held = sr_asprintf("%s/store/.tmp/99998-00000000aaaaaaaa.w", root);
	struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	struct sr_store *st, *st2;
	struct sr_upload *up;
	char err[SR_ERRMAX] = "", *names, *p;
	int fd, status;
	pid_t pid;

	st = open_store();
	fd = open(dead, O_WRONLY | O_CREAT | O_EXCL, 0644);
	close(fd);
	fd = open(held, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ok(fd != -1 && flock(fd, LOCK_EX) == 0, "a live writer's temp file, flocked");
	utimensat(AT_FDCWD, held, ts, 0);
	st2 = open_store();
	ok(access(dead, F_OK) == -1, "open removes a fresh temp file whose writer is gone");
	ok(access(held, F_OK) == 0, "and keeps one whose writer holds its flock, though a day old");
	sr_store_close(st2);
	close(fd);
	unlink(held);

	/* a real upload in flight here, the store opened by another process */
	up = sr_store_upload_begin(st, "sweep/pack", err);
	ok(up != NULL && sr_upload_write(up, "half a pack", 11, err) == 0, "an upload in flight %s",
	    err);
	is_int(temp_files(), 1, "its temp file is there");
	fflush(stdout);
	if ((pid = fork()) == 0) {
		struct sr_store *other;
		char e2[SR_ERRMAX];
		char *url = sr_asprintf("file://%s/store", root);

		_exit(sr_store_open(url, &other, e2) == 0 ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "another process opened the store");
	is_int(temp_files(), 1, "the upload's temp file is still there");
	is_int(sr_upload_commit(up, err), 0, "and the upload commits %s", err);
	p = path_of("sweep/pack");
	names = NULL;
	ok(sr_read_file(p, 64, &names, NULL, err) == 0 && strcmp(names, "half a pack") == 0,
	    "with its content");
	free(names);
	free(p);
	is_int(temp_files(), 0, "no temp file left");
	sr_store_delete(st, "sweep/pack", err);
	sr_store_close(st);
	free(dead);
	free(held);
}

/* ---- out of memory ---- */

/* What the trials work on: a store, a key, the content it must hold
 * after a success (want) and after a failure (was: NULL for none). */
struct oomt {
	struct sr_store *st;
	const char *key;
	const char *want, *was;
	char got_etag[SR_ETAG_MAX], etag[SR_ETAG_MAX];
	struct oom_buf got;
	struct listing l;
	char url[128];
	struct sr_store *opened;
};

/* Whether key holds exactly content (NULL: no such key), and nothing
 * half-written is in the temp area. */
static int
holds(struct oomt *o, const char *content, char *why)
{
	char err[SR_ERRMAX];
	void *buf = NULL;
	size_t len = 0;
	int rc = sr_store_get(o->st, o->key, 1 << 20, &buf, &len, NULL, err), good;

	if (content == NULL)
		good = rc == SR_STORE_NOTFOUND;
	else
		good = rc == 0 && len == strlen(content) && memcmp(buf, content, len) == 0;
	if (!good)
		snprintf(why, SR_ERRMAX, "%s holds %s, not %s", o->key,
		    rc == 0 ? "other bytes" : sr_store_rc_name(rc), content ? content : "nothing");
	else if (temp_files() != 0) {
		snprintf(why, SR_ERRMAX, "%d files left in the temp area", temp_files());
		good = 0;
	}
	free(buf);
	return good;
}

static int
oom_check_put(void *arg, int rc, char *why)
{
	struct oomt *o = arg;

	return holds(o, rc == 0 ? o->want : o->was, why);
}

/* Put the key back as it was before the trial. */
static void
oom_restore(void *arg)
{
	struct oomt *o = arg;
	char err[SR_ERRMAX];

	if (o->was == NULL)
		sr_store_delete(o->st, o->key, err);
	else if (sr_store_put(o->st, o->key, o->was, strlen(o->was), SR_PUT_OVERWRITE, NULL,
	    o->etag, err) != 0)
		sr_fatal("%s", err);
}

static int
oom_put_create(void *arg, char *err)
{
	struct oomt *o = arg;

	return sr_store_put(o->st, o->key, o->want, strlen(o->want), SR_PUT_CREATE, NULL, NULL,
	    err);
}

static int
oom_put_cas(void *arg, char *err)
{
	struct oomt *o = arg;

	return sr_store_put(o->st, o->key, o->want, strlen(o->want), SR_PUT_MATCH, o->etag, NULL,
	    err);
}

static int
oom_delete(void *arg, char *err)
{
	struct oomt *o = arg;

	return sr_store_delete(o->st, o->key, err);
}

static int
oom_get(void *arg, char *err)
{
	struct oomt *o = arg;

	return sr_store_get(o->st, o->key, 1 << 20, (void **)&o->got.buf, &o->got.len, o->got_etag,
	    err);
}

static int
oom_check_get(void *arg, int rc, char *why)
{
	struct oomt *o = arg;

	if (!oom_buf_check(&o->got, rc, o->was, why))
		return 0;
	if (rc == 0 && strcmp(o->got_etag, o->etag) != 0)
		return snprintf(why, SR_ERRMAX, "etag %s, not %s", o->got_etag, o->etag), 0;
	return holds(o, o->was, why);
}

static void
oom_free_buf(void *arg)
{
	struct oomt *o = arg;

	oom_buf_free(&o->got);
}

static int
oom_head(void *arg, char *err)
{
	struct oomt *o = arg;
	struct sr_object_info info;
	int rc = sr_store_head(o->st, o->key, &info, err);

	if (rc == 0)
		strlcpy(o->got_etag, info.etag, sizeof o->got_etag);
	return rc;
}

static int
oom_check_head(void *arg, int rc, char *why)
{
	struct oomt *o = arg;

	if (rc == 0 && strcmp(o->got_etag, o->etag) != 0)
		return snprintf(why, SR_ERRMAX, "etag %s, not %s", o->got_etag, o->etag), 0;
	return holds(o, o->was, why);
}

static int
oom_list(void *arg, char *err)
{
	struct oomt *o = arg;

	memset(&o->l, 0, sizeof o->l);
	return sr_store_list(o->st, "O/", collect, &o->l, err);
}

static int
oom_check_list(void *arg, int rc, char *why)
{
	struct oomt *o = arg;

	if (rc == 0 && strcmp(o->l.keys, o->want) != 0)
		return snprintf(why, SR_ERRMAX, "listed \"%s\"", o->l.keys), 0;
	return 1;
}

/* A streamed upload of 3 MiB in pieces, committed; aborted on failure. */
static int
oom_upload(void *arg, char *err)
{
	struct oomt *o = arg;
	static uint8_t piece[1 << 20];
	struct sr_upload *up = sr_store_upload_begin(o->st, o->key, err);
	size_t i;

	if (up == NULL)
		return -1;
	for (i = 0; i < sizeof piece; i++)
		piece[i] = stream_byte(i);
	for (i = 0; i < 3; i++)
		if (sr_upload_write(up, piece, sizeof piece, err) != 0) {
			sr_upload_abort(up);
			return -1;
		}
	return sr_upload_commit(up, err);
}

static int
oom_check_upload(void *arg, int rc, char *why)
{
	struct oomt *o = arg;
	struct sr_object_info info;
	char err[SR_ERRMAX];
	int h = sr_store_head(o->st, o->key, &info, err);

	if (rc == 0 ? h != 0 || info.size != 3u << 20 : h != SR_STORE_NOTFOUND)
		return snprintf(why, SR_ERRMAX, "after rc %d, head says %s (%llu bytes)", rc,
		    sr_store_rc_name(h), (unsigned long long)(h == 0 ? info.size : 0)), 0;
	if (temp_files() != 0)
		return snprintf(why, SR_ERRMAX, "%d files left in the temp area", temp_files()), 0;
	return 1;
}

static int
oom_open(void *arg, char *err)
{
	struct oomt *o = arg;

	return sr_store_open(o->url, &o->opened, err);
}

static int
oom_check_open(void *arg, int rc, char *why)
{
	struct oomt *o = arg;
	struct sr_object_info info;
	char err[SR_ERRMAX];

	if (rc != 0)
		return o->opened == NULL ? 1 : (snprintf(why, SR_ERRMAX, "*out set"), 0);
	if (sr_store_head(o->opened, o->key, &info, err) != 0 || strcmp(info.etag, o->etag) != 0)
		return snprintf(why, SR_ERRMAX, "the store opened does not work: %s", err), 0;
	return 1;
}

static void
oom_close(void *arg)
{
	struct oomt *o = arg;

	sr_store_close(o->opened);
	o->opened = NULL;
}

/* The pacer of a store with a write interval (GCS's), kept between a
 * trial's run and its check. */
struct pace_run {
	struct sr_pace *p;
};

static const char *const paced[] = { "LATEST", "lease", "manifests/7.json" };

static int
pace_once(struct sr_pace *p, char *err)
{
	if (sr_pace_wait(p, paced, SR_ARRAY_LEN(paced), err) == -1)
		return -1;
	sr_pace_done(p, paced, SR_ARRAY_LEN(paced));
	return 0;
}

static int
oom_pace(void *arg, char *err)
{
	struct pace_run *r = arg;

	if ((r->p = sr_pace_new(0.001, err)) == NULL)
		return -1;
	return pace_once(r->p, err);
}

/* After either outcome no key is left taken: a wait on them returns (a
 * key left busy would block it for ever: the alarm ends the test). */
static int
oom_check_pace(void *arg, int rc, char *why)
{
	struct pace_run *r = arg;
	char err[SR_ERRMAX];

	(void)rc;
	if (r->p == NULL)
		return 1;
	alarm(10);
	if (pace_once(r->p, err) == -1)
		return snprintf(why, SR_ERRMAX, "a wait after it: %s", err), 0;
	alarm(0);
	return 1;
}

static void
oom_pace_free(void *arg)
{
	struct pace_run *r = arg;

	sr_pace_free(r->p);
	r->p = NULL;
}

static void
test_oom(struct sr_store *st)
{
	struct oomt o = { .st = st, .key = "O/a/obj", .want = "new bytes", .was = NULL };
	struct pace_run pr = { NULL };
	static const char *keys[] = { "O/b/1", "O/b/2/x", "O/c", "O/d/e/f" };
	char err[SR_ERRMAX], range[16], head[16];
	size_t i;
	int rc;

	/* What writes hashes with OpenSSL, whose own allocations are not
	 * failed (OOM_OURS): OpenSSL 3.0 leaks when a digest context's inner
	 * allocation fails, and its first fetch of an algorithm crashed under
	 * injection. Every other operation: OOM_ALL. */
	oom_trial("sr_store_put (create-only)", OOM_OURS, oom_put_create, oom_check_put,
	    oom_restore, &o);
	o.was = "old bytes";
	oom_restore(&o);
	oom_trial("sr_store_put (compare-and-swap)", OOM_OURS, oom_put_cas, oom_check_put,
	    oom_restore, &o);
	oom_trial("sr_store_get", OOM_ALL, oom_get, oom_check_get, oom_free_buf, &o);
	/* the etag is cached: nothing to allocate */
	oom_trial("sr_store_head", OOM_ALL, oom_head, oom_check_head, NULL, &o);
	o.want = NULL;
	oom_trial("sr_store_delete", OOM_ALL, oom_delete, oom_check_put, oom_restore, &o);

	for (i = 0; i < SR_ARRAY_LEN(keys); i++)
		if (sr_store_put(st, keys[i], "k", 1, SR_PUT_OVERWRITE, NULL, NULL, err) != 0)
			sr_fatal("%s", err);
	o.want = "O/a/obj O/b/1 O/b/2/x O/c O/d/e/f";
	oom_trial("sr_store_list", OOM_ALL, oom_list, oom_check_list, NULL, &o);

	o.key = "O/up";
	o.was = NULL;
	oom_trial("a streamed upload (sr_store_upload_begin, _write, _commit)", OOM_OURS,
	    oom_upload, oom_check_upload, oom_restore, &o);

	o.key = "O/a/obj";
	snprintf(o.url, sizeof o.url, "file://%s/store", root);
	oom_trial("sr_store_open", OOM_ALL, oom_open, oom_check_open, oom_close, &o);
	oom_trial("a write's pacing (sr_pace_new, _wait, _done)", OOM_ALL, oom_pace,
	    oom_check_pace, oom_pace_free, &pr);

	/* A ranged read allocates nothing: with every allocation failing it
	 * reads exactly. */
	if (oom_usable()) {
		oom_arm(1, 1, OOM_ALL);
		rc = sr_store_read_range(st, "O/a/obj", 4, 5, range, err);
		rc = rc == 0 ? sr_store_read_range(st, "O/a/obj", 0, 3, head, err) : rc;
		oom_disarm();
		ok(rc == 0 && memcmp(range, "bytes", 5) == 0 && memcmp(head, "old", 3) == 0,
		    "sr_store_read_range reads exactly with every allocation failing");
		if (rc != 0)
			tap_diag("%s", err);
	} else
		tap_skip("AddressSanitizer owns malloc (sr_store_read_range under OOM)");
	for (i = 0; i < SR_ARRAY_LEN(keys); i++)
		sr_store_delete(st, keys[i], err);
	sr_store_delete(st, "O/a/obj", err);
}

int
main(void)
{
	struct sr_store *st;
	char err[SR_ERRMAX];

	snprintf(root, sizeof root, "/tmp/t-store-file.XXXXXX");
	if (mkdtemp(root) == NULL)
		sr_fatal("mkdtemp failed");
	/* OpenSSL's error strings, loaded once on first use: not in a trial */
	OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
	test_open();
	st = open_store();
	test_put_get(st);
	test_conditional(st);
	test_etag_cache(st);
	test_ranges(st);
	test_list(st);
	test_keys(st);
	test_upload(st);
	test_write_failure();
	test_deferred_flush(st);
	test_races(st);
	test_sweep();
	test_sweep_locked();
	test_oom(st);
	is_str(sr_store_rc_name(SR_STORE_EXISTS), "SR_STORE_EXISTS", "rc name of EXISTS");
	is_str(sr_store_rc_name(SR_STORE_PRECONDITION), "SR_STORE_PRECONDITION",
	    "rc name of PRECONDITION");
	is_str(sr_store_rc_name(SR_STORE_OK), "SR_STORE_OK", "rc name of OK");
	is_str(sr_store_rc_name(-9), "SR_STORE_UNKNOWN", "rc name of an unknown code");
	sr_store_close(st);
	sr_rmtree(root, err);
	return tap_done();
}
