/*
 * t-store-az.c: the az:// store (store.h) against Azurite, started by
 * build-aux/test-all (tests/azurite.sh), with the account key in
 * AZURE_STORAGE_KEY: every operation, keys with spaces, UTF-8, '+', '%'
 * and XML characters (read back by the Azure CLI by name too),
 * create-only and compare-and-swap with their exact messages and 16 racing
 * threads each, ranged reads at block boundaries, block uploads of several
 * blocks (Put Block + Put Block List, counted in Azurite's log) with each
 * checksum, the single Put Blob of a small upload, an aborted upload that
 * leaves no uncommitted blocks, deadlines and cancels, more than 5000 blobs
 * listed over pages and deleted, the errors a user meets (a wrong key, a
 * missing container, bad URLs and options: exact messages, no secret in
 * them), and a restore whose chunks come back in ranged reads of
 * block_size. And under out-of-memory (tests/oom.c, spotrun's own
 * allocations): a store opened, an object put, read back and listed, an
 * upload of three blocks, and gc's look for stale uploads among the
 * uncommitted blobs left above, each run failing with an OOM error or doing
 * exactly that, the object whole after it (old or new bytes, never a mix),
 * nothing leaked. Skips without Azurite unless SPOTRUN_TEST_REQUIRE_AZ=1,
 * which makes that a failure.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "ckpt.h"
#include "store.h"
#include "tap.h"
#include "oom.h"
#include "oom-trial.h"
#include "ckpt-util.h"
#include "az-util.h"
#include "util.h"

#define MiB (1024 * 1024)

static char container[64];
static char url[1024];

/* Requests in Azurite's log for the blob at key (under "run 1/") with
 * the query part q ("comp=block", "comp=blocklist", or "" for any). */
static int
requests(const char *method, const char *key, const char *q)
{
	char *path = sr_asprintf("\"%s /%s/%s/run%%201/%s%s", method,
	    su_env("SPOTRUN_TEST_AZ_ACCOUNT"), container, key, q[0] != '\0' ? "?" : " ");
	int n = au_log_count(path, q[0] != '\0' ? q : NULL, (char *)NULL);

	free(path);
	return n;
}

static void
test_objects(struct sr_store *st)
{
	static const char *const keys[] = { "plain", "with space/and+plus",
		"\xc3\xbc\xe2\x82\xac/x", "odd!'()*$&=;:@,?#[]~", "a%20b", "100%/sure", NULL };
	struct sr_object_info info;
	char err[SR_ERRMAX], etag[SR_ETAG_MAX], got[256];
	void *buf;
	size_t len;

	su_check_keys(st, keys);
	/* the Azure CLI finds them by the same names */
	au_cli_out(got, sizeof got, "storage blob download -c %s -n 'run 1/with space/and+plus' "
	    "-f \"$AZURE_CONFIG_DIR/dl\" -o none --no-progress && cat \"$AZURE_CONFIG_DIR/dl\"",
	    container);
	is_str(got, "body of 1", "the Azure CLI reads \"with space/and+plus\" by its name");
	au_cli_out(got, sizeof got, "storage blob download -c %s -n 'run 1/100%%/sure' "
	    "-f \"$AZURE_CONFIG_DIR/dl\" -o none --no-progress && cat \"$AZURE_CONFIG_DIR/dl\"",
	    container);
	is_str(got, "body of 5", "... and \"100%%/sure\"");

	is_int(sr_store_put(st, "md5", "abc", 3, SR_PUT_OVERWRITE, NULL, etag, err), 0, "put abc");
	ok(strncmp(etag, "0x", 2) == 0 && strchr(etag, '"') == NULL,
	    "etag is Azure's, unquoted: %s", etag);
	is_int(sr_store_head(st, "md5", &info, err), 0, "head");
	ok(info.size == 3, "head: size 3");
	is_str(info.etag, etag, "head: etag");
	ok(info.mtime > sr_now() - 600 && info.mtime < sr_now() + 600, "head: mtime is now-ish");
	au_cli_out(got, sizeof got, "storage blob show -c %s -n 'run 1/md5' --query "
	    "properties.contentSettings.contentMd5 -o tsv", container);
	is_str(got, "kAFQmDzST7DWlj99KOF/cg==", "the blob keeps the Content-MD5 it was put with");

	/* missing things */
	su_check_missing(st);
	is_int(sr_store_head(st, "nope", &info, err), SR_STORE_NOTFOUND, "head missing again");
	is_str(err, "head nope: no such key", "head missing: message");
	is_int(sr_store_put(st, "empty", "", 0, SR_PUT_OVERWRITE, NULL, NULL, err), 0,
	    "put an empty object");
	is_int(sr_store_get(st, "empty", 10, &buf, &len, NULL, err), 0, "get it");
	ok(len == 0, "it is empty");
	free(buf);
}


static void
test_ranges_and_blocks(struct sr_store *st, const char *ep)
{
	struct sr_object_info info;
	struct sr_store_stats stats;
	struct sr_upload *up;
	char err[SR_ERRMAX], got[4096];
	char *big = sr_malloc(5 * MiB), *back = sr_malloc(5 * MiB);
	int i;

	su_fill(big, 5 * MiB, 7);
	su_check_ranges(st, big, back);
	su_check_acks(st, big, back, "small reads");

	/* blocks: 3.5 MiB in 1 MiB blocks = 4 Put Block and one Put Block List */
	sr_store_stats(st, &stats);
	up = sr_store_upload_begin(st, "mp/pack 1.tar", err);
	ok(up != NULL, "upload begin");
	for (i = 0; i < 7; i++)
		if (sr_upload_write(up, big + (size_t)i * MiB / 2, MiB / 2, err) != 0)
			break;
	is_int(i, 7, "7 writes of 512 KiB");
	is_int(sr_upload_commit(up, err), 0, "commit the blocks");
	su_check_all_acked(st, &stats, 5, "blocks");
	is_int(requests("PUT", "mp/pack%201.tar", "comp=block&"), 4, "4 Put Block requests");
	is_int(requests("PUT", "mp/pack%201.tar", "comp=blocklist"), 1, "one Put Block List");
	is_int(sr_store_head(st, "mp/pack 1.tar", &info, err), 0, "head the blob");
	ok(info.size == 7 * MiB / 2, "its size is 3.5 MiB");
	memset(back, 0, 5 * MiB);
	is_int(sr_store_read_range(st, "mp/pack 1.tar", 0, 7 * MiB / 2, back, err), 0,
	    "read it all");
	ok(memcmp(back, big, 7 * MiB / 2) == 0, "byte-exact");
	for (i = 1; i <= 3; i++) {
		is_int(sr_store_read_range(st, "mp/pack 1.tar", (uint64_t)i * MiB - 3, 6, back, err),
		    0, "read across block boundary %d", i);
		ok(memcmp(back, big + (size_t)i * MiB - 3, 6) == 0, "... right");
	}
	/* the block list as Azure keeps it: 4 committed blocks, ids of one length */
	au_cli_out(got, sizeof got, "storage blob show -c %s -n 'run 1/mp/pack 1.tar' --query "
	    "properties.blobType -o tsv", container);
	is_str(got, "BlockBlob", "a block blob");

	/* exactly one block, and a block and one byte */
	up = sr_store_upload_begin(st, "mp/one", err);
	is_int(sr_upload_write(up, big, MiB, err), 0, "write exactly one block");
	is_int(sr_upload_commit(up, err), 0, "commit");
	is_int(requests("PUT", "mp/one", "comp=block&"), 1, "... as one Put Block");
	up = sr_store_upload_begin(st, "mp/one+1", err);
	is_int(sr_upload_write(up, big, MiB + 1, err), 0, "write a block and one byte");
	is_int(sr_upload_commit(up, err), 0, "commit");
	is_int(requests("PUT", "mp/one%2B1", "comp=block&"), 2, "... as two Put Block");
	memset(back, 0, MiB + 1);
	is_int(sr_store_read_range(st, "mp/one+1", 0, MiB + 1, back, err), 0, "read it back");
	ok(memcmp(back, big, MiB + 1) == 0, "... byte-exact");

	/* each checksum: Azurite checks MD5, takes CRC-64 (the default) unchecked */
	{
		static const char *const sums[] = { "crc64", "none", "md5" };

		for (i = 0; i < 3; i++) {
			char *u = sr_asprintf("az://%s/%s/run 1/?endpoint=%s&block_size=1MiB&checksum=%s",
			    su_env("SPOTRUN_TEST_AZ_ACCOUNT"), container, ep, sums[i]);
			struct sr_store *s2 = su_store_open(u, 0);
			char key[32];

			snprintf(key, sizeof key, "mp/sum-%s", sums[i]);
			up = sr_store_upload_begin(s2, key, err);
			is_int(sr_upload_write(up, big, 5 * MiB / 2, err), 0, "checksum=%s: write", sums[i]);
			is_int(sr_upload_commit(up, err), 0, "checksum=%s: commit 3 blocks", sums[i]);
			memset(back, 0, 5 * MiB);
			is_int(sr_store_read_range(st, key, 0, 5 * MiB / 2, back, err), 0,
			    "checksum=%s: read back", sums[i]);
			ok(memcmp(back, big, 5 * MiB / 2) == 0, "checksum=%s: byte-exact", sums[i]);
			sr_store_close(s2);
			free(u);
		}
	}

	/* a small upload is one Put Blob */
	up = sr_store_upload_begin(st, "mp/small", err);
	is_int(sr_upload_write(up, big, 1234, err), 0, "small upload write");
	is_int(sr_upload_commit(up, err), 0, "small upload commit");
	is_int(sr_store_head(st, "mp/small", &info, err), 0, "small upload visible");
	ok(info.size == 1234, "small upload: 1234 bytes");
	is_int(requests("PUT", "mp/small", "comp=block&"), 0, "... and no block sent");

	/* an aborted upload leaves nothing, not even uncommitted blocks */
	/* 5 blocks, 4 in flight at most: the last write waits for one to land */
	up = sr_store_upload_begin(st, "mp/aborted", err);
	for (i = 0; i < 5; i++)
		sr_upload_write(up, big + (size_t)i * MiB, MiB, err);
	sr_upload_abort(up);
	ok(au_log_count("\"PUT /", "/run%201/mp/aborted?comp=block&", "HTTP/1.1\" 201",
	    (char *)NULL) >= 1, "aborted: some of its blocks had landed");
	is_int(sr_store_head(st, "mp/aborted", &info, err), SR_STORE_NOTFOUND, "aborted: not visible");
	au_uncommitted(container, "run 1/mp/", got, sizeof got);
	is_str(got, "", "aborted: no uncommitted blob left on the server");
	/* an aborted upload over an existing blob leaves that blob alone */
	up = sr_store_upload_begin(st, "mp/one", err);
	for (i = 0; i < 5; i++)
		sr_upload_write(up, big + 7, MiB, err);
	sr_upload_abort(up);
	{
		char *line = sr_asprintf("/%s/run%%201/mp/one?comp=blocklist HTTP/1.1\" 409",
		    container);

		is_int(au_log_count("\"PUT /", line, (char *)NULL), 1, "aborted over an existing "
		    "blob: the create-only empty commit is refused (409): its blocks are left to "
		    "expire");
		free(line);
	}
	memset(back, 0, MiB);
	is_int(sr_store_read_range(st, "mp/one", 0, MiB, back, err), 0,
	    "aborted over an existing blob: the blob stays");
	ok(memcmp(back, big, MiB) == 0, "... unchanged");

	/* a deadline or a cancel stops an upload; nothing becomes visible */
	su_check_limits(st, big, MiB);
	su_check_deferred(st, big, 2 * MiB + 7);
	is_int(requests("PUT", "mp/late", "comp=block"), 0, "late: nothing was sent");
	free(big);
	free(back);
}

static void
test_many(struct sr_store *st)
{
	struct sr_object_info info;
	char err[SR_ERRMAX];
	double t;
	int n;

	/* more than one page: List Blobs gives at most 5000 names */
	is_int(su_put_many(st, 5040), 0, "5040 puts");
	n = 0;
	is_int(sr_store_list(st, "many/", su_count_cb, &n, err), 0, "list 5040 blobs");
	is_int(n, 5040, "all 5040 listed over two pages");
	ok(au_log_count("comp=list", "marker=", (char *)NULL) >= 1, "... the second with a marker");
	n = 0;
	is_int(sr_store_list(st, "many/k0099", su_count_cb, &n, err), 0, "list a partial prefix");
	is_int(n, 10, "k00990..k00999");
	{
		const char **keys = su_many_keys(5040, "never/written", "with space/and+plus",
		    "odd!'()*$&=;:@,?#[]~", (char *)NULL);

		t = sr_now();
		is_int(sr_store_delete_many(st, keys, 5043, err), 0, "delete 5043 keys");
		printf("# deleted 5043 keys in %.2f s\n", sr_now() - t);
		n = 0;
		is_int(sr_store_list(st, "many/", su_count_cb, &n, err), 0, "list after the delete");
		is_int(n, 0, "all 5040 gone");
		is_int(sr_store_head(st, "odd!'()*$&=;:@,?#[]~", &info, err), SR_STORE_NOTFOUND,
		    "the key with XML characters is gone");
		is_int(sr_store_head(st, "plain", &info, err), 0, "a key not named stays");
		su_many_keys_free(keys, 5040);
	}
}

static void
test_errors(const char *ep)
{
	struct sr_object_info info;
	struct sr_store *bad;
	char err[SR_ERRMAX], *u;
	void *buf;
	size_t len;

	setenv("AZURE_STORAGE_KEY", "d3JvbmcgYWNjb3VudCBrZXkgZm9yIHRoZSB0ZXN0", 1);
	bad = su_store_open(url, 0);
	ok(bad != NULL, "open with a wrong key (nothing checked yet)");
	is_int(sr_store_put(bad, "x", "1", 1, SR_PUT_OVERWRITE, NULL, NULL, err), SR_STORE_ERROR,
	    "put with a wrong key fails");
	u = sr_asprintf("put x: the server rejects the signature (AuthorizationFailure): the "
	    "account key from AZURE_STORAGE_KEY is wrong for account %s; check AZURE_STORAGE_KEY "
	    "or the connection string's AccountKey", su_env("SPOTRUN_TEST_AZ_ACCOUNT"));
	is_str(err, u, "wrong key: message");
	free(u);
	ok(strstr(err, "d3JvbmcgYWNjb3VudCBrZXkgZm9yIHRoZSB0ZXN0") == NULL,
	    "the key is not in the message");
	sr_store_close(bad);
	setenv("AZURE_STORAGE_KEY", "not base64!", 1);
	bad = su_store_open(url, 0);
	is_int(sr_store_head(bad, "x", &info, err), SR_STORE_ERROR, "a key that is not base64");
	is_str(err, "head x: AZURE_STORAGE_KEY: the account key is not base64 (as the portal and "
	    "`az storage account keys list` give it)", "... message");
	sr_store_close(bad);
	setenv("AZURE_STORAGE_KEY", su_env("SPOTRUN_TEST_AZ_KEY"), 1);
	setenv("AZURE_STORAGE_ACCOUNT", "otheraccount", 1);
	bad = su_store_open(url, 0);
	is_int(sr_store_head(bad, "x", &info, err), SR_STORE_ERROR,
	    "AZURE_STORAGE_ACCOUNT names another account");
	u = sr_asprintf("head x: find Azure credentials: AZURE_STORAGE_ACCOUNT names account "
	    "otheraccount, but the store is in account %s; use the credentials of %s",
	    su_env("SPOTRUN_TEST_AZ_ACCOUNT"), su_env("SPOTRUN_TEST_AZ_ACCOUNT"));
	is_str(err, u, "... message");
	free(u);
	sr_store_close(bad);
	setenv("AZURE_STORAGE_ACCOUNT", su_env("SPOTRUN_TEST_AZ_ACCOUNT"), 1);

	u = sr_asprintf("az://%s/no-such-container-%d?endpoint=%s",
	    su_env("SPOTRUN_TEST_AZ_ACCOUNT"), (int)getpid(), ep);
	bad = su_store_open(u, 0);
	is_int(sr_store_head(bad, "x", &info, err), SR_STORE_ERROR,
	    "head in a missing container is an error, not 'not found'");
	ok(strstr(err, ": container no-such-container-") != NULL && strstr(err, "does not exist "
	    "in account") != NULL && strstr(err, "(create it, e.g. `az storage container create "
	    "--account-name ") != NULL, "missing container: message says how to create it: %s",
	    err);
	is_int(sr_store_get(bad, "x", 10, &buf, &len, NULL, err), SR_STORE_ERROR,
	    "get in a missing container is an error too");
	is_int(sr_store_delete(bad, "x", err), SR_STORE_ERROR, "and delete");
	sr_store_close(bad);
	free(u);

	is_int(sr_store_open("az://Bad_Account/c00", &bad, err), -1, "bad account name");
	is_str(err, "open store az://Bad_Account/c00: account \"Bad_Account\": an account name has "
	    "lowercase letters and digits only", "bad account: message");
	is_int(sr_store_open("az://acct/Box", &bad, err), -1, "bad container name");
	is_str(err, "open store az://acct/Box: container \"Box\": a container name has lowercase "
	    "letters, digits and '-' only", "bad container: message");
	is_int(sr_store_open("az://acct/a--b", &bad, err), -1, "a container with \"--\"");
	is_str(err, "open store az://acct/a--b: container \"a--b\": a container name starts and "
	    "ends with a letter or digit, with no \"--\"", "... message");
	is_int(sr_store_open("az://acct", &bad, err), -1, "no container");
	is_str(err, "open store az://acct: no container (the form is "
	    "az://ACCOUNT/CONTAINER/PREFIX)", "no container: message");
	is_int(sr_store_open("az://acct/ckpt?block_size=100KiB", &bad, err), -1, "block too small");
	is_str(err, "open store az://acct/ckpt?block_size=100KiB: option block_size: want a size "
	    "from 1MiB to 4000MiB, e.g. block_size=16MiB", "small block: message");
	is_int(sr_store_open("az://acct/ckpt?checksum=sha1", &bad, err), -1, "unknown checksum");
	is_str(err, "open store az://acct/ckpt?checksum=sha1: option checksum: want md5, crc64 or "
	    "none", "checksum: message");
	is_int(sr_store_open("az://acct/ckpt?colour=red", &bad, err), -1, "unknown option");
	is_str(err, "open store az://acct/ckpt?colour=red: option colour: unknown (known: endpoint, "
	    "block_size, concurrency, checksum, attempts, stall_timeout)", "unknown option: message");
	is_int(sr_store_open("az://acct/ckpt?endpoint=ftp://x", &bad, err), -1, "bad endpoint");
	is_str(err, "open store az://acct/ckpt?endpoint=ftp://x: endpoint \"ftp://x\" is not "
	    "http(s)://host[:port][/path]", "bad endpoint: message");
	is_int(sr_store_url_check("az://acct/ckpt/a//b", err), -1, "an empty prefix segment");
	is_str(err, "open store az://acct/ckpt/a//b: the prefix has an empty segment",
	    "... message");
	is_int(sr_store_url_check("az://acct/ckpt/run 1?endpoint=https://acct.blob.core."
	    "chinacloudapi.cn&block_size=64MiB&concurrency=16&checksum=crc64&attempts=3&"
	    "stall_timeout=10", err), 0, "a URL with every option checks offline");
}

static void
uncommitted(const char *prefix, char *out, size_t len)
{
	au_uncommitted(container, prefix, out, len);
}

static void
say_cb(void *arg, const char *msg)
{
	snprintf(arg, SR_ERRMAX, "%s", msg);
}

/* Unfinished block uploads (saves whose process died) dropped by prefix
 * and age, as gc does for a job's packs; committed blobs never touched. */
static void
test_stale_uploads(struct sr_store *st, const char *ep)
{
	char err[SR_ERRMAX], got[8192], *elsewhere;
	struct sr_object_info info;
	int n, rc;

	is_int(su_dying_upload(url, "job/packs/0000000001-aa.tar"), 0,
	    "a save dies mid-upload, its blocks left uncommitted");
	is_int(su_dying_upload(url, "gcjob/packs/0000000004-dd.tar"), 0,
	    "a save of gcjob dies mid-upload");
	is_int(su_dying_upload(url, "job/other"), 0, "an upload of job/other dies");
	is_int(su_dying_upload(url, "jobs/packs/x"), 0, "an upload of jobs/packs/x dies");
	/* one block in flight: 5 of its 6 have landed when it dies */
	elsewhere = sr_asprintf("az://%s/%s/elsewhere/?endpoint=%s&block_size=1MiB&concurrency=1",
	    su_env("SPOTRUN_TEST_AZ_ACCOUNT"), container, ep);
	is_int(su_dying_upload(elsewhere, "job/packs/0000000003-cc.tar"), 0,
	    "an upload outside the store dies");
	is_int(sr_store_put(st, "job/packs/0000000009-zz.tar", "pack", 4, SR_PUT_OVERWRITE, NULL,
	    NULL, err), 0, "a committed pack");
	uncommitted("run 1/job", got, sizeof got);
	is_str(got, "run 1/job/other\trun 1/job/packs/0000000001-aa.tar\trun 1/jobs/packs/x",
	    "the CLI lists the three uncommitted blobs under run 1/job");

	n = -1;
	is_int(sr_store_abort_stale_uploads(st, "job/packs/", sr_now() - 3600, &n, err), 0,
	    "abort uploads started over an hour ago");
	is_int(n, 0, "... none is that old");
	rc = sr_store_abort_stale_uploads(st, "job/packs/", sr_now() + 60, &n, err);
	is_int(rc, 0, "abort uploads under job/packs/ started before a minute from now");
	if (rc != 0)
		printf("# %s\n", err);
	is_int(n, 1, "... one aborted");
	uncommitted("run 1/job", got, sizeof got);
	is_str(got, "run 1/job/other\trun 1/jobs/packs/x",
	    "... exactly the one under the prefix; the other keys keep theirs");
	uncommitted("elsewhere/", got, sizeof got);
	is_str(got, "elsewhere/job/packs/0000000003-cc.tar", "... as does the key outside the store");
	is_int(sr_store_head(st, "job/packs/0000000009-zz.tar", &info, err), 0,
	    "the committed pack stays");
	is_int(sr_store_abort_stale_uploads(st, "job/packs/", sr_now() + 60, &n, err), 0,
	    "abort again");
	is_int(n, 0, "... nothing left to abort");
	is_int(sr_store_abort_stale_uploads(st, "/job", sr_now(), &n, err), SR_STORE_ERROR,
	    "a bad prefix is refused");
	is_str(err, "abort uploads /job: invalid prefix: starts with '/' (keys are relative to "
	    "the store)", "... message");

	/* gc: only the job's packs, only uploads older than the age given */
	rc = sr_ckpt_gc(st, "gcjob", 1, NULL, err);
	is_int(rc, 0, "gc gcjob");
	if (rc != 0)
		printf("# %s\n", err);
	uncommitted("run 1/gcjob/", got, sizeof got);
	is_str(got, "run 1/gcjob/packs/0000000004-dd.tar",
	    "gc: an upload younger than a day is left alone (a save in flight)");
	{
		char said[SR_ERRMAX] = "";
		struct sr_ckpt_opts o = { .log = say_cb, .log_arg = said };
		uint64_t freed = 1;

		rc = sr_ckpt_gc_log(st, &o, "gcjob", 1, sr_now() + 60, &freed, err);
		is_int(rc, 0, "gc gcjob, aborting uploads started before a minute from now");
		if (rc != 0)
			printf("# %s\n", err);
		is_str(said, "gc gcjob: aborted 1 unfinished pack upload left by saves that never "
		    "finished", "gc: says how many it aborted");
		ok(freed == 0, "gc: no object deleted");
	}
	uncommitted("run 1/gcjob/", got, sizeof got);
	is_str(got, "", "gc: the pack's blocks are gone");
	free(elsewhere);
}

/* A restore reads each chunk in pieces that end at the pack's multiples of
 * block_size, concurrency pieces at a time (sr_store_read_plan): 16 MiB
 * chunks of noise in 1 MiB pieces. Byte-exact with 4 streams and with 1. */
static void
test_restore_pieces(struct sr_store *st, const char *ep)
{
	char *top = tu_tmpdir("t-store-az"), *src = tu_path(top, "src"), *dst = tu_path(top, "dst");
	char err[SR_ERRMAX] = "", why[512] = "", *u1;
	struct sr_ckpt_opts o = { .job = "pieces" };
	struct sr_ckpt_stats s, r;
	struct sr_store *one;
	int streams;
	uint64_t piece;

	sr_store_read_plan(st, &streams, &piece);
	ok(streams == 4 && piece == MiB, "read plan: 4 streams of 1 MiB (%d of %llu)", streams,
	    (unsigned long long)piece);
	tu_mkdir(top, "src", 0755);
	tu_write_noise(src, "big", 20 * MiB + 12345, 7);
	tu_write(src, "small", "twelve bytes", 12);
	tu_write(src, "empty", "", 0);
	if (!ok(sr_ckpt_save(st, &o, src, 3, &s, err) == 0, "pieces: save"))
		tap_diag("%s", err);
	if (!ok(sr_ckpt_restore(st, &o, dst, &r, err) == 0, "pieces: restore, 4 streams of 1 MiB"))
		tap_diag("%s", err);
	ok(tu_tree_cmp(src, dst, "", why, sizeof why) == 0, "pieces: byte-exact %s", why);
	u1 = sr_asprintf("az://%s/%s/run 1/?endpoint=%s&block_size=1MiB&concurrency=1",
	    su_env("SPOTRUN_TEST_AZ_ACCOUNT"), container, ep);
	one = su_store_open(u1, 0);
	tu_rmtree(dst);
	if (!ok(sr_ckpt_restore(one, &o, dst, &r, err) == 0, "pieces: restore, 1 stream"))
		tap_diag("%s", err);
	ok(tu_tree_cmp(src, dst, "", why, sizeof why) == 0, "pieces: byte-exact %s", why);
	sr_store_close(one);
	free(u1);
	tu_rmtree(top);
	free(top);
	free(src);
	free(dst);
}

/* The OOM trials through az://. Each run writes bytes of its own (its
 * fill), so that what a failed one leaves can be told from what it was to
 * write. */
struct store_trial {
	const char *url, *key, *prefix;
	int upload;			/* a block upload, not one put */
	size_t len;
	unsigned char fill, last;	/* this run's bytes; the object's (0: none) */
	unsigned char *body;
	void *got;
	size_t got_len;
	int listed, wrote;
	char listed_key[64];
	uint64_t listed_size;
};

static int
listed_cb(const struct sr_object_info *info, void *arg)
{
	struct store_trial *t = arg;

	if (t->listed++ == 0) {
		snprintf(t->listed_key, sizeof t->listed_key, "%s", info->key);
		t->listed_size = info->size;
	}
	return 0;
}

/* Whether buf holds len bytes of b. */
static int
all_of(const void *buf, size_t len, size_t want, unsigned char b)
{
	const unsigned char *p = buf;
	size_t i;

	if (len != want)
		return 0;
	for (i = 0; i < len && p[i] == b; i++)
		;
	return i == len;
}

static int
store_op(void *arg, char *err)
{
	struct store_trial *t = arg;
	struct sr_store *st;
	struct sr_upload *up;
	int rc;

	t->fill = (unsigned char)(t->fill % 250 + 1);
	memset(t->body, t->fill, t->len);
	t->got = NULL;
	t->listed = t->wrote = 0;
	if (sr_store_open(t->url, &st, err) == -1)
		return -1;
	if (!t->upload)
		rc = sr_store_put(st, t->key, t->body, t->len, SR_PUT_OVERWRITE, NULL, NULL, err);
	else if ((up = sr_store_upload_begin(st, t->key, err)) == NULL)
		rc = -1;
	else if (sr_upload_write(up, t->body, t->len / 2, err) == -1 ||
	    sr_upload_write(up, t->body + t->len / 2, t->len - t->len / 2, err) == -1) {
		sr_upload_abort(up);
		rc = -1;
	} else
		rc = sr_upload_commit(up, err);
	t->wrote = rc == 0;
	if (rc == 0)
		rc = sr_store_get(st, t->key, 8 * MiB, &t->got, &t->got_len, NULL, err);
	if (rc == 0)
		rc = sr_store_list(st, t->prefix, listed_cb, t, err);
	sr_store_close(st);
	return rc == 0 ? 0 : -1;
}

/* The result exact after 0; and after any outcome the object whole: this
 * run's bytes when it was written, else the last run's or this one's (a
 * request that landed, its reply lost to the failure). Looked at through
 * a store of the check's own, so that no cache outlives it. */
static int
store_check(void *arg, int rc, char *why)
{
	struct store_trial *t = arg;
	struct sr_store *st;
	char err[SR_ERRMAX];
	void *buf = NULL;
	size_t n = 0;
	int r, good;

	if (rc == 0 && !(all_of(t->got, t->got_len, t->len, t->fill) && t->listed == 1 &&
	    strcmp(t->listed_key, t->key) == 0 && t->listed_size == t->len)) {
		snprintf(why, SR_ERRMAX, "read %zu bytes (fill %d), listed %d: '%s'", t->got_len,
		    t->fill, t->listed, t->listed_key);
		return 0;
	}
	if (sr_store_open(t->url, &st, err) == -1)
		return snprintf(why, SR_ERRMAX, "%s", err), 0;
	r = sr_store_get(st, t->key, 8 * MiB, &buf, &n, NULL, err);
	sr_store_close(st);
	if (r == SR_STORE_NOTFOUND)
		good = t->last == 0 && !t->wrote;
	else if (r != 0)
		good = 0;
	else if (all_of(buf, n, t->len, t->fill))
		good = 1, t->last = t->fill;
	else
		good = !t->wrote && t->last != 0 && all_of(buf, n, t->len, t->last);
	if (!good)
		snprintf(why, SR_ERRMAX, "the object after the run: rc %d, %zu bytes, the first %d "
		    "(this run's %d, the last %d)", r, n, n > 0 ? ((unsigned char *)buf)[0] : -1,
		    t->fill, t->last);
	free(buf);
	return good;
}

static void
store_reset(void *arg)
{
	struct store_trial *t = arg;

	free(t->got);
	t->got = NULL;
}

/* gc's look for stale uploads, on a store of its own opened by the run:
 * both listings (committed, then with uncommitted blobs), none started
 * before older_than. */
struct stale_trial {
	const char *url;
	int aborted;
};

static int
stale_op(void *arg, char *err)
{
	struct stale_trial *t = arg;
	struct sr_store *st;
	int rc;

	t->aborted = -1;
	if (sr_store_open(t->url, &st, err) == -1)
		return -1;
	rc = sr_store_abort_stale_uploads(st, "job", sr_now() - 3600, &t->aborted, err);
	sr_store_close(st);
	return rc;
}

static int
stale_check(void *arg, int rc, char *why)
{
	struct stale_trial *t = arg;

	if (rc != 0 || t->aborted == 0)
		return 1;
	snprintf(why, SR_ERRMAX, "%d aborted", t->aborted);
	return 0;
}

static void
test_oom(const char *ep)
{
	char *u = sr_asprintf("az://%s/%s/run 1/?endpoint=%s&block_size=1MiB&concurrency=2",
	    su_env("SPOTRUN_TEST_AZ_ACCOUNT"), container, ep);
	struct store_trial t = { .url = u, .key = "oom/put/k", .prefix = "oom/put/", .len = 1000 };
	struct stale_trial ts = { .url = u };

	t.body = sr_malloc(5 * MiB / 2);
	oom_trial("open, put, get, list and close on az://", OOM_OURS, store_op, store_check,
	    store_reset, &t);
	t = (struct store_trial){ .url = u, .key = "oom/up/big", .prefix = "oom/up/", .upload = 1,
		.len = 5 * MiB / 2, .body = t.body };
	oom_trial("an upload of three blocks on az://", OOM_OURS, store_op, store_check,
	    store_reset, &t);
	oom_trial("abort_stale_uploads on az:// (none old enough)", OOM_OURS, stale_op,
	    stale_check, NULL, &ts);
	free(t.body);
	free(u);
}

int
main(void)
{
	struct sr_store *st;
	const char *ep;

	au_require();
	ep = su_env("SPOTRUN_TEST_AZ_ENDPOINT");
	au_container_new(container, sizeof container, "t-store-az");
	snprintf(url, sizeof url, "az://%s/%s/run 1/?endpoint=%s&block_size=1MiB&concurrency=4",
	    su_env("SPOTRUN_TEST_AZ_ACCOUNT"), container, ep);
	st = su_store_open(url, 0);
	ok(st != NULL, "open %s", url);
	if (st == NULL)
		return tap_done();
	test_objects(st);
	su_check_conditional(st);
	test_ranges_and_blocks(st, ep);
	test_many(st);
	test_stale_uploads(st, ep);
	test_errors(ep);
	test_restore_pieces(st, ep);
	test_oom(ep);
	sr_store_close(st);
	au_container_rm(container);
	return tap_done();
}
