/*
 * t-ignore.c: unit tests of the ignore rules of a snapshot (ckpt/ignore.h):
 * the glob of one pattern ('*', '?', [...] never across '/', the three
 * places "**" may stand), and rule files as a walk pushes and pops them:
 * comments, blank and escaped lines, trailing blanks, negation, patterns
 * for directories only, anchoring by a leading or a middle '/', deeper
 * files after their parents, the last match deciding.
 */
#include "config.h"

#include <string.h>

#include "tap.h"

#include "ignore.h"
#include "util.h"

static void
glob(const char *p, const char *s, int want)
{
	ok(sr_ignore_glob(p, s) == want, "'%s' %s '%s'", p, want ? "matches" : "does not match", s);
}

static void
test_glob(void)
{
	glob("*.o", "a.o", 1);
	glob("*.o", "d/a.o", 0);		/* '*' never crosses '/' */
	glob("a?c", "abc", 1);
	glob("a?c", "a/c", 0);
	glob("[ab]x", "bx", 1);
	glob("[!ab]x", "bx", 0);
	glob("d/*.txt", "d/x.txt", 1);
	glob("d/*.txt", "d/e/x.txt", 0);
	glob("**/foo", "foo", 1);		/* leading: any directories, none too */
	glob("**/foo", "a/b/foo", 1);
	glob("**/foo", "a/foox", 0);
	glob("**/foo/bar", "x/foo/bar", 1);
	glob("abc/**", "abc/x", 1);		/* trailing: everything inside */
	glob("abc/**", "abc/x/y/z", 1);
	glob("abc/**", "abc", 0);
	glob("a/**/b", "a/b", 1);		/* middle: zero or more directories */
	glob("a/**/b", "a/x/b", 1);
	glob("a/**/b", "a/x/y/b", 1);
	glob("a/**/b", "a/x/y/c", 0);
	glob("a/**/b", "z/a/b", 0);
	glob("**", "any/thing", 1);
	glob("a**b", "axxb", 1);		/* not a whole segment: as '*' */
	glob("a**b", "ax/xb", 0);
	glob("\\*x", "*x", 1);			/* escaped */
	glob("\\*x", "ax", 0);
}

static struct sr_ignore *ig;

static void
push(const char *dir, const char *text)
{
	char err[SR_ERRMAX] = "";

	if (sr_ignore_push(ig, dir, text, strlen(text), err) == -1)
		ok(0, "push %s: %s", dir, err);
}

static void
match(const char *path, int is_dir, int want)
{
	ok(sr_ignore_match(ig, path, is_dir) == want, "%s%s is %s", path, is_dir ? "/" : "",
	    want ? "left out" : "taken");
}

/* A pattern of more "**" segments than matching can afford: refused,
 * naming its line, the rules before it kept. */
static void
test_globstar_bound(void)
{
	struct sr_ignore *g = sr_ignore_new(NULL);
	const char *text = "a.log\n**/b/**/c/**/d\n**/e/**/f/**/g/**/h\nz\n";
	char err[SR_ERRMAX] = "";

	is_int(sr_ignore_push(g, "", text, strlen(text), err), -1,
	    "a pattern of 4 \"**\" segments: refused");
	is_str(err, "line 3: **/e/**/f/**/g/**/h: more than 3 \"**\" segments, each of which "
	    "multiplies the work of matching a path: split it into rules of fewer",
	    "... naming its line and the fix");
	ok(sr_ignore_match(g, "x/b/y/c/d", 0) && sr_ignore_match(g, "a.log", 0) &&
	    !sr_ignore_match(g, "z", 0), "... the rules before it kept (3 segments allowed), none after");
	sr_ignore_free(g);
}

static void
test_rules(void)
{
	char err[SR_ERRMAX];

	ig = sr_ignore_new(err);
	push("", "# a comment\n"
	    "\n"
	    "*.log\n"
	    "!keep.log\n"
	    "build/\n"
	    "/top.txt\n"
	    "doc/*.html\n"
	    "\\#hash\n"
	    "\\!bang\n"
	    "spaces   \n"
	    "tail\\ \n"
	    "data/**/*.bin\r\n");
	match("a.log", 0, 1);
	match("sub/deep/a.log", 0, 1);		/* no '/': at any depth */
	match("keep.log", 0, 0);		/* negated after */
	match("sub/keep.log", 0, 0);
	match("build", 1, 1);			/* a directory */
	match("build", 0, 0);			/* trailing '/': not a file */
	match("sub/build", 1, 1);
	match("top.txt", 0, 1);			/* leading '/': the root only */
	match("sub/top.txt", 0, 0);
	match("doc/a.html", 0, 1);		/* middle '/': anchored */
	match("x/doc/a.html", 0, 0);
	match("doc/x/a.html", 0, 0);
	match("# a comment", 0, 0);
	match("#hash", 0, 1);
	match("!bang", 0, 1);
	match("spaces", 0, 1);			/* trailing blanks cut */
	match("tail ", 0, 1);			/* ... unless escaped */
	match("tail", 0, 0);
	match("data/x.bin", 0, 1);		/* CRLF line */
	match("data/a/b/x.bin", 0, 1);
	match("other/x.bin", 0, 0);

	/* a deeper file: its rules after the root's, anchored at its folder */
	push("sub", "!*.log\n/only.txt\nkeep.log\n");
	match("sub/a.log", 0, 0);		/* taken again by the deeper file */
	match("sub/keep.log", 0, 1);		/* the last match decides */
	match("sub/only.txt", 0, 1);
	match("sub/x/only.txt", 0, 0);
	match("only.txt", 0, 0);
	match("other/a.log", 0, 1);		/* not below sub: the root's rules */
	push("sub", "only.txt\n!only.txt\n");	/* a second file of sub, after */
	match("sub/only.txt", 0, 0);
	sr_ignore_pop(ig, "sub");		/* the walk left sub */
	match("sub/a.log", 0, 1);
	match("sub/only.txt", 0, 0);
	match("keep.log", 0, 0);
	sr_ignore_pop(ig, "");
	match("a.log", 0, 0);
	sr_ignore_free(ig);
}

int
main(void)
{
	test_glob();
	test_rules();
	test_globstar_bound();
	return tap_done();
}
