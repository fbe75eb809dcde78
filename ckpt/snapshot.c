/*
 * snapshot.c: a directory as a snapshot (snapshot.h): save-dir.c's walk
 * with a filter that reads each directory's rule files on the way down
 * (ignore.h), leaves out what they and the caller say, and adds up the
 * bytes of each entry of the top level, to refuse a tree over its limit
 * before a byte is read; restore by id, exactly that checkpoint.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "chunkhash.h"
#include "ckpt.h"
#include "ignore.h"
#include "jobkeys.h"
#include "manifest.h"
#include "pathsafe.h"
#include "savesrc.h"
#include "snapshot.h"
#include "util.h"

/* A rule file larger than this is refused: surely not a list of patterns. */
#define RULES_MAX ((size_t)1 << 20)
/* The top-level entries a refusal names. */
#define BIGGEST 3
/* How far up its chain sr_snapshot_settle looks for the same tree. */
#define SETTLE_STEPS 8

/* An entry of the top level and the bytes of the files in it. */
struct top {
	char *name;
	int dir;
	uint64_t bytes;
};

struct snap {
	const char *dir;
	const struct sr_snapshot_opts *so;
	struct sr_ignore *ig;
	uint64_t total, files;
	struct top *tops;
	size_t ntops, cap;
	int too_big;
	int bad_rules;		/* a rule file refused: the user's to fix */
};

/* Read a rule file of directory dfd, if there is one: its text pushed. */
static int
read_rules(struct snap *s, int dfd, const char *rel, const char *name, char *err)
{
	char buf[8192], *text = NULL, q[256];
	size_t len = 0;
	ssize_t n;
	int fd, rc = 0;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd == -1)
		return 0;	/* none (or a link, a directory...): no rules */
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		char *t;

		if (len + (size_t)n > RULES_MAX) {
			rc = sr_err(err, "%s/%s: larger than %zu bytes", *rel ? rel : ".", name,
			    RULES_MAX);
			s->bad_rules = 1;
			break;
		}
		if ((t = sr_try_reallocarray(text, len + (size_t)n, 1, err)) == NULL) {
			rc = -1;
			break;
		}
		text = t;
		memcpy(text + len, buf, (size_t)n);
		len += (size_t)n;
	}
	if (n == -1 && rc == 0)
		rc = sr_errno(err, "read %s", sr_path_quote(name, q, sizeof q));
	close(fd);
	if (rc == 0 && len > 0 && (rc = sr_ignore_push(s->ig, rel, text, len, err)) == -1) {
		sr_err_prefix(err, "%s%s%s", rel, *rel != '\0' ? "/" : "", name);
		s->bad_rules = !sr_err_is_oom(err);
	}
	free(text);
	return rc;
}

static int
snap_enter(void *arg, int dfd, const char *rel, char *err)
{
	static const char *const files[] = { SR_SNAPSHOT_IGNORE_FILES };
	struct snap *s = arg;
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(files); i++)
		if (read_rules(s, dfd, rel, files[i], err) == -1)
			return -1;
	return 0;
}

static void
snap_leave(void *arg, const char *rel)
{
	struct snap *s = arg;

	sr_ignore_pop(s->ig, rel);
}

/* Count a file's bytes to its top-level entry (the walk brings the
 * entries of one in a row). */
static int
count(struct snap *s, const char *path, const struct stat *sb, char *err)
{
	size_t n = strcspn(path, "/");
	struct top *t = s->ntops > 0 ? &s->tops[s->ntops - 1] : NULL;

	if (t == NULL || strlen(t->name) != n || strncmp(t->name, path, n) != 0) {
		if (s->ntops == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 64;
			struct top *v = sr_try_reallocarray(s->tops, cap, sizeof *v, err);

			if (v == NULL)
				return -1;
			s->tops = v;
			s->cap = cap;
		}
		t = &s->tops[s->ntops];
		if ((t->name = sr_try_strndup(path, n, err)) == NULL)
			return -1;
		t->dir = path[n] == '/' || S_ISDIR(sb->st_mode);
		t->bytes = 0;
		s->ntops++;
	}
	if (S_ISREG(sb->st_mode)) {
		t->bytes += (uint64_t)sb->st_size;
		s->total += (uint64_t)sb->st_size;
		s->files++;
	}
	return 0;
}

static int
snap_skip(void *arg, const char *path, const struct stat *sb, char *err)
{
	struct snap *s = arg;
	const char *base = strrchr(path, '/');
	size_t i;

	base = base != NULL ? base + 1 : path;
	if (strcmp(base, ".git") == 0 || strcmp(base, ".spotrun") == 0)
		return 1;
	for (i = 0; i < s->so->nnever; i++)
		if (strcmp(path, s->so->never[i]) == 0)
			return 1;
	if (sr_ignore_match(s->ig, path, S_ISDIR(sb->st_mode)))
		return 1;
	return count(s, path, sb, err);
}

static int
by_bytes(const void *a, const void *b)
{
	const struct top *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Over the limit: say the total, the limit and the biggest entries. */
static int
snap_walked(void *arg, char *err)
{
	struct snap *s = arg;
	char total[32], limit[32], b[32], list[3 * 300] = "";
	size_t i, off = 0;

	if (s->so->max_bytes == 0 || s->total <= s->so->max_bytes)
		return 0;
	s->too_big = 1;
	sr_sort(s->tops, s->ntops, sizeof *s->tops, by_bytes);
	for (i = 0; i < s->ntops && i < BIGGEST && s->tops[i].bytes > 0; i++) {
		int n = snprintf(list + off, sizeof list - off, "%s%.200s%s (%s)", i ? ", " : "",
		    s->tops[i].name, s->tops[i].dir ? "/" : "",
		    sr_fmt_bytes(s->tops[i].bytes, b, sizeof b));

		if (n < 0 || (size_t)n >= sizeof list - off)
			break;
		off += (size_t)n;
	}
	return sr_err(err, "%s holds %s in %" PRIu64 " file%s, over the limit of %s; the biggest: "
	    "%s", s->dir, sr_fmt_bytes(s->total, total, sizeof total), s->files,
	    s->files == 1 ? "" : "s", sr_fmt_bytes(s->so->max_bytes, limit, sizeof limit), list);
}

int
sr_snapshot_save(struct sr_store *st, const struct sr_ckpt_opts *o, const char *dir,
    const struct sr_snapshot_opts *so, struct sr_ckpt_stats *stats, char *err)
{
	struct snap s;
	struct sr_dir_filter f = { &s, snap_enter, snap_leave, snap_skip, snap_walked };
	char why[SR_ERRMAX];
	size_t i;
	int rc = -1, tries;

	if (o->keep != 0 || o->epoch != 0 || o->part != NULL)
		return sr_err(err, "snapshot %s: a snapshot is kept, unfenced and whole (a bug)", dir);
	for (tries = 0; tries < 3; tries++) {
		memset(&s, 0, sizeof s);
		s.dir = dir;
		s.so = so;
		if ((s.ig = sr_ignore_new(err)) == NULL)
			return sr_err_prefix(err, "snapshot %s", dir);
		rc = sr_ckpt_save_filtered(st, o, dir, &f, -1, stats, why);
		sr_ignore_free(s.ig);
		for (i = 0; i < s.ntops; i++)
			free(s.tops[i].name);
		free(s.tops);
		if (s.too_big) {
			/* the walk's own words, without the save's prefix */
			const char *p = strstr(why, dir);

			strlcpy(err, p != NULL ? p : why, SR_ERRMAX);
			return SR_SNAPSHOT_TOO_BIG;
		}
		if (rc == 0)
			return 0;
		strlcpy(err, why, SR_ERRMAX);
		if (s.bad_rules)
			return SR_SNAPSHOT_BAD_RULES;
		if (sr_err_is_oom(err))
			break;
	}
	return rc == 0 ? 0 : -1;
}

char *
sr_snapshot_id(const char *chain, uint64_t seq, char *err)
{
	return sr_jobkey_manifest(chain, seq, err);
}

/* Whether two snapshots hold the same tree: every entry's path, type,
 * mode, mtime, size, target and chunk ids (where the chunks are stored,
 * pack and offset, may differ and does not matter). */
static int
same_tree(const struct sr_manifest *a, const struct sr_manifest *b)
{
	size_t i, k;

	if (a->nentries != b->nentries || a->chunk_id != b->chunk_id)
		return 0;
	for (i = 0; i < a->nentries; i++) {
		const struct sr_mentry *x = &a->entries[i], *y = &b->entries[i];

		if (strcmp(x->path, y->path) != 0 || x->type != y->type || x->mode != y->mode ||
		    x->mtime_ns != y->mtime_ns || x->size != y->size ||
		    (x->target == NULL) != (y->target == NULL) ||
		    (x->target != NULL && strcmp(x->target, y->target) != 0) ||
		    x->nchunks != y->nchunks)
			return 0;
		for (k = 0; k < x->nchunks; k++)
			if (memcmp(x->chunks[k].id, y->chunks[k].id, sizeof x->chunks[k].id) != 0)
				return 0;
	}
	return 1;
}

int
sr_snapshot_settle(struct sr_store *st, const char *chain, uint64_t seq, uint64_t *same,
    char *err)
{
	struct sr_manifest cur, up;
	int steps, rc;

	*same = seq;
	sr_manifest_init(&cur);
	if (sr_catalog_load(st, chain, seq, &cur, err) != 0) {
		sr_manifest_free(&cur);
		return sr_err_prefix(err, "snapshot %s seq %" PRIu64, chain, seq);
	}
	/* Up the chain while the tree is the same: snapshots 3, 4 and 5 of
	 * one tree all settle on 3. A few steps: a longer run of unchanged
	 * submissions costs a cache miss, never a wrong tree. */
	for (steps = 0; steps < SETTLE_STEPS && cur.link == SR_LINK_PARENT; steps++) {
		sr_manifest_init(&up);
		rc = sr_catalog_load(st, chain, cur.parent, &up, err);
		if (rc != 0 || !same_tree(&cur, &up)) {
			sr_manifest_free(&up);
			if (rc == -1) {
				sr_manifest_free(&cur);
				return sr_err_prefix(err, "snapshot %s seq %" PRIu64, chain,
				    cur.parent);
			}
			break;	/* missing or unreadable: this one stands */
		}
		*same = cur.parent;
		sr_manifest_free(&cur);
		cur = up;
	}
	sr_manifest_free(&cur);
	return 0;
}

int
sr_snapshot_restore(struct sr_store *st, const struct sr_ckpt_opts *o, const char *id,
    const char *dir, struct sr_ckpt_stats *stats, char *err)
{
	struct sr_ckpt_opts ro = *o;
	uint64_t seq;
	char *chain;
	int rc;

	if (sr_jobkey_manifest_split(id, &chain, &seq, err) == -1)
		return sr_err_prefix(err, "restore snapshot %s", id);
	if (sr_jobkey_reserved_len(chain) == 0) {
		free(chain);
		return sr_err(err, "restore snapshot %s: not under the snapshots' prefix", id);
	}
	ro.job = chain;
	rc = sr_ckpt_restore_seq(st, &ro, dir, seq, stats, err);
	free(chain);
	return rc;
}

int
sr_snapshot_cache_name(const char *url, const char *id, char out[33], char *err)
{
	struct sr_chunkhash *h = sr_chunkhash_new(err);
	uint8_t check[16];
	int rc = -1;

	if (h == NULL)
		return -1;
	if (sr_chunkhash_begin(h, SR_CH_CHECK, err) == 0 &&
	    sr_chunkhash_update(h, url, strlen(url) + 1, err) == 0 &&
	    sr_chunkhash_update(h, id, strlen(id), err) == 0 &&
	    sr_chunkhash_end(h, NULL, check, err) == 0) {
		sr_hex_of(check, sizeof check, out);
		rc = 0;
	}
	sr_chunkhash_free(h);
	return rc;
}
