/*
 * digest.c: the upload checksums of digest.h. MD5 and SHA-256 through
 * OpenSSL's EVP (SHA-NI where the CPU has it);
 * CRC-64/NVME by slicing 8 bytes at a time over 8 tables of 256 entries
 * (16 KiB), which are computed once, on first use, and never change after
 * (pthread_once: no lock on the hashing path).
 */
#include "config.h"

#include <endian.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "digest.h"
#include "util.h"

#define CRC64_POLY 0x9A6C9329AC4BC9B5ULL	/* 0xAD93D23594C93659 reflected */

static uint64_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void
crc_init(void)
{
	int i, j, k;

	for (i = 0; i < 256; i++) {
		uint64_t c = (uint64_t)i;

		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC64_POLY : c >> 1;
		crc_table[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			crc_table[j][i] = (crc_table[j - 1][i] >> 8) ^
			    crc_table[0][crc_table[j - 1][i] & 0xff];
}

uint64_t
sr_digest_crc64(uint64_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	pthread_once(&crc_once, crc_init);
	crc = ~crc;
	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		v = le64toh(v);
		v ^= crc;
		crc = crc_table[7][v & 0xff] ^ crc_table[6][(v >> 8) & 0xff] ^
		    crc_table[5][(v >> 16) & 0xff] ^ crc_table[4][(v >> 24) & 0xff] ^
		    crc_table[3][(v >> 32) & 0xff] ^ crc_table[2][(v >> 40) & 0xff] ^
		    crc_table[1][(v >> 48) & 0xff] ^ crc_table[0][v >> 56];
		p += 8;
		len -= 8;
	}
	while (len-- > 0)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

int
sr_digest_ssl_err(char *err, const char *what)
{
	unsigned long e, last = 0;
	char why[256];

	/* A digest of bytes in memory with an algorithm every OpenSSL has
	 * fails for want of memory only: 3.0 then says "initialization error"
	 * or, when a fetch of the algorithm could not allocate, "unsupported",
	 * and later versions often nothing. (A FIPS provider without MD5
	 * would read the same; it aborted spotrun before, and what it is told
	 * now keeps OpenSSL's words.) */
	while ((e = ERR_get_error()) != 0)
		last = e;
	if (last == 0)
		return sr_err_oom(err, what);
	ERR_error_string_n(last, why, sizeof why);
	return sr_err(err, "%s: " SR_OOM_TEXT " (OpenSSL: %s)", what, why);
}

int
sr_digest_md5(const void *buf, size_t len, char *b64, char *hex, char *err)
{
	unsigned char md[16];
	unsigned int n = 0;

	if (EVP_Digest(buf, len, md, &n, EVP_md5(), NULL) != 1 || n != 16)
		return sr_digest_ssl_err(err, "compute MD5");
	if (b64 != NULL)
		EVP_EncodeBlock((unsigned char *)b64, md, 16);
	if (hex != NULL)
		sr_hex_of(md, sizeof md, hex);
	return 0;
}

int
sr_digest_header(enum sr_sum sum, const void *buf, size_t len, char *out, char *err)
{
	static const char md5_name[] = "Content-MD5: ", crc_name[] = "x-ms-content-crc64: ",
	    sha_name[] = "x-amz-content-sha256: ";
	unsigned char le[8], md[32];
	unsigned int n = 0;
	uint64_t crc;
	int i;

	out[0] = '\0';
	switch (sum) {
	case SR_SUM_NONE:
		break;
	case SR_SUM_MD5:
		memcpy(out, md5_name, sizeof md5_name);
		if (sr_digest_md5(buf, len, out + sizeof md5_name - 1, NULL, err) == -1) {
			out[0] = '\0';
			return -1;
		}
		break;
	case SR_SUM_CRC64:
		crc = sr_digest_crc64(0, buf, len);
		for (i = 0; i < 8; i++)
			le[i] = (unsigned char)(crc >> (8 * i));
		memcpy(out, crc_name, sizeof crc_name);
		EVP_EncodeBlock((unsigned char *)out + sizeof crc_name - 1, le, 8);
		break;
	case SR_SUM_SHA256:
		if (EVP_Digest(buf, len, md, &n, EVP_sha256(), NULL) != 1 || n != 32)
			return sr_digest_ssl_err(err, "compute SHA-256");
		memcpy(out, sha_name, sizeof sha_name);
		sr_hex_of(md, sizeof md, out + sizeof sha_name - 1);
		break;
	}
	return 0;
}
