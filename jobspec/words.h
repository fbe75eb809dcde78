/*
 * words.h: splitting a job's `command` into argv the way a POSIX shell
 * splits words, without running one: quotes and backslashes only, no
 * variable, command, tilde or glob expansion.
 */
#ifndef SR_WORDS_H
#define SR_WORDS_H

#include <stddef.h>

/*
 * With SR_WORDS_STRICT, characters that would mean something to a shell
 * but are passed literally here are errors (unless quoted or escaped):
 * $NAME, ${...}, $(...), `...`, | & ; < > ( ), and ~ at the start of a
 * word. That catches `python3 train.py > log` or `--out $HOME/x` silently
 * becoming literal arguments.
 */
#define SR_WORDS_STRICT 0x1

/*
 * Split s into words. Blanks (space, tab) separate words. '...' keeps
 * everything literally; "..." keeps everything except that a backslash
 * before " \ $ or ` is removed; outside quotes a backslash makes the next
 * character literal. '' or "" make an empty word.
 * Returns 0 with *argv set to a NULL-terminated array (free it with
 * sr_words_free) and *argc (may be NULL) to the number of words, or -1 with
 * err (SR_ERRMAX bytes) describing the problem and how to fix it, e.g.
 * "unterminated double quote at character 12; close it, or write \" for
 * a literal quote".
 */
int sr_words_split(const char *s, int flags, char ***argv, size_t *argc, char *err);

/* Free an array from sr_words_split (or any NULL-terminated string array);
 * NULL is allowed. */
void sr_words_free(char **argv);

#endif
