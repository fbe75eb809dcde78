/*
 * t-digest.c: the upload checksums of store/digest.c: CRC-64/NVME against
 * its catalogue check value and against what Azure itself answered for
 * "Hello World" (x-ms-content-crc64: YeJLfssylmU=, a service reply recorded
 * in Azure/azure-sdk-for-js's storage-blob tests), both of store/crc64.c's
 * ways (the 8-byte tables; the folding by carry-less multiplication, where
 * this CPU has it) equal to a bit-at-a-time CRC for every length up to 67
 * bytes and every alignment, equal to each other for every length to 1100
 * bytes at 16 alignments, from any register, and for 1 MiB, a CRC
 * continued over pieces equal to one pass, and
 * the header lines (Content-MD5 of "Hello World" as Azure recorded it too,
 * and nothing for SR_SUM_NONE).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc64.h"
#include "digest.h"
#include "tap.h"
#include "oom.h"
#include "oom-trial.h"
#include "util.h"

/* A checksum header under OOM: OpenSSL allocates for MD5 and SHA-256. */
struct sum_run {
	enum sr_sum sum;
	const char *want;
	char line[SR_SUM_HEADER_MAX];
};

static int
run_sum(void *arg, char *err)
{
	struct sum_run *r = arg;

	return sr_digest_header(r->sum, "Hello World", 11, r->line, err);
}

static int
check_sum(void *arg, int rc, char *why)
{
	struct sum_run *r = arg;

	if (strcmp(r->line, rc == 0 ? r->want : "") != 0)
		return snprintf(why, SR_ERRMAX, "the header is \"%s\"", r->line), 0;
	return 1;
}

/* The definition, one bit at a time: what the tables must agree with. */
static uint64_t
crc_bitwise(const unsigned char *p, size_t n)
{
	uint64_t c = ~0ULL;
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		c ^= p[i];
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x9A6C9329AC4BC9B5ULL : c >> 1;
	}
	return ~c;
}

int
main(void)
{
	unsigned char buf[80], *big, *mid;
	char line[SR_SUM_HEADER_MAX], hex[33];
	size_t len, off;
	int bad = 0, folds = sr_crc64_folds();
	uint64_t c;
	struct sum_run sr = { SR_SUM_MD5, "Content-MD5: sQqNsWTgdUEFt6mb5y4/5Q==", "" };


	ok(sr_crc64(0, "123456789", 9) == 0xAE8B14860A799888ULL,
	    "CRC-64/NVME check value of \"123456789\"");
	ok(sr_crc64_table(0, "123456789", 9) == 0xAE8B14860A799888ULL,
	    "the tables' check value of \"123456789\"");
	ok(sr_crc64(0, "", 0) == 0, "CRC of nothing is 0");
	sr_digest_header(SR_SUM_CRC64, "Hello World", 11, line, NULL);
	is_str(line, "x-ms-content-crc64: YeJLfssylmU=",
	    "x-ms-content-crc64 of \"Hello World\" is what Azure computed");
	sr_digest_header(SR_SUM_MD5, "Hello World", 11, line, NULL);
	is_str(line, "Content-MD5: sQqNsWTgdUEFt6mb5y4/5Q==", "Content-MD5 of \"Hello World\"");
	sr_digest_header(SR_SUM_NONE, "Hello World", 11, line, NULL);
	is_str(line, "", "no checksum: no header");
	sr_digest_md5("abc", 3, NULL, hex, NULL);
	is_str(hex, "900150983cd24fb0d6963f7d28e17f72", "MD5 of \"abc\" in hex");

	for (len = 0; len < sizeof buf; len++)
		buf[len] = (unsigned char)(len * 37 + 11);
	for (off = 0; off < 8; off++)
		for (len = 0; off + len <= 67; len++)
			bad += (sr_crc64(0, buf + off, len) != crc_bitwise(buf + off, len)) +
			    (sr_crc64_table(0, buf + off, len) != crc_bitwise(buf + off, len));
	is_int(bad, 0, "both ways equal the bitwise CRC at every length and alignment");

	/* Folding starts at 128 bytes and takes 128, then 16, then the rest
	 * by the tables: every length across those steps, from a register
	 * that is not the start's too. */
	tap_diag("this CPU %s by carry-less multiplication", folds ? "folds" : "does not fold");
	mid = sr_malloc(1100 + 16);
	for (len = 0; len < 1100 + 16; len++)
		mid[len] = (unsigned char)((len * 2654435761u) >> 13);
	bad = 0;
	for (off = 0; off < 16; off++)
		for (len = 0; off + len <= 1100 + 16 && len <= 1100; len++)
			bad += (sr_crc64(0, mid + off, len) != sr_crc64_table(0, mid + off, len)) +
			    (sr_crc64(0x0123456789abcdefULL, mid + off, len) !=
			    sr_crc64_table(0x0123456789abcdefULL, mid + off, len));
	if (folds)
		is_int(bad, 0, "folding equals the tables for every length to 1100 bytes at 16 "
		    "alignments");
	else	/* sr_crc64 is the tables here: the comparison would prove nothing */
		tap_skip("this CPU does not fold (no PCLMULQDQ): folding against the tables");
	ok(sr_crc64(0, mid, 1100) == crc_bitwise(mid, 1100), "1100 bytes: equal to bitwise");
	free(mid);

	big = sr_malloc(1 << 20);
	for (len = 0; len < (1 << 20); len++)
		big[len] = (unsigned char)(len ^ (len >> 9));
	c = sr_crc64(0, big, 1 << 20);
	ok(c == crc_bitwise(big, 1 << 20), "1 MiB: equal to bitwise");
	if (folds)
		ok(sr_crc64_table(0, big, 1 << 20) == c, "1 MiB: the tables equal folding");
	else
		tap_skip("this CPU does not fold (no PCLMULQDQ): 1 MiB against the tables");
	ok(sr_crc64(sr_crc64(sr_crc64(0, big, 3), big + 3, 1000), big + 1003,
	    (1 << 20) - 1003) == c, "a CRC continued over three pieces equals one pass");
	free(big);
	/* Only spotrun's own allocations fail (it makes none here): OpenSSL
	 * 3.0's EVP_Digest leaks 64 bytes each time its context's inner
	 * allocation fails (its outcome, "out of memory", is right). */
	oom_trial("sr_digest_header (MD5)", OOM_OURS, run_sum, check_sum, NULL, &sr);
	sr.sum = SR_SUM_SHA256;
	sr.want = "x-amz-content-sha256: "
	    "a591a6d40bf420404a011733cfb7b190d62c65bf0bcda32b57b277d9ad9f146e";
	oom_trial("sr_digest_header (SHA-256)", OOM_OURS, run_sum, check_sum, NULL, &sr);
	return tap_done();
}
