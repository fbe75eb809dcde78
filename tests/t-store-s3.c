/*
 * t-store-s3.c: the s3:// store (store.h) against a real S3 server, Ceph's
 * RADOS Gateway started by build-aux/test-all (tests/rgw.sh): every
 * operation, keys with spaces, UTF-8 and '+', create-only and
 * compare-and-swap with 16 racing threads, multipart uploads of several
 * parts (and their abort), pagination over more than 1000 keys, ranged
 * reads at boundaries, unfinished multipart uploads (left by a save whose
 * process died, or by the aws CLI) aborted by age and prefix over more than
 * one page, as gc does for a job's packs (a bucket policy that denies the
 * listing makes a gc warning, not a failure), and the errors a user meets:
 * a wrong secret, a missing bucket, a bad option; a restore whose chunks
 * come back in ranged reads of part_size, concurrency of them at a time,
 * byte-exact. Skips without a server unless
 * SPOTRUN_TEST_REQUIRE_S3=1, which makes that a failure.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "ckpt.h"
#include "store.h"
#include "tap.h"
#include "ckpt-util.h"
#include "s3-util.h"
#include "oom.h"
#include "oom-trial.h"
#include "util.h"

#define MiB (1024 * 1024)

static char bucket[64];
static char url[1024];

/* The keys of the bucket's unfinished multipart uploads under prefix (a
 * full key prefix), sorted, tab-separated, into out. */
static void
open_uploads(const char *prefix, char *out, size_t len)
{
	if (su_aws_out(out, len, "s3api list-multipart-uploads --bucket %s --prefix '%s' "
	    "--query 'sort(Uploads[].Key || `[]`)' --output text", bucket, prefix) != 0)
		snprintf(out, len, "(aws s3api list-multipart-uploads failed)");
}

/* Start a multipart upload of each key (full keys), and of many more
 * named MANYnnnn+x y, and leave them open: botocore (the aws CLI's own
 * library) in 32 threads, as the CLI takes 0.3 s an upload. */
static void
start_uploads(const char *many, int nmany, const char *const *keys, int nkeys)
{
	char *cmd = sr_asprintf("python3 -c 'import botocore.session, os, sys, "
	    "concurrent.futures as cf\n"
	    "c = botocore.session.get_session().create_client(\"s3\", "
	    "endpoint_url=os.environ[\"SPOTRUN_TEST_S3_ENDPOINT\"], region_name=\"us-east-1\")\n"
	    "keys = sys.argv[4:] + [sys.argv[2] + \"%%04d+x y\" %% i\n"
	    "    for i in range(int(sys.argv[3]))]\n"
	    "def one(k): c.create_multipart_upload(Bucket=sys.argv[1], Key=k)\n"
	    "with cf.ThreadPoolExecutor(32) as ex: list(ex.map(one, keys))' %s '%s' %d",
	    bucket, many, nmany), *c2;
	int i;

	for (i = 0; i < nkeys; i++) {
		c2 = sr_asprintf("%s '%s'", cmd, keys[i]);
		free(cmd);
		cmd = c2;
	}
	fflush(stdout);
	if (system(cmd) != 0)
		sr_fatal("starting %d multipart uploads with botocore failed", nmany + nkeys);
	free(cmd);
}

static void
say_cb(void *arg, const char *msg)
{
	snprintf(arg, SR_ERRMAX, "%s", msg);
}

/* Unfinished multipart uploads: aborted by prefix and age, across pages. */
static void
test_stale_uploads(struct sr_store *st)
{
	static const char *const keys[] = { "run 1/job/packs/0000000002-bb.tar",
		"run 1/job/other", "run 1/jobs/packs/x", "elsewhere/job/packs/0000000003-cc.tar",
		"run 1/gcjob/manifests/not-a-pack" };
	char err[SR_ERRMAX], got[8192];
	int n, rc;

	is_int(su_dying_upload(url, "job/packs/0000000001-aa.tar"), 0,
	    "a save dies mid-upload, its multipart upload left open");
	is_int(su_dying_upload(url, "gcjob/packs/0000000004-dd.tar"), 0,
	    "a save of gcjob dies mid-upload");
	start_uploads("run 1/many/", 1001, keys, (int)SR_ARRAY_LEN(keys));

	n = -1;
	is_int(sr_store_abort_stale_uploads(st, "job/packs/", sr_now() - 3600, &n, err), 0,
	    "abort uploads started over an hour ago");
	is_int(n, 0, "... none is that old");
	rc = sr_store_abort_stale_uploads(st, "job/packs/", sr_now() + 60, &n, err);
	is_int(rc, 0, "abort uploads under job/packs/ started before a minute from now");
	if (rc != 0)
		printf("# %s\n", err);
	is_int(n, 2, "... both aborted (so the first call left them open)");
	open_uploads("run 1/job", got, sizeof got);
	is_str(got, "run 1/job/other\trun 1/jobs/packs/x",
	    "... exactly the two under the prefix; the other keys keep theirs");
	open_uploads("elsewhere/", got, sizeof got);
	is_str(got, "elsewhere/job/packs/0000000003-cc.tar",
	    "... as does the key outside the store");
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
	open_uploads("run 1/gcjob/", got, sizeof got);
	is_str(got, "run 1/gcjob/manifests/not-a-pack\trun 1/gcjob/packs/0000000004-dd.tar",
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
	open_uploads("run 1/gcjob/", got, sizeof got);
	is_str(got, "run 1/gcjob/manifests/not-a-pack", "gc: the pack's upload is gone, the "
	    "other key's stays");
	is_int(sr_ckpt_gc_uploads(st, "gcjob", sr_now() + 60, &n, err), 0, "gc uploads again");
	is_int(n, 0, "... none left");
	is_int(sr_ckpt_gc_uploads(st, "gc//job", sr_now(), &n, err), -1,
	    "gc uploads: bad job name");
	is_str(err, "job name \"gc//job\": segments are letters, digits, '.', '_' and '-', "
	    "starting with a letter or digit", "... message");

	/* more than one page: RGW, like S3, lists at most 1000 uploads a page */
	rc = sr_store_abort_stale_uploads(st, "many/", sr_now() + 60, &n, err);
	is_int(rc, 0, "abort 1001 uploads");
	if (rc != 0)
		printf("# %s\n", err);
	is_int(n, 1001, "... all aborted, over two pages");
	/* the CLI reads every page: one line an upload, "None" when there is none */
	su_aws_out(got, sizeof got, "s3api list-multipart-uploads --bucket %s --prefix "
	    "'run 1/many/' --query 'Uploads[].[UploadId]' --output text | grep -vc '^None$'",
	    bucket);
	is_str(got, "0", "... none open");

	/* a bucket policy that denies listing uploads: gc warns and succeeds */
	is_int(su_aws("s3api put-bucket-policy --bucket %s --policy '{\"Version\": "
	    "\"2012-10-17\", \"Statement\": [{\"Effect\": \"Deny\", \"Principal\": \"*\", "
	    "\"Action\": \"s3:ListBucketMultipartUploads\", \"Resource\": "
	    "\"arn:aws:s3:::%s\"}]}'", bucket, bucket), 0,
	    "deny listing uploads by a bucket policy");
	is_int(sr_store_abort_stale_uploads(st, "job/", sr_now() + 60, &n, err), SR_STORE_ERROR,
	    "denied: abort uploads fails");
	{
		char said[SR_ERRMAX] = "", *want;
		struct sr_ckpt_opts o = { .log = say_cb, .log_arg = said };
		const char *denied = "access denied (AccessDenied) for the credentials from env: "
		    "the policy must allow s3:GetObject, s3:PutObject, s3:ListBucket, "
		    "s3:DeleteObject, s3:AbortMultipartUpload and s3:ListBucketMultipartUploads "
		    "on s3://";

		want = sr_asprintf("list uploads job/: %s%s", denied, bucket);
		is_str(err, want, "... message");
		free(want);
		rc = sr_ckpt_gc_log(st, &o, "gcjob", 1, sr_now() + 60, NULL, err);
		is_int(rc, 0, "denied: gc still succeeds");
		want = sr_asprintf("warning: gc gcjob: list uploads gcjob/packs/: %s%s (aborted 0 "
		    "unfinished pack uploads; the next gc tries again)", denied, bucket);
		is_str(said, want, "denied: gc warns");
		free(want);
	}
	is_int(su_aws("s3api delete-bucket-policy --bucket %s", bucket), 0,
	    "drop the bucket policy");
}

/* A restore reads each chunk in pieces that end at the pack's multiples of
 * part_size, concurrency pieces at a time (sr_store_read_plan): 16 MiB
 * chunks of noise, stored raw at offsets that tar headers leave unaligned,
 * are 4 or 5 pieces of up to 5 MiB, the file's last chunk 2 or 3; a small
 * file one or two. Byte-exact with 4 streams and with 1; a missing pack
 * still fails the restore with its name. */
static void
test_restore_pieces(struct sr_store *st, const char *ep)
{
	char *top = tu_tmpdir("t-store-s3"), *src = tu_path(top, "src"), *dst = tu_path(top, "dst");
	char err[SR_ERRMAX] = "", why[512] = "", *u1;
	struct sr_ckpt_opts o = { .job = "pieces", .chunk_size = 16 * MiB };
	struct sr_ckpt_stats s, r;
	struct sr_store *one;
	struct sr_manifest m;
	int i;

	tu_mkdir(top, "src", 0755);
	tu_write_noise(src, "big", 40 * MiB + 12345, 7);
	tu_write(src, "small", "twelve bytes", 12);
	tu_write(src, "empty", "", 0);
	if (!ok(sr_ckpt_save(st, &o, src, 3, &s, err) == 0, "pieces: save"))
		tap_diag("%s", err);
	if (sr_catalog_load(st, "pieces", s.seq, &m, err) == 0) {
		int multi = 0;
		for (i = 0; i < (int)m.nentries; i++)
			for (size_t k = 0; k < m.entries[i].nchunks; k++)
				multi += m.entries[i].chunks[k].clen > 5 * MiB;
		is_int(multi, 3, "pieces: three chunks longer than a part (read in pieces)");
		sr_manifest_free(&m);
	} else
		ok(0, "pieces: load the manifest: %s", err);
	if (!ok(sr_ckpt_restore(st, &o, dst, &r, err) == 0, "pieces: restore, 4 streams of 5 MiB"))
		tap_diag("%s", err);
	ok(tu_tree_cmp(src, dst, "", why, sizeof why) == 0, "pieces: byte-exact %s", why);
	u1 = sr_asprintf("s3://%s/run 1/?endpoint=%s&part_size=5MiB&concurrency=1", bucket, ep);
	one = su_store_open(u1, 0);
	tu_rmtree(dst);
	if (!ok(sr_ckpt_restore(one, &o, dst, &r, err) == 0, "pieces: restore, 1 stream"))
		tap_diag("%s", err);
	ok(tu_tree_cmp(src, dst, "", why, sizeof why) == 0, "pieces: byte-exact %s", why);
	/* every pack gone: each piece fails; the first failure is the message */
	{
		char packs[4096] = "";
		su_aws_out(packs, sizeof packs, "s3 rm --recursive 's3://%s/run 1/pieces/packs/'",
		    bucket);
	}
	is_int(sr_ckpt_restore(st, &o, dst, &r, err), -1, "pieces: restore without the pack fails");
	ok(strstr(err, "restore pieces: checkpoint 0: chunk ") != NULL &&
	    strstr(err, ": pack pieces/packs/0000000000-") != NULL && strstr(err, " is missing") != NULL,
	    "pieces: ... naming the missing pack: %s", err);
	ok(tu_tree_cmp(src, dst, "", why, sizeof why) == 0, "pieces: the last restore stays");
	sr_store_close(one);
	free(u1);
	tu_rmtree(top);
	free(top);
	free(src);
	free(dst);
}

/* LATEST as doc/format.md says on S3 too: one too large to be a pointer is
 * garbage, not an error (the get stops at 4096 bytes, a HEAD gives the
 * etag), as is one that is no number; one without its newline is read as
 * what it says. Each time the save warns with format.md's exact words,
 * naming the key, and its CAS from the etag it read replaces LATEST. */
static void
latest_case(struct sr_store *st, const char *job, const char *text, size_t tlen,
    uint64_t want_seq, const char *want_warning)
{
	char *top = tu_tmpdir("t-store-s3"), *src = tu_path(top, "src");
	char *key = sr_asprintf("%s/LATEST", job), want_latest[32];
	char err[SR_ERRMAX] = "";
	struct sr_ckpt_opts o = { .job = job, .log = tu_log_fn };
	struct sr_ckpt_stats s;
	struct tu_log lg = { 0 };
	void *buf = NULL;
	size_t len = 0;

	o.log_arg = &lg;
	tu_mkdir(top, "src", 0755);
	tu_write(src, "f", "x", 1);
	is_int(sr_store_put(st, key, text, tlen, SR_PUT_OVERWRITE, NULL, NULL, err), 0,
	    "%s: put a LATEST of %zu bytes %s", job, tlen, err);
	if (!ok(sr_ckpt_save(st, &o, src, 1, &s, err) == 0 && s.seq == want_seq,
	    "%s: a save commits checkpoint %" PRIu64, job, want_seq))
		tap_diag("%s", err);
	if (!ok(tu_log_has(&lg, want_warning), "%s: the save warns: %s", job, want_warning))
		tap_diag("first line: %s", lg.n > 0 ? lg.lines[0] : "(none)");
	snprintf(want_latest, sizeof want_latest, "%" PRIu64 "\n", want_seq);
	ok(sr_store_get(st, key, 64, &buf, &len, NULL, err) == 0 && len == strlen(want_latest) &&
	    memcmp(buf, want_latest, len) == 0, "%s: and replaced LATEST by compare-and-swap", job);
	free(buf);
	tu_log_clear(&lg);
	free(lg.lines);
	free(key);
	tu_rmtree(top);
	free(top);
	free(src);
}

static void
test_latest_forms(struct sr_store *st)
{
	static const char tail[] = "every manifest counts as committed and the newest is the "
	    "latest; the next save rewrites LATEST";
	char *big = sr_malloc(5000), want[512];

	memset(big, '7', 5000);
	snprintf(want, sizeof want, "warning: oversize/LATEST is not a checkpoint number (it holds "
	    "5000 bytes, more than the 4096 a pointer may have): %s", tail);
	latest_case(st, "oversize", big, 5000, 0, want);
	free(big);
	snprintf(want, sizeof want, "warning: garbage/LATEST is not a checkpoint number (it holds "
	    "\"garbage\\n\"): %s", tail);
	latest_case(st, "garbage", "garbage\n", 8, 0, want);
	/* read as 6: the save's seq is one above it, its parent none (no
	 * manifest 6 is there: the chain then ends, as format.md says) */
	latest_case(st, "nonl", "6", 1, 7, "warning: nonl/LATEST holds 6 without the newline that "
	    "ends it: read as 6; the next save rewrites LATEST");
}

/* su_check_acks over HTTPS (the gateway's TLS port, when test-all started
 * it with one): the ACK goes on the TCP connection under TLS. */
static void
test_tls_acks(const char *big, char *back)
{
	const char *tls = su_env("SPOTRUN_TEST_S3_TLS_ENDPOINT");
	struct sr_store *st;
	char *u;
	int i;

	if (tls[0] == '\0') {
		for (i = 0; i < 8; i++)
			ok(strcmp(su_env("SPOTRUN_TEST_REQUIRE_S3"), "1") != 0,
			    "https: # SKIP no TLS endpoint (tests/rgw.sh start --tls)");
		return;
	}
	setenv("AWS_CA_BUNDLE", su_env("SPOTRUN_TEST_S3_CA"), 1);
	u = sr_asprintf("s3://%s/run 1/?endpoint=%s", bucket, tls);
	st = su_store_open(u, 0);
	ok(st != NULL, "https: open %s", u);
	if (st != NULL)
		su_check_acks(st, big, back, "https");
	sr_store_close(st);
	unsetenv("AWS_CA_BUNDLE");
	free(u);
}

/* ---- out of memory ---- */

/* A put, a get, a list, a streamed upload of a small object (one PUT at
 * the commit) and an open of the store through s3:// with spotrun's
 * allocations failing (OOM_OURS: curl's own do not): each exactly right,
 * or -1 with an out-of-memory message after at most one request (never
 * retried). A put's etag is the MD5 the server computed of what it got
 * (Content-MD5 checked): the body exactly. S3 makes each PUT atomic, so no
 * trial can leave part of an object: the objects are read back once, after
 * the trials (a GET in every trial's check would put curl's buffers, whose
 * size moves from one reply to the next, inside the leak check). */
#define OOM_BODY "written under OOM"

enum store_op { OP_PUT, OP_GET, OP_LIST, OP_UPLOAD, OP_OPEN };

struct store_trial {
	struct sr_store *st;
	enum store_op op;
	long requests;		/* sent by the last op */
	char etag[SR_ETAG_MAX];
	void *buf;
	size_t len;
	char keys[512];		/* what the list gave, ';'-separated */
};

static int
list_key(const struct sr_object_info *info, void *arg)
{
	char *keys = arg;
	size_t n = strlen(keys);

	snprintf(keys + n, 512 - n, "%s;", info->key);
	return 0;
}

static int
store_op(void *arg, char *err)
{
	struct store_trial *t = arg;
	struct sr_store_stats a, b;
	int rc = -1;

	sr_store_stats(t->st, &a);
	t->etag[0] = t->keys[0] = '\0';
	t->buf = NULL;
	switch (t->op) {
	case OP_PUT:
		rc = sr_store_put(t->st, "oom/put", OOM_BODY, strlen(OOM_BODY), SR_PUT_OVERWRITE,
		    NULL, t->etag, err);
		break;
	case OP_GET:
		rc = sr_store_get(t->st, "oom/put", 1024, &t->buf, &t->len, t->etag, err);
		break;
	case OP_LIST:
		rc = sr_store_list(t->st, "oom/", list_key, t->keys, err);
		break;
	case OP_UPLOAD: {
		struct sr_upload *up = sr_store_upload_begin(t->st, "oom/up", err);

		if (up != NULL && sr_upload_write(up, OOM_BODY, strlen(OOM_BODY), err) == -1) {
			sr_upload_abort(up);
			up = NULL;
		}
		rc = up != NULL ? sr_upload_commit(up, err) : -1;
		break;
	}
	case OP_OPEN: {
		struct sr_store *o;

		if ((rc = sr_store_open(url, &o, err)) == 0)
			sr_store_close(o);
		break;
	}
	}
	sr_store_stats(t->st, &b);
	t->requests = b.requests - a.requests;
	return rc == 0 ? 0 : -1;
}

/* The object of a put or an upload: whole. */
static int
object_whole(struct store_trial *t, char *why)
{
	const char *key = t->op == OP_UPLOAD ? "oom/up" : "oom/put";
	char err[SR_ERRMAX];
	void *buf = NULL;
	size_t n = 0;
	int good;

	good = sr_store_get(t->st, key, 1024, &buf, &n, NULL, err) == 0 &&
	    n == strlen(OOM_BODY) && memcmp(buf, OOM_BODY, n) == 0;
	if (!good)
		snprintf(why, SR_ERRMAX, "%s is not whole: %s", key, err);
	free(buf);
	return good;
}

/* After 0: the result exactly right; after -1: one request at most (an
 * out-of-memory is never retried). */
static int
store_check(void *arg, int rc, char *why)
{
	struct store_trial *t = arg;
	int good = 1;

	if (rc != 0) {
		if (t->requests > 1) {
			snprintf(why, SR_ERRMAX, "%ld requests: retried after out-of-memory",
			    t->requests);
			return 0;
		}
		return 1;
	}
	switch (t->op) {
	case OP_PUT:
		/* MD5("written under OOM") */
		good = strcmp(t->etag, "38b7f427bddbd4b1edd4f4725211493d") == 0;
		break;
	case OP_GET:
		good = t->len == strlen(OOM_BODY) && memcmp(t->buf, OOM_BODY, t->len) == 0;
		free(t->buf);
		t->buf = NULL;
		break;
	case OP_LIST:
		good = strcmp(t->keys, "oom/a;oom/b c;oom/put;") == 0;
		break;
	case OP_UPLOAD:
	case OP_OPEN:
		break;		/* read back after the trials; opened and closed */
	}
	if (!good)
		snprintf(why, SR_ERRMAX, "etag '%s', keys '%s'", t->etag, t->keys);
	return good;
}

static void
test_oom(struct sr_store *st)
{
	static const char *const names[] = { "sr_store_put through s3://",
		"sr_store_get through s3://", "sr_store_list through s3://",
		"a streamed upload of a small object through s3://", "sr_store_open of s3://" };
	static struct store_trial t;
	char err[SR_ERRMAX] = "";
	int i;

	is_int(sr_store_put(st, "oom/a", "1", 1, SR_PUT_OVERWRITE, NULL, NULL, err) |
	    sr_store_put(st, "oom/b c", "2", 1, SR_PUT_OVERWRITE, NULL, NULL, err), 0,
	    "OOM trials: the keys to list put (%s)", err);
	for (i = OP_PUT; i <= OP_OPEN; i++) {
		struct oom_trial sc = { names[i], OOM_OURS, store_op, store_check, NULL, &t };

		char why[SR_ERRMAX] = "";

		memset(&t, 0, sizeof t);
		t.st = st;
		t.op = (enum store_op)i;
		oom_trials(&sc);
		if ((i == OP_PUT || i == OP_UPLOAD) && !oom_usable())
			tap_skip("AddressSanitizer owns malloc: no trials, no object to read back");
		else if (i == OP_PUT || i == OP_UPLOAD)
			ok(object_whole(&t, why), "%s: the object whole after the trials%s%s",
			    names[i], why[0] != '\0' ? ": " : "", why);
	}
}

int
main(void)
{
	struct sr_store *st, *bad;
	struct sr_object_info info;
	struct sr_store_stats stats;
	struct sr_upload *up;
	char err[SR_ERRMAX], etag[SR_ETAG_MAX], *u;
	const char *ep;
	void *buf;
	size_t len;
	char *big, *back;
	int n, i;

	su_require();
	ep = su_env("SPOTRUN_TEST_S3_ENDPOINT");
	su_bucket_new(bucket, sizeof bucket, "t-store-s3");
	snprintf(url, sizeof url, "s3://%s/run 1/?endpoint=%s&part_size=5MiB&concurrency=4",
	    bucket, ep);
	st = su_store_open(url, 0);
	ok(st != NULL, "open %s", url);
	if (st == NULL)
		return tap_done();

	/* put, get, head, keys that need encoding */
	{
		static const char *const keys[] = { "plain", "with space/and+plus",
			"\xc3\xbc\xe2\x82\xac/x", "odd!'()*$&=;:@,?#[]~", "a%20b", NULL };

		su_check_keys(st, keys);
	}
	/* etag is the MD5 of a single PUT (S3's rule; RGW follows it) */
	is_int(sr_store_put(st, "md5", "abc", 3, SR_PUT_OVERWRITE, NULL, etag, err), 0, "put abc");
	is_str(etag, "900150983cd24fb0d6963f7d28e17f72", "etag is MD5(\"abc\"), unquoted");
	is_int(sr_store_head(st, "md5", &info, err), 0, "head");
	ok(info.size == 3, "head: size 3");
	is_str(info.etag, etag, "head: etag");
	ok(info.mtime > sr_now() - 600 && info.mtime < sr_now() + 600, "head: mtime is now-ish");

	test_oom(st);

	/* missing things, create-only and compare-and-swap */
	su_check_missing(st);
	su_check_conditional(st);

	/* ranged reads */
	big = sr_malloc(17 * MiB);
	back = sr_malloc(17 * MiB);
	su_fill(big, 17 * MiB, 7);
	su_check_ranges(st, big, back);
	su_check_acks(st, big, back, "http");
	test_tls_acks(big, back);

	/* multipart: 17 MiB in 5 MiB parts = 4 parts, 4 in flight */
	sr_store_stats(st, &stats);
	up = sr_store_upload_begin(st, "mp/pack 1.tar", err);
	ok(up != NULL, "upload begin");
	for (i = 0; i < 17; i++)
		if (sr_upload_write(up, big + (size_t)i * MiB, MiB, err) != 0)
			break;
	is_int(i, 17, "17 writes of 1 MiB");
	is_int(sr_upload_commit(up, err), 0, "commit multipart");
	su_check_all_acked(st, &stats, 6, "multipart");
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

	/* the other part checksums (the default is the signed SHA-256 above):
	 * Content-MD5, none, and the older spelling of none */
	{
		static const char *const opts[] = { "checksum=md5", "checksum=none", "md5=no" };
		size_t o;

		for (o = 0; o < SR_ARRAY_LEN(opts); o++) {
			char *u2 = sr_asprintf("s3://%s/run 1/?endpoint=%s&part_size=5MiB&%s", bucket,
			    ep, opts[o]);
			struct sr_store *st2 = su_store_open(u2, 0);

			up = sr_store_upload_begin(st2, "mp/other-sum", err);
			for (i = 0; i < 11; i++)
				sr_upload_write(up, big + (size_t)i * MiB, MiB, err);
			is_int(sr_upload_commit(up, err), 0, "%s: multipart commit %s", opts[o], err);
			memset(back, 0, 11 * MiB);
			is_int(sr_store_read_range(st, "mp/other-sum", 0, 11 * MiB, back, err), 0,
			    "%s: read it back", opts[o]);
			ok(memcmp(back, big, 11 * MiB) == 0, "%s: byte-exact", opts[o]);
			sr_store_close(st2);
			free(u2);
		}
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
	is_int(su_aws("s3api list-multipart-uploads --bucket %s --query 'length(Uploads || `[]`)' "
	    "--output text | grep -qx 0", bucket), 0, "aborted: no multipart upload left on the "
	    "server");

	/* a deadline or a cancel stops an upload; nothing becomes visible */
	su_check_limits(st, big, 5 * MiB);
	su_check_deferred(st, big, 2 * 5 * MiB + 7);

	/* more than one page */
	is_int(su_put_many(st, 1040), 0, "1040 puts");
	n = 0;
	is_int(sr_store_list(st, "many/", su_count_cb, &n, err), 0, "list 1040 keys");
	is_int(n, 1040, "all 1040 listed over two pages");
	n = 0;
	is_int(sr_store_list(st, "many/k0099", su_count_cb, &n, err), 0, "list a partial prefix");
	is_int(n, 10, "k00990..k00999");

	/* batch delete: 1040 keys (two requests), a missing one, odd names */
	{
		const char **keys = su_many_keys(1040, "never/written", "with space/and+plus",
		    "odd!'()*$&=;:@,?#[]~", (char *)NULL);

		is_int(sr_store_delete_many(st, keys, 1043, err), 0, "delete 1043 keys in a batch");
		n = 0;
		is_int(sr_store_list(st, "many/", su_count_cb, &n, err), 0, "list after the batch");
		is_int(n, 0, "all 1040 gone");
		is_int(sr_store_head(st, "odd!'()*$&=;:@,?#[]~", &info, err), SR_STORE_NOTFOUND,
		    "the key with XML characters is gone");
		is_int(sr_store_head(st, "plain", &info, err), 0, "a key not named stays");
		su_many_keys_free(keys, 1040);
	}

	test_stale_uploads(st);

	/* errors a user meets */
	setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-for-the-test", 1);
	bad = su_store_open(url, 0);
	ok(bad != NULL, "open with a wrong secret (nothing checked yet)");
	is_int(sr_store_put(bad, "x", "1", 1, SR_PUT_OVERWRITE, NULL, NULL, err), SR_STORE_ERROR,
	    "put with a wrong secret fails");
	is_str(err, "put x: the server rejects the signature (SignatureDoesNotMatch): the secret "
	    "key is wrong for access key in env; check AWS_SECRET_ACCESS_KEY or the profile",
	    "wrong secret: message");
	ok(strstr(err, "wrong-secret-for-the-test") == NULL, "the secret is not in the message");
	sr_store_close(bad);
	setenv("AWS_SECRET_ACCESS_KEY", su_env("SPOTRUN_TEST_S3_SECRET_KEY"), 1);

	u = sr_asprintf("s3://no-such-bucket-%d?endpoint=%s", (int)getpid(), ep);
	bad = su_store_open(u, 0);
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
	is_int(sr_store_open("s3://bucket/p?concurrency=0", &bad, err), -1, "no request in flight");
	is_str(err, "open store s3://bucket/p?concurrency=0: option concurrency: want 1 to 64 "
	    "requests in flight (an upload's parts, a restore's ranged reads)",
	    "concurrency 0: message");
	is_int(sr_store_open("s3://bucket/p?colour=red", &bad, err), -1, "unknown option");
	is_str(err, "open store s3://bucket/p?colour=red: option colour: unknown (known: endpoint, "
	    "region, profile, part_size, concurrency, checksum, md5, attempts, stall_timeout)",
	    "unknown option: message");
	is_int(sr_store_open("s3://bucket/p?checksum=crc32", &bad, err), -1, "unknown checksum");
	is_str(err, "open store s3://bucket/p?checksum=crc32: option checksum: want sha256, md5 "
	    "or none", "unknown checksum: message");
	is_int(sr_store_open("s3://bucket/p?endpoint=ftp://x", &bad, err), -1, "bad endpoint");
	is_str(err, "open store s3://bucket/p?endpoint=ftp://x: endpoint \"ftp://x\" is not "
	    "http(s)://host[:port]", "bad endpoint: message");

	test_restore_pieces(st, ep);
	test_latest_forms(st);

	sr_store_close(st);
	su_bucket_rm(bucket);
	free(big);
	free(back);
	return tap_done();
}
