/*
 * codec.h: compression of one checkpoint chunk. A chunk is encoded as one or
 * more concatenated zstd frames (RFC 8878), so `zstd -d` opens any stored
 * chunk. The encoder picks a transform per chunk by trying each on a sample:
 * none, or byte planes of width 2 (bf16/fp16) or 4 (fp32). With planes, each
 * plane is its own frame: compressed when that pays, else written as a raw
 * frame (raw blocks), since mantissa bytes are incompressible and spending
 * CPU on them is waste. `zstd -d` of a transformed chunk yields the planes;
 * sr_codec_decode undoes the transform.
 */
#ifndef SR_CODEC_H
#define SR_CODEC_H

#include <stddef.h>
#include <stdint.h>

enum sr_transform {
	SR_XF_NONE = 0,
	SR_XF_PLANE2 = 2,
	SR_XF_PLANE4 = 4
};

/* Largest chunk the decoder accepts: a manifest claiming more is refused
 * (decompression bombs). */
#define SR_CODEC_MAX_CHUNK ((size_t)256 << 20)

struct sr_codec;	/* per-thread state: zstd contexts and scratch buffers */

/* A codec compressing at zstd level `level`: NULL with err on
 * out-of-memory or a level zstd refuses. */
struct sr_codec *sr_codec_new(int level, char *err);
void sr_codec_free(struct sr_codec *c);

/* Upper bound of the encoded size of n bytes. */
size_t sr_codec_bound(size_t n);

/* Encode n bytes of src into dst (cap bytes, at least sr_codec_bound(n)).
 * force: SR_XF_* to use, or -1 to choose by sampling; SR_XF_PLANE2 or 4
 * with SR_CODEC_SPLIT: src holds the chunk's planes already (split on a
 * GPU: sr_byteplane_split's layout), so the encoder does not split them
 * again, and the transform recorded is the plane one as ever (a decode
 * joins them). */
#define SR_CODEC_SPLIT 0x100
int sr_codec_encode(struct sr_codec *c, const void *src, size_t n, int force,
    void *dst, size_t cap, size_t *outlen, enum sr_transform *xf, char *err);
/* Decode clen bytes into exactly rlen bytes of dst; any other size, a bad
 * frame or rlen > SR_CODEC_MAX_CHUNK is an error. */
int sr_codec_decode(struct sr_codec *c, const void *src, size_t clen, enum sr_transform xf,
    void *dst, size_t rlen, char *err);

/* "none", "plane2", "plane4"; NULL for an unknown value. */
const char *sr_transform_name(int xf);
/* Parse a name back; -1 if unknown. */
int sr_transform_parse(const char *name);

#endif
