/*
 * gangparts.c: see gangparts.h. A part is an ordinary manifest (version, job, seq
 * of the save that wrote it, its entries with their chunks in J/packs/),
 * so it is read and checked as one; node 0 copies its entries, the packs
 * staying where the part's save put them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "gangparts.h"
#include "util.h"

int
sr_parts_put(struct sr_store *st, const struct sr_ckpt_opts *o, const struct sr_manifest *m,
    char *err)
{
	size_t len;
	char *text = sr_manifest_dump(m, &len);
	int rc = sr_store_put(st, o->part, text, len, SR_PUT_OVERWRITE, NULL, NULL, err);

	free(text);
	if (rc != SR_STORE_OK)
		return sr_err_prefix(err, "save part of %s", o->job);
	return 0;
}

/* Wait for key and read it: 0 with *buf, or SR_CKPT_LATE, SR_CKPT_CANCELLED, -1. */
static int
wait_part(struct sr_store *st, const struct sr_ckpt_opts *o, const char *key, double until,
    void **buf, size_t *len, char *err)
{
	for (;;) {
		int rc = sr_store_get(st, key, SR_MANIFEST_MAX, buf, len, NULL, err);

		if (rc == SR_STORE_OK)
			return 0;
		if (rc != SR_STORE_NOTFOUND)
			return sr_err_prefix(err, "save %s: read part", o->job);
		if (sr_flag_get(o->cancel))
			return sr_err(err, "checkpoint of %s cancelled while it waited for part %s; "
			    "nothing committed", o->job, key), SR_CKPT_CANCELLED;
		if (o->deadline > 0 && sr_now() >= o->deadline)
			return sr_err(err, "checkpoint of %s missed its deadline waiting for part %s "
			    "(another node of the gang did not save its part); nothing committed",
			    o->job, key), SR_CKPT_LATE;
		if (until > 0 && sr_now() >= until)
			return sr_err(err, "checkpoint of %s: part %s did not come within %gs "
			    "(another node of the gang did not save its part); nothing committed",
			    o->job, key, o->merge_wait), SR_CKPT_LATE;
		sr_sleep(0.1);
	}
}

/* Copy entry e of another manifest into m (its pack keys interned in m). */
static void
copy_entry(struct sr_manifest *m, const struct sr_mentry *e)
{
	struct sr_mentry *n = sr_manifest_add(m, e->path, e->type);
	size_t k;

	n->mode = e->mode;
	n->mtime_ns = e->mtime_ns;
	n->size = e->size;
	n->target = e->target != NULL ? sr_strdup(e->target) : NULL;
	for (k = 0; k < e->nchunks; k++) {
		struct sr_mchunk *c = sr_mentry_add_chunk(n);

		*c = e->chunks[k];
		c->pack = sr_manifest_intern(m, e->chunks[k].pack);
	}
}

int
sr_parts_merge(struct sr_store *st, const struct sr_ckpt_opts *o, struct sr_manifest *m,
    char *err)
{
	double until = o->merge_wait > 0 ? sr_now() + o->merge_wait : 0;
	size_t i, k, have;
	int rc;

	for (i = 0; i < o->nmerge; i++) {
		struct sr_manifest p;
		void *buf;
		size_t len;

		if ((rc = wait_part(st, o, o->merge[i], until, &buf, &len, err)) != 0)
			return rc;
		rc = sr_manifest_parse(buf, len, &p, err);
		free(buf);
		if (rc == 0)
			rc = sr_manifest_validate(&p, o->job, p.stats.seq, err);
		if (rc != 0) {
			sr_manifest_free(&p);
			return sr_err_prefix(err, "save %s: part %s", o->job, o->merge[i]);
		}
		have = m->nentries;
		for (k = 0; k < p.nentries; k++) {
			const struct sr_mentry *e = &p.entries[k];
			struct sr_manifest view = *m;

			view.nentries = have;	/* the sorted entries before this part */
			if (sr_manifest_find(&view, e->path) >= 0)
				continue;
			copy_entry(m, e);
			if (e->type == SR_MT_FILE)
				m->stats.files++;
		}
		sr_manifest_sort(m);
		sr_manifest_free(&p);
	}
	return 0;
}

void
sr_parts_drop(struct sr_store *st, const struct sr_ckpt_opts *o)
{
	char err[SR_ERRMAX];
	size_t i;

	for (i = 0; i < o->nmerge; i++)
		if (sr_store_delete(st, o->merge[i], err) != SR_STORE_OK)
			sr_ckpt_say(o, "warning: %s", err);
}
