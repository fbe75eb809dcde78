/*
 * idtab.h: a hash table from chunk id (manifest.h) to where that chunk is
 * stored, for content addressing: a save looks up each chunk it cuts and
 * references a stored copy instead of uploading it again.
 */
#ifndef SR_IDTAB_H
#define SR_IDTAB_H

#include <stddef.h>

#include "manifest.h"

struct sr_idtab;

/* A table sized for about hint ids (it grows as needed); NULL with err on
 * out-of-memory. */
struct sr_idtab *sr_idtab_new(size_t hint, char *err);
void sr_idtab_free(struct sr_idtab *t);
/* The stored reference for id, or NULL. Safe to call from several threads
 * at once as long as none is adding. */
const struct sr_mchunk *sr_idtab_get(const struct sr_idtab *t, const uint8_t id[32]);
/* Remember c (copied; c->pack must outlive the table); an id already
 * present keeps its first reference. 0, or -1 with err on out-of-memory
 * (the table as it was). */
int sr_idtab_put(struct sr_idtab *t, const struct sr_mchunk *c, char *err);
size_t sr_idtab_count(const struct sr_idtab *t);

#endif
