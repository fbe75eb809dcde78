/*
 * units.h: the unit syntax of job files: durations ("90s", "20m", "1h30m",
 * "250ms", "1.5h") and byte sizes ("64MiB", "1GiB", "512KiB", "4096").
 * The parsers only read syntax; what range a key allows is the caller's rule.
 */
#ifndef SR_UNITS_H
#define SR_UNITS_H

#include <stdint.h>

/* The longest duration sr_parse_duration takes, in seconds: beyond it a
 * value is surely a typo, and callers may convert it to integer types
 * without overflow. */
#define SR_DURATION_MAX 1e9

/*
 * Parse a duration into seconds. Grammar: "0", or one or more NUMBER UNIT
 * pairs with no spaces, NUMBER being digits with an optional ".digits",
 * UNIT one of d, h, m, s, ms, each unit at most once and from the largest
 * to the smallest ("1h30m", not "30m1h"). Returns 0 with *out set, -1 if
 * s is not a duration, or -2 if it is one but longer than SR_DURATION_MAX
 * seconds (*out untouched either way), so a caller can say "out of range"
 * rather than "not a duration" for "99999999999999999999s".
 */
int sr_parse_duration(const char *s, double *out);

/*
 * Parse a byte size: digits with an optional unit, case-insensitive:
 * B, KiB, MiB, GiB, TiB (powers of 1024) or kB, MB, GB, TB (powers of
 * 1000). No unit means bytes. Returns 0 with *out set, -1 if s is not a
 * size, or -2 if it is one but more than 2^64 - 1 bytes (*out untouched
 * either way).
 */
int sr_parse_size(const char *s, uint64_t *out);

#endif
