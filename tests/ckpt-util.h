/*
 * ckpt-util.h: helpers for the checkpoint tests (t-ckpt, t-restore-hostile):
 * temp directories, files of known content, a byte-exact comparison of two
 * trees with their metadata, and a log sink that keeps what sr_ckpt_* say.
 * Header-only, included once per test program after tap.h.
 */
#ifndef SR_CKPT_UTIL_H
#define SR_CKPT_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* Each program uses some of these helpers. */
#define TU_FN static __attribute__((unused))

/* A fresh directory under $TMPDIR (or /tmp); dies on failure. */
TU_FN char *
tu_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
	char *p = sr_asprintf("%s/%s.XXXXXX", base, tag);

	if (mkdtemp(p) == NULL)
		sr_fatal("mkdtemp %s: %s", p, strerror(errno));
	return p;
}

TU_FN char *
tu_path(const char *dir, const char *rel)
{
	return sr_asprintf("%s/%s", dir, rel);
}

TU_FN void
tu_write(const char *dir, const char *rel, const void *buf, size_t len)
{
	char *p = tu_path(dir, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd == -1 || (len > 0 && sr_write_all(fd, buf, len) == -1) || close(fd) == -1)
		sr_fatal("write %s: %s", p, strerror(errno));
	free(p);
}

/* The standard output of `sh -c cmd` (printf-style) into out, trailing
 * newlines removed; the command's status, -1 when it cannot be run. */
TU_FN int __attribute__((format(printf, 3, 4)))
tu_sh_out(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	FILE *f;
	size_t n = 0;
	int rc = -1;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) == -1)
		sr_fatal("out of memory");
	va_end(ap);
	fflush(stdout);
	if ((f = popen(cmd, "r")) != NULL) {
		n = fread(out, 1, len - 1, f);
		rc = pclose(f);
	}
	out[n] = '\0';
	while (n > 0 && out[n - 1] == '\n')
		out[--n] = '\0';
	free(cmd);
	return rc;
}

/* Deterministic noise (xorshift64*): incompressible, cheap to make. */
TU_FN void
tu_fill(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t v;
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		v = x * 0x2545F4914F6CDD1DULL;
		memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* A file of len bytes of noise from seed, written 1 MiB at a time. */
TU_FN void
tu_write_noise(const char *dir, const char *rel, size_t len, uint64_t seed)
{
	char *p = tu_path(dir, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t blk = (size_t)1 << 20, off;
	uint8_t *buf = sr_malloc(blk);

	if (fd == -1)
		sr_fatal("create %s: %s", p, strerror(errno));
	for (off = 0; off < len; off += blk) {
		size_t n = len - off < blk ? len - off : blk;
		tu_fill(buf, n, seed + off / blk);
		if (sr_write_all(fd, buf, n) == -1)
			sr_fatal("write %s: %s", p, strerror(errno));
	}
	close(fd);
	free(buf);
	free(p);
}

TU_FN void
tu_mkdir(const char *dir, const char *rel, mode_t mode)
{
	char *p = tu_path(dir, rel);

	if (mkdir(p, mode) == -1 || chmod(p, mode) == -1)
		sr_fatal("mkdir %s: %s", p, strerror(errno));
	free(p);
}

TU_FN void
tu_symlink(const char *dir, const char *rel, const char *target)
{
	char *p = tu_path(dir, rel);

	if (symlink(target, p) == -1)
		sr_fatal("symlink %s: %s", p, strerror(errno));
	free(p);
}

TU_FN void
tu_chmod(const char *dir, const char *rel, mode_t mode)
{
	char *p = tu_path(dir, rel);

	if (chmod(p, mode) == -1)
		sr_fatal("chmod %s: %s", p, strerror(errno));
	free(p);
}

/* Set the mtime of rel (not following a symlink) to sec.nsec. */
TU_FN void
tu_mtime(const char *dir, const char *rel, time_t sec, long nsec)
{
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { sec, nsec } };
	char *p = tu_path(dir, rel);

	if (utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW) == -1)
		sr_fatal("utimensat %s: %s", p, strerror(errno));
	free(p);
}

TU_FN int
tu_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir (without . and ..); *n gets the count. */
TU_FN char **
tu_names(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (d == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			v = sr_reallocarray(v, cap, sizeof *v);
		}
		v[(*n)++] = sr_strdup(de->d_name);
	}
	closedir(d);
	if (*n > 0)
		qsort(v, *n, sizeof *v, tu_name_cmp);
	return v;
}

TU_FN void
tu_names_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The names in dir joined by spaces, for exact comparisons. */
TU_FN char *
tu_ls(const char *dir)
{
	size_t n, i, len = 1;
	char **v = tu_names(dir, &n), *s;

	for (i = 0; i < n; i++)
		len += strlen(v[i]) + 1;
	s = sr_calloc(1, len);
	for (i = 0; i < n; i++) {
		if (i > 0)
			strcat(s, " ");
		strcat(s, v[i]);
	}
	tu_names_free(v, n);
	return s;
}

TU_FN int
tu_files_equal(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	char ba[65536], bb[65536];
	int same = fa != NULL && fb != NULL;

	while (same) {
		size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);
		if (na != nb || memcmp(ba, bb, na) != 0)
			same = 0;
		if (na == 0)
			break;
	}
	if (fa != NULL)
		fclose(fa);
	if (fb != NULL)
		fclose(fb);
	return same;
}

/* Compare trees a and b: names, types, modes, mtimes (ns), sizes,
 * contents, link targets. 0 if equal, else -1 with why set. */
TU_FN int
tu_tree_cmp(const char *a, const char *b, const char *rel, char *why, size_t whylen)
{
	size_t na, nb, i;
	char **va, **vb;
	int rc = 0;

	va = tu_names(a, &na);
	vb = tu_names(b, &nb);
	if (na != nb) {
		snprintf(why, whylen, "%s: %zu entries vs %zu", *rel ? rel : ".", na, nb);
		rc = -1;
	}
	for (i = 0; rc == 0 && i < na; i++) {
		char *pa = tu_path(a, va[i]), *pb = tu_path(b, vb[i]);
		char *r = *rel ? sr_asprintf("%s/%s", rel, va[i]) : sr_strdup(va[i]);
		struct stat sa, sb;

		if (strcmp(va[i], vb[i]) != 0) {
			snprintf(why, whylen, "%s: name %s vs %s", *rel ? rel : ".", va[i], vb[i]);
			rc = -1;
		} else if (lstat(pa, &sa) == -1 || lstat(pb, &sb) == -1) {
			snprintf(why, whylen, "%s: lstat failed", r);
			rc = -1;
		} else if ((sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT)) {
			snprintf(why, whylen, "%s: type %o vs %o", r, sa.st_mode & S_IFMT,
			    sb.st_mode & S_IFMT);
			rc = -1;
		} else if (!S_ISLNK(sa.st_mode) && (sa.st_mode & 07777) != (sb.st_mode & 07777)) {
			snprintf(why, whylen, "%s: mode %o vs %o", r, sa.st_mode & 07777,
			    sb.st_mode & 07777);
			rc = -1;
		} else if (sa.st_mtim.tv_sec != sb.st_mtim.tv_sec ||
		    sa.st_mtim.tv_nsec != sb.st_mtim.tv_nsec) {
			snprintf(why, whylen, "%s: mtime %lld.%09ld vs %lld.%09ld", r,
			    (long long)sa.st_mtim.tv_sec, sa.st_mtim.tv_nsec,
			    (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
			rc = -1;
		} else if (S_ISREG(sa.st_mode) && (sa.st_size != sb.st_size || !tu_files_equal(pa, pb))) {
			snprintf(why, whylen, "%s: contents differ", r);
			rc = -1;
		} else if (S_ISLNK(sa.st_mode)) {
			char ta[4096], tb[4096];
			ssize_t la = readlink(pa, ta, sizeof ta - 1), lb = readlink(pb, tb, sizeof tb - 1);
			ta[la < 0 ? 0 : la] = tb[lb < 0 ? 0 : lb] = '\0';
			if (la < 0 || lb < 0 || strcmp(ta, tb) != 0) {
				snprintf(why, whylen, "%s: target %s vs %s", r, ta, tb);
				rc = -1;
			}
		} else if (S_ISDIR(sa.st_mode))
			rc = tu_tree_cmp(pa, pb, r, why, whylen);
		free(pa);
		free(pb);
		free(r);
	}
	tu_names_free(va, na);
	tu_names_free(vb, nb);
	return rc;
}

/* A log sink for opts->log: keeps every line. */
struct tu_log {
	char **lines;
	size_t n, cap;
};

TU_FN void
tu_log_fn(void *arg, const char *msg)
{
	struct tu_log *l = arg;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->lines = sr_reallocarray(l->lines, l->cap, sizeof *l->lines);
	}
	l->lines[l->n++] = sr_strdup(msg);
	if (getenv("TU_VERBOSE") != NULL)
		printf("# log: %s\n", msg);
}

TU_FN void
tu_log_clear(struct tu_log *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->lines[i]);
	l->n = 0;
}

/* Whether some line equals want. */
TU_FN int
tu_log_has(const struct tu_log *l, const char *want)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->lines[i], want) == 0)
			return 1;
	}
	for (i = 0; i < l->n; i++)
		printf("# have: %s\n", l->lines[i]);
	printf("# want: %s\n", want);
	return 0;
}

/* rm -rf, for cleanup. */
TU_FN void
tu_rmtree(const char *p)
{
	char err[SR_ERRMAX], *cmd = sr_asprintf("chmod -R u+rwX '%s' 2>/dev/null", p);

	/* read-only directories of the tests: removable without root too */
	if (system(cmd) != 0)
		printf("# cleanup: %s failed\n", cmd);
	free(cmd);
	if (sr_rmtree(p, err) == -1)
		printf("# cleanup: %s\n", err);
}

#endif
