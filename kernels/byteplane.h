/*
 * byteplane.h: byte-plane transposition of arrays of fixed-width elements.
 * Floating-point weights compress far better once the bytes of equal
 * significance are stored together: the exponent bytes are highly
 * redundant, the low mantissa bytes are noise.
 *
 * sr_byteplane_split(src, n, width, dst): for n bytes of width-byte
 * elements, plane k (byte k of every element) goes to dst + k * (n / width);
 * the n % width tail bytes are copied raw after the last plane.
 * sr_byteplane_join is the exact inverse. width is 1..16; src and dst must
 * not overlap. The CPU versions here are the reference the CUDA kernels
 * (byteplane.cu) are tested against.
 */
#ifndef SR_BYTEPLANE_H
#define SR_BYTEPLANE_H

#include <stddef.h>
#include <stdint.h>

void sr_byteplane_split(const uint8_t *src, size_t n, unsigned width, uint8_t *dst);
void sr_byteplane_join(const uint8_t *src, size_t n, unsigned width, uint8_t *dst);

#ifdef HAVE_CUDA
/* The same on device memory, on the default stream, waiting for the
 * result; 0 or -1 with err set (a bad width, or the CUDA error). */
int sr_byteplane_split_cuda(const void *dsrc, size_t n, unsigned width, void *ddst, char *err);
int sr_byteplane_join_cuda(const void *dsrc, size_t n, unsigned width, void *ddst, char *err);
/* The same queued on a CUDA stream (a cudaStream_t; NULL for the default
 * stream) without waiting: err reports launch errors only, the rest shows
 * at the caller's next synchronisation. */
int sr_byteplane_split_cuda_async(const void *dsrc, size_t n, unsigned width, void *ddst,
    void *stream, char *err);
int sr_byteplane_join_cuda_async(const void *dsrc, size_t n, unsigned width, void *ddst,
    void *stream, char *err);
#endif

#endif
