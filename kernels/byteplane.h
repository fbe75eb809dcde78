/*
 * byteplane.h: byte-plane transposition of arrays of fixed-width elements.
 * Floating-point weights compress far better once the bytes of equal
 * significance are stored together: the exponent bytes are highly
 * redundant, the low mantissa bytes are noise.
 *
 * sr_byteplane_split(src, n, width, dst): for n bytes of width-byte
 * elements, plane k (byte k of every element) goes to dst + k * (n / width);
 * the n % width tail bytes are copied raw after the last plane.
 * sr_byteplane_join is the exact inverse. width is 1..16 (another is
 * taken as 1: a raw copy); src and dst must not overlap. The CPU versions here are the reference the CUDA kernels
 * (byteplane.cu) are tested against.
 *
 * sr_byteplane_split_isa and _join_isa take the instruction set to use
 * (SR_BP_ISA_*: the portable loop, SSE2, AVX2; one the CPU lacks falls back
 * to the best it has), so that the tests cover every path on one machine;
 * the plain forms take the best.
 */
#ifndef SR_BYTEPLANE_H
#define SR_BYTEPLANE_H

#include <stddef.h>
#include <stdint.h>

void sr_byteplane_split(const uint8_t *src, size_t n, unsigned width, uint8_t *dst);
void sr_byteplane_join(const uint8_t *src, size_t n, unsigned width, uint8_t *dst);

enum sr_bp_isa { SR_BP_ISA_BEST, SR_BP_ISA_SCALAR, SR_BP_ISA_SSE2, SR_BP_ISA_AVX2 };
void sr_byteplane_split_isa(const uint8_t *src, size_t n, unsigned width, uint8_t *dst,
    enum sr_bp_isa isa);
void sr_byteplane_join_isa(const uint8_t *src, size_t n, unsigned width, uint8_t *dst,
    enum sr_bp_isa isa);

struct sr_cuda;
/* The same on device memory (CUdeviceptr values) of the handle's device,
 * queued on `stream` (a CUstream; NULL: the default stream) without
 * waiting: 0, or -1 with err set for a bad width, a build without the
 * kernels (cu->kernels 0) or a failed launch; what
 * goes wrong on the device shows at the caller's next synchronisation.
 * Widths 2 and 4 run the tiled kernels at any alignment and size (fastest
 * with 16-byte aligned buffers and n / width a multiple of 16), width 1 is
 * a copy, the others a byte-by-byte kernel. */
int sr_byteplane_split_cuda(struct sr_cuda *cu, uint64_t dsrc, size_t n, unsigned width,
    uint64_t ddst, void *stream, char *err);
int sr_byteplane_join_cuda(struct sr_cuda *cu, uint64_t dsrc, size_t n, unsigned width,
    uint64_t ddst, void *stream, char *err);
#endif
