/*
 * ignore.h: which paths of a directory a snapshot leaves out, by the rules
 * of .gitignore files (gitignore(5)), read as a walk goes down the tree:
 * each directory's files are pushed on entering it and popped on leaving,
 * so only the rules of the directory being walked and its parents apply.
 *
 * A rule file's lines: blank lines and lines starting with '#' are
 * nothing ("\#" starts a pattern with '#'); trailing blanks are cut unless
 * escaped with '\'; '!' negates (a path a rule before it left out is taken
 * again; "\!" starts a pattern with '!'); a trailing '/' matches only
 * directories; a '/' at the start or in the middle anchors the pattern at
 * the directory of its file, otherwise it matches a name at any depth
 * below it; '*', '?' and [...] as fnmatch(3) with FNM_PATHNAME (never
 * across a '/'); "**" as a whole segment: "**" + "/" any leading
 * directories, "/" + "**" everything inside, "/" + "**" + "/" zero or more
 * directories. The last rule that matches decides, deeper files' rules
 * after their parents', and within one directory the files in the order
 * pushed. A directory left out is not walked, so nothing inside it can be
 * taken again (as git does).
 */
#ifndef SR_IGNORE_H
#define SR_IGNORE_H

#include <stddef.h>

struct sr_ignore;

/* An empty rule set; NULL with err on out-of-memory. */
struct sr_ignore *sr_ignore_new(char *err);
void sr_ignore_free(struct sr_ignore *ig);

/* "**" segments a pattern may have: a path is matched against each by
 * trying every split of it, so more would let a hostile rule file make a
 * snapshot's walk take hours. */
#define SR_IGNORE_GLOBSTARS_MAX 3

/* Add the rules of a file's text (len bytes) found in directory dir
 * ("" for the root; no trailing '/'), on top of those there are: 0, or -1
 * with err (out of memory; or "line N: PATTERN: more than 3 "**"
 * segments ..." for a pattern over SR_IGNORE_GLOBSTARS_MAX, the rules
 * added before it kept: the caller names the file). */
int sr_ignore_push(struct sr_ignore *ig, const char *dir, const char *text, size_t len,
    char *err);
/* Drop the rules of files found in dir (the walk left it). */
void sr_ignore_pop(struct sr_ignore *ig, const char *dir);

/* Whether path (relative to the root, no leading or trailing '/'), a
 * directory when is_dir, is left out: 1, or 0. */
int sr_ignore_match(const struct sr_ignore *ig, const char *path, int is_dir);

/* Whether pattern p matches path s by the rules above (an anchored
 * pattern, its leading '/' cut): 1 or 0. For the tests. */
int sr_ignore_glob(const char *p, const char *s);

#endif
