/*
 * zframe.h: zstd frames made of raw (stored) blocks, written and read by hand
 * (RFC 8878). The codec stores incompressible byte planes this way: no CPU is
 * spent compressing or decompressing them, yet the chunk stays a sequence of
 * valid zstd frames that `zstd -d` opens.
 *
 * A raw frame is: magic 0xFD2FB528, a frame header with Frame_Content_Size
 * and no checksum or dictionary, then raw blocks of at most
 * SR_ZFRAME_BLOCK_MAX bytes, the last one flagged.
 */
#ifndef SR_ZFRAME_H
#define SR_ZFRAME_H

#include <stddef.h>
#include <stdint.h>

#define SR_ZFRAME_MAGIC 0xFD2FB528u
/* Largest block of a frame (RFC 8878 Block_Maximum_Size). */
#define SR_ZFRAME_BLOCK_MAX ((size_t)128 * 1024)
/* Largest frame header this file writes (magic, descriptor, window, FCS). */
#define SR_ZFRAME_HEADER_MAX 14

/* Size of the raw frame holding n bytes. */
size_t sr_zframe_raw_size(size_t n);

/* Write the n bytes at src as one raw frame into dst (cap bytes). Returns
 * the frame's size, or 0 when cap is smaller than sr_zframe_raw_size(n). */
size_t sr_zframe_write_raw(void *dst, size_t cap, const void *src, size_t n);

/* If the frame at src (len bytes available) is a well-formed frame of raw
 * blocks only, whose content fits in cap bytes, copy its content to dst,
 * set *consumed (the frame's size) and *produced, and return 1. Otherwise
 * return 0 without judging it (dst may have been written): the caller hands
 * the frame to zstd, which decodes other frames and reports errors. */
int sr_zframe_copy_raw(const void *src, size_t len, void *dst, size_t cap,
    size_t *consumed, size_t *produced);

#endif
