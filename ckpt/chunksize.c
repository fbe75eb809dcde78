/*
 * chunksize.c: the chunk size a save of a directory chooses when the job
 * sets none (chunksize.h; doc/design.md, "The chunk size").
 */
#include "config.h"

#include "chunksize.h"
#include "codec.h"

#define CHUNK_FLOOR ((size_t)4 << 10)

size_t
sr_chunk_rule(uint64_t raw)
{
	uint64_t want = raw / SR_CHUNK_AUTO_PER_STATE;
	size_t c = SR_CHUNK_AUTO_MIN;

	while (c < SR_CHUNK_AUTO_MAX && (uint64_t)c * 2 <= want)
		c *= 2;
	return c;
}

/* Note e's chunks in *used (the first of two or more) and *big. */
static void
look(const struct sr_mentry *e, size_t *used, size_t *big)
{
	size_t k;

	if (*used == 0 && e->nchunks >= 2)
		*used = e->chunks[0].rlen;
	for (k = 0; k < e->nchunks; k++) {
		if (e->chunks[k].rlen > *big)
			*big = e->chunks[k].rlen;
	}
}

size_t
sr_chunk_used(const struct sr_manifest *m, size_t *largest)
{
	size_t i, k, used = 0, big = 0;

	for (i = 0; i < m->nentries; i++)
		look(&m->entries[i], &used, &big);
	for (i = 0; i < m->ntensors; i++) {
		for (k = 0; k < m->tensors[i].npieces; k++)
			look(&m->tensors[i].pieces[k].data, &used, &big);
	}
	if (largest != NULL)
		*largest = big;
	return used;
}

size_t
sr_chunk_choose(uint64_t raw, const struct sr_manifest *prev, const char **why)
{
	size_t rule = sr_chunk_rule(raw), used = 0, big = 0, c;
	const char *w = "from the state's size";

	if (prev != NULL)
		used = sr_chunk_used(prev, &big);
	if (used >= CHUNK_FLOOR && used <= SR_CODEC_MAX_CHUNK) {
		if (rule / SR_CHUNK_AUTO_REGROW >= used)
			w = "from the state's size (it outgrew the previous checkpoint's)";
		else {
			rule = used;
			w = "the previous checkpoint's";
		}
	} else if (big > rule) {
		for (c = rule; c < big && c < SR_CODEC_MAX_CHUNK; c *= 2)
			;
		rule = c;
		w = "holding the previous checkpoint's largest file in one chunk";
	}
	if (why != NULL)
		*why = w;
	return rule;
}
