/*
 * digest.h: the checksums the network stores send with what they upload,
 * so that the server checks the bytes it got: Content-MD5 (S3, GCS, Azure;
 * what RGW and Azurite verify) and Azure's x-ms-content-crc64, which is
 * CRC-64/NVME (polynomial 0xAD93D23594C93659, reflected, initial value and
 * final xor all ones; check value 0xAE8B14860A799888 for "123456789") sent
 * as the base64 of its 8 bytes in little-endian order; and S3's signed
 * payload, the SHA-256 of the body in x-amz-content-sha256, which SigV4
 * signs and S3 and RGW compare with the body they got (400
 * XAmzContentSHA256Mismatch). CRC-64 (crc64.h) folds by carry-less
 * multiplication where the CPU can: many times cheaper per byte than MD5,
 * which a save pays on every part; SHA-256 runs at 2.1 GB/s on a core
 * with SHA-NI against 0.9 for MD5 (doc/benchmarks.md).
 */
#ifndef SR_DIGEST_H
#define SR_DIGEST_H

#include <stddef.h>
#include <stdint.h>

/* Which checksum each upload part carries. */
enum sr_sum { SR_SUM_NONE = 0, SR_SUM_MD5, SR_SUM_CRC64, SR_SUM_SHA256 };

#define SR_SUM_HEADER_MAX 96

/* MD5 of len bytes: base64 into b64 (25 bytes) and/or lowercase hex into
 * hex (33 bytes); either may be NULL. 0, or -1 with err ("compute MD5:
 * out of memory": OpenSSL allocates). */
int sr_digest_md5(const void *buf, size_t len, char *b64, char *hex, char *err);
/* The header line carrying sum over len bytes, into out
 * (SR_SUM_HEADER_MAX bytes): "Content-MD5: B64", "x-ms-content-crc64:
 * B64", "x-amz-content-sha256: HEX" (64 lowercase hex digits; the S3
 * signer takes it as the payload hash it signs), or "" for SR_SUM_NONE.
 * 0, or -1 with err (out ""), as sr_digest_md5. */
int sr_digest_header(enum sr_sum sum, const void *buf, size_t len, char *out, char *err);
/* The error of an OpenSSL digest call that failed, into err: "WHAT: out
 * of memory (OpenSSL: REASON)" (a digest of memory has no other way to
 * fail; OpenSSL's last reason, when it gave one, goes with it). Empties
 * OpenSSL's error queue; -1. */
int sr_digest_ssl_err(char *err, const char *what);

#endif
