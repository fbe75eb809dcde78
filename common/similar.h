/*
 * similar.h: "did you mean ...?" for names typed on the command line: the
 * closest of a list of candidates by edit distance, where a swap of two
 * neighbouring letters counts as one edit ("rnu" is one edit from "run").
 */
#ifndef SR_SIMILAR_H
#define SR_SIMILAR_H

#include <stddef.h>

/* Flags: letters compare without case (job file keys: "Interval"). */
#define SR_SIMILAR_FOLD_CASE 0x1

/* The optimal string alignment distance between a and b: insertions,
 * deletions, substitutions and swaps of adjacent characters each cost 1;
 * case-sensitive unless flags has SR_SIMILAR_FOLD_CASE. Strings over 64
 * bytes count as far from everything (SIZE_MAX). */
size_t sr_similar_distance(const char *a, const char *b, int flags);

/* Whether candidate is close enough to name to be what was meant: at most
 * 1 edit for a candidate of up to 4 characters, 2 for longer ones, and
 * fewer edits than the candidate has characters. */
int sr_similar_close(const char *name, const char *candidate, int flags);

/* The index of the close candidate (sr_similar_close, case-sensitive)
 * nearest to name, the first of equals; n candidates; -1 when none is
 * close. */
int sr_similar_closest(const char *name, const char *const *candidates, size_t n);

#endif
