/*
 * t-restore-hostile.c: a restore must refuse a hostile manifest with a
 * clear message and write nothing outside its staging directory. Crafted
 * manifests (and LATEST) are written straight into a file:// store; after
 * each restore attempt the target directory, a canary beside it and a
 * directory outside are checked to be exactly as they were.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tap.h"
#include "ckpt-util.h"

#include "catalog.h"
#include "ckpt.h"
#include "codec.h"
#include "jobkeys.h"
#include "manifest.h"
#include "store.h"
#include "util.h"

static char *top, *parent, *target, *outside;
static struct sr_store *st;
static struct tu_log lg;
static char chunk[512];		/* a valid chunk reference of "hello world\n" */
static char chunk_id[65];
static char chunk_check[33];		/* its XXH3-128, as the save recorded it */
static int etc_x_before;	/* /etc/x existed before the tests */

static int
restore_into(const char *job, const char *dir, struct sr_ckpt_stats *s, char *err)
{
	struct sr_ckpt_opts o;

	memset(&o, 0, sizeof o);
	o.job = job;
	o.threads = 2;
	o.log = tu_log_fn;
	o.log_arg = &lg;
	return sr_ckpt_restore(st, &o, dir, s, err);
}

static int
restore(const char *job, struct sr_ckpt_stats *s, char *err)
{
	return restore_into(job, target, s, err);
}

static char *
file_text(const char *dir, const char *name)
{
	char *p = tu_path(dir, name), *buf = NULL, err[SR_ERRMAX];

	if (sr_read_file(p, 4096, &buf, NULL, err) == -1)
		buf = sr_strdup("(missing)");
	free(p);
	return buf;
}

/* Everything around the target is as the setup left it. */
static int
untouched(void)
{
	char *a = tu_ls(top), *b = tu_ls(parent), *c = tu_ls(target), *d = tu_ls(outside);
	char *e = file_text(target, "old"), *f = file_text(parent, "canary");
	char *g = file_text(outside, "canary");
	int same = strcmp(a, "outside parent store") == 0 && strcmp(b, "canary target") == 0 &&
	    strcmp(c, "old") == 0 && strcmp(d, "canary") == 0 && strcmp(e, "old data") == 0 &&
	    strcmp(f, "canary") == 0 && strcmp(g, "canary") == 0 &&
	    (etc_x_before || access("/etc/x", F_OK) == -1);

	if (!same)
		printf("# top: %s | parent: %s | target: %s | outside: %s | old: %s | canaries: %s %s\n",
		    a, b, c, d, e, f, g);
	free(a);
	free(b);
	free(c);
	free(d);
	free(e);
	free(f);
	free(g);
	return same;
}

/* Write doc as manifest 0 of job hj; restore must fail with err
 * "restore hj: checkpoint 0: bad manifest ...: want" and touch nothing. */
static void
hostile_doc(const char *label, const char *doc, const char *want)
{
	char err[SR_ERRMAX] = "", *full, *line;
	int rc;

	sr_store_put(st, "hj/manifests/0000000000.json", doc, strlen(doc), SR_PUT_OVERWRITE, NULL,
	    NULL, err);
	tu_log_clear(&lg);
	rc = restore("hj", NULL, err);
	full = sr_asprintf("restore hj: checkpoint 0: bad manifest hj/manifests/0000000000.json: %s",
	    want);
	line = sr_asprintf("checkpoint 0: bad manifest hj/manifests/0000000000.json: %s; no older"
	    " checkpoint", want);
	is_int(rc, -1, "%s: refused", label);
	is_str(err, full, "%s: message", label);
	ok(lg.n == 1 && strcmp(lg.lines[0], line) == 0, "%s: logged once", label);
	ok(untouched(), "%s: nothing written outside the staging directory", label);
	free(full);
	free(line);
}

static void
hostile(const char *label, const char *entries, const char *want)
{
	char *doc = sr_asprintf("{\"version\":1,\"job\":\"hj\",\"seq\":0,\"step\":5,\"created\":0,"
	    "\"entries\":[%s]}", entries);

	hostile_doc(label, doc, want);
	free(doc);
}

/* A file entry at path whose one chunk is the valid one, size 12. */
static char *
file_entry(const char *path)
{
	return sr_asprintf("{\"path\":\"%s\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,"
	    "\"size\":12,\"chunks\":[%s]}", path, chunk);
}

#define DIR_ENTRY(p) "{\"path\":\"" p "\",\"type\":\"dir\",\"mode\":493,\"mtime_ns\":0}"
#define LINK_ENTRY(p, t) "{\"path\":\"" p "\",\"type\":\"symlink\",\"mode\":511,\"mtime_ns\":0," \
	"\"target\":\"" t "\"}"

/* A file entry with a chunk whose field key is replaced by value. */
static char *
chunk_variant(const char *key, const char *value, const char *size)
{
	char *c = sr_strdup(chunk), *k = sr_asprintf("\"%s\":", key), *p, *end, *out;

	p = strstr(c, k) + strlen(k);
	end = p + strcspn(p, ",}");
	out = sr_asprintf("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,"
	    "\"size\":%s,\"chunks\":[%.*s%s%s]}", size, (int)(p - c), c, value, end);
	free(c);
	free(k);
	return out;
}

static void
setup_base(void)
{
	char *src = tu_path(top, "src"), err[SR_ERRMAX] = "";
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	struct sr_manifest m;
	const struct sr_mchunk *c;

	mkdir(src, 0755);
	tu_write(src, "f", "hello world\n", 12);
	memset(&o, 0, sizeof o);
	o.job = "hj";
	o.sha256_ids = 1;	/* the documents below are version 1: SHA-256 ids */
	if (sr_ckpt_save(st, &o, src, 5, &s, err) != 0 || sr_catalog_load(st, "hj", 0, &m, err) != 0) {
		printf("Bail out! base checkpoint: %s\n", err);
		exit(1);
	}
	c = &m.entries[0].chunks[0];
	sr_id_hex(m.chunk_id, c->id, chunk_id);
	sr_hex_of(c->check, sizeof c->check, chunk_check);
	snprintf(chunk, sizeof chunk, "{\"id\":\"%s\",\"pack\":\"%s\",\"offset\":%" PRIu64 ","
	    "\"clen\":%" PRIu64 ",\"rlen\":%" PRIu64 ",\"xf\":\"%s\"}", chunk_id, c->pack,
	    c->offset, c->clen, c->rlen, sr_transform_name(c->xf));
	sr_manifest_free(&m);
	/* a second job whose newest manifest is hostile and an older one good */
	o.job = "hj2";
	sr_ckpt_save(st, &o, src, 1, &s, err);
	sr_ckpt_save(st, &o, src, 2, &s, err);
	tu_rmtree(src);
	free(src);
}

/* Replace the store's file of key by a special file made by kind ("fifo",
 * "socket", "dir", or a symlink to the path kind), keeping the original
 * as key.away; special_undo puts it back. */
static void
special_make(const char *storedir, const char *key, const char *kind)
{
	char *f = tu_path(storedir, key), *away = sr_asprintf("%s.away", f);
	struct sockaddr_un sa;
	int fd;

	if (rename(f, away) == -1 && errno != ENOENT)
		sr_fatal("rename %s: %s", f, strerror(errno));
	if (strcmp(kind, "fifo") == 0) {
		if (mkfifo(f, 0644) == -1)
			sr_fatal("mkfifo %s: %s", f, strerror(errno));
	} else if (strcmp(kind, "socket") == 0) {
		memset(&sa, 0, sizeof sa);
		sa.sun_family = AF_UNIX;
		snprintf(sa.sun_path, sizeof sa.sun_path, "%s", f);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd == -1 || bind(fd, (struct sockaddr *)&sa, sizeof sa) == -1)
			sr_fatal("bind %s: %s", f, strerror(errno));
		close(fd);
	} else if (strcmp(kind, "dir") == 0) {
		if (mkdir(f, 0755) == -1)
			sr_fatal("mkdir %s: %s", f, strerror(errno));
	} else if (symlink(kind, f) == -1)
		sr_fatal("symlink %s: %s", f, strerror(errno));
	free(away);
	free(f);
}

static void
special_undo(const char *storedir, const char *key)
{
	char *f = tu_path(storedir, key), *away = sr_asprintf("%s.away", f);

	tu_rmtree(f);
	rename(away, f);
	free(away);
	free(f);
}

static int
count_cb(const struct sr_ckpt_stats *ck, int is_latest, void *arg)
{
	(void)ck;
	(void)is_latest;
	++*(int *)arg;
	return 0;
}

/*
 * Special files where the file store expects objects: a FIFO, a socket, a
 * device (a symlink to /dev/null) as LATEST, a manifest or a pack. A FIFO
 * without a writer used to block the open forever (the restore and `ls`
 * hung); now each is refused at once with a message naming the key and
 * the file. A restore falls back past a bad pack; LATEST's manifest, which
 * then cannot name its parent, ends the chain of committed checkpoints
 * (the warning says how to restore an older one, and that works).
 */
static void
test_special_files(const char *storedir)
{
	char *dir = tu_path(top, "sp"), *src = tu_path(dir, "src"), *dst = tu_path(dir, "dst");
	char err[SR_ERRMAX] = "", pack[256], id[65], *want, *line;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	struct sr_manifest m;
	static const char *const kinds[][2] = {
		{ "fifo", "a FIFO" }, { "socket", "a socket" }, { "/dev/null", "a character device" },
	};
	size_t i;
	int rc, n;

	alarm(60);	/* a hang fails the test instead of stalling the suite */
	mkdir(dir, 0755);
	mkdir(src, 0755);
	memset(&o, 0, sizeof o);
	o.job = "sp";
	tu_write(src, "f", "zero", 4);
	sr_ckpt_save(st, &o, src, 0, &s, err);
	tu_write(src, "f", "one", 3);
	if (sr_ckpt_save(st, &o, src, 1, &s, err) != 0 || sr_catalog_load(st, "sp", 1, &m, err) != 0) {
		printf("Bail out! special files: %s\n", err);
		exit(1);
	}
	snprintf(pack, sizeof pack, "%s", m.entries[0].chunks[0].pack);
	sr_id_hex(m.chunk_id, m.entries[0].chunks[0].id, id);
	sr_manifest_free(&m);

	for (i = 0; i < SR_ARRAY_LEN(kinds); i++) {
		const char *kind = kinds[i][0], *what = kinds[i][1];

		special_make(storedir, "sp/LATEST", kind);
		want = sr_asprintf("restore sp: get sp/LATEST: %s/sp/LATEST is %s, not a regular file:"
		    " the file store keeps objects as regular files; remove it", storedir, what);
		rc = restore_into("sp", dst, &s, err);
		is_int(rc, -1, "LATEST is %s: the restore fails at once", what);
		is_str(err, want, "LATEST is %s: the message names the key and the file", what);
		free(want);
		n = 0;
		rc = sr_ckpt_list(st, "sp", count_cb, &n, err);
		want = sr_asprintf("list checkpoints of sp: get sp/LATEST: %s/sp/LATEST is %s, not a "
		    "regular file: the file store keeps objects as regular files; remove it",
		    storedir, what);
		ok(rc == -1 && n == 0, "LATEST is %s: the listing (spotrun ls) fails at once", what);
		is_str(err, want, "LATEST is %s: its message", what);
		free(want);
		special_undo(storedir, "sp/LATEST");

		/* LATEST's manifest: it cannot name its parent, so the chain of
		 * committed checkpoints ends there (doc/format.md) */
		special_make(storedir, "sp/manifests/0000000001.json", kind);
		tu_log_clear(&lg);
		rc = restore_into("sp", dst, &s, err);
		line = sr_asprintf("get sp/manifests/0000000001.json: %s/sp/manifests/0000000001.json"
		    " is %s, not a regular file: the file store keeps objects as regular files; "
		    "remove it", storedir, what);
		want = sr_asprintf("restore sp: checkpoint 1: %s", line);
		is_int(rc, -1, "manifest 1 is %s: the restore fails at once", what);
		is_str(err, want, "manifest 1 is %s: the message names the key and the file", what);
		free(want);
		want = sr_asprintf("checkpoint 1: %s; no older checkpoint", line);
		ok(lg.n == 2 && strcmp(lg.lines[0], want) == 0 && strcmp(lg.lines[1], "warning: "
		    "checkpoint 1 of sp cannot say which checkpoint came before it: the chain of "
		    "committed checkpoints ends there, and the 1 older manifest listed is not "
		    "restored (to restore one, write its number into sp/LATEST)") == 0,
		    "manifest 1 is %s: said, and that checkpoint 0 is not reached: %s | %s", what,
		    lg.n > 0 ? lg.lines[0] : "(nothing)", lg.n > 1 ? lg.lines[1] : "(nothing)");
		free(want);
		n = 0;
		want = sr_asprintf("list checkpoints of sp: %s", line);
		ok(sr_ckpt_list(st, "sp", count_cb, &n, err) == -1 && n == 0,
		    "manifest 1 is %s: the listing fails at once", what);
		is_str(err, want, "manifest 1 is %s: its message", what);
		free(want);
		free(line);
		/* the way out the warning names */
		sr_store_put(st, "sp/LATEST", "0\n", 2, SR_PUT_OVERWRITE, NULL, NULL, err);
		rc = restore_into("sp", dst, &s, err);
		ok(rc == 0 && s.seq == 0, "manifest 1 is %s: with 0 written into LATEST, 0 restores %s",
		    what, err);
		sr_store_put(st, "sp/LATEST", "1\n", 2, SR_PUT_OVERWRITE, NULL, NULL, err);
		special_undo(storedir, "sp/manifests/0000000001.json");

		special_make(storedir, pack, kind);
		tu_log_clear(&lg);
		rc = restore_into("sp", dst, &s, err);
		ok(rc == 0 && s.seq == 0, "the pack of 1 is %s: the restore falls back to 0 %s", what,
		    err);
		line = sr_asprintf("checkpoint 1: chunk %s of \"f\": read %s: %s/%s is %s, not a "
		    "regular file: the file store keeps objects as regular files; remove it; falling "
		    "back to checkpoint 0", id, pack, storedir, pack, what);
		ok(lg.n == 1 && strcmp(lg.lines[0], line) == 0, "the pack of 1 is %s: said once: %s",
		    what, lg.n > 0 ? lg.lines[0] : "(nothing)");
		free(line);
		special_undo(storedir, pack);
	}
	/* a directory is where keys below it live, no object: missing */
	special_make(storedir, pack, "dir");
	tu_log_clear(&lg);
	rc = restore_into("sp", dst, &s, err);
	ok(rc == 0 && s.seq == 0, "the pack of 1 is a directory: the restore falls back to 0");
	line = sr_asprintf("checkpoint 1: chunk %s of \"f\": pack %s is missing; falling back to "
	    "checkpoint 0", id, pack);
	ok(tu_log_has(&lg, line), "the pack of 1 is a directory: said as missing");
	free(line);
	special_undo(storedir, pack);
	rc = restore_into("sp", dst, &s, err);
	ok(rc == 0 && s.seq == 1, "all back in place: checkpoint 1 restores %s", err);
	alarm(0);
	tu_rmtree(dir);
	free(dir);
	free(src);
	free(dst);
}

/* A manifest doc of job hj, seq 0, with the top-level members extra. */
static void
hostile_top(const char *label, const char *extra, const char *want)
{
	char *e = file_entry("f"), *doc;

	doc = sr_asprintf("{\"version\":1,\"job\":\"hj\",\"seq\":0,%s,\"entries\":[%s]}", extra,
	    e);
	hostile_doc(label, doc, want);
	free(doc);
	free(e);
}

/* Write manifest from of job as manifest to, with the member key's value
 * replaced (or, with value NULL, the member dropped). */
static void
man_edit(const char *job, uint64_t from, uint64_t to, const char *key, const char *value)
{
	char *mkey = sr_jobkey_manifest(job, from, NULL), *k = sr_asprintf("\n \"%s\": ", key);
	char *tkey = sr_jobkey_manifest(job, to, NULL), *text, *p, *end, *out, err[SR_ERRMAX];
	size_t len;

	if (sr_store_get(st, mkey, 1 << 20, (void **)&text, &len, NULL, err) != 0 ||
	    (p = strstr(text, k)) == NULL)
		sr_fatal("man_edit %s %s: %s", mkey, key, err);
	end = strchr(p + 1, '\n');
	if (value == NULL)
		out = sr_asprintf("%.*s%s", (int)(p - text), text, end);
	else
		out = sr_asprintf("%.*s%s%s,%s", (int)(p - text), text, k, value, end);
	if (sr_store_put(st, tkey, out, strlen(out), SR_PUT_OVERWRITE, NULL, NULL, err) != 0)
		sr_fatal("%s", err);
	free(out);
	free(text);
	free(k);
	free(mkey);
	free(tkey);
}

/* Replace manifest seq of job hc by its text with the member key's value
 * replaced (or, with value NULL, the member dropped). */
static void
hc_edit(uint64_t seq, const char *key, const char *value)
{
	man_edit("hc", seq, seq, key, value);
}

/*
 * The chain's members (doc/format.md): `parent` and `epoch` of a wrong
 * type, out of range or naming a parent that is not below the manifest
 * are refused with exact messages; a refused manifest whose parent could
 * be read falls back to that parent; one whose parent could not be read,
 * or that closes a loop, ends the chain, saying what it leaves below.
 */
static void
test_chain_fields(void)
{
	char *src = tu_path(top, "hc-src"), err[SR_ERRMAX] = "", *line;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	int i, rc;

	/* the target as the setup left it (the fallbacks above restored) */
	tu_rmtree(target);
	mkdir(target, 0755);
	tu_write(target, "old", "old data", 8);
	ok(untouched(), "chain fields: set up");
	hostile_top("parent as a string", "\"parent\":\"3\"", "parent: not an integer or null");
	hostile_top("parent as a number", "\"parent\":1.5", "parent: not an integer or null");
	hostile_top("parent as an array", "\"parent\":[0]", "parent: not an integer or null");
	hostile_top("negative parent", "\"parent\":-1", "parent: -1 is negative");
	hostile_top("parent beyond the seqs", "\"parent\":10000000000",
	    "parent: 10000000000 is out of range [0, 9999999999]");
	hostile_top("parent beyond 64 bits", "\"parent\":18446744073709551616",
	    "JSON line 1 column 61: too big integer near '18446744073709551616'");
	hostile_top("parent of its own seq (a loop)", "\"parent\":0",
	    "parent: 0 is not below the checkpoint's seq 0");
	hostile_top("epoch as a string", "\"parent\":null,\"epoch\":\"1\"", "epoch: not an integer");
	hostile_top("negative epoch", "\"parent\":null,\"epoch\":-2", "epoch: -2 is negative");
	hostile_top("epoch as a number", "\"parent\":null,\"epoch\":1e3", "epoch: not an integer");
	hostile_top("epoch beyond 64 bits", "\"parent\":null,\"epoch\":99999999999999999999",
	    "JSON line 1 column 74: too big integer near '99999999999999999999'");

	/* three real checkpoints: 2 -> 1 -> 0 */
	mkdir(src, 0755);
	memset(&o, 0, sizeof o);
	o.job = "hc";
	for (i = 0; i < 3; i++) {
		char text[16];

		snprintf(text, sizeof text, "hc %d", i);
		tu_write(src, "f", text, strlen(text));
		sr_ckpt_save(st, &o, src, i, &s, err);
	}
	/* 2 refused (another job's), its parent read: back to 1 */
	hc_edit(2, "job", "\"other\"");
	tu_log_clear(&lg);
	rc = restore("hc", &s, err);
	ok(rc == 0 && s.seq == 1, "refused, its parent read: falls back to the parent (rc %d) %s",
	    rc, err);
	ok(lg.n == 1 && strcmp(lg.lines[0], "checkpoint 2: bad manifest hc/manifests/0000000002.json"
	    ": job: \"other\", but the manifest is stored under job \"hc\"; falling back to checkpoint 1") == 0,
	    "... said once: %s",
	    lg.n ? lg.lines[0] : "(nothing)");
	/* 2's parent skips 1: 1 is off the chain, never a candidate */
	hc_edit(2, "parent", "0");
	tu_log_clear(&lg);
	rc = restore("hc", &s, err);
	ok(rc == 0 && s.seq == 0 && lg.n == 1 && strcmp(lg.lines[0], "checkpoint 2: bad manifest "
	    "hc/manifests/0000000002.json: job: \"other\", but the manifest is stored under job \"hc\"; "
	    "falling back to checkpoint 0")
	    == 0, "a parent that skips 1: falls back to 0, never to 1 (rc %d, seq %" PRIu64 ") %s",
	    rc, s.seq, lg.n ? lg.lines[0] : err);
	/* a parent that cannot be read: the commit record of 2 names 1 */
	hc_edit(2, "parent", "\"1\"");
	tu_log_clear(&lg);
	rc = restore("hc", &s, err);
	ok(rc == 0 && s.seq == 1 && lg.n == 2 && strcmp(lg.lines[1], "warning: restored "
	    "checkpoint 1 (step 1) instead of checkpoint 2, whose manifest hc/manifests/"
	    "0000000002.json cannot be read (parent: not an integer or null): checkpoint 1 is the "
	    "newest older one committed, as the commit record of 2 says") == 0, "a parent that "
	    "cannot be read: back to 1 by the commit record of 2 (rc %d, seq %" PRIu64 ") %s", rc,
	    s.seq, lg.n > 1 ? lg.lines[1] : err);
	/* without the record (an older version's commit), it ends the chain */
	sr_store_delete(st, "hc/manifests/0000000002.commit", err);
	tu_log_clear(&lg);
	rc = restore("hc", &s, err);
	is_int(rc, -1, "a parent that cannot be read: the restore fails");
	is_str(err, "restore hc: checkpoint 2: bad manifest hc/manifests/0000000002.json: parent: "
	    "not an integer or null", "... with the message");
	ok(lg.n == 2 && strcmp(lg.lines[0], "checkpoint 2: bad manifest hc/manifests/0000000002.json"
	    ": parent: not an integer or null; no older checkpoint") == 0 && strcmp(lg.lines[1],
	    "warning: checkpoint 2 of hc cannot say which checkpoint came before it: the chain of "
	    "committed checkpoints ends there, and the 2 older manifests listed are not restored "
	    "(to restore one, write its number into hc/LATEST)") == 0, "... saying what it leaves "
	    "below: %s | %s", lg.n ? lg.lines[0] : "", lg.n > 1 ? lg.lines[1] : "");
	/* a loop: 2 -> 1 -> 2 */
	hc_edit(2, "parent", "1");
	hc_edit(1, "parent", "2");
	tu_log_clear(&lg);
	rc = restore("hc", &s, err);
	is_int(rc, -1, "a loop 2 -> 1 -> 2: the restore fails");
	is_str(err, "restore hc: no usable checkpoint; checkpoint 2: bad manifest hc/manifests/"
	    "0000000002.json: job: \"other\", but the manifest is stored under job \"hc\" (and 1 "
	    "older ones failed too)",
	    "... with the message");
	line = "checkpoint 1: bad manifest hc/manifests/0000000001.json: parent: 2 is not below the "
	    "checkpoint's seq 1; no older checkpoint";
	ok(lg.n == 3 && strcmp(lg.lines[1], line) == 0 && strcmp(lg.lines[2], "warning: checkpoint "
	    "1 of hc names a parent that is not below it: the chain of committed checkpoints ends "
	    "there, and the 1 older manifest listed is not restored (to restore one, write its "
	    "number into hc/LATEST)") == 0, "... the loop is refused at 1: %s | %s",
	    lg.n > 1 ? lg.lines[1] : "", lg.n > 2 ? lg.lines[2] : "");
	/* a parent that is missing: the end of the chain, and what it leaves */
	hc_edit(1, "parent", "0");
	sr_store_delete(st, "hc/manifests/0000000001.json", err);
	tu_log_clear(&lg);
	rc = restore("hc", &s, err);
	ok(rc == -1 && lg.n == 2 && strcmp(lg.lines[1], "warning: checkpoint 2 of hc names as its "
	    "parent checkpoint 1, which is missing: the chain of committed checkpoints ends there, "
	    "and the 1 older manifest listed is not restored (to restore one, write its number "
	    "into hc/LATEST)") == 0, "a missing parent ends the chain, saying so: %s",
	    lg.n > 1 ? lg.lines[1] : "(nothing)");
	/* an epoch of a wrong type in an otherwise good manifest: refused,
	 * its parent read */
	hc_edit(2, "job", "\"hc\"");
	hc_edit(0, "epoch", "\"x\"");
	sr_store_put(st, "hc/LATEST", "0\n", 2, SR_PUT_OVERWRITE, NULL, NULL, err);
	tu_log_clear(&lg);
	rc = restore("hc", &s, err);
	is_str(err, "restore hc: checkpoint 0: bad manifest hc/manifests/0000000000.json: epoch: "
	    "not an integer", "a bad epoch: refused");
	tu_rmtree(src);
	free(src);
}

/* Manifest 3 of dn damaged as label says: text is what to store instead
 * (len bytes). The restore goes back to 1 by 3's commit record, never to
 * 2 or 4 (a fenced writer's, uncommitted), saying exactly so; without
 * the record it ends the chain there, as before. */
static void
damaged_newest(const char *label, const char *text, size_t len, const char *why)
{
	char err[SR_ERRMAX] = "", *line, *warn;
	struct sr_ckpt_stats s;
	int rc;

	sr_store_put(st, "dn/manifests/0000000003.json", text, len, SR_PUT_OVERWRITE, NULL, NULL,
	    err);
	tu_log_clear(&lg);
	memset(&s, 0, sizeof s);
	rc = restore("dn", &s, err);
	ok(rc == 0 && s.seq == 1 && s.step == 11, "%s: restores checkpoint 1, step 11 (rc %d, seq %"
	    PRIu64 ", step %lld) %s", label, rc, s.seq, s.step, rc ? err : "");
	line = sr_asprintf("checkpoint 3: bad manifest dn/manifests/0000000003.json: %s; falling "
	    "back to checkpoint 1", why);
	warn = sr_asprintf("warning: restored checkpoint 1 (step 11) instead of checkpoint 3, whose "
	    "manifest dn/manifests/0000000003.json cannot be read (%s): checkpoint 1 is the newest "
	    "older one committed, as the commit record of 3 says", why);
	ok(lg.n == 2 && strcmp(lg.lines[0], line) == 0 && strcmp(lg.lines[1], warn) == 0,
	    "%s: said exactly: %s | %s", label, lg.n > 0 ? lg.lines[0] : "(nothing)",
	    lg.n > 1 ? lg.lines[1] : "(nothing)");
	free(line);
	free(warn);
}

static void
test_damaged_newest(void)
{
	char *src = tu_path(top, "dn-src"), err[SR_ERRMAX] = "", *text, *bad, *line;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	size_t len, blen, cut;
	int i, rc;

	tu_rmtree(target);
	mkdir(target, 0755);
	tu_write(target, "old", "old data", 8);
	mkdir(src, 0755);
	memset(&o, 0, sizeof o);
	o.job = "dn";
	o.epoch = 1;
	/* 0 and 1 committed at epoch 1; then epoch 2 takes the job over, and
	 * a paused writer of epoch 1 leaves manifests 2 and 4 that it never
	 * committed (fenced: copies of 1 at another step); 3 is epoch 2's
	 * commit, its parent 1 */
	sr_ckpt_fence(st, "dn", 1, err);
	for (i = 0; i < 2; i++) {
		char t[16];

		snprintf(t, sizeof t, "dn %d", i);
		tu_write(src, "f", t, strlen(t));
		sr_ckpt_save(st, &o, src, 10 + i, &s, err);
	}
	sr_ckpt_fence(st, "dn", 2, err);
	man_edit("dn", 1, 2, "seq", "2");
	man_edit("dn", 2, 2, "step", "99");
	o.epoch = 2;
	tu_write(src, "f", "dn 3", 4);
	rc = sr_ckpt_save(st, &o, src, 12, &s, err);
	ok(rc == 0 && s.seq == 3, "damaged newest: epoch 2 commits 3 over the fenced 2 %s", err);
	man_edit("dn", 1, 4, "seq", "4");
	man_edit("dn", 4, 4, "step", "98");
	if (sr_store_get(st, "dn/manifests/0000000003.commit", 1024, (void **)&text, &len, NULL,
	    err) != 0)
		text = sr_strdup(err);
	is_str(text, "commit 3 parent 1 epoch 2\n", "the commit record of 3 names its parent");
	free(text);
	rc = restore("dn", &s, err);
	ok(rc == 0 && s.seq == 3 && s.step == 12, "sound: 3 restores %s", err);
	if (sr_store_get(st, "dn/manifests/0000000003.json", 1 << 20, (void **)&text, &len, NULL,
	    err) != 0)
		sr_fatal("%s", err);

	/* cut, and the NUL, where "entries" starts: the same place whatever
	 * the times and pack names make the manifest's length */
	if ((bad = strstr(text, "\n \"entries\"")) == NULL)
		sr_fatal("manifest 3 has no entries");
	cut = (size_t)(bad - text) + 1;
	damaged_newest("truncated", text, cut, "JSON line 11 column 0: string or '}' expected near "
	    "end of file");
	if ((bad = malloc(len)) == NULL)
		sr_fatal("out of memory");
	memcpy(bad, text, len);
	bad[cut] = '\0';
	damaged_newest("a NUL inside", bad, len, "JSON line 11 column 1: string or '}' expected near "
	    "end of file");
	memcpy(bad, text, len);
	*strchr(bad, ':') ^= 1;		/* ':' -> ';' */
	damaged_newest("a bit flip", bad, len, "JSON line 2 column 11: ':' expected near ';'");
	free(bad);
	sr_store_put(st, "dn/manifests/0000000003.json", text, len, SR_PUT_OVERWRITE, NULL, NULL,
	    err);
	man_edit("dn", 3, 3, "version", "99");
	if (sr_store_get(st, "dn/manifests/0000000003.json", 1 << 20, (void **)&bad, &blen, NULL,
	    err) != 0)
		sr_fatal("%s", err);
	damaged_newest("\"version\": 99 (a newer spotrun's)", bad, blen, "version 99 is not "
	    "known (this spotrun reads versions 1 to 4)");
	free(bad);

	/* without the record (an older version's commit): the chain ends at
	 * 3, and neither 2 nor 4 is ever taken */
	sr_store_delete(st, "dn/manifests/0000000003.commit", err);
	tu_log_clear(&lg);
	rc = restore("dn", &s, err);
	is_int(rc, -1, "no commit record: the restore fails");
	line = "warning: checkpoint 3 of dn cannot say which checkpoint came before it: the chain "
	    "of committed checkpoints ends there, and the 3 older manifests listed are not restored"
	    " (to restore one, write its number into dn/LATEST)";
	ok(lg.n == 2 && strcmp(lg.lines[1], line) == 0, "... saying where the chain ends: %s",
	    lg.n > 1 ? lg.lines[1] : "(nothing)");
	/* a record that is not exactly one of 3 is none */
	sr_store_put(st, "dn/manifests/0000000003.commit", "commit 3 parent 2 epoch 2", 25,
	    SR_PUT_OVERWRITE, NULL, NULL, err);
	rc = restore("dn", &s, err);
	is_int(rc, -1, "a record without its newline is none: the restore fails");
	sr_store_put(st, "dn/manifests/0000000003.commit", "commit 2 parent 1 epoch 2\n", 26,
	    SR_PUT_OVERWRITE, NULL, NULL, err);
	rc = restore("dn", &s, err);
	is_int(rc, -1, "a record of another seq is none: the restore fails");
	sr_store_put(st, "dn/manifests/0000000003.json", text, len, SR_PUT_OVERWRITE, NULL, NULL,
	    err);
	free(text);
	tu_rmtree(src);
	free(src);
}

int
main(void)
{
	char err[SR_ERRMAX] = "", *url, *storedir, *e1, *e2, *doc, *p, *abs;
	struct sr_ckpt_stats s;

	etc_x_before = access("/etc/x", F_OK) == 0;
	top = tu_tmpdir("t-restore-hostile");
	storedir = tu_path(top, "store");
	parent = tu_path(top, "parent");
	target = tu_path(parent, "target");
	outside = tu_path(top, "outside");
	mkdir(storedir, 0755);
	url = sr_asprintf("file://%s", storedir);
	if (sr_store_open(url, &st, err) != 0) {
		printf("Bail out! %s\n", err);
		return 1;
	}
	setup_base();
	mkdir(parent, 0755);
	mkdir(target, 0755);
	mkdir(outside, 0755);
	tu_write(target, "old", "old data", 8);
	tu_write(parent, "canary", "canary", 6);
	tu_write(outside, "canary", "canary", 6);
	ok(untouched(), "setup");

	e1 = file_entry("../x");
	hostile("../x", e1, "path \"../x\": \"..\" segment");
	free(e1);
	e1 = file_entry("/etc/x");
	hostile("/etc/x", e1, "path \"/etc/x\": absolute");
	free(e1);
	abs = sr_asprintf("%s/x", outside);
	e1 = file_entry(abs);
	p = sr_asprintf("path \"%s\": absolute", abs);
	hostile("absolute path into a directory outside", e1, p);
	free(p);
	free(e1);
	free(abs);
	e1 = file_entry("a/../../x");
	e2 = sr_asprintf(DIR_ENTRY("a") ",%s", e1);
	hostile("a/../../x", e2, "path \"a/../../x\": \"..\" segment");
	free(e1);
	free(e2);
	e1 = file_entry("l/x");
	e2 = sr_asprintf(LINK_ENTRY("l", "../../outside") ",%s", e1);
	hostile("symlink l -> ../../outside, then file l/x", e2,
	    "path \"l/x\": parent \"l\" is a symlink, not a directory");
	free(e1);
	free(e2);
	hostile("symlink l -> ../../outside", LINK_ENTRY("l", "../../outside"),
	    "symlink \"l\" -> \"../../outside\": target escapes the directory");
	hostile("symlink with an absolute target", LINK_ENTRY("l", "/etc"),
	    "symlink \"l\" -> \"/etc\": absolute target");
	hostile("symlink climbing out of a symlink (lexically inside)",
	    DIR_ENTRY("a") "," LINK_ENTRY("a/l1", "..") "," LINK_ENTRY("a/l2", "l1/.."),
	    "symlink \"a/l2\" -> \"l1/..\": target climbs out of symlink \"a/l1\"");
	e1 = file_entry("f");
	e2 = sr_asprintf("%s,%s", e1, e1);
	hostile("duplicate paths", e2, "path \"f\": duplicate");
	free(e2);
	e2 = sr_asprintf(DIR_ENTRY("f") ",%s", e1);
	hostile("a directory and a file of the same path", e2, "path \"f\": duplicate");
	free(e2);
	free(e1);
	e1 = file_entry("d/f");
	hostile("a parent that is not in the manifest", e1,
	    "path \"d/f\": parent \"d\" is not a directory of the checkpoint");
	free(e1);
	e1 = chunk_variant("rlen", "12", "13");
	hostile("sizes that do not add up", e1, "path \"f\": size 13 but its chunks hold 12 bytes");
	free(e1);
	e1 = chunk_variant("rlen", "2147483648", "2147483648");
	hostile("rlen of 2 GiB (a bomb)", e1,
	    "path \"f\": chunk 0: raw length 2147483648 exceeds the 256 MiB chunk limit");
	free(e1);
	e1 = chunk_variant("clen", "1000000000000", "12");
	hostile("clen of 1 TB", e1,
	    "path \"f\": chunk 0: encoded length 1000000000000 is outside [1, 80] for 12 raw bytes");
	free(e1);
	e1 = chunk_variant("offset", "-1", "12");
	hostile("negative offset", e1, "entries[0].chunks[0].offset: -1 is negative");
	free(e1);
	e1 = chunk_variant("offset", "4611686018427387904", "12");
	hostile("huge offset", e1,
	    "path \"f\": chunk 0: offset 4611686018427387904 is beyond the 1024 GiB pack limit");
	free(e1);
	hostile("offset beyond 64 bits", "{\"path\":\"f\",\"type\":\"file\",\"mode\":420,"
	    "\"mtime_ns\":0,\"size\":12,\"chunks\":[{\"offset\":99999999999999999999}]}",
	    "JSON line 1 column 164: too big integer near '99999999999999999999'");
	e1 = chunk_variant("pack", "\"other/packs/0000000000-aa.tar\"", "12");
	hostile("pack key of another job", e1, "path \"f\": chunk 0: pack"
	    " \"other/packs/0000000000-aa.tar\" is not an object under hj/packs/");
	free(e1);
	e1 = chunk_variant("pack", "\"hj/packs/../../secret\"", "12");
	hostile("pack key climbing out of the job", e1, "path \"f\": chunk 0: pack"
	    " \"hj/packs/../../secret\" is not an object under hj/packs/");
	free(e1);
	e1 = chunk_variant("pack", "\"hj/LATEST\"", "12");
	hostile("pack key naming another object of the job", e1, "path \"f\": chunk 0: pack"
	    " \"hj/LATEST\" is not an object under hj/packs/");
	free(e1);
	e1 = chunk_variant("id", "\"../../../../etc/passwd\"", "12");
	hostile("chunk id that is not hex", e1,
	    "entries[0].chunks[0].id: \"../../../../etc/passwd\" is not 64 lowercase hex digits");
	free(e1);
	hostile("unknown type", "{\"path\":\"f\",\"type\":\"device\",\"mode\":420,\"mtime_ns\":0}",
	    "entries[0].type: unknown type \"device\" (file, dir or symlink)");
	hostile("mode as a string", "{\"path\":\"f\",\"type\":\"dir\",\"mode\":\"rwx\",\"mtime_ns\":0}",
	    "entries[0].mode: not an integer");
	hostile("mode with file-type bits", "{\"path\":\"f\",\"type\":\"dir\",\"mode\":33188,"
	    "\"mtime_ns\":0}", "entries[0].mode: 33188 is out of range [0, 4095]");
	hostile("chunks not an array", "{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,"
	    "\"size\":0,\"chunks\":{}}", "entries[0].chunks: not an array");
	hostile("an entry that is not an object", "5", "entries[0]: not an object");
	hostile_doc("entries not an array", "{\"version\":1,\"job\":\"hj\",\"seq\":0,\"entries\":\"x\"}",
	    "entries: not an array");
	hostile_doc("unknown version", "{\"version\":99,\"job\":\"hj\",\"seq\":0,\"entries\":[]}",
	    "version 99 is not known (this spotrun reads versions 1 to 4)");
	hostile_doc("manifest of another job", "{\"version\":1,\"job\":\"other\",\"seq\":0,\"entries\":[]}",
	    "job: \"other\", but the manifest is stored under job \"hj\"");
	hostile_doc("manifest of another seq", "{\"version\":1,\"job\":\"hj\",\"seq\":7,\"entries\":[]}",
	    "seq: 7, but the manifest is stored as checkpoint 0");
	hostile_doc("truncated JSON", "{\"version\":1,\"job\":\"hj\",\"seq\":0,\"entries\":[{\"path\":\"f\"",
	    "JSON line 1 column 54: '}' expected near end of file");
	hostile_doc("empty object", "", "JSON line 1 column 0: '[' or '{' expected near end of file");

	/* a well-formed manifest whose chunk does not match its id: the data
	 * path is refused too, and the staging directory removed */
	{
		char *bad = sr_strdup(chunk), *want;
		char other = chunk_id[0] == '0' ? '1' : '0';
		bad[7] = other;		/* {"id":"X... */
		e1 = sr_asprintf("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":12,"
		    "\"chunks\":[%s]}", bad);
		doc = sr_asprintf("{\"version\":1,\"job\":\"hj\",\"seq\":0,\"entries\":[%s]}", e1);
		sr_store_put(st, "hj/manifests/0000000000.json", doc, strlen(doc), SR_PUT_OVERWRITE,
		    NULL, NULL, err);
		want = sr_asprintf("restore hj: checkpoint 0: chunk %c%s of \"f\": checksum mismatch (the"
		    " data hashes to %s)", other, chunk_id + 1, chunk_id);
		is_int(restore("hj", NULL, err), -1, "a chunk that does not match its id: refused");
		is_str(err, want, "its message");
		ok(untouched(), "and the staging directory is gone");
		free(want);
		free(doc);
		free(e1);
		free(bad);
	}
	/* the chunk with an "xxh3" member: malformed ones are refused when the
	 * manifest is read; a well-formed wrong one fails the data check, which
	 * then is that one (not the id); the right one restores */
	{
		static const struct {
			const char *label, *value, *want;
		} bad_checks[] = {
			{ "xxh3 not hex", "\"../etc\"",
			  "entries[0].chunks[0].xxh3: \"../etc\" is not 32 lowercase hex digits" },
			{ "xxh3 a number", "5", "entries[0].chunks[0].xxh3: not a string" },
			{ "xxh3 too short", "\"00ff\"",
			  "entries[0].chunks[0].xxh3: \"00ff\" is not 32 lowercase hex digits" },
			{ "xxh3 in upper case", "\"00000000000000000000000000ABCDEF\"",
			  "entries[0].chunks[0].xxh3: \"00000000000000000000000000ABCDEF\" is not 32"
			  " lowercase hex digits" },
		};
		size_t i;
		char *want, wrong[33];

		for (i = 0; i < SR_ARRAY_LEN(bad_checks); i++) {
			e1 = sr_asprintf("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,"
			    "\"size\":12,\"chunks\":[%.*s,\"xxh3\":%s}]}", (int)strlen(chunk) - 1, chunk,
			    bad_checks[i].value);
			hostile(bad_checks[i].label, e1, bad_checks[i].want);
			free(e1);
		}
		snprintf(wrong, sizeof wrong, "%s", chunk_check);
		wrong[31] = wrong[31] == '0' ? '1' : '0';
		e1 = sr_asprintf("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,"
		    "\"size\":12,\"chunks\":[%.*s,\"xxh3\":\"%s\"}]}", (int)strlen(chunk) - 1, chunk,
		    wrong);
		doc = sr_asprintf("{\"version\":1,\"job\":\"hj\",\"seq\":0,\"entries\":[%s]}", e1);
		sr_store_put(st, "hj/manifests/0000000000.json", doc, strlen(doc), SR_PUT_OVERWRITE,
		    NULL, NULL, err);
		want = sr_asprintf("restore hj: checkpoint 0: chunk %s of \"f\": checksum mismatch"
		    " (XXH3-128 %s, the manifest says %s)", chunk_id, chunk_check, wrong);
		is_int(restore("hj", NULL, err), -1, "a chunk that does not match its xxh3: refused");
		is_str(err, want, "its message");
		ok(untouched(), "and the staging directory is gone");
		free(want);
		free(doc);
		free(e1);
	}
	/* a good manifest restores even where the old target holds a symlink
	 * to the outside: the tree is built fresh, never through old links */
	{
		char *lnk = tu_path(target, "d"), *f;
		symlink(outside, lnk);
		e1 = sr_asprintf(DIR_ENTRY("d") ",{\"path\":\"d/f\",\"type\":\"file\",\"mode\":420,"
		    "\"mtime_ns\":0,\"size\":12,\"chunks\":[%s]}", chunk);
		doc = sr_asprintf("{\"version\":1,\"job\":\"hj\",\"seq\":0,\"entries\":[%s]}", e1);
		sr_store_put(st, "hj/manifests/0000000000.json", doc, strlen(doc), SR_PUT_OVERWRITE,
		    NULL, NULL, err);
		is_int(restore("hj", NULL, err), 0, "a good manifest over a target with a symlink %s", err);
		f = file_text(target, "d/f");
		is_str(f, "hello world\n", "the file is in the new tree");
		free(f);
		p = tu_ls(outside);
		is_str(p, "canary", "nothing was written through the old symlink");
		free(p);
		free(lnk);
		free(doc);
		free(e1);
	}
	/* newest manifest hostile, an older one good: fall back (by the old
	 * rule: this one has no parent, as before the chain) */
	e1 = file_entry("../x");
	doc = sr_asprintf("{\"version\":1,\"job\":\"hj2\",\"seq\":1,\"entries\":[%s]}", e1);
	sr_store_put(st, "hj2/manifests/0000000001.json", doc, strlen(doc), SR_PUT_OVERWRITE, NULL,
	    NULL, err);
	tu_log_clear(&lg);
	is_int(restore("hj2", &s, err), 0, "hostile newest manifest: falls back %s", err);
	is_int(s.seq, 0, "to checkpoint 0");
	ok(tu_log_has(&lg, "checkpoint 1: bad manifest hj2/manifests/0000000001.json: path \"../x\":"
	    " \"..\" segment; falling back to checkpoint 0"), "the fallback is logged");
	p = tu_ls(parent);
	is_str(p, "canary target", "nothing beside the target");
	free(p);
	free(doc);
	free(e1);

	/* a store writer's setuid-root plant: modes 07777 and 06777 come back
	 * without setuid and setgid, whoever restores (CI: root) */
	{
		char *dst = tu_path(top, "modes-dst"), *f;
		struct stat sb1, sb2;

		e1 = sr_asprintf("{\"path\":\"d\",\"type\":\"dir\",\"mode\":4095,\"mtime_ns\":0},"
		    "{\"path\":\"d/f\",\"type\":\"file\",\"mode\":3583,\"mtime_ns\":0,"
		    "\"size\":12,\"chunks\":[%s]}", chunk);
		doc = sr_asprintf("{\"version\":1,\"job\":\"hj\",\"seq\":0,\"entries\":[%s]}", e1);
		sr_store_put(st, "hj/manifests/0000000000.json", doc, strlen(doc), SR_PUT_OVERWRITE,
		    NULL, NULL, err);
		tu_log_clear(&lg);
		err[0] = '\0';
		is_int(restore_into("hj", dst, NULL, err), 0, "modes 07777 and 06777: restored %s", err);
		f = tu_path(dst, "d");
		ok(stat(f, &sb1) == 0 && (sb1.st_mode & 07777) == 01777, "the directory: 01777, "
		    "sticky kept (%o)", sb1.st_mode & 07777);
		free(f);
		f = tu_path(dst, "d/f");
		ok(stat(f, &sb2) == 0 && (sb2.st_mode & 07777) == 0777 && sb2.st_uid == getuid(),
		    "the file: 0777, owned by the restorer (uid %d), no setuid (%o)", (int)getuid(),
		    sb2.st_mode & 07777);
		free(f);
		ok(lg.n == 1 && strcmp(lg.lines[0], "warning: checkpoint 0: \"d\" has mode 07777: "
		    "restored as 01777 (and 1 more entry); a restore never sets setuid or setgid (nor "
		    "sticky on files)") == 0, "said once: %s", lg.n ? lg.lines[0] : "(nothing)");
		tu_rmtree(dst);
		free(dst);
		free(doc);
		free(e1);
	}
	test_special_files(storedir);
	test_chain_fields();
	test_damaged_newest();

	sr_store_close(st);
	tu_rmtree(top);
	tu_log_clear(&lg);
	free(lg.lines);
	free(url);
	free(storedir);
	free(parent);
	free(target);
	free(outside);
	free(top);
	return tap_done();
}
