/*
 * chunksize.h: the chunk size a save of a directory chooses when the job
 * sets none (doc/design.md, "The chunk size"): from the state's size, kept
 * from one save of a job to the next so that unchanged files dedupe.
 */
#ifndef SR_CHUNKSIZE_H
#define SR_CHUNKSIZE_H

#include <stddef.h>
#include <stdint.h>

#include "manifest.h"

/* The rule's bounds, and the chunks it aims at per state. */
#define SR_CHUNK_AUTO_MIN ((size_t)1 << 20)
#define SR_CHUNK_AUTO_MAX ((size_t)16 << 20)
#define SR_CHUNK_AUTO_PER_STATE 256
/* A job's chunk size is chosen again only when the rule's choice for its
 * state has grown to this many times the one it has. */
#define SR_CHUNK_AUTO_REGROW 16

/* The rule for a state of raw bytes: raw / SR_CHUNK_AUTO_PER_STATE rounded
 * down to a power of two, within [SR_CHUNK_AUTO_MIN, SR_CHUNK_AUTO_MAX]. */
size_t sr_chunk_rule(uint64_t raw);

/* The chunk size m's save cut its data with: the raw size of the first
 * chunk of its first file or piece of two chunks or more; 0 when it has
 * none such (then every file fit in one chunk). *largest (NULL-able): the
 * raw size of its largest chunk. */
size_t sr_chunk_used(const struct sr_manifest *m, size_t *largest);

/*
 * The chunk size for a save of raw bytes whose job's previous checkpoint
 * is prev (NULL or empty: none): prev's (sr_chunk_used), unless the
 * rule's choice for raw is SR_CHUNK_AUTO_REGROW times it or more (the
 * state grew: one save stores everything again); when prev's files each
 * fit in one chunk, the rule's choice but at least the power of two that
 * holds prev's largest chunk (so those files still dedupe); else the
 * rule's choice. *why (NULL-able) is set to a static phrase saying which.
 * Always within [4 KiB, 256 MiB].
 */
size_t sr_chunk_choose(uint64_t raw, const struct sr_manifest *prev, const char **why);

#endif
