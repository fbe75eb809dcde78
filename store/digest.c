/*
 * digest.c: the upload checksums of digest.h. MD5 and SHA-256 through
 * OpenSSL's EVP (SHA-NI where the CPU has it);
 * CRC-64/NVME from crc64.c.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "crc64.h"
#include "digest.h"
#include "util.h"

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
		crc = sr_crc64(0, buf, len);
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
