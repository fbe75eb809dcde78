/*
 * t-chunksize.c: the chunk size a directory's save chooses when the job
 * sets none (ckpt/chunksize.c): the rule per state size, the previous
 * checkpoint's size kept (the second save reuses the unchanged chunks), an
 * old checkpoint in 16 MiB chunks restored and its size kept by the next
 * save, a state that outgrows its size, and a gang's node keeping the
 * default, on a file:// store.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "ckpt-util.h"
#include "ckpt-store-util.h"

#include "catalog.h"
#include "chunksize.h"
#include "ckpt.h"
#include "manifest.h"
#include "store.h"
#include "util.h"

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

static char *top;
static struct sr_store *st;
static struct tu_log lg;

static char *
newdir(const char *name)
{
	char *p = tu_path(top, name);

	if (mkdir(p, 0755) == -1)
		sr_fatal("mkdir %s: %s", p, strerror(errno));
	return p;
}

/* Save dir to job with chunk bytes (0: chosen): 0 or the save's code. */
static int
save(const char *job, const char *dir, size_t chunk, struct sr_ckpt_stats *s)
{
	struct sr_ckpt_opts o;
	char err[SR_ERRMAX] = "";
	int rc;

	tu_opts(&o, job, chunk, 2, &lg);
	if ((rc = sr_ckpt_save(st, &o, dir, 1, s, err)) != 0)
		printf("# save %s: %s\n", job, err);
	return rc;
}

/* The chunk size checkpoint seq of job was cut with (0: unread). */
static size_t
used_of(const char *job, uint64_t seq)
{
	struct sr_manifest m;
	char err[SR_ERRMAX];
	size_t u = 0;

	if (sr_catalog_load(st, job, seq, &m, err) == 0)
		u = sr_chunk_used(&m, NULL);
	else
		printf("# load %s %" PRIu64 ": %s\n", job, seq, err);
	sr_manifest_free(&m);
	return u;
}

static void
test_rule(void)
{
	static const struct {
		uint64_t raw;
		size_t want;
	} t[] = {
		{ 0, 1 << 20 }, { 100, 1 << 20 }, { 64 * MiB, 1 << 20 },
		{ 256 * MiB, 1 << 20 }, { 512 * MiB - 1, 1 << 20 }, { 512 * MiB, 2 << 20 },
		{ 1 * GiB, 4 << 20 }, { 3 * GiB, 8 << 20 }, { 4 * GiB, 16 << 20 },
		{ 400 * GiB, 16 << 20 },
	};
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++)
		is_int(sr_chunk_rule(t[i].raw), t[i].want, "rule: %" PRIu64 " bytes -> %zu KiB",
		    t[i].raw, t[i].want >> 10);
}

/* A manifest of files of the given chunk sizes (one file a row, 0 ends
 * a row) for sr_chunk_choose. */
static void
fake(struct sr_manifest *m, const size_t *rows)
{
	char err[SR_ERRMAX];
	struct sr_mentry *e = NULL;
	struct sr_mchunk *c;
	size_t i;

	sr_manifest_init(m);
	m->entries = calloc(8, sizeof *m->entries);
	for (i = 0; rows[i] != 1; i++) {
		if (e == NULL)
			e = &m->entries[m->nentries++];
		if (rows[i] == 0) {
			e = NULL;
			continue;
		}
		if ((c = sr_mentry_add_chunk(e, err)) == NULL)
			sr_fatal("%s", err);
		c->rlen = rows[i];
	}
}

static void
test_choose(void)
{
	/* one file in two 4 MiB chunks and a bit, one of 1 chunk */
	static const size_t multi[] = { 4 << 20, 4 << 20, 100, 0, 3 << 20, 0, 1 };
	static const size_t small[] = { 3 << 20, 0, 100, 0, 1 };	/* all fit in one */
	static const size_t one_mib[] = { 1 << 20, 1 << 20, 0, 1 };
	struct sr_manifest m;
	const char *why;

	is_int(sr_chunk_choose(256 * MiB, NULL, &why), 1 << 20, "no previous: the rule");
	fake(&m, multi);
	is_int(sr_chunk_used(&m, NULL), 4 << 20, "used: a file's first of two chunks");
	is_int(sr_chunk_choose(256 * MiB, &m, &why), 4 << 20,
	    "a previous in 4 MiB chunks: kept at 256 MiB (%s)", why);
	is_int(sr_chunk_choose(40 * GiB, &m, &why), 4 << 20, "... and at 40 GiB (under 16x)");
	sr_manifest_free(&m);
	fake(&m, small);
	is_int(sr_chunk_used(&m, NULL), 0, "used: 0 when every file is one chunk");
	is_int(sr_chunk_choose(64 * MiB, &m, &why), 4 << 20,
	    "then at least the power of two holding its largest (3 MiB): 4 MiB (%s)", why);
	is_int(sr_chunk_choose(4 * GiB, &m, &why), 16 << 20, "or the rule when larger");
	sr_manifest_free(&m);
	fake(&m, one_mib);
	is_int(sr_chunk_choose(2 * GiB, &m, &why), 1 << 20, "1 MiB kept while the state is < 4 GiB");
	is_int(sr_chunk_choose(4 * GiB, &m, &why), 16 << 20,
	    "grown 16x (4 GiB): chosen again, 16 MiB (%s)", why);
	ok(strstr(why, "outgrew") != NULL, "... saying so");
	sr_manifest_free(&m);
}

/* Two saves of a 6 MiB state with no chunk size set: 1 MiB chunks; the
 * second, after 10% of one file is rewritten, reuses every other chunk. */
static void
test_stable(void)
{
	char *src = newdir("st-src"), *dst = tu_path(top, "st-dst"), err[SR_ERRMAX] = "";
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s1, s2, r;
	uint8_t tail[200 * 1024];
	char why[1024] = "";
	int i;

	for (i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof name, "w%d", i);
		tu_write_noise(src, name, 2 * MiB, 10 + (uint64_t)i);
	}
	is_int(save("st", src, 0, &s1), 0, "save 6 MiB, chunk size unset");
	is_int(s1.chunks, 6, "6 chunks");
	is_int(used_of("st", s1.seq), 1 << 20, "of 1 MiB (the rule's least)");
	/* the last 200 KiB of w1 */
	tu_fill(tail, sizeof tail, 99);
	{
		char *p = tu_path(src, "w1");
		FILE *f = fopen(p, "r+b");
		ok(f != NULL && fseek(f, (long)(2 * MiB - sizeof tail), SEEK_SET) == 0 &&
		    fwrite(tail, 1, sizeof tail, f) == sizeof tail && fclose(f) == 0,
		    "rewrite the last 200 KiB of w1");
		free(p);
	}
	is_int(save("st", src, 0, &s2), 0, "second save");
	is_int(used_of("st", s2.seq), 1 << 20, "the same chunk size");
	is_int(s2.reused_chunks, 5, "5 of 6 chunks reused");
	ok(s2.new_bytes <= MiB + 64 * KiB, "uploaded %" PRIu64 " bytes: one chunk", s2.new_bytes);
	tu_opts(&o, "st", 0, 2, &lg);
	is_int(sr_ckpt_restore(st, &o, dst, &r, err), 0, "restore %s", err);
	ok(tu_tree_cmp(src, dst, "", why, sizeof why) == 0, "equals the source %s", why);
	tu_rmtree(dst);
	free(dst);
	free(src);
}

/* A job whose checkpoint was cut in 16 MiB chunks (written before the
 * choice, or with chunk_size = 16MiB) keeps them. */
static void
test_old(void)
{
	char *src = newdir("old-src"), *dst = tu_path(top, "old-dst"), err[SR_ERRMAX] = "";
	char why[1024] = "";
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s1, s2, r;

	tu_write_noise(src, "a", 17 * MiB, 1);
	tu_write_noise(src, "b", 17 * MiB, 2);
	is_int(save("old", src, 16 * MiB, &s1), 0, "an old save in 16 MiB chunks");
	is_int(used_of("old", s1.seq), 16 << 20, "... cut so");
	tu_opts(&o, "old", 0, 2, &lg);
	is_int(sr_ckpt_restore(st, &o, dst, &r, err), 0, "it restores with no chunk size set %s",
	    err);
	ok(tu_tree_cmp(src, dst, "", why, sizeof why) == 0, "... equal to the source %s", why);
	tu_write_noise(src, "c", 100 * KiB, 3);
	tu_log_clear(&lg);
	is_int(save("old", src, 0, &s2), 0, "the next save, chunk size unset (34 MiB: the rule"
	    " says 1 MiB)");
	is_int(used_of("old", s2.seq), 16 << 20, "keeps 16 MiB chunks");
	is_int(s2.reused_chunks, 4, "every old chunk reused");
	ok(s2.new_bytes < 200 * KiB, "only the new file uploaded (%" PRIu64 ")", s2.new_bytes);
	ok(!tu_log_has(&lg, "chunk size"), "nothing said of the chunk size");
	tu_rmtree(dst);
	free(dst);
	free(src);
}

/* A previous checkpoint whose files each fit in one chunk: the next save
 * takes a size that still holds each, so they dedupe. */
static void
test_small_files(void)
{
	char *src = newdir("sf-src");
	struct sr_ckpt_stats s1, s2;

	tu_write_noise(src, "x", 3 * MiB, 5);
	tu_write_noise(src, "y", 512 * KiB, 6);
	is_int(save("sf", src, 16 * MiB, &s1), 0, "a save in 16 MiB chunks of files of 3.5 MiB");
	is_int(save("sf", src, 0, &s2), 0, "the next, chunk size unset");
	is_int(s2.reused_chunks, 2, "both files reused whole");
	is_int(s2.new_bytes, 0, "nothing uploaded");
	free(src);
}

/* A gang's node chooses apart from the others: it keeps the default. */
static void
test_gang(void)
{
	char *src = newdir("g-src"), err[SR_ERRMAX] = "", *t;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	struct sr_manifest m;
	int rc;

	tu_write_noise(src, "w", 17 * MiB, 8);
	tu_opts(&o, "g", 0, 2, &lg);
	o.part = "g/parts/0-1-1.json";
	is_int(sr_ckpt_save(st, &o, src, 1, &s, err), 0, "a gang node's part, chunk size unset %s",
	    err);
	t = tu_store_text(st, o.part);
	sr_manifest_init(&m);
	rc = sr_manifest_parse(t, strlen(t), &m, err);
	ok(rc == 0 && sr_chunk_used(&m, NULL) == 16 << 20, "in 16 MiB chunks, the default (%zu)",
	    rc == 0 ? sr_chunk_used(&m, NULL) : 0);
	sr_manifest_free(&m);
	free(t);
	free(src);
}

int
main(void)
{
	char err[SR_ERRMAX], *url, *storedir;

	top = tu_tmpdir("t-chunksize");
	storedir = tu_path(top, "store");
	url = sr_asprintf("file://%s", storedir);
	if (mkdir(storedir, 0755) == -1 || sr_store_open(url, &st, err) != 0) {
		printf("Bail out! open store %s: %s\n", url, err);
		return 1;
	}
	test_rule();
	test_choose();
	test_stable();
	test_old();
	test_small_files();
	test_gang();
	sr_store_close(st);
	if (getenv("TU_KEEP") == NULL)
		tu_rmtree(top);
	tu_log_clear(&lg);
	free(lg.lines);
	free(url);
	free(storedir);
	free(top);
	return tap_done();
}
