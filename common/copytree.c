/*
 * copytree.c: sr_copytree (copytree.h). Every name is opened relative to
 * its directory with O_NOFOLLOW, so neither side is ever left through a
 * link; a file's bytes go by copy_file_range (a reflink or an in-kernel
 * copy where the file system can), else read and write; modes and times
 * are set once a directory's entries are in, so that a read-only directory
 * still takes them.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copytree.h"
#include "util.h"

static int
copy_bytes(int in, int out, const char *path, char *err)
{
	char buf[1 << 16];
	ssize_t n;

	for (;;) {
		n = copy_file_range(in, NULL, out, NULL, (size_t)1 << 30, 0);
		if (n == 0)
			return 0;
		if (n < 0)
			break;
	}
	if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return sr_errno(err, "copy %s", path);
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || sr_write_all(out, buf, (size_t)n) < 0)
			return sr_errno(err, "copy %s", path);
	}
	return 0;
}

static int
set_meta(int fd, const struct stat *sb, const char *path, char *err)
{
	struct timespec ts[2] = { sb->st_atim, sb->st_mtim };

	if (fchmod(fd, sb->st_mode & 07777) == -1 || futimens(fd, ts) == -1)
		return sr_errno(err, "set the mode and time of %s", path);
	return 0;
}

static int copy_dir(int sfd, int dfd, const char *rel, char *err);

/* Entry name of directory sfd (at rel) into directory dfd. */
static int
copy_one(int sfd, int dfd, const char *name, const char *rel, char *err)
{
	char *path = sr_asprintf("%s/%s", rel, name), target[PATH_MAX + 1];
	struct stat sb;
	struct timespec ts[2];
	ssize_t n;
	int in = -1, out = -1, rc = -1;

	if (fstatat(sfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		sr_errno(err, "stat %s", path);
	} else if (S_ISREG(sb.st_mode)) {
		if ((in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
		    (out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600)) == -1)
			sr_errno(err, "copy %s", path);
		else if (copy_bytes(in, out, path, err) == 0 && set_meta(out, &sb, path, err) == 0)
			rc = 0;
	} else if (S_ISDIR(sb.st_mode)) {
		if (mkdirat(dfd, name, 0700) == -1 ||
		    (in = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
		    (out = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			sr_errno(err, "copy directory %s", path);
		else if (copy_dir(in, out, path, err) == 0 && set_meta(out, &sb, path, err) == 0)
			rc = 0;
	} else if (S_ISLNK(sb.st_mode)) {
		if ((n = readlinkat(sfd, name, target, sizeof target - 1)) == -1 ||
		    (target[n] = '\0', symlinkat(target, dfd, name)) == -1)
			sr_errno(err, "copy symlink %s", path);
		else {
			ts[0] = sb.st_atim;
			ts[1] = sb.st_mtim;
			(void)utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW);
			rc = 0;
		}
	} else {
		sr_err(err, "copy %s: %s", path, sr_file_kind(sb.st_mode));
	}
	if (in != -1)
		close(in);
	if (out != -1)
		close(out);
	free(path);
	return rc;
}

static int
copy_dir(int sfd, int dfd, const char *rel, char *err)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	if ((fd = dup(sfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return sr_errno(err, "open directory %s", rel);
	}
	rewinddir(d);
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		rc = copy_one(sfd, dfd, de->d_name, rel, err);
	}
	closedir(d);
	return rc;
}

int
sr_copytree(const char *src, const char *dst, char *err)
{
	struct stat sb;
	int sfd, dfd = -1, rc = -1;

	if ((sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return sr_errno(err, "open directory %s", src);
	if (fstat(sfd, &sb) == -1)
		sr_errno(err, "stat %s", src);
	else if (mkdir(dst, 0700) == -1 ||
	    (dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		sr_errno(err, "create directory %s", dst);
	else if (copy_dir(sfd, dfd, src, err) == 0 && set_meta(dfd, &sb, dst, err) == 0)
		rc = 0;
	if (dfd != -1)
		close(dfd);
	close(sfd);
	return rc;
}
