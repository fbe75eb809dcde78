/*
 * util.c: the helpers declared in util.h: error buffers, allocation,
 * clocks, human-readable formatting and small file-system operations.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int
sr_err(char *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, SR_ERRMAX, fmt, ap);
	va_end(ap);
	return -1;
}

int
sr_errno(char *err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	size_t n;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, SR_ERRMAX, fmt, ap);
	va_end(ap);
	n = strlen(err);
	snprintf(err + n, SR_ERRMAX - n, ": %s", strerror(saved));
	errno = saved;
	return -1;
}

int
sr_err_prefix(char *err, const char *fmt, ...)
{
	char prefix[SR_ERRMAX], old[SR_ERRMAX];
	va_list ap;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	strlcpy(old, err, sizeof old);
	snprintf(err, SR_ERRMAX, "%s: %s", prefix, old);
	return -1;
}

void
sr_fatal(const char *fmt, ...)
{
	va_list ap;

	fputs("spotrun: fatal: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void *
sr_try_malloc(size_t n, char *err)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		sr_err(err, "allocate %zu bytes: " SR_OOM_TEXT, n);
	return p;
}

#define HUGE_PAGE ((size_t)2 << 20)

void *
sr_try_bigbuf(size_t n, size_t touch, char *err)
{
	size_t align = 4096, len = n ? n : 1;
	void *p;

	if (n >= SR_BIG_MIN && touch >= SR_BIG_MIN && n <= SIZE_MAX - HUGE_PAGE) {
		align = HUGE_PAGE;
		len = (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	}
	/* posix_memalign, not a mapping of our own: free() releases it, the
	 * out-of-memory tests' allocator counts it, and ASan guards it. */
	if (posix_memalign(&p, align, len) != 0) {
		sr_err(err, "allocate %zu bytes: " SR_OOM_TEXT, n);
		return NULL;
	}
	if (align == HUGE_PAGE)
		(void)madvise(p, len, MADV_HUGEPAGE);	/* advice: EINVAL without THP */
	return p;
}

void *
sr_try_calloc(size_t n, size_t size, char *err)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size) {
		sr_err(err, "allocate %zu x %zu bytes: " SR_OOM_TEXT " (the size overflows)", n, size);
		return NULL;
	}
	if ((p = calloc(n ? n : 1, size ? size : 1)) == NULL)
		sr_err(err, "allocate %zu x %zu bytes: " SR_OOM_TEXT, n, size);
	return p;
}

void *
sr_try_reallocarray(void *p, size_t n, size_t size, char *err)
{
	void *q;

	if (size != 0 && n > SIZE_MAX / size) {
		sr_err(err, "allocate %zu x %zu bytes: " SR_OOM_TEXT " (the size overflows)", n, size);
		return NULL;
	}
	if ((q = realloc(p, n != 0 && size != 0 ? n * size : 1)) == NULL)
		sr_err(err, "allocate %zu bytes: " SR_OOM_TEXT, n * size);
	return q;
}

char *
sr_try_strndup(const char *s, size_t n, char *err)
{
	size_t len = strnlen(s, n);
	char *p = sr_try_malloc(len + 1, err);

	if (p != NULL) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

char *
sr_try_strdup(const char *s, char *err)
{
	return sr_try_strndup(s, SIZE_MAX, err);
}

/* vasprintf's work with the allocation made here (see sr_try_malloc). */
static char *
try_vasprintf(char *err, const char *fmt, va_list ap)
{
	va_list again;
	char *s;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	if (n < 0) {
		sr_errno(err, "format a string");
		return NULL;
	}
	if ((s = sr_try_malloc((size_t)n + 1, err)) != NULL)
		vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *
sr_try_asprintf(char *err, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = try_vasprintf(err, fmt, ap);
	va_end(ap);
	return s;
}

int
sr_err_oom(char *err, const char *what)
{
	return sr_err(err, "%s: " SR_OOM_TEXT, what);
}

int
sr_err_is_oom(const char *err)
{
	return err != NULL && strstr(err, SR_OOM_TEXT) != NULL;
}

/* The dying family: the fallible one above, and sr_fatal with its message. */
static void *
or_die(void *p, const char *err)
{
	if (p == NULL)
		sr_fatal("%s", err);
	return p;
}

void *
sr_malloc(size_t n)
{
	char err[SR_ERRMAX];

	return or_die(sr_try_malloc(n, err), err);
}

void *
sr_calloc(size_t n, size_t size)
{
	char err[SR_ERRMAX];

	return or_die(sr_try_calloc(n, size, err), err);
}

void *
sr_realloc(void *p, size_t n)
{
	char err[SR_ERRMAX];

	return or_die(sr_try_reallocarray(p, n, 1, err), err);
}

void *
sr_reallocarray(void *p, size_t n, size_t size)
{
	char err[SR_ERRMAX];

	return or_die(sr_try_reallocarray(p, n, size, err), err);
}

void
sr_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

void *
sr_grow(void *p, size_t n, size_t *cap, size_t size)
{
	char err[SR_ERRMAX];

	if (n < *cap)
		return p;
	*cap = *cap > 0 ? *cap * 2 : 16;
	if (*cap <= n)
		*cap = n + 1;
	return or_die(sr_try_reallocarray(p, *cap, size, err), err);
}

char *
sr_strdup(const char *s)
{
	char err[SR_ERRMAX];

	return or_die(sr_try_strdup(s, err), err);
}

char *
sr_strndup(const char *s, size_t n)
{
	char err[SR_ERRMAX];

	return or_die(sr_try_strndup(s, n, err), err);
}

char *
sr_asprintf(const char *fmt, ...)
{
	char err[SR_ERRMAX];
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = try_vasprintf(err, fmt, ap);
	va_end(ap);
	return or_die(s, err);
}

double
sr_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double
sr_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void
sr_sleep(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

const char *
sr_fmt_duration(double s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s < 1)
		snprintf(buf, len, "%.0fms", s * 1000);
	else if (s < 60)
		snprintf(buf, len, "%.1fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
	return buf;
}

const char *
sr_fmt_bytes(uint64_t n, char *buf, size_t len)
{
	static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)n;
	size_t u = 0;

	while (v >= 1024 && u + 1 < SR_ARRAY_LEN(unit)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)n);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

int
sr_mkdirs(const char *path, mode_t mode, char *err)
{
	char *p = sr_try_strdup(path, err), *s;

	if (p == NULL)
		return sr_err_prefix(err, "create directory %s", path);
	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) == -1 && errno != EEXIST) {
			sr_errno(err, "create directory %s", p);
			free(p);
			return -1;
		}
		*s = '/';
	}
	if (mkdir(p, mode) == -1 && errno != EEXIST) {
		sr_errno(err, "create directory %s", p);
		free(p);
		return -1;
	}
	free(p);
	return 0;
}

static int
rmtree_at(int parent, const char *name, char *err)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int fd, rc = 0;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return 0;
		return sr_errno(err, "stat %s", name);
	}
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(parent, name, 0) == -1 && errno != ENOENT)
			return sr_errno(err, "remove %s", name);
		return 0;
	}
	/* A read-only directory (restored from a checkpoint, say) must
	 * become writable before its entries can be removed. */
	if ((st.st_mode & 0700) != 0700 && fchmodat(parent, name, 0700, 0) == -1)
		return sr_errno(err, "make %s writable", name);
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return sr_errno(err, "open directory %s", name);
	d = fdopendir(fd);
	if (d == NULL) {
		int e = errno;

		close(fd);
		if (e == ENOMEM) {	/* the C library's buffer for it */
			sr_err_oom(err, "open directory");
			return sr_err_prefix(err, "remove %s", name);
		}
		errno = e;
		return sr_errno(err, "open directory %s", name);
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		rc = rmtree_at(dirfd(d), de->d_name, err);
	}
	closedir(d);
	if (rc == 0 && unlinkat(parent, name, AT_REMOVEDIR) == -1 && errno != ENOENT)
		return sr_errno(err, "remove directory %s", name);
	return rc;
}

int
sr_rmtree(const char *path, char *err)
{
	return rmtree_at(AT_FDCWD, path, err);
}

ssize_t
sr_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	size_t left = len;

	while (left > 0) {
		ssize_t n = write(fd, p, left);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		left -= (size_t)n;
	}
	return (ssize_t)len;
}

int
sr_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int
sr_read_file(const char *path, size_t max, char **out, size_t *len, char *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, n = 0;
	char *buf;

	if (fd == -1)
		return sr_errno(err, "open %s", path);
	if ((buf = sr_try_malloc(cap + 1, err)) == NULL) {
		close(fd);
		return sr_err_prefix(err, "read %s", path);
	}
	for (;;) {
		ssize_t r;
		if (n == cap) {
			char *more;

			if (cap >= max) {
				close(fd);
				free(buf);
				return sr_err(err, "read %s: larger than %zu bytes", path, max);
			}
			cap = cap * 2 > max ? max : cap * 2;
			if ((more = sr_try_reallocarray(buf, cap + 1, 1, err)) == NULL) {
				close(fd);
				free(buf);
				return sr_err_prefix(err, "read %s", path);
			}
			buf = more;
		}
		r = read(fd, buf + n, cap - n);
		if (r == -1) {
			if (errno == EINTR)
				continue;
			sr_errno(err, "read %s", path);
			close(fd);
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	if (len != NULL)
		*len = n;
	return 0;
}

int
sr_write_file_atomic(const char *path, const void *buf, size_t len, int durable, char *err)
{
	char *tmp = sr_try_asprintf(err, "%s.tmp.%ld", path, (long)getpid());
	int fd;

	if (tmp == NULL)
		return sr_err_prefix(err, "write %s", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1) {
		sr_errno(err, "create %s", tmp);
		free(tmp);
		return -1;
	}
	if (sr_write_all(fd, buf, len) == -1 || (durable && fsync(fd) == -1)) {
		sr_errno(err, "write %s", tmp);
		close(fd);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		sr_errno(err, "rename %s to %s", tmp, path);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

int
sr_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (int)n;
}

const char *
sr_file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISLNK(mode))
		return "a symbolic link";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "of an unknown type";
}

void
sr_hex_of(const uint8_t *b, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[2 * n] = '\0';
}

int
sr_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
