/*
 * similar.c: see similar.h. A transposition counts as one edit because it
 * is the commonest typo of a short name; plain Levenshtein makes "rnu" two
 * edits from "run", too far for a three-letter word. The commands and the
 * job file's keys and sections share it.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "similar.h"

#define SIMILAR_MAXLEN 64

static int
same(char x, char y, int flags)
{
	if (flags & SR_SIMILAR_FOLD_CASE)
		return tolower((unsigned char)x) == tolower((unsigned char)y);
	return x == y;
}

size_t
sr_similar_distance(const char *a, const char *b, int flags)
{
	/* Three rows of the dynamic programme: two back for the swap. */
	size_t row[3][SIMILAR_MAXLEN + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > SIMILAR_MAXLEN || lb > SIMILAR_MAXLEN)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		row[0][j] = j;
	for (i = 1; i <= la; i++) {
		size_t *cur = row[i % 3], *up = row[(i - 1) % 3], *up2 = row[(i + 1) % 3];

		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best = up[j - 1] + !same(a[i - 1], b[j - 1], flags);

			if (up[j] + 1 < best)
				best = up[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && same(a[i - 1], b[j - 2], flags) &&
			    same(a[i - 2], b[j - 1], flags) && up2[j - 2] + 1 < best)
				best = up2[j - 2] + 1;
			cur[j] = best;
		}
	}
	return row[la % 3][lb];
}

int
sr_similar_close(const char *name, const char *candidate, int flags)
{
	size_t len = strlen(candidate), d = sr_similar_distance(name, candidate, flags);

	return d <= (len <= 4 ? 1 : 2) && d < len;
}

int
sr_similar_closest(const char *name, const char *const *candidates, size_t n)
{
	size_t i, best_d = SIZE_MAX;
	int best = -1;

	for (i = 0; i < n; i++) {
		size_t d = sr_similar_distance(name, candidates[i], 0);

		if (sr_similar_close(name, candidates[i], 0) && d < best_d) {
			best_d = d;
			best = (int)i;
		}
	}
	return best;
}
