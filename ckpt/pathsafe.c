/*
 * pathsafe.c: lexical checks of manifest paths and symbolic-link targets,
 * and a walk that opens files under a root without following any symbolic
 * link (see pathsafe.h). Everything here is lexical or fd-relative, so the
 * result does not depend on what the process's current directory is.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pathsafe.h"
#include "util.h"

/* Escape one byte into out (at least 5 bytes); returns the bytes written. */
static size_t
quote_byte(unsigned char c, char *out)
{
	switch (c) {
	case '"':
		return (size_t)snprintf(out, 5, "\\\"");
	case '\\':
		return (size_t)snprintf(out, 5, "\\\\");
	case '\n':
		return (size_t)snprintf(out, 5, "\\n");
	case '\t':
		return (size_t)snprintf(out, 5, "\\t");
	}
	if (c < 0x20 || c == 0x7f)
		return (size_t)snprintf(out, 5, "\\x%02x", c);
	out[0] = (char)c;
	return 1;
}

/* Whether s is valid UTF-8 (JSON strings must be). */
int
sr_utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p != '\0') {
		unsigned c = *p;
		int n;
		uint32_t cp;
		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else
			return 0;
		for (p++; n > 0; n--, p++) {
			if ((*p & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (*p & 0x3f);
		}
		if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
		    (cp < 0x800 && c >= 0xe0) || (cp < 0x10000 && c >= 0xf0))
			return 0;
	}
	return 1;
}

/* The bytes of s's escaped form from position `from` up to `to` (of the
 * whole escaped text) into out; returns the escaped text's length. With
 * out NULL, only the length. No allocation: messages are made on the way
 * out of an out-of-memory too. */
static size_t
quote_span(const char *s, size_t from, size_t to, char *out)
{
	char e[5];
	size_t o = 0, k, w = 0;

	for (; *s != '\0'; s++) {
		size_t n = quote_byte((unsigned char)*s, e);

		for (k = 0; out != NULL && k < n; k++) {
			if (o + k >= from && o + k < to)
				out[w++] = e[k];
		}
		o += n;
	}
	return o;
}

const char *
sr_path_quote(const char *s, char *buf, size_t len)
{
	size_t o, keep, w;

	if (len < 16) {
		if (len > 0)
			buf[0] = '\0';
		return buf;
	}
	o = quote_span(s, 0, 0, NULL);
	buf[0] = '"';
	/* Too long: keep the start and the end, which identify a path best. */
	if (o + 3 > len) {
		keep = (len - 6) / 2;
		quote_span(s, 0, keep, buf + 1);
		memcpy(buf + 1 + keep, "...", 3);
		quote_span(s, o - keep, o, buf + 4 + keep);
		w = 4 + 2 * keep;
	} else {
		quote_span(s, 0, o, buf + 1);
		w = 1 + o;
	}
	buf[w] = '"';
	buf[w + 1] = '\0';
	return buf;
}

int
sr_path_check(const char *path, char *err)
{
	const char *seg = path, *slash;
	size_t n = strlen(path);
	char q[256];

	if (n == 0)
		return sr_err(err, "path \"\": empty");
	if (path[0] == '/')
		return sr_err(err, "path %s: absolute", sr_path_quote(path, q, sizeof q));
	if (n > SR_PATH_MAX)
		return sr_err(err, "path %s: longer than %d bytes", sr_path_quote(path, q, sizeof q),
		    SR_PATH_MAX);
	for (;;) {
		size_t k;
		slash = strchr(seg, '/');
		k = slash != NULL ? (size_t)(slash - seg) : strlen(seg);
		if (k == 0)
			return sr_err(err, "path %s: empty segment", sr_path_quote(path, q, sizeof q));
		if (k == 1 && seg[0] == '.')
			return sr_err(err, "path %s: \".\" segment", sr_path_quote(path, q, sizeof q));
		if (k == 2 && seg[0] == '.' && seg[1] == '.')
			return sr_err(err, "path %s: \"..\" segment", sr_path_quote(path, q, sizeof q));
		if (k > SR_NAME_MAX)
			return sr_err(err, "path %s: segment longer than %d bytes",
			    sr_path_quote(path, q, sizeof q), SR_NAME_MAX);
		if (slash == NULL)
			return 0;
		seg = slash + 1;
	}
}

int
sr_path_check_link(const char *linkpath, const char *target,
    int (*is_link)(const char *path, void *arg), void *arg, char *err)
{
	char cur[SR_PATH_MAX * 2 + 2], ql[256], qt[256], qc[256];
	size_t depth = 0, len, k;
	const char *seg, *slash;

	sr_path_quote(linkpath, ql, sizeof ql);
	sr_path_quote(target, qt, sizeof qt);
	if (target[0] == '\0')
		return sr_err(err, "symlink %s: empty target", ql);
	if (target[0] == '/')
		return sr_err(err, "symlink %s -> %s: absolute target", ql, qt);
	if (strlen(target) > SR_PATH_MAX)
		return sr_err(err, "symlink %s: target longer than %d bytes", ql, SR_PATH_MAX);

	/* Start in the link's directory: its segments, each one level down. */
	slash = strrchr(linkpath, '/');
	len = slash != NULL ? (size_t)(slash - linkpath) : 0;
	memcpy(cur, linkpath, len);
	cur[len] = '\0';
	for (k = 0; k < len; k++)
		depth += cur[k] == '/';
	if (len > 0)
		depth++;

	for (seg = target; *seg != '\0'; seg = slash != NULL ? slash + 1 : seg + k) {
		slash = strchr(seg, '/');
		k = slash != NULL ? (size_t)(slash - seg) : strlen(seg);
		if (k == 0 || (k == 1 && seg[0] == '.')) {
			if (slash == NULL)
				break;
			continue;
		}
		if (k == 2 && seg[0] == '.' && seg[1] == '.') {
			char *up;
			if (depth == 0)
				return sr_err(err, "symlink %s -> %s: target escapes the directory", ql, qt);
			if (is_link != NULL && is_link(cur, arg))
				return sr_err(err, "symlink %s -> %s: target climbs out of symlink %s", ql,
				    qt, sr_path_quote(cur, qc, sizeof qc));
			up = strrchr(cur, '/');
			len = up != NULL ? (size_t)(up - cur) : 0;
			cur[len] = '\0';
			depth--;
		} else {
			if (len + 1 + k > sizeof cur - 1)
				return sr_err(err, "symlink %s: target too long", ql);
			if (len > 0)
				cur[len++] = '/';
			memcpy(cur + len, seg, k);
			len += k;
			cur[len] = '\0';
			depth++;
		}
		if (slash == NULL)
			break;
	}
	return 0;
}

int
sr_path_open_parent(int rootfd, const char *rel, const char **leaf, char *err)
{
	char seg[SR_NAME_MAX + 1], q[256];
	const char *p = rel, *slash;
	int fd, nfd;

	fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return sr_errno(err, "open restore root");
	while ((slash = strchr(p, '/')) != NULL) {
		size_t k = (size_t)(slash - p);
		if (k == 0 || k > SR_NAME_MAX) {
			close(fd);
			return sr_err(err, "open %s: bad path", sr_path_quote(rel, q, sizeof q));
		}
		memcpy(seg, p, k);
		seg[k] = '\0';
		nfd = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd == -1) {
			int e = errno;
			close(fd);
			errno = e;
			return sr_errno(err, "open directory of %s", sr_path_quote(rel, q, sizeof q));
		}
		close(fd);
		fd = nfd;
		p = slash + 1;
	}
	*leaf = p;
	return fd;
}

void
sr_path_dir_close(struct sr_path_dir *d)
{
	if (d->fd != -1)
		close(d->fd);
	d->fd = -1;
}

int
sr_path_dir_parent(struct sr_path_dir *d, int rootfd, const char *rel, const char **leaf,
    char *err)
{
	const char *slash = strrchr(rel, '/');
	size_t len = slash != NULL ? (size_t)(slash + 1 - rel) : 0;
	char q[256];

	if (len > SR_PATH_MAX)
		return sr_err(err, "open %s: path longer than %d bytes",
		    sr_path_quote(rel, q, sizeof q), SR_PATH_MAX);
	if (d->fd != -1 && len == d->len && memcmp(rel, d->path, len) == 0) {
		*leaf = rel + len;
		return d->fd;
	}
	sr_path_dir_close(d);
	if ((d->fd = sr_path_open_parent(rootfd, rel, leaf, err)) == -1)
		return -1;
	memcpy(d->path, rel, len);
	d->len = len;
	return d->fd;
}

int
sr_path_openat(struct sr_path_dir *d, int rootfd, const char *rel, int flags, mode_t mode,
    char *err)
{
	const char *leaf;
	char q[256];
	int dfd, fd;

	dfd = d != NULL ? sr_path_dir_parent(d, rootfd, rel, &leaf, err) :
	    sr_path_open_parent(rootfd, rel, &leaf, err);
	if (dfd == -1)
		return -1;
	fd = openat(dfd, leaf, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd == -1)
		sr_errno(err, "open %s", sr_path_quote(rel, q, sizeof q));
	if (d == NULL)
		close(dfd);
	return fd;
}

