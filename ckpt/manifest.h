/*
 * manifest.h: the manifest of one directory checkpoint, in memory and as
 * JSON (doc/format.md has the exact format). Parsing checks the structure
 * (types, ranges, required keys); sr_manifest_validate checks everything a
 * restore relies on (safe paths, parents, symlink targets, sizes, limits,
 * pack keys), so a restore can trust a manifest that passed both.
 */
#ifndef SR_MANIFEST_H
#define SR_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "jobkeys.h"	/* SR_SEQ_DIGITS, SR_SEQ_MAX */

/* Version 2: chunk ids are XXH3-128 (`chunk_id`); version 1, still read
 * and written on request: SHA-256 ids (doc/format.md, "Chunk ids").
 * Version 3: version 2 with tensors (the library's, doc/format.md): an
 * older spotrun refuses them rather than restore an empty directory.
 * Version 4: version 2 with slices (small files sharing one pack member,
 * doc/format.md "Slices"): an older spotrun would write a whole member
 * into each file, so it must refuse them. Readers take all four. */
#define SR_MANIFEST_VERSION_SHA256 1
#define SR_MANIFEST_VERSION 2
#define SR_MANIFEST_VERSION_TENSORS 3
#define SR_MANIFEST_VERSION_SLICES 4
/* Dimensions of a tensor at most. */
#define SR_TENSOR_DIMS 8
/* Bytes of a tensor's name at most. */
#define SR_TENSOR_NAME_MAX 255
/* Largest manifest object a reader loads. */
#define SR_MANIFEST_MAX ((size_t)64 << 20)
/* Largest pack offset + length a manifest may name (packs are ~1 GiB). */
#define SR_PACK_LIMIT ((uint64_t)1 << 40)

enum sr_mtype {
	SR_MT_FILE = 0,
	SR_MT_DIR,
	SR_MT_SYMLINK
};

/* What a chunk's id is: the hash of its raw bytes that content addressing
 * keys on (doc/format.md, "Chunk ids"). */
enum sr_chunk_id {
	SR_ID_XXH3 = 0,		/* XXH3-128, 16 bytes: the id is the check */
	SR_ID_SHA256		/* SHA-256, 32 bytes (manifest version 1) */
};

/* One chunk of a file: raw bytes [file offset, + rlen) of the file. Its
 * pack member decodes to the chunk itself (mlen 0), or, for a slice, to
 * mlen bytes of which the chunk is [at, at + rlen): small files share a
 * member (doc/format.md, "Slices"); id and check are the chunk's own. */
struct sr_mchunk {
	uint8_t id[32];		/* the manifest's chunk_id hash of the raw bytes;
				 * an XXH3-128 id fills 16 bytes, the rest 0 */
	uint8_t check[16];	/* XXH3-128 of the raw bytes (chunkhash.h) */
	int has_check;		/* 0: a manifest without one; restore uses id */
	uint8_t csum[16];	/* the chunk sum of the raw bytes (chunksum.h), */
	int has_csum;		/* recorded for the chunks of pieces saved from a
				 * GPU (doc/format.md, "csum") */
	const char *pack;	/* pack key, interned in the manifest */
	uint64_t offset;	/* of the encoded bytes in the pack */
	uint64_t clen;		/* encoded length */
	uint64_t rlen;		/* raw length */
	int xf;			/* enum sr_transform */
	uint64_t at;		/* a slice: where it starts in the decoded member */
	uint64_t mlen;		/* a slice: the decoded member's length; else 0 */
};

/* The decoded length of c's pack member. */
static inline uint64_t
sr_mchunk_mlen(const struct sr_mchunk *c)
{
	return c->mlen != 0 ? c->mlen : c->rlen;
}

/* c's share of its member's encoded bytes: clen, or for a slice clen in
 * proportion to its raw bytes (a manifest's stored_bytes add these up, so
 * that a member shared by many files counts once). */
uint64_t sr_mchunk_stored(const struct sr_mchunk *c);

struct sr_mentry {
	char *path;		/* relative, '/'-separated */
	enum sr_mtype type;
	unsigned mode;		/* permission bits (& 07777) */
	int64_t mtime_ns;	/* nanoseconds since the epoch */
	uint64_t size;		/* files: bytes */
	char *target;		/* symlinks */
	struct sr_mchunk *chunks;
	size_t nchunks, chunks_cap;
};

/* Element types of tensors; the numbers are the library's spotrun_dtype
 * (lib/libspotrun.h), so they never change. */
enum sr_dtype {
	SR_DT_BYTES = 0, SR_DT_F32, SR_DT_F64, SR_DT_F16, SR_DT_BF16, SR_DT_F8E4M3,
	SR_DT_F8E5M2, SR_DT_I8, SR_DT_I16, SR_DT_I32, SR_DT_I64, SR_DT_U8, SR_DT_U16,
	SR_DT_U32, SR_DT_U64,
	SR_DT_COUNT
};

/* One saved piece of a tensor: the box [offsets, offsets + sizes) of its
 * global shape, row-major, as one run of bytes held in data (a file entry
 * without a path of its own: size and chunks). */
struct sr_mpiece {
	uint64_t offsets[SR_TENSOR_DIMS];
	uint64_t sizes[SR_TENSOR_DIMS];
	struct sr_mentry data;
	/* A share (in a part only, doc/format.md "Ranks"): one rank's run of
	 * the chunks of a replicated tensor's whole box, chunks share_first to
	 * share_first + data.nchunks of the share_of the box has, its bytes
	 * (data.size) starting at byte share_off of the box. The merge joins
	 * the shares into one piece; a committed manifest has none. */
	int share;
	uint64_t share_first, share_of, share_off;
};

/* A tensor: name, element type, global shape, the pieces saved of it. */
struct sr_mtensor {
	char *name;
	enum sr_dtype dtype;
	int ndim;			/* 0 (a scalar) .. SR_TENSOR_DIMS */
	uint64_t shape[SR_TENSOR_DIMS];
	struct sr_mpiece *pieces;
	size_t npieces, pieces_cap;
};

/* What a manifest says of the checkpoint committed before it (its place
 * on LATEST's chain, doc/format.md). */
enum sr_mlink {
	SR_LINK_UNKNOWN = 0,	/* not read: the manifest is missing, or refused
				 * before its `parent` could be read */
	SR_LINK_OLD,		/* no `parent`: written before the chain existed */
	SR_LINK_NONE,		/* `parent` null: the first checkpoint of the chain */
	SR_LINK_PARENT		/* `parent` names a seq (below its own, if valid) */
};

struct sr_manifest {
	int version;
	enum sr_chunk_id chunk_id;	/* SR_ID_SHA256 exactly in version 1 */
	char *job;
	/* seq, step, epoch, created, files, chunks, raw_bytes, stored_bytes,
	 * new_bytes, reused_chunks, seconds */
	struct sr_ckpt_stats stats;
	enum sr_mlink link;	/* set by the parser as soon as `parent` is read,
				 * so also for a manifest refused later */
	uint64_t parent;	/* SR_LINK_PARENT */
	int damaged;		/* sr_catalog_load: the object is there, but not a
				 * manifest this spotrun reads (SR_CATALOG_BAD) */
	struct sr_mentry *entries;
	size_t nentries, entries_cap;
	struct sr_mtensor *tensors;	/* the library's, by name (strcmp order) */
	size_t ntensors, tensors_cap;
	char **packs;		/* interned pack keys */
	size_t npacks, packs_cap;
};

void sr_manifest_init(struct sr_manifest *m);
void sr_manifest_free(struct sr_manifest *m);

/* The adding functions below return NULL with err on out-of-memory (then
 * the manifest is as it was: nothing half-added). */
/* Append an entry (path copied); the pointer is valid until the next add. */
struct sr_mentry *sr_manifest_add(struct sr_manifest *m, const char *path, enum sr_mtype type,
    char *err);
/* Append a zeroed chunk to e. */
struct sr_mchunk *sr_mentry_add_chunk(struct sr_mentry *e, char *err);
/* c is now one of m's chunks: a slice makes a version 2 manifest one of
 * version 4 (slices are never a tensor's: sr_manifest_validate). */
void sr_manifest_note_chunk(struct sr_manifest *m, const struct sr_mchunk *c);
/* The manifest's copy of a pack key (one per distinct key). */
const char *sr_manifest_intern(struct sr_manifest *m, const char *pack, char *err);
/* Append a tensor (name copied; the pointer is valid until the next add;
 * NULL with err too for ndim outside [0, SR_TENSOR_DIMS]) and a piece of
 * one (zeroed; its data entry's path is the tensor's name with the
 * piece's offsets, for messages). */
struct sr_mtensor *sr_manifest_add_tensor(struct sr_manifest *m, const char *name,
    enum sr_dtype dtype, int ndim, const uint64_t *shape, char *err);
struct sr_mpiece *sr_mtensor_add_piece(struct sr_mtensor *t, const uint64_t *offsets,
    const uint64_t *sizes, char *err);
/* Bytes of one element (1 for bytes), the name the manifest writes ("f32",
 * "bf16", "f8e4m3", ...; NULL if unknown) and its inverse (-1). */
size_t sr_dtype_size(enum sr_dtype d);
const char *sr_dtype_name(enum sr_dtype d);
int sr_dtype_parse(const char *s);
/* Sort entries by path (strcmp order). */
void sr_manifest_sort(struct sr_manifest *m);
/* Index of the entry with this path, or -1 (entries must be sorted). */
long sr_manifest_find(const struct sr_manifest *m, const char *path);
/* The tensor of this name among the first n of m's (sorted by name), or
 * NULL. */
struct sr_mtensor *sr_manifest_find_tensor(const struct sr_manifest *m, size_t n,
    const char *name);

/* JSON text of m (malloc'd, NUL-terminated; *len without the NUL); NULL
 * with err on out-of-memory (never a text missing a key). */
char *sr_manifest_dump(const struct sr_manifest *m, size_t *len, char *err);
/* Parse JSON text into m (initialised here; free it even on failure).
 * Checks structure: known version, key types, integer ranges. -1 with
 * err naming the key, e.g. `entries[3].chunks[0].offset: negative`, or
 * saying out-of-memory (sr_err_is_oom: the text may be sound).
 * `parent` and `epoch` are read right after `version`, so that m->link
 * is known for a manifest refused for anything else. */
int sr_manifest_parse(const char *buf, size_t len, struct sr_manifest *m, char *err);
/* Check what a restore relies on; job and seq are what the manifest's key
 * says (and a parent must be below seq). -1 with err naming the entry
 * (or saying out-of-memory). */
int sr_manifest_validate(const struct sr_manifest *m, const char *job, uint64_t seq, char *err);

/* For sr_path_check_link: 1 if path is a symlink entry of the manifest
 * arg (a const struct sr_manifest *), else 0. */
int sr_manifest_is_link(const char *path, void *arg);

/* Names of entry types and their inverse (-1 if unknown). */
const char *sr_mtype_name(enum sr_mtype t);
int sr_mtype_parse(const char *s);

/* Parse exactly 2n lowercase hex digits (sr_hex_of's output) into the n
 * bytes at b (0/-1). */
int sr_hex_parse(const char *hex, uint8_t *b, size_t n);
/* An id of algorithm a as hex (32 or 64 digits), and back (0/-1; the
 * bytes past an XXH3-128 id are zeroed). */
void sr_id_hex(enum sr_chunk_id a, const uint8_t id[32], char out[65]);
int sr_id_parse(enum sr_chunk_id a, const char *hex, uint8_t id[32]);
/* Bytes of an id of algorithm a: 16 or 32. */
size_t sr_id_len(enum sr_chunk_id a);

#endif
