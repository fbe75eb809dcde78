/*
 * cloudinit-bin.c: the prebuilt binary of `spotrun cloud-init`
 * (cloudinit.h, sr_cinit_publish): this spotrun's own executable put into
 * the queue's store under a key named by its content, and a presigned URL
 * to it, so that a VM fetches it with curl alone: no compiler, no
 * credentials in the user-data beyond that one URL.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "cloudinit.h"
#include "store.h"
#include "util.h"

/* Far above spotrun's size; a larger file is not our executable. */
#define BIN_MAX (512UL * 1024 * 1024)

int
sr_cinit_publish(const char *queue, const char *exe, double expires, char **url,
    char sha256[65], char key[SR_CINIT_BIN_KEY_MAX], char *err)
{
	struct sr_store *st = NULL;
	struct sr_object_info info;
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0, i;
	char *buf = NULL, e2[SR_ERRMAX];
	size_t len = 0;
	int rc = -1, r;

	*url = NULL;
	sha256[0] = '\0';
	if (sr_read_file(exe, BIN_MAX, &buf, &len, e2) == -1) {
		sr_err(err, "publish spotrun: %s", e2);
		return -1;
	}
	/* OpenSSL's one-shot digest fails only when it cannot allocate */
	if (EVP_Digest(buf, len, d, &dlen, EVP_sha256(), NULL) != 1 || dlen != 32) {
		free(buf);
		return sr_err_oom(err, "publish spotrun: SHA-256");
	}
	for (i = 0; i < dlen; i++)
		snprintf(sha256 + 2 * i, 3, "%02x", d[i]);
	/* The content names the key: a rebuilt spotrun never replaces the
	 * binary that VMs booting from older user-data fetch and check. */
	snprintf(key, SR_CINIT_BIN_KEY_MAX, "bin/spotrun-%s-%.16s", PACKAGE_VERSION, sha256);
	if (sr_store_open(queue, &st, e2) == -1) {
		sr_err(err, "publish spotrun: %s", e2);
		goto out;
	}
	r = sr_store_head(st, key, &info, e2);
	if (r == SR_STORE_NOTFOUND || (r == 0 && info.size != len)) {
		/* absent, or a put of it that did not finish (never the case on
		 * these stores, whose puts are whole; cheap to be sure) */
		r = sr_store_put(st, key, buf, len, SR_PUT_OVERWRITE, NULL, NULL, e2);
	}
	if (r != 0) {
		sr_err(err, "publish spotrun: %s", e2);
		goto out;
	}
	if (sr_store_presign(st, key, expires, url, e2) == -1) {
		sr_err(err, "publish spotrun: %s", e2);
		goto out;
	}
	rc = 0;
out:
	if (st != NULL)
		sr_store_close(st);
	free(buf);
	return rc;
}
