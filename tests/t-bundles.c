/*
 * t-bundles.c: small files sharing one chunk (ckpt/save.c's bundles,
 * doc/format.md "Slices"), saved into a file:// store and restored:
 * the members and the slices the manifest records, round trips, a changed
 * small file stored alone, saves before and after bundles deduplicating
 * against each other both ways, how many files a bundle takes, files that
 * change between the walk and their read (the workers open the small
 * ones), and a damaged shared member falling back to the checkpoint
 * before.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "catalog.h"
#include "ckpt.h"
#include "codec.h"
#include "manifest.h"
#include "savesrc.h"
#include "store.h"
#include "tap.h"
#include "util.h"
#include "ckpt-util.h"
#include "ckpt-store-util.h"

#define KiB ((size_t)1 << 10)

static char *top, *storedir;
static struct sr_store *st;
static struct tu_log lg;

static void
opts_for(struct sr_ckpt_opts *o, const char *job, size_t chunk)
{
	tu_opts(o, job, chunk, 2, &lg);
}

static int
save_with(const char *job, const char *dir, size_t chunk, int no_bundles,
    struct sr_ckpt_stats *s)
{
	struct sr_ckpt_opts o;
	char err[SR_ERRMAX] = "";
	int rc;

	opts_for(&o, job, chunk);
	o.no_bundles = no_bundles;
	if ((rc = sr_ckpt_save(st, &o, dir, -1, s, err)) != 0)
		printf("# save %s: %s\n", job, err);
	return rc;
}

static int
restored_equal(const char *job, const char *src, const char *dst, struct sr_ckpt_stats *r)
{
	struct sr_ckpt_opts o;
	char err[SR_ERRMAX] = "", why[1024] = "";

	opts_for(&o, job, 64 * KiB);
	if (sr_ckpt_restore(st, &o, dst, r, err) != 0) {
		printf("# restore %s: %s\n", job, err);
		return 0;
	}
	if (tu_tree_cmp(src, dst, "", why, sizeof why) == 0)
		return 1;
	printf("# trees differ: %s\n", why);
	return 0;
}

static int
load(const char *job, uint64_t seq, struct sr_manifest *m)
{
	char err[SR_ERRMAX];
	int rc = sr_catalog_load(st, job, seq, m, err);

	if (rc != 0)
		printf("# load %s %llu: %s\n", job, (unsigned long long)seq, err);
	return rc;
}

/* What m's file chunks make of their members: how many members (distinct
 * pack and offset), how many of them outside pack old (NULL: none), how
 * many chunks are slices; and whether every slice decodes to its own id
 * and, in a job's first checkpoint (first), whose members hold only the
 * files that reference them, every member's byte is some slice's. */
struct members {
	size_t members, fresh, slices, chunks;
	int sound;
};

static struct members
members_of(const struct sr_manifest *m, const char *old, int first)
{
	struct members r = { 0, 0, 0, 0, 1 };
	struct sr_codec *codec = sr_codec_new(1, NULL);
	const struct sr_mchunk **all = NULL;
	char err[SR_ERRMAX];
	size_t i, k, n = 0;

	for (i = 0; i < m->nentries; i++) {
		for (k = 0; k < m->entries[i].nchunks; k++) {
			all = sr_reallocarray(all, n + 1, sizeof *all);
			all[n++] = &m->entries[i].chunks[k];
		}
	}
	r.chunks = n;
	for (i = 0; i < n; i++) {
		const struct sr_mchunk *c = all[i];
		uint64_t mlen = sr_mchunk_mlen(c);
		uint8_t *cbuf, *mbuf, *used;
		int seen = 0;

		r.slices += c->mlen != 0;
		for (k = 0; k < i && !seen; k++)
			seen = all[k]->pack == c->pack && all[k]->offset == c->offset;
		if (seen)
			continue;
		r.members++;
		r.fresh += old != NULL && strcmp(c->pack, old) != 0;
		cbuf = sr_malloc(c->clen);
		mbuf = sr_malloc(mlen);
		used = sr_calloc(mlen, 1);
		if (sr_store_read_range(st, c->pack, c->offset, c->clen, cbuf, err) != 0 ||
		    sr_codec_decode(codec, cbuf, c->clen, c->xf, mbuf, mlen, err) != 0) {
			printf("# member at %llu of %s: %s\n", (unsigned long long)c->offset, c->pack,
			    err);
			r.sound = 0;
		}
		for (k = i; k < n && r.sound; k++) {
			const struct sr_mchunk *d = all[k];
			XXH128_canonical_t id;
			uint64_t b;

			if (d->pack != c->pack || d->offset != c->offset)
				continue;
			XXH128_canonicalFromHash(&id, XXH3_128bits(mbuf + d->at, d->rlen));
			if (memcmp(id.digest, d->id, sizeof id.digest) != 0) {
				printf("# a slice at %llu does not hash to its id\n",
				    (unsigned long long)d->at);
				r.sound = 0;
			}
			for (b = d->at; b < d->at + d->rlen && sr_mchunk_mlen(d) == mlen; b++)
				used[b]++;
		}
		for (k = 0; k < mlen && r.sound && first; k++) {
			/* each byte of a new member is some file's: no gaps
			 * (later, files with equal bytes all reference the
			 * first one's slice) */
			if (used[k] == 0) {
				printf("# member byte %zu belongs to no slice\n", k);
				r.sound = 0;
			}
		}
		free(cbuf);
		free(mbuf);
		free(used);
	}
	free(all);
	sr_codec_free(codec);
	return r;
}

/* A tree of small files: n of them in s/, sizes 1 to 5000 bytes, the
 * first five the same 100 bytes; an empty one; a 700 KiB file between them in the
 * order of paths; a few more in a subdirectory. */
static char *
small_tree(const char *name, size_t n)
{
	char *dir = tu_path(top, name), rel[64];
	size_t i;

	if (mkdir(dir, 0755) == -1)
		sr_fatal("mkdir %s: %s", dir, strerror(errno));
	tu_mkdir(dir, "s", 0755);
	tu_mkdir(dir, "t", 0700);
	for (i = 0; i < n; i++) {
		snprintf(rel, sizeof rel, "s/%04zu", i);
		tu_write_noise(dir, rel, i < 5 ? 100 : (i * 37) % 5000 + 1, i < 5 ? 99 : i + 1);
	}
	tu_write(dir, "s/empty", "", 0);
	tu_write_noise(dir, "m-large", 700 * KiB, 7);
	for (i = 0; i < 7; i++) {
		snprintf(rel, sizeof rel, "t/%zu.json", i);
		tu_write(dir, rel, "{\"lr\": 0.001}\n", 14);
		tu_chmod(dir, rel, 0600);
	}
	return dir;
}

/* How many bundles small_tree(n)'s small files make in chunks of 64 KiB
 * (save.c's rule, written out: files in the order of their paths, a
 * bundle handed on when the next would take it past the chunk or past 64
 * files; s/empty has no bytes, t/ follows s/). */
static size_t
bundles_of(size_t n)
{
	size_t i, k = 0, files = 0, bytes = 0;

	for (i = 0; i < n + 7; i++) {
		size_t size = i >= n ? 14 : i < 5 ? 100 : (i * 37) % 5000 + 1;

		if (files > 0 && (files == 64 || bytes + size > 64 * KiB)) {
			k++;
			files = bytes = 0;
		}
		files++;
		bytes += size;
	}
	return k + (files > 0);
}

/* A tree with bundles: its members, slices, a round trip; then two small
 * files changed: only they are stored. */
static void
test_round_trip(void)
{
	char *src = small_tree("rt-src", 300), *dst = tu_path(top, "rt-dst");
	struct sr_ckpt_stats s, r;
	struct sr_manifest m;
	struct members mb;

	is_int(save_with("rt", src, 64 * KiB, 0, &s), 0, "save 300 small files and a large one");
	is_int(s.files, 309, "309 files");
	is_int(s.chunks, 300 + 11 + 7, "a chunk per file with bytes, 11 of the large one");
	is_int(load("rt", 0, &m), 0, "its manifest");
	is_int(m.version, SR_MANIFEST_VERSION_SLICES, "version 4: it has slices");
	mb = members_of(&m, NULL, 1);
	ok(mb.sound, "every slice lies in its member and hashes to its id");
	is_int(mb.slices, 307, "every small file is a slice");
	/* 300 files of 2.5 KB on average and 7 of 14 bytes in members of at
	 * most 64 KiB: 11, far fewer than the files */
	is_int(bundles_of(300), 11, "the rule makes 11 bundles of the 307 small files");
	is_int(mb.members, 11 + bundles_of(300), "members: 11 of the large file, one a bundle");
	sr_manifest_free(&m);
	ok(restored_equal("rt", src, dst, &r), "the restore is the tree: bytes, modes, times");

	tu_write_noise(src, "s/0100", 4000, 12345);
	tu_write(src, "t/3.json", "{\"lr\": 0.0001}\n", 15);
	is_int(save_with("rt", src, 64 * KiB, 0, &s), 0, "two small files changed: save again");
	is_int(s.reused_chunks, s.chunks - 2, "everything else is referenced");
	ok(s.new_bytes > 4000 && s.new_bytes < 4000 + 15 + 600, "stored: about the two files "
	    "(%llu bytes)", (unsigned long long)s.new_bytes);
	is_int(load("rt", 1, &m), 0, "its manifest");
	mb = members_of(&m, m.entries[sr_manifest_find(&m, "m-large")].chunks[0].pack, 0);
	ok(mb.sound, "its slices too, in the old members and the new ones");
	is_int(mb.fresh, 2, "two new members: each changed file alone in its bundle");
	sr_manifest_free(&m);
	ok(restored_equal("rt", src, dst, &r), "the restore of the second is the tree changed");
	is_int(r.seq, 1, "checkpoint 1");
	free(src);
	free(dst);
}

/* Checkpoints before bundles (no_bundles: each file its own chunk) and
 * after reference each other's chunks: a file's id is its own bytes'
 * either way. */
static void
test_both_ways(void)
{
	char *src = small_tree("bw-src", 50), *dst = tu_path(top, "bw-dst");
	struct sr_ckpt_stats s, r;
	struct sr_manifest m;

	is_int(save_with("bw", src, 64 * KiB, 1, &s), 0, "save without bundles");
	is_int(load("bw", 0, &m), 0, "its manifest");
	is_int(m.version, SR_MANIFEST_VERSION, "version 2");
	is_int(members_of(&m, NULL, 1).slices, 0, "no slices");
	sr_manifest_free(&m);
	is_int(save_with("bw", src, 64 * KiB, 0, &s), 0, "then with bundles");
	is_int(s.new_bytes, 0, "nothing stored: every file is found");
	is_int(s.reused_chunks, s.chunks, "every chunk referenced");
	is_int(load("bw", 1, &m), 0, "its manifest");
	is_int(m.version, SR_MANIFEST_VERSION, "still version 2: no slices were made");
	sr_manifest_free(&m);

	is_int(save_with("bw2", src, 64 * KiB, 0, &s), 0, "a job saved with bundles");
	is_int(save_with("bw2", src, 64 * KiB, 1, &s), 0, "then without");
	is_int(s.new_bytes, 0, "nothing stored: the slices are referenced");
	is_int(load("bw2", 1, &m), 0, "its manifest");
	is_int(m.version, SR_MANIFEST_VERSION_SLICES, "version 4: it references slices");
	ok(members_of(&m, NULL, 0).sound, "which hash to their ids");
	sr_manifest_free(&m);
	ok(restored_equal("bw2", src, dst, &r), "and restore the tree");
	free(src);
	free(dst);
}

/* A bundle takes 64 files at most, however many fit in its chunk. */
static void
test_descriptors(void)
{
	char *src = tu_path(top, "fd-src"), *dst = tu_path(top, "fd-dst"), rel[32];
	struct sr_ckpt_stats s, r;
	struct sr_manifest m;
	size_t i;

	if (mkdir(src, 0755) == -1)
		sr_fatal("mkdir %s: %s", src, strerror(errno));
	for (i = 0; i < 200; i++) {
		snprintf(rel, sizeof rel, "f%03zu", i);
		tu_write_noise(src, rel, 10, i + 1);
	}
	is_int(save_with("fd", src, 1 << 20, 0, &s), 0, "save 200 files of 10 bytes");
	is_int(load("fd", 0, &m), 0, "its manifest");
	is_int(members_of(&m, NULL, 1).members, 4, "in 4 members: 64 files each at most (2 workers)");
	sr_manifest_free(&m);
	ok(restored_equal("fd", src, dst, &r), "restored");
	free(src);
	free(dst);
}

/* ---- files that change between the walk and their read ---- */

struct changes {
	const char *dir;
	int remove;		/* remove g-gone instead */
};

/* The walk is over, nothing read: change the files under the save. */
static int
change_files(void *arg, char *err)
{
	const struct changes *c = arg;
	char *p;

	(void)err;
	if (c->remove) {
		p = tu_path(c->dir, "g-gone");
		if (unlink(p) == -1)
			sr_fatal("unlink %s: %s", p, strerror(errno));
		free(p);
		return 0;
	}
	tu_write_noise(c->dir, "a-grow", 1500, 1);
	tu_write_noise(c->dir, "b-shrink", 500, 2);
	tu_write_noise(c->dir, "c-emptied", 0, 3);
	tu_write_noise(c->dir, "d-was-empty", 100, 4);
	tu_write_noise(c->dir, "m-large", 120 * KiB, 5);
	tu_write_noise(c->dir, "z2", 16 * KiB + 10, 7);
	return 0;
}

/* Whether dir/rel holds the first len bytes of seed's noise, and no more. */
static int
holds_noise(const char *dir, const char *rel, size_t len, uint64_t seed)
{
	char *p = tu_path(dir, rel), *got = NULL, err[SR_ERRMAX];
	uint8_t *want = sr_malloc(len + 1);
	size_t n = 0;
	int ok;

	tu_fill(want, len, seed);
	ok = sr_read_file(p, 1 << 20, &got, &n, err) == 0 && n == len &&
	    memcmp(got, want, len) == 0;
	if (!ok)
		printf("# %s: %zu bytes, want %zu of noise %llu\n", p, n, len,
		    (unsigned long long)seed);
	free(got);
	free(want);
	free(p);
	return ok;
}

/* Chunks of 64 KiB (bundles of files up to 16 KiB): a small file that
 * grew within its bundle's room is saved whole, one that shrank or
 * emptied as it is now, one empty at the walk and filled since as it is,
 * a large one as it is when opened, and one that grew past a full
 * bundle's room is cut there; each change said. A file removed after the walk
 * fails the save, named. */
static void
test_changed_while_saved(void)
{
	char *src = tu_path(top, "ch-src"), *dst = tu_path(top, "ch-dst"), err[SR_ERRMAX] = "";
	char rel[8];
	struct changes c = { src, 0 };
	struct sr_dir_filter f = { &c, NULL, NULL, NULL, change_files };
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s, r;
	struct sr_manifest m;
	size_t i;
	int k;

	if (mkdir(src, 0755) == -1)
		sr_fatal("mkdir %s: %s", src, strerror(errno));
	tu_write_noise(src, "a-grow", 1000, 1);
	tu_write_noise(src, "b-shrink", 2000, 2);
	tu_write_noise(src, "c-emptied", 3000, 3);
	tu_write_noise(src, "d-was-empty", 0, 4);
	tu_write_noise(src, "m-large", 100 * KiB, 5);
	for (k = 1; k <= 4; k++) {	/* a bundle of 64 KiB: no room left */
		snprintf(rel, sizeof rel, "z%d", k);
		tu_write_noise(src, rel, 16 * KiB, (uint64_t)k + 5);
	}
	opts_for(&o, "ch", 64 * KiB);
	tu_log_clear(&lg);
	is_int(sr_ckpt_save_filtered(st, &o, src, &f, -1, &s, err), 0,
	    "a save whose files change after the walk succeeds");
	if (err[0] != '\0')
		printf("# %s\n", err);
	ok(tu_log_has(&lg, "warning: \"a-grow\" changed size while being saved (1000 -> 1500 bytes)"),
	    "a small file that grew: said");
	ok(tu_log_has(&lg, "warning: \"b-shrink\" changed size while being saved (2000 -> 500 bytes)"),
	    "one that shrank: said");
	ok(tu_log_has(&lg, "warning: \"c-emptied\" changed size while being saved (3000 -> 0 bytes)"),
	    "one emptied: said");
	ok(tu_log_has(&lg, "warning: \"d-was-empty\" changed size while being saved (0 -> 100 "
	    "bytes)"), "one empty at the walk and filled since: said");
	ok(tu_log_has(&lg, "warning: \"m-large\" changed size while being saved (102400 -> 122880 "
	    "bytes)"), "a large one that grew before it was opened: said");
	ok(tu_log_has(&lg, "warning: \"z2\" changed size while being saved (16384 -> 16394 bytes): "
	    "its first 16384 bytes saved"), "one that grew past its bundle's room: said, cut");
	is_int((int)lg.n, 6, "nothing else said");
	is_int(load("ch", 0, &m), 0, "its manifest");
	for (i = 0; i < m.nentries; i++) {
		const struct sr_mentry *e = &m.entries[i];
		uint64_t want_size = strcmp(e->path, "a-grow") == 0 ? 1500 :
		    strcmp(e->path, "b-shrink") == 0 ? 500 : strcmp(e->path, "c-emptied") == 0 ? 0 :
		    strcmp(e->path, "d-was-empty") == 0 ? 100 : strcmp(e->path, "m-large") == 0 ?
		    120 * KiB : e->path[0] == 'z' ? 16 * KiB : 1;
		if (e->type == SR_MT_FILE && e->size != want_size)
			printf("# %s: size %llu, want %llu\n", e->path,
			    (unsigned long long)e->size, (unsigned long long)want_size);
		if (e->type == SR_MT_FILE && e->size != want_size)
			break;
	}
	ok(i == m.nentries, "the manifest records the sizes saved");
	sr_manifest_free(&m);
	is_int(sr_ckpt_restore(st, &o, dst, &r, err), 0, "restore it");
	ok(holds_noise(dst, "a-grow", 1500, 1), "the file that grew: whole");
	ok(holds_noise(dst, "b-shrink", 500, 2), "the one that shrank: as it is now");
	ok(holds_noise(dst, "c-emptied", 0, 3), "the one emptied: empty");
	ok(holds_noise(dst, "d-was-empty", 100, 4), "the one empty at the walk: as filled since");
	ok(holds_noise(dst, "m-large", 120 * KiB, 5), "the large one: as opened");
	ok(holds_noise(dst, "z1", 16 * KiB, 6) && holds_noise(dst, "z3", 16 * KiB, 8) &&
	    holds_noise(dst, "z4", 16 * KiB, 9), "the others of the full bundle: whole");
	ok(holds_noise(dst, "z2", 16 * KiB, 7), "the one cut: its first 16 KiB");

	/* removed after the walk, small or large: the save fails, named */
	for (k = 0; k < 2; k++) {
		tu_write_noise(src, "g-gone", k == 0 ? 100 : 100 * KiB, 9);
		c.remove = 1;
		err[0] = '\0';
		is_int(sr_ckpt_save_filtered(st, &o, src, &f, -1, &s, err), -1, k == 0 ?
		    "a small file removed after the walk fails the save" :
		    "a large one too");
		is_str(err, "open \"g-gone\": No such file or directory", "named");
	}
	free(src);
	free(dst);
}

/* What a restore says of member c of m (checkpoint 1 of dm) once damaged:
 * the first of its slices that no longer hashes to its id (NULL: none). */
static char *
damage_said(const struct sr_manifest *m, const struct sr_mchunk *c)
{
	struct sr_codec *codec = sr_codec_new(1, NULL);
	uint8_t *cbuf = sr_malloc(c->clen), *mbuf = sr_malloc(c->mlen);
	char err[SR_ERRMAX], hex[33], got[33], *said = NULL;
	uint64_t at;
	size_t i;

	if (sr_store_read_range(st, c->pack, c->offset, c->clen, cbuf, err) != 0 ||
	    sr_codec_decode(codec, cbuf, c->clen, c->xf, mbuf, c->mlen, err) != 0)
		printf("# read the member: %s\n", err);
	/* the restore writes a member's slices in the order of at */
	for (at = 0; at < c->mlen && said == NULL; at += 3000) {
		for (i = 0; i < m->nentries && said == NULL; i++) {
			const struct sr_mentry *e = &m->entries[i];
			const struct sr_mchunk *d = e->nchunks == 1 ? &e->chunks[0] : NULL;
			XXH128_canonical_t id;

			if (d == NULL || d->pack != c->pack || d->offset != c->offset || d->at != at)
				continue;
			XXH128_canonicalFromHash(&id, XXH3_128bits(mbuf + d->at, d->rlen));
			if (memcmp(id.digest, d->id, sizeof id.digest) == 0)
				continue;
			sr_hex_of(d->id, 16, hex);
			sr_hex_of(id.digest, 16, got);
			said = sr_asprintf("checkpoint 1: chunk %s of \"%s\": checksum mismatch (XXH3-128"
			    " %s, the manifest says %s); falling back to checkpoint 0", hex, e->path,
			    got, hex);
		}
	}
	free(cbuf);
	free(mbuf);
	sr_codec_free(codec);
	return said;
}

/* A shared member damaged in the pack: the file whose bytes changed fails
 * its check, and the restore takes the checkpoint before. */
static void
test_damaged(void)
{
	char *src = small_tree("dm-src", 40), *old = tu_path(top, "dm-old"), *dst;
	char *pf, *cmd, *want;
	struct sr_ckpt_stats s, r;
	struct sr_manifest m;
	const struct sr_mchunk *c = NULL;
	size_t i;
	uint64_t at;
	uint8_t byte = 0;
	int fd;

	dst = tu_path(top, "dm-dst");
	is_int(save_with("dm", src, 64 * KiB, 0, &s), 0, "checkpoint 0");
	cmd = sr_asprintf("cp -a '%s' '%s'", src, old);
	is_int(system(cmd), 0, "keep its tree");
	free(cmd);
	for (i = 0; i < 6; i++) {
		char rel[32];
		snprintf(rel, sizeof rel, "s/%04zu", i + 10);
		tu_write_noise(src, rel, 3000, 777 + i);
	}
	is_int(save_with("dm", src, 64 * KiB, 0, &s), 0, "checkpoint 1: six files changed");
	is_int(load("dm", 1, &m), 0, "its manifest");
	for (i = 0; i < m.nentries && c == NULL; i++)
		if (strcmp(m.entries[i].path, "s/0012") == 0)
			c = &m.entries[i].chunks[0];
	ok(c != NULL && c->mlen == 6 * 3000 && c->at == 2 * 3000, "s/0012 is the third slice of "
	    "the member of the six");
	if (c == NULL) {
		sr_manifest_free(&m);
		return;
	}
	pf = tu_path(storedir, c->pack);
	fd = open(pf, O_RDWR);
	/* noise is stored raw: a byte in the middle of s/0012's bytes */
	at = c->offset + c->clen * (c->at + c->rlen / 2) / c->mlen;
	ok(fd >= 0 && pread(fd, &byte, 1, (off_t)at) == 1, "read a byte of the member");
	byte ^= 0x40;
	ok(pwrite(fd, &byte, 1, (off_t)at) == 1, "flip it");
	close(fd);
	want = damage_said(&m, c);
	tu_log_clear(&lg);
	ok(restored_equal("dm", old, dst, &r), "the restore is checkpoint 0's tree");
	is_int(r.seq, 0, "checkpoint 0");
	ok(want != NULL && tu_log_has(&lg, want), "the file whose slice changed is named, with "
	    "what its bytes hash to, and the fallback");
	free(want);
	sr_manifest_free(&m);
	free(pf);
	free(src);
	free(old);
	free(dst);
}

/* A manifest written by hand whose two slices of one member disagree on
 * what it decodes to: the second, beyond the member's real bytes, is
 * decoded on its own terms and refused, not read past the member. */
static void
test_disagreeing_slices(void)
{
	char *src = small_tree("ds-src", 20), *dst = tu_path(top, "ds-dst"), *text;
	char err[SR_ERRMAX] = "";
	struct sr_ckpt_stats s, r;
	struct sr_ckpt_opts o;
	struct sr_manifest m;
	struct sr_mchunk *a = NULL, *b = NULL;
	const char *path = NULL;
	char hex[33], *want = NULL;
	size_t i, len;
	int rc;

	is_int(save_with("ds", src, 64 * KiB, 0, &s), 0, "a checkpoint of small files");
	is_int(load("ds", 0, &m), 0, "its manifest");
	for (i = 0; i < m.nentries && b == NULL; i++) {
		struct sr_mchunk *c = m.entries[i].nchunks == 1 ? &m.entries[i].chunks[0] : NULL;

		if (c == NULL || c->mlen == 0)
			continue;
		if (a == NULL)
			a = c;
		else if (c->pack == a->pack && c->offset == a->offset) {
			b = c;
			path = m.entries[i].path;
		}
	}
	ok(b != NULL, "two slices of one member");
	if (b == NULL) {
		sr_manifest_free(&m);
		return;
	}
	sr_hex_of(b->id, 16, hex);
	want = sr_asprintf("restore ds: checkpoint 0: chunk %s of \"%s\": decode chunk: frames hold "
	    "%llu bytes, expected %llu", hex, path, (unsigned long long)b->mlen,
	    (unsigned long long)b->mlen * 2);
	b->at = b->mlen;	/* past the member's real end, inside what it now says */
	b->mlen *= 2;
	text = sr_manifest_dump(&m, &len, err);
	ok(text != NULL && sr_manifest_validate(&m, "ds", 0, err) == 0 &&
	    sr_store_put(st, "ds/manifests/0000000000.json", text, len, SR_PUT_OVERWRITE, NULL, NULL,
	    err) == 0, "the manifest, which passes its checks, written over it %s", err);
	opts_for(&o, "ds", 64 * KiB);
	tu_log_clear(&lg);
	rc = sr_ckpt_restore(st, &o, dst, &r, err);
	is_int(rc, -1, "the restore refuses it");
	is_str(err, want, "decoding the member as that slice says, for that slice alone");
	free(want);
	free(text);
	sr_manifest_free(&m);
	free(src);
	free(dst);
}

int
main(void)
{
	char err[SR_ERRMAX], *url;

	top = tu_tmpdir("t-bundles");
	storedir = tu_path(top, "store");
	url = sr_asprintf("file://%s", storedir);
	if (mkdir(storedir, 0755) == -1 || sr_store_open(url, &st, err) != 0) {
		printf("Bail out! open store %s: %s\n", url, err);
		return 1;
	}
	test_round_trip();
	test_both_ways();
	test_descriptors();
	test_changed_while_saved();
	test_damaged();
	test_disagreeing_slices();
	sr_store_close(st);
	if (getenv("TU_KEEP") == NULL)
		tu_rmtree(top);
	else
		printf("# kept %s\n", top);
	tu_log_clear(&lg);
	free(lg.lines);
	free(url);
	free(storedir);
	free(top);
	return tap_done();
}
