/*
 * data.c: a job's [data] fetched into this machine's cache and linked
 * into place (data.h). Each URL has its folder in the cache, named by a
 * hash of the URL:
 *   H.lock    a flock: one fetch of H at a time on the machine;
 *   H/tree/   the objects, files 0444 in folders 0555 (made writable
 *             only while a fetch changes them): a folder URL's objects by
 *             their keys under the prefix, one object's by its name;
 *   H/manifest  a line per object, "ETAG SIZE MTIME KEY": what the store
 *             said when it was fetched, and the mtime its file got;
 *             appended to after each object, rewritten whole at the end
 *             (a torn last line is not read, so a stopped fetch keeps
 *             what it finished and nothing else);
 *   H/tmp-*   an object being fetched, renamed into tree/ when whole.
 * An object is cached when the manifest has its ETag and size and its
 * file still has that size and mtime: a file changed under the cache
 * (root ignores the modes) is fetched again, not handed to the next job.
 * The destination is a symlink to H/tree (or to the one object in it),
 * not a copy: a data set is often most of the disk, and a copy per job
 * would double both the disk and the time.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chunksum.h"
#include "data.h"
#include "provider.h"
#include "util.h"

#define PIECE		((size_t)8 << 20)	/* bytes of one ranged read */
#define SAY_EVERY	10.0			/* seconds between progress lines */

/* One object of an entry: its key under the URL (the path in tree/). */
struct obj {
	char *rel;
	char etag[SR_ETAG_MAX];
	uint64_t size;
	long long msec, mnsec;	/* the manifest's: its file's mtime */
	int todo;		/* not cached: to fetch */
};

struct objs {
	struct obj *v;
	size_t n, cap;
};

/* One entry's fetch. */
struct fetch {
	const struct sr_data_opts *o;
	const struct sr_jobspec *js;
	const struct sr_data_entry *d;
	struct sr_data_result *res;
	char *dir;		/* cache/H */
	char *name;		/* one object's key (NULL: a folder) */
	struct objs list;	/* what the store has, in key order */
	int file_found;		/* an object named name itself */
	uint64_t want_bytes, got_bytes;
	double t0, said;
	char *buf;
	char bad[64];		/* a key that cannot be a path, shown */
};

static void
say(const struct fetch *f, const char *fmt, ...) SR_PRINTF(2, 3);

static void
say(const struct fetch *f, const char *fmt, ...)
{
	char line[SR_ERRMAX + 200];
	va_list ap;

	if (f->o->say == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	f->o->say(f->o->arg, line);
}

static int
stopped(const struct fetch *f)
{
	return f->o->stop != NULL && f->o->stop(f->o->arg);
}

static void
objs_free(struct objs *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].rel);
	free(l->v);
	memset(l, 0, sizeof *l);
}

static struct obj *
objs_add(struct objs *l, const char *rel)
{
	struct obj *ob;

	l->v = sr_grow(l->v, l->n + 1, &l->cap, sizeof *l->v);
	ob = &l->v[l->n++];
	memset(ob, 0, sizeof *ob);
	ob->rel = sr_strdup(rel);
	return ob;
}

static int
obj_cmp(const void *a, const void *b)
{
	return strcmp(((const struct obj *)a)->rel, ((const struct obj *)b)->rel);
}

/* Whether a key can be a path under tree/: no empty, "." or ".." segment,
 * no control character (the manifest is lines). */
static int
key_ok(const char *rel)
{
	const char *s;

	for (s = rel; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	}
	for (s = rel;;) {
		size_t n = strcspn(s, "/");

		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		if (s[n] == '\0')
			return 1;
		s += n + 1;
	}
}

/* An ETag as the manifest holds it: one word. */
static void
etag_word(const char *etag, char *out)
{
	size_t i;

	for (i = 0; etag[i] != '\0' && i < SR_ETAG_MAX - 1; i++)
		out[i] = (unsigned char)etag[i] <= ' ' ? '_' : etag[i];
	out[i] = '\0';
}

/* ---- listing ---- */

static int
on_object(const struct sr_object_info *info, void *arg)
{
	struct fetch *f = arg;
	const char *rel = info->key;
	struct obj *ob;
	size_t n;

	if (f->name != NULL) {
		n = strlen(f->name);
		if (strcmp(rel, f->name) == 0) {
			f->file_found = 1;
		} else if (strncmp(rel, f->name, n) == 0 && rel[n] == '/') {
			rel += n + 1;
		} else {
			return 0;	/* "namex": another object */
		}
	}
	n = strlen(rel);
	if (n > 0 && rel[n - 1] == '/' && info->size == 0)
		return 0;	/* a console's "folder" marker */
	if (!key_ok(rel)) {
		snprintf(f->bad, sizeof f->bad, "%.60s", info->key);
		for (n = 0; f->bad[n] != '\0'; n++)
			if ((unsigned char)f->bad[n] < 0x20 || f->bad[n] == 0x7f)
				f->bad[n] = '?';
		f->res->permanent = 1;
		return -2;
	}
	ob = objs_add(&f->list, rel);
	etag_word(info->etag, ob->etag);
	ob->size = info->size;
	return 0;
}

/* The store of the entry's URL and what the listing asks: the URL itself
 * for a folder (ending in '/', or a bucket), else its parent, the last
 * segment the name (a file, or a folder when objects are under it). */
static int
open_source(struct fetch *f, struct sr_store **st, char *err)
{
	const char *url = f->d->url, *q = url + strcspn(url, "?"), *root, *slash = NULL, *s;
	const char *pname = f->js->provider.name;
	struct sr_provider_kind kind;
	struct sr_store_opts so;
	char *parent;
	int rc;

	/* as the run's store: no metadata address with a provider that asks none */
	memset(&so, 0, sizeof so);
	so.no_metadata = sr_provider_kind(pname != NULL ? pname : "auto", &kind) == 0 &&
	    !kind.metadata;

	root = strstr(url, "://");
	root = root != NULL && root < q ? root + 3 : url;
	for (s = root; s < q; s++)
		if (*s == '/')
			slash = s;
	if (slash == NULL || slash + 1 == q)
		return sr_store_open_with(url, &so, st, err);
	f->name = sr_strndup(slash + 1, (size_t)(q - slash - 1));
	/* file:///x: the parent is "/", which file:// writes "file:///" */
	parent = sr_asprintf("%.*s%s", (int)(slash - url + (slash == root)), url, q);
	rc = sr_store_open_with(parent, &so, st, err);
	free(parent);
	return rc;
}

/* ---- the cache ---- */

static int
read_manifest(const char *path, struct objs *m)
{
	char err[SR_ERRMAX], *text = NULL, *line, *next;
	size_t len;

	if (sr_read_file(path, (size_t)1 << 30, &text, &len, err) == -1)
		return 0;	/* none yet (or unreadable): nothing is cached */
	for (line = text; line < text + len; line = next) {
		char etag[SR_ETAG_MAX], *nl = memchr(line, '\n', (size_t)(text + len - line));
		unsigned long long size;
		long long ms, mns;
		int off = 0;

		if (nl == NULL)
			break;	/* a torn last line */
		*nl = '\0';
		next = nl + 1;
		if (sscanf(line, "%127s %llu %lld.%lld %n", etag, &size, &ms, &mns, &off) == 4 &&
		    off > 0 && line[off] != '\0') {
			struct obj *ob = objs_add(m, line + off);

			snprintf(ob->etag, sizeof ob->etag, "%s", etag);
			ob->size = size;
			ob->msec = ms;
			ob->mnsec = mns;
		}
	}
	free(text);
	/* sorted, the last line of a key winning: a stable sort keeps file
	 * order within a key, and duplicates then go to the last */
	if (m->n > 1) {
		size_t i, o = 0;

		for (i = 1; i < m->n; i++) {	/* insertion sort is stable */
			struct obj t = m->v[i];
			size_t j = i;

			while (j > 0 && strcmp(m->v[j - 1].rel, t.rel) > 0) {
				m->v[j] = m->v[j - 1];
				j--;
			}
			m->v[j] = t;
		}
		for (i = 0; i < m->n; i++) {
			if (i + 1 < m->n && strcmp(m->v[i].rel, m->v[i + 1].rel) == 0) {
				free(m->v[i].rel);
				continue;
			}
			m->v[o++] = m->v[i];
		}
		m->n = o;
	}
	return 0;
}

static const struct obj *
find(const struct objs *m, const char *rel)
{
	struct obj key = { .rel = (char *)rel };

	return m->n == 0 ? NULL : bsearch(&key, m->v, m->n, sizeof *m->v, obj_cmp);
}

/* Whether tree/rel is what the manifest line m says. */
static int
still_cached(const char *tree, const struct obj *want, const struct obj *m)
{
	struct stat sb;
	char *path;
	int ok;

	if (m == NULL || want->etag[0] == '\0' || strcmp(m->etag, want->etag) != 0 ||
	    m->size != want->size)
		return 0;
	path = sr_asprintf("%s/%s", tree, want->rel);
	ok = lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size == m->size &&
	    (long long)sb.st_mtim.tv_sec == m->msec && (long long)sb.st_mtim.tv_nsec == m->mnsec;
	free(path);
	return ok;
}

/* Every folder of tree mode (0755 while a fetch changes it, else 0555);
 * what cannot be changed stays (a fetch into it then says why). */
static void
tree_chmod(const char *tree, mode_t mode)
{
	struct dirent *de;
	struct stat sb;
	DIR *dir;

	(void)chmod(tree, mode | S_IRWXU);	/* readable to walk */
	if ((dir = opendir(tree)) != NULL) {
		while ((de = readdir(dir)) != NULL) {
			char *p;

			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			p = sr_asprintf("%s/%s", tree, de->d_name);
			if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
				tree_chmod(p, mode);
			free(p);
		}
		closedir(dir);
	}
	(void)chmod(tree, mode);
}

/* The folders tree/rel lives in. */
static int
make_parents(const char *tree, const char *rel, char *err)
{
	char *p = sr_asprintf("%s/%s", tree, rel), *s = strrchr(p, '/');
	int rc = 0;

	*s = '\0';
	rc = sr_mkdirs(p, 0755, err);
	free(p);
	return rc;
}

/* A local error's errno: a full disk, or one this machine cannot get
 * past without a person, is permanent. */
static void
local_error(struct fetch *f, int e)
{
	if (e == ENOSPC || e == EDQUOT || e == EACCES || e == EPERM || e == EROFS)
		f->res->permanent = 1;
}

/* Fetch ob into tree/ob->rel through a temp file: 0, 1 stopped, -1 err. */
static int
fetch_one(struct fetch *f, struct sr_store *st, const char *tree, struct obj *ob, FILE *man,
    char *err)
{
	char *tmp = sr_asprintf("%s/tmp-XXXXXX", f->dir), *dst = NULL, *key, etag[SR_ETAG_MAX];
	uint64_t off = 0;
	struct stat sb;
	int fd, rc = -1;

	key = f->name == NULL ? sr_strdup(ob->rel) : f->file_found ? sr_strdup(f->name) :
	    sr_asprintf("%s/%s", f->name, ob->rel);
	if ((fd = mkstemp(tmp)) == -1) {
		local_error(f, errno);
		sr_errno(err, "create %s", tmp);
		goto out;
	}
	while (off < ob->size) {
		size_t n = ob->size - off < PIECE ? (size_t)(ob->size - off) : PIECE;
		const char *p = f->buf;
		size_t left = n;

		if (stopped(f)) {
			rc = 1;
			goto out;
		}
		if (sr_store_read_range(st, key, off, n, f->buf, err) != 0) {
			f->res->permanent = sr_store_err_permanent(err);
			goto out;
		}
		while (left > 0) {
			ssize_t w = write(fd, p, left);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				local_error(f, errno);
				sr_errno(err, "write %s", tmp);
				goto out;
			}
			p += w;
			left -= (size_t)w;
		}
		off += n;
		f->got_bytes += n;
		if (sr_mono() - f->said >= SAY_EVERY) {
			char a[32], b[32];

			f->said = sr_mono();
			say(f, "data: %s: %s of %s fetched", f->d->dest,
			    sr_fmt_bytes(f->got_bytes, a, sizeof a), sr_fmt_bytes(f->want_bytes, b, sizeof b));
		}
	}
	if (fchmod(fd, 0444) == -1 || fdatasync(fd) == -1) {
		local_error(f, errno);
		sr_errno(err, "write %s", tmp);
		goto out;
	}
	if (make_parents(tree, ob->rel, err) == -1) {
		local_error(f, errno);
		goto out;
	}
	dst = sr_asprintf("%s/%s", tree, ob->rel);
	if (rename(tmp, dst) == -1) {
		local_error(f, errno);
		sr_errno(err, "rename %s to %s", tmp, dst);
		goto out;
	}
	free(tmp);
	tmp = NULL;
	if (lstat(dst, &sb) == -1) {
		sr_errno(err, "stat %s", dst);
		goto out;
	}
	ob->msec = (long long)sb.st_mtim.tv_sec;
	ob->mnsec = (long long)sb.st_mtim.tv_nsec;
	etag_word(ob->etag, etag);
	if (man != NULL) {
		fprintf(man, "%s %" PRIu64 " %lld.%09lld %s\n", etag[0] ? etag : "-", ob->size,
		    ob->msec, ob->mnsec, ob->rel);
		fflush(man);
	}
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	if (tmp != NULL)
		unlink(tmp);
	free(tmp);
	free(dst);
	free(key);
	return rc;
}

/* The manifest of the objects now in the cache, written whole. */
static int
write_manifest(const char *path, const struct objs *l, char *err)
{
	char *text = NULL;
	size_t len = 0, cap = 0, i;
	int rc;

	for (i = 0; i < l->n; i++) {
		const struct obj *ob = &l->v[i];
		char line[SR_ETAG_MAX + 80];
		int n;

		if (ob->etag[0] == '\0')
			continue;	/* no ETag: fetched every time */
		n = snprintf(line, sizeof line, "%s %" PRIu64 " %lld.%09lld ", ob->etag, ob->size,
		    ob->msec, ob->mnsec);
		text = sr_grow(text, len + (size_t)n + strlen(ob->rel) + 2, &cap, 1);
		memcpy(text + len, line, (size_t)n);
		len += (size_t)n;
		memcpy(text + len, ob->rel, strlen(ob->rel));
		len += strlen(ob->rel);
		text[len++] = '\n';
	}
	rc = sr_write_file_atomic(path, text != NULL ? text : "", len, 1, err);
	free(text);
	return rc;
}

/* Take H.lock, asking o->stop meanwhile: the fd, -2 stopped, -1 err. */
static int
lock_cache(struct fetch *f, const char *path, char *err)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644), said = 0;

	if (fd == -1) {
		local_error(f, errno);
		return sr_errno(err, "open %s", path);
	}
	while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			sr_errno(err, "lock %s", path);
			close(fd);
			return -1;
		}
		if (!said++)
			say(f, "data: %s: waiting for another job of this machine fetching %s",
			    f->d->dest, f->d->url);
		if (stopped(f)) {
			close(fd);
			return -2;
		}
		sr_sleep(0.2);
	}
	return fd;
}

/* Sync the cache's tree with the listing: 0, 1 stopped, -1 err. */
static int
sync_tree(struct fetch *f, struct sr_store *st, const char *tree, char *err)
{
	char *mpath = sr_asprintf("%s/manifest", f->dir);
	struct objs m = { NULL, 0, 0 };
	size_t i, nfetch = 0;
	long removed = 0;
	FILE *man = NULL;
	char a[32], b[32];
	int rc = 0, changing = 0;

	read_manifest(mpath, &m);
	for (i = 0; i < f->list.n; i++) {
		struct obj *ob = &f->list.v[i];
		const struct obj *had = find(&m, ob->rel);

		if (still_cached(tree, ob, had)) {
			ob->msec = had->msec;
			ob->mnsec = had->mnsec;
			f->res->cached++;
			f->res->bytes_cached += ob->size;
			continue;
		}
		ob->todo = 1;
		nfetch++;
		f->want_bytes += ob->size;
	}
	for (i = 0; i < m.n; i++)
		if (find(&f->list, m.v[i].rel) == NULL)
			removed++;
	say(f, "data: %s <- %s: %zu object%s (%zu to fetch, %s)", f->d->dest, f->d->url,
	    f->list.n, f->list.n == 1 ? "" : "s", nfetch, sr_fmt_bytes(f->want_bytes, a, sizeof a));
	if (nfetch == 0 && removed == 0)
		goto out;
	changing = 1;
	if (sr_mkdirs(tree, 0755, err) == -1) {
		local_error(f, errno);
		rc = -1;
		goto out;
	}
	tree_chmod(tree, 0755);
	if ((man = fopen(mpath, "a")) == NULL) {
		local_error(f, errno);
		rc = sr_errno(err, "open %s", mpath);
		goto out;
	}
	f->buf = sr_malloc(PIECE);
	for (i = 0; i < f->list.n && rc == 0; i++) {
		struct obj *ob = &f->list.v[i];

		if (!ob->todo)
			continue;
		rc = fetch_one(f, st, tree, ob, man, err);
		if (rc == 0) {
			f->res->fetched++;
			f->res->bytes_fetched += ob->size;
		}
	}
	if (rc != 0)
		goto out;
	for (i = 0; i < m.n; i++) {
		if (find(&f->list, m.v[i].rel) == NULL) {
			char *p = sr_asprintf("%s/%s", tree, m.v[i].rel);

			if (unlink(p) == 0)
				f->res->removed++;
			free(p);
		}
	}
	fclose(man);
	man = NULL;
	rc = write_manifest(mpath, &f->list, err);
	if (rc == -1)
		local_error(f, errno);
out:
	if (man != NULL)
		fclose(man);
	if (changing)
		tree_chmod(tree, 0555);
	if (rc == 0)
		say(f, "data: %s: %zu fetched (%s), %zu cached, %ld removed, %.1f s", f->d->dest,
		    nfetch, sr_fmt_bytes(f->want_bytes, b, sizeof b), f->list.n - nfetch, removed,
		    sr_mono() - f->t0);
	objs_free(&m);
	free(mpath);
	free(f->buf);
	f->buf = NULL;
	return rc;
}

/* The entry's destination a symlink to target, replacing only a symlink. */
static int
link_dest(struct fetch *f, const char *dest, const char *target, char *err)
{
	char *tmp = sr_asprintf("%s.spotrun-link", dest), *parent = sr_strdup(dest);
	struct stat sb;
	int rc = -1;

	*strrchr(parent, '/') = '\0';
	if (lstat(dest, &sb) == 0 && !S_ISLNK(sb.st_mode)) {
		f->res->permanent = 1;
		sr_err(err, "%s is %s, not the link spotrun makes; remove it or choose another "
		    "destination", dest, sr_file_kind(sb.st_mode));
		goto out;
	}
	if (parent[0] != '\0' && sr_mkdirs(parent, 0755, err) == -1) {
		local_error(f, errno);
		goto out;
	}
	(void)unlink(tmp);
	if (symlink(target, tmp) == -1 || rename(tmp, dest) == -1) {
		local_error(f, errno);
		sr_errno(err, "link %s to %s", dest, target);
		(void)unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	free(parent);
	return rc;
}

/* One entry: 0, 1 stopped, -1 err (not yet prefixed with the entry). */
static int
entry(struct fetch *f, const struct sr_jobspec *js, char *err)
{
	const struct sr_data_entry *d = f->d;
	struct sr_object_info info;
	char hex[33], *lockp, *tree, *dest, *target;
	struct sr_store *st = NULL;
	uint8_t h[16];
	int fd, rc = -1, lr;

	sr_chunksum(d->url, strlen(d->url), h);
	sr_hex_of(h, sizeof h, hex);
	f->dir = sr_asprintf("%s/%s", f->o->cache, hex);
	lockp = sr_asprintf("%s.lock", f->dir);
	tree = sr_asprintf("%s/tree", f->dir);
	dest = d->dest[0] == '/' ? sr_strdup(d->dest) : sr_asprintf("%s/%s",
	    strcmp(js->workdir, "/") == 0 ? "" : js->workdir, d->dest);
	target = NULL;
	if (sr_mkdirs(f->dir, 0755, err) == -1) {
		local_error(f, errno);
		goto out;
	}
	if ((fd = lock_cache(f, lockp, err)) < 0) {
		rc = fd == -2 ? 1 : -1;
		goto out;
	}
	if (open_source(f, &st, err) == -1) {
		f->res->permanent = sr_store_err_permanent(err);
		goto unlock;
	}
	lr = sr_store_list(st, f->name != NULL ? f->name : "", on_object, f, err);
	if (lr == -2) {
		sr_err(err, "object %s: its key is not a path this machine can write (an empty, "
		    "\".\" or \"..\" segment, or a control character); rename it", f->bad);
		goto unlock;
	}
	if (lr != 0) {
		f->res->permanent = sr_store_err_permanent(err);
		goto unlock;
	}
	if (f->file_found) {
		/* one object: what else is under "name/" is not this entry's */
		objs_free(&f->list);
		objs_add(&f->list, f->name);
		memset(&info, 0, sizeof info);
		if (sr_store_head(st, f->name, &info, err) != 0) {
			f->res->permanent = sr_store_err_permanent(err);
			goto unlock;
		}
		etag_word(info.etag, f->list.v[0].etag);
		f->list.v[0].size = info.size;
	}
	if (f->list.n == 0) {
		f->res->permanent = 1;
		sr_err(err, "no object there, and none under it; check the bucket and the path "
		    "(a folder's URL ends in '/')");
		goto unlock;
	}
	sr_sort(f->list.v, f->list.n, sizeof *f->list.v, obj_cmp);
	rc = sync_tree(f, st, tree, err);
	if (rc == 0) {
		target = f->file_found ? sr_asprintf("%s/%s", tree, f->name) : sr_strdup(tree);
		rc = link_dest(f, dest, target, err);
	}
unlock:
	close(fd);
out:
	if (st != NULL)
		sr_store_close(st);
	free(lockp);
	free(tree);
	free(dest);
	free(target);
	return rc;
}

int
sr_data_fetch(const struct sr_jobspec *js, const struct sr_data_opts *o,
    struct sr_data_result *res, char *err)
{
	size_t i;
	int rc = 0;

	memset(res, 0, sizeof *res);
	if (js->ndata > 0 && sr_mkdirs(o->cache, 0755, err) == -1) {
		res->permanent = errno == ENOSPC || errno == EACCES || errno == EROFS;
		return -1;
	}
	for (i = 0; i < js->ndata && rc == 0; i++) {
		struct fetch f;

		memset(&f, 0, sizeof f);
		f.o = o;
		f.js = js;
		f.d = &js->data[i];
		f.res = res;
		f.t0 = f.said = sr_mono();
		rc = entry(&f, js, err);
		if (rc == -1)
			sr_err_prefix(err, "[data] %s = %s", f.d->dest, f.d->url);
		res->stopped = rc == 1;
		objs_free(&f.list);
		free(f.dir);
		free(f.name);
	}
	return rc;
}
