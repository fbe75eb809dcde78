/*
 * pack.c: tar packs (see pack.h), written here block by block into the
 * store upload. A member is a ustar header, its bytes and zero padding to
 * 512, as libarchive's pax_restricted format writes a member that needs no
 * extended header (every member of a pack: a short name, a size below
 * 8 GiB), so the byte count at the end of a header is the exact offset of
 * the member's data. Written by hand rather than through libarchive, which
 * ends the process when it runs out of memory: the job-side library must
 * return that as an error (doc/design.md).
 *
 * Where the store reads large pieces back with direct I/O when they start
 * at a multiple of its alignment (sr_upload_align: file:// with direct
 * I/O, 4 KiB or the disk's block), a large member's data is placed there:
 * a pax extended header before its own header fills the gap, empty or
 * holding one "comment" record, which tar(1) and bsdtar skip. Without it
 * the data starts 512 bytes past a boundary, which a disk of 4 KiB
 * logical blocks reads only through the page cache. (The placement was
 * made for the store's writes from the caller's memory, which went
 * 512-aligned before, a read-modify-write on a 4 KiB-sector disk: issue
 * 22, 0.15x of tar | zstd; the store now stages every write.)
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "pack.h"
#include "util.h"

#define BLOCK 512

struct sr_pack {
	struct sr_upload *up;
	char *key;
	time_t mtime;
	uint64_t written;	/* bytes passed to the upload */
	uint64_t members;
	size_t align, align_min;	/* sr_upload_align's; 0: no placement */
	uint64_t padding;		/* bytes of pax headers written for it */
};

static const uint8_t zeros[2 * BLOCK];

/* Append len bytes to the upload; the message says what was written. */
static int
put(struct sr_pack *p, const void *buf, size_t len, const char *what, char *err)
{
	if (len > 0 && sr_upload_write(p->up, buf, len, err) == -1)
		return sr_err_prefix(err, "%s pack %s", what, p->key);
	p->written += len;
	return 0;
}

/* v as `digits` octal digits at f, then the byte end (a ustar numeric
 * field; what follows stays NUL); -1 if it does not fit. */
static int
octal(char *f, int digits, uint64_t v, char end)
{
	char tmp[32];

	if (snprintf(tmp, sizeof tmp, "%0*" PRIo64, digits, v) != digits)
		return -1;
	memcpy(f, tmp, (size_t)digits);
	f[digits] = end;
	return 0;
}

/* The header of a member of type ('0': a regular file, 'x': a pax
 * extended header): name, mode 0644, uid and gid 0, size, mtime, the
 * checksum; no user or group names. -1 if name or a number does not fit a
 * ustar header. */
static int
header(uint8_t h[BLOCK], const char *name, char type, uint64_t size, time_t mtime)
{
	char *c = (char *)h;
	unsigned sum = 0;
	size_t i, n = strlen(name);

	memset(h, 0, BLOCK);
	if (n == 0 || n > 100 || mtime < 0)
		return -1;
	memcpy(c, name, n);
	if (octal(c + 100, 6, 0644, ' ') == -1 || octal(c + 108, 6, 0, ' ') == -1 ||
	    octal(c + 116, 6, 0, ' ') == -1 || octal(c + 124, 11, size, ' ') == -1 ||
	    octal(c + 136, 11, (uint64_t)mtime, ' ') == -1)
		return -1;
	c[156] = type;
	memcpy(c + 257, "ustar\0" "00", 8);
	octal(c + 329, 6, 0, ' ');		/* devmajor, devminor */
	octal(c + 337, 6, 0, ' ');
	/* the checksum counts its own field as spaces */
	memset(c + 148, ' ', 8);
	for (i = 0; i < BLOCK; i++)
		sum += h[i];
	octal(c + 148, 6, sum, '\0');
	c[155] = ' ';
	return 0;
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
	p->align = sr_upload_align(p->up, &p->align_min);
	if (p->align % BLOCK != 0)
		p->align = 0;	/* tar places in blocks: no placement can meet it */
	return p;
}

void
sr_pack_limit(struct sr_pack *p, double deadline, volatile int *cancel)
{
	sr_upload_limit(p->up, deadline, cancel);
}

/*
 * Fill the gap before a member of len bytes so that its data, after its
 * own header, starts at a multiple of p->align: a pax extended header
 * whose body is one "LEN comment=000...\n" record of exactly the bytes
 * the gap leaves after that header (none: an empty extended header, which
 * is valid and says nothing). Only where the store places such a piece
 * (len >= align_min); the gap is at most align - BLOCK bytes.
 */
static int
place(struct sr_pack *p, size_t len, char *err)
{
	uint64_t gap;
	size_t body, digits;
	uint8_t h[BLOCK];
	char *rec;
	int rc;

	if (p->align == 0 || len < p->align_min || len < p->align)
		return 0;
	gap = (p->align - (p->written + BLOCK) % p->align) % p->align;
	if (gap == 0)
		return 0;
	body = (size_t)gap - BLOCK;	/* a multiple of BLOCK: the record fills it */
	if (header(h, "PaxHeaders/placement", 'x', body, p->mtime) == -1)
		return sr_err(err, "write placement header to pack %s: %zu bytes do not fit",
		    p->key, body);
	if (put(p, h, sizeof h, "write placement header to", err) == -1)
		return -1;
	if (body > 0) {
		/* The record's length counts its own digits. */
		if ((rec = sr_try_malloc(body, err)) == NULL)
			return sr_err_prefix(err, "write placement header to pack %s", p->key);
		digits = (size_t)snprintf(NULL, 0, "%zu", body);
		snprintf(rec, body, "%zu comment=", body);
		memset(rec + digits + 9, '0', body - digits - 10);
		rec[body - 1] = '\n';
		rc = put(p, rec, body, "write placement header to", err);
		free(rec);
		if (rc == -1)
			return -1;
	}
	p->padding += gap;
	return 0;
}

int
sr_pack_add(struct sr_pack *p, const char *name, const void *data, size_t len,
    uint64_t *offset, char *err)
{
	uint8_t h[BLOCK];

	if (place(p, len, err) == -1)
		return -1;
	if (header(h, name, '0', len, p->mtime) == -1)
		return sr_err(err, "write member header to pack %s: member %s of %zu bytes does not "
		    "fit a tar header", p->key, name, len);
	if (put(p, h, sizeof h, "write member header to", err) == -1)
		return -1;
	*offset = p->written;
	if (put(p, data, len, "write member to", err) == -1 ||
	    put(p, zeros, (BLOCK - len % BLOCK) % BLOCK, "write member to", err) == -1)
		return -1;
	p->members++;
	return 0;
}

void
sr_pack_defer_flush(struct sr_pack *p)
{
	sr_upload_defer_flush(p->up);
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

	/* the end of the archive: two zero blocks, no padding to a record */
	if (put(p, zeros, sizeof zeros, "finish", err) == -1) {
		sr_pack_abort(p);
		return -1;
	}
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
	sr_upload_abort(p->up);
	free(p->key);
	free(p);
}
