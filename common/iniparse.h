/*
 * iniparse.h: running inih (Debian's libinih) with spotrun's settings, for
 * every INI reader in the tree (runner/jobspec.c, store/s3/creds-ini.c).
 *
 * Debian builds inih's settings (line buffer, multi-line values, ...) as
 * process-wide variables rather than compile-time constants, so a reader
 * that sets them and then parses races with any other thread doing the
 * same. sr_ini_parse_stream sets them and parses under one lock;
 * sr_ini_next_line is the line splitting the readers share. (Named
 * iniparse.h, not ini.h: common/ is on the include path and would hide
 * inih's <ini.h>.)
 */
#ifndef SR_INIPARSE_H
#define SR_INIPARSE_H

#include <stddef.h>

#include <ini.h>

/*
 * ini_parse_stream(reader, stream, handler, user) with inih set up the way
 * every spotrun reader wants it: the line buffer on the heap, line_max + 2
 * bytes long and never grown (reader's `num` is line_max + 2: a line of
 * line_max bytes, its newline and the NUL), no multi-line values (an
 * indented line is inih's business no more: the readers vet indentation
 * themselves), and parsing goes on past a bad line. An inline comment
 * starts at any character of comments (SR_INI_COMMENTS: ';' or '#') that
 * follows a blank; comments NULL or "" has none. Returns what
 * ini_parse_stream returns: 0, the number of the first line inih could
 * not parse, or -2 when inih ran out of memory; -3 for a line_max out of
 * range (below).
 *
 * Thread-safe: the settings and the whole parse are under one process-wide
 * lock, so reader and handler run while it is held and must not call
 * sr_ini_parse_stream themselves (that would deadlock). line_max is 1 or
 * more, below INT_MAX - 2.
 */
int sr_ini_parse_stream(ini_reader reader, void *stream, ini_handler handler,
    void *user, int line_max, const char *comments);

/* What starts an inline comment after a blank in spotrun's own files (job
 * files, pool files, the settings file, the price table): a value is
 * never cut by a '#' that follows no blank ("http://h/p#frag", "a#b"). */
#define SR_INI_COMMENTS ";#"

/*
 * For a reader over a file held in memory (buf, len bytes): the line at
 * *off as a..e, without its '\n' (a '\r' stays), a UTF-8 byte order mark
 * dropped from the first line. Moves *off past the line and counts it in
 * *line (the first line is 1). 0 when *off is at the end (nothing moves),
 * else 1.
 */
int sr_ini_next_line(const char *buf, size_t len, size_t *off, int *line,
    const char **a, const char **e);

#endif
