/*
 * inifile.h: a small INI file (the user's config.ini, a price table) read
 * as a series of (section, key, value, line) settings, through inih
 * (iniparse.h) with a reader of ours that vets each line first, so that
 * every syntax error names its line. The meaning of the settings, and
 * keys given twice, are the caller's business.
 */
#ifndef SR_INIFILE_H
#define SR_INIFILE_H

#include <stddef.h>

#define SR_INIFILE_LINE_MAX 4096	/* bytes of a line, without its newline */
#define SR_INIFILE_SECTION_MAX 48	/* bytes of a section's name (inih keeps 50) */

/*
 * Read the len bytes at buf, named name in messages, and call fn once per
 * "key = value" line in file order: section is the last "[section]" above
 * it ("" before any), key and value trimmed (an inline comment, " ;" and
 * what follows, dropped from the value), line its number from 1. fn
 * returns 0 to go on, or -1 with err (SR_ERRMAX bytes) filled, which
 * stops the reading and is returned as it is. A line that is neither
 * blank, a comment (its first non-blank ';' or '#'), a "[section]" nor
 * "key = value", a NUL byte, or a line longer than SR_INIFILE_LINE_MAX
 * makes -1 with err "NAME:LINE: what is wrong; the fix". 0 when every
 * line was read.
 */
int sr_inifile_each(const char *name, const char *buf, size_t len,
    int (*fn)(void *arg, const char *section, const char *key, const char *value, int line,
    char *err), void *arg, char *err);

#endif
