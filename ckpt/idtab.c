/*
 * idtab.c: open addressing with linear probing over chunk references (see
 * idtab.h). Ids are XXH3-128 or SHA-256 digests, so their first 8 bytes
 * are already a well-spread hash.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "idtab.h"
#include "util.h"

struct sr_idtab {
	struct sr_mchunk *slots;
	unsigned char *used;
	size_t cap;		/* a power of two */
	size_t count;
};

static size_t
id_hash(const uint8_t id[32])
{
	uint64_t h;

	memcpy(&h, id, sizeof h);
	return (size_t)h;
}

struct sr_idtab *
sr_idtab_new(size_t hint, char *err)
{
	struct sr_idtab *t = sr_try_calloc(1, sizeof *t, err);

	if (t == NULL)
		return NULL;
	t->cap = 64;
	while (t->cap < hint * 2 && t->cap < SIZE_MAX / 4)
		t->cap *= 2;
	t->slots = sr_try_calloc(t->cap, sizeof *t->slots, err);
	t->used = t->slots != NULL ? sr_try_calloc(t->cap, 1, err) : NULL;
	if (t->used == NULL) {
		sr_idtab_free(t);
		return NULL;
	}
	return t;
}

void
sr_idtab_free(struct sr_idtab *t)
{
	if (t == NULL)
		return;
	free(t->slots);
	free(t->used);
	free(t);
}

/* The slot holding id, or the empty slot where it would go. */
static size_t
probe(const struct sr_idtab *t, const uint8_t id[32])
{
	size_t i = id_hash(id) & (t->cap - 1);

	while (t->used[i] && memcmp(t->slots[i].id, id, 32) != 0)
		i = (i + 1) & (t->cap - 1);
	return i;
}

const struct sr_mchunk *
sr_idtab_get(const struct sr_idtab *t, const uint8_t id[32])
{
	size_t i = probe(t, id);

	return t->used[i] ? &t->slots[i] : NULL;
}

/* Insert c, known to be absent, into a table with room for it. */
static void
place(struct sr_idtab *t, const struct sr_mchunk *c)
{
	size_t i = probe(t, c->id);

	t->slots[i] = *c;
	t->used[i] = 1;
	t->count++;
}

/* Twice the slots: 0, or -1 with err and t as it was. */
static int
grow(struct sr_idtab *t, char *err)
{
	struct sr_idtab old = *t;
	struct sr_mchunk *slots = sr_try_calloc(old.cap * 2, sizeof *slots, err);
	unsigned char *used = slots != NULL ? sr_try_calloc(old.cap * 2, 1, err) : NULL;
	size_t i;

	if (used == NULL) {
		free(slots);
		return -1;
	}
	t->cap = old.cap * 2;
	t->slots = slots;
	t->used = used;
	t->count = 0;
	for (i = 0; i < old.cap; i++) {
		if (old.used[i])
			place(t, &old.slots[i]);
	}
	free(old.slots);
	free(old.used);
	return 0;
}

int
sr_idtab_put(struct sr_idtab *t, const struct sr_mchunk *c, char *err)
{
	size_t i = probe(t, c->id);

	if (t->used[i])
		return 0;
	if ((t->count + 1) * 2 > t->cap) {
		if (grow(t, err) == -1)
			return sr_err_prefix(err, "index chunk ids");
		i = probe(t, c->id);
	}
	t->slots[i] = *c;
	t->used[i] = 1;
	t->count++;
	return 0;
}

size_t
sr_idtab_count(const struct sr_idtab *t)
{
	return t->count;
}
