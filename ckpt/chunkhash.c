/*
 * chunkhash.c: SHA-256 (OpenSSL) and XXH3-128 (libxxhash) of chunks, in one
 * pass (chunkhash.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <xxhash.h>

#include "chunkhash.h"
#include "util.h"

struct sr_chunkhash {
	unsigned want;
	EVP_MD_CTX *md;
	XXH3_state_t *xx;
};

struct sr_chunkhash *
sr_chunkhash_new(char *err)
{
	struct sr_chunkhash *h = sr_try_calloc(1, sizeof *h, err);

	if (h == NULL)
		return NULL;
	h->md = EVP_MD_CTX_new();
	h->xx = XXH3_createState();
	if (h->md == NULL || h->xx == NULL) {
		sr_chunkhash_free(h);
		sr_err_oom(err, "create chunk hash state");
		return NULL;
	}
	return h;
}

void
sr_chunkhash_free(struct sr_chunkhash *h)
{
	if (h == NULL)
		return;
	EVP_MD_CTX_free(h->md);
	XXH3_freeState(h->xx);
	free(h);
}

/* OpenSSL's SHA-256 failed: out of memory when its error queue says so
 * (a restore must not take that for a bad chunk), else a plain error. */
static int
sha_failed(char *err)
{
	unsigned long e = ERR_peek_last_error();

	ERR_clear_error();
	if (e != 0 && ERR_GET_REASON(e) == ERR_R_MALLOC_FAILURE)
		return sr_err_oom(err, "hash chunk: OpenSSL SHA-256");
	return sr_err(err, "hash chunk: OpenSSL SHA-256 failed");
}

int
sr_chunkhash_begin(struct sr_chunkhash *h, unsigned want, char *err)
{
	h->want = want;
	if ((want & SR_CH_ID) && EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1)
		return sha_failed(err);
	if ((want & SR_CH_CHECK) && XXH3_128bits_reset(h->xx) != XXH_OK)
		return sr_err(err, "hash chunk: XXH3-128 failed");
	return 0;
}

int
sr_chunkhash_update(struct sr_chunkhash *h, const void *p, size_t n, char *err)
{
	if ((h->want & SR_CH_ID) && EVP_DigestUpdate(h->md, p, n) != 1)
		return sha_failed(err);
	if ((h->want & SR_CH_CHECK) && XXH3_128bits_update(h->xx, p, n) != XXH_OK)
		return sr_err(err, "hash chunk: XXH3-128 failed");
	return 0;
}

int
sr_chunkhash_end(struct sr_chunkhash *h, uint8_t id[32], uint8_t check[16], char *err)
{
	if ((h->want & SR_CH_ID) && EVP_DigestFinal_ex(h->md, id, NULL) != 1)
		return sha_failed(err);
	if (h->want & SR_CH_CHECK) {
		XXH128_canonical_t c;

		XXH128_canonicalFromHash(&c, XXH3_128bits_digest(h->xx));
		memcpy(check, c.digest, sizeof c.digest);
	}
	return 0;
}

int
sr_chunkhash_buf(struct sr_chunkhash *h, unsigned want, const void *buf, size_t n,
    uint8_t id[32], uint8_t check[16], char *err)
{
	const uint8_t *p = buf;
	size_t off, step;

	if (sr_chunkhash_begin(h, want, err) == -1)
		return -1;
	for (off = 0; off < n; off += step) {
		step = n - off < SR_CH_BLOCK ? n - off : SR_CH_BLOCK;
		if (sr_chunkhash_update(h, p + off, step, err) == -1)
			return -1;
	}
	return sr_chunkhash_end(h, id, check, err);
}
