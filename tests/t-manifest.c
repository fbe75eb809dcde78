/*
 * t-manifest.c: unit tests of the checkpoint manifest (JSON round trip,
 * structural and semantic checks with their exact messages), of the path
 * checks and the symlink-proof open under a root (pathsafe), of job names
 * and pack keys (catalog), and of the chunk id table (idtab).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "ckpt-util.h"

#include "catalog.h"
#include "codec.h"
#include "idtab.h"
#include "jobkeys.h"
#include "manifest.h"
#include "pathsafe.h"
#include "util.h"

static void
check_path(const char *path, const char *want)
{
	char err[SR_ERRMAX] = "";
	int rc = sr_path_check(path, err);

	if (want == NULL)
		ok(rc == 0, "path \"%s\" accepted%s%s", path, rc ? ": " : "", rc ? err : "");
	else
		is_str(rc == -1 ? err : "(accepted)", want, "path check refuses \"%s\"", path);
}

static void
check_link(const char *link, const char *target, const char *want)
{
	char err[SR_ERRMAX] = "";
	int rc = sr_path_check_link(link, target, NULL, NULL, err);

	if (want == NULL)
		ok(rc == 0, "link %s -> %s accepted%s%s", link, target, rc ? ": " : "", rc ? err : "");
	else
		is_str(rc == -1 ? err : "(accepted)", want, "link %s -> %s refused", link, target);
}

static void
test_paths(void)
{
	char q[64], big[5000];

	check_path("a", NULL);
	check_path("a/b/c.txt", NULL);
	check_path("..a/b..", NULL);
	check_path(".hidden/x", NULL);
	check_path("", "path \"\": empty");
	check_path("/etc/x", "path \"/etc/x\": absolute");
	check_path("../x", "path \"../x\": \"..\" segment");
	check_path("a/../../x", "path \"a/../../x\": \"..\" segment");
	check_path("a/./b", "path \"a/./b\": \".\" segment");
	check_path(".", "path \".\": \".\" segment");
	check_path("a//b", "path \"a//b\": empty segment");
	check_path("a/", "path \"a/\": empty segment");
	memset(big, 'x', 300);
	big[300] = '\0';
	ok(sr_path_check(big, NULL) == -1, "a 300-byte segment is refused");
	memset(big, 'x', sizeof big - 1);
	for (size_t i = 100; i < sizeof big - 1; i += 101)
		big[i] = '/';
	big[sizeof big - 1] = '\0';
	ok(sr_path_check(big, NULL) == -1, "a 4999-byte path is refused");

	is_str(sr_path_quote("a\nb\"c\\d\x01", q, sizeof q), "\"a\\nb\\\"c\\\\d\\x01\"",
	    "quote escapes control bytes, quotes and backslashes");
	memset(big, 'y', 400);
	big[400] = '\0';
	sr_path_quote(big, q, sizeof q);
	ok(strlen(q) < sizeof q && strstr(q, "...") != NULL, "quote shortens a long path: %s", q);

	check_link("l", "f", NULL);
	check_link("a/b/l", "../../f", NULL);
	check_link("a/l", "../a/./b/", NULL);
	check_link("l", "x/../y/../z", NULL);
	check_link("l", "../x", "symlink \"l\" -> \"../x\": target escapes the directory");
	check_link("a/l", "../../outside", "symlink \"a/l\" -> \"../../outside\": target escapes the directory");
	check_link("a/l", "b/../../../x", "symlink \"a/l\" -> \"b/../../../x\": target escapes the directory");
	check_link("l", "/etc/passwd", "symlink \"l\" -> \"/etc/passwd\": absolute target");
	check_link("l", "", "symlink \"l\": empty target");
}

/* The same through a kept folder (struct sr_path_dir): one open of a
 * folder for its files in a row, a new one for another folder, the same
 * refusals; rfd holds d/ and the symlinks d/l -> out and f. */
static void
test_openat_dir(int rfd, const char *out)
{
	struct sr_path_dir d = SR_PATH_DIR_INIT;
	static const char *const names[] = { "d/a", "d/b", "d/c" };
	char err[SR_ERRMAX], *p;
	const char *leaf;
	size_t i;
	int fd, dfd = -1, same = 1;

	for (i = 0; i < SR_ARRAY_LEN(names); i++) {
		fd = sr_path_openat(&d, rfd, names[i], O_WRONLY | O_CREAT | O_EXCL, 0600, err);
		ok(fd >= 0, "create %s through a kept folder: %s", names[i], fd >= 0 ? "ok" : err);
		if (fd >= 0)
			close(fd);
		if (i == 0)
			dfd = d.fd;
		same &= d.fd == dfd && dfd >= 0;
	}
	ok(same && d.len == 2 && memcmp(d.path, "d/", 2) == 0,
	    "d/a, d/b and d/c through one open of d/ (fd %d, folder \"%.*s\")", d.fd, (int)d.len,
	    d.path);
	fd = sr_path_openat(&d, rfd, "top", O_WRONLY | O_CREAT | O_EXCL, 0600, err);
	ok(fd >= 0 && d.len == 0, "a file at the root: the root's folder is kept now");
	if (fd >= 0)
		close(fd);
	fd = sr_path_openat(&d, rfd, "d/l/x", O_WRONLY | O_CREAT | O_EXCL, 0600, err);
	ok(fd == -1 && d.fd == -1, "d/l/x through the symlinked d/l fails and keeps no folder: %s",
	    err);
	fd = sr_path_openat(&d, rfd, "f", O_WRONLY, 0, err);
	ok(fd == -1 && errno == ELOOP, "a symlink leaf through a kept folder fails with ELOOP");
	ok(sr_path_dir_parent(&d, rfd, "d/c", &leaf, err) >= 0 && strcmp(leaf, "c") == 0 &&
	    sr_path_dir_parent(&d, rfd, "d/zz", &leaf, err) == d.fd && strcmp(leaf, "zz") == 0,
	    "sr_path_dir_parent gives the kept folder and the leaf");
	sr_path_dir_close(&d);
	ok(d.fd == -1, "sr_path_dir_close leaves no folder");
	sr_path_dir_close(&d);
	p = tu_ls(out);
	is_str(p, "", "nothing was created in the symlink's target through a kept folder");
	free(p);
}

/* Opening through a symlinked directory must fail without touching its target. */
static void
test_openat(void)
{
	char *root = tu_tmpdir("t-manifest"), *out = tu_tmpdir("t-manifest-out");
	char err[SR_ERRMAX], *p;
	int rfd, fd;

	tu_mkdir(root, "d", 0755);
	tu_symlink(root, "d/l", out);
	tu_symlink(root, "f", "/etc/passwd");
	rfd = open(root, O_RDONLY | O_DIRECTORY);
	fd = sr_path_openat(NULL, rfd, "d/x", O_WRONLY | O_CREAT | O_EXCL, 0600, err);
	ok(fd >= 0, "create d/x under the root");
	if (fd >= 0)
		close(fd);
	fd = sr_path_openat(NULL, rfd, "d/l/x", O_WRONLY | O_CREAT | O_EXCL, 0600, err);
	ok(fd == -1, "create d/l/x through a symlinked directory fails: %s", err);
	fd = sr_path_openat(NULL, rfd, "f", O_WRONLY, 0, err);
	ok(fd == -1 && errno == ELOOP, "open of a symlink leaf fails with ELOOP");
	p = tu_ls(out);
	is_str(p, "", "nothing was created in the symlink's target");
	free(p);
	test_openat_dir(rfd, out);
	close(rfd);

	/* removal: read-only directories go too, symlinks are not followed */
	tu_mkdir(root, "ro", 0755);
	tu_write(root, "ro/f", "x", 1);
	tu_chmod(root, "ro", 0500);
	tu_write(out, "keep", "x", 1);
	ok(sr_rmtree(root, err) == 0 && access(root, F_OK) == -1,
	    "sr_path_rmtree removes a tree with a read-only directory");
	p = tu_ls(out);
	is_str(p, "keep", "and not what its symlinks point at");
	free(p);
	ok(sr_rmtree(root, err) == 0, "removing a missing tree succeeds");
	tu_rmtree(out);
	free(root);
	free(out);
}

static void
fill_manifest(struct sr_manifest *m)
{
	struct sr_mentry *e;
	struct sr_mchunk *c;
	int i;

	sr_manifest_init(m);
	/* version 1 (SHA-256 ids): an xxh3 only where a chunk has one */
	m->version = SR_MANIFEST_VERSION_SHA256;
	m->chunk_id = SR_ID_SHA256;
	m->job = sr_strdup("job1");
	m->stats.seq = 7;
	m->stats.step = 1200;
	m->stats.created = 1700000000.5;
	m->stats.files = 1;
	m->stats.chunks = 2;
	m->stats.raw_bytes = 150;
	e = sr_manifest_add(m, "d", SR_MT_DIR, NULL);
	e->mode = 0755;
	e->mtime_ns = 1700000000123456789LL;
	e = sr_manifest_add(m, "d/f", SR_MT_FILE, NULL);
	e->mode = 0640;
	e->mtime_ns = -5;
	e->size = 150;
	c = sr_mentry_add_chunk(e, NULL);
	memset(c->id, 0xab, 32);
	for (i = 0; i < 16; i++)
		c->check[i] = (uint8_t)(i * 17);
	c->has_check = 1;
	c->pack = sr_manifest_intern(m, "job1/packs/0000000007-00ff.tar", NULL);
	c->offset = 512;
	c->clen = 90;
	c->rlen = 100;
	c->xf = SR_XF_PLANE2;
	c = sr_mentry_add_chunk(e, NULL);
	memset(c->id, 0x01, 32);
	c->pack = sr_manifest_intern(m, "job1/packs/0000000007-00ff.tar", NULL);
	c->offset = 1536;
	c->clen = 50;
	c->rlen = 50;
	c->xf = SR_XF_NONE;
	e = sr_manifest_add(m, "d/l", SR_MT_SYMLINK, NULL);
	e->mode = 0777;
	e->target = sr_strdup("f");
	e = sr_manifest_add(m, "a file with \"quotes\" and \xc3\xa9", SR_MT_FILE, NULL);
	e->mode = 0600;
	sr_manifest_sort(m);
}

/* Version 2: XXH3-128 ids (16 bytes, the rest of id[] zero), which are
 * the chunks' checks; `chunk_id` names the hash and is required. */
static void
test_chunk_id(void)
{
	struct sr_manifest m, n;
	struct sr_mentry *e;
	struct sr_mchunk *c;
	char err[SR_ERRMAX] = "", *text, *text2;
	const char *doc;
	size_t len;
	int i;

	sr_manifest_init(&m);
	is_int(m.version, 2, "chunk_id: a new manifest is version 2");
	is_int(m.chunk_id, SR_ID_XXH3, "chunk_id: ... with XXH3-128 ids");
	m.job = sr_strdup("j");
	e = sr_manifest_add(&m, "f", SR_MT_FILE, NULL);
	e->mode = 0644;
	e->size = 10;
	c = sr_mentry_add_chunk(e, NULL);
	for (i = 0; i < 16; i++)
		c->id[i] = c->check[i] = (uint8_t)(0xf0 + i);
	c->has_check = 1;
	c->pack = sr_manifest_intern(&m, "j/packs/0000000000-00.tar", NULL);
	c->offset = 512;
	c->clen = 10;
	c->rlen = 10;
	text = sr_manifest_dump(&m, &len, NULL);
	ok(strstr(text, "\"version\": 2,\n \"chunk_id\": \"xxh3-128\",\n") != NULL,
	    "chunk_id: written after the version");
	ok(strstr(text, "\"id\": \"f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff\"") != NULL &&
	    strstr(text, "\"xxh3\"") == NULL, "chunk_id: an id of 32 hex digits, no xxh3 beside it");
	ok(sr_manifest_parse(text, len, &n, err) == 0 && sr_manifest_validate(&n, "j", 0, err) == 0,
	    "chunk_id: parses back and validates %s", err);
	c = n.nentries == 1 && n.entries[0].nchunks == 1 ? &n.entries[0].chunks[0] : NULL;
	ok(n.chunk_id == SR_ID_XXH3 && c != NULL && c->has_check &&
	    memcmp(c->check, c->id, 16) == 0 && c->check[15] == 0xff &&
	    memcmp(c->id + 16, (uint8_t[16]){ 0 }, 16) == 0,
	    "chunk_id: read back, the id is the check, the rest of id[] zero");
	text2 = sr_manifest_dump(&n, NULL, NULL);
	is_str(text2, text, "chunk_id: the dump of the parsed manifest is identical");
	free(text);
	free(text2);
	sr_manifest_free(&n);
	sr_manifest_free(&m);

	doc = "{\"version\":2,\"job\":\"j\",\"seq\":0,\"entries\":[]}";
	ok(sr_manifest_parse(doc, strlen(doc), &m, err) == -1, "chunk_id: required in version 2");
	is_str(err, "chunk_id: missing", "chunk_id: its message");
	sr_manifest_free(&m);
	doc = "{\"version\":2,\"chunk_id\":\"sha1\",\"job\":\"j\",\"seq\":0,\"entries\":[]}";
	ok(sr_manifest_parse(doc, strlen(doc), &m, err) == -1, "chunk_id: an unknown hash refused");
	is_str(err, "chunk_id: \"sha1\" is not known (this spotrun knows xxh3-128)",
	    "chunk_id: its message");
	sr_manifest_free(&m);
	doc = "{\"version\":2,\"chunk_id\":\"xxh3-128\",\"job\":\"j\",\"seq\":0,\"entries\":["
	    "{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":3,\"chunks\":[{"
	    "\"id\":\"0000000000000000000000000000000000000000000000000000000000000000\","
	    "\"pack\":\"j/packs/p\",\"offset\":0,\"clen\":3,\"rlen\":3,\"xf\":\"none\"}]}]}";
	ok(sr_manifest_parse(doc, strlen(doc), &m, err) == -1,
	    "chunk_id: a SHA-256 id in a version 2 manifest refused");
	is_str(err, "entries[0].chunks[0].id: \"0000000000000000000000000000000000000000000000000000"
	    "000000000000\" is not 32 lowercase hex digits", "chunk_id: its message");
	sr_manifest_free(&m);
	doc = "{\"version\":1,\"job\":\"j\",\"seq\":0,\"entries\":[]}";
	ok(sr_manifest_parse(doc, strlen(doc), &m, err) == 0 && m.chunk_id == SR_ID_SHA256,
	    "chunk_id: version 1 has SHA-256 ids %s", err);
	sr_manifest_free(&m);
}

static void
test_roundtrip(void)
{
	struct sr_manifest m, n;
	char err[SR_ERRMAX] = "", *text, *text2;
	size_t len;
	long i;

	fill_manifest(&m);
	is_int(m.npacks, 1, "one pack key interned for two chunks");
	ok(sr_manifest_validate(&m, "job1", 7, err) == 0, "built manifest validates %s", err);
	text = sr_manifest_dump(&m, &len, NULL);
	ok(strstr(text, "\"xf\": \"plane2\"") != NULL, "transform written by name");
	ok(strstr(text, "\"xxh3\": \"00112233445566778899aabbccddeeff\"") != NULL &&
	    strstr(strstr(text, "\"xxh3\"") + 1, "\"xxh3\"") == NULL,
	    "a chunk's check written as 32 hex digits, and only where it has one");
	ok(sr_manifest_parse(text, len, &n, err) == 0, "dump parses back %s", err);
	ok(sr_manifest_validate(&n, "job1", 7, err) == 0, "and validates %s", err);
	text2 = sr_manifest_dump(&n, NULL, NULL);
	is_str(text2, text, "dump of the parsed manifest is identical");
	is_int(n.stats.step, 1200, "step");
	ok(n.stats.created == 1700000000.5, "created");
	i = sr_manifest_find(&n, "d/f");
	ok(i >= 0 && n.entries[i].mtime_ns == -5 && n.entries[i].mode == 0640 &&
	    n.entries[i].nchunks == 2 && n.entries[i].chunks[1].offset == 1536 &&
	    n.entries[i].chunks[0].xf == SR_XF_PLANE2 && n.entries[i].chunks[0].id[31] == 0xab &&
	    n.entries[i].chunks[0].has_check && n.entries[i].chunks[0].check[15] == 0xff &&
	    !n.entries[i].chunks[1].has_check,
	    "file entry fields survive");
	i = sr_manifest_find(&n, "d/l");
	ok(i >= 0 && strcmp(n.entries[i].target, "f") == 0, "symlink target survives");
	ok(sr_manifest_find(&n, "a file with \"quotes\" and \xc3\xa9") == 0, "UTF-8 path survives");
	ok(sr_manifest_validate(&n, "job2", 7, err) == -1, "wrong job refused");
	is_str(err, "job: \"job1\", but the manifest is stored under job \"job2\"", "its message");
	ok(sr_manifest_validate(&n, "job1", 8, err) == -1, "wrong seq refused");
	is_str(err, "seq: 7, but the manifest is stored as checkpoint 8", "its message");
	/* the chain: what an older version wrote says nothing of it, a new
	 * manifest names its parent (or null) and its epoch */
	is_int(n.link, SR_LINK_OLD, "no parent written: an older version's manifest (SR_LINK_OLD)");
	ok(strstr(text, "\"parent\"") == NULL && strstr(text, "\"epoch\"") == NULL,
	    "... and dumped again without parent or epoch");
	free(text);
	free(text2);
	sr_manifest_free(&n);
	m.link = SR_LINK_PARENT;
	m.parent = 6;
	m.stats.epoch = 9223372036854775807ULL;
	text = sr_manifest_dump(&m, &len, NULL);
	ok(strstr(text, "\n \"seq\": 7,\n \"parent\": 6,\n \"epoch\": 9223372036854775807,\n")
	    != NULL, "parent and epoch written after seq");
	ok(sr_manifest_parse(text, len, &n, err) == 0 && n.link == SR_LINK_PARENT && n.parent == 6 &&
	    n.stats.epoch == 9223372036854775807ULL, "... and parsed back %s", err);
	ok(sr_manifest_validate(&n, "job1", 7, err) == 0, "... a parent below the seq validates %s",
	    err);
	ok(sr_manifest_validate(&n, "job1", 6, err) == -1, "a parent at the seq is refused");
	is_str(err, "seq: 7, but the manifest is stored as checkpoint 6", "... (first: the seq)");
	n.stats.seq = 6;
	ok(sr_manifest_validate(&n, "job1", 6, err) == -1 && strcmp(err, "parent: 6 is not below "
	    "the checkpoint's seq 6") == 0, "... then: %s", err);
	free(text);
	sr_manifest_free(&n);
	m.link = SR_LINK_NONE;
	m.stats.epoch = 0;
	text = sr_manifest_dump(&m, &len, NULL);
	ok(strstr(text, "\n \"parent\": null,\n \"epoch\": 0,\n") != NULL &&
	    sr_manifest_parse(text, len, &n, err) == 0 && n.link == SR_LINK_NONE,
	    "the first of a chain: \"parent\": null, read back as SR_LINK_NONE");
	free(text);
	sr_manifest_free(&n);
	sr_manifest_free(&m);
}

/* Parse a manifest whose one entry is the JSON text entry; expect err. */
/* A manifest of job j, checkpoint 0, parsed and validated: accepted
 * (want NULL) or refused with exactly want; what names the case. */
static void
check_doc(char *doc, const char *what, const char *want)
{
	struct sr_manifest m;
	char err[SR_ERRMAX] = "";
	int rc = sr_manifest_parse(doc, strlen(doc), &m, err);

	if (rc == 0)
		rc = sr_manifest_validate(&m, "j", 0, err);
	if (want == NULL)
		ok(rc == 0, "accepted: %s %s", what, err);
	else
		is_str(rc == -1 ? err : "(accepted)", want, "refused: %s", what);
	sr_manifest_free(&m);
	free(doc);
}

static void
check_entry(const char *entry, const char *want)
{
	check_doc(sr_asprintf("{\"version\":1,\"job\":\"j\",\"seq\":0,\"entries\":[%s]}", entry),
	    entry, want);
}

#define ID "\"id\":\"0000000000000000000000000000000000000000000000000000000000000000\""
#define PK "\"pack\":\"j/packs/0000000000-ab.tar\""

static void
test_checks(void)
{
	struct sr_manifest m;
	char err[SR_ERRMAX];
	const char *doc;

	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":3,"
	    "\"chunks\":[{" ID "," PK ",\"offset\":512,\"clen\":20,\"rlen\":3,\"xf\":\"none\"}]}", NULL);
	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":0,"
	    "\"chunks\":[]}", NULL);
	check_entry("{\"path\":\"f\",\"type\":\"fifo\",\"mode\":420,\"mtime_ns\":0}",
	    "entries[0].type: unknown type \"fifo\" (file, dir or symlink)");
	check_entry("{\"path\":\"f\",\"type\":\"dir\",\"mode\":\"0755\",\"mtime_ns\":0}",
	    "entries[0].mode: not an integer");
	check_entry("{\"path\":\"f\",\"type\":\"dir\",\"mode\":33261,\"mtime_ns\":0}",
	    "entries[0].mode: 33261 is out of range [0, 4095]");
	check_entry("{\"path\":\"f\",\"type\":\"dir\",\"mode\":493}",
	    "entries[0].mtime_ns: missing");
	check_entry("{\"path\":7,\"type\":\"dir\",\"mode\":493,\"mtime_ns\":0}",
	    "entries[0].path: not a string");
	check_entry("{\"path\":\"a\\u0000b\",\"type\":\"dir\",\"mode\":493,\"mtime_ns\":0}",
	    "JSON line 1 column 60: \\u0000 is not allowed without JSON_ALLOW_NUL near '\"a\\u0000b\"'");
	check_entry("{\"path\":\"d\",\"type\":\"dir\",\"mode\":493,\"mtime_ns\":0,\"size\":0}",
	    "entries[0]: only files have a size and chunks");
	check_entry("{\"path\":\"d\",\"type\":\"dir\",\"mode\":493,\"mtime_ns\":0,\"target\":\"x\"}",
	    "entries[0].target: only symlinks have a target");
	check_entry("{\"path\":\"l\",\"type\":\"symlink\",\"mode\":511,\"mtime_ns\":0}",
	    "entries[0].target: missing");
	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":1.5,"
	    "\"chunks\":[]}", "entries[0].size: not an integer");
	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":3,"
	    "\"chunks\":[{" ID "," PK ",\"offset\":-1,\"clen\":20,\"rlen\":3,\"xf\":\"none\"}]}",
	    "entries[0].chunks[0].offset: -1 is negative");
	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":3,"
	    "\"chunks\":[{\"id\":\"AB\"," PK ",\"offset\":1,\"clen\":20,\"rlen\":3,\"xf\":\"none\"}]}",
	    "entries[0].chunks[0].id: \"AB\" is not 64 lowercase hex digits");
	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":3,"
	    "\"chunks\":[{" ID "," PK ",\"offset\":1,\"clen\":20,\"rlen\":3,\"xf\":\"lz4\"}]}",
	    "entries[0].chunks[0].xf: unknown transform \"lz4\"");
	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":4,"
	    "\"chunks\":[{" ID "," PK ",\"offset\":1,\"clen\":20,\"rlen\":3,\"xf\":\"none\"}]}",
	    "path \"f\": size 4 but its chunks hold 3 bytes");
	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":3,"
	    "\"chunks\":[{" ID "," PK ",\"offset\":1,\"clen\":20,\"rlen\":0,\"xf\":\"none\"}]}",
	    "path \"f\": chunk 0: raw length 0");
	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":3,"
	    "\"chunks\":[{" ID "," PK ",\"offset\":1,\"clen\":0,\"rlen\":3,\"xf\":\"none\"}]}",
	    "path \"f\": chunk 0: encoded length 0 is outside [1, 71] for 3 raw bytes");
	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":3,"
	    "\"chunks\":[{" ID ",\"pack\":\"j/packs/sub/x.tar\",\"offset\":1,\"clen\":20,\"rlen\":3,"
	    "\"xf\":\"none\"}]}",
	    "path \"f\": chunk 0: pack \"j/packs/sub/x.tar\" is not an object under j/packs/");
	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":3,"
	    "\"chunks\":[{" ID ",\"pack\":\"j/packs/..\",\"offset\":1,\"clen\":20,\"rlen\":3,"
	    "\"xf\":\"none\"}]}",
	    "path \"f\": chunk 0: pack \"j/packs/..\" is not an object under j/packs/");
	check_entry("{\"path\":\"d\",\"type\":\"dir\",\"mode\":493,\"mtime_ns\":0},"
	    "{\"path\":\"d/f\",\"type\":\"dir\",\"mode\":493,\"mtime_ns\":0},"
	    "{\"path\":\"d\",\"type\":\"dir\",\"mode\":493,\"mtime_ns\":0}",
	    "path \"d\": entries are not sorted by path");
	check_entry("{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":0,\"chunks\":[]},"
	    "{\"path\":\"f/x\",\"type\":\"dir\",\"mode\":493,\"mtime_ns\":0}",
	    "path \"f/x\": parent \"f\" is a file, not a directory");
	check_entry("{\"path\":\"a\",\"type\":\"dir\",\"mode\":493,\"mtime_ns\":0},"
	    "{\"path\":\"a/l1\",\"type\":\"symlink\",\"mode\":511,\"mtime_ns\":0,\"target\":\"..\"},"
	    "{\"path\":\"a/l2\",\"type\":\"symlink\",\"mode\":511,\"mtime_ns\":0,\"target\":\"l1/..\"}",
	    "symlink \"a/l2\" -> \"l1/..\": target climbs out of symlink \"a/l1\"");
	check_entry("{\"path\":\"a\",\"type\":\"dir\",\"mode\":493,\"mtime_ns\":0},"
	    "{\"path\":\"a/l1\",\"type\":\"symlink\",\"mode\":511,\"mtime_ns\":0,\"target\":\"..\"},"
	    "{\"path\":\"a/l2\",\"type\":\"symlink\",\"mode\":511,\"mtime_ns\":0,\"target\":\"l1/x\"}",
	    NULL);

	doc = "{\"version\":5,\"job\":\"j\",\"seq\":0,\"entries\":[]}";
	ok(sr_manifest_parse(doc, strlen(doc), &m, err) == -1, "version 5 refused");
	is_str(err, "version 5 is not known (this spotrun reads versions 1 to 4)", "its message");
	sr_manifest_free(&m);
	doc = "{\"version\":1,\"job\":\"j\",\"job\":\"k\",\"seq\":0,\"entries\":[]}";
	ok(sr_manifest_parse(doc, strlen(doc), &m, err) == -1, "duplicate JSON key refused: %s", err);
	sr_manifest_free(&m);
	doc = "[1,2]";
	ok(sr_manifest_parse(doc, strlen(doc), &m, err) == -1, "a JSON array is refused");
	is_str(err, "not a JSON object", "its message");
	sr_manifest_free(&m);
	doc = "{\"version\":1,\"job\":\"j\",\"seq\":10000000000,\"entries\":[]}";
	ok(sr_manifest_parse(doc, strlen(doc), &m, err) == -1, "seq beyond 10 digits refused");
	is_str(err, "seq: 10000000000 is out of range [0, 9999999999]", "its message");
	sr_manifest_free(&m);
}

/* The world size (the processes that wrote the directory) is recorded
 * when known, and a manifest without it reads as not known. */
static void
test_world_size(void)
{
	const char *with = "{\"version\":1,\"job\":\"j\",\"seq\":0,\"world_size\":4,\"entries\":[]}";
	const char *without = "{\"version\":1,\"job\":\"j\",\"seq\":0,\"entries\":[]}";
	const char *zero = "{\"version\":1,\"job\":\"j\",\"seq\":0,\"world_size\":0,\"entries\":[]}";
	struct sr_manifest m;
	char err[SR_ERRMAX] = "", *text;

	ok(sr_manifest_parse(with, strlen(with), &m, err) == 0, "world_size parses %s", err);
	is_int(m.stats.world_size, 4, "world_size 4 read");
	text = sr_manifest_dump(&m, NULL, NULL);
	ok(strstr(text, "\"world_size\": 4") != NULL, "and written back");
	free(text);
	sr_manifest_free(&m);
	ok(sr_manifest_parse(without, strlen(without), &m, err) == 0, "a manifest without it parses");
	is_int(m.stats.world_size, 0, "its world size is not known (0)");
	text = sr_manifest_dump(&m, NULL, NULL);
	ok(strstr(text, "world_size") == NULL, "and none is written for it");
	free(text);
	sr_manifest_free(&m);
	ok(sr_manifest_parse(zero, strlen(zero), &m, err) == -1, "world_size 0 refused");
	is_str(err, "world_size: 0 is out of range [1, 2147483647]", "its message");
	sr_manifest_free(&m);
}

static void
test_names(void)
{
	char err[SR_ERRMAX] = "", *k;

	ok(sr_ckpt_job_check("llama-lora_2.b", err) == 0, "job name accepted");
	ok(sr_ckpt_job_check("sweep/trial-3", err) == 0, "job name with segments accepted");
	ok(sr_ckpt_job_check("../x", err) == -1, "job ../x refused");
	is_str(err, "job name \"../x\": segments are letters, digits, '.', '_' and '-', starting"
	    " with a letter or digit", "its message");
	ok(sr_ckpt_job_check("a/", err) == -1, "job a/ refused");
	ok(sr_ckpt_job_check("a//b", err) == -1, "job a//b refused");
	ok(sr_ckpt_job_check("", err) == -1, "empty job refused");
	k = sr_jobkey_manifest("j", 42, NULL);
	is_str(k, "j/manifests/0000000042.json", "manifest key is zero-padded");
	free(k);
	ok(sr_jobkey_is_pack("j", "j/packs/0000000003-0a1b2c.tar"), "pack key recognised");
	ok(!sr_jobkey_is_pack("j", "j/packs/0000000003-0a1b2c.tar.tmp"), "other suffix is not a pack");
	ok(!sr_jobkey_is_pack("j", "j/packs/3-0a.tar"), "short seq is not a pack");
	ok(!sr_jobkey_is_pack("j", "j/packs/x/0000000003-0a.tar"), "nested key is not a pack");
	ok(!sr_jobkey_is_pack("j", "jj/packs/0000000003-0a.tar"), "other job's key is not a pack");
}

static void
test_idtab(void)
{
	struct sr_idtab *t = sr_idtab_new(0, NULL);
	struct sr_mchunk c;
	const struct sr_mchunk *g;
	int i, found = 0;

	memset(&c, 0, sizeof c);
	for (i = 0; i < 5000; i++) {
		memset(c.id, 0, 32);
		memcpy(c.id + 8, &i, sizeof i);	/* same hash bytes: worst-case probing */
		c.id[0] = (uint8_t)(i % 3);
		c.offset = (uint64_t)i;
		sr_idtab_put(t, &c, NULL);
	}
	c.offset = 99999;
	sr_idtab_put(t, &c, NULL);	/* an id already present keeps its first reference */
	is_int(sr_idtab_count(t), 5000, "5000 ids in the table");
	for (i = 0; i < 5000; i++) {
		memset(c.id, 0, 32);
		memcpy(c.id + 8, &i, sizeof i);
		c.id[0] = (uint8_t)(i % 3);
		g = sr_idtab_get(t, c.id);
		found += g != NULL && g->offset == (uint64_t)i;
	}
	is_int(found, 5000, "every id found with its reference");
	memset(c.id, 0xff, 32);
	ok(sr_idtab_get(t, c.id) == NULL, "an absent id is not found");
	sr_idtab_free(t);
}

/* A manifest of that version with the tensors given: accepted (want
 * NULL) or refused with want. */
static void
check_tensors(int version, const char *tensors, const char *want)
{
	check_doc(sr_asprintf("{\"version\":%d,%s\"job\":\"j\",\"seq\":0,\"entries\":[],"
	    "\"tensors\":[%s]}", version, version > 1 ? "\"chunk_id\":\"xxh3-128\"," : "", tensors),
	    tensors, want);
}

/* a chunk of a version 3 manifest: a 128-bit (XXH3-128) id */
#define ID3 "\"id\":\"00000000000000000000000000000000\""
#define CH(rlen) "{" ID3 "," PK ",\"offset\":0,\"clen\":" #rlen ",\"rlen\":" #rlen ",\"xf\":\"none\"}"

/* The library's tensors (doc/format.md, "Tensors"): their checks, and a
 * round trip through the JSON text. */
static void
test_tensors(void)
{
	struct sr_manifest m, back;
	uint64_t shape[2] = { 4, 8 }, off[2] = { 2, 0 }, size[2] = { 2, 8 };
	struct sr_mtensor *t;
	struct sr_mchunk *c;
	char err[SR_ERRMAX], *text;
	size_t len;

	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"bf16\",\"shape\":[4,8],\"pieces\":["
	    "{\"offsets\":[0,0],\"sizes\":[2,8],\"size\":32,\"chunks\":[" CH(32) "]}]}", NULL);
	check_tensors(1, "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[],\"pieces\":[]}",
	    "tensors: a manifest of version 1 has none (version 3 has)");
	check_tensors(2, "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[],\"pieces\":[]}",
	    "tensors: a manifest of version 2 has none (version 3 has)");
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"f12\",\"shape\":[4],\"pieces\":[]}",
	    "tensors[0].dtype: unknown type \"f12\"");
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"f32\",\"shape\":[1,1,1,1,1,1,1,1,1],"
	    "\"pieces\":[]}", "tensors[0].shape: 9 dimensions, more than 8");
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"f32\",\"shape\":[4,8],\"pieces\":["
	    "{\"offsets\":[0],\"sizes\":[2,8],\"size\":64,\"chunks\":[]}]}",
	    "tensors[0].pieces[0].offsets: 1 dimensions, but the tensor has 2");
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"f32\",\"shape\":[4,8],\"pieces\":["
	    "{\"offsets\":[3,0],\"sizes\":[2,8],\"size\":64,\"chunks\":[" CH(64) "]}]}",
	    "tensor \"w\" piece 0: dimension 0: [3, +2) is outside the shape's 4");
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"f32\",\"shape\":[4,8],\"pieces\":["
	    "{\"offsets\":[0,0],\"sizes\":[2,8],\"size\":32,\"chunks\":[" CH(32) "]}]}",
	    "tensor \"w\" piece 0: size 32 is not its 16 elements of f32");
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[64],\"pieces\":["
	    "{\"offsets\":[0],\"sizes\":[64],\"size\":64,\"chunks\":[" CH(32) "]}]}",
	    "tensor \"w\" piece 0: size 64 but its chunks hold 32 bytes");
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[],\"pieces\":[]},"
	    "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[],\"pieces\":[]}",
	    "tensor \"w\": duplicate");
	check_tensors(3, "{\"name\":\"b\",\"dtype\":\"u8\",\"shape\":[],\"pieces\":[]},"
	    "{\"name\":\"a\",\"dtype\":\"u8\",\"shape\":[],\"pieces\":[]}",
	    "tensor \"a\": tensors are not sorted by name");
	check_tensors(3, "{\"name\":\"\",\"dtype\":\"u8\",\"shape\":[],\"pieces\":[]}",
	    "tensor \"\": a name is 1 to 255 bytes");
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[-1],\"pieces\":[]}",
	    "tensors[0].shape[0]: not a non-negative integer");
	/* a share of a part (doc/format.md, "Ranks"): inside its box */
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[64],\"pieces\":["
	    "{\"offsets\":[0],\"sizes\":[64],\"size\":32,\"share\":{\"first\":1,\"of\":2,"
	    "\"offset\":32},\"chunks\":[" CH(32) "]}]}", NULL);
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[64],\"pieces\":["
	    "{\"offsets\":[0],\"sizes\":[64],\"size\":32,\"share\":{\"first\":1,\"of\":2,"
	    "\"offset\":48},\"chunks\":[" CH(32) "]}]}",
	    "tensor \"w\" piece 0: share of chunks 1 to 2 of 2 at byte 48 is not inside its 64 "
	    "elements of u8");
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[64],\"pieces\":["
	    "{\"offsets\":[0],\"sizes\":[64],\"size\":32,\"share\":{\"first\":2,\"of\":2,"
	    "\"offset\":32},\"chunks\":[" CH(32) "]}]}",
	    "tensor \"w\" piece 0: share of chunks 2 to 3 of 2 at byte 32 is not inside its 64 "
	    "elements of u8");
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[64],\"pieces\":["
	    "{\"offsets\":[0],\"sizes\":[64],\"size\":32,\"share\":{\"first\":1},"
	    "\"chunks\":[" CH(32) "]}]}", "tensors[0].pieces[0].share.of: missing");

	sr_manifest_init(&m);
	m.version = SR_MANIFEST_VERSION_TENSORS;
	m.job = sr_strdup("j");
	t = sr_manifest_add_tensor(&m, "w", SR_DT_F8E4M3, 2, shape, NULL);
	c = sr_mentry_add_chunk(&sr_mtensor_add_piece(t, off, size, NULL)->data, NULL);
	t->pieces[0].data.size = 16;
	c->rlen = c->clen = 16;
	c->pack = sr_manifest_intern(&m, "j/packs/0000000000-ab.tar", NULL);
	text = sr_manifest_dump(&m, &len, NULL);
	ok(strstr(text, "\"version\": 3") != NULL && strstr(text, "\"dtype\": \"f8e4m3\"") != NULL,
	    "a manifest with tensors is written as version 3, its dtype by name");
	ok(sr_manifest_parse(text, len, &back, err) == 0 && sr_manifest_validate(&back, "j", 0, err)
	    == 0, "and reads back: %s", err);
	ok(back.ntensors == 1 && back.tensors[0].ndim == 2 && back.tensors[0].shape[1] == 8 &&
	    back.tensors[0].pieces[0].offsets[0] == 2 && back.tensors[0].pieces[0].sizes[0] == 2 &&
	    back.tensors[0].pieces[0].data.nchunks == 1 && back.npacks == 1,
	    "as written: shape, offsets, sizes, chunks, packs");
	is_str(back.tensors[0].pieces[0].data.path, "w[2,0]", "a piece's label: name and offsets");
	free(text);
	sr_manifest_free(&m);
	sr_manifest_free(&back);
	is_int(sr_dtype_size(SR_DT_BF16), 2, "bf16 is 2 bytes");
	is_int(sr_dtype_size(SR_DT_I64), 8, "i64 is 8");
	is_int(sr_dtype_parse("bytes"), SR_DT_BYTES, "\"bytes\" is raw bytes");
}

/* A file of a version 4 manifest (ids XXH3-128) whose one chunk is chunk. */
static void
check_slice(int version, const char *chunk, const char *want)
{
	check_doc(sr_asprintf("{\"version\":%d,\"chunk_id\":\"xxh3-128\",\"job\":\"j\",\"seq\":0,"
	    "\"entries\":[{\"path\":\"f\",\"type\":\"file\",\"mode\":420,\"mtime_ns\":0,\"size\":3,"
	    "\"chunks\":[%s]}]}", version, chunk), chunk, want);
}

#define SL(rest) "{" ID3 "," PK ",\"offset\":0,\"clen\":20,\"rlen\":3,\"xf\":\"none\"" rest "}"

/* Slices (doc/format.md, "Slices"): small files share a pack member, each
 * a run [at, at + rlen) of what it decodes to; checks, what a stored byte
 * counts, and the version they make. */
static void
test_slices(void)
{
	struct sr_manifest m, back;
	struct sr_mchunk *c;
	char err[SR_ERRMAX], *text;
	size_t len;

	check_slice(4, SL(",\"at\":5,\"mlen\":8"), NULL);
	check_slice(4, SL(""), NULL);
	check_slice(2, SL(",\"at\":5,\"mlen\":8"),
	    "entries[0].chunks[0]: a slice (at, mlen) in a manifest of version 2 (version 4 has them)");
	check_slice(4, SL(",\"at\":5"), "entries[0].chunks[0]: a slice has both at and mlen, this "
	    "chunk only at");
	check_slice(4, SL(",\"mlen\":8"), "entries[0].chunks[0]: a slice has both at and mlen, this "
	    "chunk only mlen");
	check_slice(4, SL(",\"at\":0,\"mlen\":0"), "entries[0].chunks[0].mlen: 0 (a slice's member "
	    "holds at least its bytes)");
	check_slice(4, SL(",\"at\":6,\"mlen\":8"), "path \"f\": chunk 0: slice [6, +3) is outside "
	    "its member's 8 bytes");
	check_slice(4, SL(",\"at\":9,\"mlen\":8"), "path \"f\": chunk 0: slice [9, +3) is outside "
	    "its member's 8 bytes");
	check_slice(4, SL(",\"at\":-1,\"mlen\":8"), "entries[0].chunks[0].at: -1 is negative");
	check_slice(4, SL(",\"at\":0,\"mlen\":268435457"), "path \"f\": chunk 0: raw length "
	    "268435457 exceeds the 256 MiB chunk limit");
	/* the encoded length is bounded by the member's raw length, not the slice's */
	check_slice(4, "{" ID3 "," PK ",\"offset\":0,\"clen\":4000,\"rlen\":3,\"xf\":\"none\","
	    "\"at\":0,\"mlen\":4096}", NULL);
	check_slice(4, "{" ID3 "," PK ",\"offset\":0,\"clen\":4000,\"rlen\":3,\"xf\":\"none\"}",
	    "path \"f\": chunk 0: encoded length 4000 is outside [1, 71] for 3 raw bytes");
	check_tensors(4, "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[3],\"pieces\":[]}",
	    "tensors: a manifest of version 4 has none (version 3 has)");
	check_tensors(3, "{\"name\":\"w\",\"dtype\":\"u8\",\"shape\":[3],\"pieces\":["
	    "{\"offsets\":[0],\"sizes\":[3],\"size\":3,\"chunks\":[" SL(",\"at\":5,\"mlen\":8")
	    "]}]}", "tensors[0].pieces[0].chunks[0]: a slice (at, mlen) in a manifest of version 3 "
	    "(version 4 has them)");

	/* written: a slice makes version 2 version 4, and reads back */
	sr_manifest_init(&m);
	m.job = sr_strdup("j");
	c = sr_mentry_add_chunk(sr_manifest_add(&m, "f", SR_MT_FILE, NULL), NULL);
	m.entries[0].size = 3;
	c->rlen = 3;
	c->clen = 20;
	c->pack = sr_manifest_intern(&m, "j/packs/0000000000-ab.tar", NULL);
	sr_manifest_note_chunk(&m, c);
	is_int(m.version, SR_MANIFEST_VERSION, "a whole chunk leaves version 2");
	is_int(sr_mchunk_stored(c), 20, "a whole chunk stores its clen");
	is_int(sr_mchunk_mlen(c), 3, "... and decodes to its rlen");
	c->at = 5;
	c->mlen = 8;
	sr_manifest_note_chunk(&m, c);
	is_int(m.version, SR_MANIFEST_VERSION_SLICES, "a slice makes it version 4");
	is_int(sr_mchunk_stored(c), 8, "a slice stores its share of clen: 20 * 3 / 8 = 7.5 -> 8");
	is_int(sr_mchunk_mlen(c), 8, "... and its member decodes to mlen");
	text = sr_manifest_dump(&m, &len, NULL);
	ok(strstr(text, "\"version\": 4") != NULL && strstr(text, "\"at\": 5") != NULL &&
	    strstr(text, "\"mlen\": 8") != NULL, "written with version 4, at and mlen");
	ok(sr_manifest_parse(text, len, &back, err) == 0 && sr_manifest_validate(&back, "j", 0, err)
	    == 0, "and reads back: %s", err);
	ok(back.version == 4 && back.entries[0].chunks[0].at == 5 &&
	    back.entries[0].chunks[0].mlen == 8 && back.entries[0].chunks[0].rlen == 3,
	    "as written");
	free(text);
	sr_manifest_free(&back);
	c->at = 0;
	c->mlen = 0;
	text = sr_manifest_dump(&m, &len, NULL);
	ok(strstr(text, "\"at\"") == NULL && strstr(text, "\"mlen\"") == NULL,
	    "a whole chunk is written without at and mlen");
	free(text);
	sr_manifest_free(&m);
}

/* The writer (manifest-write.c): strings escaped to ASCII and read back
 * as they were, reals read back exactly, bad UTF-8 refused. */
static void
test_write(void)
{
	static const char *const paths[] = {
		"plain", "quote\" and \\ backslash", "ctl \x01\x1f\n\t\r end", "del \x7f",
		"two-byte \xc3\xa9", "three-byte \xe4\xb8\xad", "four-byte \xf0\x9f\x98\x80",
		"last \xf4\x8f\xbf\xbf", "/slash/",
	};
	struct sr_manifest m, back;
	char err[SR_ERRMAX], *text;
	size_t i, len;
	int same = 1;

	sr_manifest_init(&m);
	m.job = sr_strdup("j");
	m.stats.created = 1796459066.8210454;
	m.stats.seconds = 1e-7;
	for (i = 0; i < SR_ARRAY_LEN(paths); i++)
		sr_manifest_add(&m, paths[i], SR_MT_SYMLINK, NULL)->target = sr_strdup(paths[i]);
	text = sr_manifest_dump(&m, &len, err);
	ok(text != NULL, "written: %s", text != NULL ? "" : err);
	for (i = 0; text != NULL && i < len; i++)
		same &= (unsigned char)text[i] < 0x80;
	ok(text != NULL && same, "in ASCII only");
	ok(text != NULL && strstr(text, "\\ud83d\\ude00") != NULL && strstr(text, "\\u00e9") != NULL,
	    "beyond the basic plane as a surrogate pair, the rest as one \\u escape");
	ok(text != NULL && sr_manifest_parse(text, len, &back, err) == 0, "read back: %s", err);
	for (i = 0, same = back.nentries == SR_ARRAY_LEN(paths); same && i < back.nentries; i++)
		same = strcmp(back.entries[i].path, paths[i]) == 0 &&
		    strcmp(back.entries[i].target, paths[i]) == 0;
	ok(same, "every path and target as it was");
	ok(back.stats.created == m.stats.created && back.stats.seconds == m.stats.seconds,
	    "the reals exactly");
	sr_manifest_free(&back);
	free(text);
	free(m.entries[0].path);
	m.entries[0].path = sr_strdup("bad \xc3");
	text = sr_manifest_dump(&m, &len, err);
	ok(text == NULL, "a path that is not UTF-8 is not written");
	is_str(err, "serialise the manifest: a path or name is missing or not UTF-8 (a bug: the "
	    "save skips those)", "and says why");
	free(text);
	sr_manifest_free(&m);
}

int
main(void)
{
	test_tensors();
	test_slices();
	test_write();
	test_paths();
	test_openat();
	test_roundtrip();
	test_chunk_id();
	test_checks();
	test_world_size();
	test_names();
	test_idtab();
	return tap_done();
}
