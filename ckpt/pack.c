/*
 * pack.c: pax tar packs through libarchive (see pack.h). libarchive is set
 * to write without blocking (bytes per block 0), so every byte it produces
 * reaches our write callback at once and the byte count there, read right
 * after a member's header, is the exact offset of the member's data.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "fault.h"
#include "pack.h"
#include "util.h"

struct sr_pack {
	struct archive *a;
	struct sr_upload *up;
	char *key;
	time_t mtime;
	uint64_t written;	/* bytes passed to the upload */
	uint64_t members;
	int failed;		/* the upload failed: err holds why */
	int aborting;		/* dropping the pack: swallow what libarchive flushes */
	char err[SR_ERRMAX];
};

static la_ssize_t
pack_write_cb(struct archive *a, void *arg, const void *buf, size_t len)
{
	struct sr_pack *p = arg;

	if (p->aborting)
		return (la_ssize_t)len;
	if (sr_upload_write(p->up, buf, len, p->err) == -1) {
		p->failed = 1;
		archive_set_error(a, -1, "upload failed");
		return -1;
	}
	p->written += len;
	return (la_ssize_t)len;
}

static int
pack_close_cb(struct archive *a, void *arg)
{
	return ARCHIVE_OK;
}

/* The message of a failed archive call: the upload's if it failed. */
static int
pack_err(struct sr_pack *p, const char *what, char *err)
{
	char where[SR_ERRMAX];

	if (p->failed)
		return sr_err(err, "%s pack %s: %s", what, p->key, p->err);
	if (p->a == NULL || archive_errno(p->a) == ENOMEM) {
		snprintf(where, sizeof where, "%s pack %s: libarchive", what, p->key);
		return sr_err_oom(err, where);
	}
	return sr_err(err, "%s pack %s: %s", what, p->key, archive_error_string(p->a));
}

struct sr_pack *
sr_pack_begin(struct sr_store *st, const char *key, time_t mtime, char *err)
{
	struct sr_pack *p = sr_try_calloc(1, sizeof *p, err);

	if (p == NULL || (p->key = sr_try_strdup(key, err)) == NULL) {
		free(p);
		return NULL;
	}
	p->mtime = mtime;
	p->up = sr_store_upload_begin(st, key, err);
	if (p->up == NULL) {
		free(p->key);
		free(p);
		return NULL;
	}
	p->a = archive_write_new();
	if (p->a == NULL || archive_write_set_format_pax_restricted(p->a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(p->a, 0) != ARCHIVE_OK ||
	    archive_write_open(p->a, p, NULL, pack_write_cb, pack_close_cb) != ARCHIVE_OK) {
		pack_err(p, "start", err);
		sr_pack_abort(p);
		return NULL;
	}
	return p;
}

void
sr_pack_limit(struct sr_pack *p, double deadline, volatile int *cancel)
{
	sr_upload_limit(p->up, deadline, cancel);
}

int
sr_pack_add(struct sr_pack *p, const char *name, const void *data, size_t len,
    uint64_t *offset, char *err)
{
	struct archive_entry *e = archive_entry_new();
	const char *d = data;
	size_t left = len;

	if (e == NULL)
		return sr_err_oom(err, "create an archive entry");
	archive_entry_set_pathname(e, name);
	/* libarchive's setters fail silently when out of memory: a member
	 * must not be written without its name */
	if (archive_entry_pathname(e) == NULL || strcmp(archive_entry_pathname(e), name) != 0) {
		archive_entry_free(e);
		return sr_err_oom(err, "name an archive entry");
	}
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, p->mtime, 0);
	if (archive_write_header(p->a, e) != ARCHIVE_OK) {
		archive_entry_free(e);
		return pack_err(p, "write member header to", err);
	}
	archive_entry_free(e);
	/* Headers are whole 512-byte blocks: anything else means buffering. */
	if (p->written % 512 != 0)
		return sr_err(err, "pack %s: member data at offset %llu, not on a block (a bug)",
		    p->key, (unsigned long long)p->written);
	*offset = p->written;
	while (left > 0) {
		la_ssize_t n = archive_write_data(p->a, d, left);
		if (n <= 0)
			return pack_err(p, "write member to", err);
		d += n;
		left -= (size_t)n;
	}
	if (archive_write_finish_entry(p->a) != ARCHIVE_OK)
		return pack_err(p, "finish member of", err);
	p->members++;
	return 0;
}

uint64_t
sr_pack_size(const struct sr_pack *p)
{
	return p->written;
}

uint64_t
sr_pack_members(const struct sr_pack *p)
{
	return p->members;
}

const char *
sr_pack_key(const struct sr_pack *p)
{
	return p->key;
}

int
sr_pack_commit(struct sr_pack *p, char *err)
{
	int rc;

	if (archive_write_close(p->a) != ARCHIVE_OK) {
		pack_err(p, "finish", err);
		sr_pack_abort(p);
		return -1;
	}
	archive_write_free(p->a);
	p->a = NULL;
	sr_fault("ckpt-upload");
	rc = sr_upload_commit(p->up, err);
	p->up = NULL;
	if (rc != 0)
		sr_err_prefix(err, "commit pack %s", p->key);
	free(p->key);
	free(p);
	return rc == 0 ? 0 : -1;
}

void
sr_pack_abort(struct sr_pack *p)
{
	if (p == NULL)
		return;
	p->aborting = 1;
	if (p->a != NULL)
		archive_write_free(p->a);	/* closes, which flushes into the callback */
	sr_upload_abort(p->up);
	free(p->key);
	free(p);
}
