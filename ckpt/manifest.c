/*
 * manifest.c: the checkpoint manifest in memory, its JSON form read
 * (jansson; written by manifest-write.c) and the checks a restore relies
 * on before it writes anything. Parsing
 * and validation are strict because a manifest is read from shared storage
 * that anyone with write access to the bucket can change: every message
 * names the key or entry at fault.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "codec.h"
#include "jobkeys.h"
#include "json.h"
#include "manifest.h"
#include "pathsafe.h"
#include "util.h"

void
sr_manifest_init(struct sr_manifest *m)
{
	memset(m, 0, sizeof *m);
	m->version = SR_MANIFEST_VERSION;
	m->chunk_id = SR_ID_XXH3;
	m->stats.step = -1;
}

void
sr_manifest_free(struct sr_manifest *m)
{
	size_t i;

	for (i = 0; i < m->nentries; i++) {
		free(m->entries[i].path);
		free(m->entries[i].target);
		free(m->entries[i].chunks);
	}
	free(m->entries);
	for (i = 0; i < m->ntensors; i++) {
		struct sr_mtensor *t = &m->tensors[i];
		size_t k;

		for (k = 0; k < t->npieces; k++) {
			free(t->pieces[k].data.path);
			free(t->pieces[k].data.chunks);
		}
		free(t->pieces);
		free(t->name);
	}
	free(m->tensors);
	for (i = 0; i < m->npacks; i++)
		free(m->packs[i]);
	free(m->packs);
	free(m->job);
	sr_manifest_init(m);
}

/* Room for one more of the *n elements of size at *v (capacity *cap,
 * first first): 0, or -1 with err and the array as it was. */
static int
room(void *v, size_t n, size_t *cap, size_t first, size_t size, char *err)
{
	void **pv = v, *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : first;
	if ((p = sr_try_reallocarray(*pv, c, size, err)) == NULL)
		return -1;
	*pv = p;
	*cap = c;
	return 0;
}

struct sr_mentry *
sr_manifest_add(struct sr_manifest *m, const char *path, enum sr_mtype type, char *err)
{
	struct sr_mentry *e;
	char *copy;

	if (room(&m->entries, m->nentries, &m->entries_cap, 64, sizeof *m->entries, err) == -1 ||
	    (copy = sr_try_strdup(path, err)) == NULL)
		return NULL;
	e = &m->entries[m->nentries++];
	memset(e, 0, sizeof *e);
	e->path = copy;
	e->type = type;
	return e;
}

struct sr_mtensor *
sr_manifest_add_tensor(struct sr_manifest *m, const char *name, enum sr_dtype dtype, int ndim,
    const uint64_t *shape, char *err)
{
	struct sr_mtensor *t;
	char *copy;

	if (ndim < 0 || ndim > SR_TENSOR_DIMS) {
		sr_err(err, "tensor \"%s\": %d dimensions (a bug: at most %d)", name, ndim,
		    SR_TENSOR_DIMS);
		return NULL;
	}
	if (room(&m->tensors, m->ntensors, &m->tensors_cap, 16, sizeof *m->tensors, err) == -1 ||
	    (copy = sr_try_strdup(name, err)) == NULL)
		return NULL;
	t = &m->tensors[m->ntensors++];
	memset(t, 0, sizeof *t);
	t->name = copy;
	t->dtype = dtype;
	t->ndim = ndim;
	if (ndim > 0)
		memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
	return t;
}

struct sr_mpiece *
sr_mtensor_add_piece(struct sr_mtensor *t, const uint64_t *offsets, const uint64_t *sizes,
    char *err)
{
	struct sr_mpiece *p;
	char at[SR_TENSOR_DIMS * 24 + 2] = "", *path;
	size_t len = 0;
	int d;

	for (d = 0; d < t->ndim; d++)
		len += (size_t)snprintf(at + len, sizeof at - len, "%s%" PRIu64, d ? "," : "",
		    offsets[d]);
	if (room(&t->pieces, t->npieces, &t->pieces_cap, 4, sizeof *t->pieces, err) == -1 ||
	    (path = sr_try_asprintf(err, "%s[%s]", t->name, at)) == NULL)
		return NULL;
	p = &t->pieces[t->npieces++];
	memset(p, 0, sizeof *p);
	p->data.type = SR_MT_FILE;
	for (d = 0; d < t->ndim; d++) {
		p->offsets[d] = offsets[d];
		p->sizes[d] = sizes[d];
	}
	p->data.path = path;
	return p;
}

static const struct {
	const char *name;
	size_t size;
} dtypes[SR_DT_COUNT] = {
	[SR_DT_BYTES] = { "bytes", 1 }, [SR_DT_F32] = { "f32", 4 }, [SR_DT_F64] = { "f64", 8 },
	[SR_DT_F16] = { "f16", 2 }, [SR_DT_BF16] = { "bf16", 2 },
	[SR_DT_F8E4M3] = { "f8e4m3", 1 }, [SR_DT_F8E5M2] = { "f8e5m2", 1 },
	[SR_DT_I8] = { "i8", 1 }, [SR_DT_I16] = { "i16", 2 }, [SR_DT_I32] = { "i32", 4 },
	[SR_DT_I64] = { "i64", 8 }, [SR_DT_U8] = { "u8", 1 }, [SR_DT_U16] = { "u16", 2 },
	[SR_DT_U32] = { "u32", 4 }, [SR_DT_U64] = { "u64", 8 },
};

size_t
sr_dtype_size(enum sr_dtype d)
{
	return (unsigned)d < SR_DT_COUNT ? dtypes[d].size : 0;
}

const char *
sr_dtype_name(enum sr_dtype d)
{
	return (unsigned)d < SR_DT_COUNT ? dtypes[d].name : NULL;
}

int
sr_dtype_parse(const char *s)
{
	int i;

	for (i = 0; i < SR_DT_COUNT; i++) {
		if (strcmp(s, dtypes[i].name) == 0)
			return i;
	}
	return -1;
}

struct sr_mchunk *
sr_mentry_add_chunk(struct sr_mentry *e, char *err)
{
	struct sr_mchunk *c;

	/* room for one at first: most files are one chunk (every small file
	 * is), and 10,000 of them each given room for four touched 5 MiB of
	 * fresh heap in a save (page faults on its one serial thread) */
	if (room(&e->chunks, e->nchunks, &e->chunks_cap, 1, sizeof *e->chunks, err) == -1)
		return NULL;
	c = &e->chunks[e->nchunks++];
	memset(c, 0, sizeof *c);
	return c;
}

uint64_t
sr_mchunk_stored(const struct sr_mchunk *c)
{
	/* clen <= the codec's bound of mlen <= 256 MiB: no overflow */
	if (c->mlen == 0)
		return c->clen;
	return (c->clen * c->rlen + c->mlen / 2) / c->mlen;
}

void
sr_manifest_note_chunk(struct sr_manifest *m, const struct sr_mchunk *c)
{
	if (c->mlen != 0 && m->version == SR_MANIFEST_VERSION)
		m->version = SR_MANIFEST_VERSION_SLICES;
}

const char *
sr_manifest_intern(struct sr_manifest *m, const char *pack, char *err)
{
	char *copy;
	size_t i;

	/* Newest first: consecutive chunks nearly always share a pack. */
	for (i = m->npacks; i > 0; i--) {
		if (strcmp(m->packs[i - 1], pack) == 0)
			return m->packs[i - 1];
	}
	if (room(&m->packs, m->npacks, &m->packs_cap, 8, sizeof *m->packs, err) == -1 ||
	    (copy = sr_try_strdup(pack, err)) == NULL)
		return NULL;
	m->packs[m->npacks] = copy;
	return m->packs[m->npacks++];
}

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sr_mentry *)a)->path, ((const struct sr_mentry *)b)->path);
}

void
sr_manifest_sort(struct sr_manifest *m)
{
	if (m->nentries > 1)
		sr_sort(m->entries, m->nentries, sizeof *m->entries, entry_cmp);
}

/* Binary search among the first n entries (sorted). */
static long
find_in(const struct sr_mentry *v, size_t n, const char *path)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(v[mid].path, path);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct sr_mtensor *
sr_manifest_find_tensor(const struct sr_manifest *m, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->tensors[mid].name, name);
		if (c == 0)
			return &m->tensors[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

long
sr_manifest_find(const struct sr_manifest *m, const char *path)
{
	return find_in(m->entries, m->nentries, path);
}

static const char *mtype_names[] = { "file", "dir", "symlink" };

const char *
sr_mtype_name(enum sr_mtype t)
{
	return (unsigned)t < SR_ARRAY_LEN(mtype_names) ? mtype_names[t] : "unknown";
}

int
sr_mtype_parse(const char *s)
{
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(mtype_names); i++) {
		if (strcmp(s, mtype_names[i]) == 0)
			return (int)i;
	}
	return -1;
}

/* Lowercase only: the format writes one spelling of each value. */
static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int
sr_hex_parse(const char *hex, uint8_t *b, size_t n)
{
	size_t i;

	if (strlen(hex) != 2 * n)
		return -1;
	for (i = 0; i < n; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

size_t
sr_id_len(enum sr_chunk_id a)
{
	return a == SR_ID_SHA256 ? 32 : 16;
}

void
sr_id_hex(enum sr_chunk_id a, const uint8_t id[32], char out[65])
{
	sr_hex_of(id, sr_id_len(a), out);
}

int
sr_id_parse(enum sr_chunk_id a, const char *hex, uint8_t id[32])
{
	memset(id, 0, 32);
	return sr_hex_parse(hex, id, sr_id_len(a));
}

/* ---- JSON input: structure ---- */

/* A member of obj: required (missing -> error) or optional (NULL). */
static json_t *
member(json_t *obj, const char *where, const char *key, int required, char *err)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL && required)
		sr_err(err, "%s%s%s: missing", where, *where ? "." : "", key);
	return v;
}

/* An integer in [lo, hi] (where.key names it in errors). */
static int
get_int(json_t *obj, const char *where, const char *key, int required, long long lo,
    long long hi, long long *out, char *err)
{
	json_t *v = member(obj, where, key, required, err);
	const char *dot = *where ? "." : "";
	long long x;

	if (v == NULL)
		return required ? -1 : 0;
	if (!json_is_integer(v))
		return sr_err(err, "%s%s%s: not an integer", where, dot, key);
	x = (long long)json_integer_value(v);
	if (x < lo && lo == 0)
		return sr_err(err, "%s%s%s: %lld is negative", where, dot, key, x);
	if (x < lo || x > hi)
		return sr_err(err, "%s%s%s: %lld is out of range [%lld, %lld]", where, dot, key, x, lo, hi);
	*out = x;
	return 0;
}

static int
get_uint(json_t *obj, const char *where, const char *key, int required, uint64_t *out,
    char *err)
{
	long long x = 0;

	if (get_int(obj, where, key, required, 0, INT64_MAX, &x, err) == -1)
		return -1;
	*out = (uint64_t)x;
	return 0;
}

/* A string without NUL bytes; *out points into the JSON value. */
static int
get_str(json_t *obj, const char *where, const char *key, int required, const char **out,
    char *err)
{
	json_t *v = member(obj, where, key, required, err);
	const char *dot = *where ? "." : "";

	*out = NULL;
	if (v == NULL)
		return required ? -1 : 0;
	if (!json_is_string(v))
		return sr_err(err, "%s%s%s: not a string", where, dot, key);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return sr_err(err, "%s%s%s: contains a NUL byte", where, dot, key);
	*out = json_string_value(v);
	return 0;
}

static int
get_number(json_t *obj, const char *where, const char *key, double *out, char *err)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return 0;
	if (!json_is_number(v))
		return sr_err(err, "%s%s%s: not a number", where, *where ? "." : "", key);
	*out = json_number_value(v);
	return 0;
}

static int
parse_chunk(json_t *o, const char *where, struct sr_manifest *m, struct sr_mchunk *c, char *err)
{
	const char *id, *pack, *xf, *check = NULL, *csum = NULL;
	char kw[96];
	int x;

	if (!json_is_object(o))
		return sr_err(err, "%s: not an object", where);
	if (get_str(o, where, "id", 1, &id, err) == -1 ||
	    get_str(o, where, "pack", 1, &pack, err) == -1 ||
	    get_uint(o, where, "offset", 1, &c->offset, err) == -1 ||
	    get_uint(o, where, "clen", 1, &c->clen, err) == -1 ||
	    get_uint(o, where, "rlen", 1, &c->rlen, err) == -1 ||
	    get_str(o, where, "xf", 1, &xf, err) == -1 ||
	    get_str(o, where, "xxh3", 0, &check, err) == -1 ||
	    get_str(o, where, "csum", 0, &csum, err) == -1 ||
	    get_uint(o, where, "at", 0, &c->at, err) == -1 ||
	    get_uint(o, where, "mlen", 0, &c->mlen, err) == -1)
		return -1;
	/* a slice has both; an older reader must not see one (version 4) */
	if ((json_object_get(o, "at") != NULL) != (json_object_get(o, "mlen") != NULL))
		return sr_err(err, "%s: a slice has both at and mlen, this chunk only %s", where,
		    json_object_get(o, "at") != NULL ? "at" : "mlen");
	if (json_object_get(o, "mlen") != NULL && m->version != SR_MANIFEST_VERSION_SLICES)
		return sr_err(err, "%s: a slice (at, mlen) in a manifest of version %d (version"
		    " %d has them)", where, m->version, SR_MANIFEST_VERSION_SLICES);
	if (json_object_get(o, "mlen") != NULL && c->mlen == 0)
		return sr_err(err, "%s.mlen: 0 (a slice's member holds at least its bytes)", where);
	if (csum != NULL) {
		if (sr_hex_parse(csum, c->csum, sizeof c->csum) == -1) {
			sr_path_quote(csum, kw, sizeof kw);
			return sr_err(err, "%s.csum: %s is not 32 lowercase hex digits", where, kw);
		}
		c->has_csum = 1;
	}
	if (sr_id_parse(m->chunk_id, id, c->id) == -1) {
		sr_path_quote(id, kw, sizeof kw);
		return sr_err(err, "%s.id: %s is not %zu lowercase hex digits", where, kw,
		    2 * sr_id_len(m->chunk_id));
	}
	if (m->chunk_id == SR_ID_XXH3) {
		/* the id is the check; an xxh3 key, if any, is not read */
		memcpy(c->check, c->id, sizeof c->check);
		c->has_check = 1;
	} else if (check != NULL) {
		if (sr_hex_parse(check, c->check, sizeof c->check) == -1) {
			sr_path_quote(check, kw, sizeof kw);
			return sr_err(err, "%s.xxh3: %s is not 32 lowercase hex digits", where, kw);
		}
		c->has_check = 1;
	}
	if ((x = sr_transform_parse(xf)) < 0) {
		sr_path_quote(xf, kw, sizeof kw);
		return sr_err(err, "%s.xf: unknown transform %s", where, kw);
	}
	c->xf = x;
	if ((c->pack = sr_manifest_intern(m, pack, err)) == NULL)
		return sr_err_prefix(err, "%s", where);
	return 0;
}

/* A file's or a piece's size and chunks. */
static int
parse_data(json_t *o, const char *where, struct sr_manifest *m, struct sr_mentry *e, char *err)
{
	json_t *chunks = json_object_get(o, "chunks");
	char cw[160];
	size_t i;

	if (get_uint(o, where, "size", 1, &e->size, err) == -1)
		return -1;
	if (chunks == NULL)
		return sr_err(err, "%s.chunks: missing", where);
	if (!json_is_array(chunks))
		return sr_err(err, "%s.chunks: not an array", where);
	for (i = 0; i < json_array_size(chunks); i++) {
		struct sr_mchunk *c;

		snprintf(cw, sizeof cw, "%s.chunks[%zu]", where, i);
		/* add_chunk may move e's chunks, never e itself */
		if ((c = sr_mentry_add_chunk(e, err)) == NULL)
			return sr_err_prefix(err, "%s", cw);
		if (parse_chunk(json_array_get(chunks, i), cw, m, c, err) == -1)
			return -1;
	}
	return 0;
}

static int
parse_entry(json_t *o, const char *where, struct sr_manifest *m, char *err)
{
	const char *path, *type, *target;
	struct sr_mentry *e;
	long long mode = 0, mtime = 0;
	json_t *chunks;
	char q[64];
	int t;

	if (!json_is_object(o))
		return sr_err(err, "%s: not an object", where);
	if (get_str(o, where, "path", 1, &path, err) == -1 ||
	    get_str(o, where, "type", 1, &type, err) == -1)
		return -1;
	if ((t = sr_mtype_parse(type)) < 0)
		return sr_err(err, "%s.type: unknown type %s (file, dir or symlink)", where,
		    sr_path_quote(type, q, sizeof q));
	if (get_int(o, where, "mode", 1, 0, 07777, &mode, err) == -1 ||
	    get_int(o, where, "mtime_ns", 1, INT64_MIN, INT64_MAX, &mtime, err) == -1 ||
	    get_str(o, where, "target", t == SR_MT_SYMLINK, &target, err) == -1)
		return -1;
	if (t != SR_MT_SYMLINK && target != NULL)
		return sr_err(err, "%s.target: only symlinks have a target", where);
	chunks = json_object_get(o, "chunks");
	if (t != SR_MT_FILE && (chunks != NULL || json_object_get(o, "size") != NULL))
		return sr_err(err, "%s: only files have a size and chunks", where);
	if ((e = sr_manifest_add(m, path, (enum sr_mtype)t, err)) == NULL)
		return sr_err_prefix(err, "%s", where);
	e->mode = (unsigned)mode;
	e->mtime_ns = mtime;
	if (target != NULL && (e->target = sr_try_strdup(target, err)) == NULL)
		return sr_err_prefix(err, "%s", where);
	if (t != SR_MT_FILE)
		return 0;
	return parse_data(o, where, m, e, err);
}

/* An array of at most SR_TENSOR_DIMS non-negative integers into v; its
 * length into *n, or checked against *n when *n >= 0. */
static int
parse_dims(json_t *o, const char *where, const char *key, uint64_t *v, int *n, char *err)
{
	json_t *a = member(o, where, key, 1, err), *x;
	size_t i;

	if (a == NULL)
		return -1;
	if (!json_is_array(a))
		return sr_err(err, "%s.%s: not an array", where, key);
	if (*n < 0 && json_array_size(a) > SR_TENSOR_DIMS)
		return sr_err(err, "%s.%s: %zu dimensions, more than %d", where, key,
		    json_array_size(a), SR_TENSOR_DIMS);
	if (*n >= 0 && json_array_size(a) != (size_t)*n)
		return sr_err(err, "%s.%s: %zu dimensions, but the tensor has %d", where, key,
		    json_array_size(a), *n);
	json_array_foreach(a, i, x) {
		if (!json_is_integer(x) || json_integer_value(x) < 0)
			return sr_err(err, "%s.%s[%zu]: not a non-negative integer", where, key, i);
		v[i] = (uint64_t)json_integer_value(x);
	}
	*n = (int)json_array_size(a);
	return 0;
}

static int
parse_tensor(json_t *o, const char *where, struct sr_manifest *m, char *err)
{
	const char *name, *dtype;
	uint64_t shape[SR_TENSOR_DIMS], off[SR_TENSOR_DIMS], size[SR_TENSOR_DIMS];
	struct sr_mtensor *t;
	json_t *pieces, *po, *sh;
	struct sr_mpiece *p;
	char pw[128], sw[140], q[64];
	size_t i;
	int ndim = -1, dt;

	if (!json_is_object(o))
		return sr_err(err, "%s: not an object", where);
	if (get_str(o, where, "name", 1, &name, err) == -1 ||
	    get_str(o, where, "dtype", 1, &dtype, err) == -1 ||
	    parse_dims(o, where, "shape", shape, &ndim, err) == -1)
		return -1;
	if ((dt = sr_dtype_parse(dtype)) < 0)
		return sr_err(err, "%s.dtype: unknown type %s", where, sr_path_quote(dtype, q, sizeof q));
	if ((pieces = member(o, where, "pieces", 1, err)) == NULL)
		return -1;
	if (!json_is_array(pieces))
		return sr_err(err, "%s.pieces: not an array", where);
	if ((t = sr_manifest_add_tensor(m, name, (enum sr_dtype)dt, ndim, shape, err)) == NULL)
		return sr_err_prefix(err, "%s", where);
	json_array_foreach(pieces, i, po) {
		snprintf(pw, sizeof pw, "%s.pieces[%zu]", where, i);
		if (!json_is_object(po))
			return sr_err(err, "%s: not an object", pw);
		if (parse_dims(po, pw, "offsets", off, &ndim, err) == -1 ||
		    parse_dims(po, pw, "sizes", size, &ndim, err) == -1)
			return -1;
		/* add_piece may move t's pieces, never t itself */
		if ((p = sr_mtensor_add_piece(t, off, size, err)) == NULL)
			return sr_err_prefix(err, "%s", pw);
		if (parse_data(po, pw, m, &p->data, err) == -1)
			return -1;
		if ((sh = json_object_get(po, "share")) == NULL)
			continue;
		snprintf(sw, sizeof sw, "%s.share", pw);
		if (!json_is_object(sh))
			return sr_err(err, "%s: not an object", sw);
		p->share = 1;
		if (get_uint(sh, sw, "first", 1, &p->share_first, err) == -1 ||
		    get_uint(sh, sw, "of", 1, &p->share_of, err) == -1 ||
		    get_uint(sh, sw, "offset", 1, &p->share_off, err) == -1)
			return -1;
	}
	return 0;
}

/* `parent` (a seq, or null) and `epoch`: m->link says what was read. A
 * manifest without `parent` is an older version's (SR_LINK_OLD); its
 * epoch is 0. */
static int
parse_link(json_t *root, struct sr_manifest *m, char *err)
{
	json_t *p = json_object_get(root, "parent");
	long long v = 0;

	if (p == NULL)
		m->link = SR_LINK_OLD;
	else if (json_is_null(p))
		m->link = SR_LINK_NONE;
	else if (!json_is_integer(p))
		return sr_err(err, "parent: not an integer or null");
	else {
		if (get_int(root, "", "parent", 1, 0, (long long)SR_SEQ_MAX, &v, err) == -1)
			return -1;
		m->link = SR_LINK_PARENT;
		m->parent = (uint64_t)v;
	}
	return get_uint(root, "", "epoch", 0, &m->stats.epoch, err);
}

/* The hash of the chunk ids: SHA-256 in version 1 (which has no such key),
 * the key's in version 2, where it is required. */
static int
parse_chunk_id(json_t *root, struct sr_manifest *m, char *err)
{
	const char *a = NULL;
	char q[64];

	if (m->version == SR_MANIFEST_VERSION_SHA256) {
		m->chunk_id = SR_ID_SHA256;
		return 0;
	}
	if (get_str(root, "", "chunk_id", 1, &a, err) == -1)
		return -1;
	if (strcmp(a, "xxh3-128") != 0)
		return sr_err(err, "chunk_id: %s is not known (this spotrun knows xxh3-128)",
		    sr_path_quote(a, q, sizeof q));
	m->chunk_id = SR_ID_XXH3;
	return 0;
}

static int
parse_root(json_t *root, struct sr_manifest *m, char *err)
{
	struct sr_ckpt_stats *s = &m->stats;
	long long version = 0, step = -1, world_size = 0;
	const char *job;
	json_t *st, *entries, *tensors;
	char where[64];
	size_t i;

	if (!json_is_object(root))
		return sr_err(err, "not a JSON object");
	if (get_int(root, "", "version", 1, 0, INT32_MAX, &version, err) == -1)
		return -1;
	if (version < SR_MANIFEST_VERSION_SHA256 || version > SR_MANIFEST_VERSION_SLICES)
		return sr_err(err, "version %lld is not known (this spotrun reads versions %d to %d)",
		    version, SR_MANIFEST_VERSION_SHA256, SR_MANIFEST_VERSION_SLICES);
	m->version = (int)version;
	if (parse_chunk_id(root, m, err) == -1 || parse_link(root, m, err) == -1)
		return -1;
	if (get_str(root, "", "job", 1, &job, err) == -1 ||
	    get_uint(root, "", "seq", 1, &s->seq, err) == -1 ||
	    get_int(root, "", "step", 0, -1, INT64_MAX, &step, err) == -1 ||
	    get_int(root, "", "world_size", 0, 1, INT32_MAX, &world_size, err) == -1 ||
	    get_number(root, "", "created", &s->created, err) == -1)
		return -1;
	if ((m->job = sr_try_strdup(job, err)) == NULL)
		return sr_err_prefix(err, "job");
	s->step = step;
	s->world_size = (int)world_size;
	if (s->seq > SR_SEQ_MAX)
		return sr_err(err, "seq: %" PRIu64 " is out of range [0, %llu]", s->seq, SR_SEQ_MAX);
	/* Statistics are informational: tolerated when absent. */
	if ((st = json_object_get(root, "stats")) != NULL) {
		if (!json_is_object(st))
			return sr_err(err, "stats: not an object");
		if (get_uint(st, "stats", "files", 0, &s->files, err) == -1 ||
		    get_uint(st, "stats", "chunks", 0, &s->chunks, err) == -1 ||
		    get_uint(st, "stats", "raw_bytes", 0, &s->raw_bytes, err) == -1 ||
		    get_uint(st, "stats", "stored_bytes", 0, &s->stored_bytes, err) == -1 ||
		    get_uint(st, "stats", "new_bytes", 0, &s->new_bytes, err) == -1 ||
		    get_uint(st, "stats", "reused_chunks", 0, &s->reused_chunks, err) == -1 ||
		    get_number(st, "stats", "seconds", &s->seconds, err) == -1)
			return -1;
	}
	if ((entries = member(root, "", "entries", 1, err)) == NULL)
		return -1;
	if (!json_is_array(entries))
		return sr_err(err, "entries: not an array");
	for (i = 0; i < json_array_size(entries); i++) {
		snprintf(where, sizeof where, "entries[%zu]", i);
		if (parse_entry(json_array_get(entries, i), where, m, err) == -1)
			return -1;
	}
	if ((tensors = json_object_get(root, "tensors")) == NULL)
		return 0;
	if (!json_is_array(tensors))
		return sr_err(err, "tensors: not an array");
	for (i = 0; i < json_array_size(tensors); i++) {
		snprintf(where, sizeof where, "tensors[%zu]", i);
		if (parse_tensor(json_array_get(tensors, i), where, m, err) == -1)
			return -1;
	}
	return 0;
}

int
sr_manifest_parse(const char *buf, size_t len, struct sr_manifest *m, char *err)
{
	json_error_t je;
	json_t *root;
	int rc, oom;

	sr_manifest_init(m);
	root = sr_json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je, &oom);
	if (oom)
		return sr_err_oom(err, "parse the manifest's JSON");
	if (root == NULL)
		return sr_err(err, "JSON line %d column %d: %s", je.line, je.column, je.text);
	rc = parse_root(root, m, err);
	json_decref(root);
	return rc;
}

/* ---- validation: what a restore relies on ---- */

int
sr_manifest_is_link(const char *path, void *arg)
{
	const struct sr_manifest *m = arg;
	long i = sr_manifest_find(m, path);

	return i >= 0 && m->entries[i].type == SR_MT_SYMLINK;
}

static int
check_chunk(const struct sr_mentry *e, size_t k, const char *packdir, int slices, const char *q,
    char *err)
{
	const struct sr_mchunk *c = &e->chunks[k];
	uint64_t mlen = sr_mchunk_mlen(c);
	const char *name;
	char qp[256];
	size_t bound;

	if (c->rlen == 0)
		return sr_err(err, "%s: chunk %zu: raw length 0", q, k);
	if (c->mlen != 0 && !slices)
		return sr_err(err, "%s: chunk %zu: a slice (at %" PRIu64 " of %" PRIu64 " bytes), "
		    "which only a file's chunks of a version %d manifest may be", q, k, c->at,
		    c->mlen, SR_MANIFEST_VERSION_SLICES);
	if (c->mlen != 0 && (c->at > c->mlen || c->rlen > c->mlen - c->at))
		return sr_err(err, "%s: chunk %zu: slice [%" PRIu64 ", +%" PRIu64 ") is outside "
		    "its member's %" PRIu64 " bytes", q, k, c->at, c->rlen, c->mlen);
	if (mlen > SR_CODEC_MAX_CHUNK)
		return sr_err(err, "%s: chunk %zu: raw length %" PRIu64
		    " exceeds the %zu MiB chunk limit", q, k, mlen, SR_CODEC_MAX_CHUNK >> 20);
	bound = sr_codec_bound((size_t)mlen);
	if (c->clen == 0 || c->clen > bound)
		return sr_err(err, "%s: chunk %zu: encoded length %" PRIu64
		    " is outside [1, %zu] for %" PRIu64 " raw bytes", q, k, c->clen, bound, mlen);
	if (c->offset > SR_PACK_LIMIT - c->clen)
		return sr_err(err, "%s: chunk %zu: offset %" PRIu64
		    " is beyond the %" PRIu64 " GiB pack limit", q, k, c->offset, SR_PACK_LIMIT >> 30);
	name = c->pack + strlen(packdir);
	if (strncmp(c->pack, packdir, strlen(packdir)) != 0 || strchr(name, '/') != NULL ||
	    sr_path_check(name, NULL) == -1)
		return sr_err(err, "%s: chunk %zu: pack %s is not an object under %s", q, k,
		    sr_path_quote(c->pack, qp, sizeof qp), packdir);
	return 0;
}

/* A file's or a piece's chunks: each sound (slices where allowed),
 * holding exactly its size. */
static int
check_data(const struct sr_mentry *e, const char *packdir, int slices, const char *who,
    char *err)
{
	uint64_t sum = 0;
	size_t k;

	for (k = 0; k < e->nchunks; k++) {
		if (check_chunk(e, k, packdir, slices, who, err) == -1)
			return -1;
		sum += e->chunks[k].rlen;	/* rlen <= 256 MiB: no overflow in practice */
		if (sum > e->size)
			break;
	}
	if (sum != e->size)
		return sr_err(err, "%s: size %" PRIu64 " but its chunks hold %s%" PRIu64 " bytes",
		    who, e->size, sum > e->size ? "more than " : "", sum);
	return 0;
}

static int
check_entry(const struct sr_manifest *m, size_t i, const char *packdir, char *err)
{
	const struct sr_mentry *e = &m->entries[i];
	const char *slash;
	char q[256], qp[256], who[270];

	if (sr_path_check(e->path, err) == -1)
		return -1;
	sr_path_quote(e->path, q, sizeof q);
	if (i > 0) {
		int c = strcmp(m->entries[i - 1].path, e->path);
		if (c == 0)
			return sr_err(err, "path %s: duplicate", q);
		if (c > 0)
			return sr_err(err, "path %s: entries are not sorted by path", q);
	}
	if ((slash = strrchr(e->path, '/')) != NULL) {
		char *parent = sr_try_strndup(e->path, (size_t)(slash - e->path), err);
		long p;

		if (parent == NULL)
			return sr_err_prefix(err, "check path %s", q);
		p = find_in(m->entries, i, parent);
		sr_path_quote(parent, qp, sizeof qp);
		free(parent);
		if (p < 0)
			return sr_err(err, "path %s: parent %s is not a directory of the checkpoint", q, qp);
		if (m->entries[p].type != SR_MT_DIR)
			return sr_err(err, "path %s: parent %s is a %s, not a directory", q, qp,
			    sr_mtype_name(m->entries[p].type));
	}
	if (e->mode & ~07777u)
		return sr_err(err, "path %s: mode %#o has bits beyond 07777", q, e->mode);
	if (e->type != SR_MT_FILE)
		return 0;
	snprintf(who, sizeof who, "path %s", q);
	return check_data(e, packdir, m->version == SR_MANIFEST_VERSION_SLICES, who, err);
}

/* Tensors: names unique and sorted, a known type, and each piece a box
 * inside the shape whose bytes its chunks hold. */
static int
check_tensor(const struct sr_manifest *m, size_t i, const char *packdir, char *err)
{
	const struct sr_mtensor *t = &m->tensors[i];
	char q[SR_TENSOR_NAME_MAX + 64], who[SR_TENSOR_NAME_MAX + 96];
	uint64_t elems;
	size_t k;
	int d;

	sr_path_quote(t->name, q, sizeof q);
	if (t->name[0] == '\0' || strlen(t->name) > SR_TENSOR_NAME_MAX)
		return sr_err(err, "tensor %s: a name is 1 to %d bytes", q, SR_TENSOR_NAME_MAX);
	if (i > 0 && strcmp(m->tensors[i - 1].name, t->name) >= 0)
		return sr_err(err, "tensor %s: %s", q, strcmp(m->tensors[i - 1].name, t->name) == 0 ?
		    "duplicate" : "tensors are not sorted by name");
	if (sr_dtype_name(t->dtype) == NULL)
		return sr_err(err, "tensor %s: unknown type %d", q, (int)t->dtype);
	for (k = 0; k < t->npieces; k++) {
		const struct sr_mpiece *p = &t->pieces[k];
		snprintf(who, sizeof who, "tensor %s piece %zu", q, k);
		elems = 1;
		for (d = 0; d < t->ndim; d++) {
			if (p->offsets[d] > t->shape[d] || p->sizes[d] > t->shape[d] - p->offsets[d])
				return sr_err(err, "%s: dimension %d: [%" PRIu64 ", +%" PRIu64 ") is "
				    "outside the shape's %" PRIu64, who, d, p->offsets[d], p->sizes[d],
				    t->shape[d]);
			if (p->sizes[d] != 0 && elems > UINT64_MAX / p->sizes[d])
				return sr_err(err, "%s: too many elements", who);
			elems *= p->sizes[d];
		}
		if (elems > UINT64_MAX / sr_dtype_size(t->dtype))
			return sr_err(err, "%s: too many elements", who);
		if (p->share && (p->share_first > p->share_of ||
		    p->data.nchunks > p->share_of - p->share_first ||
		    p->share_off > elems * sr_dtype_size(t->dtype) ||
		    p->data.size > elems * sr_dtype_size(t->dtype) - p->share_off))
			return sr_err(err, "%s: share of chunks %" PRIu64 " to %" PRIu64 " of %" PRIu64
			    " at byte %" PRIu64 " is not inside its %" PRIu64 " elements of %s", who,
			    p->share_first, p->share_first + p->data.nchunks, p->share_of,
			    p->share_off, elems, sr_dtype_name(t->dtype));
		if (!p->share && elems * sr_dtype_size(t->dtype) != p->data.size)
			return sr_err(err, "%s: size %" PRIu64 " is not its %" PRIu64 " elements of %s",
			    who, p->data.size, elems, sr_dtype_name(t->dtype));
		if (check_data(&p->data, packdir, 0, who, err) == -1)
			return -1;
	}
	return 0;
}

int
sr_manifest_validate(const struct sr_manifest *m, const char *job, uint64_t seq, char *err)
{
	char q[256], *packdir;
	size_t i;
	int rc = 0;

	if ((m->version == SR_MANIFEST_VERSION_SHA256) != (m->chunk_id == SR_ID_SHA256) ||
	    m->version < SR_MANIFEST_VERSION_SHA256 || m->version > SR_MANIFEST_VERSION_SLICES)
		return sr_err(err, "version %d with %s ids is not known", m->version,
		    m->chunk_id == SR_ID_SHA256 ? "SHA-256" : "XXH3-128");
	if (m->ntensors > 0 && m->version != SR_MANIFEST_VERSION_TENSORS)
		return sr_err(err, "tensors: a manifest of version %d has none (version %d has)",
		    m->version, SR_MANIFEST_VERSION_TENSORS);
	if (m->job == NULL || strcmp(m->job, job) != 0)
		return sr_err(err, "job: %s, but the manifest is stored under job \"%s\"",
		    sr_path_quote(m->job != NULL ? m->job : "", q, sizeof q), job);
	if (m->stats.seq != seq)
		return sr_err(err, "seq: %" PRIu64 ", but the manifest is stored as checkpoint %" PRIu64,
		    m->stats.seq, seq);
	/* The chain runs from newer to older only: no loop can be built. */
	if (m->link == SR_LINK_PARENT && m->parent >= seq)
		return sr_err(err, "parent: %" PRIu64 " is not below the checkpoint's seq %" PRIu64,
		    m->parent, seq);
	if ((packdir = sr_jobkey_prefix(job, SR_JOBKEY_PACKS, err)) == NULL)
		return sr_err_prefix(err, "check the manifest");
	for (i = 0; i < m->nentries && rc == 0; i++)
		rc = check_entry(m, i, packdir, err);
	for (i = 0; i < m->ntensors && rc == 0; i++)
		rc = check_tensor(m, i, packdir, err);
	free(packdir);
	if (rc == -1)
		return -1;
	/* Symlinks last: the lookup of link components needs sorted entries. */
	for (i = 0; i < m->nentries; i++) {
		const struct sr_mentry *e = &m->entries[i];
		if (e->type == SR_MT_SYMLINK &&
		    sr_path_check_link(e->path, e->target, sr_manifest_is_link, (void *)m, err) == -1)
			return -1;
	}
	return 0;
}
