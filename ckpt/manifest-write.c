/*
 * manifest-write.c: sr_manifest_dump, a manifest as JSON text
 * (doc/format.md, "Manifest"), written straight into one growing buffer.
 *
 * Why not jansson, which parses it (manifest.c): building its tree of a
 * manifest, a json_t and a hash table per entry and per chunk, then
 * dumping and freeing it, was a quarter of the CPU of a save of 10,000
 * small files, all of it on the one thread that commits (0.1-0.17 s for
 * 10,000 entries; doc/benchmarks.md). The text here is what the parser
 * reads, one entry (or tensor) per line: strings are checked as UTF-8 and
 * escaped to ASCII (control characters, quote and backslash escaped,
 * everything beyond ASCII as \u escapes, in surrogate pairs beyond the
 * basic plane), integers in decimal, the two reals in %.17g, which reads
 * back to the same double.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "manifest.h"
#include "pathsafe.h"
#include "strbuf.h"
#include "util.h"

/* The text so far (b.failed once it could not grow: then nothing more is
 * added), utf8 once a string was missing or not UTF-8. */
struct mw {
	struct sr_strbuf b;
	int utf8;
};

/* The code point of the UTF-8 sequence at *s (valid: sr_utf8_ok), and
 * *s past it. */
static uint32_t
next_cp(const unsigned char **s)
{
	const unsigned char *p = *s;
	uint32_t cp;
	int n;

	if (*p < 0x80) {
		*s = p + 1;
		return *p;
	}
	n = *p >= 0xf0 ? 3 : *p >= 0xe0 ? 2 : 1;
	cp = *p & (0x3fu >> n);
	for (p++; n > 0; n--, p++)
		cp = cp << 6 | (*p & 0x3fu);
	*s = p;
	return cp;
}

/* A JSON string of s, in ASCII. */
static void
str(struct mw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[16];

	if (s == NULL || !sr_utf8_ok(s)) {
		w->utf8 = 1;
		return;
	}
	sr_strbuf_str(&w->b, "\"");
	while (*p != '\0' && !w->b.failed) {
		const unsigned char *run = p;
		uint32_t cp;

		while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
			p++;
		sr_strbuf_add(&w->b, (const char *)run, (size_t)(p - run));
		if (*p == '\0')
			break;
		cp = next_cp(&p);
		switch (cp) {
		case '"':
			sr_strbuf_str(&w->b, "\\\"");
			continue;
		case '\\':
			sr_strbuf_str(&w->b, "\\\\");
			continue;
		case '\n':
			sr_strbuf_str(&w->b, "\\n");
			continue;
		case '\t':
			sr_strbuf_str(&w->b, "\\t");
			continue;
		case '\r':
			sr_strbuf_str(&w->b, "\\r");
			continue;
		}
		if (cp > 0xffff) {
			cp -= 0x10000;
			snprintf(esc, sizeof esc, "\\u%04x\\u%04x", 0xd800 + (cp >> 10),
			    0xdc00 + (cp & 0x3ff));
		} else
			snprintf(esc, sizeof esc, "\\u%04x", cp);
		sr_strbuf_str(&w->b, esc);
	}
	sr_strbuf_str(&w->b, "\"");
}

/* "k": (after a comma unless first) */
static void
key(struct mw *w, const char *k, int first)
{
	if (!first)
		sr_strbuf_str(&w->b, ", ");
	sr_strbuf_str(&w->b, "\"");
	sr_strbuf_str(&w->b, k);
	sr_strbuf_str(&w->b, "\": ");
}

static void
kuint(struct mw *w, const char *k, uint64_t v, int first)
{
	key(w, k, first);
	sr_strbuf_printf(&w->b, "%" PRIu64, v);
}

static void
kint(struct mw *w, const char *k, int64_t v)
{
	key(w, k, 0);
	sr_strbuf_printf(&w->b, "%" PRId64, v);
}

/* A real as JSON: %.17g reads back to the same double; one without a
 * point or an exponent gets ".0" (a JSON integer would not be read as a
 * real); never NaN or infinity, which JSON has not. */
static void
real(struct mw *w, double v)
{
	char buf[40];

	if (!isfinite(v))
		v = 0;
	snprintf(buf, sizeof buf, "%.17g", v);
	if (strpbrk(buf, ".e") == NULL)
		strlcat(buf, ".0", sizeof buf);
	sr_strbuf_str(&w->b, buf);
}

static void
kstr(struct mw *w, const char *k, const char *v, int first)
{
	key(w, k, first);
	str(w, v);
}

static void
chunk(struct mw *w, const struct sr_manifest *m, const struct sr_mchunk *c)
{
	char hex[65];
	const char *xf = sr_transform_name(c->xf);

	sr_id_hex(m->chunk_id, c->id, hex);
	sr_strbuf_str(&w->b, "{");
	kstr(w, "id", hex, 1);
	/* an XXH3-128 id is the check itself */
	if (c->has_check && m->chunk_id == SR_ID_SHA256) {
		sr_hex_of(c->check, sizeof c->check, hex);
		kstr(w, "xxh3", hex, 0);
	}
	kstr(w, "pack", c->pack, 0);
	kuint(w, "offset", c->offset, 0);
	kuint(w, "clen", c->clen, 0);
	kuint(w, "rlen", c->rlen, 0);
	kstr(w, "xf", xf != NULL ? xf : "unknown", 0);
	if (c->mlen != 0) {
		kuint(w, "at", c->at, 0);
		kuint(w, "mlen", c->mlen, 0);
	}
	if (c->has_csum) {
		sr_hex_of(c->csum, sizeof c->csum, hex);
		kstr(w, "csum", hex, 0);
	}
	sr_strbuf_str(&w->b, "}");
}

static void
chunks(struct mw *w, const struct sr_manifest *m, const struct sr_mentry *e)
{
	size_t i;

	key(w, "chunks", 0);
	sr_strbuf_str(&w->b, "[");
	for (i = 0; i < e->nchunks && !w->b.failed; i++) {
		if (i > 0)
			sr_strbuf_str(&w->b, ", ");
		chunk(w, m, &e->chunks[i]);
	}
	sr_strbuf_str(&w->b, "]");
}

static void
dims(struct mw *w, const char *k, const uint64_t *v, int n, int first)
{
	int d;

	key(w, k, first);
	sr_strbuf_str(&w->b, "[");
	for (d = 0; d < n; d++)
		sr_strbuf_printf(&w->b, d > 0 ? ", %" PRIu64 : "%" PRIu64, v[d]);
	sr_strbuf_str(&w->b, "]");
}

static void
tensor(struct mw *w, const struct sr_manifest *m, const struct sr_mtensor *t)
{
	size_t i;

	sr_strbuf_str(&w->b, "{");
	kstr(w, "name", t->name, 1);
	kstr(w, "dtype", sr_dtype_name(t->dtype), 0);
	dims(w, "shape", t->shape, t->ndim, 0);
	key(w, "pieces", 0);
	sr_strbuf_str(&w->b, "[");
	for (i = 0; i < t->npieces && !w->b.failed; i++) {
		const struct sr_mpiece *p = &t->pieces[i];

		sr_strbuf_str(&w->b, i > 0 ? ", {" : "{");
		dims(w, "offsets", p->offsets, t->ndim, 1);
		dims(w, "sizes", p->sizes, t->ndim, 0);
		kuint(w, "size", p->data.size, 0);
		if (p->share) {
			key(w, "share", 0);
			sr_strbuf_str(&w->b, "{");
			kuint(w, "first", p->share_first, 1);
			kuint(w, "of", p->share_of, 0);
			kuint(w, "offset", p->share_off, 0);
			sr_strbuf_str(&w->b, "}");
		}
		chunks(w, m, &p->data);
		sr_strbuf_str(&w->b, "}");
	}
	sr_strbuf_str(&w->b, "]}");
}

static void
entry(struct mw *w, const struct sr_manifest *m, const struct sr_mentry *e)
{
	sr_strbuf_str(&w->b, "{");
	kstr(w, "path", e->path, 1);
	kstr(w, "type", sr_mtype_name(e->type), 0);
	kuint(w, "mode", e->mode, 0);
	kint(w, "mtime_ns", e->mtime_ns);
	if (e->type == SR_MT_FILE) {
		kuint(w, "size", e->size, 0);
		chunks(w, m, e);
	} else if (e->type == SR_MT_SYMLINK)
		kstr(w, "target", e->target, 0);
	sr_strbuf_str(&w->b, "}");
}

char *
sr_manifest_dump(const struct sr_manifest *m, size_t *len, char *err)
{
	const struct sr_ckpt_stats *s = &m->stats;
	struct mw w;
	size_t i;

	memset(&w, 0, sizeof w);
	/* the top's keys one a line: "{\n \"version\": 4,\n \"job\": ..." */
	sr_strbuf_str(&w.b, "{\n ");
	kuint(&w, "version", (uint64_t)m->version, 1);
	if (m->version >= SR_MANIFEST_VERSION) {
		sr_strbuf_str(&w.b, ",\n ");
		kstr(&w, "chunk_id", "xxh3-128", 1);
	}
	sr_strbuf_str(&w.b, ",\n ");
	kstr(&w, "job", m->job, 1);
	sr_strbuf_str(&w.b, ",\n ");
	kuint(&w, "seq", s->seq, 1);
	/* The chain (doc/format.md): a manifest read from an older version
	 * and written again keeps saying nothing of it. */
	if (m->link == SR_LINK_PARENT) {
		sr_strbuf_str(&w.b, ",\n ");
		kuint(&w, "parent", m->parent, 1);
	} else if (m->link == SR_LINK_NONE)
		sr_strbuf_str(&w.b, ",\n \"parent\": null");
	if (m->link == SR_LINK_PARENT || m->link == SR_LINK_NONE) {
		sr_strbuf_str(&w.b, ",\n ");
		kuint(&w, "epoch", s->epoch, 1);
	}
	sr_strbuf_str(&w.b, ",\n \"step\": ");
	sr_strbuf_printf(&w.b, "%" PRId64, (int64_t)s->step);
	if (s->world_size > 0) {
		sr_strbuf_str(&w.b, ",\n \"world_size\": ");
		sr_strbuf_printf(&w.b, "%d", s->world_size);
	}
	sr_strbuf_str(&w.b, ",\n \"created\": ");
	real(&w, s->created);
	sr_strbuf_str(&w.b, ",\n \"stats\": {");
	kuint(&w, "files", s->files, 1);
	kuint(&w, "chunks", s->chunks, 0);
	kuint(&w, "raw_bytes", s->raw_bytes, 0);
	kuint(&w, "stored_bytes", s->stored_bytes, 0);
	kuint(&w, "new_bytes", s->new_bytes, 0);
	kuint(&w, "reused_chunks", s->reused_chunks, 0);
	key(&w, "seconds", 0);
	real(&w, s->seconds);
	/* One entry per line keeps diffs and `grep` of manifests useful. */
	sr_strbuf_str(&w.b, "},\n \"entries\": [");
	for (i = 0; i < m->nentries && !w.b.failed && !w.utf8; i++) {
		sr_strbuf_str(&w.b, i > 0 ? ",\n  " : "\n  ");
		entry(&w, m, &m->entries[i]);
	}
	sr_strbuf_str(&w.b, m->nentries > 0 ? "\n ]" : "]");
	if (m->ntensors > 0) {
		sr_strbuf_str(&w.b, ",\n \"tensors\": [");
		for (i = 0; i < m->ntensors && !w.b.failed && !w.utf8; i++) {
			sr_strbuf_str(&w.b, i > 0 ? ",\n  " : "\n  ");
			tensor(&w, m, &m->tensors[i]);
		}
		sr_strbuf_str(&w.b, "\n ]");
	}
	sr_strbuf_str(&w.b, "\n}\n");
	if (w.utf8) {
		sr_strbuf_free(&w.b);
		sr_err(err, "serialise the manifest: a path or name is missing or not UTF-8 (a "
		    "bug: the save skips those)");
		return NULL;
	}
	if (w.b.failed) {
		sr_strbuf_free(&w.b);
		sr_err_oom(err, "write the manifest's JSON");
		return NULL;
	}
	if (len != NULL)
		*len = w.b.len;
	return sr_strbuf_take(&w.b);
}
