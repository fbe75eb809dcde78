/*
 * termsafe.h: text that came from outside (a queue's markers, a store's
 * records, a message quoting them) made safe to print on a terminal. A
 * terminal acts on control characters: ESC starts sequences that set its
 * title, clear the screen or move the cursor, a newline forges a row of a
 * table. So each character a terminal would act on is shown escaped, and
 * what is printable is kept as it is.
 */
#ifndef SR_TERMSAFE_H
#define SR_TERMSAFE_H

#include <stddef.h>
#include <stdint.h>

/* A buffer that holds any n bytes escaped, and its NUL: a byte grows to
 * \xNN at most. */
#define SR_TERMSAFE_LEN(n) (4 * (size_t)(n) + 1)

/*
 * The UTF-8 character at s (n bytes there, n > 0): its length in bytes (1 to
 * 4) with its code point in *cp, or 0 when s[0] starts no well-formed
 * character (a continuation byte, a character cut short, an overlong form,
 * a surrogate, above U+10FFFF; *cp is then s[0]).
 */
size_t sr_utf8_char(const char *s, size_t n, uint32_t *cp);

/* Whether a terminal acts on code point cp instead of showing it: C0
 * controls, DEL, C1 controls, the line and paragraph separators and the
 * bidirectional formatting characters (which reorder what follows them). */
int sr_term_acts_on(uint32_t cp);

/*
 * s escaped into buf (len bytes; SR_TERMSAFE_LEN(strlen(s)) always holds it
 * all), returned: a C0 control or DEL as \xNN, a byte that starts no
 * well-formed UTF-8 character as \xNN, another character a terminal acts on
 * as \u{N} (hex, \u{9b}, \u{2028}); every other character as it is, a
 * backslash too: a message the store already escaped (its \x1b) reads the
 * same, and the aim is that the terminal shows the text, not that it reads
 * back one way. Where buf is too short, the text is cut before the first
 * piece that does not fit.
 */
const char *sr_termsafe(const char *s, char *buf, size_t len);

#endif
