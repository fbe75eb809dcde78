/*
 * pathsafe.h: checks on the relative paths a checkpoint manifest names, and
 * creation of files under a root directory that never follows a symbolic
 * link. A restore writes only what these functions allow, so a hostile
 * manifest cannot make it touch anything outside the directory it restores.
 */
#ifndef SR_PATHSAFE_H
#define SR_PATHSAFE_H

#include <stddef.h>
#include <sys/types.h>

/* Longest path and path segment accepted (Linux PATH_MAX - 1, NAME_MAX). */
#define SR_PATH_MAX 4095
#define SR_NAME_MAX 255

/* Whether s is valid UTF-8 (JSON strings must be): 1 or 0. */
int sr_utf8_ok(const char *s);

/* Quote s for a message: "...", with control bytes, '"' and '\' escaped and
 * long strings shortened in the middle. Returns buf (len bytes). */
const char *sr_path_quote(const char *s, char *buf, size_t len);

/* Check that path is a non-empty relative path of '/'-separated segments,
 * none empty, "." or "..", at most SR_PATH_MAX bytes and SR_NAME_MAX per
 * segment. 0, or -1 with err `path "P": reason`. */
int sr_path_check(const char *path, char *err);

/* Check that a symbolic link at linkpath (a checked path) pointing at
 * target stays lexically inside the root: target non-empty and relative,
 * and resolving its segments from the link's directory never climbs above
 * the root. is_link (may be NULL) tells whether a path relative to the root
 * is itself a symbolic link; a ".." after such a component is refused, since
 * the lexical walk cannot know where that link leads. 0, or -1 with err
 * `symlink "L" -> "T": reason`. */
int sr_path_check_link(const char *linkpath, const char *target,
    int (*is_link)(const char *path, void *arg), void *arg, char *err);

/* Open the directory that holds rel under the directory rootfd, walking each
 * segment with O_NOFOLLOW | O_DIRECTORY so that no symbolic link is ever
 * followed. Returns the directory's fd (close it) and points *leaf at rel's
 * last segment, or -1 with err set. rel must pass sr_path_check. */
int sr_path_open_parent(int rootfd, const char *rel, const char **leaf, char *err);

/* A folder kept open from one call to the next (sr_path_dir_parent): a
 * walk in path order, a manifest's, then opens each folder once rather
 * than once per file (for 10,000 small files 3 of a restore's 7 opens a
 * file, doc/benchmarks.md). Initialise with SR_PATH_DIR_INIT; end with
 * sr_path_dir_close. One per thread. */
struct sr_path_dir {
	int fd;				/* -1: none */
	size_t len;			/* of the folder's part of path, with its '/' */
	char path[SR_PATH_MAX + 1];
};
#define SR_PATH_DIR_INIT { -1, 0, "" }
void sr_path_dir_close(struct sr_path_dir *d);
/* sr_path_open_parent through d: the folder's fd, which stays d's (do not
 * close it), until a path in another folder or sr_path_dir_close. */
int sr_path_dir_parent(struct sr_path_dir *d, int rootfd, const char *rel, const char **leaf,
    char *err);

/* openat(2) of rel under rootfd through sr_path_open_parent (or d's folder
 * where d is not NULL), with O_NOFOLLOW and O_CLOEXEC added to flags.
 * Returns the fd or -1 with err set. */
int sr_path_openat(struct sr_path_dir *d, int rootfd, const char *rel, int flags, mode_t mode,
    char *err);


#endif
