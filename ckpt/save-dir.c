/*
 * save-dir.c: sr_ckpt_save, a directory snapshot into a new checkpoint:
 * the directory as a source of save.c's pipeline (savesrc.h). The walk
 * records the tree (metadata only: regular files, directories, symlinks,
 * doc/format.md "What a save records"); each file is then opened where it
 * is read: a small one by the pipeline's worker that reads it whole into
 * a bundle, a larger one by the planning thread as it cuts it into
 * chunks for the workers to pread. A filter
 * (savesrc.h, a snapshot's ignore rules) may leave entries out.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "ckpt.h"
#include "manifest.h"
#include "pathsafe.h"
#include "savesrc.h"
#include "util.h"

struct dir_src {
	int rootfd;
	struct sr_manifest *m;
	const struct sr_ckpt_opts *o;
	const struct sr_dir_filter *f;	/* NULL: everything */
	struct sr_path_dir dir;		/* dir_next's, on the planning thread */
};

/* Files up to this size are read in one or two reads, within the kernel's
 * own readahead: no POSIX_FADV_SEQUENTIAL for them. */
#define SEQ_ADVICE_MIN ((off_t)1 << 20)

static int64_t
mtime_ns(const struct stat *sb)
{
	return (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
}

static int walk_dir(struct dir_src *s, int dfd, const char *rel, char *err);

/* Record one directory entry (name in directory dfd; path from the root). */
static int
walk_one(struct dir_src *s, int dfd, const char *name, const char *path, char *err)
{
	struct sr_mentry *e;
	struct stat sb;
	char q[256], target[SR_PATH_MAX + 2];
	ssize_t n;
	int sub, rc;

	sr_path_quote(path, q, sizeof q);
	if (!sr_utf8_ok(name)) {
		sr_ckpt_say(s->o, "warning: skipping %s: name is not valid UTF-8", q);
		return 0;
	}
	if (strlen(path) > SR_PATH_MAX) {
		sr_ckpt_say(s->o, "warning: skipping %s: path longer than %d bytes", q, SR_PATH_MAX);
		return 0;
	}
	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return 0;	/* gone since the listing */
		return sr_errno(err, "stat %s", q);
	}
	if (s->f != NULL && s->f->skip != NULL &&
	    (rc = s->f->skip(s->f->arg, path, &sb, err)) != 0)
		return rc < 0 ? -1 : 0;
	if (S_ISREG(sb.st_mode)) {
		if ((e = sr_manifest_add(s->m, path, SR_MT_FILE, err)) == NULL)
			return sr_err_prefix(err, "record %s", q);
		e->size = (uint64_t)sb.st_size;
	} else if (S_ISDIR(sb.st_mode)) {
		sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub == -1)
			return sr_errno(err, "open directory %s", q);
		if ((e = sr_manifest_add(s->m, path, SR_MT_DIR, err)) == NULL) {
			close(sub);
			return sr_err_prefix(err, "record %s", q);
		}
		e->mode = sb.st_mode & 07777;
		e->mtime_ns = mtime_ns(&sb);
		rc = walk_dir(s, sub, path, err);
		close(sub);
		return rc;
	} else if (S_ISLNK(sb.st_mode)) {
		n = readlinkat(dfd, name, target, sizeof target - 1);
		if (n == -1)
			return sr_errno(err, "read symlink %s", q);
		target[n] = '\0';
		if ((size_t)n > SR_PATH_MAX || !sr_utf8_ok(target) || strlen(target) != (size_t)n) {
			sr_ckpt_say(s->o, "warning: skipping symlink %s: target too long or not UTF-8", q);
			return 0;
		}
		if (sr_path_check_link(path, target, NULL, NULL, err) == -1) {
			sr_ckpt_say(s->o, "warning: skipping %s (a restore refuses links out of the"
			    " directory)", err);
			return 0;
		}
		if ((e = sr_manifest_add(s->m, path, SR_MT_SYMLINK, err)) == NULL)
			return sr_err_prefix(err, "record %s", q);
		e->target = sr_strdup(target);
	} else {
		sr_ckpt_say(s->o, "warning: skipping %s: %s", q, sr_file_kind(sb.st_mode));
		return 0;
	}
	e->mode = sb.st_mode & 07777;
	e->mtime_ns = mtime_ns(&sb);
	return 0;
}

static int
walk_dir(struct dir_src *s, int dfd, const char *rel, char *err)
{
	struct dirent *de;
	char **names = NULL, q[256];
	size_t n = 0, cap = 0, i;
	DIR *d;
	int fd, rc = 0;

	/* Names first, then the entries: no directory stream stays open
	 * across the recursion. */
	if ((fd = dup(dfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return sr_errno(err, "open directory %s", sr_path_quote(*rel ? rel : ".", q, sizeof q));
	}
	rewinddir(d);
	if (s->f != NULL && s->f->enter != NULL && s->f->enter(s->f->arg, dfd, rel, err) == -1) {
		closedir(d);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			names = sr_reallocarray(names, cap, sizeof *names);
		}
		names[n++] = sr_strdup(de->d_name);
	}
	closedir(d);
	for (i = 0; i < n; i++) {
		char *path = *rel ? sr_asprintf("%s/%s", rel, names[i]) : sr_strdup(names[i]);
		if (rc == 0)
			rc = walk_one(s, dfd, names[i], path, err);
		free(path);
		free(names[i]);
	}
	free(names);
	if (s->f != NULL && s->f->leave != NULL)
		s->f->leave(s->f->arg, rel);
	return rc;
}

/* Drop symlinks whose target climbs out of another symlink (the restore
 * refuses those; the walk checked the rest already). */
static void
drop_link_chains(struct dir_src *s)
{
	struct sr_manifest *m = s->m;
	char err[SR_ERRMAX];
	size_t i, o = 0;

	for (i = 0; i < m->nentries; i++) {
		struct sr_mentry *e = &m->entries[i];
		if (e->type == SR_MT_SYMLINK &&
		    sr_path_check_link(e->path, e->target, sr_manifest_is_link, m, err) == -1) {
			sr_ckpt_say(s->o, "warning: skipping %s", err);
			e->path[0] = '\0';	/* marked; removed below */
		}
	}
	for (i = 0; i < m->nentries; i++) {
		if (m->entries[i].path[0] == '\0') {
			free(m->entries[i].path);
			free(m->entries[i].target);
			continue;
		}
		m->entries[o++] = m->entries[i];
	}
	m->nentries = o;
}


static int
dir_describe(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, char *err)
{
	struct dir_src *s = arg;
	size_t i;

	s->m = m;
	s->o = o;
	if (walk_dir(s, s->rootfd, "", err) == -1)
		return -1;
	if (s->f != NULL && s->f->walked != NULL && s->f->walked(s->f->arg, err) == -1)
		return -1;
	sr_manifest_sort(m);
	drop_link_chains(s);
	for (i = 0; i < m->nentries; i++)
		m->stats.files += m->entries[i].type == SR_MT_FILE;
	return 0;
}

/* The bytes of e's file now, which the walk found empty: 0 while it still
 * is, or is gone, or is no longer a regular file (then saved as walked).
 * One fstatat a file empty at the walk, none of them opened. */
static uint64_t
filled_since(struct dir_src *s, const struct sr_mentry *e)
{
	char err[SR_ERRMAX];
	const char *leaf;
	struct stat sb;
	int dfd;

	if ((dfd = sr_path_dir_parent(&s->dir, s->rootfd, e->path, &leaf, err)) == -1 ||
	    fstatat(dfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) == -1 || !S_ISREG(sb.st_mode))
		return 0;
	return (uint64_t)sb.st_size;
}

/* The next file with bytes, handed out unopened with its size as the
 * walk found it: dir_open opens it where it is read. A file the walk
 * found empty is looked at again, so that one filled since is saved as
 * it is, and said (dir_finished). */
static int
dir_next(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, size_t *cursor,
    struct sr_save_item *it, char *err)
{
	struct dir_src *s = arg;

	(void)o;
	(void)err;
	for (; *cursor < m->nentries; (*cursor)++) {
		struct sr_mentry *e = &m->entries[*cursor];
		uint64_t size;

		if (e->type != SR_MT_FILE)
			continue;
		if ((size = e->size) == 0 && (size = filled_since(s, e)) == 0)
			continue;
		it->e = e;
		it->fd = SR_SAVE_UNOPENED;
		it->mem = NULL;
		it->size = size;
		(*cursor)++;
		return 1;
	}
	return 0;
}

/* Open it's file under the root through d (the calling thread's); with
 * now, its size now is what is read. */
static int
dir_open(void *arg, struct sr_path_dir *d, struct sr_save_item *it, int now, char *err)
{
	struct dir_src *s = arg;
	struct stat sb;
	char q[256];
	int fd;

	if ((fd = sr_path_openat(d, s->rootfd, it->e->path, O_RDONLY, 0, err)) == -1)
		return -1;
	if (now) {
		if (fstat(fd, &sb) == -1) {
			sr_errno(err, "stat %s", sr_path_quote(it->e->path, q, sizeof q));
			close(fd);
			return -1;
		}
		it->size = (uint64_t)sb.st_size;
		if (sb.st_size >= SEQ_ADVICE_MIN)
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	it->fd = fd;
	return 0;
}

/* The file is drained: say if it changed size while it was saved, and
 * record what was. */
static void
dir_finished(void *arg, const struct sr_ckpt_opts *o, struct sr_save_item *it, uint64_t saved)
{
	struct sr_mentry *e = it->e;
	struct stat sb;
	uint64_t now = it->size;
	char q[256];

	(void)arg;
	if (it->fd >= 0 && fstat(it->fd, &sb) == 0)
		now = (uint64_t)sb.st_size;
	if (saved == e->size && now == saved)
		return;
	sr_path_quote(e->path, q, sizeof q);
	if (now > saved)
		sr_ckpt_say(o, "warning: %s changed size while being saved (%" PRIu64 " -> %"
		    PRIu64 " bytes): its first %" PRIu64 " bytes saved", q, e->size, now, saved);
	else
		sr_ckpt_say(o, "warning: %s changed size while being saved (%" PRIu64 " -> %"
		    PRIu64 " bytes)", q, e->size, saved);
	e->size = saved;
}

int
sr_ckpt_save(struct sr_store *st, const struct sr_ckpt_opts *opts, const char *dir,
    long long step, struct sr_ckpt_stats *stats, char *err)
{
	return sr_ckpt_save_filtered(st, opts, dir, NULL, step, stats, err);
}

int
sr_ckpt_save_filtered(struct sr_store *st, const struct sr_ckpt_opts *opts, const char *dir,
    const struct sr_dir_filter *filter, long long step, struct sr_ckpt_stats *stats, char *err)
{
	struct dir_src d = { -1, NULL, NULL, filter, SR_PATH_DIR_INIT };
	struct sr_save_src src = { &d, dir_describe, dir_next, dir_finished, dir_open, 1, 1 };
	int rc;

	if (sr_ckpt_job_check(opts->job, err) == -1)
		return -1;
	d.rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.rootfd == -1)
		return sr_errno(err, "save %s: open directory %s", opts->job, dir);
	rc = sr_ckpt_save_src(st, opts, &src, step, stats, err);
	sr_path_dir_close(&d.dir);
	close(d.rootfd);
	return rc;
}
